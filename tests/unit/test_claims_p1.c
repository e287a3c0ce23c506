/* Unit tests of P1's ablation switches: the paper's unclamped cost, N_j with blocked tasks, what a killed task keeps, paper=1. */
#include "hrm/metrics.h"
#include "hrm/sim.h"
#include "hrm/spec.h"
#include "test_flowpol.h"

/* 10 Gb core: B_s = 1.25e9 B/s, B_r = 125e6 B/s, disks 160e6 B/s.  A 1 GiB
 * block (1073741824 B) costs locally 6710.9 ms, in the rack 1.5 x 8589.9 =
 * 12884.9 ms, across racks 3 x 859.0 = 2577.0 ms literally, or 12884.9 ms
 * clamped (a cross-rack read also crosses the rack links). */
Test(claims_p1, literal_cost_lets_cross_rack_undercut_in_rack)
{
    struct world w;
    struct hrm_netcfg net = {.disk_bw = 160e6, .rack_bw = 125e6, .core_bw = 1.25e9};
    w_init_net(&w, &net);
    int32_t r0 = w_rack(&w), r1 = w_rack(&w);
    int32_t n0 = w_node(&w, r0, 1, 10 * GIB), n1 = w_node(&w, r0, 1, 10 * GIB);
    int32_t n2 = w_node(&w, r1, 1, 10 * GIB);
    w_job(&w);
    int32_t t = w_task(&w, GIB);
    w_block(&w, GIB, &n0, 1);
    w_begin(&w, NULL, NULL, 0);
    struct p1_cost clamped = {.c = w.c, .alpha1 = 1.5, .alpha2 = 3.0};
    struct p1_cost literal = {.c = w.c, .alpha1 = 1.5, .alpha2 = 3.0, .literal = true};
    cr_assert_eq(p1_cost_node(&clamped, w.s, t, n0), 6711);
    cr_assert_eq(p1_cost_node(&literal, w.s, t, n0), 6711);
    cr_assert_eq(p1_cost_node(&clamped, w.s, t, n1), 12885);
    cr_assert_eq(p1_cost_node(&literal, w.s, t, n1), 12885);
    cr_assert_eq(p1_cost_node(&clamped, w.s, t, n2), 12885);
    cr_assert_eq(p1_cost_node(&literal, w.s, t, n2), 2577); /* cheaper than in the rack */
    w_fini(&w);
}

/* Q = 6 GPUs, K = 2.  Job 0: stage a of 2 GPU tasks, stage b (after a) of 4;
 * job 1: 8 GPU tasks.  Held + ready: N = {2, 8}, floor(6/2) = 3 gives
 * {2, 3}, the leftover GPU goes to job 1: {2, 4}.  With the blocked tasks:
 * N = {6, 8}, A = {3, 3}. */
Test(claims_p1, nj_unfinished_counts_blocked_gpu_tasks)
{
    struct world w;
    w_init(&w);
    int32_t r = w_rack(&w);
    for (int i = 0; i < 6; i++)
        w_node(&w, r, 1, 10 * GIB);
    int32_t j0 = fx_job(w.wl, "j0", "u", 0);
    int32_t a = fx_stage(w.wl, "a", NULL, 0);
    fx_tasks(w.wl, 2, 1000, GIB, 1, GIB, 1000000);
    fx_stage(w.wl, "b", &a, 1);
    fx_tasks(w.wl, 4, 1000, GIB, 1, GIB, 1000000);
    int32_t j1 = w_job(&w);
    fx_tasks(w.wl, 8, 1000, GIB, 1, GIB, 1000000);
    w_begin(&w, NULL, NULL, 0);
    w_submit(&w, j0);
    w_submit(&w, j1);
    struct p1_shares now = {0}, paper = {.unfinished = true};
    p1_shares_compute(&now, w.s);
    p1_shares_compute(&paper, w.s);
    cr_assert_eq(now.demand[0], 2);
    cr_assert_eq(now.share[0], 2);
    cr_assert_eq(now.share[1], 4);
    cr_assert_eq(paper.demand[0], 6);
    cr_assert_eq(paper.demand[1], 8);
    cr_assert_eq(paper.share[0], 3);
    cr_assert_eq(paper.share[1], 3);
    p1_shares_fini(&now);
    p1_shares_fini(&paper);
    w_fini(&w);
}

Test(claims_p1, paper_set_and_its_override)
{
    struct p1_params p;
    static const char *const known[] = {"delay", "clamp", "nj_unfinished", "paper", NULL};
    const char *lit[] = {"paper=1"};
    struct hrm_params prm = {lit, 1};
    cr_assert_eq(p1_params_read(&p, &prm, known, "fs", NULL), 0);
    cr_assert_eq(p.delay, 0);
    cr_assert_eq(p.clamp, 0);
    cr_assert_eq(p.nj_unfinished, 1);
    const char *over[] = {"paper=1", "delay=1"};
    prm = (struct hrm_params){over, 2};
    cr_assert_eq(p1_params_read(&p, &prm, known, "fs", NULL), 0);
    cr_assert_eq(p.delay, 1, "an explicit key overrides the set");
    cr_assert_eq(p.clamp, 0);
    prm = (struct hrm_params){NULL, 0};
    cr_assert_eq(p1_params_read(&p, &prm, known, "fs", NULL), 0);
    cr_assert_eq(p.delay, 1);
    cr_assert_eq(p.clamp, 1);
    cr_assert_eq(p.nj_unfinished, 0);
    const char *bad[] = {"clamp=2"};
    prm = (struct hrm_params){bad, 1};
    struct hrm_error err = {{0}};
    cr_assert_lt(p1_params_read(&p, &prm, known, "fs", &err), 0);
    cr_assert(strstr(err.text, "clamp"), "%s", err.text);
}

/* One node with 2 GPUs, no latency.  Job 0 (t = 0): two 10 s GPU tasks,
 * both start at 0.  Job 1 (t = 4 s): one 10 s task.  Under gsp, A = {1, 1}:
 * job 0's younger task (task 1) is killed at 4 s and job 1's runs 4 -> 14.
 * Task 0 ends at 10 and task 1 restarts there: from scratch it ends at 20;
 * resumed with its 4 s done, at 16. */
static int64_t makespan_with(enum hrm_preempt_cost mode, int64_t *kills)
{
    struct hrm_netcfg net = {.latency_us = 0};
    struct hrm_cluster *c = hrm_cluster_new(&net);
    cr_assert_geq(hrm_cluster_add_rack(c, "r0", NULL), 0);
    struct hrm_node_desc n = {
        .name = "n0", .rack = 0, .cores = 16, .mem = 64 * GIB, .gpus = 2, .gpu_mem = 10 * GIB};
    cr_assert_geq(hrm_cluster_add_node(c, &n, NULL), 0);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j0", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 2, 1000, GIB, 1, GIB, 10000000);
    fx_job(wl, "j1", "u", 4000000);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 1, 1000, GIB, 1, GIB, 10000000);
    struct hrm_execution ex = {.preempt = mode};
    struct hrm_sim_config cfg = {.seed = 1, .execution = &ex};
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_sim_run(c, wl, "gsp", NULL, &cfg, &rec, &err), 0, "%s", err.text);
    int64_t end = rec.last_end_us;
    *kills = rec.preemptions;
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    return end;
}

Test(claims_p1, killed_task_restarts_or_resumes)
{
    int64_t kills;
    cr_assert_eq(makespan_with(HRM_PREEMPT_RESTART, &kills), 20000000);
    cr_assert_eq(kills, 1);
    cr_assert_eq(makespan_with(HRM_PREEMPT_KEEP_INPUT, &kills), 20000000); /* no input to keep */
    cr_assert_eq(makespan_with(HRM_PREEMPT_RESUME, &kills), 16000000);
    cr_assert_eq(kills, 1);
}
