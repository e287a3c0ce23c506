/* Agent keys bound at first registration: kept in the store, and a store of the schema before them opens and takes them. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/store.h"
#include "store_fixture.h"

STORE_FIXTURE_SUITE(keys_store);

struct seen {
    int n;
    char key[4][64], node[4][64];
};

static int collect(void *arg, const char *key, const char *node)
{
    struct seen *s = arg;
    if (s->n < 4) {
        snprintf(s->key[s->n], sizeof(s->key[0]), "%s", key);
        snprintf(s->node[s->n], sizeof(s->node[0]), "%s", node);
    }
    s->n++;
    return 0;
}

/* The database of an hrm from before bindings: schema version 1, jobs, no agent_keys. */
static void make_old_store(void)
{
    store_fixture_first_schema(path,
                               "INSERT INTO jobs VALUES(1, 'old', 'root', 'default', 0, 1, 5, -1,"
                               " 0, 0, '{}');");
}

static int count_jobs(void *arg, const struct hrm_store_job *j)
{
    (*(int *)arg)++;
    return 0;
}

Test(keys_store, an_old_store_opens_and_keeps_bindings)
{
    make_old_store();
    struct hrm_error err = {{0}};
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    int jobs = 0;
    cr_assert_eq(hrm_store_load(s, count_jobs, NULL, &jobs, &err), 0, "%s", err.text);
    cr_assert_eq(jobs, 1);
    struct seen seen = {0};
    cr_assert_eq(hrm_store_load_agent_keys(s, collect, &seen, &err), 0, "%s", err.text);
    cr_assert_eq(seen.n, 0);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_bind_agent_key(s, "KEY-A", "n1", &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0);
    /* One name, one key: a second key for n1 is refused by the store too. */
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_lt(hrm_store_bind_agent_key(s, "KEY-B", "n1", &err), 0);
    hrm_store_rollback(s);
    hrm_store_close(s);
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    memset(&seen, 0, sizeof(seen));
    cr_assert_eq(hrm_store_load_agent_keys(s, collect, &seen, &err), 0, "%s", err.text);
    cr_assert_eq(seen.n, 1);
    cr_assert_str_eq(seen.key[0], "KEY-A");
    cr_assert_str_eq(seen.node[0], "n1");
    hrm_store_close(s);
}
