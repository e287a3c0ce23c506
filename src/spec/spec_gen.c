/* Spec reader, generator part: distributions and seeded expansion of job generators. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "spec/spec_private.h"

static const char *const gen_keys[] = {
    "name",     "count",    "arrival", "start", "kind",     "users",     "queue",
    "priority", "deadline", "stages",  "tasks", "duration", "est_error", "cpu",
    "mem",      "gpus",     "gpu_mem", "disk",  "net",      "input",     "logic", NULL};
static const char *const gen_stage_keys[] = {"name", "deps",  "tasks", "duration", "est_error",
                                             "cpu",  "mem",   "gpus",  "gpu_mem",  "disk",
                                             "net",  "input", "logic", NULL};
static const char *const arrival_keys[] = {"process", "rate", "interval", NULL};
static const char *const processes[] = {"poisson", "fixed", NULL};
static const char *const dist_keys[] = {"dist", "value",  "mean",  "min",
                                        "max",  "stddev", "sigma", NULL};
static const char *const dist_names[] = {"const", "uniform", "exp", "normal", "lognormal", NULL};
static const char *const job_kinds[] = {"batch", "stream", "service", NULL};

#define MAX_DURATION_US 86400e9      /* 1000 days, as for every duration of a spec */
#define MAX_USERS 10000              /* users are looked up linearly by the model */
#define MAX_GEN_STAGES SPEC_MAX_DEPS /* so a stage may depend on all earlier ones */

enum dist_kind { DIST_CONST, DIST_UNIFORM, DIST_EXP, DIST_NORMAL, DIST_LOGNORMAL };
enum dist_unit { UNIT_COUNT, UNIT_DURATION };

/* A distribution of task counts or durations (microseconds); samples are
 * clamped to [lo, hi], which default to the unit's valid range. */
struct dist {
    bool set;
    enum dist_kind kind;
    enum dist_unit unit;
    double a, b; /* const: value; uniform: min, max; exp: mean; normal: mean, stddev;
                    lognormal: mean, sigma */
    double lo, hi;
};

struct gen_stage {
    char name[HRM_NAME_MAX];
    int32_t deps[MAX_GEN_STAGES];
    int32_t ndeps;
    struct dist tasks, duration;
    double est_error; /* sigma of the log of estimate/actual; 0 = exact estimates */
    struct spec_task tmpl;
};

static int unit_value(struct spec_ctx *c, const json_t *v, enum dist_unit unit, double *out)
{
    if (unit == UNIT_COUNT)
        return spec_num_value(c, v, 1, SPEC_MAX_TASKS, out);
    int64_t us = 0;
    int rc = spec_duration_value(c, v, SPEC_POSITIVE, &us);
    *out = (double)us;
    return rc;
}

static int dist_param(struct spec_ctx *c, const json_t *obj, const char *key, bool needed,
                      enum dist_unit unit, double *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return needed ? spec_fail(c, "missing key \"%s\"", key) : 0;
    size_t mark = spec_push_key(c, key);
    int rc;
    if (strcmp(key, "sigma") == 0)
        rc = spec_num_value(c, v, 0, 10, out);
    else if (strcmp(key, "stddev") == 0 && unit == UNIT_COUNT)
        rc = spec_num_value(c, v, 0, SPEC_MAX_TASKS, out);
    else
        rc = unit_value(c, v, unit, out);
    spec_pop(c, mark);
    return rc;
}

static int parse_dist(struct spec_ctx *c, const json_t *v, enum dist_unit unit, struct dist *d)
{
    memset(d, 0, sizeof(*d));
    d->set = true;
    d->unit = unit;
    d->lo = 1;
    d->hi = unit == UNIT_COUNT ? SPEC_MAX_TASKS : MAX_DURATION_US;
    if (!json_is_object(v)) {
        d->kind = DIST_CONST;
        return unit_value(c, v, unit, &d->a);
    }
    int rc = spec_object(c, v, dist_keys);
    int kind = 0;
    if (!rc)
        rc = spec_choice(c, v, "dist", SPEC_REQUIRED, dist_names, &kind);
    if (rc)
        return rc;
    d->kind = (enum dist_kind)kind;
    /* Which keys each distribution reads; any other is a mistake. */
    static const char *const uses[][4] = {
        [DIST_CONST] = {"value", NULL},
        [DIST_UNIFORM] = {"min", "max", NULL},
        [DIST_EXP] = {"mean", "min", "max", NULL},
        [DIST_NORMAL] = {"mean", "stddev", "min", "max"},
        [DIST_LOGNORMAL] = {"mean", "sigma", "min", "max"},
    };
    for (size_t i = 0; dist_keys[i]; i++) {
        const char *k = dist_keys[i];
        bool ok = strcmp(k, "dist") == 0;
        for (int u = 0; u < 4 && uses[kind][u] && !ok; u++)
            ok = strcmp(uses[kind][u], k) == 0;
        if (!ok && json_object_get(v, k))
            return spec_fail_key(c, k, "not used by the \"%s\" distribution", dist_names[kind]);
    }
    switch (d->kind) {
    case DIST_CONST:
        return dist_param(c, v, "value", true, unit, &d->a);
    case DIST_UNIFORM:
        if ((rc = dist_param(c, v, "min", true, unit, &d->a)) ||
            (rc = dist_param(c, v, "max", true, unit, &d->b)))
            return rc;
        if (d->b < d->a)
            return spec_fail_key(c, "max", "must not be below \"min\"");
        return 0;
    case DIST_EXP:
        rc = dist_param(c, v, "mean", true, unit, &d->a);
        break;
    case DIST_NORMAL:
        if (!(rc = dist_param(c, v, "mean", true, unit, &d->a)))
            rc = dist_param(c, v, "stddev", true, unit, &d->b);
        break;
    case DIST_LOGNORMAL:
        if (!(rc = dist_param(c, v, "mean", true, unit, &d->a)))
            rc = dist_param(c, v, "sigma", true, unit, &d->b);
        break;
    }
    if ((rc = rc ? rc : dist_param(c, v, "min", false, unit, &d->lo)) ||
        (rc = dist_param(c, v, "max", false, unit, &d->hi)))
        return rc;
    if (d->hi < d->lo)
        return spec_fail_key(c, "max", "must not be below \"min\"");
    return 0;
}

static double sample(const struct dist *d, struct hrm_rng *rng)
{
    double x = d->a;
    switch (d->kind) {
    case DIST_CONST:
        break;
    case DIST_UNIFORM:
        if (d->unit == UNIT_COUNT) /* every integer of [min, max] equally likely */
            x = floor(d->a + hrm_rng_double(rng) * (floor(d->b) - d->a + 1));
        else
            x = d->a + hrm_rng_double(rng) * (d->b - d->a);
        break;
    case DIST_EXP:
        x = hrm_rng_exp(rng, d->a);
        break;
    case DIST_NORMAL:
        x = hrm_rng_normal(rng, d->a, d->b);
        break;
    case DIST_LOGNORMAL:
        x = hrm_rng_lognormal(rng, d->a, d->b);
        break;
    }
    if (!(x >= d->lo)) /* also catches NaN */
        x = d->lo;
    if (x > d->hi)
        x = d->hi;
    return d->unit == UNIT_COUNT ? floor(x + 0.5) : x;
}

static int dist_key(struct spec_ctx *c, const json_t *obj, const char *key, enum dist_unit unit,
                    struct dist *d)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    size_t mark = spec_push_key(c, key);
    int rc = parse_dist(c, v, unit, d);
    spec_pop(c, mark);
    return rc;
}

/* Task keys of obj (a generator or one of its stages) over base. */
static int parse_stage_keys(struct spec_ctx *c, const json_t *obj, struct gen_stage *st)
{
    int rc;
    if ((rc = spec_task_apply(c, obj, &st->tmpl, SPEC_TASK_NO_DURATION)) ||
        (rc = dist_key(c, obj, "tasks", UNIT_COUNT, &st->tasks)) ||
        (rc = dist_key(c, obj, "duration", UNIT_DURATION, &st->duration)) ||
        (rc = spec_num(c, obj, "est_error", 0, 0, 10, &st->est_error)))
        return rc;
    return spec_task_validate(c, &st->tmpl, false);
}

struct gen {
    const char *prefix;
    int64_t count, start, interval, deadline, priority;
    int process; /* -1: all at start */
    double rate;
    int kind;
    int32_t queue;
    int32_t *users; /* user ids, round robin */
    int32_t nusers;
    struct gen_stage base; /* the generator's own task keys; stages share its inputs */
    struct gen_stage *stages;
    int32_t nstages;
};

static int parse_users(struct spec_ctx *c, const json_t *obj, struct gen *g)
{
    const json_t *v = json_object_get(obj, "users");
    if (!v) {
        g->users = hrm_alloc(sizeof(*g->users));
        g->users[0] = hrm_workload_user(c->wl, "default");
        g->nusers = 1;
        return 0;
    }
    size_t mark = spec_push_key(c, "users");
    int rc = 0;
    if (json_is_array(v)) {
        rc = spec_array(c, v, true);
        if (!rc && json_array_size(v) > MAX_USERS)
            rc = spec_fail(c, "more than %d users", MAX_USERS);
        if (!rc) {
            g->nusers = (int32_t)json_array_size(v);
            g->users = hrm_calloc((size_t)g->nusers, sizeof(*g->users));
        }
        for (int32_t i = 0; !rc && i < g->nusers; i++) {
            size_t m2 = spec_push_index(c, (size_t)i);
            const char *name;
            rc = spec_name_value(c, json_array_get(v, (size_t)i), &name);
            if (!rc)
                g->users[i] = hrm_workload_user(c->wl, name);
            spec_pop(c, m2);
        }
    } else {
        int64_t n = 0;
        rc = spec_int_value(c, v, 1, MAX_USERS, &n);
        if (!rc) {
            g->nusers = (int32_t)n;
            g->users = hrm_calloc((size_t)n, sizeof(*g->users));
        }
        for (int32_t i = 0; !rc && i < g->nusers; i++) {
            char name[32];
            snprintf(name, sizeof(name), "user%d", (int)i + 1);
            g->users[i] = hrm_workload_user(c->wl, name);
        }
    }
    spec_pop(c, mark);
    return rc;
}

static int parse_arrival(struct spec_ctx *c, const json_t *obj, struct gen *g)
{
    const json_t *v = json_object_get(obj, "arrival");
    g->process = -1;
    if (!v)
        return 0;
    size_t mark = spec_push_key(c, "arrival");
    int rc = spec_object(c, v, arrival_keys);
    if (!rc)
        rc = spec_choice(c, v, "process", SPEC_REQUIRED, processes, &g->process);
    if (!rc && g->process == 0) {
        rc = spec_num(c, v, "rate", SPEC_REQUIRED, 1e-6, 1e9, &g->rate);
        if (!rc && json_object_get(v, "interval"))
            rc = spec_fail_key(c, "interval", "not used by \"poisson\" (give \"rate\")");
    } else if (!rc) {
        rc = spec_duration(c, v, "interval", SPEC_REQUIRED, &g->interval);
        if (!rc && json_object_get(v, "rate"))
            rc = spec_fail_key(c, "rate", "not used by \"fixed\" (give \"interval\")");
    }
    spec_pop(c, mark);
    return rc;
}

/* Stage templates: the generator's own keys, overridden by each of "stages". */
static int parse_gen_stages(struct spec_ctx *c, const json_t *obj, struct gen *g)
{
    struct gen_stage *base = &g->base;
    spec_task_defaults(&base->tmpl);
    base->tasks = (struct dist){
        .set = true, .kind = DIST_CONST, .unit = UNIT_COUNT, .a = 1, .lo = 1, .hi = SPEC_MAX_TASKS};
    snprintf(base->name, sizeof(base->name), "main");
    int rc = parse_stage_keys(c, obj, base);
    if (rc)
        return rc;
    const json_t *arr = json_object_get(obj, "stages");
    if (!arr) {
        if (!base->duration.set)
            return spec_fail(c, "missing key \"duration\"");
        g->stages = hrm_alloc(sizeof(*g->stages));
        g->stages[0] = *base;
        spec_task_inherit(&g->stages[0].tmpl, &base->tmpl);
        g->nstages = 1;
        return 0;
    }
    size_t mark = spec_push_key(c, "stages");
    rc = spec_array(c, arr, true);
    if (!rc && json_array_size(arr) > MAX_GEN_STAGES)
        rc = spec_fail(c, "more than %d stages", MAX_GEN_STAGES);
    size_t n = rc ? 0 : json_array_size(arr);
    g->stages = hrm_calloc(n + 1, sizeof(*g->stages));
    for (size_t i = 0; !rc && i < n; i++) {
        size_t m2 = spec_push_index(c, i);
        const json_t *so = json_array_get(arr, i);
        struct gen_stage *st = &g->stages[i];
        *st = *base;
        spec_task_inherit(&st->tmpl, &base->tmpl);
        g->nstages = (int32_t)i + 1;
        const char *name = NULL;
        const json_t *deps = json_object_get(so, "deps");
        if ((rc = spec_object(c, so, gen_stage_keys)) || (rc = spec_name(c, so, "name", 0, &name)))
            goto next;
        if (name)
            snprintf(st->name, sizeof(st->name), "%s", name);
        else
            snprintf(st->name, sizeof(st->name), "s%zu", i);
        for (size_t k = 0; k < i && !rc; k++)
            if (strcmp(g->stages[k].name, st->name) == 0)
                rc = spec_fail_key(c, "name", "stage \"%s\" is defined twice", st->name);
        if (!rc && deps) {
            size_t m3 = spec_push_key(c, "deps");
            rc = spec_array(c, deps, false);
            for (size_t d = 0; !rc && d < json_array_size(deps); d++) {
                size_t m4 = spec_push_index(c, d);
                const char *dn;
                rc = spec_name_value(c, json_array_get(deps, d), &dn);
                int32_t k = 0;
                while (!rc && k < (int32_t)i && strcmp(g->stages[k].name, dn) != 0)
                    k++;
                if (!rc && k == (int32_t)i)
                    rc = spec_fail(c, "\"%s\" is not an earlier stage of this generator", dn);
                for (int32_t e = 0; !rc && e < st->ndeps; e++)
                    if (st->deps[e] == k)
                        rc = spec_fail(c, "stage \"%s\" is listed twice", dn);
                if (!rc)
                    st->deps[st->ndeps++] = k;
                spec_pop(c, m4);
            }
            spec_pop(c, m3);
        }
        if (!rc)
            rc = parse_stage_keys(c, so, st);
        if (!rc && !st->duration.set)
            rc = spec_fail(c, "missing key \"duration\" (here or in the generator)");
    next:
        spec_pop(c, m2);
    }
    spec_pop(c, mark);
    return rc;
}

static void gen_fini(struct gen *g)
{
    for (int32_t i = 0; i < g->nstages; i++)
        spec_task_fini(&g->stages[i].tmpl);
    spec_task_fini(&g->base.tmpl);
    hrm_free(g->stages);
    hrm_free(g->users);
}

static int parse_gen(struct spec_ctx *c, const json_t *obj, struct gen *g)
{
    const char *queue = "default";
    int rc;
    g->kind = HRM_JOB_BATCH;
    if ((rc = spec_object(c, obj, gen_keys)) ||
        (rc = spec_name(c, obj, "name", SPEC_REQUIRED, &g->prefix)) ||
        (rc = spec_int(c, obj, "count", SPEC_REQUIRED, 1, SPEC_MAX_JOBS, &g->count)) ||
        (rc = spec_duration(c, obj, "start", 0, &g->start)) ||
        (rc = spec_choice(c, obj, "kind", 0, job_kinds, &g->kind)) ||
        (rc = spec_name(c, obj, "queue", 0, &queue)) ||
        (rc = spec_int(c, obj, "priority", 0, -1000000000, 1000000000, &g->priority)) ||
        (rc = spec_duration(c, obj, "deadline", SPEC_POSITIVE, &g->deadline)) ||
        (rc = parse_arrival(c, obj, g)) || (rc = parse_users(c, obj, g)))
        return rc;
    if ((g->queue = hrm_workload_find_queue(c->wl, queue)) < 0)
        return spec_fail_key(c, "queue", "unknown queue \"%s\"", queue);
    return parse_gen_stages(c, obj, g);
}

/* A likely upper bound of a count distribution, for the early size check. */
static double dist_bound(const struct dist *d)
{
    switch (d->kind) {
    case DIST_CONST:
        return d->a;
    case DIST_UNIFORM:
        return d->b;
    default:
        return d->hi < SPEC_MAX_TASKS ? d->hi : d->a;
    }
}

static int expand(struct spec_ctx *c, const struct gen *g, struct hrm_rng *rng)
{
    double per_job = 0;
    for (int32_t s = 0; s < g->nstages; s++)
        per_job += dist_bound(&g->stages[s].tasks);
    if ((double)c->wl->ntasks + per_job * (double)g->count > SPEC_MAX_TASKS)
        return spec_fail(c, "would create about %.0f tasks; a workload may have at most %d",
                         per_job * (double)g->count, SPEC_MAX_TASKS);
    double total = (double)c->wl->ntasks + per_job * (double)g->count;
    if (spec_mem_check(c, "count", total))
        return -HRM_ESPEC;
    double t = (double)g->start;
    for (int64_t j = 0; j < g->count; j++) {
        char name[HRM_NAME_MAX + 24];
        snprintf(name, sizeof(name), "%s%lld", g->prefix, (long long)j + 1);
        if (t > MAX_DURATION_US)
            return spec_fail(c, "job %s would arrive after 1000 days", name);
        struct hrm_job_desc d = {
            .name = name,
            .kind = (enum hrm_job_kind)g->kind,
            .user = g->users[j % g->nusers],
            .queue = g->queue,
            .priority = (int32_t)g->priority,
            .submit_us = (int64_t)t,
            .deadline_us = g->deadline,
        };
        int job = spec_job_add(c, &d);
        if (job < 0)
            return job;
        int32_t first = c->wl->jobs[job].stage_first;
        for (int32_t s = 0; s < g->nstages; s++) {
            const struct gen_stage *st = &g->stages[s];
            int32_t deps[MAX_GEN_STAGES];
            for (int32_t k = 0; k < st->ndeps; k++)
                deps[k] = first + st->deps[k];
            int rc = spec_stage_add(c, st->name, deps, st->ndeps);
            if (rc < 0)
                return rc;
            int64_t n = (int64_t)sample(&st->tasks, rng);
            if ((rc = spec_room(c, n)))
                return rc;
            for (int64_t i = 0; i < n; i++) {
                int64_t dur = (int64_t)sample(&st->duration, rng);
                int64_t est = dur;
                if (st->est_error > 0) {
                    double e = dur * hrm_rng_lognormal(rng, 1.0, st->est_error);
                    est = e < 1 ? 1 : e > MAX_DURATION_US ? (int64_t)MAX_DURATION_US : (int64_t)e;
                }
                if ((rc = spec_task_emit(c, &st->tmpl, (int32_t)i, dur, est, rng)))
                    return rc;
            }
        }
        if (g->process == 0)
            t += hrm_rng_exp(rng, 1e6 / g->rate);
        else if (g->process == 1)
            t += (double)g->interval;
    }
    return 0;
}

int spec_generators_parse(struct spec_ctx *c, const json_t *arr)
{
    int rc = spec_array(c, arr, false);
    for (size_t i = 0; !rc && i < json_array_size(arr); i++) {
        size_t mark = spec_push_index(c, i);
        struct gen g;
        memset(&g, 0, sizeof(g));
        /* Each generator its own stream: editing one leaves the others' jobs alone. */
        struct hrm_rng rng;
        hrm_rng_fork(&c->root, &rng);
        rc = parse_gen(c, json_array_get(arr, i), &g);
        if (!rc)
            rc = expand(c, &g, &rng);
        gen_fini(&g);
        spec_pop(c, mark);
    }
    return rc;
}
