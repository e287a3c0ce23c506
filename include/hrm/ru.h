/* P0 resource units (RUs): GPU + bound cores, CPU-only, lending; binding and stacking
 * admission. */
#ifndef HRM_RU_H
#define HRM_RU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/error.h"
#include "hrm/resource.h"

#define HRM_RU_MAX_CORES 256 /* cores per node an RU can name (bitset size) */

/* P0's three bindings. */
enum hrm_ru_type {
    HRM_RU_GPU,     /* (1) one GPU and the cores bound to it */
    HRM_RU_CPU,     /* (2) the node's cores that no GPU holds */
    HRM_RU_GPU_LEND /* (3) a GPU unit whose idle bound cores CPU tasks may borrow */
};

struct hrm_ru_cores {
    uint64_t bits[HRM_RU_MAX_CORES / 64];
};

/*
 * One resource unit of a node, RS(RUId, MId, type, vCore, Mem, GMem, Wtime)
 * of P0 without the wait (src/estimate/waitsim.c estimates it).  What a
 * real agent needs to isolate it: the core list (cpuset / affinity) and the
 * GPU index (CUDA_VISIBLE_DEVICES); see hrm_ru_format_cpus.
 */
struct hrm_ru {
    int32_t node;
    int32_t gpu; /* GPU index on the node, -1 for a CPU unit */
    enum hrm_ru_type type;
    int32_t ncores; /* bound cores: popcount of cores */
    struct hrm_ru_cores cores;
    int64_t gmem;      /* bytes of the GPU's memory (0 for a CPU unit) */
    int32_t max_stack; /* most tasks stacked on the GPU at once; 0 = GPU memory decides */
    /* occupancy, kept by hrm_ru_add / hrm_ru_remove */
    int32_t ntasks;
    int32_t ngpu_tasks; /* tasks using the GPU (the rest borrow cores of a lending unit) */
    int64_t gmem_used;
    int64_t cpu_used; /* milli-cores held by the unit's tasks */
    int32_t share_used; /* thousandths of the GPU held by tasks that give a share (gpu_milli) */
};

/* What core binding needs to know about one node.  Cores are split over the
 * NUMA domains evenly and contiguously (domain d holds cores
 * [d*cores/numa, (d+1)*cores/numa)), as Linux numbers them on common
 * two-socket servers. */
struct hrm_topology {
    int32_t cores;
    int32_t numa; /* NUMA domains, >= 1 */
    int32_t gpus;
    int32_t gpu_numa[HRM_MAX_GPUS_PER_NODE]; /* domain each GPU hangs off */
};

/* The topology of a cluster node (its numa and gpu_numa fields). */
void hrm_topology_of_node(const struct hrm_node *n, struct hrm_topology *out);
/* NUMA domain of a core of t. */
int32_t hrm_topology_core_numa(const struct hrm_topology *t, int32_t core);

/*
 * Binds a node's cores into gpus + 1 units: out[0 .. gpus) are the GPU units
 * (GPU g takes want[g] cores), out[gpus] the CPU unit (every core left).  A
 * GPU takes the lowest free cores of its own NUMA domain first, then of the
 * nearest other domains (by domain-number distance, lower first on a tie):
 * cores next to the GPU's PCIe root avoid cross-socket traffic.  GPUs bind in
 * index order.  lend makes the GPU units HRM_RU_GPU_LEND.  Occupancy is
 * zeroed.  Binding is flexible: call again with other wants when the tasks of
 * a unit need more (or fewer) cores.  -EINVAL (no change to out) when the
 * wants exceed the cores or the topology is out of range.
 */
int hrm_ru_bind(const struct hrm_topology *t, int32_t node, const int32_t *want, bool lend,
                struct hrm_ru *out, struct hrm_error *err);
/* hrm_ru_bind of cluster node n with want = its units' bound-core counts
 * (the spec's cores_per_gpu).  out has n->gpus + 1 entries. */
int hrm_ru_bind_node(const struct hrm_cluster *c, int32_t node, bool lend, struct hrm_ru *out,
                     struct hrm_error *err);

/* GPU memory a task needs on each of its GPUs: ceil(gpu_mem / gpus); 0 without GPUs. */
int64_t hrm_ru_task_gmem(const struct hrm_res *req);

/*
 * Stacking admission (P0), the one rule every user of RUs shares:
 *  - a task asking GPUs fits a GPU unit (either GPU type) when the GPU memory
 *    of the unit's GPU tasks plus its own per-GPU memory (hrm_ru_task_gmem)
 *    is at most ru->gmem, and fewer than max_stack GPU tasks are there
 *    (max_stack 0: no count limit; 1: one task per GPU).  Cores are not
 *    checked: binding follows what the tasks need (re-bind, and check the
 *    node's free cores);
 *  - a task asking no GPU fits a CPU unit, or a lending GPU unit, when the
 *    unit's cpu_used plus its cpu is at most the bound cores;
 *  - nothing else fits (a CPU task on a non-lending GPU unit, a GPU task on a
 *    CPU unit).
 * A task asking several GPUs must fit each of its GPUs' units.  Pure.
 */
bool hrm_ru_fits(const struct hrm_ru *ru, const struct hrm_res *req);
/* Occupancy bookkeeping for a task admitted (add) or gone (remove). */
void hrm_ru_add(struct hrm_ru *ru, const struct hrm_res *req);
void hrm_ru_remove(struct hrm_ru *ru, const struct hrm_res *req);
/*
 * The same rule and bookkeeping for a task that gives its share of each of its
 * GPUs, gpu_milli thousandths (struct hrm_task): 1..999 a fraction of one GPU,
 * 1000 a whole GPU, 0 not given (then exactly hrm_ru_fits / add / remove).  A
 * task with a share also needs the shares given on the unit's GPU plus its own
 * to be at most 1000: two halves stack, a half and 0.6 do not, and a whole GPU
 * stacks with no other task that gives a share.  In the daemons every GPU task
 * gives one; simulator specs give none unless they ask a fraction.
 */
bool hrm_ru_fits_share(const struct hrm_ru *ru, const struct hrm_res *req, int32_t gpu_milli);
void hrm_ru_add_share(struct hrm_ru *ru, const struct hrm_res *req, int32_t gpu_milli);
void hrm_ru_remove_share(struct hrm_ru *ru, const struct hrm_res *req, int32_t gpu_milli);
/* Milli-cores of a lending unit that CPU tasks may borrow now (0 for other types). */
int64_t hrm_ru_lendable(const struct hrm_ru *ru);

/* The unit's cores as a cpuset list ("0-3,8,10-11") into buf; returns the
 * length it needed (like snprintf).  And its CUDA_VISIBLE_DEVICES value
 * ("1", or "" for a CPU unit). */
int hrm_ru_format_cpus(const struct hrm_ru *ru, char *buf, size_t len);
int hrm_ru_format_gpus(const struct hrm_ru *ru, char *buf, size_t len);

static inline bool hrm_ru_has_core(const struct hrm_ru *ru, int32_t core)
{
    return core >= 0 && core < HRM_RU_MAX_CORES &&
           (ru->cores.bits[core / 64] >> (core % 64) & 1u) != 0;
}

/*
 * What placing a task on a unit costs (P0 placement), for
 * hrm_ru_prefer; in every field smaller is better.  The wait comes first: it
 * is what P0 minimises.  Among units with the same wait, the fewest GPU
 * kernels to share with (each slows the others).  Then, at no cost in wait or
 * run time, fragmentation: first the least growth of the node's expected
 * fragmentation for the target workload (the fragmentation gradient of Weng
 * et al., ATC '23, which weighs every kind of task the cluster runs), then,
 * among equal growths, the task at hand's own view.  A GPU task: the tightest GPU (best fit on its
 * free memory: an exact fit leaves 0) and then the tightest node, so
 * fractional GPU tasks fill GPUs already in use and leave whole GPUs and
 * whole nodes free for the tasks that need them.  A CPU task (no GPU to fit):
 * the node where it strands the least GPU capacity, i.e. whose free GPU share
 * exceeds its free CPU share the least once the task holds its cores (a GPU
 * cannot run without cores, so cores taken from a node with idle GPUs turn
 * those GPUs into fragments), and then the node left with the least free
 * resources (free CPU share + free GPU share, best fit: CPU-only nodes and
 * busy GPU nodes first).  Then the shortest queue.  hrm_ru_cost_cpu_task
 * fills the two CPU-task fields; they stay 0 for GPU tasks.
 */
struct hrm_ru_cost {
    int64_t wait;      /* until the task could start there, 0 = at once (or a queue length) */
    int32_t sharing;   /* GPU tasks whose kernels would share the GPU with it (0 where
                          sharing costs no run time) */
    double frag_growth; /* growth of the node's expected fragmentation for the target
                           workload with the task on it (FGD's gradient, hrm_frag_node_amount);
                           0 where not measured */
    int64_t gpu_left;  /* GPU memory the unit's GPU keeps free with the task on it (0: no GPU) */
    int64_t node_left; /* GPU memory the node keeps free with the task on it (0: no GPU) */
    int64_t stranded;  /* CPU task: millionths of the node's GPU capacity left free beyond
                          its free CPU share with the task on it (0 for GPU tasks) */
    int64_t node_free; /* CPU task: the node's free CPU share + free GPU share with the task
                          on it, in millionths (0 for GPU tasks) */
    int32_t queue;     /* tasks held or queued at the unit */
};

/* Whether a is the better choice than b (strictly; on a tie keep the first seen). */
bool hrm_ru_prefer(const struct hrm_ru_cost *a, const struct hrm_ru_cost *b);

/* Sets cost->stranded and cost->node_free for a CPU task on a node that,
 * with the task on it, keeps cpu_free of its cpu_cap (any one unit, e.g.
 * milli-cores) and gpu_free of its gpu_cap (GPU memory or shares; gpu_cap 0
 * for a node without GPU).  Negative frees count as 0.  Pure. */
void hrm_ru_cost_cpu_task(struct hrm_ru_cost *cost, int64_t cpu_free, int64_t cpu_cap,
                          int64_t gpu_free, int64_t gpu_cap);

/* P0/P1 fair share when GPUs are scarce: A_j = min(floor(Q/K), N_j),
 * Q GPUs, K running jobs, N_j the job's GPU tasks.  K <= 0 gives N_j. */
int64_t hrm_ru_fair_share(int64_t q, int64_t k, int64_t n_j);

#endif
