/* Cluster model: racks, nodes with static attributes, resource units, network parameters. */
#ifndef HRM_CLUSTER_H
#define HRM_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "hrm/error.h"
#include "hrm/resource.h"

#define HRM_NAME_MAX 48
#define HRM_MAX_GPUS_PER_NODE 32 /* GPU sets are uint32_t masks */

enum hrm_disk_kind { HRM_DISK_HDD, HRM_DISK_SSD, HRM_DISK_NVME };

enum hrm_unit_kind {
    HRM_UNIT_GPU, /* one GPU and the cores bound to it (P0 resource unit) */
    HRM_UNIT_CPU  /* the node's remaining cores */
};

/* A resource unit: the schedulable piece of a node (P0). */
struct hrm_unit {
    enum hrm_unit_kind kind;
    int32_t node;
    int32_t gpu_index;  /* GPU number on the node, -1 for a CPU unit */
    int32_t core_first; /* cores bound to this unit: [core_first, core_first+core_count) */
    int32_t core_count;
    int64_t gpu_mem;    /* bytes of GPU memory (GPU unit) */
};

struct hrm_node {
    char name[HRM_NAME_MAX];
    int32_t id;
    int32_t rack;
    int32_t cores;
    double cpu_speed;   /* relative to the reference (1.0): compute time = duration / speed */
    int64_t mem;
    int64_t disk_size;
    enum hrm_disk_kind disk_kind;
    double disk_bw;     /* bytes/s of the node's local disk (D) */
    int32_t gpus;
    struct hrm_res capacity; /* cpu = cores*1000, mem, gpu, gpu_mem (sum), disk, net */
    int32_t numa;       /* NUMA domains (>= 1): cores split evenly, in order (include/hrm/ru.h) */
    int8_t gpu_numa[HRM_MAX_GPUS_PER_NODE]; /* domain each GPU is attached to */
    int32_t unit_first; /* units [unit_first, unit_first+unit_count): GPUs first, then the CPU unit */
    int32_t unit_count;
};

struct hrm_rack {
    char name[HRM_NAME_MAX];
    int32_t nnodes;
};

struct hrm_netcfg {
    double disk_bw;     /* default D, bytes/s, for nodes that give none */
    double rack_bw;     /* B_r: each node's link to its rack switch, bytes/s */
    double core_bw;     /* B_s: each rack's uplink to the core, bytes/s */
    int64_t latency_us; /* one-way message latency between any two endpoints */
};

/* What a spec says about one node; hrm_cluster_add_node derives the rest. */
struct hrm_node_desc {
    const char *name;
    int32_t rack;
    int32_t cores;
    double cpu_speed;     /* 0 means 1.0 */
    int64_t mem;
    int64_t disk_size;
    enum hrm_disk_kind disk_kind;
    double disk_bw;       /* 0 means the cluster default */
    int32_t gpus;
    int64_t gpu_mem;      /* per GPU */
    int32_t cores_per_gpu;/* cores bound to each GPU unit; 0 means cores/(gpus+1) */
    double net_bw;        /* 0 means rack_bw */
    int32_t numa;         /* NUMA domains; 0 means 1 */
    const int8_t *gpu_numa; /* per GPU, its domain; NULL spreads GPUs evenly over domains */
};

struct hrm_cluster {
    struct hrm_node *nodes;
    int32_t nnodes;
    struct hrm_rack *racks;
    int32_t nracks;
    struct hrm_unit *units;
    int32_t nunits;
    struct hrm_netcfg net;
    struct hrm_res total; /* sum of node capacities */
    /* private: growth bookkeeping and the node-name index (open addressing) */
    size_t cap_nodes, cap_racks, cap_units;
    int32_t *name_index;
    size_t name_index_cap;
};

struct hrm_cluster *hrm_cluster_new(const struct hrm_netcfg *net);
void hrm_cluster_free(struct hrm_cluster *c); /* NULL is a no-op */

/* Adds a rack; returns its index or a negative code (-EEXIST for a duplicate name). */
int hrm_cluster_add_rack(struct hrm_cluster *c, const char *name, struct hrm_error *err);
/* Adds a node; returns its id or a negative code (bad rack, duplicate name,
 * more than HRM_MAX_GPUS_PER_NODE GPUs, non-positive cores). */
int hrm_cluster_add_node(struct hrm_cluster *c, const struct hrm_node_desc *desc,
                         struct hrm_error *err);
int hrm_cluster_find_node(const struct hrm_cluster *c, const char *name); /* id or -1 */
int hrm_cluster_find_rack(const struct hrm_cluster *c, const char *name); /* index or -1 */

#endif
