/* Negotiator and migration: matching, accept, refuse, park and pull. */
#include <criterion/criterion.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/negotiator.h"
#include "hrm/nqs.h"

#define MS 1000ll
#define SCHED hrm_addr_sched(0)

static struct hrm_negotiator *nego_new(int nodes)
{
    struct hrm_negotiator_config cfg = {.nnodes = nodes,
                                        .nqueues = 1,
                                        .hw_us = 20 * MS,
                                        .min_gain_us = 4 * MS,
                                        .request_ttl_us = 50 * MS};
    struct hrm_error err = {{0}};
    struct hrm_negotiator *n = hrm_negotiator_new(&cfg, &err);
    cr_assert_not_null(n, "%s", err.text);
    return n;
}

static void advert(struct hrm_negotiator *n, struct fenv *f, int node, int64_t wait, int free_)
{
    struct hrm_msg m = {.type = HRM_MSG_IDLE_ADVERT,
                        .from = hrm_addr_node(node),
                        .node = node,
                        .status = 0,
                        .gpu_mask = (uint32_t)free_,
                        .attempt = 4,
                        .value = wait};
    cr_assert_eq(hrm_negotiator_on_msg(n, &f->env, &m), 0);
}

static void request(struct hrm_negotiator *n, struct fenv *f, int node, int task, int64_t wait)
{
    struct hrm_msg m = {.type = HRM_MSG_MIGRATE_REQUEST,
                        .from = hrm_addr_node(node),
                        .node = node,
                        .status = 0,
                        .job = 0,
                        .task = task,
                        .attempt = (int32_t)(100 * MS),
                        .value = wait};
    cr_assert_eq(hrm_negotiator_on_msg(n, &f->env, &m), 0);
}

Test(negotiator, matches_with_the_smallest_latest_wait_and_counts_the_task_in)
{
    struct fenv f;
    fenv_init(&f);
    struct hrm_negotiator *n = nego_new(4);
    advert(n, &f, 1, 5 * MS, 0);
    advert(n, &f, 2, 0, 1);
    advert(n, &f, 3, 2 * MS, 0);
    request(n, &f, 0, 10, 60 * MS);
    const struct fenv_sent *m = fenv_find(&f, HRM_MSG_MIGRATE_MATCH, 0);
    cr_assert_not_null(m);
    cr_assert_eq(m->to, hrm_addr_node(0), "the match goes to the source");
    cr_assert_eq(m->m.node, 2, "wait 0 with a free slot is best");
    cr_assert_eq(m->m.task, 10);
    /* node 2's free slot is taken now: 2 ms (node 3) is best */
    request(n, &f, 0, 11, 60 * MS);
    cr_assert_eq(fenv_find(&f, HRM_MSG_MIGRATE_MATCH, 1)->m.node, 2,
                 "node 2: 0 ms with no free slot left still ties first");
    request(n, &f, 0, 12, 60 * MS);
    cr_assert_eq(fenv_find(&f, HRM_MSG_MIGRATE_MATCH, 2)->m.node, 3);
    /* node 2 was counted at 100 ms / 4 slots = 25 ms: above hw, out of the pool */
    cr_assert_eq(hrm_negotiator_wait(n, 2, 0), -1);
    cr_assert_eq(hrm_negotiator_stats(n)->matches, 3);
    hrm_negotiator_free(n);
}

Test(negotiator, keeps_requests_until_an_advert_and_needs_a_gain)
{
    struct fenv f;
    fenv_init(&f);
    struct hrm_negotiator *n = nego_new(4);
    request(n, &f, 0, 5, 30 * MS);
    cr_assert_eq(fenv_count(&f, HRM_MSG_MIGRATE_MATCH), 0);
    cr_assert_eq(hrm_negotiator_pending(n), 1);
    advert(n, &f, 1, 18 * MS, 0);
    cr_assert_eq(fenv_count(&f, HRM_MSG_MIGRATE_MATCH), 1, "18 + 4 < 30: matched");
    cr_assert_eq(hrm_negotiator_pending(n), 0);
    cr_assert_eq(hrm_negotiator_wait(n, 1, 0), -1, "counted at 18 + 25 ms: above hw");
    advert(n, &f, 2, 19 * MS, 1);
    request(n, &f, 0, 6, 22 * MS);
    cr_assert_eq(fenv_count(&f, HRM_MSG_MIGRATE_MATCH), 1, "19 + 4 >= 22: no gain");
    cr_assert_eq(hrm_negotiator_pending(n), 1);
    /* a withdrawn queue is no target */
    struct hrm_msg w = {.type = HRM_MSG_IDLE_ADVERT, .node = 2, .status = 0, .value = -1};
    cr_assert_eq(hrm_negotiator_on_msg(n, &f.env, &w), 0);
    cr_assert_eq(hrm_negotiator_wait(n, 2, 0), -1);
    /* the pending request expires after its ttl */
    f.now = 100 * MS;
    advert(n, &f, 3, 0, 2);
    cr_assert_eq(fenv_count(&f, HRM_MSG_MIGRATE_MATCH), 1, "the old request expired");
    cr_assert_eq(hrm_negotiator_stats(n)->expired, 1);
    /* the source of a request is never its own target */
    request(n, &f, 3, 7, 60 * MS);
    cr_assert_eq(fenv_count(&f, HRM_MSG_MIGRATE_MATCH), 1);
    cr_assert_eq(hrm_negotiator_wait(n, 3, 0), -1, "a node asking to move work is no target");
    hrm_negotiator_free(n);
}

/* ---- the nodes' side ---- */

struct pair {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_nqs *src, *dst;
    struct fenv fs, fd;
};

/* Two 1-core nodes with balancing (hw 20 ms, lw 0); tasks of 100 ms. */
static void pair_init(struct pair *p, int ntasks, const struct hrm_nqs_queue_cfg *dst_q)
{
    p->c = fx_cluster(1, 2, 1, 16 * GIB, 0, 0, NULL);
    p->wl = hrm_workload_new();
    fx_job(p->wl, "j", "u", 0);
    fx_stage(p->wl, "s", NULL, 0);
    fx_tasks(p->wl, ntasks, 1000, GIB, 0, 0, 100 * MS);
    struct hrm_nqs_config cfg = {.balance = true, .hw_us = 20 * MS, .lw_us = 0};
    struct hrm_error err = {{0}};
    p->src = hrm_nqs_new(p->c, p->wl, 0, &cfg, &err);
    if (dst_q) {
        cfg.queues = dst_q;
        cfg.nqueues = 1;
    }
    p->dst = hrm_nqs_new(p->c, p->wl, 1, &cfg, &err);
    cr_assert(p->src && p->dst, "%s", err.text);
    fenv_init(&p->fs);
    fenv_init(&p->fd);
}

static void pair_fini(struct pair *p)
{
    hrm_nqs_free(p->src);
    hrm_nqs_free(p->dst);
    hrm_workload_free(p->wl);
    hrm_cluster_free(p->c);
}

static void run_at(struct hrm_nqs *q, struct fenv *f, int task)
{
    struct hrm_msg m = {.type = HRM_MSG_RUN,
                        .from = SCHED,
                        .job = 0,
                        .task = task,
                        .node = 0,
                        .attempt = -1,
                        .value = SCHED};
    cr_assert_eq(hrm_nqs_on_msg(q, &f->env, &m), 0);
}

/* Delivers the first message of type that `from` sent to `to_q`; returns it. */
static struct hrm_msg forward(struct fenv *from, int type, struct hrm_nqs *to_q, struct fenv *to_f)
{
    const struct fenv_sent *s = fenv_find(from, type, 0);
    cr_assert_not_null(s, "no %s sent", hrm_msg_name((enum hrm_msg_type)type));
    struct hrm_msg m = s->m;
    fenv_clear(to_f);
    cr_assert_eq(hrm_nqs_on_msg(to_q, &to_f->env, &m), 0);
    return m;
}

/* Source: task 0 runs, tasks 1 and 2 queued (expected waits 100 and 200 ms
 * > hw): both ask the negotiator; the negotiator matches task 2 with node 1. */
static struct hrm_msg source_asks(struct pair *p)
{
    for (int t = 0; t < 3; t++)
        run_at(p->src, &p->fs, t);
    struct hrm_msg launch0 = fenv_find(&p->fs, HRM_MSG_TASK_LAUNCH, 0)->m;
    cr_assert_eq(fenv_count(&p->fs, HRM_MSG_MIGRATE_REQUEST), 2);
    const struct fenv_sent *r = fenv_find(&p->fs, HRM_MSG_MIGRATE_REQUEST, 1);
    cr_assert_eq(r->to, HRM_ADDR_NEGOTIATOR);
    cr_assert_eq(r->m.task, 2);
    cr_assert_eq(r->m.value, 200 * MS, "its expected wait");
    struct hrm_msg match = {.type = HRM_MSG_MIGRATE_MATCH,
                            .from = HRM_ADDR_NEGOTIATOR,
                            .job = 0,
                            .task = 2,
                            .node = 1,
                            .status = 0};
    fenv_clear(&p->fs);
    cr_assert_eq(hrm_nqs_on_msg(p->src, &p->fs.env, &match), 0);
    const struct fenv_sent *o = fenv_find(&p->fs, HRM_MSG_MIGRATE_OFFER, 0);
    cr_assert_not_null(o);
    cr_assert_eq(o->to, hrm_addr_node(1));
    return launch0;
}

Test(negotiator, idle_target_accepts_and_the_task_moves_at_raised_priority)
{
    struct pair p;
    pair_init(&p, 3, NULL);
    /* an idle node advertises itself (at its first message) */
    struct hrm_msg probe = {.type = HRM_MSG_DEL, .from = SCHED, .attempt = 1};
    cr_assert_eq(hrm_nqs_on_msg(p.dst, &p.fd.env, &probe), 0);
    const struct fenv_sent *a = fenv_find(&p.fd, HRM_MSG_IDLE_ADVERT, 0);
    cr_assert_not_null(a);
    cr_assert_eq(a->m.value, 0);
    cr_assert_eq(a->m.gpu_mask, 1, "one free slot");
    source_asks(&p);
    forward(&p.fs, HRM_MSG_MIGRATE_OFFER, p.dst, &p.fd);
    cr_assert_not_null(fenv_find(&p.fd, HRM_MSG_MIGRATE_ACCEPT, 0));
    struct hrm_nqs_queue_info qi;
    hrm_nqs_queue_info(p.dst, 0, &qi);
    cr_assert_eq(qi.held_slots, 1, "the target holds the slot for the task");
    /* the source hands the task over; the target starts it in the held slot */
    forward(&p.fd, HRM_MSG_MIGRATE_ACCEPT, p.src, &p.fs);
    const struct fenv_sent *run = fenv_find(&p.fs, HRM_MSG_RUN, 0);
    cr_assert_not_null(run);
    cr_assert(run->m.status & HRM_RUN_MIGRATED);
    cr_assert_eq(run->m.value, SCHED, "the owner is still the scheduler");
    hrm_nqs_queue_info(p.src, 0, &qi);
    cr_assert_eq(qi.queued, 1, "only task 1 is left at the source");
    forward(&p.fs, HRM_MSG_RUN, p.dst, &p.fd);
    const struct fenv_sent *l = fenv_find(&p.fd, HRM_MSG_TASK_LAUNCH, 0);
    cr_assert_not_null(l);
    cr_assert_eq(l->m.task, 2);
    cr_assert_eq(hrm_nqs_stats(p.dst)->migrated_in, 1);
    cr_assert_eq(hrm_nqs_stats(p.src)->migrated_out, 1);
    pair_fini(&p);
}

Test(negotiator, target_refuses_for_a_reason_other_than_busy_and_the_request_is_dropped)
{
    struct pair p;
    struct hrm_nqs_queue_cfg small = {.name = ""};
    small.limit.v[HRM_DIM_MEM] = GIB / 2; /* the task asks 1 GiB */
    pair_init(&p, 3, &small);
    source_asks(&p);
    forward(&p.fs, HRM_MSG_MIGRATE_OFFER, p.dst, &p.fd);
    const struct fenv_sent *r = fenv_find(&p.fd, HRM_MSG_MIGRATE_REFUSE, 0);
    cr_assert_not_null(r);
    cr_assert_eq(r->m.status, HRM_NQS_OVER_LIMIT);
    forward(&p.fd, HRM_MSG_MIGRATE_REFUSE, p.src, &p.fs);
    struct hrm_nqs_queue_info qi;
    hrm_nqs_queue_info(p.src, 0, &qi);
    cr_assert_eq(qi.queued, 2, "the task stays where it was");
    cr_assert_eq(fenv_count(&p.fs, HRM_MSG_RUN), 0);
    cr_assert_eq(hrm_nqs_stats(p.dst)->refused, 1);
    pair_fini(&p);
}

Test(negotiator, busy_target_parks_the_request_and_pulls_the_task_when_a_slot_frees)
{
    struct pair p;
    pair_init(&p, 4, NULL);
    /* the target runs task 3, with 10 ms left when the offer comes: busy but
     * well under hw and under the task's 200 ms at the source */
    run_at(p.dst, &p.fd, 3);
    struct hrm_msg launch3 = fenv_find(&p.fd, HRM_MSG_TASK_LAUNCH, 0)->m;
    p.fd.now = p.fs.now = 90 * MS;
    source_asks(&p);
    forward(&p.fs, HRM_MSG_MIGRATE_OFFER, p.dst, &p.fd);
    cr_assert_not_null(fenv_find(&p.fd, HRM_MSG_MIGRATE_PARKED, 0));
    struct hrm_nqs_queue_info qi;
    hrm_nqs_queue_info(p.dst, 0, &qi);
    cr_assert_eq(qi.parked, 1);
    forward(&p.fd, HRM_MSG_MIGRATE_PARKED, p.src, &p.fs);
    hrm_nqs_queue_info(p.src, 0, &qi);
    cr_assert_eq(qi.queued, 2, "parked: still queued (and runnable) at the source");
    /* task 3 ends: the target holds its slot and pulls the parked task */
    p.fd.now = 100 * MS;
    struct hrm_msg end = {.type = HRM_MSG_TASK_END,
                          .from = HRM_ADDR_EXEC,
                          .job = 0,
                          .task = 3,
                          .node = 1,
                          .attempt = launch3.attempt,
                          .gpu_mask = launch3.gpu_mask};
    fenv_clear(&p.fd);
    cr_assert_eq(hrm_nqs_on_msg(p.dst, &p.fd.env, &end), 0);
    const struct fenv_sent *pull = fenv_find(&p.fd, HRM_MSG_MIGRATE_PULL, 0);
    cr_assert_not_null(pull);
    cr_assert_eq(pull->to, hrm_addr_node(0));
    cr_assert_eq(pull->m.task, 2);
    cr_assert_eq(fenv_count(&p.fd, HRM_MSG_TASK_LAUNCH), 0, "the slot waits for the task");
    forward(&p.fd, HRM_MSG_MIGRATE_PULL, p.src, &p.fs);
    forward(&p.fs, HRM_MSG_RUN, p.dst, &p.fd);
    const struct fenv_sent *l = fenv_find(&p.fd, HRM_MSG_TASK_LAUNCH, 0);
    cr_assert_not_null(l);
    cr_assert_eq(l->m.task, 2);
    cr_assert_eq(hrm_nqs_stats(p.dst)->pulls, 1);
    pair_fini(&p);
}

Test(negotiator, a_pull_for_a_task_that_started_at_home_is_cancelled)
{
    struct pair p;
    pair_init(&p, 4, NULL);
    run_at(p.dst, &p.fd, 3);
    p.fd.now = p.fs.now = 90 * MS;
    struct hrm_msg launch = source_asks(&p);
    forward(&p.fs, HRM_MSG_MIGRATE_OFFER, p.dst, &p.fd);
    forward(&p.fd, HRM_MSG_MIGRATE_PARKED, p.src, &p.fs);
    /* at the source tasks 0 and 1 end, so task 2 starts at home */
    for (int k = 0; k < 2; k++) {
        struct hrm_msg end = {.type = HRM_MSG_TASK_END,
                              .from = HRM_ADDR_EXEC,
                              .job = 0,
                              .task = launch.task,
                              .attempt = launch.attempt,
                              .gpu_mask = launch.gpu_mask};
        fenv_clear(&p.fs);
        cr_assert_eq(hrm_nqs_on_msg(p.src, &p.fs.env, &end), 0);
        const struct fenv_sent *l = fenv_find(&p.fs, HRM_MSG_TASK_LAUNCH, 0);
        cr_assert_not_null(l);
        cr_assert_eq(l->m.task, k + 1);
        launch = l->m;
    }
    const struct fenv_sent *cancel = fenv_find(&p.fs, HRM_MSG_MIGRATE_CANCEL, 0);
    cr_assert_not_null(cancel, "the parked request is withdrawn");
    cr_assert_eq(cancel->m.task, 2);
    forward(&p.fs, HRM_MSG_MIGRATE_CANCEL, p.dst, &p.fd);
    struct hrm_nqs_queue_info qi;
    hrm_nqs_queue_info(p.dst, 0, &qi);
    cr_assert_eq(qi.parked, 0);
    pair_fini(&p);
}
