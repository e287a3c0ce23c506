/* P0 policy `hrm` (units, batch/stream queues, GPU stacking, simulaterun) and its baselines.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "hrm/alloc.h"
#include "policy/hrm_private.h"

#define NIL (-1)

static const char *const known_keys[] = {"lend",      "flex", "stream_aware", "fair", "stack",
                                         "partition", NULL};

static int read_cfg(const char *name, const struct hrm_params *params, struct hrmp_cfg *cfg,
                    struct hrm_error *err)
{
    int64_t stack = cfg->stack;
    int rc = hrm_params_check(params, known_keys, name, err);
    if (!rc)
        rc = hrm_params_bool(params, "lend", &cfg->lend, err);
    if (!rc)
        rc = hrm_params_bool(params, "flex", &cfg->flex, err);
    if (!rc)
        rc = hrm_params_bool(params, "stream_aware", &cfg->stream_aware, err);
    if (!rc)
        rc = hrm_params_bool(params, "fair", &cfg->fair, err);
    if (!rc)
        rc = hrm_params_int(params, "stack", &stack, err);
    if (!rc)
        rc = hrm_params_double(params, "partition", &cfg->partition, err);
    if (rc)
        return rc;
    if (stack < 0 || stack > 1000)
        return hrm_errorf(err, -HRM_ESPEC, "policy '%s': parameter 'stack': must be 0..1000", name);
    if (!(cfg->partition >= 0 && cfg->partition < 1))
        return hrm_errorf(err, -HRM_ESPEC, "policy '%s': parameter 'partition': must be in [0, 1)",
                          name);
    cfg->stack = (int32_t)stack;
    return 0;
}

/* Units by core counts alone, for a node with more cores than an RU can
 * name (HRM_RU_MAX_CORES): same capacities, no core lists, no re-binding. */
static void bind_counts(const struct hrm_cluster *c, int32_t n, bool lend, struct hrm_ru *ru)
{
    const struct hrm_node *node = &c->nodes[n];
    int32_t left = node->cores;
    for (int32_t g = 0; g <= node->gpus; g++) {
        const struct hrm_unit *un = &c->units[node->unit_first + g];
        bool gpu = g < node->gpus;
        ru[g] = (struct hrm_ru){.node = n,
                                .gpu = gpu ? g : -1,
                                .type = !gpu   ? HRM_RU_CPU
                                        : lend ? HRM_RU_GPU_LEND
                                               : HRM_RU_GPU,
                                .ncores = gpu ? un->core_count : left,
                                .gmem = gpu ? un->gpu_mem : 0};
        left -= gpu ? un->core_count : 0;
    }
}

/* Builds the units lazily at the first pass: init does not see the cluster. */
static void build(struct hrmp *p, const struct hrm_state *s)
{
    const struct hrm_cluster *c = s->cluster;
    p->c = c;
    p->nnodes = c->nnodes;
    p->ntasks = s->wl->ntasks;
    p->ru_first = hrm_alloc((size_t)(c->nnodes + 1) * sizeof(*p->ru_first));
    p->nru = 0;
    for (int32_t n = 0; n < c->nnodes; n++) {
        p->ru_first[n] = p->nru;
        p->nru += c->nodes[n].gpus + 1;
    }
    p->ru_first[c->nnodes] = p->nru;
    p->ru = hrm_calloc((size_t)p->nru, sizeof(*p->ru));
    p->base_want = hrm_calloc((size_t)p->nru, sizeof(*p->base_want));
    p->q = hrm_alloc((size_t)p->nru * HRMP_NQUEUES * sizeof(*p->q));
    p->solo = hrm_calloc((size_t)p->nru, sizeof(*p->solo));
    p->side = hrm_calloc((size_t)c->nnodes, sizeof(*p->side));
    /* Static partitions: the first share of the nodes serves stream jobs only. */
    int32_t nstream = (int32_t)ceil(p->cfg.partition * c->nnodes);
    for (int32_t n = 0; n < c->nnodes; n++) {
        if (p->cfg.partition > 0)
            p->side[n] = n < nstream ? HRM_RU_STREAM_ONLY : HRM_RU_BATCH_ONLY;
        struct hrm_ru *ru = &p->ru[p->ru_first[n]];
        if (hrm_ru_bind_node(c, n, p->cfg.lend, ru, NULL) != 0)
            bind_counts(c, n, p->cfg.lend, ru);
        for (int32_t g = 0; g <= c->nodes[n].gpus; g++) {
            ru[g].max_stack = p->cfg.stack;
            p->base_want[p->ru_first[n] + g] = ru[g].ncores;
        }
    }
    for (int32_t i = 0; i < p->nru * HRMP_NQUEUES; i++)
        p->q[i] = (struct hrmp_fifo){NIL, NIL, 0};
    p->task_ru = hrm_alloc((size_t)(p->ntasks ? p->ntasks : 1) * sizeof(*p->task_ru));
    p->qnext = hrm_alloc((size_t)(p->ntasks ? p->ntasks : 1) * sizeof(*p->qnext));
    p->running = hrm_calloc((size_t)(p->ntasks ? p->ntasks : 1), sizeof(*p->running));
    p->job_gpu = hrm_calloc((size_t)(s->wl->njobs ? s->wl->njobs : 1), sizeof(*p->job_gpu));
    p->job_queued = hrm_calloc((size_t)(s->wl->njobs ? s->wl->njobs : 1), sizeof(*p->job_queued));
    p->task_held = hrm_alloc((size_t)(p->ntasks ? p->ntasks : 1) * sizeof(*p->task_held));
    p->relaxed = hrm_calloc((size_t)(p->ntasks ? p->ntasks : 1), sizeof(*p->relaxed));
    p->free_held = NIL;
    for (int32_t t = 0; t < p->ntasks; t++)
        p->task_ru[t] = p->qnext[t] = p->task_held[t] = NIL;
    p->njobs = s->wl->njobs;
    p->cap_tasks = (size_t)(p->ntasks ? p->ntasks : 1);
    p->cap_jobs = (size_t)(p->njobs ? p->njobs : 1);
    hrmp_frag_build(p, s);
    hrmp_choices_build(p);
}

/* The workload gained jobs and tasks (hrm_central_grow): the per-task and per-job arrays
 * cover them, as build would have made them, and the kinds count them. */
static void hrm_on_grow(struct hrm_policy *policy, const struct hrm_state *s)
{
    struct hrmp *p = policy->priv;
    if (!p->ru)
        return; /* built at the first event or pass, over the whole workload then */
    int32_t from = p->ntasks, to = s->wl->ntasks;
    if (to > from) {
        size_t cap = p->cap_tasks; /* each array grows from the same capacity to the same */
        HRM_GROW(p->task_ru, cap, (size_t)to);
        cap = p->cap_tasks;
        HRM_GROW(p->qnext, cap, (size_t)to);
        cap = p->cap_tasks;
        HRM_GROW(p->running, cap, (size_t)to);
        cap = p->cap_tasks;
        HRM_GROW(p->task_held, cap, (size_t)to);
        HRM_GROW(p->relaxed, p->cap_tasks, (size_t)to);
        for (int32_t t = from; t < to; t++) {
            p->task_ru[t] = p->qnext[t] = p->task_held[t] = NIL;
            p->running[t] = p->relaxed[t] = 0;
        }
        p->ntasks = to;
        hrmp_frag_grow(p, s, from);
        hrmp_choices_reset(p); /* the kinds' weights, which the fragmentation measure reads */
    }
    if (s->wl->njobs > p->njobs) {
        size_t cap = p->cap_jobs, added = (size_t)(s->wl->njobs - p->njobs);
        HRM_GROW(p->job_gpu, cap, (size_t)s->wl->njobs);
        HRM_GROW(p->job_queued, p->cap_jobs, (size_t)s->wl->njobs);
        memset(p->job_gpu + p->njobs, 0, added * sizeof(*p->job_gpu));
        memset(p->job_queued + p->njobs, 0, added * sizeof(*p->job_queued));
        p->njobs = s->wl->njobs;
    }
}

static int init_variant(struct hrm_policy *policy, const char *name, struct hrmp_cfg cfg,
                        const struct hrm_params *params, struct hrm_error *err)
{
    int rc = read_cfg(name, params, &cfg, err);
    if (rc)
        return rc;
    struct hrmp *p = hrm_calloc(1, sizeof(*p));
    p->cfg = cfg;
    policy->priv = p;
    return 0;
}

static const struct hrmp_cfg hrm_defaults = {
    .lend = true, .flex = true, .stream_aware = true, .fair = true, .stack = 0, .partition = 0};

static int hrm_init(struct hrm_policy *policy, const struct hrm_params *params,
                    struct hrm_error *err)
{
    return init_variant(policy, "hrm", hrm_defaults, params, err);
}

static int exclusive_init(struct hrm_policy *policy, const struct hrm_params *params,
                          struct hrm_error *err)
{
    struct hrmp_cfg cfg = hrm_defaults;
    cfg.stack = 1;
    return init_variant(policy, "gpu-exclusive", cfg, params, err);
}

static int static_init(struct hrm_policy *policy, const struct hrm_params *params,
                       struct hrm_error *err)
{
    struct hrmp_cfg cfg = hrm_defaults;
    cfg.lend = cfg.flex = false;
    cfg.stack = 1;
    cfg.partition = 0.25;
    return init_variant(policy, "hrm-static", cfg, params, err);
}

static int unaware_init(struct hrm_policy *policy, const struct hrm_params *params,
                        struct hrm_error *err)
{
    struct hrmp_cfg cfg = hrm_defaults;
    cfg.stream_aware = false;
    return init_variant(policy, "hrm-unaware", cfg, params, err);
}

static void hrm_fini(struct hrm_policy *policy)
{
    struct hrmp *p = policy->priv;
    if (!p)
        return;
    hrm_free(p->ru);
    hrm_free(p->ru_first);
    hrm_free(p->base_want);
    hrm_free(p->q);
    hrm_free(p->solo);
    hrm_free(p->side);
    hrm_free(p->task_ru);
    hrm_free(p->qnext);
    hrm_free(p->running);
    hrm_free(p->job_gpu);
    hrm_free(p->job_queued);
    hrm_free(p->task_held);
    hrm_free(p->relaxed);
    hrm_free(p->held);
    hrm_wait_table_fini(&p->wt);
    hrm_free(p->todo);
    hrmp_frag_fini(p);
    hrmp_choices_fini(p);
    hrm_free(p);
    policy->priv = NULL;
}

/* ---- bookkeeping ---- */

static bool gpu_task(const struct hrm_state *s, int32_t t)
{
    return s->wl->tasks[t].req.v[HRM_DIM_GPU] > 0;
}

static void enqueue(struct hrmp *p, const struct hrm_state *s, int32_t t, int32_t u)
{
    struct hrmp_fifo *f = &p->q[u * HRMP_NQUEUES + hrmp_queue_of(p, s, t)];
    p->qnext[t] = NIL;
    if (f->tail != NIL)
        p->qnext[f->tail] = t;
    else
        f->head = t;
    f->tail = t;
    f->n++;
    hrmp_node_changed(p, p->ru[u].node); /* its queue is longer */
    p->task_ru[t] = u;
    p->job_queued[s->wl->tasks[t].job]++;
    if (gpu_task(s, t))
        p->job_gpu[s->wl->tasks[t].job]++;
}

static int32_t dequeue(struct hrmp *p, const struct hrm_state *s, struct hrmp_fifo *f)
{
    int32_t t = f->head;
    hrmp_node_changed(p, p->ru[(f - p->q) / HRMP_NQUEUES].node);
    p->job_queued[s->wl->tasks[t].job]--;
    f->head = p->qnext[t];
    if (f->head == NIL)
        f->tail = NIL;
    f->n--;
    p->qnext[t] = NIL;
    return t;
}

/* A task leaves a unit it ran on (end, kill, lost node). */
static void leave(struct hrmp *p, const struct hrm_state *s, int32_t t)
{
    int32_t u = p->task_ru[t];
    hrmp_release(p, s, t);
    p->running[t] = 0;
    p->task_ru[t] = NIL;
    if (gpu_task(s, t))
        p->job_gpu[s->wl->tasks[t].job]--;
    if (hrmp_rules_of(p, t).flex && p->ru[u].gpu >= 0)
        hrmp_rebind(p, p->ru[u].node);
}

static void node_down(struct hrmp *p, const struct hrm_state *s, int32_t node)
{
    /* The state has requeued the node's tasks: forget where they were. */
    for (int32_t u = p->ru_first[node]; u < p->ru_first[node + 1]; u++) {
        for (int q = 0; q < HRMP_NQUEUES; q++) {
            struct hrmp_fifo *f = &p->q[u * HRMP_NQUEUES + q];
            while (f->head != NIL) {
                int32_t t = dequeue(p, s, f);
                p->task_ru[t] = NIL;
                if (gpu_task(s, t))
                    p->job_gpu[s->wl->tasks[t].job]--;
            }
        }
    }
    for (int32_t t = 0; t < p->ntasks; t++)
        if (p->running[t] && p->ru[p->task_ru[t]].node == node)
            leave(p, s, t);
}

/* A start the policy did not make (the master restoring runs): charge it. */
static void adopt(struct hrmp *p, const struct hrm_state *s, int32_t t)
{
    struct hrm_ru_plan plan;
    hrmp_plan_of_state(p, s, t, &plan);
    hrmp_hold(p, s, t, &plan);
    p->task_ru[t] = plan.unit[0];
    p->running[t] = 1;
    if (gpu_task(s, t))
        p->job_gpu[s->wl->tasks[t].job]++;
}

static void hrm_on_event(struct hrm_policy *policy, const struct hrm_state *s,
                         const struct hrm_event *ev)
{
    struct hrmp *p = policy->priv;
    if (!p->ru)
        build(p, s);
    switch (ev->type) {
    case HRM_EV_TASK_STOP:
        if (p->running[ev->task])
            leave(p, s, ev->task);
        break;
    case HRM_EV_TASK_START:
        if (!p->running[ev->task] && p->task_ru[ev->task] == NIL)
            adopt(p, s, ev->task);
        break;
    case HRM_EV_NODE_DOWN:
        node_down(p, s, ev->node);
        hrmp_node_changed(p, ev->node);
        break;
    case HRM_EV_NODE_UP:
        hrmp_node_changed(p, ev->node);
        break;
    default:
        break;
    }
}

/* ---- decisions ---- */

static int start(struct hrmp *p, struct hrm_sched_ctx *ctx, int32_t t, const struct hrm_ru_plan *plan)
{
    const struct hrm_state *s = ctx->state;
    int32_t node = p->ru[plan->unit[0]].node;
    uint32_t mask = plan->gpu_mask;
    int rc = mask & s->nodes[node].gpu_busy ? hrm_ctx_start_stacked(ctx, t, node, mask)
                                            : hrm_ctx_start(ctx, t, node, mask);
    if (rc)
        return rc;
    hrmp_hold(p, s, t, plan);
    p->task_ru[t] = plan->unit[0];
    p->running[t] = 1;
    bool grown = false; /* a GPU unit holds more cores than it binds: re-bind */
    for (int32_t k = 0; k < plan->n; k++) {
        const struct hrm_ru *ru = &p->ru[plan->unit[k]];
        grown |= ru->gpu >= 0 && ru->cpu_used > (int64_t)ru->ncores * 1000;
    }
    if (grown && hrmp_rules_of(p, t).flex)
        hrmp_rebind(p, node);
    return 0;
}

/* Starts the heads of unit u's queues while they fit: the stream queue
 * first, and a blocked stream head holds the batch queue back, so streaming
 * operators get the next free resources (their latency SLO). */
static int serve(struct hrmp *p, struct hrm_sched_ctx *ctx, int32_t u)
{
    const struct hrm_state *s = ctx->state;
    for (int q = 0; q < HRMP_NQUEUES; q++) {
        struct hrmp_fifo *f = &p->q[u * HRMP_NQUEUES + q];
        while (f->head != NIL) {
            int32_t t = f->head;
            struct hrm_ru_plan plan;
            if (s->tasks[t].status != HRM_TASK_READY) { /* its job failed */
                dequeue(p, s, f);
                p->task_ru[t] = NIL;
                if (gpu_task(s, t))
                    p->job_gpu[s->wl->tasks[t].job]--;
                continue;
            }
            if (!hrmp_can_start(p, s, t, u, &plan))
                return 0;
            int rc = start(p, ctx, t, &plan);
            if (rc == -HRM_ENOFIT)
                return 0;
            if (rc)
                return rc;
            dequeue(p, s, f);
        }
    }
    return 0;
}

#define LISTED (-2) /* task_ru of a task listed in round 0 of a pass */

static void todo_push(struct hrmp *p, int32_t t)
{
    HRM_GROW(p->todo, p->cap_todo, p->ntodo + 1);
    p->todo[p->ntodo++] = t;
}

/* Lists job j's unplaced GPU tasks while its GPU tasks stay within its fair
 * share A_j = min(floor(Q/K), N_j) (P0, as P1). */
static void list_share(struct hrmp *p, const struct hrm_state *s, int32_t j, int64_t q, int64_t k)
{
    int64_t unplaced = 0;
    for (int32_t t = s->jobs[j].ready_head; t >= 0; t = s->tasks[t].next)
        unplaced += p->task_ru[t] == NIL && gpu_task(s, t);
    int64_t room = hrm_ru_fair_share(q, k, p->job_gpu[j] + unplaced) - p->job_gpu[j];
    for (int32_t t = s->jobs[j].ready_head; t >= 0 && room > 0; t = s->tasks[t].next) {
        if (p->task_ru[t] != NIL || !gpu_task(s, t))
            continue;
        todo_push(p, t);
        p->task_ru[t] = LISTED;
        room--;
    }
}

/*
 * Lists the ready tasks not queued at a unit yet (task_ru NIL, or LISTED by round 0), jobs in
 * arrival order, each job's in ready order.  A job's ready tasks that are queued at a unit are
 * job_queued of them (a queued task is ready: it leaves its queue when it starts, and a job
 * whose tasks fail for good has none ready), so a job with nready == job_queued is skipped and
 * a job's walk stops once its nready - job_queued are found: a pass costs the active jobs and
 * the tasks it lists, not every queued task (a million of them stay queued at units while a
 * pass places a few).
 */
static void list_unqueued(struct hrmp *p, const struct hrm_state *s)
{
#ifndef NDEBUG
    size_t first = p->ntodo;
#endif
    for (int32_t j = s->active_head; j >= 0; j = s->jobs[j].next_active) {
        int64_t left = (int64_t)s->jobs[j].nready - p->job_queued[j];
        for (int32_t t = s->jobs[j].ready_head; t >= 0 && left > 0; t = s->tasks[t].next) {
            if (p->task_ru[t] == NIL)
                todo_push(p, t);
            left -= p->task_ru[t] < 0; /* NIL or LISTED */
            p->listed_walked++;
        }
    }
#ifndef NDEBUG
    /* The test build checks the shortcut against the full walk on every pass. */
    size_t k = first;
    for (int32_t j = s->active_head; j >= 0; j = s->jobs[j].next_active)
        for (int32_t t = s->jobs[j].ready_head; t >= 0; t = s->tasks[t].next)
            if (p->task_ru[t] == NIL)
                assert(k < p->ntodo && p->todo[k++] == t);
    assert(k == p->ntodo);
#endif
}

static int hrm_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    struct hrmp *p = policy->priv;
    const struct hrm_state *s = ctx->state;
    if (!p->ru)
        build(p, s);
    /* Fair share inputs: GPU tasks wanting GPUs, per job and in all. */
    int64_t q = s->up_total.v[HRM_DIM_GPU], k = 0, wanting = 0;
    bool scarce = false;
    if (p->cfg.fair && q > 0) {
        for (int32_t j = s->active_head; j >= 0; j = s->jobs[j].next_active) {
            int64_t mine = p->job_gpu[j];
            for (int32_t t = s->jobs[j].ready_head; t >= 0; t = s->tasks[t].next)
                mine += p->task_ru[t] == NIL && gpu_task(s, t);
            k += mine > 0;
            wanting += mine;
        }
        scarce = wanting > q;
    }
    /* 1. New ready tasks join a unit's queue; jobs below their GPU share
     * first.  Listed before any start: a start unlinks the task (and maybe
     * its job) from the lists being walked. */
    p->ntodo = 0;
    if (scarce) /* round 0: each job's GPU tasks up to its share A_j */
        for (int32_t j = s->active_head; j >= 0; j = s->jobs[j].next_active)
            list_share(p, s, j, q, k);
    list_unqueued(p, s);
    for (size_t i = 0; i < p->ntodo; i++)
        if (p->task_ru[p->todo[i]] == LISTED)
            p->task_ru[p->todo[i]] = NIL;
    for (size_t i = 0; i < p->ntodo; i++) {
        int32_t t = p->todo[i];
        if (s->tasks[t].status != HRM_TASK_READY || p->task_ru[t] != NIL)
            continue;
        int32_t u = hrmp_choose(p, s, t, ctx->now_us);
        if (u < 0)
            continue; /* no unit admits it (see hrmp_unit_admits) */
        enqueue(p, s, t, u);
        if (p->q[u * HRMP_NQUEUES + hrmp_queue_of(p, s, t)].n == 1) {
            int rc = serve(p, ctx, u); /* start it now if it can */
            if (rc)
                return rc;
        }
    }
    /* 2. Queue heads start where resources freed up. */
    for (int32_t u = 0; u < p->nru; u++) {
        if (p->q[u * HRMP_NQUEUES + HRMP_STREAM].n + p->q[u * HRMP_NQUEUES + HRMP_BATCH].n == 0)
            continue;
        int rc = serve(p, ctx, u);
        if (rc)
            return rc;
    }
    return 0;
}

const struct hrm_policy_ops hrm_policy_hrm = {
    .name = "hrm",
    .summary = "P0 HRM: resource units, batch/stream queues, GPU queue stacking, simulaterun",
    .init = hrm_init,
    .fini = hrm_fini,
    .on_event = hrm_on_event,
    .decide = hrm_decide,
    .grows = true,
    .on_grow = hrm_on_grow,
};

const struct hrm_policy_ops hrm_policy_gpu_exclusive = {
    .name = "gpu-exclusive",
    .summary = "hrm with one task per GPU (no queue stacking)",
    .init = exclusive_init,
    .fini = hrm_fini,
    .on_event = hrm_on_event,
    .decide = hrm_decide,
    .grows = true,
    .on_grow = hrm_on_grow,
};

const struct hrm_policy_ops hrm_policy_hrm_static = {
    .name = "hrm-static",
    .summary = "static partitions: stream and batch nodes apart, rigid GPU-core binding",
    .init = static_init,
    .fini = hrm_fini,
    .on_event = hrm_on_event,
    .decide = hrm_decide,
    .grows = true,
    .on_grow = hrm_on_grow,
};

const struct hrm_policy_ops hrm_policy_hrm_unaware = {
    .name = "hrm-unaware",
    .summary = "hrm without stream awareness: stream tasks queue and are placed as batch",
    .init = unaware_init,
    .fini = hrm_fini,
    .on_event = hrm_on_event,
    .decide = hrm_decide,
    .grows = true,
    .on_grow = hrm_on_grow,
};
