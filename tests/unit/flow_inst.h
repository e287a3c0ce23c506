/* Flow test instances: NETGEN-shaped and scheduling-shaped generators, and GLPK as the oracle. */
#ifndef HRM_TEST_FLOW_INST_H
#define HRM_TEST_FLOW_INST_H

#include <glpk.h>
#include <math.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/rng.h"

/* A problem kept beside the solver's graph, so the same data goes to GLPK. */
struct inst {
    int32_t n, m;
    size_t ncap, mcap;
    int64_t *sup;
    int32_t *from, *to;
    int64_t *cap, *cost;
};

static inline int32_t inst_vertex(struct inst *I, int64_t sup)
{
    HRM_GROW(I->sup, I->ncap, (size_t)I->n + 1);
    I->sup[I->n] = sup;
    return I->n++;
}

static inline int32_t inst_arc(struct inst *I, int32_t u, int32_t v, int64_t cap, int64_t cost)
{
    size_t c = I->mcap;
    HRM_GROW(I->from, c, (size_t)I->m + 1);
    c = I->mcap;
    HRM_GROW(I->to, c, (size_t)I->m + 1);
    c = I->mcap;
    HRM_GROW(I->cap, c, (size_t)I->m + 1);
    HRM_GROW(I->cost, I->mcap, (size_t)I->m + 1);
    I->from[I->m] = u;
    I->to[I->m] = v;
    I->cap[I->m] = cap;
    I->cost[I->m] = cost;
    return I->m++;
}

static inline void inst_free(struct inst *I)
{
    hrm_free(I->sup);
    hrm_free(I->from);
    hrm_free(I->to);
    hrm_free(I->cap);
    hrm_free(I->cost);
    *I = (struct inst){0};
}

/* The solver's graph for I (same ids). */
static inline struct hrm_flow *inst_graph(const struct inst *I)
{
    struct hrm_flow *g = hrm_flow_new(I->n, I->m);
    for (int32_t v = 0; v < I->n; v++)
        hrm_flow_add_vertex(g, I->sup[v]);
    for (int32_t a = 0; a < I->m; a++)
        hrm_flow_add_arc(g, I->from[a], I->to[a], I->cap[a], I->cost[a]);
    return g;
}

static inline int64_t rng_range(struct hrm_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)hrm_rng_below(r, (uint64_t)(hi - lo + 1));
}

/*
 * NETGEN-shaped instances (after Klingman, Napier and Stutz, 1974): sources,
 * transshipment vertices and sinks; a skeleton of chains from every source
 * through random transshipment vertices, each chain's end joined to every sink,
 * makes the problem feasible when the skeleton is uncapacitated; random arcs
 * fill up to the arc count, a share of them at the highest cost and a share
 * capacitated.  Random arcs may be parallel, self-loops or of capacity 0.
 */
struct netgen_parm {
    int32_t nodes, sources, sinks, arcs;
    int64_t cost_min, cost_max;
    int64_t supply;
    int64_t cap_min, cap_max;
    int pct_hicost, pct_capacitated;
    bool skeleton_capacitated; /* may make the problem infeasible */
};

static inline void netgen(struct inst *I, const struct netgen_parm *p, uint64_t seed)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, seed);
    for (int32_t v = 0; v < p->nodes; v++)
        inst_vertex(I, 0);
    int32_t base = I->n - p->nodes;
    int32_t ntrans = p->nodes - p->sources - p->sinks;
    int32_t sink0 = base + p->sources + ntrans;
    /* random partitions of the supply over sources and of the demand over sinks */
    for (int64_t u = 0; u < p->supply; u++) {
        I->sup[base + (int32_t)hrm_rng_below(&r, (uint64_t)p->sources)]++;
        I->sup[sink0 + (int32_t)hrm_rng_below(&r, (uint64_t)p->sinks)]--;
    }
    int64_t big = p->supply > 0 ? p->supply : 1;
    for (int32_t s = 0; s < p->sources; s++) {
        int32_t at = base + s;
        int32_t len =
            ntrans > 0 ? (int32_t)hrm_rng_below(&r, (uint64_t)(2 * ntrans / p->sources + 1)) : 0;
        for (int32_t k = 0; k < len; k++) {
            int32_t nx = base + p->sources + (int32_t)hrm_rng_below(&r, (uint64_t)ntrans);
            if (nx == at)
                continue;
            int64_t cap = p->skeleton_capacitated ? rng_range(&r, p->cap_min, p->cap_max) : big;
            inst_arc(I, at, nx, cap, rng_range(&r, p->cost_min, p->cost_max));
            at = nx;
        }
        for (int32_t t = 0; t < p->sinks; t++) {
            int64_t cap = p->skeleton_capacitated ? rng_range(&r, p->cap_min, p->cap_max) : big;
            inst_arc(I, at, sink0 + t, cap, rng_range(&r, p->cost_min, p->cost_max));
        }
    }
    while (I->m < p->arcs) {
        int32_t u = base + (int32_t)hrm_rng_below(&r, (uint64_t)p->nodes);
        int32_t v = base + (int32_t)hrm_rng_below(&r, (uint64_t)p->nodes);
        int64_t cost = (int)hrm_rng_below(&r, 100) < p->pct_hicost
                           ? p->cost_max
                           : rng_range(&r, p->cost_min, p->cost_max);
        int64_t cap = (int)hrm_rng_below(&r, 100) < p->pct_capacitated
                          ? rng_range(&r, p->cap_min, p->cap_max)
                          : big;
        inst_arc(I, u, v, cap, cost);
    }
}

/*
 * Scheduling-shaped instances (P1 with Quincy-style aggregation):
 * S -> job (cap #tasks) -> task (cap 1) -> {machines holding its data, their
 * racks' aggregators, the cluster aggregator} -> machine -> GPU -> T, aggregators
 * per GPU-memory class so that a task only reaches GPUs it fits; and per job an
 * unscheduled vertex u_j (job -> u_j -> T, cap N_j - A_j, cost alpha).
 * Solved as min-cost max-flow from S to T.
 */
struct sched_parm {
    int32_t jobs, tasks_max, racks, machines_per_rack, gpus_per_machine, mem_classes;
    bool unscheduled;
};

static inline void sched_graph(struct inst *I, const struct sched_parm *p, uint64_t seed,
                               int32_t *s_out, int32_t *t_out)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, seed);
    int32_t S = inst_vertex(I, 0), T = inst_vertex(I, 0);
    int32_t nm = p->racks * p->machines_per_rack, nc = p->mem_classes;
    int32_t *mclass = hrm_alloc(sizeof(int32_t) * (size_t)nm);
    int32_t *mach = hrm_alloc(sizeof(int32_t) * (size_t)nm);
    int32_t *rack = hrm_alloc(sizeof(int32_t) * (size_t)(p->racks * nc));
    int32_t *clus = hrm_alloc(sizeof(int32_t) * (size_t)nc);
    for (int32_t c = 0; c < nc; c++)
        clus[c] = inst_vertex(I, 0);
    for (int32_t rk = 0; rk < p->racks; rk++)
        for (int32_t c = 0; c < nc; c++) {
            rack[rk * nc + c] = inst_vertex(I, 0);
            inst_arc(I, clus[c], rack[rk * nc + c], 1000000, 0);
        }
    for (int32_t i = 0; i < nm; i++) {
        mclass[i] = (int32_t)hrm_rng_below(&r, (uint64_t)nc);
        mach[i] = inst_vertex(I, 0);
        int32_t gpus = p->gpus_per_machine;
        inst_arc(I, rack[(i / p->machines_per_rack) * nc + mclass[i]], mach[i], gpus, 0);
        for (int32_t k = 0; k < gpus; k++) {
            int32_t gv = inst_vertex(I, 0);
            inst_arc(I, mach[i], gv, 1, 0);
            inst_arc(I, gv, T, 1, 1);
        }
    }
    int32_t total_gpus = nm * p->gpus_per_machine;
    int32_t share = total_gpus / (p->jobs > 0 ? p->jobs : 1);
    for (int32_t j = 0; j < p->jobs; j++) {
        int32_t ntasks = 1 + (int32_t)hrm_rng_below(&r, (uint64_t)p->tasks_max);
        int32_t jv = inst_vertex(I, 0);
        inst_arc(I, S, jv, ntasks, 1);
        int64_t block = rng_range(&r, 1, 8); /* data per task, in cost units */
        for (int32_t k = 0; k < ntasks; k++) {
            int32_t tv = inst_vertex(I, 0);
            inst_arc(I, jv, tv, 1, 1);
            int32_t need = (int32_t)hrm_rng_below(&r, (uint64_t)nc);
            for (int32_t rep = 0; rep < 2; rep++) {
                int32_t mi = (int32_t)hrm_rng_below(&r, (uint64_t)nm);
                int32_t rk = mi / p->machines_per_rack;
                if (mclass[mi] >= need)
                    inst_arc(I, tv, mach[mi], 1, block);
                for (int32_t c = need; c < nc; c++)
                    inst_arc(I, tv, rack[rk * nc + c], 1, 3 * block);
            }
            for (int32_t c = need; c < nc; c++)
                inst_arc(I, tv, clus[c], 1, 8 * block);
        }
        if (p->unscheduled) {
            int32_t a = share < ntasks ? share : ntasks;
            int32_t uv = inst_vertex(I, 0);
            inst_arc(I, jv, uv, ntasks - a, 50);
            inst_arc(I, uv, T, ntasks - a, 50);
        }
    }
    hrm_free(mclass);
    hrm_free(mach);
    hrm_free(rack);
    hrm_free(clus);
    *s_out = S;
    *t_out = T;
}

/* ---- GLPK oracle ---- */

struct glpk_v {
    double rhs;
};
struct glpk_a {
    double low, cap, cost, x;
};

/* I as a GLPK graph; supplies from sup (NULL: I's). */
static inline glp_graph *inst_glpk(const struct inst *I, const int64_t *sup)
{
    glp_graph *G = glp_create_graph(sizeof(struct glpk_v), sizeof(struct glpk_a));
    glp_add_vertices(G, I->n);
    for (int32_t v = 0; v < I->n; v++)
        ((struct glpk_v *)G->v[v + 1]->data)->rhs = (double)(sup ? sup[v] : I->sup[v]);
    for (int32_t a = 0; a < I->m; a++) {
        if (I->from[a] == I->to[a])
            continue; /* GLPK rejects self-loops: see loop_cost */
        glp_arc *e = glp_add_arc(G, I->from[a] + 1, I->to[a] + 1);
        struct glpk_a *d = e->data;
        d->low = 0;
        d->cap = (double)I->cap[a];
        d->cost = (double)I->cost[a];
        d->x = 0;
    }
    return G;
}

/* A self-loop only changes the cost: saturated when negative. */
static inline int64_t loop_cost(const struct inst *I)
{
    int64_t c = 0;
    for (int32_t a = 0; a < I->m; a++)
        if (I->from[a] == I->to[a] && I->cost[a] < 0)
            c += I->cap[a] * I->cost[a];
    return c;
}

struct ref {
    bool feasible;
    int64_t cost;
};

/* Min-cost flow by GLPK's out-of-kilter algorithm. */
static inline struct ref ref_okalg(const struct inst *I, const int64_t *sup)
{
    glp_graph *G = inst_glpk(I, sup);
    double sol = 0;
    int rc = glp_mincost_okalg(G, offsetof(struct glpk_v, rhs), offsetof(struct glpk_a, low),
                               offsetof(struct glpk_a, cap), offsetof(struct glpk_a, cost), &sol,
                               offsetof(struct glpk_a, x), -1);
    glp_delete_graph(G);
    cr_assert(rc == 0 || rc == GLP_ENOPFS, "glp_mincost_okalg failed: %d", rc);
    return (struct ref){rc == 0, (int64_t)llround(sol) + loop_cost(I)};
}

/* Min-cost flow as an LP (glp_mincost_lp + simplex): an independent check. */
static inline struct ref ref_lp(const struct inst *I, const int64_t *sup)
{
    glp_graph *G = inst_glpk(I, sup);
    glp_prob *P = glp_create_prob();
    glp_mincost_lp(P, G, GLP_OFF, offsetof(struct glpk_v, rhs), offsetof(struct glpk_a, low),
                   offsetof(struct glpk_a, cap), offsetof(struct glpk_a, cost));
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    int rc = glp_simplex(P, &parm);
    struct ref out = {false, 0};
    if (rc == 0 && glp_get_status(P) == GLP_OPT) {
        out.feasible = true;
        out.cost = (int64_t)llround(glp_get_obj_val(P)) + loop_cost(I);
    } else {
        cr_assert(rc == 0 && glp_get_status(P) == GLP_NOFEAS, "glp_simplex: rc %d status %d", rc,
                  glp_get_status(P));
    }
    glp_delete_prob(P);
    glp_delete_graph(G);
    return out;
}

/* Maximum s-t flow value by GLPK's Ford-Fulkerson. */
static inline int64_t ref_maxflow(const struct inst *I, int32_t s, int32_t t)
{
    glp_graph *G = inst_glpk(I, NULL);
    double sol = 0;
    int rc = glp_maxflow_ffalg(G, s + 1, t + 1, offsetof(struct glpk_a, cap), &sol,
                               offsetof(struct glpk_a, x), -1);
    glp_delete_graph(G);
    cr_assert_eq(rc, 0, "glp_maxflow_ffalg failed: %d", rc);
    return (int64_t)llround(sol);
}

/* Supplies of I replaced by value at s and -value at t. */
static inline int64_t *st_supply(const struct inst *I, int32_t s, int32_t t, int64_t value)
{
    int64_t *sup = hrm_calloc((size_t)I->n, sizeof(int64_t));
    sup[s] = value;
    sup[t] = -value;
    return sup;
}

#endif
