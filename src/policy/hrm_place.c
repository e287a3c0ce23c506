/* hrm policy placement (P0): which unit admits a task, when it starts, which queue it joins.
 */
#include <string.h>

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

static const struct hrm_ru_rules permissive = {.flex = true, .lend = true, .sides = false};

static struct hrm_ru_rules configured(const struct hrmp *p)
{
    return (struct hrm_ru_rules){
        .flex = p->cfg.flex, .lend = p->cfg.lend, .sides = p->cfg.partition > 0};
}

struct hrm_ru_rules hrmp_rules_of(const struct hrmp *p, int32_t task)
{
    return p->relaxed[task] == 2 ? permissive : configured(p);
}

/* Unit u's node as per-host placement sees it (include/hrm/ruplace.h): the
 * policy's own units and the state's node. */
void hrmp_host(const struct hrmp *p, const struct hrm_state *s, int32_t u,
                      struct hrm_ru_host *h)
{
    int32_t node = p->ru[u].node, first = p->ru_first[node];
    *h = (struct hrm_ru_host){.n = &p->c->nodes[node],
                              .ru = &p->ru[first],
                              .first = first,
                              .solo = &p->solo[first],
                              .base_want = &p->base_want[first],
                              .free = &s->nodes[node].free,
                              .gpu_busy = s->nodes[node].gpu_busy,
                              .up = s->nodes[node].up,
                              .side = p->side[node]};
}

static bool admits(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u,
                   struct hrm_ru_rules r)
{
    struct hrm_ru_host h;
    hrmp_host(p, s, u, &h);
    return hrm_ru_host_admits(&h, s->wl, task, u - h.first, r);
}

bool hrmp_unit_admits(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u)
{
    return admits(p, s, task, u, hrmp_rules_of(p, task));
}

/* Settles once per task which rules place it: the configuration's if some
 * unit of the cluster admits it under them, else the permissive ones.  The
 * spec's check (hrm_workload_check) already refused a task that fits no
 * node, as every policy sees it; a configuration (rigid binding, no
 * lending, partitions) must not turn one that fits into one left pending
 * for ever. */
void hrmp_settle_rules(struct hrmp *p, const struct hrm_state *s, int32_t task)
{
    if (p->relaxed[task])
        return;
    p->relaxed[task] = 2;
    for (int32_t u = 0; u < p->nru; u++) {
        if (admits(p, s, task, u, configured(p))) {
            p->relaxed[task] = 1;
            return;
        }
    }
}

bool hrmp_stackable(const struct hrm_state *s, int32_t task)
{
    return hrm_ru_task_stackable(s->wl, task);
}

static int32_t task_milli(const struct hrm_state *s, int32_t task)
{
    return s->wl->tasks[task].gpu_milli;
}

bool hrmp_can_start(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u,
                    struct hrm_ru_plan *pl)
{
    struct hrm_ru_host h;
    hrmp_host(p, s, u, &h);
    return hrm_ru_host_can_start(&h, s->wl, task, u - h.first, hrmp_rules_of(p, task), pl);
}

void hrmp_hold(struct hrmp *p, const struct hrm_state *s, int32_t t, const struct hrm_ru_plan *pl)
{
    bool solo = is_gpu_task(s, t) && !hrmp_stackable(s, t);
    for (int32_t i = pl->n - 1; i >= 0; i--) { /* pushed in reverse: the list keeps plan order */
        int32_t h = p->free_held;
        if (h >= 0) {
            p->free_held = p->held[h].next;
        } else {
            HRM_GROW(p->held, p->cap_held, p->nheld + 1);
            h = (int32_t)p->nheld++;
        }
        p->held[h] = (struct hrmp_held){.unit = pl->unit[i],
                                        .next = p->task_held[t],
                                        .part = pl->part[i],
                                        .milli = pl->milli[i]};
        p->task_held[t] = h;
        hrm_ru_add_share(&p->ru[pl->unit[i]], &pl->part[i], pl->milli[i]);
        p->node_version[p->ru[pl->unit[i]].node]++; /* its gradient memo is stale */
        hrmp_node_changed(p, p->ru[pl->unit[i]].node);
        p->solo[pl->unit[i]] += solo && pl->part[i].v[HRM_DIM_GPU] > 0;
    }
}

void hrmp_release(struct hrmp *p, const struct hrm_state *s, int32_t t)
{
    bool solo = is_gpu_task(s, t) && !hrmp_stackable(s, t);
    while (p->task_held[t] >= 0) {
        int32_t h = p->task_held[t];
        struct hrmp_held *e = &p->held[h];
        hrm_ru_remove_share(&p->ru[e->unit], &e->part, e->milli);
        p->node_version[p->ru[e->unit].node]++;
        hrmp_node_changed(p, p->ru[e->unit].node);
        p->solo[e->unit] -= solo && e->part.v[HRM_DIM_GPU] > 0;
        p->task_held[t] = e->next;
        e->next = p->free_held;
        p->free_held = h;
    }
}

void hrmp_plan_of_state(const struct hrmp *p, const struct hrm_state *s, int32_t t,
                        struct hrm_ru_plan *pl)
{
    const struct hrm_task_state *ts = &s->tasks[t];
    const struct hrm_res *req = &s->wl->tasks[t].req;
    int32_t first = p->ru_first[ts->node], gpus = p->c->nodes[ts->node].gpus;
    int64_t k = __builtin_popcount(ts->gpu_mask), cpu = req->v[HRM_DIM_CPU], i = 0;
    pl->n = 0;
    pl->gpu_mask = ts->gpu_mask;
    if (k == 0) {
        hrm_ru_plan_add(pl, first + gpus, cpu, 0, 0, 0);
        return;
    }
    for (int32_t g = 0; g < gpus; g++)
        if (ts->gpu_mask >> g & 1u)
            hrm_ru_plan_add(pl, first + g, cpu / k + (i++ < cpu % k), 1, hrm_ru_task_gmem(req),
                     task_milli(s, t));
}

int32_t hrmp_queue_len(const struct hrmp *p, int32_t u)
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
                                 .milli = req->v[HRM_DIM_GPU] > 0 ? task_milli(s, task) : 0,
                                 .status = status};
}

/* Task t's part on unit u, or NULL. */
static const struct hrm_res *part_on(const struct hrmp *p, int32_t t, int32_t u)
{
    for (int32_t h = p->task_held[t]; h >= 0; h = p->held[h].next)
        if (p->held[h].unit == u)
            return &p->held[h].part;
    return NULL;
}

/* simulaterun for task at unit u: its waiting table (running tasks with the
 * time they have left by their estimate, then the stream and batch queues
 * in service order) simulated forward.  When the task may take any core of
 * the node (a GPU unit with flexible binding, the CPU unit with lending),
 * the cores simulated are the node's and every task running there holds
 * some until it ends; otherwise the unit's own cores and tasks. */
int64_t hrmp_unit_wait(struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u,
                         int64_t now)
{
    const struct hrm_ru *ru = &p->ru[u];
    const struct hrm_node *n = &p->c->nodes[ru->node];
    struct hrm_ru_rules r = hrmp_rules_of(p, task);
    bool pool = ru->gpu >= 0 ? r.flex : r.lend;
    p->wt.n = 0;
    for (int32_t t = s->nodes[ru->node].run_head; t >= 0; t = s->tasks[t].next) {
        const struct hrm_res *part = part_on(p, t, u);
        if (!part && !pool)
            continue;
        int64_t left = s->wl->tasks[t].est_duration_us - (now - s->tasks[t].start_us);
        struct hrm_wait_row row = task_row(s, t, HRM_WAIT_RUNNING, left > 0 ? left : 0);
        row.vcore = pool ? row.vcore : part->v[HRM_DIM_CPU];
        row.gpu = part && part->v[HRM_DIM_GPU] > 0;
        row.gmem = part ? part->v[HRM_DIM_GPU_MEM] : 0;
        row.milli = row.gpu ? row.milli : 0;
        hrm_wait_table_push(&p->wt, &row);
    }
    for (int q = 0; q < HRMP_NQUEUES; q++) {
        for (int32_t t = p->q[u * HRMP_NQUEUES + q].head; t >= 0; t = p->qnext[t]) {
            struct hrm_wait_row row =
                task_row(s, t, HRM_WAIT_QUEUED, s->wl->tasks[t].est_duration_us);
            row.queue = q;
            hrm_wait_table_push(&p->wt, &row);
        }
    }
    struct hrm_wait_cap cap = {.vcore = (int64_t)(pool ? n->cores : ru->ncores) * 1000,
                               .gmem = ru->gmem,
                               .max_stack = p->cfg.stack};
    if (ru->gpu >= 0 && (p->solo[u] > 0 || !hrmp_stackable(s, task)))
        cap.max_stack = 1; /* a task without GPU phases runs alone */
    struct hrm_wait_row me = task_row(s, task, HRM_WAIT_QUEUED, 0);
    int64_t wait;
    if (hrm_waitsim_run(&cap, p->wt.rows, p->wt.n, &me, &wait) < 0)
        return INT64_MAX;
    return wait;
}

int64_t hrmp_gpu_free(const struct hrmp *p, int32_t u)
{
    const struct hrm_ru *ru = &p->ru[u];
    return ru->gpu < 0 || p->solo[u] > 0 ? 0 : ru->gmem - ru->gmem_used;
}

void hrmp_rebind(struct hrmp *p, int32_t node)
{
    const struct hrm_node *n = &p->c->nodes[node];
    hrmp_node_changed(p, node);
    int32_t first = p->ru_first[node];
    int32_t want[HRM_MAX_GPUS_PER_NODE], sum = 0;
    /* Each unit the whole cores its tasks hold; then the GPU units back up to
     * their spec binding while cores are left; the CPU unit the rest. */
    int64_t slack = n->cores - (p->ru[first + n->gpus].cpu_used + 999) / 1000;
    for (int32_t g = 0; g < n->gpus; g++) {
        want[g] = (int32_t)((p->ru[first + g].cpu_used + 999) / 1000);
        slack -= want[g];
    }
    if (slack < 0)
        return; /* cannot happen: starts keep the node's cores covering its units */
    for (int32_t g = 0; g < n->gpus; g++) {
        int64_t add = p->base_want[first + g] - want[g];
        add = add < slack ? add : slack;
        if (add > 0) {
            want[g] += (int32_t)add;
            slack -= add;
        }
        sum += want[g];
    }
    if (n->cores > HRM_RU_MAX_CORES) { /* units by core counts (no core lists) */
        for (int32_t g = 0; g < n->gpus; g++)
            p->ru[first + g].ncores = want[g];
        p->ru[first + n->gpus].ncores = n->cores - sum;
        return;
    }
    struct hrm_ru fresh[HRM_MAX_GPUS_PER_NODE + 1];
    struct hrm_topology t;
    hrm_topology_of_node(n, &t);
    if (hrm_ru_bind(&t, node, want, p->cfg.lend, fresh, NULL) != 0)
        return; /* the topology is out of range: keep the binding there is */
    for (int32_t i = 0; i <= n->gpus; i++) {
        p->ru[first + i].cores = fresh[i].cores;
        p->ru[first + i].ncores = fresh[i].ncores;
    }
}
