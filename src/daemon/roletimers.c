/* The timers a daemon keeps for the roles it drives: a small array, scanned (a handful are armed at a time). */
#include "roletimers.h"

#include "hrm/alloc.h"

void role_timers_add(struct role_timers *ts, int64_t at_us, int32_t role, uint64_t cookie)
{
    HRM_GROW(ts->t, ts->cap, ts->n + 1);
    ts->t[ts->n++] = (struct role_timer){at_us, role, cookie};
}

int64_t role_timers_next(const struct role_timers *ts)
{
    int64_t best = INT64_MAX;
    for (size_t i = 0; i < ts->n; i++)
        if (ts->t[i].at_us < best)
            best = ts->t[i].at_us;
    return best;
}

size_t role_timers_take_due(struct role_timers *ts, int64_t now, struct role_timer *due,
                            size_t max)
{
    size_t ndue = 0, w = 0;
    for (size_t i = 0; i < ts->n; i++) {
        if (ts->t[i].at_us <= now && ndue < max)
            due[ndue++] = ts->t[i];
        else
            ts->t[w++] = ts->t[i];
    }
    ts->n = w;
    return ndue;
}

void role_timers_clear(struct role_timers *ts)
{
    ts->n = 0;
}

void role_timers_free(struct role_timers *ts)
{
    hrm_free(ts->t);
    *ts = (struct role_timers){0};
}
