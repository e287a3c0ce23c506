/* Shared-state scheduler instance internals shared by ssched.c and ssched_plan.c. */
#ifndef HRM_SSCHED_PRIVATE_H
#define HRM_SSCHED_PRIVATE_H

#include "hrm/rng.h"
#include "hrm/ssched.h"

enum stask_state { S_WAITING, S_READY, S_CLAIMED, S_RUNNING, S_DONE };
#define S_CONFLICTED 0x80 /* flag on tstate: a claim of this task conflicted before */
#define S_STATE(x) ((x)&0x7f)

/* A job registered with this instance. */
struct sjob {
    int32_t job;
    int32_t left;        /* tasks not ended */
    int32_t *stage_left; /* per stage of the job: tasks not ended */
    int32_t *deps_left;  /* per stage: dependency stages not ended */
    int64_t *ready_us;   /* per task of the job */
    uint8_t *tstate;     /* per task: enum stask_state | S_CONFLICTED */
    int32_t *rq;         /* ready tasks not claimed: a ring of ntasks slots */
    int32_t rq_head, rq_n;
    int32_t gpu_running;  /* committed GPU tasks not ended */
    int32_t gpu_left;     /* GPU tasks not ended */
    uint64_t blocked_ver; /* nothing of it fitted the snapshot of this version */
    bool queued;
};

struct splan {
    int32_t task, node;
    uint32_t gpu_mask; /* the GPUs it is claimed on (0: none) */
    uint64_t seen;
};

enum sphase { PH_IDLE, PH_SYNC, PH_THINK, PH_COMMIT };

struct hrm_ssched {
    const struct hrm_cluster *c;
    const struct hrm_workload *wl;
    struct hrm_ssched_config cfg;
    hrm_addr self;
    struct hrm_rng rng;
    struct sjob **of_job; /* per workload job: its record here, or NULL */
    int32_t *jq;          /* jobs with ready tasks not in a transaction: a ring of njobs */
    int32_t jq_head, jq_n;
    int32_t cap_jobs; /* of_job and jq slots: the workload's jobs, more once it grows */
    int64_t load;
    struct hrm_snapshot snap;
    /* the transaction */
    enum sphase phase;
    int32_t txn, cur;
    bool locked, conflicted;
    struct splan *plan;
    size_t nplan, cap_plan;
    int32_t acks_left;
    struct hrm_ssched_stats st;
};

void ssched_rq_push(struct sjob *j, int32_t ntasks, int32_t task);
void ssched_rq_push_front(struct sjob *j, int32_t ntasks, int32_t task);
/* Places the ready tasks of job record j on the snapshot; fills s->plan and
 * returns how many tasks were tried (placed or found no room). */
int32_t ssched_plan(struct hrm_ssched *s, struct sjob *j);

#endif
