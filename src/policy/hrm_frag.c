/* The hrm policy's fragmentation gradient: FGD's measure (include/hrm/frag.h) over the kinds of
 * task of the workload, as the tie-break among units of equal wait. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/frag.h"
#include "policy/hrm_private.h"

/* A kind of task, the target workload's pod type before it is put in one GPU's terms. */
static bool same_kind(const struct hrmp_kind *a, const struct hrmp_kind *b)
{
    return a->cpu == b->cpu && a->gpus == b->gpus && a->gmem == b->gmem && a->whole == b->whole;
}

static struct hrmp_kind kind_of(const struct hrm_state *s, int32_t t)
{
    const struct hrm_res *req = &s->wl->tasks[t].req;
    int64_t k = req->v[HRM_DIM_GPU];
    return (struct hrmp_kind){.cpu = req->v[HRM_DIM_CPU],
                              .gpus = (int32_t)k,
                              .gmem = k > 0 ? hrm_ru_task_gmem(req) : 0,
                              .whole = k > 1 || (k == 1 && !hrmp_stackable(s, t))};
}

/* The memo's size limit: (units x kinds) entries of 24 bytes, 96 MiB. */
#define GMEMO_MAX (4u << 20)

/* The kind of task t, added to the kinds if new; its index. */
static int32_t kind_index(struct hrmp *p, const struct hrm_state *s, int32_t t)
{
    struct hrmp_kind k = kind_of(s, t);
    int32_t i = 0;
    /* Linear search: workloads have a few hundred kinds at most. */
    while (i < p->nkinds && !same_kind(&p->kinds[i], &k))
        i++;
    if (i == p->nkinds) {
        HRM_GROW(p->kinds, p->cap_kinds, (size_t)p->nkinds + 1);
        p->kinds[p->nkinds++] = k;
    }
    p->kinds[i].count++;
    return i;
}

void hrmp_frag_build(struct hrmp *p, const struct hrm_state *s)
{
    p->nkinds = 0;
    p->task_kind = hrm_calloc((size_t)s->wl->ntasks + 1, sizeof(*p->task_kind));
    for (int32_t t = 0; t < s->wl->ntasks; t++) {
        int32_t i = kind_index(p, s, t);
        p->kinds[i].weight += 1.0 / s->wl->ntasks;
        p->task_kind[t] = i;
    }
    p->ftypes = hrm_calloc((size_t)p->nkinds + 1, sizeof(*p->ftypes));
    p->ftypes_gmem = -1;
    p->node_version = hrm_calloc((size_t)p->nnodes + 1, sizeof(*p->node_version));
    /* Most nodes do not change between two placements: measure each (unit,
     * kind) again only when its node did. */
    if ((uint64_t)p->nru * (uint64_t)p->nkinds <= GMEMO_MAX)
        p->gmemo = hrm_calloc((size_t)p->nru * (size_t)p->nkinds + 1, sizeof(*p->gmemo));
}

void hrmp_frag_grow(struct hrmp *p, const struct hrm_state *s, int32_t from)
{
    int32_t ntasks = s->wl->ntasks, had = p->nkinds;
    if (p->cap_task_kind == 0)
        p->cap_task_kind = (size_t)from + 1; /* as build made it */
    HRM_GROW(p->task_kind, p->cap_task_kind, (size_t)ntasks + 1);
    for (int32_t t = from; t < ntasks; t++)
        p->task_kind[t] = kind_index(p, s, t);
    for (int32_t i = 0; i < p->nkinds; i++)
        p->kinds[i].weight = (double)p->kinds[i].count / ntasks;
    if (p->nkinds > had) {
        hrm_free(p->ftypes);
        p->ftypes = hrm_calloc((size_t)p->nkinds + 1, sizeof(*p->ftypes));
    }
    p->ftypes_gmem = -1; /* the weights changed: the types again */
    /* Every growth measured was for the old weights. */
    hrm_free(p->gmemo);
    p->gmemo = NULL;
    if ((uint64_t)p->nru * (uint64_t)p->nkinds <= GMEMO_MAX)
        p->gmemo = hrm_calloc((size_t)p->nru * (size_t)p->nkinds + 1, sizeof(*p->gmemo));
}

void hrmp_frag_fini(struct hrmp *p)
{
    hrm_free(p->kinds);
    hrm_free(p->ftypes);
    hrm_free(p->task_kind);
    hrm_free(p->node_version);
    hrm_free(p->gmemo);
}

static double measure(struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u);

double hrmp_frag_growth(struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u)
{
    if (p->nkinds == 0)
        return 0;
    int32_t node = p->ru[u].node;
    int64_t cpu_free = s->nodes[node].free.v[HRM_DIM_CPU];
    struct hrmp_gmemo *m =
        p->gmemo ? &p->gmemo[(size_t)u * (size_t)p->nkinds + (size_t)p->task_kind[task]] : NULL;
    if (m && m->version1 == p->node_version[node] + 1 && m->cpu_free == cpu_free)
        return m->growth;
    double g = measure(p, s, task, u);
    if (m)
        *m = (struct hrmp_gmemo){
            .version1 = p->node_version[node] + 1, .cpu_free = cpu_free, .growth = g};
    return g;
}

/* The kinds as pod types in thousandths of one GPU of gmem bytes (GPUs of a
 * node are alike; nodes may differ). */
static void types_for(struct hrmp *p, int64_t gmem)
{
    if (p->ftypes_gmem == gmem)
        return;
    for (int32_t i = 0; i < p->nkinds; i++) {
        const struct hrmp_kind *k = &p->kinds[i];
        int64_t milli = k->whole ? HRM_FRAG_MILLI : (k->gmem * HRM_FRAG_MILLI + gmem - 1) / gmem;
        p->ftypes[i] = (struct hrm_frag_type){
            .pod = {.cpu = k->cpu,
                    .num_gpu = k->gpus,
                    .gpu_milli = (int32_t)(milli < HRM_FRAG_MILLI ? milli : HRM_FRAG_MILLI)},
            .weight = k->weight};
    }
    p->ftypes_gmem = gmem;
}

static double measure(struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t u)
{
    const struct hrm_ru *ru = &p->ru[u];
    int32_t node = ru->node, first = p->ru_first[node], gpus = p->c->nodes[node].gpus;
    int64_t gmem = gpus > 0 ? p->ru[first].gmem : 0;
    if (gmem <= 0)
        return 0; /* GPU memory not modelled: nothing the measure can tell apart */
    types_for(p, gmem);
    struct hrm_frag_node n = {.cpu_cap = p->c->nodes[node].capacity.v[HRM_DIM_CPU],
                              .cpu_left = s->nodes[node].free.v[HRM_DIM_CPU],
                              .gpus = gpus,
                              .model = -1};
    for (int32_t g = 0; g < gpus; g++)
        n.gpu_left[g] = (int32_t)(hrmp_gpu_free(p, first + g) * HRM_FRAG_MILLI / gmem);
    double before = hrm_frag_node_amount(&n, p->ftypes, p->nkinds);
    const struct hrmp_kind k = p->kinds[p->task_kind[task]];
    n.cpu_left -= k.cpu;
    if (k.gpus == 1) {
        int32_t take = k.whole ? n.gpu_left[ru->gpu]
                               : (int32_t)((k.gmem * HRM_FRAG_MILLI + gmem - 1) / gmem);
        n.gpu_left[ru->gpu] -= take < n.gpu_left[ru->gpu] ? take : n.gpu_left[ru->gpu];
    } else {
        /* Several GPUs: whole idle ones, lowest first, as the state picks them. */
        for (int32_t g = 0, left = k.gpus; g < gpus && left > 0; g++)
            if (n.gpu_left[g] == HRM_FRAG_MILLI) {
                n.gpu_left[g] = 0;
                left--;
            }
    }
    return hrm_frag_node_amount(&n, p->ftypes, p->nkinds) - before;
}
