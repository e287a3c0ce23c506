/* Capacity (YARN CapacityScheduler): queue guarantees, elastic up to each queue's max. */
#include <math.h>

#include "hrm/alloc.h"
#include "policy/policy_private.h"

/* Slack for share comparisons against a queue's max, so that a queue may
 * reach exactly its max despite rounding of the division. */
#define SHARE_EPS 1e-9

struct capacity_priv {
    struct policy_groups groups; /* reused across passes to avoid allocating per pass */
};

static int capacity_init(struct hrm_policy *policy, const struct hrm_params *params,
                         struct hrm_error *err)
{
    int rc = policy_init_noparams("capacity", params, err);
    if (rc)
        return rc;
    policy->priv = hrm_calloc(1, sizeof(struct capacity_priv));
    return 0;
}

static void capacity_fini(struct hrm_policy *policy)
{
    struct capacity_priv *p = policy->priv;
    if (!p)
        return;
    policy_groups_fini(&p->groups);
    hrm_free(p);
    policy->priv = NULL;
}

/* Dominant share the queue would hold with extra added (extra may be NULL). */
static double queue_share(const struct hrm_state *s, int32_t q, const struct hrm_res *extra)
{
    struct hrm_res r = s->queue_alloc[q];
    if (extra)
        hrm_res_add(&r, extra);
    return hrm_res_dominant_share(&r, &s->up_total);
}

/* Whether queue a should be served before queue b: lower used/guarantee first
 * (YARN's utilization ordering; a queue guaranteed nothing comes after every
 * guaranteed one), then, as YARN does, the larger guarantee, then the lower
 * used share, then the lower index. */
static bool queue_before(const struct hrm_state *s, int32_t a, int32_t b)
{
    const struct hrm_queue_cfg *qa = &s->wl->queues[a], *qb = &s->wl->queues[b];
    double ua = queue_share(s, a, NULL), ub = queue_share(s, b, NULL);
    double ra = qa->guarantee > 0 ? ua / qa->guarantee : INFINITY;
    double rb = qb->guarantee > 0 ? ub / qb->guarantee : INFINITY;
    if (ra != rb)
        return ra < rb;
    if (qa->guarantee != qb->guarantee)
        return qa->guarantee > qb->guarantee;
    if (ua != ub)
        return ua < ub;
    return a < b;
}

/*
 * One placement for queue q: its jobs in arrival order; the first whose next
 * ready task stays within the queue's max and fits on some node gets started.
 * Jobs found unable are skipped for the rest of the pass (the queue's use only
 * grows and free resources only shrink during a pass).  Returns 1 if a task
 * started, 0 if the queue can place nothing more, or a negative code.
 */
static int queue_place_one(struct capacity_priv *p, struct policy_fit *fit,
                           struct hrm_sched_ctx *ctx, int32_t q)
{
    const struct hrm_state *s = ctx->state;
    struct policy_groups *g = &p->groups;
    double max = s->wl->queues[q].max;
    for (; g->pos[q] < g->first[q + 1]; g->pos[q]++) {
        int32_t j = g->jobs[g->pos[q]];
        int32_t task = s->jobs[j].ready_head;
        if (task < 0)
            continue; /* all its ready tasks started this pass */
        if (queue_share(s, q, &s->wl->tasks[task].req) > max + SHARE_EPS)
            continue;
        int32_t node = policy_fit_first(fit, s, task);
        if (node < 0)
            continue;
        int rc = policy_fit_start(fit, ctx, task, node);
        return rc ? rc : 1;
    }
    return 0;
}

/*
 * Repeatedly serve the queue with the lowest used/guarantee among queues that
 * may still place, one task at a time, so queues below their guarantee are
 * filled first and spare capacity is lent to any queue up to its max.  Each
 * iteration starts a task or retires a queue, so a pass costs O(active jobs +
 * placements x queues) besides node searches.
 */
static int capacity_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    struct capacity_priv *p = policy->priv;
    const struct hrm_state *s = ctx->state;
    if (s->active_head < 0 || s->free_head < 0)
        return 0;
    policy_groups_build(&p->groups, s, POLICY_BY_QUEUE);
    struct policy_groups *g = &p->groups;
    struct policy_fit fit;
    policy_fit_reset(&fit);
    while (s->free_head >= 0) { /* once no node has cpu left, nothing can start */
        int32_t best = -1;
        for (int32_t q = 0; q < g->ngroups; q++)
            if (g->pos[q] < g->first[q + 1] && (best < 0 || queue_before(s, q, best)))
                best = q;
        if (best < 0)
            break;
        int rc = queue_place_one(p, &fit, ctx, best);
        if (rc < 0)
            return rc;
        /* rc == 0 left pos[best] at the group's end: the queue is retired. */
    }
    return 0;
}

const struct hrm_policy_ops hrm_policy_capacity = {
    .name = "capacity",
    .summary = "YARN capacity: queue guarantees, elastic up to max, FIFO jobs within a queue",
    .init = capacity_init,
    .fini = capacity_fini,
    .decide = capacity_decide,
    .grows = true, /* nothing sized by the workload */
};
