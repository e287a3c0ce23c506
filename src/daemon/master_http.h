/* The master's HTTP API (docs/runtime.md, "HTTP API"): what its handler threads and its loop share.
 *
 * Handler threads never touch struct master.  They read an immutable, reference-counted
 * snapshot the loop publishes (jobs, nodes, queues, metrics), and hand everything else (submit,
 * cancel, a job's tasks, logs, events) to the loop as a wire request through the bridge, which
 * the loop answers after its turn commits.  The bridge is the one object both sides lock. */
#ifndef HRM_MASTER_HTTP_H
#define HRM_MASTER_HTTP_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/error.h"

/* An immutable string shared by snapshots (a finished job's row is made once). */
struct http_text {
    atomic_int refs;
    size_t len;
    char data[];
};
struct http_text *http_text_new(const char *s, size_t len); /* copies s; refs 1 */
struct http_text *http_text_of_json(json_t *v);             /* compact dump; takes v */
struct http_text *http_text_ref(struct http_text *t);
void http_text_unref(struct http_text *t); /* NULL: no-op */

/* One job of GET /api/v1/jobs: the fields its filters read, and its JSON object. */
struct http_job_row {
    int64_t id;
    char state[16], user[48], queue[48];
    struct http_text *json; /* owned reference */
};

/* What the loop published: read-only for every thread once published. */
struct http_snapshot {
    atomic_int refs;
    uint64_t generation;
    int64_t built_us;            /* monotonic */
    struct http_job_row *jobs;   /* by id, ascending */
    size_t njobs;
    struct http_text *nodes;     /* a JSON array */
    struct http_text *queues;    /* a JSON array */
    struct http_text *metrics;   /* Prometheus text */
};
struct http_snapshot *http_snapshot_new(void); /* empty, refs 1 */
void http_snapshot_unref(struct http_snapshot *s); /* NULL: no-op */

/* ---- the bridge ---- */
struct http_bridge;
struct http_bridge *http_bridge_new(struct hrm_error *err);
/* Wakes every waiting handler (their calls fail) and refuses new calls; idempotent. */
void http_bridge_close(struct http_bridge *b);
void http_bridge_free(struct http_bridge *b); /* after the server stopped; NULL: no-op */
int http_bridge_fd(const struct http_bridge *b); /* readable when the loop has work */

/* Handler side.  The latest snapshot, no older than max_age_us when the loop publishes one in
 * time (it is asked to); a new reference, or NULL when the master stops. */
struct http_snapshot *http_bridge_snapshot(struct http_bridge *b, int64_t max_age_us);
/* Hands req (a wire request, taken) to the loop and waits up to timeout_us for its answer (a
 * wire reply, new reference).  NULL: no answer in time, or the master stops.  reader: the
 * request came with the read-only token, so it never acts as an admin key (master_http_loop.c). */
json_t *http_bridge_call(struct http_bridge *b, json_t *req, bool reader, int64_t timeout_us);
/* Waits until the event log's last sequence number differs from seen, or timeout_us passes;
 * returns it (-1 when the master stops). */
int64_t http_bridge_wait_events(struct http_bridge *b, int64_t seen, int64_t timeout_us);

/* Loop side. */
struct http_call_in {
    uint64_t id;
    json_t *req; /* owned by the taker */
    bool reader; /* with the read-only token */
};
/* Takes up to max queued requests (and clears the wake-up). */
size_t http_bridge_take(struct http_bridge *b, struct http_call_in *out, size_t max);
void http_bridge_answer(struct http_bridge *b, uint64_t id, json_t *reply); /* borrows reply */
/* Whether a reader asked for a newer snapshot than the one published. */
bool http_bridge_wanted(struct http_bridge *b);
void http_bridge_publish(struct http_bridge *b, struct http_snapshot *s); /* takes s */
/* Event streams open (delta +1 when one opens, -1 when it closes); only while some are does the
 * loop read the event log's last sequence number, each turn. */
int http_bridge_streams(struct http_bridge *b, int delta);
void http_bridge_events(struct http_bridge *b, int64_t last_seq);

/* ---- the server (master_http.c) ---- */
#define HTTP_TOKEN_MAX 128
struct http_server_config {
    const char *addr;               /* HOST:PORT (port 0: a free one) */
    char token_rw[HTTP_TOKEN_MAX];  /* read-write bearer token */
    char token_ro[HTTP_TOKEN_MAX];  /* read-only bearer token ("" none) */
    unsigned conn_limit;            /* connections at once */
    unsigned timeout_s;             /* an idle connection is closed after this */
    size_t body_max;                /* request bodies over it get 413 */
};
struct http_server;
struct http_server *http_server_new(const struct http_server_config *cfg, struct http_bridge *b,
                                    struct hrm_error *err);
/* "http://HOST:PORT", the address actually bound. */
const char *http_server_url(const struct http_server *s);
void http_server_free(struct http_server *s); /* stops and joins its threads; NULL: no-op */

/* master_http_assets (web): the page's static files; NULL when path is not one. */
struct http_asset {
    const char *data;
    size_t len;
    const char *content_type;
};
const struct http_asset *http_asset_find(const char *path);

#endif
