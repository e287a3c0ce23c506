/* Warm re-solves after every kind of scheduler change, on every family, after either algorithm. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/flowgen.h"

/*
 * The solution is a flow (capacities, supplies or +-value at the terminals)
 * whose potentials certify optimality: below capacity reduced cost >= 0, with
 * flow <= 0.  Returns its cost.
 */
static int64_t certified_cost(const struct hrm_flow *g, int32_t S, int32_t T)
{
    int32_t n = hrm_flow_vertices(g);
    int64_t *net = hrm_calloc((size_t)n, sizeof(int64_t));
    for (int32_t a = 0; a < hrm_flow_arcs(g); a++) {
        int32_t u = hrm_flow_arc_from(g, a), v = hrm_flow_arc_to(g, a);
        int64_t f = hrm_flow_arc_flow(g, a), cap = hrm_flow_arc_capacity(g, a);
        int64_t rc = hrm_flow_arc_cost(g, a) + hrm_flow_potential(g, u) - hrm_flow_potential(g, v);
        cr_assert(f >= 0 && f <= cap, "arc %d: flow %lld outside [0, %lld]", a, (long long)f,
                  (long long)cap);
        cr_assert(f == cap || rc >= 0, "arc %d below capacity, reduced cost %lld", a,
                  (long long)rc);
        cr_assert(f == 0 || rc <= 0, "arc %d carries flow, reduced cost %lld", a, (long long)rc);
        net[u] += f;
        net[v] -= f;
    }
    for (int32_t v = 0; v < n; v++) {
        int64_t want = S >= 0 ? (v == S ? hrm_flow_value(g) : v == T ? -hrm_flow_value(g) : 0)
                              : hrm_flow_supply(g, v);
        cr_assert_eq(net[v], want, "vertex %d: net outflow %lld, want %lld", v, (long long)net[v],
                     (long long)want);
    }
    hrm_free(net);
    return hrm_flow_total_cost(g);
}

/* The same problem in a new graph (through the DIMACS writer and reader),
 * solved from scratch with algo. */
static struct hrm_flow *solved_copy(const struct hrm_flow *g, int32_t S, int32_t T,
                                    enum hrm_flow_algo algo)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(hrm_flow_write_dimacs(g, f, NULL), 0);
    fclose(f);
    f = fmemopen(text, len, "r");
    struct hrm_flow *h = NULL;
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_read_dimacs(f, "copy", &h, &err), 0, "%s", err.text);
    fclose(f);
    free(text);
    hrm_flow_set_algo(h, algo);
    int rc = S >= 0 ? hrm_flow_solve_max(h, S, T, &err) : hrm_flow_solve(h, &err);
    cr_assert_eq(rc, 0, "from scratch: %s", err.text);
    return h;
}

static int solve(struct hrm_flow *g, int32_t S, int32_t T, struct hrm_error *err)
{
    return S >= 0 ? hrm_flow_solve_max(g, S, T, err) : hrm_flow_solve(g, err);
}

/* Re-solves g warm and checks it against from-scratch solves by both algorithms. */
static void expect_warm_optimal(struct hrm_flow *g, int32_t S, int32_t T, const char *what)
{
    struct hrm_error err = {{0}};
    cr_assert_eq(solve(g, S, T, &err), 0, "%s: %s", what, err.text);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.warm, "%s: the re-solve starts from the last flow and potentials", what);
    cr_assert_not(st.scaling, "%s: no cost scaling from scratch", what);
    int64_t cost = certified_cost(g, S, T);
    static const enum hrm_flow_algo algos[] = {HRM_FLOW_SSP, HRM_FLOW_SCALING};
    for (int i = 0; i < 2; i++) {
        struct hrm_flow *h = solved_copy(g, S, T, algos[i]);
        cr_assert_eq(cost, hrm_flow_total_cost(h), "%s: warm cost %lld, from scratch %lld", what,
                     (long long)cost, (long long)hrm_flow_total_cost(h));
        cr_assert_eq(hrm_flow_value(g), hrm_flow_value(h), "%s: warm value %lld, from scratch %lld",
                     what, (long long)hrm_flow_value(g), (long long)hrm_flow_value(h));
        hrm_flow_free(h);
    }
}

/* Adds a job of one task that can run on gpu at cost c, or stay unscheduled at 10. */
static void add_job1(struct hrm_flow *g, int32_t S, int32_t T, int32_t gpu, int64_t c)
{
    int32_t job = hrm_flow_add_vertex(g, 0), task = hrm_flow_add_vertex(g, 0);
    int32_t un = hrm_flow_add_vertex(g, 0);
    hrm_flow_add_arc(g, S, job, 1, 0);
    hrm_flow_add_arc(g, job, task, 1, 0);
    hrm_flow_add_arc(g, task, gpu, 1, c);
    hrm_flow_add_arc(g, job, un, 1, 10);
    hrm_flow_add_arc(g, un, T, 1, 0);
}

/*
 * A scheduling graph small enough to solve by hand.  GPUs g1, g2 (-> T, cap 1,
 * cost 0); job A with tasks a1 (g1: 1, g2: 3) and a2 (g1: 2, g2: 2); every
 * job J has an unscheduled vertex u_J (cost 10).  After cost scaling solves it,
 * each change is re-solved from the kept state, and each answer is the one
 * worked out in the comments.
 */
Test(flowincr, hand_worked_changes_after_cost_scaling)
{
    struct hrm_flow *g = hrm_flow_new(0, 0);
    int32_t S = hrm_flow_add_vertex(g, 0), T = hrm_flow_add_vertex(g, 0);
    int32_t g1 = hrm_flow_add_vertex(g, 0), g2 = hrm_flow_add_vertex(g, 0);
    int32_t g1t = hrm_flow_add_arc(g, g1, T, 1, 0);
    hrm_flow_add_arc(g, g2, T, 1, 0);
    int32_t A = hrm_flow_add_vertex(g, 0), a1 = hrm_flow_add_vertex(g, 0);
    int32_t a2 = hrm_flow_add_vertex(g, 0), uA = hrm_flow_add_vertex(g, 0);
    int32_t sa = hrm_flow_add_arc(g, S, A, 2, 0);
    int32_t aa1 = hrm_flow_add_arc(g, A, a1, 1, 0);
    hrm_flow_add_arc(g, A, a2, 1, 0);
    hrm_flow_add_arc(g, a1, g1, 1, 1);
    hrm_flow_add_arc(g, a1, g2, 1, 3);
    int32_t a2g1 = hrm_flow_add_arc(g, a2, g1, 1, 2);
    int32_t a2g2 = hrm_flow_add_arc(g, a2, g2, 1, 2);
    hrm_flow_add_arc(g, A, uA, 2, 10);
    hrm_flow_add_arc(g, uA, T, 2, 0);
    hrm_flow_set_algo(g, HRM_FLOW_SCALING);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve_max(g, S, T, &err), 0, "%s", err.text);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.scaling);
    /* a1 -> g1 (1) + a2 -> g2 (2) */
    cr_assert_eq(hrm_flow_value(g), 2);
    cr_assert_eq(certified_cost(g, S, T), 3);

    /* a1 ends: a2 alone takes g1 (2) */
    hrm_flow_set_arc(g, aa1, 0, 0);
    hrm_flow_set_arc(g, sa, 1, 0);
    expect_warm_optimal(g, S, T, "task end");
    cr_assert_eq(hrm_flow_value(g), 1);
    cr_assert_eq(hrm_flow_total_cost(g), 2);

    /* job B arrives, one task b1 (g1: 1): b1 -> g1 (1) + a2 -> g2 (2) */
    add_job1(g, S, T, g1, 1);
    expect_warm_optimal(g, S, T, "job arrival");
    cr_assert_eq(hrm_flow_value(g), 2);
    cr_assert_eq(hrm_flow_total_cost(g), 3);

    /* g1 dies: a2 -> g2 (2), b1 unscheduled (10) */
    hrm_flow_set_arc(g, g1t, 0, 0);
    expect_warm_optimal(g, S, T, "node death");
    cr_assert_eq(hrm_flow_value(g), 2);
    cr_assert_eq(hrm_flow_total_cost(g), 12);

    /* a2 -> g2 costs 7: still cheaper than a2 unscheduled (17 against 20) */
    hrm_flow_set_arc(g, a2g2, 1, 7);
    expect_warm_optimal(g, S, T, "arc cost");
    cr_assert_eq(hrm_flow_total_cost(g), 17);

    /* at once: g1 returns, a2 -> g1 costs 0, job C (one task c1, g2: 1)
     * arrives: a2 -> g1 (0) + c1 -> g2 (1) + b1 unscheduled (10) */
    hrm_flow_set_arc(g, g1t, 1, 0);
    hrm_flow_set_arc(g, a2g1, 1, 0);
    add_job1(g, S, T, g2, 1);
    expect_warm_optimal(g, S, T, "many changes");
    cr_assert_eq(hrm_flow_value(g), 3);
    cr_assert_eq(hrm_flow_total_cost(g), 11);
    hrm_flow_free(g);
}

/* Small instances of every family (P1 in its max-flow form). */
static void build_family(int fam, uint64_t seed, struct hrm_flowgen_sched *s, int64_t *skeleton)
{
    struct hrm_flowgen_params p;
    enum hrm_flowgen_family f = fam >= HRM_FLOWGEN_P1 ? HRM_FLOWGEN_P1 : (enum hrm_flowgen_family)fam;
    hrm_flowgen_defaults(f, 'S', &p);
    p.seed = seed;
    p.supply = 2000;
    p.cost_max = f == HRM_FLOWGEN_GOTO ? 1 << 16 : 1000;
    p.cap_max = 200;
    if (f == HRM_FLOWGEN_NETGEN) {
        p.nodes = 150, p.arcs = 1200, p.sources = p.sinks = 6;
    } else if (f == HRM_FLOWGEN_GRIDGEN) {
        p.rows = 10, p.cols = 12, p.arcs = 600, p.sources = p.sinks = 4;
    } else if (f == HRM_FLOWGEN_GOTO) {
        p.rows = p.cols = 9, p.arcs = 8 * 81;
    }
    *skeleton = p.supply;
    if (f != HRM_FLOWGEN_P1) {
        struct hrm_error err = {{0}};
        cr_assert_eq(hrm_flowgen_build(f, &p, &s->g, &err), 0, "%s", err.text);
        s->S = s->T = -1;
        return;
    }
    /* P1: a few shapes: few large jobs, many small ones, per GPU or per machine */
    struct hrm_flowgen_p1 q;
    hrm_flowgen_p1_defaults(&q);
    q.seed = seed;
    q.per_gpu = fam == HRM_FLOWGEN_P1;
    q.gpus = 80 + (long long)(seed % 3) * 40;
    q.jobs = seed % 2 ? 3 : 12;
    q.tasks_per_job = seed % 2 ? 40 : 8;
    q.machines_per_rack = 5;
    hrm_flowgen_p1_build(&q, s);
}

static const char *const family_names[] = {"netgen", "gridgen", "goto", "p1", "p1-rack"};

/*
 * Every family x every kind of change x several seeds, after a cost-scaling
 * solve and after a shortest-path one: the warm re-solve's flow is optimal
 * (its potentials certify it) and costs what from-scratch solves cost.
 */
Test(flowincr, every_change_kind_on_every_family_equals_scratch, .timeout = 600)
{
    for (int fam = 0; fam < 5; fam++)
        for (int kind = 0; kind < HRM_FLOWGEN_NCHANGES; kind++)
            for (uint64_t seed = 1; seed <= 4; seed++) {
                struct hrm_flowgen_sched s = {0};
                struct hrm_flowgen_changer ch = {.s = &s, .job_tasks = seed % 2 ? 5 : 20};
                build_family(fam, seed, &s, &ch.skeleton_cap);
                hrm_rng_seed(&ch.rng, seed * 31 + (uint64_t)kind);
                hrm_flow_set_algo(s.g, seed % 2 ? HRM_FLOW_SCALING : HRM_FLOW_AUTO);
                struct hrm_error err = {{0}};
                cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s", err.text);
                char what[96];
                for (int round = 0; round < 3; round++) {
                    hrm_flowgen_change(&ch, (enum hrm_flowgen_change)kind);
                    snprintf(what, sizeof(what), "%s seed %d %s round %d", family_names[fam],
                             (int)seed, hrm_flowgen_change_name((enum hrm_flowgen_change)kind),
                             round);
                    expect_warm_optimal(s.g, s.S, s.T, what);
                }
                hrm_flowgen_sched_fini(&s);
            }
}
