/* Scheduler instance internals shared by dsched.c and dsched_round.c. */
#ifndef HRM_DSCHED_PRIVATE_H
#define HRM_DSCHED_PRIVATE_H

#include "hrm/dsched.h"
#include "hrm/rng.h"
#include "hrm/state.h" /* enum hrm_task_outcome */

/* T_SEEN is transient: a pass marks the ready tasks it keeps while it
 * compacts the deque (a duplicate entry sees the mark and is dropped). */
enum dtask_state { T_WAITING, T_READY, T_INFLIGHT, T_PLACED, T_DONE, T_SEEN };

/* A job registered with this instance. */
struct djob {
    int32_t job;   /* workload id; -1 for a free record */
    int64_t order; /* GS order key: submit time or deadline */
    int32_t left;  /* tasks not ended */
    int32_t queue; /* execution queue its tasks go to */
    bool failed;
    int32_t *stage_left; /* per stage of the job: tasks not ended */
    int32_t *deps_left;  /* per stage: dependency stages not ended */
    int64_t *ready_us;   /* per task of the job */
    uint8_t *tstate;     /* per task: enum dtask_state */
    int32_t *unbound;    /* late binding: ready tasks no node has asked for yet (FIFO) */
    int32_t unbound_head, unbound_tail;
    int32_t *resv; /* late binding: nodes holding a reservation of the job */
    size_t nresv, cap_resv;
};

struct probe {
    int32_t attempt; /* the id its hold carries: the pool index, or with a round
                        timeout a fresh sequence number (never reused soon) */
    int32_t round;
    int32_t node;
    int32_t granted;
    int32_t next_free;
    int64_t wait;
    uint32_t qlen;
    bool replied, rejected;
};

struct round {
    int32_t *tasks, ntasks;
    int32_t *probes, nprobes;
    size_t cap_tasks, cap_probes;
    int32_t left; /* replies still to come */
    int32_t queue;
    int32_t next_free;
    int64_t cpu, mem; /* slot size held: the largest task of the round */
    uint32_t gen;     /* bumped at every use: a timer of a recycled round is stale */
    bool reserve;     /* holds reserve slots (DHRM) or only ask (Sparrow) */
    bool active;      /* waiting for replies (not on the free list) */
};

struct hrm_dsched {
    const struct hrm_cluster *c;
    const struct hrm_workload *wl;
    struct hrm_dsched_config cfg;
    hrm_addr self;
    struct hrm_rng rng;
    /* jobs: pool + open-addressing map from job id */
    struct djob *jobs;
    size_t njobs, cap_jobs;
    int32_t free_job;
    int32_t *map; /* slot -> job record index or -1 */
    size_t map_cap, map_used;
    int64_t load;
    /* ready tasks not yet in a round: a deque */
    int32_t *ready;
    size_t rhead, rn, rcap;
    bool pass_armed;
    /* probing */
    struct probe *probes;
    size_t nprobes_pool, cap_probes;
    int32_t free_probe;
    struct round *rounds;
    size_t nrounds_pool, cap_rounds;
    int32_t free_round;
    /* with a round timeout: attempt -> probe index (open addressing) */
    int32_t *amap;
    size_t amap_cap, amap_used;
    int32_t next_attempt;
    /* nodes: perm is a permutation of node ids whose prefix [0, nup) is the up
     * nodes; pos[node] is its index in perm.  Arrays sized nn (grows with the
     * cluster). */
    int32_t *perm, *pos;
    uint32_t *mark; /* per node: the draw generation that took it */
    int32_t nn, nup;
    size_t cap_nodes;
    uint32_t gen, draw_gen;
    int32_t draw_pos;
    /* greedy-assignment scratch */
    struct hrm_gs_slot *slots;
    struct hrm_gs_task *gtasks;
    int32_t *out, *scratch;
    int32_t *per_probe; /* tasks assigned per probe of the round */
    size_t cap_slots, cap_gtasks, cap_scratch, cap_per_probe;
    int32_t prefs_buf[HRM_MAX_REPLICAS * 4];
    /* central: global state */
    int64_t *free_cpu, *free_mem;
    int32_t ncentral; /* nodes the global state covers (those at creation) */
    int32_t *free_stack;
    bool *in_stack;
    int32_t nfree_stack;
    bool deciding;
    struct hrm_dsched_stats stats;
};

/* dsched.c */
struct djob *dsched_job(const struct hrm_dsched *s, int32_t job);
void dsched_requeue_front(struct hrm_dsched *s, int32_t task);
void dsched_placed(struct hrm_dsched *s, int32_t task);
/* Sends task's run to queue `queue` of node (attempt: the hold's, -1 without one; status:
 * HRM_RUN_LAST, HRM_RUN_BIND or 0), marks it placed and counts the run. */
void dsched_send_run(struct hrm_dsched *s, struct hrm_env *env, int32_t task, int32_t node,
                     int32_t queue, int32_t attempt, uint16_t status);
bool dsched_task_is(const struct hrm_dsched *s, int32_t task, enum dtask_state st);
bool dsched_node_is_up(const struct hrm_dsched *s, int32_t node);
void dsched_arm_pass(struct hrm_dsched *s, struct hrm_env *env);
int32_t dsched_prefs(struct hrm_dsched *s, int32_t task, int32_t *out, int32_t max);

/* dsched_round.c */
void dsched_start_round(struct hrm_dsched *s, struct hrm_env *env, const int32_t *tasks,
                        int32_t ntasks, int32_t queue, bool reserve);
int dsched_on_hold_reply(struct hrm_dsched *s, struct hrm_env *env, const struct hrm_msg *m);
int32_t dsched_draw_node(struct hrm_dsched *s);
int dsched_on_round_timer(struct hrm_dsched *s, struct hrm_env *env, uint64_t cookie);
void dsched_rounds_free(struct hrm_dsched *s);

#endif
