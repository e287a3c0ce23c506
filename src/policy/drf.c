/* DRF (Ghodsi et al., NSDI'11): progressive filling over users by lowest dominant share. */
#include "hrm/alloc.h"
#include "policy/policy_private.h"

struct drf_priv {
    struct policy_groups groups; /* active jobs by user; reused across passes */
    struct policy_heap heap;     /* users by (dominant share, id) */
};

static int drf_init(struct hrm_policy *policy, const struct hrm_params *params,
                    struct hrm_error *err)
{
    int rc = policy_init_noparams("drf", params, err);
    if (rc)
        return rc;
    policy->priv = hrm_calloc(1, sizeof(struct drf_priv));
    return 0;
}

static void drf_fini(struct hrm_policy *policy)
{
    struct drf_priv *p = policy->priv;
    if (!p)
        return;
    policy_groups_fini(&p->groups);
    policy_heap_fini(&p->heap);
    hrm_free(p);
    policy->priv = NULL;
}

/*
 * The paper's algorithm (its Algorithm 1): pick the user with the lowest
 * dominant share (allocation over the capacity of up nodes, max over
 * dimensions), launch its next task, repeat.  The paper's pseudo-code returns
 * at the first task that does not fit ("the cluster is full"), which is exact
 * for one pooled machine; on many nodes a task may not fit while smaller ones
 * of other users would, so we pass over that user for the rest of the pass
 * and go on with the others.  Within a user, jobs in arrival order.  Ties:
 * lower user id.
 * O(J + U + placements x log U) per pass besides node searches.
 */
static int drf_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    struct drf_priv *p = policy->priv;
    const struct hrm_state *s = ctx->state;
    if (s->active_head < 0 || s->free_head < 0)
        return 0;
    policy_users_by_share(&p->groups, &p->heap, s);
    struct policy_fit fit;
    policy_fit_reset(&fit);
    struct policy_heap_item it;
    /* Stop once no node has cpu left: nothing else can start this pass. */
    while (s->free_head >= 0 && policy_heap_pop(&p->heap, &it)) {
        int32_t u = it.id;
        int32_t task = policy_groups_next_task(&p->groups, s, u);
        if (task < 0)
            continue;
        int32_t node = policy_fit_first(&fit, s, task);
        if (node < 0)
            continue; /* skipped for the rest of the pass */
        int rc = policy_fit_start(&fit, ctx, task, node);
        if (rc)
            return rc;
        policy_heap_push(&p->heap, hrm_state_user_share(s, u), u, u);
    }
    return 0;
}

const struct hrm_policy_ops hrm_policy_drf = {
    .name = "drf",
    .summary = "dominant resource fairness: progressive filling over users",
    .init = drf_init,
    .fini = drf_fini,
    .decide = drf_decide,
    .grows = true, /* nothing sized by the workload */
};
