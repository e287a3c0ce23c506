/* Reader of the Alibaba GPU-sharing trace v2023 (openb node and pod lists) with per-row validation.
 */
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/hash.h"
#include "trace_private.h"

/* ---- column tables ---- */

struct column {
    const char *name;
    bool required;
};

enum { N_SN, N_CPU, N_MEM, N_GPU, N_MODEL, N_NCOLS };
static const struct column node_columns[N_NCOLS] = {
    {"sn", true}, {"cpu_milli", true}, {"memory_mib", true}, {"gpu", true}, {"model", true},
};

enum {
    P_NAME,
    P_CPU,
    P_MEM,
    P_NGPU,
    P_MILLI,
    P_SPEC,
    P_QOS,
    P_PHASE,
    P_CREATE,
    P_DELETE,
    P_SCHED,
    P_NCOLS
};
/* The multigpu lists stop after gpu_milli, so everything after it is optional. */
static const struct column pod_columns[P_NCOLS] = {
    {"name", true},           {"cpu_milli", true},       {"memory_mib", true},
    {"num_gpu", true},        {"gpu_milli", true},       {"gpu_spec", false},
    {"qos", false},           {"pod_phase", false},      {"creation_time", false},
    {"deletion_time", false}, {"scheduled_time", false},
};

static const char *const qos_names[] = {"LS", "BE", "Burstable", "Guaranteed"};
static const char *const phase_names[] = {"Running", "Succeeded", "Failed", "Pending"};

const char *hrm_trace_qos_name(enum hrm_trace_qos q)
{
    return (unsigned)q < 4 ? qos_names[q] : "?";
}

/* Maps header fields to column ids: col_of[field] = column id.  Returns 0 or
 * -HRM_ESPEC (unknown or repeated column, missing required column). */
static int map_header(struct csv_reader *r, const struct column *cols, int ncols, int *col_of,
                      int *field_of, struct hrm_error *err)
{
    for (int c = 0; c < ncols; c++)
        field_of[c] = -1;
    for (int i = 0; i < r->nfields; i++) {
        const char *h = csv_field(r, i);
        if (i == 0 && strncmp(h, "\xEF\xBB\xBF", 3) == 0)
            h += 3; /* a UTF-8 byte-order mark, as spreadsheet exports write */
        int c = 0;
        while (c < ncols && strcmp(h, cols[c].name) != 0)
            c++;
        if (c == ncols)
            return hrm_errorf(err, -HRM_ESPEC, "%s:%d: unknown column '%.48s'", r->name,
                              r->rec_line, h);
        if (field_of[c] >= 0)
            return hrm_errorf(err, -HRM_ESPEC, "%s:%d: column '%s' appears twice", r->name,
                              r->rec_line, h);
        field_of[c] = i;
        col_of[i] = c;
    }
    for (int c = 0; c < ncols; c++)
        if (cols[c].required && field_of[c] < 0)
            return hrm_errorf(err, -HRM_ESPEC, "%s:%d: missing column '%s'", r->name, r->rec_line,
                              cols[c].name);
    return 0;
}

/* ---- names seen so far, to refuse duplicates (open addressing over rows) ---- */

struct name_index {
    int32_t *slot; /* row + 1, 0 = empty */
    size_t cap;
};

static uint64_t name_hash(const char *s)
{
    return hrm_hash_str(s);
}

/* Row holding name, or -1; with add >= 0 inserts add when absent. */
static int32_t index_find(struct name_index *ix, const char *name,
                          const char *(*name_of)(const void *, int32_t), const void *rows,
                          int32_t add, int32_t nrows)
{
    if (add >= 0 && (size_t)(nrows + 1) * 2 > ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 256;
        int32_t *slot = hrm_calloc(cap, sizeof(*slot));
        for (size_t i = 0; i < ix->cap; i++) {
            if (!ix->slot[i])
                continue;
            size_t j = name_hash(name_of(rows, ix->slot[i] - 1)) & (cap - 1);
            while (slot[j])
                j = (j + 1) & (cap - 1);
            slot[j] = ix->slot[i];
        }
        hrm_free(ix->slot);
        ix->slot = slot;
        ix->cap = cap;
    }
    if (!ix->cap)
        return -1;
    size_t j = name_hash(name) & (ix->cap - 1);
    for (; ix->slot[j]; j = (j + 1) & (ix->cap - 1))
        if (strcmp(name_of(rows, ix->slot[j] - 1), name) == 0)
            return ix->slot[j] - 1;
    if (add >= 0)
        ix->slot[j] = add + 1;
    return -1;
}

static const char *node_name_of(const void *rows, int32_t i)
{
    return ((const struct hrm_trace_node *)rows)[i].name;
}

static const char *pod_name_of(const void *rows, int32_t i)
{
    return ((const struct hrm_trace_pod *)rows)[i].name;
}

/* ---- models ---- */

/* Index of model in the trace's table, added if new; -1 when the table is full. */
static int32_t model_id(struct hrm_trace *t, const char *model)
{
    for (int32_t i = 0; i < t->nmodels; i++)
        if (strcmp(t->models[i], model) == 0)
            return i;
    if (t->nmodels == HRM_TRACE_MAX_MODELS)
        return -1;
    snprintf(t->models[t->nmodels], HRM_TRACE_MODEL_MAX, "%s", model);
    return t->nmodels++;
}

static bool model_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= HRM_TRACE_MODEL_MAX)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == '|' || *s == '"' || *s == ',' || *s == 0x7f)
            return false;
    return true;
}

/* ---- rows ---- */

struct row_ctx {
    struct csv_reader *r;
    char msg[HRM_ERROR_TEXT_MAX];
};

#define ROW_BAD(rc, ...)                                                                           \
    (snprintf((rc)->msg, sizeof((rc)->msg), "%s:%d: ", (rc)->r->name, (rc)->r->rec_line),          \
     snprintf((rc)->msg + strlen((rc)->msg), sizeof((rc)->msg) - strlen((rc)->msg), __VA_ARGS__),  \
     -1)

static int field_uint(struct row_ctx *rc, const char *col, const char *s, int64_t max, int64_t *out)
{
    if (trace_parse_uint(s, max, out) < 0)
        return ROW_BAD(rc, "%s '%.32s' is not an integer 0..%lld", col, s, (long long)max);
    return 0;
}

/* What node and pod rows share: a name and cpu/memory columns. */
static int name_cpu_mem(struct row_ctx *rc, const char *col, const char *name, const char *cpu,
                        const char *mem, int64_t *cpu_milli, int64_t *mem_mib)
{
    if (!trace_name_ok(name))
        return ROW_BAD(rc,
                       "%s '%.48s' is not a name (1-47 characters, no whitespace, '\"', "
                       "',' or '=')",
                       col, name);
    if (field_uint(rc, "cpu_milli", cpu, 1000000000, cpu_milli) ||
        field_uint(rc, "memory_mib", mem, 1ll << 30, mem_mib))
        return -1;
    return 0;
}

static int parse_node(struct hrm_trace *t, struct row_ctx *rc, const int *field_of,
                      struct name_index *ix, struct hrm_trace_node *n)
{
    struct csv_reader *r = rc->r;
    const char *sn = csv_field(r, field_of[N_SN]);
    const char *model = csv_field(r, field_of[N_MODEL]);
    int64_t gpus;
    memset(n, 0, sizeof(*n));
    if (name_cpu_mem(rc, "sn", sn, csv_field(r, field_of[N_CPU]), csv_field(r, field_of[N_MEM]),
                     &n->cpu_milli, &n->mem_mib) ||
        field_uint(rc, "gpu", csv_field(r, field_of[N_GPU]), HRM_TRACE_MAX_GPUS, &gpus))
        return -1;
    if (n->cpu_milli == 0 || n->cpu_milli % 1000)
        return ROW_BAD(rc, "cpu_milli %lld is not a positive whole number of cores",
                       (long long)n->cpu_milli);
    if (n->mem_mib == 0)
        return ROW_BAD(rc, "memory_mib is 0");
    n->gpus = (int32_t)gpus;
    n->model = -1;
    if (gpus > 0) {
        if (!model_ok(model))
            return ROW_BAD(rc,
                           "a node with GPUs needs a model (1-31 characters, no "
                           "whitespace or '|'), got '%.32s'",
                           model);
        if ((n->model = model_id(t, model)) < 0)
            return ROW_BAD(rc, "more than %d GPU models", HRM_TRACE_MAX_MODELS);
    }
    snprintf(n->name, sizeof(n->name), "%s", sn);
    int32_t dup = index_find(ix, sn, node_name_of, t->nodes, -1, t->nnodes);
    if (dup >= 0)
        return ROW_BAD(rc, "node '%s' already on line %d", sn, t->nodes[dup].line);
    n->line = r->rec_line;
    return 0;
}

static int parse_word(struct row_ctx *rc, const char *col, const char *s, const char *const *names,
                      int count, int *out)
{
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return ROW_BAD(rc, "%s '%.32s' is not one of %s, %s, %s, %s", col, s, names[0], names[1],
                   names[2], names[3]);
}

/* Optional time column: -1 when absent or empty. */
static int field_time(struct row_ctx *rc, const int *field_of, int col, const char *label,
                      int64_t *out)
{
    *out = -1;
    if (field_of[col] < 0)
        return 0;
    const char *s = csv_field(rc->r, field_of[col]);
    if (!*s)
        return 0;
    /* 1000 days: the spec's limit on durations */
    return field_uint(rc, label, s, 86400ll * 1000, out);
}

static int parse_gpu_spec(struct hrm_trace *t, struct row_ctx *rc, const char *s, uint64_t *mask)
{
    char buf[256];
    *mask = 0;
    if (!*s)
        return 0;
    if (strlen(s) >= sizeof(buf))
        return ROW_BAD(rc, "gpu_spec longer than 255 characters");
    snprintf(buf, sizeof(buf), "%s", s);
    char *save = NULL;
    for (char *p = buf;; p = NULL) {
        char *tok = strtok_r(p, "|", &save);
        if (!tok)
            break;
        int32_t m = model_ok(tok) ? model_id(t, tok) : -2;
        if (m == -2)
            return ROW_BAD(rc, "gpu_spec '%.48s': '%.32s' is not a GPU model name", s, tok);
        if (m < 0)
            return ROW_BAD(rc, "more than %d GPU models", HRM_TRACE_MAX_MODELS);
        *mask |= 1ull << m;
    }
    if (!*mask || s[0] == '|' || s[strlen(s) - 1] == '|' || strstr(s, "||"))
        return ROW_BAD(rc, "gpu_spec '%.48s' has an empty model name", s);
    return 0;
}

static int parse_pod(struct hrm_trace *t, struct row_ctx *rc, const int *field_of,
                     struct name_index *ix, struct hrm_trace_pod *p)
{
    struct csv_reader *r = rc->r;
    const char *name = csv_field(r, field_of[P_NAME]);
    int64_t ngpu, milli;
    memset(p, 0, sizeof(*p));
    if (name_cpu_mem(rc, "name", name, csv_field(r, field_of[P_CPU]), csv_field(r, field_of[P_MEM]),
                     &p->cpu_milli, &p->mem_mib) ||
        field_uint(rc, "num_gpu", csv_field(r, field_of[P_NGPU]), HRM_TRACE_MAX_GPUS, &ngpu) ||
        field_uint(rc, "gpu_milli", csv_field(r, field_of[P_MILLI]), 1000, &milli))
        return -1;
    if (ngpu == 0 && milli != 0)
        return ROW_BAD(rc, "gpu_milli %lld without a GPU (num_gpu is 0)", (long long)milli);
    if (ngpu == 1 && milli == 0)
        return ROW_BAD(rc, "num_gpu 1 with gpu_milli 0: the share must be 1..1000");
    if (ngpu > 1 && milli != 1000)
        return ROW_BAD(rc,
                       "a pod of %lld GPUs takes whole GPUs: gpu_milli must be 1000, "
                       "got %lld",
                       (long long)ngpu, (long long)milli);
    p->num_gpu = (int32_t)ngpu;
    p->gpu_milli = (int32_t)milli;
    if (field_of[P_SPEC] >= 0 &&
        parse_gpu_spec(t, rc, csv_field(r, field_of[P_SPEC]), &p->models) < 0)
        return -1;
    int q = HRM_QOS_BE, ph = HRM_POD_RUNNING;
    if (field_of[P_QOS] >= 0 &&
        parse_word(rc, "qos", csv_field(r, field_of[P_QOS]), qos_names, 4, &q) < 0)
        return -1;
    if (field_of[P_PHASE] >= 0 &&
        parse_word(rc, "pod_phase", csv_field(r, field_of[P_PHASE]), phase_names, 4, &ph) < 0)
        return -1;
    p->qos = (enum hrm_trace_qos)q;
    p->phase = (enum hrm_trace_phase)ph;
    if (field_time(rc, field_of, P_CREATE, "creation_time", &p->creation) ||
        field_time(rc, field_of, P_DELETE, "deletion_time", &p->deletion) ||
        field_time(rc, field_of, P_SCHED, "scheduled_time", &p->scheduled))
        return -1;
    if (t->pods_have_times && p->creation < 0)
        return ROW_BAD(rc, "creation_time is empty");
    if (p->scheduled >= 0 && p->scheduled < p->creation)
        return ROW_BAD(rc, "scheduled_time %lld is before creation_time %lld",
                       (long long)p->scheduled, (long long)p->creation);
    int64_t from = p->scheduled >= 0 ? p->scheduled : p->creation;
    if (p->deletion >= 0 && p->deletion < from)
        return ROW_BAD(rc, "deletion_time %lld is before %s %lld", (long long)p->deletion,
                       p->scheduled >= 0 ? "scheduled_time" : "creation_time", (long long)from);
    snprintf(p->name, sizeof(p->name), "%s", name);
    int32_t dup = index_find(ix, name, pod_name_of, t->pods, -1, t->npods);
    if (dup >= 0)
        return ROW_BAD(rc, "pod '%s' already on line %d", name, t->pods[dup].line);
    p->line = r->rec_line;
    return 0;
}

/* ---- files ---- */

enum file_kind { FILE_NODES, FILE_PODS };

static int read_file(struct hrm_trace *t, FILE *f, const char *name, enum file_kind kind,
                     const struct hrm_trace_opts *opts, struct hrm_error *err)
{
    const struct column *cols = kind == FILE_NODES ? node_columns : pod_columns;
    int ncols = kind == FILE_NODES ? N_NCOLS : P_NCOLS;
    int32_t nnodes0 = t->nnodes, npods0 = t->npods, nmodels0 = t->nmodels;
    bool times0 = t->pods_have_times;
    struct csv_reader r;
    struct name_index ix = {0};
    int col_of[CSV_MAX_FIELDS], field_of[P_NCOLS];
    int rc, nbad = 0;
    csv_init(&r, f, name);
    /* Rows already read (a second file of the same kind) take part in duplicate checks. */
    for (int32_t i = 0; kind == FILE_NODES && i < t->nnodes; i++)
        index_find(&ix, t->nodes[i].name, node_name_of, t->nodes, i, i);
    for (int32_t i = 0; kind == FILE_PODS && i < t->npods; i++)
        index_find(&ix, t->pods[i].name, pod_name_of, t->pods, i, i);

    rc = csv_next(&r, err); /* the header: a malformed one refuses the file */
    if (rc == 0) {
        rc = hrm_errorf(err, -HRM_ESPEC, "%s: empty file (no header row)", name);
        goto fail;
    }
    if (rc < 0 || (rc = map_header(&r, cols, ncols, col_of, field_of, err)) < 0)
        goto fail;
    int nfields = r.nfields;
    if (kind == FILE_PODS) {
        int ntimes =
            (field_of[P_CREATE] >= 0) + (field_of[P_DELETE] >= 0) + (field_of[P_SCHED] >= 0);
        if (ntimes != 0 && ntimes != 3) {
            rc = hrm_errorf(err, -HRM_ESPEC,
                            "%s:%d: give all of creation_time, "
                            "deletion_time and scheduled_time, or none",
                            name, r.rec_line);
            goto fail;
        }
        if (t->npods > 0 && t->pods_have_times != (ntimes == 3)) {
            rc = hrm_errorf(err, -HRM_ESPEC, "%s: pod files differ in their time columns", name);
            goto fail;
        }
        t->pods_have_times = ntimes == 3;
    }
    struct row_ctx row = {.r = &r};
    for (;;) {
        rc = csv_next(&r, err);
        if (rc == 0)
            break;
        if (rc == -HRM_EIO)
            goto fail;
        int ok;
        if (rc < 0) {
            snprintf(row.msg, sizeof(row.msg), "%s", err->text);
            ok = -1;
        } else if (r.nfields != nfields) {
            ok = ROW_BAD(&row, "expected %d fields, found %d", nfields, r.nfields);
        } else if (kind == FILE_NODES) {
            HRM_GROW(t->nodes, t->cap_nodes, (size_t)t->nnodes + 1);
            ok = parse_node(t, &row, field_of, &ix, &t->nodes[t->nnodes]);
            if (ok == 0) {
                index_find(&ix, t->nodes[t->nnodes].name, node_name_of, t->nodes, t->nnodes,
                           t->nnodes);
                t->nnodes++;
            }
        } else {
            HRM_GROW(t->pods, t->cap_pods, (size_t)t->npods + 1);
            ok = parse_pod(t, &row, field_of, &ix, &t->pods[t->npods]);
            if (ok == 0) {
                index_find(&ix, t->pods[t->npods].name, pod_name_of, t->pods, t->npods, t->npods);
                t->npods++;
            }
        }
        if (ok < 0) {
            nbad++;
            if ((rc = trace_bad_row(opts, err, row.msg)) < 0)
                goto fail;
        }
    }
    csv_fini(&r);
    hrm_free(ix.slot);
    return nbad;
fail:
    csv_fini(&r);
    hrm_free(ix.slot);
    t->nnodes = nnodes0;
    t->npods = npods0;
    t->nmodels = nmodels0;
    t->pods_have_times = times0;
    return rc;
}

int hrm_trace_read_nodes(struct hrm_trace *t, FILE *f, const char *name,
                         const struct hrm_trace_opts *opts, struct hrm_error *err)
{
    return read_file(t, f, name, FILE_NODES, opts, err);
}

int hrm_trace_read_pods(struct hrm_trace *t, FILE *f, const char *name,
                        const struct hrm_trace_opts *opts, struct hrm_error *err)
{
    return read_file(t, f, name, FILE_PODS, opts, err);
}

static int load(struct hrm_trace *t, const char *path, enum file_kind kind,
                const struct hrm_trace_opts *opts, struct hrm_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return hrm_errorf(err, -HRM_EIO, "%s: cannot open: %s", path, strerror(errno));
    int rc = read_file(t, f, path, kind, opts, err);
    fclose(f);
    if (rc >= 0) {
        char **slot = kind == FILE_NODES ? &t->nodes_file : &t->pods_file;
        hrm_free(*slot);
        *slot = hrm_strdup(path);
    }
    return rc;
}

int hrm_trace_load_nodes(struct hrm_trace *t, const char *path, const struct hrm_trace_opts *opts,
                         struct hrm_error *err)
{
    return load(t, path, FILE_NODES, opts, err);
}

int hrm_trace_load_pods(struct hrm_trace *t, const char *path, const struct hrm_trace_opts *opts,
                        struct hrm_error *err)
{
    return load(t, path, FILE_PODS, opts, err);
}

struct hrm_trace *hrm_trace_new(void)
{
    return hrm_calloc(1, sizeof(struct hrm_trace));
}

void hrm_trace_free(struct hrm_trace *t)
{
    if (!t)
        return;
    hrm_free(t->nodes);
    hrm_free(t->pods);
    hrm_free(t->nodes_file);
    hrm_free(t->pods_file);
    hrm_free(t);
}

bool trace_pod_fits_any(const struct hrm_trace *t, const struct hrm_trace_pod *p)
{
    for (int32_t n = 0; n < t->nnodes; n++)
        if (hrm_trace_pod_fits_node(p, &t->nodes[n]))
            return true;
    return false;
}

bool hrm_trace_pod_fits_node(const struct hrm_trace_pod *p, const struct hrm_trace_node *n)
{
    if (p->cpu_milli > n->cpu_milli || p->mem_mib > n->mem_mib || p->num_gpu > n->gpus)
        return false;
    if (p->num_gpu > 0 && p->models && (n->model < 0 || !(p->models >> n->model & 1)))
        return false;
    return true;
}
