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
    int32_t compact_tasks;    /* distributed policies: the instances' workload is rebuilt when
                                 every instance is idle and it holds this many tasks (65536) */
    const char *const *exec_queues; /* distributed policies: the nodes' execution queues, each
                                       "NAME[,priority=P][,max=N][,cpus=C][,mem=SIZE]" */
    int nexec_queues;               /* 0: one queue without limits */
    int32_t local_instances;        /* distributed policies: scheduler instances in the master;
                                       0: the policy's `instances`; -1: none (only hrm sched
                                       processes schedule) */
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
    int64_t usage_us;         /* usage sampling period; default 2 s */
};

#define HRM_TASK_PIDS_DEFAULT 4096

int hrm_agent_run(const struct hrm_agent_config *cfg, struct hrm_error *err);

/* hrm sched: scheduler instances of the master's distributed policy in a process of their
 * own (docs/runtime.md, "Scheduler processes"). */
struct hrm_sched_config {
    const char *master;    /* endpoint; NULL: read <state_dir>/endpoint */
    const char *state_dir; /* keys (unless keys_dir) */
    const char *keys_dir;  /* holds scheduler.key and master.pub */
    const char *name;      /* NULL: the host name; the master numbers instances by it */
    int32_t instances;     /* how many (default 1) */
};

int hrm_sched_run(const struct hrm_sched_config *cfg, struct hrm_error *err);

/* What `hrm agent --check` prints: discovered hardware and the cgroup mode
 * tasks would get.  Writes text or JSON to stdout; returns 0. */
int hrm_agent_check(const struct hrm_agent_config *cfg, bool json);

/* Default port-free endpoint and the file the master writes its real one to. */
#define HRM_DEFAULT_LISTEN "tcp://127.0.0.1:*"
#define HRM_ENDPOINT_FILE "endpoint"

#endif
