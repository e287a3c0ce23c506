/* Spec reader, workload part: queues, data sets, explicit jobs and their stages. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hrm/alloc.h"
#include "spec/spec_private.h"

static const char *const workload_keys[] = {"queues", "max_parallel", "fair_m", "datasets",
                                            "jobs",   "generators",   NULL};
static const char *const queue_keys[] = {"name", "guarantee", "max", NULL};
static const char *const dataset_keys[] = {"name", "blocks", "size", "replicas", NULL};
static const char *const job_keys[] = {"name",     "kind",   "user",  "queue", "priority", "submit",
                                       "deadline", "stages", "tasks", "task",  NULL};
static const char *const stage_keys[] = {"name", "deps", "tasks", "task", NULL};
static const char *const job_kinds[] = {"batch", "stream", "service", NULL};

#define MAX_DATASET_BLOCKS (SPEC_MAX_BLOCKS / 10)

static const char *dataset_name_of(const void *owner, int32_t id)
{
    const struct spec_ctx *c = owner;
    return c->datasets[id].name;
}

/* Stage names of the job being read, for the stage-name set. */
static const char *stage_name_of(const void *owner, int32_t id)
{
    const char(*names)[HRM_NAME_MAX] = owner;
    return names[id];
}

static const char *job_name_of(const void *owner, int32_t id)
{
    const struct hrm_workload *wl = owner;
    return wl->jobs[id].name;
}

double spec_mem_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double budget = pages > 0 && page > 0 ? (double)pages * (double)page : 1e300;
    static const int limits[] = {RLIMIT_AS, RLIMIT_DATA};
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
        struct rlimit rl;
        if (getrlimit(limits[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            (double)rl.rlim_cur < budget)
            budget = (double)rl.rlim_cur;
    }
    return budget;
}

int spec_mem_check(struct spec_ctx *c, const char *key, double ntasks)
{
    double need = ntasks * SPEC_TASK_BYTES;
    if (c->mem_budget <= 0 || need <= c->mem_budget)
        return 0;
    return spec_fail_key(c, key,
                         "%.0f tasks in all would need about %.1f GiB to simulate (%d bytes "
                         "each), more than the %.1f GiB allowed (hrm sim --max-mem, else the "
                         "physical memory and ulimit -v/-d)",
                         ntasks, need / (1 << 30), SPEC_TASK_BYTES, c->mem_budget / (1 << 30));
}

int spec_room(struct spec_ctx *c, int64_t ntasks)
{
    if ((int64_t)c->wl->ntasks + ntasks > SPEC_MAX_TASKS)
        return spec_fail(c, "the workload would have more than %d tasks", SPEC_MAX_TASKS);
    return spec_mem_check(c, "tasks", (double)c->wl->ntasks + (double)ntasks);
}

int spec_job_add(struct spec_ctx *c, const struct hrm_job_desc *d)
{
    if (!spec_name_ok(d->name))
        return spec_fail_key(c, "name",
                             "job name \"%.60s\" is not a valid name (1..%d "
                             "characters without spaces)",
                             d->name, HRM_NAME_MAX - 1);
    if (spec_names_find(&c->job_names, d->name) >= 0)
        return spec_fail_key(c, "name", "job name \"%s\" is already used", d->name);
    if (c->wl->njobs >= SPEC_MAX_JOBS)
        return spec_fail(c, "the workload would have more than %d jobs", SPEC_MAX_JOBS);
    struct hrm_error e;
    int id = hrm_workload_add_job(c->wl, d, &e);
    if (id < 0)
        return spec_fail(c, "%s", e.text);
    spec_names_add(&c->job_names, id);
    return id;
}

int spec_stage_add(struct spec_ctx *c, const char *name, const int32_t *deps, int32_t ndeps)
{
    if (c->wl->nstages >= SPEC_MAX_STAGES)
        return spec_fail(c, "the workload would have more than %d stages", SPEC_MAX_STAGES);
    struct hrm_error e;
    int id = hrm_workload_add_stage(c->wl, name, deps, ndeps, &e);
    return id < 0 ? spec_fail(c, "%s", e.text) : id;
}

/* ---- queues and data sets ---- */

static int parse_queues(struct spec_ctx *c, const json_t *arr)
{
    int rc = spec_array(c, arr, true);
    if (!rc && json_array_size(arr) > SPEC_MAX_QUEUES)
        rc = spec_fail(c, "more than %d queues", SPEC_MAX_QUEUES);
    if (rc)
        return rc;
    double sum = 0;
    bool has_default = false;
    size_t n = json_array_size(arr);
    for (size_t i = 0; !rc && i < n; i++) {
        size_t mark = spec_push_index(c, i);
        const json_t *q = json_array_get(arr, i);
        const char *name = NULL;
        double guarantee = 0, max = 1;
        if ((rc = spec_object(c, q, queue_keys)) ||
            (rc = spec_name(c, q, "name", SPEC_REQUIRED, &name)) ||
            (rc = spec_num(c, q, "guarantee", 0, 0, 1, &guarantee)) ||
            (rc = spec_num(c, q, "max", 0, 0, 1, &max)))
            goto next;
        if (max <= 0 || max < guarantee) {
            rc = spec_fail_key(c, "max", "must be > 0 and at least the queue's guarantee");
            goto next;
        }
        /* Every listed queue is new except "default", which always exists. */
        for (size_t k = 0; k < i && !rc; k++) {
            const json_t *nk = json_object_get(json_array_get(arr, k), "name");
            if (strcmp(json_string_value(nk), name) == 0)
                rc = spec_fail_key(c, "name", "queue \"%s\" is listed twice", name);
        }
        if (rc)
            goto next;
        has_default |= strcmp(name, "default") == 0;
        sum += guarantee;
        if (sum > 1 + 1e-9) {
            rc = spec_fail_key(c, "guarantee",
                               "the guarantees of the queues add up to more "
                               "than 1");
            goto next;
        }
        struct hrm_error e;
        if (hrm_workload_set_queue(c->wl, name, guarantee, max, &e) < 0)
            rc = spec_fail(c, "%s", e.text);
    next:
        spec_pop(c, mark);
    }
    /* An unlisted "default" queue keeps whatever the listed ones leave. */
    if (!rc && !has_default) {
        double rest = sum < 1 ? 1 - sum : 0;
        hrm_workload_set_queue(c->wl, "default", rest, 1, NULL);
    }
    return rc;
}

static int parse_dataset(struct spec_ctx *c, const json_t *obj, struct hrm_rng *rng,
                         int64_t *total_blocks)
{
    const char *name = NULL;
    int64_t blocks = 1, size = 0;
    int rc;
    if ((rc = spec_object(c, obj, dataset_keys)) ||
        (rc = spec_name(c, obj, "name", SPEC_REQUIRED, &name)) ||
        (rc = spec_int(c, obj, "blocks", 0, 1, MAX_DATASET_BLOCKS, &blocks)) ||
        (rc = spec_size(c, obj, "size", SPEC_REQUIRED | SPEC_POSITIVE, &size)))
        return rc;
    if (spec_names_find(&c->dataset_names, name) >= 0)
        return spec_fail_key(c, "name", "data set \"%s\" is defined twice", name);
    *total_blocks += blocks;
    if (*total_blocks > MAX_DATASET_BLOCKS)
        return spec_fail_key(c, "blocks", "the data sets would have more than %d blocks",
                             MAX_DATASET_BLOCKS);
    struct spec_input in_;
    memset(&in_, 0, sizeof(in_));
    rc = spec_replicas_parse(c, obj, &in_);
    if (rc)
        return rc;
    const struct spec_input *in = &in_;
    HRM_GROW(c->datasets, c->cap_datasets, (size_t)c->ndatasets + 1);
    struct spec_dataset *ds = &c->datasets[c->ndatasets++];
    memset(ds, 0, sizeof(*ds));
    snprintf(ds->name, sizeof(ds->name), "%s", name);
    ds->block_size = size;
    ds->nblocks = (int32_t)blocks;
    ds->nreplicas = in->nreplicas;
    ds->replicas = hrm_calloc((size_t)blocks * (size_t)in->nreplicas, sizeof(int32_t));
    for (int64_t b = 0; b < blocks; b++) {
        int32_t *dst = &ds->replicas[(size_t)b * (size_t)in->nreplicas];
        if (in->kind == SPEC_INPUT_RANDOM)
            spec_pick_nodes(c, rng, in->nreplicas, dst);
        else
            memcpy(dst, in->replicas, (size_t)in->nreplicas * sizeof(int32_t));
    }
    spec_names_add(&c->dataset_names, c->ndatasets - 1);
    return 0;
}

/* ---- jobs and stages ---- */

/* The tasks of the current stage, from obj's "task" template and "tasks" count or list. */
static int parse_stage_tasks(struct spec_ctx *c, const json_t *obj, struct hrm_rng *rng)
{
    struct spec_task tmpl;
    spec_task_defaults(&tmpl);
    int rc = 0;
    const json_t *tv = json_object_get(obj, "task");
    if (tv) {
        size_t mark = spec_push_key(c, "task");
        rc = spec_object(c, tv, spec_task_keys);
        if (!rc)
            rc = spec_task_apply(c, tv, &tmpl, 0);
        spec_pop(c, mark);
    }
    const json_t *list = json_object_get(obj, "tasks");
    if (!rc && json_is_array(list)) {
        size_t mark = spec_push_key(c, "tasks");
        rc = spec_array(c, list, true);
        if (!rc)
            rc = spec_room(c, (int64_t)json_array_size(list));
        for (size_t i = 0; !rc && i < json_array_size(list); i++) {
            size_t m2 = spec_push_index(c, i);
            const json_t *item = json_array_get(list, i);
            struct spec_task t;
            spec_task_inherit(&t, &tmpl);
            rc = spec_object(c, item, spec_task_keys);
            if (!rc)
                rc = spec_task_apply(c, item, &t, 0);
            if (!rc)
                rc = spec_task_validate(c, &t, true);
            if (!rc)
                rc = spec_task_emit(c, &t, (int32_t)i, 0, 0, rng);
            spec_task_fini(&t);
            spec_pop(c, m2);
        }
        spec_pop(c, mark);
    } else if (!rc) {
        int64_t n = 1;
        if (list && !json_is_integer(list))
            rc = spec_fail_key(c, "tasks", "must be a number of tasks or a list of task objects");
        if (!rc)
            rc = spec_int(c, obj, "tasks", 0, 1, SPEC_MAX_TASKS, &n);
        if (!rc)
            rc = spec_room(c, n);
        /* Problems of the template are reported at "task". */
        size_t mark = tv ? spec_push_key(c, "task") : c->plen;
        if (!rc)
            rc = spec_task_validate(c, &tmpl, true);
        for (int64_t i = 0; !rc && i < n; i++)
            rc = spec_task_emit(c, &tmpl, (int32_t)i, 0, 0, rng);
        spec_pop(c, mark);
    }
    spec_task_fini(&tmpl);
    return rc;
}

static int stage_name(struct spec_ctx *c, const json_t *obj, size_t index, char *out)
{
    const char *name = NULL;
    int rc = spec_name(c, obj, "name", 0, &name);
    if (rc)
        return rc;
    if (name)
        snprintf(out, HRM_NAME_MAX, "%s", name);
    else
        snprintf(out, HRM_NAME_MAX, "s%zu", index);
    return 0;
}

static int parse_deps(struct spec_ctx *c, const json_t *obj, const struct spec_names *names,
                      int32_t self, int32_t stage_first, int32_t *deps, int32_t *ndeps)
{
    const json_t *v = json_object_get(obj, "deps");
    *ndeps = 0;
    if (!v)
        return 0;
    size_t mark = spec_push_key(c, "deps");
    int rc = spec_array(c, v, false);
    if (!rc && json_array_size(v) > SPEC_MAX_DEPS)
        rc = spec_fail(c, "more than %d dependencies", SPEC_MAX_DEPS);
    for (size_t i = 0; !rc && i < json_array_size(v); i++) {
        size_t m2 = spec_push_index(c, i);
        const char *name;
        rc = spec_name_value(c, json_array_get(v, i), &name);
        int32_t k = rc ? -1 : spec_names_find(names, name);
        if (!rc && k < 0)
            rc = spec_fail(c, "unknown stage \"%s\"", name);
        else if (!rc && k == self)
            rc = spec_fail(c, "a stage cannot depend on itself");
        else if (!rc && k > self)
            rc = spec_fail(c,
                           "stage \"%s\" comes later: list stages after the stages they "
                           "depend on",
                           name);
        for (int32_t d = 0; !rc && d < *ndeps; d++)
            if (deps[d] == stage_first + k)
                rc = spec_fail(c, "stage \"%s\" is listed twice", name);
        if (!rc)
            deps[(*ndeps)++] = stage_first + k;
        spec_pop(c, m2);
    }
    spec_pop(c, mark);
    return rc;
}

static int parse_stages(struct spec_ctx *c, const json_t *arr, int32_t stage_first,
                        struct hrm_rng *rng)
{
    int rc = spec_array(c, arr, true);
    if (rc)
        return rc;
    size_t n = json_array_size(arr);
    if (n > SPEC_MAX_JOB_STAGES)
        return spec_fail(c, "more than %d stages in one job", SPEC_MAX_JOB_STAGES);
    /* Names first, so that deps can tell "later" from "unknown". */
    char(*names)[HRM_NAME_MAX] = hrm_calloc(n, sizeof(*names));
    struct spec_names set;
    spec_names_init(&set, stage_name_of, names);
    int32_t *deps = hrm_calloc(SPEC_MAX_DEPS, sizeof(*deps));
    for (size_t i = 0; !rc && i < n; i++) {
        size_t mark = spec_push_index(c, i);
        const json_t *s = json_array_get(arr, i);
        rc = spec_object(c, s, stage_keys);
        if (!rc)
            rc = stage_name(c, s, i, names[i]);
        if (!rc && spec_names_find(&set, names[i]) >= 0)
            rc = spec_fail_key(c, "name", "stage \"%s\" is defined twice", names[i]);
        if (!rc)
            spec_names_add(&set, (int32_t)i);
        spec_pop(c, mark);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        size_t mark = spec_push_index(c, i);
        const json_t *s = json_array_get(arr, i);
        int32_t ndeps = 0;
        rc = parse_deps(c, s, &set, (int32_t)i, stage_first, deps, &ndeps);
        if (!rc) {
            int id = spec_stage_add(c, names[i], deps, ndeps);
            rc = id < 0 ? id : 0;
        }
        if (!rc)
            rc = parse_stage_tasks(c, s, rng);
        spec_pop(c, mark);
    }
    spec_names_fini(&set);
    hrm_free(deps);
    hrm_free(names);
    return rc;
}

static int parse_job(struct spec_ctx *c, const json_t *obj, struct hrm_rng *rng)
{
    int rc = spec_object(c, obj, job_keys);
    if (rc)
        return rc;
    const char *name = NULL, *user = "default", *queue = "default";
    int kind = HRM_JOB_BATCH;
    int64_t priority = 0, submit = 0, deadline = 0;
    if ((rc = spec_name(c, obj, "name", SPEC_REQUIRED, &name)) ||
        (rc = spec_choice(c, obj, "kind", 0, job_kinds, &kind)) ||
        (rc = spec_name(c, obj, "user", 0, &user)) ||
        (rc = spec_name(c, obj, "queue", 0, &queue)) ||
        (rc = spec_int(c, obj, "priority", 0, -1000000000, 1000000000, &priority)) ||
        (rc = spec_duration(c, obj, "submit", 0, &submit)) ||
        (rc = spec_duration(c, obj, "deadline", SPEC_POSITIVE, &deadline)))
        return rc;
    int q = hrm_workload_find_queue(c->wl, queue);
    if (q < 0)
        return spec_fail_key(c, "queue", "unknown queue \"%s\"", queue);
    const json_t *stages = json_object_get(obj, "stages");
    bool shortcut = json_object_get(obj, "tasks") || json_object_get(obj, "task");
    if (stages && shortcut)
        return spec_fail(c, "give \"stages\", or \"tasks\"/\"task\" for a one-stage job, "
                            "not both");
    if (!stages && !shortcut)
        return spec_fail(c, "missing key \"stages\" (or \"tasks\"/\"task\" for a one-stage job)");
    struct hrm_job_desc d = {
        .name = name,
        .kind = (enum hrm_job_kind)kind,
        .user = hrm_workload_user(c->wl, user),
        .queue = q,
        .priority = (int32_t)priority,
        .submit_us = submit,
        .deadline_us = deadline,
    };
    rc = spec_job_add(c, &d);
    if (rc < 0)
        return rc;
    if (!stages) {
        rc = spec_stage_add(c, "main", NULL, 0);
        return rc < 0 ? rc : parse_stage_tasks(c, obj, rng);
    }
    size_t mark = spec_push_key(c, "stages");
    rc = parse_stages(c, stages, c->wl->nstages, rng);
    spec_pop(c, mark);
    return rc;
}

/* Tasks a stage-like object (a stage, or a one-stage job) asks for, before building. */
static int64_t stage_tasks(const json_t *obj)
{
    const json_t *n = json_object_get(obj, "tasks");
    if (json_is_array(n))
        return (int64_t)json_array_size(n);
    if (json_is_integer(n) && json_integer_value(n) > 0)
        return json_integer_value(n) < SPEC_MAX_TASKS ? json_integer_value(n) : SPEC_MAX_TASKS;
    return 1;
}

/* Sums the explicit jobs' tasks first, so that too large a workload fails
 * before gigabytes are built. */
static int precount_tasks(struct spec_ctx *c, const json_t *jobs)
{
    int64_t total = 0;
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        const json_t *job = json_array_get(jobs, i);
        const json_t *stages = json_object_get(job, "stages");
        if (!json_is_array(stages))
            total += stage_tasks(job);
        for (size_t k = 0; k < json_array_size(stages); k++)
            total += stage_tasks(json_array_get(stages, k));
        if (total > SPEC_MAX_TASKS) {
            size_t mark = spec_push_key(c, "jobs");
            spec_push_index(c, i);
            int rc = spec_fail(c, "the workload would have more than %d tasks", SPEC_MAX_TASKS);
            spec_pop(c, mark);
            return rc;
        }
    }
    return 0;
}

/* Applies fn to each element of obj[key] (a list), with the path set. */
static int each(struct spec_ctx *c, const json_t *obj, const char *key,
                int (*fn)(struct spec_ctx *, const json_t *, struct hrm_rng *, int64_t *),
                struct hrm_rng *rng, int64_t *acc)
{
    const json_t *arr = json_object_get(obj, key);
    if (!arr)
        return 0;
    size_t mark = spec_push_key(c, key);
    int rc = spec_array(c, arr, false);
    for (size_t i = 0; !rc && i < json_array_size(arr); i++) {
        size_t m2 = spec_push_index(c, i);
        rc = fn(c, json_array_get(arr, i), rng, acc);
        spec_pop(c, m2);
    }
    spec_pop(c, mark);
    return rc;
}

static int job_fn(struct spec_ctx *c, const json_t *obj, struct hrm_rng *rng, int64_t *acc)
{
    (void)acc;
    return parse_job(c, obj, rng);
}

int spec_workload_parse(struct spec_ctx *c, const json_t *obj)
{
    int rc = spec_object(c, obj, workload_keys);
    if (rc)
        return rc;
    c->wl = hrm_workload_new();
    spec_names_init(&c->job_names, job_name_of, c->wl);
    spec_names_init(&c->dataset_names, dataset_name_of, c);
    int64_t max_parallel = 0, fair_m = 0, ds_blocks = 0;
    if ((rc = spec_int(c, obj, "max_parallel", 0, 0, 1000000, &max_parallel)) ||
        (rc = spec_int(c, obj, "fair_m", 0, 0, 1000000, &fair_m)))
        return rc;
    c->wl->max_parallel = (int32_t)max_parallel;
    c->wl->fair_m = (int32_t)fair_m;
    const json_t *v = json_object_get(obj, "queues");
    if (v) {
        size_t mark = spec_push_key(c, "queues");
        rc = parse_queues(c, v);
        spec_pop(c, mark);
        if (rc)
            return rc;
    }
    /* One stream for data placement of data sets and explicit jobs; each
     * generator forks its own, so adding a job does not move another's data. */
    struct hrm_rng data;
    hrm_rng_fork(&c->root, &data);
    if ((rc = precount_tasks(c, json_object_get(obj, "jobs"))) ||
        (rc = each(c, obj, "datasets", parse_dataset, &data, &ds_blocks)) ||
        (rc = each(c, obj, "jobs", job_fn, &data, NULL)))
        return rc;
    v = json_object_get(obj, "generators");
    if (v) {
        size_t mark = spec_push_key(c, "generators");
        rc = spec_generators_parse(c, v);
        spec_pop(c, mark);
        if (rc)
            return rc;
    }
    if (c->wl->njobs == 0)
        return spec_fail(c, "the workload has no job (give \"jobs\" or \"generators\")");
    struct hrm_error e;
    if (hrm_workload_check(c->wl, c->cluster, &e) < 0)
        return spec_fail(c, "%s", e.text);
    return 0;
}
