/* NPARSA internals (P3): AHP weights from judgment matrices, job typing and node scoring. */
#ifndef HRM_NPARSA_PRIVATE_H
#define HRM_NPARSA_PRIVATE_H

#include <stdbool.h>

#include "hrm/env.h"
#include "hrm/error.h"
#include "hrm/policy.h"
#include "hrm/state.h"

/* ---- AHP (ahp.c) ---- */

#define AHP_MAX_N 10
#define AHP_CR_LIMIT 0.1 /* Saaty: a matrix with CR >= 0.1 is too inconsistent to use */

struct ahp_result {
    int n;
    double w[AHP_MAX_N]; /* principal eigenvector, normalised to sum 1 */
    double lambda_max;
    double ci; /* (lambda_max - n) / (n - 1) */
    double cr; /* ci / RI(n); 0 for n <= 2, which are always consistent */
};

/* Random consistency index RI(n) of the table we use (1 <= n <= AHP_MAX_N). */
double ahp_random_index(int n);

/*
 * Weights of a pairwise judgment matrix m (n x n, row-major): positive
 * entries, ones on the diagonal, m[j][i] = 1/m[i][j] (to 0.1 %).  Fills out
 * whenever the matrix is well formed; returns 0, or -HRM_ESPEC with detail
 * for a malformed matrix or one whose CR >= 0.1 (out is then filled, so the
 * caller can show the CR).
 */
int ahp_weights(const double *m, int n, struct ahp_result *out, struct hrm_error *err);

/* Reads "1,1/2,1/6,2; 2,1,1/4,2; ..." (rows split by ';', entries by ',' or
 * spaces, each a number or a fraction a/b) into m; *n is the row count, which
 * must equal every row's length.  0 or -HRM_ESPEC with detail. */
int ahp_parse_matrix(const char *text, double *m, int *n, struct hrm_error *err);

/* ---- typing and scoring (nparsa.c) ---- */

enum nparsa_type { NPARSA_CPU, NPARSA_MEM };

/* Indicator orders of the weight vectors (the paper's named weights). */
enum { NPARSA_S_CORES, NPARSA_S_MEM, NPARSA_S_DISK, NPARSA_S_SPEED, NPARSA_NSTATIC };
enum { NPARSA_D_CPU, NPARSA_D_MEM, NPARSA_D_IO, NPARSA_D_DISK, NPARSA_NDYNAMIC };

struct nparsa_weights {
    double alpha; /* weight of S; beta = 1 - alpha weighs D */
    double s[NPARSA_NSTATIC];
    double d[NPARSA_NDYNAMIC];
};

/* J = M_r / C_r in GB per core; memory-intensive when J > threshold. */
double nparsa_job_ratio(const struct hrm_state *s, int32_t job);
enum nparsa_type nparsa_job_type(const struct hrm_state *s, int32_t job, double threshold);

/* One node's raw indicators: static ones from the cluster, dynamic ones from
 * the state; io_tasks is the number of running tasks reading input there. */
struct nparsa_node {
    double s[NPARSA_NSTATIC];
    double d[NPARSA_NDYNAMIC];
};
void nparsa_indicators(const struct hrm_state *s, int32_t node, int32_t io_tasks,
                       struct nparsa_node *out);
/* The dynamic CPU and memory indicators less a node's foreign load (its last usage report:
 * what is not an hrm task): (free - foreign) / capacity, 0 when the foreign load takes all. */
void nparsa_less_foreign(struct nparsa_node *ind, const struct hrm_state *s, int32_t node,
                         const struct hrm_usage *foreign);
/* P = alpha S + beta D for every node, each indicator divided by its maximum
 * over the n nodes (0 when that maximum is 0).  Writes score[0..n). */
void nparsa_score(const struct nparsa_node *nodes, int n, const struct nparsa_weights *w,
                  double *score);

/* The score P of every node for a job of the given type with the paper's weights, as
 * nparsa_decide would compute it now (running tasks' reads, the nodes' last foreign load not
 * included: the caller shows a node's standing, not a placement).  score[i] is NAN for a node
 * that is down.  For hrm nodes. */
void nparsa_scores_paper(const struct hrm_state *s, enum nparsa_type type, double *score);

/* ---- the policies built on the scorer: nparsa, nparsa-notype, sdasa, difference ---- */

/* How a node is ranked for a job: NPARSA's P (higher is better) or the "Difference" algorithm's
 * distance between the node's load and the job type's ideal load (smaller is better). */
enum nparsa_scorer { NPARSA_SCORER_AHP, NPARSA_SCORER_DIFFERENCE };

struct nparsa_priv {
    double threshold;
    bool typing;
    enum nparsa_scorer scorer;
    struct nparsa_weights w[2]; /* by enum nparsa_type */
    struct nparsa_node *ind;    /* per node, rebuilt per placement */
    double *score;
    int32_t *io_tasks; /* per node: running tasks that read input */
    int32_t nnodes;
    /* per node: the foreign load of its last usage report (HRM_EV_NODE_USAGE): what is not
     * an hrm task and so is not in the state's free resources */
    struct hrm_usage *foreign;
    int32_t nforeign;
};

/* The paper's named weights for CPU- and memory-intensive jobs. */
extern const struct nparsa_weights nparsa_paper_cpu, nparsa_paper_mem;

/* A priv with the paper's weights, threshold 1.1, the AHP scorer and the given typing; the
 * caller adjusts it and stores it in policy->priv, which nparsa_policy_fini frees. */
struct nparsa_priv *nparsa_priv_new(bool typing);
void nparsa_policy_fini(struct hrm_policy *policy);
void nparsa_policy_on_event(struct hrm_policy *policy, const struct hrm_state *s,
                            const struct hrm_event *ev);
int nparsa_policy_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx);

/* "Difference" (difference.c): score[i] = minus the distance of node i's load from the ideal
 * load of a job of the given type, from the dynamic indicators (free cpu, free memory, free
 * disk as fractions).  Higher is better, as for nparsa_score. */
void difference_score(const struct nparsa_node *nodes, int n, enum nparsa_type type,
                      double *score);

#endif
