/* Primal network simplex with block-search pivoting: the engine for general graphs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_private.h"
#include "hrm/alloc.h"

/*
 * The textbook primal network simplex (Ahuja, Magnanti and Orlin, ch. 11) on a
 * spanning tree rooted at an extra vertex, with the block-search pivot rule
 * that Kovács (2015) found fastest on most families: scan the arcs in blocks
 * of about sqrt(arcs), starting where the last scan stopped, and take the arc
 * of most negative reduced cost of the first block that has one.
 *
 * Arcs: the user's arcs 0 .. m-1, then the virtual arc t -> s of solve_max
 * (cost -FLOW_BIG, see flow_private.h), then one artificial arc per vertex
 * between it and the root (big-M, cost 0 towards the root or art_cost away from
 * it, unbounded).  The first basis is the star of artificial arcs, which is
 * strongly feasible; the leaving-arc rule (the last blocking arc met along the
 * cycle, oriented from the apex) keeps every later basis strongly feasible, so
 * degenerate pivots cannot cycle (Cunningham 1976).  Artificial arcs never
 * re-enter: once out of the basis they are gone.  An artificial arc that still
 * carries flow at the optimum means the supplies are infeasible.
 *
 * The tree: parent, the arc to the parent and its direction, and a preorder
 * thread (next and previous vertex in depth-first order, the size of each
 * subtree and its last vertex in the thread), so that every subtree is one
 * contiguous piece of the thread.  A pivot finds the apex by subtree sizes
 * (an ancestor's is larger), pushes the flow round the cycle, re-hangs the
 * subtree cut off by the leaving arc from the end of the entering arc
 * (reversing the parent links along the path between them and splicing the
 * thread in O(path)), then walks that subtree along the thread once to shift
 * its potentials: one dependent load per vertex.  (A first version kept depths
 * and child lists; walking those was 70 % of the time on NETGEN graphs.)
 */

enum { NS_UPPER = -1, NS_TREE = 0, NS_LOWER = 1 };

#define NS_INF INT64_MAX
#define NS_MIN_BLOCK 10
/* The block is this fraction of sqrt(arcs) when the costs take few values
 * (flow_distinct_costs <= FLOW_FEW_COSTS, the scheduling graphs): reduced costs
 * then tie so often that a larger block seldom finds a better arc, and the
 * pivots there are mostly degenerate and set by the graph, not by the choice:
 * P1's M graphs took as many pivots (within 5 %) with blocks of 0.35 to 4 x
 * sqrt(arcs), so the smaller block is 15-25 % less time (docs/flow-solver.md
 * "The network simplex").  Random families keep LEMON's 1. */
#define NS_FEW_COSTS_BLOCK 0.5
/* The pricing asks for the best arc's capacity every this many arcs (price_range) */
#define NS_PREFETCH 32
/* |potential of the root| allowed before renormalising: leaves 2^62 of room
 * for the tree's own spread (< 2^59, see flow_simplex_fits) */
#define NS_DRIFT ((int64_t)1 << 61)

struct flow_ns {
    int32_t n, m;         /* user vertices and arcs the basis was built for */
    int32_t nsearch;      /* arcs that may enter: user arcs + the virtual one */
    int32_t narc;         /* nsearch + n artificial arcs */
    int32_t vs, vt;       /* terminals of the virtual arc (vs < 0: none) */
    int64_t art_cost;
    size_t arc_cap, node_cap;
    int32_t *src, *tgt;
    int64_t *cap, *cost, *flow;
    int32_t *slot; /* per user arc: its index here (see load_arcs) */
    int8_t *state;
    /* the tree, over n + 1 vertices (the root is n) */
    /* parent and subtree size side by side: the apex search reads both of
     * each vertex it climbs, one cache line instead of two */
    struct ns_tnode {
        int32_t parent, succ;
    } *tn;
    int32_t *pred, *thread, *rthread, *last;
    int32_t *path, *path2, *plast, *pprev, *pafter; /* scratch of a pivot, per path vertex */
    int8_t *up; /* the arc to the parent leaves the vertex */
    /* per vertex, the flow and capacity of its arc to the parent (a copy that
     * the pivots keep; the arc's own flow is written back when it leaves the
     * tree and at the end): a pivot reads the cycle's arcs from this small
     * array, which stays in cache, instead of from the arc arrays at random */
    struct ns_room {
        int64_t flow, cap;
    } *room;
    int64_t *pi;
    int64_t *net; /* scratch of the warm start (and of the cold start's supplies) */
    int32_t *adj; /* scratch of the cold start: the arcs out of the vertices with supply */
    int32_t block, next;
    int64_t visits;
    int32_t cuts; /* tree arcs the last warm start took out */
    bool valid; /* the basis is the optimum of the graph's last solve */
    bool few_costs; /* the last solve's costs took few values (flow_distinct_costs) */
    /* tests only (flow_simplex_audit): check the basis after every pivot */
    bool audit;
    int64_t audits;
    char audit_why[160]; /* the first failure ("" while every check held) */
    int32_t *audit_pos;  /* scratch: each vertex's place in the thread, and the thread in order */
};

void flow_simplex_free(struct flow_ns *ns)
{
    if (!ns)
        return;
    void *arrays[] = {ns->src,   ns->tgt,   ns->slot,   ns->cap,    ns->cost, ns->flow, ns->state,
                      ns->tn, ns->pred, ns->thread, ns->rthread, ns->last,
                      ns->path, ns->path2, ns->plast, ns->pprev, ns->pafter,
                      ns->up,    ns->room,  ns->pi,    ns->net,   ns->audit_pos, ns->adj};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        hrm_free(arrays[i]);
    hrm_free(ns);
}

void flow_simplex_forget(struct flow_ns *ns)
{
    if (ns)
        ns->valid = false;
}

static void ns_size(struct flow_ns *ns, size_t arcs, size_t nodes)
{
    if (arcs > ns->arc_cap) {
        ns->src = hrm_reallocarray(ns->src, arcs, sizeof(*ns->src));
        ns->tgt = hrm_reallocarray(ns->tgt, arcs, sizeof(*ns->tgt));
        ns->slot = hrm_reallocarray(ns->slot, arcs, sizeof(*ns->slot));
        ns->cap = hrm_reallocarray(ns->cap, arcs, sizeof(*ns->cap));
        ns->cost = hrm_reallocarray(ns->cost, arcs, sizeof(*ns->cost));
        ns->flow = hrm_reallocarray(ns->flow, arcs, sizeof(*ns->flow));
        ns->state = hrm_reallocarray(ns->state, arcs, sizeof(*ns->state));
        ns->adj = hrm_reallocarray(ns->adj, arcs, sizeof(*ns->adj));
        ns->arc_cap = arcs;
    }
    if (nodes > ns->node_cap) {
        ns->tn = hrm_reallocarray(ns->tn, nodes, sizeof(*ns->tn));
        ns->pred = hrm_reallocarray(ns->pred, nodes, sizeof(*ns->pred));
        int32_t **i32[] = {&ns->thread, &ns->rthread, &ns->last,
                           &ns->path,   &ns->path2, &ns->plast,   &ns->pprev, &ns->pafter};
        for (size_t i = 0; i < sizeof(i32) / sizeof(i32[0]); i++)
            *i32[i] = hrm_reallocarray(*i32[i], nodes, sizeof(int32_t));
        ns->up = hrm_reallocarray(ns->up, nodes, sizeof(*ns->up));
        ns->room = hrm_reallocarray(ns->room, nodes, sizeof(*ns->room));
        ns->pi = hrm_reallocarray(ns->pi, nodes, sizeof(*ns->pi));
        ns->net = hrm_reallocarray(ns->net, nodes, sizeof(*ns->net));
        ns->node_cap = nodes;
    }
}

static inline void link(struct flow_ns *ns, int32_t a, int32_t b)
{
    ns->thread[a] = b;
    ns->rthread[b] = a;
}

static int64_t supply_of(const struct hrm_flow *g, int32_t v)
{
    return g->mode == FLOW_MODE_SUPPLY ? g->supply[v] : 0;
}

/* Sets vertex v's artificial arc to carry f units (either way) to or from the root. */
static void set_artificial(struct flow_ns *ns, int32_t v, int64_t f)
{
    int32_t e = ns->nsearch + v, root = ns->n;
    if (f >= 0) {
        ns->src[e] = v, ns->tgt[e] = root, ns->cost[e] = 0, ns->flow[e] = f;
        ns->up[v] = 1;
    } else {
        ns->src[e] = root, ns->tgt[e] = v, ns->cost[e] = ns->art_cost, ns->flow[e] = -f;
        ns->up[v] = 0;
    }
}

/*
 * Copies the user's arcs and the virtual arc; every one starts at flow 0.
 * The user's arcs are dealt out in a stride of max(3, m / n) slots, so that
 * the arcs a generator (or a scheduler) adds together -- those of one vertex,
 * or of one row of a grid -- fall into different blocks of the pricing scan
 * and a block samples the whole graph.
 */
static void load_arcs(struct flow_ns *ns, const struct hrm_flow *g)
{
    int32_t m = g->m, stride = ns->n > 0 ? m / ns->n : 0;
    if (stride < 3)
        stride = 3;
    for (int32_t a = 0, e = 0, row = 0; a < m; a++) {
        ns->slot[a] = e;
        ns->src[e] = g->afrom[a];
        ns->tgt[e] = g->ato[a];
        ns->cap[e] = g->acap[a];
        ns->cost[e] = g->acost[a];
        ns->flow[e] = 0;
        ns->state[e] = NS_LOWER;
        if ((e += stride) >= m)
            e = ++row;
    }
    if (ns->vs >= 0) {
        ns->src[g->m] = ns->vt;
        ns->tgt[g->m] = ns->vs;
        ns->cap[g->m] = g->vcap;
        ns->cost[g->m] = -FLOW_BIG;
        ns->flow[g->m] = 0;
        ns->state[g->m] = NS_LOWER;
    }
}

struct ns_by_cost {
    int64_t cost;
    int32_t e;
};

static int by_cost(const void *a, const void *b)
{
    const struct ns_by_cost *x = a, *y = b;
    return x->cost < y->cost ? -1 : x->cost > y->cost ? 1 : x->e < y->e ? -1 : x->e > y->e;
}

/* The user's arcs grouped by one end (end = ns->src or ns->tgt): those of
 * vertex v are list[off[v] .. off[v + 1]). */
static void arcs_by_vertex(const struct flow_ns *ns, int32_t m, const int32_t *end, int32_t *off,
                           int32_t *list)
{
    int32_t n = ns->n, *fill = ns->plast;
    for (int32_t v = 0; v <= n; v++)
        off[v] = 0;
    for (int32_t e = 0; e < m; e++)
        off[end[e] + 1]++;
    for (int32_t v = 0; v < n; v++) {
        off[v + 1] += off[v];
        fill[v] = off[v];
    }
    for (int32_t e = 0; e < m; e++)
        list[fill[end[e]]++] = e;
}

static void saturate(struct flow_ns *ns, int32_t e)
{
    ns->flow[e] = ns->cap[e];
    ns->state[e] = NS_UPPER;
    ns->net[ns->src[e]] -= ns->cap[e];
    ns->net[ns->tgt[e]] += ns->cap[e];
}

/* Sums of capacities stop here, and so does a demand the cold start builds up
 * (far inside int64_t): a vertex whose in-capacity reaches it is never forced. */
#define NS_MANY ((int64_t)1 << 62)

/*
 * The cold start's supplies, into ns->net: each vertex with supply sends it
 * down its cheapest out-arcs, saturating each (an arc out of the tree must
 * sit at a bound) while the supply left covers its capacity, and the heads
 * take it on as their own.  A scheduling graph's source fans out to its jobs
 * or tasks by arcs that together hold exactly its supply: the simplex would
 * otherwise spend a pivot bringing each of them in (and often a degenerate
 * one re-hanging it).  An arc saturated wrongly prices out like any other.
 *
 * Then the arcs that every feasible flow saturates, both ways down the graph:
 * a vertex that took on at least the capacity of all its out-arcs must fill
 * them all (a job whose tasks hold exactly what it received), and a vertex
 * whose demand is at least the capacity of all its in-arcs left unfilled must
 * take all they hold (a sink that every GPU must feed when tasks fill them),
 * and so on from the vertices at the other ends.  Unlike a greedy choice
 * (tried: 1.7x slower, docs/flow-solver.md), these arcs are at the optimum's
 * bound already: the simplex never brings them in to fill them.
 */
static void cold_supplies(struct flow_ns *ns, const struct hrm_flow *g)
{
    int32_t n = ns->n, m = g->m;
    int64_t *net = ns->net;
    bool any = false;
    for (int32_t v = 0; v < n; v++) {
        net[v] = supply_of(g, v);
        any |= net[v] > 0;
    }
    if (!any)
        return;
    int32_t *off = ns->pafter, *list = ns->adj;
    arcs_by_vertex(ns, m, ns->src, off, list);
    int32_t most = 0;
    for (int32_t v = 0; v < n; v++)
        if (net[v] > 0 && off[v + 1] - off[v] > most)
            most = off[v + 1] - off[v];
    struct ns_by_cost *arcs = hrm_reallocarray(NULL, (size_t)most + 1, sizeof(*arcs));
    /* queue: the vertices with supply, then those that must send all they can */
    int32_t *queue = ns->pprev, *seen = ns->path, tail = 0;
    for (int32_t v = 0; v < n; v++) {
        seen[v] = net[v] > 0;
        if (seen[v])
            queue[tail++] = v;
    }
    int32_t sources = tail;
    for (int32_t head = 0; head < tail; head++) {
        int32_t u = queue[head];
        if (head < sources) {
            int32_t k = 0;
            for (int32_t i = off[u]; i < off[u + 1]; i++)
                arcs[k++] = (struct ns_by_cost){ns->cost[list[i]], list[i]};
            qsort(arcs, (size_t)k, sizeof(*arcs), by_cost);
            for (int32_t i = 0; i < k && net[u] > 0; i++) {
                int32_t e = arcs[i].e;
                if (ns->tgt[e] != u && ns->cap[e] > 0 && ns->cap[e] <= net[u])
                    saturate(ns, e);
            }
        } else {
            for (int32_t i = off[u]; i < off[u + 1]; i++)
                if (ns->tgt[list[i]] != u && ns->cap[list[i]] > 0)
                    saturate(ns, list[i]);
        }
        for (int32_t i = off[u]; i < off[u + 1]; i++) {
            int32_t v = ns->tgt[list[i]];
            if (!seen[v] && net[v] > 0 && g->outcap[v] > 0 && g->outcap[v] <= net[v]) {
                seen[v] = 1;
                queue[tail++] = v;
            }
        }
    }
    hrm_free(arcs);
    /* the demand side: rest[v], the capacity into v not yet filled */
    arcs_by_vertex(ns, m, ns->tgt, off, list);
    int64_t *rest = ns->pi; /* free until cold_basis sets the potentials */
    for (int32_t v = 0; v < n; v++) {
        rest[v] = 0;
        for (int32_t i = off[v]; i < off[v + 1]; i++) {
            int32_t e = list[i];
            if (ns->src[e] != v && ns->state[e] == NS_LOWER)
                rest[v] = rest[v] + ns->cap[e] < NS_MANY ? rest[v] + ns->cap[e] : NS_MANY;
        }
    }
    tail = 0;
    for (int32_t v = 0; v < n; v++) {
        seen[v] = net[v] < 0 && rest[v] > 0 && rest[v] <= -net[v];
        if (seen[v])
            queue[tail++] = v;
    }
    for (int32_t head = 0; head < tail; head++) {
        int32_t v = queue[head];
        for (int32_t i = off[v]; i < off[v + 1]; i++) {
            int32_t e = list[i], u = ns->src[e];
            if (u == v || ns->state[e] != NS_LOWER || ns->cap[e] <= 0 ||
                net[u] - ns->cap[e] < -NS_MANY)
                continue;
            saturate(ns, e);
            if (!seen[u] && net[u] < 0 && rest[u] > 0 && rest[u] <= -net[u]) {
                seen[u] = 1;
                queue[tail++] = u;
            }
        }
    }
}

/* The star basis: every vertex hangs from the root by its artificial arc,
 * which carries its supply (after cold_supplies). */
static void cold_basis(struct flow_ns *ns, const struct hrm_flow *g)
{
    int32_t n = ns->n, root = n;
    load_arcs(ns, g);
    cold_supplies(ns, g);
    ns->tn[root].parent = -1;
    ns->pred[root] = -1;
    ns->pi[root] = 0;
    ns->tn[root].succ = n + 1;
    ns->last[root] = n > 0 ? n - 1 : root;
    link(ns, root, 0 < n ? 0 : root);
    for (int32_t v = 0; v < n; v++) {
        int32_t e = ns->nsearch + v;
        set_artificial(ns, v, ns->net[v]);
        ns->cap[e] = NS_INF;
        ns->state[e] = NS_TREE;
        ns->tn[v].parent = root;
        ns->pred[v] = e;
        ns->tn[v].succ = 1;
        ns->last[v] = v;
        link(ns, v, v + 1 < n ? v + 1 : root);
        ns->pi[v] = ns->up[v] ? 0 : ns->art_cost;
    }
    ns->next = 0;
}

/* Potentials from the root down, in thread order (parents first). */
static void tree_potentials(struct flow_ns *ns)
{
    int32_t root = ns->n;
    for (int32_t x = ns->thread[root]; x != root; x = ns->thread[x]) {
        int32_t p = ns->tn[x].parent, e = ns->pred[x];
        ns->pi[x] = ns->up[x] ? ns->pi[p] - ns->cost[e] : ns->pi[p] + ns->cost[e];
    }
}


/* The arc of most negative state x reduced cost among arcs lo .. hi, if below
 * *min.  A plain loop over one stretch of the arrays, with no test but the
 * minimum's: the compiler keeps it tight.  Every NS_PREFETCH arcs it asks for
 * the best arc's capacity, the one field of the entering arc that the pivot
 * reads and the scan does not (a cache miss that was a quarter of the pivots'
 * time on p1-rack M). */
static inline void price_range(const struct flow_ns *ns, int32_t lo, int32_t hi, int64_t *min,
                               int32_t *best)
{
    const int32_t *src = ns->src, *tgt = ns->tgt;
    const int64_t *cost = ns->cost, *pi = ns->pi;
    const int8_t *state = ns->state;
    int64_t m = *min;
    int32_t b = *best;
    for (int32_t e = lo; e < hi;) {
        for (int32_t end = hi - e > NS_PREFETCH ? e + NS_PREFETCH : hi; e < end; e++) {
            int64_t c = state[e] * (cost[e] + pi[src[e]] - pi[tgt[e]]);
            if (c < m)
                m = c, b = e;
        }
        if (b >= 0)
            __builtin_prefetch(&ns->cap[b]);
    }
    *min = m;
    *best = b;
}

/* Block search: the arc of most negative (state x reduced cost) in the first
 * block of the cyclic scan that has one; -1 when none is left (optimal).
 * (This and pivot are kept out of line so that a profile splits the time
 * between pricing and tree updates; inlining them measured no faster.) */
__attribute__((noinline)) static int32_t find_entering(struct flow_ns *ns)
{
    int32_t S = ns->nsearch, block = ns->block, best = -1;
    int64_t min = 0;
    int32_t e = ns->next;
    for (int32_t left = S; left > 0 && min == 0;) {
        int32_t len = block < left ? block : left, end = e + len;
        if (end <= S) {
            price_range(ns, e, end, &min, &best);
        } else {
            price_range(ns, e, S, &min, &best);
            end -= S;
            price_range(ns, 0, end, &min, &best);
        }
        e = end == S ? 0 : end;
        left -= len;
    }
    ns->next = e;
    return best;
}

/*
 * Cuts the subtree T of u_out off its parent and hangs it from v_in by arc
 * `in`, rooted at u_in (a vertex of T).  On the path u_in = x0, x1, .., xk =
 * u_out (given: path[0 .. k]) the parent links reverse.  path[k + 1 .. nold)
 * are u_out's old ancestors and other[0 .. nother) v_in and its ancestors,
 * each up to the apex (excluded): the subtrees whose sizes change.  T's new preorder is x0's old piece of the
 * thread, then for each xi the rest of xi's old piece around x(i-1)'s: the
 * part before it and the part after it.  Subtree sizes change on that path
 * and between the old and new parents and the apex; last vertices change on
 * the path and on the chains of ancestors whose piece ended where T's did.
 */
static void rehang(struct flow_ns *ns, const int32_t *path, int32_t k, int32_t nold,
                   const int32_t *other, int32_t nother, int32_t v_in, int32_t in)
{
    struct ns_tnode *tn = ns->tn;
    int32_t *pred = ns->pred, *last = ns->last;
    int32_t *thread = ns->thread, *rthread = ns->rthread;
    int32_t *plast = ns->plast, *pprev = ns->pprev, *pafter = ns->pafter;
    int8_t *up = ns->up;
    int32_t u_in = path[0], u_out = path[k];
    for (int32_t i = 0; i <= k; i++) {
        int32_t x = path[i];
        plast[i] = last[x];
        pprev[i] = rthread[x];
        pafter[i] = thread[last[x]];
    }
    int32_t s = tn[u_out].succ, oldp = tn[u_out].parent;
    int32_t lo = plast[k], prev_t = pprev[k], next_t = pafter[k];
    /* cut T out of the thread */
    link(ns, prev_t, next_t);
    for (int32_t y = oldp; y >= 0 && last[y] == lo; y = tn[y].parent)
        last[y] = prev_t;
    for (int32_t i = k + 1; i < nold; i++)
        tn[path[i]].succ -= s;
    /* T's new preorder */
    int32_t tail = plast[0];
    for (int32_t i = 1; i <= k; i++) {
        link(ns, tail, path[i]);
        tail = pprev[i - 1];
        if (plast[i - 1] != plast[i]) {
            link(ns, tail, pafter[i - 1]);
            tail = plast[i];
        }
    }
    /* sizes on the path, from u_out down, before the parents change */
    int32_t below = 0;
    for (int32_t i = k; i >= 1; i--) {
        int32_t ns_i = tn[path[i]].succ - tn[path[i - 1]].succ + below;
        tn[path[i]].succ = ns_i;
        below = ns_i;
    }
    tn[u_in].succ = s;
    /* reverse the parent links */
    int32_t newp = v_in, newpred = in;
    int8_t newup = ns->src[in] == u_in;
    for (int32_t i = 0; i <= k; i++) {
        int32_t x = path[i], opred = pred[x];
        int8_t oup = up[x];
        tn[x].parent = newp;
        pred[x] = newpred;
        up[x] = newup;
        last[x] = tail;
        newp = x;
        newpred = opred;
        newup = (int8_t)!oup;
    }
    /* hang T' at the end of v_in's piece */
    int32_t lv = last[v_in], after = thread[lv];
    link(ns, lv, u_in);
    link(ns, tail, after);
    for (int32_t y = v_in; y >= 0 && last[y] == lv; y = tn[y].parent)
        last[y] = tail;
    for (int32_t i = 0; i < nother; i++)
        tn[other[i]].succ += s;
}

/*
 * Warm start: the last optimal basis with the changed arcs and supplies put in.
 * A non-tree arc stays at its bound (an arc at its upper bound follows a new
 * capacity); the tree's flows are then what the supplies and the non-tree flows
 * force, computed from the leaves up.  An artificial arc may change direction;
 * a tree arc that would leave its bounds (a task's arc whose capacity went to
 * 0, say) goes to the nearest bound and out of the tree, and the subtree below
 * it hangs from the root by its artificial arc, which carries the difference.
 * Artificial flow is priced out again by big-M, usually in a few pivots.  Then
 * the potentials follow from the tree.  O(n + m).
 */
static void warm_basis(struct flow_ns *ns, struct hrm_flow *g)
{
    int32_t n = ns->n, root = n;
    for (size_t i = 0; i < g->ndirty; i++) {
        int32_t a = g->dirty[i], e = ns->slot[a];
        ns->cap[e] = g->acap[a];
        ns->cost[e] = g->acost[a];
        if (ns->state[e] == NS_UPPER)
            ns->flow[e] = g->acap[a];
    }
    if (ns->vs >= 0 && ns->cap[g->m] != g->vcap) {
        ns->cap[g->m] = g->vcap;
        if (ns->state[g->m] == NS_UPPER)
            ns->flow[g->m] = g->vcap;
    }
    int64_t *net = ns->net;
    for (int32_t v = 0; v < n; v++)
        net[v] = supply_of(g, v);
    net[root] = 0;
    for (int32_t a = 0; a < ns->nsearch; a++) {
        if (ns->state[a] != NS_TREE && ns->flow[a]) {
            net[ns->src[a]] -= ns->flow[a];
            net[ns->tgt[a]] += ns->flow[a];
        }
    }
    /* children before parents: the thread backwards */
    int32_t *cut = g->list, ncut = 0;
    for (int32_t v = ns->rthread[root]; v != root; v = ns->rthread[v]) {
        int32_t e = ns->pred[v];
        int64_t out = net[v]; /* what the subtree of v must send to its parent */
        if (e >= ns->nsearch) {
            net[ns->tn[v].parent] += out;
            set_artificial(ns, v, out);
            continue;
        }
        int64_t f = ns->up[v] ? out : -out;
        if (f < 0 || f > ns->cap[e]) {
            /* e cannot carry it: e goes to its nearest bound and the subtree
             * will hang from the root by its artificial arc, which takes the
             * rest (big-M prices it out again) */
            f = f < 0 ? 0 : ns->cap[e];
            int64_t sent = ns->up[v] ? f : -f;
            set_artificial(ns, v, out - sent);
            cut[ncut++] = v;
            out = sent;
        }
        net[ns->tn[v].parent] += out;
        ns->flow[e] = f;
    }
    for (int32_t i = 0; i < ncut; i++) {
        int32_t v = cut[i], e = ns->pred[v], art = ns->nsearch + v;
        ns->state[e] = ns->flow[e] == 0 ? NS_LOWER : NS_UPPER;
        ns->state[art] = NS_TREE;
        ns->cap[art] = NS_INF;
        int32_t nold = 0;
        for (int32_t y = v; y != root; y = ns->tn[y].parent)
            ns->path[nold++] = y;
        rehang(ns, ns->path, 0, nold, NULL, 0, root, art);
    }
    ns->cuts = ncut;
    tree_potentials(ns);
}

/* The tree arcs' flows and capacities into ns->room, and (room_store) the
 * arcs' own flows back: the tree arcs' from ns->room, the others' from the
 * bound their state names (a pivot does not write them: see pivot). */
static void room_load(struct flow_ns *ns)
{
    for (int32_t v = 0; v < ns->n; v++) {
        int32_t e = ns->pred[v];
        ns->room[v] = (struct ns_room){ns->flow[e], ns->cap[e]};
    }
}

static void room_store(struct flow_ns *ns)
{
    for (int32_t e = 0; e < ns->narc; e++)
        if (ns->state[e] != NS_TREE)
            ns->flow[e] = ns->state[e] == NS_UPPER ? ns->cap[e] : 0;
    for (int32_t v = 0; v < ns->n; v++)
        ns->flow[ns->pred[v]] = ns->room[v].flow;
}

/* The cycle's bottleneck over tree path vertices p[0 .. k) (their arcs to the
 * parent): the residual capacity of each in the cycle's direction, which is
 * the flow where the arc points that way (`toward` == up) and cap - flow where
 * not; `last` keeps the last of equal minima, else the first.  Branch-free in
 * the direction (it changes from vertex to vertex at random). */
static inline void bottleneck(const struct flow_ns *ns, const int32_t *p, int32_t k,
                              int8_t toward, bool last, int64_t *delta, int32_t *at)
{
    const int8_t *up = ns->up;
    const struct ns_room *room = ns->room;
    for (int32_t i = 0; i < k; i++) {
        int64_t f = room[p[i]].flow, c = room[p[i]].cap;
        int64_t with = -(int64_t)(up[p[i]] == toward); /* all ones when flow is the room */
        int64_t d = (f & with) | ((c - f) & ~with);
        if (d < *delta || (last && d == *delta))
            *delta = d, *at = i;
    }
}

/* Pushes delta round the cycle's side p[0 .. k): arcs that point `toward`
 * lose it, the others gain it. */
static inline void push_side(struct flow_ns *ns, const int32_t *p, int32_t k, int8_t toward,
                             int64_t delta)
{
    const int8_t *up = ns->up;
    struct ns_room *room = ns->room;
    for (int32_t i = 0; i < k; i++)
        room[p[i]].flow += up[p[i]] == toward ? -delta : delta;
}

/* Adds sigma to the potentials of the k vertices of the thread from `from` to
 * `to`: from both ends at once, forwards by thread and backwards by rthread,
 * two independent chains of loads instead of one twice as long (the walk is
 * bound by the latency of each next-vertex load). */
static inline void shift_stretch(struct flow_ns *ns, int32_t from, int32_t to, int32_t k,
                                 int64_t sigma)
{
    const int32_t *thread = ns->thread, *rthread = ns->rthread;
    int64_t *pi = ns->pi;
    int32_t x = from, y = to;
    for (int32_t i = k / 2; i > 0; i--) {
        pi[x] += sigma;
        pi[y] += sigma;
        x = thread[x];
        y = rthread[y];
    }
    if (k % 2)
        pi[x] += sigma; /* x == y: the middle one */
}

/* One pivot on entering arc `in`; returns true when the tree changed. */
__attribute__((noinline)) static bool pivot(struct flow_ns *ns, int32_t in)
{
    const struct ns_tnode *tn = ns->tn;
    int32_t *pa = ns->path, *pb = ns->path2;
    int32_t first, second;
    if (ns->state[in] == NS_LOWER)
        first = ns->src[in], second = ns->tgt[in];
    else
        first = ns->tgt[in], second = ns->src[in];
    /* Up to the apex from both ends, the smaller subtree first (it is not an
     * ancestor of the other), recording each side's vertices so that the
     * walks below read them without chasing parent links again. */
    int32_t a = first, b = second, na = 0, nb = 0;
    while (a != b) {
        if (tn[a].succ < tn[b].succ)
            pa[na++] = a, a = tn[a].parent;
        else
            pb[nb++] = b, b = tn[b].parent;
    }
    /* The cycle carries flow from first over `in` to second, up to the apex
     * and down to first.  Ties: the last blocking arc in that orientation
     * (the first one met up from first, the last one up from second) keeps
     * the tree strongly feasible. */
    int64_t cap_in = ns->cap[in], delta = cap_in;
    int32_t ia = -1, ib = -1;
    bottleneck(ns, pa, na, 1, false, &delta, &ia);
    bottleneck(ns, pb, nb, 0, true, &delta, &ib);
    int side = ib >= 0 ? 2 : ia >= 0 ? 1 : 0;
    if (delta > 0) {
        push_side(ns, pa, na, 1, delta);
        push_side(ns, pb, nb, 0, delta);
    }
    if (side == 0) { /* the entering arc itself blocks: it goes to its other bound */
        ns->state[in] = (int8_t)-ns->state[in];
        return false;
    }
    /* An arc out of the tree sits at the bound its state names: its flow is
     * not read or written here (room_store writes it at the end), which
     * spares a cache miss on the entering and the leaving arc alike. */
    int64_t flow_in = ns->state[in] == NS_LOWER ? delta : cap_in - delta;
    int32_t *pred = ns->pred;
    int8_t *up = ns->up;
    const int32_t *path = side == 1 ? pa : pb;
    int32_t k = side == 1 ? ia : ib, u_out = path[k];
    int32_t out = pred[u_out];
    ns->state[out] = ns->room[u_out].flow == 0 ? NS_LOWER : NS_UPPER;
    ns->state[in] = NS_TREE;
    /* the arcs to the parents move one vertex down the re-hung path */
    for (int32_t i = k; i > 0; i--)
        ns->room[path[i]] = ns->room[path[i - 1]];
    ns->room[path[0]] = (struct ns_room){flow_in, cap_in};
    int32_t u_in = side == 1 ? first : second, v_in = side == 1 ? second : first;
    if (side == 1)
        rehang(ns, pa, k, na, pb, nb, v_in, in);
    else
        rehang(ns, pb, k, nb, pa, na, v_in, in);
    /* the subtree's potentials all shift by one amount: make `in` tight */
    int64_t *pi = ns->pi;
    int64_t want = up[u_in] ? pi[v_in] - ns->cost[in] : pi[v_in] + ns->cost[in];
    int64_t sigma = want - pi[u_in];
    int32_t root = ns->n, s = tn[u_in].succ;
    if (2 * s <= ns->n + 1) {
        shift_stretch(ns, u_in, ns->last[u_in], s, sigma);
        ns->visits += s;
        return true;
    }
    /* Only differences of potentials matter: when the subtree is the larger
     * part, shift the rest the other way (the root's potential drifts; it is
     * brought back to 0 before it could approach the int64_t range). */
    shift_stretch(ns, ns->thread[ns->last[u_in]], ns->rthread[u_in], ns->n + 1 - s, -sigma);
    ns->visits += ns->n + 1 - s;
    if (pi[root] > NS_DRIFT || pi[root] < -NS_DRIFT) {
        int64_t p0 = pi[root];
        for (int32_t v = 0; v <= root; v++)
            pi[v] -= p0;
    }
    return true;
}

/* Writes the basis's flow and potentials into the residual graph, so that the
 * other engines (and a later warm shortest-path solve) see an optimal state:
 * every residual reduced cost >= 0 and, when feasible, no excess left. */
static void store_state(struct flow_ns *ns, struct hrm_flow *g)
{
    for (int32_t a = 0; a < g->m; a++) {
        int32_t f = g->apos[a];
        int64_t x = ns->flow[ns->slot[a]];
        g->rcost[f] = g->acost[a];
        g->rcost[g->rev[f]] = -g->acost[a];
        g->rcap[f] = g->acap[a] - x;
        g->rcap[g->rev[f]] = x;
        g->adirty[a] = 0;
    }
    g->ndirty = 0;
    if (g->vpos >= 0) {
        g->rcap[g->vpos] = g->vcap - ns->flow[g->m];
        g->rcap[g->rev[g->vpos]] = ns->flow[g->m];
    }
    g->vdirty = false;
    for (size_t i = 0; i < g->npend; i++)
        g->vpend[g->pend[i]] = 0;
    g->npend = 0;
    /* an artificial arc's flow is supply (or demand) the user's arcs did not route */
    int64_t p0 = ns->pi[ns->n]; /* report potentials with the root at 0 */
    for (int32_t v = 0; v < ns->n; v++) {
        int32_t e = ns->nsearch + v;
        g->vx[v].pi = ns->pi[v] - p0;
        g->ex[v] = ns->up[v] ? ns->flow[e] : -ns->flow[e];
        if (g->ex[v])
            flow_pend(g, v);
    }
}

/* The basis of the last (successful) simplex solve, for the graph as it is now. */
static bool basis_fits(const struct flow_ns *ns, const struct hrm_flow *g)
{
    int32_t vs = g->mode == FLOW_MODE_MAX ? g->vs : -1;
    return ns && ns->valid && ns->n == g->n && ns->m == g->m && ns->vs == vs &&
           (vs < 0 || ns->vt == g->vt);
}

bool flow_simplex_warm_ok(const struct hrm_flow *g)
{
    return g->warm && basis_fits(g->ns, g);
}

bool flow_simplex_few_costs(const struct hrm_flow *g)
{
    return g->ns && g->ns->few_costs;
}

bool flow_simplex_fits(const struct hrm_flow *g)
{
    /* potentials stay within art_cost + n max|cost| + FLOW_BIG; reduced costs
     * within twice that: far inside int64_t when art_cost < 2^58 */
    double art = ((double)g->n + 2) * ((double)g->cost_max + 1);
    return art < (double)((int64_t)1 << 55);
}

/*
 * Tests' audit of the basis (flow_simplex_audit): the thread is one cycle
 * through the n + 1 vertices from the root and rthread its inverse; it is a
 * preorder of the parent links whose subtree sizes are succ and whose subtree
 * ends are last (every vertex comes after its parent, each subtree's stretch
 * of the thread lies inside its parent's, and sizes add up: then the
 * descendants of each vertex fill its stretch exactly); each vertex's pred arc
 * joins it to its parent in direction up and is a tree arc; every other arc
 * sits at the bound its state says, tree arcs within theirs; every vertex is
 * balanced against its supply; tree arcs have reduced cost 0; and with
 * `strong`, the basis is strongly feasible (each tree arc can carry more
 * towards the root).  Returns false with the reason in ns->audit_why.
 */
static bool audit_fail(struct flow_ns *ns, const char *what, int32_t x, int64_t a, int64_t b)
{
    snprintf(ns->audit_why, sizeof(ns->audit_why), "after %lld checks: %s (%d: %lld, %lld)",
             (long long)ns->audits, what, x, (long long)a, (long long)b);
    return false;
}

static bool audit_tree(struct flow_ns *ns, const struct hrm_flow *g, bool strong)
{
    int32_t n = ns->n, root = n;
    int32_t *pos = ns->audit_pos, *order = pos + n + 1;
    for (int32_t v = 0; v <= n; v++)
        pos[v] = -1;
    int32_t k = 0;
    for (int32_t x = root; k <= n; x = ns->thread[x], k++) {
        if (x < 0 || x > n || pos[x] >= 0)
            return audit_fail(ns, "the thread repeats a vertex or leaves the range", x, k, 0);
        if (ns->rthread[ns->thread[x]] != x)
            return audit_fail(ns, "rthread is not thread's inverse", x, ns->thread[x], 0);
        pos[x] = k;
        order[k] = x;
    }
    if (ns->tn[root].succ != n + 1)
        return audit_fail(ns, "the root's subtree is not every vertex", root, ns->tn[root].succ, 0);
    int64_t *kids = ns->net; /* sum of the children's sizes */
    for (int32_t v = 0; v <= n; v++)
        kids[v] = 0;
    for (int32_t x = 0; x < n; x++) {
        int32_t p = ns->tn[x].parent, e = ns->pred[x];
        if (p < 0 || p > n || pos[p] >= pos[x])
            return audit_fail(ns, "a parent does not come before its child", x, p, 0);
        if (ns->tn[x].succ < 1 || pos[x] + ns->tn[x].succ > pos[p] + ns->tn[p].succ)
            return audit_fail(ns, "a subtree's stretch leaves its parent's", x, ns->tn[x].succ, p);
        kids[p] += ns->tn[x].succ;
        int32_t from = ns->up[x] ? x : p, to = ns->up[x] ? p : x;
        if (e < 0 || e >= ns->narc || ns->src[e] != from || ns->tgt[e] != to ||
            ns->state[e] != NS_TREE)
            return audit_fail(ns, "the arc to the parent is not a tree arc between them", x, e, p);
        if (ns->room[x].cap != ns->cap[e])
            return audit_fail(ns, "the copy of a tree arc's capacity is stale", x, ns->room[x].cap,
                              ns->cap[e]);
    }
    for (int32_t v = 0; v <= n; v++) {
        if (kids[v] + 1 != ns->tn[v].succ)
            return audit_fail(ns, "a subtree size is not 1 + its children's", v, ns->tn[v].succ,
                              kids[v]);
        int32_t end = order[pos[v] + ns->tn[v].succ - 1];
        if (ns->last[v] != end)
            return audit_fail(ns, "last is not the end of the subtree's stretch", v, ns->last[v],
                              end);
    }
    int64_t *bal = kids;
    for (int32_t v = 0; v < n; v++)
        bal[v] = supply_of(g, v);
    bal[root] = 0;
    int32_t trees = 0;
    for (int32_t e = 0; e < ns->narc; e++) {
        int64_t f = ns->flow[e], c = ns->cap[e];
        bool art = e >= ns->nsearch;
        if (ns->state[e] == NS_TREE) {
            trees++;
            int64_t rc = ns->cost[e] + ns->pi[ns->src[e]] - ns->pi[ns->tgt[e]];
            if (rc != 0)
                return audit_fail(ns, "a tree arc's reduced cost is not 0", e, rc, 0);
            if (f < 0 || f > c)
                return audit_fail(ns, "a tree arc's flow leaves its bounds", e, f, c);
        } else if (art) {
            if (f != 0)
                return audit_fail(ns, "an artificial arc out of the tree carries flow", e, f, 0);
            continue;
        } else if (f != (ns->state[e] == NS_UPPER ? c : 0)) {
            return audit_fail(ns, "an arc out of the tree is not at its bound", e, f, c);
        }
        bal[ns->src[e]] -= f;
        bal[ns->tgt[e]] += f;
    }
    if (trees != n)
        return audit_fail(ns, "the tree does not have n arcs", root, trees, n);
    for (int32_t v = 0; v <= n; v++)
        if (bal[v] != 0)
            return audit_fail(ns, "a vertex is not balanced", v, bal[v], 0);
    for (int32_t x = 0; strong && x < n; x++) {
        int32_t e = ns->pred[x];
        int64_t room = ns->up[x] ? ns->cap[e] - ns->flow[e] : ns->flow[e];
        if (room <= 0)
            return audit_fail(ns, "the basis is not strongly feasible", x, e, room);
    }
    ns->audits++;
    return true;
}

static void audit(struct flow_ns *ns, const struct hrm_flow *g, bool strong)
{
    if (ns->audit && !ns->audit_why[0]) {
        room_store(ns);
        ns->audit_pos = hrm_reallocarray(ns->audit_pos, 2 * ((size_t)ns->n + 1), sizeof(int32_t));
        audit_tree(ns, g, strong);
    }
}

void flow_simplex_audit(struct hrm_flow *g, bool on)
{
    if (!g->ns)
        g->ns = hrm_calloc(1, sizeof(*g->ns));
    g->ns->audit = on;
    g->ns->audits = 0;
    g->ns->audit_why[0] = '\0';
}

const char *flow_simplex_audit_failure(const struct hrm_flow *g, int64_t *audits)
{
    if (audits)
        *audits = g->ns ? g->ns->audits : 0;
    return g->ns && g->ns->audit_why[0] ? g->ns->audit_why : NULL;
}

int flow_simplex(struct hrm_flow *g, struct hrm_error *err)
{
    if (!g->ns)
        g->ns = hrm_calloc(1, sizeof(*g->ns));
    struct flow_ns *ns = g->ns;
    int32_t vs = g->mode == FLOW_MODE_MAX ? g->vs : -1;
    bool same = g->warm && basis_fits(ns, g);
    ns->n = g->n;
    ns->m = g->m;
    ns->vs = vs;
    ns->vt = vs >= 0 ? g->vt : -1;
    ns->nsearch = g->m + (vs >= 0 ? 1 : 0);
    ns->narc = ns->nsearch + g->n;
    /* big-M: an artificial arc must cost more than any path of user arcs, and in
     * max mode more than a path through the virtual arc too */
    int64_t art = ((int64_t)g->n + 2) * (g->cost_max + 1);
    if (vs >= 0)
        art += FLOW_BIG;
    ns_size(ns, (size_t)ns->narc, (size_t)g->n + 1);
    ns->art_cost = art; /* a warm basis re-prices its artificial arcs */
    bool warm = same;
    if (warm)
        warm_basis(ns, g);
    if (!warm)
        cold_basis(ns, g);
    room_load(ns);
    ns->valid = false;
    double b = sqrt((double)ns->nsearch);
    ns->few_costs = flow_distinct_costs(g) <= FLOW_FEW_COSTS;
    if (ns->few_costs)
        b *= NS_FEW_COSTS_BLOCK;
    ns->block = b < NS_MIN_BLOCK ? NS_MIN_BLOCK : (int32_t)b;
    if (ns->block > ns->nsearch && ns->nsearch > 0)
        ns->block = ns->nsearch;
    g->stats.warm = warm;
    g->stats.simplex = 1;
    int64_t pivots = 0, changes = 0;
    if (ns->nsearch > 0) {
        audit(ns, g, !warm);
        for (int32_t in; !ns->audit_why[0] && (in = find_entering(ns)) >= 0; pivots++) {
            changes += pivot(ns, in);
            audit(ns, g, !warm);
        }
    }
    g->stats.phases = pivots;
    g->stats.scanned = ns->visits;
    ns->visits = 0;
    g->stats.augmentations = changes;
    if (ns->audit_why[0]) /* tests only: a broken basis may never reach an optimum */
        return hrm_errorf(err, -HRM_ESTATE, "flow: simplex basis audit: %s", ns->audit_why);
    room_store(ns);
    store_state(ns, g);
    g->warm = true;
    int32_t bad = -1;
    int64_t left = 0;
    for (int32_t v = 0; v < g->n; v++)
        if (g->ex[v] > 0) {
            left += g->ex[v];
            if (bad < 0)
                bad = v;
        }
    if (bad >= 0)
        return hrm_errorf(err, -HRM_EINFEASIBLE,
                          "flow: %lld units of supply cannot reach any demand (vertex %d "
                          "has %lld of them)",
                          (long long)left, bad, (long long)g->ex[bad]);
    ns->valid = true;
    return 0;
}
