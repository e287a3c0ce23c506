/* Distributed simulator internals: policy names and parameters to roles. */
#ifndef HRM_DSIM_PRIVATE_H
#define HRM_DSIM_PRIVATE_H

#include "hrm/dsched.h"
#include "hrm/dsim.h"
#include "hrm/negotiator.h"
#include "hrm/nqs.h"
#include "hrm/policy.h"

struct dsim_setup {
    const char *name;
    bool ideal;      /* the zero-wait bound: no roles at all */
    bool negotiator; /* run the negotiator and balance the queues */
    int32_t instances;
    int32_t register_rr; /* 0: least busy instance, 1: round robin */
    struct hrm_dsched_config sched;
    struct hrm_nqs_config nqs;
    struct hrm_negotiator_config nego;
};

/* Fills setup for a known policy from params (defaults for absent keys);
 * latency_us scales the defaults that are counted in message trips.
 * -HRM_EUNKNOWN_POLICY or -HRM_ESPEC with detail. */
int dsim_setup_parse(const char *policy, const struct hrm_params *params, int64_t latency_us,
                     uint64_t seed, struct dsim_setup *setup, struct hrm_error *err);

#endif
