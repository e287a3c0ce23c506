/* Agent resource discovery: cores/NUMA/PCI with hwloc, memory and load from /proc, NVIDIA GPUs via NVML (dlopen), cgroup mode. */
#include <dlfcn.h>
#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_private.h"

/* The host's logical CPUs by NUMA domain, for binding tasks to their unit's cores (a
 * domain without CPUs, such as a memory-only node, is not one the model can bind to). */
static void hwloc_host(hwloc_topology_t topo, struct agpu_host *h)
{
    int32_t n = 0;
    int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < nnuma && h->numa < AGPU_MAX_NUMA; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        if (!o || !o->cpuset || hwloc_bitmap_iszero(o->cpuset))
            continue;
        h->pu_first[h->numa] = n;
        h->numa_os[h->numa] = (int32_t)o->os_index;
        int pu;
        hwloc_bitmap_foreach_begin(pu, o->cpuset)
        {
            if (n < AGPU_MAX_CPUS)
                h->pu[n++] = pu;
        }
        hwloc_bitmap_foreach_end();
        h->pu_first[++h->numa] = n;
    }
    if (h->numa > 0)
        return;
    /* No NUMA information: one domain of every CPU hwloc allows us. */
    hwloc_const_cpuset_t all = hwloc_topology_get_allowed_cpuset(topo);
    int pu;
    hwloc_bitmap_foreach_begin(pu, all)
    {
        if (n < AGPU_MAX_CPUS)
            h->pu[n++] = pu;
    }
    hwloc_bitmap_foreach_end();
    if (n > 0) {
        h->numa = 1;
        h->pu_first[0] = 0;
        h->pu_first[1] = n;
        h->numa_os[0] = 0;
    }
}

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
        hwloc_host(topo, &hw->host);
        if (hw->host.numa > 0 && hw->numa > hw->host.numa)
            hw->numa = hw->host.numa; /* domains with CPUs: what binding can use */
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

/* NVML, loaded at run time: hosts without NVIDIA drivers need no library.  The entry points
 * used are those of every driver since R450 (tests/nvml_stub.c stands in for them). */
typedef int (*nvml_void_f)(void);
typedef int (*nvml_count_f)(unsigned int *);
typedef int (*nvml_handle_f)(unsigned int, void **);
struct nvml_memory {
    unsigned long long total, free, used;
};
typedef int (*nvml_mem_f)(void *, struct nvml_memory *);
typedef int (*nvml_name_f)(void *, char *, unsigned int);
/* nvmlDeviceGetMemoryAffinity / nvmlDeviceGetCpuAffinity: bit sets of NUMA nodes / CPUs. */
typedef int (*nvml_memaff_f)(void *, unsigned int, unsigned long *, int);
typedef int (*nvml_cpuaff_f)(void *, unsigned int, unsigned long *);
#define NVML_AFFINITY_SCOPE_NODE 0
#define ULONG_BITS (8 * sizeof(unsigned long))

/* The host domain (ordinal) of a GPU: the NUMA node NVML names for its memory, else the
 * domain of the first CPU of its CPU affinity; -1 when neither says. */
static int32_t nvml_numa(void *dev, nvml_memaff_f memaff, nvml_cpuaff_f cpuaff,
                         const struct agpu_host *h)
{
    unsigned long bits[AGPU_MAX_CPUS / ULONG_BITS];
    memset(bits, 0, sizeof(bits));
    if (memaff && memaff(dev, AGPU_MAX_NUMA / ULONG_BITS, bits, NVML_AFFINITY_SCOPE_NODE) == 0)
        for (int32_t os = 0; os < AGPU_MAX_NUMA; os++)
            if (bits[os / ULONG_BITS] >> (os % ULONG_BITS) & 1)
                for (int32_t d = 0; d < h->numa; d++)
                    if (h->numa_os[d] == os)
                        return d;
    memset(bits, 0, sizeof(bits));
    if (cpuaff && cpuaff(dev, AGPU_MAX_CPUS / ULONG_BITS, bits) == 0)
        for (int32_t d = 0; d < h->numa; d++)
            for (int32_t i = h->pu_first[d]; i < h->pu_first[d + 1]; i++)
                if (bits[h->pu[i] / ULONG_BITS] >> (h->pu[i] % ULONG_BITS) & 1)
                    return d;
    return -1;
}

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
    nvml_name_f uuid = (nvml_name_f)dlsym(lib, "nvmlDeviceGetUUID");
    nvml_memaff_f memaff = (nvml_memaff_f)dlsym(lib, "nvmlDeviceGetMemoryAffinity");
    nvml_cpuaff_f cpuaff = (nvml_cpuaff_f)dlsym(lib, "nvmlDeviceGetCpuAffinity");
    unsigned int n = 0;
    if (init && shutdown && count && handle && init() == 0) {
        if (count(&n) == 0) {
            if (n > HRM_MAX_GPUS_PER_NODE)
                n = HRM_MAX_GPUS_PER_NODE; /* GPU sets are 32-bit masks */
            hw->nvml_gpus = (int32_t)n;
            for (unsigned int i = 0; i < n; i++) {
                struct agpu_dev *g = &hw->nvml_dev[i];
                void *dev;
                struct nvml_memory m;
                g->numa = -1;
                snprintf(g->name, sizeof(g->name), "GPU %u", i);
                if (handle(i, &dev) != 0)
                    continue;
                if (mem && mem(dev, &m) == 0) {
                    g->mem = (int64_t)m.total;
                    if (hw->nvml_gpu_mem == 0 || (int64_t)m.total < hw->nvml_gpu_mem)
                        hw->nvml_gpu_mem = (int64_t)m.total;
                }
                if (name && name(dev, g->name, sizeof(g->name)) != 0)
                    snprintf(g->name, sizeof(g->name), "GPU %u", i);
                g->name[sizeof(g->name) - 1] = '\0';
                if (uuid && uuid(dev, g->uuid, sizeof(g->uuid)) != 0)
                    g->uuid[0] = '\0';
                g->uuid[sizeof(g->uuid) - 1] = '\0';
                g->numa = nvml_numa(dev, memaff, cpuaff, &hw->host);
                if (i == 0)
                    snprintf(hw->nvml_name, sizeof(hw->nvml_name), "%s", g->name);
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

/* v2: whether the delegated parent is offered a controller (a word of cgroup.controllers).  A
 * controller bound to a v1 hierarchy on the same host, or not delegated, is missing there. */
static bool v2_has(const char *root, const char *name)
{
    char path[600], text[256] = "";
    snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    if (!fgets(text, sizeof(text), f))
        text[0] = '\0';
    fclose(f);
    size_t n = strlen(name);
    for (char *p = strstr(text, name); p; p = strstr(p + 1, name))
        if ((p == text || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
            return true;
    return false;
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
            hw->cg_cpuset = v2_has(hw->cg_root, "cpuset");
            hw->cg_cpu = v2_has(hw->cg_root, "cpu");
            hw->cg_mem = v2_has(hw->cg_root, "memory");
            hw->cg_pids = v2_has(hw->cg_root, "pids");
            /* Say what is not enforced: a limit written to a group without its controller
             * is no limit, and nothing else would tell. */
            char missing[64] = "";
            const char *names[3] = {"cpu", "memory", "pids"};
            bool have[3] = {hw->cg_cpu, hw->cg_mem, hw->cg_pids};
            for (int i = 0; i < 3; i++)
                if (!have[i])
                    snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
                             "%s%s", missing[0] ? ", " : "", names[i]);
            snprintf(hw->cg_why, sizeof(hw->cg_why), "v2 under %.90s/hrm/CLUSTER (%s%s%scgroup.kill%s)",
                     hw->cg_root, hw->cg_cpu ? "cpu.max, " : "", hw->cg_mem ? "memory.max, " : "",
                     hw->cg_pids ? "pids.max, " : "", hw->cg_cpuset ? ", cpuset" : "");
            if (missing[0])
                snprintf(hw->cg_why + strlen(hw->cg_why), sizeof(hw->cg_why) - strlen(hw->cg_why),
                         "; %s limits not enforced: no such controller there", missing);
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
            hw->cg_cpu = hw->cg_mem = true;
            /* Optional: without pids no pids.max, without freezer a group kill cannot stop
             * a task that forks while it is being killed (it retries instead). */
            hw->cg_pids = stat("/sys/fs/cgroup/pids/cgroup.procs", &st) == 0;
            hw->cg_freezer = stat("/sys/fs/cgroup/freezer/cgroup.procs", &st) == 0;
            /* Tasks' cores (their resource unit's): without it, affinity alone binds them. */
            hw->cg_cpuset = stat("/sys/fs/cgroup/cpuset/cpuset.cpus", &st) == 0 &&
                            (!probe || probe_dir("/sys/fs/cgroup/cpuset", "hrm-probe"));
            /* Usage: cpuacct.usage is in the cpu folder when the two share a hierarchy
             * (cpu,cpuacct); a hierarchy of its own is one more group to join. */
            hw->cg_cpuacct = stat("/sys/fs/cgroup/cpu/cpuacct.usage", &st) != 0 &&
                             stat("/sys/fs/cgroup/cpuacct/cpuacct.usage", &st) == 0;
            snprintf(hw->cg_why, sizeof(hw->cg_why),
                     "v1 (cpu.cfs_quota_us, memory.limit_in_bytes%s%s%s%s under "
                     "/sys/fs/cgroup/*/hrm/CLUSTER/%.40s)",
                     hw->cg_pids ? ", pids.max" : "", hw->cg_cpuacct ? ", cpuacct" : "",
                     hw->cg_freezer ? ", freezer" : "", hw->cg_cpuset ? ", cpuset" : "", name);
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

json_t *hw_gpu_list(const struct agpu_dev *devs, int32_t n)
{
    json_t *list = json_array();
    for (int32_t g = 0; g < n; g++)
        json_array_append_new(list, json_pack("{s:i, s:s, s:s, s:I, s:i}", "index", g, "uuid",
                                              devs[g].uuid, "name", devs[g].name, "mem",
                                              (json_int_t)devs[g].mem, "numa", devs[g].numa));
    return list;
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
        json_object_set_new(o, "gpu_list", hw_gpu_list(hw.nvml_dev, hw.nvml_gpus));
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
    for (int32_t g = 0; g < hw.nvml_gpus; g++)
        printf("gpu %-6d %s, %s, %lld MiB, NUMA domain %d\n", g, hw.nvml_dev[g].uuid,
               hw.nvml_dev[g].name, (long long)(hw.nvml_dev[g].mem >> 20), hw.nvml_dev[g].numa);
    printf("cgroup     %s\n", hw.cg_why);
    if (where[0])
        printf("tasks in   %s/JOB.TASK.ATTEMPT\n", where);
    return 0;
}
