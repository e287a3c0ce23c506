/* Discrete-event simulator: runs the central scheduling role against simulated nodes, network and clients. */
#ifndef HRM_SIM_H
#define HRM_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/error.h"
#include "hrm/metrics.h"
#include "hrm/policy.h"
#include "hrm/spec.h"
#include "hrm/workload.h"

struct hrm_sim_progress {
    int64_t now_us;
    int64_t events;
    int32_t jobs_done, njobs;
};

typedef void (*hrm_sim_progress_f)(void *arg, const struct hrm_sim_progress *p);

/* Optional instrumentation of the central role (a benchmark's, `hrm bench
 * central`): the driver reads the given clock around every call into the
 * role and adds up the time.  The simulator itself never reads a clock. */
struct hrm_sim_timing {
    int64_t (*clock_ns)(void *arg); /* required */
    void *clock_arg;
    double central_ns;   /* out: inside hrm_central_on_msg / on_timer */
    int64_t calls;       /* out: how many calls were timed */
    int64_t decisions;   /* out: tasks started by the role */
    int64_t passes;      /* out: policy passes */
};

struct hrm_sim_config {
    uint64_t seed;               /* all randomness of the run (failures) derives from it */
    int64_t sample_interval_us;  /* utilisation time series; 0 = none */
    const struct hrm_faults *faults; /* borrowed; NULL = none */
    int64_t pass_delay_us;       /* see hrm_central_config */
    int64_t until_us;            /* stop at this virtual time; 0 = run to the end */
    hrm_sim_progress_f progress; /* optional, called every progress_every events */
    void *progress_arg;
    int64_t progress_every;      /* default 1<<20 */
    const struct hrm_execution *execution; /* borrowed; NULL = defaults (spec.h) */
    struct hrm_sim_timing *timing; /* borrowed; NULL = no timing (central path only) */
};

/*
 * Runs the workload on the cluster under the named policy and fills rec (which
 * the caller has set up with hrm_run_record_init and later finalises).
 * Deterministic: the same inputs and seed give the same record.
 * Returns 0, or a negative code with detail (unknown policy, bad params, a
 * policy that broke the rules).
 */
int hrm_sim_run(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                const struct hrm_params *params, const struct hrm_sim_config *cfg,
                struct hrm_run_record *rec, struct hrm_error *err);

#endif
