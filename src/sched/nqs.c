/* Node queue system: queues, holds, runs, the P4 wait estimate, preemption. */
#include <string.h>

#include "hrm/alloc.h"
#include "sched/nqs_private.h"

#define DEFAULT_TTL_US 50000
#define EPS_MIN 0.1
#define EPS_MAX 10.0
#define EPS_WEIGHT 0.1 /* EWMA weight of one observation when learning eps */

static inline int64_t now_of(struct hrm_env *env)
{
    return env->now_us(env);
}

/* ---- configuration ---- */

int32_t hrm_nqs_queue_for_job(const struct hrm_nqs_config *cfg, const struct hrm_workload *wl,
                              int32_t job)
{
    if (!cfg || !cfg->queues || job < 0 || job >= wl->njobs)
        return 0;
    const char *name = wl->queues[wl->jobs[job].queue].name;
    for (int32_t i = 0; i < cfg->nqueues; i++)
        if (strcmp(cfg->queues[i].name, name) == 0)
            return i;
    return 0;
}

struct hrm_nqs *hrm_nqs_new(const struct hrm_cluster *cluster, const struct hrm_workload *wl,
                            int32_t node, const struct hrm_nqs_config *cfg, struct hrm_error *err)
{
    if (node < 0 || node >= cluster->nnodes) {
        hrm_errorf(err, -EINVAL, "nqs: node %d out of range", node);
        return NULL;
    }
    return hrm_nqs_new_capacity(&cluster->nodes[node].capacity, wl, node, cfg, err);
}

struct hrm_nqs *hrm_nqs_new_capacity(const struct hrm_res *capacity, const struct hrm_workload *wl,
                                     int32_t node, const struct hrm_nqs_config *cfg,
                                     struct hrm_error *err)
{
    if (!capacity || node < 0) {
        hrm_errorf(err, -EINVAL, "nqs: node %d: bad node or no capacity", node);
        return NULL;
    }
    static const struct hrm_nqs_queue_cfg one = {.name = ""};
    struct hrm_nqs_config def = {0};
    if (!cfg)
        cfg = &def;
    int32_t nq = cfg->queues ? cfg->nqueues : 1;
    if (nq < 1 || nq > 64) {
        hrm_errorf(err, -HRM_ESPEC, "nqs: %d execution queues (1..64)", nq);
        return NULL;
    }
    struct hrm_nqs *q = hrm_calloc(1, sizeof(*q));
    q->wl = wl;
    q->node = node;
    q->self = hrm_addr_node(node);
    q->cfg = *cfg;
    if (q->cfg.hold_ttl_us <= 0)
        q->cfg.hold_ttl_us = DEFAULT_TTL_US;
    if (q->cfg.retry_us <= 0)
        q->cfg.retry_us = q->cfg.hw_us > 0 ? q->cfg.hw_us : 1000;
    if (q->cfg.max_parked <= 0)
        q->cfg.max_parked = 16;
    if (q->cfg.max_requests <= 0)
        q->cfg.max_requests = 4;
    for (int k = 0; k < 3; k++)
        q->eps[k] = cfg->eps[k] > 0 ? cfg->eps[k] : 1.0;
    q->nq = nq;
    q->queues = hrm_calloc((size_t)nq, sizeof(*q->queues));
    q->order = hrm_calloc((size_t)nq, sizeof(*q->order));
    for (int32_t i = 0; i < nq; i++) {
        struct nqs_queue *Q = &q->queues[i];
        Q->cfg = cfg->queues ? cfg->queues[i] : one;
        Q->head = Q->tail = Q->boost_tail = -1;
        /* insertion sort: priority high first, index breaks ties */
        int32_t k = i;
        while (k > 0 && q->queues[q->order[k - 1]].cfg.priority < Q->cfg.priority) {
            q->order[k] = q->order[k - 1];
            k--;
        }
        q->order[k] = i;
    }
    q->cap_cpu = capacity->v[HRM_DIM_CPU];
    q->cap_mem = capacity->v[HRM_DIM_MEM];
    q->free_cpu = q->cap_cpu;
    q->free_mem = q->cap_mem;
    q->free_head = -1;
    q->run_head = -1;
    q->timer_at = INT64_MAX;
    q->retry_timer_at = INT64_MAX;
    return q;
}

void hrm_nqs_free(struct hrm_nqs *q)
{
    if (!q)
        return;
    hrm_free(q->queues);
    hrm_free(q->order);
    hrm_free(q->e);
    hrm_free(q->holds);
    hrm_free(q->parks);
    hrm_free(q);
}

const struct hrm_nqs_stats *hrm_nqs_stats(const struct hrm_nqs *q)
{
    return &q->stats;
}

double hrm_nqs_eps(const struct hrm_nqs *q, enum hrm_job_kind kind)
{
    return (unsigned)kind < 3 ? q->eps[kind] : 1.0;
}

void hrm_nqs_queue_info(const struct hrm_nqs *q, int32_t queue, struct hrm_nqs_queue_info *out)
{
    memset(out, 0, sizeof(*out));
    if (queue < 0 || queue >= q->nq)
        return;
    const struct nqs_queue *Q = &q->queues[queue];
    out->running = Q->nrunning;
    out->queued = Q->nqueued;
    out->held_slots = Q->nheld;
    out->queued_est_us = Q->queued_est;
    for (size_t i = 0; i < q->nparks; i++)
        out->parked += q->parks[i].queue == queue;
}

/* ---- entries and lists ---- */

static int32_t entry_new(struct hrm_nqs *q)
{
    int32_t i = q->free_head;
    if (i >= 0) {
        q->free_head = q->e[i].next;
    } else {
        HRM_GROW(q->e, q->cap_e, q->ne + 1);
        i = (int32_t)q->ne++;
        q->e[i].seq = 0;
    }
    uint32_t seq = q->e[i].seq;
    memset(&q->e[i], 0, sizeof(q->e[i]));
    q->e[i].seq = seq;
    q->e[i].prev = q->e[i].next = -1;
    q->e[i].mig_target = -1;
    return i;
}

void nqs_entry_free(struct hrm_nqs *q, int32_t i)
{
    q->e[i].state = E_FREE;
    q->e[i].seq++;
    q->e[i].next = q->free_head;
    q->free_head = i;
}

/* Links entry i into queue qi after entry `after` (-1 = at the head). */
static void queue_insert_after(struct hrm_nqs *q, int32_t qi, int32_t after, int32_t i)
{
    struct nqs_queue *Q = &q->queues[qi];
    struct nqs_entry *e = &q->e[i];
    e->prev = after;
    e->next = after >= 0 ? q->e[after].next : Q->head;
    if (e->next >= 0)
        q->e[e->next].prev = i;
    else
        Q->tail = i;
    if (after >= 0)
        q->e[after].next = i;
    else
        Q->head = i;
    e->state = E_QUEUED;
    e->queue = (int16_t)qi;
    Q->nqueued++;
    Q->queued_est += e->est_us;
}

/* Queues entry i: migrated ones at the end of the migrated prefix (raised
 * priority, FIFO among themselves), others at the tail, or, for a preempted
 * task, right after the migrated prefix (it was already at the front). */
static void queue_push(struct hrm_nqs *q, int32_t qi, int32_t i, bool front)
{
    struct nqs_queue *Q = &q->queues[qi];
    if (q->e[i].flags & F_MIGRATED) {
        queue_insert_after(q, qi, Q->boost_tail, i);
        Q->boost_tail = i;
    } else {
        queue_insert_after(q, qi, front ? Q->boost_tail : Q->tail, i);
    }
}

void nqs_queue_remove(struct hrm_nqs *q, int32_t i)
{
    struct nqs_entry *e = &q->e[i];
    struct nqs_queue *Q = &q->queues[e->queue];
    if (Q->boost_tail == i)
        Q->boost_tail = e->prev; /* the prefix is contiguous: its new last is prev */
    if (e->prev >= 0)
        q->e[e->prev].next = e->next;
    else
        Q->head = e->next;
    if (e->next >= 0)
        q->e[e->next].prev = e->prev;
    else
        Q->tail = e->prev;
    e->prev = e->next = -1;
    Q->nqueued--;
    Q->queued_est -= e->est_us;
}

static void run_link(struct hrm_nqs *q, int32_t i)
{
    struct nqs_entry *e = &q->e[i];
    e->prev = -1;
    e->next = q->run_head;
    if (q->run_head >= 0)
        q->e[q->run_head].prev = i;
    q->run_head = i;
}

static void run_unlink(struct hrm_nqs *q, int32_t i)
{
    struct nqs_entry *e = &q->e[i];
    if (e->prev >= 0)
        q->e[e->prev].next = e->next;
    else
        q->run_head = e->next;
    if (e->next >= 0)
        q->e[e->next].prev = e->prev;
    e->prev = e->next = -1;
}

int32_t nqs_find_queued(const struct hrm_nqs *q, int32_t task)
{
    for (int32_t k = 0; k < q->nq; k++)
        for (int32_t i = q->queues[k].head; i >= 0; i = q->e[i].next)
            if (q->e[i].task == task && !(q->e[i].flags & F_RESERVATION))
                return i;
    return -1;
}

int nqs_task_req(const struct hrm_nqs *q, int32_t task, int64_t *cpu, int64_t *mem)
{
    if (task < 0 || task >= q->wl->ntasks)
        return -EINVAL;
    const struct hrm_task *t = &q->wl->tasks[task];
    *cpu = t->req.v[HRM_DIM_CPU];
    *mem = t->req.v[HRM_DIM_MEM];
    return 0;
}

/* ---- capacity and the wait estimate ---- */

int nqs_over_limit(const struct hrm_nqs *q, int32_t qi, int64_t cpu, int64_t mem)
{
    if (qi < 0 || qi >= q->nq)
        return HRM_NQS_NO_QUEUE;
    const struct hrm_res *lim = &q->queues[qi].cfg.limit;
    if ((lim->v[HRM_DIM_CPU] > 0 && cpu > lim->v[HRM_DIM_CPU]) || cpu > q->cap_cpu)
        return HRM_NQS_OVER_LIMIT;
    if ((lim->v[HRM_DIM_MEM] > 0 && mem > lim->v[HRM_DIM_MEM]) || mem > q->cap_mem)
        return HRM_NQS_OVER_LIMIT;
    return HRM_NQS_OK;
}

/* Slots the queue runs at once for tasks of this size. */
int32_t nqs_queue_slots(const struct hrm_nqs *q, int32_t qi, int64_t cpu)
{
    int64_t per = cpu > 0 ? cpu : 1000;
    int64_t slots = q->cap_cpu / per;
    int32_t mr = q->queues[qi].cfg.max_running;
    if (mr > 0 && mr < slots)
        slots = mr;
    return slots > 0 ? (int32_t)slots : 1;
}

static int32_t room(const struct hrm_nqs *q, int32_t qi)
{
    const struct nqs_queue *Q = &q->queues[qi];
    if (Q->cfg.max_running <= 0)
        return INT32_MAX;
    int32_t r = Q->cfg.max_running - Q->nrunning - Q->nheld;
    return r > 0 ? r : 0;
}

/* Queued work that runs before a new task of queue qi: its own queue and every
 * queue earlier in run order (strict priority). */
int64_t nqs_ahead_above(const struct hrm_nqs *q, int32_t qi)
{
    int64_t sum = 0;
    for (int32_t k = 0; k < q->nq; k++) {
        int32_t o = q->order[k];
        sum += q->queues[o].queued_est;
        if (o == qi)
            break;
    }
    return sum;
}

static bool queued_ahead(const struct hrm_nqs *q, int32_t qi)
{
    for (int32_t k = 0; k < q->nq; k++) {
        int32_t o = q->order[k];
        if (q->queues[o].nqueued > 0)
            return true;
        if (o == qi)
            break;
    }
    return false;
}

int32_t nqs_startable(const struct hrm_nqs *q, int32_t qi, int64_t cpu, int64_t mem)
{
    if (queued_ahead(q, qi))
        return 0; /* FIFO inside a queue, strict priority across queues */
    int64_t n = room(q, qi);
    if (cpu > 0 && q->free_cpu / cpu < n)
        n = q->free_cpu / cpu;
    if (mem > 0 && q->free_mem / mem < n)
        n = q->free_mem / mem;
    if (n < 0)
        n = 0;
    return n > 65535 ? 65535 : (int32_t)n;
}

/* The running task (of a lower priority than queue qi) to preempt so that a
 * task of (cpu, mem) fits, or -1.  Lowest priority first, then the one that
 * started last (it loses the least work). */
static int32_t preempt_victim(const struct hrm_nqs *q, int32_t qi, int64_t cpu, int64_t mem)
{
    int32_t prio = q->queues[qi].cfg.priority;
    /* the common case, one priority level, costs no scan */
    if (q->cfg.no_preempt || prio <= q->queues[q->order[q->nq - 1]].cfg.priority ||
        room(q, qi) <= 0)
        return -1;
    int64_t cpu_lower = 0, mem_lower = 0;
    int32_t best = -1;
    for (int32_t i = q->run_head; i >= 0; i = q->e[i].next) {
        const struct nqs_entry *e = &q->e[i];
        int32_t p = q->queues[e->queue].cfg.priority;
        if (p >= prio)
            continue;
        cpu_lower += e->cpu;
        mem_lower += e->mem;
        if (best < 0 || p < q->queues[q->e[best].queue].cfg.priority ||
            (p == q->queues[q->e[best].queue].cfg.priority && e->start_us > q->e[best].start_us))
            best = i;
    }
    if (best < 0 || q->free_cpu + cpu_lower < cpu || q->free_mem + mem_lower < mem)
        return -1;
    return best;
}

/* Smallest remaining (estimated) time of the running tasks that would free a
 * slot for queue qi: its own when the queue is at its limit, else any. */
int64_t nqs_pt_min(const struct hrm_nqs *q, int32_t qi, int64_t now)
{
    bool own = room(q, qi) == 0;
    int64_t pt = INT64_MAX;
    for (int32_t i = q->run_head; i >= 0; i = q->e[i].next) {
        const struct nqs_entry *e = &q->e[i];
        if (own && e->queue != qi)
            continue;
        /* A run past its estimate by x is expected to take about x more: the estimate no
         * longer says when it ends, and the time it has overrun is the best evidence left
         * (it doubles as it goes on).  Counting 0 instead made a node whose task overran
         * look free for ever: probes chose it and queued tasks there never asked to move. */
        int64_t r = e->start_us + e->est_us - now;
        if (r < 0)
            r = -r;
        if (r < pt)
            pt = r;
    }
    /* Nothing running: the capacity is held by holds, which resolve within a
     * round trip. */
    return pt == INT64_MAX ? 0 : pt;
}

int64_t nqs_wait(const struct hrm_nqs *q, int32_t qi, int64_t cpu, int64_t mem, int64_t now)
{
    int r = nqs_over_limit(q, qi, cpu, mem);
    if (r)
        return -r;
    if (nqs_startable(q, qi, cpu, mem) > 0)
        return 0;
    if (!queued_ahead(q, qi) && preempt_victim(q, qi, cpu, mem) >= 0)
        return 0;
    /* P4: w = pt + sum(et of queued) ; w / q.  pt is not divided: a
     * 4-core node whose first task ends in 10 ms does not free a slot in 2.5. */
    return nqs_pt_min(q, qi, now) + nqs_ahead_above(q, qi) / nqs_queue_slots(q, qi, cpu);
}

int64_t hrm_nqs_wait(const struct hrm_nqs *q, int32_t queue, int64_t cpu, int64_t mem,
                     int64_t now_us)
{
    return nqs_wait(q, queue, cpu, mem, now_us);
}

/* ---- starting, ending, preempting ---- */

static void start(struct hrm_nqs *q, struct hrm_env *env, int32_t i)
{
    struct nqs_entry *e = &q->e[i];
    int64_t now = now_of(env);
    q->free_cpu -= e->cpu;
    q->free_mem -= e->mem;
    e->state = E_RUNNING;
    e->start_us = now;
    e->seq++;
    q->queues[e->queue].nrunning++;
    run_link(q, i);
    if (e->flags & (F_REQ_OUT | F_OFFERED | F_PARKED))
        nqs_withdraw_migration(q, env, e, false);
    struct hrm_msg m = {.type = HRM_MSG_TASK_LAUNCH,
                        .from = q->self,
                        .job = e->job,
                        .task = e->task,
                        .node = q->node,
                        .attempt = i,
                        .gpu_mask = e->seq,
                        .value = e->enq_us};
    env->send(env, HRM_ADDR_EXEC, &m);
}

static void preempt(struct hrm_nqs *q, struct hrm_env *env, int32_t v)
{
    struct nqs_entry *e = &q->e[v];
    struct hrm_msg m = {.type = HRM_MSG_TASK_KILL,
                        .from = q->self,
                        .job = e->job,
                        .task = e->task,
                        .node = q->node,
                        .attempt = v,
                        .gpu_mask = e->seq};
    env->send(env, HRM_ADDR_EXEC, &m);
    run_unlink(q, v);
    q->free_cpu += e->cpu;
    q->free_mem += e->mem;
    q->queues[e->queue].nrunning--;
    e->seq++;
    e->enq_us = now_of(env);
    queue_push(q, e->queue, v, true); /* progress lost; it runs again first */
    q->stats.preemptions++;
}

/* A late-binding reservation reached the head: hold a slot and ask its
 * scheduler for a task. */
static void bind_request(struct hrm_nqs *q, struct hrm_env *env, int32_t i)
{
    struct nqs_entry *e = &q->e[i];
    int32_t token = q->next_token++;
    if (q->next_token < 0)
        q->next_token = 0;
    struct nqs_hold *h = nqs_hold_add(q, env, e->owner, token, H_BIND, e->queue, 1, e->cpu, e->mem);
    h->job = e->job;
    struct hrm_msg m = {.type = HRM_MSG_GET_TASK,
                        .from = q->self,
                        .job = e->job,
                        .task = -1,
                        .node = q->node,
                        .attempt = token,
                        .status = (uint16_t)e->queue};
    env->send(env, e->owner, &m);
    q->stats.bind_requests++;
    nqs_entry_free(q, i);
}

/* Starts whatever can start: queues in priority order, parked pulls first in
 * each (raised priority), then the queue's head while it fits; a head that
 * does not fit the node blocks every lower queue (strict priority) unless it
 * can preempt a lower-priority task. */
static void pump(struct hrm_nqs *q, struct hrm_env *env)
{
    for (int32_t k = 0; k < q->nq; k++) {
        int32_t qi = q->order[k];
        struct nqs_queue *Q = &q->queues[qi];
        if (q->nparks)
            nqs_pump_parked(q, env, qi);
        while (Q->head >= 0 && room(q, qi) > 0) {
            int32_t i = Q->head;
            struct nqs_entry *e = &q->e[i];
            if (e->cpu <= q->free_cpu && e->mem <= q->free_mem) {
                nqs_queue_remove(q, i);
                if (e->flags & F_RESERVATION)
                    bind_request(q, env, i);
                else
                    start(q, env, i);
                continue;
            }
            int32_t v = preempt_victim(q, qi, e->cpu, e->mem);
            if (v < 0)
                return;
            preempt(q, env, v);
        }
    }
}

/* ---- message handlers ---- */

static void reply_hold(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m,
                       int32_t granted, int64_t value)
{
    int32_t qi = m->node;
    uint32_t qlen = 0;
    if (qi >= 0 && qi < q->nq) {
        const struct nqs_queue *Q = &q->queues[qi];
        qlen = (uint32_t)(Q->nrunning + Q->nqueued + Q->nheld);
    }
    struct hrm_msg r = {.type = HRM_MSG_HOLD_REPLY,
                        .from = q->self,
                        .job = m->job,
                        .task = m->task,
                        .node = q->node,
                        .attempt = m->attempt,
                        .status = (uint16_t)granted,
                        .gpu_mask = qlen,
                        .value = value};
    env->send(env, m->from, &r);
}

static int on_hold(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m)
{
    int32_t qi = m->node;
    int64_t cpu = m->gpu_mask, mem = m->value;
    q->stats.holds++;
    int reason = nqs_over_limit(q, qi, cpu, mem);
    if (reason) {
        q->stats.rejected++;
        reply_hold(q, env, m, 0, -reason);
        return 0;
    }
    int32_t granted = 0;
    if (m->status > 0) {
        granted = nqs_startable(q, qi, cpu, mem);
        if (granted > m->status)
            granted = m->status;
        if (granted > 0) {
            nqs_hold_add(q, env, m->from, m->attempt, H_PROBE, qi, granted, cpu, mem);
            q->stats.holds_granted_slots += granted;
        }
    }
    reply_hold(q, env, m, granted, nqs_wait(q, qi, cpu, mem, now_of(env)));
    return 0;
}

/* A task that asks more than its queue allows ends at once, failed, with the
 * reason in value. */
static void reject_task(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m, int reason)
{
    q->stats.rejected++;
    struct hrm_msg r = {.type = HRM_MSG_TASK_END,
                        .from = q->self,
                        .job = m->job,
                        .task = m->task,
                        .node = q->node,
                        .status = HRM_OUTCOME_FAILED,
                        .value = -reason};
    env->send(env, (hrm_addr)m->value, &r);
}

static int on_run(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m)
{
    int64_t cpu, mem;
    if (nqs_task_req(q, m->task, &cpu, &mem) < 0)
        return -EINVAL;
    int kind = (m->status & HRM_RUN_BIND)       ? H_BIND
               : (m->status & HRM_RUN_MIGRATED) ? H_MIGRATE
                                                : H_PROBE;
    struct nqs_hold *h = m->attempt >= 0 ? nqs_hold_find(q, m->from, m->attempt, kind) : NULL;
    int32_t qi = h ? h->queue : m->node;
    int reason = nqs_over_limit(q, qi, cpu, mem);
    if (reason) {
        if (h)
            nqs_hold_release(q, h);
        reject_task(q, env, m, reason);
        return 0;
    }
    const struct hrm_task *t = &q->wl->tasks[m->task];
    int32_t i = entry_new(q);
    struct nqs_entry *e = &q->e[i];
    e->task = m->task;
    e->job = t->job;
    e->owner = (hrm_addr)m->value;
    e->kind = (uint8_t)q->wl->jobs[t->job].kind;
    e->raw_est_us = t->est_duration_us > 0 ? t->est_duration_us : t->duration_us;
    e->est_us = (int64_t)((double)e->raw_est_us * q->eps[e->kind % 3]);
    e->cpu = cpu;
    e->mem = mem;
    e->enq_us = now_of(env);
    e->queue = (int16_t)qi;
    if (m->status & HRM_RUN_MIGRATED) {
        e->flags |= F_MIGRATED;
        q->stats.migrated_in++;
    }
    if (h && h->slots > 0 && cpu <= h->cpu && mem <= h->mem) {
        /* The reserved slot becomes the task's: it starts now, ahead of
         * anything queued since the hold was granted. */
        nqs_hold_drop_slot(q, h);
        start(q, env, i);
    } else if (!h && m->attempt >= 0 && nqs_expired_take(q, m->from, m->attempt, kind)) {
        /* Its hold expired before the run came back: the messages were slower than the hold's
         * life (a loaded control plane), not the scheduler wrong.  The slot it was given was
         * the head of the line, so it waits first in line -- not behind every task and
         * reservation queued since, a full turn of the queue later (with late binding, the
         * reservations ahead of it each cost another round trip to their scheduler). */
        q->stats.late_runs++;
        queue_push(q, qi, i, true);
    } else {
        queue_push(q, qi, i, false);
    }
    if (h && (h->slots == 0 || (m->status & HRM_RUN_LAST) || kind != H_PROBE))
        nqs_hold_release(q, h);
    pump(q, env);
    return 0;
}

static int on_reserve(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m)
{
    if (m->job < 0 || m->job >= q->wl->njobs || m->node < 0 || m->node >= q->nq)
        return -EINVAL;
    const struct hrm_job *j = &q->wl->jobs[m->job];
    int64_t cpu = 0, mem = 0;
    nqs_task_req(q, j->task_first, &cpu, &mem);
    int32_t i = entry_new(q);
    struct nqs_entry *e = &q->e[i];
    e->task = -1;
    e->job = m->job;
    e->owner = m->from;
    e->flags = F_RESERVATION;
    e->cpu = cpu;
    e->mem = mem;
    e->enq_us = now_of(env);
    queue_push(q, m->node, i, false);
    pump(q, env);
    return 0;
}

/* The scheduler bound every task of job: its queued reservations here go. */
static void cancel_reservations(struct hrm_nqs *q, hrm_addr owner, int32_t job)
{
    for (int32_t k = 0; k < q->nq; k++) {
        for (int32_t i = q->queues[k].head; i >= 0;) {
            int32_t next = q->e[i].next;
            if ((q->e[i].flags & F_RESERVATION) && q->e[i].owner == owner && q->e[i].job == job) {
                nqs_queue_remove(q, i);
                nqs_entry_free(q, i);
            }
            i = next;
        }
    }
}

static int on_exec_end(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m)
{
    int32_t i = m->attempt;
    if (i < 0 || (size_t)i >= q->ne)
        return 0;
    struct nqs_entry *e = &q->e[i];
    if (e->state != E_RUNNING || e->task != m->task || e->seq != m->gpu_mask)
        return 0; /* a run we killed */
    int64_t now = now_of(env);
    run_unlink(q, i);
    q->free_cpu += e->cpu;
    q->free_mem += e->mem;
    q->queues[e->queue].nrunning--;
    if (q->cfg.eps_learn && e->raw_est_us > 0 && m->status == HRM_OUTCOME_DONE) {
        double ratio = (double)(now - e->start_us) / (double)e->raw_est_us;
        double *eps = &q->eps[e->kind % 3];
        *eps = (1 - EPS_WEIGHT) * *eps + EPS_WEIGHT * ratio;
        if (*eps < EPS_MIN)
            *eps = EPS_MIN;
        if (*eps > EPS_MAX)
            *eps = EPS_MAX;
    }
    struct hrm_msg r = {.type = HRM_MSG_TASK_END,
                        .from = q->self,
                        .job = e->job,
                        .task = e->task,
                        .node = q->node,
                        .status = m->status,
                        .value = e->start_us};
    env->send(env, e->owner, &r);
    nqs_entry_free(q, i);
    pump(q, env);
    return 0;
}

int hrm_nqs_cancel(struct hrm_nqs *q, struct hrm_env *env, int32_t task)
{
    int32_t i = task >= 0 ? nqs_find_queued(q, task) : -1;
    if (i < 0)
        return 0;
    struct nqs_entry *e = &q->e[i];
    nqs_queue_remove(q, i);
    /* A migration in progress is withdrawn as when the task starts at home, the target of an
     * offer told at once (an ACCEPT or PULL still coming finds the task gone and answers
     * MIGRATE_CANCEL, which frees the target's slot). */
    nqs_withdraw_migration(q, env, e, true);
    nqs_entry_free(q, i);
    pump(q, env);
    nqs_balance(q, env);
    return 1;
}

bool hrm_nqs_idle(const struct hrm_nqs *q)
{
    if (q->run_head >= 0 || q->nholds > 0 || q->nparks > 0)
        return false;
    for (int32_t k = 0; k < q->nq; k++)
        if (q->queues[k].nqueued > 0)
            return false;
    return true;
}

int hrm_nqs_on_timer(struct hrm_nqs *q, struct hrm_env *env, uint64_t cookie)
{
    if (cookie == NQS_COOKIE_RETRY) {
        if (now_of(env) < q->retry_timer_at)
            return 0; /* superseded by an earlier retry timer */
        q->retry_timer_at = INT64_MAX;
        nqs_balance(q, env); /* sends the requests due again, and re-arms */
        return 0;
    }
    if (cookie != NQS_COOKIE_EXPIRY)
        return -EINVAL;
    if (now_of(env) < q->timer_at)
        return 0; /* superseded by an earlier timer that already re-armed */
    nqs_expire_holds(q, env);
    pump(q, env);
    nqs_balance(q, env);
    return 0;
}

int hrm_nqs_on_msg(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m)
{
    int rc = 0;
    switch (m->type) {
    case HRM_MSG_HOLD:
        rc = on_hold(q, env, m);
        break;
    case HRM_MSG_RUN:
        rc = on_run(q, env, m);
        break;
    case HRM_MSG_DEL: {
        struct nqs_hold *h = nqs_hold_find(q, m->from, m->attempt, H_PROBE);
        if (h)
            nqs_hold_release(q, h);
        pump(q, env);
        break;
    }
    case HRM_MSG_RESERVE:
        rc = on_reserve(q, env, m);
        break;
    case HRM_MSG_NO_TASK: {
        if (m->attempt < 0) {
            cancel_reservations(q, m->from, m->job);
            break;
        }
        struct nqs_hold *h = nqs_hold_find(q, m->from, m->attempt, H_BIND);
        if (h)
            nqs_hold_release(q, h);
        q->stats.bind_empty++;
        pump(q, env);
        break;
    }
    case HRM_MSG_TASK_END:
        rc = on_exec_end(q, env, m);
        break;
    default:
        rc = nqs_on_migrate_msg(q, env, m);
        if (rc == 0)
            pump(q, env);
        break;
    }
    if (rc == 0)
        nqs_balance(q, env);
    return rc;
}

/* RUN of a queued entry to another node (migration), which forgets it here. */
void nqs_send_run(struct hrm_nqs *q, struct hrm_env *env, const struct nqs_entry *e, hrm_addr to,
                  int32_t to_queue)
{
    struct hrm_msg r = {.type = HRM_MSG_RUN,
                        .from = q->self,
                        .job = e->job,
                        .task = e->task,
                        .node = to_queue,
                        .attempt = e->task,
                        .status = HRM_RUN_MIGRATED | HRM_RUN_LAST,
                        .value = e->owner};
    env->send(env, to, &r);
}
