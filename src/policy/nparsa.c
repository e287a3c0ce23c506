/* NPARSA (P3): type jobs by memory per core, place on the best AHP-weighted node score. */
#include <math.h>
#include <string.h>

#include "hrm/alloc.h"
#include "policy/nparsa_private.h"
#include "policy/policy_private.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* The paper's named weights (P3): its printed eigenvectors are
 * permutations of these, and its text names each factor's weight. */
const struct nparsa_weights nparsa_paper_cpu = {
    .alpha = 0.5, .s = {0.173, 0.641, 0.113, 0.073}, .d = {0.422, 0.344, 0.156, 0.078}};
const struct nparsa_weights nparsa_paper_mem = {
    .alpha = 0.5, .s = {0.138, 0.513, 0.275, 0.074}, .d = {0.110, 0.442, 0.262, 0.186}};

double nparsa_job_ratio(const struct hrm_state *s, int32_t job)
{
    /* The job's request: the sum over its tasks (a Spark application's
     * executors); the ratio is the same as one task's when tasks are alike. */
    const struct hrm_job *j = &s->wl->jobs[job];
    double mem = 0, cores = 0;
    for (int32_t t = j->task_first; t < j->task_first + j->ntasks; t++) {
        mem += (double)s->wl->tasks[t].req.v[HRM_DIM_MEM] / GIB;
        cores += (double)s->wl->tasks[t].req.v[HRM_DIM_CPU] / 1000.0;
    }
    return cores > 0 ? mem / cores : 0;
}

enum nparsa_type nparsa_job_type(const struct hrm_state *s, int32_t job, double threshold)
{
    /* "J > 1.1: memory-intensive, else CPU-intensive": the threshold itself is CPU. */
    return nparsa_job_ratio(s, job) > threshold ? NPARSA_MEM : NPARSA_CPU;
}

static double ratio(int64_t part, int64_t whole)
{
    if (whole <= 0)
        return 0;
    double r = (double)part / (double)whole;
    return r < 0 ? 0 : r;
}

void nparsa_indicators(const struct hrm_state *s, int32_t node, int32_t io_tasks,
                       struct nparsa_node *out)
{
    const struct hrm_node *n = &s->cluster->nodes[node];
    const struct hrm_res *free = &s->nodes[node].free;
    out->s[NPARSA_S_CORES] = n->cores;
    out->s[NPARSA_S_MEM] = (double)n->mem;
    out->s[NPARSA_S_DISK] = (double)n->disk_size;
    out->s[NPARSA_S_SPEED] = n->cpu_speed;
    out->d[NPARSA_D_CPU] = ratio(free->v[HRM_DIM_CPU], n->capacity.v[HRM_DIM_CPU]);
    out->d[NPARSA_D_MEM] = ratio(free->v[HRM_DIM_MEM], n->capacity.v[HRM_DIM_MEM]);
    /* The disk's read speed a new task can expect: its throughput shared
     * with the tasks already reading there (the network model shares it
     * the same way). */
    double bw = n->disk_bw > 0 ? n->disk_bw : s->cluster->net.disk_bw;
    out->d[NPARSA_D_IO] = bw / (1.0 + io_tasks);
    out->d[NPARSA_D_DISK] = ratio(free->v[HRM_DIM_DISK], n->disk_size);
}

void nparsa_less_foreign(struct nparsa_node *ind, const struct hrm_state *s, int32_t node,
                         const struct hrm_usage *foreign)
{
    const struct hrm_node *n = &s->cluster->nodes[node];
    const struct hrm_res *free = &s->nodes[node].free;
    ind->d[NPARSA_D_CPU] = ratio(free->v[HRM_DIM_CPU] - foreign->cpu, n->capacity.v[HRM_DIM_CPU]);
    ind->d[NPARSA_D_MEM] = ratio(free->v[HRM_DIM_MEM] - foreign->mem, n->capacity.v[HRM_DIM_MEM]);
}

void nparsa_score(const struct nparsa_node *nodes, int n, const struct nparsa_weights *w,
                  double *score)
{
    double smax[NPARSA_NSTATIC] = {0}, dmax[NPARSA_NDYNAMIC] = {0};
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < NPARSA_NSTATIC; k++)
            smax[k] = fmax(smax[k], nodes[i].s[k]);
        for (int k = 0; k < NPARSA_NDYNAMIC; k++)
            dmax[k] = fmax(dmax[k], nodes[i].d[k]);
    }
    for (int i = 0; i < n; i++) {
        double S = 0, D = 0;
        for (int k = 0; k < NPARSA_NSTATIC; k++)
            S += smax[k] > 0 ? w->s[k] * nodes[i].s[k] / smax[k] : 0;
        for (int k = 0; k < NPARSA_NDYNAMIC; k++)
            D += dmax[k] > 0 ? w->d[k] * nodes[i].d[k] / dmax[k] : 0;
        score[i] = w->alpha * S + (1 - w->alpha) * D;
    }
}

void nparsa_scores_paper(const struct hrm_state *s, enum nparsa_type type, double *score)
{
    int32_t n = s->cluster->nnodes, m = 0;
    struct nparsa_node *ind = hrm_calloc((size_t)n + 1, sizeof(*ind));
    double *up = hrm_calloc((size_t)n + 1, sizeof(*up));
    for (int32_t i = 0; i < n; i++) {
        score[i] = NAN;
        if (!s->nodes[i].up)
            continue;
        int32_t io = 0;
        for (int32_t t = s->nodes[i].run_head; t >= 0; t = s->tasks[t].next)
            io += s->wl->tasks[t].nblocks > 0;
        nparsa_indicators(s, i, io, &ind[m++]);
    }
    nparsa_score(ind, m, type == NPARSA_MEM ? &nparsa_paper_mem : &nparsa_paper_cpu, up);
    for (int32_t i = 0, k = 0; i < n; i++)
        if (s->nodes[i].up)
            score[i] = up[k++];
    hrm_free(ind);
    hrm_free(up);
}

/* ---- parameters ---- */

static const char *const nparsa_keys[] = {"threshold",  "typing",      "alpha",
                                          "balance",    "cpu_static",  "cpu_dynamic",
                                          "mem_static", "mem_dynamic", NULL};

/* Weights from a user's n x n judgment matrix under key, if given. */
static int matrix_param(const struct hrm_params *params, const char *policy, const char *key, int n,
                        double *w, bool *given, struct hrm_error *err)
{
    const char *text = NULL;
    for (size_t i = 0; i < params->count; i++) {
        const char *it = params->items[i];
        size_t kl = strlen(key);
        if (it && strncmp(it, key, kl) == 0 && it[kl] == '=')
            text = it + kl + 1; /* the last one wins, as for every parameter */
    }
    if (given)
        *given = text != NULL;
    if (!text)
        return 0;
    double m[AHP_MAX_N * AHP_MAX_N];
    int got = 0;
    struct hrm_error e2;
    int rc = ahp_parse_matrix(text, m, &got, &e2);
    if (!rc && got != n)
        rc = hrm_errorf(&e2, -HRM_ESPEC, "need a %dx%d matrix, got %dx%d", n, n, got, got);
    struct ahp_result r;
    if (!rc)
        rc = ahp_weights(m, n, &r, &e2);
    if (rc)
        return hrm_errorf(err, rc, "policy '%s': parameter '%s': %s", policy, key, e2.text);
    memcpy(w, r.w, (size_t)n * sizeof(double));
    return 0;
}

static int nparsa_configure(struct nparsa_priv *p, const char *name,
                            const struct hrm_params *params, bool typing, struct hrm_error *err)
{
    int rc = hrm_params_check(params, nparsa_keys, name, err);
    if (rc)
        return rc;
    int64_t ty = typing ? 1 : 0;
    /* NaN marks "not given": any number the user writes is range checked. */
    double alpha = NAN;
    struct hrm_error pe = {{0}};
    if ((rc = hrm_params_double(params, "threshold", &p->threshold, &pe)) ||
        (rc = hrm_params_int(params, "typing", &ty, &pe)) ||
        (rc = hrm_params_double(params, "alpha", &alpha, &pe)))
        return hrm_errorf(err, rc, "policy '%s': %s", name, pe.text);
    /* J is GiB per core: beyond 1024 no job is memory-intensive. */
    if (!(p->threshold > 0 && p->threshold <= 1024))
        return hrm_errorf(err, -HRM_ESPEC,
                          "policy '%s': parameter 'threshold' must be in (0, 1024] GiB per core "
                          "(the paper's is 1.1)",
                          name);
    if (ty != 0 && ty != 1)
        return hrm_errorf(err, -HRM_ESPEC, "policy '%s': parameter 'typing' must be 0 or 1", name);
    p->typing = ty == 1;
    double bal[2];
    bool have_bal = false;
    if ((rc = matrix_param(params, name, "balance", 2, bal, &have_bal, err)) ||
        (rc = matrix_param(params, name, "cpu_static", NPARSA_NSTATIC, p->w[NPARSA_CPU].s, NULL,
                           err)) ||
        (rc = matrix_param(params, name, "cpu_dynamic", NPARSA_NDYNAMIC, p->w[NPARSA_CPU].d, NULL,
                           err)) ||
        (rc = matrix_param(params, name, "mem_static", NPARSA_NSTATIC, p->w[NPARSA_MEM].s, NULL,
                           err)) ||
        (rc = matrix_param(params, name, "mem_dynamic", NPARSA_NDYNAMIC, p->w[NPARSA_MEM].d, NULL,
                           err)))
        return rc;
    if (have_bal && !isnan(alpha))
        return hrm_errorf(err, -HRM_ESPEC,
                          "policy '%s': parameters 'alpha' and 'balance': give one, not both",
                          name);
    if (have_bal)
        alpha = bal[0];
    if (!isnan(alpha)) {
        if (!(alpha >= 0 && alpha <= 1))
            return hrm_errorf(err, -HRM_ESPEC, "policy '%s': parameter 'alpha' must be in 0..1",
                              name);
        p->w[NPARSA_CPU].alpha = p->w[NPARSA_MEM].alpha = alpha;
    }
    return 0;
}

struct nparsa_priv *nparsa_priv_new(bool typing)
{
    struct nparsa_priv *p = hrm_calloc(1, sizeof(*p));
    p->threshold = 1.1;
    p->typing = typing;
    p->scorer = NPARSA_SCORER_AHP;
    p->w[NPARSA_CPU] = nparsa_paper_cpu;
    p->w[NPARSA_MEM] = nparsa_paper_mem;
    return p;
}

static int init_common(struct hrm_policy *policy, const char *name, const struct hrm_params *params,
                       bool typing, struct hrm_error *err)
{
    struct nparsa_priv *p = nparsa_priv_new(typing);
    int rc = nparsa_configure(p, name, params, typing, err);
    if (rc) {
        hrm_free(p);
        return rc;
    }
    policy->priv = p;
    return 0;
}

static int nparsa_init(struct hrm_policy *policy, const struct hrm_params *params,
                       struct hrm_error *err)
{
    return init_common(policy, "nparsa", params, true, err);
}

static int notype_init(struct hrm_policy *policy, const struct hrm_params *params,
                       struct hrm_error *err)
{
    return init_common(policy, "nparsa-notype", params, false, err);
}

void nparsa_policy_fini(struct hrm_policy *policy)
{
    struct nparsa_priv *p = policy->priv;
    if (!p)
        return;
    hrm_free(p->ind);
    hrm_free(p->score);
    hrm_free(p->io_tasks);
    hrm_free(p->foreign);
    hrm_free(p);
    policy->priv = NULL;
}

/* Dynamic load (P3's D) from the nodes' usage reports: a node's foreign load takes CPU and
 * memory the allocation shows as free.  Task samples are not used: what a task uses below its
 * allocation is still held for it. */
void nparsa_policy_on_event(struct hrm_policy *policy, const struct hrm_state *s,
                            const struct hrm_event *ev)
{
    struct nparsa_priv *p = policy->priv;
    if (ev->type != HRM_EV_NODE_USAGE || ev->node < 0 || ev->node >= s->cluster->nnodes)
        return;
    if (p->nforeign != s->cluster->nnodes) {
        hrm_free(p->foreign);
        p->nforeign = s->cluster->nnodes;
        p->foreign = hrm_calloc((size_t)p->nforeign, sizeof(*p->foreign));
    }
    p->foreign[ev->node] = ev->usage;
}

/* ---- decisions ---- */

/* The fitting node with the best score for task, ties lowest id; -1 if none. */
static int32_t best_node(struct nparsa_priv *p, const struct hrm_state *s, int32_t task,
                         enum nparsa_type type)
{
    int32_t n = p->nnodes, m = 0;
    /* Normalise over the nodes that are up: a down node is not part of the
     * cluster the indicators compare. */
    int32_t *ids = p->io_tasks + n; /* scratch: second half of the array */
    for (int32_t i = 0; i < n; i++) {
        if (!s->nodes[i].up)
            continue;
        nparsa_indicators(s, i, p->io_tasks[i], &p->ind[m]);
        if (i < p->nforeign)
            nparsa_less_foreign(&p->ind[m], s, i, &p->foreign[i]);
        ids[m++] = i;
    }
    if (p->scorer == NPARSA_SCORER_DIFFERENCE)
        difference_score(p->ind, m, type, p->score);
    else
        nparsa_score(p->ind, m, &p->w[type], p->score);
    int32_t best = -1;
    double bs = -INFINITY;
    for (int32_t k = 0; k < m; k++) {
        if (p->score[k] > bs && hrm_state_fits(s, task, ids[k])) {
            bs = p->score[k];
            best = ids[k];
        }
    }
    return best;
}

/*
 * Alg. 1: jobs in queue (arrival) order; each job is typed (J = M_r/C_r),
 * which selects the weights; each of its ready tasks goes to the node with
 * the highest P = alpha S + beta D among those where it fits, re-scored after
 * every start because the dynamic indicators change.  A task that fits
 * nowhere is skipped for the pass without blocking the others (Spark offers
 * resources to the next application).  O(nodes) per placement.
 */
int nparsa_policy_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    struct nparsa_priv *p = policy->priv;
    const struct hrm_state *s = ctx->state;
    if (s->active_head < 0 || s->free_head < 0)
        return 0;
    int32_t n = s->cluster->nnodes;
    if (p->nnodes != n) {
        hrm_free(p->ind);
        hrm_free(p->score);
        hrm_free(p->io_tasks);
        p->ind = hrm_calloc((size_t)n, sizeof(*p->ind));
        p->score = hrm_calloc((size_t)n, sizeof(*p->score));
        p->io_tasks = hrm_calloc(2 * (size_t)n, sizeof(*p->io_tasks));
        p->nnodes = n;
    }
    for (int32_t i = 0; i < n; i++) {
        p->io_tasks[i] = 0;
        for (int32_t t = s->nodes[i].run_head; t >= 0; t = s->tasks[t].next)
            p->io_tasks[i] += s->wl->tasks[t].nblocks > 0;
    }
    struct policy_fit fit;
    policy_fit_reset(&fit);
    for (int32_t j = s->active_head; j >= 0 && s->free_head >= 0;) {
        int32_t next_job = s->jobs[j].next_active; /* read before starts unlink */
        enum nparsa_type type = p->typing ? nparsa_job_type(s, j, p->threshold) : NPARSA_CPU;
        for (int32_t t = s->jobs[j].ready_head; t >= 0 && s->free_head >= 0;) {
            int32_t next_task = s->tasks[t].next;
            /* The cached first-fit search refuses in O(1) a request that fits nowhere. */
            if (policy_fit_first(&fit, s, t) >= 0) {
                int32_t node = best_node(p, s, t, type);
                int rc = policy_fit_start(&fit, ctx, t, node);
                if (rc)
                    return rc;
                p->io_tasks[node] += s->wl->tasks[t].nblocks > 0;
            }
            t = next_task;
        }
        j = next_job;
    }
    return 0;
}

const struct hrm_policy_ops hrm_policy_nparsa = {
    .name = "nparsa",
    .summary = "NPARSA: typed jobs to the nodes with the best AHP-weighted performance score",
    .init = nparsa_init,
    .fini = nparsa_policy_fini,
    .on_event = nparsa_policy_on_event,
    .decide = nparsa_policy_decide,
};

const struct hrm_policy_ops hrm_policy_nparsa_notype = {
    .name = "nparsa-notype",
    .summary = "NPARSA's scorer without job typing: CPU-intensive weights for every job",
    .init = notype_init,
    .fini = nparsa_policy_fini,
    .on_event = nparsa_policy_on_event,
    .decide = nparsa_policy_decide,
};
