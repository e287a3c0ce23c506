/* GS, GSP, GSD (P1 §3): GPU-count fair share; free GPUs offered to the job holding fewest. */
#include "hrm/alloc.h"
#include "policy/flowpol_private.h"

/*
 * Locality levels of GSD, for a task t and a node n (costs of flow_common.c):
 *   0  c(t, n) is t's least cost over the nodes that could ever run it
 *   1  c(t, n) is at most the cost on a node of t's best rack holding none
 *      of its data ("in-rack")
 *   2  anything else
 */
enum gs_level { LEVEL_BEST, LEVEL_RACK, LEVEL_ANY };

struct gs_priv {
    struct p1_params prm;
    bool preempt, delay;
    struct p1_shares sh;
    struct policy_heap heap;
    int64_t *declines; /* per workload job (gsd) */
    /* gsd: per task, the costs bounding levels 0 and 1, valid for lvl_gen */
    int64_t *lvl0, *lvl1;
    int32_t *lvl_gen;
    int32_t gen;
    uint8_t *up_seen;
    const struct hrm_workload *wl;
    const struct hrm_cluster *c;
};

static int gs_init_common(struct hrm_policy *policy, const struct hrm_params *params,
                          struct hrm_error *err, const char *name, bool preempt, bool delay)
{
    static const char *const known_gs[] = {"alpha1", "alpha2", "clamp", "nj_unfinished",
                                           "paper",  NULL};
    static const char *const known_gsd[] = {"alpha1",        "alpha2", "d1", "d2", "clamp",
                                            "nj_unfinished", "paper",  NULL};
    struct p1_params prm;
    int rc = p1_params_read(&prm, params, delay ? known_gsd : known_gs, name, err);
    if (rc)
        return rc;
    struct gs_priv *p = hrm_calloc(1, sizeof(*p));
    p->prm = prm;
    p->sh.unfinished = prm.nj_unfinished != 0;
    p->preempt = preempt;
    p->delay = delay;
    policy->priv = p;
    return 0;
}

static int gs_init(struct hrm_policy *policy, const struct hrm_params *params,
                   struct hrm_error *err)
{
    return gs_init_common(policy, params, err, "gs", false, false);
}

static int gsp_init(struct hrm_policy *policy, const struct hrm_params *params,
                    struct hrm_error *err)
{
    return gs_init_common(policy, params, err, "gsp", true, false);
}

static int gsd_init(struct hrm_policy *policy, const struct hrm_params *params,
                    struct hrm_error *err)
{
    return gs_init_common(policy, params, err, "gsd", false, true);
}

static void gs_fini(struct hrm_policy *policy)
{
    struct gs_priv *p = policy->priv;
    if (!p)
        return;
    p1_shares_fini(&p->sh);
    policy_heap_fini(&p->heap);
    hrm_free(p->declines);
    hrm_free(p->lvl0);
    hrm_free(p->lvl1);
    hrm_free(p->lvl_gen);
    hrm_free(p->up_seen);
    hrm_free(p);
    policy->priv = NULL;
}

/* Per-workload arrays, and the level cache dropped when a node went up or down. */
static void gs_prepare(struct gs_priv *p, const struct hrm_state *s)
{
    const struct hrm_cluster *c = s->cluster;
    if (p->wl != s->wl || p->c != c) {
        hrm_free(p->declines);
        hrm_free(p->lvl0);
        hrm_free(p->lvl1);
        hrm_free(p->lvl_gen);
        hrm_free(p->up_seen);
        size_t nj = (size_t)s->wl->njobs + 1, nt = (size_t)s->wl->ntasks + 1;
        p->declines = hrm_calloc(nj, sizeof(*p->declines));
        p->lvl0 = hrm_calloc(nt, sizeof(*p->lvl0));
        p->lvl1 = hrm_calloc(nt, sizeof(*p->lvl1));
        p->lvl_gen = hrm_calloc(nt, sizeof(*p->lvl_gen));
        p->up_seen = hrm_calloc((size_t)c->nnodes + 1, 1);
        p->wl = s->wl;
        p->c = c;
        p->gen = 1;
        for (int32_t n = 0; n < c->nnodes; n++)
            p->up_seen[n] = s->nodes[n].up;
    }
    for (int32_t n = 0; n < c->nnodes; n++) {
        if (p->up_seen[n] != s->nodes[n].up) {
            p->up_seen[n] = s->nodes[n].up;
            p->gen++;
        }
    }
}

/* True when node has a GPU, busy or not, big enough for need. */
static bool node_can_host(const struct hrm_cluster *c, int32_t node, int64_t need)
{
    const struct hrm_node *n = &c->nodes[node];
    for (int32_t g = 0; g < n->gpus; g++)
        if (c->units[n->unit_first + g].gpu_mem >= need)
            return true;
    return false;
}

static void level_bounds(struct gs_priv *p, const struct hrm_state *s, const struct p1_cost *m,
                         int32_t t)
{
    if (p->lvl_gen[t] == p->gen)
        return;
    const struct hrm_cluster *c = s->cluster;
    int64_t need = p1_task_gpu_need(&s->wl->tasks[t]);
    int64_t best = INT64_MAX, rack_best = INT64_MAX;
    for (int32_t n = 0; n < c->nnodes; n++) {
        if (!s->nodes[n].up || !node_can_host(c, n, need))
            continue;
        int64_t cn = p1_cost_node(m, s, t, n);
        int64_t cr = p1_cost_rack(m, s, t, c->nodes[n].rack);
        if (cn < best)
            best = cn;
        if (cr < rack_best)
            rack_best = cr;
    }
    p->lvl0[t] = best;
    p->lvl1[t] = rack_best;
    p->lvl_gen[t] = p->gen;
}

static enum gs_level level_of(const struct gs_priv *p, int32_t t, int64_t cost)
{
    if (cost <= p->lvl0[t])
        return LEVEL_BEST;
    return cost <= p->lvl1[t] ? LEVEL_RACK : LEVEL_ANY;
}

struct gs_pick {
    int32_t task, node;
    int64_t cost;
    enum gs_level level;
};

/*
 * The job's answer to an offer of every free GPU: its cheapest (task, node)
 * pair where the task fits (GPU memory, host cores and memory), restricted to
 * levels <= allowed.  *declined is set when a pair existed only above allowed.
 * Ties: the task that became ready first, then the lower node id.
 * O(ready tasks of the job x nodes x replicas).
 */
static bool job_pick(struct gs_priv *p, const struct hrm_state *s, const struct p1_cost *m,
                     int32_t job, enum gs_level allowed, struct gs_pick *out, bool *declined)
{
    const struct hrm_cluster *c = s->cluster;
    bool found = false;
    *declined = false;
    for (int32_t t = s->jobs[job].ready_head; t >= 0; t = s->tasks[t].next) {
        if (s->wl->tasks[t].req.v[HRM_DIM_GPU] != 1)
            continue;
        if (p->delay)
            level_bounds(p, s, m, t);
        for (int32_t n = 0; n < c->nnodes; n++) {
            const struct hrm_node *node = &c->nodes[n];
            uint32_t all = node->gpus >= 32 ? 0xffffffffu : (1u << node->gpus) - 1;
            if (!s->nodes[n].up || (all & ~s->nodes[n].gpu_busy) == 0)
                continue;
            if (!hrm_state_fits(s, t, n))
                continue;
            int64_t cost = p1_cost_node(m, s, t, n);
            enum gs_level lv = p->delay ? level_of(p, t, cost) : LEVEL_BEST;
            if (lv > allowed) {
                *declined = true;
                continue;
            }
            if (!found || cost < out->cost) {
                *out = (struct gs_pick){.task = t, .node = n, .cost = cost, .level = lv};
                found = true;
            }
        }
    }
    if (found)
        *declined = false;
    return found;
}

static enum gs_level allowed_level(const struct gs_priv *p, int32_t job)
{
    if (!p->delay)
        return LEVEL_ANY;
    int64_t d = p->declines[job];
    return d < p->prm.d1 ? LEVEL_BEST : d < p->prm.d2 ? LEVEL_RACK : LEVEL_ANY;
}

/* Jobs with ready one-GPU tasks and fewer GPUs than their share, fewest first. */
static void offer_queue(struct gs_priv *p, const struct hrm_state *s)
{
    p->heap.n = 0;
    for (int32_t i = 0; i < p->sh.njobs; i++) {
        if (p->sh.held[i] >= p->sh.share[i] || p->sh.ready[i] == 0)
            continue;
        int32_t j = p->sh.jobs[i];
        policy_heap_push(&p->heap, (double)p->sh.held[i], s->jobs[j].arrival, i);
    }
}

/* Offers until no job below its share can use a free GPU.  Returns the number
 * started (or a negative code); *declines counts jobs that declined. */
static int offer_round(struct gs_priv *p, struct hrm_sched_ctx *ctx, const struct p1_cost *m,
                       bool force_any, int *declines)
{
    const struct hrm_state *s = ctx->state;
    int started = 0;
    *declines = 0;
    offer_queue(p, s);
    struct policy_heap_item it;
    while (policy_heap_pop(&p->heap, &it)) {
        int32_t i = it.id, j = p->sh.jobs[i];
        enum gs_level allowed = force_any ? LEVEL_ANY : allowed_level(p, j);
        struct gs_pick pick;
        bool declined;
        if (!job_pick(p, s, m, j, allowed, &pick, &declined)) {
            if (declined) {
                /* Delay scheduling: the job waits for a better GPU and
                 * counts the missed chance; it is offered again next pass. */
                p->declines[j]++;
                (*declines)++;
            }
            continue;
        }
        int rc = hrm_ctx_start(ctx, pick.task, pick.node, HRM_GPUS_ANY);
        if (rc)
            return rc; /* job_pick checked the fit: a failure is a bug */
        started++;
        if (p->delay && pick.level == LEVEL_BEST)
            p->declines[j] = 0; /* as in Zaharia et al.: reset on a best-level launch */
        p->sh.held[i]++;
        p->sh.ready[i]--;
        if (p->sh.held[i] < p->sh.share[i] && p->sh.ready[i] > 0)
            policy_heap_push(&p->heap, (double)p->sh.held[i], s->jobs[j].arrival, i);
    }
    return started;
}

static int gs_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    struct gs_priv *p = policy->priv;
    const struct hrm_state *s = ctx->state;
    if (s->active_head < 0)
        return 0;
    gs_prepare(p, s);
    p1_shares_compute(&p->sh, s);
    if (p->preempt) {
        int rc = p1_reclaim(ctx, &p->sh);
        if (rc < 0)
            return rc;
    }
    struct p1_cost m = {.c = s->cluster,
                        .alpha1 = p->prm.alpha1,
                        .alpha2 = p->prm.alpha2,
                        .literal = p->prm.clamp == 0};
    int declines;
    int rc = offer_round(p, ctx, &m, false, &declines);
    if (rc < 0)
        return rc;
    rc = p1_place_others(ctx);
    if (rc < 0)
        return rc;
    /* With nothing running no event will bring another pass: a job that
     * declined would wait forever, so this once every GPU is acceptable. */
    if (p->delay && declines > 0 && s->nrunning == 0) {
        rc = offer_round(p, ctx, &m, true, &declines);
        if (rc < 0)
            return rc;
    }
    return 0;
}

const struct hrm_policy_ops hrm_policy_gs = {
    .name = "gs",
    .summary = "P1 GPU-count fair share: free GPUs to the job holding fewest, cheapest task",
    .init = gs_init,
    .fini = gs_fini,
    .decide = gs_decide,
};

const struct hrm_policy_ops hrm_policy_gsp = {
    .name = "gsp",
    .summary = "P1 GS with preemption of over-share jobs (youngest task first)",
    .init = gsp_init,
    .fini = gs_fini,
    .decide = gs_decide,
};

const struct hrm_policy_ops hrm_policy_gsd = {
    .name = "gsd",
    .summary = "P1 GS with delay scheduling (declines non-local GPUs up to d1/d2 times)",
    .init = gsd_init,
    .fini = gs_fini,
    .decide = gs_decide,
};
