/* The master's inbox: messages drained from its socket, in two FIFO queues, clients' and everyone else's. */
#ifndef HRM_MASTER_INBOX_H
#define HRM_MASTER_INBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "hrm/transport.h"

/*
 * ZeroMQ hands the master its peers' messages one pipe at a time (a fair queue over
 * connections): with thousands of agents sending, a client's request waits behind one message
 * of every agent, and the old loop answered it only after its turn of up to 1,024 agent
 * messages, their commit and their replies.  The loop now drains the socket into the inbox
 * (a receive is cheap; decoding and handling a message is what costs) and handles clients'
 * requests first, in bounded numbers, so `hrm jobs` is answered within a turn of a bounded
 * batch of agent messages whatever the fleet sends.  Each peer's messages keep their order:
 * a peer is a client or not for all of its messages (its key's role).
 */
enum inbox_class { INBOX_CLIENTS, INBOX_PEERS, INBOX_CLASSES };

struct inbox_queue {
    struct hrm_inmsg *items; /* a ring; each item's data is owned (malloc'd) */
    size_t cap, head, len;
};

struct inbox {
    struct inbox_queue q[INBOX_CLASSES];
    size_t max; /* messages held at most (both queues); 0: INBOX_DEFAULT_MAX */
};

#define INBOX_DEFAULT_MAX 16384

/* The class of a received message: its sender's role. */
enum inbox_class inbox_class_of(const struct hrm_inmsg *in);
/* Appends a copy of in (its data copied; in is not kept) to its class's queue; -ENOSPC when the
 * inbox holds max messages already (in is untouched: the socket keeps the rest). */
int inbox_push(struct inbox *ib, const struct hrm_inmsg *in);
/* Takes the oldest message of class c into out (its data owned by the caller now: inbox_done);
 * false when that queue is empty. */
/* The same whatever the inbox holds (messages that were received already). */
void inbox_push_any(struct inbox *ib, const struct hrm_inmsg *in);
/* Puts src's messages of class c ahead of dst's, in order, and empties that queue of src. */
void inbox_move_class(struct inbox *dst, struct inbox *src, enum inbox_class c);
/* The listing reader's messages back into the loop's inbox (master_snap.c), in the order they
 * were received.  Clients': kept, then pending (the reader looks at the requests the loop
 * handed it before it receives any; the loop holds none while it lends them).  The others':
 * the loop's own (received before it lent its socket), then kept.  Empties pending and kept. */
void inbox_give_back(struct inbox *loop, struct inbox *pending, struct inbox *kept);
bool inbox_pop(struct inbox *ib, enum inbox_class c, struct hrm_inmsg *out);
void inbox_done(struct hrm_inmsg *in); /* frees a popped message's data */
size_t inbox_len(const struct inbox *ib, enum inbox_class c);
size_t inbox_total(const struct inbox *ib);
/* Receives from srv until it has nothing more or the inbox is full; the number received, or a
 * negative errno of the receive (what was received before it is kept). */
int inbox_fill(struct inbox *ib, struct hrm_server *srv);
void inbox_free(struct inbox *ib); /* what it still holds is dropped */

#endif
