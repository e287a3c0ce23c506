/* Node queue system: wait estimates, holds, priorities, preemption, limits. */
#include <criterion/criterion.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/dsetup.h"
#include "hrm/nqs.h"
#include "hrm/state.h"

#define MS 1000ll
#define SCHED hrm_addr_sched(0)

struct world {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct fenv f;
};

/* nodes identical nodes of cores cores, one job of tasks with the given durations (ms). */
static void world_init(struct world *w, int nodes, int cores, const int *ms, int ntasks)
{
    w->c = fx_cluster(1, nodes, cores, 16 * GIB, 0, 0, NULL);
    w->wl = hrm_workload_new();
    fx_job(w->wl, "j", "u", 0);
    fx_stage(w->wl, "s", NULL, 0);
    for (int i = 0; i < ntasks; i++)
        fx_tasks(w->wl, 1, 1000, GIB, 0, 0, ms[i] * MS);
    fenv_init(&w->f);
}

static void world_fini(struct world *w)
{
    hrm_workload_free(w->wl);
    hrm_cluster_free(w->c);
}

static struct hrm_nqs *nqs(struct world *w, int node, const struct hrm_nqs_config *cfg)
{
    struct hrm_error err = {{0}};
    struct hrm_nqs *q = hrm_nqs_new(w->c, w->wl, node, cfg, &err);
    cr_assert_not_null(q, "%s", err.text);
    return q;
}

static void run(struct hrm_nqs *q, struct fenv *f, int task, int queue, int hold, int flags)
{
    struct hrm_msg m = {.type = HRM_MSG_RUN,
                        .from = SCHED,
                        .job = 0,
                        .task = task,
                        .node = queue,
                        .attempt = hold,
                        .status = (uint16_t)flags,
                        .value = SCHED};
    cr_assert_eq(hrm_nqs_on_msg(q, &f->env, &m), 0);
}

static struct hrm_msg hold(struct hrm_nqs *q, struct fenv *f, int id, int want, int64_t mem)
{
    struct hrm_msg m = {.type = HRM_MSG_HOLD,
                        .from = SCHED,
                        .job = -1,
                        .task = -1,
                        .node = 0,
                        .attempt = id,
                        .status = (uint16_t)want};
    hrm_nqs_hold_size(&m, 1000, mem);
    fenv_clear(f);
    cr_assert_eq(hrm_nqs_on_msg(q, &f->env, &m), 0);
    const struct fenv_sent *r = fenv_find(f, HRM_MSG_HOLD_REPLY, 0);
    cr_assert_not_null(r);
    cr_assert_eq(r->to, SCHED);
    cr_assert_eq(r->m.attempt, id);
    return r->m;
}

/* Ends the run the executor was last told to launch for task. */
static void end_task(struct hrm_nqs *q, struct fenv *f, const struct hrm_msg *launch)
{
    struct hrm_msg m = {.type = HRM_MSG_TASK_END,
                        .from = HRM_ADDR_EXEC,
                        .job = launch->job,
                        .task = launch->task,
                        .node = launch->node,
                        .attempt = launch->attempt,
                        .gpu_mask = launch->gpu_mask,
                        .status = 0};
    cr_assert_eq(hrm_nqs_on_msg(q, &f->env, &m), 0);
}

static int64_t wait1(struct hrm_nqs *q, struct fenv *f)
{
    return hrm_nqs_wait(q, 0, 1000, GIB, f->now);
}

Test(nqs, wait_is_zero_with_a_free_slot_then_remaining_time_then_plus_queued_work)
{
    struct world w;
    int ms[] = {100, 100};
    world_init(&w, 1, 1, ms, 2);
    struct hrm_nqs *q = nqs(&w, 0, NULL);
    cr_assert_eq(wait1(q, &w.f), 0);
    run(q, &w.f, 0, 0, -1, 0);
    const struct fenv_sent *l = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0);
    cr_assert_not_null(l);
    cr_assert_eq(l->to, HRM_ADDR_EXEC);
    cr_assert_eq(l->m.task, 0);
    /* no queued task, no slot: the smallest remaining time */
    cr_assert_eq(wait1(q, &w.f), 100 * MS);
    w.f.now = 30 * MS;
    cr_assert_eq(wait1(q, &w.f), 70 * MS);
    /* n queued: plus their estimates (over 1 slot) */
    run(q, &w.f, 1, 0, -1, 0);
    cr_assert_eq(wait1(q, &w.f), 170 * MS);
    struct hrm_nqs_queue_info qi;
    hrm_nqs_queue_info(q, 0, &qi);
    cr_assert_eq(qi.running, 1);
    cr_assert_eq(qi.queued, 1);
    cr_assert_eq(qi.queued_est_us, 100 * MS);
    hrm_nqs_free(q);
    world_fini(&w);
}

/* A run past its estimate by x counts x more (it doubles as it goes on), never 0: a node whose
 * task overran must not look free to probes. */
Test(nqs, a_run_past_its_estimate_counts_its_overrun_as_remaining_time)
{
    struct world w;
    int ms[] = {100, 100};
    world_init(&w, 1, 1, ms, 2);
    struct hrm_nqs *q = nqs(&w, 0, NULL);
    run(q, &w.f, 0, 0, -1, 0);
    w.f.now = 100 * MS;
    cr_assert_eq(wait1(q, &w.f), 0, "at its estimate: it may end now");
    w.f.now = 130 * MS;
    cr_assert_eq(wait1(q, &w.f), 30 * MS);
    w.f.now = 5000 * MS;
    cr_assert_eq(wait1(q, &w.f), 4900 * MS);
    run(q, &w.f, 1, 0, -1, 0);
    cr_assert_eq(wait1(q, &w.f), 5000 * MS, "plus the queued task's estimate");
    struct hrm_msg r = hold(q, &w.f, 1, 1, GIB);
    cr_assert_eq(r.value, 5000 * MS, "what a probe is told");
    hrm_nqs_free(q);
    world_fini(&w);
}

/* A task queued behind a run that overran its estimate asks to move once its expected wait
 * passes hw, though no event happens on the node: the request timer fires. */
Test(nqs, a_task_behind_an_overrunning_run_asks_to_move)
{
    struct world w;
    int ms[] = {100, 100};
    world_init(&w, 6, 1, ms, 2);
    struct hrm_nqs_config cfg = {.balance = true, .hw_us = 50 * MS, .lw_us = 0};
    struct hrm_nqs *q = nqs(&w, 0, &cfg);
    run(q, &w.f, 0, 0, -1, 0);
    w.f.now = 200 * MS; /* 100 ms past its estimate */
    fenv_clear(&w.f);
    run(q, &w.f, 1, 0, -1, 0);
    const struct fenv_sent *req = fenv_find(&w.f, HRM_MSG_MIGRATE_REQUEST, 0);
    cr_assert_not_null(req, "task 1 expects 100 ms > hw behind the overrun: asks to move");
    cr_assert_eq(req->m.task, 1);
    cr_assert_eq(req->m.value, 100 * MS);
    hrm_nqs_free(q);
    world_fini(&w);
}

/* The paper's example: two queued tasks of 100 ms (200 ms) against one of
 * 300 ms.  The shorter queue (length 1) is the worse choice; the wait
 * estimate ranks the longer queue first. */
Test(nqs, paper_example_two_100ms_tasks_wait_less_than_one_300ms_task)
{
    struct world w;
    int ms[] = {100, 100, 300};
    world_init(&w, 2, 1, ms, 3);
    struct hrm_nqs *a = nqs(&w, 0, NULL), *b = nqs(&w, 1, NULL);
    run(a, &w.f, 0, 0, -1, 0); /* runs: 100 ms left */
    run(a, &w.f, 1, 0, -1, 0); /* queued: 100 ms */
    run(b, &w.f, 2, 0, -1, 0); /* runs: 300 ms left */
    struct hrm_nqs_queue_info ia, ib;
    hrm_nqs_queue_info(a, 0, &ia);
    hrm_nqs_queue_info(b, 0, &ib);
    cr_assert_gt(ia.running + ia.queued, ib.running + ib.queued, "a is the longer queue");
    cr_assert_eq(wait1(a, &w.f), 200 * MS);
    cr_assert_eq(wait1(b, &w.f), 300 * MS);
    /* what a probe reports: queue length and wait */
    struct hrm_msg ra = hold(a, &w.f, 1, 1, GIB), rb = hold(b, &w.f, 2, 1, GIB);
    cr_assert_eq(ra.gpu_mask, 2);
    cr_assert_eq(rb.gpu_mask, 1);
    cr_assert_eq(ra.value, 200 * MS);
    cr_assert_eq(rb.value, 300 * MS);
    cr_assert_eq(ra.status, 0, "no slot to hold");
    hrm_nqs_free(a);
    hrm_nqs_free(b);
    world_fini(&w);
}

/* 4 slots busy for 10, 50, 80 and 90 ms more, four 100 ms tasks queued: the
 * slots free at 10, 50, 80, 90; the queued take them and end at 110 .. 190;
 * a new task starts at 110 = pt + queued / q (pt not divided by q). */
Test(nqs, wait_divides_queued_work_by_the_slots_not_the_remaining_time)
{
    struct world w;
    int ms[] = {10, 50, 80, 90, 100, 100, 100, 100};
    world_init(&w, 1, 4, ms, 8);
    struct hrm_nqs *q = nqs(&w, 0, NULL);
    for (int t = 0; t < 8; t++)
        run(q, &w.f, t, 0, -1, 0);
    cr_assert_eq(wait1(q, &w.f), 110 * MS);
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, eps_of_the_job_kind_scales_the_estimates)
{
    struct world w;
    int ms[] = {100, 100};
    world_init(&w, 1, 1, ms, 2);
    struct hrm_nqs_config cfg = {.eps = {2.0, 1.0, 1.0}}; /* batch jobs take twice their estimate */
    struct hrm_nqs *q = nqs(&w, 0, &cfg);
    run(q, &w.f, 0, 0, -1, 0);
    run(q, &w.f, 1, 0, -1, 0);
    cr_assert_eq(wait1(q, &w.f), 400 * MS);
    cr_assert_float_eq(hrm_nqs_eps(q, HRM_JOB_BATCH), 2.0, 1e-12);
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, hold_reserves_run_consumes_del_releases)
{
    struct world w;
    int ms[] = {100, 100, 100};
    world_init(&w, 1, 2, ms, 3);
    struct hrm_nqs *q = nqs(&w, 0, NULL);
    struct hrm_nqs_queue_info qi;
    struct hrm_msg r = hold(q, &w.f, 7, 1, GIB);
    cr_assert_eq(r.status, 1, "one slot held");
    cr_assert_eq(r.value, 0, "the other slot is still free");
    cr_assert_eq(w.f.ntimers, 1, "expiry armed");
    r = hold(q, &w.f, 8, 5, GIB);
    cr_assert_eq(r.status, 1, "only one slot left to hold");
    r = hold(q, &w.f, 9, 1, GIB);
    cr_assert_eq(r.status, 0, "everything held");
    hrm_nqs_queue_info(q, 0, &qi);
    cr_assert_eq(qi.held_slots, 2);
    /* run on hold 7: starts at once in the held slot, the hold is used up */
    fenv_clear(&w.f);
    run(q, &w.f, 0, 0, 7, HRM_RUN_LAST);
    cr_assert_not_null(fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0));
    hrm_nqs_queue_info(q, 0, &qi);
    cr_assert_eq(qi.held_slots, 1);
    cr_assert_eq(qi.running, 1);
    /* a run without a hold waits: the last slot is held by 8 */
    fenv_clear(&w.f);
    run(q, &w.f, 1, 0, -1, 0);
    cr_assert_null(fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0));
    /* del of 8: the slot is free again and the queued task takes it */
    struct hrm_msg del = {.type = HRM_MSG_DEL, .from = SCHED, .node = 0, .attempt = 8};
    fenv_clear(&w.f);
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &del), 0);
    const struct fenv_sent *l = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0);
    cr_assert_not_null(l);
    cr_assert_eq(l->m.task, 1);
    hrm_nqs_queue_info(q, 0, &qi);
    cr_assert_eq(qi.held_slots, 0);
    cr_assert_eq(qi.running, 2);
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, holds_expire_and_free_their_slots)
{
    struct world w;
    int ms[] = {100};
    world_init(&w, 1, 1, ms, 1);
    struct hrm_nqs_config cfg = {.hold_ttl_us = 20 * MS};
    struct hrm_nqs *q = nqs(&w, 0, &cfg);
    struct hrm_msg r = hold(q, &w.f, 1, 1, GIB);
    cr_assert_eq(r.status, 1);
    cr_assert_eq(w.f.timer_at[0], 20 * MS);
    /* a task arriving meanwhile queues behind the hold */
    fenv_clear(&w.f);
    w.f.now = 5 * MS;
    run(q, &w.f, 0, 0, -1, 0);
    cr_assert_null(fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0));
    /* the scheduler never answers: at expiry the slot goes to the queued task */
    w.f.now = 20 * MS;
    fenv_clear(&w.f);
    cr_assert_eq(hrm_nqs_on_timer(q, &w.f.env, 1), 0);
    cr_assert_not_null(fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0));
    cr_assert_eq(hrm_nqs_stats(q)->holds_expired, 1);
    /* a late run on the expired hold just queues */
    struct hrm_nqs_queue_info qi;
    hrm_nqs_queue_info(q, 0, &qi);
    cr_assert_eq(qi.held_slots, 0);
    cr_assert_eq(qi.running, 1);
    hrm_nqs_free(q);
    world_fini(&w);
}

static const struct hrm_nqs_queue_cfg two_queues[] = {
    {.name = "low", .priority = 0},
    {.name = "high", .priority = 10},
};

Test(nqs, strict_priority_and_fifo_inside_a_queue)
{
    struct world w;
    int ms[] = {100, 100, 100, 100};
    world_init(&w, 1, 1, ms, 4);
    struct hrm_nqs_config cfg = {.queues = two_queues, .nqueues = 2, .no_preempt = true};
    struct hrm_nqs *q = nqs(&w, 0, &cfg);
    run(q, &w.f, 0, 0, -1, 0); /* low, runs */
    run(q, &w.f, 1, 0, -1, 0); /* low, queued first */
    run(q, &w.f, 2, 1, -1, 0); /* high, queued later */
    run(q, &w.f, 3, 1, -1, 0); /* high, queued last */
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_TASK_KILL), 0, "no preemption");
    /* the high queue's wait counts only itself; the low queue's counts both */
    cr_assert_eq(hrm_nqs_wait(q, 1, 1000, GIB, 0), 100 * MS + 200 * MS);
    cr_assert_eq(hrm_nqs_wait(q, 0, 1000, GIB, 0), 100 * MS + 300 * MS);
    int order[3];
    for (int k = 0; k < 3; k++) {
        const struct fenv_sent *l = NULL;
        for (int i = w.f.nsent - 1; i >= 0 && !l; i--)
            if (w.f.sent[i].m.type == HRM_MSG_TASK_LAUNCH)
                l = &w.f.sent[i];
        struct hrm_msg launch = l->m;
        fenv_clear(&w.f);
        end_task(q, &w.f, &launch);
        l = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0);
        cr_assert_not_null(l);
        order[k] = l->m.task;
        cr_assert_not_null(fenv_find(&w.f, HRM_MSG_TASK_END, 0), "the owner hears of the end");
    }
    cr_assert_eq(order[0], 2, "high queue first");
    cr_assert_eq(order[1], 3, "FIFO inside it");
    cr_assert_eq(order[2], 1, "then the low queue");
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, a_higher_priority_task_preempts_and_the_victim_runs_again_first)
{
    struct world w;
    int ms[] = {100, 100, 100};
    world_init(&w, 1, 1, ms, 3);
    struct hrm_nqs_config cfg = {.queues = two_queues, .nqueues = 2};
    struct hrm_nqs *q = nqs(&w, 0, &cfg);
    run(q, &w.f, 0, 0, -1, 0);
    run(q, &w.f, 1, 0, -1, 0);
    struct hrm_msg launch0 = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0)->m;
    /* a high-priority queue reports no wait: it can preempt */
    cr_assert_eq(hrm_nqs_wait(q, 1, 1000, GIB, 0), 0);
    fenv_clear(&w.f);
    w.f.now = 40 * MS;
    run(q, &w.f, 2, 1, -1, 0);
    const struct fenv_sent *k = fenv_find(&w.f, HRM_MSG_TASK_KILL, 0);
    cr_assert_not_null(k);
    cr_assert_eq(k->m.task, 0);
    cr_assert_eq(k->m.attempt, launch0.attempt);
    const struct fenv_sent *l = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0);
    cr_assert_not_null(l);
    cr_assert_eq(l->m.task, 2);
    cr_assert_eq(hrm_nqs_stats(q)->preemptions, 1);
    /* the killed run's late end report is ignored */
    fenv_clear(&w.f);
    end_task(q, &w.f, &launch0);
    cr_assert_eq(w.f.nsent, 0);
    /* when the high task ends, the preempted one runs again before task 1 */
    struct hrm_msg launch2 = l->m;
    fenv_clear(&w.f);
    end_task(q, &w.f, &launch2);
    l = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0);
    cr_assert_not_null(l);
    cr_assert_eq(l->m.task, 0);
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, a_task_over_the_queue_limit_is_rejected_with_the_reason)
{
    struct world w;
    int ms[] = {100};
    world_init(&w, 1, 4, ms, 1);
    struct hrm_nqs_queue_cfg small = {.name = "small", .priority = 0};
    small.limit.v[HRM_DIM_MEM] = GIB / 2;
    struct hrm_nqs_config cfg = {.queues = &small, .nqueues = 1};
    struct hrm_nqs *q = nqs(&w, 0, &cfg);
    struct hrm_msg r = hold(q, &w.f, 1, 1, GIB);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(r.value, -HRM_NQS_OVER_LIMIT);
    cr_assert_eq(hrm_nqs_wait(q, 0, 1000, GIB, 0), -HRM_NQS_OVER_LIMIT);
    cr_assert_eq(hrm_nqs_wait(q, 3, 1000, GIB, 0), -HRM_NQS_NO_QUEUE);
    fenv_clear(&w.f);
    run(q, &w.f, 0, 0, -1, 0);
    cr_assert_null(fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0));
    const struct fenv_sent *e = fenv_find(&w.f, HRM_MSG_TASK_END, 0);
    cr_assert_not_null(e);
    cr_assert_eq(e->to, SCHED);
    cr_assert_eq(e->m.status, HRM_OUTCOME_FAILED);
    cr_assert_eq(e->m.value, -HRM_NQS_OVER_LIMIT);
    cr_assert_eq(hrm_nqs_stats(q)->rejected, 2);
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, max_running_caps_a_queue_below_the_node)
{
    struct world w;
    int ms[] = {100, 100, 100};
    world_init(&w, 1, 4, ms, 3);
    struct hrm_nqs_queue_cfg one = {.name = "one", .max_running = 1};
    struct hrm_nqs_config cfg = {.queues = &one, .nqueues = 1};
    struct hrm_nqs *q = nqs(&w, 0, &cfg);
    for (int t = 0; t < 3; t++)
        run(q, &w.f, t, 0, -1, 0);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_TASK_LAUNCH), 1);
    /* one slot: 100 ms left + 200 ms queued over 1 */
    cr_assert_eq(wait1(q, &w.f), 300 * MS);
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, late_binding_reservation_asks_its_scheduler_at_the_head)
{
    struct world w;
    int ms[] = {100, 100};
    world_init(&w, 1, 1, ms, 2);
    struct hrm_nqs *q = nqs(&w, 0, NULL);
    struct hrm_msg resv = {.type = HRM_MSG_RESERVE, .from = SCHED, .job = 0, .task = -1, .node = 0};
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &resv), 0);
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &resv), 0);
    const struct fenv_sent *g = fenv_find(&w.f, HRM_MSG_GET_TASK, 0);
    cr_assert_not_null(g, "the first reservation finds the slot free");
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_GET_TASK), 1, "the second waits");
    int32_t token = g->m.attempt;
    fenv_clear(&w.f);
    run(q, &w.f, 0, 0, token, HRM_RUN_BIND);
    cr_assert_not_null(fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0));
    /* proactive cancellation removes the queued reservation */
    struct hrm_msg cancel = {.type = HRM_MSG_NO_TASK, .from = SCHED, .job = 0, .attempt = -1};
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &cancel), 0);
    struct hrm_nqs_queue_info qi;
    hrm_nqs_queue_info(q, 0, &qi);
    cr_assert_eq(qi.queued, 0);
    hrm_nqs_free(q);
    world_fini(&w);
}

/* ---- what the node queues offer an agent: own capacity, cancel, idle ---- */

Test(nqs, new_capacity_limits_by_the_capacity_given_not_the_cluster)
{
    struct world w;
    int ms[] = {100, 100, 100, 100};
    world_init(&w, 1, 8, ms, 4);                      /* the cluster says 8 cores, 16 GiB */
    fx_tasks(w.wl, 1, 1000, 8 * GIB, 0, 0, 100 * MS); /* task 4: 8 GiB */
    struct hrm_res cap = {{0}};
    cap.v[HRM_DIM_CPU] = 2000; /* the agent knows better: 2 cores, 4 GiB */
    cap.v[HRM_DIM_MEM] = 4 * GIB;
    struct hrm_error err = {{0}};
    struct hrm_nqs *q = hrm_nqs_new_capacity(&cap, w.wl, 7, NULL, &err);
    cr_assert_not_null(q, "%s", err.text);
    struct hrm_msg r = hold(q, &w.f, 1, 5, GIB);
    cr_assert_eq(r.status, 2, "two cores: two slots");
    cr_assert_eq(r.node, 7, "its id is the one given");
    struct hrm_msg del = {.type = HRM_MSG_DEL, .from = SCHED, .attempt = 1};
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &del), 0);
    fenv_clear(&w.f);
    for (int t = 0; t < 3; t++)
        run(q, &w.f, t, 0, -1, 0);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_TASK_LAUNCH), 2, "the third queues");
    cr_assert_eq(fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0)->m.node, 7);
    fenv_clear(&w.f);
    run(q, &w.f, 4, 0, -1, 0);
    const struct fenv_sent *e = fenv_find(&w.f, HRM_MSG_TASK_END, 0);
    cr_assert_not_null(e, "8 GiB is over this node's 4 GiB");
    cr_assert_eq(e->m.value, -HRM_NQS_OVER_LIMIT);
    cr_assert_null(hrm_nqs_new_capacity(NULL, w.wl, 0, NULL, &err));
    cr_assert_null(hrm_nqs_new_capacity(&cap, w.wl, -1, NULL, &err));
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, the_workload_may_grow_after_the_queues_exist)
{
    struct world w;
    int ms[] = {100};
    world_init(&w, 1, 1, ms, 1);
    struct hrm_nqs *q = nqs(&w, 0, NULL);
    run(q, &w.f, 0, 0, -1, 0);
    /* the agent learns more tasks: a job of one task each, appended */
    for (int k = 0; k < 40; k++) {
        fx_job(w.wl, "more", "u", 0);
        fx_stage(w.wl, "s", NULL, 0);
        fx_tasks(w.wl, 1, 1000, GIB, 0, 0, 10 * MS);
    }
    struct hrm_msg m = {.type = HRM_MSG_RUN,
                        .from = SCHED,
                        .job = 40,
                        .task = 40,
                        .node = 0,
                        .attempt = -1,
                        .value = SCHED};
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &m), 0);
    struct hrm_nqs_queue_info info;
    hrm_nqs_queue_info(q, 0, &info);
    cr_assert_eq(info.queued, 1);
    cr_assert_eq(info.queued_est_us, 10 * MS, "the new task's estimate is read");
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, cancel_removes_a_queued_task_and_the_freed_turn_goes_to_the_next)
{
    struct world w;
    int ms[] = {100, 100, 100};
    world_init(&w, 1, 1, ms, 3);
    struct hrm_nqs *q = nqs(&w, 0, NULL);
    run(q, &w.f, 0, 0, -1, 0);
    run(q, &w.f, 1, 0, -1, 0);
    run(q, &w.f, 2, 0, -1, 0);
    struct hrm_msg launch0 = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0)->m;
    fenv_clear(&w.f);
    cr_assert_eq(hrm_nqs_cancel(q, &w.f.env, 1), 1, "task 1 was queued");
    cr_assert_eq(hrm_nqs_cancel(q, &w.f.env, 1), 0, "and is gone");
    cr_assert_eq(hrm_nqs_cancel(q, &w.f.env, 0), 0, "running: the driver stops it");
    cr_assert_eq(hrm_nqs_cancel(q, &w.f.env, 99), 0, "unknown");
    cr_assert_eq(w.f.nsent, 0, "no TASK_END for a cancelled task, nothing starts");
    struct hrm_nqs_queue_info info;
    hrm_nqs_queue_info(q, 0, &info);
    cr_assert_eq(info.queued, 1);
    cr_assert_eq(info.queued_est_us, 100 * MS);
    end_task(q, &w.f, &launch0);
    const struct fenv_sent *l = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0);
    cr_assert_not_null(l);
    cr_assert_eq(l->m.task, 2, "the slot goes to the next queued task");
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_TASK_END), 1, "only task 0's end");
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, cancel_of_a_task_parked_at_a_target_withdraws_the_migration)
{
    struct world w;
    int ms[] = {100, 100};
    world_init(&w, 6, 1, ms, 2);
    struct hrm_nqs_config cfg = {.balance = true, .hw_us = 10 * MS, .lw_us = 0};
    struct hrm_nqs *q = nqs(&w, 0, &cfg);
    run(q, &w.f, 0, 0, -1, 0);
    fenv_clear(&w.f);
    run(q, &w.f, 1, 0, -1, 0);
    const struct fenv_sent *req = fenv_find(&w.f, HRM_MSG_MIGRATE_REQUEST, 0);
    cr_assert_not_null(req, "task 1 waits 100 ms > hw: asks to move");
    cr_assert_eq(req->m.task, 1);
    struct hrm_msg match = {.type = HRM_MSG_MIGRATE_MATCH,
                            .from = HRM_ADDR_NEGOTIATOR,
                            .job = 0,
                            .task = 1,
                            .node = 5,
                            .status = 0};
    fenv_clear(&w.f);
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &match), 0);
    cr_assert_not_null(fenv_find(&w.f, HRM_MSG_MIGRATE_OFFER, 0));
    struct hrm_msg parked = {
        .type = HRM_MSG_MIGRATE_PARKED, .from = hrm_addr_node(5), .job = 0, .task = 1, .node = 5};
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &parked), 0);
    fenv_clear(&w.f);
    cr_assert_eq(hrm_nqs_cancel(q, &w.f.env, 1), 1);
    const struct fenv_sent *c = fenv_find(&w.f, HRM_MSG_MIGRATE_CANCEL, 0);
    cr_assert_not_null(c, "the target drops its park");
    cr_assert_eq(c->to, hrm_addr_node(5));
    cr_assert_eq(c->m.task, 1);
    /* a pull that crosses the cancel finds nothing to hand over */
    struct hrm_msg pull = {
        .type = HRM_MSG_MIGRATE_PULL, .from = hrm_addr_node(5), .job = 0, .task = 1, .node = 5};
    fenv_clear(&w.f);
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &pull), 0);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_RUN), 0);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_MIGRATE_CANCEL), 1);
    hrm_nqs_free(q);
    world_fini(&w);
}

Test(nqs, idle_means_nothing_queued_running_held_or_parked)
{
    struct world w;
    int ms[] = {100, 100};
    world_init(&w, 2, 1, ms, 2);
    struct hrm_nqs_config cfg = {.balance = true, .hw_us = 500 * MS, .lw_us = 0};
    struct hrm_nqs *q = nqs(&w, 0, &cfg);
    cr_assert(hrm_nqs_idle(q));
    hold(q, &w.f, 3, 1, GIB);
    cr_assert_not(hrm_nqs_idle(q), "a slot is held");
    struct hrm_msg del = {.type = HRM_MSG_DEL, .from = SCHED, .attempt = 3};
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &del), 0);
    cr_assert(hrm_nqs_idle(q));
    fenv_clear(&w.f);
    run(q, &w.f, 0, 0, -1, 0);
    struct hrm_msg launch = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0)->m;
    cr_assert_not(hrm_nqs_idle(q), "running");
    run(q, &w.f, 1, 0, -1, 0);
    cr_assert_eq(hrm_nqs_cancel(q, &w.f.env, 1), 1);
    cr_assert_not(hrm_nqs_idle(q), "still running");
    end_task(q, &w.f, &launch);
    cr_assert(hrm_nqs_idle(q));
    /* a migration request parked here (busy with task 0, wait within hw) */
    fenv_clear(&w.f);
    run(q, &w.f, 0, 0, -1, 0);
    struct hrm_msg offer = {.type = HRM_MSG_MIGRATE_OFFER,
                            .from = hrm_addr_node(1),
                            .job = 0,
                            .task = 1,
                            .node = 1,
                            .status = 0,
                            .value = 900 * MS};
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &offer), 0);
    cr_assert_not_null(fenv_find(&w.f, HRM_MSG_MIGRATE_PARKED, 0));
    launch = fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0)->m;
    struct hrm_msg cancel = {
        .type = HRM_MSG_MIGRATE_CANCEL, .from = hrm_addr_node(1), .job = 0, .task = 1, .node = 1};
    end_task(q, &w.f, &launch); /* the park is pulled: a slot held for it */
    cr_assert_not(hrm_nqs_idle(q), "a slot held for the pulled task");
    cr_assert_eq(hrm_nqs_on_msg(q, &w.f.env, &cancel), 0);
    cr_assert(hrm_nqs_idle(q));
    hrm_nqs_free(q);
    world_fini(&w);
}

/* ---- execution queues from their text form (hrm master --exec-queue) ---- */

Test(nqs, queue_text_form_sets_each_field)
{
    struct hrm_nqs_queue_cfg q;
    struct hrm_error err;
    cr_assert_eq(hrm_dsetup_queue_parse("batch,priority=-3,max=2,cpus=500m,mem=1G", &q, &err), 0,
                 "%s", err.text);
    cr_assert_str_eq(q.name, "batch");
    cr_assert_eq(q.priority, -3);
    cr_assert_eq(q.max_running, 2);
    cr_assert_eq(q.limit.v[HRM_DIM_CPU], 500);
    cr_assert_eq(q.limit.v[HRM_DIM_MEM], (int64_t)1 << 30);
    cr_assert_eq(hrm_dsetup_queue_parse("plain", &q, &err), 0);
    cr_assert_str_eq(q.name, "plain");
    cr_assert(q.priority == 0 && q.max_running == 0 && q.limit.v[HRM_DIM_CPU] == 0 &&
              q.limit.v[HRM_DIM_MEM] == 0);
}

Test(nqs, queue_text_form_names_what_is_wrong)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"", "a name of 1.."},
        {",priority=1", "a name of 1.."},
        {"q,priority", "is not key=value"},
        {"q,speed=2", "unknown key 'speed'"},
        {"q,priority=high", "priority=high"},
        {"q,max=-1", "max=-1"},
        {"q,cpus=lots", "cpus=lots"},
        {"q,mem=4X", "mem=4X"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct hrm_nqs_queue_cfg q;
        struct hrm_error err = {0};
        cr_assert_eq(hrm_dsetup_queue_parse(bad[i].text, &q, &err), -HRM_ESPEC, "'%s' accepted",
                     bad[i].text);
        cr_assert(strstr(err.text, bad[i].says), "'%s': '%s' does not say '%s'", bad[i].text,
                  err.text, bad[i].says);
    }
}
