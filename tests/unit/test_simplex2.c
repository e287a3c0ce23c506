/* Network simplex: every basis audited pivot by pivot (tree links, thread, sizes, bounds,
 * strong feasibility) on random families and degenerate graphs, and each optimum held to
 * shortest paths and cost scaling, cold, warm and in the maximum-flow form. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "flow/flow_private.h"
#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/flowgen.h"
#include "hrm/rng.h"
#include "test_flowarr.h"

TestSuite(simplex2);

/* Solves g (afresh when `fresh`) with algo and returns the solve's code; on success the
 * answer must be a certified optimum (test_flowarr.h's certified_cost). */
static int certified(struct hrm_flow *g, enum hrm_flow_algo algo, bool fresh, const char *what)
{
    if (fresh)
        hrm_flow_reset(g);
    hrm_flow_set_algo(g, algo);
    struct hrm_error err = {{0}};
    int rc = hrm_flow_solve(g, &err);
    if (rc != 0)
        cr_assert_eq(rc, -HRM_EINFEASIBLE, "%s, engine %d: %s", what, (int)algo, err.text);
    else
        certified_cost(g, -1, -1);
    return rc;
}

/* The simplex from the state g is in (warm when it can be), every basis audited; then the
 * same answer (cost, or infeasible) as shortest paths and cost scaling from scratch. */
static void simplex_agrees(struct hrm_flow *g, bool fresh, const char *what)
{
    flow_simplex_audit(g, true);
    int rc = certified(g, HRM_FLOW_SIMPLEX, fresh, what);
    int64_t checks = 0;
    const char *why = flow_simplex_audit_failure(g, &checks);
    cr_assert_null(why, "%s: %s", what, why);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.simplex, "%s: the simplex ran", what);
    cr_assert_eq(checks, st.phases + 1, "%s: %lld audits for %lld pivots", what, (long long)checks,
                 (long long)st.phases);
    int64_t cost = rc == 0 ? hrm_flow_total_cost(g) : 0;
    flow_simplex_audit(g, false);
    enum hrm_flow_algo others[] = {HRM_FLOW_SSP, HRM_FLOW_SCALING};
    for (int i = 0; i < 2; i++) {
        int orc = certified(g, others[i], true, what);
        cr_assert_eq(orc, rc, "%s: simplex %d, engine %d %d", what, rc, (int)others[i], orc);
        if (rc == 0)
            cr_assert_eq(hrm_flow_total_cost(g), cost, "%s: simplex %lld, engine %d %lld", what,
                         (long long)cost, (int)others[i], (long long)hrm_flow_total_cost(g));
    }
}

/* A small instance of a bench family (k picks the family), seed s. */
static struct hrm_flow *family(int k, uint64_t s)
{
    static const enum hrm_flowgen_family fam[] = {HRM_FLOWGEN_NETGEN, HRM_FLOWGEN_GRIDGEN,
                                                  HRM_FLOWGEN_GOTO, HRM_FLOWGEN_P1};
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(fam[k], 'S', &p);
    p.seed = s;
    if (k == 0)
        p.nodes = 150, p.arcs = 1200, p.sources = 6, p.sinks = 7, p.supply = 3000;
    if (k == 1)
        p.rows = 9, p.cols = 11, p.arcs = 600, p.sources = 4, p.sinks = 3, p.supply = 2000;
    if (k == 2)
        p.rows = 9, p.cols = 10, p.arcs = 720, p.supply = 1 << 14;
    if (k == 3)
        p.p1.gpus = 120, p.p1.jobs = 8, p.p1.tasks_per_job = 12, p.p1.per_gpu = (int)(s % 2);
    struct hrm_flow *g = NULL;
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flowgen_build(fam[k], &p, &g, &err), 0, "family %d: %s", k, err.text);
    return g;
}

Test(simplex2, every_basis_sound_and_every_optimum_shared_on_the_bench_families)
{
    for (int k = 0; k < 4; k++) {
        for (uint64_t s = 1; s <= 6; s++) {
            struct hrm_flow *g = family(k, s);
            char what[64];
            snprintf(what, sizeof(what), "family %d seed %llu", k, (unsigned long long)s);
            simplex_agrees(g, true, what);
            hrm_flow_free(g);
        }
    }
}

/*
 * Degenerate graphs, where most pivots move no flow and ties decide the
 * leaving arc: costs all 0, all equal, or 0/1; capacities all 1 (tight: the
 * supplies fill whole cuts) or 1..3; arcs both ways (zero-cost cycles),
 * parallel arcs and self-loops; every fifth seed a demand no arc reaches.
 */
static struct hrm_flow *degenerate(uint64_t seed, int kind)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, seed * 7 + (uint64_t)kind);
    int32_t n = 30 + (int32_t)hrm_rng_below(&r, 60);
    struct hrm_flow *g = hrm_flow_new(0, 0);
    for (int32_t v = 0; v < n; v++)
        hrm_flow_add_vertex(g, 0);
    for (int32_t k = 0; k < 5 * n; k++) {
        int32_t u = (int32_t)hrm_rng_below(&r, (uint64_t)n), v = (int32_t)hrm_rng_below(&r, (uint64_t)n);
        int64_t cost = kind == 0 ? 0 : kind == 1 ? 5 : (int64_t)hrm_rng_below(&r, 2);
        int64_t cap = kind == 3 ? 1 : 1 + (int64_t)hrm_rng_below(&r, 3);
        hrm_flow_add_arc(g, u, v, cap, cost);
        if (k % 3 == 0)
            hrm_flow_add_arc(g, v, u, cap, cost);
    }
    /* sources among the first vertices, sinks among the last: with unit
     * capacities the supply is near what the cut between them can carry */
    for (int32_t k = 0; k < n / 5; k++) {
        int64_t b = 1 + (int64_t)hrm_rng_below(&r, 3);
        hrm_flow_set_supply(g, k, hrm_flow_supply(g, k) + b);
        hrm_flow_set_supply(g, n - 1 - k, hrm_flow_supply(g, n - 1 - k) - b);
    }
    if (seed % 5 == 0) {
        hrm_flow_add_vertex(g, -1);
        hrm_flow_set_supply(g, 0, hrm_flow_supply(g, 0) + 1);
    }
    return g;
}

Test(simplex2, degenerate_ties_zero_costs_and_tight_capacities)
{
    for (uint64_t s = 1; s <= 15; s++) {
        for (int kind = 0; kind < 4; kind++) {
            struct hrm_flow *g = degenerate(s, kind);
            char what[64];
            snprintf(what, sizeof(what), "degenerate kind %d seed %llu", kind,
                     (unsigned long long)s);
            simplex_agrees(g, true, what);
            hrm_flow_free(g);
        }
    }
}

/*
 * Warm bases: after each round of changes a scheduler makes to a solved graph
 * (costs, capacities cut to 0 as when a task ends, capacities raised, supply
 * moved between two vertices) the simplex re-solves from its last basis, every
 * basis audited, and must match the other engines from scratch on the same graph.
 */
Test(simplex2, warm_bases_after_cost_capacity_and_supply_changes)
{
    for (int k = 0; k < 3; k++) {
        for (uint64_t s = 1; s <= 4; s++) {
            struct hrm_flow *g = family(k, s), *twin = family(k, s);
            struct hrm_rng r;
            hrm_rng_seed(&r, 100 + s);
            flow_simplex_audit(g, true);
            char what[80];
            snprintf(what, sizeof(what), "family %d seed %llu cold", k, (unsigned long long)s);
            cr_assert_eq(certified(g, HRM_FLOW_SIMPLEX, true, what), 0, "%s", what);
            int32_t m = hrm_flow_arcs(g), n = hrm_flow_vertices(g);
            int warm = 0;
            for (int round = 0; round < 8; round++) {
                for (int c = 0; c < 4; c++) {
                    int32_t a = (int32_t)hrm_rng_below(&r, (uint64_t)m);
                    int64_t cap = hrm_flow_arc_capacity(g, a), cost = hrm_flow_arc_cost(g, a);
                    int how = (int)hrm_rng_below(&r, 3);
                    if (how == 0)
                        cost = (int64_t)hrm_rng_below(&r, 1000);
                    else if (how == 1 && hrm_flow_arc_flow(g, a) > 0)
                        cap = 0;
                    else
                        cap += 1 + (int64_t)hrm_rng_below(&r, 50);
                    cr_assert_eq(hrm_flow_set_arc(g, a, cap, cost), 0);
                    cr_assert_eq(hrm_flow_set_arc(twin, a, cap, cost), 0);
                }
                int32_t u = (int32_t)hrm_rng_below(&r, (uint64_t)n);
                int32_t v = (int32_t)hrm_rng_below(&r, (uint64_t)n);
                int64_t b = (int64_t)hrm_rng_below(&r, 4);
                hrm_flow_set_supply(g, u, hrm_flow_supply(g, u) + b);
                hrm_flow_set_supply(g, v, hrm_flow_supply(g, v) - b);
                hrm_flow_set_supply(twin, u, hrm_flow_supply(twin, u) + b);
                hrm_flow_set_supply(twin, v, hrm_flow_supply(twin, v) - b);
                snprintf(what, sizeof(what), "family %d seed %llu round %d", k,
                         (unsigned long long)s, round);
                int rc = certified(g, HRM_FLOW_SIMPLEX, false, what);
                const char *why = flow_simplex_audit_failure(g, NULL);
                cr_assert_null(why, "%s: %s", what, why);
                struct hrm_flow_stats st;
                hrm_flow_stats(g, &st);
                warm += st.warm;
                int orc = certified(twin, HRM_FLOW_SSP, true, what);
                cr_assert_eq(orc, rc, "%s: simplex %d, shortest paths %d", what, rc, orc);
                if (rc != 0)
                    break; /* the moved supply found no route: the basis is gone */
                cr_assert_eq(hrm_flow_total_cost(g), hrm_flow_total_cost(twin),
                             "%s: warm simplex %lld, shortest paths %lld", what,
                             (long long)hrm_flow_total_cost(g),
                             (long long)hrm_flow_total_cost(twin));
            }
            cr_assert_gt(warm, 0, "family %d seed %llu: some re-solve was warm", k,
                         (unsigned long long)s);
            hrm_flow_free(g);
            hrm_flow_free(twin);
        }
    }
}

/* The maximum-flow form (the virtual arc t -> s at cost -BIG): the simplex's value and cost
 * equal shortest paths', with every basis audited. */
Test(simplex2, maximum_flow_form_matches_shortest_paths)
{
    for (uint64_t s = 1; s <= 10; s++) {
        struct hrm_flow *g = degenerate(s, (int)(s % 4));
        int32_t n = hrm_flow_vertices(g), src = 0, snk = n - 1;
        for (int32_t v = 0; v < n; v++)
            hrm_flow_set_supply(g, v, 0);
        struct hrm_error err = {{0}};
        int64_t value[2], cost[2];
        enum hrm_flow_algo algo[2] = {HRM_FLOW_SIMPLEX, HRM_FLOW_SSP};
        for (int i = 0; i < 2; i++) {
            hrm_flow_reset(g);
            hrm_flow_set_algo(g, algo[i]);
            flow_simplex_audit(g, i == 0);
            cr_assert_eq(hrm_flow_solve_max(g, src, snk, &err), 0, "seed %llu: %s",
                         (unsigned long long)s, err.text);
            value[i] = hrm_flow_value(g);
            cost[i] = hrm_flow_total_cost(g);
            const char *why = flow_simplex_audit_failure(g, NULL);
            cr_assert_null(why, "seed %llu: %s", (unsigned long long)s, why);
        }
        cr_assert_eq(value[0], value[1], "seed %llu: value %lld against %lld",
                     (unsigned long long)s, (long long)value[0], (long long)value[1]);
        cr_assert_eq(cost[0], cost[1], "seed %llu: cost %lld against %lld", (unsigned long long)s,
                     (long long)cost[0], (long long)cost[1]);
        hrm_flow_free(g);
    }
}
