/* Shared-state scheduling end to end through the simulator; the planner by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/commit.h"
#include "hrm/sim.h"
#include "hrm/ssched.h"
#include "hrm/ssim.h"

#define MS 1000ll

struct run {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_run_record rec;
    struct hrm_ssim_stats st;
};

static void run_policy(struct run *r, const char *policy, const char *const *params, size_t n,
                       uint64_t seed)
{
    struct hrm_error err = {{0}};
    struct hrm_params p = {.items = params, .count = n};
    struct hrm_sim_config cfg = {.seed = seed};
    hrm_run_record_init(&r->rec, r->c, r->wl);
    int rc = hrm_ssim_run_ex(r->c, r->wl, policy, &p, &cfg, &r->rec, &r->st, &err);
    cr_assert_eq(rc, 0, "%s: %s", policy, err.text);
}

static void run_free(struct run *r)
{
    hrm_run_record_fini(&r->rec);
    hrm_workload_free(r->wl);
    hrm_cluster_free(r->c);
}

/* njobs jobs of one task of cpu cores, 100 ms, all at t = 0; one node. */
static void one_node(struct run *r, int cores, int njobs, int cpu)
{
    struct hrm_netcfg net = {.latency_us = MS};
    r->c = fx_cluster(1, 1, cores, 64 * GIB, 0, 0, &net);
    r->wl = hrm_workload_new();
    char name[16];
    for (int j = 0; j < njobs; j++) {
        snprintf(name, sizeof(name), "j%d", j);
        fx_job(r->wl, name, "u", 0);
        fx_stage(r->wl, "s", NULL, 0);
        fx_tasks(r->wl, 1, cpu * 1000, GIB, 0, 0, 100 * MS);
    }
}

static const char *const fast[] = {"t_job_ms=10", "t_task_ms=0"};

Test(ssim, timings_of_one_transaction_by_hand)
{
    struct run r;
    one_node(&r, 4, 1, 1);
    run_policy(&r, "hrm-shared", fast, 2, 1);
    /* submit 0 -> instance 1 ms -> snapshot request at the master 2 ms -> reply
     * 3 ms -> decide 10 ms -> claim at the master 14 ms (commit) -> launch at
     * the node 15 ms; 100 ms; end at the master 116 ms -> instance 117 ms ->
     * client 118 ms */
    cr_assert_eq(r.rec.jobs[0].first_start_us, 15 * MS);
    cr_assert_eq(r.rec.jobs[0].end_us, 118 * MS);
    cr_assert_float_eq(r.rec.sched_latency_us[0], 13 * MS, 1e-9, "ready 1 ms, committed 14 ms");
    cr_assert_float_eq(r.st.delay_mean_s, 0.013, 1e-9);
    cr_assert_eq(r.st.txns, 1);
    cr_assert_eq(r.st.conflicts, 0);
    run_free(&r);
}

Test(ssim, central_reference_has_no_hop_to_the_master)
{
    struct run r;
    one_node(&r, 4, 1, 1);
    run_policy(&r, "hrm-central", fast, 2, 1);
    /* submit 0 -> instance 1 ms; sync, 10 ms of decision, commit at 11 ms -> node 12 ms */
    cr_assert_eq(r.rec.jobs[0].first_start_us, 12 * MS);
    run_free(&r);
}

Test(ssim, a_conflicting_task_returns_to_the_queue_and_succeeds_later)
{
    struct run r;
    one_node(&r, 4, 2, 3); /* 3 + 3 cores on a 4-core node: one at a time */
    const char *const p[] = {"instances=2", "t_job_ms=10", "t_task_ms=0"};
    run_policy(&r, "hrm-shared", p, 3, 1);
    cr_assert_eq(r.st.claims, 3);
    cr_assert_eq(r.st.conflicts, 1);
    cr_assert_eq(r.st.retries, 1, "the loser's task claimed again");
    cr_assert_eq(r.st.committed, 2);
    cr_assert_geq(r.st.waits, 1, "it waited for the winner's end, not polled");
    cr_assert_eq(r.rec.tasks_done, 2);
    int first = r.rec.jobs[0].first_start_us < r.rec.jobs[1].first_start_us ? 0 : 1;
    cr_assert_geq(r.rec.jobs[1 - first].first_start_us, r.rec.jobs[first].end_us - 2 * MS,
                  "the retry ran once the winner's cores were back");
    run_free(&r);
}

/* Job 0 (batch) and job 1 (stream) on two instances, both wanting 3 of the
 * node's 4 cores at t = 0.  The batch instance's requests go first at every
 * step (job 0 registered first), so without the lock the batch claim reaches
 * the master first and the stream claim is the one bounced. */
static void stream_and_batch(struct run *r)
{
    one_node(r, 4, 2, 3);
    r->wl->jobs[1].kind = HRM_JOB_STREAM;
}

Test(ssim, a_stream_job_under_the_lock_is_never_bounced_by_a_racing_batch_job)
{
    struct run r;
    stream_and_batch(&r);
    const char *const p[] = {"instances=2", "t_job_ms=10", "t_task_ms=0"};
    run_policy(&r, "hrm-shared", p, 3, 1);
    cr_assert_eq(r.st.locked_bounced, 0);
    cr_assert_eq(r.st.txns_locked, 1);
    cr_assert_eq(r.st.txns_deferred, 1, "the batch commit waited for the lock");
    cr_assert_eq(r.st.conflicts, 1, "and lost");
    cr_assert_lt(r.rec.jobs[1].first_start_us, r.rec.jobs[0].first_start_us);
    cr_assert_eq(r.rec.tasks_done, 2);
    run_free(&r);
}

Test(ssim, without_the_lock_the_same_race_bounces_the_stream_job)
{
    struct run r;
    stream_and_batch(&r);
    const char *const p[] = {"instances=2", "t_job_ms=10", "t_task_ms=0", "lock_stream=0"};
    run_policy(&r, "hrm-shared", p, 4, 1);
    cr_assert_eq(r.st.txns_locked, 0);
    cr_assert_eq(r.st.conflicts, 1);
    cr_assert_gt(r.rec.jobs[1].first_start_us, r.rec.jobs[0].first_start_us);
    run_free(&r);
}

Test(ssim, stages_run_in_order_and_every_job_ends)
{
    struct run r;
    struct hrm_netcfg net = {.latency_us = MS};
    r.c = fx_cluster(1, 4, 4, 64 * GIB, 0, 0, &net);
    r.wl = hrm_workload_new();
    fx_job(r.wl, "dag", "u", 0);
    int a = fx_stage(r.wl, "a", NULL, 0);
    fx_tasks(r.wl, 6, 1000, GIB, 0, 0, 50 * MS);
    int32_t deps[] = {a};
    fx_stage(r.wl, "b", deps, 1);
    fx_tasks(r.wl, 3, 1000, GIB, 0, 0, 50 * MS);
    fx_job(r.wl, "other", "u", 5 * MS);
    fx_stage(r.wl, "s", NULL, 0);
    fx_tasks(r.wl, 20, 1000, GIB, 0, 0, 30 * MS);
    run_policy(&r, "hrm-shared", fast, 2, 3);
    cr_assert_eq(r.rec.tasks_done, 29);
    cr_assert_geq(r.rec.jobs[0].end_us, 100 * MS, "two stages of 50 ms");
    cr_assert_geq(r.rec.jobs[1].end_us, 0);
    run_free(&r);
}

static void many_jobs(struct run *r, uint64_t seed)
{
    struct hrm_netcfg net = {.latency_us = MS};
    r->c = fx_cluster(2, 10, 8, 64 * GIB, 0, 0, &net);
    r->wl = hrm_workload_new();
    struct hrm_rng rng;
    hrm_rng_seed(&rng, seed);
    char name[16];
    for (int j = 0; j < 40; j++) {
        snprintf(name, sizeof(name), "j%d", j);
        fx_job(r->wl, name, "u", (int64_t)hrm_rng_below(&rng, 200) * MS);
        if (j % 5 == 0)
            r->wl->jobs[j].kind = HRM_JOB_STREAM;
        fx_stage(r->wl, "s", NULL, 0);
        fx_tasks(r->wl, 1 + (int)hrm_rng_below(&rng, 12), 1000, GIB, 0, 0,
                 (int64_t)(50 + hrm_rng_below(&rng, 500)) * MS);
    }
}

Test(ssim, same_seed_same_run_and_every_claim_is_accounted)
{
    const char *const p[] = {"instances=6", "t_job_ms=20", "t_task_ms=2", "strict=1"};
    struct run a, b;
    many_jobs(&a, 7);
    many_jobs(&b, 7);
    run_policy(&a, "hrm-shared", p, 4, 11);
    run_policy(&b, "hrm-shared", p, 4, 11);
    for (int j = 0; j < a.wl->njobs; j++) {
        cr_assert_eq(a.rec.jobs[j].first_start_us, b.rec.jobs[j].first_start_us);
        cr_assert_eq(a.rec.jobs[j].end_us, b.rec.jobs[j].end_us);
        cr_assert_geq(a.rec.jobs[j].end_us, 0, "job %d ended", j);
    }
    cr_assert_eq(memcmp(&a.st, &b.st, sizeof(a.st)), 0);
    cr_assert_eq(a.st.claims, a.st.committed + a.st.conflicts);
    cr_assert_eq(a.st.committed, a.wl->ntasks, "every task committed exactly once");
    cr_assert_eq(a.st.locked_bounced, 0);
    cr_assert_eq(a.st.stream_jobs, 8);
    run_free(&a);
    run_free(&b);
}

Test(ssim, dispatched_by_hrm_sim_run_and_bad_parameters_are_refused)
{
    struct run r;
    one_node(&r, 4, 1, 1);
    struct hrm_error err = {{0}};
    struct hrm_sim_config cfg = {.seed = 1};
    hrm_run_record_init(&r.rec, r.c, r.wl);
    cr_assert_eq(hrm_sim_run(r.c, r.wl, "hrm-central", NULL, &cfg, &r.rec, &err), 0, "%s",
                 err.text);
    cr_assert_eq(r.rec.tasks_done, 1);
    const char *const bogus[] = {"bogus=1"};
    struct hrm_params p = {.items = bogus, .count = 1};
    cr_assert_eq(hrm_ssim_run(r.c, r.wl, "hrm-shared", &p, &cfg, &r.rec, &err), -HRM_ESPEC);
    const char *const inst[] = {"instances=2"};
    p.items = inst;
    cr_assert_eq(hrm_ssim_run(r.c, r.wl, "hrm-central", &p, &cfg, &r.rec, &err), -HRM_ESPEC,
                 "the centralised reference has one instance");
    cr_assert(hrm_ssim_policy_known("hrm-shared"));
    cr_assert(!hrm_ssim_policy_known("fifo"));
    run_free(&r);
}

/* ---- the instance's planner, driven by hand ---- */

Test(ssim, planner_caps_gpu_tasks_at_the_fair_share_when_gpus_are_scarce)
{
    struct hrm_netcfg net = {0};
    struct hrm_cluster *c = fx_cluster(1, 1, 16, 64 * GIB, 4, 16 * GIB, &net);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "g", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 4, 1000, GIB, 1, GIB, 100 * MS);
    struct hrm_ssched_config cfg = {
        .t_job_us = 100 * MS, .t_task_us = 5 * MS, .fair_share = true, .seed = 1};
    struct hrm_error err = {{0}};
    struct hrm_ssched *s = hrm_ssched_new(c, wl, &cfg, &err);
    cr_assert_not_null(s, "%s", err.text);
    struct fenv f;
    fenv_init(&f);
    struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = 0};
    cr_assert_eq(hrm_ssched_on_msg(s, &f.env, &sub), 0);
    const struct fenv_sent *req = fenv_find(&f, HRM_MSG_SNAP_REQUEST, 0);
    cr_assert_not_null(req);
    cr_assert_eq(req->to, HRM_ADDR_CENTRAL);
    cr_assert_eq(req->m.status, 0, "a batch job commits optimistically");
    /* Another job holds one of the 4 GPUs: 3 free < 4 wanted, K = 2 (it and this one), A = 2. */
    struct hrm_snapshot snap;
    hrm_snapshot_init(&snap, 1);
    snap.nodes[0].free = c->nodes[0].capacity;
    snap.nodes[0].free.v[HRM_DIM_GPU] = 3;
    snap.nodes[0].free.v[HRM_DIM_GPU_MEM] -= GIB;
    snap.nodes[0].cap = c->nodes[0].capacity;
    struct hrm_cell_gpu *gpus = hrm_snapshot_gpus_of(&snap, 0, 4);
    for (int g = 0; g < 4; g++)
        gpus[g].gmem_cap = 16 * GIB;
    gpus[0] = (struct hrm_cell_gpu){.gmem_cap = 16 * GIB, .gmem_used = GIB, .tasks = 1, .solo = 1};
    snap.nodes[0].version = 5;
    snap.version = 9;
    snap.gpu_jobs = 2;
    struct hrm_msg rep = {.type = HRM_MSG_SNAP_REPLY,
                          .from = HRM_ADDR_CENTRAL,
                          .attempt = req->m.attempt,
                          .value = 9};
    f.now = 3 * MS;
    cr_assert_eq(hrm_ssched_on_snapshot(s, &f.env, &rep, &snap), 0);
    cr_assert_eq(f.ntimers, 1);
    cr_assert_eq(f.timer_at[0], 3 * MS + 100 * MS + 2 * 5 * MS, "t_job + t_task x 2 tried");
    fenv_clear(&f);
    f.now = f.timer_at[0];
    cr_assert_eq(hrm_ssched_on_timer(s, &f.env, 0x101), 0); /* transaction 1 */
    cr_assert_eq(fenv_count(&f, HRM_MSG_CLAIM), 2);
    cr_assert_eq(fenv_find(&f, HRM_MSG_CLAIM, 0)->m.value, 5, "the version it planned on");
    cr_assert_eq(fenv_find(&f, HRM_MSG_CLAIM, 1)->m.status, HRM_CLAIM_LAST);
    cr_assert_eq(hrm_ssched_stats(s)->fair_capped, 2);
    hrm_snapshot_fini(&snap);
    hrm_ssched_free(s);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
