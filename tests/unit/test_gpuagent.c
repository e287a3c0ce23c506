/* What a task sees of its GPUs and cores (src/daemon/agent_gpu.c) and what the master keeps of
 * a node's GPUs (master_gpus.c): env building, MPS limit formatting, core choice. */
#include <criterion/criterion.h>
#include <string.h>

#include "daemon/agent_gpu.h"
#include "daemon/master_private.h"
#include "hrm/alloc.h"

/* The env of a task as one string, "K=V\n" per entry in order; frees the entries. */
static char *env_of(const struct agpu_ask *ask, const struct agpu_dev *devs, int32_t n)
{
    char *out[AGPU_ENV_MAX + 1];
    size_t k = 0;
    agpu_env(ask, devs, n, out, &k);
    cr_assert_leq(k, AGPU_ENV_MAX);
    static char text[2048];
    text[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        strcat(text, out[i]);
        strcat(text, "\n");
        hrm_free(out[i]);
    }
    return text;
}

static const struct agpu_dev nvml2[2] = {
    {.uuid = "GPU-aaaa", .name = "A", .mem = (int64_t)40 << 30, .numa = 0},
    {.uuid = "GPU-bbbb", .name = "A", .mem = (int64_t)40 << 30, .numa = 1},
};

Test(gpuagent, share_is_printed_as_a_short_fraction)
{
    char b[16];
    const struct {
        int32_t share;
        const char *text;
    } cases[] = {{500, "0.5"}, {1000, "1"}, {250, "0.25"}, {125, "0.125"}, {1, "0.001"}, {999, "0.999"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        agpu_format_share(cases[i].share, b, sizeof(b));
        cr_assert_str_eq(b, cases[i].text, "share %d", cases[i].share);
    }
}

Test(gpuagent, mps_thread_percentage_is_the_share_at_least_one)
{
    cr_assert_eq(agpu_mps_percent(500), 50);
    cr_assert_eq(agpu_mps_percent(333), 33);
    cr_assert_eq(agpu_mps_percent(5), 1);
    cr_assert_eq(agpu_mps_percent(1), 1);
    cr_assert_eq(agpu_mps_percent(1000), 100);
}

Test(gpuagent, mps_memory_limit_uses_nvidias_format_per_device_ordinal)
{
    char b[64];
    agpu_format_mps_mem((int64_t)4 << 30, 1, b, sizeof(b));
    cr_assert_str_eq(b, "0=4096M");
    agpu_format_mps_mem((int64_t)4 << 30, 2, b, sizeof(b));
    cr_assert_str_eq(b, "0=4096M,1=4096M");
    agpu_format_mps_mem(((int64_t)1 << 20) + 1, 1, b, sizeof(b)); /* rounded up: never less */
    cr_assert_str_eq(b, "0=2M");
}

Test(gpuagent, a_shared_gpu_gets_the_mps_limits_and_hrm_variables)
{
    struct agpu_ask ask = {.mask = 2, .share = 500, .mem = (int64_t)4 << 30};
    cr_assert_str_eq(env_of(&ask, nvml2, 2),
                     "CUDA_VISIBLE_DEVICES=GPU-bbbb\nHRM_GPU_SHARE=0.5\nHRM_GPU_MEM=4294967296\n"
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50\n"
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4096M\n");
    /* No memory asked: the thread share alone. */
    ask.mem = 0;
    cr_assert_str_eq(env_of(&ask, nvml2, 2),
                     "CUDA_VISIBLE_DEVICES=GPU-bbbb\nHRM_GPU_SHARE=0.5\nHRM_GPU_MEM=0\n"
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50\n");
}

Test(gpuagent, whole_gpus_get_no_mps_limit_and_their_gpus_memory)
{
    struct agpu_ask ask = {.mask = 3, .share = 1000, .mem = 0};
    cr_assert_str_eq(env_of(&ask, nvml2, 2),
                     "CUDA_VISIBLE_DEVICES=GPU-aaaa,GPU-bbbb\nHRM_GPU_SHARE=1\n"
                     "HRM_GPU_MEM=85899345920\n");
}

Test(gpuagent, gpus_without_uuid_are_named_by_index_and_cpu_tasks_get_nothing)
{
    struct agpu_dev virt[3] = {{.name = "virtual", .mem = (int64_t)16 << 30},
                               {.name = "virtual", .mem = (int64_t)16 << 30},
                               {.name = "virtual", .mem = (int64_t)16 << 30}};
    struct agpu_ask ask = {.mask = 5, .share = 1000, .mem = (int64_t)8 << 30};
    cr_assert_str_eq(env_of(&ask, virt, 3),
                     "CUDA_VISIBLE_DEVICES=0,2\nHRM_GPU_SHARE=1\nHRM_GPU_MEM=8589934592\n");
    struct agpu_ask none = {.mask = 0, .share = 1000};
    cr_assert_str_eq(env_of(&none, virt, 3), "");
}

Test(gpuagent, launch_fields_default_to_a_whole_gpu_and_are_checked)
{
    char why[160];
    struct agpu_ask ask;
    struct hrm_launch_msg old = {.gpu_mask = 1}; /* a master before gpu_share */
    cr_assert_eq(agpu_ask_of_launch(&old, &ask, why, sizeof(why)), 0);
    cr_assert(ask.mask == 1 && ask.share == 1000 && ask.mem == 0);
    struct hrm_launch_msg frac = {.gpu_mask = 1, .has_gpu_share = true, .gpu_share = 250,
                                  .gpu_mem = (int64_t)1 << 30};
    cr_assert_eq(agpu_ask_of_launch(&frac, &ask, why, sizeof(why)), 0);
    cr_assert(ask.share == 250 && ask.mem == (int64_t)1 << 30);
    struct hrm_launch_msg bad = {.gpu_mask = 1, .has_gpu_share = true, .gpu_share = 1001};
    cr_assert_eq(agpu_ask_of_launch(&bad, &ask, why, sizeof(why)), -1);
    cr_assert(strstr(why, "gpu_share"), "%s", why);
}

Test(gpuagent, a_job_may_not_set_its_own_share)
{
    char why[160];
    const char *env[] = {"PATH", "/bin", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=1G"};
    struct hrm_launch_msg m = {.env = env, .nenv = 2, .has_env = true};
    cr_assert_eq(agpu_env_check(&m, why, sizeof(why)), -1);
    cr_assert(strstr(why, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "%s", why);
    m.nenv = 1; /* the reserved name left out */
    cr_assert_eq(agpu_env_check(&m, why, sizeof(why)), 0);
    struct hrm_launch_msg none = {0};
    cr_assert_eq(agpu_env_check(&none, why, sizeof(why)), 0);
    cr_assert(agpu_env_filtered("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=20"));
    cr_assert(!agpu_env_filtered("CUDA_MPS_PIPE_DIRECTORY=/tmp/mps")); /* clients need it */
}

static bool has(const struct hrm_ru_cores *c, int32_t core)
{
    return c->bits[core / 64] >> (core % 64) & 1;
}

static int32_t count(const struct hrm_ru_cores *c)
{
    int32_t n = 0;
    for (int32_t i = 0; i < HRM_RU_MAX_CORES; i++)
        n += has(c, i);
    return n;
}

/* 2 x 6 cores, GPU 0 on domain 1, GPU 1 on domain 0: 4 cores per GPU unit. */
static struct hrm_topology two_socket(void)
{
    struct hrm_topology t = {.cores = 12, .numa = 2, .gpus = 2};
    t.gpu_numa[0] = 1;
    t.gpu_numa[1] = 0;
    return t;
}

Test(gpuagent, a_gpu_task_gets_its_units_cores_on_its_gpus_numa_domain)
{
    struct hrm_topology t = two_socket();
    struct hrm_ru units[3];
    cr_assert_eq(agpu_units(&t, units, NULL), 0);
    struct hrm_ru_cores c;
    agpu_task_cores(&t, units, 1u << 0, 1u << 0, true, &c);
    cr_assert_eq(count(&c), 4);
    for (int32_t k = 6; k < 10; k++)
        cr_assert(has(&c, k), "GPU 0 (domain 1) lacks core %d", k);
    agpu_task_cores(&t, units, 3u, 3u, true, &c); /* both GPUs: both units */
    cr_assert_eq(count(&c), 8);
    cr_assert(has(&c, 0) && has(&c, 6));
}

Test(gpuagent, cpu_tasks_borrow_only_idle_gpu_units_cores)
{
    struct hrm_topology t = two_socket();
    struct hrm_ru units[3];
    cr_assert_eq(agpu_units(&t, units, NULL), 0);
    struct hrm_ru_cores c;
    agpu_task_cores(&t, units, 0, 0, true, &c); /* nothing busy: every core */
    cr_assert_eq(count(&c), 12);
    agpu_task_cores(&t, units, 0, 1u << 0, true, &c); /* GPU 0 busy: its 4 cores are not lent */
    cr_assert_eq(count(&c), 8);
    cr_assert(!has(&c, 6) && has(&c, 0) && has(&c, 4));
    agpu_task_cores(&t, units, 0, 0, false, &c); /* no lending: the CPU unit only */
    cr_assert_eq(count(&c), 4);
    cr_assert(has(&c, 4) && has(&c, 5) && has(&c, 10) && has(&c, 11));
}

Test(gpuagent, model_cores_fold_onto_the_hosts_cpus_by_numa_domain)
{
    /* Host: domain 0 = CPUs 0,2 (OS node 0), domain 1 = CPUs 1,3 (OS node 4). */
    static struct agpu_host h = {.numa = 2, .pu_first = {0, 2, 4}, .pu = {0, 2, 1, 3},
                                 .numa_os = {0, 4}};
    struct hrm_topology t = {.cores = 4, .numa = 2, .gpus = 1, .gpu_numa = {1}};
    struct hrm_ru units[2];
    cr_assert_eq(agpu_units(&t, units, NULL), 0); /* GPU 0: 2 cores of domain 1 */
    struct hrm_ru_cores c;
    agpu_task_cores(&t, units, 1, 1, true, &c);
    struct agpu_cpus set;
    char list[64], mems[16];
    agpu_host_cpus(&t, &h, &c, &set, mems, sizeof(mems));
    agpu_format_set(&set, list, sizeof(list));
    cr_assert_str_eq(list, "1,3");
    cr_assert_str_eq(mems, "4");
    agpu_task_cores(&t, units, 0, 0, true, &c);
    agpu_host_cpus(&t, &h, &c, &set, mems, sizeof(mems));
    agpu_format_set(&set, list, sizeof(list));
    cr_assert_str_eq(list, "0-3");
    cr_assert_str_eq(mems, "0,4");
    /* More model cores than host CPUs: folded within the domain. */
    struct hrm_topology big = {.cores = 8, .numa = 2};
    struct hrm_ru_cores all = {{0xff}};
    agpu_host_cpus(&big, &h, &all, &set, mems, sizeof(mems));
    agpu_format_set(&set, list, sizeof(list));
    cr_assert_str_eq(list, "0-3");
}

Test(gpuagent, model_numa_is_clamped_to_the_cores)
{
    cr_assert_eq(agpu_model_numa(0, 8), 1);
    cr_assert_eq(agpu_model_numa(2, 8), 2);
    cr_assert_eq(agpu_model_numa(4, 2), 2);
    cr_assert_eq(agpu_model_numa(100, 200), 64);
}

Test(gpuagent, master_keeps_a_registrations_gpus_and_accepts_old_ones)
{
    struct rnode rn = {0};
    struct hrm_error err;
    bool changed;
    /* An agent from before gpu_list: no list, GPUs spread by the model. */
    json_t *old = json_pack("{s:s, s:i, s:i}", "name", "n1", "gpus", 2, "numa", 2);
    cr_assert_eq(mgpu_register(&rn, old, 8, 2, &changed, &err), 0);
    cr_assert(changed && rn.numa == 2 && !rn.gpu_numa_known && !rn.gpu_list);
    json_t *list = json_pack("[{s:i, s:s, s:s, s:I, s:i}, {s:i, s:s, s:s, s:I, s:i}]", "index", 0,
                             "uuid", "GPU-a", "name", "A", "mem", (json_int_t)1 << 30, "numa", 1,
                             "index", 1, "uuid", "GPU-b", "name", "A", "mem", (json_int_t)1 << 30,
                             "numa", 0);
    json_t *now = json_pack("{s:i, s:O}", "numa", 2, "gpu_list", list);
    cr_assert_eq(mgpu_register(&rn, now, 8, 2, &changed, &err), 0, "%s", err.text);
    cr_assert(changed && rn.gpu_numa_known && rn.gpu_numa[0] == 1 && rn.gpu_numa[1] == 0);
    cr_assert(json_equal(rn.gpu_list, list));
    cr_assert_eq(mgpu_register(&rn, now, 8, 2, &changed, &err), 0);
    cr_assert(!changed, "the same registration changes nothing");
    /* A GPU on a domain the node does not have, or a list of the wrong length: refused. */
    json_object_set_new(json_array_get(list, 1), "numa", json_integer(2));
    cr_assert_eq(mgpu_register(&rn, now, 8, 2, &changed, &err), -EINVAL);
    cr_assert(strstr(err.text, "gpu_list[1]"), "%s", err.text);
    cr_assert_eq(mgpu_register(&rn, now, 8, 3, &changed, &err), -EINVAL);
    cr_assert(rn.gpu_numa[0] == 1 && rn.gpu_numa[1] == 0, "a refused list leaves the node");
    json_t *out = json_object();
    mgpu_node_json(&rn, out);
    cr_assert_eq(json_array_size(json_object_get(out, "gpu_list")), 2);
    json_decref(out);
    json_decref(rn.gpu_list);
    json_decref(list);
    json_decref(now);
    json_decref(old);
}
