/* Min-cost flow solver: hand cases, GLPK as oracle, scheduling graphs, warm re-solves, DIMACS. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "flow_inst.h"

static const enum hrm_flow_algo algos[] = {HRM_FLOW_AUTO, HRM_FLOW_SSP, HRM_FLOW_SCALING};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))

static void glpk_quiet(void)
{
    glp_term_out(GLP_OFF);
}

static void glpk_done(void)
{
    glp_free_env();
}

TestSuite(flow, .init = glpk_quiet, .fini = glpk_done);

/*
 * Checks g's flow against I arc by arc: 0 <= flow <= capacity, conservation
 * with the supplies sup, and the optimality certificate of the potentials
 * (an arc below capacity has reduced cost >= 0, an arc with flow has <= 0).
 * Returns the flow's cost.
 */
static int64_t check_flow(const struct hrm_flow *g, const struct inst *I, const int64_t *sup)
{
    cr_assert_eq(hrm_flow_vertices(g), I->n);
    cr_assert_eq(hrm_flow_arcs(g), I->m);
    int64_t *net = hrm_calloc((size_t)I->n + 1, sizeof(int64_t));
    int64_t cost = 0;
    for (int32_t a = 0; a < I->m; a++) {
        int64_t f = hrm_flow_arc_flow(g, a);
        cr_assert(f >= 0 && f <= I->cap[a], "arc %d: flow %lld outside [0, %lld]", a, (long long)f,
                  (long long)I->cap[a]);
        net[I->from[a]] += f;
        net[I->to[a]] -= f;
        cost += f * I->cost[a];
        int64_t rc =
            I->cost[a] + hrm_flow_potential(g, I->from[a]) - hrm_flow_potential(g, I->to[a]);
        cr_assert(f == I->cap[a] || rc >= 0, "arc %d below capacity with reduced cost %lld", a,
                  (long long)rc);
        cr_assert(f == 0 || rc <= 0, "arc %d carries flow with reduced cost %lld", a,
                  (long long)rc);
    }
    for (int32_t v = 0; v < I->n; v++)
        cr_assert_eq(net[v], sup[v], "vertex %d: net outflow %lld, supply %lld", v,
                     (long long)net[v], (long long)sup[v]);
    cr_assert_eq(cost, hrm_flow_total_cost(g));
    hrm_free(net);
    return cost;
}

/* Solves I (supplies) with our solver under algo and with both GLPK oracles. */
static void expect_supply(struct hrm_flow *g, const struct inst *I, const struct ref *ok)
{
    struct hrm_error err = {{0}};
    int rc = hrm_flow_solve(g, &err);
    if (!ok->feasible) {
        cr_assert_eq(rc, -HRM_EINFEASIBLE, "GLPK finds no feasible flow, we return %d", rc);
        cr_assert(err.text[0], "an infeasible solve explains itself");
        return;
    }
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert_eq(rc, 0, "GLPK finds a flow of cost %lld, we fail (%s): %s", (long long)ok->cost,
                 st.scaling ? "scaling"
                 : st.warm  ? "warm"
                            : "cold",
                 err.text);
    int64_t cost = check_flow(g, I, I->sup);
    cr_assert_eq(cost, ok->cost, "our cost %lld, GLPK's %lld", (long long)cost,
                 (long long)ok->cost);
}

/* Reference for I's supplies: okalg and the LP must agree with each other first. */
static struct ref reference(const struct inst *I, const int64_t *sup)
{
    struct ref ok = ref_okalg(I, sup), lp = ref_lp(I, sup);
    cr_assert_eq(ok.feasible, lp.feasible, "okalg and the LP disagree on feasibility");
    if (ok.feasible)
        cr_assert_eq(ok.cost, lp.cost, "okalg %lld vs LP %lld", (long long)ok.cost,
                     (long long)lp.cost);
    return ok;
}

/* Solves I as min-cost max-flow s -> t and compares with GLPK (max flow, then min cost). */
static void expect_max(struct hrm_flow *g, const struct inst *I, int32_t s, int32_t t)
{
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve_max(g, s, t, &err), 0, "%s", err.text);
    int64_t value = ref_maxflow(I, s, t);
    cr_assert_eq(hrm_flow_value(g), value, "our value %lld, GLPK's %lld",
                 (long long)hrm_flow_value(g), (long long)value);
    int64_t *sup = st_supply(I, s, t, value);
    struct ref ok = reference(I, sup);
    cr_assert(ok.feasible);
    int64_t cost = check_flow(g, I, sup);
    cr_assert_eq(cost, ok.cost, "our cost %lld, GLPK's %lld", (long long)cost, (long long)ok.cost);
    hrm_free(sup);
}

Test(flow, hand_checked_small_graph)
{
    struct hrm_flow *g = hrm_flow_new(0, 0);
    int32_t s = hrm_flow_add_vertex(g, 0), a = hrm_flow_add_vertex(g, 0);
    int32_t b = hrm_flow_add_vertex(g, 0), t = hrm_flow_add_vertex(g, 0);
    hrm_flow_add_arc(g, s, a, 2, 1);
    int32_t sb = hrm_flow_add_arc(g, s, b, 1, 5);
    hrm_flow_add_arc(g, a, t, 1, 1);
    int32_t ab = hrm_flow_add_arc(g, a, b, 5, 1);
    hrm_flow_add_arc(g, b, t, 2, 1);
    struct hrm_error err;
    /* max flow 3: s-a-t (2), s-a-b-t (3), s-b-t (6) */
    cr_assert_eq(hrm_flow_solve_max(g, s, t, &err), 0);
    cr_assert_eq(hrm_flow_value(g), 3);
    cr_assert_eq(hrm_flow_total_cost(g), 11);
    cr_assert_eq(hrm_flow_arc_flow(g, sb), 1);
    /* two units: the cheap paths only */
    hrm_flow_set_supply(g, s, 2);
    hrm_flow_set_supply(g, t, -2);
    cr_assert_eq(hrm_flow_solve(g, &err), 0);
    cr_assert_eq(hrm_flow_total_cost(g), 5);
    cr_assert_eq(hrm_flow_arc_flow(g, sb), 0);
    cr_assert_eq(hrm_flow_arc_flow(g, ab), 1);
    /* a-b gets dear: s-b-t (6) beats s-a-b-t (2 + 20) */
    cr_assert_eq(hrm_flow_set_arc(g, ab, 5, 20), 0);
    cr_assert_eq(hrm_flow_solve(g, &err), 0);
    cr_assert_eq(hrm_flow_total_cost(g), 2 + 6);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.warm, "a re-solve after one arc change starts from the last flow");
    hrm_flow_free(g);
}

Test(flow, rejects_bad_input)
{
    struct hrm_flow *g = hrm_flow_new(2, 2);
    int32_t a = hrm_flow_add_vertex(g, 0), b = hrm_flow_add_vertex(g, 0);
    cr_assert_eq(hrm_flow_add_arc(g, a, 7, 1, 1), -EINVAL);
    cr_assert_eq(hrm_flow_add_arc(g, -1, b, 1, 1), -EINVAL);
    cr_assert_eq(hrm_flow_add_arc(g, a, b, -1, 1), -EINVAL);
    cr_assert_eq(hrm_flow_add_arc(g, a, b, HRM_FLOW_CAP_MAX + 1, 1), -EINVAL);
    cr_assert_eq(hrm_flow_add_arc(g, a, b, 1, HRM_FLOW_COST_MAX + 1), -EINVAL);
    cr_assert_eq(hrm_flow_add_vertex(g, HRM_FLOW_CAP_MAX + 1), -EINVAL);
    int32_t e = hrm_flow_add_arc(g, a, b, 1, 1);
    cr_assert_eq(e, 0);
    cr_assert_eq(hrm_flow_set_arc(g, 1, 1, 1), -EINVAL);
    cr_assert_eq(hrm_flow_set_arc(g, e, -3, 1), -EINVAL);
    struct hrm_error err;
    cr_assert_eq(hrm_flow_solve_max(g, a, a, &err), -EINVAL);
    cr_assert_eq(hrm_flow_solve_max(g, a, 9, &err), -EINVAL);
    hrm_flow_set_supply(g, a, 3);
    hrm_flow_set_supply(g, b, -2);
    cr_assert_eq(hrm_flow_solve(g, &err), -HRM_EINFEASIBLE, "supplies must sum to 0");
    cr_assert(strstr(err.text, "sum to 1"), "%s", err.text);
    hrm_flow_free(g);
}

Test(flow, degenerate_graphs)
{
    struct hrm_error err;
    for (size_t k = 0; k < NALGOS; k++) {
        /* empty graph, and vertices without arcs */
        struct hrm_flow *g = hrm_flow_new(0, 0);
        cr_assert_eq(hrm_flow_solve(g, &err), 0);
        cr_assert_eq(hrm_flow_total_cost(g), 0);
        hrm_flow_add_vertex(g, 0);
        hrm_flow_add_vertex(g, 0);
        hrm_flow_set_algo(g, algos[k]);
        cr_assert_eq(hrm_flow_solve(g, &err), 0);
        cr_assert_eq(hrm_flow_solve_max(g, 0, 1, &err), 0);
        cr_assert_eq(hrm_flow_value(g), 0, "no arc, no flow");
        hrm_flow_free(g);

        /* parallel arcs, a zero-capacity arc, a self-loop, a negative cycle, an isolated vertex */
        struct inst I = {0};
        int32_t s = inst_vertex(&I, 4), x = inst_vertex(&I, 0), t = inst_vertex(&I, -4);
        inst_vertex(&I, 0); /* isolated */
        inst_arc(&I, s, x, 2, 3);
        inst_arc(&I, s, x, 2, 7);
        inst_arc(&I, s, x, 9, -50); /* capacity 0 below */
        inst_arc(&I, x, t, 4, 1);
        inst_arc(&I, x, x, 5, -2); /* negative self-loop: saturated */
        inst_arc(&I, t, x, 3, -4); /* with x->t: a negative cycle of capacity 3 */
        inst_arc(&I, s, t, 0, -100);
        I.cap[2] = 0;
        g = inst_graph(&I);
        hrm_flow_set_algo(g, algos[k]);
        struct ref ok = reference(&I, NULL);
        cr_assert(ok.feasible);
        expect_supply(g, &I, &ok);
        cr_assert_eq(hrm_flow_arc_flow(g, 2), 0, "a zero-capacity arc carries nothing");
        cr_assert_eq(hrm_flow_arc_flow(g, 4), 5, "a negative self-loop is saturated");
        hrm_flow_free(g);
        inst_free(&I);
    }
}

Test(flow, unroutable_supply_is_infeasible_and_the_graph_stays_usable)
{
    struct hrm_error err = {{0}};
    for (size_t k = 0; k < NALGOS; k++) {
        struct inst I = {0};
        int32_t s = inst_vertex(&I, 5), x = inst_vertex(&I, 0), t = inst_vertex(&I, -5);
        int32_t sx = inst_arc(&I, s, x, 3, 1);
        inst_arc(&I, x, t, 10, 1);
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, algos[k]);
        cr_assert_eq(hrm_flow_solve(g, &err), -HRM_EINFEASIBLE, "3 of 5 units fit");
        cr_assert(err.text[0]);
        /* widen the bottleneck: the same graph solves */
        I.cap[sx] = 5;
        hrm_flow_set_arc(g, sx, 5, 1);
        struct ref ok = reference(&I, NULL);
        expect_supply(g, &I, &ok);
        cr_assert_eq(hrm_flow_total_cost(g), 10);
        /* demand at an unreachable vertex */
        int32_t lone = inst_vertex(&I, -1);
        hrm_flow_add_vertex(g, -1);
        I.sup[s] = 6;
        hrm_flow_set_supply(g, s, 6);
        cr_assert_eq(hrm_flow_solve(g, &err), -HRM_EINFEASIBLE);
        I.sup[lone] = 0;
        I.sup[s] = 5;
        hrm_flow_set_supply(g, lone, 0);
        hrm_flow_set_supply(g, s, 5);
        expect_supply(g, &I, &ok);
        hrm_flow_free(g);
        inst_free(&I);
    }
}

/*
 * P1's trap: GPU memory rules out some task-GPU pairs, so the paper's
 * fixed supplies (S sends every task, unscheduled arcs take N_j - A_j) cannot
 * be routed; min-cost max-flow still schedules as many tasks as fit, cheapest.
 */
Test(flow, max_flow_where_fixed_supplies_are_infeasible)
{
    for (size_t k = 0; k < NALGOS; k++) {
        struct inst I = {0};
        int32_t S = inst_vertex(&I, 4), T = inst_vertex(&I, -4);
        int32_t j = inst_vertex(&I, 0), u = inst_vertex(&I, 0);
        int32_t t1 = inst_vertex(&I, 0), t2 = inst_vertex(&I, 0), t3 = inst_vertex(&I, 0);
        int32_t t4 = inst_vertex(&I, 0);
        int32_t big = inst_vertex(&I, 0), small = inst_vertex(&I, 0);
        int32_t small2 = inst_vertex(&I, 0);
        inst_arc(&I, S, j, 4, 1);
        int32_t tv[] = {t1, t2, t3, t4};
        for (int i = 0; i < 4; i++)
            inst_arc(&I, j, tv[i], 1, 1);
        /* 3 GPUs, one job: A_j = 3, so u_j takes N_j - A_j = 1; but tasks 1-3 only fit
         * the big GPU, so only 2 GPUs can be used */
        inst_arc(&I, j, u, 1, 10);
        inst_arc(&I, u, T, 1, 10);
        inst_arc(&I, t1, big, 1, 3);
        inst_arc(&I, t2, big, 1, 2);
        inst_arc(&I, t3, big, 1, 4);
        inst_arc(&I, t4, big, 1, 9);
        inst_arc(&I, t4, small, 1, 5);
        inst_arc(&I, t4, small2, 1, 6);
        inst_arc(&I, big, T, 1, 1);
        inst_arc(&I, small, T, 1, 1);
        inst_arc(&I, small2, T, 1, 1);
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, algos[k]);
        struct hrm_error err;
        struct ref ok = reference(&I, NULL);
        cr_assert_not(ok.feasible, "the fixed-supply formulation has no solution");
        cr_assert_eq(hrm_flow_solve(g, &err), -HRM_EINFEASIBLE);
        expect_max(g, &I, S, T);
        cr_assert_eq(hrm_flow_value(g), 3, "2 GPUs + 1 unscheduled");
        /* S-j 3 units, t2 on big (1+2+1), t4 on small (1+5+1), u (10+10) */
        cr_assert_eq(hrm_flow_total_cost(g), 3 + 4 + 7 + 20);
        hrm_flow_free(g);
        inst_free(&I);
    }
}

static void netgen_random(struct netgen_parm *p, struct hrm_rng *r, bool negative)
{
    p->nodes = (int32_t)rng_range(r, 8, 90);
    p->sources = (int32_t)rng_range(r, 1, 6);
    p->sinks = (int32_t)rng_range(r, 1, 6);
    if (p->sources + p->sinks > p->nodes)
        p->sources = p->sinks = 1;
    p->arcs = p->nodes * (int32_t)rng_range(r, 2, 7);
    p->cost_min = negative ? -rng_range(r, 0, 30) : rng_range(r, 0, 3);
    p->cost_max = rng_range(r, 1, hrm_rng_below(r, 2) ? 20 : 1000);
    if (p->cost_max < p->cost_min)
        p->cost_max = p->cost_min;
    p->supply = rng_range(r, 0, 60);
    p->cap_min = rng_range(r, 0, 3);
    p->cap_max = p->cap_min + rng_range(r, 0, 30);
    p->pct_hicost = (int)rng_range(r, 0, 30);
    p->pct_capacitated = (int)rng_range(r, 20, 100);
}

Test(flow, netgen_instances_match_glpk)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 1);
    for (int seed = 0; seed < 300; seed++) {
        struct netgen_parm p;
        netgen_random(&p, &r, seed % 3 == 0);
        p.skeleton_capacitated = seed % 4 == 3; /* some of these are infeasible */
        struct inst I = {0};
        netgen(&I, &p, (uint64_t)seed);
        struct ref ok = reference(&I, NULL);
        for (size_t k = 0; k < NALGOS; k++) {
            struct hrm_flow *g = inst_graph(&I);
            hrm_flow_set_algo(g, algos[k]);
            expect_supply(g, &I, &ok);
            hrm_flow_free(g);
        }
        inst_free(&I);
    }
}

Test(flow, netgen_min_cost_max_flow_matches_glpk)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 2);
    for (int seed = 0; seed < 150; seed++) {
        struct netgen_parm p;
        netgen_random(&p, &r, seed % 2 == 0);
        p.skeleton_capacitated = true;
        struct inst I = {0};
        netgen(&I, &p, (uint64_t)seed + 1000);
        int32_t s = 0, t = I.n - 1;
        for (size_t k = 0; k < NALGOS; k++) {
            struct hrm_flow *g = inst_graph(&I);
            hrm_flow_set_algo(g, algos[k]);
            expect_max(g, &I, s, t);
            hrm_flow_free(g);
        }
        inst_free(&I);
    }
}

static void sched_random(struct sched_parm *p, struct hrm_rng *r)
{
    p->jobs = (int32_t)rng_range(r, 1, 6);
    p->tasks_max = (int32_t)rng_range(r, 1, 12);
    p->racks = (int32_t)rng_range(r, 1, 3);
    p->machines_per_rack = (int32_t)rng_range(r, 1, 4);
    p->gpus_per_machine = (int32_t)rng_range(r, 1, 2);
    p->mem_classes = (int32_t)rng_range(r, 1, 3);
    p->unscheduled = hrm_rng_below(r, 3) != 0;
}

Test(flow, scheduling_graphs_match_glpk)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 3);
    for (int seed = 0; seed < 150; seed++) {
        struct sched_parm p;
        sched_random(&p, &r);
        struct inst I = {0};
        int32_t S, T;
        sched_graph(&I, &p, (uint64_t)seed, &S, &T);
        for (size_t k = 0; k < NALGOS; k++) {
            struct hrm_flow *g = inst_graph(&I);
            hrm_flow_set_algo(g, algos[k]);
            expect_max(g, &I, S, T);
            hrm_flow_free(g);
        }
        /* the supply form: S sends the maximum flow, T takes it */
        int64_t value = ref_maxflow(&I, S, T);
        I.sup[S] = value;
        I.sup[T] = -value;
        struct ref ok = reference(&I, NULL);
        cr_assert(ok.feasible);
        for (size_t k = 0; k < NALGOS; k++) {
            struct hrm_flow *g = inst_graph(&I);
            hrm_flow_set_algo(g, algos[k]);
            expect_supply(g, &I, &ok);
            hrm_flow_free(g);
        }
        inst_free(&I);
    }
}

/* Fewer, larger instances: a few thousand vertices, both formulations, all algorithms. */
Test(flow, larger_instances_match_glpk)
{
    struct netgen_parm p = {.nodes = 1500,
                            .sources = 12,
                            .sinks = 12,
                            .arcs = 9000,
                            .cost_min = -20,
                            .cost_max = 500,
                            .supply = 400,
                            .cap_min = 0,
                            .cap_max = 40,
                            .pct_hicost = 10,
                            .pct_capacitated = 60};
    struct inst I = {0};
    netgen(&I, &p, 99);
    struct ref ok = reference(&I, NULL);
    cr_assert(ok.feasible);
    for (size_t k = 0; k < NALGOS; k++) {
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, algos[k]);
        expect_supply(g, &I, &ok);
        hrm_flow_free(g);
    }
    inst_free(&I);
    struct sched_parm sp = {.jobs = 25,
                            .tasks_max = 60,
                            .racks = 4,
                            .machines_per_rack = 6,
                            .gpus_per_machine = 4,
                            .mem_classes = 3,
                            .unscheduled = true};
    int32_t S, T;
    sched_graph(&I, &sp, 7, &S, &T);
    for (size_t k = 0; k < NALGOS; k++) {
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, algos[k]);
        expect_max(g, &I, S, T);
        hrm_flow_free(g);
    }
    inst_free(&I);
}

/*
 * Routing inside a phase: flow on the shortest-path tree (a root feeding
 * deficits in several subtrees, capped by tree arcs) and blocking flows over
 * the other arcs of reduced cost 0.  Hand-checked: s has 8 units, the subtree
 * through a (capacity 3) wants 3, the one through b (capacity 2) wants 5; the
 * 3 units b cannot carry take the dear arc s -> d3.
 */
Test(flow, tree_routing_splits_and_caps)
{
    for (size_t k = 0; k < NALGOS; k++) {
        struct inst I = {0};
        int32_t s = inst_vertex(&I, 8), a = inst_vertex(&I, 0), b = inst_vertex(&I, 0);
        int32_t d1 = inst_vertex(&I, -2), d2 = inst_vertex(&I, -1), d3 = inst_vertex(&I, -5);
        inst_arc(&I, s, a, 3, 0);
        inst_arc(&I, a, d1, 5, 0);
        inst_arc(&I, a, d2, 5, 0);
        inst_arc(&I, s, b, 2, 0);
        inst_arc(&I, b, d3, 5, 0);
        int32_t dear = inst_arc(&I, s, d3, 9, 7);
        inst_arc(&I, d1, d2, 1, 0); /* a zero-cost arc off the tree */
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, algos[k]);
        struct ref ok = reference(&I, NULL);
        cr_assert(ok.feasible);
        expect_supply(g, &I, &ok);
        cr_assert_eq(hrm_flow_total_cost(g), 3 * 7, "3 of 8 units take the dear arc");
        cr_assert_eq(hrm_flow_arc_flow(g, dear), 3);
        hrm_flow_free(g);
        inst_free(&I);
    }
}

Test(flow, reset_and_statistics)
{
    struct inst I = {0};
    int32_t S, T;
    struct sched_parm sp = {.jobs = 3,
                            .tasks_max = 5,
                            .racks = 2,
                            .machines_per_rack = 2,
                            .gpus_per_machine = 1,
                            .mem_classes = 2,
                            .unscheduled = true};
    sched_graph(&I, &sp, 11, &S, &T);
    struct hrm_flow *g = inst_graph(&I);
    struct hrm_flow_stats st;
    expect_max(g, &I, S, T);
    hrm_flow_stats(g, &st);
    cr_assert_not(st.warm, "the first solve starts from zero");
    cr_assert_gt(st.phases, 0);
    expect_max(g, &I, S, T);
    hrm_flow_stats(g, &st);
    cr_assert(st.warm);
    cr_assert_eq(st.phases, 0, "nothing changed: nothing to do");
    hrm_flow_reset(g);
    expect_max(g, &I, S, T);
    hrm_flow_stats(g, &st);
    cr_assert_not(st.warm, "after a reset the solve starts from zero");
    hrm_flow_set_algo(g, HRM_FLOW_SCALING);
    expect_max(g, &I, S, T);
    hrm_flow_stats(g, &st);
    cr_assert(st.warm, "cost scaling re-solves from the kept state too");
    hrm_flow_reset(g);
    expect_max(g, &I, S, T);
    hrm_flow_stats(g, &st);
    cr_assert(st.scaling);
    hrm_flow_free(g);
    inst_free(&I);
}

/* One random change to I and g alike: capacity, cost, paired supply move, new arc or vertex. */
static void mutate(struct inst *I, struct hrm_flow *g, struct hrm_rng *r, bool supplies,
                   bool negative)
{
    int kind = (int)hrm_rng_below(r, supplies ? 6 : 5);
    int32_t a = I->m > 0 ? (int32_t)hrm_rng_below(r, (uint64_t)I->m) : -1;
    if (a < 0)
        kind = 3;
    switch (kind) {
    case 0: /* capacity change, often to 0 (an arc removed) */
    case 1:
        I->cap[a] = hrm_rng_below(r, 3) == 0 ? 0 : rng_range(r, 0, 40);
        cr_assert_eq(hrm_flow_set_arc(g, a, I->cap[a], I->cost[a]), 0);
        break;
    case 2: /* cost change */
        I->cost[a] = rng_range(r, negative ? -30 : 0, 200);
        cr_assert_eq(hrm_flow_set_arc(g, a, I->cap[a], I->cost[a]), 0);
        break;
    case 3: { /* new arc */
        int32_t u = (int32_t)hrm_rng_below(r, (uint64_t)I->n);
        int32_t v = (int32_t)hrm_rng_below(r, (uint64_t)I->n);
        int64_t cap = rng_range(r, 0, 30), cost = rng_range(r, negative ? -30 : 0, 200);
        cr_assert_eq(hrm_flow_add_arc(g, u, v, cap, cost), inst_arc(I, u, v, cap, cost));
        break;
    }
    case 4: { /* new vertex with arcs both ways */
        int32_t v = inst_vertex(I, 0);
        cr_assert_eq(hrm_flow_add_vertex(g, 0), v);
        for (int i = 0; i < 3; i++) {
            int32_t u = (int32_t)hrm_rng_below(r, (uint64_t)v);
            int64_t cap = rng_range(r, 1, 30), cost = rng_range(r, negative ? -30 : 0, 200);
            bool in = hrm_rng_below(r, 2);
            int32_t from = in ? u : v, to = in ? v : u;
            cr_assert_eq(hrm_flow_add_arc(g, from, to, cap, cost),
                         inst_arc(I, from, to, cap, cost));
        }
        break;
    }
    default: { /* move supply between two vertices, keeping the sum at 0 */
        int32_t u = (int32_t)hrm_rng_below(r, (uint64_t)I->n);
        int32_t v = (int32_t)hrm_rng_below(r, (uint64_t)I->n);
        int64_t d = rng_range(r, 1, 5);
        I->sup[u] += d;
        I->sup[v] -= d;
        hrm_flow_set_supply(g, u, I->sup[u]);
        hrm_flow_set_supply(g, v, I->sup[v]);
        break;
    }
    }
}

/* Warm re-solves after random changes equal a from-scratch solve and GLPK. */
Test(flow, warm_resolve_equals_scratch_solve)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 4);
    struct hrm_error err;
    for (int seed = 0; seed < 200; seed++) {
        struct netgen_parm p;
        netgen_random(&p, &r, seed % 3 == 0);
        p.skeleton_capacitated = false;
        struct inst I = {0};
        netgen(&I, &p, (uint64_t)seed + 2000);
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, seed % 2 ? HRM_FLOW_AUTO : HRM_FLOW_SSP);
        struct ref ok = reference(&I, NULL);
        expect_supply(g, &I, &ok);
        for (int round = 0; round < 6; round++) {
            int changes = 1 + (int)hrm_rng_below(&r, 4);
            for (int c = 0; c < changes; c++)
                mutate(&I, g, &r, true, seed % 3 == 0);
            ok = reference(&I, NULL);
            expect_supply(g, &I, &ok);
            struct hrm_flow_stats st;
            hrm_flow_stats(g, &st);
            cr_assert(st.warm || !ok.feasible || round == 0 || st.scaling == 0);
            /* the same problem from scratch */
            struct hrm_flow *fresh = inst_graph(&I);
            int rc = hrm_flow_solve(fresh, &err);
            cr_assert_eq(rc, ok.feasible ? 0 : -HRM_EINFEASIBLE, "seed %d round %d: %s", seed,
                         round, err.text);
            if (ok.feasible)
                cr_assert_eq(check_flow(fresh, &I, I.sup), hrm_flow_total_cost(g));
            hrm_flow_free(fresh);
        }
        hrm_flow_free(g);
        inst_free(&I);
    }
}

/* The scheduler's loop: tasks end, GPUs fail and return, jobs arrive, costs move. */
Test(flow, warm_max_flow_follows_scheduling_changes)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 5);
    for (int seed = 0; seed < 150; seed++) {
        struct sched_parm p;
        sched_random(&p, &r);
        struct inst I = {0};
        int32_t S, T;
        sched_graph(&I, &p, (uint64_t)seed + 3000, &S, &T);
        struct hrm_flow *g = inst_graph(&I);
        expect_max(g, &I, S, T);
        for (int round = 0; round < 5; round++) {
            int changes = 1 + (int)hrm_rng_below(&r, 3);
            for (int c = 0; c < changes; c++)
                mutate(&I, g, &r, false, false);
            expect_max(g, &I, S, T);
            struct hrm_flow_stats st;
            hrm_flow_stats(g, &st);
            cr_assert(st.warm, "solve_max re-solves from its last flow");
        }
        hrm_flow_free(g);
        inst_free(&I);
    }
}

/*
 * Two chains of 1,500 zero-cost arcs from s to t: longer than the depth-first
 * routing follows (DFS_DEPTH in ssp.c), so the second unit needs another
 * phase or Dinic's algorithm; the answer must not change.
 */
Test(flow, paths_longer_than_the_depth_first_limit)
{
    for (size_t k = 0; k < NALGOS; k++) {
        struct inst I = {0};
        int32_t s = inst_vertex(&I, 3), t = inst_vertex(&I, -3);
        for (int c = 0; c < 2; c++) {
            int32_t prev = s;
            for (int i = 0; i < 1500; i++) {
                int32_t v = inst_vertex(&I, 0);
                inst_arc(&I, prev, v, 1, 0);
                prev = v;
            }
            inst_arc(&I, prev, t, 1, 0);
        }
        inst_arc(&I, s, t, 5, 1000);
        struct hrm_flow *g = inst_graph(&I);
        hrm_flow_set_algo(g, algos[k]);
        struct ref ok = reference(&I, NULL);
        expect_supply(g, &I, &ok);
        cr_assert_eq(hrm_flow_total_cost(g), 1000, "two units by the chains, one by the arc");
        expect_max(g, &I, s, t);
        cr_assert_eq(hrm_flow_value(g), 7);
        hrm_flow_free(g);
        inst_free(&I);
    }
}

/*
 * Costs with many ties (all 0, or 0 and 1) make most of the graph one region
 * of reduced cost 0: a phase routes thousands of units by blocking flows over
 * long zero-cost paths, with cycles of zero cost everywhere.  Both forms, all
 * algorithms, and warm re-solves, against GLPK.
 */
Test(flow, tied_costs_match_glpk)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 8);
    struct hrm_error err;
    for (int seed = 0; seed < 60; seed++) {
        struct netgen_parm p;
        netgen_random(&p, &r, false);
        p.cost_min = 0;
        p.cost_max = seed % 3 == 0 ? 0 : 1;
        p.pct_hicost = 0;
        p.supply = rng_range(&r, 20, 400);
        p.cap_min = 1;
        p.cap_max = rng_range(&r, 1, 4);
        p.skeleton_capacitated = seed % 2 == 0;
        struct inst I = {0};
        netgen(&I, &p, (uint64_t)seed + 5000);
        struct ref ok = reference(&I, NULL);
        for (size_t k = 0; k < NALGOS; k++) {
            struct hrm_flow *g = inst_graph(&I);
            hrm_flow_set_algo(g, algos[k]);
            expect_supply(g, &I, &ok);
            expect_max(g, &I, 0, I.n - 1);
            hrm_flow_free(g);
        }
        struct hrm_flow *g = inst_graph(&I);
        expect_max(g, &I, 0, I.n - 1);
        for (int round = 0; round < 4; round++) {
            mutate(&I, g, &r, false, false);
            expect_max(g, &I, 0, I.n - 1);
            struct hrm_flow *fresh = inst_graph(&I);
            cr_assert_eq(hrm_flow_solve_max(fresh, 0, I.n - 1, &err), 0, "%s", err.text);
            cr_assert_eq(hrm_flow_total_cost(fresh), hrm_flow_total_cost(g));
            hrm_flow_free(fresh);
        }
        hrm_flow_free(g);
        inst_free(&I);
    }
}

/* Alternating formulations and terminals on one graph. */
Test(flow, switching_between_supplies_and_max_flow)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 6);
    for (int seed = 0; seed < 60; seed++) {
        struct netgen_parm p;
        netgen_random(&p, &r, true);
        p.skeleton_capacitated = false;
        struct inst I = {0};
        netgen(&I, &p, (uint64_t)seed + 4000);
        struct hrm_flow *g = inst_graph(&I);
        struct ref ok = reference(&I, NULL);
        for (int round = 0; round < 4; round++) {
            expect_supply(g, &I, &ok);
            int32_t s = (int32_t)hrm_rng_below(&r, (uint64_t)I.n);
            int32_t t = (int32_t)hrm_rng_below(&r, (uint64_t)I.n);
            if (s == t)
                t = (t + 1) % I.n;
            expect_max(g, &I, s, t);
        }
        hrm_flow_free(g);
        inst_free(&I);
    }
}

Test(flow, dimacs_round_trip)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 7);
    struct netgen_parm p;
    netgen_random(&p, &r, true);
    p.skeleton_capacitated = false;
    struct inst I = {0};
    netgen(&I, &p, 77);
    struct hrm_flow *g = inst_graph(&I);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(hrm_flow_write_dimacs(g, f, "round trip"), 0);
    fclose(f);
    f = fmemopen(buf, len, "r");
    struct hrm_flow *h = NULL;
    struct hrm_error err;
    cr_assert_eq(hrm_flow_read_dimacs(f, "mem", &h, &err), 0, "%s", err.text);
    fclose(f);
    free(buf);
    cr_assert_eq(hrm_flow_vertices(h), I.n);
    cr_assert_eq(hrm_flow_arcs(h), I.m);
    for (int32_t a = 0; a < I.m; a++) {
        cr_assert_eq(hrm_flow_arc_from(h, a), I.from[a]);
        cr_assert_eq(hrm_flow_arc_to(h, a), I.to[a]);
        cr_assert_eq(hrm_flow_arc_capacity(h, a), I.cap[a]);
        cr_assert_eq(hrm_flow_arc_cost(h, a), I.cost[a]);
    }
    for (int32_t v = 0; v < I.n; v++)
        cr_assert_eq(hrm_flow_supply(h, v), I.sup[v]);
    struct ref ok = reference(&I, NULL);
    expect_supply(h, &I, &ok);
    hrm_flow_free(h);
    hrm_flow_free(g);
    inst_free(&I);
}

static void dimacs_fails(const char *text, const char *needle)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    struct hrm_flow *g = NULL;
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_read_dimacs(f, "t.min", &g, &err), -HRM_ESPEC, "accepted: %s", text);
    fclose(f);
    cr_assert_null(g);
    cr_assert(strstr(err.text, needle), "'%s' lacks '%s'", err.text, needle);
}

Test(flow, dimacs_errors_name_the_line)
{
    dimacs_fails("c x\np min 2 1\na 1 2 1 5 3\n", "t.min:3: arc 1 -> 2: lower bound 1 not supported");
    dimacs_fails("p min 2 1\na 1 3 0 5 3\n", "t.min:2: arc 1 -> 3: vertex out of 1..2");
    dimacs_fails("p min 2 1\nn 1 4 9\n", "t.min:2: expected 'n ID SUPPLY'");
    dimacs_fails("a 1 2 0 1 1\n", "t.min:1: 'a' line before the 'p min' line");
    dimacs_fails("p max 2 1\n", "t.min:1: expected 'p min N M'");
    dimacs_fails("p min 2 2\na 1 2 0 1 1\n", "t.min:2: 2 arcs declared, 1 found");
    dimacs_fails("p min 2 1\nx\n", "t.min:2: unknown line type 'x'");
    dimacs_fails("p min 2 1\na 1 2 0 -1 1\n", "t.min:2: arc 1 -> 2: capacity -1");
    dimacs_fails("p min 2 1\na 1 2 0 1 1x\n", "t.min:2: expected 'a FROM TO LOW CAP COST'");
    dimacs_fails("c only a comment\n", "no 'p min N M' line");
}
