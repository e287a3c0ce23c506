/* The hrm policy's unit choice (hrmp_choose) remembers per kind of task what each node offers
 * and weighs again only the nodes that changed: the same unit as the scan of every unit
 * (hrmp_choose_scan, the rule) over random clusters, workloads and histories, for every variant
 * of the policy; and a queue of tasks alike costs a few units per choice, not every unit. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/central.h"
#include "hrm/rng.h"
#include "policy/hrm_private.h"
#include "test_jobsflood_env.h"

/* Nodes of 4 to 16 cores with 0, 1, 2 or 4 GPUs of 16 GiB. */
static struct hrm_cluster *random_cluster(struct hrm_rng *rng, int nnodes)
{
    struct hrm_error err;
    struct hrm_cluster *c = hrm_cluster_new(NULL);
    cr_assert_geq(hrm_cluster_add_rack(c, "r0", &err), 0, "%s", err.text);
    static const int gpus[] = {0, 1, 2, 4};
    for (int i = 0; i < nnodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "n%d", i);
        int g = gpus[hrm_rng_below(rng, 4)];
        struct hrm_node_desc d = {.name = name, .rack = 0,
                                  .cores = 4 * (1 + (int32_t)hrm_rng_below(rng, 4)),
                                  .mem = 64 * GIB, .gpus = g, .gpu_mem = g ? 16 * GIB : 0};
        cr_assert_geq(hrm_cluster_add_node(c, &d, &err), 0, "%s", err.text);
    }
    return c;
}

/* Jobs of tasks alike (so the memo is used), of a few kinds: CPU tasks of 1 to 3 cores, GPU
 * tasks of one GPU with part of its memory (they stack) or all of it, two GPUs; some jobs
 * stream. */
static struct hrm_workload *random_workload(struct hrm_rng *rng, int njobs)
{
    struct hrm_workload *wl = hrm_workload_new();
    struct hrm_error err;
    for (int j = 0; j < njobs; j++) {
        char name[32], user[8];
        snprintf(name, sizeof(name), "j%d", j);
        snprintf(user, sizeof(user), "u%d", (int)hrm_rng_below(rng, 3));
        struct hrm_job_desc d = {.name = name, .user = hrm_workload_user(wl, user),
                                 .kind = hrm_rng_below(rng, 5) == 0 ? HRM_JOB_STREAM
                                                                    : HRM_JOB_BATCH};
        cr_assert_geq(hrm_workload_add_job(wl, &d, &err), 0, "%s", err.text);
        fx_stage(wl, "s", NULL, 0);
        int n = 1 + (int)hrm_rng_below(rng, 40);
        int64_t dur = 1000 * (1 + (int64_t)hrm_rng_below(rng, 50));
        switch (hrm_rng_below(rng, 4)) {
        case 0:
        case 1:
            fx_tasks(wl, n, 1000 * (1 + (int64_t)hrm_rng_below(rng, 3)), GIB, 0, 0, dur);
            break;
        case 2:
            fx_tasks(wl, n, 1000, GIB, 1, (hrm_rng_below(rng, 2) ? 4 : 16) * GIB, dur);
            break;
        default:
            fx_tasks(wl, n, 2000, GIB, 2, 16 * GIB, dur);
            break;
        }
    }
    return wl;
}

/* Every ready task's choice, remembered and scanned, now. */
static void check_choices(struct hrmp *p, const struct hrm_state *s, int64_t now,
                          const char *policy, uint64_t seed, int step)
{
    for (int32_t t = 0; t < s->wl->ntasks; t++) {
        if (s->tasks[t].status != HRM_TASK_READY)
            continue;
        int32_t memo = hrmp_choose(p, s, t, now), scan = hrmp_choose_scan(p, s, t, now);
        cr_assert_eq(memo, scan, "%s, seed %llu, step %d, task %d: unit %d remembered, %d scanned",
                     policy, (unsigned long long)seed, step, t, memo, scan);
    }
}

static void history(const char *policy, uint64_t seed)
{
    struct hrm_rng rng;
    hrm_rng_seed(&rng, seed);
    int nnodes = 1 + (int)hrm_rng_below(&rng, 24), njobs = 2 + (int)hrm_rng_below(&rng, 10);
    struct hrm_cluster *c = random_cluster(&rng, nnodes);
    struct hrm_workload *wl = random_workload(&rng, njobs);
    struct hrm_policy *pol;
    struct hrm_central_config cfg = {.max_attempts = 3};
    struct hrm_central *central = jf_central(policy, seed, c, wl, &cfg, &pol);
    struct jf_world w;
    jf_world_init(&w, 1000);
    struct hrm_env *env = &w.env;
    const struct hrm_state *s = hrm_central_state(central);
    int submitted = 0;
    bool *down = hrm_calloc((size_t)nnodes, sizeof(*down));
    for (int step = 0; step < 300; step++) {
        w.now += 1000;
        uint64_t what = hrm_rng_below(&rng, 10);
        if (submitted < njobs && (what < 2 || submitted == 0)) {
            struct hrm_msg m = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT,
                                .job = submitted++};
            cr_assert_eq(hrm_central_on_msg(central, env, &m), 0);
        } else if (what < 8 && w.nruns > 0) { /* a run ends, now and then failed */
            size_t k = hrm_rng_below(&rng, w.nruns);
            struct jf_run r = w.runs[k];
            w.runs[k] = w.runs[--w.nruns];
            struct hrm_msg m = {.type = HRM_MSG_TASK_END, .from = hrm_addr_node(r.node),
                                .status = hrm_rng_below(&rng, 8) ? HRM_OUTCOME_DONE
                                                                 : HRM_OUTCOME_FAILED,
                                .task = r.task, .node = r.node, .attempt = r.attempt};
            cr_assert_eq(hrm_central_on_msg(central, env, &m), 0);
        } else { /* a node goes down, or comes back */
            int32_t n = (int32_t)hrm_rng_below(&rng, (uint64_t)nnodes);
            struct hrm_msg m = {.type = down[n] ? HRM_MSG_NODE_UP : HRM_MSG_NODE_DOWN,
                                .from = HRM_ADDR_CENTRAL, .node = n};
            cr_assert_eq(hrm_central_on_msg(central, env, &m), 0);
            down[n] = !down[n];
            if (down[n]) /* its runs are gone: their ends would be stale */
                for (size_t k = 0; k < w.nruns;)
                    w.runs[k].node == n ? (void)(w.runs[k] = w.runs[--w.nruns]) : (void)k++;
        }
        if (w.armed && hrm_rng_below(&rng, 3)) {
            w.armed = false;
            cr_assert_eq(hrm_central_on_timer(central, env, 1), 0);
        }
        struct hrmp *p = pol->priv;
        if (p->ru)
            check_choices(p, s, w.now, policy, seed, step);
    }
    hrm_free(down);
    hrm_free(w.runs);
    hrm_central_free(central);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(jobsflood_choose, remembered_choice_is_the_scanned_one_over_random_histories)
{
    static const char *const policies[] = {"hrm", "gpu-exclusive", "hrm-static", "hrm-unaware"};
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
        for (uint64_t seed = 1; seed <= 12; seed++)
            history(policies[i], seed * 7919 + i);
}

Test(jobsflood_choose, tasks_alike_cost_a_few_units_each)
{
    enum { NNODES = 200, NTASKS = 20000 };
    struct hrm_cluster *c = fx_cluster(2, NNODES / 2, 4, 32 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "big", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, NTASKS, 1000, GIB, 0, 0, 1000);
    struct hrm_policy *pol;
    struct hrm_central *central = jf_central("hrm", 1, c, wl, NULL, &pol);
    struct jf_world w;
    jf_world_init(&w, 1000);
    struct hrm_env *env = &w.env;
    struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = 0};
    cr_assert_eq(hrm_central_on_msg(central, env, &sub), 0);
    cr_assert(w.armed);
    cr_assert_eq(hrm_central_on_timer(central, env, 1), 0);
    cr_assert_eq(w.nruns, NNODES * 4, "every core takes a task");
    /* One pass chose a unit for each of the 20,000 tasks: the scan weighs all 200 units per
     * task (4,000,000); remembered, the nodes that changed since the last choice. */
    const struct hrmp *p = pol->priv;
    cr_assert_leq(p->units_weighed, (int64_t)NTASKS * 4, "%lld units weighed for %d choices",
                  (long long)p->units_weighed, NTASKS);
    hrm_free(w.runs);
    hrm_central_free(central);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
