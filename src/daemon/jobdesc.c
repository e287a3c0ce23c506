/* Job descriptions: validation with field paths, unit parsing shared with specs, normalised JSON. */
#include <stdbool.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/jobdesc.h"
#include "hrm/readfile.h"
#include "hrm/units.h"

#define NAME_MAX_LEN 47 /* HRM_NAME_MAX - 1: names go into the scheduler's model */

/* True when text holds a control character: C0 (including tab and newline), DEL, or a
 * C1 control (U+0080..U+009F, UTF-8 0xC2 0x80..0x9F).  Names are printed in listings;
 * an escape sequence in one would drive the reader's terminal. */
static bool has_control(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch < 0x20 || ch == 0x7f ||
            (ch == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] >= 0x80 &&
             (unsigned char)text[i + 1] <= 0x9f))
            return true;
    }
    return false;
}

static int get_name(const json_t *desc, const char *key, const char *def, const char **out,
                    struct hrm_error *err)
{
    const json_t *v = json_object_get(desc, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        json_string_length(v) > NAME_MAX_LEN)
        return hrm_errorf(err, -HRM_ESPEC, "%s: must be a string of 1 to %d characters", key,
                          NAME_MAX_LEN);
    if (has_control(json_string_value(v), json_string_length(v)))
        return hrm_errorf(err, -HRM_ESPEC, "%s: must not contain control characters", key);
    *out = json_string_value(v);
    return 0;
}

static int parse_amount(const json_t *v, bool cpu, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v) * (cpu ? 1000 : 1);
        return json_integer_value(v) >= 0 && (!cpu || json_integer_value(v) <= 1 << 20) ? 0 : -1;
    }
    if (json_is_real(v) && cpu) {
        double d = json_real_value(v);
        if (!(d >= 0 && d <= 1 << 20))
            return -1;
        *out = (int64_t)(d * 1000 + 0.5);
        return 0;
    }
    if (json_is_string(v))
        return cpu ? hrm_parse_cpu(json_string_value(v), out)
                   : hrm_parse_size(json_string_value(v), out);
    return -1;
}

static json_t *norm_cmd(const json_t *cmd, int g, struct hrm_error *err)
{
    if (json_is_string(cmd)) {
        if (json_string_length(cmd) == 0)
            goto bad;
        if (json_string_length(cmd) > HRM_JOB_MAX_STRING) {
            hrm_errorf(err, -HRM_ESPEC, "tasks[%d].cmd: longer than %d bytes", g,
                       HRM_JOB_MAX_STRING);
            return NULL;
        }
        return json_pack("[s, s, O]", "/bin/sh", "-c", cmd);
    }
    if (!json_is_array(cmd) || json_array_size(cmd) == 0 ||
        json_array_size(cmd) > HRM_JOB_MAX_ARGS)
        goto bad;
    size_t i;
    const json_t *a;
    json_array_foreach(cmd, i, a)
    {
        if (!json_is_string(a) || (i == 0 && json_string_length(a) == 0) ||
            memchr(json_string_value(a), '\0', json_string_length(a)))
            goto bad;
        if (json_string_length(a) > HRM_JOB_MAX_STRING) {
            hrm_errorf(err, -HRM_ESPEC, "tasks[%d].cmd[%zu]: longer than %d bytes", g, i,
                       HRM_JOB_MAX_STRING);
            return NULL;
        }
    }
    return json_deep_copy(cmd);
bad:
    hrm_errorf(err, -HRM_ESPEC,
               "tasks[%d].cmd: must be a non-empty string or array of strings (at most %d)", g,
               HRM_JOB_MAX_ARGS);
    return NULL;
}

/* "gpus": a whole count 0..32 (an integer, or a number with no fraction) or a share of one
 * GPU in (0, 1), in thousandths.  *share gets 1000 per whole GPU, 0 without GPUs. */
static int parse_gpus(const json_t *v, int g, int64_t *count, int32_t *share, struct hrm_error *err)
{
    double d = json_is_integer(v) ? (double)json_integer_value(v)
               : json_is_real(v)  ? json_real_value(v)
                                  : -1;
    if (!json_is_number(v) || !(d >= 0 && d <= 32))
        return hrm_errorf(err, -HRM_ESPEC,
                          "tasks[%d].gpus: expected a whole number of GPUs 0..32 or a share of one "
                          "GPU in (0, 1) like 0.5",
                          g);
    if (d >= 1) {
        if (d != (double)(int64_t)d)
            return hrm_errorf(err, -HRM_ESPEC,
                              "tasks[%d].gpus: %g: more than one GPU must be a whole number; a "
                              "share of one GPU is in (0, 1)",
                              g, d);
        *count = (int64_t)d;
        *share = 1000;
        return 0;
    }
    if (d == 0) {
        *count = 0;
        *share = 0;
        return 0;
    }
    int64_t milli = (int64_t)(d * 1000 + 0.5);
    if (milli < 1 || milli > 999)
        return hrm_errorf(err, -HRM_ESPEC,
                          "tasks[%d].gpus: %g: a share of one GPU must be 0.001 to 0.999", g, d);
    *count = 1;
    *share = (int32_t)milli;
    return 0;
}

/* Variables the agent sets for a task's GPUs (the devices, NVIDIA MPS's limits): a job that
 * set them would escape its share.  HRM_* is refused for every variable. */
static bool gpu_env_name(const char *key)
{
    return strcmp(key, "CUDA_VISIBLE_DEVICES") == 0 || strncmp(key, "CUDA_MPS_", 9) == 0;
}

static json_t *norm_group(const json_t *in, int g, const char *cwd_default, int64_t *ntasks,
                          struct hrm_error *err)
{
    static const char *const known[] = {"cmd",   "cpus", "mem", "gpus",   "gpu_mem",
                                        "count", "env",  "cwd", "output", "time", NULL};
    if (!json_is_object(in)) {
        hrm_errorf(err, -HRM_ESPEC, "tasks[%d]: must be an object", g);
        return NULL;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)in, key, v)
    {
        bool ok = false;
        for (int k = 0; known[k]; k++)
            ok |= strcmp(key, known[k]) == 0;
        if (!ok) {
            hrm_errorf(err, -HRM_ESPEC, "tasks[%d]: unknown field '%s'", g, key);
            return NULL;
        }
    }
    json_t *cmd = norm_cmd(json_object_get(in, "cmd"), g, err);
    if (!cmd)
        return NULL;
    int64_t cpu = 1000, mem = 0, gpus = 0, count = 1, gpu_mem = 0;
    int32_t gpu_share = 0;
    if ((v = json_object_get(in, "cpus")) && (parse_amount(v, true, &cpu) < 0 || cpu <= 0)) {
        hrm_errorf(err, -HRM_ESPEC, "tasks[%d].cpus: expected a positive amount like 2, 0.5 or \"500m\"", g);
        goto fail;
    }
    if ((v = json_object_get(in, "mem")) && parse_amount(v, false, &mem) < 0) {
        hrm_errorf(err, -HRM_ESPEC, "tasks[%d].mem: expected a size like \"256M\" or bytes", g);
        goto fail;
    }
    if ((v = json_object_get(in, "gpus")) && parse_gpus(v, g, &gpus, &gpu_share, err) < 0)
        goto fail;
    if ((v = json_object_get(in, "gpu_mem"))) {
        if (parse_amount(v, false, &gpu_mem) < 0) {
            hrm_errorf(err, -HRM_ESPEC, "tasks[%d].gpu_mem: expected a size like \"4G\" or bytes",
                       g);
            goto fail;
        }
        if (gpus == 0 && gpu_mem > 0) {
            hrm_errorf(err, -HRM_ESPEC,
                       "tasks[%d].gpu_mem: needs gpus (a task without GPUs "
                       "has no GPU memory)",
                       g);
            goto fail;
        }
    }
    if ((v = json_object_get(in, "count")) &&
        (!json_is_integer(v) || (count = json_integer_value(v)) < 1 ||
         count > HRM_JOB_MAX_TASKS)) {
        hrm_errorf(err, -HRM_ESPEC, "tasks[%d].count: expected an integer 1..%d", g,
                   HRM_JOB_MAX_TASKS);
        goto fail;
    }
    json_t *env = json_object();
    if ((v = json_object_get(in, "env"))) {
        if (!json_is_object(v)) {
            hrm_errorf(err, -HRM_ESPEC, "tasks[%d].env: must be an object of strings", g);
            json_decref(env);
            goto fail;
        }
        const json_t *ev;
        json_object_foreach((json_t *)v, key, ev)
        {
            if (!json_is_string(ev) || !*key || strchr(key, '=')) {
                hrm_errorf(err, -HRM_ESPEC, "tasks[%d].env.%s: must be a string (and a name without '=')", g, key);
                json_decref(env);
                goto fail;
            }
            if (strlen(key) > HRM_JOB_MAX_STRING || json_string_length(ev) > HRM_JOB_MAX_STRING) {
                hrm_errorf(err, -HRM_ESPEC, "tasks[%d].env.%.64s: longer than %d bytes", g, key,
                           HRM_JOB_MAX_STRING);
                json_decref(env);
                goto fail;
            }
            /* The agent sets HRM_JOB_ID, HRM_TASK_ID, ...: a job may not shadow them. */
            if (strncmp(key, "HRM_", 4) == 0) {
                hrm_errorf(err, -HRM_ESPEC,
                           "tasks[%d].env.%.64s: names starting with HRM_ are set by hrm", g,
                           key);
                json_decref(env);
                goto fail;
            }
            if (gpu_env_name(key)) {
                hrm_errorf(err, -HRM_ESPEC,
                           "tasks[%d].env.%.64s: set by hrm for the task's GPUs (ask with gpus "
                           "and gpu_mem)",
                           g, key);
                json_decref(env);
                goto fail;
            }
            json_object_set(env, key, (json_t *)ev);
        }
    }
    const char *cwd = cwd_default ? cwd_default : "/";
    if ((v = json_object_get(in, "cwd"))) {
        if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
            json_string_length(v) > HRM_JOB_MAX_STRING) {
            hrm_errorf(err, -HRM_ESPEC, "tasks[%d].cwd: must be an absolute path of at most %d bytes", g, HRM_JOB_MAX_STRING);
            json_decref(env);
            goto fail;
        }
        cwd = json_string_value(v);
    }
    /* output: false sends stdout and stderr to /dev/null (Slurm's -o /dev/null). */
    if ((v = json_object_get(in, "output")) && !json_is_boolean(v)) {
        hrm_errorf(err, -HRM_ESPEC, "tasks[%d].output: expected true or false", g);
        json_decref(env);
        goto fail;
    }
    /* time: how long each task is expected to run, for wait estimates (as Slurm's --time). */
    int64_t time_us = -1;
    const json_t *tv = json_object_get(in, "time");
    if (tv && (!json_is_string(tv) || hrm_parse_duration(json_string_value(tv), &time_us) < 0 ||
               time_us <= 0)) {
        hrm_errorf(err, -HRM_ESPEC, "tasks[%d].time: expected a positive duration like \"90s\" or \"2h\"", g);
        json_decref(env);
        goto fail;
    }
    *ntasks += count;
    json_t *out = json_pack("{s:o, s:I, s:I, s:I, s:I, s:o, s:s}", "cmd", cmd, "cpu",
                            (json_int_t)cpu, "mem", (json_int_t)mem, "gpus", (json_int_t)gpus,
                            "count", (json_int_t)count, "env", env, "cwd", cwd);
    if (v && json_is_false(v))
        json_object_set_new(out, "output", json_false());
    json_object_set_new(out, "gpu_share", json_integer(gpu_share));
    json_object_set_new(out, "gpu_mem", json_integer(gpu_mem));
    if (time_us > 0)
        json_object_set_new(out, "time_us", json_integer(time_us));
    return out;
fail:
    json_decref(cmd);
    return NULL;
}

/* The job's kind: a batch job ends when its tasks have; a stream job is a service whose tasks
 * are restarted until it is cancelled (docs/runtime.md, "Batch and stream jobs"). */
static const char *norm_kind(const json_t *v, struct hrm_error *err)
{
    if (!v)
        return "batch";
    if (json_is_string(v) && (strcmp(json_string_value(v), "batch") == 0 ||
                              strcmp(json_string_value(v), "stream") == 0))
        return json_string_value(v);
    hrm_errorf(err, -HRM_ESPEC, "kind: expected \"batch\" or \"stream\"");
    return NULL;
}

json_t *hrm_jobdesc_normalise(const json_t *desc, const char *cwd_default,
                              struct hrm_error *err)
{
    static const char *const known[] = {"name", "user", "queue", "priority", "kind", "tasks",
                                        NULL};
    if (!json_is_object(desc)) {
        hrm_errorf(err, -HRM_ESPEC, "a job must be a JSON object");
        return NULL;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)desc, key, v)
    {
        bool ok = false;
        for (int k = 0; known[k]; k++)
            ok |= strcmp(key, known[k]) == 0;
        if (!ok) {
            hrm_errorf(err, -HRM_ESPEC, "unknown field '%s' (known: name, user, queue, priority, kind, tasks)", key);
            return NULL;
        }
    }
    const char *name = NULL, *user = NULL, *queue = NULL;
    if (get_name(desc, "name", "job", &name, err) < 0 ||
        get_name(desc, "user", "nobody", &user, err) < 0 ||
        get_name(desc, "queue", "default", &queue, err) < 0)
        return NULL;
    int64_t prio = 0;
    if ((v = json_object_get(desc, "priority"))) {
        if (!json_is_integer(v) || json_integer_value(v) < -1000000 ||
            json_integer_value(v) > 1000000) {
            hrm_errorf(err, -HRM_ESPEC, "priority: expected an integer -1000000..1000000");
            return NULL;
        }
        prio = json_integer_value(v);
    }
    const char *kind = norm_kind(json_object_get(desc, "kind"), err);
    if (!kind)
        return NULL;
    const json_t *tasks = json_object_get(desc, "tasks");
    if (!json_is_array(tasks) || json_array_size(tasks) == 0 ||
        json_array_size(tasks) > HRM_JOB_MAX_GROUPS) {
        hrm_errorf(err, -HRM_ESPEC, "tasks: expected an array of 1 to %d task groups",
                   HRM_JOB_MAX_GROUPS);
        return NULL;
    }
    json_t *groups = json_array();
    int64_t ntasks = 0;
    size_t i;
    json_array_foreach(tasks, i, v)
    {
        json_t *g = norm_group(v, (int)i, cwd_default, &ntasks, err);
        if (!g) {
            json_decref(groups);
            return NULL;
        }
        json_array_append_new(groups, g);
    }
    if (ntasks > HRM_JOB_MAX_TASKS) {
        json_decref(groups);
        hrm_errorf(err, -HRM_ESPEC, "tasks: %lld tasks in all, more than %d", (long long)ntasks,
                   HRM_JOB_MAX_TASKS);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s, s:I, s:s, s:o, s:I}", "name", name, "user", user, "queue",
                     queue, "priority", (json_int_t)prio, "kind", kind, "tasks", groups, "ntasks",
                     (json_int_t)ntasks);
}

json_t *hrm_jobdesc_load(const char *path, struct hrm_error *err)
{
    char *buf;
    size_t len;
    if (hrm_read_regular_file(path, path, HRM_JOB_MAX_FILE, &buf, &len, err) < 0)
        return NULL;
    json_error_t jerr;
    json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    hrm_free(buf);
    if (!j)
        hrm_errorf(err, -HRM_ESPEC, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
    return j;
}
