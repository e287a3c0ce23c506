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
    const char *cpus, *mem, *gpus; /* per agent, as the agent's flags take them */
    const char *policy, *node_timeout, *log_level;
    const char *params[8];        /* the master's --param K=V */
    int nparams;
    const char *exec_queues[16];  /* the master's --exec-queue SPEC */
    int nexec_queues;
    int sched_procs;              /* hrm sched processes (the master then runs no instances) */
    bool no_cgroup;               /* agents' --no-cgroup */
    /* filled by up_start */
    pid_t master, agents[UP_MAX_NODES], scheds[UP_MAX_SCHEDS];
    char self[4096];              /* this executable */
    char logs[1200];              /* DIR/logs */
};

/* Defaults of hrm up: 4 CPUs, 8G, 0 GPUs, 2 racks, state $HRM_STATE or .hrm. */
void up_init(struct up_cluster *u);
/* Creates keys if missing, starts the master, then the agents, and waits (at
 * most 20 s) until every agent has registered.  The caller has blocked
 * SIGINT/SIGTERM/SIGCHLD if it wants them read synchronously.  0, or -1 after
 * printing why to stderr (prefixed with who) with everything started stopped. */
int up_start(struct up_cluster *u, const char *who);
/* Agents first (each stops its tasks), then the master; waits for them. */
void up_stop(struct up_cluster *u);

#endif
