/* Metric formulas (percentiles, Jain, fairness deviation, ideal times) and the run summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/metrics.h"
#include "metrics/metrics_private.h"

/* ---- formulas ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    /* NaN sorts last so a stray NaN cannot make qsort's order undefined. */
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

double hrm_percentile(double *vals, size_t n, double p)
{
    if (n == 0)
        return 0.0;
    qsort(vals, n, sizeof(*vals), cmp_double);
    if (!(p > 0.0)) /* also catches NaN */
        return vals[0];
    if (p >= 100.0)
        return vals[n - 1];
    /* h = (n - 1) p, interpolate between the order statistics around h. */
    double h = (double)(n - 1) * (p / 100.0);
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return vals[n - 1];
    return vals[lo] + (h - (double)lo) * (vals[lo + 1] - vals[lo]);
}

double hrm_mean(const double *vals, size_t n)
{
    if (n == 0)
        return 0.0;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += vals[i];
    return sum / (double)n;
}

double hrm_jain(const double *x, size_t n)
{
    double sum = 0.0, sq = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        sq += x[i] * x[i];
    }
    /* Nobody got anything: everybody got the same, which is fair. */
    if (n == 0 || sq == 0.0)
        return 1.0;
    return (sum * sum) / ((double)n * sq);
}

double hrm_jain_maxmin(const double *share, const bool *wants_more, size_t n)
{
    if (!wants_more)
        return hrm_jain(share, n);
    double total = 0;
    size_t nwant = 0, nsat = 0;
    for (size_t i = 0; i < n; i++) {
        total += share[i];
        nwant += wants_more[i];
    }
    /* Nothing held, or everybody holds all it asks for. */
    if (n == 0 || total <= 0 || nwant == 0)
        return 1.0;
    /* Water filling: the level L such that sum over users of min(cap_i, L)
     * is the total held, cap_i being what a satisfied user holds (it asks
     * no more) and unbounded for one that wants more.  Satisfied users below
     * the level take their cap, from the smallest up. */
    double *sat = hrm_alloc(n * sizeof(*sat));
    for (size_t i = 0; i < n; i++)
        if (!wants_more[i])
            sat[nsat++] = share[i];
    qsort(sat, nsat, sizeof(*sat), cmp_double);
    double rest = total, level = total / (double)n;
    for (size_t i = 0, left = n; i < nsat && sat[i] < level; i++) {
        rest -= sat[i];
        level = rest / (double)--left;
    }
    hrm_free(sat);
    double *x = hrm_alloc(n * sizeof(*x));
    for (size_t i = 0; i < n; i++) {
        double fair = wants_more[i] ? level : fmin(share[i], level);
        x[i] = fair > 0 ? share[i] / fair : 1.0;
    }
    double j = hrm_jain(x, n);
    hrm_free(x);
    return j;
}

double hrm_fairness_sigma(const double *s, size_t m, double *mean_out)
{
    double mean = hrm_mean(s, m);
    if (mean_out)
        *mean_out = mean;
    if (m == 0)
        return 0.0;
    double acc = 0.0;
    for (size_t i = 0; i < m; i++)
        acc += (s[i] - mean) * (s[i] - mean);
    return sqrt(acc / (double)m);
}

/* ---- ideal times ---- */

/* A node shape and how many nodes have it: slot counts are sums over nodes,
 * and real clusters have a handful of shapes. */
struct shape {
    int64_t cpu; /* milli-cores */
    int64_t gpu;
    int64_t count;
};

/* What the ideal-time formulas need from the cluster, computed once per summary
 * rather than once per job (a P4 run has 10,000 nodes and as many jobs). */
struct ideal_ctx {
    double disk_bw; /* D: bytes/s of a local read */
    struct shape *shapes;
    size_t nshapes, cap_shapes;
    int64_t *loads; /* scratch: slot loads of the list schedule */
    size_t cap_loads;
    int64_t *times; /* scratch: task times of one stage */
    size_t cap_times;
    int64_t *finish; /* scratch: finish time per stage of one job */
    size_t cap_finish;
};

static void ideal_ctx_init(struct ideal_ctx *ic, const struct hrm_cluster *c)
{
    memset(ic, 0, sizeof(*ic));
    /* D is the fastest local disk: the ideal is a best case, and in a cluster
     * whose nodes all use the default it is simply net.disk_bw. */
    ic->disk_bw = c->net.disk_bw;
    double best = 0.0;
    for (int32_t i = 0; i < c->nnodes; i++) {
        const struct hrm_node *n = &c->nodes[i];
        if (n->disk_bw > best)
            best = n->disk_bw;
        int64_t cpu = n->capacity.v[HRM_DIM_CPU], gpu = n->capacity.v[HRM_DIM_GPU];
        size_t k = 0;
        while (k < ic->nshapes && !(ic->shapes[k].cpu == cpu && ic->shapes[k].gpu == gpu))
            k++;
        if (k == ic->nshapes) {
            HRM_GROW(ic->shapes, ic->cap_shapes, ic->nshapes + 1);
            ic->shapes[k] = (struct shape){.cpu = cpu, .gpu = gpu, .count = 0};
            ic->nshapes++;
        }
        ic->shapes[k].count++;
    }
    if (best > 0.0)
        ic->disk_bw = best;
    if (!(ic->disk_bw > 0.0))
        ic->disk_bw = 160e6; /* the model's default; guards a hand-built cluster */
}

static void ideal_ctx_fini(struct ideal_ctx *ic)
{
    hrm_free(ic->shapes);
    hrm_free(ic->loads);
    hrm_free(ic->times);
    hrm_free(ic->finish);
}

/* Compute time on a speed-1.0 node plus reading every input block from local disk. */
static int64_t task_ideal_us(const struct hrm_workload *wl, const struct ideal_ctx *ic,
                             const struct hrm_task *t)
{
    int64_t bytes = 0;
    for (int32_t b = 0; b < t->nblocks; b++)
        bytes += wl->blocks[t->block_first + b].size;
    /* One conversion of the byte total, so rounding does not add up per block. */
    return t->duration_us + (int64_t)llround((double)bytes * 1e6 / ic->disk_bw);
}

/* How many copies of task t the whole cluster can run at once: GPUs per GPU
 * request for GPU tasks, else cpu requests that fit, node by node. */
static int64_t cluster_slots(const struct ideal_ctx *ic, const struct hrm_task *t)
{
    int64_t gpu = t->req.v[HRM_DIM_GPU], cpu = t->req.v[HRM_DIM_CPU];
    int64_t slots = 0;
    for (size_t k = 0; k < ic->nshapes; k++) {
        const struct shape *s = &ic->shapes[k];
        if (gpu > 0)
            slots += s->gpu / gpu * s->count;
        else if (cpu > 0)
            slots += s->cpu / cpu * s->count;
    }
    return slots;
}

static int cmp_int64_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* Min-heap sift-down on slot loads. */
static void heap_down(int64_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l] < h[m])
            m = l;
        if (r < n && h[r] < h[m])
            m = r;
        if (m == i)
            return;
        int64_t tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

/* Makespan of times[0..n) list-scheduled longest-first (LPT) on k identical slots. */
static int64_t lpt_makespan(struct ideal_ctx *ic, int64_t *times, size_t n, int64_t k)
{
    if (n == 0)
        return 0;
    qsort(times, n, sizeof(*times), cmp_int64_desc);
    if (k <= 0)
        k = 1;
    if ((uint64_t)k >= n)
        return times[0]; /* one slot each: the longest task decides */
    size_t ks = (size_t)k;
    HRM_GROW(ic->loads, ic->cap_loads, ks);
    memset(ic->loads, 0, ks * sizeof(*ic->loads));
    int64_t span = 0;
    for (size_t i = 0; i < n; i++) {
        /* The least-loaded slot is the heap root; all loads start equal (0),
         * which is a valid heap. */
        ic->loads[0] += times[i];
        if (ic->loads[0] > span)
            span = ic->loads[0];
        heap_down(ic->loads, ks, 0);
    }
    return span;
}

/*
 * Critical path of the job's stage DAG.  Stages are stored in a topological
 * order (a stage depends only on earlier ones), so one forward pass suffices.
 * m <= 0 means unlimited slots (hrm_job_ideal_us); otherwise each stage is
 * list-scheduled on max(1, floor(slots / m)) slots.
 */
static int64_t job_time(const struct hrm_workload *wl, struct ideal_ctx *ic, int32_t job, int32_t m)
{
    if (job < 0 || job >= wl->njobs)
        return 0;
    const struct hrm_job *j = &wl->jobs[job];
    if (j->nstages <= 0)
        return 0;
    HRM_GROW(ic->finish, ic->cap_finish, (size_t)j->nstages);
    int64_t end = 0;
    for (int32_t si = 0; si < j->nstages; si++) {
        const struct hrm_stage *s = &wl->stages[j->stage_first + si];
        int64_t start = 0;
        for (int32_t d = 0; d < s->ndeps; d++) {
            int32_t dep = wl->stage_deps[s->dep_first + d] - j->stage_first;
            if (dep >= 0 && dep < si && ic->finish[dep] > start)
                start = ic->finish[dep];
        }
        int64_t span = 0;
        if (s->ntasks > 0) {
            HRM_GROW(ic->times, ic->cap_times, (size_t)s->ntasks);
            int64_t k = INT64_MAX; /* unlimited slots unless m > 0 */
            for (int32_t ti = 0; ti < s->ntasks; ti++) {
                const struct hrm_task *t = &wl->tasks[s->task_first + ti];
                ic->times[ti] = task_ideal_us(wl, ic, t);
                if (m > 0) {
                    /* Tasks of a stage normally share one request; if they
                     * differ, the most demanding one sets the slot count. */
                    int64_t kt = cluster_slots(ic, t) / m;
                    if (kt < k)
                        k = kt;
                }
            }
            span = lpt_makespan(ic, ic->times, (size_t)s->ntasks, k < 1 ? 1 : k);
        }
        ic->finish[si] = start + span;
        if (ic->finish[si] > end)
            end = ic->finish[si];
    }
    return end;
}

int64_t hrm_job_ideal_us(const struct hrm_workload *wl, const struct hrm_cluster *c, int32_t job)
{
    struct ideal_ctx ic;
    ideal_ctx_init(&ic, c);
    int64_t t = job_time(wl, &ic, job, 0);
    ideal_ctx_fini(&ic);
    return t;
}

int64_t hrm_job_share_ideal_us(const struct hrm_workload *wl, const struct hrm_cluster *c,
                               int32_t job, int32_t m)
{
    struct ideal_ctx ic;
    ideal_ctx_init(&ic, c);
    int64_t t = job_time(wl, &ic, job, m < 1 ? 1 : m);
    ideal_ctx_fini(&ic);
    return t;
}

/* ---- run records ---- */

void hrm_series_push(struct hrm_series *s, int64_t t_us, double cpu, double gpu, int32_t running,
                     int32_t ready)
{
    if (s->n == s->cap) {
        /* Five parallel arrays share one capacity, so grow them together. */
        size_t cap = s->cap ? s->cap * 2 : 64;
        s->t_us = hrm_reallocarray(s->t_us, cap, sizeof(*s->t_us));
        s->cpu = hrm_reallocarray(s->cpu, cap, sizeof(*s->cpu));
        s->gpu = hrm_reallocarray(s->gpu, cap, sizeof(*s->gpu));
        s->running = hrm_reallocarray(s->running, cap, sizeof(*s->running));
        s->ready = hrm_reallocarray(s->ready, cap, sizeof(*s->ready));
        s->cap = cap;
    }
    s->t_us[s->n] = t_us;
    s->cpu[s->n] = cpu;
    s->gpu[s->n] = gpu;
    s->running[s->n] = running;
    s->ready[s->n] = ready;
    s->n++;
}

void hrm_series_fini(struct hrm_series *s)
{
    if (!s)
        return;
    hrm_free(s->t_us);
    hrm_free(s->cpu);
    hrm_free(s->gpu);
    hrm_free(s->running);
    hrm_free(s->ready);
    memset(s, 0, sizeof(*s));
}

void hrm_run_record_init(struct hrm_run_record *r, const struct hrm_cluster *c,
                         const struct hrm_workload *wl)
{
    memset(r, 0, sizeof(*r));
    r->cluster = c;
    r->wl = wl;
    size_t n = wl && wl->njobs > 0 ? (size_t)wl->njobs : 0;
    r->jobs = hrm_calloc(n ? n : 1, sizeof(*r->jobs));
    for (size_t j = 0; j < n; j++) {
        r->jobs[j].submit_us = wl->jobs[j].submit_us;
        r->jobs[j].first_start_us = -1;
        r->jobs[j].end_us = -1;
    }
    r->first_start_us = -1;
    r->last_end_us = -1;
}

void hrm_run_record_fini(struct hrm_run_record *r)
{
    if (!r)
        return;
    hrm_free(r->jobs);
    hrm_free(r->task_waits_us);
    hrm_free(r->sched_latency_us);
    hrm_series_fini(&r->series);
    memset(r, 0, sizeof(*r));
}

void hrm_run_record_wait(struct hrm_run_record *r, int64_t wait_us)
{
    HRM_GROW(r->task_waits_us, r->cap_waits, r->nwaits + 1);
    r->task_waits_us[r->nwaits++] = (double)wait_us;
}

void hrm_run_record_shares(struct hrm_run_record *r, const double *shares, const bool *wants_more,
                           size_t n)
{
    if (n == 0)
        return;
    r->share_jain_sum += hrm_jain_maxmin(shares, wants_more, n);
    r->share_samples++;
}

void hrm_run_record_sched_latency(struct hrm_run_record *r, int64_t latency_us)
{
    HRM_GROW(r->sched_latency_us, r->cap_latencies, r->nlatencies + 1);
    r->sched_latency_us[r->nlatencies++] = (double)latency_us;
}

/* ---- summary ---- */

/* Mean and p95 in seconds of n microsecond values (both 0 when n is 0). */
static void seconds_stats(const double *us, size_t n, double *mean, double *p95)
{
    *mean = *p95 = 0.0;
    if (n == 0)
        return;
    double *v = hrm_alloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = us[i] / 1e6;
    *mean = hrm_mean(v, n);
    *p95 = hrm_percentile(v, n, 95);
    hrm_free(v);
}

static bool job_done(const struct hrm_job_record *j)
{
    return j->end_us >= 0 && !j->failed;
}

/* s_j = t_id / t_sh; a job that took no time at all got its fair share. */
static double fairness_ratio(int64_t t_id, int64_t t_sh)
{
    if (t_sh <= 0)
        return 1.0;
    return (double)t_id / (double)t_sh;
}

void metrics_job_times(const struct hrm_workload *wl, const struct hrm_cluster *c, int32_t m,
                       int64_t *ideal_us, int64_t *share_us)
{
    struct ideal_ctx ic;
    ideal_ctx_init(&ic, c);
    for (int32_t j = 0; j < wl->njobs; j++) {
        if (ideal_us)
            ideal_us[j] = job_time(wl, &ic, j, 0);
        if (share_us)
            share_us[j] = job_time(wl, &ic, j, m < 1 ? 1 : m);
    }
    ideal_ctx_fini(&ic);
}

double metrics_fairness_ratio(int64_t t_id, int64_t t_sh)
{
    return fairness_ratio(t_id, t_sh);
}

void hrm_summarize(const struct hrm_run_record *r, const char *policy, struct hrm_summary *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->policy, sizeof(out->policy), "%s", policy ? policy : "");
    const struct hrm_workload *wl = r->wl;
    int32_t njobs = wl ? wl->njobs : 0;
    out->jobs = njobs;

    size_t cap = njobs > 0 ? (size_t)njobs : 1;
    double *resp = hrm_alloc(cap * sizeof(*resp));
    double *ideal = hrm_alloc(cap * sizeof(*ideal));
    double *delay = hrm_alloc(cap * sizeof(*delay));
    double *slow = hrm_alloc(cap * sizeof(*slow));
    double *fair = hrm_alloc(cap * sizeof(*fair));
    size_t ndone = 0, nslow = 0;

    struct ideal_ctx ic;
    bool have_cluster = r->cluster != NULL;
    if (have_cluster)
        ideal_ctx_init(&ic, r->cluster);
    int32_t m = wl ? hrm_workload_fair_m(wl) : 1;
    int64_t first = r->first_start_us, last = r->last_end_us;

    for (int32_t j = 0; j < njobs; j++) {
        const struct hrm_job_record *jr = &r->jobs[j];
        /* Recorders may keep only per-job times; derive the run's span from
         * them when the run-level fields were left unset. */
        if (r->first_start_us < 0 && jr->first_start_us >= 0 &&
            (first < 0 || jr->first_start_us < first))
            first = jr->first_start_us;
        if (jr->end_us > last)
            last = jr->end_us;
        if (jr->failed) {
            out->jobs_failed++;
            continue;
        }
        if (!job_done(jr))
            continue;
        int64_t t_sh = jr->end_us - jr->submit_us;
        int64_t t_ideal = have_cluster ? job_time(wl, &ic, j, 0) : 0;
        int64_t t_id = have_cluster ? job_time(wl, &ic, j, m) : 0;
        resp[ndone] = (double)t_sh / 1e6;
        ideal[ndone] = (double)t_ideal / 1e6;
        delay[ndone] = (double)(t_sh - t_ideal) / 1e6;
        fair[ndone] = fairness_ratio(t_id, t_sh);
        /* A job with nothing to do has no meaningful slowdown: leave it out
         * rather than divide by zero. */
        if (t_ideal > 0)
            slow[nslow++] = (double)t_sh / (double)t_ideal;
        ndone++;
    }
    out->jobs_done = (int32_t)ndone;

    out->response_mean_s = hrm_mean(resp, ndone);
    out->ideal_mean_s = hrm_mean(ideal, ndone);
    out->delay_mean_s = hrm_mean(delay, ndone);
    out->fairness_sigma = hrm_fairness_sigma(fair, ndone, &out->fairness_mean);
    out->jain_s = hrm_jain(fair, ndone);
    /* Samples come at a fixed interval, so their mean is the time average. */
    out->jain = r->share_samples > 0 ? r->share_jain_sum / (double)r->share_samples : 1.0;
    out->share_samples = r->share_samples;
    out->response_p50_s = hrm_percentile(resp, ndone, 50);
    out->response_p95_s = hrm_percentile(resp, ndone, 95);
    out->response_p99_s = hrm_percentile(resp, ndone, 99);
    out->slowdown_p50 = hrm_percentile(slow, nslow, 50);
    out->slowdown_p95 = hrm_percentile(slow, nslow, 95);

    /* The record is const and percentiles sort: work on copies, in seconds. */
    seconds_stats(r->task_waits_us, r->nwaits, &out->wait_mean_s, &out->wait_p95_s);
    seconds_stats(r->sched_latency_us, r->nlatencies, &out->sched_latency_mean_s,
                  &out->sched_latency_p95_s);

    out->makespan_s = first >= 0 && last > first ? (double)(last - first) / 1e6 : 0.0;
    out->cpu_util = r->cpu_capacity_area > 0 ? r->cpu_area / r->cpu_capacity_area : 0.0;
    out->gpu_util = r->gpu_capacity_area > 0 ? r->gpu_area / r->gpu_capacity_area : 0.0;
    out->bytes_local = r->bytes_local;
    out->bytes_rack = r->bytes_rack;
    out->bytes_cross = r->bytes_cross;
    out->tasks_done = r->tasks_done;
    out->task_failures = r->task_failures;
    out->preemptions = r->preemptions;
    out->tasks_lost = r->tasks_lost;
    out->events = r->events;
    out->spill_cache_bytes = r->spill_cache_bytes;
    out->spill_disk_bytes = r->spill_disk_bytes;

    if (have_cluster)
        ideal_ctx_fini(&ic);
    hrm_free(resp);
    hrm_free(ideal);
    hrm_free(delay);
    hrm_free(slow);
    hrm_free(fair);
}
