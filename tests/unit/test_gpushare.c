/* Fractional GPUs: the stacking admission with shares and GPU memory (hrm_ru_fits_share), the
 * simulaterun wait with shares, the hrm policy stacking fractions, the job format's gpus,
 * gpu_mem and GPU variables. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/jobdesc.h"
#include "hrm/ru.h"
#include "hrm/sim.h"
#include "hrm/spec.h"
#include "hrm/waitsim.h"

#define SEC 1000000ll

/* A one-GPU unit of 16 GiB, stacking limited by memory and shares only. */
static struct hrm_ru gpu_unit(void)
{
    return (struct hrm_ru){
        .node = 0, .gpu = 0, .type = HRM_RU_GPU_LEND, .ncores = 4, .gmem = 16 * GIB};
}

static struct hrm_res gpu_req(int64_t gpus, int64_t gmem)
{
    struct hrm_res r = {{0}};
    r.v[HRM_DIM_CPU] = 1000;
    r.v[HRM_DIM_GPU] = gpus;
    r.v[HRM_DIM_GPU_MEM] = gmem;
    return r;
}

/* Two halves fill a GPU; nothing that gives a share fits beside them. */
Test(gpushare, halves_stack)
{
    struct hrm_ru ru = gpu_unit();
    struct hrm_res r = gpu_req(1, 0);
    cr_assert(hrm_ru_fits_share(&ru, &r, 500));
    hrm_ru_add_share(&ru, &r, 500);
    cr_assert(hrm_ru_fits_share(&ru, &r, 500));
    hrm_ru_add_share(&ru, &r, 500);
    cr_assert_eq(ru.share_used, 1000);
    cr_assert_not(hrm_ru_fits_share(&ru, &r, 500));
    cr_assert_not(hrm_ru_fits_share(&ru, &r, 1)); /* 1001 thousandths */
    hrm_ru_remove_share(&ru, &r, 500);
    cr_assert_eq(ru.share_used, 500);
    cr_assert(hrm_ru_fits_share(&ru, &r, 500));
}

/* 0.5 + 0.6 = 1.1 GPUs: the second waits; 0.5 + 0.5 would not. */
Test(gpushare, half_and_six_tenths_do_not)
{
    struct hrm_ru ru = gpu_unit();
    struct hrm_res r = gpu_req(1, 0);
    hrm_ru_add_share(&ru, &r, 500);
    cr_assert_not(hrm_ru_fits_share(&ru, &r, 600));
    cr_assert(hrm_ru_fits_share(&ru, &r, 400));
}

/* GPU memory binds before the shares do: 0.3 + 0.3 asking 10 GiB each on 16 GiB. */
Test(gpushare, memory_bounds_stacking)
{
    struct hrm_ru ru = gpu_unit();
    struct hrm_res r = gpu_req(1, 10 * GIB);
    cr_assert(hrm_ru_fits_share(&ru, &r, 300));
    hrm_ru_add_share(&ru, &r, 300);
    cr_assert_eq(ru.gmem_used, 10 * GIB);
    cr_assert_not(hrm_ru_fits_share(&ru, &r, 300)); /* 20 GiB of 16 */
    struct hrm_res six = gpu_req(1, 6 * GIB);
    cr_assert(hrm_ru_fits_share(&ru, &six, 300)); /* exactly 16 GiB */
    struct hrm_res big = gpu_req(1, 17 * GIB);
    struct hrm_ru empty = gpu_unit();
    cr_assert_not(hrm_ru_fits_share(&empty, &big, 100)); /* more than the GPU has */
}

/* A whole GPU (1000) shares it with no task that gives a share, either way round. */
Test(gpushare, whole_gpu_is_exclusive)
{
    struct hrm_ru ru = gpu_unit();
    struct hrm_res r = gpu_req(1, 0);
    cr_assert(hrm_ru_fits_share(&ru, &r, 1000));
    hrm_ru_add_share(&ru, &r, 1000);
    cr_assert_not(hrm_ru_fits_share(&ru, &r, 1000));
    cr_assert_not(hrm_ru_fits_share(&ru, &r, 100));
    hrm_ru_remove_share(&ru, &r, 1000);
    hrm_ru_add_share(&ru, &r, 100);
    cr_assert_not(hrm_ru_fits_share(&ru, &r, 1000));
    /* Two GPUs of 1000 each: each of its units carries 1000. */
    struct hrm_res two = gpu_req(2, 8 * GIB);
    struct hrm_ru a = gpu_unit();
    hrm_ru_add_share(&a, &two, 1000);
    cr_assert_eq(a.share_used, 1000);
    cr_assert_eq(a.gmem_used, 4 * GIB);
}

/* Tasks without a share (the simulator's specs) keep P0's rule: GPU memory and the stack
 * limit alone, even beside tasks that gave one, and hrm_ru_fits is the share-0 case. */
Test(gpushare, no_share_is_the_memory_rule)
{
    struct hrm_ru ru = gpu_unit();
    struct hrm_res four = gpu_req(1, 4 * GIB);
    for (int i = 0; i < 4; i++) {
        cr_assert(hrm_ru_fits(&ru, &four));
        cr_assert(hrm_ru_fits_share(&ru, &four, 0));
        hrm_ru_add(&ru, &four);
    }
    cr_assert_eq(ru.share_used, 0);
    cr_assert_not(hrm_ru_fits(&ru, &four)); /* 20 GiB of 16 */
    struct hrm_ru w = gpu_unit();
    hrm_ru_add_share(&w, &four, 1000);
    cr_assert(hrm_ru_fits(&w, &four)); /* memory alone: 8 GiB of 16 */
    w.max_stack = 1;
    cr_assert_not(hrm_ru_fits(&w, &four));
    /* A CPU task is not a GPU task, whatever share is passed. */
    struct hrm_res cpu = {{0}};
    cpu.v[HRM_DIM_CPU] = 1000;
    struct hrm_ru c = gpu_unit();
    hrm_ru_add_share(&c, &cpu, 700);
    cr_assert_eq(c.share_used, 0);
}

/* simulaterun counts shares: two halves run (10 s and 30 s left); a third half waits for the
 * first to end (10 s), a 0.6 too; without shares (0) memory alone would start it at once. */
Test(gpushare, waitsim_counts_shares)
{
    struct hrm_wait_row run[] = {{.task = 0,
                                  .status = HRM_WAIT_RUNNING,
                                  .time_us = 10 * SEC,
                                  .vcore = 1000,
                                  .gpu = 1,
                                  .milli = 500},
                                 {.task = 1,
                                  .status = HRM_WAIT_RUNNING,
                                  .time_us = 30 * SEC,
                                  .vcore = 1000,
                                  .gpu = 1,
                                  .milli = 500}};
    struct hrm_wait_cap cap = {.vcore = 4000, .gmem = 16 * GIB};
    struct hrm_wait_row me = {.task = 2,
                              .status = HRM_WAIT_QUEUED,
                              .time_us = SEC,
                              .vcore = 1000,
                              .gpu = 1,
                              .milli = 500};
    int64_t wait = -1;
    cr_assert_eq(hrm_waitsim_run(&cap, run, 2, &me, &wait), 0);
    cr_assert_eq(wait, 10 * SEC);
    me.milli = 600;
    cr_assert_eq(hrm_waitsim_run(&cap, run, 2, &me, &wait), 0);
    cr_assert_eq(wait, 30 * SEC); /* 0.5 + 0.6 > 1: it needs the GPU to itself */
    me.milli = 0;
    cr_assert_eq(hrm_waitsim_run(&cap, run, 2, &me, &wait), 0);
    cr_assert_eq(wait, 0);
}

/* A workload refuses a share that names no single GPU. */
Test(gpushare, workload_checks_the_share)
{
    struct hrm_workload *wl = hrm_workload_new();
    struct hrm_error err;
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    struct hrm_task_desc d = {.duration_us = SEC, .gpu_milli = 500};
    d.req.v[HRM_DIM_CPU] = 1000;
    d.req.v[HRM_DIM_GPU] = 2;
    cr_assert_lt(hrm_workload_add_task(wl, &d, &err), 0);
    cr_assert(strstr(err.text, "exactly one GPU"), "%s", err.text);
    d.req.v[HRM_DIM_GPU] = 0;
    cr_assert_lt(hrm_workload_add_task(wl, &d, &err), 0);
    d.gpu_milli = 1001;
    d.req.v[HRM_DIM_GPU] = 1;
    cr_assert_lt(hrm_workload_add_task(wl, &d, &err), 0);
    d.gpu_milli = 1000;
    d.req.v[HRM_DIM_GPU] = 2;
    cr_assert_geq(hrm_workload_add_task(wl, &d, &err), 0, "%s", err.text);
    d.gpu_milli = 250;
    d.req.v[HRM_DIM_GPU] = 1;
    int t = hrm_workload_add_task(wl, &d, &err);
    cr_assert_geq(t, 0, "%s", err.text);
    cr_assert_eq(wl->tasks[t].gpu_milli, 250);
    hrm_workload_free(wl);
}

/* One node with one 16 GiB GPU; job a then, 1 ms later, job b, each one task of 1 s asking
 * "gpus" GA / GB with GPU memory MA / MB. */
static const char *pair_spec =
    "{\"cluster\": {\"nodes\": [{\"name\": \"g\", \"cores\": 8, \"mem\": \"32G\", \"gpus\": 1,"
    " \"gpu_mem\": \"16G\"}], \"network\": {\"latency\": 0}},"
    " \"workload\": {\"jobs\": ["
    "{\"name\": \"a\", \"submit\": \"0s\", \"tasks\": 1, \"task\": {\"cpu\": 1, \"mem\": \"1G\","
    " \"gpus\": %s, \"gpu_mem\": \"%s\", \"duration\": \"1s\"}},"
    "{\"name\": \"b\", \"submit\": \"1ms\", \"tasks\": 1, \"task\": {\"cpu\": 1, \"mem\": \"1G\","
    " \"gpus\": %s, \"gpu_mem\": \"%s\", \"duration\": \"1s\"}}]}}";

/* When job b's task starts under policy, in microseconds. */
static int64_t b_start(const char *policy, const char *ga, const char *ma, const char *gb,
                       const char *mb)
{
    char text[2048];
    snprintf(text, sizeof(text), pair_spec, ga, ma, gb, mb);
    struct hrm_error err = {{0}};
    struct hrm_spec *spec = hrm_spec_load_string(text, "t.json", 1, &err);
    cr_assert_not_null(spec, "%s", err.text);
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, spec->cluster, spec->wl);
    struct hrm_sim_config cfg = {.seed = 1};
    struct hrm_params params = {NULL, 0};
    cr_assert_eq(hrm_sim_run(spec->cluster, spec->wl, policy, &params, &cfg, &rec, &err), 0, "%s",
                 err.text);
    cr_assert_eq(rec.tasks_done, 2);
    int64_t t = rec.jobs[1].first_start_us;
    hrm_run_record_fini(&rec);
    hrm_spec_free(spec);
    return t;
}

/* The hrm policy stacks fractions while shares and memory fit; whole GPUs stay exclusive;
 * drf, which does not stack, gives each fraction the whole GPU. */
Test(gpushare, hrm_policy_stacks_fractions)
{
    int64_t at_once = 1000, after_a = SEC;
    cr_assert_eq(b_start("hrm", "0.5", "4G", "0.5", "4G"), at_once);
    cr_assert_eq(b_start("hrm", "0.5", "4G", "0.6", "4G"), after_a);
    cr_assert_eq(b_start("hrm", "0.3", "10G", "0.3", "10G"), after_a); /* 20 GiB of 16 */
    cr_assert_eq(b_start("hrm", "1", "4G", "0.5", "4G"), after_a);
    cr_assert_eq(b_start("hrm", "0.5", "4G", "1", "4G"), after_a);
    cr_assert_eq(b_start("drf", "0.5", "4G", "0.5", "4G"), after_a);
    cr_assert_eq(b_start("fifo", "0.25", "1G", "0.25", "1G"), after_a);
}

/* A spec's fractional gpus reach the task as one GPU and its share; a whole count none. */
Test(gpushare, spec_fraction_is_a_share)
{
    char text[2048];
    snprintf(text, sizeof(text), pair_spec, "0.25", "2G", "1", "2G");
    struct hrm_error err = {{0}};
    struct hrm_spec *spec = hrm_spec_load_string(text, "t.json", 1, &err);
    cr_assert_not_null(spec, "%s", err.text);
    cr_assert_eq(spec->wl->tasks[0].req.v[HRM_DIM_GPU], 1);
    cr_assert_eq(spec->wl->tasks[0].gpu_milli, 250);
    cr_assert_eq(spec->wl->tasks[1].gpu_milli, 0);
    hrm_spec_free(spec);
    snprintf(text, sizeof(text), pair_spec, "1.5", "2G", "1", "2G");
    cr_assert_null(hrm_spec_load_string(text, "t.json", 1, &err));
    cr_assert(strstr(err.text, "gpus"), "%s", err.text);
}

/* ---- the job format ---- */

static json_t *group_of(const char *text, struct hrm_error *err)
{
    json_error_t jerr;
    json_t *desc = json_loads(text, 0, &jerr);
    cr_assert_not_null(desc, "%s", jerr.text);
    json_t *norm = hrm_jobdesc_normalise(desc, "/", err);
    json_decref(desc);
    if (!norm)
        return NULL;
    json_t *g = json_incref(json_array_get(json_object_get(norm, "tasks"), 0));
    json_decref(norm);
    return g;
}

static void expect_group(const char *task, int64_t gpus, int64_t share, int64_t gmem)
{
    char text[512];
    struct hrm_error err = {{0}};
    snprintf(text, sizeof(text), "{\"tasks\": [{\"cmd\": \"true\"%s}]}", task);
    json_t *g = group_of(text, &err);
    cr_assert_not_null(g, "%s: %s", task, err.text);
    cr_assert_eq(json_integer_value(json_object_get(g, "gpus")), gpus, "%s", task);
    cr_assert_eq(json_integer_value(json_object_get(g, "gpu_share")), share, "%s", task);
    cr_assert_eq(json_integer_value(json_object_get(g, "gpu_mem")), gmem, "%s", task);
    json_decref(g);
}

static void expect_refused(const char *task, const char *needle)
{
    char text[512];
    struct hrm_error err = {{0}};
    snprintf(text, sizeof(text), "{\"tasks\": [{\"cmd\": \"true\"%s}]}", task);
    json_t *g = group_of(text, &err);
    cr_assert_null(g, "%s was accepted", task);
    cr_assert(strstr(err.text, needle), "%s: '%s' does not name %s", task, err.text, needle);
}

Test(gpushare, job_format_normalises_gpus)
{
    expect_group("", 0, 0, 0);
    expect_group(", \"gpus\": 0", 0, 0, 0);
    expect_group(", \"gpus\": 0.5", 1, 500, 0);
    expect_group(", \"gpus\": 0.25, \"gpu_mem\": \"4G\"", 1, 250, 4 * GIB);
    expect_group(", \"gpus\": 2, \"gpu_mem\": 1024", 2, 1000, 1024);
    expect_group(", \"gpus\": 2.0", 2, 1000, 0);
    expect_group(", \"gpus\": 1", 1, 1000, 0);
}

Test(gpushare, job_format_refuses_bad_gpus)
{
    expect_refused(", \"gpus\": 1.5", "tasks[0].gpus");
    expect_refused(", \"gpus\": -0.5", "tasks[0].gpus");
    expect_refused(", \"gpus\": 0.0001", "tasks[0].gpus");
    expect_refused(", \"gpus\": 33", "tasks[0].gpus");
    expect_refused(", \"gpus\": \"half\"", "tasks[0].gpus");
    expect_refused(", \"gpu_mem\": \"4G\"", "tasks[0].gpu_mem");
    expect_refused(", \"gpus\": 0.5, \"gpu_mem\": \"lots\"", "tasks[0].gpu_mem");
    expect_refused(", \"gpus\": 0.5, \"env\": {\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE\": \"100\"}",
                   "tasks[0].env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    expect_refused(", \"env\": {\"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT\": \"0=1G\"}",
                   "tasks[0].env.CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
    expect_refused(", \"gpus\": 1, \"env\": {\"CUDA_VISIBLE_DEVICES\": \"3\"}",
                   "tasks[0].env.CUDA_VISIBLE_DEVICES");
    expect_refused(", \"env\": {\"HRM_GPU_SHARE\": \"1\"}", "tasks[0].env.HRM_GPU_SHARE");
}
