/* Scheduler instance role: jobs, stage readiness, passes, late binding, central. */
#include <math.h>
#include <string.h>

#include "hrm/alloc.h"
#include "sched/dsched_private.h"

#define COOKIE_PASS 1
#define COOKIE_DECIDE 2
/* Round timers: low two bits 3 (dsched_round.c encodes round and generation). */
#define COOKIE_ROUND_TAG 3

static inline int64_t now_of(struct hrm_env *env)
{
    return env->now_us(env);
}

/* ---- the job map: open addressing, linear probing, backward-shift delete ---- */

static size_t map_slot(const struct hrm_dsched *s, int32_t job)
{
    return ((uint64_t)(uint32_t)job * 0x9E3779B97F4A7C15ull >> 20) & (s->map_cap - 1);
}

struct djob *dsched_job(const struct hrm_dsched *s, int32_t job)
{
    for (size_t i = map_slot(s, job);; i = (i + 1) & (s->map_cap - 1)) {
        int32_t r = s->map[i];
        if (r < 0)
            return NULL;
        if (s->jobs[r].job == job)
            return &s->jobs[r];
    }
}

static void map_put(struct hrm_dsched *s, int32_t job, int32_t rec);

static void map_grow(struct hrm_dsched *s)
{
    int32_t *old = s->map;
    size_t oldcap = s->map_cap;
    s->map_cap = oldcap ? oldcap * 2 : 64;
    s->map = hrm_alloc(s->map_cap * sizeof(*s->map));
    for (size_t i = 0; i < s->map_cap; i++)
        s->map[i] = -1;
    s->map_used = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i] >= 0)
            map_put(s, s->jobs[old[i]].job, old[i]);
    hrm_free(old);
}

static void map_put(struct hrm_dsched *s, int32_t job, int32_t rec)
{
    if ((s->map_used + 1) * 2 > s->map_cap)
        map_grow(s);
    size_t i = map_slot(s, job);
    while (s->map[i] >= 0)
        i = (i + 1) & (s->map_cap - 1);
    s->map[i] = rec;
    s->map_used++;
}

static void map_del(struct hrm_dsched *s, int32_t job)
{
    size_t mask = s->map_cap - 1, i = map_slot(s, job);
    while (s->jobs[s->map[i]].job != job)
        i = (i + 1) & mask;
    /* Backward shift: pull later entries of the probe run into the hole. */
    for (size_t j = (i + 1) & mask; s->map[j] >= 0; j = (j + 1) & mask) {
        size_t home = map_slot(s, s->jobs[s->map[j]].job);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            s->map[i] = s->map[j];
            i = j;
        }
    }
    s->map[i] = -1;
    s->map_used--;
}

/* ---- the ready deque ---- */

static void ready_grow(struct hrm_dsched *s)
{
    size_t cap = s->rcap ? s->rcap * 2 : 1024;
    int32_t *r = hrm_alloc(cap * sizeof(*r));
    for (size_t i = 0; i < s->rn; i++)
        r[i] = s->ready[(s->rhead + i) % s->rcap];
    hrm_free(s->ready);
    s->ready = r;
    s->rcap = cap;
    s->rhead = 0;
}

static void ready_push(struct hrm_dsched *s, int32_t task)
{
    if (s->rn == s->rcap)
        ready_grow(s);
    s->ready[(s->rhead + s->rn++) % s->rcap] = task;
}

void dsched_requeue_front(struct hrm_dsched *s, int32_t task)
{
    if (s->rn == s->rcap)
        ready_grow(s);
    s->rhead = (s->rhead + s->rcap - 1) % s->rcap;
    s->ready[s->rhead] = task;
    s->rn++;
    struct djob *j = dsched_job(s, s->wl->tasks[task].job);
    j->tstate[task - s->wl->jobs[j->job].task_first] = T_READY;
}

static int32_t ready_pop(struct hrm_dsched *s)
{
    int32_t t = s->ready[s->rhead];
    s->rhead = (s->rhead + 1) % s->rcap;
    s->rn--;
    return t;
}

/* ---- nodes: up ones are the prefix [0, nup) of perm ---- */

/* Grows the per-node arrays to cover n nodes; the new ones are down. */
static void nodes_grow(struct hrm_dsched *s, int32_t n)
{
    if (n <= s->nn)
        return;
    if ((size_t)n > s->cap_nodes) {
        size_t cap = s->cap_nodes ? s->cap_nodes : 16;
        while (cap < (size_t)n)
            cap *= 2;
        s->perm = hrm_reallocarray(s->perm, cap, sizeof(*s->perm));
        s->pos = hrm_reallocarray(s->pos, cap, sizeof(*s->pos));
        s->mark = hrm_reallocarray(s->mark, cap, sizeof(*s->mark));
        s->cap_nodes = cap;
    }
    for (int32_t i = s->nn; i < n; i++) {
        s->perm[i] = i; /* after every up node: perm[nn..) are down */
        s->pos[i] = i;
        s->mark[i] = 0;
    }
    s->nn = n;
}

bool dsched_node_is_up(const struct hrm_dsched *s, int32_t node)
{
    return node >= 0 && node < s->nn && s->pos[node] < s->nup;
}

static void perm_swap(struct hrm_dsched *s, int32_t i, int32_t j)
{
    int32_t a = s->perm[i], b = s->perm[j];
    s->perm[i] = b;
    s->perm[j] = a;
    s->pos[b] = i;
    s->pos[a] = j;
}

void hrm_dsched_node_up(struct hrm_dsched *s, struct hrm_env *env, int32_t node, bool up)
{
    if (node < 0)
        return;
    nodes_grow(s, node + 1 > s->c->nnodes ? node + 1 : s->c->nnodes);
    if (dsched_node_is_up(s, node) == up)
        return;
    if (up) {
        perm_swap(s, s->pos[node], s->nup++);
        if (s->rn > 0)
            dsched_arm_pass(s, env);
    } else {
        perm_swap(s, s->pos[node], --s->nup);
    }
}

/* ---- life cycle ---- */

struct hrm_dsched *hrm_dsched_new(const struct hrm_cluster *cluster, const struct hrm_workload *wl,
                                  const struct hrm_dsched_config *cfg, struct hrm_error *err)
{
    if (!cfg || cfg->kind > HRM_DSCHED_CENTRAL || cfg->index < 0 || !cluster ||
        cluster->nnodes < 0 || cfg->round_timeout_us < 0) {
        hrm_errorf(err, -EINVAL, "dsched: bad configuration");
        return NULL;
    }
    if (cfg->d < 0 || cfg->d > 64) {
        hrm_errorf(err, -HRM_ESPEC, "dsched: d = %g: probes per task must be in (0, 64]", cfg->d);
        return NULL;
    }
    struct hrm_dsched *s = hrm_calloc(1, sizeof(*s));
    s->c = cluster;
    s->wl = wl;
    s->cfg = *cfg;
    if (s->cfg.d == 0)
        s->cfg.d = 2;
    s->self = hrm_addr_sched(cfg->index);
    hrm_rng_seed(&s->rng, cfg->seed ^ (0xd15c4edull * (uint64_t)(cfg->index + 1)));
    s->free_job = s->free_probe = s->free_round = -1;
    map_grow(s);
    int32_t n = cluster->nnodes;
    nodes_grow(s, n);
    s->nup = n; /* the nodes there at creation are up */
    if (cfg->kind == HRM_DSCHED_CENTRAL) {
        size_t nc = n > 0 ? (size_t)n : 1;
        s->ncentral = n;
        s->free_cpu = hrm_alloc(nc * sizeof(*s->free_cpu));
        s->free_mem = hrm_alloc(nc * sizeof(*s->free_mem));
        s->free_stack = hrm_alloc(nc * sizeof(*s->free_stack));
        s->in_stack = hrm_calloc(nc, sizeof(*s->in_stack));
        for (int32_t i = n - 1; i >= 0; i--) { /* node 0 on top */
            s->free_cpu[i] = cluster->nodes[i].capacity.v[HRM_DIM_CPU];
            s->free_mem[i] = cluster->nodes[i].capacity.v[HRM_DIM_MEM];
            s->free_stack[s->nfree_stack++] = i;
            s->in_stack[i] = true;
        }
    }
    return s;
}

/* Frees what a job's record owns (its arrays; the record stays). */
static void job_free_arrays(struct djob *j)
{
    hrm_free(j->stage_left);
    hrm_free(j->deps_left);
    hrm_free(j->ready_us);
    hrm_free(j->tstate);
    hrm_free(j->unbound);
    hrm_free(j->resv);
}

static void job_release(struct hrm_dsched *s, struct djob *j)
{
    job_free_arrays(j);
    int32_t rec = (int32_t)(j - s->jobs);
    map_del(s, j->job);
    memset(j, 0, sizeof(*j));
    j->job = -1;
    j->left = s->free_job; /* free list threads through left */
    s->free_job = rec;
}

void hrm_dsched_free(struct hrm_dsched *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->njobs; i++)
        if (s->jobs[i].job >= 0)
            job_free_arrays(&s->jobs[i]);
    hrm_free(s->jobs);
    hrm_free(s->map);
    hrm_free(s->ready);
    dsched_rounds_free(s);
    hrm_free(s->perm);
    hrm_free(s->pos);
    hrm_free(s->mark);
    hrm_free(s->amap);
    hrm_free(s->slots);
    hrm_free(s->gtasks);
    hrm_free(s->out);
    hrm_free(s->scratch);
    hrm_free(s->per_probe);
    hrm_free(s->free_cpu);
    hrm_free(s->free_mem);
    hrm_free(s->free_stack);
    hrm_free(s->in_stack);
    hrm_free(s);
}

int64_t hrm_dsched_load(const struct hrm_dsched *s)
{
    return s->load;
}

const struct hrm_dsched_stats *hrm_dsched_stats(const struct hrm_dsched *s)
{
    return &s->stats;
}

int64_t hrm_dsched_ready_us(const struct hrm_dsched *s, int32_t task)
{
    if (task < 0 || task >= s->wl->ntasks)
        return -1;
    const struct djob *j = dsched_job(s, s->wl->tasks[task].job);
    return j ? j->ready_us[task - s->wl->jobs[j->job].task_first] : -1;
}

/* ---- readiness ---- */

void dsched_arm_pass(struct hrm_dsched *s, struct hrm_env *env)
{
    if (s->pass_armed)
        return;
    s->pass_armed = true;
    env->timer(env, now_of(env) + s->cfg.pass_delay_us, COOKIE_PASS);
}

static void stage_ready(struct hrm_dsched *s, struct djob *j, int32_t stage, int64_t now)
{
    const struct hrm_stage *st = &s->wl->stages[stage];
    const struct hrm_job *wj = &s->wl->jobs[j->job];
    for (int32_t t = st->task_first; t < st->task_first + st->ntasks; t++) {
        if (j->tstate[t - wj->task_first] != T_WAITING)
            continue; /* ended already: its job was cancelled */
        j->tstate[t - wj->task_first] = T_READY;
        j->ready_us[t - wj->task_first] = now;
        ready_push(s, t);
    }
}

bool dsched_task_is(const struct hrm_dsched *s, int32_t task, enum dtask_state st)
{
    const struct djob *j = dsched_job(s, s->wl->tasks[task].job);
    return j && j->tstate[task - s->wl->jobs[j->job].task_first] == st;
}

int hrm_dsched_adopt(struct hrm_dsched *s, int32_t task)
{
    if (task < 0 || task >= s->wl->ntasks || !dsched_task_is(s, task, T_READY))
        return -EINVAL;
    /* it stays in the ready deque; the pass drops it (no longer T_READY) */
    dsched_placed(s, task);
    return 0;
}

void dsched_placed(struct hrm_dsched *s, int32_t task)
{
    struct djob *j = dsched_job(s, s->wl->tasks[task].job);
    j->tstate[task - s->wl->jobs[j->job].task_first] = T_PLACED;
}

void dsched_send_run(struct hrm_dsched *s, struct hrm_env *env, int32_t task, int32_t node,
                     int32_t queue, int32_t attempt, uint16_t status)
{
    struct hrm_msg m = {.type = HRM_MSG_RUN,
                        .status = status,
                        .from = s->self,
                        .job = s->wl->tasks[task].job,
                        .task = task,
                        .node = queue,
                        .attempt = attempt,
                        .value = s->self};
    env->send(env, hrm_addr_node(node), &m);
    dsched_placed(s, task);
    s->stats.runs++;
}

int32_t dsched_prefs(struct hrm_dsched *s, int32_t task, int32_t *out, int32_t max)
{
    if (s->cfg.no_locality)
        return 0;
    const struct hrm_task *t = &s->wl->tasks[task];
    int32_t n = 0;
    for (int32_t b = 0; b < t->nblocks; b++) {
        const struct hrm_block *blk = &s->wl->blocks[t->block_first + b];
        for (int32_t r = 0; r < blk->nreplicas; r++) {
            int32_t node = blk->replicas[r], k = 0;
            if (!dsched_node_is_up(s, node))
                continue;
            while (k < n && out[k] != node)
                k++;
            if (k == n && n < max)
                out[n++] = node;
        }
    }
    return n;
}

static int on_submit(struct hrm_dsched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    if (m->job < 0 || m->job >= s->wl->njobs || dsched_job(s, m->job))
        return -EINVAL;
    const struct hrm_job *wj = &s->wl->jobs[m->job];
    int32_t rec = s->free_job;
    if (rec >= 0) {
        s->free_job = s->jobs[rec].left;
    } else {
        HRM_GROW(s->jobs, s->cap_jobs, s->njobs + 1);
        rec = (int32_t)s->njobs++;
    }
    struct djob *j = &s->jobs[rec];
    memset(j, 0, sizeof(*j));
    int64_t now = now_of(env);
    j->job = m->job;
    j->order = now;
    if (s->cfg.order_deadline && wj->deadline_us > 0)
        j->order = now + wj->deadline_us;
    j->left = wj->ntasks;
    j->queue = hrm_nqs_queue_for_job(s->cfg.nqs, s->wl, m->job);
    size_t ns = (size_t)wj->nstages, nt = (size_t)wj->ntasks;
    j->stage_left = hrm_alloc(ns * sizeof(*j->stage_left));
    j->deps_left = hrm_alloc(ns * sizeof(*j->deps_left));
    j->ready_us = hrm_alloc(nt * sizeof(*j->ready_us));
    j->tstate = hrm_calloc(nt, 1);
    if (s->cfg.kind == HRM_DSCHED_SPARROW_BATCH)
        j->unbound = hrm_alloc(nt * sizeof(*j->unbound));
    for (size_t i = 0; i < nt; i++)
        j->ready_us[i] = -1;
    map_put(s, m->job, rec);
    s->load += wj->ntasks;
    s->stats.jobs++;
    for (int32_t k = 0; k < wj->nstages; k++) {
        const struct hrm_stage *st = &s->wl->stages[wj->stage_first + k];
        j->stage_left[k] = st->ntasks;
        j->deps_left[k] = st->ndeps;
    }
    for (int32_t k = 0; k < wj->nstages; k++)
        if (j->deps_left[k] == 0)
            stage_ready(s, j, wj->stage_first + k, now);
    dsched_arm_pass(s, env);
    return 0;
}

/* ---- the central baseline: global free state ---- */

static void central_free(struct hrm_dsched *s, int32_t node, int32_t task)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    s->free_cpu[node] += t->req.v[HRM_DIM_CPU];
    s->free_mem[node] += t->req.v[HRM_DIM_MEM];
    if (!s->in_stack[node]) {
        s->in_stack[node] = true;
        s->free_stack[s->nfree_stack++] = node;
    }
}

/* One placement decision: the oldest ready task on the most recently freed
 * node where it fits.  Each costs decision_us of the scheduler's time, so
 * when tasks arrive faster than that they queue at the scheduler. */
static void central_decide(struct hrm_dsched *s, struct hrm_env *env)
{
    s->deciding = false;
    while (s->rn > 0 && !dsched_task_is(s, s->ready[s->rhead], T_READY))
        ready_pop(s); /* ended (cancelled) or adopted meanwhile */
    if (s->rn == 0)
        return;
    int32_t task = s->ready[s->rhead];
    const struct hrm_task *t = &s->wl->tasks[task];
    int64_t cpu = t->req.v[HRM_DIM_CPU], mem = t->req.v[HRM_DIM_MEM];
    int32_t k = s->nfree_stack - 1;
    while (k >= 0 && (s->free_cpu[s->free_stack[k]] < cpu || s->free_mem[s->free_stack[k]] < mem))
        k--;
    if (k < 0)
        return; /* nothing fits: the next task end re-arms */
    int32_t node = s->free_stack[k];
    ready_pop(s);
    s->free_cpu[node] -= cpu;
    s->free_mem[node] -= mem;
    if (s->free_cpu[node] <= 0) { /* full: out of the stack */
        s->free_stack[k] = s->free_stack[--s->nfree_stack];
        s->in_stack[node] = false;
    }
    dsched_send_run(s, env, task, node, dsched_job(s, t->job)->queue, -1, 0);
    s->stats.decisions++;
    if (s->rn > 0) {
        s->deciding = true;
        env->timer(env, now_of(env) + s->cfg.decision_us, COOKIE_DECIDE);
    }
}

static void central_arm(struct hrm_dsched *s, struct hrm_env *env)
{
    if (s->deciding || s->rn == 0)
        return;
    s->deciding = true;
    env->timer(env, now_of(env) + s->cfg.decision_us, COOKIE_DECIDE);
}

/* ---- ending tasks ---- */

static int on_task_end(struct hrm_dsched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    if (m->task < 0 || m->task >= s->wl->ntasks)
        return -EINVAL;
    struct djob *j = dsched_job(s, s->wl->tasks[m->task].job);
    if (!j)
        return 0;
    const struct hrm_job *wj = &s->wl->jobs[j->job];
    int32_t ti = m->task - wj->task_first;
    if (j->tstate[ti] == T_DONE)
        return 0;
    bool central_node = s->cfg.kind == HRM_DSCHED_CENTRAL && m->node >= 0 && m->node < s->ncentral;
    if ((m->status == HRM_OUTCOME_LOST || m->status == HRM_OUTCOME_PREEMPTED) &&
        j->tstate[ti] == T_PLACED) {
        /* The run is gone (its node died, or it was evicted): place it again,
         * first in line.  Not ended: the load stays. */
        dsched_requeue_front(s, m->task);
        s->stats.requeued++;
        if (central_node)
            central_free(s, m->node, m->task);
        dsched_arm_pass(s, env);
        return 0;
    }
    /* DONE or FAILED; or any end of a task not placed yet (its job was
     * cancelled): final.  A ready or in-flight task is skipped by the pass or
     * the round that holds it. */
    j->tstate[ti] = T_DONE;
    j->left--;
    s->load--;
    if (m->status != HRM_OUTCOME_DONE) {
        j->failed = true;
        s->stats.rejected++;
    }
    if (central_node) {
        central_free(s, m->node, m->task);
        central_arm(s, env);
    }
    int32_t st = s->wl->tasks[m->task].stage - wj->stage_first;
    if (--j->stage_left[st] == 0) {
        int32_t done_stage = wj->stage_first + st;
        for (int32_t k = 0; k < wj->nstages; k++) {
            const struct hrm_stage *o = &s->wl->stages[wj->stage_first + k];
            for (int32_t d = 0; d < o->ndeps; d++) {
                if (s->wl->stage_deps[o->dep_first + d] == done_stage && --j->deps_left[k] == 0) {
                    stage_ready(s, j, wj->stage_first + k, now_of(env));
                    dsched_arm_pass(s, env);
                }
            }
        }
    }
    if (j->left == 0) {
        struct hrm_msg e = {.type = HRM_MSG_JOB_END,
                            .from = s->self,
                            .job = j->job,
                            .task = -1,
                            .node = -1,
                            .status = j->failed ? 1 : 0,
                            .value = now_of(env)};
        env->send(env, HRM_ADDR_CLIENT, &e);
        job_release(s, j);
    }
    return 0;
}

/* ---- late binding (Sparrow batch sampling) ---- */

static void reserve_at(struct hrm_dsched *s, struct hrm_env *env, struct djob *j, int32_t node)
{
    struct hrm_msg r = {
        .type = HRM_MSG_RESERVE, .from = s->self, .job = j->job, .task = -1, .node = j->queue};
    env->send(env, hrm_addr_node(node), &r);
    HRM_GROW(j->resv, j->cap_resv, j->nresv + 1);
    j->resv[j->nresv++] = node;
}

/* Every task of the batch is bound: the reservations still queued elsewhere
 * are cancelled (Sparrow's proactive cancellation) rather than each costing a
 * slot a round trip when it reaches its queue's head. */
static void cancel_reservations(struct hrm_dsched *s, struct hrm_env *env, struct djob *j)
{
    struct hrm_msg c = {.type = HRM_MSG_NO_TASK,
                        .from = s->self,
                        .job = j->job,
                        .task = -1,
                        .node = j->queue,
                        .attempt = -1};
    for (size_t i = 0; i < j->nresv; i++)
        env->send(env, hrm_addr_node(j->resv[i]), &c);
    j->nresv = 0;
}

static void reserve_job(struct hrm_dsched *s, struct hrm_env *env, struct djob *j, int32_t first,
                        int32_t m)
{
    int32_t n = (int32_t)ceil(s->cfg.d * m);
    if (n > s->nup)
        n = s->nup;
    s->gen++;
    int32_t sent = 0;
    /* locality first: the replicas of the new tasks */
    for (int32_t i = 0; i < m && sent < n; i++) {
        int32_t np = dsched_prefs(s, s->ready[(first + i) % s->rcap], s->prefs_buf,
                                  (int32_t)(sizeof(s->prefs_buf) / sizeof(s->prefs_buf[0])));
        for (int32_t k = 0; k < np && sent < n; k++) {
            if (s->mark[s->prefs_buf[k]] == s->gen)
                continue;
            s->mark[s->prefs_buf[k]] = s->gen;
            reserve_at(s, env, j, s->prefs_buf[k]);
            sent++;
        }
    }
    while (sent < n) {
        int32_t node = dsched_draw_node(s);
        if (node < 0)
            break;
        reserve_at(s, env, j, node);
        sent++;
    }
    s->stats.reservations += sent;
}

static int on_get_task(struct hrm_dsched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    struct djob *j = m->job >= 0 && m->job < s->wl->njobs ? dsched_job(s, m->job) : NULL;
    struct hrm_msg r = {
        .from = s->self, .job = m->job, .node = m->status, .attempt = m->attempt, .value = s->self};
    if (j) /* tasks that ended unbound (their job was cancelled) are skipped */
        while (j->unbound_head < j->unbound_tail &&
               !dsched_task_is(s, j->unbound[j->unbound_head], T_INFLIGHT))
            j->unbound_head++;
    if (j && j->unbound_head < j->unbound_tail) {
        int32_t task = j->unbound[j->unbound_head++];
        r.type = HRM_MSG_RUN;
        r.task = task;
        r.status = HRM_RUN_BIND;
        dsched_placed(s, task);
        s->stats.binds++;
        s->stats.runs++;
        if (j->unbound_head == j->unbound_tail && !s->cfg.no_cancel)
            cancel_reservations(s, env, j);
    } else {
        r.type = HRM_MSG_NO_TASK;
        r.task = -1;
        s->stats.binds_empty++;
    }
    env->send(env, m->from, &r);
    return 0;
}

/* ---- the pass ---- */

/* Drops from the ready deque the tasks that are no longer ready (ended by a
 * cancel, adopted) or whose job is gone, and duplicates, keeping the order. */
static void ready_compact(struct hrm_dsched *s)
{
    size_t n = s->rn, k = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t t = s->ready[(s->rhead + i) % s->rcap];
        struct djob *j = dsched_job(s, s->wl->tasks[t].job);
        if (!j)
            continue;
        uint8_t *st = &j->tstate[t - s->wl->jobs[j->job].task_first];
        if (*st != T_READY)
            continue;
        *st = T_SEEN;
        s->ready[(s->rhead + k++) % s->rcap] = t;
    }
    s->rn = k;
    for (size_t i = 0; i < k; i++) {
        int32_t t = s->ready[(s->rhead + i) % s->rcap];
        struct djob *j = dsched_job(s, s->wl->tasks[t].job);
        j->tstate[t - s->wl->jobs[j->job].task_first] = T_READY;
    }
}

/* A node for a task sent without probing: one of its up replica nodes, else
 * an up node at random.  With every node up, the draw is over node ids (as
 * before node churn existed). */
static int32_t random_node(struct hrm_dsched *s, int32_t task)
{
    int32_t np = dsched_prefs(s, task, s->prefs_buf, HRM_MAX_REPLICAS * 4);
    if (np > 0)
        return s->prefs_buf[hrm_rng_below(&s->rng, (uint64_t)np)];
    int32_t i = (int32_t)hrm_rng_below(&s->rng, (uint64_t)s->nup);
    return s->nup == s->nn ? i : s->perm[i];
}

static void pass(struct hrm_dsched *s, struct hrm_env *env)
{
    if (s->cfg.kind != HRM_DSCHED_CENTRAL) {
        ready_compact(s);
        if (s->nup == 0)
            return; /* no node up: the tasks wait; node_up arms a pass */
    }
    switch (s->cfg.kind) {
    case HRM_DSCHED_RANDOM:
        while (s->rn > 0) {
            int32_t task = ready_pop(s);
            struct djob *j = dsched_job(s, s->wl->tasks[task].job);
            dsched_send_run(s, env, task, random_node(s, task), j->queue, -1, 0);
        }
        break;
    case HRM_DSCHED_SPARROW:
    case HRM_DSCHED_TWO_PHASE:
        while (s->rn > 0) {
            int32_t task = ready_pop(s);
            struct djob *j = dsched_job(s, s->wl->tasks[task].job);
            dsched_start_round(s, env, &task, 1, j->queue, s->cfg.kind == HRM_DSCHED_TWO_PHASE);
        }
        break;
    case HRM_DSCHED_MULTI_WAY: {
        /* One round per execution queue over every ready task (usually one). */
        size_t n = s->rn;
        int32_t *all = hrm_alloc((n ? n : 1) * sizeof(*all));
        for (size_t i = 0; i < n; i++)
            all[i] = ready_pop(s);
        size_t done = 0;
        while (done < n) {
            int32_t q = dsched_job(s, s->wl->tasks[all[done]].job)->queue;
            size_t k = done;
            for (size_t i = done; i < n; i++) { /* stable partition: queue q first */
                if (dsched_job(s, s->wl->tasks[all[i]].job)->queue == q) {
                    int32_t t = all[i];
                    memmove(&all[k + 1], &all[k], (i - k) * sizeof(*all));
                    all[k++] = t;
                }
            }
            dsched_start_round(s, env, all + done, (int32_t)(k - done), q, true);
            done = k;
        }
        hrm_free(all);
        break;
    }
    case HRM_DSCHED_SPARROW_BATCH:
        while (s->rn > 0) {
            /* a run of ready tasks of one job is one batch of reservations */
            int32_t job = s->wl->tasks[s->ready[s->rhead]].job;
            struct djob *j = dsched_job(s, job);
            int32_t m = 0;
            while ((size_t)m < s->rn && s->wl->tasks[s->ready[(s->rhead + m) % s->rcap]].job == job)
                m++;
            reserve_job(s, env, j, (int32_t)s->rhead, m);
            if (j->unbound_tail + m > s->wl->jobs[job].ntasks) { /* tasks placed again */
                int32_t live = j->unbound_tail - j->unbound_head;
                memmove(j->unbound, j->unbound + j->unbound_head, (size_t)live * sizeof(int32_t));
                j->unbound_head = 0;
                j->unbound_tail = live;
            }
            for (int32_t i = 0; i < m; i++) {
                int32_t task = ready_pop(s);
                j->unbound[j->unbound_tail++] = task;
                j->tstate[task - s->wl->jobs[job].task_first] = T_INFLIGHT;
            }
        }
        break;
    case HRM_DSCHED_CENTRAL:
        central_arm(s, env);
        break;
    }
}

int hrm_dsched_on_timer(struct hrm_dsched *s, struct hrm_env *env, uint64_t cookie)
{
    if (cookie == COOKIE_PASS) {
        s->pass_armed = false;
        pass(s, env);
        return 0;
    }
    if (cookie == COOKIE_DECIDE && s->cfg.kind == HRM_DSCHED_CENTRAL) {
        central_decide(s, env);
        return 0;
    }
    if ((cookie & 3) == COOKIE_ROUND_TAG && s->cfg.round_timeout_us > 0)
        return dsched_on_round_timer(s, env, cookie);
    return -EINVAL;
}

int hrm_dsched_on_msg(struct hrm_dsched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    switch (m->type) {
    case HRM_MSG_JOB_SUBMIT:
        return on_submit(s, env, m);
    case HRM_MSG_HOLD_REPLY:
        return dsched_on_hold_reply(s, env, m);
    case HRM_MSG_GET_TASK:
        return on_get_task(s, env, m);
    case HRM_MSG_TASK_END:
        return on_task_end(s, env, m);
    default:
        return -EPROTO;
    }
}
