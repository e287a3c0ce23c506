/* The simulator's event queue: a radix heap on virtual time, first-in first-out among equal times. */
#ifndef HRM_SIM_HEAP_H
#define HRM_SIM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "hrm/env.h"

enum sim_event_kind {
    EV_DELIVER,     /* msg to addr */
    EV_TIMER,       /* cookie to addr */
    EV_ARRIVAL,     /* the client submits job a */
    EV_EXEC_END,    /* task a, attempt b finishes computing on its node (fail if c) */
    EV_NET,         /* network completion check, generation in cookie */
    EV_SAMPLE,      /* utilisation sample */
    EV_NODE_FAIL,   /* node a goes down */
    EV_NODE_RECOVER, /* node a comes back */
    EV_COMPRESS,     /* execution model step (compress.c), generation in cookie */
    EV_GPUPHASE      /* GPU phase model step (gpuphase.c), generation in cookie */
};

struct sim_event {
    int64_t t;
    uint32_t kind;
    hrm_addr addr;
    union {
        struct hrm_msg msg;
        uint64_t cookie;
        struct {
            int32_t a, b, c;
        } arg;
    } u;
};

struct sim_heap_bucket {
    struct sim_event *items;
    size_t head, n, cap; /* only bucket 0 pops from head */
};

#define SIM_HEAP_BUCKETS 65

/*
 * A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan): item t sits in bucket
 * bitlength(t XOR last), where last is the time of the latest pop.  Pushes
 * must not go back in time (t >= last), which a simulator guarantees.  Items
 * only ever move to lower buckets, in order, so equal times leave in the
 * order they were pushed: the stable tie-break the simulator's determinism
 * rests on, with no sequence number.  Events are stored in the buckets
 * themselves: an event moves a few times, sequentially, which costs less than
 * the cache miss of fetching it from a side table when it is popped.
 */
struct sim_heap {
    struct sim_heap_bucket b[SIM_HEAP_BUCKETS];
    int64_t last;
    size_t n;
};

/* ev->t must be >= the time of the last popped event. */
void sim_heap_push(struct sim_heap *h, const struct sim_event *ev);
/* Removes the earliest event (the first pushed among equal times) into *out;
 * the heap must not be empty. */
void sim_heap_pop(struct sim_heap *h, struct sim_event *out);
void sim_heap_fini(struct sim_heap *h);

#endif
