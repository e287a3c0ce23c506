/* Similar-task history: traces of running attempts, smoothed staged profiles, persistence. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/estimate.h"

/* Segments a running attempt's trace keeps; more merge their most similar
 * neighbours, so a trace costs a fixed amount however long the task runs. */
#define TRACE_SEGS 16
/* Below these, demands count as equal: differences of a few milli-cores or
 * megabytes are noise, and relative tests near zero would split on it. */
#define CPU_FLOOR 50.0
#define MEM_FLOOR (64.0 * 1024 * 1024)
/* A profile stage shorter than this share of the run is a sliver of two runs'
 * boundaries, not a stage of the program. */
#define MIN_STAGE 0.05
/* What a stage of a loaded profile may claim: a year, a million cores, a petabyte. */
#define MAX_STAGE_US (366ll * 86400 * 1000000)
#define MAX_CPU 1000000000ll
#define MAX_MEM (1ll << 50)
/* Runs a profile counts; it stops counting there (the weight does not depend on it). */
#define MAX_NOBS 1000000000

/* A piece of a step function: a length (wall us in traces, a fraction of the
 * run in profiles) at constant demand. */
struct piece {
    double len;
    double cpu, mem;
    double comp; /* fraction of the piece observed compressed */
};

struct trace {
    int32_t task, attempt;
    int32_t n;
    int32_t next_free;
    struct piece seg[TRACE_SEGS];
};

struct entry {
    struct hrm_est_key key;
    struct hrm_est_profile p;
};

struct hrm_est {
    struct hrm_est_config cfg;
    struct entry *entries;
    size_t nentries, cap_entries;
    int32_t *index; /* open addressing: entry id + 1, 0 empty */
    size_t index_cap;
    struct trace *traces;
    size_t ntraces, cap_traces;
    int32_t free_trace;
    int32_t *trace_of_task; /* slot + 1, 0 none */
    size_t cap_task;
};

struct hrm_est *hrm_est_new(const struct hrm_est_config *cfg, struct hrm_error *err)
{
    struct hrm_est_config c = {
        .weight = 0.3, .compressed_factor = 0.2, .merge_tol = 0.15, .max_stages = 4};
    if (cfg) {
        if (cfg->weight != 0)
            c.weight = cfg->weight;
        if (cfg->compressed_factor != 0)
            c.compressed_factor = cfg->compressed_factor;
        if (cfg->merge_tol != 0)
            c.merge_tol = cfg->merge_tol;
        if (cfg->max_stages != 0)
            c.max_stages = cfg->max_stages;
    }
    if (!(c.weight > 0 && c.weight <= 1)) {
        hrm_errorf(err, -EINVAL, "estimate weight %g must be in (0, 1]", c.weight);
        return NULL;
    }
    if (!(c.compressed_factor > 0 && c.compressed_factor <= 1)) {
        hrm_errorf(err, -EINVAL, "compressed weight factor %g must be in (0, 1]",
                   c.compressed_factor);
        return NULL;
    }
    if (!(c.merge_tol >= 0 && c.merge_tol < 10)) {
        hrm_errorf(err, -EINVAL, "stage merge tolerance %g must be in [0, 10)", c.merge_tol);
        return NULL;
    }
    if (c.max_stages < 1 || c.max_stages > HRM_EST_MAX_STAGES) {
        hrm_errorf(err, -EINVAL, "max stages %d must be in 1..%d", (int)c.max_stages,
                   HRM_EST_MAX_STAGES);
        return NULL;
    }
    struct hrm_est *e = hrm_calloc(1, sizeof(*e));
    e->cfg = c;
    e->free_trace = -1;
    return e;
}

void hrm_est_free(struct hrm_est *e)
{
    if (!e)
        return;
    hrm_free(e->entries);
    hrm_free(e->index);
    hrm_free(e->traces);
    hrm_free(e->trace_of_task);
    hrm_free(e);
}

int32_t hrm_est_input_class(int64_t bytes)
{
    if (bytes <= 0)
        return 0;
    /* Classes are centred on powers of two (and their quarter steps), so
     * the usual block sizes (64M, 128M) sit mid-class, not on a boundary. */
    return 1 + (int32_t)llround(4.0 * log2((double)bytes));
}

uint32_t hrm_est_logic_of_command(const char *const *argv, size_t argc)
{
    /* The arguments joined by a unit separator, hashed as a logic name is:
     * a declared logic "x" and a command line hash alike only by chance. */
    size_t len = 1;
    for (size_t i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *joined = hrm_alloc(len), *at = joined;
    for (size_t i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]);
        memcpy(at, argv[i], n);
        at += n;
        *at++ = '\x1f';
    }
    *at = '\0';
    uint32_t id = hrm_workload_logic_id(joined);
    hrm_free(joined);
    return id;
}

struct hrm_est_key hrm_est_key_of(const struct hrm_workload *wl, int32_t task)
{
    const struct hrm_task *t = &wl->tasks[task];
    struct hrm_est_key k = {.logic = t->logic};
    if (k.logic == 0) {
        char name[2 * HRM_NAME_MAX + 2];
        snprintf(name, sizeof(name), "%s/%s", wl->jobs[t->job].name, wl->stages[t->stage].name);
        k.logic = hrm_workload_logic_id(name);
    }
    int64_t bytes = 0;
    for (int32_t b = 0; b < t->nblocks; b++)
        bytes += wl->blocks[t->block_first + b].size;
    k.input_class = hrm_est_input_class(bytes);
    return k;
}

/* ---- step functions ---- */

static double rel_diff(double a, double b, double floor_)
{
    double m = fmax(fmax(fabs(a), fabs(b)), floor_);
    return fabs(a - b) / m;
}

static double distance(const struct piece *a, const struct piece *b)
{
    return fmax(rel_diff(a->cpu, b->cpu, CPU_FLOOR), rel_diff(a->mem, b->mem, MEM_FLOOR));
}

/* a absorbs b: length-weighted averages. */
static void piece_merge(struct piece *a, const struct piece *b)
{
    double len = a->len + b->len;
    if (len <= 0) {
        a->len = 0;
        return;
    }
    a->cpu = (a->cpu * a->len + b->cpu * b->len) / len;
    a->mem = (a->mem * a->len + b->mem * b->len) / len;
    a->comp = (a->comp * a->len + b->comp * b->len) / len;
    a->len = len;
}

static void piece_remove(struct piece *p, int32_t *n, int32_t i)
{
    memmove(&p[i], &p[i + 1], (size_t)(*n - i - 1) * sizeof(*p));
    (*n)--;
}

/* Merges piece i into its more similar neighbour. */
static void merge_into_neighbour(struct piece *p, int32_t *n, int32_t i)
{
    int32_t j;
    if (i == 0)
        j = 1;
    else if (i == *n - 1)
        j = i - 1;
    else
        j = distance(&p[i], &p[i - 1]) <= distance(&p[i], &p[i + 1]) ? i - 1 : i + 1;
    int32_t lo = i < j ? i : j;
    piece_merge(&p[lo], &p[lo + 1]);
    piece_remove(p, n, lo + 1);
}

/* Merges neighbours within tol, pieces shorter than min_len into their more
 * similar neighbour (blending runs whose boundaries differ leaves slivers
 * that are no stage of the program), then the most similar neighbours until
 * at most max pieces remain.  Merges keep cpu-time and memory-time: a
 * profile describes typical use, and conformity (not the profile) guards
 * against peaks. */
static void resegment(struct piece *p, int32_t *n, double tol, int32_t max, double min_len)
{
    for (int32_t i = 0; i + 1 < *n;) {
        if (p[i + 1].len <= 0 || distance(&p[i], &p[i + 1]) <= tol) {
            piece_merge(&p[i], &p[i + 1]);
            piece_remove(p, n, i + 1);
        } else {
            i++;
        }
    }
    while (*n > 1) {
        int32_t shortest = 0;
        for (int32_t i = 1; i < *n; i++)
            if (p[i].len < p[shortest].len)
                shortest = i;
        if (p[shortest].len >= min_len)
            break;
        merge_into_neighbour(p, n, shortest);
    }
    while (*n > max) {
        int32_t best = 0;
        double bd = INFINITY;
        for (int32_t i = 0; i + 1 < *n; i++) {
            double d = distance(&p[i], &p[i + 1]);
            if (d < bd) {
                bd = d;
                best = i;
            }
        }
        piece_merge(&p[best], &p[best + 1]);
        piece_remove(p, n, best + 1);
    }
}

/* ---- history ---- */

static uint64_t key_hash(const struct hrm_est_key *k)
{
    uint64_t h = ((uint64_t)k->logic << 32) ^ (uint32_t)k->input_class;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static bool key_eq(const struct hrm_est_key *a, const struct hrm_est_key *b)
{
    return a->logic == b->logic && a->input_class == b->input_class;
}

static int32_t find_entry(const struct hrm_est *e, const struct hrm_est_key *k)
{
    if (e->index_cap == 0)
        return -1;
    size_t mask = e->index_cap - 1;
    for (size_t i = key_hash(k) & mask;; i = (i + 1) & mask) {
        int32_t id = e->index[i] - 1;
        if (id < 0)
            return -1;
        if (key_eq(&e->entries[id].key, k))
            return id;
    }
}

static void index_put(int32_t *index, size_t cap, const struct hrm_est_key *k, int32_t id)
{
    size_t mask = cap - 1;
    size_t i = key_hash(k) & mask;
    while (index[i] != 0)
        i = (i + 1) & mask;
    index[i] = id + 1;
}

static struct entry *add_entry(struct hrm_est *e, const struct hrm_est_key *k)
{
    if ((e->nentries + 1) * 2 > e->index_cap) {
        size_t cap = e->index_cap ? e->index_cap * 2 : 64;
        int32_t *index = hrm_calloc(cap, sizeof(*index));
        for (size_t i = 0; i < e->nentries; i++)
            index_put(index, cap, &e->entries[i].key, (int32_t)i);
        hrm_free(e->index);
        e->index = index;
        e->index_cap = cap;
    }
    HRM_GROW(e->entries, e->cap_entries, e->nentries + 1);
    struct entry *en = &e->entries[e->nentries];
    memset(en, 0, sizeof(*en));
    en->key = *k;
    index_put(e->index, e->index_cap, k, (int32_t)e->nentries);
    e->nentries++;
    return en;
}

static void profile_from_pieces(struct hrm_est_profile *p, const struct piece *pc, int32_t n,
                                double duration_us)
{
    p->nstages = n;
    p->duration_us = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t d = llround(pc[i].len * duration_us);
        p->stage[i].duration_us = d > 0 ? d : 1;
        p->stage[i].cpu = llround(pc[i].cpu);
        p->stage[i].mem = llround(pc[i].mem);
        p->duration_us += p->stage[i].duration_us;
    }
}

/* The profile as pieces over the fraction of the run. */
static int32_t pieces_of_profile(const struct hrm_est_profile *p, struct piece *out)
{
    for (int32_t i = 0; i < p->nstages; i++)
        out[i] = (struct piece){.len = (double)p->stage[i].duration_us / (double)p->duration_us,
                                .cpu = (double)p->stage[i].cpu,
                                .mem = (double)p->stage[i].mem};
    return p->nstages;
}

/*
 * The smoothed iterative update.  Durations: D' = (1-w) D + w D_obs with w
 * lowered for the compressed share of the run.  Demands: both step functions
 * are cut at the union of their breakpoints (over the fraction of the run)
 * and blended piece by piece, each piece's weight lowered by how much of it
 * was observed compressed; the result is re-segmented into stages.
 */
static void blend(const struct hrm_est_config *cfg, struct hrm_est_profile *p,
                  const struct piece *obs, int32_t nobs, double obs_duration)
{
    struct piece old[HRM_EST_MAX_STAGES];
    int32_t nold = pieces_of_profile(p, old);
    double comp_all = 0;
    for (int32_t i = 0; i < nobs; i++)
        comp_all += obs[i].comp * obs[i].len;
    double lower = 1 - cfg->compressed_factor;
    double w_run = cfg->weight * (1 - comp_all * lower);
    double duration = (1 - w_run) * (double)p->duration_us + w_run * obs_duration;

    struct piece out[2 * HRM_EST_MAX_STAGES];
    int32_t nout = 0;
    int32_t i = 0, j = 0;
    double pos = 0, end_i = old[0].len, end_j = obs[0].len;
    while (i < nold && j < nobs && nout < 2 * HRM_EST_MAX_STAGES) {
        double cut = fmin(end_i, end_j);
        if (i == nold - 1 && j == nobs - 1)
            cut = 1.0; /* absorb rounding of the cumulative sums */
        double w = cfg->weight * (1 - obs[j].comp * lower);
        out[nout++] = (struct piece){.len = cut - pos,
                                     .cpu = (1 - w) * old[i].cpu + w * obs[j].cpu,
                                     .mem = (1 - w) * old[i].mem + w * obs[j].mem};
        pos = cut;
        if (end_i <= cut + 1e-12 && ++i < nold)
            end_i += old[i].len;
        if (end_j <= cut + 1e-12 && ++j < nobs)
            end_j += obs[j].len;
    }
    /* Rounding may leave the cumulative sums a hair short of 1. */
    double covered = 0;
    for (int32_t k = 0; k < nout; k++)
        covered += out[k].len;
    for (int32_t k = 0; k < nout && covered > 0; k++)
        out[k].len /= covered;
    resegment(out, &nout, cfg->merge_tol, cfg->max_stages, MIN_STAGE);
    int32_t nobs_before = p->nobs;
    profile_from_pieces(p, out, nout, duration);
    p->nobs = nobs_before;
}

/* The run shows the profile's stages: each stage's duration and demands are
 * smoothed on their own, which keeps the stages' boundaries sharp where a
 * blend of two step functions would leave a ramp of slivers. */
static void blend_stages(const struct hrm_est_config *cfg, struct hrm_est_profile *p,
                         const struct piece *obs, double obs_duration)
{
    double lower = 1 - cfg->compressed_factor;
    p->duration_us = 0;
    for (int32_t k = 0; k < p->nstages; k++) {
        struct hrm_est_stage *s = &p->stage[k];
        double w = cfg->weight * (1 - obs[k].comp * lower);
        double d = (1 - w) * (double)s->duration_us + w * obs[k].len * obs_duration;
        s->duration_us = d >= 1 ? llround(d) : 1;
        s->cpu = llround((1 - w) * (double)s->cpu + w * obs[k].cpu);
        s->mem = llround((1 - w) * (double)s->mem + w * obs[k].mem);
        p->duration_us += s->duration_us;
    }
}

/* Folds pieces (lengths in any unit, total > 0) of a run of obs_duration us. */
static void observe_pieces(struct hrm_est *e, const struct hrm_est_key *k, struct piece *pc,
                           int32_t n, double obs_duration)
{
    double total = 0;
    for (int32_t i = 0; i < n; i++)
        total += pc[i].len;
    for (int32_t i = 0; i < n; i++)
        pc[i].len /= total;
    /* At most HRM_EST_MAX_STAGES pieces, so the union of breakpoints with a
     * profile's fits blend's buffer. */
    resegment(pc, &n, e->cfg.merge_tol, HRM_EST_MAX_STAGES, 0);
    int32_t id = find_entry(e, k);
    struct entry *en = id >= 0 ? &e->entries[id] : add_entry(e, k);
    if (en->p.nobs == 0) {
        /* The first run is taken as it is: there is nothing to smooth against. */
        resegment(pc, &n, e->cfg.merge_tol, e->cfg.max_stages, MIN_STAGE);
        profile_from_pieces(&en->p, pc, n, obs_duration);
    } else {
        struct piece st[HRM_EST_MAX_STAGES];
        int32_t ns = n;
        memcpy(st, pc, (size_t)n * sizeof(*st));
        resegment(st, &ns, e->cfg.merge_tol, e->cfg.max_stages, MIN_STAGE);
        if (ns == en->p.nstages)
            blend_stages(&e->cfg, &en->p, st, obs_duration);
        else
            blend(&e->cfg, &en->p, pc, n, obs_duration);
    }
    if (en->p.nobs < MAX_NOBS)
        en->p.nobs++;
}

int hrm_est_observe(struct hrm_est *e, const struct hrm_est_key *key, const struct hrm_est_obs *obs)
{
    if (obs->nstages < 1 || obs->nstages > HRM_EST_MAX_STAGES)
        return -EINVAL;
    struct piece pc[2 * HRM_EST_MAX_STAGES];
    double total = 0;
    for (int32_t i = 0; i < obs->nstages; i++) {
        const struct hrm_est_stage *s = &obs->stage[i];
        if (s->duration_us <= 0 || s->cpu < 0 || s->mem < 0)
            return -EINVAL;
        double comp = obs->compressed[i];
        pc[i] = (struct piece){.len = (double)s->duration_us,
                               .cpu = (double)s->cpu,
                               .mem = (double)s->mem,
                               .comp = comp < 0   ? 0
                                       : comp > 1 ? 1
                                                  : comp};
        total += (double)s->duration_us;
    }
    observe_pieces(e, key, pc, obs->nstages, total);
    return 0;
}

const struct hrm_est_profile *hrm_est_lookup(const struct hrm_est *e, const struct hrm_est_key *key)
{
    int32_t id = find_entry(e, key);
    return id >= 0 && e->entries[id].p.nobs > 0 ? &e->entries[id].p : NULL;
}

int32_t hrm_est_count(const struct hrm_est *e)
{
    return (int32_t)e->nentries;
}

/* ---- traces of running attempts ---- */

static struct trace *trace_get(struct hrm_est *e, int32_t task)
{
    if (task < 0 || (size_t)task >= e->cap_task || e->trace_of_task[task] == 0)
        return NULL;
    return &e->traces[e->trace_of_task[task] - 1];
}

static void trace_drop(struct hrm_est *e, int32_t task)
{
    struct trace *t = trace_get(e, task);
    if (!t)
        return;
    int32_t slot = e->trace_of_task[task] - 1;
    e->trace_of_task[task] = 0;
    t->next_free = e->free_trace;
    e->free_trace = slot;
}

static struct trace *trace_new(struct hrm_est *e, int32_t task, int32_t attempt)
{
    if ((size_t)task >= e->cap_task) {
        size_t old = e->cap_task;
        HRM_GROW(e->trace_of_task, e->cap_task, (size_t)task + 1);
        memset(&e->trace_of_task[old], 0, (e->cap_task - old) * sizeof(*e->trace_of_task));
    }
    int32_t slot;
    if (e->free_trace >= 0) {
        slot = e->free_trace;
        e->free_trace = e->traces[slot].next_free;
    } else {
        HRM_GROW(e->traces, e->cap_traces, e->ntraces + 1);
        slot = (int32_t)e->ntraces++;
    }
    struct trace *t = &e->traces[slot];
    *t = (struct trace){.task = task, .attempt = attempt, .next_free = -1};
    e->trace_of_task[task] = slot + 1;
    return t;
}

void hrm_est_sample(struct hrm_est *e, int32_t task, int32_t attempt,
                    const struct hrm_est_sample *s)
{
    if (task < 0 || s->interval_us <= 0)
        return;
    struct trace *t = trace_get(e, task);
    if (t && t->attempt != attempt) {
        if (attempt < t->attempt)
            return; /* a late sample of an old run */
        trace_drop(e, task);
        t = NULL;
    }
    if (!t)
        t = trace_new(e, task, attempt);
    struct piece p = {.len = (double)s->interval_us,
                      .cpu = (double)s->cpu,
                      .mem = (double)s->mem,
                      .comp = s->compressed ? 1.0 : 0.0};
    /* Online segmentation: a sample like the current segment extends it. */
    if (t->n > 0 && distance(&t->seg[t->n - 1], &p) <= e->cfg.merge_tol) {
        piece_merge(&t->seg[t->n - 1], &p);
        return;
    }
    if (t->n == TRACE_SEGS)
        resegment(t->seg, &t->n, e->cfg.merge_tol, TRACE_SEGS - 1, 0);
    t->seg[t->n++] = p;
}

void hrm_est_task_end(struct hrm_est *e, int32_t task, int32_t attempt, bool success,
                      const struct hrm_est_key *key, double cpu_speed)
{
    struct trace *t = trace_get(e, task);
    if (!t)
        return;
    if (success && t->attempt == attempt && t->n > 0) {
        struct piece pc[TRACE_SEGS];
        int32_t n = t->n;
        memcpy(pc, t->seg, (size_t)n * sizeof(*pc));
        double wall = 0;
        for (int32_t i = 0; i < n; i++)
            wall += pc[i].len;
        /* Durations are kept for a speed-1.0 node, like the workload's. */
        double speed = cpu_speed > 0 ? cpu_speed : 1.0;
        if (wall > 0)
            observe_pieces(e, key, pc, n, wall * speed);
    }
    trace_drop(e, task);
}

/* ---- persistence ---- */

#define FILE_MAGIC "hrm-estimates"
#define FILE_VERSION 1

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = *(const struct entry *const *)a, *y = *(const struct entry *const *)b;
    if (x->key.logic != y->key.logic)
        return x->key.logic < y->key.logic ? -1 : 1;
    return (x->key.input_class > y->key.input_class) - (x->key.input_class < y->key.input_class);
}

void hrm_est_format_line(const struct hrm_est_key *key, const struct hrm_est_profile *p,
                         char *buf, size_t len)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, len, "%08" PRIx32 " %" PRId32 " %" PRId32 " %" PRId32,
                           key->logic, key->input_class, p->nobs, p->nstages);
    for (int32_t s = 0; s < p->nstages && at < len; s++)
        at += (size_t)snprintf(buf + at, len - at, " %" PRId64 " %" PRId64 " %" PRId64,
                               p->stage[s].duration_us, p->stage[s].cpu, p->stage[s].mem);
}

static int parse_line(char *line, struct hrm_est_key *k, struct hrm_est_profile *p,
                      const char **why);

int hrm_est_parse_line(const char *text, struct hrm_est_key *key, struct hrm_est_profile *p,
                       struct hrm_error *err)
{
    char line[HRM_EST_LINE_MAX];
    const char *why = "";
    if (snprintf(line, sizeof(line), "%s", text) >= (int)sizeof(line))
        return hrm_errorf(err, -HRM_ESPEC, "estimate line too long");
    if (parse_line(line, key, p, &why) != 0)
        return hrm_errorf(err, -HRM_ESPEC, "estimate '%.60s': %s", text, why);
    return 0;
}

void hrm_est_put(struct hrm_est *e, const struct hrm_est_key *key, const struct hrm_est_profile *p)
{
    int32_t id = find_entry(e, key);
    struct entry *en = id >= 0 ? &e->entries[id] : add_entry(e, key);
    en->p = *p;
}

int hrm_est_save(const struct hrm_est *e, const char *path, struct hrm_error *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return hrm_errorf(err, -ENAMETOOLONG, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return hrm_errorf(err, -errno, "%s: cannot create: %s", tmp, strerror(errno));
    /* Key order makes the file a function of the history alone. */
    const struct entry **order = hrm_alloc((e->nentries ? e->nentries : 1) * sizeof(*order));
    for (size_t i = 0; i < e->nentries; i++)
        order[i] = &e->entries[i];
    qsort(order, e->nentries, sizeof(*order), cmp_entry);
    fprintf(f, "%s %d\n# logic input_class nobs nstages {duration_us cpu_millis mem_bytes}...\n",
            FILE_MAGIC, FILE_VERSION);
    char line[HRM_EST_LINE_MAX];
    for (size_t i = 0; i < e->nentries; i++) {
        const struct entry *en = order[i];
        if (en->p.nobs == 0)
            continue;
        hrm_est_format_line(&en->key, &en->p, line, sizeof(line));
        fprintf(f, "%s\n", line);
    }
    hrm_free(order);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        int code = errno ? -errno : -HRM_EIO;
        remove(tmp);
        return hrm_errorf(err, code, "%s: write failed", tmp);
    }
    if (rename(tmp, path) != 0) {
        int code = -errno;
        remove(tmp);
        return hrm_errorf(err, code, "%s: cannot replace: %s", path, strerror(-code));
    }
    return 0;
}

/* Parses one profile line into key and p; 0 or -1. */
static int parse_line(char *line, struct hrm_est_key *k, struct hrm_est_profile *p,
                      const char **why)
{
    char *s = line, *end;
    errno = 0;
    unsigned long logic = strtoul(s, &end, 16);
    if (end == s || errno || logic == 0 || logic > 0xffffffffu) {
        *why = "bad logic id";
        return -1;
    }
    s = end;
    long long v[3];
    for (int i = 0; i < 3; i++) {
        v[i] = strtoll(s, &end, 10);
        if (end == s || errno) {
            *why = "expected input_class nobs nstages";
            return -1;
        }
        s = end;
    }
    if (v[0] < 0 || v[0] > 1000 || v[1] < 1 || v[1] > MAX_NOBS || v[2] < 1 ||
        v[2] > HRM_EST_MAX_STAGES) {
        *why = "input_class, nobs or nstages out of range";
        return -1;
    }
    *k = (struct hrm_est_key){.logic = (uint32_t)logic, .input_class = (int32_t)v[0]};
    memset(p, 0, sizeof(*p));
    p->nobs = (int32_t)v[1];
    p->nstages = (int32_t)v[2];
    for (int32_t st = 0; st < p->nstages; st++) {
        long long x[3];
        for (int i = 0; i < 3; i++) {
            x[i] = strtoll(s, &end, 10);
            if (end == s || errno || x[i] < 0) {
                *why = "expected duration_us cpu mem for every stage";
                return -1;
            }
            s = end;
        }
        if (x[0] <= 0) {
            *why = "stage duration must be positive";
            return -1;
        }
        /* Bounds far above any real task keep the sums and the matcher's
         * arithmetic finite whatever a damaged file says. */
        if (x[0] > MAX_STAGE_US || x[1] > MAX_CPU || x[2] > MAX_MEM) {
            *why = "stage duration, cpu or memory out of range";
            return -1;
        }
        p->stage[st] = (struct hrm_est_stage){.duration_us = x[0], .cpu = x[1], .mem = x[2]};
        p->duration_us += x[0];
    }
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (*s) {
        *why = "trailing text";
        return -1;
    }
    return 0;
}

/* The first line: the magic word and a version this build reads. */
static int check_header(const char *line, const char *path, struct hrm_error *err)
{
    size_t ml = strlen(FILE_MAGIC);
    if (strncmp(line, FILE_MAGIC, ml) != 0 || line[ml] != ' ')
        return hrm_errorf(err, -HRM_ESPEC,
                          "%s: not an hrm estimates file (its first line must be '%s %d')", path,
                          FILE_MAGIC, FILE_VERSION);
    char *end;
    errno = 0;
    long v = strtol(line + ml + 1, &end, 10);
    while (*end == '\n' || *end == '\r')
        end++;
    if (end == line + ml + 1 || *end || errno)
        return hrm_errorf(err, -HRM_ESPEC, "%s: line 1: malformed version", path);
    if (v != FILE_VERSION)
        return hrm_errorf(err, -HRM_ESPEC,
                          "%s: estimates file version %ld; this hrm reads version %d", path, v,
                          FILE_VERSION);
    return 0;
}

int hrm_est_load(struct hrm_est *e, const char *path, struct hrm_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return hrm_errorf(err, -errno, "%s: cannot open: %s", path, strerror(errno));
    char line[4096];
    int rc = 0, lineno = 0;
    struct entry *got = NULL;
    size_t ngot = 0, cap = 0;
    while (!rc && fgets(line, sizeof(line), f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = hrm_errorf(err, -HRM_ESPEC, "%s: line %d: too long", path, lineno);
            break;
        }
        if (lineno == 1) {
            rc = check_header(line, path, err);
            continue;
        }
        if (line[0] == '#' || line[0] == '\n')
            continue;
        const char *why = "";
        HRM_GROW(got, cap, ngot + 1);
        if (parse_line(line, &got[ngot].key, &got[ngot].p, &why) != 0)
            rc = hrm_errorf(err, -HRM_ESPEC, "%s: line %d: %s", path, lineno, why);
        else
            ngot++;
    }
    if (!rc && ferror(f))
        rc = hrm_errorf(err, -HRM_EIO, "%s: cannot read: %s", path, strerror(errno));
    if (!rc && lineno == 0)
        rc = hrm_errorf(err, -HRM_ESPEC, "%s: empty file", path);
    fclose(f);
    /* All or nothing: e changes only once the whole file has parsed. */
    for (size_t i = 0; !rc && i < ngot; i++)
        hrm_est_put(e, &got[i].key, &got[i].p);
    hrm_free(got);
    return rc;
}
