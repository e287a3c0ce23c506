/* Min-cost flow solver for scheduling graphs, with incremental re-solve (SPEC P1). */
#ifndef HRM_FLOW_H
#define HRM_FLOW_H

#include <stdint.h>

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
 */
struct hrm_flow;

struct hrm_flow *hrm_flow_new(int32_t vertices_hint, int32_t arcs_hint);
void hrm_flow_free(struct hrm_flow *g); /* NULL is a no-op */

/* Adds a vertex with the given supply; returns its id. */
int32_t hrm_flow_add_vertex(struct hrm_flow *g, int64_t supply);
/* Adds an arc; returns its id, or -EINVAL for a bad vertex or negative capacity. */
int32_t hrm_flow_add_arc(struct hrm_flow *g, int32_t from, int32_t to, int64_t capacity,
                         int64_t cost);
void hrm_flow_set_supply(struct hrm_flow *g, int32_t vertex, int64_t supply);
/* Changes an arc; flow above the new capacity is pushed back on the next solve. */
int hrm_flow_set_arc(struct hrm_flow *g, int32_t arc, int64_t capacity, int64_t cost);

int32_t hrm_flow_vertices(const struct hrm_flow *g);
int32_t hrm_flow_arcs(const struct hrm_flow *g);

/* Minimum-cost flow meeting every supply exactly.  0 on success, -HRM_EINFEASIBLE
 * (with detail) when the supplies cannot be routed; the graph's flow is then
 * unspecified but the graph stays usable. */
int hrm_flow_solve(struct hrm_flow *g, struct hrm_error *err);

/* Minimum-cost maximum flow from source to sink, ignoring supplies: the most
 * flow that can be routed, and among those the cheapest.  Returns 0. */
int hrm_flow_solve_max(struct hrm_flow *g, int32_t source, int32_t sink, struct hrm_error *err);

int64_t hrm_flow_arc_flow(const struct hrm_flow *g, int32_t arc);
int64_t hrm_flow_total_cost(const struct hrm_flow *g); /* sum of flow x cost over arcs */
int64_t hrm_flow_value(const struct hrm_flow *g);      /* flow routed by the last solve_max */

#endif
