/* The central scheduler role: sans-IO state machine that runs a policy over the shared state. */
#ifndef HRM_CENTRAL_H
#define HRM_CENTRAL_H

#include <stdint.h>

#include "hrm/env.h"
#include "hrm/policy.h"
#include "hrm/state.h"

struct hrm_central_config {
    /* Scheduling passes are batched: after a message the role waits this long
     * (0 = same instant, after every message already due) and then runs one
     * pass for everything that arrived. */
    int64_t pass_delay_us;
    int32_t max_attempts; /* per task; 0 = state default */
    /* Starts one pass may make (0 = no bound).  A pass that reaches it ends there
     * (hrm_sched_ctx's max_starts) and the next pass is armed at once, without the pass
     * delay: a driver that answers its clients between passes keeps a flood of placements
     * from holding them for longer than one bounded pass. */
    int32_t max_starts_per_pass;
};

struct hrm_central_stats {
    int64_t passes, decisions, preemptions;
    int64_t bounded_passes; /* passes that ended at max_starts_per_pass */
};

/* Takes ownership of policy.  cluster and wl are borrowed and outlive the role. */
struct hrm_central *hrm_central_new(const struct hrm_cluster *cluster,
                                    const struct hrm_workload *wl, struct hrm_policy *policy,
                                    const struct hrm_central_config *cfg);
void hrm_central_free(struct hrm_central *c);

/* Handles one message.  Returns 0 or a negative code (a policy bug: the
 * driver stops the run and reports it). */
int hrm_central_on_msg(struct hrm_central *c, struct hrm_env *env, const struct hrm_msg *msg);
int hrm_central_on_timer(struct hrm_central *c, struct hrm_env *env, uint64_t cookie);

/*
 * The workload (borrowed at hrm_central_new) gained jobs at its end: the role takes them in
 * without being made again, in O(what was added) (amortised), and JOB_SUBMIT messages then
 * submit them.  Decisions are those of a role made with the whole workload up front whose
 * new jobs had not been submitted yet.  -ENOTSUP if the policy cannot grow (its ops' grows);
 * the caller makes the role again then.
 */
bool hrm_central_can_grow(const struct hrm_central *c);
int hrm_central_grow(struct hrm_central *c);

const struct hrm_state *hrm_central_state(const struct hrm_central *c);
const struct hrm_central_stats *hrm_central_stats(const struct hrm_central *c);

#endif
