/* Spec reader, execution part: the simulator's node execution model (P2). */
#include <stdio.h>
#include <string.h>

#include "hrm/spec.h"
#include "spec/spec_private.h"

static const char *const exec_keys[] = {
    "model", "contention", "usage_interval", "background", "preempt", "task_overhead", NULL};
static const char *const bg_keys[] = {"nodes",   "cpu",     "cpu_min", "cpu_max", "mem",
                                      "mem_min", "mem_max", "busy",    "idle",    NULL};
static const char *const models[] = {"profiled", "fluid", NULL};
/* In enum hrm_preempt_cost's order. */
static const char *const preempt_costs[] = {"restart", "keep_input", "resume", NULL};

#define MAX_USAGE_INTERVAL 3600000000ll /* a usage sample covers at most an hour */
#define MAX_TASK_OVERHEAD 60000000ll    /* a process start of a minute is no longer a start */

/* "x" as a fixed value, or "x_min" and "x_max" as a uniform range. */
static int range(struct spec_ctx *c, const json_t *obj, const char *key, bool cpu, int64_t *lo,
                 int64_t *hi)
{
    char kmin[16], kmax[16];
    snprintf(kmin, sizeof(kmin), "%s_min", key);
    snprintf(kmax, sizeof(kmax), "%s_max", key);
    bool one = json_object_get(obj, key) != NULL;
    if (one && (json_object_get(obj, kmin) || json_object_get(obj, kmax)))
        return spec_fail_key(c, key, "give \"%s\" or \"%s\"/\"%s\", not both", key, kmin, kmax);
    int rc;
    if (one) {
        rc = cpu ? spec_cpu(c, obj, key, SPEC_POSITIVE, lo) : spec_size(c, obj, key, 0, lo);
        *hi = *lo;
        return rc;
    }
    if ((rc = cpu ? spec_cpu(c, obj, kmin, SPEC_POSITIVE, lo) : spec_size(c, obj, kmin, 0, lo)))
        return rc;
    *hi = *lo;
    if ((rc = cpu ? spec_cpu(c, obj, kmax, SPEC_POSITIVE, hi) : spec_size(c, obj, kmax, 0, hi)))
        return rc;
    if (*hi < *lo)
        return spec_fail_key(c, kmax, "must be at least \"%s\"", kmin);
    return 0;
}

static int parse_background(struct spec_ctx *c, const json_t *obj, struct hrm_background *b)
{
    int rc;
    b->nodes = 1;
    if ((rc = spec_object(c, obj, bg_keys)) ||
        (rc = spec_num(c, obj, "nodes", 0, 0, 1, &b->nodes)) ||
        (rc = range(c, obj, "cpu", true, &b->cpu_min, &b->cpu_max)) ||
        (rc = range(c, obj, "mem", false, &b->mem_min, &b->mem_max)) ||
        (rc = spec_duration(c, obj, "busy", SPEC_REQUIRED | SPEC_POSITIVE, &b->busy_us)) ||
        (rc = spec_duration(c, obj, "idle", SPEC_REQUIRED | SPEC_POSITIVE, &b->idle_us)))
        return rc;
    if (b->cpu_max == 0 && b->mem_max == 0)
        return spec_fail(c, "foreign load needs \"cpu\" or \"mem\"");
    return 0;
}

int spec_execution_parse(struct spec_ctx *c, const json_t *obj, struct hrm_execution *x)
{
    int rc, model = 0, preempt = 0;
    if ((rc = spec_object(c, obj, exec_keys)) ||
        (rc = spec_choice(c, obj, "model", 0, models, &model)) ||
        (rc = spec_choice(c, obj, "preempt", 0, preempt_costs, &preempt)) ||
        (rc = spec_num(c, obj, "contention", 0, 0, 10, &x->contention)) ||
        (rc = spec_duration(c, obj, "usage_interval", 0, &x->usage_interval_us)) ||
        (rc = spec_duration(c, obj, "task_overhead", 0, &x->task_overhead_us)))
        return rc;
    x->fluid = model == 1;
    x->preempt = (enum hrm_preempt_cost)preempt;
    if (x->usage_interval_us > MAX_USAGE_INTERVAL)
        return spec_fail_key(c, "usage_interval", "must be at most 1h");
    if (x->task_overhead_us > MAX_TASK_OVERHEAD)
        return spec_fail_key(c, "task_overhead", "must be at most 1m");
    const json_t *bg = json_object_get(obj, "background");
    if (bg) {
        size_t mark = spec_push_key(c, "background");
        rc = parse_background(c, bg, &x->background);
        spec_pop(c, mark);
    }
    return rc;
}
