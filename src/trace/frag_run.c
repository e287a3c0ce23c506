/* The fragmentation experiment: sampled pods arrive until a share of the GPU capacity has been
 * asked for. */
#include <string.h>

#include "frag_private.h"
#include "hrm/alloc.h"
#include "hrm/rng.h"
#include "trace_private.h"

static struct hrm_frag_pod pod_of(const struct hrm_trace_pod *tp)
{
    return (struct hrm_frag_pod){.cpu = tp->cpu_milli,
                                 .mem = tp->mem_mib,
                                 .num_gpu = tp->num_gpu,
                                 .gpu_milli = tp->num_gpu == 1 ? tp->gpu_milli
                                              : tp->num_gpu    ? HRM_FRAG_MILLI
                                                               : 0,
                                 .models = tp->models};
}

/* The type key leaves memory out: the measure does not use it (see frag.h). */
static bool same_type(const struct hrm_frag_pod *a, const struct hrm_frag_pod *b)
{
    return a->cpu == b->cpu && a->num_gpu == b->num_gpu && a->gpu_milli == b->gpu_milli &&
           a->models == b->models;
}

int32_t hrm_frag_types_from_trace(const struct hrm_trace *t, struct hrm_frag_type **types,
                                  int32_t **type_of_pod)
{
    struct hrm_frag_type *ty = NULL;
    size_t cap = 0;
    int32_t n = 0, total = 0;
    int32_t *of = hrm_calloc((size_t)t->npods + 1, sizeof(*of));
    for (int32_t i = 0; i < t->npods; i++) {
        of[i] = -1;
        if (!trace_pod_fits_any(t, &t->pods[i]))
            continue;
        struct hrm_frag_pod p = pod_of(&t->pods[i]);
        int32_t k = 0;
        /* Linear search: traces have about a hundred types. */
        while (k < n && !same_type(&ty[k].pod, &p))
            k++;
        if (k == n) {
            HRM_GROW(ty, cap, (size_t)n + 1);
            ty[n] = (struct hrm_frag_type){.pod = p, .weight = 0};
            ty[n].pod.mem = 0;
            n++;
        }
        ty[k].weight += 1;
        of[i] = k;
        total++;
    }
    for (int32_t k = 0; k < n; k++)
        ty[k].weight /= total;
    *types = ty;
    if (type_of_pod)
        *type_of_pod = of;
    else
        hrm_free(of);
    return n;
}

static struct hrm_frag_point point_of(const struct hrm_frag_cluster *c, int64_t arrived)
{
    double cap = (double)c->gpu_cap;
    return (struct hrm_frag_point){
        .arrived = (double)arrived / cap,
        .allocated = (double)(c->gpu_cap - c->gpu_left) / cap,
        .requested = (double)c->gpu_requested / cap,
        .fragmented = c->frag_total / cap,
        .unallocated = (double)c->gpu_left / cap,
    };
}

static void point_add(struct hrm_frag_point *acc, const struct hrm_frag_point *p, double w)
{
    acc->arrived += w * p->arrived;
    acc->allocated += w * p->allocated;
    acc->requested += w * p->requested;
    acc->fragmented += w * p->fragmented;
    acc->unallocated += w * p->unallocated;
}

/* One run; adds its points (weight 1/runs) into out. */
static void run_once(const struct hrm_trace *t, enum hrm_frag_policy policy,
                     const struct hrm_frag_type *types, int32_t ntypes, const int32_t *pool,
                     int32_t npool, const int32_t *type_of, struct hrm_rng *rng, int32_t until_pct,
                     double w, struct hrm_frag_result *out)
{
    struct hrm_frag_cluster c;
    hrm_frag_cluster_init(&c, t, types, ntypes);
    int64_t arrived = 0, placed = 0, refused = 0;
    int32_t k = 0;
    bool refused_yet = false;
    struct hrm_frag_point pt = point_of(&c, 0);
    point_add(&out->points[k++], &pt, w);
    /* A run ends when the demand that arrived reaches until_pct % of capacity. */
    while (k <= until_pct) {
        int32_t i = pool[hrm_rng_below(rng, (uint64_t)npool)];
        struct hrm_frag_pod p = pod_of(&t->pods[i]);
        struct hrm_frag_choice ch;
        arrived += frag_pod_milli(&p);
        if (hrm_frag_choose(&c, policy, &p, type_of[i], &ch) == 0) {
            hrm_frag_apply(&c, &p, &ch);
            placed++;
        } else {
            if (!refused_yet) {
                pt = point_of(&c, arrived);
                point_add(&out->first_refusal, &pt, 1);
                out->refused_runs++;
                refused_yet = true;
            }
            refused++;
        }
        pt = point_of(&c, arrived);
        while (k <= until_pct && arrived * 100 >= (int64_t)k * c.gpu_cap)
            point_add(&out->points[k++], &pt, w);
    }
    out->placed += w * (double)placed;
    out->refused += w * (double)refused;
    hrm_frag_cluster_fini(&c);
}

int hrm_frag_run(const struct hrm_trace *t, enum hrm_frag_policy policy,
                 const struct hrm_frag_config *cfg, struct hrm_frag_result *out,
                 struct hrm_error *err)
{
    if ((unsigned)policy >= HRM_FRAG_NPOLICIES)
        return hrm_errorf(err, -HRM_ESPEC, "unknown fragmentation policy %d", (int)policy);
    if (cfg->runs < 1 || cfg->runs > 10000)
        return hrm_errorf(err, -HRM_ESPEC, "runs must be 1..10000, got %d", cfg->runs);
    if (cfg->until_pct < 1 || cfg->until_pct >= HRM_FRAG_MAX_POINTS)
        return hrm_errorf(err, -HRM_ESPEC,
                          "the arrivals must stop at 1..%d %% of the GPU "
                          "capacity, got %d",
                          HRM_FRAG_MAX_POINTS - 1, cfg->until_pct);
    int64_t gpus = 0;
    for (int32_t n = 0; n < t->nnodes; n++)
        gpus += t->nodes[n].gpus;
    if (gpus == 0)
        return hrm_errorf(err, -HRM_ESPEC, "%s: the cluster has no GPU",
                          t->nodes_file ? t->nodes_file : "nodes");
    struct hrm_frag_type *types;
    int32_t *type_of;
    int32_t ntypes = hrm_frag_types_from_trace(t, &types, &type_of);
    int32_t *pool = hrm_calloc((size_t)t->npods + 1, sizeof(*pool));
    int32_t npool = 0;
    int64_t pool_gpu = 0;
    for (int32_t i = 0; i < t->npods; i++)
        if (type_of[i] >= 0) {
            pool[npool++] = i;
            pool_gpu += hrm_trace_pod_gpu_milli(&t->pods[i]);
        }
    int rc = 0;
    if (npool == 0 || pool_gpu == 0) {
        /* Without GPU demand the arrivals would never end. */
        rc = hrm_errorf(err, -HRM_ESPEC, "%s: no pod asking a GPU fits a node",
                        t->pods_file ? t->pods_file : "pods");
        goto out;
    }
    memset(out, 0, sizeof(*out));
    out->policy = policy;
    out->runs = cfg->runs;
    out->pool = npool;
    out->ntypes = ntypes;
    out->npoints = cfg->until_pct + 1;
    struct hrm_rng root;
    hrm_rng_seed(&root, cfg->seed);
    for (int32_t r = 0; r < cfg->runs; r++) {
        /* Run r draws the same pods under every policy: one stream per run. */
        struct hrm_rng rng;
        hrm_rng_fork(&root, &rng);
        run_once(t, policy, types, ntypes, pool, npool, type_of, &rng, cfg->until_pct,
                 1.0 / cfg->runs, out);
    }
    if (out->refused_runs > 0) {
        double w = 1.0 / out->refused_runs;
        struct hrm_frag_point sum = out->first_refusal;
        memset(&out->first_refusal, 0, sizeof(out->first_refusal));
        point_add(&out->first_refusal, &sum, w);
    }
out:
    hrm_free(types);
    hrm_free(type_of);
    hrm_free(pool);
    return rc;
}
