/* Spec reader, top level: the spec file, referenced part files, faults and sim settings. */
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/spec.h"
#include "spec/spec_private.h"

static const char *const spec_keys[] = {"cluster", "workload", "faults", "sim", "execution", NULL};
static const char *const fault_keys[] = {"task_fail_prob", "max_attempts", "node_failures", NULL};
static const char *const node_failure_keys[] = {"node", "at", "recover", NULL};
static const char *const sim_keys[] = {"policies", "params", "sample_interval", NULL};

#define MAX_NODE_FAULTS 1000000
#define MAX_POLICIES 1000
#define MAX_PARAMS 10000
#define PARAM_MAX 256 /* longest "policy.key=value" */

/* "dir/ref" for a reference made in a file of directory dir (absolute refs stay). */
static char *join_path(const char *dir, const char *ref)
{
    if (ref[0] == '/' || !dir[0])
        return hrm_strdup(ref);
    size_t n = strlen(dir) + strlen(ref) + 2;
    char *p = hrm_alloc(n);
    snprintf(p, n, "%s/%s", dir, ref);
    return p;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return hrm_strdup("");
    if (slash == path)
        return hrm_strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = hrm_alloc(n + 1);
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

/*
 * Parses spec[key], an object or the path of a file holding one.  Messages
 * about a referenced file name that file, with paths from its own root.
 */
static int parse_part(struct spec_ctx *c, const json_t *spec, const char *key,
                      int (*fn)(struct spec_ctx *, const json_t *))
{
    const json_t *v = json_object_get(spec, key);
    if (!v)
        return spec_fail(c, "missing key \"%s\"", key);
    if (!json_is_string(v)) {
        size_t mark = spec_push_key(c, key);
        int rc = json_is_object(v)
                     ? fn(c, v)
                     : spec_fail(c, "must be an object or the path of a JSON file, not %s",
                                 spec_type_name(v));
        spec_pop(c, mark);
        return rc;
    }
    const char *ref = json_string_value(v);
    if (!ref[0] || strlen(ref) > 4096)
        return spec_fail_key(c, key, "must be an object or the path of a JSON file");
    char *file = join_path(c->dir, ref);
    struct hrm_error e;
    json_t *root = spec_read_file(file, file, &e);
    int rc;
    if (!root) {
        /* A missing file is best explained where it is referenced. */
        rc = spec_fail_key(c, key, "%s", e.text);
    } else {
        const char *saved_file = c->file;
        char saved_path[SPEC_PATH_MAX];
        size_t saved_len = c->plen;
        memcpy(saved_path, c->path, sizeof(saved_path));
        c->file = file;
        spec_pop(c, 0);
        rc = fn(c, root);
        c->file = saved_file;
        memcpy(c->path, saved_path, sizeof(saved_path));
        c->plen = saved_len;
        json_decref(root);
    }
    hrm_free(file);
    return rc;
}

static int parse_faults(struct spec_ctx *c, const json_t *obj, struct hrm_faults *f)
{
    int rc;
    int64_t attempts = 4;
    if ((rc = spec_object(c, obj, fault_keys)) ||
        (rc = spec_num(c, obj, "task_fail_prob", 0, 0, 0.99, &f->task_fail_prob)) ||
        (rc = spec_int(c, obj, "max_attempts", 0, 1, 1000, &attempts)))
        return rc;
    f->max_attempts = (int32_t)attempts;
    const json_t *arr = json_object_get(obj, "node_failures");
    if (!arr)
        return 0;
    size_t mark = spec_push_key(c, "node_failures");
    rc = spec_array(c, arr, false);
    size_t n = rc ? 0 : json_array_size(arr);
    if (n > MAX_NODE_FAULTS)
        rc = spec_fail(c, "more than %d node failures", MAX_NODE_FAULTS);
    if (!rc && n > 0)
        f->node_faults = hrm_calloc(n, sizeof(*f->node_faults));
    for (size_t i = 0; !rc && i < n; i++) {
        size_t m2 = spec_push_index(c, i);
        const json_t *o = json_array_get(arr, i);
        struct hrm_node_fault *nf = &f->node_faults[i];
        const char *node = NULL;
        if ((rc = spec_object(c, o, node_failure_keys)) ||
            (rc = spec_name(c, o, "node", SPEC_REQUIRED, &node)) ||
            (rc = spec_duration(c, o, "at", SPEC_REQUIRED, &nf->at_us)) ||
            (rc = spec_duration(c, o, "recover", 0, &nf->recover_us)))
            goto next;
        if ((nf->node = spec_names_find(&c->node_names, node)) < 0)
            rc = spec_fail_key(c, "node", "unknown node \"%s\"", node);
        else if (json_object_get(o, "recover") && nf->recover_us <= nf->at_us)
            rc = spec_fail_key(c, "recover", "must be later than \"at\"");
        else
            f->nnode_faults = (int32_t)i + 1;
    next:
        spec_pop(c, m2);
    }
    spec_pop(c, mark);
    return rc;
}

static bool word_ok(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= ' ' || ch == 0x7f || ch == '=' || ch == '"')
            return false;
    }
    return true;
}

/* "policy.key=value": a dotted key, then a value, all printable. */
static int add_param(struct spec_ctx *c, struct hrm_spec_sim *sim, const char *key,
                     const char *value)
{
    const char *dot = strchr(key, '.');
    if (!dot || dot == key || !word_ok(key, strlen(key)) || !dot[1])
        return spec_fail(c, "parameter names are \"policy.key\", like \"gsd.delay1\"");
    if (!value[0] || strlen(key) + strlen(value) + 2 > PARAM_MAX)
        return spec_fail(c, "parameter value must be non-empty and short");
    for (const char *p = value; *p; p++)
        if ((unsigned char)*p < ' ')
            return spec_fail(c, "parameter value has a control character");
    size_t n = strlen(key) + strlen(value) + 2;
    char *s = hrm_alloc(n);
    snprintf(s, n, "%s=%s", key, value);
    sim->policy_params[sim->nparams++] = s;
    return 0;
}

static int parse_params(struct spec_ctx *c, const json_t *v, struct hrm_spec_sim *sim)
{
    size_t n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
    if (!json_is_object(v) && !json_is_array(v))
        return spec_fail(c, "must be an object {\"policy.key\": value} or a list of "
                            "\"policy.key=value\" strings");
    if (n > MAX_PARAMS)
        return spec_fail(c, "more than %d parameters", MAX_PARAMS);
    sim->policy_params = hrm_calloc(n ? n : 1, sizeof(char *));
    int rc = 0;
    if (json_is_array(v)) {
        for (size_t i = 0; !rc && i < n; i++) {
            size_t mark = spec_push_index(c, i);
            const json_t *s = json_array_get(v, i);
            const char *eq = json_is_string(s) ? strchr(json_string_value(s), '=') : NULL;
            if (!eq) {
                rc = spec_fail(c, "must be a \"policy.key=value\" string");
            } else {
                const char *str = json_string_value(s);
                char key[PARAM_MAX];
                snprintf(key, sizeof(key), "%.*s", (int)(eq - str), str);
                rc = add_param(c, sim, key, eq + 1);
            }
            spec_pop(c, mark);
        }
        return rc;
    }
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        if (strcmp(key, "comment") == 0)
            continue;
        size_t mark = spec_push_key(c, key);
        char buf[64];
        const char *text = buf;
        if (json_is_integer(val))
            snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(val));
        else if (json_is_real(val))
            snprintf(buf, sizeof(buf), "%.17g", json_real_value(val));
        else if (json_is_boolean(val))
            text = json_is_true(val) ? "true" : "false";
        else if (json_is_string(val))
            text = json_string_value(val);
        else
            rc = spec_fail(c, "must be a number, a string or a boolean");
        if (!rc)
            rc = add_param(c, sim, key, text);
        spec_pop(c, mark);
        if (rc)
            break;
    }
    return rc;
}

static int parse_sim(struct spec_ctx *c, const json_t *obj, struct hrm_spec_sim *sim)
{
    int rc;
    if ((rc = spec_object(c, obj, sim_keys)) ||
        (rc = spec_duration(c, obj, "sample_interval", SPEC_POSITIVE, &sim->sample_interval_us)))
        return rc;
    const json_t *v = json_object_get(obj, "policies");
    if (v) {
        size_t mark = spec_push_key(c, "policies");
        rc = spec_array(c, v, false);
        size_t n = rc ? 0 : json_array_size(v);
        if (n > MAX_POLICIES)
            rc = spec_fail(c, "more than %d policies", MAX_POLICIES);
        if (!rc)
            sim->policies = hrm_calloc(n ? n : 1, sizeof(char *));
        /* Names are checked against the registry by whoever runs them. */
        for (size_t i = 0; !rc && i < n; i++) {
            size_t m2 = spec_push_index(c, i);
            const char *name;
            rc = spec_name_value(c, json_array_get(v, i), &name);
            if (!rc)
                sim->policies[sim->npolicies++] = hrm_strdup(name);
            spec_pop(c, m2);
        }
        spec_pop(c, mark);
        if (rc)
            return rc;
    }
    v = json_object_get(obj, "params");
    if (v) {
        size_t mark = spec_push_key(c, "params");
        rc = parse_params(c, v, sim);
        spec_pop(c, mark);
    }
    return rc;
}

static int parse_spec(struct spec_ctx *c, const json_t *root, struct hrm_spec *spec)
{
    if (!json_is_object(root))
        return spec_fail(c,
                         "a spec must be an object {\"cluster\": ..., \"workload\": ...}, "
                         "not %s",
                         spec_type_name(root));
    if (!json_object_get(root, "cluster") && !json_object_get(root, "workload")) {
        const char *what = json_object_get(root, "nodes")  ? "a cluster"
                           : json_object_get(root, "jobs") ? "a workload"
                                                           : NULL;
        if (what)
            return spec_fail(c,
                             "this looks like %s file; a spec is {\"cluster\": ..., "
                             "\"workload\": ...} and may name such files",
                             what);
    }
    int rc = spec_object(c, root, spec_keys);
    if (!rc)
        rc = parse_part(c, root, "cluster", spec_cluster_parse);
    if (!rc)
        rc = parse_part(c, root, "workload", spec_workload_parse);
    spec->cluster = c->cluster;
    spec->wl = c->wl;
    if (rc)
        return rc;
    const json_t *v = json_object_get(root, "faults");
    if (v) {
        size_t mark = spec_push_key(c, "faults");
        rc = parse_faults(c, v, &spec->faults);
        spec_pop(c, mark);
        if (rc)
            return rc;
    }
    v = json_object_get(root, "sim");
    if (v) {
        size_t mark = spec_push_key(c, "sim");
        rc = parse_sim(c, v, &spec->sim);
        spec_pop(c, mark);
        if (rc)
            return rc;
    }
    v = json_object_get(root, "execution");
    if (v) {
        size_t mark = spec_push_key(c, "execution");
        rc = spec_execution_parse(c, v, &spec->execution);
        /* A task runs in one execution model: its GPU phases or the fluid cpu share. */
        if (!rc && spec->execution.fluid && spec->wl->ngpu_phases > 0)
            rc = spec_fail_key(c, "model",
                               "\"fluid\" cannot run tasks with \"gpu_phases\" (the HRM "
                               "GPU phase model); use \"profiled\"");
        spec_pop(c, mark);
    }
    return rc;
}

static struct hrm_spec *load(json_t *root, const char *path, uint64_t seed, double max_mem,
                             struct hrm_error *err)
{
    struct hrm_spec *spec = hrm_calloc(1, sizeof(*spec));
    spec->path = hrm_strdup(path);
    spec->faults.max_attempts = 4;
    spec->sim.sample_interval_us = 1000000;
    spec->execution.contention = 0.05;
    spec->execution.usage_interval_us = 1000000;
    char *dir = dir_of(path);
    struct spec_ctx c = {.file = path, .dir = dir, .err = err, .mem_budget = spec_mem_budget()};
    if (max_mem > 0 && max_mem < c.mem_budget)
        c.mem_budget = max_mem;
    hrm_rng_seed(&c.root, seed);
    int rc = parse_spec(&c, root, spec);
    spec_names_fini(&c.node_names);
    spec_names_fini(&c.job_names);
    spec_names_fini(&c.rack_names);
    spec_names_fini(&c.dataset_names);
    for (int32_t i = 0; i < c.ndatasets; i++)
        hrm_free(c.datasets[i].replicas);
    hrm_free(c.datasets);
    hrm_free(c.shapes);
    hrm_free(dir);
    if (rc) {
        /* parse_spec stored whatever it had built in spec: one place frees it. */
        hrm_spec_free(spec);
        return NULL;
    }
    return spec;
}

struct hrm_spec *hrm_spec_load(const char *path, uint64_t seed, struct hrm_error *err)
{
    return hrm_spec_load_bounded(path, seed, 0, err);
}

struct hrm_spec *hrm_spec_load_bounded(const char *path, uint64_t seed, int64_t max_mem,
                                       struct hrm_error *err)
{
    if (!path)
        path = "";
    json_t *root = spec_read_file(path, path, err);
    if (!root)
        return NULL;
    struct hrm_spec *spec = load(root, path, seed, (double)max_mem, err);
    json_decref(root);
    return spec;
}

struct hrm_spec *hrm_spec_load_string(const char *text, const char *path, uint64_t seed,
                                      struct hrm_error *err)
{
    if (!path)
        path = "<string>";
    if (!text) {
        hrm_errorf(err, -HRM_ESPEC, "%s: no text", path);
        return NULL;
    }
    json_t *root = spec_parse_text(text, strlen(text), path, err);
    if (!root)
        return NULL;
    struct hrm_spec *spec = load(root, path, seed, 0, err);
    json_decref(root);
    return spec;
}

void hrm_spec_free(struct hrm_spec *spec)
{
    if (!spec)
        return;
    hrm_cluster_free(spec->cluster);
    hrm_workload_free(spec->wl);
    hrm_free(spec->faults.node_faults);
    for (int32_t i = 0; i < spec->sim.npolicies; i++)
        hrm_free(spec->sim.policies[i]);
    hrm_free(spec->sim.policies);
    for (int32_t i = 0; i < spec->sim.nparams; i++)
        hrm_free(spec->sim.policy_params[i]);
    hrm_free(spec->sim.policy_params);
    hrm_free(spec->path);
    hrm_free(spec);
}
