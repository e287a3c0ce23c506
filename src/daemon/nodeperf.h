/* Measured node performance (hrm agent --bench): the figures, their cache file and wire form,
 * the flags that slow an agent down on purpose, and how the master maps the figures to what
 * NPARSA reads (docs/runtime.md, "Node performance"). */
#ifndef HRM_NODEPERF_H
#define HRM_NODEPERF_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "hrm/error.h"

#define NODEPERF_VERSION 1

/* One node's bench.  A figure of 0 is unknown (not measured, or the measurement failed). */
struct node_perf {
    double cpu;      /* the CPU kernel's iterations per second, per core (all cores at once) */
    double mem_bw;   /* bytes copied per second (one thread, buffers far above the caches) */
    double disk_bw;  /* bytes per second written to the state folder, fsync'd */
    int64_t at;      /* when it was measured, Unix seconds; 0: never */
    /* The limits it was measured under: a cache taken under other ones is stale. */
    double speed;    /* --speed, (0, 1]; 1 when not slowed */
    int64_t disk_bps; /* --disk-bps, bytes per second; 0 when not throttled */
};

/* Reads the figures of a cache file or a register message's "bench" object: numbers >= 0
 * and finite, speed in (0, 1].  0, or -1 with why ("'cpu' is negative"). */
int nodeperf_from_json(const json_t *o, struct node_perf *p, char *why, size_t len);
json_t *nodeperf_to_json(const struct node_perf *p); /* new reference */

/* The cache, path = <state>/bench-<name>.json.  read: 0, -ENOENT when absent, or another
 * negative code with the file and reason in err; write: atomic (temporary file, rename). */
int nodeperf_cache_read(const char *path, struct node_perf *p, struct hrm_error *err);
int nodeperf_cache_write(const char *path, const struct node_perf *p, struct hrm_error *err);
/* A cached bench answers for the agent when it is complete and was measured under the limits
 * the agent runs with now. */
bool nodeperf_cache_fits(const struct node_perf *cached, double speed, int64_t disk_bps);

/* --speed F: a share of the host's CPUs in (0, 1].  flag names the flag in why. */
int nodeperf_parse_speed(const char *flag, const char *text, double *out, char *why, size_t len);
/* --disk-bps RATE: "50MB/s", "20MiB/s" or bytes per second ("20M" = 20 MiB/s), > 0. */
int nodeperf_parse_bps(const char *flag, const char *text, int64_t *out, char *why, size_t len);
/* A comma-separated list of either (hrm up --node-speed 1,1,0.5,0.25; --node-disk-bps):
 * parse is nodeperf_parse_speed or _bps by which of out_speed / out_bps is not NULL.
 * *n gets the count (1..max).  0, or -1 with why naming the flag and the bad item. */
int nodeperf_parse_list(const char *flag, const char *text, double *out_speed, int64_t *out_bps,
                        int max, int *n, char *why, size_t len);

/*
 * What NPARSA reads from the bench figures of the cluster's n nodes:
 *   cpu_speed[i] = perf[i].cpu / (the fastest node's cpu), so the fastest node is 1.0 and a
 *                  node whose kernel ran at a quarter of its rate is 0.25;
 *   disk_bw[i]   = perf[i].disk_bw in bytes per second (NPARSA divides every indicator by its
 *                  maximum over the nodes, so absolute figures rank the same).
 * A node with a figure unknown gets the slowest known one (a failed bench gives no edge);
 * when no node knows a figure, every node gets cpu_speed 1.0 / disk_bw 0 (the cluster's
 * default), as before any bench.  Memory bandwidth is shown, not read: NPARSA's static
 * indicators are cores, memory size, disk size and CPU speed.
 */
void nodeperf_map(const struct node_perf *perf, int n, double *cpu_speed, double *disk_bw);

#endif
