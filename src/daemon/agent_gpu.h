/* What a task sees of GPUs and cores: its GPU environment (CUDA_VISIBLE_DEVICES, the NVIDIA MPS client limits, HRM_GPU_*) and its resource unit's cores on the host. Pure functions, shared by the agent and the unit tests. */
#ifndef HRM_AGENT_GPU_H
#define HRM_AGENT_GPU_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/ru.h"
#include "hrm/wire_launch.h"

#define AGPU_UUID_MAX 80 /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define AGPU_NAME_MAX 96 /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define AGPU_SHARE_WHOLE 1000 /* gpu_share of a whole GPU, in thousandths */

/* One GPU of the node, as registration tells the master. */
struct agpu_dev {
    char uuid[AGPU_UUID_MAX]; /* "" for a virtual GPU */
    char name[AGPU_NAME_MAX];
    int64_t mem;              /* bytes */
    int32_t numa;             /* the host's NUMA domain (ordinal, not the OS number) */
};

/* What a launch gives a task of GPUs (task_launch: gpu_mask, gpu_share, gpu_mem). */
struct agpu_ask {
    uint32_t mask;
    int32_t share; /* thousandths of each GPU (1..1000; a missing field is 1000) */
    int64_t mem;   /* bytes, total over its GPUs (0: not asked) */
};

/* The launch's GPU fields; -1 and why for a share or memory out of range. */
int agpu_ask_of_launch(const struct hrm_launch_msg *m, struct agpu_ask *ask, char *why,
                       size_t len);

/* -1 and why when the job's environment sets a variable the agent sets for GPU tasks
 * (the MPS limits and HRM_GPU_*): a task must not choose its own share. */
int agpu_env_check(const struct hrm_launch_msg *m, char *why, size_t len);

/* True for an agent environment entry ("K=V") a task must not inherit: the agent's own
 * MPS limits would otherwise leak into tasks without a share. */
bool agpu_env_filtered(const char *entry);

/* "0.5" for 500, "1" for 1000, "0.125" for 125. */
void agpu_format_share(int32_t share, char *buf, size_t len);
/* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of a share: its percentage, at least 1. */
int32_t agpu_mps_percent(int32_t share);
/* CUDA_MPS_PINNED_DEVICE_MEM_LIMIT: "0=4096M,1=4096M", per_gpu bytes rounded up to MiB, for
 * the ndev devices the task sees (ordinals within its CUDA_VISIBLE_DEVICES). */
void agpu_format_mps_mem(int64_t per_gpu, int32_t ndev, char *buf, size_t len);

/*
 * The GPU variables of a task: appends hrm_alloc'd "K=V" strings to out[*n] (at most
 * AGPU_ENV_MAX) and nothing for a task without GPUs.  CUDA_VISIBLE_DEVICES lists the GPUs'
 * UUIDs when every one is known, else their indices; HRM_GPU_SHARE and HRM_GPU_MEM (the
 * memory asked, else the whole memory of whole GPUs, else 0) for every GPU task; the MPS
 * limits for a share of a GPU (memory only when asked).
 */
#define AGPU_ENV_MAX 5
void agpu_env(const struct agpu_ask *ask, const struct agpu_dev *devs, int32_t ndevs,
              char **out, size_t *n);

/* The host's logical CPUs by NUMA domain: domain d has pu[pu_first[d] .. pu_first[d+1]). */
#define AGPU_MAX_NUMA 64
#define AGPU_MAX_CPUS 1024 /* glibc's CPU_SETSIZE */
struct agpu_host {
    int32_t numa;                   /* domains (>= 1; 0 until discovered) */
    int32_t pu_first[AGPU_MAX_NUMA + 1];
    int32_t pu[AGPU_MAX_CPUS];      /* OS numbers of the logical CPUs */
    int32_t numa_os[AGPU_MAX_NUMA]; /* OS number of each domain (cpuset.mems) */
};

/* Host CPUs by OS number (what cpuset.cpus and sched_setaffinity name). */
struct agpu_cpus {
    uint64_t bits[AGPU_MAX_CPUS / 64];
};

/* NUMA domains of the model for a node of `cores` cores on a host with `numa` domains
 * (0 unknown): clamped to [1, min(cores, 64)], as the master clamps the registration. */
int32_t agpu_model_numa(int32_t numa, int32_t cores);

/* The node's units as the cluster model binds them by default (cores/(gpus+1) per GPU,
 * NUMA-nearest cores first: hrm_ru_bind), lending GPU units.  out has gpus + 1 entries. */
int agpu_units(const struct hrm_topology *t, struct hrm_ru *out, struct hrm_error *err);

/*
 * The model cores of a task: a GPU task the cores of its GPUs' units; a CPU task the CPU
 * unit's and, with lend, those of the GPU units whose GPU runs no task (busy: GPUs in use).
 * An empty choice (a unit without cores) is every core.
 */
void agpu_task_cores(const struct hrm_topology *t, const struct hrm_ru *units,
                     uint32_t gpu_mask, uint32_t busy, bool lend, struct hrm_ru_cores *out);

/* Model cores onto the host's CPUs: model domain d onto host domain d (mod the host's),
 * a domain's cores folded onto its CPUs in order.  mems gets the OS numbers of the domains
 * touched ("0", "0,1"). */
void agpu_host_cpus(const struct hrm_topology *t, const struct agpu_host *h,
                    const struct hrm_ru_cores *cores, struct agpu_cpus *set, char *mems,
                    size_t mems_len);

/* A CPU set as a list: "0-3,8,10-11" (snprintf's return convention); "" when empty. */
int agpu_format_set(const struct agpu_cpus *set, char *buf, size_t len);

#endif
