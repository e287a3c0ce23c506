/* The daemons' small containers: the task-id map (deletion keeps every other key findable) and the role timer list (due ones leave in arming order, later ones stay). */
#include <criterion/criterion.h>

#include "daemon/roletimers.h"
#include "daemon/taskmap.h"

/* Scattered keys (Fibonacci hashing spreads sequential ones without a single collision, which
 * would leave deletion's probe-run repair untested). */
static void key_of(int32_t i, int64_t *job, int32_t *task)
{
    uint64_t x = (uint64_t)(i + 1) * 6364136223846793005ull + 1442695040888963407ull;
    x ^= x >> 29;
    *job = (int64_t)(x >> 33);
    *task = (int32_t)(x & 0xffff);
}

Test(task_map, every_key_survives_deletions_of_others_and_growth)
{
    struct task_map m = {0};
    int64_t job;
    int32_t task;
    for (int32_t i = 0; i < 5000; i++) { /* grows the table several times */
        key_of(i, &job, &task);
        task_map_put(&m, job, task, i);
    }
    /* Probe runs exist (otherwise the deletions below test nothing). */
    size_t displaced = 0;
    for (size_t k = 0; k < m.cap; k++)
        if (m.s[k].id >= 0) {
            key_of(m.s[k].id, &job, &task);
            displaced += task_map_find(&m, job, task) == m.s[k].id && k > 0 && m.s[k - 1].id >= 0;
        }
    cr_assert_gt(displaced, 100);
    for (int32_t i = 0; i < 5000; i += 3) { /* a third of them go */
        key_of(i, &job, &task);
        task_map_del(&m, job, task);
    }
    for (int32_t i = 0; i < 5000; i++) {
        key_of(i, &job, &task);
        cr_assert_eq(task_map_find(&m, job, task), i % 3 == 0 ? -1 : i, "key %d", i);
    }
    cr_assert_eq(m.used, 5000 - 1667);
    task_map_del(&m, -5, 0); /* absent: nothing happens */
    cr_assert_eq(m.used, 5000 - 1667);
    key_of(0, &job, &task);
    task_map_put(&m, job, task, 42); /* a deleted key can come back with another id */
    cr_assert_eq(task_map_find(&m, job, task), 42);
    task_map_clear(&m);
    cr_assert_eq(task_map_find(&m, job, task), -1);
    task_map_free(&m);
    cr_assert_eq(task_map_find(&m, job, task), -1); /* an empty map answers too */
}

Test(role_timers, due_ones_leave_in_arming_order_and_later_ones_stay)
{
    struct role_timers ts = {0};
    cr_assert_eq(role_timers_next(&ts), INT64_MAX);
    role_timers_add(&ts, 300, 1, 11);
    role_timers_add(&ts, 100, 2, 22);
    role_timers_add(&ts, 200, 3, 33);
    role_timers_add(&ts, 900, 4, 44);
    cr_assert_eq(role_timers_next(&ts), 100);
    struct role_timer due[2];
    /* Three are due at 300, at most two are taken: the first two armed. */
    size_t n = role_timers_take_due(&ts, 300, due, 2);
    cr_assert_eq(n, 2);
    cr_assert(due[0].cookie == 11 && due[0].role == 1 && due[1].cookie == 22);
    cr_assert_eq(role_timers_next(&ts), 200);
    n = role_timers_take_due(&ts, 300, due, 2);
    cr_assert(n == 1 && due[0].cookie == 33);
    cr_assert_eq(role_timers_take_due(&ts, 300, due, 2), 0);
    cr_assert_eq(role_timers_next(&ts), 900);
    role_timers_free(&ts);
}
