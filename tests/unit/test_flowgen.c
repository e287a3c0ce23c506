/* Min-cost flow instance generators: deterministic by seed, feasible, balanced, sized as asked,
 * and their DIMACS files read back to the same graph. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hrm/flowgen.h"

/* Small instances of every family (the sanitized build is slow on the bench's sizes). */
static struct hrm_flowgen_params small(enum hrm_flowgen_family fam, int per_gpu, uint64_t seed)
{
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(fam, 'S', &p);
    p.seed = seed;
    switch (fam) {
    case HRM_FLOWGEN_NETGEN:
        p.nodes = 200, p.arcs = 1500, p.sources = 7, p.sinks = 5, p.supply = 3000;
        break;
    case HRM_FLOWGEN_GRIDGEN:
        p.rows = 10, p.cols = 12, p.arcs = 2 * (10 * 11 + 12 * 9) + 150;
        p.sources = 4, p.sinks = 6, p.supply = 2000;
        break;
    case HRM_FLOWGEN_GOTO:
        p.rows = 10, p.cols = 9, p.arcs = 8 * 90, p.supply = 1 << 18;
        break;
    case HRM_FLOWGEN_P1:
        p.p1.gpus = 120, p.p1.jobs = 12, p.p1.tasks_per_job = 15, p.p1.per_gpu = per_gpu;
        break;
    }
    return p;
}

static const struct {
    enum hrm_flowgen_family fam;
    int per_gpu;
} cases[] = {{HRM_FLOWGEN_NETGEN, 1}, {HRM_FLOWGEN_GRIDGEN, 1}, {HRM_FLOWGEN_GOTO, 1},
             {HRM_FLOWGEN_P1, 1},     {HRM_FLOWGEN_P1, 0}};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static struct hrm_flow *build(size_t i, uint64_t seed)
{
    struct hrm_flowgen_params p = small(cases[i].fam, cases[i].per_gpu, seed);
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    cr_assert_eq(hrm_flowgen_build(cases[i].fam, &p, &g, &err), 0, "case %zu: %s", i, err.text);
    return g;
}

/* 1 when g and h have the same vertices, supplies and arcs in the same order. */
static int same_graph(const struct hrm_flow *g, const struct hrm_flow *h)
{
    if (hrm_flow_vertices(g) != hrm_flow_vertices(h) || hrm_flow_arcs(g) != hrm_flow_arcs(h))
        return 0;
    for (int32_t v = 0; v < hrm_flow_vertices(g); v++)
        if (hrm_flow_supply(g, v) != hrm_flow_supply(h, v))
            return 0;
    for (int32_t a = 0; a < hrm_flow_arcs(g); a++)
        if (hrm_flow_arc_from(g, a) != hrm_flow_arc_from(h, a) ||
            hrm_flow_arc_to(g, a) != hrm_flow_arc_to(h, a) ||
            hrm_flow_arc_capacity(g, a) != hrm_flow_arc_capacity(h, a) ||
            hrm_flow_arc_cost(g, a) != hrm_flow_arc_cost(h, a))
            return 0;
    return 1;
}

Test(flowgen, same_seed_same_graph_other_seed_other_graph)
{
    for (size_t i = 0; i < NCASES; i++) {
        struct hrm_flow *a = build(i, 7), *b = build(i, 7), *c = build(i, 8);
        cr_expect(same_graph(a, b), "case %zu: seed 7 twice gave two graphs", i);
        cr_expect(!same_graph(a, c), "case %zu: seeds 7 and 8 gave the same graph", i);
        hrm_flow_free(a);
        hrm_flow_free(b);
        hrm_flow_free(c);
    }
}

Test(flowgen, sized_as_asked_balanced_and_feasible)
{
    for (size_t i = 0; i < NCASES; i++) {
        struct hrm_flowgen_params p = small(cases[i].fam, cases[i].per_gpu, 3);
        struct hrm_flow *g = build(i, 3);
        if (cases[i].fam == HRM_FLOWGEN_NETGEN) {
            cr_expect_eq(hrm_flow_vertices(g), p.nodes);
            cr_expect_eq(hrm_flow_arcs(g), p.arcs);
        } else if (cases[i].fam != HRM_FLOWGEN_P1) {
            cr_expect_eq(hrm_flow_vertices(g), p.rows * p.cols);
            cr_expect_eq(hrm_flow_arcs(g), p.arcs);
        }
        int64_t plus = 0, minus = 0, nsrc = 0, nsnk = 0;
        for (int32_t v = 0; v < hrm_flow_vertices(g); v++) {
            int64_t s = hrm_flow_supply(g, v);
            plus += s > 0 ? s : 0;
            minus += s < 0 ? -s : 0;
            nsrc += s > 0;
            nsnk += s < 0;
        }
        cr_expect_eq(plus, minus, "case %zu: supply %lld, demand %lld", i, (long long)plus,
                     (long long)minus);
        if (cases[i].fam == HRM_FLOWGEN_P1) {
            cr_expect(plus > 0 && plus <= p.p1.jobs * p.p1.tasks_per_job, "case %zu", i);
        } else {
            cr_expect_eq(plus, p.supply, "case %zu", i);
            cr_expect_eq(nsrc, p.sources, "case %zu", i);
            cr_expect_eq(nsnk, p.sinks, "case %zu", i);
        }
        struct hrm_error err = {{0}};
        cr_expect_eq(hrm_flow_solve(g, &err), 0, "case %zu: %s", i, err.text);
        hrm_flow_free(g);
    }
}

Test(flowgen, dimacs_reads_back_to_the_same_graph)
{
    for (size_t i = 0; i < NCASES; i++) {
        struct hrm_flow *g = build(i, 5), *h = NULL;
        FILE *f = tmpfile();
        cr_assert(f);
        cr_assert_eq(hrm_flow_write_dimacs(g, f, "flowgen test"), 0);
        rewind(f);
        struct hrm_error err = {{0}};
        cr_assert_eq(hrm_flow_read_dimacs(f, "gen.min", &h, &err), 0, "case %zu: %s", i, err.text);
        fclose(f);
        cr_expect(same_graph(g, h), "case %zu: the file read back differs", i);
        hrm_flow_free(g);
        hrm_flow_free(h);
    }
}

Test(flowgen, bad_parameters_are_refused_naming_the_flag)
{
    struct hrm_flowgen_params p = small(HRM_FLOWGEN_NETGEN, 1, 1);
    p.sources = 150, p.sinks = 60;
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    cr_expect_eq(hrm_flowgen_build(HRM_FLOWGEN_NETGEN, &p, &g, &err), -EINVAL);
    cr_expect(strstr(err.text, "--sources") != NULL, "%s", err.text);
    cr_expect_null(g);
    p = small(HRM_FLOWGEN_GRIDGEN, 1, 1);
    p.arcs = 10;
    cr_expect_eq(hrm_flowgen_check(HRM_FLOWGEN_GRIDGEN, &p, &err), -EINVAL);
    cr_expect(strstr(err.text, "--arcs") != NULL, "%s", err.text);
    p = small(HRM_FLOWGEN_GOTO, 1, 1);
    p.cap_min = 0;
    cr_expect_eq(hrm_flowgen_check(HRM_FLOWGEN_GOTO, &p, &err), -EINVAL);
    cr_expect(strstr(err.text, "--cap-min") != NULL, "%s", err.text);
}
