/* Distributed simulator: hand-worked timings, every policy, determinism. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/dsim.h"
#include "hrm/rng.h"
#include "hrm/sim.h"

#define MS 1000ll

struct run {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_run_record rec;
    struct hrm_dsim_stats st;
};

static int run_policy(struct run *r, const char *policy, const char *const *params, size_t n,
                      uint64_t seed)
{
    struct hrm_error err = {{0}};
    struct hrm_params p = {.items = params, .count = n};
    struct hrm_sim_config cfg = {.seed = seed};
    hrm_run_record_init(&r->rec, r->c, r->wl);
    int rc = hrm_dsim_run_ex(r->c, r->wl, policy, &p, &cfg, NULL, &r->rec, &r->st, &err);
    cr_assert_eq(rc, 0, "%s: %s", policy, err.text);
    return rc;
}

static void one_task(struct run *r, int cores, int64_t latency)
{
    struct hrm_netcfg net = {.latency_us = latency};
    r->c = fx_cluster(1, 1, cores, 8 * GIB, 0, 0, &net);
    r->wl = hrm_workload_new();
    fx_job(r->wl, "j", "u", 0);
    fx_stage(r->wl, "s", NULL, 0);
    fx_tasks(r->wl, 1, 1000, GIB, 0, 0, 100 * MS);
}

static void run_free(struct run *r)
{
    hrm_run_record_fini(&r->rec);
    hrm_workload_free(r->wl);
    hrm_cluster_free(r->c);
}

Test(dsim, two_phase_costs_a_probe_round_trip_before_the_run)
{
    struct run r;
    one_task(&r, 1, MS);
    run_policy(&r, "dhrm", NULL, 0, 1);
    /* submit 0 -> scheduler 1 ms -> hold at the node 2 ms -> reply 3 ms -> run
     * at the node 4 ms; 100 ms; end -> scheduler 105 ms -> client 106 ms */
    cr_assert_eq(r.rec.jobs[0].first_start_us, 4 * MS);
    cr_assert_eq(r.rec.jobs[0].end_us, 106 * MS);
    cr_assert_eq(r.rec.nwaits, 1);
    cr_assert_float_eq(r.rec.task_waits_us[0], 3 * MS, 1e-9, "ready at 1 ms, start at 4 ms");
    cr_assert_eq(r.rec.nlatencies, 1);
    cr_assert_float_eq(r.rec.sched_latency_us[0], 2 * MS, 1e-9, "decided at 3 ms");
    cr_assert_eq(r.rec.tasks_done, 1);
    cr_assert_eq(r.st.probes, 1, "distinct queues: there is one");
    run_free(&r);
}

Test(dsim, random_placement_sends_the_run_at_once_and_ideal_has_no_overhead)
{
    struct run r;
    one_task(&r, 1, MS);
    run_policy(&r, "d-random", NULL, 0, 1);
    cr_assert_eq(r.rec.jobs[0].first_start_us, 2 * MS);
    cr_assert_eq(r.rec.jobs[0].end_us, 104 * MS);
    hrm_run_record_fini(&r.rec);
    run_policy(&r, "ideal", NULL, 0, 1);
    cr_assert_eq(r.rec.jobs[0].end_us, 100 * MS);
    run_free(&r);
}

Test(dsim, central_decision_time_is_the_schedulers_own_queue)
{
    struct run r;
    struct hrm_netcfg net = {.latency_us = 0};
    r.c = fx_cluster(1, 1, 8, 16 * GIB, 0, 0, &net);
    r.wl = hrm_workload_new();
    fx_job(r.wl, "j", "u", 0);
    fx_stage(r.wl, "s", NULL, 0);
    fx_tasks(r.wl, 8, 1000, GIB, 0, 0, MS);
    const char *p[] = {"decision_us=10000"};
    run_policy(&r, "central-queued", p, 1, 1);
    /* 8 decisions of 10 ms, the last task ends 1 ms after the 8th */
    cr_assert_eq(r.rec.jobs[0].end_us, 81 * MS);
    hrm_run_record_fini(&r.rec);
    run_policy(&r, "dhrm-batch", NULL, 0, 1);
    cr_assert_eq(r.rec.jobs[0].end_us, MS, "no latency: all 8 at once");
    run_free(&r);
}

/* A small open-loop experiment: nodes x 4 cores, Poisson jobs of 20 tasks of
 * 50..150 ms at about load of the cores. */
static void experiment(struct run *r, int nodes, int jobs, double load, uint64_t seed)
{
    struct hrm_netcfg net = {.latency_us = MS};
    r->c = fx_cluster(2, nodes / 2, 4, 16 * GIB, 0, 0, &net);
    r->wl = hrm_workload_new();
    struct hrm_rng rng;
    hrm_rng_seed(&rng, seed);
    double rate = load * nodes * 4 / (20 * 0.1), t = 0;
    char name[32];
    for (int j = 0; j < jobs; j++) {
        snprintf(name, sizeof(name), "j%d", j);
        fx_job(r->wl, name, "u", (int64_t)(t * 1e6));
        fx_stage(r->wl, "s", NULL, 0);
        for (int k = 0; k < 20; k++)
            fx_tasks(r->wl, 1, 1000, GIB, 0, 0, (int64_t)(50 * MS + hrm_rng_below(&rng, 100 * MS)));
        t += hrm_rng_exp(&rng, 1.0 / rate);
    }
}

Test(dsim, every_policy_finishes_every_job)
{
    struct run r;
    experiment(&r, 40, 60, 0.8, 5);
    for (size_t i = 0; i < hrm_dsim_policy_count(); i++) {
        const char *p = hrm_dsim_policy_name(i);
        const char *params[] = {"instances=3"};
        bool takes = strcmp(p, "ideal") != 0 && strcmp(p, "central-queued") != 0;
        run_policy(&r, p, params, takes ? 1 : 0, 1);
        struct hrm_summary s;
        hrm_summarize(&r.rec, p, &s);
        cr_assert_eq(s.jobs_done, 60, "%s", p);
        cr_assert_eq(r.rec.tasks_done, 60 * 20, "%s", p);
        cr_assert_geq(s.slowdown_p50, 1.0 - 1e-9, "%s: never faster than ideal", p);
        hrm_run_record_fini(&r.rec);
        memset(&r.rec, 0, sizeof(r.rec));
    }
    hrm_workload_free(r.wl);
    hrm_cluster_free(r.c);
}

Test(dsim, same_seed_same_run_for_every_policy)
{
    struct run a, b;
    experiment(&a, 40, 60, 0.9, 9);
    experiment(&b, 40, 60, 0.9, 9);
    for (size_t i = 0; i < hrm_dsim_policy_count(); i++) {
        const char *p = hrm_dsim_policy_name(i);
        run_policy(&a, p, NULL, 0, 42);
        run_policy(&b, p, NULL, 0, 42);
        cr_assert_eq(a.rec.events, b.rec.events, "%s", p);
        cr_assert_eq(a.st.messages, b.st.messages, "%s", p);
        for (int j = 0; j < 60; j++) {
            cr_assert_eq(a.rec.jobs[j].end_us, b.rec.jobs[j].end_us, "%s job %d", p, j);
            cr_assert_eq(a.rec.jobs[j].first_start_us, b.rec.jobs[j].first_start_us);
        }
        cr_assert_eq(a.rec.nwaits, b.rec.nwaits);
        cr_assert_eq(
            memcmp(a.rec.task_waits_us, b.rec.task_waits_us, a.rec.nwaits * sizeof(double)), 0,
            "%s", p);
        hrm_run_record_fini(&a.rec);
        hrm_run_record_fini(&b.rec);
    }
    hrm_workload_free(a.wl);
    hrm_cluster_free(a.c);
    hrm_workload_free(b.wl);
    hrm_cluster_free(b.c);
}

Test(dsim, the_negotiator_moves_tasks_when_queues_are_uneven)
{
    struct run r;
    experiment(&r, 40, 200, 0.95, 3);
    /* per-task two-phase placement leaves uneven queues: DHRM multi-way
     * with the negotiator must move some of their tasks */
    const char *params[] = {"hw_ms=5"};
    run_policy(&r, "dhrm-nego", params, 1, 1);
    cr_assert_gt(r.st.migrate_requests, 0);
    cr_assert_gt(r.st.matches, 0);
    cr_assert_gt(r.st.migrated, 0);
    cr_assert_eq(r.rec.tasks_done, 200 * 20);
    run_free(&r);
}

Test(dsim, hrm_sim_run_dispatches_and_parameters_are_checked)
{
    struct run r;
    one_task(&r, 2, MS);
    struct hrm_error err = {{0}};
    struct hrm_sim_config cfg = {.seed = 1};
    hrm_run_record_init(&r.rec, r.c, r.wl);
    cr_assert_eq(hrm_sim_run(r.c, r.wl, "dhrm-nego", NULL, &cfg, &r.rec, &err), 0, "%s", err.text);
    cr_assert_eq(r.rec.tasks_done, 1);
    hrm_run_record_fini(&r.rec);
    const char *bad[] = {"hw_ms=5"};
    struct hrm_params p = {.items = bad, .count = 1};
    hrm_run_record_init(&r.rec, r.c, r.wl);
    cr_assert_eq(hrm_sim_run(r.c, r.wl, "sparrow", &p, &cfg, &r.rec, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "hw_ms"), "%s", err.text);
    const char *bad2[] = {"d=0.5"};
    p.items = bad2;
    cr_assert_eq(hrm_sim_run(r.c, r.wl, "dhrm", &p, &cfg, &r.rec, &err), -HRM_ESPEC);
    cr_assert(hrm_dsim_policy_known("sparrow-batch"));
    cr_assert(!hrm_dsim_policy_known("fifo"));
    run_free(&r);
}
