/* Random: each ready task on a node drawn uniformly among those where it fits. */
#include "hrm/alloc.h"
#include "policy/policy_private.h"

/* Blind draws over all nodes before enumerating the fitting ones.  A blind
 * draw that lands on a fitting node is uniform over the fitting nodes, and so
 * is the enumeration, so the mixture is exactly uniform; the draws make the
 * common case (many nodes fit) O(1) instead of O(free nodes). */
#define RANDOM_BLIND_DRAWS 16

struct random_priv {
    int32_t *cand; /* fitting nodes of the task at hand; reused */
    size_t cap;
};

static int random_init(struct hrm_policy *policy, const struct hrm_params *params,
                       struct hrm_error *err)
{
    int rc = policy_init_noparams("random", params, err);
    if (rc)
        return rc;
    policy->priv = hrm_calloc(1, sizeof(struct random_priv));
    return 0;
}

static void random_fini(struct hrm_policy *policy)
{
    struct random_priv *p = policy->priv;
    if (!p)
        return;
    hrm_free(p->cand);
    hrm_free(p);
    policy->priv = NULL;
}

/* A uniformly random node among those where task fits; first is the first
 * fitting node in free-list order (nodes before it need no look). */
static int32_t random_node(struct hrm_policy *policy, const struct hrm_state *s, int32_t task,
                           int32_t first)
{
    struct random_priv *p = policy->priv;
    uint64_t nnodes = (uint64_t)s->cluster->nnodes;
    for (int i = 0; i < RANDOM_BLIND_DRAWS; i++) {
        int32_t n = (int32_t)hrm_rng_below(&policy->rng, nnodes);
        if (hrm_state_fits(s, task, n))
            return n;
    }
    size_t k = 0;
    for (int32_t n = first; n >= 0; n = s->nodes[n].next_free) {
        if (hrm_state_fits(s, task, n)) {
            HRM_GROW(p->cand, p->cap, k + 1);
            p->cand[k++] = n;
        }
    }
    return p->cand[hrm_rng_below(&policy->rng, k)]; /* k >= 1: first fits */
}

/*
 * Every ready task, jobs in arrival order and tasks in ready order, gets a
 * random fitting node; a task that fits nowhere is skipped for this pass
 * without blocking the ones behind it.  O(ready tasks) per pass at worst
 * (tasks whose request fits nowhere cost O(1) each after the first).
 */
static int random_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    const struct hrm_state *s = ctx->state;
    struct policy_fit fit;
    policy_fit_reset(&fit);
    int32_t j = s->active_head;
    while (j >= 0 && s->free_head >= 0) {
        /* Starting a task unlinks it (and maybe its job): read the links first. */
        int32_t next_job = s->jobs[j].next_active;
        int32_t t = s->jobs[j].ready_head;
        while (t >= 0 && s->free_head >= 0) {
            int32_t next_task = s->tasks[t].next;
            int32_t first = policy_fit_first(&fit, s, t);
            if (first >= 0) {
                int rc = policy_fit_start(&fit, ctx, t, random_node(policy, s, t, first));
                if (rc)
                    return rc;
            }
            t = next_task;
        }
        j = next_job;
    }
    return 0;
}

const struct hrm_policy_ops hrm_policy_random = {
    .name = "random",
    .summary = "each ready task on a uniformly random node where it fits",
    .init = random_init,
    .fini = random_fini,
    .decide = random_decide,
    .grows = true, /* nothing sized by the workload */
};
