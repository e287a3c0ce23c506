/* Summaries of flow-free tasks for the shortest-path engine (see flow_private.h). */
#include <stdlib.h>
#include <string.h>

#include "ssp_sum.h"
#include "hrm/alloc.h"

/*
 * Why: on a scheduling graph most tasks carry no flow (80 of every job's 100
 * on the 2,000-GPU graph of `hrm bench flow`), and they sit at reduced
 * distance 0 from their job, so every search settled each of them and scanned
 * its dozen placement arcs, and so did every depth-first pass: ~8,000 of the
 * ~11,000 vertices a search settled.  A job's summary has one edge per
 * placement target instead (docs/flow-solver.md, "Summaries of flow-free
 * tasks").
 *
 * Layout: a group per owner j (vx[j].sum = group + 1) holds its members (the
 * tasks it owns, folded or not), its buckets (one per head x: the summary
 * edges, global ids into bk[]) and per bucket its items (one per arc t -> x
 * of a member, sorted by c(j,t) + c(t,x), then t).  A bucket's pos is its
 * first folded item; items before pos are not folded.  Unfolding a task
 * advances the buckets that pointed at it, folding it again moves them back.
 * Groups are rebuilt whole when anything about them changes outside the
 * engine (a dirty arc at one of their vertices, an excess, a new arc); the
 * arenas are append-only and are compacted by a full rebuild when more than
 * half of them is garbage.
 */

void flow_sum_free(struct flow_sum *s)
{
    if (!s)
        return;
    void *arrays[] = {s->grp,    s->bk,    s->it,    s->mem,     s->tit,   s->mem_of,
                      s->bmark,  s->bstamp, s->touch, s->queued, s->touched, s->queue,
                      s->unfolded, s->cand};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        hrm_free(arrays[i]);
    hrm_free(s);
}

static void size_vertices(struct flow_sum *s, size_t n)
{
    if (n <= s->vn)
        return;
    size_t cap = s->vn ? s->vn : 64;
    while (cap < n)
        cap *= 2;
    s->mem_of = hrm_reallocarray(s->mem_of, cap, sizeof(*s->mem_of));
    memset(s->mem_of + s->vn, 0xff, (cap - s->vn) * sizeof(*s->mem_of));
    s->bmark = hrm_reallocarray(s->bmark, cap, sizeof(*s->bmark));
    s->bstamp = hrm_reallocarray(s->bstamp, cap, sizeof(*s->bstamp));
    memset(s->bstamp + s->vn, 0, (cap - s->vn) * sizeof(*s->bstamp));
    s->touch = hrm_reallocarray(s->touch, cap, 1);
    memset(s->touch + s->vn, 0, cap - s->vn);
    s->queued = hrm_reallocarray(s->queued, cap, 1);
    memset(s->queued + s->vn, 0, cap - s->vn);
    s->vn = cap;
}

/* Unfolds every task and forgets every group (their vertices go back to 0). */
static void clear_all(struct hrm_flow *g)
{
    struct flow_sum *s = g->sum;
    for (size_t k = 0; k < s->ngrp; k++) {
        struct sum_group *G = &s->grp[k];
        if (G->job < 0)
            continue;
        g->vx[G->job].sum = 0;
        for (int32_t i = 0; i < G->nm; i++) {
            int32_t t = s->mem[G->m0 + i].t;
            g->vx[t].sum = 0;
            s->mem_of[t] = -1;
        }
    }
    s->ngrp = s->nbk = s->nit = s->nmem = s->ntit = s->dead = 0;
    s->nunfolded = 0;
}

void flow_sum_forget(struct flow_sum *s, bool shape)
{
    if (!s)
        return;
    if (shape)
        s->valid = false;
    s->stale = true;
}

void flow_sum_drop(struct hrm_flow *g)
{
    if (!g->sum)
        return;
    clear_all(g);
    g->sum->valid = false;
}

void flow_sum_touch(struct hrm_flow *g, int32_t v)
{
    struct flow_sum *s = g->sum;
    if (!s || !s->valid)
        return;
    size_vertices(s, (size_t)g->n);
    if (s->touch[v])
        return;
    s->touch[v] = 1;
    HRM_GROW(s->touched, s->touched_cap, s->ntouched + 1);
    s->touched[s->ntouched++] = v;
}

static void enqueue(struct flow_sum *s, int32_t u)
{
    if (s->queued[u])
        return;
    s->queued[u] = 1;
    HRM_GROW(s->queue, s->queue_cap, s->nqueue + 1);
    s->queue[s->nqueue++] = u;
}

/* v has exactly one arc in (counting the virtual arc into vs). */
static bool one_in(const struct hrm_flow *g, int32_t v)
{
    return g->in_n[v] + (v == g->vs) == 1;
}

/*
 * The owner whose group depends on v, after a change of an arc at v or of
 * its excess: v's parent when v has one arc in (v is, or may now be, one of
 * its tasks).  A member that gained an arc in was its parent's task; one that
 * gained an arc out (to a vertex that now has one arc in, perhaps) or whose
 * arc changed is reached the same way.  An owner's own changes reach it
 * through its tasks (an arc out of it is an arc into one of them), and arcs
 * into an owner or into a placement target do not change any group (a
 * target only gains arcs in, so it stays a target): rebuilding the group of
 * every machine a new job's tasks point at made an arrival 2.5x dearer.
 */
static void enqueue_owners(struct hrm_flow *g, int32_t v)
{
    struct flow_sum *s = g->sum;
    if (s->mem_of[v] >= 0)
        enqueue(s, s->mem[s->mem_of[v]].job); /* perhaps with a second arc in now */
    if (g->in_n[v] == 1)
        enqueue(s, g->afrom[g->in_arc[v]]);
}

static bool folds(const struct hrm_flow *g, const struct sum_member *m)
{
    /* no flow in, no excess and no supply: no flow out */
    int32_t r = g->apos[m->ajt];
    return g->rcap[r] > 0 && g->rcap[g->rev[r]] == 0 && g->ex[m->t] == 0 &&
           (g->mode != FLOW_MODE_SUPPLY || g->supply[m->t] == 0);
}

static void bucket_fix(struct hrm_flow *g, int32_t b)
{
    struct flow_sum *s = g->sum;
    struct flow_sum_bucket *B = &s->bk[b];
    while (B->pos < B->end && g->vx[s->it[B->pos].t].sum >= 0)
        B->pos++;
    B->cost = B->pos < B->end ? s->it[B->pos].cost : INT64_MAX;
}

static void drop_group(struct hrm_flow *g, int32_t u)
{
    struct flow_sum *s = g->sum;
    struct sum_group *G = &s->grp[g->vx[u].sum - 1];
    for (int32_t i = 0; i < G->nm; i++) {
        int32_t t = s->mem[G->m0 + i].t;
        g->vx[t].sum = 0;
        s->mem_of[t] = -1;
        s->dead += (size_t)s->mem[G->m0 + i].ni;
    }
    G->job = -1;
    g->vx[u].sum = 0;
}

/*
 * t (reached by residual arc r from u) may be a member of u's group: u's only
 * way in to t, not an owner, no terminal, and no arc out to u or to a vertex
 * with one arc in (which could be a member itself).  Returns its items, or -1.
 */
static int32_t member_items(const struct hrm_flow *g, int32_t u, int32_t r)
{
    int32_t t = g->head[r];
    if (t == u || g->tail[r] != u || g->in_n[t] != 1 || g->apos[g->in_arc[t]] != r ||
        t == g->vs || t == g->vt || g->vx[t].sum > 0)
        return -1;
    int32_t items = 0;
    for (int32_t r2 = g->first[t], end = g->first[t + 1]; r2 < end; r2++) {
        int32_t x = g->head[r2];
        if (r2 == g->rev[r] || x == t)
            continue; /* the way in, or a free slot */
        if (x == u || one_in(g, x))
            return -1;
        items += g->rcap[r2] + g->rcap[g->rev[r2]] > 0;
    }
    return items;
}

static int cmp_item(const void *a, const void *b)
{
    const struct sum_item *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

static void sort_items(struct sum_item *it, int32_t n)
{
    if (n > 24) {
        qsort(it, (size_t)n, sizeof(*it), cmp_item);
        return;
    }
    for (int32_t i = 1; i < n; i++) {
        struct sum_item k = it[i];
        int32_t j = i - 1;
        while (j >= 0 && cmp_item(&it[j], &k) > 0) {
            it[j + 1] = it[j];
            j--;
        }
        it[j + 1] = k;
    }
}

/* (Re)builds u's group from its current arcs and flows: its members among
 * the heads of the residual arcs arcs[0 .. narcs), or of all of u's arcs when
 * arcs is NULL. */
static void build_group(struct hrm_flow *g, int32_t u, const int32_t *arcs, int32_t narcs)
{
    struct flow_sum *s = g->sum;
    if (g->vx[u].sum > 0)
        drop_group(g, u);
    if (s->mem_of[u] >= 0)
        enqueue(s, s->mem[s->mem_of[u]].job); /* u owns tasks now: not a member */
    int32_t nm = 0, ni = 0;
    int32_t r0 = g->first[u], nr = arcs ? narcs : g->first[u + 1] - r0;
    for (int32_t i = 0; i < nr; i++) {
        int32_t r = arcs ? arcs[i] : r0 + i;
        int32_t k = member_items(g, u, r);
        if (k < 0)
            continue;
        HRM_GROW(s->cand, s->cand_cap, (size_t)nm + 1);
        s->cand[nm++] = r;
        ni += k;
    }
    if (nm < 2)
        return;
    HRM_GROW(s->grp, s->grp_cap, s->ngrp + 1);
    HRM_GROW(s->mem, s->mem_cap, s->nmem + (size_t)nm);
    HRM_GROW(s->it, s->it_cap, s->nit + (size_t)ni);
    HRM_GROW(s->tit, s->tit_cap, s->ntit + (size_t)ni);
    HRM_GROW(s->bk, s->bk_cap, s->nbk + (size_t)ni);
    int32_t gid = (int32_t)s->ngrp++;
    struct sum_group *G = &s->grp[gid];
    *G = (struct sum_group){.job = u, .b0 = (int32_t)s->nbk, .m0 = (int32_t)s->nmem, .nm = nm,
                            .pi_seen = g->vx[u].pi};
    g->vx[u].sum = gid + 1;
    if (++s->stamp == 0) {
        memset(s->bstamp, 0, s->vn * sizeof(*s->bstamp));
        s->stamp = 1;
    }
    /* members, and a bucket per head counting its items (in end) */
    int32_t i0 = (int32_t)s->ntit;
    for (int32_t k = 0; k < nm; k++) {
        int32_t r = s->cand[k], t = g->head[r];
        int32_t mi = G->m0 + k;
        struct sum_member *M = &s->mem[mi];
        *M = (struct sum_member){.t = t, .ajt = g->in_arc[t], .job = u, .i0 = i0, .ni = 0};
        s->mem_of[t] = mi;
        g->vx[t].sum = folds(g, M) ? -1 : 0;
        for (int32_t r2 = g->first[t], end = g->first[t + 1]; r2 < end; r2++) {
            int32_t x = g->head[r2];
            if (r2 == g->rev[r] || x == t || g->rcap[r2] + g->rcap[g->rev[r2]] <= 0)
                continue;
            if (s->bstamp[x] != s->stamp) {
                s->bstamp[x] = s->stamp;
                s->bmark[x] = (int32_t)s->nbk;
                s->bk[s->nbk++] = (struct flow_sum_bucket){.x = x, .job = u, .end = 0};
            }
            s->bk[s->bmark[x]].end++;
            M->ni++;
        }
        i0 += M->ni;
    }
    G->nb = (int32_t)s->nbk - G->b0;
    /* item ranges: pos = where the next item of the bucket goes */
    int32_t at = (int32_t)s->nit;
    for (int32_t b = G->b0; b < G->b0 + G->nb; b++) {
        s->bk[b].pos = at;
        at += s->bk[b].end;
        s->bk[b].end = at;
    }
    for (int32_t k = 0; k < nm; k++) {
        struct sum_member *M = &s->mem[G->m0 + k];
        int32_t t = M->t;
        int32_t rjt = g->apos[M->ajt];
        int64_t cjt = g->rcost[rjt];
        for (int32_t r2 = g->first[t], end = g->first[t + 1]; r2 < end; r2++) {
            int32_t x = g->head[r2];
            if (r2 == g->rev[rjt] || x == t || g->rcap[r2] + g->rcap[g->rev[r2]] <= 0)
                continue;
            int32_t b = s->bmark[x];
            s->it[s->bk[b].pos++] = (struct sum_item){
                .cost = cjt + g->rcost[r2], .t = t, .atx = g->rarc[r2], .b = b, .m = G->m0 + k};
        }
    }
    /* sort each bucket, point every member at its items, find each bucket's best */
    for (int32_t b = G->b0; b < G->b0 + G->nb; b++) {
        struct flow_sum_bucket *B = &s->bk[b];
        int32_t start = b == G->b0 ? (int32_t)s->nit : s->bk[b - 1].end;
        sort_items(s->it + start, B->end - start);
        B->pos = B->start = start;
    }
    int32_t *fillm = s->cand; /* reuse: items placed per member */
    for (int32_t k = 0; k < nm; k++)
        fillm[k] = 0;
    for (int32_t i = (int32_t)s->nit; i < at; i++) {
        int32_t k = s->it[i].m - G->m0;
        s->tit[s->mem[s->it[i].m].i0 + fillm[k]++] = i;
    }
    s->nit = (size_t)at;
    s->ntit = (size_t)i0;
    s->nmem += (size_t)nm;
    for (int32_t b = G->b0; b < G->b0 + G->nb; b++)
        bucket_fix(g, b);
}

static void run_queue(struct hrm_flow *g)
{
    struct flow_sum *s = g->sum;
    for (size_t i = 0; i < s->nqueue; i++) {
        int32_t u = s->queue[i];
        s->queued[u] = 0;
        build_group(g, u, NULL, 0);
    }
    s->nqueue = 0;
}

/* Every group from scratch: the vertices with one arc in, by their parent
 * (scanning the parents' arcs instead read the thousands of arcs into the
 * aggregators of a scheduling graph, three random reads each). */
static void build_all(struct hrm_flow *g)
{
    int32_t n = g->n;
    int32_t *cnt = hrm_calloc((size_t)n + 1, sizeof(int32_t));
    int32_t k = 0;
    for (int32_t v = 0; v < n; v++)
        if (g->in_n[v] == 1) {
            cnt[g->afrom[g->in_arc[v]] + 1]++;
            k++;
        }
    for (int32_t v = 0; v < n; v++)
        cnt[v + 1] += cnt[v];
    int32_t *arcs = hrm_alloc(sizeof(int32_t) * (size_t)(k + 1));
    int32_t *at = hrm_alloc(sizeof(int32_t) * (size_t)(n + 1));
    memcpy(at, cnt, sizeof(int32_t) * (size_t)(n + 1));
    for (int32_t v = 0; v < n; v++)
        if (g->in_n[v] == 1) {
            int32_t a = g->in_arc[v];
            arcs[at[g->afrom[a]]++] = g->apos[a];
        }
    for (int32_t u = 0; u < n; u++)
        if (cnt[u + 1] - cnt[u] >= 2)
            build_group(g, u, arcs + cnt[u], cnt[u + 1] - cnt[u]);
    run_queue(g);
    hrm_free(cnt);
    hrm_free(arcs);
    hrm_free(at);
}

/* Folds t again if it carries no flow and no excess (its buckets move back). */
static void refold(struct hrm_flow *g, int32_t t)
{
    struct flow_sum *s = g->sum;
    int32_t mi = s->mem_of[t];
    if (mi < 0 || g->vx[t].sum != 0 || !folds(g, &s->mem[mi]))
        return;
    g->vx[t].sum = -1;
    const struct sum_member *M = &s->mem[mi];
    for (int32_t k = 0; k < M->ni; k++) {
        int32_t i = s->tit[M->i0 + k];
        struct flow_sum_bucket *B = &s->bk[s->it[i].b];
        if (i < B->pos) {
            B->pos = i;
            B->cost = s->it[i].cost;
        }
    }
}

/* Which members fold, from their flows, for every group. */
static void refold_all(struct hrm_flow *g)
{
    struct flow_sum *s = g->sum;
    s->nunfolded = 0;
    for (size_t k = 0; k < s->ngrp; k++) {
        struct sum_group *G = &s->grp[k];
        if (G->job < 0)
            continue;
        for (int32_t i = 0; i < G->nm; i++) {
            const struct sum_member *M = &s->mem[G->m0 + i];
            g->vx[M->t].sum = folds(g, M) ? -1 : 0;
        }
        for (int32_t b = G->b0; b < G->b0 + G->nb; b++) {
            s->bk[b].pos = s->bk[b].start;
            bucket_fix(g, b);
        }
        G->pi_seen = g->vx[G->job].pi;
    }
}

void flow_sum_sync(struct hrm_flow *g)
{
    if (!g->sum)
        g->sum = hrm_calloc(1, sizeof(*g->sum));
    struct flow_sum *s = g->sum;
    size_vertices(s, (size_t)g->n);
    if (!s->valid || s->dead > s->nit / 2 + 65536) {
        clear_all(g);
        for (size_t i = 0; i < s->ntouched; i++)
            s->touch[s->touched[i]] = 0;
        s->ntouched = 0;
        build_all(g);
        s->valid = true;
        s->stale = false;
        return;
    }
    if (s->stale) {
        refold_all(g);
        s->stale = false;
    }
    for (size_t i = 0; i < s->nunfolded; i++)
        refold(g, s->unfolded[i]);
    s->nunfolded = 0;
    for (size_t i = 0; i < s->ntouched; i++) {
        int32_t v = s->touched[i];
        s->touch[v] = 0;
        enqueue_owners(g, v);
    }
    s->ntouched = 0;
    for (size_t i = 0; i < g->npend; i++)
        if (g->ex[g->pend[i]] != 0)
            enqueue_owners(g, g->pend[i]);
    run_queue(g);
}

void flow_sum_push(struct hrm_flow *g, int32_t b, int64_t delta)
{
    struct flow_sum *s = g->sum;
    const struct sum_item *I = &s->it[s->bk[b].pos];
    const struct sum_member *M = &s->mem[I->m];
    int32_t t = I->t, j = s->bk[b].job, rjt = g->apos[M->ajt], rtx = g->apos[I->atx];
    g->rcap[rjt] -= delta;
    g->rcap[g->rev[rjt]] += delta;
    g->rcap[rtx] -= delta;
    g->rcap[g->rev[rtx]] += delta;
    /* both arcs of the path tight: j -> t by this, t -> x as the edge was */
    g->vx[t].pi = g->vx[j].pi + g->rcost[rjt];
    g->vx[t].sum = 0;
    for (int32_t k = 0; k < M->ni; k++) {
        int32_t i = s->tit[M->i0 + k];
        if (s->bk[s->it[i].b].pos == i)
            bucket_fix(g, s->it[i].b);
    }
    HRM_GROW(s->unfolded, s->unfolded_cap, s->nunfolded + 1);
    s->unfolded[s->nunfolded++] = t;
}

void flow_sum_settle(struct hrm_flow *g)
{
    struct flow_sum *s = g->sum;
    if (!s || !s->valid)
        return;
    for (size_t k = 0; k < s->ngrp; k++) {
        struct sum_group *G = &s->grp[k];
        if (G->job < 0 || g->vx[G->job].pi == G->pi_seen)
            continue;
        int64_t pj = g->vx[G->job].pi;
        for (int32_t i = 0; i < G->nm; i++) {
            const struct sum_member *M = &s->mem[G->m0 + i];
            if (g->vx[M->t].sum < 0)
                g->vx[M->t].pi = pj + g->rcost[g->apos[M->ajt]];
        }
        G->pi_seen = pj;
    }
}

int32_t flow_sum_folded(const struct hrm_flow *g, int32_t *groups)
{
    int32_t folded = 0, ng = 0;
    for (int32_t v = 0; v < g->n; v++) {
        folded += g->vx[v].sum < 0;
        ng += g->vx[v].sum > 0;
    }
    if (groups)
        *groups = ng;
    return folded;
}


