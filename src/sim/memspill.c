/* Simulator P3 memory model (memspill.h): heaps, page caches and disk spills per node. */
#include <math.h>

#include "hrm/alloc.h"
#include "memspill.h"

struct mem_node {
    int64_t heaps;    /* sum of the heaps of the tasks launched here */
    int64_t cached;   /* spilled bytes in the page cache */
    int32_t spillers; /* tasks whose spill is on the disk */
};

struct mem_task {
    int32_t node; /* -1: holds nothing */
    int64_t heap;
    int64_t cached;
    uint8_t on_disk;
};

struct mem_model {
    const struct hrm_cluster *c;
    const struct hrm_workload *wl;
    struct mem_node *nodes;
    struct mem_task *tasks;
    int64_t total_cached, total_disk;
};

struct mem_model *mem_new(const struct hrm_cluster *c, const struct hrm_workload *wl)
{
    if (!wl->task_memory)
        return NULL;
    struct mem_model *m = hrm_calloc(1, sizeof(*m));
    m->c = c;
    m->wl = wl;
    m->nodes = hrm_calloc((size_t)c->nnodes, sizeof(*m->nodes));
    m->tasks = hrm_calloc((size_t)wl->ntasks, sizeof(*m->tasks));
    for (int32_t t = 0; t < wl->ntasks; t++)
        m->tasks[t].node = -1;
    return m;
}

void mem_free(struct mem_model *m)
{
    if (!m)
        return;
    hrm_free(m->nodes);
    hrm_free(m->tasks);
    hrm_free(m);
}

void mem_hold(struct mem_model *m, int32_t task, int32_t node)
{
    mem_release(m, task); /* a stale run of the same task */
    int64_t heap = m->wl->tasks[task].req.v[HRM_DIM_MEM];
    const struct hrm_task_memory *tm = hrm_workload_task_memory(m->wl, task);
    if (tm && tm->working_set < heap)
        heap = tm->working_set;
    m->tasks[task] = (struct mem_task){.node = node, .heap = heap};
    m->nodes[node].heaps += heap;
}

int64_t mem_spill_us(struct mem_model *m, int32_t task, int32_t node)
{
    const struct hrm_task_memory *tm = hrm_workload_task_memory(m->wl, task);
    struct mem_task *mt = &m->tasks[task];
    if (!tm || mt->node != node)
        return 0;
    int64_t excess = tm->working_set - m->wl->tasks[task].req.v[HRM_DIM_MEM];
    if (excess <= 0)
        return 0;
    struct mem_node *n = &m->nodes[node];
    int64_t cache = m->c->nodes[node].capacity.v[HRM_DIM_MEM] - n->heaps - n->cached;
    mt->cached = cache <= 0 ? 0 : excess < cache ? excess : cache;
    n->cached += mt->cached;
    m->total_cached += mt->cached;
    int64_t disk = excess - mt->cached;
    if (disk == 0 || tm->spill_passes == 0)
        return 0;
    mt->on_disk = 1;
    n->spillers++;
    m->total_disk += disk;
    double bw = m->c->nodes[node].disk_bw > 0 ? m->c->nodes[node].disk_bw : m->c->net.disk_bw;
    if (!(bw > 0))
        return 0; /* a cluster without disk bandwidth models no disk */
    double share = bw / (double)n->spillers; /* this task included */
    return (int64_t)((double)tm->spill_passes * (double)disk / share * 1e6 + 0.5);
}

void mem_release(struct mem_model *m, int32_t task)
{
    struct mem_task *mt = &m->tasks[task];
    if (mt->node < 0)
        return;
    struct mem_node *n = &m->nodes[mt->node];
    n->heaps -= mt->heap;
    n->cached -= mt->cached;
    n->spillers -= mt->on_disk;
    *mt = (struct mem_task){.node = -1};
}

void mem_totals(const struct mem_model *m, int64_t *cached, int64_t *disk)
{
    *cached = m ? m->total_cached : 0;
    *disk = m ? m->total_disk : 0;
}
