/* Commit protocol of the shared-state schedulers (P0): the master side, sans-IO. */
#ifndef HRM_COMMIT_H
#define HRM_COMMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/env.h"
#include "hrm/error.h"
#include "hrm/snapshot.h"
#include "hrm/workload.h"

/*
 * The master holds the cell (include/hrm/snapshot.h) at HRM_ADDR_CENTRAL.
 * Scheduler instances (include/hrm/ssched.h) run transactions against it:
 *
 *   optimistic (batch):   SNAP_REQUEST -> SNAP_REPLY + snapshot -> plan for
 *                         the decision time -> CLAIM... (LAST) -> CLAIM_ACK
 *                         per claim: committed, or conflict (the task goes
 *                         back to the instance's queue and is retried)
 *   pessimistic (stream): SNAP_REQUEST with HRM_SNAP_LOCK -> the cell lock is
 *                         granted in request order, with a snapshot -> plan
 *                         -> CLAIM... (LAST | LOCKED) -> the lock is released
 *
 * While an instance holds the lock, transactions of the others are deferred
 * whole and validated after it, so the holder's claims, planned on a snapshot
 * that only task ends (releases) can have changed since, always commit: a
 * stream operator is never bounced.  A transaction is validated claim by
 * claim (Omega's incremental transactions): the claims that pass commit, the
 * others conflict.  A claim of a GPU task names the GPUs it was placed on
 * (gpu_mask): it commits if each of them still admits it (P0's stacking
 * admission on the cell's per-GPU records, hrm_cell_node_fits), and its
 * TASK_LAUNCH carries the same GPUs.  Committed claims are launched (TASK_LAUNCH to the node);
 * TASK_END from a node releases the resources and is forwarded to the
 * instance that owns the task.
 *
 * A SNAP_REQUEST names the job it plans for: a job with GPU tasks not ended
 * is counted in the cell's gpu_jobs (K of the fair share) from its first
 * request until its last GPU task ends.
 *
 * A SNAP_REQUEST whose value names the cell version the instance already
 * knows is answered only once the cell has changed: an instance none of whose
 * tasks fit waits for a release instead of polling.
 */

#define HRM_SNAP_LOCK 1 /* SNAP_REQUEST / SNAP_REPLY status: the cell lock */

enum hrm_claim_flag {
    HRM_CLAIM_LAST = 1,  /* the transaction's last claim: validate it now */
    HRM_CLAIM_LOCKED = 2 /* made under the cell lock; the transaction releases it */
};

enum hrm_claim_verdict { HRM_CLAIM_COMMITTED = 0, HRM_CLAIM_CONFLICT = 1 };

struct hrm_commit_config {
    enum hrm_validate_mode validate; /* how optimistic claims are checked */
    int32_t instances;               /* instances hrm_addr_sched(0 .. instances-1) */
};

struct hrm_commit_stats {
    int64_t txns, txns_locked, txns_deferred;
    int64_t claims, committed, conflicts;
    int64_t conflicts_stale;         /* conflicts of strict validation on a node that still fit */
    int64_t locked_bounced;          /* conflicts of claims made under the lock: stays 0 */
    int64_t lock_grants, lock_waits; /* waits: requests that found the lock taken */
    int64_t syncs, syncs_parked;     /* snapshots sent; requests that waited for a change */
};

/* cluster and wl are borrowed and outlive the role.  NULL with detail for a bad config. */
struct hrm_commit *hrm_commit_new(const struct hrm_cluster *cluster, const struct hrm_workload *wl,
                                  const struct hrm_commit_config *cfg, struct hrm_error *err);
void hrm_commit_free(struct hrm_commit *m); /* NULL is a no-op */

/*
 * Messages: SNAP_REQUEST and CLAIM from instances, TASK_END from nodes.
 * Sends SNAP_REPLY and CLAIM_ACK to instances, TASK_LAUNCH to nodes, and
 * TASK_END on to the owning instance.  The snapshot of a SNAP_REPLY is the
 * cell at the moment the reply is sent (hrm_commit_cell): a driver carries it
 * with the message.  0, or a negative code for a message that breaks the
 * protocol (an unknown instance, a claim for a task already running, a
 * second transaction of one instance before the first was validated).
 */
int hrm_commit_on_msg(struct hrm_commit *m, struct hrm_env *env, const struct hrm_msg *msg);

/*
 * For a driver whose cluster and workload grow while the role runs (the
 * daemons; the simulator knows both up front and calls none of these):
 *   - hrm_commit_grow: the borrowed cluster has new nodes or the workload new
 *     jobs and tasks; the role sizes itself to them (new nodes at capacity);
 *   - hrm_commit_node_up: a node left or came back; claims on a node that is
 *     down conflict, and snapshots show it down;
 *   - hrm_commit_forget: instance i is gone (its process died or restarted):
 *     its unfinished transaction, lock, lock request and parked snapshot
 *     request are dropped, so the others go on.  What it committed stays
 *     committed: those tasks run, and their ends release as usual.
 *   - hrm_commit_adopt: a run that already holds node (a master restarted,
 *     the job moved to another instance) is taken into the cell, owned by
 *     instance i; -HRM_ENOFIT if it no longer fits there (no change).
 * Each returns 0 or a negative code; all but adopt settle the role as after
 * a message.
 */
int hrm_commit_grow(struct hrm_commit *m, struct hrm_env *env);
int hrm_commit_node_up(struct hrm_commit *m, struct hrm_env *env, int32_t node, bool up);
int hrm_commit_forget(struct hrm_commit *m, struct hrm_env *env, int32_t i);
int hrm_commit_adopt(struct hrm_commit *m, int32_t task, int32_t node, int32_t i);
/* The same for a run that holds the GPUs of gpu_mask there (0: none named). */
int hrm_commit_adopt_on(struct hrm_commit *m, int32_t task, int32_t node, uint32_t gpu_mask,
                        int32_t i);
/* The node task runs on as far as the cell knows, or -1. */
int32_t hrm_commit_task_node(const struct hrm_commit *m, int32_t task);

const struct hrm_cell *hrm_commit_cell(const struct hrm_commit *m);
/* What task of wl takes of a node when placed on the GPUs of gpu_mask (its
 * request, per-GPU memory, share, whether it holds its GPUs alone): the one
 * description the instances plan with and the role validates. */
struct hrm_cell_use hrm_commit_use_of(const struct hrm_workload *wl, int32_t task,
                                      uint32_t gpu_mask);
const struct hrm_commit_stats *hrm_commit_stats(const struct hrm_commit *m);

/*
 * Fair share of a scarce resource (P0 and P1): A_j = min(floor(Q/K), N_j)
 * for Q units, K running jobs and a job that needs N_j.  K <= 0 counts as one
 * job (the asker is alone); negative Q or N_j give 0.  Q < K gives 0: the
 * units left over are the caller's to spread (see docs/policies.md).
 */
static inline int64_t hrm_fair_share(int64_t q, int64_t k, int64_t n)
{
    if (q <= 0 || n <= 0)
        return 0;
    int64_t per = q / (k > 0 ? k : 1);
    return per < n ? per : n;
}

#endif
