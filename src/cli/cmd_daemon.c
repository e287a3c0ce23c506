/* hrm master, agent, sched, keygen and up: the daemons in the foreground, keys, and a whole local cluster. */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "daemon/nodeperf.h"
#include "hrm/alloc.h"
#include "hrm/daemon.h"
#include "hrm/log.h"
#include "hrm/transport.h"
#include "hrm/units.h"
#include "hrm/wire.h"

#define MAX_PARAMS 64

/* Daemons read SIGINT/SIGTERM (and the agent SIGCHLD) from a signalfd: block
 * them before any thread (ZeroMQ's) exists, so every thread inherits the mask. */
static void block_signals(void)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, NULL);
}

static const char *default_state(void)
{
    const char *s = getenv("HRM_STATE");
    return s && *s ? s : ".hrm";
}

static int parse_level(const char *arg, int *level)
{
    *level = hrm_log_parse_level(arg);
    if (*level < 0) {
        fprintf(stderr, "hrm: --log-level: expected emerg..debug\n");
        return -1;
    }
    return 0;
}

static int parse_dur(const char *flag, const char *arg, int64_t *us)
{
    if (hrm_parse_duration(arg, us) < 0 || *us <= 0) {
        fprintf(stderr, "hrm: %s: '%s': expected a duration like 5s or 500ms\n", flag, arg);
        return -1;
    }
    return 0;
}

/* One flag of a daemon's table (hrm master, agent, sched): its getopt value, and where its value
 * goes; the kind of value is the one field set among text, set, level, us, size, and i32 or i64 (a
 * whole number in lo..hi).  Its name is the getopt_long table's, which lists every flag in the
 * order that settles abbreviations. */
struct daemon_flag {
    int key;
    const char **text; /* the value as given */
    bool *set;         /* a flag without a value: true once given */
    int *level;        /* a log level, emerg..debug */
    int64_t *us;       /* a duration > 0, in microseconds */
    int64_t *size;     /* a size > 0, in bytes ("expected a size like 16G") */
    long long lo, hi;  /* a whole number in lo..hi, into i32 or i64 */
    bool zero_off;     /* ... where 0 is the config's -1 (none, no bound) */
    int32_t *i32;
    int64_t *i64;
};

/* Takes the value arg of f, the flag named flag ("--max-attempts") of hrm cmd: 0, or -1 after
 * saying on stderr why the value is wrong. */
static int daemon_flag_parse(const char *cmd, const struct daemon_flag *f, const char *flag,
                             const char *arg)
{
    if (f->text) {
        *f->text = arg;
    } else if (f->set) {
        *f->set = true;
    } else if (f->level) {
        return parse_level(arg, f->level);
    } else if (f->us) {
        return parse_dur(flag, arg, f->us);
    } else if (f->size) {
        if (hrm_parse_size(arg, f->size) < 0 || *f->size <= 0) {
            fprintf(stderr, "hrm %s: %s: expected a size like 16G\n", cmd, flag);
            return -1;
        }
    } else {
        long long v;
        if (cli_parse_int(cmd, flag, arg, f->lo, f->hi, &v) < 0)
            return -1;
        v = f->zero_off && v == 0 ? -1 : v;
        if (f->i32)
            *f->i32 = (int32_t)v;
        else
            *f->i64 = v;
    }
    return 0;
}

/* getopt_long over hrm cmd's argv (long flags, and -h), taking the flags of flags[0..n) on the
 * way: the next flag the table does not hold ('h' and getopt's '?' included), -1 at the end, or
 * DAEMON_BAD_VALUE after saying why a value is wrong (no flag is that value: a switch's default
 * takes it). */
#define DAEMON_BAD_VALUE (-2)
static int daemon_getopt(const char *cmd, int argc, char **argv, const struct option *opts,
                         const struct daemon_flag *flags, size_t n)
{
    for (;;) {
        int at = -1, c = getopt_long(argc, argv, "h", opts, &at);
        const struct daemon_flag *f = flags;
        while (f < flags + n && f->key != c)
            f++;
        if (c == -1 || f == flags + n || at < 0)
            return c;
        char flag[64];
        snprintf(flag, sizeof(flag), "--%s", opts[at].name);
        if (daemon_flag_parse(cmd, f, flag, optarg) < 0)
            return DAEMON_BAD_VALUE;
    }
}

/* The rows of hrm agent's and hrm sched's tables for where their state and keys are and where the
 * master listens. */
#define DAEMON_PEER_FLAGS(cfg)                                                                     \
    {'s', .text = &(cfg).state_dir}, {'k', .text = &(cfg).keys_dir}, {'m', .text = &(cfg).master}

#define NFLAGS(flags) (sizeof(flags) / sizeof((flags)[0]))

/* The agent's flags for its tasks' output, usage sampling and process limit, shared with hrm up,
 * which checks them before it starts anything: flag is getopt's value ('U' --usage-period,
 * 'O' --max-output, 'R' --output-retention, 'P' --task-pids).  0, or -1 after saying why. */
int cli_agent_task_flag(struct hrm_agent_config *cfg, int flag, const char *arg)
{
    switch (flag) {
    case 'U':
        return parse_dur("--usage-period", arg, &cfg->usage_us);
    case 'O':
        if (hrm_parse_size(arg, &cfg->max_output) < 0 ||
            (cfg->max_output != 0 && cfg->max_output < HRM_AGENT_MAX_OUTPUT_MIN)) {
            fprintf(stderr, "hrm: --max-output: '%s': expected a size of at least 64K, or 0 for "
                            "no limit\n",
                    arg);
            return -1;
        }
        cfg->max_output = cfg->max_output ? cfg->max_output : -1;
        return 0;
    case 'R':
        if (hrm_parse_duration(arg, &cfg->output_retention_us) < 0 ||
            cfg->output_retention_us < 0) {
            fprintf(stderr, "hrm: --output-retention: '%s': expected a duration like 168h or "
                            "30min, or 0 to keep output forever\n",
                    arg);
            return -1;
        }
        cfg->output_retention_us = cfg->output_retention_us ? cfg->output_retention_us : -1;
        return 0;
    case 'P': {
        long long v;
        if (cli_parse_int("agent", "--task-pids", arg, 0, 1 << 22, &v) < 0)
            return -1;
        cfg->task_pids = v == 0 ? -1 : v;
        return 0;
    }
    default:
        return -1;
    }
}

/* The agent's --speed ('S') and --disk-bps ('D'), shared with hrm up's per-agent lists.  0, or
 * -1 after saying why. */
int cli_agent_perf_flag(struct hrm_agent_config *cfg, int flag, const char *arg)
{
    char why[200];
    int rc = flag == 'S' ? nodeperf_parse_speed("--speed", arg, &cfg->speed, why, sizeof(why))
                         : nodeperf_parse_bps("--disk-bps", arg, &cfg->disk_bps, why, sizeof(why));
    if (rc < 0)
        fprintf(stderr, "hrm agent: %s\n", why);
    return rc;
}

int cmd_master(int argc, char **argv)
{
    static const struct option opts[] = {
        {"state", required_argument, NULL, 's'},   {"keys", required_argument, NULL, 'k'},
        {"listen", required_argument, NULL, 'l'},  {"policy", required_argument, NULL, 'p'},
        {"param", required_argument, NULL, 'P'},   {"max-attempts", required_argument, NULL, 'a'},
        {"node-timeout", required_argument, NULL, 't'},
        {"reconcile", required_argument, NULL, 'r'}, {"log-level", required_argument, NULL, 'L'},
        {"compact-tasks", required_argument, NULL, 'C'},
        {"exec-queue", required_argument, NULL, 'Q'},
        {"local-instances", required_argument, NULL, 'I'},
        {"max-waits", required_argument, NULL, 'W'},
        {"events-keep", required_argument, NULL, 'E'},
        {"events-max-age", required_argument, NULL, 'A'},
        {"http", required_argument, NULL, 'H'},
        {"http-max-conns", required_argument, NULL, 'N'},
        {"http-timeout", required_argument, NULL, 'O'},
        {"http-max-body", required_argument, NULL, 'B'},
        {"trace", required_argument, NULL, 'T'},
        {"max-pass-starts", required_argument, NULL, 'S'},
        {"eta-turn-rows", required_argument, NULL, 'R'},
        {"snapshot-max-age", required_argument, NULL, 'G'},
        {"group-commit", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    struct hrm_master_config cfg = {.state_dir = default_state()};
    const char *params[MAX_PARAMS], *queues[MAX_PARAMS];
    int level = HRM_LOG_NOTICE, c;
    const struct daemon_flag flags[] = {
        {'s', .text = &cfg.state_dir}, {'k', .text = &cfg.keys_dir}, {'l', .text = &cfg.listen},
        {'p', .text = &cfg.policy}, {'H', .text = &cfg.http}, {'T', .text = &cfg.trace_path},
        {'L', .level = &level}, {'t', .us = &cfg.node_timeout_us}, {'r', .us = &cfg.reconcile_us},
        {'A', .us = &cfg.events_max_age_us}, {'G', .us = &cfg.snapshot_max_age_us},
        {'a', .lo = 1, .hi = 1000000, .i32 = &cfg.max_attempts},
        {'I', .lo = 0, .hi = 4096, .zero_off = true, .i32 = &cfg.local_instances},
        {'C', .lo = 1, .hi = INT32_MAX, .i32 = &cfg.compact_tasks},
        {'S', .lo = 0, .hi = INT32_MAX, .zero_off = true, .i32 = &cfg.max_pass_starts},
        {'R', .lo = 1, .hi = 1000000000, .i64 = &cfg.eta_turn_rows},
        {'W', .lo = 1, .hi = 10000000, .i32 = &cfg.max_waits},
        {'E', .lo = 1, .hi = INT64_MAX / 2, .i64 = &cfg.events_keep},
        {'N', .lo = 1, .hi = 100000, .i32 = &cfg.http_conn_limit},
    };
    while ((c = daemon_getopt("master", argc, argv, opts, flags, NFLAGS(flags))) != -1) {
        switch (c) { /* DAEMON_BAD_VALUE: default */
        case 'P':
            if (cfg.nparams == MAX_PARAMS)
                return CLI_USAGE;
            params[cfg.nparams++] = optarg;
            break;
        case 'Q':
            if (cfg.nexec_queues == MAX_PARAMS) {
                fprintf(stderr, "hrm master: --exec-queue: at most %d\n", MAX_PARAMS);
                return CLI_USAGE;
            }
            queues[cfg.nexec_queues++] = optarg;
            break;
        case 'g': /* 0: every turn syncs (the config's -1; its 0 is the default) */
            if (strcmp(optarg, "0") == 0)
                cfg.group_commit_us = -1;
            else if (parse_dur("--group-commit", optarg, &cfg.group_commit_us) < 0)
                return CLI_USAGE;
            break;
        case 'O':
        {
            int64_t us;
            if (parse_dur("--http-timeout", optarg, &us) < 0)
                return CLI_USAGE;
            if (us < 1000000 || us > 86400LL * 1000000) {
                fprintf(stderr, "hrm master: --http-timeout: expected 1s..24h\n");
                return CLI_USAGE;
            }
            cfg.http_timeout_s = (int32_t)(us / 1000000);
            break;
        }
        case 'B':
            if (hrm_parse_size(optarg, &cfg.http_body_max) < 0 || cfg.http_body_max < 1024 ||
                cfg.http_body_max > ((int64_t)1 << 30)) {
                fprintf(stderr, "hrm master: --http-max-body: expected a size in 1K..1G, like "
                                "4M\n");
                return CLI_USAGE;
            }
            break;
        case 'h':
            printf("usage: hrm master [options]\n\n"
                   "Runs the master in the foreground: job table in DIR/hrm.db (SQLite, WAL),\n"
                   "the scheduler, and a CURVE-encrypted ZeroMQ endpoint written to\n"
                   "DIR/endpoint.  SIGINT/SIGTERM stop it; a restart resumes from DIR.\n\noptions:\n"
                   "  --state DIR         state folder (default $HRM_STATE, else .hrm)\n"
                   "  --keys DIR          keys (default DIR/keys; create with hrm keygen)\n"
                   "  --listen ADDR       ZeroMQ endpoint (default tcp://127.0.0.1:*, a free port)\n"
                   "  --policy NAME       scheduling policy (default drf; see hrm sim --list-policies):\n"
                   "                      a central one runs in the master; d-random, sparrow,\n"
                   "                      dhrm, dhrm-batch or dhrm-nego run scheduler instances\n"
                   "                      here and execution queues in the agents; hrm-shared\n"
                   "                      runs its instances in hrm sched processes only and\n"
                   "                      validates their claims here\n"
                   "  --param KEY=VALUE   policy parameter (repeatable)\n"
                   "  --max-attempts N    runs of a task before its failure is final (default 1)\n"
                   "  --node-timeout D    silence after which a node is down (default 5s)\n"
                   "  --reconcile D       after a restart, wait this long for agents (default 5s)\n"
                   "  --max-pass-starts N tasks one scheduling pass may start (default 500; 0: no\n"
                   "                      bound); the rest start in the next pass, which comes\n"
                   "                      at once, after the clients' requests waiting then\n"
                   "  --eta-turn-rows N   waiting-table rows a listing's estimate walk visits\n"
                   "                      per turn (default 20000): hrm jobs is answered from\n"
                   "                      the last walk while a new one runs over the turns\n"
                   "  --snapshot-max-age D while a turn is long, hrm jobs is answered beside\n"
                   "                      it from the job table as a commit at most D ago left\n"
                   "                      it (default 1s); older, it waits for the turn\n"
                   "  --group-commit D    a turn whose commit only agents' end acknowledgements\n"
                   "                      wait for leaves its fdatasync to a later turn's, at\n"
                   "                      most D after (default 2ms; 0: every turn syncs);\n"
                   "                      a client's reply always syncs at its turn's end\n"
                   "  --max-waits N       hrm wait requests one client may have pending\n"
                   "                      (default 10000); past it a wait gets an error\n"
                   "  --events-keep N     the event log (hrm events) keeps the latest N events\n"
                   "                      (default 1000000)\n"
                   "  --events-max-age D  ... and none older than D (default 168h, 7 days)\n"
                   "  --http ADDR         serve the HTTP API on HOST:PORT, IPv6 in brackets\n"
                   "                      ([::1]:8080; [::] takes IPv4 too); port 0: a free\n"
                   "                      one, written to DIR/http (default off)\n"
                   "  --http-max-conns N  HTTP connections at once (default 256)\n"
                   "  --http-timeout D    an idle HTTP connection is closed after D (default 30s)\n"
                   "  --http-max-body SIZE  larger request bodies get 413 (default 1M)\n"
                   "  --exec-queue SPEC   distributed policies: an execution queue of every node,\n"
                   "                      NAME[,priority=P][,max=N][,cpus=C][,mem=SIZE]\n"
                   "                      (repeatable; jobs choose one with their queue; default:\n"
                   "                      one queue without limits)\n"
                   "  --local-instances N distributed policies: scheduler instances in the master\n"
                   "                      (default: the policy's instances; 0: only hrm sched\n"
                   "                      processes schedule)\n"
                   "  --compact-tasks N   distributed policies: rebuild the idle scheduler\n"
                   "                      instances once they hold N tasks (default 65536)\n"
                   "  --trace FILE        write one line per step of every task to FILE (submit,\n"
                   "                      handed, probe, reply, run, started, ended, done; see\n"
                   "                      docs/runtime.md) (default: none)\n"
                   "  --log-level L       emerg..debug (default notice)\n"
                   "  -h, --help          this help\n\n"
                   "exit status: 0 stopped by a signal, 1 failed (store, keys, address), 2 bad usage\n");
            return CLI_OK;
        default:
            return CLI_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "hrm master: unexpected argument '%s'\n", argv[optind]);
        return CLI_USAGE;
    }
    cfg.params = params;
    cfg.exec_queues = queues;
    umask(077); /* the store holds jobs' environments: files 0600, folders 0700 */
    /* Test only (tests/cli): a crash between commit and reply, or between a launch and the
     * commit's sync, on purpose. */
    const char *crash = getenv("HRM_TEST_CRASH_AFTER_COMMIT");
    cfg.test_crash_after_submit = crash && strcmp(crash, "submit") == 0;
    cfg.test_crash_after_launch = crash && strcmp(crash, "launch") == 0;
    cfg.test_crash_held_acks = crash && strcmp(crash, "held") == 0;
    cfg.test_hold_file = getenv("HRM_TEST_HOLD_TURN"); /* test only: a turn held on purpose */
    hrm_log_setup("master", level);
    block_signals();
    struct hrm_error err = {{0}};
    int rc = hrm_master_run(&cfg, &err);
    if (rc < 0) {
        fprintf(stderr, "hrm master: %s\n", err.text);
        return rc == -HRM_EUNKNOWN_POLICY || rc == -HRM_ESPEC ? CLI_USAGE : CLI_FAIL;
    }
    return CLI_OK;
}

int cmd_agent(int argc, char **argv)
{
    static const struct option opts[] = {
        {"state", required_argument, NULL, 's'},  {"keys", required_argument, NULL, 'k'},
        {"master", required_argument, NULL, 'm'}, {"name", required_argument, NULL, 'n'},
        {"rack", required_argument, NULL, 'r'},   {"cpus", required_argument, NULL, 'c'},
        {"mem", required_argument, NULL, 'M'},    {"gpus", required_argument, NULL, 'g'},
        {"gpu-mem", required_argument, NULL, 'G'}, {"work-dir", required_argument, NULL, 'w'},
        {"no-cgroup", no_argument, NULL, 'C'},    {"pin", no_argument, NULL, 'p'},
        {"heartbeat", required_argument, NULL, 'b'}, {"check", no_argument, NULL, 'K'},
        {"usage-period", required_argument, NULL, 'U'},
        {"json", no_argument, NULL, 'j'},         {"log-level", required_argument, NULL, 'L'},
        {"max-output", required_argument, NULL, 'O'},
        {"output-retention", required_argument, NULL, 'R'},
        {"task-pids", required_argument, NULL, 'P'},
        {"bench", no_argument, NULL, 'B'},        {"rebench", no_argument, NULL, 'E'},
        {"speed", required_argument, NULL, 'S'},  {"disk-bps", required_argument, NULL, 'D'},
        {"simulate-exec", no_argument, NULL, 'X'}, {"count", required_argument, NULL, 'N'},
        {"name-prefix", required_argument, NULL, 'F'},
        {"probe-listen", required_argument, NULL, 'Q'},
        {"reap-gap", required_argument, NULL, 'A'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    struct hrm_agent_config cfg = {.state_dir = default_state(), .gpus = -1};
    bool check = false, json = false, bench = false;
    int level = HRM_LOG_NOTICE, c;
    const struct daemon_flag flags[] = {
        DAEMON_PEER_FLAGS(cfg),
        {'n', .text = &cfg.name}, {'r', .text = &cfg.rack}, {'w', .text = &cfg.work_dir},
        {'C', .set = &cfg.no_cgroup}, {'p', .set = &cfg.pin}, {'K', .set = &check},
        {'B', .set = &bench}, {'E', .set = &cfg.rebench}, {'j', .set = &json},
        {'X', .set = &cfg.simulate_exec}, {'L', .level = &level}, {'b', .us = &cfg.heartbeat_us},
        {'M', .size = &cfg.mem}, {'G', .size = &cfg.gpu_mem},
        {'g', .lo = 0, .hi = 32, .i32 = &cfg.gpus},
        {'N', .lo = 1, .hi = 100000, .i32 = &cfg.count},
    };
    while ((c = daemon_getopt("agent", argc, argv, opts, flags, NFLAGS(flags))) != -1) {
        switch (c) { /* DAEMON_BAD_VALUE: default */
        case 'c':
            /* The agent binds whole cores: a fraction would be dropped, so it is refused. */
            if (hrm_parse_cpu(optarg, &cfg.cpus_milli) < 0 || cfg.cpus_milli < 1000 ||
                cfg.cpus_milli % 1000 != 0) {
                fprintf(stderr, "hrm agent: --cpus: '%s': expected a whole number of CPUs >= 1\n",
                        optarg);
                return CLI_USAGE;
            }
            break;
        case 'A':
            if (strcmp(optarg, "0") == 0) {
                cfg.reap_gap_us = -1;
            } else if (parse_dur("--reap-gap", optarg, &cfg.reap_gap_us) < 0 ||
                       cfg.reap_gap_us > HRM_AGENT_REAP_GAP_MAX_US) {
                if (cfg.reap_gap_us > HRM_AGENT_REAP_GAP_MAX_US)
                    fprintf(stderr, "hrm agent: --reap-gap: at most 1s\n");
                return CLI_USAGE;
            }
            break;
        case 'U':
        case 'O':
        case 'R':
        case 'P':
            if (cli_agent_task_flag(&cfg, c, optarg) < 0)
                return CLI_USAGE;
            break;
        case 'S':
        case 'D':
            if (cli_agent_perf_flag(&cfg, c, optarg) < 0)
                return CLI_USAGE;
            break;
        case 'F':
            if (!*optarg || strlen(optarg) > 36) {
                fprintf(stderr, "hrm agent: --name-prefix: expected 1..36 characters\n");
                return CLI_USAGE;
            }
            cfg.name_prefix = optarg;
            break;
        case 'Q':
            if (strcmp(optarg, "off") != 0 && strncmp(optarg, "tcp://", 6) != 0) {
                fprintf(stderr, "hrm agent: --probe-listen: '%s': expected tcp://HOST:PORT "
                        "(PORT * picks a free one) or off\n", optarg);
                return CLI_USAGE;
            }
            cfg.probe_listen = optarg;
            break;
        case 'h':
            printf("usage: hrm agent [options]\n\n"
                   "Runs a node agent in the foreground: registers with the master, launches\n"
                   "tasks (process group, working directory, affinity, CUDA_VISIBLE_DEVICES,\n"
                   "cgroup limits), captures their output, reports usage and exits.\n\noptions:\n"
                   "  --state DIR     state folder: keys, endpoint, output (default $HRM_STATE, else .hrm)\n"
                   "  --master ADDR   master endpoint (default: DIR/endpoint)\n"
                   "  --keys DIR      keys (default DIR/keys): master.pub and agent-NAME.key\n"
                   "                  (hrm keygen --node NAME), else agent.key\n"
                   "  --name NAME     node name (default: the host name)\n"
                   "  --rack RACK     rack (default r0)\n"
                   "  --cpus N        declare N CPUs instead of the discovered ones\n"
                   "  --mem SIZE      declare memory (e.g. 16G) instead of /proc/meminfo's\n"
                   "  --gpus N        declare N virtual GPUs instead of NVML's\n"
                   "  --gpu-mem SIZE  memory of each virtual GPU (default 16G)\n"
                   "  --work-dir DIR  task output files (default DIR/agents/NAME)\n"
                   "  --max-output SIZE  per output file, keep at most SIZE: over it, the oldest\n"
                   "                  output is dropped and a line says so (default 1G; 0: no limit)\n"
                   "  --output-retention D  remove a job's output once no task of it runs here and\n"
                   "                  it has not changed for D (default 168h, 7 days; 0: keep forever)\n"
                   "  --no-cgroup     never limit tasks with cgroups\n"
                   "  --task-pids N   processes and threads one task may have (pids.max;\n"
                   "                  default 4096, 0: no limit)\n"
                   "  --pin           pin CPU tasks too (GPU tasks always get their unit's cores)\n"
                   "  --heartbeat D   heartbeat period (default 1s)\n"
                   "  --reap-gap D    after reaping ended tasks while others run, reap the next\n"
                   "                  ones together at most D later (default 2ms; 0: each at\n"
                   "                  once; at most 1s)\n"
                   "  --usage-period D  how often the tasks' and the node's usage is sampled and\n"
                   "                  reported (default 1s)\n"
                   "  --check         print discovered hardware and the cgroup mode, then exit\n"
                   "  --bench         measure the node now (CPU kernel on every core, memory\n"
                   "                  bandwidth, disk writes in DIR), save the figures in\n"
                   "                  DIR/bench-NAME.json, print them and exit\n"
                   "  --rebench       measure again at start (default: once, then the saved\n"
                   "                  figures while --speed and --disk-bps stay the same)\n"
                   "  --speed F       make the node slower: its tasks and its bench get F of the\n"
                   "                  host's CPUs, F in (0, 1] (cgroup CPU quota; default 1)\n"
                   "  --disk-bps RATE throttle the node's disk writes to RATE, like 50MB/s\n"
                   "                  (blkio/io.max; default: not throttled)\n"
                   "  --json          with --check or --bench: JSON\n"
                   "  --simulate-exec start no process: a task holds its cpus and memory for\n"
                   "                  its duration (sleep N's N, else its env SIMULATE_DURATION,\n"
                   "                  else 0), then ends; capacity from --cpus/--mem (default\n"
                   "                  4 CPUs, 8G); no discovery, cgroups, bench or output files\n"
                   "  --count N       with --simulate-exec: run N agents in this process, named\n"
                   "                  PREFIX1..PREFIXN, each with agent-NAME.key (default 1)\n"
                   "  --name-prefix P with --count: the names' prefix (default --name, else sim)\n"
                   "  --probe-listen ADDR  where hrm sched processes probe this node's execution\n"
                   "                  queues directly (distributed policies), tcp://HOST:PORT\n"
                   "                  (PORT * picks a free one), or off: probes come through the\n"
                   "                  master (default tcp://127.0.0.1:* when the master is on\n"
                   "                  127.0.0.1, else tcp://*:*; not with --simulate-exec)\n"
                   "  --log-level L   emerg..debug (default notice)\n"
                   "  -h, --help      this help\n");
            return CLI_OK;
        default:
            return CLI_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "hrm agent: unexpected argument '%s'\n", argv[optind]);
        return CLI_USAGE;
    }
    if (cfg.probe_listen && cfg.simulate_exec) { /* its agents share one process and socket set */
        fprintf(stderr, "hrm agent: --probe-listen: not with --simulate-exec (simulated agents "
                "are probed through the master)\n");
        return CLI_USAGE;
    }
    if ((cfg.count || cfg.name_prefix) && !cfg.simulate_exec) {
        fprintf(stderr, "hrm agent: %s needs --simulate-exec (one real agent per node)\n",
                cfg.count ? "--count" : "--name-prefix");
        return CLI_USAGE;
    }
    if (check)
        return hrm_agent_check(&cfg, json) == 0 ? CLI_OK : CLI_FAIL;
    if (bench) {
        hrm_log_setup("agent --bench", level);
        struct hrm_error berr = {{0}};
        if (hrm_agent_bench(&cfg, json, &berr) < 0) {
            fprintf(stderr, "hrm agent: %s\n", berr.text);
            return CLI_FAIL;
        }
        return CLI_OK;
    }
    char name[64];
    snprintf(name, sizeof(name), "agent %.40s", cfg.name ? cfg.name : "");
    hrm_log_setup(name, level);
    block_signals();
    struct hrm_error err = {{0}};
    if (hrm_agent_run(&cfg, &err) < 0) {
        fprintf(stderr, "hrm agent: %s\n", err.text);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cmd_sched(int argc, char **argv)
{
    static const struct option opts[] = {
        {"state", required_argument, NULL, 's'},     {"keys", required_argument, NULL, 'k'},
        {"master", required_argument, NULL, 'm'},    {"name", required_argument, NULL, 'n'},
        {"instances", required_argument, NULL, 'i'}, {"log-level", required_argument, NULL, 'L'},
        {"probe-via-master", no_argument, NULL, 'V'},
        {"trace", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0},
    };
    struct hrm_sched_config cfg = {.state_dir = default_state(), .instances = 1};
    int level = HRM_LOG_NOTICE, c;
    const struct daemon_flag flags[] = {
        DAEMON_PEER_FLAGS(cfg),
        {'T', .text = &cfg.trace_path}, {'V', .set = &cfg.probe_via_master}, {'L', .level = &level},
        {'i', .lo = 1, .hi = 4096, .i32 = &cfg.instances},
    };
    while ((c = daemon_getopt("sched", argc, argv, opts, flags, NFLAGS(flags))) != -1) {
        switch (c) { /* DAEMON_BAD_VALUE: default */
        case 'n':
            if (!*optarg || strlen(optarg) > 47) {
                fprintf(stderr, "hrm sched: --name: 1..47 characters\n");
                return CLI_USAGE;
            }
            cfg.name = optarg;
            break;
        case 'h':
            printf("usage: hrm sched [options]\n\n"
                   "Runs scheduler instances of the master's distributed policy (dhrm,\n"
                   "dhrm-batch, dhrm-nego, sparrow, d-random) in a process of their own, in the\n"
                   "foreground.  The master gives them jobs and relays their runs to the agents'\n"
                   "execution queues; their probes go straight to each agent that listens for\n"
                   "them (hrm agent --probe-listen), else through the master.  If the process\n"
                   "stops, its jobs go to other instances.  With the master's policy hrm-shared, the instances are the\n"
                   "shared-state ones: they plan on snapshots of the cell and send claims that\n"
                   "the master validates and launches.  SIGINT/SIGTERM stop it.\n\noptions:\n"
                   "  --state DIR       where keys/ and endpoint are (default $HRM_STATE, else .hrm)\n"
                   "  --keys DIR        keys (default DIR/keys): scheduler.key and master.pub\n"
                   "  --master ADDR     the master's endpoint (default: DIR/endpoint)\n"
                   "  --name NAME       identity; the master numbers its instances by it\n"
                   "                    (default: the host name)\n"
                   "  --instances N     scheduler instances in this process (default 1)\n"
                   "  --probe-via-master  send every probe through the master, even to agents\n"
                   "                    that take them directly (default: directly)\n"
                   "  --trace FILE      append a line per step of the probing rounds to FILE\n"
                   "                    (job, hold, reply, run, flush; docs/runtime.md;\n"
                   "                    default: none)\n"
                   "  --log-level L     emerg..debug (default notice)\n"
                   "  -h, --help        this help\n\n"
                   "exit status: 0 stopped by a signal, 1 failed (keys, master), 2 bad usage\n");
            return CLI_OK;
        default:
            return CLI_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "hrm sched: unexpected argument '%s'\n", argv[optind]);
        return CLI_USAGE;
    }
    umask(077);
    hrm_log_setup("sched", level);
    block_signals();
    struct hrm_error err = {{0}};
    if (hrm_sched_run(&cfg, &err) < 0) {
        fprintf(stderr, "hrm sched: %s\n", err.text);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* Adds each node of a comma-separated list (hrm keygen --node a,b). */
static int keygen_nodes(const char *dir, char *list, bool force)
{
    char *save = NULL;
    for (char *n = strtok_r(list, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
        struct hrm_error err;
        if (hrm_keys_add_node(dir, n, force, &err) < 0) {
            fprintf(stderr, "hrm keygen: %s\n", err.text);
            return -1;
        }
        printf("%s/agent-%s.key: the key of node %s (hrm agent --name %s picks it)\n", dir, n, n,
               n);
    }
    return 0;
}

static void keygen_usage(FILE *out)
{
    fprintf(out,
            "usage: hrm keygen [DIR] [--force] [--user ACCOUNT]\n"
            "       hrm keygen [DIR] [--node NAME[,NAME...]]... [--client NAME [--user ACCOUNT]\n"
            "                    [--admin]]\n"
            "       hrm keygen [DIR] --add-scheduler\n\n"
            "Writes the cluster's CURVE keys into DIR (default $HRM_STATE/keys, else\n"
            ".hrm/keys): master.key, agent.key, client.key, scheduler.key (secret, 0600),\n"
            "their .pub files, and authorized, the master's allow-list.  Copy master.pub\n"
            "with a node's key to each node, with a client key to each user (as client.key)\n"
            "and with scheduler.key to each host of an hrm sched process.  The master\n"
            "re-reads authorized when it changes: added keys need no restart.\n\noptions:\n"
            "  -f, --force       replace existing keys (with --node/--client: those only;\n"
            "                    without: every key, and earlier node and client keys\n"
            "                    leave authorized)\n"
            "  --user ACCOUNT    the account jobs of the client key run as (default: the\n"
            "                    user running hrm keygen; with --client: NAME)\n"
            "  --node NAME       add agent-NAME.key, which may register as node NAME only\n"
            "                    (repeatable, or a comma-separated list); hrm agent --name\n"
            "                    NAME uses it when present, else agent.key, which is bound\n"
            "                    to the name it first registers as\n"
            "  --node-count N    with one --node PREFIX: add the keys of nodes PREFIX1..\n"
            "                    PREFIXN at once (simulated agents: hrm agent --count)\n"
            "  --client NAME     add client-NAME.key, whose jobs run as --user; it may\n"
            "                    cancel, and read the output and environment of, its\n"
            "                    account's jobs only (client.key: every account's)\n"
            "  --admin           with --client: the key may act on every account's jobs,\n"
            "                    as client.key does ('admin' on its line in authorized)\n"
            "  --add-scheduler   add the scheduler key pair (hrm sched) to a folder made\n"
            "                    without it, and list it in authorized; other keys stay\n"
            "  --json            print the public keys as JSON\n"
            "  -h, --help        this help\n\n"
            "--node and --client add to DIR (made first if it has no keys).\n");
}

int cmd_keygen(int argc, char **argv)
{
    static const struct option opts[] = {{"force", no_argument, NULL, 'f'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"add-scheduler", no_argument, NULL, 'a'},
                                         {"node", required_argument, NULL, 'n'},
                                         {"client", required_argument, NULL, 'c'},
                                         {"user", required_argument, NULL, 'u'},
                                         {"node-count", required_argument, NULL, 'N'},
                                         {"admin", no_argument, NULL, 'A'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool force = false, json = false, add = false, admin = false;
    char *nodes[MAX_PARAMS];
    int nnodes = 0, c;
    long long node_count = 0;
    const char *client = NULL, *user = NULL;
    while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
        if (c == 'f')
            force = true;
        else if (c == 'N') {
            if (cli_parse_int("keygen", "--node-count", optarg, 1, 100000, &node_count) < 0)
                return CLI_USAGE;
        }
        else if (c == 'a')
            add = true;
        else if (c == 'A')
            admin = true;
        else if (c == 'j')
            json = true;
        else if (c == 'n') {
            if (nnodes == MAX_PARAMS) {
                fprintf(stderr, "hrm keygen: --node: at most %d (give lists: --node a,b)\n",
                        MAX_PARAMS);
                return CLI_USAGE;
            }
            nodes[nnodes++] = optarg;
        } else if (c == 'c')
            client = optarg;
        else if (c == 'u')
            user = optarg;
        else if (c == 'h') {
            keygen_usage(stdout);
            return CLI_OK;
        } else
            return CLI_USAGE;
    }
    if (argc - optind > 1) {
        keygen_usage(stderr);
        return CLI_USAGE;
    }
    char dir[1100];
    if (optind < argc)
        snprintf(dir, sizeof(dir), "%s", argv[optind]);
    else {
        snprintf(dir, sizeof(dir), "%.1000s", default_state());
        mkdir(dir, 0700);
        snprintf(dir, sizeof(dir), "%.1000s/keys", default_state());
    }
    struct hrm_error err;
    if (add && (force || nnodes || client)) {
        fprintf(stderr, "hrm keygen: --add-scheduler keeps the other keys; --force replaces them "
                        "all, --node and --client add others: give one\n");
        return CLI_USAGE;
    }
    if (add) {
        if (hrm_keys_add_scheduler(dir, &err) < 0) {
            fprintf(stderr, "hrm keygen: %s\n", err.text);
            return CLI_FAIL;
        }
        printf("%s/scheduler.key: the scheduler key pair; the master admits it without a "
               "restart\n", dir);
        return CLI_OK;
    }
    if (node_count > 0 && (nnodes != 1 || strchr(nodes[0], ',') || force || client)) {
        fprintf(stderr, "hrm keygen: --node-count N takes one --node PREFIX (names PREFIX1.."
                        "PREFIXN), without --force or --client\n");
        return CLI_USAGE;
    }
    if (admin && !client) {
        fprintf(stderr, "hrm keygen: --admin marks a client key added with --client NAME (the "
                        "default client.key is admin already)\n");
        return CLI_USAGE;
    }
    bool adding = nnodes > 0 || client;
    char path[1200];
    snprintf(path, sizeof(path), "%s/master.key", dir);
    bool fresh = access(path, F_OK) != 0;
    if (user && !client && adding && !fresh) {
        fprintf(stderr, "hrm keygen: --user names the account of a client key: give --client "
                        "NAME with it\n");
        return CLI_USAGE;
    }
    if (!adding || fresh) {
        if (hrm_keys_generate(dir, force && !adding, client ? NULL : user, &err) < 0) {
            fprintf(stderr, "hrm keygen: %s\n", err.text);
            return CLI_FAIL;
        }
        struct hrm_keypair m;
        hrm_keys_load(dir, "master", true, &m, NULL);
        if (json)
            printf("{\"dir\": \"%s\", \"master\": \"%s\"}\n", dir, m.pub);
        else
            printf("keys written to %s (master public key %s)\n", dir, m.pub);
    }
    if (node_count > 0) { /* --node is a prefix: PREFIX1..PREFIXN, in one go */
        if (hrm_keys_add_nodes(dir, nodes[0], (int32_t)node_count, &err) < 0) {
            fprintf(stderr, "hrm keygen: %s\n", err.text);
            return CLI_FAIL;
        }
        printf("%s/agent-%s1.key .. agent-%s%lld.key: the keys of %lld nodes\n", dir, nodes[0],
               nodes[0], node_count, node_count);
        return CLI_OK;
    }
    for (int i = 0; i < nnodes; i++)
        if (keygen_nodes(dir, nodes[i], force) < 0)
            return CLI_FAIL;
    if (client) {
        if (hrm_keys_add_client(dir, client, user ? user : client, admin, force, &err) < 0) {
            fprintf(stderr, "hrm keygen: %s\n", err.text);
            return CLI_FAIL;
        }
        printf("%s/client-%s.key: a client key whose jobs run as %s%s\n", dir, client,
               user ? user : client, admin ? " (admin: it may act on every account's jobs)" : "");
    }
    return CLI_OK;
}
