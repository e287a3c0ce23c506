/* The node's GPUs and resource units, and each task's cores: its unit's (the model's binding, lending idle GPU units' cores to CPU tasks), enforced with a cpuset cgroup, else affinity. */
#define _GNU_SOURCE 1 /* sched_setaffinity, CPU_SET */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "agent_private.h"
#include "hrm/log.h"

void bind_init(struct agent *a)
{
    /* NVML's GPUs when it found them and no --gpus overrides them, else virtual ones. */
    bool nvml = a->cfg.gpus < 0 && a->hw.nvml_gpus > 0;
    struct hrm_topology *t = &a->topo;
    memset(t, 0, sizeof(*t));
    t->cores = (int32_t)(a->cpu_milli / 1000);
    if (t->cores > HRM_RU_MAX_CORES)
        t->cores = HRM_RU_MAX_CORES;
    t->numa = agpu_model_numa(a->hw.numa, t->cores);
    t->gpus = a->gpus;
    for (int32_t g = 0; g < a->gpus; g++) {
        struct agpu_dev *d = &a->gpu[g];
        if (nvml) {
            *d = a->hw.nvml_dev[g];
        } else {
            memset(d, 0, sizeof(*d));
            snprintf(d->name, sizeof(d->name), "virtual");
            d->mem = a->gpu_mem;
            d->numa = -1;
        }
        /* Unknown: spread over the domains, as the cluster model places a spec's GPUs. */
        if (d->numa < 0 || d->numa >= t->numa)
            d->numa = d->numa < 0 ? g * t->numa / a->gpus : t->numa - 1;
        t->gpu_numa[g] = d->numa;
    }
    struct hrm_error err;
    a->units_ok = a->hw.host.numa > 0 && agpu_units(t, a->units, &err) == 0;
    if (!a->units_ok)
        hrm_log(HRM_LOG_WARNING, "tasks are not bound to cores: %s",
                a->hw.host.numa > 0 ? err.text : "hwloc found no CPUs");
}

static uint32_t busy_gpus(const struct agent *a)
{
    uint32_t busy = 0;
    for (size_t i = 0; i < a->nruns; i++)
        busy |= a->runs[i].gpu_mask;
    return busy;
}

/* Which cores r gets now: its unit's, and for a CPU task the idle GPU units' too unless
 * --pin keeps CPU tasks to the CPU unit (static partitions). */
static void choose(const struct agent *a, const struct arun *r, struct hrm_ru_cores *out)
{
    agpu_task_cores(&a->topo, a->units, r->gpu_mask, busy_gpus(a), !a->cfg.pin, out);
}

static void to_cpu_set(const struct agpu_cpus *in, cpu_set_t *out)
{
    CPU_ZERO(out);
    for (int c = 0; c < AGPU_MAX_CPUS && c < CPU_SETSIZE; c++)
        if (in->bits[c / 64] >> (c % 64) & 1)
            CPU_SET(c, out);
}

/* Applies r->cores: to its cpuset group, else to its main process's affinity (pid > 0). */
static int apply(struct agent *a, const struct arun *r, struct agpu_cpus *set)
{
    char cpus[4096], mems[256];
    agpu_host_cpus(&a->topo, &a->hw.host, &r->cores, set, mems, sizeof(mems));
    if (r->cpuset) {
        agpu_format_set(set, cpus, sizeof(cpus));
        return cg_cpuset_write(a, r, cpus, mems);
    }
    if (r->pid <= 0)
        return 0;
    cpu_set_t cs;
    to_cpu_set(set, &cs);
    return sched_setaffinity(r->pid, sizeof(cs), &cs) < 0 ? -errno : 0;
}

void bind_run(struct agent *a, struct arun *r, char procs[CG_NCTL][1200], bool *affinity,
              struct agpu_cpus *set)
{
    *affinity = false;
    memset(&r->cores, 0, sizeof(r->cores));
    if (!a->units_ok)
        return;
    choose(a, r, &r->cores);
    r->cpuset = procs[CG_CPUSET][0] || (a->hw.cg == CG_V2 && a->hw.cg_cpuset && procs[CG_CPU][0]);
    if (r->cpuset) {
        int rc = apply(a, r, set);
        if (rc == 0)
            return;
        hrm_log(HRM_LOG_WARNING, "cpuset of task " HRM_TASK_FMT ": %s; binding by affinity%s",
                HRM_TASK_ARGS(r->job, r->task, r->attempt), strerror(-rc),
                rc == -ENOENT && a->hw.cg == CG_V2 ? " from now on" : "");
        /* v2 without cpuset files: the controller was not passed down to us.  (On v1 the
         * flag also names the groups to remove: it stays.) */
        if (rc == -ENOENT && a->hw.cg == CG_V2)
            a->hw.cg_cpuset = false;
        procs[CG_CPUSET][0] = '\0'; /* a group without CPUs would refuse the task */
        r->cpuset = false;
        a->bind_noted = true; /* said */
    } else if (!a->bind_noted) {
        a->bind_noted = true;
        hrm_log(HRM_LOG_NOTICE, "no cpuset cgroup controller%s: tasks' cores are bound with "
                "sched_setaffinity only, which a task may undo",
                a->cfg.no_cgroup ? " (--no-cgroup)" : "");
    }
    char mems[256];
    agpu_host_cpus(&a->topo, &a->hw.host, &r->cores, set, mems, sizeof(mems));
    *affinity = true;
}

void bind_rebalance(struct agent *a)
{
    if (!a->units_ok || a->gpus == 0 || a->cfg.pin)
        return;
    for (size_t i = 0; i < a->nruns; i++) {
        struct arun *r = &a->runs[i];
        struct hrm_ru_cores now;
        if (r->gpu_mask || r->launching) /* starting: rebalanced when it has its pid */
            continue;
        choose(a, r, &now);
        if (memcmp(&now, &r->cores, sizeof(now)) == 0)
            continue;
        r->cores = now;
        struct agpu_cpus set;
        int rc = apply(a, r, &set);
        if (rc < 0)
            hrm_log(HRM_LOG_WARNING, "task " HRM_TASK_FMT ": cores not rebound: %s",
                    HRM_TASK_ARGS(r->job, r->task, r->attempt), strerror(-rc));
    }
}
