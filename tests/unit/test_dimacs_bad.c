/* DIMACS reader: every kind of bad input gets an error naming the file, the line and the
 * problem, and nothing crashes or overflows. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/flow.h"

/* Reads len bytes of text (NUL bytes allowed); returns the reader's code, the graph in *g. */
static int read_text(const char *text, size_t len, struct hrm_flow **g, struct hrm_error *err)
{
    FILE *f = fmemopen((void *)text, len, "r");
    cr_assert_not_null(f);
    int rc = hrm_flow_read_dimacs(f, "t.min", g, err);
    fclose(f);
    return rc;
}

/* The file is rejected and the message holds needle (which names the line). */
static void rejects_n(const char *text, size_t len, const char *needle)
{
    struct hrm_flow *g = NULL;
    struct hrm_error err = {{0}};
    int rc = read_text(text, len, &g, &err);
    cr_assert_eq(rc, -HRM_ESPEC, "accepted (%d): %.60s", rc, text);
    cr_assert_null(g);
    cr_assert(strstr(err.text, needle), "'%s' lacks '%s'", err.text, needle);
}

static void rejects(const char *text, const char *needle)
{
    rejects_n(text, strlen(text), needle);
}

/* The file is read as n vertices and m arcs and solves at total cost want. */
static void solves(const char *text, int32_t n, int32_t m, int64_t want)
{
    struct hrm_flow *g = NULL;
    struct hrm_error err = {{0}};
    cr_assert_eq(read_text(text, strlen(text), &g, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_flow_vertices(g), n);
    cr_assert_eq(hrm_flow_arcs(g), m);
    cr_assert_eq(hrm_flow_solve(g, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_flow_total_cost(g), want);
    hrm_flow_free(g);
}

Test(dimacs_bad, more_arcs_than_declared)
{
    rejects("p min 2 1\na 1 2 0 1 1\na 2 1 0 1 1\n",
            "t.min:3: more arcs than the 1 the 'p' line declares");
}

Test(dimacs_bad, fewer_arcs_than_declared)
{
    rejects("p min 2 3\na 1 2 0 1 1\nc end\n", "t.min:3: 3 arcs declared, 1 found");
}

Test(dimacs_bad, arc_vertex_out_of_range)
{
    rejects("p min 2 1\na 1 3 0 5 3\n", "t.min:2: arc 1 -> 3: vertex out of 1..2");
    rejects("p min 2 1\na 0 1 0 5 3\n", "t.min:2: arc 0 -> 1: vertex out of 1..2");
}

Test(dimacs_bad, node_line_beyond_n)
{
    rejects("p min 2 0\nn 3 1\n", "t.min:2: node 3 out of 1..2");
    rejects("p min 2 0\nn 0 1\n", "t.min:2: node 0 out of 1..2");
}

Test(dimacs_bad, zero_vertices)
{
    rejects("p min 0 0\n", "t.min:1: expected 'p min N M': N 0 out of 1..");
}

Test(dimacs_bad, negative_counts)
{
    rejects("p min -2 1\n", "t.min:1: expected 'p min N M': N -2 out of 1..");
    rejects("p min 2 -1\n", "t.min:1: expected 'p min N M': M -1 out of 0..");
}

Test(dimacs_bad, vertex_count_beyond_the_limit_allocates_nothing)
{
    /* the old reader allocated the state of two billion vertices from this line */
    rejects("p min 2000000000 0\n", "t.min:1: expected 'p min N M': N 2000000000 out of 1..16777216");
}

Test(dimacs_bad, lying_arc_count_allocates_nothing)
{
    /* the old reader preallocated a billion arcs from this line */
    rejects("c big\np min 2 1000000000\na 1 2 0 1 1\n",
            "t.min:3: 1000000000 arcs declared, 1 found (the 'p' line is line 2)");
}

Test(dimacs_bad, duplicate_p_line)
{
    rejects("p min 2 0\nc x\np min 2 0\n", "t.min:3: second 'p' line (the first is line 1)");
}

Test(dimacs_bad, missing_p_line)
{
    rejects("c only a comment\n\n", "t.min:2: no 'p min N M' line");
}

Test(dimacs_bad, p_line_after_arc_or_node_lines)
{
    rejects("c x\na 1 2 0 1 1\np min 2 1\n", "t.min:2: 'a' line before the 'p min' line");
    rejects("n 1 1\np min 2 0\n", "t.min:1: 'n' line before the 'p min' line");
}

Test(dimacs_bad, wrong_problem_type)
{
    rejects("p max 2 1\n", "t.min:1: expected 'p min N M' (a min-cost flow problem), found 'p max'");
    rejects("p minimum 2 1\n", "t.min:1: expected 'p min N M' (a min-cost flow problem)");
}

Test(dimacs_bad, negative_capacity)
{
    rejects("p min 2 1\na 1 2 0 -1 1\n", "t.min:2: arc 1 -> 2: capacity -1 is negative");
}

Test(dimacs_bad, lower_bound_above_capacity)
{
    rejects("p min 2 1\na 1 2 5 3 1\n", "t.min:2: arc 1 -> 2: lower bound 5 out of 0..3");
    rejects("p min 2 1\na 1 2 -1 3 1\n", "t.min:2: arc 1 -> 2: lower bound -1 out of 0..3");
}

Test(dimacs_bad, capacity_beyond_the_solver)
{
    rejects("p min 2 1\na 1 2 0 1099511627776 1\n",
            "t.min:2: arc 1 -> 2: capacity 1099511627776 beyond the solver's limit 1099511627775");
}

Test(dimacs_bad, cost_beyond_the_solver)
{
    rejects("p min 2 1\na 1 2 0 1 -2147483648\n",
            "t.min:2: arc 1 -> 2: cost -2147483648 beyond the solver's limit +-2147483647");
}

Test(dimacs_bad, supply_beyond_the_solver)
{
    rejects("p min 2 0\nn 1 -1099511627776\n",
            "t.min:2: node 1: supply -1099511627776 beyond the solver's limit +-1099511627775");
}

Test(dimacs_bad, number_beyond_64_bits)
{
    rejects("p min 2 1\na 1 2 0 99999999999999999999 1\n",
            "t.min:2: expected 'a FROM TO LOW CAP COST': CAP '99999999999999999999' is beyond "
            "64-bit integers");
}

Test(dimacs_bad, total_cost_could_overflow)
{
    /* 2^40 units at cost 2^31 on one arc: a total cost of 2^71 */
    rejects("p min 2 1\nn 1 1099511627775\nn 2 -1099511627775\na 1 2 0 1099511627775 "
            "2147483647\n",
            "t.min:4: capacities x costs could make the total cost overflow");
}

Test(dimacs_bad, large_capacities_with_small_supply_are_fine)
{
    /* the bound counts min(capacity, supply) per arc: "infinite" capacities pass */
    solves("p min 3 2\nn 1 7\nn 3 -7\na 1 2 0 1099511627775 2147483647\n"
           "a 2 3 0 1099511627775 2147483647\n",
           3, 2, 14LL * 2147483647);
}

Test(dimacs_bad, supplies_do_not_balance)
{
    rejects("p min 3 1\nn 1 5\nn 2 -3\na 1 2 0 9 1\n",
            "t.min:4: supplies do not balance: total supply 5, total demand 3");
}

Test(dimacs_bad, second_node_line_for_a_node)
{
    rejects("p min 2 0\nn 1 1\nn 1 -1\n", "t.min:3: second 'n' line for node 1");
}

Test(dimacs_bad, infeasible_supplies_name_the_file_and_nodes)
{
    /* balanced, but node 3's supply has no arc towards node 2's demand */
    const char *text = "p min 3 1\nn 1 2\nn 3 3\nn 2 -5\na 1 2 0 9 1\n";
    struct hrm_flow *g = NULL;
    struct hrm_error err = {{0}};
    cr_assert_eq(read_text(text, strlen(text), &g, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_flow_solve(g, &err), -HRM_EINFEASIBLE);
    hrm_flow_dimacs_infeasible(g, "t.min", &err);
    cr_assert(strstr(err.text, "t.min: supplies cannot be met (total supply = demand = 5): 3 "
                               "units of node 3 cannot reach any demand, node 2 lacks 3"),
              "%s", err.text);
    hrm_flow_free(g);
}

Test(dimacs_bad, unknown_line_type)
{
    rejects("p min 2 0\nx 1\n", "t.min:2: unknown line type 'x' (expected c, p, n or a)");
    /* the type is one letter and a space: "a1" is not an arc line */
    rejects("p min 2 1\na1 2 0 1 1\n", "t.min:2: unknown line type 'a1'");
    /* control bytes of a binary file are not copied into the message */
    rejects("p min 2 0\n\x1b[31m red\n", "t.min:2: unknown line type '?[31m'");
}

Test(dimacs_bad, junk_after_numbers)
{
    rejects("p min 2 1\na 1 2 0 1 1x\n",
            "t.min:2: expected 'a FROM TO LOW CAP COST': COST '1x' is not an integer");
    rejects("p min 2 1\na 1 2 0 1 1 7\n",
            "t.min:2: expected 'a FROM TO LOW CAP COST': junk '7' after COST");
    rejects("p min 2 0 x\n", "t.min:1: expected 'p min N M': junk 'x' after M");
    rejects("p min 2 0\nn 1 0 9\n", "t.min:2: expected 'n ID SUPPLY': junk '9' after SUPPLY");
}

Test(dimacs_bad, missing_numbers)
{
    rejects("p min 2 1\na 1 2 0 1\n", "t.min:2: expected 'a FROM TO LOW CAP COST': COST missing");
    rejects("p min\n", "t.min:1: expected 'p min N M': N missing");
    rejects("p min 2 0\nn 1 +\n", "t.min:2: expected 'n ID SUPPLY': SUPPLY '+' is not an integer");
}

Test(dimacs_bad, very_long_line)
{
    size_t n = HRM_FLOW_DIMACS_MAX_LINE + 10;
    char *text = malloc(n + 32);
    strcpy(text, "p min 2 0\nc ");
    size_t at = strlen(text);
    memset(text + at, 'x', n);
    strcpy(text + at + n, "\n");
    rejects(text, "t.min:2: line of ");
    rejects(text, "longer than the 65536 allowed");
    free(text);
}

Test(dimacs_bad, file_of_nul_bytes)
{
    char zeros[256] = {0};
    rejects_n(zeros, sizeof(zeros), "t.min:1: NUL byte in the line");
    /* a NUL byte must not hide the rest of a line either */
    static const char line[] = "p min 2 0\nn 1 1\0 junk\nn 2 -1\n";
    rejects_n(line, sizeof(line) - 1, "t.min:2: NUL byte in the line");
}

Test(dimacs_bad, empty_file)
{
    rejects("", "t.min: empty file (no 'p min N M' line)");
}

Test(dimacs_bad, crlf_line_ends_are_accepted)
{
    solves("c made on Windows\r\np min 2 1\r\nn 1 4\r\nn 2 -4\r\na 1 2 0 9 3\r\n\r\n", 2, 1, 12);
}
