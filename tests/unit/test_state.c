/* Cluster state: readiness through the stage DAG, fit and GPU choice, retries, node loss. */
#include <criterion/criterion.h>

#include "fixture.h"
#include "hrm/state.h"

struct world {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_state *s;
};

static void world_free(struct world *w)
{
    hrm_state_free(w->s);
    hrm_workload_free(w->wl);
    hrm_cluster_free(w->c);
}

Test(state, dag_stage_becomes_ready_when_its_dependencies_are_done)
{
    struct world w = {fx_cluster(1, 1, 4, 8 * GIB, 0, 0, NULL), hrm_workload_new(), NULL};
    fx_job(w.wl, "j", "u", 0);
    int a = fx_stage(w.wl, "a", NULL, 0);
    int ta = fx_tasks(w.wl, 2, 1000, GIB, 0, 0, 1000);
    int32_t deps[] = {a};
    fx_stage(w.wl, "b", deps, 1);
    int tb = fx_tasks(w.wl, 1, 1000, GIB, 0, 0, 1000);
    w.s = hrm_state_new(w.c, w.wl);

    cr_assert_eq(hrm_state_submit_job(w.s, 0, 5), 2);
    cr_assert_eq(w.s->tasks[ta].status, HRM_TASK_READY);
    cr_assert_eq(w.s->tasks[tb].status, HRM_TASK_BLOCKED);
    cr_assert_eq(w.s->active_head, 0);

    cr_assert_eq(hrm_state_start(w.s, ta, 0, 0, 10), 0);
    cr_assert_eq(hrm_state_start(w.s, ta + 1, 0, 0, 10), 0);
    cr_assert_eq(w.s->active_head, -1, "no ready task left, job leaves the active list");
    cr_assert_eq(w.s->nodes[0].free.v[HRM_DIM_CPU], 2000);
    cr_assert_eq(hrm_state_stop(w.s, ta, HRM_OUTCOME_DONE, 20), 0);
    cr_assert_eq(w.s->tasks[tb].status, HRM_TASK_BLOCKED, "one of two tasks of a is still running");
    cr_assert_eq(hrm_state_stop(w.s, ta + 1, HRM_OUTCOME_DONE, 30), 1);
    cr_assert_eq(w.s->tasks[tb].status, HRM_TASK_READY);
    cr_assert_eq(w.s->tasks[tb].ready_us, 30);
    cr_assert_not(hrm_state_job_finished(w.s, 0));
    cr_assert_eq(hrm_state_start(w.s, tb, 0, 0, 31), 0);
    cr_assert_eq(hrm_state_stop(w.s, tb, HRM_OUTCOME_DONE, 40), 0);
    cr_assert(hrm_state_job_finished(w.s, 0));
    cr_assert_eq(w.s->jobs[0].end_us, 40);
    cr_assert_eq(w.s->njobs_running, 0);
    cr_assert_eq(w.s->nodes[0].free.v[HRM_DIM_CPU], 4000, "everything released");
    world_free(&w);
}

Test(state, gpu_choice_respects_per_gpu_memory_and_busy_gpus)
{
    struct world w = {fx_cluster(1, 1, 8, 32 * GIB, 2, 10 * GIB, NULL), hrm_workload_new(), NULL};
    fx_job(w.wl, "j", "u", 0);
    fx_stage(w.wl, "s", NULL, 0);
    int t = fx_tasks(w.wl, 3, 1000, GIB, 1, 4 * GIB, 1000);
    fx_job(w.wl, "big", "u", 0);
    fx_stage(w.wl, "s", NULL, 0);
    int big = fx_tasks(w.wl, 1, 1000, GIB, 1, 12 * GIB, 1000);
    w.s = hrm_state_new(w.c, w.wl);
    hrm_state_submit_job(w.s, 0, 0);
    hrm_state_submit_job(w.s, 1, 0);

    cr_assert_not(hrm_state_fits(w.s, big, 0), "12G does not fit a 10G GPU");
    cr_assert_eq(hrm_state_start(w.s, big, 0, HRM_GPUS_ANY, 0), -HRM_ENOFIT);
    cr_assert_eq(w.s->tasks[big].status, HRM_TASK_READY, "a failed start changes nothing");

    cr_assert_eq(hrm_state_start(w.s, t, 0, HRM_GPUS_ANY, 0), 0);
    cr_assert_eq(w.s->tasks[t].gpu_mask, 1u);
    cr_assert_eq(hrm_state_start(w.s, t + 1, 0, 1u, 0), -HRM_ENOFIT, "GPU 0 is busy");
    cr_assert_eq(hrm_state_start(w.s, t + 1, 0, 3u, 0), -HRM_ENOFIT, "two GPUs for a one-GPU task");
    cr_assert_eq(hrm_state_start(w.s, t + 1, 0, 2u, 0), 0);
    cr_assert_not(hrm_state_fits(w.s, t + 2, 0), "both GPUs busy");
    cr_assert_eq(w.s->nodes[0].free.v[HRM_DIM_GPU], 0);
    hrm_state_stop(w.s, t, HRM_OUTCOME_DONE, 5);
    uint32_t mask;
    cr_assert_eq(hrm_state_pick_gpus(w.s, t + 2, 0, &mask), 0);
    cr_assert_eq(mask, 1u, "the freed GPU");
    world_free(&w);
}

Test(state, failures_are_retried_then_fail_the_job)
{
    struct world w = {fx_cluster(1, 1, 4, 8 * GIB, 0, 0, NULL), hrm_workload_new(), NULL};
    fx_job(w.wl, "j", "u", 0);
    fx_stage(w.wl, "s", NULL, 0);
    int t = fx_tasks(w.wl, 2, 1000, GIB, 0, 0, 1000);
    w.s = hrm_state_new(w.c, w.wl);
    w.s->max_attempts = 2;
    hrm_state_submit_job(w.s, 0, 0);
    cr_assert_eq(hrm_state_start(w.s, t, 0, 0, 0), 0);
    cr_assert_eq(hrm_state_start(w.s, t + 1, 0, 0, 0), 0);
    cr_assert_eq(hrm_state_stop(w.s, t, HRM_OUTCOME_FAILED, 1), 1, "first failure is retried");
    cr_assert_eq(w.s->tasks[t].status, HRM_TASK_READY);
    cr_assert_eq(w.s->jobs[0].ready_head, t);
    cr_assert_eq(hrm_state_start(w.s, t, 0, 0, 2), 0);
    cr_assert_eq(w.s->tasks[t].attempt, 2);
    hrm_state_stop(w.s, t, HRM_OUTCOME_FAILED, 3);
    cr_assert_eq(w.s->tasks[t].status, HRM_TASK_FAILED, "second failure is final");
    cr_assert(w.s->jobs[0].failed);
    cr_assert_not(hrm_state_job_finished(w.s, 0), "its other task still runs");
    hrm_state_stop(w.s, t + 1, HRM_OUTCOME_DONE, 4);
    cr_assert(hrm_state_job_finished(w.s, 0));
    cr_assert_eq(hrm_state_stop(w.s, t + 1, HRM_OUTCOME_DONE, 5), -HRM_ESTATE, "not running");
    world_free(&w);
}

Test(state, node_down_requeues_its_tasks_and_removes_its_capacity)
{
    struct world w = {fx_cluster(1, 2, 2, 8 * GIB, 0, 0, NULL), hrm_workload_new(), NULL};
    fx_job(w.wl, "j", "u", 0);
    fx_stage(w.wl, "s", NULL, 0);
    int t = fx_tasks(w.wl, 3, 1000, GIB, 0, 0, 1000);
    w.s = hrm_state_new(w.c, w.wl);
    hrm_state_submit_job(w.s, 0, 0);
    hrm_state_start(w.s, t, 0, 0, 0);
    hrm_state_start(w.s, t + 1, 0, 0, 0);
    hrm_state_start(w.s, t + 2, 1, 0, 0);
    cr_assert_eq(w.s->free_total.v[HRM_DIM_CPU], 1000);
    cr_assert_eq(hrm_state_node_down(w.s, 0, 7), 2);
    cr_assert_eq(w.s->tasks[t].status, HRM_TASK_READY);
    cr_assert_eq(w.s->tasks[t + 1].status, HRM_TASK_READY);
    cr_assert_eq(w.s->up_total.v[HRM_DIM_CPU], 2000);
    cr_assert_eq(w.s->free_total.v[HRM_DIM_CPU], 1000);
    cr_assert_not(hrm_state_fits(w.s, t, 0), "a down node takes nothing");
    cr_assert_eq(hrm_state_start(w.s, t, 0, 0, 8), -HRM_ESTATE);
    hrm_state_node_up(w.s, 0);
    cr_assert_eq(w.s->free_total.v[HRM_DIM_CPU], 3000);
    cr_assert_eq(hrm_state_start(w.s, t, 0, 0, 9), 0);
    world_free(&w);
}

Test(state, active_jobs_stay_in_arrival_order)
{
    struct world w = {fx_cluster(1, 1, 8, 8 * GIB, 0, 0, NULL), hrm_workload_new(), NULL};
    int32_t first_of[3];
    for (int j = 0; j < 3; j++) {
        char name[16];
        snprintf(name, sizeof(name), "j%d", j);
        fx_job(w.wl, name, "u", 0);
        int a = fx_stage(w.wl, "a", NULL, 0);
        first_of[j] = fx_tasks(w.wl, 1, 1000, GIB, 0, 0, 1000);
        int32_t deps[] = {a};
        fx_stage(w.wl, "b", deps, 1);
        fx_tasks(w.wl, 1, 1000, GIB, 0, 0, 1000);
    }
    w.s = hrm_state_new(w.c, w.wl);
    for (int j = 0; j < 3; j++)
        hrm_state_submit_job(w.s, j, 0);
    /* Job 0 runs its first stage and leaves the list; jobs 1 and 2 stay. */
    hrm_state_start(w.s, first_of[0], 0, 0, 0);
    cr_assert_eq(w.s->active_head, 1);
    /* When job 0's second stage becomes ready it goes back before jobs 1 and 2. */
    hrm_state_stop(w.s, first_of[0], HRM_OUTCOME_DONE, 1);
    cr_assert_eq(w.s->active_head, 0);
    cr_assert_eq(w.s->jobs[0].next_active, 1);
    cr_assert_eq(w.s->jobs[1].next_active, 2);
    cr_assert_eq(w.s->active_tail, 2);
    world_free(&w);
}

Test(state, user_and_queue_accounting_follow_allocations)
{
    struct world w = {fx_cluster(1, 1, 4, 8 * GIB, 0, 0, NULL), hrm_workload_new(), NULL};
    fx_job(w.wl, "j", "alice", 0);
    fx_stage(w.wl, "s", NULL, 0);
    int t = fx_tasks(w.wl, 2, 1000, 2 * GIB, 0, 0, 1000);
    w.s = hrm_state_new(w.c, w.wl);
    hrm_state_submit_job(w.s, 0, 0);
    hrm_state_start(w.s, t, 0, 0, 0);
    hrm_state_start(w.s, t + 1, 0, 0, 0);
    cr_assert_eq(w.s->user_alloc[0].v[HRM_DIM_MEM], 4 * GIB);
    cr_assert_eq(w.s->queue_running[0], 2);
    /* dominant share: cpu 2/4 = 0.5, mem 4/8 = 0.5 */
    cr_assert_float_eq(hrm_state_user_share(w.s, 0), 0.5, 1e-12);
    hrm_state_stop(w.s, t, HRM_OUTCOME_PREEMPTED, 1);
    cr_assert_float_eq(hrm_state_job_share(w.s, 0), 0.25, 1e-12);
    cr_assert_eq(w.s->tasks[t].status, HRM_TASK_READY, "preempted tasks are requeued");
    world_free(&w);
}
