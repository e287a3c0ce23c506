/* The store's WAL kept at one size and reused from its start, so a commit's sync is a data sync
 * (store.c's private helper; docs/runtime.md, "State folder and durability"). */
#ifndef HRM_STORE_WAL_H
#define HRM_STORE_WAL_H

#include <sqlite3.h>
#include <stdint.h>

#include "hrm/error.h"

/* Frames the WAL may hold before a checkpoint is due (SQLite's own default threshold). */
#define STORE_WAL_CHECKPOINT_FRAMES 1000
/* Frames the WAL file is written out to at open: the threshold, plus room for the turn that
 * crosses it, so the commits of a cycle never grow the file. */
#define STORE_WAL_FRAMES 2048

/* Bytes of a WAL of `frames` frames of the database's page size. */
int64_t store_wal_bytes(sqlite3 *db, int frames);

/* Sets journal_size_limit to the WAL's size and writes the WAL file out to it with zeros (real
 * blocks, not fallocate's unwritten ones), then fsyncs it once.  Takes the write lock around it,
 * so no frame is written meanwhile; the zeros are past every valid frame and never match a WAL
 * header's salts, so recovery ignores them.  Returns 0 or a negative errno-style code. */
int store_wal_prepare(sqlite3 *db, struct hrm_error *err);

#endif
