/* Shared-state scheduler instance: its jobs, stage readiness, the transaction loop. */

#include "hrm/alloc.h"
#include "hrm/commit.h"
#include "hrm/state.h"
#include "sched/ssched_private.h"

/* Timer cookies carry the transaction they belong to. */
#define COOKIE_COMMIT(txn) (((uint64_t)(uint32_t)(txn) << 8) | 1u)

struct hrm_ssched *hrm_ssched_new(const struct hrm_cluster *cluster, const struct hrm_workload *wl,
                                  const struct hrm_ssched_config *cfg, struct hrm_error *err)
{
    /* No nodes yet is fine: a daemon's cluster grows, and snapshots bring the nodes. */
    if (!cfg || cfg->index < 0 || cluster->nnodes < 0 || cfg->t_job_us < 0 || cfg->t_task_us < 0) {
        hrm_errorf(err, -EINVAL, "ssched: bad configuration (index, nodes, decision times)");
        return NULL;
    }
    struct hrm_ssched *s = hrm_calloc(1, sizeof(*s));
    s->c = cluster;
    s->wl = wl;
    s->cfg = *cfg;
    s->self = hrm_addr_sched(cfg->index);
    hrm_rng_seed(&s->rng, cfg->seed ^ (0x55c4edull * (uint64_t)(cfg->index + 1)));
    size_t nj = (size_t)(wl->njobs > 0 ? wl->njobs : 1);
    s->of_job = hrm_calloc(nj, sizeof(*s->of_job));
    s->jq = hrm_alloc(nj * sizeof(*s->jq));
    s->cap_jobs = (int32_t)nj;
    hrm_snapshot_init(&s->snap, cluster->nnodes);
    s->cur = -1;
    return s;
}

static void job_free(struct sjob *j)
{
    if (!j)
        return;
    hrm_free(j->stage_left);
    hrm_free(j->deps_left);
    hrm_free(j->ready_us);
    hrm_free(j->tstate);
    hrm_free(j->rq);
    hrm_free(j);
}

void hrm_ssched_free(struct hrm_ssched *s)
{
    if (!s)
        return;
    for (int32_t j = 0; j < s->cap_jobs; j++)
        job_free(s->of_job[j]);
    hrm_free(s->of_job);
    hrm_free(s->jq);
    hrm_free(s->plan);
    hrm_snapshot_fini(&s->snap);
    hrm_free(s);
}

int64_t hrm_ssched_load(const struct hrm_ssched *s)
{
    return s->load;
}

int64_t hrm_ssched_ready_us(const struct hrm_ssched *s, int32_t task)
{
    if (task < 0 || task >= s->wl->ntasks)
        return -1;
    int32_t job = s->wl->tasks[task].job;
    const struct sjob *j = s->of_job[job];
    return j ? j->ready_us[task - s->wl->jobs[job].task_first] : -1;
}

const struct hrm_ssched_stats *hrm_ssched_stats(const struct hrm_ssched *s)
{
    return &s->st;
}

/* ---- the job queue ---- */

static void jq_push(struct hrm_ssched *s, struct sjob *j)
{
    if (j->queued || s->cur == j->job || j->rq_n == 0)
        return;
    s->jq[(s->jq_head + s->jq_n++) % s->cap_jobs] = j->job;
    j->queued = true;
}

/* Takes the k-th queued job out, keeping the order of the others. */
static int32_t jq_take(struct hrm_ssched *s, int32_t k)
{
    int32_t cap = s->cap_jobs;
    int32_t job = s->jq[(s->jq_head + k) % cap];
    for (int32_t i = k; i > 0; i--)
        s->jq[(s->jq_head + i) % cap] = s->jq[(s->jq_head + i - 1) % cap];
    s->jq_head = (s->jq_head + 1) % cap;
    s->jq_n--;
    s->of_job[job]->queued = false;
    return job;
}

static void stage_ready(struct hrm_ssched *s, struct sjob *j, int32_t stage, int64_t now)
{
    const struct hrm_stage *st = &s->wl->stages[stage];
    int32_t first = s->wl->jobs[j->job].task_first, nt = s->wl->jobs[j->job].ntasks;
    for (int32_t t = st->task_first; t < st->task_first + st->ntasks; t++) {
        if (S_STATE(j->tstate[t - first]) == S_DONE)
            continue; /* dropped while it waited (its job was cancelled) */
        j->tstate[t - first] = S_READY;
        j->ready_us[t - first] = now;
        ssched_rq_push(j, nt, t);
    }
}

/* ---- the transaction loop ---- */

/* Starts a transaction for the first queued job that did not already fail to
 * fit the latest snapshot; when every one did, for the first, with a request
 * the master answers only once the cell has changed. */
static void kick(struct hrm_ssched *s, struct hrm_env *env)
{
    if (s->phase != PH_IDLE || s->jq_n == 0)
        return;
    int32_t k = 0;
    bool wait = true;
    /* The stream queue first (P0), then batch: pass 0 looks at stream jobs only. */
    for (int pass = 0; pass < 2 && wait; pass++) {
        for (int32_t i = 0; i < s->jq_n; i++) {
            const struct sjob *j = s->of_job[s->jq[(s->jq_head + i) % s->cap_jobs]];
            if (pass == 0 && (s->cfg.first_fit || s->wl->jobs[j->job].kind == HRM_JOB_BATCH))
                continue;
            if (j->blocked_ver != s->snap.version || s->snap.version == 0) {
                k = i;
                wait = false;
                break;
            }
        }
    }
    s->cur = jq_take(s, k);
    s->txn++;
    s->locked = s->cfg.lock_stream && s->wl->jobs[s->cur].kind == HRM_JOB_STREAM;
    s->conflicted = false;
    s->phase = PH_SYNC;
    s->st.waits += wait;
    struct hrm_msg m = {.type = HRM_MSG_SNAP_REQUEST,
                        .status = s->locked ? HRM_SNAP_LOCK : 0,
                        .from = s->self,
                        .job = s->cur,
                        .task = -1,
                        .node = -1,
                        .attempt = s->txn,
                        .value = wait ? (int64_t)s->snap.version : 0};
    env->send(env, HRM_ADDR_CENTRAL, &m);
}

static void txn_end(struct hrm_ssched *s, struct hrm_env *env)
{
    struct sjob *j = s->of_job[s->cur];
    s->st.txns++;
    s->st.txns_locked += s->locked;
    s->st.txns_empty += s->nplan == 0;
    s->st.txns_conflicted += s->conflicted;
    s->phase = PH_IDLE;
    s->cur = -1;
    s->nplan = 0;
    if (j)
        jq_push(s, j);
    kick(s, env);
}

int hrm_ssched_on_snapshot(struct hrm_ssched *s, struct hrm_env *env, const struct hrm_msg *m,
                           const struct hrm_snapshot *snap)
{
    if (s->phase != PH_SYNC || m->attempt != s->txn ||
        ((m->status & HRM_SNAP_LOCK) != 0) != s->locked)
        return -HRM_ESTATE;
    hrm_snapshot_copy(&s->snap, snap);
    struct sjob *j = s->of_job[s->cur];
    /* No job: every task of it was dropped meanwhile (the daemons: cancelled); the
     * transaction ends empty, releasing a lock it was granted. */
    int32_t tried = j ? ssched_plan(s, j) : 0;
    if (j && s->nplan == 0)
        j->blocked_ver = s->snap.version;
    int64_t decide = s->cfg.t_job_us + s->cfg.t_task_us * tried;
    s->st.decision_us += decide;
    s->phase = PH_THINK;
    env->timer(env, env->now_us(env) + decide, COOKIE_COMMIT(s->txn));
    return 0;
}

/* The decision time is over: send the claims. */
static void commit(struct hrm_ssched *s, struct hrm_env *env)
{
    uint16_t lock = s->locked ? HRM_CLAIM_LOCKED : 0;
    struct hrm_msg m = {.type = HRM_MSG_CLAIM, .from = s->self, .job = s->cur, .attempt = s->txn};
    if (s->nplan == 0) {
        if (s->locked) { /* an empty transaction still releases the lock */
            m.task = m.node = -1;
            m.status = HRM_CLAIM_LAST | lock;
            env->send(env, HRM_ADDR_CENTRAL, &m);
        }
        txn_end(s, env);
        return;
    }
    for (size_t k = 0; k < s->nplan; k++) {
        m.task = s->plan[k].task;
        m.node = s->plan[k].node;
        m.gpu_mask = s->plan[k].gpu_mask;
        m.value = (int64_t)s->plan[k].seen;
        m.status = (uint16_t)((k + 1 == s->nplan ? HRM_CLAIM_LAST : 0) | lock);
        env->send(env, HRM_ADDR_CENTRAL, &m);
    }
    s->st.claims += (int64_t)s->nplan;
    s->acks_left = (int32_t)s->nplan;
    s->phase = PH_COMMIT;
}

int hrm_ssched_on_timer(struct hrm_ssched *s, struct hrm_env *env, uint64_t cookie)
{
    if (s->phase == PH_THINK && cookie == COOKIE_COMMIT(s->txn))
        commit(s, env);
    return 0;
}

/* ---- messages ---- */

/* The workload grew since the instance was made (the daemons add jobs as
 * they come): room for its jobs, the queue ring unwrapped into the new one. */
static void grow_jobs(struct hrm_ssched *s)
{
    int32_t cap = s->wl->njobs;
    if (cap <= s->cap_jobs)
        return;
    s->of_job = hrm_realloc(s->of_job, (size_t)cap * sizeof(*s->of_job));
    for (int32_t j = s->cap_jobs; j < cap; j++)
        s->of_job[j] = NULL;
    int32_t *jq = hrm_alloc((size_t)cap * sizeof(*jq));
    for (int32_t i = 0; i < s->jq_n; i++)
        jq[i] = s->jq[(s->jq_head + i) % s->cap_jobs];
    hrm_free(s->jq);
    s->jq = jq;
    s->jq_head = 0;
    s->cap_jobs = cap;
}

static int on_submit(struct hrm_ssched *s, struct hrm_env *env, int32_t job)
{
    grow_jobs(s);
    if (job < 0 || job >= s->wl->njobs || s->of_job[job])
        return -HRM_ESTATE;
    const struct hrm_job *wj = &s->wl->jobs[job];
    struct sjob *j = hrm_calloc(1, sizeof(*j));
    j->job = job;
    j->left = wj->ntasks;
    j->stage_left = hrm_alloc((size_t)wj->nstages * sizeof(int32_t));
    j->deps_left = hrm_alloc((size_t)wj->nstages * sizeof(int32_t));
    j->ready_us = hrm_alloc((size_t)wj->ntasks * sizeof(int64_t));
    j->tstate = hrm_calloc((size_t)wj->ntasks, 1);
    j->rq = hrm_alloc((size_t)wj->ntasks * sizeof(int32_t));
    for (int32_t t = 0; t < wj->ntasks; t++) {
        j->ready_us[t] = -1;
        j->gpu_left += s->wl->tasks[wj->task_first + t].req.v[HRM_DIM_GPU] > 0;
    }
    s->of_job[job] = j;
    s->load += wj->ntasks;
    s->st.jobs++;
    int64_t now = env->now_us(env);
    for (int32_t k = 0; k < wj->nstages; k++) {
        const struct hrm_stage *st = &s->wl->stages[wj->stage_first + k];
        j->stage_left[k] = st->ntasks;
        j->deps_left[k] = st->ndeps;
        if (st->ndeps == 0)
            stage_ready(s, j, wj->stage_first + k, now);
    }
    jq_push(s, j);
    kick(s, env);
    return 0;
}

static int on_ack(struct hrm_ssched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    if (s->phase != PH_COMMIT || m->attempt != s->txn || m->job != s->cur)
        return -HRM_ESTATE;
    struct sjob *j = s->of_job[s->cur];
    const struct hrm_job *wj = &s->wl->jobs[j->job];
    if (m->task < wj->task_first || m->task >= wj->task_first + wj->ntasks)
        return -HRM_ESTATE;
    uint8_t *ts = &j->tstate[m->task - wj->task_first];
    if (S_STATE(*ts) != S_CLAIMED)
        return -HRM_ESTATE;
    if (m->status == HRM_CLAIM_COMMITTED) {
        *ts = (uint8_t)((*ts & S_CONFLICTED) | S_RUNNING);
        s->st.committed++;
        j->gpu_running += s->wl->tasks[m->task].req.v[HRM_DIM_GPU] > 0;
    } else {
        /* Back to the front of the job's ready list: retried first. */
        *ts = S_READY | S_CONFLICTED;
        ssched_rq_push_front(j, wj->ntasks, m->task);
        s->st.conflicts++;
        s->st.conflicts_stream += s->wl->jobs[j->job].kind == HRM_JOB_STREAM;
        s->conflicted = true;
    }
    if (--s->acks_left == 0)
        txn_end(s, env);
    return 0;
}

/* Takes task t (of job record j, not queued in its ready list) out of the job
 * for good; ends the job when it was the last.  True if the job ended. */
static bool task_gone(struct hrm_ssched *s, struct hrm_env *env, struct sjob *j, int32_t t)
{
    const struct hrm_job *wj = &s->wl->jobs[j->job];
    j->tstate[t - wj->task_first] = S_DONE;
    j->left--;
    s->load--;
    if (s->wl->tasks[t].req.v[HRM_DIM_GPU] > 0)
        j->gpu_left--;
    int32_t stage = s->wl->tasks[t].stage;
    if (--j->stage_left[stage - wj->stage_first] == 0) {
        int64_t now = env->now_us(env);
        for (int32_t k = 0; k < wj->nstages; k++) {
            const struct hrm_stage *st = &s->wl->stages[wj->stage_first + k];
            for (int32_t d = 0; d < st->ndeps; d++)
                if (s->wl->stage_deps[st->dep_first + d] == stage && --j->deps_left[k] == 0)
                    stage_ready(s, j, wj->stage_first + k, now);
        }
    }
    if (j->left > 0)
        return false;
    int32_t job = j->job;
    for (int32_t k = 0; j->queued && k < s->jq_n; k++) /* dropped while it waited its turn */
        if (s->jq[(s->jq_head + k) % s->cap_jobs] == job)
            jq_take(s, k);
    struct hrm_msg e = {.type = HRM_MSG_JOB_END, .from = s->self, .job = job, .task = -1, .node = -1};
    env->send(env, HRM_ADDR_CLIENT, &e);
    s->of_job[job] = NULL;
    job_free(j);
    return true;
}

/* Drops a ready task from its job's ready list (keeping the others' order). */
static void rq_remove(struct sjob *j, int32_t ntasks, int32_t task)
{
    int32_t kept = 0;
    for (int32_t k = 0; k < j->rq_n; k++) {
        int32_t x = j->rq[(j->rq_head + k) % ntasks];
        if (x != task)
            j->rq[(j->rq_head + kept++) % ntasks] = x;
    }
    j->rq_n = kept;
}

/*
 * A task's run ended (the master forwards the node's report).  Outcomes other
 * than DONE come only from the daemons: LOST puts a running task back in the
 * ready list (its node died, or it failed with attempts left); FAILED ends it,
 * and also ends a task that never ran (its job was cancelled or failed).  A
 * task in a transaction (claimed) is left alone: the master ends it after the
 * claim's verdict, and the report that follows finds it running.
 */
static int on_task_end(struct hrm_ssched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    if (m->task < 0 || m->task >= s->wl->ntasks)
        return -HRM_ESTATE;
    int32_t job = s->wl->tasks[m->task].job;
    struct sjob *j = s->of_job[job];
    const struct hrm_job *wj = &s->wl->jobs[job];
    if (!j)
        return -HRM_ESTATE;
    uint8_t *ts = &j->tstate[m->task - wj->task_first];
    bool gpu = s->wl->tasks[m->task].req.v[HRM_DIM_GPU] > 0;
    if (S_STATE(*ts) == S_RUNNING && m->status == HRM_OUTCOME_LOST) {
        *ts = S_READY;
        j->ready_us[m->task - wj->task_first] = env->now_us(env);
        j->gpu_running -= gpu;
        ssched_rq_push(j, wj->ntasks, m->task);
    } else if (S_STATE(*ts) == S_RUNNING) {
        j->gpu_running -= gpu;
        if (task_gone(s, env, j, m->task))
            return 0;
    } else if (m->status == HRM_OUTCOME_FAILED &&
               (S_STATE(*ts) == S_READY || S_STATE(*ts) == S_WAITING)) {
        if (S_STATE(*ts) == S_READY)
            rq_remove(j, wj->ntasks, m->task);
        if (task_gone(s, env, j, m->task))
            return 0;
    } else {
        return 0; /* a repeated report */
    }
    jq_push(s, j);
    kick(s, env);
    return 0;
}

int hrm_ssched_adopt(struct hrm_ssched *s, int32_t task)
{
    if (task < 0 || task >= s->wl->ntasks || !s->of_job[s->wl->tasks[task].job])
        return -HRM_ESTATE;
    int32_t job = s->wl->tasks[task].job;
    struct sjob *j = s->of_job[job];
    const struct hrm_job *wj = &s->wl->jobs[job];
    uint8_t *ts = &j->tstate[task - wj->task_first];
    if (S_STATE(*ts) != S_READY)
        return -HRM_ESTATE;
    rq_remove(j, wj->ntasks, task);
    *ts = S_RUNNING;
    j->gpu_running += s->wl->tasks[task].req.v[HRM_DIM_GPU] > 0;
    return 0;
}

int hrm_ssched_on_msg(struct hrm_ssched *s, struct hrm_env *env, const struct hrm_msg *m)
{
    switch (m->type) {
    case HRM_MSG_JOB_SUBMIT:
        return on_submit(s, env, m->job);
    case HRM_MSG_CLAIM_ACK:
        return on_ack(s, env, m);
    case HRM_MSG_TASK_END:
        return on_task_end(s, env, m);
    default:
        return -HRM_ESTATE;
    }
}
