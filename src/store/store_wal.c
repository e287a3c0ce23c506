/*
 * The store's WAL at a fixed size.  With synchronous=FULL every commit ends with an fdatasync of
 * the WAL.  While the WAL file grows, that sync must also journal the file's new size and blocks
 * (ext4: a commit of its metadata journal), several times the cost of syncing data written over
 * blocks that exist already (docs/benchmarks.md, "Runtime throughput").  SQLite restarts the WAL
 * from its start after a complete checkpoint, so once the file holds a whole cycle it stops
 * growing; a fresh WAL (every master start: SQLite deletes it at close) grows for the first
 * cycle.  Writing it out at open makes every commit a data sync from the first one.
 */
#define _GNU_SOURCE 1
#include "store_wal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WAL_HEADER 32 /* bytes before the first frame */
#define FRAME_HEADER 24

static int pragma_int(sqlite3 *db, const char *sql, int64_t *out)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? SQLITE_OK : rc;
}

int64_t store_wal_bytes(sqlite3 *db, int frames)
{
    int64_t page = 4096;
    pragma_int(db, "PRAGMA page_size", &page);
    return WAL_HEADER + (int64_t)frames * (FRAME_HEADER + page);
}

/* Zeros from the file's end to `bytes`, then one fsync (the size and the blocks). */
static int extend(const char *path, int64_t bytes, struct hrm_error *err)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return hrm_errorf(err, -errno, "store: %s: %s", path, strerror(errno));
    struct stat sb;
    int rc = fstat(fd, &sb) < 0 ? -errno : 0;
    static const char zeros[64 << 10];
    for (int64_t at = sb.st_size; rc == 0 && at < bytes;) {
        size_t n = bytes - at < (int64_t)sizeof(zeros) ? (size_t)(bytes - at) : sizeof(zeros);
        ssize_t w = pwrite(fd, zeros, n, at);
        if (w > 0)
            at += w;
        else if (w == 0 || errno != EINTR)
            rc = w == 0 ? -EIO : -errno;
    }
    if (rc == 0 && sb.st_size < bytes && fsync(fd) < 0)
        rc = -errno;
    close(fd);
    return rc < 0 ? hrm_errorf(err, rc, "store: writing out %s: %s", path, strerror(-rc)) : 0;
}

int store_wal_prepare(sqlite3 *db, struct hrm_error *err)
{
    int64_t bytes = store_wal_bytes(db, STORE_WAL_FRAMES);
    char sql[96];
    /* A transaction bigger than the file grows it; the next cycle gives the excess back. */
    snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit=%lld", (long long)bytes);
    int64_t ignored;
    int rc = pragma_int(db, sql, &ignored);
    if (rc != SQLITE_OK)
        return hrm_errorf(err, -EIO, "store: %s: %s", sql, sqlite3_errmsg(db));
    /* The write lock: the WAL is open and no connection appends a frame while we write. */
    if ((rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) != SQLITE_OK)
        return hrm_errorf(err, rc == SQLITE_BUSY ? -EBUSY : -EIO, "store: %s",
                          sqlite3_errmsg(db));
    const char *wal = sqlite3_filename_wal(sqlite3_db_filename(db, "main"));
    int r = wal ? extend(wal, bytes, err) : 0;
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return r;
}
