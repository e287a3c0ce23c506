/* A local cluster (master and N agents on 127.0.0.1) started and stopped by pid: hrm up and hrm bench throughput. */
#ifndef HRM_CLI_UP_H
#define HRM_CLI_UP_H

#include <stdbool.h>
#include <sys/types.h>

#define UP_MAX_NODES 256
#define UP_MAX_SCHEDS 16

struct up_cluster {
    /* options: set before up_start (up_init gives the defaults) */
    const char *state;            /* state folder (created); keys made there if missing */
    int nodes, racks;
    const char *cpus, *mem, *gpus, *gpu_mem; /* per agent, as the agent's flags take them */
    const char *policy, *node_timeout, *log_level;
    const char *http;             /* the master's --http (default 127.0.0.1:0; "off": none) */
    const char *params[8];        /* the master's --param K=V */
    int nparams;
    const char *exec_queues[16];  /* the master's --exec-queue SPEC */
    int nexec_queues;
    int sched_procs;              /* hrm sched processes (the master then runs no instances) */
    const char *trace;            /* the master's --trace FILE (NULL: none) */
    bool no_cgroup;               /* agents' --no-cgroup */
    /* agents' task flags, passed on as given (NULL: the agent's default) */
    const char *usage_period, *max_output, *output_retention, *task_pids;
    /* --node-speed / --node-disk-bps: one value per agent, repeated cyclically (NULL: none);
     * checked by up_start's caller through nodeperf_parse_list */
    const char *node_speed, *node_disk_bps;
    /* filled by up_start */
    pid_t master, agents[UP_MAX_NODES], scheds[UP_MAX_SCHEDS];
    char self[4096];              /* this executable */
    char logs[1200];              /* DIR/logs */
    int lock_fd;                  /* holds DIR/up.lock: one hrm up per state folder */
    /* master supervision (up_supervise) */
    int restarts;                 /* restarts in a row, each less than UP_STABLE_S apart */
    double master_since_s;        /* when the running master was started (monotonic) */
    double restart_at_s;          /* > 0: the master is dead and restarts then */
    /* scheduler process supervision, the same rule per process */
    int sched_restarts[UP_MAX_SCHEDS];
    double sched_since_s[UP_MAX_SCHEDS], sched_restart_at_s[UP_MAX_SCHEDS];
    char sched_inst[24];          /* instances per scheduler process */
};

/* A master that dies is restarted at most this many times in a row; one that ran
 * UP_STABLE_S seconds starts the count again. */
#define UP_MAX_RESTARTS 5
#define UP_STABLE_S 60

/* up_perf.c: --node-speed and --node-disk-bps.  check: 0, or -1 after naming the flag and the
 * bad value on stderr.  args: appends agent i's --speed / --disk-bps (at most 4 words, their
 * values formatted into speed[32] / bps[32]) to argv; returns how many words. */
int up_node_perf_check(const struct up_cluster *u);
int up_node_perf_args(const struct up_cluster *u, int i, char **argv, char *speed, char *bps);

/* Defaults of hrm up: 4 CPUs, 8G, 0 GPUs, 2 racks, state $HRM_STATE or .hrm. */
void up_init(struct up_cluster *u);
/* Takes DIR/up.lock (refusing a folder another hrm up or a live master uses),
 * creates keys if missing, starts the master, then the agents, and waits (at
 * most 20 s) until every agent has registered.  The daemons get SIGTERM if
 * this process dies, even by SIGKILL.  A daemon that exits meanwhile stops the
 * start at once, with its own last log line as the reason.  The caller has
 * blocked SIGINT/SIGTERM/SIGCHLD if it wants them read synchronously.  0, or -1
 * after printing why to stderr (prefixed with who) with everything started stopped. */
int up_start(struct up_cluster *u, const char *who);
/* Once started: reaps daemons that exited, saying why; restarts a dead master
 * or scheduler process (after a backoff, at most UP_MAX_RESTARTS times in a row
 * each), so the agents and their tasks live on.  Call it often (it never blocks).  0, or -1 when the
 * master cannot be kept up (the caller then stops the cluster). */
int up_supervise(struct up_cluster *u, const char *who);
/* Agents first (each stops its tasks), then the master; waits for them. */
void up_stop(struct up_cluster *u);

#endif
