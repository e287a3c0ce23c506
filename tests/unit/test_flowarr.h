/* Checks of warm re-solves shared by the flow tests: an optimality certificate
 * and the same problem solved from scratch in a fresh graph. */
#ifndef HRM_TEST_FLOWARR_H
#define HRM_TEST_FLOWARR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "flow/flow_private.h"
#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/flowgen.h"
#include "hrm/rng.h"

/* A P1 shape drawn from a seed, so that a test sweeps a family of shapes: each count is
 * `base + seed * mult % span` of its range {base, mult, span}; per GPU or per machine as asked. */
struct p1_range {
    long long base, mult, span;
};

static inline long long p1_pick(uint64_t seed, struct p1_range r)
{
    return r.base + (long long)(seed * (uint64_t)r.mult % (uint64_t)r.span);
}

static inline void p1_shape_of(uint64_t seed, bool per_gpu, struct p1_range gpus,
                               struct p1_range jobs, struct p1_range tasks, struct p1_range racks,
                               struct hrm_flowgen_sched *s, struct hrm_flowgen_p1 *out)
{
    struct hrm_flowgen_p1 q;
    hrm_flowgen_p1_defaults(&q);
    q.seed = seed;
    q.per_gpu = per_gpu;
    q.gpus = p1_pick(seed, gpus);
    q.jobs = p1_pick(seed, jobs);
    q.tasks_per_job = p1_pick(seed, tasks);
    q.machines_per_rack = p1_pick(seed, racks);
    hrm_flowgen_p1_build(&q, s);
    if (out)
        *out = q;
}

/*
 * The solution is a flow (capacities, supplies or +-value at the terminals)
 * whose potentials certify optimality: below capacity reduced cost >= 0, with
 * flow <= 0.  Returns its cost.
 */
static inline int64_t certified_cost(const struct hrm_flow *g, int32_t S, int32_t T)
{
    int32_t n = hrm_flow_vertices(g);
    int64_t *net = hrm_calloc((size_t)n, sizeof(int64_t));
    for (int32_t a = 0; a < hrm_flow_arcs(g); a++) {
        int32_t u = hrm_flow_arc_from(g, a), v = hrm_flow_arc_to(g, a);
        int64_t f = hrm_flow_arc_flow(g, a), cap = hrm_flow_arc_capacity(g, a);
        int64_t rc = hrm_flow_arc_cost(g, a) + hrm_flow_potential(g, u) - hrm_flow_potential(g, v);
        cr_assert(f >= 0 && f <= cap, "arc %d: flow %lld outside [0, %lld]", a, (long long)f,
                  (long long)cap);
        cr_assert(f == cap || rc >= 0, "arc %d below capacity, reduced cost %lld", a,
                  (long long)rc);
        cr_assert(f == 0 || rc <= 0, "arc %d carries flow, reduced cost %lld", a, (long long)rc);
        net[u] += f;
        net[v] -= f;
    }
    for (int32_t v = 0; v < n; v++) {
        int64_t want = S >= 0 ? (v == S ? hrm_flow_value(g) : v == T ? -hrm_flow_value(g) : 0)
                              : hrm_flow_supply(g, v);
        cr_assert_eq(net[v], want, "vertex %d: net outflow %lld, want %lld", v, (long long)net[v],
                     (long long)want);
    }
    hrm_free(net);
    return hrm_flow_total_cost(g);
}

/* Solves g afresh with algo: 0 with a certified optimum (its cost in *cost), or infeasible. */
static inline int solve_fresh(struct hrm_flow *g, enum hrm_flow_algo algo, int64_t *cost,
                              const char *what)
{
    hrm_flow_reset(g);
    hrm_flow_set_algo(g, algo);
    struct hrm_error err = {{0}};
    int rc = hrm_flow_solve(g, &err);
    if (rc != 0) {
        cr_assert_eq(rc, -HRM_EINFEASIBLE, "%s, engine %d: %s", what, (int)algo, err.text);
        return rc;
    }
    *cost = certified_cost(g, -1, -1);
    return 0;
}

/* The simplex from scratch (every basis audited when `audited`); returns its pivots.  Shortest
 * paths and cost scaling must find the same cost, or the same infeasibility. */
static inline int64_t simplex_matches_others(struct hrm_flow *g, bool audited, const char *what)
{
    flow_simplex_audit(g, audited);
    int64_t cost = 0, other = 0;
    int rc = solve_fresh(g, HRM_FLOW_SIMPLEX, &cost, what);
    int64_t checks = 0;
    const char *why = flow_simplex_audit_failure(g, &checks);
    cr_assert_null(why, "%s: %s", what, why);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.simplex && !st.warm, "%s: a cold simplex solve", what);
    cr_assert(!audited || checks == st.phases + 1, "%s: %lld audits, %lld pivots", what,
              (long long)checks, (long long)st.phases);
    flow_simplex_audit(g, false);
    static const enum hrm_flow_algo others[] = {HRM_FLOW_SSP, HRM_FLOW_SCALING};
    for (int i = 0; i < 2; i++) {
        int orc = solve_fresh(g, others[i], &other, what);
        cr_assert_eq(orc, rc, "%s: simplex %d, engine %d %d", what, rc, (int)others[i], orc);
        cr_assert(rc != 0 || other == cost, "%s: simplex %lld, engine %d %lld", what,
                  (long long)cost, (int)others[i], (long long)other);
    }
    return st.phases;
}

/* The same problem in a new graph (through the DIMACS writer and reader). */
static inline struct hrm_flow *graph_copy(const struct hrm_flow *g)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(hrm_flow_write_dimacs(g, f, NULL), 0);
    fclose(f);
    f = fmemopen(text, len, "r");
    struct hrm_flow *h = NULL;
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_read_dimacs(f, "copy", &h, &err), 0, "%s", err.text);
    fclose(f);
    free(text);
    return h;
}

/* The same problem in a new graph, solved from scratch with algo. */
static inline struct hrm_flow *solved_copy(const struct hrm_flow *g, int32_t S, int32_t T,
                                           enum hrm_flow_algo algo)
{
    struct hrm_flow *h = graph_copy(g);
    struct hrm_error err = {{0}};
    hrm_flow_set_algo(h, algo);
    int rc = S >= 0 ? hrm_flow_solve_max(h, S, T, &err) : hrm_flow_solve(h, &err);
    cr_assert_eq(rc, 0, "from scratch: %s", err.text);
    return h;
}

static inline int solve(struct hrm_flow *g, int32_t S, int32_t T, struct hrm_error *err)
{
    return S >= 0 ? hrm_flow_solve_max(g, S, T, err) : hrm_flow_solve(g, err);
}

/* Checks g's warm solution against from-scratch solves by both algorithms. */
static inline void expect_optimal(struct hrm_flow *g, int32_t S, int32_t T, const char *what)
{
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.warm, "%s: the re-solve starts from the last flow and potentials", what);
    cr_assert_not(st.scaling, "%s: no cost scaling from scratch", what);
    int64_t cost = certified_cost(g, S, T);
    static const enum hrm_flow_algo algos[] = {HRM_FLOW_SSP, HRM_FLOW_SCALING};
    for (int i = 0; i < 2; i++) {
        struct hrm_flow *h = solved_copy(g, S, T, algos[i]);
        cr_assert_eq(cost, hrm_flow_total_cost(h), "%s: warm cost %lld, from scratch %lld", what,
                     (long long)cost, (long long)hrm_flow_total_cost(h));
        cr_assert_eq(hrm_flow_value(g), hrm_flow_value(h), "%s: warm value %lld, from scratch %lld",
                     what, (long long)hrm_flow_value(g), (long long)hrm_flow_value(h));
        hrm_flow_free(h);
    }
}

/* Routes one unit from `from` to `to` (supplies +1 and -1) by a warm re-solve that must take
 * one search; returns its stats. */
static inline struct hrm_flow_stats route_one_unit(struct hrm_flow *g, int32_t from, int32_t to,
                                                   int seed)
{
    struct hrm_error err = {{0}};
    hrm_flow_set_supply(g, from, 1);
    hrm_flow_set_supply(g, to, -1);
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    cr_assert(st.warm, "seed %d: a warm re-solve", seed);
    cr_assert_eq(st.phases, 1, "seed %d: one search", seed);
    return st;
}

/* Re-solves g warm and checks it against from-scratch solves by both algorithms. */
static inline void expect_warm_optimal(struct hrm_flow *g, int32_t S, int32_t T, const char *what)
{
    struct hrm_error err = {{0}};
    cr_assert_eq(solve(g, S, T, &err), 0, "%s: %s", what, err.text);
    expect_optimal(g, S, T, what);
}

/*
 * Jobs of 64 tasks arrive, three in a row, on P1 graphs of several shapes;
 * each re-solve under algo must be optimal and take at most three searches
 * (new vertices are priced from the sink side, so an arrival's flow enters at
 * the job's source arc: one search per distinct length of the paths its tasks
 * take, where every GPU is busy one search that settles a handful of
 * vertices).
 */
static inline void expect_arrivals_in_few_searches(enum hrm_flow_algo algo)
{
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct hrm_flowgen_sched s = {0};
        struct hrm_flowgen_p1 q;
        hrm_flowgen_p1_defaults(&q);
        q.seed = seed;
        q.per_gpu = seed % 2;
        q.gpus = 100 + (long long)(seed % 3) * 100;
        q.jobs = 10 + (long long)seed;
        q.tasks_per_job = 40;
        hrm_flowgen_p1_build(&q, &s);
        struct hrm_flowgen_changer ch = {.s = &s, .skeleton_cap = 1 << 30, .job_tasks = 64};
        hrm_rng_seed(&ch.rng, seed);
        hrm_flow_set_algo(s.g, algo);
        struct hrm_error err = {{0}};
        cr_assert_eq(solve(s.g, s.S, s.T, &err), 0, "%s", err.text);
        for (int i = 0; i < 3; i++) {
            hrm_flowgen_change(&ch, HRM_FLOWGEN_JOB_ARRIVE);
            char what[64];
            snprintf(what, sizeof(what), "algo %d seed %d arrival %d", (int)algo, (int)seed, i);
            expect_warm_optimal(s.g, s.S, s.T, what);
            struct hrm_flow_stats st;
            hrm_flow_stats(s.g, &st);
            cr_assert(st.phases <= 3, "%s: %lld phases, %lld vertices settled of %d", what,
                      (long long)st.phases, (long long)st.scanned, hrm_flow_vertices(s.g));
        }
        hrm_flowgen_sched_fini(&s);
    }
}

#endif
