/* The master's durable state: jobs and task outcomes in SQLite (WAL); callers never see sqlite3. */
#ifndef HRM_STORE_H
#define HRM_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/error.h"

/*
 * Writes are grouped: the master opens a transaction for one turn of its
 * loop, records everything the turn changed, and commits before it sends a
 * single reply or launch that depends on it.  A commit returns once the WAL is
 * on disk (fdatasync), so "acknowledged" means "durable" for a submission,
 * and the commit's cost is shared by the whole turn.  The commit can also be
 * split: hrm_store_commit_unsynced writes the WAL's frames (a process that
 * dies from then on keeps the transaction), hrm_store_sync makes them durable
 * (the machine's loss keeps it too); the master sends its launches between
 * the two and everything else after (docs/runtime.md, "State folder and
 * durability").
 */

enum hrm_rjob_state {
    HRM_JOB_PENDING,   /* nothing started yet */
    HRM_JOB_RUNNING,   /* a task started */
    HRM_JOB_DONE,      /* every task exited 0 */
    HRM_JOB_FAILED,    /* a task failed for good */
    HRM_JOB_CANCELLED
};

enum hrm_rtask_state {
    HRM_RTASK_PENDING,
    HRM_RTASK_RUNNING,
    HRM_RTASK_DONE,    /* exited 0 */
    HRM_RTASK_FAILED,  /* exited non-zero, was killed by a signal, or could not start */
    HRM_RTASK_SKIPPED, /* never ran: its job failed or was cancelled first */
    HRM_RTASK_CANCELLED
};

const char *hrm_job_state_name(int state);
const char *hrm_rtask_state_name(int state);

struct hrm_store_job {
    int64_t id;
    const char *name, *user, *queue;
    int32_t priority;
    int32_t ntasks;
    int64_t submit_us, end_us; /* wall clock; end -1 while unfinished */
    int state;                 /* enum hrm_rjob_state */
    int exit;                  /* the job's exit code (first failed task's), 0 */
    const char *spec;          /* the submitted description, JSON text */
    const char *submit_key;    /* the client's submission key; NULL: none (not loaded back) */
};

/* A task row exists once the task has been launched at least once. */
struct hrm_store_task {
    int64_t job;
    int32_t idx;
    int state;       /* enum hrm_rtask_state */
    int32_t attempt; /* of the latest launch */
    const char *node;
    int exit, signal;
    bool oom;
    int64_t start_us, end_us; /* first start... latest start, end; -1 if none */
    const char *error;        /* why the latest launch could not start; "" or NULL: none */
    /* Stream tasks: runs restarted, quick exits in a row, the latest restart's delay and when
     * the task may be placed again (wall clock, 0: it is not waiting); 0 for batch tasks. */
    int32_t restarts, crash_streak;
    int64_t backoff_us, restart_at_us;
};

struct hrm_store;

/* Opens (creating and migrating as needed) the database at path. */
struct hrm_store *hrm_store_open(const char *path, struct hrm_error *err);
void hrm_store_close(struct hrm_store *s); /* NULL is a no-op */
int hrm_store_schema_version(struct hrm_store *s);

int hrm_store_begin(struct hrm_store *s, struct hrm_error *err);
/* The same, for a transaction whose commit may be split: hrm_store_commit_unsynced then
 * returns before the sync, left to hrm_store_sync.  (After hrm_store_begin, the commit always
 * syncs before it returns, and a failed sync fails it: the transaction is not there.) */
int hrm_store_begin_split(struct hrm_store *s, struct hrm_error *err);
int hrm_store_commit(struct hrm_store *s, struct hrm_error *err); /* unsynced + sync */
/* Commits the open transaction; if it was begun split, without its sync: what it wrote is in
 * the WAL file (kept if the process dies, lost if the machine does) and visible to other
 * connections.  Then hrm_store_sync, before anything that depends on it is promised.  0 or a
 * negative code (the transaction is then rolled back, nothing pending). */
int hrm_store_commit_unsynced(struct hrm_store *s, struct hrm_error *err);
/* Syncs the WAL if a split commit waits for it (else a no-op): 0 or a negative code (the
 * commit stays pending and visible: a failed sync may have lost its data, the caller must not
 * promise it, and should stop, as the master does). */
int hrm_store_sync(struct hrm_store *s, struct hrm_error *err);
bool hrm_store_sync_pending(const struct hrm_store *s);
void hrm_store_rollback(struct hrm_store *s);
bool hrm_store_in_txn(const struct hrm_store *s);
/*
 * The WAL is checkpointed (its frames copied into the database, so it starts over from its
 * beginning) when the caller says, outside its commits: due once a commit leaves 1,000 frames
 * (pages) in it.  A commit that leaves twice that checkpoints itself.
 * Outside a transaction only, and never while a split commit's sync is pending (a no-op then:
 * the caller's next call after hrm_store_sync does it); 0 or a negative code (the WAL then only
 * grows until the next).  Several split commits may share one hrm_store_sync (the master's
 * group commit): it syncs every frame written before it.
 */
bool hrm_store_checkpoint_due(const struct hrm_store *s);
int hrm_store_checkpoint(struct hrm_store *s, struct hrm_error *err);
/* A write opened the transaction (hrm_store_commit will write and sync), for its latency. */
bool hrm_store_txn_open(const struct hrm_store *s);

/* Integer metadata ("next_job", "boots"); get returns def when absent. */
int64_t hrm_store_meta_get(struct hrm_store *s, const char *key, int64_t def);
int hrm_store_meta_put(struct hrm_store *s, const char *key, int64_t value,
                       struct hrm_error *err);

/* Adds a new job row; a row with the same id or submission key is never
 * replaced: that is an error (-EEXIST).  State changes go through set_job_state. */
int hrm_store_insert_job(struct hrm_store *s, const struct hrm_store_job *j,
                         struct hrm_error *err);
/* The id of the job submitted with key (its own transaction's rows included),
 * 0 if none, or a negative code. */
int64_t hrm_store_job_by_key(struct hrm_store *s, const char *key, struct hrm_error *err);
int hrm_store_set_job_state(struct hrm_store *s, int64_t id, int state, int exit, int64_t end_us,
                            struct hrm_error *err);
/* Records the task's row (in the open transaction).  Task rows and events wait in memory until
 * the commit (or a read of the events), then go as multi-row statements: a failure to write them
 * is the commit's. */
int hrm_store_put_task(struct hrm_store *s, const struct hrm_store_task *t,
                       struct hrm_error *err);

/* Replays the store: every job in id order, then every task row.  Pointers in
 * the records are valid for the callback only.  A callback's negative return
 * stops the walk and is returned. */
typedef int (*hrm_store_job_f)(void *arg, const struct hrm_store_job *j);
typedef int (*hrm_store_task_f)(void *arg, const struct hrm_store_task *t);
int hrm_store_load(struct hrm_store *s, hrm_store_job_f on_job, hrm_store_task_f on_task,
                   void *arg, struct hrm_error *err);

/* Agent keys listed without node= are bound to the node name of their first
 * registration: recorded (in the open transaction) and replayed at start. */
int hrm_store_bind_agent_key(struct hrm_store *s, const char *key, const char *node,
                             struct hrm_error *err);
typedef int (*hrm_store_key_f)(void *arg, const char *key, const char *node);
int hrm_store_load_agent_keys(struct hrm_store *s, hrm_store_key_f on_key, void *arg,
                              struct hrm_error *err);

/* FGM's learned profiles (the master's estimator, hrm/fgm.h): put records one (in the open
 * transaction), replacing the key's previous one; load replays them all.  The profile is
 * opaque text here (hrm_est_format_line). */
int hrm_store_put_estimate(struct hrm_store *s, uint32_t logic, int32_t input_class,
                           const char *profile, struct hrm_error *err);
typedef int (*hrm_store_estimate_f)(void *arg, const char *profile);
int hrm_store_load_estimates(struct hrm_store *s, hrm_store_estimate_f on_profile, void *arg,
                             struct hrm_error *err);

/* The cluster's event log (docs/runtime.md, "Event log").  seq grows by one per event and is never
 * given twice, even across restarts and retention.  job/task are 0/-1 when they do not apply. */
struct hrm_store_event {
    int64_t seq; /* set by the store */
    int64_t time_us; /* wall clock */
    const char *kind; /* "job_submitted", "task_ended", "node_down", ... */
    int64_t job;
    int32_t task;
    const char *node;   /* "" or NULL: none */
    const char *detail; /* short text or JSON; "" or NULL: none */
};
/* Appends e (in the open transaction). */
int hrm_store_append_event(struct hrm_store *s, const struct hrm_store_event *e,
                           struct hrm_error *err);
/* Calls on_event for the events with seq > since, oldest first, at most limit of them; returns
 * how many or a negative code.  Pointers in e are valid for the callback only. */
typedef int (*hrm_store_event_f)(void *arg, const struct hrm_store_event *e);
int hrm_store_read_events(struct hrm_store *s, int64_t since, int32_t limit,
                          hrm_store_event_f on_event, void *arg, struct hrm_error *err);
/* The latest sequence number given (0: none yet), whether or not that event is still kept. */
int64_t hrm_store_last_event_seq(struct hrm_store *s);
/* Retention (in the open transaction): keeps the latest `keep` events and drops those older than
 * older_than_us (wall clock). */
int hrm_store_prune_events(struct hrm_store *s, int64_t keep, int64_t older_than_us,
                           struct hrm_error *err);

/* What the store has written since it was opened: rows handed to it (task rows and events),
 * data statements run (every INSERT, UPDATE and DELETE, a multi-row one counting once),
 * transactions committed, WAL syncs made by hrm_store_sync (one per split commit) and WAL
 * checkpoints run.  For tests and metrics. */
struct hrm_store_stats {
    long long rows, statements, commits, syncs, checkpoints;
};
void hrm_store_stats(const struct hrm_store *s, struct hrm_store_stats *out);

#endif
