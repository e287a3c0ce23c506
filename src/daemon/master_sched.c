/* The master's scheduler: the central role, unchanged, driven through a real-clock hrm_env, grown as jobs come and rebuilt as nodes come. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/log.h"
#include "master_private.h"

/*
 * The central role is built for a workload known up front: its state and its
 * per-job arrays are sized at hrm_central_new.  The master learns jobs and
 * nodes over time, so it keeps the truth in its own job table and treats the
 * role as a derived cache.  Jobs that arrive are appended to the role's
 * workload and the role grows to take them (sched_add_arrived, once per turn,
 * O(the new jobs)); when nodes arrive, when jobs leave early (cancel), when the
 * policy cannot grow, or when finished work fills most of the grown role, it
 * rebuilds the role from the table (docs/architecture.md, "The master's
 * scheduler").  A rebuild holds only live work (pending and running tasks of
 * unfinished jobs), so its cost is O(live tasks + nodes), at most once per
 * turn.  Everything else -- task ends, node failures, passes -- goes through
 * the role's own messages, so the hot path is the simulator's.
 */

static int64_t env_now(struct hrm_env *env)
{
    (void)env;
    return master_now_us();
}

static void env_timer(struct hrm_env *env, int64_t at_us, uint64_t cookie)
{
    struct master *m = env->ctx;
    role_timers_add(&m->sched.timers, at_us, 0, cookie);
}

static void on_launch(struct master *m, const struct hrm_msg *msg)
{
    struct msched *s = &m->sched;
    struct rjob *j = s->map.job_of[s->wl->tasks[msg->task].job];
    int32_t idx = s->map.task_of[msg->task];
    fgm_launched(m, j, idx, msg->task);
    jobs_task_running(m, j, idx, msg->node, msg->attempt, msg->gpu_mask);
}

static void on_kill(struct master *m, const struct hrm_msg *msg)
{
    /* Preemption: the role already requeued the task; the run on the node is
     * stopped and its report will be stale (attempt). */
    struct msched *s = &m->sched;
    struct rjob *j = s->map.job_of[s->wl->tasks[msg->task].job];
    int32_t idx = s->map.task_of[msg->task];
    struct rtask *t = &j->tasks[idx];
    master_kill_run(m, msg->node, j->id, idx, msg->attempt);
    if (t->state == HRM_RTASK_RUNNING) {
        task_set_state(m, j, idx, HRM_RTASK_PENDING);
        jobs_persist_task(m, j, idx);
        events_task_retried(m, j, idx, "preempted");
    }
}

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *msg)
{
    struct master *m = env->ctx;
    (void)to;
    switch (msg->type) {
    case HRM_MSG_TASK_LAUNCH:
        on_launch(m, msg);
        break;
    case HRM_MSG_TASK_KILL:
        on_kill(m, msg);
        break;
    case HRM_MSG_JOB_END: {
        struct rjob *j = m->sched.map.job_of[msg->job];
        if (j->sched == msg->job)
            jobs_finish(m, j);
        break;
    }
    default:
        hrm_log(HRM_LOG_WARNING, "scheduler sent an unexpected %s", hrm_msg_name(msg->type));
        break;
    }
}

void sched_init(struct master *m)
{
    struct msched *s = &m->sched;
    memset(s, 0, sizeof(*s));
    s->env = (struct hrm_env){.now_us = env_now, .send = env_send, .timer = env_timer, .ctx = m};
    s->dirty = true;
}

static void sched_drop(struct msched *s)
{
    hrm_central_free(s->central);
    s->policy = NULL;
    hrm_workload_free(s->wl);
    hrm_cluster_free(s->cluster);
    s->central = NULL;
    s->wl = NULL;
    s->cluster = NULL;
    role_timers_clear(&s->timers);
}

void sched_fini(struct master *m)
{
    struct msched *s = &m->sched;
    sched_drop(s);
    sched_wl_map_free(&s->map);
    role_timers_free(&s->timers);
    hrm_free(s->arrived);
}

static int build_cluster(struct master *m, struct hrm_error *err)
{
    struct msched *s = &m->sched;
    s->cluster = hrm_cluster_new(NULL);
    double *speed = hrm_calloc((size_t)m->nnodes + 1, sizeof(*speed));
    double *disk_bw = hrm_calloc((size_t)m->nnodes + 1, sizeof(*disk_bw));
    master_perf_map(m, speed, disk_bw);
    int rc = 0;
    for (int32_t n = 0; n < m->nnodes && rc == 0; n++) {
        const struct rnode *rn = &m->nodes[n];
        int rack = hrm_cluster_find_rack(s->cluster, rn->rack);
        if (rack < 0 && (rack = hrm_cluster_add_rack(s->cluster, rn->rack, err)) < 0) {
            rc = rack;
            break;
        }
        struct hrm_node_desc d = {.name = rn->name,
                                  .rack = rack,
                                  .cores = rn->cores,
                                  .cpu_speed = speed[n],
                                  .mem = rn->mem,
                                  .gpus = rn->gpus,
                                  .gpu_mem = rn->gpu_mem,
                                  .disk_bw = disk_bw[n],
                                  /* the agent's NUMA layout (master_gpus.c): the hrm policy's
                                   * units bind cores by NUMA distance, as the agent does */
                                  .numa = rn->numa,
                                  .gpu_numa = rn->gpu_numa_known ? rn->gpu_numa : NULL};
        rc = hrm_cluster_add_node(s->cluster, &d, err); /* the node's index, or < 0 */
        rc = rc < 0 ? rc : 0;
    }
    hrm_free(speed);
    hrm_free(disk_bw);
    return rc < 0 ? rc : 0;
}

bool sched_task_live(const struct rjob *j, const struct rtask *t)
{
    /* A failed job starts nothing more; its runs still end through the role. */
    return t->state == HRM_RTASK_RUNNING ||
           (t->state == HRM_RTASK_PENDING && !j->failed && !stream_task_waiting(t));
}

int sched_wl_add_job(struct hrm_workload *wl, struct wl_map *map, struct rjob *j, int64_t est_us,
                     int32_t *sj_out, struct hrm_error *err)
{
    int32_t n = 0;
    for (int32_t i = 0; i < j->ntasks; i++) {
        j->tasks[i].sched = -1;
        n += sched_task_live(j, &j->tasks[i]);
    }
    j->sched = *sj_out = -1;
    if (n == 0)
        return 0;
    int q = hrm_workload_find_queue(wl, j->queue);
    if (q < 0 && (q = hrm_workload_set_queue(wl, j->queue, 0.0, 1.0, err)) < 0)
        return q;
    struct hrm_job_desc d = {.name = j->name,
                             .kind = (enum hrm_job_kind)j->kind,
                             .user = hrm_workload_user(wl, j->user),
                             .queue = q,
                             .priority = j->priority,
                             .submit_us = 0};
    int sj = hrm_workload_add_job(wl, &d, err);
    if (sj < 0)
        return sj;
    int rc = hrm_workload_add_stage(wl, "tasks", NULL, 0, err);
    if (rc < 0)
        return rc;
    HRM_GROW(map->job_of, map->cap_job_of, (size_t)sj + 1);
    map->job_of[sj] = j;
    j->sched = *sj_out = sj;
    for (int32_t i = 0; i < j->ntasks; i++) {
        struct rtask *t = &j->tasks[i];
        if (!sched_task_live(j, t))
            continue;
        struct hrm_task_desc td = {.req = j->greq[t->group],
                                   .duration_us = est_us,
                                   .est_duration_us = est_us,
                                   .gpu_milli = j->gshare[t->group],

                                   /* tasks of one command are similar (FGM's history) */
                                   .logic = fgm_task_logic(j, t->group)};
        int st = hrm_workload_add_task(wl, &td, err);
        if (st < 0)
            return st;
        HRM_GROW(map->task_of, map->cap_task_of, (size_t)st + 1);
        map->task_of[st] = i;
        t->sched = st;
    }
    return 0;
}

void sched_wl_map_free(struct wl_map *map)
{
    hrm_free(map->job_of);
    hrm_free(map->task_of);
    *map = (struct wl_map){0};
}

/* Puts the live runs back into the new role's state, with their attempt
 * numbers, so reports about them still match (central.c checks attempts). */
static void restore_runs(struct master *m, struct hrm_policy *policy)
{
    struct msched *s = &m->sched;
    /* The role owns its state; seeding it before the first pass is the one
     * write the master makes to it (see the comment atop this file). */
    struct hrm_state *st = (struct hrm_state *)hrm_central_state(s->central);
    int64_t now = master_now_us();
    for (int32_t t = 0; t < s->wl->ntasks; t++) {
        struct rjob *j = s->map.job_of[s->wl->tasks[t].job];
        int32_t idx = s->map.task_of[t];
        struct rtask *rt = &j->tasks[idx];
        if (rt->state != HRM_RTASK_RUNNING) {
            st->tasks[t].attempt = rt->attempt;
            continue;
        }
        st->tasks[t].attempt = rt->attempt - 1;
        /* Tasks stacked on one GPU (fractional shares) go back stacked; the rest as they were
         * charged (FGM's estimate, or the request). */
        bool stacked = rt->node >= 0 && rt->node < st->cluster->nnodes &&
                       (rt->gpu_mask & st->nodes[rt->node].gpu_busy) != 0;
        int started = stacked ? hrm_state_start_stacked(st, t, rt->node, rt->gpu_mask, rt->start_us)
                              : fgm_restore_start(st, t, j, rt);
        if (started == 0) {
            if (policy->ops->on_event) {
                struct hrm_event ev = {.type = HRM_EV_TASK_START,
                                       .now_us = now,
                                       .job = s->wl->tasks[t].job,
                                       .task = t,
                                       .node = rt->node};
                policy->ops->on_event(policy, st, &ev);
            }
            continue;
        }
        /* No longer fits there (the node came back smaller, or is down): stop
         * that run and let the task be placed again. */
        st->tasks[t].attempt = rt->attempt;
        master_kill_run(m, rt->node, j->id, idx, rt->attempt);
        task_set_state(m, j, idx, HRM_RTASK_PENDING);
        jobs_persist_task(m, j, idx);
    }
}

int sched_rebuild(struct master *m, struct hrm_error *err)
{
    struct msched *s = &m->sched;
    if (m->dist) {
        s->dirty = false;
        return dist_rebuild(m, err);
    }
    sched_drop(s);
    s->dirty = false;
    s->narrived = 0; /* the rebuild takes every live job */
    for (size_t i = 0; i < m->njobs; i++)
        if (m->jobs[i])
            m->jobs[i]->sched = -1;
    if (m->nnodes == 0)
        return 0; /* nothing to place on: jobs wait for the first agent */
    int rc = build_cluster(m, err);
    if (rc < 0)
        return rc;
    s->wl = hrm_workload_new();
    for (size_t i = 0; i < m->njobs; i++) {
        struct rjob *j = m->jobs[i];
        if (!j || !jobs_live(j))
            continue;
        int32_t sj;
        if ((rc = sched_wl_add_job(s->wl, &s->map, j, 0, &sj, err)) < 0)
            return rc;
        /* Every task ended while no scheduler ran (a restart); a stream job whose tasks all
         * wait out their backoff goes on. */
        if (j->sched < 0 && j->kind != HRM_JOB_STREAM)
            jobs_finish(m, j);
    }
    struct hrm_params params = {.items = m->cfg.params, .count = (size_t)m->cfg.nparams};
    struct hrm_policy *policy = hrm_policy_new(m->cfg.policy, &params, 1, err);
    if (!policy)
        return -HRM_EPOLICY;
    struct hrm_central_config cc = {.pass_delay_us = m->cfg.pass_delay_us,
                                    .max_attempts = m->cfg.max_attempts,
                                    .max_starts_per_pass = m->cfg.max_pass_starts};
    fgm_attach(m, policy);
    s->policy = policy;
    s->central = hrm_central_new(s->cluster, s->wl, policy, &cc);
    s->rebuilds++;
    for (int32_t n = 0; n < m->nnodes; n++) {
        if (m->nodes[n].up)
            continue;
        struct hrm_msg down = {.type = HRM_MSG_NODE_DOWN, .from = HRM_ADDR_CENTRAL, .node = n};
        if ((rc = hrm_central_on_msg(s->central, &s->env, &down)) < 0)
            return hrm_errorf(err, rc, "scheduler refused node_down");
    }
    for (int32_t sj = 0; sj < s->wl->njobs; sj++) {
        struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = sj};
        if ((rc = hrm_central_on_msg(s->central, &s->env, &sub)) < 0)
            return hrm_errorf(err, rc, "scheduler refused job_submit");
    }
    restore_runs(m, policy);
    fgm_restore_retries(m, policy);
    hrm_log(HRM_LOG_DEBUG, "scheduler rebuilt: %d jobs, %d tasks, %d nodes", s->wl->njobs,
            s->wl->ntasks, s->cluster->nnodes);
    return 0;
}

void sched_job_arrived(struct master *m, const struct rjob *j)
{
    struct msched *s = &m->sched;
    if (m->dist || !s->central) {
        s->dirty = true; /* the distributed roles and a first role are built from the table */
        return;
    }
    HRM_GROW(s->arrived, s->cap_arrived, s->narrived + 1);
    s->arrived[s->narrived++] = j->id;
}

/*
 * Whether the role should be made again rather than grown: it keeps every job it took since
 * it was made, finished or not, so once finished work outweighs live work (and more than a
 * slack), a rebuild -- O(live) -- sheds it.  The rebuild comes after at least as many tasks
 * ended as it costs, so it adds O(1) per task, amortised.
 */
#define COMPACT_SLACK 65536

static bool role_needs_compaction(const struct msched *s)
{
    const struct hrm_state *st = hrm_central_state(s->central);
    int64_t live = st->nready + st->nrunning;
    return s->wl->ntasks > 2 * live + COMPACT_SLACK ||
           s->wl->njobs > 2 * (int64_t)st->njobs_running + COMPACT_SLACK / 16;
}

int sched_add_arrived(struct master *m, struct hrm_error *err)
{
    struct msched *s = &m->sched;
    if (s->narrived == 0)
        return 0;
    if (m->dist || !s->central || !hrm_central_can_grow(s->central) ||
        role_needs_compaction(s)) {
        s->dirty = true;
        return sched_rebuild(m, err);
    }
    /* The new jobs go at the workload's end, in submission order: the order a rebuild lists
     * them in, after every job the role holds (which all came before them). */
    int32_t first = s->wl->njobs;
    for (size_t i = 0; i < s->narrived; i++) {
        struct rjob *j = jobs_find(m, s->arrived[i]);
        if (!j || !jobs_live(j) || j->sched >= 0)
            continue; /* cancelled within the turn, or already in */
        int32_t sj;
        int rc = sched_wl_add_job(s->wl, &s->map, j, 0, &sj, err);
        if (rc < 0)
            return rc;
        if (sj < 0 && j->kind != HRM_JOB_STREAM)
            jobs_finish(m, j);
    }
    s->narrived = 0;
    int rc = hrm_central_grow(s->central);
    if (rc < 0)
        return hrm_errorf(err, rc, "scheduler refused to grow");
    for (int32_t sj = first; sj < s->wl->njobs; sj++) {
        struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = sj};
        if ((rc = hrm_central_on_msg(s->central, &s->env, &sub)) < 0)
            return hrm_errorf(err, rc, "scheduler refused job_submit");
    }
    s->grows++;
    hrm_log(HRM_LOG_DEBUG, "scheduler took %d new jobs: %d jobs, %d tasks", s->wl->njobs - first,
            s->wl->njobs, s->wl->ntasks);
    return 0;
}

int64_t sched_next_timer(const struct master *m)
{
    return role_timers_next(&m->sched.timers);
}

int sched_run_timers(struct master *m, struct hrm_error *err)
{
    struct msched *s = &m->sched;
    if (m->dist)
        return dist_run_timers(m, err);
    /* The passes the due timers fire arm new ones, which wait for the next
     * turn (one pass per turn batches the turn's events). */
    struct role_timer due[16];
    size_t ndue = role_timers_take_due(&s->timers, master_now_us(), due, 16);
    for (size_t i = 0; i < ndue && s->central; i++) {
        s->passes++;
        struct hrm_central_stats before = *hrm_central_stats(s->central);
        int rc = hrm_central_on_timer(s->central, &s->env, due[i].cookie);
        if (rc < 0)
            return hrm_errorf(err, rc, "scheduling pass failed (policy %s)", m->cfg.policy);
        const struct hrm_central_stats *after = hrm_central_stats(s->central);
        if (after->bounded_passes > before.bounded_passes) {
            /* Its next pass is due at once, and waits for the next turn: the clients' requests
             * that came meanwhile are answered first (turn in master.c). */
            s->bounded_passes++;
            hrm_log(HRM_LOG_DEBUG, "scheduling pass: %lld starts, the bound (--max-pass-starts "
                    "%d): the rest in the next turn", (long long)(after->decisions -
                    before.decisions), m->cfg.max_pass_starts);
        }
    }
    if (ndue > 0)
        fgm_after_pass(m);
    return 0;
}

int sched_task_end(struct master *m, struct rjob *j, int32_t idx, bool ok, struct hrm_error *err)
{
    struct msched *s = &m->sched;
    struct rtask *t = &j->tasks[idx];
    int32_t st = t->sched;
    struct hrm_msg end = {.type = HRM_MSG_TASK_END,
                          .status = ok ? HRM_OUTCOME_DONE : HRM_OUTCOME_FAILED,
                          .from = hrm_addr_node(t->node),
                          .job = j->sched,
                          .task = st,
                          .node = t->node,
                          .attempt = t->attempt};
    int rc = hrm_central_on_msg(s->central, &s->env, &end);
    if (rc < 0)
        return hrm_errorf(err, rc, "scheduler refused task_end");
    if (j->sched >= 0)
        fgm_after_task_end(m, j, idx);
    if (j->sched < 0)
        return 0; /* the job ended within the call (jobs_finish synced it) */
    /* Mirror the role's verdict: done, retried, or failed for good (which
     * also fails the job's tasks that had not started). */
    const struct hrm_state *state = hrm_central_state(s->central);
    switch (state->tasks[st].status) {
    case HRM_TASK_DONE:
        task_set_state(m, j, idx, HRM_RTASK_DONE);
        break;
    case HRM_TASK_READY:
        task_set_state(m, j, idx, HRM_RTASK_PENDING);
        break;
    default:
        task_set_state(m, j, idx, HRM_RTASK_FAILED);
        j->failed = true;
        break;
    }
    return 0;
}

int sched_node_down(struct master *m, int32_t node, struct hrm_error *err)
{
    struct msched *s = &m->sched;
    if (m->dist) {
        dist_node_down(m, node);
        return 0;
    }
    if (!s->central || node >= s->cluster->nnodes)
        return 0;
    struct hrm_msg down = {.type = HRM_MSG_NODE_DOWN, .from = HRM_ADDR_CENTRAL, .node = node};
    int rc = hrm_central_on_msg(s->central, &s->env, &down);
    return rc < 0 ? hrm_errorf(err, rc, "scheduler refused node_down") : 0;
}

int sched_node_up(struct master *m, int32_t node, struct hrm_error *err)
{
    struct msched *s = &m->sched;
    if (m->dist) {
        dist_node_up(m, node);
        return 0;
    }
    if (!s->central || node >= s->cluster->nnodes) {
        s->dirty = true;
        return 0;
    }
    struct hrm_msg up = {.type = HRM_MSG_NODE_UP, .from = HRM_ADDR_CENTRAL, .node = node};
    int rc = hrm_central_on_msg(s->central, &s->env, &up);
    return rc < 0 ? hrm_errorf(err, rc, "scheduler refused node_up") : 0;
}

bool sched_node_free(const struct master *m, int32_t node, struct hrm_res *free_out)
{
    const struct msched *s = &m->sched;
    if (m->dist) /* on_nodes counts cpu and memory from the table; hrm-shared's cell has GPUs */
        return dist_node_free(m, node, free_out);
    if (!s->central || node >= s->cluster->nnodes)
        return false;
    *free_out = hrm_central_state(s->central)->nodes[node].free;
    return true;
}
