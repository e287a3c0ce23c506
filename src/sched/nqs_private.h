/* Node queue system internals shared by nqs.c, nqs_hold.c and nqs_balance.c. */
#ifndef HRM_NQS_PRIVATE_H
#define HRM_NQS_PRIVATE_H

#include "hrm/nqs.h"
#include "hrm/state.h" /* enum hrm_task_outcome */

#define NQS_COOKIE_EXPIRY 1 /* a node's timer for its earliest hold expiry */
#define NQS_COOKIE_RETRY 2  /* ...and for its earliest migration request to send again */

enum nqs_entry_state { E_FREE, E_QUEUED, E_RUNNING };

enum nqs_entry_flag {
    F_MIGRATED = 1,    /* came through the negotiator: raised priority */
    F_RESERVATION = 2, /* a late-binding reservation, not a task yet */
    F_REQ_OUT = 4,     /* a migration request for it is out */
    F_OFFERED = 8,     /* its source offered it to a target (mig_target) */
    F_PARKED = 16      /* a busy target recorded it and will pull it */
};

/* A queued or running task (or a queued reservation).  Entries live in one
 * pool per node, linked into their queue or into the node's running list. */
struct nqs_entry {
    int32_t task, job; /* task -1 for a reservation */
    hrm_addr owner;    /* the scheduler told about the task's end */
    hrm_addr mig_target;
    int64_t est_us;     /* corrected estimate (eps applied when queued) */
    int64_t raw_est_us; /* the workload's estimate, for eps learning */
    int64_t enq_us, start_us, retry_at;
    int64_t cpu, mem;
    int32_t prev, next;
    uint32_t seq; /* run generation: tells stale executor reports apart */
    int16_t queue, mig_queue;
    uint8_t state, flags, kind;
};

enum nqs_hold_kind { H_PROBE, H_BIND, H_MIGRATE };

/* Reserved slots, keyed by (owner, id, kind): a scheduler's probe, a
 * late-binding token, or a migrated task (id = task). */
struct nqs_hold {
    hrm_addr owner;
    int32_t id;
    int64_t cpu, mem, expires;
    int32_t job; /* H_BIND: the job the token is for */
    int16_t queue, slots;
    uint8_t kind;
};

/* A hold that expired with slots left: a run the scheduler sent for one of them, late, still
 * takes the place in line the slot gave it (nqs_expired_take). */
struct nqs_expired {
    hrm_addr owner;
    int32_t id;
    int16_t slots; /* runs it may still place first in line */
    uint8_t kind;
};
#define NQS_EXPIRED_KEEP 64 /* the latest expired holds remembered (a ring) */

/* A migration request recorded by a busy target, pulled when a slot frees. */
struct nqs_park {
    hrm_addr source;
    int32_t task, job;
    int16_t queue;
};

struct nqs_queue {
    struct hrm_nqs_queue_cfg cfg;
    int32_t head, tail;
    int32_t boost_tail; /* migrated entries form a prefix of the queue; its last, or -1 */
    int32_t nqueued, nrunning, nheld;
    int64_t queued_est;
    bool advertised;
};

struct hrm_nqs {
    const struct hrm_workload *wl; /* borrowed; may grow: never cache its arrays */
    int32_t node;
    hrm_addr self;
    struct hrm_nqs_config cfg;
    struct nqs_queue *queues;
    int32_t nq;
    int32_t *order; /* queue indices in run order: priority high first, then index */
    struct nqs_entry *e;
    size_t ne, cap_e;
    int32_t free_head;
    int32_t run_head;         /* running entries, newest first */
    int64_t cap_cpu, cap_mem; /* the node's capacity */
    int64_t free_cpu, free_mem;
    struct nqs_hold *holds;
    size_t nholds, cap_holds;
    struct nqs_park *parks;
    size_t nparks, cap_parks;
    int32_t next_token;
    int64_t timer_at;
    int64_t retry_timer_at; /* INT64_MAX: no retry timer armed */
    struct nqs_expired expired[NQS_EXPIRED_KEEP];
    uint32_t nexpired; /* ever recorded; the ring holds the latest NQS_EXPIRED_KEEP */
    double eps[3];
    struct hrm_nqs_stats stats;
};

/* nqs.c */
int64_t nqs_wait(const struct hrm_nqs *q, int32_t qi, int64_t cpu, int64_t mem, int64_t now);
int32_t nqs_startable(const struct hrm_nqs *q, int32_t qi, int64_t cpu, int64_t mem);
int nqs_over_limit(const struct hrm_nqs *q, int32_t qi, int64_t cpu, int64_t mem);
int32_t nqs_queue_slots(const struct hrm_nqs *q, int32_t qi, int64_t cpu);
int64_t nqs_pt_min(const struct hrm_nqs *q, int32_t qi, int64_t now);
int64_t nqs_ahead_above(const struct hrm_nqs *q, int32_t qi);
struct nqs_hold *nqs_hold_add(struct hrm_nqs *q, struct hrm_env *env, hrm_addr owner, int32_t id,
                              int kind, int32_t qi, int32_t slots, int64_t cpu, int64_t mem);
struct nqs_hold *nqs_hold_find(struct hrm_nqs *q, hrm_addr owner, int32_t id, int kind);
void nqs_hold_release(struct hrm_nqs *q, struct nqs_hold *h);
void nqs_hold_drop_slot(struct hrm_nqs *q, struct nqs_hold *h); /* one slot back to the node */
void nqs_expire_holds(struct hrm_nqs *q, struct hrm_env *env);  /* and re-arms the timer */
/* A run for a hold that expired with slots left: true (and one slot fewer) if it is one. */
bool nqs_expired_take(struct hrm_nqs *q, hrm_addr owner, int32_t id, int kind);
int32_t nqs_find_queued(const struct hrm_nqs *q, int32_t task);
void nqs_queue_remove(struct hrm_nqs *q, int32_t i);
void nqs_entry_free(struct hrm_nqs *q, int32_t i);
void nqs_send_run(struct hrm_nqs *q, struct hrm_env *env, const struct nqs_entry *e, hrm_addr to,
                  int32_t to_queue);
int nqs_task_req(const struct hrm_nqs *q, int32_t task, int64_t *cpu, int64_t *mem);

/* nqs_balance.c */
void nqs_balance(struct hrm_nqs *q, struct hrm_env *env);
void nqs_pump_parked(struct hrm_nqs *q, struct hrm_env *env, int32_t qi);
int nqs_on_migrate_msg(struct hrm_nqs *q, struct hrm_env *env, const struct hrm_msg *m);
/* A task with a migration in progress starts here after all, or is cancelled: a target that
 * parked it is told (MIGRATE_CANCEL), one it was offered to as well when tell_offer. */
void nqs_withdraw_migration(struct hrm_nqs *q, struct hrm_env *env, struct nqs_entry *e,
                            bool tell_offer);

#endif
