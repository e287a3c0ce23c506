/* Scheduler instance: GS worked example, two-phase, Sparrow, late binding. */
#include <criterion/criterion.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/dsched.h"

#define MS 1000ll
#define COOKIE_PASS 1

/* ---- GS (paper Alg. 1) ---- */

/*
 * Three jobs submitted at 0, 5 and 9; queues (slots) with waits 0, 10, 5, 20
 * and memory 2G, 8G, 2G, 8G.  Sorted: q0 (0), q2 (5), q1 (10), q3 (20).
 * J1's two 1G tasks take q0 and q2; J2's 4G task skips nothing smaller than
 * its need and takes q1 (8G); J3's 16G task fits no queue: a leftover.
 */
Test(dsched, greedy_assignment_worked_example)
{
    struct hrm_gs_slot slots[] = {
        {.key = 0, .cpu = 4000, .mem = 2 * GIB, .node = 0},
        {.key = 10, .cpu = 4000, .mem = 8 * GIB, .node = 1},
        {.key = 5, .cpu = 4000, .mem = 2 * GIB, .node = 2},
        {.key = 20, .cpu = 4000, .mem = 8 * GIB, .node = 3},
    };
    /* given out of order on purpose: GS sorts by job submit time */
    struct hrm_gs_task tasks[] = {
        {.order = 9, .cpu = 1000, .mem = 16 * GIB}, /* J3 */
        {.order = 5, .cpu = 1000, .mem = 4 * GIB},  /* J2 */
        {.order = 0, .cpu = 1000, .mem = GIB},      /* J1 t1 */
        {.order = 0, .cpu = 1000, .mem = GIB},      /* J1 t2 */
    };
    int32_t out[4], scratch[2 * (4 + 4)];
    size_t n = hrm_gs_assign(tasks, 4, slots, 4, -1, out, scratch);
    cr_assert_eq(n, 3);
    cr_assert_eq(out[2], 0, "J1 t1 -> q0 (wait 0)");
    cr_assert_eq(out[3], 2, "J1 t2 -> q2 (wait 5)");
    cr_assert_eq(out[1], 1, "J2 (4G) -> q1 (wait 10, 8G)");
    cr_assert_eq(out[0], -1, "J3 (16G) fits nowhere: next round");
    /* with a bound on the wait, J2 waits for the next round too */
    n = hrm_gs_assign(tasks, 4, slots, 4, 5, out, scratch);
    cr_assert_eq(n, 2);
    cr_assert_eq(out[1], -1);
}

Test(dsched, greedy_assignment_prefers_a_replica_node)
{
    struct hrm_gs_slot slots[] = {
        {.key = 0, .cpu = 1000, .mem = GIB, .node = 4},
        {.key = 3, .cpu = 1000, .mem = GIB, .node = 7},
        {.key = 6, .cpu = 1000, .mem = GIB, .node = 9},
    };
    int32_t prefs[] = {9};
    struct hrm_gs_task tasks[] = {
        {.order = 0, .cpu = 1000, .mem = GIB, .prefs = prefs, .nprefs = 1},
        {.order = 1, .cpu = 1000, .mem = GIB},
    };
    int32_t out[2], scratch[2 * (2 + 3)];
    hrm_gs_assign(tasks, 2, slots, 3, -1, out, scratch);
    cr_assert_eq(out[0], 2, "its data is on node 9");
    cr_assert_eq(out[1], 0);
}

/* ---- the instance ---- */

struct inst {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_dsched *s;
    struct fenv f;
};

static void inst_init(struct inst *in, int nodes, int ntasks, enum hrm_dsched_kind kind)
{
    in->c = fx_cluster(1, nodes, 4, 16 * GIB, 0, 0, NULL);
    in->wl = hrm_workload_new();
    fx_job(in->wl, "j", "u", 0);
    fx_stage(in->wl, "s", NULL, 0);
    fx_tasks(in->wl, ntasks, 1000, GIB, 0, 0, 100 * MS);
    struct hrm_dsched_config cfg = {
        .kind = kind, .index = 0, .d = 2, .max_wait_us = -1, .decision_us = 500, .seed = 1};
    struct hrm_error err = {{0}};
    in->s = hrm_dsched_new(in->c, in->wl, &cfg, &err);
    cr_assert_not_null(in->s, "%s", err.text);
    fenv_init(&in->f);
}

static void inst_fini(struct inst *in)
{
    hrm_dsched_free(in->s);
    hrm_workload_free(in->wl);
    hrm_cluster_free(in->c);
}

static void submit_and_pass(struct inst *in)
{
    struct hrm_msg m = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = 0};
    cr_assert_eq(hrm_dsched_on_msg(in->s, &in->f.env, &m), 0);
    cr_assert_eq(in->f.ntimers, 1);
    cr_assert_eq(hrm_dsched_load(in->s), in->wl->ntasks);
    fenv_clear(&in->f);
    cr_assert_eq(hrm_dsched_on_timer(in->s, &in->f.env, COOKIE_PASS), 0);
}

static void reply(struct inst *in, const struct fenv_sent *hold, int granted, int64_t wait,
                  int qlen)
{
    struct hrm_msg r = {.type = HRM_MSG_HOLD_REPLY,
                        .from = hold->to,
                        .job = hold->m.job,
                        .task = hold->m.task,
                        .node = hold->to - HRM_ADDR_NODE0,
                        .attempt = hold->m.attempt,
                        .status = (uint16_t)granted,
                        .gpu_mask = (uint32_t)qlen,
                        .value = wait};
    cr_assert_eq(hrm_dsched_on_msg(in->s, &in->f.env, &r), 0);
}

/* The paper's example through the two-phase protocol: the node with two
 * queued 100 ms tasks (wait 200 ms) beats the one with a 300 ms task. */
static int two_phase_pick(enum hrm_dsched_kind kind)
{
    struct inst in;
    inst_init(&in, 2, 1, kind);
    submit_and_pass(&in);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 2, "d = 2 probes");
    struct fenv_sent h[2] = {*fenv_find(&in.f, HRM_MSG_HOLD, 0),
                             *fenv_find(&in.f, HRM_MSG_HOLD, 1)};
    cr_assert_neq(h[0].to, h[1].to, "two distinct queues");
    cr_assert_eq(h[0].m.task, 0);
    cr_assert_eq(h[0].m.status, kind == HRM_DSCHED_TWO_PHASE ? 1 : 0, "DHRM holds a slot");
    fenv_clear(&in.f);
    for (int i = 0; i < 2; i++) {
        bool two_short = h[i].to == hrm_addr_node(0);
        reply(&in, &h[i], 0, two_short ? 200 * MS : 300 * MS, two_short ? 2 : 1);
    }
    const struct fenv_sent *run = fenv_find(&in.f, HRM_MSG_RUN, 0);
    cr_assert_not_null(run);
    cr_assert_eq(run->m.task, 0);
    cr_assert_eq(run->m.attempt, -1, "nothing held");
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_DEL), 0, "nothing held, nothing to delete");
    int node = run->to - HRM_ADDR_NODE0;
    inst_fini(&in);
    return node;
}

Test(dsched, two_phase_picks_the_smallest_wait_sparrow_the_shortest_queue)
{
    cr_assert_eq(two_phase_pick(HRM_DSCHED_TWO_PHASE), 0);
    cr_assert_eq(two_phase_pick(HRM_DSCHED_SPARROW), 1);
}

Test(dsched, multi_way_probes_d_k_queues_runs_on_held_slots_and_deletes_unused_holds)
{
    struct inst in;
    inst_init(&in, 6, 2, HRM_DSCHED_MULTI_WAY);
    submit_and_pass(&in);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 4, "min(d*k, nodes) = 4");
    struct fenv_sent h[4];
    for (int i = 0; i < 4; i++) {
        h[i] = *fenv_find(&in.f, HRM_MSG_HOLD, i);
        cr_assert_eq(h[i].m.task, -1, "a batch probe names no task");
        cr_assert_eq(h[i].m.status, 1, "ceil(d*k / probes) = 1 slot each");
    }
    fenv_clear(&in.f);
    /* probes 0 and 2 hold nothing (waits 50 and 10 ms), 1 and 3 hold a slot each */
    reply(&in, &h[0], 0, 50 * MS, 4);
    reply(&in, &h[1], 1, 30 * MS, 3);
    reply(&in, &h[2], 0, 10 * MS, 4);
    cr_assert_eq(in.f.nsent, 0, "GS waits for every reply");
    reply(&in, &h[3], 1, 0, 1);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 2);
    for (int i = 0; i < 2; i++) {
        const struct fenv_sent *r = fenv_find(&in.f, HRM_MSG_RUN, i);
        cr_assert(r->to == h[1].to || r->to == h[3].to, "runs go to the held slots");
        cr_assert_eq(r->m.status, HRM_RUN_LAST);
        cr_assert_geq(r->m.attempt, 0, "names the hold");
    }
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_DEL), 0);
    /* the tasks end: the job ends */
    for (int t = 0; t < 2; t++) {
        struct hrm_msg e = {.type = HRM_MSG_TASK_END, .job = 0, .task = t, .node = 1};
        cr_assert_eq(hrm_dsched_on_msg(in.s, &in.f.env, &e), 0);
    }
    const struct fenv_sent *je = fenv_find(&in.f, HRM_MSG_JOB_END, 0);
    cr_assert_not_null(je);
    cr_assert_eq(je->to, HRM_ADDR_CLIENT);
    cr_assert_eq(je->m.status, 0);
    cr_assert_eq(hrm_dsched_load(in.s), 0);
    cr_assert_eq(hrm_dsched_ready_us(in.s, 0), -1, "the job is forgotten");
    inst_fini(&in);
}

Test(dsched, multi_way_leftovers_go_to_the_next_round)
{
    struct inst in;
    inst_init(&in, 3, 3, HRM_DSCHED_MULTI_WAY);
    submit_and_pass(&in);
    /* min(6, 3) = 3 probes, each asking ceil(6 / 3) = 2 slots */
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 3);
    struct fenv_sent h[3];
    for (int i = 0; i < 3; i++) {
        h[i] = *fenv_find(&in.f, HRM_MSG_HOLD, i);
        cr_assert_eq(h[i].m.status, 2);
    }
    fenv_clear(&in.f);
    reply(&in, &h[0], 2, 60 * MS, 4); /* two held, then a 60 ms queue */
    reply(&in, &h[1], 0, -1, 0);      /* rejected: over its limit */
    reply(&in, &h[2], 0, 40 * MS, 4); /* a 40 ms queue position: the third task */
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 3);
    const struct fenv_sent *last = fenv_find(&in.f, HRM_MSG_RUN, 1);
    cr_assert_eq(last->to, h[0].to);
    cr_assert_eq(last->m.status, HRM_RUN_LAST, "the second run on the hold is its last");
    cr_assert_eq(fenv_find(&in.f, HRM_MSG_RUN, 2)->to, h[2].to);
    cr_assert_eq(fenv_find(&in.f, HRM_MSG_RUN, 2)->m.attempt, -1, "nothing held there");
    inst_fini(&in);

    /* with max_wait 0 (held slots only) the third task is a leftover */
    inst_init(&in, 3, 3, HRM_DSCHED_MULTI_WAY);
    hrm_dsched_free(in.s);
    struct hrm_dsched_config cfg = {
        .kind = HRM_DSCHED_MULTI_WAY, .d = 2, .max_wait_us = 0, .seed = 1};
    in.s = hrm_dsched_new(in.c, in.wl, &cfg, NULL);
    submit_and_pass(&in);
    for (int i = 0; i < 3; i++)
        h[i] = *fenv_find(&in.f, HRM_MSG_HOLD, i);
    fenv_clear(&in.f);
    reply(&in, &h[0], 2, 0, 2);
    reply(&in, &h[1], 0, 5 * MS, 4);
    reply(&in, &h[2], 0, 0, 3);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 2, "only the held slots");
    cr_assert_eq(in.f.ntimers, 1, "the leftover arms the next round");
    fenv_clear(&in.f);
    cr_assert_eq(hrm_dsched_on_timer(in.s, &in.f.env, COOKIE_PASS), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 2, "one task: d = 2 probes");
    cr_assert_eq(hrm_dsched_stats(in.s)->leftovers, 1);
    inst_fini(&in);
}

Test(dsched, late_binding_hands_out_tasks_then_no_task_and_cancels)
{
    struct inst in;
    inst_init(&in, 8, 2, HRM_DSCHED_SPARROW_BATCH);
    submit_and_pass(&in);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RESERVE), 4, "d * m reservations");
    const struct fenv_sent *r0 = fenv_find(&in.f, HRM_MSG_RESERVE, 0);
    hrm_addr n0 = r0->to;
    struct hrm_msg get = {
        .type = HRM_MSG_GET_TASK, .from = n0, .job = 0, .task = -1, .attempt = 77};
    fenv_clear(&in.f);
    cr_assert_eq(hrm_dsched_on_msg(in.s, &in.f.env, &get), 0);
    const struct fenv_sent *run = fenv_find(&in.f, HRM_MSG_RUN, 0);
    cr_assert_not_null(run);
    cr_assert_eq(run->m.task, 0);
    cr_assert_eq(run->m.attempt, 77);
    cr_assert(run->m.status & HRM_RUN_BIND);
    fenv_clear(&in.f);
    cr_assert_eq(hrm_dsched_on_msg(in.s, &in.f.env, &get), 0);
    cr_assert_eq(fenv_find(&in.f, HRM_MSG_RUN, 0)->m.task, 1);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_NO_TASK), 4, "all bound: cancel the reservations");
    fenv_clear(&in.f);
    cr_assert_eq(hrm_dsched_on_msg(in.s, &in.f.env, &get), 0);
    const struct fenv_sent *no = fenv_find(&in.f, HRM_MSG_NO_TASK, 0);
    cr_assert_not_null(no);
    cr_assert_eq(no->m.attempt, 77);
    inst_fini(&in);
}

Test(dsched, central_places_one_task_per_decision_time_where_it_fits)
{
    struct inst in;
    inst_init(&in, 1, 6, HRM_DSCHED_CENTRAL); /* one node of 4 cores */
    submit_and_pass(&in);
    cr_assert_eq(in.f.ntimers, 1);
    cr_assert_eq(in.f.timer_at[0], 500, "one decision costs 500 us");
    int placed = 0;
    for (int k = 0; k < 6; k++) {
        in.f.now += 500;
        fenv_clear(&in.f);
        cr_assert_eq(hrm_dsched_on_timer(in.s, &in.f.env, 2), 0);
        placed += fenv_count(&in.f, HRM_MSG_RUN);
        if (in.f.ntimers == 0)
            break;
    }
    cr_assert_eq(placed, 4, "four cores, then it waits for a task end");
    struct hrm_msg e = {.type = HRM_MSG_TASK_END, .job = 0, .task = 0, .node = 0};
    fenv_clear(&in.f);
    cr_assert_eq(hrm_dsched_on_msg(in.s, &in.f.env, &e), 0);
    cr_assert_eq(in.f.ntimers, 1, "a freed core re-arms a decision");
    inst_fini(&in);
}

Test(dsched, locality_probes_the_replica_nodes_first)
{
    struct hrm_error err = {{0}};
    struct inst in;
    in.c = fx_cluster(1, 50, 4, 16 * GIB, 0, 0, NULL);
    in.wl = hrm_workload_new();
    fx_job(in.wl, "j", "u", 0);
    fx_stage(in.wl, "s", NULL, 0);
    fx_tasks(in.wl, 1, 1000, GIB, 0, 0, 100 * MS);
    int32_t reps[] = {17, 33, 41};
    cr_assert_geq(hrm_workload_add_block(in.wl, 64 * MIB, reps, 3, &err), 0, "%s", err.text);
    struct hrm_dsched_config cfg = {.kind = HRM_DSCHED_TWO_PHASE, .d = 2, .seed = 3};
    in.s = hrm_dsched_new(in.c, in.wl, &cfg, &err);
    fenv_init(&in.f);
    submit_and_pass(&in);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 2);
    for (int i = 0; i < 2; i++) {
        int node = fenv_find(&in.f, HRM_MSG_HOLD, i)->to - HRM_ADDR_NODE0;
        cr_assert(node == 17 || node == 33 || node == 41, "probe %d went to node %d", i, node);
    }
    inst_fini(&in);
}
