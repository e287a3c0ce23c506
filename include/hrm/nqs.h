/* Node queue system (P4): one node's execution queues as a sans-IO role. */
#ifndef HRM_NQS_H
#define HRM_NQS_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/env.h"
#include "hrm/resource.h"
#include "hrm/workload.h"

/* Flags of a RUN message (its status field). */
enum hrm_run_flag {
    HRM_RUN_LAST = 1,     /* the last task placed on this hold: release its other slots */
    HRM_RUN_MIGRATED = 2, /* moved by the negotiator: runs at raised priority */
    HRM_RUN_BIND = 4      /* answers a GET_TASK: attempt is the reservation's token */
};

/* Why a node refuses (HOLD_REPLY value = -reason, MIGRATE_REFUSE status). */
enum hrm_nqs_reason {
    HRM_NQS_OK,
    HRM_NQS_OVER_LIMIT, /* the task asks more than the queue's resource limit */
    HRM_NQS_NO_QUEUE,   /* no such queue on this node */
    HRM_NQS_OVERLOADED, /* migration: the target's own wait is above hw */
    HRM_NQS_PARK_FULL   /* migration: too many requests parked already */
};

/* One execution queue (the same set on every node). */
struct hrm_nqs_queue_cfg {
    char name[HRM_NAME_MAX]; /* tasks of a workload queue with this name go here; "" = any */
    int32_t priority;        /* higher runs first; FIFO inside a queue */
    int32_t max_running;     /* concurrent tasks; 0 = no limit beyond the node's cores */
    struct hrm_res limit;    /* per-task limit; a 0 dimension is unlimited */
};

struct hrm_nqs_config {
    const struct hrm_nqs_queue_cfg *queues; /* borrowed; NULL = one unlimited queue */
    int32_t nqueues;
    int64_t hold_ttl_us; /* a hold not resolved by then is dropped; 0 = 50 ms */
    double eps[3];       /* wait correction per job kind (batch, stream, service); 0 = 1.0 */
    bool eps_learn;      /* refine eps from actual / estimated run times (EWMA) */
    bool no_preempt;     /* disable preemption of lower-priority running tasks */
    /* Load balancing with the negotiator (off unless balance). */
    bool balance;
    int64_t hw_us;        /* a queued task expected to wait longer asks to move */
    int64_t lw_us;        /* a queue whose wait is at most this advertises itself */
    int64_t retry_us;     /* a task asks again at most this often; 0 = hw */
    int32_t max_parked;   /* migration requests a busy target records; 0 = 16 */
    int32_t max_requests; /* requests sent per check, bounding the work; 0 = 4 */
};

struct hrm_nqs_stats {
    int64_t holds, holds_granted_slots, holds_expired, rejected, preemptions;
    int64_t migrate_requests, migrated_out, migrated_in, refused, parked, pulls, adverts;
    int64_t bind_requests, bind_empty;
    int64_t late_runs; /* runs whose hold had expired, queued first in line */
};

/* What a queue holds now (tests and the driver's counters). */
struct hrm_nqs_queue_info {
    int32_t running, queued, held_slots, parked;
    int64_t queued_est_us; /* sum of the (corrected) estimates of queued tasks */
};

/*
 * Creates the queue system of one node.  cluster, wl and cfg->queues are
 * borrowed and outlive the role (task requests and estimates come from wl by
 * task id; messages carry ids).  The role's address is hrm_addr_node(node).
 * It starts tasks by sending TASK_LAUNCH to HRM_ADDR_EXEC (task, job, node,
 * attempt and gpu_mask identify the run, value = when it was queued here) and
 * stops them with TASK_KILL; the executor answers TASK_END with the same
 * attempt and gpu_mask.  NULL with detail for a bad configuration.
 */
struct hrm_nqs *hrm_nqs_new(const struct hrm_cluster *cluster, const struct hrm_workload *wl,
                            int32_t node, const struct hrm_nqs_config *cfg, struct hrm_error *err);
/* The same with the node's capacity given (copied; an agent knows only itself):
 * node is only its id (address).  wl may grow after creation (jobs and tasks
 * appended); nothing of it is cached. */
struct hrm_nqs *hrm_nqs_new_capacity(const struct hrm_res *capacity, const struct hrm_workload *wl,
                                     int32_t node, const struct hrm_nqs_config *cfg,
                                     struct hrm_error *err);
void hrm_nqs_free(struct hrm_nqs *q); /* NULL is a no-op */

/* Handles one message (from the network or the executor).  0, or a negative
 * code for a message that breaks the protocol (the driver stops the run). */
int hrm_nqs_on_msg(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m);
int hrm_nqs_on_timer(struct hrm_nqs *q, struct hrm_env *env, uint64_t cookie);

/* A task cancelled by its job: 1 if it was queued here (removed; a migration
 * offered or parked elsewhere gets MIGRATE_CANCEL; no TASK_END to its owner),
 * 0 if not (running or unknown: the driver stops a running one itself and
 * reports its end as TASK_END from HRM_ADDR_EXEC as usual). */
int hrm_nqs_cancel(struct hrm_nqs *q, struct hrm_env *env, int32_t task);
/* Nothing queued, running, held or parked here. */
bool hrm_nqs_idle(const struct hrm_nqs *q);

/* P4 estimated wait, in us, of one more task of (cpu, mem) in queue:
 * 0 when it would start now (or could preempt a lower priority); else the
 * smallest remaining time of the running tasks plus the queued work ahead of
 * it divided by the slots the queue runs at once; estimates are corrected by
 * eps of their job kind.  Negative -reason when it could never run here. */
int64_t hrm_nqs_wait(const struct hrm_nqs *q, int32_t queue, int64_t cpu, int64_t mem,
                     int64_t now_us);
/* Queue index for a job (its workload queue's name, else 0). */
int32_t hrm_nqs_queue_for_job(const struct hrm_nqs_config *cfg, const struct hrm_workload *wl,
                              int32_t job);
void hrm_nqs_queue_info(const struct hrm_nqs *q, int32_t queue, struct hrm_nqs_queue_info *out);
const struct hrm_nqs_stats *hrm_nqs_stats(const struct hrm_nqs *q);
double hrm_nqs_eps(const struct hrm_nqs *q, enum hrm_job_kind kind);

/* Packing of a per-slot request into a HOLD message. */
static inline void hrm_nqs_hold_size(struct hrm_msg *m, int64_t cpu, int64_t mem)
{
    m->gpu_mask = (uint32_t)cpu;
    m->value = mem;
}

#endif
