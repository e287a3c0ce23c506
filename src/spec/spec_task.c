/* Spec reader, task part: task templates (request, duration, input, profile) and emission. */
#include <inttypes.h>
#include <string.h>

#include "hrm/alloc.h"
#include "spec/spec_private.h"

const char *const spec_task_keys[] = {"cpu",   "mem",     "gpus",     "gpu_mem",
                                      "disk",  "net",     "duration", "est_duration",
                                      "input", "profile", "logic",    "gpu_phases",
                                      "memory", NULL};
static const char *const input_keys[] = {"size", "blocks", "replicas", "dataset", "block", NULL};
static const char *const gpu_phase_keys[] = {"cpu", "gpu", "count", NULL};
static const char *const memory_keys[] = {"working_set", "spill_passes", NULL};
static const char *const phase_keys[] = {"duration", "cpu",  "mem", "gpus",
                                         "gpu_mem",  "disk", "net", NULL};

#define MAX_INPUT_BLOCKS 100000 /* blocks one task reads */
#define MAX_PHASES 10000        /* phases of one task's profile */
#define DEFAULT_REPLICAS 3

void spec_task_defaults(struct spec_task *t)
{
    memset(t, 0, sizeof(*t));
    t->req.v[HRM_DIM_CPU] = 1000;
    t->req.v[HRM_DIM_MEM] = (int64_t)1 << 30;
}

void spec_task_inherit(struct spec_task *t, const struct spec_task *base)
{
    *t = *base;
    t->own_inputs = false;
    t->own_phases = false;
}

void spec_task_fini(struct spec_task *t)
{
    if (t->own_inputs)
        hrm_free(t->inputs);
    if (t->own_phases)
        hrm_free(t->phases);
    t->inputs = NULL;
    t->phases = NULL;
    t->ninputs = t->nphases = 0;
}

/* A task's "gpus" given as a share of one GPU (0.001..0.999): one GPU, the share in
 * thousandths (struct hrm_task's gpu_milli); a whole count resets the share. */
static int parse_gpu_share(struct spec_ctx *c, const json_t *obj, int64_t *gpus, int32_t *milli)
{
    const json_t *v = json_object_get(obj, "gpus");
    if (!v)
        return 0;
    if (!json_is_real(v)) {
        *milli = 0;
        return 0; /* a whole count: spec_int checks it */
    }
    size_t mark = spec_push_key(c, "gpus");
    double x;
    int rc = spec_num_value(c, v, 0.001, 0.999, &x);
    spec_pop(c, mark);
    if (rc)
        return rc;
    *gpus = 1;
    *milli = (int32_t)(x * 1000 + 0.5);
    return 0;
}

/* Resource keys shared by tasks and profile phases; sets bit d of *set for each present.
 * milli: a task's GPU share (a fractional "gpus"); NULL for phases, whose gpus are whole. */
static int parse_resources(struct spec_ctx *c, const json_t *obj, struct hrm_res *r, unsigned *set,
                           int32_t *milli)
{
    int64_t gpus = r->v[HRM_DIM_GPU];
    double net = (double)r->v[HRM_DIM_NET];
    int rc;
    bool share = milli && json_is_real(json_object_get(obj, "gpus"));
    if (milli && (rc = parse_gpu_share(c, obj, &gpus, milli)))
        return rc;
    if ((rc = spec_cpu(c, obj, "cpu", SPEC_POSITIVE, &r->v[HRM_DIM_CPU])) ||
        (rc = spec_size(c, obj, "mem", SPEC_POSITIVE, &r->v[HRM_DIM_MEM])) ||
        (!share && (rc = spec_int(c, obj, "gpus", 0, 0, HRM_MAX_GPUS_PER_NODE, &gpus))) ||
        (rc = spec_size(c, obj, "gpu_mem", 0, &r->v[HRM_DIM_GPU_MEM])) ||
        (rc = spec_size(c, obj, "disk", 0, &r->v[HRM_DIM_DISK])) ||
        (rc = spec_rate(c, obj, "net", 0, &net)))
        return rc;
    r->v[HRM_DIM_GPU] = gpus;
    r->v[HRM_DIM_NET] = (int64_t)net;
    for (int d = 0; d < HRM_NDIM; d++)
        if (json_object_get(obj, hrm_dim_info((enum hrm_dim)d)->name))
            *set |= 1u << d;
    return 0;
}

static int node_id(struct spec_ctx *c, const json_t *v, int32_t *out)
{
    const char *name;
    int rc = spec_name_value(c, v, &name);
    if (rc)
        return rc;
    int32_t id = spec_names_find(&c->node_names, name);
    if (id < 0)
        return spec_fail(c, "unknown node \"%s\"", name);
    *out = id;
    return 0;
}

/* "replicas": a count (placed at random) or a list of node names. */
int spec_replicas_parse(struct spec_ctx *c, const json_t *obj, struct spec_input *in)
{
    int32_t nnodes = c->cluster->nnodes;
    int32_t most = nnodes < HRM_MAX_REPLICAS ? nnodes : HRM_MAX_REPLICAS;
    const json_t *v = json_object_get(obj, "replicas");
    in->kind = SPEC_INPUT_RANDOM;
    in->nreplicas = nnodes < DEFAULT_REPLICAS ? nnodes : DEFAULT_REPLICAS;
    if (!v)
        return 0;
    size_t mark = spec_push_key(c, "replicas");
    int rc = 0;
    if (json_is_array(v)) {
        in->kind = SPEC_INPUT_NODES;
        size_t n = json_array_size(v);
        if (n < 1 || n > HRM_MAX_REPLICAS)
            rc = spec_fail(c, "must list 1..%d nodes", HRM_MAX_REPLICAS);
        for (size_t i = 0; !rc && i < n; i++) {
            size_t m2 = spec_push_index(c, i);
            rc = node_id(c, json_array_get(v, i), &in->replicas[i]);
            for (size_t k = 0; !rc && k < i; k++)
                if (in->replicas[k] == in->replicas[i])
                    rc = spec_fail(c, "node listed twice");
            spec_pop(c, m2);
        }
        in->nreplicas = (int32_t)n;
    } else {
        int64_t n = 0;
        rc = spec_int_value(c, v, 1, most, &n);
        in->nreplicas = (int32_t)n;
    }
    spec_pop(c, mark);
    return rc;
}

static int parse_input_item(struct spec_ctx *c, const json_t *obj, struct spec_input *in)
{
    int rc = spec_object(c, obj, input_keys);
    if (rc)
        return rc;
    memset(in, 0, sizeof(*in));
    const json_t *ds = json_object_get(obj, "dataset");
    if (ds) {
        static const char *const other[] = {"size", "blocks", "replicas", NULL};
        for (int i = 0; other[i]; i++)
            if (json_object_get(obj, other[i]))
                return spec_fail_key(c, other[i],
                                     "not allowed with \"dataset\" (the data set "
                                     "says it)");
        const char *name;
        size_t mark = spec_push_key(c, "dataset");
        rc = spec_name_value(c, ds, &name);
        if (!rc && (in->dataset = spec_names_find(&c->dataset_names, name)) < 0)
            rc = spec_fail(c, "unknown data set \"%s\"", name);
        spec_pop(c, mark);
        if (rc)
            return rc;
        in->kind = SPEC_INPUT_DATASET;
        in->block = -1;
        const json_t *b = json_object_get(obj, "block");
        if (!b)
            return 0;
        mark = spec_push_key(c, "block");
        int32_t nb = c->datasets[in->dataset].nblocks;
        if (json_is_string(b) && strcmp(json_string_value(b), "task") == 0) {
            in->block = -1;
        } else if (json_is_string(b) && strcmp(json_string_value(b), "all") == 0) {
            in->block = -2;
        } else if (json_is_integer(b)) {
            int64_t k = 0;
            rc = spec_int_value(c, b, 0, nb - 1, &k);
            in->block = (int32_t)k;
        } else {
            rc = spec_fail(c, "must be a block index, \"task\" or \"all\"");
        }
        spec_pop(c, mark);
        return rc;
    }
    if (json_object_get(obj, "block"))
        return spec_fail_key(c, "block", "only allowed with \"dataset\"");
    int64_t blocks = 1;
    if ((rc = spec_size(c, obj, "size", SPEC_REQUIRED | SPEC_POSITIVE, &in->size)) ||
        (rc = spec_int(c, obj, "blocks", 0, 1, MAX_INPUT_BLOCKS, &blocks)))
        return rc;
    in->nblocks = (int32_t)blocks;
    return spec_replicas_parse(c, obj, in);
}

static int parse_input(struct spec_ctx *c, const json_t *v, struct spec_task *t)
{
    /* A single object is shorthand for a list of one. */
    bool single = json_is_object(v);
    int rc = single ? 0 : spec_array(c, v, false);
    if (rc)
        return rc;
    size_t n = single ? 1 : json_array_size(v);
    if (n > MAX_INPUT_BLOCKS)
        return spec_fail(c, "more than %d input items", MAX_INPUT_BLOCKS);
    struct spec_input *in = hrm_calloc(n, sizeof(*in));
    int64_t blocks = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        size_t mark = single ? c->plen : spec_push_index(c, i);
        rc = parse_input_item(c, single ? v : json_array_get(v, i), &in[i]);
        if (!rc) {
            const struct spec_input *x = &in[i];
            blocks += x->kind == SPEC_INPUT_DATASET
                          ? (x->block == -2 ? c->datasets[x->dataset].nblocks : 1)
                          : x->nblocks;
            if (blocks > MAX_INPUT_BLOCKS)
                rc = spec_fail(c, "a task may read at most %d blocks", MAX_INPUT_BLOCKS);
        }
        spec_pop(c, mark);
    }
    if (rc) {
        hrm_free(in);
        return rc;
    }
    if (t->own_inputs)
        hrm_free(t->inputs);
    t->inputs = in;
    t->ninputs = (int32_t)n;
    t->own_inputs = true;
    return 0;
}

static int parse_profile(struct spec_ctx *c, const json_t *v, struct spec_task *t)
{
    int rc = spec_array(c, v, true);
    if (rc)
        return rc;
    size_t n = json_array_size(v);
    if (n > MAX_PHASES)
        return spec_fail(c, "more than %d phases", MAX_PHASES);
    struct spec_phase *ph = hrm_calloc(n, sizeof(*ph));
    for (size_t i = 0; !rc && i < n; i++) {
        size_t mark = spec_push_index(c, i);
        const json_t *obj = json_array_get(v, i);
        rc = spec_object(c, obj, phase_keys);
        if (!rc)
            rc = spec_duration(c, obj, "duration", SPEC_REQUIRED | SPEC_POSITIVE,
                               &ph[i].duration_us);
        if (!rc)
            rc = parse_resources(c, obj, &ph[i].demand, &ph[i].set, NULL);
        spec_pop(c, mark);
    }
    if (rc) {
        hrm_free(ph);
        return rc;
    }
    if (t->own_phases)
        hrm_free(t->phases);
    t->phases = ph;
    t->nphases = (int32_t)n;
    t->own_phases = true;
    return 0;
}

/* "gpu_phases": {"cpu": D, "gpu": D, "count": N} (P0 GPU phase model). */
static int parse_gpu_phases(struct spec_ctx *c, const json_t *v, struct spec_task *t)
{
    struct hrm_gpu_phases gp = {0};
    int64_t count = 0;
    int rc = spec_object(c, v, gpu_phase_keys);
    if (!rc)
        rc = spec_duration(c, v, "cpu", SPEC_REQUIRED, &gp.cpu_us);
    if (!rc)
        rc = spec_duration(c, v, "gpu", SPEC_REQUIRED | SPEC_POSITIVE, &gp.gpu_us);
    if (!rc)
        rc = spec_int(c, v, "count", SPEC_REQUIRED, 1, 10000000, &count);
    if (rc)
        return rc;
    gp.count = (int32_t)count;
    t->gpu_phases = gp;
    return 0;
}

/* "memory": {"working_set": SIZE, "spill_passes": N} (P3 memory model; default 2 passes: each
 * spilled byte written and read back once). */
static int parse_memory(struct spec_ctx *c, const json_t *v, struct spec_task *t)
{
    struct hrm_task_memory m = {.spill_passes = 2};
    int64_t passes = m.spill_passes;
    if (!json_is_object(v)) /* most likely the request, written "memory" for "mem" */
        return spec_fail(c, "must be an object {\"working_set\": size, \"spill_passes\": n}, "
                            "not %s (the memory a task asks for is \"mem\")",
                         spec_type_name(v));
    int rc = spec_object(c, v, memory_keys);
    if (!rc)
        rc = spec_size(c, v, "working_set", SPEC_REQUIRED | SPEC_POSITIVE, &m.working_set);
    if (!rc)
        rc = spec_int(c, v, "spill_passes", 0, 0, 1000, &passes);
    if (rc)
        return rc;
    m.spill_passes = (int32_t)passes;
    t->memory = m;
    return 0;
}

int spec_task_apply(struct spec_ctx *c, const json_t *obj, struct spec_task *t, unsigned flags)
{
    unsigned set = 0;
    int rc;
    if ((rc = parse_resources(c, obj, &t->req, &set, &t->gpu_milli)))
        return rc;
    if (!(flags & SPEC_TASK_NO_DURATION) &&
        ((rc = spec_duration(c, obj, "duration", SPEC_POSITIVE, &t->duration_us)) ||
         (rc = spec_duration(c, obj, "est_duration", SPEC_POSITIVE, &t->est_duration_us))))
        return rc;
    const char *logic = NULL;
    if ((rc = spec_name(c, obj, "logic", 0, &logic)))
        return rc;
    if (logic)
        t->logic = hrm_workload_logic_id(logic);
    const json_t *v = json_object_get(obj, "input");
    if (v) {
        size_t mark = spec_push_key(c, "input");
        rc = parse_input(c, v, t);
        spec_pop(c, mark);
        if (rc)
            return rc;
    }
    v = json_object_get(obj, "profile");
    if (v) {
        size_t mark = spec_push_key(c, "profile");
        rc = parse_profile(c, v, t);
        spec_pop(c, mark);
    }
    v = json_object_get(obj, "gpu_phases");
    if (!rc && v) {
        size_t mark = spec_push_key(c, "gpu_phases");
        rc = parse_gpu_phases(c, v, t);
        spec_pop(c, mark);
    }
    v = json_object_get(obj, "memory");
    if (!rc && v) {
        size_t mark = spec_push_key(c, "memory");
        rc = parse_memory(c, v, t);
        spec_pop(c, mark);
    }
    return rc;
}

/* A GPU phase model sets the duration; it needs one GPU and no profile. */
static int validate_gpu_phases(struct spec_ctx *c, struct spec_task *t)
{
    const struct hrm_gpu_phases *gp = &t->gpu_phases;
    if (t->req.v[HRM_DIM_GPU] != 1)
        return spec_fail_key(c, "gpu_phases",
                             "needs \"gpus\": 1 (a phased task runs on one GPU), not %" PRId64,
                             t->req.v[HRM_DIM_GPU]);
    if (t->nphases > 0)
        return spec_fail_key(c, "gpu_phases", "cannot be combined with a \"profile\"");
    int64_t round = gp->cpu_us + gp->gpu_us;
    if (round > INT64_MAX / gp->count || round * gp->count > (int64_t)1000 * 86400 * 1000000)
        return spec_fail_key(c, "gpu_phases", "count x (cpu + gpu) exceeds 1000 days");
    if (t->duration_us == 0)
        t->duration_us = round * gp->count;
    else if (t->duration_us != round * gp->count)
        return spec_fail_key(c, "gpu_phases",
                             "count x (cpu + gpu) = %" PRId64 "us differs from \"duration\" "
                             "(%" PRId64 "us)",
                             round * gp->count, t->duration_us);
    return 0;
}

int spec_task_validate(struct spec_ctx *c, struct spec_task *t, bool need_duration)
{
    if (t->req.v[HRM_DIM_GPU_MEM] > 0 && t->req.v[HRM_DIM_GPU] == 0)
        return spec_fail(c, "\"gpu_mem\" needs \"gpus\" (GPU memory is asked per task)");
    if (t->nphases > 0) {
        int64_t total = 0;
        for (int32_t i = 0; i < t->nphases; i++)
            total += t->phases[i].duration_us;
        if (t->duration_us == 0)
            t->duration_us = total;
        else if (t->duration_us != total)
            return spec_fail(c,
                             "\"duration\" (%" PRId64 "us) differs from the total of its "
                             "\"profile\" (%" PRId64 "us)",
                             t->duration_us, total);
    }
    if (t->gpu_phases.count > 0) {
        int rc = validate_gpu_phases(c, t);
        if (rc)
            return rc;
    }
    if (need_duration && t->duration_us == 0)
        return spec_fail(c, "a task needs a \"duration\" (or a \"profile\")");
    return 0;
}

void spec_pick_nodes(struct spec_ctx *c, struct hrm_rng *rng, int32_t n, int32_t *out)
{
    /* n <= HRM_MAX_REPLICAS and n <= nnodes: rejection ends quickly. */
    uint64_t nnodes = (uint64_t)c->cluster->nnodes;
    for (int32_t i = 0; i < n; i++) {
        bool dup;
        do {
            out[i] = (int32_t)hrm_rng_below(rng, nnodes);
            dup = false;
            for (int32_t k = 0; k < i && !dup; k++)
                dup = out[k] == out[i];
        } while (dup);
    }
}

static bool fits_some_node(struct spec_ctx *c, const struct hrm_res *req)
{
    if (c->have_last_fit && memcmp(&c->last_fit, req, sizeof(*req)) == 0)
        return true;
    int64_t gpus = req->v[HRM_DIM_GPU];
    /* gpu_mem is the task's total over its GPUs: each GPU must hold its part. */
    int64_t each = gpus ? (req->v[HRM_DIM_GPU_MEM] + gpus - 1) / gpus : 0;
    for (int32_t i = 0; i < c->nshapes; i++) {
        const struct spec_shape *s = &c->shapes[i];
        if (hrm_res_fits(req, &s->cap) && (gpus == 0 || each <= s->gpu_mem_each)) {
            c->last_fit = *req;
            c->have_last_fit = true;
            return true;
        }
    }
    return false;
}

static int add_block(struct spec_ctx *c, int64_t size, const int32_t *replicas, int32_t n)
{
    if (c->wl->nblocks >= SPEC_MAX_BLOCKS)
        return spec_fail(c, "the workload would have more than %d input blocks", SPEC_MAX_BLOCKS);
    struct hrm_error e;
    int rc = hrm_workload_add_block(c->wl, size, replicas, n, &e);
    return rc < 0 ? spec_fail(c, "%s", e.text) : 0;
}

static int emit_inputs(struct spec_ctx *c, const struct spec_task *t, int32_t index,
                       struct hrm_rng *rng)
{
    int rc = 0;
    for (int32_t i = 0; !rc && i < t->ninputs; i++) {
        const struct spec_input *in = &t->inputs[i];
        if (in->kind == SPEC_INPUT_DATASET) {
            const struct spec_dataset *ds = &c->datasets[in->dataset];
            int32_t first = in->block >= 0 ? in->block : index, last = first;
            if (in->block == -2) {
                first = 0;
                last = ds->nblocks - 1;
            } else if (first >= ds->nblocks) {
                return spec_fail(c,
                                 "task %d reads block %d of data set \"%s\", which has only "
                                 "%d blocks",
                                 (int)index, (int)first, ds->name, (int)ds->nblocks);
            }
            for (int32_t b = first; !rc && b <= last; b++)
                rc = add_block(c, ds->block_size, &ds->replicas[(size_t)b * ds->nreplicas],
                               ds->nreplicas);
            continue;
        }
        for (int32_t b = 0; !rc && b < in->nblocks; b++) {
            int32_t picked[HRM_MAX_REPLICAS];
            const int32_t *rep = in->replicas;
            if (in->kind == SPEC_INPUT_RANDOM) {
                spec_pick_nodes(c, rng, in->nreplicas, picked);
                rep = picked;
            }
            rc = add_block(c, in->size, rep, in->nreplicas);
        }
    }
    return rc;
}

int spec_task_emit(struct spec_ctx *c, const struct spec_task *t, int32_t index,
                   int64_t duration_us, int64_t est_duration_us, struct hrm_rng *rng)
{
    if (!fits_some_node(c, &t->req)) {
        char buf[200];
        return spec_fail(c,
                         "a task asking {%s} fits no node of the cluster, so it could never "
                         "run",
                         hrm_res_format(&t->req, buf, (int)sizeof(buf)));
    }
    if (c->wl->ntasks >= SPEC_MAX_TASKS)
        return spec_fail(c, "the workload would have more than %d tasks", SPEC_MAX_TASKS);
    if ((int64_t)c->wl->nphases + t->nphases > SPEC_MAX_PHASES)
        return spec_fail(c, "the workload would have more than %d profile phases", SPEC_MAX_PHASES);
    struct hrm_task_desc d = {
        .req = t->req,
        .duration_us = duration_us > 0 ? duration_us : t->duration_us,
        .est_duration_us = est_duration_us > 0 ? est_duration_us : t->est_duration_us,
        .logic = t->logic,
        .gpu_milli = t->gpu_milli,
    };
    struct hrm_error e;
    int rc = hrm_workload_add_task(c->wl, &d, &e);
    if (rc < 0)
        return spec_fail(c, "%s", e.text);
    rc = emit_inputs(c, t, index, rng);
    if (!rc && t->gpu_phases.count > 0 && hrm_workload_set_gpu_phases(c->wl, &t->gpu_phases, &e))
        rc = spec_fail(c, "%s", e.text);
    if (!rc && t->memory.working_set > 0 && hrm_workload_set_task_memory(c->wl, &t->memory, &e))
        rc = spec_fail(c, "%s", e.text);
    for (int32_t i = 0; !rc && i < t->nphases; i++) {
        const struct spec_phase *p = &t->phases[i];
        struct hrm_res demand = t->req;
        for (int dim = 0; dim < HRM_NDIM; dim++)
            if (p->set & (1u << dim))
                demand.v[dim] = p->demand.v[dim];
        if (hrm_workload_add_phase(c->wl, p->duration_us, &demand, &e) < 0)
            rc = spec_fail(c, "%s", e.text);
    }
    return rc;
}
