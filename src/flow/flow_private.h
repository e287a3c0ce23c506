/* Internal state of the min-cost flow solver, shared by the files of src/flow. */
#ifndef HRM_FLOW_PRIVATE_H
#define HRM_FLOW_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/flow.h"

/*
 * Two views of one graph.
 *
 * The user's view: arrays indexed by arc id (from, to, cap, cost) and by
 * vertex id (supply).  Adding arcs only appends to these.
 *
 * The solver's view: a residual graph in compressed sparse rows, built from the
 * user's view when its shape changed (arcs or vertices added, or the virtual
 * arc moved).  Each arc of the user becomes a pair of residual arcs (forward at
 * its tail with residual capacity cap - flow, backward at its head with
 * residual capacity flow, costs c and -c); the flow of an arc lives only in its
 * backward residual capacity.  Changes of capacity or cost are patched into the
 * residual graph at the next solve; the arcs so changed are "dirty" and are the
 * only ones whose optimality must be checked again.
 *
 * solve_max adds one virtual arc sink -> source of capacity U (>= any s-t flow)
 * and cost -FLOW_BIG: a min-cost circulation of that graph is a min-cost
 * maximum flow, because a unit of value is worth more than any path costs.
 * With it, supplies, maximum flow and warm starts are one problem: route the
 * excesses with shortest paths while keeping every residual reduced cost >= 0.
 *
 * Invariants between solves (when g->warm):
 *  - 0 <= flow <= cap on every arc whose capacity did not change since;
 *  - ex[v] = b(v) + inflow(v) - outflow(v), with b the supplies in force
 *    (the user's in supply mode, 0 in max mode);
 *  - cost + pi[u] - pi[v] >= 0 on every residual arc of positive capacity,
 *    except dirty arcs.
 */

/* Value of one unit of s-t flow in solve_max; (n + 1) x max|cost| must stay below. */
#define FLOW_BIG ((int64_t)1 << 56)

enum flow_mode { FLOW_MODE_NONE, FLOW_MODE_SUPPLY, FLOW_MODE_MAX };

/* What a search reads per arc, in one place: one cache access per arc scanned
 * instead of four (this halved the time of a search). */
struct flow_vx {
    int64_t pi;    /* potential */
    int64_t dist;  /* search label, valid when stamp == the search's epoch */
    int32_t stamp; /* epoch of the last search that labelled the vertex */
    int32_t hpos;  /* search state (see ssp.c) */
    int32_t pred;  /* residual arc by which the search reached the vertex (-1: a source,
                    * <= -2: the summary edge -2 - pred, see ssp_sum.c) */
    int32_t sum;   /* ssp_sum.c: > 0 owner of summary group sum - 1, < 0 a task folded
                    * into its owner's summary (the searches pass it by), 0 neither */
};

struct hrm_flow {
    /* the user's view */
    int32_t n, m;
    size_t vcap_n, acap_n;
    int64_t *supply;
    int32_t *afrom, *ato;
    int32_t *in_n, *in_arc; /* per vertex: user arcs into it, and the last of them */
    int64_t *acap, *acost;
    int64_t *aflow0;  /* flow of arcs added since the last build (0 unless a rebuild kept it) */
    int64_t cost_max; /* max |cost| ever set: bounds path costs for FLOW_BIG */

    /* the virtual arc vt -> vs of solve_max (vs < 0: none) */
    int32_t vs, vt;
    int64_t vcap;
    int32_t vpos; /* forward residual index of the virtual arc, -1 if none */

    enum flow_mode mode;
    enum hrm_flow_algo algo;
    bool warm;  /* flow, pi and ex hold the last state (see invariants) */
    bool shape; /* the residual graph must be rebuilt */

    /* the residual graph, built for rn vertices and rm user arcs */
    int32_t rn, rm;
    size_t rcap_n;         /* capacity of the residual arrays */
    int32_t *first;        /* rn + 1: vertex v's residual arcs are first[v] .. first[v + 1] */
    int32_t *fill;         /* per vertex: its slots in use (first[v] + fill[v] is the next free
                            * one; the rest are inert: a self-loop with no capacity, cost 0) */
    int32_t *added;        /* per vertex: residual arcs it gained after it was laid out, over
                            * its life; a layout gives it free slots for more (slack_of) */
    bool grown;            /* arcs were added at vertices already laid out */
    int32_t *head, *rev;   /* per residual arc */
    int32_t *tail;         /* per residual arc (head of rev): saves a lookup in hot loops */
    int64_t *rcap, *rcost; /* residual capacity, cost */
    int32_t *apos;         /* per user arc: its forward residual arc */
    int32_t *rarc;         /* per residual arc: its user arc if forward, else -1 */

    /* per-vertex solver state, sized vcap_n */
    struct flow_vx *vx;
    int64_t *ex;
    int64_t *outcap, *incap; /* capacity out of / into each vertex, saturating: bound U */

    /* dirty arcs (user ids; -1 stands for the virtual arc) and vertices whose
     * excess may be non-zero */
    int32_t *dirty;
    size_t ndirty, dirty_cap;
    uint8_t *adirty; /* per user arc, sized acap_n */
    bool vdirty;
    int32_t *pend;
    size_t npend, pend_cap;
    uint8_t *vpend; /* per vertex, sized vcap_n */

    /* scratch shared by the algorithms, sized vcap_n (allocated on demand) */
    size_t scratch_n;
    int32_t *cur, *stack, *list;
    int32_t *lvl, *queue; /* ssp.c's routing: BFS level and queue */
    int32_t nroute;       /* ssp.c's routing: its region is list[0 .. nroute) (admit) */
    bool at_first;        /* ssp.c: the phase's search stopped at the first deficit */
    int64_t ssp_labels;   /* ssp.c: labels the searches of the last flow_ssp made, for tests */
    struct flow_radix *rq; /* ssp.c's priority queue, allocated on first use */
    struct flow_ns *ns;    /* simplex.c's basis, allocated on first use */
    struct flow_sum *sum;  /* ssp_sum.c's summaries of flow-free tasks, allocated on first use */
    bool sum_off;          /* tests: shortest paths without the summaries */
    int32_t *sc_i32;
    int32_t epoch;

    int64_t value;
    struct hrm_flow_stats stats;

    /* cost scaling's heuristics switched off (FLOW_SCALE_NO_*; 0: all on), for
     * tests that compare the results with and without each */
    unsigned scale_off;
    int64_t scale_refined;   /* phases that price refinement skipped, for tests */
    int64_t scale_cancelled; /* cycles that price refinement cancelled, for tests */
    int64_t scale_fixed;     /* arc pairs that arc fixing took out of the scans, for tests */
    int64_t scale_gave_up;   /* first phases without a first flow that gave up, for tests */
    int64_t scale_updates;   /* global price updates inside the phases, for tests */
    int64_t scale_relabels;  /* relabels of the phases, for tests */
    bool scale_audit;        /* tests: record scale_phase_cost at every cost-scaling solve */
    int64_t scale_phase_cost; /* cost of the flow the phases left, before settle() */
};

#define FLOW_SCALE_NO_REFINE 1u /* price refinement (scale.c) */
#define FLOW_SCALE_NO_FIX 2u    /* arc fixing (scale.c) */

/* Adds v to the list of vertices whose excess may be non-zero. */
void flow_pend(struct hrm_flow *g, int32_t v);

/* Pushes delta units along residual arc r (delta <= rcap[r]), updating excesses. */
static inline void flow_push(struct hrm_flow *g, int32_t r, int64_t delta)
{
    g->rcap[r] -= delta;
    g->rcap[g->rev[r]] += delta;
    g->ex[g->tail[r]] -= delta;
    g->ex[g->head[r]] += delta;
}

/* Makes sure the scratch arrays hold g->n vertices. */
void flow_scratch(struct hrm_flow *g);

/*
 * Successive shortest paths from the current state (ssp.c): routes every
 * excess to a deficit along shortest paths of reduced cost, keeping reduced
 * costs >= 0.  Requires the invariants above with no dirty arc.  0, or
 * -HRM_EINFEASIBLE when some excess cannot reach any deficit (the state stays
 * consistent: what could be routed is).
 */
int flow_ssp(struct hrm_flow *g, struct hrm_error *err);

/*
 * Dinic's maximum flow from the vertices src[0 .. nsrc) that have excess to
 * the vertices with a deficit (ssp.c).  With nset >= 0 only over the arcs the
 * last search made admissible (reduced cost 0, heads among its nset settled
 * vertices in g->list or at its distance D, summaries of flow-free tasks); with nset < 0
 * over every arc with residual capacity, which is flow_route_all.  Routes
 * until no deficit is reachable from an excess.
 */
void flow_route(struct hrm_flow *g, const int32_t *src, int32_t nsrc, int32_t nset);

/* Dinic's algorithm over every residual arc (scale_route.c): an arc's test is
 * its residual capacity and its head's level, nothing else. */
void flow_route_all(struct hrm_flow *g, const int32_t *src, int32_t nsrc);

/* Frees what flow_ssp keeps between solves (NULL-safe). */
void flow_ssp_free(struct flow_radix *rq);

/*
 * Summaries of flow-free "tasks" for the shortest-path engine (ssp_sum.c).
 *
 * A task is a vertex t with exactly one arc in (from its owner j, not t) and
 * no arc out to a vertex that has only one arc in, other than a terminal of
 * the virtual arc.  While t carries no flow and has no excess, the only
 * residual arc into t is j -> t, so a search reaches t only from j and every
 * path through it costs c(j,t) + c(t,x) + pi(j) - pi(x) to each head x: the
 * potential of t cancels.  Per owner and head x, the summary edge j -> x
 * stands for the cheapest such task ("folded", vx[t].sum < 0); the searches
 * and the routing use it instead of walking the folded tasks, and pushing
 * flow on it unfolds that one task (its potential is set so that both of its
 * arcs are tight).  Folded tasks' potentials are meaningless during flow_ssp
 * and are set valid at its end, so every other reader sees the invariants.
 */
/* A summary edge as the searches and the routing read it: 16 bytes, so that
 * the owners' edges, a third of what a batch of changes reads, take half the
 * cache lines they took with the items' range beside them (struct sum_span). */
struct flow_sum_bucket {
    int64_t cost; /* c(j,t) + c(t,x) of the cheapest folded task, INT64_MAX if none */
    int32_t x, job;
};
/* Folds tasks again and rebuilds the summaries that changed (the vertices
 * touched since the last solve, or all); called at the start of flow_ssp. */
void flow_sum_sync(struct hrm_flow *g);
/* Ends of arcs whose flow, capacity or cost changed outside flow_ssp. */
void flow_sum_touch(struct hrm_flow *g, int32_t v);
/* Flows changed anywhere (an engine other than flow_ssp, a cold start): which
 * tasks fold must be found again; with `shape`, every summary is rebuilt. */
void flow_sum_forget(struct flow_sum *s, bool shape);
void flow_sum_free(struct flow_sum *s); /* NULL-safe */
/* The residual graph was laid out again; with hid and live (flow_sum_keeps),
 * each vertex's arcs from first[v] + hid[v] on are its hidden ones, and
 * those from first[v] + live[v] to there have no residual capacity. */
void flow_sum_relaid(struct hrm_flow *g, const int32_t *hid, const int32_t *live);
/* Vertex v < nv's slots moved in their order from segment start from[v] to
 * to[v] (flow.c's regrow): its parts move with them. */
void flow_sum_moved(struct hrm_flow *g, const int32_t *from, const int32_t *to, int32_t nv);
/* Puts the backward arcs of every partitioned vertex v < nv's live part before
 * its forward ones, each kind in its order (flow.c's regrow). */
void flow_sum_backward_first(struct hrm_flow *g, int32_t nv);
/* User arc a's flow or capacity changed outside flow_ssp (the patch of a
 * changed arc): its residual slots may cross their vertices' live boundary. */
void flow_sum_note_arc(struct hrm_flow *g, int32_t a);
/* Brings the live parts up to date (the noted arcs, or every vertex): from
 * then on every arc with residual capacity that is not hidden lies before
 * live[v], and every arc before it has some.  Only between the routing's
 * steps: it moves slots, which the search tree and current-arc pointers name. */
void flow_sum_place(struct hrm_flow *g);
/* Tests: the residual arcs of partitioned vertices on the wrong side of their
 * live boundary (0 after a solve). */
int64_t flow_sum_misplaced(const struct hrm_flow *g);
/* Unfolds everything (flow_ssp with g->sum_off). */
void flow_sum_drop(struct hrm_flow *g);
/* The summary edges themselves: ssp_sum.h. */
/* Pushes delta (<= flow_sum_cap) along summary edge b: on its task's two
 * arcs (the excesses of its ends are the caller's), unfolding the task (pi(t) = pi(j) + c(j,t)); the edge then stands for
 * the next cheapest folded task. */
void flow_sum_push(struct hrm_flow *g, int32_t b, int64_t delta);
/* Sets the folded tasks' potentials valid (end of flow_ssp). */
void flow_sum_settle(struct hrm_flow *g);
/* Tests: folded tasks now, and the number of summary groups. */
int32_t flow_sum_folded(const struct hrm_flow *g, int32_t *groups);

/*
 * Cost scaling from zero (scale.c): an optimal flow for supplies ex (the
 * excesses of the zero flow) with exact integer potentials.  0, or
 * -HRM_EINFEASIBLE (the state is then reset to zero flow by the caller).
 */
int flow_scaling(struct hrm_flow *g, struct hrm_error *err);


/*
 * Primal network simplex (simplex.c) on the user's arcs (and the virtual arc
 * in max mode): from its last optimal basis when only capacities, costs or
 * supplies changed since and that basis stays feasible, else from the star of
 * artificial arcs.  Leaves the residual graph in the state of the invariants
 * above (optimal, warm for any engine).  0 or -HRM_EINFEASIBLE (the excesses
 * left are what could not be routed).
 */
int flow_simplex(struct hrm_flow *g, struct hrm_error *err);
/* Distinct arc costs among up to 2,048 arcs spread evenly over g (flow.c);
 * scheduling graphs have 20-30, random families thousands.  At most
 * FLOW_FEW_COSTS: auto runs shortest paths, and the simplex prices in smaller
 * blocks (docs/flow-solver.md "What auto runs", "The network simplex"). */
int32_t flow_distinct_costs(const struct hrm_flow *g);
#define FLOW_FEW_COSTS 256
/* Whether the next simplex solve can start from its last basis. */
bool flow_simplex_warm_ok(const struct hrm_flow *g);
/* Whether the last simplex solve found few distinct costs (at most FLOW_FEW_COSTS). */
bool flow_simplex_few_costs(const struct hrm_flow *g);
/* Whether the simplex's big-M prices fit int64_t for this graph. */
bool flow_simplex_fits(const struct hrm_flow *g);
/* The basis no longer matches the graph's flow (another engine ran, or a reset). */
void flow_simplex_forget(struct flow_ns *ns);
void flow_simplex_free(struct flow_ns *ns); /* NULL-safe */
/* Tests: with `on`, every later simplex solve of g checks its whole basis
 * (tree links, thread, subtree sizes, bounds, balance, tight tree arcs, and
 * strong feasibility from the star) at the start and after every pivot,
 * O(n + m) each, and keeps the first failure.  Resets the record. */
void flow_simplex_audit(struct hrm_flow *g, bool on);
/* The first failed check's text, or NULL; *audits (if not NULL): checks passed. */
const char *flow_simplex_audit_failure(const struct hrm_flow *g, int64_t *audits);

/* hrm_flow_read_dimacs with a smaller vertex limit (the fuzz target's, to
 * keep its memory small). */
int flow_read_dimacs(FILE *in, const char *name, int32_t max_vertices, struct hrm_flow **out,
                     struct hrm_error *err);

#endif
