/* P2 execution model: phase demands share node cpu (fluid); memory overcommit fails. */
#include <math.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/rng.h"
#include "compress.h"

#define NIL (-1)

/* A pooled task while it computes. */
struct ctask {
    int32_t node; /* NIL when not computing in the pool */
    int32_t attempt;
    int32_t phase;
    int32_t prev, next; /* the node's pooled tasks */
    double left;        /* work (us at rate 1) left in the current phase */
    double fail_left;   /* work left until an injected failure, INFINITY if none */
    double rate;        /* work per wall us */
    double cpu, mem;    /* current phase demand */
    double got_cpu;     /* cpu it receives: cpu * share */
    /* usage since its last sample */
    double cpu_area, mem_area, comp_us;
    int64_t sample_from;
};

struct cnode {
    int32_t head, ntasks;
    int64_t last;            /* progress and usage are integrated up to here */
    double res_cpu, res_mem; /* held by tasks outside the pool */
    double share;            /* 1 - r_c: the part of its demand every process gets */
    bool compressed;
    double busy; /* sum of got_cpu, as last told to the hooks */
    /* foreign load */
    bool bg_has, bg_on;
    double bg_cpu, bg_mem;
    int64_t bg_next;
    struct hrm_rng rng;
    /* node usage since the last tick */
    double cpu_area, mem_area, comp_us;
    int64_t sample_from;
    /* next phase end or failure of a task here, or background change */
    int64_t next;
    int32_t heap_pos;
};

struct cmp_model {
    const struct hrm_cluster *c;
    const struct hrm_workload *wl;
    struct hrm_execution x;
    struct cmp_hooks hooks;
    struct ctask *tasks;
    struct cnode *nodes;
    int32_t *heap; /* node ids by next, an indexed binary heap */
    int32_t nrunning;
    bool any_bg;
    int64_t next_tick;
};

static const struct hrm_execution defaults = {.contention = 0.05, .usage_interval_us = 1000000};

/* ---- node heap ---- */

static bool earlier(const struct cmp_model *m, int32_t a, int32_t b)
{
    int64_t x = m->nodes[a].next, y = m->nodes[b].next;
    return x < y || (x == y && a < b);
}

static void heap_set(struct cmp_model *m, int32_t i, int32_t n)
{
    m->heap[i] = n;
    m->nodes[n].heap_pos = i;
}

static void heap_fix(struct cmp_model *m, int32_t n)
{
    int32_t i = m->nodes[n].heap_pos, count = m->c->nnodes;
    while (i > 0 && earlier(m, n, m->heap[(i - 1) / 2])) {
        heap_set(m, i, m->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= count)
            break;
        if (c + 1 < count && earlier(m, m->heap[c + 1], m->heap[c]))
            c++;
        if (!earlier(m, m->heap[c], n))
            break;
        heap_set(m, i, m->heap[c]);
        i = c;
    }
    heap_set(m, i, n);
}

/* ---- phases ---- */

static int32_t nphases(const struct cmp_model *m, int32_t task)
{
    int32_t n = m->wl->tasks[task].nphases;
    return n > 0 ? n : 1;
}

/* Phase k of a task; a task without a profile is one phase at its request. */
static void phase_of(const struct cmp_model *m, int32_t task, int32_t k, double *work, double *cpu,
                     double *mem)
{
    const struct hrm_task *t = &m->wl->tasks[task];
    if (t->nphases == 0) {
        *work = (double)t->duration_us;
        *cpu = (double)t->req.v[HRM_DIM_CPU];
        *mem = (double)t->req.v[HRM_DIM_MEM];
        return;
    }
    const struct hrm_phase *p = &m->wl->phases[t->phase_first + k];
    *work = (double)p->duration_us;
    *cpu = (double)p->demand.v[HRM_DIM_CPU];
    *mem = (double)p->demand.v[HRM_DIM_MEM];
}

/* ---- background ---- */

static double uniform(struct hrm_rng *r, double lo, double hi)
{
    return hi > lo ? lo + (hi - lo) * hrm_rng_double(r) : lo;
}

static int64_t period(struct hrm_rng *r, int64_t mean)
{
    int64_t d = (int64_t)ceil(hrm_rng_exp(r, (double)(mean > 0 ? mean : 1)));
    return d > 0 ? d : 1;
}

static void bg_toggle(struct cmp_model *m, struct cnode *n, int64_t now)
{
    const struct hrm_background *b = &m->x.background;
    n->bg_on = !n->bg_on;
    if (n->bg_on) {
        n->bg_cpu = uniform(&n->rng, (double)b->cpu_min, (double)b->cpu_max);
        n->bg_mem = uniform(&n->rng, (double)b->mem_min, (double)b->mem_max);
        n->bg_next = now + period(&n->rng, b->busy_us);
    } else {
        n->bg_cpu = n->bg_mem = 0;
        n->bg_next = now + period(&n->rng, b->idle_us);
    }
}

/* ---- life cycle ---- */

struct cmp_model *cmp_new(const struct hrm_cluster *c, const struct hrm_workload *wl,
                          const struct hrm_execution *x, uint64_t seed,
                          const struct cmp_hooks *hooks)
{
    if (!x)
        x = &defaults;
    /* Phases exist only for tasks with a profile. */
    if (!x->fluid && x->background.nodes <= 0 && wl->nphases == 0)
        return NULL;
    struct cmp_model *m = hrm_calloc(1, sizeof(*m));
    m->c = c;
    m->wl = wl;
    m->x = *x;
    m->hooks = *hooks;
    m->tasks = hrm_calloc((size_t)(wl->ntasks ? wl->ntasks : 1), sizeof(*m->tasks));
    for (int32_t t = 0; t < wl->ntasks; t++)
        m->tasks[t].node = NIL;
    m->nodes = hrm_calloc((size_t)(c->nnodes ? c->nnodes : 1), sizeof(*m->nodes));
    m->heap = hrm_calloc((size_t)(c->nnodes ? c->nnodes : 1), sizeof(*m->heap));
    struct hrm_rng root;
    hrm_rng_seed(&root, seed ^ 0xc0c0a5a5c0c0a5a5ull);
    /* Which nodes carry foreign load: a fixed count chosen by a seeded
     * shuffle, so every policy of a run meets the same cloud. */
    int32_t nbg = (int32_t)llround(x->background.nodes * c->nnodes);
    int32_t *order = hrm_alloc((size_t)(c->nnodes ? c->nnodes : 1) * sizeof(*order));
    for (int32_t i = 0; i < c->nnodes; i++)
        order[i] = i;
    for (int32_t i = c->nnodes - 1; i > 0; i--) {
        int32_t j = (int32_t)hrm_rng_below(&root, (uint64_t)i + 1);
        int32_t tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    for (int32_t i = 0; i < c->nnodes; i++) {
        struct cnode *n = &m->nodes[i];
        n->head = NIL;
        n->share = 1;
        n->next = INT64_MAX;
        /* Each node its own stream: its load does not depend on the order
         * in which other nodes' events happen. */
        hrm_rng_fork(&root, &n->rng);
        heap_set(m, i, i);
    }
    for (int32_t k = 0; k < nbg; k++) {
        struct cnode *n = &m->nodes[order[k]];
        const struct hrm_background *b = &x->background;
        n->bg_has = true;
        m->any_bg = true;
        /* Start in the stationary mix of busy and idle. */
        double busy = (double)b->busy_us / (double)(b->busy_us + b->idle_us);
        n->bg_on = hrm_rng_double(&n->rng) >= busy; /* toggled just below */
        bg_toggle(m, n, 0);
        n->next = n->bg_next;
        heap_fix(m, order[k]);
    }
    hrm_free(order);
    m->next_tick = x->usage_interval_us > 0 ? x->usage_interval_us : INT64_MAX;
    return m;
}

void cmp_free(struct cmp_model *m)
{
    if (!m)
        return;
    hrm_free(m->tasks);
    hrm_free(m->nodes);
    hrm_free(m->heap);
    hrm_free(m);
}

bool cmp_pooled(const struct cmp_model *m, int32_t task)
{
    return m->x.fluid || m->wl->tasks[task].nphases > 0;
}

bool cmp_active(const struct cmp_model *m)
{
    return m->nrunning > 0;
}

bool cmp_has_background(const struct cmp_model *m)
{
    return m->any_bg;
}

double cmp_rate(const struct cmp_model *m, int32_t task)
{
    return m->tasks[task].node == NIL ? 0 : m->tasks[task].rate;
}

/* ---- the fluid model ---- */

/* Integrates progress and usage of node n up to now. */
static void advance(struct cmp_model *m, int32_t node, int64_t now)
{
    struct cnode *n = &m->nodes[node];
    double dt = (double)(now - n->last);
    if (dt > 0) {
        for (int32_t t = n->head; t != NIL; t = m->tasks[t].next) {
            struct ctask *ct = &m->tasks[t];
            double work = ct->rate * dt;
            ct->left -= work;
            ct->fail_left -= work;
            ct->cpu_area += ct->got_cpu * dt;
            ct->mem_area += ct->mem * dt;
            if (n->compressed)
                ct->comp_us += dt;
        }
        /* The node's own report is its foreign load: what is not an hrm
         * task (an agent reads it as /proc totals less its tasks' cgroups). */
        n->cpu_area += n->bg_cpu * n->share * dt;
        n->mem_area += n->bg_mem * dt;
        if (n->compressed)
            n->comp_us += dt;
    }
    n->last = now;
}

static void unlink_task(struct cmp_model *m, int32_t task)
{
    struct ctask *ct = &m->tasks[task];
    struct cnode *n = &m->nodes[ct->node];
    if (ct->prev != NIL)
        m->tasks[ct->prev].next = ct->next;
    else
        n->head = ct->next;
    if (ct->next != NIL)
        m->tasks[ct->next].prev = ct->prev;
    n->ntasks--;
    m->nrunning--;
    ct->node = NIL;
}

static void send_usage(struct cmp_model *m, int32_t node, int32_t task, int64_t now)
{
    struct ctask *ct = &m->tasks[task];
    double dt = (double)(now - ct->sample_from);
    if (dt <= 0)
        return;
    struct hrm_usage u = {.interval_us = now - ct->sample_from,
                          .cpu = llround(ct->cpu_area / dt),
                          .mem = llround(ct->mem_area / dt),
                          /* "was compressing": for a meaningful part of the sample */
                          .compressed = ct->comp_us > 0.1 * dt};
    ct->cpu_area = ct->mem_area = ct->comp_us = 0;
    ct->sample_from = now;
    m->hooks.usage(m->hooks.arg, node, task, ct->attempt, &u);
}

/* Ends a pooled task's run (done or failed): last sample, leave, tell the simulator. */
static void finish(struct cmp_model *m, int32_t task, int64_t now, int fail)
{
    struct ctask *ct = &m->tasks[task];
    int32_t node = ct->node, attempt = ct->attempt;
    if (m->x.usage_interval_us > 0)
        send_usage(m, node, task, now);
    unlink_task(m, task);
    m->hooks.end(m->hooks.arg, task, attempt, fail);
}

/* Time until a task's next phase end or failure, rounded up to whole us. */
static int64_t time_to_event(const struct ctask *ct)
{
    double work = fmin(ct->left, ct->fail_left);
    if (work <= 0)
        return 0;
    if (ct->rate <= 0)
        return INT64_MAX / 4;
    return (int64_t)ceil(work / ct->rate);
}

/*
 * Re-evaluates node n at now (its progress already advanced): memory first
 * (failing the culprit, else the largest task, until demands fit), then the
 * cpu share of every process and each pooled task's rate, then the node's
 * next event.
 */
static void recompute(struct cmp_model *m, int32_t node, int64_t now, int32_t culprit)
{
    struct cnode *n = &m->nodes[node];
    const struct hrm_node *hn = &m->c->nodes[node];
    double cap_mem = (double)hn->capacity.v[HRM_DIM_MEM];
    for (;;) {
        double mem = n->res_mem + n->bg_mem;
        int32_t largest = NIL;
        for (int32_t t = n->head; t != NIL; t = m->tasks[t].next) {
            mem += m->tasks[t].mem;
            if (largest == NIL || m->tasks[t].mem > m->tasks[largest].mem)
                largest = t;
        }
        if (mem <= cap_mem || largest == NIL)
            break;
        int32_t victim = culprit != NIL && m->tasks[culprit].node == node ? culprit : largest;
        culprit = NIL;
        finish(m, victim, now, 1);
    }
    double demand = n->bg_cpu;
    for (int32_t t = n->head; t != NIL; t = m->tasks[t].next)
        demand += m->tasks[t].cpu;
    double room = (double)hn->capacity.v[HRM_DIM_CPU] - n->res_cpu;
    if (room < 0)
        room = 0;
    n->compressed = demand > room;
    n->share = n->compressed ? room / demand : 1.0;
    /* T' = (1 + p) T / (1 - r_c) with 1 - r_c = share (formula (5)). */
    double factor = n->compressed ? n->share / (1 + m->x.contention) : 1.0;
    double speed = hn->cpu_speed > 0 ? hn->cpu_speed : 1.0;
    double busy = 0;
    int64_t next = n->bg_has ? n->bg_next : INT64_MAX;
    for (int32_t t = n->head; t != NIL; t = m->tasks[t].next) {
        struct ctask *ct = &m->tasks[t];
        /* A phase that demands no cpu (waiting, I/O) is not slowed by it. */
        ct->rate = speed * (ct->cpu > 0 ? factor : 1.0);
        ct->got_cpu = ct->cpu * n->share;
        busy += ct->got_cpu;
        int64_t dt = time_to_event(ct);
        if (dt < INT64_MAX / 4 && now + dt < next)
            next = now + dt;
    }
    if (busy != n->busy) {
        m->hooks.busy(m->hooks.arg, busy - n->busy);
        n->busy = busy;
    }
    n->next = next;
    heap_fix(m, node);
}

void cmp_start(struct cmp_model *m, int64_t now, int32_t task, int32_t attempt, int32_t node,
               double fail_at)
{
    advance(m, node, now);
    struct ctask *ct = &m->tasks[task];
    struct cnode *n = &m->nodes[node];
    double total = 0, w, cpu, mem;
    for (int32_t k = 0; k < nphases(m, task); k++) {
        phase_of(m, task, k, &w, &cpu, &mem);
        total += w;
    }
    phase_of(m, task, 0, &w, &cpu, &mem);
    *ct = (struct ctask){.node = node,
                         .attempt = attempt,
                         .prev = NIL,
                         .next = n->head,
                         .left = w,
                         .fail_left = fail_at > 0 ? fail_at * total : INFINITY,
                         .cpu = cpu,
                         .mem = mem,
                         .sample_from = now};
    if (n->head != NIL)
        m->tasks[n->head].prev = task;
    n->head = task;
    n->ntasks++;
    m->nrunning++;
    recompute(m, node, now, task);
}

void cmp_remove(struct cmp_model *m, int64_t now, int32_t task)
{
    int32_t node = m->tasks[task].node;
    if (node == NIL)
        return;
    advance(m, node, now);
    unlink_task(m, task);
    recompute(m, node, now, NIL);
}

void cmp_reading(struct cmp_model *m, int64_t now, int32_t task, int32_t node, int sign)
{
    double w, cpu, mem;
    phase_of(m, task, 0, &w, &cpu, &mem);
    struct hrm_res held = {{0}};
    held.v[HRM_DIM_MEM] = (int64_t)mem;
    cmp_reserve(m, now, node, &held, sign);
}

void cmp_reserve(struct cmp_model *m, int64_t now, int32_t node, const struct hrm_res *req,
                 int sign)
{
    advance(m, node, now);
    struct cnode *n = &m->nodes[node];
    n->res_cpu += sign * (double)req->v[HRM_DIM_CPU];
    n->res_mem += sign * (double)req->v[HRM_DIM_MEM];
    recompute(m, node, now, NIL);
}

/* Phase ends, failures and background changes of node due at now. */
static void node_events(struct cmp_model *m, int32_t node, int64_t now)
{
    struct cnode *n = &m->nodes[node];
    advance(m, node, now);
    if (n->bg_has && n->bg_next <= now)
        bg_toggle(m, n, now);
    int32_t culprit = NIL;
    double grew = 0;
    for (int32_t t = n->head; t != NIL;) {
        struct ctask *ct = &m->tasks[t];
        int32_t next = ct->next; /* finish() unlinks t */
        /* Done means less than a microsecond of work left: event times are
         * rounded up to whole microseconds. */
        double eps = ct->rate * 1e-6 + 1e-9;
        if (ct->fail_left <= eps) {
            finish(m, t, now, 1);
        } else if (ct->left <= eps) {
            double w, cpu, mem;
            if (++ct->phase >= nphases(m, t)) {
                finish(m, t, now, 0);
            } else {
                phase_of(m, t, ct->phase, &w, &cpu, &mem);
                if (mem - ct->mem > grew) {
                    grew = mem - ct->mem;
                    culprit = t;
                }
                ct->left += w; /* carry the sub-microsecond overshoot */
                ct->cpu = cpu;
                ct->mem = mem;
            }
        }
        t = next;
    }
    recompute(m, node, now, culprit);
}

int64_t cmp_next(const struct cmp_model *m)
{
    int64_t t = m->c->nnodes > 0 ? m->nodes[m->heap[0]].next : INT64_MAX;
    if (m->next_tick < t)
        t = m->next_tick; /* the simulator decides whether ticks still matter */
    return t;
}

static void tick(struct cmp_model *m, int64_t now)
{
    for (int32_t i = 0; i < m->c->nnodes; i++) {
        struct cnode *n = &m->nodes[i];
        /* Every node reports, idle or not: a scheduler reads silence as a lost agent. */
        advance(m, i, now);
        double dt = (double)(now - n->sample_from);
        if (dt > 0) {
            struct hrm_usage u = {.interval_us = now - n->sample_from,
                                  .cpu = llround(n->cpu_area / dt),
                                  .mem = llround(n->mem_area / dt),
                                  .compressed = n->comp_us > 0.1 * dt};
            n->cpu_area = n->mem_area = n->comp_us = 0;
            n->sample_from = now;
            m->hooks.usage(m->hooks.arg, i, -1, -1, &u);
        }
        for (int32_t t = n->head; t != NIL; t = m->tasks[t].next)
            send_usage(m, i, t, now);
    }
}

void cmp_run(struct cmp_model *m, int64_t now)
{
    while (m->c->nnodes > 0 && m->nodes[m->heap[0]].next <= now)
        node_events(m, m->heap[0], now);
    if (m->next_tick <= now) {
        tick(m, now);
        int64_t iv = m->x.usage_interval_us;
        m->next_tick = (now / iv + 1) * iv;
    }
}
