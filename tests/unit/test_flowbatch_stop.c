/* Re-solves after changes on P1 graphs: the searches stop at the first deficit and leave the
 * region that carries flow to the routing, every answer equal to from-scratch solves. */
#include "test_flowarr.h"

#include "hrm/flowgen.h"

/* Vertices with flow through them: after a change, the region every search
 * of the engine before settled whole (everything that carries flow sits at
 * one distance from the sources; the aggregators and the sink join it). */
static int32_t carrying_flow(const struct hrm_flow *g)
{
    int32_t n = hrm_flow_vertices(g), count = 0;
    uint8_t *in = hrm_calloc((size_t)n, 1);
    for (int32_t a = 0; a < hrm_flow_arcs(g); a++)
        if (hrm_flow_arc_flow(g, a) > 0)
            in[hrm_flow_arc_to(g, a)] = 1;
    for (int32_t v = 0; v < n; v++)
        count += in[v];
    hrm_free(in);
    return count;
}

/*
 * On P1 shapes per GPU and per machine (300-1,000 GPUs, 20-60 jobs of 20-60
 * tasks), under AUTO and SSP: batches (10 task ends, a job of 1 % of the
 * tasks, a node's death, 10 cost changes), task ends and node deaths, each
 * certified and equal in cost and value to from-scratch solves by shortest
 * paths and cost scaling.  Over each shape's re-solves, the searches settle
 * on average at most half as many vertices as carry flow (16-37 % on seeds
 * 1-6); the engine before settled 62-129 % (it went on until the deficits
 * found could take the excess, and the sink, one deficit reached by paths of
 * many lengths, sits inside the region that carries flow).
 */
Test(flowbatch_stop, searches_leave_the_flow_region_to_the_routing, .timeout = 900)
{
    static const enum hrm_flowgen_change kinds[] = {HRM_FLOWGEN_BATCH, HRM_FLOWGEN_TASK_END,
                                                    HRM_FLOWGEN_BATCH, HRM_FLOWGEN_NODE_DIES};
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct hrm_flowgen_sched s = {0};
        struct hrm_flowgen_p1 q;
        p1_shape_of(seed + 70, seed % 2 == 1, (struct p1_range){300, 97, 701},
                    (struct p1_range){20, 13, 41}, (struct p1_range){20, 11, 41},
                    (struct p1_range){2, 1, 4}, &s, &q);
        struct hrm_flowgen_changer ch = {
            .s = &s, .skeleton_cap = 1 << 30, .job_tasks = q.jobs * q.tasks_per_job / 100};
        hrm_rng_seed(&ch.rng, seed * 17);
        hrm_flow_set_algo(s.g, seed % 4 < 2 ? HRM_FLOW_AUTO : HRM_FLOW_SSP);
        struct hrm_error err = {{0}};
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s", err.text);
        int64_t searches = 0, settled = 0, region = 0;
        for (int i = 0; i < 12; i++) {
            enum hrm_flowgen_change kind = kinds[i % 4];
            int32_t carrying = carrying_flow(s.g);
            hrm_flowgen_change(&ch, kind);
            char what[96];
            snprintf(what, sizeof(what), "seed %d %s %d", (int)seed, hrm_flowgen_change_name(kind),
                     i);
            expect_warm_optimal(s.g, s.S, s.T, what);
            struct hrm_flow_stats st;
            hrm_flow_stats(s.g, &st);
            searches += st.phases;
            settled += st.scanned;
            region += st.phases * carrying;
        }
        cr_assert(searches > 0, "seed %d: the changes needed no search", (int)seed);
        cr_assert(2 * settled <= region,
                  "seed %d (%d vertices): %lld searches settled %lld vertices, %.0f %% of the "
                  "vertices carrying flow each",
                  (int)seed, hrm_flow_vertices(s.g), (long long)searches, (long long)settled,
                  100.0 * (double)settled / (double)region);
        hrm_flowgen_sched_fini(&s);
    }
}
