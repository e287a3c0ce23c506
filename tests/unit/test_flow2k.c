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

/* P1 shapes over the range of the bench (jobs 10 to 1,000, tasks per job 1
 * to 1,000, per GPU and per machine), kept small enough for the sanitizers. */
Test(flow2k, p1_shapes_full_and_warm, .timeout = 600)
{
    static const struct {
        long long gpus, jobs, tasks;
    } shapes[] = {{40, 10, 1},   {60, 10, 20}, {120, 20, 8},  {80, 3, 60},
                  {200, 1, 1000}, {100, 1000, 1}, {160, 40, 10}, {64, 12, 30}};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        for (int per_gpu = 0; per_gpu < 2; per_gpu++) {
            struct hrm_flowgen_p1 q;
            p1_shape(&q, 11 + i * 2 + (uint64_t)per_gpu, shapes[i].gpus, shapes[i].jobs,
                     shapes[i].tasks, per_gpu);
            full_and_warm(&q, i % 2 ? HRM_FLOW_AUTO : HRM_FLOW_SSP, 1 + (int64_t)(i % 4) * 9);
        }
}

/*
 * Random graphs with task-like vertices everywhere: owners with children of
 * one arc in (some with parallel arcs to one target, zero capacities, or an
 * arc back to their owner), chains of them, plus random arcs; in supply form
 * and in max form, then random changes (costs and capacities at every kind
 * of vertex, supplies, arcs added into tasks and out of them, new tasks).
 */
static void random_graph(struct hrm_rng *r, int nv, struct hrm_flow **out, int32_t *S,
                         int32_t *T, bool max)
{
    struct hrm_flow *g = hrm_flow_new(nv, nv * 6);
    for (int v = 0; v < nv; v++)
        hrm_flow_add_vertex(g, 0);
    int owners = 2 + (int)hrm_rng_below(r, 4), targets = 3 + (int)hrm_rng_below(r, 6);
    /* vertices: 0 source, 1 sink, then owners, targets, the rest tasks */
    for (int o = 0; o < owners; o++)
        hrm_flow_add_arc(g, 0, 2 + o, 1 + (int64_t)hrm_rng_below(r, 12), 0);
    for (int x = 0; x < targets; x++) {
        int32_t tv = 2 + owners + x;
        hrm_flow_add_arc(g, tv, 1, 1 + (int64_t)hrm_rng_below(r, 6),
                         (int64_t)hrm_rng_below(r, 20) - 5);
        if (x > 0 && hrm_rng_below(r, 2))
            hrm_flow_add_arc(g, tv - 1, tv, 1 + (int64_t)hrm_rng_below(r, 4), 1);
    }
    for (int t = 2 + owners + targets; t < nv; t++) {
        int32_t o = 2 + (int32_t)hrm_rng_below(r, (uint64_t)owners);
        if (hrm_rng_below(r, 8) == 0 && t > 2 + owners + targets)
            o = t - 1; /* a chain: a task's task */
        hrm_flow_add_arc(g, o, t, (int64_t)hrm_rng_below(r, 3), (int64_t)hrm_rng_below(r, 9) - 2);
        int k = 1 + (int)hrm_rng_below(r, 4);
        for (int i = 0; i < k; i++) {
            int32_t x = 2 + owners + (int32_t)hrm_rng_below(r, (uint64_t)targets);
            hrm_flow_add_arc(g, t, x, (int64_t)hrm_rng_below(r, 3), (int64_t)hrm_rng_below(r, 15));
            if (hrm_rng_below(r, 6) == 0) /* a parallel arc */
                hrm_flow_add_arc(g, t, x, 1, (int64_t)hrm_rng_below(r, 15));
        }
        if (hrm_rng_below(r, 10) == 0)
            hrm_flow_add_arc(g, t, o, 1, 3); /* back to its owner */
        if (hrm_rng_below(r, 12) == 0)
            hrm_flow_add_arc(g, t, 1, 1, 40); /* straight to the sink */
    }
    for (int i = 0; i < nv / 4; i++) /* arcs between anything */
        hrm_flow_add_arc(g, (int32_t)hrm_rng_below(r, (uint64_t)nv),
                         (int32_t)hrm_rng_below(r, (uint64_t)nv), (int64_t)hrm_rng_below(r, 4),
                         (int64_t)hrm_rng_below(r, 30) - 8);
    if (max) {
        *S = 0, *T = 1;
    } else {
        /* supplies that a max flow meets: route it, then use its value */
        struct hrm_flow *h = graph_copy(g);
        struct hrm_error err = {{0}};
        cr_assert_eq(hrm_flow_solve_max(h, 0, 1, &err), 0, "%s", err.text);
        hrm_flow_set_supply(g, 0, hrm_flow_value(h));
        hrm_flow_set_supply(g, 1, -hrm_flow_value(h));
        hrm_flow_free(h);
        *S = *T = -1;
    }
    *out = g;
}

static void random_change(struct hrm_rng *r, struct hrm_flow *g, int32_t S)
{
    int32_t n = hrm_flow_vertices(g), m = hrm_flow_arcs(g);
    switch (hrm_rng_below(r, 5)) {
    case 0:
    case 1: { /* an arc's cost and capacity (never the source's or sink's in supply form) */
        int32_t a = (int32_t)hrm_rng_below(r, (uint64_t)m);
        if (S < 0 && (hrm_flow_arc_from(g, a) == 0 || hrm_flow_arc_to(g, a) == 1))
            break;
        hrm_flow_set_arc(g, a, (int64_t)hrm_rng_below(r, 4), (int64_t)hrm_rng_below(r, 25) - 5);
        break;
    }
    case 2: /* an arc into a vertex that may be a task (it is one no more) */
        hrm_flow_add_arc(g, 2 + (int32_t)hrm_rng_below(r, (uint64_t)n - 2),
                         2 + (int32_t)hrm_rng_below(r, (uint64_t)n - 2), 1,
                         (int64_t)hrm_rng_below(r, 10));
        break;
    case 3: { /* a new task of a random owner-to-be */
        int32_t t = hrm_flow_add_vertex(g, 0);
        hrm_flow_add_arc(g, 2 + (int32_t)hrm_rng_below(r, 4), t, 1, 0);
        hrm_flow_add_arc(g, t, 2 + (int32_t)hrm_rng_below(r, (uint64_t)n - 2), 1,
                         (int64_t)hrm_rng_below(r, 10));
        hrm_flow_add_arc(g, t, 1, 1, 30);
        break;
    }
    default: /* an arc out of a task to a new vertex with one arc in */
        if (S >= 0) {
            int32_t v = hrm_flow_add_vertex(g, 0);
            hrm_flow_add_arc(g, n - 1, v, 1, 2);
            hrm_flow_add_arc(g, v, 1, 1, 1);
        }
        break;
    }
}

Test(flow2k, random_graphs_full_and_warm, .timeout = 600)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 2026);
    for (int seed = 0; seed < 120; seed++) {
        struct hrm_flow *g;
        int32_t S, T;
        bool max = seed % 2 == 0;
        random_graph(&r, 30 + (int)hrm_rng_below(&r, 60), &g, &S, &T, max);
        hrm_flow_set_algo(g, seed % 3 == 0 ? HRM_FLOW_AUTO : HRM_FLOW_SSP);
        struct hrm_error err = {{0}};
        char what[64];
        snprintf(what, sizeof(what), "random seed %d", seed);
        cr_assert_eq(solve(g, S, T, &err), 0, "%s: %s", what, err.text);
        expect_same_as_others(g, S, T, what);
        for (int round = 0; round < 8; round++) {
            int k = 1 + (int)hrm_rng_below(&r, 3);
            for (int i = 0; i < k; i++)
                random_change(&r, g, S);
            snprintf(what, sizeof(what), "random seed %d round %d", seed, round);
            int rc = solve(g, S, T, &err);
            if (rc == -HRM_EINFEASIBLE) { /* supplies cut off: every engine agrees */
                struct hrm_flow *h = graph_copy(g);
                hrm_flow_set_algo(h, HRM_FLOW_SIMPLEX);
                cr_assert_eq(solve(h, S, T, &err), -HRM_EINFEASIBLE, "%s", what);
                hrm_flow_free(h);
                break;
            }
            cr_assert_eq(rc, 0, "%s: %s", what, err.text);
            expect_same_as_others(g, S, T, what);
        }
        hrm_flow_free(g);
    }
}

/*
 * The work: a warm re-solve after a task ends does not settle the tasks
 * that carry no flow.  Before the summaries every search settled nearly all
 * of them (a task end on the 2,000-GPU graph settled 10,574 of 12,754
 * vertices for one unit), so a search settled more than the vertices that
 * are not flow-free tasks.
 */
Test(flow2k, warm_searches_pass_flow_free_tasks_by)
{
    for (int per_gpu = 0; per_gpu < 2; per_gpu++) {
        struct hrm_flowgen_p1 q;
        p1_shape(&q, 3, 400, 20, 60, per_gpu);
        struct hrm_flowgen_sched s = {0};
        hrm_flowgen_p1_build(&q, &s);
        struct hrm_error err = {{0}};
        cr_assert_eq(hrm_flow_solve_max(s.g, s.S, s.T, &err), 0, "%s", err.text);
        struct hrm_flowgen_changer ch = {.s = &s, .skeleton_cap = 1 << 30, .job_tasks = 10};
        hrm_rng_seed(&ch.rng, 3);
        for (int i = 0; i < 6; i++) {
            hrm_flowgen_change(&ch, HRM_FLOWGEN_TASK_END);
            int32_t idle = 0;
            for (int32_t t = 0; t < s.ntasks; t++)
                idle += hrm_flow_arc_flow(s.g, s.task_arc[t]) == 0;
            cr_assert_eq(hrm_flow_solve_max(s.g, s.S, s.T, &err), 0, "%s", err.text);
            struct hrm_flow_stats st;
            hrm_flow_stats(s.g, &st);
            int64_t others = hrm_flow_vertices(s.g) - idle;
            cr_assert(idle > 2 * others / 3, "the shape has many idle tasks (%d of %d vertices)",
                      idle, hrm_flow_vertices(s.g));
            cr_assert(st.scanned <= st.phases * (others + 8),
                      "per_gpu %d step %d: %lld vertices settled in %lld searches; %lld vertices "
                      "are not idle tasks",
                      per_gpu, i, (long long)st.scanned, (long long)st.phases, (long long)others);
            expect_same_as_others(s.g, s.S, s.T, "task end");
        }
        hrm_flowgen_sched_fini(&s);
    }
}
