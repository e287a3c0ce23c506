/* P1 pieces shared by the GS and FS policies: parameters, costs, fair shares, preemption. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "policy/flowpol_private.h"

/* ---- parameters ---- */

static bool listed(const char *const *known, const char *key)
{
    for (size_t i = 0; known[i]; i++)
        if (strcmp(known[i], key) == 0)
            return true;
    return false;
}

int p1_params_read(struct p1_params *out, const struct hrm_params *params, const char *const *known,
                   const char *policy, struct hrm_error *err)
{
    struct p1_params p = {.alpha1 = P1_ALPHA1_DEFAULT,
                          .alpha2 = P1_ALPHA2_DEFAULT,
                          .alpha3 = P1_ALPHA3_DEFAULT,
                          .d1 = P1_D1_DEFAULT,
                          .d2 = P1_D2_DEFAULT,
                          .incremental = 1,
                          .delay = 1,
                          .clamp = 1};
    int rc = hrm_params_check(params, known, policy, err);
    if (rc)
        return rc;
    int64_t paper = 0;
    if (listed(known, "paper") && (rc = hrm_params_int(params, "paper", &paper, err)))
        return rc;
    if (paper != 0 && paper != 1)
        return hrm_errorf(err, -HRM_ESPEC, "policy '%s': paper must be 0 or 1", policy);
    if (paper) {
        p.delay = 0;
        p.clamp = 0;
        p.nj_unfinished = 1;
    }
    static const char *const alphas[] = {"alpha1", "alpha2", "alpha3"};
    double *slots[] = {&p.alpha1, &p.alpha2, &p.alpha3};
    for (int i = 0; i < 3; i++) {
        if (!listed(known, alphas[i]))
            continue;
        if ((rc = hrm_params_double(params, alphas[i], slots[i], err)))
            return rc;
        /* The paper requires every penalty > 1; 1 (no penalty) is allowed so
         * the pure transfer-time model can be run too.  The cap keeps costs
         * (milliseconds) far inside the solver's limits. */
        if (!(*slots[i] >= 1.0 && *slots[i] <= 1000.0))
            return hrm_errorf(err, -HRM_ESPEC, "policy '%s': %s must be in [1, 1000]", policy,
                              alphas[i]);
    }
    if (listed(known, "d1") && (rc = hrm_params_int(params, "d1", &p.d1, err)))
        return rc;
    if (listed(known, "d2") && (rc = hrm_params_int(params, "d2", &p.d2, err)))
        return rc;
    if (p.d1 < 0 || p.d2 < p.d1 || p.d2 > 1000000)
        return hrm_errorf(err, -HRM_ESPEC, "policy '%s': need 0 <= d1 <= d2 <= 1000000", policy);
    if (listed(known, "incremental") &&
        (rc = hrm_params_int(params, "incremental", &p.incremental, err)))
        return rc;
    if (p.incremental != 0 && p.incremental != 1)
        return hrm_errorf(err, -HRM_ESPEC, "policy '%s': incremental must be 0 or 1", policy);
    if (listed(known, "delay") && (rc = hrm_params_int(params, "delay", &p.delay, err)))
        return rc;
    if (p.delay != 0 && p.delay != 1)
        return hrm_errorf(err, -HRM_ESPEC, "policy '%s': delay must be 0 or 1", policy);
    static const char *const flags[] = {"clamp", "nj_unfinished"};
    int64_t *fslots[] = {&p.clamp, &p.nj_unfinished};
    for (int i = 0; i < 2; i++) {
        if (listed(known, flags[i]) && (rc = hrm_params_int(params, flags[i], fslots[i], err)))
            return rc;
        if (*fslots[i] != 0 && *fslots[i] != 1)
            return hrm_errorf(err, -HRM_ESPEC, "policy '%s': %s must be 0 or 1", policy, flags[i]);
    }
    *out = p;
    return 0;
}

/* ---- transfer cost ---- */

/* Cheapest read of one block for a destination: dnode (or -1: a node of drack
 * holding no replica) in drack (or -1: a rack holding no replica). */
static double block_cost_ms(const struct p1_cost *m, const struct hrm_state *s,
                            const struct hrm_block *b, int32_t dnode, int32_t drack)
{
    if (b->size <= 0)
        return 0;
    const struct hrm_cluster *c = m->c;
    double size = (double)b->size, best = -1;
    for (int32_t r = 0; r < b->nreplicas; r++) {
        int32_t src = b->replicas[r];
        if (!s->nodes[src].up)
            continue;
        const struct hrm_node *sn = &c->nodes[src];
        double local = size / sn->disk_bw;
        double rack = m->alpha1 * size / c->net.rack_bw;
        double cross = m->alpha2 * size / c->net.core_bw;
        if (!m->literal) { /* the clamp: a farther read also crosses the nearer links */
            rack = fmax(rack, local);
            cross = fmax(cross, rack);
        }
        double v = src == dnode ? local : sn->rack == drack ? rack : cross;
        if (best < 0 || v < best)
            best = v;
    }
    /* No live replica: the simulator treats the data as recomputed, free. */
    return best < 0 ? 0 : best * 1000.0;
}

/* Costs are summed in double and rounded once, so that the order
 * node <= rack <= remote of the real sums survives rounding. */
static int64_t task_cost(const struct p1_cost *m, const struct hrm_state *s, int32_t task,
                         int32_t dnode, int32_t drack)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    double sum = 0;
    for (int32_t i = 0; i < t->nblocks; i++)
        sum += block_cost_ms(m, s, &s->wl->blocks[t->block_first + i], dnode, drack);
    /* A quarter of the solver's cost limit: ~6 days of transfer per task. */
    double cap = (double)(HRM_FLOW_COST_MAX / 4);
    return (int64_t)llround(sum < cap ? sum : cap);
}

int64_t p1_cost_node(const struct p1_cost *m, const struct hrm_state *s, int32_t task, int32_t node)
{
    return task_cost(m, s, task, node, m->c->nodes[node].rack);
}

int64_t p1_cost_rack(const struct p1_cost *m, const struct hrm_state *s, int32_t task, int32_t rack)
{
    return task_cost(m, s, task, -1, rack);
}

int64_t p1_cost_remote(const struct p1_cost *m, const struct hrm_state *s, int32_t task)
{
    return task_cost(m, s, task, -1, -1);
}

int64_t p1_task_bytes(const struct hrm_state *s, int32_t task)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    int64_t sum = 0;
    for (int32_t i = 0; i < t->nblocks; i++)
        sum += s->wl->blocks[t->block_first + i].size;
    return sum;
}

int64_t p1_task_gpu_need(const struct hrm_task *t)
{
    int64_t g = t->req.v[HRM_DIM_GPU];
    return g > 0 ? (t->req.v[HRM_DIM_GPU_MEM] + g - 1) / g : 0;
}

/* ---- fair shares ---- */

void p1_fair_share(int64_t q, int32_t k, const int64_t *demand, int32_t n, int64_t *share)
{
    if (k <= 0 || q <= 0) {
        for (int32_t i = 0; i < n; i++)
            share[i] = 0;
        return;
    }
    int64_t base = q / k, given = 0, total = 0;
    for (int32_t i = 0; i < n; i++) {
        share[i] = demand[i] < base ? demand[i] : base;
        given += share[i];
        total += demand[i];
    }
    int64_t left = (q < total ? q : total) - given;
    /* Each round gives every job still waiting the same number of GPUs, as
     * many as the leftover allows, capped by what the job still wants: a round
     * either ends the leftover or saturates a job, so at most n + 1 rounds. */
    while (left > 0) {
        int64_t waiting = 0;
        for (int32_t i = 0; i < n; i++)
            waiting += demand[i] > share[i];
        if (waiting == 0)
            break; /* not reached: left > 0 implies some demand is unmet */
        int64_t each = left / waiting;
        if (each == 0) {
            /* Fewer GPUs than waiting jobs: one each, in the given order. */
            for (int32_t i = 0; i < n && left > 0; i++) {
                if (demand[i] > share[i]) {
                    share[i]++;
                    left--;
                }
            }
            break;
        }
        for (int32_t i = 0; i < n; i++) {
            int64_t want = demand[i] - share[i];
            int64_t inc = want < each ? want : each;
            share[i] += inc;
            left -= inc;
        }
    }
}

struct arrival_key {
    int64_t arrival;
    int32_t job;
};

static int by_arrival(const void *a, const void *b)
{
    const struct arrival_key *x = a, *y = b;
    return (x->arrival > y->arrival) - (x->arrival < y->arrival);
}

static int32_t shares_slot(struct p1_shares *sh, int32_t job)
{
    if (sh->slot[job] < 0) {
        HRM_GROW(sh->jobs, sh->cap, (size_t)sh->njobs + 1);
        sh->slot[job] = sh->njobs;
        sh->jobs[sh->njobs++] = job;
    }
    return sh->slot[job];
}

void p1_shares_compute(struct p1_shares *sh, const struct hrm_state *s)
{
    const struct hrm_workload *wl = s->wl;
    if (sh->cap_slot < (size_t)wl->njobs) {
        size_t old = sh->cap_slot;
        HRM_GROW(sh->slot, sh->cap_slot, (size_t)wl->njobs);
        for (size_t i = old; i < sh->cap_slot; i++)
            sh->slot[i] = -1;
    }
    for (int32_t i = 0; i < sh->njobs; i++)
        sh->slot[sh->jobs[i]] = -1;
    sh->njobs = 0;
    /* Pass 1: which jobs take part (ready GPU tasks or GPUs held). */
    for (int32_t j = s->active_head; j >= 0; j = s->jobs[j].next_active)
        for (int32_t t = s->jobs[j].ready_head; t >= 0; t = s->tasks[t].next)
            if (wl->tasks[t].req.v[HRM_DIM_GPU] > 0) {
                shares_slot(sh, j);
                break;
            }
    for (int32_t n = 0; n < s->cluster->nnodes; n++)
        for (int32_t t = s->nodes[n].run_head; t >= 0; t = s->tasks[t].next)
            if (wl->tasks[t].req.v[HRM_DIM_GPU] > 0)
                shares_slot(sh, wl->tasks[t].job);
    /* Arrival order: the order leftover GPUs are handed out in. */
    struct arrival_key *keys = hrm_alloc(((size_t)sh->njobs + 1) * sizeof(*keys));
    for (int32_t i = 0; i < sh->njobs; i++)
        keys[i] = (struct arrival_key){s->jobs[sh->jobs[i]].arrival, sh->jobs[i]};
    qsort(keys, (size_t)sh->njobs, sizeof(*keys), by_arrival);
    if (sh->cap_num < sh->cap) {
        sh->cap_num = sh->cap;
        sh->held = hrm_reallocarray(sh->held, sh->cap_num, sizeof(*sh->held));
        sh->ready = hrm_reallocarray(sh->ready, sh->cap_num, sizeof(*sh->ready));
        sh->demand = hrm_reallocarray(sh->demand, sh->cap_num, sizeof(*sh->demand));
        sh->share = hrm_reallocarray(sh->share, sh->cap_num, sizeof(*sh->share));
    }
    for (int32_t i = 0; i < sh->njobs; i++) {
        sh->jobs[i] = keys[i].job;
        sh->slot[keys[i].job] = i;
        sh->held[i] = sh->ready[i] = 0;
    }
    hrm_free(keys);
    /* Pass 2: the numbers. */
    for (int32_t i = 0; i < sh->njobs; i++) {
        int32_t j = sh->jobs[i];
        for (int32_t t = s->jobs[j].ready_head; t >= 0; t = s->tasks[t].next)
            sh->ready[i] += wl->tasks[t].req.v[HRM_DIM_GPU];
    }
    for (int32_t n = 0; n < s->cluster->nnodes; n++)
        for (int32_t t = s->nodes[n].run_head; t >= 0; t = s->tasks[t].next)
            if (wl->tasks[t].req.v[HRM_DIM_GPU] > 0)
                sh->held[sh->slot[wl->tasks[t].job]] += wl->tasks[t].req.v[HRM_DIM_GPU];
    for (int32_t i = 0; i < sh->njobs; i++) {
        sh->demand[i] = sh->held[i] + sh->ready[i];
        if (!sh->unfinished)
            continue;
        /* The paper's N_j: also the GPU tasks of later stages, still blocked. */
        const struct hrm_job *wj = &wl->jobs[sh->jobs[i]];
        for (int32_t t = wj->task_first; t < wj->task_first + wj->ntasks; t++)
            if (s->tasks[t].status == HRM_TASK_BLOCKED)
                sh->demand[i] += wl->tasks[t].req.v[HRM_DIM_GPU];
    }
    sh->q = s->up_total.v[HRM_DIM_GPU];
    int32_t k = s->njobs_running > sh->njobs ? s->njobs_running : sh->njobs;
    p1_fair_share(sh->q, k, sh->demand, sh->njobs, sh->share);
}

void p1_shares_fini(struct p1_shares *sh)
{
    hrm_free(sh->jobs);
    hrm_free(sh->held);
    hrm_free(sh->ready);
    hrm_free(sh->demand);
    hrm_free(sh->share);
    hrm_free(sh->slot);
    memset(sh, 0, sizeof(*sh));
}

/* ---- shared steps ---- */

static uint32_t node_gpu_bits(const struct hrm_node *n)
{
    return n->gpus >= 32 ? 0xffffffffu : ((1u << n->gpus) - 1);
}

/* Largest GPU memory among the GPUs in mask of node. */
static int64_t mask_gpu_mem(const struct hrm_cluster *c, int32_t node, uint32_t mask)
{
    const struct hrm_node *n = &c->nodes[node];
    int64_t best = 0;
    for (int32_t g = 0; g < n->gpus; g++)
        if ((mask & (1u << g)) && c->units[n->unit_first + g].gpu_mem > best)
            best = c->units[n->unit_first + g].gpu_mem;
    return best;
}

struct victim {
    int64_t start_us;
    int32_t task;
};

static int youngest_first(const void *a, const void *b)
{
    const struct victim *x = a, *y = b;
    if (x->start_us != y->start_us)
        return x->start_us < y->start_us ? 1 : -1;
    return (x->task < y->task) - (x->task > y->task);
}

int p1_reclaim(struct hrm_sched_ctx *ctx, struct p1_shares *sh)
{
    const struct hrm_state *s = ctx->state;
    const struct hrm_workload *wl = s->wl;
    const struct hrm_cluster *c = s->cluster;
    int64_t deficit = 0, min_need = INT64_MAX;
    for (int32_t i = 0; i < sh->njobs; i++) {
        if (sh->share[i] <= sh->held[i])
            continue;
        deficit += sh->share[i] - sh->held[i];
        for (int32_t t = s->jobs[sh->jobs[i]].ready_head; t >= 0; t = s->tasks[t].next) {
            int64_t need = p1_task_gpu_need(&wl->tasks[t]);
            if (wl->tasks[t].req.v[HRM_DIM_GPU] > 0 && need < min_need)
                min_need = need;
        }
    }
    if (deficit == 0)
        return 0;
    /* Free GPUs a waiting task could use count against the deficit. */
    int64_t usable = 0;
    for (int32_t n = 0; n < c->nnodes; n++) {
        if (!s->nodes[n].up)
            continue;
        uint32_t idle = node_gpu_bits(&c->nodes[n]) & ~s->nodes[n].gpu_busy;
        for (int32_t g = 0; g < c->nodes[n].gpus; g++)
            usable +=
                (idle & (1u << g)) && c->units[c->nodes[n].unit_first + g].gpu_mem >= min_need;
    }
    int64_t need = deficit - usable;
    if (need <= 0)
        return 0;
    /* Candidates: GPU tasks of jobs above their share, youngest first. */
    size_t nv = 0, cap = 0;
    struct victim *v = NULL;
    for (int32_t n = 0; n < c->nnodes; n++) {
        for (int32_t t = s->nodes[n].run_head; t >= 0; t = s->tasks[t].next) {
            int32_t i = sh->slot[wl->tasks[t].job];
            if (wl->tasks[t].req.v[HRM_DIM_GPU] == 0 || sh->held[i] <= sh->share[i] ||
                !hrm_ctx_may_preempt(s, t))
                continue;
            if (mask_gpu_mem(c, n, s->tasks[t].gpu_mask) < min_need)
                continue; /* its GPU would not help any waiting task */
            HRM_GROW(v, cap, nv + 1);
            v[nv++] = (struct victim){s->tasks[t].start_us, t};
        }
    }
    if (nv > 1)
        qsort(v, nv, sizeof(*v), youngest_first);
    int killed = 0;
    for (size_t k = 0; k < nv && need > 0; k++) {
        int32_t t = v[k].task;
        int32_t i = sh->slot[wl->tasks[t].job];
        if (sh->held[i] <= sh->share[i])
            continue; /* this job is back at its share */
        int64_t gpus = wl->tasks[t].req.v[HRM_DIM_GPU];
        int rc = hrm_ctx_preempt(ctx, t);
        if (rc < 0) {
            hrm_free(v);
            return rc;
        }
        sh->held[i] -= gpus;
        sh->ready[i] += gpus;
        need -= gpus;
        killed++;
    }
    hrm_free(v);
    return killed;
}

int p1_place_others(struct hrm_sched_ctx *ctx)
{
    const struct hrm_state *s = ctx->state;
    struct policy_fit fit;
    policy_fit_reset(&fit);
    for (int32_t j = s->active_head; j >= 0 && s->free_head >= 0;) {
        int32_t next_job = s->jobs[j].next_active; /* j may leave the list */
        for (int32_t t = s->jobs[j].ready_head; t >= 0;) {
            int32_t next = s->tasks[t].next; /* t leaves the ready list if started */
            if (s->wl->tasks[t].req.v[HRM_DIM_GPU] != 1) {
                int32_t node = policy_fit_first(&fit, s, t);
                if (node >= 0) {
                    int rc = policy_fit_start(&fit, ctx, t, node);
                    if (rc)
                        return rc;
                }
            }
            t = next;
        }
        j = next_job;
    }
    return 0;
}
