/* What auto runs on scheduling graphs in supply form (flow.c, auto_algo): the simplex where
 * no units compete or few compete for many places, shortest paths where many compete for
 * few places and from 60,000 vertices on; every answer certified and equal to the other
 * engines'; and warm re-solves after a simplex solve on few costs. */
#include "test_flowarr.h"

/* Solves g from scratch (or warm, with `warm`) with algo; returns the cost of the answer,
 * certified by its potentials (test_flowarr.h). */
static int64_t solve_certified(struct hrm_flow *g, enum hrm_flow_algo algo, bool warm,
                               const char *what)
{
    if (!warm)
        hrm_flow_reset(g);
    hrm_flow_set_algo(g, algo);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s: %s", what, err.text);
    return certified_cost(g, -1, -1);
}

/* Auto from scratch on g: returns whether it ran the simplex, after checking its cost against
 * shortest paths and the simplex. */
static bool auto_runs_simplex(struct hrm_flow *g, const char *what)
{
    int64_t cost = solve_certified(g, HRM_FLOW_AUTO, false, what);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(!st.scaling, "%s: auto ran cost scaling on few costs", what);
    cr_assert_eq(solve_certified(g, HRM_FLOW_SSP, false, what), cost, "%s: auto and ssp", what);
    cr_assert_eq(solve_certified(g, HRM_FLOW_SIMPLEX, false, what), cost, "%s: auto and simplex",
                 what);
    return st.simplex;
}

static struct hrm_flow *p1_graph(long long gpus, long long jobs, long long tasks, int per_gpu,
                                 long long gpus_per_machine, uint64_t seed)
{
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(HRM_FLOWGEN_P1, 'S', &p);
    p.p1.gpus = gpus, p.p1.jobs = jobs, p.p1.tasks_per_job = tasks;
    p.p1.per_gpu = per_gpu, p.p1.gpus_per_machine = gpus_per_machine;
    p.p1.mem_classes = 1; /* every task fits every GPU: the units are the shape's */
    p.seed = seed;
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    cr_assert_eq(hrm_flowgen_build(HRM_FLOWGEN_P1, &p, &g, &err), 0, "%s", err.text);
    return g;
}

/* One P1 shape under auto: the engine expected by the rule, on three seeds. */
static void expect_p1(long long gpus, long long jobs, long long tasks, int per_gpu, long long gpm,
                      bool simplex)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        char what[160];
        snprintf(what, sizeof(what), "%lld GPUs (%s, %lld per machine), %lld jobs x %lld, seed %llu",
                 gpus, per_gpu ? "per GPU" : "per machine", gpm, jobs, tasks,
                 (unsigned long long)seed);
        struct hrm_flow *g = p1_graph(gpus, jobs, tasks, per_gpu, gpm, seed);
        cr_assert_eq(auto_runs_simplex(g, what), simplex, "%s: auto should run %s", what,
                     simplex ? "the simplex" : "shortest paths");
        hrm_flow_free(g);
    }
}

/* Fewer tasks than GPUs (the sink's arcs have room): the simplex, per GPU or per machine. */
Test(flowauto, fewer_tasks_than_gpus_run_the_simplex)
{
    expect_p1(800, 40, 5, 1, 4, true);
    expect_p1(800, 40, 5, 0, 4, true);
    expect_p1(600, 200, 1, 1, 4, true);
    expect_p1(600, 200, 1, 0, 2, true);
    expect_p1(960, 10, 40, 0, 8, true);
}

/* As many tasks as GPUs: the simplex, with one vertex per machine or per GPU (per GPU the
 * rule before the simplex's filled start ran shortest paths, now 1.7x slower there: P1 M). */
Test(flowauto, as_many_tasks_as_gpus_run_the_simplex)
{
    expect_p1(800, 80, 10, 0, 4, true);
    expect_p1(800, 8, 100, 0, 8, true);
    expect_p1(800, 80, 10, 1, 4, true);
    expect_p1(800, 8, 100, 1, 8, true);
    expect_p1(1200, 100, 12, 1, 1, true);
}

/* P1 M itself (`hrm bench flow-gen p1 --size M` and p1-rack: 10,000 GPUs, 1,000 jobs x 10
 * tasks, two memory classes): the simplex, per GPU and per machine.  Per GPU the rule before
 * ran shortest paths, 1.6-2.4x slower there. */
Test(flowauto, p1_size_m_runs_the_simplex)
{
    for (int per_gpu = 0; per_gpu <= 1; per_gpu++) {
        struct hrm_flowgen_params p;
        hrm_flowgen_defaults(HRM_FLOWGEN_P1, 'M', &p);
        p.p1.per_gpu = per_gpu;
        p.seed = 1;
        struct hrm_error err = {{0}};
        struct hrm_flow *g = NULL;
        cr_assert_eq(hrm_flowgen_build(HRM_FLOWGEN_P1, &p, &g, &err), 0, "%s", err.text);
        cr_assert(auto_runs_simplex(g, per_gpu ? "p1 M" : "p1-rack M"),
                  "%s: auto should run the simplex", per_gpu ? "p1 M" : "p1-rack M");
        hrm_flow_free(g);
    }
}

/* Many more tasks than GPUs (units compete for few places): shortest paths. */
Test(flowauto, more_tasks_than_few_gpus_run_shortest_paths)
{
    expect_p1(400, 40, 20, 0, 4, false);
    expect_p1(400, 40, 20, 1, 4, false);
    expect_p1(200, 4, 200, 0, 4, false);
    expect_p1(400, 400, 2, 1, 4, false);
    expect_p1(2000, 100, 60, 1, 4, false); /* three tasks per GPU: not enough places */
}

/* Twice as many tasks as GPUs, from 2,000 GPUs on (the units in excess, times 1,000, below
 * the places squared): the simplex, 1.2-2.3x faster there; the rule before ran shortest
 * paths wherever units compete. */
Test(flowauto, more_tasks_than_many_gpus_run_the_simplex)
{
    expect_p1(2000, 100, 40, 1, 4, true);
    expect_p1(2000, 100, 40, 0, 4, true);
    expect_p1(3000, 300, 15, 0, 8, true);
}

/* From 60,000 vertices on, shortest paths whatever the shape: one vertex per GPU over 50,000
 * GPUs with 100 tasks (the simplex took 21 ms there, shortest paths 1.8). */
Test(flowauto, large_graphs_run_shortest_paths)
{
    struct hrm_flow *g = p1_graph(50000, 100, 1, 1, 4, 1);
    cr_assert_geq(hrm_flow_vertices(g), 60000);
    cr_assert(!auto_runs_simplex(g, "50,000 GPUs per GPU, 100 tasks"),
              "auto should run shortest paths from 60,000 vertices on");
    hrm_flow_free(g);
}

/*
 * A random assignment-like graph with few costs: k sources of supply 1..4 each, whose arcs
 * hold exactly their supply, into middle vertices, then into one sink.  `spare` sources (the
 * first ones) get one more arc of capacity 2 (units compete at those sources).  A middle
 * vertex's cheap arcs to the sink (cost 1) hold `room` times what can reach it; its dear
 * arc (cost 50) holds the rest (`few_places`: the places units compete for are about
 * (1 - room) of the demand) or the whole demand (more places than units).  Returns the graph.
 */
static struct hrm_flow *assignment(struct hrm_rng *r, int k, int spare, double room,
                                   bool few_places)
{
    struct hrm_flow *g = hrm_flow_new(0, 0);
    int mids = k / 2 + 1;
    int32_t sink = hrm_flow_add_vertex(g, 0);
    int32_t mid0 = hrm_flow_add_vertex(g, 0);
    for (int i = 1; i < mids; i++)
        hrm_flow_add_vertex(g, 0);
    int64_t *in = hrm_calloc((size_t)mids, sizeof(*in));
    int64_t total = 0;
    for (int i = 0; i < k; i++) {
        int64_t b = 1 + (int64_t)hrm_rng_below(r, 4);
        int32_t s = hrm_flow_add_vertex(g, b);
        total += b;
        /* arcs whose capacities add up to b (or b + 2), each to a random middle vertex */
        int64_t left = b + (i < spare ? 2 : 0);
        while (left > 0) {
            int64_t c = 1 + (int64_t)hrm_rng_below(r, (uint64_t)left);
            int m = (int)hrm_rng_below(r, (uint64_t)mids);
            hrm_flow_add_arc(g, s, mid0 + m, c, (int64_t)hrm_rng_below(r, 3) * 10);
            in[m] += c;
            left -= c;
        }
    }
    hrm_flow_set_supply(g, sink, -total);
    for (int i = 0; i < mids; i++) {
        int64_t c = (int64_t)(room * (double)in[i]);
        if (c > 0)
            hrm_flow_add_arc(g, mid0 + i, sink, c, 1);
        hrm_flow_add_arc(g, mid0 + i, sink, few_places ? in[i] - c : total, 50);
    }
    hrm_free(in);
    return g;
}

/*
 * The rule on graphs not built by the P1 generator.  No competition: the simplex.  Every
 * source with spare arcs (2 units in excess per source against a demand of 2.5 per source:
 * far more than 1/1,000 of the demand squared for fewer than 200 sources), or a sink whose
 * cheapest arcs take 60 % and whose dearer arcs take just the rest (0.6 of the demand in
 * excess of 0.4 places): shortest paths.  One source with 2 units spare among 40-100, or a
 * sink whose dearer arcs can take everything: the simplex.
 */
Test(flowauto, the_rule_on_random_assignment_graphs)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 17);
    for (int round = 0; round < 12; round++) {
        int k = 40 + (int)hrm_rng_below(&r, 60);
        struct {
            int spare;
            double room;
            bool few_places, simplex;
        } cases[] = {{0, 1.5, false, true},
                     {k, 1.5, false, false},
                     {1, 1.5, false, true},
                     {0, 0.6, true, false},
                     {0, 0.6, false, true}};
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            char what[128];
            snprintf(what, sizeof(what), "round %d, %d sources, %d spare, room %.1f, few places %d",
                     round, k, cases[i].spare, cases[i].room, cases[i].few_places);
            struct hrm_flow *g =
                assignment(&r, k, cases[i].spare, cases[i].room, cases[i].few_places);
            cr_assert_eq(auto_runs_simplex(g, what), cases[i].simplex, "%s: auto should run %s",
                         what, cases[i].simplex ? "the simplex" : "shortest paths");
            hrm_flow_free(g);
        }
    }
}

/* In max-flow form the units are not known before the solve: shortest paths, as before. */
Test(flowauto, max_flow_form_runs_shortest_paths)
{
    struct hrm_flowgen_p1 p;
    hrm_flowgen_p1_defaults(&p);
    p.gpus = 800, p.jobs = 40, p.tasks_per_job = 5, p.per_gpu = 0;
    struct hrm_flowgen_sched s;
    hrm_flowgen_p1_build(&p, &s);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve_max(s.g, s.S, s.T, &err), 0, "%s", err.text);
    struct hrm_flow_stats st;
    hrm_flow_stats(s.g, &st);
    cr_assert(!st.simplex && !st.scaling, "max form: auto ran another engine");
    hrm_flowgen_sched_fini(&s);
}

/*
 * After a simplex solve of a few-cost graph, a re-solve under auto after small changes
 * patches them with shortest paths (the simplex's warm start walks its whole tree) and gives
 * the from-scratch optimum.
 */
Test(flowauto, warm_after_the_simplex_runs_shortest_paths)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 5);
    for (uint64_t seed = 1; seed <= 4; seed++) {
        struct hrm_flow *g = p1_graph(800, 80, 10, 0, 4, seed);
        solve_certified(g, seed % 2 ? HRM_FLOW_SIMPLEX : HRM_FLOW_AUTO, false, "cold");
        struct hrm_flow_stats st;
        hrm_flow_stats(g, &st);
        cr_assert(st.simplex, "seed %llu: the cold solve ran the simplex", (unsigned long long)seed);
        for (int step = 0; step < 8; step++) {
            for (int c = 0; c < 3; c++) {
                int32_t a = (int32_t)hrm_rng_below(&r, (uint64_t)hrm_flow_arcs(g));
                int64_t cap = hrm_flow_arc_capacity(g, a);
                int64_t cost = hrm_flow_arc_cost(g, a) + (int64_t)hrm_rng_below(&r, 200) - 100;
                cr_assert_eq(hrm_flow_set_arc(g, a, cap, cost), 0);
            }
            char what[64];
            snprintf(what, sizeof(what), "seed %llu step %d", (unsigned long long)seed, step);
            int64_t warm = solve_certified(g, HRM_FLOW_AUTO, true, what);
            hrm_flow_stats(g, &st);
            cr_assert(st.warm && !st.simplex, "%s: the re-solve ran warm shortest paths", what);
            cr_assert_eq(solve_certified(g, HRM_FLOW_SIMPLEX, false, what), warm,
                         "%s: warm and from-scratch simplex", what);
            cr_assert_eq(solve_certified(g, HRM_FLOW_SSP, false, what), warm,
                         "%s: warm and from-scratch shortest paths", what);
            /* the next step starts warm from a simplex solve again */
            solve_certified(g, HRM_FLOW_SIMPLEX, false, what);
        }
        hrm_flow_free(g);
    }
}
