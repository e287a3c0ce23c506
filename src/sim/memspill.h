/* Simulator P3 memory model: a task's working set, the node's page cache, spills to its disk. */
#ifndef HRM_SIM_MEMSPILL_H
#define HRM_SIM_MEMSPILL_H

#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/workload.h"

/*
 * Memory decides run time only through spilling.  Every task on a node holds a heap from its
 * launch to its end: its memory request, or its working set when that is smaller (a JVM heap
 * grows up to its limit as it is used).  A task with a memory model (hrm_workload_task_memory)
 * whose working set W exceeds its request R spills the excess E = W - R when it starts
 * computing.  The node's page cache is what no heap and no earlier spill holds:
 * C = max(0, mem - sum of heaps - sum of cached spills).  The first min(E, C) bytes stay in the
 * page cache and cost nothing; the rest, E - min(E, C), go to the node's disk, and the task
 * runs longer by spill_passes x that / (disk_bw / k), where k is 1 + the number of tasks on
 * the node whose spill is on the disk now (they share its bandwidth).  A task keeps its heap,
 * its cached bytes and its place among the disk spillers until it ends or is killed.  The
 * extra is fixed when the task starts computing (later arrivals and departures do not change
 * it), so the model needs no event of its own and a run stays deterministic.
 */
struct mem_model;

/* A model for the tasks of wl on c, or NULL when no task of wl has a memory model (the
 * simulator then behaves exactly as without this file). */
struct mem_model *mem_new(const struct hrm_cluster *c, const struct hrm_workload *wl);
void mem_free(struct mem_model *m); /* NULL is a no-op */

/* task was launched on node: its heap is held from now. */
void mem_hold(struct mem_model *m, int32_t task, int32_t node);
/* task, launched on node, starts computing now: the microseconds its spill adds to its run
 * time (0 without a spill to the disk); claims its page cache and its share of the disk. */
int64_t mem_spill_us(struct mem_model *m, int32_t task, int32_t node);
/* task ended or was killed: releases what it held (a no-op for a task that holds nothing). */
void mem_release(struct mem_model *m, int32_t task);

/* Totals over the run so far: bytes spilled to page caches and to disks. */
void mem_totals(const struct mem_model *m, int64_t *cached, int64_t *disk);

#endif
