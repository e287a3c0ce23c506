/* Cluster model builders: racks, nodes and their resource units. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/cluster.h"
#include "hrm/hash.h"

struct hrm_cluster *hrm_cluster_new(const struct hrm_netcfg *net)
{
    struct hrm_cluster *c = hrm_calloc(1, sizeof(*c));
    if (net)
        c->net = *net;
    if (c->net.disk_bw <= 0)
        c->net.disk_bw = 160e6;
    if (c->net.rack_bw <= 0)
        c->net.rack_bw = 125e6;
    if (c->net.core_bw <= 0)
        c->net.core_bw = 125e6;
    return c;
}

void hrm_cluster_free(struct hrm_cluster *c)
{
    if (!c)
        return;
    hrm_free(c->nodes);
    hrm_free(c->racks);
    hrm_free(c->units);
    hrm_free(c->name_index);
    hrm_free(c);
}

/* FNV-1a: node names are short, and clusters of 100,000 nodes must build fast. */
static size_t name_hash(const char *name)
{
    return (size_t)hrm_hash_str(name);
}

/* Slot of name in the index: where it is, or the empty slot where it would go. */
static size_t name_slot(const struct hrm_cluster *c, const char *name)
{
    size_t mask = c->name_index_cap - 1, i = name_hash(name) & mask;
    while (c->name_index[i] >= 0 && strcmp(c->nodes[c->name_index[i]].name, name) != 0)
        i = (i + 1) & mask;
    return i;
}

/* Keeps the index at most half full so probes stay short. */
static void name_index_reserve(struct hrm_cluster *c, size_t nodes)
{
    if (nodes * 2 <= c->name_index_cap)
        return;
    size_t cap = c->name_index_cap ? c->name_index_cap : 64;
    while (nodes * 2 > cap)
        cap *= 2;
    hrm_free(c->name_index);
    c->name_index = hrm_alloc(cap * sizeof(int32_t));
    c->name_index_cap = cap;
    for (size_t i = 0; i < cap; i++)
        c->name_index[i] = -1;
    for (int32_t n = 0; n < c->nnodes; n++)
        c->name_index[name_slot(c, c->nodes[n].name)] = n;
}

int hrm_cluster_find_node(const struct hrm_cluster *c, const char *name)
{
    if (c->name_index_cap == 0)
        return -1;
    return c->name_index[name_slot(c, name)];
}

int hrm_cluster_find_rack(const struct hrm_cluster *c, const char *name)
{
    for (int32_t i = 0; i < c->nracks; i++)
        if (strcmp(c->racks[i].name, name) == 0)
            return i;
    return -1;
}

static int check_name(const char *name, const char *what, struct hrm_error *err)
{
    if (!name || !name[0])
        return hrm_errorf(err, -EINVAL, "%s name must not be empty", what);
    if (strlen(name) >= HRM_NAME_MAX)
        return hrm_errorf(err, -ENAMETOOLONG, "%s name '%.20s...' is longer than %d characters",
                          what, name, HRM_NAME_MAX - 1);
    return 0;
}

int hrm_cluster_add_rack(struct hrm_cluster *c, const char *name, struct hrm_error *err)
{
    int rc = check_name(name, "rack", err);
    if (rc)
        return rc;
    if (hrm_cluster_find_rack(c, name) >= 0)
        return hrm_errorf(err, -EEXIST, "rack '%s' is defined twice", name);
    HRM_GROW(c->racks, c->cap_racks, (size_t)c->nracks + 1);
    struct hrm_rack *r = &c->racks[c->nracks];
    memset(r, 0, sizeof(*r));
    strcpy(r->name, name);
    return c->nracks++;
}

int hrm_cluster_add_node(struct hrm_cluster *c, const struct hrm_node_desc *d,
                         struct hrm_error *err)
{
    int rc = check_name(d->name, "node", err);
    if (rc)
        return rc;
    if (d->rack < 0 || d->rack >= c->nracks)
        return hrm_errorf(err, -EINVAL, "node '%s': no rack %d", d->name, d->rack);
    if (d->cores <= 0)
        return hrm_errorf(err, -EINVAL, "node '%s': cores must be positive", d->name);
    if (d->gpus < 0 || d->gpus > HRM_MAX_GPUS_PER_NODE)
        return hrm_errorf(err, -EINVAL, "node '%s': gpus must be 0..%d", d->name,
                          HRM_MAX_GPUS_PER_NODE);
    if (d->mem < 0 || d->disk_size < 0 || d->gpu_mem < 0 || d->cpu_speed < 0 ||
        d->disk_bw < 0 || d->cores_per_gpu < 0)
        return hrm_errorf(err, -EINVAL, "node '%s': negative attribute", d->name);
    int32_t numa = d->numa > 0 ? d->numa : 1;
    if (numa > d->cores || numa > 64) /* gpu_numa is int8_t; no machine has more */
        return hrm_errorf(err, -EINVAL, "node '%s': %d NUMA domains (at most 64 and %d cores)",
                          d->name, numa, d->cores);
    for (int32_t g = 0; d->gpu_numa && g < d->gpus; g++)
        if (d->gpu_numa[g] < 0 || d->gpu_numa[g] >= numa)
            return hrm_errorf(err, -EINVAL, "node '%s': GPU %d on NUMA domain %d of %d", d->name,
                              g, d->gpu_numa[g], numa);
    int32_t per_gpu = d->cores_per_gpu ? d->cores_per_gpu : d->cores / (d->gpus + 1);
    if ((int64_t)per_gpu * d->gpus > d->cores)
        return hrm_errorf(err, -EINVAL, "node '%s': %d GPUs x %d bound cores exceed %d cores",
                          d->name, d->gpus, per_gpu, d->cores);
    /* Node names are looked up by specs and reports; keep them unique. */
    name_index_reserve(c, (size_t)c->nnodes + 1);
    size_t slot = name_slot(c, d->name);
    if (c->name_index[slot] >= 0)
        return hrm_errorf(err, -EEXIST, "node '%s' is defined twice", d->name);

    HRM_GROW(c->nodes, c->cap_nodes, (size_t)c->nnodes + 1);
    HRM_GROW(c->units, c->cap_units, (size_t)c->nunits + (size_t)d->gpus + 1);
    struct hrm_node *n = &c->nodes[c->nnodes];
    memset(n, 0, sizeof(*n));
    strcpy(n->name, d->name);
    n->id = c->nnodes;
    n->rack = d->rack;
    n->cores = d->cores;
    n->cpu_speed = d->cpu_speed > 0 ? d->cpu_speed : 1.0;
    n->mem = d->mem;
    n->disk_size = d->disk_size;
    n->disk_kind = d->disk_kind;
    n->disk_bw = d->disk_bw > 0 ? d->disk_bw : c->net.disk_bw;
    n->gpus = d->gpus;
    n->capacity.v[HRM_DIM_CPU] = (int64_t)d->cores * 1000;
    n->capacity.v[HRM_DIM_MEM] = d->mem;
    n->capacity.v[HRM_DIM_GPU] = d->gpus;
    n->capacity.v[HRM_DIM_GPU_MEM] = d->gpu_mem * d->gpus;
    n->capacity.v[HRM_DIM_DISK] = d->disk_size;
    n->capacity.v[HRM_DIM_NET] = (int64_t)(d->net_bw > 0 ? d->net_bw : c->net.rack_bw);
    n->numa = numa;
    for (int32_t g = 0; g < d->gpus; g++)
        n->gpu_numa[g] = (int8_t)(d->gpu_numa ? d->gpu_numa[g] : g * numa / d->gpus);
    n->unit_first = c->nunits;
    /* GPU units first, each bound to a contiguous run of cores (the cores
     * "near" it); the remaining cores form the CPU unit. */
    int32_t core = 0;
    for (int32_t g = 0; g < d->gpus; g++) {
        struct hrm_unit *u = &c->units[c->nunits++];
        u->kind = HRM_UNIT_GPU;
        u->node = n->id;
        u->gpu_index = g;
        u->core_first = core;
        u->core_count = per_gpu;
        u->gpu_mem = d->gpu_mem;
        core += per_gpu;
    }
    struct hrm_unit *u = &c->units[c->nunits++];
    u->kind = HRM_UNIT_CPU;
    u->node = n->id;
    u->gpu_index = -1;
    u->core_first = core;
    u->core_count = d->cores - core;
    u->gpu_mem = 0;
    n->unit_count = d->gpus + 1;
    hrm_res_add(&c->total, &n->capacity);
    c->racks[d->rack].nnodes++;
    c->name_index[slot] = n->id;
    return c->nnodes++;
}
