/* Probing rounds: pick queues, hold, collect replies, assign greedily, run, del. */
#include <math.h>
#include <string.h>

#include "hrm/alloc.h"
#include "sched/dsched_private.h"

#define MAX_WANT 255 /* slots one hold may ask for */

/* ---- pools ---- */

static int32_t round_new(struct hrm_dsched *s)
{
    int32_t r = s->free_round;
    if (r >= 0) {
        s->free_round = s->rounds[r].next_free;
    } else {
        HRM_GROW(s->rounds, s->cap_rounds, s->nrounds_pool + 1);
        r = (int32_t)s->nrounds_pool++;
        memset(&s->rounds[r], 0, sizeof(s->rounds[r]));
    }
    struct round *rd = &s->rounds[r];
    rd->ntasks = rd->nprobes = rd->left = 0;
    rd->next_free = -1;
    return r;
}

static void round_free(struct hrm_dsched *s, int32_t r)
{
    struct round *rd = &s->rounds[r];
    for (int32_t i = 0; i < rd->nprobes; i++) {
        int32_t p = rd->probes[i];
        s->probes[p].round = -1;
        s->probes[p].next_free = s->free_probe;
        s->free_probe = p;
    }
    rd->ntasks = rd->nprobes = 0;
    rd->next_free = s->free_round;
    s->free_round = r;
}

void dsched_rounds_free(struct hrm_dsched *s)
{
    for (size_t i = 0; i < s->nrounds_pool; i++) {
        hrm_free(s->rounds[i].tasks);
        hrm_free(s->rounds[i].probes);
    }
    hrm_free(s->rounds);
    hrm_free(s->probes);
}

static int32_t probe_new(struct hrm_dsched *s, int32_t round, int32_t node)
{
    int32_t p = s->free_probe;
    if (p >= 0) {
        s->free_probe = s->probes[p].next_free;
    } else {
        HRM_GROW(s->probes, s->cap_probes, s->nprobes_pool + 1);
        p = (int32_t)s->nprobes_pool++;
    }
    s->probes[p] = (struct probe){.round = round, .node = node, .next_free = -1};
    struct round *rd = &s->rounds[round];
    HRM_GROW(rd->probes, rd->cap_probes, (size_t)rd->nprobes + 1);
    rd->probes[rd->nprobes++] = p;
    return p;
}

/* ---- choosing queues ---- */

/* A node not taken yet in this draw generation, uniformly at random among
 * those, or -1: partial Fisher-Yates over a permutation of the nodes (it stays
 * a permutation, so every generation's draws are uniform).  Nodes already
 * taken by a locality preference are skipped. */
int32_t dsched_draw_node(struct hrm_dsched *s)
{
    int32_t n = s->c->nnodes;
    if (s->draw_gen != s->gen) {
        s->draw_gen = s->gen;
        s->draw_pos = 0;
    }
    while (s->draw_pos < n) {
        int32_t i = s->draw_pos++;
        int32_t j = i + (int32_t)hrm_rng_below(&s->rng, (uint64_t)(n - i));
        int32_t t = s->perm[i];
        s->perm[i] = s->perm[j];
        s->perm[j] = t;
        if (s->mark[s->perm[i]] != s->gen) {
            s->mark[s->perm[i]] = s->gen;
            return s->perm[i];
        }
    }
    return -1;
}

static void send_hold(struct hrm_dsched *s, struct hrm_env *env, const struct round *rd, int32_t p,
                      int32_t want)
{
    struct hrm_msg m = {.type = HRM_MSG_HOLD,
                        .from = s->self,
                        .job = -1,
                        .task = -1,
                        .node = rd->queue,
                        .attempt = p,
                        .status = (uint16_t)want};
    if (rd->ntasks == 1) {
        m.task = rd->tasks[0];
        m.job = s->wl->tasks[m.task].job;
    }
    hrm_nqs_hold_size(&m, rd->cpu, rd->mem);
    env->send(env, hrm_addr_node(s->probes[p].node), &m);
}

/*
 * Starts a probing round for tasks (all of one execution queue): min(d*k,
 * nodes) distinct queues, the preferred nodes of tasks with input replicas
 * first, the rest at random.  DHRM holds reserve up to ceil(d*k / probes)
 * slots each, of the size of the round's largest task; Sparrow's only ask.
 */
void dsched_start_round(struct hrm_dsched *s, struct hrm_env *env, const int32_t *tasks,
                        int32_t ntasks, int32_t queue, bool reserve)
{
    int32_t r = round_new(s);
    struct round *rd = &s->rounds[r];
    HRM_GROW(rd->tasks, rd->cap_tasks, (size_t)ntasks);
    memcpy(rd->tasks, tasks, (size_t)ntasks * sizeof(*tasks));
    rd->ntasks = ntasks;
    rd->queue = queue;
    rd->reserve = reserve;
    rd->cpu = rd->mem = 0;
    for (int32_t i = 0; i < ntasks; i++) {
        const struct hrm_task *t = &s->wl->tasks[tasks[i]];
        if (t->req.v[HRM_DIM_CPU] > rd->cpu)
            rd->cpu = t->req.v[HRM_DIM_CPU];
        if (t->req.v[HRM_DIM_MEM] > rd->mem)
            rd->mem = t->req.v[HRM_DIM_MEM];
        struct djob *j = dsched_job(s, t->job);
        j->tstate[tasks[i] - s->wl->jobs[t->job].task_first] = T_INFLIGHT;
    }
    double want_d = ceil(s->cfg.d * ntasks);
    int32_t n = want_d > s->c->nnodes ? s->c->nnodes : (int32_t)want_d;
    int32_t per_task = (int32_t)ceil(s->cfg.d);
    s->gen++;
    for (int32_t i = 0; i < ntasks && rd->nprobes < n; i++) {
        int32_t np = dsched_prefs(s, tasks[i], s->prefs_buf,
                                  (int32_t)(sizeof(s->prefs_buf) / sizeof(s->prefs_buf[0])));
        /* a task's probes among its replicas, in random order */
        for (int32_t k = 0, taken = 0; k < np && taken < per_task && rd->nprobes < n; k++) {
            int32_t pick = k + (int32_t)hrm_rng_below(&s->rng, (uint64_t)(np - k));
            int32_t node = s->prefs_buf[pick];
            s->prefs_buf[pick] = s->prefs_buf[k];
            s->prefs_buf[k] = node;
            if (s->mark[node] == s->gen)
                continue;
            s->mark[node] = s->gen;
            probe_new(s, r, node);
            taken++;
        }
    }
    while (rd->nprobes < n) {
        int32_t node = dsched_draw_node(s);
        if (node < 0)
            break;
        probe_new(s, r, node);
    }
    int32_t want = 0;
    if (reserve) {
        double w = ceil(want_d / rd->nprobes);
        want = w > MAX_WANT ? MAX_WANT : (int32_t)w;
    }
    rd->left = rd->nprobes;
    for (int32_t i = 0; i < rd->nprobes; i++)
        send_hold(s, env, rd, rd->probes[i], want);
    s->stats.rounds++;
    s->stats.probes += rd->nprobes;
}

/* ---- deciding ---- */

static void ensure_scratch(struct hrm_dsched *s, size_t nslots, size_t ntasks, size_t nprobes)
{
    HRM_GROW(s->slots, s->cap_slots, nslots + 1);
    HRM_GROW(s->gtasks, s->cap_gtasks, ntasks + 1);
    size_t need = 2 * (nslots + ntasks) + 2;
    HRM_GROW(s->scratch, s->cap_scratch, need);
    HRM_GROW(s->per_probe, s->cap_per_probe, nprobes + nslots + ntasks + 1);
}

/* Every reply is in: greedy assignment (GS), RUN for assigned tasks (the last
 * one on a hold says so, releasing what it did not use), DEL for holds that
 * got nothing, leftovers back to the ready deque for the next round. */
static void decide(struct hrm_dsched *s, struct hrm_env *env, int32_t r)
{
    struct round *rd = &s->rounds[r];
    size_t nslots = 0;
    for (int32_t i = 0; i < rd->nprobes; i++)
        nslots += (size_t)s->probes[rd->probes[i]].granted + 1;
    ensure_scratch(s, nslots, (size_t)rd->ntasks, (size_t)rd->nprobes);
    /* per_probe: [0, nprobes) assigned counts, then slot -> probe, then out */
    int32_t *count = s->per_probe, *slot_probe = count + rd->nprobes;
    int32_t *out = slot_probe + nslots;
    size_t k = 0;
    bool all_rejected = true;
    for (int32_t i = 0; i < rd->nprobes; i++) {
        const struct probe *p = &s->probes[rd->probes[i]];
        count[i] = 0;
        for (int32_t g = 0; g < p->granted; g++) {
            s->slots[k] =
                (struct hrm_gs_slot){.key = 0, .cpu = rd->cpu, .mem = rd->mem, .node = p->node};
            slot_probe[k++] = i;
        }
        if (p->rejected)
            continue;
        all_rejected = false;
        /* A queue position ranks after every held slot even when its wait is
         * estimated at 0: a slot it saw free is not reserved, and another
         * scheduler may take it before our RUN arrives. */
        int64_t key = s->cfg.kind == HRM_DSCHED_SPARROW ? (int64_t)p->qlen : p->wait + 1;
        s->slots[k] =
            (struct hrm_gs_slot){.key = key, .cpu = INT64_MAX, .mem = INT64_MAX, .node = p->node};
        slot_probe[k++] = i;
    }
    for (int32_t i = 0; i < rd->ntasks; i++) {
        const struct hrm_task *t = &s->wl->tasks[rd->tasks[i]];
        s->gtasks[i] = (struct hrm_gs_task){.order = dsched_job(s, t->job)->order,
                                            .cpu = t->req.v[HRM_DIM_CPU],
                                            .mem = t->req.v[HRM_DIM_MEM]};
    }
    /* Locality inside GS: a task with replicas prefers those nodes.  The
     * preference lists live in a side buffer sized for this round. */
    int32_t *pbuf = NULL;
    if (!s->cfg.no_locality) {
        size_t maxp = sizeof(s->prefs_buf) / sizeof(s->prefs_buf[0]), used = 0;
        for (int32_t i = 0; i < rd->ntasks; i++) {
            if (s->wl->tasks[rd->tasks[i]].nblocks == 0)
                continue;
            if (!pbuf)
                pbuf = hrm_alloc((size_t)rd->ntasks * maxp * sizeof(*pbuf));
            int32_t np = dsched_prefs(s, rd->tasks[i], pbuf + used, (int32_t)maxp);
            s->gtasks[i].prefs = pbuf + used;
            s->gtasks[i].nprefs = np;
            used += (size_t)np;
        }
    }
    int64_t max_key = s->cfg.kind == HRM_DSCHED_MULTI_WAY ? s->cfg.max_wait_us : -1;
    hrm_gs_assign(s->gtasks, (size_t)rd->ntasks, s->slots, k, max_key, out, s->scratch);
    hrm_free(pbuf);
    for (int32_t i = 0; i < rd->ntasks; i++)
        if (out[i] >= 0)
            count[slot_probe[out[i]]]++;
    for (int32_t i = 0; i < rd->ntasks; i++) {
        if (out[i] < 0)
            continue;
        int32_t pi = slot_probe[out[i]];
        int32_t pid = rd->probes[pi];
        const struct probe *p = &s->probes[pid];
        int32_t task = rd->tasks[i];
        struct hrm_msg m = {.type = HRM_MSG_RUN,
                            .from = s->self,
                            .job = s->wl->tasks[task].job,
                            .task = task,
                            .node = rd->queue,
                            .attempt = -1,
                            .value = s->self};
        if (p->granted > 0) {
            m.attempt = pid;
            if (--count[pi] == 0)
                m.status = HRM_RUN_LAST;
        }
        env->send(env, hrm_addr_node(p->node), &m);
        dsched_placed(s, task);
        s->stats.runs++;
    }
    /* The loop above counted down to 0; count again to find the holds that
     * got no task at all (those need a DEL). */
    for (int32_t i = 0; i < rd->nprobes; i++)
        count[i] = 0;
    for (int32_t i = 0; i < rd->ntasks; i++)
        if (out[i] >= 0)
            count[slot_probe[out[i]]]++;
    for (int32_t i = 0; i < rd->nprobes; i++) {
        int32_t pid = rd->probes[i];
        const struct probe *p = &s->probes[pid];
        if (p->granted > 0 && count[i] == 0) {
            struct hrm_msg m = {.type = HRM_MSG_DEL,
                                .from = s->self,
                                .job = -1,
                                .task = -1,
                                .node = rd->queue,
                                .attempt = pid};
            env->send(env, hrm_addr_node(p->node), &m);
            s->stats.dels++;
        }
    }
    /* Leftovers go back to the front in their order, for the next round. */
    int32_t left = 0;
    for (int32_t i = rd->ntasks - 1; i >= 0; i--) {
        if (out[i] >= 0)
            continue;
        left++;
        if (all_rejected) {
            /* No queue could ever take it here (over every limit): fail it. */
            struct hrm_msg e = {.type = HRM_MSG_TASK_END,
                                .from = s->self,
                                .job = s->wl->tasks[rd->tasks[i]].job,
                                .task = rd->tasks[i],
                                .node = -1,
                                .status = HRM_OUTCOME_FAILED};
            env->send(env, s->self, &e);
            continue;
        }
        dsched_requeue_front(s, rd->tasks[i]);
    }
    s->stats.leftovers += left;
    round_free(s, r);
    if (left > 0)
        dsched_arm_pass(s, env);
}

int dsched_on_hold_reply(struct hrm_dsched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    int32_t pid = m->attempt;
    if (pid < 0 || (size_t)pid >= s->nprobes_pool || s->probes[pid].round < 0 ||
        s->probes[pid].replied)
        return -EPROTO;
    struct probe *p = &s->probes[pid];
    p->replied = true;
    p->granted = m->status;
    p->wait = m->value;
    p->rejected = m->value < 0;
    p->qlen = m->gpu_mask;
    struct round *rd = &s->rounds[p->round];
    if (--rd->left == 0)
        decide(s, env, p->round);
    return 0;
}
