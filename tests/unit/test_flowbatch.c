/* Batches and job arrivals on P1 graphs: how often the residual graph is laid out again, and
 * every warm answer equal to from-scratch solves, over families of shapes and seeds. */
#include "test_flowarr.h"

#include "hrm/flowgen.h"

/* A P1 graph of one of many shapes, chosen by the seed: per GPU or per
 * machine, 200-800 GPUs, 20-50 jobs of 20-60 tasks; *job_tasks: the size of
 * an arriving job, 2 % of the tasks (the 2,000-GPU bench's is 1 %). */
static void batch_shape(uint64_t seed, struct hrm_flowgen_sched *s, int64_t *job_tasks)
{
    struct hrm_flowgen_p1 q;
    p1_shape_of(seed, seed % 2 == 1, (struct p1_range){200, 53, 601}, (struct p1_range){20, 7, 31},
                (struct p1_range){20, 11, 41}, (struct p1_range){2, 1, 4}, s, &q);
    *job_tasks = q.jobs * q.tasks_per_job / 50;
}

/* Whether the last solve laid out only the residual arcs of the arcs added
 * since the solve before (m0 arcs then), rather than the whole graph. */
static bool laid_out_only_new_arcs(const struct hrm_flowgen_sched *s, int32_t m0)
{
    struct hrm_flow_stats st;
    hrm_flow_stats(s->g, &st);
    int64_t added = 2 * (int64_t)(hrm_flow_arcs(s->g) - m0);
    cr_assert(st.laid_out == added || st.laid_out >= 2 * (int64_t)hrm_flow_arcs(s->g),
              "%lld residual arcs written, %lld added: neither only the new arcs nor all",
              (long long)st.laid_out, (long long)added);
    return st.laid_out == added;
}

/*
 * The schedulers' graphs (solve_max) are laid out with free slots from the
 * start, so the first job that arrives after a cold solve writes only its own
 * arcs; before, a graph that had never grown had none and the first arrival
 * laid the whole graph out again (5-10 ms on the 2,000-GPU graph).
 */
Test(flowbatch, first_arrival_after_a_cold_solve_lays_out_only_its_arcs, .timeout = 900)
{
    static const enum hrm_flow_algo algos[] = {HRM_FLOW_AUTO, HRM_FLOW_SSP, HRM_FLOW_SCALING};
    for (uint64_t seed = 1; seed <= 12; seed++) {
        struct hrm_flowgen_sched s = {0};
        int64_t k;
        batch_shape(seed, &s, &k);
        struct hrm_flowgen_changer ch = {.s = &s, .skeleton_cap = 1 << 30, .job_tasks = k};
        hrm_rng_seed(&ch.rng, seed);
        hrm_flow_set_algo(s.g, algos[seed % 3]);
        struct hrm_error err = {{0}};
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s", err.text);
        int32_t m0 = hrm_flow_arcs(s.g);
        hrm_flowgen_change(&ch, seed % 2 ? HRM_FLOWGEN_JOB_ARRIVE : HRM_FLOWGEN_BATCH);
        char what[64];
        snprintf(what, sizeof(what), "seed %d first change", (int)seed);
        expect_warm_optimal(s.g, s.S, s.T, what);
        cr_assert(laid_out_only_new_arcs(&s, m0), "%s: the whole graph was laid out again", what);
        hrm_flowgen_sched_fini(&s);
    }
}

/*
 * A stream of batches (10 task ends, a job's arrival, a node's death, 10 cost
 * changes) and arrivals: the placement targets gain arcs in proportion to
 * their arcs, so a layout must leave each vertex room in proportion to its
 * arcs and to what it gained, or it is laid out again every few arrivals.
 * At most 2 whole layouts in 24 re-solves on every shape (the code before
 * took 3-6: one at the first arrival, then whenever a target that had gained
 * nothing by the last layout gained an eighth of its arcs); every answer
 * certified and equal to from-scratch solves.
 */
Test(flowbatch, batches_lay_the_graph_out_rarely_and_stay_optimal, .timeout = 900)
{
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct hrm_flowgen_sched s = {0};
        int64_t k;
        batch_shape(seed + 40, &s, &k);
        struct hrm_flowgen_changer ch = {.s = &s, .skeleton_cap = 1 << 30, .job_tasks = k};
        hrm_rng_seed(&ch.rng, seed * 31);
        hrm_flow_set_algo(s.g, seed % 2 ? HRM_FLOW_AUTO : HRM_FLOW_SSP);
        struct hrm_error err = {{0}};
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s", err.text);
        int whole = 0;
        for (int i = 0; i < 24; i++) {
            int32_t m0 = hrm_flow_arcs(s.g);
            enum hrm_flowgen_change kind = i % 3 ? HRM_FLOWGEN_JOB_ARRIVE : HRM_FLOWGEN_BATCH;
            hrm_flowgen_change(&ch, kind);
            char what[96];
            snprintf(what, sizeof(what), "seed %d %s %d", (int)seed, hrm_flowgen_change_name(kind),
                     i);
            expect_warm_optimal(s.g, s.S, s.T, what);
            whole += !laid_out_only_new_arcs(&s, m0);
        }
        cr_assert(whole <= 3, "seed %d (%d vertices): the whole graph laid out %d times in 24",
                  (int)seed, hrm_flow_vertices(s.g), whole);
        hrm_flowgen_sched_fini(&s);
    }
}
