/* The P1 flow network: jobs, tasks, GPUs, unscheduled vertices, per-tier aggregators. */
#include <string.h>

#include "hrm/alloc.h"
#include "policy/flowpol_private.h"

/*
 * Shape (docs/policies.md, "The network"):
 *
 *   S -> job j            cap = ready one-GPU tasks of j          cost 0
 *   j -> task t           cap 1 while t is ready                   cost 0
 *   t -> GPU g            on a node holding some of t's data       cost c(t, node of g)
 *   t -> R_k(r)           r holds some of t's data                 cost c_rack(t, r)
 *   t -> X_k              always                                   cost c_remote(t)
 *   X_k -> R_k(r)         every rack                               cost 0
 *   R_k(r) -> g           GPUs of rack r whose memory is tier k    cost 0
 *   R_k(r) -> R_k+1(r)    larger memory tiers                      cost 0
 *   g -> E                cap 1 while g is free                    cost 0
 *   j -> u_j -> E         cap = what j may leave unscheduled       cost U_j (FS, FSP only)
 *
 * k is the task's memory tier: the smallest GPU memory size of the cluster
 * that holds the task, so R_k and X_k reach exactly the GPUs the task fits.
 * Costs satisfy c(t, node) <= c_rack(t, r) <= c_remote(t) (flow_common.c),
 * so a path through an aggregator never costs less than the direct placement
 * it stands for, and every direct placement has a path of its exact cost:
 * the optimum equals the full bipartite network's (test: flownet suite).
 *
 * The graph lives across passes: vertices for jobs and tasks are made when
 * they first appear and then only have capacities changed, so the solver
 * re-solves warm from the last flow.  It is rebuilt when a node goes up or
 * down (replica liveness changes costs) or when vertices of tasks no longer
 * ready outnumber the live ones.
 */

enum vkind { V_SOURCE, V_SINK, V_GPU, V_RACK, V_CLUSTER, V_JOB, V_UNSCHED, V_TASK };

struct pool {
    int32_t head, tail;
};

struct flownet {
    struct flownet_cfg cfg;
    struct hrm_flow *g;
    const struct hrm_cluster *c; /* what the graph was built for */
    const struct hrm_workload *wl;
    bool built;

    uint8_t *vkind;
    int32_t *vref;
    size_t cap_v;
    int32_t src, sink;

    /* GPUs, per cluster unit (-1 for CPU units) */
    int32_t *gpu_v, *gpu_arc, *gpu_tier, *rack_gpu_arc;
    int64_t *gpu_cap;
    /* memory tiers and aggregators */
    int32_t ntier, nracks;
    int64_t *tier_mem;
    int32_t *rack_v, *rack_next_arc, *clu_arc; /* [tier * nracks + rack] */
    int32_t *clu_v;                            /* [tier] */
    int32_t *tr_first, *tr_units;              /* GPU units per (tier, rack) */
    int64_t big;                               /* > any flow through an aggregator */

    /* jobs and tasks, per workload index (-1: no vertex) */
    int32_t *job_v, *job_arc, *unsch_arc, *unsch_out, *defer_arc;
    int64_t *job_cap, *unsch_cap, *unsch_cost, *defer_cap, *defer_cost;
    int32_t *job_epoch;
    int32_t *task_v, *task_arc, *task_first, *task_narcs, *task_epoch;
    uint8_t *task_cap;
    int32_t *tarcs;
    size_t ntarcs, cap_tarcs;
    int32_t ntask_v; /* task vertices made since the last build */
    int32_t *made;   /* tasks (t) and jobs (-j - 1) with a vertex in this graph */
    size_t nmade, cap_made;

    int32_t *live_tasks, *live_jobs, *next_tasks, *next_jobs;
    size_t nlive_tasks, nlive_jobs, cap_lt, cap_lj, cap_nt, cap_nj;
    int32_t epoch;
    uint8_t *up_seen;
    int32_t *node_mark, *rack_mark;
    int32_t mark;

    int32_t *pool_next;
    struct pool *rpool, *xpool;

    struct flownet_place *places;
    size_t nplaces, cap_places;
    int64_t cost;
    struct flownet_stats stats;
};

struct flownet *flownet_new(const struct flownet_cfg *cfg)
{
    struct flownet *net = hrm_calloc(1, sizeof(*net));
    net->cfg = *cfg;
    return net;
}

static void free_build(struct flownet *net)
{
    hrm_flow_free(net->g);
    net->g = NULL;
    hrm_free(net->vkind);
    hrm_free(net->vref);
    net->vkind = NULL;
    net->vref = NULL;
    net->cap_v = 0;
    net->built = false;
}

static void free_model(struct flownet *net)
{
    void *arrays[] = {
        net->gpu_v,      net->gpu_arc,    net->gpu_tier,      net->rack_gpu_arc, net->gpu_cap,
        net->tier_mem,   net->rack_v,     net->rack_next_arc, net->clu_arc,      net->clu_v,
        net->tr_first,   net->tr_units,   net->job_v,         net->job_arc,      net->unsch_arc,
        net->unsch_out,  net->job_cap,    net->unsch_cap,     net->unsch_cost,   net->job_epoch,
        net->defer_arc,  net->defer_cap,  net->defer_cost,    net->task_v,       net->task_arc,
        net->task_first, net->task_narcs, net->task_epoch,    net->task_cap,     net->up_seen,
        net->node_mark,  net->rack_mark,  net->pool_next,     net->rpool,        net->xpool};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        hrm_free(arrays[i]);
    net->gpu_v = net->gpu_arc = net->gpu_tier = net->rack_gpu_arc = NULL;
    net->gpu_cap = net->tier_mem = NULL;
    net->rack_v = net->rack_next_arc = net->clu_arc = net->clu_v = NULL;
    net->tr_first = net->tr_units = NULL;
    net->job_v = net->job_arc = net->unsch_arc = net->unsch_out = net->job_epoch = NULL;
    net->job_cap = net->unsch_cap = net->unsch_cost = NULL;
    net->defer_arc = NULL;
    net->defer_cap = net->defer_cost = NULL;
    net->task_v = net->task_arc = net->task_first = net->task_narcs = net->task_epoch = NULL;
    net->task_cap = net->up_seen = NULL;
    net->node_mark = net->rack_mark = net->pool_next = NULL;
    net->rpool = net->xpool = NULL;
    net->c = NULL;
    net->wl = NULL;
}

void flownet_free(struct flownet *net)
{
    if (!net)
        return;
    free_build(net);
    free_model(net);
    hrm_free(net->tarcs);
    hrm_free(net->made);
    hrm_free(net->live_tasks);
    hrm_free(net->live_jobs);
    hrm_free(net->next_tasks);
    hrm_free(net->next_jobs);
    hrm_free(net->places);
    hrm_free(net);
}

static int32_t *ints(size_t n, int32_t fill)
{
    int32_t *a = hrm_alloc((n ? n : 1) * sizeof(*a));
    for (size_t i = 0; i < n; i++)
        a[i] = fill;
    return a;
}

/* Per-cluster and per-workload arrays: made once per (cluster, workload). */
static void model_init(struct flownet *net, const struct hrm_state *s)
{
    free_model(net);
    const struct hrm_cluster *c = s->cluster;
    const struct hrm_workload *wl = s->wl;
    net->c = c;
    net->wl = wl;
    size_t nu = (size_t)c->nunits;
    net->gpu_v = ints(nu, -1);
    net->gpu_arc = ints(nu, -1);
    net->gpu_tier = ints(nu, -1);
    net->rack_gpu_arc = ints(nu, -1);
    net->gpu_cap = hrm_calloc(nu ? nu : 1, sizeof(int64_t));
    /* Memory tiers: the distinct GPU memory sizes, ascending. */
    net->tier_mem = hrm_alloc((nu ? nu : 1) * sizeof(int64_t));
    net->ntier = 0;
    int64_t ngpus = 0;
    for (size_t u = 0; u < nu; u++) {
        if (c->units[u].kind != HRM_UNIT_GPU)
            continue;
        ngpus++;
        int64_t m = c->units[u].gpu_mem;
        int32_t i = 0;
        while (i < net->ntier && net->tier_mem[i] < m)
            i++;
        if (i < net->ntier && net->tier_mem[i] == m)
            continue;
        memmove(&net->tier_mem[i + 1], &net->tier_mem[i],
                (size_t)(net->ntier - i) * sizeof(int64_t));
        net->tier_mem[i] = m;
        net->ntier++;
    }
    net->big = ngpus + 1;
    net->nracks = c->nracks;
    size_t ntr = (size_t)net->ntier * (size_t)c->nracks;
    net->rack_v = ints(ntr, -1);
    net->rack_next_arc = ints(ntr, -1);
    net->clu_arc = ints(ntr, -1);
    net->clu_v = ints((size_t)net->ntier, -1);
    /* GPU units grouped by (tier, rack): a counting sort. */
    net->tr_first = ints(ntr + 1, 0);
    net->tr_units = ints((size_t)ngpus, -1);
    for (size_t u = 0; u < nu; u++) {
        if (c->units[u].kind != HRM_UNIT_GPU)
            continue;
        int32_t k = 0;
        while (net->tier_mem[k] != c->units[u].gpu_mem)
            k++;
        net->gpu_tier[u] = k;
        net->tr_first[(size_t)k * c->nracks + c->nodes[c->units[u].node].rack + 1]++;
    }
    for (size_t i = 0; i < ntr; i++)
        net->tr_first[i + 1] += net->tr_first[i];
    int32_t *pos = ints(ntr + 1, 0);
    memcpy(pos, net->tr_first, (ntr + 1) * sizeof(*pos));
    for (size_t u = 0; u < nu; u++)
        if (net->gpu_tier[u] >= 0) {
            size_t i = (size_t)net->gpu_tier[u] * c->nracks + c->nodes[c->units[u].node].rack;
            net->tr_units[pos[i]++] = (int32_t)u;
        }
    hrm_free(pos);
    size_t nj = (size_t)wl->njobs, nt = (size_t)wl->ntasks;
    net->job_v = ints(nj, -1);
    net->job_arc = ints(nj, -1);
    net->unsch_arc = ints(nj, -1);
    net->unsch_out = ints(nj, -1);
    net->defer_arc = ints(nj, -1);
    net->defer_cap = hrm_calloc(nj ? nj : 1, sizeof(int64_t));
    net->defer_cost = hrm_calloc(nj ? nj : 1, sizeof(int64_t));
    net->job_epoch = ints(nj, 0);
    net->job_cap = hrm_calloc(nj ? nj : 1, sizeof(int64_t));
    net->unsch_cap = hrm_calloc(nj ? nj : 1, sizeof(int64_t));
    net->unsch_cost = hrm_calloc(nj ? nj : 1, sizeof(int64_t));
    net->task_v = ints(nt, -1);
    net->task_arc = ints(nt, -1);
    net->task_first = ints(nt, 0);
    net->task_narcs = ints(nt, 0);
    net->task_epoch = ints(nt, 0);
    net->task_cap = hrm_calloc(nt ? nt : 1, 1);
    net->pool_next = ints(nt, -1);
    net->up_seen = hrm_calloc((size_t)c->nnodes + 1, 1);
    net->node_mark = ints((size_t)c->nnodes, 0);
    net->rack_mark = ints((size_t)c->nracks, 0);
    net->nmade = 0; /* the new arrays hold no vertex ids yet */
    net->rpool = hrm_alloc((ntr ? ntr : 1) * sizeof(struct pool));
    net->xpool = hrm_alloc(((size_t)net->ntier + 1) * sizeof(struct pool));
    net->built = false;
}

static int32_t add_vertex(struct flownet *net, enum vkind kind, int32_t ref)
{
    int32_t v = hrm_flow_add_vertex(net->g, 0);
    HRM_GROW(net->vkind, net->cap_v, (size_t)v + 1);
    net->vref = hrm_reallocarray(net->vref, net->cap_v, sizeof(*net->vref));
    net->vkind[v] = (uint8_t)kind;
    net->vref[v] = ref;
    return v;
}

/* Arcs are made with valid vertices and costs within limits, so add_arc
 * cannot fail; a negative id would be a bug caught by the solver. */
static int32_t add_arc(struct flownet *net, int32_t from, int32_t to, int64_t cap, int64_t cost)
{
    return hrm_flow_add_arc(net->g, from, to, cap, cost);
}

static void set_arc(struct flownet *net, int32_t arc, int64_t cap, int64_t cost)
{
    hrm_flow_set_arc(net->g, arc, cap, cost);
}

/* The fixed part: source, sink, GPUs, aggregators.  Jobs and tasks come later. */
static void build(struct flownet *net, const struct hrm_state *s)
{
    free_build(net);
    const struct hrm_cluster *c = s->cluster;
    net->g = hrm_flow_new(64 + c->nunits * 2, 256 + c->nunits * 4);
    net->src = add_vertex(net, V_SOURCE, -1);
    net->sink = add_vertex(net, V_SINK, -1);
    for (int32_t u = 0; u < c->nunits; u++) {
        if (net->gpu_tier[u] < 0)
            continue;
        net->gpu_v[u] = add_vertex(net, V_GPU, u);
        net->gpu_arc[u] = add_arc(net, net->gpu_v[u], net->sink, 0, 0);
        net->gpu_cap[u] = 0;
    }
    if (net->cfg.aggregate) {
        int32_t nr = net->nracks;
        for (int32_t k = 0; k < net->ntier; k++) {
            net->clu_v[k] = add_vertex(net, V_CLUSTER, k);
            for (int32_t r = 0; r < nr; r++)
                net->rack_v[k * nr + r] = add_vertex(net, V_RACK, k * nr + r);
        }
        for (int32_t k = 0; k < net->ntier; k++) {
            for (int32_t r = 0; r < nr; r++) {
                int32_t i = k * nr + r;
                net->clu_arc[i] = add_arc(net, net->clu_v[k], net->rack_v[i], net->big, 0);
                net->rack_next_arc[i] =
                    k + 1 < net->ntier
                        ? add_arc(net, net->rack_v[i], net->rack_v[i + nr], net->big, 0)
                        : -1;
                for (int32_t p = net->tr_first[i]; p < net->tr_first[i + 1]; p++) {
                    int32_t u = net->tr_units[p];
                    net->rack_gpu_arc[u] = add_arc(net, net->rack_v[i], net->gpu_v[u], 1, 0);
                }
            }
        }
    }
    /* Forget the vertices of the old graph: only tasks and jobs that had one. */
    for (size_t i = 0; i < net->nmade; i++) {
        int32_t x = net->made[i];
        if (x >= 0)
            net->task_v[x] = -1;
        else
            net->job_v[-x - 1] = -1;
    }
    net->nmade = 0;
    net->nlive_tasks = net->nlive_jobs = 0;
    net->ntarcs = 0;
    net->ntask_v = 0;
    for (int32_t n = 0; n < c->nnodes; n++)
        net->up_seen[n] = s->nodes[n].up;
    net->built = true;
    net->stats.builds++;
}

static void ensure_job(struct flownet *net, int32_t j)
{
    if (net->job_v[j] >= 0)
        return;
    int32_t v = add_vertex(net, V_JOB, j);
    net->job_v[j] = v;
    HRM_GROW(net->made, net->cap_made, net->nmade + 1);
    net->made[net->nmade++] = -j - 1;
    net->job_arc[j] = add_arc(net, net->src, v, 0, 0);
    net->job_cap[j] = 0;
    net->unsch_cap[j] = 0;
    net->unsch_cost[j] = 0;
    if (net->cfg.unscheduled) {
        int32_t u = add_vertex(net, V_UNSCHED, j);
        net->unsch_arc[j] = add_arc(net, v, u, 0, 0);
        net->unsch_out[j] = add_arc(net, u, net->sink, 0, 0);
        net->defer_arc[j] = add_arc(net, v, u, 0, 0);
        net->defer_cap[j] = 0;
        net->defer_cost[j] = 0;
    }
}

static void task_out_arc(struct flownet *net, int32_t tv, int32_t to, int64_t cost)
{
    HRM_GROW(net->tarcs, net->cap_tarcs, net->ntarcs + 1);
    net->tarcs[net->ntarcs++] = add_arc(net, tv, to, 1, cost);
}

/* A task's vertex and its arcs to GPUs and aggregators (see the shape above). */
static void ensure_task(struct flownet *net, const struct hrm_state *s, const struct p1_cost *m,
                        int32_t t)
{
    if (net->task_v[t] >= 0)
        return;
    const struct hrm_cluster *c = s->cluster;
    const struct hrm_task *task = &s->wl->tasks[t];
    int32_t v = add_vertex(net, V_TASK, t);
    net->task_v[t] = v;
    HRM_GROW(net->made, net->cap_made, net->nmade + 1);
    net->made[net->nmade++] = t;
    net->task_arc[t] = add_arc(net, net->job_v[task->job], v, 0, 0);
    net->task_cap[t] = 0;
    net->task_first[t] = (int32_t)net->ntarcs;
    net->ntask_v++;
    int64_t need = p1_task_gpu_need(task);
    int32_t tier = 0;
    while (tier < net->ntier && net->tier_mem[tier] < need)
        tier++;
    if (tier == net->ntier) {
        net->task_narcs[t] = 0; /* fits no GPU of the cluster */
        return;
    }
    if (!net->cfg.aggregate) {
        for (int32_t n = 0; n < c->nnodes; n++) {
            if (!s->nodes[n].up)
                continue;
            int64_t cost = p1_cost_node(m, s, t, n);
            for (int32_t k = 0; k < c->nodes[n].gpus; k++) {
                int32_t u = c->nodes[n].unit_first + k;
                if (c->units[u].gpu_mem >= need)
                    task_out_arc(net, v, net->gpu_v[u], cost);
            }
        }
        net->task_narcs[t] = (int32_t)net->ntarcs - net->task_first[t];
        return;
    }
    /* Nodes and racks holding a live replica of one of its blocks. */
    int32_t mark = ++net->mark;
    int64_t remote = p1_cost_remote(m, s, t);
    for (int32_t b = 0; b < task->nblocks; b++) {
        const struct hrm_block *blk = &s->wl->blocks[task->block_first + b];
        for (int32_t r = 0; r < blk->nreplicas; r++) {
            int32_t n = blk->replicas[r];
            if (!s->nodes[n].up || net->node_mark[n] == mark)
                continue;
            net->node_mark[n] = mark;
            int64_t cost = p1_cost_node(m, s, t, n);
            for (int32_t k = 0; k < c->nodes[n].gpus; k++) {
                int32_t u = c->nodes[n].unit_first + k;
                if (c->units[u].gpu_mem >= need)
                    task_out_arc(net, v, net->gpu_v[u], cost);
            }
            int32_t rack = c->nodes[n].rack;
            if (net->rack_mark[rack] == mark)
                continue;
            net->rack_mark[rack] = mark;
            int64_t rc = p1_cost_rack(m, s, t, rack);
            if (rc < remote) /* else X reaches this rack as cheaply */
                task_out_arc(net, v, net->rack_v[tier * net->nracks + rack], rc);
        }
    }
    task_out_arc(net, v, net->clu_v[tier], remote);
    net->task_narcs[t] = (int32_t)net->ntarcs - net->task_first[t];
}

static void pool_push(struct flownet *net, struct pool *p, int32_t t)
{
    net->pool_next[t] = -1;
    if (p->tail >= 0)
        net->pool_next[p->tail] = t;
    else
        p->head = t;
    p->tail = t;
}

static int32_t pool_pop(struct flownet *net, struct pool *p)
{
    int32_t t = p->head;
    if (t >= 0) {
        p->head = net->pool_next[t];
        if (p->head < 0)
            p->tail = -1;
    }
    return t;
}

static void place(struct flownet *net, int32_t task, int32_t unit)
{
    const struct hrm_unit *u = &net->c->units[unit];
    HRM_GROW(net->places, net->cap_places, net->nplaces + 1);
    net->places[net->nplaces++] =
        (struct flownet_place){.task = task, .node = u->node, .gpu = u->gpu_index};
}

/* Reads placements off the flow.  Flow through an aggregator is matched to the
 * GPUs it leaves for in FIFO order: every task entering R_k(r) or X_k fits
 * every GPU reachable from there and the arcs out cost 0, so any matching
 * consistent with the arc flows has the solved cost. */
static int extract(struct flownet *net, struct hrm_error *err)
{
    struct hrm_flow *g = net->g;
    int32_t nr = net->nracks;
    size_t ntr = (size_t)net->ntier * (size_t)nr;
    for (size_t i = 0; i < ntr; i++)
        net->rpool[i] = (struct pool){-1, -1};
    for (int32_t k = 0; k < net->ntier; k++)
        net->xpool[k] = (struct pool){-1, -1};
    net->nplaces = 0;
    for (size_t i = 0; i < net->nlive_tasks; i++) {
        int32_t t = net->live_tasks[i];
        if (hrm_flow_arc_flow(g, net->task_arc[t]) <= 0)
            continue;
        for (int32_t a = 0; a < net->task_narcs[t]; a++) {
            int32_t arc = net->tarcs[net->task_first[t] + a];
            if (hrm_flow_arc_flow(g, arc) <= 0)
                continue;
            int32_t to = hrm_flow_arc_to(g, arc);
            if (net->vkind[to] == V_GPU)
                place(net, t, net->vref[to]);
            else if (net->vkind[to] == V_RACK)
                pool_push(net, &net->rpool[net->vref[to]], t);
            else
                pool_push(net, &net->xpool[net->vref[to]], t);
            break;
        }
    }
    if (!net->cfg.aggregate)
        return 0;
    for (int32_t k = 0; k < net->ntier; k++) {
        for (int32_t r = 0; r < nr; r++) {
            int32_t i = k * nr + r;
            for (int64_t f = hrm_flow_arc_flow(g, net->clu_arc[i]); f > 0; f--) {
                int32_t t = pool_pop(net, &net->xpool[k]);
                if (t < 0)
                    return hrm_errorf(err, -HRM_EPOLICY,
                                      "flow network: cluster aggregator "
                                      "flow does not match its tasks");
                pool_push(net, &net->rpool[i], t);
            }
        }
        for (int32_t r = 0; r < nr; r++) {
            int32_t i = k * nr + r;
            for (int32_t p = net->tr_first[i]; p < net->tr_first[i + 1]; p++) {
                int32_t u = net->tr_units[p];
                if (hrm_flow_arc_flow(g, net->rack_gpu_arc[u]) <= 0)
                    continue;
                int32_t t = pool_pop(net, &net->rpool[i]);
                if (t < 0)
                    return hrm_errorf(err, -HRM_EPOLICY,
                                      "flow network: rack aggregator flow "
                                      "does not match its tasks");
                place(net, t, u);
            }
            if (net->rack_next_arc[i] >= 0) {
                for (int64_t f = hrm_flow_arc_flow(g, net->rack_next_arc[i]); f > 0; f--) {
                    int32_t t = pool_pop(net, &net->rpool[i]);
                    if (t < 0)
                        return hrm_errorf(err, -HRM_EPOLICY,
                                          "flow network: tier flow does not match its tasks");
                    pool_push(net, &net->rpool[i + nr], t);
                }
            }
            if (net->rpool[i].head >= 0)
                return hrm_errorf(err, -HRM_EPOLICY, "flow network: tasks left in an aggregator");
        }
    }
    return 0;
}

/* The price of leaving one of a job's tasks unscheduled: alpha3 times the
 * time its average ready task needs to read its input over a rack link (at
 * least one second, so that tasks without input still prefer an idle GPU to
 * waiting).  Halved for a job above its share: it gives way first. */
static int64_t unsched_cost(const struct flownet *net, const struct hrm_cluster *c, int64_t bytes,
                            int64_t ntasks, bool over_share)
{
    double ms = ntasks > 0 ? (double)bytes / (double)ntasks / c->net.rack_bw * 1000.0 : 0;
    if (ms < 1000.0)
        ms = 1000.0;
    double cost = net->cfg.alpha3 * ms;
    if (over_share)
        cost /= 2;
    double cap = (double)(HRM_FLOW_COST_MAX / 8);
    return (int64_t)(cost < cap ? cost : cap);
}

/* The unscheduled arcs of job j (slot i of sh) with ntasks ready one-GPU
 * tasks reading bytes, the oldest ready since oldest_us:
 *   j -> u_j  cap ntasks - deficit, cost U_j: what may wait at no harm to
 *             fairness (the paper's N_j - A_j);
 *   j -> u_j  cap deficit (share - held), cost U_j + 1 + wait (priced mode only):
 *             leaving the job below its share costs as much again as the
 *             time its oldest task has waited, in milliseconds (Quincy's
 *             wait-time cost), so a deficit task takes an expensive GPU only
 *             once it has waited about as long as the extra transfer costs;
 *   u_j -> E  cap ntasks.
 * Without the priced arc (forced mode, a pass that preempted for the deficit,
 * or nothing running) the deficit can only leave through GPUs and the maximum
 * flow places it where memory allows. */
static void job_unscheduled(struct flownet *net, const struct hrm_state *s,
                            const struct p1_shares *sh, int32_t i, int64_t ntasks, int64_t bytes,
                            int64_t oldest_us, int64_t now_us, bool force)
{
    int32_t j = sh->jobs[i];
    int64_t deficit = sh->share[i] - sh->held[i];
    if (deficit < 0)
        deficit = 0;
    if (deficit > ntasks)
        deficit = ntasks;
    int64_t cap = ntasks - deficit;
    int64_t cost = unsched_cost(net, s->cluster, bytes, ntasks, sh->held[i] > sh->share[i]);
    /* With nothing running no event will bring another pass: force then. */
    bool priced = net->cfg.priced && !force && s->nrunning > 0;
    int64_t dcap = priced ? deficit : 0;
    int64_t wait = now_us > oldest_us ? (now_us - oldest_us) / 1000 : 0;
    if (wait > HRM_FLOW_COST_MAX / 8)
        wait = HRM_FLOW_COST_MAX / 8;
    int64_t dcost = priced ? cost + 1 + wait : 0; /* + 1: a deficit unit goes first on ties */
    if (net->unsch_cap[j] != cap || net->unsch_cost[j] != cost) {
        set_arc(net, net->unsch_arc[j], cap, cost);
        net->unsch_cap[j] = cap;
        net->unsch_cost[j] = cost;
    }
    if (net->defer_cap[j] != dcap || net->defer_cost[j] != dcost) {
        set_arc(net, net->defer_arc[j], dcap, dcost);
        net->defer_cap[j] = dcap;
        net->defer_cost[j] = dcost;
    }
    if (hrm_flow_arc_capacity(net->g, net->unsch_out[j]) != cap + dcap)
        set_arc(net, net->unsch_out[j], cap + dcap, 0);
}

int flownet_run(struct flownet *net, const struct hrm_state *s, const struct p1_shares *sh,
                int64_t now_us, bool force, struct hrm_error *err)
{
    const struct hrm_cluster *c = s->cluster;
    const struct hrm_workload *wl = s->wl;
    struct p1_cost m = {
        .c = c, .alpha1 = net->cfg.alpha1, .alpha2 = net->cfg.alpha2, .literal = net->cfg.literal};
    if (net->c != c || net->wl != wl)
        model_init(net, s);
    bool rebuild = !net->built || !net->cfg.incremental;
    for (int32_t n = 0; n < c->nnodes && !rebuild; n++)
        rebuild = net->up_seen[n] != s->nodes[n].up;
    /* Compact when vertices of tasks no longer ready dominate the graph. */
    int32_t dead = net->ntask_v - (int32_t)net->nlive_tasks;
    if (!rebuild && dead > 1024 && dead > 2 * (int32_t)net->nlive_tasks)
        rebuild = true;
    if (rebuild)
        build(net, s);

    int32_t epoch = ++net->epoch;
    size_t nnext_t = 0, nnext_j = 0;
    int64_t min_cpu = INT64_MAX, min_mem = INT64_MAX;
    for (int32_t i = 0; i < sh->njobs; i++) {
        int32_t j = sh->jobs[i];
        int64_t ntasks = 0, bytes = 0, oldest_us = now_us;
        for (int32_t t = s->jobs[j].ready_head; t >= 0; t = s->tasks[t].next) {
            const struct hrm_task *task = &wl->tasks[t];
            if (task->req.v[HRM_DIM_GPU] != 1)
                continue;
            ensure_job(net, j);
            ensure_task(net, s, &m, t);
            if (!net->task_cap[t]) {
                set_arc(net, net->task_arc[t], 1, 0);
                net->task_cap[t] = 1;
            }
            net->task_epoch[t] = epoch;
            HRM_GROW(net->next_tasks, net->cap_nt, nnext_t + 1);
            net->next_tasks[nnext_t++] = t;
            ntasks++;
            bytes += p1_task_bytes(s, t);
            if (s->tasks[t].ready_us < oldest_us)
                oldest_us = s->tasks[t].ready_us;
            if (task->req.v[HRM_DIM_CPU] < min_cpu)
                min_cpu = task->req.v[HRM_DIM_CPU];
            if (task->req.v[HRM_DIM_MEM] < min_mem)
                min_mem = task->req.v[HRM_DIM_MEM];
        }
        if (ntasks == 0)
            continue;
        net->job_epoch[j] = epoch;
        HRM_GROW(net->next_jobs, net->cap_nj, nnext_j + 1);
        net->next_jobs[nnext_j++] = j;
        if (net->job_cap[j] != ntasks) {
            set_arc(net, net->job_arc[j], ntasks, 0);
            net->job_cap[j] = ntasks;
        }
        if (net->cfg.unscheduled)
            job_unscheduled(net, s, sh, i, ntasks, bytes, oldest_us, now_us, force);
    }
    /* Tasks and jobs that left keep their vertices, with no capacity in. */
    for (size_t i = 0; i < net->nlive_tasks; i++) {
        int32_t t = net->live_tasks[i];
        if (net->task_epoch[t] != epoch && net->task_v[t] >= 0 && net->task_cap[t]) {
            set_arc(net, net->task_arc[t], 0, 0);
            net->task_cap[t] = 0;
        }
    }
    for (size_t i = 0; i < net->nlive_jobs; i++) {
        int32_t j = net->live_jobs[i];
        if (net->job_epoch[j] == epoch || net->job_v[j] < 0)
            continue;
        set_arc(net, net->job_arc[j], 0, 0);
        net->job_cap[j] = 0;
        if (net->cfg.unscheduled) {
            set_arc(net, net->unsch_arc[j], 0, net->unsch_cost[j]);
            set_arc(net, net->defer_arc[j], 0, net->defer_cost[j]);
            set_arc(net, net->unsch_out[j], 0, 0);
            net->unsch_cap[j] = net->defer_cap[j] = 0;
        }
    }
    int32_t *swap = net->live_tasks;
    size_t cswap = net->cap_lt;
    net->live_tasks = net->next_tasks;
    net->cap_lt = net->cap_nt;
    net->next_tasks = swap;
    net->cap_nt = cswap;
    net->nlive_tasks = nnext_t;
    swap = net->live_jobs;
    cswap = net->cap_lj;
    net->live_jobs = net->next_jobs;
    net->cap_lj = net->cap_nj;
    net->next_jobs = swap;
    net->cap_nj = cswap;
    net->nlive_jobs = nnext_j;

    /* Free GPUs, on nodes with room for the smallest ready task's host part
     * (the cores and memory bound to a GPU); a placement that still does not
     * fit is skipped by the policy and retried next pass. */
    int32_t nfree = 0;
    for (int32_t u = 0; u < c->nunits; u++) {
        if (net->gpu_tier[u] < 0)
            continue;
        int32_t n = c->units[u].node;
        const struct hrm_node_state *ns = &s->nodes[n];
        int64_t cap = ns->up && !(ns->gpu_busy & (1u << c->units[u].gpu_index)) &&
                      ns->free.v[HRM_DIM_CPU] >= min_cpu && ns->free.v[HRM_DIM_MEM] >= min_mem;
        nfree += (int32_t)cap;
        if (net->gpu_cap[u] != cap) {
            set_arc(net, net->gpu_arc[u], cap, 0);
            net->gpu_cap[u] = cap;
        }
    }

    net->nplaces = 0;
    net->cost = 0;
    net->stats.tasks = (int32_t)nnext_t;
    net->stats.gpus = nfree;
    net->stats.vertices = hrm_flow_vertices(net->g);
    net->stats.arcs = hrm_flow_arcs(net->g);
    if (nnext_t == 0)
        return 0; /* nothing to place: skip the solve */
    int rc = hrm_flow_solve_max(net->g, net->src, net->sink, err);
    if (rc)
        return rc;
    net->stats.solves++;
    net->cost = hrm_flow_total_cost(net->g);
    return extract(net, err);
}

size_t flownet_places(const struct flownet *net, const struct flownet_place **out)
{
    *out = net->places;
    return net->nplaces;
}

int64_t flownet_cost(const struct flownet *net)
{
    return net->cost;
}

void flownet_stats(const struct flownet *net, struct flownet_stats *out)
{
    *out = net->stats;
}

struct hrm_flow *flownet_graph(const struct flownet *net)
{
    return net->g;
}

int32_t flownet_source(const struct flownet *net)
{
    return net->src;
}

int32_t flownet_sink(const struct flownet *net)
{
    return net->sink;
}
