/* Store tests' fixture: a fresh hrm.db in a folder of its own per test, and a database as the
 * first release of hrm wrote it (schema 1), to check that migrations keep old state folders. */
#ifndef HRM_TEST_STORE_FIXTURE_H
#define HRM_TEST_STORE_FIXTURE_H

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* path (of size n) becomes DIR/hrm.db in a new folder DIR. */
static inline void store_fixture_new(char *path, size_t n)
{
    char dir[] = "/tmp/hrm-store-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, n, "%s/hrm.db", dir);
}

/* Removes the folder of store_fixture_new's path, and all in it. */
static inline void store_fixture_remove(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strrchr(path, '/') - path), path);
    cr_assert_eq(system(cmd), 0);
}

/* A suite whose every test gets a fresh hrm.db at `path` (DIR/hrm.db), removed after the test. */
#define STORE_FIXTURE_SUITE(name)                                                                 \
    static char path[256];                                                                        \
    static void store_fixture_setup(void)                                                         \
    {                                                                                             \
        store_fixture_new(path, sizeof(path));                                                    \
    }                                                                                             \
    static void store_fixture_teardown(void)                                                      \
    {                                                                                             \
        store_fixture_remove(path);                                                               \
    }                                                                                             \
    TestSuite(name, .init = store_fixture_setup, .fini = store_fixture_teardown)

/* Writes path as the first schema's hrm.db, then rows (SQL, may be ""). The first migration's
 * text is frozen here on purpose: the store's copy may change, an old file may not. */
static inline void store_fixture_first_schema(const char *path, const char *rows)
{
    static const char v1[] =
        "CREATE TABLE schema_version(version INTEGER NOT NULL);"
        "INSERT INTO schema_version VALUES(1);"
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
        "CREATE TABLE jobs(id INTEGER PRIMARY KEY, name TEXT NOT NULL, user TEXT NOT NULL,"
        " queue TEXT NOT NULL, priority INTEGER NOT NULL, ntasks INTEGER NOT NULL,"
        " submit_us INTEGER NOT NULL, end_us INTEGER NOT NULL, state INTEGER NOT NULL,"
        " exit INTEGER NOT NULL, spec TEXT NOT NULL);"
        "CREATE TABLE tasks(job INTEGER NOT NULL, idx INTEGER NOT NULL, state INTEGER NOT NULL,"
        " attempt INTEGER NOT NULL, node TEXT NOT NULL, exit INTEGER NOT NULL,"
        " signal INTEGER NOT NULL, oom INTEGER NOT NULL, start_us INTEGER NOT NULL,"
        " end_us INTEGER NOT NULL, PRIMARY KEY(job, idx)) WITHOUT ROWID;";
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, v1, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_close(db);
}

#endif
