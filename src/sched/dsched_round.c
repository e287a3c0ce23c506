/* Probing rounds: pick queues, hold, collect replies, assign greedily, run, del. */
#include <math.h>
#include <string.h>

#include "hrm/alloc.h"
#include "sched/dsched_private.h"

#define MAX_WANT 255 /* slots one hold may ask for */

/* A round's timer cookie: tag 3 in the low two bits (the pass and decision
 * cookies are 1 and 2), the round's pool index above, its generation in the
 * high half.  A timer whose round was recycled meanwhile carries an older
 * generation and is ignored. */
#define ROUND_TAG 3u

static uint64_t round_cookie(int32_t r, uint32_t gen)
{
    return (uint64_t)gen << 32 | (uint64_t)(uint32_t)r << 2 | ROUND_TAG;
}

/* ---- probe ids with a round timeout ----
 *
 * Without a timeout every reply arrives before its round decides, so a probe's
 * pool index is its id (the hold's attempt).  With one, a reply may come after
 * the round decided and its probe was recycled: ids are then a sequence
 * (int32 >= 0, wrapping after 2^31 probes) mapped to pool indices, so a late
 * reply never reads as the reply of a newer probe, and the DEL it earns names
 * the late hold, not a newer one the node keeps under another id. */

static size_t amap_slot(const struct hrm_dsched *s, int32_t attempt)
{
    return ((uint64_t)(uint32_t)attempt * 0x9E3779B97F4A7C15ull >> 20) & (s->amap_cap - 1);
}

static int32_t amap_find(const struct hrm_dsched *s, int32_t attempt)
{
    if (!s->amap_cap)
        return -1;
    for (size_t i = amap_slot(s, attempt);; i = (i + 1) & (s->amap_cap - 1)) {
        int32_t p = s->amap[i];
        if (p < 0 || s->probes[p].attempt == attempt)
            return p;
    }
}

static void amap_put(struct hrm_dsched *s, int32_t p);

static void amap_grow(struct hrm_dsched *s)
{
    int32_t *old = s->amap;
    size_t oldcap = s->amap_cap;
    s->amap_cap = oldcap ? oldcap * 2 : 64;
    s->amap = hrm_alloc(s->amap_cap * sizeof(*s->amap));
    for (size_t i = 0; i < s->amap_cap; i++)
        s->amap[i] = -1;
    s->amap_used = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i] >= 0)
            amap_put(s, old[i]);
    hrm_free(old);
}

static void amap_put(struct hrm_dsched *s, int32_t p)
{
    if ((s->amap_used + 1) * 2 > s->amap_cap)
        amap_grow(s);
    size_t i = amap_slot(s, s->probes[p].attempt);
    while (s->amap[i] >= 0)
        i = (i + 1) & (s->amap_cap - 1);
    s->amap[i] = p;
    s->amap_used++;
}

static void amap_del(struct hrm_dsched *s, int32_t attempt)
{
    size_t mask = s->amap_cap - 1, i = amap_slot(s, attempt);
    while (s->probes[s->amap[i]].attempt != attempt)
        i = (i + 1) & mask;
    for (size_t j = (i + 1) & mask; s->amap[j] >= 0; j = (j + 1) & mask) {
        size_t home = amap_slot(s, s->probes[s->amap[j]].attempt);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            s->amap[i] = s->amap[j];
            i = j;
        }
    }
    s->amap[i] = -1;
    s->amap_used--;
}

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
    rd->gen++;
    rd->active = true;
    return r;
}

static void round_free(struct hrm_dsched *s, int32_t r)
{
    struct round *rd = &s->rounds[r];
    for (int32_t i = 0; i < rd->nprobes; i++) {
        int32_t p = rd->probes[i];
        if (s->cfg.round_timeout_us > 0)
            amap_del(s, s->probes[p].attempt);
        s->probes[p].round = -1;
        s->probes[p].next_free = s->free_probe;
        s->free_probe = p;
    }
    rd->ntasks = rd->nprobes = 0;
    rd->active = false;
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
    s->probes[p] = (struct probe){.attempt = p, .round = round, .node = node, .next_free = -1};
    if (s->cfg.round_timeout_us > 0) {
        do { /* a fresh id; after a wrap, skip one still in use */
            s->probes[p].attempt = s->next_attempt;
            s->next_attempt = s->next_attempt == INT32_MAX ? 0 : s->next_attempt + 1;
        } while (amap_find(s, s->probes[p].attempt) >= 0);
        amap_put(s, p);
    }
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
    int32_t n = s->nup; /* the up nodes are perm[0, nup) */
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
        s->pos[s->perm[i]] = i;
        s->pos[t] = j;
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
                        .attempt = s->probes[p].attempt,
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
    int32_t n = want_d > s->nup ? s->nup : (int32_t)want_d;
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
    if (s->cfg.round_timeout_us > 0)
        env->timer(env, env->now_us(env) + s->cfg.round_timeout_us, round_cookie(r, rd->gen));
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
    /* Tasks that ended meanwhile (their job was cancelled, perhaps released)
     * are dropped; holds reserved for them get DEL below. */
    int32_t live = 0;
    for (int32_t i = 0; i < rd->ntasks; i++)
        if (dsched_task_is(s, rd->tasks[i], T_INFLIGHT))
            rd->tasks[live++] = rd->tasks[i];
    rd->ntasks = live;
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
        if (p->rejected) {
            if (!p->replied) /* no answer (timed out): nothing is known of that queue */
                all_rejected = false;
            continue;
        }
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
        /* on a granted hold: its attempt, and the hold's last task says so */
        bool held = p->granted > 0;
        uint16_t status = held && --count[pi] == 0 ? HRM_RUN_LAST : 0;
        dsched_send_run(s, env, task, p->node, rd->queue, held ? p->attempt : -1, status);
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
                                .attempt = p->attempt};
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

/* A reply to no probe waiting for one: its round already decided (timed out),
 * or a duplicate.  A hold it granted is released. */
static int late_reply(struct hrm_dsched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    s->stats.late_replies++;
    if (m->status > 0 && m->attempt >= 0) {
        struct hrm_msg d = {.type = HRM_MSG_DEL,
                            .from = s->self,
                            .job = -1,
                            .task = -1,
                            .node = -1,
                            .attempt = m->attempt};
        env->send(env, m->node >= 0 ? hrm_addr_node(m->node) : m->from, &d);
        s->stats.dels++;
    }
    return 0;
}

int dsched_on_hold_reply(struct hrm_dsched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    bool timed = s->cfg.round_timeout_us > 0;
    int32_t pid = timed ? (m->attempt >= 0 ? amap_find(s, m->attempt) : -1) : m->attempt;
    if (pid < 0 || (size_t)pid >= s->nprobes_pool || s->probes[pid].round < 0 ||
        s->probes[pid].replied)
        return timed ? late_reply(s, env, m) : -EPROTO;
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

/* The round's time is up: the missing replies count as refusals (no slot, no
 * queue position) and it decides with what it has. */
int dsched_on_round_timer(struct hrm_dsched *s, struct hrm_env *env, uint64_t cookie)
{
    int32_t r = (int32_t)(uint32_t)((cookie & 0xffffffffu) >> 2);
    uint32_t gen = (uint32_t)(cookie >> 32);
    if ((size_t)r >= s->nrounds_pool || !s->rounds[r].active || s->rounds[r].gen != gen)
        return 0; /* decided already; the round may be in use again */
    struct round *rd = &s->rounds[r];
    for (int32_t i = 0; i < rd->nprobes; i++) {
        struct probe *p = &s->probes[rd->probes[i]];
        if (!p->replied) {
            p->granted = 0;
            p->rejected = true;
        }
    }
    s->stats.timeouts++;
    decide(s, env, r);
    return 0;
}
