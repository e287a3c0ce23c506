/*
 * The store's per-transaction write buffer.  A turn of the master writes a task row and an event
 * per launch and per end; one INSERT per row cost each its own statement run.  Rows wait here
 * until the commit and go as multi-row INSERTs of 32, 16, ..., 1 rows: a burst of n rows takes
 * about n / 32 + log2(32) statements, each prepared once.  Nothing is durable before the
 * commit anyway, so waiting changes no promise; the order of each table's rows is kept (a task
 * put twice ends as the later row; events keep the sequence numbers the store gave them).
 */
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "store_batch.h"

#define CHUNK_LOG 5 /* statements of 2^CHUNK_LOG rows at most */
#define TASK_COLS 15
#define EVENT_COLS 7

/* Strings are offsets into the arena: it moves as it grows. */
struct btask {
    struct hrm_store_task t;
    size_t node, error;
};

struct bevent {
    struct hrm_store_event e;
    size_t kind, node, detail;
};

struct store_batch {
    struct btask *tasks;
    size_t ntasks, cap_tasks;
    struct bevent *events;
    size_t nevents, cap_events;
    char *arena;
    size_t narena, cap_arena;
    sqlite3_stmt *task_st[CHUNK_LOG + 1]; /* [k]: 2^k rows; prepared on first use */
    sqlite3_stmt *event_st[CHUNK_LOG + 1];
};

struct store_batch *store_batch_new(void)
{
    return hrm_calloc(1, sizeof(struct store_batch));
}

void store_batch_free(struct store_batch *b)
{
    if (!b)
        return;
    for (int k = 0; k <= CHUNK_LOG; k++) {
        sqlite3_finalize(b->task_st[k]);
        sqlite3_finalize(b->event_st[k]);
    }
    hrm_free(b->tasks);
    hrm_free(b->events);
    hrm_free(b->arena);
    hrm_free(b);
}

static size_t keep(struct store_batch *b, const char *s)
{
    size_t n = strlen(s ? s : "") + 1, at = b->narena;
    HRM_GROW(b->arena, b->cap_arena, b->narena + n);
    memcpy(b->arena + at, s ? s : "", n);
    b->narena += n;
    return at;
}

void store_batch_task(struct store_batch *b, const struct hrm_store_task *t)
{
    HRM_GROW(b->tasks, b->cap_tasks, b->ntasks + 1);
    struct btask *r = &b->tasks[b->ntasks++];
    r->t = *t;
    r->node = keep(b, t->node);
    r->error = keep(b, t->error);
}

void store_batch_event(struct store_batch *b, const struct hrm_store_event *e)
{
    HRM_GROW(b->events, b->cap_events, b->nevents + 1);
    struct bevent *r = &b->events[b->nevents++];
    r->e = *e;
    r->kind = keep(b, e->kind);
    r->node = keep(b, e->node);
    r->detail = keep(b, e->detail);
}

size_t store_batch_len(const struct store_batch *b)
{
    return b->ntasks + b->nevents;
}

void store_batch_clear(struct store_batch *b)
{
    b->ntasks = b->nevents = b->narena = 0;
}

static const char task_head[] =
    "INSERT OR REPLACE INTO tasks(job, idx, state, attempt, node, exit, signal, oom, start_us,"
    " end_us, error, restarts, crash_streak, backoff_us, restart_at_us) VALUES";
static const char event_head[] =
    "INSERT INTO events(seq, time_us, kind, job, task, node, detail) VALUES";

/* "HEAD (?,...,?),(...)": rows groups of cols parameters, numbered in order. */
static sqlite3_stmt *prepare(sqlite3 *db, const char *head, int rows, int cols)
{
    size_t n = strlen(head) + (size_t)rows * ((size_t)cols * 2 + 3) + 1;
    char *sql = hrm_alloc(n), *p = sql;
    p += snprintf(p, n, "%s", head);
    for (int r = 0; r < rows; r++) {
        *p++ = r ? ',' : ' ';
        *p++ = '(';
        for (int c = 0; c < cols; c++) {
            *p++ = '?';
            *p++ = c + 1 < cols ? ',' : ')';
        }
    }
    *p = '\0';
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        st = NULL;
    hrm_free(sql);
    return st;
}

typedef void (*bind_f)(sqlite3_stmt *st, int at, const void *row, const char *arena);

static void bind_task(sqlite3_stmt *st, int at, const void *row, const char *arena)
{
    const struct btask *r = row;
    const struct hrm_store_task *t = &r->t;
    sqlite3_bind_int64(st, at + 1, t->job);
    sqlite3_bind_int(st, at + 2, t->idx);
    sqlite3_bind_int(st, at + 3, t->state);
    sqlite3_bind_int(st, at + 4, t->attempt);
    sqlite3_bind_text(st, at + 5, arena + r->node, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, at + 6, t->exit);
    sqlite3_bind_int(st, at + 7, t->signal);
    sqlite3_bind_int(st, at + 8, t->oom);
    sqlite3_bind_int64(st, at + 9, t->start_us);
    sqlite3_bind_int64(st, at + 10, t->end_us);
    sqlite3_bind_text(st, at + 11, arena + r->error, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, at + 12, t->restarts);
    sqlite3_bind_int(st, at + 13, t->crash_streak);
    sqlite3_bind_int64(st, at + 14, t->backoff_us);
    sqlite3_bind_int64(st, at + 15, t->restart_at_us);
}

static void bind_event(sqlite3_stmt *st, int at, const void *row, const char *arena)
{
    const struct bevent *r = row;
    sqlite3_bind_int64(st, at + 1, r->e.seq);
    sqlite3_bind_int64(st, at + 2, r->e.time_us);
    sqlite3_bind_text(st, at + 3, arena + r->kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, at + 4, r->e.job);
    sqlite3_bind_int(st, at + 5, r->e.task);
    sqlite3_bind_text(st, at + 6, arena + r->node, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 7, arena + r->detail, -1, SQLITE_STATIC);
}

/* One table's n rows (each of size bytes), biggest chunks first; every parameter is bound at
 * every run, so no statement keeps a previous run's values. */
static int flush_table(sqlite3 *db, const char *arena, const char *rows, size_t size, size_t n,
                       sqlite3_stmt **st, const char *head, int cols, bind_f bind,
                       long long *statements, const char **what)
{
    size_t done = 0;
    for (int k = CHUNK_LOG; k >= 0; k--) {
        size_t chunk = (size_t)1 << k;
        for (; n - done >= chunk; done += chunk) {
            if (!st[k] && !(st[k] = prepare(db, head, (int)chunk, cols))) {
                *what = head;
                return sqlite3_errcode(db);
            }
            for (size_t i = 0; i < chunk; i++)
                bind(st[k], (int)i * cols, rows + (done + i) * size, arena);
            int rc = sqlite3_step(st[k]);
            sqlite3_reset(st[k]);
            (*statements)++;
            if (rc != SQLITE_DONE) {
                *what = head;
                return rc;
            }
        }
    }
    return SQLITE_OK;
}

int store_batch_flush(struct store_batch *b, sqlite3 *db, long long *statements, const char **what)
{
    int rc = flush_table(db, b->arena, (const char *)b->tasks, sizeof(*b->tasks), b->ntasks,
                         b->task_st, task_head, TASK_COLS, bind_task, statements, what);
    if (rc == SQLITE_OK)
        rc = flush_table(db, b->arena, (const char *)b->events, sizeof(*b->events), b->nevents,
                         b->event_st, event_head, EVENT_COLS, bind_event, statements, what);
    if (rc == SQLITE_OK)
        store_batch_clear(b);
    return rc;
}
