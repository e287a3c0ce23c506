/* Min-cost flow graph: user arcs, residual graph, warm-start bookkeeping, solve entry points. */
#include <stdlib.h>
#include <string.h>

#include "ssp_sum.h"
#include "hrm/alloc.h"

/* The per-vertex capacity sums only bound the virtual arc of solve_max, so
 * they saturate instead of overflowing; a saturated sum stays an upper bound. */
#define SUM_LIM ((int64_t)1 << 61)

/* auto_algo: arcs sampled, and the most distinct costs among them for which
 * shortest paths are chosen (scheduling graphs have 20-30, random families
 * thousands; docs/flow-solver.md "What auto runs") */
#define AUTO_SAMPLE 2048
/* auto_algo, many distinct costs: from this many vertices on, cost scaling
 * instead of the simplex (measured crossovers: netgen ~3,000 vertices,
 * gridgen and goto ~6,000; docs/flow-solver.md "What auto runs") */
#define AUTO_SCALING_VERTICES 5000
/* auto_algo, few distinct costs: from this many vertices on, shortest paths
 * whatever the shape (measured on P1 shapes: the simplex ahead by 1.1-2x at
 * 45,000-52,000 vertices; from 64,000 to 166,000 level or behind by up to 1.8x
 * but for two shapes; docs/flow-solver.md "What auto runs") */
#define AUTO_SIMPLEX_MAX_VERTICES 60000
/* auto_algo, few distinct costs, units compete: the simplex while the units in
 * excess of the places they compete for, times this, stay below the places
 * squared (measured over P1 shapes of 100-20,000 GPUs with 1.5-15 tasks per
 * GPU; docs/flow-solver.md "What auto runs") */
#define AUTO_EXCESS_PER_PLACE_SQUARED 1000

static int64_t sum_add(int64_t a, int64_t b)
{
    return a >= SUM_LIM || b >= SUM_LIM - a ? SUM_LIM : a + b;
}

static int64_t sum_sub(int64_t a, int64_t b)
{
    return a >= SUM_LIM ? a : a - b;
}

static void grow_vertices(struct hrm_flow *g, size_t need)
{
    if (need <= g->vcap_n)
        return;
    size_t cap = g->vcap_n ? g->vcap_n : 16;
    while (cap < need)
        cap *= 2;
    g->supply = hrm_reallocarray(g->supply, cap, sizeof(*g->supply));
    g->vx = hrm_reallocarray(g->vx, cap, sizeof(*g->vx));
    memset(g->vx + g->vcap_n, 0, (cap - g->vcap_n) * sizeof(*g->vx));
    g->ex = hrm_reallocarray(g->ex, cap, sizeof(*g->ex));
    g->outcap = hrm_reallocarray(g->outcap, cap, sizeof(*g->outcap));
    g->incap = hrm_reallocarray(g->incap, cap, sizeof(*g->incap));
    g->vpend = hrm_reallocarray(g->vpend, cap, sizeof(*g->vpend));
    memset(g->vpend + g->vcap_n, 0, cap - g->vcap_n);
    g->fill = hrm_reallocarray(g->fill, cap, sizeof(*g->fill));
    g->added = hrm_reallocarray(g->added, cap, sizeof(*g->added));
    memset(g->added + g->vcap_n, 0, (cap - g->vcap_n) * sizeof(*g->added));
    g->in_n = hrm_reallocarray(g->in_n, cap, sizeof(*g->in_n));
    g->in_arc = hrm_reallocarray(g->in_arc, cap, sizeof(*g->in_arc));
    g->vcap_n = cap;
}

static void grow_arcs(struct hrm_flow *g, size_t need)
{
    if (need <= g->acap_n)
        return;
    size_t cap = g->acap_n ? g->acap_n : 16;
    while (cap < need)
        cap *= 2;
    g->afrom = hrm_reallocarray(g->afrom, cap, sizeof(*g->afrom));
    g->ato = hrm_reallocarray(g->ato, cap, sizeof(*g->ato));
    g->acap = hrm_reallocarray(g->acap, cap, sizeof(*g->acap));
    g->acost = hrm_reallocarray(g->acost, cap, sizeof(*g->acost));
    g->aflow0 = hrm_reallocarray(g->aflow0, cap, sizeof(*g->aflow0));
    g->adirty = hrm_reallocarray(g->adirty, cap, sizeof(*g->adirty));
    memset(g->adirty + g->acap_n, 0, cap - g->acap_n);
    g->acap_n = cap;
}

struct hrm_flow *hrm_flow_new(int32_t vertices_hint, int32_t arcs_hint)
{
    struct hrm_flow *g = hrm_calloc(1, sizeof(*g));
    g->vs = g->vt = -1;
    g->vpos = -1;
    g->shape = true;
    grow_vertices(g, vertices_hint > 0 ? (size_t)vertices_hint : 16);
    grow_arcs(g, arcs_hint > 0 ? (size_t)arcs_hint : 16);
    return g;
}

void hrm_flow_free(struct hrm_flow *g)
{
    if (!g)
        return;
    void *arrays[] = {g->supply, g->afrom,  g->ato,   g->acap,  g->acost,  g->aflow0, g->first,
                      g->head,   g->rev,    g->tail,  g->rcap,  g->rcost,  g->apos,   g->vx,
                      g->ex,     g->outcap, g->incap, g->dirty, g->adirty, g->pend,   g->vpend,
                      g->cur,    g->stack,  g->list,  g->sc_i32, g->lvl,    g->queue,
                      g->fill,   g->added, g->in_n, g->in_arc, g->rarc};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        hrm_free(arrays[i]);
    flow_ssp_free(g->rq);
    flow_sum_free(g->sum);
    flow_simplex_free(g->ns);
    hrm_free(g);
}

static bool supply_ok(int64_t s)
{
    return s >= -HRM_FLOW_CAP_MAX && s <= HRM_FLOW_CAP_MAX;
}

static bool arc_ok(int64_t cap, int64_t cost)
{
    return cap >= 0 && cap <= HRM_FLOW_CAP_MAX && cost >= -HRM_FLOW_COST_MAX &&
           cost <= HRM_FLOW_COST_MAX;
}

static void note_cost(struct hrm_flow *g, int64_t cost)
{
    int64_t c = cost < 0 ? -cost : cost;
    if (c > g->cost_max)
        g->cost_max = c;
}

void flow_pend(struct hrm_flow *g, int32_t v)
{
    if (g->vpend[v])
        return;
    g->vpend[v] = 1;
    HRM_GROW(g->pend, g->pend_cap, g->npend + 1);
    g->pend[g->npend++] = v;
}

static void mark_dirty(struct hrm_flow *g, int32_t a)
{
    if (g->adirty[a])
        return;
    g->adirty[a] = 1;
    HRM_GROW(g->dirty, g->dirty_cap, g->ndirty + 1);
    g->dirty[g->ndirty++] = a;
}

int32_t hrm_flow_add_vertex(struct hrm_flow *g, int64_t supply)
{
    if (!supply_ok(supply) || g->n == INT32_MAX - 1)
        return -EINVAL;
    grow_vertices(g, (size_t)g->n + 1);
    int32_t v = g->n++;
    g->supply[v] = supply;
    g->vx[v].pi = 0;
    g->outcap[v] = g->incap[v] = 0;
    g->in_n[v] = 0;
    g->in_arc[v] = -1;
    g->ex[v] = g->mode == FLOW_MODE_SUPPLY ? supply : 0;
    if (g->ex[v])
        flow_pend(g, v);
    g->shape = true;
    return v;
}

int32_t hrm_flow_add_arc(struct hrm_flow *g, int32_t from, int32_t to, int64_t capacity,
                         int64_t cost)
{
    if (from < 0 || from >= g->n || to < 0 || to >= g->n || !arc_ok(capacity, cost) ||
        g->m >= INT32_MAX / 2 - 2)
        return -EINVAL;
    grow_arcs(g, (size_t)g->m + 1);
    int32_t a = g->m++;
    g->afrom[a] = from;
    g->ato[a] = to;
    g->acap[a] = capacity;
    g->acost[a] = cost;
    g->aflow0[a] = 0;
    g->adirty[a] = 0;
    g->outcap[from] = sum_add(g->outcap[from], capacity);
    g->incap[to] = sum_add(g->incap[to], capacity);
    g->in_n[to]++;
    g->in_arc[to] = a;
    note_cost(g, cost);
    mark_dirty(g, a);
    g->shape = true;
    return a;
}

void hrm_flow_set_supply(struct hrm_flow *g, int32_t vertex, int64_t supply)
{
    if (vertex < 0 || vertex >= g->n || !supply_ok(supply))
        return;
    if (g->mode == FLOW_MODE_SUPPLY) {
        g->ex[vertex] += supply - g->supply[vertex];
        flow_pend(g, vertex);
    }
    g->supply[vertex] = supply;
}

int hrm_flow_set_arc(struct hrm_flow *g, int32_t arc, int64_t capacity, int64_t cost)
{
    if (arc < 0 || arc >= g->m || !arc_ok(capacity, cost))
        return -EINVAL;
    if (g->acap[arc] == capacity && g->acost[arc] == cost)
        return 0;
    int32_t u = g->afrom[arc], v = g->ato[arc];
    g->outcap[u] = sum_add(sum_sub(g->outcap[u], g->acap[arc]), capacity);
    g->incap[v] = sum_add(sum_sub(g->incap[v], g->acap[arc]), capacity);
    g->acap[arc] = capacity;
    g->acost[arc] = cost;
    note_cost(g, cost);
    mark_dirty(g, arc);
    return 0;
}

int32_t hrm_flow_vertices(const struct hrm_flow *g)
{
    return g->n;
}

int32_t hrm_flow_arcs(const struct hrm_flow *g)
{
    return g->m;
}

int64_t hrm_flow_supply(const struct hrm_flow *g, int32_t v)
{
    return v >= 0 && v < g->n ? g->supply[v] : 0;
}

int32_t hrm_flow_arc_from(const struct hrm_flow *g, int32_t a)
{
    return a >= 0 && a < g->m ? g->afrom[a] : -EINVAL;
}

int32_t hrm_flow_arc_to(const struct hrm_flow *g, int32_t a)
{
    return a >= 0 && a < g->m ? g->ato[a] : -EINVAL;
}

int64_t hrm_flow_arc_capacity(const struct hrm_flow *g, int32_t a)
{
    return a >= 0 && a < g->m ? g->acap[a] : 0;
}

int64_t hrm_flow_arc_cost(const struct hrm_flow *g, int32_t a)
{
    return a >= 0 && a < g->m ? g->acost[a] : 0;
}

int64_t hrm_flow_arc_flow(const struct hrm_flow *g, int32_t a)
{
    if (a < 0 || a >= g->m)
        return 0;
    if (a < g->rm)
        return g->rcap[g->rev[g->apos[a]]];
    return g->aflow0[a];
}

int64_t hrm_flow_total_cost(const struct hrm_flow *g)
{
    int64_t sum = 0;
    for (int32_t a = 0; a < g->m; a++)
        sum += hrm_flow_arc_flow(g, a) * g->acost[a];
    return sum;
}

int64_t hrm_flow_value(const struct hrm_flow *g)
{
    return g->value;
}

int64_t hrm_flow_potential(const struct hrm_flow *g, int32_t v)
{
    return v >= 0 && v < g->n && v < g->rn ? g->vx[v].pi : 0;
}

void hrm_flow_set_algo(struct hrm_flow *g, enum hrm_flow_algo algo)
{
    g->algo = algo;
}

void hrm_flow_reset(struct hrm_flow *g)
{
    g->warm = false;
    flow_simplex_forget(g->ns);
}

void hrm_flow_stats(const struct hrm_flow *g, struct hrm_flow_stats *out)
{
    *out = g->stats;
}

void flow_scratch(struct hrm_flow *g)
{
    size_t n = (size_t)g->n + 1;
    if (n <= g->scratch_n)
        return;
    size_t old = g->scratch_n;
    size_t cap = old ? old : 16;
    while (cap < n)
        cap *= 2;
    g->cur = hrm_reallocarray(g->cur, cap, sizeof(*g->cur));
    g->stack = hrm_reallocarray(g->stack, cap, sizeof(*g->stack));
    g->list = hrm_reallocarray(g->list, cap, sizeof(*g->list));
    g->sc_i32 = hrm_reallocarray(g->sc_i32, cap, sizeof(*g->sc_i32));
    g->lvl = hrm_reallocarray(g->lvl, cap, sizeof(*g->lvl));
    memset(g->lvl + old, 0xff, (cap - old) * sizeof(*g->lvl)); /* -1: no level */
    g->queue = hrm_reallocarray(g->queue, cap, sizeof(*g->queue));
    g->scratch_n = cap;
}

/* The flow on the virtual arc (the value of solve_max). */
static int64_t virtual_flow(const struct hrm_flow *g)
{
    return g->vpos >= 0 ? g->rcap[g->rev[g->vpos]] : 0;
}

/*
 * New vertices get potentials that keep their arcs towards the rest of the
 * graph admissible-or-better, so that a job that arrives adds its flow where
 * it enters (one saturated arc from the source) rather than at the far end of
 * every one of its arcs.  Priced from the sinks' side first: in rounds, a new
 * vertex whose out-arcs reach priced vertices gets the largest pi[w] - c over
 * them (the tasks from their placement targets, then the job from its
 * tasks), which leaves every such arc's reduced cost >= 0; what no round
 * reaches is priced from its in-arcs (smallest pi[u] + c), else 0, which keeps
 * those arcs admissible-or-better.
 *
 * On P1 graphs a job of 100 tasks then re-solves in one search that settles a
 * handful of vertices, where pricing from the sources' side (the smallest
 * pi[u] + c over in-arcs: the job at the source's potential, every task arc
 * saturated by the patch) spread the excess over every placement target and
 * took 7-17 searches of the whole graph (docs/flow-solver.md, "Incremental
 * re-solves").  Every algorithm prices this way; the two pricings lead to
 * different optima of equal cost.
 */
static void init_new_potentials(struct hrm_flow *g, int32_t old_n, int32_t old_m)
{
    if (old_n >= g->n)
        return;
    int32_t k = g->n - old_n;
    uint8_t *set = hrm_calloc((size_t)k, 1);
    uint8_t *seen = hrm_alloc((size_t)k);
    int64_t *cand = hrm_alloc(sizeof(int64_t) * (size_t)k);
    for (int32_t v = old_n; v < g->n; v++)
        g->vx[v].pi = 0;
    for (int round = 0; round < 8; round++) {
        memset(seen, 0, (size_t)k);
        bool more = false;
        for (int32_t a = old_m; a < g->m; a++) {
            int32_t u = g->afrom[a], w = g->ato[a];
            if (u < old_n || set[u - old_n] || g->acap[a] == 0 || (w >= old_n && !set[w - old_n]))
                continue;
            int64_t p = g->vx[w].pi - g->acost[a];
            if (!seen[u - old_n] || p > cand[u - old_n])
                cand[u - old_n] = p;
            seen[u - old_n] = 1;
            more = true;
        }
        if (!more)
            break;
        for (int32_t i = 0; i < k; i++)
            if (seen[i]) {
                g->vx[old_n + i].pi = cand[i];
                set[i] = 1;
            }
    }
    memset(seen, 0, (size_t)k);
    for (int32_t a = old_m; a < g->m; a++) {
        int32_t u = g->afrom[a], v = g->ato[a];
        if (v >= old_n && !set[v - old_n] && u < old_n && g->acap[a] > 0) {
            int64_t p = g->vx[u].pi + g->acost[a];
            if (!seen[v - old_n] || p < g->vx[v].pi)
                g->vx[v].pi = p;
            seen[v - old_n] = 1;
        }
    }
    hrm_free(set);
    hrm_free(seen);
    hrm_free(cand);
}

/* Makes room for nr residual arcs, keeping those laid out. */
static void reserve_residual(struct hrm_flow *g, size_t nr)
{
    if (nr <= g->rcap_n)
        return;
    size_t cap = g->rcap_n ? g->rcap_n : 64;
    while (cap < nr)
        cap *= 2;
    g->head = hrm_reallocarray(g->head, cap, sizeof(*g->head));
    g->rev = hrm_reallocarray(g->rev, cap, sizeof(*g->rev));
    g->tail = hrm_reallocarray(g->tail, cap, sizeof(*g->tail));
    g->rcap = hrm_reallocarray(g->rcap, cap, sizeof(*g->rcap));
    g->rcost = hrm_reallocarray(g->rcost, cap, sizeof(*g->rcost));
    g->rarc = hrm_reallocarray(g->rarc, cap, sizeof(*g->rarc));
    g->rcap_n = cap;
}

/* A free slot: a self-loop at v with no capacity in either direction and cost
 * 0, which every engine passes over like a saturated arc. */
static void set_inert(struct hrm_flow *g, int32_t r, int32_t v)
{
    g->head[r] = g->tail[r] = v;
    g->rev[r] = r;
    g->rarc[r] = -1;
    g->rcap[r] = 0;
    g->rcost[r] = 0;
}

/* Writes user arc a (flow aflow0[a]) into residual slots f (at its tail) and b. */
static void place_arc(struct hrm_flow *g, int32_t a, int32_t f, int32_t b)
{
    int32_t u = g->afrom[a], v = g->ato[a];
    int64_t flow = g->aflow0[a];
    g->head[f] = v, g->tail[f] = u, g->rev[f] = b;
    g->head[b] = u, g->tail[b] = v, g->rev[b] = f;
    g->rcost[f] = g->acost[a], g->rcost[b] = -g->acost[a];
    g->rcap[f] = g->acap[a] - flow; /* may be negative until the dirty arc is fixed */
    g->rcap[b] = flow;
    g->apos[a] = f;
    g->rarc[f] = a;
    g->rarc[b] = -1;
}

/* Free slots a layout gives each vertex.  A job's arrival adds reverse arcs
 * at hundreds of placement targets, each in proportion to its arcs (a target
 * of 100 arcs gained 1-3 per arrival on the 2,000-GPU P1 graph), and the
 * sink and source one each.  A layout of the whole graph costs 5-10 ms there,
 * seven job arrivals' worth of re-solves, and with an eighth of a vertex's
 * arcs plus one slot per arc gained it came back every 7-10 arrivals.  So:
 * once the graph has grown, a quarter of its arcs plus four per arc it
 * gained over its life (every layout then lasts several times longer than
 * the one before); the first layout gives an eighth in the max-flow form
 * (the schedulers' graphs, which grow by arrivals: the first arrival then
 * fits) and none with fixed supplies (the benchmark families, solved once).
 * Vertices with few arcs gain them in bursts (a GPU read by two of an
 * arriving job's tasks): every vertex but a task (one arc in: it never gains
 * one in a scheduling graph) gets SLACK_MIN more.
 * The shortest-path engine does not read free slots (its searches and
 * routing stop at the slots in use, ssp_sum.c's lim; cold_state at fill), so
 * for it they cost memory and layout writes only; cost scaling passes over
 * them like saturated arcs.  Measured: docs/flow-solver.md, "Incremental
 * re-solves". */
#define SLACK_SHIFT 3
#define SLACK_SHIFT_GROWN 2
#define SLACK_PER_ADDED 4
#define SLACK_MIN 2

static int64_t slack_of(const struct hrm_flow *g, int32_t v)
{
    int64_t few = g->in_n[v] != 1 ? SLACK_MIN : 0;
    if (!g->grown)
        return g->mode == FLOW_MODE_MAX ? (g->fill[v] >> SLACK_SHIFT) + few : 0;
    return (g->fill[v] >> SLACK_SHIFT_GROWN) + SLACK_PER_ADDED * (int64_t)g->added[v] + few;
}

/* Lays out the segments (first[]) for fill[v] arcs per vertex plus free slots,
 * unless they would leave int32_t; returns their total. */
static int32_t lay_out(struct hrm_flow *g)
{
    int64_t total = 0;
    for (int32_t v = 0; v < g->n; v++)
        total += (int64_t)g->fill[v] + slack_of(g, v);
    bool slack = total < INT32_MAX / 2;
    int32_t *first = g->first;
    first[0] = 0;
    for (int32_t v = 0; v < g->n; v++)
        first[v + 1] = first[v] + g->fill[v] + (slack ? (int32_t)slack_of(g, v) : 0);
    return first[g->n];
}

/* (Re)builds the residual graph from the user's arcs, keeping every flow.
 * Each vertex's arcs are in user-arc order, the virtual arc last, then its
 * free slots (see build_more). */
static void build(struct hrm_flow *g)
{
    int32_t old_n = g->rn, old_m = g->rm;
    for (int32_t a = 0; a < old_m; a++)
        g->aflow0[a] = g->rcap[g->rev[g->apos[a]]];
    int64_t vflow = virtual_flow(g);
    bool virt = g->vs >= 0;
    g->first = hrm_reallocarray(g->first, (size_t)g->n + 2, sizeof(*g->first));
    g->apos = hrm_reallocarray(g->apos, g->acap_n, sizeof(*g->apos));
    int32_t *fill = g->fill;
    memset(fill, 0, (size_t)g->n * sizeof(*fill));
    /* the arcs into tasks the shortest paths keep folded go last, and before
     * them the arcs without residual capacity (ssp_sum.c) */
    bool part = flow_sum_keeps(g);
    int32_t *hid = part ? hrm_calloc((size_t)g->n, sizeof(*hid)) : NULL;
    int32_t *live = part ? hrm_calloc((size_t)g->n, sizeof(*live)) : NULL;
    for (int32_t a = 0; a < g->m; a++) {
        int32_t u = g->afrom[a], v = g->ato[a];
        fill[u]++;
        fill[v]++;
        if (part) {
            bool hu = flow_sum_hides(g, u, v), hv = flow_sum_hides(g, v, u);
            hid[u] += hu;
            hid[v] += hv;
            live[u] += !hu && flow_sum_lives(g, u, g->acap[a] - g->aflow0[a]);
            live[v] += !hv && flow_sum_lives(g, v, g->aflow0[a]);
        }
    }
    if (virt) {
        fill[g->vt]++;
        fill[g->vs]++;
    }
    reserve_residual(g, (size_t)lay_out(g));
    const int32_t *first = g->first;
    int32_t *at = hrm_alloc(sizeof(*at) * ((size_t)g->n + 1));
    int32_t *dead = part ? hrm_alloc(sizeof(*dead) * (size_t)g->n) : NULL;
    for (int32_t v = 0; v < g->n; v++) {
        at[v] = part ? fill[v] - hid[v] : 0; /* next hidden slot, from first[v] */
        if (part) {
            hid[v] = fill[v] - hid[v]; /* where the hidden ones start */
            dead[v] = live[v];         /* next slot without capacity */
        }
    }
    memset(fill, 0, (size_t)g->n * sizeof(*fill));
    for (int32_t a = 0; a < g->m; a++) {
        int32_t u = g->afrom[a], v = g->ato[a];
        int32_t f, b;
        if (!part) {
            f = first[u] + fill[u]++;
            b = first[v] + fill[v]++;
        } else {
            f = first[u] + (flow_sum_hides(g, u, v) ? at[u]++
                            : flow_sum_lives(g, u, g->acap[a] - g->aflow0[a]) ? fill[u]++
                                                                              : dead[u]++);
            b = first[v] + (flow_sum_hides(g, v, u) ? at[v]++
                            : flow_sum_lives(g, v, g->aflow0[a]) ? fill[v]++ : dead[v]++);
        }
        place_arc(g, a, f, b);
    }
    if (part)
        for (int32_t v = 0; v < g->n; v++)
            fill[v] += dead[v] - live[v] + at[v] - hid[v]; /* the other two parts placed */
    hrm_free(at);
    hrm_free(dead);
    g->vpos = -1;
    if (virt) {
        int32_t f = first[g->vt] + fill[g->vt]++, b = first[g->vs] + fill[g->vs]++;
        g->head[f] = g->vs, g->tail[f] = g->vt, g->rev[f] = b;
        g->head[b] = g->vt, g->tail[b] = g->vs, g->rev[b] = f;
        g->rcost[f] = -FLOW_BIG, g->rcost[b] = FLOW_BIG;
        g->rcap[f] = g->vcap - vflow;
        g->rcap[b] = vflow;
        g->rarc[f] = g->rarc[b] = -1;
        g->vpos = f;
    }
    for (int32_t v = 0; v < g->n; v++)
        for (int32_t r = first[v] + fill[v]; r < first[v + 1]; r++)
            set_inert(g, r, v);
    g->stats.laid_out = first[g->n];
    flow_sum_relaid(g, hid, live);
    hrm_free(hid);
    hrm_free(live);
    g->rn = g->n;
    g->rm = g->m;
    g->shape = false;
    if (g->warm)
        init_new_potentials(g, old_n, old_m);
}

/* The next free slot of v, keeping the virtual arc last among v's arcs (where
 * build puts it), so that every vertex's arcs are in the order build would
 * give them and a re-solve takes the same path as after a full build. */
static int32_t take_slot(struct hrm_flow *g, int32_t v)
{
    int32_t r = g->first[v] + g->fill[v]++;
    int32_t last = r - 1;
    if (g->vpos < 0 || g->fill[v] < 2 || (last != g->vpos && last != g->rev[g->vpos]))
        return r;
    int32_t other = g->rev[last];
    g->head[r] = g->head[last], g->tail[r] = g->tail[last], g->rev[r] = other;
    g->rcap[r] = g->rcap[last], g->rcost[r] = g->rcost[last];
    g->rarc[r] = g->rarc[last];
    g->rev[other] = r;
    if (g->vpos == last)
        g->vpos = r;
    return last;
}

/*
 * Where a vertex has no room for the arcs being added, every vertex laid out
 * gets the segment a layout would give it (its arcs, counting those being
 * added, plus slack_of; never less than it has), and its slots move there in
 * their order (regrow).  Returns the new segment starts (old_n + 1 of them),
 * or NULL when they would leave int32_t (then build lays everything out).
 * Called while fill[] counts the arcs being added, as build's does.
 */
static int32_t *regrow_plan(const struct hrm_flow *g, int32_t old_n)
{
    int32_t *to = hrm_alloc(sizeof(*to) * ((size_t)old_n + 1));
    int64_t at = 0;
    for (int32_t v = 0; v < old_n; v++) {
        to[v] = (int32_t)at;
        int64_t want = (int64_t)g->fill[v] + slack_of(g, v);
        int64_t had = g->first[v + 1] - g->first[v];
        at += want > had ? want : had;
        if (at >= INT32_MAX / 2) {
            hrm_free(to);
            return NULL;
        }
    }
    to[old_n] = (int32_t)at;
    return to;
}

/*
 * Moves every laid-out vertex's slots in use to its new segment start to[v],
 * in place and in their order, and makes the rest of the segment free slots.
 * Segments only grow (to[v] >= first[v]), so moving from the last vertex down
 * never overwrites a slot not yet moved.  Sequential copies instead of
 * build's scattered writes of every arc pair: build took 6-7 ms on the
 * 2,000-GPU P1 graph, the maximum of its batches and arrivals and a sixth of
 * a batch's mean (docs/flow-solver.md, "2026-11-27: making room without
 * laying the graph out again").  The partners (rev), apos, the
 * virtual arc and the summaries' parts (lim, live) follow the move; the order
 * of each vertex's arcs stays what the engines left, so the live and hidden
 * parts stay exact.
 */
static void regrow(struct hrm_flow *g, int32_t old_n, const int32_t *to)
{
    reserve_residual(g, (size_t)to[old_n]);
    int32_t *from = g->first;
    for (int32_t v = old_n - 1; v >= 0; v--) {
        int32_t a = from[v], b = to[v], k = g->fill[v];
        if (a != b && k > 0) {
            memmove(g->head + b, g->head + a, sizeof(*g->head) * (size_t)k);
            memmove(g->rev + b, g->rev + a, sizeof(*g->rev) * (size_t)k);
            memmove(g->tail + b, g->tail + a, sizeof(*g->tail) * (size_t)k);
            memmove(g->rcap + b, g->rcap + a, sizeof(*g->rcap) * (size_t)k);
            memmove(g->rcost + b, g->rcost + a, sizeof(*g->rcost) * (size_t)k);
            memmove(g->rarc + b, g->rarc + a, sizeof(*g->rarc) * (size_t)k);
        }
    }
    /* a partner's old slot p at head w moves by w's shift */
    for (int32_t v = 0; v < old_n; v++)
        for (int32_t r = to[v], end = to[v] + g->fill[v]; r < end; r++) {
            int32_t w = g->head[r];
            g->rev[r] += to[w] - from[w];
        }
    for (int32_t a = 0; a < g->rm; a++)
        g->apos[a] += to[g->afrom[a]] - from[g->afrom[a]];
    if (g->vpos >= 0)
        g->vpos += to[g->vt] - from[g->vt];
    if (flow_sum_keeps(g))
        flow_sum_moved(g, from, to, old_n);
    else
        flow_sum_relaid(g, NULL, NULL);
    memcpy(g->first, to, sizeof(*to) * ((size_t)old_n + 1));
    if (flow_sum_keeps(g))
        flow_sum_backward_first(g, old_n);
    for (int32_t v = 0; v < old_n; v++)
        for (int32_t r = to[v] + g->fill[v]; r < to[v + 1]; r++)
            set_inert(g, r, v);
    g->stats.laid_out = to[old_n];
}

/*
 * Lays out only what was added since the last layout: the new arcs go into
 * free slots of the vertices laid out before, new vertices get segments at the
 * end.  O(new arcs + new vertices) instead of build's O(arcs) scattered
 * writes, which were a third of a job arrival's re-solve on the 2,000-GPU P1
 * graph.  When a vertex has too few free slots, every vertex's segment grows
 * in place first (regrow).  false (nothing changed but g->added) when there
 * is no layout yet, the graph shrank, the virtual arc moved or the grown
 * segments would leave int32_t: then build lays everything out again, with
 * free slots (slack_of).
 */
static bool build_more(struct hrm_flow *g)
{
    int32_t old_n = g->rn, old_m = g->rm, n = g->n;
    bool virt = g->vs >= 0;
    if (!g->first || n < old_n || g->m < old_m || virt != (g->vpos >= 0) ||
        (virt && (g->tail[g->vpos] != g->vt || g->head[g->vpos] != g->vs)))
        return false;
    int32_t *first = g->first, *fill = g->fill;
    bool room = true;
    for (int32_t a = old_m; a < g->m; a++) {
        int32_t ends[2] = {g->afrom[a], g->ato[a]};
        for (int i = 0; i < 2; i++)
            if (ends[i] < old_n) {
                g->grown = true;
                g->added[ends[i]]++;
                room &= ++fill[ends[i]] <= first[ends[i] + 1] - first[ends[i]];
            }
    }
    /* segments a layout would give, counting the arcs being added */
    int32_t *to = room ? NULL : regrow_plan(g, old_n);
    for (int32_t a = old_m; a < g->m; a++) {
        if (g->afrom[a] < old_n)
            fill[g->afrom[a]]--;
        if (g->ato[a] < old_n)
            fill[g->ato[a]]--;
    }
    if (!room) {
        if (!to)
            return false;
        regrow(g, old_n, to);
        hrm_free(to);
    }
    g->first = first = hrm_reallocarray(g->first, (size_t)n + 2, sizeof(*first));
    g->apos = hrm_reallocarray(g->apos, g->acap_n, sizeof(*g->apos));
    for (int32_t v = old_n; v < n; v++)
        fill[v] = 0;
    for (int32_t a = old_m; a < g->m; a++) {
        if (g->afrom[a] >= old_n)
            fill[g->afrom[a]]++;
        if (g->ato[a] >= old_n)
            fill[g->ato[a]]++;
    }
    for (int32_t v = old_n; v < n; v++) {
        first[v + 1] = first[v] + fill[v];
        fill[v] = 0;
    }
    reserve_residual(g, (size_t)first[n]);
    for (int32_t a = old_m; a < g->m; a++) {
        int32_t f = take_slot(g, g->afrom[a]);
        place_arc(g, a, f, take_slot(g, g->ato[a]));
    }
    g->stats.laid_out += 2 * (int64_t)(g->m - old_m);
    g->rn = n;
    g->rm = g->m;
    g->shape = false;
    if (g->warm)
        init_new_potentials(g, old_n, old_m);
    return true;
}

/* Patches a changed arc (forward residual f) into the residual graph and restores
 * its reduced-cost optimality by pushing flow back or saturating it. */
static void fix_arc(struct hrm_flow *g, int32_t f, int64_t cap, int64_t cost)
{
    int32_t b = g->rev[f];
    int32_t u = g->tail[f], v = g->head[f];
    g->rcost[f] = cost;
    g->rcost[b] = -cost;
    int64_t flow = g->rcap[b];
    if (flow > cap) {
        g->rcap[b] = cap;
        g->ex[u] += flow - cap;
        g->ex[v] -= flow - cap;
        flow = cap;
    }
    g->rcap[f] = cap - flow;
    int64_t rc = cost + g->vx[u].pi - g->vx[v].pi;
    if (rc < 0 && g->rcap[f] > 0)
        flow_push(g, f, g->rcap[f]);
    else if (rc > 0 && g->rcap[b] > 0)
        flow_push(g, b, g->rcap[b]);
    if (g->ex[u])
        flow_pend(g, u);
    if (g->ex[v])
        flow_pend(g, v);
}

static void apply_dirty(struct hrm_flow *g)
{
    for (size_t i = 0; i < g->ndirty; i++) {
        int32_t a = g->dirty[i];
        g->adirty[a] = 0;
        fix_arc(g, g->apos[a], g->acap[a], g->acost[a]);
        flow_sum_note_arc(g, a); /* its slots may cross the live boundary (ssp_sum.c) */
    }
    g->ndirty = 0;
    if (g->vdirty && g->vpos >= 0)
        fix_arc(g, g->vpos, g->vcap, -FLOW_BIG);
    g->vdirty = false;
}

static int64_t supply_in_force(const struct hrm_flow *g, int32_t v)
{
    return g->mode == FLOW_MODE_SUPPLY ? g->supply[v] : 0;
}

/* Zero flow, zero potentials, excess = supplies in force, nothing dirty. */
static void zero_state(struct hrm_flow *g)
{
    flow_sum_forget(g->sum, false);
    for (int32_t a = 0; a < g->m; a++) {
        int32_t f = g->apos[a];
        g->adirty[a] = 0;
        g->rcost[f] = g->acost[a];
        g->rcost[g->rev[f]] = -g->acost[a];
        g->rcap[f] = g->acap[a];
        g->rcap[g->rev[f]] = 0;
    }
    g->ndirty = 0;
    if (g->vpos >= 0) {
        g->rcap[g->vpos] = g->vcap;
        g->rcap[g->rev[g->vpos]] = 0;
    }
    g->vdirty = false;
    for (size_t i = 0; i < g->npend; i++)
        g->vpend[g->pend[i]] = 0;
    g->npend = 0;
    for (int32_t v = 0; v < g->n; v++) {
        g->vx[v].pi = 0;
        g->ex[v] = supply_in_force(g, v);
    }
}

/* Cold start of the shortest-path algorithm: zero flow plus every arc of
 * negative cost saturated, so that every residual reduced cost is >= 0. */
static void cold_state(struct hrm_flow *g)
{
    zero_state(g);
    /* In max mode the terminals are elastic, so every arc out of the source and
     * into the sink may start saturated: pricing them BIG / 2 below and above
     * the rest does that (every reduced cost stays >= 0) and spreads the work
     * over the vertices next to them (jobs and GPUs in a scheduling graph)
     * instead of funnelling every search through two hubs: 5x fewer phases. */
    if (g->mode == FLOW_MODE_MAX) {
        g->vx[g->vs].pi = -FLOW_BIG / 2;
        g->vx[g->vt].pi = FLOW_BIG / 2;
    } else if ((g->n + 1) * g->cost_max < FLOW_BIG) {
        /* With fixed supplies the same holds for a vertex whose supply needs all
         * its arcs (a source whose out-capacity is at most its supply, a sink
         * likewise), as in the supply form of a scheduling graph. */
        for (int32_t v = 0; v < g->n; v++) {
            int64_t b = g->supply[v];
            if (b > 0 && g->outcap[v] <= b)
                g->vx[v].pi = -FLOW_BIG / 2;
            else if (b < 0 && g->incap[v] <= -b)
                g->vx[v].pi = FLOW_BIG / 2;
        }
    }
    for (int32_t u = 0; u < g->n; u++) {
        int64_t pu = g->vx[u].pi;
        for (int32_t r = g->first[u], end = r + g->fill[u]; r < end; r++) /* not the free slots */
            if (g->rcap[r] > 0 && g->rcost[r] + pu - g->vx[g->head[r]].pi < 0)
                flow_push(g, r, g->rcap[r]);
    }
    for (int32_t v = 0; v < g->n; v++)
        if (g->ex[v])
            flow_pend(g, v);
}

/* Takes the virtual arc's flow out (its ends absorb the imbalance). */
static void drop_virtual(struct hrm_flow *g)
{
    if (g->warm && g->vpos >= 0) {
        int64_t f = virtual_flow(g);
        if (f > 0) {
            flow_push(g, g->rev[g->vpos], f);
            flow_pend(g, g->vs);
            flow_pend(g, g->vt);
        }
    }
    g->vs = g->vt = -1;
    g->vcap = 0;
    g->vdirty = false;
    g->shape = true;
    flow_sum_forget(g->sum, true); /* which vertices have one arc in changed */
}

static void set_mode_supply(struct hrm_flow *g)
{
    if (g->mode == FLOW_MODE_SUPPLY)
        return;
    if (g->vs >= 0)
        drop_virtual(g);
    for (int32_t v = 0; v < g->n; v++)
        if (g->supply[v]) {
            g->ex[v] += g->supply[v];
            flow_pend(g, v);
        }
    g->mode = FLOW_MODE_SUPPLY;
}

static void set_mode_max(struct hrm_flow *g, int32_t s, int32_t t)
{
    int64_t u = g->outcap[s] < g->incap[t] ? g->outcap[s] : g->incap[t];
    if (g->mode == FLOW_MODE_MAX && g->vs == s && g->vt == t) {
        if (u != g->vcap) {
            g->vcap = u;
            g->vdirty = true;
        }
        return;
    }
    if (g->mode == FLOW_MODE_SUPPLY) {
        for (int32_t v = 0; v < g->n; v++)
            if (g->supply[v]) {
                g->ex[v] -= g->supply[v];
                flow_pend(g, v);
            }
    } else if (g->vs >= 0) {
        drop_virtual(g);
    }
    g->mode = FLOW_MODE_MAX;
    flow_sum_forget(g->sum, true); /* which vertices have one arc in changed */
    g->vs = s;
    g->vt = t;
    g->vcap = u;
    g->vdirty = true;
    g->shape = true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Distinct arc costs among up to AUTO_SAMPLE arcs spread evenly over the graph. */
int32_t flow_distinct_costs(const struct hrm_flow *g)
{
    int64_t sample[AUTO_SAMPLE];
    int32_t k = 0;
    int64_t step = g->m > AUTO_SAMPLE ? g->m / AUTO_SAMPLE : 1;
    for (int64_t a = 0; a < g->m && k < AUTO_SAMPLE; a += step)
        sample[k++] = g->acost[a];
    qsort(sample, (size_t)k, sizeof(sample[0]), cmp_i64);
    int32_t d = k > 0;
    for (int32_t i = 1; i < k; i++)
        d += sample[i] != sample[i - 1];
    return d;
}

/* Cost scaling multiplies costs by 16 n and its prices can drift by about
 * 3 n times that: beyond int64_t, shortest paths do the job alone. */
static bool scaling_fits(const struct hrm_flow *g)
{
    return 48.0 * (double)g->n * (double)g->n * (double)(g->cost_max + 1) <= 1e18;
}

/*
 * Few distinct costs, fixed supplies: whether the simplex beats shortest paths
 * (measured over P1 shapes, docs/flow-solver.md "What auto runs").
 *
 * Size first: from AUTO_SIMPLEX_MAX_VERTICES vertices on, shortest paths.  The
 * simplex's pivots grow with the units and each walks and re-prices a part of
 * a spanning tree of every vertex, while shortest paths read the arcs in
 * order a few tens of times (one phase per distinct path length) and skip the
 * tasks that carry no flow (ssp_sum.c).  On P1 shapes the simplex still wins
 * by 1.1-2x at 45,000-52,000 vertices; from 64,000 on it is level or behind
 * by up to 1.8x on all but two of the shapes measured.
 *
 * Below that, where no units compete (every source's arcs hold exactly its
 * supply and every sink's cheapest in-arcs take all its demand: in P1, no more
 * tasks than GPUs), the simplex: since its start fills the arcs every feasible
 * flow fills, it is the faster or within 10 % on every such shape measured (up
 * to 2.8x ahead with a vertex per GPU) but one: a vertex per GPU with ten
 * times more GPUs than tasks (1.05-1.3x behind).
 *
 * Where units compete (a source's arcs hold more than its supply, or a sink's
 * cheapest in-arcs cannot take its demand: in P1 more tasks than GPUs, the
 * cheapest arcs into the sink being the unscheduled ones), the choice depends
 * on how many units are in excess of the places they compete for (P1: tasks
 * minus GPUs; the places are a competing sink's in-arcs above its lowest cost)
 * against how many places there are: the simplex wins while excess x
 * AUTO_EXCESS_PER_PLACE_SQUARED < places^2: above 1,000 places at twice as
 * many units as places, above 2,000 at 3 times, above 4,000 at 5 times;
 * shortest paths win by up to 5x with more excess or fewer places (the
 * simplex's pivots that exchange one unit for another multiply, shortest
 * paths route each distinct path length in one phase).  In max-flow form the units are not known before
 * the solve: shortest paths.
 */
static bool few_costs_simplex(const struct hrm_flow *g)
{
    if (g->mode != FLOW_MODE_SUPPLY || g->n >= AUTO_SIMPLEX_MAX_VERTICES)
        return false;
    int64_t units = 0, excess = 0;
    for (int32_t v = 0; v < g->n; v++) {
        int64_t b = g->supply[v];
        if (b > 0 && g->outcap[v] > b)
            excess = sum_add(excess, sum_sub(g->outcap[v], b));
        if (b > 0)
            units = sum_add(units, b);
    }
    if (units == 0)
        return false;
    /* per sink: the lowest cost into it, and the capacity at that cost */
    int64_t *low = hrm_calloc((size_t)g->n, sizeof(*low));
    int64_t *room = hrm_calloc((size_t)g->n, sizeof(*room));
    for (int32_t a = 0; a < g->m; a++) {
        int32_t v = g->ato[a];
        if (g->supply[v] >= 0 || g->acap[a] <= 0)
            continue;
        if (room[v] == 0 || g->acost[a] < low[v]) {
            low[v] = g->acost[a];
            room[v] = 0;
        }
        if (g->acost[a] == low[v])
            room[v] = sum_add(room[v], g->acap[a]);
    }
    /* places: a sink's demand where its cheapest arcs take it all, its
     * capacity above the lowest cost where they cannot */
    bool compete = excess > 0;
    int64_t places = 0;
    for (int32_t v = 0; v < g->n; v++) {
        if (g->supply[v] >= 0)
            continue;
        bool fits = room[v] >= -g->supply[v];
        compete = compete || !fits;
        places = sum_add(places, fits ? -g->supply[v] : sum_sub(g->incap[v], room[v]));
    }
    hrm_free(low);
    hrm_free(room);
    if (!compete)
        return true;
    if (units > places)
        excess = sum_add(excess, units - places);
    return (double)excess * AUTO_EXCESS_PER_PLACE_SQUARED < (double)places * (double)places;
}

/*
 * What HRM_FLOW_AUTO runs (measured: docs/flow-solver.md, "What auto runs").
 *
 * Warm: the network simplex when its last basis still fits the graph (only
 * capacities, costs or supplies changed since a simplex solve) and costs take
 * many values; otherwise shortest paths, which patch the last optimal state in
 * O(changes) whichever engine left it (a job's arrival, a node's loss: new
 * vertices and arcs).
 *
 * Cold: the number of shortest-path phases grows with the number of distinct
 * path lengths, so shortest paths win where costs take few values (scheduling
 * graphs: tens of distinct costs; up to 5x faster than the simplex where many
 * units compete for few places or the graph is large, the simplex elsewhere:
 * few_costs_simplex) and the simplex wins where they take many (random
 * families: thousands of distinct costs, 15-60x faster than shortest paths).  The threshold sits between the
 * two by a wide margin on every family of `hrm bench flow-gen`.  Among many
 * costs, the simplex's time grows faster with the graph than cost scaling's:
 * on gridgen and goto the simplex wins at 2,000-4,000 vertices (by 1.2-1.7x),
 * cost scaling at 8,000 (by 1.2-1.4x) and beyond; netgen crosses near 3,000.
 * AUTO_SCALING_VERTICES sits between those crossovers.
 */
static enum hrm_flow_algo auto_algo(const struct hrm_flow *g)
{
    /* After a solve on few costs, shortest paths patch the changes in
     * O(changes) whichever engine left the state; the simplex's warm start
     * walks its whole tree (O(n + m)). */
    if (g->warm)
        return flow_simplex_warm_ok(g) && !flow_simplex_few_costs(g)
                   ? HRM_FLOW_SIMPLEX
                   : HRM_FLOW_SSP;
    if (flow_distinct_costs(g) <= FLOW_FEW_COSTS)
        return few_costs_simplex(g) ? HRM_FLOW_SIMPLEX : HRM_FLOW_SSP;
    return g->n >= AUTO_SCALING_VERTICES && scaling_fits(g) ? HRM_FLOW_SCALING : HRM_FLOW_SIMPLEX;
}

static int run(struct hrm_flow *g, struct hrm_error *err)
{
    memset(&g->stats, 0, sizeof(g->stats));
    if (g->shape && !build_more(g))
        build(g);
    flow_scratch(g);
    /* the summaries of the tasks at changed arcs' ends are out of date,
     * whichever engine runs (ssp_sum.c) */
    for (size_t i = 0; i < g->ndirty; i++) {
        flow_sum_touch(g, g->afrom[g->dirty[i]]);
        flow_sum_touch(g, g->ato[g->dirty[i]]);
    }
    if (g->vdirty) {
        flow_sum_touch(g, g->vs);
        flow_sum_touch(g, g->vt);
    }
    enum hrm_flow_algo algo = g->algo == HRM_FLOW_AUTO ? auto_algo(g) : g->algo;
    if (algo == HRM_FLOW_SIMPLEX && flow_simplex_fits(g)) {
        flow_sum_forget(g->sum, false); /* the simplex moves flow anywhere */
        return flow_simplex(g, err);
    }
    flow_simplex_forget(g->ns);
    bool scaling = algo == HRM_FLOW_SCALING && scaling_fits(g);
    int rc;
    /* Cost scaling leaves exact potentials (scale.c), so after it, as after
     * shortest paths, a re-solve patches the changed arcs and routes only the
     * imbalance they leave: from scratch only when there is no warm state. */
    if (scaling && !g->warm) {
        zero_state(g);
        g->stats.scaling = 1;
        rc = flow_scaling(g, err);
        /* after a failure the partial state does not meet the invariants */
        g->warm = rc == 0;
        return rc;
    }
    g->stats.warm = g->warm;
    bool warm = g->warm;
    if (warm)
        apply_dirty(g);
    else
        cold_state(g);
    g->warm = true;
    /* A warm re-solve, whatever engine left the state, is shortest paths from
     * the kept potentials.  Warm cost-scaling phases were tried here for large
     * imbalances (removed since): after the sink-side pricing of new
     * vertices they lost 3-4x to shortest paths on every P1 shape measured
     * (each phase reads every arc; a job's arrival needs one search). */
    return flow_ssp(g, err);
}

int hrm_flow_solve(struct hrm_flow *g, struct hrm_error *err)
{
    int64_t sum = 0;
    for (int32_t v = 0; v < g->n; v++)
        sum += g->supply[v];
    if (sum != 0)
        return hrm_errorf(err, -HRM_EINFEASIBLE, "supplies sum to %lld, not 0", (long long)sum);
    set_mode_supply(g);
    g->value = 0;
    return run(g, err);
}

int hrm_flow_solve_max(struct hrm_flow *g, int32_t source, int32_t sink, struct hrm_error *err)
{
    if (source < 0 || source >= g->n || sink < 0 || sink >= g->n || source == sink)
        return hrm_errorf(err, -EINVAL, "flow: bad source %d or sink %d (%d vertices)", source,
                          sink, g->n);
    if ((g->n + 1) * g->cost_max >= FLOW_BIG)
        return hrm_errorf(err, -EOVERFLOW,
                          "flow: %d vertices x max |cost| %lld too large for solve_max", g->n,
                          (long long)g->cost_max);
    set_mode_max(g, source, sink);
    int rc = run(g, err);
    g->value = rc == 0 ? virtual_flow(g) : 0;
    return rc;
}
