/* Unit tests of the central role's timing hook (hrm bench central): what it counts, and that it changes nothing. */
#include <criterion/criterion.h>
#include <string.h>

#include "hrm/cluster.h"
#include "hrm/metrics.h"
#include "hrm/sim.h"
#include "hrm/workload.h"

#define SEC 1000000LL
#define GB 1000000000LL

/* A clock that advances 1,000 ns per read: every timed call then lasts
 * exactly 1,000 ns, so the sum is 1,000 x the calls. */
static int64_t step_clock(void *arg)
{
    int64_t *t = arg;
    return *t += 1000;
}

/* One node of 2 cores, one job of 4 one-core tasks of 1 s at time 0. */
static void build(struct hrm_cluster **cp, struct hrm_workload **wp)
{
    struct hrm_netcfg net = {.latency_us = 0};
    struct hrm_cluster *c = hrm_cluster_new(&net);
    cr_assert_eq(hrm_cluster_add_rack(c, "r0", NULL), 0);
    struct hrm_node_desc n = {.name = "n0", .rack = 0, .cores = 2, .mem = 8 * GB};
    cr_assert_eq(hrm_cluster_add_node(c, &n, NULL), 0);
    struct hrm_workload *wl = hrm_workload_new();
    int32_t u = hrm_workload_user(wl, "u");
    struct hrm_job_desc d = {.name = "j", .user = u};
    cr_assert_eq(hrm_workload_add_job(wl, &d, NULL), 0);
    cr_assert_geq(hrm_workload_add_stage(wl, "s", NULL, 0, NULL), 0);
    for (int i = 0; i < 4; i++) {
        struct hrm_task_desc t = {.duration_us = SEC};
        t.req.v[HRM_DIM_CPU] = 1000;
        t.req.v[HRM_DIM_MEM] = GB;
        cr_assert_geq(hrm_workload_add_task(wl, &t, NULL), 0);
    }
    *cp = c;
    *wp = wl;
}

Test(claims_timing, counts_calls_and_decisions_and_changes_nothing)
{
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    build(&c, &wl);
    struct hrm_run_record plain, timed;
    hrm_run_record_init(&plain, c, wl);
    hrm_run_record_init(&timed, c, wl);
    struct hrm_sim_config cfg = {.seed = 1};
    cr_assert_eq(hrm_sim_run(c, wl, "fifo", NULL, &cfg, &plain, NULL), 0);
    int64_t now = 0;
    struct hrm_sim_timing tm = {.clock_ns = step_clock, .clock_arg = &now};
    cfg.timing = &tm;
    cr_assert_eq(hrm_sim_run(c, wl, "fifo", NULL, &cfg, &timed, NULL), 0);
    /* 4 tasks started; the role got: the submit, 4 task ends, and passes
     * at 0 s (two starts), 1 s (two ends, two starts) and 2 s (two ends,
     * nothing left) = 1 + 4 messages + 3 passes = 8 calls of 1,000 ns. */
    cr_assert_eq(tm.decisions, 4);
    cr_assert_eq(tm.passes, 3);
    cr_assert_eq(tm.calls, 8);
    cr_assert_float_eq(tm.central_ns, 8000.0, 1e-9);
    /* The hook reads a clock and nothing else: the run is the same. */
    cr_assert_eq(plain.last_end_us, timed.last_end_us);
    cr_assert_eq(plain.last_end_us, 2 * SEC);
    cr_assert_eq(plain.events, timed.events);
    hrm_run_record_fini(&plain);
    hrm_run_record_fini(&timed);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
