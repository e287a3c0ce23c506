/* The master's task counters (per job by state, per node running/queued/requests) equal a full recount after a long mixed run of the transitions the master makes: placements, queueing, starts, ends, failures, retries, losses, moves, cancels. */
#include <criterion/criterion.h>

#include "daemon/master_private.h"
#include "hrm/alloc.h"
#include "hrm/rng.h"

#define NODES 5
#define JOBS 7

static struct rjob *job_make(int64_t id, int32_t ntasks)
{
    struct rjob *j = hrm_calloc(1, sizeof(*j));
    j->id = id;
    j->ntasks = ntasks;
    j->ngroups = 2;
    j->greq = hrm_calloc(2, sizeof(*j->greq));
    j->greq[0].v[HRM_DIM_CPU] = 500;
    j->greq[0].v[HRM_DIM_MEM] = 64 << 20;
    j->greq[1].v[HRM_DIM_CPU] = 2000;
    j->tasks = hrm_calloc((size_t)ntasks, sizeof(*j->tasks));
    for (int32_t i = 0; i < ntasks; i++)
        j->tasks[i] = (struct rtask){.node = -1, .start_us = -1, .end_us = -1, .group = i % 2};
    j->count.state[HRM_RTASK_PENDING] = ntasks;
    j->first_start_us = -1;
    return j;
}

static void master_make(struct master *m)
{
    memset(m, 0, sizeof(*m));
    m->nodes = hrm_calloc(NODES, sizeof(*m->nodes));
    m->nnodes = NODES;
    m->jobs = hrm_calloc(JOBS, sizeof(*m->jobs));
    m->njobs = JOBS;
    for (int32_t k = 0; k < JOBS; k++)
        m->jobs[k] = job_make(k + 1, 40 + 13 * k);
}

static void master_drop(struct master *m)
{
    for (size_t k = 0; k < m->njobs; k++) {
        hrm_free(m->jobs[k]->greq);
        hrm_free(m->jobs[k]->tasks);
        hrm_free(m->jobs[k]);
    }
    hrm_free(m->jobs);
    for (int32_t n = 0; n < m->nnodes; n++)
        hrm_free(m->nodes[n].runs); /* each node's list of its runs (task_count) */
    hrm_free(m->nodes);
}

/* One random step of a task's life, as the master's handlers take it. */
static void step(struct master *m, struct hrm_rng *r, int64_t now)
{
    struct rjob *j = m->jobs[hrm_rng_below(r, JOBS)];
    int32_t i = (int32_t)hrm_rng_below(r, (uint64_t)j->ntasks);
    struct rtask *t = &j->tasks[i];
    int32_t node = (int32_t)hrm_rng_below(r, NODES);
    switch (t->state) {
    case HRM_RTASK_PENDING:
        if (hrm_rng_below(r, 10) == 0) { /* cancelled, or skipped after a failure */
            task_set_state(m, j, i, hrm_rng_below(r, 2) ? HRM_RTASK_CANCELLED : HRM_RTASK_SKIPPED);
            break;
        }
        /* placed: started now (central) or queued on the node (distributed) */
        task_set_state(m, j, i, HRM_RTASK_RUNNING);
        task_set_node(m, j, i, node);
        task_set_start(m, j, i, hrm_rng_below(r, 2) ? now : -1);
        break;
    case HRM_RTASK_RUNNING:
        switch (hrm_rng_below(r, 7)) {
        case 0: task_set_start(m, j, i, now); break;                   /* task_started */
        case 1: task_set_state(m, j, i, HRM_RTASK_DONE); break;       /* ended well */
        case 2: task_set_state(m, j, i, HRM_RTASK_FAILED); break;     /* failed for good */
        case 3: task_set_state(m, j, i, HRM_RTASK_PENDING); break;    /* retried, lost, preempted */
        case 4: task_set_node(m, j, i, node); break;                  /* moved by the negotiator */
        case 5: task_set_state(m, j, i, HRM_RTASK_CANCELLED); break;  /* job cancelled */
        default: /* a queued one skipped when its job failed */
            if (t->start_us < 0)
                task_set_state(m, j, i, HRM_RTASK_SKIPPED);
        }
        break;
    default:
        break; /* final */
    }
}

Test(query_counts, equal_a_recount_after_a_mixed_run)
{
    struct master m;
    master_make(&m);
    struct hrm_rng r;
    hrm_rng_seed(&r, 12);
    char why[256];
    int32_t finals = 0, queued_seen = 0;
    for (int64_t n = 1; n <= 20000; n++) {
        step(&m, &r, n);
        if (n % 500 == 0)
            cr_assert(jobs_counts_check(&m, NULL, why, sizeof(why)), "after %lld steps: %s", (long long)n,
                      why);
        for (int32_t k = 0; k < NODES && n % 500 == 0; k++)
            queued_seen += m.nodes[k].nqueued;
    }
    /* The run reached every kind of state (else the test checks less than it says). */
    for (size_t k = 0; k < m.njobs; k++) {
        const struct rcounts *c = &m.jobs[k]->count;
        finals += c->state[HRM_RTASK_DONE] > 0 && c->state[HRM_RTASK_FAILED] > 0 &&
                  c->state[HRM_RTASK_CANCELLED] > 0 && c->state[HRM_RTASK_SKIPPED] > 0;
    }
    cr_assert_eq(finals, JOBS);
    cr_assert_gt(queued_seen, 0);
    /* first_start_us: the earliest start of any run. */
    for (size_t k = 0; k < m.njobs; k++)
        cr_assert_geq(m.jobs[k]->first_start_us, 1);
    master_drop(&m);
}

Test(query_counts, a_change_behind_their_back_is_caught)
{
    struct master m;
    master_make(&m);
    char why[256];
    task_set_state(&m, m.jobs[2], 3, HRM_RTASK_RUNNING);
    task_set_node(&m, m.jobs[2], 3, 1);
    task_set_start(&m, m.jobs[2], 3, 10);
    cr_assert(jobs_counts_check(&m, NULL, why, sizeof(why)), "%s", why);
    cr_assert_eq(m.nodes[1].nstarted, 1);
    cr_assert_eq(m.nodes[1].cpu_used, 2000); /* task 3 is of group 1 */
    m.jobs[2]->tasks[3].state = HRM_RTASK_DONE; /* not through task_set_state */
    cr_assert_not(jobs_counts_check(&m, NULL, why, sizeof(why)));
    cr_assert(strstr(why, "job 3") != NULL, "%s", why);
    master_drop(&m);
}
