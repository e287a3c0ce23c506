/* Shared-state simulator internals: policy names and parameters to roles. */
#ifndef HRM_SSIM_PRIVATE_H
#define HRM_SSIM_PRIVATE_H

#include "hrm/commit.h"
#include "hrm/policy.h"
#include "hrm/ssched.h"
#include "hrm/ssim.h"

struct ssim_setup {
    const char *name;
    int32_t instances;
    bool colocated;   /* instance 0 runs inside the master: no network hop between them */
    bool register_rr; /* jobs to instances in turn, not to the least busy */
    struct hrm_ssched_config sched;
    struct hrm_commit_config commit;
};

/* Fills setup for a known policy from params (defaults for absent keys).
 * -HRM_EUNKNOWN_POLICY or -HRM_ESPEC with detail. */
int ssim_setup_parse(const char *policy, const struct hrm_params *params, uint64_t seed,
                     struct ssim_setup *setup, struct hrm_error *err);

#endif
