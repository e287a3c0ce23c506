/* Min-cost flow instance generators for the solver's benchmarks and tests. */
#ifndef HRM_FLOWGEN_H
#define HRM_FLOWGEN_H

#include <stdint.h>

#include "hrm/error.h"
#include "hrm/flow.h"
#include "hrm/rng.h"

/*
 * The standard families of min-cost flow benchmarks, written for hrm (no code
 * taken from the original generators), deterministic by seed: the same
 * parameters give the same graph, arc for arc, on every machine.
 *
 *  NETGEN   random network after Klingman, Napier and Stutz (1974): `nodes`
 *           vertices of which the first `sources` are pure sources and the last
 *           `sinks` pure sinks, `arcs` arcs; the total `supply` is split at
 *           random among sources and among sinks; costs in [cost_min, cost_max],
 *           capacities in [cap_min, cap_max].  A skeleton (a cycle through every
 *           vertex in a random order, capacity = total supply, cost cost_max)
 *           keeps every instance feasible; the other arcs join random vertices.
 *  GRIDGEN  a rows x cols grid with arcs both ways between neighbours, random
 *           costs and capacities; `sources` and `sinks` grid vertices chosen at
 *           random; `arcs` - grid arcs extra random arcs.  Skeleton: every
 *           row's horizontal arcs and column 0's vertical arcs get capacity =
 *           total supply and cost cost_max.
 *  GOTO     Goldberg's grid-on-torus family (hard for scaling algorithms): a
 *           rows x cols directed torus (right and down, wrapping), plus
 *           `arcs` - torus arcs long-range arcs whose cost grows with the
 *           distance they jump; capacities and costs span wide ranges; one
 *           source and one sink half the torus apart.  Skeleton as GRIDGEN's.
 *  P1       P1's scheduling network (jobs -> tasks -> machines / racks /
 *           cluster by data locality -> GPUs -> sink), with one vertex per GPU
 *           or one per machine (rack-aggregated), as `hrm bench flow` builds
 *           it; written with the maximum S -> T flow as fixed supplies.
 */
enum hrm_flowgen_family {
    HRM_FLOWGEN_NETGEN,
    HRM_FLOWGEN_GRIDGEN,
    HRM_FLOWGEN_GOTO,
    HRM_FLOWGEN_P1,
};

struct hrm_flowgen_p1 {
    long long gpus, jobs, tasks_per_job, gpus_per_machine, machines_per_rack;
    long long blocks, replicas, mem_classes, big_pct, need_big_pct;
    int per_gpu; /* one vertex per GPU (else a machine vertex with capacity = free GPUs) */
    uint64_t seed;
};

struct hrm_flowgen_params {
    long long nodes, arcs, sources, sinks, supply; /* NETGEN; arcs, supply for all three */
    long long rows, cols;                          /* GRIDGEN, GOTO */
    long long cost_min, cost_max, cap_min, cap_max;
    struct hrm_flowgen_p1 p1; /* P1 (p1.seed is set from seed) */
    uint64_t seed;
};

/* The defaults of a family at size 'S' (small) or 'M' (medium). */
void hrm_flowgen_defaults(enum hrm_flowgen_family fam, char size, struct hrm_flowgen_params *p);

/* Checks p for fam: 0, or -EINVAL with the offending parameter named in err
 * (by its command-line flag, e.g. "--sources"). */
int hrm_flowgen_check(enum hrm_flowgen_family fam, const struct hrm_flowgen_params *p,
                      struct hrm_error *err);

/* Builds the instance: *out is a new graph with balanced supplies that
 * hrm_flow_solve can route.  0, or -EINVAL (see hrm_flowgen_check). */
int hrm_flowgen_build(enum hrm_flowgen_family fam, const struct hrm_flowgen_params *p,
                      struct hrm_flow **out, struct hrm_error *err);

/* ---- P1 scheduling graph (also hrm bench flow's) ---- */

/* The generated P1 graph and what incremental steps need to find in it. */
struct hrm_flowgen_sched {
    struct hrm_flow *g;
    int32_t S, T;
    int32_t ntasks, njobs;
    int32_t *task_arc;   /* job -> task, per task */
    int32_t *task_job;   /* job index, per task */
    int32_t *job_arc;    /* S -> job, per job */
    int32_t *place_arcs; /* task -> machine / aggregator arcs, all tasks */
    int32_t nplace;
    int32_t *task_place; /* per task (+ 1): its first entry in place_arcs, in task order */
    int32_t *mach_arc;   /* rack aggregator -> machine, per machine: a node's only way in */
    int32_t nmach;
};

/* hrm bench flow's defaults: 2000 GPUs (4 per machine, 20 machines per rack),
 * 100 jobs x 100 tasks, 2 blocks x 3 replicas, 2 memory classes (25 % big,
 * 20 % of tasks need big), per-GPU vertices, seed 1. */
void hrm_flowgen_p1_defaults(struct hrm_flowgen_p1 *p);
/* Builds P1's network (min-cost max-flow S -> T; supplies 0) into s. */
void hrm_flowgen_p1_build(const struct hrm_flowgen_p1 *p, struct hrm_flowgen_sched *s);
void hrm_flowgen_sched_fini(struct hrm_flowgen_sched *s);

/* ---- the changes a scheduler makes between solves ---- */

/*
 * Kinds of change, on a P1 graph (s->S >= 0: min-cost max-flow S -> T) | on a
 * fixed-supply instance of the other families:
 *  TASK_END    a scheduled task leaves | an arc carrying flow is removed
 *  JOB_ARRIVE  a job of job_tasks tasks arrives, each with the placement arcs
 *              of a random existing task | a new source of job_tasks units
 *              with 8 arcs, and a random sink's demand grows by as much
 *  NODE_DIES   a machine with busy GPUs fails (its rack arc goes to 0) |
 *              every arc at a vertex that carries flow is removed
 *  ARC_COST    one placement arc's | any arc's cost moves to [c/2, 3c/2]
 *  BATCH       10 TASK_END, 1 JOB_ARRIVE, 1 NODE_DIES and 10 ARC_COST at once
 * Removals never touch arcs of capacity >= skeleton_cap (the generators'
 * skeleton: the total supply), so a feasible instance stays feasible.
 */
enum hrm_flowgen_change {
    HRM_FLOWGEN_TASK_END,
    HRM_FLOWGEN_JOB_ARRIVE,
    HRM_FLOWGEN_NODE_DIES,
    HRM_FLOWGEN_ARC_COST,
    HRM_FLOWGEN_BATCH,
    HRM_FLOWGEN_NCHANGES,
};

struct hrm_flowgen_changer {
    struct hrm_flowgen_sched *s; /* borrowed; for the other families only g, and S = T = -1 */
    int64_t skeleton_cap;        /* arcs this wide are never removed */
    int64_t job_tasks;           /* tasks (units) of an arriving job */
    struct hrm_rng rng;          /* seed it before use */
};

const char *hrm_flowgen_change_name(enum hrm_flowgen_change kind);
/* Makes one change of the kind to x->s->g (a change it finds no place for is skipped). */
void hrm_flowgen_change(struct hrm_flowgen_changer *x, enum hrm_flowgen_change kind);

#endif
