/* The environment a sans-IO scheduling role runs in: clock, messages, timers. */
#ifndef HRM_ENV_H
#define HRM_ENV_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Endpoints.  Every role instance has an address; the driver (simulator or
 * daemon) routes messages between them.  Addresses are small integers so a
 * simulator with 10,000 nodes routes without lookups.
 */
typedef int32_t hrm_addr;

#define HRM_ADDR_CENTRAL 0 /* the central scheduler (master's allocator) */
#define HRM_ADDR_CLIENT 1  /* whoever submits jobs and waits for their end */
#define HRM_ADDR_NODE0 2   /* node n is HRM_ADDR_NODE0 + n */

static inline hrm_addr hrm_addr_node(int32_t node)
{
    return HRM_ADDR_NODE0 + node;
}

/* The distributed world (P4, docs/dhrm.md) adds roles below zero, so the
 * node numbering above stays as it is. */
#define HRM_ADDR_EXEC (-1)       /* a node role's own task executor: local, no network hop */
#define HRM_ADDR_NEGOTIATOR (-2) /* the load-balancing negotiator */
#define HRM_ADDR_SCHED0 (-16)    /* scheduler instance i is HRM_ADDR_SCHED0 - i */

static inline hrm_addr hrm_addr_sched(int32_t i)
{
    return HRM_ADDR_SCHED0 - i;
}

static inline int32_t hrm_addr_sched_index(hrm_addr a)
{
    return HRM_ADDR_SCHED0 - a;
}

/* Message types: one table, from which names (and later the wire codec) come. */
#define HRM_MSG_MAP(X)                                                                         \
    X(JOB_SUBMIT, "job_submit")   /* client -> central: job */                                \
    X(JOB_END, "job_end")         /* central -> client: job, status 0 ok / 1 failed */        \
    X(TASK_LAUNCH, "task_launch") /* central -> node: task, attempt, gpu_mask */              \
    X(TASK_KILL, "task_kill")     /* central -> node: task, attempt */                        \
    X(TASK_END, "task_end")       /* node -> central: task, attempt, status (outcome) */      \
    X(NODE_DOWN, "node_down")     /* monitor -> central: node */                              \
    X(NODE_UP, "node_up")         /* monitor -> central: node */                              \
    /* Distributed scheduling (P4; fields in docs/dhrm.md).  q = execution queue index. */ \
    X(HOLD, "hold")               /* sched -> node: attempt probe id, node q, status slots */ \
                                  /* wanted, gpu_mask cpu milli and value mem per slot, task */ \
    X(HOLD_REPLY, "hold_reply")   /* node -> sched: attempt probe id, node, status slots held, */ \
                                  /* gpu_mask queue length, value wait us (< 0: -reason) */    \
    X(RUN, "run")                 /* -> node: job, task, node q, attempt hold id or -1, */     \
                                  /* status HRM_RUN_* flags, value owner address */            \
    X(DEL, "del")                 /* sched -> node: attempt probe id: drop the hold */        \
    X(RESERVE, "reserve")         /* sched -> node: late-binding reservation for job, node q */ \
    X(GET_TASK, "get_task")       /* node -> sched: reservation at the head: job, attempt token */ \
    X(NO_TASK, "no_task")         /* sched -> node: attempt token: nothing left, slot freed */ \
    X(MIGRATE_REQUEST, "migrate_request") /* node -> negotiator: job, task, node, status q, */ \
                                  /* attempt est us, value expected wait us */                 \
    X(IDLE_ADVERT, "idle_advert") /* node -> negotiator: node, status q, gpu_mask free slots, */ \
                                  /* attempt slots, value wait us (< 0 withdraws) */           \
    X(MIGRATE_MATCH, "migrate_match")   /* negotiator -> source: job, task, node target, */   \
                                        /* status target q */                                  \
    X(MIGRATE_OFFER, "migrate_offer")   /* source -> target: job, task, node source, status q, */ \
                                        /* value expected wait at the source us */             \
    X(MIGRATE_ACCEPT, "migrate_accept") /* target -> source: task: a slot is held for it */    \
    X(MIGRATE_REFUSE, "migrate_refuse") /* target -> source: task, status reason: dropped */  \
    X(MIGRATE_PARKED, "migrate_parked") /* target -> source: task: busy, will pull later */   \
    X(MIGRATE_PULL, "migrate_pull")     /* target -> source: task: a slot is held, send it */ \
    X(MIGRATE_CANCEL, "migrate_cancel") /* source -> target: task: gone, drop park or slot */ \
    /* Usage samples (P2), packed by hrm_usage_pack below. */                             \
    X(TASK_USAGE, "task_usage")   /* node -> central: job, task, node, attempt, usage */     \
    X(NODE_USAGE, "node_usage")   /* node -> central: node, its foreign load (not hrm tasks) */ \
    /* Shared-state scheduling (P0, include/hrm/commit.h): instances and the master. */    \
    X(SNAP_REQUEST, "snap_request") /* sched -> master: job, attempt txn, value cell version */ \
                                  /* known (answer once newer; 0 = now), status 1 = lock */  \
    X(SNAP_REPLY, "snap_reply")   /* master -> sched: attempt txn, value cell version, status */ \
                                  /* 1 = lock granted; the snapshot travels with it */         \
    X(CLAIM, "claim")             /* sched -> master: job, task (-1: empty txn), node, attempt */ \
                                  /* txn, value node version seen, status HRM_CLAIM_* flags */ \
    X(CLAIM_ACK, "claim_ack")     /* master -> sched: job, task, node, attempt txn, status */  \
                                  /* 0 committed, 1 conflict (the task goes back to its queue) */

enum hrm_msg_type {
#define HRM_MSG_ENUM(name, text) HRM_MSG_##name,
    HRM_MSG_MAP(HRM_MSG_ENUM)
#undef HRM_MSG_ENUM
    HRM_MSG_COUNT
};

const char *hrm_msg_name(enum hrm_msg_type type);

/* A fixed-size message: the simulator copies it by value through its event
 * heap with no allocation.  Unused fields are zero. */
struct hrm_msg {
    uint16_t type;     /* enum hrm_msg_type */
    uint16_t status;   /* e.g. enum hrm_task_outcome for TASK_END */
    hrm_addr from;
    int32_t job, task, node;
    int32_t attempt;   /* which run of the task this is about */
    uint32_t gpu_mask;
    int64_t value;     /* type-specific */
};

/* A usage sample (P2 node agents): average use over the interval that
 * ends when the message is sent.  Packed into the fixed message: status bit 0
 * = the node's cpu was compressed (use then understates demand), gpu_mask =
 * cpu in milli-cores, value = memory in MiB (rounded up) << 32 | interval in
 * microseconds (< 2^32: samplers report at least every hour). */
struct hrm_usage {
    int64_t interval_us;
    int64_t cpu; /* milli-cores */
    int64_t mem; /* bytes */
    bool compressed;
};

static inline void hrm_usage_pack(struct hrm_msg *m, const struct hrm_usage *u)
{
    int64_t mib = (u->mem + (1 << 20) - 1) >> 20;
    uint64_t iv = u->interval_us < 0 ? 0 : u->interval_us > 0xffffffffll ? 0xffffffffu
                                                                         : (uint64_t)u->interval_us;
    m->status = u->compressed ? 1 : 0;
    m->gpu_mask = u->cpu < 0 ? 0 : u->cpu > 0xffffffffll ? 0xffffffffu : (uint32_t)u->cpu;
    m->value = (int64_t)(((uint64_t)(mib < 0 ? 0 : mib) << 32) | iv);
}

static inline void hrm_usage_unpack(const struct hrm_msg *m, struct hrm_usage *u)
{
    uint64_t v = (uint64_t)m->value;
    u->interval_us = (int64_t)(v & 0xffffffffu);
    u->mem = (int64_t)(v >> 32) << 20;
    u->cpu = m->gpu_mask;
    u->compressed = (m->status & 1) != 0;
}

struct hrm_env {
    /* Current time in microseconds (virtual in the simulator). */
    int64_t (*now_us)(struct hrm_env *env);
    /* Sends msg (copied) to an address; delivery is asynchronous. */
    void (*send)(struct hrm_env *env, hrm_addr to, const struct hrm_msg *msg);
    /* Asks for a timer callback with cookie at (or after) at_us. */
    void (*timer)(struct hrm_env *env, int64_t at_us, uint64_t cookie);
    void *ctx; /* the driver's */
};

#endif
