/* Cost-scaling push-relabel min-cost flow (Goldberg): the from-scratch engine. */
#include <string.h>

#include "flow_private.h"
#include "hrm/alloc.h"

/*
 * Goldberg's cost scaling with the partial augment-relabel step (Goldberg 2008;
 * the method LEMON's CostScaling defaults to), global price updates, price
 * refinement and arc fixing (CS2's heuristics).  Costs are multiplied by
 * n x ALPHA so that the last phase (epsilon = 1) leaves a flow that is optimal
 * for the original costs.  The first phase routes the supplies itself; a
 * feasible flow is found first with Dinic's algorithm (which also decides
 * feasibility and, for solve_max, the maximum value) only for a maximum flow,
 * for supplies from one source to one sink, or when the first phase finds the
 * supplies infeasible (run_phases).  Each phase divides epsilon by ALPHA,
 * saturates the arcs that violate the new bound and moves the excesses along
 * admissible paths of at most PATH_LEN arcs, relabelling dead ends.
 *
 * At the end the scaled prices are rounded down to integer potentials; the
 * rare arcs whose reduced cost the rounding makes negative are fixed by the
 * shortest-path engine, so the caller gets exact potentials for warm starts.
 */

#define ALPHA 16
#define PATH_LEN 4

/* A residual arc as the phases read it: what one scan needs in one place. */
struct cs_arc {
    int64_t cost; /* scaled (x mult) */
    int64_t rcap;
    /* the reverse arc's rcap, kept beside this one: the global update asks
     * every arc into a vertex whether its reverse is open, and reading it
     * here saves a jump to a random record per arc scanned (the push that
     * changes it touches both records anyway); 32 bytes, two per cache line */
    int64_t rrcap;
    int32_t head, rev;
};

/* Moves d units along residual arc a (d <= its rcap). */
static inline void cs_push(struct cs_arc *arc, int32_t a, int64_t d)
{
    int32_t b = arc[a].rev;
    arc[a].rcap -= d;
    arc[a].rrcap += d;
    arc[b].rcap += d;
    arc[b].rrcap -= d;
}

struct cs {
    struct hrm_flow *g;
    int32_t n;
    int64_t mult, eps;
    int32_t *queue; /* FIFO of active vertices, circular over n + 1 slots */
    int32_t qhead, qtail, qsize;
    uint8_t *inq; /* in the queue: each vertex at most once */
    int32_t *rank, *bnext, *bprev, *buckets;
    uint8_t *seen; /* price refinement's search state */
    /* prices and costs in scaled units (x mult), dense: the phases read one
     * 8-byte price per arc head instead of a 32-byte vertex record, and no
     * multiplication per arc */
    int64_t *pi;
    /* the phases' own copy of the residual arcs (head, rev, rcap, cost), so
     * that arc fixing can reorder them: vertex u's arcs still sit in
     * first[u] .. first[u + 1] (so g->tail stays right), the ones still
     * scanned in first[u] .. end[u], the fixed ones after; orig maps a
     * position back to g's residual arc */
    struct cs_arc *arc;
    int32_t *end, *orig;
    int64_t nfixed;
    /* the first phase without a first flow (supply mode): it gives up (and
     * the supplies are routed by Dinic first) when the supplies look
     * infeasible: an excess the global update cannot reach, a relabelled
     * excess priced below price_floor, or more than relabel_cap relabels */
    bool unrouted, gave_up;
    int64_t price_floor, relabel_cap;
    int32_t max_rank;
    int64_t relabels, next_update, update_skip;
    int64_t nsup; /* vertices with a supply: global updates every n + nsup relabels */
};

/* Moves v from bucket `from` (-1: in none) to the head of bucket `to`; the
 * buckets are doubly linked lists through bnext/bprev. */
static void bucket_move(int32_t *buckets, int32_t *bnext, int32_t *bprev, int32_t v, int32_t from,
                        int32_t to)
{
    if (from >= 0) {
        if (buckets[from] == v) {
            buckets[from] = bnext[v];
        } else {
            int32_t pv = bprev[v], nv = bnext[v];
            bnext[pv] = nv;
            bprev[nv] = pv;
        }
    }
    int32_t head = buckets[to];
    bnext[v] = head;
    bprev[head] = v;
    buckets[to] = v;
}

static void q_push(struct cs *c, int32_t v)
{
    if (c->inq[v])
        return;
    c->inq[v] = 1;
    c->queue[c->qtail] = v;
    c->qtail = c->qtail + 1 == c->qsize ? 0 : c->qtail + 1;
}

/* Routes as much of the excess to the deficits as the capacities allow (Dinic,
 * flow_route_all) and returns the excess left. */
static int64_t route_excess(struct hrm_flow *g)
{
    int32_t *src = g->sc_i32, nsrc = 0;
    for (int32_t v = 0; v < g->n; v++)
        if (g->ex[v] > 0)
            src[nsrc++] = v;
    flow_route_all(g, src, nsrc);
    int64_t left = 0;
    for (int32_t i = 0; i < nsrc; i++)
        left += g->ex[src[i]];
    return left;
}

/*
 * Global price update: ranks are distances to the nearest deficit in units of
 * epsilon (Dial's buckets over arcs of length floor(rc / eps) + 1, searched
 * backwards), and every vertex's price drops by rank x eps, which keeps the
 * flow eps-optimal and points admissible arcs at the deficits.
 */
static void global_update(struct cs *c)
{
    struct hrm_flow *g = c->g;
    int32_t n = c->n, end_mark = n;
    const int32_t *first = g->first, *end = c->end;
    const struct cs_arc *arc = c->arc;
    const int64_t *ex = g->ex;
    int64_t *pi = c->pi;
    int32_t *rank = c->rank, *bnext = c->bnext, *bprev = c->bprev, *buckets = c->buckets;
    int32_t max_rank = c->max_rank;
    for (int32_t r = 0; r < max_rank; r++)
        buckets[r] = end_mark;
    int64_t total = 0;
    int32_t b0 = end_mark;
    for (int32_t i = 0; i < n; i++) {
        if (ex[i] < 0) {
            rank[i] = 0;
            bnext[i] = b0;
            bprev[b0] = i;
            b0 = i;
        } else {
            total += ex[i];
            rank[i] = max_rank;
        }
    }
    if (total == 0)
        return;
    buckets[0] = b0;
    int32_t r = 0;
    for (; r < max_rank; r++) {
        while (buckets[r] != end_mark) {
            int32_t u = buckets[r];
            buckets[r] = bnext[u];
            /* the next vertex's arcs are a cache miss away: ask for them now */
            if (buckets[r] != end_mark)
                __builtin_prefetch(&arc[first[buckets[r]]]);
            int64_t pu = pi[u];
            for (int32_t a = first[u], last = end[u]; a < last; a++) {
                /* the arc v -> u is a's reverse: its head is a's head and its
                 * cost minus a's, read in order, and its capacity is a's rrcap */
                int32_t v = arc[a].head;
                int32_t old = rank[v];
                if (r >= old || arc[a].rrcap <= 0)
                    continue;
                int64_t rc = pi[v] - pu - arc[a].cost;
                /* the rank improves only if rc < (old - r - 1) eps: divide only then */
                if (rc >= (int64_t)(old - r - 1) * c->eps)
                    continue;
                /* C's division truncates: an arc at -eps <= rc < 0 counts 1
                 * (floor would count 0), so the new prices may leave it at
                 * -2 eps <= rc < -eps, never lower (at rc < -eps it counts 0).
                 * Floor was measured: 10-20 % more relabels.  The phases thus
                 * keep the flow 2 eps-optimal, which arc fixing allows for. */
                int32_t nr = r + 1 + (int32_t)(rc / c->eps);
                if (nr >= old)
                    continue;
                rank[v] = nr;
                bucket_move(buckets, bnext, bprev, v, old < max_rank ? old : -1, nr);
            }
            if (ex[u] > 0) {
                total -= ex[u];
                if (total <= 0)
                    break;
            }
        }
        if (total <= 0)
            break;
    }
    if (total > 0 && c->unrouted) {
        c->gave_up = true;
        return;
    }
    for (int32_t u = 0; u < n; u++) {
        int32_t k = rank[u] < r ? rank[u] : r;
        if (k > 0) {
            pi[u] -= c->eps * k;
            g->cur[u] = first[u];
        }
    }
}

/* One phase at c->eps. */
static void refine(struct cs *c)
{
    struct hrm_flow *g = c->g;
    int32_t n = c->n;
    const int32_t *first = g->first, *end = c->end;
    struct cs_arc *arc = c->arc;
    int64_t *ex = g->ex, *pi = c->pi;
    int32_t *cur = g->cur;
    const int64_t eps = c->eps;
    for (int32_t u = 0; u < n; u++) {
        int64_t pu = pi[u];
        for (int32_t a = first[u], last = end[u]; a < last; a++) {
            int64_t d = arc[a].rcap;
            if (d > 0 && arc[a].cost + pu - pi[arc[a].head] < 0) {
                cs_push(arc, a, d);
                ex[u] -= d;
                ex[arc[a].head] += d;
            }
        }
    }
    c->qhead = c->qtail = 0;
    for (int32_t u = 0; u < n; u++) {
        cur[u] = first[u];
        if (ex[u] > 0)
            q_push(c, u);
    }
    /* the path's arcs, and the vertices they leave (node[k] = tail of
     * path[k]): stepping back after a relabel reads node[] instead of
     * g->tail[], a cache miss per step back measured at 13 % of the phase */
    int32_t path[PATH_LEN + 1], node[PATH_LEN + 1];
    while (c->qhead != c->qtail) {
        int32_t start = c->queue[c->qhead];
        if (ex[start] <= 0) {
            c->inq[start] = 0;
            c->qhead = c->qhead + 1 == c->qsize ? 0 : c->qhead + 1;
            continue;
        }
        /* the arcs of the vertex queued next are a cache miss away */
        int32_t qn = c->qhead + 1 == c->qsize ? 0 : c->qhead + 1;
        if (qn != c->qtail)
            __builtin_prefetch(&arc[cur[c->queue[qn]]]);
        int32_t tip = start, len = 0;
        while (len < PATH_LEN && ex[tip] >= 0) {
            int64_t pt = pi[tip], minrc = INT64_MAX;
            int32_t last = end[tip], a = cur[tip];
            for (; a < last; a++) {
                if (arc[a].rcap <= 0)
                    continue;
                int64_t rc = arc[a].cost + pt - pi[arc[a].head];
                if (rc < 0)
                    break;
                if (rc < minrc)
                    minrc = rc;
            }
            if (a < last) {
                cur[tip] = a;
                bool cycle = false;
                for (int32_t k = 0; k < len; k++)
                    cycle |= path[k] == a;
                node[len] = tip;
                path[len++] = a;
                if (cycle)
                    break;
                tip = arc[a].head;
                continue;
            }
            /* relabel: the cheapest residual arc out of tip becomes -eps */
            if (tip != start) {
                int32_t ra = arc[path[len - 1]].rev;
                int64_t rc = arc[ra].cost + pt - pi[arc[ra].head];
                if (rc < minrc)
                    minrc = rc;
            }
            for (int32_t b = first[tip], stop = cur[tip]; b < stop; b++) {
                if (arc[b].rcap <= 0)
                    continue;
                int64_t rc = arc[b].cost + pt - pi[arc[b].head];
                if (rc < minrc)
                    minrc = rc;
            }
            if (minrc == INT64_MAX)
                minrc = 0; /* no residual arc at all: cannot happen with excess */
            pi[tip] -= minrc + eps;
            cur[tip] = first[tip];
            ++c->relabels;
            if (c->unrouted && ((tip == start && pi[tip] < c->price_floor) ||
                                c->relabels > c->relabel_cap)) {
                c->gave_up = true;
                return;
            }
            if (tip != start)
                tip = node[--len];
        }
        int32_t v = start;
        for (int32_t k = 0; k < len; k++) {
            int32_t a = path[k], u = v;
            v = arc[a].head;
            int64_t d = arc[a].rcap < ex[u] ? arc[a].rcap : ex[u];
            cs_push(arc, a, d);
            ex[u] -= d;
            ex[v] += d;
            if (ex[v] > 0)
                q_push(c, v);
        }
        g->stats.augmentations++;
        if (c->relabels >= c->next_update) {
            global_update(c);
            g->scale_updates++;
            if (c->gave_up)
                return;
            c->next_update = c->relabels + c->update_skip;
        }
    }
}

/* Arc scans that one price refinement may spend, per residual arc, before it
 * gives the phase to refine() (a safety net: it normally ends in 1-3 passes
 * of about 2 scans per arc each), and the phases before which it is not
 * tried: none.  Even before the first phase, where it rarely skips (Dinic's
 * flow ignores the costs), the prices of the failed refinement save the
 * phase work: goto M 1.5-1.7x, netgen and gridgen M level, measured. */
#define REFINE_SCANS 48
#define REFINE_AFTER 0

/*
 * Depth-first search of the admissible graph (residual arcs of reduced cost
 * < 0) for price_refine: fills c->queue[0 .. *norder) with the vertices in
 * order of finishing (reverse topological order) and returns 1, or, when
 * it meets a cycle, pushes the cycle's smallest residual capacity around it
 * (every arc of it has a negative reduced cost: the flow gets cheaper and
 * stays balanced) and returns 0.  -1: the scan budget ran out.
 */
static int admissible_order(struct cs *c, int32_t *norder, int64_t *budget)
{
    struct hrm_flow *g = c->g;
    int32_t n = c->n;
    const int32_t *first = g->first, *end = c->end;
    const int64_t *pi = c->pi;
    struct cs_arc *arc = c->arc;
    int32_t *cur = g->cur, *pred = c->bprev, *order = c->queue;
    uint8_t *state = c->seen; /* 0 unseen, 1 on the search path, 2 finished */
    memset(state, 0, (size_t)n);
    for (int32_t u = 0; u < n; u++)
        cur[u] = first[u];
    *budget -= first[n];
    if (*budget < 0)
        return -1;
    int32_t top = 0;
    for (int32_t root = 0; root < n; root++) {
        if (state[root])
            continue;
        int32_t tip = root;
        pred[root] = -1;
        state[root] = 1;
        while (tip >= 0) {
            int32_t a = cur[tip], last = end[tip];
            int64_t pt = pi[tip];
            for (; a < last; a++) {
                if (arc[a].rcap <= 0 || arc[a].cost + pt - pi[arc[a].head] >= 0)
                    continue;
                int32_t v = arc[a].head;
                if (state[v] == 2)
                    continue;
                cur[tip] = a;
                if (state[v] == 0)
                    break;
                /* a cycle v -> ... -> tip -> v: the arc into each vertex u
                 * of the path is cur[pred[u]] */
                int64_t delta = arc[a].rcap;
                for (int32_t u = tip; u != v; u = pred[u])
                    if (arc[cur[pred[u]]].rcap < delta)
                        delta = arc[cur[pred[u]]].rcap;
                cs_push(arc, a, delta);
                for (int32_t u = tip; u != v; u = pred[u])
                    cs_push(arc, cur[pred[u]], delta);
                g->scale_cancelled++;
                return 0;
            }
            if (a < last) {
                int32_t v = arc[a].head;
                pred[v] = tip;
                state[v] = 1;
                tip = v;
                continue;
            }
            state[tip] = 2;
            order[top++] = tip;
            tip = pred[tip];
            if (tip >= 0)
                cur[tip]++;
        }
    }
    *norder = top;
    return 1;
}

/*
 * Price refinement (Goldberg's CS2): before a phase, look for prices under
 * which the balanced flow is already eps-optimal, and skip the phase (its
 * saturation step and every push and relabel after it) if there are.
 *
 * In a pass, the admissible graph (arcs of negative reduced cost) is put in
 * topological order; each vertex's rank is the longest admissible path into
 * it, an arc of reduced cost rc counting ceil(-rc / eps) - 1 (0 for the arcs
 * that already meet -eps).  Rank 0 everywhere: the flow is eps-optimal, skip.
 * Otherwise ranks are pushed down, from the highest, over every residual arc
 * (an arc of reduced cost rc >= 0 lets its head keep rank - 1 - rc / eps), as
 * a global update does towards the deficits, and each vertex's price drops by
 * rank x eps; then another pass.  A cycle of negative arcs cannot have such
 * prices: it is cancelled (the flow gets cheaper) and the phase runs.  The
 * prices a pass leaves are never worse for the phase than the old ones, so a
 * refinement that fails still helps the phase it gives way to.
 */
static bool price_refine(struct cs *c)
{
    struct hrm_flow *g = c->g;
    int32_t n = c->n, end_mark = n;
    const int32_t *first = g->first, *end = c->end;
    const struct cs_arc *arc = c->arc;
    int64_t *pi = c->pi;
    int32_t *rank = c->rank, *bnext = c->bnext, *bprev = c->bprev, *buckets = c->buckets;
    const int64_t eps = c->eps;
    const int32_t max_rank = c->max_rank;
    for (int32_t v = 0; v < n; v++)
        if (g->ex[v] != 0)
            return false;
    int64_t budget = REFINE_SCANS * (int64_t)first[n] + n;
    for (;;) {
        int32_t norder = 0;
        if (admissible_order(c, &norder, &budget) <= 0)
            return false;
        /* ranks in topological order (the reverse of the finishing order) */
        for (int32_t v = 0; v < n; v++)
            rank[v] = 0;
        int32_t top_rank = 0;
        budget -= first[n];
        for (int32_t i = norder - 1; i >= 0; i--) {
            int32_t u = c->queue[i], ru = rank[u];
            int64_t pu = pi[u];
            for (int32_t a = first[u], last = end[u]; a < last; a++) {
                if (arc[a].rcap <= 0)
                    continue;
                int64_t rc = arc[a].cost + pu - pi[arc[a].head];
                if (rc >= -eps)
                    continue;
                int64_t nr = ru + (-rc - 1) / eps;
                if (nr >= max_rank)
                    return false; /* far from eps-optimal: leave it to the phase */
                if (nr > rank[arc[a].head])
                    rank[arc[a].head] = (int32_t)nr;
            }
            if (ru > top_rank)
                top_rank = ru;
        }
        if (top_rank == 0)
            return true;
        if (budget < 0)
            return false;
        /* the pi[] change below would need bnext/bprev: pred (bprev) is free now */
        for (int32_t r = 0; r <= top_rank; r++)
            buckets[r] = end_mark;
        for (int32_t u = 0; u < n; u++) {
            int32_t r = rank[u];
            if (r > 0) {
                int32_t f = buckets[r];
                bnext[u] = f;
                bprev[f] = u;
                buckets[r] = u;
            }
        }
        for (int32_t r = top_rank; r > 0; r--) {
            while (buckets[r] != end_mark) {
                int32_t u = buckets[r];
                buckets[r] = bnext[u];
                int64_t pu = pi[u];
                budget -= end[u] - first[u];
                for (int32_t a = first[u], last = end[u]; a < last; a++) {
                    if (arc[a].rcap <= 0)
                        continue;
                    int32_t v = arc[a].head, old = rank[v];
                    if (old >= r)
                        continue;
                    int64_t rc = arc[a].cost + pu - pi[v];
                    int64_t q = rc < 0 ? 0 : rc / eps + 1;
                    if (q >= r)
                        continue;
                    int32_t nr = r - (int32_t)q;
                    if (nr <= old)
                        continue;
                    bucket_move(buckets, bnext, bprev, v, old > 0 ? old : -1, nr);
                    rank[v] = nr;
                }
                pi[u] -= r * eps;
            }
        }
        if (budget < 0)
            return false;
    }
}

/* Potentials may be raised by any amount on the vertices that the source cannot
 * reach; doing so for the sink's side prices the virtual arc exactly. */
static void price_virtual(struct hrm_flow *g)
{
    int32_t n = g->n, s = g->vs, t = g->vt;
    int32_t *seen = g->sc_i32, *queue = g->list;
    for (int32_t v = 0; v < n; v++)
        seen[v] = 0;
    int32_t qh = 0, qt = 0;
    seen[s] = 1;
    queue[qt++] = s;
    while (qh < qt) {
        int32_t u = queue[qh++];
        for (int32_t r = g->first[u], end = g->first[u + 1]; r < end; r++) {
            int32_t v = g->head[r];
            if (g->rcap[r] > 0 && !seen[v] && r != g->rev[g->vpos] && r != g->vpos) {
                seen[v] = 1;
                queue[qt++] = v;
            }
        }
    }
    /* t is unreachable after a maximum flow */
    int64_t delta = FLOW_BIG - (g->vx[t].pi - g->vx[s].pi);
    for (int32_t v = 0; v < n; v++)
        if (!seen[v])
            g->vx[v].pi += delta;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The scaled prices (from 0) and costs of the phases, and their copy of the
 * residual arcs (nothing fixed yet); the caller fills the costs. */
static void cs_arcs_new(struct cs *c)
{
    const struct hrm_flow *g = c->g;
    int32_t n = c->n, nr = g->first[n];
    c->pi = hrm_calloc((size_t)n, sizeof(int64_t));
    c->arc = hrm_alloc(sizeof(struct cs_arc) * (size_t)nr);
    c->orig = hrm_alloc(sizeof(int32_t) * (size_t)nr);
    c->end = hrm_alloc(sizeof(int32_t) * (size_t)n);
    for (int32_t r = 0; r < nr; r++) {
        c->arc[r] = (struct cs_arc){
            .rcap = g->rcap[r], .rrcap = g->rcap[g->rev[r]], .head = g->head[r], .rev = g->rev[r]};
        c->orig[r] = r;
    }
    memcpy(c->end, g->first + 1, sizeof(int32_t) * (size_t)n);
}

/* Writes the phases' flow back into g's residual arcs (with keep) and frees
 * their state. */
static void cs_arcs_free(struct cs *c, bool keep)
{
    struct hrm_flow *g = c->g;
    for (int32_t r = 0, nr = g->first[c->n]; keep && r < nr; r++)
        g->rcap[c->orig[r]] = c->arc[r].rcap;
    hrm_free(c->pi);
    hrm_free(c->arc);
    hrm_free(c->orig);
    hrm_free(c->end);
}

/* Exchanges the residual arcs at positions x and y (of one vertex's list) and
 * keeps their partners' rev links right, inert self-paired slots included. */
static void arc_swap(struct cs *c, int32_t x, int32_t y)
{
    struct cs_arc *arc = c->arc, ax = arc[x];
    int32_t rx = ax.rev, ry = arc[y].rev, ox = c->orig[x];
    arc[x] = arc[y], c->orig[x] = c->orig[y];
    arc[y] = ax, c->orig[y] = ox;
    /* the partner of the arc now at y (was x), and of the one now at x */
    int32_t px = rx == x ? y : rx == y ? x : rx;
    int32_t py = ry == y ? x : ry == x ? y : ry;
    arc[y].rev = px;
    arc[x].rev = py;
    arc[px].rev = y;
    arc[py].rev = x;
}

/*
 * Arc fixing (Goldberg and Tarjan's bound; CS2 uses a smaller, heuristic
 * one): at the end of a phase the flow is balanced and 2 eps-optimal (every
 * residual arc at reduced cost >= -2 eps: global_update's rounding).  A
 * residual arc whose reduced cost exceeds 2 (n - 1) eps carries the same flow
 * in every optimal flow: a cycle through it (at most n arcs, the others at
 * reduced cost >= -2 eps) would cost more than 0 to push and so could not be
 * what an optimal flow differs by.  Such arcs and their reverses (closed, by
 * 2 eps-optimality) leave the lists the later phases scan, which cuts their
 * work; the flow they end with is then optimal for the whole graph, and
 * settle() repairs the potentials of any fixed arc the later prices left
 * at a negative reduced cost.  The bound used is 2 n eps.
 */
static void fix_arcs(struct cs *c)
{
    const struct hrm_flow *g = c->g;
    const int32_t *first = g->first;
    int32_t *end = c->end;
    const struct cs_arc *arc = c->arc;
    const int64_t *pi = c->pi;
    const int64_t bound = 2 * (int64_t)c->n * c->eps;
    for (int32_t u = 0; u < c->n; u++) {
        int64_t pu = pi[u];
        for (int32_t a = first[u]; a < end[u];) {
            int32_t v = arc[a].head;
            if (v == u || arc[a].cost + pu - pi[v] <= bound) {
                a++;
                continue;
            }
            int32_t b = arc[a].rev;
            arc_swap(c, b, --end[v]);
            arc_swap(c, a, --end[u]);
            c->nfixed++;
        }
    }
}

/* Runs the phases from eps0 down to 1 on the prices c->pi (scaled by c->mult);
 * false when the first phase gave up (c->unrouted: the supplies may be
 * infeasible). */
static bool scale_phases(struct cs *c, int64_t eps0)
{
    struct hrm_flow *g = c->g;
    int32_t n = c->n;
    c->qsize = n + 1;
    c->queue = hrm_alloc(sizeof(int32_t) * (size_t)c->qsize);
    c->inq = hrm_calloc((size_t)n, 1);
    c->max_rank = ALPHA * n;
    c->rank = hrm_alloc(sizeof(int32_t) * (size_t)(n + 1));
    c->bnext = hrm_alloc(sizeof(int32_t) * (size_t)(n + 1));
    c->bprev = hrm_alloc(sizeof(int32_t) * (size_t)(n + 1));
    c->buckets = hrm_alloc(sizeof(int32_t) * (size_t)c->max_rank);
    c->seen = hrm_alloc((size_t)n);
    bool try_refine = !(g->scale_off & FLOW_SCALE_NO_REFINE);
    bool try_fix = !(g->scale_off & FLOW_SCALE_NO_FIX);
    int phase = 0;
    /* Every n + k relabels, k the vertices with a supply.  LEMON (and this
     * code until the global update got cheaper) waits n + k^2; with the
     * reverse's capacity read beside each arc and the next vertex's arcs
     * prefetched, the updates pay for themselves sooner: netgen M (k = 80,
     * 6,400 more relabels between updates under k^2) 0.78-1.0 of the time,
     * gridgen M (k = 40) 0.87-1.08 (measured with n alone).  The + k keeps
     * the schedule of one source (goto, P1 as supplies or maximum flow) as
     * it was, n + 1, and so the potentials those solves leave, which the
     * warm re-solves after them start from (their search counts are tested). */
    c->update_skip = n + c->nsup;
    c->next_update = c->update_skip;
    for (c->eps = eps0; c->eps >= 1;
         c->eps = c->eps < ALPHA && c->eps > 1 ? 1 : c->eps / ALPHA) {
        g->stats.phases++;
        if (try_refine && ++phase > REFINE_AFTER && price_refine(c)) {
            g->scale_refined++;
            /* a flow that needed no phase here is often optimal already: if
             * it is 1-optimal (optimal for the scaled costs), no phase is left */
            int64_t eps = c->eps;
            c->eps = 1;
            if (eps > 1 && price_refine(c))
                break;
            c->eps = eps;
        } else {
            refine(c);
            if (c->gave_up)
                break;
        }
        c->unrouted = false; /* the flow is balanced: the supplies are feasible */
        if (try_fix && c->eps > 1)
            fix_arcs(c);
    }
    g->scale_fixed += c->nfixed;
    g->stats.scanned += c->relabels;
    g->scale_relabels += c->relabels;
    hrm_free(c->queue);
    hrm_free(c->inq);
    hrm_free(c->rank);
    hrm_free(c->bnext);
    hrm_free(c->bprev);
    hrm_free(c->buckets);
    hrm_free(c->seen);
    return !c->gave_up;
}

/* Rounding and the warm start's capped costs may leave a few residual arcs at
 * a negative reduced cost: saturate them and let the shortest paths re-route
 * what that moves (and whatever excess is left) with exact potentials. */
static int settle(struct hrm_flow *g, struct hrm_error *err)
{
    int32_t nr = g->first[g->n];
    for (int32_t r = 0; r < nr; r++)
        if (g->rcap[r] > 0 && g->rcost[r] + g->vx[g->tail[r]].pi - g->vx[g->head[r]].pi < 0)
            flow_push(g, r, g->rcap[r]);
    for (int32_t v = 0; v < g->n; v++)
        if (g->ex[v])
            flow_pend(g, v);
    return flow_ssp(g, err);
}

/* Cost of the flow on the user's arcs (for tests: what the phases left). */
static int64_t flow_cost(const struct hrm_flow *g)
{
    int64_t sum = 0;
    for (int32_t a = 0; a < g->m; a++)
        sum += g->acost[a] * g->rcap[g->rev[g->apos[a]]];
    return sum;
}

static int64_t max_abs_cost(const struct hrm_flow *g)
{
    int64_t cmax = 0;
    for (int32_t a = 0; a < g->m; a++) {
        int64_t x = g->acost[a] < 0 ? -g->acost[a] : g->acost[a];
        if (x > cmax && g->acap[a] > 0)
            cmax = x;
    }
    return cmax;
}

/*
 * The phases on g's flow, from prices 0 (cmax = max |cost| > 0, n > 1), and
 * the potentials they leave.  routed: g's flow is balanced (Dinic's); else g
 * holds the zero flow with the supplies as excesses, and the first phase
 * routes them itself, which saves Dinic's time (its flow is re-routed almost
 * entirely by the first phase anyway); it gives up, g as it was, when the
 * supplies look infeasible, and the caller routes them first.  The bounds:
 * for feasible supplies an excess's price stays above -(ALPHA + 2) n eps in
 * the first phase (a path to a deficit of at most n - 1 arcs, each at reduced
 * cost >= -2 eps now and, for some feasible flow, <= ALPHA eps at prices 0),
 * and relabels stay below the (ALPHA + 3) n^2 that follows (a net, also for
 * the vertices relabelled inside a partial augmentation).
 */
static bool run_phases(struct hrm_flow *g, int64_t cmax, int64_t nsup, bool routed)
{
    int32_t n = g->n;
    struct cs c = {.g = g, .n = n, .nsup = nsup, .mult = (int64_t)n * ALPHA};
    cs_arcs_new(&c);
    int32_t nr = g->first[n], vf = g->vpos, vb = vf >= 0 ? g->rev[vf] : -1;
    /* the virtual arc is frozen (no capacity): its cost would overflow */
    for (int32_t r = 0; r < nr; r++)
        c.arc[r].cost = r == vf || r == vb ? 0 : g->rcost[r] * c.mult;
    int64_t eps0 = cmax * c.mult / ALPHA;
    int64_t *ex0 = NULL;
    if (!routed) {
        c.unrouted = true;
        c.price_floor = -(int64_t)(ALPHA + 2) * n * eps0;
        c.relabel_cap = (int64_t)(ALPHA + 3) * n * n;
        ex0 = hrm_alloc(sizeof(int64_t) * (size_t)n);
        memcpy(ex0, g->ex, sizeof(int64_t) * (size_t)n);
    }
    bool ok = scale_phases(&c, eps0);
    if (ok) {
        for (int32_t v = 0; v < n; v++)
            g->vx[v].pi = floor_div(c.pi[v], c.mult);
    } else {
        memcpy(g->ex, ex0, sizeof(int64_t) * (size_t)n);
        g->scale_gave_up++;
    }
    cs_arcs_free(&c, ok);
    hrm_free(ex0);
    return ok;
}

int flow_scaling(struct hrm_flow *g, struct hrm_error *err)
{
    int32_t n = g->n;
    int64_t nsup = 0, ndem = 0;
    for (int32_t v = 0; v < n; v++) {
        nsup += g->ex[v] > 0;
        ndem += g->ex[v] < 0;
    }
    int64_t cmax = max_abs_cost(g);
    bool phases = cmax > 0 && n > 1;
    /* Supplies (no virtual arc, whose flow is the maximum value Dinic finds):
     * the first phase routes them, unless they look infeasible, or unless
     * they go from one source to one sink.  There every feasible flow sends
     * each unit where the optimum does, only by other paths, and the price
     * refinement of Dinic's flow before the first phase gives it prices worth
     * its cost: goto and P1 (one source, one sink) 1.2-1.9x fewer relabels
     * with Dinic's flow, netgen and gridgen (many) up to 1.4x fewer without,
     * and Dinic's own 17-28 % of the time saved (measured at sizes S and M). */
    bool route_first = nsup == 1 && ndem == 1;
    if (phases && g->vpos < 0 && !route_first && run_phases(g, cmax, nsup, false)) {
        if (g->scale_audit)
            g->scale_phase_cost = flow_cost(g);
        return settle(g, err);
    }
    int64_t vflow_cap = 0;
    /* the virtual arc stays out of the scaling: its flow is the maximum value */
    if (g->vpos >= 0) {
        vflow_cap = g->rcap[g->vpos];
        g->rcap[g->vpos] = 0;
        g->ex[g->vs] += vflow_cap;
        g->ex[g->vt] -= vflow_cap;
        nsup = 0;
        for (int32_t v = 0; v < n; v++)
            nsup += g->ex[v] > 0;
    }
    int64_t left = route_excess(g);
    int64_t value = 0;
    if (g->vpos >= 0) {
        value = vflow_cap - g->ex[g->vs];
        g->ex[g->vs] = 0;
        g->ex[g->vt] = 0;
        g->rcap[g->vpos] = vflow_cap - value;
        g->rcap[g->rev[g->vpos]] = value;
    } else if (left > 0) {
        return hrm_errorf(err, -HRM_EINFEASIBLE,
                          "flow: %lld units of supply cannot reach any demand", (long long)left);
    }
    /* the scaling keeps the virtual arc frozen */
    int64_t vres[2] = {0, 0};
    if (g->vpos >= 0) {
        vres[0] = g->rcap[g->vpos];
        vres[1] = g->rcap[g->rev[g->vpos]];
        g->rcap[g->vpos] = g->rcap[g->rev[g->vpos]] = 0;
    }
    if (phases)
        run_phases(g, cmax, nsup, true);
    if (g->scale_audit)
        g->scale_phase_cost = flow_cost(g);
    if (g->vpos >= 0) {
        g->rcap[g->vpos] = vres[0];
        g->rcap[g->rev[g->vpos]] = vres[1];
        price_virtual(g);
    }
    return settle(g, err);
}
