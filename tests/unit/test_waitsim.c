/* P0 `simulaterun`: the wait estimate of a resource unit's queue, on worked examples. */
#include <criterion/criterion.h>

#include "fixture.h"
#include "hrm/waitsim.h"

#define SEC 1000000ll

static struct hrm_wait_row row(int32_t task, uint8_t status, int64_t time_us, int64_t vcore,
                               int gpu, int64_t gmem)
{
    return (struct hrm_wait_row){.task = task,
                                 .status = status,
                                 .time_us = time_us,
                                 .vcore = vcore,
                                 .gpu = gpu,
                                 .gmem = gmem};
}

/*
 * A GPU unit of 4 cores and 10 GiB.  Running: A (2 cores, 4 GiB, 30 s left)
 * and B (1 core, 3 GiB, 10 s left).  Queued: C (2 cores, 5 GiB, runs 20 s).
 * New: D (1 core, 4 GiB).
 *   t = 0:  free 1 core, 3 GiB; C does not fit and D waits behind it.
 *   t = 10: B ends: free 2 cores, 6 GiB; C starts (ends at 30): free 0, 1 GiB.
 *   t = 30: A and C end: free 4 cores, 10 GiB; D starts.   -> wait 30 s.
 */
Test(waitsim, worked_queue)
{
    struct hrm_wait_table t = {0};
    struct hrm_wait_row r[] = {row(0, HRM_WAIT_RUNNING, 30 * SEC, 2000, 1, 4 * GIB),
                               row(1, HRM_WAIT_RUNNING, 10 * SEC, 1000, 1, 3 * GIB),
                               row(2, HRM_WAIT_QUEUED, 20 * SEC, 2000, 1, 5 * GIB)};
    for (size_t i = 0; i < 3; i++)
        hrm_wait_table_push(&t, &r[i]);
    struct hrm_wait_cap cap = {.vcore = 4000, .gmem = 10 * GIB};
    struct hrm_wait_row d = row(3, HRM_WAIT_QUEUED, 5 * SEC, 1000, 1, 4 * GIB);
    int64_t wait = -1;
    cr_assert_eq(hrm_waitsim_run(&cap, t.rows, t.n, &d, &wait), 0);
    cr_assert_eq(wait, 30 * SEC);
    /* Without C ahead of it, D fits once B ends: free 2 cores, 6 GiB at 10 s. */
    cr_assert_eq(hrm_waitsim_run(&cap, t.rows, 2, &d, &wait), 0);
    cr_assert_eq(wait, 10 * SEC);
    /* A small task behind an empty queue that fits now waits 0. */
    struct hrm_wait_row tiny = row(4, HRM_WAIT_QUEUED, SEC, 1000, 1, GIB);
    cr_assert_eq(hrm_waitsim_run(&cap, t.rows, 2, &tiny, &wait), 0);
    cr_assert_eq(wait, 0);
    hrm_wait_table_fini(&t);
}

/* Two tasks stacked on a GPU with room for two (max_stack 2): a third
 * waits for the first to end (5 s) although memory and cores are free. */
Test(waitsim, stack_limit_counts)
{
    struct hrm_wait_row r[] = {row(0, HRM_WAIT_RUNNING, 8 * SEC, 1000, 1, 2 * GIB),
                               row(1, HRM_WAIT_RUNNING, 5 * SEC, 1000, 1, 2 * GIB)};
    struct hrm_wait_cap cap = {.vcore = 8000, .gmem = 10 * GIB, .max_stack = 2};
    struct hrm_wait_row d = row(2, HRM_WAIT_QUEUED, SEC, 1000, 1, 2 * GIB);
    int64_t wait;
    cr_assert_eq(hrm_waitsim_run(&cap, r, 2, &d, &wait), 0);
    cr_assert_eq(wait, 5 * SEC);
    /* A CPU task (gpu 0) is not counted against the stack. */
    struct hrm_wait_row c = row(3, HRM_WAIT_QUEUED, SEC, 1000, 0, 0);
    cr_assert_eq(hrm_waitsim_run(&cap, r, 2, &c, &wait), 0);
    cr_assert_eq(wait, 0);
}

/* First in, first out: a blocked head holds back a smaller task behind it.
 * Running X (4 cores, 6 s); queued Y (3 cores, 4 s) and Z (1 core, 1 s).
 * t = 6: X ends, Y starts (to 10) and Z starts (to 7): free 0 cores.
 * t = 7: Z ends: 1 core free; the new 1-core task starts: wait 7 s. */
Test(waitsim, fifo_order_and_releases)
{
    struct hrm_wait_row r[] = {row(0, HRM_WAIT_RUNNING, 6 * SEC, 4000, 0, 0),
                               row(1, HRM_WAIT_QUEUED, 4 * SEC, 3000, 0, 0),
                               row(2, HRM_WAIT_QUEUED, 1 * SEC, 1000, 0, 0)};
    struct hrm_wait_cap cap = {.vcore = 4000};
    struct hrm_wait_row me = row(3, HRM_WAIT_QUEUED, SEC, 1000, 0, 0);
    int64_t wait;
    cr_assert_eq(hrm_waitsim_run(&cap, r, 3, &me, &wait), 0);
    cr_assert_eq(wait, 7 * SEC);
}

Test(waitsim, never_fits)
{
    struct hrm_wait_cap cap = {.vcore = 4000, .gmem = 10 * GIB};
    struct hrm_wait_row big = row(0, HRM_WAIT_QUEUED, SEC, 8000, 0, 0);
    int64_t wait = 0;
    cr_assert_eq(hrm_waitsim_run(&cap, NULL, 0, &big, &wait), -HRM_ENOFIT);
    cr_assert_eq(wait, INT64_MAX);
    struct hrm_wait_row hog = row(1, HRM_WAIT_QUEUED, SEC, 1000, 1, 11 * GIB);
    struct hrm_wait_row me = row(2, HRM_WAIT_QUEUED, SEC, 1000, 0, 0);
    cr_assert_eq(hrm_waitsim_run(&cap, &hog, 1, &me, &wait), -HRM_ENOFIT);
}
