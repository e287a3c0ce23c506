/* Small clusters and workloads built in code for the unit tests. */
#ifndef HRM_TEST_FIXTURE_H
#define HRM_TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "hrm/cluster.h"
#include "hrm/workload.h"

#define GIB (1ll << 30)
#define MIB (1ll << 20)

/* racks x per_rack identical nodes named n0, n1, ... in racks r0, r1, ... */
static inline struct hrm_cluster *fx_cluster(int racks, int per_rack, int cores, int64_t mem,
                                             int gpus, int64_t gpu_mem,
                                             const struct hrm_netcfg *net)
{
    struct hrm_error err;
    struct hrm_cluster *c = hrm_cluster_new(net);
    char name[32];
    for (int r = 0; r < racks; r++) {
        snprintf(name, sizeof(name), "r%d", r);
        cr_assert_geq(hrm_cluster_add_rack(c, name, &err), 0, "%s", err.text);
        for (int i = 0; i < per_rack; i++) {
            snprintf(name, sizeof(name), "n%d", r * per_rack + i);
            struct hrm_node_desc d = {.name = name, .rack = r, .cores = cores, .mem = mem,
                                      .gpus = gpus, .gpu_mem = gpu_mem};
            cr_assert_geq(hrm_cluster_add_node(c, &d, &err), 0, "%s", err.text);
        }
    }
    return c;
}

static inline int fx_job(struct hrm_workload *wl, const char *name, const char *user,
                         int64_t submit_us)
{
    struct hrm_error err;
    struct hrm_job_desc d = {.name = name, .user = hrm_workload_user(wl, user),
                             .submit_us = submit_us};
    int j = hrm_workload_add_job(wl, &d, &err);
    cr_assert_geq(j, 0, "%s", err.text);
    return j;
}

static inline int fx_stage(struct hrm_workload *wl, const char *name, const int32_t *deps,
                           int ndeps)
{
    struct hrm_error err;
    int s = hrm_workload_add_stage(wl, name, deps, ndeps, &err);
    cr_assert_geq(s, 0, "%s", err.text);
    return s;
}

/* n tasks of cpu milli-cores, mem bytes, gpus, duration */
static inline int fx_tasks(struct hrm_workload *wl, int n, int64_t cpu, int64_t mem, int gpus,
                           int64_t gpu_mem, int64_t duration_us)
{
    struct hrm_error err;
    int first = -1;
    for (int i = 0; i < n; i++) {
        struct hrm_task_desc d = {.duration_us = duration_us};
        d.req.v[HRM_DIM_CPU] = cpu;
        d.req.v[HRM_DIM_MEM] = mem;
        d.req.v[HRM_DIM_GPU] = gpus;
        d.req.v[HRM_DIM_GPU_MEM] = gpu_mem;
        int t = hrm_workload_add_task(wl, &d, &err);
        cr_assert_geq(t, 0, "%s", err.text);
        if (first < 0)
            first = t;
    }
    return first;
}

#endif
