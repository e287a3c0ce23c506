/* Shared-state scheduler instance (P0, Omega-like) as a sans-IO role. */
#ifndef HRM_SSCHED_H
#define HRM_SSCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/env.h"
#include "hrm/error.h"
#include "hrm/snapshot.h"
#include "hrm/workload.h"

/*
 * One transaction at a time, one job per transaction (Omega's model): the
 * instance takes the next job of its queue with ready tasks, asks the master
 * (HRM_ADDR_CENTRAL) for a snapshot — under the cell lock for a stream job
 * (pessimistic), plain for a batch job (optimistic) — places the job's ready
 * tasks on the snapshot, spends the decision time
 *     t_job + t_task x (tasks it placed or tried)
 * and then sends the claims (include/hrm/commit.h).  Conflicting tasks return
 * to the job's ready list and the job to the tail of the queue: they are
 * retried in a later transaction, which costs decision time again.
 *
 * Placement (P0's Alg. 2 calling Alg. 1 per host): each ready task goes to
 * the host whose best resource unit costs least by the hrm policy's own
 * per-host placement (include/hrm/ruplace.h: admission, start-now check,
 * GPU stacking by memory and shares, the fragmentation-aware costs), over
 * the snapshot's free vectors and per-GPU records; hosts are scanned from a
 * random node per transaction and a tie keeps the first seen, so instances
 * spread.  A node's cores are one pool there (the table binds no cores to
 * GPUs: flexible binding and lending, the policy's defaults).  Only what
 * starts now is claimed: the table keeps no unit queues, so the simulated
 * wait (simulaterun) has nothing to rank; a task that fits nowhere waits in
 * its job for a later transaction.  Jobs are served stream first (P0's
 * stream queue), then batch, each in arrival order.
 *
 * first_fit keeps Omega's simulated schedulers' placement as the baseline:
 * first fit over the snapshot's free vectors from a random node per
 * transaction (the cursor stays on a node while the next task still fits),
 * whole GPUs (no stacking), jobs in arrival order.
 * With fair_share, when the snapshot's free GPUs cannot cover the job's ready
 * GPU tasks, the job holds at most A_j = min(floor(Q/K), N_j) GPU tasks
 * (hrm_fair_share; Q the cluster's GPUs, K the jobs with GPU tasks not ended
 * that have asked the master, this one included; N_j the job's GPU tasks not
 * ended), and at least one, so a job is never starved when Q < K (P1's
 * leftover rule, first come first served).
 */
struct hrm_ssched_config {
    int32_t index;     /* the instance's address is hrm_addr_sched(index) */
    int64_t t_job_us;  /* decision time per transaction */
    int64_t t_task_us; /* decision time per task placed or tried */
    bool lock_stream;  /* stream jobs commit under the cell lock (default in the drivers) */
    bool fair_share;   /* cap GPU tasks at the fair share when GPUs are scarce */
    bool first_fit;    /* Omega's placement instead of P0's units: first fit from a random
                          node, whole GPUs, jobs in arrival order (the baseline) */
    uint64_t seed;
};

struct hrm_ssched_stats {
    int64_t jobs, txns, txns_locked, txns_empty, txns_conflicted;
    int64_t claims, committed, conflicts;
    int64_t conflicts_stream; /* conflicts of stream jobs' claims (0 with lock_stream) */
    int64_t retries;          /* claims of tasks that had conflicted before */
    int64_t waits;            /* snapshot requests that waited for the cell to change */
    int64_t decision_us;      /* total decision time spent */
    int64_t fair_capped;      /* tasks held back by the fair share */
};

/* cluster and wl are borrowed and outlive the instance.  NULL with detail for a bad config. */
struct hrm_ssched *hrm_ssched_new(const struct hrm_cluster *cluster, const struct hrm_workload *wl,
                                  const struct hrm_ssched_config *cfg, struct hrm_error *err);
void hrm_ssched_free(struct hrm_ssched *s); /* NULL is a no-op */

/*
 * Messages: JOB_SUBMIT (client), CLAIM_ACK and TASK_END (from the master;
 * status DONE, or in the daemons LOST: run it again, FAILED: drop it).
 * A SNAP_REPLY comes with its snapshot through hrm_ssched_on_snapshot, not
 * here.  Sends SNAP_REQUEST and CLAIM to the master and JOB_END to
 * HRM_ADDR_CLIENT.  0 or a negative code for a message that breaks the
 * protocol.
 */
int hrm_ssched_on_msg(struct hrm_ssched *s, struct hrm_env *env, const struct hrm_msg *m);
/* The master's SNAP_REPLY m and the snapshot it carries (borrowed: copied). */
int hrm_ssched_on_snapshot(struct hrm_ssched *s, struct hrm_env *env, const struct hrm_msg *m,
                           const struct hrm_snapshot *snap);
int hrm_ssched_on_timer(struct hrm_ssched *s, struct hrm_env *env, uint64_t cookie);

/* A daemon hands a job to this instance while some of its tasks already run
 * (their instance died, or the master restarted): right after the job's
 * JOB_SUBMIT, each such task is adopted, i.e. taken as running and never
 * claimed.  -HRM_ESTATE if the task is not a ready task of a job here. */
int hrm_ssched_adopt(struct hrm_ssched *s, int32_t task);

/* Tasks registered here and not ended (how busy the instance is). */
int64_t hrm_ssched_load(const struct hrm_ssched *s);
/* When a task of a job registered here became ready, or -1. */
int64_t hrm_ssched_ready_us(const struct hrm_ssched *s, int32_t task);
const struct hrm_ssched_stats *hrm_ssched_stats(const struct hrm_ssched *s);

#endif
