/* The hrm policy's internals (P0): units with batch/stream queues, placement rules. */
#ifndef HRM_POLICY_HRM_PRIVATE_H
#define HRM_POLICY_HRM_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/ru.h"
#include "hrm/ruplace.h"
#include "hrm/waitsim.h"
#include "policy/policy_private.h"

enum hrmp_queue { HRMP_STREAM, HRMP_BATCH, HRMP_NQUEUES }; /* served in this order */

struct hrmp_fifo {
    int32_t head, tail, n;
};

/* Parameters (docs/policies.md, "P0"). */
struct hrmp_cfg {
    bool lend;         /* CPU tasks may borrow idle cores of GPU units */
    bool flex;         /* GPU units grow their bound cores to what their tasks need */
    bool stream_aware; /* stream tasks: own queue, served first, smallest simulated wait */
    bool fair;         /* A_j = min(floor(Q/K), N_j) orders GPU tasks when GPUs are scarce */
    int32_t stack;     /* max GPU tasks per GPU unit; 0 = GPU memory decides */
    double partition;  /* share of nodes reserved for stream jobs (static partitions); 0 = shared */
};

/* One part held by a running task (pool entry; next links the task's parts). */
struct hrmp_held {
    int32_t unit, next;
    struct hrm_res part;
    int32_t milli; /* GPU share on the unit (hrm_ru_add_share) */
};

/* A kind of task of the workload (the target workload of the fragmentation
 * measure): cores, GPUs and GPU memory per GPU; whole: it holds its GPUs
 * alone (several GPUs, or no GPU phases to share). */
struct hrmp_kind {
    int64_t cpu;
    int32_t gpus;
    int64_t gmem;
    bool whole;
    double weight; /* its share of the workload's tasks */
    int64_t count; /* the workload's tasks of this kind */
};

struct hrm_frag_type;

/* A growth of expected fragmentation measured for (unit, kind), valid while
 * the node is as it was (same version, same free cores). */
struct hrmp_gmemo {
    uint32_t version1; /* node_version + 1 when measured; 0 = never */
    int64_t cpu_free;
    double growth;
};

struct hrmp {
    struct hrmp_cfg cfg;
    const struct hrm_cluster *c;
    int32_t nnodes, nru;
    struct hrm_ru *ru;   /* every node's units: GPU units then its CPU unit */
    int32_t *ru_first;   /* per node, its first unit; the CPU unit is ru_first + gpus */
    int32_t *base_want;  /* the spec's cores_per_gpu, the floor of flexible binding */
    struct hrmp_fifo *q; /* per unit, HRMP_NQUEUES queues */
    int32_t *solo;       /* per unit: GPU tasks without GPU phases (they run alone) */
    uint8_t *side;       /* per node, enum hrm_ru_side */
    int32_t ntasks, njobs;
    size_t cap_tasks, cap_jobs, cap_kinds, cap_task_kind; /* per-task, per-job arrays; kinds */
    int32_t *task_ru;   /* unit a task is queued at or runs on (its first part); -1 none */
    int32_t *task_held; /* first of a running task's parts in held, -1 none */
    uint8_t *relaxed;   /* per task: 0 not known yet, 1 the configuration's rules, 2 permissive */
    struct hrmp_held *held; /* pool of parts; free ones linked from free_held */
    size_t nheld, cap_held;
    int32_t free_held;
    int32_t *qnext;           /* queue links */
    uint8_t *running;         /* the task holds its unit (else queued, if task_ru >= 0) */
    int32_t *job_gpu;         /* per job: GPU tasks queued or running (fair share) */
    int32_t *job_queued;      /* per job: its tasks queued at a unit (not running) */
    int64_t listed_walked;    /* ready tasks the passes' listing visited (its cost, for tests) */
    struct hrm_wait_table wt; /* scratch for simulaterun */
    int32_t *todo;            /* scratch: ready tasks to place this pass */
    size_t ntodo, cap_todo;
    /* fragmentation gradient (hrm_frag.c) */
    struct hrmp_kind *kinds;
    int32_t nkinds;
    int32_t *task_kind;       /* per task, its kind */
    uint32_t *node_version;   /* per node, bumped when a task takes or leaves its units */
    struct hrmp_gmemo *gmemo; /* per (unit, kind), the growth last measured; NULL: none */
    struct hrm_frag_type *ftypes; /* kinds in thousandths of a GPU of ftypes_gmem bytes */
    int64_t ftypes_gmem;
    /* the unit choice's memo (hrm_choose.c) */
    uint32_t *node_cversion;      /* per node, bumped when what the choice reads of it changes */
    int32_t *changes;             /* ring of the nodes changed, the latest nchanges */
    uint64_t nchanges;
    uint64_t choice_epoch;        /* bumped when every memo is stale (the workload grew) */
    uint64_t choice_clock;
    struct hrmp_choice *choices;  /* per kind of task, each node's result and their tournament */
    int64_t units_weighed;        /* units hrmp_choose weighed (its cost, for tests) */
};

/* Queue a ready task joins, by its job's kind (stream only when stream-aware). */
enum hrmp_queue hrmp_queue_of(const struct hrmp *p, const struct hrm_state *s, int32_t task);
/* The rules task is placed by: the configuration's, or, for a task no unit
 * of the cluster would ever admit under them, the permissive ones (flexible
 * binding, lending, no partitions), so no task that fits a node is left
 * pending for ever. */
struct hrm_ru_rules hrmp_rules_of(const struct hrmp *p, int32_t task);
/* Whether task could ever run on unit u under its rules (type, partition,
 * capacity of an empty unit). */
bool hrmp_unit_admits(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u);
/* Whether task, queued at unit u, can start now; *plan gets how its request
 * would be spread over the node's units. */
bool hrmp_can_start(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u,
                    struct hrm_ru_plan *plan);
/* The unit a new ready task should join (P0 placement), or -1: none admits it.  Remembered per
 * kind of task and brought up to date with the nodes changed since (hrm_choose.c): the same
 * unit as hrmp_choose_scan, which weighs every unit. */
int32_t hrmp_choose(struct hrmp *p, const struct hrm_state *s, int32_t task, int64_t now);
int32_t hrmp_choose_scan(struct hrmp *p, const struct hrm_state *s, int32_t task, int64_t now);
/* What the choice reads of node changed: a task queued, dequeued, started or ended there, its
 * cores re-bound, the node up or down. */
void hrmp_node_changed(struct hrmp *p, int32_t node);
/* The memo's arrays (at the units' build), freeing them, and forgetting every choice (the
 * workload's kinds changed). */
void hrmp_choices_build(struct hrmp *p);
void hrmp_choices_fini(struct hrmp *p);
void hrmp_choices_reset(struct hrmp *p);
/* Unit u's node as per-host placement sees it (include/hrm/ruplace.h). */
void hrmp_host(const struct hrmp *p, const struct hrm_state *s, int32_t u, struct hrm_ru_host *h);
/* Settles once per task which rules place it (hrmp_rules_of). */
void hrmp_settle_rules(struct hrmp *p, const struct hrm_state *s, int32_t task);
/* Tasks held or queued at unit u. */
int32_t hrmp_queue_len(const struct hrmp *p, int32_t u);
/* simulaterun: how long task would wait at unit u (stream tasks). */
int64_t hrmp_unit_wait(struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u,
                       int64_t now);
/* Whether a GPU task may share its GPU (hrm_ru_task_stackable). */
bool hrmp_stackable(const struct hrm_state *s, int32_t task);
/* Task t starts holding the parts of plan. */
void hrmp_hold(struct hrmp *p, const struct hrm_state *s, int32_t t, const struct hrm_ru_plan *plan);
/* Task t stops holding its parts. */
void hrmp_release(struct hrmp *p, const struct hrm_state *s, int32_t t);
/* The plan of a start the policy did not make (the state's node and GPUs). */
void hrmp_plan_of_state(const struct hrmp *p, const struct hrm_state *s, int32_t t,
                        struct hrm_ru_plan *plan);
/* Rebinds node's cores so each GPU unit holds what its tasks need, and at
 * least its spec binding while the node's cores allow (flex). */
void hrmp_rebind(struct hrmp *p, int32_t node);
/* GPU memory of unit u other tasks may still stack into (0 on a GPU held by a
 * task that runs alone, or on a CPU unit). */
int64_t hrmp_gpu_free(const struct hrmp *p, int32_t u);

/* The kinds of task of s's workload, the target of the fragmentation measure. */
void hrmp_frag_build(struct hrmp *p, const struct hrm_state *s);
/* The workload gained tasks from..ntasks-1: their kinds, the kinds' weights over every task. */
void hrmp_frag_grow(struct hrmp *p, const struct hrm_state *s, int32_t from);
void hrmp_frag_fini(struct hrmp *p);
/* Growth of the expected fragmentation (hrm_frag_node_amount) of unit u's
 * node for the workload's kinds if task starts at u: FGD's gradient, the hrm
 * policy's tie-break among units of equal wait.  0 when the node's GPUs have
 * no memory modelled. */
double hrmp_frag_growth(struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u);

#endif
