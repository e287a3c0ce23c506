/* Reports of runs: side-by-side table, JSON, per-policy CSV files and gnuplot PNG plots. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hrm/alloc.h"
#include "hrm/report.h"
#include "hrm/units.h"
#include "metrics/metrics_private.h"

extern char **environ; /* libc's; passed to gnuplot unchanged */

/* ---- table ---- */

#define CELL_MAX 40

enum row_kind { ROW_INT, ROW_DONE_FAILED, ROW_SEC, ROW_RATIO, ROW_FAIR, ROW_PCT, ROW_BYTES };

struct row {
    const char *label;
    enum row_kind kind;
    size_t off; /* offset of the field in struct hrm_summary */
};

/* clang-format off */
#define ROW(label, kind, field) {label, kind, offsetof(struct hrm_summary, field)}

static const struct row table_rows[] = {
    ROW("jobs", ROW_INT, jobs),
    ROW("jobs done/failed", ROW_DONE_FAILED, jobs_done),
    ROW("makespan (s)", ROW_SEC, makespan_s),
    ROW("response mean (s)", ROW_SEC, response_mean_s),
    ROW("response p50 (s)", ROW_SEC, response_p50_s),
    ROW("response p95 (s)", ROW_SEC, response_p95_s),
    ROW("response p99 (s)", ROW_SEC, response_p99_s),
    ROW("ideal mean (s)", ROW_SEC, ideal_mean_s),
    ROW("delay mean (s)", ROW_SEC, delay_mean_s),
    ROW("slowdown p50", ROW_RATIO, slowdown_p50),
    ROW("slowdown p95", ROW_RATIO, slowdown_p95),
    ROW("wait mean (s)", ROW_SEC, wait_mean_s),
    ROW("wait p95 (s)", ROW_SEC, wait_p95_s),
    ROW("sched latency mean (s)", ROW_SEC, sched_latency_mean_s),
    ROW("sched latency p95 (s)", ROW_SEC, sched_latency_p95_s),
    ROW("fairness S", ROW_FAIR, fairness_mean),
    ROW("fairness sigma", ROW_FAIR, fairness_sigma),
    ROW("jain", ROW_FAIR, jain),
    ROW("jain s_j", ROW_FAIR, jain_s),
    ROW("cpu util", ROW_PCT, cpu_util),
    ROW("gpu util", ROW_PCT, gpu_util),
    ROW("bytes local", ROW_BYTES, bytes_local),
    ROW("bytes rack", ROW_BYTES, bytes_rack),
    ROW("bytes cross", ROW_BYTES, bytes_cross),
    ROW("tasks done", ROW_INT, tasks_done),
    ROW("task failures", ROW_INT, task_failures),
    ROW("preemptions", ROW_INT, preemptions),
    ROW("tasks lost", ROW_INT, tasks_lost),
};
/* clang-format on */

#define NROWS (sizeof(table_rows) / sizeof(table_rows[0]))

static void format_cell(const struct row *row, const struct hrm_summary *s, char *buf)
{
    const char *base = (const char *)s;
    double d;
    int64_t i;
    switch (row->kind) {
    case ROW_INT:
        /* jobs is int32_t, the counters int64_t. */
        if (row->off == offsetof(struct hrm_summary, jobs))
            i = s->jobs;
        else
            memcpy(&i, base + row->off, sizeof(i));
        snprintf(buf, CELL_MAX, "%lld", (long long)i);
        return;
    case ROW_DONE_FAILED:
        snprintf(buf, CELL_MAX, "%d/%d", (int)s->jobs_done, (int)s->jobs_failed);
        return;
    case ROW_BYTES: {
        memcpy(&i, base + row->off, sizeof(i));
        int64_t total = s->bytes_local + s->bytes_rack + s->bytes_cross;
        char size[24];
        hrm_format_size(i, size, sizeof(size));
        if (total > 0)
            snprintf(buf, CELL_MAX, "%s (%.1f%%)", size, 100.0 * (double)i / (double)total);
        else
            snprintf(buf, CELL_MAX, "%s", size);
        return;
    }
    default:
        break;
    }
    memcpy(&d, base + row->off, sizeof(d));
    switch (row->kind) {
    case ROW_SEC:
        /* Milliseconds matter for the short tasks of P4. */
        snprintf(buf, CELL_MAX, "%.3f", d);
        break;
    case ROW_RATIO:
        snprintf(buf, CELL_MAX, "%.2f", d);
        break;
    case ROW_FAIR:
        /* The distributed simulator has no shared allocation state to
         * sample: its jain is not a measurement, so it is not shown as one. */
        if (row->off == offsetof(struct hrm_summary, jain) && s->share_samples == 0)
            snprintf(buf, CELL_MAX, "-");
        else
            snprintf(buf, CELL_MAX, "%.4f", d);
        break;
    case ROW_PCT:
        snprintf(buf, CELL_MAX, "%.1f%%", 100.0 * d);
        break;
    default:
        buf[0] = '\0';
        break;
    }
}

void hrm_report_table(FILE *out, const struct hrm_report_entry *e, size_t n)
{
    char(*cells)[CELL_MAX] = hrm_calloc(n * NROWS + 1, CELL_MAX);
    size_t label_w = strlen("metric");
    for (size_t r = 0; r < NROWS; r++)
        if (strlen(table_rows[r].label) > label_w)
            label_w = strlen(table_rows[r].label);
    size_t *width = hrm_calloc(n + 1, sizeof(*width));
    for (size_t p = 0; p < n; p++) {
        width[p] = strlen(e[p].summary->policy);
        for (size_t r = 0; r < NROWS; r++) {
            char *c = cells[r * n + p];
            format_cell(&table_rows[r], e[p].summary, c);
            if (strlen(c) > width[p])
                width[p] = strlen(c);
        }
    }
    fprintf(out, "%-*s", (int)label_w, "metric");
    for (size_t p = 0; p < n; p++)
        fprintf(out, "  %*s", (int)width[p], e[p].summary->policy);
    fputc('\n', out);
    for (size_t r = 0; r < NROWS; r++) {
        fprintf(out, "%-*s", (int)label_w, table_rows[r].label);
        for (size_t p = 0; p < n; p++)
            fprintf(out, "  %*s", (int)width[p], cells[r * n + p]);
        fputc('\n', out);
    }
    hrm_free(width);
    hrm_free(cells);
}

/* ---- JSON ---- */

/* jansson refuses NaN and infinities; a summary should hold none, but a
 * report must never fail on one, so they become null. */
static json_t *json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *summary_json(const struct hrm_summary *s)
{
    /* Keys in a fixed order (jansson keeps insertion order), so two runs of
     * the same simulation give byte-identical files. */
    json_t *o = json_object();
    json_object_set_new(o, "policy", json_string(s->policy));
    json_object_set_new(o, "jobs", json_integer(s->jobs));
    json_object_set_new(o, "jobs_done", json_integer(s->jobs_done));
    json_object_set_new(o, "jobs_failed", json_integer(s->jobs_failed));
    json_object_set_new(o, "makespan_s", json_num(s->makespan_s));
    json_object_set_new(o, "response_mean_s", json_num(s->response_mean_s));
    json_object_set_new(o, "response_p50_s", json_num(s->response_p50_s));
    json_object_set_new(o, "response_p95_s", json_num(s->response_p95_s));
    json_object_set_new(o, "response_p99_s", json_num(s->response_p99_s));
    json_object_set_new(o, "ideal_mean_s", json_num(s->ideal_mean_s));
    json_object_set_new(o, "delay_mean_s", json_num(s->delay_mean_s));
    json_object_set_new(o, "slowdown_p50", json_num(s->slowdown_p50));
    json_object_set_new(o, "slowdown_p95", json_num(s->slowdown_p95));
    json_object_set_new(o, "wait_mean_s", json_num(s->wait_mean_s));
    json_object_set_new(o, "wait_p95_s", json_num(s->wait_p95_s));
    json_object_set_new(o, "sched_latency_mean_s", json_num(s->sched_latency_mean_s));
    json_object_set_new(o, "sched_latency_p95_s", json_num(s->sched_latency_p95_s));
    json_object_set_new(o, "fairness_mean", json_num(s->fairness_mean));
    json_object_set_new(o, "fairness_sigma", json_num(s->fairness_sigma));
    json_object_set_new(o, "jain", s->share_samples > 0 ? json_num(s->jain) : json_null());
    json_object_set_new(o, "jain_s", json_num(s->jain_s));
    json_object_set_new(o, "cpu_util", json_num(s->cpu_util));
    json_object_set_new(o, "gpu_util", json_num(s->gpu_util));
    json_object_set_new(o, "bytes_local", json_integer(s->bytes_local));
    json_object_set_new(o, "bytes_rack", json_integer(s->bytes_rack));
    json_object_set_new(o, "bytes_cross", json_integer(s->bytes_cross));
    json_object_set_new(o, "tasks_done", json_integer(s->tasks_done));
    json_object_set_new(o, "task_failures", json_integer(s->task_failures));
    json_object_set_new(o, "preemptions", json_integer(s->preemptions));
    json_object_set_new(o, "tasks_lost", json_integer(s->tasks_lost));
    json_object_set_new(o, "events", json_integer(s->events));
    /* Only runs with the memory model spill: other reports keep their keys. */
    if (s->spill_cache_bytes || s->spill_disk_bytes) {
        json_object_set_new(o, "bytes_spill_cache", json_integer(s->spill_cache_bytes));
        json_object_set_new(o, "bytes_spill_disk", json_integer(s->spill_disk_bytes));
    }
    return o;
}

int hrm_report_json(FILE *out, const struct hrm_report_entry *e, size_t n, struct hrm_error *err)
{
    json_t *arr = json_array();
    for (size_t p = 0; p < n; p++)
        json_array_append_new(arr, summary_json(e[p].summary));
    int rc = json_dumpf(arr, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(arr);
    if (rc != 0 || fputc('\n', out) == EOF || fflush(out) != 0)
        return hrm_errorf(err, -HRM_EIO, "writing the JSON report: %s", strerror(errno));
    return 0;
}

/* ---- files ---- */

#define FNAME_MAX 64

struct fname {
    char s[FNAME_MAX];
};

/* File-name stems for the policies: only [A-Za-z0-9._-], no leading dot (no
 * hidden files, no ".."), and unique, since two entries may share a name (the
 * same policy with different parameters). */
static struct fname *policy_stems(const struct hrm_report_entry *e, size_t n)
{
    struct fname *f = hrm_calloc(n + 1, sizeof(*f));
    for (size_t p = 0; p < n; p++) {
        const char *name = e[p].summary->policy;
        size_t k = 0;
        for (; name[k] && k < 40; k++) {
            char c = name[k];
            bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || (c == '.' && k > 0);
            f[p].s[k] = ok ? c : '_';
        }
        f[p].s[k] = '\0';
        if (k == 0)
            snprintf(f[p].s, FNAME_MAX, "policy");
        char base[FNAME_MAX];
        memcpy(base, f[p].s, FNAME_MAX);
        for (unsigned suffix = 2;; suffix++) {
            size_t q = 0;
            while (q < p && strcmp(f[q].s, f[p].s) != 0)
                q++;
            if (q == p)
                break;
            snprintf(f[p].s, FNAME_MAX, "%.40s-%u", base, suffix);
        }
    }
    return f;
}

/* mkdir -p: creates dir and its missing parents. */
static int make_dirs(const char *dir, struct hrm_error *err)
{
    if (!dir || !dir[0])
        return hrm_errorf(err, -EINVAL, "no output directory given");
    char *path = hrm_strdup(dir);
    int rc = 0;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            rc =
                hrm_errorf(err, -HRM_EIO, "%s: cannot create directory: %s", path, strerror(errno));
            break;
        }
        *p = saved;
        if (saved == '\0')
            break;
    }
    if (rc == 0) {
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            rc = hrm_errorf(err, -HRM_EIO, "%s: not a directory", dir);
    }
    hrm_free(path);
    return rc;
}

static FILE *open_out(const char *dir, const char *stem, const char *suffix, char *path, size_t len,
                      struct hrm_error *err)
{
    snprintf(path, len, "%s/%s%s", dir, stem, suffix);
    FILE *f = fopen(path, "w");
    if (!f)
        hrm_errorf(err, -HRM_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
    return f;
}

/* Closes f and turns any write error seen on it into -HRM_EIO. */
static int close_out(FILE *f, const char *path, struct hrm_error *err)
{
    bool bad = ferror(f) != 0;
    int saved = errno;
    if (fclose(f) != 0 && !bad) {
        bad = true;
        saved = errno;
    }
    if (bad)
        return hrm_errorf(err, -HRM_EIO, "%s: write failed: %s", path, strerror(saved));
    return 0;
}

/* A CSV field, quoted when it holds a comma, quote or line break (RFC 4180). */
static void csv_string(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* A time in seconds, or an empty field when it never happened. */
static void csv_time(FILE *f, int64_t us)
{
    if (us >= 0)
        fprintf(f, "%.6f", (double)us / 1e6);
}

static int write_jobs_csv(const char *dir, const char *stem, const struct hrm_run_record *r,
                          struct hrm_error *err)
{
    char path[4096];
    FILE *f = open_out(dir, stem, "-jobs.csv", path, sizeof(path), err);
    if (!f)
        return -HRM_EIO;
    const struct hrm_workload *wl = r->wl;
    int32_t njobs = wl ? wl->njobs : 0;
    int64_t *ideal = hrm_calloc(njobs > 0 ? (size_t)njobs : 1, sizeof(*ideal));
    int64_t *share = hrm_calloc(njobs > 0 ? (size_t)njobs : 1, sizeof(*share));
    if (wl && r->cluster)
        metrics_job_times(wl, r->cluster, hrm_workload_fair_m(wl), ideal, share);
    fputs("job,name,user,submit_s,start_s,end_s,response_s,ideal_s,fairness\n", f);
    for (int32_t j = 0; j < njobs; j++) {
        const struct hrm_job *job = &wl->jobs[j];
        const struct hrm_job_record *jr = &r->jobs[j];
        bool done = jr->end_us >= 0 && !jr->failed;
        fprintf(f, "%d,", (int)j);
        csv_string(f, job->name);
        fputc(',', f);
        csv_string(f, job->user >= 0 && job->user < wl->nusers ? wl->users[job->user] : "");
        fputc(',', f);
        csv_time(f, jr->submit_us);
        fputc(',', f);
        csv_time(f, jr->first_start_us);
        fputc(',', f);
        csv_time(f, jr->end_us);
        fputc(',', f);
        /* Response and fairness only for jobs that finished, as in the summary. */
        if (done)
            csv_time(f, jr->end_us - jr->submit_us);
        fprintf(f, ",%.6f,", (double)ideal[j] / 1e6);
        if (done)
            fprintf(f, "%.6f", metrics_fairness_ratio(share[j], jr->end_us - jr->submit_us));
        fputc('\n', f);
    }
    hrm_free(ideal);
    hrm_free(share);
    return close_out(f, path, err);
}

static int write_util_csv(const char *dir, const char *stem, const struct hrm_run_record *r,
                          struct hrm_error *err)
{
    char path[4096];
    FILE *f = open_out(dir, stem, "-util.csv", path, sizeof(path), err);
    if (!f)
        return -HRM_EIO;
    fputs("t_s,cpu,gpu,running,ready\n", f);
    const struct hrm_series *s = &r->series;
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%.6f,%.6f,%.6f,%d,%d\n", (double)s->t_us[i] / 1e6, s->cpu[i], s->gpu[i],
                (int)s->running[i], (int)s->ready[i]);
    return close_out(f, path, err);
}

static int check_records(const struct hrm_report_entry *e, size_t n, struct hrm_error *err)
{
    for (size_t p = 0; p < n; p++)
        if (!e[p].record)
            return hrm_errorf(err, -EINVAL, "policy '%s': no run record to write",
                              e[p].summary->policy);
    return 0;
}

static int write_csvs(const char *dir, const struct hrm_report_entry *e, size_t n,
                      const struct fname *stems, struct hrm_error *err)
{
    int rc = check_records(e, n, err);
    if (rc == 0)
        rc = make_dirs(dir, err);
    for (size_t p = 0; p < n && rc == 0; p++) {
        rc = write_jobs_csv(dir, stems[p].s, e[p].record, err);
        if (rc == 0)
            rc = write_util_csv(dir, stems[p].s, e[p].record, err);
    }
    return rc;
}

int hrm_report_csv(const char *dir, const struct hrm_report_entry *e, size_t n,
                   struct hrm_error *err)
{
    struct fname *stems = policy_stems(e, n);
    int rc = write_csvs(dir, e, n, stems, err);
    hrm_free(stems);
    return rc;
}

/* ---- plots ---- */

/* A gnuplot single-quoted string: only the quote itself needs escaping (''). */
static void gp_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        if (*s != '\n' && *s != '\r')
            fputc(*s, f);
    }
    fputc('\'', f);
}

static void gp_path(FILE *f, const char *dir, const char *stem, const char *suffix)
{
    size_t len = strlen(dir) + strlen(stem) + strlen(suffix) + 2;
    char *p = hrm_alloc(len);
    snprintf(p, len, "%s/%s%s", dir, stem, suffix);
    gp_string(f, p);
    hrm_free(p);
}

/* A plot's title: what, and the spec it shows when known ("what: spec.json"). */
static void gp_titled(FILE *f, const char *what, const char *title)
{
    size_t len = strlen(what) + (title ? strlen(title) : 0) + 3;
    char *t = hrm_alloc(len);
    snprintf(t, len, "%s%s%s", what, title ? ": " : "", title ? title : "");
    gp_string(f, t);
    hrm_free(t);
}

/* Sorted responses (s) of the jobs that finished; returns how many. */
static size_t done_responses(const struct hrm_run_record *r, double **out)
{
    int32_t njobs = r->wl ? r->wl->njobs : 0;
    double *v = hrm_alloc((njobs > 0 ? (size_t)njobs : 1) * sizeof(*v));
    size_t k = 0;
    for (int32_t j = 0; j < njobs; j++) {
        const struct hrm_job_record *jr = &r->jobs[j];
        if (jr->end_us >= 0 && !jr->failed)
            v[k++] = (double)(jr->end_us - jr->submit_us) / 1e6;
    }
    if (k > 0)
        hrm_percentile(v, k, 50); /* sorts in place */
    *out = v;
    return k;
}

/* The placeholder for a panel without data: gnuplot refuses to plot nothing. */
static void gp_empty(FILE *f)
{
    fputs("set label 1 'no data' at graph 0.5, 0.5 center\n"
          "set xrange [0:1]\n"
          "plot -1 notitle\n"
          "unset label 1\n"
          "set autoscale x\n",
          f);
}

/* A series sampled thousands of times swings between samples (a GPU phase is busy or
 * idle) and draws as a solid band: past UTIL_BINS samples, each panel shows the mean
 * of each of UTIL_BINS equal time bins instead (gnuplot's "smooth unique" averages
 * the points that share an x). */
#define UTIL_BINS 200

static double util_bin_s(const struct hrm_report_entry *e, size_t n)
{
    size_t most = 0;
    int64_t end = 0;
    for (size_t p = 0; p < n; p++) {
        const struct hrm_series *s = &e[p].record->series;
        if (s->n > most)
            most = s->n;
        if (s->n > 0 && s->t_us[s->n - 1] > end)
            end = s->t_us[s->n - 1];
    }
    return most > UTIL_BINS && end > 0 ? (double)end / 1e6 / UTIL_BINS : 0;
}

static void gp_util_panel(FILE *f, const char *dir, const struct hrm_report_entry *e, size_t n,
                          const struct fname *stems, const char *what, int column, double bin_s)
{
    fprintf(f, "set ylabel '%s utilisation (%%)%s'\n", what,
            bin_s > 0 ? ", mean per bin" : "");
    size_t plotted = 0;
    for (size_t p = 0; p < n; p++) {
        if (e[p].record->series.n == 0)
            continue;
        fputs(plotted ? ", \\\n     " : "plot ", f);
        gp_path(f, dir, stems[p].s, "-util.csv");
        /* every ::1 skips the header line. */
        if (bin_s > 0)
            fprintf(f, " every ::1 using ((floor($1/%.9g)+0.5)*%.9g):($%d*100) smooth unique "
                       "with lines lw 1.5 title ", bin_s, bin_s, column);
        else
            fprintf(f, " every ::1 using 1:($%d*100) with lines lw 1.5 title ", column);
        gp_string(f, e[p].summary->policy);
        plotted++;
    }
    if (plotted)
        fputc('\n', f);
    else
        gp_empty(f);
}

static int write_plot_script(const char *path, const char *dir, const char *title,
                             const struct hrm_report_entry *e, size_t n, const struct fname *stems,
                             struct hrm_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return hrm_errorf(err, -HRM_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
    fputs("# Generated by hrm: job response CDF and utilisation over time per policy.\n"
          "# Run again with: gnuplot plot.gp (from the directory hrm was run in).\n"
          "# pngcairo draws better; plain png (libgd) is the fallback.\n"
          "term = (strstrt(GPVAL_TERMINALS, ' pngcairo') > 0) ? 'pngcairo' : 'png'\n"
          "set datafile separator ','\n"
          "set grid\n"
          "set key bottom right\n",
          f);

    /* Response CDF: the data go inline, as datablocks, so DIR holds no
     * files beyond the CSVs, the script and the images. */
    size_t with_data = 0;
    for (size_t p = 0; p < n; p++) {
        double *v;
        size_t k = done_responses(e[p].record, &v);
        if (k > 0) {
            fprintf(f, "$cdf%zu << EOD\n", p);
            for (size_t i = 0; i < k; i++)
                fprintf(f, "%.6f,%.6f\n", v[i], (double)(i + 1) / (double)k);
            fputs("EOD\n", f);
            with_data++;
        }
        hrm_free(v);
    }
    fputs("set terminal @term size 900,600 noenhanced\n"
          "set output ",
          f);
    gp_path(f, dir, "response-cdf", ".png");
    fputs("\nset title ", f);
    gp_titled(f, "Job response time CDF", title);
    fputs("\nset xlabel 'response time (s)'\n"
          "set ylabel 'fraction of jobs'\n"
          "set yrange [0:1.02]\n",
          f);
    if (with_data == 0) {
        gp_empty(f);
    } else {
        size_t plotted = 0;
        for (size_t p = 0; p < n; p++) {
            double *v;
            size_t k = done_responses(e[p].record, &v);
            hrm_free(v);
            if (k == 0)
                continue;
            fprintf(f, "%s$cdf%zu using 1:2 with steps lw 1.5 title ",
                    plotted ? ", \\\n     " : "plot ", p);
            gp_string(f, e[p].summary->policy);
            plotted++;
        }
        fputc('\n', f);
    }
    fputs("unset output\n"
          "set terminal @term size 900,800 noenhanced\n"
          "set output ",
          f);
    gp_path(f, dir, "utilisation", ".png");
    /* A cluster without GPUs gets no GPU panel: it would be a flat line at 0. */
    bool gpus = false;
    for (size_t p = 0; p < n; p++)
        gpus |= e[p].record->gpu_capacity_area > 0;
    double bin_s = util_bin_s(e, n);
    fprintf(f, "\nset multiplot layout %d,1 title ", gpus ? 2 : 1);
    gp_titled(f, "Utilisation over time", title);
    fputs("\nunset title\n"
          "set xlabel 'time (s)'\n"
          "set yrange [0:105]\n"
          "set key outside right top\n",
          f);
    gp_util_panel(f, dir, e, n, stems, "CPU", 2, bin_s);
    if (gpus)
        gp_util_panel(f, dir, e, n, stems, "GPU", 3, bin_s);
    fputs("unset multiplot\nunset output\n", f);
    return close_out(f, path, err);
}

/* Full path of an executable named name on PATH, or false. */
static bool find_on_path(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin"; /* what execvp assumes */
    while (*path) {
        size_t seg = strcspn(path, ":");
        /* An empty PATH entry means the current directory. */
        if (seg == 0)
            snprintf(out, len, "./%s", name);
        else
            snprintf(out, len, "%.*s/%s", (int)seg, path, name);
        struct stat st;
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return true;
        path += seg;
        if (*path == ':')
            path++;
    }
    return false;
}

/* Runs `gnuplot script` with stdin and stdout on /dev/null and stderr captured
 * (its first bytes name the problem when it fails). */
static int run_gnuplot(const char *exe, const char *script, struct hrm_error *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return hrm_errorf(err, -HRM_EIO, "running gnuplot: pipe: %s", strerror(errno));
    /* Our end must not leak into gnuplot, or the read below never sees EOF. */
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    char *argv[] = {"gnuplot", (char *)script, NULL};
    pid_t pid;
    int src = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (src != 0) {
        close(fds[0]);
        return hrm_errorf(err, -HRM_EIO, "cannot run gnuplot (%s): %s", exe, strerror(src));
    }
    char msg[400];
    size_t used = 0;
    for (;;) {
        char buf[1024];
        ssize_t got = read(fds[0], buf, sizeof(buf));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        /* Keep the head: gnuplot stops at its first error. */
        size_t room = sizeof(msg) - 1 - used;
        size_t take = (size_t)got < room ? (size_t)got : room;
        memcpy(msg + used, buf, take);
        used += take;
    }
    close(fds[0]);
    msg[used] = '\0';
    for (size_t i = 0; i < used; i++)
        if (msg[i] == '\n' || msg[i] == '\r' || msg[i] == '\t')
            msg[i] = ' ';
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return hrm_errorf(err, -HRM_EIO, "waiting for gnuplot: %s", strerror(errno));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status))
        return hrm_errorf(err, -HRM_EIO, "gnuplot failed on %s (exit status %d): %s", script,
                          WEXITSTATUS(status), used ? msg : "no message");
    return hrm_errorf(err, -HRM_EIO, "gnuplot was killed by signal %d on %s", WTERMSIG(status),
                      script);
}

static int check_png(const char *dir, const char *name, struct hrm_error *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size == 0)
        return hrm_errorf(err, -HRM_EIO, "gnuplot did not write %s", path);
    return 0;
}

int hrm_report_plot(const char *dir, const struct hrm_report_entry *e, size_t n,
                    struct hrm_error *err)
{
    return hrm_report_plot_titled(dir, NULL, e, n, err);
}

int hrm_report_prepare(const char *dir, bool plot, struct hrm_error *err)
{
    int rc = make_dirs(dir, err);
    if (rc)
        return rc;
    if (access(dir, W_OK | X_OK) != 0)
        return hrm_errorf(err, -HRM_EIO, "%s: cannot write there: %s", dir, strerror(errno));
    char exe[4096];
    if (plot && !find_on_path("gnuplot", exe, sizeof(exe)))
        return hrm_errorf(err, -HRM_EIO,
                          "gnuplot not found on PATH: install it (Debian: gnuplot-nox) to get "
                          "plots");
    return 0;
}

int hrm_report_plot_titled(const char *dir, const char *title, const struct hrm_report_entry *e,
                           size_t n, struct hrm_error *err)
{
    struct fname *stems = policy_stems(e, n);
    int rc = write_csvs(dir, e, n, stems, err);
    if (rc)
        goto out;
    char exe[4096];
    if (!find_on_path("gnuplot", exe, sizeof(exe))) {
        rc = hrm_errorf(err, -HRM_EIO,
                        "gnuplot not found on PATH: install it (Debian: gnuplot-nox) to get "
                        "plots; the CSV files are in %s",
                        dir);
        goto out;
    }
    char script[4096];
    snprintf(script, sizeof(script), "%s/plot.gp", dir);
    rc = write_plot_script(script, dir, title, e, n, stems, err);
    if (rc)
        goto out;
    rc = run_gnuplot(exe, script, err);
    if (rc == 0)
        rc = check_png(dir, "response-cdf.png", err);
    if (rc == 0)
        rc = check_png(dir, "utilisation.png", err);
out:
    hrm_free(stems);
    return rc;
}
