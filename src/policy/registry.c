/* The policy registry: every policy's ops table in a fixed order, and creating policies by name. */
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "policy/policy_private.h"

/* Adding a policy: one file exporting hrm_policy_<name>, one line here (and
 * its extern in policy_private.h).  The order is the order of listings. */
/* clang-format off */
static const struct hrm_policy_ops *const policies[] = {
    &hrm_policy_fifo,
    &hrm_policy_capacity,
    &hrm_policy_fair,
    &hrm_policy_drf,
    &hrm_policy_random,
    &hrm_policy_spread,
    &hrm_policy_gs,
    &hrm_policy_gsp,
    &hrm_policy_gsd,
    &hrm_policy_fs,
    &hrm_policy_fsp,
    &hrm_policy_fsu,
    &hrm_policy_fgm,
    &hrm_policy_nparsa,
    &hrm_policy_nparsa_notype,
    &hrm_policy_sdasa,
    &hrm_policy_difference,
    &hrm_policy_hrm,
    &hrm_policy_gpu_exclusive,
    &hrm_policy_hrm_static,
    &hrm_policy_hrm_unaware,
};
/* clang-format on */

#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

size_t hrm_policy_count(void)
{
    return NPOLICIES;
}

const struct hrm_policy_ops *hrm_policy_at(size_t i)
{
    return i < NPOLICIES ? policies[i] : NULL;
}

const struct hrm_policy_ops *hrm_policy_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < NPOLICIES; i++)
        if (strcmp(policies[i]->name, name) == 0)
            return policies[i];
    return NULL;
}

struct hrm_policy *hrm_policy_new(const char *name, const struct hrm_params *params, uint64_t seed,
                                  struct hrm_error *err)
{
    const struct hrm_policy_ops *ops = hrm_policy_find(name);
    if (!ops) {
        char known[256];
        size_t off = 0;
        known[0] = '\0';
        for (size_t i = 0; i < NPOLICIES && off < sizeof(known); i++)
            off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s", i ? ", " : "",
                                    policies[i]->name);
        hrm_errorf(err, -HRM_EUNKNOWN_POLICY, "unknown policy '%s' (known: %s)",
                   name ? name : "(null)", known);
        return NULL;
    }
    struct hrm_policy *p = hrm_calloc(1, sizeof(*p));
    p->ops = ops;
    hrm_rng_seed(&p->rng, seed);
    static const struct hrm_params none = {NULL, 0};
    if (ops->init(p, params ? params : &none, err) != 0) {
        hrm_free(p); /* init leaves nothing to free on error */
        return NULL;
    }
    return p;
}

void hrm_policy_free(struct hrm_policy *p)
{
    if (!p)
        return;
    if (p->ops->fini)
        p->ops->fini(p);
    hrm_free(p);
}
