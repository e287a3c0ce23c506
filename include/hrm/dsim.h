/* Simulator driver of the distributed world (P4). */
#ifndef HRM_DSIM_H
#define HRM_DSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/sim.h"

/* The distributed policies, in listing order. */
size_t hrm_dsim_policy_count(void);
const char *hrm_dsim_policy_name(size_t i);
const char *hrm_dsim_policy_summary(size_t i);
bool hrm_dsim_policy_known(const char *name);

/* Optional instrumentation of a run (the benchmark's): a clock read around
 * every call into a scheduler instance, summed into stats.sched_ns.  The
 * simulator itself never reads a clock. */
typedef int64_t (*hrm_dsim_clock_f)(void *arg);

struct hrm_dsim_options {
    hrm_dsim_clock_f clock; /* NULL: no timing */
    void *clock_arg;
};

/* What a distributed run did, beyond the run record. */
struct hrm_dsim_stats {
    int32_t instances;
    int64_t messages; /* network messages delivered */
    int64_t probes, rounds, leftovers, runs, dels, reservations, binds, binds_empty;
    int64_t holds_expired, rejected, preemptions;
    int64_t migrate_requests, matches, migrated, parked, pulls, refused, adverts;
    double node_wait_mean_us; /* queued at a node -> started there */
    double node_wait_p95_us;
    double sched_ns; /* wall time inside scheduler instances (with a clock) */
    int64_t sched_calls;
};

/*
 * Runs the workload under a distributed policy (hrm_dsim_policy_known) with
 * the same contract as hrm_sim_run: fills rec, deterministic for a seed.
 * Parameters (policy "P", as "P.key=value" on the command line): instances,
 * d, hold_ttl_ms, eps_batch, eps_stream, eps_service, eps_learn, preempt,
 * order (submit|deadline as 0|1), locality, register (0 least busy, 1 round
 * robin), max_wait_ms (dhrm-batch, dhrm-nego), hw_ms, lw_ms, retry_ms,
 * min_gain_ms, max_parked (dhrm-nego), decision_us (central-queued), cancel
 * (sparrow-batch).  docs/dhrm.md has defaults and meaning.
 * Node faults and task failures of cfg->faults are not simulated here.
 */
int hrm_dsim_run(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                 const struct hrm_params *params, const struct hrm_sim_config *cfg,
                 struct hrm_run_record *rec, struct hrm_error *err);

/* Same, with options and stats (either may be NULL). */
int hrm_dsim_run_ex(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                    const struct hrm_params *params, const struct hrm_sim_config *cfg,
                    const struct hrm_dsim_options *opt, struct hrm_run_record *rec,
                    struct hrm_dsim_stats *stats, struct hrm_error *err);

#endif
