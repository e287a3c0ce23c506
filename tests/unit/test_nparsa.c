/* NPARSA: job typing at the threshold, scoring on worked numbers, typed placement. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/policy.h"
#include "hrm/sim.h"
#include "policy/nparsa_private.h"

#define SEC 1000000ll

/* One job of ntasks tasks of cpu milli-cores and mem bytes. */
static struct hrm_workload *one_job(int ntasks, int64_t cpu, int64_t mem)
{
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, ntasks, cpu, mem, 0, 0, SEC);
    return wl;
}

Test(nparsa, typing_at_the_threshold_is_cpu_intensive)
{
    struct hrm_cluster *c = fx_cluster(1, 1, 64, 256 * GIB, 0, 0, NULL);
    /* J = 11 GiB / 10 cores = 1.1 exactly. */
    struct hrm_workload *at = one_job(1, 10000, 11 * GIB);
    struct hrm_state *s = hrm_state_new(c, at);
    cr_assert_float_eq(nparsa_job_ratio(s, 0), 1.1, 1e-12);
    cr_assert_eq(nparsa_job_type(s, 0, 1.1), NPARSA_CPU, "J = threshold is not above it");
    cr_assert_eq(nparsa_job_type(s, 0, 1.0), NPARSA_MEM);
    hrm_state_free(s);
    hrm_workload_free(at);
    struct hrm_workload *above = one_job(1, 4000, 4 * GIB + GIB / 2); /* J = 1.125 */
    s = hrm_state_new(c, above);
    cr_assert_eq(nparsa_job_type(s, 0, 1.1), NPARSA_MEM);
    hrm_state_free(s);
    hrm_workload_free(above);
    struct hrm_workload *sort = one_job(4, 1000, 2 * GIB); /* the paper's Sort: 8 GB / 4 cores */
    s = hrm_state_new(c, sort);
    cr_assert_float_eq(nparsa_job_ratio(s, 0), 2.0, 1e-12);
    cr_assert_eq(nparsa_job_type(s, 0, 1.1), NPARSA_MEM);
    hrm_state_free(s);
    hrm_workload_free(sort);
    hrm_cluster_free(c);
}

Test(nparsa, score_normalises_each_indicator_by_its_cluster_maximum)
{
    /* Two nodes; A has half of B's cores and all the rest equal; B is idle,
     * A has half its cpu free. */
    struct nparsa_node nodes[2] = {
        {.s = {4, 8, 100, 1.0}, .d = {0.5, 1, 100, 1}},
        {.s = {8, 8, 100, 1.0}, .d = {1.0, 1, 100, 1}},
    };
    struct nparsa_weights w = {
        .alpha = 0.5, .s = {0.173, 0.641, 0.113, 0.073}, .d = {0.422, 0.344, 0.156, 0.078}};
    double score[2];
    nparsa_score(nodes, 2, &w, score);
    /* A: S = .173*0.5 + .641 + .113 + .073 = 0.9135; D = .422*0.5 + .344 + .156 + .078 = 0.789 */
    cr_assert_float_eq(score[0], 0.5 * 0.9135 + 0.5 * 0.789, 1e-12);
    cr_assert_float_eq(score[1], 1.0, 1e-12);
    /* An indicator that is 0 everywhere contributes nothing (no 0/0). */
    struct nparsa_node zero[2] = {{.s = {4, 8, 0, 1}, .d = {1, 1, 1, 0}},
                                  {.s = {4, 8, 0, 1}, .d = {1, 1, 1, 0}}};
    nparsa_score(zero, 2, &w, score);
    cr_assert_float_eq(score[0], 0.5 * (1 - 0.113) + 0.5 * (1 - 0.078), 1e-12);
}

/* Node A: fast SSD, small disk, slower cpu; node B: HDD, large disk, faster cpu.
 * With the paper's weights a CPU-intensive job scores A higher
 * (0.9487 vs 0.9375) and a memory-intensive one B (0.8952 vs 0.8838). */
static struct hrm_cluster *two_kinds(void)
{
    struct hrm_error err;
    struct hrm_cluster *c = hrm_cluster_new(NULL);
    hrm_cluster_add_rack(c, "r", &err);
    struct hrm_node_desc a = {.name = "ssd",
                              .rack = 0,
                              .cores = 8,
                              .mem = 16 * GIB,
                              .disk_size = 100 * GIB,
                              .disk_kind = HRM_DISK_SSD,
                              .disk_bw = 500e6,
                              .cpu_speed = 1.0};
    struct hrm_node_desc b = {.name = "hdd",
                              .rack = 0,
                              .cores = 8,
                              .mem = 16 * GIB,
                              .disk_size = 500 * GIB,
                              .disk_kind = HRM_DISK_HDD,
                              .disk_bw = 100e6,
                              .cpu_speed = 1.2};
    cr_assert_geq(hrm_cluster_add_node(c, &a, &err), 0, "%s", err.text);
    cr_assert_geq(hrm_cluster_add_node(c, &b, &err), 0, "%s", err.text);
    return c;
}

static int32_t placed_node(const char *policy, const char *const *items, size_t nitems,
                           int64_t mem_per_core)
{
    struct hrm_cluster *c = two_kinds();
    struct hrm_workload *wl = one_job(1, 1000, mem_per_core);
    struct hrm_state *s = hrm_state_new(c, wl);
    hrm_state_submit_job(s, 0, 0);
    struct hrm_params params = {.items = items, .count = nitems};
    struct hrm_error err = {{0}};
    struct hrm_policy *p = hrm_policy_new(policy, &params, 1, &err);
    cr_assert_not_null(p, "%s", err.text);
    struct hrm_sched_ctx ctx = {.state = s};
    cr_assert_eq(p->ops->decide(p, &ctx), 0);
    cr_assert_eq(ctx.ndecisions, 1);
    int32_t node = ctx.decisions[0].node;
    hrm_free(ctx.decisions);
    hrm_policy_free(p);
    hrm_state_free(s);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    return node;
}

Test(nparsa, job_type_selects_the_node)
{
    cr_assert_eq(placed_node("nparsa", NULL, 0, GIB), 0, "CPU job to the SSD node");
    cr_assert_eq(placed_node("nparsa", NULL, 0, 2 * GIB), 1, "memory job to the big-disk node");
    /* Without typing every job is scored with the CPU weights. */
    cr_assert_eq(placed_node("nparsa-notype", NULL, 0, 2 * GIB), 0);
    const char *off[] = {"typing=0"};
    cr_assert_eq(placed_node("nparsa", off, 1, 2 * GIB), 0);
    const char *th[] = {"threshold=2.5"};
    cr_assert_eq(placed_node("nparsa", th, 1, 2 * GIB), 0, "J = 2 is CPU under threshold 2.5");
}

Test(nparsa, user_matrices_replace_the_paper_weights)
{
    /* Static: only cpu speed matters (B is faster); alpha = 1 ignores D. */
    const char *speed[] = {"cpu_static=1,1,1,1/9;1,1,1,1/9;1,1,1,1/9;9,9,9,1", "alpha=1"};
    cr_assert_eq(placed_node("nparsa", speed, 2, GIB), 1);
    const char *bal[] = {"balance=1,3;1/3,1"};
    cr_assert_eq(placed_node("nparsa", bal, 1, GIB), 1, "alpha 0.75 leans on S, where B wins");
}

Test(nparsa, bad_parameters_are_refused_with_the_reason)
{
    struct hrm_error err = {{0}};
    const char *bad[] = {"mem_dynamic=1,9,1/9,1;1/9,1,9,1;9,1/9,1,1;1,1,1,1"};
    struct hrm_params params = {.items = bad, .count = 1};
    cr_assert_null(hrm_policy_new("nparsa", &params, 1, &err));
    cr_assert(strstr(err.text, "mem_dynamic") && strstr(err.text, "consistency ratio"), "%s",
              err.text);
    const char *wrong[] = {"cpu_static=1,2;1/2,1"};
    params.items = wrong;
    cr_assert_null(hrm_policy_new("nparsa", &params, 1, &err));
    cr_assert(strstr(err.text, "need a 4x4 matrix"), "%s", err.text);
    const char *both[] = {"alpha=0.3", "balance=1,1;1,1"};
    params.items = both;
    params.count = 2;
    cr_assert_null(hrm_policy_new("nparsa", &params, 1, &err));
    cr_assert(strstr(err.text, "not both"), "%s", err.text);
    /* Out-of-range values are refused naming their key; a negative alpha is
     * not "not given". */
    struct {
        const char *item, *why;
    } range[] = {{"threshold=0", "'threshold' must be in (0, 1024]"},
                 {"threshold=5000", "'threshold'"},
                 {"threshold=1.1x", "'threshold'"},
                 {"typing=2", "'typing' must be 0 or 1"},
                 {"alpha=-0.5", "'alpha' must be in 0..1"},
                 {"alpha=1.5", "'alpha'"}};
    for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
        const char *items[] = {range[i].item};
        struct hrm_params one = {.items = items, .count = 1};
        memset(&err, 0, sizeof(err));
        cr_assert_null(hrm_policy_new("nparsa", &one, 1, &err), "%s accepted", range[i].item);
        cr_assert(strstr(err.text, "policy 'nparsa'") && strstr(err.text, range[i].why), "%s",
                  err.text);
    }
    params.count = 1;
    const char *unknown[] = {"beta=0.5"};
    params.items = unknown;
    params.count = 1;
    cr_assert_null(hrm_policy_new("nparsa", &params, 1, &err));
    cr_assert(strstr(err.text, "unknown parameter 'beta'"), "%s", err.text);
}

Test(nparsa, io_indicator_shares_the_disk_with_running_readers)
{
    struct hrm_cluster *c = two_kinds();
    struct hrm_workload *wl = one_job(1, 1000, GIB);
    struct hrm_state *s = hrm_state_new(c, wl);
    struct nparsa_node x;
    nparsa_indicators(s, 0, 3, &x);
    cr_assert_float_eq(x.d[NPARSA_D_IO], 500e6 / 4, 1e-3);
    cr_assert_float_eq(x.d[NPARSA_D_CPU], 1.0, 1e-12);
    cr_assert_float_eq(x.s[NPARSA_S_SPEED], 1.0, 1e-12);
    hrm_state_free(s);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(nparsa, simulated_job_runs_and_fills_the_best_nodes_first)
{
    struct run {
        struct hrm_cluster *c;
        struct hrm_workload *wl;
    } r = {two_kinds(), one_job(4, 1000, GIB)};
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, r.c, r.wl);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_sim_run(r.c, r.wl, "nparsa", NULL, NULL, &rec, &err), 0, "%s", err.text);
    cr_assert_eq(rec.tasks_done, 4);
    cr_assert_eq(rec.jobs[0].end_us, SEC, "four 1-core tasks of 1 s on 16 free cores");
    hrm_run_record_fini(&rec);
    hrm_workload_free(r.wl);
    hrm_cluster_free(r.c);
}

/*
 * Node choice matters in the simulator as on real machines: one task of
 * 12 s of cpu on a speed-1.0 core that first reads 1 GB, a replica on each
 * node.  On the SSD node (500 MB/s, speed 1.0): 2 s + 12 s = 14 s; on the
 * HDD node (100 MB/s, speed 1.2): 10 s + 10 s = 20 s.  NPARSA's CPU weights
 * pick the SSD node; weights that only see cpu speed pick the HDD node.
 */
static int64_t job_end(const char *const *items, size_t nitems)
{
    struct hrm_error err = {{0}};
    struct hrm_cluster *c = two_kinds();
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 1, 1000, GIB, 0, 0, 12 * SEC);
    const int32_t both[] = {0, 1};
    cr_assert_geq(hrm_workload_add_block(wl, 1000000000, both, 2, &err), 0, "%s", err.text);
    struct hrm_params params = {.items = items, .count = nitems};
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    cr_assert_eq(hrm_sim_run(c, wl, "nparsa", &params, NULL, &rec, &err), 0, "%s", err.text);
    int64_t end = rec.jobs[0].end_us;
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    return end;
}

Test(nparsa, cpu_speed_and_disk_speed_scale_the_run)
{
    int64_t ssd = job_end(NULL, 0);
    cr_assert(llabs(ssd - 14 * SEC) < 1000, "SSD node: %lld us", (long long)ssd);
    const char *speed[] = {"cpu_static=1,1,1,1/9;1,1,1,1/9;1,1,1,1/9;9,9,9,1", "alpha=1"};
    int64_t hdd = job_end(speed, 2);
    cr_assert(llabs(hdd - 20 * SEC) < 1000, "HDD node: %lld us", (long long)hdd);
}
