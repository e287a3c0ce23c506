/* FGM: formulas (7) and (15), Alg. 2, checkQoS, Def. 4, Alg. 3, and whole runs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "hrm/estimate.h"
#include "hrm/sim.h"
#include "policy/fgm_private.h"

#define SEC 1000000ll

Test(fgm, formula_7_bounds_compression)
{
    /* Two running tasks of 4 cores (w_run 8000), p = 0.05. */
    cr_assert_float_eq(fgm_max_compression(8000, 2000, 0.05, 0, 0.10), 0.10, 1e-12,
                       "(2000 - 400) / 10000 = 0.16, capped at 10 %%");
    cr_assert_float_eq(fgm_max_compression(8000, 500, 0.05, 0, 0.10), 100.0 / 8500, 1e-12);
    cr_assert_float_eq(fgm_max_compression(8000, 300, 0.05, 0, 0.10), 0.0, 1e-12,
                       "the newcomer's work does not pay for the slowdown");
    cr_assert_float_eq(fgm_max_compression(8000, 300, 0.05, 0.02, 0.10), 0.02, 1e-12,
                       "the paper's form: limitation is a floor");
    cr_assert_float_eq(fgm_max_compression(0, 1000, 0.05, 0, 0.10), 0.10, 1e-12);
    cr_assert_float_eq(fgm_max_compression(0, 0, 0.05, 0, 0.10), 0.0, 1e-12);
}

Test(fgm, formula_15_stretches_each_stage)
{
    double d[2] = {10, 20}, rc[2] = {0.1, 0.05};
    cr_assert_float_eq(fgm_compressed_duration(d, rc, 2), 10 / 0.9 + 20 / 0.95, 1e-12);
    cr_assert_float_eq(fgm_compressed_duration(d, rc, 2), 32.1637426900585, 1e-9);
}

/*
 * The worked timeline: a node of 4 cores and 8 GiB running task A, expected
 * at 3 cores / 2 GiB for 4 s, then 1 core / 6 GiB (its last stage, held until
 * it ends).  From now = 0 the free resources are:
 *   [0, 4 s):  1000 milli-cores, 6 GiB   (running work 3000)
 *   [4 s, -):  3000 milli-cores, 2 GiB   (running work 1000)
 */
static const struct fgm_stage A[] = {{4 * SEC, 3000, 2 * GIB}, {6 * SEC, 1000, 6 * GIB}};

static struct fgm_timeline worked(void)
{
    struct fgm_timeline tl = {0};
    struct fgm_load load = {.start_us = 0, .nstages = 2, .st = A};
    fgm_timeline_build(&tl, 0, 4000, 8 * GIB, 0, 0, &load, 1);
    return tl;
}

Test(fgm, timeline_of_the_worked_example)
{
    struct fgm_timeline tl = worked();
    cr_assert_eq(tl.n, 2);
    cr_assert_eq(tl.seg[0].t0, 0);
    cr_assert_eq(tl.seg[0].t1, 4 * SEC);
    cr_assert_float_eq(tl.seg[0].cpu_free, 1000, 1e-9);
    cr_assert_float_eq(tl.seg[0].mem_free, 6.0 * GIB, 1);
    cr_assert_float_eq(tl.seg[0].cpu_work, 3000, 1e-9);
    cr_assert_eq(tl.seg[1].t1, INT64_MAX);
    cr_assert_float_eq(tl.seg[1].cpu_free, 3000, 1e-9);
    cr_assert_float_eq(tl.seg[1].mem_free, 2.0 * GIB, 1);
    /* Seen at 5 s (A in its last stage) with 1 core of foreign load. */
    struct fgm_load load = {.start_us = 0, .nstages = 2, .st = A};
    fgm_timeline_build(&tl, 5 * SEC, 4000, 8 * GIB, 1000, 0, &load, 1);
    cr_assert_eq(tl.n, 1);
    cr_assert_eq(tl.seg[0].t0, 5 * SEC);
    cr_assert_float_eq(tl.seg[0].cpu_free, 2000, 1e-9);
    fgm_timeline_fini(&tl);
}

static const struct fgm_match_cfg COMPRESS = {.compress = true, .p = 0.05, .max_ratio = 0.10};
static const struct fgm_match_cfg NO_COMPRESS = {.compress = false, .p = 0.05, .max_ratio = 0.10};

Test(fgm, alg2_matches_stage_by_stage)
{
    struct fgm_timeline tl = worked();
    bool comp;
    /* 1 core for 2 s then 0.5 core for 3 s: fits every window as it is. */
    const struct fgm_stage fits[] = {{2 * SEC, 1000, GIB}, {3 * SEC, 500, GIB}};
    cr_assert(fgm_match_fine(&tl, 0, fits, 2, &NO_COMPRESS, &comp));
    cr_assert(!comp);
    /* 0.5 core for 4 s, then 2.5 cores: its peak never meets A's. */
    const struct fgm_stage late_peak[] = {{4 * SEC, 500, GIB}, {2 * SEC, 2500, GIB}};
    cr_assert(fgm_match_fine(&tl, 0, late_peak, 2, &NO_COMPRESS, &comp));
    cr_assert(!fgm_match_coarse(&tl, 0, late_peak, 2), "coarse: peak 2500 > least free 1000");
    cr_assert(fgm_match_coarse(&tl, 0, fits, 2), "coarse: peak 1000 / 1 GiB fits");
    /* Memory is incompressible: 3 GiB from 4 s on meets only 2 GiB. */
    const struct fgm_stage mem[] = {{5 * SEC, 500, 3 * GIB}};
    cr_assert(!fgm_match_fine(&tl, 0, mem, 1, &COMPRESS, &comp));
    fgm_timeline_fini(&tl);
}

Test(fgm, alg2_compressible_only_fit)
{
    struct fgm_timeline tl = worked();
    bool comp;
    /* 1.3 cores for 3 s: 300 more than the 1000 free in [0, 4 s).  Formula
     * (7): (1300 - 0.05 * 3000) / 4300 = 0.267, capped at 0.1, allows
     * 1000 + 0.1 * 4000 = 1400 >= 1300. */
    const struct fgm_stage st[] = {{3 * SEC, 1300, GIB}};
    cr_assert(!fgm_match_fine(&tl, 0, st, 1, &NO_COMPRESS, &comp));
    cr_assert(fgm_match_fine(&tl, 0, st, 1, &COMPRESS, &comp));
    cr_assert(comp);
    /* 1.5 cores: beyond even 10 % compression. */
    const struct fgm_stage too[] = {{3 * SEC, 1500, GIB}};
    cr_assert(!fgm_match_fine(&tl, 0, too, 1, &COMPRESS, &comp));
    /* Laid from 4 s on, after A's peak, 1.3 cores fit without compression. */
    cr_assert(fgm_match_fine(&tl, 4 * SEC, st, 1, &NO_COMPRESS, &comp));
    cr_assert(!comp);
    fgm_timeline_fini(&tl);
}

Test(fgm, check_qos_with_formula_15)
{
    struct fgm_timeline tl = worked();
    const struct fgm_stage cand[] = {{3 * SEC, 1300, GIB}};
    struct fgm_load load = {.start_us = 0, .nstages = 2, .st = A};
    /* With the candidate, [0, 3 s) demands 3000 + 1300 = 4300 of 4000:
     * r = 1 - 4000/4300.  A's first stage (4 s) stretches to 4 / (1 - r) =
     * 4.3 s; its last stage is 6 s: A ends at 10.3 s. */
    int64_t ok = 10400000, late = 10200000, none = INT64_MAX;
    cr_assert(fgm_check_qos(&tl, 0, cand, 1, none, &load, &ok, 1));
    cr_assert(!fgm_check_qos(&tl, 0, cand, 1, none, &load, &late, 1));
    /* The candidate itself: 3 s / (1 - r) = 3.225 s. */
    cr_assert(fgm_check_qos(&tl, 0, cand, 1, 3230000, &load, &none, 1));
    cr_assert(!fgm_check_qos(&tl, 0, cand, 1, 3220000, &load, &none, 1));
    fgm_timeline_fini(&tl);
}

Test(fgm, conformity_def4)
{
    double mu[2] = {0.6, 0.9}, alpha[2] = {0.5, 0.5}, t[2] = {10, 30};
    /* mean use 0.825 > mean estimate 0.5, idle 5 % < 10 %:
     * F = (0.1^2 * 10 + 0.4^2 * 30) / 40 = 0.1225 */
    cr_assert_float_eq(fgm_conformity(mu, alpha, t, 2, 0.05, 0.1), 0.1225, 1e-12);
    cr_assert_float_eq(fgm_conformity(mu, alpha, t, 2, 0.20, 0.1), 0.0, 1e-12,
                       "enough idle resources: estimates may converge on their own");
    double low[2] = {0.4, 0.5};
    cr_assert_float_eq(fgm_conformity(low, alpha, t, 2, 0.05, 0.1), 0.0, 1e-12,
                       "use below the estimate is harmless");
}

Test(fgm, alg3_each_branch)
{
    struct fgm_thresholds th = {.sa = 0.02, .cg = 0.005, .fg = 0.001};
    cr_assert_eq(fgm_adjust(0.03, &th), FGM_STOP);
    cr_assert_eq(fgm_adjust(0.01, &th), FGM_COARSE);
    cr_assert_eq(fgm_adjust(0.002, &th), FGM_FINE);
    cr_assert_eq(fgm_adjust(0.0005, &th), FGM_FINE_COMPRESS);
    cr_assert_eq(fgm_adjust(0.001, &th), FGM_FINE_COMPRESS, "at the threshold: not above it");
    cr_assert_eq(fgm_adjust(0.02, &th), FGM_COARSE);
    cr_assert_str_eq(fgm_mode_name(FGM_STOP), "stop");
}

/* ---- whole runs ---- */

/* One node of 8 cores / 16 GiB; one job of 16 tasks asking 2 cores and
 * 4 GiB (the request a user writes) but using 1 core and 1.5 GiB for 10 s. */
static void overasked(struct hrm_cluster **c, struct hrm_workload **wl, const char *kind)
{
    struct hrm_error err;
    *c = fx_cluster(1, 1, 8, 16 * GIB, 0, 0, NULL);
    *wl = hrm_workload_new();
    struct hrm_job_desc jd = {
        .name = "j", .user = hrm_workload_user(*wl, "u"), .kind = hrm_job_kind_parse(kind)};
    cr_assert_geq(hrm_workload_add_job(*wl, &jd, &err), 0);
    fx_stage(*wl, "map", NULL, 0);
    for (int i = 0; i < 16; i++) {
        struct hrm_task_desc d = {.duration_us = 10 * SEC};
        d.req.v[HRM_DIM_CPU] = 2000;
        d.req.v[HRM_DIM_MEM] = 4 * GIB;
        cr_assert_geq(hrm_workload_add_task(*wl, &d, &err), 0);
        struct hrm_res use = {{1000, 3 * GIB / 2, 0, 0, 0, 0}};
        cr_assert_geq(hrm_workload_add_phase(*wl, 10 * SEC, &use, &err), 0);
    }
}

static int64_t run_end(const char *policy, const char *const *items, size_t n, const char *kind)
{
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    overasked(&c, &wl, kind);
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    struct hrm_params params = {.items = items, .count = n};
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_sim_run(c, wl, policy, &params, NULL, &rec, &err), 0, "%s", err.text);
    cr_assert_eq(rec.tasks_done, 16);
    cr_assert_eq(rec.task_failures, 0);
    int64_t end = rec.jobs[0].end_us;
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    return end;
}

Test(fgm, learns_demand_and_packs_more_than_drf)
{
    /* DRF by request: 4 tasks at a time, 4 waves = 40 s.  FGM: the first
     * wave is unpredictable (by request, 10 s); then the history says 1 core
     * and 1.5 GiB, so 8 run at once: 10 + 10 + 10 = 30 s. */
    cr_assert_eq(run_end("drf", NULL, 0, "batch"), 40 * SEC);
    cr_assert_eq(run_end("fgm", NULL, 0, "batch"), 30 * SEC);
    /* Services are never predicted: FGM then allocates by request. */
    cr_assert_eq(run_end("fgm", NULL, 0, "service"), 40 * SEC);
}

Test(fgm, history_survives_a_restart)
{
    char path[256];
    snprintf(path, sizeof(path), "/tmp/hrm-fgm-test-%d.hist", (int)getpid());
    remove(path);
    char item[300];
    snprintf(item, sizeof(item), "history=%s", path);
    const char *items[] = {item};
    cr_assert_eq(run_end("fgm", items, 1, "batch"), 30 * SEC);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "fini saved the history");
    fclose(f);
    /* The second run predicts from its first task: 8 at once, 2 waves. */
    cr_assert_eq(run_end("fgm", items, 1, "batch"), 20 * SEC);
    remove(path);
}

Test(fgm, parameters_are_checked)
{
    struct hrm_error err = {{0}};
    /* Every refusal names the policy and the key. */
    struct {
        const char *items[2], *why;
    } bad[] = {{{"th_fg=0.1", "th_cg=0.01"}, "'th_fg'"},
               {{"max_compression=0.9"}, "'max_compression'"},
               {{"min_obs=0"}, "'min_obs'"},
               {{"qos_stretch=0.5"}, "'qos_stretch'"},
               {{"weight=0"}, "'weight'"},
               {{"weight=1.5"}, "'weight'"},
               {{"compressed_factor=0"}, "'compressed_factor'"},
               {{"max_stages=9"}, "'max_stages'"},
               {{"conf_idle=2"}, "'conf_idle'"},
               {{"idle=-0.1"}, "'idle'"},
               {{"window=0"}, "'window'"},
               {{"p=abc"}, "'p'"},
               {{"history="}, "'history'"},
               {{"history=/nonexistent-dir/x"}, "/nonexistent-dir/x"},
               {{"bogus=1"}, "unknown parameter"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct hrm_params p = {.items = bad[i].items, .count = bad[i].items[1] ? 2 : 1};
        memset(&err, 0, sizeof(err));
        struct hrm_policy *pol = hrm_policy_new("fgm", &p, 1, &err);
        cr_assert_null(pol, "%s accepted", bad[i].items[0]);
        cr_assert(strstr(err.text, "policy 'fgm'") != NULL, "%s", err.text);
        cr_assert(strstr(err.text, bad[i].why) != NULL, "%s", err.text);
    }
    /* A history that does not exist yet is an empty one, and is written at
     * once, so a path that cannot be written was refused above. */
    char path[128], item[160];
    snprintf(path, sizeof(path), "/tmp/hrm-fgm-params-%d.hist", (int)getpid());
    remove(path);
    snprintf(item, sizeof(item), "history=%s", path);
    const char *ok[] = {item, "th_sa=0.5", "window=10"};
    struct hrm_params p = {.items = ok, .count = 3};
    struct hrm_policy *pol = hrm_policy_new("fgm", &p, 1, &err);
    cr_assert_not_null(pol, "%s", err.text);
    cr_assert_eq(access(path, R_OK), 0, "the history file exists from the start");
    hrm_policy_free(pol);
    remove(path);
}

/* A corrupt or foreign history is refused with a message naming the file and
 * the key, and is left as it was for the user to look at. */
Test(fgm, a_damaged_history_is_refused_and_kept)
{
    char path[128], item[160];
    snprintf(path, sizeof(path), "/tmp/hrm-fgm-bad-%d.hist", (int)getpid());
    snprintf(item, sizeof(item), "history=%s", path);
    const char *texts[] = {"not a history\n", "hrm-estimates 1\n0000abcd 3 1 1 oops\n",
                           "hrm-estimates 7\n"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        FILE *f = fopen(path, "w");
        fputs(texts[i], f);
        fclose(f);
        const char *items[] = {item};
        struct hrm_params p = {.items = items, .count = 1};
        struct hrm_error err = {{0}};
        cr_assert_null(hrm_policy_new("fgm", &p, 1, &err), "case %zu accepted", i);
        cr_assert(strstr(err.text, "parameter 'history'") && strstr(err.text, path), "%s",
                  err.text);
        char back[64] = {0};
        f = fopen(path, "r");
        cr_assert_not_null(f);
        size_t n = fread(back, 1, sizeof(back) - 1, f);
        fclose(f);
        cr_assert_eq(n, strlen(texts[i]));
        cr_assert_str_eq(back, texts[i], "the refused file is not overwritten");
    }
    remove(path);
}

/* Saves a history saying that wl's tasks (all of task 0's key) run 10 s at
 * 1 core and mem bytes, to a file named after tag; path gets the file and
 * item the "history=" parameter (128 and 160 bytes). */
static void history_of(const struct hrm_workload *wl, int64_t mem, const char *tag, char *path,
                       char *item)
{
    struct hrm_est *e = hrm_est_new(NULL, NULL);
    struct hrm_est_key k = hrm_est_key_of(wl, 0);
    struct hrm_est_obs o = {.nstages = 1, .stage = {{10 * SEC, 1000, mem}}};
    cr_assert_eq(hrm_est_observe(e, &k, &o), 0);
    snprintf(path, 128, "/tmp/hrm-fgm-%s-%d.hist", tag, (int)getpid());
    cr_assert_eq(hrm_est_save(e, path, NULL), 0);
    hrm_est_free(e);
    snprintf(item, 160, "history=%s", path);
}

/* A history learned on bigger machines predicts more memory than the node
 * has: the task is then matched by its request instead of never.  Here it
 * says 1000 GiB; each completed run moves it by the weight 0.3 towards the
 * 1.5 GiB really used, e_n = 1.5 + 998.5 * 0.7^n GiB, still 15.3 GiB (over
 * the node's 16 GiB with 10 % headroom) after the 12 runs of three waves:
 * all four waves go by request, as under DRF. */
Test(fgm, a_prediction_larger_than_the_node_falls_back_to_the_request)
{
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    overasked(&c, &wl, "batch");
    char path[128], item[160];
    history_of(wl, 1000 * GIB, "big", path, item);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    const char *items[] = {item};
    int64_t end = run_end("fgm", items, 1, "batch");
    cr_assert_eq(end, 40 * SEC, "%lld", (long long)end);
    remove(path);
}

/* Two nodes; one (chosen by the seed) carries a permanent foreign load of 6
 * of its 8 cores.  A job arriving at 2 s (after the nodes' first reports) of
 * 4 tasks of 2 cores for 10 s: DRF's first fit puts them on node 0, which for
 * some seeds is the loaded one, where they share 2 free cores with the load;
 * FGM sees the load and always uses the free node. */
static int64_t cloud_end(const char *policy, uint64_t seed)
{
    struct hrm_error err = {{0}};
    struct hrm_cluster *c = fx_cluster(1, 2, 8, 16 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 2 * SEC);
    fx_stage(wl, "s", NULL, 0);
    for (int i = 0; i < 4; i++) {
        struct hrm_task_desc d = {.duration_us = 10 * SEC};
        d.req.v[HRM_DIM_CPU] = 2000;
        d.req.v[HRM_DIM_MEM] = GIB;
        cr_assert_geq(hrm_workload_add_task(wl, &d, &err), 0);
    }
    struct hrm_execution x = {.fluid = true,
                              .contention = 0.05,
                              .usage_interval_us = SEC,
                              .background = {.nodes = 0.5,
                                             .cpu_min = 6000,
                                             .cpu_max = 6000,
                                             .busy_us = 1000000 * SEC,
                                             .idle_us = 1}};
    struct hrm_sim_config cfg = {.seed = seed, .execution = &x};
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    cr_assert_eq(hrm_sim_run(c, wl, policy, NULL, &cfg, &rec, &err), 0, "%s", err.text);
    int64_t end = rec.jobs[0].end_us;
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    return end;
}

Test(fgm, avoids_a_node_with_foreign_load)
{
    int slowed = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        cr_assert_eq(cloud_end("fgm", seed), 12 * SEC, "seed %d", (int)seed);
        slowed += cloud_end("drf", seed) > 12 * SEC;
    }
    cr_assert_gt(slowed, 0, "DRF meets the load for some seed");
}

/*
 * Memory is incompressible: a task FGM placed on a memory estimate that is
 * too low fails when it grows past what the node has, and is retried (by its
 * request) until it completes; the run counts the failures.  One node of
 * 8 cores / 8 GiB; 8 tasks asking 1 core / 4 GiB that use 1 GiB for 2 s,
 * then 3 GiB for 8 s; the history (from some other input) says 1 GiB
 * throughout, so FGM starts 7 at once (7 x 1.1 GiB) where only 2 can grow.
 */
Test(fgm, a_task_short_of_memory_fails_and_is_retried)
{
    struct hrm_error err = {{0}};
    struct hrm_cluster *c = fx_cluster(1, 1, 8, 8 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "map", NULL, 0);
    for (int i = 0; i < 8; i++) {
        struct hrm_task_desc d = {.duration_us = 10 * SEC};
        d.req.v[HRM_DIM_CPU] = 1000;
        d.req.v[HRM_DIM_MEM] = 4 * GIB;
        cr_assert_geq(hrm_workload_add_task(wl, &d, &err), 0);
        struct hrm_res a = {{1000, GIB, 0, 0, 0, 0}}, b = {{1000, 3 * GIB, 0, 0, 0, 0}};
        cr_assert_geq(hrm_workload_add_phase(wl, 2 * SEC, &a, &err), 0);
        cr_assert_geq(hrm_workload_add_phase(wl, 8 * SEC, &b, &err), 0);
    }
    char path[128], item[160];
    history_of(wl, GIB, "mem", path, item);
    const char *items[] = {item};
    struct hrm_params params = {.items = items, .count = 1};
    struct hrm_execution x = {.fluid = true, .contention = 0.05, .usage_interval_us = SEC};
    struct hrm_sim_config cfg = {.seed = 1, .execution = &x};
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    cr_assert_eq(hrm_sim_run(c, wl, "fgm", &params, &cfg, &rec, &err), 0, "%s", err.text);
    cr_assert_geq(rec.task_failures, 5, "7 started, only 2 can grow: %lld failed",
                  (long long)rec.task_failures);
    cr_assert_eq(rec.tasks_done, 8, "every failed task was retried to completion");
    cr_assert(!rec.jobs[0].failed);
    /* At most 2 tasks hold 3 GiB at a time: 4 rounds of 10 s at the least. */
    cr_assert_geq(rec.jobs[0].end_us, 40 * SEC);
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    remove(path);
}

/* Alg. 1 orders the pending tasks by DRF: two users' jobs of 8 one-core
 * tasks of 10 s on one 8-core node share it 4 and 4 (both end at 20 s),
 * where FIFO runs the first job's 8 first (10 s, then 20 s). */
static void two_users_end(const char *policy, int64_t *a, int64_t *b)
{
    struct hrm_error err = {{0}};
    struct hrm_cluster *c = fx_cluster(1, 1, 8, 16 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    for (int j = 0; j < 2; j++) {
        fx_job(wl, j ? "b" : "a", j ? "ub" : "ua", 0);
        fx_stage(wl, "s", NULL, 0);
        fx_tasks(wl, 8, 1000, GIB, 0, 0, 10 * SEC);
    }
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    cr_assert_eq(hrm_sim_run(c, wl, policy, NULL, NULL, &rec, &err), 0, "%s", err.text);
    *a = rec.jobs[0].end_us;
    *b = rec.jobs[1].end_us;
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(fgm, pending_tasks_in_drf_order)
{
    int64_t a, b;
    two_users_end("fifo", &a, &b);
    cr_assert(a == 10 * SEC && b == 20 * SEC, "fifo: %lld %lld", (long long)a, (long long)b);
    two_users_end("fgm", &a, &b);
    cr_assert(a == 20 * SEC && b == 20 * SEC, "fgm: %lld %lld", (long long)a, (long long)b);
}
