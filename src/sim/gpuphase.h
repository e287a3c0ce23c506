/* Simulator P0 GPU phase model: alternating CPU and GPU phases; stacked tasks share the GPU.
 */
#ifndef HRM_SIM_GPUPHASE_H
#define HRM_SIM_GPUPHASE_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/workload.h"

/*
 * A task with GPU phases (hrm_workload_gpu_phases) computes through this
 * model instead of the fixed-time path: `count` rounds of a CPU phase
 * (cpu_us / node speed, on its own cores: never slowed by others) and a GPU
 * phase of gpu_us of kernel work.  The kernels in flight on one GPU share it
 * equally (processor sharing: k kernels each progress at 1/k), so while one
 * stacked task pre-processes on its cores another's kernels have the GPU to
 * themselves.  Alone, a task takes exactly count * (cpu/speed + gpu).  Rates
 * change only when a phase starts or ends; one queued model event at a time,
 * as for the network (src/sim/net.c).  A GPU counts as busy (utilisation)
 * while at least one kernel runs on it.
 */
struct gp_model;

struct gp_hooks {
    void *arg;
    /* The run of task ended now: fail 0 = done, 1 = injected failure. */
    void (*end)(void *arg, int32_t task, int32_t attempt, int fail);
    /* The number of GPUs running kernels changed by delta (+1/-1). */
    void (*busy)(void *arg, int delta);
};

/* NULL when no task of wl has GPU phases.  c and wl are borrowed. */
struct gp_model *gp_new(const struct hrm_cluster *c, const struct hrm_workload *wl,
                        const struct gp_hooks *hooks);
void gp_free(struct gp_model *m); /* NULL is a no-op */

/* Whether task computes through the model (m may be NULL). */
static inline bool gp_owns(const struct gp_model *m, const struct hrm_workload *wl, int32_t task)
{
    return m && hrm_workload_gpu_phases(wl, task) != NULL;
}

/* Task starts computing on GPU gpu of node at now; its CPU phases run at
 * speed.  fail_at in (0, 1] makes it fail after that share of its rounds
 * (at least one); 0 = no failure. */
void gp_start(struct gp_model *m, int64_t now, int32_t task, int32_t attempt, int32_t node,
              int32_t gpu, double speed, double fail_at);
/* Removes a running task (kill, node failure): no end hook for it. */
void gp_remove(struct gp_model *m, int64_t now, int32_t task);
/* Earliest phase end, or INT64_MAX when nothing runs. */
int64_t gp_next(const struct gp_model *m);
/* Ends every phase due at now (calling the hooks) and starts the next ones. */
void gp_run(struct gp_model *m, int64_t now);

#endif
