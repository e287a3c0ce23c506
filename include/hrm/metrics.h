/* Metrics shared by the simulator, the daemons and every report: one definition of each formula. */
#ifndef HRM_METRICS_H
#define HRM_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/workload.h"

/* ---- formulas ---- */

/* p-th percentile (0..100) of vals (n > 0), linear interpolation between
 * closest ranks (the "R-7"/NumPy default).  vals is sorted in place.
 * n == 0 gives 0; p is clamped to 0..100. */
double hrm_percentile(double *vals, size_t n, double p);
double hrm_mean(const double *vals, size_t n);
/* Jain's fairness index (sum x)^2 / (n sum x^2); 1 for n == 0 or all zero. */
double hrm_jain(const double *x, size_t n);
/* Jain's index of shares measured against their max-min fair division (
 * P2; docs/metrics.md): the total held, sum share[i], is divided by water
 * filling, where a user with wants_more[i] may take any amount and one
 * without is entitled to at most what it holds; then J over
 * x_i = share[i] / fair[i] (x_i = 1 when fair[i] is 0).  wants_more NULL:
 * every user wants more, which is hrm_jain(share, n).  1 for n == 0, nothing
 * held, or nobody wanting more. */
double hrm_jain_maxmin(const double *share, const bool *wants_more, size_t n);
/* P1: S = mean of s_j, sigma = sqrt(sum (s_j - S)^2 / m).  mean_out may
 * be NULL; m == 0 gives S = sigma = 0.  hrm_mean of nothing is 0. */
double hrm_fairness_sigma(const double *s, size_t m, double *mean_out);

/* Ideal response of a job: no queueing, every task on a speed-1.0 node, input
 * read from local disk (bytes / D); critical path of the stage DAG where a
 * stage takes its slowest task.  D is the fastest disk_bw among the cluster's
 * nodes (net.disk_bw when it has none); docs/metrics.md has the details. */
int64_t hrm_job_ideal_us(const struct hrm_workload *wl, const struct hrm_cluster *c, int32_t job);
/* t_id of P1: the job alone on 1/m of the cluster: its stages in DAG order,
 * each list-scheduled longest-first on max(1, floor(slots/m)) slots, where
 * slots is the cluster's GPU count for GPU tasks, else how many of the task's
 * cpu request the cluster's cores hold; task time as in hrm_job_ideal_us.
 * Slots are counted node by node (a task asking g GPUs takes floor(gpus/g)
 * per node, likewise cores); a stage starts when the stages it depends on end;
 * when a stage's tasks differ in request the most demanding one sets the slot
 * count.  m < 1 counts as 1. */
int64_t hrm_job_share_ideal_us(const struct hrm_workload *wl, const struct hrm_cluster *c,
                               int32_t job, int32_t m);

/* ---- what one run records (filled by the simulator or the master) ---- */

struct hrm_job_record {
    int64_t submit_us;      /* when the job reached the scheduler */
    int64_t first_start_us; /* -1 if nothing started */
    int64_t end_us;         /* -1 if it did not finish */
    bool failed;
};

/* Utilisation time series: one sample per interval. */
struct hrm_series {
    int64_t *t_us;
    double *cpu;    /* allocated cpu / capacity of up nodes, 0..1 */
    double *gpu;    /* busy GPUs / GPUs of up nodes */
    int32_t *running, *ready;
    size_t n, cap;
};

void hrm_series_push(struct hrm_series *s, int64_t t_us, double cpu, double gpu, int32_t running,
                     int32_t ready);
void hrm_series_fini(struct hrm_series *s);

struct hrm_run_record {
    const struct hrm_cluster *cluster; /* borrowed */
    const struct hrm_workload *wl;     /* borrowed */
    struct hrm_job_record *jobs;       /* wl->njobs, owned */
    double *task_waits_us;             /* one per task start: ready -> start; owned */
    size_t nwaits, cap_waits;
    /* one per placement decision: ready -> the scheduler sends the launch; owned */
    double *sched_latency_us;
    size_t nlatencies, cap_latencies;
    int64_t first_start_us, last_end_us;
    double cpu_area;  /* integral of allocated milli-cores over time (milli-core * us) */
    double gpu_area;  /* integral of busy GPUs over time (GPU * us) */
    double cpu_capacity_area, gpu_capacity_area; /* same for capacity of up nodes */
    int64_t bytes_local, bytes_rack, bytes_cross;
    int64_t tasks_done, task_failures, preemptions, tasks_lost;
    int64_t events;   /* simulator events processed */
    /* P3 memory model (src/sim/memspill.h): bytes spilled to page caches and to disks */
    int64_t spill_cache_bytes, spill_disk_bytes;
    struct hrm_series series;
    /* Jain's index over allocation shares (P2): the sum of the
     * per-sample indices and the number of samples (hrm_run_record_shares). */
    double share_jain_sum;
    int64_t share_samples;
};

/* Zeroes r, allocates jobs[] with submit_us from the workload and
 * first_start_us = end_us = -1, and sets first_start_us = last_end_us = -1
 * (unset: hrm_summarize then takes the span from jobs[]). */
void hrm_run_record_init(struct hrm_run_record *r, const struct hrm_cluster *c,
                         const struct hrm_workload *wl);
void hrm_run_record_fini(struct hrm_run_record *r);
void hrm_run_record_wait(struct hrm_run_record *r, int64_t wait_us);
void hrm_run_record_sched_latency(struct hrm_run_record *r, int64_t latency_us);
/* One sample of the allocation: shares[i] is the dominant share (largest
 * allocated / capacity over the dimensions) of the i-th user with work
 * submitted and not finished, wants_more[i] whether that user has a ready
 * task (NULL: all have).  Adds hrm_jain_maxmin of the sample to the record;
 * a sample with no such user is not counted. */
void hrm_run_record_shares(struct hrm_run_record *r, const double *shares, const bool *wants_more,
                           size_t n);

/* ---- the summary every report prints ---- */

struct hrm_summary {
    char policy[48];
    int32_t jobs, jobs_done, jobs_failed;
    double makespan_s;          /* first task start -> last job end */
    double response_mean_s, response_p50_s, response_p95_s, response_p99_s;
    double ideal_mean_s;        /* mean hrm_job_ideal_us */
    double delay_mean_s;        /* mean (response - ideal) */
    double slowdown_p50, slowdown_p95; /* response / ideal */
    double wait_mean_s, wait_p95_s; /* task queue wait */
    double sched_latency_mean_s, sched_latency_p95_s; /* ready -> placement decision */
    double fairness_mean;       /* S, mean s_j */
    double fairness_sigma;      /* sigma of s_j */
    double jain;   /* Jain over users' allocation shares against their max-min fair division
                    * (hrm_jain_maxmin), mean over samples (1 if none) */
    double jain_s; /* Jain's index over the jobs' fairness ratios s_j */
    int64_t share_samples; /* samples behind jain; 0: the driver took none (reports show "-") */
    double cpu_util, gpu_util;  /* time-average over the makespan */
    int64_t bytes_local, bytes_rack, bytes_cross;
    int64_t tasks_done, task_failures, preemptions, tasks_lost;
    int64_t events;
    int64_t spill_cache_bytes, spill_disk_bytes; /* JSON only, and only when not both 0 */
};

/* Computes the summary of a finished run.  Jobs that did not finish are
 * counted, not averaged.  A job is done when end_us >= 0 and !failed; only
 * done jobs enter responses, ideal, delay, slowdown and s_j (slowdown leaves
 * out jobs whose ideal is 0).  Empty sets give 0 (Jain: 1), never NaN.
 * Deterministic.  docs/metrics.md defines every field. */
void hrm_summarize(const struct hrm_run_record *r, const char *policy, struct hrm_summary *out);

#endif
