/* Resource dimensions and vector helpers. */
#include <stdio.h>
#include <string.h>

#include "hrm/resource.h"
#include "hrm/units.h"

static const struct hrm_dim_info dims[HRM_NDIM] = {
    [HRM_DIM_CPU] = {"cpu", "milli-cores", true},
    [HRM_DIM_MEM] = {"mem", "bytes", false},
    [HRM_DIM_GPU] = {"gpus", "GPUs", false},
    [HRM_DIM_GPU_MEM] = {"gpu_mem", "bytes", false},
    [HRM_DIM_DISK] = {"disk", "bytes", false},
    [HRM_DIM_NET] = {"net", "bytes/s", true},
};

const struct hrm_dim_info *hrm_dim_info(enum hrm_dim dim)
{
    return &dims[dim];
}

int hrm_dim_by_name(const char *name)
{
    for (int d = 0; d < HRM_NDIM; d++)
        if (strcmp(dims[d].name, name) == 0)
            return d;
    return -1;
}

double hrm_res_dominant_share(const struct hrm_res *used, const struct hrm_res *total)
{
    double best = 0.0;
    for (int d = 0; d < HRM_NDIM; d++) {
        if (total->v[d] <= 0)
            continue;
        double share = (double)used->v[d] / (double)total->v[d];
        if (share > best)
            best = share;
    }
    return best;
}

char *hrm_res_format(const struct hrm_res *r, char *buf, int len)
{
    int off = 0;
    buf[0] = '\0';
    for (int d = 0; d < HRM_NDIM && off < len; d++) {
        if (r->v[d] == 0)
            continue;
        char val[32];
        if (d == HRM_DIM_CPU)
            snprintf(val, sizeof(val), "%lldm", (long long)r->v[d]);
        else if (d == HRM_DIM_GPU)
            snprintf(val, sizeof(val), "%lld", (long long)r->v[d]);
        else if (d == HRM_DIM_NET)
            snprintf(val, sizeof(val), "%lldB/s", (long long)r->v[d]);
        else
            hrm_format_size(r->v[d], val, sizeof(val));
        off += snprintf(buf + off, (size_t)(len - off), "%s%s=%s", off ? " " : "", dims[d].name,
                        val);
    }
    return buf;
}
