/* hrm up: a whole cluster on this machine (master and N agents on 127.0.0.1) in the foreground; Ctrl-C stops it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "hrm/alloc.h"
#include "hrm/daemon.h"
#include "hrm/dsetup.h"
#include "hrm/log.h"
#include "hrm/transport.h"
#include "hrm/units.h"
#include "hrm/wire.h"
#include "up.h"

#define START_TIMEOUT_S 20

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Starts `hrm ARGS...` with stdout/stderr appended to logfile.  The daemon gets
 * SIGTERM when this process dies, even by SIGKILL: no cluster outlives its hrm up. */
static pid_t spawn(const struct up_cluster *u, char *const args[], const char *logfile)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* The parent may have died before prctl: then it never signals us. */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
        _exit(127);
    int fd = open(logfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0)
        dup2(null, 0);
    setpgid(0, 0); /* a terminal's Ctrl-C reaches hrm up, which stops the others in order */
    execv(u->self, args);
    _exit(127);
}

/* The last non-empty line of a daemon's log: its own reason when it exits early. */
static void last_log_line(const char *path, char *out, size_t len)
{
    snprintf(out, len, "(no log in %.900s)", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096];
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0;
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, from);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    char *line = strrchr(buf, '\n');
    snprintf(out, len, "%.1000s", line ? line + 1 : buf);
}

static void describe_status(int st, char *out, size_t len)
{
    if (WIFEXITED(st))
        snprintf(out, len, "exited with status %d", WEXITSTATUS(st));
    else
        snprintf(out, len, "was killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Says which daemon ended and why, in its own words (the last line of its log). */
static void report_exit(const struct up_cluster *u, const char *who, const char *name, pid_t pid,
                        int st)
{
    char path[1300], line[1024], how[64];
    snprintf(path, sizeof(path), "%s/%s.log", u->logs, name);
    last_log_line(path, line, sizeof(line));
    describe_status(st, how, sizeof(how));
    fprintf(stderr, "%s: %s (pid %d) %s: %s\n", who, name, (int)pid, how, line);
}

/* Reaps one daemon if it ended: reports it and zeroes *pid.  True if it did. */
static bool reaped(const struct up_cluster *u, const char *who, const char *name, pid_t *pid)
{
    int st;
    if (*pid <= 0 || waitpid(*pid, &st, WNOHANG) != *pid)
        return false;
    report_exit(u, who, name, *pid, st);
    *pid = 0;
    return true;
}

/* Reaps every daemon that ended (reporting each); true if any did. */
static bool any_exited(struct up_cluster *u, const char *who)
{
    bool any = reaped(u, who, "master", &u->master);
    char name[32];
    for (int i = 0; i < u->nodes; i++) {
        snprintf(name, sizeof(name), "node%d", i + 1);
        any |= reaped(u, who, name, &u->agents[i]);
    }
    for (int i = 0; i < u->sched_procs; i++) {
        snprintf(name, sizeof(name), "sched%d", i + 1);
        any |= reaped(u, who, name, &u->scheds[i]);
    }
    return any;
}

static int stop_child(pid_t pid, double grace_s)
{
    if (pid <= 0)
        return 0;
    kill(pid, SIGTERM);
    double end = cli_mono_s() + grace_s;
    int st;
    while (cli_mono_s() < end) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD))
            return 0;
        nap_ms(20);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

void up_stop(struct up_cluster *u)
{
    /* Agents first (they stop their tasks), then the master. */
    for (int i = 0; i < u->nodes; i++)
        if (u->agents[i] > 0)
            kill(u->agents[i], SIGTERM);
    for (int i = 0; i < u->nodes; i++) {
        stop_child(u->agents[i], 5);
        u->agents[i] = 0;
    }
    for (int i = 0; i < u->sched_procs; i++) {
        stop_child(u->scheds[i], 5);
        u->scheds[i] = 0;
    }
    stop_child(u->master, 5);
    u->master = 0;
    u->restart_at_s = 0;
    if (u->lock_fd >= 0)
        close(u->lock_fd);
    u->lock_fd = -1;
}

static int nodes_up(const struct up_cluster *u)
{
    struct client_opts o;
    client_opts_init(&o);
    o.state = u->state;
    o.timeout_s = 2;
    /* Quietly: the master may not listen yet. */
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    struct client *c = client_open(&o);
    int n = -1, code;
    json_t *req = hrm_wire_new(HRM_WIRE_NODES);
    json_t *r = c ? client_call(c, req, &code) : NULL;
    json_decref(req);
    dup2(saved, 2);
    close(saved);
    close(null);
    if (r) {
        n = 0;
        size_t i;
        const json_t *nd;
        json_array_foreach(json_object_get(r, "nodes"), i, nd)
            n += strcmp(json_string_value(json_object_get(nd, "state")), "up") == 0;
        json_decref(r);
    }
    client_close(c);
    return n;
}

/* Each node gets a key of its own (agent-nodeN.key, bound to its name): one
 * shared agent key would let any node register as another. */
static int up_node_keys(const struct up_cluster *u, const char *who)
{
    char dir[1100], path[1200];
    snprintf(dir, sizeof(dir), "%.1000s/keys", u->state);
    for (int i = 0; i < u->nodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "node%d", i + 1);
        snprintf(path, sizeof(path), "%s/agent-%s.key", dir, name);
        struct hrm_error err;
        if (access(path, F_OK) != 0 && hrm_keys_add_node(dir, name, false, &err) < 0) {
            fprintf(stderr, "%s: %s\n", who, err.text);
            return -1;
        }
    }
    return 0;
}

void up_init(struct up_cluster *u)
{
    memset(u, 0, sizeof(*u));
    u->racks = 2;
    u->cpus = "4";
    u->mem = "8G";
    u->gpus = "0";
    u->gpu_mem = "16G";
    u->http = "127.0.0.1:0";
    u->state = getenv("HRM_STATE") && *getenv("HRM_STATE") ? getenv("HRM_STATE") : ".hrm";
    u->lock_fd = -1;
}

/* Starts the master with hrm up's options; its log is DIR/logs/master.log. */
/* Scheduler process i (sched1 ...), which registers under its name: a restart gets its
 * instance numbers back, and the master hands it jobs again. */
static void start_sched(struct up_cluster *u, int i)
{
    char name[32], a_state[1100], a_log[1300];
    snprintf(name, sizeof(name), "sched%d", i + 1);
    snprintf(a_state, sizeof(a_state), "%s", u->state);
    char *sargs[16] = {"hrm",        "sched", "--state", a_state, "--name", name,
                       "--instances", u->sched_inst};
    int sk = 8;
    if (u->log_level)
        sargs[sk++] = "--log-level", sargs[sk++] = (char *)u->log_level;
    char a_trace[1100];
    if (u->trace) { /* beside the master's: FILE.sched1 ... */
        snprintf(a_trace, sizeof(a_trace), "%.1000s.%s", u->trace, name);
        sargs[sk++] = "--trace", sargs[sk++] = a_trace;
    }
    sargs[sk] = NULL;
    snprintf(a_log, sizeof(a_log), "%s/%s.log", u->logs, name);
    u->scheds[i] = spawn(u, sargs, a_log);
    u->sched_since_s[i] = cli_mono_s();
}

/* Backoff before restart number `restarts` + 1: 0.25 s .. 4 s; -1 past the budget. */
static double restart_backoff(int *restarts, double since_s, double now)
{
    if (now - since_s >= UP_STABLE_S)
        *restarts = 0;
    if (*restarts >= UP_MAX_RESTARTS)
        return -1;
    return 0.25 * (double)(1 << (*restarts)++);
}

/* Scheduler processes that died come back after the master's backoff; one that keeps
 * dying is given up (its jobs go to the other processes). */
static void supervise_scheds(struct up_cluster *u, const char *who, double now)
{
    for (int i = 0; i < u->sched_procs; i++) {
        if (u->scheds[i] > 0)
            continue;
        if (u->sched_restart_at_s[i] > 0) {
            if (now >= u->sched_restart_at_s[i]) {
                u->sched_restart_at_s[i] = 0;
                start_sched(u, i);
                fprintf(stderr, "%s: sched%d restarted (pid %d)\n", who, i + 1,
                        (int)u->scheds[i]);
            }
            continue;
        }
        if (u->sched_restarts[i] > UP_MAX_RESTARTS)
            continue; /* given up already */
        double backoff = restart_backoff(&u->sched_restarts[i], u->sched_since_s[i], now);
        if (backoff < 0) {
            fprintf(stderr, "%s: sched%d died %d times in a row; not restarted\n", who, i + 1,
                    UP_MAX_RESTARTS + 1);
            u->sched_restarts[i] = UP_MAX_RESTARTS + 1;
            continue;
        }
        u->sched_restart_at_s[i] = now + backoff;
        fprintf(stderr, "%s: restarting sched%d in %.2f s (restart %d of at most %d in a row)\n",
                who, i + 1, backoff, u->sched_restarts[i], UP_MAX_RESTARTS);
    }
}

static void start_master(struct up_cluster *u)
{
    char *margs[80] = {"hrm", "master", "--state", (char *)u->state};
    int k = 4;
    if (u->policy)
        margs[k++] = "--policy", margs[k++] = (char *)u->policy;
    for (int i = 0; i < u->nparams; i++)
        margs[k++] = "--param", margs[k++] = (char *)u->params[i];
    for (int i = 0; i < u->nexec_queues; i++)
        margs[k++] = "--exec-queue", margs[k++] = (char *)u->exec_queues[i];
    if (u->sched_procs > 0) /* the instances run in the scheduler processes only */
        margs[k++] = "--local-instances", margs[k++] = "0";
    if (u->node_timeout)
        margs[k++] = "--node-timeout", margs[k++] = (char *)u->node_timeout;
    if (u->http && strcmp(u->http, "off") != 0)
        margs[k++] = "--http", margs[k++] = (char *)u->http;
    if (u->log_level)
        margs[k++] = "--log-level", margs[k++] = (char *)u->log_level;
    if (u->trace)
        margs[k++] = "--trace", margs[k++] = (char *)u->trace;
    margs[k] = NULL;
    char log[1300];
    snprintf(log, sizeof(log), "%s/master.log", u->logs);
    u->master = spawn(u, margs, log);
    u->master_since_s = cli_mono_s();
}

/* One hrm up per folder, and none beside a master started on its own: both
 * would run a second master on the same hrm.db.  Checked before anything in
 * the folder changes (keys, endpoint). */
static int lock_state(struct up_cluster *u, const char *who)
{
    struct hrm_error err;
    u->lock_fd = hrm_state_lock(u->state, HRM_UP_LOCK_FILE, "hrm up", &err);
    if (u->lock_fd < 0) {
        fprintf(stderr, "%s: %s\n", who, err.text);
        return -1;
    }
    int probe = hrm_state_lock(u->state, HRM_MASTER_LOCK_FILE, "the master", &err);
    if (probe < 0) {
        fprintf(stderr, "%s: %s\n", who, err.text);
        close(u->lock_fd);
        u->lock_fd = -1;
        return -1;
    }
    close(probe); /* free: the master this hrm up starts takes it for its life */
    return 0;
}

int up_start(struct up_cluster *u, const char *who)
{
    if (u->racks < 1)
        u->racks = 1;
    ssize_t n = readlink("/proc/self/exe", u->self, sizeof(u->self) - 1);
    if (n <= 0) {
        fprintf(stderr, "%s: cannot find its own executable\n", who);
        return -1;
    }
    u->self[n] = '\0';
    char path[1200];
    if (mkdir(u->state, 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "%s: %s: %s\n", who, u->state, strerror(errno));
        return -1;
    }
    if (lock_state(u, who) < 0)
        return -1;
    snprintf(path, sizeof(path), "%.1000s/keys/master.key", u->state);
    if (access(path, R_OK) != 0) {
        struct hrm_error err;
        snprintf(path, sizeof(path), "%.1000s/keys", u->state);
        if (hrm_keys_generate(path, false, NULL, &err) < 0) {
            fprintf(stderr, "%s: %s\n", who, err.text);
            up_stop(u);
            return -1;
        }
    } else if (u->sched_procs > 0) { /* a key folder made before scheduler processes existed */
        struct hrm_error err;
        snprintf(path, sizeof(path), "%.1000s/keys", u->state);
        if (hrm_keys_add_scheduler(path, &err) < 0) {
            fprintf(stderr, "%s: %s\n", who, err.text);
            up_stop(u);
            return -1;
        }
    }
    if (up_node_keys(u, who) < 0)
        return -1;
    snprintf(u->logs, sizeof(u->logs), "%.1000s/logs", u->state);
    mkdir(u->logs, 0700);
    snprintf(path, sizeof(path), "%.1000s/endpoint", u->state);
    unlink(path); /* a stale one would point the agents at a dead master */

    char a_state[1100], a_log[1300];
    snprintf(a_state, sizeof(a_state), "%s", u->state);
    start_master(u);
    double deadline = cli_mono_s() + START_TIMEOUT_S;
    while (access(path, R_OK) != 0 && cli_mono_s() < deadline) {
        if (any_exited(u, who)) {
            up_stop(u);
            return -1;
        }
        nap_ms(20);
    }
    for (int i = 0; i < u->nodes; i++) {
        char name[32], rack[32];
        snprintf(name, sizeof(name), "node%d", i + 1);
        snprintf(rack, sizeof(rack), "r%d", i % u->racks + 1);
        /* 16 fixed, log level 2, --no-cgroup 1, task flags 8, --speed and --disk-bps 4, NULL */
        char *aargs[32] = {"hrm",    "agent", "--state", a_state, "--name", name,
                           "--rack", rack,    "--cpus",  (char *)u->cpus, "--mem", (char *)u->mem,
                           "--gpus", (char *)u->gpus, "--gpu-mem", (char *)u->gpu_mem};
        int ak = 16;
        if (u->log_level)
            aargs[ak++] = "--log-level", aargs[ak++] = (char *)u->log_level;
        if (u->no_cgroup)
            aargs[ak++] = "--no-cgroup";
        const struct {
            const char *flag, *value;
        } task_flags[] = {{"--usage-period", u->usage_period},
                          {"--max-output", u->max_output},
                          {"--output-retention", u->output_retention},
                          {"--task-pids", u->task_pids}};
        for (size_t f = 0; f < sizeof(task_flags) / sizeof(task_flags[0]); f++)
            if (task_flags[f].value)
                aargs[ak++] = (char *)task_flags[f].flag, aargs[ak++] = (char *)task_flags[f].value;
        char speed[32], bps[32];
        ak += up_node_perf_args(u, i, aargs + ak, speed, bps);
        aargs[ak] = NULL;
        snprintf(a_log, sizeof(a_log), "%s/%s.log", u->logs, name);
        u->agents[i] = spawn(u, aargs, a_log);
    }
    if (u->sched_procs > 0) {
        /* The policy's instances, shared out over the processes. */
        long total = 10;
        double now = cli_mono_s();
        for (int i = 0; i < u->nparams; i++)
            if (strncmp(u->params[i], "instances=", 10) == 0)
                total = strtol(u->params[i] + 10, NULL, 10);
        if (total < 1 || total > 4096)
            total = 10; /* the master refuses it with the reason */
        long per = (total + u->sched_procs - 1) / u->sched_procs;
        snprintf(u->sched_inst, sizeof(u->sched_inst), "%d", (int)per);
        for (int i = 0; i < u->sched_procs; i++) {
            start_sched(u, i);
            u->sched_restarts[i] = 0;
            u->sched_restart_at_s[i] = 0;
            u->sched_since_s[i] = now;
        }
    }
    int up = 0;
    while ((up = nodes_up(u)) < u->nodes && cli_mono_s() < deadline) {
        if (any_exited(u, who)) { /* its own reason, at once, rather than a timeout */
            up_stop(u);
            return -1;
        }
        nap_ms(50);
    }
    if (up < u->nodes) {
        fprintf(stderr, "%s: only %d of %d nodes came up within %d s; see %s\n", who,
                up < 0 ? 0 : up, u->nodes, START_TIMEOUT_S, u->logs);
        up_stop(u);
        return -1;
    }
    return 0;
}

int up_supervise(struct up_cluster *u, const char *who)
{
    double now = cli_mono_s();
    if (u->restart_at_s > 0) {
        if (now < u->restart_at_s)
            return 0;
        u->restart_at_s = 0;
        start_master(u);
        fprintf(stderr, "%s: master restarted (pid %d)\n", who, (int)u->master);
        return 0;
    }
    bool had_master = u->master > 0;
    any_exited(u, who); /* agents are reported, not restarted */
    supervise_scheds(u, who, now);
    if (!had_master || u->master > 0)
        return 0;
    /* The master died: its state is durable and the agents keep their tasks
     * and reconnect, so a new master resumes the cluster (runtime.md). */
    double backoff = restart_backoff(&u->restarts, u->master_since_s, now);
    if (backoff < 0) {
        fprintf(stderr, "%s: the master died %d times in a row; giving up\n", who,
                u->restarts + 1);
        return -1;
    }
    u->restart_at_s = now + backoff;
    fprintf(stderr, "%s: restarting the master in %.2f s (restart %d of at most %d in a row)\n",
            who, backoff, u->restarts, UP_MAX_RESTARTS);
    return 0;
}

/* The agents' and the master's flags that hrm up passes on, checked as they
 * check them: a bad one is named here, not found in a log after a timeout. */
static int check_daemon_flags(const struct up_cluster *u)
{
    int64_t v;
    long long n;
    if (hrm_parse_cpu(u->cpus, &v) < 0 || v < 1000 || v % 1000 != 0) {
        fprintf(stderr, "hrm up: --cpus: '%s': expected a whole number of CPUs >= 1\n", u->cpus);
        return -1;
    }
    if (hrm_parse_size(u->mem, &v) < 0 || v <= 0) {
        fprintf(stderr, "hrm up: --mem: '%s': expected a size like 16G\n", u->mem);
        return -1;
    }
    if (cli_parse_int("up", "--gpus", u->gpus, 0, 32, &n) < 0)
        return -1;
    if (hrm_parse_size(u->gpu_mem, &v) < 0 || v <= 0) {
        fprintf(stderr, "hrm up: --gpu-mem: '%s': expected a size like 16G\n", u->gpu_mem);
        return -1;
    }
    if (u->node_timeout && (hrm_parse_duration(u->node_timeout, &v) < 0 || v <= 0)) {
        fprintf(stderr, "hrm up: --node-timeout: '%s': expected a duration like 5s or 500ms\n",
                u->node_timeout);
        return -1;
    }
    if (u->log_level && hrm_log_parse_level(u->log_level) < 0) {
        fprintf(stderr, "hrm up: --log-level: '%s': expected emerg..debug\n", u->log_level);
        return -1;
    }
    if (up_node_perf_check(u) < 0)
        return -1;
    /* The agents' task flags, through the agent's own parser. */
    struct hrm_agent_config scratch = {0};
    if ((u->usage_period && cli_agent_task_flag(&scratch, 'U', u->usage_period) < 0) ||
        (u->max_output && cli_agent_task_flag(&scratch, 'O', u->max_output) < 0) ||
        (u->output_retention && cli_agent_task_flag(&scratch, 'R', u->output_retention) < 0) ||
        (u->task_pids && cli_agent_task_flag(&scratch, 'P', u->task_pids) < 0))
        return -1;
    return 0;
}

static void up_usage(FILE *out)
{
    fprintf(out,
            "usage: hrm up --nodes N [options] [-- CMD ARGS...]\n\n"
            "Runs a cluster on this machine in the foreground: a master and N agents with\n"
            "virtual capacities spread over racks, all on 127.0.0.1, state in DIR.  A\n"
            "central policy schedules inside the master; a distributed one (dhrm,\n"
            "dhrm-batch, dhrm-nego, sparrow, d-random) runs its scheduler instances and\n"
            "negotiator in the master and an execution queue system in every agent;\n"
            "hrm-shared runs shared-state scheduler instances in hrm sched processes that\n"
            "commit their placements to the master.\n"
            "Ctrl-C (SIGINT/SIGTERM) stops everything.  With CMD, runs it once the cluster is up (HRM_STATE set), then\n"
            "stops the cluster and exits with CMD's status.\n\noptions:\n"
            "  -n, --nodes N       agents to start (1..%d)\n"
            "  --state DIR         state folder (default $HRM_STATE, else .hrm); keys are\n"
            "                      created in DIR/keys if missing; logs in DIR/logs\n"
            "  --cpus N            CPUs each agent declares (default 4)\n"
            "  --mem SIZE          memory each agent declares (default 8G)\n"
            "  --gpus N            virtual GPUs per agent (default 0)\n"
            "  --gpu-mem SIZE      memory of each virtual GPU (default 16G)\n"
            "  --racks R           spread agents over R racks (default 2)\n"
            "  --policy NAME       the master's policy (default drf)\n"
            "  --param KEY=VALUE   a policy parameter (repeatable, at most 8)\n"
            "  --sched-procs N     run the scheduler instances of a distributed policy in N\n"
            "                      hrm sched processes instead of the master (1..16; with\n"
            "                      --policy hrm-shared they always run there: default 2)\n"
            "  --exec-queue SPEC   an execution queue of every agent (distributed policies;\n"
            "                      NAME[,priority=P][,max=N][,cpus=C][,mem=SIZE]; at most 16)\n"
            "  --node-timeout D    silence after which a node is down (default 5s)\n"
            "  --http ADDR         the master's HTTP API on HOST:PORT (default 127.0.0.1:0,\n"
            "                      a free port, written to DIR/http; off: none)\n"
            "  --log-level L       daemons' log level (default notice)\n"
            "  --no-cgroup         agents never limit tasks with cgroups\n"
            "  --task-pids N       agents' pids.max per task (default 4096; 0: no limit)\n"
            "  --max-output SIZE   agents keep at most SIZE per task output file (default 1G)\n"
            "  --output-retention D  agents remove output of jobs idle for D (default 168h)\n"
            "  --usage-period D    agents' usage sampling period (default 1s)\n"
            "  --node-speed F,...  make agents slower: one share of the host's CPUs in (0, 1]\n"
            "                      per agent, repeated cyclically (e.g. 1,1,0.5,0.25; default\n"
            "                      1: none slowed); each agent measures itself (--bench)\n"
            "  --node-disk-bps R,...  throttle agents' disk writes, one rate per agent,\n"
            "                      cyclic (e.g. 100MB/s,20MB/s; default: none)\n"
            "  -h, --help          this help\n\n"
            "A daemon that exits while the cluster starts stops it at once, with the\n"
            "daemon's reason.  A master or scheduler process that dies later is restarted\n"
            "(at most %d times in a row, after 0.25 s doubling); agents and their tasks\n"
            "live on.  The\n"
            "daemons get SIGTERM if hrm up dies, even by SIGKILL.  A state folder that\n"
            "another hrm up or a live master uses is refused, naming its pid.\n\n"
            "exit status: 0 stopped cleanly (or CMD's status), 1 the cluster did not start\n"
            "or its master could not be kept up, 2 bad usage\n",
            UP_MAX_NODES, UP_MAX_RESTARTS);
}

/* The web page's address with the read-write token in its fragment (the page keeps it and takes
 * it out of the address bar), from what the master wrote: DIR/http and DIR/keys/http.token.  The
 * master writes DIR/http once it listens, before any node can register, so it is there now. */
static void print_http(const struct up_cluster *u, const char *who)
{
    if (!u->http || strcmp(u->http, "off") == 0)
        return;
    char path[1100], url[256] = "", token[256] = "";
    snprintf(path, sizeof(path), "%.1000s/http", u->state);
    FILE *f = fopen(path, "r");
    bool got_url = f && fgets(url, sizeof(url), f);
    if (f)
        fclose(f);
    snprintf(path, sizeof(path), "%.1000s/keys/" HRM_HTTP_TOKEN_FILE, u->state);
    f = fopen(path, "r");
    bool got_token = f && fgets(token, sizeof(token), f);
    if (f)
        fclose(f);
    url[strcspn(url, "\r\n")] = token[strcspn(token, "\r\n")] = '\0';
    if (!got_url || !got_token || !url[0] || !token[0]) {
        fprintf(stderr, "%s: the master's HTTP address or token is missing (%s/http, %s)\n", who,
                u->state, path);
        return;
    }
    fprintf(stderr, "%s: web page %s/#token=%s (HTTP API token: %s)\n", who, url, token, path);
}

int cmd_up(int argc, char **argv)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'},  {"state", required_argument, NULL, 's'},
        {"cpus", required_argument, NULL, 'c'},   {"mem", required_argument, NULL, 'm'},
        {"gpus", required_argument, NULL, 'g'},   {"racks", required_argument, NULL, 'r'},
        {"gpu-mem", required_argument, NULL, 'G'},
        {"policy", required_argument, NULL, 'p'}, {"node-timeout", required_argument, NULL, 't'},
        {"param", required_argument, NULL, 'P'}, {"exec-queue", required_argument, NULL, 'Q'},
        {"sched-procs", required_argument, NULL, 'S'},
        {"log-level", required_argument, NULL, 'L'}, {"no-cgroup", no_argument, NULL, 'C'},
        {"task-pids", required_argument, NULL, 'T'}, {"max-output", required_argument, NULL, 'O'},
        {"output-retention", required_argument, NULL, 'R'},
        {"usage-period", required_argument, NULL, 'U'},
        {"node-speed", required_argument, NULL, 'V'},
        {"node-disk-bps", required_argument, NULL, 'W'},
        {"http", required_argument, NULL, 'H'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct up_cluster u;
    up_init(&u);
    int c;
    long long v;
    while ((c = getopt_long(argc, argv, "+n:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (cli_parse_int("up", "--nodes", optarg, 1, UP_MAX_NODES, &v) < 0)
                return CLI_USAGE;
            u.nodes = (int)v;
            break;
        case 's':
            u.state = optarg;
            break;
        case 'c':
            u.cpus = optarg;
            break;
        case 'm':
            u.mem = optarg;
            break;
        case 'g':
            u.gpus = optarg;
            break;
        case 'G':
            u.gpu_mem = optarg;
            break;
        case 'r':
            if (cli_parse_int("up", "--racks", optarg, 1, UP_MAX_NODES, &v) < 0)
                return CLI_USAGE;
            u.racks = (int)v;
            break;
        case 'p':
            u.policy = optarg;
            break;
        case 'S':
            if (cli_parse_int("up", "--sched-procs", optarg, 1, UP_MAX_SCHEDS, &v) < 0)
                return CLI_USAGE;
            u.sched_procs = (int)v;
            break;
        case 'Q':
            if (u.nexec_queues == (int)(sizeof(u.exec_queues) / sizeof(u.exec_queues[0]))) {
                fprintf(stderr, "hrm up: --exec-queue: at most 16\n");
                return CLI_USAGE;
            }
            u.exec_queues[u.nexec_queues++] = optarg;
            break;
        case 'P':
            if (u.nparams == (int)(sizeof(u.params) / sizeof(u.params[0])) || !strchr(optarg, '=')) {
                fprintf(stderr, "hrm up: --param: expected KEY=VALUE, at most 8 times\n");
                return CLI_USAGE;
            }
            u.params[u.nparams++] = optarg;
            break;
        case 't':
            u.node_timeout = optarg;
            break;
        case 'H':
            u.http = optarg;
            break;
        case 'L':
            u.log_level = optarg;
            break;
        case 'C':
            u.no_cgroup = true;
            break;
        case 'T':
            u.task_pids = optarg;
            break;
        case 'O':
            u.max_output = optarg;
            break;
        case 'R':
            u.output_retention = optarg;
            break;
        case 'U':
            u.usage_period = optarg;
            break;
        case 'V':
            u.node_speed = optarg;
            break;
        case 'W':
            u.node_disk_bps = optarg;
            break;
        case 'h':
            up_usage(stdout);
            return CLI_OK;
        default:
            up_usage(stderr);
            return CLI_USAGE;
        }
    }
    bool shared = u.policy && strcmp(u.policy, "hrm-shared") == 0;
    if (shared && u.sched_procs == 0)
        u.sched_procs = 2; /* hrm-shared's instances run in scheduler processes only */
    bool distributed = hrm_dsetup_known(u.policy);
    const char *needs = u.nexec_queues > 0 && !distributed                 ? "--exec-queue"
                        : u.sched_procs > 0 && !distributed && !shared ? "--sched-procs"
                                                                       : NULL;
    if (needs) {
        fprintf(stderr, "hrm up: %s needs a distributed --policy (dhrm, dhrm-batch, dhrm-nego, "
                        "sparrow, d-random%s)\n",
                needs, strcmp(needs, "--sched-procs") == 0 ? ", or hrm-shared" : "");
        return CLI_USAGE;
    }
    if (check_daemon_flags(&u) < 0)
        return CLI_USAGE;
    if (u.nodes < 1 || u.nodes > UP_MAX_NODES) {
        fprintf(stderr, "hrm up: --nodes: expected 1..%d\n", UP_MAX_NODES);
        return CLI_USAGE;
    }
    /* SIGINT/SIGTERM are read synchronously below; children unblock nothing:
     * the daemons block them again for their signalfd, CMD gets them cleared. */
    sigset_t mask, old;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, &old);
    if (up_start(&u, "hrm up") < 0)
        return CLI_FAIL;
    fprintf(stderr,
            "hrm up: %d nodes (%s CPUs, %s memory, %s GPUs each, %d racks) on 127.0.0.1; "
            "state %s, logs %s\n",
            u.nodes, u.cpus, u.mem, u.gpus, u.racks, u.state, u.logs);
    print_http(&u, "hrm up");
    int rc = CLI_OK;
    if (optind < argc) {
        pid_t cmd = fork();
        if (cmd == 0) {
            sigprocmask(SIG_SETMASK, &old, NULL);
            setenv("HRM_STATE", u.state, 1);
            execvp(argv[optind], argv + optind);
            fprintf(stderr, "hrm up: %s: %s\n", argv[optind], strerror(errno));
            _exit(127);
        }
        for (;;) {
            siginfo_t si;
            struct timespec ts = {0, 200000000};
            int sig = sigtimedwait(&mask, &si, &ts);
            int st;
            if (waitpid(cmd, &st, WNOHANG) == cmd) {
                rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                break;
            }
            if (sig == SIGINT || sig == SIGTERM || up_supervise(&u, "hrm up") < 0) {
                kill(cmd, SIGTERM);
                waitpid(cmd, &st, 0);
                rc = sig == SIGINT || sig == SIGTERM ? 130 : CLI_FAIL;
                break;
            }
        }
    } else {
        fprintf(stderr, "hrm up: export HRM_STATE=%s to use it; Ctrl-C stops the cluster\n",
                u.state);
        for (;;) {
            siginfo_t si;
            struct timespec ts = {0, 200000000};
            int sig = sigtimedwait(&mask, &si, &ts);
            if (sig == SIGINT || sig == SIGTERM)
                break;
            if (up_supervise(&u, "hrm up") < 0) {
                rc = CLI_FAIL;
                break;
            }
        }
    }
    fprintf(stderr, "hrm up: stopping the cluster\n");
    up_stop(&u);
    return rc;
}
