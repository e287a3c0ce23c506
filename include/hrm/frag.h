/* GPU fragmentation of GPU-sharing clusters (Weng et al., ATC '23): the measure, packing policies
 * and the experiment. */
#ifndef HRM_FRAG_H
#define HRM_FRAG_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/error.h"
#include "hrm/trace.h"

#define HRM_FRAG_MILLI 1000 /* one GPU, in thousandths */

/* A node during packing.  GPU amounts are thousandths of one GPU. */
struct hrm_frag_node {
    int64_t cpu_cap, mem_cap; /* milli-cores, MiB */
    int64_t cpu_left, mem_left;
    int32_t gpus;
    int32_t model; /* trace model index, -1 none */
    int32_t gpu_left[HRM_TRACE_MAX_GPUS];
    int32_t gpu_tasks[HRM_TRACE_MAX_GPUS]; /* pods on each GPU: the GPU RU's queue length */
    int32_t cpu_tasks;                     /* pods without GPU: the CPU RU's queue length */
};

/* What a pod asks for. */
struct hrm_frag_pod {
    int64_t cpu, mem;  /* milli-cores, MiB */
    int32_t num_gpu;   /* whole GPUs, or 1 with a share */
    int32_t gpu_milli; /* share of one GPU when num_gpu == 1, else 1000 */
    uint64_t models;   /* allowed GPU models, 0 = any */
};

/* One pod type of the target workload and its share of the pods (weights sum to 1). */
struct hrm_frag_type {
    struct hrm_frag_pod pod;
    double weight;
};

/*
 * F_n(m) of the paper: the GPU capacity of node n (thousandths) that pod type m
 * cannot use.  If m asks no GPU, may not use n's model, or cannot run on n
 * (too little cpu, or fewer than num_gpu GPUs with enough free share), every
 * free GPU share of n is a fragment; otherwise the free shares of the GPUs too
 * small for m are.  Memory is not part of the measure, as in the paper.
 */
int64_t hrm_frag_node_pod(const struct hrm_frag_node *n, const struct hrm_frag_pod *m);
/* Expected fragmentation of n for the target workload: sum of weight x F_n(m). */
double hrm_frag_node_amount(const struct hrm_frag_node *n, const struct hrm_frag_type *types,
                            int32_t ntypes);

enum hrm_frag_policy {
    HRM_FRAG_BESTFIT,   /* GPU sharing; the node left tightest, the tightest GPU */
    HRM_FRAG_EXCLUSIVE, /* one task per GPU: a fractional pod holds a whole GPU */
    HRM_FRAG_STACK,     /* HRM queue stacking (P0): GPU RU admission by GPU memory */
    HRM_FRAG_FGD,       /* the paper's: least growth of expected fragmentation */
    HRM_FRAG_NPOLICIES
};

const char *hrm_frag_policy_name(enum hrm_frag_policy p);
int hrm_frag_policy_parse(const char *name); /* policy or -1 */

/* Where a pod goes: node, GPUs (mask) and the share it holds on each. */
struct hrm_frag_choice {
    int32_t node;
    uint32_t gpus;
    int32_t milli_each;
};

/* A cluster being packed, with the target workload the measure uses. */
struct hrm_frag_cluster {
    struct hrm_frag_node *nodes;
    int32_t nnodes;
    const struct hrm_frag_type *types; /* borrowed, outlives the cluster */
    int32_t ntypes;
    double *frag; /* per node: hrm_frag_node_amount, kept current */
    double frag_total;
    int64_t gpu_cap, gpu_left; /* thousandths over the cluster */
    int64_t gpu_requested;     /* thousandths asked by the pods placed */
    /* FGD's memo: per (node, pod type) the best choice and its growth, valid
     * while the node's version matches (a node changes only when a pod lands). */
    uint32_t *version;
    struct fgd_memo *memo;
};

/* Builds an empty cluster from the trace's nodes.  types: borrowed. */
void hrm_frag_cluster_init(struct hrm_frag_cluster *c, const struct hrm_trace *t,
                           const struct hrm_frag_type *types, int32_t ntypes);
void hrm_frag_cluster_fini(struct hrm_frag_cluster *c);

/*
 * Chooses where pod goes under policy.  type is the index of the pod's type in
 * the target workload (same cpu, num_gpu, gpu_milli and models; FGD memoises
 * by it), or -1.  Returns 0 with *out, or -HRM_ENOFIT when no
 * node can take it now.  The cluster is only read (the memo aside).
 */
int hrm_frag_choose(struct hrm_frag_cluster *c, enum hrm_frag_policy policy,
                    const struct hrm_frag_pod *pod, int32_t type, struct hrm_frag_choice *out);
/* Places pod as chosen (the choice must come from hrm_frag_choose on this state). */
void hrm_frag_apply(struct hrm_frag_cluster *c, const struct hrm_frag_pod *pod,
                    const struct hrm_frag_choice *ch);

/* HRM's GPU resource-unit admission (P0): hrm_ru_fits of include/hrm/ru.h on
 * a GPU unit whose memory is one GPU's thousandths, so the GPU memory of the
 * stacked tasks is their shares: the unit takes the pod while its free share
 * covers the pod's.  ru_tasks: tasks already on the GPU. */
bool hrm_frag_ru_admit(int32_t ru_free_milli, int32_t ru_tasks, int32_t pod_milli);

/* Target workload: the pod types (cpu, num_gpu, gpu_milli, models) of the pods
 * that fit some empty node, weighted by count, in first-seen order.  *types is
 * hrm_alloc'd; returns the count (0 if no pod fits). */
int32_t hrm_frag_types_from_trace(const struct hrm_trace *t, struct hrm_frag_type **types,
                                  int32_t **type_of_pod);

/* ---- the experiment ---- */

#define HRM_FRAG_MAX_POINTS 301 /* arrivals of 0..300 % of the GPU capacity, per 1 % */

struct hrm_frag_config {
    uint64_t seed;
    int32_t runs;      /* repetitions with seeds derived from seed; results are means */
    int32_t until_pct; /* stop when the arrived GPU demand reaches this % of capacity */
};

/* Shares of the cluster's GPU capacity, 0..1. */
struct hrm_frag_point {
    double arrived;     /* GPU demand of the pods that arrived so far */
    double allocated;   /* held by placed pods (an exclusive pod holds a whole GPU) */
    double requested;   /* asked by placed pods */
    double fragmented;  /* free but fragmented: sum of nodes' expected fragmentation */
    double unallocated; /* free */
};

struct hrm_frag_result {
    enum hrm_frag_policy policy;
    int32_t runs;
    int32_t pool; /* trace pods sampled from (those fitting some empty node) */
    int32_t ntypes;
    struct hrm_frag_point first_refusal; /* state when the first pod was refused */
    int32_t refused_runs;                /* runs in which a pod was refused */
    double placed, refused;              /* pods per run */
    int32_t npoints;                     /* points[k]: after arrivals of k % of capacity */
    struct hrm_frag_point points[HRM_FRAG_MAX_POINTS];
};

/*
 * Pods drawn uniformly (with replacement) from the trace's pods arrive one by
 * one; each is placed by policy or refused (and dropped), until the GPU demand
 * that arrived reaches until_pct % of the cluster's GPUs.  Deterministic in
 * seed.  Returns 0, or -HRM_ESPEC (no GPU, no pod fits, bad config) with err.
 */
int hrm_frag_run(const struct hrm_trace *t, enum hrm_frag_policy policy,
                 const struct hrm_frag_config *cfg, struct hrm_frag_result *out,
                 struct hrm_error *err);

#endif
