/* Reports of simulated (or real) runs: human table, JSON, CSV time series, gnuplot PNG plots. */
#ifndef HRM_REPORT_H
#define HRM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hrm/error.h"
#include "hrm/metrics.h"

/* One policy's run: its summary and the record it came from (borrowed). */
struct hrm_report_entry {
    const struct hrm_summary *summary;
    const struct hrm_run_record *record;
};

/* Side-by-side table, one column per policy, one row per metric. */
void hrm_report_table(FILE *out, const struct hrm_report_entry *e, size_t n);
/* A JSON array with one object per policy (keys: policy, jobs, makespan_s,
 * response_mean_s, response_p95_s, jain, fairness_sigma, cpu_util, gpu_util,
 * bytes_local, bytes_rack, bytes_cross, and the rest of the summary). */
int hrm_report_json(FILE *out, const struct hrm_report_entry *e, size_t n, struct hrm_error *err);
/* DIR/<policy>-jobs.csv (per job) and DIR/<policy>-util.csv (time series); DIR is created.
 * <policy> is the name with characters outside [A-Za-z0-9._-] (and a leading
 * dot) replaced by '_', and "-2", "-3"... added when two entries share it.
 * Columns: job,name,user,submit_s,start_s,end_s,response_s,ideal_s,fairness
 * (empty fields for what did not happen) and t_s,cpu,gpu,running,ready.
 * Every entry needs its record. */
int hrm_report_csv(const char *dir, const struct hrm_report_entry *e, size_t n,
                   struct hrm_error *err);
/* DIR/response-cdf.png and DIR/utilisation.png via gnuplot (writes the CSVs first).
 * -HRM_EIO with a clear message when gnuplot is missing or fails.  The
 * generated script stays in DIR/plot.gp so a user can restyle and rerun it. */
int hrm_report_plot(const char *dir, const struct hrm_report_entry *e, size_t n,
                    struct hrm_error *err);
/* Same, with title (e.g. the spec's file name; NULL: none) in every plot's title. */
int hrm_report_plot_titled(const char *dir, const char *title, const struct hrm_report_entry *e,
                           size_t n, struct hrm_error *err);
/* Before long work: creates dir and its missing parents, checks it is writable and,
 * with plot, that gnuplot is on PATH; 0 or -HRM_EIO with the reason in err. */
int hrm_report_prepare(const char *dir, bool plot, struct hrm_error *err);

#endif
