/* The cluster event log: what happened to jobs, tasks and nodes, kept in the store with a
 * sequence number (written in the turn's transaction, with the change it tells of), pruned to a
 * bound, and served a page at a time to `hrm events` (docs/runtime.md, "Event log"). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hrm/clock.h"
#include "hrm/log.h"
#include "master_private.h"

#define EVENTS_KEEP_DEFAULT 1000000
#define EVENTS_MAX_AGE_DEFAULT_US (7LL * 24 * 3600 * 1000000)
#define EVENTS_PAGE_MAX 10000     /* events in one reply at most */
#define EVENTS_PAGE_DEFAULT 1000
#define EVENTS_PRUNE_EVERY 4096   /* appends between two retention passes... */
#define EVENTS_PRUNE_PERIOD_US (60LL * 1000000) /* ...or this long, whichever comes first */

static void events_put(struct master *m, const char *kind, int64_t job, int32_t task,
                       int32_t node, const char *detail)
{
    struct hrm_store_event e = {.time_us = master_now_us(),
                                .kind = kind,
                                .job = job,
                                .task = task,
                                .node = node >= 0 && node < m->nnodes ? m->nodes[node].name : "",
                                .detail = detail};
    struct hrm_error err;
    int rc = hrm_store_append_event(m->store, &e, &err);
    if (rc < 0) {
        master_store_failed(m, rc, &err);
        return;
    }
    m->events_since_prune++;
}

void events_add(struct master *m, const char *kind, int64_t job, int32_t task, int32_t node,
                json_t *detail)
{
    char *text = detail ? json_dumps(detail, JSON_COMPACT) : NULL;
    json_decref(detail);
    events_put(m, kind, job, task, node, text ? text : "{}");
    free(text);
}

void events_task(struct master *m, const char *kind, const struct rjob *j, int32_t idx,
                 json_t *detail)
{
    const struct rtask *t = &j->tasks[idx];
    if (!detail) { /* the common case (a launch), without building a JSON object */
        char text[32];
        snprintf(text, sizeof(text), "{\"attempt\":%d}", t->attempt);
        events_put(m, kind, j->id, idx, t->node, text);
        return;
    }
    json_object_set_new(detail, "attempt", json_integer(t->attempt));
    events_add(m, kind, j->id, idx, t->node, detail);
}

void events_task_ended(struct master *m, const struct rjob *j, int32_t idx, bool ok)
{
    const struct rtask *t = &j->tasks[idx];
    if (!t->error) { /* every end: the text jansson would write, without building the object */
        char text[128];
        snprintf(text, sizeof(text), "{\"ok\":%s,\"exit\":%d,\"signal\":%d,\"oom\":%s,"
                 "\"attempt\":%d}", ok ? "true" : "false", t->exit, t->signal,
                 t->oom ? "true" : "false", t->attempt);
        events_put(m, "task_ended", j->id, idx, t->node, text);
        return;
    }
    json_t *ended = json_pack("{s:b, s:i, s:i, s:b}", "ok", ok, "exit", t->exit, "signal",
                              t->signal, "oom", t->oom);
    json_object_set_new(ended, "error", json_string(t->error)); /* none if not UTF-8 */
    events_task(m, "task_ended", j, idx, ended);
}

void events_task_retried(struct master *m, const struct rjob *j, int32_t idx, const char *reason)
{
    events_task(m, "task_retried", j, idx, json_pack("{s:s}", "reason", reason));
}

/* Retention: the latest cfg.events_keep events, none older than cfg.events_max_age_us.  Run in
 * the turn's transaction, now and then: a DELETE per append would cost the scheduling path. */
void events_housekeeping(struct master *m)
{
    int64_t now = hrm_mono_us();
    if (m->events_since_prune < EVENTS_PRUNE_EVERY &&
        now - m->events_pruned_mono_us < EVENTS_PRUNE_PERIOD_US)
        return;
    if (m->events_since_prune == 0) {
        m->events_pruned_mono_us = now;
        return;
    }
    struct hrm_error err;
    int rc = hrm_store_prune_events(m->store, m->cfg.events_keep,
                                    master_now_us() - m->cfg.events_max_age_us, &err);
    if (rc < 0) {
        master_store_failed(m, rc, &err);
        return;
    }
    m->events_since_prune = 0;
    m->events_pruned_mono_us = now;
}

void events_defaults(struct hrm_master_config *cfg)
{
    if (cfg->events_keep <= 0)
        cfg->events_keep = EVENTS_KEEP_DEFAULT;
    if (cfg->events_max_age_us <= 0)
        cfg->events_max_age_us = EVENTS_MAX_AGE_DEFAULT_US;
}

static int event_json(void *arg, const struct hrm_store_event *e)
{
    json_t *list = arg;
    json_error_t jerr;
    json_t *detail = json_loads(e->detail, 0, &jerr);
    if (!detail)
        detail = json_string(e->detail);
    json_array_append_new(list,
                          json_pack("{s:I, s:I, s:s, s:I, s:i, s:s, s:o}", "seq",
                                    (json_int_t)e->seq, "time_us", (json_int_t)e->time_us, "kind",
                                    e->kind, "job", (json_int_t)e->job, "task", e->task, "node",
                                    e->node, "detail", detail));
    return 0;
}

static long long req_of(const json_t *msg)
{
    return json_integer_value(json_object_get(msg, "req"));
}

/* The events after "since" (default 0: the oldest kept), at most "limit" (<= EVENTS_PAGE_MAX).
 * "next" is the "since" of the following request; "more" says whether it would return some now;
 * "last" is the latest sequence number given (a client starting at the end asks since=last). */
void on_events(struct master *m, const struct peer_id *from, json_t *msg)
{
    const json_t *s = json_object_get(msg, "since"), *l = json_object_get(msg, "limit");
    json_int_t since = s ? json_integer_value(s) : 0;
    json_int_t limit = l ? json_integer_value(l) : EVENTS_PAGE_DEFAULT;
    if (since < 0) {
        master_reply_error(m, from, HRM_WERR_BAD_FIELD, req_of(msg),
                           "since: %lld is negative (0: from the oldest event kept)",
                           (long long)since);
        return;
    }
    if (limit < 1 || limit > EVENTS_PAGE_MAX) {
        master_reply_error(m, from, limit > EVENTS_PAGE_MAX ? HRM_WERR_LIMIT : HRM_WERR_BAD_FIELD,
                           req_of(msg), "limit: %lld is out of range 1..%d", (long long)limit,
                           EVENTS_PAGE_MAX);
        return;
    }
    json_t *list = json_array();
    struct hrm_error err;
    /* One more than asked tells whether another page follows. */
    int n = hrm_store_read_events(m->store, since, (int32_t)limit + 1, event_json, list, &err);
    if (n < 0) {
        json_decref(list);
        hrm_log(HRM_LOG_ERR, "%s", err.text);
        master_reply_error(m, from, HRM_WERR_STORE, req_of(msg), "%s", err.text);
        return;
    }
    bool more = json_array_size(list) > (size_t)limit;
    if (more)
        json_array_remove(list, json_array_size(list) - 1);
    size_t got = json_array_size(list);
    json_int_t next = got ? json_integer_value(json_object_get(json_array_get(list, got - 1),
                                                               "seq"))
                          : since;
    json_t *r = hrm_wire_new(HRM_WIRE_EVENTS_LIST);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "events", list);
    json_object_set_new(r, "next", json_integer(next));
    json_object_set_new(r, "more", json_boolean(more));
    json_object_set_new(r, "last", json_integer(hrm_store_last_event_seq(m->store)));
    master_send(m, from, r);
}
