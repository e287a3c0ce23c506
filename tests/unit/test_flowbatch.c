/* Batches and job arrivals on P1 graphs: how often the residual graph is laid out again, the
 * labels a re-solve's search makes once a deficit is labelled, and every warm answer equal to
 * from-scratch solves, over families of shapes and seeds. */
#include "test_flowarr.h"

#include "flow/flow_private.h"
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

/*
 * A re-solve with one unit to route from the source s to the deficit d, drawn from a seed:
 * the arc s -> d costs delta (2-6), and s has arcs to h hubs (1-4) costing less than delta,
 * each hub arcs to k fan vertices (20-79) costing at least delta, and each fan vertex an arc
 * to d costing 0.  Scanning s labels d at delta; every label a fan vertex could get is
 * delta or more, so none of them can be settled before d ends the search: a search that
 * stops at the first deficit needs no label for them, only for s, d and the hubs.  The
 * engine before labelled every fan vertex (h x k labels more).
 */
Test(flowbatch, labels_past_the_nearest_deficit_are_not_made)
{
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct hrm_rng rng;
        hrm_rng_seed(&rng, seed);
        int64_t delta = 2 + (int64_t)hrm_rng_below(&rng, 5);
        int32_t hubs = 1 + (int32_t)hrm_rng_below(&rng, 4);
        int32_t fan = 20 + (int32_t)hrm_rng_below(&rng, 60);
        struct hrm_flow *g = hrm_flow_new(2 + hubs * (fan + 1), hubs * (2 * fan + 1) + 1);
        int32_t s = hrm_flow_add_vertex(g, 0), d = hrm_flow_add_vertex(g, 0);
        cr_assert_geq(hrm_flow_add_arc(g, s, d, 1, delta), 0);
        for (int32_t i = 0; i < hubs; i++) {
            int32_t h = hrm_flow_add_vertex(g, 0);
            cr_assert_geq(
                hrm_flow_add_arc(g, s, h, 1, (int64_t)hrm_rng_below(&rng, (uint64_t)delta)), 0);
            for (int32_t j = 0; j < fan; j++) {
                int32_t f = hrm_flow_add_vertex(g, 0);
                cr_assert_geq(
                    hrm_flow_add_arc(g, h, f, 1, delta + (int64_t)hrm_rng_below(&rng, 10)), 0);
                cr_assert_geq(hrm_flow_add_arc(g, f, d, 1, 0), 0);
            }
        }
        hrm_flow_set_algo(g, HRM_FLOW_SSP);
        g->sum_off = true;
        struct hrm_error err = {{0}};
        cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
        route_one_unit(g, s, d, (int)seed);
        cr_assert_leq(g->ssp_labels, 2 + hubs,
                      "seed %d (%d hubs of %d fan vertices, delta %lld): %lld labels made, "
                      "s, d and the hubs need %d",
                      (int)seed, hubs, fan, (long long)delta, (long long)g->ssp_labels,
                      2 + hubs);
        cr_assert_eq(certified_cost(g, -1, -1), delta, "seed %d: the unit takes s -> d",
                     (int)seed);
        hrm_flow_free(g);
    }
}

/*
 * Scheduler batches (ten task ends, a job's arrival, a node's death, ten cost changes at
 * once) on 12 shapes of batch_shape, 10 re-solves each under SSP, each from the state a
 * from-scratch solve leaves (as `hrm bench flow-incr --same-start` runs them), not the one
 * the last warm re-solve left: every answer certified by its potentials and equal in cost
 * and value to from-scratch solves by shortest paths and cost scaling.
 */
Test(flowbatch, batches_from_from_scratch_states_stay_optimal, .timeout = 900)
{
    for (uint64_t seed = 1; seed <= 12; seed++) {
        struct hrm_flowgen_sched s = {0};
        int64_t job_tasks;
        batch_shape(seed * 5, &s, &job_tasks);
        struct hrm_flowgen_changer ch = {.s = &s, .skeleton_cap = 1 << 30, .job_tasks = job_tasks};
        hrm_rng_seed(&ch.rng, seed * 11 + 3);
        hrm_flow_set_algo(s.g, HRM_FLOW_SSP);
        struct hrm_error err = {{0}};
        for (int i = 0; i < 10; i++) {
            hrm_flow_reset(s.g);
            cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "seed %d batch %d: from scratch: %s",
                         (int)seed, i, err.text);
            hrm_flowgen_change(&ch, HRM_FLOWGEN_BATCH);
            char what[64];
            snprintf(what, sizeof(what), "seed %d, batch %d", (int)seed, i);
            expect_warm_optimal(s.g, s.S, s.T, what);
        }
        hrm_flowgen_sched_fini(&s);
    }
}
