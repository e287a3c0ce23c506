/* Simulated execution (hrm agent --simulate-exec): a task holds its resources for its declared duration without a process, so thousands of agents fit on one host. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "agent_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/log.h"
#include "hrm/units.h"
#include "hrm/wire.h"

/*
 * How long a simulated run lasts (docs/runtime.md, "Simulated agents"), in this order:
 * - `sleep N` (N seconds, a decimal, optionally with an s suffix): the same job runs for real
 *   on a normal agent and for the same time on a simulated one;
 * - the job's env SIMULATE_DURATION, a duration like 250ms or 2s;
 * - otherwise the run ends at once.
 * A command named `false` ends failed (exit 1), anything else succeeds (exit 0).
 */
int64_t simexec_duration_us(const json_t *cmd, const json_t *env)
{
    const char *prog = json_string_value(json_array_get(cmd, 0));
    const char *base = prog ? strrchr(prog, '/') : NULL;
    base = base ? base + 1 : prog;
    if (base && strcmp(base, "sleep") == 0 && json_array_size(cmd) == 2) {
        const char *arg = json_string_value(json_array_get(cmd, 1));
        char *end = NULL;
        double s = arg ? strtod(arg, &end) : NAN;
        if (end && end != arg && (*end == '\0' || strcmp(end, "s") == 0) && s >= 0 && s < 1e9)
            return (int64_t)llround(s * 1e6);
    }
    const char *d = json_string_value(json_object_get(env, "SIMULATE_DURATION"));
    int64_t us;
    if (d && hrm_parse_duration(d, &us) == 0 && us >= 0)
        return us;
    return 0;
}

void simexec_launch(struct agent *a, const json_t *msg, const struct nqs_tag *tag)
{
    struct arun r;
    if (!exec_run_init(a, msg, tag, &r))
        return;
    const json_t *cmd = json_object_get(msg, "cmd");
    r.sim_end_mono_us = r.start_mono_us +
                        simexec_duration_us(cmd, json_object_get(msg, "env"));
    const char *prog = json_string_value(json_array_get(cmd, 0));
    r.sim_exit = prog && strcmp(prog, "false") == 0 ? 1 : 0;
    r.sim_cpu = json_integer_value(json_object_get(msg, "cpu"));
    r.sim_mem = json_integer_value(json_object_get(msg, "mem"));
    exec_run_add(a, &r);
}

int64_t simexec_next_end(const struct agent *a)
{
    int64_t t = INT64_MAX;
    for (size_t i = 0; i < a->nruns; i++)
        if (a->runs[i].sim_end_mono_us < t)
            t = a->runs[i].sim_end_mono_us;
    return t;
}

/* Runs whose time is up end, as exec_reap ends a process that exited. */
void simexec_reap(struct agent *a)
{
    int64_t now = hrm_mono_us();
    for (size_t i = 0; i < a->nruns;) {
        struct arun *r = &a->runs[i];
        if (r->sim_end_mono_us > now) {
            i++;
            continue;
        }
        if (!r->signal)
            r->exit = r->sim_exit;
        r->end_us = agent_now_us();
        /* What a process would have used: its request, for as long as it ran. */
        r->cpu_us = r->sim_cpu * (now - r->start_mono_us) / 1000;
        r->rss = r->rss_peak = r->sim_mem;
        struct arun done = *r;
        a->runs[i] = a->runs[--a->nruns];
        exec_finish(a, &done);
    }
}

/* A kill ends the run now, as SIGTERM would end a process that obeys it. */
void simexec_kill(struct arun *r, int sig)
{
    r->signal = sig;
    r->exit = 0;
    r->sim_end_mono_us = hrm_mono_us();
}

/* The usage message of a simulated node: each run uses what it asked for, and nothing else
 * runs on the node (no foreign load). */
json_t *simexec_usage(struct agent *a)
{
    int64_t now = hrm_mono_us(), tasks_cpu = 0, tasks_mem = 0;
    json_t *samples = json_array();
    for (size_t i = 0; i < a->nruns; i++) {
        struct arun *r = &a->runs[i];
        int64_t interval = now - r->sample_mono_us;
        int64_t delta = r->sim_cpu * interval / 1000;
        r->cpu_us += delta;
        r->rss = r->rss_peak = r->sim_mem;
        r->sample_mono_us = now;
        tasks_cpu += delta;
        tasks_mem += r->sim_mem;
        json_array_append_new(
            samples, json_pack("{s:I, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:s}", "job",
                               (json_int_t)r->job, "task", r->task, "attempt", r->attempt,
                               "cpu_us", (json_int_t)r->cpu_us, "rss", (json_int_t)r->sim_mem,
                               "rss_peak", (json_int_t)r->sim_mem, "interval_us",
                               (json_int_t)interval, "cpu_delta_us", (json_int_t)delta,
                               "source", "proc"));
    }
    json_t *msg = hrm_wire_new(HRM_WIRE_USAGE);
    json_object_set_new(msg, "samples", samples);
    struct node_counters prev = a->node_prev;
    a->node_prev = (struct node_counters){.mono_us = now, .have = true};
    if (prev.have)
        json_object_set_new(
            msg, "node",
            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "interval_us",
                      (json_int_t)(now - prev.mono_us), "cpus", (json_int_t)(a->cpu_milli / 1000),
                      "busy_us", (json_int_t)tasks_cpu, "tasks_cpu_us", (json_int_t)tasks_cpu,
                      "mem_total", (json_int_t)a->mem, "mem_used", (json_int_t)tasks_mem,
                      "tasks_mem", (json_int_t)tasks_mem));
    return msg;
}

/* The heartbeat's load and free memory of a simulated node: its runs' requests. */
void simexec_heartbeat(const struct agent *a, double *load, int64_t *mem_avail)
{
    int64_t cpu = 0, mem = 0;
    for (size_t i = 0; i < a->nruns; i++) {
        cpu += a->runs[i].sim_cpu;
        mem += a->runs[i].sim_mem;
    }
    *load = (double)cpu / 1000.0;
    *mem_avail = a->mem > mem ? a->mem - mem : 0;
}
