/* Shared resource state (the cell) and its snapshots: per-node versions for optimistic commit. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/snapshot.h"

int hrm_cell_init(struct hrm_cell *cell, const struct hrm_cluster *c, struct hrm_error *err)
{
    if (!c || c->nnodes <= 0)
        return hrm_errorf(err, -EINVAL, "cell: a cluster with nodes is needed");
    memset(cell, 0, sizeof(*cell));
    cell->cluster = c;
    cell->nnodes = c->nnodes;
    cell->nodes = hrm_calloc((size_t)c->nnodes, sizeof(*cell->nodes));
    for (int32_t n = 0; n < c->nnodes; n++) {
        cell->nodes[n].free = c->nodes[n].capacity;
        cell->nodes[n].version = 1;
    }
    cell->version = 1;
    return 0;
}

void hrm_cell_fini(struct hrm_cell *cell)
{
    hrm_free(cell->nodes);
    cell->nodes = NULL;
    cell->nnodes = 0;
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
        cell->nodes[n] = (struct hrm_cell_node){.free = cell->cluster->nodes[n].capacity,
                                                .version = 1};
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
    snap->nodes = NULL;
    snap->nnodes = 0;
}

/* Versions only grow, so "differs" is "changed since".  A planner that changes
 * its copy locally (planned claims) sets those nodes' version to 0, so the
 * next sync copies them back whatever became of the claims. */
static int32_t adopt(struct hrm_snapshot *snap, const struct hrm_cell_node *src, int32_t nsrc,
                     uint64_t version, int32_t gpu_jobs)
{
    int32_t n = snap->nnodes < nsrc ? snap->nnodes : nsrc, copied = 0;
    for (int32_t i = 0; i < n; i++) {
        if (snap->nodes[i].version != src[i].version) {
            snap->nodes[i] = src[i];
            copied++;
        }
    }
    snap->version = version;
    snap->gpu_jobs = gpu_jobs;
    return copied;
}

int32_t hrm_snapshot_sync(struct hrm_snapshot *snap, const struct hrm_cell *cell)
{
    return adopt(snap, cell->nodes, cell->nnodes, cell->version, cell->gpu_jobs);
}

int32_t hrm_snapshot_copy(struct hrm_snapshot *dst, const struct hrm_snapshot *src)
{
    if (src->nnodes > dst->nnodes) {
        dst->nodes = hrm_realloc(dst->nodes, (size_t)src->nnodes * sizeof(*dst->nodes));
        memset(dst->nodes + dst->nnodes, 0,
               (size_t)(src->nnodes - dst->nnodes) * sizeof(*dst->nodes));
        dst->nnodes = src->nnodes;
    }
    return adopt(dst, src->nodes, src->nnodes, src->version, src->gpu_jobs);
}
