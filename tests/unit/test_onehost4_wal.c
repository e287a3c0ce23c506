/* The store's WAL: written out to its full size at open, so commits never grow it (each sync is
 * a data sync), reused from its start after each checkpoint; no checkpoint inside a commit below
 * twice the threshold; and what was committed comes back after a process dies without closing,
 * zeros and an older cycle's frames behind the valid ones included. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hrm/store.h"
#include "store_fixture.h"

static char path[256], wal[300];

static void setup(void)
{
    store_fixture_new(path, sizeof(path));
    snprintf(wal, sizeof(wal), "%s-wal", path);
}

static void teardown(void)
{
    store_fixture_remove(path);
}

TestSuite(onehost4_wal, .init = setup, .fini = teardown);

static long long file_size(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* One turn's writes as the master makes them for a submitted job: its row, a few task rows
 * and their events, then the commit. */
static void turn(struct hrm_store *s, int64_t job)
{
    struct hrm_error err;
    char spec[600];
    memset(spec, 'x', sizeof(spec) - 1);
    spec[sizeof(spec) - 1] = '\0';
    struct hrm_store_job j = {.id = job, .name = "j", .user = "u", .ntasks = 4,
                              .submit_us = job, .end_us = -1, .spec = spec};
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_insert_job(s, &j, &err), 0, "%s", err.text);
    for (int i = 0; i < 4; i++) {
        struct hrm_store_task t = {.job = job, .idx = i, .state = HRM_RTASK_RUNNING,
                                   .node = "n1", .start_us = job, .end_us = -1};
        struct hrm_store_event e = {.time_us = job, .kind = "task_started", .job = job,
                                    .task = i, .node = "n1", .detail = spec};
        cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
        cr_assert_eq(hrm_store_append_event(s, &e, &err), 0, "%s", err.text);
    }
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
}

static int count_jobs(void *arg, const struct hrm_store_job *j)
{
    (void)j;
    (*(int *)arg)++;
    return 0;
}

static int no_task(void *arg, const struct hrm_store_task *t)
{
    (void)arg;
    (void)t;
    return 0;
}

static int jobs_in(struct hrm_store *s)
{
    struct hrm_error err;
    int n = 0;
    cr_assert_eq(hrm_store_load(s, count_jobs, no_task, &n, &err), 0, "%s", err.text);
    return n;
}

Test(onehost4_wal, commits_never_change_the_wal_size)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    long long size = file_size(wal);
    /* Written out at open: at least the checkpoint threshold of 4 KiB pages and their headers. */
    cr_assert_geq(size, 32 + 1000LL * (24 + 4096), "the WAL was not written out at open: %lld",
                  size);
    int checkpoints = 0;
    for (int64_t job = 1; job <= 600; job++) {
        turn(s, job);
        cr_assert_eq(file_size(wal), size, "commit %lld changed the WAL's size",
                     (long long)job);
        if (hrm_store_checkpoint_due(s)) {
            cr_assert_eq(hrm_store_checkpoint(s, &err), 0, "%s", err.text);
            checkpoints++;
        }
    }
    /* Several cycles ran, each reusing the file from its start. */
    cr_assert_geq(checkpoints, 2);
    struct hrm_store_stats st;
    hrm_store_stats(s, &st);
    cr_assert_eq(st.checkpoints, checkpoints);
    cr_assert_eq(jobs_in(s), 600);
    hrm_store_close(s);
}

Test(onehost4_wal, a_commit_leaves_the_checkpoint_to_the_caller)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    long long db = file_size(path);
    int64_t job = 1;
    /* Commits up to the threshold and past it: the database file is not written, so no commit
     * paid for a checkpoint (SQLite's automatic one would run in the commit that crosses
     * 1,000 pages). */
    while (!hrm_store_checkpoint_due(s)) {
        turn(s, job++);
        cr_assert_lt(job, 10000);
    }
    for (int i = 0; i < 20; i++)
        turn(s, job++);
    struct hrm_store_stats st;
    hrm_store_stats(s, &st);
    cr_assert_eq(st.checkpoints, 0);
    cr_assert_eq(file_size(path), db, "a commit copied pages into the database");
    cr_assert_eq(hrm_store_checkpoint(s, &err), 0, "%s", err.text);
    cr_assert(!hrm_store_checkpoint_due(s));
    cr_assert_gt(file_size(path), db);
    /* Nobody checkpoints: the commit that leaves twice the threshold does it itself. */
    long long commits = 0;
    for (hrm_store_stats(s, &st); st.checkpoints == 1; hrm_store_stats(s, &st)) {
        turn(s, job++);
        cr_assert_lt(++commits, 10000);
    }
    cr_assert_eq(st.checkpoints, 2);
    hrm_store_close(s);
}

/* A child commits `jobs` turns (checkpointing when due) and dies without closing the store. */
static void commit_and_die(int jobs)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        struct hrm_error err;
        struct hrm_store *s = hrm_store_open(path, &err);
        if (!s)
            _exit(2);
        for (int64_t job = 1; job <= jobs; job++) {
            turn(s, job);
            if (hrm_store_checkpoint_due(s) && hrm_store_checkpoint(s, &err) < 0)
                _exit(3);
        }
        _exit(0); /* no close: no final checkpoint, the WAL keeps what the last cycle wrote */
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed: %d", st);
}

Test(onehost4_wal, what_was_committed_survives_a_death_before_close)
{
    /* 10 turns: the valid frames, then the zeros written at open. 450 turns: cycles of the
     * file, the last one's frames followed by an older cycle's. */
    int runs[] = {10, 450};
    for (int i = 0; i < 2; i++) {
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "rm -f '%s' '%s' '%s-shm'", path, wal, path);
        cr_assert_eq(system(cmd), 0);
        commit_and_die(runs[i]);
        struct hrm_error err;
        struct hrm_store *s = hrm_store_open(path, &err);
        cr_assert_not_null(s, "%s", err.text);
        cr_assert_eq(jobs_in(s), runs[i]);
        turn(s, runs[i] + 1); /* and it goes on writing */
        hrm_store_close(s);
        s = hrm_store_open(path, &err);
        cr_assert_not_null(s, "%s", err.text);
        cr_assert_eq(jobs_in(s), runs[i] + 1);
        hrm_store_close(s);
    }
}
