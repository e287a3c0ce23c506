/* hrm bench fleet: a master driving thousands of simulated agents over the real protocol: placements/s, submit-to-start latency, master CPU and memory, heartbeat cost, reconcile time after kill -9. */
#define _GNU_SOURCE 1 /* mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_fleet.h"
#include "cli.h"
#include "client.h"
#include "hrm/alloc.h"
#include "hrm/procstat.h"
#include "hrm/transport.h"
#include "hrm/wire.h"

/*
 * What is measured (docs/benchmarks.md, "Fleet"):
 * - register_s: from the fleet's start until the master lists every agent up (all of them
 *   connect, hand-shake CURVE and register at once);
 * - heartbeat_cpu_us: the master's CPU over an idle window divided by the agents' messages
 *   in it (a heartbeat and a usage report per agent per second);
 * - idle_start_p50/p99_ms: the same latency on an idle cluster: IDLE_JOBS jobs of IDLE_TASKS
 *   tasks submitted one at a time, IDLE_GAP_S apart, far fewer than the free slots, so no task
 *   waits for a slot: what the scheduler, the store and the wire add to a start (the 50 ms goal
 *   is about this figure; start_p99_ms below is mostly waiting for a slot);
 * - placements_per_s: tasks / (last task start - first submission), every task of --tasks
 *   submitted at once in jobs of --per-job tasks; start_p50/p99_ms: per task, its start (the
 *   agent's clock) minus its job's submission (the master's clock; one host, one clock);
 * - master_cpu_ms_per_1k: the master's CPU over that window per 1,000 tasks; master_rss_mb:
 *   the master's peak VmRSS seen meanwhile;
 * - jobs_p99_ms / jobs_max_ms: the answer time of `hrm jobs` asked every 200 ms meanwhile;
 * - reconcile_s: with a task running on every agent, the master is killed (SIGKILL) and
 *   started again: from its restart until it logs that reconciliation is over (every agent
 *   registered again, each run matched); reconcile_master_cpu_s and reconcile_agents_cpu_s:
 *   the CPU the restarted master and the agents' processes used meanwhile.
 */

#define IDLE_JOBS 100   /* jobs of the idle-cluster latency series */
#define IDLE_TASKS 4    /* tasks per such job */
#define IDLE_GAP_S 0.02 /* between two submissions: 200 tasks/s, a few dozen slots busy */

volatile sig_atomic_t fleet_interrupted;

static void on_signal(int sig)
{
    (void)sig;
    fleet_interrupted = 1;
}

double fleet_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void fleet_nap_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static pid_t spawn_logged(const struct fopts *o, char **argv, const char *log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    char path[800];
    snprintf(path, sizeof(path), "%s/%s", o->logs, log);
    posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = -1;
    extern char **environ;
    if (posix_spawn(&pid, o->self, &fa, NULL, argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/*
 * The agents run in processes of at most --per-process each (2,500 by default): a simulated
 * agent holds five descriptors (its connection's socket, its mailbox, its link monitor's two
 * sockets), and a process's limit is often 20,000 or less.  Process k's agents are named
 * PREFIX1.., "f" for the first, "f2-", "f3-"... for the next ones.
 */
static void fleet_prefix(int k, char *buf, size_t len)
{
    if (k == 0)
        snprintf(buf, len, "f");
    else
        snprintf(buf, len, "f%d-", k + 1);
}

static long long fleet_count(const struct fopts *o, int k)
{
    long long left = o->agents - (long long)k * o->per_process;
    return left < o->per_process ? left : o->per_process;
}

static bool fleets_alive(const struct fopts *o)
{
    for (int k = 0; k < o->nfleets; k++)
        if (waitpid(o->fleets[k], NULL, WNOHANG) != 0)
            return false;
    return true;
}

static pid_t start_master(struct fopts *o)
{
    char *argv[16] = {"hrm", "master", "--state", o->state, "--policy", (char *)o->policy,
                      "--node-timeout", "30s", "--reconcile", "60s", "--log-level", "notice"};
    int k = 12;
    if (o->scheds > 0)
        argv[k++] = "--local-instances", argv[k++] = "0";
    argv[k] = NULL;
    return spawn_logged(o, argv, "master.log");
}

static void stop_pid(pid_t *pid, int sig)
{
    if (*pid <= 0)
        return;
    kill(*pid, sig);
    double end = fleet_mono_s() + 10;
    while (waitpid(*pid, NULL, WNOHANG) == 0 && fleet_mono_s() < end)
        fleet_nap_s(0.02);
    if (waitpid(*pid, NULL, WNOHANG) == 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
    }
    *pid = 0;
}

json_t *fleet_call(struct client *c, int type, json_t *fields)
{
    json_t *req = hrm_wire_new(type);
    if (fields)
        json_object_update(req, fields);
    json_decref(fields);
    int code;
    json_t *r = client_call_long(c, req, 60, 2, &code);
    json_decref(req);
    return r;
}

static long long nodes_up(struct client *c)
{
    json_t *r = fleet_call(c, HRM_WIRE_NODES, NULL);
    long long up = 0;
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(r, "nodes"), i, n)
        up += strcmp(json_string_value(json_object_get(n, "state")) ?: "", "up") == 0;
    json_decref(r);
    return up;
}


double fleet_proc_cpu_s(pid_t pid)
{
    struct hrm_proc_stat ps;
    return hrm_proc_stat_read(pid, &ps) < 0 ? 0 : (double)ps.cpu_us / 1e6;
}

int fleet_cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

long long fleet_pct(const long long *v, long long n, double p)
{
    if (n == 0)
        return 0;
    long long i = (long long)(p * (double)(n - 1) + 0.5);
    return v[i];
}

json_t *fleet_job_req(long long count, const char *cmd0, const char *cmd1, long long cpus)
{
    return json_pack("{s:{s:s, s:[{s:[s, s], s:I, s:I, s:b}]}}", "job", "name", "fleet", "tasks",
                     "cmd", cmd0, cmd1, "count", (json_int_t)count, "cpus", (json_int_t)cpus,
                     "output", 0);
}

/* Submits n jobs pipelined; their ids into ids[]; the number accepted. */
long long fleet_submit_jobs(struct client *c, long long n, long long per_job, long long last,
                             const char *arg, long long *ids)
{
    long long first = -1, got = 0;
    for (long long i = 0; i < n; i++) {
        json_t *req = hrm_wire_new(HRM_WIRE_SUBMIT);
        json_t *body = fleet_job_req(i == n - 1 ? last : per_job, "sleep", arg, 1);
        json_object_update(req, body);
        json_decref(body);
        long long id = client_send(c, req);
        json_decref(req);
        if (id < 0)
            return 0;
        if (first < 0)
            first = id;
    }
    double end = fleet_mono_s() + 120;
    while (got < n && fleet_mono_s() < end && !fleet_interrupted) {
        json_t *r = client_recv(c, 0.5);
        if (!r)
            continue;
        long long req = json_integer_value(json_object_get(r, "req"));
        const char *type = json_string_value(json_object_get(r, "type"));
        if (type && strcmp(type, "submitted") == 0 && req >= first && req < first + n) {
            ids[req - first] = json_integer_value(json_object_get(r, "id"));
            got++;
        } else if (type && strcmp(type, "error") == 0) {
            fprintf(stderr, "hrm bench fleet: submit: %s\n",
                    json_string_value(json_object_get(r, "message")));
        }
        json_decref(r);
    }
    return got;
}

struct run_stats {
    double first_submit_s, last_start_s;
    long long *lat_us, nlat;
};

/* Every task's start against its job's submission, read back page by page. */
static int read_starts(struct client *c, const long long *ids, long long n, struct run_stats *s)
{
    s->first_submit_s = 1e300;
    s->last_start_s = 0;
    for (long long i = 0; i < n; i++) {
        for (long long from = 0; from >= 0;) {
            json_t *r = fleet_call(c, HRM_WIRE_JOB, json_pack("{s:I, s:I, s:i}", "id",
                                                        (json_int_t)ids[i], "from",
                                                        (json_int_t)from, "limit", 2000));
            json_t *job = json_object_get(r, "job");
            if (!job) {
                json_decref(r);
                return -1;
            }
            double sub = (double)json_integer_value(json_object_get(job, "submit_us")) / 1e6;
            if (sub < s->first_submit_s)
                s->first_submit_s = sub;
            size_t k;
            json_t *t;
            json_array_foreach(json_object_get(job, "tasks"), k, t)
            {
                long long st = json_integer_value(json_object_get(t, "start_us"));
                if (st <= 0)
                    continue;
                s->lat_us[s->nlat++] =
                    st - json_integer_value(json_object_get(job, "submit_us"));
                if ((double)st / 1e6 > s->last_start_s)
                    s->last_start_s = (double)st / 1e6;
            }
            from = json_integer_value(json_object_get(job, "tasks_next"));
            json_decref(r);
        }
    }
    qsort(s->lat_us, (size_t)s->nlat, sizeof(*s->lat_us), fleet_cmp_ll);
    return 0;
}

/* The idle series: small jobs one at a time on a cluster with free slots; their starts. */
static int idle_starts(struct client *c, const struct fopts *o, struct run_stats *s)
{
    long long ids[IDLE_JOBS];
    char arg[32];
    snprintf(arg, sizeof(arg), "%.3f", o->task_s);
    for (int i = 0; i < IDLE_JOBS && !fleet_interrupted; i++) {
        json_t *r = fleet_call(c, HRM_WIRE_SUBMIT, fleet_job_req(IDLE_TASKS, "sleep", arg, 1));
        ids[i] = r ? json_integer_value(json_object_get(r, "id")) : -1;
        json_decref(r);
        if (ids[i] <= 0)
            return -1;
        fleet_nap_s(IDLE_GAP_S);
    }
    for (double end = fleet_mono_s() + 120;; fleet_nap_s(0.1)) {
        json_t *r = fleet_call(c, HRM_WIRE_JOB,
                         json_pack("{s:I, s:i}", "id", (json_int_t)ids[IDLE_JOBS - 1], "limit", 1));
        const char *st = json_string_value(json_object_get(json_object_get(r, "job"), "state"));
        bool done = st && strcmp(st, "done") == 0;
        json_decref(r);
        if (done)
            break;
        if (fleet_mono_s() > end || fleet_interrupted)
            return -1;
    }
    return read_starts(c, ids, IDLE_JOBS, s);
}

static bool is_one_of(long long id, const long long *ids, long long n)
{
    for (long long i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* Polls `jobs` every every_s (200 ms) until every job of ids is done (the idle series' jobs,
 * done before, do not count), timing each answer. */
static int wait_done(struct client *c, const long long *ids, long long njobs, pid_t master,
                     double every_s, long long *rss_kb, long long *jl, long long *njl,
                     long long cap)
{
    double end = fleet_mono_s() + 600;
    while (fleet_mono_s() < end && !fleet_interrupted) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        json_t *r = fleet_call(c, HRM_WIRE_JOBS, json_pack("{s:b}", "all", 1));
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (*njl < cap)
            jl[(*njl)++] = (b.tv_sec - a.tv_sec) * 1000000LL + (b.tv_nsec - a.tv_nsec) / 1000;
        long long rss = hrm_proc_rss_kb(master);
        if (rss > *rss_kb)
            *rss_kb = rss;
        long long done = 0;
        size_t i;
        json_t *j;
        json_array_foreach(json_object_get(r, "jobs"), i, j)
            done += strcmp(json_string_value(json_object_get(j, "state")) ?: "", "done") == 0 &&
                    is_one_of(json_integer_value(json_object_get(j, "id")), ids, njobs);
        json_decref(r);
        if (done >= njobs)
            return 0;
        fleet_nap_s(every_s);
    }
    return -1;
}

static bool log_has(const struct fopts *o, const char *what, long skip)
{
    char path[800], line[1024];
    snprintf(path, sizeof(path), "%s/master.log", o->logs);
    FILE *f = fopen(path, "re");
    bool found = false;
    if (f && fseek(f, skip, SEEK_SET) == 0)
        while (!found && fgets(line, sizeof(line), f))
            found = strstr(line, what) != NULL;
    if (f)
        fclose(f);
    return found;
}

static long log_size(const struct fopts *o)
{
    char path[800];
    snprintf(path, sizeof(path), "%s/master.log", o->logs);
    FILE *f = fopen(path, "re");
    long n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (f)
        fclose(f);
    return n;
}

static double fleets_cpu_s(const struct fopts *o)
{
    double s = 0;
    for (int k = 0; k < o->nfleets; k++)
        s += fleet_proc_cpu_s(o->fleets[k]);
    return s;
}

/* A task on every agent, kill -9, restart: seconds until reconciliation is over, or -1; the
 * restarted master's CPU and the agents' processes' CPU meanwhile into cpu[0], cpu[1]. */
static double measure_reconcile(struct fopts *o, struct client **c, double cpu[2])
{
    long long id;
    json_t *r = fleet_call(*c, HRM_WIRE_SUBMIT, fleet_job_req(o->agents, "sleep", "3600", o->cpus));
    id = r ? json_integer_value(json_object_get(r, "id")) : -1;
    json_decref(r);
    if (id < 0)
        return -1;
    double end = fleet_mono_s() + 120;
    for (;;) {
        r = fleet_call(*c, HRM_WIRE_JOB, json_pack("{s:I, s:i}", "id", (json_int_t)id, "limit", 1));
        long long running = json_integer_value(
            json_object_get(json_object_get(r, "job"), "running"));
        json_decref(r);
        if (running >= o->agents)
            break;
        if (fleet_mono_s() > end || fleet_interrupted)
            return -1;
        fleet_nap_s(0.2);
    }
    client_close(*c);
    *c = NULL;
    kill(o->master, SIGKILL);
    waitpid(o->master, NULL, 0);
    long skip = log_size(o);
    double t0 = fleet_mono_s(), agents_cpu0 = fleets_cpu_s(o);
    if ((o->master = start_master(o)) < 0)
        return -1;
    while (!log_has(o, "reconciliation over", skip)) {
        if (fleet_mono_s() - t0 > 120 || fleet_interrupted)
            return -1;
        fleet_nap_s(0.01);
    }
    double t = fleet_mono_s() - t0;
    cpu[0] = fleet_proc_cpu_s(o->master);
    cpu[1] = fleets_cpu_s(o) - agents_cpu0;
    struct client_opts co;
    client_opts_init(&co);
    co.state = o->state;
    if ((*c = client_open(&co))) {
        r = fleet_call(*c, HRM_WIRE_CANCEL, json_pack("{s:I}", "id", (json_int_t)id));
        json_decref(r);
    }
    return t;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hrm bench fleet [options]\n\n"
            "Starts a master and --agents simulated agents (hrm agent --simulate-exec --count,\n"
            "--per-process per process) on 127.0.0.1, all over CURVE, and measures the control\n"
            "plane: registration, heartbeat cost, submit-to-start latency on an idle cluster\n"
            "(100 jobs of 4 tasks, 20 ms apart), placements/s and submit-to-start latency for\n"
            "--tasks tasks submitted at once, the master's CPU and memory, hrm jobs answer\n"
            "time under load, and the time to reconcile every agent after the master is\n"
            "killed (SIGKILL) and restarted.  Prints BENCH lines and public anchors beside them.\n\noptions:\n"
            "  --agents N     simulated agents (default 5000)\n"
            "  --cpus N       CPUs of each agent (default 4)\n"
            "  --tasks N      one-CPU tasks submitted at once (default 100000)\n"
            "  --per-job N    tasks per job (default 10000)\n"
            "  --task-ms MS   each task's duration (sleep; default 200)\n"
            "  --policy NAME  the master's policy: drf, hrm, dhrm-nego, ... (default drf)\n"
            "  --scheds N     with a distributed policy: N hrm sched processes schedule\n"
            "                 (2 instances each) and none in the master (default 0)\n"
            "  --no-reconcile skip the kill -9 / restart measure\n"
            "  --per-process N  simulated agents per agent process: --agents over N\n"
            "                 processes, at most 40 (default 2500; each agent holds 5\n"
            "                 descriptors)\n"
            "  --queued N,... instead of the runs above, placements/s against the tasks\n"
            "                 queued: for each N (up to 8), N tasks queued in jobs of\n"
            "                 --per-job, then --window seconds while a job of 10 tasks\n"
            "                 arrives every 50 ms; BENCH fleet.queued_N.* lines (default:\n"
            "                 none)\n"
            "  --window S     the --queued window (default 10)\n"
            "  --jobs-every MS  the pause between two timed `jobs` requests while the\n"
            "                 tasks run (default 200)\n"
            "  --daemons HRM  run the master and the agents from another hrm executable\n"
            "                 (another build, to compare; default: this one)\n"
            "  --state DIR    keep the cluster's folder there (default: a temporary one,\n"
            "                 removed at the end)\n"
            "  -h, --help     this help\n");
}

/* --queued N,N,...: queue lengths of 1 to 10,000,000 tasks. */
static int parse_queued(struct fopts *o, const char *arg)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", arg);
    o->nqueued = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->nqueued == MAX_QUEUED_POINTS) {
            fprintf(stderr, "hrm bench fleet: --queued: at most %d points\n", MAX_QUEUED_POINTS);
            return -1;
        }
        if (cli_parse_int("bench fleet", "--queued", tok, 1, 10000000, &o->queued[o->nqueued]) < 0)
            return -1;
        o->nqueued++;
    }
    if (o->nqueued == 0) {
        fprintf(stderr, "hrm bench fleet: --queued: expected N[,N...]\n");
        return -1;
    }
    return 0;
}

static int parse(struct fopts *o, int argc, char **argv)
{
    static const struct option opts[] = {
        {"agents", required_argument, NULL, 'a'}, {"tasks", required_argument, NULL, 't'},
        {"per-job", required_argument, NULL, 'j'}, {"task-ms", required_argument, NULL, 'd'},
        {"policy", required_argument, NULL, 'p'}, {"scheds", required_argument, NULL, 's'},
        {"cpus", required_argument, NULL, 'c'},   {"no-reconcile", no_argument, NULL, 'R'},
        {"state", required_argument, NULL, 'S'},  {"help", no_argument, NULL, 'h'},
        {"queued", required_argument, NULL, 'Q'}, {"window", required_argument, NULL, 'W'},
        {"per-process", required_argument, NULL, 'P'},
        {"jobs-every", required_argument, NULL, 'J'},
        {"daemons", required_argument, NULL, 'D'},
        {NULL, 0, NULL, 0}};
    int c;
    long long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (cli_parse_int("bench fleet", "--agents", optarg, 1, 100000, &o->agents) < 0)
                return -1;
            break;
        case 't':
            if (cli_parse_int("bench fleet", "--tasks", optarg, 1, 10000000, &o->tasks) < 0)
                return -1;
            break;
        case 'j':
            if (cli_parse_int("bench fleet", "--per-job", optarg, 1, 1000000, &o->per_job) < 0)
                return -1;
            break;
        case 'd':
            if (cli_parse_int("bench fleet", "--task-ms", optarg, 0, 3600000, &v) < 0)
                return -1;
            o->task_s = (double)v / 1000;
            break;
        case 'p':
            o->policy = optarg;
            break;
        case 's':
            if (cli_parse_int("bench fleet", "--scheds", optarg, 0, MAX_SCHEDS, &o->scheds) < 0)
                return -1;
            break;
        case 'c':
            if (cli_parse_int("bench fleet", "--cpus", optarg, 1, 1024, &o->cpus) < 0)
                return -1;
            break;
        case 'R':
            o->reconcile = false;
            break;
        case 'P':
            if (cli_parse_int("bench fleet", "--per-process", optarg, 1, 100000,
                              &o->per_process) < 0)
                return -1;
            break;
        case 'Q':
            if (parse_queued(o, optarg) < 0)
                return -1;
            break;
        case 'W':
            if (cli_parse_int("bench fleet", "--window", optarg, 1, 3600, &v) < 0)
                return -1;
            o->window_s = (double)v;
            break;
        case 'S':
            snprintf(o->state, sizeof(o->state), "%s", optarg);
            o->keep = true;
            break;
        case 'J':
            if (cli_parse_int("bench fleet", "--jobs-every", optarg, 1, 10000, &v) < 0)
                return -1;
            o->jobs_every_s = (double)v / 1000;
            break;
        case 'D':
            if (access(optarg, X_OK) != 0) {
                fprintf(stderr, "hrm bench fleet: --daemons %s: not an executable\n", optarg);
                return -1;
            }
            snprintf(o->self, sizeof(o->self), "%s", optarg);
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "hrm bench fleet: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if ((o->agents + o->per_process - 1) / o->per_process > MAX_FLEETS) {
        fprintf(stderr, "hrm bench fleet: --agents %lld over --per-process %lld is more than %d "
                "processes\n", o->agents, o->per_process, MAX_FLEETS);
        return -1;
    }
    return 0;
}

static void print_anchors(void)
{
    printf("anchors (published, other systems and hardware):\n"
           "  Nomad C2M: 2,000,000 containers on 6,100 hosts at ~1,500 placements/s\n"
           "  Kubernetes SLO: 5,000 nodes, pod start p99 <= 5 s, ~100-300 pods/s scheduled\n"
           "  Flux: 33 jobs/s with 16,000 jobs queued\n"
           "goals: >= 10,000 placements/s at 5,000 agents, start p99 <= 50 ms on an idle\n"
           "       cluster (central; BENCH fleet.idle_start_p99_ms),\n"
           "       reconcile 5,000 agents < 5 s, hrm jobs < 100 ms under load\n");
}

static int run(struct fopts *o)
{
    struct hrm_error err;
    char keys[700];
    snprintf(keys, sizeof(keys), "%s/keys", o->state);
    snprintf(o->logs, sizeof(o->logs), "%s", o->state);
    o->nfleets = (int)((o->agents + o->per_process - 1) / o->per_process);
    if (hrm_keys_generate(keys, false, NULL, &err) < 0) {
        fprintf(stderr, "hrm bench fleet: keys: %s\n", err.text);
        return CLI_FAIL;
    }
    for (int k = 0; k < o->nfleets; k++) {
        char prefix[32];
        fleet_prefix(k, prefix, sizeof(prefix));
        if (hrm_keys_add_nodes(keys, prefix, (int32_t)fleet_count(o, k), &err) < 0) {
            fprintf(stderr, "hrm bench fleet: keys: %s\n", err.text);
            return CLI_FAIL;
        }
    }
    if ((o->master = start_master(o)) < 0) {
        fprintf(stderr, "hrm bench fleet: cannot start the master\n");
        return CLI_FAIL;
    }
    char endpoint[800];
    snprintf(endpoint, sizeof(endpoint), "%s/endpoint", o->state);
    for (double end = fleet_mono_s() + 20; access(endpoint, F_OK) != 0; fleet_nap_s(0.02))
        if (fleet_mono_s() > end || waitpid(o->master, NULL, WNOHANG) != 0) {
            fprintf(stderr, "hrm bench fleet: the master did not start; see %s/master.log\n",
                    o->logs);
            return CLI_FAIL;
        }
    for (long long i = 0; i < o->scheds; i++) {
        char name[32];
        snprintf(name, sizeof(name), "s%lld", i + 1);
        char *argv[] = {"hrm", "sched", "--state", o->state, "--name", name, "--instances", "2",
                        NULL};
        o->sched[i] = spawn_logged(o, argv, "sched.log");
    }
    double t0 = fleet_mono_s();
    for (int k = 0; k < o->nfleets; k++) {
        char count[32], cpus[32], prefix[32];
        snprintf(count, sizeof(count), "%lld", fleet_count(o, k));
        snprintf(cpus, sizeof(cpus), "%lld", o->cpus);
        fleet_prefix(k, prefix, sizeof(prefix));
        char *fargv[] = {"hrm", "agent", "--simulate-exec", "--count", count, "--name-prefix",
                         prefix, "--state", o->state, "--cpus", cpus, "--mem", "64G",
                         "--log-level", "warning", NULL};
        o->fleets[k] = spawn_logged(o, fargv, "fleet.log");
    }
    struct client_opts co;
    client_opts_init(&co);
    co.state = o->state;
    struct client *c = client_open(&co);
    if (!c)
        return CLI_FAIL;
    long long up = 0;
    while ((up = nodes_up(c)) < o->agents && fleet_mono_s() - t0 < 120 && !fleet_interrupted &&
           fleets_alive(o))
        fleet_nap_s(0.1);
    double register_s = fleet_mono_s() - t0, n0 = fleet_mono_s();
    nodes_up(c);
    double nodes_ms = (fleet_mono_s() - n0) * 1000; /* one listing of every node */
    if (up < o->agents) {
        fprintf(stderr, "hrm bench fleet: %lld of %lld agents registered in 120 s; see %s\n", up,
                o->agents, o->logs);
        client_close(c);
        return CLI_FAIL;
    }
    if (o->nqueued > 0) {
        double load[3] = {0};
        if (getloadavg(load, 3) < 0)
            load[0] = -1;
        printf("fleet: %lld simulated agents x %lld cpus, policy %s, tasks of %.0f ms, backlog in "
               "jobs of %lld, window %.0f s; host load average %.1f (%ld CPUs)\n",
               o->agents, o->cpus, o->policy, o->task_s * 1000, o->per_job, o->window_s, load[0],
               sysconf(_SC_NPROCESSORS_ONLN));
        fflush(stdout);
        int qrc = fleet_queued_series(o, c);
        client_close(c);
        return qrc < 0 ? CLI_FAIL : CLI_OK;
    }
    /* Idle: what heartbeats and usage reports alone cost the master. */
    fleet_nap_s(1.0);
    double c0 = fleet_proc_cpu_s(o->master), w0 = fleet_mono_s();
    fleet_nap_s(3.0);
    double hb_us = (fleet_proc_cpu_s(o->master) - c0) * 1e6 / ((fleet_mono_s() - w0) * 2.0 * (double)o->agents);
    long long rss_idle = hrm_proc_rss_kb(o->master);
    struct run_stats idle = {.lat_us = hrm_calloc(IDLE_JOBS * IDLE_TASKS, sizeof(long long))};
    if (idle_starts(c, o, &idle) < 0) {
        fprintf(stderr, "hrm bench fleet: the idle-cluster series did not finish in 120 s\n");
        hrm_free(idle.lat_us);
        client_close(c);
        return CLI_FAIL;
    }
    /* The load: every task at once. */
    long long njobs = (o->tasks + o->per_job - 1) / o->per_job;
    long long last = o->tasks - (njobs - 1) * o->per_job;
    long long *ids = hrm_calloc((size_t)njobs, sizeof(*ids));
    char arg[32];
    snprintf(arg, sizeof(arg), "%.3f", o->task_s);
    double cpu0 = fleet_proc_cpu_s(o->master);
    if (fleet_submit_jobs(c, njobs, o->per_job, last, arg, ids) < njobs) {
        fprintf(stderr, "hrm bench fleet: not every job was accepted\n");
        hrm_free(ids);
        hrm_free(idle.lat_us);
        client_close(c);
        return CLI_FAIL;
    }
    long long rss_kb = 0, jl[4096], njl = 0;
    if (wait_done(c, ids, njobs, o->master, o->jobs_every_s, &rss_kb, jl, &njl, 4096) < 0) {
        fprintf(stderr, "hrm bench fleet: the jobs did not finish within 600 s\n");
        hrm_free(ids);
        hrm_free(idle.lat_us);
        client_close(c);
        return CLI_FAIL;
    }
    double cpu_s = fleet_proc_cpu_s(o->master) - cpu0;
    struct run_stats s = {.lat_us = hrm_calloc((size_t)o->tasks, sizeof(long long))};
    int rc = read_starts(c, ids, njobs, &s);
    qsort(jl, (size_t)njl, sizeof(*jl), fleet_cmp_ll);
    double window = s.last_start_s - s.first_submit_s;
    double rate = window > 0 ? (double)s.nlat / window : 0;
    double rec_cpu[2] = {0};
    double rec = o->reconcile ? measure_reconcile(o, &c, rec_cpu) : -2;
    double load[3] = {0};
    if (getloadavg(load, 3) < 0)
        load[0] = -1;
    printf("fleet: %lld simulated agents x %lld cpus, policy %s%s, %lld tasks of %.0f ms in %lld "
           "jobs; host load average %.1f (%ld CPUs)\n", o->agents, o->cpus, o->policy,
           o->scheds ? " (scheduler processes)" : "", o->tasks, o->task_s * 1000, njobs, load[0],
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("BENCH fleet.register_s %.2f s\n", register_s);
    printf("BENCH fleet.heartbeat_cpu_us %.1f us\n", hb_us);
    printf("BENCH fleet.nodes_list_ms %.1f ms\n", nodes_ms);
    printf("BENCH fleet.master_rss_idle_mb %.1f MB\n", (double)rss_idle / 1024);
    printf("BENCH fleet.idle_start_p50_ms %.1f ms\n",
           (double)fleet_pct(idle.lat_us, idle.nlat, 0.5) / 1000);
    printf("BENCH fleet.idle_start_p99_ms %.1f ms\n",
           (double)fleet_pct(idle.lat_us, idle.nlat, 0.99) / 1000);
    printf("BENCH fleet.placements_per_s %.0f tasks/s\n", rate);
    printf("BENCH fleet.start_p50_ms %.1f ms\n", (double)fleet_pct(s.lat_us, s.nlat, 0.5) / 1000);
    printf("BENCH fleet.start_p99_ms %.1f ms\n", (double)fleet_pct(s.lat_us, s.nlat, 0.99) / 1000);
    printf("BENCH fleet.master_cpu_ms_per_1k %.1f ms\n", cpu_s * 1e6 / (double)o->tasks);
    printf("BENCH fleet.master_rss_mb %.1f MB\n", (double)rss_kb / 1024);
    printf("BENCH fleet.jobs_p99_ms %.1f ms\n", (double)fleet_pct(jl, njl, 0.99) / 1000);
    printf("BENCH fleet.jobs_max_ms %.1f ms\n", njl ? (double)jl[njl - 1] / 1000 : 0);
    if (rec >= 0) {
        printf("BENCH fleet.reconcile_s %.2f s\n", rec);
        printf("BENCH fleet.reconcile_master_cpu_s %.2f s\n", rec_cpu[0]);
        printf("BENCH fleet.reconcile_agents_cpu_s %.2f s\n", rec_cpu[1]);
    }
    else if (rec == -1)
        printf("fleet: reconcile: not measured (the master did not reconcile in 120 s)\n");
    print_anchors();
    hrm_free(s.lat_us);
    hrm_free(idle.lat_us);
    hrm_free(ids);
    client_close(c);
    return rc < 0 || rec == -1 ? CLI_FAIL : CLI_OK;
}

int bench_fleet(int argc, char **argv)
{
    struct fopts o = {.agents = 5000, .tasks = 100000, .per_job = 10000, .cpus = 4,
                      .per_process = 2500,
                      .task_s = 0.2, .window_s = 10, .jobs_every_s = 0.2, .policy = "drf",
                      .reconcile = true};
    int p = parse(&o, argc, argv);
    if (p != 0)
        return p > 0 ? CLI_OK : CLI_USAGE;
    ssize_t n = o.self[0] ? (ssize_t)strlen(o.self)
                          : readlink("/proc/self/exe", o.self, sizeof(o.self) - 1);
    if (n <= 0) {
        fprintf(stderr, "hrm bench fleet: cannot find this executable\n");
        return CLI_FAIL;
    }
    o.self[n] = '\0';
    if (!o.state[0]) {
        snprintf(o.state, sizeof(o.state), "/tmp/hrm-fleet-XXXXXX");
        if (!mkdtemp(o.state)) {
            fprintf(stderr, "hrm bench fleet: mkdtemp: %s\n", strerror(errno));
            return CLI_FAIL;
        }
    } else if (mkdir(o.state, 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "hrm bench fleet: --state %s: %s\n", o.state, strerror(errno));
        return CLI_USAGE;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    int rc = run(&o);
    for (int k = 0; k < o.nfleets; k++)
        stop_pid(&o.fleets[k], SIGTERM);
    for (long long i = 0; i < o.scheds; i++)
        stop_pid(&o.sched[i], SIGTERM);
    stop_pid(&o.master, SIGTERM);
    if (rc != CLI_OK || o.keep)
        fprintf(stderr, "hrm bench fleet: logs in %s\n", o.state);
    else
        bench_remove_tree(o.state);
    return rc;
}
