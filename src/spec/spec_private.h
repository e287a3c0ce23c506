/* Internals shared by the spec reader's files: parse context, JSON-path errors, getters. */
#ifndef HRM_SPEC_PRIVATE_H
#define HRM_SPEC_PRIVATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/cluster.h"
#include "hrm/error.h"
#include "hrm/resource.h"
#include "hrm/rng.h"
#include "hrm/workload.h"

/*
 * Caps on what one spec may build.  They exist so that a typo such as
 * "count": 100000000 ends in a clear message instead of an out-of-memory
 * abort (the allocator aborts by design, see alloc.h).  Each is far above the
 * largest experiment of the papers (P4: 10,000 nodes, ~1M tasks).
 */
#define SPEC_MAX_NODES 1000000
#define SPEC_MAX_JOBS 10000000
#define SPEC_MAX_STAGES 10000000
#define SPEC_MAX_TASKS 50000000
#define SPEC_MAX_BLOCKS 20000000
#define SPEC_MAX_PHASES 20000000
#define SPEC_MAX_DEPS 256         /* dependencies of one stage */
#define SPEC_MAX_JOB_STAGES 10000 /* stages of one job */
#define SPEC_MAX_QUEUES 1000
#define SPEC_MAX_RACKS 100000
#define SPEC_MAX_FILE (1 << 30) /* bytes of one JSON file */
/* What one task costs from the reader to the end of a simulation (its struct, the
 * simulator's per-task state and records): about 230 bytes measured for a one-stage
 * job under hrm sim's four default policies.  Tasks that would need more than the
 * memory this process may use are refused before they are built (spec_room). */
#define SPEC_TASK_BYTES 200
#define SPEC_PATH_MAX 256       /* longest JSON path kept for messages */

/* Open-addressing set of names, storing ids; names are fetched through name_of
 * so that the set holds no copies and survives the owner's reallocations. */
struct spec_names {
    int32_t *slots; /* id + 1, 0 = empty */
    size_t cap, n;
    const char *(*name_of)(const void *owner, int32_t id);
    const void *owner;
};

/* A named data set: blocks with replicas chosen once, read by tasks by index. */
struct spec_dataset {
    char name[HRM_NAME_MAX];
    int64_t block_size;
    int32_t nblocks;
    int32_t nreplicas;
    int32_t *replicas; /* nblocks * nreplicas node ids */
};

/* A node shape for the "fits some node" check: distinct capacities only. */
struct spec_shape {
    struct hrm_res cap;
    int64_t gpu_mem_each;
};

struct spec_ctx {
    const char *file;         /* file the current value came from (borrowed), for messages */
    const char *dir;          /* directory referenced files are relative to */
    char path[SPEC_PATH_MAX]; /* JSON path of the current value */
    size_t plen;
    struct hrm_error *err;
    struct hrm_rng root;         /* seeded from the caller's seed; streams fork from it */
    struct hrm_cluster *cluster; /* being built, then read by the workload parser */
    struct hrm_workload *wl;
    struct spec_names node_names;
    struct spec_names job_names;
    struct spec_names rack_names;
    struct spec_names dataset_names;
    struct spec_dataset *datasets;
    int32_t ndatasets;
    size_t cap_datasets;
    struct spec_shape *shapes;
    int32_t nshapes;
    size_t cap_shapes;
    struct hrm_res last_fit; /* last request found to fit: tasks of a stage repeat it */
    bool have_last_fit;
    double mem_budget; /* bytes tasks may take: physical memory, ulimit -v and -d */
};

/* ---- JSON paths and messages (spec_json.c) ---- */

/* Appends ".key" / "[i]" to the path; returns a mark for spec_pop. */
size_t spec_push_key(struct spec_ctx *c, const char *key);
size_t spec_push_index(struct spec_ctx *c, size_t i);
void spec_pop(struct spec_ctx *c, size_t mark);
/* Fills err with "<file>: <path>: <reason>" and returns -HRM_ESPEC. */
int spec_fail(struct spec_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, with key appended to the path for the message only. */
int spec_fail_key(struct spec_ctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *spec_type_name(const json_t *v);

/* Reads and parses a JSON file; NULL with err filled (naming file) on failure. */
json_t *spec_read_file(const char *fs_path, const char *display, struct hrm_error *err);
json_t *spec_parse_text(const char *text, size_t len, const char *display, struct hrm_error *err);

/* ---- typed getters (spec_json.c) ----
 * The key forms look key up in obj: an absent key leaves *out unchanged
 * (the caller pre-sets the default) unless SPEC_REQUIRED is given.  The value
 * forms read v at the current path.  All return 0 or -HRM_ESPEC with detail. */
#define SPEC_REQUIRED 1u /* absent is an error */
#define SPEC_POSITIVE 2u /* zero is an error (sizes, durations, rates) */

/* Checks v is an object whose keys are all in known (NULL-terminated); "comment" is always allowed.
 */
int spec_object(struct spec_ctx *c, const json_t *v, const char *const *known);
int spec_array(struct spec_ctx *c, const json_t *v, bool nonempty);

int spec_int(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, int64_t min,
             int64_t max, int64_t *out);
int spec_int_value(struct spec_ctx *c, const json_t *v, int64_t min, int64_t max, int64_t *out);
int spec_num(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, double min,
             double max, double *out);
int spec_num_value(struct spec_ctx *c, const json_t *v, double min, double max, double *out);
int spec_size(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, int64_t *out);
int spec_size_value(struct spec_ctx *c, const json_t *v, unsigned flags, int64_t *out);
int spec_duration(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags,
                  int64_t *out);
int spec_duration_value(struct spec_ctx *c, const json_t *v, unsigned flags, int64_t *out);
int spec_rate(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, double *out);
int spec_cpu(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, int64_t *out);
/* A name: 1..HRM_NAME_MAX-1 printable characters without spaces. */
int spec_name(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags,
              const char **out);
int spec_name_value(struct spec_ctx *c, const json_t *v, const char **out);
/* One of choices (NULL-terminated); *out is its index. */
int spec_choice(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags,
                const char *const *choices, int *out);
/* Whether name is acceptable (used for generated names too). */
bool spec_name_ok(const char *name);

/* ---- name sets (spec_json.c) ---- */
void spec_names_init(struct spec_names *s, const char *(*name_of)(const void *, int32_t),
                     const void *owner);
void spec_names_fini(struct spec_names *s);
int32_t spec_names_find(const struct spec_names *s, const char *name); /* id or -1 */
void spec_names_add(struct spec_names *s, int32_t id); /* name must not be present */

/* ---- parts (one file each) ---- */
int spec_cluster_parse(struct spec_ctx *c, const json_t *obj);
int spec_workload_parse(struct spec_ctx *c, const json_t *obj);
struct hrm_execution;
int spec_execution_parse(struct spec_ctx *c, const json_t *obj, struct hrm_execution *x);

/* ---- tasks (spec_task.c): templates shared by jobs and generators ---- */

enum spec_input_kind { SPEC_INPUT_RANDOM, SPEC_INPUT_NODES, SPEC_INPUT_DATASET };

/* One item of a task's "input". */
struct spec_input {
    enum spec_input_kind kind;
    int64_t size;    /* each block (RANDOM, NODES) */
    int32_t nblocks; /* RANDOM, NODES */
    int32_t nreplicas;
    int32_t replicas[HRM_MAX_REPLICAS]; /* NODES */
    int32_t dataset;                    /* DATASET: index into ctx->datasets */
    int32_t block; /* DATASET: block index, -1 = the task's index in its stage, -2 = all */
};

struct spec_phase {
    int64_t duration_us;
    struct hrm_res demand;
    unsigned set; /* bit d: demand.v[d] given, else the task's request */
};

/* What a task object says; later objects override earlier ones key by key. */
struct spec_task {
    struct hrm_res req;
    int64_t duration_us;     /* 0 = not given */
    int64_t est_duration_us; /* 0 = not given */
    uint32_t logic;          /* hrm_workload_logic_id of "logic", 0 = not given */
    struct spec_input *inputs;
    int32_t ninputs;
    bool own_inputs;
    struct spec_phase *phases;
    int32_t nphases;
    bool own_phases;
    struct hrm_gpu_phases gpu_phases; /* count 0 = not given (P0) */
    int32_t gpu_milli; /* "gpus" as a share of one GPU, in thousandths; 0 = a whole count */
    struct hrm_task_memory memory; /* working_set 0 = not given (P3) */
};

/* Keys a task object may hold, for objects that embed task keys. */
extern const char *const spec_task_keys[];

void spec_task_defaults(struct spec_task *t);
/* Copies base into t (sharing its inputs and phases, owned by base). */
void spec_task_inherit(struct spec_task *t, const struct spec_task *base);
void spec_task_fini(struct spec_task *t);
/* Applies the task keys present in obj (other keys are ignored: the caller
 * checks them) to t.  With SPEC_TASK_NO_DURATION, "duration" and
 * "est_duration" are left to the caller (generators sample them). */
#define SPEC_TASK_NO_DURATION 1u
int spec_task_apply(struct spec_ctx *c, const json_t *obj, struct spec_task *t, unsigned flags);
/* Checks a finished template: gpu_mem only with gpus, the profile matches the
 * duration (which defaults to the profile's total), and, if need_duration, a
 * duration is known. */
int spec_task_validate(struct spec_ctx *c, struct spec_task *t, bool need_duration);
/* Adds one task to the current stage of the workload: request, blocks (random
 * replicas from rng), phases; checks it fits a node.  duration_us overrides
 * t's when > 0 (generators sample it). */
int spec_task_emit(struct spec_ctx *c, const struct spec_task *t, int32_t index,
                   int64_t duration_us, int64_t est_duration_us, struct hrm_rng *rng);
/* Reads obj's "replicas" (a count, default 3, or a list of node names) into in
 * (kind RANDOM or NODES). */
int spec_replicas_parse(struct spec_ctx *c, const json_t *obj, struct spec_input *in);
/* Picks n distinct random nodes. */
void spec_pick_nodes(struct spec_ctx *c, struct hrm_rng *rng, int32_t n, int32_t *out);

/* ---- generators (spec_gen.c) ---- */
int spec_generators_parse(struct spec_ctx *c, const json_t *arr);

/* ---- jobs (spec_workload.c), shared with generators ---- */
/* Adds a job after checking its name is new; returns its index or -HRM_ESPEC. */
int spec_job_add(struct spec_ctx *c, const struct hrm_job_desc *d);
/* Adds a stage; returns its id or -HRM_ESPEC. */
int spec_stage_add(struct spec_ctx *c, const char *name, const int32_t *deps, int32_t ndeps);
/* Checks there is room for n more tasks (and blocks/phases they bring). */
int spec_room(struct spec_ctx *c, int64_t ntasks);
/* The memory this process may use (spec_ctx.mem_budget), and the check of a task total
 * against it, failing at key (a total of double: generators estimate theirs). */
double spec_mem_budget(void);
int spec_mem_check(struct spec_ctx *c, const char *key, double ntasks);

#endif
