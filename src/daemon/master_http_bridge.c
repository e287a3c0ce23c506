/* The HTTP API's bridge between handler threads and the master's loop: requests queued for the
 * loop (woken by an eventfd it polls), their answers, the published snapshot, the event sequence. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "master_http.h"

struct http_text *http_text_new(const char *s, size_t len)
{
    struct http_text *t = hrm_alloc(sizeof(*t) + len + 1);
    atomic_init(&t->refs, 1);
    t->len = len;
    memcpy(t->data, s, len);
    t->data[len] = '\0';
    return t;
}

struct http_text *http_text_of_json(json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(v);
    struct http_text *t = http_text_new(s ? s : "null", s ? strlen(s) : 4);
    free(s);
    return t;
}

struct http_text *http_text_ref(struct http_text *t)
{
    atomic_fetch_add(&t->refs, 1);
    return t;
}

void http_text_unref(struct http_text *t)
{
    if (t && atomic_fetch_sub(&t->refs, 1) == 1)
        hrm_free(t);
}

struct http_snapshot *http_snapshot_new(void)
{
    struct http_snapshot *s = hrm_calloc(1, sizeof(*s));
    atomic_init(&s->refs, 1);
    return s;
}

void http_snapshot_unref(struct http_snapshot *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (size_t i = 0; i < s->njobs; i++)
        http_text_unref(s->jobs[i].json);
    hrm_free(s->jobs);
    http_text_unref(s->nodes);
    http_text_unref(s->queues);
    http_text_unref(s->metrics);
    hrm_free(s);
}

/* A request in flight.  Owned by the bridge's lists; the handler that made it frees it when
 * answered, or the loop does when the handler gave up (abandoned). */
struct call {
    uint64_t id;
    json_t *req;   /* until the loop takes it */
    json_t *reply; /* once answered */
    bool reader;   /* with the read-only token */
    bool taken, done, abandoned;
    struct call *next;
};

struct http_bridge {
    pthread_mutex_t mu;
    pthread_cond_t cond; /* answers, snapshots and events: one condition, waiters re-check */
    int efd;
    bool closed;
    uint64_t next_id;
    struct call *calls; /* queued and in flight */
    struct http_snapshot *snap;
    bool wanted;
    int64_t last_event;
    int streams;
};

struct http_bridge *http_bridge_new(struct hrm_error *err)
{
    struct http_bridge *b = hrm_calloc(1, sizeof(*b));
    b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (b->efd < 0) {
        hrm_errorf(err, -errno, "eventfd: %s", strerror(errno));
        hrm_free(b);
        return NULL;
    }
    pthread_mutex_init(&b->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cond, &ca);
    pthread_condattr_destroy(&ca);
    b->next_id = 1;
    b->snap = http_snapshot_new();
    b->wanted = true;
    return b;
}

void http_bridge_close(struct http_bridge *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->closed = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->mu);
}

void http_bridge_free(struct http_bridge *b)
{
    if (!b)
        return;
    for (struct call *c = b->calls, *n; c; c = n) {
        n = c->next;
        json_decref(c->req);
        json_decref(c->reply);
        hrm_free(c);
    }
    http_snapshot_unref(b->snap);
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->mu);
    close(b->efd);
    hrm_free(b);
}

int http_bridge_fd(const struct http_bridge *b)
{
    return b->efd;
}

static void wake_loop(struct http_bridge *b)
{
    uint64_t one = 1;
    ssize_t w = write(b->efd, &one, sizeof(one)); /* EAGAIN: the counter is full, it is awake */
    (void)w;
}

struct http_snapshot *http_bridge_snapshot(struct http_bridge *b, int64_t max_age_us)
{
    pthread_mutex_lock(&b->mu);
    if (hrm_mono_us() - b->snap->built_us > max_age_us && !b->closed) {
        uint64_t gen = b->snap->generation;
        b->wanted = true;
        wake_loop(b);
        /* A busy loop publishes at its next turn; past a second, the older one is served. */
        struct timespec until = hrm_mono_deadline(1000000);
        while (!b->closed && b->snap->generation == gen)
            if (pthread_cond_timedwait(&b->cond, &b->mu, &until) == ETIMEDOUT)
                break;
    }
    struct http_snapshot *s = b->closed ? NULL : b->snap;
    if (s)
        atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&b->mu);
    return s;
}

static void unlink_call(struct http_bridge *b, struct call *c)
{
    for (struct call **p = &b->calls; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            return;
        }
}

json_t *http_bridge_call(struct http_bridge *b, json_t *req, bool reader, int64_t timeout_us)
{
    struct call *c = hrm_calloc(1, sizeof(*c));
    c->req = req;
    c->reader = reader;
    pthread_mutex_lock(&b->mu);
    if (b->closed) {
        pthread_mutex_unlock(&b->mu);
        json_decref(req);
        hrm_free(c);
        return NULL;
    }
    c->id = b->next_id++;
    json_object_set_new(req, "req", json_integer((json_int_t)c->id));
    c->next = b->calls;
    b->calls = c;
    wake_loop(b);
    struct timespec until = hrm_mono_deadline(timeout_us);
    while (!c->done && !b->closed)
        if (pthread_cond_timedwait(&b->cond, &b->mu, &until) == ETIMEDOUT)
            break;
    json_t *reply = NULL;
    if (c->done) {
        reply = c->reply;
        unlink_call(b, c);
        hrm_free(c);
    } else {
        c->abandoned = true; /* the loop frees it if it ever answers; else http_bridge_free */
    }
    pthread_mutex_unlock(&b->mu);
    return reply;
}

int64_t http_bridge_wait_events(struct http_bridge *b, int64_t seen, int64_t timeout_us)
{
    pthread_mutex_lock(&b->mu);
    struct timespec until = hrm_mono_deadline(timeout_us);
    while (!b->closed && b->last_event == seen)
        if (pthread_cond_timedwait(&b->cond, &b->mu, &until) == ETIMEDOUT)
            break;
    int64_t last = b->closed ? -1 : b->last_event;
    pthread_mutex_unlock(&b->mu);
    return last;
}

size_t http_bridge_take(struct http_bridge *b, struct http_call_in *out, size_t max)
{
    uint64_t n;
    ssize_t r = read(b->efd, &n, sizeof(n));
    (void)r;
    size_t got = 0;
    pthread_mutex_lock(&b->mu);
    for (struct call *c = b->calls; c && got < max; c = c->next) {
        if (c->taken || c->abandoned)
            continue;
        c->taken = true;
        out[got].id = c->id;
        out[got].req = c->req;
        out[got].reader = c->reader;
        c->req = NULL;
        got++;
    }
    if (got == max)
        wake_loop(b); /* more may wait: the next turn takes them */
    pthread_mutex_unlock(&b->mu);
    return got;
}

void http_bridge_answer(struct http_bridge *b, uint64_t id, json_t *reply)
{
    pthread_mutex_lock(&b->mu);
    for (struct call *c = b->calls; c; c = c->next) {
        if (c->id != id)
            continue;
        if (c->abandoned) {
            unlink_call(b, c);
            json_decref(c->req);
            hrm_free(c);
        } else if (!c->done) {
            c->reply = json_incref(reply);
            c->done = true;
            pthread_cond_broadcast(&b->cond);
        }
        break;
    }
    pthread_mutex_unlock(&b->mu);
}

bool http_bridge_wanted(struct http_bridge *b)
{
    pthread_mutex_lock(&b->mu);
    bool w = b->wanted;
    pthread_mutex_unlock(&b->mu);
    return w;
}

void http_bridge_publish(struct http_bridge *b, struct http_snapshot *s)
{
    s->built_us = hrm_mono_us();
    pthread_mutex_lock(&b->mu);
    s->generation = b->snap->generation + 1;
    struct http_snapshot *old = b->snap;
    b->snap = s;
    b->wanted = false;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->mu);
    http_snapshot_unref(old);
}

int http_bridge_streams(struct http_bridge *b, int delta)
{
    pthread_mutex_lock(&b->mu);
    b->streams += delta;
    int n = b->streams;
    pthread_mutex_unlock(&b->mu);
    return n;
}

void http_bridge_events(struct http_bridge *b, int64_t last_seq)
{
    pthread_mutex_lock(&b->mu);
    if (b->last_event != last_seq) {
        b->last_event = last_seq;
        pthread_cond_broadcast(&b->cond);
    }
    pthread_mutex_unlock(&b->mu);
}
