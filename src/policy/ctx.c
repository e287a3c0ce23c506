/* The decision context: applies a policy's starts and preemptions to the state and records them. */
#include "hrm/alloc.h"
#include "hrm/policy.h"

static void ctx_record(struct hrm_sched_ctx *ctx, enum hrm_decision_kind kind, int32_t task,
                       int32_t node, uint32_t gpu_mask, int32_t attempt)
{
    /* The caller owns ctx->decisions; it grows here with hrm_realloc and is
     * released with hrm_free. */
    HRM_GROW(ctx->decisions, ctx->cap, ctx->ndecisions + 1);
    ctx->decisions[ctx->ndecisions++] = (struct hrm_decision){
        .kind = kind, .task = task, .node = node, .gpu_mask = gpu_mask, .attempt = attempt};
}

/* After a start by the state (rc 0): record it with the GPUs the state
 * actually gave, not HRM_GPUS_ANY. */
static int ctx_started(struct hrm_sched_ctx *ctx, int rc, int32_t task, int32_t node)
{
    if (rc)
        return rc;
    const struct hrm_task_state *ts = &ctx->state->tasks[task];
    ctx_record(ctx, HRM_DECIDE_START, task, node, ts->gpu_mask, ts->attempt);
    ctx->nstarts++;
    return 0;
}

/* Checked before the state is touched, so a refused start changes nothing. */
static bool ctx_full(const struct hrm_sched_ctx *ctx)
{
    return ctx->max_starts > 0 && ctx->nstarts >= ctx->max_starts;
}

int hrm_ctx_start(struct hrm_sched_ctx *ctx, int32_t task, int32_t node, uint32_t gpu_mask)
{
    if (ctx_full(ctx))
        return -HRM_EPASS_FULL;
    return ctx_started(ctx, hrm_state_start(ctx->state, task, node, gpu_mask, ctx->now_us), task,
                       node);
}

int hrm_ctx_start_charged(struct hrm_sched_ctx *ctx, int32_t task, int32_t node, uint32_t gpu_mask,
                          const struct hrm_res *charge)
{
    if (ctx_full(ctx))
        return -HRM_EPASS_FULL;
    return ctx_started(
        ctx, hrm_state_start_charged(ctx->state, task, node, gpu_mask, charge, ctx->now_us), task,
        node);
}

int hrm_ctx_start_stacked(struct hrm_sched_ctx *ctx, int32_t task, int32_t node, uint32_t gpu_mask)
{
    if (ctx_full(ctx))
        return -HRM_EPASS_FULL;
    return ctx_started(
        ctx, hrm_state_start_stacked(ctx->state, task, node, gpu_mask, ctx->now_us), task, node);
}

int hrm_ctx_preempt(struct hrm_sched_ctx *ctx, int32_t task)
{
    struct hrm_state *s = ctx->state;
    if (task < 0 || task >= s->wl->ntasks || s->tasks[task].status != HRM_TASK_RUNNING ||
        !hrm_ctx_may_preempt(s, task))
        return -HRM_ESTATE;
    /* Where it ran is cleared by the stop; keep it for the record. */
    const struct hrm_task_state *ts = &s->tasks[task];
    int32_t node = ts->node, attempt = ts->attempt;
    uint32_t mask = ts->gpu_mask;
    int rc = hrm_state_stop(s, task, HRM_OUTCOME_PREEMPTED, ctx->now_us);
    if (rc < 0)
        return rc;
    ctx_record(ctx, HRM_DECIDE_PREEMPT, task, node, mask, attempt);
    return 0;
}
