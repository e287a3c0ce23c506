/* Arc fixing in cost scaling (scale.c): the flow the phases leave, with the arcs they fixed
 * taken out of the scans, is already optimal; the final answer is certified and equals the
 * simplex's and shortest paths'; warm re-solves after a fixing solve stay exact.  And the first
 * phase without Dinic's first flow: it never gives up on feasible supplies, always on
 * infeasible ones (which then fail as before). */
#include <criterion/criterion.h>

#include "flow/flow_private.h"
#include "test_flowarr.h"

/*
 * Solves g from scratch by cost scaling (fixing on or off) and returns the certified cost, or
 * INT64_MIN when the solve failed (its code in *rc).  *phase_cost: the cost of the flow the
 * phases left, before the potentials were made exact (settle() may move flow only between
 * optima); *fixed: arc pairs fixed.  The first phase ran without Dinic's flow unless it gave
 * up (then *gave_up is 1) or the problem is a maximum flow.
 */
static int64_t scaled(struct hrm_flow *g, int32_t S, int32_t T, unsigned off, int *rc,
                      int64_t *phase_cost, int64_t *fixed, int64_t *gave_up)
{
    hrm_flow_reset(g);
    hrm_flow_set_algo(g, HRM_FLOW_SCALING);
    g->scale_off = off;
    g->scale_audit = true;
    g->scale_fixed = 0;
    g->scale_gave_up = 0;
    g->scale_phase_cost = INT64_MIN;
    struct hrm_error err = {{0}};
    *rc = S >= 0 ? hrm_flow_solve_max(g, S, T, &err) : hrm_flow_solve(g, &err);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.scaling, "the solve ran cost scaling");
    *phase_cost = g->scale_phase_cost;
    *fixed = g->scale_fixed;
    *gave_up = g->scale_gave_up;
    return *rc == 0 ? certified_cost(g, S, T) : INT64_MIN;
}

/* The optimum of g by the network simplex from scratch (INT64_MIN: infeasible). */
static int64_t simplex_cost(struct hrm_flow *g, int32_t S, int32_t T, int *rc)
{
    hrm_flow_reset(g);
    hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
    struct hrm_error err = {{0}};
    *rc = solve(g, S, T, &err);
    return *rc == 0 ? certified_cost(g, S, T) : INT64_MIN;
}

/*
 * Checks g: cost scaling with arc fixing gives the simplex's optimum (or the same failure), the
 * phases' own flow is optimal already (the fixing rule kept every optimum reachable), and the
 * same without fixing.  Returns the arc pairs fixed.
 */
static int64_t check_fixing(struct hrm_flow *g, int32_t S, int32_t T, const char *what)
{
    int src = 0, rcf = 0, rcn = 0;
    int64_t best = simplex_cost(g, S, T, &src);
    int64_t pc = 0, fixed = 0, pc_off = 0, fixed_off = 0, gave_up = 0, gave_up_off = 0;
    int64_t with = scaled(g, S, T, 0, &rcf, &pc, &fixed, &gave_up);
    cr_assert_eq(rcf, src, "%s: cost scaling returned %d, the simplex %d", what, rcf, src);
    int64_t without = scaled(g, S, T, FLOW_SCALE_NO_FIX, &rcn, &pc_off, &fixed_off, &gave_up_off);
    cr_assert_eq(rcn, src, "%s: without fixing %d, the simplex %d", what, rcn, src);
    cr_assert_eq(fixed_off, 0, "%s: fixing switched off fixed %lld", what, (long long)fixed_off);
    /* feasible supplies: the first phase routes them itself; infeasible: it gives up (when
     * there is a phase: some cost is not 0) and Dinic's flow finds the failure */
    bool phases = false;
    for (int32_t a = 0; a < hrm_flow_arcs(g); a++)
        phases |= hrm_flow_arc_cost(g, a) != 0 && hrm_flow_arc_capacity(g, a) > 0;
    int32_t nsup = 0, ndem = 0; /* one source and one sink: Dinic's flow first, as before */
    for (int32_t v = 0; v < hrm_flow_vertices(g); v++) {
        nsup += hrm_flow_supply(g, v) > 0;
        ndem += hrm_flow_supply(g, v) < 0;
    }
    int64_t want = S < 0 && src != 0 && phases && !(nsup == 1 && ndem == 1) ? 1 : 0;
    cr_assert_eq(gave_up, want, "%s: the first phase gave up %lld times, want %lld", what,
                 (long long)gave_up, (long long)want);
    cr_assert_eq(gave_up_off, want, "%s: without fixing it gave up %lld times", what,
                 (long long)gave_up_off);
    if (src != 0)
        return fixed;
    cr_assert_eq(with, best, "%s: with arc fixing %lld, simplex %lld", what, (long long)with,
                 (long long)best);
    cr_assert_eq(without, best, "%s: without arc fixing %lld, simplex %lld", what,
                 (long long)without, (long long)best);
    cr_assert_eq(pc, best, "%s: the phases left a flow of cost %lld, optimum %lld (%lld pairs fixed)",
                 what, (long long)pc, (long long)best, (long long)fixed);
    cr_assert_eq(pc_off, best, "%s: without fixing the phases left %lld, optimum %lld", what,
                 (long long)pc_off, (long long)best);
    struct hrm_flow *h = solved_copy(g, S, T, HRM_FLOW_SSP);
    cr_assert_eq(hrm_flow_total_cost(h), best, "%s: shortest paths %lld, simplex %lld", what,
                 (long long)hrm_flow_total_cost(h), (long long)best);
    hrm_flow_free(h);
    return fixed;
}

static struct hrm_flow *family(enum hrm_flowgen_family fam, uint64_t seed)
{
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(fam, 'S', &p);
    p.seed = seed;
    switch (fam) {
    case HRM_FLOWGEN_NETGEN:
        p.nodes = 300 + (long long)(seed % 5) * 40, p.sources = 3 + (long long)(seed % 9);
        p.sinks = 2 + (long long)(seed % 7), p.arcs = p.nodes * (4 + (long long)(seed % 4));
        p.supply = 500 + (long long)seed * 300;
        break;
    case HRM_FLOWGEN_GRIDGEN:
        p.rows = 10 + (long long)(seed % 6), p.cols = 12, p.sources = 5, p.sinks = 4;
        p.arcs = p.rows * p.cols * 6, p.supply = 3000;
        break;
    case HRM_FLOWGEN_GOTO:
        p.rows = 9 + (long long)(seed % 5), p.cols = 11;
        p.arcs = p.rows * p.cols * 8, p.supply = 1 << 16;
        break;
    case HRM_FLOWGEN_P1:
        p.p1.gpus = 160, p.p1.jobs = 10, p.p1.tasks_per_job = 18;
        p.p1.per_gpu = (int)(seed % 2);
        break;
    }
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    cr_assert_eq(hrm_flowgen_build(fam, &p, &g, &err), 0, "seed %llu: %s",
                 (unsigned long long)seed, err.text);
    return g;
}

/* netgen-, gridgen-, goto- and P1-shaped graphs, many seeds: fixing happens, and the flow
 * the phases leave is optimal, the final one certified, both equal to the simplex's. */
Test(csarc, the_phases_flow_is_optimal_with_arcs_fixed_on_every_family)
{
    static const struct {
        const char *name;
        enum hrm_flowgen_family fam;
    } fams[] = {{"netgen", HRM_FLOWGEN_NETGEN},
                {"gridgen", HRM_FLOWGEN_GRIDGEN},
                {"goto", HRM_FLOWGEN_GOTO},
                {"p1", HRM_FLOWGEN_P1}};
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        int64_t fixed = 0;
        for (uint64_t seed = 1; seed <= 10; seed++) {
            struct hrm_flow *g = family(fams[i].fam, seed);
            char what[64];
            snprintf(what, sizeof(what), "%s seed %llu", fams[i].name, (unsigned long long)seed);
            fixed += check_fixing(g, -1, -1, what);
            hrm_flow_free(g);
        }
        cr_assert_gt(fixed, 0, "%s: arc fixing fixed some arc", fams[i].name);
    }
}

/*
 * Random graphs of the hard kinds: costs over a wide range or tied ({0, 1}, all 0), unit or
 * small capacities, arcs both ways (zero-cost cycles), parallel arcs and self-loops, supplies
 * that are sometimes infeasible (a demand no arc reaches).  kind: 0 wide costs, 1 costs 0..1,
 * 2 all 0, 3 negative and positive costs.
 */
static struct hrm_flow *random_graph(uint64_t seed, int kind, bool unit, bool infeasible,
                                     int32_t nmin, int32_t nspan)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, seed * 7919 + (uint64_t)kind);
    int32_t n = nmin + (int32_t)hrm_rng_below(&r, (uint64_t)nspan);
    struct hrm_flow *g = hrm_flow_new(n, 8 * n);
    for (int32_t v = 0; v < n; v++)
        hrm_flow_add_vertex(g, 0);
    for (int32_t k = 0, m = (3 + (int32_t)hrm_rng_below(&r, 6)) * n; k < m; k++) {
        int32_t u = (int32_t)hrm_rng_below(&r, (uint64_t)n);
        int32_t v = k % 17 == 0 ? u : (int32_t)hrm_rng_below(&r, (uint64_t)n);
        int64_t cap = unit ? 1 : 1 + (int64_t)hrm_rng_below(&r, 30);
        int64_t cost = kind == 0   ? (int64_t)hrm_rng_below(&r, 100000)
                       : kind == 1 ? (int64_t)hrm_rng_below(&r, 2)
                       : kind == 2 ? 0
                                   : (int64_t)hrm_rng_below(&r, 2001) - 1000;
        hrm_flow_add_arc(g, u, v, cap, cost);
        if (k % 3 == 0)
            hrm_flow_add_arc(g, v, u, cap, kind == 3 ? -cost : cost);
    }
    for (int32_t k = 0; k < n / 5; k++) {
        int64_t b = 1 + (int64_t)hrm_rng_below(&r, unit ? 2 : 20);
        int32_t s = (int32_t)hrm_rng_below(&r, (uint64_t)n), t = (int32_t)hrm_rng_below(&r, (uint64_t)n);
        hrm_flow_set_supply(g, s, hrm_flow_supply(g, s) + b);
        hrm_flow_set_supply(g, t, hrm_flow_supply(g, t) - b);
    }
    if (infeasible) { /* a demand no arc reaches, or one that an arc of capacity 1 feeds */
        int32_t lone = hrm_flow_add_vertex(g, -3);
        hrm_flow_set_supply(g, 0, hrm_flow_supply(g, 0) + 3);
        if (seed % 2)
            hrm_flow_add_arc(g, 1, lone, 1, (int64_t)hrm_rng_below(&r, 50));
    }
    return g;
}

/* One random graph through check_fixing; returns the pairs fixed. */
static int64_t check_random(uint64_t seed, int kind, bool unit, bool infeasible, int32_t nmin,
                            int32_t nspan)
{
    struct hrm_flow *g = random_graph(seed, kind, unit, infeasible, nmin, nspan);
    char what[96];
    snprintf(what, sizeof(what), "random seed %llu kind %d, %d vertices%s%s",
             (unsigned long long)seed, kind, hrm_flow_vertices(g), unit ? " unit" : "",
             infeasible ? " infeasible" : "");
    int64_t fixed = check_fixing(g, -1, -1, what);
    hrm_flow_free(g);
    return fixed;
}

/* 40-120 vertices, every kind; and many tiny graphs (6-20 vertices), where a cycle through a
 * fixed arc can be nearly as long as the bound allows. */
Test(csarc, tied_unit_negative_infeasible_and_tiny_random_graphs)
{
    int64_t fixed = 0, tiny = 0;
    for (uint64_t seed = 1; seed <= 40; seed++)
        for (int kind = 0; kind < 4; kind++)
            fixed += check_random(seed, kind, seed % 3 == 0, seed % 7 == 0 || seed % 11 == 0, 40, 80);
    for (uint64_t seed = 1; seed <= 400; seed++)
        tiny += check_random(seed, seed % 2 ? 0 : 3, seed % 5 == 0, false, 6, 15);
    cr_assert_gt(fixed, 0, "arc fixing fixed some arc");
    cr_assert_gt(tiny, 0, "arc fixing fixed some arc of a tiny graph");
}

/* Maximum flow (the virtual arc kept out of the phases) on random graphs: the same value and
 * cost as the simplex, with arcs fixed. */
Test(csarc, min_cost_max_flow_with_arcs_fixed)
{
    int64_t fixed = 0;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        struct hrm_flow *g = random_graph(seed, seed % 2 ? 0 : 3, seed % 3 == 0, false, 40, 80);
        int32_t n = hrm_flow_vertices(g);
        for (int32_t v = 0; v < n; v++)
            hrm_flow_set_supply(g, v, 0);
        char what[64];
        snprintf(what, sizeof(what), "max flow seed %llu", (unsigned long long)seed);
        int rc = 0;
        simplex_cost(g, 0, n - 1, &rc);
        int64_t value = rc == 0 ? hrm_flow_value(g) : -1;
        fixed += check_fixing(g, 0, n - 1, what);
        cr_assert_eq(hrm_flow_value(g), value, "%s: value %lld, simplex %lld", what,
                     (long long)hrm_flow_value(g), (long long)value);
        hrm_flow_free(g);
    }
    cr_assert_gt(fixed, 0, "arc fixing fixed some arc");
}

/* After a solve with arcs fixed, warm re-solves (costs, capacities and supplies changed, arcs
 * and vertices added) stay exact against from-scratch solves. */
Test(csarc, warm_re_solves_after_a_fixing_solve)
{
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct hrm_flow *g = family(seed % 2 ? HRM_FLOWGEN_NETGEN : HRM_FLOWGEN_GOTO, seed);
        int rc = 0;
        int64_t pc = 0, fixed = 0, gave_up = 0;
        scaled(g, -1, -1, 0, &rc, &pc, &fixed, &gave_up);
        cr_assert_eq(rc, 0);
        cr_assert_gt(fixed, 0, "seed %llu: arcs were fixed", (unsigned long long)seed);
        struct hrm_rng r;
        hrm_rng_seed(&r, seed);
        char what[64];
        for (int step = 0; step < 6; step++) {
            int32_t m = hrm_flow_arcs(g), n = hrm_flow_vertices(g);
            for (int k = 0; k < 1 + step * 3; k++) {
                int32_t a = (int32_t)hrm_rng_below(&r, (uint64_t)m);
                hrm_flow_set_arc(g, a, hrm_flow_arc_capacity(g, a) + (int64_t)hrm_rng_below(&r, 5),
                                 (int64_t)hrm_rng_below(&r, 10000));
            }
            int32_t u = (int32_t)hrm_rng_below(&r, (uint64_t)n);
            int32_t w = hrm_flow_add_vertex(g, 0);
            hrm_flow_add_arc(g, u, w, 5, 3);
            hrm_flow_add_arc(g, w, (int32_t)hrm_rng_below(&r, (uint64_t)n), 5, 4);
            snprintf(what, sizeof(what), "seed %llu step %d", (unsigned long long)seed, step);
            expect_warm_optimal(g, -1, -1, what);
        }
        hrm_flow_free(g);
    }
}
