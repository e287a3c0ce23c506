/* SPEC P0 policy `hrm` and its baselines in the simulator; stacked starts in the cluster state. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/sim.h"
#include "hrm/spec.h"
#include "hrm/state.h"

#define MS 1000ll
#define SEC 1000000ll

/* Two GPU tasks on one GPU: the state lets the second stack, keeps the GPU
 * busy until the last leaves, and counts the node's free GPUs right. */
Test(hrm, state_stacked_start_and_release)
{
    struct hrm_cluster *c = fx_cluster(1, 1, 8, 16 * GIB, 1, 10 * GIB, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 2, 2000, GIB, 1, 4 * GIB, SEC);
    struct hrm_state *s = hrm_state_new(c, wl);
    cr_assert_eq(hrm_state_submit_job(s, 0, 0), 2);
    cr_assert_eq(hrm_state_start(s, 0, 0, 1u, 0), 0);
    cr_assert_eq(hrm_state_start(s, 1, 0, 1u, 0), -HRM_ENOFIT); /* exclusive start refuses */
    cr_assert_eq(hrm_state_start_stacked(s, 1, 0, HRM_GPUS_ANY, 0), -HRM_ENOFIT);
    cr_assert_eq(hrm_state_start_stacked(s, 1, 0, 1u, 0), 0);
    cr_assert_eq(s->nodes[0].free.v[HRM_DIM_GPU], 0);
    cr_assert_eq(s->nodes[0].free.v[HRM_DIM_GPU_MEM], 2 * GIB);
    cr_assert_eq(s->nodes[0].free.v[HRM_DIM_CPU], 4000);
    cr_assert_eq(hrm_state_stop(s, 0, HRM_OUTCOME_DONE, SEC), 0);
    cr_assert_eq(s->nodes[0].gpu_busy, 1u); /* task 1 still runs kernels there */
    cr_assert_eq(s->nodes[0].free.v[HRM_DIM_GPU], 0);
    cr_assert_eq(hrm_state_stop(s, 1, HRM_OUTCOME_DONE, SEC), 0);
    cr_assert_eq(s->nodes[0].gpu_busy, 0u);
    cr_assert_eq(s->nodes[0].free.v[HRM_DIM_GPU], 1);
    cr_assert_eq(s->nodes[0].free.v[HRM_DIM_GPU_MEM], 10 * GIB);
    cr_assert_eq(s->free_total.v[HRM_DIM_GPU], 1);
    hrm_state_free(s);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* Loads a spec text and simulates it under policy (param: one "key=value"
 * for it, or NULL) into rec; the caller reads rec, then calls finish. */
static struct hrm_spec *simulate(const char *text, const char *policy, const char *param,
                                 struct hrm_run_record *rec)
{
    struct hrm_error err = {{0}};
    struct hrm_spec *spec = hrm_spec_load_string(text, "t.json", 1, &err);
    cr_assert_not_null(spec, "%s", err.text);
    hrm_run_record_init(rec, spec->cluster, spec->wl);
    struct hrm_sim_config cfg = {.seed = 1};
    struct hrm_params params = {&param, param != NULL};
    cr_assert_eq(hrm_sim_run(spec->cluster, spec->wl, policy, &params, &cfg, rec, &err), 0, "%s",
                 err.text);
    cr_assert_eq(rec->tasks_done, spec->wl->ntasks);
    return spec;
}

static void finish(struct hrm_spec *spec, struct hrm_run_record *rec)
{
    hrm_run_record_fini(rec);
    hrm_spec_free(spec);
}

static int64_t first_start(const char *text, const char *policy, const char *param, int32_t job)
{
    struct hrm_run_record rec;
    struct hrm_spec *spec = simulate(text, policy, param, &rec);
    int64_t t = rec.jobs[job].first_start_us;
    finish(spec, &rec);
    return t;
}

static int64_t job_end(const char *text, const char *policy, int32_t job, double *gpu_util)
{
    struct hrm_run_record rec;
    struct hrm_spec *spec = simulate(text, policy, NULL, &rec);
    int64_t t = rec.jobs[job].end_us;
    if (gpu_util)
        *gpu_util = rec.gpu_area / rec.gpu_capacity_area;
    finish(spec, &rec);
    return t;
}

static const char *two_yolo =
    "{\"cluster\": {\"nodes\": [{\"name\": \"g\", \"cores\": 16, \"numa\": 2, \"mem\": \"32G\","
    " \"gpus\": 1, \"gpu_mem\": \"10G\", \"cores_per_gpu\": 4}], \"network\": {\"latency\": 0}},"
    " \"workload\": {\"jobs\": [{\"name\": \"a\", \"tasks\": 2, \"task\": {\"cpu\": 2,"
    " \"mem\": \"4G\", \"gpus\": 1, \"gpu_mem\": \"%s\","
    " \"gpu_phases\": {\"cpu\": \"60ms\", \"gpu\": \"40ms\", \"count\": 10}}}]}}";

static int64_t makespan(const char *gpu_mem, const char *policy, double *gpu_util)
{
    char text[1024];
    snprintf(text, sizeof(text), two_yolo, gpu_mem);
    return job_end(text, policy, 0, gpu_util);
}

/* The GPU phase model through the simulator: hrm stacks the two tasks (the
 * hand-worked 1.4 s of test_gpuphase), gpu-exclusive runs them one after the
 * other (2 x 1 s); stacking raises GPU utilisation from 40 % to 80/140. */
Test(hrm, stacking_in_the_simulator)
{
    double u_stack, u_excl;
    cr_assert_eq(makespan("2G", "hrm", &u_stack), 1400 * MS);
    cr_assert_eq(makespan("2G", "gpu-exclusive", &u_excl), 2000 * MS);
    cr_assert_float_eq(u_excl, 0.4, 1e-9);
    cr_assert_float_eq(u_stack, 80.0 / 140.0, 1e-9);
    /* 6 GiB each: the second does not fit the 10 GiB GPU, so it waits. */
    cr_assert_eq(makespan("6G", "hrm", NULL), 2000 * MS);
}

Test(hrm, parameters_are_checked)
{
    struct hrm_error err = {{0}};
    const char *bad[] = {"stack=-1", "lend=2", "partition=1", "colour=red"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct hrm_params p = {&bad[i], 1};
        struct hrm_policy *pol = hrm_policy_new("hrm", &p, 1, &err);
        cr_expect_null(pol, "%s accepted", bad[i]);
        hrm_policy_free(pol);
    }
    const char *good[] = {"stack=3", "lend=0", "partition=0.5", "fair=0"};
    struct hrm_params p = {good, 4};
    struct hrm_policy *pol = hrm_policy_new("hrm-static", &p, 1, &err);
    cr_assert_not_null(pol, "%s", err.text);
    hrm_policy_free(pol);
}

/* CPU tasks and the binding: 4 nodes' worth of work on one node of 16
 * cores whose GPU binds 8.  Rigid binding (lend=0) leaves the CPU tasks
 * the 8 CPU-unit cores: two waves of 8 one-core 1 s tasks; lending GPU
 * cores lets all 16 run at once. */
Test(hrm, lending_gpu_cores_to_cpu_tasks)
{
    /* one GPU: the GPU unit binds 16 / (1 + 1) = 8 cores by default */
    struct hrm_cluster *c = fx_cluster(1, 1, 16, 64 * GIB, 1, 10 * GIB, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 16, 1000, GIB, 0, 0, SEC);
    const char *rigid[] = {"lend=0"};
    struct hrm_params p_rigid = {rigid, 1};
    int64_t ends[2];
    const struct hrm_params *params[2] = {NULL, &p_rigid};
    for (int i = 0; i < 2; i++) {
        struct hrm_run_record rec;
        hrm_run_record_init(&rec, c, wl);
        struct hrm_error err = {{0}};
        struct hrm_sim_config cfg = {.seed = 1};
        cr_assert_eq(hrm_sim_run(c, wl, "hrm", params[i], &cfg, &rec, &err), 0, "%s", err.text);
        ends[i] = rec.jobs[0].end_us;
        hrm_run_record_fini(&rec);
    }
    cr_assert_eq(ends[0], SEC);
    cr_assert_eq(ends[1], 2 * SEC);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* Stream jobs have their own queue, served first: with the node full of
 * batch work queued, a stream operator arriving later starts before the
 * queued batch tasks; stream-unaware, it waits behind them. */
Test(hrm, stream_queue_goes_first)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"n\", \"cores\": 4, \"mem\": \"32G\"}],"
        " \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"b\", \"tasks\": 12, \"task\": {\"cpu\": 2,"
        " \"duration\": \"10s\"}}, {\"name\": \"s\", \"kind\": \"stream\", \"submit\": \"1s\","
        " \"task\": {\"cpu\": 2, \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 1), 10 * SEC); /* at the first batch end */
    /* behind the 10 queued batch tasks: 5 more waves */
    cr_assert_eq(first_start(text, "hrm-unaware", NULL, 1), 60 * SEC);
}

/* Same spec and seed, same run, field by field. */
Test(hrm, deterministic)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/examples/p0-cpu-sharing.json", HRM_SOURCE_DIR);
    struct hrm_error err = {{0}};
    int64_t end[2];
    double area[2];
    for (int i = 0; i < 2; i++) {
        struct hrm_spec *spec = hrm_spec_load(path, 7, &err);
        cr_assert_not_null(spec, "%s", err.text);
        struct hrm_run_record rec;
        hrm_run_record_init(&rec, spec->cluster, spec->wl);
        struct hrm_sim_config cfg = {.seed = 7};
        cr_assert_eq(hrm_sim_run(spec->cluster, spec->wl, "hrm", NULL, &cfg, &rec, &err), 0, "%s",
                     err.text);
        end[i] = rec.last_end_us;
        area[i] = rec.cpu_area;
        hrm_run_record_fini(&rec);
        hrm_spec_free(spec);
    }
    cr_assert_eq(end[0], end[1]);
    cr_assert_eq(area[0], area[1]);
}

/* Placement rules.  n1 runs one 2-core task for 100 s (an exact fit),
 * n2 two 1-core tasks for 10 s.  A 2-core stream task arriving at 1 s:
 *   batch rule, shortest queue: n1 (1 task) -> starts at 100 s;
 *   stream rule, simulaterun:   n1 waits 99 s, n2 9 s -> n2, starts at 10 s. */
Test(hrm, stream_takes_the_smallest_simulated_wait)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"n\", \"count\": 2, \"cores\": 2, \"mem\": "
        "\"8G\"}],"
        " \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"b1\", \"task\": {\"cpu\": 2, \"duration\": "
        "\"100s\"}},"
        " {\"name\": \"b2\", \"tasks\": 2, \"task\": {\"cpu\": 1, \"duration\": \"10s\"}},"
        " {\"name\": \"s\", \"kind\": \"stream\", \"submit\": \"1s\","
        " \"task\": {\"cpu\": 2, \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 2), 10 * SEC);
    cr_assert_eq(first_start(text, "hrm-unaware", NULL, 2), 100 * SEC);
}

/* A node with more cores than a unit can name still schedules (units by
 * core counts, no core lists). */
Test(hrm, very_large_nodes)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"big\", \"cores\": 512, \"mem\": \"1T\","
        " \"gpus\": 2, \"gpu_mem\": \"80G\"}], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"a\", \"tasks\": 4, \"task\": {\"cpu\": 100,"
        " \"duration\": \"1s\"}}, {\"name\": \"g\", \"tasks\": 3, \"task\": {\"gpus\": 1,"
        " \"gpu_mem\": \"20G\", \"duration\": \"1s\"}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 1), 0);
}

/* A GPU task without GPU phases is taken as all kernel: it never shares its
 * GPU, so two of them run one after the other even though memory allows. */
Test(hrm, tasks_without_phases_get_their_gpu_alone)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"g\", \"cores\": 16, \"mem\": \"32G\","
        " \"gpus\": 1, \"gpu_mem\": \"10G\"}], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"a\", \"tasks\": 2, \"task\": {\"gpus\": 1,"
        " \"gpu_mem\": \"2G\", \"duration\": \"1s\"}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 0), 0);
    cr_assert_eq(job_end(text, "hrm", 0, NULL), 2 * SEC);
}

/* Fair share when GPUs are scarce: 2 GPUs, jobs A and B of 4 GPU tasks each,
 * A listed first.  A_j = min(floor(2/2), 4) = 1: each job's first task is
 * placed first, so B starts at once.  Without it A's four tasks are placed
 * first: two start, two queue one per GPU (shortest queue), and B's first
 * task queues behind them, starting after two waves (20 s). */
Test(hrm, fair_share_orders_gpu_tasks)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"g\", \"cores\": 16, \"mem\": \"32G\","
        " \"gpus\": 2, \"gpu_mem\": \"10G\"}], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"a\", \"tasks\": 4, \"task\": {\"gpus\": 1,"
        " \"duration\": \"10s\"}}, {\"name\": \"b\", \"tasks\": 4, \"task\": {\"gpus\": 1,"
        " \"duration\": \"10s\"}}]}}";
    cr_assert_eq(first_start(text, "gpu-exclusive", NULL, 1), 0);
    cr_assert_eq(first_start(text, "gpu-exclusive", "fair=0", 1), 20 * SEC);
}
