/* A central role's environment for the jobsflood tests: a clock set by hand, the one pass
 * timer, and the launches recorded in order. */
#ifndef HRM_TEST_JOBSFLOOD_ENV_H
#define HRM_TEST_JOBSFLOOD_ENV_H

#include "hrm/alloc.h"
#include "hrm/central.h"
#include "hrm/policy.h"

struct jf_run {
    int32_t task, node, attempt;
};

struct jf_world {
    struct hrm_env env;
    int64_t now;
    bool armed; /* a pass is due at armed_at */
    int64_t armed_at;
    struct jf_run *runs; /* launches in order (a test may drop ended ones) */
    size_t nruns, cap_runs;
};

static inline int64_t jf_now(struct hrm_env *env)
{
    return ((struct jf_world *)env->ctx)->now;
}

static inline void jf_timer(struct hrm_env *env, int64_t at, uint64_t cookie)
{
    struct jf_world *w = env->ctx;
    (void)cookie;
    cr_assert_not(w->armed, "one pass armed at a time");
    w->armed = true;
    w->armed_at = at;
}

static inline void jf_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *m)
{
    struct jf_world *w = env->ctx;
    (void)to;
    if (m->type != HRM_MSG_TASK_LAUNCH)
        return;
    HRM_GROW(w->runs, w->cap_runs, w->nruns + 1);
    w->runs[w->nruns++] = (struct jf_run){.task = m->task, .node = m->node, .attempt = m->attempt};
}

static inline void jf_world_init(struct jf_world *w, int64_t now)
{
    *w = (struct jf_world){.now = now};
    w->env = (struct hrm_env){.now_us = jf_now, .send = jf_send, .timer = jf_timer, .ctx = w};
}

/* A central role of policy (by name, seeded) over c and wl (borrowed); *policy_out borrows
 * its policy. */
static inline struct hrm_central *jf_central(const char *policy, uint64_t seed,
                                             const struct hrm_cluster *c,
                                             const struct hrm_workload *wl,
                                             const struct hrm_central_config *cfg,
                                             struct hrm_policy **policy_out)
{
    struct hrm_error err;
    struct hrm_params params = {0};
    struct hrm_policy *p = hrm_policy_new(policy, &params, seed, &err);
    cr_assert(p, "%s: %s", policy, err.text);
    if (policy_out)
        *policy_out = p;
    return hrm_central_new(c, wl, p, cfg);
}

#endif
