/* Shared-state instances placing through the hrm policy's units: per-GPU records in the cell, claims that name GPUs, conflicts and the lock. */
#include <criterion/criterion.h>
#include <string.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/commit.h"
#include "hrm/sim.h"
#include "hrm/snapshot.h"
#include "hrm/ssched.h"
#include "hrm/ssim.h"

#define MS 1000ll

/* One job of one task: cores, a GPU (share in thousandths) with gmem of its memory. */
static int gpu_job(struct hrm_workload *wl, const char *name, int64_t cpu, int32_t milli,
                   int64_t gmem, int64_t duration_us)
{
    struct hrm_error err = {{0}};
    fx_job(wl, name, "u", 0);
    fx_stage(wl, "s", NULL, 0);
    struct hrm_task_desc d = {.duration_us = duration_us, .gpu_milli = milli};
    d.req.v[HRM_DIM_CPU] = cpu;
    d.req.v[HRM_DIM_MEM] = GIB;
    d.req.v[HRM_DIM_GPU] = 1;
    d.req.v[HRM_DIM_GPU_MEM] = gmem;
    int t = hrm_workload_add_task(wl, &d, &err);
    cr_assert_geq(t, 0, "%s", err.text);
    return t;
}

/* ---- the cell's per-GPU records ---- */

Test(p0shared, the_cell_admits_a_stacked_task_by_gpu_memory_and_shares)
{
    struct hrm_netcfg net = {0};
    struct hrm_cluster *c = fx_cluster(1, 1, 8, 64 * GIB, 1, 16 * GIB, &net);
    struct hrm_workload *wl = hrm_workload_new();
    int held = gpu_job(wl, "held", 1000, 500, 10 * GIB, MS);   /* half the GPU, 10 GiB */
    int small = gpu_job(wl, "small", 1000, 250, 4 * GIB, MS);  /* fits: 14 <= 16, 750 <= 1000 */
    int big = gpu_job(wl, "big", 1000, 250, 8 * GIB, MS);      /* 18 GiB > 16 */
    int wide = gpu_job(wl, "wide", 1000, 600, 4 * GIB, MS);    /* 1100 thousandths > 1000 */
    int whole = gpu_job(wl, "whole", 1000, 0, 1 * GIB, MS);    /* no share, no phases: alone */
    struct hrm_cell cell;
    cr_assert_eq(hrm_cell_init(&cell, c, NULL), 0);
    cr_assert_eq(cell.nodes[0].ngpus, 1);
    cr_assert_eq(cell.gpus[cell.nodes[0].gpu_at].gmem_cap, 16 * GIB);
    struct hrm_cell_use u = hrm_commit_use_of(wl, held, 1u);
    cr_assert_eq(hrm_cell_take_use(&cell, 0, &u), 0);
    const struct hrm_cell_gpu *g = &cell.gpus[cell.nodes[0].gpu_at];
    cr_assert_eq(g->tasks, 1);
    cr_assert_eq(g->gmem_used, 10 * GIB);
    cr_assert_eq(g->share_used, 500);
    cr_assert_eq(cell.nodes[0].free.v[HRM_DIM_GPU], 0, "the only GPU runs a task");
    struct hrm_res charge;
    u = hrm_commit_use_of(wl, small, 1u);
    cr_assert(hrm_cell_node_fits(&cell.nodes[0], cell.gpus, &u, &charge));
    cr_assert_eq(charge.v[HRM_DIM_GPU], 0, "stacked on a busy GPU: no GPU of the count");
    cr_assert_eq(charge.v[HRM_DIM_GPU_MEM], 4 * GIB);
    u = hrm_commit_use_of(wl, big, 1u);
    cr_assert_not(hrm_cell_node_fits(&cell.nodes[0], cell.gpus, &u, &charge), "memory");
    u = hrm_commit_use_of(wl, wide, 1u);
    cr_assert_not(hrm_cell_node_fits(&cell.nodes[0], cell.gpus, &u, &charge), "shares");
    u = hrm_commit_use_of(wl, whole, 1u);
    cr_assert(u.solo);
    cr_assert_not(hrm_cell_node_fits(&cell.nodes[0], cell.gpus, &u, &charge), "runs alone");
    u = hrm_commit_use_of(wl, small, 1u);
    cr_assert_eq(hrm_cell_take_use(&cell, 0, &u), 0);
    cr_assert_eq(g->tasks, 2);
    cr_assert_eq(g->gmem_used, 14 * GIB);
    cr_assert_eq(g->share_used, 750);
    cr_assert_eq(cell.nodes[0].free.v[HRM_DIM_GPU_MEM], 2 * GIB);
    /* Releases: the GPU is back in the count when its last task leaves. */
    u = hrm_commit_use_of(wl, held, 1u);
    cr_assert_eq(hrm_cell_give_use(&cell, 0, &u), 0);
    cr_assert_eq(cell.nodes[0].free.v[HRM_DIM_GPU], 0);
    u = hrm_commit_use_of(wl, small, 1u);
    cr_assert_eq(hrm_cell_give_use(&cell, 0, &u), 0);
    cr_assert_eq(cell.nodes[0].free.v[HRM_DIM_GPU], 1);
    cr_assert_eq(g->tasks, 0);
    cr_assert_eq(g->gmem_used, 0);
    cr_assert_eq(cell.nodes[0].free.v[HRM_DIM_GPU_MEM], 16 * GIB);
    cr_assert_eq(hrm_cell_give_use(&cell, 0, &u), -HRM_ESTATE, "a release nobody took");
    /* Snapshots carry the records. */
    struct hrm_snapshot snap;
    hrm_snapshot_init(&snap, 1);
    u = hrm_commit_use_of(wl, held, 1u);
    cr_assert_eq(hrm_cell_take_use(&cell, 0, &u), 0);
    cr_assert_eq(hrm_snapshot_sync(&snap, &cell), 1);
    cr_assert_eq(snap.gpus[snap.nodes[0].gpu_at].gmem_used, 10 * GIB);
    cr_assert_eq(snap.nodes[0].cap.v[HRM_DIM_CPU], 8000);
    hrm_snapshot_fini(&snap);
    hrm_cell_fini(&cell);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* ---- the roles by hand: a commit role and two instances ---- */

struct rig {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_commit *m;
    struct hrm_ssched *s[2];
    struct fenv fm, fs[2];
    struct hrm_snapshot snap; /* the cell as a reply carries it */
    int launches;
    int32_t launch_node[8];
    uint32_t launch_gpus[8];
    int32_t launch_task[8];
};

/* n0 and n1: 8 cores, one 16 GiB GPU each.  Tasks: 0 holds 4 GiB and a
 * quarter of n0's GPU (adopted: it runs there); 1 (instance 0's job) and
 * 2 (instance 1's job) ask 10 GiB and a quarter each. */
static void rig_init(struct rig *g, bool stream1)
{
    memset(g, 0, sizeof(*g));
    struct hrm_netcfg net = {0};
    g->c = fx_cluster(1, 2, 8, 64 * GIB, 1, 16 * GIB, &net);
    g->wl = hrm_workload_new();
    gpu_job(g->wl, "held", 1000, 250, 4 * GIB, 1000 * MS);
    gpu_job(g->wl, "a", 1000, 250, 10 * GIB, 1000 * MS);
    gpu_job(g->wl, "b", 1000, 250, 10 * GIB, 1000 * MS);
    if (stream1)
        g->wl->jobs[1].kind = HRM_JOB_STREAM;
    struct hrm_error err = {{0}};
    struct hrm_commit_config cc = {.validate = HRM_VALIDATE_RESOURCE, .instances = 2};
    g->m = hrm_commit_new(g->c, g->wl, &cc, &err);
    cr_assert_not_null(g->m, "%s", err.text);
    cr_assert_eq(hrm_commit_adopt_on(g->m, 0, 0, 1u, 0), 0);
    fenv_init(&g->fm);
    for (int i = 0; i < 2; i++) {
        struct hrm_ssched_config sc = {.index = i,
                                       .t_job_us = 10 * MS,
                                       .lock_stream = true,
                                       .fair_share = true,
                                       .seed = 7 + (uint64_t)i};
        g->s[i] = hrm_ssched_new(g->c, g->wl, &sc, &err);
        cr_assert_not_null(g->s[i], "%s", err.text);
        fenv_init(&g->fs[i]);
    }
    hrm_snapshot_init(&g->snap, g->c->nnodes);
}

static void rig_fini(struct rig *g)
{
    for (int i = 0; i < 2; i++)
        hrm_ssched_free(g->s[i]);
    hrm_snapshot_fini(&g->snap);
    hrm_commit_free(g->m);
    hrm_workload_free(g->wl);
    hrm_cluster_free(g->c);
}

static void submit(struct rig *g, int inst, int job)
{
    struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = job};
    cr_assert_eq(hrm_ssched_on_msg(g->s[inst], &g->fs[inst].env, &sub), 0);
}

/* Instance inst's messages so far go to the master; what the master sends
 * goes on to the instances (a reply with the cell as it is then). */
static void deliver_from(struct rig *g, int inst)
{
    struct fenv *f = &g->fs[inst];
    int n = f->nsent;
    struct fenv_sent out[16];
    cr_assert_leq(n, 16);
    memcpy(out, f->sent, (size_t)n * sizeof(*out));
    f->nsent = 0;
    for (int k = 0; k < n; k++) {
        cr_assert_eq(out[k].to, HRM_ADDR_CENTRAL);
        cr_assert_eq(hrm_commit_on_msg(g->m, &g->fm.env, &out[k].m), 0);
    }
    for (int k = 0; k < g->fm.nsent; k++) {
        const struct fenv_sent *x = &g->fm.sent[k];
        if (x->m.type == HRM_MSG_TASK_LAUNCH) {
            g->launch_task[g->launches] = x->m.task;
            g->launch_node[g->launches] = x->m.node;
            g->launch_gpus[g->launches++] = x->m.gpu_mask;
            continue;
        }
        int to = hrm_addr_sched_index(x->to);
        if (x->m.type == HRM_MSG_SNAP_REPLY) {
            hrm_snapshot_sync(&g->snap, hrm_commit_cell(g->m));
            cr_assert_eq(hrm_ssched_on_snapshot(g->s[to], &g->fs[to].env, &x->m, &g->snap), 0);
        } else {
            cr_assert_eq(hrm_ssched_on_msg(g->s[to], &g->fs[to].env, &x->m), 0);
        }
    }
    g->fm.nsent = 0;
}

/* Instance inst's decision time is over: its claims are sent (not yet delivered). */
static void decide(struct rig *g, int inst)
{
    struct fenv *f = &g->fs[inst];
    cr_assert_geq(f->ntimers, 1);
    f->now = f->timer_at[f->ntimers - 1];
    cr_assert_eq(hrm_ssched_on_timer(g->s[inst], &f->env, f->timer_cookie[f->ntimers - 1]), 0);
    f->ntimers = 0;
}

static const struct fenv_sent *claim_of(const struct rig *g, int inst, int task)
{
    const struct fenv *f = &g->fs[inst];
    for (int k = 0; k < f->nsent; k++)
        if (f->sent[k].m.type == HRM_MSG_CLAIM && f->sent[k].m.task == task)
            return &f->sent[k];
    return NULL;
}

/*
 * Both instances see n0's GPU with 12 GiB free (a quarter-GPU task holds 4)
 * and n1's idle with 16.  Each 10 GiB task prefers n1: same wait (0), fewer
 * kernels to share the GPU with (0 against 1).  n1's GPU fits only one of
 * them (20 > 16): instance 0's claim reaches the master first and commits,
 * instance 1's conflicts, goes back to its job and, on the next snapshot
 * (n1 now 6 GiB free), is placed on n0 (12 GiB free) and commits there: two
 * quarter-GPU tasks with 14 GiB on n0's GPU.
 */
Test(p0shared, two_instances_race_for_a_gpu_that_fits_one_the_loser_retries_elsewhere)
{
    struct rig g;
    rig_init(&g, false);
    submit(&g, 0, 1);
    submit(&g, 1, 2);
    deliver_from(&g, 0); /* snapshot requests answered: both see the same cell */
    deliver_from(&g, 1);
    decide(&g, 0);
    decide(&g, 1);
    const struct fenv_sent *a = claim_of(&g, 0, 1), *b = claim_of(&g, 1, 2);
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    cr_assert_eq(a->m.node, 1, "the idle GPU: nobody to share kernels with");
    cr_assert_eq(a->m.gpu_mask, 1u, "the claim names its GPU");
    cr_assert_eq(b->m.node, 1);
    deliver_from(&g, 0);
    deliver_from(&g, 1);
    const struct hrm_commit_stats *st = hrm_commit_stats(g.m);
    cr_assert_eq(st->committed, 1);
    cr_assert_eq(st->conflicts, 1);
    cr_assert_eq(g.launches, 1);
    cr_assert_eq(g.launch_task[0], 1);
    cr_assert_eq(g.launch_node[0], 1);
    cr_assert_eq(g.launch_gpus[0], 1u, "launched on the GPU it claimed");
    /* The loser asked again at once; its retry goes to n0. */
    cr_assert_eq(fenv_count(&g.fs[1], HRM_MSG_SNAP_REQUEST), 1);
    deliver_from(&g, 1);
    decide(&g, 1);
    b = claim_of(&g, 1, 2);
    cr_assert_not_null(b);
    cr_assert_eq(b->m.node, 0, "n1's GPU has 6 GiB left, n0's 12");
    deliver_from(&g, 1);
    cr_assert_eq(st->committed, 2);
    cr_assert_eq(st->conflicts, 1);
    cr_assert_eq(hrm_ssched_stats(g.s[1])->retries, 1);
    const struct hrm_cell *cell = hrm_commit_cell(g.m);
    const struct hrm_cell_gpu *n0 = &cell->gpus[cell->nodes[0].gpu_at];
    const struct hrm_cell_gpu *n1 = &cell->gpus[cell->nodes[1].gpu_at];
    cr_assert_eq(n0->tasks, 2, "stacked beside the task that held it");
    cr_assert_eq(n0->gmem_used, 14 * GIB);
    cr_assert_eq(n0->share_used, 500);
    cr_assert_eq(n1->tasks, 1);
    cr_assert_eq(n1->gmem_used, 10 * GIB);
    rig_fini(&g);
}

/*
 * The same race with instance 0's job a stream job: it asks for the cell
 * lock and plans under it.  Instance 1's batch claim reaches the master
 * first, while the lock is held: its transaction is deferred, validated once
 * the stream claim committed, and conflicts.  The stream claim is never
 * bounced.
 */
Test(p0shared, a_stream_job_under_the_lock_takes_the_gpu_a_racing_batch_claim_wanted)
{
    struct rig g;
    rig_init(&g, true);
    submit(&g, 0, 1);
    submit(&g, 1, 2);
    cr_assert_eq(fenv_find(&g.fs[0], HRM_MSG_SNAP_REQUEST, 0)->m.status, HRM_SNAP_LOCK);
    cr_assert_eq(fenv_find(&g.fs[1], HRM_MSG_SNAP_REQUEST, 0)->m.status, 0);
    deliver_from(&g, 0);
    deliver_from(&g, 1);
    decide(&g, 0);
    decide(&g, 1);
    cr_assert_eq(claim_of(&g, 0, 1)->m.status, HRM_CLAIM_LAST | HRM_CLAIM_LOCKED);
    cr_assert_eq(claim_of(&g, 0, 1)->m.node, 1);
    cr_assert_eq(claim_of(&g, 1, 2)->m.node, 1);
    deliver_from(&g, 1); /* the batch claim first: the lock is held */
    const struct hrm_commit_stats *st = hrm_commit_stats(g.m);
    cr_assert_eq(st->txns_deferred, 1);
    cr_assert_eq(st->claims, 0, "nothing validated while the lock is held");
    deliver_from(&g, 0);
    cr_assert_eq(st->committed, 1);
    cr_assert_eq(st->conflicts, 1);
    cr_assert_eq(st->locked_bounced, 0);
    cr_assert_eq(g.launch_task[0], 1, "the stream task runs on n1");
    cr_assert_eq(g.launch_node[0], 1);
    cr_assert_eq(hrm_ssched_stats(g.s[0])->conflicts_stream, 0);
    deliver_from(&g, 1); /* the retry's snapshot */
    decide(&g, 1);
    cr_assert_eq(claim_of(&g, 1, 2)->m.node, 0);
    deliver_from(&g, 1);
    cr_assert_eq(st->committed, 2);
    rig_fini(&g);
}

/* ---- end to end through the simulator ---- */

/* Two half-GPU tasks of 4 GiB on a node with one 16 GiB GPU: the units stack
 * them, so both run at once and both jobs end at the same time; first fit
 * (whole GPUs) runs them one after the other. */
Test(p0shared, fractional_gpu_tasks_stack_on_one_gpu_through_the_instances)
{
    struct hrm_netcfg net = {.latency_us = MS};
    const char *const units[] = {"instances=2", "t_job_ms=10", "t_task_ms=0"};
    const char *const ff[] = {"instances=2", "t_job_ms=10", "t_task_ms=0", "first_fit=1"};
    int64_t end[2][2];
    for (int v = 0; v < 2; v++) {
        struct hrm_cluster *c = fx_cluster(1, 1, 8, 64 * GIB, 1, 16 * GIB, &net);
        struct hrm_workload *wl = hrm_workload_new();
        gpu_job(wl, "a", 1000, 500, 4 * GIB, 1000 * MS);
        gpu_job(wl, "b", 1000, 500, 4 * GIB, 1000 * MS);
        struct hrm_error err = {{0}};
        struct hrm_params p = {.items = v == 0 ? units : ff, .count = v == 0 ? 3 : 4};
        struct hrm_sim_config cfg = {.seed = 1};
        struct hrm_run_record rec;
        struct hrm_ssim_stats st;
        hrm_run_record_init(&rec, c, wl);
        cr_assert_eq(hrm_ssim_run_ex(c, wl, "hrm-shared", &p, &cfg, &rec, &st, &err), 0, "%s",
                     err.text);
        cr_assert_eq(rec.tasks_done, 2);
        end[v][0] = rec.jobs[0].end_us;
        end[v][1] = rec.jobs[1].end_us;
        hrm_run_record_fini(&rec);
        hrm_workload_free(wl);
        hrm_cluster_free(c);
    }
    int64_t d0 = end[0][0] - end[0][1];
    cr_assert_lt(d0 < 0 ? -d0 : d0, 100 * MS, "stacked: both ran at once (%lld, %lld)",
                 (long long)end[0][0], (long long)end[0][1]);
    int64_t d1 = end[1][0] - end[1][1];
    cr_assert_geq(d1 < 0 ? -d1 : d1, 1000 * MS, "first fit: one after the other");
}

/* The fair share counts the job's own ready GPU tasks: job "g" (workload
 * tasks 2 and 3, after job "c"'s two CPU tasks) wants 2 GPUs, 1 is free, K = 2
 * jobs share Q = 2 GPUs: A = floor(2/2) = 1, so one is held back.  (Reading
 * its tasks at an offset counted job "d"'s CPU tasks instead: no cap.) */
Test(p0shared, the_fair_share_reads_the_job_s_own_tasks)
{
    struct hrm_netcfg net = {0};
    struct hrm_cluster *c = fx_cluster(1, 1, 16, 64 * GIB, 2, 16 * GIB, &net);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "c", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 2, 1000, GIB, 0, 0, 100 * MS);
    fx_job(wl, "g", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    cr_assert_eq(fx_tasks(wl, 2, 1000, GIB, 1, GIB, 100 * MS), 2);
    fx_job(wl, "d", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 2, 1000, GIB, 0, 0, 100 * MS);
    struct hrm_ssched_config cfg = {.t_job_us = 10 * MS, .fair_share = true, .seed = 1};
    struct hrm_error err = {{0}};
    struct hrm_ssched *s = hrm_ssched_new(c, wl, &cfg, &err);
    cr_assert_not_null(s, "%s", err.text);
    struct fenv f;
    fenv_init(&f);
    struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = 1};
    cr_assert_eq(hrm_ssched_on_msg(s, &f.env, &sub), 0);
    const struct fenv_sent *req = fenv_find(&f, HRM_MSG_SNAP_REQUEST, 0);
    cr_assert_not_null(req);
    /* The cell: GPU 0 held by another job's whole-GPU task. */
    struct hrm_cell cell;
    cr_assert_eq(hrm_cell_init(&cell, c, NULL), 0);
    struct hrm_cell_use u = {.req = wl->tasks[2].req, .gpu_mask = 1u, .gmem = GIB, .solo = true};
    cr_assert_eq(hrm_cell_take_use(&cell, 0, &u), 0);
    cell.gpu_jobs = 2;
    struct hrm_snapshot snap;
    hrm_snapshot_init(&snap, 1);
    hrm_snapshot_sync(&snap, &cell);
    struct hrm_msg rep = {.type = HRM_MSG_SNAP_REPLY,
                          .from = HRM_ADDR_CENTRAL,
                          .attempt = req->m.attempt,
                          .value = (int64_t)snap.version};
    cr_assert_eq(hrm_ssched_on_snapshot(s, &f.env, &rep, &snap), 0);
    cr_assert_eq(hrm_ssched_stats(s)->fair_capped, 1, "A_j = 1 of 2 ready GPU tasks");
    fenv_clear(&f);
    cr_assert_eq(hrm_ssched_on_timer(s, &f.env, 0x101), 0);
    cr_assert_eq(fenv_count(&f, HRM_MSG_CLAIM), 1);
    cr_assert_eq(fenv_find(&f, HRM_MSG_CLAIM, 0)->m.gpu_mask, 2u, "the idle GPU 1");
    hrm_snapshot_fini(&snap);
    hrm_cell_fini(&cell);
    hrm_ssched_free(s);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
