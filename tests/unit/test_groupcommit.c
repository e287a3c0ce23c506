/* The store under the master's group commit: split commits of several turns share one sync,
 * and no checkpoint runs while a sync is held back. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "hrm/store.h"
#include "store_fixture.h"

STORE_FIXTURE_SUITE(groupcommit);

#define TASKS 8

/* A job of TASKS tasks, committed and synced as a submission's turn is. */
static void submitted(struct hrm_store *s)
{
    struct hrm_error err;
    struct hrm_store_job j = {.id = 1, .name = "burst", .user = "u", .ntasks = TASKS,
                              .submit_us = 1, .end_us = -1, .spec = "{}"};
    cr_assert_eq(hrm_store_begin_split(s, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_insert_job(s, &j, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
}

/* One agent report's turn: task idx ended, its row written, the commit split and left unsynced
 * (the master's turn holding its sync for the window). */
static void end_turn(struct hrm_store *s, int32_t idx)
{
    struct hrm_error err;
    struct hrm_store_task t = {.job = 1, .idx = idx, .state = HRM_RTASK_DONE, .attempt = 1,
                               .node = "n1", .start_us = 10 + idx, .end_us = 20 + idx};
    cr_assert_eq(hrm_store_begin_split(s, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit_unsynced(s, &err), 0, "%s", err.text);
}

/* A store with the job submitted and its first end's commit written, its sync held. */
static struct hrm_store *one_end_held(void)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    submitted(s);
    end_turn(s, 0);
    return s;
}

static struct hrm_store_stats stats(const struct hrm_store *s)
{
    struct hrm_store_stats st;
    hrm_store_stats(s, &st);
    return st;
}

static int count_done(void *arg, const struct hrm_store_task *t)
{
    *(int *)arg += t->state == HRM_RTASK_DONE;
    return 0;
}

Test(groupcommit, the_commits_of_several_turns_share_one_sync)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    submitted(s);
    struct hrm_store_stats before = stats(s);
    for (int32_t i = 0; i < TASKS; i++) {
        end_turn(s, i);
        cr_assert(hrm_store_sync_pending(s), "turn %d: its sync is not pending", i);
    }
    /* A turn that writes nothing between them leaves the held sync pending. */
    cr_assert_eq(hrm_store_begin_split(s, &err), 0);
    cr_assert_eq(hrm_store_commit_unsynced(s, &err), 0, "%s", err.text);
    cr_assert(hrm_store_sync_pending(s), "an empty turn dropped the held sync");
    struct hrm_store_stats mid = stats(s);
    cr_assert_eq(mid.commits - before.commits, TASKS, "%lld commits for %d turns",
                 mid.commits - before.commits, TASKS);
    cr_assert_eq(mid.syncs, before.syncs, "a split commit synced by itself");
    cr_assert_eq(hrm_store_sync(s, &err), 0, "%s", err.text);
    cr_assert_not(hrm_store_sync_pending(s));
    cr_assert_eq(stats(s).syncs - before.syncs, 1, "%lld syncs for the window, not 1",
                 stats(s).syncs - before.syncs);
    hrm_store_close(s);

    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    int done = 0;
    cr_assert_eq(hrm_store_load(s, NULL, count_done, &done, &err), 0, "%s", err.text);
    cr_assert_eq(done, TASKS, "%d of %d ends kept", done, TASKS);
    hrm_store_close(s);
}

Test(groupcommit, no_checkpoint_runs_while_a_sync_is_held)
{
    struct hrm_error err;
    struct hrm_store *s = one_end_held();
    long long checkpoints = stats(s).checkpoints;
    cr_assert_eq(hrm_store_checkpoint(s, &err), 0, "%s", err.text);
    cr_assert_eq(stats(s).checkpoints, checkpoints,
                 "a checkpoint ran with a commit's sync still held");
    cr_assert(hrm_store_sync_pending(s), "the checkpoint took the held sync's place");
    end_turn(s, 1); /* the WAL keeps growing: the frames of both wait for one sync */
    cr_assert_eq(hrm_store_sync(s, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_checkpoint(s, &err), 0, "%s", err.text);
    cr_assert_eq(stats(s).checkpoints, checkpoints + 1, "no checkpoint after the sync");
    hrm_store_close(s);
}

Test(groupcommit, a_synced_commit_after_held_ones_makes_them_durable_too)
{
    struct hrm_error err;
    struct hrm_store *s = one_end_held();
    long long syncs = stats(s).syncs;
    /* A transaction not begun split commits at synchronous=FULL: SQLite's sync covers the
     * WAL's earlier frames as well, so nothing is pending after it. */
    struct hrm_store_task t = {.job = 1, .idx = 1, .state = HRM_RTASK_RUNNING, .attempt = 1,
                               .node = "n1", .start_us = 5, .end_us = -1};
    cr_assert_eq(hrm_store_begin(s, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    cr_assert_not(hrm_store_sync_pending(s), "a FULL commit left the earlier sync pending");
    cr_assert_eq(hrm_store_sync(s, &err), 0, "%s", err.text);
    cr_assert_eq(stats(s).syncs, syncs, "a sync with none pending");
    hrm_store_close(s);
}
