/* FIFO: jobs strictly in arrival order, first-fit node, head-of-line blocking. */
#include "policy/policy_private.h"

static int fifo_init(struct hrm_policy *policy, const struct hrm_params *params,
                     struct hrm_error *err)
{
    return policy_init_noparams("fifo", params, err);
}

/*
 * Always the oldest job's oldest ready task.  When it fits nowhere the pass
 * ends: a later, smaller task may not overtake it (that is what FIFO means,
 * and why it is the baseline the others improve on).  Each iteration starts
 * one task, so a pass costs O(placements) node-search steps; with identical
 * requests the cached cursor makes each search O(1) amortised.
 */
static int fifo_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    const struct hrm_state *s = ctx->state;
    if (s->active_head < 0 || s->free_head < 0)
        return 0; /* the common pass in a loaded cluster: nothing can start */
    struct policy_fit fit;
    policy_fit_reset(&fit);
    while (s->active_head >= 0) {
        int32_t task = s->jobs[s->active_head].ready_head;
        int32_t node = policy_fit_first(&fit, s, task);
        if (node < 0)
            break; /* head-of-line blocking */
        int rc = policy_fit_start(&fit, ctx, task, node);
        if (rc)
            return rc;
    }
    return 0;
}

const struct hrm_policy_ops hrm_policy_fifo = {
    .name = "fifo",
    .summary = "jobs in arrival order, first-fit node, head-of-line blocking",
    .init = fifo_init,
    .decide = fifo_decide,
    .grows = true, /* nothing sized by the workload */
};
