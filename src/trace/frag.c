/* The FGD paper's fragmentation measure and a packing cluster that keeps it current. */
#include <string.h>

#include "frag_private.h"
#include "hrm/alloc.h"

static const char *const policy_names[HRM_FRAG_NPOLICIES] = {
    [HRM_FRAG_BESTFIT] = "bestfit",
    [HRM_FRAG_EXCLUSIVE] = "exclusive",
    [HRM_FRAG_STACK] = "hrm",
    [HRM_FRAG_FGD] = "fgd",
};

const char *hrm_frag_policy_name(enum hrm_frag_policy p)
{
    return (unsigned)p < HRM_FRAG_NPOLICIES ? policy_names[p] : "?";
}

int hrm_frag_policy_parse(const char *name)
{
    for (int i = 0; i < HRM_FRAG_NPOLICIES; i++)
        if (strcmp(name, policy_names[i]) == 0)
            return i;
    return -1;
}

bool frag_model_ok(const struct hrm_frag_node *n, uint64_t models)
{
    return !models || (n->model >= 0 && (models >> n->model & 1));
}

int64_t hrm_frag_node_pod(const struct hrm_frag_node *n, const struct hrm_frag_pod *m)
{
    int64_t left = 0;
    for (int32_t g = 0; g < n->gpus; g++)
        left += n->gpu_left[g];
    /* A pod without GPU uses none of them, a pod barred from the model none either. */
    if (m->num_gpu == 0 || !frag_model_ok(n, m->models) || n->cpu_left < m->cpu)
        return left;
    int32_t need = m->num_gpu == 1 ? m->gpu_milli : HRM_FRAG_MILLI;
    int64_t small = 0;
    int32_t fit = 0;
    for (int32_t g = 0; g < n->gpus; g++) {
        if (n->gpu_left[g] >= need)
            fit++;
        else
            small += n->gpu_left[g];
    }
    return fit >= m->num_gpu ? small : left;
}

double hrm_frag_node_amount(const struct hrm_frag_node *n, const struct hrm_frag_type *types,
                            int32_t ntypes)
{
    if (n->gpus == 0)
        return 0; /* nothing to fragment; the common CPU-only node costs nothing */
    double f = 0;
    for (int32_t i = 0; i < ntypes; i++)
        f += types[i].weight * (double)hrm_frag_node_pod(n, &types[i].pod);
    return f;
}

void hrm_frag_cluster_init(struct hrm_frag_cluster *c, const struct hrm_trace *t,
                           const struct hrm_frag_type *types, int32_t ntypes)
{
    memset(c, 0, sizeof(*c));
    c->nnodes = t->nnodes;
    c->nodes = hrm_calloc((size_t)t->nnodes + 1, sizeof(*c->nodes));
    c->frag = hrm_calloc((size_t)t->nnodes + 1, sizeof(*c->frag));
    c->version = hrm_calloc((size_t)t->nnodes + 1, sizeof(*c->version));
    c->types = types;
    c->ntypes = ntypes;
    for (int32_t i = 0; i < t->nnodes; i++) {
        const struct hrm_trace_node *tn = &t->nodes[i];
        struct hrm_frag_node *n = &c->nodes[i];
        n->cpu_cap = n->cpu_left = tn->cpu_milli;
        n->mem_cap = n->mem_left = tn->mem_mib;
        n->gpus = tn->gpus;
        n->model = tn->model;
        for (int32_t g = 0; g < n->gpus; g++)
            n->gpu_left[g] = HRM_FRAG_MILLI;
        c->gpu_cap += (int64_t)n->gpus * HRM_FRAG_MILLI;
        c->frag[i] = hrm_frag_node_amount(n, types, ntypes);
        c->frag_total += c->frag[i];
    }
    c->gpu_left = c->gpu_cap;
}

void hrm_frag_cluster_fini(struct hrm_frag_cluster *c)
{
    hrm_free(c->nodes);
    hrm_free(c->frag);
    hrm_free(c->version);
    hrm_free(c->memo);
    memset(c, 0, sizeof(*c));
}

void frag_node_place(struct hrm_frag_node *n, const struct hrm_frag_pod *pod,
                     const struct hrm_frag_choice *ch)
{
    n->cpu_left -= pod->cpu;
    n->mem_left -= pod->mem;
    if (!ch->gpus)
        n->cpu_tasks++;
    for (int32_t g = 0; g < n->gpus; g++)
        if (ch->gpus >> g & 1) {
            n->gpu_left[g] -= ch->milli_each;
            n->gpu_tasks[g]++;
        }
}

void hrm_frag_apply(struct hrm_frag_cluster *c, const struct hrm_frag_pod *pod,
                    const struct hrm_frag_choice *ch)
{
    struct hrm_frag_node *n = &c->nodes[ch->node];
    frag_node_place(n, pod, ch);
    int64_t held = (int64_t)__builtin_popcount(ch->gpus) * ch->milli_each;
    c->gpu_left -= held;
    c->gpu_requested += frag_pod_milli(pod);
    c->frag_total -= c->frag[ch->node];
    c->frag[ch->node] = hrm_frag_node_amount(n, c->types, c->ntypes);
    c->frag_total += c->frag[ch->node];
    c->version[ch->node]++;
}
