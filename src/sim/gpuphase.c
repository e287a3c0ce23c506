/* P0 GPU phase model: alternating CPU/GPU phases, processor sharing of a GPU's kernels. */
#include <math.h>
#include <string.h>

#include "hrm/alloc.h"
#include "gpuphase.h"

#define NIL (-1)
/* Work below this (microseconds) is done: event times are rounded up to the
 * microsecond, so a phase that ends at t leaves at most float noise. */
#define EPS_US 1e-6

struct gp_task {
    int32_t attempt;
    int32_t unit;   /* the GPU: cluster unit index (node's unit_first + gpu) */
    int32_t rounds; /* rounds left, the current one included */
    uint8_t on_gpu; /* in its GPU phase */
    uint8_t active;
    uint8_t fail;
    double rem;    /* work left in the current phase, microseconds */
    double cpu_us; /* CPU phase at the node's speed */
    int32_t prev, next;
};

/* One GPU.  Only its own tasks' phase changes alter its tasks' rates, so
 * each GPU advances lazily on its own clock and an event costs O(tasks on
 * that GPU + log GPUs), however many GPUs run. */
struct gp_unit {
    int32_t head;    /* its active tasks */
    int32_t kernels; /* tasks in their GPU phase */
    int32_t pos;     /* index in the heap, or NIL */
    int64_t at;      /* its tasks' work is accounted up to here */
    int64_t next;    /* its earliest phase end */
};

struct gp_model {
    const struct hrm_cluster *c;
    const struct hrm_workload *wl;
    struct gp_hooks hooks;
    struct gp_task *t; /* per workload task */
    struct gp_unit *u; /* per cluster unit */
    int32_t *heap;     /* GPUs with active tasks, by (next, unit) */
    int32_t nheap;
};

struct gp_model *gp_new(const struct hrm_cluster *c, const struct hrm_workload *wl,
                        const struct gp_hooks *hooks)
{
    bool any = false;
    for (int32_t i = 0; i < wl->ngpu_phases && !any; i++)
        any = wl->gpu_phases[i].count > 0;
    if (!any)
        return NULL;
    struct gp_model *m = hrm_calloc(1, sizeof(*m));
    size_t nunits = (size_t)(c->nunits ? c->nunits : 1);
    m->c = c;
    m->wl = wl;
    m->hooks = *hooks;
    m->t = hrm_calloc((size_t)wl->ngpu_phases, sizeof(*m->t));
    m->u = hrm_calloc(nunits, sizeof(*m->u));
    m->heap = hrm_alloc(nunits * sizeof(*m->heap));
    for (size_t i = 0; i < nunits; i++)
        m->u[i].head = m->u[i].pos = NIL;
    return m;
}

void gp_free(struct gp_model *m)
{
    if (!m)
        return;
    hrm_free(m->t);
    hrm_free(m->u);
    hrm_free(m->heap);
    hrm_free(m);
}

/* ---- the heap of GPUs (ties by unit index: deterministic) ---- */

static bool before(const struct gp_model *m, int32_t a, int32_t b)
{
    return m->u[a].next < m->u[b].next || (m->u[a].next == m->u[b].next && a < b);
}

static void heap_set(struct gp_model *m, int32_t i, int32_t unit)
{
    m->heap[i] = unit;
    m->u[unit].pos = i;
}

static void heap_sift(struct gp_model *m, int32_t i)
{
    int32_t unit = m->heap[i];
    while (i > 0 && before(m, unit, m->heap[(i - 1) / 2])) {
        heap_set(m, i, m->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= m->nheap)
            break;
        if (c + 1 < m->nheap && before(m, m->heap[c + 1], m->heap[c]))
            c++;
        if (!before(m, m->heap[c], unit))
            break;
        heap_set(m, i, m->heap[c]);
        i = c;
    }
    heap_set(m, i, unit);
}

/* Puts unit in the heap at its next time, or takes it out when idle. */
static void heap_update(struct gp_model *m, int32_t unit)
{
    struct gp_unit *u = &m->u[unit];
    if (u->head != NIL) {
        if (u->pos == NIL) {
            u->pos = m->nheap++;
            m->heap[u->pos] = unit;
        }
        heap_sift(m, u->pos);
        return;
    }
    if (u->pos == NIL)
        return;
    int32_t i = u->pos;
    u->pos = NIL;
    if (--m->nheap > i) {
        heap_set(m, i, m->heap[m->nheap]);
        heap_sift(m, i);
    }
}

/* ---- one GPU ---- */

/* The unit's tasks progress from its clock to now at their current rates. */
static void advance(struct gp_model *m, int32_t unit, int64_t now)
{
    struct gp_unit *u = &m->u[unit];
    double dt = (double)(now - u->at);
    u->at = now;
    if (dt <= 0)
        return;
    for (int32_t i = u->head; i != NIL; i = m->t[i].next) {
        struct gp_task *g = &m->t[i];
        g->rem -= g->on_gpu ? dt / u->kernels : dt;
    }
}

static void kernel_count(struct gp_model *m, int32_t unit, int delta)
{
    int32_t before_k = m->u[unit].kernels;
    m->u[unit].kernels += delta;
    if ((before_k == 0) != (m->u[unit].kernels == 0))
        m->hooks.busy(m->hooks.arg, delta);
}

/* The unit's earliest phase end, from its clock. */
static void unit_next(struct gp_model *m, int32_t unit)
{
    struct gp_unit *u = &m->u[unit];
    double best = INFINITY;
    for (int32_t i = u->head; i != NIL; i = m->t[i].next) {
        const struct gp_task *g = &m->t[i];
        double left = g->rem > 0 ? g->rem : 0;
        double t = left * (g->on_gpu ? u->kernels : 1);
        if (t < best)
            best = t;
    }
    if (best == INFINITY) {
        u->next = INT64_MAX;
        return;
    }
    int64_t d = (int64_t)ceil(best - EPS_US);
    /* Work left above EPS_US must move the clock, or float noise would
     * schedule the same instant forever. */
    if (d < 1 && best > EPS_US)
        d = 1;
    u->next = u->at + d;
}

static void unlink_task(struct gp_model *m, int32_t task)
{
    struct gp_task *g = &m->t[task];
    struct gp_unit *u = &m->u[g->unit];
    if (g->prev != NIL)
        m->t[g->prev].next = g->next;
    else
        u->head = g->next;
    if (g->next != NIL)
        m->t[g->next].prev = g->prev;
    g->prev = g->next = NIL;
    if (g->on_gpu)
        kernel_count(m, g->unit, -1);
    g->active = 0;
    g->on_gpu = 0;
}

/* Ends every phase of the unit's tasks due now and starts the next ones.
 * Changes at one instant all take effect at once, so the order of the
 * tasks changes no rate that matters before the next event. */
static void unit_step(struct gp_model *m, int32_t unit, int64_t now)
{
    advance(m, unit, now);
    for (int32_t i = m->u[unit].head, next; i != NIL; i = next) {
        struct gp_task *g = &m->t[i];
        next = g->next;
        while (g->active && g->rem <= EPS_US) {
            const struct hrm_gpu_phases *ph = &m->wl->gpu_phases[i];
            if (!g->on_gpu) {
                g->on_gpu = 1;
                g->rem = (double)ph->gpu_us;
                kernel_count(m, unit, +1);
                continue;
            }
            kernel_count(m, unit, -1);
            g->on_gpu = 0;
            if (--g->rounds > 0) {
                g->rem = g->cpu_us;
                continue;
            }
            int fail = g->fail;
            unlink_task(m, i);
            m->hooks.end(m->hooks.arg, i, g->attempt, fail);
        }
    }
    unit_next(m, unit);
    heap_update(m, unit);
}

/* ---- the interface ---- */

void gp_start(struct gp_model *m, int64_t now, int32_t task, int32_t attempt, int32_t node,
              int32_t gpu, double speed, double fail_at)
{
    const struct hrm_gpu_phases *ph = &m->wl->gpu_phases[task];
    struct gp_task *g = &m->t[task];
    int32_t unit = m->c->nodes[node].unit_first + gpu;
    advance(m, unit, now);
    g->attempt = attempt;
    g->unit = unit;
    g->rounds = ph->count;
    g->fail = 0;
    if (fail_at > 0) {
        int32_t r = (int32_t)ceil(fail_at * ph->count - 1e-9); /* 0.3 x 10 is 3, not 4 */
        g->rounds = r < 1 ? 1 : r > ph->count ? ph->count : r;
        g->fail = 1;
    }
    g->cpu_us = (double)ph->cpu_us / (speed > 0 ? speed : 1.0);
    g->on_gpu = 0;
    g->rem = g->cpu_us; /* a zero-length CPU phase ends at once: next is now */
    g->active = 1;
    g->prev = NIL;
    g->next = m->u[unit].head;
    if (g->next != NIL)
        m->t[g->next].prev = task;
    m->u[unit].head = task;
    unit_next(m, unit);
    heap_update(m, unit);
}

void gp_remove(struct gp_model *m, int64_t now, int32_t task)
{
    if (task >= m->wl->ngpu_phases || !m->t[task].active)
        return;
    int32_t unit = m->t[task].unit;
    advance(m, unit, now);
    unlink_task(m, task);
    unit_next(m, unit);
    heap_update(m, unit);
}

int64_t gp_next(const struct gp_model *m)
{
    return m->nheap > 0 ? m->u[m->heap[0]].next : INT64_MAX;
}

void gp_run(struct gp_model *m, int64_t now)
{
    while (m->nheap > 0 && m->u[m->heap[0]].next <= now)
        unit_step(m, m->heap[0], now);
}
