/* Cluster state: what runs where, what is free, which tasks are ready; the scheduler's view. */
#ifndef HRM_STATE_H
#define HRM_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/resource.h"
#include "hrm/workload.h"

enum hrm_task_status {
    HRM_TASK_UNSUBMITTED, /* its job has not arrived yet */
    HRM_TASK_BLOCKED,     /* waiting for the stages it depends on */
    HRM_TASK_READY,       /* pending: may be placed */
    HRM_TASK_RUNNING,
    HRM_TASK_DONE,
    HRM_TASK_FAILED       /* gave up after max attempts */
};

/* Why a running task stops. */
enum hrm_task_outcome {
    HRM_OUTCOME_DONE,      /* finished successfully */
    HRM_OUTCOME_FAILED,    /* failed; retried while attempts remain */
    HRM_OUTCOME_PREEMPTED, /* killed by the scheduler; requeued, progress lost */
    HRM_OUTCOME_LOST       /* its node went down; requeued */
};

struct hrm_task_state {
    uint8_t status;      /* enum hrm_task_status */
    int32_t node;        /* while running */
    uint32_t gpu_mask;   /* GPUs of that node held while running */
    int32_t attempt;     /* starts at 0; +1 at each placement */
    int64_t ready_us;    /* when it last became ready */
    int64_t start_us;    /* when it last started */
    int32_t prev, next;  /* intrusive links: the job's ready list or the node's running list */
};

struct hrm_job_state {
    bool submitted, finished;
    bool failed;                    /* a task failed for good; the job ends when nothing runs */
    int64_t submit_us, end_us;
    int64_t arrival;                /* order of submission to this state */
    int32_t ready_head, ready_tail; /* ready tasks, in the order they became ready */
    int32_t nready, nrunning, ndone, nfailed;
    int32_t *stage_left;            /* not owned here: points into hrm_state storage */
    struct hrm_res alloc;           /* sum of requests of running tasks */
    int32_t prev_active, next_active; /* list of jobs with ready tasks, by arrival */
};

struct hrm_node_state {
    bool up;
    struct hrm_res free;
    uint32_t gpu_busy;   /* GPUs holding at least one task */
    int32_t nrunning;
    int32_t run_head;    /* running tasks on this node (intrusive via task prev/next) */
    int32_t prev_free, next_free; /* up nodes with free cpu: id order at start, then LIFO */
    bool in_free_list;
    uint64_t version;    /* bumped at each change (optimistic commit) */
};

struct hrm_state {
    const struct hrm_cluster *cluster; /* borrowed, outlives the state */
    const struct hrm_workload *wl;     /* borrowed, outlives the state */
    struct hrm_node_state *nodes;
    struct hrm_task_state *tasks;
    struct hrm_job_state *jobs;
    int32_t *stage_left;  /* per stage: tasks not done yet */
    int32_t *stage_deps_left; /* per stage: dependency stages not done yet */
    struct hrm_res *user_alloc;  /* per user */
    struct hrm_res *queue_alloc; /* per queue */
    int32_t *user_running;
    int32_t *queue_running;
    struct hrm_res free_total;   /* over up nodes */
    struct hrm_res up_total;     /* capacity of up nodes */
    int32_t active_head, active_tail; /* jobs with ready tasks */
    int32_t free_head, free_tail;     /* up nodes with free cpu (see state.c: LIFO) */
    int32_t njobs_running;        /* submitted and not finished */
    int64_t arrivals;             /* jobs submitted so far */
    int64_t nready;               /* ready tasks over all jobs */
    int64_t nrunning;             /* running tasks over all nodes */
    int32_t max_attempts;         /* failures tolerated per task (default 4) */
    /* What each running task holds, once a policy started one with a charge
     * other than its request (hrm_state_start_charged); NULL until then,
     * when every task holds its request. */
    struct hrm_res *charge;
    /* Tasks on each GPU (indexed by cluster unit: the node's unit_first + g),
     * once a policy stacked a task on a busy GPU (hrm_state_start_stacked);
     * NULL until then, when a GPU holds at most one task. */
    uint16_t *gpu_tasks;
    uint64_t version;
    /* How much of the workload the arrays cover, and their capacities: the
     * workload may grow after the state is made (hrm_state_grow). */
    int32_t ntasks, njobs, nstages, nusers, nqueues;
    size_t cap_tasks, cap_jobs, cap_stages, cap_users, cap_queues, cap_charge;
};

struct hrm_state *hrm_state_new(const struct hrm_cluster *c, const struct hrm_workload *wl);
void hrm_state_free(struct hrm_state *s);

/* The workload gained jobs (with their stages and tasks), users or queues since the state was
 * made or last grown: extends the per-job, per-task, per-stage, per-user and per-queue arrays to
 * it, the new entries exactly as hrm_state_new would have made them (unsubmitted jobs).
 * Amortised O(what was added): arrays grow by doubling. */
void hrm_state_grow(struct hrm_state *s);

/* Job arrives: its root-stage tasks become ready, the rest blocked.  -HRM_ESTATE if already submitted. */
int hrm_state_submit_job(struct hrm_state *s, int32_t job, int64_t now_us);

/* GPUs a task could take on node now (lowest free GPUs whose memory fits), or -HRM_ENOFIT.
 * Tasks asking no GPU get mask 0. */
int hrm_state_pick_gpus(const struct hrm_state *s, int32_t task, int32_t node, uint32_t *mask);
/* Whether task fits on node now (up, resources, GPUs). */
bool hrm_state_fits(const struct hrm_state *s, int32_t task, int32_t node);

/* Starts a ready task on node with the given GPUs (0 for none, or let pick when
 * gpu_mask is HRM_GPUS_ANY).  -HRM_ESTATE if not ready or node down,
 * -HRM_ENOFIT if it does not fit; no change then. */
#define HRM_GPUS_ANY 0xffffffffu
int hrm_state_start(struct hrm_state *s, int32_t task, int32_t node, uint32_t gpu_mask,
                    int64_t now_us);

/* A running task stops.  On DONE, tasks of stages whose dependencies are now
 * all done become ready; on FAILED it is requeued unless attempts are used up
 * (then FAILED for good, and its job fails); PREEMPTED and LOST requeue.
 * Returns the number of tasks that became ready, or -HRM_ESTATE if not running. */
int hrm_state_stop(struct hrm_state *s, int32_t task, enum hrm_task_outcome outcome,
                   int64_t now_us);

/* Like hrm_state_start, but the task holds charge instead of its request
 * (P2: a policy allocating by estimated demand) in the node's free
 * vector and the job/user/queue allocations.  The fit is the caller's
 * judgement: free resources may go negative (a policy over-committing
 * compressible cpu).  -HRM_ESTATE if not ready or node down, -HRM_ENOFIT if
 * the GPUs do not fit, -EINVAL for a negative charge; no change then. */
int hrm_state_start_charged(struct hrm_state *s, int32_t task, int32_t node, uint32_t gpu_mask,
                            const struct hrm_res *charge, int64_t now_us);
/* P0 queue stacking: like hrm_state_start, but GPUs of gpu_mask (an
 * explicit set: the right count, existing) may already run tasks.  Whether
 * the GPU memory allows it is the caller's judgement (hrm_ru_fits); the
 * task's other dimensions must fit the node.  A GPU already busy is not
 * charged again: the task holds its request less one GPU per busy GPU, so
 * the node's GPU count stays the count of idle GPUs.  A GPU stays busy
 * until its last task ends.  -HRM_ESTATE / -HRM_ENOFIT with no change. */
int hrm_state_start_stacked(struct hrm_state *s, int32_t task, int32_t node, uint32_t gpu_mask,
                            int64_t now_us);
/* What a running task holds: its charge, or its request. */
static inline const struct hrm_res *hrm_state_held(const struct hrm_state *s, int32_t task)
{
    return s->charge ? &s->charge[task] : &s->wl->tasks[task].req;
}

/* Node goes down: its running tasks are requeued (LOST).  Returns how many. */
int hrm_state_node_down(struct hrm_state *s, int32_t node, int64_t now_us);
void hrm_state_node_up(struct hrm_state *s, int32_t node);

/* Job finished (all tasks done, or a task failed for good). */
static inline bool hrm_state_job_finished(const struct hrm_state *s, int32_t job)
{
    return s->jobs[job].finished;
}

/* Share of the cluster a job/user/queue holds: dominant share of its allocation over up capacity. */
double hrm_state_job_share(const struct hrm_state *s, int32_t job);
double hrm_state_user_share(const struct hrm_state *s, int32_t user);

#endif
