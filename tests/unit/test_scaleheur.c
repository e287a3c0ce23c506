/* Cost scaling's heuristics (scale.c): each one on or off gives the same optimum and a valid certificate. */
#include <criterion/criterion.h>

#include "flow/flow_private.h"
#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/flowgen.h"

/*
 * Checks g's answer against the definition of optimality and returns its cost:
 * flows within [0, cap], each vertex's inflow minus outflow equal to minus its
 * supply (or to -value / +value at S / T), and potentials under which an arc
 * with room has reduced cost >= 0 and an arc with flow reduced cost <= 0.
 */
static int64_t check_optimal(const struct hrm_flow *g, int32_t S, int32_t T, const char *what)
{
    int32_t n = hrm_flow_vertices(g);
    int64_t *balance = hrm_calloc((size_t)n, sizeof(int64_t));
    for (int32_t v = 0; v < n; v++)
        balance[v] = S < 0 ? hrm_flow_supply(g, v) : 0;
    if (S >= 0) {
        balance[S] = hrm_flow_value(g);
        balance[T] = -hrm_flow_value(g);
    }
    int64_t cost = 0;
    for (int32_t a = 0; a < hrm_flow_arcs(g); a++) {
        int32_t u = hrm_flow_arc_from(g, a), v = hrm_flow_arc_to(g, a);
        int64_t x = hrm_flow_arc_flow(g, a), c = hrm_flow_arc_cost(g, a);
        int64_t slack = c + hrm_flow_potential(g, u) - hrm_flow_potential(g, v);
        cr_assert(x >= 0 && x <= hrm_flow_arc_capacity(g, a), "%s: arc %d flow %lld", what, a,
                  (long long)x);
        cr_assert(slack >= 0 || x == hrm_flow_arc_capacity(g, a),
                  "%s: arc %d has room at reduced cost %lld", what, a, (long long)slack);
        cr_assert(slack <= 0 || x == 0, "%s: arc %d has flow at reduced cost %lld", what, a,
                  (long long)slack);
        balance[u] -= x;
        balance[v] += x;
        cost += x * c;
    }
    for (int32_t v = 0; v < n; v++)
        cr_assert_eq(balance[v], 0, "%s: vertex %d is off balance by %lld", what, v,
                     (long long)balance[v]);
    hrm_free(balance);
    cr_assert_eq(cost, hrm_flow_total_cost(g), "%s", what);
    return cost;
}

/* Solves g from scratch by cost scaling with the heuristics in off switched off. */
static void solve_scaling(struct hrm_flow *g, int32_t S, int32_t T, unsigned off)
{
    hrm_flow_reset(g);
    hrm_flow_set_algo(g, HRM_FLOW_SCALING);
    g->scale_off = off;
    g->scale_refined = 0;
    struct hrm_error err = {{0}};
    int rc = S >= 0 ? hrm_flow_solve_max(g, S, T, &err) : hrm_flow_solve(g, &err);
    cr_assert_eq(rc, 0, "%s", err.text);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.scaling, "the solve ran cost scaling");
}

/* The family's small instance, as in test_flowgen.c. */
static struct hrm_flow *family(enum hrm_flowgen_family fam, int per_gpu, uint64_t seed)
{
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(fam, 'S', &p);
    p.seed = seed;
    if (fam == HRM_FLOWGEN_NETGEN)
        p.nodes = 300, p.arcs = 2400, p.sources = 9, p.sinks = 7, p.supply = 5000;
    else if (fam == HRM_FLOWGEN_GRIDGEN)
        p.rows = 12, p.cols = 12, p.arcs = 2 * (12 * 11 * 2) + 200, p.sources = 5,
        p.sinks = 6, p.supply = 3000;
    else if (fam == HRM_FLOWGEN_GOTO)
        p.rows = 12, p.cols = 10, p.arcs = 8 * 120, p.supply = 1 << 18;
    else
        p.p1.gpus = 160, p.p1.jobs = 14, p.p1.tasks_per_job = 15, p.p1.per_gpu = per_gpu;
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    cr_assert_eq(hrm_flowgen_build(fam, &p, &g, &err), 0, "%s", err.text);
    return g;
}

Test(scaleheur, price_refinement_on_or_off_gives_the_optimum_on_every_family)
{
    static const struct {
        enum hrm_flowgen_family fam;
        int per_gpu;
        const char *name;
    } fams[] = {{HRM_FLOWGEN_NETGEN, 1, "netgen"}, {HRM_FLOWGEN_GRIDGEN, 1, "gridgen"},
                {HRM_FLOWGEN_GOTO, 1, "goto"},     {HRM_FLOWGEN_P1, 1, "p1"},
                {HRM_FLOWGEN_P1, 0, "p1-rack"}};
    int64_t skipped = 0;
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        for (uint64_t seed = 1; seed <= 4; seed++) {
            struct hrm_flow *g = family(fams[i].fam, fams[i].per_gpu, seed);
            char what[64];
            snprintf(what, sizeof(what), "%s seed %llu", fams[i].name, (unsigned long long)seed);
            solve_scaling(g, -1, -1, FLOW_SCALE_NO_REFINE);
            cr_assert_eq(g->scale_refined, 0, "%s: switched off, no phase is skipped", what);
            int64_t off = check_optimal(g, -1, -1, what);
            solve_scaling(g, -1, -1, 0);
            skipped += g->scale_refined;
            int64_t on = check_optimal(g, -1, -1, what);
            cr_assert_eq(on, off, "%s: cost %lld with price refinement, %lld without", what,
                         (long long)on, (long long)off);
            /* the simplex, an independent engine, agrees */
            hrm_flow_reset(g);
            hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
            struct hrm_error err = {{0}};
            cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
            cr_assert_eq(hrm_flow_total_cost(g), on, "%s: the simplex's cost", what);
            hrm_flow_free(g);
        }
    }
    cr_assert_gt(skipped, 0, "price refinement skipped some phase on these families");
}

/* A re-solve after a cost-scaling solve with refinement starts from its state. */
Test(scaleheur, warm_state_after_price_refinement)
{
    struct hrm_flow *g = family(HRM_FLOWGEN_P1, 1, 3);
    solve_scaling(g, -1, -1, 0);
    cr_assert_gt(g->scale_refined, 0, "the P1 instance skips phases");
    check_optimal(g, -1, -1, "cold");
    /* the first arc with flow becomes dearer: a warm re-solve keeps a certificate */
    int32_t a = 0;
    while (hrm_flow_arc_flow(g, a) == 0)
        a++;
    hrm_flow_set_arc(g, a, hrm_flow_arc_capacity(g, a), hrm_flow_arc_cost(g, a) + 7);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.warm, "the re-solve starts from the kept flow and potentials");
    int64_t warm = check_optimal(g, -1, -1, "warm");
    hrm_flow_reset(g);
    hrm_flow_set_algo(g, HRM_FLOW_SSP);
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_flow_total_cost(g), warm, "warm cost equals a from-scratch solve's");
    hrm_flow_free(g);
}

/*
 * Solved by hand: GPUs g1, g2 (-> T, capacity 1, cost 0); a job with tasks a1
 * (on g1 at 1, on g2 at 3) and a2 (on g1 at 2, on g2 at 2), or unscheduled at
 * 10 each.  The most tasks run (2), at least cost: a1 on g1, a2 on g2 = 3.
 * Costs times 1000 give enough phases for refinement to be tried.
 */
Test(scaleheur, hand_worked_max_flow)
{
    for (unsigned off = 0; off <= FLOW_SCALE_NO_REFINE; off += FLOW_SCALE_NO_REFINE) {
        struct hrm_flow *g = hrm_flow_new(0, 0);
        int32_t S = hrm_flow_add_vertex(g, 0), T = hrm_flow_add_vertex(g, 0);
        int32_t g1 = hrm_flow_add_vertex(g, 0), g2 = hrm_flow_add_vertex(g, 0);
        int32_t A = hrm_flow_add_vertex(g, 0), a1 = hrm_flow_add_vertex(g, 0);
        int32_t a2 = hrm_flow_add_vertex(g, 0), uA = hrm_flow_add_vertex(g, 0);
        hrm_flow_add_arc(g, g1, T, 1, 0);
        hrm_flow_add_arc(g, g2, T, 1, 0);
        hrm_flow_add_arc(g, S, A, 2, 0);
        hrm_flow_add_arc(g, A, a1, 1, 0);
        hrm_flow_add_arc(g, A, a2, 1, 0);
        int32_t a1g1 = hrm_flow_add_arc(g, a1, g1, 1, 1000);
        hrm_flow_add_arc(g, a1, g2, 1, 3000);
        hrm_flow_add_arc(g, a2, g1, 1, 2000);
        int32_t a2g2 = hrm_flow_add_arc(g, a2, g2, 1, 2000);
        hrm_flow_add_arc(g, A, uA, 2, 10000);
        hrm_flow_add_arc(g, uA, T, 2, 0);
        solve_scaling(g, S, T, off);
        cr_assert_eq(hrm_flow_value(g), 2);
        cr_assert_eq(check_optimal(g, S, T, off ? "off" : "on"), 3000);
        cr_assert_eq(hrm_flow_arc_flow(g, a1g1), 1);
        cr_assert_eq(hrm_flow_arc_flow(g, a2g2), 1);
        hrm_flow_free(g);
    }
}

/*
 * Solved by hand: 4 units from s to t over s-a-t (capacity 3, cost 1 + 1) and
 * s-b-t (capacity 5, cost 2 + 2), and a arc a -> b (capacity 1, cost 0): the
 * cheap path takes 3 (cost 6), the dear one 1 (cost 4): 10.
 */
Test(scaleheur, hand_worked_supplies)
{
    for (unsigned off = 0; off <= FLOW_SCALE_NO_REFINE; off += FLOW_SCALE_NO_REFINE) {
        struct hrm_flow *g = hrm_flow_new(0, 0);
        int32_t s = hrm_flow_add_vertex(g, 4), a = hrm_flow_add_vertex(g, 0);
        int32_t b = hrm_flow_add_vertex(g, 0), t = hrm_flow_add_vertex(g, -4);
        int32_t sa = hrm_flow_add_arc(g, s, a, 3, 1);
        hrm_flow_add_arc(g, a, t, 3, 1);
        int32_t sb = hrm_flow_add_arc(g, s, b, 5, 2);
        hrm_flow_add_arc(g, b, t, 5, 2);
        int32_t ab = hrm_flow_add_arc(g, a, b, 1, 0);
        solve_scaling(g, -1, -1, off);
        cr_assert_eq(check_optimal(g, -1, -1, off ? "off" : "on"), 10);
        cr_assert_eq(hrm_flow_arc_flow(g, sa), 3);
        cr_assert_eq(hrm_flow_arc_flow(g, sb), 1);
        cr_assert_eq(hrm_flow_arc_flow(g, ab), 0);
        hrm_flow_free(g);
    }
}

/* AUTO keeps the simplex on a graph of many costs, whether its supplies are
 * spread over many vertices or few (cost scaling wins on too few families to
 * be chosen); same optimum as cost scaling. */
Test(scaleheur, auto_runs_the_simplex_for_many_costs)
{
    for (int spread = 0; spread <= 1; spread++) {
        struct hrm_flowgen_params p;
        hrm_flowgen_defaults(HRM_FLOWGEN_NETGEN, 'S', &p);
        p.seed = 5;
        p.nodes = 400, p.arcs = 3200, p.supply = 8000;
        p.sources = spread ? 70 : 9, p.sinks = spread ? 70 : 7;
        struct hrm_error err = {{0}};
        struct hrm_flow *g = NULL;
        cr_assert_eq(hrm_flowgen_build(HRM_FLOWGEN_NETGEN, &p, &g, &err), 0, "%s", err.text);
        hrm_flow_set_algo(g, HRM_FLOW_AUTO);
        cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
        struct hrm_flow_stats st;
        hrm_flow_stats(g, &st);
        cr_assert_eq(st.simplex, 1, "%d terminals: the simplex not chosen", (int)(p.sources + p.sinks));
        int64_t cost = check_optimal(g, -1, -1, spread ? "spread" : "few");
        hrm_flow_reset(g);
        hrm_flow_set_algo(g, HRM_FLOW_SCALING);
        cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
        cr_assert_eq(hrm_flow_total_cost(g), cost, "cost scaling's cost");
        hrm_flow_free(g);
    }
}
