/* P0's per-host placement (Alg. 1) over one node's resource units: the hrm policy's and the shared-state instances' one copy. */
#ifndef HRM_RUPLACE_H
#define HRM_RUPLACE_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/ru.h"
#include "hrm/workload.h"

/*
 * One host as P0's placement sees it.  The hrm policy (src/policy/hrm*.c)
 * points it at its own units and the state's node; a shared-state instance
 * (src/sched/ssched_plan.c) builds it from its snapshot of the shared table
 * (hrm_cell_node and its hrm_cell_gpu records), where a node's cores are one
 * pool (the CPU unit) and its GPU units hold its GPUs' memory and shares.
 */
struct hrm_ru_host {
    const struct hrm_node *n;     /* the node: cores, GPUs, capacity */
    const struct hrm_ru *ru;      /* its units: GPU units 0 .. gpus-1, then the CPU unit */
    int32_t first;                /* ru[0]'s number in the caller's numbering (plans name it) */
    const int32_t *solo;          /* per unit: GPU tasks that hold it alone */
    const int32_t *base_want;     /* per unit: the spec's bound cores (rigid binding) */
    const struct hrm_res *free;   /* the node's free resources */
    uint32_t gpu_busy;            /* its GPUs that run a task */
    bool up;
    uint8_t side;                 /* enum hrm_ru_side */
};

enum hrm_ru_side { HRM_RU_SHARED, HRM_RU_BATCH_ONLY, HRM_RU_STREAM_ONLY }; /* static partitions */

/* The rules a task is placed by (flexible binding, lending, static partitions). */
struct hrm_ru_rules {
    bool flex, lend, sides;
};

/* How a task's request is spread over the units of its node while it runs:
 * one part per unit it holds (its GPU units' GPUs and cores, or the cores a
 * CPU task takes from the CPU unit and borrows from lending GPU units). */
#define HRM_RU_MAX_PARTS (HRM_MAX_GPUS_PER_NODE + 1)
struct hrm_ru_plan {
    int32_t n;
    uint32_t gpu_mask; /* the GPUs to start on (0: none) */
    int32_t unit[HRM_RU_MAX_PARTS];      /* in the host's numbering (first + index) */
    struct hrm_res part[HRM_RU_MAX_PARTS]; /* cpu, gpu (0/1) and gpu_mem on that unit */
    int32_t milli[HRM_RU_MAX_PARTS];     /* the task's GPU share on that unit (gpu_milli) */
};

/* Appends a part on unit (the host's numbering) to pl: cpu milli-cores,
 * gpu 0/1 with gmem and the task's share. */
void hrm_ru_plan_add(struct hrm_ru_plan *pl, int32_t unit, int64_t cpu, int64_t gpu, int64_t gmem,
                     int32_t milli);

/* Whether a GPU task may share its GPU: tasks that declare GPU phases
 * (hrm_workload_gpu_phases) have CPU phases to overlap, and a task that asks
 * a fraction of a GPU (gpu_milli 1..999) asked to share it; any other GPU
 * task is taken as all kernel and gets its GPU alone. */
bool hrm_ru_task_stackable(const struct hrm_workload *wl, int32_t task);

/* Whether task could ever run on unit u (index into h->ru) under rules r
 * (type, partition, capacity of an empty unit). */
bool hrm_ru_host_admits(const struct hrm_ru_host *h, const struct hrm_workload *wl, int32_t task,
                        int32_t u, struct hrm_ru_rules r);
/* Whether task can start on unit u of h now; *plan gets how its request
 * would be spread over the node's units. */
bool hrm_ru_host_can_start(const struct hrm_ru_host *h, const struct hrm_workload *wl,
                           int32_t task, int32_t u, struct hrm_ru_rules r,
                           struct hrm_ru_plan *plan);
/* The fields of P0's placement cost (struct hrm_ru_cost) that the unit and
 * its node decide for a task: sharing, gpu_left and node_left for a GPU
 * task, stranded and node_free for a CPU task.  wait, queue and frag_growth
 * are the caller's. */
void hrm_ru_host_cost(const struct hrm_ru_host *h, const struct hrm_workload *wl, int32_t task,
                      int32_t u, struct hrm_ru_cost *cost);
/* GPU memory of unit u other tasks may still stack into: none on a GPU held
 * by a task that runs alone, or on a CPU unit. */
int64_t hrm_ru_host_gpu_free(const struct hrm_ru_host *h, int32_t u);
/* GPU memory of the node's GPU units, and what of it tasks may still stack into. */
int64_t hrm_ru_host_gpu_cap(const struct hrm_ru_host *h);
int64_t hrm_ru_host_node_gpu_free(const struct hrm_ru_host *h);

/*
 * P0's Alg. 1 on one host for a task to start now: of the units of h that
 * admit task under r and can start it now, the best by hrm_ru_prefer (wait
 * and queue 0, the cost of hrm_ru_host_cost); a CPU unit whose free cores
 * equal a CPU task's request is taken at once.  Returns the unit's index
 * into h->ru with *cost and *plan filled, or -1: none can start it now.
 * A caller that compares hosts compares their costs with hrm_ru_prefer.
 */
int32_t hrm_ru_host_place(const struct hrm_ru_host *h, const struct hrm_workload *wl,
                          int32_t task, struct hrm_ru_rules r, struct hrm_ru_cost *cost,
                          struct hrm_ru_plan *plan);

#endif
