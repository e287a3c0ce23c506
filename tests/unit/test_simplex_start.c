/* Network simplex: the cold start's supplies sent down the source's arcs (cold_supplies), the
 * per-vertex copy of the tree arcs' flows and capacities, and the smaller pricing blocks on
 * graphs with few distinct costs, each basis audited pivot by pivot and each optimum held to
 * shortest paths and cost scaling. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "flow/flow_private.h"
#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/rng.h"
#include "test_flowarr.h"

TestSuite(simplex_start);

/*
 * A scheduler's source: supply k over k arcs of capacity 1 to tasks, each task with an arc to
 * the sink and a dearer one to an `unscheduled` vertex.  The source's arcs hold exactly its
 * supply, so the cold start sends it down them and no pivot brings them in: at most 3k/2
 * pivots (1.0-1.4 k measured; the star start took 2k and more, each source arc entering and
 * most tasks' arcs twice).
 */
Test(simplex_start, a_source_whose_arcs_hold_its_supply_starts_with_them_full)
{
    for (int32_t k = 10; k <= 400; k *= 2) {
        struct hrm_flow *g = hrm_flow_new(k + 3, 3 * k + 1);
        int32_t S = hrm_flow_add_vertex(g, k), T = hrm_flow_add_vertex(g, -k);
        int32_t U = hrm_flow_add_vertex(g, 0);
        for (int32_t i = 0; i < k; i++) {
            int32_t t = hrm_flow_add_vertex(g, 0);
            cr_assert(hrm_flow_add_arc(g, S, t, 1, 0) >= 0);
            cr_assert(hrm_flow_add_arc(g, t, T, 1, 1 + i % 5) >= 0);
            cr_assert(hrm_flow_add_arc(g, t, U, 1, 20) >= 0);
        }
        cr_assert(hrm_flow_add_arc(g, U, T, k, 0) >= 0);
        char what[48];
        snprintf(what, sizeof(what), "%d tasks", k);
        int64_t pivots = simplex_matches_others(g, true, what);
        cr_assert(2 * pivots <= 3 * k, "%s: %lld pivots", what, (long long)pivots);
        hrm_flow_free(g);
    }
}

/*
 * Random graphs whose supply vertices fan out unevenly: arcs that hold part of the supply, arcs
 * too large to saturate, arcs into demands and into other supply vertices, self-loops, zero
 * capacities, parallel arcs, and supplies that may not be routable; costs from a few values
 * (the smaller pricing blocks) or from many.  The simplex's every basis is sound (the audit
 * checks the tree arcs' copies of their capacities too) and its optimum is the other engines'.
 */
Test(simplex_start, uneven_fan_outs_few_or_many_costs_agree_with_the_other_engines)
{
    struct hrm_rng rng;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        hrm_rng_seed(&rng, seed);
        int32_t n = 8 + (int32_t)hrm_rng_below(&rng, 60), nsup = 1 + (int32_t)(seed % 4);
        int64_t costs = seed % 2 ? 3 : 5000; /* few distinct costs, or many */
        struct hrm_flow *g = hrm_flow_new(n, 8 * n);
        int64_t left = 0;
        for (int32_t v = 0; v < n; v++)
            hrm_flow_add_vertex(g, 0);
        for (int32_t i = 0; i < nsup; i++) {
            int32_t s = (int32_t)hrm_rng_below(&rng, (uint64_t)n);
            int64_t b = 1 + (int64_t)hrm_rng_below(&rng, 40);
            hrm_flow_set_supply(g, s, hrm_flow_supply(g, s) + b);
            left += b;
            for (int32_t a = 0, fan = 2 + (int32_t)hrm_rng_below(&rng, 12); a < fan; a++) {
                int32_t w = (int32_t)hrm_rng_below(&rng, (uint64_t)n);
                int64_t cap = (int64_t)hrm_rng_below(&rng, 2 * (uint64_t)b / 3 + 2);
                cr_assert(hrm_flow_add_arc(g, s, w, cap, (int64_t)hrm_rng_below(&rng, costs)) >= 0);
            }
        }
        while (left > 0) { /* the demands */
            int32_t t = (int32_t)hrm_rng_below(&rng, (uint64_t)n);
            int64_t d = 1 + (int64_t)hrm_rng_below(&rng, (uint64_t)left);
            hrm_flow_set_supply(g, t, hrm_flow_supply(g, t) - d);
            left -= d;
        }
        for (int32_t a = 0; a < 5 * n; a++) {
            int32_t u = (int32_t)hrm_rng_below(&rng, (uint64_t)n);
            int32_t w = (int32_t)hrm_rng_below(&rng, (uint64_t)n);
            int64_t cap = (int64_t)hrm_rng_below(&rng, 30);
            cr_assert(hrm_flow_add_arc(g, u, w, cap, (int64_t)hrm_rng_below(&rng, costs)) >= 0);
        }
        char what[48];
        snprintf(what, sizeof(what), "seed %llu", (unsigned long long)seed);
        simplex_matches_others(g, true, what);
        hrm_flow_free(g);
    }
}

/* Scheduling graphs of several shapes (per GPU and per machine, few distinct costs: the
 * smaller blocks and the source's arcs full from the start), audited and shared. */
Test(simplex_start, scheduling_graphs_of_several_shapes_agree_with_the_other_engines)
{
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct hrm_flowgen_sched s = {0};
        p1_shape_of(seed, seed % 2, (struct p1_range){40, 37, 160}, (struct p1_range){2, 3, 9},
                    (struct p1_range){1, 7, 25}, (struct p1_range){2, 3, 6}, &s, NULL);
        cr_assert_leq(flow_distinct_costs(s.g), FLOW_FEW_COSTS, "seed %llu: few distinct costs",
                      (unsigned long long)seed);
        /* the supply form, as the bench writes it: the maximum flow as fixed supplies */
        hrm_flow_set_algo(s.g, HRM_FLOW_SSP);
        struct hrm_error err = {{0}};
        cr_assert_eq(hrm_flow_solve_max(s.g, s.S, s.T, &err), 0, "%s", err.text);
        int64_t value = hrm_flow_value(s.g);
        hrm_flow_reset(s.g);
        hrm_flow_set_supply(s.g, s.S, value);
        hrm_flow_set_supply(s.g, s.T, -value);
        char what[48];
        snprintf(what, sizeof(what), "P1 seed %llu", (unsigned long long)seed);
        simplex_matches_others(s.g, true, what);
        hrm_flowgen_sched_fini(&s);
    }
}
