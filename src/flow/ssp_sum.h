/* The summaries' state (ssp_sum.c), and the accessors the hot loops of ssp.c inline. */
#ifndef HRM_FLOW_SSP_SUM_H
#define HRM_FLOW_SSP_SUM_H

#include "flow_private.h"
#include "hrm/alloc.h"

struct sum_item {
    int64_t cost;
    int32_t t, atx; /* the task and its (user) arc t -> x */
    int32_t b, m;   /* its bucket and member */
};

struct sum_member {
    int32_t t, ajt; /* the task and its (user) arc j -> t */
    int32_t job;
    int32_t fill; /* t's residual arcs when the group was built */
    int32_t i0, ni; /* its items: tit[i0 .. i0 + ni) */
};

struct sum_group {
    int32_t job; /* -1: dead (garbage) */
    int32_t b0, nb, m0, nm;
    int64_t pi_seen; /* the owner's potential when its folded tasks' were last set */
};

/* Summary edge b's items (parallel to the edges, bk[b] and span[b]). */
struct sum_span {
    int32_t start, pos, end; /* items [start, end); items[pos] is the cheapest folded
                              * task's (pos == end: none) */
};

struct flow_sum {
    bool valid; /* the groups match the graph's arcs */
    bool stale; /* flows changed: which members fold must be found again */
    struct sum_group *grp;
    size_t ngrp, grp_cap;
    struct flow_sum_bucket *bk;
    struct sum_span *span; /* sized span_cap >= nbk */
    size_t nbk, bk_cap, span_cap;
    struct sum_item *it;
    size_t nit, it_cap;
    struct sum_member *mem;
    size_t nmem, mem_cap;
    int32_t *tit;
    size_t ntit, tit_cap;
    size_t dead; /* items of dead groups */
    /* per vertex, sized vn */
    size_t vn;
    int32_t *mem_of;   /* member index, -1 if none */
    int32_t *bmark;    /* group build: bucket of head x, valid when bstamp[x] == stamp */
    uint32_t *bstamp;
    uint32_t stamp;
    uint8_t *touch;    /* in touched[] or queued */
    uint8_t *queued;
    int32_t *touched, *queue, *unfolded;
    size_t ntouched, touched_cap, nqueue, queue_cap, nunfolded, unfolded_cap;
    int32_t *lim;  /* per vertex: its residual arcs from lim on point at folded tasks */
    int32_t *live; /* per vertex: its arcs in [live, lim) have no residual capacity (those
                    * before may have none too, until the next flow_sum_place) */
    bool live_all; /* every vertex's live part must be found again (flows changed anywhere) */
    uint8_t *moved; /* per vertex: its slots traded places (or were laid out) since its live
                     * part was last put backward arcs first (flow_sum_backward_first) */
    int32_t *note; /* user arcs whose residual capacities changed since flow_sum_place */
    size_t nnote, note_cap;
    int32_t *ue;   /* per vertex: the end of its arcs in use when lim was last found */
    bool relaid;   /* the residual graph was laid out again: every lim must be found */
    size_t lim_n;  /* vertices whose lim is kept */
    /* group build scratch */
    int32_t *cand;
    size_t cand_cap;
};

/* Owner u's summary edges: nb of them from b0, the returned array. */
static inline const struct flow_sum_bucket *flow_sum_edges(const struct hrm_flow *g, int32_t u,
                                                           int32_t *b0, int32_t *nb)
{
    const struct sum_group *G = &g->sum->grp[g->vx[u].sum - 1];
    *b0 = G->b0;
    *nb = G->nb;
    return g->sum->bk + G->b0;
}

/* Per vertex, where the arcs the searches and the routing read end: after
 * them come the arcs without residual capacity (from live[v]), then the arcs
 * hidden by folding (from lim[v]: arcs into a folded task carry nothing). */
static inline const int32_t *flow_sum_live(const struct hrm_flow *g)
{
    return g->sum->live;
}

void flow_sum_revive_slot(struct hrm_flow *g, int32_t x, int32_t r);

/* Residual arc r just gained capacity (the reverse arc of a push): if it lies
 * among its tail's arcs without capacity, it moves to the end of the live
 * ones now.  That moves no slot before live[] (it trades places with the
 * first arc without capacity), so it is safe in the middle of the routing,
 * and the routing finds every path the arcs allow, as before.  x is r's tail,
 * the head of the arc pushed, which the caller has read already: tail[r] at
 * the far end of the path's arcs was a cache miss per arc pushed. */
static inline void flow_sum_revive(struct hrm_flow *g, int32_t x, int32_t r)
{
    const struct flow_sum *s = g->sum;
    if (!s || !s->valid)
        return; /* nothing partitioned (flow_route outside flow_ssp, no summaries) */
    if (r >= s->live[x] && r < s->lim[x])
        flow_sum_revive_slot(g, x, r);
}

/* Residual arc r's capacity changed (a push): its slot (and its partner's)
 * may have to cross the live boundary at the next flow_sum_place.  Kept by
 * user arc, since slots move before the note is read; the virtual arc and
 * free slots are never partitioned. */
static inline void flow_sum_note(struct hrm_flow *g, int32_t r)
{
    int32_t a = g->rarc[r];
    if (a < 0)
        a = g->rarc[g->rev[r]];
    struct flow_sum *s = g->sum;
    if (a < 0 || !s || !s->valid || s->live_all)
        return;
    if (s->nnote == s->note_cap)
        HRM_GROW(s->note, s->note_cap, s->nnote + 1);
    s->note[s->nnote++] = a;
}

/* The layout may put the arcs into folded tasks last at each vertex. */
static inline bool flow_sum_keeps(const struct hrm_flow *g)
{
    return g->sum && g->sum->valid && !g->sum_off;
}

/* A slot at x of residual capacity rcap, not hidden, lies before live[x]
 * (at the terminals of the virtual arc, which are not partitioned, every
 * one: they keep user-arc order). */
static inline bool flow_sum_lives(const struct hrm_flow *g, int32_t x, int64_t rcap)
{
    return rcap > 0 || x == g->vs || x == g->vt;
}

/* The slot at x of an arc to y is hidden (flow_sum_keeps): y is folded. */
static inline bool flow_sum_hides(const struct hrm_flow *g, int32_t x, int32_t y)
{
    return g->vx[y].sum < 0 && y != x && x != g->vs && x != g->vt;
}

/* Summary edge b. */
static inline const struct flow_sum_bucket *flow_sum_edge(const struct hrm_flow *g, int32_t b)
{
    return &g->sum->bk[b];
}

/* What summary edge b can carry now (0 if it stands for no task). */
static inline int64_t flow_sum_cap(const struct hrm_flow *g, int32_t b)
{
    const struct flow_sum *s = g->sum;
    const struct sum_span *B = &s->span[b];
    if (B->pos >= B->end)
        return 0;
    const struct sum_item *I = &s->it[B->pos];
    int64_t a = g->rcap[g->apos[s->mem[I->m].ajt]], c = g->rcap[g->apos[I->atx]];
    return a < c ? a : c;
}

#endif
