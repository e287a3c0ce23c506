/* Unit tests of the reports: table, JSON keys and values, CSV files, gnuplot plots, errors. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hrm/cluster.h"
#include "hrm/metrics.h"
#include "hrm/report.h"
#include "hrm/workload.h"

#define SEC 1000000LL
#define GB 1000000000LL

/* Two policies' runs of the same three-job workload on a one-node cluster. */
struct fixture {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_run_record rec[2];
    struct hrm_summary sum[2];
    struct hrm_report_entry e[2];
};

static void fixture_init(struct fixture *f, const char *p0, const char *p1)
{
    struct hrm_netcfg net = {.disk_bw = 100e6};
    f->c = hrm_cluster_new(&net);
    cr_assert_eq(hrm_cluster_add_rack(f->c, "r0", NULL), 0);
    struct hrm_node_desc n = {
        .name = "n0", .rack = 0, .cores = 4, .mem = 8 * GB, .gpus = 1, .gpu_mem = 8 * GB};
    cr_assert_eq(hrm_cluster_add_node(f->c, &n, NULL), 0);
    f->wl = hrm_workload_new();
    hrm_workload_user(f->wl, "alice");
    hrm_workload_user(f->wl, "bob, jr."); /* needs CSV quoting */
    const char *names[] = {"first", "second \"q\"", "third"};
    for (int j = 0; j < 3; j++) {
        struct hrm_job_desc d = {.name = names[j], .user = j % 2, .submit_us = j * SEC};
        cr_assert_eq(hrm_workload_add_job(f->wl, &d, NULL), j);
        cr_assert_geq(hrm_workload_add_stage(f->wl, "s", NULL, 0, NULL), 0);
        struct hrm_task_desc t = {.duration_us = (j + 1) * 10 * SEC};
        t.req.v[HRM_DIM_CPU] = 1000;
        cr_assert_geq(hrm_workload_add_task(f->wl, &t, NULL), 0);
    }
    const char *pol[] = {p0, p1};
    for (int p = 0; p < 2; p++) {
        struct hrm_run_record *r = &f->rec[p];
        hrm_run_record_init(r, f->c, f->wl);
        int64_t stretch = p + 1; /* the second policy is twice as slow */
        for (int j = 0; j < 3; j++) {
            r->jobs[j].first_start_us = j * SEC;
            r->jobs[j].end_us = j * SEC + stretch * (j + 1) * 10 * SEC;
        }
        r->jobs[2].failed = p == 1;
        r->first_start_us = 0;
        r->last_end_us = r->jobs[2].end_us;
        for (int i = 0; i <= 30; i++)
            hrm_series_push(&r->series, i * SEC, i / 30.0, 1.0 - i / 30.0, 3, i % 4);
        hrm_run_record_wait(r, 1000);
        r->cpu_area = 0.5e9;
        r->cpu_capacity_area = 1e9;
        r->bytes_local = 3 * GB;
        r->bytes_rack = GB;
        r->bytes_cross = 0;
        r->tasks_done = 3 - p;
        r->events = 100 + p;
        hrm_summarize(r, pol[p], &f->sum[p]);
        f->e[p] = (struct hrm_report_entry){.summary = &f->sum[p], .record = r};
    }
}

static void fixture_fini(struct fixture *f)
{
    for (int p = 0; p < 2; p++)
        hrm_run_record_fini(&f->rec[p]);
    hrm_workload_free(f->wl);
    hrm_cluster_free(f->c);
}

static char *temp_dir(void)
{
    char tmpl[] = "/tmp/hrm-report-XXXXXX";
    char *d = mkdtemp(tmpl);
    cr_assert_not_null(d);
    return strdup(d);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, got, m);
    fclose(f);
    fclose(m);
    return buf;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void rm_rf(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* ---- table ---- */

Test(report, table_has_every_policy_and_row)
{
    struct fixture f;
    fixture_init(&f, "fifo", "drf-long-name");
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    hrm_report_table(out, f.e, 2);
    fclose(out);
    cr_assert(strstr(buf, "fifo"));
    cr_assert(strstr(buf, "drf-long-name"));
    const char *rows[] = {"jobs done/failed", "makespan",       "response p99", "slowdown p95",
                          "fairness S",       "fairness sigma", "jain",         "jain s_j",     "cpu util",
                          "gpu util",         "bytes local",    "bytes cross",  "preemptions",
                          "tasks lost"};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        cr_assert(strstr(buf, rows[i]), "row '%s' missing", rows[i]);
    cr_assert(strstr(buf, "3/0"));
    cr_assert(strstr(buf, "2/1"));
    cr_assert(strstr(buf, "75.0%"), "bytes local share of the total");
    cr_assert(strstr(buf, "50.0%"), "cpu util in percent");
    /* Aligned: every line is as long as the header line. */
    size_t width = strcspn(buf, "\n");
    for (const char *p = buf; *p; p += strcspn(p, "\n") + 1)
        cr_assert_eq(strcspn(p, "\n"), width, "misaligned line: %.*s", (int)strcspn(p, "\n"), p);
    free(buf);
    fixture_fini(&f);
}

/* ---- JSON ---- */

Test(report, json_parses_back_with_all_keys)
{
    struct fixture f;
    fixture_init(&f, "fifo", "drf");
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_eq(hrm_report_json(out, f.e, 2, NULL), 0);
    fclose(out);
    json_error_t jerr;
    json_t *root = json_loads(buf, 0, &jerr);
    cr_assert_not_null(root, "bad JSON: %s", jerr.text);
    cr_assert(json_is_array(root));
    cr_assert_eq(json_array_size(root), 2);
    static const char *const keys[] = {
        "policy",          "jobs",           "jobs_done",      "jobs_failed",    "makespan_s",
        "response_mean_s", "response_p50_s", "response_p95_s", "response_p99_s", "ideal_mean_s",
        "delay_mean_s",    "slowdown_p50",   "slowdown_p95",   "wait_mean_s",    "wait_p95_s",
        "sched_latency_mean_s", "sched_latency_p95_s",
        "fairness_mean",   "fairness_sigma", "jain",           "jain_s",         "cpu_util",       "gpu_util",
        "bytes_local",     "bytes_rack",     "bytes_cross",    "tasks_done",     "task_failures",
        "preemptions",     "tasks_lost",     "events"};
    size_t nkeys = sizeof(keys) / sizeof(keys[0]);
    for (size_t p = 0; p < 2; p++) {
        json_t *o = json_array_get(root, p);
        cr_assert(json_is_object(o));
        cr_assert_eq(json_object_size(o), nkeys);
        /* Same keys in the same order. */
        size_t i = 0;
        const char *key;
        json_t *val;
        json_object_foreach(o, key, val)
        {
            cr_assert_str_eq(key, keys[i], "key %zu", i);
            i++;
        }
    }
    json_t *o = json_array_get(root, 1);
    cr_assert_str_eq(json_string_value(json_object_get(o, "policy")), "drf");
    cr_assert_eq(json_integer_value(json_object_get(o, "jobs")), 3);
    cr_assert_eq(json_integer_value(json_object_get(o, "jobs_done")), 2);
    cr_assert_eq(json_integer_value(json_object_get(o, "jobs_failed")), 1);
    cr_assert_eq(json_integer_value(json_object_get(o, "bytes_local")), 3 * GB);
    cr_assert_eq(json_integer_value(json_object_get(o, "events")), 101);
    cr_assert_float_eq(json_real_value(json_object_get(o, "cpu_util")), 0.5, 1e-12);
    cr_assert_float_eq(json_number_value(json_object_get(o, "makespan_s")), f.sum[1].makespan_s,
                       1e-9);
    /* drf: responses 20 s and 40 s (job 2 failed); m = 1 so fairness {0.5, 0.5}. */
    cr_assert_float_eq(json_number_value(json_object_get(o, "response_mean_s")), 30.0, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(o, "fairness_mean")), 0.5, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(o, "jain_s")), 1.0, 1e-9);
    /* No allocation samples in this record: jain is not a measurement. */
    cr_assert(json_is_null(json_object_get(o, "jain")));
    json_decref(root);

    /* Deterministic: the same input gives the same bytes. */
    char *again = NULL;
    out = open_memstream(&again, &len);
    cr_assert_eq(hrm_report_json(out, f.e, 2, NULL), 0);
    fclose(out);
    cr_assert_str_eq(buf, again);
    free(again);
    free(buf);
    fixture_fini(&f);
}

Test(report, json_empty_is_an_empty_array)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_eq(hrm_report_json(out, NULL, 0, NULL), 0);
    fclose(out);
    json_t *root = json_loads(buf, 0, NULL);
    cr_assert(json_is_array(root));
    cr_assert_eq(json_array_size(root), 0);
    json_decref(root);
    free(buf);
}

/* ---- CSV ---- */

Test(report, csv_files_have_header_and_rows)
{
    struct fixture f;
    fixture_init(&f, "fifo", "drf");
    char *tmp = temp_dir();
    char dir[512], path[600];
    snprintf(dir, sizeof(dir), "%s/a/b", tmp); /* parents are created */
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_report_csv(dir, f.e, 2, &err), 0, "%s", err.text);
    const char *pol[] = {"fifo", "drf"};
    for (int p = 0; p < 2; p++) {
        snprintf(path, sizeof(path), "%s/%s-jobs.csv", dir, pol[p]);
        char *jobs = slurp(path);
        cr_assert_eq(strncmp(jobs,
                             "job,name,user,submit_s,start_s,end_s,response_s,ideal_s,"
                             "fairness\n",
                             strlen("job,name,user,submit_s,start_s,end_s,response_s,ideal_s,"
                                    "fairness\n")),
                     0, "header: %s", jobs);
        cr_assert_eq(count_lines(jobs), 1 + 3);
        /* Quoted name and user (RFC 4180). */
        cr_assert(strstr(jobs, "1,\"second \"\"q\"\"\",\"bob, jr.\",1.000000,1.000000,"));
        free(jobs);
        snprintf(path, sizeof(path), "%s/%s-util.csv", dir, pol[p]);
        char *util = slurp(path);
        cr_assert_eq(strncmp(util, "t_s,cpu,gpu,running,ready\n", 26), 0);
        cr_assert_eq(count_lines(util), 1 + 31);
        cr_assert(strstr(util, "\n30.000000,1.000000,0.000000,3,2\n"));
        free(util);
    }
    /* fifo's first job: submit 0, start 0, end 10 s, response 10, ideal 10, s = 1. */
    snprintf(path, sizeof(path), "%s/fifo-jobs.csv", dir);
    char *jobs = slurp(path);
    cr_assert(strstr(jobs, "\n0,first,alice,0.000000,0.000000,10.000000,10.000000,10.000000,"
                           "1.000000\n"),
              "%s", jobs);
    free(jobs);
    /* drf's failed job has no response and no fairness. */
    snprintf(path, sizeof(path), "%s/drf-jobs.csv", dir);
    jobs = slurp(path);
    cr_assert(strstr(jobs, "\n2,third,alice,2.000000,2.000000,62.000000,,30.000000,\n"), "%s",
              jobs);
    free(jobs);
    rm_rf(tmp);
    free(tmp);
    fixture_fini(&f);
}

Test(report, csv_sanitizes_and_dedups_file_names)
{
    struct fixture f;
    fixture_init(&f, "../evil/name", "../evil/name");
    char *tmp = temp_dir();
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_report_csv(tmp, f.e, 2, &err), 0, "%s", err.text);
    char path[600];
    struct stat st;
    snprintf(path, sizeof(path), "%s/_._evil_name-jobs.csv", tmp);
    cr_assert_eq(stat(path, &st), 0, "missing %s", path);
    snprintf(path, sizeof(path), "%s/_._evil_name-2-util.csv", tmp);
    cr_assert_eq(stat(path, &st), 0, "missing %s", path);
    rm_rf(tmp);
    free(tmp);
    fixture_fini(&f);
}

Test(report, csv_into_a_file_fails_with_eio)
{
    struct fixture f;
    fixture_init(&f, "fifo", "drf");
    char *tmp = temp_dir();
    char path[600];
    snprintf(path, sizeof(path), "%s/plain", tmp);
    FILE *fp = fopen(path, "w");
    fclose(fp);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_report_csv(path, f.e, 2, &err), -HRM_EIO);
    cr_assert(strstr(err.text, "plain"), "%s", err.text);
    rm_rf(tmp);
    free(tmp);
    fixture_fini(&f);
}

/* ---- plots ---- */

static bool gnuplot_present(void)
{
    const char *path = getenv("PATH");
    if (!path)
        return false;
    char *copy = strdup(path), *save = NULL;
    bool found = false;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char exe[1024];
        snprintf(exe, sizeof(exe), "%s/gnuplot", d);
        found = access(exe, X_OK) == 0;
    }
    free(copy);
    return found;
}

static void assert_png(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "missing %s", path);
    unsigned char sig[8] = {0};
    cr_assert_eq(fread(sig, 1, 8, f), 8);
    fclose(f);
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    cr_assert_eq(memcmp(sig, png, 8), 0, "%s is not a PNG", path);
}

Test(report, plot_writes_pngs)
{
    if (!gnuplot_present())
        cr_skip_test("gnuplot is not installed");
    struct fixture f;
    fixture_init(&f, "fifo", "it's drf"); /* a quote in a gnuplot title */
    char *tmp = temp_dir();
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_report_plot(tmp, f.e, 2, &err), 0, "%s", err.text);
    assert_png(tmp, "response-cdf.png");
    assert_png(tmp, "utilisation.png");
    char path[600];
    struct stat st;
    snprintf(path, sizeof(path), "%s/fifo-jobs.csv", tmp);
    cr_assert_eq(stat(path, &st), 0, "the CSVs come with the plots");
    rm_rf(tmp);
    free(tmp);
    fixture_fini(&f);
}

/* No finished job and no samples: gnuplot would refuse an empty plot; we draw
 * a placeholder instead. */
Test(report, plot_without_data)
{
    if (!gnuplot_present())
        cr_skip_test("gnuplot is not installed");
    struct fixture f;
    fixture_init(&f, "fifo", "drf");
    for (int p = 0; p < 2; p++) {
        for (int j = 0; j < 3; j++)
            f.rec[p].jobs[j].end_us = -1;
        hrm_series_fini(&f.rec[p].series);
    }
    char *tmp = temp_dir();
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_report_plot(tmp, f.e, 2, &err), 0, "%s", err.text);
    assert_png(tmp, "response-cdf.png");
    assert_png(tmp, "utilisation.png");
    rm_rf(tmp);
    free(tmp);
    fixture_fini(&f);
}

Test(report, plot_without_gnuplot_is_eio)
{
    struct fixture f;
    fixture_init(&f, "fifo", "drf");
    char *tmp = temp_dir();
    char empty[600];
    snprintf(empty, sizeof(empty), "%s/empty-bin", tmp);
    cr_assert_eq(mkdir(empty, 0700), 0);
    /* Each Criterion test runs in its own process: changing PATH is local. */
    cr_assert_eq(setenv("PATH", empty, 1), 0);
    struct hrm_error err = {{0}};
    char out[600];
    snprintf(out, sizeof(out), "%s/out", tmp);
    cr_assert_eq(hrm_report_plot(out, f.e, 2, &err), -HRM_EIO);
    cr_assert(strstr(err.text, "gnuplot"), "message: %s", err.text);
    /* The data are still written. */
    char path[700];
    struct stat st;
    snprintf(path, sizeof(path), "%s/drf-util.csv", out);
    cr_assert_eq(stat(path, &st), 0);
    setenv("PATH", "/usr/bin:/bin", 1); /* rm_rf runs a shell */
    rm_rf(tmp);
    free(tmp);
    fixture_fini(&f);
}

/* A gnuplot that fails: a script on PATH named gnuplot that exits 3. */
Test(report, plot_gnuplot_failure_is_eio)
{
    struct fixture f;
    fixture_init(&f, "fifo", "drf");
    char *tmp = temp_dir();
    char bin[600], fake[700];
    snprintf(bin, sizeof(bin), "%s/bin", tmp);
    cr_assert_eq(mkdir(bin, 0700), 0);
    snprintf(fake, sizeof(fake), "%s/gnuplot", bin);
    FILE *fp = fopen(fake, "w");
    fputs("#!/bin/sh\necho 'line 1: broken terminal' >&2\nexit 3\n", fp);
    fclose(fp);
    cr_assert_eq(chmod(fake, 0755), 0);
    cr_assert_eq(setenv("PATH", bin, 1), 0);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_report_plot(tmp, f.e, 2, &err), -HRM_EIO);
    cr_assert(strstr(err.text, "gnuplot failed"), "message: %s", err.text);
    cr_assert(strstr(err.text, "exit status 3"), "message: %s", err.text);
    cr_assert(strstr(err.text, "broken terminal"), "message: %s", err.text);
    setenv("PATH", "/usr/bin:/bin", 1);
    rm_rf(tmp);
    free(tmp);
    fixture_fini(&f);
}
