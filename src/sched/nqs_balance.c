/* Node queue system, balancing side: idle adverts, migration requests, moves. */
#include "hrm/alloc.h"
#include "sched/nqs_private.h"

static inline int64_t now_of(struct hrm_env *env)
{
    return env->now_us(env);
}

static void advert(struct hrm_nqs *q, struct hrm_env *env, int32_t qi, int64_t wait)
{
    struct hrm_msg m = {.type = HRM_MSG_IDLE_ADVERT,
                        .from = q->self,
                        .job = -1,
                        .task = -1,
                        .node = q->node,
                        .status = (uint16_t)qi,
                        .attempt = nqs_queue_slots(q, qi, 1000),
                        .value = wait};
    if (wait >= 0)
        m.gpu_mask = (uint32_t)nqs_startable(q, qi, 1000, 0);
    env->send(env, HRM_ADDR_NEGOTIATOR, &m);
    q->stats.adverts++;
}

/*
 * Queued tasks expected to wait longer than hw ask the negotiator to move
 * them; one request per task at a time, a few per call (the bound keeps one
 * message's work small on a node with a long queue).  A task's expected wait
 * is its queue's pt plus the work ahead of it over the queue's slots.
 */
static void request_moves(struct hrm_nqs *q, struct hrm_env *env, int32_t qi, int64_t now)
{
    struct nqs_queue *Q = &q->queues[qi];
    int32_t slots = nqs_queue_slots(q, qi, 1000);
    int64_t pt = nqs_pt_min(q, qi, now);
    /* work of the queues that run before this one */
    int64_t ahead = nqs_ahead_above(q, qi) - Q->queued_est;
    /* the last task's wait bounds every other's: nothing to do below hw */
    if (pt + (ahead + Q->queued_est) / slots <= q->cfg.hw_us)
        return;
    int32_t sent = 0;
    int64_t retry = INT64_MAX; /* the earliest request to send again */
    for (int32_t i = Q->head; i >= 0 && sent < q->cfg.max_requests; i = q->e[i].next) {
        struct nqs_entry *e = &q->e[i];
        int64_t expect = pt + ahead / slots;
        ahead += e->est_us;
        /* A request the negotiator could not match in retry_us is sent again
         * (it drops requests older than that), by a timer: a node whose queue
         * sees no other event (its running task overruns) must still ask. */
        if (expect <= q->cfg.hw_us || (e->flags & (F_MIGRATED | F_RESERVATION | F_OFFERED)))
            continue;
        if (e->retry_at > now) {
            retry = e->retry_at < retry ? e->retry_at : retry;
            continue;
        }
        struct hrm_msg m = {.type = HRM_MSG_MIGRATE_REQUEST,
                            .from = q->self,
                            .job = e->job,
                            .task = e->task,
                            .node = q->node,
                            .status = (uint16_t)qi,
                            .attempt = (int32_t)(e->est_us < INT32_MAX ? e->est_us : INT32_MAX),
                            .value = expect};
        env->send(env, HRM_ADDR_NEGOTIATOR, &m);
        e->flags |= F_REQ_OUT;
        e->retry_at = now + q->cfg.retry_us;
        retry = e->retry_at < retry ? e->retry_at : retry;
        q->stats.migrate_requests++;
        sent++;
    }
    if (retry < q->retry_timer_at) {
        q->retry_timer_at = retry;
        env->timer(env, retry, NQS_COOKIE_RETRY);
    }
}

/* After every change: advertise a queue whose wait fell to lw, withdraw it
 * above hw (the band between is hysteresis; a target matched there parks the
 * request), and ask to move tasks expected to wait beyond hw. */
void nqs_balance(struct hrm_nqs *q, struct hrm_env *env)
{
    if (!q->cfg.balance)
        return;
    int64_t now = now_of(env);
    for (int32_t qi = 0; qi < q->nq; qi++) {
        struct nqs_queue *Q = &q->queues[qi];
        int64_t w = nqs_wait(q, qi, 1000, 0, now);
        if (!Q->advertised && w >= 0 && w <= q->cfg.lw_us) {
            advert(q, env, qi, w);
            Q->advertised = true;
        } else if (Q->advertised && w > q->cfg.hw_us) {
            advert(q, env, qi, -1);
            Q->advertised = false;
        }
        if (Q->nqueued > 0)
            request_moves(q, env, qi, now);
    }
}

/* A parked request is pulled when its queue has a slot that fits it: the slot
 * is held for the task while it travels. */
void nqs_pump_parked(struct hrm_nqs *q, struct hrm_env *env, int32_t qi)
{
    for (size_t k = 0; k < q->nparks;) {
        struct nqs_park *p = &q->parks[k];
        int64_t cpu = 0, mem = 0;
        nqs_task_req(q, p->task, &cpu, &mem);
        if (p->queue != qi || cpu > q->free_cpu || mem > q->free_mem) {
            k++;
            continue;
        }
        const struct nqs_queue *Q = &q->queues[qi];
        if (Q->cfg.max_running > 0 && Q->nrunning + Q->nheld >= Q->cfg.max_running)
            return;
        struct nqs_park park = *p;
        for (size_t j = k + 1; j < q->nparks; j++) /* keep FIFO order */
            q->parks[j - 1] = q->parks[j];
        q->nparks--;
        nqs_hold_add(q, env, park.source, park.task, H_MIGRATE, qi, 1, cpu, mem);
        struct hrm_msg m = {.type = HRM_MSG_MIGRATE_PULL,
                            .from = q->self,
                            .job = park.job,
                            .task = park.task,
                            .node = q->node,
                            .status = (uint16_t)qi};
        env->send(env, park.source, &m);
        q->stats.pulls++;
    }
}

void nqs_withdraw_migration(struct hrm_nqs *q, struct hrm_env *env, struct nqs_entry *e,
                            bool tell_offer)
{
    uint8_t told = tell_offer ? (F_PARKED | F_OFFERED) : F_PARKED;
    if ((e->flags & told) && e->mig_target >= 0) {
        struct hrm_msg m = {.type = HRM_MSG_MIGRATE_CANCEL,
                            .from = q->self,
                            .job = e->job,
                            .task = e->task,
                            .node = q->node};
        env->send(env, e->mig_target, &m);
    }
    /* An offer not told is answered by ACCEPT, which is then cancelled. */
    e->flags &= (uint8_t) ~(F_REQ_OUT | F_PARKED | F_OFFERED);
    e->mig_target = -1;
}

/* Source: the task goes to the target (after ACCEPT or PULL) if still queued. */
static void hand_over(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m)
{
    int32_t i = nqs_find_queued(q, m->task);
    if (i < 0 || !(q->e[i].flags & F_OFFERED) || q->e[i].mig_target != m->from) {
        struct hrm_msg c = {.type = HRM_MSG_MIGRATE_CANCEL,
                            .from = q->self,
                            .job = m->job,
                            .task = m->task,
                            .node = q->node};
        env->send(env, m->from, &c);
        return;
    }
    struct nqs_entry *e = &q->e[i];
    nqs_queue_remove(q, i);
    nqs_send_run(q, env, e, m->from, e->mig_queue);
    q->stats.migrated_out++;
    nqs_entry_free(q, i);
}

/* Target: accept (a slot is free: hold it), park (busy but not overloaded),
 * or refuse (over the limit, overloaded, or too many parked). */
static void on_offer(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m)
{
    int32_t qi = m->status;
    int64_t cpu, mem;
    struct hrm_msg r = {
        .from = q->self, .job = m->job, .task = m->task, .node = q->node, .status = (uint16_t)qi};
    int reason = nqs_task_req(q, m->task, &cpu, &mem) < 0 ? HRM_NQS_OVER_LIMIT
                                                          : nqs_over_limit(q, qi, cpu, mem);
    int64_t w = reason ? -1 : nqs_wait(q, qi, cpu, mem, now_of(env));
    if (!reason && nqs_startable(q, qi, cpu, mem) > 0) {
        nqs_hold_add(q, env, m->from, m->task, H_MIGRATE, qi, 1, cpu, mem);
        r.type = HRM_MSG_MIGRATE_ACCEPT;
    } else if (!reason && w <= q->cfg.hw_us && w < m->value &&
               q->nparks < (size_t)q->cfg.max_parked) {
        HRM_GROW(q->parks, q->cap_parks, q->nparks + 1);
        q->parks[q->nparks++] = (struct nqs_park){
            .source = m->from, .task = m->task, .job = m->job, .queue = (int16_t)qi};
        r.type = HRM_MSG_MIGRATE_PARKED;
        q->stats.parked++;
    } else {
        if (!reason)
            reason = w > q->cfg.hw_us || w >= m->value ? HRM_NQS_OVERLOADED : HRM_NQS_PARK_FULL;
        r.type = HRM_MSG_MIGRATE_REFUSE;
        r.status = (uint16_t)reason;
        q->stats.refused++;
    }
    env->send(env, m->from, &r);
}

static void on_cancel(struct hrm_nqs *q, const struct hrm_msg *m)
{
    for (size_t k = 0; k < q->nparks; k++) {
        if (q->parks[k].source == m->from && q->parks[k].task == m->task) {
            for (size_t j = k + 1; j < q->nparks; j++)
                q->parks[j - 1] = q->parks[j];
            q->nparks--;
            return;
        }
    }
    struct nqs_hold *h = nqs_hold_find(q, m->from, m->task, H_MIGRATE);
    if (h)
        nqs_hold_release(q, h);
}

int nqs_on_migrate_msg(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m)
{
    switch (m->type) {
    case HRM_MSG_MIGRATE_MATCH: {
        /* Negotiator found a target: offer the task if it is still waiting here. */
        int32_t i = nqs_find_queued(q, m->task);
        if (i < 0 || !(q->e[i].flags & F_REQ_OUT) || (q->e[i].flags & F_OFFERED))
            return 0;
        struct nqs_entry *e = &q->e[i];
        e->flags |= F_OFFERED;
        e->mig_target = hrm_addr_node(m->node);
        e->mig_queue = (int16_t)m->status;
        int64_t pt = nqs_pt_min(q, e->queue, now_of(env));
        struct hrm_msg o = {.type = HRM_MSG_MIGRATE_OFFER,
                            .from = q->self,
                            .job = e->job,
                            .task = e->task,
                            .node = q->node,
                            .status = m->status,
                            .value = pt + nqs_ahead_above(q, e->queue) /
                                              nqs_queue_slots(q, e->queue, e->cpu)};
        env->send(env, e->mig_target, &o);
        return 0;
    }
    case HRM_MSG_MIGRATE_OFFER:
        on_offer(q, env, m);
        return 0;
    case HRM_MSG_MIGRATE_ACCEPT:
    case HRM_MSG_MIGRATE_PULL:
        hand_over(q, env, m);
        return 0;
    case HRM_MSG_MIGRATE_PARKED: {
        int32_t i = nqs_find_queued(q, m->task);
        if (i >= 0 && q->e[i].mig_target == m->from)
            q->e[i].flags |= F_PARKED;
        return 0;
    }
    case HRM_MSG_MIGRATE_REFUSE: {
        int32_t i = nqs_find_queued(q, m->task);
        if (i >= 0) {
            q->e[i].flags &= (uint8_t) ~(F_REQ_OUT | F_OFFERED | F_PARKED);
            q->e[i].mig_target = -1;
            q->e[i].retry_at = now_of(env) + q->cfg.retry_us;
        }
        return 0;
    }
    case HRM_MSG_MIGRATE_CANCEL:
        on_cancel(q, m);
        return 0;
    default:
        return -EPROTO;
    }
}
