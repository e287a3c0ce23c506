/* Helpers shared by the policies: cached first-fit node search, a min-heap, job grouping. */
#include <string.h>

#include "hrm/alloc.h"
#include "policy/policy_private.h"

/* ---- node search ---- */

void policy_fit_reset(struct policy_fit *fit)
{
    /* Runs once per pass, and passes are as frequent as events: no memset. */
    fit->nused = 0;
    fit->victim = 0;
}

static struct policy_fit_slot *fit_slot(struct policy_fit *fit, const struct hrm_res *req)
{
    for (unsigned i = 0; i < fit->nused; i++)
        if (memcmp(&fit->slot[i].req, req, sizeof(*req)) == 0)
            return &fit->slot[i];
    return NULL;
}

/* A slot for a request not seen this pass.  Evicting an old one only loses a
 * shortcut, never correctness. */
static struct policy_fit_slot *fit_claim(struct policy_fit *fit, const struct hrm_res *req)
{
    struct policy_fit_slot *sl;
    if (fit->nused < POLICY_FIT_SLOTS) {
        sl = &fit->slot[fit->nused++];
    } else {
        sl = &fit->slot[fit->victim];
        fit->victim = (fit->victim + 1) % POLICY_FIT_SLOTS;
    }
    sl->req = *req;
    sl->cursor = -1;
    return sl;
}

int32_t policy_fit_first(struct policy_fit *fit, const struct hrm_state *s, int32_t task)
{
    const struct hrm_res *req = &s->wl->tasks[task].req;
    if (req->v[HRM_DIM_CPU] <= 0) {
        /* Not produced by the workload builders; stay correct (such a task
         * could fit on a node with no cpu left) without caching. */
        for (int32_t n = 0; n < s->cluster->nnodes; n++)
            if (hrm_state_fits(s, task, n))
                return n;
        return -1;
    }
    if (s->free_head < 0)
        return -1;
    int32_t start = s->free_head;
    struct policy_fit_slot *sl = fit_slot(fit, req);
    if (sl) {
        if (sl->cursor < 0)
            return -1;
        /* A cursor on a node that left the list by a start made outside
         * policy_fit_start has lost its place: fall back to the head. */
        if (s->nodes[sl->cursor].in_free_list)
            start = sl->cursor;
    } else {
        sl = fit_claim(fit, req);
    }
    for (int32_t n = start; n >= 0; n = s->nodes[n].next_free) {
        if (hrm_state_fits(s, task, n)) {
            sl->cursor = n;
            return n;
        }
    }
    sl->cursor = -1;
    return -1;
}

int policy_fit_start(struct policy_fit *fit, struct hrm_sched_ctx *ctx, int32_t task, int32_t node)
{
    const struct hrm_node_state *ns = &ctx->state->nodes[node];
    int32_t succ = ns->next_free; /* read before the start may unlink the node */
    int rc = hrm_ctx_start(ctx, task, node, HRM_GPUS_ANY);
    if (rc)
        return rc;
    if (!ns->in_free_list) {
        /* Nodes before the removed one still do not fit any request whose
         * cursor sat on it, so its successor is where those searches resume. */
        for (unsigned i = 0; i < fit->nused; i++)
            if (fit->slot[i].cursor == node)
                fit->slot[i].cursor = succ;
    }
    return 0;
}

/* ---- heap ---- */

static bool heap_less(const struct policy_heap_item *a, const struct policy_heap_item *b)
{
    return a->key < b->key || (a->key == b->key && a->tie < b->tie);
}

void policy_heap_push(struct policy_heap *h, double key, int64_t tie, int32_t id)
{
    HRM_GROW(h->a, h->cap, h->n + 1);
    size_t i = h->n++;
    struct policy_heap_item it = {key, tie, id};
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!heap_less(&it, &h->a[parent]))
            break;
        h->a[i] = h->a[parent];
        i = parent;
    }
    h->a[i] = it;
}

bool policy_heap_pop(struct policy_heap *h, struct policy_heap_item *out)
{
    if (h->n == 0)
        return false;
    *out = h->a[0];
    struct policy_heap_item last = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && heap_less(&h->a[c + 1], &h->a[c]))
            c++;
        if (!heap_less(&h->a[c], &last))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n > 0)
        h->a[i] = last;
    return true;
}

void policy_heap_fini(struct policy_heap *h)
{
    hrm_free(h->a);
    memset(h, 0, sizeof(*h));
}

/* ---- grouping ---- */

static int32_t group_of(const struct hrm_state *s, int32_t job, enum policy_group_by by)
{
    const struct hrm_job *j = &s->wl->jobs[job];
    return by == POLICY_BY_USER ? j->user : j->queue;
}

void policy_groups_build(struct policy_groups *g, const struct hrm_state *s,
                         enum policy_group_by by)
{
    int32_t ngroups = by == POLICY_BY_USER ? s->wl->nusers : s->wl->nqueues;
    g->ngroups = ngroups;
    HRM_GROW(g->first, g->cap_first, (size_t)ngroups + 1);
    HRM_GROW(g->pos, g->cap_pos, (size_t)ngroups + 1);
    memset(g->first, 0, ((size_t)ngroups + 1) * sizeof(*g->first));
    size_t njobs = 0;
    for (int32_t j = s->active_head; j >= 0; j = s->jobs[j].next_active) {
        g->first[group_of(s, j, by) + 1]++;
        njobs++;
    }
    for (int32_t q = 0; q < ngroups; q++)
        g->first[q + 1] += g->first[q];
    HRM_GROW(g->jobs, g->cap_jobs, njobs);
    memcpy(g->pos, g->first, (size_t)ngroups * sizeof(*g->pos));
    for (int32_t j = s->active_head; j >= 0; j = s->jobs[j].next_active)
        g->jobs[g->pos[group_of(s, j, by)]++] = j;
    memcpy(g->pos, g->first, (size_t)ngroups * sizeof(*g->pos));
}

int32_t policy_groups_next_task(struct policy_groups *g, const struct hrm_state *s, int32_t grp)
{
    for (; g->pos[grp] < g->first[grp + 1]; g->pos[grp]++) {
        int32_t task = s->jobs[g->jobs[g->pos[grp]]].ready_head;
        if (task >= 0)
            return task;
    }
    return -1;
}

void policy_users_by_share(struct policy_groups *g, struct policy_heap *h,
                           const struct hrm_state *s)
{
    policy_groups_build(g, s, POLICY_BY_USER);
    h->n = 0;
    for (int32_t u = 0; u < g->ngroups; u++)
        if (g->first[u] < g->first[u + 1])
            policy_heap_push(h, hrm_state_user_share(s, u), u, u);
}

void policy_groups_fini(struct policy_groups *g)
{
    hrm_free(g->first);
    hrm_free(g->jobs);
    hrm_free(g->pos);
    memset(g, 0, sizeof(*g));
}

int policy_init_noparams(const char *name, const struct hrm_params *params, struct hrm_error *err)
{
    static const char *const known[] = {NULL};
    return hrm_params_check(params, known, name, err);
}
