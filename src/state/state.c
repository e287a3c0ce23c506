/* Cluster state: allocations, ready and running task lists, DAG progress, per-user/queue accounting. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/state.h"

#define NIL (-1)
#define DEFAULT_MAX_ATTEMPTS 4

/* New entries [from, to) of the per-workload arrays, as a new state has them. */
static void init_tasks(struct hrm_state *s, int32_t from, int32_t to)
{
    for (int32_t t = from; t < to; t++) {
        s->tasks[t] = (struct hrm_task_state){0};
        s->tasks[t].status = HRM_TASK_UNSUBMITTED;
        s->tasks[t].node = NIL;
        s->tasks[t].prev = s->tasks[t].next = NIL;
    }
}

static void init_stages(struct hrm_state *s, int32_t from, int32_t to)
{
    for (int32_t st = from; st < to; st++) {
        s->stage_left[st] = s->wl->stages[st].ntasks;
        s->stage_deps_left[st] = s->wl->stages[st].ndeps;
    }
}

static void init_jobs(struct hrm_state *s, int32_t from, int32_t to)
{
    for (int32_t j = from; j < to; j++) {
        struct hrm_job_state *js = &s->jobs[j];
        *js = (struct hrm_job_state){0};
        js->ready_head = js->ready_tail = NIL;
        js->prev_active = js->next_active = NIL;
        js->end_us = -1;
        js->stage_left = &s->stage_left[s->wl->jobs[j].stage_first];
    }
}

struct hrm_state *hrm_state_new(const struct hrm_cluster *c, const struct hrm_workload *wl)
{
    struct hrm_state *s = hrm_calloc(1, sizeof(*s));
    s->cluster = c;
    s->wl = wl;
    s->nodes = hrm_calloc((size_t)c->nnodes, sizeof(*s->nodes));
    s->max_attempts = DEFAULT_MAX_ATTEMPTS;
    s->active_head = s->active_tail = NIL;
    s->free_head = s->free_tail = NIL;
    hrm_state_grow(s);
    for (int32_t n = 0; n < c->nnodes; n++) {
        s->nodes[n].prev_free = s->nodes[n].next_free = NIL;
        s->nodes[n].run_head = NIL;
        s->nodes[n].free = c->nodes[n].capacity;
        hrm_state_node_up(s, n);
    }
    return s;
}

/* Grows arr to need entries (at least one: callers index it freely), new ones from have on
 * zeroed.  The first allocation is exact (a simulator's state is made once, for a workload of
 * millions of tasks); later ones double. */
static void *grow_zero(void *arr, size_t *cap, size_t have, size_t need, size_t elem)
{
    if (need < 1)
        need = 1;
    if (*cap == 0) {
        arr = hrm_reallocarray(arr, need, elem);
        *cap = need;
    } else {
        hrm_grow(&arr, cap, need, elem);
    }
    memset((char *)arr + have * elem, 0, (need - have) * elem);
    return arr;
}

#define GROW_ZERO(arr, cap, have, need)                                                          \
    ((arr) = grow_zero((arr), &(cap), (size_t)(have), (size_t)(need), sizeof(*(arr))))

void hrm_state_grow(struct hrm_state *s)
{
    const struct hrm_workload *wl = s->wl;
    if (wl->nstages > s->nstages || !s->stage_left) {
        int32_t *old = s->stage_left;
        size_t cap = s->cap_stages;
        GROW_ZERO(s->stage_left, s->cap_stages, s->nstages, wl->nstages);
        GROW_ZERO(s->stage_deps_left, cap, s->nstages, wl->nstages);
        init_stages(s, s->nstages, wl->nstages);
        s->nstages = wl->nstages;
        /* Jobs point into stage_left: re-point them if it moved (amortised by the doubling). */
        if (s->stage_left != old)
            for (int32_t j = 0; j < s->njobs; j++)
                s->jobs[j].stage_left = &s->stage_left[wl->jobs[j].stage_first];
    }
    if (wl->ntasks > s->ntasks || !s->tasks) {
        GROW_ZERO(s->tasks, s->cap_tasks, s->ntasks, wl->ntasks);
        init_tasks(s, s->ntasks, wl->ntasks);
        if (s->charge) /* what new tasks hold is written when they start */
            GROW_ZERO(s->charge, s->cap_charge, s->ntasks, wl->ntasks);
        s->ntasks = wl->ntasks;
    }
    if (wl->njobs > s->njobs || !s->jobs) {
        GROW_ZERO(s->jobs, s->cap_jobs, s->njobs, wl->njobs);
        init_jobs(s, s->njobs, wl->njobs);
        s->njobs = wl->njobs;
    }
    if (wl->nusers > s->nusers || !s->user_alloc) {
        size_t cap = s->cap_users;
        GROW_ZERO(s->user_alloc, s->cap_users, s->nusers, wl->nusers);
        GROW_ZERO(s->user_running, cap, s->nusers, wl->nusers);
        s->nusers = wl->nusers;
    }
    if (wl->nqueues > s->nqueues || !s->queue_alloc) {
        size_t cap = s->cap_queues;
        GROW_ZERO(s->queue_alloc, s->cap_queues, s->nqueues, wl->nqueues);
        GROW_ZERO(s->queue_running, cap, s->nqueues, wl->nqueues);
        s->nqueues = wl->nqueues;
    }
}

void hrm_state_free(struct hrm_state *s)
{
    if (!s)
        return;
    hrm_free(s->nodes);
    hrm_free(s->tasks);
    hrm_free(s->jobs);
    hrm_free(s->stage_left);
    hrm_free(s->stage_deps_left);
    hrm_free(s->user_alloc);
    hrm_free(s->queue_alloc);
    hrm_free(s->user_running);
    hrm_free(s->queue_running);
    hrm_free(s->charge);
    hrm_free(s->gpu_tasks);
    hrm_free(s);
}

/* ---- intrusive lists ---- */

/*
 * Nodes with free cpu.  At start they are listed in id order; afterwards a
 * node that regains free cpu goes to the head, so first-fit searches reuse
 * the node that just released work (last in, first out).  That keeps the
 * hot path on nodes whose state is still in cache, which on 10,000 nodes is
 * worth a factor of two in the simulator, and packs work onto fewer nodes.
 */
static void free_list_add(struct hrm_state *s, int32_t n, bool at_head)
{
    struct hrm_node_state *ns = &s->nodes[n];
    if (ns->in_free_list)
        return;
    ns->in_free_list = true;
    if (at_head) {
        ns->prev_free = NIL;
        ns->next_free = s->free_head;
        if (s->free_head != NIL)
            s->nodes[s->free_head].prev_free = n;
        else
            s->free_tail = n;
        s->free_head = n;
        return;
    }
    ns->next_free = NIL;
    ns->prev_free = s->free_tail;
    if (s->free_tail != NIL)
        s->nodes[s->free_tail].next_free = n;
    else
        s->free_head = n;
    s->free_tail = n;
}

static void free_list_remove(struct hrm_state *s, int32_t n)
{
    struct hrm_node_state *ns = &s->nodes[n];
    if (!ns->in_free_list)
        return;
    ns->in_free_list = false;
    if (ns->prev_free != NIL)
        s->nodes[ns->prev_free].next_free = ns->next_free;
    else
        s->free_head = ns->next_free;
    if (ns->next_free != NIL)
        s->nodes[ns->next_free].prev_free = ns->prev_free;
    else
        s->free_tail = ns->prev_free;
    ns->prev_free = ns->next_free = NIL;
}

/* Jobs with ready tasks stay ordered by arrival, so FIFO-like policies can
 * walk them in order.  New jobs land at the tail in O(1); an old job whose
 * next stage becomes ready walks back over the newer ones. */
static void active_add(struct hrm_state *s, int32_t j)
{
    struct hrm_job_state *js = &s->jobs[j];
    int32_t after = s->active_tail;
    while (after != NIL && s->jobs[after].arrival > js->arrival)
        after = s->jobs[after].prev_active;
    js->prev_active = after;
    js->next_active = after != NIL ? s->jobs[after].next_active : s->active_head;
    if (after != NIL)
        s->jobs[after].next_active = j;
    else
        s->active_head = j;
    if (js->next_active != NIL)
        s->jobs[js->next_active].prev_active = j;
    else
        s->active_tail = j;
}

static void active_remove(struct hrm_state *s, int32_t j)
{
    struct hrm_job_state *js = &s->jobs[j];
    if (js->prev_active != NIL)
        s->jobs[js->prev_active].next_active = js->next_active;
    else
        s->active_head = js->next_active;
    if (js->next_active != NIL)
        s->jobs[js->next_active].prev_active = js->prev_active;
    else
        s->active_tail = js->prev_active;
    js->prev_active = js->next_active = NIL;
}

/* Ready tasks of a job: new ones at the tail; requeued ones (which were
 * already running once) at the head, so they are retried first. */
static void ready_push(struct hrm_state *s, int32_t t, bool front, int64_t now_us)
{
    struct hrm_task_state *ts = &s->tasks[t];
    int32_t j = s->wl->tasks[t].job;
    struct hrm_job_state *js = &s->jobs[j];
    ts->status = HRM_TASK_READY;
    ts->ready_us = now_us;
    if (front) {
        ts->prev = NIL;
        ts->next = js->ready_head;
        if (js->ready_head != NIL)
            s->tasks[js->ready_head].prev = t;
        else
            js->ready_tail = t;
        js->ready_head = t;
    } else {
        ts->next = NIL;
        ts->prev = js->ready_tail;
        if (js->ready_tail != NIL)
            s->tasks[js->ready_tail].next = t;
        else
            js->ready_head = t;
        js->ready_tail = t;
    }
    if (js->nready++ == 0)
        active_add(s, j);
    s->nready++;
}

static void ready_remove(struct hrm_state *s, int32_t t)
{
    struct hrm_task_state *ts = &s->tasks[t];
    int32_t j = s->wl->tasks[t].job;
    struct hrm_job_state *js = &s->jobs[j];
    if (ts->prev != NIL)
        s->tasks[ts->prev].next = ts->next;
    else
        js->ready_head = ts->next;
    if (ts->next != NIL)
        s->tasks[ts->next].prev = ts->prev;
    else
        js->ready_tail = ts->prev;
    ts->prev = ts->next = NIL;
    if (--js->nready == 0)
        active_remove(s, j);
    s->nready--;
}

static void run_push(struct hrm_state *s, int32_t t, int32_t n)
{
    struct hrm_task_state *ts = &s->tasks[t];
    struct hrm_node_state *ns = &s->nodes[n];
    ts->prev = NIL;
    ts->next = ns->run_head;
    if (ns->run_head != NIL)
        s->tasks[ns->run_head].prev = t;
    ns->run_head = t;
}

static void run_remove(struct hrm_state *s, int32_t t, int32_t n)
{
    struct hrm_task_state *ts = &s->tasks[t];
    struct hrm_node_state *ns = &s->nodes[n];
    if (ts->prev != NIL)
        s->tasks[ts->prev].next = ts->next;
    else
        ns->run_head = ts->next;
    if (ts->next != NIL)
        s->tasks[ts->next].prev = ts->prev;
    ts->prev = ts->next = NIL;
}

/* ---- jobs ---- */

static int stage_make_ready(struct hrm_state *s, int32_t stage, int64_t now_us)
{
    const struct hrm_stage *st = &s->wl->stages[stage];
    for (int32_t i = 0; i < st->ntasks; i++)
        ready_push(s, st->task_first + i, false, now_us);
    return st->ntasks;
}

int hrm_state_submit_job(struct hrm_state *s, int32_t job, int64_t now_us)
{
    if (job < 0 || job >= s->wl->njobs || s->jobs[job].submitted)
        return -HRM_ESTATE;
    const struct hrm_job *j = &s->wl->jobs[job];
    struct hrm_job_state *js = &s->jobs[job];
    js->submitted = true;
    js->submit_us = now_us;
    js->arrival = s->arrivals++;
    s->njobs_running++;
    int ready = 0;
    for (int32_t i = 0; i < j->nstages; i++) {
        int32_t stage = j->stage_first + i;
        if (s->stage_deps_left[stage] == 0) {
            ready += stage_make_ready(s, stage, now_us);
        } else {
            const struct hrm_stage *st = &s->wl->stages[stage];
            for (int32_t k = 0; k < st->ntasks; k++)
                s->tasks[st->task_first + k].status = HRM_TASK_BLOCKED;
        }
    }
    s->version++;
    return ready;
}

static void job_maybe_finish(struct hrm_state *s, int32_t job, int64_t now_us)
{
    struct hrm_job_state *js = &s->jobs[job];
    const struct hrm_job *j = &s->wl->jobs[job];
    if (js->finished)
        return;
    if (js->ndone == j->ntasks || (js->failed && js->nrunning == 0)) {
        js->finished = true;
        js->end_us = now_us;
        s->njobs_running--;
    }
}

/* A task failed for good: the job cannot complete, so nothing else of it is
 * started; what runs is left to end. */
static void job_fail(struct hrm_state *s, int32_t job)
{
    struct hrm_job_state *js = &s->jobs[job];
    const struct hrm_job *j = &s->wl->jobs[job];
    js->failed = true;
    while (js->ready_head != NIL) {
        int32_t t = js->ready_head;
        ready_remove(s, t);
        s->tasks[t].status = HRM_TASK_FAILED;
        js->nfailed++;
    }
    for (int32_t t = j->task_first; t < j->task_first + j->ntasks; t++) {
        if (s->tasks[t].status == HRM_TASK_BLOCKED) {
            s->tasks[t].status = HRM_TASK_FAILED;
            js->nfailed++;
        }
    }
}

/* ---- placement ---- */

int hrm_state_pick_gpus(const struct hrm_state *s, int32_t task, int32_t node, uint32_t *mask)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    int64_t want = t->req.v[HRM_DIM_GPU];
    *mask = 0;
    if (want == 0)
        return 0;
    const struct hrm_node *n = &s->cluster->nodes[node];
    int64_t per_gpu = (t->req.v[HRM_DIM_GPU_MEM] + want - 1) / want;
    uint32_t busy = s->nodes[node].gpu_busy, picked = 0;
    int64_t got = 0;
    for (int32_t g = 0; g < n->gpus && got < want; g++) {
        if (busy & (1u << g))
            continue;
        if (s->cluster->units[n->unit_first + g].gpu_mem < per_gpu)
            continue;
        picked |= 1u << g;
        got++;
    }
    if (got < want)
        return -HRM_ENOFIT;
    *mask = picked;
    return 0;
}

bool hrm_state_fits(const struct hrm_state *s, int32_t task, int32_t node)
{
    const struct hrm_node_state *ns = &s->nodes[node];
    const struct hrm_task *t = &s->wl->tasks[task];
    if (!ns->up || !hrm_res_fits(&t->req, &ns->free))
        return false;
    if (t->req.v[HRM_DIM_GPU] == 0)
        return true;
    uint32_t mask;
    return hrm_state_pick_gpus(s, task, node, &mask) == 0;
}

/* Checks a caller-chosen GPU set: the right count, existing, idle (unless
 * stacking), big enough. */
static int check_gpus(const struct hrm_state *s, int32_t task, int32_t node, uint32_t mask,
                      bool stack)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    const struct hrm_node *n = &s->cluster->nodes[node];
    int64_t want = t->req.v[HRM_DIM_GPU];
    if (want == 0)
        return mask == 0 ? 0 : -HRM_ENOFIT;
    if (__builtin_popcount(mask) != want)
        return -HRM_ENOFIT;
    if (n->gpus < 32 && (mask >> n->gpus) != 0)
        return -HRM_ENOFIT;
    if (!stack && (mask & s->nodes[node].gpu_busy))
        return -HRM_ENOFIT;
    int64_t per_gpu = (t->req.v[HRM_DIM_GPU_MEM] + want - 1) / want;
    for (int32_t g = 0; g < n->gpus; g++)
        if ((mask & (1u << g)) && s->cluster->units[n->unit_first + g].gpu_mem < per_gpu)
            return -HRM_ENOFIT;
    return 0;
}

/* Per-GPU task counts (stacking): +1/-1 on each GPU of mask; returns the
 * GPUs of mask left without a task. */
static uint32_t gpu_count(struct hrm_state *s, int32_t node, uint32_t mask, int sign)
{
    uint16_t *cnt = &s->gpu_tasks[s->cluster->nodes[node].unit_first];
    uint32_t idle = 0;
    for (int32_t g = 0; mask >> g; g++) {
        if (!(mask >> g & 1u))
            continue;
        cnt[g] = (uint16_t)(cnt[g] + sign);
        if (cnt[g] == 0)
            idle |= 1u << g;
    }
    return idle;
}

/* held: what the task holds (its request, or its charge). */
static void account(struct hrm_state *s, int32_t task, const struct hrm_res *held, int sign)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    const struct hrm_job *j = &s->wl->jobs[t->job];
    struct hrm_job_state *js = &s->jobs[t->job];
    if (sign > 0) {
        hrm_res_add(&js->alloc, held);
        hrm_res_add(&s->user_alloc[j->user], held);
        hrm_res_add(&s->queue_alloc[j->queue], held);
    } else {
        hrm_res_sub(&js->alloc, held);
        hrm_res_sub(&s->user_alloc[j->user], held);
        hrm_res_sub(&s->queue_alloc[j->queue], held);
    }
    js->nrunning += sign;
    s->user_running[j->user] += sign;
    s->queue_running[j->queue] += sign;
    s->nrunning += sign;
}

/* Starts a ready task on an up node holding `held` (checked by the caller). */
static inline __attribute__((always_inline)) int start_holding(struct hrm_state *s, int32_t task,
                                                               int32_t node, uint32_t gpu_mask,
                                                               const struct hrm_res *held,
                                                               int64_t now_us, bool stack)
{
    struct hrm_task_state *ts = &s->tasks[task];
    struct hrm_node_state *ns = &s->nodes[node];
    int rc = gpu_mask == HRM_GPUS_ANY ? hrm_state_pick_gpus(s, task, node, &gpu_mask)
                                      : check_gpus(s, task, node, gpu_mask, stack);
    if (rc)
        return rc;
    if (__builtin_expect(s->gpu_tasks != NULL, 0))
        gpu_count(s, node, gpu_mask, +1);
    if (s->charge)
        s->charge[task] = *held;
    ready_remove(s, task);
    ts->status = HRM_TASK_RUNNING;
    ts->node = node;
    ts->gpu_mask = gpu_mask;
    ts->attempt++;
    ts->start_us = now_us;
    hrm_res_sub(&ns->free, held);
    hrm_res_sub(&s->free_total, held);
    ns->gpu_busy |= gpu_mask;
    ns->nrunning++;
    ns->version++;
    run_push(s, task, node);
    if (ns->free.v[HRM_DIM_CPU] <= 0)
        free_list_remove(s, node);
    account(s, task, held, +1);
    s->version++;
    return 0;
}

int hrm_state_start(struct hrm_state *s, int32_t task, int32_t node, uint32_t gpu_mask,
                    int64_t now_us)
{
    if (task < 0 || task >= s->wl->ntasks || node < 0 || node >= s->cluster->nnodes)
        return -HRM_ESTATE;
    struct hrm_task_state *ts = &s->tasks[task];
    struct hrm_node_state *ns = &s->nodes[node];
    const struct hrm_task *t = &s->wl->tasks[task];
    if (ts->status != HRM_TASK_READY || !ns->up)
        return -HRM_ESTATE;
    if (!hrm_res_fits(&t->req, &ns->free))
        return -HRM_ENOFIT;
    return start_holding(s, task, node, gpu_mask, &t->req, now_us, false);
}

int hrm_state_start_charged(struct hrm_state *s, int32_t task, int32_t node, uint32_t gpu_mask,
                            const struct hrm_res *charge, int64_t now_us)
{
    if (task < 0 || task >= s->wl->ntasks || node < 0 || node >= s->cluster->nnodes)
        return -HRM_ESTATE;
    if (s->tasks[task].status != HRM_TASK_READY || !s->nodes[node].up)
        return -HRM_ESTATE;
    for (int d = 0; d < HRM_NDIM; d++)
        if (charge->v[d] < 0)
            return -EINVAL;
    if (!s->charge) {
        /* From now on every start records what it holds. */
        s->charge = hrm_calloc((size_t)(s->wl->ntasks ? s->wl->ntasks : 1), sizeof(*s->charge));
        for (int32_t t = 0; t < s->wl->ntasks; t++)
            if (s->tasks[t].status == HRM_TASK_RUNNING)
                s->charge[t] = s->wl->tasks[t].req;
    }
    return start_holding(s, task, node, gpu_mask, charge, now_us, false);
}

int hrm_state_start_stacked(struct hrm_state *s, int32_t task, int32_t node, uint32_t gpu_mask,
                            int64_t now_us)
{
    if (task < 0 || task >= s->wl->ntasks || node < 0 || node >= s->cluster->nnodes)
        return -HRM_ESTATE;
    if (s->tasks[task].status != HRM_TASK_READY || !s->nodes[node].up)
        return -HRM_ESTATE;
    if (gpu_mask == HRM_GPUS_ANY)
        return -HRM_ENOFIT;
    struct hrm_res held = s->wl->tasks[task].req;
    held.v[HRM_DIM_GPU] -= __builtin_popcount(gpu_mask & s->nodes[node].gpu_busy);
    if (held.v[HRM_DIM_GPU] < 0 || !hrm_res_fits(&held, &s->nodes[node].free))
        return -HRM_ENOFIT;
    int rc = check_gpus(s, task, node, gpu_mask, true);
    if (rc)
        return rc;
    if (!s->gpu_tasks) {
        /* From now on GPUs count their tasks; count those already running. */
        s->gpu_tasks = hrm_calloc((size_t)(s->cluster->nunits ? s->cluster->nunits : 1),
                                  sizeof(*s->gpu_tasks));
        for (int32_t t = 0; t < s->wl->ntasks; t++)
            if (s->tasks[t].status == HRM_TASK_RUNNING)
                gpu_count(s, s->tasks[t].node, s->tasks[t].gpu_mask, +1);
    }
    if (!s->charge) {
        s->charge = hrm_calloc((size_t)(s->wl->ntasks ? s->wl->ntasks : 1), sizeof(*s->charge));
        for (int32_t t = 0; t < s->wl->ntasks; t++)
            if (s->tasks[t].status == HRM_TASK_RUNNING)
                s->charge[t] = s->wl->tasks[t].req;
    }
    return start_holding(s, task, node, gpu_mask, &held, now_us, true);
}

/* Releases a running task's resources on its node. */
static void release(struct hrm_state *s, int32_t task)
{
    struct hrm_task_state *ts = &s->tasks[task];
    int32_t node = ts->node;
    struct hrm_node_state *ns = &s->nodes[node];
    run_remove(s, task, node);
    const struct hrm_res *held = hrm_state_held(s, task);
    struct hrm_res back = *held;
    if (__builtin_expect(s->gpu_tasks != NULL, 0)) {
        /* Stacking: a GPU becomes free when its last task ends, whichever
         * of its tasks was charged for it. */
        uint32_t idle = gpu_count(s, node, ts->gpu_mask, -1);
        ns->gpu_busy &= ~idle;
        back.v[HRM_DIM_GPU] = __builtin_popcount(idle);
    } else {
        ns->gpu_busy &= ~ts->gpu_mask;
    }
    hrm_res_add(&ns->free, &back);
    ns->nrunning--;
    ns->version++;
    if (ns->up) {
        hrm_res_add(&s->free_total, &back);
        if (ns->free.v[HRM_DIM_CPU] > 0)
            free_list_add(s, node, true);
    }
    account(s, task, held, -1);
    ts->node = NIL;
    ts->gpu_mask = 0;
}

/* Stages of the job that wait on the finished stage; those with no dependency
 * left become ready.  Jobs have few stages, so a scan is cheap. */
static int stage_done(struct hrm_state *s, int32_t stage, int64_t now_us)
{
    const struct hrm_workload *wl = s->wl;
    const struct hrm_job *j = &wl->jobs[wl->stages[stage].job];
    int ready = 0;
    for (int32_t i = stage + 1; i < j->stage_first + j->nstages; i++) {
        const struct hrm_stage *st = &wl->stages[i];
        for (int32_t d = 0; d < st->ndeps; d++) {
            if (wl->stage_deps[st->dep_first + d] != stage)
                continue;
            if (--s->stage_deps_left[i] == 0)
                ready += stage_make_ready(s, i, now_us);
        }
    }
    return ready;
}

int hrm_state_stop(struct hrm_state *s, int32_t task, enum hrm_task_outcome outcome, int64_t now_us)
{
    if (task < 0 || task >= s->wl->ntasks || s->tasks[task].status != HRM_TASK_RUNNING)
        return -HRM_ESTATE;
    struct hrm_task_state *ts = &s->tasks[task];
    const struct hrm_task *t = &s->wl->tasks[task];
    struct hrm_job_state *js = &s->jobs[t->job];
    int ready = 0;
    release(s, task);
    switch (outcome) {
    case HRM_OUTCOME_DONE:
        ts->status = HRM_TASK_DONE;
        js->ndone++;
        if (--s->stage_left[t->stage] == 0 && !js->failed)
            ready = stage_done(s, t->stage, now_us);
        break;
    case HRM_OUTCOME_FAILED:
        if (ts->attempt >= s->max_attempts) {
            ts->status = HRM_TASK_FAILED;
            js->nfailed++;
            job_fail(s, t->job);
            break;
        }
        /* retried like a preempted task */
        __attribute__((fallthrough));
    case HRM_OUTCOME_PREEMPTED:
    case HRM_OUTCOME_LOST:
        if (js->failed) {
            ts->status = HRM_TASK_FAILED;
            js->nfailed++;
        } else {
            ready_push(s, task, true, now_us);
            ready = 1;
        }
        break;
    }
    job_maybe_finish(s, t->job, now_us);
    s->version++;
    return ready;
}

int hrm_state_node_down(struct hrm_state *s, int32_t node, int64_t now_us)
{
    struct hrm_node_state *ns = &s->nodes[node];
    if (!ns->up)
        return 0;
    hrm_res_sub(&s->free_total, &ns->free);
    hrm_res_sub(&s->up_total, &s->cluster->nodes[node].capacity);
    ns->up = false;
    free_list_remove(s, node);
    int lost = 0;
    while (ns->run_head != NIL) {
        hrm_state_stop(s, ns->run_head, HRM_OUTCOME_LOST, now_us);
        lost++;
    }
    ns->version++;
    s->version++;
    return lost;
}

void hrm_state_node_up(struct hrm_state *s, int32_t node)
{
    struct hrm_node_state *ns = &s->nodes[node];
    if (ns->up)
        return;
    ns->up = true;
    hrm_res_add(&s->free_total, &ns->free);
    hrm_res_add(&s->up_total, &s->cluster->nodes[node].capacity);
    /* Nodes that come back queue behind the ones already there. */
    if (ns->free.v[HRM_DIM_CPU] > 0)
        free_list_add(s, node, false);
    ns->version++;
    s->version++;
}

double hrm_state_job_share(const struct hrm_state *s, int32_t job)
{
    return hrm_res_dominant_share(&s->jobs[job].alloc, &s->up_total);
}

double hrm_state_user_share(const struct hrm_state *s, int32_t user)
{
    return hrm_res_dominant_share(&s->user_alloc[user], &s->up_total);
}
