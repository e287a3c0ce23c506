/* Agent resource discovery: cores/NUMA/PCI with hwloc, memory and load from /proc, NVIDIA GPUs via NVML (dlopen), cgroup mode. */
#include <dlfcn.h>
#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_private.h"

static void hwloc_counts(struct hw_info *hw)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) < 0)
        return;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) == 0) {
        hw->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        hw->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        hw->numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        hw->pci = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PCI_DEVICE);
    }
    hwloc_topology_destroy(topo);
}

int64_t hw_meminfo(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f)
        return 0;
    char line[256];
    long long kb = 0;
    size_t klen = strlen(key);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            sscanf(line + klen + 1, "%lld", &kb);
            break;
        }
    fclose(f);
    return (int64_t)kb * 1024;
}

int64_t hw_mem_avail(void)
{
    return hw_meminfo("MemAvailable");
}

double hw_loadavg(void)
{
    FILE *f = fopen("/proc/loadavg", "re");
    double l = 0;
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = 0;
        fclose(f);
    }
    return l;
}

/* NVML, loaded at run time: hosts without NVIDIA drivers need no library. */
typedef int (*nvml_void_f)(void);
typedef int (*nvml_count_f)(unsigned int *);
typedef int (*nvml_handle_f)(unsigned int, void **);
struct nvml_memory {
    unsigned long long total, free, used;
};
typedef int (*nvml_mem_f)(void *, struct nvml_memory *);
typedef int (*nvml_name_f)(void *, char *, unsigned int);

static void nvml_probe(struct hw_info *hw)
{
    hw->nvml_gpus = -1;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;
    nvml_void_f init = (nvml_void_f)dlsym(lib, "nvmlInit_v2");
    nvml_void_f shutdown = (nvml_void_f)dlsym(lib, "nvmlShutdown");
    nvml_count_f count = (nvml_count_f)dlsym(lib, "nvmlDeviceGetCount_v2");
    nvml_handle_f handle = (nvml_handle_f)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    nvml_mem_f mem = (nvml_mem_f)dlsym(lib, "nvmlDeviceGetMemoryInfo");
    nvml_name_f name = (nvml_name_f)dlsym(lib, "nvmlDeviceGetName");
    unsigned int n = 0;
    if (init && shutdown && count && handle && init() == 0) {
        if (count(&n) == 0) {
            hw->nvml_gpus = (int32_t)n;
            for (unsigned int i = 0; i < n; i++) {
                void *dev;
                struct nvml_memory m;
                if (handle(i, &dev) != 0)
                    continue;
                if (mem && mem(dev, &m) == 0 &&
                    (hw->nvml_gpu_mem == 0 || (int64_t)m.total < hw->nvml_gpu_mem))
                    hw->nvml_gpu_mem = (int64_t)m.total;
                if (name && i == 0)
                    name(dev, hw->nvml_name, sizeof(hw->nvml_name));
            }
        }
        shutdown();
    }
    dlclose(lib);
}

static bool probe_dir(const char *parent, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", parent, name);
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return false;
    rmdir(path);
    return true;
}

static void cgroup_probe(struct hw_info *hw, const char *name, bool probe)
{
    struct stat st;
    hw->cg = CG_NONE;
    if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {
        /* v2: tasks go under our own cgroup's parent when it is delegated to us. */
        FILE *f = fopen("/proc/self/cgroup", "re");
        char line[512], own[400] = "";
        while (f && fgets(line, sizeof(line), f))
            if (strncmp(line, "0::", 3) == 0) {
                line[strcspn(line, "\n")] = '\0';
                snprintf(own, sizeof(own), "%.390s", line + 3);
            }
        if (f)
            fclose(f);
        char *slash = strrchr(own, '/');
        if (slash)
            *slash = '\0';
        snprintf(hw->cg_root, sizeof(hw->cg_root), "/sys/fs/cgroup%s", own);
        char ctl[600];
        snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", hw->cg_root);
        if (access(ctl, W_OK) == 0 && (!probe || probe_dir(hw->cg_root, "hrm-probe"))) {
            hw->cg = CG_V2;
            snprintf(hw->cg_why, sizeof(hw->cg_why),
                     "v2 under %.90s/hrm/CLUSTER (cpu.max, memory.max, pids.max, cgroup.kill)",
                     hw->cg_root);
        } else {
            snprintf(hw->cg_why, sizeof(hw->cg_why),
                     "none: cgroup v2 is mounted but %.80s is not delegated to this user",
                     hw->cg_root);
        }
        return;
    }
    bool cpu = stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &st) == 0;
    bool mem = stat("/sys/fs/cgroup/memory/memory.limit_in_bytes", &st) == 0;
    if (cpu && mem) {
        if (!probe || (probe_dir("/sys/fs/cgroup/cpu", "hrm-probe") &&
                       probe_dir("/sys/fs/cgroup/memory", "hrm-probe"))) {
            hw->cg = CG_V1;
            /* Optional: without pids no pids.max, without freezer a group kill cannot stop
             * a task that forks while it is being killed (it retries instead). */
            hw->cg_pids = stat("/sys/fs/cgroup/pids/cgroup.procs", &st) == 0;
            hw->cg_freezer = stat("/sys/fs/cgroup/freezer/cgroup.procs", &st) == 0;
            /* Usage: cpuacct.usage is in the cpu folder when the two share a hierarchy
             * (cpu,cpuacct); a hierarchy of its own is one more group to join. */
            hw->cg_cpuacct = stat("/sys/fs/cgroup/cpu/cpuacct.usage", &st) != 0 &&
                             stat("/sys/fs/cgroup/cpuacct/cpuacct.usage", &st) == 0;
            snprintf(hw->cg_why, sizeof(hw->cg_why),
                     "v1 (cpu.cfs_quota_us, memory.limit_in_bytes%s%s%s under "
                     "/sys/fs/cgroup/*/hrm/CLUSTER/%.40s)",
                     hw->cg_pids ? ", pids.max" : "", hw->cg_cpuacct ? ", cpuacct" : "",
                     hw->cg_freezer ? ", freezer" : "", name);
        } else {
            snprintf(hw->cg_why, sizeof(hw->cg_why),
                     "none: cgroup v1 is mounted but not writable by this user");
        }
        return;
    }
    snprintf(hw->cg_why, sizeof(hw->cg_why), "none: no cgroup v2 or v1 cpu+memory hierarchy");
}

void hw_discover(struct hw_info *hw, const char *name, bool probe_cgroup)
{
    memset(hw, 0, sizeof(*hw));
    hwloc_counts(hw);
    if (hw->pus <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        hw->pus = n > 0 ? (int32_t)n : 1;
    }
    hw->mem_total = hw_meminfo("MemTotal");
    hw->mem_avail = hw_meminfo("MemAvailable");
    nvml_probe(hw);
    cgroup_probe(hw, name, probe_cgroup);
}

int hrm_agent_check(const struct hrm_agent_config *cfg, bool json)
{
    struct hw_info hw;
    char host[64] = "localhost";
    gethostname(host, sizeof(host) - 1);
    const char *name = cfg && cfg->name ? cfg->name : host;
    hw_discover(&hw, name, true);
    const char *cg = hw.cg == CG_V2 ? "v2" : hw.cg == CG_V1 ? "v1" : "none";
    /* Where its tasks' cgroups would go: the cluster's identity comes from master.pub. */
    char keys[1100], where[160] = "";
    struct hrm_keypair master;
    struct hrm_error kerr;
    if (cfg && cfg->keys_dir)
        snprintf(keys, sizeof(keys), "%s", cfg->keys_dir);
    else
        snprintf(keys, sizeof(keys), "%.1000s/keys", cfg && cfg->state_dir ? cfg->state_dir : ".");
    if (hw.cg != CG_NONE && hrm_keys_load(keys, "master", true, &master, &kerr) == 0) {
        char cluster[CG_CLUSTER_LEN + 1];
        cg_cluster_id(master.pub, cluster);
        snprintf(where, sizeof(where), "hrm/%s/%.60s", cluster, name);
    }
    if (json) {
        json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:i, s:I, s:I, s:i, s:I, s:s, s:s, s:s, s:s}",
                              "name", name, "pus", hw.pus, "cores", hw.cores, "numa", hw.numa,
                              "pci", hw.pci, "mem_total", (json_int_t)hw.mem_total, "mem_avail",
                              (json_int_t)hw.mem_avail, "nvml_gpus", hw.nvml_gpus, "gpu_mem",
                              (json_int_t)hw.nvml_gpu_mem, "gpu_name", hw.nvml_name, "cgroup", cg,
                              "cgroup_detail", hw.cg_why, "cgroup_path", where);
        char *s = json_dumps(o, JSON_INDENT(2));
        printf("%s\n", s);
        free(s);
        json_decref(o);
        return 0;
    }
    printf("node       %s\n", name);
    printf("cpus       %d logical, %d cores, %d NUMA nodes (hwloc)\n", hw.pus, hw.cores, hw.numa);
    printf("pci        %d devices (hwloc)\n", hw.pci);
    printf("memory     %lld MiB total, %lld MiB available (/proc/meminfo)\n",
           (long long)(hw.mem_total >> 20), (long long)(hw.mem_avail >> 20));
    if (hw.nvml_gpus < 0)
        printf("gpus       none found (NVML not present)\n");
    else
        printf("gpus       %d (NVML; %s, %lld MiB)\n", hw.nvml_gpus, hw.nvml_name,
               (long long)(hw.nvml_gpu_mem >> 20));
    printf("cgroup     %s\n", hw.cg_why);
    if (where[0])
        printf("tasks in   %s/JOB.TASK.ATTEMPT\n", where);
    return 0;
}
