/* The simulator's P2 execution model: cpu compression, memory failures, usage. */
#ifndef HRM_SIM_COMPRESS_H
#define HRM_SIM_COMPRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/env.h"
#include "hrm/spec.h"
#include "hrm/workload.h"

/*
 * Tasks "in the pool" (those with a profile, or every task when the spec's
 * execution model is fluid) compute through this model instead of the
 * simulator's fixed-time path.  On each node:
 *
 *   - each pooled task demands its current phase's cpu and memory;
 *   - cpu is compressible: when the demands (with the foreign background
 *     load) exceed what the node has left after the tasks outside the pool,
 *     everyone gets the same share 1 - r_c of its demand and a pooled task
 *     progresses at speed * (1 - r_c) / (1 + p) (P2: T' = (1+p) T/(1-r_c));
 *   - memory is not: when demands exceed the node's memory, the task whose
 *     start or phase change overcommitted it fails (the largest one when
 *     foreign load grew), and the simulator reports it FAILED, so the
 *     scheduler retries it like any failed attempt;
 *   - rates are recomputed at every start, end, phase change and background
 *     change on the node (a fluid model, as src/sim/net.c does for links).
 *
 * Usage: every usage_interval (global ticks at multiples of it) each up node
 * reports its foreign load (what is not an hrm task) and each pooled task's
 * average use since its last sample; a task's last sample goes out when it
 * ends.
 */
struct cmp_model;

struct cmp_hooks {
    void *arg;
    /* The run of task ended now: fail 0 = done, 1 = failed (memory, or an
     * injected failure).  The task has left the pool. */
    void (*end)(void *arg, int32_t task, int32_t attempt, int fail);
    /* A usage sample: task < 0 for the node's own report. */
    void (*usage)(void *arg, int32_t node, int32_t task, int32_t attempt,
                  const struct hrm_usage *u);
    /* Cpu in use by pooled tasks changed by delta milli-cores (utilisation). */
    void (*busy)(void *arg, double delta_cpu);
};

/* NULL when no task could use the model (no profiles and not fluid) and no
 * background load is asked: the simulator then keeps its fixed-time path.
 * x may be NULL (defaults).  c, wl and x are borrowed and outlive the model. */
struct cmp_model *cmp_new(const struct hrm_cluster *c, const struct hrm_workload *wl,
                          const struct hrm_execution *x, uint64_t seed,
                          const struct cmp_hooks *hooks);
void cmp_free(struct cmp_model *m);

/* Whether task computes through the model. */
bool cmp_pooled(const struct cmp_model *m, int32_t task);

/* Task starts computing on node at now.  fail_at in (0, 1] makes it fail once
 * that fraction of its work is done; 0 = no injected failure. */
void cmp_start(struct cmp_model *m, int64_t now, int32_t task, int32_t attempt, int32_t node,
               double fail_at);
/* Removes a running task (kill, node failure): no hook is called for it. */
void cmp_remove(struct cmp_model *m, int64_t now, int32_t task);
/* A pooled task reading its input holds (sign +1) or releases (-1) its first
 * phase's memory on node: its process exists, waiting on I/O. */
void cmp_reading(struct cmp_model *m, int64_t now, int32_t task, int32_t node, int sign);
/* A task outside the pool holds (sign +1) or releases (-1) req on node. */
void cmp_reserve(struct cmp_model *m, int64_t now, int32_t node, const struct hrm_res *req,
                 int sign);

/* Earliest time the model has something to do (a phase end, a background
 * change, a usage tick), or INT64_MAX. */
int64_t cmp_next(const struct cmp_model *m);
/* Does everything due at now, calling the hooks. */
void cmp_run(struct cmp_model *m, int64_t now);
/* Whether pooled tasks are running (usage ticks and background matter only
 * while there is work; the simulator stops re-arming otherwise). */
bool cmp_active(const struct cmp_model *m);
bool cmp_has_background(const struct cmp_model *m);

/* For tests: the current rate (work us per wall us) of a pooled task, 0 if not running. */
double cmp_rate(const struct cmp_model *m, int32_t task);

#endif
