/* Placement policies of the fragmentation experiment: best-fit, one task per GPU, HRM stacking,
 * FGD. */
#include <string.h>

#include "frag_private.h"
#include "hrm/alloc.h"
#include "hrm/ru.h"

/* cpu, memory and GPU model; GPUs are each policy's business. */
static bool fits_host(const struct hrm_frag_node *n, const struct hrm_frag_pod *p)
{
    return n->cpu_left >= p->cpu && n->mem_left >= p->mem &&
           (p->num_gpu == 0 || frag_model_ok(n, p->models));
}

static bool fractional(const struct hrm_frag_pod *p)
{
    return p->num_gpu == 1 && p->gpu_milli < HRM_FRAG_MILLI;
}

/* The count lowest-numbered whole free GPUs of n, or 0 if there are fewer. */
static uint32_t whole_gpus(const struct hrm_frag_node *n, int32_t count)
{
    uint32_t mask = 0;
    for (int32_t g = 0; g < n->gpus && count > 0; g++)
        if (n->gpu_left[g] == HRM_FRAG_MILLI) {
            mask |= 1u << g;
            count--;
        }
    return count == 0 ? mask : 0;
}

static int64_t gpu_left_total(const struct hrm_frag_node *n)
{
    int64_t left = 0;
    for (int32_t g = 0; g < n->gpus; g++)
        left += n->gpu_left[g];
    return left;
}

/* ---- best-fit and one task per GPU ---- */

/* Best-fit's choice on one node: the GPU with the least free share that fits
 * (sharing), else whole free GPUs.  exclusive: a fractional pod takes a whole GPU. */
static bool fit_on_node(const struct hrm_frag_node *n, const struct hrm_frag_pod *p, bool exclusive,
                        struct hrm_frag_choice *ch)
{
    ch->gpus = 0;
    ch->milli_each = 0;
    if (!fits_host(n, p))
        return false;
    if (p->num_gpu == 0)
        return true;
    if (fractional(p) && !exclusive) {
        int32_t best = -1;
        for (int32_t g = 0; g < n->gpus; g++)
            if (n->gpu_left[g] >= p->gpu_milli && (best < 0 || n->gpu_left[g] < n->gpu_left[best]))
                best = g;
        if (best < 0)
            return false;
        ch->gpus = 1u << best;
        ch->milli_each = p->gpu_milli;
        return true;
    }
    ch->gpus = whole_gpus(n, p->num_gpu);
    ch->milli_each = HRM_FRAG_MILLI;
    return ch->gpus != 0;
}

/* Best-fit: the node left with the least free resources, as the sum of its free
 * cpu and free GPU shares, each relative to the node's capacity.  A node
 * without GPU has no GPU term, so cpu-only pods go to cpu-only nodes first. */
static int choose_bestfit(const struct hrm_frag_cluster *c, const struct hrm_frag_pod *p,
                          bool exclusive, struct hrm_frag_choice *out)
{
    double best = 0;
    int found = -HRM_ENOFIT;
    for (int32_t i = 0; i < c->nnodes; i++) {
        const struct hrm_frag_node *n = &c->nodes[i];
        struct hrm_frag_choice ch;
        if (!fit_on_node(n, p, exclusive, &ch))
            continue;
        double score = (double)(n->cpu_left - p->cpu) / (double)n->cpu_cap;
        if (n->gpus > 0) {
            int64_t held = (int64_t)__builtin_popcount(ch.gpus) * ch.milli_each;
            score += (double)(gpu_left_total(n) - held) / (double)(n->gpus * HRM_FRAG_MILLI);
        }
        if (found < 0 || score < best) {
            best = score;
            *out = ch;
            out->node = i;
            found = 0;
        }
    }
    return found;
}

/* ---- HRM queue stacking ---- */

bool hrm_frag_ru_admit(int32_t ru_free_milli, int32_t ru_tasks, int32_t pod_milli)
{
    struct hrm_ru ru = {.gpu = 0,
                        .type = HRM_RU_GPU,
                        .gmem = HRM_FRAG_MILLI,
                        .ntasks = ru_tasks,
                        .ngpu_tasks = ru_tasks,
                        .gmem_used = HRM_FRAG_MILLI - ru_free_milli};
    struct hrm_res req = {{0}};
    req.v[HRM_DIM_GPU] = 1;
    req.v[HRM_DIM_GPU_MEM] = pod_milli;
    return hrm_ru_fits(&ru, &req);
}

/* Growth of node's expected fragmentation (the gradient FGD descends) if the
 * pod (memory aside) is placed as ch. */
static double growth(const struct hrm_frag_cluster *c, const struct hrm_frag_pod *nomem,
                     const struct hrm_frag_choice *ch)
{
    if (c->ntypes == 0 || !c->frag)
        return 0; /* no target workload: nothing to measure against */
    struct hrm_frag_node after = c->nodes[ch->node];
    frag_node_place(&after, nomem, ch);
    return hrm_frag_node_amount(&after, c->types, c->ntypes) - c->frag[ch->node];
}

/*
 * P0's placement on node i (memory aside): its best option by the hrm
 * policy's own rule (hrm_ru_prefer, include/hrm/ru.h), with no queue to wait
 * in.  Every RU that admits the pod (GPU RUs by hrm_frag_ru_admit) starts it
 * at once and stacked pods do not slow each other here (no run time), so the
 * wait and the kernels sharing are 0 everywhere and fragmentation decides:
 * first the least growth of the node's expected fragmentation for the target
 * workload (the same measure FGD descends), then, for a GPU pod, the GPU left
 * with the least free share and the node left with the least free GPU share;
 * for a pod without GPU, the node where its cores strand the least GPU share
 * (hrm_ru_cost_cpu_task); then the shortest queue.  Whole-GPU pods take idle
 * RUs.  False if the pod cannot go there.
 */
static bool stack_node(const struct hrm_frag_cluster *c, int32_t i, const struct hrm_frag_pod *p,
                       struct hrm_ru_cost *best, struct hrm_frag_choice *out)
{
    const struct hrm_frag_node *n = &c->nodes[i];
    struct hrm_frag_pod nomem = *p;
    nomem.mem = 0;
    if (!fits_host(n, &nomem))
        return false;
    struct hrm_frag_choice opt[HRM_TRACE_MAX_GPUS];
    struct hrm_ru_cost cost[HRM_TRACE_MAX_GPUS];
    int nopt = 0;
    int64_t node_left = gpu_left_total(n);
    if (p->num_gpu == 0) {
        opt[nopt] = (struct hrm_frag_choice){.node = i};
        cost[nopt] = (struct hrm_ru_cost){.queue = n->cpu_tasks};
        hrm_ru_cost_cpu_task(&cost[nopt++], n->cpu_left - p->cpu, n->cpu_cap, node_left,
                             (int64_t)n->gpus * HRM_FRAG_MILLI);
    } else if (!fractional(p)) {
        uint32_t mask = whole_gpus(n, p->num_gpu);
        if (mask) {
            opt[nopt] = (struct hrm_frag_choice){
                .node = i, .gpus = mask, .milli_each = HRM_FRAG_MILLI};
            cost[nopt++] = (struct hrm_ru_cost){
                .node_left = node_left - (int64_t)p->num_gpu * HRM_FRAG_MILLI};
        }
    } else {
        for (int32_t g = 0; g < n->gpus; g++) {
            if (!hrm_frag_ru_admit(n->gpu_left[g], n->gpu_tasks[g], p->gpu_milli))
                continue;
            opt[nopt] = (struct hrm_frag_choice){
                .node = i, .gpus = 1u << g, .milli_each = p->gpu_milli};
            cost[nopt++] = (struct hrm_ru_cost){.gpu_left = n->gpu_left[g] - p->gpu_milli,
                                                .node_left = node_left - p->gpu_milli,
                                                .queue = n->gpu_tasks[g]};
        }
    }
    bool found = false;
    for (int k = 0; k < nopt; k++) {
        /* GPUs with the same free share grow the measure alike: measure once. */
        int same = 0;
        while (same < k && !(fractional(p) && n->gpu_left[__builtin_ctz(opt[same].gpus)] ==
                                                  n->gpu_left[__builtin_ctz(opt[k].gpus)]))
            same++;
        cost[k].frag_growth = same < k ? cost[same].frag_growth : growth(c, &nomem, &opt[k]);
        if (!found || hrm_ru_prefer(&cost[k], best)) {
            *best = cost[k];
            *out = opt[k];
            found = true;
        }
    }
    return found;
}

/* ---- FGD ---- */

/* The option on node n (memory aside) that least increases its expected
 * fragmentation; false if the pod cannot go there. */
static bool fgd_node(const struct hrm_frag_cluster *c, int32_t node, const struct hrm_frag_pod *p,
                     double *delta, struct hrm_frag_choice *ch)
{
    const struct hrm_frag_node *n = &c->nodes[node];
    struct hrm_frag_pod nomem = *p;
    nomem.mem = 0;
    if (!fits_host(n, &nomem))
        return false;
    struct hrm_frag_choice opt[HRM_TRACE_MAX_GPUS];
    int nopt = 0;
    if (p->num_gpu == 0) {
        opt[nopt++] = (struct hrm_frag_choice){.node = node};
    } else if (fractional(p)) {
        /* GPUs with the same free share are interchangeable: try the first of each. */
        for (int32_t g = 0; g < n->gpus; g++) {
            if (n->gpu_left[g] < p->gpu_milli)
                continue;
            bool seen = false;
            for (int32_t h = 0; h < g && !seen; h++)
                seen = n->gpu_left[h] == n->gpu_left[g];
            if (!seen)
                opt[nopt++] = (struct hrm_frag_choice){
                    .node = node, .gpus = 1u << g, .milli_each = p->gpu_milli};
        }
    } else {
        uint32_t mask = whole_gpus(n, p->num_gpu);
        if (mask)
            opt[nopt++] =
                (struct hrm_frag_choice){.node = node, .gpus = mask, .milli_each = HRM_FRAG_MILLI};
    }
    bool found = false;
    for (int k = 0; k < nopt; k++) {
        double d = growth(c, &nomem, &opt[k]);
        if (!found || d < *delta) {
            *delta = d;
            *ch = opt[k];
            found = true;
        }
    }
    return found;
}

/* The memo entry of (node, type), recomputed by the cluster's policy when the node changed since;
 * NULL when the pod has no type (nothing is memoised). */
static struct fgd_memo *memo_of(struct hrm_frag_cluster *c, int32_t node, int32_t type)
{
    if (type < 0 || type >= c->ntypes)
        return NULL;
    if (!c->memo)
        c->memo = hrm_calloc((size_t)c->nnodes * (size_t)c->ntypes + 1, sizeof(*c->memo));
    return &c->memo[(size_t)node * (size_t)c->ntypes + (size_t)type];
}

/* Node i's best option for the pod under policy (hrm or FGD), memoised per
 * (node, pod type) until the node changes; in *here when the pod has no type. */
static const struct fgd_memo *node_best(struct hrm_frag_cluster *c, enum hrm_frag_policy policy,
                                        int32_t i, const struct hrm_frag_pod *p, int32_t type,
                                        struct fgd_memo *here)
{
    struct fgd_memo *m = memo_of(c, i, type);
    if (m && m->version1 == c->version[i] + 1)
        return m;
    if (!m)
        m = here;
    m->feasible = policy == HRM_FRAG_FGD ? fgd_node(c, i, p, &m->delta, &m->choice)
                                         : stack_node(c, i, p, &m->cost, &m->choice);
    if (m != here)
        m->version1 = c->version[i] + 1;
    return m;
}

/* The nodes in order, each by its best option, the first best kept: the
 * memoised per-node best (most nodes do not change between arrivals) gives
 * the same choice as scanning every option.  FGD: the least growth of
 * expected fragmentation; hrm: hrm_ru_prefer. */
static int choose_by_node(struct hrm_frag_cluster *c, enum hrm_frag_policy policy,
                          const struct hrm_frag_pod *p, int32_t type, struct hrm_frag_choice *out)
{
    struct fgd_memo best = {0}, here;
    int found = -HRM_ENOFIT;
    for (int32_t i = 0; i < c->nnodes; i++) {
        if (c->nodes[i].mem_left < p->mem)
            continue;
        const struct fgd_memo *m = node_best(c, policy, i, p, type, &here);
        if (!m->feasible)
            continue;
        bool better = policy == HRM_FRAG_FGD ? m->delta < best.delta
                                             : hrm_ru_prefer(&m->cost, &best.cost);
        if (found < 0 || better) {
            best = *m;
            found = 0;
        }
    }
    if (found == 0)
        *out = best.choice;
    return found;
}

int hrm_frag_choose(struct hrm_frag_cluster *c, enum hrm_frag_policy policy,
                    const struct hrm_frag_pod *pod, int32_t type, struct hrm_frag_choice *out)
{
    switch (policy) {
    case HRM_FRAG_BESTFIT:
        return choose_bestfit(c, pod, false, out);
    case HRM_FRAG_EXCLUSIVE:
        return choose_bestfit(c, pod, true, out);
    case HRM_FRAG_STACK:
        return choose_by_node(c, policy, pod, type, out);
    case HRM_FRAG_FGD:
        return choose_by_node(c, policy, pod, type, out);
    default:
        return -EINVAL;
    }
}
