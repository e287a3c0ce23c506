/* An agent's probe listener: the CURVE socket on which scheduler processes (hrm sched) probe the node's execution queues directly, admitting only the scheduler keys the master declared. */
#ifndef HRM_PROBE_LISTEN_H
#define HRM_PROBE_LISTEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/env.h"
#include "hrm/error.h"
#include "hrm/transport.h"

#define PROBE_LISTEN_DEFAULT "tcp://127.0.0.1:*"

struct probe_listen;

/* A probe as received: the sender (its routing id, for the reply) and the message. */
struct probe_in {
    unsigned char id[256];
    size_t idlen;
    struct hrm_msg msg; /* hold or del; from is the sender's instance (a scheduler address) */
};

/* Binds a CURVE ROUTER with the agent's own key pair kp on endpoint ("tcp://HOST:*": a free
 * port), and its handshake handler, in zctx (borrowed; no other ZAP handler may be in it).
 * Nobody is admitted until probe_listen_admit. */
struct probe_listen *probe_listen_new(void *zctx, const char *endpoint,
                                      const struct hrm_keypair *kp, struct hrm_error *err);
void probe_listen_free(struct probe_listen *pl);
/* Where scheduler processes reach it (sent in register): the bound endpoint, with the host's
 * name in place of a wildcard address. */
const char *probe_listen_endpoint(const struct probe_listen *pl);
/* The scheduler keys the master declared (an array of Z85 strings; anything else in it is
 * skipped and logged) and how many execution queues there are (0: one).  Handshakes wait
 * until the first call: a scheduler that connects before the master's welcome is admitted or
 * refused once the keys are known. */
void probe_listen_admit(struct probe_listen *pl, const json_t *keys, int32_t nqueues);
/* Sockets to poll for ZMQ_POLLIN, at most 2 (the handshake handler only once admitted). */
size_t probe_listen_zsocks(struct probe_listen *pl, void *socks[2]);
/* The next probe, without waiting: 1 with *in, 0 none left.  Handshakes are answered first.
 * A batch's items are taken one by one.  What is not a well-formed hold or del from an
 * admitted scheduler key is answered with a bad_field error and logged (at most a few lines a
 * minute), and skipped. */
int probe_listen_next(struct probe_listen *pl, struct probe_in *in);
/* Whether a probe can be waiting: a scheduler key is declared, or a batch is being taken
 * apart.  Without either no handshake succeeds, so a look at the socket between the master's
 * messages would find nothing (the turn's own looks still answer any handshake and refuse
 * what an earlier key sent). */
bool probe_listen_expecting(const struct probe_listen *pl);
/* Queues msg (borrowed) for the sender of a probe: what is queued for one sender leaves as one
 * frame (a batch) at probe_listen_flush.  0 (a sender gone since loses it). */
int probe_listen_send(struct probe_listen *pl, const struct probe_in *to, const json_t *msg);
void probe_listen_flush(struct probe_listen *pl);
/* Probes taken and refused since the start. */
void probe_listen_counts(const struct probe_listen *pl, int64_t *taken, int64_t *refused);

#endif
