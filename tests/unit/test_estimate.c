/* Estimator: keys, staged profiles, smoothed updates, compression weighting, persistence. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "hrm/estimate.h"
#include "hrm/rng.h"

#define SEC 1000000ll

static struct hrm_est *est_new(void)
{
    struct hrm_error err = {{0}};
    struct hrm_est *e = hrm_est_new(NULL, &err);
    cr_assert_not_null(e, "%s", err.text);
    return e;
}

/* Feeds a run of phases (duration, cpu, mem) as 1 s samples. */
static void feed(struct hrm_est *e, int32_t task, int32_t attempt, const int64_t (*ph)[3], int n,
                 bool compressed)
{
    for (int i = 0; i < n; i++)
        for (int64_t t = 0; t < ph[i][0]; t += SEC) {
            struct hrm_est_sample s = {
                .interval_us = SEC, .cpu = ph[i][1], .mem = ph[i][2], .compressed = compressed};
            hrm_est_sample(e, task, attempt, &s);
        }
}

static const struct hrm_est_key K = {.logic = 0x1234, .input_class = 100};

Test(estimate, samples_become_stages_and_the_first_run_is_taken_as_is)
{
    struct hrm_est *e = est_new();
    const int64_t ph[][3] = {{4 * SEC, 2000, 1 * GIB}, {6 * SEC, 500, 3 * GIB}};
    feed(e, 7, 1, ph, 2, false);
    cr_assert_null(hrm_est_lookup(e, &K), "nothing until a run completes");
    hrm_est_task_end(e, 7, 1, true, &K, 1.0);
    const struct hrm_est_profile *p = hrm_est_lookup(e, &K);
    cr_assert_not_null(p);
    cr_assert_eq(p->nobs, 1);
    cr_assert_eq(p->nstages, 2);
    cr_assert_eq(p->duration_us, 10 * SEC);
    cr_assert_eq(p->stage[0].duration_us, 4 * SEC);
    cr_assert_eq(p->stage[0].cpu, 2000);
    cr_assert_eq(p->stage[1].mem, 3 * GIB);
    hrm_est_free(e);
}

Test(estimate, durations_are_kept_for_a_speed_one_node_and_failed_runs_teach_nothing)
{
    struct hrm_est *e = est_new();
    const int64_t ph[][3] = {{5 * SEC, 1000, GIB}};
    feed(e, 3, 1, ph, 1, false);
    hrm_est_task_end(e, 3, 1, false, &K, 1.0);
    cr_assert_null(hrm_est_lookup(e, &K));
    feed(e, 3, 2, ph, 1, false);
    hrm_est_task_end(e, 3, 2, true, &K, 2.0); /* 5 s on a node twice as fast */
    cr_assert_eq(hrm_est_lookup(e, &K)->duration_us, 10 * SEC);
    hrm_est_free(e);
}

Test(estimate, a_newer_attempt_replaces_an_older_trace)
{
    struct hrm_est *e = est_new();
    const int64_t a[][3] = {{3 * SEC, 4000, GIB}};
    const int64_t b[][3] = {{2 * SEC, 1000, GIB}};
    feed(e, 1, 1, a, 1, false);
    feed(e, 1, 2, b, 1, false);
    feed(e, 1, 1, a, 1, false); /* a late sample of the old run is ignored */
    hrm_est_task_end(e, 1, 2, true, &K, 1.0);
    const struct hrm_est_profile *p = hrm_est_lookup(e, &K);
    cr_assert_eq(p->duration_us, 2 * SEC);
    cr_assert_eq(p->stage[0].cpu, 1000);
    hrm_est_free(e);
}

/*
 * The true task: 4 s at 2 cores / 1 GiB then 6 s at 0.5 cores / 3 GiB.
 * Each run is observed with +-20 % noise on every duration and demand.  The
 * smoothed estimate converges to within 8 % of the truth and varies less
 * than the observations do.
 */
Test(estimate, converges_on_a_noisy_series)
{
    struct hrm_est *e = est_new();
    struct hrm_rng rng;
    hrm_rng_seed(&rng, 42);
    double obs_dev = 0, est_dev = 0;
    int counted = 0;
    for (int run = 0; run < 60; run++) {
        struct hrm_est_obs o = {.nstages = 2};
        double n[6];
        for (int i = 0; i < 6; i++)
            n[i] = 1 + 0.4 * (hrm_rng_double(&rng) - 0.5);
        o.stage[0] = (struct hrm_est_stage){(int64_t)(4 * SEC * n[0]), (int64_t)(2000 * n[1]),
                                            (int64_t)(GIB * n[2])};
        o.stage[1] = (struct hrm_est_stage){(int64_t)(6 * SEC * n[3]), (int64_t)(500 * n[4]),
                                            (int64_t)(3 * GIB * n[5])};
        cr_assert_eq(hrm_est_observe(e, &K, &o), 0);
        const struct hrm_est_profile *p = hrm_est_lookup(e, &K);
        if (run >= 20) {
            double od = (double)(o.stage[0].duration_us + o.stage[1].duration_us) / (10.0 * SEC);
            double ed = (double)p->duration_us / (10.0 * SEC);
            obs_dev += (od - 1) * (od - 1);
            est_dev += (ed - 1) * (ed - 1);
            counted++;
        }
    }
    const struct hrm_est_profile *p = hrm_est_lookup(e, &K);
    cr_assert_eq(p->nobs, 60);
    cr_assert_eq(p->nstages, 2, "the two phases stay apart");
    cr_assert(fabs((double)p->duration_us / (10.0 * SEC) - 1) < 0.08, "D = %lld",
              (long long)p->duration_us);
    cr_assert(fabs((double)p->stage[0].cpu / 2000 - 1) < 0.08, "cpu0 = %lld",
              (long long)p->stage[0].cpu);
    cr_assert(fabs((double)p->stage[1].cpu / 500 - 1) < 0.08, "cpu1 = %lld",
              (long long)p->stage[1].cpu);
    cr_assert(fabs((double)p->stage[1].mem / (3.0 * GIB) - 1) < 0.08);
    cr_assert(fabs((double)p->stage[0].duration_us / (4.0 * SEC) - 1) < 0.12);
    cr_assert_lt(est_dev, 0.5 * obs_dev, "smoothing: %g vs %g", est_dev / counted,
                 obs_dev / counted);
    hrm_est_free(e);
}

Test(estimate, a_run_observed_compressed_moves_the_estimate_less)
{
    struct hrm_est *plain = est_new(), *comp = est_new();
    struct hrm_est_obs base = {.nstages = 1, .stage = {{10 * SEC, 1000, GIB}}};
    hrm_est_observe(plain, &K, &base);
    hrm_est_observe(comp, &K, &base);
    /* A run that took twice as long using half the cpu: what compression does. */
    struct hrm_est_obs slow = {.nstages = 1, .stage = {{20 * SEC, 500, GIB}}};
    hrm_est_observe(plain, &K, &slow);
    slow.compressed[0] = 1.0;
    hrm_est_observe(comp, &K, &slow);
    /* weight 0.3 uncompressed, 0.3 * 0.2 = 0.06 compressed */
    cr_assert_eq(hrm_est_lookup(plain, &K)->duration_us, 13 * SEC);
    cr_assert_eq(hrm_est_lookup(comp, &K)->duration_us, (int64_t)(10.6 * SEC));
    cr_assert_eq(hrm_est_lookup(plain, &K)->stage[0].cpu, 850);
    cr_assert_eq(hrm_est_lookup(comp, &K)->stage[0].cpu, 970);
    hrm_est_free(plain);
    hrm_est_free(comp);
}

Test(estimate, keys_declared_logic_job_stage_and_input_class)
{
    struct hrm_workload *wl = hrm_workload_new();
    struct hrm_error err;
    int32_t nodes[1] = {0};
    fx_job(wl, "wc1", "u", 0);
    fx_stage(wl, "map", NULL, 0);
    struct hrm_task_desc d = {.duration_us = SEC, .logic = hrm_workload_logic_id("wordcount")};
    d.req.v[HRM_DIM_CPU] = 1000;
    d.req.v[HRM_DIM_MEM] = GIB;
    cr_assert_geq(hrm_workload_add_task(wl, &d, &err), 0);
    hrm_workload_add_block(wl, 128 * MIB, nodes, 1, &err);
    d.logic = 0;
    cr_assert_geq(hrm_workload_add_task(wl, &d, &err), 0);
    hrm_workload_add_block(wl, 128 * MIB - 1, nodes, 1, &err);
    cr_assert_geq(hrm_workload_add_task(wl, &d, &err), 0);
    hrm_workload_add_block(wl, 256 * MIB, nodes, 1, &err);
    struct hrm_est_key k0 = hrm_est_key_of(wl, 0), k1 = hrm_est_key_of(wl, 1),
                       k2 = hrm_est_key_of(wl, 2);
    cr_assert_eq(k0.logic, hrm_workload_logic_id("wordcount"));
    cr_assert_eq(k1.logic, hrm_workload_logic_id("wc1/map"), "default: job/stage");
    cr_assert_eq(k0.input_class, k1.input_class, "128M and 128M - 1 byte are alike");
    cr_assert_neq(k1.input_class, k2.input_class);
    cr_assert_eq(hrm_est_input_class(0), 0);
    cr_assert_neq(hrm_workload_logic_id(""), 0u);
    hrm_workload_free(wl);
}

Test(estimate, program_identity_of_a_command_line)
{
    const char *a[] = {"/usr/bin/wc", "-l", "input.txt"};
    const char *b[] = {"/usr/bin/wc", "-l", "input.txt"};
    const char *c[] = {"/usr/bin/wc", "-w", "input.txt"};
    const char *d[] = {"/usr/bin/wc", "-l input.txt"};
    uint32_t ia = hrm_est_logic_of_command(a, 3);
    cr_assert_neq(ia, 0u, "0 means not declared");
    cr_assert_eq(ia, hrm_est_logic_of_command(b, 3), "same command and arguments, same program");
    cr_assert_neq(ia, hrm_est_logic_of_command(c, 3), "other arguments, other program");
    cr_assert_neq(ia, hrm_est_logic_of_command(d, 2), "argument boundaries count");
    cr_assert_neq(ia, hrm_est_logic_of_command(a, 2));
    cr_assert_neq(hrm_est_logic_of_command(a, 0), 0u);
}

static char *tmp_path(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof(buf), "/tmp/hrm-est-test-%d-%s", (int)getpid(), name);
    return buf;
}

Test(estimate, persistence_round_trip)
{
    struct hrm_est *e = est_new();
    struct hrm_est_obs o = {.nstages = 2,
                            .stage = {{3 * SEC, 1500, 2 * GIB}, {7 * SEC, 250, 5 * GIB}}};
    struct hrm_est_key k2 = {.logic = 0xfeedbeef, .input_class = 0};
    hrm_est_observe(e, &K, &o);
    hrm_est_observe(e, &K, &o);
    hrm_est_observe(e, &k2, &(struct hrm_est_obs){.nstages = 1, .stage = {{SEC, 100, MIB}}});
    char *path = tmp_path("rt");
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_est_save(e, path, &err), 0, "%s", err.text);
    struct hrm_est *back = est_new();
    cr_assert_eq(hrm_est_load(back, path, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_est_count(back), 2);
    const struct hrm_est_profile *a = hrm_est_lookup(e, &K), *b = hrm_est_lookup(back, &K);
    cr_assert_eq(memcmp(a, b, sizeof(*a)), 0, "the profile survives the restart unchanged");
    cr_assert_eq(hrm_est_lookup(back, &k2)->stage[0].cpu, 100);
    /* Saving what was loaded gives the same bytes. */
    char path2[300];
    snprintf(path2, sizeof(path2), "%s-2", path);
    cr_assert_eq(hrm_est_save(back, path2, &err), 0);
    FILE *f1 = fopen(path, "r"), *f2 = fopen(path2, "r");
    char x[4096], y[4096];
    size_t n1 = fread(x, 1, sizeof(x), f1), n2 = fread(y, 1, sizeof(y), f2);
    fclose(f1);
    fclose(f2);
    cr_assert(n1 == n2 && memcmp(x, y, n1) == 0);
    remove(path);
    remove(path2);
    hrm_est_free(e);
    hrm_est_free(back);
}

Test(estimate, load_errors_name_the_line_and_change_nothing)
{
    struct hrm_est *e = est_new();
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_est_load(e, "/nonexistent/hrm-estimates", &err), -ENOENT);
    char *path = tmp_path("bad");
    FILE *f = fopen(path, "w");
    fprintf(f, "hrm-estimates 1\n00001234 100 2 1 5000000 1000 1073741824\n"
               "00001235 100 2 2 5000000 1000\n");
    fclose(f);
    cr_assert_eq(hrm_est_load(e, path, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "line 3") != NULL, "%s", err.text);
    cr_assert_eq(hrm_est_count(e), 0, "nothing of a bad file is taken");
    f = fopen(path, "w");
    fprintf(f, "something else\n");
    fclose(f);
    cr_assert_eq(hrm_est_load(e, path, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "not an hrm estimates file") != NULL, "%s", err.text);
    remove(path);
    hrm_est_free(e);
}

/* Writes text to path. */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* Loads path into a fresh history: the code, with err.text filled. */
static int load_text(const char *text, struct hrm_error *err)
{
    char *path = tmp_path("case");
    write_file(path, text);
    struct hrm_est *e = est_new();
    int rc = hrm_est_load(e, path, err);
    if (rc)
        cr_assert_eq(hrm_est_count(e), 0, "a refused file changes nothing: %s", err->text);
    remove(path);
    hrm_est_free(e);
    return rc;
}

Test(estimate, damaged_and_foreign_files_are_refused_never_trusted)
{
    struct hrm_error err = {{0}};
    const char *good_line = "00001234 100 2 1 5000000 1000 1073741824\n";
    char text[512];
    snprintf(text, sizeof(text), "hrm-estimates 1\n%s", good_line);
    cr_assert_eq(load_text(text, &err), 0, "%s", err.text);
    struct {
        const char *text, *why;
    } bad[] = {
        {"", "empty file"},
        {"hrm-estimates 2\n", "version 2; this hrm reads version 1"},
        {"hrm-estimates 1x\n", "malformed version"},
        {"hrm-estimates1\n", "not an hrm estimates file"},
        {"{\"cluster\": {}}\n", "not an hrm estimates file"},
        {"\177ELF\2\1\1\n", "not an hrm estimates file"},
        /* nobs beyond the counter's range: a later update would overflow it */
        {"hrm-estimates 1\n00001234 100 2147483647 1 5000000 1000 1073741824\n", "line 2"},
        /* eight stages of 1e18 us would overflow the profile's total */
        {"hrm-estimates 1\n00001234 100 2 2 1000000000000000000 1 1 "
         "1000000000000000000 1 1\n",
         "out of range"},
        {"hrm-estimates 1\n00001234 100 2 1 5000000 1000 -5\n", "line 2"},
        {"hrm-estimates 1\n00001234 100 2 9 5000000 1000 5\n", "nstages out of range"},
        {"hrm-estimates 1\n00000000 100 2 1 5000000 1000 5\n", "bad logic id"},
        {"hrm-estimates 1\n00001234 100 2 1 5000000 1000 5 junk\n", "trailing text"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&err, 0, sizeof(err));
        cr_assert_eq(load_text(bad[i].text, &err), -HRM_ESPEC, "case %zu accepted", i);
        cr_assert(strstr(err.text, bad[i].why) != NULL, "case %zu: %s", i, err.text);
        cr_assert(strstr(err.text, tmp_path("case")) != NULL, "names the file: %s", err.text);
    }
    /* A directory is not a history either. */
    struct hrm_est *e = est_new();
    cr_assert_lt(hrm_est_load(e, "/tmp", &err), 0);
    cr_assert(strstr(err.text, "/tmp") != NULL, "%s", err.text);
    hrm_est_free(e);
}

Test(estimate, a_loaded_profile_keeps_learning)
{
    /* A profile loaded from a file is the same starting point as one
     * learned in this process: the next run is folded in with the weight. */
    struct hrm_error err = {{0}};
    char *path = tmp_path("learn");
    write_file(path, "hrm-estimates 1\n00001234 100 3 1 10000000 1000 1073741824\n");
    struct hrm_est *e = est_new();
    cr_assert_eq(hrm_est_load(e, path, &err), 0, "%s", err.text);
    struct hrm_est_obs o = {.nstages = 1, .stage = {{20 * SEC, 2000, GIB}}};
    cr_assert_eq(hrm_est_observe(e, &K, &o), 0);
    const struct hrm_est_profile *p = hrm_est_lookup(e, &K);
    cr_assert_eq(p->nobs, 4);
    cr_assert_eq(p->duration_us, 13 * SEC, "0.7 * 10 s + 0.3 * 20 s");
    cr_assert_eq(p->stage[0].cpu, 1300);
    remove(path);
    hrm_est_free(e);
}

Test(estimate, configuration_is_checked)
{
    struct hrm_error err = {{0}};
    struct hrm_est_config c = {.weight = 1.5};
    cr_assert_null(hrm_est_new(&c, &err));
    cr_assert(strstr(err.text, "weight") != NULL);
    c = (struct hrm_est_config){.max_stages = HRM_EST_MAX_STAGES + 1};
    cr_assert_null(hrm_est_new(&c, &err));
}

Test(estimate, many_phases_are_merged_into_at_most_max_stages)
{
    struct hrm_est *e = est_new();
    int64_t ph[10][3];
    for (int i = 0; i < 10; i++) {
        ph[i][0] = 2 * SEC;
        ph[i][1] = i % 2 ? 4000 : 200;
        ph[i][2] = GIB;
    }
    feed(e, 0, 1, (const int64_t(*)[3])ph, 10, false);
    hrm_est_task_end(e, 0, 1, true, &K, 1.0);
    const struct hrm_est_profile *p = hrm_est_lookup(e, &K);
    cr_assert_leq(p->nstages, 4);
    cr_assert_eq(p->duration_us, 20 * SEC);
    double work = 0;
    for (int i = 0; i < p->nstages; i++)
        work += (double)p->stage[i].cpu * (double)p->stage[i].duration_us;
    cr_assert_float_eq(work, 5 * (4000.0 + 200.0) * 2 * SEC, 1e-3 * work, "cpu-time is kept");
    hrm_est_free(e);
}
