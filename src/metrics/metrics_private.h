/* Internals shared by the metrics and report files: per-job ideal times in one pass. */
#ifndef HRM_METRICS_PRIVATE_H
#define HRM_METRICS_PRIVATE_H

#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/workload.h"

/* For every job j of wl: ideal_us[j] = hrm_job_ideal_us and share_us[j] =
 * hrm_job_share_ideal_us(..., m).  Either output may be NULL; each holds
 * wl->njobs values.  One pass, so the cluster is scanned once, not per job. */
void metrics_job_times(const struct hrm_workload *wl, const struct hrm_cluster *c, int32_t m,
                       int64_t *ideal_us, int64_t *share_us);
/* s_j = t_id / t_sh, 1 when t_sh <= 0. */
double metrics_fairness_ratio(int64_t t_id, int64_t t_sh);

#endif
