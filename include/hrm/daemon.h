/* The daemons: master (job table, store, central scheduler) and agent (discovery, launching); run in the foreground. */
#ifndef HRM_DAEMON_H
#define HRM_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/error.h"

struct hrm_master_config {
    const char *state_dir;    /* holds hrm.db, endpoint, keys/ (unless keys_dir) */
    const char *keys_dir;     /* NULL: <state_dir>/keys */
    const char *listen;       /* ZeroMQ endpoint; NULL: tcp://127.0.0.1:* (a free port) */
    const char *policy;       /* any registered policy; NULL: "drf" */
    const char *const *params; /* "key=value" for the policy */
    int nparams;
    int32_t max_attempts;     /* runs per task before its failure is final (default 1) */
    int64_t node_timeout_us;  /* silence after which a node is down (default 5 s) */
    int64_t reconcile_us;     /* after a restart, how long to wait for agents (default 5 s) */
    int64_t pass_delay_us;    /* central's batching delay (default 0) */
    int32_t max_pass_starts;  /* tasks one scheduling pass may start (default 500; -1: no
                                 bound); the rest go to the next pass, after the clients */
    int64_t eta_turn_rows;    /* waiting-table rows a listing's estimate walk visits per turn
                                 (default 20,000; docs/runtime.md) */
    int64_t group_commit_us;  /* a turn whose sync waits only for agents' end
                                 acknowledgements leaves it to a later turn's within this
                                 (default 2 ms; -1: every turn syncs) */
    int32_t compact_tasks;    /* distributed policies: the instances' workload is rebuilt when
                                 every instance is idle and it holds this many tasks (65536) */
    const char *const *exec_queues; /* distributed policies: the nodes' execution queues, each
                                       "NAME[,priority=P][,max=N][,cpus=C][,mem=SIZE]" */
    int nexec_queues;               /* 0: one queue without limits */
    int32_t local_instances;        /* distributed policies: scheduler instances in the master;
                                       0: the policy's `instances`; -1: none (only hrm sched
                                       processes schedule) */
    bool test_crash_after_submit; /* TEST ONLY ($HRM_TEST_CRASH_AFTER_COMMIT=submit): die by
                                     SIGKILL right after committing a turn that accepted a
                                     job, before any reply leaves */
    bool test_crash_after_launch; /* TEST ONLY ($HRM_TEST_CRASH_AFTER_COMMIT=launch): die by
                                     SIGKILL once a turn's launches have left, before its
                                     commit's sync and any reply */
    bool test_crash_held_acks;    /* TEST ONLY ($HRM_TEST_CRASH_AFTER_COMMIT=held): die by
                                     SIGKILL at the end of a turn that leaves its sync and its
                                     end acknowledgements for a later turn */
    const char *test_hold_file;   /* TEST ONLY ($HRM_TEST_HOLD_TURN=FILE): a turn holds in its
                                     scheduling section while FILE exists (master_snap.c) */
    int64_t snapshot_max_age_us;  /* the oldest snapshot a `jobs` request is answered from
                                     beside the loop (default 1 s; docs/runtime.md) */
    int32_t max_waits;              /* waits a client may have pending at once (default
                                       10000): past it, a wait gets the "limit" error */
    int64_t events_keep;            /* the event log keeps the latest this many (default
                                       1,000,000) ... */
    int64_t events_max_age_us;      /* ... and none older than this (default 7 days) */
    /* The HTTP API (docs/runtime.md, "HTTP API"): HOST:PORT, NULL or "off": none. */
    const char *http;
    int32_t http_conn_limit;        /* connections at once (default 256) */
    int32_t http_timeout_s;         /* an idle connection is closed after this (default 30 s) */
    int64_t http_body_max;          /* request bodies over it get 413 (default 1 MiB) */
    /* A step trace of every task (the master's --trace FILE, docs/runtime.md); NULL: none. */
    const char *trace_path;
};

/* Runs the master until SIGINT/SIGTERM (which the caller has blocked, so the
 * daemon reads them from a signalfd).  Returns 0 on a clean stop, or a
 * negative code with detail (store, keys, address). */
int hrm_master_run(const struct hrm_master_config *cfg, struct hrm_error *err);

struct hrm_agent_config {
    const char *master;       /* endpoint; NULL: read <state_dir>/endpoint */
    const char *state_dir;    /* keys (unless keys_dir) and default work_dir live here */
    const char *keys_dir;
    const char *work_dir;     /* task output files; NULL: <state_dir>/agents/<name> */
    const char *name;         /* NULL: the host name */
    const char *rack;         /* NULL: "r0" */
    int64_t cpus_milli;       /* 0: discovered; virtual capacity otherwise */
    int64_t mem;              /* 0: discovered */
    int32_t gpus;             /* -1: discovered (NVML); >= 0: that many virtual GPUs */
    int64_t gpu_mem;          /* per virtual GPU; 0: 16 GiB */
    bool no_cgroup;           /* do not limit tasks even when the host allows */
    int64_t task_pids;        /* pids.max of each task's cgroup; 0: HRM_TASK_PIDS_DEFAULT,
                                 -1: no limit */
    bool pin;                 /* CPU affinity for every task, not only GPU units */
    int64_t heartbeat_us;     /* default 1 s */
    int64_t usage_us;         /* usage sampling period; default 1 s */
    /* After a reap that leaves tasks running, the loop leaves SIGCHLD unwatched this long
     * (agent.c, the reap's gap); 0: HRM_AGENT_REAP_GAP_DEFAULT_US, < 0: no gap */
    int64_t reap_gap_us;
    int64_t max_output;       /* bytes kept per output file; 0: the default, < 0: no limit */
    int64_t output_retention_us; /* output of jobs idle this long is removed; 0: default, < 0: never */
    /* A node made slower on purpose (docs/runtime.md, "Node performance"): its tasks and its
     * bench get this share of the host's CPUs, in (0, 1]; 0 means 1 (not slowed) */
    double speed;
    int64_t disk_bps;         /* write throttle on the state folder's disk, bytes/s; 0: none */
    bool rebench;             /* measure the node again at start even if a bench is cached */
    /* Simulated agents (docs/runtime.md, "Simulated agents"): no process is started; a task
     * holds its resources for its declared duration.  count agents share this process and one
     * loop, named name_prefix1..count (count 1: name). */
    bool simulate_exec;
    int32_t count;            /* 0: 1 */
    const char *name_prefix;  /* NULL: name, else "sim" */
    /* Where scheduler processes probe this node's execution queues directly (docs/runtime.md,
     * "Scheduler processes"): a ZeroMQ endpoint; NULL: tcp://127.0.0.1:* when the master is
     * on this host's loopback, else all interfaces; "off": none (probes come through the master). */
    const char *probe_listen;
};

#define HRM_AGENT_MAX_OUTPUT_DEFAULT ((int64_t)1 << 30)
#define HRM_AGENT_MAX_OUTPUT_MIN ((int64_t)64 << 10)
#define HRM_AGENT_RETENTION_DEFAULT_US ((int64_t)7 * 86400 * 1000000)
#define HRM_TASK_PIDS_DEFAULT 4096
#define HRM_AGENT_REAP_GAP_DEFAULT_US 2000
#define HRM_AGENT_REAP_GAP_MAX_US 1000000

int hrm_agent_run(const struct hrm_agent_config *cfg, struct hrm_error *err);

/* hrm sched: scheduler instances of the master's distributed policy in a process of their
 * own (docs/runtime.md, "Scheduler processes"). */
struct hrm_sched_config {
    const char *master;    /* endpoint; NULL: read <state_dir>/endpoint */
    const char *state_dir; /* keys (unless keys_dir) */
    const char *keys_dir;  /* holds scheduler.key and master.pub */
    const char *name;      /* NULL: the host name; the master numbers instances by it */
    int32_t instances;     /* how many (default 1) */
    bool probe_via_master; /* never probe the agents directly: every hold goes through the master */
    /* A step trace of the probing rounds (hrm sched --trace FILE, docs/runtime.md); NULL: none. */
    const char *trace_path;
};

int hrm_sched_run(const struct hrm_sched_config *cfg, struct hrm_error *err);

/* What `hrm agent --check` prints: discovered hardware and the cgroup mode
 * tasks would get.  Writes text or JSON to stdout; returns 0. */
int hrm_agent_check(const struct hrm_agent_config *cfg, bool json);

/* What `hrm agent --bench` does: measures the node now under the limits of cfg (speed,
 * disk_bps), saves the figures to <state>/bench-<name>.json and prints them (text or JSON).
 * 0, or a negative code with err when the bench could not run. */
int hrm_agent_bench(const struct hrm_agent_config *cfg, bool json, struct hrm_error *err);

/* Default port-free endpoint and the file the master writes its real one to. */
#define HRM_DEFAULT_LISTEN "tcp://127.0.0.1:*"
#define HRM_ENDPOINT_FILE "endpoint"

/* The master holds DIR/master.lock for its whole life, and hrm up DIR/up.lock:
 * one of each per state folder. */
#define HRM_MASTER_LOCK_FILE "master.lock"
#define HRM_UP_LOCK_FILE "up.lock"

/* Takes the exclusive lock on state_dir/file (created 0600) without waiting and
 * writes this process's pid into it.  Returns the descriptor, which holds the
 * lock until it is closed (or the process dies), or -EBUSY with
 * "DIR is in use: HOLDER with pid N holds DIR/FILE", or another negative code. */
int hrm_state_lock(const char *state_dir, const char *file, const char *holder,
                   struct hrm_error *err);

#endif
