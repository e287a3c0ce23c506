/* The distributed policies by name (random, Sparrow, DHRM, central, ideal) and their parameters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/dsetup.h"
#include "hrm/units.h"

enum pol_flag { P_NEGO = 1, P_IDEAL = 2, P_CENTRAL = 4, P_MULTI = 8, P_LATE = 16 };

struct dpolicy {
    const char *name;
    enum hrm_dsched_kind kind;
    unsigned flags;
    const char *summary;
};

static const struct dpolicy dpolicies[] = {
    {"d-random", HRM_DSCHED_RANDOM, 0,
     "distributed: each task to a random node's queue, no probe (P4 baseline)"},
    {"sparrow", HRM_DSCHED_SPARROW, 0,
     "distributed: Sparrow per-task sampling, d probes, shortest queue"},
    {"sparrow-batch", HRM_DSCHED_SPARROW_BATCH, P_LATE,
     "distributed: Sparrow batch sampling with late binding (d*m reservations)"},
    {"dhrm", HRM_DSCHED_TWO_PHASE, 0,
     "distributed: DHRM two-phase per task, d holds, smallest estimated wait"},
    {"dhrm-batch", HRM_DSCHED_MULTI_WAY, P_MULTI,
     "distributed: DHRM two-phase multi-way, min(d*k, nodes) holds, greedy"},
    {"dhrm-nego", HRM_DSCHED_MULTI_WAY, P_MULTI | P_NEGO,
     "distributed: DHRM multi-way + negotiator load balancing (hw/lw)"},
    {"central-queued", HRM_DSCHED_CENTRAL, P_CENTRAL,
     "centralised: global state, one decision per decision_us (queueing shows)"},
    {"ideal", HRM_DSCHED_RANDOM, P_IDEAL, "bound: every task starts the moment its job arrives"},
};

#define NDPOLICIES (sizeof(dpolicies) / sizeof(dpolicies[0]))

size_t hrm_dsetup_count(void)
{
    return NDPOLICIES;
}

const char *hrm_dsetup_name(size_t i)
{
    return i < NDPOLICIES ? dpolicies[i].name : NULL;
}

const char *hrm_dsetup_summary(size_t i)
{
    return i < NDPOLICIES ? dpolicies[i].summary : NULL;
}

static const struct dpolicy *find(const char *name)
{
    for (size_t i = 0; name && i < NDPOLICIES; i++)
        if (strcmp(dpolicies[i].name, name) == 0)
            return &dpolicies[i];
    return NULL;
}

bool hrm_dsetup_known(const char *name)
{
    return find(name) != NULL;
}

static const char *const keys_common[] = {"instances",  "d",           "hold_ttl_ms", "eps_batch",
                                          "eps_stream", "eps_service", "eps_learn",   "preempt",
                                          "order",      "locality",    "register",    NULL};
static const char *const keys_multi[] = {
    "instances", "d",     "hold_ttl_ms", "eps_batch", "eps_stream",  "eps_service", "eps_learn",
    "preempt",   "order", "locality",    "register",  "max_wait_ms", NULL};
static const char *const keys_nego[] = {
    "instances", "d",       "hold_ttl_ms", "eps_batch",   "eps_stream", "eps_service",
    "eps_learn", "preempt", "order",       "locality",    "register",   "max_wait_ms",
    "hw_ms",     "lw_ms",   "retry_ms",    "min_gain_ms", "max_parked", NULL};
static const char *const keys_late[] = {"instances", "d",        "hold_ttl_ms", "preempt",
                                        "locality",  "register", "cancel",      NULL};
static const char *const keys_central[] = {"decision_us", "preempt", NULL};
static const char *const keys_none[] = {NULL};

static int get_ms(const struct hrm_params *p, const char *key, int64_t *us, struct hrm_error *err)
{
    return hrm_params_ms(p, key, us, 1e9, strcmp(key, "max_wait_ms") == 0, err);
}

int hrm_dsetup_parse(const char *policy, const struct hrm_params *params, int64_t latency_us,
                     uint64_t seed, struct hrm_dsetup *su, struct hrm_error *err)
{
    const struct dpolicy *dp = find(policy);
    if (!dp)
        return hrm_errorf(err, -HRM_EUNKNOWN_POLICY, "unknown policy '%s'",
                          policy ? policy : "(null)");
    memset(su, 0, sizeof(*su));
    su->name = dp->name;
    su->ideal = dp->flags & P_IDEAL;
    su->negotiator = dp->flags & P_NEGO;
    const char *const *known = (dp->flags & P_IDEAL)     ? keys_none
                               : (dp->flags & P_CENTRAL) ? keys_central
                               : (dp->flags & P_NEGO)    ? keys_nego
                               : (dp->flags & P_MULTI)   ? keys_multi
                               : (dp->flags & P_LATE)    ? keys_late
                                                         : keys_common;
    int rc = hrm_params_check(params, known, dp->name, err);
    if (rc)
        return rc;
    int64_t lat = latency_us > 0 ? latency_us : 1;
    /* defaults */
    int64_t instances = (dp->flags & P_CENTRAL) ? 1 : 10;
    double d = 2;
    int64_t reg = 0, order = 0, decision_us = 250, max_parked = 16;
    int64_t ttl = 50000, max_wait = -1, hw = 10000, lw = 0, retry = 0, min_gain = 4 * lat;
    bool eps_learn = false, preempt = true, locality = true, cancel = true;
    double eps[3] = {1, 1, 1};
    if ((rc = hrm_params_int(params, "instances", &instances, err)) ||
        (rc = hrm_params_double(params, "d", &d, err)) ||
        (rc = get_ms(params, "hold_ttl_ms", &ttl, err)) ||
        (rc = hrm_params_double(params, "eps_batch", &eps[HRM_JOB_BATCH], err)) ||
        (rc = hrm_params_double(params, "eps_stream", &eps[HRM_JOB_STREAM], err)) ||
        (rc = hrm_params_double(params, "eps_service", &eps[HRM_JOB_SERVICE], err)) ||
        (rc = hrm_params_bool(params, "eps_learn", &eps_learn, err)) ||
        (rc = hrm_params_bool(params, "preempt", &preempt, err)) ||
        (rc = hrm_params_int(params, "order", &order, err)) ||
        (rc = hrm_params_bool(params, "locality", &locality, err)) ||
        (rc = hrm_params_int(params, "register", &reg, err)) ||
        (rc = get_ms(params, "max_wait_ms", &max_wait, err)) ||
        (rc = get_ms(params, "hw_ms", &hw, err)) || (rc = get_ms(params, "lw_ms", &lw, err)) ||
        (rc = get_ms(params, "retry_ms", &retry, err)) ||
        (rc = get_ms(params, "min_gain_ms", &min_gain, err)) ||
        (rc = hrm_params_int(params, "max_parked", &max_parked, err)) ||
        (rc = hrm_params_int(params, "decision_us", &decision_us, err)) ||
        (rc = hrm_params_bool(params, "cancel", &cancel, err)))
        return rc;
    if (instances < 1 || instances > 4096)
        return hrm_errorf(err, -HRM_ESPEC, "%s: instances = %lld: must be 1..4096", dp->name,
                          (long long)instances);
    if (!(d >= 1 && d <= 64))
        return hrm_errorf(err, -HRM_ESPEC, "%s: d = %g: probes per task must be 1..64", dp->name,
                          d);
    for (int k = 0; k < 3; k++)
        if (!(eps[k] > 0 && eps[k] <= 100))
            return hrm_errorf(err, -HRM_ESPEC, "%s: eps must be in (0, 100]", dp->name);
    if ((order != 0 && order != 1) || (reg != 0 && reg != 1))
        return hrm_errorf(err, -HRM_ESPEC, "%s: order and register take 0 or 1", dp->name);
    if (decision_us < 0 || max_parked < 1 || max_parked > 100000 || lw > hw)
        return hrm_errorf(err, -HRM_ESPEC,
                          "%s: need decision_us >= 0, max_parked 1..100000, lw_ms <= hw_ms",
                          dp->name);
    su->instances = (int32_t)instances;
    su->register_rr = (int32_t)reg;
    su->nqs = (struct hrm_nqs_config){.hold_ttl_us = ttl,
                                      .eps_learn = eps_learn,
                                      .no_preempt = !preempt,
                                      .balance = su->negotiator,
                                      .hw_us = hw,
                                      .lw_us = lw,
                                      .retry_us = retry > 0 ? retry : hw,
                                      .max_parked = (int32_t)max_parked};
    memcpy(su->nqs.eps, eps, sizeof(eps));
    su->sched = (struct hrm_dsched_config){.kind = dp->kind,
                                           .d = d,
                                           .nqs = NULL,
                                           .order_deadline = order == 1,
                                           .max_wait_us = max_wait,
                                           .no_locality = !locality,
                                           .no_cancel = !cancel,
                                           .decision_us = decision_us,
                                           .seed = seed};
    su->nego = (struct hrm_negotiator_config){
        .hw_us = hw, .min_gain_us = min_gain, .request_ttl_us = retry > 0 ? retry : hw};
    return 0;
}

int hrm_dsetup_queue_parse(const char *text, struct hrm_nqs_queue_cfg *out, struct hrm_error *err)
{
    memset(out, 0, sizeof(*out));
    size_t n = strcspn(text, ",");
    if (n == 0 || n >= sizeof(out->name))
        return hrm_errorf(err, -HRM_ESPEC, "execution queue '%s': a name of 1..%d characters first",
                          text, (int)sizeof(out->name) - 1);
    memcpy(out->name, text, n);
    out->name[n] = '\0';
    for (const char *p = text + n; *p == ',';) {
        p++;
        size_t len = strcspn(p, ",");
        char part[64];
        if (len >= sizeof(part))
            return hrm_errorf(err, -HRM_ESPEC, "execution queue '%s': '%.*s' is too long",
                              out->name, (int)len, p);
        memcpy(part, p, len);
        part[len] = '\0';
        p += len;
        char *eq = strchr(part, '=');
        if (!eq)
            return hrm_errorf(err, -HRM_ESPEC, "execution queue '%s': '%s' is not key=value",
                              out->name, part);
        *eq++ = '\0';
        char *end;
        if (strcmp(part, "priority") == 0 || strcmp(part, "max") == 0) {
            long v = strtol(eq, &end, 10);
            bool prio = part[0] == 'p';
            if (end == eq || *end || (prio && (v < -1000000 || v > 1000000)) ||
                (!prio && (v < 0 || v > 1000000)))
                return hrm_errorf(err, -HRM_ESPEC, "execution queue '%s': %s=%s: expected %s",
                                  out->name, part, eq,
                                  prio ? "an integer in -1000000..1000000"
                                       : "0 (no limit) .. 1000000 tasks");
            *(prio ? &out->priority : &out->max_running) = (int32_t)v;
        } else if (strcmp(part, "cpus") == 0) {
            if (hrm_parse_cpu(eq, &out->limit.v[HRM_DIM_CPU]) < 0)
                return hrm_errorf(err, -HRM_ESPEC, "execution queue '%s': cpus=%s: not a cpu "
                                  "amount (2, 0.5, 500m)", out->name, eq);
        } else if (strcmp(part, "mem") == 0) {
            if (hrm_parse_size(eq, &out->limit.v[HRM_DIM_MEM]) < 0)
                return hrm_errorf(err, -HRM_ESPEC, "execution queue '%s': mem=%s: not a size "
                                  "(512M, 4G)", out->name, eq);
        } else {
            return hrm_errorf(err, -HRM_ESPEC, "execution queue '%s': unknown key '%s' (known: "
                              "priority, max, cpus, mem)", out->name, part);
        }
    }
    return 0;
}
