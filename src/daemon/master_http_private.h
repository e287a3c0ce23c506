/* The HTTP server's files (master_http.c, master_http_routes.c): routes, a request's state, the
 * responses.  Handler threads only: nothing here reaches struct master. */
#ifndef HRM_MASTER_HTTP_PRIVATE_H
#define HRM_MASTER_HTTP_PRIVATE_H

#include <microhttpd.h>

#include "master_http.h"

/* Readers get a snapshot at most this old (the loop builds one when asked, not every turn). */
#define HTTP_SNAPSHOT_MAX_AGE_US 200000
#define HTTP_JOBS_PAGE_DEFAULT 100
#define HTTP_JOBS_PAGE_MAX 1000
/* How long a request waits for the loop's answer (a log read waits on its node: 5 s at most). */
#define HTTP_CALL_TIMEOUT_US 15000000

enum http_route {
    HTTP_NONE,
    HTTP_HEALTHZ,
    HTTP_METRICS,
    HTTP_JOBS,
    HTTP_JOB,
    HTTP_CANCEL,
    HTTP_LOG,
    HTTP_NODES,
    HTTP_QUEUES,
    HTTP_EVENTS,
};

/* One request, from its headers to its completion. */
struct http_request {
    enum http_route route;
    int64_t job, task;
    bool post;
    bool reader; /* with the read-only token: never acts as an admin key */
    char path[256];
    char *body; /* POST: what came, up to the limit */
    size_t len, cap;
    bool too_big;
    const struct http_asset *asset; /* a file of the page */
};

enum MHD_Result http_send(struct MHD_Connection *c, unsigned status, const char *type,
                          const char *body, size_t len);
enum MHD_Result http_send_json(struct MHD_Connection *c, unsigned status, json_t *v); /* takes v */
enum MHD_Result http_error_h(struct MHD_Connection *c, unsigned status, const char *code,
                             const char *path, const char *const *headers, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
#define http_error(c, status, code, path, ...) \
    http_error_h((c), (status), (code), (path), NULL, __VA_ARGS__)
/* A query argument in [lo, hi]: 1 and *out, 0 when absent, -1 when not such an integer. */
int http_query_int(struct MHD_Connection *c, const char *name, int64_t lo, int64_t hi,
                   int64_t *out);

/* master_http_routes.c: the routes answered by the master's loop. */
enum MHD_Result http_route_submit(struct http_bridge *b, struct MHD_Connection *c,
                                  struct http_request *rq);
enum MHD_Result http_route_loop(struct http_bridge *b, const struct http_server_config *cfg,
                                struct MHD_Connection *c, struct http_request *rq);

#endif
