/* Store I/O faults, injected the way SQLite's own tests do: a VFS wrapping the real one fails
 * writes (a full disk, an I/O error) or fsync on demand.  The store must return an error, never
 * corrupt the database, and reopen with everything committed before the fault. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hrm/store.h"

enum fault { FAULT_NONE, FAULT_FULL, FAULT_WRITE, FAULT_FSYNC };

/* The wrapper is registered as the default VFS, so hrm_store_open uses it unchanged.  Its
 * state lives in this struct; each Criterion test runs in a process of its own. */
static struct {
    sqlite3_vfs vfs;
    sqlite3_vfs *real;
    enum fault fault;
    int failed; /* how many operations the fault failed */
    int syncs;  /* syncs passed to the real VFS */
} inj;

struct faulty_file {
    sqlite3_file base; /* first: SQLite sees this */
    sqlite3_file *real; /* the real file, in the memory right after this struct */
};

#define REAL(f) (((struct faulty_file *)(f))->real)

static int f_close(sqlite3_file *f)
{
    int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
    return rc;
}
static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
    return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}
static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
    if (inj.fault == FAULT_FULL || inj.fault == FAULT_WRITE) {
        inj.failed++;
        return inj.fault == FAULT_FULL ? SQLITE_FULL : SQLITE_IOERR_WRITE;
    }
    return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int f_sync(sqlite3_file *f, int flags)
{
    if (inj.fault == FAULT_FSYNC) {
        inj.failed++;
        return SQLITE_IOERR_FSYNC;
    }
    inj.syncs++;
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int f_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int f_lock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xLock(REAL(f), l);
}
static int f_unlock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), l);
}
static int f_reserved(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int f_control(sqlite3_file *f, int op, void *arg)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int f_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int f_device(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int f_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **p)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, p);
}
static int f_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}
static void f_shm_barrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int f_shm_unmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

/* Version 2 (shared memory for WAL), without xFetch: every read goes through xRead. */
static const sqlite3_io_methods faulty_methods = {
    .iVersion = 2,
    .xClose = f_close,
    .xRead = f_read,
    .xWrite = f_write,
    .xTruncate = f_truncate,
    .xSync = f_sync,
    .xFileSize = f_size,
    .xLock = f_lock,
    .xUnlock = f_unlock,
    .xCheckReservedLock = f_reserved,
    .xFileControl = f_control,
    .xSectorSize = f_sector,
    .xDeviceCharacteristics = f_device,
    .xShmMap = f_shm_map,
    .xShmLock = f_shm_lock,
    .xShmBarrier = f_shm_barrier,
    .xShmUnmap = f_shm_unmap,
};

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    struct faulty_file *ff = (struct faulty_file *)f;
    ff->real = (sqlite3_file *)(ff + 1);
    ff->base.pMethods = NULL;
    int rc = inj.real->xOpen(inj.real, name, ff->real, flags, out);
    if (rc == SQLITE_OK)
        ff->base.pMethods = &faulty_methods;
    return rc;
}
static int v_delete(sqlite3_vfs *v, const char *n, int sync)
{
    (void)v;
    return inj.real->xDelete(inj.real, n, sync);
}
static int v_access(sqlite3_vfs *v, const char *n, int flags, int *out)
{
    (void)v;
    return inj.real->xAccess(inj.real, n, flags, out);
}
static int v_full(sqlite3_vfs *v, const char *n, int nout, char *out)
{
    (void)v;
    return inj.real->xFullPathname(inj.real, n, nout, out);
}
static void *v_dlopen(sqlite3_vfs *v, const char *n)
{
    (void)v;
    return inj.real->xDlOpen(inj.real, n);
}
static void v_dlerror(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    inj.real->xDlError(inj.real, n, out);
}
static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *s))(void)
{
    (void)v;
    return inj.real->xDlSym(inj.real, h, s);
}
static void v_dlclose(sqlite3_vfs *v, void *h)
{
    (void)v;
    inj.real->xDlClose(inj.real, h);
}
static int v_random(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return inj.real->xRandomness(inj.real, n, out);
}
static int v_sleep(sqlite3_vfs *v, int us)
{
    (void)v;
    return inj.real->xSleep(inj.real, us);
}
static int v_time(sqlite3_vfs *v, double *out)
{
    (void)v;
    return inj.real->xCurrentTime(inj.real, out);
}
static int v_last_error(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return inj.real->xGetLastError ? inj.real->xGetLastError(inj.real, n, out) : 0;
}
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    (void)v;
    return inj.real->xCurrentTimeInt64(inj.real, out);
}

static char dir[] = "/tmp/hrm-rt-store-XXXXXX";
static char path[256];

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/hrm.db", dir);
    inj.real = sqlite3_vfs_find(NULL);
    cr_assert_not_null(inj.real);
    inj.vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(struct faulty_file) + inj.real->szOsFile,
        .mxPathname = inj.real->mxPathname,
        .zName = "hrm-faulty",
        .xOpen = v_open,
        .xDelete = v_delete,
        .xAccess = v_access,
        .xFullPathname = v_full,
        .xDlOpen = v_dlopen,
        .xDlError = v_dlerror,
        .xDlSym = v_dlsym,
        .xDlClose = v_dlclose,
        .xRandomness = v_random,
        .xSleep = v_sleep,
        .xCurrentTime = v_time,
        .xGetLastError = v_last_error,
        .xCurrentTimeInt64 = v_time64,
    };
    cr_assert_eq(sqlite3_vfs_register(&inj.vfs, 1), SQLITE_OK);
    inj.fault = FAULT_NONE;
    inj.failed = 0;
}

static void teardown(void)
{
    sqlite3_vfs_unregister(&inj.vfs);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(rt_store_faults, .init = setup, .fini = teardown);

static struct hrm_store_job job(int64_t id)
{
    return (struct hrm_store_job){.id = id, .name = "j", .user = "u", .queue = "default",
                                  .ntasks = 1, .submit_us = id, .end_us = -1, .spec = "{}"};
}

/* Commits job id and its task row in one transaction; the store's return code. */
static int put_job(struct hrm_store *s, int64_t id, struct hrm_error *err)
{
    int rc = hrm_store_begin(s, err);
    struct hrm_store_job j = job(id);
    struct hrm_store_task t = {.job = id, .idx = 0, .state = HRM_RTASK_DONE, .attempt = 1,
                               .node = "n1", .start_us = 1, .end_us = 2};
    if (rc == 0)
        rc = hrm_store_insert_job(s, &j, err);
    if (rc == 0)
        rc = hrm_store_put_task(s, &t, err);
    if (rc == 0)
        rc = hrm_store_meta_put(s, "next_job", id + 1, err);
    if (rc == 0)
        rc = hrm_store_commit(s, err);
    else
        hrm_store_rollback(s);
    return rc;
}

static void holds_one_of(int lo, int hi);

struct ids {
    int n;
    int64_t id[16];
    int tasks;
};

static int on_job(void *arg, const struct hrm_store_job *j)
{
    struct ids *ids = arg;
    cr_assert_lt(ids->n, 16);
    ids->id[ids->n++] = j->id;
    return 0;
}

static int on_task(void *arg, const struct hrm_store_task *t)
{
    ((struct ids *)arg)->tasks++;
    cr_assert_str_eq(t->node, "n1");
    return 0;
}

/* With no fault: the file is sound and holds exactly jobs 1..n, each with its task, and
 * next_job says n + 1 (absent when n is 0). */
static void holds_exactly(int n)
{
    holds_one_of(n, n);
}

/* Sound, holding jobs 1..n whole for one n in lo..hi. */
static void holds_one_of(int lo, int hi)
{
    inj.fault = FAULT_NONE;
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    sqlite3_close(db);

    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "reopen after the fault: %s", err.text);
    struct ids ids = {0};
    cr_assert_eq(hrm_store_load(s, on_job, on_task, &ids, &err), 0, "%s", err.text);
    int n = ids.n;
    cr_assert(n >= lo && n <= hi, "%d jobs after the fault, expected %d..%d", n, lo, hi);
    /* A transaction is there whole or not at all: each job with its task and its next_job. */
    cr_assert_eq(ids.tasks, n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(ids.id[i], i + 1);
    cr_assert_eq(hrm_store_meta_get(s, "next_job", 0), n ? n + 1 : 0);
    /* And it takes writes again. */
    cr_assert_eq(put_job(s, n + 1, &err), 0, "%s", err.text);
    hrm_store_close(s);
}

/* Commits jobs 1 and 2, then tries job 3 under the fault: the store returns want, leaves no
 * transaction open, and the file holds jobs 1 and 2, and job 3 whole when maybe_kept. */
static void fault_on_commit(enum fault fault, int want, bool maybe_kept)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(put_job(s, 1, &err), 0, "%s", err.text);
    cr_assert_eq(put_job(s, 2, &err), 0, "%s", err.text);
    inj.fault = fault;
    inj.failed = 0;
    int rc = put_job(s, 3, &err);
    cr_assert_gt(inj.failed, 0, "the fault was never hit");
    cr_assert_lt(rc, 0, "a commit under an injected fault returned success");
    cr_assert_eq(rc, want, "code %d (%s)", rc, err.text);
    cr_assert(strstr(err.text, "store:"), "%s", err.text);
    cr_assert(!hrm_store_in_txn(s), "a failed commit left a transaction open");
    hrm_store_close(s);
    holds_one_of(2, maybe_kept ? 3 : 2);
}

Test(rt_store_faults, a_full_disk_fails_the_commit_with_enospc_and_loses_nothing_committed)
{
    fault_on_commit(FAULT_FULL, -ENOSPC, false);
}

Test(rt_store_faults, a_write_error_fails_the_commit_and_loses_nothing_committed)
{
    fault_on_commit(FAULT_WRITE, -HRM_EIO, false);
}

Test(rt_store_faults, a_failed_fsync_fails_the_commit_and_loses_nothing_committed)
{
    /* The frames reached the WAL before its fsync failed: the outcome is unknown to the caller
     * (it must not acknowledge), and a reopen may find the transaction, but only whole. */
    fault_on_commit(FAULT_FSYNC, -HRM_EIO, true);
}

Test(rt_store_faults, the_store_goes_on_after_a_fault_clears)
{
    /* The same connection: a failed commit, then the fault clears and the next one lands. */
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(put_job(s, 1, &err), 0, "%s", err.text);
    inj.fault = FAULT_FSYNC;
    cr_assert_lt(put_job(s, 2, &err), 0);
    inj.fault = FAULT_NONE;
    cr_assert_eq(put_job(s, 2, &err), 0, "after the fault cleared: %s", err.text);
    hrm_store_close(s);
    holds_exactly(2);
}

Test(rt_store_faults, opening_on_a_full_disk_is_an_error_not_a_crash)
{
    inj.fault = FAULT_FULL;
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_null(s, "a store opened on a disk that takes no write");
    cr_assert(strstr(err.text, "store"), "%s", err.text);
    inj.fault = FAULT_NONE;
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    hrm_store_close(s);
    holds_exactly(0);
}

/* A split commit (the master's turns: launches leave between its two steps): SQLite's COMMIT
 * syncs nothing, hrm_store_sync syncs once; a whole commit and a write outside any transaction
 * still sync inside SQLite. */
Test(rt_store_faults, a_split_commit_syncs_only_in_hrm_store_sync)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(put_job(s, 1, &err), 0, "%s", err.text);
    struct hrm_store_job j = job(2);
    for (int round = 0; round < 2; round++) { /* the level is set again after a FULL write */
        int before = inj.syncs;
        cr_assert_eq(hrm_store_begin_split(s, &err), 0);
        cr_assert_eq(hrm_store_insert_job(s, &j, &err), 0, "%s", err.text);
        cr_assert_eq(hrm_store_commit_unsynced(s, &err), 0, "%s", err.text);
        cr_assert_eq(inj.syncs, before, "the split commit's first step synced (round %d)", round);
        cr_assert(hrm_store_sync_pending(s));
        cr_assert_eq(hrm_store_sync(s, &err), 0, "%s", err.text);
        cr_assert_eq(inj.syncs, before + 1, "hrm_store_sync made %d syncs", inj.syncs - before);
        before = inj.syncs;
        cr_assert_eq(hrm_store_meta_put(s, "next_job", j.id + 1, &err), 0, "%s", err.text);
        cr_assert_gt(inj.syncs, before, "a write outside a transaction was not synced");
        j.id++;
    }
    int before = inj.syncs;
    cr_assert_eq(put_job(s, j.id, &err), 0, "%s", err.text); /* hrm_store_begin: whole */
    cr_assert_gt(inj.syncs, before, "a whole commit was not synced");
    cr_assert_not(hrm_store_sync_pending(s));
    hrm_store_close(s);
}

Test(rt_store_faults, a_failed_sync_of_a_split_commit_is_an_error_and_keeps_it_pending)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(put_job(s, 1, &err), 0, "%s", err.text);
    cr_assert_eq(put_job(s, 2, &err), 0, "%s", err.text);
    struct hrm_store_job j = job(3);
    struct hrm_store_task t = {.job = 3, .idx = 0, .state = HRM_RTASK_DONE, .attempt = 1,
                               .node = "n1", .start_us = 1, .end_us = 2};
    cr_assert_eq(hrm_store_begin_split(s, &err), 0);
    cr_assert_eq(hrm_store_insert_job(s, &j, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_meta_put(s, "next_job", 4, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit_unsynced(s, &err), 0, "%s", err.text);
    inj.fault = FAULT_FSYNC;
    inj.failed = 0;
    int rc = hrm_store_sync(s, &err);
    cr_assert_gt(inj.failed, 0, "the fault was never hit");
    cr_assert_eq(rc, -HRM_EIO, "code %d (%s)", rc, err.text);
    cr_assert(strstr(err.text, "store: syncing the WAL"), "%s", err.text);
    cr_assert(hrm_store_sync_pending(s), "a failed sync cleared the pending commit");
    hrm_store_close(s);
    /* The frames were written before the sync failed: a reopen finds job 3 whole or not. */
    holds_one_of(2, 3);
}
