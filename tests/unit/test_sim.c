/* Simulator: timing on hand-worked cases, DAG order, data transfer, failures, determinism. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/sim.h"

#define SEC 1000000ll

struct run {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_run_record rec;
};

static int run_policy(struct run *r, const char *policy, const struct hrm_sim_config *cfg)
{
    struct hrm_error err = {{0}};
    hrm_run_record_init(&r->rec, r->c, r->wl);
    int rc = hrm_sim_run(r->c, r->wl, policy, NULL, cfg, &r->rec, &err);
    cr_assert_eq(rc, 0, "%s", err.text);
    return rc;
}

static void run_free(struct run *r)
{
    hrm_run_record_fini(&r->rec);
    hrm_workload_free(r->wl);
    hrm_cluster_free(r->c);
}

Test(sim, four_one_second_tasks_on_two_cores_take_two_seconds)
{
    struct run r = {.c = fx_cluster(1, 1, 2, 8 * GIB, 0, 0, NULL), .wl = hrm_workload_new()};
    fx_job(r.wl, "j", "u", 0);
    fx_stage(r.wl, "s", NULL, 0);
    fx_tasks(r.wl, 4, 1000, GIB, 0, 0, SEC);
    run_policy(&r, "fifo", NULL);
    cr_assert_eq(r.rec.jobs[0].submit_us, 0);
    cr_assert_eq(r.rec.jobs[0].first_start_us, 0);
    cr_assert_eq(r.rec.jobs[0].end_us, 2 * SEC);
    cr_assert_eq(r.rec.tasks_done, 4);
    cr_assert_eq(r.rec.nwaits, 4);
    /* two tasks waited 0 s, two waited 1 s */
    double total = 0;
    for (size_t i = 0; i < r.rec.nwaits; i++)
        total += r.rec.task_waits_us[i];
    cr_assert_float_eq(total, 2.0 * SEC, 1e-6);
    /* both cores busy the whole time */
    cr_assert_float_eq(r.rec.cpu_area / r.rec.cpu_capacity_area, 1.0, 1e-9);
    run_free(&r);
}

Test(sim, message_latency_delays_every_hop)
{
    struct hrm_netcfg net = {.latency_us = 1000};
    struct run r = {.c = fx_cluster(1, 1, 2, 8 * GIB, 0, 0, &net), .wl = hrm_workload_new()};
    fx_job(r.wl, "j", "u", 0);
    fx_stage(r.wl, "s", NULL, 0);
    fx_tasks(r.wl, 1, 1000, GIB, 0, 0, SEC);
    run_policy(&r, "fifo", NULL);
    /* submit -> central (1 ms), launch -> node (1 ms), run 1 s, end -> central
     * (1 ms), job end -> client (1 ms) */
    cr_assert_eq(r.rec.jobs[0].first_start_us, 2000);
    cr_assert_eq(r.rec.jobs[0].end_us, SEC + 4000);
    /* ready at the scheduler at 1 ms, decided at once, started one trip later */
    cr_assert_eq(r.rec.nlatencies, 1);
    cr_assert_float_eq(r.rec.sched_latency_us[0], 0.0, 1e-9);
    cr_assert_float_eq(r.rec.task_waits_us[0], 1000.0, 1e-9);
    run_free(&r);
}

Test(sim, dependent_stage_starts_after_its_parent_and_cpu_speed_scales_time)
{
    struct hrm_error err;
    struct hrm_cluster *c = hrm_cluster_new(NULL);
    hrm_cluster_add_rack(c, "r", &err);
    struct hrm_node_desc d = {.name = "fast", .rack = 0, .cores = 4, .mem = 8 * GIB,
                              .cpu_speed = 2.0};
    cr_assert_geq(hrm_cluster_add_node(c, &d, &err), 0);
    struct run r = {.c = c, .wl = hrm_workload_new()};
    fx_job(r.wl, "j", "u", 0);
    int a = fx_stage(r.wl, "map", NULL, 0);
    fx_tasks(r.wl, 2, 1000, GIB, 0, 0, 4 * SEC);
    int32_t deps[] = {a};
    fx_stage(r.wl, "reduce", deps, 1);
    fx_tasks(r.wl, 1, 1000, GIB, 0, 0, 2 * SEC);
    run_policy(&r, "fifo", NULL);
    /* map 4 s / speed 2 = 2 s, then reduce 2 s / 2 = 1 s */
    cr_assert_eq(r.rec.jobs[0].end_us, 3 * SEC);
    run_free(&r);
}

Test(sim, input_is_read_from_the_nearest_replica_over_the_network)
{
    /* disk 100 MB/s, NIC 50 MB/s, core 25 MB/s */
    struct hrm_netcfg net = {.disk_bw = 100e6, .rack_bw = 50e6, .core_bw = 25e6};
    struct run r = {.c = fx_cluster(2, 1, 1, 8 * GIB, 0, 0, &net), .wl = hrm_workload_new()};
    struct hrm_error err;
    fx_job(r.wl, "j", "u", 0);
    fx_stage(r.wl, "s", NULL, 0);
    /* one task needs the whole node; its 100 MB block lives only on the other rack's node */
    fx_tasks(r.wl, 1, 1000, GIB, 0, 0, SEC);
    int32_t where[] = {1};
    cr_assert_geq(hrm_workload_add_block(r.wl, 100000000, where, 1, &err), 0);
    /* a second task whose block is on both nodes: it reads locally */
    fx_tasks(r.wl, 1, 1000, GIB, 0, 0, SEC);
    int32_t both[] = {1, 0};
    cr_assert_geq(hrm_workload_add_block(r.wl, 50000000, both, 2, &err), 0);
    run_policy(&r, "fifo", NULL);
    /* fifo puts task 0 on n0 (first free node) and task 1 on n1. Task 0:
     * 100 MB cross-rack, held to 25 MB/s by the rack uplink = 4 s, then 1 s
     * compute.  Task 1: 50 MB local; it shares n1's disk with task 0's read,
     * which max-min fairness leaves it 75 MB/s of, so it ends well before. */
    cr_assert_eq(r.rec.bytes_cross, 100000000);
    cr_assert_eq(r.rec.bytes_local, 50000000);
    cr_assert_eq(r.rec.bytes_rack, 0);
    cr_assert_eq(r.rec.jobs[0].end_us, 5 * SEC);
    run_free(&r);
}

static struct run failing_world(void)
{
    struct run r = {.c = fx_cluster(2, 2, 4, 8 * GIB, 0, 0, NULL), .wl = hrm_workload_new()};
    for (int j = 0; j < 6; j++) {
        char name[16];
        snprintf(name, sizeof(name), "j%d", j);
        fx_job(r.wl, name, j % 2 ? "a" : "b", j * SEC / 2);
        int a = fx_stage(r.wl, "a", NULL, 0);
        fx_tasks(r.wl, 10, 1000, GIB, 0, 0, SEC + j * 1000);
        int32_t deps[] = {a};
        fx_stage(r.wl, "b", deps, 1);
        fx_tasks(r.wl, 3, 2000, GIB, 0, 0, SEC / 2);
    }
    return r;
}

Test(sim, injected_task_failures_are_retried_until_done)
{
    struct run r = failing_world();
    struct hrm_faults f = {.task_fail_prob = 0.3, .max_attempts = 1000};
    struct hrm_sim_config cfg = {.seed = 7, .faults = &f};
    run_policy(&r, "fifo", &cfg);
    cr_assert_gt(r.rec.task_failures, 0);
    cr_assert_eq(r.rec.tasks_done, r.wl->ntasks, "every task eventually succeeds once");
    for (int j = 0; j < r.wl->njobs; j++) {
        cr_assert_geq(r.rec.jobs[j].end_us, 0);
        cr_assert_not(r.rec.jobs[j].failed);
    }
    run_free(&r);
}

Test(sim, a_task_out_of_attempts_fails_its_job_and_the_run_ends)
{
    struct run r = failing_world();
    struct hrm_faults f = {.task_fail_prob = 1.0, .max_attempts = 2};
    struct hrm_sim_config cfg = {.seed = 1, .faults = &f};
    run_policy(&r, "fifo", &cfg);
    for (int j = 0; j < r.wl->njobs; j++) {
        cr_assert(r.rec.jobs[j].failed);
        cr_assert_geq(r.rec.jobs[j].end_us, 0);
    }
    cr_assert_eq(r.rec.tasks_done, 0);
    run_free(&r);
}

Test(sim, tasks_on_a_failed_node_run_again_elsewhere)
{
    struct run r = {.c = fx_cluster(1, 2, 2, 8 * GIB, 0, 0, NULL), .wl = hrm_workload_new()};
    fx_job(r.wl, "j", "u", 0);
    fx_stage(r.wl, "s", NULL, 0);
    fx_tasks(r.wl, 4, 1000, GIB, 0, 0, 10 * SEC);
    struct hrm_node_fault nf = {.node = 0, .at_us = 5 * SEC, .recover_us = 0};
    struct hrm_faults f = {.node_faults = &nf, .nnode_faults = 1};
    struct hrm_sim_config cfg = {.seed = 1, .faults = &f};
    run_policy(&r, "fifo", &cfg);
    /* n0's two tasks are lost at 5 s and rerun on n1 after its two finish at 10 s */
    cr_assert_eq(r.rec.tasks_lost, 2);
    cr_assert_eq(r.rec.tasks_done, 4);
    cr_assert_eq(r.rec.jobs[0].end_us, 20 * SEC);
    run_free(&r);
}

Test(sim, closed_loop_keeps_max_parallel_jobs_in_flight)
{
    struct run r = {.c = fx_cluster(1, 1, 8, 8 * GIB, 0, 0, NULL), .wl = hrm_workload_new()};
    for (int j = 0; j < 3; j++) {
        char name[16];
        snprintf(name, sizeof(name), "j%d", j);
        fx_job(r.wl, name, "u", 0);
        fx_stage(r.wl, "s", NULL, 0);
        fx_tasks(r.wl, 1, 1000, GIB, 0, 0, SEC);
    }
    r.wl->max_parallel = 1;
    run_policy(&r, "fifo", NULL);
    cr_assert_eq(r.rec.jobs[1].submit_us, r.rec.jobs[0].end_us);
    cr_assert_eq(r.rec.jobs[2].submit_us, r.rec.jobs[1].end_us);
    cr_assert_eq(r.rec.jobs[2].end_us, 3 * SEC);
    run_free(&r);
}

Test(sim, same_seed_same_record_different_seed_different_failures)
{
    struct hrm_faults f = {.task_fail_prob = 0.2, .max_attempts = 100};
    struct hrm_sim_config cfg = {.seed = 42, .faults = &f, .sample_interval_us = SEC / 4};
    struct run a = failing_world(), b = failing_world(), d = failing_world();
    run_policy(&a, "random", &cfg);
    run_policy(&b, "random", &cfg);
    cfg.seed = 43;
    run_policy(&d, "random", &cfg);
    cr_assert_eq(memcmp(a.rec.jobs, b.rec.jobs, sizeof(*a.rec.jobs) * (size_t)a.wl->njobs), 0);
    cr_assert_eq(a.rec.nwaits, b.rec.nwaits);
    cr_assert_eq(memcmp(a.rec.task_waits_us, b.rec.task_waits_us,
                        sizeof(double) * a.rec.nwaits), 0);
    cr_assert_eq(a.rec.events, b.rec.events);
    cr_assert_eq(a.rec.series.n, b.rec.series.n);
    cr_assert_eq(a.rec.task_failures, b.rec.task_failures);
    bool differs = a.rec.task_failures != d.rec.task_failures || a.rec.events != d.rec.events ||
                   memcmp(a.rec.jobs, d.rec.jobs, sizeof(*a.rec.jobs) * (size_t)a.wl->njobs);
    cr_assert(differs, "another seed draws other failures");
    run_free(&a);
    run_free(&b);
    run_free(&d);
}

/* Jain over allocation shares, sampled every second, of user a's na tasks of
 * da on one node of `cores` cores beside user b's nb tasks of db arriving at
 * b_at (every task 1 core, 1 GiB); at least min_samples samples. */
static double jain_two_users(const char *policy, int cores, int na, int64_t da, int64_t b_at,
                             int nb, int64_t db, int64_t min_samples)
{
    struct run r = {.c = fx_cluster(1, 1, cores, 8 * GIB, 0, 0, NULL), .wl = hrm_workload_new()};
    fx_job(r.wl, "a", "ua", 0);
    fx_stage(r.wl, "s", NULL, 0);
    fx_tasks(r.wl, na, 1000, GIB, 0, 0, da);
    fx_job(r.wl, "b", "ub", b_at);
    fx_stage(r.wl, "s", NULL, 0);
    fx_tasks(r.wl, nb, 1000, GIB, 0, 0, db);
    struct hrm_sim_config cfg = {.sample_interval_us = SEC};
    run_policy(&r, policy, &cfg);
    struct hrm_summary s;
    hrm_summarize(&r.rec, policy, &s);
    cr_assert_gt(s.share_samples, min_samples, "%s: one sample a second", policy);
    run_free(&r);
    return s.jain;
}

/* User a's job fills both cores for 20 s; user b's arrives at 1 s.  FIFO
 * keeps b waiting (Jain 0.5: a holds everything while b, wanting more,
 * holds nothing) until a is done; Fair gives b each core a frees from 10 s
 * on (shares 0.5 and 0.5: Jain 1). */
Test(sim, jain_samples_users_allocation_shares)
{
    double fifo = jain_two_users("fifo", 2, 4, 10 * SEC, SEC, 4, 10 * SEC, 30);
    double fair = jain_two_users("fair", 2, 4, 10 * SEC, SEC, 4, 10 * SEC, 30);
    cr_assert(fifo > 0.5 && fifo < 0.9, "fifo starves b for half the run: %f", fifo);
    cr_assert_gt(fair, fifo + 0.05, "fair %f vs fifo %f", fair, fifo);
}

/* User a runs one 1-core task for 25.5 s and asks no more; user b's six
 * 1-core tasks of 10.5 s take the other 3 cores in two waves.  Shares 0.25
 * and 0.75 differ, but a holds all it asks and b all that is left: the
 * allocation is max-min fair throughout, so Jain is 1 under any policy that
 * keeps the cores busy (counting a as deprived would give 0.8 in the waves). */
Test(sim, jain_does_not_count_a_user_asking_no_more_as_deprived)
{
    static const char *const pols[] = {"fifo", "drf", "fgm"};
    for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++)
        cr_assert_float_eq(jain_two_users(pols[i], 4, 1, 25500000, 0, 6, 10500000, 20), 1.0, 1e-9,
                           "%s", pols[i]);
}

Test(sim, unknown_policy_is_an_error_not_a_crash)
{
    struct run r = failing_world();
    struct hrm_error err = {{0}};
    hrm_run_record_init(&r.rec, r.c, r.wl);
    int rc = hrm_sim_run(r.c, r.wl, "nosuch", NULL, NULL, &r.rec, &err);
    cr_assert_lt(rc, 0);
    cr_assert_neq(strstr(err.text, "nosuch"), NULL, "%s", err.text);
    run_free(&r);
}
