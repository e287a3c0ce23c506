/* The synthetic cluster and Poisson workload that `hrm bench sim` and `hrm bench dhrm` run. */
#ifndef HRM_CLI_BENCH_WORKLOAD_H
#define HRM_CLI_BENCH_WORKLOAD_H

#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/workload.h"

/* How a task's duration is drawn around task_ms. */
enum bench_duration {
    BENCH_DURATION_EXP,     /* exponential with mean task_ms, floored at 1 ms */
    BENCH_DURATION_UNIFORM, /* uniform in [task_ms / 2, 3 task_ms / 2] */
};

struct bench_poisson {
    const char *who;       /* the command, for error messages ("hrm bench sim") */
    struct hrm_netcfg net; /* the cluster's network */
    long long nodes;       /* nodes of `cores` cores and 16 GiB, in racks of 40 */
    long long cores;
    long long tasks;   /* one-core, 1 GiB tasks in all */
    long long per_job; /* tasks per job (the last job takes what is left) */
    double task_ms;    /* mean task duration */
    double load;       /* offered work over the cores' capacity (0.8 = 80 %) */
    uint64_t seed;     /* arrivals and durations */
    enum bench_duration duration;
    const char *stage; /* the name of each job's single stage */
};

/*
 * Builds the cluster and the workload: jobs of p->per_job tasks arriving as a
 * Poisson process whose rate offers p->load of the cores' capacity, under one
 * user. On success the caller owns *cp and *wp; on error prints why and
 * returns -1.
 */
int bench_poisson_build(const struct bench_poisson *p, struct hrm_cluster **cp,
                        struct hrm_workload **wp);

#endif
