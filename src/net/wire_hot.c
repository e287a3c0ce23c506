/* The agents' task_started and task_end messages and batches read from their text in one pass, declining anything unusual to the generic decoder. */
#include <stdint.h>
#include <string.h>

#include "hrm/wire.h"
#include "hrm/wire_hot.h"
#include "wire_scan.h"

/*
 * The fields the two messages may carry, and each one's kind as the schema of wire.h says
 * (tests/unit/test_onehost6_hot.c compares every verdict with the generic decoder's):
 *   i  integer >= 0     u  integer 0 .. INT32_MAX     z  any integer     b  boolean
 * "v" of an item is not checked by the generic decoder (only the frame's): any integer.
 */
enum hot_field {
    F_V, F_TYPE, F_JOB, F_TASK, F_ATTEMPT, F_PID, F_STATUS, F_EXIT, F_SIGNAL, F_OOM,
    F_START_US, F_END_US, F_CPU_US, F_RSS, F_COUNT
};

static const struct scan_field fields[F_COUNT] = {
    [F_V] = {"v", 'z'},           [F_TYPE] = {"type", 's'},       [F_JOB] = {"job", 'i'},
    [F_TASK] = {"task", 'u'},     [F_ATTEMPT] = {"attempt", 'u'}, [F_PID] = {"pid", 'u'},
    [F_STATUS] = {"status", 'u'}, [F_EXIT] = {"exit", 'z'},       [F_SIGNAL] = {"signal", 'u'},
    [F_OOM] = {"oom", 'b'},       [F_START_US] = {"start_us", 'i'}, [F_END_US] = {"end_us", 'i'},
    [F_CPU_US] = {"cpu_us", 'i'}, [F_RSS] = {"rss", 'i'},
};

#define BIT(f) (1u << (f))
#define COMMON (BIT(F_V) | BIT(F_TYPE) | BIT(F_JOB) | BIT(F_TASK) | BIT(F_ATTEMPT))
/* task_started: "job:i task:u attempt:u pid:u start_us:i"; task_end: "job:i task:u attempt:u
 * status:u exit:z? signal:u? oom:b? start_us:i? end_us:i? cpu_us:i? rss:i? error:s?" (an
 * error text, written by the agent with escapes of its own choosing, is left to jansson). */
#define STARTED_ALLOWED (COMMON | BIT(F_PID) | BIT(F_START_US))
#define STARTED_NEEDED (STARTED_ALLOWED & ~BIT(F_V))
#define END_ALLOWED                                                                            \
    (COMMON | BIT(F_STATUS) | BIT(F_EXIT) | BIT(F_SIGNAL) | BIT(F_OOM) | BIT(F_START_US) |     \
     BIT(F_END_US) | BIT(F_CPU_US) | BIT(F_RSS))
#define END_NEEDED (BIT(F_TYPE) | BIT(F_JOB) | BIT(F_TASK) | BIT(F_ATTEMPT) | BIT(F_STATUS))

/* One item: an object of known fields, each once, of its kind, then the type's own rules.
 * alone: the whole frame, whose "v" the generic decoder checks (a batch's items' it does not). */
static bool item(struct scan *c, struct hrm_hot_msg *m, bool alone)
{
    *m = (struct hrm_hot_msg){0};
    int64_t val[F_COUNT] = {0};
    unsigned seen = 0;
    const char *type = NULL;
    size_t type_len = 0;
    if (!scan_eat(c, '{'))
        return false;
    if (scan_eat(c, '}'))
        return false; /* no type */
    do {
        int f = scan_key(c, fields, F_COUNT, &seen);
        if (f < 0)
            return false; /* a field of another message, or a duplicate: jansson judges */
        if (f == F_TYPE) {
            if (!scan_plain_string(c, &type, &type_len))
                return false;
        } else if (fields[f].kind == 'b') {
            if (!scan_boolean(c, &m->oom))
                return false;
        } else if (!scan_integer(c, &val[f]) || !scan_in_kind(fields[f].kind, val[f])) {
            return false;
        }
    } while (scan_eat(c, ','));
    if (!scan_eat(c, '}') || !type)
        return false;
    static const struct scan_type types[] = {
        {"task_started", HRM_WIRE_TASK_STARTED, STARTED_ALLOWED, STARTED_NEEDED},
        {"task_end", HRM_WIRE_TASK_END, END_ALLOWED, END_NEEDED}};
    const struct scan_type *t =
        scan_type_check(types, 2, type, type_len, seen, alone, seen & BIT(F_V), val[F_V]);
    if (!t)
        return false;
    m->type = t->type;
    m->job = val[F_JOB];
    m->task = val[F_TASK];
    m->attempt = val[F_ATTEMPT];
    m->pid = val[F_PID];
    m->status = val[F_STATUS];
    m->exit = val[F_EXIT];
    m->signal = val[F_SIGNAL];
    m->start_us = val[F_START_US];
    m->end_us = val[F_END_US];
    m->cpu_us = val[F_CPU_US];
    m->rss = val[F_RSS];
    m->has_start = seen & BIT(F_START_US);
    m->has_end = seen & BIT(F_END_US);
    return true;
}

/* Where a batch's items go. */
struct hot_out {
    struct hrm_hot_msg *out;
    size_t cap, *n;
};

static bool batch_item(struct scan *c, void *ctx)
{
    struct hot_out *o = ctx;
    if (*o->n >= o->cap || !item(c, &o->out[*o->n], false))
        return false;
    ++*o->n;
    return true;
}

int hrm_wire_read_hot(const char *buf, size_t len, struct hrm_hot_msg *out, size_t cap, size_t *n)
{
    *n = 0;
    if (!buf || len > HRM_WIRE_MAX_BYTES || cap == 0)
        return 0;
    struct scan c = {buf, buf + len};
    bool ok = scan_batch(&c, batch_item, &(struct hot_out){out, cap, n});
    if (!ok) { /* an agent sends a turn's only message alone */
        c = (struct scan){buf, buf + len};
        *n = 0;
        ok = item(&c, &out[0], true);
        *n = ok;
    }
    if (ok) {
        scan_ws(&c);
        if (c.p == c.end)
            return 1;
    }
    *n = 0;
    return 0;
}
