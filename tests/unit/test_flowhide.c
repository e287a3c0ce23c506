/* The shortest-path engine's live arcs: every vertex's arcs with residual capacity first, the
 * searches and the routing reading no further (ssp_sum.c), kept through every kind of change. */
#include "test_flowarr.h"

#include "flow/flow_private.h"
#include "hrm/flowgen.h"

/* After every solve, each vertex's slots before its live boundary are exactly its arcs that
 * can carry flow (among those not hidden by folding). */
static void expect_partitioned(const struct hrm_flow *g, const char *what)
{
    cr_assert_eq(flow_sum_misplaced(g), 0, "%s: %lld residual arcs on the wrong side of their "
                 "vertex's live boundary", what, (long long)flow_sum_misplaced(g));
}

static const enum hrm_flowgen_change kinds[] = {
    HRM_FLOWGEN_TASK_END, HRM_FLOWGEN_JOB_ARRIVE, HRM_FLOWGEN_NODE_DIES, HRM_FLOWGEN_ARC_COST,
    HRM_FLOWGEN_BATCH};

/*
 * Random sequences of every kind of change on P1 graphs of many shapes (per GPU and per
 * machine, 100-500 GPUs, 10-30 jobs of 10-50 tasks), under AUTO and SSP, with a reset (a cold
 * solve from the kept layout) now and then: every re-solve leaves each vertex's live part
 * exact, and is certified by its potentials and equal in cost and value to from-scratch solves
 * by shortest paths and cost scaling.
 */
Test(flowhide, random_changes_keep_the_live_arcs_exact_and_the_answers_optimal, .timeout = 900)
{
    for (uint64_t seed = 1; seed <= 12; seed++) {
        struct hrm_flowgen_sched s = {0};
        struct hrm_flowgen_p1 q;
        p1_shape_of(seed, seed % 2 == 1, (struct p1_range){100, 37, 401},
                    (struct p1_range){10, 7, 21}, (struct p1_range){10, 11, 41},
                    (struct p1_range){2, 1, 3}, &s, &q);
        struct hrm_flowgen_changer ch = {
            .s = &s, .skeleton_cap = 1 << 30, .job_tasks = q.jobs * q.tasks_per_job / 40 + 1};
        hrm_rng_seed(&ch.rng, seed * 7 + 1);
        hrm_flow_set_algo(s.g, seed % 3 ? HRM_FLOW_AUTO : HRM_FLOW_SSP);
        struct hrm_error err = {{0}};
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s", err.text);
        expect_partitioned(s.g, "cold solve");
        for (int i = 0; i < 14; i++) {
            enum hrm_flowgen_change k = kinds[hrm_rng_below(&ch.rng, 5)];
            hrm_flowgen_change(&ch, k);
            if (i == 9)
                hrm_flow_reset(s.g);
            char what[96];
            snprintf(what, sizeof(what), "seed %d change %d (%s)", (int)seed, i,
                     hrm_flowgen_change_name(k));
            cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s: %s", what, err.text);
            expect_partitioned(s.g, what);
            if (i != 9)
                expect_optimal(s.g, s.S, s.T, what);
        }
        hrm_flowgen_sched_fini(&s);
    }
}

/*
 * A hub reached by one arc that can carry flow and by 50 arcs that carry none (their
 * reverse arcs at the hub have no residual capacity, like the reverse arcs of a machine's
 * placement arcs): the search from the supply reads the source's one arc and the hub's one
 * arc to the demand, not the 51 reverse arcs at the hub (the engine before read all 53).
 */
Test(flowhide, a_search_reads_no_arc_without_residual_capacity)
{
    struct hrm_flow *g = hrm_flow_new(53, 52);
    int32_t a = hrm_flow_add_vertex(g, 1), h = hrm_flow_add_vertex(g, 0);
    int32_t z = hrm_flow_add_vertex(g, -1);
    for (int i = 0; i < 50; i++) {
        int32_t f = hrm_flow_add_vertex(g, 0);
        cr_assert_geq(hrm_flow_add_arc(g, f, h, 1, 0), 0);
    }
    cr_assert_geq(hrm_flow_add_arc(g, a, h, 2, 3), 0);
    cr_assert_geq(hrm_flow_add_arc(g, h, z, 2, 4), 0);
    hrm_flow_set_algo(g, HRM_FLOW_SSP);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert_eq(st.phases, 1);
    cr_assert_eq(st.scanned, 3, "settled %lld", (long long)st.scanned);
    cr_assert_eq(st.arcs_read, 2, "the search read %lld arcs", (long long)st.arcs_read);
    cr_assert_eq(hrm_flow_total_cost(g), 7);
    expect_partitioned(g, "after the solve");
    hrm_flow_free(g);
}
