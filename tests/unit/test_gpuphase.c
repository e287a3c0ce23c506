/* The simulator's GPU phase model (P0): stacked tasks overlap CPU and GPU phases. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "sim/gpuphase.h"

#define MS 1000ll

struct seen {
    int64_t now;
    int64_t end_at[4];
    int fail[4];
    int nended;
    int busy;          /* GPUs running kernels now */
    int64_t busy_area; /* integral of busy over time, GPU x us */
    int64_t busy_since;
};

static void on_end(void *arg, int32_t task, int32_t attempt, int fail)
{
    struct seen *s = arg;
    (void)attempt;
    s->end_at[task] = s->now;
    s->fail[task] = fail;
    s->nended++;
}

static void on_busy(void *arg, int delta)
{
    struct seen *s = arg;
    s->busy_area += (int64_t)s->busy * (s->now - s->busy_since);
    s->busy_since = s->now;
    s->busy += delta;
}

/* One node with one GPU; n tasks of `count` rounds of cpu_ms then gpu_ms. */
static struct hrm_workload *phased(int n, int64_t cpu_ms, int64_t gpu_ms, int32_t count)
{
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    for (int i = 0; i < n; i++) {
        fx_tasks(wl, 1, 1000, GIB, 1, GIB, count * (cpu_ms + gpu_ms) * MS);
        struct hrm_gpu_phases gp = {.cpu_us = cpu_ms * MS, .gpu_us = gpu_ms * MS, .count = count};
        struct hrm_error err;
        cr_assert_eq(hrm_workload_set_gpu_phases(wl, &gp, &err), 0, "%s", err.text);
    }
    return wl;
}

/* One node with one 10 GiB GPU, the workload, the hooks and the model. */
struct fx {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct seen s;
    struct gp_model *m;
};

static void fx_init(struct fx *f, int n, int64_t cpu_ms, int64_t gpu_ms, int32_t count)
{
    memset(f, 0, sizeof(*f));
    f->c = fx_cluster(1, 1, 8, 8 * GIB, 1, 10 * GIB, NULL);
    f->wl = phased(n, cpu_ms, gpu_ms, count);
    struct gp_hooks h = {.arg = &f->s, .end = on_end, .busy = on_busy};
    f->m = gp_new(f->c, f->wl, &h);
    cr_assert_not_null(f->m);
}

static void fx_fini(struct fx *f)
{
    gp_free(f->m);
    hrm_workload_free(f->wl);
    hrm_cluster_free(f->c);
}

static void drain(struct gp_model *m, struct seen *s)
{
    for (int64_t t; (t = gp_next(m)) != INT64_MAX;) {
        s->now = t;
        gp_run(m, t);
    }
}

Test(gpuphase, alone_a_task_takes_its_phases)
{
    struct fx f;
    fx_init(&f, 1, 60, 40, 10);
    gp_start(f.m, 0, 0, 1, 0, 0, 1.0, 0);
    drain(f.m, &f.s);
    cr_assert_eq(f.s.end_at[0], 1000 * MS); /* 10 x (60 + 40) ms */
    cr_assert_eq(f.s.busy_area, 400 * MS);  /* the GPU ran kernels 40 % of the time */
    cr_assert_eq(f.s.busy, 0);
    fx_fini(&f);
}

/*
 * Two tasks of 10 rounds of 60 ms CPU + 40 ms GPU stacked on one GPU, both
 * from 0.  Each round: both pre-process 60 ms on their own cores, then both
 * kernels share the GPU, each at half speed, ending 80 ms later: a round
 * takes 140 ms, so both end at 1.4 s — sooner than one after the other
 * (2.0 s), later than alone (1.0 s).  The GPU is busy 80 of every 140 ms.
 */
Test(gpuphase, two_stacked_tasks_beat_serial_but_not_alone)
{
    struct fx f;
    fx_init(&f, 2, 60, 40, 10);
    gp_start(f.m, 0, 0, 1, 0, 0, 1.0, 0);
    gp_start(f.m, 0, 1, 1, 0, 0, 1.0, 0);
    drain(f.m, &f.s);
    cr_assert_eq(f.s.nended, 2);
    cr_assert_eq(f.s.end_at[0], 1400 * MS);
    cr_assert_eq(f.s.end_at[1], 1400 * MS);
    cr_assert_lt(f.s.end_at[1], 2000 * MS);
    cr_assert_gt(f.s.end_at[1], 1000 * MS);
    cr_assert_eq(f.s.busy_area, 800 * MS);
    fx_fini(&f);
}

/* Offset by one CPU phase, the second task's kernels run while the first
 * pre-processes: with 50/50 phases the two interleave perfectly. */
Test(gpuphase, offset_tasks_interleave)
{
    struct fx f;
    fx_init(&f, 2, 50, 50, 4);
    gp_start(f.m, 0, 0, 1, 0, 0, 1.0, 0);
    f.s.now = 50 * MS;
    cr_assert_eq(gp_next(f.m), 50 * MS);
    gp_run(f.m, 50 * MS); /* task 0's kernels start */
    gp_start(f.m, 50 * MS, 1, 1, 0, 0, 1.0, 0);
    drain(f.m, &f.s);
    cr_assert_eq(f.s.end_at[0], 400 * MS);
    cr_assert_eq(f.s.end_at[1], 450 * MS);
    fx_fini(&f);
}

Test(gpuphase, removed_and_failing_tasks)
{
    struct fx f;
    fx_init(&f, 2, 60, 40, 10);
    gp_start(f.m, 0, 0, 1, 0, 0, 1.0, 0.3); /* fails after 3 of its 10 rounds */
    gp_start(f.m, 0, 1, 1, 0, 0, 1.0, 0);
    f.s.now = 60 * MS;
    cr_assert_eq(gp_next(f.m), 60 * MS);
    gp_run(f.m, 60 * MS);       /* both kernels start */
    gp_remove(f.m, 70 * MS, 1); /* killed in its first GPU phase */
    drain(f.m, &f.s);
    cr_assert_eq(f.s.nended, 1);
    cr_assert_eq(f.s.fail[0], 1);
    /* 0-60 CPU; 60-70 both kernels (task 0 gets 5 ms of work); then alone
     * 35 ms more: round 1 ends at 105 ms, rounds 2-3 take 100 ms each. */
    cr_assert_eq(f.s.end_at[0], 305 * MS);
    cr_assert_eq(f.s.busy, 0);
    fx_fini(&f);
}

Test(gpuphase, no_model_without_phases)
{
    struct hrm_cluster *c = fx_cluster(1, 1, 8, 8 * GIB, 1, 10 * GIB, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 1, 1000, GIB, 1, GIB, MS);
    struct seen s = {0};
    struct gp_hooks h = {.arg = &s, .end = on_end, .busy = on_busy};
    cr_assert_null(gp_new(c, wl, &h));
    cr_assert_null(hrm_workload_gpu_phases(wl, 0));
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* GPUs are independent: a stacked pair on GPU 0 takes 1.4 s (as above)
 * while a task alone on GPU 1 takes its 1.0 s; the model steps each GPU on
 * its own clock. */
Test(gpuphase, gpus_are_independent)
{
    struct hrm_cluster *c = fx_cluster(1, 1, 8, 8 * GIB, 2, 10 * GIB, NULL);
    struct hrm_workload *wl = phased(3, 60, 40, 10);
    struct seen s = {0};
    struct gp_hooks h = {.arg = &s, .end = on_end, .busy = on_busy};
    struct gp_model *m = gp_new(c, wl, &h);
    gp_start(m, 0, 0, 1, 0, 0, 1.0, 0);
    gp_start(m, 0, 1, 1, 0, 0, 1.0, 0);
    gp_start(m, 0, 2, 1, 0, 1, 1.0, 0);
    drain(m, &s);
    cr_assert_eq(s.nended, 3);
    cr_assert_eq(s.end_at[0], 1400 * MS);
    cr_assert_eq(s.end_at[1], 1400 * MS);
    cr_assert_eq(s.end_at[2], 1000 * MS);
    cr_assert_eq(s.busy_area, 800 * MS + 400 * MS);
    gp_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
