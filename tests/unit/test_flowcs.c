/* Cost scaling (scale.c) against the other engines: same optimum on random families, tied
 * costs, zero-cost cycles and infeasible supplies; and what auto runs on large graphs. */
#include <criterion/criterion.h>

#include "flow/flow_private.h"
#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/flowgen.h"
#include "hrm/rng.h"

/*
 * Solves g from scratch with algo; returns the solve's code.  On success the
 * answer is checked arc by arc: flow within [0, cap], every vertex balanced
 * against its supply, and the potentials a certificate (room at reduced cost
 * < 0 or flow at > 0 would mean a cheaper flow exists).
 */
static int solve_checked(struct hrm_flow *g, enum hrm_flow_algo algo, const char *what)
{
    hrm_flow_reset(g);
    hrm_flow_set_algo(g, algo);
    struct hrm_error err = {{0}};
    int rc = hrm_flow_solve(g, &err);
    if (rc != 0)
        return rc;
    int64_t *net = hrm_calloc((size_t)hrm_flow_vertices(g), sizeof(int64_t));
    for (int32_t a = 0, m = hrm_flow_arcs(g); a < m; a++) {
        int64_t x = hrm_flow_arc_flow(g, a), cap = hrm_flow_arc_capacity(g, a);
        int32_t u = hrm_flow_arc_from(g, a), v = hrm_flow_arc_to(g, a);
        int64_t rc_uv = hrm_flow_arc_cost(g, a) - hrm_flow_potential(g, v) + hrm_flow_potential(g, u);
        cr_assert(x >= 0 && x <= cap, "%s: arc %d carries %lld of %lld", what, a, (long long)x,
                  (long long)cap);
        cr_assert(!(x < cap && rc_uv < 0) && !(x > 0 && rc_uv > 0),
                  "%s: arc %d (flow %lld of %lld) at reduced cost %lld", what, a, (long long)x,
                  (long long)cap, (long long)rc_uv);
        net[u] += x;
        net[v] -= x;
    }
    for (int32_t v = 0; v < hrm_flow_vertices(g); v++)
        cr_assert_eq(net[v], hrm_flow_supply(g, v), "%s: vertex %d sends %lld, supply %lld", what, v,
                     (long long)net[v], (long long)hrm_flow_supply(g, v));
    hrm_free(net);
    return 0;
}

/* Cost scaling, the simplex and shortest paths agree on g (all succeed or all fail). */
static void agree(struct hrm_flow *g, const char *what)
{
    int rc = solve_checked(g, HRM_FLOW_SCALING, what);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.scaling, "%s: the solve ran cost scaling", what);
    int64_t cost = rc == 0 ? hrm_flow_total_cost(g) : 0;
    static const enum hrm_flow_algo others[] = {HRM_FLOW_SIMPLEX, HRM_FLOW_SSP};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        int orc = solve_checked(g, others[i], what);
        cr_assert_eq(orc, rc, "%s: cost scaling returned %d, engine %d returned %d", what, rc,
                     (int)others[i], orc);
        if (rc == 0)
            cr_assert_eq(hrm_flow_total_cost(g), cost, "%s: cost scaling %lld, engine %d %lld", what,
                         (long long)cost, (int)others[i], (long long)hrm_flow_total_cost(g));
    }
}

/* Small shapes of every family of the bench (P1 per GPU and per machine). */
static const struct shape {
    const char *name;
    enum hrm_flowgen_family fam;
    long long size[3]; /* netgen: nodes, sources, sinks; grids: rows, cols; p1: gpus, jobs, tasks */
    long long arcs, supply;
    int per_gpu;
} shapes[] = {
    {"netgen", HRM_FLOWGEN_NETGEN, {400, 12, 9}, 3200, 8000, 1},
    {"gridgen", HRM_FLOWGEN_GRIDGEN, {14, 13, 0}, 1000, 4000, 1},
    {"goto", HRM_FLOWGEN_GOTO, {13, 12, 0}, 8 * 156, 1 << 18, 1},
    {"p1", HRM_FLOWGEN_P1, {200, 12, 20}, 0, 0, 1},
    {"p1-rack", HRM_FLOWGEN_P1, {200, 12, 20}, 0, 0, 0},
};

static struct hrm_flow *build_shape(const struct shape *sh, uint64_t seed)
{
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(sh->fam, 'S', &p);
    p.seed = seed;
    switch (sh->fam) {
    case HRM_FLOWGEN_NETGEN:
        p.nodes = sh->size[0], p.sources = sh->size[1], p.sinks = sh->size[2];
        break;
    case HRM_FLOWGEN_GRIDGEN:
        p.sources = 6, p.sinks = 5;
        /* fall through */
    case HRM_FLOWGEN_GOTO:
        p.rows = sh->size[0], p.cols = sh->size[1];
        break;
    case HRM_FLOWGEN_P1:
        p.p1.gpus = sh->size[0], p.p1.jobs = sh->size[1], p.p1.tasks_per_job = sh->size[2];
        p.p1.per_gpu = sh->per_gpu;
        break;
    }
    if (sh->arcs)
        p.arcs = sh->arcs, p.supply = sh->supply;
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    cr_assert_eq(hrm_flowgen_build(sh->fam, &p, &g, &err), 0, "%s: %s", sh->name, err.text);
    return g;
}

/* Every family of the bench, several seeds: the same optimum from all three engines, and the
 * refinement's cycle cancelling is exercised (not only its skipped phases). */
Test(flowcs, same_optimum_as_the_simplex_and_shortest_paths_on_every_family)
{
    int64_t skipped = 0, cancelled = 0;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        for (uint64_t seed = 11; seed <= 16; seed++) {
            struct hrm_flow *g = build_shape(&shapes[i], seed);
            char what[64];
            snprintf(what, sizeof(what), "%s seed %llu", shapes[i].name, (unsigned long long)seed);
            g->scale_refined = g->scale_cancelled = 0;
            agree(g, what);
            skipped += g->scale_refined;
            cancelled += g->scale_cancelled;
            hrm_flow_free(g);
        }
    }
    cr_assert_gt(skipped, 0, "price refinement skipped some phase");
    cr_assert_gt(cancelled, 0, "price refinement cancelled some cycle of negative arcs");
}

/*
 * Random graphs whose costs tie: every cost in {0, 1} (or all 0), small
 * capacities, arcs both ways between many pairs (cycles of cost 0 everywhere),
 * parallel arcs and self-loops; supplies balanced but sometimes with no route
 * (an isolated demand), which every engine must call infeasible.
 */
static struct hrm_flow *tied(uint64_t seed, int32_t n, int max_cost, bool infeasible)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, seed);
    struct hrm_flow *g = hrm_flow_new(0, 0);
    for (int32_t v = 0; v < n; v++)
        hrm_flow_add_vertex(g, 0);
    for (int32_t k = 0; k < 6 * n; k++) {
        int32_t u = (int32_t)hrm_rng_below(&r, (uint64_t)n), v = (int32_t)hrm_rng_below(&r, (uint64_t)n);
        int64_t cap = 1 + (int64_t)hrm_rng_below(&r, 4), cost = (int64_t)hrm_rng_below(&r, (uint64_t)max_cost + 1);
        hrm_flow_add_arc(g, u, v, cap, cost);
        if (k % 2 == 0)
            hrm_flow_add_arc(g, v, u, cap, cost); /* a 2-cycle of cost 0 when cost is 0 */
    }
    /* units from the first vertices to the last ones */
    for (int32_t k = 0; k < n / 8; k++) {
        int64_t b = 1 + (int64_t)hrm_rng_below(&r, 3);
        hrm_flow_set_supply(g, k, hrm_flow_supply(g, k) + b);
        hrm_flow_set_supply(g, n - 1 - k, hrm_flow_supply(g, n - 1 - k) - b);
    }
    if (infeasible) { /* a demand no arc reaches */
        int32_t lone = hrm_flow_add_vertex(g, -2);
        hrm_flow_set_supply(g, 0, hrm_flow_supply(g, 0) + 2);
        (void)lone;
    }
    return g;
}

Test(flowcs, tied_costs_zero_cost_cycles_and_infeasible_supplies)
{
    for (uint64_t seed = 1; seed <= 12; seed++) {
        for (int max_cost = 0; max_cost <= 1; max_cost++) {
            bool infeasible = seed % 4 == 0;
            struct hrm_flow *g = tied(seed, 60 + (int32_t)seed * 7, max_cost, infeasible);
            char what[64];
            snprintf(what, sizeof(what), "tied seed %llu costs 0..%d%s", (unsigned long long)seed,
                     max_cost, infeasible ? " infeasible" : "");
            agree(g, what);
            if (infeasible) {
                struct hrm_error err = {{0}};
                hrm_flow_reset(g);
                hrm_flow_set_algo(g, HRM_FLOW_SCALING);
                cr_assert_eq(hrm_flow_solve(g, &err), -HRM_EINFEASIBLE, "%s: %s", what, err.text);
            }
            hrm_flow_free(g);
        }
    }
}

/* A netgen graph of `nodes` vertices with many distinct costs, solved by auto from scratch:
 * returns whether it ran cost scaling, after checking its cost against the simplex's. */
static bool auto_runs_scaling(long long nodes)
{
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(HRM_FLOWGEN_NETGEN, 'S', &p);
    p.seed = 3;
    p.nodes = nodes, p.arcs = 2 * nodes, p.sources = 20, p.sinks = 20, p.supply = 20000;
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    cr_assert_eq(hrm_flowgen_build(HRM_FLOWGEN_NETGEN, &p, &g, &err), 0, "%s", err.text);
    cr_assert_eq(solve_checked(g, HRM_FLOW_AUTO, "auto"), 0);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    int64_t cost = hrm_flow_total_cost(g);
    cr_assert_eq(solve_checked(g, HRM_FLOW_SIMPLEX, "simplex"), 0);
    cr_assert_eq(hrm_flow_total_cost(g), cost, "%lld vertices: auto %lld, simplex %lld", nodes,
                 (long long)cost, (long long)hrm_flow_total_cost(g));
    cr_assert(st.scaling || st.simplex, "%lld vertices: auto ran shortest paths", nodes);
    hrm_flow_free(g);
    return st.scaling;
}

/* Many distinct costs: the simplex on small graphs, cost scaling from 5,000 vertices on. */
Test(flowcs, auto_runs_cost_scaling_on_large_graphs_with_many_costs)
{
    cr_assert(!auto_runs_scaling(3000), "3,000 vertices: the simplex");
    cr_assert(auto_runs_scaling(6000), "6,000 vertices: cost scaling");
}
