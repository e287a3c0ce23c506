/* Shared-state instance placement: P0's units on every host (the hrm policy's code), GPU fair share. */
#include <limits.h>

#include "hrm/alloc.h"
#include "hrm/commit.h"
#include "hrm/ruplace.h"
#include "sched/ssched_private.h"

void ssched_rq_push(struct sjob *j, int32_t ntasks, int32_t task)
{
    j->rq[(j->rq_head + j->rq_n++) % ntasks] = task;
}

void ssched_rq_push_front(struct sjob *j, int32_t ntasks, int32_t task)
{
    j->rq_head = (j->rq_head + ntasks - 1) % ntasks;
    j->rq[j->rq_head] = task;
    j->rq_n++;
}

static int32_t rq_pop(struct sjob *j, int32_t ntasks)
{
    int32_t t = j->rq[j->rq_head];
    j->rq_head = (j->rq_head + 1) % ntasks;
    j->rq_n--;
    return t;
}

/* How many more GPU tasks the job may hold now: unbounded unless GPUs are
 * scarce, i.e. the snapshot's free GPUs cannot cover its ready GPU tasks. */
static int64_t gpu_room(const struct hrm_ssched *s, const struct sjob *j, int32_t ntasks)
{
    if (!s->cfg.fair_share || j->gpu_left == 0)
        return INT64_MAX;
    int64_t want = 0, free = 0;
    for (int32_t k = 0; k < j->rq_n; k++) /* the ready list holds workload task numbers */
        want += s->wl->tasks[j->rq[(j->rq_head + k) % ntasks]].req.v[HRM_DIM_GPU];
    if (want == 0)
        return INT64_MAX;
    for (int32_t n = 0; n < s->snap.nnodes; n++)
        free += s->snap.nodes[n].down ? 0 : s->snap.nodes[n].free.v[HRM_DIM_GPU];
    if (free >= want)
        return INT64_MAX;
    /* K: the master counted this job in when it asked for the snapshot. */
    int64_t k = s->snap.gpu_jobs > 0 ? s->snap.gpu_jobs : 1;
    int64_t a = hrm_fair_share(s->c->total.v[HRM_DIM_GPU], k, j->gpu_left);
    if (a < 1)
        a = 1; /* Q < K: the leftover goes to whoever asks first, not to nobody */
    return a > j->gpu_running ? a - j->gpu_running : 0;
}

/* One node of the snapshot as P0's per-host placement sees it: its cores one
 * pool (the CPU unit: the table holds no binding of cores to GPUs, so the
 * instances place with flexible binding and lending, the hrm policy's
 * defaults), and a GPU unit per GPU record (memory, shares, tasks). */
struct host_buf {
    struct hrm_node n;
    struct hrm_ru ru[HRM_MAX_GPUS_PER_NODE + 1];
    int32_t solo[HRM_MAX_GPUS_PER_NODE + 1];
    int32_t base_want[HRM_MAX_GPUS_PER_NODE + 1];
};

static void host_of(const struct hrm_snapshot *snap, int32_t x, struct host_buf *b,
                    struct hrm_ru_host *h)
{
    const struct hrm_cell_node *cn = &snap->nodes[x];
    int32_t gpus = cn->ngpus;
    uint32_t busy = 0;
    b->n.gpus = gpus;
    b->n.cores = (int32_t)(cn->cap.v[HRM_DIM_CPU] / 1000);
    b->n.capacity = cn->cap;
    for (int32_t g = 0; g < gpus; g++) {
        const struct hrm_cell_gpu *r = &snap->gpus[cn->gpu_at + g];
        b->ru[g] = (struct hrm_ru){.node = x,
                                   .gpu = g,
                                   .type = HRM_RU_GPU_LEND,
                                   .gmem = r->gmem_cap,
                                   .ntasks = r->tasks,
                                   .ngpu_tasks = r->tasks,
                                   .gmem_used = r->gmem_used,
                                   .share_used = r->share_used};
        b->solo[g] = r->solo;
        b->base_want[g] = 0;
        busy |= r->tasks > 0 ? 1u << g : 0;
    }
    b->ru[gpus] = (struct hrm_ru){.node = x,
                                  .gpu = -1,
                                  .type = HRM_RU_CPU,
                                  .ncores = b->n.cores,
                                  .cpu_used = cn->cap.v[HRM_DIM_CPU] - cn->free.v[HRM_DIM_CPU]};
    b->solo[gpus] = 0;
    b->base_want[gpus] = b->n.cores;
    *h = (struct hrm_ru_host){.n = &b->n,
                              .ru = b->ru,
                              .first = 0,
                              .solo = b->solo,
                              .base_want = b->base_want,
                              .free = &cn->free,
                              .gpu_busy = busy,
                              .up = !cn->down};
}

static const struct hrm_ru_rules pooled = {.flex = true, .lend = true, .sides = false};

/*
 * P0's Alg. 2 placement: Alg. 1 (hrm_ru_host_place, the hrm policy's code)
 * on every host of the snapshot, from node cursor on, and the host whose best
 * unit costs least by hrm_ru_prefer; on a tie the first seen, so instances
 * that start from different random nodes spread.  Returns the node with
 * *gpus the GPUs to claim, or -1: no host can start the task now.
 */
static int32_t place(const struct hrm_ssched *s, int32_t cursor, int32_t task, uint32_t *gpus)
{
    const struct hrm_snapshot *snap = &s->snap;
    const struct hrm_res *req = &s->wl->tasks[task].req;
    int32_t n = snap->nnodes, best = -1;
    struct hrm_ru_cost best_cost = {0};
    struct host_buf b;
    for (int32_t k = 0; k < n; k++) {
        int32_t x = (cursor + k) % n;
        const struct hrm_cell_node *cn = &snap->nodes[x];
        if (cn->down || req->v[HRM_DIM_CPU] > cn->free.v[HRM_DIM_CPU] ||
            req->v[HRM_DIM_MEM] > cn->free.v[HRM_DIM_MEM])
            continue; /* cannot start it now whatever its units hold */
        struct hrm_ru_host h;
        struct hrm_ru_cost cost;
        struct hrm_ru_plan plan;
        host_of(snap, x, &b, &h);
        if (hrm_ru_host_place(&h, s->wl, task, pooled, &cost, &plan) < 0)
            continue;
        if (best < 0 || hrm_ru_prefer(&cost, &best_cost)) {
            best = x;
            best_cost = cost;
            *gpus = plan.gpu_mask;
        }
    }
    return best;
}

/* first_fit: the first node from *cursor (circularly) whose free resources cover req. */
static int32_t first_fit(const struct hrm_snapshot *snap, int32_t *cursor,
                         const struct hrm_res *req)
{
    int32_t n = snap->nnodes;
    for (int32_t k = 0; k < n; k++) {
        int32_t x = (*cursor + k) % n;
        if (!snap->nodes[x].down && hrm_res_fits(req, &snap->nodes[x].free)) {
            *cursor = x;
            return x;
        }
    }
    return -1;
}

int32_t ssched_plan(struct hrm_ssched *s, struct sjob *j)
{
    const struct hrm_job *wj = &s->wl->jobs[j->job];
    int32_t nt = wj->ntasks, tried = 0;
    int64_t room = gpu_room(s, j, nt);
    if (s->snap.nnodes == 0)
        return 0; /* a daemon's cell before any node registered */
    int32_t cursor = (int32_t)hrm_rng_below(&s->rng, (uint64_t)s->snap.nnodes);
    s->nplan = 0;
    for (int32_t k = 0, count = j->rq_n; k < count; k++) {
        int32_t t = rq_pop(j, nt);
        const struct hrm_task *task = &s->wl->tasks[t];
        bool gpu = task->req.v[HRM_DIM_GPU] > 0;
        if (gpu && room <= 0) {
            s->st.fair_capped++;
            ssched_rq_push(j, nt, t);
            continue;
        }
        tried++;
        uint32_t gpus = 0;
        int32_t node = s->cfg.first_fit ? first_fit(&s->snap, &cursor, &task->req)
                                        : place(s, cursor, t, &gpus);
        struct hrm_cell_use use = hrm_commit_use_of(s->wl, t, gpus);
        if (node < 0 || !hrm_cell_node_take(&s->snap.nodes[node], s->snap.gpus, &use)) {
            ssched_rq_push(j, nt, t);
            continue;
        }
        HRM_GROW(s->plan, s->cap_plan, s->nplan + 1);
        s->plan[s->nplan++] = (struct splan){
            .task = t, .node = node, .gpu_mask = gpus, .seen = s->snap.nodes[node].version};
        uint8_t *ts = &j->tstate[t - wj->task_first];
        if (*ts & S_CONFLICTED)
            s->st.retries++;
        *ts = (uint8_t)((*ts & S_CONFLICTED) | S_CLAIMED);
        if (gpu)
            room--;
    }
    /* The planned claims changed the copy: mark those nodes stale so the next
     * sync brings them back from the cell whatever the claims' fate. */
    for (size_t k = 0; k < s->nplan; k++)
        s->snap.nodes[s->plan[k].node].version = 0;
    return tried;
}
