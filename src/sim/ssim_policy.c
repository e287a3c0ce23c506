/* The shared-state policies by name (hrm-shared, hrm-central) and their parameters. */
#include <math.h>
#include <string.h>

#include "sim/ssim_private.h"

struct spolicy {
    const char *name;
    bool central;
    const char *summary;
};

static const struct spolicy spolicies[] = {
    {"hrm-shared", false,
     "shared state: N instances commit to one cell, batch optimistic, stream locked (P0)"},
    {"hrm-central", true,
     "shared-state reference: one instance inside the master, same decision-time model"},
};

#define NSPOLICIES (sizeof(spolicies) / sizeof(spolicies[0]))

/* Omega's simulated batch scheduler: t_job = 100 ms, t_task = 5 ms. */
#define DEFAULT_T_JOB_MS 100.0
#define DEFAULT_T_TASK_MS 5.0

size_t hrm_ssim_policy_count(void)
{
    return NSPOLICIES;
}

const char *hrm_ssim_policy_name(size_t i)
{
    return i < NSPOLICIES ? spolicies[i].name : NULL;
}

const char *hrm_ssim_policy_summary(size_t i)
{
    return i < NSPOLICIES ? spolicies[i].summary : NULL;
}

static const struct spolicy *find(const char *name)
{
    for (size_t i = 0; name && i < NSPOLICIES; i++)
        if (strcmp(spolicies[i].name, name) == 0)
            return &spolicies[i];
    return NULL;
}

bool hrm_ssim_policy_known(const char *name)
{
    return find(name) != NULL;
}

static const char *const keys_shared[] = {"instances",  "t_job_ms", "t_task_ms",
                                          "strict",     "lock_stream", "fair_share",
                                          "register",   "first_fit", NULL};
static const char *const keys_central[] = {"t_job_ms",   "t_task_ms", "lock_stream",
                                           "fair_share", "first_fit", NULL};

static int get_ms(const struct hrm_params *p, const char *key, double def, int64_t *us,
                  struct hrm_error *err)
{
    *us = (int64_t)llround(def * 1000.0);
    return hrm_params_ms(p, key, us, 1e7, false, err);
}

int ssim_setup_parse(const char *policy, const struct hrm_params *params, uint64_t seed,
                     struct ssim_setup *su, struct hrm_error *err)
{
    const struct spolicy *sp = find(policy);
    if (!sp)
        return hrm_errorf(err, -HRM_EUNKNOWN_POLICY, "unknown policy '%s'",
                          policy ? policy : "(null)");
    int rc = hrm_params_check(params, sp->central ? keys_central : keys_shared, sp->name, err);
    if (rc)
        return rc;
    memset(su, 0, sizeof(*su));
    su->name = sp->name;
    int64_t instances = sp->central ? 1 : 10, t_job = 0, t_task = 0;
    bool strict = false, lock_stream = true, fair = true, rr = false, first_fit = false;
    if ((rc = hrm_params_int(params, "instances", &instances, err)) ||
        (rc = get_ms(params, "t_job_ms", DEFAULT_T_JOB_MS, &t_job, err)) ||
        (rc = get_ms(params, "t_task_ms", DEFAULT_T_TASK_MS, &t_task, err)) ||
        (rc = hrm_params_bool(params, "strict", &strict, err)) ||
        (rc = hrm_params_bool(params, "lock_stream", &lock_stream, err)) ||
        (rc = hrm_params_bool(params, "fair_share", &fair, err)) ||
        (rc = hrm_params_bool(params, "register", &rr, err)) ||
        (rc = hrm_params_bool(params, "first_fit", &first_fit, err)))
        return rc;
    /* Each instance keeps a snapshot of every node, and one more travels to it:
     * 2 x instances x nodes x (112 bytes + 32 per GPU); 256 instances of 10,000 nodes take
     * 570 MB without GPUs. */
    if (instances < 1 || instances > 256)
        return hrm_errorf(err, -HRM_ESPEC, "policy '%s': parameter 'instances': %lld is not 1..256",
                          sp->name, (long long)instances);
    su->instances = (int32_t)instances;
    su->colocated = sp->central;
    su->register_rr = rr;
    su->sched = (struct hrm_ssched_config){.t_job_us = t_job,
                                           .t_task_us = t_task,
                                           .lock_stream = lock_stream,
                                           .fair_share = fair,
                                           .first_fit = first_fit,
                                           .seed = seed};
    su->commit = (struct hrm_commit_config){.validate = strict ? HRM_VALIDATE_VERSION
                                                               : HRM_VALIDATE_RESOURCE,
                                            .instances = su->instances};
    return 0;
}
