/* The timers a daemon keeps for the sans-IO roles it drives: when, which role, the role's cookie. */
#ifndef HRM_ROLETIMERS_H
#define HRM_ROLETIMERS_H

#include <stddef.h>
#include <stdint.h>

struct role_timer {
    int64_t at_us;
    int32_t role; /* the driver's index of the role that armed it */
    uint64_t cookie;
};

struct role_timers {
    struct role_timer *t;
    size_t n, cap;
};

void role_timers_add(struct role_timers *ts, int64_t at_us, int32_t role, uint64_t cookie);
int64_t role_timers_next(const struct role_timers *ts); /* the earliest, or INT64_MAX */
/* Takes out up to max timers due at now, in the order they were armed.  The
 * callbacks they fire arm new ones, which wait for the next call (one turn of
 * a loop fires what was due when it began). */
size_t role_timers_take_due(struct role_timers *ts, int64_t now, struct role_timer *due,
                            size_t max);
void role_timers_clear(struct role_timers *ts);
void role_timers_free(struct role_timers *ts);

#endif
