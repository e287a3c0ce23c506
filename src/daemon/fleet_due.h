/* When each simulated agent of a fleet is next due (its earliest timer): the earliest of them in O(1), one agent's change in O(log agents). */
#ifndef HRM_FLEET_DUE_H
#define HRM_FLEET_DUE_H

#include <stdint.h>

/*
 * A binary min-heap of the agents 0..n-1 keyed by their due time (microseconds, monotonic;
 * INT64_MAX: never), with each agent's place in it, so that the fleet's loop finds the agents
 * whose timers are due without looking at the others.
 */
struct fleet_due {
    int32_t n;
    int32_t *heap; /* agents, earliest due first */
    int32_t *pos;  /* agent -> its index in heap */
    int64_t *at;   /* agent -> its due time */
};

/* Agents 0..n-1, every one due at INT64_MAX. */
void fleet_due_init(struct fleet_due *d, int32_t n);
void fleet_due_fini(struct fleet_due *d);
/* Agent i is next due at t (earlier or later than before). */
void fleet_due_set(struct fleet_due *d, int32_t i, int64_t t);
/* The earliest due time (INT64_MAX: none), and its agent (-1 when there are no agents). */
int64_t fleet_due_first(const struct fleet_due *d, int32_t *agent);

#endif
