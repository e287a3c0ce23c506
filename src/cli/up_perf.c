/* hrm up --node-speed / --node-disk-bps: a heterogeneous cluster on one machine, one value per agent, repeated cyclically. */
#include <stdio.h>

#include "daemon/nodeperf.h"
#include "up.h"

int up_node_perf_check(const struct up_cluster *u)
{
    double speed[UP_MAX_NODES];
    int64_t bps[UP_MAX_NODES];
    int n;
    char why[200];
    if ((u->node_speed && nodeperf_parse_list("--node-speed", u->node_speed, speed, NULL,
                                              UP_MAX_NODES, &n, why, sizeof(why)) < 0) ||
        (u->node_disk_bps && nodeperf_parse_list("--node-disk-bps", u->node_disk_bps, NULL, bps,
                                                 UP_MAX_NODES, &n, why, sizeof(why)) < 0)) {
        fprintf(stderr, "hrm up: %s\n", why);
        return -1;
    }
    return 0;
}

int up_node_perf_args(const struct up_cluster *u, int i, char **argv, char *speed, char *bps)
{
    double sv[UP_MAX_NODES];
    int64_t bv[UP_MAX_NODES];
    int n, k = 0;
    char why[200];
    if (u->node_speed &&
        nodeperf_parse_list("--node-speed", u->node_speed, sv, NULL, UP_MAX_NODES, &n, why,
                            sizeof(why)) == 0 && sv[i % n] < 1) {
        snprintf(speed, 32, "%.17g", sv[i % n]);
        argv[k++] = "--speed", argv[k++] = speed;
    }
    if (u->node_disk_bps &&
        nodeperf_parse_list("--node-disk-bps", u->node_disk_bps, NULL, bv, UP_MAX_NODES, &n, why,
                            sizeof(why)) == 0) {
        snprintf(bps, 32, "%lld", (long long)bv[i % n]);
        argv[k++] = "--disk-bps", argv[k++] = bps;
    }
    return k;
}
