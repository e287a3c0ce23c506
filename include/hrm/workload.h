/* Workload model: jobs made of stages (a DAG) and tasks, with requests, durations and input data. */
#ifndef HRM_WORKLOAD_H
#define HRM_WORKLOAD_H

#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/error.h"
#include "hrm/resource.h"

#define HRM_MAX_REPLICAS 8

enum hrm_job_kind { HRM_JOB_BATCH, HRM_JOB_STREAM, HRM_JOB_SERVICE };

const char *hrm_job_kind_name(enum hrm_job_kind kind);
int hrm_job_kind_parse(const char *s); /* kind or -1 */

/* One input data block and the nodes that hold a replica of it. */
struct hrm_block {
    int64_t size;
    int32_t nreplicas;
    int32_t replicas[HRM_MAX_REPLICAS]; /* node ids */
};

/* One phase of a task's stage profile: demand over time (P2). */
struct hrm_phase {
    int64_t duration_us;
    struct hrm_res demand;
};

/* P0 GPU phase model of one task: `count` rounds of a CPU phase of
 * cpu_us (pre/post-processing, on the task's cores) then a GPU phase of
 * gpu_us (kernels, time-shared with the other tasks stacked on its GPU). */
struct hrm_gpu_phases {
    int64_t cpu_us, gpu_us;
    int32_t count; /* 0 = the task has no GPU phase model */
};

/* Memory model of one task (simulator, P3): the bytes the task touches while it computes.
 * What exceeds its request (its heap) spills: to the node's page cache while the node has
 * memory no running task holds, else to the node's disk, where every spilled byte is moved
 * spill_passes times (written and read back: 2).  docs/spec-format.md, "memory". */
struct hrm_task_memory {
    int64_t working_set; /* bytes; 0 = the task has no memory model */
    int32_t spill_passes;
};

/* The first 64 bytes hold what every start and end touches, so that on a
 * 64-byte-aligned array a task costs one cache line on the hot path. */
struct hrm_task {
    int32_t job;
    int32_t stage;
    struct hrm_res req;      /* what the task asks for */
    int64_t duration_us;     /* true compute time on a speed-1.0 node (simulator ground truth) */
    /* 64 bytes */
    int64_t est_duration_us; /* what schedulers are told; equals duration_us unless the spec says */
    int32_t index;           /* within its stage */
    int32_t block_first;     /* input blocks: wl->blocks[block_first .. +nblocks) */
    int32_t nblocks;
    int32_t phase_first;     /* optional profile: wl->phases[phase_first .. +nphases) */
    int32_t nphases;
    uint32_t logic; /* hrm_workload_logic_id of its declared logic, 0 = none */
    /* Thousandths of one GPU the task asks for: 1..999 a share of one GPU (req gpu = 1),
     * 1000 whole GPUs, 0 not given (simulator specs: GPU memory alone decides stacking).
     * See hrm_ru_fits_share. */
    int32_t gpu_milli;
};

struct hrm_stage {
    char name[HRM_NAME_MAX];
    int32_t job;
    int32_t task_first, ntasks; /* wl->tasks[task_first .. +ntasks) */
    int32_t dep_first, ndeps;   /* wl->stage_deps[dep_first .. +ndeps): stage ids it waits for */
};

struct hrm_job {
    char name[HRM_NAME_MAX];
    enum hrm_job_kind kind;
    int32_t user;      /* index into wl->users */
    int32_t queue;     /* index into wl->queues */
    int32_t priority;  /* higher first */
    int64_t submit_us; /* open loop: arrival time; closed loop: earliest start */
    int64_t deadline_us; /* relative to submission; 0 = none */
    int32_t stage_first, nstages;
    int32_t task_first, ntasks;
};

/* A queue of the capacity scheduler: guaranteed and maximum share of the cluster. */
struct hrm_queue_cfg {
    char name[HRM_NAME_MAX];
    double guarantee; /* fraction 0..1 */
    double max;       /* fraction guarantee..1 */
};

struct hrm_workload {
    struct hrm_job *jobs;
    int32_t njobs;
    struct hrm_stage *stages;
    int32_t nstages;
    struct hrm_task *tasks;
    int32_t ntasks;
    struct hrm_block *blocks;
    int32_t nblocks;
    struct hrm_phase *phases;
    int32_t nphases;
    int32_t *stage_deps;
    int32_t nstage_deps;
    char (*users)[HRM_NAME_MAX];
    int32_t nusers;
    struct hrm_queue_cfg *queues; /* queue 0 is "default" (guarantee 1, max 1) unless redefined */
    int32_t nqueues;
    /* Closed loop (P1 testbed): at most max_parallel jobs run at once, in
     * submission order; the next starts when one ends.  0 = open loop. */
    int32_t max_parallel;
    /* m of the fairness ratio s_j = t_id / t_sh: t_id is the job's time alone on
     * 1/m of the cluster.  0 = max_parallel if set, else 1. */
    int32_t fair_m;
    /* Per task, the GPU phase model (hrm_workload_gpu_phases); NULL until a
     * task has one, and tasks past ngpu_phases have none. */
    struct hrm_gpu_phases *gpu_phases;
    int32_t ngpu_phases;
    size_t cap_gpu_phases;
    /* Per task, the memory model (hrm_workload_task_memory); NULL until a task has one. */
    struct hrm_task_memory *task_memory;
    int32_t ntask_memory;
    size_t cap_task_memory;
    size_t cap_jobs, cap_stages, cap_tasks, cap_blocks, cap_phases, cap_deps, cap_users,
        cap_queues;
};

struct hrm_job_desc {
    const char *name;
    enum hrm_job_kind kind;
    int32_t user, queue, priority;
    int64_t submit_us, deadline_us;
};

struct hrm_task_desc {
    struct hrm_res req;
    int64_t duration_us;
    int64_t est_duration_us; /* 0 = duration_us */
    uint32_t logic;          /* hrm_workload_logic_id of the task's program, 0 = not declared */
    int32_t gpu_milli;       /* share of a GPU in thousandths (struct hrm_task), 0 = not given */
};

struct hrm_workload *hrm_workload_new(void); /* has the "default" queue */
void hrm_workload_free(struct hrm_workload *wl); /* NULL is a no-op */

/* User id for name, added if new. */
int32_t hrm_workload_user(struct hrm_workload *wl, const char *name);
/* Adds or redefines a queue; returns its index or a negative code (bad shares). */
int hrm_workload_set_queue(struct hrm_workload *wl, const char *name, double guarantee,
                           double max, struct hrm_error *err);
int hrm_workload_find_queue(const struct hrm_workload *wl, const char *name); /* or -1 */

/*
 * Builders.  Jobs are built in order: add a job, then its stages, each stage
 * followed by its tasks, each task followed by its blocks and phases.  A stage
 * may depend only on stages already added to the same job, so the stage graph
 * is a DAG by construction.  Each returns the new index or a negative code.
 */
int hrm_workload_add_job(struct hrm_workload *wl, const struct hrm_job_desc *desc,
                         struct hrm_error *err);
int hrm_workload_add_stage(struct hrm_workload *wl, const char *name, const int32_t *deps,
                           int32_t ndeps, struct hrm_error *err);
int hrm_workload_add_task(struct hrm_workload *wl, const struct hrm_task_desc *desc,
                          struct hrm_error *err);
int hrm_workload_add_block(struct hrm_workload *wl, int64_t size, const int32_t *replicas,
                           int32_t nreplicas, struct hrm_error *err);
int hrm_workload_add_phase(struct hrm_workload *wl, int64_t duration_us,
                           const struct hrm_res *demand, struct hrm_error *err);

/* Gives the last task added a GPU phase model (gp->count >= 1, gpu_us > 0,
 * cpu_us >= 0); its duration must be count * (cpu_us + gpu_us) and it must
 * ask exactly one GPU.  0 or -EINVAL with detail. */
int hrm_workload_set_gpu_phases(struct hrm_workload *wl, const struct hrm_gpu_phases *gp,
                                struct hrm_error *err);
/* The task's GPU phase model, or NULL. */
static inline const struct hrm_gpu_phases *hrm_workload_gpu_phases(const struct hrm_workload *wl,
                                                                   int32_t task)
{
    if (task >= wl->ngpu_phases || wl->gpu_phases[task].count == 0)
        return NULL;
    return &wl->gpu_phases[task];
}

/* Gives the last task added a memory model (working_set > 0, spill_passes 0..1000).
 * 0 or -EINVAL with detail. */
int hrm_workload_set_task_memory(struct hrm_workload *wl, const struct hrm_task_memory *m,
                                 struct hrm_error *err);
/* The task's memory model, or NULL. */
static inline const struct hrm_task_memory *hrm_workload_task_memory(const struct hrm_workload *wl,
                                                                     int32_t task)
{
    if (task >= wl->ntask_memory || wl->task_memory[task].working_set == 0)
        return NULL;
    return &wl->task_memory[task];
}

/* Checks the finished workload against a cluster: every job has a task, every
 * task fits on at least one node (else "can never run"), replica node ids
 * exist.  Returns 0 or -HRM_ESPEC with detail. */
int hrm_workload_check(const struct hrm_workload *wl, const struct hrm_cluster *c,
                       struct hrm_error *err);

/* Program identity of a name (P2 similar tasks): FNV-1a, never 0, stable
 * across runs and machines so persisted estimates keep their meaning. */
uint32_t hrm_workload_logic_id(const char *name);

/* Effective m of the fairness ratio (see fair_m). */
int32_t hrm_workload_fair_m(const struct hrm_workload *wl);

#endif
