/* Read-only client requests answered beside the master's loop, from a published snapshot. */
#ifndef HRM_MASTER_SNAP_H
#define HRM_MASTER_SNAP_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/error.h"
#include "hrm/transport.h"

/*
 * The loop answers a client's request after the turn in progress: its agent messages, its
 * scheduling pass and its commit, which on a loaded host and a fleet of thousands of agents
 * are tens to hundreds of milliseconds.  A listing (`jobs`) needs none of that: it reads the
 * job table as the last commit left it.  So the loop publishes, after a commit, an immutable
 * snapshot of the job table's listing rows, and lends its ZeroMQ socket to a reader thread
 * while it works without it (the dispatch of a turn's agent messages aside, a turn's
 * scheduling pass, its commit, its estimate walk).  The reader, woken at once when the loop
 * lends its socket with clients' requests received and not handled (one ended the turn's
 * agent messages), else, while listings are asked, once a lend has lasted a reader period
 * (SNAP_READER_PERIOD_US),
 * answers handshakes and `jobs` requests from the snapshot, and keeps every other message, in
 * order, for the loop, which takes them back with its socket.  A `jobs` request is answered by the reader only when:
 *   - the snapshot is at most --snapshot-max-age old (SNAP_MAX_AGE_DEFAULT_US);
 *   - no submission or cancellation was acknowledged, and no `wait` told a job ended, after
 *     it was built (a client that was told its job exists, or ended, sees it so listed);
 *   - the request is well formed (the loop answers errors, with the text it always had), and
 *     its sender has no earlier message waiting for the loop (a peer's answers keep its order).
 * Otherwise it waits for the loop, as before.  The loop publishes a snapshot after a commit
 * while listings are being asked (SNAP_WARM_US since the last), at most every
 * SNAP_REFRESH_US, and at once after a reader found none it could use.
 */
#define SNAP_MAX_AGE_DEFAULT_US 1000000
#define SNAP_REFRESH_US 50000
#define SNAP_WARM_US 10000000
#define SNAP_READER_PERIOD_US 5000

struct master;
struct snap_reader;

/* Starts the reader thread on m->srv (borrowed); the loop holds the socket from now on. */
struct snap_reader *snap_reader_new(struct master *m, struct hrm_error *err);
void snap_reader_free(struct snap_reader *r); /* stops and joins it; NULL: no-op */
/* A turn begins (or its replies so far left); a client's request was handled in it (in: as
 * received), its reply not sent yet. */
void snap_turn_start(struct master *m);
void snap_client_handled(struct master *m, const struct hrm_inmsg *in);
/* The loop lends the socket (the reader may use it until snap_reclaim) ... */
void snap_lend(struct master *m);
/* ... and takes it back, with the messages the reader kept for it (into m->inbox, first). */
void snap_reclaim(struct master *m);
/* A listing was asked of the loop: snapshots are kept fresh for a while. */
void snap_listing_asked(struct master *m);
/* A client's submission or cancellation was handled in this turn, or a client told a job ended
 * (hrm wait): what it heard, a listing shows. */
void snap_client_wrote(struct master *m);
/* After the turn's commit, before its replies leave: publishes a snapshot if one is due. */
void snap_after_commit(struct master *m);

#endif
