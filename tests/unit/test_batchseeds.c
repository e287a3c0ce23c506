/* The shortest-path searches of a re-solve among tied distances, and scheduler batches on P1
 * graphs over families of shapes and seeds, every answer certified and equal to from-scratch
 * solves. */
#include "test_flowarr.h"

#include "flow/flow_private.h"

/*
 * A graph where every arc costs 0, so that every vertex a search reaches ties with the
 * source, drawn from a seed: n vertices, each but the source with an arc in from an earlier
 * one (so all are reachable), and extra arcs between random vertices; capacities 1-3.
 */
static struct hrm_flow *tie_graph(uint64_t seed, int32_t n, int32_t extra)
{
    struct hrm_rng rng;
    hrm_rng_seed(&rng, seed);
    struct hrm_flow *g = hrm_flow_new(n, 3 * n);
    for (int32_t v = 0; v < n; v++)
        cr_assert_eq(hrm_flow_add_vertex(g, 0), v);
    for (int32_t v = 1; v < n; v++)
        cr_assert_geq(hrm_flow_add_arc(g, (int32_t)hrm_rng_below(&rng, (uint64_t)v), v,
                                       1 + (int64_t)hrm_rng_below(&rng, 3), 0),
                      0);
    for (int32_t i = 0; i < extra; i++) {
        int32_t u = (int32_t)hrm_rng_below(&rng, (uint64_t)n);
        int32_t v = (int32_t)hrm_rng_below(&rng, (uint64_t)n);
        cr_assert_geq(hrm_flow_add_arc(g, u, v, 1 + (int64_t)hrm_rng_below(&rng, 3), 0), 0);
    }
    return g;
}

/* Breadth-first hops from vertex 0 over the user's arcs (hop[v] = -1: unreached). */
static int32_t *hops_from_source(const struct hrm_flow *g)
{
    int32_t n = hrm_flow_vertices(g), m = hrm_flow_arcs(g);
    int32_t *hop = hrm_alloc(sizeof(*hop) * (size_t)n);
    for (int32_t v = 0; v < n; v++)
        hop[v] = -1;
    hop[0] = 0;
    for (bool grew = true; grew;) {
        grew = false;
        for (int32_t a = 0; a < m; a++) {
            int32_t u = hrm_flow_arc_from(g, a), v = hrm_flow_arc_to(g, a);
            if (hop[u] >= 0 && (hop[v] < 0 || hop[v] > hop[u] + 1)) {
                hop[v] = hop[u] + 1;
                grew = true;
            }
        }
    }
    return hop;
}

/*
 * A re-solve with one unit to route (the source 0 has it, a vertex d wants it) in a graph
 * where every path ties at distance 0: the first deficit the search labels is as near as
 * any vertex can be, so it ends the search, and the searches meet tied vertices in the
 * order they labelled them (first in, first out), nearest in arcs first.  So the search
 * reads only the arcs of the vertices fewer arcs from the source than d (each vertex's
 * slots, forward and backward, without the summaries).  Over 60 graphs (40-200 vertices,
 * d 1-3 arcs away, d among the first or the last labelled): the engine before took tied
 * vertices last in, first out, diving into each tie's descendants before its siblings, and
 * settled a labelled deficit only when its turn came.
 */
Test(batchseeds, a_deficit_among_the_nearest_ties_ends_the_search)
{
    for (uint64_t seed = 1; seed <= 60; seed++) {
        int32_t n = 40 + (int32_t)(seed * 37 % 161);
        struct hrm_flow *g = tie_graph(seed, n, 2 * n);
        hrm_flow_set_algo(g, HRM_FLOW_SSP);
        g->sum_off = true;
        struct hrm_error err = {{0}};
        cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
        int32_t *hop = hops_from_source(g);
        int32_t want = 1 + (int32_t)(seed % 3), d = -1;
        for (int32_t h = want; h >= 1 && d < 0; h--)
            for (int32_t i = 1; i < n && d < 0; i++) {
                int32_t v = seed % 2 ? i : n - i; /* the first or the last one labelled */
                if (hop[v] == h)
                    d = v;
            }
        cr_assert_geq(d, 1, "seed %d: a vertex 1-3 arcs from the source", (int)seed);
        int64_t bound = 0;
        for (int32_t a = 0; a < hrm_flow_arcs(g); a++) {
            int32_t u = hrm_flow_arc_from(g, a), v = hrm_flow_arc_to(g, a);
            bound += (hop[u] >= 0 && hop[u] < hop[d]) + (hop[v] >= 0 && hop[v] < hop[d]);
        }
        struct hrm_flow_stats st = route_one_unit(g, 0, d, (int)seed);
        cr_assert_leq(st.arcs_read, bound,
                      "seed %d (%d vertices, d = %d, %d arcs away): the search read %lld arcs, "
                      "the vertices nearer than d hold %lld",
                      (int)seed, n, d, hop[d], (long long)st.arcs_read, (long long)bound);
        cr_assert_eq(certified_cost(g, -1, -1), 0, "seed %d", (int)seed);
        hrm_free(hop);
        hrm_flow_free(g);
    }
}

/*
 * Scheduler batches (task ends, a job's arrival, a node's death, cost changes at once) and
 * single changes in a random mix, 12 re-solves each on 16 P1 shapes per GPU and per machine
 * (200-1,000 GPUs, 10-60 jobs of 10-80 tasks), under SSP and AUTO: every answer certified by
 * its potentials and equal in cost and value to from-scratch solves by shortest paths and
 * cost scaling, and every live part exact after each re-solve.
 */
Test(batchseeds, random_batches_on_p1_shapes_stay_optimal, .timeout = 900)
{
    static const enum hrm_flowgen_change kinds[] = {
        HRM_FLOWGEN_BATCH, HRM_FLOWGEN_TASK_END, HRM_FLOWGEN_JOB_ARRIVE,
        HRM_FLOWGEN_NODE_DIES, HRM_FLOWGEN_ARC_COST};
    for (uint64_t seed = 1; seed <= 16; seed++) {
        struct hrm_flowgen_sched s = {0};
        struct hrm_flowgen_p1 q;
        p1_shape_of(seed, seed % 2 == 0, (struct p1_range){200, 97, 801},
                    (struct p1_range){10, 11, 51}, (struct p1_range){10, 23, 71},
                    (struct p1_range){2, 1, 4}, &s, &q);
        struct hrm_flowgen_changer ch = {
            .s = &s, .skeleton_cap = 1 << 30, .job_tasks = q.jobs * q.tasks_per_job / 40 + 1};
        hrm_rng_seed(&ch.rng, seed * 7 + 1);
        hrm_flow_set_algo(s.g, seed % 4 < 2 ? HRM_FLOW_SSP : HRM_FLOW_AUTO);
        struct hrm_error err = {{0}};
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s", err.text);
        char what[96];
        for (int i = 0; i < 12; i++) {
            enum hrm_flowgen_change k =
                i % 2 == 0 ? HRM_FLOWGEN_BATCH
                           : kinds[hrm_rng_below(&ch.rng, sizeof(kinds) / sizeof(kinds[0]))];
            hrm_flowgen_change(&ch, k);
            snprintf(what, sizeof(what), "seed %d (%s, %lld GPUs) change %d: %s", (int)seed,
                     q.per_gpu ? "per GPU" : "per machine", (long long)q.gpus, i,
                     hrm_flowgen_change_name(k));
            expect_warm_optimal(s.g, s.S, s.T, what);
            cr_assert_eq(flow_sum_misplaced(s.g), 0, "%s: live parts exact", what);
        }
        hrm_flowgen_sched_fini(&s);
    }
}
