/* The shared-state roles as the daemons drive them: a cell and a workload that grow, nodes that leave, instances that die, runs adopted, tasks lost or dropped. */
#include <criterion/criterion.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/commit.h"
#include "hrm/snapshot.h"
#include "hrm/ssched.h"
#include "hrm/state.h"

static struct hrm_msg msg_of(int type, hrm_addr from, int job, int task, int node, int attempt,
                             unsigned status, int64_t value)
{
    return (struct hrm_msg){.type = (uint16_t)type,
                            .from = from,
                            .job = job,
                            .task = task,
                            .node = node,
                            .attempt = attempt,
                            .status = (uint16_t)status,
                            .value = value};
}

/* The verdict sent to instance inst for task, or -1. */
static int verdict(const struct fenv *f, int inst, int task)
{
    for (int k = 0; k < f->nsent; k++)
        if (f->sent[k].m.type == HRM_MSG_CLAIM_ACK && f->sent[k].to == hrm_addr_sched(inst) &&
            f->sent[k].m.task == task)
            return f->sent[k].m.status;
    return -1;
}

static void add_job(struct hrm_workload *wl, int tasks, int64_t cpu)
{
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, tasks, cpu, GIB, 0, 0, 1000);
}

static void add_node(struct hrm_cluster *c, const char *name, int cores)
{
    struct hrm_error err;
    struct hrm_node_desc d = {.name = name, .rack = 0, .cores = cores, .mem = 64 * GIB};
    cr_assert_geq(hrm_cluster_add_node(c, &d, &err), 0, "%s", err.text);
}

static void to_commit(struct hrm_commit *m, struct fenv *f, struct hrm_msg msg)
{
    cr_assert_eq(hrm_commit_on_msg(m, &f->env, &msg), 0);
}

/* ---- the commit role ---- */

Test(sharedrt, the_cell_and_the_workload_grow_and_new_nodes_and_tasks_commit)
{
    struct hrm_netcfg net = {0};
    struct hrm_cluster *c = fx_cluster(1, 1, 2, 64 * GIB, 0, 0, &net);
    struct hrm_workload *wl = hrm_workload_new();
    add_job(wl, 1, 2000);
    struct hrm_commit_config cfg = {.validate = HRM_VALIDATE_RESOURCE, .instances = 4};
    struct hrm_error err;
    struct hrm_commit *m = hrm_commit_new(c, wl, &cfg, &err);
    cr_assert_not_null(m, "%s", err.text);
    struct fenv f;
    fenv_init(&f);
    uint64_t v0 = hrm_commit_cell(m)->version;
    add_node(c, "n1", 4);
    add_job(wl, 2, 2000);
    cr_assert_eq(hrm_commit_grow(m, &f.env), 0);
    const struct hrm_cell *cell = hrm_commit_cell(m);
    cr_assert_eq(cell->nnodes, 2);
    cr_assert_eq(cell->nodes[1].free.v[HRM_DIM_CPU], 4000, "a new node joins at its capacity");
    cr_assert_gt(cell->version, v0, "growing is a change snapshots must see");
    /* The new job's two tasks (1 and 2) commit on the new node. */
    to_commit(m, &f, msg_of(HRM_MSG_CLAIM, hrm_addr_sched(3), 1, 1, 1, 1, 0, 1));
    to_commit(m, &f, msg_of(HRM_MSG_CLAIM, hrm_addr_sched(3), 1, 2, 1, 1, HRM_CLAIM_LAST, 1));
    cr_assert_eq(verdict(&f, 3, 1), HRM_CLAIM_COMMITTED);
    cr_assert_eq(verdict(&f, 3, 2), HRM_CLAIM_COMMITTED);
    cr_assert_eq(hrm_commit_task_node(m, 2), 1);
    cr_assert_eq(hrm_commit_cell(m)->nodes[1].free.v[HRM_DIM_CPU], 0);
    hrm_commit_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(sharedrt, a_dead_instance_is_forgotten_its_lock_goes_to_the_next_and_its_claims_vanish)
{
    struct hrm_netcfg net = {0};
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 64 * GIB, 0, 0, &net);
    struct hrm_workload *wl = hrm_workload_new();
    add_job(wl, 1, 1000);
    add_job(wl, 1, 1000);
    add_job(wl, 1, 1000);
    struct hrm_commit_config cfg = {.validate = HRM_VALIDATE_RESOURCE, .instances = 3};
    struct hrm_commit *m = hrm_commit_new(c, wl, &cfg, NULL);
    struct fenv f;
    fenv_init(&f);
    /* Instance 0 holds the cell lock; instance 1 waits for it; instance 2 sent half a
     * transaction. */
    to_commit(m, &f, msg_of(HRM_MSG_SNAP_REQUEST, hrm_addr_sched(0), 0, -1, -1, 1, HRM_SNAP_LOCK, 0));
    to_commit(m, &f, msg_of(HRM_MSG_SNAP_REQUEST, hrm_addr_sched(1), 1, -1, -1, 1, HRM_SNAP_LOCK, 0));
    to_commit(m, &f, msg_of(HRM_MSG_CLAIM, hrm_addr_sched(2), 2, 2, 0, 7, 0, 1));
    cr_assert_eq(fenv_count(&f, HRM_MSG_SNAP_REPLY), 1);
    cr_assert_eq(hrm_commit_stats(m)->lock_waits, 1);
    fenv_clear(&f);
    cr_assert_eq(hrm_commit_forget(m, &f.env, 0), 0);
    const struct fenv_sent *r = fenv_find(&f, HRM_MSG_SNAP_REPLY, 0);
    cr_assert_not_null(r, "the lock goes to the instance that waited");
    cr_assert_eq(r->to, hrm_addr_sched(1));
    cr_assert_eq(r->m.status, HRM_SNAP_LOCK);
    cr_assert_eq(hrm_commit_forget(m, &f.env, 2), 0);
    /* Instance 2's next transaction starts clean (the half one was dropped); it waits for
     * the lock holder's, whose empty transaction releases the lock. */
    to_commit(m, &f, msg_of(HRM_MSG_CLAIM, hrm_addr_sched(2), 2, 2, 0, 8, HRM_CLAIM_LAST, 1));
    cr_assert_eq(verdict(&f, 2, 2), -1, "deferred while the lock is held");
    to_commit(m, &f, msg_of(HRM_MSG_CLAIM, hrm_addr_sched(1), -1, -1, -1, 1,
                            HRM_CLAIM_LAST | HRM_CLAIM_LOCKED, 0));
    cr_assert_eq(verdict(&f, 2, 2), HRM_CLAIM_COMMITTED);
    cr_assert_eq(hrm_commit_stats(m)->claims, 1, "the forgotten claim was never validated");
    cr_assert_eq(hrm_commit_forget(m, &f.env, 3), -HRM_ESTATE, "no such instance");
    hrm_commit_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(sharedrt, a_node_that_left_takes_no_claim_and_snapshots_show_it_down)
{
    struct hrm_netcfg net = {0};
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 64 * GIB, 0, 0, &net);
    struct hrm_workload *wl = hrm_workload_new();
    add_job(wl, 2, 1000);
    struct hrm_commit_config cfg = {.validate = HRM_VALIDATE_RESOURCE, .instances = 1};
    struct hrm_commit *m = hrm_commit_new(c, wl, &cfg, NULL);
    struct fenv f;
    fenv_init(&f);
    /* A request waiting for a change is answered when the node leaves. */
    uint64_t v = hrm_commit_cell(m)->version;
    to_commit(m, &f, msg_of(HRM_MSG_SNAP_REQUEST, hrm_addr_sched(0), 0, -1, -1, 1, 0, (int64_t)v));
    cr_assert_eq(fenv_count(&f, HRM_MSG_SNAP_REPLY), 0);
    cr_assert_eq(hrm_commit_node_up(m, &f.env, 0, false), 0);
    cr_assert_eq(fenv_count(&f, HRM_MSG_SNAP_REPLY), 1);
    struct hrm_snapshot snap;
    hrm_snapshot_init(&snap, 1);
    hrm_snapshot_sync(&snap, hrm_commit_cell(m));
    cr_assert(snap.nodes[0].down);
    to_commit(m, &f, msg_of(HRM_MSG_CLAIM, hrm_addr_sched(0), 0, 0, 0, 1, HRM_CLAIM_LAST, 1));
    cr_assert_eq(verdict(&f, 0, 0), HRM_CLAIM_CONFLICT, "a claim on a node that is down");
    fenv_clear(&f);
    cr_assert_eq(hrm_commit_node_up(m, &f.env, 0, true), 0);
    to_commit(m, &f, msg_of(HRM_MSG_CLAIM, hrm_addr_sched(0), 0, 0, 0, 2, HRM_CLAIM_LAST, 1));
    cr_assert_eq(verdict(&f, 0, 0), HRM_CLAIM_COMMITTED);
    cr_assert_eq(hrm_commit_node_up(m, &f.env, 5, true), -HRM_ESTATE);
    hrm_snapshot_fini(&snap);
    hrm_commit_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(sharedrt, an_adopted_run_holds_its_resources_and_is_never_claimed_twice)
{
    struct hrm_netcfg net = {0};
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 64 * GIB, 0, 0, &net);
    struct hrm_workload *wl = hrm_workload_new();
    add_job(wl, 2, 3000);
    struct hrm_commit_config cfg = {.validate = HRM_VALIDATE_RESOURCE, .instances = 2};
    struct hrm_commit *m = hrm_commit_new(c, wl, &cfg, NULL);
    struct fenv f;
    fenv_init(&f);
    cr_assert_eq(hrm_commit_adopt(m, 0, 0, 1), 0);
    cr_assert_eq(hrm_commit_cell(m)->nodes[0].free.v[HRM_DIM_CPU], 1000);
    cr_assert_eq(hrm_commit_adopt(m, 0, 0, 1), -HRM_ESTATE, "adopted twice");
    cr_assert_eq(hrm_commit_adopt(m, 1, 0, 1), -HRM_ENOFIT, "no longer fits");
    /* The other task does not fit beside it: a conflict, not a second run. */
    to_commit(m, &f, msg_of(HRM_MSG_CLAIM, hrm_addr_sched(0), 0, 1, 0, 1, HRM_CLAIM_LAST, 1));
    cr_assert_eq(verdict(&f, 0, 1), HRM_CLAIM_CONFLICT);
    /* A claim for the adopted task itself breaks the protocol. */
    struct hrm_msg again = msg_of(HRM_MSG_CLAIM, hrm_addr_sched(0), 0, 0, 0, 2, HRM_CLAIM_LAST, 1);
    cr_assert_eq(hrm_commit_on_msg(m, &f.env, &again), -HRM_ESTATE);
    cr_assert_eq(hrm_commit_forget(m, &f.env, 0), 0);
    /* Its end releases it and goes to the instance that owns it. */
    fenv_clear(&f);
    to_commit(m, &f, msg_of(HRM_MSG_TASK_END, hrm_addr_node(0), 0, 0, 0, 1, HRM_OUTCOME_DONE, 0));
    cr_assert_eq(hrm_commit_cell(m)->nodes[0].free.v[HRM_DIM_CPU], 4000);
    cr_assert_eq(fenv_find(&f, HRM_MSG_TASK_END, 0)->to, hrm_addr_sched(1));
    cr_assert_eq(hrm_commit_task_node(m, 0), -1);
    hrm_commit_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* ---- the instance ---- */

struct inst {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_ssched *s;
    struct hrm_snapshot cell; /* what the master would send */
    struct fenv f;
};

static void inst_init(struct inst *x, int nodes)
{
    struct hrm_netcfg net = {0};
    x->c = nodes > 0 ? fx_cluster(1, nodes, 4, 64 * GIB, 0, 0, &net) : hrm_cluster_new(&net);
    x->wl = hrm_workload_new();
    struct hrm_ssched_config cfg = {.index = 0, .lock_stream = true, .fair_share = true, .seed = 1};
    struct hrm_error err;
    x->s = hrm_ssched_new(x->c, x->wl, &cfg, &err);
    cr_assert_not_null(x->s, "%s", err.text);
    fenv_init(&x->f);
    hrm_snapshot_init(&x->cell, 0);
}

static void inst_fini(struct inst *x)
{
    hrm_ssched_free(x->s);
    hrm_snapshot_fini(&x->cell);
    hrm_workload_free(x->wl);
    hrm_cluster_free(x->c);
}

/* A snapshot of `nodes` nodes of 4 cores and 64 GiB, all free, as of cell version v. */
static void give_snapshot(struct inst *x, int nodes, uint64_t v)
{
    const struct fenv_sent *req = NULL;
    for (int k = x->f.nsent - 1; k >= 0 && !req; k--)
        if (x->f.sent[k].m.type == HRM_MSG_SNAP_REQUEST)
            req = &x->f.sent[k];
    cr_assert_not_null(req, "no snapshot request");
    if (x->cell.nnodes < nodes) {
        hrm_snapshot_fini(&x->cell);
        hrm_snapshot_init(&x->cell, nodes);
    }
    for (int n = 0; n < nodes; n++) {
        x->cell.nodes[n] = (struct hrm_cell_node){.version = v};
        x->cell.nodes[n].free.v[HRM_DIM_CPU] = 4000;
        x->cell.nodes[n].free.v[HRM_DIM_MEM] = 64 * GIB;
        x->cell.nodes[n].cap = x->cell.nodes[n].free; /* the node's capacity travels too */
    }
    x->cell.version = v;
    struct hrm_msg r = msg_of(HRM_MSG_SNAP_REPLY, HRM_ADDR_CENTRAL, -1, -1, -1, req->m.attempt,
                              req->m.status, (int64_t)v);
    fenv_clear(&x->f);
    cr_assert_eq(hrm_ssched_on_snapshot(x->s, &x->f.env, &r, &x->cell), 0);
    cr_assert_eq(hrm_ssched_on_timer(x->s, &x->f.env, x->f.timer_cookie[x->f.ntimers - 1]), 0);
}

static int claimed(const struct inst *x, int task)
{
    for (int k = 0; k < x->f.nsent; k++)
        if (x->f.sent[k].m.type == HRM_MSG_CLAIM && x->f.sent[k].m.task == task)
            return 1;
    return 0;
}

static void ack_all(struct inst *x, enum hrm_claim_verdict v)
{
    struct fenv_sent claims[64];
    int n = 0;
    for (int k = 0; k < x->f.nsent && n < 64; k++)
        if (x->f.sent[k].m.type == HRM_MSG_CLAIM && x->f.sent[k].m.task >= 0)
            claims[n++] = x->f.sent[k];
    fenv_clear(&x->f);
    for (int k = 0; k < n; k++) {
        struct hrm_msg a = msg_of(HRM_MSG_CLAIM_ACK, HRM_ADDR_CENTRAL, claims[k].m.job,
                                  claims[k].m.task, claims[k].m.node, claims[k].m.attempt, v, 0);
        cr_assert_eq(hrm_ssched_on_msg(x->s, &x->f.env, &a), 0);
    }
}

static void end(struct inst *x, int task, enum hrm_task_outcome outcome)
{
    struct hrm_msg e = msg_of(HRM_MSG_TASK_END, HRM_ADDR_CENTRAL, x->wl->tasks[task].job, task, 0,
                              0, outcome, 0);
    cr_assert_eq(hrm_ssched_on_msg(x->s, &x->f.env, &e), 0);
}

static void submit(struct inst *x, int job)
{
    struct hrm_msg m = msg_of(HRM_MSG_JOB_SUBMIT, HRM_ADDR_CLIENT, job, -1, -1, 0, 0, 0);
    cr_assert_eq(hrm_ssched_on_msg(x->s, &x->f.env, &m), 0);
}

Test(sharedrt, an_instance_made_before_any_job_or_node_takes_jobs_as_the_workload_grows)
{
    struct inst x;
    inst_init(&x, 0);
    for (int j = 0; j < 3; j++) { /* more jobs than the instance was sized for */
        add_job(x.wl, 1, 1000);
        submit(&x, j);
    }
    cr_assert_eq(hrm_ssched_load(x.s), 3);
    give_snapshot(&x, 2, 5); /* the master's cell has nodes the instance never heard of */
    cr_assert(claimed(&x, 0));
    ack_all(&x, HRM_CLAIM_COMMITTED);
    give_snapshot(&x, 3, 6);
    cr_assert(claimed(&x, 1));
    inst_fini(&x);
}

Test(sharedrt, a_lost_run_is_planned_again_and_the_job_ends_once_all_ran)
{
    struct inst x;
    inst_init(&x, 1);
    add_job(x.wl, 2, 1000);
    submit(&x, 0);
    give_snapshot(&x, 1, 2);
    cr_assert(claimed(&x, 0) && claimed(&x, 1));
    ack_all(&x, HRM_CLAIM_COMMITTED);
    fenv_clear(&x.f);
    end(&x, 0, HRM_OUTCOME_LOST); /* its node died: back to the ready list */
    cr_assert_eq(fenv_count(&x.f, HRM_MSG_SNAP_REQUEST), 1, "a new transaction for it");
    give_snapshot(&x, 1, 3);
    cr_assert(claimed(&x, 0));
    cr_assert(!claimed(&x, 1), "the task still running is not claimed");
    ack_all(&x, HRM_CLAIM_COMMITTED);
    end(&x, 1, HRM_OUTCOME_DONE);
    cr_assert_eq(fenv_count(&x.f, HRM_MSG_JOB_END), 0);
    end(&x, 0, HRM_OUTCOME_DONE);
    cr_assert_eq(fenv_count(&x.f, HRM_MSG_JOB_END), 1);
    cr_assert_eq(hrm_ssched_load(x.s), 0);
    inst_fini(&x);
}

Test(sharedrt, dropped_tasks_end_a_job_even_in_a_transaction_or_in_the_queue)
{
    struct inst x;
    inst_init(&x, 1);
    add_job(x.wl, 2, 1000);
    add_job(x.wl, 2, 1000);
    submit(&x, 0); /* job 0 asks for a snapshot; job 1 waits in the queue */
    submit(&x, 1);
    for (int t = 0; t < 4; t++) /* both jobs cancelled: every task dropped */
        end(&x, t, HRM_OUTCOME_FAILED);
    cr_assert_eq(fenv_count(&x.f, HRM_MSG_JOB_END), 2);
    cr_assert_eq(hrm_ssched_load(x.s), 0);
    /* The snapshot of job 0's transaction comes after: it ends empty. */
    give_snapshot(&x, 1, 2);
    cr_assert_eq(fenv_count(&x.f, HRM_MSG_CLAIM), 0);
    cr_assert_eq(fenv_count(&x.f, HRM_MSG_SNAP_REQUEST), 0, "nothing left to plan");
    inst_fini(&x);
}

Test(sharedrt, adopted_tasks_are_never_claimed)
{
    struct inst x;
    inst_init(&x, 1);
    add_job(x.wl, 3, 1000);
    submit(&x, 0);
    cr_assert_eq(hrm_ssched_adopt(x.s, 1), 0);
    cr_assert_eq(hrm_ssched_adopt(x.s, 1), -HRM_ESTATE, "not ready any more");
    give_snapshot(&x, 1, 2);
    cr_assert(claimed(&x, 0) && claimed(&x, 2));
    cr_assert(!claimed(&x, 1));
    ack_all(&x, HRM_CLAIM_COMMITTED);
    for (int t = 0; t < 3; t++)
        end(&x, t, HRM_OUTCOME_DONE);
    cr_assert_eq(fenv_count(&x.f, HRM_MSG_JOB_END), 1);
    inst_fini(&x);
}
