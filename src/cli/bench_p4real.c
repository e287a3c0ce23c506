/* hrm bench p4real: a workload of jobs of sleeping tasks, replayed at its arrival times on a real local cluster under one policy; per-job response and ideal, per-task wait. */
#define _GNU_SOURCE 1 /* mkdtemp */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "hrm/alloc.h"
#include "hrm/jobdesc.h"
#include "hrm/procstat.h"
#include "hrm/wire.h"
#include "up.h"

/*
 * What is measured (docs/reproduction-p4.md, "The testbed on real processes"):
 *
 * The workload file has one job per line: its arrival offset in seconds, then the run time
 * of each of its tasks in milliseconds.  Each task is `/bin/sleep SECONDS` (or `--sleeper`'s
 * program, which takes the same argument), one task group per task, so it holds its core for
 * its run time without using it (Sparrow's sleep tasks).
 * The jobs are submitted over one connection at their offsets from the start of the replay,
 * without waiting for any answer; each is waited for as soon as it is accepted, and its record
 * is read back once it has ended.  Per job:
 *
 *   response = the job's end (the master's clock) - the moment this client sent it;
 *   ideal    = its longest task's run time as measured by its agent (start_us .. end_us):
 *              the response had every task started the moment the job was sent;
 *   wait     = for each task, its start (the agent's clock, execve returned) - the send.
 *
 * All clocks are this host's CLOCK_REALTIME.  The output is, per job, one `JOB` line and one
 * `WAIT` and one `RUN` line with its tasks' waits and run times, for bench/p4-testbed to
 * summarise; then BENCH lines with the daemons' CPU per task.
 *
 * Queries.  A line that starts with `>` is the next stage of the job on the line before it (a
 * query's stages run one after another, as a Spark query's stages do): it has no offset and is
 * sent the moment its predecessor is seen to end (the `wait` answer).  Per query, a `QUERY`
 * line gives its response (its last stage's end - its first stage's send) and ideal (the sum
 * of its stages' ideals), as P4 measures a TPC-H query; the time between a stage's end and the
 * next stage's send (one answer to this client) is part of the response.
 */


static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double wall_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct p4job {
    double at_s;       /* arrival offset */
    int ntasks;
    int *run_ms;       /* owned: declared run time of each task */
    double sent_s;     /* wall clock when sent */
    double ack_s;      /* the submission's round trip: sent -> "submitted" received */
    long long id;      /* the master's job id, once accepted */
    double response_s, ideal_s;
    double *wait_s;    /* owned: per task */
    double *run_s;     /* owned: per task, as its agent measured it */
    bool ended, ok;    /* record read back; the job ended done */
    int prev_stage;    /* the query stage before this one (its line's predecessor), or -1 */
    int next_stage;    /* the query stage after this one, or -1 */
    double end_s;      /* the job's end, wall clock (read back) */
    const char *sleeper; /* borrowed: the program each task runs with its seconds (--sleeper) */
};

/* What a pending request is for: kind (submit, wait, read back) and the job's index. */
enum req_kind { REQ_SUBMIT, REQ_WAIT, REQ_INFO };

struct req_log {
    long long base;    /* the first request id of the replay */
    int32_t *job;      /* per request id - base: job index, or -1 */
    uint8_t *kind;
    size_t cap;
};

static void req_note(struct req_log *l, long long req, int32_t job, enum req_kind kind)
{
    if (l->cap == 0)
        l->base = req;
    size_t at = (size_t)(req - l->base);
    if (at >= l->cap) {
        size_t cap = l->cap ? l->cap : 1024;
        while (cap <= at)
            cap *= 2;
        l->job = hrm_realloc(l->job, cap * sizeof(*l->job));
        l->kind = hrm_realloc(l->kind, cap);
        for (size_t i = l->cap; i < cap; i++)
            l->job[i] = -1;
        l->cap = cap;
    }
    l->job[at] = job;
    l->kind[at] = (uint8_t)kind;
}

/* The workload file: 0, or -1 after naming the file and line on stderr. */
static int load_workload(const char *path, struct p4job **out, int *nout)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "hrm bench p4real: --workload %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct p4job *jobs = NULL;
    int n = 0, cap = 0, lineno = 0, rc = 0;
    char *line = NULL;
    size_t lcap = 0;
    double prev = 0;
    while (rc == 0 && getline(&line, &lcap, f) > 0) {
        lineno++;
        char *p = line, *end;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || !*p)
            continue;
        struct p4job j = {.id = -1, .prev_stage = -1, .next_stage = -1};
        if (*p == '>') { /* the next stage of the line before's job: no offset of its own */
            if (n == 0) {
                fprintf(stderr, "hrm bench p4real: %s:%d: a '>' stage follows no job\n", path,
                        lineno);
                rc = -1;
                break;
            }
            j.at_s = jobs[n - 1].at_s;
            j.prev_stage = n - 1;
            end = p + 1;
        } else {
            j.at_s = strtod(p, &end);
            if (end == p || !isfinite(j.at_s) || j.at_s < prev) {
                fprintf(stderr, "hrm bench p4real: %s:%d: expected an arrival offset in seconds "
                        "(or '>' for a next stage), not before the previous line's\n", path,
                        lineno);
                rc = -1;
                break;
            }
            prev = j.at_s;
        }
        for (p = end;;) {
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            if (v < 1 || v > 3600000 || j.ntasks == HRM_JOB_MAX_GROUPS) {
                fprintf(stderr, "hrm bench p4real: %s:%d: task run times are 1..3600000 ms, "
                        "at most %d per job\n", path, lineno, HRM_JOB_MAX_GROUPS);
                rc = -1;
                break;
            }
            j.run_ms = hrm_realloc(j.run_ms, (size_t)(j.ntasks + 1) * sizeof(int));
            j.run_ms[j.ntasks++] = (int)v;
            p = end;
        }
        while (rc == 0 && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            p++;
        if (rc == 0 && (*p || j.ntasks == 0)) {
            fprintf(stderr, "hrm bench p4real: %s:%d: expected task run times in whole ms after "
                    "the offset or '>'\n", path, lineno);
            rc = -1;
        }
        if (rc < 0) {
            hrm_free(j.run_ms);
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            jobs = hrm_realloc(jobs, (size_t)cap * sizeof(*jobs));
        }
        if (j.prev_stage >= 0)
            jobs[j.prev_stage].next_stage = n;
        jobs[n++] = j;
    }
    free(line);
    fclose(f);
    if (rc == 0 && n == 0) {
        fprintf(stderr, "hrm bench p4real: %s: no jobs\n", path);
        rc = -1;
    }
    *out = jobs;
    *nout = n;
    return rc;
}

static json_t *job_request(const struct p4job *j, int index)
{
    json_t *groups = json_array();
    for (int t = 0; t < j->ntasks; t++) {
        char secs[32];
        snprintf(secs, sizeof(secs), "%.3f", j->run_ms[t] / 1e3);
        json_array_append_new(groups, json_pack("{s:[s,s], s:i, s:s, s:s, s:b}", "cmd",
                                                j->sleeper, secs, "count", 1, "cpus", "1",
                                                "cwd", "/tmp", "output", 0));
    }
    char name[32];
    if (index < 0)
        snprintf(name, sizeof(name), "p4-warmup");
    else
        snprintf(name, sizeof(name), "p4-%d", index);
    json_t *req = hrm_wire_new(HRM_WIRE_SUBMIT);
    json_object_set_new(req, "job", json_pack("{s:s, s:o}", "name", name, "tasks", groups));
    return req;
}

/* The job's record: response, ideal and waits.  0, or -1 if a task has no run. */
static int read_back(struct p4job *j, const json_t *info)
{
    const json_t *job = json_object_get(info, "job"), *tasks = json_object_get(job, "tasks");
    if (json_array_size(tasks) != (size_t)j->ntasks)
        return -1;
    int64_t end_us = json_integer_value(json_object_get(job, "end_us"));
    j->ok = strcmp(json_string_value(json_object_get(job, "state")) ?: "", "done") == 0;
    j->ideal_s = 0;
    for (int t = 0; t < j->ntasks; t++) {
        const json_t *row = json_array_get(tasks, (size_t)t);
        int64_t s = json_integer_value(json_object_get(row, "start_us"));
        int64_t e = json_integer_value(json_object_get(row, "end_us"));
        if (s <= 0 || e < s)
            return -1;
        j->wait_s[t] = (double)s / 1e6 - j->sent_s;
        j->run_s[t] = (double)(e - s) / 1e6;
        if ((double)(e - s) / 1e6 > j->ideal_s)
            j->ideal_s = (double)(e - s) / 1e6;
        if (e > end_us)
            end_us = e;
    }
    j->end_s = (double)end_us / 1e6;
    j->response_s = j->end_s - j->sent_s;
    return 0;
}

static long long send_for(struct client *c, struct req_log *l, json_t *req, int job,
                          enum req_kind kind)
{
    long long id = client_send(c, req);
    json_decref(req);
    if (id >= 0)
        req_note(l, id, job, kind);
    return id;
}

/* Handles one reply; returns 1 when it completed a job, 0 otherwise, -1 on an error reply. */
static int on_reply(struct client *c, struct req_log *l, struct p4job *jobs, json_t *r)
{
    long long req = json_integer_value(json_object_get(r, "req"));
    const char *type = json_string_value(json_object_get(r, "type")) ?: "";
    if (l->cap == 0 || req < l->base || (size_t)(req - l->base) >= l->cap ||
        l->job[req - l->base] < 0)
        return 0;
    int ji = l->job[req - l->base];
    struct p4job *j = &jobs[ji];
    if (strcmp(type, "error") == 0) {
        fprintf(stderr, "hrm bench p4real: job %d: %s\n", ji,
                json_string_value(json_object_get(r, "message")) ?: "error");
        return -1;
    }
    switch ((enum req_kind)l->kind[req - l->base]) {
    case REQ_SUBMIT:
    {
        j->ack_s = wall_now_s() - j->sent_s;
        j->id = json_integer_value(json_object_get(r, "id"));
        json_t *w = hrm_wire_new(HRM_WIRE_WAIT);
        json_object_set_new(w, "id", json_integer(j->id));
        return send_for(c, l, w, ji, REQ_WAIT) < 0 ? -1 : 0;
    }
    case REQ_WAIT:
    {
        if (j->next_stage >= 0) { /* the query's next stage starts now */
            struct p4job *s = &jobs[j->next_stage];
            s->sent_s = wall_now_s();
            if (send_for(c, l, job_request(s, j->next_stage), j->next_stage, REQ_SUBMIT) < 0)
                return -1;
        }
        json_t *q = hrm_wire_new(HRM_WIRE_JOB);
        json_object_set_new(q, "id", json_integer(j->id));
        return send_for(c, l, q, ji, REQ_INFO) < 0 ? -1 : 0;
    }
    case REQ_INFO:
        if (read_back(j, r) < 0) {
            fprintf(stderr, "hrm bench p4real: job %d (id %lld): a task has no start or end\n",
                    ji, j->id);
            return -1;
        }
        j->ended = true;
        return 1;
    }
    return 0;
}

struct cpu_use {
    double master, agents, scheds;
};

static void cpu_use(const struct up_cluster *u, struct cpu_use *c)
{
    struct hrm_proc_stat ps;
    memset(c, 0, sizeof(*c));
    if (hrm_proc_stat_read(u->master, &ps) == 0)
        c->master = (double)ps.cpu_us / 1e6;
    for (int i = 0; i < u->nodes; i++)
        if (hrm_proc_stat_read(u->agents[i], &ps) == 0)
            c->agents += (double)ps.cpu_us / 1e6;
    for (int i = 0; i < u->sched_procs; i++)
        if (hrm_proc_stat_read(u->scheds[i], &ps) == 0)
            c->scheds += (double)ps.cpu_us / 1e6;
}

/* Submits every job at its offset and collects the records; the number of jobs ended. */
static int replay(struct client *c, struct p4job *jobs, int n, double drain_s, double *lag_s)
{
    struct req_log l = {0};
    int next = 0, ended = 0;
    double t0 = cli_mono_s(), drain_end = 0;
    *lag_s = 0;
    while (ended < n && !interrupted) {
        double now = cli_mono_s();
        while (next < n && now >= t0 + jobs[next].at_s) {
            if (jobs[next].prev_stage >= 0) { /* sent when the stage before it ends */
                next++;
                continue;
            }
            if (now - (t0 + jobs[next].at_s) > *lag_s)
                *lag_s = now - (t0 + jobs[next].at_s);
            jobs[next].sent_s = wall_now_s();
            if (send_for(c, &l, job_request(&jobs[next], next), next, REQ_SUBMIT) < 0)
                goto out;
            next++;
        }
        if (next == n && drain_end == 0)
            drain_end = now + drain_s;
        if (drain_end > 0 && now > drain_end) {
            fprintf(stderr, "hrm bench p4real: %d of %d jobs ended within %.0f s of the last "
                    "arrival (--drain)\n", ended, n, drain_s);
            break;
        }
        double wait = next < n ? t0 + jobs[next].at_s - now : 0.2;
        json_t *r = client_recv(c, wait < 0.0005 ? 0 : (wait > 0.2 ? 0.2 : wait));
        while (r) {
            int k = on_reply(c, &l, jobs, r);
            json_decref(r);
            if (k < 0)
                goto out;
            ended += k;
            r = client_recv(c, 0); /* drain what is already there before the next send */
        }
    }
out:
    hrm_free(l.job);
    hrm_free(l.kind);
    return ended;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hrm bench p4real --workload FILE [options]\n\n"
            "Starts a local cluster (as hrm up does), replays the jobs of FILE at their arrival\n"
            "times (each task a /bin/sleep of its run time, or --sleeper's program) and prints,\n"
            "per job, its response\n"
            "and ideal (JOB INDEX TASKS RESPONSE_MS IDEAL_MS STATE), its tasks' waits from\n"
            "submission to start (WAIT INDEX MS...) and run times (RUN INDEX MS...), and\n"
            "its id and send time (ID INDEX JOB_ID SENT_US, the master's clock).\n"
            "bench/p4-testbed runs it per policy.\n\n"
            "FILE: one job per line, its arrival offset in seconds then each task's run time\n"
            "in whole milliseconds ('0.25 80 120 97'); offsets never decrease; '#' comments.\n"
            "A line '> 90 110 ...' is the next stage of the line before's job (a query): it is\n"
            "sent when that job ends, and each query gets a line QUERY FIRST_INDEX STAGES\n"
            "RESPONSE_MS IDEAL_MS STATE (response: first send to last end; ideal: the sum of\n"
            "its stages' ideals).\n\n"
            "options:\n"
            "  --workload FILE  the jobs (required)\n"
            "  --nodes N        agents (default 16)\n"
            "  --cpus N         CPUs (slots) each agent declares (default 4)\n"
            "  --policy NAME    the master's policy (default drf; a distributed one runs its\n"
            "                   instances in the master, or in --sched-procs processes)\n"
            "  --sched-procs N  a distributed policy's instances in N hrm sched processes\n"
            "                   (default 0)\n"
            "  --param K=V      a policy parameter (repeatable, at most 8)\n"
            "  --state DIR      state folder (default: a new folder under /tmp, removed)\n"
            "  --log-level L    daemons' log level (default notice)\n"
            "  --drain S        give up S seconds after the last arrival if jobs are still\n"
            "                   running: an overloaded cluster (default 300)\n"
            "  --sleeper PATH   the program each task runs as PATH SECONDS, an absolute path\n"
            "                   (default /bin/sleep; bench/p4-testbed --sleeper static builds\n"
            "                   bench/p4-sleeper.c, a static one)\n"
            "  --trace FILE     the master's step trace (hrm master --trace FILE), and each\n"
            "                   hrm sched process's beside it (FILE.sched1 ...), for\n"
            "                   bench/p4-testbed's 'where the time goes' (default: none)\n"
            "  -h, --help       this help\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* QUERY FIRST STAGES RESPONSE_MS IDEAL_MS STATE for every query of two or more stages whose
 * stages all ended: response from its first stage's send to its last stage's end, ideal the
 * sum of its stages' (P4's ideal of a query: each stage without its queueing). */
static void print_queries(const struct p4job *jobs, int n)
{
    for (int i = 0; i < n; i++) {
        if (jobs[i].prev_stage >= 0 || jobs[i].next_stage < 0)
            continue;
        double ideal = 0;
        int stages = 0, last = i;
        bool ended = true, ok = true;
        for (int k = i; k >= 0; k = jobs[k].next_stage) {
            ended = ended && jobs[k].ended;
            ok = ok && jobs[k].ok;
            ideal += jobs[k].ideal_s;
            stages++;
            last = k;
        }
        if (ended)
            printf("QUERY %d %d %.3f %.3f %s\n", i, stages,
                   (jobs[last].end_s - jobs[i].sent_s) * 1e3, ideal * 1e3, ok ? "done" : "failed");
    }
}

static void print_results(const struct p4job *jobs, int n)
{
    /* The submissions' round trips: two one-way messages through this host's loopback,
     * CURVE and a process to wake, the cost every hop of a placement pays here. */
    double *rtt = hrm_calloc((size_t)n, sizeof(double));
    int k = 0;
    for (int i = 0; i < n; i++)
        if (jobs[i].id > 0)
            rtt[k++] = jobs[i].ack_s;
    qsort(rtt, (size_t)k, sizeof(double), cmp_double);
    if (k > 0) {
        printf("BENCH p4real.submit_rtt_p50_ms %.3f ms\n", rtt[k / 2] * 1e3);
        printf("BENCH p4real.submit_rtt_p95_ms %.3f ms\n", rtt[(k - 1) * 95 / 100] * 1e3);
    }
    hrm_free(rtt);
    for (int i = 0; i < n; i++) {
        const struct p4job *j = &jobs[i];
        if (!j->ended)
            continue;
        printf("JOB %d %d %.3f %.3f %s\n", i, j->ntasks, j->response_s * 1e3, j->ideal_s * 1e3,
               j->ok ? "done" : "failed");
        printf("ID %d %lld %.0f\n", i, j->id, j->sent_s * 1e6);
        printf("WAIT %d", i);
        for (int t = 0; t < j->ntasks; t++)
            printf(" %.3f", j->wait_s[t] * 1e3);
        printf("\nRUN %d", i);
        for (int t = 0; t < j->ntasks; t++)
            printf(" %.3f", j->run_s[t] * 1e3);
        printf("\n");
    }
    print_queries(jobs, n);
}

static int parse_args(int argc, char **argv, struct up_cluster *u, const char **workload,
                      double *drain_s, const char **sleeper)
{
    static const struct option lopts[] = {
        {"workload", required_argument, NULL, 'w'}, {"nodes", required_argument, NULL, 'n'},
        {"cpus", required_argument, NULL, 'c'},     {"policy", required_argument, NULL, 'p'},
        {"sched-procs", required_argument, NULL, 'X'}, {"param", required_argument, NULL, 'P'},
        {"state", required_argument, NULL, 's'},    {"log-level", required_argument, NULL, 'L'},
        {"drain", required_argument, NULL, 'D'},    {"trace", required_argument, NULL, 'T'},
        {"sleeper", required_argument, NULL, 'S'},  {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    long long v;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "+h", lopts, NULL)) != -1) {
        switch (ch) {
        case 'w': *workload = optarg; break;
        case 'n':
            if (cli_parse_int("bench p4real", "--nodes", optarg, 1, UP_MAX_NODES, &v) < 0)
                return CLI_USAGE;
            u->nodes = (int)v;
            break;
        case 'c':
            if (cli_parse_int("bench p4real", "--cpus", optarg, 1, 1024, &v) < 0)
                return CLI_USAGE;
            u->cpus = optarg;
            break;
        case 'p': u->policy = optarg; break;
        case 'X':
            if (cli_parse_int("bench p4real", "--sched-procs", optarg, 0, UP_MAX_SCHEDS, &v) < 0)
                return CLI_USAGE;
            u->sched_procs = (int)v;
            break;
        case 'P':
            if (u->nparams == (int)(sizeof(u->params) / sizeof(u->params[0])) ||
                !strchr(optarg, '=')) {
                fprintf(stderr, "hrm bench p4real: --param: expected KEY=VALUE, at most 8 times\n");
                return CLI_USAGE;
            }
            u->params[u->nparams++] = optarg;
            break;
        case 's': u->state = optarg; break;
        case 'L': u->log_level = optarg; break;
        case 'D':
            if (cli_parse_int("bench p4real", "--drain", optarg, 1, 86400, &v) < 0)
                return CLI_USAGE;
            *drain_s = (double)v;
            break;
        case 'T': u->trace = optarg; break;
        case 'S':
            /* The agents start it from their own folder: only an absolute path means one file. */
            if (optarg[0] != '/' || access(optarg, X_OK) < 0) {
                fprintf(stderr, "hrm bench p4real: --sleeper %s: not an executable file given by "
                        "its absolute path\n", optarg);
                return CLI_USAGE;
            }
            *sleeper = optarg;
            break;
        case 'h': usage(stdout); return -1;
        default: usage(stderr); return CLI_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hrm bench p4real: unexpected argument '%s'\n", argv[optind]);
        return CLI_USAGE;
    }
    if (!*workload) {
        fprintf(stderr, "hrm bench p4real: --workload FILE is required\n");
        return CLI_USAGE;
    }
    return CLI_OK;
}

static void free_jobs(struct p4job *jobs, int n)
{
    for (int i = 0; i < n; i++) {
        hrm_free(jobs[i].run_ms);
        hrm_free(jobs[i].wait_s);
        hrm_free(jobs[i].run_s);
    }
    hrm_free(jobs);
}

int bench_p4real(int argc, char **argv)
{
    struct up_cluster u;
    up_init(&u);
    u.nodes = 16;
    u.cpus = "4";
    u.mem = "64G";
    u.no_cgroup = true; /* as hrm bench throughput: a task costs no cgroup */
    u.state = NULL;
    const char *workload = NULL, *sleeper = "/bin/sleep";
    double drain_s = 300;
    int prc = parse_args(argc, argv, &u, &workload, &drain_s, &sleeper);
    if (prc != CLI_OK)
        return prc < 0 ? CLI_OK : prc;
    struct p4job *jobs = NULL;
    int n = 0;
    if (load_workload(workload, &jobs, &n) < 0) {
        for (int i = 0; i < n; i++)
            hrm_free(jobs[i].run_ms);
        hrm_free(jobs);
        return CLI_USAGE;
    }
    long long ntasks = 0;
    for (int i = 0; i < n; i++) {
        jobs[i].wait_s = hrm_calloc((size_t)jobs[i].ntasks, sizeof(double));
        jobs[i].run_s = hrm_calloc((size_t)jobs[i].ntasks, sizeof(double));
        jobs[i].sleeper = sleeper;
        ntasks += jobs[i].ntasks;
    }
    if (u.trace) { /* the master appends (a restart goes on): this replay's trace starts empty */
        FILE *tf = fopen(u.trace, "we");
        if (!tf) {
            fprintf(stderr, "hrm bench p4real: --trace %s: %s\n", u.trace, strerror(errno));
            free_jobs(jobs, n);
            return CLI_USAGE;
        }
        fclose(tf);
        for (int i = 0; i < u.sched_procs; i++) { /* and so do the scheduler processes' */
            char path[1100];
            snprintf(path, sizeof(path), "%.1000s.sched%d", u.trace, i + 1);
            if ((tf = fopen(path, "we")))
                fclose(tf);
        }
    }
    char tmp_state[64] = "";
    if (!u.state) {
        snprintf(tmp_state, sizeof(tmp_state), "/tmp/hrm-p4real-XXXXXX");
        if (!mkdtemp(tmp_state)) {
            fprintf(stderr, "hrm bench p4real: mkdtemp: %s\n", strerror(errno));
            return CLI_FAIL;
        }
        u.state = tmp_state;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = CLI_FAIL;
    if (up_start(&u, "hrm bench p4real") < 0)
        goto out;
    struct client_opts co;
    client_opts_init(&co);
    co.state = u.state;
    co.timeout_s = 60;
    struct client *c = client_open(&co);
    if (!c)
        goto stop;
    /* Warm-up: one task per slot, so every agent has forked once and every node is known. */
    {
        struct p4job warm = {.ntasks = u.nodes * atoi(u.cpus), .sleeper = sleeper};
        warm.run_ms = hrm_calloc((size_t)warm.ntasks, sizeof(int));
        for (int t = 0; t < warm.ntasks; t++)
            warm.run_ms[t] = 10;
        int code;
        json_t *req = job_request(&warm, -1);
        json_t *r = client_call(c, req, &code); /* borrows req */
        json_decref(req);
        long long id = r ? json_integer_value(json_object_get(r, "id")) : -1;
        json_decref(r);
        hrm_free(warm.run_ms);
        json_t *w = hrm_wire_new(HRM_WIRE_WAIT);
        json_object_set_new(w, "id", json_integer(id));
        r = id > 0 ? client_call_long(c, w, 120, 5, &code) : NULL;
        json_decref(w);
        if (!r) {
            fprintf(stderr, "hrm bench p4real: the warm-up job did not end\n");
            goto close;
        }
        json_decref(r);
    }
    struct cpu_use a, b;
    cpu_use(&u, &a);
    double lag = 0, t0 = cli_mono_s();
    int ended = replay(c, jobs, n, drain_s, &lag);
    double wall = cli_mono_s() - t0;
    cpu_use(&u, &b);
    print_results(jobs, n);
    printf("BENCH p4real.jobs %d jobs\n", n);
    printf("BENCH p4real.jobs_ended %d jobs\n", ended);
    printf("BENCH p4real.tasks %lld tasks\n", ntasks);
    printf("BENCH p4real.wall_s %.3f s\n", wall);
    printf("BENCH p4real.max_submit_lag_ms %.3f ms\n", lag * 1e3);
    printf("BENCH p4real.master_cpu_ms_per_task %.4f ms\n", (b.master - a.master) * 1e3 / (double)ntasks);
    printf("BENCH p4real.agents_cpu_ms_per_task %.4f ms\n", (b.agents - a.agents) * 1e3 / (double)ntasks);
    printf("BENCH p4real.scheds_cpu_ms_per_task %.4f ms\n", (b.scheds - a.scheds) * 1e3 / (double)ntasks);
    fflush(stdout);
    rc = ended == n && !interrupted ? CLI_OK : CLI_FAIL;
close:
    client_close(c);
stop:
    up_stop(&u);
out:
    if (tmp_state[0] && rc == CLI_OK)
        bench_remove_tree(tmp_state);
    if (rc != CLI_OK)
        fprintf(stderr, "hrm bench p4real: failed%s; daemon logs are in %s/logs\n",
                interrupted ? " (interrupted)" : "", u.state);
    free_jobs(jobs, n);
    return rc;
}
