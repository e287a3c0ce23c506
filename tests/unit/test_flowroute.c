/* Re-solves of scheduler batches on P1 graphs: what a layout that makes room keeps, over
 * families of shapes and seeds, every answer certified and equal to from-scratch solves. */
#include "test_flowarr.h"

#include "flow/flow_private.h"
#include "flow/ssp_sum.h"
#include "hrm/flowgen.h"

/* A P1 graph of one of many shapes, chosen by the seed: per GPU or per machine, 150-750 GPUs,
 * 10-40 jobs of 10-60 tasks; *job_tasks: the size of an arriving job, 2 % of the tasks. */
static void route_shape(uint64_t seed, struct hrm_flowgen_sched *s, int64_t *job_tasks)
{
    struct hrm_flowgen_p1 q;
    p1_shape_of(seed, seed % 2 == 0, (struct p1_range){150, 61, 601}, (struct p1_range){10, 7, 31},
                (struct p1_range){10, 13, 51}, (struct p1_range){2, 1, 4}, s, &q);
    *job_tasks = q.jobs * q.tasks_per_job / 50 + 1;
}

/* One residual arc as the user sees it: its user arc, forward or backward (-1, -2: the
 * virtual arc). */
static int64_t arc_id(const struct hrm_flow *g, int32_t r)
{
    int32_t a = g->rarc[r];
    if (a >= 0)
        return 2 * (int64_t)a;
    a = g->rarc[g->rev[r]];
    return a >= 0 ? 2 * (int64_t)a + 1 : (r == g->vpos ? -1 : -2);
}

/* Every vertex's live part (its arcs that can carry flow, in the order the engine reads
 * them), vertex after vertex, with the vertex's count before its arcs; the terminals' are
 * not partitioned. */
static int64_t *live_parts(const struct hrm_flow *g, size_t *len)
{
    size_t n = 0, cap = 1024;
    int64_t *out = hrm_alloc(cap * sizeof(*out));
    for (int32_t v = 0; v < g->rn; v++) {
        if (v == g->vs || v == g->vt)
            continue; /* the terminals keep user-arc order (never partitioned) */
        int32_t end = g->sum->live[v];
        if (n + 1 + (size_t)(end - g->first[v]) > cap) {
            while (n + 1 + (size_t)(end - g->first[v]) > cap)
                cap *= 2;
            out = hrm_reallocarray(out, cap, sizeof(*out));
        }
        out[n++] = end - g->first[v];
        for (int32_t r = g->first[v]; r < end; r++)
            out[n++] = arc_id(g, r);
    }
    *len = n;
    return out;
}

/*
 * When arcs arrive at a vertex without free slots, every vertex's slots move to a larger
 * segment; before, the whole residual graph was laid out again from the user's arcs
 * (5-10 ms on the 2,000-GPU graph, the maximum of its batches).  The move keeps each
 * vertex's live arcs in the order the engines left them but for one thing: the backward
 * arcs (those that cancel flow: a task's arc back to its job) go before the forward ones.
 * The routing appends an arc that gains capacity to the end of its vertex's live arcs, so a
 * task that carries flow came to offer its tied placements before its way back to its job,
 * and the searches and depth-first passes after it read 11 % more arcs on the 2,000-GPU
 * batch (docs/flow-solver.md, "2026-11-27 (later)").  On P1 shapes under SSP (the engine
 * that keeps live parts; AUTO may run the simplex at these sizes), after a cold solve and a
 * few batches (whose routing reorders the live parts), zero-capacity arcs added at one
 * aggregator, more than its free slots, make the next re-solve lay the graph out; it routes
 * nothing, and every vertex's live part must list its backward arcs and then its forward
 * ones, each in the order they had before.  Then batches go on, each certified and equal in
 * cost and value to from-scratch solves by shortest paths and cost scaling.
 */
Test(flowroute, a_layout_that_makes_room_puts_backward_live_arcs_first_in_order,
     .timeout = 900)
{
    for (uint64_t seed = 1; seed <= 10; seed++) {
        struct hrm_flowgen_sched s = {0};
        int64_t k;
        route_shape(seed, &s, &k);
        struct hrm_flowgen_changer ch = {.s = &s, .skeleton_cap = 1 << 30, .job_tasks = k};
        hrm_rng_seed(&ch.rng, seed * 5 + 3);
        hrm_flow_set_algo(s.g, HRM_FLOW_SSP);
        struct hrm_error err = {{0}};
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s", err.text);
        char what[96];
        for (int i = 0; i < 3; i++) {
            hrm_flowgen_change(&ch, HRM_FLOWGEN_BATCH);
            snprintf(what, sizeof(what), "seed %d batch %d", (int)seed, i);
            expect_warm_optimal(s.g, s.S, s.T, what);
        }
        const struct hrm_flow *g = s.g;
        cr_assert(g->sum && g->sum->valid, "seed %d: the engine keeps live parts", (int)seed);
        /* a re-solve without changes folds the tasks the batches left without flow, and the
         * arcs the last routing saturated leave the live parts: nothing is pending */
        snprintf(what, sizeof(what), "seed %d: no change", (int)seed);
        expect_warm_optimal(s.g, s.S, s.T, what);
        flow_sum_place(s.g);
        size_t n0, n1;
        int64_t *before = live_parts(g, &n0);
        /* the vertex with the most arcs: an aggregator, never a terminal */
        int32_t hub = -1;
        for (int32_t v = 0; v < g->rn; v++)
            if (v != s.S && v != s.T &&
                (hub < 0 || g->first[v + 1] - g->first[v] > g->first[hub + 1] - g->first[hub]))
                hub = v;
        int32_t room = g->first[hub + 1] - g->first[hub] - g->fill[hub];
        for (int32_t i = 0; i <= room; i++)
            cr_assert_geq(hrm_flow_add_arc(s.g, hub, s.T, 0, 0), 0);
        snprintf(what, sizeof(what), "seed %d: %d arcs at vertex %d", (int)seed, room + 1, hub);
        expect_warm_optimal(s.g, s.S, s.T, what);
        struct hrm_flow_stats st;
        hrm_flow_stats(s.g, &st);
        cr_assert_geq(st.laid_out, 2 * (int64_t)hrm_flow_arcs(s.g),
                      "%s: the graph was laid out again (%lld residual arcs written)", what,
                      (long long)st.laid_out);
        cr_assert_eq(st.augmentations, 0, "%s: nothing to route", what);
        int64_t *after = live_parts(g, &n1);
        cr_assert_eq(n0, n1, "%s: live parts of %zu entries before, %zu after", what, n0, n1);
        for (size_t at = 0; at < n0; at += 1 + (size_t)before[at]) {
            size_t len = (size_t)before[at], i = at + 1;
            cr_assert_eq(after[at], before[at], "%s: a live part of %lld arcs before, %lld "
                         "after (entry %zu)", what, (long long)before[at],
                         (long long)after[at], at);
            for (int odd = 1; odd >= 0; odd--) /* backward (odd ids) first, in their order */
                for (size_t j = at + 1; j <= at + len; j++)
                    if ((before[j] & 1) == odd) {
                        cr_assert_eq(after[i], before[j], "%s: the live part at entry %zu: "
                                     "arc %lld where %lld belongs", what, at,
                                     (long long)after[i], (long long)before[j]);
                        i++;
                    }
        }
        hrm_free(before);
        hrm_free(after);
        for (int i = 0; i < 4; i++) {
            hrm_flowgen_change(&ch, i % 2 ? HRM_FLOWGEN_JOB_ARRIVE : HRM_FLOWGEN_BATCH);
            snprintf(what, sizeof(what), "seed %d change %d after the layout", (int)seed, i);
            expect_warm_optimal(s.g, s.S, s.T, what);
            cr_assert_eq(flow_sum_misplaced(s.g), 0, "%s: live parts exact", what);
        }
        hrm_flowgen_sched_fini(&s);
    }
}
