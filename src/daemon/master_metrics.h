/* The master's own counters and histograms for GET /metrics (master_metrics.c): what is not in
 * the job and node tables already.  They live in struct master (no globals) and are fed by small
 * hooks on the master's loop: messages dispatched, scheduling passes, store commits, placements,
 * usage samples and negotiator moves.  Only the master's thread touches them. */
#ifndef HRM_MASTER_METRICS_H
#define HRM_MASTER_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/wire.h"

/* Bounds of the largest bucket set; each histogram's bounds are fixed in master_metrics.c. */
#define METRICS_BUCKETS_MAX 16
/* Queues given a wait histogram of their own; the later ones share the last, "(other)". */
#define METRICS_QUEUES_MAX 16
#define METRICS_QUEUE_NAME_MAX 48

/* A Prometheus histogram: counts per bucket (not cumulative: rendering sums them), the last
 * one for values above every bound. */
struct metrics_hist {
    uint64_t n[METRICS_BUCKETS_MAX + 1];
    uint64_t count;
    double sum;
};

struct metrics_queue_wait {
    char queue[METRICS_QUEUE_NAME_MAX];
    struct metrics_hist wait;
};

struct master_counters {
    uint64_t msgs_in[HRM_WIRE_COUNT]; /* messages dispatched, by wire type */
    uint64_t decisions;               /* tasks placed on a node (launched, or queued there) */
    struct metrics_hist pass_seconds; /* one scheduling pass */
    struct metrics_hist commit_seconds; /* one store transaction's commit (turns that wrote) */
    struct metrics_queue_wait waits[METRICS_QUEUES_MAX]; /* submit -> first placement of a task */
    int32_t nwaits;
    uint64_t usage_task_ok, usage_task_bad, usage_node_ok, usage_node_bad;
    uint64_t negotiator_moves; /* tasks the negotiator moved between nodes' queues */
    uint64_t probes_relayed;   /* holds, dels and hold replies the master passed on */
};

/* Latency buckets (scheduling passes, store commits) and wait buckets (tasks' waits), seconds. */
extern const double metrics_latency_bounds[];
extern const int metrics_latency_nbounds;
extern const double metrics_wait_bounds[];
extern const int metrics_wait_nbounds;

void metrics_hist_observe(struct metrics_hist *h, const double *bounds, int nbounds, double v);

/* The hooks. */
void metrics_message(struct master_counters *c, int type);
/* npasses passes ran in elapsed_us between them (each is counted with the mean). */
void metrics_passes(struct master_counters *c, int64_t npasses, int64_t elapsed_us);
void metrics_commit(struct master_counters *c, int64_t elapsed_us);
/* A task was placed; first: its first placement, which waited wait_us since its job's submission
 * (a retried run is a decision, not a wait). */
void metrics_placed(struct master_counters *c, const char *queue, bool first, int64_t wait_us);
void metrics_usage_sample(struct master_counters *c, bool node, bool ok);

#endif
