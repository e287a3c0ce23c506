/* The agent's context and runs, shared by agent.c (protocol, loop), agent_exec.c (processes) and agent_hw.c (discovery). */
#ifndef HRM_AGENT_PRIVATE_H
#define HRM_AGENT_PRIVATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h> /* struct rusage: a run reaped before its launch came back */
#include <sys/types.h>

#include "agent_gpu.h"
#include "hrm/daemon.h"
#include "hrm/transport.h"
#include "hrm/wire.h" /* struct hrm_wire_item: the queued reports */
#include "nodeperf.h"

enum cg_mode { CG_NONE, CG_V1, CG_V2 };
/* v1 hierarchies a task joins (v2: one directory, named by CG_CPU). */
enum cg_ctl { CG_CPU, CG_MEM, CG_PIDS, CG_CPUACCT, CG_CPUSET, CG_FREEZER, CG_NCTL };
#define CG_CLUSTER_LEN 12 /* hex digits of the cluster's identity in cgroup paths */

struct hw_info {
    int32_t pus, cores, numa, pci;  /* hwloc; 0 when unknown */
    int64_t mem_total, mem_avail;   /* /proc/meminfo */
    int32_t nvml_gpus;              /* -1: no NVML on this host */
    int64_t nvml_gpu_mem;           /* smallest GPU's memory */
    char nvml_name[96];
    struct agpu_dev nvml_dev[HRM_MAX_GPUS_PER_NODE]; /* [0, nvml_gpus): each GPU (numa -1: unknown) */
    struct agpu_host host;          /* logical CPUs by NUMA domain (hwloc) */
    enum cg_mode cg;
    char cg_why[200];               /* why that mode (for --check) */
    char cg_root[512];              /* v2: the delegated parent; v1: unused */
    bool cg_cpu, cg_mem;            /* cpu and memory limits take: v1 always; v2 when the
                                       delegated parent has those controllers */
    bool cg_pids, cg_freezer;       /* pids.max takes (v1: the hierarchy is mounted; v2: the
                                       controller); v1: freezer mounted (group kill) */
    bool cg_cpuacct;                /* v1: cpuacct is a hierarchy of its own, not cpu's */
    bool cg_cpuset;                 /* the cpuset controller binds tasks' cores (v1 hierarchy,
                                       or v2's cpuset controller) */
};

struct arun {
    int64_t job;
    int32_t task, attempt;
    pid_t pid;
    uint32_t gpu_mask;
    struct hrm_ru_cores cores; /* its model cores (agent_bind.c), none when unbound */
    bool cpuset;               /* its cores are its cpuset cgroup's, else its affinity's */
    int64_t start_us, start_mono_us, kill_at_us; /* kill_at: SIGKILL deadline (mono), 0 none */
    bool cg;                  /* has cgroup directories */
    bool via_nqs;             /* started by the node's queue system (distributed scheduling) */
    bool no_output;           /* its output goes to /dev/null: no files to bound */
    int32_t nqs_task, nqs_entry; /* its local task and the queue system's run identity */
    uint32_t nqs_seq;
    uint64_t started_gen;     /* flush generation and outq index of its task_started */
    size_t started_idx;
    /* filled when it ends */
    bool ended;
    int status, exit, signal; /* status: 0 done, 1 failed (HRM_OUTCOME_*) */
    bool oom;
    int64_t end_us, cpu_us, rss;
    int64_t rss_peak;             /* highest memory seen (cgroup: the kernel's own peak) */
    int64_t sample_mono_us;       /* the previous usage sample (start at first) */
    int64_t sample_cpu_us;        /* cpu_us at that sample */
    int64_t sample_wait_us;       /* its main process's run-queue wait then (-1: unreadable) */
    char error[160];
    /* simulated execution (agent_simexec.c): when it ends (mono), its exit then, its request */
    int64_t sim_end_mono_us;
    int sim_exit;
    int64_t sim_cpu, sim_mem;
    /* being started by the launcher thread (agent_exec_thread.c): no pid yet */
    bool launching;
    int kill_sig;       /* a kill that came while it was launching: sent once it has its pid */
    uint64_t launch_id; /* which launch it is (a->launch_seq) */
};

struct anqs; /* the node queue system of distributed scheduling (agent_nqs.c) */

/* Who started a run: the queue system's identity of it (exec_launch). */
struct nqs_tag {
    int32_t task, entry;
    uint32_t seq;
};

struct agent {
    struct hrm_agent_config cfg;
    char name[48], rack[48], host[64];
    char state_dir[1024], keys_dir[1100], work_dir[1100], endpoint[512];
    struct hw_info hw;
    struct node_perf perf;   /* the node's bench (agent_bench.c), sent at registration */
    char blkio_home[600];    /* v1 --disk-bps: the blkio folder the agent left (agent_speed.c) */
    int64_t cpu_milli, mem, gpu_mem;
    int32_t gpus;
    struct agpu_dev gpu[HRM_MAX_GPUS_PER_NODE]; /* [0, gpus): NVML's, else virtual ones */
    struct hrm_topology topo;  /* the node as the cluster model sees it (agent_bind.c) */
    struct hrm_ru units[HRM_MAX_GPUS_PER_NODE + 1]; /* its resource units, bound once */
    bool units_ok;             /* binding worked: tasks get their unit's cores */
    bool bind_noted;           /* the log said once how cores are bound */
    void *zctx;
    struct hrm_conn *conn;
    int sigfd;
    struct arun *runs;       /* live */
    size_t nruns, cap_runs;
    struct arun *done;       /* ended, not yet acknowledged by the master */
    size_t ndone, cap_done;
    struct hrm_wire_item *outq; /* messages of this loop turn (owned: trees and texts), sent
                                 * together by agent_flush; an item with neither was withdrawn */
    size_t noutq, cap_outq;
    uint64_t flush_gen;      /* counts agent_flush calls */
    size_t nstarts_queued;   /* of outq's items, the task_starteds (agent_send_start_text) */
    bool launch_hold_off;    /* the launcher's hold is off (exec_launcher_follow_role) */
    int64_t starts_since_us; /* mono: when outq last held only task_starteds (agent_flush_due) */
    int devnull;             /* the tasks' stdin */
    pid_t pid;               /* its own, read once: each launch child checks its parent */
    int64_t dir_job;         /* the last job whose output folder exists (0 none) */
    char **base_env;         /* the agent's environment without HRM_* / CUDA_VISIBLE_DEVICES */
    size_t nbase_env;
    size_t *base_keylen;     /* each base_env entry's name length (up to its '='), found once */
    void *stack;             /* the launch child's stack (CLONE_VM|CLONE_VFORK), the launcher's */
    struct launcher *launcher; /* starts tasks off the loop (NULL: the loop starts them) */
    struct hrm_launch_buf hot; /* the master's last frame read without a tree (agent.c) */
    uint64_t launch_seq;     /* the last launch's id */
    size_t nlaunching;       /* runs with launching set */
    struct early_exit {
        pid_t pid;
        int status;
        struct rusage ru;
        int64_t end_us;
    } *early;                /* reaped before their launch came back with the pid */
    size_t nearly, cap_early;
    char cluster[CG_CLUSTER_LEN + 1]; /* in cgroup paths: cg_cluster_id(master.pub) */
    struct cg_left {
        char leaf[64];
    } *cg_left;              /* task cgroups not empty yet at their task's end (cg_retry) */
    size_t ncg_left, cap_cg_left;
    bool cg_prepared;        /* v2: hrm/<cluster>/<node> exists and passes its controllers down */
    gid_t *groups;           /* the launch child's supplementary groups (reused buffer) */
    size_t cap_groups;
    struct user_cache *users; /* owned; made by exec_init (NULL: every launch looks up) */
    struct anqs *nqs;        /* NULL until a master that schedules distributedly welcomes us */
    struct probe_listen *probe; /* scheduler processes' direct probes (NULL: --probe-listen off) */
    bool registered;
    /* The master's connection dropped and no handshake has succeeded since: the registration
     * queued at the loss waits in ZeroMQ's queue, so it is not sent again meanwhile. */
    bool link_lost;
    bool link_up; /* a handshake succeeded and the connection has not dropped since */
    bool watched; /* its connection's drops and handshakes are watched (HRM_CONN_WATCH_LINK) */
    int64_t register_sent_us, next_heartbeat_us, next_usage_us;
    int64_t register_retry_us; /* wait before sending an unanswered registration again */
    int64_t next_cap_us, next_sweep_us; /* agent_output.c's checks (mono) */
    struct node_counters {
        int64_t mono_us, busy_us, disk_ms;
        bool have;
    } node_prev;             /* the node's counters at the previous usage sample */
    bool stop;
    struct hrm_error fatal;  /* why the agent stops on its own (the master refused it) */
    bool simulate;           /* --simulate-exec: runs are simulated (agent_simexec.c) */
    bool owns_zctx;          /* false in a fleet, whose agents share one context */
    int64_t reap_gap_until_us; /* mono: the signalfd is left out of the loop's poll until then */
    struct agent_loop_counts {
        uint64_t turns;        /* agent_turn calls */
        uint64_t reap_turns;   /* turns that read a SIGCHLD and reaped */
        uint64_t reaped;       /* task processes reaped */
        uint64_t frames;       /* frames sent to the master (agent_flush) */
        uint64_t collects;     /* takes of the launcher's done list that found launches */
        uint64_t launches_back; /* launches taken back from the launcher */
    } counts;                  /* logged when the agent stops (the tests count by them) */
};

/* agent_hw.c */
void hw_discover(struct hw_info *hw, const char *name, bool probe_cgroup);
double hw_loadavg(void);
int64_t hw_mem_avail(void);
int64_t hw_meminfo(const char *key); /* a /proc/meminfo line in bytes; 0 when absent */
/* [{index, uuid, name, mem, numa}] of n GPUs: register's gpu_list, --check --json's. */
json_t *hw_gpu_list(const struct agpu_dev *devs, int32_t n);

/* agent_bind.c: GPUs and cores of the node and of each task (docs/runtime.md, "GPUs") */
void bind_init(struct agent *a); /* after discovery: its GPUs, topology and units */
/* A run's cores before it starts: its cpuset cgroup (cpus and mems written; procs[CG_CPUSET]
 * cleared when that fails) or, without one, *affinity (true when set filled). */
void bind_run(struct agent *a, struct arun *r, char procs[CG_NCTL][1200], bool *affinity,
              struct agpu_cpus *set);
/* GPU tasks came or went: CPU tasks' lent cores follow (lending). */
void bind_rebalance(struct agent *a);

/* agent_usage.c: one usage message: its tasks' samples and, from the second call on (the
 * node's counters need two readings), the node's. */
json_t *usage_message(struct agent *a);

/* agent_cgroup.c: hrm/<cluster>/<node>/<job>.<task>.<attempt> in each hierarchy */
void cg_cluster_id(const char *master_pub, char out[CG_CLUSTER_LEN + 1]); /* sha256, hex */
/* Creates the run's cgroup(s) with its limits; fills procs[] with the files the child writes
 * its pid into.  Failure leaves the run unlimited (logged). */
int cg_setup(struct agent *a, struct arun *r, int64_t cpu_milli, int64_t mem,
             char procs[CG_NCTL][1200]);
/* The node's folder in one hierarchy (enum cg_ctl), made if missing (v2: with the levels
 * above passing their controllers down); 0, or a negative errno (-ENOTSUP without cgroups). */
int cg_node_dir(struct agent *a, int ctl, char *out, size_t len);
/* Writes text to the control file dir/name (no O_CREAT: cgroup files exist); 0 or -errno. */
int cg_write_file(const char *dir, const char *name, const char *text);
bool cg_oom(const struct agent *a, const struct arun *r);
/* The run's cores in its cpuset group (v1 cpuset hierarchy, or v2's unified group): mems
 * (may be "") then cpus.  0 or -errno. */
int cg_cpuset_write(struct agent *a, const struct arun *r, const char *cpus, const char *mems);
/* Sets a running task's cpu quota (the master's task_cpu: compressed or released);
 * -ENOENT when it has no cgroup, else cg_write_file's result. */
int cg_task_cpu(struct agent *a, const struct arun *r, int64_t cpu_milli);
/* agent_cpu.c: the master's task_cpu message, applied to the run it names: 0, -ESRCH (no
 * such run here: logged, ignored), -EINVAL (cpu out of 1..the node's), or cg_task_cpu's. */
int agent_task_cpu(struct agent *a, const json_t *msg);
/* A task's cpu time (us), memory and peak memory (bytes) from its cgroup; -1 when it has
 * none or the files cannot be read (the caller falls back to /proc). */
int cg_usage(const struct agent *a, const struct arun *r, int64_t *cpu_us, int64_t *mem,
             int64_t *peak);
void cg_signal(struct agent *a, const struct arun *r, int sig); /* every process of the group */
void cg_release(struct agent *a, struct arun *r); /* kills what is left, removes it */
void cg_retry(struct agent *a);  /* groups that were not empty at their task's end */
void cg_sweep(struct agent *a);  /* at start: a killed predecessor's task cgroups */
void cg_fini(struct agent *a);

/* agent_speed.c: the node made slower on purpose (--speed, --disk-bps) for a heterogeneous
 * cluster on one machine: a CPU quota on the node's cgroup folder, which holds its tasks and
 * its bench, and a write throttle on the state folder's disk. */
void speed_apply(struct agent *a);
/* The disk throttle alone, for hrm agent --bench beside a live agent of the same name: the
 * bench has its CPU quota in a folder of its own, the live agent's stays as it is. */
void speed_apply_disk(struct agent *a);
void speed_fini(struct agent *a); /* undoes what speed_apply did to the agent itself */
/* Moves process pid into the node's bench leaf (under the same limits as its tasks); fills
 * leaf[] with the folder to remove afterwards ("" when there is none). */
void speed_join_bench(struct agent *a, pid_t pid, char leaf[CG_NCTL][1200]);
void speed_leave_bench(char leaf[CG_NCTL][1200]);

/* agent_bench.c: at start, the cached bench when it fits the agent's limits, else a new one
 * (always with --rebench), saved to <state>/bench-<name>.json; fills a->perf. */
void bench_at_start(struct agent *a);
/* Measures now under the node's limits (one process, serialised with the other agents of the
 * state folder); 0, or -1 when the bench could not run at all (why in err). */
int bench_run(struct agent *a, struct node_perf *out, struct hrm_error *err);

/* agent.c */
void agent_send(struct agent *a, json_t *msg); /* queued for agent_flush; takes msg */
/* The same with a message's JSON text (takes text, from free()'s heap). */
void agent_send_text(struct agent *a, char *text, size_t len);
void agent_flush(struct agent *a);             /* sends the queue, batched */
/* A task_started: queued as agent_send_text, but a queue of only these may wait (below). */
void agent_send_start_text(struct agent *a, char *text, size_t len);
/* When the end of a turn sends the queue (mono µs): 0 at once, a little later when it holds
 * only task_starteds, INT64_MAX when empty. */
int64_t agent_flush_due(const struct agent *a);
/* A simulated agent (no discovery, cgroups, bench or processes) named `name`, connected
 * through the borrowed zctx, watching its link when watch_link (two sockets more); NULL with
 * err.  agent_free frees it. */
struct agent *agent_new_simulated(const struct hrm_agent_config *cfg, const char *name,
                                  void *zctx, bool watch_link, struct hrm_error *err);
void agent_free(struct agent *a);
void agent_start(struct agent *a); /* registers and arms the periodic reports */
/* One turn after a wake-up: the master's messages, ended runs, the queues' timers, reports. */
void agent_turn(struct agent *a);
int64_t agent_next_due(const struct agent *a); /* mono µs of its next timer */
/* A welcome's quiet_ms (a master reconciling after a restart): no heartbeat or usage report
 * until it is over, 60 s at most whatever the master asks (agent.c). */
void agent_quiet_after_welcome(struct agent *a, const json_t *msg);

/* agent_fleet.c: --simulate-exec, one or --count agents in one process and one loop */
int agent_fleet_run(const struct hrm_agent_config *cfg, struct hrm_error *err);

/* agent_simexec.c: simulated runs (docs/runtime.md, "Simulated agents") */
int64_t simexec_duration_us(const json_t *cmd, const json_t *env);
void simexec_launch(struct agent *a, const json_t *msg, const struct nqs_tag *tag);
void simexec_reap(struct agent *a);            /* runs whose time is up end */
void simexec_kill(struct arun *r, int sig);    /* ends the run at once */
int64_t simexec_next_end(const struct agent *a); /* mono µs, INT64_MAX none */
json_t *simexec_usage(struct agent *a);
void simexec_heartbeat(const struct agent *a, double *load, int64_t *mem_avail);

/* agent_exec.c */
int agent_mkdirs(const char *path, mode_t mode); /* mkdir -p */
/* The account a task runs as, resolved before clone (the child may only make system calls). */
struct task_user {
    bool change;      /* the child switches to uid, gid and a->groups[0, ngroups) */
    uid_t uid;
    gid_t gid;
    size_t ngroups;
    char name[64], home[512];
};
/* name NULL (a master that names none) or the agent's own user: no change.  An unknown user,
 * or another one while the agent is not root: -1 and why ("no such user 'x' on node1").
 * With a->users, a resolution is reused (agent_user.c). */
int exec_user_resolve(struct agent *a, const char *name, struct task_user *u, char *why,
                      size_t len);
/* Resolved accounts, reused while /etc/passwd and /etc/group are unchanged (their stat, read
 * again after USER_CACHE_RECHECK_US) and for USER_CACHE_TTL_US at most (other NSS sources
 * change without touching the files).  Failures are not kept. */
#define USER_CACHE_SLOTS 8
#define USER_CACHE_GROUPS 64  /* a user with more supplementary groups is looked up each time */
#define USER_CACHE_TTL_US 10000000
#define USER_CACHE_RECHECK_US 100000 /* the files' stat is read again after this long */
struct user_stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns, ctime_ns;
};
struct user_cache {
    struct user_stamp stamp[2]; /* /etc/passwd, /etc/group when the entries were made */
    struct user_cache_slot {
        bool used;
        char name[64];
        struct task_user user;
        gid_t groups[USER_CACHE_GROUPS];
        int64_t at_us; /* mono */
    } slot[USER_CACHE_SLOTS];
    uint64_t lookups; /* resolutions that were not in the cache */
    struct user_stamp seen[2]; /* the files' stat as last read, at checked_us (mono, 0 never) */
    int64_t checked_us;
};
void usercache_stamps(struct user_stamp st[2]); /* of /etc/passwd and /etc/group now */
/* A hit fills *u and points *groups at its u->ngroups groups; other stamps empty the cache. */
bool usercache_find(struct user_cache *c, const char *name, const struct user_stamp st[2],
                    int64_t now_us, struct task_user *u, const gid_t **groups);
void usercache_store(struct user_cache *c, const char *name, const struct user_stamp st[2],
                     int64_t now_us, const struct task_user *u, const gid_t *groups);
int exec_init(struct agent *a, struct hrm_error *err); /* stdin, environment, child stack */
void exec_fini(struct agent *a);
int64_t agent_now_us(void);
/* A run's identity and start times from a task_launch (the real and the simulated launch
 * share it); false when that attempt already runs (a launch repeated after a reconnect). */
bool exec_run_init(const struct agent *a, const json_t *msg, const struct nqs_tag *tag,
                   struct arun *out);
/* Starts a run from a task_launch message (tag: started by the queue system,
 * else NULL); a run that cannot start is reported ended (exit 127, error).  exec_launch
 * takes its tree (the queue system's description, a frame wire_launch.c declined) and passes
 * its fields to exec_launch_msg, which the frames read without a tree take directly. */
void exec_launch(struct agent *a, const json_t *msg, const struct nqs_tag *tag);
void exec_launch_msg(struct agent *a, const struct hrm_launch_msg *m, const struct nqs_tag *tag);
/* Starts the launcher thread (after the bench's fork: docs/runtime.md); without it, launches
 * run on the agent's loop, as they did before. */
void exec_launcher_start(struct agent *a);
int exec_launcher_fd(const struct agent *a); /* -1 without a launcher */
/* The launcher's hold as the node's role asks: none while it runs a node queue system. */
void exec_launcher_follow_role(struct agent *a);
void exec_collect(struct agent *a); /* the launches that are back: pids, task_started */
/* Reports a run that never started (exit 127 with the reason), as a launch failure. */
void exec_report_failed(struct agent *a, int64_t job, int32_t task, int32_t attempt,
                        const char *why);
void exec_kill(struct agent *a, struct arun *r, int sig);
void exec_reap(struct agent *a);         /* SIGCHLD: collects ended runs into a->done */
void exec_deadlines(struct agent *a);    /* SIGKILL runs past their grace period */
json_t *exec_end_json(const struct arun *r); /* fields of a task_end */
/* The same task_end, and a task_started, as JSON text: the bytes of their trees' dumps, for
 * free() (every task's reports, written without a tree). */
char *exec_end_text(const struct arun *r, size_t *len);
char *exec_started_text(const struct arun *r, size_t *len);
void exec_finish(struct agent *a, struct arun *r);         /* reports a run's end */
void exec_report_started(struct agent *a, struct arun *r); /* queues its task_started */
/* Adds a started run to a->runs and reports its start (on the stored copy, which exec_finish
 * checks to leave the report out when the end goes in the same flush); the stored run. */
struct arun *exec_run_add(struct agent *a, const struct arun *r);
void exec_stop_all(struct agent *a);     /* on shutdown: TERM, grace, KILL, reap */

/* agent_exec_thread.c: one thread that runs launches in order, off the agent's loop */
struct launch_item {
    struct launch_item *next;
};
typedef void launch_fn(void *ctx, struct launch_item *it);
/* Starts the thread, which calls work(ctx, item) for each submitted item; NULL with err.
 * A done item makes the fd readable hold_us after the first item launcher_take has not taken
 * (0: at once); launcher_take gets it earlier, without a system call, when called anyway. */
struct launcher *launcher_new(launch_fn *work, void *ctx, int64_t hold_us,
                              struct hrm_error *err);
void launcher_submit(struct launcher *l, struct launch_item *it); /* lent until taken back */
/* The items whose work is done, as a list in submission order (NULL: none); drains the fd. */
struct launch_item *launcher_take(struct launcher *l);
int launcher_fd(const struct launcher *l); /* readable when held items wait (launcher_new) */
void launcher_set_hold(struct launcher *l, int64_t hold_us); /* from now on */
void launcher_wait_idle(struct launcher *l); /* until every submitted item is done */
void launcher_free(struct launcher *l);      /* after the work left: stops and joins */

/* agent_output.c: task output files (docs/runtime.md, "Task output") */
json_t *aout_serve(struct agent *a, const json_t *fetch); /* the logs_data reply to a logs_fetch */
void aout_run_ended(struct agent *a, int64_t job, int32_t task); /* bounds its files one last time */
void aout_tick(struct agent *a); /* bounds running tasks' files; removes old jobs' output */

/* agent_nqs.c: the node's execution queues (P4) when the master schedules distributedly */
void anqs_configure(struct agent *a, const json_t *welcome); /* starts it if "nqs" is there */
void anqs_free(struct agent *a);
void anqs_on_msg(struct agent *a, int type, const json_t *msg); /* hold, run, del, migrate_* */
bool anqs_cancel(struct agent *a, int64_t job, int32_t task, int32_t attempt); /* true if queued */
void anqs_run_ended(struct agent *a, const struct arun *r);      /* a run it started ended */
void anqs_list_queued(struct agent *a, json_t *running);         /* for register */
int64_t anqs_next_timer(const struct agent *a);                  /* mono µs, INT64_MAX none */
void anqs_run_timers(struct agent *a);
void anqs_drain(struct agent *a); /* delivers what the executor posted to the queue system */
void anqs_heartbeat(struct agent *a, json_t *hb); /* tasks the negotiator moved in and out */
/* Scheduler processes' probes straight to this node (probe_listen.c): opens the listener of
 * --probe-listen with the agent's key pair (0, or a negative code with err); the sockets to
 * poll (how many); the probes received, each fed to the queues like the master's. */
int anqs_probes_open(struct agent *a, const struct hrm_keypair *mine, struct hrm_error *err);
size_t anqs_probes_socks(struct agent *a, void *socks[2]);
void anqs_probes_take(struct agent *a);
/* anqs_probes_take between the master's messages: only when a probe can be waiting (a
 * scheduler key declared), so the central path pays no look at the socket per message. */
void anqs_probes_take_between(struct agent *a);

#endif
