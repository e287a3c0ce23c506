/* The master's context and records, shared by its files (master.c, master_jobs.c, master_sched.c). */
#ifndef HRM_MASTER_PRIVATE_H
#define HRM_MASTER_PRIVATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include "hrm/central.h"
#include "hrm/daemon.h"
#include "hrm/resource.h"
#include "hrm/store.h"
#include "hrm/transport.h"
#include "hrm/wire.h"
#include "master_inbox.h"
#include "master_metrics.h"
#include "nodeperf.h"
#include "roletimers.h"
#include "taskmap.h"

#define NODE_NAME_MAX 48
/* Jobs a `jobs` listing returns at most (its "limit"). */
#define LIST_MAX_JOBS 2000
#define PEER_ID_MAX 256

struct peer_id {
    unsigned char id[PEER_ID_MAX];
    size_t len;
};

struct rtask {
    uint8_t state;    /* enum hrm_rtask_state */
    int32_t attempt;  /* of the latest launch; 0 = never launched */
    int32_t node;     /* master node index while running, else of the last run (-1 none) */
    uint32_t gpu_mask;
    int32_t group;    /* index into the job's task groups */
    int32_t sched;    /* index in the scheduler's workload, -1 when not there */
    int32_t pid;
    bool seen; /* scratch: reported by its agent at registration */
    int32_t fails; /* failed runs so far (distributed scheduling's retry count) */
    int exit, signal;
    bool oom;
    int64_t start_us, end_us, cpu_us, rss;
    int64_t rss_peak; /* highest memory its agent reported (this master's lifetime) */
    int64_t cpu_peak;  /* highest milli-cores over one usage interval (this master's lifetime) */
    int64_t cpu_limit; /* FGM compressed its cpu to this many milli-cores; 0: its request */
    int32_t est_slot;  /* its run's trace in the master's FGM estimator + 1; 0 none */
    int64_t charge_cpu, charge_mem; /* what its run holds in the scheduler, when FGM charged
                                     * other than the request (0, 0: the request) */
    bool by_request;   /* FGM retries it by its request (a predicted run of it failed) */
    char *error; /* why the latest launch could not start (owned; NULL: it started) */
    /* Stream jobs (master_stream.c): runs that ended and were restarted, quick exits in a row
     * (the backoff's exponent), the delay before the latest restart, and while the task waits
     * out that delay, when it may be placed again (wall clock; 0: not waiting). */
    int32_t restarts, crash_streak;
    int64_t backoff_us, restart_at_us;
    int32_t node_slot; /* while running on a node: its place in that node's runs (task_count) */
};

/* A running task, as a node's list of them holds it (rnode.runs). */
struct task_ref {
    struct rjob *job;
    int32_t idx;
};

struct waiter {
    struct peer_id peer;
    long long req;
};

#define RTASK_NSTATES 6 /* enum hrm_rtask_state */

/* A job's tasks by state, kept by task_set_state/task_set_start at every change, so that a
 * listing costs O(1) per job rather than a scan of its tasks. */
struct rcounts {
    int32_t state[RTASK_NSTATES];
    int32_t queued; /* of the running ones: placed, waiting in the node's queue (start_us < 0) */
};

struct rjob {
    int64_t id;
    char name[NODE_NAME_MAX], user[NODE_NAME_MAX], queue[NODE_NAME_MAX];
    int32_t priority;
    int kind;  /* enum hrm_job_kind: HRM_JOB_BATCH or HRM_JOB_STREAM */
    int state; /* enum hrm_rjob_state */
    int exit;
    bool failed; /* a task failed for good: nothing more of it starts */
    int64_t submit_us, end_us;
    json_t *spec; /* normalised description (owned) */
    struct hrm_res *greq; /* per group: request (gpu_mem: total over its GPUs) */
    int32_t *gshare;      /* per group: thousandths of each GPU (1..999 a fraction, 1000 whole) */
    int32_t ngroups;
    int32_t ntasks;
    struct rtask *tasks;
    struct rcounts count;   /* kept by task_set_* */
    int64_t first_start_us; /* earliest start of any run, -1 none; kept by task_set_start */
    bool first_start_sent;  /* first_start_us is only a launch's sending time (task_set_sent) */
    int32_t sched; /* index in the scheduler's workload, -1 when not there */
    int32_t inst;  /* distributed scheduling: the instance the job is registered with */
    int64_t run_us_sum; /* distributed scheduling: run time of its finished tasks, for estimates */
    int32_t run_n;
    struct waiter *waiters;
    size_t nwaiters, cap_waiters;
};

struct rnode {
    char name[NODE_NAME_MAX], rack[NODE_NAME_MAX];
    struct peer_id peer;
    bool up;
    int64_t welcome_turn; /* the turn (master.turns) whose commit its welcome waits for */
    int32_t cores, gpus;
    int64_t mem, gpu_mem; /* gpu_mem per GPU */
    int64_t last_seen_us; /* monotonic */
    double load;
    int64_t mem_avail;
    int32_t ntasks_reported;
    /* Running tasks placed here (kept by task_set_*): started, waiting in its queue, and what
     * the started ones asked for. */
    int32_t nstarted, nqueued;
    int64_t cpu_used, mem_used;
    int32_t gpu_milli[HRM_MAX_GPUS_PER_NODE]; /* per GPU: the shares its started tasks hold */
    int32_t gpu_ntasks[HRM_MAX_GPUS_PER_NODE]; /* per GPU: how many started tasks hold it */
    int64_t moved_in, moved_out;  /* tasks the negotiator moved here / away */
    /* Its latest usage sample: the load that is not hrm tasks (milli-cores, bytes) and how
     * busy its disks were (per mille of the interval, summed over disks). */
    int64_t foreign_cpu, foreign_mem, disk_busy_permille;
    char host[64], cgroup[32];
    /* From its registration (master_gpus.c): the model's NUMA domains and each GPU's, and
     * the GPUs as the agent described them ([{index, uuid, name, mem, numa}], owned; NULL
     * from an agent that sends none). */
    int32_t numa;
    bool gpu_numa_known;
    int8_t gpu_numa[HRM_MAX_GPUS_PER_NODE];
    json_t *gpu_list;
    struct node_perf perf; /* its agent's bench (nodeperf.h); zero: none reported */
    bool task_cpu; /* its agent applies task_cpu (said so in register) */
    /* Its tasks' use in its latest node sample (milli-cores, bytes): a sibling agent on the same
     * host counts them out of its own foreign load (usage_host_foreign). */
    int64_t tasks_cpu_milli, tasks_mem;
    int32_t host_next; /* the next node of its host (a ring; itself when alone, -1: no host) */
    /* The tasks running (or queued) here, kept by task_count like the counters above: a
     * registration reconciles them without a walk of every task of every job. */
    struct task_ref *runs;
    int32_t nruns;
    size_t cap_runs;
};

/* master_nodeidx.c: nodes by name, by connection and by host (a hash each; O(1) lookups). */
enum nodeidx_kind { NODEIDX_NAME, NODEIDX_PEER, NODEIDX_HOST, NODEIDX_KINDS };
struct nodeidx {
    int32_t *node; /* per slot: a node index, -1 empty */
    uint64_t *hash;
    size_t cap, used;
};

/* A log request forwarded to an agent, waiting for its answer. */
struct pending_logs {
    long long id;
    struct peer_id client;
    long long client_req;
    int64_t since_us;
    int64_t job;              /* the task read, whose state the answer carries */
    int32_t task, attempt;
    bool chunked;             /* a read from an offset (the answer is a logs_data) */
};

/*
 * A turn's launches leave before its commit's sync only while the turn made at most this many
 * jobs, so a commit the machine's loss takes away (the only one not yet synced) held at most
 * this many new ids; a master that finds the host restarted since the last one skips as many
 * (jobs_load), so no id whose task may have started is ever given to another job.
 */
#define JOB_IDS_UNSYNCED_MAX 1024

/* Messages wait here until the turn's commit is written (launches) or synced (the rest). */
struct outmsg {
    struct peer_id to;
    json_t *msg; /* owned; NULL: the message is text (a hot one encoded without a tree) */
    char *text;  /* owned, len bytes */
    size_t len;
    /* A launch: it may leave once the turn's commit is written, before its sync (turn()). */
    bool launch;
    /* An end's acknowledgement: it waits for the sync of the end's commit, which may be a later
     * turn's (the group commit, turn()); a later launch to its agent may overtake it. */
    bool ack;
};

/* A scheduler's workload entries back to the job table. */
struct wl_map {
    struct rjob **job_of; /* per workload job */
    int32_t *task_of;     /* per workload task: index within its job */
    size_t cap_job_of, cap_task_of;
};

/* Tasks one scheduling pass starts by default (hrm master --max-pass-starts; docs/runtime.md,
 * "State folder and durability"): at the master's 40-70 us of CPU per placement (its
 * pass, rows and launch), some 20-35 ms of a core, so a client's request waits for at most
 * that, while a pass's fixed costs (the policy's ordering, the turn's commit) stay a few
 * percent of its placements'. */
#define MASTER_MAX_PASS_STARTS 500
/* The group commit's window (--group-commit, docs/runtime.md "State folder and durability"):
 * how long a turn whose sync only agents' end acknowledgements wait for may leave it to a
 * later turn's. */
#define MASTER_GROUP_COMMIT_US 2000

struct msched {
    struct hrm_policy *policy; /* borrowed from central, which owns it */
    struct hrm_cluster *cluster;
    struct hrm_workload *wl;
    struct hrm_central *central;
    struct wl_map map;
    bool dirty;             /* the workload or the cluster must be rebuilt */
    int64_t *arrived;       /* ids of jobs submitted since the last sync, not in the role yet */
    size_t narrived, cap_arrived;
    struct role_timers timers; /* the scheduler's (central path: role 0; distributed: instance) */
    struct hrm_env env;
    int64_t rebuilds, passes;
    int64_t bounded_passes; /* passes that reached cfg.max_pass_starts (central path) */
    int64_t grows; /* turns whose new jobs joined the role without a rebuild */
};

/* Lines about bad usage samples in the current window (master_usage.c). */
struct usage_complaints {
    int64_t window_start_us; /* monotonic */
    int32_t said;
    int64_t unsaid;
};

/* FGM in the master (master_fgm.c). */
struct mfgm {
    struct hrm_est *est;      /* owned; NULL unless the policy is FGM */
    int32_t *free_slots;      /* estimator slots (1-based) of runs that ended */
    size_t nfree, cap_free;
    int32_t nslots;           /* slots handed out so far */
    const char **modes;       /* per node: the Alg. 3 mode last logged (NULL: none yet) */
    int32_t nmodes;
};

struct mdist; /* distributed scheduling (master_dist.c); NULL on the central path */

struct master {
    /* built in this order by master_new, torn down in reverse */
    struct hrm_master_config cfg;
    char state_dir[1024], keys_dir[1024];
    int lock_fd;            /* holds DIR/master.lock: one master per state folder */
    struct hrm_store *store;
    struct hrm_authz *authz;
    void *zctx;
    struct hrm_server *srv;
    struct inbox inbox; /* messages received, not yet handled: clients' first (master_inbox.h) */
    int sigfd;
    FILE *trace; /* --trace FILE (master_trace.c); NULL: none */
    /* job table: ids are dense from 1, jobs[id - 1] */
    struct rjob **jobs;
    size_t njobs, cap_jobs;
    int64_t next_job;
    struct rnode *nodes;
    int32_t nnodes;
    size_t cap_nodes;
    struct nodeidx nodeidx[NODEIDX_KINDS]; /* master_nodeidx.c */
    size_t *flush_next;                    /* flush_out's scratch: next message to the same peer */
    size_t cap_flush_next;
    struct msched sched;
    struct mdist *dist;
    struct outmsg *out;
    size_t nout, cap_out;
    /* Relays that change no durable state (probes, their replies): they leave in the read loop,
     * not after the turn's pass and commit (master_relay). */
    struct outmsg *relay;
    size_t nrelay, cap_relay;
    int64_t turns; /* turns begun: a relay to a peer whose welcome waits in this one waits too */
    struct pending_logs *logs;
    size_t nlogs, cap_logs;
    /* Waits pending (each job's own list is j->waiters): (job and client, req) -> 1, to know a
     * resent wait; (client, 0) -> how many it holds, for the per-client cap. */
    struct task_map wait_set, wait_peers;
    long long next_logs_id;
    int64_t boot;
    int64_t start_mono_us;
    int64_t allow_list_check_us; /* when the loop next checks authorized for a change */
    bool reconciling;       /* after a restart: waiting for agents before scheduling */
    /* Since this process started: registrations handled, and agents' messages answered
     * not_registered (an agent that has not registered yet); said when reconciliation ends. */
    int64_t registrations, not_registered_answers;
    /* Heartbeats and usage reports handled while reconciling: what the agents already back cost
     * the master meanwhile (their welcome asks them to stay quiet: master.c, welcome_quiet_ms). */
    int64_t reconcile_reports;
    bool stop;
    int32_t turn_new_jobs; /* jobs this turn made (test_crash_after_submit) */
    /* The group commit (turn()): jobs made since the last sync (JOB_IDS_UNSYNCED_MAX bounds
     * them over the turns of an unsynced window, not per turn), when the sync held for the
     * window is due (monotonic; 0: none held), how much of m->out is known to be
     * acknowledgements only, and the turns that left their sync to a later one. */
    int32_t unsynced_new_jobs;
    int64_t sync_due_us;
    size_t out_acks_checked;
    int64_t held_syncs;
    size_t turn_launch_batches; /* agents' batches of launches sent before the commit's sync */
    struct hrm_error turn_err;
    struct hrm_authz_entry sender; /* the key of the message being dispatched (master_keys.c) */
    struct usage_complaints usage_complaints;
    struct usage_complaints sched_complaints; /* scheduler processes' bad messages (master_remote.c) */
    struct mfgm fgm;
    struct key_binding *bindings;  /* agent keys without node=: the name they registered as */
    size_t nbindings, cap_bindings;
    int64_t stream_next_us; /* earliest restart_at_us of a stream task (INT64_MAX: none) */
    struct eta_state *eta;  /* run-time history and the latest estimates (master_eta.c) */
    uint64_t task_changes;  /* counts every change of a task's counters (task_count) */
    int64_t events_since_prune, events_pruned_mono_us; /* the event log's retention pass */
    struct master_counters counters; /* GET /metrics (master_metrics.c) */
    struct mhttp *http;     /* the HTTP API (master_http_loop.c); NULL without --http */
    struct snap_reader *snap; /* listings answered beside the loop (master_snap.c) */
};

struct key_binding {
    char key[HRM_KEY_Z85];
    char node[NODE_NAME_MAX];
};

/* master_events.c: the cluster event log.  events_add appends one event (takes detail, a JSON
 * object or NULL) in the turn's transaction; node -1: none; task -1: none. */
void events_add(struct master *m, const char *kind, int64_t job, int32_t task, int32_t node,
                json_t *detail);
/* A task's event: its attempt and node are added to detail (taken, NULL: none). */
void events_task(struct master *m, const char *kind, const struct rjob *j, int32_t idx,
                 json_t *detail);
/* A run's end (task_ended): ok, exit, signal, oom, the error if any, and its attempt. */
void events_task_ended(struct master *m, const struct rjob *j, int32_t idx, bool ok);
/* reason: "failure", "node_lost" or "preempted". */
void events_task_retried(struct master *m, const struct rjob *j, int32_t idx, const char *reason);
void events_housekeeping(struct master *m);
void events_defaults(struct hrm_master_config *cfg);
void on_events(struct master *m, const struct peer_id *from, json_t *msg);

/* master_http_loop.c: the HTTP API's side in the loop (docs/runtime.md, "HTTP API").  Without
 * --http every one is a no-op. */
void http_config_defaults(struct hrm_master_config *cfg);
int mhttp_start(struct master *m, struct hrm_error *err); /* server up, DIR/http written */
void mhttp_stop(struct master *m);
int mhttp_fd(const struct master *m); /* readable when requests wait; -1 without --http */
void mhttp_turn(struct master *m);    /* the queued requests, in the turn's transaction */
/* After the commit, before the replies leave: the snapshot readers asked for, and the event
 * log's sequence number for the streams waiting on it. */
void mhttp_after_commit(struct master *m);
bool mhttp_peer(const struct peer_id *p); /* a request of the HTTP API */
void mhttp_reply(struct master *m, const struct peer_id *p, const json_t *msg);
/* master_metrics.c: the Prometheus text of GET /metrics (malloc'd), built on the loop. */
char *master_metrics_render(const struct master *m);

/* master_trace.c: --trace FILE, one line per step of a task (no-ops without it). */
int trace_open(struct master *m, struct hrm_error *err);
void trace_close(struct master *m);
void trace_step(struct master *m, const char *step, int64_t job, int32_t task, int32_t node);

/* master.c */
int64_t master_now_us(void);  /* wall clock, µs */
void master_send(struct master *m, const struct peer_id *to, json_t *msg); /* takes msg */
/* Node n (up) is sent its welcome again, as on its registration: an agent takes a welcome as
 * the master's current word on its configuration (the scheduler keys of its probe listener). */
void master_welcome_again(struct master *m, int32_t n);
void master_send_node(struct master *m, int32_t node, json_t *msg);       /* takes msg */
/* A launch as its JSON text (takes text, from free()'s heap, jobs_launch_text): what the master
 * sends for every task is encoded directly, without a tree (docs/protocol.md, "Framing").  It
 * may leave before the turn's commit is durable (turn() in master.c). */
void master_send_launch(struct master *m, int32_t node, char *text, size_t len);
/* task_end_ack as text, one per task end: the bytes of its tree's dump (for free()). */
char *master_end_ack_text(int64_t job, int64_t task, int64_t attempt, size_t *len);
/* The same for a message that records nothing and promises nothing the store must keep (a
 * probe, a hold's release, a node's reply to a probe): it leaves in the turn's read loop, as
 * soon as the messages received with it are handled, before the turn's pass and commit. */
void master_relay(struct master *m, const struct peer_id *to, json_t *msg); /* takes msg */
void master_relay_node(struct master *m, int32_t node, json_t *msg);       /* takes msg */
/* task_kill of one run (job, task index, attempt) to node: cancel, preemption, runs nobody wants. */
void master_kill_run(struct master *m, int32_t node, int64_t job, int64_t task, int64_t attempt);
void master_reply_error(struct master *m, const struct peer_id *to, enum hrm_wire_err code,
                        long long req, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A store write failed: the master stops (the store is the truth; see runtime.md). */
void master_store_failed(struct master *m, int rc, const struct hrm_error *err);

/* master_usage.c: an agent's usage message, checked sample by sample (a bad one is logged,
 * rate-limited, and dropped), kept in the tables and handed to the central role. */
void usage_on_message(struct master *m, int32_t node, const json_t *msg);
/* A task sample to the use it measured (cpu in milli-cores over the interval, memory in
 * bytes) and its run; -EINVAL (absurd), -ENOENT (unknown task) or -ESRCH (not running on
 * that node in that attempt) with why. */
int usage_task_convert(struct master *m, int32_t node, const json_t *s, struct rjob **j_out,
                       int32_t *idx_out, struct hrm_usage *u, char *why, size_t len);
/* A node sample to its foreign load (what is not hrm tasks) and disk busy per mille. */
int usage_node_convert(const struct rnode *rn, const json_t *s, struct hrm_usage *u,
                       int64_t *disk_permille, char *why, size_t len);
/* A node's foreign load (u, from usage_node_convert) when other agents run on its host (same
 * `host` in register, as under hrm up): their tasks are not foreign, and what none of the host's
 * agents runs is shared among them by their declared cores.  Alone on its host: unchanged. */
void usage_host_foreign(struct master *m, int32_t node, const json_t *s, struct hrm_usage *u);
/* The central role's messages for them, in its workload's indices (as the simulator sends). */
void usage_task_msg(const struct rjob *j, const struct rtask *t, int32_t node,
                    const struct hrm_usage *u, struct hrm_msg *out);
void usage_node_msg(int32_t node, const struct hrm_usage *u, struct hrm_msg *out);

/* master_fgm.c: FGM's estimator (kept across rebuilds and in the store), compression, modes. */
uint32_t fgm_task_logic(const struct rjob *j, int32_t group); /* the estimator's program id */
void fgm_attach(struct master *m, struct hrm_policy *policy); /* after each rebuild */
void fgm_free(struct master *m);
/* A task's sample (use) with its main process's run-queue wait over the interval (us; 0 when
 * not reported): the estimator learns use plus wait, what the task wanted. */
void fgm_sample(struct master *m, struct rjob *j, int32_t idx, const struct hrm_usage *u,
                int64_t wait_us);
/* What a task wanted (milli-cores): its use plus its wait over the interval, at most cores. */
int64_t fgm_demand(int64_t use_milli, int64_t wait_us, int64_t interval_us, int64_t cores);
void fgm_task_end(struct master *m, struct rjob *j, int32_t idx, bool ok);
/* hrm job's per-task request, FGM's estimate (when it has one), measured peaks, cpu limit. */
void fgm_task_json(const struct master *m, const struct rjob *j, int32_t idx, json_t *o);
void fgm_after_pass(struct master *m);
/* A run launched from scheduler task `task`: what FGM charged it, kept for rebuilds. */
void fgm_launched(struct master *m, struct rjob *j, int32_t idx, int32_t task);
/* A rebuild puts a running task back holding what it held (hrm_state_start[_charged]). */
int fgm_restore_start(struct hrm_state *st, int32_t task, const struct rjob *j,
                      const struct rtask *rt);
/* After a task end reached the scheduler: remember whether FGM now retries it by request. */
void fgm_after_task_end(struct master *m, struct rjob *j, int32_t idx);
/* After a rebuild: the new policy retries by request the tasks the old one did. */
void fgm_restore_retries(struct master *m, struct hrm_policy *policy);
/* The cpu limit of a task of request on a node whose tasks hold total_charge (by estimate), of
 * capacity (milli-cores): 0 when the node is not over-committed (the task keeps its request),
 * else its request times the node's share 1 - r_c = capacity / total_charge. */
int64_t fgm_cpu_limit(int64_t request, int64_t total_charge, int64_t capacity);

/* master_keys.c: who a key is (its node, its account) */
int keys_load_bindings(struct master *m, struct hrm_error *err);
void keys_free(struct master *m);
/* master_gpus.c: a registration's numa and gpu_list into rn (changed: the cluster model's
 * view of the node differs); -EINVAL and why for a bad list, rn untouched. */
int mgpu_register(struct rnode *rn, const json_t *msg, int32_t cores, int32_t gpus,
                  bool *changed, struct hrm_error *err);
void mgpu_node_json(const struct rnode *rn, json_t *o); /* gpu_mem, numa, gpu_list for hrm nodes */

/* May the sender register as node `name`?  Refusals are answered and logged. */
bool keys_may_register(struct master *m, const struct peer_id *from, const char *name);
/* The account a job of the sender runs as, from its key; NULL (answered) when
 * the description names another one. */
const char *keys_job_user(struct master *m, const struct peer_id *from, const json_t *desc,
                          long long req);
/* Does the sender act for job j's account (its own, or every one with an admin key)?  Only then
 * may it cancel the job and read its output and environment. */
bool keys_owns(const struct master *m, const struct rjob *j);
/* keys_owns, else answers req with a refusal naming what ("cancel", "read the output of") and
 * logs it. */
bool keys_may_act_on(struct master *m, const struct peer_id *from, const struct rjob *j,
                     const char *what, long long req);

int32_t nodeidx_find(const struct master *m, enum nodeidx_kind kind, const void *key, size_t len);
void nodeidx_add(struct master *m, enum nodeidx_kind kind, int32_t n); /* by its current key */
void nodeidx_del(struct master *m, enum nodeidx_kind kind, int32_t n);
/* Node n's connection becomes p (NULL: none), in the node and in the index. */
void nodeidx_set_peer(struct master *m, int32_t n, const struct peer_id *p);
/* Node n's host becomes host: it leaves its old host's ring and joins the new one's. */
void nodeidx_set_host(struct master *m, int32_t n, const char *host);
void nodeidx_free(struct master *m);

/* master_jobs.c */
int32_t nodes_find(struct master *m, const char *name, bool create); /* index or -1 */
struct rjob *jobs_find(struct master *m, int64_t id);
int jobs_load(struct master *m, struct hrm_error *err);
void jobs_free_all(struct master *m);
void jobs_persist_task(struct master *m, struct rjob *j, int32_t idx);
void jobs_persist_state(struct master *m, struct rjob *j);
/* Every change of a task's state, start or node goes through these, which keep the job's and the
 * node's counters. */
void task_set_state(struct master *m, struct rjob *j, int32_t idx, uint8_t state);
void task_set_start(struct master *m, struct rjob *j, int32_t idx, int64_t start_us);
void task_set_sent(struct master *m, struct rjob *j, int32_t idx, int64_t sent_us);
void task_set_node(struct master *m, struct rjob *j, int32_t idx, int32_t node);
void task_set_gpus(struct master *m, struct rjob *j, int32_t idx, uint32_t gpu_mask);
/* Up nodes; and a normalised task group's request (hrm_jobdesc_normalise's fields), as the
 * submission checks (fits_nowhere, stream_refuse_spec) read them. */
int32_t jobs_nodes_up(const struct master *m);
struct group_ask {
    int64_t cpu, mem, gpus, gpu_share, gpu_mem, count;
};
struct group_ask jobs_group_ask(const json_t *group);
/* Counts j's tasks again, from scratch (what the counters must equal). */
void jobs_recount(const struct rjob *j, struct rcounts *out);
/* The counters against a full recount (of job only, or of every job and node when only is NULL):
 * true if they match, else false with what differs in why. */
bool jobs_counts_check(const struct master *m, const struct rjob *only, char *why, size_t len);
void jobs_task_running(struct master *m, struct rjob *j, int32_t idx, int32_t node, int32_t attempt,
                       uint32_t gpu_mask);
/* The record of a task placed on node (persisted), without the launch: started says whether it
 * starts now (the central path) or waits in the node's queue until task_started. */
void jobs_task_placed(struct master *m, struct rjob *j, int32_t idx, int32_t node, int32_t attempt,
                      uint32_t gpu_mask, bool started);
void jobs_finish(struct master *m, struct rjob *j);
void jobs_requeue_node(struct master *m, int32_t node);
bool jobs_live(const struct rjob *j);
void on_submit(struct master *m, const struct peer_id *from, json_t *msg);
void on_jobs(struct master *m, const struct peer_id *from, json_t *msg);
void on_job(struct master *m, const struct peer_id *from, json_t *msg);
void on_nodes(struct master *m, const struct peer_id *from, json_t *msg);
/* A job as listed (hrm jobs, GET /api/v1/jobs): O(1), from its counters (new reference). */
json_t *jobs_summary_json(const struct rjob *j);
/* Every node as hrm nodes lists it (new reference). */
json_t *jobs_nodes_json(struct master *m);

/* master_perf.c: the agents' benches (docs/runtime.md, "Node performance") */
/* Keeps a register message's "bench" (NULL: the agent sent none); a changed figure rebuilds
 * the scheduler's cluster.  A malformed one is logged and ignored. */
void master_node_perf(struct master *m, struct rnode *rn, const json_t *bench);
/* cpu_speed and disk_bw of every node for the scheduler's cluster (nodeperf_map). */
void master_perf_map(const struct master *m, double *cpu_speed, double *disk_bw);
/* Adds node n's figures, the cpu_speed NPARSA reads and its AHP scores per job type to the
 * node's object of hrm nodes --json. */
/* The AHP scores of every node (cpu then mem, 2 x the cluster's nodes), computed once per
 * listing: per node, they would cost O(nodes) each (malloc'd; NULL: none, distributed or not
 * built yet). */
double *master_perf_scores(const struct master *m);
void master_perf_json(const struct master *m, int32_t n, const double *scores, json_t *o);
void on_cancel(struct master *m, const struct peer_id *from, json_t *msg);
void on_wait(struct master *m, const struct peer_id *from, json_t *msg);
void on_logs(struct master *m, const struct peer_id *from, json_t *msg);
void on_logs_data(struct master *m, const struct peer_id *from, json_t *msg);
void on_logs_unanswered(struct master *m, const struct pending_logs *p); /* the node is silent */

/* master_jobs.c: the body of a task_launch for the task's current attempt (new reference). */
json_t *jobs_launch_json(struct master *m, struct rjob *j, int32_t idx);
/* The same launch as JSON text: the bytes of hrm_wire_dump(jobs_launch_json(...)), without the
 * tree (for free(); *len its length). */
char *jobs_launch_text(const struct rjob *j, int32_t idx, size_t *len);
/* Records why a task's launch failed (NULL or "": it did not fail to start); control characters
 * are replaced, since the text is printed on users' terminals. */
void jobs_set_task_error(struct rtask *t, const char *why);
/* A task that ran (or was queued) on a node that lost it is pending again; tells the scheduler. */
void jobs_task_lost(struct master *m, struct rjob *j, int32_t idx);

/* master_stream.c: stream jobs, long-running services (docs/runtime.md, "Batch and stream
 * jobs").  A run of a stream task ended (any status): recorded, and the task waits out its
 * crash-loop backoff before it is placed again.  Never finishes the job. */
void stream_task_ended(struct master *m, struct rjob *j, int32_t idx);
/* Tasks whose backoff is over become placeable (the scheduler is rebuilt with them). */
void stream_housekeeping(struct master *m);
/* A task of j loaded from the store or lost with its node: keeps stream_next_us and counts a
 * restart of a lost stream task. */
void stream_task_loaded(struct master *m, struct rtask *t);
void stream_task_lost(struct rjob *j, int32_t idx);
/* Why a stream job cannot be accepted (a group's count over what the up nodes could run at
 * once), written to why; NULL if fine. */
const char *stream_refuse_spec(const struct master *m, const json_t *spec, char *why, size_t len);
/* The delay before the restart that follows `streak` quick exits in a row (streak >= 1). */
int64_t stream_backoff_us(int32_t streak);
/* Whether a pending task waits out its backoff (not for the scheduler yet). */
static inline bool stream_task_waiting(const struct rtask *t)
{
    return t->restart_at_us > 0;
}

/* master_dist.c: distributed scheduling (P4) -- scheduler instances and the negotiator in
 * the master, node queue systems in the agents (docs/runtime.md, "Distributed scheduling"). */
bool dist_policy_known(const char *policy);
int dist_new(struct master *m, struct hrm_error *err); /* m->dist; checks the policy's params */
void dist_free(struct master *m);
int dist_rebuild(struct master *m, struct hrm_error *err); /* nodes synced, new jobs registered */
int dist_run_timers(struct master *m, struct hrm_error *err);
void dist_task_end(struct master *m, struct rjob *j, int32_t idx, bool ok);
void dist_task_lost(struct master *m, struct rjob *j, int32_t idx);
void dist_job_cancelled(struct master *m, struct rjob *j);
void dist_node_up(struct master *m, int32_t node);
void dist_node_down(struct master *m, int32_t node);
void dist_on_role_msg(struct master *m, int32_t node, int type, json_t *msg);
/* master_remote.c: a scheduler process's message (hrm sched). */
void dist_on_sched_msg(struct master *m, const struct peer_id *from, int type, json_t *msg);
void dist_housekeeping(struct master *m);
/* After a change of the allow-list's scheduler keys: the nodes with probe listeners are
 * welcomed again with the keys listed now, and the processes told the nodes again.  Reads
 * m->authz: only where the loop holds the socket. */
void dist_follow_keys(struct master *m);
bool dist_is_sched_peer(struct master *m, const struct peer_id *p); /* batched like agents */
/* Node n's queue configuration for its welcome (new ref), with the scheduler keys its probe
 * listener admits when it has one. */
json_t *dist_welcome(const struct master *m, int32_t n);
/* Node n registered (msg, from the sender's key): where scheduler processes may probe it
 * directly ("probe"; none from an older agent), told to them if it changed. */
void dist_node_probe(struct master *m, int32_t n, const json_t *msg);
bool dist_node_queues(const struct master *m); /* the agents run node queues (not hrm-shared) */
bool dist_node_free(const struct master *m, int32_t node, struct hrm_res *free_out);
json_t *dist_nodes_extra(const struct master *m); /* hrm nodes' scheduling counters, or NULL */
const char *dist_refuse_spec(struct master *m, const json_t *spec); /* NULL if fine */

/* master_sched.c */
/* Adds j's live tasks (running, or pending unless the job failed) to wl as one job of one stage,
 * each with est_us as its duration and estimate (0: none), and records them in map and in the
 * job's and tasks' sched indices.  *sj is the workload job, or -1 when nothing is live. */
int sched_wl_add_job(struct hrm_workload *wl, struct wl_map *map, struct rjob *j, int64_t est_us,
                     int32_t *sj, struct hrm_error *err);
void sched_wl_map_free(struct wl_map *map);
/* A task a scheduler holds: running, or pending unless its job failed. */
bool sched_task_live(const struct rjob *j, const struct rtask *t);
void sched_init(struct master *m);
void sched_fini(struct master *m);
int sched_rebuild(struct master *m, struct hrm_error *err);
/* A job was submitted: the role takes it in at the turn's sched_add_arrived. */
void sched_job_arrived(struct master *m, const struct rjob *j);
/* Jobs submitted this turn join the role without a rebuild when the policy can grow; else, or
 * when finished work fills most of the role, the role is rebuilt. */
int sched_add_arrived(struct master *m, struct hrm_error *err);
int64_t sched_next_timer(const struct master *m);
int sched_run_timers(struct master *m, struct hrm_error *err);
/* A task of a scheduled job ended on node: outcome DONE/FAILED; syncs the job's records. */
int sched_task_end(struct master *m, struct rjob *j, int32_t idx, bool ok, struct hrm_error *err);
int sched_node_down(struct master *m, int32_t node, struct hrm_error *err);
int sched_node_up(struct master *m, int32_t node, struct hrm_error *err);
/* Free resources on node per the scheduler (for `hrm nodes`); false if unknown. */
bool sched_node_free(const struct master *m, int32_t node, struct hrm_res *free_out);

#endif
