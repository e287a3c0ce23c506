/* The shortest-path engine's summaries of flow-free tasks (ssp_sum.c): every
 * solve, full or warm, certified optimal and equal in cost to from-scratch
 * solves by the other engines and by shortest paths without summaries; and
 * searches that no longer settle the folded tasks. */
#include <criterion/criterion.h>

#include "flow/flow_private.h"
#include "test_flowarr.h"

/* Certified, and the cost of from-scratch solves by the simplex, cost scaling
 * and shortest paths without summaries. */
static void expect_same_as_others(struct hrm_flow *g, int32_t S, int32_t T, const char *what)
{
    int64_t cost = certified_cost(g, S, T);
    static const enum hrm_flow_algo algos[] = {HRM_FLOW_SIMPLEX, HRM_FLOW_SCALING, HRM_FLOW_SSP};
    for (int i = 0; i < 3; i++) {
        struct hrm_flow *h = graph_copy(g);
        struct hrm_error err = {{0}};
        hrm_flow_set_algo(h, algos[i]);
        h->sum_off = algos[i] == HRM_FLOW_SSP;
        cr_assert_eq(solve(h, S, T, &err), 0, "%s: from scratch: %s", what, err.text);
        cr_assert_eq(cost, hrm_flow_total_cost(h), "%s: cost %lld, algo %d from scratch %lld",
                     what, (long long)cost, (int)algos[i], (long long)hrm_flow_total_cost(h));
        cr_assert_eq(hrm_flow_value(g), hrm_flow_value(h), "%s: value %lld, from scratch %lld",
                     what, (long long)hrm_flow_value(g), (long long)hrm_flow_value(h));
        hrm_flow_free(h);
    }
}

static void p1_shape(struct hrm_flowgen_p1 *q, uint64_t seed, long long gpus, long long jobs,
                     long long tasks, int per_gpu)
{
    hrm_flowgen_p1_defaults(q);
    q->seed = seed;
    q->gpus = gpus;
    q->jobs = jobs;
    q->tasks_per_job = tasks;
    q->per_gpu = per_gpu;
}

/* A full solve and then every kind of change, each re-solve checked. */
static void full_and_warm(const struct hrm_flowgen_p1 *q, enum hrm_flow_algo algo,
                          int64_t job_tasks)
{
    struct hrm_flowgen_sched s = {0};
    hrm_flowgen_p1_build(q, &s);
    hrm_flow_set_algo(s.g, algo);
    struct hrm_error err = {{0}};
    char what[160];
    snprintf(what, sizeof(what), "seed %llu, %lld GPUs, %lld x %lld, per_gpu %d, algo %d",
             (unsigned long long)q->seed, q->gpus, q->jobs, q->tasks_per_job, q->per_gpu,
             (int)algo);
    cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s: %s", what, err.text);
    expect_same_as_others(s.g, s.S, s.T, what);
    struct hrm_flowgen_changer ch = {.s = &s, .skeleton_cap = 1 << 30, .job_tasks = job_tasks};
    hrm_rng_seed(&ch.rng, q->seed);
    static const enum hrm_flowgen_change kinds[] = {
        HRM_FLOWGEN_TASK_END,   HRM_FLOWGEN_JOB_ARRIVE, HRM_FLOWGEN_NODE_DIES,
        HRM_FLOWGEN_ARC_COST,   HRM_FLOWGEN_BATCH,      HRM_FLOWGEN_TASK_END,
        HRM_FLOWGEN_BATCH,      HRM_FLOWGEN_JOB_ARRIVE, HRM_FLOWGEN_ARC_COST,
        HRM_FLOWGEN_BATCH};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        hrm_flowgen_change(&ch, kinds[i]);
        char step[224];
        snprintf(step, sizeof(step), "%s, step %zu (%s)", what, i,
                 hrm_flowgen_change_name(kinds[i]));
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s: %s", step, err.text);
        struct hrm_flow_stats st;
        hrm_flow_stats(s.g, &st);
        cr_assert(st.warm, "%s: warm", step);
        expect_same_as_others(s.g, s.S, s.T, step);
    }
    hrm_flowgen_sched_fini(&s);
}

Test(flow2k, p1_small_shapes_full_and_warm)
{
    struct hrm_flowgen_p1 q;
    p1_shape(&q, 1, 40, 3, 8, 1);
    full_and_warm(&q, HRM_FLOW_SSP, 5);
}
