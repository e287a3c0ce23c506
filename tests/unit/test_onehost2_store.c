/* The store's per-commit batching of task rows and events: a transaction's rows go as a few
 * multi-row statements at its commit, read back exactly as written one by one (a task put twice
 * is its later row, events in order), visible to the transaction's own reads, gone on rollback,
 * and written at once outside a transaction. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "hrm/store.h"
#include "store_fixture.h"

STORE_FIXTURE_SUITE(onehost2_store);

static struct hrm_store_task task_row(int64_t job, int32_t idx, int state, const char *node)
{
    return (struct hrm_store_task){.job = job, .idx = idx, .state = state, .attempt = 1,
                                   .node = node, .exit = idx % 3, .start_us = 1000 + idx,
                                   .end_us = -1, .error = idx % 7 ? "" : "no such file"};
}

static struct hrm_store_event event_row(int64_t job, int32_t task, const char *kind)
{
    return (struct hrm_store_event){.time_us = 5000 + task, .kind = kind, .job = job,
                                    .task = task, .node = "n1", .detail = "{\"attempt\":1}"};
}

/* One integer from the file, read through a connection of its own (what is committed). */
static long long query(const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

Test(onehost2_store, a_turn_of_rows_takes_few_statements)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    struct hrm_store_stats before, after;
    hrm_store_stats(s, &before);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    for (int32_t i = 0; i < 100; i++) { /* a launch each: its row and its event */
        struct hrm_store_task t = task_row(1, i, HRM_RTASK_RUNNING, "n1");
        struct hrm_store_event e = event_row(1, i, "task_started");
        cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
        cr_assert_eq(hrm_store_append_event(s, &e, &err), 0, "%s", err.text);
    }
    cr_assert(hrm_store_txn_open(s), "the first write opens the transaction");
    cr_assert_eq(query("SELECT count(*) FROM tasks"), 0, "nothing is visible before the commit");
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    hrm_store_stats(s, &after);
    cr_assert_eq(after.rows - before.rows, 200);
    cr_assert_eq(after.commits - before.commits, 1);
    /* 100 rows of each table go as statements of 32, 32, 32 and 4 rows: 8 in all, where one
     * statement per row took 200. */
    cr_assert_leq(after.statements - before.statements, 8, "%lld statements for 200 rows",
                  after.statements - before.statements);
    cr_assert_eq(query("SELECT count(*) FROM tasks"), 100);
    cr_assert_eq(query("SELECT count(*) FROM events"), 100);
    cr_assert_eq(query("SELECT sum(exit) FROM tasks"), 99); /* 33 ones + 33 twos */
    cr_assert_eq(query("SELECT count(*) FROM tasks WHERE error = 'no such file'"), 15);
    /* Sequence numbers in the order the events came: task i has seq i + 1. */
    cr_assert_eq(query("SELECT count(*) FROM events WHERE seq = task + 1"), 100);
    cr_assert_eq(hrm_store_last_event_seq(s), 100);
    hrm_store_close(s);
}

Test(onehost2_store, a_task_put_twice_in_a_transaction_keeps_the_later_row)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    for (int32_t i = 0; i < 40; i++) {
        struct hrm_store_task t = task_row(2, i, HRM_RTASK_RUNNING, "n1");
        cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
    }
    for (int32_t i = 0; i < 40; i += 2) { /* half of them end in the same turn */
        struct hrm_store_task t = task_row(2, i, HRM_RTASK_DONE, "n2");
        t.end_us = 9000 + i;
        cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
    }
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    cr_assert_eq(query("SELECT count(*) FROM tasks"), 40);
    cr_assert_eq(query("SELECT count(*) FROM tasks WHERE state = 2 AND node = 'n2'"
                       " AND end_us = 9000 + idx AND idx % 2 = 0"), 20);
    cr_assert_eq(query("SELECT count(*) FROM tasks WHERE state = 1 AND node = 'n1'"
                       " AND end_us = -1 AND idx % 2 = 1"), 20);
    hrm_store_close(s);
}

struct seen {
    int n;
    char last_kind[32];
};

static int on_event(void *arg, const struct hrm_store_event *e)
{
    struct seen *g = arg;
    g->n++;
    snprintf(g->last_kind, sizeof(g->last_kind), "%s", e->kind);
    return 0;
}

Test(onehost2_store, the_transaction_reads_its_own_events_and_a_rollback_drops_them)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    struct hrm_store_event e = event_row(3, 0, "task_started");
    cr_assert_eq(hrm_store_append_event(s, &e, &err), 0, "%s", err.text);
    e = event_row(3, 1, "task_ended");
    cr_assert_eq(hrm_store_append_event(s, &e, &err), 0, "%s", err.text);
    struct seen g = {0};
    cr_assert_eq(hrm_store_read_events(s, 0, 10, on_event, &g, &err), 2, "%s", err.text);
    cr_assert_str_eq(g.last_kind, "task_ended");
    cr_assert_eq(hrm_store_last_event_seq(s), 2);
    struct hrm_store_task t = task_row(3, 0, HRM_RTASK_RUNNING, "n1");
    cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
    hrm_store_rollback(s);
    cr_assert_eq(query("SELECT count(*) FROM tasks"), 0);
    cr_assert_eq(query("SELECT count(*) FROM events"), 0);
    /* The next transaction writes only its own rows, not the dropped ones. */
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    e = event_row(3, 2, "job_finished");
    cr_assert_eq(hrm_store_append_event(s, &e, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    cr_assert_eq(query("SELECT count(*) FROM events"), 1);
    cr_assert_eq(query("SELECT count(*) FROM tasks"), 0);
    hrm_store_close(s);
}

Test(onehost2_store, a_write_outside_a_transaction_is_written_at_once)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    struct hrm_store_task t = task_row(4, 0, HRM_RTASK_DONE, "n1");
    cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
    struct hrm_store_event e = event_row(4, 0, "task_ended");
    cr_assert_eq(hrm_store_append_event(s, &e, &err), 0, "%s", err.text);
    cr_assert_eq(query("SELECT count(*) FROM tasks WHERE job = 4"), 1);
    cr_assert_eq(query("SELECT count(*) FROM events WHERE job = 4"), 1);
    hrm_store_close(s);
    /* And a reopened store loads it. */
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(hrm_store_last_event_seq(s), 1);
    hrm_store_close(s);
}
