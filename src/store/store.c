/* SQLite store: pragmas, schema_version + ordered migrations, a table of prepared statements. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/store.h"
#include "store_batch.h"
#include "store_wal.h"

/* ---- schema: each migration moves the schema from version i to i+1 ---- */

static const char *const migrations[] = {
    /* 0 -> 1 */
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE jobs(id INTEGER PRIMARY KEY, name TEXT NOT NULL, user TEXT NOT NULL,"
    " queue TEXT NOT NULL, priority INTEGER NOT NULL, ntasks INTEGER NOT NULL,"
    " submit_us INTEGER NOT NULL, end_us INTEGER NOT NULL, state INTEGER NOT NULL,"
    " exit INTEGER NOT NULL, spec TEXT NOT NULL);"
    "CREATE TABLE tasks(job INTEGER NOT NULL, idx INTEGER NOT NULL, state INTEGER NOT NULL,"
    " attempt INTEGER NOT NULL, node TEXT NOT NULL, exit INTEGER NOT NULL,"
    " signal INTEGER NOT NULL, oom INTEGER NOT NULL, start_us INTEGER NOT NULL,"
    " end_us INTEGER NOT NULL, PRIMARY KEY(job, idx)) WITHOUT ROWID;",
    /* 1 -> 2: the node name an agent key without node= took at its first registration */
    "CREATE TABLE agent_keys(key TEXT PRIMARY KEY, node TEXT NOT NULL UNIQUE) WITHOUT ROWID;",
    /* 2 -> 3: why a task's launch failed (the agent's task_end.error), shown by hrm job */
    "ALTER TABLE tasks ADD COLUMN error TEXT NOT NULL DEFAULT '';",
    /* 3 -> 4: the client's submission key, so a resubmission finds its job */
    "ALTER TABLE jobs ADD COLUMN submit_key TEXT;"
    "CREATE UNIQUE INDEX jobs_submit_key ON jobs(submit_key) WHERE submit_key IS NOT NULL;",
    /* 4 -> 5: a stream task's restarts and crash-loop backoff, so a restarted master goes on
     * where it was (docs/runtime.md, "Batch and stream jobs") */
    "ALTER TABLE tasks ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE tasks ADD COLUMN crash_streak INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE tasks ADD COLUMN backoff_us INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE tasks ADD COLUMN restart_at_us INTEGER NOT NULL DEFAULT 0;",
    /* 5 -> 6: what FGM's similar-task estimator learned, one profile per key, as the line
     * of its estimates file (hrm_est_format_line), so a restarted master keeps it */
    "CREATE TABLE estimates(logic INTEGER NOT NULL, input_class INTEGER NOT NULL,"
    " profile TEXT NOT NULL, PRIMARY KEY(logic, input_class)) WITHOUT ROWID;",
    /* 6 -> 7: the cluster's event log (docs/runtime.md, "Event log"); AUTOINCREMENT so a
     * sequence number is never given twice, even after retention deleted the newest rows */
    "CREATE TABLE events(seq INTEGER PRIMARY KEY AUTOINCREMENT, time_us INTEGER NOT NULL,"
    " kind TEXT NOT NULL, job INTEGER NOT NULL, task INTEGER NOT NULL, node TEXT NOT NULL,"
    " detail TEXT NOT NULL);"
    "CREATE INDEX events_time ON events(time_us);",
    /* 7 -> 8: the event log without its time index and without AUTOINCREMENT, whose
     * sqlite_sequence row was rewritten by every statement that appended: two pages of every
     * turn's commit, of about seven (docs/benchmarks.md, "The master's pages per commit").
     * The store gives the sequence numbers itself (event_seq below); the highest one given so
     * far is kept in meta as events_seq, so that retention emptying the table gives no number
     * twice.  Retention by age walks the sequence, which follows the time of appends. */
    "CREATE TABLE events_v8(seq INTEGER PRIMARY KEY, time_us INTEGER NOT NULL,"
    " kind TEXT NOT NULL, job INTEGER NOT NULL, task INTEGER NOT NULL, node TEXT NOT NULL,"
    " detail TEXT NOT NULL);"
    "INSERT INTO events_v8 SELECT seq, time_us, kind, job, task, node, detail FROM events;"
    "INSERT OR REPLACE INTO meta(key, value)"
    " SELECT 'events_seq', seq FROM sqlite_sequence WHERE name = 'events';"
    "DROP TABLE events;"
    "ALTER TABLE events_v8 RENAME TO events;",
    /* 8 -> 9: a job's state, exit and end apart from its row, which is written once at the
     * submission.  An update rewrote the whole row, description included (hundreds of bytes),
     * on pages scattered over the table: the jobs ending in one turn each dirtied a page of
     * their own.  The states of jobs started or ended near one another in time are rows of
     * near ids, a few dozen bytes each, on one or two pages.  A job without a row here is as
     * its jobs row says (pending at its submission). */
    "CREATE TABLE job_states(id INTEGER PRIMARY KEY, state INTEGER NOT NULL,"
    " exit INTEGER NOT NULL, end_us INTEGER NOT NULL);"
    "INSERT INTO job_states SELECT id, state, exit, end_us FROM jobs WHERE state <> 0;",
};
#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))

/* ---- statements: all SQL lives here, prepared once at open ---- */

#define STMT_MAP(X)                                                                            \
    X(BEGIN, "BEGIN IMMEDIATE")                                                                \
    X(COMMIT, "COMMIT")                                                                        \
    X(ROLLBACK, "ROLLBACK")                                                                    \
    X(META_GET, "SELECT value FROM meta WHERE key = ?1")                                       \
    X(META_PUT, "INSERT INTO meta(key, value) VALUES(?1, ?2)"                                  \
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value")                      \
    /* A plain INSERT: a job row is never replaced, so an id taken twice is an error. */     \
    X(JOB_INSERT, "INSERT INTO jobs(id, name, user, queue, priority, ntasks, submit_us,"       \
                  " end_us, state, exit, spec, submit_key)"                                    \
                  " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")                \
    X(JOB_BY_KEY, "SELECT id FROM jobs WHERE submit_key = ?1")                                 \
    X(JOB_STATE, "INSERT OR REPLACE INTO job_states(id, state, exit, end_us)"                  \
                 " VALUES(?1, ?2, ?3, ?4)")                                                    \
    X(JOB_ALL, "SELECT j.id, j.name, j.user, j.queue, j.priority, j.ntasks, j.submit_us,"      \
               " coalesce(s.end_us, j.end_us), coalesce(s.state, j.state),"                    \
               " coalesce(s.exit, j.exit), j.spec"                                             \
               " FROM jobs j LEFT JOIN job_states s ON s.id = j.id ORDER BY j.id")             \
    X(TASK_ALL, "SELECT job, idx, state, attempt, node, exit, signal, oom, start_us, end_us,"  \
                " error, restarts, crash_streak, backoff_us, restart_at_us"                    \
                " FROM tasks ORDER BY job, idx")                                               \
    X(KEY_BIND, "INSERT INTO agent_keys(key, node) VALUES(?1, ?2)")                            \
    X(KEY_ALL, "SELECT key, node FROM agent_keys")                                             \
    X(EST_PUT, "INSERT OR REPLACE INTO estimates(logic, input_class, profile)"                 \
               " VALUES(?1, ?2, ?3)")                                                          \
    X(EST_ALL, "SELECT profile FROM estimates ORDER BY logic, input_class")                     \
    X(EV_SINCE, "SELECT seq, time_us, kind, job, task, node, detail FROM events"               \
                " WHERE seq > ?1 ORDER BY seq LIMIT ?2")                                       \
    X(EV_MAX, "SELECT max(seq) FROM events")                                                   \
    X(EV_FROM, "SELECT seq, time_us FROM events WHERE seq >= ?1 ORDER BY seq LIMIT 1")         \
    X(EV_PRUNE, "DELETE FROM events WHERE seq <= ?1")

enum stmt_id {
#define STMT_ENUM(name, sql) STMT_##name,
    STMT_MAP(STMT_ENUM)
#undef STMT_ENUM
        NSTMT
};

static const char *const stmt_sql[] = {
#define STMT_SQL(name, sql) sql,
    STMT_MAP(STMT_SQL)
#undef STMT_SQL
};

struct hrm_store {
    sqlite3 *db;
    sqlite3_stmt *stmt[NSTMT];
    bool want_txn; /* hrm_store_begin was called: the next write opens the transaction */
    bool want_split; /* ... by hrm_store_begin_split: its commit may leave the sync for later */
    bool in_txn;   /* BEGIN has run */
    bool sync_normal;  /* the connection is at synchronous=NORMAL (a turn's transaction) */
    bool sync_pending; /* a commit's WAL frames are written, not yet synced (hrm_store_sync) */
    /* Task rows and events of the open transaction, written at its commit (store_batch.c). */
    struct store_batch *batch;
    int batch_failed;                 /* a flush failed: the commit must fail (SQLite code) */
    int wal_frames;                   /* in the WAL after the last commit (its hook) */
    /* The last event sequence number given, the open transaction's events included, and the
     * last committed one (what a rollback goes back to). */
    int64_t event_seq, event_seq_committed;
    struct hrm_store_stats stats;
};

static const char *const job_states[] = {"pending", "running", "done", "failed", "cancelled"};
static const char *const task_states[] = {"pending", "running", "done",
                                          "failed",  "skipped", "cancelled"};

const char *hrm_job_state_name(int state)
{
    return state >= 0 && state < 5 ? job_states[state] : "?";
}

const char *hrm_rtask_state_name(int state)
{
    return state >= 0 && state < 6 ? task_states[state] : "?";
}

/* The one mapping from SQLite result codes to hrm codes. */
static int store_code(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return 0;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
        return -EACCES;
    case SQLITE_CONSTRAINT:
        return -EEXIST;
    default:
        return -HRM_EIO;
    }
}

static int fail(struct hrm_store *s, int rc, struct hrm_error *err, const char *what)
{
    return hrm_errorf(err, store_code(rc), "store: %s: %s", what,
                      s && s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
}

/* Runs a statement that returns no rows, then resets it. */
static int step_done(struct hrm_store *s, enum stmt_id id, struct hrm_error *err)
{
    sqlite3_stmt *st = s->stmt[id];
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (id > STMT_ROLLBACK)
        s->stats.statements++;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return fail(s, rc, err, stmt_sql[id]);
    return 0;
}

/* The open transaction's waiting rows, into the database: before its commit, and before any
 * read of a table they belong to, so that a read sees the transaction's own writes. */
static int flush_batch(struct hrm_store *s, struct hrm_error *err)
{
    if (s->batch_failed)
        return hrm_errorf(err, store_code(s->batch_failed), "store: writing the turn's rows: %s",
                          sqlite3_errstr(s->batch_failed));
    if (store_batch_len(s->batch) == 0)
        return 0;
    const char *what = "";
    int rc = store_batch_flush(s->batch, s->db, &s->stats.statements, &what);
    if (rc == SQLITE_OK)
        return 0;
    /* Part of it may be in the transaction: only a rollback may follow. */
    s->batch_failed = rc;
    store_batch_clear(s->batch);
    return fail(s, rc, err, what);
}

static int exec(struct hrm_store *s, const char *sql, struct hrm_error *err)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        hrm_errorf(err, store_code(rc), "store: %s", msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return store_code(rc);
    }
    return 0;
}

static int current_version(struct hrm_store *s)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT version FROM schema_version", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    int v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return v;
}

static int migrate(struct hrm_store *s, struct hrm_error *err)
{
    int rc = exec(s, "CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)", err);
    if (rc < 0)
        return rc;
    int v = current_version(s);
    if (v > SCHEMA_VERSION)
        return hrm_errorf(err, -HRM_ESTATE,
                          "store: schema version %d is newer than this hrm (%d)", v,
                          SCHEMA_VERSION);
    for (; v < SCHEMA_VERSION; v++) {
        char bump[96];
        snprintf(bump, sizeof(bump), "DELETE FROM schema_version;"
                                     "INSERT INTO schema_version VALUES(%d);", v + 1);
        if ((rc = exec(s, "BEGIN IMMEDIATE", err)) < 0)
            return rc;
        if ((rc = exec(s, migrations[v], err)) < 0 || (rc = exec(s, bump, err)) < 0) {
            exec(s, "ROLLBACK", NULL);
            return rc;
        }
        if ((rc = exec(s, "COMMIT", err)) < 0)
            return rc;
    }
    return 0;
}

static int wal_committed(void *arg, sqlite3 *db, const char *name, int frames)
{
    (void)db;
    (void)name;
    ((struct hrm_store *)arg)->wal_frames = frames;
    return SQLITE_OK;
}

/* The highest sequence number ever given: the table's newest, or what retention recorded
 * before it removed the newest. */
static int load_event_seq(struct hrm_store *s, struct hrm_error *err)
{
    sqlite3_stmt *st = s->stmt[STMT_EV_MAX];
    int r = sqlite3_step(st);
    int64_t top = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (r != SQLITE_ROW)
        return fail(s, r, err, stmt_sql[STMT_EV_MAX]);
    int64_t kept = hrm_store_meta_get(s, "events_seq", 0);
    s->event_seq = s->event_seq_committed = top > kept ? top : kept;
    return 0;
}

struct hrm_store *hrm_store_open(const char *path, struct hrm_error *err)
{
    struct hrm_store *s = hrm_calloc(1, sizeof(*s));
    int rc = sqlite3_open_v2(path, &s->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
    if (rc != SQLITE_OK) {
        hrm_errorf(err, store_code(rc), "store: cannot open %s: %s", path,
                   s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        goto fail;
    }
    sqlite3_busy_timeout(s->db, 2000);
    /* Pragmas, explicitly: WAL so readers never block the writer; FULL so a
     * commit is on disk when it returns (the acknowledgement contract). */
    if (exec(s, "PRAGMA journal_mode=WAL", err) < 0 ||
        exec(s, "PRAGMA synchronous=FULL", err) < 0 ||
        exec(s, "PRAGMA foreign_keys=ON", err) < 0 ||
        exec(s, "PRAGMA temp_store=MEMORY", err) < 0)
        goto fail;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK) {
        bool wal = sqlite3_step(st) == SQLITE_ROW &&
                   strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
        sqlite3_finalize(st);
        if (!wal) {
            hrm_errorf(err, -HRM_EIO, "store: %s: the file system refuses WAL mode", path);
            goto fail;
        }
    }
    if (migrate(s, err) < 0 || store_wal_prepare(s->db, err) < 0)
        goto fail;
    /* Replaces SQLite's automatic checkpoint, which would run inside the commit that crosses
     * its threshold: the master checkpoints after the turn's messages have left. */
    sqlite3_wal_hook(s->db, wal_committed, s);
    s->batch = store_batch_new();
    for (int i = 0; i < NSTMT; i++) {
        rc = sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[i],
                                NULL);
        if (rc != SQLITE_OK) {
            fail(s, rc, err, stmt_sql[i]);
            goto fail;
        }
    }
    if (load_event_seq(s, err) < 0)
        goto fail;
    return s;
fail:
    hrm_store_close(s);
    return NULL;
}

void hrm_store_close(struct hrm_store *s)
{
    if (!s)
        return;
    for (int i = 0; i < NSTMT; i++)
        sqlite3_finalize(s->stmt[i]);
    store_batch_free(s->batch); /* what waits was never committed: it goes */
    sqlite3_close(s->db);
    hrm_free(s);
}

int hrm_store_schema_version(struct hrm_store *s)
{
    return current_version(s);
}

/*
 * A transaction is opened lazily, by the first write after hrm_store_begin:
 * the master begins one every turn of its loop, and most turns (heartbeats,
 * queries, a started task) write nothing, so they cost no lock and no commit.
 */
int hrm_store_begin(struct hrm_store *s, struct hrm_error *err)
{
    (void)err;
    s->want_txn = true;
    s->want_split = false;
    return 0;
}

int hrm_store_begin_split(struct hrm_store *s, struct hrm_error *err)
{
    (void)err;
    s->want_txn = true;
    s->want_split = true;
    return 0;
}

/* The synchronous level for what comes next: NORMAL for a split transaction (its commit leaves
 * the sync to hrm_store_sync), FULL for any other (SQLite's commit syncs; a failed sync fails
 * the commit, and the transaction is not there).
 * Not a prepared statement: SQLite applies this pragma when it compiles it, not when it runs.
 * It changes only around a write outside the turns (rare), so the parse costs nothing. */
static int sync_level(struct hrm_store *s, bool normal, struct hrm_error *err)
{
    if (s->sync_normal == normal)
        return 0;
    int rc = exec(s, normal ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL", err);
    if (rc == 0)
        s->sync_normal = normal;
    return rc;
}

static int ensure_txn(struct hrm_store *s, struct hrm_error *err)
{
    if (s->in_txn)
        return 0;
    if (!s->want_txn)
        return sync_level(s, false, err);
    int rc = sync_level(s, s->want_split, err);
    if (rc == 0)
        rc = step_done(s, STMT_BEGIN, err);
    if (rc == 0)
        s->in_txn = true;
    return rc;
}

int hrm_store_commit_unsynced(struct hrm_store *s, struct hrm_error *err)
{
    s->want_txn = false;
    if (!s->in_txn)
        return 0;
    int rc = flush_batch(s, err);
    if (rc == 0 && (rc = step_done(s, STMT_COMMIT, err)) == 0)
        s->stats.commits++;
    if (rc < 0) {
        hrm_store_rollback(s);
        return rc;
    }
    s->in_txn = false;
    s->event_seq_committed = s->event_seq;
    s->sync_pending = s->sync_normal; /* at FULL, SQLite's commit has synced */
    return 0;
}

/*
 * The sync SQLite's commit makes at synchronous=FULL, made here instead: its own handle of the
 * WAL, through the VFS (unix: fdatasync, and the folder's fsync once after the file was made),
 * with the flags SQLite's FULL commit passes.  A reader of the database can see the commit
 * from COMMIT on (the WAL index is updated then); a process that dies keeps it (it is in the
 * page cache); only the machine's loss can take it away before this returns.
 */
static int sync_wal(struct hrm_store *s, struct hrm_error *err)
{
    sqlite3_file *wal = NULL;
    int rc = sqlite3_file_control(s->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal);
    if (rc == SQLITE_OK && wal && wal->pMethods)
        rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
    else if (rc == SQLITE_OK)
        rc = SQLITE_IOERR_FSYNC; /* no WAL open after a commit in WAL mode: never expected */
    if (rc != SQLITE_OK)
        return hrm_errorf(err, store_code(rc), "store: syncing the WAL: %s", sqlite3_errstr(rc));
    s->sync_pending = false;
    s->stats.syncs++;
    return 0;
}

int hrm_store_sync(struct hrm_store *s, struct hrm_error *err)
{
    int rc = s->sync_pending ? sync_wal(s, err) : 0;
    /* A caller that never checkpoints still gets a bounded WAL, at a cost in this call.  The
     * commit is done whatever the checkpoint gives: one that fails is tried again next time. */
    if (rc == 0 && s->wal_frames >= 2 * STORE_WAL_CHECKPOINT_FRAMES)
        hrm_store_checkpoint(s, NULL);
    return rc;
}

bool hrm_store_sync_pending(const struct hrm_store *s)
{
    return s->sync_pending;
}

int hrm_store_commit(struct hrm_store *s, struct hrm_error *err)
{
    int rc = hrm_store_commit_unsynced(s, err);
    return rc < 0 ? rc : hrm_store_sync(s, err);
}

bool hrm_store_checkpoint_due(const struct hrm_store *s)
{
    return s->wal_frames >= STORE_WAL_CHECKPOINT_FRAMES;
}

int hrm_store_checkpoint(struct hrm_store *s, struct hrm_error *err)
{
    if (s->in_txn)
        return 0; /* not inside a transaction: the next call after its commit does it */
    /* Nor with a commit's sync pending: a checkpoint at synchronous=NORMAL syncs the WAL itself
     * (so the commit would be durable without hrm_store_sync knowing it), and one that
     * restarts the WAL could write over frames whose sync a caller still holds back.  The
     * first call after the sync does it. */
    if (s->sync_pending)
        return 0;
    int frames = 0, copied = 0;
    int rc = sqlite3_wal_checkpoint_v2(s->db, "main", SQLITE_CHECKPOINT_PASSIVE, &frames,
                                       &copied);
    if (rc != SQLITE_OK)
        return fail(s, rc, err, "checkpoint");
    s->stats.checkpoints++;
    /* Everything copied: the next write transaction starts the WAL over from its beginning. */
    s->wal_frames = copied == frames ? 0 : frames;
    return 0;
}

void hrm_store_rollback(struct hrm_store *s)
{
    s->want_txn = false;
    store_batch_clear(s->batch);
    s->batch_failed = 0;
    s->event_seq = s->event_seq_committed; /* the numbers of the dropped events are free again */
    if (!s->in_txn)
        return;
    step_done(s, STMT_ROLLBACK, NULL);
    s->in_txn = false;
}

bool hrm_store_in_txn(const struct hrm_store *s)
{
    return s->want_txn || s->in_txn;
}

bool hrm_store_txn_open(const struct hrm_store *s)
{
    return s->in_txn;
}

int64_t hrm_store_meta_get(struct hrm_store *s, const char *key, int64_t def)
{
    sqlite3_stmt *st = s->stmt[STMT_META_GET];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : def;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return v;
}

int hrm_store_meta_put(struct hrm_store *s, const char *key, int64_t value,
                       struct hrm_error *err)
{
    int rc = ensure_txn(s, err);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = s->stmt[STMT_META_PUT];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, value);
    return step_done(s, STMT_META_PUT, err);
}

int hrm_store_insert_job(struct hrm_store *s, const struct hrm_store_job *j,
                         struct hrm_error *err)
{
    int rc = ensure_txn(s, err);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = s->stmt[STMT_JOB_INSERT];
    sqlite3_bind_int64(st, 1, j->id);
    sqlite3_bind_text(st, 2, j->name ? j->name : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, j->user ? j->user : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, j->queue ? j->queue : "default", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, j->priority);
    sqlite3_bind_int(st, 6, j->ntasks);
    sqlite3_bind_int64(st, 7, j->submit_us);
    sqlite3_bind_int64(st, 8, j->end_us);
    sqlite3_bind_int(st, 9, j->state);
    sqlite3_bind_int(st, 10, j->exit);
    sqlite3_bind_text(st, 11, j->spec ? j->spec : "{}", -1, SQLITE_STATIC);
    if (j->submit_key)
        sqlite3_bind_text(st, 12, j->submit_key, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 12);
    return step_done(s, STMT_JOB_INSERT, err);
}

int64_t hrm_store_job_by_key(struct hrm_store *s, const char *key, struct hrm_error *err)
{
    sqlite3_stmt *st = s->stmt[STMT_JOB_BY_KEY];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int r = sqlite3_step(st);
    int64_t id = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        return fail(s, r, err, stmt_sql[STMT_JOB_BY_KEY]);
    return id;
}

int hrm_store_set_job_state(struct hrm_store *s, int64_t id, int state, int exit, int64_t end_us,
                            struct hrm_error *err)
{
    int rc = ensure_txn(s, err);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = s->stmt[STMT_JOB_STATE];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, state);
    sqlite3_bind_int(st, 3, exit);
    sqlite3_bind_int64(st, 4, end_us);
    return step_done(s, STMT_JOB_STATE, err);
}

/* A row joined the batch: it waits for the commit, unless no transaction is open (a write
 * outside hrm_store_begin/commit is its own transaction, as SQLite's autocommit makes it). */
static int buffered(struct hrm_store *s, struct hrm_error *err)
{
    s->stats.rows++;
    if (s->in_txn)
        return 0;
    int rc = flush_batch(s, err);
    s->batch_failed = 0;
    if (rc == 0)
        s->event_seq_committed = s->event_seq;
    else
        s->event_seq = s->event_seq_committed;
    return rc;
}

int hrm_store_put_task(struct hrm_store *s, const struct hrm_store_task *t,
                       struct hrm_error *err)
{
    int rc = ensure_txn(s, err); /* now: the turn knows it has something to commit */
    if (rc < 0)
        return rc;
    store_batch_task(s->batch, t);
    return buffered(s, err);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

int hrm_store_load(struct hrm_store *s, hrm_store_job_f on_job, hrm_store_task_f on_task,
                   void *arg, struct hrm_error *err)
{
    int rc = flush_batch(s, err), r;
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = s->stmt[STMT_JOB_ALL];
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct hrm_store_job j = {
            .id = sqlite3_column_int64(st, 0),
            .name = col_text(st, 1),
            .user = col_text(st, 2),
            .queue = col_text(st, 3),
            .priority = sqlite3_column_int(st, 4),
            .ntasks = sqlite3_column_int(st, 5),
            .submit_us = sqlite3_column_int64(st, 6),
            .end_us = sqlite3_column_int64(st, 7),
            .state = sqlite3_column_int(st, 8),
            .exit = sqlite3_column_int(st, 9),
            .spec = col_text(st, 10),
        };
        if (on_job && (rc = on_job(arg, &j)) < 0)
            break;
    }
    sqlite3_reset(st);
    if (rc < 0)
        return rc;
    if (r != SQLITE_DONE)
        return fail(s, r, err, "loading jobs");
    st = s->stmt[STMT_TASK_ALL];
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct hrm_store_task t = {
            .job = sqlite3_column_int64(st, 0),
            .idx = sqlite3_column_int(st, 1),
            .state = sqlite3_column_int(st, 2),
            .attempt = sqlite3_column_int(st, 3),
            .node = col_text(st, 4),
            .exit = sqlite3_column_int(st, 5),
            .signal = sqlite3_column_int(st, 6),
            .oom = sqlite3_column_int(st, 7) != 0,
            .start_us = sqlite3_column_int64(st, 8),
            .end_us = sqlite3_column_int64(st, 9),
            .error = col_text(st, 10),
            .restarts = sqlite3_column_int(st, 11),
            .crash_streak = sqlite3_column_int(st, 12),
            .backoff_us = sqlite3_column_int64(st, 13),
            .restart_at_us = sqlite3_column_int64(st, 14),
        };
        if (on_task && (rc = on_task(arg, &t)) < 0)
            break;
    }
    sqlite3_reset(st);
    if (rc < 0)
        return rc;
    if (r != SQLITE_DONE)
        return fail(s, r, err, "loading tasks");
    return 0;
}

int hrm_store_bind_agent_key(struct hrm_store *s, const char *key, const char *node,
                             struct hrm_error *err)
{
    int rc = ensure_txn(s, err);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = s->stmt[STMT_KEY_BIND];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
    return step_done(s, STMT_KEY_BIND, err);
}

int hrm_store_load_agent_keys(struct hrm_store *s, hrm_store_key_f on_key, void *arg,
                              struct hrm_error *err)
{
    int rc = 0, r;
    sqlite3_stmt *st = s->stmt[STMT_KEY_ALL];
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        if ((rc = on_key(arg, col_text(st, 0), col_text(st, 1))) < 0)
            break;
    sqlite3_reset(st);
    if (rc < 0)
        return rc;
    return r == SQLITE_DONE ? 0 : fail(s, r, err, "loading agent keys");
}

int hrm_store_put_estimate(struct hrm_store *s, uint32_t logic, int32_t input_class,
                           const char *profile, struct hrm_error *err)
{
    int rc = ensure_txn(s, err);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = s->stmt[STMT_EST_PUT];
    sqlite3_bind_int64(st, 1, (sqlite3_int64)logic);
    sqlite3_bind_int64(st, 2, input_class);
    sqlite3_bind_text(st, 3, profile, -1, SQLITE_STATIC);
    return step_done(s, STMT_EST_PUT, err);
}

int hrm_store_load_estimates(struct hrm_store *s, hrm_store_estimate_f on_profile, void *arg,
                             struct hrm_error *err)
{
    int rc = 0, r;
    sqlite3_stmt *st = s->stmt[STMT_EST_ALL];
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        if ((rc = on_profile(arg, col_text(st, 0))) < 0)
            break;
    sqlite3_reset(st);
    if (rc < 0)
        return rc;
    return r == SQLITE_DONE ? 0 : fail(s, r, err, "loading estimates");
}

int hrm_store_append_event(struct hrm_store *s, const struct hrm_store_event *e,
                           struct hrm_error *err)
{
    int rc = ensure_txn(s, err);
    if (rc < 0)
        return rc;
    struct hrm_store_event numbered = *e;
    numbered.seq = ++s->event_seq;
    store_batch_event(s->batch, &numbered);
    return buffered(s, err);
}

void hrm_store_stats(const struct hrm_store *s, struct hrm_store_stats *out)
{
    *out = s ? s->stats : (struct hrm_store_stats){0};
}

int hrm_store_read_events(struct hrm_store *s, int64_t since, int32_t limit,
                          hrm_store_event_f on_event, void *arg, struct hrm_error *err)
{
    int rc = flush_batch(s, err), r, n = 0;
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = s->stmt[STMT_EV_SINCE];
    sqlite3_bind_int64(st, 1, since);
    sqlite3_bind_int(st, 2, limit);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct hrm_store_event e = {
            .seq = sqlite3_column_int64(st, 0),
            .time_us = sqlite3_column_int64(st, 1),
            .kind = col_text(st, 2),
            .job = sqlite3_column_int64(st, 3),
            .task = sqlite3_column_int(st, 4),
            .node = col_text(st, 5),
            .detail = col_text(st, 6),
        };
        n++;
        if ((rc = on_event(arg, &e)) < 0)
            break;
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc < 0)
        return rc;
    return r == SQLITE_DONE ? n : fail(s, r, err, "reading events");
}

int64_t hrm_store_last_event_seq(struct hrm_store *s)
{
    return s->event_seq;
}

/* The first event kept at or after seq: 1 and its sequence number and time, 0 if none, or a
 * negative code. */
static int event_from(struct hrm_store *s, int64_t seq, int64_t *at, int64_t *time_us,
                      struct hrm_error *err)
{
    sqlite3_stmt *st = s->stmt[STMT_EV_FROM];
    sqlite3_bind_int64(st, 1, seq);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        *at = sqlite3_column_int64(st, 0);
        *time_us = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        return fail(s, r, err, stmt_sql[STMT_EV_FROM]);
    return r == SQLITE_ROW;
}

/* The last sequence number of the events older than older_than_us, found by bisection: events
 * are appended in the order of their times, so the old ones are a prefix of the sequence (a
 * wall clock set back makes the bound approximate by the step, never the log a patchwork).
 * O(log n) lookups by sequence number, where a scan of the times would read the whole table. */
static int64_t events_older_end(struct hrm_store *s, int64_t older_than_us, struct hrm_error *err)
{
    int64_t lo = 0, hi = s->event_seq + 1, at = 0, time_us = 0; /* the answer: in [lo, hi) */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        int got = event_from(s, mid, &at, &time_us, err);
        if (got < 0)
            return got;
        if (got && time_us < older_than_us)
            lo = at;  /* everything up to at is old */
        else
            hi = mid; /* none kept from mid on is old */
    }
    return lo;
}

int hrm_store_prune_events(struct hrm_store *s, int64_t keep, int64_t older_than_us,
                           struct hrm_error *err)
{
    int rc = ensure_txn(s, err);
    if (rc < 0 || (rc = flush_batch(s, err)) < 0)
        return rc;
    int64_t old_end = events_older_end(s, older_than_us, err), by_count = s->event_seq - keep;
    if (old_end < 0)
        return (int)old_end;
    /* The newest number given survives the removal of the newest events. */
    if ((rc = hrm_store_meta_put(s, "events_seq", s->event_seq, err)) < 0)
        return rc;
    sqlite3_stmt *st = s->stmt[STMT_EV_PRUNE];
    sqlite3_bind_int64(st, 1, old_end > by_count ? old_end : by_count);
    return step_done(s, STMT_EV_PRUNE, err);
}
