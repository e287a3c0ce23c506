/* The negotiator (P4): matches long-waiting tasks with idle queues. */
#ifndef HRM_NEGOTIATOR_H
#define HRM_NEGOTIATOR_H

#include <stdint.h>

#include "hrm/env.h"
#include "hrm/error.h"

struct hrm_negotiator_config {
    int32_t nnodes, nqueues; /* size of the wait matrix */
    int64_t hw_us;           /* a target whose (believed) wait passes this leaves the pool */
    int64_t min_gain_us;     /* match only if target wait + this < the task's wait */
    int64_t request_ttl_us;  /* an unmatched request is dropped after this (its node asks again) */
    int32_t max_pending;     /* unmatched requests kept; oldest dropped first; 0 = 65536 */
};

struct hrm_negotiator_stats {
    int64_t requests, adverts, withdrawals, matches, expired, dropped;
};

/*
 * The role lives at HRM_ADDR_NEGOTIATOR.  It keeps the latest wait reported
 * for every (node, queue) - by IDLE_ADVERT and MIGRATE_REQUEST - and a pool of
 * advertised queues ordered by that wait.  A request is matched with the
 * advertised queue of smallest wait (not its own) when that gains at least
 * min_gain; the match goes to the source (MIGRATE_MATCH), which negotiates
 * with the target itself.  After a match the negotiator counts the task into
 * the target's wait (one free slot less, or est/slots more) so the next
 * request goes elsewhere until the target reports again.
 */
struct hrm_negotiator *hrm_negotiator_new(const struct hrm_negotiator_config *cfg,
                                          struct hrm_error *err);
void hrm_negotiator_free(struct hrm_negotiator *n); /* NULL is a no-op */
int hrm_negotiator_on_msg(struct hrm_negotiator *n, struct hrm_env *env, const struct hrm_msg *m);
const struct hrm_negotiator_stats *hrm_negotiator_stats(const struct hrm_negotiator *n);
/* Latest wait the negotiator believes for (node, queue), -1 if not advertised. */
int64_t hrm_negotiator_wait(const struct hrm_negotiator *n, int32_t node, int32_t queue);
int32_t hrm_negotiator_pending(const struct hrm_negotiator *n);

#endif
