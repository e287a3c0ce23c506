/* Store: WAL mode, schema_version and migrations, durable jobs and tasks across reopen, transactions. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hrm/store.h"
#include "store_fixture.h"

STORE_FIXTURE_SUITE(store);

struct seen {
    int jobs, tasks;
    long long last_job;
    int last_state;
    char spec[64];
};

static int on_job(void *arg, const struct hrm_store_job *j)
{
    struct seen *s = arg;
    s->jobs++;
    s->last_job = j->id;
    s->last_state = j->state;
    snprintf(s->spec, sizeof(s->spec), "%s", j->spec);
    return 0;
}

static int on_task(void *arg, const struct hrm_store_task *t)
{
    struct seen *s = arg;
    s->tasks++;
    cr_assert_str_eq(t->node, "n1");
    return 0;
}

/* journal_mode is read back by a second connection: WAL is recorded in the file itself. */
static void journal_mode_is(const char *want)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *q;
    cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
    cr_assert_str_eq((const char *)sqlite3_column_text(q, 0), want);
    sqlite3_finalize(q);
    sqlite3_close(db);
}

Test(store, creates_schema_in_wal_mode)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    int version = hrm_store_schema_version(s); /* every migration applied */
    cr_assert_geq(version, 2);
    journal_mode_is("wal");
    /* A write in a transaction goes to the -wal file, which exists while it is open. */
    char wal[300];
    snprintf(wal, sizeof(wal), "%s-wal", path);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_meta_put(s, "boots", 1, &err), 0, "%s", err.text);
    struct stat st;
    cr_assert_eq(stat(wal, &st), 0, "no %s during a transaction", wal);
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    cr_assert_eq(stat(wal, &st), 0);
    cr_assert_gt(st.st_size, 0, "the commit wrote nothing to the WAL");
    hrm_store_close(s);
    /* Reopening migrates nothing and keeps the version and the mode. */
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s);
    cr_assert_eq(hrm_store_schema_version(s), version);
    journal_mode_is("wal");
    hrm_store_close(s);
}

Test(store, committed_rows_survive_reopen)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    struct hrm_store_job j = {.id = 1, .name = "a", .user = "u", .queue = "default",
                              .ntasks = 2, .submit_us = 10, .end_us = -1, .spec = "{\"x\":1}"};
    cr_assert_eq(hrm_store_insert_job(s, &j, &err), 0);
    struct hrm_store_task t = {.job = 1, .idx = 1, .state = HRM_RTASK_RUNNING, .attempt = 1,
                               .node = "n1", .start_us = 11, .end_us = -1};
    cr_assert_eq(hrm_store_put_task(s, &t, &err), 0);
    cr_assert_eq(hrm_store_meta_put(s, "next_job", 2, &err), 0);
    cr_assert_eq(hrm_store_commit(s, &err), 0);
    /* An uncommitted change is not there after a reopen. */
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_set_job_state(s, 1, HRM_JOB_DONE, 0, 20, &err), 0);
    hrm_store_rollback(s);
    hrm_store_close(s);

    s = hrm_store_open(path, &err);
    struct seen seen = {0};
    cr_assert_eq(hrm_store_load(s, on_job, on_task, &seen, &err), 0);
    cr_assert_eq(seen.jobs, 1);
    cr_assert_eq(seen.tasks, 1);
    cr_assert_eq(seen.last_state, HRM_JOB_PENDING);
    cr_assert_str_eq(seen.spec, "{\"x\":1}");
    cr_assert_eq(hrm_store_meta_get(s, "next_job", 0), 2);
    cr_assert_eq(hrm_store_meta_get(s, "absent", -5), -5);
    hrm_store_close(s);
}

Test(store, task_rows_are_replaced_not_duplicated)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    hrm_store_begin(s, &err);
    struct hrm_store_job j = {.id = 3, .name = "a", .ntasks = 1, .end_us = -1, .spec = "{}"};
    hrm_store_insert_job(s, &j, &err);
    for (int a = 1; a <= 3; a++) {
        struct hrm_store_task t = {.job = 3, .idx = 0, .state = HRM_RTASK_RUNNING,
                                   .attempt = a, .node = "n1"};
        cr_assert_eq(hrm_store_put_task(s, &t, &err), 0);
    }
    hrm_store_commit(s, &err);
    struct seen seen = {0};
    hrm_store_load(s, on_job, on_task, &seen, &err);
    cr_assert_eq(seen.tasks, 1);
    hrm_store_close(s);
}

Test(store, refuses_a_newer_schema_and_bad_paths)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open("/nonexistent/dir/hrm.db", &err);
    cr_assert_null(s);
    cr_assert(strstr(err.text, "/nonexistent/dir/hrm.db"));
    s = hrm_store_open(path, &err);
    hrm_store_close(s);
    /* A later hrm's database, written behind the store's back. */
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "UPDATE schema_version SET version = 99", NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(db);
    cr_assert_null(hrm_store_open(path, &err));
    cr_assert(strstr(err.text, "newer"));
}

Test(store, state_names)
{
    cr_assert_str_eq(hrm_job_state_name(HRM_JOB_CANCELLED), "cancelled");
    cr_assert_str_eq(hrm_rtask_state_name(HRM_RTASK_SKIPPED), "skipped");
    cr_assert_str_eq(hrm_job_state_name(42), "?");
}
