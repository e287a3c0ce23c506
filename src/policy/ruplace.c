/* P0's per-host placement (Alg. 1): which unit of a node admits a task, whether it starts now, at what cost. */
#include <string.h>

#include "hrm/ruplace.h"

static bool is_gpu_task(const struct hrm_workload *wl, int32_t task)
{
    return wl->tasks[task].req.v[HRM_DIM_GPU] > 0;
}

static bool is_stream_job(const struct hrm_workload *wl, int32_t task)
{
    /* Services are long-running like streaming operators: same side, same queue. */
    return wl->jobs[wl->tasks[task].job].kind != HRM_JOB_BATCH;
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

static int64_t unit_spare(const struct hrm_ru *ru)
{
    return (int64_t)ru->ncores * 1000 - ru->cpu_used;
}

/* Milli-cores the k GPU units of the host with the most cores hold in the spec's binding. */
static int64_t rigid_gpu_cores(const struct hrm_ru_host *h, int64_t k)
{
    int32_t gpus = h->n->gpus;
    bool taken[HRM_MAX_GPUS_PER_NODE] = {false};
    int64_t sum = 0;
    for (int64_t i = 0; i < k; i++) {
        int32_t best = -1;
        for (int32_t g = 0; g < gpus; g++)
            if (!taken[g] && (best < 0 || h->base_want[g] > h->base_want[best]))
                best = g;
        if (best < 0)
            break;
        taken[best] = true;
        sum += h->base_want[best];
    }
    return sum * 1000;
}

bool hrm_ru_host_admits(const struct hrm_ru_host *h, const struct hrm_workload *wl, int32_t task,
                        int32_t u, struct hrm_ru_rules r)
{
    const struct hrm_ru *ru = &h->ru[u];
    const struct hrm_node *n = h->n;
    const struct hrm_res *req = &wl->tasks[task].req;
    if (r.sides && ((h->side == HRM_RU_BATCH_ONLY && is_stream_job(wl, task)) ||
                    (h->side == HRM_RU_STREAM_ONLY && !is_stream_job(wl, task))))
        return false;
    if (!node_dims_fit(req, &n->capacity))
        return false;
    if (is_gpu_task(wl, task)) {
        int64_t k = req->v[HRM_DIM_GPU];
        if (ru->gpu < 0 || k > n->gpus || hrm_ru_task_gmem(req) > ru->gmem)
            return false;
        /* Flexible binding gives the task cores of the whole node; rigid
         * binding only those of its GPUs' units. */
        return r.flex || req->v[HRM_DIM_CPU] <= rigid_gpu_cores(h, k);
    }
    if (ru->gpu >= 0)
        return false; /* CPU tasks queue at the CPU unit; they only borrow GPU units' cores */
    int64_t cores = r.lend ? n->cores : h->base_want[u];
    return req->v[HRM_DIM_CPU] <= cores * 1000;
}

bool hrm_ru_task_stackable(const struct hrm_workload *wl, int32_t task)
{
    int32_t milli = wl->tasks[task].gpu_milli;
    return hrm_workload_gpu_phases(wl, task) != NULL || (milli > 0 && milli < 1000);
}

void hrm_ru_plan_add(struct hrm_ru_plan *pl, int32_t unit, int64_t cpu, int64_t gpu, int64_t gmem,
                     int32_t milli)
{
    struct hrm_res *part = &pl->part[pl->n];
    memset(part, 0, sizeof(*part));
    part->v[HRM_DIM_CPU] = cpu;
    part->v[HRM_DIM_GPU] = gpu;
    part->v[HRM_DIM_GPU_MEM] = gmem;
    pl->milli[pl->n] = gpu ? milli : 0;
    pl->unit[pl->n++] = unit;
}

/* Whether the node's cores, in whole cores per unit, cover what its units'
 * tasks hold plus plan's parts: the re-binding flexible binding will make
 * (hrmp_rebind) exists.  GPU units' spec bindings are floors that yield. */
static bool rebind_fits(const struct hrm_ru_host *h, const struct hrm_ru_plan *pl)
{
    int64_t cores = 0;
    for (int32_t u = 0; u <= h->n->gpus; u++) {
        int64_t used = h->ru[u].cpu_used;
        for (int32_t k = 0; k < pl->n; k++)
            used += pl->unit[k] == h->first + u ? pl->part[k].v[HRM_DIM_CPU] : 0;
        cores += (used + 999) / 1000;
    }
    return cores <= h->n->cores;
}

/* The lowest idle GPUs of the host whose memory fits the task (as
 * hrm_state_pick_gpus picks them), or false. */
static bool pick_gpus(const struct hrm_ru_host *h, const struct hrm_res *req, uint32_t *mask)
{
    int64_t want = req->v[HRM_DIM_GPU], per_gpu = (req->v[HRM_DIM_GPU_MEM] + want - 1) / want;
    int64_t got = 0;
    *mask = 0;
    for (int32_t g = 0; g < h->n->gpus && got < want; g++) {
        if ((h->gpu_busy & (1u << g)) || h->ru[g].gmem < per_gpu)
            continue;
        *mask |= 1u << g;
        got++;
    }
    return got == want;
}

/* A task asking k > 1 GPUs: idle GPUs only (no stacking), the lowest that
 * fit; its cores spread evenly over their units (flexible), or filling each
 * unit's free bound cores in turn (rigid). */
static bool plan_gpus(const struct hrm_ru_host *h, const struct hrm_workload *wl, int32_t task,
                      struct hrm_ru_rules r, struct hrm_ru_plan *pl)
{
    const struct hrm_res *req = &wl->tasks[task].req;
    int64_t k = req->v[HRM_DIM_GPU], cpu = req->v[HRM_DIM_CPU], left = cpu;
    uint32_t mask;
    if (!pick_gpus(h, req, &mask))
        return false;
    int64_t i = 0;
    for (int32_t g = 0; g < h->n->gpus; g++) {
        if (!(mask >> g & 1u))
            continue;
        if (h->ru[g].ngpu_tasks > 0 || h->solo[g] > 0)
            return false;
        int64_t mine = r.flex ? cpu / k + (i < cpu % k) : unit_spare(&h->ru[g]);
        mine = mine < left ? mine : left;
        mine = mine > 0 ? mine : 0;
        hrm_ru_plan_add(pl, h->first + g, mine, 1, hrm_ru_task_gmem(req), wl->tasks[task].gpu_milli);
        left -= mine;
        i++;
    }
    pl->gpu_mask = mask;
    return left == 0;
}

bool hrm_ru_host_can_start(const struct hrm_ru_host *h, const struct hrm_workload *wl,
                           int32_t task, int32_t u, struct hrm_ru_rules r, struct hrm_ru_plan *pl)
{
    const struct hrm_ru *ru = &h->ru[u];
    int32_t gpus = h->n->gpus;
    const struct hrm_res *req = &wl->tasks[task].req;
    int32_t milli = wl->tasks[task].gpu_milli;
    int64_t cpu = req->v[HRM_DIM_CPU];
    pl->n = 0;
    pl->gpu_mask = 0;
    if (!h->up || !node_dims_fit(req, h->free))
        return false;
    if (is_gpu_task(wl, task)) {
        if (req->v[HRM_DIM_GPU] > 1) {
            if (!plan_gpus(h, wl, task, r, pl))
                return false;
        } else {
            if (!hrm_ru_fits_share(ru, req, milli) || h->solo[u] > 0 ||
                (ru->ngpu_tasks > 0 && !hrm_ru_task_stackable(wl, task)))
                return false;
            hrm_ru_plan_add(pl, h->first + u, cpu, 1, hrm_ru_task_gmem(req), milli);
            pl->gpu_mask = 1u << ru->gpu;
        }
        if (r.flex) /* the unit grows into free cores of the node */
            return rebind_fits(h, pl);
        for (int32_t k = 0; k < pl->n; k++)
            if (pl->part[k].v[HRM_DIM_CPU] > unit_spare(&h->ru[pl->unit[k] - h->first]))
                return false;
        return true;
    }
    if (hrm_ru_fits(ru, req)) {
        hrm_ru_plan_add(pl, h->first + u, cpu, 0, 0, 0);
        return true;
    }
    if (!r.lend)
        return false;
    /* P0 binding (3): borrow the idle bound cores of a GPU unit... */
    for (int32_t g = 0; g < gpus; g++) {
        if (unit_spare(&h->ru[g]) >= cpu) {
            hrm_ru_plan_add(pl, h->first + g, cpu, 0, 0, 0);
            return true;
        }
    }
    /* ... or, for a task larger than any unit's free cores, those of the
     * CPU unit and of as many lending units as it takes. */
    int64_t left = cpu;
    for (int32_t i = 0; i <= gpus && left > 0; i++) {
        int32_t v = i == 0 ? gpus : i - 1;
        int64_t take = unit_spare(&h->ru[v]);
        take = take < left ? take : left;
        if (take > 0) {
            hrm_ru_plan_add(pl, h->first + v, take, 0, 0, 0);
            left -= take;
        }
    }
    if (left > 0)
        pl->n = 0;
    return left == 0;
}

int64_t hrm_ru_host_gpu_free(const struct hrm_ru_host *h, int32_t u)
{
    const struct hrm_ru *ru = &h->ru[u];
    return ru->gpu < 0 || h->solo[u] > 0 ? 0 : ru->gmem - ru->gmem_used;
}

int64_t hrm_ru_host_node_gpu_free(const struct hrm_ru_host *h)
{
    int64_t free = 0;
    for (int32_t u = 0; u <= h->n->gpus; u++)
        free += hrm_ru_host_gpu_free(h, u);
    return free;
}

int64_t hrm_ru_host_gpu_cap(const struct hrm_ru_host *h)
{
    int64_t cap = 0;
    for (int32_t u = 0; u <= h->n->gpus; u++)
        if (h->ru[u].gpu >= 0)
            cap += h->ru[u].gmem;
    return cap;
}

void hrm_ru_host_cost(const struct hrm_ru_host *h, const struct hrm_workload *wl, int32_t task,
                      int32_t u, struct hrm_ru_cost *cost)
{
    const struct hrm_res *req = &wl->tasks[task].req;
    if (!is_gpu_task(wl, task)) {
        /* the GPU capacity its cores would strand (node-level, hrm_ru_cost_cpu_task) */
        hrm_ru_cost_cpu_task(cost, h->free->v[HRM_DIM_CPU] - req->v[HRM_DIM_CPU],
                             h->n->capacity.v[HRM_DIM_CPU], hrm_ru_host_node_gpu_free(h),
                             hrm_ru_host_gpu_cap(h));
        return;
    }
    /* what it leaves to stack into: a task that runs alone takes its GPUs whole */
    bool shares = hrm_ru_task_stackable(wl, task);
    int64_t takes = shares ? hrm_ru_task_gmem(req) : hrm_ru_host_gpu_free(h, u);
    cost->sharing = shares ? h->ru[u].ngpu_tasks : 0;
    cost->gpu_left = hrm_ru_host_gpu_free(h, u) - takes;
    cost->node_left = hrm_ru_host_node_gpu_free(h) - req->v[HRM_DIM_GPU] * takes;
}

int32_t hrm_ru_host_place(const struct hrm_ru_host *h, const struct hrm_workload *wl,
                          int32_t task, struct hrm_ru_rules r, struct hrm_ru_cost *cost,
                          struct hrm_ru_plan *plan)
{
    const struct hrm_res *req = &wl->tasks[task].req;
    bool gpu = is_gpu_task(wl, task);
    int32_t best = -1;
    struct hrm_ru_plan pl;
    for (int32_t u = 0; u <= h->n->gpus; u++) {
        if (!hrm_ru_host_admits(h, wl, task, u, r) || !hrm_ru_host_can_start(h, wl, task, u, r, &pl))
            continue;
        struct hrm_ru_cost c = {.queue = h->ru[u].ntasks};
        hrm_ru_host_cost(h, wl, task, u, &c);
        bool exact = !gpu && unit_spare(&h->ru[u]) == req->v[HRM_DIM_CPU];
        if (best < 0 || exact || hrm_ru_prefer(&c, cost)) {
            best = u;
            *cost = c;
            *plan = pl;
        }
        if (exact)
            break; /* taken at once: no fragment left */
    }
    return best;
}
