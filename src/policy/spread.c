/* Spread (Spark standalone spreadOut): each task on the fitting node with most free cpu. */
#include "hrm/alloc.h"
#include "policy/policy_private.h"

/*
 * A max-heap of all nodes by free cpu (down nodes at -1), kept across passes
 * so that a placement costs O(log nodes) instead of a scan of the free list.
 * It is kept exact by re-keying the node of every event (on_event) and of
 * every own start; if the state changed while no event arrived (a caller that
 * does not deliver events), the next pass rebuilds it in O(nodes).
 */
struct spread_priv {
    const struct hrm_state *state; /* the state the heap mirrors (borrowed) */
    int32_t nnodes;
    int32_t *heap;         /* node ids, heap[0] = most free cpu, ties lowest id */
    int32_t *pos;          /* node -> index in heap */
    int64_t *key;          /* node -> free cpu as last seen, -1 if down */
    uint64_t seen_version; /* state version after the last pass */
    bool events;           /* events arrived since the last pass */
    bool dirty;            /* an event we could not attribute to a node */
};

static int spread_init(struct hrm_policy *policy, const struct hrm_params *params,
                       struct hrm_error *err)
{
    int rc = policy_init_noparams("spread", params, err);
    if (rc)
        return rc;
    policy->priv = hrm_calloc(1, sizeof(struct spread_priv));
    return 0;
}

static void spread_fini(struct hrm_policy *policy)
{
    struct spread_priv *p = policy->priv;
    if (!p)
        return;
    hrm_free(p->heap);
    hrm_free(p->pos);
    hrm_free(p->key);
    hrm_free(p);
    policy->priv = NULL;
}

static int64_t node_key(const struct hrm_state *s, int32_t n)
{
    return s->nodes[n].up ? s->nodes[n].free.v[HRM_DIM_CPU] : -1;
}

static bool better(const struct spread_priv *p, int32_t a, int32_t b)
{
    return p->key[a] > p->key[b] || (p->key[a] == p->key[b] && a < b);
}

static void heap_set(struct spread_priv *p, int32_t i, int32_t n)
{
    p->heap[i] = n;
    p->pos[n] = i;
}

static void sift_up(struct spread_priv *p, int32_t i)
{
    int32_t n = p->heap[i];
    while (i > 0) {
        int32_t parent = (i - 1) / 2;
        if (!better(p, n, p->heap[parent]))
            break;
        heap_set(p, i, p->heap[parent]);
        i = parent;
    }
    heap_set(p, i, n);
}

static void sift_down(struct spread_priv *p, int32_t i)
{
    int32_t n = p->heap[i];
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= p->nnodes)
            break;
        if (c + 1 < p->nnodes && better(p, p->heap[c + 1], p->heap[c]))
            c++;
        if (!better(p, p->heap[c], n))
            break;
        heap_set(p, i, p->heap[c]);
        i = c;
    }
    heap_set(p, i, n);
}

static void rekey(struct spread_priv *p, const struct hrm_state *s, int32_t n)
{
    int64_t k = node_key(s, n);
    if (k == p->key[n])
        return;
    p->key[n] = k;
    sift_up(p, p->pos[n]);
    sift_down(p, p->pos[n]);
}

static void rebuild(struct spread_priv *p, const struct hrm_state *s)
{
    int32_t nnodes = s->cluster->nnodes;
    if (p->state != s || p->nnodes != nnodes) {
        hrm_free(p->heap);
        hrm_free(p->pos);
        hrm_free(p->key);
        p->heap = hrm_calloc((size_t)nnodes, sizeof(*p->heap));
        p->pos = hrm_calloc((size_t)nnodes, sizeof(*p->pos));
        p->key = hrm_calloc((size_t)nnodes, sizeof(*p->key));
        p->state = s;
        p->nnodes = nnodes;
    }
    for (int32_t n = 0; n < nnodes; n++) {
        p->key[n] = node_key(s, n);
        heap_set(p, n, n);
    }
    for (int32_t i = nnodes / 2 - 1; i >= 0; i--)
        sift_down(p, i);
    p->dirty = false;
}

static void spread_on_event(struct hrm_policy *policy, const struct hrm_state *s,
                            const struct hrm_event *ev)
{
    struct spread_priv *p = policy->priv;
    if (p->state != s)
        return; /* not built yet, or built for another state: the next pass rebuilds */
    p->events = true;
    switch (ev->type) {
    case HRM_EV_TASK_START:
    case HRM_EV_TASK_STOP:
    case HRM_EV_NODE_DOWN:
    case HRM_EV_NODE_UP:
        if (ev->node >= 0 && ev->node < p->nnodes)
            rekey(p, s, ev->node);
        else
            p->dirty = true;
        break;
    case HRM_EV_JOB_SUBMIT:
    case HRM_EV_JOB_END:
    case HRM_EV_TASK_USAGE: /* measured use does not change free cpu */
    case HRM_EV_NODE_USAGE:
        break;
    }
}

/* The fitting node with the most free cpu (ties lowest id), scanning the free
 * list from first, the first fitting node: for requests the heap's top cannot
 * take (memory, GPUs). */
static int32_t scan_best(const struct hrm_state *s, int32_t task, int32_t first)
{
    int32_t best = -1;
    for (int32_t n = first; n >= 0; n = s->nodes[n].next_free) {
        if (!hrm_state_fits(s, task, n))
            continue;
        int64_t k = s->nodes[n].free.v[HRM_DIM_CPU];
        int64_t kb = best >= 0 ? s->nodes[best].free.v[HRM_DIM_CPU] : -1;
        if (k > kb || (k == kb && n < best))
            best = n;
    }
    return best;
}

/*
 * Jobs in arrival order, tasks in ready order; each task goes to the fitting
 * node with the most free cpu, so load spreads over as many nodes as possible.
 * A task that fits nowhere is skipped for the pass (Spark moves on to the next
 * application).  O(log nodes) per placement when the emptiest node fits,
 * O(free nodes) when it does not.
 */
static int spread_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    struct spread_priv *p = policy->priv;
    const struct hrm_state *s = ctx->state;
    if (p->state != s || p->nnodes != s->cluster->nnodes || p->dirty ||
        (!p->events && p->seen_version != s->version))
        rebuild(p, s);
    p->events = false;
    struct policy_fit fit;
    policy_fit_reset(&fit);
    int32_t j = s->active_head;
    while (j >= 0 && s->free_head >= 0) {
        int32_t next_job = s->jobs[j].next_active; /* read before starts unlink */
        int32_t t = s->jobs[j].ready_head;
        while (t >= 0 && s->free_head >= 0) {
            int32_t next_task = s->tasks[t].next;
            int32_t first = policy_fit_first(&fit, s, t);
            if (first >= 0) {
                /* Cheap insurance against a missed event: the top's key must be current. */
                while (p->key[p->heap[0]] != node_key(s, p->heap[0]))
                    rekey(p, s, p->heap[0]);
                int32_t top = p->heap[0];
                int32_t node = hrm_state_fits(s, t, top) ? top : scan_best(s, t, first);
                int rc = policy_fit_start(&fit, ctx, t, node);
                if (rc)
                    return rc;
                rekey(p, s, node);
            }
            t = next_task;
        }
        j = next_job;
    }
    p->seen_version = s->version;
    return 0;
}

const struct hrm_policy_ops hrm_policy_spread = {
    .name = "spread",
    .summary = "Spark spreadOut: each task on the fitting node with the most free cpu",
    .init = spread_init,
    .fini = spread_fini,
    .on_event = spread_on_event,
    .decide = spread_decide,
    .grows = true, /* nothing sized by the workload */
};
