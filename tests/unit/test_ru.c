/* Resource units (P0): NUMA-aware core binding, stacking admission by GPU memory, fair share.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/ru.h"
#include "hrm/spec.h"

static struct hrm_topology two_socket(int gpu0_numa, int gpu1_numa)
{
    /* 2 x 8 cores: domain 0 holds cores 0-7, domain 1 cores 8-15. */
    struct hrm_topology t = {.cores = 16, .numa = 2, .gpus = 2};
    t.gpu_numa[0] = gpu0_numa;
    t.gpu_numa[1] = gpu1_numa;
    return t;
}

static const char *cpus(const struct hrm_ru *ru)
{
    static char buf[128];
    hrm_ru_format_cpus(ru, buf, sizeof(buf));
    return buf;
}

Test(ru, binds_each_gpu_to_cores_of_its_own_numa_domain)
{
    struct hrm_topology t = two_socket(0, 1);
    int32_t want[2] = {4, 4};
    struct hrm_ru ru[3];
    struct hrm_error err;
    cr_assert_eq(hrm_ru_bind(&t, 7, want, false, ru, &err), 0, "%s", err.text);
    cr_assert_str_eq(cpus(&ru[0]), "0-3");
    cr_assert_str_eq(cpus(&ru[1]), "8-11"); /* not 4-7: GPU 1 hangs off socket 1 */
    cr_assert_str_eq(cpus(&ru[2]), "4-7,12-15");
    cr_assert_eq(ru[0].type, HRM_RU_GPU);
    cr_assert_eq(ru[2].type, HRM_RU_CPU);
    cr_assert_eq(ru[2].gpu, -1);
    cr_assert_eq(ru[1].node, 7);
    cr_assert_eq(ru[0].ncores + ru[1].ncores + ru[2].ncores, 16);
    char g[8];
    hrm_ru_format_gpus(&ru[1], g, sizeof(g));
    cr_assert_str_eq(g, "1"); /* CUDA_VISIBLE_DEVICES */
    hrm_ru_format_gpus(&ru[2], g, sizeof(g));
    cr_assert_str_eq(g, "");
    for (int c = 0; c < 16; c++)
        cr_assert_eq(hrm_topology_core_numa(&t, c), c / 8);
}

Test(ru, spills_to_the_nearest_domain_when_its_own_is_full)
{
    /* Both GPUs on socket 0, 6 cores each: GPU 0 takes 0-5, GPU 1 the two
     * left on socket 0 (6-7) and then the lowest of socket 1 (8-11). */
    struct hrm_topology t = two_socket(0, 0);
    int32_t want[2] = {6, 6};
    struct hrm_ru ru[3];
    cr_assert_eq(hrm_ru_bind(&t, 0, want, true, ru, NULL), 0);
    cr_assert_str_eq(cpus(&ru[0]), "0-5");
    cr_assert_str_eq(cpus(&ru[1]), "6-11");
    cr_assert_str_eq(cpus(&ru[2]), "12-15");
    cr_assert_eq(ru[0].type, HRM_RU_GPU_LEND);
    cr_assert(hrm_ru_has_core(&ru[1], 8));
    cr_assert_not(hrm_ru_has_core(&ru[1], 12));
}

Test(ru, binding_is_flexible_and_refuses_more_than_the_node_has)
{
    struct hrm_topology t = two_socket(0, 1);
    struct hrm_ru ru[3];
    int32_t grown[2] = {7, 2}; /* GPU 0's tasks now need 7 cores */
    cr_assert_eq(hrm_ru_bind(&t, 0, grown, false, ru, NULL), 0);
    cr_assert_str_eq(cpus(&ru[0]), "0-6");
    cr_assert_str_eq(cpus(&ru[1]), "8-9");
    cr_assert_str_eq(cpus(&ru[2]), "7,10-15");
    int32_t too_many[2] = {9, 8};
    struct hrm_error err;
    cr_assert_eq(hrm_ru_bind(&t, 0, too_many, false, ru, &err), -EINVAL);
    cr_assert(strstr(err.text, "17 cores of 16"), "%s", err.text);
}

Test(ru, spec_numa_layout_reaches_the_binding)
{
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"g\", \"cores\": 16, \"numa\": 2, \"mem\": \"32G\","
        " \"gpus\": 2, \"gpu_mem\": \"10G\", \"gpu_numa\": [1, 0], \"cores_per_gpu\": 3}]},"
        " \"workload\": {\"jobs\": [{\"name\": \"a\", \"task\": {\"duration\": \"1s\"}}]}}";
    struct hrm_error err = {{0}};
    struct hrm_spec *spec = hrm_spec_load_string(text, "numa.json", 1, &err);
    cr_assert_not_null(spec, "%s", err.text);
    struct hrm_ru ru[3];
    cr_assert_eq(hrm_ru_bind_node(spec->cluster, 0, false, ru, &err), 0, "%s", err.text);
    cr_assert_str_eq(cpus(&ru[0]), "8-10"); /* GPU 0 is on socket 1 */
    cr_assert_str_eq(cpus(&ru[1]), "0-2");
    cr_assert_eq(ru[0].gmem, 10 * GIB);
    cr_assert_eq(ru[2].ncores, 10);
    hrm_spec_free(spec);
}

static struct hrm_res gpu_req(int64_t cpu, int64_t gmem)
{
    struct hrm_res r = {{0}};
    r.v[HRM_DIM_CPU] = cpu;
    r.v[HRM_DIM_GPU] = 1;
    r.v[HRM_DIM_GPU_MEM] = gmem;
    return r;
}

Test(ru, stacking_admits_while_gpu_memory_fits)
{
    struct hrm_ru ru = {.gpu = 0, .type = HRM_RU_GPU, .ncores = 4, .gmem = 10 * GIB};
    struct hrm_res four = gpu_req(2000, 4 * GIB), two = gpu_req(2000, 2 * GIB);
    cr_assert(hrm_ru_fits(&ru, &four));
    hrm_ru_add(&ru, &four);
    cr_assert(hrm_ru_fits(&ru, &four)); /* 8 GiB of 10 */
    hrm_ru_add(&ru, &four);
    cr_assert_not(hrm_ru_fits(&ru, &four)); /* 12 GiB would not fit */
    cr_assert(hrm_ru_fits(&ru, &two));      /* exactly 10 GiB does */
    /* cores do not limit stacking: binding follows the tasks (flex) */
    cr_assert_eq(ru.cpu_used, 4000);
    hrm_ru_remove(&ru, &four);
    cr_assert(hrm_ru_fits(&ru, &four));
    cr_assert_eq(ru.ntasks, 1);
    cr_assert_eq(ru.gmem_used, 4 * GIB);
    /* A two-GPU task needs its per-GPU share on each unit: 12G / 2 = 6G. */
    struct hrm_res pair = gpu_req(1000, 12 * GIB);
    pair.v[HRM_DIM_GPU] = 2;
    cr_assert_eq(hrm_ru_task_gmem(&pair), 6 * GIB);
    cr_assert(hrm_ru_fits(&ru, &pair));
}

Test(ru, stack_limit_and_unit_types)
{
    struct hrm_ru ru = {
        .gpu = 0, .type = HRM_RU_GPU, .ncores = 4, .gmem = 10 * GIB, .max_stack = 1};
    struct hrm_res g = gpu_req(1000, GIB);
    hrm_ru_add(&ru, &g);
    cr_assert_not(hrm_ru_fits(&ru, &g)); /* one task per GPU */
    struct hrm_res cpu = {{0}};
    cpu.v[HRM_DIM_CPU] = 2000;
    cr_assert_not(hrm_ru_fits(&ru, &cpu)); /* no lending */
    cr_assert_eq(hrm_ru_lendable(&ru), 0);
    ru.type = HRM_RU_GPU_LEND; /* 4 cores, 1 held by the GPU task: 3 to lend */
    cr_assert_eq(hrm_ru_lendable(&ru), 3000);
    cr_assert(hrm_ru_fits(&ru, &cpu));
    hrm_ru_add(&ru, &cpu);
    cr_assert_eq(hrm_ru_lendable(&ru), 1000);
    cr_assert_not(hrm_ru_fits(&ru, &cpu));
    cr_assert_eq(ru.ngpu_tasks, 1);
    struct hrm_ru cpu_unit = {.gpu = -1, .type = HRM_RU_CPU, .ncores = 8};
    cr_assert_not(hrm_ru_fits(&cpu_unit, &g));
    cr_assert(hrm_ru_fits(&cpu_unit, &cpu));
}

Test(ru, fair_share_arithmetic)
{
    /* A_j = min(floor(Q/K), N_j) */
    cr_assert_eq(hrm_ru_fair_share(30, 4, 10), 7); /* floor(30/4) = 7 < 10 */
    cr_assert_eq(hrm_ru_fair_share(30, 4, 5), 5);  /* a small job gets all it asks */
    cr_assert_eq(hrm_ru_fair_share(3, 4, 2), 0);   /* fewer GPUs than jobs */
    cr_assert_eq(hrm_ru_fair_share(30, 1, 40), 30);
    cr_assert_eq(hrm_ru_fair_share(30, 0, 9), 9); /* no running job: no cap */
}

/* The placement preference: wait, then kernels to share with, then the
 * tightest GPU and node (fragmentation), then a CPU task's stranded GPU share
 * and the node's free share, then the queue; ties keep the first. */
Test(ru, prefer_orders_wait_sharing_fit_queue)
{
    struct hrm_ru_cost idle = {.wait = 0, .sharing = 0, .gpu_left = 8, .node_left = 18, .queue = 0};
    struct hrm_ru_cost tight = {
        .wait = 0, .sharing = 0, .gpu_left = 0, .node_left = 30, .queue = 3};
    struct hrm_ru_cost shared = {
        .wait = 0, .sharing = 1, .gpu_left = 0, .node_left = 0, .queue = 1};
    struct hrm_ru_cost later = {.wait = 5, .sharing = 0, .gpu_left = 0, .node_left = 0, .queue = 0};
    cr_assert(hrm_ru_prefer(&tight, &idle));   /* best fit, at no cost in wait */
    cr_assert(hrm_ru_prefer(&idle, &shared));  /* fewer kernels to share with first */
    cr_assert(hrm_ru_prefer(&shared, &later)); /* the wait first of all */
    struct hrm_ru_cost packed = idle;
    packed.node_left = 10;
    cr_assert(hrm_ru_prefer(&packed, &idle));
    struct hrm_ru_cost longer = idle;
    longer.queue = 2;
    cr_assert(hrm_ru_prefer(&idle, &longer));
    cr_assert(!hrm_ru_prefer(&idle, &idle));
    /* a CPU task's terms come after the GPU ones and before the queue */
    struct hrm_ru_cost strands = {.stranded = 1, .node_free = 0, .queue = 0};
    struct hrm_ru_cost spares = {.stranded = 0, .node_free = 9, .queue = 5};
    struct hrm_ru_cost loose = {.stranded = 0, .node_free = 10, .queue = 0};
    cr_assert(hrm_ru_prefer(&spares, &strands));
    cr_assert(hrm_ru_prefer(&spares, &loose));
    struct hrm_ru_cost gpu_tight = {.gpu_left = 0, .node_left = 0, .stranded = 5};
    struct hrm_ru_cost gpu_loose = {.gpu_left = 1, .node_left = 0, .stranded = 0};
    cr_assert(hrm_ru_prefer(&gpu_tight, &gpu_loose));
}

/*
 * A CPU task's fragmentation terms, by hand.  It asks 6 of a node's 8 cores.
 * On node G (one idle GPU) it leaves 2/8 of the cores and all the GPU: the GPU
 * share beyond the CPU share, 1 - 0.25 = 0.75, is stranded (too few cores are
 * left to run work on that GPU).  On node C (no GPU) it strands nothing and
 * leaves 0.25.  On node B (GPU 0.75 taken, 7 cores free) it leaves 1/8 of the
 * cores and 0.25 of the GPU: 0.125 stranded.  So C, then B, then G, whatever
 * their queues: the old rule (the shortest queue alone) took G's empty CPU unit.
 */
Test(ru, cpu_task_cost_counts_stranded_gpu_share)
{
    struct hrm_ru_cost g = {.queue = 0}, c = {.queue = 3}, b = {.queue = 1};
    hrm_ru_cost_cpu_task(&g, 8000 - 6000, 8000, 1000, 1000);
    hrm_ru_cost_cpu_task(&c, 8000 - 6000, 8000, 0, 0);
    hrm_ru_cost_cpu_task(&b, 7000 - 6000, 8000, 250, 1000);
    cr_assert_eq(g.stranded, 750000);
    cr_assert_eq(g.node_free, 1250000);
    cr_assert_eq(c.stranded, 0);
    cr_assert_eq(c.node_free, 250000);
    cr_assert_eq(b.stranded, 125000);
    cr_assert_eq(b.node_free, 375000);
    cr_assert(hrm_ru_prefer(&c, &b));
    cr_assert(hrm_ru_prefer(&b, &g));
    struct hrm_ru_cost old_g = {.queue = 0}, old_c = {.queue = 3};
    cr_assert(hrm_ru_prefer(&old_g, &old_c));
    /* CPU short of the GPU share is 0, not negative; no stranding where CPU is left */
    struct hrm_ru_cost x = {0};
    hrm_ru_cost_cpu_task(&x, -500, 8000, 2000, 1000);
    cr_assert_eq(x.stranded, 1000000);
    cr_assert_eq(x.node_free, 1000000);
    hrm_ru_cost_cpu_task(&x, 8000, 8000, 500, 1000);
    cr_assert_eq(x.stranded, 0);
    cr_assert_eq(x.node_free, 1500000);
}
