/* Shared resource state (the cell) and its snapshots: per-node versions for optimistic commit. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/ru.h"
#include "hrm/snapshot.h"

int hrm_cell_init(struct hrm_cell *cell, const struct hrm_cluster *c, struct hrm_error *err)
{
    if (!c || c->nnodes <= 0)
        return hrm_errorf(err, -EINVAL, "cell: a cluster with nodes is needed");
    memset(cell, 0, sizeof(*cell));
    cell->cluster = c;
    cell->nnodes = c->nnodes;
    cell->nodes = hrm_calloc((size_t)c->nnodes, sizeof(*cell->nodes));
    cell->nnodes = 0;
    hrm_cell_grow(cell);
    cell->version = 1;
    return 0;
}

/* Node n of the cluster joins the cell at its capacity, version 1, its GPUs idle. */
static void join(struct hrm_cell *cell, int32_t n)
{
    const struct hrm_node *cn = &cell->cluster->nodes[n];
    cell->nodes[n] = (struct hrm_cell_node){
        .free = cn->capacity, .cap = cn->capacity, .version = 1, .ngpus = cn->gpus,
        .gpu_at = cell->ngpus};
    cell->gpus = hrm_realloc(cell->gpus, (size_t)(cell->ngpus + cn->gpus + 1) * sizeof(*cell->gpus));
    for (int32_t g = 0; g < cn->gpus; g++)
        cell->gpus[cell->ngpus + g] = (struct hrm_cell_gpu){
            .gmem_cap = cell->cluster->units[cn->unit_first + g].gpu_mem};
    cell->ngpus += cn->gpus;
}

/* The temporary unit hrm_ru_fits_share judges GPU g by. */
static struct hrm_ru gpu_unit(const struct hrm_cell_gpu *g)
{
    return (struct hrm_ru){.gpu = 0,
                           .type = HRM_RU_GPU,
                           .gmem = g->gmem_cap,
                           .gmem_used = g->gmem_used,
                           .ntasks = g->tasks,
                           .ngpu_tasks = g->tasks,
                           .share_used = g->share_used};
}

bool hrm_cell_node_fits(const struct hrm_cell_node *cn, const struct hrm_cell_gpu *gpus,
                        const struct hrm_cell_use *u, struct hrm_res *charge)
{
    *charge = u->req;
    if (u->gpu_mask != 0) {
        if (__builtin_popcount(u->gpu_mask) != u->req.v[HRM_DIM_GPU] ||
            (cn->ngpus < 32 && u->gpu_mask >> cn->ngpus) != 0)
            return false;
        int64_t idle = 0;
        for (int32_t g = 0; g < cn->ngpus; g++) {
            if (!(u->gpu_mask >> g & 1u))
                continue;
            const struct hrm_cell_gpu *r = &gpus[cn->gpu_at + g];
            struct hrm_ru ru = gpu_unit(r);
            if (r->tasks > 0 && (u->solo || r->solo > 0))
                return false;
            if (!hrm_ru_fits_share(&ru, &u->req, u->milli))
                return false;
            idle += r->tasks == 0;
        }
        charge->v[HRM_DIM_GPU] = idle;
    }
    return !cn->down && hrm_res_fits(charge, &cn->free);
}

/* Adds (sign 1) or removes (-1) u on the records of its GPUs; *gpus_idle gets
 * how many of them run no task on the side where none does (before a take,
 * after a give). */
static int64_t gpus_apply(const struct hrm_cell_node *cn, struct hrm_cell_gpu *gpus,
                          const struct hrm_cell_use *u, int sign)
{
    int64_t idle = 0;
    for (int32_t g = 0; g < cn->ngpus; g++) {
        if (!(u->gpu_mask >> g & 1u))
            continue;
        struct hrm_cell_gpu *r = &gpus[cn->gpu_at + g];
        idle += sign > 0 && r->tasks == 0;
        r->tasks += sign;
        r->solo += sign * u->solo;
        r->gmem_used += sign * u->gmem;
        r->share_used += sign * u->milli;
        idle += sign < 0 && r->tasks == 0;
    }
    return idle;
}

bool hrm_cell_node_take(struct hrm_cell_node *cn, struct hrm_cell_gpu *gpus,
                        const struct hrm_cell_use *u)
{
    struct hrm_res charge;
    if (!hrm_cell_node_fits(cn, gpus, u, &charge))
        return false;
    gpus_apply(cn, gpus, u, +1);
    hrm_res_sub(&cn->free, &charge);
    return true;
}

int hrm_cell_take_use(struct hrm_cell *cell, int32_t node, const struct hrm_cell_use *u)
{
    if (node < 0 || node >= cell->nnodes ||
        !hrm_cell_node_take(&cell->nodes[node], cell->gpus, u))
        return -HRM_ENOFIT;
    cell->nodes[node].version++;
    cell->version++;
    return 0;
}

int hrm_cell_give_use(struct hrm_cell *cell, int32_t node, const struct hrm_cell_use *u)
{
    if (u->gpu_mask == 0)
        return hrm_cell_give(cell, node, &u->req);
    if (node < 0 || node >= cell->nnodes)
        return -HRM_ESTATE;
    struct hrm_cell_node *cn = &cell->nodes[node];
    for (int32_t g = 0; g < cn->ngpus; g++)
        if ((u->gpu_mask >> g & 1u) && cell->gpus[cn->gpu_at + g].tasks <= 0)
            return -HRM_ESTATE; /* a release nobody took */
    struct hrm_res back = u->req;
    back.v[HRM_DIM_GPU] = 0;
    struct hrm_res after = cn->free;
    hrm_res_add(&after, &back);
    if (!hrm_res_fits(&after, &cell->cluster->nodes[node].capacity))
        return -HRM_ESTATE;
    back.v[HRM_DIM_GPU] = gpus_apply(cn, cell->gpus, u, -1);
    hrm_res_add(&cn->free, &back);
    cn->version++;
    cell->version++;
    return 0;
}

void hrm_cell_fini(struct hrm_cell *cell)
{
    hrm_free(cell->nodes);
    hrm_free(cell->gpus);
    cell->nodes = NULL;
    cell->gpus = NULL;
    cell->nnodes = cell->ngpus = 0;
}

bool hrm_cell_valid(const struct hrm_cell *cell, int32_t node, uint64_t seen,
                    const struct hrm_res *req, enum hrm_validate_mode mode)
{
    if (node < 0 || node >= cell->nnodes)
        return false;
    const struct hrm_cell_node *n = &cell->nodes[node];
    if (n->down)
        return false;
    if (mode == HRM_VALIDATE_VERSION && n->version != seen)
        return false;
    return hrm_res_fits(req, &n->free);
}

int hrm_cell_take(struct hrm_cell *cell, int32_t node, const struct hrm_res *req)
{
    if (node < 0 || node >= cell->nnodes || cell->nodes[node].down ||
        !hrm_res_fits(req, &cell->nodes[node].free))
        return -HRM_ENOFIT;
    hrm_res_sub(&cell->nodes[node].free, req);
    cell->nodes[node].version++;
    cell->version++;
    return 0;
}

int32_t hrm_cell_grow(struct hrm_cell *cell)
{
    int32_t from = cell->nnodes, to = cell->cluster->nnodes;
    if (to <= from)
        return 0;
    cell->nodes = hrm_realloc(cell->nodes, (size_t)to * sizeof(*cell->nodes));
    for (int32_t n = from; n < to; n++)
        join(cell, n);
    cell->nnodes = to;
    cell->version++;
    return to - from;
}

int hrm_cell_set_up(struct hrm_cell *cell, int32_t node, bool up)
{
    if (node < 0 || node >= cell->nnodes)
        return -HRM_ESTATE;
    if (cell->nodes[node].down == !up)
        return 0;
    cell->nodes[node].down = !up;
    cell->nodes[node].version++;
    cell->version++;
    return 0;
}

int hrm_cell_give(struct hrm_cell *cell, int32_t node, const struct hrm_res *req)
{
    if (node < 0 || node >= cell->nnodes)
        return -HRM_ESTATE;
    struct hrm_res after = cell->nodes[node].free;
    hrm_res_add(&after, req);
    if (!hrm_res_fits(&after, &cell->cluster->nodes[node].capacity))
        return -HRM_ESTATE;
    cell->nodes[node].free = after;
    cell->nodes[node].version++;
    cell->version++;
    return 0;
}

void hrm_snapshot_init(struct hrm_snapshot *snap, int32_t nnodes)
{
    memset(snap, 0, sizeof(*snap));
    snap->nnodes = nnodes > 0 ? nnodes : 0;
    snap->nodes = hrm_calloc((size_t)(snap->nnodes ? snap->nnodes : 1), sizeof(*snap->nodes));
}

void hrm_snapshot_fini(struct hrm_snapshot *snap)
{
    hrm_free(snap->nodes);
    hrm_free(snap->gpus);
    snap->nodes = NULL;
    snap->gpus = NULL;
    snap->nnodes = snap->ngpus = 0;
}

/* Room for ngpus GPU records in snap (zeroed beyond what it had). */
static void gpus_room(struct hrm_snapshot *snap, int32_t ngpus)
{
    if (ngpus <= snap->ngpus)
        return;
    snap->gpus = hrm_realloc(snap->gpus, (size_t)ngpus * sizeof(*snap->gpus));
    memset(snap->gpus + snap->ngpus, 0, (size_t)(ngpus - snap->ngpus) * sizeof(*snap->gpus));
    snap->ngpus = ngpus;
}

struct hrm_cell_gpu *hrm_snapshot_gpus_of(struct hrm_snapshot *snap, int32_t n, int32_t ngpus)
{
    struct hrm_cell_node *cn = &snap->nodes[n];
    if (ngpus <= 0) {
        cn->ngpus = 0;
        return NULL;
    }
    if (cn->ngpus != ngpus || cn->gpu_at + ngpus > snap->ngpus) {
        cn->gpu_at = snap->ngpus;
        cn->ngpus = ngpus;
        gpus_room(snap, snap->ngpus + ngpus);
    }
    return &snap->gpus[cn->gpu_at];
}

/* Versions only grow, so "differs" is "changed since".  A planner that changes
 * its copy locally (planned claims) sets those nodes' version to 0, so the
 * next sync copies them back whatever became of the claims. */
static int32_t adopt(struct hrm_snapshot *snap, const struct hrm_cell_node *src, int32_t nsrc,
                     const struct hrm_cell_gpu *gpus, int32_t ngpus, uint64_t version,
                     int32_t gpu_jobs)
{
    int32_t n = snap->nnodes < nsrc ? snap->nnodes : nsrc, copied = 0;
    gpus_room(snap, ngpus); /* the source's layout of GPU records */
    for (int32_t i = 0; i < n; i++) {
        if (snap->nodes[i].version != src[i].version) {
            snap->nodes[i] = src[i];
            if (src[i].ngpus > 0)
                memcpy(&snap->gpus[src[i].gpu_at], &gpus[src[i].gpu_at],
                       (size_t)src[i].ngpus * sizeof(*gpus));
            copied++;
        }
    }
    snap->version = version;
    snap->gpu_jobs = gpu_jobs;
    return copied;
}

int32_t hrm_snapshot_sync(struct hrm_snapshot *snap, const struct hrm_cell *cell)
{
    return adopt(snap, cell->nodes, cell->nnodes, cell->gpus, cell->ngpus, cell->version,
                 cell->gpu_jobs);
}

int32_t hrm_snapshot_copy(struct hrm_snapshot *dst, const struct hrm_snapshot *src)
{
    if (src->nnodes > dst->nnodes) {
        dst->nodes = hrm_realloc(dst->nodes, (size_t)src->nnodes * sizeof(*dst->nodes));
        memset(dst->nodes + dst->nnodes, 0,
               (size_t)(src->nnodes - dst->nnodes) * sizeof(*dst->nodes));
        dst->nnodes = src->nnodes;
    }
    return adopt(dst, src->nodes, src->nnodes, src->gpus, src->ngpus, src->version,
                 src->gpu_jobs);
}
