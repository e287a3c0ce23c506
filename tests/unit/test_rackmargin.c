/* Network simplex: the cold start fills the arcs that every feasible flow fills (down from the
 * sources, up from the sinks), so that the pivots on rack-aggregated P1 graphs stay few; each
 * basis audited pivot by pivot and each optimum held to shortest paths and cost scaling. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>

#include "flow/flow_private.h"
#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/flowgen.h"
#include "hrm/rng.h"
#include "test_flowarr.h"

TestSuite(simplex_filled);

/* A rack-aggregated P1 graph (one vertex per machine) in supply form, as `hrm bench flow-gen
 * p1-rack` writes it. */
static struct hrm_flow *rack_graph(long long gpus, long long jobs, long long tasks, long long gpm,
                                   uint64_t seed)
{
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(HRM_FLOWGEN_P1, 'S', &p);
    p.p1.gpus = gpus, p.p1.jobs = jobs, p.p1.tasks_per_job = tasks;
    p.p1.per_gpu = 0, p.p1.gpus_per_machine = gpm;
    p.seed = seed;
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    cr_assert_eq(hrm_flowgen_build(HRM_FLOWGEN_P1, &p, &g, &err), 0, "%s", err.text);
    return g;
}

/*
 * g with the jobs taken out of the path: each arc from a job to a task leaves the source instead,
 * at the cost of both arcs, and the source's arcs to the jobs keep their place with capacity 0.
 * Where every job's tasks take all it receives (the source's arcs and the jobs' arcs full in
 * every feasible flow) this is the same problem with the same optimal cost, the same vertices
 * and arcs in the same order (the same pricing order), and its source's arcs hold exactly its
 * supply, which every version of the cold start fills.
 */
static struct hrm_flow *jobs_bypassed(const struct hrm_flow *g, int32_t source)
{
    int32_t n = hrm_flow_vertices(g), m = hrm_flow_arcs(g);
    int64_t *via = hrm_alloc(sizeof(int64_t) * (size_t)n); /* the source's arc cost, per job */
    for (int32_t v = 0; v < n; v++)
        via[v] = -1;
    for (int32_t a = 0; a < m; a++)
        if (hrm_flow_arc_from(g, a) == source)
            via[hrm_flow_arc_to(g, a)] = hrm_flow_arc_cost(g, a);
    struct hrm_flow *h = hrm_flow_new(n, m);
    for (int32_t v = 0; v < n; v++)
        cr_assert_eq(hrm_flow_add_vertex(h, hrm_flow_supply(g, v)), v);
    for (int32_t a = 0; a < m; a++) {
        int32_t u = hrm_flow_arc_from(g, a), v = hrm_flow_arc_to(g, a);
        int64_t cap = hrm_flow_arc_capacity(g, a), cost = hrm_flow_arc_cost(g, a);
        if (u == source)
            cap = 0;
        else if (via[u] >= 0)
            u = source, cost += via[hrm_flow_arc_from(g, a)];
        cr_assert_eq(hrm_flow_add_arc(h, u, v, cap, cost), a);
    }
    hrm_free(via);
    return h;
}

/*
 * Rack-aggregated graphs where every GPU gets a task (bench/flow-vs-lemon's p1-rack M shape: as
 * many tasks as GPUs, no job with more tasks than its share), so that every feasible flow fills
 * the source's arcs and every job's arcs to its tasks (and every machine's arc to the sink).  The
 * cold start fills them, so the simplex takes about the pivots it takes on the same problem with
 * the jobs bypassed (jobs_bypassed: the source's arcs lead to the tasks themselves): over the
 * family, fewer than half a pivot more per task (0.1 measured).  Filling the source's arcs alone
 * brought every job's arcs in by pivots and re-hung tasks again: 1.5 more per task.  Every
 * answer is held to shortest paths and cost scaling, and the two forms to one cost.
 */
Test(simplex_filled, every_gpu_taken_pivots_as_if_the_jobs_were_bypassed)
{
    static const long long shapes[][4] = {
        /* GPUs, jobs, tasks per job, GPUs per machine */
        {400, 40, 10, 4}, {800, 80, 10, 4}, {960, 24, 40, 8}, {600, 150, 4, 2}, {1200, 120, 10, 4},
    };
    int64_t pivots = 0, bypassed = 0, tasks = 0;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        const long long *s = shapes[i];
        for (uint64_t seed = 1; seed <= 3; seed++) {
            char what[160];
            snprintf(what, sizeof(what), "%lld GPUs (%lld per machine), %lld jobs x %lld, seed %llu",
                     s[0], s[3], s[1], s[2], (unsigned long long)seed);
            struct hrm_flow *g = rack_graph(s[0], s[1], s[2], s[3], seed);
            cr_assert_gt(hrm_flow_supply(g, 0), 0, "%s: vertex 0 is the source", what);
            int64_t p = simplex_matches_others(g, false, what);
            struct hrm_flow *h = jobs_bypassed(g, 0);
            int64_t q = simplex_matches_others(h, false, what);
            cr_assert_eq(hrm_flow_total_cost(h), hrm_flow_total_cost(g), "%s: one problem", what);
            cr_log_info("%s: %lld pivots, %lld with the jobs bypassed", what, (long long)p,
                        (long long)q);
            pivots += p, bypassed += q, tasks += s[1] * s[2];
            hrm_flow_free(h);
            hrm_flow_free(g);
        }
    }
    cr_assert_lt(2 * (pivots - bypassed), tasks,
                 "%lld pivots against %lld with the jobs bypassed, for %lld tasks",
                 (long long)pivots, (long long)bypassed, (long long)tasks);
}

/* Splits total into k >= 1 parts, each >= 0, into part[0 .. k). */
static void split(struct hrm_rng *rng, int64_t total, int32_t k, int64_t *part)
{
    for (int32_t i = 0; i < k; i++)
        part[i] = 0;
    for (int64_t u = 0; u < total; u++)
        part[hrm_rng_below(rng, (uint64_t)k)]++;
}

/*
 * A layered random graph full of arcs that every feasible flow fills, or nearly: sources whose
 * arcs hold exactly their supply (or one unit more), chains of vertices whose one out-arc holds
 * exactly what their in-arc brings, sinks whose in-arcs hold exactly their demand (or more), so
 * that the cold start fills arcs down from the sources and up from the sinks and the two meet;
 * with arcs back a layer, self-loops, zero capacities, parallel arcs, and supplies that cannot
 * always be met.  Costs from 3 values or from 1,000.
 */
static struct hrm_flow *forced_graph(uint64_t seed)
{
    struct hrm_rng rng;
    hrm_rng_seed(&rng, seed);
    int32_t layers = 3 + (int32_t)hrm_rng_below(&rng, 3), width = 2 + (int32_t)hrm_rng_below(&rng, 5);
    int64_t costs = seed % 2 ? 3 : 1000;
    struct hrm_flow *g = hrm_flow_new(layers * width, 8 * layers * width);
    for (int32_t v = 0; v < layers * width; v++)
        hrm_flow_add_vertex(g, 0);
#define AT(l, i) ((l) * width + (i))
#define COST() ((int64_t)hrm_rng_below(&rng, (uint64_t)costs))
    int64_t part[8], total = 0;
    for (int32_t i = 0; i < width; i++) { /* the sources: their arcs hold their supply */
        int64_t s = 1 + (int64_t)hrm_rng_below(&rng, 6);
        int32_t k = 1 + (int32_t)hrm_rng_below(&rng, 3);
        hrm_flow_set_supply(g, AT(0, i), s);
        total += s;
        split(&rng, s, k, part);
        part[0] += hrm_rng_below(&rng, 3) == 0; /* sometimes one unit of room: not forced */
        for (int32_t j = 0; j < k; j++)
            hrm_flow_add_arc(g, AT(0, i), AT(1, (int32_t)hrm_rng_below(&rng, (uint64_t)width)),
                             part[j], COST());
    }
    for (int32_t l = 1; l + 1 < layers; l++)
        for (int32_t i = 0; i < width; i++) {
            int32_t k = 1 + (int32_t)hrm_rng_below(&rng, 3);
            for (int32_t j = 0; j < k; j++)
                hrm_flow_add_arc(g, AT(l, i),
                                 AT(l + 1, (int32_t)hrm_rng_below(&rng, (uint64_t)width)),
                                 1 + (int64_t)hrm_rng_below(&rng, 8), COST());
            if (hrm_rng_below(&rng, 4) == 0) /* back a layer */
                hrm_flow_add_arc(g, AT(l, i),
                                 AT(l - 1, (int32_t)hrm_rng_below(&rng, (uint64_t)width)),
                                 (int64_t)hrm_rng_below(&rng, 4), COST());
        }
    /* the sinks: the supply split among them; some take exactly their in-arcs' capacity */
    int64_t *demand = hrm_calloc((size_t)width, sizeof(int64_t));
    split(&rng, total, width, demand);
    for (int32_t i = 0; i < width; i++) {
        int32_t v = AT(layers - 1, i);
        hrm_flow_set_supply(g, v, -demand[i]);
        if (demand[i] > 0 && hrm_rng_below(&rng, 2) == 0) {
            int32_t k = 1 + (int32_t)hrm_rng_below(&rng, 3);
            split(&rng, demand[i], k, part);
            for (int32_t j = 0; j < k; j++)
                hrm_flow_add_arc(g, AT(layers - 2, (int32_t)hrm_rng_below(&rng, (uint64_t)width)),
                                 v, part[j], COST());
        }
    }
    hrm_free(demand);
    int32_t n = layers * width, m = hrm_flow_arcs(g);
    for (int32_t x = 0; x < 3; x++) { /* a self-loop, a zero capacity, a parallel arc */
        int32_t v = (int32_t)hrm_rng_below(&rng, (uint64_t)n);
        hrm_flow_add_arc(g, v, v, 1 + (int64_t)hrm_rng_below(&rng, 3), COST());
        hrm_flow_add_arc(g, v, (int32_t)hrm_rng_below(&rng, (uint64_t)n), 0, COST());
        int32_t a = (int32_t)hrm_rng_below(&rng, (uint64_t)m);
        hrm_flow_add_arc(g, hrm_flow_arc_from(g, a), hrm_flow_arc_to(g, a),
                         hrm_flow_arc_capacity(g, a), COST());
    }
#undef COST
#undef AT
    return g;
}

/* Layered graphs where the cold start's filled arcs run into each other, audited pivot by pivot:
 * the simplex, shortest paths and cost scaling give one certified cost, or all find the supplies
 * cannot be met. */
Test(simplex_filled, filled_arcs_meeting_from_both_ends_agree_with_the_other_engines)
{
    int feasible = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        char what[48];
        snprintf(what, sizeof(what), "layered graph, seed %llu", (unsigned long long)seed);
        struct hrm_flow *g = forced_graph(seed);
        simplex_matches_others(g, true, what);
        struct hrm_error err = {{0}};
        hrm_flow_reset(g);
        hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
        feasible += hrm_flow_solve(g, &err) == 0;
        hrm_flow_free(g);
    }
    /* both kinds are exercised */
    cr_assert(feasible > 30 && feasible < 270, "%d of 300 feasible", feasible);
}
