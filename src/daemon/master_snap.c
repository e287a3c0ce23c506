/* Read-only client requests answered beside the master's loop, from a published snapshot
 * (master_snap.h): the snapshot, its publication, and the reader thread that borrows the socket. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/jsontext.h"
#include "hrm/log.h"
#include "master_eta.h"
#include "master_http.h"
#include "master_private.h"
#include "master_snap.h"

/* Messages the reader receives in a row before it looks whether the loop wants its socket. */
#define READER_BURST 64
/* The reader's wait for the socket while lent: the loop's kick ends it sooner. */
#define READER_POLL_MS 100
/* Peers with requests in the loop's inbox when it lent the socket, remembered one by one. */
#define BUSY_PEERS_MAX 32

/* The job table's listing rows as a commit left them: immutable once published. */
struct jobs_snap {
    atomic_int refs;
    int64_t built_us;     /* monotonic */
    uint64_t write_seq;   /* client writes acknowledged before it was built */
    size_t njobs;         /* m->njobs then: ids 1..njobs */
    struct http_text **rows; /* by id - 1, each a job object as `jobs` lists it; NULL: none */
    bool *live;              /* by id - 1: jobs_live then */
};

struct snap_reader {
    struct hrm_server *srv; /* borrowed; used by whoever holds sock_mu */
    int64_t max_age_us;
    pthread_t thread;
    bool started;
    pthread_mutex_t sock_mu;
    int kick; /* eventfd: the loop wants its socket back */
    /* Under mu: */
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool stop;
    uint64_t lends;         /* odd while lent */
    int64_t lend_us;        /* when the latest lend began (monotonic) */
    bool warm;              /* listings were asked lately (SNAP_WARM_US) when it began */
    bool serving;           /* the reader holds the socket */
    struct inbox pending;   /* clients' requests the loop had received when it lent: the
                             * reader looks at them first, in order */
    struct inbox kept;      /* looked at or received by the reader, for the loop, in order */
    size_t kept_max;        /* the room left in the loop's inbox when it lent */
    struct peer_id busy[BUSY_PEERS_MAX]; /* clients whose replies may wait for the commit */
    size_t nbusy;
    bool busy_all;          /* more of them than busy[] holds */
    struct jobs_snap *snap; /* the latest published, or NULL */
    uint64_t write_seq;     /* client writes acknowledged so far */
    bool wanted;            /* a reader found no snapshot it could use */
    int64_t answered;       /* `jobs` answered by the reader, not yet counted by the loop */
    /* The loop's own: */
    bool wrote;             /* a client write in this turn */
    int64_t asked_us;       /* the latest listing asked (monotonic) */
    struct http_text **done; /* per job id - 1: a finished job's row, made once */
    size_t cap_done;
    struct peer_id turn_clients[BUSY_PEERS_MAX]; /* clients whose requests this turn handled */
    size_t nturn_clients;
    bool turn_clients_all;
    const char *hold_file;  /* test only: a turn holds while it exists */
};

static void snap_unref(struct jobs_snap *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (size_t i = 0; i < s->njobs; i++)
        http_text_unref(s->rows[i]);
    hrm_free(s->rows);
    hrm_free(s->live);
    hrm_free(s);
}

/* ---- the loop's side: building and publishing ---- */

/* A finished job's row cannot change once nothing of it is placed or pending: made once. */
static struct http_text *done_row(struct snap_reader *r, const struct rjob *j)
{
    size_t k = (size_t)(j->id - 1);
    if (k >= r->cap_done) {
        size_t old = r->cap_done;
        HRM_GROW(r->done, r->cap_done, k + 1);
        memset(r->done + old, 0, (r->cap_done - old) * sizeof(*r->done));
    }
    if (!r->done[k]) {
        json_t *o = jobs_summary_json(j);
        json_object_set_new(o, "estimated_start_s", json_null()); /* as eta_annotate_list */
        r->done[k] = http_text_of_json(o);
    }
    return http_text_ref(r->done[k]);
}

static struct jobs_snap *snap_build(struct master *m)
{
    struct snap_reader *r = m->snap;
    struct jobs_snap *s = hrm_calloc(1, sizeof(*s));
    atomic_init(&s->refs, 1);
    s->njobs = m->njobs;
    s->rows = hrm_calloc(s->njobs ? s->njobs : 1, sizeof(*s->rows));
    s->live = hrm_calloc(s->njobs ? s->njobs : 1, sizeof(*s->live));
    json_t *live = json_array();
    for (size_t i = 0; i < m->njobs; i++) {
        const struct rjob *j = m->jobs[i];
        if (!j)
            continue;
        s->live[i] = jobs_live(j);
        if (!s->live[i] && j->count.state[HRM_RTASK_RUNNING] == 0 &&
            j->count.state[HRM_RTASK_PENDING] == 0)
            s->rows[i] = done_row(r, j);
        else
            json_array_append_new(live, jobs_summary_json(j));
    }
    eta_annotate_list(m, live); /* as on_jobs annotates its page */
    size_t next = 0;
    for (size_t i = 0; i < s->njobs; i++)
        if (m->jobs[i] && !s->rows[i])
            s->rows[i] = http_text_of_json(json_incref(json_array_get(live, next++)));
    json_decref(live);
    return s;
}

void snap_listing_asked(struct master *m)
{
    if (m->snap)
        m->snap->asked_us = hrm_mono_us();
}

void snap_client_wrote(struct master *m)
{
    if (m->snap)
        m->snap->wrote = true;
}

void snap_after_commit(struct master *m)
{
    struct snap_reader *r = m->snap;
    if (!r)
        return;
    int64_t now = hrm_mono_us();
    pthread_mutex_lock(&r->mu);
    if (r->wrote)
        r->write_seq++; /* before this turn's replies leave: older snapshots are not used */
    r->wrote = false;
    bool due = r->wanted || (now - r->asked_us < SNAP_WARM_US &&
                             (!r->snap || now - r->snap->built_us >= SNAP_REFRESH_US ||
                              r->snap->write_seq != r->write_seq));
    uint64_t seq = r->write_seq;
    pthread_mutex_unlock(&r->mu);
    if (!due)
        return;
    struct jobs_snap *s = snap_build(m);
    s->write_seq = seq;
    s->built_us = hrm_mono_us();
    pthread_mutex_lock(&r->mu);
    struct jobs_snap *old = r->snap;
    r->snap = s;
    r->wanted = false;
    pthread_mutex_unlock(&r->mu);
    snap_unref(old);
}

/* ---- the reader's side: answering from a snapshot ---- */

/* The newest snapshot if a listing may be answered from it (a new reference), else NULL (and
 * the loop is asked for one). */
static struct jobs_snap *usable_snap(struct snap_reader *r)
{
    pthread_mutex_lock(&r->mu);
    struct jobs_snap *s = r->snap;
    if (s && (s->write_seq != r->write_seq || hrm_mono_us() - s->built_us > r->max_age_us))
        s = NULL;
    if (s)
        atomic_fetch_add(&s->refs, 1);
    else
        r->wanted = true;
    pthread_mutex_unlock(&r->mu);
    return s;
}

static bool listable(const struct jobs_snap *s, size_t i, bool all)
{
    return s->rows[i] && (all || s->live[i] || s->njobs - i <= 50);
}

/* The reply on_jobs makes, from s: the same page, rows and paging fields. */
static char *jobs_text(const struct jobs_snap *s, long long req, bool all, size_t before,
                       size_t limit, size_t *len)
{
    size_t *page = hrm_alloc((limit ? limit : 1) * sizeof(*page));
    size_t n = 0, i = before - 1 < s->njobs ? before - 1 : s->njobs;
    while (i > 0 && n < limit) {
        --i;
        if (listable(s, i, all))
            page[n++] = i;
    }
    bool more = false;
    for (size_t k = i; k > 0 && !more; k--)
        more = listable(s, k - 1, all);
    struct hrm_jtext t = {0};
    hrm_wire_text_head(&t, HRM_WIRE_JOBS_LIST);
    hrm_jtext_field_int(&t, "req", req);
    hrm_jtext_put(&t, ",\"jobs\":[", 9);
    for (size_t k = n; k > 0; k--) { /* listed in id order */
        const struct http_text *row = s->rows[page[k - 1]];
        if (k < n)
            hrm_jtext_put(&t, ",", 1);
        hrm_jtext_put(&t, row->data, row->len);
    }
    hrm_jtext_put(&t, "]", 1);
    hrm_jtext_key(&t, "truncated");
    hrm_jtext_put(&t, more ? "true" : "false", more ? 4 : 5);
    hrm_jtext_field_int(&t, "next", more ? (json_int_t)i + 1 : 0);
    hrm_jtext_put(&t, "}", 1);
    hrm_free(page);
    return hrm_jtext_take(&t, len);
}

static bool peer_is(const struct hrm_inmsg *in, const struct peer_id *p)
{
    return p->len == in->idlen && memcmp(p->id, in->id, in->idlen) == 0;
}

/* Whether an earlier message of in's sender waits for the loop (under mu). */
static bool sender_waits(struct snap_reader *r, const struct hrm_inmsg *in)
{
    if (r->busy_all)
        return true;
    for (size_t i = 0; i < r->nbusy; i++)
        if (peer_is(in, &r->busy[i]))
            return true;
    for (size_t i = 0; i < r->kept.q[INBOX_CLIENTS].len; i++) {
        const struct inbox_queue *q = &r->kept.q[INBOX_CLIENTS];
        const struct hrm_inmsg *k = &q->items[(q->head + i) % q->cap];
        if (k->idlen == in->idlen && memcmp(k->id, in->id, in->idlen) == 0)
            return true;
    }
    return false;
}

/* Answers in from a snapshot if it is a `jobs` request the reader may answer: true when sent. */
static bool answer(struct snap_reader *r, const struct hrm_inmsg *in)
{
    if (in->role != HRM_PEER_CLIENT || !in->data || in->extra_frames)
        return false;
    pthread_mutex_lock(&r->mu);
    bool waits = sender_waits(r, in);
    pthread_mutex_unlock(&r->mu);
    if (waits)
        return false;
    json_t *msg;
    struct hrm_wire_fault f;
    if (hrm_wire_decode_from(in->data, in->len, in->role, &msg, &f) != HRM_WIRE_JOBS)
        return false; /* the loop answers it, or its error */
    const json_t *b = json_object_get(msg, "before"), *l = json_object_get(msg, "limit");
    json_int_t before = json_integer_value(b), limit = l ? json_integer_value(l) : LIST_MAX_JOBS;
    bool all = json_is_true(json_object_get(msg, "all"));
    long long req = json_integer_value(json_object_get(msg, "req"));
    json_decref(msg);
    if ((b && before < 1) || limit < 1 || limit > LIST_MAX_JOBS)
        return false; /* on_jobs's errors */
    struct jobs_snap *s = usable_snap(r);
    if (!s)
        return false;
    size_t len;
    char *text = jobs_text(s, req, all, b ? (size_t)before : s->njobs + 1, (size_t)limit, &len);
    snap_unref(s);
    int rc = hrm_server_send_raw(r->srv, in->id, in->idlen, text, len);
    free(text);
    if (rc < 0)
        hrm_log(HRM_LOG_DEBUG, "a jobs_list was not delivered: %s", hrm_strerror(rc));
    pthread_mutex_lock(&r->mu);
    r->answered++;
    pthread_mutex_unlock(&r->mu);
    return true;
}

static bool still_lent(struct snap_reader *r, uint64_t lends)
{
    pthread_mutex_lock(&r->mu);
    bool lent = r->lends == lends && !r->stop;
    pthread_mutex_unlock(&r->mu);
    return lent;
}

/* Answers or keeps (in order) the requests the loop had received when it lent the socket. */
static void serve_pending(struct snap_reader *r, uint64_t lends)
{
    while (still_lent(r, lends)) {
        struct hrm_inmsg in;
        pthread_mutex_lock(&r->mu);
        bool got = inbox_pop(&r->pending, INBOX_CLIENTS, &in);
        pthread_mutex_unlock(&r->mu);
        if (!got)
            return;
        if (!answer(r, &in)) {
            pthread_mutex_lock(&r->mu);
            inbox_push_any(&r->kept, &in);
            pthread_mutex_unlock(&r->mu);
        }
        inbox_done(&in);
    }
}

/* Receives what comes while the socket is lent (lends), answering what it may. */
static void serve(struct snap_reader *r, uint64_t lends)
{
    serve_pending(r, lends); /* first: they came before anything still in the socket */
    while (still_lent(r, lends)) {
        /* A new client's handshake.  The allow-list it may re-read is the loop's, which reads it
         * only while it holds the socket (a registration), never in a section it lends. */
        hrm_server_handle_zap(r->srv);
        int got = 0;
        for (; got < READER_BURST; got++) {
            pthread_mutex_lock(&r->mu);
            bool room = inbox_total(&r->kept) < r->kept_max;
            pthread_mutex_unlock(&r->mu);
            struct hrm_inmsg in;
            if (!room || hrm_server_recv(r->srv, &in) < 0)
                break;
            if (answer(r, &in))
                continue;
            pthread_mutex_lock(&r->mu);
            inbox_push_any(&r->kept, &in); /* for the loop, in the order received */
            pthread_mutex_unlock(&r->mu);
        }
        if (got == READER_BURST)
            continue;
        zmq_pollitem_t items[3] = {
            {hrm_server_zsock(r->srv, 0), 0, ZMQ_POLLIN, 0},
            {hrm_server_zsock(r->srv, 1), 0, ZMQ_POLLIN, 0},
            {NULL, r->kick, ZMQ_POLLIN, 0},
        };
        pthread_mutex_lock(&r->mu);
        bool full = inbox_total(&r->kept) >= r->kept_max;
        pthread_mutex_unlock(&r->mu);
        if (full) /* the loop's inbox would overflow: only the handshakes and the kick */
            items[0].events = 0;
        if (zmq_poll(items, 3, READER_POLL_MS) < 0 && zmq_errno() != EINTR)
            break;
        uint64_t n;
        if ((items[2].revents & ZMQ_POLLIN) && read(r->kick, &n, sizeof(n)) < 0)
            break;
    }
}

/* Wakes when the loop lends its socket with requests waiting or while listings are asked, and
 * every reader period during such a lend (else it sleeps: an idle master's reader costs
 * nothing); serves a lend with requests waiting, or one that lasted a reader period. */
static void *reader_main(void *arg)
{
    struct snap_reader *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        if ((r->lends & 1) && r->warm) {
            struct timespec until = hrm_mono_deadline(SNAP_READER_PERIOD_US);
            pthread_cond_timedwait(&r->cond, &r->mu, &until);
        } else {
            pthread_cond_wait(&r->cond, &r->mu);
        }
        uint64_t lends = r->lends;
        bool lent = (lends & 1) && !r->stop;
        /* A lend with requests the loop received, or a long one while listings are asked: a
         * reader that takes the socket may keep the loop waiting for it at the lend's end. */
        if (!lent || (inbox_total(&r->pending) == 0 &&
                      (!r->warm || hrm_mono_us() - r->lend_us < SNAP_READER_PERIOD_US)))
            continue;
        pthread_mutex_unlock(&r->mu);
        if (pthread_mutex_trylock(&r->sock_mu) == 0) {
            pthread_mutex_lock(&r->mu);
            r->serving = true;
            pthread_mutex_unlock(&r->mu);
            serve(r, lends);
            pthread_mutex_lock(&r->mu);
            r->serving = false;
            pthread_mutex_unlock(&r->mu);
            pthread_mutex_unlock(&r->sock_mu);
        }
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* ---- lending ---- */

/* Test only ($HRM_TEST_HOLD_TURN): a lent turn holds while the file exists, 120 s at most. */
static void test_hold(struct snap_reader *r)
{
    if (!r->hold_file || access(r->hold_file, F_OK) != 0)
        return;
    hrm_log(HRM_LOG_NOTICE, "test: turn held while %s exists", r->hold_file);
    for (int i = 0; i < 12000 && access(r->hold_file, F_OK) == 0; i++)
        usleep(10000);
    hrm_log(HRM_LOG_NOTICE, "test: turn released");
}

static void remember(struct peer_id *list, size_t *n, bool *all, const struct hrm_inmsg *in)
{
    if (*n == BUSY_PEERS_MAX) {
        *all = true;
        return;
    }
    list[*n].len = in->idlen;
    memcpy(list[(*n)++].id, in->id, in->idlen);
}

void snap_turn_start(struct master *m)
{
    if (m->snap) {
        m->snap->nturn_clients = 0;
        m->snap->turn_clients_all = false;
    }
}

void snap_client_handled(struct master *m, const struct hrm_inmsg *in)
{
    struct snap_reader *r = m->snap;
    if (r && !r->turn_clients_all)
        remember(r->turn_clients, &r->nturn_clients, &r->turn_clients_all, in);
}

/* The clients the reader leaves to the loop while lent: those this turn answered (their
 * replies may wait for its commit). */
static void lend_busy(struct snap_reader *r)
{
    memcpy(r->busy, r->turn_clients, r->nturn_clients * sizeof(*r->busy));
    r->nbusy = r->nturn_clients;
    r->busy_all = r->turn_clients_all;
}

void snap_lend(struct master *m)
{
    struct snap_reader *r = m->snap;
    if (!r)
        return;
    size_t held = inbox_total(&m->inbox);
    pthread_mutex_lock(&r->mu);
    lend_busy(r);
    /* The clients' requests the loop received and did not handle yet (one came while it
     * handled agents' messages, which ended the turn for it): the reader's to look at. */
    inbox_move_class(&r->pending, &m->inbox, INBOX_CLIENTS);
    if (inbox_total(&r->pending) > 0)
        pthread_cond_signal(&r->cond); /* a client waits: the reader need not wait a period */
    r->lend_us = hrm_mono_us();
    r->warm = r->lend_us - r->asked_us < SNAP_WARM_US;
    if (r->warm) /* a long lend is served after a reader period: the reader times it */
        pthread_cond_signal(&r->cond);
    r->kept_max = held < INBOX_DEFAULT_MAX ? INBOX_DEFAULT_MAX - held : 0;
    r->lends++;
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_unlock(&r->sock_mu);
    test_hold(r);
}

void snap_reclaim(struct master *m)
{
    struct snap_reader *r = m->snap;
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->lends++;
    if (r->serving) {
        uint64_t one = 1;
        ssize_t w = write(r->kick, &one, sizeof(one)); /* EAGAIN: it is kicked already */
        (void)w;
    }
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_lock(&r->sock_mu);
    pthread_mutex_lock(&r->mu);
    inbox_give_back(&m->inbox, &r->pending, &r->kept); /* in the order received */
    int64_t answered = r->answered;
    r->answered = 0;
    pthread_mutex_unlock(&r->mu);
    for (int64_t i = 0; i < answered; i++)
        metrics_message(&m->counters, HRM_WIRE_JOBS);
    if (answered) {
        r->asked_us = hrm_mono_us();
        hrm_log(HRM_LOG_INFO, "%lld listing%s answered beside the loop while it worked",
                (long long)answered, answered == 1 ? "" : "s");
    }
}

struct snap_reader *snap_reader_new(struct master *m, struct hrm_error *err)
{
    struct snap_reader *r = hrm_calloc(1, sizeof(*r));
    r->srv = m->srv;
    r->max_age_us = m->cfg.snapshot_max_age_us > 0 ? m->cfg.snapshot_max_age_us
                                                   : SNAP_MAX_AGE_DEFAULT_US;
    r->hold_file = m->cfg.test_hold_file;
    r->kick = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (r->kick < 0) {
        hrm_errorf(err, -errno, "eventfd: %s", strerror(errno));
        hrm_free(r);
        return NULL;
    }
    pthread_mutex_init(&r->sock_mu, NULL);
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_lock(&r->sock_mu); /* the loop's */
    int rc = pthread_create(&r->thread, NULL, reader_main, r);
    if (rc != 0) {
        hrm_errorf(err, -rc, "cannot start the listing reader: %s", strerror(rc));
        snap_reader_free(r);
        return NULL;
    }
    r->started = true;
    return r;
}

void snap_reader_free(struct snap_reader *r)
{
    if (!r)
        return;
    if (r->started) {
        pthread_mutex_lock(&r->mu);
        r->stop = true;
        pthread_cond_broadcast(&r->cond);
        pthread_mutex_unlock(&r->mu);
        uint64_t one = 1;
        ssize_t w = write(r->kick, &one, sizeof(one));
        (void)w;
        pthread_join(r->thread, NULL);
    }
    inbox_free(&r->pending);
    inbox_free(&r->kept);
    snap_unref(r->snap);
    for (size_t i = 0; i < r->cap_done; i++)
        http_text_unref(r->done[i]);
    hrm_free(r->done);
    close(r->kick);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_unlock(&r->sock_mu);
    pthread_mutex_destroy(&r->sock_mu);
    pthread_mutex_destroy(&r->mu);
    hrm_free(r);
}
