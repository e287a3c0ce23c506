/* What the agent measures each usage period: every task's cpu time and memory (its cgroup, else /proc) and the node's own counters (/proc/stat, /proc/meminfo, /proc/diskstats). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_private.h"
#include "hrm/clock.h"
#include "hrm/procstat.h"
#include "hrm/wire.h"

/* Without a cgroup: the task's main process only (what its children used is not counted
 * until they are reaped, which is why the cgroup comes first). */
static int proc_usage(const struct arun *r, int64_t *cpu_us, int64_t *mem)
{
    struct hrm_proc_stat ps;
    if (r->pid <= 0) /* still starting (the launcher has it): no process to read yet */
        return -1;
    if (hrm_proc_stat_read(r->pid, &ps) < 0)
        return -1;
    *cpu_us = ps.cpu_us;
    *mem = ps.rss_bytes;
    return 0;
}

/* Time the task's main process has waited on a run queue, runnable but not running (us, from
 * /proc/PID/schedstat); -1 when the kernel does not say.  Use plus wait is what it wanted. */
static int64_t proc_wait_us(pid_t pid)
{
    char path[64];
    unsigned long long run, wait;
    snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int n = fscanf(f, "%llu %llu", &run, &wait);
    fclose(f);
    return n == 2 ? (int64_t)(wait / 1000) : -1;
}

/* One task's sample; adds what it used over the interval to the node's tasks' totals. */
static json_t *task_sample(struct agent *a, struct arun *r, int64_t now, int64_t *tasks_cpu,
                           int64_t *tasks_mem)
{
    int64_t cpu, mem, peak;
    const char *source = "cgroup";
    if (cg_usage(a, r, &cpu, &mem, &peak) < 0) {
        source = "proc";
        if (proc_usage(r, &cpu, &mem) < 0)
            return NULL;
        peak = mem > r->rss_peak ? mem : r->rss_peak;
    }
    int64_t interval = now - r->sample_mono_us;
    /* A counter read between two samples never goes back: clamp a re-created group's. */
    int64_t delta = cpu > r->sample_cpu_us ? cpu - r->sample_cpu_us : 0;
    r->cpu_us = cpu;
    r->rss = mem;
    r->rss_peak = peak;
    r->sample_mono_us = now;
    r->sample_cpu_us = cpu;
    *tasks_cpu += delta;
    *tasks_mem += mem;
    json_t *o = json_pack("{s:I, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:s}", "job",
                          (json_int_t)r->job, "task", r->task, "attempt", r->attempt, "cpu_us",
                          (json_int_t)cpu, "rss", (json_int_t)mem, "rss_peak", (json_int_t)peak,
                          "interval_us", (json_int_t)interval, "cpu_delta_us",
                          (json_int_t)delta, "source", source);
    /* The first interval runs from the start, as the process's wait does (the mark is 0). */
    int64_t wait = r->pid > 0 ? proc_wait_us(r->pid) : -1;
    if (wait >= 0 && r->sample_wait_us >= 0 && wait >= r->sample_wait_us)
        json_object_set_new(o, "cpu_wait_us", json_integer(wait - r->sample_wait_us));
    r->sample_wait_us = wait;
    return o;
}

/* CPU time the node spent busy (all CPUs, every process), from the first line of /proc/stat. */
static int64_t node_busy_us(void)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return -1;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 4)
        return -1;
    /* user nice system idle iowait irq softirq steal: all but idle and iowait are busy. */
    unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    return (int64_t)(busy * 1000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK));
}

/* Milliseconds the whole disks (not their partitions, not loop or ram devices) spent doing
 * I/O, summed: /proc/diskstats' io_ticks. */
static int64_t disk_busy_ms(void)
{
    FILE *f = fopen("/proc/diskstats", "re");
    if (!f)
        return -1;
    char line[512], name[64], path[128];
    int64_t sum = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long io_ticks;
        if (sscanf(line, "%*u %*u %63s %*u %*u %*u %*u %*u %*u %*u %*u %*u %llu", name,
                   &io_ticks) != 2)
            continue;
        if (strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0)
            continue;
        struct stat st;
        snprintf(path, sizeof(path), "/sys/block/%s", name);
        if (stat(path, &st) == 0) /* partitions have no entry of their own there */
            sum += (int64_t)io_ticks;
    }
    fclose(f);
    return sum;
}

json_t *usage_message(struct agent *a)
{
    int64_t now = hrm_mono_us(), tasks_cpu = 0, tasks_mem = 0;
    json_t *samples = json_array();
    for (size_t i = 0; i < a->nruns; i++) {
        json_t *s = task_sample(a, &a->runs[i], now, &tasks_cpu, &tasks_mem);
        if (s)
            json_array_append_new(samples, s);
    }
    struct node_counters cur = {.mono_us = now, .busy_us = node_busy_us(),
                                .disk_ms = disk_busy_ms(), .have = true};
    struct node_counters prev = a->node_prev;
    a->node_prev = cur;
    int64_t mem_total = hw_meminfo("MemTotal"), mem_avail = hw_meminfo("MemAvailable");
    json_t *msg = hrm_wire_new(HRM_WIRE_USAGE);
    json_object_set_new(msg, "samples", samples);
    /* The node's sample needs two readings of its counters: the first call only primes them. */
    if (prev.have && cur.busy_us >= 0 && prev.busy_us >= 0 && mem_total > 0) {
        json_t *n = json_pack(
            "{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "interval_us", (json_int_t)(now - prev.mono_us),
            "cpus", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "busy_us",
            (json_int_t)(cur.busy_us > prev.busy_us ? cur.busy_us - prev.busy_us : 0),
            "tasks_cpu_us", (json_int_t)tasks_cpu, "mem_total", (json_int_t)mem_total,
            "mem_used", (json_int_t)(mem_total - mem_avail), "tasks_mem", (json_int_t)tasks_mem);
        if (cur.disk_ms >= 0 && prev.disk_ms >= 0)
            json_object_set_new(n, "disk_busy_ms",
                                json_integer(cur.disk_ms > prev.disk_ms ? cur.disk_ms - prev.disk_ms
                                                                        : 0));
        json_object_set_new(msg, "node", n);
    }
    return msg;
}
