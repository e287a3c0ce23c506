/* Network simplex: hand-worked graphs, GLPK as oracle, warm bases, infeasibility, engine switches. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "flow_inst.h"

static void quiet(void)
{
    glp_term_out(GLP_OFF);
}

static void done(void)
{
    glp_free_env();
}

TestSuite(simplex, .init = quiet, .fini = done);

/*
 * The solution of g is a flow for supplies sup that the potentials prove
 * optimal: bounds, conservation, and for every arc the reduced cost is >= 0
 * unless the arc is full and <= 0 unless it is empty.  Returns its cost.
 */
static int64_t certified_cost(const struct hrm_flow *g, const struct inst *I, const int64_t *sup)
{
    int64_t *bal = hrm_calloc((size_t)I->n, sizeof(int64_t));
    int64_t total = 0;
    for (int32_t a = 0; a < I->m; a++) {
        int64_t x = hrm_flow_arc_flow(g, a);
        int32_t u = I->from[a], v = I->to[a];
        int64_t red = I->cost[a] + hrm_flow_potential(g, u) - hrm_flow_potential(g, v);
        cr_assert(x >= 0 && x <= I->cap[a], "arc %d: flow %lld, capacity %lld", a, (long long)x,
                  (long long)I->cap[a]);
        cr_assert(red >= 0 || x == I->cap[a], "arc %d: room left at reduced cost %lld", a,
                  (long long)red);
        cr_assert(red <= 0 || x == 0, "arc %d: flow %lld at reduced cost %lld", a, (long long)x,
                  (long long)red);
        bal[u] += x;
        bal[v] -= x;
        total += x * I->cost[a];
    }
    for (int32_t v = 0; v < I->n; v++)
        cr_assert_eq(bal[v], sup ? sup[v] : 0, "vertex %d sends %lld, its supply is %lld", v,
                     (long long)bal[v], (long long)(sup ? sup[v] : 0));
    hrm_free(bal);
    cr_assert_eq(total, hrm_flow_total_cost(g));
    return total;
}

static void stats_simplex(const struct hrm_flow *g, int warm)
{
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.simplex, "the network simplex ran");
    if (warm >= 0)
        cr_assert_eq(st.warm, warm, "warm %d, expected %d", st.warm, warm);
}

/* GLPK's out-of-kilter and its LP agree first, then our simplex must match them. */
static struct ref oracle(const struct inst *I, const int64_t *sup)
{
    struct ref a = ref_okalg(I, sup), b = ref_lp(I, sup);
    cr_assert_eq(a.feasible, b.feasible);
    if (a.feasible)
        cr_assert_eq(a.cost, b.cost);
    return a;
}

/* Returns whether I is feasible. */
static bool solve_like_glpk(struct hrm_flow *g, const struct inst *I)
{
    struct ref ok = oracle(I, NULL);
    struct hrm_error err = {{0}};
    int rc = hrm_flow_solve(g, &err);
    if (!ok.feasible) {
        cr_assert_eq(rc, -HRM_EINFEASIBLE, "GLPK finds no flow, the simplex returns %d", rc);
        cr_assert(strstr(err.text, "cannot reach any demand"), "%s", err.text);
        return false;
    }
    cr_assert_eq(rc, 0, "GLPK's cost %lld, simplex fails: %s", (long long)ok.cost, err.text);
    cr_assert_eq(certified_cost(g, I, I->sup), ok.cost);
    return true;
}

static void max_like_glpk(struct hrm_flow *g, const struct inst *I, int32_t s, int32_t t)
{
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve_max(g, s, t, &err), 0, "%s", err.text);
    int64_t value = ref_maxflow(I, s, t);
    cr_assert_eq(hrm_flow_value(g), value);
    int64_t *sup = st_supply(I, s, t, value);
    struct ref ok = oracle(I, sup);
    cr_assert_eq(certified_cost(g, I, sup), ok.cost);
    hrm_free(sup);
}

/*
 * By hand: s=0 supplies 4, t=3 demands 4.
 *   0->1 cap 3 cost 1, 0->2 cap 2 cost 4, 1->2 cap 2 cost 1, 1->3 cap 2 cost 5,
 *   2->3 cap 3 cost 1.
 * Paths: 0-1-2-3 costs 3 (cap 2), 0-1-3 costs 6 (cap 2 but 0->1 has 1 left),
 * 0-2-3 costs 5 (cap 2, 2->3 has 1 left after the first path).  Cheapest 4
 * units: 2 on 0-1-2-3 (6), 1 on 0-2-3 (5), 1 on 0-1-3 (6) = 17.
 */
Test(simplex, hand_worked_supplies)
{
    struct hrm_flow *g = hrm_flow_new(0, 0);
    int32_t v[4];
    int64_t sup[4] = {4, 0, 0, -4};
    for (int i = 0; i < 4; i++)
        v[i] = hrm_flow_add_vertex(g, sup[i]);
    int32_t a01 = hrm_flow_add_arc(g, v[0], v[1], 3, 1);
    int32_t a02 = hrm_flow_add_arc(g, v[0], v[2], 2, 4);
    int32_t a12 = hrm_flow_add_arc(g, v[1], v[2], 2, 1);
    int32_t a13 = hrm_flow_add_arc(g, v[1], v[3], 2, 5);
    int32_t a23 = hrm_flow_add_arc(g, v[2], v[3], 3, 1);
    hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
    stats_simplex(g, 0);
    cr_assert_eq(hrm_flow_total_cost(g), 17);
    cr_assert_eq(hrm_flow_arc_flow(g, a01), 3);
    cr_assert_eq(hrm_flow_arc_flow(g, a02), 1);
    cr_assert_eq(hrm_flow_arc_flow(g, a12), 2);
    cr_assert_eq(hrm_flow_arc_flow(g, a13), 1);
    cr_assert_eq(hrm_flow_arc_flow(g, a23), 3);
    /* 1->3 gets cheap (cost 1): 0-1-3 (2) twice, 0-1-2-3 (3) once, 0-2-3 (5) once = 12;
     * only a cost changed, so the last basis is reused */
    cr_assert_eq(hrm_flow_set_arc(g, a13, 2, 1), 0);
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
    stats_simplex(g, 1);
    cr_assert_eq(hrm_flow_total_cost(g), 12);
    /* the potentials certify it: 0->2 carries flow, so pi(2) - pi(0) >= 4 */
    cr_assert(4 + hrm_flow_potential(g, v[0]) - hrm_flow_potential(g, v[2]) <= 0);
    hrm_flow_free(g);
}

/* A negative cycle with no supplies: the optimum fills it (cost 2 x (-3 + 1 + 1) = -2). */
Test(simplex, negative_cycle_is_filled)
{
    struct hrm_flow *g = hrm_flow_new(0, 0);
    for (int i = 0; i < 3; i++)
        hrm_flow_add_vertex(g, 0);
    hrm_flow_add_arc(g, 0, 1, 2, -3);
    hrm_flow_add_arc(g, 1, 2, 5, 1);
    hrm_flow_add_arc(g, 2, 0, 4, 1);
    hrm_flow_add_arc(g, 2, 2, 7, -1); /* a self-loop of negative cost: full */
    hrm_flow_add_arc(g, 1, 0, 0, -9); /* capacity 0: nothing */
    hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_flow_total_cost(g), -2 - 7);
    cr_assert_eq(hrm_flow_arc_flow(g, 3), 7);
    cr_assert_eq(hrm_flow_arc_flow(g, 4), 0);
    hrm_flow_free(g);
}

/* By hand: the maximum 0 -> 3 flow is 3; the cheapest way to route it costs 11. */
Test(simplex, hand_worked_max_flow)
{
    struct hrm_flow *g = hrm_flow_new(0, 0);
    for (int i = 0; i < 4; i++)
        hrm_flow_add_vertex(g, 0);
    hrm_flow_add_arc(g, 0, 1, 2, 1);
    int32_t sb = hrm_flow_add_arc(g, 0, 2, 1, 5);
    hrm_flow_add_arc(g, 1, 3, 1, 1);
    hrm_flow_add_arc(g, 1, 2, 5, 1);
    hrm_flow_add_arc(g, 2, 3, 2, 1);
    hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve_max(g, 0, 3, &err), 0, "%s", err.text);
    stats_simplex(g, 0);
    cr_assert_eq(hrm_flow_value(g), 3);
    cr_assert_eq(hrm_flow_total_cost(g), 11);
    cr_assert_eq(hrm_flow_arc_flow(g, sb), 1);
    /* cutting 0 -> 2 lowers the maximum to 2 (cost 2 + 3): a capacity change
     * on an arc at its upper bound, still from the last basis */
    cr_assert_eq(hrm_flow_set_arc(g, sb, 0, 5), 0);
    cr_assert_eq(hrm_flow_solve_max(g, 0, 3, &err), 0, "%s", err.text);
    stats_simplex(g, 1);
    cr_assert_eq(hrm_flow_value(g), 2);
    cr_assert_eq(hrm_flow_total_cost(g), 5);
    hrm_flow_free(g);
}

/* Supplies that cannot be met are reported, with the vertex left holding them. */
Test(simplex, infeasible_supplies_are_detected)
{
    struct hrm_flow *g = hrm_flow_new(0, 0);
    hrm_flow_add_vertex(g, 5);
    hrm_flow_add_vertex(g, 0);
    hrm_flow_add_vertex(g, -5);
    int32_t a = hrm_flow_add_arc(g, 0, 1, 3, 1);
    hrm_flow_add_arc(g, 1, 2, 10, 1);
    hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve(g, &err), -HRM_EINFEASIBLE);
    cr_assert(strstr(err.text, "2 units of supply cannot reach any demand (vertex 0"), "%s",
              err.text);
    /* widened, the same graph is feasible again */
    cr_assert_eq(hrm_flow_set_arc(g, a, 5, 1), 0);
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_flow_total_cost(g), 10);
    hrm_flow_free(g);
}

static void random_netgen(struct netgen_parm *p, struct hrm_rng *r, bool negative)
{
    p->nodes = (int32_t)rng_range(r, 6, 80);
    p->sources = (int32_t)rng_range(r, 1, 5);
    p->sinks = (int32_t)rng_range(r, 1, 5);
    if (p->sources + p->sinks > p->nodes)
        p->sources = p->sinks = 1;
    p->arcs = p->nodes * (int32_t)rng_range(r, 2, 8);
    p->cost_min = negative ? -rng_range(r, 0, 40) : 0;
    p->cost_max = rng_range(r, 1, hrm_rng_below(r, 3) ? 30 : 5000);
    if (p->cost_max < p->cost_min)
        p->cost_max = p->cost_min;
    p->supply = rng_range(r, 0, 80);
    p->cap_min = rng_range(r, 0, 2);
    p->cap_max = p->cap_min + rng_range(r, 0, 25);
    p->pct_hicost = (int)rng_range(r, 0, 30);
    p->pct_capacitated = (int)rng_range(r, 10, 100);
}

/* NETGEN-shaped instances, some infeasible, some with negative costs. */
Test(simplex, netgen_supplies_match_glpk)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 17);
    for (int seed = 0; seed < 250; seed++) {
        struct netgen_parm p;
        random_netgen(&p, &r, seed % 3 == 1);
        p.skeleton_capacitated = seed % 4 == 0;
        struct inst I = {0};
        netgen(&I, &p, (uint64_t)seed + 7000);
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
        solve_like_glpk(g, &I);
        stats_simplex(g, 0);
        hrm_flow_free(g);
        inst_free(&I);
    }
}

/* Maximum flow on NETGEN and scheduling graphs (the virtual arc of solve_max). */
Test(simplex, max_flow_matches_glpk)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 18);
    for (int seed = 0; seed < 120; seed++) {
        struct inst I = {0};
        int32_t s, t;
        if (seed % 2) {
            struct netgen_parm p;
            random_netgen(&p, &r, seed % 4 == 1);
            p.skeleton_capacitated = true;
            netgen(&I, &p, (uint64_t)seed + 8000);
            s = 0, t = I.n - 1;
        } else {
            struct sched_parm p = {.jobs = (int32_t)rng_range(&r, 1, 6),
                                   .tasks_max = (int32_t)rng_range(&r, 1, 10),
                                   .racks = (int32_t)rng_range(&r, 1, 3),
                                   .machines_per_rack = (int32_t)rng_range(&r, 1, 4),
                                   .gpus_per_machine = (int32_t)rng_range(&r, 1, 2),
                                   .mem_classes = (int32_t)rng_range(&r, 1, 3),
                                   .unscheduled = hrm_rng_below(&r, 3) != 0};
            sched_graph(&I, &p, (uint64_t)seed + 9000, &s, &t);
        }
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
        max_like_glpk(g, &I, s, t);
        stats_simplex(g, 0);
        hrm_flow_free(g);
        inst_free(&I);
    }
}

/* One random change that keeps the graph's shape: a capacity (often to 0),
 * a cost, or a supply moved between two vertices. */
static void change(struct inst *I, struct hrm_flow *g, struct hrm_rng *r, bool negative)
{
    int32_t a = (int32_t)hrm_rng_below(r, (uint64_t)I->m);
    switch (hrm_rng_below(r, 4)) {
    case 0:
        I->cap[a] = hrm_rng_below(r, 2) ? 0 : rng_range(r, 0, 30);
        break;
    case 1:
    case 2:
        I->cost[a] = rng_range(r, negative ? -40 : 0, hrm_rng_below(r, 4) ? 300 : 20000);
        break;
    default: {
        int32_t u = (int32_t)hrm_rng_below(r, (uint64_t)I->n);
        int32_t v = (int32_t)hrm_rng_below(r, (uint64_t)I->n);
        int64_t d = rng_range(r, 1, 6);
        I->sup[u] += d;
        I->sup[v] -= d;
        hrm_flow_set_supply(g, u, I->sup[u]);
        hrm_flow_set_supply(g, v, I->sup[v]);
        return;
    }
    }
    cr_assert_eq(hrm_flow_set_arc(g, a, I->cap[a], I->cost[a]), 0);
}

/*
 * Re-solves after changes: the same optimum as GLPK and as shortest paths from
 * scratch; a change of costs alone always keeps the basis (warm); after a new
 * arc the simplex starts over and is still right.
 */
Test(simplex, warm_resolves_match_scratch_and_glpk)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 19);
    int warm_seen = 0;
    for (int seed = 0; seed < 150; seed++) {
        struct netgen_parm p;
        bool negative = seed % 3 == 2;
        random_netgen(&p, &r, negative);
        p.skeleton_capacitated = false;
        struct inst I = {0};
        netgen(&I, &p, (uint64_t)seed + 10000);
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
        bool feasible = solve_like_glpk(g, &I);
        for (int round = 0; round < 6; round++) {
            bool costs_only = round % 3 == 0;
            int n = 1 + (int)hrm_rng_below(&r, 4);
            for (int c = 0; c < n; c++) {
                if (costs_only) {
                    int32_t a = (int32_t)hrm_rng_below(&r, (uint64_t)I.m);
                    I.cost[a] = rng_range(&r, negative ? -40 : 0, 300);
                    cr_assert_eq(hrm_flow_set_arc(g, a, I.cap[a], I.cost[a]), 0);
                } else {
                    change(&I, g, &r, negative);
                }
            }
            if (round == 5) { /* a new arc: the basis does not fit any more */
                int32_t u = (int32_t)hrm_rng_below(&r, (uint64_t)I.n);
                int32_t v = (int32_t)hrm_rng_below(&r, (uint64_t)I.n);
                cr_assert_eq(hrm_flow_add_arc(g, u, v, 7, 3), inst_arc(&I, u, v, 7, 3));
            }
            struct hrm_error err = {{0}};
            bool last_ok = feasible;
            feasible = solve_like_glpk(g, &I);
            struct hrm_flow_stats st;
            hrm_flow_stats(g, &st);
            cr_assert(st.simplex);
            if (costs_only && last_ok)
                cr_assert(st.warm, "seed %d round %d: costs changed only, yet cold", seed, round);
            warm_seen += st.warm;
            struct hrm_flow *fresh = inst_graph(&I);
            hrm_flow_set_algo(fresh, HRM_FLOW_SSP);
            int rc = hrm_flow_solve(fresh, &err);
            if (rc == 0)
                cr_assert_eq(hrm_flow_total_cost(fresh), hrm_flow_total_cost(g));
            hrm_flow_free(fresh);
        }
        hrm_flow_free(g);
        inst_free(&I);
    }
    cr_assert(warm_seen > 300, "only %d warm re-solves", warm_seen);
}

/* Engines may follow each other on one graph: each leaves an optimal state. */
Test(simplex, engines_take_turns)
{
    struct sched_parm p = {.jobs = 6,
                           .tasks_max = 12,
                           .racks = 2,
                           .machines_per_rack = 3,
                           .gpus_per_machine = 2,
                           .mem_classes = 2,
                           .unscheduled = true};
    struct inst I = {0};
    int32_t s, t;
    sched_graph(&I, &p, 77, &s, &t);
    struct hrm_flow *g = inst_graph(&I);
    struct hrm_rng r;
    hrm_rng_seed(&r, 20);
    static const enum hrm_flow_algo turn[] = {HRM_FLOW_SIMPLEX, HRM_FLOW_SSP, HRM_FLOW_SIMPLEX,
                                              HRM_FLOW_SCALING, HRM_FLOW_SIMPLEX,
                                              HRM_FLOW_SIMPLEX, HRM_FLOW_AUTO};
    for (size_t i = 0; i < sizeof(turn) / sizeof(turn[0]); i++) {
        hrm_flow_set_algo(g, turn[i]);
        max_like_glpk(g, &I, s, t);
        int32_t a = (int32_t)hrm_rng_below(&r, (uint64_t)I.m);
        I.cost[a] = rng_range(&r, 0, 50);
        cr_assert_eq(hrm_flow_set_arc(g, a, I.cap[a], I.cost[a]), 0);
    }
    /* and the supply form after the maximum-flow form, then a reset */
    int64_t value = ref_maxflow(&I, s, t);
    I.sup[s] = value;
    I.sup[t] = -value;
    hrm_flow_set_supply(g, s, value);
    hrm_flow_set_supply(g, t, -value);
    hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
    solve_like_glpk(g, &I);
    hrm_flow_reset(g);
    solve_like_glpk(g, &I);
    stats_simplex(g, 0);
    hrm_flow_free(g);
    inst_free(&I);
}

/* Ties everywhere (costs 0 or 1, unit capacities): degenerate pivots must not cycle. */
Test(simplex, degenerate_ties_terminate)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 21);
    for (int seed = 0; seed < 60; seed++) {
        struct netgen_parm p;
        random_netgen(&p, &r, false);
        p.cost_min = 0;
        p.cost_max = seed % 2;
        p.cap_min = 1;
        p.cap_max = 1;
        p.skeleton_capacitated = false;
        struct inst I = {0};
        netgen(&I, &p, (uint64_t)seed + 11000);
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, HRM_FLOW_SIMPLEX);
        solve_like_glpk(g, &I);
        hrm_flow_free(g);
        inst_free(&I);
    }
}

/*
 * What auto runs: the simplex from scratch where costs take many values, and
 * again from its basis after a cost change; shortest paths where costs take
 * few values (a scheduling graph), and for a warm solve after the graph grew.
 */
Test(simplex, auto_chooses_by_costs_and_warm_state)
{
    struct netgen_parm p = {.nodes = 400,
                            .sources = 8,
                            .sinks = 8,
                            .arcs = 3000,
                            .cost_min = 1,
                            .cost_max = 100000,
                            .supply = 500,
                            .cap_min = 1,
                            .cap_max = 30,
                            .pct_hicost = 5,
                            .pct_capacitated = 80};
    struct inst I = {0};
    netgen(&I, &p, 5);
    struct hrm_flow *g = inst_graph(&I);
    cr_assert(solve_like_glpk(g, &I));
    stats_simplex(g, 0);
    I.cost[7] += 50;
    cr_assert_eq(hrm_flow_set_arc(g, 7, I.cap[7], I.cost[7]), 0);
    cr_assert(solve_like_glpk(g, &I));
    stats_simplex(g, 1);
    cr_assert_eq(hrm_flow_add_arc(g, 3, 9, 4, 2), inst_arc(&I, 3, 9, 4, 2));
    cr_assert(solve_like_glpk(g, &I));
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(!st.simplex && !st.scaling && st.warm, "a grown graph: warm shortest paths");
    hrm_flow_free(g);
    inst_free(&I);

    struct sched_parm sp = {.jobs = 8,
                            .tasks_max = 20,
                            .racks = 3,
                            .machines_per_rack = 4,
                            .gpus_per_machine = 2,
                            .mem_classes = 2,
                            .unscheduled = true};
    int32_t s, t;
    sched_graph(&I, &sp, 6, &s, &t);
    g = inst_graph(&I);
    max_like_glpk(g, &I, s, t);
    hrm_flow_stats(g, &st);
    cr_assert(!st.simplex && !st.scaling, "few distinct costs: shortest paths");
    hrm_flow_free(g);
    inst_free(&I);
}
