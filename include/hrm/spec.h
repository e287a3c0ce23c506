/* Reading cluster and workload specs (JSON) into the model, with validation that names file, path and reason. */
#ifndef HRM_SPEC_H
#define HRM_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/error.h"
#include "hrm/workload.h"

/* Fault injection read from the spec's "faults" object (all optional). */
struct hrm_node_fault {
    int32_t node;
    int64_t at_us;      /* goes down */
    int64_t recover_us; /* comes back; 0 = never */
};

struct hrm_faults {
    double task_fail_prob;   /* each attempt fails with this probability, part-way through */
    int32_t max_attempts;    /* per task, default 4 */
    struct hrm_node_fault *node_faults;
    int32_t nnode_faults;
};

/* Foreign load on a node (the "cloud" variant of P2): busy and idle
 * periods of exponential length; while busy it uses cpu and memory drawn
 * uniformly from the ranges. */
struct hrm_background {
    double nodes;             /* share of the nodes that have it (chosen at random); 0 = none */
    int64_t cpu_min, cpu_max; /* milli-cores */
    int64_t mem_min, mem_max; /* bytes */
    int64_t busy_us, idle_us; /* mean period lengths */
};

/* The simulator's node execution model, from the spec's "execution" object
 * (P2: compressible cpu, incompressible memory). */
/* What a preempted (killed) task keeps for its next attempt (P1's ablation). */
enum hrm_preempt_cost {
    HRM_PREEMPT_RESTART,    /* nothing: it reads its input again and computes from the start */
    HRM_PREEMPT_KEEP_INPUT, /* its input, if it had read it: the next attempt computes from the
                               start without reading (wherever it runs) */
    HRM_PREEMPT_RESUME      /* its input and its compute progress (a checkpoint) */
};

struct hrm_execution {
    enum hrm_preempt_cost preempt; /* default HRM_PREEMPT_RESTART */
    bool fluid;        /* every task shares cpu by its demand; else only tasks with a profile */
    double contention; /* p: a compressed task progresses at (1 - r_c) / (1 + p); default 0.05 */
    int64_t usage_interval_us; /* usage samples sent to the scheduler; default 1 s, 0 = none */
    /* How long a task holds its slot before it computes: what starting (and reaping) its
     * process costs a real agent.  Not part of any ideal time.  Default 0. */
    int64_t task_overhead_us;
    struct hrm_background background;
};

/* x's task_overhead_us, or 0 when the run has no execution settings. */
static inline int64_t hrm_execution_task_overhead_us(const struct hrm_execution *x)
{
    return x ? x->task_overhead_us : 0;
}

/* Simulation settings a spec may carry in "sim" (command-line flags override). */
struct hrm_spec_sim {
    char **policies;          /* default policy list, may be empty */
    int32_t npolicies;
    char **policy_params;     /* "policy.key=value" strings */
    int32_t nparams;
    int64_t sample_interval_us; /* utilisation time series; default 1s */
};

struct hrm_spec {
    char *path;               /* the file it came from */
    struct hrm_cluster *cluster;
    struct hrm_workload *wl;
    struct hrm_faults faults;
    struct hrm_spec_sim sim;
    struct hrm_execution execution;
};

/*
 * Reads a spec file.  The file holds {"cluster": C, "workload": W, "faults": F,
 * "sim": S}, where C and W are objects or paths (relative to the file) of files
 * holding them.  Generators in the workload are expanded with a generator seeded
 * from seed, so the same file and seed give the same jobs.  On error returns
 * NULL and err says "<file>: <json path>: <reason>"; never crashes on any input.
 */
struct hrm_spec *hrm_spec_load(const char *path, uint64_t seed, struct hrm_error *err);
/* Same, with tasks bounded by max_mem bytes (0: the machine's memory and ulimits only):
 * a workload whose tasks would need more is refused before it is built. */
struct hrm_spec *hrm_spec_load_bounded(const char *path, uint64_t seed, int64_t max_mem,
                                       struct hrm_error *err);
/* Same, from a string (path is used in messages and to resolve relative files). */
struct hrm_spec *hrm_spec_load_string(const char *text, const char *path, uint64_t seed,
                                      struct hrm_error *err);
void hrm_spec_free(struct hrm_spec *spec); /* NULL is a no-op */

#endif
