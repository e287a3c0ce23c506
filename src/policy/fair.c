/* Fair (Hadoop fair scheduler, slot based): max-min fairness of running tasks over jobs. */
#include "hrm/alloc.h"
#include "policy/policy_private.h"

struct fair_priv {
    struct policy_heap heap; /* reused across passes */
};

static int fair_init(struct hrm_policy *policy, const struct hrm_params *params,
                     struct hrm_error *err)
{
    int rc = policy_init_noparams("fair", params, err);
    if (rc)
        return rc;
    policy->priv = hrm_calloc(1, sizeof(struct fair_priv));
    return 0;
}

static void fair_fini(struct hrm_policy *policy)
{
    struct fair_priv *p = policy->priv;
    if (!p)
        return;
    policy_heap_fini(&p->heap);
    hrm_free(p);
    policy->priv = NULL;
}

/*
 * Each free slot goes to the job with the fewest running tasks (ties: earlier
 * arrival), which is progressive filling of max-min fairness where every task
 * counts as one slot whatever it asks for.  A job whose next ready task fits
 * nowhere is passed over for the rest of the pass.  Heap of active jobs:
 * O(J + placements x log J) per pass besides node searches.
 */
static int fair_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    struct fair_priv *p = policy->priv;
    const struct hrm_state *s = ctx->state;
    if (s->active_head < 0 || s->free_head < 0)
        return 0;
    p->heap.n = 0;
    for (int32_t j = s->active_head; j >= 0; j = s->jobs[j].next_active)
        policy_heap_push(&p->heap, s->jobs[j].nrunning, s->jobs[j].arrival, j);
    struct policy_fit fit;
    policy_fit_reset(&fit);
    struct policy_heap_item it;
    /* Stop once no node has cpu left: nothing else can start this pass. */
    while (s->free_head >= 0 && policy_heap_pop(&p->heap, &it)) {
        const struct hrm_job_state *js = &s->jobs[it.id];
        int32_t node = policy_fit_first(&fit, s, js->ready_head);
        if (node < 0)
            continue; /* passed over for this pass */
        int rc = policy_fit_start(&fit, ctx, js->ready_head, node);
        if (rc)
            return rc;
        if (js->ready_head >= 0)
            policy_heap_push(&p->heap, js->nrunning, js->arrival, it.id);
    }
    return 0;
}

const struct hrm_policy_ops hrm_policy_fair = {
    .name = "fair",
    .summary = "fair scheduler: next slot to the job with the fewest running tasks",
    .init = fair_init,
    .fini = fair_fini,
    .decide = fair_decide,
    .grows = true, /* nothing sized by the workload */
};
