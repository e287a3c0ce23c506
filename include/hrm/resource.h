/* Resource vectors with named dimensions and a compressible flag per dimension. */
#ifndef HRM_RESOURCE_H
#define HRM_RESOURCE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Units: cpu in milli-cores, mem/gpu_mem/disk in bytes, gpu in whole GPUs,
 * net in bytes per second.  In a task's request gpu_mem is the total over the
 * task's GPUs (a task with gpu = 2, gpu_mem = 8G needs 4G on each of 2 GPUs).
 */
enum hrm_dim {
    HRM_DIM_CPU,
    HRM_DIM_MEM,
    HRM_DIM_GPU,
    HRM_DIM_GPU_MEM,
    HRM_DIM_DISK,
    HRM_DIM_NET,
    HRM_NDIM
};

struct hrm_dim_info {
    const char *name;   /* as written in specs: "cpu", "mem", ... */
    const char *unit;   /* "milli-cores", "bytes", ... */
    bool compressible;  /* less than asked means slower (cpu, net), not failure */
};

struct hrm_res {
    int64_t v[HRM_NDIM];
};

/* Static description of a dimension; dim must be < HRM_NDIM. */
const struct hrm_dim_info *hrm_dim_info(enum hrm_dim dim);
/* Dimension by spec name, or -1. */
int hrm_dim_by_name(const char *name);

static inline void hrm_res_add(struct hrm_res *acc, const struct hrm_res *x)
{
    for (int d = 0; d < HRM_NDIM; d++)
        acc->v[d] += x->v[d];
}

static inline void hrm_res_sub(struct hrm_res *acc, const struct hrm_res *x)
{
    for (int d = 0; d < HRM_NDIM; d++)
        acc->v[d] -= x->v[d];
}

/* True when every dimension of req is <= the same dimension of avail. */
static inline bool hrm_res_fits(const struct hrm_res *req, const struct hrm_res *avail)
{
    for (int d = 0; d < HRM_NDIM; d++)
        if (req->v[d] > avail->v[d])
            return false;
    return true;
}

static inline bool hrm_res_is_zero(const struct hrm_res *r)
{
    for (int d = 0; d < HRM_NDIM; d++)
        if (r->v[d] != 0)
            return false;
    return true;
}

/* max over dimensions with total > 0 of used/total (DRF's dominant share). */
double hrm_res_dominant_share(const struct hrm_res *used, const struct hrm_res *total);

/* "cpu=2000m mem=4G gpu=1" style text into buf; returns buf. */
char *hrm_res_format(const struct hrm_res *r, char *buf, int len);

#endif
