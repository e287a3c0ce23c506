/* "Difference" (cited by P3 as its ref. [15]): the node whose load differs least from what the
 * job's type wants. */
#include <math.h>

#include "hrm/alloc.h"
#include "policy/nparsa_private.h"
#include "policy/policy_private.h"

/*
 * What P3 says of it: the job's type (compute- or memory-intensive) comes from the user; a
 * node's load is its CPU component, its memory component and an "other" component (disk
 * capacity and the rest); nodes with a low CPU and a high memory utilisation go to
 * compute-intensive jobs, nodes with a low memory utilisation to memory-intensive ones; the
 * degree of the job-node "matching difference" decides.  What we infer (docs/reproduction-p3.md):
 *  - the difference is the Euclidean distance between the node's utilisation vector
 *    (cpu, memory, other = disk used) and the type's ideal: (0, 1, 0) for a CPU-intensive job,
 *    (-, 0, 0) for a memory-intensive one (its CPU component is left out: P3 names none);
 *  - utilisation is the allocation's (and a node's foreign load, as for NPARSA), the
 *    configuration (cores, speed, disk speed) does not enter: the algorithm ranks load only;
 *  - the user's declared type is J = M_r / C_r against the same threshold (1.1, parameter
 *    "threshold"): on P3's workloads it types WordCount, K-means and PageRank as CPU- and Sort
 *    as memory-intensive, as P3 declares them.
 */

void difference_score(const struct nparsa_node *nodes, int n, enum nparsa_type type,
                      double *score)
{
    for (int i = 0; i < n; i++) {
        double cpu = 1 - nodes[i].d[NPARSA_D_CPU]; /* the indicators are free fractions */
        double mem = 1 - nodes[i].d[NPARSA_D_MEM];
        double other = 1 - nodes[i].d[NPARSA_D_DISK];
        double d2 = type == NPARSA_CPU ? cpu * cpu + (1 - mem) * (1 - mem) + other * other
                                       : mem * mem + other * other;
        score[i] = -sqrt(d2);
    }
}

static const char *const difference_keys[] = {"threshold", NULL};

static int difference_init(struct hrm_policy *policy, const struct hrm_params *params,
                           struct hrm_error *err)
{
    int rc = hrm_params_check(params, difference_keys, "difference", err);
    if (rc)
        return rc;
    struct nparsa_priv *p = nparsa_priv_new(true);
    struct hrm_error pe = {{0}};
    if ((rc = hrm_params_double(params, "threshold", &p->threshold, &pe))) {
        hrm_free(p);
        return hrm_errorf(err, rc, "policy 'difference': %s", pe.text);
    }
    if (!(p->threshold > 0 && p->threshold <= 1024)) {
        hrm_free(p);
        return hrm_errorf(err, -HRM_ESPEC,
                          "policy 'difference': parameter 'threshold' must be in (0, 1024] GiB "
                          "per core");
    }
    p->scorer = NPARSA_SCORER_DIFFERENCE;
    policy->priv = p;
    return 0;
}

const struct hrm_policy_ops hrm_policy_difference = {
    .name = "difference",
    .summary = "Difference: typed jobs to the nodes whose load differs least from the type's ideal",
    .init = difference_init,
    .fini = nparsa_policy_fini,
    .on_event = nparsa_policy_on_event,
    .decide = nparsa_policy_decide,
};
