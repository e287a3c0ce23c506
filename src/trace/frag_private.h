/* Internals of the fragmentation experiment shared by frag.c, frag_policy.c and frag_run.c. */
#ifndef HRM_FRAG_PRIVATE_H
#define HRM_FRAG_PRIVATE_H

#include "hrm/frag.h"
#include "hrm/ru.h"

/* The memo entry of one (node, pod type): the node's best option under the
 * cluster's policy (a cluster is packed by one policy). */
struct fgd_memo {
    uint32_t version1; /* node version + 1 when computed; 0 = never */
    bool feasible;
    double delta;             /* FGD: growth of the node's expected fragmentation */
    struct hrm_ru_cost cost;  /* hrm: the option's cost (hrm_ru_prefer) */
    struct hrm_frag_choice choice;
};

/* GPU share a pod asks for, thousandths (num_gpu x 1000 for whole GPUs). */
static inline int64_t frag_pod_milli(const struct hrm_frag_pod *p)
{
    return p->num_gpu == 1 ? p->gpu_milli : (int64_t)p->num_gpu * HRM_FRAG_MILLI;
}

bool frag_model_ok(const struct hrm_frag_node *n, uint64_t models);
/* Takes the pod's resources from n as chosen. */
void frag_node_place(struct hrm_frag_node *n, const struct hrm_frag_pod *pod,
                     const struct hrm_frag_choice *ch);

#endif
