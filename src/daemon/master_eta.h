/* Why a job is pending and when it should start: the reason text and P0's simulaterun over the cluster. */
#ifndef HRM_MASTER_ETA_H
#define HRM_MASTER_ETA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/resource.h"
#include "hrm/tourney.h"
#include "hrm/waitsim.h"

/*
 * The estimate is P0's `simulaterun` (hrm_waitsim_run, the simulator's own code) with each up
 * node as one unit: its waiting table holds the tasks running there (with what is left of their
 * expected run) and the tasks ahead that the walk queued there.  The walk takes pending tasks in
 * the order the cluster serves them and queues each on the node where simulaterun says it
 * starts first (P0's placement rule).  A job's estimate is the simulated start of its next
 * pending task.  docs/runtime.md, "Pending jobs: reason and estimate".
 *
 * A row's two additive amounts are the task's cores (vcore) and its host memory (the
 * simulation's second amount, gmem, which at the node level stands for the node's memory);
 * a GPU task counts once against the node's GPUs (max_stack).
 */

/* A run time nobody knows.  Its rows are simulated as ending this far away, so a start that
 * depends on one comes out at or beyond it and is reported as unknown (null). */
#define ETA_UNKNOWN_US 10000000000000ll /* 10^13 us, about 116 days */

/* The default bound on a walk's work, in waiting-table rows visited by simulaterun: past it,
 * later jobs' estimates are unknown (docs/benchmarks.md: about 20 ms). */
#define ETA_WORK_MAX 1000000ll

struct eta_node {
    bool up;
    struct hrm_res cap;  /* cpu (milli-cores), mem, gpu: what the node has */
    struct hrm_res free; /* what is free now */
};

struct eta_task {
    struct hrm_res req;
    int64_t time_us; /* its expected run time (running: what is left of it); < 0 unknown */
};

/* The cluster as simulaterun units; built by eta_sim_init, freed by eta_sim_fini. */
struct eta_sim {
    const struct eta_node *nodes; /* borrowed */
    int32_t nnodes;
    struct hrm_wait_table *tables; /* per node: running rows first, then queued ones */
    int64_t work, budget;          /* rows visited so far, and the bound */
    /* The last shape asked about and each node's answer for it (-2: not known), so a job of
     * many equal tasks costs one simulation per task, on the node that changed. */
    struct eta_task last;
    bool has_last;
    int64_t *wait;
    /* Where the last shape starts first, kept as the walk queues tasks: a tournament over the
     * nodes' answers (entrant n: node n, present when the shape can start there), and the nodes whose
     * table changed since it was last brought up to date.  So a job of many equal tasks costs
     * O(log nodes) per task, not a read of every node's answer (O(nodes): 5,000 agents and
     * 100,000 tasks queued made a listing's walk 0.5 s of the master's CPU). */
    struct hrm_tourney best;
    int32_t *changed, nchanged;
    int64_t looked; /* node answers read to find where a task starts first, since init */
};

void eta_sim_init(struct eta_sim *s, const struct eta_node *nodes, int32_t nnodes,
                  int64_t budget);
void eta_sim_fini(struct eta_sim *s);
/* A task running on node with left_us of its run left (< 0 unknown).  Before any queued row. */
void eta_sim_running(struct eta_sim *s, int32_t node, const struct eta_task *t);
/* A task already placed in node's queue (distributed scheduling), behind those there. */
void eta_sim_queued(struct eta_sim *s, int32_t node, const struct eta_task *t);
/* When t could start (us from now, 0: at once) if it were next, on the best up node (its index
 * in *node), or -1 when unknown: no up node can ever hold it, a run time nobody knows decides
 * it, or the work bound is spent. */
int64_t eta_sim_start(struct eta_sim *s, const struct eta_task *t, int32_t *node);
/* t joins the queue of the node where it would start first (nothing when none can hold it). */
void eta_sim_enqueue(struct eta_sim *s, const struct eta_task *t);

/* The request of one task in words: "2 CPUs, 512.0M memory and 1 GPU", or "... and 0.5 GPU with
 * 4.0G" for a share of one GPU (gpu_share thousandths, 1..999; 0 or 1000: whole GPUs).  The one
 * place that words a request, for reasons and messages.  Returns buf. */
char *eta_request_text(const struct hrm_res *req, int32_t gpu_share, char *buf, size_t len);

/* What the reason is made of (all borrowed). */
struct eta_reason_in {
    const struct hrm_res *req; /* the next pending task's request */
    int32_t gpu_share;         /* its share of one GPU in thousandths (1000: whole GPUs) */
    const struct eta_node *nodes;
    const char *const *names; /* per node */
    int32_t nnodes;
    int32_t ahead; /* jobs ahead of it in its queue */
    const char *queue;
    bool reconciling;  /* the master waits for agents after a restart */
    bool failed;       /* a task of the job failed for good: the rest will be skipped */
    const char *holder; /* when resources are free and nothing is ahead: who holds it back */
};

/* Why the job waits, in one line (docs/runtime.md lists the rules).  Returns buf. */
char *eta_reason(const struct eta_reason_in *in, char *buf, size_t len);

struct master;
struct rjob;

/* The master's side (master_eta.c): the run-time history, the latest walk's estimates (kept
 * while nothing changes, at most ETA_MEMO_US), and the answers. */
#define ETA_MEMO_US 1000000ll
/* A listing finding the memo older than ETA_MEMO_US is answered from it while a new walk runs
 * over the next turns, at most ETA_TURN_ROWS rows in each (hrm master --eta-turn-rows); a memo
 * older than ETA_SPREAD_MAX_US that no walk refreshes is walked again at once. */
#define ETA_TURN_ROWS 20000ll
#define ETA_SPREAD_MAX_US 5000000ll
struct eta_state;
struct eta_state *eta_state_new(void);
void eta_state_free(struct eta_state *e); /* NULL: no-op */
/* Task idx of j ended well: its run time joins its user's and command's history. */
void eta_history_add(struct master *m, const struct rjob *j, int32_t idx);
/* Every finished task of the job table (a restarted master). */
void eta_history_rebuild(struct master *m);

/* Adds "pending_reason" and "estimated_start_s" to o, the job object of j, when j has pending
 * tasks (else both null).  Both answers walk the queue once (bounded by ETA_WORK_MAX) and keep
 * every job's estimate until a task, a node or the job table changes, or ETA_MEMO_US passes. */
void eta_describe_job(struct master *m, const struct rjob *j, json_t *o);
/* Every pending job's estimated start (wall-clock us into start_us[id - 1], m->njobs entries;
 * -1 unknown) from a walk counting from the wall clock now, taken in steps of at most about
 * rows waiting-table rows each (< 0: one step) as a listing's walk is.  Returns the steps. */
int32_t eta_walk_run(struct master *m, int64_t now, int64_t rows, int64_t *start_us);
/* A listing's walk under way: the master's loop takes its turns without waiting. */
bool eta_walk_pending(const struct master *m);
/* Takes the next step of the listing's walk under way, if any (called once a turn, after the
 * turn's replies left): at most cfg.eta_turn_rows waiting-table rows. */
void eta_turn(struct master *m);
/* Adds "estimated_start_s" to each job summary of list (an array of job objects with "id"). */
void eta_annotate_list(struct master *m, json_t *list);

#endif
