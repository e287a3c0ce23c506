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
 * of a member with capacity, cost c(j,t) + c(t,x)).  A bucket's pos is its
 * cheapest item whose task is folded (bucket_fix).  Unfolding a task rescans
 * the buckets that pointed at it; folding it again offers its items.  A
 * member whose arcs changed cost, capacity or flow is refreshed in place; a
 * group is rebuilt whole when arcs are added at one of its tasks or into it;
 * the arenas are append-only and are compacted by a full rebuild when more
 * than half of them is garbage.  The arcs into folded tasks are hidden at the
 * end of every vertex's slots (see "Hiding" below).
 */

void flow_sum_free(struct flow_sum *s)
{
    if (!s)
        return;
    void *arrays[] = {s->grp,    s->bk,    s->span,  s->it,    s->mem,     s->tit,   s->mem_of, s->lim, s->ue, s->live, s->note, s->moved,
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
    s->lim = hrm_reallocarray(s->lim, cap, sizeof(*s->lim));
    s->ue = hrm_reallocarray(s->ue, cap, sizeof(*s->ue));
    s->live = hrm_reallocarray(s->live, cap, sizeof(*s->live));
    s->moved = hrm_reallocarray(s->moved, cap, 1);
    memset(s->moved + s->vn, 1, cap - s->vn);
    s->vn = cap;
}

/*
 * Hiding.  The arcs into a folded task (its owner's, and the reverse arcs of
 * its placement arcs at every target) can carry nothing, yet the aggregators
 * of a scheduling graph hold thousands of them: the searches read 2.3
 * million of them on the 2,000-GPU graph, five times the arcs they could
 * use.  So each vertex keeps the arcs into folded tasks at the end of its
 * slots in use, from lim[v] on, and the shortest-path engine stops there.
 * Swapping two slots of one vertex keeps the graph (rev, apos follow); the
 * terminals of the virtual arc keep it last and are never partitioned.
 */
static void swap_slots(struct hrm_flow *g, int32_t x, int32_t p, int32_t q)
{
    /* x is p's and q's tail, which every caller has at hand (reading tail[p]
     * again was a load per swap, thousands of them per re-solve); every
     * caller works on the summaries, so g->sum is there */
    g->sum->moved[x] = 1; /* even p == q: a live boundary moves past it */
    if (p == q)
        return;
    int32_t rp = g->rev[p], rq = g->rev[q];
    int32_t np = rq == p ? q : rq == q ? p : rq; /* the partner of what lands at p */
    int32_t nq = rp == p ? q : rp == q ? p : rp;
    int32_t h = g->head[p];
    g->head[p] = g->head[q], g->head[q] = h;
    int64_t c = g->rcap[p];
    g->rcap[p] = g->rcap[q], g->rcap[q] = c;
    c = g->rcost[p];
    g->rcost[p] = g->rcost[q], g->rcost[q] = c;
    int32_t a = g->rarc[p];
    g->rarc[p] = g->rarc[q], g->rarc[q] = a;
    g->rev[p] = np, g->rev[q] = nq;
    if (np != p && np != q)
        g->rev[np] = p;
    if (nq != p && nq != q)
        g->rev[nq] = q;
    if (g->rarc[p] >= 0)
        g->apos[g->rarc[p]] = p;
    if (g->rarc[q] >= 0)
        g->apos[g->rarc[q]] = q;
}

static bool partitioned(const struct hrm_flow *g, int32_t x)
{
    return x != g->vs && x != g->vt;
}

/*
 * Live arcs.  Most arcs that are not hidden cannot carry flow either: the
 * reverse arcs of placement arcs without flow (residual capacity 0) at the
 * machines, racks and aggregators, and the saturated arcs of tasks that
 * carry flow, were half of what a search read on the 2,000-GPU graph.  So
 * the slots before lim[x] are in two parts too: arcs with residual capacity
 * first, up to live[x], the others after, and the engine stops at live[x].
 * A push changes the capacities of an arc and its partner while the search
 * tree and the current-arc pointers name slots, so pushes only note their
 * arc (flow_sum_note) and flow_sum_place moves the slots between the
 * routing's steps: until then an arc saturated by the routing stays before
 * live[x] (read and skipped, as before), and an arc that gained capacity
 * stays after it, unseen by the rest of that step (the routing finds less,
 * never something wrong); every search sees every arc that can carry flow.
 */
static void place_live(struct hrm_flow *g, int32_t r)
{
    struct flow_sum *s = g->sum;
    int32_t x = g->tail[r];
    if (!partitioned(g, x) || r >= s->lim[x])
        return;
    if (g->rcap[r] > 0) {
        if (r >= s->live[x])
            swap_slots(g, x, r, s->live[x]++);
    } else if (r < s->live[x]) {
        swap_slots(g, x, r, --s->live[x]);
    }
}

/* x's arcs before lim[x]: the ones with residual capacity first, in as few
 * swaps as there are misplaced pairs (a cold start finds most arcs in place). */
static void partition_live(struct hrm_flow *g, int32_t x)
{
    struct flow_sum *s = g->sum;
    if (!partitioned(g, x)) {
        s->live[x] = s->lim[x];
        return;
    }
    s->moved[x] = 1; /* the boundary is found again: its order is unknown */
    int32_t i = g->first[x], j = s->lim[x] - 1;
    for (;;) {
        while (i <= j && g->rcap[i] > 0)
            i++;
        while (i < j && g->rcap[j] <= 0)
            j--;
        if (i >= j)
            break;
        swap_slots(g, x, i++, j--);
    }
    s->live[x] = i;
}

void flow_sum_revive_slot(struct hrm_flow *g, int32_t x, int32_t r)
{
    swap_slots(g, x, r, g->sum->live[x]++);
}

void flow_sum_note_arc(struct hrm_flow *g, int32_t a)
{
    if (g->sum && g->sum->valid && !g->sum->live_all)
        flow_sum_note(g, g->apos[a]);
}

void flow_sum_place(struct hrm_flow *g)
{
    struct flow_sum *s = g->sum;
    if (!s || !s->valid) {
        if (s)
            s->nnote = 0;
        return;
    }
    if (s->live_all) {
        for (int32_t v = 0; v < g->n; v++)
            partition_live(g, v);
        s->live_all = false;
        s->nnote = 0;
        return;
    }
    /* the arrays' bases in registers: the swaps store through g, and the
     * loop read them (and s's fields) again after each one */
    const int32_t *note = s->note, *apos = g->apos, *rev = g->rev;
    for (size_t i = 0, n = s->nnote; i < n; i++) {
        int32_t a = note[i];
        place_live(g, apos[a]);
        place_live(g, rev[apos[a]]); /* read after: the first may have moved it */
    }
    s->nnote = 0;
}

int64_t flow_sum_misplaced(const struct hrm_flow *g)
{
    const struct flow_sum *s = g->sum;
    int64_t bad = 0;
    if (!s || !s->valid)
        return 0;
    for (int32_t v = 0; v < g->n; v++) {
        if (!partitioned(g, v))
            continue;
        for (int32_t p = g->first[v]; p < s->lim[v]; p++)
            bad += (g->rcap[p] > 0) != (p < s->live[v]);
        bad += s->live[v] > s->lim[v] || s->live[v] < g->first[v];
    }
    return bad;
}

/* Arc r (at x) goes to the hidden end of x's slots (through the end of its
 * live part, if it is there), or back to the end of the arcs without
 * capacity (noted: if it has some, flow_sum_place makes it live). */
static void hide(struct hrm_flow *g, int32_t x, int32_t r)
{
    struct flow_sum *s = g->sum;
    if (r >= s->lim[x])
        return;
    if (r < s->live[x]) {
        swap_slots(g, x, r, --s->live[x]);
        r = s->live[x];
    }
    swap_slots(g, x, r, --s->lim[x]);
}

static void unhide(struct hrm_flow *g, int32_t x, int32_t r)
{
    struct flow_sum *s = g->sum;
    if (r < s->lim[x])
        return;
    swap_slots(g, x, r, s->lim[x]);
    r = s->lim[x]++;
    if (g->rcap[r] > 0 && !s->live_all)
        swap_slots(g, x, r, s->live[x]++);
}

/* Folds or unfolds task t: its mark, and the arcs into it hidden or not. */
static void set_folded(struct hrm_flow *g, int32_t t, bool fold)
{
    if ((g->vx[t].sum < 0) == fold)
        return;
    g->vx[t].sum = fold ? -1 : 0;
    for (int32_t r2 = g->first[t], end = g->first[t] + g->fill[t]; r2 < end; r2++) {
        int32_t r = g->rev[r2], x = g->head[r2];
        if (r == r2 || x == t || !partitioned(g, x))
            continue;
        if (fold)
            hide(g, x, r);
        else
            unhide(g, x, r);
    }
}

/* x's arcs laid out again in two parts: the ones into folded tasks last. */
static void repartition(struct hrm_flow *g, int32_t x)
{
    int32_t k = g->first[x], end = g->first[x] + g->fill[x];
    if (partitioned(g, x))
        for (int32_t p = g->first[x]; p < end; p++)
            if (g->vx[g->head[p]].sum >= 0 || g->head[p] == x)
                swap_slots(g, x, p, k++);
    g->sum->lim[x] = partitioned(g, x) ? k : end;
    g->sum->ue[x] = end;
    partition_live(g, x);
}

/* Arcs added at x since its partition land after its hidden ones: bring
 * them forward (O(added), where repartitioning every placement target of an
 * arriving job read thousands of arcs each). */
static void take_added(struct hrm_flow *g, int32_t x)
{
    struct flow_sum *s = g->sum;
    int32_t end = g->first[x] + g->fill[x];
    if (!partitioned(g, x)) {
        s->live[x] = s->lim[x] = end;
    } else {
        for (int32_t p = s->ue[x]; p < end; p++)
            if (g->vx[g->head[p]].sum >= 0 || g->head[p] == x)
                unhide(g, x, p);
    }
    s->ue[x] = end;
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
    for (int32_t v = 0; v < g->n; v++)
        s->lim[v] = s->ue[v] = s->live[v] = g->first[v] + g->fill[v]; /* nothing hidden */
    s->nnote = 0;
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
        g->sum = hrm_calloc(1, sizeof(*g->sum));
    size_vertices(g->sum, (size_t)g->n);
    clear_all(g);
    g->sum->valid = false;
}

void flow_sum_relaid(struct hrm_flow *g, const int32_t *hid, const int32_t *live)
{
    struct flow_sum *s = g->sum;
    if (!s)
        return;
    if (!hid) {
        s->relaid = true;
        return;
    }
    size_vertices(s, (size_t)g->n);
    memset(s->moved, 1, (size_t)g->n); /* a whole layout writes user-arc order */
    for (int32_t v = 0; v < g->n; v++) {
        s->lim[v] = g->first[v] + hid[v];
        s->live[v] = partitioned(g, v) ? g->first[v] + live[v] : s->lim[v];
        s->ue[v] = g->first[v] + g->fill[v];
    }
    s->lim_n = (size_t)g->n;
}

void flow_sum_moved(struct hrm_flow *g, const int32_t *from, const int32_t *to, int32_t nv)
{
    struct flow_sum *s = g->sum;
    if (!s)
        return;
    int32_t k = (size_t)nv < s->lim_n ? nv : (int32_t)s->lim_n;
    for (int32_t v = 0; v < k; v++) {
        int32_t d = to[v] - from[v];
        s->lim[v] += d;
        s->live[v] += d;
        s->ue[v] += d;
    }
}

struct live_slot {
    int32_t head, rev, tail, rarc;
    int64_t rcap, rcost;
};

/*
 * Puts the backward arcs of x's live part (those that cancel flow: a task's
 * arc back to its job, a target's arcs back to the tasks it holds) before its
 * forward ones, each kind in its order; at and tmp hold the part's length.
 * The routing appends an arc that gains capacity to the end of the live part
 * (flow_sum_revive), so after a while a task that carries flow offers its
 * tied placements before its way back to its job, and a depth-first pass
 * looking for a job that can give way wanders from placement to placement.
 */
static void backward_first(struct hrm_flow *g, int32_t x, int32_t *at, struct live_slot *tmp)
{
    int32_t f = g->first[x], k = g->sum->live[x] - f, nb = 0;
    bool forward_seen = false, in_order = true;
    for (int32_t i = 0; i < k; i++) {
        bool back = g->rarc[f + i] < 0;
        in_order &= !(back && forward_seen);
        forward_seen |= !back;
        nb += back;
    }
    if (in_order)
        return;
    for (int32_t i = 0, b = 0, fw = nb; i < k; i++)
        at[i] = g->rarc[f + i] < 0 ? b++ : fw++; /* slot f + i goes to f + at[i] */
    for (int32_t i = 0; i < k; i++) {
        int32_t r = f + i;
        tmp[at[i]] = (struct live_slot){g->head[r], g->rev[r], g->tail[r], g->rarc[r],
                                        g->rcap[r], g->rcost[r]};
    }
    for (int32_t i = 0; i < k; i++) {
        int32_t r = f + i, q = tmp[i].rev;
        g->head[r] = tmp[i].head, g->tail[r] = tmp[i].tail, g->rarc[r] = tmp[i].rarc;
        g->rcap[r] = tmp[i].rcap, g->rcost[r] = tmp[i].rcost;
        if (q >= f && q < f + k) { /* a self-loop's partner moves too */
            g->rev[r] = f + at[q - f];
        } else {
            g->rev[r] = q;
            g->rev[q] = r;
        }
        if (g->rarc[r] >= 0)
            g->apos[g->rarc[r]] = r;
    }
}

void flow_sum_backward_first(struct hrm_flow *g, int32_t nv)
{
    struct flow_sum *s = g->sum;
    if (!s || !s->valid || s->live_all)
        return;
    int32_t k = (size_t)nv < s->lim_n ? nv : (int32_t)s->lim_n, most = 0;
    for (int32_t v = 0; v < k; v++)
        if (s->moved[v] && s->live[v] - g->first[v] > most)
            most = s->live[v] - g->first[v];
    int32_t *at = hrm_alloc(sizeof(*at) * ((size_t)most + 1));
    struct live_slot *tmp = hrm_alloc(sizeof(*tmp) * ((size_t)most + 1));
    for (int32_t v = 0; v < k; v++) {
        if (s->moved[v] && partitioned(g, v))
            backward_first(g, v, at, tmp);
        s->moved[v] = 0;
    }
    hrm_free(at);
    hrm_free(tmp);
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

/* Bucket b's cheapest item whose task is folded and whose arc has capacity
 * (the first of equal ones).  Buckets are not sorted: a task's arc that
 * changes cost or capacity is then one write and a rescan of its buckets,
 * where sorted buckets had to be built again with their whole group (a batch
 * of changes rebuilt twenty groups of 1,400 items). */
static void bucket_fix(struct hrm_flow *g, int32_t b)
{
    struct flow_sum *s = g->sum;
    struct sum_span *B = &s->span[b];
    int32_t best = B->end;
    int64_t cost = INT64_MAX;
    for (int32_t i = B->start; i < B->end; i++) {
        const struct sum_item *I = &s->it[i];
        if (I->cost < cost && g->vx[I->t].sum < 0 && g->rcap[g->apos[I->atx]] > 0) {
            best = i;
            cost = I->cost;
        }
    }
    B->pos = best;
    s->bk[b].cost = cost;
}

/* Item i (of a folded task, with capacity) may now be its bucket's cheapest. */
static void bucket_offer(struct hrm_flow *g, int32_t i)
{
    struct flow_sum *s = g->sum;
    const struct sum_item *I = &s->it[i];
    struct flow_sum_bucket *B = &s->bk[I->b];
    if (I->cost < B->cost && g->rcap[g->apos[I->atx]] > 0) {
        s->span[I->b].pos = i;
        B->cost = I->cost;
    }
}

static void drop_group(struct hrm_flow *g, int32_t u)
{
    struct flow_sum *s = g->sum;
    struct sum_group *G = &s->grp[g->vx[u].sum - 1];
    for (int32_t i = 0; i < G->nm; i++) {
        int32_t t = s->mem[G->m0 + i].t;
        set_folded(g, t, false);
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

/* (Re)builds u's group from its current arcs and flows: its members among
 * the heads of the user arcs arcs[0 .. narcs), or of all of u's arcs when
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
        int32_t r = arcs ? g->apos[arcs[i]] : r0 + i;
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
    HRM_GROW(s->span, s->span_cap, s->nbk + (size_t)ni);
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
        *M = (struct sum_member){
            .t = t, .ajt = g->in_arc[t], .job = u, .fill = g->fill[t], .i0 = i0, .ni = 0};
        s->mem_of[t] = mi;
        for (int32_t r2 = g->first[t], end = g->first[t + 1]; r2 < end; r2++) {
            int32_t x = g->head[r2];
            if (r2 == g->rev[r] || x == t || g->rcap[r2] + g->rcap[g->rev[r2]] <= 0)
                continue;
            if (s->bstamp[x] != s->stamp) {
                s->bstamp[x] = s->stamp;
                s->bmark[x] = (int32_t)s->nbk;
                s->span[s->nbk] = (struct sum_span){.end = 0};
                s->bk[s->nbk++] = (struct flow_sum_bucket){.x = x, .job = u};
            }
            s->span[s->bmark[x]].end++;
            M->ni++;
        }
        i0 += M->ni;
    }
    G->nb = (int32_t)s->nbk - G->b0;
    /* item ranges: pos = where the next item of the bucket goes */
    int32_t at = (int32_t)s->nit;
    for (int32_t b = G->b0; b < G->b0 + G->nb; b++) {
        s->span[b].pos = at;
        at += s->span[b].end;
        s->span[b].end = at;
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
            s->it[s->span[b].pos++] = (struct sum_item){
                .cost = cjt + g->rcost[r2], .t = t, .atx = g->rarc[r2], .b = b, .m = G->m0 + k};
        }
    }
    /* sort each bucket, point every member at its items, find each bucket's best */
    for (int32_t b = G->b0; b < G->b0 + G->nb; b++) {
        struct sum_span *B = &s->span[b];
        B->pos = B->start = b == G->b0 ? (int32_t)s->nit : s->span[b - 1].end;
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
    for (int32_t k = 0; k < nm; k++) {
        const struct sum_member *M = &s->mem[G->m0 + k];
        set_folded(g, M->t, folds(g, M));
    }
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
            arcs[at[g->afrom[a]]++] = a; /* slots move as groups fold their tasks */
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
    set_folded(g, t, true);
    const struct sum_member *M = &s->mem[mi];
    for (int32_t k = 0; k < M->ni; k++)
        bucket_offer(g, s->tit[M->i0 + k]);
}

/* Member t's arcs changed cost or capacity (not in number): its items' costs,
 * its folding and its buckets' cheapest again, without rebuilding the group. */
static void refresh(struct hrm_flow *g, int32_t t)
{
    struct flow_sum *s = g->sum;
    const struct sum_member *M = &s->mem[s->mem_of[t]];
    int64_t cjt = g->rcost[g->apos[M->ajt]];
    set_folded(g, t, folds(g, M));
    for (int32_t k = 0; k < M->ni; k++) {
        int32_t i = s->tit[M->i0 + k];
        s->it[i].cost = cjt + g->rcost[g->apos[s->it[i].atx]];
        bucket_fix(g, s->it[i].b);
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
            set_folded(g, M->t, folds(g, M));
        }
        for (int32_t b = G->b0; b < G->b0 + G->nb; b++)
            bucket_fix(g, b);
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
        s->relaid = false;
        s->lim_n = (size_t)g->n;
        clear_all(g);
        for (size_t i = 0; i < s->ntouched; i++)
            s->touch[s->touched[i]] = 0;
        s->ntouched = 0;
        build_all(g);
        s->valid = true;
        s->stale = false;
        s->live_all = true;
        flow_sum_place(g);
        return;
    }
    /* where arcs were laid out again or added, the hidden parts are found
     * again first (an added arc lands after them) */
    if (s->relaid)
        for (int32_t v = 0; v < g->n; v++)
            repartition(g, v);
    else
        for (int32_t v = (int32_t)s->lim_n; v < g->n; v++)
            repartition(g, v);
    s->relaid = false;
    s->lim_n = (size_t)g->n;
    if (s->stale) {
        s->live_all = true; /* flows changed anywhere */
        refold_all(g);
        s->stale = false;
    }
    for (size_t i = 0; i < s->nunfolded; i++)
        refold(g, s->unfolded[i]);
    s->nunfolded = 0;
    /* arcs added at a vertex lie after its hidden ones, as if hidden: the
     * groups first (an arriving job's tasks fold without moving their arcs),
     * then what must not stay hidden comes forward */
    for (size_t i = 0; i < s->ntouched; i++) {
        int32_t v = s->touched[i];
        if (s->mem_of[v] >= 0 && g->in_n[v] == 1 && g->fill[v] == s->mem[s->mem_of[v]].fill)
            refresh(g, v); /* only costs, capacities or flows of its arcs changed */
        else
            enqueue_owners(g, v);
    }
    /* a task with an excess does not fold (supplies, patched arcs) */
    for (size_t i = 0; i < g->npend; i++) {
        int32_t v = g->pend[i];
        if (g->ex[v] != 0 && s->mem_of[v] >= 0)
            refresh(g, v);
    }
    run_queue(g);
    for (size_t i = 0; i < s->ntouched; i++) {
        s->touch[s->touched[i]] = 0;
        take_added(g, s->touched[i]);
    }
    s->ntouched = 0;
    flow_sum_place(g);
}

void flow_sum_push(struct hrm_flow *g, int32_t b, int64_t delta)
{
    struct flow_sum *s = g->sum;
    const struct sum_item *I = &s->it[s->span[b].pos];
    const struct sum_member *M = &s->mem[I->m];
    int32_t t = I->t, j = s->bk[b].job, rjt = g->apos[M->ajt], rtx = g->apos[I->atx];
    g->rcap[rjt] -= delta;
    g->rcap[g->rev[rjt]] += delta;
    g->rcap[rtx] -= delta;
    g->rcap[g->rev[rtx]] += delta;
    flow_sum_note(g, rjt);
    flow_sum_note(g, rtx);
    flow_sum_revive(g, t, g->rev[rjt]);
    flow_sum_revive(g, s->bk[b].x, g->rev[rtx]);
    /* both arcs of the path tight: j -> t by this, t -> x as the edge was */
    g->vx[t].pi = g->vx[j].pi + g->rcost[rjt];
    set_folded(g, t, false);
    for (int32_t k = 0; k < M->ni; k++) {
        int32_t i = s->tit[M->i0 + k];
        if (s->span[s->it[i].b].pos == i)
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


