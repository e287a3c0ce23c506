/* The master's store writes few pages per turn: what a commit of events and task rows puts in
 * the WAL (counted from the WAL file's frame headers, as SQLite wrote them), and the event
 * log's numbering kept across the migration that dropped its index and AUTOINCREMENT. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "hrm/store.h"
#include "store_fixture.h"

STORE_FIXTURE_SUITE(mastercpu);

static uint32_t be32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

struct wal_count {
    int frames, commits;
};

/* The WAL's frames since its last restart (those with its header's salts), and how many of
 * them end a commit (a nonzero database size in the frame header). */
static struct wal_count wal_now(void)
{
    char wal[300];
    snprintf(wal, sizeof(wal), "%s-wal", path);
    FILE *f = fopen(wal, "rb");
    cr_assert_not_null(f, "%s", wal);
    unsigned char head[32], fh[24];
    cr_assert_eq(fread(head, 1, sizeof(head), f), sizeof(head));
    uint32_t page = be32(head + 8), salt1 = be32(head + 16), salt2 = be32(head + 20);
    struct wal_count n = {0};
    while (fread(fh, 1, sizeof(fh), f) == sizeof(fh)) {
        if (be32(fh + 8) != salt1 || be32(fh + 12) != salt2)
            break;
        n.frames++;
        n.commits += be32(fh + 4) != 0;
        cr_assert_eq(fseek(f, (long)page, SEEK_CUR), 0);
    }
    fclose(f);
    return n;
}

/* The frames written since `before`, by exactly `commits` commits (the WAL did not restart). */
static int frames_since(struct wal_count before, int commits)
{
    struct wal_count now = wal_now();
    cr_assert_eq(now.commits - before.commits, commits, "the WAL restarted or lost commits: %d",
                 now.commits - before.commits);
    return now.frames - before.frames;
}

static struct hrm_store_event event_row(int64_t job, int32_t task, const char *kind)
{
    return (struct hrm_store_event){.time_us = 1000 + job, .kind = kind, .job = job,
                                    .task = task, .node = "node-1",
                                    .detail = "{\"ok\":true,\"exit\":0,\"attempt\":0}"};
}

/* A turn that only logs (ends acknowledged, jobs started): its commit writes the log's last
 * page, and the file's first page when the file grew, not an index page and a sequence page
 * beside it as the AUTOINCREMENT table with its time index did (three pages a commit). */
Test(mastercpu, a_commit_of_events_writes_about_one_page)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    struct wal_count before = wal_now();
    enum { COMMITS = 200, EVENTS = 4 };
    for (int c = 0; c < COMMITS; c++) {
        cr_assert_eq(hrm_store_begin_split(s, &err), 0);
        for (int e = 0; e < EVENTS; e++) {
            struct hrm_store_event ev = event_row(c + 1, e, "task_ended");
            cr_assert_eq(hrm_store_append_event(s, &ev, &err), 0, "%s", err.text);
        }
        cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    }
    int frames = frames_since(before, COMMITS);
    cr_assert_lt(frames, COMMITS * 3 / 2, "%d WAL frames for %d commits of %d events", frames,
                 COMMITS, EVENTS);
    cr_assert_eq(hrm_store_last_event_seq(s), COMMITS * EVENTS);
    hrm_store_close(s);
}

/* A launch and an end per slot, as the one-job count run's turns: task rows of a job's two
 * ends of its table and their events, in fewer than five pages a commit (seven to eight
 * before: the log's index and sequence pages on top). */
Test(mastercpu, a_turn_of_launches_and_ends_writes_under_five_pages)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    enum { COMMITS = 200, PER_TURN = 6, RUNNING = 128 };
    struct wal_count before = wal_now();
    int32_t next = 0;
    for (int c = 0; c < COMMITS; c++) {
        cr_assert_eq(hrm_store_begin_split(s, &err), 0);
        for (int k = 0; k < PER_TURN; k++, next++) {
            struct hrm_store_task t = {.job = 1, .idx = next, .state = HRM_RTASK_RUNNING,
                                       .node = "node-1", .start_us = next, .end_us = -1,
                                       .error = ""};
            cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
            struct hrm_store_event ev = event_row(1, next, "task_started");
            cr_assert_eq(hrm_store_append_event(s, &ev, &err), 0, "%s", err.text);
            if (next < RUNNING)
                continue;
            t.idx = next - RUNNING;
            t.state = HRM_RTASK_DONE;
            t.end_us = next;
            cr_assert_eq(hrm_store_put_task(s, &t, &err), 0, "%s", err.text);
            ev = event_row(1, t.idx, "task_ended");
            cr_assert_eq(hrm_store_append_event(s, &ev, &err), 0, "%s", err.text);
        }
        cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    }
    int frames = frames_since(before, COMMITS);
    cr_assert_lt(frames, COMMITS * 5, "%d WAL frames for %d commits", frames, COMMITS);
    hrm_store_close(s);
}

/* A store of schema 7 whose retention removed every event: its numbering goes on from the
 * sequence SQLite's AUTOINCREMENT kept, not from 1, once migrated. */
Test(mastercpu, the_migration_keeps_the_numbering_of_an_emptied_log)
{
    /* Schema 1 to 7 as those releases wrote it (frozen: an old file does not change). */
    store_fixture_first_schema(
        path,
        "CREATE TABLE agent_keys(key TEXT PRIMARY KEY, node TEXT NOT NULL UNIQUE) WITHOUT ROWID;"
        "ALTER TABLE tasks ADD COLUMN error TEXT NOT NULL DEFAULT '';"
        "ALTER TABLE jobs ADD COLUMN submit_key TEXT;"
        "CREATE UNIQUE INDEX jobs_submit_key ON jobs(submit_key) WHERE submit_key IS NOT NULL;"
        "ALTER TABLE tasks ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;"
        "ALTER TABLE tasks ADD COLUMN crash_streak INTEGER NOT NULL DEFAULT 0;"
        "ALTER TABLE tasks ADD COLUMN backoff_us INTEGER NOT NULL DEFAULT 0;"
        "ALTER TABLE tasks ADD COLUMN restart_at_us INTEGER NOT NULL DEFAULT 0;"
        "CREATE TABLE estimates(logic INTEGER NOT NULL, input_class INTEGER NOT NULL,"
        " profile TEXT NOT NULL, PRIMARY KEY(logic, input_class)) WITHOUT ROWID;"
        "CREATE TABLE events(seq INTEGER PRIMARY KEY AUTOINCREMENT, time_us INTEGER NOT NULL,"
        " kind TEXT NOT NULL, job INTEGER NOT NULL, task INTEGER NOT NULL, node TEXT NOT NULL,"
        " detail TEXT NOT NULL);"
        "CREATE INDEX events_time ON events(time_us);"
        "UPDATE schema_version SET version = 7;"
        "INSERT INTO events(seq, time_us, kind, job, task, node, detail)"
        " VALUES(41, 5, 'job_submitted', 1, -1, '', '{}'), (42, 6, 'job_started', 1, -1, '', '{}');"
        "DELETE FROM events;");
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(hrm_store_last_event_seq(s), 42);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    struct hrm_store_event ev = event_row(2, -1, "job_submitted");
    cr_assert_eq(hrm_store_append_event(s, &ev, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    hrm_store_close(s);
    /* And a store that keeps it after a reopen, with retention by age emptying it again. */
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(hrm_store_last_event_seq(s), 43);
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    cr_assert_eq(hrm_store_prune_events(s, 1000, 1000000, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    hrm_store_close(s);
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(hrm_store_last_event_seq(s), 43);
    hrm_store_close(s);
}

static int on_job(void *arg, const struct hrm_store_job *j)
{
    int *done = arg;
    *done += j->state == HRM_JOB_DONE && j->exit == 3 && j->end_us == j->id;
    return 0;
}

/* A turn of job ends, as in a run of one-task jobs with a hundred running: the jobs it ends
 * were submitted dozens apart, so their rows (a description of hundreds of bytes each) are on
 * pages of their own, and rewriting them dirtied a page per end.  Their states are written
 * apart, small rows of near ids: one page a commit for four ends (two before, SQLite
 * rewriting in place the frames of pages an unsynced commit had written). */
Test(mastercpu, a_turn_of_job_ends_writes_about_one_page)
{
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    enum { JOBS = 600, COMMITS = 100, APART = 32 };
    char spec[400];
    memset(spec, 'x', sizeof(spec) - 1);
    spec[sizeof(spec) - 1] = '\0';
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    for (int id = 1; id <= JOBS; id++) {
        struct hrm_store_job j = {.id = id, .name = "one", .user = "u", .queue = "default",
                                  .ntasks = 1, .submit_us = id, .end_us = -1,
                                  .state = HRM_JOB_PENDING, .spec = spec};
        cr_assert_eq(hrm_store_insert_job(s, &j, &err), 0, "%s", err.text);
    }
    cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    struct wal_count before = wal_now();
    for (int c = 0; c < COMMITS; c++) {
        cr_assert_eq(hrm_store_begin_split(s, &err), 0);
        for (int k = 0; k < 4; k++) {
            int64_t id = 1 + c + k * APART;
            cr_assert_eq(hrm_store_set_job_state(s, id, HRM_JOB_DONE, 3, id, &err), 0, "%s",
                         err.text);
        }
        cr_assert_eq(hrm_store_commit(s, &err), 0, "%s", err.text);
    }
    int frames = frames_since(before, COMMITS);
    cr_assert_lt(frames, COMMITS * 3 / 2, "%d WAL frames for %d commits of 4 job ends", frames,
                 COMMITS);
    hrm_store_close(s);
    /* What was written is what a restarted master loads: every job ended, none twice. */
    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    int done = 0;
    cr_assert_eq(hrm_store_load(s, on_job, NULL, &done, &err), 0, "%s", err.text);
    bool ended[JOBS + 1] = {false};
    int want = 0;
    for (int c = 0; c < COMMITS; c++)
        for (int k = 0; k < 4; k++)
            if (!ended[1 + c + k * APART]) {
                ended[1 + c + k * APART] = true;
                want++;
            }
    cr_assert_eq(done, want, "%d jobs loaded as ended, not %d", done, want);
    hrm_store_close(s);
}
