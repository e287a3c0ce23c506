/* Flow-level network model: transfers over disk, node and rack links sharing capacity max-min fairly. */
#ifndef HRM_NET_H
#define HRM_NET_H

#include <stdint.h>

#include "hrm/cluster.h"

/*
 * Links: each node's disk (D), each node's NIC out and in (B_r), each rack's
 * uplink and downlink to the core (B_s).  A transfer of a block from node src
 * to node dst uses:
 *   src == dst:        disk(src)
 *   same rack:         disk(src), nic_out(src), nic_in(dst)
 *   different racks:   disk(src), nic_out(src), rack_up(rack src), rack_down(rack dst), nic_in(dst)
 * Active transfers get max-min fair rates (progressive filling), recomputed
 * whenever a transfer starts, ends or is cancelled.
 */
enum hrm_locality { HRM_LOCAL, HRM_RACK, HRM_CROSS };

struct hrm_net;

struct hrm_net *hrm_net_new(const struct hrm_cluster *c); /* c borrowed */
void hrm_net_free(struct hrm_net *net);

enum hrm_locality hrm_net_locality(const struct hrm_cluster *c, int32_t src, int32_t dst);

/* Starts a transfer of bytes (> 0) at now_us; tag is returned on completion.
 * Returns a transfer id (>= 0). */
int32_t hrm_net_start(struct hrm_net *net, int64_t now_us, int32_t src, int32_t dst, double bytes,
                      uint64_t tag);
/* Cancels an active transfer (no completion is reported). */
void hrm_net_cancel(struct hrm_net *net, int64_t now_us, int32_t id);
/* Time at which the next active transfer completes, or INT64_MAX if none. */
int64_t hrm_net_next_completion(const struct hrm_net *net);
/* Advances to now_us and removes the transfers done by then, calling done for
 * each (in start order).  Returns how many completed. */
int hrm_net_complete(struct hrm_net *net, int64_t now_us,
                     void (*done)(void *arg, uint64_t tag), void *arg);
/* Current rate of an active transfer in bytes/s (for tests and reports). */
double hrm_net_rate(const struct hrm_net *net, int32_t id);
int32_t hrm_net_active(const struct hrm_net *net);

#endif
