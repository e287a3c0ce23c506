/* Agents' usage samples: checked, kept in the job and node tables, and handed to the central role as the simulator hands them (HRM_MSG_TASK_USAGE, HRM_MSG_NODE_USAGE). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hrm/clock.h"
#include "hrm/log.h"
#include "master_private.h"

/* Two samples read a moment apart on the agent measure a little more than the interval's
 * wall time; a sample over capacity by more than this is absurd, not a rounding. */
#define SLACK_PERCENT 10
/* An interval the packed message can carry (hrm_usage_pack) and a sampler would use. */
#define INTERVAL_MAX_US 3600000000LL
/* Complaints about bad samples: at most this many lines per window, then one line with the
 * count of those left unsaid, so a broken or hostile agent cannot flood the log. */
#define COMPLAINTS_PER_WINDOW 10
#define COMPLAINT_WINDOW_US 60000000LL

/* A field that must be a non-negative integer; false (and why) when absent or not one. */
static bool count_field(const json_t *o, const char *key, int64_t *out, char *why, size_t len)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        snprintf(why, len, "'%s' is %s", key,
                 !v                   ? "missing"
                 : json_is_integer(v) ? "negative"
                                      : "not an integer");
        return false;
    }
    *out = (int64_t)json_integer_value(v);
    return true;
}

static int64_t per_interval_milli(int64_t cpu_us, int64_t interval_us)
{
    return (cpu_us * 1000 + interval_us / 2) / interval_us;
}

int usage_task_convert(struct master *m, int32_t node, const json_t *s, struct rjob **j_out,
                       int32_t *idx_out, struct hrm_usage *u, char *why, size_t len)
{
    int64_t job, task, attempt, cpu, rss, peak = 0, interval, delta;
    if (!count_field(s, "job", &job, why, len) || !count_field(s, "task", &task, why, len) ||
        !count_field(s, "attempt", &attempt, why, len) ||
        !count_field(s, "cpu_us", &cpu, why, len) || !count_field(s, "rss", &rss, why, len) ||
        !count_field(s, "interval_us", &interval, why, len) ||
        !count_field(s, "cpu_delta_us", &delta, why, len) ||
        (json_object_get(s, "rss_peak") && !count_field(s, "rss_peak", &peak, why, len)))
        return -EINVAL;
    const struct rnode *rn = &m->nodes[node];
    if (interval == 0 || interval > INTERVAL_MAX_US) {
        snprintf(why, len, "interval_us %lld is not in 1..%lld", (long long)interval,
                 INTERVAL_MAX_US);
        return -EINVAL;
    }
    if (delta > cpu) {
        snprintf(why, len, "cpu_delta_us %lld is above cpu_us %lld", (long long)delta,
                 (long long)cpu);
        return -EINVAL;
    }
    int64_t milli = per_interval_milli(delta, interval);
    if (milli > (int64_t)rn->cores * 10 * (100 + SLACK_PERCENT)) {
        snprintf(why, len, "cpu %lld milli-cores over %lld us is above the node's %d cores",
                 (long long)milli, (long long)interval, rn->cores);
        return -EINVAL;
    }
    if (rss > rn->mem || peak > rn->mem) {
        snprintf(why, len, "memory %lld bytes is above the node's %lld",
                 (long long)(rss > peak ? rss : peak), (long long)rn->mem);
        return -EINVAL;
    }
    struct rjob *j = jobs_find(m, job);
    if (!j || task >= j->ntasks) {
        snprintf(why, len, "no task %lld.%lld", (long long)job, (long long)task);
        return -ENOENT;
    }
    const struct rtask *t = &j->tasks[task];
    if (t->state != HRM_RTASK_RUNNING || t->node != node || t->attempt != attempt) {
        snprintf(why, len, "task %lld.%lld attempt %lld is not running on this node",
                 (long long)job, (long long)task, (long long)attempt);
        return -ESRCH;
    }
    *j_out = j;
    *idx_out = (int32_t)task;
    *u = (struct hrm_usage){.interval_us = interval, .cpu = milli, .mem = rss};
    return 0;
}

int usage_node_convert(const struct rnode *rn, const json_t *s, struct hrm_usage *u,
                       int64_t *disk_permille, char *why, size_t len)
{
    int64_t interval, cpus, busy, tasks_cpu, mem_total, mem_used, tasks_mem, disk = 0;
    (void)rn;
    if (!count_field(s, "interval_us", &interval, why, len) ||
        !count_field(s, "cpus", &cpus, why, len) || !count_field(s, "busy_us", &busy, why, len) ||
        !count_field(s, "tasks_cpu_us", &tasks_cpu, why, len) ||
        !count_field(s, "mem_total", &mem_total, why, len) ||
        !count_field(s, "mem_used", &mem_used, why, len) ||
        !count_field(s, "tasks_mem", &tasks_mem, why, len) ||
        (json_object_get(s, "disk_busy_ms") && !count_field(s, "disk_busy_ms", &disk, why, len)))
        return -EINVAL;
    /* The host's own figures bound the sample, not what the node declared (--cpus, --mem):
     * what is not an hrm task may use the whole host. */
    if (interval == 0 || interval > INTERVAL_MAX_US || cpus == 0 || cpus > 65536) {
        snprintf(why, len, "interval_us %lld or cpus %lld out of range", (long long)interval,
                 (long long)cpus);
        return -EINVAL;
    }
    if (busy > interval * cpus / 100 * (100 + SLACK_PERCENT)) {
        snprintf(why, len, "busy_us %lld over %lld us is above the host's %lld CPUs",
                 (long long)busy, (long long)interval, (long long)cpus);
        return -EINVAL;
    }
    if (mem_used > mem_total || tasks_mem > mem_total) {
        snprintf(why, len, "memory used %lld bytes is above the host's %lld",
                 (long long)(mem_used > tasks_mem ? mem_used : tasks_mem), (long long)mem_total);
        return -EINVAL;
    }
    /* Foreign load: what the node used that its hrm tasks did not. */
    int64_t foreign_cpu = busy > tasks_cpu ? busy - tasks_cpu : 0;
    *u = (struct hrm_usage){.interval_us = interval,
                            .cpu = per_interval_milli(foreign_cpu, interval),
                            .mem = mem_used > tasks_mem ? mem_used - tasks_mem : 0};
    *disk_permille = disk * 1000000 / interval; /* ms over us: x1000 for per mille */
    return 0;
}

void usage_host_foreign(struct master *m, int32_t node, const json_t *s, struct hrm_usage *u)
{
    struct rnode *rn = &m->nodes[node];
    int64_t iv = u->interval_us;
    int64_t busy = per_interval_milli(json_integer_value(json_object_get(s, "busy_us")), iv);
    rn->tasks_cpu_milli =
        per_interval_milli(json_integer_value(json_object_get(s, "tasks_cpu_us")), iv);
    rn->tasks_mem = json_integer_value(json_object_get(s, "tasks_mem"));
    int64_t mem_used = json_integer_value(json_object_get(s, "mem_used"));
    int64_t sib_cpu = 0, sib_mem = 0, cores = rn->cores;
    /* Its host's ring only: with thousands of nodes a walk of all of them per sample is the
     * master's largest cost (docs/benchmarks.md, "Fleet"). */
    int32_t steps = 0; /* bounded: a ring is at most every node */
    for (int32_t n = rn->host[0] ? rn->host_next : -1; n >= 0 && n < m->nnodes && n != node && steps++ < m->nnodes;
         n = m->nodes[n].host_next) {
        const struct rnode *o = &m->nodes[n];
        if (!o->up || strcmp(o->host, rn->host) != 0) /* (a table built without its rings) */
            continue;
        sib_cpu += o->tasks_cpu_milli;
        sib_mem += o->tasks_mem;
        cores += o->cores;
    }
    if (cores == rn->cores)
        return; /* alone on its host: what the agent measured is the node's own */
    /* Several agents on one host (hrm up): each host counter holds the others' tasks too.
     * What none of them runs is shared among them by their declared cores. */
    int64_t fcpu = busy - rn->tasks_cpu_milli - sib_cpu;
    int64_t fmem = mem_used - rn->tasks_mem - sib_mem;
    u->cpu = fcpu > 0 ? fcpu * rn->cores / cores : 0;
    u->mem = fmem > 0 ? fmem * rn->cores / cores : 0;
}

void usage_task_msg(const struct rjob *j, const struct rtask *t, int32_t node,
                    const struct hrm_usage *u, struct hrm_msg *out)
{
    *out = (struct hrm_msg){.type = HRM_MSG_TASK_USAGE,
                            .from = hrm_addr_node(node),
                            .job = j->sched,
                            .task = t->sched,
                            .node = node,
                            .attempt = t->attempt};
    hrm_usage_pack(out, u);
}

void usage_node_msg(int32_t node, const struct hrm_usage *u, struct hrm_msg *out)
{
    *out = (struct hrm_msg){.type = HRM_MSG_NODE_USAGE,
                            .from = hrm_addr_node(node),
                            .job = -1,
                            .task = -1,
                            .node = node,
                            .attempt = -1};
    hrm_usage_pack(out, u);
}

static void complain(struct master *m, int32_t node, const char *what, const char *why)
{
    struct usage_complaints *c = &m->usage_complaints;
    int64_t now = hrm_mono_us();
    if (now - c->window_start_us >= COMPLAINT_WINDOW_US) {
        if (c->unsaid > 0)
            hrm_log(HRM_LOG_WARNING, "%lld more bad usage samples dropped in the last minute",
                    (long long)c->unsaid);
        *c = (struct usage_complaints){.window_start_us = now};
    }
    if (c->said >= COMPLAINTS_PER_WINDOW) {
        c->unsaid++;
        return;
    }
    c->said++;
    hrm_log(HRM_LOG_WARNING, "bad usage sample from node %s: %s: %s; dropped%s",
            m->nodes[node].name, what, why,
            c->said == COMPLAINTS_PER_WINDOW ? " (more this minute are dropped silently)" : "");
}

/* Hands a sample to the central role; only the central path has one (distributed
 * scheduling's instances learn nothing from usage). */
static void to_central(struct master *m, const struct hrm_msg *msg)
{
    struct msched *s = &m->sched;
    if (m->dist || !s->central || msg->node >= s->cluster->nnodes ||
        (msg->type == HRM_MSG_TASK_USAGE && (msg->job < 0 || msg->task < 0)))
        return;
    struct hrm_usage u;
    hrm_usage_unpack(msg, &u);
    hrm_log(HRM_LOG_DEBUG,
            "usage to the policy: %s node %d task %d attempt %d: cpu %lld milli-cores, "
            "memory %lld bytes over %lld us",
            hrm_msg_name(msg->type), msg->node, msg->task, msg->attempt, (long long)u.cpu,
            (long long)u.mem, (long long)u.interval_us);
    int rc = hrm_central_on_msg(s->central, &s->env, msg);
    if (rc < 0)
        hrm_log(HRM_LOG_ERR, "the scheduler refused a usage sample (%s): %d",
                hrm_msg_name(msg->type), rc);
}

void usage_on_message(struct master *m, int32_t node, const json_t *msg)
{
    char why[200], what[64];
    size_t i;
    const json_t *e;
    const json_t *samples = json_object_get(msg, "samples");
    json_array_foreach(samples, i, e)
    {
        struct rjob *j;
        int32_t idx;
        struct hrm_usage u;
        bool ok = json_is_object(e) && usage_task_convert(m, node, e, &j, &idx, &u, why,
                                                           sizeof(why)) == 0;
        metrics_usage_sample(&m->counters, false, ok);
        if (!json_is_object(e)) {
            complain(m, node, "sample", "not an object");
            continue;
        }
        if (!ok) {
            snprintf(what, sizeof(what), "task sample %zu", i);
            complain(m, node, what, why);
            continue;
        }
        struct rtask *t = &j->tasks[idx];
        t->cpu_us = (int64_t)json_integer_value(json_object_get(e, "cpu_us"));
        t->rss = u.mem;
        int64_t peak = (int64_t)json_integer_value(json_object_get(e, "rss_peak"));
        t->rss_peak = peak > t->rss_peak ? peak : t->rss_peak;
        struct hrm_msg hm;
        usage_task_msg(j, t, node, &u, &hm);
        to_central(m, &hm);
        fgm_sample(m, j, idx, &u, json_integer_value(json_object_get(e, "cpu_wait_us")));
    }
    const json_t *n = json_object_get(msg, "node");
    if (!n)
        return;
    struct rnode *rn = &m->nodes[node];
    struct hrm_usage u;
    int64_t disk;
    bool ok = json_is_object(n) && usage_node_convert(rn, n, &u, &disk, why, sizeof(why)) == 0;
    metrics_usage_sample(&m->counters, true, ok);
    if (!ok) {
        complain(m, node, "node sample", json_is_object(n) ? why : "not an object");
        return;
    }
    usage_host_foreign(m, node, n, &u);
    rn->foreign_cpu = u.cpu;
    rn->foreign_mem = u.mem;
    rn->disk_busy_permille = disk;
    struct hrm_msg hm;
    usage_node_msg(node, &u, &hm);
    to_central(m, &hm);
}
