/* Unit tests of the policy layer: registry, parameters, context and baseline policies. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/policy.h"

#define GB (1024LL * 1024 * 1024)

/* ---- fixtures ---- */

struct fx {
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_state *s;
    struct hrm_policy *p;
    struct hrm_sched_ctx ctx;
};

static void fx_init(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    f->c = hrm_cluster_new(NULL);
    f->wl = hrm_workload_new();
    cr_assert_eq(hrm_cluster_add_rack(f->c, "r0", NULL), 0);
}

static int32_t fx_node(struct fx *f, int32_t cores, int64_t mem, int32_t gpus, int64_t gpu_mem)
{
    char name[32];
    snprintf(name, sizeof(name), "n%d", f->c->nnodes);
    struct hrm_node_desc d = {
        .name = name, .rack = 0, .cores = cores, .mem = mem, .gpus = gpus, .gpu_mem = gpu_mem};
    struct hrm_error err = {{0}};
    int id = hrm_cluster_add_node(f->c, &d, &err);
    cr_assert_geq(id, 0, "%s", err.text);
    return id;
}

static void fx_nodes(struct fx *f, int n, int32_t cores, int64_t mem)
{
    for (int i = 0; i < n; i++)
        fx_node(f, cores, mem, 0, 0);
}

static int32_t fx_user(struct fx *f, const char *name)
{
    return hrm_workload_user(f->wl, name);
}

static int32_t fx_queue(struct fx *f, const char *name, double guarantee, double max)
{
    struct hrm_error err = {{0}};
    int q = hrm_workload_set_queue(f->wl, name, guarantee, max, &err);
    cr_assert_geq(q, 0, "%s", err.text);
    return q;
}

/* A one-stage job of ntasks identical tasks; returns the job id. */
static int32_t fx_job_gpu(struct fx *f, int32_t user, int32_t queue, int ntasks, int64_t cpu_milli,
                          int64_t mem, int64_t gpus)
{
    char name[32];
    snprintf(name, sizeof(name), "j%d", f->wl->njobs);
    struct hrm_job_desc jd = {.name = name, .kind = HRM_JOB_BATCH, .user = user, .queue = queue};
    struct hrm_error err = {{0}};
    int j = hrm_workload_add_job(f->wl, &jd, &err);
    cr_assert_geq(j, 0, "%s", err.text);
    cr_assert_geq(hrm_workload_add_stage(f->wl, "s0", NULL, 0, &err), 0, "%s", err.text);
    for (int i = 0; i < ntasks; i++) {
        struct hrm_task_desc td = {.duration_us = 1000000};
        td.req.v[HRM_DIM_CPU] = cpu_milli;
        td.req.v[HRM_DIM_MEM] = mem;
        td.req.v[HRM_DIM_GPU] = gpus;
        cr_assert_geq(hrm_workload_add_task(f->wl, &td, &err), 0, "%s", err.text);
    }
    return j;
}

static int32_t fx_job(struct fx *f, int32_t user, int32_t queue, int ntasks, int64_t cpu_milli,
                      int64_t mem)
{
    return fx_job_gpu(f, user, queue, ntasks, cpu_milli, mem, 0);
}

static void fx_event(struct fx *f, enum hrm_event_type type, int32_t job, int32_t task,
                     int32_t node)
{
    struct hrm_event ev = {
        .type = type, .now_us = f->ctx.now_us, .job = job, .task = task, .node = node};
    if (f->p->ops->on_event)
        f->p->ops->on_event(f->p, f->s, &ev);
}

/* Builds state and policy once the cluster and workload are complete. */
static void fx_begin(struct fx *f, const char *policy, uint64_t seed)
{
    struct hrm_error err = {{0}};
    f->s = hrm_state_new(f->c, f->wl);
    f->p = hrm_policy_new(policy, NULL, seed, &err);
    cr_assert_not_null(f->p, "%s", err.text);
    f->ctx.state = f->s;
}

static void fx_submit(struct fx *f, int32_t job)
{
    cr_assert_geq(hrm_state_submit_job(f->s, job, f->ctx.now_us), 0);
    fx_event(f, HRM_EV_JOB_SUBMIT, job, -1, -1);
}

static void fx_submit_all(struct fx *f)
{
    for (int32_t j = 0; j < f->wl->njobs; j++)
        fx_submit(f, j);
}

/* Every node's free vector plus the requests of its running tasks is its
 * capacity, and nothing is negative: no policy may over-commit. */
static void check_invariants(const struct hrm_state *s)
{
    for (int32_t n = 0; n < s->cluster->nnodes; n++) {
        struct hrm_res sum = s->nodes[n].free;
        for (int32_t t = s->nodes[n].run_head; t >= 0; t = s->tasks[t].next)
            hrm_res_add(&sum, &s->wl->tasks[t].req);
        for (int d = 0; d < HRM_NDIM; d++) {
            cr_assert_geq(s->nodes[n].free.v[d], 0, "node %d dim %d over-committed", n, d);
            cr_assert_eq(sum.v[d], s->cluster->nodes[n].capacity.v[d]);
        }
    }
}

/* Runs one pass; returns how many decisions it made, after checking them. */
static size_t fx_decide(struct fx *f)
{
    f->ctx.ndecisions = 0;
    cr_assert_eq(f->p->ops->decide(f->p, &f->ctx), 0);
    for (size_t i = 0; i < f->ctx.ndecisions; i++) {
        const struct hrm_decision *d = &f->ctx.decisions[i];
        if (d->kind == HRM_DECIDE_START && f->s->tasks[d->task].status == HRM_TASK_RUNNING)
            cr_assert_eq(f->s->tasks[d->task].node, d->node);
    }
    check_invariants(f->s);
    f->ctx.now_us += 1000;
    return f->ctx.ndecisions;
}

static void fx_stop(struct fx *f, int32_t task, enum hrm_task_outcome outcome)
{
    int32_t node = f->s->tasks[task].node;
    cr_assert_geq(hrm_state_stop(f->s, task, outcome, f->ctx.now_us), 0);
    struct hrm_event ev = {.type = HRM_EV_TASK_STOP,
                           .now_us = f->ctx.now_us,
                           .job = f->wl->tasks[task].job,
                           .task = task,
                           .node = node,
                           .outcome = outcome};
    if (f->p->ops->on_event)
        f->p->ops->on_event(f->p, f->s, &ev);
}

/* Some running task of job j (the first found), or -1. */
static int32_t running_task_of(const struct fx *f, int32_t j)
{
    const struct hrm_job *job = &f->wl->jobs[j];
    for (int32_t t = job->task_first; t < job->task_first + job->ntasks; t++)
        if (f->s->tasks[t].status == HRM_TASK_RUNNING)
            return t;
    return -1;
}

static void fx_fini(struct fx *f)
{
    hrm_free(f->ctx.decisions);
    hrm_policy_free(f->p);
    hrm_state_free(f->s);
    hrm_workload_free(f->wl);
    hrm_cluster_free(f->c);
}

static const char *const all_policies[] = {"fifo", "capacity", "fair", "drf", "random", "spread"};
#define NALL (sizeof(all_policies) / sizeof(all_policies[0]))

/* ---- registry ---- */

Test(policy, registry_lists_all_six_in_order)
{
    cr_assert_geq(hrm_policy_count(), NALL);
    for (size_t i = 0; i < NALL; i++) {
        const struct hrm_policy_ops *ops = hrm_policy_at(i);
        cr_assert_not_null(ops);
        cr_assert_str_eq(ops->name, all_policies[i]);
        cr_assert_eq(hrm_policy_find(all_policies[i]), ops);
        cr_assert_not_null(ops->summary);
        cr_assert_not_null(ops->init);
        cr_assert_not_null(ops->decide);
    }
    cr_assert_null(hrm_policy_at(hrm_policy_count()));
    cr_assert_null(hrm_policy_find("nope"));
}

Test(policy, registry_names_are_unique)
{
    for (size_t i = 0; i < hrm_policy_count(); i++)
        for (size_t k = i + 1; k < hrm_policy_count(); k++)
            cr_assert_str_neq(hrm_policy_at(i)->name, hrm_policy_at(k)->name);
}

Test(policy, new_and_free_every_policy)
{
    for (size_t i = 0; i < hrm_policy_count(); i++) {
        struct hrm_error err = {{0}};
        struct hrm_policy *p = hrm_policy_new(hrm_policy_at(i)->name, NULL, 42, &err);
        cr_assert_not_null(p, "%s: %s", hrm_policy_at(i)->name, err.text);
        cr_assert_eq(p->ops, hrm_policy_at(i));
        hrm_policy_free(p);
    }
    hrm_policy_free(NULL);
}

Test(policy, new_seeds_the_rng)
{
    struct hrm_policy *a = hrm_policy_new("random", NULL, 7, NULL);
    struct hrm_policy *b = hrm_policy_new("random", NULL, 7, NULL);
    struct hrm_rng ref;
    hrm_rng_seed(&ref, 7);
    for (int i = 0; i < 4; i++) {
        uint64_t x = hrm_rng_u64(&ref);
        cr_assert_eq(hrm_rng_u64(&a->rng), x);
        cr_assert_eq(hrm_rng_u64(&b->rng), x);
    }
    hrm_policy_free(a);
    hrm_policy_free(b);
}

Test(policy, unknown_policy_names_the_known_ones)
{
    struct hrm_error err = {{0}};
    cr_assert_null(hrm_policy_new("lottery", NULL, 1, &err));
    cr_assert(strstr(err.text, "unknown policy 'lottery'"), "%s", err.text);
    cr_assert(strstr(err.text, "fifo, capacity, fair, drf, random, spread"), "%s", err.text);
    cr_assert_null(hrm_policy_new("lottery", NULL, 1, NULL)); /* err may be NULL */
}

Test(policy, unknown_parameter_is_rejected_by_name)
{
    const char *items[] = {"depth=3"};
    struct hrm_params params = {items, 1};
    for (size_t i = 0; i < NALL; i++) {
        struct hrm_error err = {{0}};
        cr_assert_null(hrm_policy_new(all_policies[i], &params, 1, &err));
        cr_assert(strstr(err.text, "'depth'"), "%s", err.text);
        cr_assert(strstr(err.text, all_policies[i]), "%s", err.text);
    }
}

/* ---- parameters ---- */

Test(policy, params_parse_numbers)
{
    const char *items[] = {"alpha=1.5", "n=12", "neg=-3", "n=14"};
    struct hrm_params p = {items, 4};
    double a = 0, absent = 9.0;
    int64_t n = 0, neg = 0, absent_i = 5;
    cr_assert_eq(hrm_params_double(&p, "alpha", &a, NULL), 0);
    cr_assert_float_eq(a, 1.5, 1e-12);
    cr_assert_eq(hrm_params_int(&p, "n", &n, NULL), 0);
    cr_assert_eq(n, 14, "the last item wins");
    cr_assert_eq(hrm_params_int(&p, "neg", &neg, NULL), 0);
    cr_assert_eq(neg, -3);
    cr_assert_eq(hrm_params_double(&p, "beta", &absent, NULL), 0);
    cr_assert_float_eq(absent, 9.0, 0, "absent leaves the value");
    cr_assert_eq(hrm_params_int(&p, "al", &absent_i, NULL), 0, "a prefix is not a key");
    cr_assert_eq(absent_i, 5);
    double from_int = 0;
    cr_assert_eq(hrm_params_double(&p, "n", &from_int, NULL), 0);
    cr_assert_float_eq(from_int, 14.0, 0);
    cr_assert_eq(hrm_params_double(NULL, "n", &from_int, NULL), 0);
}

Test(policy, params_bad_values)
{
    const char *items[] = {"x=abc", "y=1.5", "z=", "w=1e999", "v=3x"};
    struct hrm_params p = {items, 5};
    struct hrm_error err = {{0}};
    double d = 7;
    int64_t i = 7;
    cr_assert_eq(hrm_params_double(&p, "x", &d, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "'x'") && strstr(err.text, "abc"), "%s", err.text);
    cr_assert_eq(hrm_params_int(&p, "y", &i, &err), -HRM_ESPEC, "1.5 is not an integer");
    cr_assert(strstr(err.text, "'y'"), "%s", err.text);
    cr_assert_eq(hrm_params_double(&p, "z", &d, &err), -HRM_ESPEC);
    cr_assert_eq(hrm_params_double(&p, "w", &d, &err), -HRM_ESPEC);
    cr_assert_eq(hrm_params_int(&p, "v", &i, &err), -HRM_ESPEC);
    cr_assert_float_eq(d, 7, 0, "failure leaves the output");
    cr_assert_eq(i, 7);
}

Test(policy, params_check)
{
    const char *known[] = {"alpha", "beta", NULL};
    const char *good[] = {"alpha=1", "beta=2", "alpha=3"};
    struct hrm_params pg = {good, 3};
    cr_assert_eq(hrm_params_check(&pg, known, "mine", NULL), 0);
    struct hrm_params empty = {NULL, 0};
    cr_assert_eq(hrm_params_check(&empty, known, "mine", NULL), 0);

    struct hrm_error err = {{0}};
    const char *bad[] = {"alpha=1", "gamma=2"};
    struct hrm_params pb = {bad, 2};
    cr_assert_eq(hrm_params_check(&pb, known, "mine", &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "'gamma'"), "%s", err.text);
    cr_assert(strstr(err.text, "'mine'"), "%s", err.text);
    cr_assert(strstr(err.text, "alpha, beta"), "%s", err.text);

    const char *prefix[] = {"alph=1"};
    struct hrm_params pp = {prefix, 1};
    cr_assert_eq(hrm_params_check(&pp, known, "mine", &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "'alph'"), "%s", err.text);

    const char *malformed[] = {"alpha"};
    struct hrm_params pm = {malformed, 1};
    cr_assert_eq(hrm_params_check(&pm, known, "mine", &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "key=value"), "%s", err.text);

    const char *none[] = {NULL};
    cr_assert_eq(hrm_params_check(&pg, none, "bare", &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "'alpha'") && strstr(err.text, "takes none"), "%s", err.text);
}

/* ---- decision context ---- */

Test(policy, ctx_records_actual_gpus_and_attempts)
{
    struct fx f;
    fx_init(&f);
    fx_node(&f, 8, 32 * GB, 2, 8 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job_gpu(&f, u, 0, 3, 1000, GB, 1);
    fx_begin(&f, "fifo", 1);
    fx_submit_all(&f);
    cr_assert_eq(hrm_ctx_start(&f.ctx, 0, 0, HRM_GPUS_ANY), 0);
    cr_assert_eq(hrm_ctx_start(&f.ctx, 1, 0, HRM_GPUS_ANY), 0);
    cr_assert_eq(f.ctx.ndecisions, 2);
    cr_assert_eq(f.ctx.decisions[0].kind, HRM_DECIDE_START);
    cr_assert_eq(f.ctx.decisions[0].gpu_mask, 1u);
    cr_assert_eq(f.ctx.decisions[1].gpu_mask, 2u);
    cr_assert_eq(f.ctx.decisions[0].attempt, 1);
    /* No GPU left: refused, nothing recorded, nothing changed. */
    cr_assert_eq(hrm_ctx_start(&f.ctx, 2, 0, HRM_GPUS_ANY), -HRM_ENOFIT);
    cr_assert_eq(f.ctx.ndecisions, 2);
    cr_assert_eq(f.s->tasks[2].status, HRM_TASK_READY);

    cr_assert_eq(hrm_ctx_preempt(&f.ctx, 1), 0);
    cr_assert_eq(f.ctx.ndecisions, 3);
    const struct hrm_decision *d = &f.ctx.decisions[2];
    cr_assert_eq(d->kind, HRM_DECIDE_PREEMPT);
    cr_assert_eq(d->task, 1);
    cr_assert_eq(d->node, 0);
    cr_assert_eq(d->gpu_mask, 2u);
    cr_assert_eq(d->attempt, 1);
    cr_assert_eq(f.s->tasks[1].status, HRM_TASK_READY);
    cr_assert_eq(hrm_ctx_preempt(&f.ctx, 1), -HRM_ESTATE, "not running");
    cr_assert_eq(f.ctx.ndecisions, 3);

    /* The freed GPU is taken again; the task's second run. */
    cr_assert_eq(hrm_ctx_start(&f.ctx, 1, 0, HRM_GPUS_ANY), 0);
    cr_assert_eq(f.ctx.decisions[3].gpu_mask, 2u);
    cr_assert_eq(f.ctx.decisions[3].attempt, 2);
    fx_fini(&f);
}

/* Every policy terminates, places only what fits, and fills a cluster that
 * can hold everything. */
Test(policy, every_policy_places_all_that_fits)
{
    for (size_t i = 0; i < NALL; i++) {
        struct fx f;
        fx_init(&f);
        fx_nodes(&f, 4, 8, 16 * GB); /* 32 cores for 15: no packing can strand a task */
        int32_t u = fx_user(&f, "u"), v = fx_user(&f, "v");
        fx_job(&f, u, 0, 5, 1000, 2 * GB);
        fx_job(&f, v, 0, 5, 2000, GB);
        fx_begin(&f, all_policies[i], 3);
        fx_submit_all(&f);
        cr_assert_eq(fx_decide(&f), 10, "%s", all_policies[i]);
        cr_assert_eq(f.s->nready, 0);
        cr_assert_eq(fx_decide(&f), 0, "%s: nothing left", all_policies[i]);
        fx_fini(&f);
    }
}

Test(policy, every_policy_places_nothing_when_nothing_fits)
{
    for (size_t i = 0; i < NALL; i++) {
        struct fx f;
        fx_init(&f);
        fx_nodes(&f, 2, 4, 16 * GB);
        int32_t u = fx_user(&f, "u");
        fx_job(&f, u, 0, 2, 3000, GB); /* takes 3 of 4 cores on each node */
        fx_job(&f, u, 0, 4, 2000, GB); /* then fits nowhere */
        fx_begin(&f, all_policies[i], 3);
        fx_submit(&f, 0);
        cr_assert_eq(fx_decide(&f), 2, "%s", all_policies[i]);
        fx_submit(&f, 1);
        cr_assert_eq(fx_decide(&f), 0, "%s", all_policies[i]);
        cr_assert_eq(f.s->nready, 4);
        fx_fini(&f);
    }
}

/* Many passes with mixed requests, GPUs, failures and a node going down: no
 * policy over-commits or errs, and each eventually runs every task. */
Test(policy, every_policy_survives_a_busy_run)
{
    for (size_t i = 0; i < NALL; i++) {
        struct fx f;
        fx_init(&f);
        fx_nodes(&f, 6, 8, 32 * GB);
        fx_node(&f, 8, 64 * GB, 2, 16 * GB);
        fx_node(&f, 2, 4 * GB, 0, 0);
        int32_t users[3] = {fx_user(&f, "a"), fx_user(&f, "b"), fx_user(&f, "c")};
        int32_t q1 = fx_queue(&f, "q1", 0.5, 0.8);
        int32_t q2 = fx_queue(&f, "q2", 0.2, 1.0);
        for (int j = 0; j < 12; j++) {
            int32_t q = j % 3 == 0 ? 0 : (j % 3 == 1 ? q1 : q2);
            if (j % 4 == 3)
                fx_job_gpu(&f, users[j % 3], q, 3, 2000, 8 * GB, 1);
            else
                fx_job(&f, users[j % 3], q, 10 + j, 500 + 250 * (j % 5), (1 + j % 4) * GB);
        }
        fx_begin(&f, all_policies[i], 11);
        struct hrm_rng rng;
        hrm_rng_seed(&rng, 5);
        int32_t submitted = 0;
        int32_t ndone = 0;
        for (int pass = 0; pass < 10000 && ndone < f.wl->ntasks; pass++) {
            if (submitted < f.wl->njobs && pass % 3 == 0)
                fx_submit(&f, submitted++);
            if (pass == 40) {
                hrm_state_node_down(f.s, 3, f.ctx.now_us);
                fx_event(&f, HRM_EV_NODE_DOWN, -1, -1, 3);
            }
            if (pass == 80) {
                hrm_state_node_up(f.s, 3);
                fx_event(&f, HRM_EV_NODE_UP, -1, -1, 3);
            }
            fx_decide(&f);
            /* stop a few running tasks, mostly successfully */
            for (int k = 0; k < 3; k++) {
                int32_t t = (int32_t)hrm_rng_below(&rng, (uint64_t)f.wl->ntasks);
                for (int32_t m = 0; m < f.wl->ntasks; m++) {
                    int32_t tt = (t + m) % f.wl->ntasks;
                    if (f.s->tasks[tt].status == HRM_TASK_RUNNING) {
                        bool fail = hrm_rng_below(&rng, 10) == 0;
                        fx_stop(&f, tt, fail ? HRM_OUTCOME_FAILED : HRM_OUTCOME_DONE);
                        break;
                    }
                }
            }
            ndone = 0;
            for (int32_t t = 0; t < f.wl->ntasks; t++)
                ndone += f.s->tasks[t].status >= HRM_TASK_DONE;
        }
        cr_assert_eq(ndone, f.wl->ntasks, "%s: every task ends", all_policies[i]);
        fx_fini(&f);
    }
}

/* First fit as the definition says it: the first node of the free list, from
 * its head, where the task fits. */
static int32_t naive_first_fit(const struct hrm_state *s, int32_t task)
{
    for (int32_t n = s->free_head; n >= 0; n = s->nodes[n].next_free)
        if (hrm_state_fits(s, task, n))
            return n;
    return -1;
}

/* The first-fit policies, with many request shapes over several passes, pick
 * exactly the naive first-fit node: replayed on a twin state, each decision's
 * node is the one a head-of-list scan finds.  This checks the search cache. */
Test(policy, cached_first_fit_matches_the_naive_scan)
{
    const char *first_fit[] = {"fifo", "capacity", "fair", "drf"};
    for (size_t i = 0; i < 4; i++) {
        struct fx f;
        fx_init(&f);
        for (int n = 0; n < 40; n++)
            fx_node(&f, 2 + n % 7, (int64_t)(2 + n % 5) * GB, n % 9 == 0 ? 2 : 0, 8 * GB);
        int32_t users[3] = {fx_user(&f, "a"), fx_user(&f, "b"), fx_user(&f, "c")};
        int32_t q1 = fx_queue(&f, "q1", 0.4, 0.9);
        for (int j = 0; j < 30; j++) {
            int64_t gpus = j % 7 == 0 ? 1 : 0;
            fx_job_gpu(&f, users[j % 3], j % 2 ? q1 : 0, 4 + j % 9, 500 * (1 + j % 6),
                       (int64_t)(1 + j % 4) * GB / 2, gpus);
        }
        fx_begin(&f, first_fit[i], 1);
        struct hrm_state *twin = hrm_state_new(f.c, f.wl);
        struct hrm_rng rng;
        hrm_rng_seed(&rng, 77);
        for (int32_t j = 0; j < f.wl->njobs; j++) {
            fx_submit(&f, j);
            cr_assert_geq(hrm_state_submit_job(twin, j, 0), 0);
        }
        size_t placed = 0;
        for (int pass = 0; pass < 60; pass++) {
            fx_decide(&f);
            for (size_t k = 0; k < f.ctx.ndecisions; k++) {
                const struct hrm_decision *d = &f.ctx.decisions[k];
                cr_assert_eq(d->node, naive_first_fit(twin, d->task), "%s pass %d decision %zu",
                             first_fit[i], pass, k);
                cr_assert_eq(hrm_state_start(twin, d->task, d->node, HRM_GPUS_ANY, 0), 0);
                placed++;
            }
            for (int k = 0; k < 6; k++) {
                int32_t t = (int32_t)hrm_rng_below(&rng, (uint64_t)f.wl->ntasks);
                if (f.s->tasks[t].status != HRM_TASK_RUNNING)
                    continue;
                fx_stop(&f, t, HRM_OUTCOME_DONE);
                cr_assert_geq(hrm_state_stop(twin, t, HRM_OUTCOME_DONE, 0), 0);
            }
        }
        cr_assert_gt(placed, 100, "%s", first_fit[i]);
        hrm_state_free(twin);
        fx_fini(&f);
    }
}

/* ---- fifo ---- */

Test(fifo, arrival_then_ready_order)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 1, 4, 16 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 3, 1000, GB); /* tasks 0..2 */
    fx_job(&f, u, 0, 2, 1000, GB); /* tasks 3..4 */
    fx_begin(&f, "fifo", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(f.ctx.decisions[i].task, i);
    fx_stop(&f, 1, HRM_OUTCOME_DONE);
    cr_assert_eq(fx_decide(&f), 1);
    cr_assert_eq(f.ctx.decisions[0].task, 4);
    fx_fini(&f);
}

Test(fifo, head_of_line_blocking)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 1, 4, 16 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 1, 2000, GB); /* task 0: occupies half the node */
    fx_job(&f, u, 0, 1, 4000, GB); /* task 1: needs the whole node */
    fx_job(&f, u, 0, 2, 1000, GB); /* tasks 2, 3: would fit, but wait behind 1 */
    fx_begin(&f, "fifo", 1);
    fx_submit(&f, 0);
    cr_assert_eq(fx_decide(&f), 1);
    fx_submit(&f, 1);
    fx_submit(&f, 2);
    cr_assert_eq(fx_decide(&f), 0, "the head blocks the line");
    fx_stop(&f, 0, HRM_OUTCOME_DONE);
    cr_assert_eq(fx_decide(&f), 1);
    cr_assert_eq(f.ctx.decisions[0].task, 1);
    fx_stop(&f, 1, HRM_OUTCOME_DONE);
    cr_assert_eq(fx_decide(&f), 2);
    fx_fini(&f);
}

Test(fifo, first_fit_in_free_list_order)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 3, 2, 16 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 5, 1000, GB);
    fx_begin(&f, "fifo", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 5);
    int32_t expect[5] = {0, 0, 1, 1, 2};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(f.ctx.decisions[i].node, expect[i]);
    fx_fini(&f);
}

Test(fifo, skips_nodes_too_small_for_the_request)
{
    struct fx f;
    fx_init(&f);
    fx_node(&f, 8, 2 * GB, 0, 0);
    fx_node(&f, 8, 64 * GB, 0, 0);
    fx_node(&f, 4, 16 * GB, 1, 8 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 2, 1000, 4 * GB);        /* not on node 0 (memory) */
    fx_job_gpu(&f, u, 0, 2, 1000, 1 * GB, 1); /* only node 2 has a GPU, just one */
    fx_begin(&f, "fifo", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 3);
    cr_assert_eq(f.ctx.decisions[0].node, 1);
    cr_assert_eq(f.ctx.decisions[1].node, 1);
    cr_assert_eq(f.ctx.decisions[2].node, 2);
    cr_assert_eq(f.ctx.decisions[2].gpu_mask, 1u);
    fx_fini(&f);
}

/* The simulator benchmark's shape, scaled down for a unit test: a large
 * cluster, many identical tasks, and a stream of single-slot passes. */
Test(fifo, large_cluster_fills_and_refills)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 2000, 4, 16 * GB);
    int32_t u = fx_user(&f, "u");
    for (int j = 0; j < 20; j++)
        fx_job(&f, u, 0, 1000, 1000, GB);
    fx_begin(&f, "fifo", 1);
    fx_submit_all(&f);
    f.ctx.ndecisions = 0;
    cr_assert_eq(f.p->ops->decide(f.p, &f.ctx), 0);
    cr_assert_eq(f.ctx.ndecisions, 8000);
    cr_assert_eq(f.s->free_head, -1);
    /* Tasks 0..7999 run; end them one by one: each pass starts exactly the next. */
    for (int32_t t = 0; t < 4000; t++) {
        cr_assert_eq(hrm_state_stop(f.s, t, HRM_OUTCOME_DONE, f.ctx.now_us), 0);
        f.ctx.ndecisions = 0;
        cr_assert_eq(f.p->ops->decide(f.p, &f.ctx), 0);
        cr_assert_eq(f.ctx.ndecisions, 1);
        cr_assert_eq(f.ctx.decisions[0].task, 8000 + t);
        cr_assert_eq(f.ctx.decisions[0].node, t / 4);
    }
    fx_fini(&f);
}

/* ---- capacity ---- */

static int64_t queue_cpu(const struct fx *f, int32_t q)
{
    return f->s->queue_alloc[q].v[HRM_DIM_CPU];
}

Test(capacity, elastic_then_guarantee_restored)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 10, 1, 16 * GB);
    int32_t u = fx_user(&f, "u");
    int32_t qa = fx_queue(&f, "a", 0.7, 1.0);
    int32_t qb = fx_queue(&f, "b", 0.3, 1.0);
    int32_t ja = fx_job(&f, u, qa, 100, 1000, GB);
    int32_t jb = fx_job(&f, u, qb, 100, 1000, GB);
    fx_begin(&f, "capacity", 1);
    fx_submit(&f, ja);
    cr_assert_eq(fx_decide(&f), 10, "a borrows the whole idle cluster");
    cr_assert_eq(f.s->queue_running[qa], 10);
    fx_submit(&f, jb);
    cr_assert_eq(fx_decide(&f), 0, "no preemption");
    /* As a's tasks end, b gets the freed slots until it holds its 30 %. */
    int expect_b[8] = {1, 2, 3, 3, 3, 3, 3, 3};
    for (int i = 0; i < 8; i++) {
        fx_stop(&f, running_task_of(&f, ja), HRM_OUTCOME_DONE);
        cr_assert_eq(fx_decide(&f), 1);
        cr_assert_eq(f.s->queue_running[qb], expect_b[i], "step %d", i);
        cr_assert_eq(f.s->queue_running[qa], 10 - expect_b[i], "step %d", i);
    }
    /* b's own tasks ending go back to b: it is at its guarantee, a above. */
    fx_stop(&f, running_task_of(&f, jb), HRM_OUTCOME_DONE);
    cr_assert_eq(fx_decide(&f), 1);
    cr_assert_eq(f.s->queue_running[qb], 3);
    fx_fini(&f);
}

Test(capacity, guarantees_split_an_empty_cluster)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 5, 2, 16 * GB);
    int32_t u = fx_user(&f, "u");
    int32_t qa = fx_queue(&f, "a", 0.7, 1.0);
    int32_t qb = fx_queue(&f, "b", 0.3, 1.0);
    fx_job(&f, u, qb, 50, 1000, GB);
    fx_job(&f, u, qa, 50, 1000, GB);
    fx_begin(&f, "capacity", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 10);
    cr_assert_eq(queue_cpu(&f, qa), 7000);
    cr_assert_eq(queue_cpu(&f, qb), 3000);
    fx_fini(&f);
}

Test(capacity, equal_use_goes_to_the_larger_guarantee)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 1, 1, 16 * GB);
    int32_t u = fx_user(&f, "u");
    int32_t small = fx_queue(&f, "small", 0.3, 1.0);
    int32_t large = fx_queue(&f, "large", 0.7, 1.0);
    fx_job(&f, u, small, 5, 1000, GB);
    fx_job(&f, u, large, 5, 1000, GB);
    fx_begin(&f, "capacity", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 1);
    cr_assert_eq(f.s->queue_running[large], 1, "both idle: YARN serves the larger guarantee");
    cr_assert_eq(f.s->queue_running[small], 0);
    fx_fini(&f);
}

Test(capacity, max_is_never_exceeded)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 10, 1, 16 * GB);
    int32_t u = fx_user(&f, "u");
    int32_t qc = fx_queue(&f, "c", 0.2, 0.5);
    int32_t j1 = fx_job(&f, u, qc, 100, 1000, GB);
    fx_job(&f, u, qc, 100, 1000, GB);
    fx_begin(&f, "capacity", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 5, "the cluster is idle, yet c stops at 50 %");
    cr_assert_leq(hrm_res_dominant_share(&f.s->queue_alloc[qc], &f.s->up_total), 0.5 + 1e-12);
    for (int i = 0; i < 20; i++) {
        fx_stop(&f,
                running_task_of(&f, j1) >= 0 ? running_task_of(&f, j1)
                                             : running_task_of(&f, j1 + 1),
                HRM_OUTCOME_DONE);
        cr_assert_eq(fx_decide(&f), 1);
        cr_assert_eq(f.s->queue_running[qc], 5);
    }
    fx_fini(&f);
}

Test(capacity, max_measured_by_dominant_share)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 4, 8, 16 * GB); /* 32 cores, 64 GB */
    int32_t u = fx_user(&f, "u");
    int32_t qm = fx_queue(&f, "mem", 0.1, 0.5);
    fx_job(&f, u, qm, 100, 1000, 4 * GB); /* memory is the dominant resource */
    fx_begin(&f, "capacity", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 8, "8 x 4 GB = 50 %% of memory");
    fx_fini(&f);
}

Test(capacity, fifo_within_a_queue_and_skips_what_does_not_fit)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 2, 4, 16 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 3, 1000, GB);
    fx_job(&f, u, 0, 1, 8000, GB); /* fits on no node */
    fx_job(&f, u, 0, 3, 1000, GB);
    fx_begin(&f, "capacity", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 6);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(f.ctx.decisions[i].task, i);
    cr_assert_eq(f.ctx.decisions[3].task, 4);
    cr_assert_eq(f.s->tasks[3].status, HRM_TASK_READY);
    fx_fini(&f);
}

/* ---- fair ---- */

Test(fair, equal_running_counts)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 9, 1, 16 * GB);
    int32_t u = fx_user(&f, "u");
    for (int j = 0; j < 3; j++)
        fx_job(&f, u, 0, 20, 1000, GB);
    fx_begin(&f, "fair", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 9);
    for (int j = 0; j < 3; j++)
        cr_assert_eq(f.s->jobs[j].nrunning, 3);
    fx_fini(&f);
}

Test(fair, max_min_with_a_small_job_and_ties_by_arrival)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 10, 1, 16 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 1, 1000, GB); /* wants only one */
    fx_job(&f, u, 0, 20, 1000, GB);
    fx_job(&f, u, 0, 20, 1000, GB);
    fx_begin(&f, "fair", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 10);
    cr_assert_eq(f.s->jobs[0].nrunning, 1);
    cr_assert_eq(f.s->jobs[1].nrunning, 5, "the odd slot goes to the earlier job");
    cr_assert_eq(f.s->jobs[2].nrunning, 4);
    fx_fini(&f);
}

Test(fair, freed_slot_goes_to_the_poorest_job)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 6, 1, 16 * GB);
    int32_t u = fx_user(&f, "u");
    int32_t ja = fx_job(&f, u, 0, 20, 1000, GB);
    int32_t jb = fx_job(&f, u, 0, 20, 1000, GB);
    fx_begin(&f, "fair", 1);
    fx_submit(&f, ja);
    cr_assert_eq(fx_decide(&f), 6);
    fx_submit(&f, jb);
    cr_assert_eq(fx_decide(&f), 0, "no preemption");
    for (int i = 0; i < 3; i++) {
        fx_stop(&f, running_task_of(&f, ja), HRM_OUTCOME_DONE);
        cr_assert_eq(fx_decide(&f), 1);
        cr_assert_eq(f.s->jobs[jb].nrunning, i + 1);
    }
    /* 3 and 3 now: a freed slot returns to the job that lost it. */
    fx_stop(&f, running_task_of(&f, jb), HRM_OUTCOME_DONE);
    cr_assert_eq(fx_decide(&f), 1);
    cr_assert_eq(f.s->jobs[jb].nrunning, 3);
    fx_stop(&f, running_task_of(&f, ja), HRM_OUTCOME_DONE);
    cr_assert_eq(fx_decide(&f), 1);
    cr_assert_eq(f.s->jobs[ja].nrunning, 3);
    fx_fini(&f);
}

Test(fair, counts_tasks_not_resources)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 1, 16, 64 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 20, 3000, GB); /* big tasks */
    fx_job(&f, u, 0, 20, 1000, GB); /* small tasks */
    fx_begin(&f, "fair", 1);
    fx_submit_all(&f);
    /* Alternating: big (3), small (1), ... 4 of each = 16 cores. */
    cr_assert_eq(fx_decide(&f), 8);
    cr_assert_eq(f.s->jobs[0].nrunning, 4);
    cr_assert_eq(f.s->jobs[1].nrunning, 4);
    fx_fini(&f);
}

/* ---- drf ---- */

Test(drf, paper_example)
{
    /* Ghodsi et al., NSDI'11, section 4: 9 CPUs and 18 GB; A's tasks ask
     * <1 CPU, 4 GB>, B's <3 CPUs, 1 GB>.  DRF gives A three tasks and B two,
     * equalising dominant shares at 2/3. */
    struct fx f;
    fx_init(&f);
    fx_node(&f, 9, 18 * GB, 0, 0);
    int32_t a = fx_user(&f, "A"), b = fx_user(&f, "B");
    fx_job(&f, a, 0, 50, 1000, 4 * GB);
    fx_job(&f, b, 0, 50, 3000, 1 * GB);
    fx_begin(&f, "drf", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 5);
    cr_assert_eq(f.s->user_running[a], 3);
    cr_assert_eq(f.s->user_running[b], 2);
    cr_assert_float_eq(hrm_state_user_share(f.s, a), 2.0 / 3.0, 1e-9);
    cr_assert_float_eq(hrm_state_user_share(f.s, b), 2.0 / 3.0, 1e-9);
    fx_fini(&f);
}

Test(drf, paper_example_order_of_progressive_filling)
{
    struct fx f;
    fx_init(&f);
    fx_node(&f, 9, 18 * GB, 0, 0);
    int32_t a = fx_user(&f, "A"), b = fx_user(&f, "B");
    int32_t ja = fx_job(&f, a, 0, 50, 1000, 4 * GB);
    fx_job(&f, b, 0, 50, 3000, 1 * GB);
    fx_begin(&f, "drf", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 5);
    /* shares after each: A 2/9, B 1/3, A 4/9, B 2/3, A 2/3 */
    bool is_a[5] = {true, false, true, false, true};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(f.wl->tasks[f.ctx.decisions[i].task].job == ja, is_a[i], "step %d", i);
    fx_fini(&f);
}

Test(drf, a_user_that_fits_nowhere_does_not_block_others)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 2, 4, 16 * GB);
    int32_t a = fx_user(&f, "A"), b = fx_user(&f, "B");
    fx_job(&f, a, 0, 5, 6000, GB); /* larger than any node */
    fx_job(&f, b, 0, 5, 1000, GB);
    fx_begin(&f, "drf", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 5);
    cr_assert_eq(f.s->user_running[a], 0);
    cr_assert_eq(f.s->user_running[b], 5);
    fx_fini(&f);
}

Test(drf, freed_resources_go_to_the_lowest_dominant_share)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 4, 2, 16 * GB); /* 8 cores */
    int32_t a = fx_user(&f, "A"), b = fx_user(&f, "B");
    int32_t ja = fx_job(&f, a, 0, 20, 1000, GB);
    int32_t jb = fx_job(&f, b, 0, 20, 1000, GB);
    fx_begin(&f, "drf", 1);
    fx_submit(&f, ja);
    cr_assert_eq(fx_decide(&f), 8);
    fx_submit(&f, jb);
    for (int i = 0; i < 4; i++) {
        fx_stop(&f, running_task_of(&f, ja), HRM_OUTCOME_DONE);
        cr_assert_eq(fx_decide(&f), 1);
        cr_assert_eq(f.s->user_running[b], i + 1);
    }
    fx_stop(&f, running_task_of(&f, ja), HRM_OUTCOME_DONE);
    cr_assert_eq(fx_decide(&f), 1);
    cr_assert_eq(f.s->user_running[b], 4, "A at 3/8 is now the lower share");
    cr_assert_eq(f.s->user_running[a], 4);
    fx_fini(&f);
}

Test(drf, jobs_of_a_user_in_arrival_order)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 1, 4, 16 * GB);
    int32_t a = fx_user(&f, "A");
    fx_job(&f, a, 0, 3, 1000, GB);
    fx_job(&f, a, 0, 3, 1000, GB);
    fx_begin(&f, "drf", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 4);
    cr_assert_eq(f.s->jobs[0].nrunning, 3);
    cr_assert_eq(f.s->jobs[1].nrunning, 1);
    fx_fini(&f);
}

/* ---- random ---- */

static void random_run(uint64_t seed, int32_t *nodes_out, int n)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 50, 2, 16 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, n, 1000, GB);
    fx_begin(&f, "random", seed);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), (size_t)n);
    for (int i = 0; i < n; i++)
        nodes_out[i] = f.ctx.decisions[i].node;
    fx_fini(&f);
}

Test(random, deterministic_per_seed)
{
    int32_t a[40], b[40], c[40];
    random_run(17, a, 40);
    random_run(17, b, 40);
    random_run(18, c, 40);
    cr_assert_arr_eq(a, b, sizeof(a));
    cr_assert(memcmp(a, c, sizeof(a)) != 0, "another seed, another placement");
    /* Not first-fit: a random spread touches many nodes. */
    bool seen[50] = {false};
    int distinct = 0;
    for (int i = 0; i < 40; i++)
        if (!seen[a[i]]) {
            seen[a[i]] = true;
            distinct++;
        }
    cr_assert_geq(distinct, 15);
}

Test(random, only_where_it_fits_and_no_head_of_line_blocking)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 10, 8, 4 * GB); /* 0..9: too little memory */
    fx_nodes(&f, 3, 8, 32 * GB); /* 10..12 */
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 1, 64000, GB);     /* task 0: fits nowhere */
    fx_job(&f, u, 0, 12, 1000, 8 * GB); /* tasks 1..12: only on 10..12 */
    fx_job(&f, u, 0, 4, 1000, GB);      /* tasks 13..16: anywhere */
    fx_begin(&f, "random", 99);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 16);
    cr_assert_eq(f.s->tasks[0].status, HRM_TASK_READY);
    for (size_t i = 0; i < f.ctx.ndecisions; i++) {
        const struct hrm_decision *d = &f.ctx.decisions[i];
        if (d->task >= 1 && d->task <= 12)
            cr_assert_geq(d->node, 10, "task %d on node %d", d->task, d->node);
    }
    fx_fini(&f);
}

Test(random, roughly_uniform_over_fitting_nodes)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 6, 1, 4 * GB);      /* 0..5: full after one task each */
    fx_nodes(&f, 4, 400, 4000 * GB); /* 6..9: room for everything */
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 6, 1000, GB);       /* anywhere */
    fx_job(&f, u, 0, 800, 1000, 8 * GB); /* only 6..9 */
    fx_begin(&f, "random", 5);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 806);
    int count[10] = {0};
    for (size_t i = 0; i < f.ctx.ndecisions; i++)
        if (f.ctx.decisions[i].task >= 6)
            count[f.ctx.decisions[i].node]++;
    for (int n = 6; n < 10; n++)
        cr_assert(count[n] > 140 && count[n] < 260, "node %d got %d of 800", n, count[n]);
    fx_fini(&f);
}

/* ---- spread ---- */

Test(spread, round_robin_over_equal_nodes)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 4, 8, 32 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 8, 1000, GB);
    fx_begin(&f, "spread", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 8);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(f.ctx.decisions[i].node, i % 4);
    for (int n = 0; n < 4; n++)
        cr_assert_eq(f.s->nodes[n].nrunning, 2);
    fx_fini(&f);
}

Test(spread, prefers_the_emptiest_node)
{
    struct fx f;
    fx_init(&f);
    fx_node(&f, 4, 32 * GB, 0, 0);
    fx_node(&f, 16, 32 * GB, 0, 0);
    fx_node(&f, 8, 32 * GB, 0, 0);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 12, 1000, GB);
    fx_begin(&f, "spread", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 12);
    /* Free cpu 4/16/8: node 1 takes 8 tasks until it is level with node 2,
     * then they alternate (ties to the lower id): final free 4/6/6. */
    cr_assert_eq(f.s->nodes[1].nrunning, 10);
    cr_assert_eq(f.s->nodes[2].nrunning, 2);
    cr_assert_eq(f.s->nodes[0].nrunning, 0);
    fx_fini(&f);
}

Test(spread, falls_back_when_the_emptiest_does_not_fit)
{
    struct fx f;
    fx_init(&f);
    fx_node(&f, 32, 4 * GB, 0, 0); /* most cpu, little memory */
    fx_node(&f, 4, 64 * GB, 0, 0);
    fx_node(&f, 8, 64 * GB, 0, 0);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 3, 1000, 8 * GB);
    fx_begin(&f, "spread", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 3);
    cr_assert_eq(f.ctx.decisions[0].node, 2);
    cr_assert_eq(f.ctx.decisions[1].node, 2);
    cr_assert_eq(f.ctx.decisions[2].node, 2, "6 free on node 2 beat 4 on node 1");
    fx_fini(&f);
}

/* Freed capacity is seen through events, and also without them. */
static void spread_refill(bool deliver_events)
{
    struct fx f;
    fx_init(&f);
    fx_nodes(&f, 4, 2, 32 * GB);
    int32_t u = fx_user(&f, "u");
    fx_job(&f, u, 0, 20, 1000, GB);
    fx_begin(&f, "spread", 1);
    fx_submit_all(&f);
    cr_assert_eq(fx_decide(&f), 8);
    /* Free both tasks of node 2 and one of node 1. */
    int32_t stops[3] = {-1, -1, -1};
    int k = 0;
    for (int32_t t = f.s->nodes[2].run_head; t >= 0 && k < 2; t = f.s->tasks[t].next)
        stops[k++] = t;
    stops[2] = f.s->nodes[1].run_head;
    for (int i = 0; i < 3; i++) {
        if (deliver_events)
            fx_stop(&f, stops[i], HRM_OUTCOME_DONE);
        else
            cr_assert_geq(hrm_state_stop(f.s, stops[i], HRM_OUTCOME_DONE, 0), 0);
    }
    cr_assert_eq(fx_decide(&f), 3);
    cr_assert_eq(f.ctx.decisions[0].node, 2);
    cr_assert_eq(f.ctx.decisions[1].node, 1, "1 and 2 level at one free core: lower id");
    cr_assert_eq(f.ctx.decisions[2].node, 2);
    fx_fini(&f);
}

Test(spread, refills_with_events)
{
    spread_refill(true);
}

Test(spread, refills_without_events)
{
    spread_refill(false);
}
