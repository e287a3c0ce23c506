/* Scheduling policies: one ops table per algorithm, a registry of them, and the context a decision runs in. */
#ifndef HRM_POLICY_H
#define HRM_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "hrm/env.h"
#include "hrm/error.h"
#include "hrm/rng.h"
#include "hrm/state.h"

/* Something the policy may want to know about; state is already updated. */
enum hrm_event_type {
    HRM_EV_JOB_SUBMIT, /* job */
    HRM_EV_TASK_START, /* task, node */
    HRM_EV_TASK_STOP,  /* task, node, outcome */
    HRM_EV_JOB_END,    /* job */
    HRM_EV_NODE_DOWN,  /* node */
    HRM_EV_NODE_UP,    /* node */
    HRM_EV_TASK_USAGE, /* task, node, attempt, usage: a running task's use (P2) */
    HRM_EV_NODE_USAGE  /* node, usage: the node's foreign load (what is not an hrm task) */
};

struct hrm_event {
    enum hrm_event_type type;
    int64_t now_us;
    int32_t job, task, node;
    enum hrm_task_outcome outcome;
    int32_t attempt;        /* HRM_EV_TASK_USAGE */
    struct hrm_usage usage; /* HRM_EV_*_USAGE */
};

/* Policy parameters: "key=value" strings from the spec or the command line,
 * read by the policy's init with the helpers below.  Keys a policy does not
 * know are an error. */
struct hrm_params {
    const char *const *items; /* borrowed */
    size_t count;
};

/* Looks key up; if present parses it (double) into *out.  Returns 0 (absent
 * leaves *out unchanged) or -HRM_ESPEC with detail.  Unknown keys are caught
 * by hrm_params_check against the policy's list of known keys. */
int hrm_params_double(const struct hrm_params *p, const char *key, double *out,
                      struct hrm_error *err);
int hrm_params_int(const struct hrm_params *p, const char *key, int64_t *out,
                   struct hrm_error *err);
/* 0 or 1 into *out (absent leaves it); -HRM_ESPEC for anything else. */
int hrm_params_bool(const struct hrm_params *p, const char *key, bool *out, struct hrm_error *err);
/* A duration given in milliseconds, 0 .. max_ms, into *us (absent leaves it).  With
 * negative_is_none a negative value is accepted and stored as -1 ("no bound"). */
int hrm_params_ms(const struct hrm_params *p, const char *key, int64_t *us, double max_ms,
                  bool negative_is_none, struct hrm_error *err);
/* -HRM_ESPEC naming the first key not in known (NULL-terminated). */
int hrm_params_check(const struct hrm_params *p, const char *const *known, const char *policy,
                     struct hrm_error *err);

/* One decision, kept so the role that ran the policy can act on it. */
enum hrm_decision_kind { HRM_DECIDE_START, HRM_DECIDE_PREEMPT };

struct hrm_decision {
    enum hrm_decision_kind kind;
    int32_t task, node;
    uint32_t gpu_mask;
    int32_t attempt; /* the run started, or the run killed (state's tasks[task].attempt then) */
};

/*
 * What decide() runs in.  The state is changed only through hrm_ctx_start and
 * hrm_ctx_preempt, which apply the decision to the state at once (so the
 * policy sees its own earlier decisions) and record it for the caller.
 */
struct hrm_sched_ctx {
    struct hrm_state *state;
    int64_t now_us;
    struct hrm_decision *decisions; /* grown by hrm_ctx_*; owned by the caller (hrm_free) */
    size_t ndecisions, cap;
    /* The pass's bound: once max_starts tasks started in it (0: no bound), every
     * hrm_ctx_start* returns -HRM_EPASS_FULL with no change, and the policy returns that
     * code from decide (as any failed start's), ending the pass where it stands: the
     * starts made are the first max_starts the unbounded pass would make, and what is left
     * waits for the next pass, which the caller runs at once (hrm_central_config). */
    size_t max_starts, nstarts;
};

/* Starts a ready task on node (gpu_mask HRM_GPUS_ANY lets the state pick).  0 or
 * -HRM_ENOFIT / -HRM_ESTATE / -HRM_EPASS_FULL (the pass's bound), with no change. */
int hrm_ctx_start(struct hrm_sched_ctx *ctx, int32_t task, int32_t node, uint32_t gpu_mask);
/* Like hrm_ctx_start, but the task holds charge instead of its request
 * (hrm_state_start_charged): for policies that allocate by estimated demand. */
int hrm_ctx_start_charged(struct hrm_sched_ctx *ctx, int32_t task, int32_t node, uint32_t gpu_mask,
                          const struct hrm_res *charge);
/* Like hrm_ctx_start on an explicit GPU set that may already run tasks
 * (P0 queue stacking, hrm_state_start_stacked). */
int hrm_ctx_start_stacked(struct hrm_sched_ctx *ctx, int32_t task, int32_t node, uint32_t gpu_mask);
/* Kills a running task; it is requeued and loses its progress.  -HRM_ESTATE, with no change,
 * for a task that is not running or may not be preempted (hrm_ctx_may_preempt).  Not
 * bounded by max_starts: a policy's bookkeeping of its victims precedes the call. */
int hrm_ctx_preempt(struct hrm_sched_ctx *ctx, int32_t task);
/* Whether a policy may preempt task: only batch work is preempted.  Stream and service jobs
 * are long-running services (P0): killing one to make room for batch work would cost the
 * service its state and its latency, so every preempting policy skips them as victims. */
static inline bool hrm_ctx_may_preempt(const struct hrm_state *s, int32_t task)
{
    return s->wl->jobs[s->wl->tasks[task].job].kind == HRM_JOB_BATCH;
}

struct hrm_policy;

struct hrm_policy_ops {
    const char *name;    /* "fifo", "drf", ... */
    const char *summary; /* one line for `hrm sim --list-policies` */
    /* Required.  Sets up policy->priv from params (may be empty).  On error
     * returns a negative code with detail and leaves nothing to free. */
    int (*init)(struct hrm_policy *policy, const struct hrm_params *params,
                struct hrm_error *err);
    /* Optional.  Frees policy->priv. */
    void (*fini)(struct hrm_policy *policy);
    /* Optional.  Called after the state changed; ev and state are borrowed for the call. */
    void (*on_event)(struct hrm_policy *policy, const struct hrm_state *state,
                     const struct hrm_event *ev);
    /* Required.  Places ready tasks (and may preempt) through ctx.  Returns 0
     * or a negative code (a bug in the policy: the caller stops). */
    int (*decide)(struct hrm_policy *policy, struct hrm_sched_ctx *ctx);
    /* Whether the policy takes a workload that grows after its first event or pass
     * (hrm_central_grow): true when it keeps nothing sized by the workload's jobs or tasks,
     * or extends what it keeps in on_grow. */
    bool grows;
    /* Optional.  The workload (and state) gained jobs and tasks, not submitted yet. */
    void (*on_grow)(struct hrm_policy *policy, const struct hrm_state *state);
};

struct hrm_policy {
    const struct hrm_policy_ops *ops;
    void *priv;          /* owned by the policy */
    struct hrm_rng rng;  /* the policy's own stream */
};

/* Registry: all policies, in a fixed order. */
size_t hrm_policy_count(void);
const struct hrm_policy_ops *hrm_policy_at(size_t i);
const struct hrm_policy_ops *hrm_policy_find(const char *name);

/* Creates a policy by name.  NULL with detail in err for an unknown name or bad params. */
struct hrm_policy *hrm_policy_new(const char *name, const struct hrm_params *params,
                                  uint64_t seed, struct hrm_error *err);
void hrm_policy_free(struct hrm_policy *p); /* NULL is a no-op */

#endif
