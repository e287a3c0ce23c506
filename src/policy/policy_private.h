/* Policy internals: the ops tables, cached first-fit search, a heap, job grouping. */
#ifndef HRM_POLICY_PRIVATE_H
#define HRM_POLICY_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/policy.h"

/* One exported ops table per policy file; registry.c lists them. */
extern const struct hrm_policy_ops hrm_policy_fifo;
extern const struct hrm_policy_ops hrm_policy_capacity;
extern const struct hrm_policy_ops hrm_policy_fair;
extern const struct hrm_policy_ops hrm_policy_drf;
extern const struct hrm_policy_ops hrm_policy_random;
extern const struct hrm_policy_ops hrm_policy_spread;
extern const struct hrm_policy_ops hrm_policy_gs; /* P1: gs.c, flow_fs.c */
extern const struct hrm_policy_ops hrm_policy_gsp;
extern const struct hrm_policy_ops hrm_policy_gsd;
extern const struct hrm_policy_ops hrm_policy_fs;
extern const struct hrm_policy_ops hrm_policy_fsp;
extern const struct hrm_policy_ops hrm_policy_fsu;
extern const struct hrm_policy_ops hrm_policy_fgm;
extern const struct hrm_policy_ops hrm_policy_nparsa, hrm_policy_nparsa_notype;
extern const struct hrm_policy_ops hrm_policy_sdasa, hrm_policy_difference;
extern const struct hrm_policy_ops hrm_policy_hrm, hrm_policy_gpu_exclusive; /* P0: hrm.c */
extern const struct hrm_policy_ops hrm_policy_hrm_static, hrm_policy_hrm_unaware;

/* ---- node search ---- */

#define POLICY_FIT_SLOTS 8

struct policy_fit_slot {
    struct hrm_res req;
    int32_t cursor; /* first node (in free-list order) worth trying, or -1: fits nowhere */
};

/*
 * Per-pass memory of node searches, keyed by the exact request vector.
 *
 * Within one pass a policy only starts tasks, so free resources only shrink
 * and nodes only leave the free list (never join it).  Hence if a request did
 * not fit on the nodes before `cursor`, it will not fit there for the rest of
 * the pass, and neither will any other task asking the same.  This turns a run
 * of identical tasks into O(1) searches each (the FIFO benchmark case) and a
 * request that fits nowhere into O(1) refusals.  A policy that frees resources
 * during a pass (preemption) must call policy_fit_reset afterwards.
 */
struct policy_fit {
    struct policy_fit_slot slot[POLICY_FIT_SLOTS];
    unsigned nused;  /* slots [0, nused) hold requests seen this pass */
    unsigned victim; /* next slot to reuse once all are used, round robin */
};

/* O(1): called at the start of every pass. */
void policy_fit_reset(struct policy_fit *fit);

/* First node, in the state's free-list order, where task fits now; -1 if none.
 * Every task asks for some cpu (the workload model enforces it), so only nodes
 * on the free list can fit. */
int32_t policy_fit_first(struct policy_fit *fit, const struct hrm_state *s, int32_t task);

/* Starts task on node (any GPUs) through ctx and keeps the cache's cursors
 * valid when the node leaves the free list.  Every start of a pass that uses
 * the cache should go through here; a start that does not only costs the
 * cache its shortcut (cursors on a node gone from the list restart at the head). */
int policy_fit_start(struct policy_fit *fit, struct hrm_sched_ctx *ctx, int32_t task, int32_t node);

/* ---- binary min-heap of (key, tie, id) ---- */

struct policy_heap_item {
    double key;
    int64_t tie; /* breaks equal keys, lower first */
    int32_t id;
};

struct policy_heap {
    struct policy_heap_item *a;
    size_t n, cap;
};

void policy_heap_push(struct policy_heap *h, double key, int64_t tie, int32_t id);
/* Removes the smallest item into *out; false when empty. */
bool policy_heap_pop(struct policy_heap *h, struct policy_heap_item *out);
void policy_heap_fini(struct policy_heap *h);

/* ---- jobs with ready tasks, grouped ---- */

enum policy_group_by { POLICY_BY_USER, POLICY_BY_QUEUE };

/*
 * The state's active jobs (those with ready tasks) bucketed by user or queue,
 * each bucket in arrival order: group g holds jobs[first[g] .. first[g+1]).
 * A counting sort over one walk of the active list: O(active jobs + groups).
 */
struct policy_groups {
    int32_t *first; /* ngroups + 1 offsets */
    int32_t *jobs;
    int32_t *pos; /* per group: next job to look at (the caller's cursor) */
    size_t cap_first, cap_jobs, cap_pos;
    int32_t ngroups;
};

void policy_groups_build(struct policy_groups *g, const struct hrm_state *s,
                         enum policy_group_by by);
void policy_groups_fini(struct policy_groups *g);
/* DRF's order (drf.c, fgm.c): the active jobs grouped by user into g, and h emptied, then holding
 * each user with an active job keyed by its dominant share (ties: the lower user first). */
void policy_users_by_share(struct policy_groups *g, struct policy_heap *h,
                           const struct hrm_state *s);
/* Group g's next ready task: the oldest ready task of its oldest job that
 * still has one, advancing the group's cursor past jobs with none left.
 * -1 when the group has no ready task left in this pass. */
int32_t policy_groups_next_task(struct policy_groups *g, const struct hrm_state *s, int32_t grp);

/* Policies without parameters: init that rejects every key. */
int policy_init_noparams(const char *name, const struct hrm_params *params, struct hrm_error *err);

#endif
