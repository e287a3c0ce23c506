/* Dinic's algorithm over every residual arc: flow_route's unrestricted case, cost scaling's first flow. */
#include <stdint.h>
#include <string.h>

#include "flow_private.h"

/*
 * Dinic's blocking flows over every arc with residual capacity: flow_route's
 * unrestricted case (flow_route(g, src, nsrc, -1) calls this).  The
 * shortest-path engine's restricted routing (admissible arcs, summaries of
 * flow-free tasks) stays in ssp.c, where every arc's test pays for that
 * generality; here an arc's test is its residual capacity and its head's
 * level, nothing else, and the depth-first search keeps the vertices of its
 * path instead of looking each tail up.  On GOTO-like graphs (one source, one
 * sink, 2^22 units over arcs of capacity <= 2^16), where cost scaling routes
 * the supplies first, Dinic's flow was 30 % of the whole solve.
 */

/* Levels by breadth-first search from the sources with excess over arcs with
 * residual capacity, up to the level of the nearest deficit; false when no
 * deficit is reachable.  *nq: the vertices levelled (g->queue[0 .. *nq)). */
static bool levels(struct hrm_flow *g, const int32_t *src, int32_t nsrc, int32_t *nq)
{
    int32_t *lvl = g->lvl, *queue = g->queue;
    const int32_t *first = g->first, *head = g->head;
    const int64_t *ex = g->ex, *rcap = g->rcap;
    int32_t qh = 0, qt = 0, limit = INT32_MAX;
    memset(lvl, 0xff, sizeof(int32_t) * (size_t)g->n); /* -1: not levelled */
    for (const int32_t *s = src; s < src + nsrc; s++) {
        if (ex[*s] <= 0)
            continue; /* routed already */
        lvl[*s] = 0;
        queue[qt++] = *s;
    }
    while (qh < qt) {
        int32_t u = queue[qh++], lu = lvl[u];
        /* breadth first: every vertex after u is as deep as u, so none is
         * expanded and the nearest deficit's level is already known (a
         * deeper vertex's level was set when it was queued) */
        if (lu >= limit)
            break;
        if (ex[u] < 0) {
            limit = lu;
            continue;
        }
        for (int32_t r = first[u], end = first[u + 1]; r < end; r++) {
            int32_t w = head[r];
            if (lvl[w] < 0 && rcap[r] > 0) {
                lvl[w] = lu + 1;
                queue[qt++] = w;
            }
        }
    }
    *nq = qt;
    return limit < INT32_MAX;
}

/* A blocking flow from s along level-increasing arcs with residual capacity
 * (current-arc pointers; a vertex with no way on leaves the level graph;
 * after an augmentation the search resumes below the first saturated arc).
 * path[k] is the k-th arc of the search's path, node[k] its tail. */
static void block_from(struct hrm_flow *g, int32_t s, int32_t *path, int32_t *node)
{
    int32_t *cur = g->cur, *lvl = g->lvl;
    const int32_t *first = g->first, *head = g->head, *rev = g->rev;
    int64_t *ex = g->ex, *rcap = g->rcap;
    int32_t depth = 0, u = s;
    while (ex[s] > 0) {
        if (ex[u] < 0) {
            int64_t delta = ex[s] < -ex[u] ? ex[s] : -ex[u];
            for (int32_t k = 0; k < depth; k++)
                if (rcap[path[k]] < delta)
                    delta = rcap[path[k]];
            /* push, from the deficit back: cut ends at the first arc the
             * push saturates (depth if none) */
            int32_t cut = depth;
            for (int32_t k = depth - 1; k >= 0; k--) {
                int32_t e = path[k];
                cut = rcap[e] == delta ? k : cut;
                rcap[e] -= delta;
                rcap[rev[e]] += delta;
            }
            ex[s] -= delta;
            ex[u] += delta;
            g->stats.augmentations++;
            depth = cut; /* resume at the tail of the first saturated arc */
            u = depth > 0 ? head[path[depth - 1]] : s;
            continue;
        }
        int32_t r = cur[u], end = first[u + 1], want = lvl[u] + 1;
        for (; r < end; r++)
            if (lvl[head[r]] == want && rcap[r] > 0)
                break;
        cur[u] = r;
        if (r < end) {
            node[depth] = u;
            path[depth++] = r;
            u = head[r];
            continue;
        }
        lvl[u] = -1; /* no way on from u in this level graph */
        if (depth == 0)
            break;
        u = node[--depth];
        cur[u]++;
    }
}

void flow_route_all(struct hrm_flow *g, const int32_t *src, int32_t nsrc)
{
    int32_t nq;
    /* a path has at most n arcs: g->stack holds the arcs, g->list the tails */
    while (levels(g, src, nsrc, &nq)) {
        for (int32_t i = 0; i < nq; i++)
            g->cur[g->queue[i]] = g->first[g->queue[i]];
        for (int32_t i = 0; i < nsrc; i++)
            if (g->ex[src[i]] > 0)
                block_from(g, src[i], g->stack, g->list);
    }
}
