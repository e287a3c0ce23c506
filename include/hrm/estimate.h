/* Similar-task history (P2): staged demand profiles from usage samples, persisted. */
#ifndef HRM_ESTIMATE_H
#define HRM_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/error.h"
#include "hrm/workload.h"

/*
 * Two tasks are similar (P2 Def. 3) when they run the same program on the
 * same amount of data.  The program is the task's declared logic
 * (hrm_task.logic) or, when none is declared, the identity of its job and
 * stage ("job/stage"): the tasks of one stage run one program, which is what
 * a YARN AppMaster's MD5 of code and arguments identifies.  Input sizes are
 * compared in classes a quarter of an octave wide (about 19 %), so that
 * blocks of "128M" and a last block a few bytes shorter stay similar.
 */
struct hrm_est_key {
    uint32_t logic;
    int32_t input_class; /* 0: no input; else 1 + floor(4 * log2(bytes)) */
};

#define HRM_EST_MAX_STAGES 8

/* One execution stage: constant demand for a time, on a speed-1.0 node, uncompressed. */
struct hrm_est_stage {
    int64_t duration_us;
    int64_t cpu; /* milli-cores */
    int64_t mem; /* bytes */
};

/* What the history says about a key. */
struct hrm_est_profile {
    int32_t nobs;        /* completed similar runs it was learned from */
    int32_t nstages;     /* 1..HRM_EST_MAX_STAGES */
    int64_t duration_us; /* sum of the stage durations */
    struct hrm_est_stage stage[HRM_EST_MAX_STAGES];
};

/* A usage sample of a running attempt: its average use over the last interval. */
struct hrm_est_sample {
    int64_t interval_us; /* wall time covered, > 0 */
    int64_t cpu;         /* milli-cores used */
    int64_t mem;         /* bytes resident */
    bool compressed;     /* the node's cpu was compressed: use understates demand */
};

struct hrm_est_config {
    /* Weight of a new run in the smoothed update est' = (1-w) est + w obs
     * (the formula (8) the paper leaves out).  Default 0.3. */
    double weight;
    /* Factor on the weight for the part of a run observed while its node was
     * compressing, whose samples understate demand.  Default 0.2. */
    double compressed_factor;
    /* Adjacent stages whose cpu and memory both differ by less than this
     * fraction are one stage.  Default 0.15. */
    double merge_tol;
    /* Most stages a profile keeps (1..HRM_EST_MAX_STAGES).  Default 4. */
    int32_t max_stages;
};

struct hrm_est;

/* cfg may be NULL (defaults); zero fields take defaults.  NULL with detail
 * when a field is out of range. */
struct hrm_est *hrm_est_new(const struct hrm_est_config *cfg, struct hrm_error *err);
void hrm_est_free(struct hrm_est *e); /* NULL is a no-op */

/* A program identity from a command line (the runtime's tasks carry their
 * argv, not a declared logic): a hash of the command and its arguments, each
 * argument separated so that {"a b"} and {"a", "b"} differ.  Never 0 (0 means
 * "not declared"); the same argv always gives the same id, on any host. */
uint32_t hrm_est_logic_of_command(const char *const *argv, size_t argc);

/* The similarity key of a task of wl. */
struct hrm_est_key hrm_est_key_of(const struct hrm_workload *wl, int32_t task);
/* The input class of a byte count (see hrm_est_key). */
int32_t hrm_est_input_class(int64_t bytes);

/* A usage sample of task's run `attempt`; a sample of a newer attempt drops
 * the trace of an older one. */
void hrm_est_sample(struct hrm_est *e, int32_t task, int32_t attempt,
                    const struct hrm_est_sample *s);
/* The run ended.  A successful run's trace, its durations scaled by the
 * node's cpu speed to a speed-1.0 node, updates the history of key; any other
 * end drops it.  Runs without samples teach nothing. */
void hrm_est_task_end(struct hrm_est *e, int32_t task, int32_t attempt, bool success,
                      const struct hrm_est_key *key, double cpu_speed);

/* One observed run, as stages with the fraction of each spent compressed. */
struct hrm_est_obs {
    int32_t nstages;
    struct hrm_est_stage stage[HRM_EST_MAX_STAGES];
    double compressed[HRM_EST_MAX_STAGES]; /* 0..1 */
};
/* Folds an observation into the history of key (what hrm_est_task_end does
 * with a trace).  -EINVAL for an empty or non-positive observation. */
int hrm_est_observe(struct hrm_est *e, const struct hrm_est_key *key,
                    const struct hrm_est_obs *obs);

/* The profile of key, or NULL when no similar run has completed.  Borrowed:
 * valid until the next change of the history. */
const struct hrm_est_profile *hrm_est_lookup(const struct hrm_est *e,
                                             const struct hrm_est_key *key);
int32_t hrm_est_count(const struct hrm_est *e); /* keys with a profile */

/*
 * Persistence: a text file, a "hrm-estimates 1" header then one key per line
 * in key order, so estimates survive a restart (the simulator's stand-in for
 * the master's database).  save writes path.tmp and renames it over path.
 * load adds the file's profiles to e (replacing equal keys); a missing file
 * is -ENOENT; a foreign, other-version or malformed one, or one claiming
 * values beyond any real task (a stage over a year, a million cores, a
 * petabyte), is -HRM_ESPEC naming the file and line; e is unchanged on error.
 */
/*
 * One profile as one line of text, the file's format ("logic input_class nobs
 * nstages {duration_us cpu mem}..."): the master keeps the same lines in its
 * database, so there is one format and one parser for both persistences.
 * parse applies the file's bounds; -HRM_ESPEC with why.  put replaces key's
 * profile (p->nobs >= 1, as parse guarantees).
 */
#define HRM_EST_LINE_MAX 1024
void hrm_est_format_line(const struct hrm_est_key *key, const struct hrm_est_profile *p,
                         char *buf, size_t len);
int hrm_est_parse_line(const char *text, struct hrm_est_key *key, struct hrm_est_profile *p,
                       struct hrm_error *err);
void hrm_est_put(struct hrm_est *e, const struct hrm_est_key *key, const struct hrm_est_profile *p);

int hrm_est_save(const struct hrm_est *e, const char *path, struct hrm_error *err);
int hrm_est_load(struct hrm_est *e, const char *path, struct hrm_error *err);

#endif
