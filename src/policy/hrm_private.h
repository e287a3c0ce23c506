/* The hrm policy's internals (SPEC P0): units with batch/stream queues, placement rules. */
#ifndef HRM_POLICY_HRM_PRIVATE_H
#define HRM_POLICY_HRM_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/ru.h"
#include "hrm/waitsim.h"
#include "policy/policy_private.h"

enum hrmp_queue { HRMP_STREAM, HRMP_BATCH, HRMP_NQUEUES }; /* served in this order */

enum hrmp_side { HRMP_SHARED, HRMP_BATCH_ONLY, HRMP_STREAM_ONLY }; /* static partitions */

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

struct hrmp {
    struct hrmp_cfg cfg;
    const struct hrm_cluster *c;
    int32_t nnodes, nru;
    struct hrm_ru *ru;   /* every node's units: GPU units then its CPU unit */
    int32_t *ru_first;   /* per node, its first unit; the CPU unit is ru_first + gpus */
    int32_t *base_want;  /* the spec's cores_per_gpu, the floor of flexible binding */
    struct hrmp_fifo *q; /* per unit, HRMP_NQUEUES queues */
    int32_t *solo;       /* per unit: GPU tasks without GPU phases (they run alone) */
    uint8_t *side;       /* per node, enum hrmp_side */
    int32_t ntasks;
    int32_t *task_ru;         /* unit a task is queued at or runs on; -1 none */
    int32_t *qnext;           /* queue links */
    uint8_t *running;         /* the task holds its unit (else queued, if task_ru >= 0) */
    int32_t *job_gpu;         /* per job: GPU tasks queued or running (fair share) */
    struct hrm_wait_table wt; /* scratch for simulaterun */
    int32_t *todo;            /* scratch: ready tasks to place this pass */
    size_t ntodo, cap_todo;
};

/* Queue a ready task joins, by its job's kind (stream only when stream-aware). */
enum hrmp_queue hrmp_queue_of(const struct hrmp *p, const struct hrm_state *s, int32_t task);
/* Whether task could ever run on unit u (type, partition, capacity of an empty unit). */
bool hrmp_unit_admits(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u);
/* Whether task can start on unit u now; *via gets the unit it would be
 * charged to (u, or a lending GPU unit of the node for a CPU task). */
bool hrmp_can_start(const struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u,
                    int32_t *via);
/* The unit a new ready task should join (SPEC P0 placement), or -1: none admits it. */
int32_t hrmp_choose(struct hrmp *p, const struct hrm_state *s, int32_t task, int64_t now);
/* Whether a GPU task may share its GPU: only tasks that declare GPU phases
 * (hrm_workload_gpu_phases) have CPU phases to overlap; any other GPU task
 * is taken as all kernel and gets its GPU alone. */
bool hrmp_stackable(const struct hrm_state *s, int32_t task);
/* Task t starts holding (sign +1) or stops holding (-1) unit u. */
void hrmp_hold(struct hrmp *p, const struct hrm_state *s, int32_t t, int32_t u, int sign);
/* Rebinds node's cores so each GPU unit holds what its tasks need (flex). */
void hrmp_rebind(struct hrmp *p, int32_t node);

#endif
