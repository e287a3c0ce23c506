/* Shared-state scheduling in the daemons (policy hrm-shared): the simulator's commit role in the master, its instances in scheduler processes. */
#include <string.h>

#include "dist_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/commit.h"
#include "hrm/log.h"
#include "sim/ssim_private.h" /* the policy's parameters, parsed as hrm sim parses them */

/*
 * The roles are the simulator's (docs/architecture.md, "Shared-state
 * scheduling"): the master runs the commit role (src/sched/commit.c) over a
 * cell of its nodes, and the scheduler processes (hrm sched) run the
 * instances (src/sched/ssched*.c).  This file is the master's driver:
 *   - the cell borrows the master's cluster (master_dist.c keeps it in step
 *     with the node table, GPUs included), and the role's workload holds
 *     every job given to an instance, growing as jobs come (hrm_commit_grow);
 *   - a snapshot reply carries the nodes whose version differs from the copy
 *     the instance already holds (`sent`, one per global instance): the
 *     delta sync the simulator models;
 *   - a committed claim becomes a launch on the agent, unless the table says
 *     the task may no longer run (its job was cancelled or failed, or the
 *     node left): then the role is told the run ended at once, after the
 *     claim's verdict, and so is the instance;
 *   - task ends reach the role from the table (master_dist.c's feed_end),
 *     whether or not an instance holds the job at that moment, so the cell
 *     never keeps the resources of a run that is over.
 * The job table stays the truth: a process that dies loses nothing (its jobs
 * are registered again and their running tasks adopted, master_remote.c),
 * and a claim for a task the table does not have pending never launches, so
 * nothing runs twice.
 */

#define SHARED_MAX_INSTANCES 1024 /* global instance numbers the commit role knows */
#define SUMMARY_US 10000000       /* at most one summary line per 10 s, when counts moved */

struct ended {
    int32_t task; /* workload task */
    int32_t node;
    uint16_t outcome;
};

struct mshared {
    struct hrm_workload *wl; /* every job handed to an instance (grows) */
    struct wl_map map;       /* workload -> table */
    struct task_map ids;     /* (job id, index) -> workload task; (job id, -1) -> workload job */
    struct hrm_commit *commit;
    enum hrm_validate_mode validate;
    struct hrm_env env;
    struct hrm_snapshot *sent; /* per global instance: the copy it holds, as sent */
    int32_t nsent;
    uint8_t *conflicted; /* per workload task: a claim of it conflicted (its next is a retry) */
    size_t cap_conflicted;
    uint32_t *gpu_busy; /* per node: GPUs given to running tasks */
    size_t cap_gpu;
    struct ended *ends; /* launches refused: ended in the role after the claim's verdict */
    size_t nends, cap_ends;
    int64_t retries, refused, launches_refused;
    int64_t said_conflicts, said_claims, said_at_us; /* as of the last summary line */
};

bool shared_policy(const char *policy)
{
    return policy && strcmp(policy, "hrm-shared") == 0;
}

/* ---- the commit role's environment ---- */

static int64_t env_now(struct hrm_env *env)
{
    (void)env;
    return master_now_us();
}

static void env_timer(struct hrm_env *env, int64_t at_us, uint64_t cookie)
{
    (void)env; /* the commit role sets no timers */
    (void)at_us;
    (void)cookie;
}

static struct rsched *process_of(struct master *m, hrm_addr to, int32_t *g)
{
    *g = to <= HRM_ADDR_SCHED0 ? hrm_addr_sched_index(to) : -1;
    struct rsched *r = *g >= 0 ? remote_of_inst(m->dist, *g) : NULL;
    return r && r->up ? r : NULL;
}

/* The copy instance g holds; a new one (or one of fewer nodes) is stale everywhere. */
static struct hrm_snapshot *sent_of(struct mshared *s, int32_t g, int32_t nnodes)
{
    if (g >= s->nsent) {
        s->sent = hrm_realloc(s->sent, (size_t)(g + 1) * sizeof(*s->sent));
        for (int32_t i = s->nsent; i <= g; i++)
            hrm_snapshot_init(&s->sent[i], 0);
        s->nsent = g + 1;
    }
    if (s->sent[g].nnodes < nnodes) {
        hrm_snapshot_fini(&s->sent[g]);
        hrm_snapshot_init(&s->sent[g], nnodes);
    }
    return &s->sent[g];
}

static void send_to(struct master *m, struct rsched *r, hrm_addr to, json_t *out)
{
    json_object_set_new(out, "to", json_integer(to));
    master_send(m, &r->peer, out);
}

/* The snapshot travels with the reply: [node, version, up, free by dimension..., GPUs,
 * capacity by dimension..., [[memory, memory used, share used, tasks, alone] per GPU]]
 * (docs/protocol.md, snap_reply). */
static void snapshot_reply(struct master *m, hrm_addr to, const struct hrm_msg *msg)
{
    struct mshared *s = m->dist->shared;
    int32_t g;
    struct rsched *r = process_of(m, to, &g);
    if (!r)
        return; /* gone: hrm_commit_forget dropped its request */
    const struct hrm_cell *cell = hrm_commit_cell(s->commit);
    struct hrm_snapshot *snap = sent_of(s, g, cell->nnodes);
    json_t *nodes = json_array();
    for (int32_t n = 0; n < cell->nnodes; n++) {
        const struct hrm_cell_node *cn = &cell->nodes[n];
        if (snap->nodes[n].version == cn->version)
            continue;
        json_t *e = json_pack("[i, I, b]", n, (json_int_t)cn->version, !cn->down);
        for (int d = 0; d < HRM_NDIM; d++)
            json_array_append_new(e, json_integer(cn->free.v[d]));
        json_array_append_new(
            e, json_integer(m->dist->cluster->nodes[n].capacity.v[HRM_DIM_GPU]));
        for (int d = 0; d < HRM_NDIM; d++)
            json_array_append_new(e, json_integer(cn->cap.v[d]));
        json_t *gpus = json_array();
        for (int32_t k = 0; k < cn->ngpus; k++) {
            const struct hrm_cell_gpu *rec = &cell->gpus[cn->gpu_at + k];
            json_array_append_new(gpus, json_pack("[I, I, i, i, i]", (json_int_t)rec->gmem_cap,
                                                  (json_int_t)rec->gmem_used, rec->share_used,
                                                  rec->tasks, rec->solo));
        }
        json_array_append_new(e, gpus);
        json_array_append_new(nodes, e);
    }
    hrm_snapshot_sync(snap, cell);
    hrm_log(HRM_LOG_DEBUG, "shared state: snapshot of cell version %lld (%zu nodes changed) to "
            "instance %d%s", (long long)cell->version, json_array_size(nodes), g,
            msg->status & HRM_SNAP_LOCK ? ", with the cell lock" : "");
    json_t *out = hrm_wire_from_msg(msg);
    json_object_set_new(out, "nodes", nodes);
    json_object_set_new(out, "gpu_jobs", json_integer(cell->gpu_jobs));
    send_to(m, r, to, out);
}

static struct rjob *job_of_task(struct mshared *s, int32_t t, int32_t *idx)
{
    *idx = s->map.task_of[t];
    return s->map.job_of[s->wl->tasks[t].job];
}

static void claim_ack(struct master *m, hrm_addr to, const struct hrm_msg *msg)
{
    struct mshared *s = m->dist->shared;
    int32_t g, idx;
    struct rjob *j = job_of_task(s, msg->task, &idx);
    if (msg->status == HRM_CLAIM_CONFLICT) {
        s->conflicted[msg->task] = 1;
        hrm_log(HRM_LOG_DEBUG, "shared state: instance %d's claim of task %lld.%d on %s "
                "conflicted", hrm_addr_sched_index(to), (long long)j->id, idx,
                m->nodes[msg->node].name);
    }
    struct rsched *r = process_of(m, to, &g);
    if (!r)
        return;
    struct hrm_msg w = *msg;
    w.job = (int32_t)j->id;
    w.task = idx;
    send_to(m, r, to, hrm_wire_from_msg(&w));
}

/* Grows a zeroed array to at least need elements. */
static void grow_zeroed(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t had = *cap;
    hrm_grow(arr, cap, need, elem);
    if (*cap > had)
        memset((char *)*arr + had * elem, 0, (*cap - had) * elem);
}

/* The lowest free GPUs of node n for a task of `count`; false if too few are free. */
static bool pick_gpus(struct master *m, int32_t n, int64_t count, uint32_t *mask)
{
    struct mshared *s = m->dist->shared;
    grow_zeroed((void **)&s->gpu_busy, &s->cap_gpu, (size_t)n + 1, sizeof(*s->gpu_busy));
    *mask = 0;
    for (int b = 0; b < m->nodes[n].gpus && b < 32 && count > 0; b++) {
        if (!(s->gpu_busy[n] & (1u << b))) {
            *mask |= 1u << b;
            count--;
        }
    }
    return count == 0;
}

/* A committed claim: launched, unless the table says the task may not run now. */
static void launch(struct master *m, const struct hrm_msg *msg)
{
    struct mshared *s = m->dist->shared;
    int32_t idx, n = msg->node;
    struct rjob *j = job_of_task(s, msg->task, &idx);
    struct rtask *t = &j->tasks[idx];
    bool wanted = jobs_live(j) && !j->failed && t->state == HRM_RTASK_PENDING;
    /* The instance named the GPUs (P0's units stack tasks on one GPU by memory
     * and shares); a claim that names none takes the lowest idle ones. */
    uint32_t mask = msg->gpu_mask;
    bool named = mask != 0 && (m->nodes[n].gpus >= 32 || mask >> m->nodes[n].gpus == 0);
    if (wanted && dist_node_ok(m, n) &&
        (named || pick_gpus(m, n, j->greq[t->group].v[HRM_DIM_GPU], &mask))) {
        grow_zeroed((void **)&s->gpu_busy, &s->cap_gpu, (size_t)n + 1, sizeof(*s->gpu_busy));
        s->gpu_busy[n] |= mask;
        jobs_task_running(m, j, idx, n, t->attempt + 1, mask);
        m->dist->relayed++;
        return;
    }
    /* Ended in the role once this call returns, i.e. after the claim's verdict. */
    s->launches_refused++;
    HRM_GROW(s->ends, s->cap_ends, s->nends + 1);
    s->ends[s->nends++] = (struct ended){
        .task = msg->task, .node = n, .outcome = wanted ? HRM_OUTCOME_LOST : HRM_OUTCOME_FAILED};
}

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *msg)
{
    struct master *m = env->ctx;
    switch (msg->type) {
    case HRM_MSG_SNAP_REPLY:
        snapshot_reply(m, to, msg);
        break;
    case HRM_MSG_CLAIM_ACK:
        claim_ack(m, to, msg);
        break;
    case HRM_MSG_TASK_LAUNCH:
        launch(m, msg);
        break;
    default:
        break; /* TASK_END forwarded to the owner: the table tells the job's instance */
    }
}

/* ---- task ends ---- */

static void tell_instance(struct master *m, struct rjob *j, int32_t idx,
                          enum hrm_task_outcome outcome)
{
    struct rtask *t = &j->tasks[idx];
    if (j->sched == REMOTE_JOB && t->sched >= 0)
        remote_task_end(m, j, idx, outcome);
    else if (outcome == HRM_OUTCOME_DONE || outcome == HRM_OUTCOME_FAILED)
        t->sched = -1;
}

/* The role hears that workload task wt's run on node ended; true if it held one there. */
static bool release(struct master *m, int32_t wt, int32_t node, enum hrm_task_outcome outcome)
{
    struct mshared *s = m->dist->shared;
    if (!s->commit || hrm_commit_task_node(s->commit, wt) != node || node < 0)
        return false;
    struct hrm_msg e = {.type = HRM_MSG_TASK_END,
                        .from = hrm_addr_node(node),
                        .status = (uint16_t)outcome,
                        .job = s->wl->tasks[wt].job,
                        .task = wt,
                        .node = node};
    int rc = hrm_commit_on_msg(s->commit, &s->env, &e);
    if (rc < 0)
        hrm_log(HRM_LOG_ERR, "shared state: the commit role refused a task end: %s",
                hrm_strerror(rc));
    return rc == 0;
}

/* Launches refused during a call of the role end there now, and at their instance. */
static void flush_ends(struct master *m)
{
    struct mshared *s = m->dist->shared;
    for (size_t k = 0; k < s->nends; k++) { /* releasing may settle more transactions */
        struct ended e = s->ends[k];
        int32_t idx;
        struct rjob *j = job_of_task(s, e.task, &idx);
        release(m, e.task, e.node, e.outcome);
        tell_instance(m, j, idx, e.outcome);
    }
    s->nends = 0;
}

void shared_task_end(struct master *m, struct rjob *j, int32_t idx, enum hrm_task_outcome outcome)
{
    struct mshared *s = m->dist->shared;
    struct rtask *t = &j->tasks[idx];
    int32_t wt = task_map_find(&s->ids, j->id, idx);
    if (wt >= 0 && release(m, wt, t->node, outcome) && t->node < (int32_t)s->cap_gpu)
        s->gpu_busy[t->node] &= ~t->gpu_mask;
    tell_instance(m, j, idx, outcome);
    flush_ends(m);
}

/* A stream task's run ended and it waits out its backoff (master_stream.c): the cell frees
 * its resources now, but its instance hears nothing yet, so it does not claim the task again
 * before the backoff is over; shared_stream_due tells it then. */
void shared_stream_ended(struct master *m, struct rjob *j, int32_t idx)
{
    struct mshared *s = m->dist->shared;
    struct rtask *t = &j->tasks[idx];
    int32_t wt = task_map_find(&s->ids, j->id, idx);
    if (wt >= 0 && release(m, wt, t->node, HRM_OUTCOME_LOST) && t->node < (int32_t)s->cap_gpu)
        s->gpu_busy[t->node] &= ~t->gpu_mask;
    flush_ends(m);
}

/* The backoff is over: the instance hears the run was lost and claims the task again (with
 * the cell lock: a stream job's placement is pessimistic). */
void shared_stream_due(struct master *m, struct rjob *j, int32_t idx)
{
    tell_instance(m, j, idx, HRM_OUTCOME_LOST);
    dist_drain(m);
}

/* ---- jobs ---- */

int shared_job_added(struct master *m, struct rjob *j, int32_t g, struct hrm_error *err)
{
    struct mshared *s = m->dist->shared;
    int32_t sj = task_map_find(&s->ids, j->id, -1);
    if (sj >= 0)
        return s->wl->jobs[sj].kind;
    int rc = sched_wl_add_job(s->wl, &s->map, j, dist_estimate_us(m->dist, j), &sj, err);
    if (rc < 0)
        return rc;
    if (sj < 0)
        return HRM_JOB_BATCH; /* nothing live: the caller finishes it */
    task_map_put(&s->ids, j->id, -1, sj);
    for (int32_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i].sched >= 0)
            task_map_put(&s->ids, j->id, i, j->tasks[i].sched);
    grow_zeroed((void **)&s->conflicted, &s->cap_conflicted, (size_t)s->wl->ntasks, 1);
    if ((rc = hrm_commit_grow(s->commit, &s->env)) < 0)
        return hrm_errorf(err, rc, "shared state: the commit role cannot grow");
    /* Runs the agents hold (a master restart) take their place in the cell. */
    for (int32_t i = 0; i < j->ntasks; i++) {
        struct rtask *t = &j->tasks[i];
        if (t->sched < 0 || t->state != HRM_RTASK_RUNNING)
            continue;
        if (hrm_commit_adopt_on(s->commit, t->sched, t->node, t->gpu_mask, g) == 0) {
            grow_zeroed((void **)&s->gpu_busy, &s->cap_gpu, (size_t)t->node + 1,
                        sizeof(*s->gpu_busy));
            s->gpu_busy[t->node] |= t->gpu_mask;
            continue;
        }
        /* It no longer fits there (the node came back smaller): stopped, placed again. */
        master_kill_run(m, t->node, j->id, i, t->attempt);
        task_set_state(m, j, i, HRM_RTASK_PENDING);
        jobs_persist_task(m, j, i);
    }
    flush_ends(m);
    return s->wl->jobs[sj].kind;
}

/* ---- what the instances send ---- */

/* A message that breaks the protocol: the process hears why, the log says so, and its
 * instances start over (their jobs go to the others, from the table). */
static void refuse(struct master *m, struct rsched *r, int32_t g, const char *what,
                   const char *why)
{
    struct mshared *s = m->dist->shared;
    s->refused++;
    hrm_log(HRM_LOG_WARNING, "shared state: %s from instance %d of %s refused: %s", what, g,
            r->name, why);
    master_reply_error(m, &r->peer, HRM_WERR_BAD_FIELD, -1, "%s: %s", what, why);
    remote_down(m, r, "it broke the commit protocol");
}

void shared_on_msg(struct master *m, struct rsched *r, int32_t g, const struct hrm_msg *w)
{
    struct mshared *s = m->dist->shared;
    const char *what = hrm_msg_name(w->type);
    struct hrm_msg msg = *w;
    char why[200];
    if (!s->commit || g >= SHARED_MAX_INSTANCES) {
        refuse(m, r, g, what, !s->commit ? "no node has registered yet" : "instance number too high");
        return;
    }
    msg.from = hrm_addr_sched(g);
    int32_t sj = w->job >= 0 ? task_map_find(&s->ids, w->job, -1) : -1;
    if (w->type == HRM_MSG_SNAP_REQUEST) {
        msg.job = sj; /* -1 when unknown: it only weighs in the GPU fair share */
    } else if (w->task >= 0) {
        int32_t wt = task_map_find(&s->ids, w->job, w->task);
        if (wt < 0 || w->node < 0 || w->node >= hrm_commit_cell(s->commit)->nnodes) {
            if (wt < 0)
                snprintf(why, sizeof(why), "no task %lld.%d was given to an instance",
                         (long long)w->job, w->task);
            else
                snprintf(why, sizeof(why), "no node %d", w->node);
            refuse(m, r, g, what, why);
            return;
        }
        int32_t idx;
        const struct rjob *j = job_of_task(s, wt, &idx);
        /* Another instance's task.  (A job that ended or was cancelled while the claim was on
         * its way holds no instance: the claim goes through, and its launch is refused.) */
        if (j->sched == REMOTE_JOB && j->inst != g) {
            snprintf(why, sizeof(why), "task %lld.%d is not held by instance %d",
                     (long long)w->job, w->task, g);
            refuse(m, r, g, what, why);
            return;
        }
        msg.job = s->wl->tasks[wt].job;
        msg.task = wt;
        hrm_log(HRM_LOG_DEBUG, "shared state: instance %d claims task %lld.%d on %s", g,
                (long long)w->job, w->task, m->nodes[w->node].name);
        if (s->conflicted[wt]) {
            s->conflicted[wt] = 0;
            s->retries++;
        }
    } else {
        msg.job = sj;
    }
    int rc = hrm_commit_on_msg(s->commit, &s->env, &msg);
    flush_ends(m);
    if (rc < 0) {
        snprintf(why, sizeof(why), "out of turn (one transaction at a time, claims under a "
                 "lock only while it is held, none for a task that runs)");
        refuse(m, r, g, what, why);
    }
}

void shared_process_gone(struct master *m, struct rsched *r)
{
    struct mshared *s = m->dist->shared;
    for (int32_t g = r->base; g < r->base + r->count && s->commit; g++) {
        if (g < SHARED_MAX_INSTANCES)
            hrm_commit_forget(s->commit, &s->env, g);
        if (g < s->nsent) { /* a new incarnation gets its snapshot whole */
            hrm_snapshot_fini(&s->sent[g]);
            hrm_snapshot_init(&s->sent[g], 0);
        }
    }
    flush_ends(m);
}

/* ---- nodes ---- */

int shared_sync(struct master *m, struct hrm_error *err)
{
    struct mdist *d = m->dist;
    struct mshared *s = d->shared;
    if (d->cluster->nnodes == 0)
        return 0;
    if (!s->commit) {
        struct hrm_commit_config cc = {.validate = s->validate,
                                       .instances = SHARED_MAX_INSTANCES};
        if (!(s->commit = hrm_commit_new(d->cluster, s->wl, &cc, err)))
            return -HRM_ESPEC;
    }
    int rc = hrm_commit_grow(s->commit, &s->env);
    flush_ends(m);
    return rc < 0 ? hrm_errorf(err, rc, "shared state: the commit role cannot grow") : 0;
}

bool shared_ready(const struct master *m)
{
    return m->dist->shared->commit != NULL;
}

void shared_node(struct master *m, int32_t n, bool up)
{
    struct mshared *s = m->dist->shared;
    if (!s->commit || n >= hrm_commit_cell(s->commit)->nnodes)
        return; /* shared_sync brings it in, up */
    hrm_commit_node_up(s->commit, &s->env, n, up);
    flush_ends(m);
}

/* ---- life cycle, figures ---- */

int shared_new(struct master *m, struct hrm_error *err)
{
    struct hrm_params params = {.items = m->cfg.params, .count = (size_t)m->cfg.nparams};
    struct ssim_setup su;
    int rc = ssim_setup_parse(m->cfg.policy, &params, 1, &su, err);
    if (rc < 0)
        return rc;
    struct mdist *d = m->dist;
    d->setup.name = su.name;
    d->setup.register_rr = su.register_rr;
    struct mshared *s = hrm_calloc(1, sizeof(*s));
    d->shared = s;
    s->validate = su.commit.validate;
    s->wl = hrm_workload_new();
    s->env = (struct hrm_env){.now_us = env_now, .send = env_send, .timer = env_timer, .ctx = m};
    s->said_at_us = hrm_mono_us();
    return 0;
}

static void summary(struct master *m, int level)
{
    struct mshared *s = m->dist->shared;
    const struct hrm_commit_stats *c = hrm_commit_stats(s->commit);
    hrm_log(level, "shared state: %lld transactions (%lld locked, %lld deferred), %lld claims, "
            "%lld committed, %lld conflicts (%lld stale), %lld retries, %lld lock waits, "
            "%lld snapshots; %lld launches refused, %lld protocol errors",
            (long long)c->txns, (long long)c->txns_locked, (long long)c->txns_deferred,
            (long long)c->claims, (long long)c->committed, (long long)c->conflicts,
            (long long)c->conflicts_stale, (long long)s->retries, (long long)c->lock_waits,
            (long long)c->syncs, (long long)s->launches_refused, (long long)s->refused);
    s->said_conflicts = c->conflicts;
    s->said_claims = c->claims;
    s->said_at_us = hrm_mono_us();
}

void shared_housekeeping(struct master *m)
{
    struct mshared *s = m->dist->shared;
    if (!s->commit || hrm_mono_us() - s->said_at_us < SUMMARY_US)
        return;
    const struct hrm_commit_stats *c = hrm_commit_stats(s->commit);
    if (c->claims != s->said_claims || c->conflicts != s->said_conflicts)
        summary(m, HRM_LOG_INFO);
}

bool shared_node_free(const struct master *m, int32_t n, struct hrm_res *free_out)
{
    const struct mshared *s = m->dist->shared;
    if (!s->commit || n < 0 || n >= hrm_commit_cell(s->commit)->nnodes)
        return false;
    *free_out = hrm_commit_cell(s->commit)->nodes[n].free;
    return true;
}

json_t *shared_stats_json(const struct master *m)
{
    const struct mshared *s = m->dist->shared;
    struct hrm_commit_stats none = {0};
    const struct hrm_commit_stats *c = s->commit ? hrm_commit_stats(s->commit) : &none;
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "txns",
                     (json_int_t)c->txns, "txns_locked", (json_int_t)c->txns_locked,
                     "txns_deferred", (json_int_t)c->txns_deferred, "claims",
                     (json_int_t)c->claims, "committed", (json_int_t)c->committed, "conflicts",
                     (json_int_t)c->conflicts, "conflicts_stale", (json_int_t)c->conflicts_stale,
                     "retries", (json_int_t)s->retries, "lock_waits", (json_int_t)c->lock_waits,
                     "locked_bounced", (json_int_t)c->locked_bounced, "snapshots",
                     (json_int_t)c->syncs, "launches_refused", (json_int_t)s->launches_refused,
                     "protocol_errors", (json_int_t)s->refused);
}

void shared_free(struct master *m)
{
    struct mshared *s = m->dist ? m->dist->shared : NULL;
    if (!s)
        return;
    if (s->commit)
        summary(m, HRM_LOG_INFO);
    hrm_commit_free(s->commit);
    hrm_workload_free(s->wl);
    sched_wl_map_free(&s->map);
    task_map_free(&s->ids);
    for (int32_t i = 0; i < s->nsent; i++)
        hrm_snapshot_fini(&s->sent[i]);
    hrm_free(s->sent);
    hrm_free(s->conflicted);
    hrm_free(s->gpu_busy);
    hrm_free(s->ends);
    hrm_free(s);
    m->dist->shared = NULL;
}
