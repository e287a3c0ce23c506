/* What the daemons ask of a running FGM policy (P2): its estimator, kept across rebuilds, and each node's Alg. 3 mode. */
#ifndef HRM_FGM_H
#define HRM_FGM_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/estimate.h"
#include "hrm/policy.h"

/*
 * The master rebuilds its policy whenever jobs or nodes arrive, but what FGM
 * learned must outlive each build (and, through the store, the master).  So
 * the master takes the first build's estimator and lends it to every later
 * one.  A policy whose estimator is taken or lent only reads it: the owner
 * feeds it (hrm_est_sample, hrm_est_task_end) under task numbers that stay
 * the same across rebuilds, which the policy's own numbers do not.
 */
/* The policy's estimator, now the caller's to free (after the policy); NULL
 * when policy is not FGM. */
struct hrm_est *hrm_fgm_take_estimator(struct hrm_policy *policy);
/* The policy drops its own estimator and borrows est (which must outlive it);
 * a no-op when policy is not FGM. */
void hrm_fgm_lend_estimator(struct hrm_policy *policy, struct hrm_est *est);

/* Retry by request across rebuilds: whether the policy retries task (in the state's numbering)
 * by its request because a predicted run of it failed; and setting that on a new build. */
bool hrm_fgm_by_request(const struct hrm_policy *policy, int32_t task);
void hrm_fgm_set_by_request(struct hrm_policy *policy, const struct hrm_state *s, int32_t task);

/* Node's current Alg. 3 mode ("fine-compress", "fine", "coarse", "stop") and
 * the conformity that chose it; false when policy is not FGM or has not seen
 * the node yet. */
bool hrm_fgm_node_mode(const struct hrm_policy *policy, int32_t node, const char **mode,
                       double *conformity);

#endif
