/* Execution model: compression slows by (1+p)/(1-r_c), memory overcommit fails, usage. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "hrm/sim.h"
#include "hrm/spec.h"
#include "sim/compress.h"

#define SEC 1000000ll

struct seen {
    int32_t ended[16], fails[16], attempts[16];
    int64_t end_at[16];
    int nended;
    int nusage, nnode_usage;
    struct hrm_usage last[16];
    double busy;
    int64_t now;
};

static void on_end(void *arg, int32_t task, int32_t attempt, int fail)
{
    struct seen *s = arg;
    s->ended[s->nended] = task;
    s->fails[s->nended] = fail;
    s->attempts[s->nended] = attempt;
    s->end_at[s->nended++] = s->now;
}

static void on_usage(void *arg, int32_t node, int32_t task, int32_t attempt,
                     const struct hrm_usage *u)
{
    struct seen *s = arg;
    if (task < 0) {
        s->nnode_usage++;
        return;
    }
    s->nusage++;
    s->last[task] = *u;
}

static void on_busy(void *arg, double delta)
{
    ((struct seen *)arg)->busy += delta;
}

/* Runs the model to quiescence (no more task ends), recording end times. */
static void drain(struct cmp_model *m, struct seen *s, int64_t until)
{
    for (;;) {
        int64_t t = cmp_next(m);
        if (t == INT64_MAX || t > until)
            return;
        s->now = t;
        cmp_run(m, t);
        if (!cmp_active(m))
            return;
    }
}

/* A phase-profiled task: cpu milli-cores and mem for dur. */
static void profiled(struct hrm_workload *wl, int64_t req_cpu, int64_t req_mem, int n,
                     const int64_t (*ph)[3])
{
    struct hrm_error err;
    struct hrm_task_desc d = {0};
    d.req.v[HRM_DIM_CPU] = req_cpu;
    d.req.v[HRM_DIM_MEM] = req_mem;
    for (int i = 0; i < n; i++)
        d.duration_us += ph[i][0];
    cr_assert_geq(hrm_workload_add_task(wl, &d, &err), 0, "%s", err.text);
    for (int i = 0; i < n; i++) {
        struct hrm_res r = {0};
        r.v[HRM_DIM_CPU] = ph[i][1];
        r.v[HRM_DIM_MEM] = ph[i][2];
        cr_assert_geq(hrm_workload_add_phase(wl, ph[i][0], &r, &err), 0, "%s", err.text);
    }
}

static struct cmp_model *model(struct hrm_cluster *c, struct hrm_workload *wl,
                               const struct hrm_execution *x, struct seen *s)
{
    struct cmp_hooks h = {.arg = s, .end = on_end, .usage = on_usage, .busy = on_busy};
    struct cmp_model *m = cmp_new(c, wl, x, 1, &h);
    cr_assert_not_null(m);
    return m;
}

Test(compress, overcommitted_cpu_slows_tasks_by_the_formula)
{
    /* 4 cores; two tasks each demanding 3 cores for 10 s: demand 6 > 4, so
     * 1 - r_c = 4/6 and each progresses at (2/3)/(1 + 0.05): 10 s become
     * 10 * 1.05 * 1.5 = 15.75 s (formula (5)). */
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 16 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    const int64_t ph[][3] = {{10 * SEC, 3000, GIB}};
    profiled(wl, 2000, GIB, 1, ph);
    profiled(wl, 2000, GIB, 1, ph);
    struct seen s = {0};
    struct hrm_execution x = {.contention = 0.05, .usage_interval_us = 0};
    struct cmp_model *m = model(c, wl, &x, &s);
    cmp_start(m, 0, 0, 1, 0, 0);
    cmp_start(m, 0, 1, 1, 0, 0);
    cr_assert_float_eq(cmp_rate(m, 0), (4.0 / 6) / 1.05, 1e-12);
    cr_assert_float_eq(s.busy, 4000.0, 1e-6, "the node's cores are all in use");
    drain(m, &s, INT64_MAX);
    cr_assert_eq(s.nended, 2);
    cr_assert_eq(s.fails[0] + s.fails[1], 0);
    cr_assert_eq(s.end_at[0], 15750000);
    cr_assert_eq(s.end_at[1], 15750000);
    cr_assert_float_eq(s.busy, 0.0, 1e-6);
    cmp_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(compress, rates_change_at_phase_ends_and_starts)
{
    /* 4 cores.  Task 0: 3 cores for 4 s then 1 core for 4 s.  Task 1 (3
     * cores, 6 s) starts at 0: demand 6 for task 0's first phase. p = 0. */
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 16 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    const int64_t a[][3] = {{4 * SEC, 3000, GIB}, {4 * SEC, 1000, GIB}};
    const int64_t b[][3] = {{6 * SEC, 3000, GIB}};
    profiled(wl, 1000, GIB, 2, a);
    profiled(wl, 1000, GIB, 1, b);
    struct seen s = {0};
    struct hrm_execution x = {.contention = 0};
    struct cmp_model *m = model(c, wl, &x, &s);
    cmp_start(m, 0, 0, 1, 0, 0);
    cmp_start(m, 0, 1, 1, 0, 0);
    /* Both at 2/3 until task 0's phase 1 ends at 6 s (4 s of work); then
     * demand 1 + 3 = 4 fits: task 1 has 6 - 4 = 2 s left, ends at 8 s;
     * task 0 has 4 s left at full speed, ends at 10 s. */
    drain(m, &s, INT64_MAX);
    cr_assert_eq(s.nended, 2);
    cr_assert_eq(s.ended[0], 1);
    cr_assert_eq(s.end_at[0], 8 * SEC);
    cr_assert_eq(s.end_at[1], 10 * SEC);
    cmp_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(compress, memory_overcommit_fails_the_task_that_grew)
{
    /* 8 GiB.  Task 0 holds 5 GiB.  Task 1 needs 1 GiB, then 4 GiB after 2 s:
     * 9 GiB > 8 GiB at 2 s, so task 1 fails then; task 0 runs on. */
    struct hrm_cluster *c = fx_cluster(1, 1, 8, 8 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    const int64_t a[][3] = {{10 * SEC, 1000, 5 * GIB}};
    const int64_t b[][3] = {{2 * SEC, 1000, GIB}, {2 * SEC, 1000, 4 * GIB}};
    profiled(wl, 1000, GIB, 1, a);
    profiled(wl, 1000, GIB, 2, b);
    struct seen s = {0};
    struct cmp_model *m = model(c, wl, NULL, &s);
    cmp_start(m, 0, 0, 1, 0, 0);
    cmp_start(m, 0, 1, 3, 0, 0);
    drain(m, &s, INT64_MAX);
    cr_assert_eq(s.nended, 2);
    cr_assert_eq(s.ended[0], 1);
    cr_assert_eq(s.fails[0], 1);
    cr_assert_eq(s.attempts[0], 3);
    cr_assert_eq(s.end_at[0], 2 * SEC);
    cr_assert_eq(s.fails[1], 0);
    cr_assert_eq(s.end_at[1], 10 * SEC);
    cmp_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(compress, usage_samples_report_what_tasks_received)
{
    /* Ticks every second; two 3-core tasks on 4 cores each receive 2 cores
     * and report being compressed; the node reports 4 cores in use. */
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 16 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    const int64_t ph[][3] = {{10 * SEC, 3000, 2 * GIB}};
    profiled(wl, 3000, 2 * GIB, 1, ph);
    profiled(wl, 3000, 2 * GIB, 1, ph);
    struct seen s = {0};
    struct cmp_model *m = model(c, wl, NULL, &s);
    cmp_start(m, 0, 0, 1, 0, 0);
    cmp_start(m, 0, 1, 1, 0, 0);
    drain(m, &s, 3 * SEC);
    cr_assert_eq(s.nusage, 6, "three ticks, two tasks");
    cr_assert_eq(s.nnode_usage, 3);
    cr_assert_eq(s.last[0].interval_us, SEC);
    cr_assert_eq(s.last[0].cpu, 2000);
    cr_assert_eq(s.last[0].mem, 2 * GIB);
    cr_assert(s.last[0].compressed);
    cmp_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(compress, not_created_without_profiles_and_pools_only_profiled_tasks)
{
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 16 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 2, 1000, GIB, 0, 0, SEC);
    struct seen s = {0};
    struct cmp_hooks h = {.arg = &s, .end = on_end, .usage = on_usage, .busy = on_busy};
    cr_assert_null(cmp_new(c, wl, NULL, 1, &h), "no profile, not fluid: the fixed-time path");
    struct hrm_execution fluid = {.fluid = true, .contention = 0.05};
    struct cmp_model *m = cmp_new(c, wl, &fluid, 1, &h);
    cr_assert_not_null(m);
    cr_assert(cmp_pooled(m, 0));
    cmp_free(m);
    const int64_t ph[][3] = {{SEC, 1000, GIB}};
    profiled(wl, 1000, GIB, 1, ph);
    m = cmp_new(c, wl, NULL, 1, &h);
    cr_assert(!cmp_pooled(m, 0));
    cr_assert(cmp_pooled(m, 2));
    cmp_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(compress, tasks_outside_the_pool_keep_their_cores)
{
    /* 4 cores; a plain task holds 2; a profiled task demanding 4 gets 2. */
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 16 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    const int64_t ph[][3] = {{4 * SEC, 4000, GIB}};
    profiled(wl, 2000, GIB, 1, ph);
    struct seen s = {0};
    struct hrm_execution x = {.contention = 0};
    struct cmp_model *m = model(c, wl, &x, &s);
    struct hrm_res held = {{2000, GIB, 0, 0, 0, 0}};
    cmp_reserve(m, 0, 0, &held, +1);
    cmp_start(m, 0, 0, 1, 0, 0);
    cr_assert_float_eq(cmp_rate(m, 0), 0.5, 1e-12);
    cmp_reserve(m, 2 * SEC, 0, &held, -1); /* 1 s of work done; 3 s left at full speed */
    drain(m, &s, INT64_MAX);
    cr_assert_eq(s.end_at[0], 5 * SEC);
    cmp_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(compress, foreign_load_takes_its_share)
{
    /* Every node carries a busy-forever load of 4 cores: a task demanding 4
     * of 4 cores then gets half, and the node reports its use. */
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 16 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    const int64_t ph[][3] = {{4 * SEC, 4000, GIB}};
    profiled(wl, 4000, GIB, 1, ph);
    struct seen s = {0};
    struct hrm_execution x = {.contention = 0,
                              .usage_interval_us = SEC,
                              .background = {.nodes = 1,
                                             .cpu_min = 4000,
                                             .cpu_max = 4000,
                                             .busy_us = 1000 * SEC * SEC,
                                             .idle_us = 1}};
    struct cmp_model *m = model(c, wl, &x, &s);
    cmp_start(m, 0, 0, 1, 0, 0);
    cr_assert_float_eq(cmp_rate(m, 0), 0.5, 1e-12);
    drain(m, &s, INT64_MAX);
    cr_assert_eq(s.end_at[0], 8 * SEC);
    cr_assert_geq(s.nnode_usage, 7);
    cmp_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* Through the simulator: a task killed for memory is reported FAILED and retried. */
Test(compress, simulated_memory_failure_is_retried)
{
    struct hrm_cluster *c = fx_cluster(1, 1, 8, 8 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    /* Both ask 2 GiB (FIFO starts both), but grow to 5 GiB: task 0 at 1 s,
     * task 1 at 2 s, which overcommits 8 GiB and fails.  FIFO restarts it at
     * once (its request fits); it grows again at 4 s and fails again; the
     * third attempt starts at 4 s, grows at 6 s after task 0 ended (5 s),
     * and ends at 9 s. */
    const int64_t ph[][3] = {{SEC, 1000, GIB}, {4 * SEC, 1000, 5 * GIB}};
    profiled(wl, 1000, 2 * GIB, 2, ph);
    const int64_t ph2[][3] = {{2 * SEC, 1000, GIB}, {3 * SEC, 1000, 5 * GIB}};
    profiled(wl, 1000, 2 * GIB, 2, ph2);
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    struct hrm_error err = {{0}};
    struct hrm_sim_config cfg = {.seed = 1};
    cr_assert_eq(hrm_sim_run(c, wl, "fifo", NULL, &cfg, &rec, &err), 0, "%s", err.text);
    cr_assert_eq(rec.task_failures, 2);
    cr_assert_eq(rec.tasks_done, 2);
    cr_assert(!rec.jobs[0].failed);
    cr_assert_eq(rec.jobs[0].end_us, 9 * SEC);
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(compress, simulated_profile_within_capacity_keeps_its_duration)
{
    struct hrm_cluster *c = fx_cluster(1, 1, 8, 8 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    const int64_t ph[][3] = {{SEC, 1000, GIB}, {3 * SEC, 2000, 2 * GIB}};
    profiled(wl, 2000, 2 * GIB, 2, ph);
    profiled(wl, 2000, 2 * GIB, 2, ph);
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_sim_run(c, wl, "drf", NULL, NULL, &rec, &err), 0, "%s", err.text);
    cr_assert_eq(rec.jobs[0].end_us, 4 * SEC);
    /* cpu use is what tasks received: 2 cores for 1 s, 4 for 3 s, of 8 */
    cr_assert_float_eq(rec.cpu_area / rec.cpu_capacity_area, (2.0 + 12.0) / 32.0, 1e-9);
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(compress, spec_execution_object_is_read)
{
    struct hrm_error err = {{0}};
    char path[512];
    snprintf(path, sizeof(path), "%s/examples/p2-cloud.json", HRM_SOURCE_DIR);
    struct hrm_spec *s = hrm_spec_load(path, 1, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert(s->execution.fluid);
    cr_assert_float_eq(s->execution.contention, 0.05, 1e-12);
    cr_assert_eq(s->execution.usage_interval_us, SEC);
    cr_assert_float_eq(s->execution.background.nodes, 0.6, 1e-12);
    cr_assert_eq(s->execution.background.cpu_min, 4000);
    cr_assert_eq(s->execution.background.cpu_max, 12000);
    cr_assert_eq(s->execution.background.busy_us, 60 * SEC);
    /* Maps of one program share their logic across jobs. */
    const struct hrm_workload *wl = s->wl;
    cr_assert_neq(wl->tasks[0].logic, 0u);
    hrm_spec_free(s);
    /* Without the object: defaults, only profiled tasks pooled. */
    snprintf(path, sizeof(path), "%s/examples/mixed.json", HRM_SOURCE_DIR);
    s = hrm_spec_load(path, 1, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert(!s->execution.fluid);
    cr_assert_eq(s->execution.usage_interval_us, SEC);
    cr_assert_eq(s->execution.background.nodes, 0);
    hrm_spec_free(s);
}
