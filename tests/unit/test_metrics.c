/* Unit tests of the metric formulas, the ideal times and the run summary, on hand-worked cases. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "hrm/cluster.h"
#include "hrm/metrics.h"
#include "hrm/workload.h"

#define EPS 1e-9
#define SEC 1000000LL
#define GB 1000000000LL
#define MB 1000000LL

/* ---- percentiles, mean, Jain, sigma ---- */

Test(metrics, percentile_r7_hand_worked)
{
    double v[] = {1, 2, 3, 4};
    /* h = (n-1) p; p50: h = 1.5 -> 2 + 0.5 (3-2) = 2.5 */
    cr_assert_float_eq(hrm_percentile(v, 4, 50), 2.5, EPS);
    /* p95: h = 2.85 -> 3 + 0.85 (4-3) = 3.85 */
    cr_assert_float_eq(hrm_percentile(v, 4, 95), 3.85, EPS);
    cr_assert_float_eq(hrm_percentile(v, 4, 0), 1.0, EPS);
    cr_assert_float_eq(hrm_percentile(v, 4, 100), 4.0, EPS);
    /* p25: h = 0.75 -> 1.75 */
    cr_assert_float_eq(hrm_percentile(v, 4, 25), 1.75, EPS);
}

Test(metrics, percentile_single_element)
{
    double v[] = {7.5};
    cr_assert_float_eq(hrm_percentile(v, 1, 0), 7.5, EPS);
    cr_assert_float_eq(hrm_percentile(v, 1, 50), 7.5, EPS);
    cr_assert_float_eq(hrm_percentile(v, 1, 99), 7.5, EPS);
}

Test(metrics, percentile_unsorted_input_is_sorted_in_place)
{
    double v[] = {40, 10, 30, 20, 50};
    /* sorted {10,20,30,40,50}; p90: h = 3.6 -> 40 + 0.6 * 10 = 46 */
    cr_assert_float_eq(hrm_percentile(v, 5, 90), 46.0, EPS);
    for (int i = 0; i < 5; i++)
        cr_assert_float_eq(v[i], 10.0 * (i + 1), EPS);
    cr_assert_float_eq(hrm_percentile(v, 5, 50), 30.0, EPS);
}

Test(metrics, percentile_empty_and_out_of_range)
{
    cr_assert_float_eq(hrm_percentile(NULL, 0, 50), 0.0, EPS);
    double v[] = {3, 1, 2};
    cr_assert_float_eq(hrm_percentile(v, 3, -5), 1.0, EPS);
    cr_assert_float_eq(hrm_percentile(v, 3, 250), 3.0, EPS);
}

Test(metrics, mean)
{
    double v[] = {1, 2, 3, 4};
    cr_assert_float_eq(hrm_mean(v, 4), 2.5, EPS);
    cr_assert_float_eq(hrm_mean(NULL, 0), 0.0, EPS);
}

Test(metrics, jain_hand_worked)
{
    double equal[] = {1, 1, 1, 1};
    cr_assert_float_eq(hrm_jain(equal, 4), 1.0, EPS);
    double one[] = {1, 0, 0, 0};
    cr_assert_float_eq(hrm_jain(one, 4), 0.25, EPS);
    /* (1+2+3)^2 / (3 (1+4+9)) = 36/42 */
    double ramp[] = {1, 2, 3};
    cr_assert_float_eq(hrm_jain(ramp, 3), 36.0 / 42.0, EPS);
    double zero[] = {0, 0};
    cr_assert_float_eq(hrm_jain(zero, 2), 1.0, EPS);
    cr_assert_float_eq(hrm_jain(NULL, 0), 1.0, EPS);
}

Test(metrics, jain_over_allocation_shares_is_the_mean_of_the_samples)
{
    struct hrm_run_record r;
    memset(&r, 0, sizeof(r));
    double unequal[] = {1.0, 0.5}; /* 1.5^2 / (2 * 1.25) = 0.9 */
    double equal[] = {0.5, 0.5};
    bool both_want[] = {true, true};
    hrm_run_record_shares(&r, unequal, both_want, 2);
    hrm_run_record_shares(&r, equal, NULL, 2); /* NULL: every user wants more */
    hrm_run_record_shares(&r, NULL, NULL, 0);  /* nobody had work: not a sample */
    cr_assert_eq(r.share_samples, 2);
    cr_assert_float_eq(r.share_jain_sum / (double)r.share_samples, 0.95, EPS);
    /* A user that asks no more and holds less than the others is not
     * deprived: {0.25 asking no more, 0.75 wanting more} is fair. */
    double small[] = {0.25, 0.75};
    bool second_wants[] = {false, true};
    hrm_run_record_shares(&r, small, second_wants, 2);
    cr_assert_eq(r.share_samples, 3);
    cr_assert_float_eq(r.share_jain_sum / (double)r.share_samples, (0.9 + 1 + 1) / 3, EPS);
}

/* Shares against their max-min fair division (Jain et al.'s x_i = T_i/O_i):
 * users that ask no more are entitled to what they hold, up to the level
 * that the users wanting more share equally. */
Test(metrics, jain_maxmin_hand_worked)
{
    /* Everyone wants more: plain Jain. */
    double a[] = {1.0, 0.5};
    bool all[] = {true, true, true};
    cr_assert_float_eq(hrm_jain_maxmin(a, all, 2), 0.9, EPS);
    cr_assert_float_eq(hrm_jain_maxmin(a, NULL, 2), 0.9, EPS);
    /* 0.1 asks no more; total 1, level (1 - 0.1)/2 = 0.45: all at their
     * fair share, J = 1 (plain Jain would give 1 / (3 * 0.415) = 0.803). */
    double b[] = {0.1, 0.45, 0.45};
    bool first_sat[] = {false, true, true};
    cr_assert_float_eq(hrm_jain_maxmin(b, first_sat, 3), 1.0, EPS);
    cr_assert_float_eq(hrm_jain(b, 3), 1.0 / (3 * 0.415), EPS);
    /* Between stages or just arrived with nothing ready: 0 is all it asks. */
    double c[] = {0.0, 0.5, 0.5};
    cr_assert_float_eq(hrm_jain_maxmin(c, first_sat, 3), 1.0, EPS);
    /* Level 0.45 again; x = {1, 0.6/0.45, 0.3/0.45} = {1, 4/3, 2/3}:
     * J = 3^2 / (3 * 29/9) = 27/29. */
    double d[] = {0.1, 0.6, 0.3};
    cr_assert_float_eq(hrm_jain_maxmin(d, first_sat, 3), 27.0 / 29.0, EPS);
    /* A satisfied user above the level still counts against fairness: it
     * holds 0.6 while the other waits with 0; level 0.3, x = {2, 0}. */
    double e[] = {0.6, 0.0};
    bool second[] = {false, true};
    cr_assert_float_eq(hrm_jain_maxmin(e, second, 2), 0.5, EPS);
    /* Nobody wants more, nothing held, no users: 1. */
    bool none[] = {false, false};
    double f[] = {0.2, 0.7};
    cr_assert_float_eq(hrm_jain_maxmin(f, none, 2), 1.0, EPS);
    double zero[] = {0.0, 0.0};
    cr_assert_float_eq(hrm_jain_maxmin(zero, all, 2), 1.0, EPS);
    cr_assert_float_eq(hrm_jain_maxmin(NULL, NULL, 0), 1.0, EPS);
}

Test(metrics, fairness_sigma_hand_worked)
{
    /* S = (1 + 0.5)/2 = 0.75; sigma = sqrt((0.25^2 + 0.25^2)/2) = 0.25 */
    double s[] = {1, 0.5};
    double mean = -1;
    cr_assert_float_eq(hrm_fairness_sigma(s, 2, &mean), 0.25, EPS);
    cr_assert_float_eq(mean, 0.75, EPS);
    /* m in the denominator, not m - 1: {1, 0.8, 0.6}: S 0.8, sigma sqrt(0.08/3) */
    double t[] = {1, 0.8, 0.6};
    cr_assert_float_eq(hrm_fairness_sigma(t, 3, &mean), sqrt(0.08 / 3), EPS);
    cr_assert_float_eq(mean, 0.8, EPS);
    cr_assert_float_eq(hrm_fairness_sigma(NULL, 0, &mean), 0.0, EPS);
    cr_assert_float_eq(mean, 0.0, EPS);
    cr_assert_float_eq(hrm_fairness_sigma(s, 2, NULL), 0.25, EPS);
}

/* ---- a small cluster and workloads built by hand ---- */

/*
 * D = 100 MB/s.  One rack; nodes:
 *   a: 8 cores, 2 GPUs    b: 4 cores, no GPU    c: 6 cores, 2 GPUs
 * so 4 GPUs, and 3-core tasks fit 2 + 1 + 2 = 5 at once.
 */
static struct hrm_cluster *small_cluster(void)
{
    struct hrm_netcfg net = {.disk_bw = 100e6, .rack_bw = 125e6, .core_bw = 125e6};
    struct hrm_cluster *c = hrm_cluster_new(&net);
    cr_assert_eq(hrm_cluster_add_rack(c, "r0", NULL), 0);
    struct hrm_node_desc a = {
        .name = "a", .rack = 0, .cores = 8, .mem = 32 * GB, .gpus = 2, .gpu_mem = 10 * GB};
    struct hrm_node_desc b = {.name = "b", .rack = 0, .cores = 4, .mem = 16 * GB};
    struct hrm_node_desc cc = {
        .name = "c", .rack = 0, .cores = 6, .mem = 16 * GB, .gpus = 2, .gpu_mem = 10 * GB};
    cr_assert_eq(hrm_cluster_add_node(c, &a, NULL), 0);
    cr_assert_eq(hrm_cluster_add_node(c, &b, NULL), 1);
    cr_assert_eq(hrm_cluster_add_node(c, &cc, NULL), 2);
    return c;
}

static int add_job(struct hrm_workload *wl, const char *name, int64_t submit_us)
{
    struct hrm_job_desc d = {
        .name = name, .kind = HRM_JOB_BATCH, .user = 0, .queue = 0, .submit_us = submit_us};
    int j = hrm_workload_add_job(wl, &d, NULL);
    cr_assert_geq(j, 0);
    return j;
}

static int add_task(struct hrm_workload *wl, int64_t cpu, int64_t gpu, int64_t duration_us)
{
    struct hrm_task_desc t = {.duration_us = duration_us};
    t.req.v[HRM_DIM_CPU] = cpu;
    t.req.v[HRM_DIM_GPU] = gpu;
    int id = hrm_workload_add_task(wl, &t, NULL);
    cr_assert_geq(id, 0);
    return id;
}

static void add_block(struct hrm_workload *wl, int64_t size, int32_t node)
{
    cr_assert_geq(hrm_workload_add_block(wl, size, &node, 1, NULL), 0);
}

static struct hrm_workload *new_workload(void)
{
    struct hrm_workload *wl = hrm_workload_new();
    cr_assert_eq(hrm_workload_user(wl, "alice"), 0);
    return wl;
}

/*
 * Job "dag": stages map -> reduce, plus "side" with no dependency.
 *   map:    t0 10 s, no input             -> 10 s
 *           t1 20 s + 1 GB / 100 MB/s     -> 30 s      stage: max = 30 s
 *   side:   t2 35 s                       -> 35 s      (parallel branch)
 *   reduce: t3 5 s + (100 MB + 400 MB)/D  -> 10 s      after map: 30 + 10 = 40 s
 * ideal = max(40, 35) = 40 s.
 */
Test(metrics, ideal_critical_path_with_input)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = new_workload();
    add_job(wl, "dag", 0);
    int map = hrm_workload_add_stage(wl, "map", NULL, 0, NULL);
    cr_assert_geq(map, 0);
    add_task(wl, 1000, 0, 10 * SEC);
    add_task(wl, 1000, 0, 20 * SEC);
    add_block(wl, 1 * GB, 1);
    cr_assert_geq(hrm_workload_add_stage(wl, "side", NULL, 0, NULL), 0);
    add_task(wl, 1000, 0, 35 * SEC);
    int32_t deps[] = {map};
    cr_assert_geq(hrm_workload_add_stage(wl, "reduce", deps, 1, NULL), 0);
    add_task(wl, 1000, 0, 5 * SEC);
    add_block(wl, 100 * MB, 0);
    add_block(wl, 400 * MB, 2);
    cr_assert_eq(hrm_job_ideal_us(wl, c, 0), 40 * SEC);

    /* A second job whose side branch is the longest: 35 s alone. */
    add_job(wl, "side-long", 0);
    cr_assert_geq(hrm_workload_add_stage(wl, "m", NULL, 0, NULL), 0);
    add_task(wl, 1000, 0, 1 * SEC);
    cr_assert_geq(hrm_workload_add_stage(wl, "s", NULL, 0, NULL), 0);
    add_task(wl, 1000, 0, 35 * SEC);
    cr_assert_eq(hrm_job_ideal_us(wl, c, 1), 35 * SEC);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* D is the fastest node disk: a node at 200 MB/s halves the read time of 1 GB. */
Test(metrics, ideal_uses_fastest_disk)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_node_desc fast = {.name = "fast", .rack = 0, .cores = 2, .disk_bw = 200e6};
    cr_assert_eq(hrm_cluster_add_node(c, &fast, NULL), 3);
    struct hrm_workload *wl = new_workload();
    add_job(wl, "j", 0);
    cr_assert_geq(hrm_workload_add_stage(wl, "s", NULL, 0, NULL), 0);
    add_task(wl, 1000, 0, 1 * SEC);
    add_block(wl, 1 * GB, 0);
    cr_assert_eq(hrm_job_ideal_us(wl, c, 0), 6 * SEC); /* 1 s + 1 GB / 200 MB/s */
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/*
 * Job "lpt": stage gpu (1 GPU each) 7, 5, 4, 3, 3 s; stage cpu (3 cores
 * each, after gpu) 4, 4, 4 s.  The cluster has 4 GPUs and 5 slots of 3 cores.
 *   m = 2: GPU slots 4/2 = 2.  LPT: 7->A, 5->B, 4->B (9), 3->A (10), 3->B (12):
 *          12 s (the optimum is 11; LPT is what we define).  CPU slots
 *          floor(5/2) = 2: 4+4 | 4 -> 8 s.  Total 20 s.
 *   m = 1: 4 GPU slots: 7 | 5 | 4 | 3+3 -> 7 s; 5 CPU slots: 4 s.  11 s.
 *   m = 5: 0 GPU slots -> 1: 22 s; 1 CPU slot: 12 s.  34 s.
 * hrm_job_ideal_us: 7 + 4 = 11 s.
 */
Test(metrics, share_ideal_lpt)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = new_workload();
    add_job(wl, "lpt", 0);
    int g = hrm_workload_add_stage(wl, "gpu", NULL, 0, NULL);
    cr_assert_geq(g, 0);
    int64_t gt[] = {3, 7, 4, 5, 3}; /* not sorted: LPT sorts */
    for (int i = 0; i < 5; i++)
        add_task(wl, 1000, 1, gt[i] * SEC);
    int32_t deps[] = {g};
    cr_assert_geq(hrm_workload_add_stage(wl, "cpu", deps, 1, NULL), 0);
    for (int i = 0; i < 3; i++)
        add_task(wl, 3000, 0, 4 * SEC);
    cr_assert_eq(hrm_job_share_ideal_us(wl, c, 0, 2), 20 * SEC);
    cr_assert_eq(hrm_job_share_ideal_us(wl, c, 0, 1), 11 * SEC);
    cr_assert_eq(hrm_job_share_ideal_us(wl, c, 0, 5), 34 * SEC);
    cr_assert_eq(hrm_job_share_ideal_us(wl, c, 0, 0), 11 * SEC); /* m < 1 is 1 */
    cr_assert_eq(hrm_job_ideal_us(wl, c, 0), 11 * SEC);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* A task asking 2 GPUs takes two: a (2 GPUs) and c (2 GPUs) give 2 slots. */
Test(metrics, share_ideal_multi_gpu_tasks)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = new_workload();
    add_job(wl, "g2", 0);
    cr_assert_geq(hrm_workload_add_stage(wl, "s", NULL, 0, NULL), 0);
    for (int i = 0; i < 4; i++)
        add_task(wl, 1000, 2, 10 * SEC);
    cr_assert_eq(hrm_job_share_ideal_us(wl, c, 0, 1), 20 * SEC); /* 2 slots, 4 tasks */
    cr_assert_eq(hrm_job_share_ideal_us(wl, c, 0, 2), 40 * SEC); /* 1 slot */
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* ---- series and records ---- */

Test(metrics, series_and_waits_grow)
{
    struct hrm_series s = {0};
    for (int i = 0; i < 1000; i++)
        hrm_series_push(&s, i * SEC, i / 1000.0, 0.5, i, 1000 - i);
    cr_assert_eq(s.n, 1000);
    cr_assert_eq(s.t_us[999], 999 * SEC);
    cr_assert_float_eq(s.cpu[500], 0.5, EPS);
    cr_assert_eq(s.running[10], 10);
    cr_assert_eq(s.ready[10], 990);
    hrm_series_fini(&s);
    cr_assert_eq(s.n, 0);
    cr_assert_null(s.t_us);

    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = new_workload();
    add_job(wl, "j", 7 * SEC);
    cr_assert_geq(hrm_workload_add_stage(wl, "s", NULL, 0, NULL), 0);
    add_task(wl, 1000, 0, SEC);
    struct hrm_run_record r;
    hrm_run_record_init(&r, c, wl);
    cr_assert_eq(r.jobs[0].submit_us, 7 * SEC);
    cr_assert_eq(r.jobs[0].first_start_us, -1);
    cr_assert_eq(r.jobs[0].end_us, -1);
    cr_assert_eq(r.first_start_us, -1);
    for (int i = 0; i < 100; i++)
        hrm_run_record_wait(&r, i);
    cr_assert_eq(r.nwaits, 100);
    cr_assert_float_eq(r.task_waits_us[99], 99.0, EPS);
    hrm_run_record_fini(&r);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/*
 * Four single-task jobs on the small cluster, m = 1 (so t_id = the task time):
 *   j0 10 s: submit 0, end 10   response 10, ideal 10, s = 1,   slowdown 1
 *   j1 20 s: submit 0, end 40   response 40, ideal 20, s = 0.5, slowdown 2
 *   j2 failed; j3 never finished.
 * responses {10, 40}: mean 25, p50 25, p95 10 + 0.95 * 30 = 38.5, p99 39.7
 * ideal mean 15, delay mean (0 + 20)/2 = 10; slowdown p50 1.5, p95 1.95
 * S 0.75, sigma 0.25, Jain 1.5^2 / (2 * 1.25) = 0.9
 * waits {0, 1, 3} s: mean 4/3, p95 1 + 0.9 * 2 = 2.8
 * cpu: allocated 1000 m for 10 s + 1000 m for 30 s over 4000 m x 40 s = 0.25
 */
static struct hrm_workload *four_jobs(void)
{
    struct hrm_workload *wl = new_workload();
    int64_t dur[] = {10, 20, 5, 5};
    const char *names[] = {"j0", "j1", "j2", "j3"};
    for (int j = 0; j < 4; j++) {
        add_job(wl, names[j], 0);
        cr_assert_geq(hrm_workload_add_stage(wl, "s", NULL, 0, NULL), 0);
        add_task(wl, 1000, 0, dur[j] * SEC);
    }
    return wl;
}

static void fill_record(struct hrm_run_record *r)
{
    r->jobs[0] = (struct hrm_job_record){.submit_us = 0, .first_start_us = 0, .end_us = 10 * SEC};
    r->jobs[1] =
        (struct hrm_job_record){.submit_us = 0, .first_start_us = 10 * SEC, .end_us = 40 * SEC};
    r->jobs[2] = (struct hrm_job_record){
        .submit_us = 0, .first_start_us = 0, .end_us = 5 * SEC, .failed = true};
    hrm_run_record_wait(r, 0);
    hrm_run_record_wait(r, 1 * SEC);
    hrm_run_record_wait(r, 3 * SEC);
    r->cpu_area = 1000.0 * 10e6 + 1000.0 * 30e6;
    r->cpu_capacity_area = 4000.0 * 40e6;
    r->bytes_local = 3;
    r->bytes_rack = 2;
    r->bytes_cross = 1;
    r->tasks_done = 2;
    r->task_failures = 4;
    r->preemptions = 5;
    r->tasks_lost = 6;
    r->events = 77;
}

Test(metrics, summarize_hand_filled)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = four_jobs();
    struct hrm_run_record r;
    hrm_run_record_init(&r, c, wl);
    fill_record(&r);
    r.first_start_us = 0;
    r.last_end_us = 40 * SEC;
    struct hrm_summary s;
    hrm_summarize(&r, "fifo", &s);
    cr_assert_str_eq(s.policy, "fifo");
    cr_assert_eq(s.jobs, 4);
    cr_assert_eq(s.jobs_done, 2);
    cr_assert_eq(s.jobs_failed, 1);
    cr_assert_float_eq(s.makespan_s, 40.0, EPS);
    cr_assert_float_eq(s.response_mean_s, 25.0, EPS);
    cr_assert_float_eq(s.response_p50_s, 25.0, EPS);
    cr_assert_float_eq(s.response_p95_s, 38.5, EPS);
    cr_assert_float_eq(s.response_p99_s, 39.7, EPS);
    cr_assert_float_eq(s.ideal_mean_s, 15.0, EPS);
    cr_assert_float_eq(s.delay_mean_s, 10.0, EPS);
    cr_assert_float_eq(s.slowdown_p50, 1.5, EPS);
    cr_assert_float_eq(s.slowdown_p95, 1.95, EPS);
    cr_assert_float_eq(s.wait_mean_s, 4.0 / 3.0, EPS);
    cr_assert_float_eq(s.wait_p95_s, 2.8, EPS);
    cr_assert_float_eq(s.fairness_mean, 0.75, EPS);
    cr_assert_float_eq(s.fairness_sigma, 0.25, EPS);
    cr_assert_float_eq(s.jain_s, 0.9, EPS);
    cr_assert_float_eq(s.cpu_util, 0.25, EPS);
    cr_assert_float_eq(s.gpu_util, 0.0, EPS);
    cr_assert_eq(s.bytes_local, 3);
    cr_assert_eq(s.bytes_rack, 2);
    cr_assert_eq(s.bytes_cross, 1);
    cr_assert_eq(s.tasks_done, 2);
    cr_assert_eq(s.task_failures, 4);
    cr_assert_eq(s.preemptions, 5);
    cr_assert_eq(s.tasks_lost, 6);
    cr_assert_eq(s.events, 77);
    /* The record is left as it was: waits are not sorted in place. */
    cr_assert_float_eq(r.task_waits_us[1], 1e6, EPS);
    cr_assert_float_eq(r.task_waits_us[2], 3e6, EPS);
    hrm_run_record_fini(&r);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* m comes from hrm_workload_fair_m: max_parallel when fair_m is 0, else fair_m. */
Test(metrics, summarize_uses_fair_m)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = new_workload();
    add_job(wl, "j", 0);
    cr_assert_geq(hrm_workload_add_stage(wl, "s", NULL, 0, NULL), 0);
    for (int i = 0; i < 4; i++)
        add_task(wl, 1000, 1, 10 * SEC); /* 4 GPU tasks, 4 GPUs */
    wl->max_parallel = 2;                /* m = 2: 2 slots -> t_id = 20 s */
    struct hrm_run_record r;
    hrm_run_record_init(&r, c, wl);
    r.jobs[0] = (struct hrm_job_record){.submit_us = 0, .first_start_us = 0, .end_us = 40 * SEC};
    struct hrm_summary s;
    hrm_summarize(&r, "gs", &s);
    cr_assert_float_eq(s.fairness_mean, 0.5, EPS);
    cr_assert_float_eq(s.ideal_mean_s, 10.0, EPS);
    wl->fair_m = 4; /* 1 slot: t_id 40 s */
    hrm_summarize(&r, "gs", &s);
    cr_assert_float_eq(s.fairness_mean, 1.0, EPS);
    hrm_run_record_fini(&r);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(metrics, summarize_derives_span_from_jobs)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = four_jobs();
    struct hrm_run_record r;
    hrm_run_record_init(&r, c, wl);
    fill_record(&r);
    r.jobs[0].first_start_us = 2 * SEC; /* run-level first/last left unset */
    struct hrm_summary s;
    hrm_summarize(&r, "x", &s);
    cr_assert_float_eq(s.makespan_s, 40.0 - 0.0, EPS); /* j2 started at 0 */
    r.jobs[2].first_start_us = -1;
    hrm_summarize(&r, "x", &s);
    cr_assert_float_eq(s.makespan_s, 38.0, EPS);
    hrm_run_record_fini(&r);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

static void assert_all_finite(const struct hrm_summary *s)
{
    const double v[] = {s->makespan_s,     s->response_mean_s,
                        s->response_p50_s, s->response_p95_s,
                        s->response_p99_s, s->ideal_mean_s,
                        s->delay_mean_s,   s->slowdown_p50,
                        s->slowdown_p95,   s->wait_mean_s,
                        s->wait_p95_s,     s->fairness_mean,
                        s->fairness_sigma, s->jain,
                        s->cpu_util,       s->gpu_util};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        cr_assert(isfinite(v[i]), "field %zu is not finite", i);
}

Test(metrics, summarize_nothing_finished_is_zero_not_nan)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = four_jobs();
    struct hrm_run_record r;
    hrm_run_record_init(&r, c, wl);
    struct hrm_summary s;
    hrm_summarize(&r, "idle", &s);
    assert_all_finite(&s);
    cr_assert_eq(s.jobs, 4);
    cr_assert_eq(s.jobs_done, 0);
    cr_assert_float_eq(s.response_mean_s, 0.0, EPS);
    cr_assert_float_eq(s.makespan_s, 0.0, EPS);
    cr_assert_float_eq(s.jain, 1.0, EPS);
    hrm_run_record_fini(&r);
    hrm_workload_free(wl);

    /* No jobs at all. */
    wl = hrm_workload_new();
    hrm_run_record_init(&r, c, wl);
    hrm_summarize(&r, NULL, &s);
    assert_all_finite(&s);
    cr_assert_eq(s.jobs, 0);
    cr_assert_str_eq(s.policy, "");
    hrm_run_record_fini(&r);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(metrics, summarize_zero_ideal_has_no_slowdown)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = new_workload();
    add_job(wl, "empty", 0);
    cr_assert_geq(hrm_workload_add_stage(wl, "s", NULL, 0, NULL), 0);
    add_task(wl, 1000, 0, 0);
    struct hrm_run_record r;
    hrm_run_record_init(&r, c, wl);
    r.jobs[0] = (struct hrm_job_record){.submit_us = 0, .first_start_us = 0, .end_us = 0};
    struct hrm_summary s;
    hrm_summarize(&r, "z", &s);
    assert_all_finite(&s);
    cr_assert_eq(s.jobs_done, 1);
    cr_assert_float_eq(s.slowdown_p50, 0.0, EPS);
    cr_assert_float_eq(s.fairness_mean, 1.0, EPS);
    hrm_run_record_fini(&r);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(metrics, summarize_is_deterministic)
{
    struct hrm_cluster *c = small_cluster();
    struct hrm_workload *wl = four_jobs();
    struct hrm_run_record r;
    hrm_run_record_init(&r, c, wl);
    fill_record(&r);
    struct hrm_summary a, b;
    hrm_summarize(&r, "p", &a);
    hrm_summarize(&r, "p", &b);
    cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);
    hrm_run_record_fini(&r);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
