/* Stream jobs in the master: long-running services whose tasks are restarted, with a crash-loop backoff, until cancelled. */
#include <stdio.h>
#include <string.h>

#include "dist_private.h"
#include "hrm/log.h"
#include "master_private.h"

/*
 * A stream job is a service: its tasks are meant to run until the job is
 * cancelled.  A run that ends, whatever its exit, is restarted; a run lost
 * with its node is placed again at once (jobs_task_lost).  Restarts are not
 * failures: they never use up --max-attempts and never end the job.
 *
 * The backoff keeps a task that exits at once from spinning: the k-th quick
 * exit in a row waits min(1 s * 2^(k-1), 60 s) before the task is placed
 * again; a run that stayed up STREAM_STEADY_US starts the count again (the
 * rule of Kubernetes' CrashLoopBackOff, with its 10 min shortened to 1 min).
 *
 * While a task waits, it is pending in the table but not given to the
 * scheduler (sched_task_live); when its time comes the scheduler is rebuilt
 * with it, as for a newly submitted job, so the policy places it again like
 * any stream task (the hrm policy: its stream queue and simulaterun).  The
 * counters and the time are stored with the task, so a restarted master
 * goes on where it was.
 *
 * Under hrm-shared the task stays with its scheduler instance: when a run
 * ends the master's cell frees its resources at once, and when the backoff
 * is over the instance hears the run was lost and claims the task again
 * (locked, as for every stream job).  A master restart there places a
 * waiting task at once: the rebuilt instances hold only placeable tasks.
 */
#define STREAM_BACKOFF_MIN_US 1000000LL
#define STREAM_BACKOFF_MAX_US 60000000LL
#define STREAM_STEADY_US 60000000LL
#define STREAM_STREAK_MAX 64 /* far past the cap; keeps the counter bounded */

int64_t stream_backoff_us(int32_t streak)
{
    int64_t d = STREAM_BACKOFF_MIN_US;
    for (int32_t i = 1; i < streak && d < STREAM_BACKOFF_MAX_US; i++)
        d *= 2;
    return d < STREAM_BACKOFF_MAX_US ? d : STREAM_BACKOFF_MAX_US;
}

void stream_task_ended(struct master *m, struct rjob *j, int32_t idx)
{
    struct rtask *t = &j->tasks[idx];
    int64_t ran = t->start_us >= 0 && t->end_us > t->start_us ? t->end_us - t->start_us : 0;
    if (ran >= STREAM_STEADY_US)
        t->crash_streak = 0;
    if (t->crash_streak < STREAM_STREAK_MAX)
        t->crash_streak++;
    t->restarts++;
    t->backoff_us = stream_backoff_us(t->crash_streak);
    t->restart_at_us = master_now_us() + t->backoff_us;
    if (t->restart_at_us < m->stream_next_us)
        m->stream_next_us = t->restart_at_us;
    if (m->dist && m->dist->shared)
        shared_stream_ended(m, j, idx);
    task_set_state(m, j, idx, HRM_RTASK_PENDING);
    jobs_persist_task(m, j, idx);
    events_task(m, "task_restarted", j, idx,
                json_pack("{s:i, s:I}", "restarts", t->restarts, "backoff_ms",
                          (json_int_t)(t->backoff_us / 1000)));
    /* Central path: the scheduler still holds the run; the rebuild of this turn leaves it out. */
    if (!m->dist)
        m->sched.dirty = true;
    hrm_log(HRM_LOG_INFO,
            "stream task " HRM_TASK_FMT " on %s ended (exit %d signal %d%s%s): restart %d in %lld ms",
            HRM_TASK_ARGS(j->id, idx, t->attempt), t->node >= 0 ? m->nodes[t->node].name : "?",
            t->exit, t->signal, t->error ? ": " : "", t->error ? t->error : "", t->restarts,
            (long long)(t->backoff_us / 1000));
}

void stream_task_lost(struct rjob *j, int32_t idx)
{
    if (j->kind != HRM_JOB_STREAM)
        return;
    struct rtask *t = &j->tasks[idx];
    t->restarts++;
    t->backoff_us = 0; /* not the task's doing: placed again at once */
    t->restart_at_us = 0;
}

void stream_task_loaded(struct master *m, struct rtask *t)
{
    if (m->dist && stream_task_waiting(t))
        t->restart_at_us = 0; /* hrm-shared: placed at once (see atop) */
    if (stream_task_waiting(t) && t->restart_at_us < m->stream_next_us)
        m->stream_next_us = t->restart_at_us;
}

void stream_housekeeping(struct master *m)
{
    int64_t now = master_now_us();
    if (now < m->stream_next_us)
        return;
    int64_t next = INT64_MAX;
    for (size_t i = 0; i < m->njobs; i++) {
        struct rjob *j = m->jobs[i];
        if (!j || j->kind != HRM_JOB_STREAM || !jobs_live(j))
            continue;
        for (int32_t k = 0; k < j->ntasks; k++) {
            struct rtask *t = &j->tasks[k];
            if (!stream_task_waiting(t))
                continue;
            if (t->state != HRM_RTASK_PENDING || t->restart_at_us <= now) {
                t->restart_at_us = 0;
                jobs_persist_task(m, j, k);
                if (m->dist && m->dist->shared)
                    shared_stream_due(m, j, k);
                else
                    m->sched.dirty = true;
            } else if (t->restart_at_us < next) {
                next = t->restart_at_us;
            }
        }
    }
    m->stream_next_us = next;
}

/* How many tasks asking (cpu, mem, gpus, gpu_share) node rn could run at once. */
static int64_t node_fits(const struct rnode *rn, int64_t cpu, int64_t mem, int64_t gpus,
                         int64_t gpu_share)
{
    int64_t n = cpu > 0 ? (int64_t)rn->cores * 1000 / cpu : INT64_MAX;
    if (mem > 0 && rn->mem / mem < n)
        n = rn->mem / mem;
    if (gpus > 0) {
        /* A share of one GPU (thousandths, 1..999) stacks 1000/share tasks on each GPU. */
        int64_t g = gpu_share > 0 && gpu_share < 1000 ? rn->gpus * (1000 / gpu_share)
                                                      : rn->gpus / gpus;
        if (g < n)
            n = g;
    }
    return n;
}

const char *stream_refuse_spec(const struct master *m, const json_t *spec, char *why, size_t len)
{
    const char *kind = json_string_value(json_object_get(spec, "kind"));
    if (!kind || strcmp(kind, "stream") != 0)
        return NULL;
    int32_t up = jobs_nodes_up(m);
    if (up == 0)
        return NULL; /* nodes may still come: accept and wait, as for any job */
    size_t g;
    const json_t *gr;
    json_array_foreach(json_object_get(spec, "tasks"), g, gr)
    {
        struct group_ask ask = jobs_group_ask(gr);
        int64_t count = ask.count, cap = 0;
        for (int32_t n = 0; n < m->nnodes && cap < count; n++)
            if (m->nodes[n].up)
                cap += node_fits(&m->nodes[n], ask.cpu, ask.mem, ask.gpus, ask.gpu_share);
        if (count > cap) {
            snprintf(why, len,
                     "tasks[%zu].count: a stream job's %lld tasks run all at once, but the %d up "
                     "nodes can run at most %lld such tasks at once",
                     g, (long long)count, up, (long long)cap);
            return why;
        }
    }
    return NULL;
}
