/* The event log in the store: append, read after a sequence number in pages, retention, and a
 * sequence that never goes back, across reopen and after retention emptied the table. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "hrm/store.h"
#include "store_fixture.h"

STORE_FIXTURE_SUITE(events_store);

struct got {
    int n;
    int64_t seq[16];
    char kind[16][32];
    int64_t job[16];
};

static int on_event(void *arg, const struct hrm_store_event *e)
{
    struct got *g = arg;
    cr_assert_lt(g->n, 16);
    g->seq[g->n] = e->seq;
    snprintf(g->kind[g->n], sizeof(g->kind[0]), "%s", e->kind);
    g->job[g->n] = e->job;
    g->n++;
    return 0;
}

static void append(struct hrm_store *s, const char *kind, int64_t job, int64_t time_us)
{
    struct hrm_error err;
    struct hrm_store_event e = {.time_us = time_us, .kind = kind, .job = job, .task = -1,
                                .node = "n1", .detail = "{}"};
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_append_event(s, &e, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
}

static struct got read_since(struct hrm_store *s, int64_t since, int32_t limit)
{
    struct hrm_error err;
    struct got g = {0};
    int n = hrm_store_read_events(s, since, limit, on_event, &g, &err);
    cr_assert_eq(n, g.n, "%s", n < 0 ? err.text : "");
    return g;
}

Test(events_store, append_and_read_since_in_pages)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(hrm_store_last_event_seq(s), 0);
    append(s, "job_submitted", 1, 100);
    append(s, "job_started", 1, 200);
    append(s, "job_finished", 1, 300);
    cr_assert_eq(hrm_store_last_event_seq(s), 3);
    struct got all = read_since(s, 0, 100);
    cr_assert_eq(all.n, 3);
    cr_assert_str_eq(all.kind[0], "job_submitted");
    cr_assert_str_eq(all.kind[2], "job_finished");
    cr_assert(all.seq[0] < all.seq[1] && all.seq[1] < all.seq[2]);
    struct got page = read_since(s, 0, 2); /* a bounded page, then the rest after its last */
    cr_assert_eq(page.n, 2);
    struct got rest = read_since(s, page.seq[1], 2);
    cr_assert_eq(rest.n, 1);
    cr_assert_str_eq(rest.kind[0], "job_finished");
    cr_assert_eq(read_since(s, 3, 10).n, 0);
    hrm_store_close(s);
}

Test(events_store, rollback_keeps_no_event)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s);
    struct hrm_store_event e = {.time_us = 1, .kind = "node_up", .task = -1};
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_append_event(s, &e, &err), 0);
    hrm_store_rollback(s);
    cr_assert_eq(read_since(s, 0, 10).n, 0);
    hrm_store_close(s);
}

Test(events_store, retention_by_count_and_age)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s);
    for (int i = 1; i <= 10; i++)
        append(s, "task_started", i, 1000 * i);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_prune_events(s, 4, 0, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0);
    struct got g = read_since(s, 0, 100);
    cr_assert_eq(g.n, 4);
    cr_assert_eq(g.job[0], 7); /* the latest four are kept */
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_prune_events(s, 1000, 9000, &err), 0); /* older than 9000 us */
    cr_assert_eq(hrm_store_commit(s, &err), 0);
    g = read_since(s, 0, 100);
    cr_assert_eq(g.n, 2);
    cr_assert_eq(g.job[0], 9);
    hrm_store_close(s);
}

Test(events_store, reopen_keeps_the_sequence_monotonic)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s);
    append(s, "job_submitted", 1, 1);
    append(s, "job_submitted", 2, 2);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_prune_events(s, 0, 0, &err), 0); /* retention emptied the table */
    cr_assert_eq(hrm_store_commit(s, &err), 0);
    cr_assert_eq(read_since(s, 0, 10).n, 0);
    hrm_store_close(s);
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s);
    cr_assert_eq(hrm_store_last_event_seq(s), 2);
    append(s, "job_submitted", 3, 3);
    struct got g = read_since(s, 0, 10);
    cr_assert_eq(g.n, 1);
    cr_assert_eq(g.seq[0], 3); /* never a number given before */
    hrm_store_close(s);
}

Test(events_store, an_old_store_is_migrated)
{
    store_fixture_first_schema(path, "");
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_geq(hrm_store_schema_version(s), 7);
    append(s, "node_up", 0, 5);
    cr_assert_eq(read_since(s, 0, 10).n, 1);
    hrm_store_close(s);
}
