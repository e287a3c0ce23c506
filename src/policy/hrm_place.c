/* hrm policy placement (SPEC P0): which unit admits a task, when it starts, which queue it joins.
 */
#include "hrm/alloc.h"
#include "policy/hrm_private.h"

static bool is_gpu_task(const struct hrm_state *s, int32_t task)
{
    return s->wl->tasks[task].req.v[HRM_DIM_GPU] > 0;
}

static bool is_stream_job(const struct hrm_state *s, int32_t task)
{
    /* Services are long-running like streaming operators: same side, same queue. */
    return s->wl->jobs[s->wl->tasks[task].job].kind != HRM_JOB_BATCH;
}

enum hrmp_queue hrmp_queue_of(const struct hrmp *p, const struct hrm_state *s, int32_t task)
{
    return p->cfg.stream_aware && is_stream_job(s, task) ? HRMP_STREAM : HRMP_BATCH;
}

/* The request's dimensions a node (not a unit) provides. */
static bool node_dims_fit(const struct hrm_res *req, const struct hrm_res *avail)
{
    static const enum hrm_dim dims[] = {HRM_DIM_CPU, HRM_DIM_MEM, HRM_DIM_DISK, HRM_DIM_NET};
    for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++)
        if (req->v[dims[i]] > avail->v[dims[i]])
            return false;
    return true;
}

bool hrmp_unit_admits(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u)
{
    const struct hrm_ru *ru = &p->ru[u];
    const struct hrm_node *n = &p->c->nodes[ru->node];
    const struct hrm_res *req = &s->wl->tasks[task].req;
    uint8_t side = p->side[ru->node];
    if ((side == HRMP_BATCH_ONLY && is_stream_job(s, task)) ||
        (side == HRMP_STREAM_ONLY && !is_stream_job(s, task)))
        return false;
    if (!node_dims_fit(req, &n->capacity))
        return false;
    if (is_gpu_task(s, task)) {
        if (ru->gpu < 0 || req->v[HRM_DIM_GPU] > n->gpus)
            return false;
        /* The tasks' cores come from the node when binding is flexible. */
        if (!p->cfg.flex && req->v[HRM_DIM_CPU] > (int64_t)ru->ncores * 1000)
            return false;
        return hrm_ru_task_gmem(req) <= ru->gmem;
    }
    if (ru->gpu >= 0)
        return false; /* CPU tasks queue at the CPU unit; they only borrow GPU units' cores */
    int64_t cores =
        p->cfg.lend ? (int64_t)n->cores : p->c->units[n->unit_first + n->gpus].core_count;
    return req->v[HRM_DIM_CPU] <= cores * 1000;
}

static int64_t unit_spare(const struct hrm_ru *ru)
{
    return (int64_t)ru->ncores * 1000 - ru->cpu_used;
}

bool hrmp_stackable(const struct hrm_state *s, int32_t task)
{
    return hrm_workload_gpu_phases(s->wl, task) != NULL;
}

void hrmp_hold(struct hrmp *p, const struct hrm_state *s, int32_t t, int32_t u, int sign)
{
    const struct hrm_res *req = &s->wl->tasks[t].req;
    if (sign > 0)
        hrm_ru_add(&p->ru[u], req);
    else
        hrm_ru_remove(&p->ru[u], req);
    if (is_gpu_task(s, t) && !hrmp_stackable(s, t))
        p->solo[u] += sign;
}

bool hrmp_can_start(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u,
                    int32_t *via)
{
    const struct hrm_ru *ru = &p->ru[u];
    const struct hrm_node_state *ns = &s->nodes[ru->node];
    const struct hrm_res *req = &s->wl->tasks[task].req;
    if (!ns->up || !node_dims_fit(req, &ns->free))
        return false;
    *via = u;
    const struct hrm_ru *cpu_unit = &p->ru[p->ru_first[ru->node] + p->c->nodes[ru->node].gpus];
    if (is_gpu_task(s, task)) {
        if (req->v[HRM_DIM_GPU] > 1) /* several GPUs: idle ones only, no stacking */
            return hrm_state_fits(s, task, ru->node);
        if (!hrm_ru_fits(ru, req) || p->solo[u] > 0 ||
            (ru->ngpu_tasks > 0 && !hrmp_stackable(s, task)))
            return false;
        int64_t extra = req->v[HRM_DIM_CPU] - unit_spare(ru);
        return extra <= 0 || (p->cfg.flex && extra <= unit_spare(cpu_unit));
    }
    if (hrm_ru_fits(ru, req))
        return true;
    if (!p->cfg.lend)
        return false;
    /* SPEC P0 binding (3): borrow the idle bound cores of a GPU unit. */
    for (int32_t g = 0; g < p->c->nodes[ru->node].gpus; g++) {
        int32_t v = p->ru_first[ru->node] + g;
        if (hrm_ru_fits(&p->ru[v], req)) {
            *via = v;
            return true;
        }
    }
    return false;
}

static int32_t queue_len(const struct hrmp *p, int32_t u)
{
    int32_t n = p->ru[u].ntasks;
    for (int q = 0; q < HRMP_NQUEUES; q++)
        n += p->q[u * HRMP_NQUEUES + q].n;
    return n;
}

static struct hrm_wait_row task_row(const struct hrm_state *s, int32_t task, uint8_t status,
                                    int64_t time_us)
{
    const struct hrm_res *req = &s->wl->tasks[task].req;
    return (struct hrm_wait_row){.task = task,
                                 .time_us = time_us,
                                 .vcore = req->v[HRM_DIM_CPU],
                                 .gpu = req->v[HRM_DIM_GPU] > 0,
                                 .gmem = hrm_ru_task_gmem(req),
                                 .status = status};
}

/* simulaterun for task at unit u: its waiting table (running tasks with the
 * time they have left by their estimate, then the stream and batch queues
 * in service order) simulated forward. */
static int64_t unit_wait(struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u,
                         int64_t now)
{
    const struct hrm_ru *ru = &p->ru[u];
    const struct hrm_node *n = &p->c->nodes[ru->node];
    p->wt.n = 0;
    for (int32_t t = s->nodes[ru->node].run_head; t >= 0; t = s->tasks[t].next) {
        if (p->task_ru[t] != u || !p->running[t])
            continue;
        int64_t left = s->wl->tasks[t].est_duration_us - (now - s->tasks[t].start_us);
        struct hrm_wait_row r = task_row(s, t, HRM_WAIT_RUNNING, left > 0 ? left : 0);
        hrm_wait_table_push(&p->wt, &r);
    }
    for (int q = 0; q < HRMP_NQUEUES; q++) {
        for (int32_t t = p->q[u * HRMP_NQUEUES + q].head; t >= 0; t = p->qnext[t]) {
            struct hrm_wait_row r =
                task_row(s, t, HRM_WAIT_QUEUED, s->wl->tasks[t].est_duration_us);
            r.queue = q;
            hrm_wait_table_push(&p->wt, &r);
        }
    }
    struct hrm_wait_cap cap = {
        .vcore = (int64_t)ru->ncores * 1000, .gmem = ru->gmem, .max_stack = p->cfg.stack};
    if (ru->gpu >= 0 && (p->solo[u] > 0 || !hrmp_stackable(s, task)))
        cap.max_stack = 1; /* a task without GPU phases runs alone */
    if (ru->gpu >= 0 && p->cfg.flex)
        cap.vcore = (int64_t)n->cores * 1000;
    if (ru->gpu < 0 && p->cfg.lend)
        for (int32_t g = 0; g < n->gpus; g++)
            cap.vcore += hrm_ru_lendable(&p->ru[p->ru_first[ru->node] + g]);
    struct hrm_wait_row me = task_row(s, task, HRM_WAIT_QUEUED, 0);
    int64_t wait;
    if (hrm_waitsim_run(&cap, p->wt.rows, p->wt.n, &me, &wait) < 0)
        return INT64_MAX;
    return wait;
}

/* An idle unit the task fits exactly: an idle GPU for a GPU task (its
 * kernels get the GPU alone), a CPU unit whose free cores equal the request
 * (no fragment left). */
static bool exact_fit(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u)
{
    const struct hrm_ru *ru = &p->ru[u];
    if (is_gpu_task(s, task))
        return ru->ngpu_tasks == 0;
    return unit_spare(ru) == s->wl->tasks[task].req.v[HRM_DIM_CPU];
}

int32_t hrmp_choose(struct hrmp *p, const struct hrm_state *s, int32_t task, int64_t now)
{
    bool stream = hrmp_queue_of(p, s, task) == HRMP_STREAM;
    int32_t best = -1, best_len = 0;
    int64_t best_key = INT64_MAX; /* stream: simulated wait; batch: 0 if it starts now, else 1 */
    for (int32_t u = 0; u < p->nru; u++) {
        if (!s->nodes[p->ru[u].node].up || !hrmp_unit_admits(p, s, task, u))
            continue;
        int32_t len = queue_len(p, u), via;
        bool now_ok = len == p->ru[u].ntasks && hrmp_can_start(p, s, task, u, &via);
        if (now_ok && exact_fit(p, s, task, u))
            return u; /* taken at once */
        /* Batch: the shortest queue, counting what runs (on a GPU unit that
         * is how many kernels share it), among units that start it now if
         * any; stream: the smallest simulated wait (0 when it starts now). */
        int64_t key = stream ? (now_ok ? 0 : unit_wait(p, s, task, u, now)) : !now_ok;
        if (best < 0 || key < best_key || (key == best_key && len < best_len)) {
            best = u;
            best_key = key;
            best_len = len;
        }
    }
    return best;
}

void hrmp_rebind(struct hrmp *p, int32_t node)
{
    const struct hrm_node *n = &p->c->nodes[node];
    int32_t first = p->ru_first[node];
    int32_t want[HRM_MAX_GPUS_PER_NODE];
    for (int32_t g = 0; g < n->gpus; g++) {
        const struct hrm_ru *ru = &p->ru[first + g];
        int32_t need = (int32_t)((ru->cpu_used + 999) / 1000);
        want[g] = need > p->base_want[first + g] ? need : p->base_want[first + g];
    }
    struct hrm_ru fresh[HRM_MAX_GPUS_PER_NODE + 1];
    struct hrm_topology t;
    hrm_topology_of_node(n, &t);
    if (hrm_ru_bind(&t, node, want, p->cfg.lend, fresh, NULL) != 0)
        return; /* the wants exceed the node: keep the binding there is */
    for (int32_t i = 0; i <= n->gpus; i++) {
        p->ru[first + i].cores = fresh[i].cores;
        p->ru[first + i].ncores = fresh[i].ncores;
    }
}
