/* The store's split commit (the master's launches leave between the two halves): a commit whose
 * sync has not run yet is kept by a process that dies, every committed transaction is synced
 * once, a turn that wrote nothing syncs nothing, and writes outside a turn still commit alone. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hrm/store.h"
#include "store_fixture.h"

STORE_FIXTURE_SUITE(startlat);

/* A submission's turn as the master makes it: the job's row, its task launched, an event. */
static int submit_turn(struct hrm_store *s, int64_t job, struct hrm_error *err)
{
    struct hrm_store_job j = {.id = job, .name = "j", .user = "u", .ntasks = 1,
                              .submit_us = job, .end_us = -1, .spec = "{}"};
    struct hrm_store_task t = {.job = job, .idx = 0, .state = HRM_RTASK_RUNNING,
                               .node = "n1", .start_us = job, .end_us = -1};
    struct hrm_store_event e = {.time_us = job, .kind = "task_started", .job = job,
                                .task = 0, .node = "n1", .detail = ""};
    int rc = hrm_store_begin_split(s, err);
    if (rc == 0)
        rc = hrm_store_insert_job(s, &j, err);
    if (rc == 0)
        rc = hrm_store_put_task(s, &t, err);
    if (rc == 0)
        rc = hrm_store_append_event(s, &e, err);
    return rc;
}

struct seen {
    int jobs, running;
};

static int on_job(void *arg, const struct hrm_store_job *j)
{
    (void)j;
    ((struct seen *)arg)->jobs++;
    return 0;
}

static int on_task(void *arg, const struct hrm_store_task *t)
{
    ((struct seen *)arg)->running += t->state == HRM_RTASK_RUNNING;
    return 0;
}

static struct seen load(const char *p)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(p, &err);
    cr_assert_not_null(s, "%s", err.text);
    struct seen n = {0};
    cr_assert_eq(hrm_store_load(s, on_job, on_task, &n, &err), 0, "%s", err.text);
    hrm_store_close(s);
    return n;
}

static long long syncs(const struct hrm_store *s)
{
    struct hrm_store_stats st;
    hrm_store_stats(s, &st);
    return st.syncs;
}

Test(startlat, an_unsynced_commit_survives_the_death_of_its_process)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* The master between its commit and the sync: launches sent, then SIGKILL.  Nothing
         * closes the store, nothing syncs. */
        struct hrm_error err;
        struct hrm_store *s = hrm_store_open(path, &err);
        if (!s || submit_turn(s, 1, &err) < 0 || hrm_store_commit(s, &err) < 0 ||
            submit_turn(s, 2, &err) < 0 || hrm_store_commit_unsynced(s, &err) < 0 ||
            !hrm_store_sync_pending(s))
            _exit(1);
        raise(SIGKILL);
        _exit(2);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "the child failed before its SIGKILL (status %d)", status);
    struct seen n = load(path);
    cr_assert_eq(n.jobs, 2, "%d jobs after the crash, not 2: the unsynced commit was lost",
                 n.jobs);
    cr_assert_eq(n.running, 2, "%d running tasks, not 2", n.running);
}

Test(startlat, every_commit_is_synced_once_and_an_empty_turn_never)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    long long before = syncs(s);

    cr_assert_eq(submit_turn(s, 1, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit_unsynced(s, &err), 0, "%s", err.text);
    cr_assert(hrm_store_sync_pending(s), "a split commit must leave its sync pending");
    cr_assert_eq(syncs(s), before, "the first half of a split commit synced");
    cr_assert_eq(hrm_store_sync(s, &err), 0, "%s", err.text);
    cr_assert_not(hrm_store_sync_pending(s));
    cr_assert_eq(syncs(s), before + 1);
    cr_assert_eq(hrm_store_sync(s, &err), 0, "%s", err.text); /* nothing waits: no-op */
    cr_assert_eq(syncs(s), before + 1, "a second sync of one commit");

    /* The whole commit: written and synced before it returns. */
    cr_assert_eq(submit_turn(s, 2, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    cr_assert_not(hrm_store_sync_pending(s));
    cr_assert_eq(syncs(s), before + 2);

    /* A turn that wrote nothing commits nothing and syncs nothing. */
    cr_assert_eq(hrm_store_begin_split(s, &err), 0);
    cr_assert_eq(hrm_store_commit_unsynced(s, &err), 0, "%s", err.text);
    cr_assert_not(hrm_store_sync_pending(s));
    cr_assert_eq(hrm_store_sync(s, &err), 0, "%s", err.text);
    cr_assert_eq(syncs(s), before + 2, "an empty turn synced");

    /* A write outside a turn is its own transaction (SQLite's commit syncs it), between and
     * after split commits alike. */
    cr_assert_eq(hrm_store_meta_put(s, "next_job", 3, &err), 0, "%s", err.text);
    cr_assert_not(hrm_store_in_txn(s));
    cr_assert_eq(submit_turn(s, 3, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_meta_put(s, "next_job", 4, &err), 0, "%s", err.text);
    hrm_store_close(s);

    struct seen n = load(path);
    cr_assert_eq(n.jobs, 3);
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(hrm_store_meta_get(s, "next_job", 0), 4);
    hrm_store_close(s);
}

Test(startlat, a_rolled_back_turn_leaves_no_sync_pending)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(submit_turn(s, 1, &err), 0, "%s", err.text);
    hrm_store_rollback(s);
    cr_assert_not(hrm_store_sync_pending(s));
    /* The same id again: the rolled-back row is not there, the insert succeeds. */
    cr_assert_eq(submit_turn(s, 1, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit_unsynced(s, &err), 0, "%s", err.text);
    cr_assert(hrm_store_sync_pending(s));
    hrm_store_close(s); /* SQLite's close checkpoints: what was committed stays */
    cr_assert_eq(load(path).jobs, 1);
}
