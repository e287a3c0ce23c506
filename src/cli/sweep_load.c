/* hrm sim --sweep-load: every policy over a range of loads, table and plot. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "hrm/alloc.h"
#include "hrm/dsim.h"
#include "hrm/policy.h"
#include "hrm/sim.h"
#include "hrm/spec.h"

struct sweep_row {
    int load;
    const char *policy;
    struct hrm_summary sum;
    struct hrm_dsim_stats ds;
    bool distributed;
};

static int parse_range(const char *s, int *a, int *b, int *step)
{
    char extra;
    if (sscanf(s, "%d:%d:%d%c", a, b, step, &extra) != 3 || *a < 1 || *b < *a || *b > 1000 ||
        *step < 1)
        return -1;
    return 0;
}

/* Offered load of an open-loop workload: its work over the cores and its
 * arrival span.  N arrivals span N - 1 gaps, so the rate is (N - 1) / span. */
static int base_load(const struct hrm_workload *wl, const struct hrm_cluster *c, double *load,
                     int64_t *first)
{
    if (wl->max_parallel > 0 || wl->njobs < 2)
        return -1;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int32_t j = 0; j < wl->njobs; j++) {
        if (wl->jobs[j].submit_us < lo)
            lo = wl->jobs[j].submit_us;
        if (wl->jobs[j].submit_us > hi)
            hi = wl->jobs[j].submit_us;
    }
    if (hi <= lo)
        return -1;
    double work = 0; /* core-microseconds */
    for (int32_t t = 0; t < wl->ntasks; t++)
        work += (double)wl->tasks[t].duration_us * (double)wl->tasks[t].req.v[HRM_DIM_CPU] / 1000.0;
    double cores = (double)c->total.v[HRM_DIM_CPU] / 1000.0;
    *load = work * (double)(wl->njobs - 1) / (double)wl->njobs / (cores * (double)(hi - lo));
    *first = lo;
    return 0;
}

static size_t params_for(const char *policy, const char **all, size_t nall, const char **out)
{
    size_t n = 0, plen = strlen(policy);
    for (size_t i = 0; i < nall; i++)
        if (strncmp(all[i], policy, plen) == 0 && all[i][plen] == '.')
            out[n++] = all[i] + plen + 1;
    return n;
}

static void print_table(FILE *out, const struct sweep_row *rows, size_t n)
{
    fprintf(out, "%5s %-15s %6s %9s %9s %9s %9s %10s %9s %9s %10s %6s\n", "load", "policy", "jobs",
            "mean/ideal", "p50/ideal", "p95/ideal", "resp_s", "wait_ms", "wait95_ms", "sched_ms",
            "nodeq_ms", "util");
    for (size_t i = 0; i < n; i++) {
        const struct hrm_summary *s = &rows[i].sum;
        double ratio = s->ideal_mean_s > 0 ? s->response_mean_s / s->ideal_mean_s : 0;
        char nodeq[32] = "-";
        if (rows[i].distributed)
            snprintf(nodeq, sizeof(nodeq), "%.2f", rows[i].ds.node_wait_mean_us / 1000.0);
        fprintf(out, "%4d%% %-15s %6d %9.3f %9.3f %9.3f %9.3f %10.2f %9.2f %9.2f %10s %5.1f%%\n",
                rows[i].load, rows[i].policy, s->jobs_done, ratio, s->slowdown_p50, s->slowdown_p95,
                s->response_mean_s, s->wait_mean_s * 1e3, s->wait_p95_s * 1e3,
                s->sched_latency_mean_s * 1e3, nodeq, s->cpu_util * 100);
    }
}

/* A gnuplot string in single quotes ('' escapes a quote). */
static void gp_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* dir exists: hrm sim made and checked it before the sweep (hrm_report_prepare). */
static int plot(const char *dir, const char *title, const struct sweep_row *rows, size_t n,
                const char *const *policies, int npol)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/load-sweep.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hrm sim: --plot: cannot write %s: %s\n", path, strerror(errno));
        return CLI_FAIL;
    }
    fprintf(f, "load,policy,mean_over_ideal,p50_over_ideal,p95_over_ideal,response_mean_s,"
               "wait_mean_ms,sched_mean_ms\n");
    for (size_t i = 0; i < n; i++) {
        const struct hrm_summary *s = &rows[i].sum;
        fprintf(f, "%d,%s,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f\n", rows[i].load, rows[i].policy,
                s->ideal_mean_s > 0 ? s->response_mean_s / s->ideal_mean_s : 0, s->slowdown_p50,
                s->slowdown_p95, s->response_mean_s, s->wait_mean_s * 1e3,
                s->sched_latency_mean_s * 1e3);
    }
    fclose(f);
    /* The same numbers grouped by policy (gnuplot blocks: "index p"), so each
     * curve is drawn as a line. */
    char dat[4096];
    snprintf(dat, sizeof(dat), "%s/load-sweep.dat", dir);
    f = fopen(dat, "w");
    if (!f) {
        fprintf(stderr, "hrm sim: --plot: cannot write %s: %s\n", dat, strerror(errno));
        return CLI_FAIL;
    }
    for (int p = 0; p < npol; p++) {
        fprintf(f, "%s# %s: load mean/ideal p50/ideal p95/ideal\n", p ? "\n\n" : "", policies[p]);
        for (size_t i = 0; i < n; i++) {
            const struct hrm_summary *s = &rows[i].sum;
            if (strcmp(rows[i].policy, policies[p]) != 0)
                continue;
            fprintf(f, "%d %.6f %.6f %.6f\n", rows[i].load,
                    s->ideal_mean_s > 0 ? s->response_mean_s / s->ideal_mean_s : 0, s->slowdown_p50,
                    s->slowdown_p95);
        }
    }
    fclose(f);
    static const char *const what[3] = {"mean response / mean ideal", "median of response / ideal",
                                        "p95 of response / ideal"};
    char png[4096];
    snprintf(png, sizeof(png), "%s/response-vs-load.png", dir);
    snprintf(path, sizeof(path), "%s/load-sweep.gp", dir);
    /* One curve per policy: each plot filters the CSV on the policy column. */
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hrm sim: --plot: cannot write %s: %s\n", path, strerror(errno));
        return CLI_FAIL;
    }
    char csv[4096];
    snprintf(csv, sizeof(csv), "%s/load-sweep.csv", dir);
    fprintf(f, "# Written by hrm sim --sweep-load; rerun with: gnuplot %s\n", path);
    fprintf(f, "set terminal pngcairo size 1400,500 noenhanced\nset output ");
    gp_quote(f, png);
    fprintf(f, "\nset multiplot layout 1,3 title ");
    gp_quote(f, title);
    fprintf(f, "\nset key top left\nset grid\n"
               "set xlabel 'offered load (%%)'\n");
    for (int panel = 0; panel < 3; panel++) {
        fprintf(f, "set title '%s'\nplot ", what[panel]);
        for (int p = 0; p < npol; p++) {
            fprintf(f, "%s", p ? ", \\\n     " : "");
            gp_quote(f, dat);
            fprintf(f, " index %d using 1:%d with linespoints title ", p, 2 + panel);
            gp_quote(f, policies[p]);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "unset multiplot\n");
    fclose(f);
    pid_t pid = fork();
    if (pid < 0)
        return CLI_FAIL;
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", path, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "hrm sim: --plot: gnuplot %s failed (%s); the CSV is %s\n", path,
                WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "gnuplot not found"
                                                                : "see its messages",
                csv);
        return CLI_FAIL;
    }
    fprintf(stderr, "hrm sim: wrote %s\n", png);
    return CLI_OK;
}

int cli_sweep_load(const struct hrm_spec *spec, const char *range, const char *const *policies,
                   int npolicies, const char **params, size_t nparams, uint64_t seed,
                   const char *plot_dir, int quiet)
{
    int a, b, step;
    if (parse_range(range, &a, &b, &step) < 0) {
        fprintf(stderr,
                "hrm sim: --sweep-load: '%s' is not FROM:TO:STEP in percent, like "
                "10:90:10\n",
                range);
        return CLI_USAGE;
    }
    const struct hrm_workload *wl = spec->wl;
    double base;
    int64_t first;
    if (base_load(wl, spec->cluster, &base, &first) < 0 || base <= 0) {
        fprintf(stderr, "hrm sim: --sweep-load needs an open-loop workload of at least two "
                        "jobs arriving at different times\n");
        return CLI_USAGE;
    }
    size_t npoints = (size_t)((b - a) / step + 1), nrows = 0;
    struct sweep_row *rows = hrm_calloc(npoints * (size_t)npolicies, sizeof(*rows));
    const char **mine = hrm_calloc(nparams + 1, sizeof(*mine));
    struct hrm_job *jobs = hrm_alloc((size_t)wl->njobs * sizeof(*jobs));
    /* A shallow copy of the workload whose jobs arrive at scaled times: the
     * same jobs and tasks, the offered load changed and nothing else. */
    struct hrm_workload scaled = *wl;
    scaled.jobs = jobs;
    int rc = CLI_OK;
    for (int load = a; load <= b && rc == CLI_OK; load += step) {
        double factor = base / ((double)load / 100.0);
        for (int32_t j = 0; j < wl->njobs; j++) {
            jobs[j] = wl->jobs[j];
            jobs[j].submit_us = first + (int64_t)((double)(wl->jobs[j].submit_us - first) * factor);
        }
        for (int p = 0; p < npolicies; p++) {
            struct sweep_row *row = &rows[nrows];
            struct hrm_params pp = {.items = mine,
                                    .count = params_for(policies[p], params, nparams, mine)};
            /* The sweep only rescales arrivals: faults and the execution model
             * of the spec apply at every load, as they do in a plain run. */
            struct hrm_sim_config cfg = {.seed = seed,
                                         .faults = &spec->faults,
                                         .execution = &spec->execution};
            struct hrm_run_record rec;
            struct hrm_error err = {{0}};
            hrm_run_record_init(&rec, spec->cluster, &scaled);
            if (!quiet && isatty(STDERR_FILENO))
                fprintf(stderr, "\r[%s at %d%%]            ", policies[p], load);
            row->distributed = hrm_dsim_policy_known(policies[p]) && !hrm_policy_find(policies[p]);
            int r = row->distributed
                        ? hrm_dsim_run_ex(spec->cluster, &scaled, policies[p], &pp, &cfg, NULL,
                                          &rec, &row->ds, &err)
                        : hrm_sim_run(spec->cluster, &scaled, policies[p], &pp, &cfg, &rec, &err);
            if (r < 0) {
                fprintf(stderr, "\nhrm sim: %s at %d%%: %s\n", policies[p], load, err.text);
                rc = r == -HRM_EUNKNOWN_POLICY || r == -HRM_ESPEC ? CLI_USAGE : CLI_FAIL;
                hrm_run_record_fini(&rec);
                break;
            }
            row->load = load;
            row->policy = policies[p];
            hrm_summarize(&rec, policies[p], &row->sum);
            hrm_run_record_fini(&rec);
            nrows++;
        }
    }
    if (!quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\r%40s\r", "");
    if (rc == CLI_OK) {
        printf("# %s: %d jobs, %d tasks; arrival times scaled from the spec's offered load "
               "%.1f%%\n",
               spec->path, wl->njobs, wl->ntasks, base * 100);
        print_table(stdout, rows, nrows);
        fflush(stdout);
        if (plot_dir)
            rc = plot(plot_dir, spec->path, rows, nrows, policies, npolicies);
    }
    hrm_free(jobs);
    hrm_free(mine);
    hrm_free(rows);
    return rc;
}
