/* Warm re-solves after jobs arrive and after batches of changes: the residual graph grows in
 * place, and every answer equals a from-scratch solve, on many shapes and seeds. */
#include "test_flowarr.h"

#include "hrm/flowgen.h"

/* A P1 graph of one of many shapes (per GPU or per machine, few large jobs or
 * many small ones, 20-240 GPUs), chosen by the seed. */
static void p1_shape(uint64_t seed, struct hrm_flowgen_sched *s)
{
    p1_shape_of(seed, seed % 2 == 0, (struct p1_range){20, 37, 221}, (struct p1_range){1, 7, 15},
                (struct p1_range){1, 13, 40}, (struct p1_range){1, 1, 5}, s, NULL);
}

/* The fixed-supply families, small. */
static void supply_family(int fam, uint64_t seed, struct hrm_flowgen_sched *s, int64_t *skeleton)
{
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults((enum hrm_flowgen_family)fam, 'S', &p);
    p.seed = seed;
    p.supply = 1000;
    p.cost_max = fam == HRM_FLOWGEN_GOTO ? 1 << 14 : 500;
    p.cap_max = 100;
    if (fam == HRM_FLOWGEN_NETGEN) {
        p.nodes = 60 + (long long)(seed % 4) * 20, p.arcs = 500, p.sources = p.sinks = 4;
    } else if (fam == HRM_FLOWGEN_GRIDGEN) {
        p.rows = 6, p.cols = 8, p.arcs = 300, p.sources = p.sinks = 3;
    } else {
        p.rows = p.cols = 7, p.arcs = 8 * 49;
    }
    *skeleton = p.supply;
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flowgen_build((enum hrm_flowgen_family)fam, &p, &s->g, &err), 0, "%s",
                 err.text);
    s->S = s->T = -1;
}

/* Several job arrivals and batches in a row (so that free slots run out and
 * the graph is laid out again in between), each re-solve checked. */
static void arrivals_and_batches(struct hrm_flowgen_sched *s, int64_t skeleton, uint64_t seed,
                                 enum hrm_flow_algo algo, const char *family)
{
    struct hrm_flowgen_changer ch = {.s = s, .skeleton_cap = skeleton,
                                     .job_tasks = 1 + (int64_t)(seed * 11 % 60)};
    hrm_rng_seed(&ch.rng, seed * 97 + (uint64_t)algo);
    hrm_flow_set_algo(s->g, algo);
    struct hrm_error err = {{0}};
    cr_assert_eq(solve(s->g, s->S, s->T, &err), 0, "%s", err.text);
    char what[128];
    for (int round = 0; round < 6; round++) {
        enum hrm_flowgen_change kind =
            hrm_rng_below(&ch.rng, 3) ? HRM_FLOWGEN_JOB_ARRIVE : HRM_FLOWGEN_BATCH;
        hrm_flowgen_change(&ch, kind);
        snprintf(what, sizeof(what), "%s seed %d algo %d %s round %d", family, (int)seed,
                 (int)algo, hrm_flowgen_change_name(kind), round);
        int rc = solve(s->g, s->S, s->T, &err);
        if (rc == -HRM_EINFEASIBLE && s->S < 0) {
            /* the arrivals of the fixed-supply families can outgrow the
             * skeleton's capacity: then scratch solves must fail as well */
            static const enum hrm_flow_algo all[] = {HRM_FLOW_SSP, HRM_FLOW_SCALING,
                                                     HRM_FLOW_SIMPLEX};
            for (int i = 0; i < 3; i++) {
                struct hrm_flow *h = graph_copy(s->g);
                hrm_flow_set_algo(h, all[i]);
                cr_assert_eq(hrm_flow_solve(h, &err), -HRM_EINFEASIBLE,
                             "%s: infeasible warm, not from scratch (algo %d)", what, (int)all[i]);
                hrm_flow_free(h);
            }
            return;
        }
        cr_assert_eq(rc, 0, "%s: %s", what, err.text);
        expect_optimal(s->g, s->S, s->T, what);
    }
}

Test(flowarr, p1_arrivals_and_batches_equal_scratch_on_many_shapes, .timeout = 900)
{
    static const enum hrm_flow_algo algos[] = {HRM_FLOW_AUTO, HRM_FLOW_SCALING, HRM_FLOW_SSP};
    for (uint64_t seed = 1; seed <= 24; seed++) {
        struct hrm_flowgen_sched s = {0};
        p1_shape(seed, &s);
        arrivals_and_batches(&s, 1 << 30, seed, algos[seed % 3], "p1");
        hrm_flowgen_sched_fini(&s);
    }
}

Test(flowarr, supply_families_arrivals_and_batches_equal_scratch, .timeout = 900)
{
    static const char *const names[] = {"netgen", "gridgen", "goto"};
    for (int fam = 0; fam < 3; fam++)
        for (uint64_t seed = 1; seed <= 6; seed++) {
            struct hrm_flowgen_sched s = {0};
            int64_t skeleton = 0;
            supply_family(fam, seed, &s, &skeleton);
            arrivals_and_batches(&s, skeleton, seed,
                                 seed % 2 ? HRM_FLOW_SCALING : HRM_FLOW_AUTO, names[fam]);
            hrm_flowgen_sched_fini(&s);
        }
}

/*
 * A job's arrival writes only its own arcs into the residual graph when the
 * vertices it touches have free slots (once the graph has grown), else lays
 * the whole graph out again with more free slots; the optimum is the same
 * either way.
 */
Test(flowarr, job_arrival_lays_out_only_its_arcs, .timeout = 900)
{
    for (uint64_t seed = 1; seed <= 6; seed++) {
        struct hrm_flowgen_sched s = {0};
        p1_shape(seed + 100, &s);
        struct hrm_flowgen_changer ch = {.s = &s, .skeleton_cap = 1 << 30, .job_tasks = 20};
        hrm_rng_seed(&ch.rng, seed);
        hrm_flow_set_algo(s.g, seed % 2 ? HRM_FLOW_SCALING : HRM_FLOW_AUTO);
        struct hrm_error err = {{0}};
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s", err.text);
        int incremental = 0;
        for (int i = 0; i < 24; i++) {
            int32_t m0 = hrm_flow_arcs(s.g);
            hrm_flowgen_change(&ch, HRM_FLOWGEN_JOB_ARRIVE);
            int64_t added = 2 * (int64_t)(hrm_flow_arcs(s.g) - m0);
            char what[64];
            snprintf(what, sizeof(what), "seed %d arrival %d", (int)seed, i);
            expect_warm_optimal(s.g, s.S, s.T, what);
            struct hrm_flow_stats st;
            hrm_flow_stats(s.g, &st);
            /* either only the new arcs, or everything (at least twice the arcs) */
            cr_assert(st.laid_out == added || st.laid_out >= 2 * (int64_t)hrm_flow_arcs(s.g),
                      "%s: %lld residual arcs written, %lld added", what,
                      (long long)st.laid_out, (long long)added);
            incremental += st.laid_out == added;
        }
        cr_assert(incremental > 0, "seed %d: every arrival laid the whole graph out", (int)seed);
        hrm_flowgen_sched_fini(&s);
    }
}

/*
 * Arcs added at the terminals of solve_max (which hold the virtual arc), self
 * loops and parallel arcs at vertices laid out before, a vertex that gains
 * more arcs than its free slots, and a switch to fixed supplies and back (the
 * virtual arc goes and comes back): each re-solve is optimal.
 */
Test(flowarr, arcs_added_at_old_vertices_and_terminals, .timeout = 900)
{
    struct hrm_flow *g = hrm_flow_new(0, 0);
    int32_t S = hrm_flow_add_vertex(g, 0), T = hrm_flow_add_vertex(g, 0);
    int32_t a = hrm_flow_add_vertex(g, 0), b = hrm_flow_add_vertex(g, 0);
    hrm_flow_add_arc(g, S, a, 3, 1);
    hrm_flow_add_arc(g, a, b, 2, 2);
    hrm_flow_add_arc(g, b, T, 3, 1);
    hrm_flow_add_arc(g, a, T, 1, 7);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve_max(g, S, T, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_flow_value(g), 3);
    char what[64];
    for (int round = 0; round < 12; round++) {
        int32_t v = hrm_flow_add_vertex(g, 0);
        hrm_flow_add_arc(g, S, v, 1 + round % 3, round % 4);
        hrm_flow_add_arc(g, v, round % 2 ? a : b, 2, 1);
        hrm_flow_add_arc(g, a, a, 5, -1);           /* a self-loop of negative cost */
        hrm_flow_add_arc(g, b, T, 1, 3 + round % 5); /* parallel to b -> T */
        hrm_flow_add_arc(g, S, T, round % 2, 50);   /* straight across */
        snprintf(what, sizeof(what), "max round %d", round);
        expect_warm_optimal(g, S, T, what);
        if (round % 4 == 3) {
            hrm_flow_set_supply(g, S, 2);
            hrm_flow_set_supply(g, T, -2);
            snprintf(what, sizeof(what), "supplies round %d", round);
            expect_warm_optimal(g, -1, -1, what);
            hrm_flow_set_supply(g, S, 0);
            hrm_flow_set_supply(g, T, 0);
        }
    }
    hrm_flow_free(g);
}

/*
 * Under SCALING a job's tasks are priced from the sink side, so the arrival's
 * flow enters at the job's source arc and shortest paths from there re-solve
 * in a search or three (one per distinct length of the paths its tasks take;
 * where every GPU is busy, one search that settles a handful of vertices),
 * where the warm cost-scaling phases used before took 7 or more, each reading
 * every arc.
 */
Test(flowarr, scaling_job_arrival_takes_few_searches, .timeout = 900)
{
    expect_arrivals_in_few_searches(HRM_FLOW_SCALING);
}
