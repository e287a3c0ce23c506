/* P0 waiting table of a resource unit and the `simulaterun` wait estimate (their Alg. 1). */
#ifndef HRM_WAITSIM_H
#define HRM_WAITSIM_H

#include <stddef.h>
#include <stdint.h>

#include "hrm/error.h"

enum hrm_wait_status {
    HRM_WAIT_RUNNING, /* holds its resources; time_us is what is left of its run */
    HRM_WAIT_QUEUED   /* waits in the unit's queue; time_us is its estimated run time */
};

/* One row RT(queueId, TaskId, Time, vCore, GPU, GMem, status) of a unit's
 * waiting table. */
struct hrm_wait_row {
    int32_t queue; /* the unit's queue it sits in (the caller's numbering) */
    int32_t task;
    int64_t time_us;
    int64_t vcore;  /* milli-cores */
    int32_t gpu;    /* 1 if it uses the unit's GPU, else 0 */
    int64_t gmem;   /* bytes of GPU memory on the unit's GPU */
    int32_t milli;  /* thousandths of the GPU it gives as its share, 0 = none (hrm_ru_fits_share) */
    uint8_t status; /* enum hrm_wait_status */
};

/* What the unit offers a simulation: cores and GPU memory, and how many GPU
 * tasks may stack (0 = GPU memory alone decides, as hrm_ru_fits). */
struct hrm_wait_cap {
    int64_t vcore;
    int64_t gmem;
    int32_t max_stack;
};

/* A unit's table: running rows first, then queued rows in the order they
 * will be served.  Grown with hrm_realloc; hrm_wait_table_fini frees it. */
struct hrm_wait_table {
    struct hrm_wait_row *rows;
    size_t n, cap;
};

void hrm_wait_table_push(struct hrm_wait_table *t, const struct hrm_wait_row *row);
void hrm_wait_table_fini(struct hrm_wait_table *t);

/*
 * simulaterun: the time until `task` could start if it joined the unit's
 * queue now.  The simulation starts from the running rows holding their
 * resources; at each instant the queue's head starts while it fits (cores,
 * GPU memory, stack count, GPU shares), in table order (first in, first out: a blocked
 * head blocks the rows behind it, as the node's queue does); otherwise the
 * clock jumps to the next end of a running row, which releases its
 * resources.  The task is served after every queued row.  *wait_us gets the
 * instant it starts (0 when it fits at once behind an empty queue).
 * Returns 0, or -HRM_ENOFIT (with *wait_us = INT64_MAX) when some row or the
 * task can never fit the unit's capacity.  rows are borrowed; O(n^2) for n
 * rows, which is fine for the tens of rows a unit queues.
 */
int hrm_waitsim_run(const struct hrm_wait_cap *cap, const struct hrm_wait_row *rows, size_t n,
                    const struct hrm_wait_row *task, int64_t *wait_us);

#endif
