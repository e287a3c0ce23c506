/* Node queue system holds: reserved slots keyed by owner and id, their release and expiry. */
#include "hrm/alloc.h"
#include "sched/nqs_private.h"

static inline int64_t now_of(struct hrm_env *env)
{
    return env->now_us(env);
}

/* ---- holds ---- */

struct nqs_hold *nqs_hold_find(struct hrm_nqs *q, hrm_addr owner, int32_t id, int kind)
{
    for (size_t i = 0; i < q->nholds; i++) {
        struct nqs_hold *h = &q->holds[i];
        if (h->owner == owner && h->id == id && h->kind == kind)
            return h;
    }
    return NULL;
}

struct nqs_hold *nqs_hold_add(struct hrm_nqs *q, struct hrm_env *env, hrm_addr owner, int32_t id,
                              int kind, int32_t qi, int32_t slots, int64_t cpu, int64_t mem)
{
    HRM_GROW(q->holds, q->cap_holds, q->nholds + 1);
    struct nqs_hold *h = &q->holds[q->nholds++];
    int64_t now = now_of(env);
    *h = (struct nqs_hold){.owner = owner,
                           .id = id,
                           .cpu = cpu,
                           .mem = mem,
                           .expires = now + q->cfg.hold_ttl_us,
                           .job = -1,
                           .queue = (int16_t)qi,
                           .slots = (int16_t)slots,
                           .kind = (uint8_t)kind};
    q->free_cpu -= (int64_t)slots * cpu;
    q->free_mem -= (int64_t)slots * mem;
    q->queues[qi].nheld += slots;
    if (h->expires < q->timer_at) {
        q->timer_at = h->expires;
        env->timer(env, h->expires, NQS_COOKIE_EXPIRY);
    }
    return h;
}

/* Gives one reserved slot back to the node. */
void nqs_hold_drop_slot(struct hrm_nqs *q, struct nqs_hold *h)
{
    q->free_cpu += h->cpu;
    q->free_mem += h->mem;
    q->queues[h->queue].nheld--;
    h->slots--;
}

void nqs_hold_release(struct hrm_nqs *q, struct nqs_hold *h)
{
    while (h->slots > 0)
        nqs_hold_drop_slot(q, h);
    *h = q->holds[--q->nholds]; /* order of holds does not matter */
}

bool nqs_expired_take(struct hrm_nqs *q, hrm_addr owner, int32_t id, int kind)
{
    uint32_t n = q->nexpired < NQS_EXPIRED_KEEP ? q->nexpired : NQS_EXPIRED_KEEP;
    for (uint32_t i = 0; i < n; i++) {
        struct nqs_expired *x = &q->expired[i];
        if (x->owner == owner && x->id == id && x->kind == kind && x->slots > 0) {
            x->slots--;
            return true;
        }
    }
    return false;
}

void nqs_expire_holds(struct hrm_nqs *q, struct hrm_env *env)
{
    int64_t now = now_of(env);
    int64_t next = INT64_MAX;
    for (size_t i = 0; i < q->nholds;) {
        struct nqs_hold *h = &q->holds[i];
        if (h->expires <= now) {
            q->stats.holds_expired += h->slots;
            if (h->slots > 0)
                q->expired[q->nexpired++ % NQS_EXPIRED_KEEP] = (struct nqs_expired){
                    .owner = h->owner, .id = h->id, .slots = h->slots, .kind = h->kind};
            nqs_hold_release(q, h); /* moves the last hold into i */
            continue;
        }
        if (h->expires < next)
            next = h->expires;
        i++;
    }
    q->timer_at = next;
    if (next != INT64_MAX)
        env->timer(env, next, NQS_COOKIE_EXPIRY);
}
