/* The changes a scheduler makes to a flow instance between solves (hrm bench flow-incr, tests). */
#include "hrm/alloc.h"
#include "hrm/flowgen.h"

static const char *const change_names[HRM_FLOWGEN_NCHANGES] = {
    "task-end", "job-arrive", "node-dies", "arc-cost", "batch",
};

const char *hrm_flowgen_change_name(enum hrm_flowgen_change kind)
{
    return kind >= 0 && kind < HRM_FLOWGEN_NCHANGES ? change_names[kind] : "?";
}

static int32_t pick(struct hrm_flowgen_changer *x, int32_t n)
{
    return (int32_t)hrm_rng_below(&x->rng, (uint64_t)n);
}

/* A random item i in [0, n) with ok(x, i), or -1 after 1000 tries. */
static int32_t pick_where(struct hrm_flowgen_changer *x, int32_t n,
                          int (*ok)(struct hrm_flowgen_changer *, int32_t))
{
    for (int tries = 0; tries < 1000 && n > 0; tries++) {
        int32_t i = pick(x, n);
        if (ok(x, i))
            return i;
    }
    return -1;
}

static int busy_task(struct hrm_flowgen_changer *x, int32_t t)
{
    return hrm_flow_arc_flow(x->s->g, x->s->task_arc[t]) > 0;
}

static int busy_machine(struct hrm_flowgen_changer *x, int32_t m)
{
    return hrm_flow_arc_flow(x->s->g, x->s->mach_arc[m]) > 0;
}

/* An arc the change may remove: it carries flow and is not a skeleton arc. */
static int removable_arc(struct hrm_flowgen_changer *x, int32_t a)
{
    return hrm_flow_arc_flow(x->s->g, a) > 0 && hrm_flow_arc_capacity(x->s->g, a) < x->skeleton_cap;
}

static int sink_vertex(struct hrm_flowgen_changer *x, int32_t v)
{
    return hrm_flow_supply(x->s->g, v) < 0;
}

static int scheduling(const struct hrm_flowgen_changer *x)
{
    return x->s->S >= 0;
}

static void task_end(struct hrm_flowgen_changer *x)
{
    struct hrm_flow *g = x->s->g;
    if (!scheduling(x)) {
        int32_t a = pick_where(x, hrm_flow_arcs(g), removable_arc);
        if (a >= 0)
            hrm_flow_set_arc(g, a, 0, hrm_flow_arc_cost(g, a));
        return;
    }
    int32_t t = pick_where(x, x->s->ntasks, busy_task);
    if (t < 0)
        return;
    int32_t ta = x->s->task_arc[t], ja = x->s->job_arc[x->s->task_job[t]];
    hrm_flow_set_arc(g, ta, 0, hrm_flow_arc_cost(g, ta));
    hrm_flow_set_arc(g, ja, hrm_flow_arc_capacity(g, ja) - 1, hrm_flow_arc_cost(g, ja));
}

/* A job of K tasks, each reading what a random existing task reads (the same
 * placement targets and costs), with an unscheduled vertex for all K at 4 x
 * its dearest placement, as the generator prices it. */
static void job_arrive_sched(struct hrm_flowgen_changer *x)
{
    struct hrm_flow *g = x->s->g;
    const struct hrm_flowgen_sched *s = x->s;
    int64_t k = x->job_tasks, dearest = 1;
    int32_t jv = hrm_flow_add_vertex(g, 0);
    hrm_flow_add_arc(g, s->S, jv, k, 1);
    for (int64_t i = 0; i < k; i++) {
        int32_t like = pick(x, s->ntasks);
        int32_t tv = hrm_flow_add_vertex(g, 0);
        hrm_flow_add_arc(g, jv, tv, 1, 1);
        for (int32_t p = s->task_place[like]; p < s->task_place[like + 1]; p++) {
            int32_t a = s->place_arcs[p];
            int64_t c = hrm_flow_arc_cost(g, a);
            hrm_flow_add_arc(g, tv, hrm_flow_arc_to(g, a), 1, c);
            dearest = c > dearest ? c : dearest;
        }
    }
    int32_t uv = hrm_flow_add_vertex(g, 0);
    hrm_flow_add_arc(g, jv, uv, k, 4 * dearest);
    hrm_flow_add_arc(g, uv, s->T, k, 0);
}

/* Fixed supplies: a new source of K units with 8 arcs to random vertices (the
 * first as wide as the skeleton, which every vertex is on, so the problem
 * stays feasible and no removal takes it), and a random sink's demand grows
 * by K. */
static void job_arrive_supply(struct hrm_flowgen_changer *x)
{
    struct hrm_flow *g = x->s->g;
    int32_t n = hrm_flow_vertices(g);
    int32_t sink = pick_where(x, n, sink_vertex);
    if (sink < 0)
        return;
    int64_t k = x->job_tasks, cmax = 1;
    for (int i = 0; i < 16; i++) {
        int64_t c = hrm_flow_arc_cost(g, pick(x, hrm_flow_arcs(g)));
        cmax = c > cmax ? c : cmax;
    }
    int32_t v = hrm_flow_add_vertex(g, k);
    for (int i = 0; i < 8; i++) {
        int64_t cap = i == 0 ? x->skeleton_cap : 1 + (int64_t)hrm_rng_below(&x->rng, (uint64_t)k);
        hrm_flow_add_arc(g, v, pick(x, n), cap, 1 + (int64_t)hrm_rng_below(&x->rng, (uint64_t)cmax));
    }
    hrm_flow_set_supply(g, sink, hrm_flow_supply(g, sink) - k);
}

static void node_dies(struct hrm_flowgen_changer *x)
{
    struct hrm_flow *g = x->s->g;
    if (scheduling(x)) {
        int32_t m = pick_where(x, x->s->nmach, busy_machine);
        if (m >= 0)
            hrm_flow_set_arc(g, x->s->mach_arc[m], 0, hrm_flow_arc_cost(g, x->s->mach_arc[m]));
        return;
    }
    /* a vertex without supply that carries flow: every non-skeleton arc at it goes */
    int32_t a0 = pick_where(x, hrm_flow_arcs(g), removable_arc);
    if (a0 < 0)
        return;
    int32_t v = hrm_flow_arc_to(g, a0);
    if (hrm_flow_supply(g, v) != 0)
        v = hrm_flow_arc_from(g, a0);
    for (int32_t a = 0; a < hrm_flow_arcs(g); a++)
        if ((hrm_flow_arc_from(g, a) == v || hrm_flow_arc_to(g, a) == v) &&
            hrm_flow_arc_capacity(g, a) < x->skeleton_cap)
            hrm_flow_set_arc(g, a, 0, hrm_flow_arc_cost(g, a));
}

static void arc_cost(struct hrm_flowgen_changer *x)
{
    struct hrm_flow *g = x->s->g;
    int32_t a = scheduling(x) ? x->s->place_arcs[pick(x, x->s->nplace)] : pick(x, hrm_flow_arcs(g));
    int64_t c = hrm_flow_arc_cost(g, a);
    int64_t nc = c / 2 + (int64_t)hrm_rng_below(&x->rng, (uint64_t)(c > 0 ? c : 1) + 1);
    hrm_flow_set_arc(g, a, hrm_flow_arc_capacity(g, a), nc);
}

void hrm_flowgen_change(struct hrm_flowgen_changer *x, enum hrm_flowgen_change kind)
{
    switch (kind) {
    case HRM_FLOWGEN_TASK_END:
        task_end(x);
        break;
    case HRM_FLOWGEN_JOB_ARRIVE:
        if (scheduling(x))
            job_arrive_sched(x);
        else
            job_arrive_supply(x);
        break;
    case HRM_FLOWGEN_NODE_DIES:
        node_dies(x);
        break;
    case HRM_FLOWGEN_ARC_COST:
        arc_cost(x);
        break;
    case HRM_FLOWGEN_BATCH:
        for (int i = 0; i < 10; i++)
            task_end(x);
        hrm_flowgen_change(x, HRM_FLOWGEN_JOB_ARRIVE);
        node_dies(x);
        for (int i = 0; i < 10; i++)
            arc_cost(x);
        break;
    default:
        break;
    }
}
