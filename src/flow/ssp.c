/* Successive shortest paths from the current flow and potentials: the solver's main engine. */
#include "ssp_sum.h"
#include "hrm/alloc.h"

/*
 * Primal-dual: one Dijkstra search on reduced costs from every vertex with
 * excess at once, until the deficits it settled could absorb all the excess
 * (distance D); the settled vertices' potentials move by their distance minus
 * D, which keeps every reduced cost >= 0 and gives every shortest path to a
 * settled deficit reduced cost 0.  Then flow goes along the search tree's
 * paths, and what they cannot carry goes by depth-first search, then blocking
 * flows (Dinic), over arcs of reduced cost 0 inside the settled region, so one
 * search serves many paths.
 * Tasks that carry no flow are not searched: their owners' summary edges
 * stand for them and the arcs into them are hidden (ssp_sum.c).
 * After a small change only a small region has excess and deficit and a phase
 * or two finish the job; a cold start (see cold_state in flow.c) spreads the
 * excess over many vertices so that its phases route thousands of units each.
 *
 * vx[v].hpos: INHEAP (labelled: in the queue, or left in it when the search
 * stopped), SETTLED or ONPATH (on the depth-first path); meaningful only
 * when vx[v].stamp == the phase's epoch.  After the search only SETTLED and
 * ONPATH are told apart, so the labels left in the queue keep INHEAP (a
 * sweep that marked them, over the queue's buckets, was a cache miss per
 * label for nothing).
 */

#define INHEAP 0
#define SETTLED (-1)
#define ONPATH (-2)

/* Summaries of flow-free tasks (ssp_sum.c) up to this many vertices.  Measured
 * (docs/flow-solver.md, "Summaries of flow-free tasks"): on the 2,000-GPU P1
 * graph (12,754 vertices) they make full solves and batches 15-30 % cheaper;
 * on the 50,000-GPU one (152,000 vertices, half the tasks placed) full
 * solves 30-60 % dearer and task ends 1.5x (slot swaps were 13 % of it, and
 * the depth-first passes took other paths), so larger graphs run without. */
#define FLOW_SUM_MAX_VERTICES 65536

/* Depth-first routing: passes per phase before Dinic's algorithm takes over,
 * and the longest path it follows (see augment_dfs). */
#define DFS_PASSES 3
#define DFS_DEPTH 1024

/*
 * A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan) on the labels: Dijkstra's
 * labels only grow, so an item lives in the bucket of the highest bit in which
 * it differs from the last label taken, and moves only down.  Pushes are O(1),
 * decrease-key pushes a fresh copy (stale copies are skipped when taken), and
 * a search no longer pays a heap's random walks: it made searches ~30 % faster
 * than a 4-ary heap with positions.
 * A search that stops at the first deficit takes ties of the smallest key
 * (bucket 0) first in, first out: after a scheduler's changes most of what
 * carries flow ties at one distance, and it then meets the deficits fewest
 * arcs from the sources first, where last in, first out dived into each tie's
 * descendants before its siblings (docs/flow-solver.md, "2026-11-27
 * (later)").  A cold start's searches keep last in, first out: first in,
 * first out made the 2,000-GPU full solve 10-25 % dearer.
 */
struct radix_item {
    int64_t key;
    int32_t v;
};

struct flow_radix {
    struct radix_item *b[65];
    size_t n[65], cap[65];
    size_t h0;  /* with fifo, bucket 0 (the ties of the smallest key) is taken from here on */
    bool fifo; /* ties first in, first out (else last in, first out) */
    int64_t last;
    size_t count;
};

void flow_ssp_free(struct flow_radix *rq)
{
    if (!rq)
        return;
    for (int i = 0; i < 65; i++)
        hrm_free(rq->b[i]);
    hrm_free(rq);
}

static inline int radix_bucket(int64_t key, int64_t last)
{
    uint64_t x = (uint64_t)key ^ (uint64_t)last;
    return x ? 64 - __builtin_clzll(x) : 0;
}

static inline void radix_push(struct flow_radix *q, int64_t key, int32_t v)
{
    int i = radix_bucket(key, q->last);
    if (q->n[i] == q->cap[i])
        HRM_GROW(q->b[i], q->cap[i], q->n[i] + 1);
    q->b[i][q->n[i]++] = (struct radix_item){key, v};
    q->count++;
}

/* Takes an item of the smallest key; q must not be empty. */
static inline struct radix_item radix_pop(struct flow_radix *q)
{
    if (q->fifo && q->h0 == q->n[0])
        q->h0 = q->n[0] = 0;
    if (q->n[0] == 0) {
        int i = 1;
        while (q->n[i] == 0)
            i++;
        struct radix_item *items = q->b[i];
        size_t n = q->n[i];
        int64_t min = items[0].key;
        for (size_t k = 1; k < n; k++)
            if (items[k].key < min)
                min = items[k].key;
        q->last = min;
        q->n[i] = 0;
        q->count -= n;
        for (size_t k = 0; k < n; k++)
            radix_push(q, items[k].key, items[k].v);
    }
    q->count--;
    return q->fifo ? q->b[0][q->h0++] : q->b[0][--q->n[0]];
}

static void radix_clear(struct flow_radix *q)
{
    for (int i = 0; i < 65; i++)
        q->n[i] = 0;
    q->count = 0;
    q->last = 0;
    q->h0 = 0;
}

static void next_epoch(struct hrm_flow *g)
{
    if (g->epoch == INT32_MAX) {
        for (size_t v = 0; v < g->vcap_n; v++)
            g->vx[v].stamp = 0;
        g->epoch = 0;
    }
    g->epoch++;
}

static int64_t dist_max(const struct hrm_flow *g, int32_t nset)
{
    int64_t m = 0;
    for (int32_t i = 0; i < nset; i++)
        if (g->vx[g->list[i]].dist > m)
            m = g->vx[g->list[i]].dist;
    return m;
}

/* A residual arc (e >= 0) or a summary edge (e <= -2) of the routing. */
static inline int32_t e_head(const struct hrm_flow *g, int32_t e)
{
    return e >= 0 ? g->head[e] : flow_sum_edge(g, -2 - e)->x;
}

static inline int32_t e_tail(const struct hrm_flow *g, int32_t e)
{
    return e >= 0 ? g->tail[e] : flow_sum_edge(g, -2 - e)->job;
}

/* The end of u's arcs for the current-arc pointers: its residual arcs (those
 * in [first[u], lim[u]) are the ones not hidden), then its summary edges
 * (cur[u] - first[u + 1] is the edge's index). */
static inline int32_t arcs_end(const struct hrm_flow *g, int32_t u, int32_t *b0)
{
    int32_t nb = 0;
    *b0 = 0;
    if (g->vx[u].sum > 0)
        flow_sum_edges(g, u, b0, &nb);
    return g->first[u + 1] + nb;
}

/* The search's relaxation of owner u's summary edges (base: u's distance plus
 * potential): a task's potential cancels out of the path through it.  With
 * near (a search that stops at the first deficit), labels from *bound on
 * (the nearest labelled deficit's) are not made (see search).  Returns the
 * edges read. */
static int32_t relax_summary(struct hrm_flow *g, int32_t u, int64_t base, int32_t *near,
                             int64_t *bound)
{
    struct flow_vx *vx = g->vx;
    int32_t epoch = g->epoch, b0, nb;
    const struct flow_sum_bucket *bk = flow_sum_edges(g, u, &b0, &nb);
    /* the bound in a register and the labels counted locally: read through
     * their pointers, both were loaded again after every store of the loop
     * (the loop took 21 instructions an edge) */
    int64_t lim = near ? *bound : INT64_MAX;
    int64_t labels = 0;
    for (int32_t k = 0; k < nb; k++) {
        int64_t c = bk[k].cost;
        if (c == INT64_MAX)
            continue;
        int32_t x = bk[k].x;
        struct flow_vx *w = &vx[x];
        int64_t nd = base + c - w->pi;
        if (near && nd >= lim)
            continue;
        if (w->stamp != epoch) {
            w->stamp = epoch;
            w->hpos = INHEAP;
        } else if (w->hpos != INHEAP || nd >= w->dist) {
            continue;
        }
        w->dist = nd;
        w->pred = -2 - (b0 + k);
        radix_push(g->rq, nd, x);
        labels++;
        if (near && g->ex[x] < 0) {
            *near = x; /* nd < lim: the nearest so far */
            *bound = lim = nd;
        }
    }
    g->ssp_labels += labels;
    return nb;
}

/*
 * Dijkstra from the sources; returns the number of settled vertices (in
 * g->list) and sets *dmax to the distance D that caps the new potentials, or
 * returns -1 when no deficit is reachable.  With much excess (more than
 * n/16 units: a cold start and its first phases) the search goes on until
 * the deficits found could absorb every excess and settles every vertex at
 * that distance D, and the tree flow serves thousands of deficits at many
 * distances.  With little (a re-solve after changes) it stops at the first
 * deficit: after a change, what carries flow sits at one distance from the
 * sources (the aggregators and the sink join it), and settling all of it to
 * count deficits cost every search of a re-solve that whole region; the
 * vertices at D it leaves keep their potentials (d - D = 0) and the routing
 * reaches them by their arcs of reduced cost 0 instead (admit).  A deficit
 * closer than D is expanded like any vertex, because the new potentials need
 * exact distances below D.  A labelled deficit whose label ties with the
 * smallest key is settled at once: among the ties any one would do, and the
 * deficit ends the search where the others would read on.
 */
static int32_t search(struct hrm_flow *g, const int32_t *src, int32_t nsrc, int64_t *dmax)
{
    if (!g->rq)
        g->rq = hrm_calloc(1, sizeof(*g->rq));
    struct flow_radix *q = g->rq;
    int32_t *list = g->list;
    struct flow_vx *vx = g->vx;
    const int32_t *first = g->first, *head = g->head, *live = flow_sum_live(g);
    const int64_t *rcap = g->rcap, *rcost = g->rcost, *ex = g->ex;
    int32_t epoch = g->epoch;
    int32_t nset = 0;
    int64_t need = 0, D = -1, dlast = -1, reads = 0, labels = nsrc;
    /* flow_sum_place ran just before: every arc before live[u] has residual
     * capacity, but at the terminals of the virtual arc (never partitioned)
     * and without the summaries (live = lim): there the capacities are read */
    bool exact = g->sum->valid;
    radix_clear(q);
    for (int32_t i = 0; i < nsrc; i++) {
        int32_t s = src[i];
        vx[s].stamp = epoch;
        vx[s].dist = 0;
        vx[s].hpos = INHEAP;
        vx[s].pred = -1;
        radix_push(q, 0, s);
        need += ex[s];
    }
    g->at_first = need <= g->n / 16; /* little excess: stop at the first deficit */
    q->fifo = g->at_first;
    int32_t near = -1; /* at_first: the labelled deficit of the smallest label */
    /* at_first: near's label.  A vertex labelled from it on is never settled
     * (a deficit ties with the smallest key: that deficit goes first), so
     * such labels are not made: it keeps the queue to what can end the
     * search, and leaves the same vertices settled, in the same order. */
    int64_t bound = INT64_MAX;
    while (q->count > 0) {
        struct radix_item it = radix_pop(q);
        int32_t u = it.v;
        if (vx[u].hpos != INHEAP || it.key != vx[u].dist)
            continue; /* a stale copy */
        int64_t du = it.key;
        if (near >= 0 && vx[near].dist <= du) {
            /* a deficit ties with the smallest key: its label is final, so
             * it is the first deficit whichever of the ties goes first */
            radix_push(q, du, u);
            u = near;
            du = vx[u].dist;
        }
        if (D >= 0 && du > D) {
            radix_push(q, du, u); /* still labelled, not settled */
            break;
        }
        vx[u].hpos = SETTLED;
        list[nset++] = u;
        if (ex[u] < 0) {
            dlast = du;
            need += ex[u];
            if (g->at_first) {
                D = du;
                break;
            }
            if (need <= 0 && D < 0)
                D = du;
            if (D >= 0)
                continue; /* at distance D: paths end here */
        }
        int64_t base = du + vx[u].pi;
        reads += live[u] - first[u];
        bool check = !exact || u == g->vs || u == g->vt;
        for (int32_t r = first[u], end = live[u]; r < end; r++) {
            if (check && rcap[r] <= 0)
                continue;
            int32_t v = head[r];
            struct flow_vx *w = &vx[v];
            int64_t nd = base + rcost[r] - w->pi;
            if (nd >= bound)
                continue; /* settled after the first deficit, if ever: not needed */
            if (w->stamp != epoch) {
                if (w->sum < 0)
                    continue; /* folded: its owner's summary edges stand for it */
                w->stamp = epoch;
                w->hpos = INHEAP;
            } else if (w->hpos != INHEAP || nd >= w->dist) {
                continue;
            }
            w->dist = nd;
            w->pred = r;
            radix_push(q, nd, v);
            labels++;
            if (g->at_first && ex[v] < 0) {
                near = v; /* nd < bound: the nearest so far */
                bound = nd;
            }
        }
        if (vx[u].sum > 0)
            reads += relax_summary(g, u, base, g->at_first ? &near : NULL, &bound);
    }
    g->stats.scanned += nset;
    g->stats.arcs_read += reads;
    g->ssp_labels += labels;
    if (dlast < 0)
        return -1;
    if (D < 0)
        D = dist_max(g, nset); /* the search ran out: every settled vertex counts */
    *dmax = D;
    return nset;
}

/*
 * Moves the settled vertices' potentials by their distances (capped at D,
 * so that every reduced cost stays >= 0) and routes as much flow as the
 * shortest-path tree can carry from its roots (the sources) to the settled
 * deficits: every tree arc has reduced cost 0 once the potentials moved.
 * Flow on a tree needs no path walks: in reverse settling order (children
 * before parents) each vertex adds up what its subtree wants, capped by the
 * capacity of the arc from its parent; in settling order each vertex takes
 * what it wants from what its parent passes down, keeps its own deficit and
 * passes the rest on.  O(settled vertices); vx[].dist is free after the
 * potential update and holds the amounts, so both are done in one sweep
 * over the settled vertices (two sweeps missed the cache twice on a region
 * of thousands of vertices).
 */
static void move_potentials_and_augment_tree(struct hrm_flow *g, int32_t nset, int64_t D)
{
    struct flow_vx *vx = g->vx;
    const int32_t *tail = g->tail, *rev = g->rev, *list = g->list;
    int64_t *rcap = g->rcap, *ex = g->ex;
    for (int32_t i = 0; i < nset; i++) {
        int32_t v = list[i];
        vx[v].pi += vx[v].dist - D;
        vx[v].dist = ex[v] < 0 ? -ex[v] : 0;
    }
    for (int32_t i = nset - 1; i >= 0; i--) {
        int32_t v = list[i], r = vx[v].pred;
        if (r == -1)
            continue;
        int64_t cap = r >= 0 ? rcap[r] : flow_sum_cap(g, -2 - r);
        int64_t want = vx[v].dist < cap ? vx[v].dist : cap;
        vx[v].dist = want;
        vx[e_tail(g, r)].dist += want;
    }
    for (int32_t i = 0; i < nset; i++) {
        int32_t v = list[i], r = vx[v].pred;
        int64_t in;
        if (r == -1) { /* a source */
            int64_t give = ex[v] > 0 ? ex[v] : 0;
            in = vx[v].dist < give ? vx[v].dist : give;
            ex[v] -= in;
        } else if (r >= 0) {
            struct flow_vx *p = &vx[tail[r]];
            in = vx[v].dist < p->dist ? vx[v].dist : p->dist;
            p->dist -= in;
            if (in > 0) {
                rcap[r] -= in;
                rcap[rev[r]] += in;
                flow_sum_note(g, r);
                flow_sum_revive(g, v, rev[r]);
            }
        } else {
            /* a summary edge: an earlier push may have unfolded its task, and
             * the next one is usable only if it is as cheap; what it cannot
             * carry stays at the owner as excess for the next phase */
            int32_t b = -2 - r, j = flow_sum_edge(g, b)->job;
            const struct flow_sum_bucket *B = flow_sum_edge(g, b);
            struct flow_vx *p = &vx[j];
            int64_t want = vx[v].dist < p->dist ? vx[v].dist : p->dist;
            int64_t cap = B->cost != INT64_MAX && B->cost + p->pi == vx[v].pi
                              ? flow_sum_cap(g, b) : 0;
            in = want < cap ? want : cap;
            p->dist -= want;
            if (in > 0)
                flow_sum_push(g, b, in);
            if (want > in) {
                ex[j] += want - in;
                flow_pend(g, j);
            }
        }
        if (ex[v] < 0 && in > 0) {
            int64_t keep = -ex[v] < in ? -ex[v] : in;
            ex[v] += keep;
            in -= keep;
            g->stats.augmentations++;
        }
        vx[v].dist = in; /* what v passes down to its children */
    }
}

/*
 * Pushes what s can send and u can take along the path g->stack[0 .. depth)
 * from s to the deficit u; returns the index of the first arc the push
 * saturated (depth if none), where a depth-first search resumes.
 */
static inline int32_t augment_path(struct hrm_flow *g, int32_t s, int32_t u, int32_t depth)
{
    const int32_t *stack = g->stack, *rev = g->rev;
    int64_t *rcap = g->rcap, *ex = g->ex;
    int64_t delta = ex[s] < -ex[u] ? ex[s] : -ex[u];
    for (int32_t k = 0; k < depth; k++) {
        int32_t e = stack[k];
        int64_t cap = e >= 0 ? rcap[e] : flow_sum_cap(g, -2 - e);
        if (cap < delta)
            delta = cap;
    }
    int32_t cut = depth;
    for (int32_t k = 0; k < depth; k++) {
        int32_t e = stack[k];
        if (e < 0) { /* unfolds its task: the edge changed, resume before it */
            flow_sum_push(g, -2 - e, delta);
            if (cut == depth)
                cut = k;
            continue;
        }
        rcap[e] -= delta;
        rcap[rev[e]] += delta;
        flow_sum_note(g, e);
        flow_sum_revive(g, g->head[e], rev[e]);
        if (rcap[e] == 0 && cut == depth)
            cut = k;
    }
    ex[s] -= delta;
    ex[u] += delta;
    g->stats.augmentations++;
    return cut;
}

/*
 * The routing's region: the vertices the search settled and, admitted as the
 * routing meets them, the others at distance D, which the search left
 * (search).  Every reduced cost stays >= 0 under the new potentials, so an
 * arc of reduced cost 0 from a vertex at distance <= D leads to one at
 * distance <= D: following such arcs from the sources, the routing reaches
 * exactly the vertices at distance <= D, as when the search settled all of
 * them.  Admitting a vertex stamps it SETTLED, appends it to g->list
 * (g->nroute counts the region) and starts its routing state.
 */
static inline void admit(struct hrm_flow *g, struct flow_vx *x, int32_t w)
{
    if (x->stamp == g->epoch && (x->hpos == SETTLED || x->hpos == ONPATH))
        return;
    x->stamp = g->epoch;
    x->hpos = SETTLED;
    g->list[g->nroute++] = w;
    g->cur[w] = g->first[w];
    g->lvl[w] = -1;
}

/* Arc r out of u (potential pu) may carry flow in the phase's routing:
 * residual capacity, reduced cost 0 and a head in the routing's region. */
static inline bool usable(const struct hrm_flow *g, int32_t r, int64_t pu)
{
    const struct flow_vx *x = &g->vx[g->head[r]];
    return g->rcost[r] + pu == x->pi && g->rcap[r] > 0 && x->stamp == g->epoch &&
           x->hpos == SETTLED;
}

/* The same, admitting the head of a tight arc to the region. */
static inline bool usable_admit(struct hrm_flow *g, int32_t r, int64_t pu)
{
    struct flow_vx *x = &g->vx[g->head[r]];
    if (g->rcost[r] + pu != x->pi || g->rcap[r] <= 0)
        return false;
    admit(g, x, g->head[r]);
    return x->hpos == SETTLED;
}

/* The same for summary edge b of the phase's routing (always restricted). */
static inline bool usable_sum(const struct hrm_flow *g, const struct flow_sum_bucket *B,
                              int64_t pu)
{
    if (B->cost == INT64_MAX)
        return false;
    const struct flow_vx *x = &g->vx[B->x];
    return x->stamp == g->epoch && x->hpos == SETTLED && B->cost + pu == x->pi;
}

static inline bool usable_sum_admit(struct hrm_flow *g, const struct flow_sum_bucket *B,
                                    int64_t pu)
{
    if (B->cost == INT64_MAX)
        return false;
    struct flow_vx *x = &g->vx[B->x];
    if (B->cost + pu != x->pi)
        return false;
    admit(g, x, B->x);
    return x->hpos == SETTLED;
}

/*
 * Breadth-first levels over usable arcs from the sources that still have
 * excess, up to the level of the nearest deficit (deficits are not expanded);
 * returns whether a deficit was reached.  lvl[] is valid for the vertices in
 * queue[0 .. *nq) and -1 for the region's other vertices.
 */
static bool level_graph(struct hrm_flow *g, const int32_t *src, int32_t nsrc, int32_t *nq)
{
    int32_t *lvl = g->lvl, *queue = g->queue;
    const int32_t *first = g->first, *head = g->head;
    const int64_t *ex = g->ex;
    int32_t qh = 0, qt = 0, limit = INT32_MAX;
    int64_t reads = 0; /* kept in a register: the stats are added once, at the end */
    for (int32_t i = 0; i < g->nroute; i++)
        lvl[g->list[i]] = -1;
    for (int32_t i = 0; i < nsrc; i++)
        if (ex[src[i]] > 0) {
            lvl[src[i]] = 0;
            queue[qt++] = src[i];
        }
    while (qh < qt) {
        int32_t u = queue[qh++];
        if (ex[u] < 0) {
            limit = lvl[u];
            continue;
        }
        if (lvl[u] >= limit)
            continue;
        int64_t pu = g->vx[u].pi;
        reads += flow_sum_live(g)[u] - first[u];
        for (int32_t r = first[u], end = flow_sum_live(g)[u]; r < end; r++) {
            int32_t w = head[r];
            if (usable_admit(g, r, pu) && lvl[w] < 0) {
                lvl[w] = lvl[u] + 1;
                queue[qt++] = w;
            }
        }
        if (g->vx[u].sum > 0) {
            int32_t b0, nb;
            const struct flow_sum_bucket *bk = flow_sum_edges(g, u, &b0, &nb);
            reads += nb;
            for (int32_t k = 0; k < nb; k++) {
                int32_t w = bk[k].x;
                if (usable_sum_admit(g, &bk[k], pu) && lvl[w] < 0) {
                    lvl[w] = lvl[u] + 1;
                    queue[qt++] = w;
                }
            }
        }
    }
    *nq = qt;
    g->stats.route_read += reads;
    return limit < INT32_MAX;
}

/*
 * Routes flow from s to deficits along level-increasing usable arcs (Dinic's
 * blocking flow: current-arc pointers, a vertex without a way on leaves the
 * level graph, after an augmentation the search resumes below the first
 * saturated arc).  The levels keep the paths short and acyclic, and nothing
 * is given up on: a phase's last depth-first pass can miss paths.
 */
static void augment_from(struct hrm_flow *g, int32_t s)
{
    int32_t *cur = g->cur, *stack = g->stack, *lvl = g->lvl;
    const int32_t *first = g->first, *head = g->head;
    const int64_t *ex = g->ex;
    int32_t depth = 0, u = s;
    int64_t reads = 0; /* added to the stats at the end */
    while (ex[s] > 0) {
        if (ex[u] < 0) {
            int32_t cut = augment_path(g, s, u, depth);
            depth = cut; /* resume at the tail of the first saturated arc */
            u = depth > 0 ? e_head(g, stack[depth - 1]) : s;
            continue;
        }
        int32_t r = cur[u], end = first[u + 1], b0 = 0;
        int32_t send = arcs_end(g, u, &b0), vend = flow_sum_live(g)[u];
        int64_t pu = g->vx[u].pi;
        for (; r < vend; r++)
            if (lvl[head[r]] == lvl[u] + 1 && usable(g, r, pu))
                break;
        if (r >= vend && r < end)
            r = end; /* past the arcs hidden at u (ssp_sum.c) */
        for (; r >= end && r < send; r++) {
            const struct flow_sum_bucket *B = flow_sum_edge(g, b0 + r - end);
            if (lvl[B->x] == lvl[u] + 1 && usable_sum(g, B, pu))
                break;
        }
        reads += (r < vend ? r : vend) - (cur[u] < vend ? cur[u] : vend) + (r < send) +
                 (r > end ? r - (cur[u] > end ? cur[u] : end) : 0);
        cur[u] = r;
        if (r < send) {
            int32_t e = r < end ? r : -2 - (b0 + r - end);
            stack[depth++] = e;
            u = e_head(g, e);
            continue;
        }
        lvl[u] = -1; /* no way on from u in this level graph */
        if (depth == 0)
            break;
        u = e_tail(g, stack[--depth]);
        cur[u]++;
    }
    g->stats.route_read += reads;
}

void flow_route(struct hrm_flow *g, const int32_t *src, int32_t nsrc, int32_t nset)
{
    if (nset < 0) { /* over every residual arc: the lean Dinic (scale_route.c) */
        flow_route_all(g, src, nsrc);
        return;
    }
    int32_t nq;
    if (g->nroute < nset)
        g->nroute = nset;
    flow_sum_place(g); /* what the steps before made usable (ssp_sum.c) */
    while (level_graph(g, src, nsrc, &nq)) {
        for (int32_t i = 0; i < nq; i++)
            g->cur[g->queue[i]] = g->first[g->queue[i]];
        for (int32_t i = 0; i < nsrc; i++)
            if (g->ex[src[i]] > 0)
                augment_from(g, src[i]);
        flow_sum_place(g);
    }
}

/*
 * Routes flow from s along arcs of reduced cost 0 inside the settled region,
 * depth first: the cheapest way to find many paths when most of them are
 * short.  Current-arc pointers; a vertex whose arcs are used up and that has
 * no deficit is a dead end for the rest of the pass; vertices on the path are
 * skipped (so a pass can miss paths); after an augmentation the search
 * resumes at the tail of the first saturated arc.  Paths stop at DFS_DEPTH
 * arcs: in the region of reduced cost 0 that aggregators create, an unbounded
 * search wandered along paths of 24,000 arcs on the 50,000-GPU graph.  What a
 * pass misses, the next pass or Dinic's algorithm finds.
 */
/* w's arcs are used up in this depth-first pass and it takes no flow. */
static inline bool dead_end(const struct hrm_flow *g, int32_t w)
{
    int32_t b0;
    return g->cur[w] >= arcs_end(g, w, &b0) && g->ex[w] >= 0;
}

static void augment_dfs(struct hrm_flow *g, int32_t s)
{
    int32_t *cur = g->cur, *stack = g->stack;
    struct flow_vx *vx = g->vx;
    const int32_t *first = g->first, *head = g->head;
    const int64_t *rcost = g->rcost, *rcap = g->rcap, *ex = g->ex;
    int32_t depth = 0, u = s;
    /* the path's vertices: on[k] is the tail of stack[k], on[depth] is u.
     * Stepping back and resuming after a push read the tail or head of the
     * path's arcs again, a cache miss each on a path of hundreds of arcs */
    int32_t on[DFS_DEPTH + 1];
    on[0] = s;
    int64_t reads = 0; /* added to the stats at the end */
    vx[s].hpos = ONPATH;
    while (ex[s] > 0) {
        if (ex[u] < 0) {
            int32_t cut = augment_path(g, s, u, depth);
            for (int32_t k = cut; k < depth; k++)
                vx[on[k + 1]].hpos = SETTLED;
            depth = cut;
            u = on[depth];
            continue;
        }
        int32_t r = cur[u], end = first[u + 1], w = -1, b0;
        int32_t send = arcs_end(g, u, &b0), vend = flow_sum_live(g)[u];
        if (depth < DFS_DEPTH) {
            int64_t pu = vx[u].pi;
            for (; r < vend; r++) {
                /* tightness first: most arcs out of the region of ties are
                 * not tight, and their capacities need not be read */
                w = head[r];
                struct flow_vx *x = &vx[w];
                if (rcost[r] + pu != x->pi || rcap[r] <= 0)
                    continue;
                admit(g, x, w);
                if (x->hpos != SETTLED || dead_end(g, w))
                    continue; /* dead end for this pass */
                break;
            }
            if (r >= vend && r < end)
                r = end; /* past the arcs hidden at u (ssp_sum.c) */
            if (r >= end && r < send) {
                /* u's summary edges from k on: a tight one whose head is in
                 * the region and no dead end.  A scan of u's edge array from
                 * a pointer taken once (few edges are tight; looking each one
                 * up by flow_sum_edge took 22 instructions an edge) */
                const struct flow_sum_bucket *bk = flow_sum_edge(g, b0);
                int32_t k = r - end, nb = send - end;
                for (; k < nb; k++) {
                    w = bk[k].x;
                    if (usable_sum_admit(g, &bk[k], pu) && !dead_end(g, w))
                        break;
                }
                r = end + k;
            }
            reads += (r < vend ? r : vend) - (cur[u] < vend ? cur[u] : vend) + (r < send) +
                     (r > end ? r - (cur[u] > end ? cur[u] : end) : 0);
            cur[u] = r;
        } else {
            r = send;
        }
        if (r < send) {
            stack[depth++] = r < end ? r : -2 - (b0 + r - end);
            vx[w].hpos = ONPATH;
            u = on[depth] = w;
            continue;
        }
        vx[u].hpos = SETTLED;
        if (depth == 0)
            break;
        u = on[--depth];
        cur[u]++;
    }
    for (int32_t k = 0; k < depth; k++)
        vx[on[k + 1]].hpos = SETTLED;
    vx[s].hpos = SETTLED;
    g->stats.route_read += reads;
}

/* Some source still has excess and some vertex of the region still has a
 * deficit, or may have: after a search that stopped at the first deficit
 * the routing finds the others itself. */
static bool work_left(const struct hrm_flow *g, const int32_t *src, int32_t nsrc)
{
    bool excess = false, deficit = g->at_first;
    for (int32_t i = 0; i < nsrc && !excess; i++)
        excess = g->ex[src[i]] > 0;
    for (int32_t i = 0; i < g->nroute && excess && !deficit; i++)
        deficit = g->ex[g->list[i]] < 0;
    return excess && deficit;
}

int flow_ssp(struct hrm_flow *g, struct hrm_error *err)
{
    int32_t *src = g->sc_i32;
    g->ssp_labels = 0;
    if (g->sum_off || g->n > FLOW_SUM_MAX_VERTICES)
        flow_sum_drop(g);
    else
        flow_sum_sync(g);
    for (;;) {
        size_t k = 0;
        int32_t nsrc = 0;
        for (size_t i = 0; i < g->npend; i++) {
            int32_t v = g->pend[i];
            if (g->ex[v] == 0) {
                g->vpend[v] = 0;
                continue;
            }
            g->pend[k++] = v;
            if (g->ex[v] > 0)
                src[nsrc++] = v;
        }
        g->npend = k;
        flow_sum_place(g);
        if (nsrc == 0) {
            flow_sum_settle(g);
            return 0;
        }
        next_epoch(g);
        g->stats.phases++;
        int64_t D;
        int32_t nset = search(g, src, nsrc, &D);
        if (nset < 0) {
            int64_t left = 0;
            for (int32_t i = 0; i < nsrc; i++)
                left += g->ex[src[i]];
            flow_sum_settle(g);
            return hrm_errorf(err, -HRM_EINFEASIBLE,
                              "flow: %lld units of supply cannot reach any demand (vertex %d "
                              "has %lld of them)",
                              (long long)left, src[0], (long long)g->ex[src[0]]);
        }
        move_potentials_and_augment_tree(g, nset, D);
        g->nroute = nset;
        for (int32_t i = 0; i < nsrc; i++) /* those the search left, at D = 0 */
            admit(g, &g->vx[src[i]], src[i]);
        /* What the tree could not carry goes by depth-first passes over the
         * arcs of reduced cost 0 while they route anything; when the last
         * allowed pass still routed, Dinic's blocking flows finish the phase
         * (cheaper than more passes on large graphs, dearer on small ones).
         * Routing less than possible only costs another phase. */
        bool routed = false;
        for (int pass = 0; pass < DFS_PASSES && work_left(g, src, nsrc); pass++) {
            int64_t before = g->stats.augmentations;
            flow_sum_place(g);
            for (int32_t i = 0; i < g->nroute; i++)
                g->cur[g->list[i]] = g->first[g->list[i]];
            for (int32_t i = 0; i < nsrc; i++)
                if (g->ex[src[i]] > 0)
                    augment_dfs(g, src[i]);
            routed = g->stats.augmentations != before;
            if (!routed)
                break;
        }
        if (routed && work_left(g, src, nsrc))
            flow_route(g, src, nsrc, g->nroute);
    }
}
