/* Simulator driver of the shared-state world (P0): instances committing to a cell. */
#ifndef HRM_SSIM_H
#define HRM_SSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/sim.h"

/* The shared-state policies, in listing order. */
size_t hrm_ssim_policy_count(void);
const char *hrm_ssim_policy_name(size_t i);
const char *hrm_ssim_policy_summary(size_t i);
bool hrm_ssim_policy_known(const char *name);

/* What a shared-state run did, beyond the run record. */
struct hrm_ssim_stats {
    int32_t instances;
    int64_t messages; /* network messages delivered */
    int64_t txns, txns_locked, txns_empty, txns_conflicted, txns_deferred;
    int64_t claims, committed, conflicts, conflicts_stale, conflicts_stream, retries;
    int64_t locked_bounced; /* claims under the lock that conflicted: 0 by design */
    int64_t lock_grants, lock_waits, waits, fair_capped, syncs;
    double decision_s;            /* decision time spent over all instances */
    double conflict_rate;         /* conflicts / claims */
    double txn_conflict_fraction; /* transactions with a conflict / transactions with claims */
    /* Job scheduling delay: the longest a task of the job waited from ready to
     * its committed claim (single-stage jobs: submit -> last task committed). */
    double delay_mean_s, delay_p95_s; /* all jobs */
    double batch_delay_mean_s, stream_delay_mean_s;
    /* Stream jobs: submit -> first task started; and every stream task's wait. */
    double stream_start_mean_s, stream_start_p95_s;
    int32_t stream_jobs;
};

/*
 * Runs the workload under a shared-state policy (hrm_ssim_policy_known) with
 * the contract of hrm_sim_run: fills rec, deterministic for a seed.
 * Parameters ("P.key=value"): instances (hrm-shared), t_job_ms, t_task_ms,
 * strict (1: per-node version validation, 0: resource-based), lock_stream,
 * fair_share, register (0 least busy instance, 1 round robin).  Defaults and
 * meaning: docs/architecture.md "Shared-state scheduling".  Node faults and
 * task failures of cfg->faults are not simulated here.
 */
int hrm_ssim_run(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                 const struct hrm_params *params, const struct hrm_sim_config *cfg,
                 struct hrm_run_record *rec, struct hrm_error *err);

/* Same, with stats (may be NULL). */
int hrm_ssim_run_ex(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                    const struct hrm_params *params, const struct hrm_sim_config *cfg,
                    struct hrm_run_record *rec, struct hrm_ssim_stats *stats,
                    struct hrm_error *err);

#endif
