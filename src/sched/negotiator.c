/* Negotiator role: wait matrix, pool of advertised queues, matching requests. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/negotiator.h"

struct cell {
    int64_t wait;     /* latest wait believed, us */
    int32_t free;     /* free slots advertised and not yet matched */
    int32_t slots;    /* slots the queue runs at once */
    uint32_t version; /* bumped at every change: stale pool items are skipped */
    bool advertised;
};

struct pool_item {
    int64_t key;
    int32_t idx;
    uint32_t version;
};

struct request {
    int32_t node, queue, task, job;
    int64_t wait, est, at;
};

struct hrm_negotiator {
    struct hrm_negotiator_config cfg;
    struct cell *cells;
    size_t ncells;
    struct pool_item *pool; /* binary min-heap on key, lazy deletion by version */
    size_t npool, cap_pool;
    struct request *pend; /* ring of unmatched requests, oldest first */
    size_t pend_head, npend, cap_pend;
    struct hrm_negotiator_stats stats;
};

struct hrm_negotiator *hrm_negotiator_new(const struct hrm_negotiator_config *cfg,
                                          struct hrm_error *err)
{
    if (!cfg || cfg->nnodes <= 0 || cfg->nqueues <= 0) {
        hrm_errorf(err, -EINVAL, "negotiator: needs the number of nodes and queues");
        return NULL;
    }
    struct hrm_negotiator *n = hrm_calloc(1, sizeof(*n));
    n->cfg = *cfg;
    if (n->cfg.max_pending <= 0)
        n->cfg.max_pending = 65536;
    if (n->cfg.request_ttl_us <= 0)
        n->cfg.request_ttl_us = n->cfg.hw_us > 0 ? n->cfg.hw_us : 10000;
    n->ncells = (size_t)cfg->nnodes * (size_t)cfg->nqueues;
    n->cells = hrm_calloc(n->ncells, sizeof(*n->cells));
    n->cap_pend = (size_t)n->cfg.max_pending;
    n->pend = hrm_calloc(n->cap_pend, sizeof(*n->pend));
    return n;
}

void hrm_negotiator_free(struct hrm_negotiator *n)
{
    if (!n)
        return;
    hrm_free(n->cells);
    hrm_free(n->pool);
    hrm_free(n->pend);
    hrm_free(n);
}

const struct hrm_negotiator_stats *hrm_negotiator_stats(const struct hrm_negotiator *n)
{
    return &n->stats;
}

int32_t hrm_negotiator_pending(const struct hrm_negotiator *n)
{
    return (int32_t)n->npend;
}

int64_t hrm_negotiator_wait(const struct hrm_negotiator *n, int32_t node, int32_t queue)
{
    if (node < 0 || node >= n->cfg.nnodes || queue < 0 || queue >= n->cfg.nqueues)
        return -1;
    const struct cell *c = &n->cells[(size_t)node * (size_t)n->cfg.nqueues + (size_t)queue];
    return c->advertised ? c->wait : -1;
}

/* ---- the pool ---- */

static void pool_swap(struct pool_item *a, struct pool_item *b)
{
    struct pool_item t = *a;
    *a = *b;
    *b = t;
}

/* Among equal waits, more free slots first; then the lower cell index. */
static bool item_less(const struct pool_item *a, const struct pool_item *b)
{
    return a->key < b->key || (a->key == b->key && a->idx < b->idx);
}

static void pool_push(struct hrm_negotiator *n, int32_t idx)
{
    const struct cell *c = &n->cells[idx];
    int32_t f = c->free < 63 ? c->free : 63;
    struct pool_item it = {.key = c->wait * 64 + (63 - f), .idx = idx, .version = c->version};
    HRM_GROW(n->pool, n->cap_pool, n->npool + 1);
    size_t i = n->npool++;
    n->pool[i] = it;
    while (i > 0 && item_less(&n->pool[i], &n->pool[(i - 1) / 2])) {
        pool_swap(&n->pool[i], &n->pool[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

static void pool_pop(struct hrm_negotiator *n)
{
    n->pool[0] = n->pool[--n->npool];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n->npool && item_less(&n->pool[l], &n->pool[m]))
            m = l;
        if (r < n->npool && item_less(&n->pool[r], &n->pool[m]))
            m = r;
        if (m == i)
            break;
        pool_swap(&n->pool[i], &n->pool[m]);
        i = m;
    }
}

/* The best live item, stale ones dropped on the way; NULL if none. */
static const struct pool_item *pool_top(struct hrm_negotiator *n)
{
    while (n->npool > 0) {
        const struct pool_item *t = &n->pool[0];
        const struct cell *c = &n->cells[t->idx];
        if (c->advertised && c->version == t->version)
            return t;
        pool_pop(n);
    }
    return NULL;
}

/* ---- matching ---- */

/* Matches r with the best advertised queue other than its own, if that gains
 * enough; true when a match was sent. */
static bool match(struct hrm_negotiator *n, struct hrm_env *env, const struct request *r)
{
    int32_t src = r->node * n->cfg.nqueues + r->queue;
    struct pool_item stash;
    bool stashed = false, matched = false;
    const struct pool_item *t;
    while ((t = pool_top(n)) != NULL) {
        if (t->idx == src) { /* set aside, put back below */
            stash = *t;
            stashed = true;
            pool_pop(n);
            continue;
        }
        struct cell *c = &n->cells[t->idx];
        if (c->wait + n->cfg.min_gain_us >= r->wait)
            break;
        int32_t idx = t->idx;
        pool_pop(n);
        struct hrm_msg m = {.type = HRM_MSG_MIGRATE_MATCH,
                            .from = HRM_ADDR_NEGOTIATOR,
                            .job = r->job,
                            .task = r->task,
                            .node = idx / n->cfg.nqueues,
                            .status = (uint16_t)(idx % n->cfg.nqueues)};
        env->send(env, hrm_addr_node(r->node), &m);
        n->stats.matches++;
        /* Count the task in until the target reports again. */
        if (c->free > 0)
            c->free--;
        else
            c->wait += r->est / (c->slots > 0 ? c->slots : 1);
        c->version++;
        if (c->wait > n->cfg.hw_us)
            c->advertised = false;
        else
            pool_push(n, idx);
        matched = true;
        break;
    }
    if (stashed) /* its cell did not change meanwhile, so this is the same item */
        pool_push(n, stash.idx);
    return matched;
}

static void pend_push(struct hrm_negotiator *n, const struct request *r)
{
    if (n->npend == n->cap_pend) { /* full: the oldest goes */
        n->pend_head = (n->pend_head + 1) % n->cap_pend;
        n->npend--;
        n->stats.dropped++;
    }
    n->pend[(n->pend_head + n->npend) % n->cap_pend] = *r;
    n->npend++;
}

/* Oldest requests first, while they match; expired ones are dropped. */
static void drain(struct hrm_negotiator *n, struct hrm_env *env)
{
    int64_t now = env->now_us(env);
    while (n->npend > 0) {
        const struct request *r = &n->pend[n->pend_head];
        if (now - r->at <= n->cfg.request_ttl_us && !match(n, env, r))
            return;
        if (now - r->at > n->cfg.request_ttl_us)
            n->stats.expired++;
        n->pend_head = (n->pend_head + 1) % n->cap_pend;
        n->npend--;
    }
}

int hrm_negotiator_on_msg(struct hrm_negotiator *n, struct hrm_env *env, const struct hrm_msg *m)
{
    if (m->node < 0 || m->node >= n->cfg.nnodes || m->status >= n->cfg.nqueues)
        return -EINVAL;
    int32_t idx = m->node * n->cfg.nqueues + m->status;
    struct cell *c = &n->cells[idx];
    switch (m->type) {
    case HRM_MSG_IDLE_ADVERT:
        c->version++;
        if (m->value < 0) {
            c->advertised = false;
            n->stats.withdrawals++;
            return 0;
        }
        n->stats.adverts++;
        c->wait = m->value;
        c->free = (int32_t)m->gpu_mask;
        c->slots = m->attempt;
        c->advertised = c->wait <= n->cfg.hw_us;
        if (c->advertised)
            pool_push(n, idx);
        drain(n, env);
        return 0;
    case HRM_MSG_MIGRATE_REQUEST: {
        n->stats.requests++;
        /* The source is busy: it is no target now, whatever it said before. */
        c->wait = m->value;
        c->version++;
        c->advertised = false;
        struct request r = {.node = m->node,
                            .queue = m->status,
                            .task = m->task,
                            .job = m->job,
                            .wait = m->value,
                            .est = m->attempt,
                            .at = env->now_us(env)};
        if (!match(n, env, &r))
            pend_push(n, &r);
        return 0;
    }
    default:
        return -EPROTO;
    }
}
