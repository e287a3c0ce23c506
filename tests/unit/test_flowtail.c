/* A search that stops at the first deficit labels the deficit as soon as a vertex with a
 * residual arc into it is labelled (ssp.c, mark_into_deficits), and the re-solves stay optimal
 * along streams of scheduler batches. */
#include "test_flowarr.h"

#include "flow/flow_private.h"
#include "hrm/flowgen.h"

/*
 * A re-solve with one unit to route from s to the deficit d, drawn from a seed: s has arcs to
 * k tie vertices a_1 .. a_k (20-79), each a_i one arc to its own b_i, and only b_j (j in
 * 2 .. k) an arc to d; every cost is 0, so every vertex ties at distance 0.  Ties are taken
 * first in, first out: the a_i are settled first, then the b_i from b_1 on.  A search that
 * labels d only when b_j is settled settles s, every a_i, b_1 .. b_j and d (k + j + 2
 * vertices); one that labels d when b_j is labelled ends after a_j: at most k + 3 (s, the
 * a_i, b_j, d) whatever the order of the ties.
 */
Test(flowtail, the_deficit_is_labelled_with_the_vertex_before_it)
{
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct hrm_rng rng;
        hrm_rng_seed(&rng, seed);
        int32_t k = 20 + (int32_t)hrm_rng_below(&rng, 60);
        int32_t j = 2 + (int32_t)hrm_rng_below(&rng, (uint64_t)k - 1);
        struct hrm_flow *g = hrm_flow_new(2 + 2 * k, 2 * k + 1);
        int32_t s = hrm_flow_add_vertex(g, 0), d = hrm_flow_add_vertex(g, 0);
        for (int32_t i = 1; i <= k; i++) {
            int32_t a = hrm_flow_add_vertex(g, 0), b = hrm_flow_add_vertex(g, 0);
            cr_assert_geq(hrm_flow_add_arc(g, s, a, 1, 0), 0);
            cr_assert_geq(hrm_flow_add_arc(g, a, b, 1, 0), 0);
            if (i == j)
                cr_assert_geq(hrm_flow_add_arc(g, b, d, 1, 0), 0);
        }
        hrm_flow_set_algo(g, HRM_FLOW_SSP);
        g->sum_off = true;
        struct hrm_error err = {{0}};
        cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
        struct hrm_flow_stats st = route_one_unit(g, s, d, (int)seed);
        cr_assert_leq(st.scanned, (int64_t)k + 3,
                      "seed %d (%d tie vertices, the deficit after b_%d): %lld settled, "
                      "s, the a_i, b_j and d need %d",
                      (int)seed, k, j, (long long)st.scanned, k + 3);
        cr_assert_eq(certified_cost(g, -1, -1), 0, "seed %d: the unit goes at cost 0", (int)seed);
        hrm_flow_free(g);
    }
}

/*
 * Streams of 12 scheduler batches (ten task ends, a job's arrival, a node's death, ten cost
 * changes at once), each re-solved warm from the state the last re-solve left, on 16 P1
 * shapes (per GPU and per machine, 150-700 GPUs, 15-44 jobs of 15-64 tasks): every answer
 * certified by its potentials and equal in cost and value to from-scratch solves by shortest
 * paths and cost scaling.
 */
Test(flowtail, streams_of_batches_stay_optimal, .timeout = 900)
{
    for (uint64_t seed = 1; seed <= 16; seed++) {
        struct hrm_flowgen_sched s = {0};
        struct hrm_flowgen_p1 q;
        p1_shape_of(seed * 7 + 1, seed % 2 == 0, (struct p1_range){150, 97, 551},
                    (struct p1_range){15, 11, 30}, (struct p1_range){15, 13, 50},
                    (struct p1_range){2, 1, 4}, &s, &q);
        struct hrm_flowgen_changer ch = {
            .s = &s, .skeleton_cap = 1 << 30, .job_tasks = q.jobs * q.tasks_per_job / 40 + 1};
        hrm_rng_seed(&ch.rng, seed * 13 + 5);
        hrm_flow_set_algo(s.g, seed % 3 ? HRM_FLOW_SSP : HRM_FLOW_AUTO);
        struct hrm_error err = {{0}};
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "seed %d: %s", (int)seed, err.text);
        for (int i = 0; i < 12; i++) {
            hrm_flowgen_change(&ch, HRM_FLOWGEN_BATCH);
            char what[64];
            snprintf(what, sizeof(what), "seed %d, batch %d", (int)seed, i);
            expect_warm_optimal(s.g, s.S, s.T, what);
        }
        hrm_flowgen_sched_fini(&s);
    }
}
