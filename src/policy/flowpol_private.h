/* P1 internals: transfer costs, GPU fair shares, the flow network, shared policy steps. */
#ifndef HRM_FLOWPOL_PRIVATE_H
#define HRM_FLOWPOL_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/flow.h"
#include "policy/policy_private.h"

/* ---- parameters (docs/policies.md, "P1") ---- */

#define P1_ALPHA1_DEFAULT 1.5 /* in-rack read penalty */
#define P1_ALPHA2_DEFAULT 3.0 /* cross-rack read penalty */
#define P1_ALPHA3_DEFAULT 2.0 /* unscheduled penalty (flow policies) */
#define P1_D1_DEFAULT 3       /* gsd: declines before an in-rack GPU is accepted */
#define P1_D2_DEFAULT 6       /* gsd: declines before any GPU is accepted */

struct p1_params {
    double alpha1, alpha2, alpha3;
    int64_t d1, d2;
    int64_t incremental; /* flow policies: keep the graph between passes (1) or rebuild (0) */
    int64_t delay;       /* fs, fsp: deficits priced by waiting time (1) or forced (0) */
    int64_t clamp;       /* costs keep local <= in-rack <= cross-rack (1) or the paper's sum (0) */
    int64_t nj_unfinished; /* N_j counts every GPU task not ended (1) or held + ready (0) */
};

/* Reads the keys listed in known (a subset of alpha1, alpha2, alpha3, d1, d2,
 * incremental, delay, clamp, nj_unfinished, paper) over the defaults; rejects
 * unknown keys and values out of range (alphas >= 1, 0 <= d1 <= d2, flags 0/1).
 * paper=1 is the paper-literal parameter set: delay 0, clamp 0, nj_unfinished 1,
 * read before the other keys so that an explicit key still overrides it. */
int p1_params_read(struct p1_params *out, const struct hrm_params *params, const char *const *known,
                   const char *policy, struct hrm_error *err);

/* ---- transfer cost (integer milliseconds) ---- */

/*
 * Reading a block of s bytes from a replica on node r to node d costs
 *   s / D_r                                 if r == d (D_r: r's disk)
 *   max(alpha1 * s / B_r, s / D_r)          if r is in d's rack
 *   max(alpha2 * s / B_s, the in-rack cost) otherwise
 * and a task reads each block from the replica (on an up node) that is cheapest
 * for d.  The max() keeps local <= in-rack <= cross-rack for every replica: a
 * farther read also crosses the nearer links.  It is what makes the rack and
 * cluster aggregators of the flow network exact (flow_net.c).
 */
struct p1_cost {
    const struct hrm_cluster *c;
    double alpha1, alpha2;
    bool literal; /* the paper's sum without the max(): s / D_r, alpha1 s / B_r, alpha2 s / B_s */
};

/* Cost of task on node. */
int64_t p1_cost_node(const struct p1_cost *m, const struct hrm_state *s, int32_t task,
                     int32_t node);
/* Cost on any node of rack that holds none of the task's blocks. */
int64_t p1_cost_rack(const struct p1_cost *m, const struct hrm_state *s, int32_t task,
                     int32_t rack);
/* Cost on any node of a rack that holds none of the task's blocks. */
int64_t p1_cost_remote(const struct p1_cost *m, const struct hrm_state *s, int32_t task);
/* Input bytes of a task. */
int64_t p1_task_bytes(const struct hrm_state *s, int32_t task);
/* GPU memory a task needs on each of its GPUs. */
int64_t p1_task_gpu_need(const struct hrm_task *t);

/* ---- fair shares ---- */

/*
 * A_j = min(floor(q / k), N_j) for each of the n jobs, then the GPUs left over
 * are spread evenly over the jobs with waiting demand (N_j > A_j), one at a
 * time in the given order when they do not divide evenly, until
 * sum A_j = min(q, sum N_j).  k >= n counts the running jobs (those with no
 * demand too); k = 0 gives every share 0.  O(n) per round, at most n rounds.
 */
void p1_fair_share(int64_t q, int32_t k, const int64_t *demand, int32_t n, int64_t *share);

/* Per pass: the jobs that hold or want GPUs, in arrival order, with their numbers. */
struct p1_shares {
    int32_t njobs;
    int32_t *jobs;   /* workload job ids, by arrival */
    int64_t *held;   /* GPUs held by running tasks */
    int64_t *ready;  /* GPUs asked by ready GPU tasks */
    int64_t *demand; /* N_j = held + ready */
    int64_t *share;  /* A_j */
    int32_t *slot;   /* per workload job: index in jobs, or -1 */
    size_t cap, cap_num, cap_slot;
    int64_t q; /* GPUs of up nodes */
    bool unfinished; /* set by the policy: N_j adds the job's blocked GPU tasks (the paper's
                        "tasks not yet executed"); false: held + ready */
};

/* Fills sh from the state: O(ready tasks + running tasks + nodes). */
void p1_shares_compute(struct p1_shares *sh, const struct hrm_state *s);
void p1_shares_fini(struct p1_shares *sh);

/* ---- steps shared by the policies ---- */

/*
 * Preemption (GSP, FSP): while the jobs below their share cannot reach it with
 * the free GPUs, kill the youngest running GPU task (latest start, then higher
 * id) of a job above its share, until that job is at its share.  A victim is
 * only taken if its GPUs could host a waiting task of a job below its share.
 * Updates sh (held, ready).  Returns the number killed or a negative code.
 */
int p1_reclaim(struct hrm_sched_ctx *ctx, struct p1_shares *sh);

/* Tasks outside the GPU model (no GPU, or several GPUs): first fit in job
 * arrival order, as the paper leaves CPU work to a conventional scheduler. */
int p1_place_others(struct hrm_sched_ctx *ctx);

/* ---- the flow network (flow_net.c) ---- */

struct flownet_cfg {
    double alpha1, alpha2, alpha3;
    bool unscheduled; /* per-job unscheduled vertices (FS, FSP); false: FSU */
    bool aggregate;   /* rack and cluster aggregators (false: full bipartite, for tests) */
    bool incremental; /* keep the graph and the last flow between passes */
    bool priced;      /* a job below its share may still wait, at a price growing
                         with its wait (false: its deficit is placed whenever GPUs allow) */
    bool literal;     /* the paper's unclamped costs (struct p1_cost); needs aggregate false */
};

struct flownet_place {
    int32_t task, node, gpu; /* gpu: index on the node */
};

struct flownet_stats {
    int32_t vertices, arcs; /* of the graph solved last */
    int32_t tasks, gpus;    /* ready one-GPU tasks and free GPUs in the last network */
    int64_t builds;         /* graphs built from scratch so far */
    int64_t solves;
};

struct flownet;

struct flownet *flownet_new(const struct flownet_cfg *cfg);
void flownet_free(struct flownet *net); /* NULL is a no-op */

/* Brings the network to the state: every ready one-GPU task of the jobs of sh,
 * every free GPU, the unscheduled arcs from sh's shares (force: deficits are
 * not priced this pass even in priced mode).  Then solves the min-cost maximum
 * flow and reads the placements.  0 or a negative code. */
int flownet_run(struct flownet *net, const struct hrm_state *s, const struct p1_shares *sh,
                int64_t now_us, bool force, struct hrm_error *err);

/* Placements of the last run (borrowed until the next run), jobs in arrival order. */
size_t flownet_places(const struct flownet *net, const struct flownet_place **out);
/* Total cost of the last run's flow. */
int64_t flownet_cost(const struct flownet *net);
void flownet_stats(const struct flownet *net, struct flownet_stats *out);
/* The graph of the last run (tests: inspect or re-solve it). */
struct hrm_flow *flownet_graph(const struct flownet *net);
int32_t flownet_source(const struct flownet *net);
int32_t flownet_sink(const struct flownet *net);

#endif
