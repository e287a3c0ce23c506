/* Pending jobs' estimate (simulaterun over the cluster's nodes, worked by hand) and reason text. */
#include <criterion/criterion.h>
#include <string.h>

#include "daemon/master_eta.h"

#define SEC 1000000ll
#define GIB_ (1ll << 30)

static struct hrm_res res(int64_t milli, int64_t mem, int64_t gpus)
{
    struct hrm_res r = {{0}};
    r.v[HRM_DIM_CPU] = milli;
    r.v[HRM_DIM_MEM] = mem;
    r.v[HRM_DIM_GPU] = gpus;
    return r;
}

static struct eta_task task(int64_t milli, int64_t time_us)
{
    return (struct eta_task){.req = res(milli, 0, 0), .time_us = time_us};
}

static struct eta_node node(bool up, int64_t cpus, int64_t free_milli, int64_t gpus,
                            int64_t free_gpus)
{
    return (struct eta_node){.up = up,
                             .cap = res(cpus * 1000, 8 * GIB_, gpus),
                             .free = res(free_milli, 8 * GIB_, free_gpus)};
}

/*
 * n0: 4 CPUs, running A (4 CPUs, 30 s left).  n1: 2 CPUs, running B (2 CPUs, 10 s left).
 * Ahead, in order: C (2 CPUs, runs 20 s), then D (2 CPUs, runs 5 s).  Then T (4 CPUs).
 *   C: n0 frees at 30, n1 at 10           -> C queues on n1, runs 10..30.
 *   D: n0 at 30; n1 after C, at 30        -> a tie: the first node, n0; D runs 30..35.
 *   T: 4 CPUs never fit n1; on n0 A ends at 30, D holds 2 CPUs until 35 -> T starts at 35 s.
 */
Test(eta, worked_cluster)
{
    struct eta_node nodes[] = {node(true, 4, 0, 0, 0), node(true, 2, 0, 0, 0)};
    struct eta_sim s;
    eta_sim_init(&s, nodes, 2, ETA_WORK_MAX);
    struct eta_task a = task(4000, 30 * SEC), b = task(2000, 10 * SEC);
    eta_sim_running(&s, 0, &a);
    eta_sim_running(&s, 1, &b);
    struct eta_task c = task(2000, 20 * SEC), d = task(2000, 5 * SEC), t = task(4000, SEC);
    int32_t where;
    cr_assert_eq(eta_sim_start(&s, &c, &where), 10 * SEC);
    cr_assert_eq(where, 1);
    eta_sim_enqueue(&s, &c);
    cr_assert_eq(eta_sim_start(&s, &d, &where), 30 * SEC);
    cr_assert_eq(where, 0);
    eta_sim_enqueue(&s, &d);
    cr_assert_eq(eta_sim_start(&s, &t, &where), 35 * SEC);
    cr_assert_eq(where, 0);
    eta_sim_fini(&s);
}

/*
 * The same cluster when B's run time is unknown:
 *   C: n0 at 30, n1 never known          -> n0, runs 30..50.
 *   D: n0: A ends at 30, C and D both fit its 4 CPUs -> 30, runs 30..35.
 *   T: n0 frees all 4 CPUs when C ends   -> 50 s: B's unknown end does not matter to it.
 * When A's run time is unknown too, T's start depends on it: unknown (-1).
 */
Test(eta, unknown_only_when_it_matters)
{
    struct eta_node nodes[] = {node(true, 4, 0, 0, 0), node(true, 2, 0, 0, 0)};
    struct eta_task a = task(4000, 30 * SEC), b = task(2000, -1);
    struct eta_task c = task(2000, 20 * SEC), d = task(2000, 5 * SEC), t = task(4000, SEC);
    int32_t where;
    for (int unknown_a = 0; unknown_a < 2; unknown_a++) {
        struct eta_sim s;
        eta_sim_init(&s, nodes, 2, ETA_WORK_MAX);
        a.time_us = unknown_a ? -1 : 30 * SEC;
        eta_sim_running(&s, 0, &a);
        eta_sim_running(&s, 1, &b);
        eta_sim_enqueue(&s, &c);
        eta_sim_enqueue(&s, &d);
        cr_assert_eq(eta_sim_start(&s, &t, &where), unknown_a ? -1 : 50 * SEC);
        eta_sim_fini(&s);
    }
}

/* Down nodes and nodes too small hold nothing; a spent work bound answers unknown. */
Test(eta, down_small_and_budget)
{
    struct eta_node nodes[] = {node(false, 8, 8000, 0, 0), node(true, 2, 2000, 0, 0)};
    struct eta_sim s;
    eta_sim_init(&s, nodes, 2, ETA_WORK_MAX);
    struct eta_task big = task(4000, SEC), small = task(1000, SEC);
    int32_t where;
    cr_assert_eq(eta_sim_start(&s, &big, &where), -1);
    cr_assert_eq(where, -1);
    cr_assert_eq(eta_sim_start(&s, &small, &where), 0);
    cr_assert_eq(where, 1);
    eta_sim_fini(&s);
    /* A bound of 3 rows: 2 tasks queued on n1 (one row visited each, plus the table)... */
    eta_sim_init(&s, nodes, 2, 3);
    eta_sim_enqueue(&s, &small); /* visits 1 row: work 1 */
    eta_sim_enqueue(&s, &small); /* visits 2 rows: work 3 */
    cr_assert_eq(eta_sim_start(&s, &small, &where), -1); /* would visit 3 more: spent */
    eta_sim_fini(&s);
}

/* A job of many equal tasks: one simulation per task after the first (the node that changed). */
Test(eta, equal_tasks_reuse_answers)
{
    struct eta_node nodes[4];
    for (int n = 0; n < 4; n++)
        nodes[n] = node(true, 1, 1000, 0, 0);
    struct eta_sim s;
    eta_sim_init(&s, nodes, 4, ETA_WORK_MAX);
    struct eta_task t = task(1000, 10 * SEC);
    for (int k = 0; k < 8; k++)
        eta_sim_enqueue(&s, &t);
    /* 8 tasks of 10 s over 4 one-CPU nodes: two rounds; the ninth starts at 20 s. */
    int32_t where;
    cr_assert_eq(eta_sim_start(&s, &t, &where), 20 * SEC);
    /* First question: 4 nodes of 1 row (the task); then 1 node per task. */
    cr_assert_lt(s.work, 4 + 8 * 3 + 1);
    eta_sim_fini(&s);
}

Test(eta, request_text)
{
    char buf[128];
    struct hrm_res r = res(2000, 0, 0);
    cr_assert_str_eq(eta_request_text(&r, 0, buf, sizeof(buf)), "2 CPUs");
    r = res(1000, 0, 0);
    cr_assert_str_eq(eta_request_text(&r, 0, buf, sizeof(buf)), "1 CPU");
    r = res(500, 512ll << 20, 0);
    cr_assert_str_eq(eta_request_text(&r, 0, buf, sizeof(buf)), "0.5 CPU and 512.0M memory");
    r = res(1500, 4 * GIB_, 2);
    r.v[HRM_DIM_GPU_MEM] = 8 * GIB_;
    cr_assert_str_eq(eta_request_text(&r, 0, buf, sizeof(buf)),
                     "1.5 CPUs, 4.0G memory and 2 GPUs with 8.0G");
    cr_assert_str_eq(eta_request_text(&r, 1000, buf, sizeof(buf)),
                     "1.5 CPUs, 4.0G memory and 2 GPUs with 8.0G");
    r = res(2000, 0, 1);
    r.v[HRM_DIM_GPU_MEM] = 4 * GIB_;
    cr_assert_str_eq(eta_request_text(&r, 500, buf, sizeof(buf)),
                     "2 CPUs and 0.5 GPU with 4.0G");
}

static const char *const names[] = {"n0", "n1", "n2"};

static const char *reason(struct eta_reason_in *in, struct hrm_res *req, struct eta_node *nodes,
                          int32_t n, char *buf, size_t len)
{
    in->req = req;
    in->nodes = nodes;
    in->names = names;
    in->nnodes = n;
    if (!in->queue)
        in->queue = "default";
    return eta_reason(in, buf, len);
}

Test(eta, reason_text)
{
    char buf[512];
    /* n0 has 1 of 4 CPUs free, n1 none of 2: CPUs short on both; 3 jobs ahead. */
    struct eta_node two[] = {node(true, 4, 1000, 0, 0), node(true, 2, 0, 0, 0)};
    struct hrm_res cpu2 = res(2000, 0, 0);
    struct eta_reason_in in = {.ahead = 3};
    cr_assert_str_eq(reason(&in, &cpu2, two, 2, buf, sizeof(buf)),
                     "waiting for 2 CPUs free on one node (CPUs short on 2 nodes); "
                     "3 jobs ahead in queue default");
    /* A GPU task: only n0 has a GPU, busy; n1 (no GPU) does not count. */
    struct eta_node gpu[] = {node(true, 4, 3000, 1, 0), node(true, 4, 4000, 0, 0)};
    struct hrm_res g1 = res(1000, 0, 1);
    in = (struct eta_reason_in){0};
    cr_assert_str_eq(reason(&in, &g1, gpu, 2, buf, sizeof(buf)),
                     "waiting for 1 CPU and 1 GPU free on one node (GPUs short on 1 node)");
    /* The only node big enough is down. */
    struct eta_node down[] = {node(true, 1, 1000, 0, 0), node(false, 4, 4000, 0, 0)};
    cr_assert_str_eq(reason(&in, &cpu2, down, 2, buf, sizeof(buf)),
                     "the node that could run its tasks (n1) is down");
    /* None big enough at all. */
    struct hrm_res cpu8 = res(8000, 0, 0);
    cr_assert_str_eq(reason(&in, &cpu8, down, 2, buf, sizeof(buf)),
                     "no node is big enough for 8 CPUs");
    /* Room now, nothing ahead: who holds it. */
    struct eta_node room[] = {node(true, 4, 4000, 0, 0)};
    in.holder = "policy drf has not started it yet";
    cr_assert_str_eq(reason(&in, &cpu2, room, 1, buf, sizeof(buf)),
                     "room for 2 CPUs on 1 node: policy drf has not started it yet");
    /* Room now, but a job ahead in its queue. */
    in.ahead = 1;
    in.queue = "q";
    cr_assert_str_eq(reason(&in, &cpu2, room, 1, buf, sizeof(buf)), "1 job ahead in queue q");
    /* No node at all; reconciling; a failed job. */
    cr_assert_str_eq(reason(&in, &cpu2, room, 0, buf, sizeof(buf)), "no node has registered yet");
    in.reconciling = true;
    cr_assert(strstr(reason(&in, &cpu2, room, 1, buf, sizeof(buf)), "reconciling"));
    in.failed = true;
    cr_assert(strstr(reason(&in, &cpu2, room, 1, buf, sizeof(buf)), "will be skipped"));
}
