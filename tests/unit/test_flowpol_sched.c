/* P1 policies: GS/GSP/GSD and FS/FSP/FSU decisions, preemption, delay, determinism. */
#include "test_flowpol.h" /* first: hrm/cluster.h needs size_t from an earlier header */

#include "hrm/sim.h"
#include "hrm/spec.h"

/* ---- GS ---- */

/* Free GPUs go to the job holding fewest, which takes its cheapest
 * (task, GPU) pair; nobody goes above its share. */
Test(gs, fewest_first_cheapest_task_within_share)
{
    struct world w;
    w_init(&w);
    int32_t r = w_rack(&w);
    int32_t n[4];
    for (int i = 0; i < 4; i++)
        n[i] = w_node(&w, r, 1, 10 * GIB);
    int32_t j0 = w_job(&w);
    int32_t a = w_task_on(&w, 2 * GIB, GIB, n[3]);
    w_task_on(&w, 2 * GIB, GIB, n[3]);
    w_task_on(&w, 2 * GIB, GIB, n[3]);
    int32_t j1 = w_job(&w);
    int32_t big = w_task_on(&w, 2 * GIB, 2 * GIB, n[2]);
    int32_t small = w_task_on(&w, 2 * GIB, GIB, n[3]); /* cheapest pair: small on n3 */
    w_task_on(&w, 2 * GIB, 2 * GIB, n[1]);
    w_begin(&w, "gs", NULL, 0);
    w_submit(&w, j0);
    w_submit(&w, j1);
    /* j0 already runs one task on n0: j1 holds fewer and is offered first */
    hrm_state_start(w.s, a, n[0], HRM_GPUS_ANY, 0);
    cr_assert_eq(w_decide(&w), 3);
    cr_assert_eq(w.ctx.decisions[0].task, small);
    cr_assert_eq(w.ctx.decisions[0].node, n[3], "j1 takes the GPU j0's tasks also want");
    cr_assert_eq(w.ctx.decisions[1].kind, HRM_DECIDE_START);
    cr_assert_eq(w.s->tasks[w.ctx.decisions[1].task].status, HRM_TASK_RUNNING);
    cr_assert_eq(w.wl->tasks[w.ctx.decisions[1].task].job, j0, "tie at 1 GPU: earlier job");
    cr_assert_eq(running_of(&w, j0), 2);
    cr_assert_eq(running_of(&w, j1), 2);
    cr_assert_eq(w.s->tasks[big].status, HRM_TASK_RUNNING, "j1's next cheapest");
    cr_assert_eq(w_decide(&w), 0, "no free GPU left");
    w_fini(&w);
}

Test(gs, never_above_share_while_others_wait_and_no_preemption)
{
    struct world w;
    w_init(&w);
    int32_t r = w_rack(&w);
    for (int i = 0; i < 5; i++)
        w_node(&w, r, 1, 10 * GIB);
    int32_t j0 = w_job(&w);
    for (int i = 0; i < 4; i++)
        w_task(&w, 2 * GIB);
    int32_t j1 = w_job(&w);
    for (int i = 0; i < 4; i++)
        w_task(&w, 2 * GIB);
    w_begin(&w, "gs", NULL, 0);
    w_submit(&w, j0);
    cr_assert_eq(w_decide(&w), 4, "alone, j0 may use every GPU it can");
    w_submit(&w, j1);
    cr_assert_eq(w_decide(&w), 1, "one free GPU; gs does not preempt");
    cr_assert_eq(count_kind(&w, HRM_DECIDE_PREEMPT), 0);
    cr_assert_eq(running_of(&w, j1), 1);
    w_fini(&w);
}

/* ---- GSP and FSP: preemption ---- */

/* j0 holds all 4 GPUs (one task started later than the others); j1 arrives:
 * shares 2/2, so the two youngest tasks of j0 are killed, and only those. */
static void preempt_youngest(const char *policy)
{
    struct world w;
    w_init(&w);
    int32_t r = w_rack(&w);
    for (int i = 0; i < 4; i++)
        w_node(&w, r, 1, 10 * GIB);
    int32_t j0 = w_job(&w);
    for (int i = 0; i < 8; i++)
        w_task(&w, 2 * GIB);
    int32_t j1 = w_job(&w);
    for (int i = 0; i < 4; i++)
        w_task(&w, 2 * GIB);
    w_begin(&w, policy, NULL, 0);
    w_submit(&w, j0);
    cr_assert_eq(w_decide(&w), 4);
    cr_assert_eq(count_kind(&w, HRM_DECIDE_PREEMPT), 0);
    /* which 4 of the 8 identical tasks start is the policy's choice */
    int32_t started[4];
    for (int i = 0; i < 4; i++)
        started[i] = w.ctx.decisions[i].task;
    /* one ends; its GPU goes to j0's next task, now the youngest */
    w_stop(&w, started[0], HRM_OUTCOME_DONE);
    cr_assert_eq(w_decide(&w), 1);
    int32_t youngest = w.ctx.decisions[0].task;
    cr_assert_eq(w_decide(&w), 0, "nothing to do, nothing killed");
    /* among the three started together, the highest id is the youngest */
    int32_t next = -1;
    for (int i = 1; i < 4; i++)
        if (started[i] > next)
            next = started[i];
    w_submit(&w, j1);
    w_decide(&w);
    cr_assert_eq(count_kind(&w, HRM_DECIDE_PREEMPT), 2, "%s", policy);
    cr_assert(preempted(&w, youngest), "%s: the task started last", policy);
    cr_assert(preempted(&w, next), "%s", policy);
    cr_assert_eq(running_of(&w, j0), 2);
    cr_assert_eq(running_of(&w, j1), 2);
    cr_assert_eq(w.s->tasks[youngest].status, HRM_TASK_READY, "killed tasks are requeued");
    cr_assert_eq(w_decide(&w), 0, "at their shares: no more kills");
    w_fini(&w);
}

Test(gsp, preempts_the_youngest_tasks_of_an_over_share_job)
{
    preempt_youngest("gsp");
}

Test(fsp, preempts_the_youngest_tasks_of_an_over_share_job)
{
    preempt_youngest("fsp");
}

/* Only as many as the free GPUs cannot cover, and never without need. */
static void preempt_only_when_needed(const char *policy)
{
    struct world w;
    w_init(&w);
    int32_t r = w_rack(&w);
    for (int i = 0; i < 5; i++)
        w_node(&w, r, 1, 10 * GIB);
    int32_t j0 = w_job(&w);
    for (int i = 0; i < 4; i++)
        w_task(&w, 2 * GIB);
    int32_t j1 = w_job(&w);
    for (int i = 0; i < 4; i++)
        w_task(&w, 2 * GIB);
    int32_t j2 = w_job(&w);
    w_task(&w, 2 * GIB);
    w_begin(&w, policy, NULL, 0);
    w_submit(&w, j0);
    cr_assert_eq(w_decide(&w), 4);
    /* j2 (1 task) arrives: one GPU is free, nobody needs killing */
    w_submit(&w, j2);
    cr_assert_eq(w_decide(&w), 1);
    cr_assert_eq(count_kind(&w, HRM_DECIDE_PREEMPT), 0, "%s", policy);
    w_stop(&w, w.wl->jobs[j2].task_first, HRM_OUTCOME_DONE);
    cr_assert(hrm_state_job_finished(w.s, j2));
    /* j1 arrives: Q = 5, K = 2 (j2 finished): A = {3, 2}; one GPU free, one kill */
    w_submit(&w, j1);
    w_decide(&w);
    cr_assert_eq(count_kind(&w, HRM_DECIDE_PREEMPT), 1, "%s", policy);
    cr_assert_eq(running_of(&w, j0), 3);
    cr_assert_eq(running_of(&w, j1), 2);
    w_fini(&w);
}

Test(gsp, only_what_the_free_gpus_cannot_cover)
{
    preempt_only_when_needed("gsp");
}

Test(fsp, only_what_the_free_gpus_cannot_cover)
{
    preempt_only_when_needed("fsp");
}

Test(fsp, fs_never_preempts)
{
    struct world w;
    w_init(&w);
    int32_t r = w_rack(&w);
    for (int i = 0; i < 4; i++)
        w_node(&w, r, 1, 10 * GIB);
    int32_t j0 = w_job(&w);
    for (int i = 0; i < 8; i++)
        w_task(&w, 2 * GIB);
    int32_t j1 = w_job(&w);
    for (int i = 0; i < 4; i++)
        w_task(&w, 2 * GIB);
    w_begin(&w, "fs", NULL, 0);
    w_submit(&w, j0);
    cr_assert_eq(w_decide(&w), 4);
    w_submit(&w, j1);
    cr_assert_eq(w_decide(&w), 0);
    /* as j0's tasks end, the freed GPUs go to j1 until it holds its share */
    for (int i = 0; i < 2; i++) {
        w_stop(&w, running_task(&w, j0), HRM_OUTCOME_DONE);
        cr_assert_eq(w_decide(&w), 1);
        cr_assert_eq(w.wl->tasks[w.ctx.decisions[0].task].job, j1);
    }
    w_stop(&w, running_task(&w, j0), HRM_OUTCOME_DONE);
    cr_assert_eq(w_decide(&w), 1);
    cr_assert_eq(running_of(&w, j1), 2, "j1 at its share of 2: the GPU goes back to j0");
    w_fini(&w);
}

/* ---- GSD ---- */

/* Rack r0: n0, n1; rack r1: n2; one GPU each.  j1's task reads 1 GiB on n0.
 * j0 keeps GPUs busy so that only a worse GPU is free. */
static void gsd_world(struct world *w, bool rack_free, int32_t *task)
{
    w_init(w);
    int32_t r0 = w_rack(w), r1 = w_rack(w);
    int32_t n0 = w_node(w, r0, 1, 10 * GIB);
    w_node(w, r0, 1, 10 * GIB);
    w_node(w, r1, 1, 10 * GIB);
    int32_t j0 = w_job(w);
    int32_t b0 = w_task(w, 2 * GIB), b1 = w_task(w, 2 * GIB);
    int32_t j1 = w_job(w);
    *task = w_task_on(w, 2 * GIB, GIB, n0);
    static const char *const params[] = {"d1=2", "d2=4"};
    w_begin(w, "gsd", params, 2);
    w_submit(w, j0);
    w_submit(w, j1);
    w_start(w, b0, n0);
    w_start(w, b1, rack_free ? 2 : 1); /* leaves n1 (in-rack) or n2 (cross-rack) free */
}

Test(gsd, accepts_in_rack_after_d1_declines)
{
    struct world w;
    int32_t t;
    gsd_world(&w, true, &t);
    cr_assert_eq(w_decide(&w), 0, "decline 1");
    cr_assert_eq(w_decide(&w), 0, "decline 2");
    cr_assert_eq(w_decide(&w), 1, "d1 = 2 declines: in-rack accepted");
    cr_assert_eq(w.s->tasks[t].node, 1);
    w_fini(&w);
}

Test(gsd, accepts_any_gpu_after_d2_declines)
{
    struct world w;
    int32_t t;
    gsd_world(&w, false, &t);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(w_decide(&w), 0, "decline %d", i + 1);
    cr_assert_eq(w_decide(&w), 1, "d2 = 4 declines: any GPU");
    cr_assert_eq(w.s->tasks[t].node, 2);
    w_fini(&w);
}

Test(gsd, takes_the_local_gpu_at_once)
{
    struct world w;
    int32_t t;
    gsd_world(&w, true, &t);
    w_stop(&w, w.wl->jobs[0].task_first, HRM_OUTCOME_DONE); /* frees n0 */
    cr_assert_eq(w_decide(&w), 1);
    cr_assert_eq(w.s->tasks[t].node, 0);
    w_fini(&w);
}

Test(gsd, bad_thresholds_are_rejected)
{
    struct hrm_error err = {{0}};
    const char *items[] = {"d1=5", "d2=2"};
    struct hrm_params prm = {items, 2};
    cr_assert_null(hrm_policy_new("gsd", &prm, 1, &err));
    cr_assert(strstr(err.text, "d1"), "%s", err.text);
    const char *items2[] = {"d1=1"};
    struct hrm_params prm2 = {items2, 1};
    cr_assert_null(hrm_policy_new("gs", &prm2, 1, &err), "gs has no delay thresholds");
    const char *items3[] = {"alpha3=2"};
    struct hrm_params prm3 = {items3, 1};
    cr_assert_null(hrm_policy_new("fsu", &prm3, 1, &err), "fsu has no unscheduled arcs");
    const char *items4[] = {"alpha1=0.5"};
    struct hrm_params prm4 = {items4, 1};
    cr_assert_null(hrm_policy_new("fs", &prm4, 1, &err));
}

/* ---- FS and FSU ---- */

/* Two GPUs in two racks.  j0's tasks read 1 GiB on n0 and on n1; j1's read
 * 2 GiB on n0.  FSU: the two cheapest placements, both j0's (2 x 6711 ms),
 * j1 gets nothing.  FS: shares 1/1, so j1 on n0 (13422 ms) and j0 on n1. */
static void fairness_world(struct world *w, const char *policy, int32_t t[3])
{
    w_init(w);
    int32_t r0 = w_rack(w), r1 = w_rack(w);
    int32_t n0 = w_node(w, r0, 1, 10 * GIB), n1 = w_node(w, r1, 1, 10 * GIB);
    int32_t j0 = w_job(w);
    t[0] = w_task_on(w, 2 * GIB, GIB, n0);
    t[1] = w_task_on(w, 2 * GIB, GIB, n1);
    int32_t j1 = w_job(w);
    t[2] = w_task_on(w, 2 * GIB, 2 * GIB, n0);
    w_begin(w, policy, NULL, 0);
    w_submit(w, j0);
    w_submit(w, j1);
}

Test(fsu, ignores_fairness_most_tasks_least_cost)
{
    struct world w;
    int32_t t[3];
    fairness_world(&w, "fsu", t);
    cr_assert_eq(w_decide(&w), 2);
    cr_assert_eq(w.s->tasks[t[0]].node, 0);
    cr_assert_eq(w.s->tasks[t[1]].node, 1);
    cr_assert_eq(w.s->tasks[t[2]].status, HRM_TASK_READY, "j1 starves under fsu");
    w_fini(&w);
}

Test(fs, fair_share_first_then_least_cost)
{
    struct world w;
    int32_t t[3];
    fairness_world(&w, "fs", t);
    cr_assert_eq(w_decide(&w), 2);
    cr_assert_eq(w.s->tasks[t[2]].node, 0, "j1 gets its share, on its local GPU");
    cr_assert_eq(w.s->tasks[t[1]].node, 1);
    cr_assert_eq(w.s->tasks[t[0]].status, HRM_TASK_READY);
    w_fini(&w);
}

Test(fsu, hand_worked_cost)
{
    struct world w;
    int32_t t[3];
    fairness_world(&w, NULL, t);
    struct flownet *net = net_new(false, true, true);
    struct p1_shares sh = {0};
    net_run(net, w.s, &sh);
    cr_assert_eq(flownet_cost(net), 2 * 6711);
    flownet_free(net);
    p1_shares_fini(&sh);
    w_fini(&w);
}

/* Maximum first: the cheap placement that would block the only GPU a big
 * task fits on is given up so that both run. */
Test(fsu, max_tasks_before_min_cost)
{
    struct world w;
    w_init(&w);
    int32_t r0 = w_rack(&w), r1 = w_rack(&w);
    int32_t small = w_node(&w, r0, 1, 4 * GIB), big = w_node(&w, r1, 1, 16 * GIB);
    w_job(&w);
    int32_t a = w_task_on(&w, 8 * GIB, GIB, small);
    int32_t b = w_task_on(&w, 2 * GIB, 4 * GIB, big); /* would rather be on big */
    w_begin(&w, "fsu", NULL, 0);
    w_submit(&w, 0);
    cr_assert_eq(w_decide(&w), 2);
    cr_assert_eq(w.s->tasks[a].node, big);
    cr_assert_eq(w.s->tasks[b].node, small);
    w_fini(&w);
}

/* A job below its share waits for a closer GPU at a price growing with its
 * wait.  Racks r0: n0, r1: n1.  j0 runs a task on n0; j1's task reads 2 GiB
 * on n0, and only n1 (cross-rack) is free.  Shares 1/1, so j1 is 1 short.
 * Unscheduled price U = alpha3 x 2 GiB / B_r = 2 x 17180 = 34360 ms; the
 * cross-rack read costs 3 x 17180 = 51540 ms; waiting costs U + 1 + wait, so
 * j1 takes n1 once it has waited more than 17179 ms. */
static void deficit_world(struct world *w, const char *const *params, size_t nparams, int32_t *task)
{
    w_init(w);
    int32_t r0 = w_rack(w), r1 = w_rack(w);
    int32_t n0 = w_node(w, r0, 1, 10 * GIB);
    w_node(w, r1, 1, 10 * GIB);
    int32_t j0 = w_job(w);
    int32_t blocker = w_task(w, 2 * GIB);
    int32_t j1 = w_job(w);
    *task = w_task_on(w, 2 * GIB, 2 * GIB, n0);
    w_begin(w, "fs", params, nparams);
    w_submit(w, j0);
    w_start(w, blocker, n0);
    w_submit(w, j1); /* j1's task ready at 0 */
}

Test(fs, below_share_waits_for_a_closer_gpu_then_takes_any)
{
    struct world w;
    int32_t t;
    deficit_world(&w, NULL, 0, &t);
    w.ctx.now_us = 1000000;
    cr_assert_eq(w_decide(&w), 0, "1 s of waiting is worth less than a cross-rack read");
    w.ctx.now_us = 17000000;
    cr_assert_eq(w_decide(&w), 0);
    w.ctx.now_us = 17500000;
    cr_assert_eq(w_decide(&w), 1, "after 17.18 s the wait costs more");
    cr_assert_eq(w.s->tasks[t].node, 1);
    w_fini(&w);
}

Test(fs, below_share_takes_its_local_gpu_at_once)
{
    struct world w;
    int32_t t;
    deficit_world(&w, NULL, 0, &t);
    w.ctx.now_us = 1000000;
    w_stop(&w, w.wl->jobs[0].task_first, HRM_OUTCOME_DONE); /* n0 frees; j0 is done */
    /* nothing runs now: the pass may not wait (no event would come), but the
     * local GPU is the cheapest anyway */
    cr_assert_eq(w_decide(&w), 1);
    cr_assert_eq(w.s->tasks[t].node, 0);
    w_fini(&w);
}

Test(fs, delay_0_places_the_deficit_whenever_gpus_allow)
{
    struct world w;
    int32_t t;
    static const char *const params[] = {"delay=0"};
    deficit_world(&w, params, 1, &t);
    w.ctx.now_us = 1000000;
    cr_assert_eq(w_decide(&w), 1);
    cr_assert_eq(w.s->tasks[t].node, 1);
    w_fini(&w);
}

/* ---- every P1 policy ---- */

static const char *const p1_policies[] = {"gs", "gsp", "gsd", "fs", "fsp", "fsu"};

Test(flowpol, registered_by_name)
{
    for (size_t i = 0; i < 6; i++) {
        const struct hrm_policy_ops *ops = hrm_policy_find(p1_policies[i]);
        cr_assert_not_null(ops, "%s", p1_policies[i]);
        cr_assert_not_null(ops->summary);
        struct hrm_policy *p = hrm_policy_new(p1_policies[i], NULL, 1, NULL);
        cr_assert_not_null(p);
        hrm_policy_free(p);
    }
}

/* 3 racks x 3 nodes x 2 GPUs of mixed memory; 12 jobs, most of two stages
 * (the second after the first), tasks reading 1-2 replicated blocks, some
 * asking more GPU memory than the small GPUs have, and a CPU-only job. */
static void busy_world(struct world *w, struct hrm_rng *rng)
{
    w_init(w);
    for (int32_t r = 0; r < 3; r++) {
        w_rack(w);
        for (int32_t i = 0; i < 3; i++)
            w_node(w, r, 2, i == 0 ? 16 * GIB : 8 * GIB);
    }
    for (int32_t j = 0; j < 12; j++) {
        w_job(w);
        int32_t nstages = j % 3 == 0 ? 1 : 2;
        for (int32_t st = 0; st < nstages; st++) {
            if (st > 0) {
                int32_t dep = w->wl->nstages - 1;
                fx_stage(w->wl, "s2", &dep, 1);
            }
            int32_t nt = 3 + (int32_t)hrm_rng_below(rng, 10);
            for (int32_t t = 0; t < nt; t++) {
                w_task(w, j % 4 == 1 ? 12 * GIB : 2 * GIB);
                for (int32_t b = 0; b <= (int32_t)hrm_rng_below(rng, 2); b++) {
                    int32_t reps[2] = {(int32_t)hrm_rng_below(rng, 9), 0};
                    reps[1] = (reps[0] + 1 + (int32_t)hrm_rng_below(rng, 8)) % 9;
                    w_block(w, (1 + (int64_t)hrm_rng_below(rng, 4)) * 512 * MIB, reps, 2);
                }
            }
        }
    }
    w_job(w);
    fx_tasks(w->wl, 5, 2000, 2 * GIB, 0, 0, 1000000);
}

/* Many passes with data, mixed GPU memory, stages, CPU tasks, failures and a
 * node going down and up: nothing illegal, and every task ends. */
Test(flowpol, every_p1_policy_survives_a_busy_run)
{
    for (size_t pi = 0; pi < 6; pi++) {
        struct hrm_rng rng;
        hrm_rng_seed(&rng, 7);
        struct world w;
        busy_world(&w, &rng);
        w_begin(&w, p1_policies[pi], NULL, 0);
        int32_t submitted = 0, ndone = 0, passes = 0;
        for (; passes < 5000 && ndone < w.wl->ntasks; passes++) {
            if (submitted < w.wl->njobs && passes % 4 == 0)
                w_submit(&w, submitted++);
            if (passes == 10) {
                hrm_state_node_down(w.s, 0, w.ctx.now_us);
                w_event(&w, HRM_EV_NODE_DOWN, -1, -1, 0);
            }
            if (passes == 25) {
                hrm_state_node_up(w.s, 0);
                w_event(&w, HRM_EV_NODE_UP, -1, -1, 0);
            }
            w_decide(&w);
            /* about one running task in six ends each pass, one in ten of them failing */
            for (int32_t t = 0; t < w.wl->ntasks; t++)
                if (w.s->tasks[t].status == HRM_TASK_RUNNING && hrm_rng_below(&rng, 6) == 0)
                    w_stop(&w, t, hrm_rng_below(&rng, 10) ? HRM_OUTCOME_DONE : HRM_OUTCOME_FAILED);
            ndone = 0;
            for (int32_t t = 0; t < w.wl->ntasks; t++)
                ndone += w.s->tasks[t].status >= HRM_TASK_DONE;
        }
        cr_assert_eq(ndone, w.wl->ntasks, "%s: every task ends", p1_policies[pi]);
        cr_assert_gt(passes, 25, "%s: long enough to see the node come back", p1_policies[pi]);
        w_fini(&w);
    }
}

/* A small P1-like testbed in the simulator: same spec, same numbers, twice. */
static const char *mini_spec =
    "{\"cluster\": {\"racks\": [\"r1\", \"r2\"], \"nodes\": ["
    " {\"name\": \"a\", \"count\": 3, \"rack\": \"r1\", \"cores\": 8, \"mem\": \"32G\","
    "  \"gpus\": 2, \"gpu_mem\": \"10G\"},"
    " {\"name\": \"b\", \"count\": 3, \"rack\": \"r2\", \"cores\": 8, \"mem\": \"32G\","
    "  \"gpus\": 2, \"gpu_mem\": \"10G\"}]},"
    " \"workload\": {\"max_parallel\": 3, \"datasets\": ["
    "  {\"name\": \"A\", \"blocks\": 12, \"size\": \"256M\", \"replicas\": 2},"
    "  {\"name\": \"B\", \"blocks\": 6, \"size\": \"512M\", \"replicas\": 2}],"
    " \"jobs\": ["
    "  {\"name\": \"J1\", \"tasks\": 12, \"task\": {\"cpu\": 1, \"mem\": \"2G\", \"gpus\": 1,"
    "   \"gpu_mem\": \"2G\", \"duration\": \"3s\", \"input\": {\"dataset\": \"A\"}}},"
    "  {\"name\": \"J2\", \"tasks\": 6, \"task\": {\"cpu\": 1, \"mem\": \"2G\", \"gpus\": 1,"
    "   \"gpu_mem\": \"6G\", \"duration\": \"5s\", \"input\": {\"dataset\": \"B\"}}},"
    "  {\"name\": \"J3\", \"tasks\": 4, \"task\": {\"cpu\": 2, \"mem\": \"2G\","
    "   \"duration\": \"2s\"}},"
    "  {\"name\": \"J4\", \"tasks\": 12, \"task\": {\"cpu\": 1, \"mem\": \"2G\", \"gpus\": 1,"
    "   \"gpu_mem\": \"2G\", \"duration\": \"1s\", \"input\": {\"dataset\": \"A\"}}},"
    "  {\"name\": \"J5\", \"tasks\": 6, \"task\": {\"cpu\": 1, \"mem\": \"2G\", \"gpus\": 1,"
    "   \"gpu_mem\": \"2G\", \"duration\": \"4s\", \"input\": {\"dataset\": \"B\"}}}]}}";

Test(flowpol, deterministic_in_the_simulator)
{
    struct hrm_error err = {{0}};
    struct hrm_spec *spec = hrm_spec_load_string(mini_spec, "mini.json", 3, &err);
    cr_assert_not_null(spec, "%s", err.text);
    for (size_t pi = 0; pi < 6; pi++) {
        struct hrm_run_record rec[2];
        for (int k = 0; k < 2; k++) {
            hrm_run_record_init(&rec[k], spec->cluster, spec->wl);
            int rc =
                hrm_sim_run(spec->cluster, spec->wl, p1_policies[pi], NULL, NULL, &rec[k], &err);
            cr_assert_eq(rc, 0, "%s: %s", p1_policies[pi], err.text);
        }
        cr_assert_eq(rec[0].tasks_done, spec->wl->ntasks, "%s", p1_policies[pi]);
        cr_assert_eq(rec[0].bytes_local, rec[1].bytes_local);
        cr_assert_eq(rec[0].bytes_rack, rec[1].bytes_rack);
        cr_assert_eq(rec[0].bytes_cross, rec[1].bytes_cross);
        for (int32_t j = 0; j < spec->wl->njobs; j++)
            cr_assert_eq(rec[0].jobs[j].end_us, rec[1].jobs[j].end_us, "%s job %d", p1_policies[pi],
                         j);
        hrm_run_record_fini(&rec[0]);
        hrm_run_record_fini(&rec[1]);
    }
    hrm_spec_free(spec);
}
