/* The HTTP API's routes answered by the master's loop: submit, cancel, a job with a page of its
 * tasks, a task's output (ranged, streamed in chunks from its node), the event log (JSON pages
 * and server-sent events).  Each builds the wire request hrm's own commands send, so checks,
 * limits and error text are the same. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/wire.h"
#include "master_http_private.h"

#define SSE_KEEPALIVE_US 15000000
#define SSE_PAGE 1000

/* ---- replies ---- */

static const char *reply_type(const json_t *r)
{
    return json_string_value(json_object_get(r, "type"));
}

static bool is_error(const json_t *r)
{
    const char *t = reply_type(r);
    return !t || strcmp(t, "error") == 0;
}

/* The status of a wire error code. */
static unsigned status_of(const char *code)
{
    static const struct {
        const char *code;
        unsigned status;
    } map[] = {
        {"bad_json", MHD_HTTP_BAD_REQUEST},       {"bad_field", MHD_HTTP_BAD_REQUEST},
        {"bad_spec", MHD_HTTP_BAD_REQUEST},       {"limit", MHD_HTTP_BAD_REQUEST},
        {"too_big", MHD_HTTP_CONTENT_TOO_LARGE},  {"forbidden", MHD_HTTP_FORBIDDEN},
        {"not_found", MHD_HTTP_NOT_FOUND},        {"unavailable", MHD_HTTP_SERVICE_UNAVAILABLE},
        {"store", MHD_HTTP_SERVICE_UNAVAILABLE},
    };
    for (size_t i = 0; code && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(code, map[i].code) == 0)
            return map[i].status;
    return MHD_HTTP_INTERNAL_SERVER_ERROR;
}

/* The loop's error reply (or its silence) as the API's error; takes r. */
static enum MHD_Result send_reply_error(struct MHD_Connection *c, const char *path, json_t *r)
{
    if (!r)
        return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable", path,
                          "the master did not answer in time (busy or stopping)");
    const char *code = json_string_value(json_object_get(r, "code"));
    enum MHD_Result ret =
        http_error(c, status_of(code), code ? code : "internal", path, "%s",
                   json_string_value(json_object_get(r, "message")) ?: "unexpected answer");
    json_decref(r);
    return ret;
}

/* Sends the request and returns the reply of the expected type, or NULL after answering the
 * error. */
static json_t *call(struct http_bridge *b, struct MHD_Connection *c, const struct http_request *rq,
                    json_t *req, const char *want, enum MHD_Result *ret)
{
    const char *path = rq->path;
    json_t *r = http_bridge_call(b, req, rq->reader, HTTP_CALL_TIMEOUT_US);
    if (!r || is_error(r) || strcmp(reply_type(r), want) != 0) {
        *ret = send_reply_error(c, path, r);
        return NULL;
    }
    return r;
}

static json_t *request(int type)
{
    return hrm_wire_new(type);
}

/* ---- POST /api/v1/jobs ---- */

enum MHD_Result http_route_submit(struct http_bridge *b, struct MHD_Connection *c,
                                  struct http_request *rq)
{
    json_error_t jerr;
    json_t *job = rq->len ? json_loadb(rq->body, rq->len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (!rq->len)
        return http_error(c, MHD_HTTP_BAD_REQUEST, "bad_json", rq->path,
                          "the body is empty: expected a job description (JSON)");
    if (!job)
        return http_error(c, MHD_HTTP_BAD_REQUEST, "bad_json", rq->path,
                          "the body is not JSON: line %d column %d: %s", jerr.line, jerr.column,
                          jerr.text);
    if (!json_is_object(job)) {
        json_decref(job);
        return http_error(c, MHD_HTTP_BAD_REQUEST, "bad_spec", rq->path,
                          "the body must be a JSON object (a job description)");
    }
    json_t *req = request(HRM_WIRE_SUBMIT);
    json_object_set_new(req, "job", job);
    const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
    if (key)
        json_object_set_new(req, "key", json_string(key));
    enum MHD_Result ret;
    json_t *r = call(b, c, rq, req, "submitted", &ret);
    if (!r)
        return ret;
    json_int_t id = json_integer_value(json_object_get(r, "id"));
    json_decref(r);
    char loc[64], body[64];
    snprintf(loc, sizeof(loc), "/api/v1/jobs/%lld", (long long)id);
    int n = snprintf(body, sizeof(body), "{\"id\":%lld}", (long long)id);
    struct MHD_Response *resp = MHD_create_response_from_buffer((size_t)n, body,
                                                                MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, loc);
    ret = MHD_queue_response(c, MHD_HTTP_CREATED, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* ---- GET /api/v1/jobs/{id}, POST .../cancel ---- */

static enum MHD_Result bad_query(struct MHD_Connection *c, const char *path, const char *name,
                                 int64_t lo, int64_t hi)
{
    return http_error(c, MHD_HTTP_BAD_REQUEST, "bad_field", path,
                      "%s: expected an integer in %lld..%lld", name, (long long)lo,
                      (long long)hi);
}

/* Copies integer query arguments into req; -1 after answering a bad one. */
static int query_ints(struct MHD_Connection *c, const char *path, json_t *req,
                      const char *const *names, const int64_t *lo, const int64_t *hi,
                      enum MHD_Result *ret)
{
    for (size_t i = 0; names[i]; i++) {
        int64_t v;
        int rc = http_query_int(c, names[i], lo[i], hi[i], &v);
        if (rc < 0) {
            json_decref(req);
            *ret = bad_query(c, path, names[i], lo[i], hi[i]);
            return -1;
        }
        if (rc > 0)
            json_object_set_new(req, names[i], json_integer(v));
    }
    return 0;
}

static enum MHD_Result get_job(struct http_bridge *b, struct MHD_Connection *c,
                               struct http_request *rq)
{
    json_t *req = request(HRM_WIRE_JOB);
    json_object_set_new(req, "id", json_integer(rq->job));
    static const char *const names[] = {"from", "limit", NULL};
    static const int64_t lo[] = {0, 1}, hi[] = {INT32_MAX, 2000};
    enum MHD_Result ret;
    if (query_ints(c, rq->path, req, names, lo, hi, &ret) < 0)
        return ret;
    const char *state = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
    if (state)
        json_object_set_new(req, "state", json_string(state));
    json_t *r = call(b, c, rq, req, "job_info", &ret);
    if (!r)
        return ret;
    ret = http_send_json(c, MHD_HTTP_OK, json_incref(json_object_get(r, "job")));
    json_decref(r);
    return ret;
}

static enum MHD_Result cancel_job(struct http_bridge *b, struct MHD_Connection *c,
                                  struct http_request *rq)
{
    json_t *req = request(HRM_WIRE_CANCEL);
    json_object_set_new(req, "id", json_integer(rq->job));
    enum MHD_Result ret;
    json_t *r = call(b, c, rq, req, "cancelled", &ret);
    if (!r)
        return ret;
    ret = http_send_json(c, MHD_HTTP_OK,
                         json_pack("{s:O, s:O}", "id", json_object_get(r, "id"), "state",
                                   json_object_get(r, "state")));
    json_decref(r);
    return ret;
}

/* ---- GET /api/v1/events ---- */

static json_t *events_req(int64_t since, int64_t limit)
{
    json_t *req = request(HRM_WIRE_EVENTS);
    json_object_set_new(req, "since", json_integer(since));
    json_object_set_new(req, "limit", json_integer(limit));
    return req;
}

struct sse {
    struct http_bridge *b;
    int64_t since, last; /* the next page starts after since; last: the log's end known */
    char *out;           /* what is formatted and not yet sent */
    size_t len, pos;
};

/* Formats a page of events as SSE messages; false when the page says nothing new. */
static bool sse_format(struct sse *s, json_t *page)
{
    json_t *events = json_object_get(page, "events");
    s->last = json_integer_value(json_object_get(page, "last"));
    if (json_array_size(events) == 0)
        return false;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e)
    {
        char *text = json_dumps(e, JSON_COMPACT);
        fprintf(f, "id: %lld\nevent: %s\ndata: %s\n\n",
                (long long)json_integer_value(json_object_get(e, "seq")),
                json_string_value(json_object_get(e, "kind")), text ? text : "{}");
        free(text);
    }
    fclose(f);
    free(s->out);
    s->out = buf;
    s->len = size;
    s->pos = 0;
    s->since = json_integer_value(json_object_get(page, "next"));
    return true;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct sse *s = cls;
    while (s->pos == s->len) {
        json_t *page = http_bridge_call(s->b, events_req(s->since, SSE_PAGE), false,
                                        HTTP_CALL_TIMEOUT_US);
        if (!page || is_error(page)) {
            json_decref(page);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        bool some = sse_format(s, page);
        json_decref(page);
        if (some)
            break;
        int64_t now = http_bridge_wait_events(s->b, s->last, SSE_KEEPALIVE_US);
        if (now < 0)
            return MHD_CONTENT_READER_END_OF_STREAM; /* the master stops */
        if (now == s->last) {
            /* A comment: keeps proxies from closing an idle stream, and finds a closed client. */
            free(s->out);
            s->out = hrm_strdup(": keepalive\n\n");
            s->len = strlen(s->out);
            s->pos = 0;
        }
    }
    size_t n = s->len - s->pos < max ? s->len - s->pos : max;
    memcpy(buf, s->out + s->pos, n);
    s->pos += n;
    return (ssize_t)n;
}

static void sse_free(void *cls)
{
    struct sse *s = cls;
    http_bridge_streams(s->b, -1);
    free(s->out);
    hrm_free(s);
}

static bool wants_sse(struct MHD_Connection *c)
{
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return a && strstr(a, "text/event-stream");
}

static enum MHD_Result get_events(struct http_bridge *b, struct MHD_Connection *c,
                                  struct http_request *rq)
{
    int64_t since = -1, limit = 1000;
    if (http_query_int(c, "since", 0, INT64_MAX, &since) < 0)
        return bad_query(c, rq->path, "since", 0, INT64_MAX);
    if (http_query_int(c, "limit", 1, 10000, &limit) < 0)
        return bad_query(c, rq->path, "limit", 1, 10000);
    enum MHD_Result ret;
    if (!wants_sse(c)) {
        json_t *r = call(b, c, rq, events_req(since < 0 ? 0 : since, limit), "events_list",
                         &ret);
        if (!r)
            return ret;
        json_object_del(r, "type");
        json_object_del(r, "v");
        json_object_del(r, "req");
        return http_send_json(c, MHD_HTTP_OK, r);
    }
    /* A stream starts after Last-Event-ID (a reconnection), after since, or at the end. */
    const char *lei = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    if (lei && *lei) {
        char *end;
        long long v = strtoll(lei, &end, 10);
        if (*end || v < 0)
            return http_error(c, MHD_HTTP_BAD_REQUEST, "bad_field", rq->path,
                              "Last-Event-ID: expected an event's id, got '%.40s'", lei);
        since = v;
    }
    json_t *first = call(b, c, rq, events_req(since < 0 ? 0 : since, 1), "events_list",
                         &ret);
    if (!first)
        return ret;
    struct sse *s = hrm_calloc(1, sizeof(*s));
    s->b = b;
    s->since = since < 0 ? json_integer_value(json_object_get(first, "last")) : since;
    json_decref(first);
    http_bridge_streams(b, +1);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_read, s, sse_free);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* ---- GET /api/v1/jobs/{id}/tasks/{t}/log ---- */

struct log_stream {
    struct http_bridge *b;
    bool reader;      /* with the read-only token */
    int64_t job, task;
    char stream[4];   /* "out" or "err" */
    int64_t next;     /* the offset to read next */
    int64_t end;      /* exclusive; -1: up to the end of the output as it is then */
    bool eof;         /* the latest chunk reached the end */
    unsigned char *buf;
    size_t len, pos;
};

static json_t *log_req(const struct log_stream *ls, int64_t offset, int64_t max)
{
    json_t *req = request(HRM_WIRE_LOGS);
    json_object_set_new(req, "id", json_integer(ls->job));
    json_object_set_new(req, "task", json_integer(ls->task));
    json_object_set_new(req, "stream", json_string(ls->stream));
    json_object_set_new(req, "offset", json_integer(offset));
    json_object_set_new(req, "max", json_integer(max));
    return req;
}

/* Reads the chunk at ls->next into ls->buf.  0; or -1 with the reply (the caller's to answer
 * or drop) in *bad. */
static int log_fetch(struct log_stream *ls, int64_t max, json_t **bad, int64_t *size)
{
    json_t *r =
        http_bridge_call(ls->b, log_req(ls, ls->next, max), ls->reader, HTTP_CALL_TIMEOUT_US);
    const json_t *chunk = r ? json_object_get(r, "chunk") : NULL;
    if (!r || is_error(r) || !json_is_string(chunk)) {
        *bad = r;
        return -1;
    }
    const char *b64 = json_string_value(chunk);
    size_t blen = strlen(b64), got = 0;
    hrm_free(ls->buf);
    ls->buf = hrm_alloc(blen / 4 * 3 + 3);
    if (sodium_base642bin(ls->buf, blen / 4 * 3 + 3, b64, blen, NULL, &got, NULL,
                          sodium_base64_VARIANT_ORIGINAL) != 0) {
        *bad = r;
        return -1;
    }
    ls->len = got;
    ls->pos = 0;
    ls->next = json_integer_value(json_object_get(r, "next"));
    ls->eof = json_is_true(json_object_get(r, "eof"));
    if (size)
        *size = json_integer_value(json_object_get(r, "size"));
    json_decref(r);
    return 0;
}

static ssize_t log_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct log_stream *ls = cls;
    if (ls->pos == ls->len) {
        if (ls->eof || (ls->end >= 0 && ls->next >= ls->end))
            return MHD_CONTENT_READER_END_OF_STREAM;
        int64_t want = ls->end >= 0 ? ls->end - ls->next : HRM_LOGS_CHUNK_MAX;
        json_t *bad = NULL;
        if (log_fetch(ls, want < HRM_LOGS_CHUNK_MAX ? want : HRM_LOGS_CHUNK_MAX, &bad, NULL) < 0) {
            json_decref(bad);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        if (ls->len == 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
    }
    size_t n = ls->len - ls->pos < max ? ls->len - ls->pos : max;
    memcpy(buf, ls->buf + ls->pos, n);
    ls->pos += n;
    return (ssize_t)n;
}

static void log_free(void *cls)
{
    struct log_stream *ls = cls;
    hrm_free(ls->buf);
    hrm_free(ls);
}

/* Why a first read failed, as the API's error (takes r). */
static enum MHD_Result log_error(struct MHD_Connection *c, const struct http_request *rq,
                                 json_t *r)
{
    if (!r || is_error(r))
        return send_reply_error(c, rq->path, r);
    enum MHD_Result ret;
    const char *why = json_string_value(json_object_get(r, "error"));
    const char *state = json_string_value(json_object_get(r, "state")) ?: "?";
    if (json_object_get(r, "started") && !json_is_true(json_object_get(r, "started")))
        ret = http_error(c, MHD_HTTP_NOT_FOUND, "not_started", rq->path,
                         "task %lld.%lld has not started (%s)", (long long)rq->job,
                         (long long)rq->task, state);
    else if (why && (strstr(why, "did not answer") || strstr(why, "is down")))
        ret = http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable", rq->path, "%s", why);
    else
        ret = http_error(c, MHD_HTTP_NOT_FOUND, "not_found", rq->path, "%s",
                         why ? why : "no output");
    json_decref(r);
    return ret;
}

/* Range: bytes=A-B, bytes=A- or bytes=-N; -1 when it is none of them. */
static int parse_range(const char *h, int64_t *a, int64_t *b, int64_t *suffix)
{
    *a = *b = *suffix = -1;
    if (strncmp(h, "bytes=", 6) != 0)
        return -1;
    const char *p = h + 6;
    char *end;
    if (*p == '-') {
        *suffix = strtoll(p + 1, &end, 10);
        return *end || *suffix <= 0 ? -1 : 0;
    }
    *a = strtoll(p, &end, 10);
    if (end == p || *end != '-' || *a < 0)
        return -1;
    p = end + 1;
    if (!*p)
        return 0;
    *b = strtoll(p, &end, 10);
    return *end || *b < *a ? -1 : 0;
}

static enum MHD_Result get_log(struct http_bridge *b, struct MHD_Connection *c,
                               struct http_request *rq)
{
    const char *stream = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "stream");
    if (stream && strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0)
        return http_error(c, MHD_HTTP_BAD_REQUEST, "bad_field", rq->path,
                          "stream: expected stdout or stderr, got '%.40s'", stream);
    int64_t offset = 0, length = -1, a = -1, z = -1, suffix = -1; /* parse_range sets them */
    if (http_query_int(c, "offset", 0, INT64_MAX / 2, &offset) < 0)
        return bad_query(c, rq->path, "offset", 0, INT64_MAX / 2);
    if (http_query_int(c, "length", 1, INT64_MAX / 2, &length) < 0)
        return bad_query(c, rq->path, "length", 1, INT64_MAX / 2);
    const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
    if (range && parse_range(range, &a, &z, &suffix) < 0)
        return http_error(c, MHD_HTTP_RANGE_NOT_SATISFIABLE, "bad_range", rq->path,
                          "Range: expected bytes=A-B, bytes=A- or bytes=-N, got '%.60s'", range);
    struct log_stream *ls = hrm_calloc(1, sizeof(*ls));
    ls->b = b;
    ls->reader = rq->reader;
    ls->job = rq->job;
    ls->task = rq->task;
    snprintf(ls->stream, sizeof(ls->stream), "%s", stream && strcmp(stream, "stderr") == 0
                                                       ? "err" : "out");
    ls->next = range ? (suffix > 0 ? 0 : a) : offset;
    ls->end = -1;
    int64_t size = 0;
    json_t *bad = NULL;
    if (log_fetch(ls, range && suffix > 0 ? 1 : HRM_LOGS_CHUNK_MAX, &bad, &size) < 0) {
        log_free(ls);
        return log_error(c, rq, bad);
    }
    if (range && suffix > 0) { /* the last N bytes: now that the size is known */
        ls->next = suffix < size ? size - suffix : 0;
        ls->len = ls->pos = 0;
        ls->eof = false;
        a = ls->next;
    }
    int64_t start = range ? a : offset;
    if (range && start >= size && !(start == 0 && size == 0)) {
        log_free(ls);
        char cr[64];
        snprintf(cr, sizeof(cr), "bytes */%lld", (long long)size);
        const char *h[] = {MHD_HTTP_HEADER_CONTENT_RANGE, cr, NULL};
        return http_error_h(c, MHD_HTTP_RANGE_NOT_SATISFIABLE, "bad_range", rq->path, h,
                            "the output has %lld bytes", (long long)size);
    }
    uint64_t total = MHD_SIZE_UNKNOWN;
    if (range || length > 0) {
        int64_t stop = range ? (z >= 0 && z + 1 < size ? z + 1 : size)
                             : (start + length < size ? start + length : size);
        if (stop < start)
            stop = start;
        ls->end = stop;
        total = (uint64_t)(stop - start);
        if (ls->len > total) /* the first chunk holds more than asked */
            ls->len = (size_t)total;
    }
    struct MHD_Response *resp = MHD_create_response_from_callback(total, 65536, log_read, ls,
                                                                  log_free);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
    char sz[32];
    snprintf(sz, sizeof(sz), "%lld", (long long)size);
    MHD_add_response_header(resp, "X-Output-Size", sz);
    unsigned status = MHD_HTTP_OK;
    if (range) {
        char cr[96];
        if (total == 0)
            snprintf(cr, sizeof(cr), "bytes */%lld", (long long)size);
        else
            snprintf(cr, sizeof(cr), "bytes %lld-%lld/%lld", (long long)start,
                     (long long)(start + (int64_t)total - 1), (long long)size);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
        status = MHD_HTTP_PARTIAL_CONTENT;
    }
    enum MHD_Result ret = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result http_route_loop(struct http_bridge *b, const struct http_server_config *cfg,
                                struct MHD_Connection *c, struct http_request *rq)
{
    (void)cfg;
    switch (rq->route) {
    case HTTP_JOB:
        return get_job(b, c, rq);
    case HTTP_CANCEL:
        return cancel_job(b, c, rq);
    case HTTP_EVENTS:
        return get_events(b, c, rq);
    case HTTP_LOG:
        return get_log(b, c, rq);
    default:
        return http_error(c, MHD_HTTP_NOT_FOUND, "not_found", rq->path, "no such route");
    }
}
