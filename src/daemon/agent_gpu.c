/* What a task sees of GPUs and cores: CUDA_VISIBLE_DEVICES, the NVIDIA MPS client limits and HRM_GPU_* of its share, and its resource unit's cores on the host (the model's hrm_ru_bind, folded onto hwloc's CPUs). */
#include <stdio.h>
#include <string.h>

#include "agent_gpu.h"
#include "hrm/alloc.h"

/* Variables the agent sets for GPU tasks and a job may not set (docs/runtime.md, "GPUs"). */
static const char *const reserved[] = {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                                       "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "HRM_GPU_SHARE",
                                       "HRM_GPU_MEM"};
#define NRESERVED (sizeof(reserved) / sizeof(reserved[0]))

int agpu_ask_of_launch(const struct hrm_launch_msg *m, struct agpu_ask *ask, char *why,
                       size_t len)
{
    ask->mask = (uint32_t)m->gpu_mask;
    /* A master from before fractional GPUs sends neither: whole GPUs, memory not asked. */
    ask->share = m->has_gpu_share ? (int32_t)m->gpu_share : AGPU_SHARE_WHOLE;
    ask->mem = m->gpu_mem;
    if (ask->mask && (ask->share < 1 || ask->share > AGPU_SHARE_WHOLE)) {
        snprintf(why, len, "gpu_share %d: expected 1..1000 thousandths of a GPU", ask->share);
        return -1;
    }
    if (ask->mem < 0) {
        snprintf(why, len, "gpu_mem %lld: expected bytes >= 0", (long long)ask->mem);
        return -1;
    }
    return 0;
}

int agpu_env_check(const struct hrm_launch_msg *m, char *why, size_t len)
{
    for (size_t i = 0; i < NRESERVED; i++)
        if (hrm_launch_env_find(m, reserved[i], strlen(reserved[i])) >= 0) {
            snprintf(why, len, "env %s is set by hrm from the task's GPU share; remove it",
                     reserved[i]);
            return -1;
        }
    return 0;
}

bool agpu_env_filtered(const char *entry)
{
    for (size_t i = 0; i < NRESERVED; i++) {
        size_t k = strlen(reserved[i]);
        if (strncmp(entry, reserved[i], k) == 0 && entry[k] == '=')
            return true;
    }
    return false;
}

void agpu_format_share(int32_t share, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%d.%03d", share / 1000, share % 1000);
    /* Trailing zeros, then a bare point, go: 0.500 -> 0.5, 1.000 -> 1. */
    while (n > 0 && (size_t)n < len && buf[n - 1] == '0')
        buf[--n] = '\0';
    if (n > 0 && (size_t)n < len && buf[n - 1] == '.')
        buf[--n] = '\0';
}

int32_t agpu_mps_percent(int32_t share)
{
    int32_t p = share / 10; /* rounded down: shares that sum to a GPU never exceed 100 % */
    return p < 1 ? 1 : p > 100 ? 100 : p;
}

void agpu_format_mps_mem(int64_t per_gpu, int32_t ndev, char *buf, size_t len)
{
    long long mib = (long long)((per_gpu + (1 << 20) - 1) >> 20);
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t d = 0; d < ndev && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d=%lldM", d ? "," : "", d, mib);
}

static char *env_entry(const char *k, const char *v)
{
    size_t n = strlen(k) + strlen(v) + 2;
    char *s = hrm_alloc(n);
    snprintf(s, n, "%s=%s", k, v);
    return s;
}

void agpu_env(const struct agpu_ask *ask, const struct agpu_dev *devs, int32_t ndevs,
              char **out, size_t *n)
{
    if (!ask->mask)
        return;
    char buf[32 * (AGPU_UUID_MAX + 1)], val[64];
    int32_t count = 0;
    int64_t whole = 0; /* the memory of its GPUs */
    bool uuids = true;
    for (int32_t g = 0; g < 32; g++)
        if (ask->mask & (1u << g)) {
            count++;
            uuids = uuids && g < ndevs && devs[g].uuid[0];
            whole += g < ndevs ? devs[g].mem : 0;
        }
    /* UUIDs name the same devices whatever order CUDA enumerates them in (CUDA's default
     * order is fastest first, not NVML's PCI order); virtual GPUs have only an index. */
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t g = 0; g < 32; g++)
        if (ask->mask & (1u << g)) {
            if (uuids)
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", used ? "," : "",
                                         devs[g].uuid);
            else
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%d", used ? "," : "",
                                         g);
        }
    out[(*n)++] = env_entry("CUDA_VISIBLE_DEVICES", buf);
    agpu_format_share(ask->share, val, sizeof(val));
    out[(*n)++] = env_entry("HRM_GPU_SHARE", val);
    /* Not asked: whole GPUs have all their memory; a share has no memory of its own (0). */
    int64_t mem = ask->mem > 0 ? ask->mem : ask->share >= AGPU_SHARE_WHOLE ? whole : 0;
    snprintf(val, sizeof(val), "%lld", (long long)mem);
    out[(*n)++] = env_entry("HRM_GPU_MEM", val);
    if (ask->share >= AGPU_SHARE_WHOLE)
        return; /* a whole GPU: nothing to limit */
    snprintf(val, sizeof(val), "%d", agpu_mps_percent(ask->share));
    out[(*n)++] = env_entry("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", val);
    if (ask->mem > 0) {
        agpu_format_mps_mem((ask->mem + count - 1) / count, count, buf, sizeof(buf));
        out[(*n)++] = env_entry("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", buf);
    }
}

int32_t agpu_model_numa(int32_t numa, int32_t cores)
{
    int32_t most = cores < AGPU_MAX_NUMA ? cores : AGPU_MAX_NUMA;
    return numa < 1 ? 1 : numa > most ? (most < 1 ? 1 : most) : numa;
}

int agpu_units(const struct hrm_topology *t, struct hrm_ru *out, struct hrm_error *err)
{
    int32_t want[HRM_MAX_GPUS_PER_NODE];
    for (int32_t g = 0; g < t->gpus; g++)
        want[g] = t->cores / (t->gpus + 1); /* hrm_cluster_add_node's default cores_per_gpu */
    return hrm_ru_bind(t, 0, want, true, out, err);
}

static void cores_or(struct hrm_ru_cores *into, const struct hrm_ru_cores *from)
{
    for (size_t w = 0; w < sizeof(into->bits) / sizeof(into->bits[0]); w++)
        into->bits[w] |= from->bits[w];
}

void agpu_task_cores(const struct hrm_topology *t, const struct hrm_ru *units,
                     uint32_t gpu_mask, uint32_t busy, bool lend, struct hrm_ru_cores *out)
{
    memset(out, 0, sizeof(*out));
    for (int32_t g = 0; g < t->gpus; g++) {
        bool mine = gpu_mask & (1u << g);
        bool lent = !gpu_mask && lend && !(busy & (1u << g));
        if (mine || lent)
            cores_or(out, &units[g].cores);
    }
    if (!gpu_mask)
        cores_or(out, &units[t->gpus].cores);
    bool any = false;
    for (size_t w = 0; w < sizeof(out->bits) / sizeof(out->bits[0]); w++)
        any = any || out->bits[w];
    for (int32_t c = 0; !any && c < t->cores && c < HRM_RU_MAX_CORES; c++)
        out->bits[c / 64] |= UINT64_C(1) << (c % 64);
}

void agpu_host_cpus(const struct hrm_topology *t, const struct agpu_host *h,
                    const struct hrm_ru_cores *cores, struct agpu_cpus *set, char *mems,
                    size_t mems_len)
{
    memset(set, 0, sizeof(*set));
    bool domain_used[AGPU_MAX_NUMA] = {false};
    int32_t hnuma = h->numa > 0 ? h->numa : 1;
    for (int32_t c = 0; c < t->cores && c < HRM_RU_MAX_CORES; c++) {
        if (!(cores->bits[c / 64] >> (c % 64) & 1))
            continue;
        int32_t d = hrm_topology_core_numa(t, c);
        int32_t lo = (int32_t)((int64_t)d * t->cores / t->numa);
        int32_t hd = d % hnuma;
        int32_t first = h->numa > 0 ? h->pu_first[hd] : 0;
        int32_t npu = h->numa > 0 ? h->pu_first[hd + 1] - first : 0;
        if (npu <= 0)
            continue;
        int32_t pu = h->pu[first + (c - lo) % npu];
        if (pu >= 0 && pu < AGPU_MAX_CPUS)
            set->bits[pu / 64] |= UINT64_C(1) << (pu % 64);
        domain_used[hd] = true;
    }
    size_t used = 0;
    mems[0] = '\0';
    for (int32_t d = 0; d < hnuma && used < mems_len; d++)
        if (domain_used[d])
            used += (size_t)snprintf(mems + used, mems_len - used, "%s%d", used ? "," : "",
                                     h->numa > 0 ? h->numa_os[d] : 0);
}

int agpu_format_set(const struct agpu_cpus *set, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (int32_t c = 0; c < AGPU_MAX_CPUS; c++) {
        if (!(set->bits[c / 64] >> (c % 64) & 1))
            continue;
        int32_t end = c;
        while (end + 1 < AGPU_MAX_CPUS && (set->bits[(end + 1) / 64] >> ((end + 1) % 64) & 1))
            end++;
        char part[32];
        int k = end > c ? snprintf(part, sizeof(part), "%s%d-%d", used ? "," : "", c, end)
                        : snprintf(part, sizeof(part), "%s%d", used ? "," : "", c);
        if (used + (size_t)k < len)
            memcpy(buf + used, part, (size_t)k + 1);
        used += (size_t)k;
        c = end;
    }
    return (int)used;
}
