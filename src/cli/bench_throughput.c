/* hrm bench throughput: a local cluster's tasks/s, submit-to-start latency, CPU per task and master memory per queued task, beside a bare spawn loop. */
#define _GNU_SOURCE 1 /* mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "hrm/alloc.h"
#include "hrm/metrics.h"
#include "hrm/procstat.h"
#include "hrm/rng.h"
#include "hrm/wire.h"
#include "up.h"

/*
 * What is measured, and how (docs/benchmarks.md, "Runtime throughput"):
 *
 * - bare spawn: loops of posix_spawn + waitpid of the task command, one loop,
 *   two side by side and one per agent (each loop its own process), before
 *   the cluster starts: the machine's limit for launching that command.
 * - throughput: from the first submission to the last completion seen by the
 *   client (job_done), for one job of N tasks (--count N) and for N one-task
 *   jobs submitted over one connection without waiting for each answer.
 * - latency: one one-task job at a time on the idle cluster; submit is the
 *   client's clock just before sending, start is the agent's clock when the
 *   command has been executed (execve returned in the child), read back from
 *   the job's record.  Both clocks are this host's CLOCK_REALTIME.  A second
 *   series runs Slurm's probe, bash -c 'echo $EPOCHREALTIME', and takes start
 *   from what the task prints (latency_bash.*).
 * - CPU: utime + stime of the master and agent processes (all their threads,
 *   ZeroMQ's included) from /proc/PID/stat over the throughput window.  The
 *   tasks' own CPU (the agents' reaped children: cutime + cstime) is reported
 *   apart, as is this client's; neither is in the per-task figure.
 * - memory: the master's VmRSS before and after queueing Q tasks (one job)
 *   and J one-task jobs behind work that holds every slot.
 * - short tasks (--short-jobs J): J jobs of 100 tasks of `sleep 0.1`,
 *   Poisson arrivals (seed 1, or --arrivals FILE with one offset in seconds
 *   per line) at --short-rate tasks/s; response = job end - submission.
 */

#define WAIT_CAP_S 600.0

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall clock (compared with the agents' timestamps) and monotonic (intervals). */
static double wall_s(void) { return clock_s(CLOCK_REALTIME); }
static double mono_s(void) { return clock_s(CLOCK_MONOTONIC); }

static void nap_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

struct opts {
    long long tasks, jobs, lat_runs, queue, queue_jobs, bare, short_jobs;
    double short_rate;
    const char *arrivals;
    bool keep_output, only_bare;
    struct up_cluster up;
    char *const *cmd;
    int ncmd;
    char tmp_state[256];
};

/* ---- /proc accounting ---- */

struct pcpu {
    double self_s, children_s; /* utime+stime, cutime+cstime */
};

static int proc_cpu(pid_t pid, struct pcpu *out)
{
    struct hrm_proc_stat ps;
    if (hrm_proc_stat_read(pid, &ps) < 0)
        return -1;
    out->self_s = (double)ps.cpu_us / 1e6;
    out->children_s = (double)ps.children_cpu_us / 1e6;
    return 0;
}


struct cpu_snap {
    double master, agents, scheds, tasks, client;
};

static void cpu_snap(const struct up_cluster *u, struct cpu_snap *s)
{
    struct pcpu c;
    memset(s, 0, sizeof(*s));
    if (proc_cpu(u->master, &c) == 0)
        s->master = c.self_s;
    for (int i = 0; i < u->nodes; i++)
        if (proc_cpu(u->agents[i], &c) == 0) {
            s->agents += c.self_s;
            s->tasks += c.children_s;
        }
    for (int i = 0; i < u->sched_procs; i++)
        if (proc_cpu(u->scheds[i], &c) == 0)
            s->scheds += c.self_s;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    s->client = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void cpu_report(const char *name, const struct cpu_snap *a, const struct cpu_snap *b,
                       long long n)
{
    double m = b->master - a->master, g = b->agents - a->agents, sc = b->scheds - a->scheds;
    printf("BENCH throughput.%s.cpu_ms_per_task %.3f ms\n", name, (m + g + sc) * 1e3 / (double)n);
    if (sc > 0) /* hrm sched processes, when the policy's instances run there */
        printf("BENCH throughput.%s.scheds_cpu_ms_per_task %.3f ms\n", name, sc * 1e3 / (double)n);
    printf("BENCH throughput.%s.master_cpu_ms_per_task %.3f ms\n", name, m * 1e3 / (double)n);
    printf("BENCH throughput.%s.agents_cpu_ms_per_task %.3f ms\n", name, g * 1e3 / (double)n);
    printf("BENCH throughput.%s.tasks_cpu_ms_per_task %.3f ms\n", name,
           (b->tasks - a->tasks) * 1e3 / (double)n);
    printf("BENCH throughput.%s.client_cpu_ms_per_task %.3f ms\n", name,
           (b->client - a->client) * 1e3 / (double)n);
}

/* ---- bare spawn ---- */

/* One loop: spawn the command, wait for it, n times.  0 or -1. */
static int bare_loop(char *const *cmd, long long n)
{
    extern char **environ;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    int rc = 0;
    for (long long i = 0; i < n && !interrupted && rc == 0; i++) {
        pid_t pid;
        if (posix_spawn(&pid, cmd[0], &fa, NULL, cmd, environ) != 0 || waitpid(pid, NULL, 0) != pid)
            rc = -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* k loops side by side, in k processes (as k agents would), n spawns in all:
 * spawns per second of wall time, or -1. */
static double bare_rate(char *const *cmd, long long n, int k)
{
    pid_t *w = hrm_calloc((size_t)k, sizeof(*w));
    double t0 = mono_s();
    for (int i = 0; i < k; i++) {
        if ((w[i] = fork()) == 0)
            _exit(bare_loop(cmd, n / k + (i < n % k)) == 0 ? 0 : 1);
    }
    bool ok = true;
    for (int i = 0; i < k; i++) {
        int st = 1;
        ok &= w[i] > 0 && waitpid(w[i], &st, 0) == w[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    double dt = mono_s() - t0;
    hrm_free(w);
    return ok && !interrupted ? (double)n / dt : -1;
}

/* ---- requests ---- */

static json_t *task_group(const struct opts *o, char *const *cmd, int ncmd, long long count)
{
    json_t *argv = json_array();
    for (int i = 0; i < ncmd; i++)
        json_array_append_new(argv, json_string(cmd[i]));
    json_t *g = json_pack("{s:o, s:I, s:s, s:s}", "cmd", argv, "count", (json_int_t)count,
                          "cpus", "1", "cwd", "/tmp");
    /* Output to /dev/null unless --keep-output, as the Slurm runs use -o /dev/null. */
    if (!o->keep_output)
        json_object_set_new(g, "output", json_false());
    return g;
}

static json_t *submit_req(const struct opts *o, char *const *cmd, int ncmd, long long count,
                          const char *name)
{
    /* No "user": the jobs run as the client key's account (keys/authorized). */
    json_t *job = json_pack("{s:s, s:[o]}", "name", name, "tasks", task_group(o, cmd, ncmd, count));
    json_t *req = hrm_wire_new(HRM_WIRE_SUBMIT);
    json_object_set_new(req, "job", job);
    return req;
}

/* Receives replies until every id in [first, first+n) has answered with a
 * reply of type want; ids[] records the "id" field of each (may be NULL).
 * Returns the number answered. */
static long long collect(struct client *c, long long first, long long n, const char *want,
                         long long *ids, double cap_s)
{
    long long got = 0;
    double end = mono_s() + cap_s;
    while (got < n && mono_s() < end && !interrupted) {
        json_t *r = client_recv(c, 0.2);
        if (!r)
            continue;
        long long req = json_integer_value(json_object_get(r, "req"));
        const char *type = json_string_value(json_object_get(r, "type"));
        if (type && strcmp(type, "error") == 0) {
            fprintf(stderr, "hrm bench throughput: %s\n",
                    json_string_value(json_object_get(r, "message")));
            json_decref(r);
            return got;
        }
        if (req >= first && req < first + n && type && strcmp(type, want) == 0) {
            if (ids)
                ids[req - first] = json_integer_value(json_object_get(r, "id"));
            got++;
        }
        json_decref(r);
    }
    return got;
}

/* Pipelines one request per id and waits for all the answers. */
static long long call_many(struct client *c, const long long *ids, long long n, int type,
                           const char *want)
{
    long long first = -1;
    for (long long i = 0; i < n; i++) {
        json_t *req = hrm_wire_new(type);
        json_object_set_new(req, "id", json_integer(ids[i]));
        long long id = client_send(c, req);
        json_decref(req);
        if (id < 0)
            return 0;
        if (first < 0)
            first = id;
    }
    return n ? collect(c, first, n, want, NULL, WAIT_CAP_S) : 0;
}

/* Sends a submission without waiting for its answer; returns the request id
 * (the first one is kept in *first) or -1. */
static long long submit_async(struct client *c, const struct opts *o, char *const *cmd, int ncmd,
                              long long count, const char *name, long long *first)
{
    json_t *req = submit_req(o, cmd, ncmd, count, name);
    long long id = client_send(c, req);
    json_decref(req);
    if (id >= 0 && *first < 0)
        *first = id;
    return id;
}

static json_t *call(struct client *c, json_t *req)
{
    int code;
    json_t *r = client_call(c, req, &code);
    json_decref(req);
    return r;
}

static long long submit_one(struct client *c, const struct opts *o, char *const *cmd, int ncmd,
                            long long count, const char *name)
{
    json_t *r = call(c, submit_req(o, cmd, ncmd, count, name));
    long long id = r ? json_integer_value(json_object_get(r, "id")) : -1;
    json_decref(r);
    return id;
}

static bool wait_job(struct client *c, long long id)
{
    long long ids[1] = {id};
    return call_many(c, ids, 1, HRM_WIRE_WAIT, "job_done") == 1;
}

/* ---- the measurements ---- */

static int run_count(struct client *c, struct opts *o)
{
    struct cpu_snap a, b;
    cpu_snap(&o->up, &a);
    double t0 = mono_s();
    long long id = submit_one(c, o, o->cmd, o->ncmd, o->tasks, "count");
    if (id < 0 || !wait_job(c, id))
        return -1;
    double dt = mono_s() - t0;
    cpu_snap(&o->up, &b);
    printf("BENCH throughput.count.tasks %lld tasks\n", o->tasks);
    printf("BENCH throughput.count.wall_s %.3f s\n", dt);
    printf("BENCH throughput.count.tasks_per_s %.1f tasks/s\n", (double)o->tasks / dt);
    cpu_report("count", &a, &b, o->tasks);
    return 0;
}

static int run_jobs(struct client *c, struct opts *o)
{
    long long n = o->jobs;
    long long *ids = hrm_calloc((size_t)n, sizeof(*ids));
    struct cpu_snap a, b;
    cpu_snap(&o->up, &a);
    double t0 = mono_s();
    long long first = -1;
    for (long long i = 0; i < n; i++)
        if (submit_async(c, o, o->cmd, o->ncmd, 1, "one", &first) < 0)
            break;
    long long got = collect(c, first, n, "submitted", ids, WAIT_CAP_S);
    double t_sub = mono_s() - t0;
    long long done = got == n ? call_many(c, ids, n, HRM_WIRE_WAIT, "job_done") : 0;
    double dt = mono_s() - t0;
    cpu_snap(&o->up, &b);
    hrm_free(ids);
    if (done != n) {
        fprintf(stderr, "hrm bench throughput: %lld of %lld jobs submitted, %lld done\n", got, n,
                done);
        return -1;
    }
    printf("BENCH throughput.jobs.jobs %lld jobs\n", n);
    printf("BENCH throughput.jobs.submit_per_s %.1f jobs/s\n", (double)n / t_sub);
    printf("BENCH throughput.jobs.wall_s %.3f s\n", dt);
    printf("BENCH throughput.jobs.tasks_per_s %.1f tasks/s\n", (double)n / dt);
    cpu_report("jobs", &a, &b, n);
    return 0;
}

/*
 * Single tasks one at a time.  With epoch, the probe is Slurm's srun probe,
 * `bash -c 'echo $EPOCHREALTIME'`, its output kept and read back: start is
 * then the task's own clock once bash runs, as in the Slurm figures.
 */
static int run_latency(struct client *c, struct opts *o, bool epoch)
{
    char *bash_cmd[] = {"/bin/bash", "-c", "echo $EPOCHREALTIME", NULL};
    char *const *cmd = epoch ? bash_cmd : o->cmd;
    int ncmd = epoch ? 3 : o->ncmd;
    bool keep = o->keep_output;
    o->keep_output = keep || epoch;
    long long n = o->lat_runs;
    double *start = hrm_calloc((size_t)n, sizeof(double)), *ack = hrm_calloc((size_t)n, sizeof(double));
    double *done = hrm_calloc((size_t)n, sizeof(double));
    long long k = 0;
    for (; k < n && !interrupted; k++) {
        nap_s(0.05);
        double t0 = wall_s();
        long long id = submit_one(c, o, cmd, ncmd, 1, "lat");
        double t1 = wall_s();
        if (id < 0 || !wait_job(c, id))
            break;
        double t2 = wall_s(), s = 0;
        json_t *req = hrm_wire_new(epoch ? HRM_WIRE_LOGS : HRM_WIRE_JOB);
        json_object_set_new(req, "id", json_integer(id));
        json_t *r = call(c, req);
        if (!r)
            break;
        if (epoch) {
            s = atof(json_string_value(json_object_get(r, "data")) ?: "0");
        } else {
            json_t *t = json_array_get(json_object_get(json_object_get(r, "job"), "tasks"), 0);
            s = (double)json_integer_value(json_object_get(t, "start_us")) / 1e6;
        }
        json_decref(r);
        if (!(s > 0))
            break;
        start[k] = s - t0;
        ack[k] = t1 - t0;
        done[k] = t2 - t0;
    }
    o->keep_output = keep;
    int rc = k == n ? 0 : -1;
    const char *what = epoch ? "latency_bash" : "latency";
    if (k == n) {
        printf("BENCH throughput.%s.runs %lld runs\n", what, n);
        printf("BENCH throughput.%s.ack_p50_ms %.3f ms\n", what,
               hrm_percentile(ack, (size_t)n, 50) * 1e3);
        printf("BENCH throughput.%s.start_p50_ms %.3f ms\n", what,
               hrm_percentile(start, (size_t)n, 50) * 1e3);
        printf("BENCH throughput.%s.start_p95_ms %.3f ms\n", what,
               hrm_percentile(start, (size_t)n, 95) * 1e3);
        printf("BENCH throughput.%s.done_p50_ms %.3f ms\n", what,
               hrm_percentile(done, (size_t)n, 50) * 1e3);
        printf("BENCH throughput.%s.done_p95_ms %.3f ms\n", what,
               hrm_percentile(done, (size_t)n, 95) * 1e3);
    } else {
        fprintf(stderr, "hrm bench throughput: a %s probe failed\n", what);
    }
    hrm_free(start);
    hrm_free(ack);
    hrm_free(done);
    return rc;
}

/* Response of each job from its summary in `jobs --all` (submit_us, end_us). */
static int run_short(struct client *c, struct opts *o)
{
    long long n = o->short_jobs;
    double *at = hrm_calloc((size_t)n, sizeof(double));
    /* As the Slurm driver does: the first job at once, then exponential gaps. */
    struct hrm_rng rng;
    hrm_rng_seed(&rng, 1);
    for (long long i = 1; i < n; i++)
        at[i] = at[i - 1] + hrm_rng_exp(&rng, 100.0 / o->short_rate);
    if (o->arrivals) {
        FILE *f = fopen(o->arrivals, "re");
        long long k = 0;
        while (f && k < n && fscanf(f, "%lf", &at[k]) == 1)
            k++;
        if (f)
            fclose(f);
        if (k < n) {
            fprintf(stderr, "hrm bench throughput: %s: expected %lld arrival offsets\n",
                    o->arrivals, n);
            hrm_free(at);
            return -1;
        }
    }
    char *sleep_cmd[] = {"/bin/sleep", "0.1", NULL};
    long long *ids = hrm_calloc((size_t)n, sizeof(*ids));
    struct cpu_snap a, b;
    cpu_snap(&o->up, &a);
    double t0 = mono_s(), lag = 0;
    long long first = -1, got = 0;
    for (long long i = 0; i < n && !interrupted; i++) {
        double due = t0 + at[i];
        while (mono_s() < due) {
            /* acks arriving meanwhile are counted below */
            double left = due - mono_s();
            nap_s(left > 0.002 ? 0.002 : (left > 0 ? left : 0));
        }
        if (mono_s() - due > lag)
            lag = mono_s() - due;
        if (submit_async(c, o, sleep_cmd, 2, 100, "short", &first) < 0)
            break;
    }
    double t_sub = mono_s() - t0;
    got = collect(c, first, n, "submitted", ids, WAIT_CAP_S);
    long long done = got == n ? call_many(c, ids, n, HRM_WIRE_WAIT, "job_done") : 0;
    double dt = mono_s() - t0;
    cpu_snap(&o->up, &b);
    int rc = -1;
    json_t *req = hrm_wire_new(HRM_WIRE_JOBS);
    json_object_set_new(req, "all", json_true());
    json_t *r = done == n ? call(c, req) : (json_decref(req), NULL);
    if (r) {
        double *resp = hrm_calloc((size_t)n, sizeof(double));
        size_t k = 0, i;
        const json_t *j;
        json_array_foreach(json_object_get(r, "jobs"), i, j)
        {
            long long id = json_integer_value(json_object_get(j, "id"));
            bool ours = false;
            for (long long q = 0; q < n && !ours; q++)
                ours = ids[q] == id;
            if (!ours || k >= (size_t)n)
                continue;
            resp[k++] = (double)(json_integer_value(json_object_get(j, "end_us")) -
                                 json_integer_value(json_object_get(j, "submit_us"))) /
                        1e6;
        }
        if (k == (size_t)n) {
            printf("BENCH throughput.short.jobs %lld jobs\n", n);
            printf("BENCH throughput.short.offered_tasks_per_s %.1f tasks/s\n", o->short_rate);
            printf("BENCH throughput.short.submit_span_s %.3f s\n", t_sub);
            printf("BENCH throughput.short.max_submit_lag_s %.3f s\n", lag);
            printf("BENCH throughput.short.resp_mean_s %.3f s\n", hrm_mean(resp, k));
            printf("BENCH throughput.short.resp_p50_s %.3f s\n", hrm_percentile(resp, k, 50));
            printf("BENCH throughput.short.resp_p95_s %.3f s\n", hrm_percentile(resp, k, 95));
            printf("BENCH throughput.short.achieved_tasks_per_s %.1f tasks/s\n",
                   (double)(n * 100) / dt);
            cpu_report("short", &a, &b, n * 100);
            rc = 0;
        }
        hrm_free(resp);
        json_decref(r);
    }
    if (rc < 0)
        fprintf(stderr, "hrm bench throughput: short tasks: %lld of %lld jobs done\n", done, n);
    hrm_free(ids);
    hrm_free(at);
    return rc;
}

/* Holds every slot with sleeping tasks, then queues work behind them. */
static int run_memory(struct client *c, struct opts *o)
{
    long long slots = (long long)o->up.nodes * atoll(o->up.cpus);
    char *hold[] = {"/bin/sleep", "3600", NULL};
    /* Tagged with the state folder, so that a check for holding tasks left behind finds this
     * run's, not another cluster's on the same host. */
    json_t *sub = submit_req(o, hold, 2, slots, "hold");
    json_object_set_new(json_array_get(json_object_get(json_object_get(sub, "job"), "tasks"), 0),
                        "env", json_pack("{s:s}", "BENCH_THROUGHPUT_STATE", o->up.state));
    json_t *ans = call(c, sub);
    long long blocker = ans ? json_integer_value(json_object_get(ans, "id")) : -1;
    json_decref(ans);
    if (blocker < 0)
        return -1;
    double end = mono_s() + 60;
    long long running = 0;
    while (running < slots && mono_s() < end && !interrupted) {
        nap_s(0.1);
        json_t *req = hrm_wire_new(HRM_WIRE_JOB);
        json_object_set_new(req, "id", json_integer(blocker));
        json_t *r = call(c, req);
        running = r ? json_integer_value(json_object_get(json_object_get(r, "job"), "running")) : 0;
        json_decref(r);
    }
    if (running < slots) {
        fprintf(stderr, "hrm bench throughput: the %lld holding tasks did not all start\n", slots);
        return -1;
    }
    nap_s(0.3);
    long long r0 = hrm_proc_rss_kb(o->up.master);
    if (submit_one(c, o, o->cmd, o->ncmd, o->queue, "queued") < 0)
        return -1;
    nap_s(0.3);
    long long r1 = hrm_proc_rss_kb(o->up.master);
    long long first = -1;
    for (long long i = 0; i < o->queue_jobs; i++)
        if (submit_async(c, o, o->cmd, o->ncmd, 1, "queued1", &first) < 0)
            return -1;
    if (collect(c, first, o->queue_jobs, "submitted", NULL, WAIT_CAP_S) != o->queue_jobs)
        return -1;
    nap_s(0.3);
    long long r2 = hrm_proc_rss_kb(o->up.master);
    printf("BENCH throughput.memory.master_rss_idle_kib %lld KiB\n", r0);
    printf("BENCH throughput.memory.queued_tasks %lld tasks\n", o->queue);
    printf("BENCH throughput.memory.rss_per_queued_task %.1f bytes\n",
           (double)(r1 - r0) * 1024.0 / (double)o->queue);
    printf("BENCH throughput.memory.queued_jobs %lld jobs\n", o->queue_jobs);
    printf("BENCH throughput.memory.rss_per_queued_job %.1f bytes\n",
           (double)(r2 - r1) * 1024.0 / (double)o->queue_jobs);
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hrm bench throughput [options] [-- CMD ARGS...]\n\n"
            "Starts a local cluster (as hrm up does) and measures: the bare spawn rate of CMD\n"
            "(default /bin/true) in one loop, two loops side by side and one per agent; tasks/s from the first submit\n"
            "to the last completion for one job of N tasks and for N one-task jobs; submit\n"
            "-> start latency of single tasks on the idle cluster; CPU of the master and\n"
            "agents per task; the master's memory per queued task and per queued job.\n\n"
            "options:\n"
            "  --tasks N        tasks of the --count job (default 5000)\n"
            "  --jobs N         one-task jobs (default 5000; 0 skips)\n"
            "  --latency N      latency probes (default 50)\n"
            "  --bare N         bare spawns per mode (default 5000; 0 skips)\n"
            "  --only-bare      measure the bare spawn rates only (no cluster)\n"
            "  --queue Q        tasks queued for the memory figure (default 100000; 0 skips)\n"
            "  --queue-jobs J   one-task jobs queued for the memory figure (default 10000)\n"
            "  --short-jobs J   short-task load: J jobs x 100 x sleep 0.1 (default 0: skip)\n"
            "  --short-rate R   offered tasks/s of the short-task load (default 1024)\n"
            "  --arrivals FILE  short-task arrival offsets in seconds, one per line\n"
            "  --nodes N        agents (default 4)\n"
            "  --cpus N         CPUs each agent declares (default 32)\n"
            "  --gpus N         virtual GPUs each agent declares (default 0; the hrm\n"
            "                   policy then binds GPU units and lends their cores)\n"
            "  --cgroup         let agents limit tasks with cgroups (default: off, as\n"
            "                   Slurm's task/none in docs/benchmarks.md)\n"
            "  --keep-output    capture the tasks' output in files (default: /dev/null, as\n"
            "                   the Slurm runs' -o /dev/null)\n"
            "  --state DIR      state folder (default: a new folder under /tmp, removed)\n"
            "  --log-level L    daemons' log level (default notice)\n"
            "  --policy NAME    the master's policy (default drf; a distributed one such as\n"
            "                   dhrm-batch measures the execution-queue path)\n"
            "  --param K=V      a policy parameter (repeatable, at most 8)\n"
            "  --sched-procs N  a distributed policy's instances in N hrm sched processes\n"
            "  -h, --help       this help\n");
}

void bench_remove_tree(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

int bench_throughput(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"tasks", required_argument, NULL, 't'},  {"jobs", required_argument, NULL, 'j'},
        {"latency", required_argument, NULL, 'l'}, {"bare", required_argument, NULL, 'b'},
        {"queue", required_argument, NULL, 'q'},  {"queue-jobs", required_argument, NULL, 'Q'},
        {"short-jobs", required_argument, NULL, 'S'}, {"short-rate", required_argument, NULL, 'R'},
        {"arrivals", required_argument, NULL, 'A'}, {"nodes", required_argument, NULL, 'n'},
        {"cpus", required_argument, NULL, 'c'},   {"cgroup", no_argument, NULL, 'C'},
        {"gpus", required_argument, NULL, 'G'},
        {"state", required_argument, NULL, 's'},  {"log-level", required_argument, NULL, 'L'},
        {"keep-output", no_argument, NULL, 'K'}, {"only-bare", no_argument, NULL, 'B'},
        {"policy", required_argument, NULL, 'p'}, {"param", required_argument, NULL, 'P'},
        {"sched-procs", required_argument, NULL, 'X'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    struct opts o = {.tasks = 5000, .jobs = 5000, .lat_runs = 50, .queue = 100000,
                     .queue_jobs = 10000, .bare = 5000, .short_rate = 1024};
    up_init(&o.up);
    o.up.nodes = 4;
    o.up.cpus = "32";
    o.up.mem = "64G";
    o.up.no_cgroup = true;
    o.up.state = NULL;
    int ch;
    optind = 1;
    int li = -1;
    while ((ch = getopt_long(argc, argv, "+h", lopts, &li)) != -1) {
        long long *target = NULL, v;
        switch (ch) {
        case 't': target = &o.tasks; break;
        case 'j': target = &o.jobs; break;
        case 'l': target = &o.lat_runs; break;
        case 'b': target = &o.bare; break;
        case 'q': target = &o.queue; break;
        case 'Q': target = &o.queue_jobs; break;
        case 'S': target = &o.short_jobs; break;
        case 'R':
        {
            char *end;
            o.short_rate = strtod(optarg, &end);
            if (end == optarg || *end || !(o.short_rate > 0) || !isfinite(o.short_rate)) {
                fprintf(stderr, "hrm bench throughput: --short-rate: expected a positive rate\n");
                return CLI_USAGE;
            }
            break;
        }
        case 'A': o.arrivals = optarg; break;
        case 'n':
            if (cli_parse_int("bench throughput", "--nodes", optarg, 1, UP_MAX_NODES, &v) < 0)
                return CLI_USAGE;
            o.up.nodes = (int)v;
            break;
        case 'c':
            if (cli_parse_int("bench throughput", "--cpus", optarg, 1, 1000000, &v) < 0)
                return CLI_USAGE;
            o.up.cpus = optarg;
            break;
        case 'G':
            if (cli_parse_int("bench throughput", "--gpus", optarg, 0, 32, &v) < 0)
                return CLI_USAGE;
            o.up.gpus = optarg;
            break;
        case 'C': o.up.no_cgroup = false; break;
        case 'K': o.keep_output = true; break;
        case 'B': o.only_bare = true; break;
        case 's': o.up.state = optarg; break;
        case 'L': o.up.log_level = optarg; break;
        case 'p': o.up.policy = optarg; break;
        case 'X':
            if (cli_parse_int("bench throughput", "--sched-procs", optarg, 1, UP_MAX_SCHEDS, &v) < 0)
                return CLI_USAGE;
            o.up.sched_procs = (int)v;
            break;
        case 'P':
            if (o.up.nparams == (int)(sizeof(o.up.params) / sizeof(o.up.params[0])) ||
                !strchr(optarg, '=')) {
                fprintf(stderr, "hrm bench throughput: --param: expected KEY=VALUE, at most 8 times\n");
                return CLI_USAGE;
            }
            o.up.params[o.up.nparams++] = optarg;
            break;
        case 'h':
            usage(stdout);
            return CLI_OK;
        default:
            usage(stderr);
            return CLI_USAGE;
        }
        if (target) {
            char flag[40];
            snprintf(flag, sizeof(flag), "--%s", li >= 0 ? lopts[li].name : "?");
            if (cli_parse_int("bench throughput", flag, optarg, 0, 10000000, target) < 0)
                return CLI_USAGE;
        }
        li = -1;
    }
    char *true_cmd[] = {"/bin/true", NULL};
    o.cmd = optind < argc ? argv + optind : true_cmd;
    o.ncmd = optind < argc ? argc - optind : 1;
    if (o.cmd[0][0] != '/') {
        fprintf(stderr, "hrm bench throughput: give CMD as an absolute path\n");
        return CLI_USAGE;
    }
    if (o.tasks < 1 || o.lat_runs < 1) {
        fprintf(stderr, "hrm bench throughput: --tasks and --latency must be >= 1\n");
        return CLI_USAGE;
    }

    double load[3];
    if (getloadavg(load, 3) == 3)
        printf("BENCH throughput.loadavg_1m %.2f load\n", load[0]);
    if (o.bare > 0) {
        double s1 = bare_rate(o.cmd, o.bare, 1), s2 = bare_rate(o.cmd, o.bare, 2);
        if (s1 < 0 || s2 < 0) {
            fprintf(stderr, "hrm bench throughput: cannot spawn %s\n", o.cmd[0]);
            return CLI_FAIL;
        }
        printf("BENCH throughput.bare.serial_per_s %.1f spawns/s\n", s1);
        printf("BENCH throughput.bare.two_way_per_s %.1f spawns/s\n", s2);
        /* As many loops as the cluster has agents: on a busy host, more
         * processes get a larger share of the CPUs, as the agents do. */
        double sn = bare_rate(o.cmd, o.bare, o.up.nodes);
        if (sn > 0)
            printf("BENCH throughput.bare.agents_way_per_s %.1f spawns/s\n", sn);
    }
    if (o.only_bare)
        return CLI_OK;
    bool tmp = !o.up.state;
    if (tmp) {
        snprintf(o.tmp_state, sizeof(o.tmp_state), "/tmp/hrm-bench-XXXXXX");
        if (!mkdtemp(o.tmp_state)) {
            fprintf(stderr, "hrm bench throughput: mkdtemp: %s\n", strerror(errno));
            return CLI_FAIL;
        }
        o.up.state = o.tmp_state;
    }
    /* Ctrl-C ends the current measurement; the cluster is always stopped. */
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = CLI_FAIL;
    if (up_start(&o.up, "hrm bench throughput") < 0)
        goto out;
    struct client_opts co;
    client_opts_init(&co);
    co.state = o.up.state;
    co.timeout_s = 30;
    struct client *c = client_open(&co);
    if (!c)
        goto stop;
    printf("BENCH throughput.nodes %d nodes\n", o.up.nodes);
    printf("BENCH throughput.slots %lld cpus\n", (long long)o.up.nodes * atoll(o.up.cpus));
    /* Warm-up: connections, the first store pages, the agents' first fork. */
    long long w = submit_one(c, &o, o.cmd, o.ncmd, 200, "warmup");
    if (w < 0 || !wait_job(c, w))
        goto close;
    if (run_count(c, &o) < 0)
        goto close;
    if (o.jobs > 0 && !interrupted && run_jobs(c, &o) < 0)
        goto close;
    if (!interrupted && run_latency(c, &o, false) < 0)
        goto close;
    if (!interrupted && access("/bin/bash", X_OK) == 0 && run_latency(c, &o, true) < 0)
        goto close;
    if (o.short_jobs > 0 && !interrupted && run_short(c, &o) < 0)
        goto close;
    if (o.queue > 0 && !interrupted && run_memory(c, &o) < 0)
        goto close;
    rc = interrupted ? CLI_FAIL : CLI_OK;
close:
    client_close(c);
stop:
    up_stop(&o.up);
out:
    if (tmp && rc == CLI_OK)
        bench_remove_tree(o.tmp_state);
    if (rc != CLI_OK)
        fprintf(stderr, "hrm bench throughput: failed%s; daemon logs were in %s/logs\n",
                interrupted ? " (interrupted)" : "", o.up.state);
    return rc;
}
