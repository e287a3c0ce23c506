/* Commit protocol: cell, snapshots, optimistic and locked commits, validation, fair share. */
#include <criterion/criterion.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/commit.h"
#include "hrm/snapshot.h"

/* One node of `cores` cores; jobs of one task each asking `cpu` cores. */
struct world {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_commit *m;
    struct fenv f;
};

static void world_init(struct world *w, int nodes, int cores, int njobs, int cpu,
                       enum hrm_validate_mode mode, int instances)
{
    struct hrm_netcfg net = {.latency_us = 1000};
    w->c = fx_cluster(1, nodes, cores, 64 * GIB, 0, 0, &net);
    w->wl = hrm_workload_new();
    char name[16];
    for (int j = 0; j < njobs; j++) {
        snprintf(name, sizeof(name), "j%d", j);
        fx_job(w->wl, name, "u", 0);
        fx_stage(w->wl, "s", NULL, 0);
        fx_tasks(w->wl, 1, cpu * 1000, GIB, 0, 0, 1000);
    }
    struct hrm_error err = {{0}};
    struct hrm_commit_config cfg = {.validate = mode, .instances = instances};
    w->m = hrm_commit_new(w->c, w->wl, &cfg, &err);
    cr_assert_not_null(w->m, "%s", err.text);
    fenv_init(&w->f);
}

static void world_fini(struct world *w)
{
    hrm_commit_free(w->m);
    hrm_workload_free(w->wl);
    hrm_cluster_free(w->c);
}

static void snap_request(struct world *w, int inst, int txn, bool lock, uint64_t known)
{
    struct hrm_msg m = {.type = HRM_MSG_SNAP_REQUEST,
                        .from = hrm_addr_sched(inst),
                        .attempt = txn,
                        .status = lock ? HRM_SNAP_LOCK : 0,
                        .value = (int64_t)known};
    cr_assert_eq(hrm_commit_on_msg(w->m, &w->f.env, &m), 0);
}

static void claim(struct world *w, int inst, int txn, int task, int node, uint64_t seen,
                  unsigned flags)
{
    struct hrm_msg m = {.type = HRM_MSG_CLAIM,
                        .from = hrm_addr_sched(inst),
                        .job = task < 0 ? -1 : w->wl->tasks[task].job,
                        .task = task,
                        .node = node,
                        .attempt = txn,
                        .status = (uint16_t)flags,
                        .value = (int64_t)seen};
    cr_assert_eq(hrm_commit_on_msg(w->m, &w->f.env, &m), 0);
}

static void task_end(struct world *w, int task, int node)
{
    struct hrm_msg m = {.type = HRM_MSG_TASK_END,
                        .from = hrm_addr_node(node),
                        .job = w->wl->tasks[task].job,
                        .task = task,
                        .node = node};
    cr_assert_eq(hrm_commit_on_msg(w->m, &w->f.env, &m), 0);
}

/* The verdict the master sent instance inst for task, or -1. */
static int verdict(const struct world *w, int inst, int task)
{
    for (int k = 0; k < w->f.nsent; k++) {
        const struct fenv_sent *s = &w->f.sent[k];
        if (s->m.type == HRM_MSG_CLAIM_ACK && s->to == hrm_addr_sched(inst) && s->m.task == task)
            return s->m.status;
    }
    return -1;
}

static uint64_t node_version(const struct world *w, int node)
{
    return hrm_commit_cell(w->m)->nodes[node].version;
}

/* ---- fair share ---- */

Test(commit, fair_share_is_min_of_floor_q_over_k_and_the_need)
{
    cr_assert_eq(hrm_fair_share(30, 6, 10), 5);
    cr_assert_eq(hrm_fair_share(30, 6, 3), 3, "a job never gets more than it needs");
    cr_assert_eq(hrm_fair_share(31, 6, 10), 5, "floor");
    cr_assert_eq(hrm_fair_share(30, 0, 10), 10, "K = 0: the asker is alone");
    cr_assert_eq(hrm_fair_share(4, 0, 10), 4);
    cr_assert_eq(hrm_fair_share(3, 5, 10), 0, "Q < K: floor(Q/K) = 0");
    cr_assert_eq(hrm_fair_share(0, 3, 10), 0);
    cr_assert_eq(hrm_fair_share(10, 3, 0), 0);
    cr_assert_eq(hrm_fair_share(-1, 3, 5), 0);
    cr_assert_eq(hrm_fair_share(10, -2, 5), 5, "K < 0 counts as one job");
}

/* ---- cell and snapshots ---- */

Test(commit, snapshot_sync_copies_only_the_nodes_that_changed)
{
    struct hrm_netcfg net = {0};
    struct hrm_cluster *c = fx_cluster(1, 4, 8, 8 * GIB, 0, 0, &net);
    struct hrm_cell cell;
    cr_assert_eq(hrm_cell_init(&cell, c, NULL), 0);
    struct hrm_snapshot snap;
    hrm_snapshot_init(&snap, c->nnodes);
    cr_assert_eq(hrm_snapshot_sync(&snap, &cell), 4, "a new snapshot is stale everywhere");
    cr_assert_eq(hrm_snapshot_sync(&snap, &cell), 0);
    struct hrm_res r = {{0}};
    r.v[HRM_DIM_CPU] = 3000;
    cr_assert_eq(hrm_cell_take(&cell, 2, &r), 0);
    cr_assert_eq(hrm_snapshot_sync(&snap, &cell), 1);
    cr_assert_eq(snap.nodes[2].free.v[HRM_DIM_CPU], 5000);
    cr_assert_eq(snap.version, cell.version);
    r.v[HRM_DIM_CPU] = 6000;
    cr_assert_eq(hrm_cell_take(&cell, 2, &r), -HRM_ENOFIT);
    cr_assert_eq(hrm_cell_give(&cell, 1, &r), -HRM_ESTATE, "a release nobody took");
    cr_assert_eq(hrm_snapshot_sync(&snap, &cell), 0, "refused changes change nothing");
    hrm_snapshot_fini(&snap);
    hrm_cell_fini(&cell);
    hrm_cluster_free(c);
}

/* ---- optimistic commit ---- */

Test(commit, concurrent_claims_on_one_node_one_wins_the_other_retries_and_succeeds_later)
{
    struct world w;
    world_init(&w, 1, 4, 2, 3, HRM_VALIDATE_RESOURCE, 2);
    snap_request(&w, 0, 1, false, 0);
    snap_request(&w, 1, 1, false, 0);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_SNAP_REPLY), 2);
    uint64_t v = node_version(&w, 0);
    /* Both planned task (job) 0 and 1 on the node's 4 cores: 3 + 3 do not fit. */
    claim(&w, 0, 1, 0, 0, v, HRM_CLAIM_LAST);
    claim(&w, 1, 1, 1, 0, v, HRM_CLAIM_LAST);
    cr_assert_eq(verdict(&w, 0, 0), HRM_CLAIM_COMMITTED);
    cr_assert_eq(verdict(&w, 1, 1), HRM_CLAIM_CONFLICT);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_TASK_LAUNCH), 1);
    cr_assert_eq(fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0)->m.task, 0);
    cr_assert_eq(fenv_find(&w.f, HRM_MSG_TASK_LAUNCH, 0)->to, hrm_addr_node(0));
    /* The loser's retry: nothing changed, so its request waits... */
    fenv_clear(&w.f);
    snap_request(&w, 1, 2, false, hrm_commit_cell(w.m)->version);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_SNAP_REPLY), 0);
    /* ...until the winner ends: the end reaches its owner and the snapshot goes out. */
    task_end(&w, 0, 0);
    const struct fenv_sent *fwd = fenv_find(&w.f, HRM_MSG_TASK_END, 0);
    cr_assert_not_null(fwd);
    cr_assert_eq(fwd->to, hrm_addr_sched(0));
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_SNAP_REPLY), 1);
    claim(&w, 1, 2, 1, 0, node_version(&w, 0), HRM_CLAIM_LAST);
    cr_assert_eq(verdict(&w, 1, 1), HRM_CLAIM_COMMITTED);
    const struct hrm_commit_stats *st = hrm_commit_stats(w.m);
    cr_assert_eq(st->claims, 3);
    cr_assert_eq(st->committed, 2);
    cr_assert_eq(st->conflicts, 1);
    cr_assert_eq(st->syncs_parked, 1);
    cr_assert_eq(hrm_commit_cell(w.m)->nodes[0].free.v[HRM_DIM_CPU], 1000);
    world_fini(&w);
}

/* ---- per-node version validation ---- */

static void stale_but_fitting(enum hrm_validate_mode mode, int expect)
{
    struct world w;
    world_init(&w, 1, 16, 3, 1, mode, 2);
    uint64_t v = node_version(&w, 0);
    claim(&w, 1, 1, 0, 0, v, HRM_CLAIM_LAST); /* instance 1 changes the node */
    cr_assert_eq(verdict(&w, 1, 0), HRM_CLAIM_COMMITTED);
    cr_assert_neq(node_version(&w, 0), v);
    /* Instance 0 planned two tasks on the node at version v; 14 cores are still free. */
    claim(&w, 0, 1, 1, 0, v, 0);
    claim(&w, 0, 1, 2, 0, v, HRM_CLAIM_LAST);
    cr_assert_eq(verdict(&w, 0, 1), expect);
    cr_assert_eq(verdict(&w, 0, 2), expect);
    const struct hrm_commit_stats *st = hrm_commit_stats(w.m);
    cr_assert_eq(st->conflicts_stale, expect == HRM_CLAIM_CONFLICT ? 2 : 0);
    world_fini(&w);
}

Test(commit, resource_validation_commits_a_stale_claim_that_still_fits)
{
    stale_but_fitting(HRM_VALIDATE_RESOURCE, HRM_CLAIM_COMMITTED);
}

Test(commit, strict_validation_refuses_a_stale_claim_that_still_fits)
{
    stale_but_fitting(HRM_VALIDATE_VERSION, HRM_CLAIM_CONFLICT);
}

Test(commit, strict_validation_lets_one_transaction_put_two_claims_on_one_node)
{
    struct world w;
    world_init(&w, 1, 16, 2, 1, HRM_VALIDATE_VERSION, 1);
    uint64_t v = node_version(&w, 0);
    claim(&w, 0, 1, 0, 0, v, 0);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_CLAIM_ACK), 0, "validated when the last claim is in");
    claim(&w, 0, 1, 1, 0, v, HRM_CLAIM_LAST);
    cr_assert_eq(verdict(&w, 0, 0), HRM_CLAIM_COMMITTED);
    cr_assert_eq(verdict(&w, 0, 1), HRM_CLAIM_COMMITTED, "its own first claim made no conflict");
    world_fini(&w);
}

/* ---- pessimistic commit ---- */

Test(commit, locked_reservation_is_never_bounced_by_a_racing_batch_commit)
{
    struct world w;
    world_init(&w, 1, 4, 2, 3, HRM_VALIDATE_RESOURCE, 2);
    snap_request(&w, 1, 1, false, 0); /* batch instance 1 snapshots first */
    snap_request(&w, 0, 1, true, 0);  /* stream instance 0 takes the lock */
    const struct fenv_sent *g = fenv_find(&w.f, HRM_MSG_SNAP_REPLY, 1);
    cr_assert_eq(g->to, hrm_addr_sched(0));
    cr_assert_eq(g->m.status, HRM_SNAP_LOCK);
    uint64_t v = node_version(&w, 0);
    /* The batch commit arrives first, but the lock is held: it is deferred. */
    claim(&w, 1, 1, 1, 0, v, HRM_CLAIM_LAST);
    cr_assert_eq(verdict(&w, 1, 1), -1);
    claim(&w, 0, 1, 0, 0, v, HRM_CLAIM_LAST | HRM_CLAIM_LOCKED);
    cr_assert_eq(verdict(&w, 0, 0), HRM_CLAIM_COMMITTED);
    cr_assert_eq(verdict(&w, 1, 1), HRM_CLAIM_CONFLICT, "validated after the lock, and lost");
    const struct hrm_commit_stats *st = hrm_commit_stats(w.m);
    cr_assert_eq(st->locked_bounced, 0);
    cr_assert_eq(st->txns_deferred, 1);
    cr_assert_eq(st->txns_locked, 1);
    world_fini(&w);
}

Test(commit, lock_requests_are_granted_in_turn_and_an_empty_transaction_releases)
{
    struct world w;
    world_init(&w, 1, 4, 2, 1, HRM_VALIDATE_RESOURCE, 2);
    snap_request(&w, 0, 1, true, 0);
    snap_request(&w, 1, 1, true, 0);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_SNAP_REPLY), 1, "the second waits for the lock");
    cr_assert_eq(hrm_commit_stats(w.m)->lock_waits, 1);
    /* A claim under a lock one does not hold breaks the protocol. */
    struct hrm_msg bad = {.type = HRM_MSG_CLAIM,
                          .from = hrm_addr_sched(1),
                          .job = 1,
                          .task = 1,
                          .node = 0,
                          .attempt = 1,
                          .status = HRM_CLAIM_LAST | HRM_CLAIM_LOCKED};
    cr_assert_eq(hrm_commit_on_msg(w.m, &w.f.env, &bad), -HRM_ESTATE);
    claim(&w, 0, 1, -1, -1, 0, HRM_CLAIM_LAST | HRM_CLAIM_LOCKED);
    const struct fenv_sent *g = fenv_find(&w.f, HRM_MSG_SNAP_REPLY, 1);
    cr_assert_not_null(g, "the lock passes on");
    cr_assert_eq(g->to, hrm_addr_sched(1));
    cr_assert_eq(g->m.status, HRM_SNAP_LOCK);
    world_fini(&w);
}

Test(commit, repeated_task_end_and_unknown_instance)
{
    struct world w;
    world_init(&w, 1, 4, 1, 1, HRM_VALIDATE_RESOURCE, 1);
    claim(&w, 0, 1, 0, 0, node_version(&w, 0), HRM_CLAIM_LAST);
    task_end(&w, 0, 0);
    fenv_clear(&w.f);
    task_end(&w, 0, 0);
    cr_assert_eq(fenv_count(&w.f, HRM_MSG_TASK_END), 0, "a repeated report is dropped");
    cr_assert_eq(hrm_commit_cell(w.m)->nodes[0].free.v[HRM_DIM_CPU], 4000);
    struct hrm_msg m = {.type = HRM_MSG_SNAP_REQUEST, .from = hrm_addr_sched(3)};
    cr_assert_eq(hrm_commit_on_msg(w.m, &w.f.env, &m), -HRM_ESTATE);
    world_fini(&w);
}

Test(commit, a_malformed_transaction_is_refused_whole)
{
    struct world w;
    world_init(&w, 1, 16, 2, 1, HRM_VALIDATE_RESOURCE, 1);
    claim(&w, 0, 1, 0, 0, node_version(&w, 0), HRM_CLAIM_LAST);
    uint64_t v = hrm_commit_cell(w.m)->version;
    fenv_clear(&w.f);
    /* Task 1 is fine, task 0 is already running: nothing of the transaction commits. */
    claim(&w, 0, 2, 1, 0, node_version(&w, 0), 0);
    struct hrm_msg m = {.type = HRM_MSG_CLAIM,
                        .from = hrm_addr_sched(0),
                        .job = 0,
                        .task = 0,
                        .node = 0,
                        .attempt = 2,
                        .status = HRM_CLAIM_LAST,
                        .value = (int64_t)node_version(&w, 0)};
    cr_assert_eq(hrm_commit_on_msg(w.m, &w.f.env, &m), -HRM_ESTATE);
    cr_assert_eq(hrm_commit_cell(w.m)->version, v);
    cr_assert_eq(w.f.nsent, 0);
    world_fini(&w);
}

Test(commit, k_counts_gpu_jobs_from_their_first_request_to_their_last_gpu_task)
{
    struct hrm_netcfg net = {0};
    struct hrm_cluster *c = fx_cluster(1, 1, 16, 64 * GIB, 2, 16 * GIB, &net);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "gpu", "u", 0); /* job 0: tasks 0, 1 ask a GPU each */
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 2, 1000, GIB, 1, GIB, 1000);
    fx_job(wl, "cpu", "u", 0); /* job 1: task 2, no GPU */
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 1, 1000, GIB, 0, 0, 1000);
    struct hrm_commit_config cfg = {.validate = HRM_VALIDATE_RESOURCE, .instances = 1};
    struct hrm_commit *m = hrm_commit_new(c, wl, &cfg, NULL);
    struct fenv f;
    fenv_init(&f);
    struct hrm_msg req = {.type = HRM_MSG_SNAP_REQUEST, .from = hrm_addr_sched(0), .job = 1};
    cr_assert_eq(hrm_commit_on_msg(m, &f.env, &req), 0);
    cr_assert_eq(hrm_commit_cell(m)->gpu_jobs, 0, "a job without GPU tasks is not one of the K");
    req.job = 0;
    cr_assert_eq(hrm_commit_on_msg(m, &f.env, &req), 0);
    cr_assert_eq(hrm_commit_cell(m)->gpu_jobs, 1, "counted while it waits, before it holds any");
    cr_assert_eq(hrm_commit_on_msg(m, &f.env, &req), 0);
    cr_assert_eq(hrm_commit_cell(m)->gpu_jobs, 1, "once");
    uint64_t v = hrm_commit_cell(m)->nodes[0].version;
    for (int t = 0; t < 2; t++) {
        struct hrm_msg cl = {.type = HRM_MSG_CLAIM,
                             .from = hrm_addr_sched(0),
                             .job = 0,
                             .task = t,
                             .node = 0,
                             .attempt = 1,
                             .value = (int64_t)v,
                             .status = t == 1 ? HRM_CLAIM_LAST : 0};
        cr_assert_eq(hrm_commit_on_msg(m, &f.env, &cl), 0);
    }
    cr_assert_eq(hrm_commit_stats(m)->committed, 2);
    for (int t = 0; t < 2; t++) {
        struct hrm_msg end = {.type = HRM_MSG_TASK_END, .job = 0, .task = t, .node = 0};
        cr_assert_eq(hrm_commit_on_msg(m, &f.env, &end), 0);
        cr_assert_eq(hrm_commit_cell(m)->gpu_jobs, t == 0 ? 1 : 0);
    }
    hrm_commit_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
