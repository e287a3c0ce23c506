/* The master's HTTP server (libmicrohttpd, a thread per connection): routing, bearer tokens, the
 * one error shape, and the routes answered from the published snapshot.  Routes that need the
 * master's loop (submit, cancel, a job, logs, events) are in master_http_routes.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hrm/alloc.h"
#include "hrm/log.h"
#include "master_http_private.h"

struct http_server {
    struct MHD_Daemon *d;
    struct http_server_config cfg;
    struct http_bridge *bridge; /* borrowed */
    char url[96];
};

const char *http_server_url(const struct http_server *s)
{
    return s->url;
}

/* ---- responses ---- */

enum MHD_Result http_send(struct MHD_Connection *c, unsigned status, const char *type,
                          const char *body, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result http_send_json(struct MHD_Connection *c, unsigned status, json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    enum MHD_Result ret = http_send(c, status, "application/json", s ? s : "{}", s ? strlen(s) : 2);
    free(s);
    return ret;
}

/* {"error": {"code", "message", "path"}}; extra headers as name, value pairs ending in NULL. */
enum MHD_Result http_error_h(struct MHD_Connection *c, unsigned status, const char *code,
                             const char *path, const char *const *headers, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_t *e = json_pack("{s:{s:s, s:s, s:s}}", "error", "code", code, "message", msg, "path",
                          path ? path : "");
    char *s = json_dumps(e, JSON_COMPACT);
    json_decref(e);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(s), s, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    for (size_t i = 0; headers && headers[i]; i += 2)
        MHD_add_response_header(r, headers[i], headers[i + 1]);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- routing ---- */

#define MAX_SEGS 8

/* Splits the (decoded) path into segments; false when it has too many or an empty one (//). */
static bool split_path(const char *url, char *buf, size_t len, char **segs, int *nsegs)
{
    snprintf(buf, len, "%s", url);
    *nsegs = 0;
    char *p = buf;
    if (*p != '/')
        return false;
    p++;
    if (!*p)
        return true;
    while (p) {
        char *slash = strchr(p, '/');
        if (slash)
            *slash = '\0';
        if (!*p || *nsegs == MAX_SEGS)
            return false;
        segs[(*nsegs)++] = p;
        p = slash ? slash + 1 : NULL;
    }
    return true;
}

/* A positive decimal id, digits only (no sign, no spaces, no "..", at most 18 digits). */
static bool parse_id(const char *s, int64_t lo, int64_t *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > 18 || strspn(s, "0123456789") != n)
        return false;
    *out = strtoll(s, NULL, 10);
    return *out >= lo;
}

struct route_def {
    enum http_route route;
    const char *pattern; /* segments; "#" an id */
    const char *allow;   /* methods, as the Allow header lists them */
    bool write;          /* POST: needs the read-write token */
};

static const struct route_def routes[] = {
    {HTTP_HEALTHZ, "healthz", "GET, HEAD", false},
    {HTTP_METRICS, "metrics", "GET, HEAD", false},
    {HTTP_JOBS, "api/v1/jobs", "GET, HEAD, POST", false},
    {HTTP_JOB, "api/v1/jobs/#", "GET, HEAD", false},
    {HTTP_CANCEL, "api/v1/jobs/#/cancel", "POST", true},
    {HTTP_LOG, "api/v1/jobs/#/tasks/#/log", "GET, HEAD", false},
    {HTTP_NODES, "api/v1/nodes", "GET, HEAD", false},
    {HTTP_QUEUES, "api/v1/queues", "GET, HEAD", false},
    {HTTP_EVENTS, "api/v1/events", "GET, HEAD", false},
};

/* Matches the path against the table: the route, its ids, or HTTP_NONE with why in bad_id (an
 * id segment that is not one: a 404 that names it). */
static const struct route_def *match(char **segs, int nsegs, int64_t ids[2], const char **bad)
{
    *bad = NULL;
    for (size_t r = 0; r < sizeof(routes) / sizeof(routes[0]); r++) {
        char pat[64], *save = NULL;
        snprintf(pat, sizeof(pat), "%s", routes[r].pattern);
        int k = 0, nid = 0;
        bool ok = true;
        const char *badhere = NULL;
        for (char *p = strtok_r(pat, "/", &save); p && ok; p = strtok_r(NULL, "/", &save), k++) {
            if (k >= nsegs) {
                ok = false;
            } else if (strcmp(p, "#") == 0) {
                /* tasks count from 0, jobs from 1 */
                if (!parse_id(segs[k], nid == 0 ? 1 : 0, &ids[nid]))
                    badhere = segs[k];
                nid++;
            } else {
                ok = strcmp(p, segs[k]) == 0;
            }
        }
        if (ok && k == nsegs) {
            if (badhere) {
                *bad = badhere;
                return NULL;
            }
            return &routes[r];
        }
    }
    return NULL;
}

static bool method_allowed(const struct route_def *r, const char *method)
{
    char list[64], *save = NULL;
    snprintf(list, sizeof(list), "%s", r->allow);
    for (char *p = strtok_r(list, ", ", &save); p; p = strtok_r(NULL, ", ", &save))
        if (strcmp(p, method) == 0)
            return true;
    return false;
}

/* Constant time over the token's length: a wrong token says nothing about how close it was. */
static bool token_eq(const char *given, const char *want)
{
    size_t n = strlen(want), g = strlen(given);
    unsigned char diff = (unsigned char)(n != g);
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(want[i] ^ (i < g ? given[i] : 0));
    return n > 0 && diff == 0;
}

/* 0: read-write, 1: read-only, -1: none or wrong. */
static int auth_level(const struct http_server *s, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return -1;
    const char *t = h + 7;
    while (*t == ' ')
        t++;
    if (token_eq(t, s->cfg.token_rw))
        return 0;
    if (s->cfg.token_ro[0] && token_eq(t, s->cfg.token_ro))
        return 1;
    return -1;
}

static void request_free(struct http_request *rq)
{
    if (!rq)
        return;
    hrm_free(rq->body);
    hrm_free(rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    request_free(*con_cls);
    *con_cls = NULL;
}

/* ---- routes from the snapshot ---- */

static enum MHD_Result serve_asset(struct MHD_Connection *c, const struct http_asset *a)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static struct http_snapshot *snapshot(struct http_server *s)
{
    return http_bridge_snapshot(s->bridge, HTTP_SNAPSHOT_MAX_AGE_US);
}

static enum MHD_Result stopping(struct MHD_Connection *c, const char *path)
{
    return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable", path,
                      "the master is stopping");
}

/* {"KEY": <text>} around a snapshot's JSON text. */
static enum MHD_Result send_wrapped(struct MHD_Connection *c, const char *key,
                                    const struct http_text *t)
{
    size_t len = strlen(key) + t->len + 8;
    char *buf = hrm_alloc(len);
    int n = snprintf(buf, len, "{\"%s\":%s}", key, t->data);
    enum MHD_Result ret = http_send(c, MHD_HTTP_OK, "application/json", buf, (size_t)n);
    hrm_free(buf);
    return ret;
}

static bool job_state_known(const char *s)
{
    static const char *const states[] = {"pending", "running", "done", "failed", "cancelled"};
    for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
        if (strcmp(s, states[i]) == 0)
            return true;
    return false;
}

/* Newest first: jobs below the cursor (an id) that pass the filters, at most limit. */
static enum MHD_Result list_jobs(struct http_server *s, struct MHD_Connection *c, const char *path)
{
    const char *state = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
    const char *user = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "user");
    const char *queue = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "queue");
    const char *cursor = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cursor");
    int64_t limit = HTTP_JOBS_PAGE_DEFAULT, before = INT64_MAX;
    if (state && !job_state_known(state))
        return http_error(c, MHD_HTTP_BAD_REQUEST, "bad_field", path,
                          "state: '%.40s' is not a job state (pending, running, done, failed, "
                          "cancelled)", state);
    if (http_query_int(c, "limit", 1, HTTP_JOBS_PAGE_MAX, &limit) < 0)
        return http_error(c, MHD_HTTP_BAD_REQUEST, "bad_field", path,
                          "limit: expected an integer in 1..%d", HTTP_JOBS_PAGE_MAX);
    if (cursor && !parse_id(cursor, 1, &before))
        return http_error(c, MHD_HTTP_BAD_REQUEST, "bad_field", path,
                          "cursor: '%.40s' is not a cursor this server gave", cursor);
    struct http_snapshot *snap = snapshot(s);
    if (!snap)
        return stopping(c, path);
    size_t cap = 4096, len = 0;
    char *buf = hrm_alloc(cap);
    len += (size_t)snprintf(buf, cap, "{\"jobs\":[");
    int64_t n = 0, last = 0;
    size_t i = snap->njobs;
    while (i > 0 && snap->jobs[i - 1].id >= before)
        i--;
    bool more = false;
    for (; i > 0; i--) {
        const struct http_job_row *row = &snap->jobs[i - 1];
        if ((state && strcmp(state, row->state) != 0) || (user && strcmp(user, row->user) != 0) ||
            (queue && strcmp(queue, row->queue) != 0))
            continue;
        if (n == limit) {
            more = true;
            break;
        }
        HRM_GROW(buf, cap, len + row->json->len + 64);
        if (n++)
            buf[len++] = ',';
        memcpy(buf + len, row->json->data, row->json->len);
        len += row->json->len;
        last = row->id;
    }
    HRM_GROW(buf, cap, len + 64);
    if (more)
        len += (size_t)snprintf(buf + len, cap - len, "],\"next\":\"%lld\"}", (long long)last);
    else
        len += (size_t)snprintf(buf + len, cap - len, "],\"next\":null}");
    http_snapshot_unref(snap);
    enum MHD_Result ret = http_send(c, MHD_HTTP_OK, "application/json", buf, len);
    hrm_free(buf);
    return ret;
}

static enum MHD_Result from_snapshot(struct http_server *s, struct MHD_Connection *c,
                                     enum http_route route, const char *path)
{
    if (route == HTTP_JOBS)
        return list_jobs(s, c, path);
    struct http_snapshot *snap = snapshot(s);
    if (!snap)
        return stopping(c, path);
    enum MHD_Result ret;
    if (route == HTTP_METRICS)
        ret = http_send(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
                        snap->metrics ? snap->metrics->data : "",
                        snap->metrics ? snap->metrics->len : 0);
    else
        ret = send_wrapped(c, route == HTTP_NODES ? "nodes" : "queues",
                           route == HTTP_NODES ? snap->nodes : snap->queues);
    http_snapshot_unref(snap);
    return ret;
}

int http_query_int(struct MHD_Connection *c, const char *name, int64_t lo, int64_t hi,
                   int64_t *out)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi)
        return -1;
    *out = x;
    return 1;
}

/* ---- the access handler ---- */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    struct http_server *s = cls;
    struct http_request *rq = *con_cls;
    if (!rq) {
        /* First call: the headers.  Everything that can be refused without the body is. */
        rq = hrm_calloc(1, sizeof(*rq));
        *con_cls = rq;
        snprintf(rq->path, sizeof(rq->path), "%s", url);
        /* A response queued now closes the connection (the body is not read): only refusals
         * are; answers wait for the end of the request, so clients keep their connection. */
        const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
        if (strcmp(m, "GET") == 0 && (rq->asset = http_asset_find(url)))
            return MHD_YES;
        char buf[1100], *segs[MAX_SEGS];
        int nsegs;
        const char *bad = NULL;
        const struct route_def *r = NULL;
        int64_t ids[2] = {0, 0};
        if (strlen(url) < sizeof(buf) && split_path(url, buf, sizeof(buf), segs, &nsegs))
            r = match(segs, nsegs, ids, &bad);
        if (!r && bad)
            return http_error(c, MHD_HTTP_NOT_FOUND, "not_found", url,
                              "'%.40s' is not an id (a job counts from 1, a task from 0)", bad);
        if (!r)
            return http_error(c, MHD_HTTP_NOT_FOUND, "not_found", url, "no such route: %.200s",
                              url);
        if (!method_allowed(r, method) && !method_allowed(r, m)) {
            const char *h[] = {MHD_HTTP_HEADER_ALLOW, r->allow, NULL};
            return http_error_h(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", url, h,
                                "%.20s is not allowed here (allowed: %s)", method, r->allow);
        }
        rq->route = r->route;
        rq->job = ids[0];
        rq->task = ids[1];
        rq->post = strcmp(m, "POST") == 0;
        if (r->route == HTTP_HEALTHZ)
            return MHD_YES;
        int level = auth_level(s, c);
        if (level < 0) {
            const char *h[] = {MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"hrm\"", NULL};
            return http_error_h(c, MHD_HTTP_UNAUTHORIZED, "unauthorized", url, h,
                                "a bearer token is required (Authorization: Bearer TOKEN; the "
                                "tokens are in the state folder's keys/http.token and "
                                "keys/http-ro.token)");
        }
        rq->reader = level > 0;
        if (rq->post && level > 0)
            return http_error(c, MHD_HTTP_FORBIDDEN, "forbidden", url,
                              "this token is read-only: %s needs the read-write token "
                              "(keys/http.token)", method);
        if (rq->post) {
            const char *cl =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
            if (cl && strtoull(cl, NULL, 10) > s->cfg.body_max)
                return http_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "too_big", url,
                                  "the body is %.20s bytes; the limit is %zu (hrm master "
                                  "--http-max-body)", cl, s->cfg.body_max);
            const char *ct =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
            if (r->route == HTTP_JOBS && (!ct || strncasecmp(ct, "application/json", 16) != 0))
                return http_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
                                  url, "Content-Type: expected application/json, got %.60s",
                                  ct ? ct : "none");
        }
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (!rq->too_big && rq->len + *upload_data_size <= s->cfg.body_max) {
            HRM_GROW(rq->body, rq->cap, rq->len + *upload_data_size + 1);
            memcpy(rq->body + rq->len, upload_data, *upload_data_size);
            rq->len += *upload_data_size;
        } else {
            rq->too_big = true; /* read and dropped: the answer is 413 */
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->too_big)
        return http_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "too_big", rq->path,
                          "the body is over the limit of %zu bytes (hrm master --http-max-body)",
                          s->cfg.body_max);
    if (rq->asset)
        return serve_asset(c, rq->asset);
    switch (rq->route) {
    case HTTP_HEALTHZ:
        return http_send(c, MHD_HTTP_OK, "application/json", "{\"ok\":true}", 11);
    case HTTP_METRICS:
    case HTTP_NODES:
    case HTTP_QUEUES:
        return from_snapshot(s, c, rq->route, rq->path);
    case HTTP_JOBS:
        return rq->post ? http_route_submit(s->bridge, c, rq) : from_snapshot(s, c, HTTP_JOBS,
                                                                               rq->path);
    default:
        return http_route_loop(s->bridge, &s->cfg, c, rq);
    }
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    hrm_log(HRM_LOG_INFO, "http: %s", line);
}

/* HOST:PORT: an IPv4 HOST ("localhost" is 127.0.0.1) or an IPv6 one in brackets ("[::1]:8080";
 * "[::]" takes IPv4 connections too).  host gets HOST without brackets. */
static int parse_addr(const char *addr, struct sockaddr_storage *sa, char *host, size_t hostlen,
                      struct hrm_error *err)
{
    const char *colon = strrchr(addr, ':');
    const char *h = addr, *h_end = colon;
    bool v6 = addr[0] == '[';
    if (v6) { /* [HOST]:PORT */
        const char *close = strchr(addr, ']');
        if (!close || close[1] != ':')
            return hrm_errorf(err, -EINVAL, "--http '%s': expected [IPV6]:PORT, like [::1]:8080",
                              addr);
        h = addr + 1, h_end = close, colon = close + 1;
    }
    if (!colon || h_end <= h || (size_t)(h_end - h) >= hostlen)
        return hrm_errorf(err, -EINVAL, "--http '%s': expected HOST:PORT, like 127.0.0.1:8080 "
                          "or [::1]:8080", addr);
    memcpy(host, h, (size_t)(h_end - h));
    host[h_end - h] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535)
        return hrm_errorf(err, -EINVAL, "--http '%s': the port must be 0..65535", addr);
    memset(sa, 0, sizeof(*sa));
    if (v6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
            return hrm_errorf(err, -EINVAL, "--http '%s': '%s' is not an IPv6 address", addr,
                              host);
        return 0;
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)port);
    if (strcmp(host, "localhost") == 0)
        snprintf(host, hostlen, "127.0.0.1");
    if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
        return hrm_errorf(err, -EINVAL, "--http '%s': '%s' is not an IPv4 address (an IPv6 one "
                          "goes in brackets: [::1]:8080)", addr, host);
    return 0;
}

struct http_server *http_server_new(const struct http_server_config *cfg, struct http_bridge *b,
                                    struct hrm_error *err)
{
    struct sockaddr_storage sa;
    char host[INET6_ADDRSTRLEN + 1];
    if (parse_addr(cfg->addr, &sa, host, sizeof(host), err) < 0)
        return NULL;
    unsigned int flags =
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    bool v6 = sa.ss_family == AF_INET6;
    if (v6) /* the any-address takes IPv4 connections too, as a server on 0.0.0.0 would */
        flags |= IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&sa)->sin6_addr)
                     ? MHD_USE_DUAL_STACK
                     : MHD_USE_IPv6;
    struct http_server *s = hrm_calloc(1, sizeof(*s));
    s->cfg = *cfg;
    s->bridge = b;
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, cfg->conn_limit, MHD_OPTION_CONNECTION_TIMEOUT,
        cfg->timeout_s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    if (!s->d) {
        if (!err)
            hrm_log(HRM_LOG_INFO, "http: %s is taken; another port", cfg->addr);
        hrm_errorf(err, -EADDRINUSE, "--http %s: cannot listen there (in use, or not an address "
                   "of this host)", cfg->addr);
        hrm_free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    if (v6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, host, sizeof(host));
    else
        inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, host, sizeof(host));
    snprintf(s->url, sizeof(s->url), v6 ? "http://[%s]:%u" : "http://%s:%u", host,
             info ? info->port : 0);
    return s;
}

void http_server_free(struct http_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->d);
    hrm_free(s);
}
