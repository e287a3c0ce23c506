/* Min-cost flow solver for scheduling graphs, with incremental re-solve (P1). */
#ifndef HRM_FLOW_H
#define HRM_FLOW_H

#include <stdint.h>
#include <stdio.h>

#include "hrm/error.h"

/*
 * A directed graph with integer capacities (>= 0) and integer costs (any sign),
 * and an integer supply per vertex (> 0 produces flow, < 0 consumes it; the
 * supplies must sum to 0 for hrm_flow_solve).  The graph keeps the last
 * optimal flow and vertex potentials: after changing a few arcs or supplies
 * (a task ends, a job arrives, a node fails) the next solve starts from them
 * instead of from zero.
 *
 * Vertex and arc ids are dense, assigned in creation order, and stay valid
 * until hrm_flow_free.  Removing an arc is setting its capacity to 0.
 * Parallel arcs, self-loops and isolated vertices are allowed.
 *
 * Limits (checked; -EINVAL otherwise): 0 <= capacity <= HRM_FLOW_CAP_MAX,
 * |cost| <= HRM_FLOW_COST_MAX, |supply| <= HRM_FLOW_CAP_MAX.  They keep every
 * intermediate value of the solver inside int64_t; the caller keeps the
 * total cost (sum of flow x cost) inside int64_t.
 *
 * Not thread-safe: one graph is used by one thread at a time.
 */
struct hrm_flow;

#define HRM_FLOW_CAP_MAX (((int64_t)1 << 40) - 1)
#define HRM_FLOW_COST_MAX (((int64_t)1 << 31) - 1)

struct hrm_flow *hrm_flow_new(int32_t vertices_hint, int32_t arcs_hint);
void hrm_flow_free(struct hrm_flow *g); /* NULL is a no-op */

/* Adds a vertex with the given supply; returns its id, or -EINVAL for a supply
 * out of limits. */
int32_t hrm_flow_add_vertex(struct hrm_flow *g, int64_t supply);
/* Adds an arc; returns its id, or -EINVAL for a bad vertex, a capacity or a cost
 * out of limits. */
int32_t hrm_flow_add_arc(struct hrm_flow *g, int32_t from, int32_t to, int64_t capacity,
                         int64_t cost);
/* Sets a vertex's supply (ignored: a bad vertex or a supply out of limits). */
void hrm_flow_set_supply(struct hrm_flow *g, int32_t vertex, int64_t supply);
/* Changes an arc; flow above the new capacity is pushed back on the next solve.
 * 0, or -EINVAL for a bad arc, capacity or cost. */
int hrm_flow_set_arc(struct hrm_flow *g, int32_t arc, int64_t capacity, int64_t cost);

int32_t hrm_flow_vertices(const struct hrm_flow *g);
int32_t hrm_flow_arcs(const struct hrm_flow *g);

/* Minimum-cost flow meeting every supply exactly.  0 on success, -HRM_EINFEASIBLE
 * (with detail) when the supplies cannot be routed; the graph's flow is then
 * unspecified but the graph stays usable. */
int hrm_flow_solve(struct hrm_flow *g, struct hrm_error *err);

/* Minimum-cost maximum flow from source to sink, ignoring supplies: the most
 * flow that can be routed, and among those the cheapest.  Returns 0, or -EINVAL
 * for bad or equal vertices, or -EOVERFLOW when (vertices + 1) x max |cost|
 * reaches 2^56 (the solver prices a unit of value above any path's cost). */
int hrm_flow_solve_max(struct hrm_flow *g, int32_t source, int32_t sink, struct hrm_error *err);

int64_t hrm_flow_arc_flow(const struct hrm_flow *g, int32_t arc);
int64_t hrm_flow_total_cost(const struct hrm_flow *g); /* sum of flow x cost over arcs */
int64_t hrm_flow_value(const struct hrm_flow *g);      /* flow routed by the last solve_max */

/* ---- inspection (tests, benchmarks, DIMACS writer) ---- */

int64_t hrm_flow_supply(const struct hrm_flow *g, int32_t vertex);
int32_t hrm_flow_arc_from(const struct hrm_flow *g, int32_t arc);
int32_t hrm_flow_arc_to(const struct hrm_flow *g, int32_t arc);
int64_t hrm_flow_arc_capacity(const struct hrm_flow *g, int32_t arc);
int64_t hrm_flow_arc_cost(const struct hrm_flow *g, int32_t arc);

/* The vertex potential (dual value) after a successful solve: every arc with
 * flow below capacity has cost + potential(from) - potential(to) >= 0 and every
 * arc with flow above 0 has it <= 0 (the optimality certificate).  For
 * solve_max this holds for every arc of the graph. */
int64_t hrm_flow_potential(const struct hrm_flow *g, int32_t vertex);

/* ---- algorithm control and statistics ---- */

enum hrm_flow_algo {
    HRM_FLOW_AUTO = 0, /* chosen per solve by size, shape and warm state (default;
                        * docs/flow-solver.md "What auto runs") */
    HRM_FLOW_SSP,      /* successive shortest paths, from the last state when warm */
    HRM_FLOW_SCALING,  /* cost scaling from scratch; re-solves from the last state (warm
                          cost scaling for a large imbalance in solve_max, else as SSP) */
    HRM_FLOW_SIMPLEX,  /* primal network simplex, block search; warm from its last
                        * basis when only capacities, costs or supplies changed */
};

/* Chooses the algorithm of the next solves. */
void hrm_flow_set_algo(struct hrm_flow *g, enum hrm_flow_algo algo);

/* Forgets the last flow and potentials: the next solve starts from zero. */
void hrm_flow_reset(struct hrm_flow *g);

struct hrm_flow_stats {
    int warm;              /* the last solve started from the previous flow */
    int scaling;           /* the last solve used cost scaling */
    int simplex;           /* the last solve used the network simplex (phases = pivots,
                            * scanned = potentials shifted, augmentations = pivots that
                            * changed the tree) */
    int64_t phases;        /* shortest-path searches (SSP) or refine phases (scaling) */
    int64_t scanned;       /* vertices settled by searches, or relabels (scaling) */
    int64_t augmentations; /* augmenting paths (SSP) or pushes (scaling) */
    int64_t laid_out;      /* residual arcs written because arcs or vertices were added (all
                            * of them when the residual graph was laid out again) */
    int64_t arcs_read;     /* residual arcs and summary edges the shortest-path searches
                            * read (their settled vertices' arcs up to the first without
                            * residual capacity or hidden, see docs/flow-solver.md) */
    int64_t route_read;    /* residual arcs and summary edges the routing after the searches
                            * read (depth-first passes, Dinic's levels and paths) */
};

/* Statistics of the last solve. */
void hrm_flow_stats(const struct hrm_flow *g, struct hrm_flow_stats *out);

/* ---- DIMACS min-cost flow format ---- */

/*
 * Reads a DIMACS min-cost-flow problem: 'c' comments, one 'p min N M' line,
 * at most one 'n ID SUPPLY' line per node, exactly M 'a FROM TO LOW CAP COST'
 * lines (vertex ids 1..N); LF or CRLF line ends.  Lower bounds other than 0
 * are rejected, and so are supplies that do not sum to 0 and anything beyond
 * the limits below.  On success *out is a new graph
 * (vertex i of the file is vertex i-1) and 0 is returned; on failure -HRM_ESPEC
 * (or -HRM_EIO) with the line number in err, and *out is untouched.
 * name is used in messages.
 */
int hrm_flow_read_dimacs(FILE *in, const char *name, struct hrm_flow **out, struct hrm_error *err);

/*
 * The reader's limits (docs/flow-solver.md, "The DIMACS reader"):
 *  - N <= HRM_FLOW_DIMACS_MAX_VERTICES: the vertices' solver state (about 100
 *    bytes each) is allocated from the 'p' line alone, so N is bounded to keep
 *    a 20-byte file from asking for gigabytes;
 *  - M <= HRM_FLOW_DIMACS_MAX_ARCS: each arc is two residual arcs with int32_t
 *    indices, plus the virtual pair of solve_max;
 *  - capacities, costs and supplies within the solver's limits above;
 *  - total supply (and total demand) <= HRM_FLOW_DIMACS_MAX_TOTAL, so that every
 *    sum of supplies and every excess the solver keeps fits in int64_t;
 *  - the supplies balance (total supply = total demand): an unbalanced file is
 *    an error, not a problem with free disposal;
 *  - the total cost of any optimal flow fits in int64_t (see dimacs.c);
 *  - lines of at most HRM_FLOW_DIMACS_MAX_LINE bytes, no NUL bytes.
 */
#define HRM_FLOW_DIMACS_MAX_VERTICES (1 << 24)
#define HRM_FLOW_DIMACS_MAX_ARCS (INT32_MAX / 2 - 3)
#define HRM_FLOW_DIMACS_MAX_TOTAL ((int64_t)1 << 62)
#define HRM_FLOW_DIMACS_MAX_LINE 65536

/* After hrm_flow_solve failed with -HRM_EINFEASIBLE on a graph read from the
 * DIMACS file name, rewrites err's text for the file's user: the file, the
 * total supply and demand, and a node (numbered as in the file) whose supply
 * could not be routed and one whose demand is not met. */
void hrm_flow_dimacs_infeasible(const struct hrm_flow *g, const char *name, struct hrm_error *err);

/* Writes g as a DIMACS min-cost-flow problem ('p min', 'n', 'a' lines).
 * comment (may be NULL) becomes a 'c' line.  0 or -HRM_EIO. */
int hrm_flow_write_dimacs(const struct hrm_flow *g, FILE *out, const char *comment);

#endif
