/* Scheduler instance: GS worked example, two-phase, Sparrow, late binding. */
#include <criterion/criterion.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/dsched.h"
#include "hrm/state.h"

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

/* The n holds the last pass sent, copied into h; the sent list is cleared for what the replies
 * bring. */
static void take_holds(struct inst *in, struct fenv_sent *h, int n)
{
    for (int i = 0; i < n; i++)
        h[i] = *fenv_find(&in->f, HRM_MSG_HOLD, i);
    fenv_clear(&in->f);
}

/* Every one of the n holds in h grants one slot, with no wait before it. */
static void grant_all(struct inst *in, const struct fenv_sent *h, int n)
{
    for (int i = 0; i < n; i++)
        reply(in, &h[i], 1, 0, 0);
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
    take_holds(&in, h, 3);
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

/* ---- what the roles offer a daemon driver: timeouts, churn, lost runs, cancel, adopt ---- */

/* nodes nodes, njobs jobs of ntasks tasks each (submitted at 0), an instance of cfg. */
static void inst_new(struct inst *in, int nodes, int njobs, int ntasks,
                     const struct hrm_dsched_config *cfg)
{
    in->c = nodes > 0 ? fx_cluster(1, nodes, 4, 16 * GIB, 0, 0, NULL) : hrm_cluster_new(NULL);
    if (nodes == 0) {
        struct hrm_error err = {{0}};
        cr_assert_geq(hrm_cluster_add_rack(in->c, "r0", &err), 0, "%s", err.text);
    }
    in->wl = hrm_workload_new();
    for (int j = 0; j < njobs; j++) {
        fx_job(in->wl, "j", "u", 0);
        fx_stage(in->wl, "s", NULL, 0);
        fx_tasks(in->wl, ntasks, 1000, GIB, 0, 0, 100 * MS);
    }
    struct hrm_error err = {{0}};
    in->s = hrm_dsched_new(in->c, in->wl, cfg, &err);
    cr_assert_not_null(in->s, "%s", err.text);
    fenv_init(&in->f);
}

static int add_node(struct inst *in)
{
    struct hrm_error err = {{0}};
    char name[16];
    snprintf(name, sizeof(name), "late%d", in->c->nnodes);
    struct hrm_node_desc d = {.name = name, .rack = 0, .cores = 4, .mem = 16 * GIB};
    int n = hrm_cluster_add_node(in->c, &d, &err);
    cr_assert_geq(n, 0, "%s", err.text);
    return n;
}

static int submit(struct inst *in, int job)
{
    struct hrm_msg m = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = job};
    return hrm_dsched_on_msg(in->s, &in->f.env, &m);
}

static int fire_pass(struct inst *in)
{
    fenv_clear(&in->f);
    return hrm_dsched_on_timer(in->s, &in->f.env, COOKIE_PASS);
}

static int task_end(struct inst *in, int task, int status)
{
    struct hrm_msg e = {.type = HRM_MSG_TASK_END,
                        .from = hrm_addr_node(0),
                        .job = in->wl->tasks[task].job,
                        .task = task,
                        .node = 0,
                        .status = (uint16_t)status};
    return hrm_dsched_on_msg(in->s, &in->f.env, &e);
}

/* The cookie of the one timer armed since the last clear that is not a pass. */
static uint64_t round_timer(const struct inst *in)
{
    uint64_t c = 0;
    int n = 0;
    for (int i = 0; i < in->f.ntimers; i++)
        if (in->f.timer_cookie[i] != COOKIE_PASS) {
            c = in->f.timer_cookie[i];
            n++;
        }
    cr_assert_eq(n, 1, "one round timer armed");
    return c;
}

static int count_to(const struct fenv *f, int type, hrm_addr to)
{
    int n = 0;
    for (int k = 0; k < f->nsent; k++)
        n += f->sent[k].m.type == type && f->sent[k].to == to;
    return n;
}

static const struct hrm_dsched_config timed_cfg = {.kind = HRM_DSCHED_TWO_PHASE,
                                                   .d = 2,
                                                   .max_wait_us = -1,
                                                   .round_timeout_us = 10 * MS,
                                                   .seed = 1};

Test(dsched, round_timeout_decides_with_the_replies_it_has)
{
    struct inst in;
    inst_new(&in, 4, 1, 1, &timed_cfg);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 2);
    struct fenv_sent h[2] = {*fenv_find(&in.f, HRM_MSG_HOLD, 0),
                             *fenv_find(&in.f, HRM_MSG_HOLD, 1)};
    uint64_t cookie = round_timer(&in);
    cr_assert_eq(in.f.timer_at[in.f.timer_cookie[0] == cookie ? 0 : 1], 10 * MS);
    fenv_clear(&in.f);
    reply(&in, &h[0], 1, 0, 0); /* the other node never answers */
    cr_assert_eq(in.f.nsent, 0, "still waiting for the second reply");
    in.f.now = 10 * MS;
    cr_assert_eq(hrm_dsched_on_timer(in.s, &in.f.env, cookie), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 1, "decided without the missing reply");
    const struct fenv_sent *r = fenv_find(&in.f, HRM_MSG_RUN, 0);
    cr_assert_eq(r->to, h[0].to, "on the slot that was held");
    cr_assert_eq(r->m.attempt, h[0].m.attempt);
    cr_assert_eq(r->m.task, 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_TASK_END), 0, "a missing reply is no reason to fail");
    cr_assert_eq(hrm_dsched_stats(in.s)->timeouts, 1);
    /* the timer of a round that decided is stale */
    fenv_clear(&in.f);
    cr_assert_eq(hrm_dsched_on_timer(in.s, &in.f.env, cookie), 0);
    cr_assert_eq(in.f.nsent, 0);
    inst_fini(&in);
}

Test(dsched, round_timeout_with_no_reply_at_all_places_the_task_again)
{
    struct inst in;
    inst_new(&in, 4, 1, 1, &timed_cfg);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(fire_pass(&in), 0);
    uint64_t cookie = round_timer(&in);
    fenv_clear(&in.f);
    in.f.now = 10 * MS;
    cr_assert_eq(hrm_dsched_on_timer(in.s, &in.f.env, cookie), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_TASK_END), 0, "not failed: nobody said no");
    cr_assert_eq(in.f.ntimers, 1, "a leftover: the next round is armed");
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 2, "a new round for it");
    inst_fini(&in);
}

Test(dsched, late_reply_after_the_timeout_gets_del_and_never_feeds_a_newer_round)
{
    struct inst in;
    inst_new(&in, 4, 2, 1, &timed_cfg);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(fire_pass(&in), 0);
    struct fenv_sent a[2] = {*fenv_find(&in.f, HRM_MSG_HOLD, 0),
                             *fenv_find(&in.f, HRM_MSG_HOLD, 1)};
    uint64_t cookie = round_timer(&in);
    fenv_clear(&in.f);
    reply(&in, &a[0], 1, 0, 0);
    cr_assert_eq(hrm_dsched_on_timer(in.s, &in.f.env, cookie), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 1);
    /* a second job: its round reuses the probe records of the first */
    cr_assert_eq(submit(&in, 1), 0);
    cr_assert_eq(fire_pass(&in), 0);
    struct fenv_sent b[2] = {*fenv_find(&in.f, HRM_MSG_HOLD, 0),
                             *fenv_find(&in.f, HRM_MSG_HOLD, 1)};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            cr_assert_neq(b[i].m.attempt, a[k].m.attempt, "hold ids are not reused soon");
    /* the first round's missing reply comes now, with a slot held */
    fenv_clear(&in.f);
    reply(&in, &a[1], 1, 0, 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 0, "not taken as a reply of the new round");
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_DEL), 1, "its hold is released");
    const struct fenv_sent *d = fenv_find(&in.f, HRM_MSG_DEL, 0);
    cr_assert_eq(d->to, a[1].to);
    cr_assert_eq(d->m.attempt, a[1].m.attempt);
    /* the same reply again, and one that held nothing: ignored, no DEL */
    fenv_clear(&in.f);
    reply(&in, &a[1], 1, 0, 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_DEL), 1);
    fenv_clear(&in.f);
    reply(&in, &a[0], 0, 5 * MS, 1);
    cr_assert_eq(in.f.nsent, 0);
    /* the new round still decides on its own replies */
    reply(&in, &b[0], 1, 0, 0);
    reply(&in, &b[1], 0, 7 * MS, 2);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 1);
    cr_assert_eq(fenv_find(&in.f, HRM_MSG_RUN, 0)->m.task, 1);
    cr_assert_eq(hrm_dsched_stats(in.s)->late_replies, 3);
    inst_fini(&in);
}

Test(dsched, without_a_timeout_a_duplicate_reply_is_a_protocol_error)
{
    struct inst in;
    struct hrm_dsched_config cfg = timed_cfg;
    cfg.round_timeout_us = 0;
    inst_new(&in, 4, 1, 1, &cfg);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(in.f.ntimers, 0, "no round timer");
    struct fenv_sent h = *fenv_find(&in.f, HRM_MSG_HOLD, 0);
    reply(&in, &h, 0, 5 * MS, 1);
    struct hrm_msg dup = {.type = HRM_MSG_HOLD_REPLY,
                          .from = h.to,
                          .node = h.to - HRM_ADDR_NODE0,
                          .attempt = h.m.attempt,
                          .value = 0};
    cr_assert_eq(hrm_dsched_on_msg(in.s, &in.f.env, &dup), -EPROTO);
    inst_fini(&in);
}

/* Probes, runs and reservations of 64 one-task jobs (enough for every node
 * to be drawn many times over) under kind; counts what went to node `down`. */
static void churn_kind(enum hrm_dsched_kind kind)
{
    struct inst in;
    struct hrm_dsched_config cfg = {.kind = kind, .d = 2, .max_wait_us = -1, .seed = 5};
    inst_new(&in, 8, 64, 1, &cfg);
    hrm_dsched_node_up(in.s, &in.f.env, 3, false);
    hrm_dsched_node_up(in.s, &in.f.env, 6, false);
    int sent = 0;
    for (int j = 0; j < 64; j++) {
        cr_assert_eq(submit(&in, j), 0);
        cr_assert_eq(fire_pass(&in), 0);
        sent += in.f.nsent;
        for (int k = 0; k < in.f.nsent; k++) {
            cr_assert_neq(in.f.sent[k].to, hrm_addr_node(3), "kind %d: message to a down node",
                          kind);
            cr_assert_neq(in.f.sent[k].to, hrm_addr_node(6));
        }
    }
    cr_assert_geq(sent, 64);
    inst_fini(&in);
}

Test(dsched, a_down_node_is_never_probed_drawn_or_sent_a_run)
{
    churn_kind(HRM_DSCHED_RANDOM);
    churn_kind(HRM_DSCHED_SPARROW);
    churn_kind(HRM_DSCHED_TWO_PHASE);
    churn_kind(HRM_DSCHED_MULTI_WAY);
    churn_kind(HRM_DSCHED_SPARROW_BATCH);
}

Test(dsched, a_round_asks_no_more_queues_than_nodes_up_and_skips_down_replicas)
{
    struct inst in;
    struct hrm_dsched_config cfg = {.kind = HRM_DSCHED_MULTI_WAY, .d = 2, .max_wait_us = -1};
    inst_new(&in, 6, 1, 4, &cfg);
    hrm_dsched_node_up(in.s, &in.f.env, 0, false);
    hrm_dsched_node_up(in.s, &in.f.env, 5, false);
    hrm_dsched_node_up(in.s, &in.f.env, 5, false); /* twice: no effect */
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 4, "min(d*k = 8, 4 up)");
    cr_assert_eq(count_to(&in.f, HRM_MSG_HOLD, hrm_addr_node(0)), 0);
    cr_assert_eq(count_to(&in.f, HRM_MSG_HOLD, hrm_addr_node(5)), 0);
    inst_fini(&in);

    /* a task whose data sits on a down node and one up node probes the up one */
    struct hrm_error err = {{0}};
    struct hrm_dsched_config tp = {.kind = HRM_DSCHED_TWO_PHASE, .d = 1, .seed = 2};
    inst_new(&in, 20, 1, 1, &tp);
    int32_t reps[] = {7, 13};
    cr_assert_geq(hrm_workload_add_block(in.wl, 64 * MIB, reps, 2, &err), 0, "%s", err.text);
    hrm_dsched_node_up(in.s, &in.f.env, 7, false);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 1);
    cr_assert_eq(fenv_find(&in.f, HRM_MSG_HOLD, 0)->to, hrm_addr_node(13));
    inst_fini(&in);
}

Test(dsched, a_node_added_after_creation_is_probed_only_once_announced)
{
    struct inst in;
    struct hrm_dsched_config cfg = {.kind = HRM_DSCHED_MULTI_WAY, .d = 2, .max_wait_us = -1};
    inst_new(&in, 2, 2, 3, &cfg);
    int n = add_node(&in);
    cr_assert_eq(n, 2);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 2, "only the two nodes known up");
    cr_assert_eq(count_to(&in.f, HRM_MSG_HOLD, hrm_addr_node(2)), 0);
    fenv_clear(&in.f);
    hrm_dsched_node_up(in.s, &in.f.env, 2, true);
    cr_assert_eq(in.f.ntimers, 0, "nothing ready: no pass");
    cr_assert_eq(submit(&in, 1), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 3, "min(d*k = 6, 3 up)");
    cr_assert_eq(count_to(&in.f, HRM_MSG_HOLD, hrm_addr_node(2)), 1);
    /* a node beyond the cluster as created, announced before the cluster has it */
    hrm_dsched_node_up(in.s, &in.f.env, 9, true);
    hrm_dsched_node_up(in.s, &in.f.env, 9, false);
    inst_fini(&in);
}

Test(dsched, with_no_node_up_tasks_wait_and_a_node_coming_up_places_them)
{
    enum hrm_dsched_kind kinds[] = {HRM_DSCHED_RANDOM, HRM_DSCHED_MULTI_WAY};
    for (int k = 0; k < 2; k++) {
        struct inst in;
        struct hrm_dsched_config cfg = {.kind = kinds[k], .d = 2, .max_wait_us = -1};
        inst_new(&in, 0, 1, 3, &cfg); /* the master starts before any agent */
        cr_assert_eq(submit(&in, 0), 0);
        cr_assert_eq(fire_pass(&in), 0);
        cr_assert_eq(in.f.nsent, 0, "no node: no round, no run");
        cr_assert_eq(in.f.ntimers, 0);
        cr_assert_eq(hrm_dsched_load(in.s), 3, "the tasks wait");
        int n = add_node(&in);
        fenv_clear(&in.f);
        hrm_dsched_node_up(in.s, &in.f.env, n, true);
        cr_assert_eq(in.f.ntimers, 1, "a node came up with tasks ready: a pass");
        cr_assert_eq(in.f.timer_cookie[0], COOKIE_PASS);
        cr_assert_eq(fire_pass(&in), 0);
        int type = kinds[k] == HRM_DSCHED_RANDOM ? HRM_MSG_RUN : HRM_MSG_HOLD;
        cr_assert_eq(fenv_count(&in.f, type), kinds[k] == HRM_DSCHED_RANDOM ? 3 : 1);
        cr_assert_eq(count_to(&in.f, type, hrm_addr_node(n)), fenv_count(&in.f, type));
        inst_fini(&in);
    }
}

Test(dsched, a_lost_run_is_placed_again_and_the_job_ends_once)
{
    struct inst in;
    struct hrm_dsched_config cfg = {.kind = HRM_DSCHED_TWO_PHASE, .d = 2, .seed = 4};
    inst_new(&in, 4, 1, 2, &cfg);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 4);
    struct fenv_sent h[4];
    take_holds(&in, h, 4);
    grant_all(&in, h, 4);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 2);
    /* task 0's node dies; task 1 is evicted */
    fenv_clear(&in.f);
    cr_assert_eq(task_end(&in, 0, HRM_OUTCOME_LOST), 0);
    cr_assert_eq(task_end(&in, 1, HRM_OUTCOME_PREEMPTED), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_JOB_END), 0, "not ended");
    cr_assert_eq(hrm_dsched_load(in.s), 2, "both still to run");
    cr_assert_eq(in.f.ntimers, 1, "a pass is armed");
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 4, "a new round for each");
    /* front of the deque: the later requeue (task 1) goes first */
    cr_assert_eq(fenv_find(&in.f, HRM_MSG_HOLD, 0)->m.task, 1);
    cr_assert_eq(fenv_find(&in.f, HRM_MSG_HOLD, 2)->m.task, 0);
    take_holds(&in, h, 4);
    grant_all(&in, h, 4);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 2, "placed again");
    fenv_clear(&in.f);
    cr_assert_eq(task_end(&in, 0, HRM_OUTCOME_DONE), 0);
    cr_assert_eq(task_end(&in, 1, HRM_OUTCOME_DONE), 0);
    cr_assert_eq(task_end(&in, 1, HRM_OUTCOME_DONE), 0, "a duplicate end is harmless");
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_JOB_END), 1);
    cr_assert_eq(fenv_find(&in.f, HRM_MSG_JOB_END, 0)->m.status, 0, "not failed");
    cr_assert_eq(hrm_dsched_load(in.s), 0);
    inst_fini(&in);
}

Test(dsched, cancelled_in_flight_tasks_end_and_their_round_runs_nothing)
{
    struct inst in;
    struct hrm_dsched_config cfg = {.kind = HRM_DSCHED_MULTI_WAY, .d = 2, .max_wait_us = -1};
    inst_new(&in, 6, 1, 2, &cfg);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 4);
    struct fenv_sent h[4];
    take_holds(&in, h, 4);
    /* the driver cancels the job while the round is out */
    cr_assert_eq(task_end(&in, 0, HRM_OUTCOME_FAILED), 0);
    cr_assert_eq(task_end(&in, 1, HRM_OUTCOME_FAILED), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_JOB_END), 1, "the job ends");
    cr_assert_eq(hrm_dsched_load(in.s), 0);
    fenv_clear(&in.f);
    for (int i = 0; i < 4; i++)
        reply(&in, &h[i], i % 2, 0, 0); /* holds 1 and 3 reserved a slot */
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 0, "nothing of a cancelled job runs");
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_DEL), 2, "its reserved slots are released");
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_TASK_END), 0);
    inst_fini(&in);
}

Test(dsched, a_cancelled_ready_task_is_skipped_by_the_pass)
{
    struct inst in;
    struct hrm_dsched_config cfg = {.kind = HRM_DSCHED_TWO_PHASE, .d = 2, .seed = 6};
    inst_new(&in, 4, 1, 3, &cfg);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(task_end(&in, 1, HRM_OUTCOME_FAILED), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 4, "rounds for tasks 0 and 2 only");
    for (int i = 0; i < 4; i++)
        cr_assert_neq(fenv_find(&in.f, HRM_MSG_HOLD, i)->m.task, 1);
    inst_fini(&in);
}

Test(dsched, adopt_marks_a_task_placed_and_its_end_ends_the_job)
{
    struct inst in;
    struct hrm_dsched_config cfg = {.kind = HRM_DSCHED_TWO_PHASE, .d = 2, .seed = 8};
    inst_new(&in, 4, 1, 3, &cfg);
    cr_assert_eq(hrm_dsched_adopt(in.s, 1), -EINVAL, "its job is not registered yet");
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(hrm_dsched_adopt(in.s, 1), 0);
    cr_assert_eq(hrm_dsched_adopt(in.s, 1), -EINVAL, "placed already");
    cr_assert_eq(hrm_dsched_adopt(in.s, 99), -EINVAL);
    cr_assert_eq(hrm_dsched_adopt(in.s, -1), -EINVAL);
    cr_assert_eq(hrm_dsched_load(in.s), 3, "an adopted task still counts");
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_HOLD), 4, "no round for the adopted task");
    for (int i = 0; i < 4; i++)
        cr_assert_neq(fenv_find(&in.f, HRM_MSG_HOLD, i)->m.task, 1);
    struct fenv_sent h[4];
    take_holds(&in, h, 4);
    grant_all(&in, h, 4);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 2);
    for (int i = 0; i < 2; i++)
        cr_assert_neq(fenv_find(&in.f, HRM_MSG_RUN, i)->m.task, 1);
    fenv_clear(&in.f);
    cr_assert_eq(task_end(&in, 0, HRM_OUTCOME_DONE), 0);
    cr_assert_eq(task_end(&in, 2, HRM_OUTCOME_DONE), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_JOB_END), 0, "the adopted task still runs");
    cr_assert_eq(task_end(&in, 1, HRM_OUTCOME_DONE), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_JOB_END), 1);
    cr_assert_eq(hrm_dsched_load(in.s), 0);
    inst_fini(&in);
}

Test(dsched, an_adopted_task_lost_later_is_placed_once)
{
    struct inst in;
    struct hrm_dsched_config cfg = {.kind = HRM_DSCHED_RANDOM, .seed = 9};
    inst_new(&in, 4, 1, 2, &cfg);
    cr_assert_eq(submit(&in, 0), 0);
    cr_assert_eq(hrm_dsched_adopt(in.s, 0), 0);
    /* its node is gone before the pass: it is still in the deque once */
    cr_assert_eq(task_end(&in, 0, HRM_OUTCOME_LOST), 0);
    cr_assert_eq(fire_pass(&in), 0);
    cr_assert_eq(fenv_count(&in.f, HRM_MSG_RUN), 2, "task 0 once, task 1 once");
    cr_assert_neq(fenv_find(&in.f, HRM_MSG_RUN, 0)->m.task,
                  fenv_find(&in.f, HRM_MSG_RUN, 1)->m.task);
    inst_fini(&in);
}
