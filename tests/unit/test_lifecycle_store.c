/* Store: a job row is never replaced, submission keys find their job, a state folder of the first schema opens. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hrm/store.h"
#include "store_fixture.h"

static char path[256]; /* a fresh hrm.db in a folder of its own, per test */

static void fresh_db(void)
{
    store_fixture_new(path, sizeof(path));
}

static void remove_db(void)
{
    store_fixture_remove(path);
}

TestSuite(lifecycle_store, .init = fresh_db, .fini = remove_db);

struct names {
    int jobs;
    char name[4][16];
};

static int on_job(void *arg, const struct hrm_store_job *j)
{
    struct names *n = arg;
    if (n->jobs < 4)
        snprintf(n->name[n->jobs], sizeof(n->name[0]), "%s", j->name);
    n->jobs++;
    return 0;
}

Test(lifecycle_store, a_job_row_is_never_replaced)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    hrm_store_begin(s, &err);
    struct hrm_store_job first = {.id = 1, .name = "first", .ntasks = 1, .end_us = -1,
                                  .spec = "{}"};
    cr_assert_eq(hrm_store_insert_job(s, &first, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0);
    /* A second master's "job 1" on the same file: refused, the first one stays. */
    hrm_store_begin(s, &err);
    struct hrm_store_job second = {.id = 1, .name = "second", .ntasks = 1, .end_us = -1,
                                   .spec = "{}"};
    cr_assert_eq(hrm_store_insert_job(s, &second, &err), -EEXIST);
    hrm_store_rollback(s);
    struct names seen = {0};
    cr_assert_eq(hrm_store_load(s, on_job, NULL, &seen, &err), 0);
    cr_assert_eq(seen.jobs, 1);
    cr_assert_str_eq(seen.name[0], "first");
    hrm_store_close(s);
}

Test(lifecycle_store, a_submission_key_finds_its_job)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    hrm_store_begin(s, &err);
    struct hrm_store_job a = {.id = 1, .name = "a", .ntasks = 1, .end_us = -1, .spec = "{}",
                              .submit_key = "k-a"};
    struct hrm_store_job b = {.id = 2, .name = "b", .ntasks = 1, .end_us = -1, .spec = "{}"};
    cr_assert_eq(hrm_store_insert_job(s, &a, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_insert_job(s, &b, &err), 0, "%s", err.text);
    /* Seen inside the transaction that wrote it (two submissions in one turn)... */
    cr_assert_eq(hrm_store_job_by_key(s, "k-a", &err), 1);
    cr_assert_eq(hrm_store_commit(s, &err), 0);
    hrm_store_close(s);
    /* ...and after a restart. */
    s = hrm_store_open(path, &err);
    cr_assert_eq(hrm_store_job_by_key(s, "k-a", &err), 1);
    cr_assert_eq(hrm_store_job_by_key(s, "k-unknown", &err), 0);
    /* One key, one job: a second job under a known key is refused. */
    hrm_store_begin(s, &err);
    struct hrm_store_job c = {.id = 3, .name = "c", .ntasks = 1, .end_us = -1, .spec = "{}",
                              .submit_key = "k-a"};
    cr_assert_eq(hrm_store_insert_job(s, &c, &err), -EEXIST);
    hrm_store_rollback(s);
    hrm_store_close(s);
}

Test(lifecycle_store, a_state_folder_of_the_first_schema_opens)
{
    /* hrm.db as the first release wrote it (schema 1), with a job: the first
     * migration's text, frozen here on purpose (the store's may not change). */
    store_fixture_first_schema(path, "INSERT INTO jobs VALUES(1, 'old', 'u', 'default', 0, 1, 5,"
                                     " -1, 0, 0, '{}');");
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_geq(hrm_store_schema_version(s), 2);
    struct names seen = {0};
    cr_assert_eq(hrm_store_load(s, on_job, NULL, &seen, &err), 0);
    cr_assert_eq(seen.jobs, 1);
    cr_assert_str_eq(seen.name[0], "old");
    /* The old job has no key; new jobs can have one. */
    cr_assert_eq(hrm_store_job_by_key(s, "k", &err), 0);
    hrm_store_begin(s, &err);
    struct hrm_store_job j = {.id = 2, .name = "new", .ntasks = 1, .end_us = -1, .spec = "{}",
                              .submit_key = "k"};
    cr_assert_eq(hrm_store_insert_job(s, &j, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0);
    cr_assert_eq(hrm_store_job_by_key(s, "k", &err), 2);
    hrm_store_close(s);
}
