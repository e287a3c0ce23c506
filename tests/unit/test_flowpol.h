/* Helpers of the P1 policy tests: small clusters, workloads, states and policies. */
#ifndef HRM_TEST_FLOWPOL_H
#define HRM_TEST_FLOWPOL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/policy.h"
#include "hrm/rng.h"
#include "policy/flowpol_private.h"

/* ---- a small world built in code ---- */

struct world {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_state *s;
    struct hrm_policy *p;
    struct hrm_sched_ctx ctx;
};

static inline void w_init_net(struct world *w, const struct hrm_netcfg *net)
{
    memset(w, 0, sizeof(*w));
    w->c = hrm_cluster_new(net);
    w->wl = hrm_workload_new();
}

static inline void w_init(struct world *w)
{
    w_init_net(w, NULL); /* D 160 MB/s, B_r = B_s = 125 MB/s */
}

static inline int32_t w_rack(struct world *w)
{
    char name[16];
    snprintf(name, sizeof(name), "r%d", w->c->nracks);
    int r = hrm_cluster_add_rack(w->c, name, NULL);
    cr_assert_geq(r, 0);
    return r;
}

static inline int32_t w_node_disk(struct world *w, int32_t rack, int32_t gpus, int64_t gpu_mem,
                                  double disk_bw)
{
    char name[16];
    snprintf(name, sizeof(name), "n%d", w->c->nnodes);
    struct hrm_node_desc d = {.name = name,
                              .rack = rack,
                              .cores = 16,
                              .mem = 64 * GIB,
                              .gpus = gpus,
                              .gpu_mem = gpu_mem,
                              .disk_bw = disk_bw};
    struct hrm_error err = {{0}};
    int id = hrm_cluster_add_node(w->c, &d, &err);
    cr_assert_geq(id, 0, "%s", err.text);
    return id;
}

static inline int32_t w_node(struct world *w, int32_t rack, int32_t gpus, int64_t gpu_mem)
{
    return w_node_disk(w, rack, gpus, gpu_mem, 0);
}

static inline int32_t w_job(struct world *w)
{
    char name[16];
    snprintf(name, sizeof(name), "j%d", w->wl->njobs);
    int j = fx_job(w->wl, name, "u", 0);
    fx_stage(w->wl, "s", NULL, 0);
    return j;
}

/* One task of one GPU (1 core, 1 GiB of host memory). */
static inline int32_t w_task(struct world *w, int64_t gpu_mem)
{
    return fx_tasks(w->wl, 1, 1000, GIB, 1, gpu_mem, 1000000);
}

static inline void w_block(struct world *w, int64_t size, const int32_t *replicas, int32_t n)
{
    struct hrm_error err = {{0}};
    cr_assert_geq(hrm_workload_add_block(w->wl, size, replicas, n, &err), 0, "%s", err.text);
}

/* A task with one block of size on one node. */
static inline int32_t w_task_on(struct world *w, int64_t gpu_mem, int64_t size, int32_t node)
{
    int32_t t = w_task(w, gpu_mem);
    w_block(w, size, &node, 1);
    return t;
}

static inline void w_event(struct world *w, enum hrm_event_type type, int32_t job, int32_t task,
                           int32_t node)
{
    struct hrm_event ev = {
        .type = type, .now_us = w->ctx.now_us, .job = job, .task = task, .node = node};
    if (w->p && w->p->ops->on_event)
        w->p->ops->on_event(w->p, w->s, &ev);
}

static inline void w_begin(struct world *w, const char *policy, const char *const *params, size_t n)
{
    struct hrm_error err = {{0}};
    w->s = hrm_state_new(w->c, w->wl);
    w->ctx.state = w->s;
    if (policy) {
        struct hrm_params prm = {params, n};
        w->p = hrm_policy_new(policy, &prm, 1, &err);
        cr_assert_not_null(w->p, "%s", err.text);
    }
}

static inline void w_submit(struct world *w, int32_t job)
{
    cr_assert_geq(hrm_state_submit_job(w->s, job, w->ctx.now_us), 0);
    w_event(w, HRM_EV_JOB_SUBMIT, job, -1, -1);
}

/* A task already running (placed by an earlier pass). */
static inline void w_start(struct world *w, int32_t task, int32_t node)
{
    cr_assert_eq(hrm_state_start(w->s, task, node, HRM_GPUS_ANY, w->ctx.now_us), 0);
    w_event(w, HRM_EV_TASK_START, w->wl->tasks[task].job, task, node);
}

static inline void w_stop(struct world *w, int32_t task, enum hrm_task_outcome outcome)
{
    int32_t node = w->s->tasks[task].node;
    cr_assert_geq(hrm_state_stop(w->s, task, outcome, w->ctx.now_us), 0);
    struct hrm_event ev = {.type = HRM_EV_TASK_STOP,
                           .now_us = w->ctx.now_us,
                           .job = w->wl->tasks[task].job,
                           .task = task,
                           .node = node,
                           .outcome = outcome};
    if (w->p->ops->on_event)
        w->p->ops->on_event(w->p, w->s, &ev);
}

/* One pass; checks every start against GPU memory.  Returns the decisions. */
static inline size_t w_decide(struct world *w)
{
    w->ctx.ndecisions = 0;
    cr_assert_eq(w->p->ops->decide(w->p, &w->ctx), 0);
    for (size_t i = 0; i < w->ctx.ndecisions; i++) {
        const struct hrm_decision *d = &w->ctx.decisions[i];
        if (d->kind != HRM_DECIDE_START)
            continue;
        const struct hrm_task *t = &w->wl->tasks[d->task];
        const struct hrm_node *n = &w->c->nodes[d->node];
        for (int32_t g = 0; g < n->gpus; g++)
            if (d->gpu_mask & (1u << g))
                cr_assert_geq(w->c->units[n->unit_first + g].gpu_mem, p1_task_gpu_need(t),
                              "task %d on a GPU too small", d->task);
    }
    w->ctx.now_us += 1000;
    return w->ctx.ndecisions;
}

static inline size_t count_kind(const struct world *w, enum hrm_decision_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < w->ctx.ndecisions; i++)
        n += w->ctx.decisions[i].kind == kind;
    return n;
}

static inline bool preempted(const struct world *w, int32_t task)
{
    for (size_t i = 0; i < w->ctx.ndecisions; i++)
        if (w->ctx.decisions[i].kind == HRM_DECIDE_PREEMPT && w->ctx.decisions[i].task == task)
            return true;
    return false;
}

static inline int32_t running_of(const struct world *w, int32_t job)
{
    return (int32_t)w->s->jobs[job].alloc.v[HRM_DIM_GPU];
}

/* Some running task of job (the lowest id), which must exist. */
static inline int32_t running_task(const struct world *w, int32_t job)
{
    const struct hrm_job *j = &w->wl->jobs[job];
    for (int32_t t = j->task_first; t < j->task_first + j->ntasks; t++)
        if (w->s->tasks[t].status == HRM_TASK_RUNNING)
            return t;
    cr_assert_fail("job %d runs nothing", job);
    return -1;
}

static inline void w_fini(struct world *w)
{
    hrm_free(w->ctx.decisions);
    hrm_policy_free(w->p);
    hrm_state_free(w->s);
    hrm_workload_free(w->wl);
    hrm_cluster_free(w->c);
}

static inline struct flownet *net_new(bool unscheduled, bool aggregate, bool incremental)
{
    struct flownet_cfg cfg = {.alpha1 = P1_ALPHA1_DEFAULT,
                              .alpha2 = P1_ALPHA2_DEFAULT,
                              .alpha3 = P1_ALPHA3_DEFAULT,
                              .unscheduled = unscheduled,
                              .aggregate = aggregate,
                              .incremental = incremental};
    return flownet_new(&cfg);
}

static inline void net_run(struct flownet *net, const struct hrm_state *s, struct p1_shares *sh)
{
    struct hrm_error err = {{0}};
    p1_shares_compute(sh, s);
    cr_assert_eq(flownet_run(net, s, sh, 0, false, &err), 0, "%s", err.text);
}

#endif
