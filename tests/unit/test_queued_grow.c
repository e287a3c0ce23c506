/* A central role whose workload grows job by job (hrm_central_grow, the master's path for
 * submissions) decides exactly as one made with the whole workload up front (the simulator's):
 * random arrivals, task failures and node failures, many seeds, every policy that grows. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/central.h"
#include "hrm/rng.h"

#define NNODES 6
#define MAX_EVENTS 100000

enum ev_kind { EV_ARRIVE, EV_PASS, EV_END, EV_DOWN, EV_UP };

struct ev {
    int64_t at, seq;
    enum ev_kind kind;
    int32_t a, b, c; /* job; or task, node, attempt; or node */
};

/* A random job: its user, tasks, and each task's request and duration. */
struct jobspec {
    int64_t arrive_us;
    int user, ntasks;
    int64_t cpu, mem, dur_us;
    int gpus;
};

struct world {
    struct hrm_env env;
    int64_t now, seq;
    struct ev *q; /* pending events, unsorted: few enough for a linear search */
    size_t nq;
    /* the decisions: (time, kind, task, node, attempt) */
    int64_t *log;
    size_t nlog, cap_log;
    const struct jobspec *jobs;
    int njobs;
    uint64_t fail_salt;
};

static void push(struct world *w, int64_t at, enum ev_kind k, int32_t a, int32_t b, int32_t c)
{
    cr_assert_lt(w->nq, MAX_EVENTS);
    w->q[w->nq++] = (struct ev){.at = at, .seq = w->seq++, .kind = k, .a = a, .b = b, .c = c};
}

static bool pop(struct world *w, struct ev *out)
{
    if (w->nq == 0)
        return false;
    size_t best = 0;
    for (size_t i = 1; i < w->nq; i++)
        if (w->q[i].at < w->q[best].at || (w->q[i].at == w->q[best].at && w->q[i].seq < w->q[best].seq))
            best = i;
    *out = w->q[best];
    w->q[best] = w->q[--w->nq];
    return true;
}

static void record(struct world *w, int64_t a, int64_t b, int64_t c, int64_t d)
{
    HRM_GROW(w->log, w->cap_log, w->nlog + 5);
    int64_t row[5] = {w->now, a, b, c, d};
    memcpy(w->log + w->nlog, row, sizeof(row));
    w->nlog += 5;
}

static int64_t env_now(struct hrm_env *env)
{
    return ((struct world *)env->ctx)->now;
}

static void env_timer(struct hrm_env *env, int64_t at, uint64_t cookie)
{
    push(env->ctx, at, EV_PASS, (int32_t)cookie, 0, 0);
}

/* A launch runs for its task's duration and fails on a hash of (task, attempt): the same
 * outcome in both worlds whatever the order of their events. */
static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *m)
{
    struct world *w = env->ctx;
    (void)to;
    record(w, m->type, m->task, m->node, m->attempt);
    if (m->type != HRM_MSG_TASK_LAUNCH)
        return;
    int64_t dur = 0;
    for (int j = 0, first = 0; j < w->njobs; first += w->jobs[j].ntasks, j++)
        if (m->task < first + w->jobs[j].ntasks) {
            dur = w->jobs[j].dur_us;
            break;
        }
    push(w, w->now + dur, EV_END, m->task, m->node, m->attempt);
}

static void add_job(struct hrm_workload *wl, const struct jobspec *js, int i)
{
    char name[16], user[8];
    snprintf(name, sizeof(name), "j%d", i);
    snprintf(user, sizeof(user), "u%d", js->user);
    fx_job(wl, name, user, js->arrive_us);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, js->ntasks, js->cpu, js->mem, js->gpus, 0, js->dur_us);
}

/* Runs the jobs through a role of policy; grown: the workload starts empty and each job joins
 * it at its arrival.  The decisions into *log (owned by the caller). */
static size_t run(const char *policy, const struct jobspec *jobs, int njobs, uint64_t seed,
                  bool grown, int64_t **log)
{
    struct hrm_cluster *c = fx_cluster(2, NNODES / 2, 8, 32 * GIB, 2, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    if (!grown)
        for (int i = 0; i < njobs; i++)
            add_job(wl, &jobs[i], i);
    struct hrm_error err;
    struct hrm_params params = {0};
    struct hrm_policy *p = hrm_policy_new(policy, &params, seed, &err);
    cr_assert(p, "%s", err.text);
    struct hrm_central_config cfg = {.pass_delay_us = 0, .max_attempts = 3};
    struct hrm_central *central = hrm_central_new(c, wl, p, &cfg);
    struct world w = {.jobs = jobs, .njobs = njobs, .fail_salt = seed};
    w.q = hrm_alloc(MAX_EVENTS * sizeof(*w.q));
    w.env = (struct hrm_env){.now_us = env_now, .send = env_send, .timer = env_timer, .ctx = &w};
    struct hrm_rng rng;
    hrm_rng_seed(&rng, seed ^ 0x5eed);
    for (int i = 0; i < njobs; i++)
        push(&w, jobs[i].arrive_us, EV_ARRIVE, i, 0, 0);
    /* A node goes down now and then and comes back. */
    for (int k = 0; k < 4; k++) {
        int64_t at = (int64_t)hrm_rng_below(&rng, (uint64_t)jobs[njobs - 1].arrive_us + 1);
        int32_t n = (int32_t)hrm_rng_below(&rng, NNODES);
        push(&w, at, EV_DOWN, n, 0, 0);
        push(&w, at + 20000 + (int64_t)hrm_rng_below(&rng, 50000), EV_UP, n, 0, 0);
    }
    bool down[NNODES] = {0};
    struct ev e;
    while (pop(&w, &e)) {
        w.now = e.at;
        struct hrm_msg m = {.from = HRM_ADDR_CLIENT};
        switch (e.kind) {
        case EV_ARRIVE:
            if (grown) {
                add_job(wl, &jobs[e.a], e.a);
                cr_assert_eq(hrm_central_grow(central), 0);
            }
            m.type = HRM_MSG_JOB_SUBMIT;
            m.job = e.a;
            break;
        case EV_PASS:
            cr_assert_eq(hrm_central_on_timer(central, &w.env, (uint64_t)e.a), 0);
            continue;
        case EV_END: {
            uint64_t h = ((uint64_t)e.a * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)e.c << 32) ^ w.fail_salt;
            h ^= h >> 29;
            m.type = HRM_MSG_TASK_END;
            m.task = e.a;
            m.node = e.b;
            m.attempt = e.c;
            m.job = hrm_central_state(central)->wl->tasks[e.a].job;
            m.status = (h * 0xbf58476d1ce4e5b9ull) % 10 == 0 ? HRM_OUTCOME_FAILED : HRM_OUTCOME_DONE;
            break;
        }
        case EV_DOWN:
        case EV_UP:
            if (down[e.a] == (e.kind == EV_DOWN))
                continue;
            down[e.a] = e.kind == EV_DOWN;
            m.type = e.kind == EV_DOWN ? HRM_MSG_NODE_DOWN : HRM_MSG_NODE_UP;
            m.node = e.a;
            break;
        }
        cr_assert_eq(hrm_central_on_msg(central, &w.env, &m), 0);
    }
    /* Every job ended: the run went to its end in both worlds. */
    const struct hrm_state *s = hrm_central_state(central);
    for (int j = 0; j < njobs; j++)
        cr_assert(s->jobs[j].finished, "%s seed %llu: job %d did not end", policy,
                  (unsigned long long)seed, j);
    record(&w, -1, s->njobs_running, s->nready, s->nrunning);
    hrm_central_free(central);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    hrm_free(w.q);
    *log = w.log;
    return w.nlog;
}

static int make_jobs(struct jobspec *jobs, int max, uint64_t seed, bool gpus)
{
    struct hrm_rng rng;
    hrm_rng_seed(&rng, seed);
    int n = 20 + (int)hrm_rng_below(&rng, (uint64_t)(max - 20));
    int64_t t = 0;
    for (int i = 0; i < n; i++) {
        t += (int64_t)hrm_rng_below(&rng, 8000);
        jobs[i] = (struct jobspec){
            .arrive_us = t,
            .user = (int)hrm_rng_below(&rng, 3),
            .ntasks = 1 + (int)hrm_rng_below(&rng, 12),
            .cpu = 500 * (1 + (int64_t)hrm_rng_below(&rng, 8)),
            .mem = GIB * (1 + (int64_t)hrm_rng_below(&rng, 8)),
            .dur_us = 1000 + (int64_t)hrm_rng_below(&rng, 40000),
            .gpus = gpus && hrm_rng_below(&rng, 3) == 0 ? 1 : 0,
        };
    }
    return n;
}

static void same_decisions(const char *policy, bool gpus)
{
    enum { NSEEDS = 40, MAXJOBS = 80 };
    struct jobspec jobs[MAXJOBS];
    for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
        int n = make_jobs(jobs, MAXJOBS, seed * 7919, gpus);
        int64_t *a, *b;
        size_t na = run(policy, jobs, n, seed, false, &a);
        size_t nb = run(policy, jobs, n, seed, true, &b);
        cr_assert_gt(na, 5 * (size_t)n, "%s: too few decisions", policy);
        size_t i = 0;
        while (i < na && i < nb && a[i] == b[i])
            i++;
        cr_assert(i == na && na == nb,
                  "%s seed %llu: decision %zu differs: up front (t=%lld type %lld task %lld "
                  "node %lld), grown (t=%lld type %lld task %lld node %lld)",
                  policy, (unsigned long long)seed, i / 5, (long long)a[i / 5 * 5],
                  (long long)a[i / 5 * 5 + 1], (long long)a[i / 5 * 5 + 2],
                  (long long)a[i / 5 * 5 + 3], (long long)b[i / 5 * 5], (long long)b[i / 5 * 5 + 1],
                  (long long)b[i / 5 * 5 + 2], (long long)b[i / 5 * 5 + 3]);
        hrm_free(a);
        hrm_free(b);
    }
}

Test(queued_grow, drf_same_decisions) { same_decisions("drf", false); }
Test(queued_grow, fifo_same_decisions) { same_decisions("fifo", false); }
Test(queued_grow, fair_same_decisions) { same_decisions("fair", false); }
Test(queued_grow, capacity_same_decisions) { same_decisions("capacity", false); }
Test(queued_grow, spread_same_decisions) { same_decisions("spread", false); }
Test(queued_grow, random_same_decisions) { same_decisions("random", false); }
Test(queued_grow, hrm_same_decisions) { same_decisions("hrm", false); }
/* GPU tasks: the hrm policy's GPU queues and fair share (GPU memory not modelled, so the
 * fragmentation measure, whose weights are over the tasks known so far, does not enter). */
Test(queued_grow, hrm_gpu_same_decisions) { same_decisions("hrm", true); }
Test(queued_grow, gpu_exclusive_same_decisions) { same_decisions("gpu-exclusive", true); }

/* A policy that keeps per-task arrays it cannot extend refuses to grow: the master rebuilds. */
Test(queued_grow, policy_without_grow_refuses)
{
    struct hrm_cluster *c = fx_cluster(1, 2, 8, 32 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    struct hrm_error err;
    struct hrm_params params = {0};
    struct hrm_policy *p = hrm_policy_new("fgm", &params, 1, &err);
    cr_assert(p, "%s", err.text);
    struct hrm_central *central = hrm_central_new(c, wl, p, NULL);
    cr_assert(!hrm_central_can_grow(central));
    cr_assert_eq(hrm_central_grow(central), -ENOTSUP);
    hrm_central_free(central);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* The state's arrays follow the workload across many growths (re-pointed stage counters). */
Test(queued_grow, state_grows_with_the_workload)
{
    struct hrm_cluster *c = fx_cluster(1, 2, 8, 32 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    struct hrm_state *s = hrm_state_new(c, wl);
    for (int i = 0; i < 300; i++) {
        struct jobspec js = {.user = i % 5, .ntasks = 1 + i % 7, .cpu = 1000, .mem = GIB,
                             .dur_us = 1};
        add_job(wl, &js, i);
        hrm_state_grow(s);
        cr_assert_eq(hrm_state_submit_job(s, i, i), 1 + i % 7);
        cr_assert_eq(s->jobs[i].stage_left, &s->stage_left[wl->jobs[i].stage_first]);
    }
    for (int i = 0; i < 300; i++)
        cr_assert_eq(s->jobs[i].stage_left, &s->stage_left[wl->jobs[i].stage_first]);
    cr_assert_eq(s->nready, 300 / 7 * 28 + (1 + 2 + 3 + 4 + 5 + 6));
    hrm_state_free(s);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
