/* A listing's estimate walk taken over several turns, a few rows at a time, gives every job the
 * estimate of a walk taken at once over the same cluster (so `hrm jobs` need not wait for a
 * whole walk to get exact estimates). */
#include <criterion/criterion.h>
#include <stdio.h>

#include "daemon/master_eta.h"
#include "daemon/master_private.h"
#include "hrm/alloc.h"
#include "hrm/rng.h"

#define SEC 1000000ll
#define NODES 40
#define JOBS 9

/* A job of ntasks in two groups (1 CPU for time_a, 2 CPUs for time_b; < 0: no time given),
 * every task pending. */
static struct rjob *job_make(int64_t id, int32_t ntasks, int64_t time_a, int64_t time_b)
{
    struct rjob *j = hrm_calloc(1, sizeof(*j));
    j->id = id;
    j->ntasks = ntasks;
    j->ngroups = 2;
    j->state = HRM_JOB_PENDING;
    snprintf(j->user, sizeof(j->user), "u%lld", (long long)id % 3);
    snprintf(j->queue, sizeof(j->queue), "default");
    j->spec = json_pack("{s:[{s:[s], s:I}, {s:[s]}]}", "tasks", "cmd", "a", "time_us",
                        (json_int_t)time_a, "cmd", "b");
    if (time_b >= 0)
        json_object_set_new(json_array_get(json_object_get(j->spec, "tasks"), 1), "time_us",
                            json_integer(time_b));
    if (time_a < 0)
        json_object_del(json_array_get(json_object_get(j->spec, "tasks"), 0), "time_us");
    j->greq = hrm_calloc(2, sizeof(*j->greq));
    j->gshare = hrm_calloc(2, sizeof(*j->gshare));
    j->greq[0].v[HRM_DIM_CPU] = 1000;
    j->greq[1].v[HRM_DIM_CPU] = 2000;
    j->first_start_us = -1;
    j->count.state[HRM_RTASK_PENDING] = ntasks;
    j->tasks = hrm_calloc((size_t)ntasks, sizeof(*j->tasks));
    for (int32_t i = 0; i < ntasks; i++) /* pending: no node, never started */
        j->tasks[i] = (struct rtask){.group = i % 2, .node = -1, .start_us = -1, .end_us = -1};
    return j;
}

/* NODES nodes of 1 to 8 CPUs (one down), JOBS jobs of mixed sizes and run times, and some tasks
 * of the first jobs running on the nodes with part of their run behind them. */
static void master_make(struct master *m, int64_t now)
{
    memset(m, 0, sizeof(*m));
    struct hrm_rng r;
    hrm_rng_seed(&r, 17);
    m->eta = eta_state_new();
    m->nodes = hrm_calloc(NODES, sizeof(*m->nodes));
    m->nnodes = NODES;
    for (int32_t n = 0; n < NODES; n++) {
        m->nodes[n].up = n != 5;
        m->nodes[n].cores = 1 + (int32_t)hrm_rng_below(&r, 8);
        m->nodes[n].mem = 8ll << 30;
    }
    m->jobs = hrm_calloc(JOBS, sizeof(*m->jobs));
    m->njobs = JOBS;
    for (int32_t k = 0; k < JOBS; k++)
        m->jobs[k] = job_make(k + 1, 20 + 37 * k, (1 + k % 4) * SEC, k % 3 == 0 ? -1 : 3 * SEC);
    for (int32_t k = 0; k < 3; k++) {
        struct rjob *j = m->jobs[k];
        for (int32_t i = 0; i < 10; i++) {
            int32_t n = (int32_t)hrm_rng_below(&r, NODES);
            if (!m->nodes[n].up || m->nodes[n].cpu_used + j->greq[i % 2].v[HRM_DIM_CPU] >
                                       (int64_t)m->nodes[n].cores * 1000)
                continue;
            j->tasks[i] = (struct rtask){.state = HRM_RTASK_RUNNING, .node = n, .group = i % 2,
                                         .start_us = now - (int64_t)hrm_rng_below(&r, 2 * SEC),
                                         .end_us = -1};
            m->nodes[n].cpu_used += j->greq[i % 2].v[HRM_DIM_CPU];
            j->count.state[HRM_RTASK_PENDING]--;
            j->count.state[HRM_RTASK_RUNNING]++;
            j->state = HRM_JOB_RUNNING;
        }
    }
}

static void master_drop(struct master *m)
{
    for (size_t k = 0; k < m->njobs; k++) {
        json_decref(m->jobs[k]->spec);
        hrm_free(m->jobs[k]->greq);
        hrm_free(m->jobs[k]->gshare);
        hrm_free(m->jobs[k]->tasks);
        hrm_free(m->jobs[k]);
    }
    hrm_free(m->jobs);
    hrm_free(m->nodes);
    eta_state_free(m->eta);
}

Test(jobsp_walk, steps_of_a_few_rows_give_the_whole_walks_estimates)
{
    struct master m;
    int64_t now = 1700000000 * SEC;
    master_make(&m, now);
    int64_t whole[JOBS], spread[JOBS];
    cr_assert_eq(eta_walk_run(&m, now, -1, whole), 1);
    int known = 0;
    for (int k = 0; k < JOBS; k++)
        known += whole[k] >= 0;
    cr_assert_geq(known, JOBS - 1, "the walk estimated only %d of %d jobs", known, JOBS);
    int64_t rows[] = {1, 7, 100, 5000};
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        int32_t steps = eta_walk_run(&m, now, rows[r], spread);
        if (rows[r] < 100)
            cr_assert_gt(steps, 10, "%d steps of %lld rows", steps, (long long)rows[r]);
        for (int k = 0; k < JOBS; k++)
            cr_assert_eq(spread[k], whole[k], "job %d, steps of %lld rows: %lld, at once %lld",
                         k + 1, (long long)rows[r], (long long)spread[k], (long long)whole[k]);
    }
    master_drop(&m);
}
