/* Launch failure reasons in the store: the tasks.error column, and a state folder made before it existed. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/store.h"
#include "store_fixture.h"

STORE_FIXTURE_SUITE(logs_store);

struct errors {
    int tasks;
    char error[2][128];
};

static int on_task(void *arg, const struct hrm_store_task *t)
{
    struct errors *e = arg;
    cr_assert_not_null(t->error);
    if (t->idx >= 0 && t->idx < 2)
        snprintf(e->error[t->idx], sizeof(e->error[0]), "%s", t->error);
    e->tasks++;
    return 0;
}

static void put_task(struct hrm_store *s, int32_t idx, const char *error)
{
    struct hrm_error err;
    struct hrm_store_task t = {.job = 1, .idx = idx, .state = HRM_RTASK_FAILED, .attempt = 1,
                               .node = "n1", .exit = 127, .start_us = 5, .end_us = 6,
                               .error = error};
    cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
}

Test(logs_store, the_reason_survives_reopen)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    put_task(s, 0, "frob: command not found");
    put_task(s, 1, NULL); /* started: no reason */
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    hrm_store_close(s);
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    struct errors e = {0};
    cr_assert_eq(hrm_store_load(s, NULL, on_task, &e, &err), 0, "%s", err.text);
    cr_assert_eq(e.tasks, 2);
    cr_assert_str_eq(e.error[0], "frob: command not found");
    cr_assert_str_eq(e.error[1], "");
    hrm_store_close(s);
}

/* A database written by the first schema (no error column) opens, keeps its rows, and takes
 * reasons from then on. */
Test(logs_store, a_store_from_the_first_schema_migrates)
{
    store_fixture_first_schema(path, "INSERT INTO tasks VALUES(1, 0, 3, 1, 'n1', 127, 0, 0, 5, 6);");
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_gt(hrm_store_schema_version(s), 1);
    struct errors e = {0};
    cr_assert_eq(hrm_store_load(s, NULL, on_task, &e, &err), 0, "%s", err.text);
    cr_assert_eq(e.tasks, 1);
    cr_assert_str_eq(e.error[0], "", "an old row has no reason");
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    put_task(s, 1, "cannot start: Argument list too long");
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    memset(&e, 0, sizeof(e));
    cr_assert_eq(hrm_store_load(s, NULL, on_task, &e, &err), 0, "%s", err.text);
    cr_assert_eq(e.tasks, 2);
    cr_assert_str_eq(e.error[1], "cannot start: Argument list too long");
    hrm_store_close(s);
}
