/* The master's distributed scheduling, shared by master_dist.c (in-process instances, the negotiator, relaying) and master_remote.c (scheduler processes). */
#ifndef HRM_DIST_PRIVATE_H
#define HRM_DIST_PRIVATE_H

#include "hrm/cluster.h"
#include "hrm/dsched.h"
#include "hrm/dsetup.h"
#include "hrm/negotiator.h"
#include "hrm/workload.h"
#include "master_private.h"

#define DIST_MAX_NODES 4096      /* the negotiator's wait matrix is sized once */
#define ROUND_TIMEOUT_US 2000000 /* a probing round waits this long for a node that died */
#define LATENCY_US 250           /* one message over loopback, for the latency-scaled defaults */
#define DEFAULT_EST_US 1000000   /* a task's estimate before any task has finished */
#define ROLE_NEGOTIATOR (-1)
#define DOWN_WAIT_US 3600000000LL /* the wait a down node "reports": an hour */

struct role_env {
    struct hrm_env env; /* first: the roles get &env and we get back to the wrapper */
    struct master *m;
    int32_t role; /* instance index, or ROLE_NEGOTIATOR */
};


struct dpost {
    hrm_addr to;
    struct hrm_msg msg;
};

#define MAX_EXEC_QUEUES 16
#define REMOTE_JOB INT32_MAX /* rjob.sched of a job registered with a scheduler process */

/* A scheduler process (hrm sched): its instances are base .. base + count - 1. */
struct rsched {
    char name[48];
    char pub[HRM_KEY_Z85]; /* its key: the agents that admit it are probed directly */
    struct peer_id peer;
    int32_t base, count;
    int64_t last_seen_us; /* monotonic */
    int64_t load;         /* live tasks of the jobs registered with it */
    int64_t welcome_turn; /* the turn whose commit its sched_welcome waits for */
    bool up;
};

/* Where a node takes probes straight from scheduler processes (its agent's register). */
struct dprobe {
    char ep[256];          /* "": none (an older agent, or --probe-listen off) */
    char pub[HRM_KEY_Z85]; /* the agent's key: the listener's CURVE server key */
    int32_t keyset;        /* the scheduler keys its welcome declared (mdist.keysets) */
};

struct mshared; /* shared-state scheduling (master_shared.c); NULL for the other policies */

struct mdist {
    struct hrm_dsetup setup;
    struct mshared *shared; /* hrm-shared: the commit role here, instances in processes */
    struct hrm_nqs_queue_cfg queues[MAX_EXEC_QUEUES]; /* the nodes' execution queues */
    int32_t nqueues;                                  /* 0: one unlimited queue */
    struct hrm_cluster *cluster;
    struct hrm_workload *wl;
    struct hrm_dsched **inst;
    struct role_env *envs; /* ninst instances, then the negotiator */
    int32_t ninst;
    struct hrm_negotiator *nego;
    bool *node_up;         /* per cluster node: what the instances were told */
    struct wl_map map;     /* workload jobs and tasks back to the table */
    struct dpost *posts;
    size_t nposts, cap_posts;
    bool draining;
    int32_t next_inst;
    double est_ewma_us;
    int64_t relayed, lost, retried, compactions;
    char why[512]; /* dist_refuse_spec's answer */
    /* scheduler processes (hrm sched, master_remote.c): their instances follow the local ones */
    struct rsched *rs;
    size_t nrs, cap_rs;
    int32_t next_base; /* the first global instance index not given out yet */
    /* direct probes (master_remote.c) */
    struct dprobe *probe; /* per node */
    size_t cap_probe;
    json_t *keysets; /* each set of scheduler keys declared to agents so far (arrays of Z85) */
    uint64_t keys_version; /* the allow-list's version the nodes were last brought up to */
};

/* master_dist.c */
void dist_post(struct mdist *d, hrm_addr to, const struct hrm_msg *msg); /* to a local role */
void dist_drain(struct master *m);
bool dist_node_ok(const struct master *m, int32_t n);
/* A task's expected run time for the nodes' wait estimates (docs/runtime.md). */
int64_t dist_estimate_us(const struct mdist *d, const struct rjob *j);
/* A run for node n of task idx of j, placed by the instance at address from (msg: its RUN in its
 * own ids); what goes back to the instance goes through dist_to_instance. */
void dist_place(struct master *m, struct rjob *j, int32_t idx, int32_t n, const struct hrm_msg *msg);
/* A hold or del from an instance (from) for node n, job/task already in global ids. */
void dist_probe(struct master *m, int32_t n, const struct hrm_msg *msg);
/* Delivers to an instance, local (posted) or in a scheduler process (sent). */
void dist_to_instance(struct master *m, hrm_addr to, const struct hrm_msg *msg);
/* How many instances there are in all, and the least busy one (-1: none up). */
int32_t dist_pick_instance(struct master *m);

/* master_remote.c */
struct rsched *remote_of_inst(struct mdist *d, int32_t g); /* up or not; NULL if unknown */
/* relay: the message records nothing (a node's reply to a probe) and leaves before the commit
 * (master_relay); else it leaves with the turn's commit. */
void remote_send_msg(struct master *m, struct rsched *r, hrm_addr to, const struct hrm_msg *msg,
                     bool relay);
int remote_register_job(struct master *m, struct rjob *j, struct rsched *r, int32_t g,
                        struct hrm_error *err);
void remote_task_end(struct master *m, struct rjob *j, int32_t idx, enum hrm_task_outcome outcome);
void remote_node(struct master *m, int32_t n, bool up); /* tells every scheduler process */
void remote_free(struct mdist *d);
/* Node n's probe endpoint and key, if scheduler process r may probe it directly: added to the
 * array entry ([node, up] of sched_welcome) or to the object (sched_node). */
void remote_probe_fields(const struct mdist *d, const struct rsched *r, int32_t n, json_t *out);
/* The scheduler keys node n's welcome declares (new ref), or NULL: it takes no direct probes. */
json_t *dist_probe_keys(const struct mdist *d, int32_t n);
/* The process is gone (silent, registered again, or broke the protocol): its jobs go back to be
 * registered again. */
void remote_down(struct master *m, struct rsched *r, const char *why);

/* master_shared.c: policy hrm-shared.  The scheduler processes run the instances; the master
 * runs the commit role over its nodes and launches what it commits. */
bool shared_policy(const char *policy);
int shared_new(struct master *m, struct hrm_error *err);
void shared_free(struct master *m);
int shared_sync(struct master *m, struct hrm_error *err); /* after the cluster grew */
bool shared_ready(const struct master *m); /* a node has registered: jobs may be handed out */
void shared_node(struct master *m, int32_t n, bool up);
/* j goes to instance g: into the role's workload once (its running tasks adopted).  Its kind
 * (enum hrm_job_kind) or a negative code. */
int shared_job_added(struct master *m, struct rjob *j, int32_t g, struct hrm_error *err);
void shared_task_end(struct master *m, struct rjob *j, int32_t idx, enum hrm_task_outcome outcome);
/* Stream tasks (master_stream.c): a run ended, the cell frees it; the backoff is over, the
 * instance claims the task again. */
void shared_stream_ended(struct master *m, struct rjob *j, int32_t idx);
void shared_stream_due(struct master *m, struct rjob *j, int32_t idx);
/* A snap_request or claim of instance g of process r, in wire ids. */
void shared_on_msg(struct master *m, struct rsched *r, int32_t g, const struct hrm_msg *w);
void shared_process_gone(struct master *m, struct rsched *r);
void shared_housekeeping(struct master *m);
json_t *shared_stats_json(const struct master *m); /* the commit counters, for hrm nodes */
bool shared_node_free(const struct master *m, int32_t n, struct hrm_res *free_out); /* the cell's */

#endif
