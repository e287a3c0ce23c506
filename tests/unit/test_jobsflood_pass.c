/* A bound on one pass's starts (hrm_central_config.max_starts_per_pass, the master's
 * --max-pass-starts), for every registered policy: a pass starts at most that many tasks, they
 * are the first the unbounded pass starts, the next pass is armed at once, and the passes
 * after it place the rest. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/central.h"
#include "hrm/policy.h"
#include "test_jobsflood_env.h"

#define BOUND 3

/* Three users' CPU jobs and a GPU job on 8 nodes of 8 cores and 2 GPUs: more tasks than fit. */
static struct hrm_workload *workload(void)
{
    struct hrm_workload *wl = hrm_workload_new();
    const char *users[] = {"u0", "u1", "u2", "u0"};
    for (int j = 0; j < 4; j++) {
        char name[16];
        snprintf(name, sizeof(name), "j%d", j);
        fx_job(wl, name, users[j], 0);
        fx_stage(wl, "s", NULL, 0);
        fx_tasks(wl, 30, 1000, GIB, 0, 0, 1000000);
    }
    fx_job(wl, "g", "u3", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 12, 1000, GIB, 1, 4 * GIB, 1000000);
    return wl;
}

struct run {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_central *central;
    struct jf_world w;
};

static void run_open(struct run *r, const char *policy, int32_t bound)
{
    memset(r, 0, sizeof(*r));
    r->c = fx_cluster(2, 4, 8, 32 * GIB, 2, 16 * GIB, NULL);
    r->wl = workload();
    struct hrm_central_config cfg = {.pass_delay_us = 1000, .max_starts_per_pass = bound};
    r->central = jf_central(policy, 7, r->c, r->wl, &cfg, NULL);
    jf_world_init(&r->w, 1000000);
    for (int32_t j = 0; j < r->wl->njobs; j++) {
        struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = j};
        cr_assert_eq(hrm_central_on_msg(r->central, &r->w.env, &sub), 0, "%s", policy);
    }
}

/* Runs the armed pass; the starts it made. */
static size_t run_pass(struct run *r, const char *policy)
{
    cr_assert(r->w.armed, "%s: a pass is armed", policy);
    r->w.armed = false;
    r->w.now = r->w.armed_at;
    size_t had = r->w.nruns;
    cr_assert_eq(hrm_central_on_timer(r->central, &r->w.env, 1), 0, "%s: the pass", policy);
    return r->w.nruns - had;
}

static void run_close(struct run *r)
{
    hrm_central_free(r->central);
    hrm_workload_free(r->wl);
    hrm_cluster_free(r->c);
    hrm_free(r->w.runs);
}

Test(jobsflood_pass, every_policy_starts_at_most_the_bound_per_pass_and_then_the_rest)
{
    for (size_t i = 0; i < hrm_policy_count(); i++) {
        const char *name = hrm_policy_at(i)->name;
        struct run whole, bounded;
        run_open(&whole, name, 0);
        size_t all = run_pass(&whole, name);
        cr_assert_gt(all, BOUND, "%s: the unbounded pass starts more than the bound (%zu)", name,
                     all);
        cr_assert_eq(hrm_central_stats(whole.central)->bounded_passes, 0, "%s", name);

        run_open(&bounded, name, BOUND);
        size_t first = run_pass(&bounded, name);
        cr_assert_eq(first, BOUND, "%s: the first pass starts the bound (%zu)", name, first);
        /* The ones the unbounded pass starts first, in its order: nobody loses their place. */
        for (size_t k = 0; k < BOUND; k++)
            cr_assert_eq(bounded.w.runs[k].task, whole.w.runs[k].task, "%s: start %zu", name, k);
        /* The rest is the next pass's, armed at once (not after the pass delay). */
        cr_assert(bounded.w.armed, "%s: the next pass is armed", name);
        cr_assert_eq(bounded.w.armed_at, bounded.w.now, "%s: at once", name);
        int passes = 1;
        while (bounded.w.armed && passes < 1000) {
            size_t n = run_pass(&bounded, name);
            cr_assert_leq(n, BOUND, "%s: pass %d started %zu", name, passes, n);
            passes++;
        }
        cr_assert_not(bounded.w.armed, "%s: the passes end", name);
        /* As many as the single pass placed, in bounded passes (the last may be short). */
        cr_assert_eq(bounded.w.nruns, all, "%s: %zu started in bounded passes, %zu in one",
                     name, bounded.w.nruns, all);
        int64_t nbounded = hrm_central_stats(bounded.central)->bounded_passes;
        cr_assert_geq(nbounded, (int64_t)(all - 1) / BOUND, "%s: %lld bounded passes", name,
                      (long long)nbounded);
        run_close(&whole);
        run_close(&bounded);
    }
}

/* A task ending re-arms with the pass delay as before: the bound changes only what follows a
 * pass that reached it. */
Test(jobsflood_pass, a_pass_under_the_bound_arms_nothing)
{
    struct run r;
    run_open(&r, "drf", 1000);
    size_t n = run_pass(&r, "drf");
    cr_assert_gt(n, 0);
    cr_assert_lt(n, 1000);
    cr_assert_not(r.w.armed);
    cr_assert_eq(hrm_central_stats(r.central)->bounded_passes, 0);
    run_close(&r);
}
