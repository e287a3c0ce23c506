/* P0 resource units: NUMA-aware core binding, stacking admission, placement preference,
 * cpuset text, fair share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/ru.h"

void hrm_topology_of_node(const struct hrm_node *n, struct hrm_topology *out)
{
    memset(out, 0, sizeof(*out));
    out->cores = n->cores;
    out->numa = n->numa > 0 ? n->numa : 1;
    out->gpus = n->gpus;
    for (int32_t g = 0; g < n->gpus; g++)
        out->gpu_numa[g] = n->gpu_numa[g];
}

int32_t hrm_topology_core_numa(const struct hrm_topology *t, int32_t core)
{
    /* Inverse of "domain d holds [d*cores/numa, (d+1)*cores/numa)". */
    int32_t d = (int32_t)((int64_t)core * t->numa / t->cores);
    while (d > 0 && core < (int64_t)d * t->cores / t->numa)
        d--;
    while (d + 1 < t->numa && core >= (int64_t)(d + 1) * t->cores / t->numa)
        d++;
    return d;
}

static void cores_set(struct hrm_ru_cores *c, int32_t core)
{
    c->bits[core / 64] |= UINT64_C(1) << (core % 64);
}

/* Takes up to *left free cores of domain d, lowest first. */
static void take_domain(const struct hrm_topology *t, int32_t d, bool *used, int32_t *left,
                        struct hrm_ru *ru)
{
    int32_t lo = (int32_t)((int64_t)d * t->cores / t->numa);
    int32_t hi = (int32_t)((int64_t)(d + 1) * t->cores / t->numa);
    for (int32_t c = lo; *left > 0 && c < hi; c++) {
        if (used[c])
            continue;
        used[c] = true;
        cores_set(&ru->cores, c);
        ru->ncores++;
        (*left)--;
    }
}

int hrm_ru_bind(const struct hrm_topology *t, int32_t node, const int32_t *want, bool lend,
                struct hrm_ru *out, struct hrm_error *err)
{
    if (t->cores <= 0 || t->cores > HRM_RU_MAX_CORES)
        return hrm_errorf(err, -EINVAL, "node %d: %d cores (RUs name at most %d)", node, t->cores,
                          HRM_RU_MAX_CORES);
    if (t->numa < 1 || t->numa > t->cores || t->gpus < 0 || t->gpus > HRM_MAX_GPUS_PER_NODE)
        return hrm_errorf(err, -EINVAL, "node %d: bad topology (%d NUMA domains, %d GPUs)", node,
                          t->numa, t->gpus);
    int64_t sum = 0;
    for (int32_t g = 0; g < t->gpus; g++) {
        if (want[g] < 0 || t->gpu_numa[g] < 0 || t->gpu_numa[g] >= t->numa)
            return hrm_errorf(err, -EINVAL, "node %d: GPU %d: bad want or NUMA domain", node, g);
        sum += want[g];
    }
    if (sum > t->cores)
        return hrm_errorf(err, -EINVAL, "node %d: GPUs want %lld cores of %d", node, (long long)sum,
                          t->cores);
    bool used[HRM_RU_MAX_CORES] = {false};
    for (int32_t g = 0; g <= t->gpus; g++) {
        memset(&out[g], 0, sizeof(out[g]));
        out[g].node = node;
    }
    for (int32_t g = 0; g < t->gpus; g++) {
        struct hrm_ru *ru = &out[g];
        ru->gpu = g;
        ru->type = lend ? HRM_RU_GPU_LEND : HRM_RU_GPU;
        int32_t left = want[g], home = t->gpu_numa[g];
        take_domain(t, home, used, &left, ru);
        /* Spill to the nearest domains: distance 1 below, 1 above, 2 below... */
        for (int32_t dist = 1; left > 0 && dist < t->numa; dist++) {
            if (home - dist >= 0)
                take_domain(t, home - dist, used, &left, ru);
            if (home + dist < t->numa)
                take_domain(t, home + dist, used, &left, ru);
        }
    }
    struct hrm_ru *cpu = &out[t->gpus];
    cpu->gpu = -1;
    cpu->type = HRM_RU_CPU;
    for (int32_t c = 0; c < t->cores; c++) {
        if (!used[c]) {
            cores_set(&cpu->cores, c);
            cpu->ncores++;
        }
    }
    return 0;
}

int hrm_ru_bind_node(const struct hrm_cluster *c, int32_t node, bool lend, struct hrm_ru *out,
                     struct hrm_error *err)
{
    if (node < 0 || node >= c->nnodes)
        return hrm_errorf(err, -EINVAL, "no node %d", node);
    const struct hrm_node *n = &c->nodes[node];
    struct hrm_topology t;
    int32_t want[HRM_MAX_GPUS_PER_NODE];
    hrm_topology_of_node(n, &t);
    for (int32_t g = 0; g < n->gpus; g++)
        want[g] = c->units[n->unit_first + g].core_count;
    int rc = hrm_ru_bind(&t, node, want, lend, out, err);
    for (int32_t g = 0; rc == 0 && g < n->gpus; g++)
        out[g].gmem = c->units[n->unit_first + g].gpu_mem;
    return rc;
}

int64_t hrm_ru_task_gmem(const struct hrm_res *req)
{
    int64_t g = req->v[HRM_DIM_GPU];
    return g > 0 ? (req->v[HRM_DIM_GPU_MEM] + g - 1) / g : 0;
}

bool hrm_ru_fits_share(const struct hrm_ru *ru, const struct hrm_res *req, int32_t gpu_milli)
{
    if (req->v[HRM_DIM_GPU] > 0) {
        if (ru->type == HRM_RU_CPU)
            return false;
        if (ru->max_stack > 0 && ru->ngpu_tasks >= ru->max_stack)
            return false;
        if (gpu_milli > 0 && ru->share_used + gpu_milli > 1000)
            return false;
        return ru->gmem_used + hrm_ru_task_gmem(req) <= ru->gmem;
    }
    if (ru->type == HRM_RU_GPU)
        return false;
    return ru->cpu_used + req->v[HRM_DIM_CPU] <= (int64_t)ru->ncores * 1000;
}

bool hrm_ru_fits(const struct hrm_ru *ru, const struct hrm_res *req)
{
    return hrm_ru_fits_share(ru, req, 0);
}

static void occupancy(struct hrm_ru *ru, const struct hrm_res *req, int32_t gpu_milli, int sign)
{
    bool gpu = req->v[HRM_DIM_GPU] > 0;
    ru->ntasks += sign;
    ru->ngpu_tasks += gpu ? sign : 0;
    ru->gmem_used += sign * hrm_ru_task_gmem(req);
    ru->cpu_used += sign * req->v[HRM_DIM_CPU];
    ru->share_used += gpu ? sign * gpu_milli : 0;
}

void hrm_ru_add(struct hrm_ru *ru, const struct hrm_res *req)
{
    occupancy(ru, req, 0, +1);
}

void hrm_ru_remove(struct hrm_ru *ru, const struct hrm_res *req)
{
    occupancy(ru, req, 0, -1);
}

void hrm_ru_add_share(struct hrm_ru *ru, const struct hrm_res *req, int32_t gpu_milli)
{
    occupancy(ru, req, gpu_milli, +1);
}

void hrm_ru_remove_share(struct hrm_ru *ru, const struct hrm_res *req, int32_t gpu_milli)
{
    occupancy(ru, req, gpu_milli, -1);
}

int64_t hrm_ru_lendable(const struct hrm_ru *ru)
{
    if (ru->type != HRM_RU_GPU_LEND)
        return 0;
    int64_t free = (int64_t)ru->ncores * 1000 - ru->cpu_used;
    return free > 0 ? free : 0;
}

int hrm_ru_format_cpus(const struct hrm_ru *ru, char *buf, size_t len)
{
    size_t off = 0;
    int need = 0;
    if (len)
        buf[0] = '\0';
    for (int32_t c = 0; c < HRM_RU_MAX_CORES; c++) {
        if (!hrm_ru_has_core(ru, c))
            continue;
        int32_t e = c;
        while (hrm_ru_has_core(ru, e + 1))
            e++;
        char piece[32];
        int k = e > c ? snprintf(piece, sizeof(piece), "%s%d-%d", need ? "," : "", c, e)
                      : snprintf(piece, sizeof(piece), "%s%d", need ? "," : "", c);
        if (off + (size_t)k < len) {
            memcpy(buf + off, piece, (size_t)k + 1);
            off += (size_t)k;
        }
        need += k;
        c = e;
    }
    return need;
}

int hrm_ru_format_gpus(const struct hrm_ru *ru, char *buf, size_t len)
{
    if (ru->gpu < 0) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    return snprintf(buf, len, "%d", ru->gpu);
}

bool hrm_ru_prefer(const struct hrm_ru_cost *a, const struct hrm_ru_cost *b)
{
    if (a->wait != b->wait)
        return a->wait < b->wait;
    if (a->sharing != b->sharing)
        return a->sharing < b->sharing;
    if (a->frag_growth != b->frag_growth)
        return a->frag_growth < b->frag_growth;
    if (a->gpu_left != b->gpu_left)
        return a->gpu_left < b->gpu_left;
    if (a->node_left != b->node_left)
        return a->node_left < b->node_left;
    if (a->stranded != b->stranded)
        return a->stranded < b->stranded;
    if (a->node_free != b->node_free)
        return a->node_free < b->node_free;
    return a->queue < b->queue;
}

/* Millionths of cap that part is, with part clamped to [0, cap]; 0 when cap <= 0. */
static int64_t share_ppm(int64_t part, int64_t cap)
{
    if (cap <= 0 || part <= 0)
        return 0;
    if (part >= cap)
        return 1000000;
    return (int64_t)((double)part * 1e6 / (double)cap);
}

void hrm_ru_cost_cpu_task(struct hrm_ru_cost *cost, int64_t cpu_free, int64_t cpu_cap,
                          int64_t gpu_free, int64_t gpu_cap)
{
    int64_t cpu = share_ppm(cpu_free, cpu_cap), gpu = share_ppm(gpu_free, gpu_cap);
    cost->stranded = gpu > cpu ? gpu - cpu : 0;
    cost->node_free = cpu + gpu;
}

int64_t hrm_ru_fair_share(int64_t q, int64_t k, int64_t n_j)
{
    if (k <= 0)
        return n_j;
    int64_t a = q / k;
    return a < n_j ? a : n_j;
}
