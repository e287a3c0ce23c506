/* FS, FSP, FSU (P1): GPU placement by a min-cost maximum flow over the P1 network. */
#include "hrm/alloc.h"
#include "policy/flowpol_private.h"

struct fs_priv {
    bool preempt;
    struct p1_shares sh;
    struct flownet *net;
};

static int fs_init_common(struct hrm_policy *policy, const struct hrm_params *params,
                          struct hrm_error *err, const char *name, bool unscheduled, bool preempt)
{
    static const char *const known_fs[] = {"alpha1", "alpha2",        "alpha3", "delay",
                                           "incremental", "clamp", "nj_unfinished", "paper",
                                           NULL};
    static const char *const known_fsu[] = {"alpha1", "alpha2", "incremental", "clamp", "paper",
                                            NULL};
    struct p1_params prm;
    int rc = p1_params_read(&prm, params, unscheduled ? known_fs : known_fsu, name, err);
    if (rc)
        return rc;
    struct fs_priv *p = hrm_calloc(1, sizeof(*p));
    p->preempt = preempt;
    p->sh.unfinished = prm.nj_unfinished != 0;
    /* Unclamped costs can make a cross-rack read cheaper than an in-rack one,
     * which the aggregators cannot stand for: the full bipartite graph then. */
    struct flownet_cfg cfg = {.alpha1 = prm.alpha1,
                              .alpha2 = prm.alpha2,
                              .alpha3 = prm.alpha3,
                              .unscheduled = unscheduled,
                              .aggregate = prm.clamp != 0,
                              .literal = prm.clamp == 0,
                              .incremental = prm.incremental != 0,
                              .priced = unscheduled && prm.delay != 0};
    p->net = flownet_new(&cfg);
    policy->priv = p;
    return 0;
}

static int fs_init(struct hrm_policy *policy, const struct hrm_params *params,
                   struct hrm_error *err)
{
    return fs_init_common(policy, params, err, "fs", true, false);
}

static int fsp_init(struct hrm_policy *policy, const struct hrm_params *params,
                    struct hrm_error *err)
{
    return fs_init_common(policy, params, err, "fsp", true, true);
}

static int fsu_init(struct hrm_policy *policy, const struct hrm_params *params,
                    struct hrm_error *err)
{
    return fs_init_common(policy, params, err, "fsu", false, false);
}

static void fs_fini(struct hrm_policy *policy)
{
    struct fs_priv *p = policy->priv;
    if (!p)
        return;
    p1_shares_fini(&p->sh);
    flownet_free(p->net);
    hrm_free(p);
    policy->priv = NULL;
}

/*
 * One pass: shares, then (FSP) reclaim GPUs for jobs below their share, then
 * one min-cost maximum flow decides which ready one-GPU tasks start on which
 * free GPUs; other tasks go first fit.  Cost: building the network is
 * O(ready tasks x replicas + GPUs + racks x tiers) the first time a task is
 * seen and O(ready tasks + GPUs + jobs) afterwards; the solve is warm.
 */
static int fs_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    struct fs_priv *p = policy->priv;
    const struct hrm_state *s = ctx->state;
    if (s->active_head < 0)
        return 0;
    p1_shares_compute(&p->sh, s);
    int killed = 0;
    if (p->preempt) {
        killed = p1_reclaim(ctx, &p->sh);
        if (killed < 0)
            return killed;
    }
    /* GPUs freed by killing must go to the jobs they were freed for, even
     * where those would rather wait for a closer GPU: else the victim's job
     * takes them back and the next pass kills again. */
    struct hrm_error err = {{0}};
    int rc = flownet_run(p->net, s, &p->sh, ctx->now_us, killed > 0, &err);
    if (rc)
        return rc;
    const struct flownet_place *pl;
    size_t n = flownet_places(p->net, &pl);
    for (size_t i = 0; i < n; i++) {
        rc = hrm_ctx_start(ctx, pl[i].task, pl[i].node, 1u << pl[i].gpu);
        if (rc == -HRM_ENOFIT)
            continue; /* host cores or memory ran out on that node: next pass */
        if (rc)
            return rc;
    }
    return p1_place_others(ctx);
}

const struct hrm_policy_ops hrm_policy_fs = {
    .name = "fs",
    .summary = "P1 flow scheduling: min-cost max flow with fair-share unscheduled arcs",
    .init = fs_init,
    .fini = fs_fini,
    .decide = fs_decide,
};

const struct hrm_policy_ops hrm_policy_fsp = {
    .name = "fsp",
    .summary = "P1 flow scheduling with preemption of over-share jobs (youngest first)",
    .init = fsp_init,
    .fini = fs_fini,
    .decide = fs_decide,
};

const struct hrm_policy_ops hrm_policy_fsu = {
    .name = "fsu",
    .summary = "P1 flow scheduling without fairness: most tasks at least transfer cost",
    .init = fsu_init,
    .fini = fs_fini,
    .decide = fs_decide,
};
