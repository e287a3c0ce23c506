/* Shared resource state (P0, Omega's cell): per-node versions, and snapshots of it. */
#ifndef HRM_SNAPSHOT_H
#define HRM_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/error.h"
#include "hrm/resource.h"

/*
 * Why a table of its own and not hrm_state: hrm_state is the central
 * scheduler's whole view (tasks, jobs, stage readiness).  In the shared-state
 * architecture the job state belongs to the scheduler instance that owns the
 * job (one AppMaster per job), and the shared table holds only what every
 * instance competes for: each node's free resources, stamped with a version.
 */
struct hrm_cell_node {
    struct hrm_res free;
    struct hrm_res cap; /* the node's capacity: what placement by units needs to see */
    uint64_t version;   /* bumped at every change of this node (claim or release) */
    bool down;          /* the node left (daemons): nothing is placed or committed on it */
    int32_t ngpus;      /* its GPUs' records: gpus[gpu_at .. gpu_at + ngpus) of the table */
    int32_t gpu_at;
};

/*
 * One GPU of a node as the shared table holds it: what P0's stacking
 * admission (hrm_ru_fits_share) and the units' placement need, so the
 * instances place through the hrm policy's units (include/hrm/ruplace.h).
 * The node's free GPU count (free.v[HRM_DIM_GPU]) counts its GPUs with no task.
 */
struct hrm_cell_gpu {
    int64_t gmem_cap;   /* bytes of its memory */
    int64_t gmem_used;  /* held by its tasks */
    int32_t share_used; /* thousandths given by its tasks that give a share (gpu_milli) */
    int32_t tasks;      /* tasks on it */
    int32_t solo;       /* of those, tasks that hold it alone (they share with none) */
};

/* What a task takes of a node: its request and, for a GPU task, its GPUs
 * (gpu_mask 0: the node's GPU count only, no GPU named: no record changes). */
struct hrm_cell_use {
    struct hrm_res req;
    uint32_t gpu_mask;
    int64_t gmem;  /* GPU memory on each of its GPUs (hrm_ru_task_gmem) */
    int32_t milli; /* its share of each (gpu_milli; 0 = none given) */
    bool solo;     /* it holds its GPUs alone (hrm_ru_task_stackable is false) */
};

/* Whether u fits node record cn, whose GPU records are gpus (the table's
 * array): the node's free vector covers what u is charged (*charge: its
 * request, less one GPU per GPU of its mask that already runs a task), and
 * each of its GPUs admits it (hrm_ru_fits_share; a GPU held alone, or a
 * task that holds it alone, with no other task).  Pure. */
bool hrm_cell_node_fits(const struct hrm_cell_node *cn, const struct hrm_cell_gpu *gpus,
                        const struct hrm_cell_use *u, struct hrm_res *charge);
/* Takes u from the record (fits first: false, no change, if it does not);
 * bumps nothing: the caller versions the node. */
bool hrm_cell_node_take(struct hrm_cell_node *cn, struct hrm_cell_gpu *gpus,
                        const struct hrm_cell_use *u);

struct hrm_cell {
    const struct hrm_cluster *cluster; /* borrowed, outlives the cell */
    struct hrm_cell_node *nodes;       /* cluster->nnodes, owned */
    int32_t nnodes;
    uint64_t version; /* bumped at every change of any node: "did anything change?" */
    int32_t gpu_jobs; /* K of the fair share: jobs with GPU tasks not ended that asked the
                         master for a snapshot (holding GPUs or waiting for them) */
    struct hrm_cell_gpu *gpus; /* every node's GPUs (hrm_cell_node.gpu_at), owned */
    int32_t ngpus;
};

/* How a claim planned against a snapshot is checked at commit. */
enum hrm_validate_mode {
    /* Omega's fine-grained, resource-based check and the paper's Alg. 3: the
     * claim commits if the node's free resources still cover it, whatever
     * happened to the node meanwhile. */
    HRM_VALIDATE_RESOURCE,
    /* Strict: the node must be at the version the claim was planned against
     * (no change at all since the snapshot), and the claim must fit. */
    HRM_VALIDATE_VERSION
};

/* Every node starts at its capacity, version 1 (0 never names a real state,
 * so a zeroed snapshot is stale everywhere).  0, or -EINVAL for no nodes. */
int hrm_cell_init(struct hrm_cell *cell, const struct hrm_cluster *c, struct hrm_error *err);
void hrm_cell_fini(struct hrm_cell *cell); /* zeroed or finished cell: no-op */

/* Whether req, planned against node at version seen, may commit now. */
bool hrm_cell_valid(const struct hrm_cell *cell, int32_t node, uint64_t seen,
                    const struct hrm_res *req, enum hrm_validate_mode mode);
/* Takes req from node: -HRM_ENOFIT (no change) if it does not fit. */
int hrm_cell_take(struct hrm_cell *cell, int32_t node, const struct hrm_res *req);
/* The same for a use that names its GPUs (hrm_cell_node_fits), and its release. */
int hrm_cell_take_use(struct hrm_cell *cell, int32_t node, const struct hrm_cell_use *u);
int hrm_cell_give_use(struct hrm_cell *cell, int32_t node, const struct hrm_cell_use *u);
/* The cluster the cell borrows has grown (the daemons add nodes as they
 * register): new nodes join at their capacity, version 1.  Returns how many
 * joined; the cell's version moves if any did. */
int32_t hrm_cell_grow(struct hrm_cell *cell);
/* Marks node up or down (a version change of the node when it differs).
 * -HRM_ESTATE for a node out of range. */
int hrm_cell_set_up(struct hrm_cell *cell, int32_t node, bool up);
/* Gives req back to node (a task ended).  -HRM_ESTATE (no change) if the node
 * would exceed its capacity: a release nobody took. */
int hrm_cell_give(struct hrm_cell *cell, int32_t node, const struct hrm_res *req);

/* A scheduler instance's private copy of the cell at one moment. */
struct hrm_snapshot {
    struct hrm_cell_node *nodes; /* owned */
    int32_t nnodes;
    uint64_t version; /* the cell's version when taken */
    int32_t gpu_jobs;
    struct hrm_cell_gpu *gpus; /* the nodes' GPU records, owned */
    int32_t ngpus;
};

void hrm_snapshot_init(struct hrm_snapshot *snap, int32_t nnodes); /* all stale */
void hrm_snapshot_fini(struct hrm_snapshot *snap);
/* Brings snap up to date with cell, copying only the nodes whose version
 * differs (Omega's delta sync: what a master would put on the wire).
 * Returns how many nodes were copied. */
int32_t hrm_snapshot_sync(struct hrm_snapshot *snap, const struct hrm_cell *cell);
/* Same from another snapshot (a snapshot in flight to an instance).  dst
 * grows to src's size when src has more nodes (the daemons' cell grows). */
int32_t hrm_snapshot_copy(struct hrm_snapshot *dst, const struct hrm_snapshot *src);
/* Node n's GPU records in snap, made room for (zeroed, at the end) when it
 * had another count; for a driver that fills a snapshot itself (the daemons'
 * wire).  n < snap->nnodes, 0 <= ngpus <= HRM_MAX_GPUS_PER_NODE; NULL for no GPUs. */
struct hrm_cell_gpu *hrm_snapshot_gpus_of(struct hrm_snapshot *snap, int32_t n, int32_t ngpus);

#endif
