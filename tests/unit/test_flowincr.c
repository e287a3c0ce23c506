/* Warm re-solves after every kind of scheduler change, on every family, after either algorithm. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/flowgen.h"
#include "test_flowarr.h"

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
