/* hrm sched's direct connections to the agents' probe listeners: holds and dels straight to a node, its replies straight back. */
#ifndef HRM_SCHED_PROBE_H
#define HRM_SCHED_PROBE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <zmq.h>

#include "hrm/transport.h"

struct sched_probes;

/* zctx and mine are borrowed: both outlive the returned value; off: never direct (every probe
 * via the master). */
struct sched_probes *sched_probes_new(void *zctx, const struct hrm_keypair *mine, bool off);
void sched_probes_free(struct sched_probes *sp);
/* Every node forgotten (a new sched_welcome follows). */
void sched_probes_clear(struct sched_probes *sp);
/* Node n's endpoint and agent key as the master gave them (either NULL or not a string: none,
 * its probes go through the master).  A changed endpoint drops the old connection. */
void sched_probes_set(struct sched_probes *sp, int32_t n, const json_t *ep, const json_t *pub);
/* Node n is down: its connection is closed (a new one is made when it is up again). */
void sched_probes_down(struct sched_probes *sp, int32_t n);
/* Queues msg (borrowed) for node n: true, or false when n takes no direct probes.  What is
 * queued for a node leaves as one frame (a batch) at sched_probes_flush, the turn's end. */
bool sched_probes_send(struct sched_probes *sp, int32_t n, const json_t *msg);
void sched_probes_flush(struct sched_probes *sp);
/* The connections to poll for ZMQ_POLLIN, written from items[0] (at most max): how many. */
size_t sched_probes_poll(struct sched_probes *sp, zmq_pollitem_t *items, size_t max);
/* The next message from any node, without waiting: 1 with *msg (new reference) and *node, 0
 * none.  Frames that do not decode are logged and skipped. */
int sched_probes_recv(struct sched_probes *sp, json_t **msg, int32_t *node);
/* Probes sent straight to the nodes. */
int64_t sched_probes_sent(const struct sched_probes *sp);

#endif
