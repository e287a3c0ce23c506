/* Production traces read into memory: the Alibaba GPU-sharing trace (v2023) and its spec export. */
#ifndef HRM_TRACE_H
#define HRM_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hrm/cluster.h"
#include "hrm/error.h"

#define HRM_TRACE_MAX_MODELS 64 /* gpu_spec sets are uint64_t masks over the model table */
#define HRM_TRACE_MODEL_MAX 32
#define HRM_TRACE_MAX_GPUS 32 /* as HRM_MAX_GPUS_PER_NODE */

enum hrm_trace_qos { HRM_QOS_LS, HRM_QOS_BE, HRM_QOS_BURSTABLE, HRM_QOS_GUARANTEED };
enum hrm_trace_phase { HRM_POD_RUNNING, HRM_POD_SUCCEEDED, HRM_POD_FAILED, HRM_POD_PENDING };

const char *hrm_trace_qos_name(enum hrm_trace_qos q);

/* One row of openb_node_list_*.csv. */
struct hrm_trace_node {
    char name[HRM_NAME_MAX];
    int64_t cpu_milli;
    int64_t mem_mib;
    int32_t gpus;
    int32_t model; /* index into hrm_trace.models, -1 when the node has no GPU model */
    int32_t line;  /* line of the row in its file */
};

/* One row of openb_pod_list_*.csv.  Times are seconds from the trace start;
 * -1 when the column is empty or absent (the multigpu files have no times). */
struct hrm_trace_pod {
    char name[HRM_NAME_MAX];
    int64_t cpu_milli;
    int64_t mem_mib;
    int32_t num_gpu;   /* whole GPUs, 0..32 */
    int32_t gpu_milli; /* thousandths of one GPU when num_gpu == 1; 1000 for every GPU of a
                          multi-GPU pod */
    uint64_t models;   /* allowed GPU models (bits of hrm_trace.models); 0 = any */
    enum hrm_trace_qos qos;
    enum hrm_trace_phase phase;
    int64_t creation, deletion, scheduled;
    int32_t line;
};

struct hrm_trace {
    char *nodes_file, *pods_file; /* names used in messages (as given) */
    struct hrm_trace_node *nodes;
    int32_t nnodes;
    struct hrm_trace_pod *pods;
    int32_t npods;
    bool pods_have_times; /* the pod file has the three time columns */
    char models[HRM_TRACE_MAX_MODELS][HRM_TRACE_MODEL_MAX];
    int32_t nmodels;
    size_t cap_nodes, cap_pods;
};

/* Receives one line "file:line: reason" per bad row (borrowed for the call). */
typedef void (*hrm_trace_report_f)(void *arg, const char *msg);

struct hrm_trace_opts {
    bool strict;               /* the first bad row refuses the whole file */
    hrm_trace_report_f report; /* may be NULL: bad rows are then only counted */
    void *report_arg;
};

struct hrm_trace *hrm_trace_new(void);
void hrm_trace_free(struct hrm_trace *t); /* NULL is a no-op */

/*
 * Reads a node list (sn, cpu_milli, memory_mib, gpu, model) or a pod list
 * (name, cpu_milli, memory_mib, num_gpu, gpu_milli [, gpu_spec, qos, pod_phase,
 * creation_time, deletion_time, scheduled_time]) from f; name is the file name
 * used in messages.  Columns are found by their header names.  Returns the
 * number of bad rows skipped (each reported as "name:line: reason"), or a
 * negative code with err set: -HRM_ESPEC for a bad header or, with
 * opts->strict, the first bad row; -HRM_EIO for a read error.  On error the
 * trace holds no row of this file.
 */
int hrm_trace_read_nodes(struct hrm_trace *t, FILE *f, const char *name,
                         const struct hrm_trace_opts *opts, struct hrm_error *err);
int hrm_trace_read_pods(struct hrm_trace *t, FILE *f, const char *name,
                        const struct hrm_trace_opts *opts, struct hrm_error *err);
/* The same, opening path. */
int hrm_trace_load_nodes(struct hrm_trace *t, const char *path, const struct hrm_trace_opts *opts,
                         struct hrm_error *err);
int hrm_trace_load_pods(struct hrm_trace *t, const char *path, const struct hrm_trace_opts *opts,
                        struct hrm_error *err);

/* GPU share a pod asks for, in thousandths of a GPU (num_gpu x 1000 for whole GPUs). */
static inline int64_t hrm_trace_pod_gpu_milli(const struct hrm_trace_pod *p)
{
    return p->num_gpu == 1 ? p->gpu_milli : (int64_t)p->num_gpu * 1000;
}

/* Whether pod fits node when the node is empty (cpu, memory, GPU count, GPU model). */
bool hrm_trace_pod_fits_node(const struct hrm_trace_pod *p, const struct hrm_trace_node *n);

/* How a trace becomes a spec (docs/trace-import.md). */
struct hrm_trace_spec_opts {
    int64_t gpu_mem;             /* nominal memory of every GPU, bytes; a share maps onto it */
    int64_t pending_duration_us; /* 0: pods never scheduled are left out; else their run time */
    double time_scale;          /* arrivals at creation_time / time_scale (run times kept); 0 = 1 */
    int64_t max_run_s;          /* run times capped at this many seconds; 0 = no cap */
    int64_t sample_interval_us; /* the spec's sim.sample_interval; 0 = leave the default */
    const char *policies;       /* comma-separated sim.policies, or NULL */
    struct hrm_trace_opts row;  /* strictness and reporting of pods that fit no node */
};

struct hrm_trace_spec_stats {
    int32_t jobs, stream, batch;
    int32_t pending_skipped; /* never scheduled and no pending_duration */
    int32_t nofit_skipped;   /* bad rows: fit no node */
    int32_t zero_clamped;    /* run time 0 s, written as 1 s */
    int32_t censored;        /* still running at the trace end */
    int32_t models_dropped;  /* pods naming GPU models: the spec cannot say so */
    int32_t capped;          /* run times cut to max_run_s */
};

/*
 * Writes t as an hrm spec (JSON, docs/spec-format.md) to out: one node per
 * node row, one single-task job per pod.  Needs a pod file with times.
 * Returns 0, or a negative code with err (-HRM_ESPEC: no times, no node, no
 * pod left, or with row.strict a pod that fits no node; -HRM_EIO: write
 * error).  Same trace and options give the same bytes.
 */
int hrm_trace_write_spec(FILE *out, const struct hrm_trace *t,
                         const struct hrm_trace_spec_opts *opts, struct hrm_trace_spec_stats *stats,
                         struct hrm_error *err);

#endif
