/* The environment a sans-IO scheduling role runs in: clock, messages, timers. */
#ifndef HRM_ENV_H
#define HRM_ENV_H

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

/* Message types: one table, from which names (and later the wire codec) come. */
#define HRM_MSG_MAP(X)                                                                         \
    X(JOB_SUBMIT, "job_submit")   /* client -> central: job */                                \
    X(JOB_END, "job_end")         /* central -> client: job, status 0 ok / 1 failed */        \
    X(TASK_LAUNCH, "task_launch") /* central -> node: task, attempt, gpu_mask */              \
    X(TASK_KILL, "task_kill")     /* central -> node: task, attempt */                        \
    X(TASK_END, "task_end")       /* node -> central: task, attempt, status (outcome) */      \
    X(NODE_DOWN, "node_down")     /* monitor -> central: node */                              \
    X(NODE_UP, "node_up")         /* monitor -> central: node */

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
