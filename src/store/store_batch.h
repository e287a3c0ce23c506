/* The store's per-transaction write buffer: task rows and events kept until the commit, then
 * written as multi-row INSERTs (store.c's private helper; callers of hrm/store.h never see it). */
#ifndef HRM_STORE_BATCH_H
#define HRM_STORE_BATCH_H

#include <sqlite3.h>
#include <stddef.h>

#include "hrm/store.h"

struct store_batch;

struct store_batch *store_batch_new(void);
void store_batch_free(struct store_batch *b); /* NULL is a no-op; finalizes its statements */

/* Copies the row (its strings included): the caller's may go once this returns. */
void store_batch_task(struct store_batch *b, const struct hrm_store_task *t);
void store_batch_event(struct store_batch *b, const struct hrm_store_event *e);
size_t store_batch_len(const struct store_batch *b); /* rows waiting */

/* Writes what waits into db (in the caller's open transaction), in the order it came, and empties
 * the buffer; *statements grows by the statements stepped.  Returns an SQLite result code:
 * SQLITE_OK, or the failing statement's (its text in *what). */
int store_batch_flush(struct store_batch *b, sqlite3 *db, long long *statements, const char **what);
void store_batch_clear(struct store_batch *b); /* a rollback: nothing of it is written */

#endif
