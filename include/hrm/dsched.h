/* Distributed scheduler instance (P4) and baselines, as a sans-IO role. */
#ifndef HRM_DSCHED_H
#define HRM_DSCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/env.h"
#include "hrm/error.h"
#include "hrm/nqs.h"
#include "hrm/workload.h"

enum hrm_dsched_kind {
    HRM_DSCHED_RANDOM,        /* each task to a random node's queue, no probe */
    HRM_DSCHED_SPARROW,       /* Sparrow per-task sampling: d probes, shortest queue */
    HRM_DSCHED_SPARROW_BATCH, /* Sparrow batch sampling, late binding: d*m reservations */
    HRM_DSCHED_TWO_PHASE,     /* DHRM per task: hold d queues, run on the smallest wait */
    HRM_DSCHED_MULTI_WAY,     /* DHRM batch: hold min(d*k, nodes) queues, greedy (GS) */
    HRM_DSCHED_CENTRAL        /* one instance, global state, a service time per decision */
};

struct hrm_dsched_config {
    enum hrm_dsched_kind kind;
    int32_t index;                    /* the instance's address is hrm_addr_sched(index) */
    double d;                         /* probes per task; 0 = 2 */
    const struct hrm_nqs_config *nqs; /* the queues of every node (borrowed); NULL = one */
    bool order_deadline;              /* GS orders jobs by deadline (then submit), not submit */
    int64_t max_wait_us;              /* multi-way: no task to a queue waiting longer; it goes
                                         to the next round instead.  < 0 = no bound */
    bool no_locality;                 /* ignore input replicas when choosing probes */
    bool no_cancel;                   /* late binding: keep reservations of fully bound jobs */
    int64_t decision_us;              /* central: service time of one placement decision */
    int64_t pass_delay_us;            /* ready tasks are batched this long (0 = same instant) */
    int64_t round_timeout_us;         /* a probing round whose replies are not all in by then
                                         decides with those it has; a missing reply counts as
                                         a refusal.  Late replies are then ignored (a granted
                                         hold gets DEL).  0 = wait for every reply */
    uint64_t seed;
};

struct hrm_dsched_stats {
    int64_t jobs, rounds, probes, leftovers, runs, dels, reservations, binds, binds_empty;
    int64_t rejected, decisions;
    int64_t timeouts, late_replies, requeued; /* rounds timed out, replies after, runs lost */
};

/*
 * cluster and wl are borrowed and outlive the instance; both may grow
 * afterwards (nodes appended with hrm_cluster_add_node, jobs appended to wl).
 * The cluster may have no node yet.  Its nodes at creation are up; a node
 * added later is down until hrm_dsched_node_up(..., true).  NULL with detail
 * for a bad config.
 */
struct hrm_dsched *hrm_dsched_new(const struct hrm_cluster *cluster, const struct hrm_workload *wl,
                                  const struct hrm_dsched_config *cfg, struct hrm_error *err);
void hrm_dsched_free(struct hrm_dsched *s); /* NULL is a no-op */

/*
 * Messages: JOB_SUBMIT (client: the job registers here), HOLD_REPLY,
 * GET_TASK, TASK_END (nodes).  Sends HOLD, DEL, RUN, RESERVE, NO_TASK to
 * nodes and JOB_END to HRM_ADDR_CLIENT when the job's last task has ended.
 * 0 or a negative code for a message that breaks the protocol.
 *
 * TASK_END status DONE or FAILED ends a task; LOST or PREEMPTED of a placed
 * task means its run is gone: it is ready again, first in line.  A TASK_END
 * for a task not placed yet (the driver cancelled its job) ends it too: no
 * round places it any more.
 */
int hrm_dsched_on_msg(struct hrm_dsched *s, struct hrm_env *env, const struct hrm_msg *m);
int hrm_dsched_on_timer(struct hrm_dsched *s, struct hrm_env *env, uint64_t cookie);

/*
 * Node churn: a node that is down is never probed, drawn or sent a run (the
 * central kind ignores this).  Marking a node up while tasks are ready arms a
 * pass; with no node up, ready tasks wait.  node may be beyond the cluster's
 * size at creation (the cluster grew).
 */
void hrm_dsched_node_up(struct hrm_dsched *s, struct hrm_env *env, int32_t node, bool up);

/*
 * A restarted driver re-registered a job (JOB_SUBMIT) whose task already runs
 * or is queued on some node: the task counts as placed, without a message;
 * its TASK_END ends it as usual.  Call in the instant of the JOB_SUBMIT,
 * before the pass fires.  0, or -EINVAL if task is not a ready task of a job
 * registered here.
 */
int hrm_dsched_adopt(struct hrm_dsched *s, int32_t task);

/* Tasks registered here and not ended (how busy the instance is). */
int64_t hrm_dsched_load(const struct hrm_dsched *s);
/* When a task of a job registered here became ready, or -1. */
int64_t hrm_dsched_ready_us(const struct hrm_dsched *s, int32_t task);
const struct hrm_dsched_stats *hrm_dsched_stats(const struct hrm_dsched *s);

/* ---- the greedy assignment of multi-way scheduling (paper Alg. 1), exposed for tests ---- */

/* A place a task can go: a held slot (key 0) or a queue position (key = wait). */
struct hrm_gs_slot {
    int64_t key;      /* wait (or queue length); smaller first, ties in the given order */
    int64_t cpu, mem; /* largest task that fits */
    int32_t node;
};

struct hrm_gs_task {
    int64_t order; /* job submit time (or deadline); smaller first */
    int64_t cpu, mem;
    const int32_t *prefs; /* preferred nodes (input replicas), may be NULL */
    int32_t nprefs;
};

/*
 * Tasks in increasing order (stable), each to the first unused slot in
 * increasing key (stable) that fits it, preferring a slot on one of its
 * preferred nodes when one is left; a slot takes one task.  Slots whose key
 * exceeds max_key (>= 0) are not used.  out[i] is the slot of tasks[i] or -1
 * (a leftover for the next round).  Returns how many were assigned.
 * scratch needs 2 * (ntasks + nslots) int32_t.
 */
size_t hrm_gs_assign(const struct hrm_gs_task *tasks, size_t ntasks,
                     const struct hrm_gs_slot *slots, size_t nslots, int64_t max_key, int32_t *out,
                     int32_t *scratch);

#endif
