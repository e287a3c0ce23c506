/* The master's side of the HTTP API: starts the server (--http), hands the requests handler
 * threads queued to the client handlers (on_submit, on_job, ...) as if a client had sent them,
 * routes their replies back after the turn commits, and builds the snapshot readers share. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hrm/alloc.h"
#include "hrm/log.h"
#include "master_eta.h"
#include "master_http.h"
#include "master_private.h"
#include "master_snap.h"

#define HTTP_CONN_LIMIT_DEFAULT 256
#define HTTP_TIMEOUT_DEFAULT_S 30
#define HTTP_BODY_MAX_DEFAULT ((int64_t)1 << 20)
#define CALLS_PER_TURN 256

/* A request's peer: a prefix no ZeroMQ identity has (theirs are 5 bytes, 0 then 4 random), then
 * the request's id. */
static const unsigned char PEER_PREFIX[] = {0, 'h', 't', 't', 'p'};
#define PEER_LEN (sizeof(PEER_PREFIX) + sizeof(uint64_t))

struct mhttp {
    struct http_bridge *bridge;
    struct http_server *srv;
    struct hrm_authz_entry sender; /* who HTTP requests act as: a client of the key's account */
    struct http_text **done;       /* per job id - 1: the row of a finished job, made once */
    size_t cap_done;
    bool publish;                  /* a write was answered: readers must see it */
    char url_file[1100];
};

void http_config_defaults(struct hrm_master_config *cfg)
{
    if (cfg->http_conn_limit <= 0)
        cfg->http_conn_limit = HTTP_CONN_LIMIT_DEFAULT;
    if (cfg->http_timeout_s <= 0)
        cfg->http_timeout_s = HTTP_TIMEOUT_DEFAULT_S;
    if (cfg->http_body_max <= 0)
        cfg->http_body_max = HTTP_BODY_MAX_DEFAULT;
}

static int read_token(const char *dir, const char *name, char *out, size_t len, bool required,
                      struct hrm_error *err)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    out[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return required ? hrm_errorf(err, -errno, "%s: %s (hrm keygen writes it)", path,
                                     strerror(errno))
                        : 0;
    if (!fgets(out, (int)len, f))
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
    if (required && strlen(out) < 16)
        return hrm_errorf(err, -EINVAL, "%s: a token of at least 16 characters expected", path);
    return 0;
}

/* Who HTTP requests act as: the default client key's line (its account, user= in authorized,
 * and whether it is admin), else the account running the master, as an admin (whoever holds
 * the HTTP token can read the master's key folder). */
static void http_sender(struct master *m, struct hrm_authz_entry *out)
{
    struct hrm_keypair kp;
    struct hrm_error err;
    const struct hrm_authz_entry *e = NULL;
    if (hrm_keys_load(m->keys_dir, "client", true, &kp, &err) == 0)
        e = hrm_authz_find(m->authz, kp.pub);
    if (e && e->bound[0]) {
        snprintf(out->bound, sizeof(out->bound), "%s", e->bound);
        out->admin = e->admin;
        return;
    }
    struct passwd *pw = getpwuid(getuid());
    snprintf(out->bound, sizeof(out->bound), "%s", pw && pw->pw_name ? pw->pw_name : "root");
    out->admin = true;
}

static int write_url(const char *path, const char *url, struct hrm_error *err)
{
    char tmp[1200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "we");
    if (!f)
        return hrm_errorf(err, -errno, "%s: %s", tmp, strerror(errno));
    fprintf(f, "%s\n", url);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return hrm_errorf(err, -errno, "%s: %s", path, strerror(errno));
    return 0;
}

/* When addr asks for any port (HOST:0) and DIR/http names a port on the same HOST: that
 * HOST:PORT in out. */
static bool previous_addr(const char *file, const char *addr, char *out, size_t len)
{
    size_t hl = strlen(addr) - 2;
    if (strlen(addr) < 3 || strcmp(addr + hl, ":0") != 0)
        return false;
    FILE *f = fopen(file, "re");
    char line[160] = "";
    if (!f)
        return false;
    bool ok = fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    const char *host = ok && strncmp(line, "http://", 7) == 0 ? line + 7 : NULL;
    const char *colon = host ? strrchr(host, ':') : NULL;
    char want[80];
    snprintf(want, sizeof(want), "%.*s", (int)hl, addr);
    if (strcmp(want, "localhost") == 0)
        snprintf(want, sizeof(want), "127.0.0.1");
    if (!colon || (size_t)(colon - host) != strlen(want) || strncmp(host, want, strlen(want)) != 0)
        return false;
    long port = strtol(colon + 1, NULL, 10);
    if (port <= 0 || port > 65535)
        return false;
    snprintf(out, len, "%s:%ld", want, port);
    return true;
}

int mhttp_start(struct master *m, struct hrm_error *err)
{
    const char *addr = m->cfg.http;
    if (!addr || !*addr || strcmp(addr, "off") == 0) {
        char path[1100];
        snprintf(path, sizeof(path), "%.1000s/http", m->state_dir);
        unlink(path); /* an earlier run's address would name a server that is not there */
        return 0;
    }
    http_config_defaults(&m->cfg);
    struct http_server_config sc = {.addr = addr,
                                    .conn_limit = (unsigned)m->cfg.http_conn_limit,
                                    .timeout_s = (unsigned)m->cfg.http_timeout_s,
                                    .body_max = (size_t)m->cfg.http_body_max};
    /* A key folder made before the API had no tokens: they are made now, once. */
    if (hrm_keys_http_tokens(m->keys_dir, false, err) < 0 ||
        read_token(m->keys_dir, HRM_HTTP_TOKEN_FILE, sc.token_rw, sizeof(sc.token_rw), true,
                   err) < 0 ||
        read_token(m->keys_dir, HRM_HTTP_RO_TOKEN_FILE, sc.token_ro, sizeof(sc.token_ro), false,
                   err) < 0)
        return -HRM_EIO;
    struct mhttp *h = hrm_calloc(1, sizeof(*h));
    m->http = h;
    h->sender.role = HRM_PEER_CLIENT;
    http_sender(m, &h->sender);
    snprintf(h->sender.pub, sizeof(h->sender.pub), "http");
    snprintf(h->url_file, sizeof(h->url_file), "%.1000s/http", m->state_dir);
    if (!(h->bridge = http_bridge_new(err)))
        return -HRM_EIO;
    /* A restarted master takes its previous port back when given port 0, so that a page left
     * open in a browser finds it again (as agents find the ZeroMQ endpoint). */
    char previous[128];
    if (previous_addr(h->url_file, addr, previous, sizeof(previous))) {
        struct http_server_config again = sc;
        again.addr = previous;
        h->srv = http_server_new(&again, h->bridge, NULL);
    }
    if (!h->srv && !(h->srv = http_server_new(&sc, h->bridge, err)))
        return -HRM_EIO;
    if (write_url(h->url_file, http_server_url(h->srv), err) < 0)
        return -HRM_EIO;
    hrm_log(HRM_LOG_NOTICE, "HTTP API on %s (jobs submitted there run as %s)",
            http_server_url(h->srv), h->sender.bound);
    return 0;
}

void mhttp_stop(struct master *m)
{
    struct mhttp *h = m->http;
    if (!h)
        return;
    http_bridge_close(h->bridge); /* handlers waiting on the loop give up first */
    http_server_free(h->srv);
    http_bridge_free(h->bridge); /* DIR/http stays: a restart takes its port back */
    for (size_t i = 0; i < h->cap_done; i++)
        http_text_unref(h->done[i]);
    hrm_free(h->done);
    hrm_free(h);
    m->http = NULL;
}

int mhttp_fd(const struct master *m)
{
    return m->http ? http_bridge_fd(m->http->bridge) : -1;
}

bool mhttp_peer(const struct peer_id *p)
{
    return p->len == PEER_LEN && memcmp(p->id, PEER_PREFIX, sizeof(PEER_PREFIX)) == 0;
}

void mhttp_reply(struct master *m, const struct peer_id *p, const json_t *msg)
{
    if (!m->http)
        return;
    uint64_t id;
    memcpy(&id, p->id + sizeof(PEER_PREFIX), sizeof(id));
    http_bridge_answer(m->http->bridge, id, (json_t *)msg);
}

/* The client handlers a request may reach: the same code, checks and error text as for hrm's
 * own commands. */
static const struct {
    int type;
    void (*handle)(struct master *m, const struct peer_id *from, json_t *msg);
    bool write;
} calls[] = {
    {HRM_WIRE_SUBMIT, on_submit, true}, {HRM_WIRE_CANCEL, on_cancel, true},
    {HRM_WIRE_JOB, on_job, false},      {HRM_WIRE_LOGS, on_logs, false},
    {HRM_WIRE_EVENTS, on_events, false},
};

void mhttp_turn(struct master *m)
{
    struct mhttp *h = m->http;
    if (!h)
        return;
    struct http_call_in in[CALLS_PER_TURN];
    size_t n = http_bridge_take(h->bridge, in, CALLS_PER_TURN);
    struct hrm_authz_entry saved = m->sender;
    for (size_t i = 0; i < n; i++) {
        struct peer_id from = {.len = PEER_LEN};
        memcpy(from.id, PEER_PREFIX, sizeof(PEER_PREFIX));
        memcpy(from.id + sizeof(PEER_PREFIX), &in[i].id, sizeof(in[i].id));
        int type = hrm_wire_type_by_name(json_string_value(json_object_get(in[i].req, "type")));
        struct hrm_error err;
        size_t k = 0;
        while (k < sizeof(calls) / sizeof(calls[0]) && calls[k].type != type)
            k++;
        if (k == sizeof(calls) / sizeof(calls[0]) || hrm_wire_validate(type, in[i].req, &err) < 0) {
            /* The server builds these requests: a failure here is a bug of ours. */
            master_reply_error(m, &from, HRM_WERR_INTERNAL, (long long)in[i].id,
                               "the HTTP server sent a bad request");
        } else {
            m->sender = h->sender;
            m->sender.admin = h->sender.admin && !in[i].reader; /* the read-only token: never */
            if (calls[k].write)
                snap_client_wrote(m);
            calls[k].handle(m, &from, in[i].req);
            h->publish |= calls[k].write;
        }
        json_decref(in[i].req);
    }
    m->sender = saved;
}

/* ---- the snapshot ---- */

static struct http_text *job_row_text(struct master *m, struct rjob *j, json_t *live)
{
    struct mhttp *h = m->http;
    size_t k = (size_t)(j->id - 1);
    /* Finished with nothing placed: the row cannot change any more (a failed job's runs that
     * were still being killed change its counters when their ends arrive). */
    if (!jobs_live(j) && j->count.state[HRM_RTASK_RUNNING] == 0 &&
        j->count.state[HRM_RTASK_PENDING] == 0) {
        if (k >= h->cap_done) {
            size_t old = h->cap_done;
            HRM_GROW(h->done, h->cap_done, k + 1);
            memset(h->done + old, 0, (h->cap_done - old) * sizeof(*h->done));
        }
        if (!h->done[k]) {
            json_t *o = jobs_summary_json(j);
            json_object_set_new(o, "estimated_start_s", json_null());
            h->done[k] = http_text_of_json(o);
        }
        return http_text_ref(h->done[k]);
    }
    json_array_append_new(live, jobs_summary_json(j));
    return NULL; /* made once the live list is annotated */
}

static json_t *queues_json(struct master *m)
{
    json_t *byname = json_object();
    for (size_t i = 0; i < m->njobs; i++) {
        const struct rjob *j = m->jobs[i];
        if (!j)
            continue;
        json_t *q = json_object_get(byname, j->queue);
        if (!q) {
            q = json_pack("{s:s, s:i, s:i, s:i, s:i}", "name", j->queue, "jobs_pending", 0,
                          "jobs_running", 0, "tasks_pending", 0, "tasks_running", 0);
            json_object_set_new(byname, j->queue, q);
        }
        if (!jobs_live(j))
            continue;
        const char *key = j->state == HRM_JOB_PENDING ? "jobs_pending" : "jobs_running";
        json_object_set_new(q, key, json_integer(json_integer_value(json_object_get(q, key)) + 1));
        json_object_set_new(q, "tasks_pending",
                            json_integer(json_integer_value(json_object_get(q, "tasks_pending")) +
                                         j->count.state[HRM_RTASK_PENDING]));
        json_object_set_new(q, "tasks_running",
                            json_integer(json_integer_value(json_object_get(q, "tasks_running")) +
                                         j->count.state[HRM_RTASK_RUNNING]));
    }
    json_t *list = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(byname, k, v) json_array_append(list, v);
    json_decref(byname);
    return list;
}

static struct http_snapshot *snapshot_build(struct master *m)
{
    struct http_snapshot *s = http_snapshot_new();
    s->jobs = hrm_calloc(m->njobs ? m->njobs : 1, sizeof(*s->jobs));
    json_t *live = json_array();
    for (size_t i = 0; i < m->njobs; i++) {
        struct rjob *j = m->jobs[i];
        if (!j)
            continue;
        struct http_job_row *row = &s->jobs[s->njobs++];
        row->id = j->id;
        snprintf(row->state, sizeof(row->state), "%s", hrm_job_state_name(j->state));
        snprintf(row->user, sizeof(row->user), "%s", j->user);
        snprintf(row->queue, sizeof(row->queue), "%s", j->queue);
        row->json = job_row_text(m, j, live);
    }
    eta_annotate_list(m, live);
    size_t next = 0;
    for (size_t i = 0; i < s->njobs; i++)
        if (!s->jobs[i].json)
            s->jobs[i].json = http_text_of_json(json_incref(json_array_get(live, next++)));
    json_decref(live);
    s->nodes = http_text_of_json(jobs_nodes_json(m));
    s->queues = http_text_of_json(queues_json(m));
    char *metrics = master_metrics_render(m);
    s->metrics = http_text_new(metrics ? metrics : "", metrics ? strlen(metrics) : 0);
    free(metrics);
    return s;
}

void mhttp_after_commit(struct master *m)
{
    struct mhttp *h = m->http;
    if (!h)
        return;
    if (h->publish || http_bridge_wanted(h->bridge))
        http_bridge_publish(h->bridge, snapshot_build(m));
    h->publish = false;
    if (http_bridge_streams(h->bridge, 0) > 0)
        http_bridge_events(h->bridge, hrm_store_last_event_seq(m->store));
}
