/* P0 policy `hrm` and its baselines in the simulator; stacked starts in the cluster state. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/frag.h"
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

/* ---- trace replay fixes: nothing that fits a node is left pending ---- */

/* A one-node cluster text: 16 cores, 2 GPUs of 10 GiB, `bind` cores per GPU. */
#define NODE16(name, bind)                                                                         \
    "{\"name\": \"" name "\", \"cores\": 16, \"mem\": \"64G\", \"gpus\": 2, \"gpu_mem\": \"10G\","  \
    " \"cores_per_gpu\": " #bind "}"

/* A CPU task larger than every unit of its node (CPU unit 6 cores, GPU
 * units 5 each) but not than the node: it takes the CPU unit's cores and
 * borrows the rest from the lending GPU units, at once.  (It used to be
 * admitted, simulated to start at once, and then never started: no single
 * unit could hold it.) */
Test(hrm, cpu_task_larger_than_any_unit_borrows_across_units)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [" NODE16("n", 5) "], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"s\", \"kind\": \"stream\","
        " \"task\": {\"cpu\": \"13500m\", \"duration\": \"5s\"}},"
        " {\"name\": \"b\", \"submit\": \"1s\", \"task\": {\"cpu\": 2, \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 0), 0);
    cr_assert_eq(first_start(text, "hrm", NULL, 1), 1 * SEC); /* 2.5 cores are still free */
    cr_assert_eq(first_start(text, "hrm", "flex=0", 0), 0);
}

/* A configuration that would leave a task no unit anywhere (rigid binding
 * with a GPU task wanting more cores than its unit binds; no lending with a
 * CPU task larger than any CPU unit; a stream task that fits only batch
 * nodes) places it by the permissive rules rather than never.  A task that
 * fits no node at all is refused with the spec, as under every policy. */
Test(hrm, configuration_never_strands_a_task_that_fits_a_node)
{
    const char *gpu_task =
        "{\"cluster\": {\"nodes\": [" NODE16("n", 4) "], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"g\", \"task\": {\"cpu\": 9, \"gpus\": 1,"
        " \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(gpu_task, "hrm", "flex=0", 0), 0);
    cr_assert_eq(first_start(gpu_task, "hrm-static", NULL, 0), 0);
    const char *cpu_task =
        "{\"cluster\": {\"nodes\": [" NODE16("n", 4) "], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"c\", \"task\": {\"cpu\": 12,"
        " \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(cpu_task, "hrm", "lend=0", 0), 0);
    /* hrm-static: node a (8 cores) serves stream jobs only, b (16) batch only */
    const char *sides =
        "{\"cluster\": {\"nodes\": [{\"name\": \"a\", \"cores\": 8, \"mem\": \"8G\"},"
        " {\"name\": \"b\", \"cores\": 16, \"mem\": \"8G\"}], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"s\", \"kind\": \"stream\","
        " \"task\": {\"cpu\": 12, \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(sides, "hrm-static", "partition=0.5", 0), 0);
    const char *too_big =
        "{\"cluster\": {\"nodes\": [" NODE16("n", 4) "], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"c\", \"task\": {\"cpu\": 17,"
        " \"duration\": \"5s\"}}]}}";
    struct hrm_error err = {{0}};
    struct hrm_spec *spec = hrm_spec_load_string(too_big, "t.json", 1, &err);
    cr_assert_null(spec);
    cr_assert(strstr(err.text, "fits no node") != NULL, "%s", err.text);
}

/* A task on several GPUs holds every one of them: a one-GPU task arriving
 * next must not queue at one of them (as if idle; it used to, and waited
 * there for the whole run of the first) while another node has a free GPU. */
Test(hrm, multi_gpu_task_holds_all_its_gpus)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [" NODE16("n0", 4) ", " NODE16("n1", 4) "],"
        " \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"a\", \"task\": {\"cpu\": 4, \"gpus\": 2,"
        " \"gpu_mem\": \"20G\", \"duration\": \"100s\"}},"
        " {\"name\": \"b\", \"submit\": \"1s\", \"task\": {\"cpu\": 2, \"gpus\": 1,"
        " \"gpu_mem\": \"10G\", \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 1), 1 * SEC);
    cr_assert_eq(first_start(text, "gpu-exclusive", NULL, 1), 1 * SEC);
    cr_assert_eq(first_start(text, "hrm", "flex=0", 1), 1 * SEC);
}

/* Flexible binding takes the cores a GPU task needs from anywhere on the
 * node: GPU unit 1's spec binding is a floor that yields while its GPU is
 * idle.  The CPU unit (8 cores) is full for 100 s; 8 cores are free, bound
 * 4 + 4 to the GPUs; an 8-core GPU task starts at once. */
Test(hrm, flexible_binding_takes_idle_gpu_units_cores)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [" NODE16("n", 4) "], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"c\", \"task\": {\"cpu\": 8,"
        " \"duration\": \"100s\"}},"
        " {\"name\": \"g\", \"submit\": \"1s\", \"task\": {\"cpu\": 8, \"gpus\": 1,"
        " \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 1), 1 * SEC);
}

/* Among GPUs that start a task at once, the tightest node: the one-GPU task
 * b joins the node whose other GPU is taken (by a, which only n1's memory
 * holds) and leaves n0's two GPUs whole for c, which needs both.  First in
 * node order, b would take n0's GPU 0 and c would wait for it. */
Test(hrm, zero_wait_ties_go_to_the_tightest_node)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"n0\", \"cores\": 16, \"mem\": \"8G\","
        " \"gpus\": 2, \"gpu_mem\": \"10G\"}, {\"name\": \"n1\", \"cores\": 16, \"mem\": \"64G\","
        " \"gpus\": 2, \"gpu_mem\": \"10G\"}], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"a\", \"task\": {\"cpu\": 1, \"mem\": \"32G\","
        " \"gpus\": 1, \"duration\": \"100s\"}},"
        " {\"name\": \"b\", \"submit\": \"1s\", \"task\": {\"cpu\": 1, \"mem\": \"1G\", \"gpus\": 1,"
        " \"duration\": \"50s\"}},"
        " {\"name\": \"c\", \"submit\": \"2s\", \"task\": {\"cpu\": 1, \"mem\": \"1G\", \"gpus\": 2,"
        " \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 2), 2 * SEC);
}

/* Among units that start a CPU task at once, the node where its cores strand
 * the least GPU capacity.  c (12 cores, 100 s) fits both nodes: on g it would
 * leave 4 of 16 cores beside an idle GPU (0.75 of the GPU stranded), on the
 * CPU-only node nothing is stranded.  So c goes to node cpu, and the GPU task
 * (8 cores) starts on g at once.  (By the shortest queue alone c took g,
 * first in node order, and the GPU task waited 99 s for its cores.) */
Test(hrm, cpu_task_spares_the_cores_of_an_idle_gpu)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"g\", \"cores\": 16, \"mem\": \"64G\","
        " \"gpus\": 1, \"gpu_mem\": \"10G\"}, {\"name\": \"cpu\", \"cores\": 16,"
        " \"mem\": \"64G\"}], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"c\", \"task\": {\"cpu\": 12, \"mem\": \"1G\","
        " \"duration\": \"100s\"}},"
        " {\"name\": \"g\", \"submit\": \"1s\", \"task\": {\"cpu\": 8, \"mem\": \"1G\","
        " \"gpus\": 1, \"duration\": \"5s\"}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 1), 1 * SEC);
    cr_assert_eq(first_start(text, "hrm", NULL, 0), 0);
}

/* hrm's placement in the fragmentation experiment (hrm trace frag) follows
 * the same rule: no pod waits there, so the tightest GPU wins (it used to
 * be the GPU with the fewest pods, which spread fractional pods over idle
 * GPUs), and a whole-GPU pod goes to the node left with the least free share. */
Test(hrm, frag_placement_fills_the_tightest_gpu)
{
    struct hrm_frag_node nodes[3];
    memset(nodes, 0, sizeof(nodes));
    for (int i = 0; i < 3; i++) {
        nodes[i] = (struct hrm_frag_node){.cpu_cap = 8000, .cpu_left = 8000, .mem_cap = 1024,
                                          .mem_left = 1024, .gpus = 2, .model = -1};
        nodes[i].gpu_left[0] = nodes[i].gpu_left[1] = HRM_FRAG_MILLI;
    }
    nodes[1].gpu_left[1] = 500; /* one pod of half a GPU */
    nodes[1].gpu_tasks[1] = 1;
    nodes[2].gpu_left[0] = 0; /* a whole-GPU pod */
    nodes[2].gpu_tasks[0] = 1;
    struct hrm_frag_cluster c = {.nodes = nodes, .nnodes = 3};
    struct hrm_frag_pod frac = {.cpu = 1000, .mem = 1, .num_gpu = 1, .gpu_milli = 300};
    struct hrm_frag_choice ch;
    cr_assert_eq(hrm_frag_choose(&c, HRM_FRAG_STACK, &frac, -1, &ch), 0);
    cr_assert_eq(ch.node, 1);
    cr_assert_eq(ch.gpus, 2u);
    struct hrm_frag_pod whole = {.cpu = 1000, .mem = 1, .num_gpu = 1, .gpu_milli = 1000};
    cr_assert_eq(hrm_frag_choose(&c, HRM_FRAG_STACK, &whole, -1, &ch), 0);
    cr_assert_eq(ch.node, 2);
    cr_assert_eq(ch.gpus, 2u);
}

/* simulaterun for a GPU unit that cannot start the task now: the node's
 * other tasks hold cores too.  n0's GPU is idle but its node has 4 free
 * cores (c holds the CPU unit for 100 s); n1's GPU runs g with 10 cores
 * free.  The stream task s (6 cores, GPU phases) stacks on n1 at once.  (The
 * wait used to be simulated over the GPU unit's own tasks alone: 0 on n0,
 * which then won on its shorter queue, and s waited 99 s.) */
Test(hrm, stream_wait_counts_the_nodes_other_tasks)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"n\", \"count\": 2, \"cores\": 16, \"mem\": \"64G\","
        " \"gpus\": 1, \"gpu_mem\": \"10G\", \"cores_per_gpu\": 4}], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [{\"name\": \"c\", \"task\": {\"cpu\": 12, \"duration\": \"100s\"}},"
        " {\"name\": \"g\", \"task\": {\"cpu\": 6, \"gpus\": 1, \"gpu_mem\": \"2G\","
        " \"gpu_phases\": {\"cpu\": \"60ms\", \"gpu\": \"40ms\", \"count\": 1000}}},"
        " {\"name\": \"s\", \"kind\": \"stream\", \"submit\": \"1s\", \"task\": {\"cpu\": 6,"
        " \"gpus\": 1, \"gpu_mem\": \"2G\","
        " \"gpu_phases\": {\"cpu\": \"60ms\", \"gpu\": \"40ms\", \"count\": 50}}}]}}";
    cr_assert_eq(first_start(text, "hrm", NULL, 1), 0);
    cr_assert_eq(first_start(text, "hrm", NULL, 2), 1 * SEC);
}
