/* The hrm policy's pass lists the ready tasks not yet queued at a unit without walking the
 * ones that are: with 20,000 tasks queued at units, a pass after a task ends visits a few. */
#include <criterion/criterion.h>

#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/central.h"
#include "policy/hrm_private.h"

struct world {
    int64_t now, timer_at;
    bool armed;
    int32_t last_task, last_node, last_attempt, launches;
};

static int64_t env_now(struct hrm_env *env)
{
    return ((struct world *)env->ctx)->now;
}

static void env_timer(struct hrm_env *env, int64_t at, uint64_t cookie)
{
    struct world *w = env->ctx;
    (void)cookie;
    w->armed = true;
    w->timer_at = at;
}

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *m)
{
    struct world *w = env->ctx;
    (void)to;
    if (m->type != HRM_MSG_TASK_LAUNCH)
        return;
    w->launches++;
    w->last_task = m->task;
    w->last_node = m->node;
    w->last_attempt = m->attempt;
}

static void pass(struct hrm_central *c, struct hrm_env *env, struct world *w)
{
    cr_assert(w->armed);
    w->armed = false;
    w->now = w->timer_at;
    cr_assert_eq(hrm_central_on_timer(c, env, 1), 0);
}

Test(queued_hrm, pass_walks_only_unqueued_tasks)
{
    enum { NTASKS = 20000 };
    struct hrm_cluster *c = fx_cluster(1, 2, 4, 32 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "big", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, NTASKS, 1000, GIB, 0, 0, 1000);
    struct hrm_error err;
    struct hrm_params params = {0};
    struct hrm_policy *p = hrm_policy_new("hrm", &params, 1, &err);
    cr_assert(p, "%s", err.text);
    struct hrm_central *central = hrm_central_new(c, wl, p, NULL);
    struct world w = {0};
    struct hrm_env env = {.now_us = env_now, .send = env_send, .timer = env_timer, .ctx = &w};
    struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = 0};
    cr_assert_eq(hrm_central_on_msg(central, &env, &sub), 0);
    pass(central, &env, &w);
    cr_assert_eq(w.launches, 8, "two nodes of 4 cores: 8 starts");
    const struct hrmp *hp = p->priv;
    int64_t first = hp->listed_walked;
    cr_assert_geq(first, NTASKS, "the first pass lists every task");
    /* Ten task ends, each followed by a pass that starts the next queued task. */
    for (int i = 0; i < 10; i++) {
        struct hrm_msg end = {.type = HRM_MSG_TASK_END, .status = HRM_OUTCOME_DONE,
                              .job = 0, .task = w.last_task, .node = w.last_node,
                              .attempt = w.last_attempt};
        w.now += 1000;
        cr_assert_eq(hrm_central_on_msg(central, &env, &end), 0);
        int before = w.launches;
        pass(central, &env, &w);
        cr_assert_eq(w.launches, before + 1, "the freed core takes the next task");
    }
    /* Every task is queued at a unit or running: the passes listed nothing, and walked no
     * queued task to find that out (a full walk is 20,000 tasks a pass). */
    cr_assert_leq(hp->listed_walked - first, 10, "the passes walked %lld queued tasks",
                  (long long)(hp->listed_walked - first));
    hrm_central_free(central);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
