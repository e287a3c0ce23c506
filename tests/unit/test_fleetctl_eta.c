/* The estimate's walk at fleet size: where a task starts first is found without reading every
 * node's answer again for each task, and the answers are those of a walk that reads them all. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "daemon/master_eta.h"

#define SEC 1000000ll
#define GIB_ (1ll << 30)

static struct eta_task task(int64_t milli, int64_t time_us)
{
    struct eta_task t = {.time_us = time_us};
    t.req.v[HRM_DIM_CPU] = milli;
    return t;
}

static void fleet_nodes(struct eta_node *nodes, int32_t n, unsigned seed)
{
    for (int32_t i = 0; i < n; i++) {
        int64_t cpus = 1 + (int64_t)(rand_r(&seed) % 8);
        nodes[i] = (struct eta_node){.up = rand_r(&seed) % 16 != 0};
        nodes[i].cap.v[HRM_DIM_CPU] = cpus * 1000;
        nodes[i].cap.v[HRM_DIM_MEM] = 8 * GIB_;
        nodes[i].free = nodes[i].cap;
    }
}

/* 2,000 nodes and 4,000 equal tasks queued one after the other, as a fleet's big job: each
 * question reads the answers of the nodes that changed since the last, not all 2,000 (which
 * made a `hrm jobs` listing cost O(nodes) per pending task: 0.5-0.7 s of the master's CPU at
 * 5,000 agents and 100,000 tasks queued). */
Test(fleetctl_eta, equal_tasks_read_only_changed_nodes)
{
    enum { NODES = 2000, TASKS = 4000 };
    struct eta_node *nodes = calloc(NODES, sizeof(*nodes));
    fleet_nodes(nodes, NODES, 7);
    struct eta_sim s;
    eta_sim_init(&s, nodes, NODES, ETA_WORK_MAX);
    struct eta_task t = task(1000, 2 * SEC);
    int32_t where;
    for (int k = 0; k < TASKS; k++) {
        cr_assert_geq(eta_sim_start(&s, &t, &where), 0);
        eta_sim_enqueue(&s, &t);
    }
    cr_assert_leq(s.looked, NODES + 2 * TASKS, "read %lld node answers for %d questions",
                  (long long)s.looked, 2 * TASKS);
    eta_sim_fini(&s);
    free(nodes);
}

/* Mixed shapes and running rows on 300 nodes: after each enqueue, the walk's answer (wait and
 * node) equals that of a fresh walk holding the same rows, which reads every node. */
Test(fleetctl_eta, answers_match_a_fresh_walk)
{
    enum { NODES = 300, STEPS = 400 };
    struct eta_node nodes[NODES];
    fleet_nodes(nodes, NODES, 11);
    unsigned seed = 5;
    struct eta_sim s;
    eta_sim_init(&s, nodes, NODES, ETA_WORK_MAX);
    int32_t placed_node[STEPS + NODES];
    struct eta_task placed[STEPS + NODES];
    int nplaced = 0;
    for (int32_t n = 0; n < NODES; n += 3) {
        struct eta_task r = task(1000, (int64_t)(1 + rand_r(&seed) % 30) * SEC);
        eta_sim_running(&s, n, &r);
        placed[nplaced] = r, placed_node[nplaced++] = -1 - n; /* a running row */
    }
    for (int k = 0; k < STEPS; k++) {
        struct eta_task t = task((int64_t)(1 + rand_r(&seed) % 3) * 1000,
                                 (int64_t)(1 + rand_r(&seed) % 20) * SEC);
        if (rand_r(&seed) % 4 == 0 && k > 0)
            t = placed[nplaced - 1]; /* runs of equal tasks, as jobs are */
        struct eta_sim fresh;
        eta_sim_init(&fresh, nodes, NODES, ETA_WORK_MAX);
        for (int i = 0; i < nplaced; i++) {
            if (placed_node[i] < 0)
                eta_sim_running(&fresh, -1 - placed_node[i], &placed[i]);
            else
                eta_sim_queued(&fresh, placed_node[i], &placed[i]);
        }
        int32_t where, fresh_where;
        int64_t wait = eta_sim_start(&s, &t, &where);
        cr_assert_eq(wait, eta_sim_start(&fresh, &t, &fresh_where), "step %d", k);
        cr_assert_eq(where, fresh_where, "step %d", k);
        eta_sim_fini(&fresh);
        if (where < 0)
            continue;
        eta_sim_enqueue(&s, &t);
        placed[nplaced] = t, placed_node[nplaced++] = where;
    }
    eta_sim_fini(&s);
}
