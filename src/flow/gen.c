/* NETGEN-, GRIDGEN- and GOTO-style min-cost flow instances, and the P1 family in supply form. */
#include <errno.h>
#include <stdint.h>

#include "hrm/alloc.h"
#include "hrm/flowgen.h"
#include "hrm/rng.h"

static long long between(struct hrm_rng *rng, long long lo, long long hi)
{
    return lo + (long long)hrm_rng_below(rng, (uint64_t)(hi - lo) + 1);
}

void hrm_flowgen_defaults(enum hrm_flowgen_family fam, char size, struct hrm_flowgen_params *p)
{
    int m = size == 'M';
    *p = (struct hrm_flowgen_params){.cost_min = 1, .cost_max = 10000, .cap_min = 1,
                                      .cap_max = 1000, .seed = 1};
    switch (fam) {
    case HRM_FLOWGEN_NETGEN:
        /* the sizes of NETGEN's classic problems 1-5 (S) and of a larger one (M) */
        p->nodes = m ? 8000 : 2000;
        p->arcs = m ? 64000 : 16000;
        p->sources = m ? 80 : 20;
        p->sinks = m ? 80 : 20;
        p->supply = m ? 400000 : 100000;
        break;
    case HRM_FLOWGEN_GRIDGEN:
        p->rows = m ? 80 : 40;
        p->cols = m ? 100 : 50;
        p->arcs = m ? 48000 : 12000;
        p->sources = m ? 40 : 10;
        p->sinks = m ? 40 : 10;
        p->supply = m ? 200000 : 50000;
        break;
    case HRM_FLOWGEN_GOTO:
        /* GOTO's wide ranges: costs up to 2^20, capacities up to 2^16 */
        p->rows = m ? 90 : 45;
        p->cols = m ? 90 : 45;
        p->arcs = m ? 8 * 8100 : 8 * 2025;
        p->sources = p->sinks = 1;
        p->supply = m ? 1 << 22 : 1 << 20;
        p->cost_max = 1 << 20;
        p->cap_max = 1 << 16;
        break;
    case HRM_FLOWGEN_P1:
        /* S: few large jobs, per-GPU arcs; M: many small jobs on a bigger cluster */
        hrm_flowgen_p1_defaults(&p->p1);
        p->p1.gpus = m ? 10000 : 1000;
        p->p1.jobs = m ? 1000 : 10;
        p->p1.tasks_per_job = m ? 10 : 200;
        break;
    }
}

int hrm_flowgen_check(enum hrm_flowgen_family fam, const struct hrm_flowgen_params *p,
                      struct hrm_error *err)
{
    if (fam == HRM_FLOWGEN_P1) {
        const struct hrm_flowgen_p1 *q = &p->p1;
        if (q->gpus < 1 || q->gpus > 10000000)
            return hrm_errorf(err, -EINVAL, "--gpus: %lld is not in [1, 10000000]", q->gpus);
        if (q->jobs < 1 || q->jobs > 10000000)
            return hrm_errorf(err, -EINVAL, "--jobs: %lld is not in [1, 10000000]", q->jobs);
        if (q->tasks_per_job < 1 || q->tasks_per_job > 10000000)
            return hrm_errorf(err, -EINVAL, "--tasks-per-job: %lld is not in [1, 10000000]",
                              q->tasks_per_job);
        if (q->gpus_per_machine < 1 || q->gpus_per_machine > 1024)
            return hrm_errorf(err, -EINVAL, "--gpus-per-machine: %lld is not in [1, 1024]",
                              q->gpus_per_machine);
        if (q->machines_per_rack < 1 || q->machines_per_rack > 100000)
            return hrm_errorf(err, -EINVAL, "--machines-per-rack: %lld is not in [1, 100000]",
                              q->machines_per_rack);
        if (q->jobs * q->tasks_per_job > 50000000)
            return hrm_errorf(err, -EINVAL, "--jobs x --tasks-per-job: at most 50,000,000 tasks");
        return 0;
    }
    if (p->cost_min < 0 || p->cost_min > p->cost_max || p->cost_max > HRM_FLOW_COST_MAX)
        return hrm_errorf(err, -EINVAL, "--cost-min/--cost-max: need 0 <= min <= max <= %lld",
                          (long long)HRM_FLOW_COST_MAX);
    if (p->cap_min < 1 || p->cap_min > p->cap_max || p->cap_max > HRM_FLOW_CAP_MAX)
        return hrm_errorf(err, -EINVAL, "--cap-min/--cap-max: need 1 <= min <= max <= %lld",
                          (long long)HRM_FLOW_CAP_MAX);
    long long n;
    if (fam == HRM_FLOWGEN_NETGEN) {
        n = p->nodes;
        if (n < 2 || n > HRM_FLOW_DIMACS_MAX_VERTICES)
            return hrm_errorf(err, -EINVAL, "--nodes: %lld is not in [2, %d]", n,
                              HRM_FLOW_DIMACS_MAX_VERTICES);
        if (p->arcs < n || p->arcs > 200000000)
            return hrm_errorf(err, -EINVAL,
                              "--arcs: %lld is below --nodes (%lld, the skeleton) or above "
                              "200000000",
                              p->arcs, n);
    } else {
        /* 4096 x 4096 is the DIMACS reader's most vertices */
        if (p->rows < 2 || p->rows > 4096)
            return hrm_errorf(err, -EINVAL, "--rows: %lld is not in [2, 4096]", p->rows);
        if (p->cols < 2 || p->cols > 4096)
            return hrm_errorf(err, -EINVAL, "--cols: %lld is not in [2, 4096]", p->cols);
        n = p->rows * p->cols;
        long long grid = fam == HRM_FLOWGEN_GOTO ? 2 * n
                                                 : 2 * (p->rows * (p->cols - 1) +
                                                        p->cols * (p->rows - 1));
        if (p->arcs < grid || p->arcs > 200000000)
            return hrm_errorf(err, -EINVAL,
                              "--arcs: %lld is below the %lld arcs of the grid or above "
                              "200000000",
                              p->arcs, grid);
    }
    if (p->sources < 1 || p->sinks < 1 || p->sources + p->sinks > n)
        return hrm_errorf(err, -EINVAL,
                          "--sources/--sinks: need >= 1 each and at most %lld together", n);
    if (p->supply < p->sources || p->supply < p->sinks || p->supply > HRM_FLOW_CAP_MAX)
        return hrm_errorf(err, -EINVAL,
                          "--supply: %lld is below --sources or --sinks, or above %lld",
                          p->supply, (long long)HRM_FLOW_CAP_MAX);
    /* the DIMACS reader's bound on the total cost: sum over arcs of cost x min(capacity, supply) */
    if ((long double)p->arcs * (long double)p->cost_max * (long double)p->supply >
        (long double)INT64_MAX / 2)
        return hrm_errorf(err, -EINVAL,
                          "--supply x --cost-max x --arcs: the total cost could overflow 64-bit "
                          "integers; lower one of them");
    return 0;
}

/* Splits total into k random parts >= 1 and adds sign x part to the supply of vertex v[i]. */
static void split(struct hrm_flow *g, struct hrm_rng *rng, const int32_t *v, long long k,
                  long long total, int sign)
{
    long long left = total - k; /* what is above the 1 each gets */
    for (long long i = 0; i < k; i++) {
        long long part = 1 + (i == k - 1 ? left : (long long)hrm_rng_below(rng, (uint64_t)left / 2 + 1));
        left -= part - 1;
        hrm_flow_set_supply(g, v[i], hrm_flow_supply(g, v[i]) + sign * part);
    }
}

static void random_arc(struct hrm_flow *g, struct hrm_rng *rng, const struct hrm_flowgen_params *p,
                       int32_t from, int32_t to)
{
    hrm_flow_add_arc(g, from, to, between(rng, p->cap_min, p->cap_max),
                     between(rng, p->cost_min, p->cost_max));
}

static void netgen(struct hrm_flow *g, struct hrm_rng *rng, const struct hrm_flowgen_params *p)
{
    int32_t n = (int32_t)p->nodes;
    int32_t *order = hrm_alloc(sizeof(int32_t) * (size_t)n);
    for (int32_t v = 0; v < n; v++) {
        hrm_flow_add_vertex(g, 0);
        order[v] = v;
    }
    split(g, rng, order, p->sources, p->supply, 1);
    split(g, rng, order + n - p->sinks, p->sinks, p->supply, -1);
    /* skeleton: a cycle through every vertex in random order */
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)hrm_rng_below(rng, (uint64_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int32_t i = 0; i < n; i++)
        hrm_flow_add_arc(g, order[i], order[(i + 1) % n], p->supply, p->cost_max);
    for (long long a = n; a < p->arcs; a++) {
        int32_t u = (int32_t)hrm_rng_below(rng, (uint64_t)n);
        int32_t w = (int32_t)hrm_rng_below(rng, (uint64_t)n - 1);
        random_arc(g, rng, p, u, w >= u ? w + 1 : w);
    }
    hrm_free(order);
}

/* GRIDGEN (torus = 0) and GOTO (torus = 1). */
static void grid(struct hrm_flow *g, struct hrm_rng *rng, const struct hrm_flowgen_params *p,
                 int torus)
{
    int32_t R = (int32_t)p->rows, C = (int32_t)p->cols, n = R * C;
    for (int32_t v = 0; v < n; v++)
        hrm_flow_add_vertex(g, 0);
#define AT(r, c) ((int32_t)((((r) + R) % R) * C + (((c) + C) % C)))
    long long added = 0;
    for (int32_t r = 0; r < R; r++)
        for (int32_t c = 0; c < C; c++) {
            /* skeleton: horizontal arcs and column 0's vertical arcs carry everything */
            int32_t dirs[4][2] = {{0, 1}, {1, 0}, {0, -1}, {-1, 0}};
            for (int d = 0; d < (torus ? 2 : 4); d++) {
                int32_t r2 = r + dirs[d][0], c2 = c + dirs[d][1];
                if (!torus && (r2 < 0 || r2 >= R || c2 < 0 || c2 >= C))
                    continue;
                int skel = dirs[d][0] == 0 || c == 0;
                if (skel)
                    hrm_flow_add_arc(g, AT(r, c), AT(r2, c2), p->supply, p->cost_max);
                else
                    random_arc(g, rng, p, AT(r, c), AT(r2, c2));
                added++;
            }
        }
    for (; added < p->arcs; added++) {
        int32_t r = (int32_t)hrm_rng_below(rng, (uint64_t)R);
        int32_t c = (int32_t)hrm_rng_below(rng, (uint64_t)C);
        if (!torus) {
            int32_t w = (int32_t)hrm_rng_below(rng, (uint64_t)n - 1);
            random_arc(g, rng, p, AT(r, c), w >= AT(r, c) ? w + 1 : w);
            continue;
        }
        /* GOTO: a jump of (dr, dc) costs in proportion to its length, so long cheap-per-step
         * detours compete with many short arcs: the structure that makes scaling slow */
        int32_t dr = (int32_t)between(rng, 1, R / 2), dc = (int32_t)between(rng, 0, C / 2);
        long long len = dr + dc, maxlen = R / 2 + C / 2;
        long long cost = p->cost_min + (p->cost_max - p->cost_min) * len / maxlen;
        cost -= (long long)hrm_rng_below(rng, (uint64_t)(cost - p->cost_min) / 4 + 1);
        hrm_flow_add_arc(g, AT(r, c), AT(r + dr, c + dc), between(rng, p->cap_min, p->cap_max),
                         cost);
    }
    int32_t *src = hrm_alloc(sizeof(int32_t) * (size_t)(p->sources + p->sinks));
    if (torus) {
        src[0] = AT(0, 0);
        src[1] = AT(R / 2, C / 2);
    } else {
        /* distinct random grid vertices: a partial shuffle of all of them */
        int32_t *all = hrm_alloc(sizeof(int32_t) * (size_t)n);
        for (int32_t v = 0; v < n; v++)
            all[v] = v;
        for (long long i = 0; i < p->sources + p->sinks; i++) {
            int32_t j = (int32_t)between(rng, i, n - 1), t = all[i];
            all[i] = all[j];
            all[j] = t;
            src[i] = all[i];
        }
        hrm_free(all);
    }
#undef AT
    split(g, rng, src, p->sources, p->supply, 1);
    split(g, rng, src + p->sources, p->sinks, p->supply, -1);
    hrm_free(src);
}

/* P1 in the form LEMON and DIMACS take: the maximum S -> T flow as fixed supplies. */
static int p1(const struct hrm_flowgen_params *p, struct hrm_flow **out, struct hrm_error *err)
{
    struct hrm_flowgen_p1 q = p->p1;
    q.seed = p->seed;
    struct hrm_flowgen_sched s = {0};
    hrm_flowgen_p1_build(&q, &s);
    hrm_flow_set_algo(s.g, HRM_FLOW_SCALING);
    int rc = hrm_flow_solve_max(s.g, s.S, s.T, err);
    if (rc == 0) {
        hrm_flow_set_supply(s.g, s.S, hrm_flow_value(s.g));
        hrm_flow_set_supply(s.g, s.T, -hrm_flow_value(s.g));
        hrm_flow_reset(s.g);
        hrm_flow_set_algo(s.g, HRM_FLOW_AUTO);
        *out = s.g;
        s.g = NULL;
    }
    hrm_flowgen_sched_fini(&s);
    return rc;
}

int hrm_flowgen_build(enum hrm_flowgen_family fam, const struct hrm_flowgen_params *p,
                      struct hrm_flow **out, struct hrm_error *err)
{
    int rc = hrm_flowgen_check(fam, p, err);
    if (rc < 0)
        return rc;
    if (fam == HRM_FLOWGEN_P1)
        return p1(p, out, err);
    struct hrm_rng rng;
    hrm_rng_seed(&rng, p->seed);
    struct hrm_flow *g = hrm_flow_new((int32_t)(fam == HRM_FLOWGEN_NETGEN ? p->nodes
                                                                         : p->rows * p->cols),
                                      (int32_t)p->arcs);
    if (fam == HRM_FLOWGEN_NETGEN)
        netgen(g, &rng, p);
    else
        grid(g, &rng, p, fam == HRM_FLOWGEN_GOTO);
    *out = g;
    return 0;
}
