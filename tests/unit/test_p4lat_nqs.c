/* Node queue system: a run whose hold expired before it came (a slow control plane) waits first in line, not behind what queued since. */
#include <criterion/criterion.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/nqs.h"
#include "hrm/state.h"

#define MS 1000ll
#define SCHED hrm_addr_sched(0)
#define NQS_COOKIE 1 /* the expiry timer's cookie (the role's own; any value it armed) */

struct world {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct fenv f;
    struct hrm_nqs *q;
    struct hrm_msg running; /* the latest launch (one core: the task running) */
};

/* One node of one core; jobs of one 100 ms task each (job k holds task k); holds live 20 ms. */
static void world_init(struct world *w, int ntasks)
{
    w->c = fx_cluster(1, 1, 1, 16 * GIB, 0, 0, NULL);
    w->wl = hrm_workload_new();
    for (int i = 0; i < ntasks; i++) {
        fx_job(w->wl, "j", "u", 0);
        fx_stage(w->wl, "s", NULL, 0);
        fx_tasks(w->wl, 1, 1000, GIB, 0, 0, 100 * MS);
    }
    fenv_init(&w->f);
    struct hrm_nqs_config cfg = {.hold_ttl_us = 20 * MS};
    struct hrm_error err = {{0}};
    w->q = hrm_nqs_new(w->c, w->wl, 0, &cfg, &err);
    cr_assert_not_null(w->q, "%s", err.text);
}

static void world_fini(struct world *w)
{
    hrm_nqs_free(w->q);
    hrm_workload_free(w->wl);
    hrm_cluster_free(w->c);
}

static void note_launch(struct world *w)
{
    for (int i = 0; i < w->f.nsent; i++)
        if (w->f.sent[i].m.type == HRM_MSG_TASK_LAUNCH)
            w->running = w->f.sent[i].m;
}

static void deliver(struct world *w, const struct hrm_msg *m)
{
    cr_assert_eq(hrm_nqs_on_msg(w->q, &w->f.env, m), 0);
    note_launch(w);
}

static void run(struct world *w, int task, int hold, int flags)
{
    struct hrm_msg m = {.type = HRM_MSG_RUN, .from = SCHED, .job = task, .task = task,
                        .node = 0, .attempt = hold, .status = (uint16_t)flags, .value = SCHED};
    deliver(w, &m);
}

/* The task the executor was last told to launch, or -1. */
static int launched(const struct world *w)
{
    int task = -1;
    for (int i = 0; i < w->f.nsent; i++)
        if (w->f.sent[i].m.type == HRM_MSG_TASK_LAUNCH)
            task = w->f.sent[i].m.task;
    return task;
}

static void end_last_launch(struct world *w)
{
    const struct hrm_msg *l = &w->running;
    cr_assert_eq(l->type, HRM_MSG_TASK_LAUNCH);
    struct hrm_msg end = {.type = HRM_MSG_TASK_END, .from = HRM_ADDR_EXEC, .job = l->job,
                          .task = l->task, .node = l->node, .attempt = l->attempt,
                          .gpu_mask = l->gpu_mask, .status = 0};
    fenv_clear(&w->f);
    deliver(w, &end);
}

static void expire(struct world *w, int64_t now)
{
    w->f.now = now;
    fenv_clear(&w->f);
    cr_assert_eq(hrm_nqs_on_timer(w->q, &w->f.env, NQS_COOKIE), 0);
    note_launch(w);
}

/* DHRM: a probe's hold expires; the slot goes to a task queued meanwhile; the run the
 * scheduler placed on the hold comes late.  It runs next, before a task queued after the
 * hold was granted. */
Test(p4lat_nqs, late_run_on_an_expired_probe_hold_runs_next)
{
    struct world w;
    world_init(&w, 3);
    struct hrm_msg h = {.type = HRM_MSG_HOLD, .from = SCHED, .job = -1, .task = -1, .node = 0,
                        .attempt = 7, .status = 1};
    hrm_nqs_hold_size(&h, 1000, GIB);
    deliver(&w, &h);
    const struct fenv_sent *r = fenv_find(&w.f, HRM_MSG_HOLD_REPLY, 0);
    cr_assert(r && r->m.status == 1, "the hold is granted the free core");
    w.f.now = 5 * MS;
    run(&w, 1, -1, 0); /* another scheduler's task: behind the hold */
    cr_assert_eq(launched(&w), -1);
    expire(&w, 20 * MS);
    cr_assert_eq(launched(&w), 1, "at expiry the core goes to the queued task");
    w.f.now = 25 * MS;
    run(&w, 2, -1, 0); /* queued after the hold was granted */
    fenv_clear(&w.f);
    w.f.now = 30 * MS;
    run(&w, 0, 7, HRM_RUN_LAST); /* the run on hold 7, late */
    cr_assert_eq(launched(&w), -1, "the core is busy: it queues");
    cr_assert_eq(hrm_nqs_stats(w.q)->late_runs, 1);
    end_last_launch(&w);
    cr_assert_eq(launched(&w), 0, "the late run goes first, not task 2 queued after its hold");
    end_last_launch(&w);
    cr_assert_eq(launched(&w), 2);
    world_fini(&w);
}

/* Sparrow: a reservation reached the head and asked for a task; the answer outlives the bind
 * hold, whose core went to the next reservation.  The late run is first in line, before the
 * reservations and tasks queued since; a second late run for the same token is not. */
Test(p4lat_nqs, late_run_on_an_expired_bind_hold_runs_next)
{
    struct world w;
    world_init(&w, 4);
    struct hrm_msg resv = {.type = HRM_MSG_RESERVE, .from = SCHED, .job = 0, .task = -1, .node = 0};
    deliver(&w, &resv);
    const struct fenv_sent *g = fenv_find(&w.f, HRM_MSG_GET_TASK, 0);
    cr_assert_not_null(g, "the reservation finds the core free");
    int32_t token = g->m.attempt;
    resv.job = 1;
    deliver(&w, &resv); /* another job's reservation waits */
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_GET_TASK), 1);
    expire(&w, 20 * MS);
    cr_assert_not_null(fenv_find(&w.f, HRM_MSG_GET_TASK, 0),
                       "at expiry the core goes to the next reservation");
    int32_t token2 = fenv_find(&w.f, HRM_MSG_GET_TASK, 0)->m.attempt;
    w.f.now = 22 * MS;
    run(&w, 3, -1, 0); /* a task queued after both reservations */
    fenv_clear(&w.f);
    run(&w, 1, token2, HRM_RUN_BIND); /* the second answer, in time: it runs */
    cr_assert_eq(launched(&w), 1);
    w.f.now = 30 * MS;
    fenv_clear(&w.f);
    run(&w, 0, token, HRM_RUN_BIND); /* the first answer, late */
    cr_assert_eq(launched(&w), -1);
    cr_assert_eq(hrm_nqs_stats(w.q)->late_runs, 1);
    run(&w, 2, token, HRM_RUN_BIND); /* a duplicate on the same token: the tail */
    cr_assert_eq(hrm_nqs_stats(w.q)->late_runs, 1);
    end_last_launch(&w);
    cr_assert_eq(launched(&w), 0, "the late run goes first");
    end_last_launch(&w);
    cr_assert_eq(launched(&w), 3, "then the queue in its order");
    end_last_launch(&w);
    cr_assert_eq(launched(&w), 2);
    world_fini(&w);
}
