/* Cost scaling as tuned against LEMON's CostScaling (scale.c, scale_route.c): the lean Dinic
 * that gives the phases their first flow (flow_route's unrestricted case) routes a maximum
 * flow; the phases run a
 * global price update every n + k relabels (k sources), not n + k^2; and on every family of
 * the bench, seeds 1-5 and more, the answer is certified by its potentials, equals the
 * simplex's and shortest paths', and the flow the phases left is optimal already. */
#include <criterion/criterion.h>

#include "flow/flow_private.h"
#include "flow_inst.h"
#include "test_flowarr.h"

enum { FAM_NETGEN, FAM_GRIDGEN, FAM_GOTO, FAM_P1, FAM_P1_RACK, NFAM };
static const char *const fam_name[NFAM] = {"netgen", "gridgen", "goto", "p1", "p1-rack"};

/* A small instance of the bench's family f (shapes vary with the seed). */
static struct hrm_flow *family(int f, uint64_t seed)
{
    static const enum hrm_flowgen_family gen[NFAM] = {HRM_FLOWGEN_NETGEN, HRM_FLOWGEN_GRIDGEN,
                                                      HRM_FLOWGEN_GOTO, HRM_FLOWGEN_P1,
                                                      HRM_FLOWGEN_P1};
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(gen[f], 'S', &p);
    p.seed = seed;
    long long k = (long long)(seed % 4);
    switch (f) {
    case FAM_NETGEN:
        p.nodes = 250 + 50 * k, p.sources = 4 + 3 * k, p.sinks = 3 + 2 * k;
        p.arcs = p.nodes * (5 + k), p.supply = 2000 + (long long)seed * 100;
        break;
    case FAM_GRIDGEN:
        p.rows = 10 + k, p.cols = 14, p.sources = 4 + k, p.sinks = 5;
        p.arcs = p.rows * p.cols * 6, p.supply = 4000;
        break;
    case FAM_GOTO:
        p.rows = 10 + k, p.cols = 12, p.arcs = p.rows * p.cols * 8, p.supply = 1 << 18;
        break;
    default:
        p.p1.gpus = 200, p.p1.jobs = 8 + k, p.p1.tasks_per_job = 20;
        p.p1.per_gpu = f == FAM_P1;
        break;
    }
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    cr_assert_eq(hrm_flowgen_build(gen[f], &p, &g, &err), 0, "%s seed %llu: %s", fam_name[f],
                 (unsigned long long)seed, err.text);
    return g;
}

/* ---- the first flow: flow_route(-1), the lean Dinic, routes a maximum flow ---- */

/* Puts g's residual graph (built by an earlier solve) at the zero flow with the supplies as
 * excesses, as cost scaling has it before routing them; returns the sources. */
static int32_t zero_flow(struct hrm_flow *g, int32_t *src)
{
    int32_t nr = g->first[g->n], nsrc = 0;
    for (int32_t r = 0; r < nr; r++)
        g->rcap[r] = g->rarc[r] >= 0 ? g->acap[g->rarc[r]] : 0;
    for (int32_t v = 0; v < g->n; v++) {
        g->ex[v] = g->supply[v];
        if (g->ex[v] > 0)
            src[nsrc++] = v;
    }
    return nsrc;
}

/* Routes g's supplies from the zero flow with flow_route(g, src, nsrc, -1) and checks that
 * the result is a flow (within capacities, the excesses what the arcs leave) and a maximum
 * one: no vertex with a deficit is reachable from one with excess over residual arcs.
 * Returns the units routed. */
static int64_t maximum_first_flow(struct hrm_flow *g, const char *what)
{
    struct hrm_error err = {{0}};
    hrm_flow_reset(g);
    hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
    (void)hrm_flow_solve(g, &err); /* lays the residual graph out (infeasible or not) */
    cr_assert(g->vpos < 0, "%s: supplies, no virtual arc", what);
    int32_t n = g->n;
    int32_t *src = hrm_alloc(sizeof(int32_t) * (size_t)n);
    int32_t *queue = hrm_alloc(sizeof(int32_t) * (size_t)n);
    int64_t *net = hrm_calloc((size_t)n, sizeof(int64_t));
    bool *seen = hrm_calloc((size_t)n, sizeof(bool));
    int32_t nsrc = zero_flow(g, src);
    int64_t before = 0;
    for (int32_t i = 0; i < nsrc; i++)
        before += g->ex[src[i]];
    flow_route(g, src, nsrc, -1);
    for (int32_t a = 0; a < g->m; a++) {
        int32_t f = g->apos[a];
        int64_t x = g->acap[a] - g->rcap[f];
        cr_assert(x >= 0 && x <= g->acap[a] && g->rcap[g->rev[f]] == x,
                  "%s: arc %d: flow %lld, capacity %lld", what, a, (long long)x,
                  (long long)g->acap[a]);
        net[g->afrom[a]] -= x;
        net[g->ato[a]] += x;
    }
    int64_t left = 0;
    int32_t qt = 0;
    for (int32_t v = 0; v < n; v++) {
        cr_assert_eq(g->ex[v], g->supply[v] + net[v], "%s: vertex %d excess %lld, arcs leave %lld",
                     what, v, (long long)g->ex[v], (long long)(g->supply[v] + net[v]));
        if (g->ex[v] > 0) {
            left += g->ex[v];
            seen[v] = true;
            queue[qt++] = v;
        }
    }
    for (int32_t qh = 0; qh < qt; qh++) {
        int32_t u = queue[qh];
        cr_assert_geq(g->ex[u], 0, "%s: deficit %d reachable from an excess", what, u);
        for (int32_t r = g->first[u]; r < g->first[u + 1]; r++)
            if (g->rcap[r] > 0 && !seen[g->head[r]]) {
                seen[g->head[r]] = true;
                queue[qt++] = g->head[r];
            }
    }
    hrm_free(src);
    hrm_free(queue);
    hrm_free(net);
    hrm_free(seen);
    hrm_flow_reset(g); /* the state is no solver's: forget it */
    return before - left;
}

/* flow_inst.h's NETGEN-shaped graphs (parallel arcs, self-loops, zero capacities) with a
 * skeleton capacitated or not (then the supplies may be more than the arcs carry). */
static struct hrm_flow *random_graph(uint64_t seed, bool capacitated)
{
    struct netgen_parm p = {.nodes = 20 + (int32_t)(seed * 37 % 100), .sources = 1 + (int32_t)(seed % 6),
                            .sinks = 1 + (int32_t)(seed % 5), .cost_min = 0, .cost_max = 1000,
                            .supply = 50 + (int64_t)(seed % 7) * 40, .cap_min = 0, .cap_max = 40,
                            .pct_hicost = 20, .pct_capacitated = 60,
                            .skeleton_capacitated = capacitated};
    p.arcs = p.nodes * (2 + (int32_t)(seed % 6));
    struct inst I = {0};
    netgen(&I, &p, seed);
    struct hrm_flow *g = inst_graph(&I);
    inst_free(&I);
    return g;
}

/* Calls check on a small instance of every family of the bench, seeds 1 .. seeds. */
static void each_family(uint64_t seeds, void (*check)(struct hrm_flow *g, const char *what))
{
    char what[64];
    for (int f = 0; f < NFAM; f++)
        for (uint64_t seed = 1; seed <= seeds; seed++) {
            struct hrm_flow *g = family(f, seed);
            snprintf(what, sizeof(what), "%s seed %llu", fam_name[f], (unsigned long long)seed);
            check(g, what);
            hrm_flow_free(g);
        }
}

static void routes_a_maximum(struct hrm_flow *g, const char *what)
{
    cr_assert_gt(maximum_first_flow(g, what), 0, "%s: routed something", what);
}

Test(lemon, the_unrestricted_dinic_routes_a_maximum_flow)
{
    each_family(5, routes_a_maximum);
    char what[64];
    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct hrm_flow *g = random_graph(seed, seed % 3 == 0);
        snprintf(what, sizeof(what), "random seed %llu", (unsigned long long)seed);
        maximum_first_flow(g, what);
        hrm_flow_free(g);
    }
}

/* ---- cost scaling on every family, seeds 1-5 and more ---- */

/* Cost scaling from scratch; returns the certified cost and, through the pointers, the cost of
 * the flow the phases left (before settle()), the phases' relabels and their global updates. */
static int64_t scaled(struct hrm_flow *g, int64_t *phase_cost, int64_t *relabels,
                      int64_t *updates)
{
    hrm_flow_reset(g);
    hrm_flow_set_algo(g, HRM_FLOW_SCALING);
    g->scale_audit = true;
    g->scale_updates = 0;
    g->scale_relabels = 0;
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "cost scaling: %s", err.text);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.scaling, "the solve ran cost scaling");
    *phase_cost = g->scale_phase_cost;
    *relabels = g->scale_relabels;
    *updates = g->scale_updates;
    return certified_cost(g, -1, -1);
}

/* Cost scaling's answer on g: certified, the phases' own flow already optimal, and the cost
 * the simplex's and shortest paths'. */
static void scaling_optimal(struct hrm_flow *g, const char *what)
{
    int64_t pc = 0, relabels = 0, updates = 0;
    int64_t cost = scaled(g, &pc, &relabels, &updates);
    cr_assert_eq(pc, cost, "%s: the phases left cost %lld, optimum %lld", what, (long long)pc,
                 (long long)cost);
    for (int k = 0; k < 2; k++) {
        struct hrm_flow *h = solved_copy(g, -1, -1, k ? HRM_FLOW_SSP : HRM_FLOW_SIMPLEX);
        cr_assert_eq(certified_cost(h, -1, -1), cost, "%s: %s %lld, cost scaling %lld", what,
                     k ? "shortest paths" : "simplex", (long long)hrm_flow_total_cost(h),
                     (long long)cost);
        hrm_flow_free(h);
    }
}

Test(lemon, cost_scaling_is_certified_optimal_on_every_family_and_seed)
{
    each_family(8, scaling_optimal);
}

/*
 * The global update runs every n + k relabels, k the vertices with a supply (it used to wait
 * n + k^2: 6,400 more on netgen M's 80).  A check follows every augmentation, and between two
 * checks a partial augmentation relabels at most a few times (PATH_LEN steps back and the
 * start), so updates >= relabels / (n + k + 12) - 1; with k^2 > n the old rule gave at most
 * relabels / (n + k^2).
 */
Test(lemon, a_global_update_every_n_plus_k_relabels_not_n_plus_k_squared)
{
    int64_t total_updates = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        struct hrm_flowgen_params p;
        hrm_flowgen_defaults(HRM_FLOWGEN_NETGEN, 'S', &p);
        p.seed = seed, p.nodes = 300, p.sources = 25, p.sinks = 25, p.arcs = 2400;
        p.supply = 30000;
        struct hrm_error err = {{0}};
        struct hrm_flow *g = NULL;
        cr_assert_eq(hrm_flowgen_build(HRM_FLOWGEN_NETGEN, &p, &g, &err), 0, "%s", err.text);
        int64_t pc = 0, relabels = 0, updates = 0;
        int64_t cost = scaled(g, &pc, &relabels, &updates);
        cr_assert_eq(pc, cost, "seed %llu: the phases' flow is optimal", (unsigned long long)seed);
        int32_t n = hrm_flow_vertices(g);
        cr_assert_gt(relabels, 4 * (n + 625), "seed %llu: enough relabels to tell (%lld)",
                     (unsigned long long)seed, (long long)relabels);
        cr_assert_geq(updates, relabels / (n + 25 + 12) - 1,
                      "seed %llu: %lld global updates for %lld relabels on %d vertices (25 sources)",
                      (unsigned long long)seed, (long long)updates, (long long)relabels, n);
        total_updates += updates;
        hrm_flow_free(g);
    }
    cr_assert_gt(total_updates, 0);
}
