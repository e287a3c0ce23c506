/* Distributed simulator driver: routes messages and timers between the P4 roles. */
#include <stddef.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/rng.h"
#include "sim/driver.h"
#include "sim/dsim_private.h"

/* What the simulated executor of a node knows about one task. */
struct dexec {
    int32_t node, attempt;
    uint32_t seq, gen;
    bool running;
};

struct dsim {
    const struct hrm_cluster *c;
    const struct hrm_workload *wl;
    const struct hrm_dsim_options *opt;
    struct hrm_run_record *rec;
    struct hrm_dsim_stats *st;
    struct hrm_dsetup su;
    struct sim_core k;
    struct hrm_nqs **nqs;
    struct sim_role_env *node_env;
    struct hrm_dsched **sch;
    struct sim_role_env *sched_env;
    struct hrm_negotiator *nego;
    struct sim_role_env nego_env, client_env;
    struct dexec *exec;
    int32_t *inst_of_job;
    int32_t rr;
    int64_t running, arrived, done;
    double *nwait;
    size_t nnwait, cap_nwait;
};

/* ---- the executors (local to their node: no network hop) ---- */

static void exec_launch(struct dsim *s, const struct hrm_msg *m)
{
    const struct hrm_task *t = &s->wl->tasks[m->task];
    struct dexec *e = &s->exec[m->task];
    sim_core_area_update(&s->k);
    if (e->running) /* cannot happen with a correct node role; keep the books straight */
        s->k.busy_cpu -= t->req.v[HRM_DIM_CPU];
    else
        s->running++;
    e->node = m->node;
    e->attempt = m->attempt;
    e->seq = m->gpu_mask;
    e->gen++;
    e->running = true;
    s->k.busy_cpu += t->req.v[HRM_DIM_CPU];
    sim_core_first_start(&s->k, t->job);
    int64_t ready = hrm_dsched_ready_us(s->sch[s->inst_of_job[t->job]], m->task);
    hrm_run_record_wait(s->rec, ready >= 0 ? s->k.now - ready : 0);
    HRM_GROW(s->nwait, s->cap_nwait, s->nnwait + 1);
    s->nwait[s->nnwait++] = (double)(s->k.now - m->value);
    int64_t run = sim_core_exec_run_us(&s->k, t, s->c->nodes[m->node].cpu_speed);
    struct sim_event ev = {.addr = -1};
    ev.u.arg.a = m->task;
    ev.u.arg.b = (int32_t)e->gen;
    ev.u.arg.c = m->node;
    sim_core_push(&s->k, s->k.now + run, EV_EXEC_END, &ev);
}

static void exec_kill(struct dsim *s, const struct hrm_msg *m)
{
    struct dexec *e = &s->exec[m->task];
    if (!e->running || e->attempt != m->attempt || e->seq != m->gpu_mask)
        return;
    sim_core_area_update(&s->k);
    e->running = false;
    e->gen++;
    s->running--;
    s->k.busy_cpu -= s->wl->tasks[m->task].req.v[HRM_DIM_CPU];
}

static void exec_end(struct dsim *s, int32_t task, uint32_t gen)
{
    struct dexec *e = &s->exec[task];
    if (!e->running || e->gen != gen)
        return; /* killed meanwhile */
    sim_core_area_update(&s->k);
    e->running = false;
    s->running--;
    s->done++;
    s->k.busy_cpu -= s->wl->tasks[task].req.v[HRM_DIM_CPU];
    s->rec->tasks_done++;
    struct hrm_msg m = {.type = HRM_MSG_TASK_END,
                        .from = HRM_ADDR_EXEC,
                        .job = s->wl->tasks[task].job,
                        .task = task,
                        .node = e->node,
                        .attempt = e->attempt,
                        .gpu_mask = e->seq,
                        .status = HRM_OUTCOME_DONE};
    int rc = hrm_nqs_on_msg(s->nqs[e->node], &s->node_env[e->node].env, &m);
    if (rc < 0)
        sim_core_fail(&s->k, rc, "node", &m);
}

/* ---- hrm_env ---- */

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *m)
{
    struct sim_role_env *re = (struct sim_role_env *)env;
    struct dsim *s = re->s;
    if (to == HRM_ADDR_EXEC) {
        if (m->type == HRM_MSG_TASK_LAUNCH)
            exec_launch(s, m);
        else if (m->type == HRM_MSG_TASK_KILL)
            exec_kill(s, m);
        return;
    }
    /* Scheduling latency: ready -> the scheduler's placement decision. */
    if (m->type == HRM_MSG_RUN && re->addr <= HRM_ADDR_SCHED0) {
        int64_t ready = hrm_dsched_ready_us(s->sch[hrm_addr_sched_index(re->addr)], m->task);
        if (ready >= 0)
            hrm_run_record_sched_latency(s->rec, s->k.now - ready);
    }
    s->st->messages++;
    struct sim_event ev = {.addr = to};
    ev.u.msg = *m;
    sim_core_push(&s->k, s->k.now + s->c->net.latency_us, EV_DELIVER, &ev);
}

/* ---- clients ---- */

static int64_t instance_load(void *arg, int32_t i)
{
    return hrm_dsched_load(((struct dsim *)arg)->sch[i]);
}

/* The ideal bound: every task starts at arrival on a slot of its own. */
static void ideal_arrival(struct dsim *s, int32_t job)
{
    const struct hrm_job *wj = &s->wl->jobs[job];
    sim_core_first_start(&s->k, job);
    for (int32_t t = wj->task_first; t < wj->task_first + wj->ntasks; t++) {
        hrm_run_record_wait(s->rec, 0);
        s->rec->cpu_area +=
            (double)s->wl->tasks[t].req.v[HRM_DIM_CPU] * (double)s->wl->tasks[t].duration_us;
    }
    s->rec->tasks_done += wj->ntasks;
    struct sim_event ev = {.addr = HRM_ADDR_CLIENT};
    ev.u.msg = (struct hrm_msg){.type = HRM_MSG_JOB_END, .job = job, .task = -1, .node = -1};
    sim_core_push(&s->k, s->k.now + hrm_job_ideal_us(s->wl, s->c, job), EV_DELIVER, &ev);
}

/* A job registers with the least busy instance (ties: the next in turn), or
 * in plain turn with register=1. */
static void client_submit(struct dsim *s, int32_t job)
{
    s->rec->jobs[job].submit_us = s->k.now;
    s->arrived += s->wl->jobs[job].ntasks;
    if (s->su.ideal) {
        ideal_arrival(s, job);
        return;
    }
    int32_t pick =
        sim_core_pick_instance(s->su.instances, &s->rr, s->su.register_rr != 0, instance_load, s);
    s->inst_of_job[job] = pick;
    struct hrm_msg m = {
        .type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = job, .task = -1, .node = -1};
    env_send(&s->client_env.env, hrm_addr_sched(pick), &m);
}

static void client_on_msg(struct dsim *s, const struct hrm_msg *m)
{
    if (m->type != HRM_MSG_JOB_END)
        return;
    s->done += s->su.ideal ? s->wl->jobs[m->job].ntasks : 0;
    sim_core_client_job_end(&s->k, m);
}

/* ---- dispatch ---- */

static int64_t tick(struct dsim *s)
{
    return s->opt && s->opt->clock ? s->opt->clock(s->opt->clock_arg) : 0;
}

static void deliver(struct dsim *s, const struct sim_event *ev)
{
    const struct hrm_msg *m = &ev->u.msg;
    hrm_addr a = ev->addr;
    int rc = 0;
    if (a >= HRM_ADDR_NODE0) {
        int32_t node = a - HRM_ADDR_NODE0;
        rc = hrm_nqs_on_msg(s->nqs[node], &s->node_env[node].env, m);
        if (rc < 0)
            sim_core_fail(&s->k, rc, "node", m);
    } else if (a <= HRM_ADDR_SCHED0) {
        int32_t i = hrm_addr_sched_index(a);
        int64_t t0 = tick(s);
        rc = hrm_dsched_on_msg(s->sch[i], &s->sched_env[i].env, m);
        s->st->sched_ns += (double)(tick(s) - t0);
        s->st->sched_calls++;
        if (rc < 0)
            sim_core_fail(&s->k, rc, "scheduler", m);
    } else if (a == HRM_ADDR_NEGOTIATOR) {
        rc = hrm_negotiator_on_msg(s->nego, &s->nego_env.env, m);
        if (rc < 0)
            sim_core_fail(&s->k, rc, "negotiator", m);
    } else if (a == HRM_ADDR_CLIENT) {
        client_on_msg(s, m);
    }
}

static void timer(struct dsim *s, const struct sim_event *ev)
{
    hrm_addr a = ev->addr;
    int rc = 0;
    if (a >= HRM_ADDR_NODE0) {
        int32_t node = a - HRM_ADDR_NODE0;
        rc = hrm_nqs_on_timer(s->nqs[node], &s->node_env[node].env, ev->u.cookie);
    } else if (a <= HRM_ADDR_SCHED0) {
        int32_t i = hrm_addr_sched_index(a);
        int64_t t0 = tick(s);
        rc = hrm_dsched_on_timer(s->sch[i], &s->sched_env[i].env, ev->u.cookie);
        s->st->sched_ns += (double)(tick(s) - t0);
        s->st->sched_calls++;
    }
    if (rc < 0)
        sim_core_fail(&s->k, rc, "timer of a role", NULL);
}

static void dispatch_event(void *arg, const struct sim_event *ev)
{
    struct dsim *s = arg;
    switch (ev->kind) {
    case EV_DELIVER:
        deliver(s, ev);
        break;
    case EV_TIMER:
        timer(s, ev);
        break;
    case EV_ARRIVAL:
        client_submit(s, ev->u.arg.a);
        break;
    case EV_EXEC_END:
        exec_end(s, ev->u.arg.a, (uint32_t)ev->u.arg.b);
        break;
    case EV_SAMPLE:
        sim_core_sample_roles(&s->k, s->running, s->arrived, s->done);
        break;
    default:
        break;
    }
}

/* ---- set-up and the loop ---- */

static int build(struct dsim *s, uint64_t seed)
{
    const struct hrm_cluster *c = s->c;
    s->exec = hrm_calloc((size_t)(s->wl->ntasks ? s->wl->ntasks : 1), sizeof(*s->exec));
    s->inst_of_job = hrm_calloc((size_t)(s->wl->njobs ? s->wl->njobs : 1), sizeof(int32_t));
    s->nego_env = sim_role_env(s, &s->k, HRM_ADDR_NEGOTIATOR, env_send);
    s->client_env = sim_role_env(s, &s->k, HRM_ADDR_CLIENT, env_send);
    if (s->su.ideal)
        return 0;
    s->nqs = hrm_calloc((size_t)c->nnodes, sizeof(*s->nqs));
    s->node_env = hrm_alloc((size_t)c->nnodes * sizeof(*s->node_env));
    for (int32_t n = 0; n < c->nnodes; n++) {
        s->node_env[n] = sim_role_env(s, &s->k, hrm_addr_node(n), env_send);
        s->nqs[n] = hrm_nqs_new(c, s->wl, n, &s->su.nqs, s->k.err);
        if (!s->nqs[n])
            return -HRM_ESPEC;
    }
    int32_t ni = s->su.instances;
    s->sch = hrm_calloc((size_t)ni, sizeof(*s->sch));
    s->sched_env = hrm_alloc((size_t)ni * sizeof(*s->sched_env));
    for (int32_t i = 0; i < ni; i++) {
        struct hrm_dsched_config sc = s->su.sched;
        sc.index = i;
        sc.nqs = &s->su.nqs;
        sc.seed = seed + (uint64_t)i;
        s->sched_env[i] = sim_role_env(s, &s->k, hrm_addr_sched(i), env_send);
        s->sch[i] = hrm_dsched_new(c, s->wl, &sc, s->k.err);
        if (!s->sch[i])
            return -HRM_ESPEC;
    }
    if (s->su.negotiator) {
        struct hrm_negotiator_config nc = s->su.nego;
        nc.nnodes = c->nnodes;
        nc.nqueues = s->su.nqs.queues ? s->su.nqs.nqueues : 1;
        s->nego = hrm_negotiator_new(&nc, s->k.err);
        if (!s->nego)
            return -HRM_ESPEC;
    }
    return 0;
}

static void collect(struct dsim *s)
{
    struct hrm_dsim_stats *st = s->st;
    st->instances = s->su.ideal ? 0 : s->su.instances;
    for (int32_t i = 0; s->sch && i < s->su.instances; i++) {
        const struct hrm_dsched_stats *d = hrm_dsched_stats(s->sch[i]);
        st->probes += d->probes;
        st->rounds += d->rounds;
        st->leftovers += d->leftovers;
        st->runs += d->runs;
        st->dels += d->dels;
        st->reservations += d->reservations;
        st->binds += d->binds;
        st->binds_empty += d->binds_empty;
    }
    for (int32_t n = 0; s->nqs && n < s->c->nnodes; n++) {
        const struct hrm_nqs_stats *q = hrm_nqs_stats(s->nqs[n]);
        st->holds_expired += q->holds_expired;
        st->rejected += q->rejected;
        st->preemptions += q->preemptions;
        st->migrate_requests += q->migrate_requests;
        st->migrated += q->migrated_in;
        st->parked += q->parked;
        st->pulls += q->pulls;
        st->refused += q->refused;
        st->adverts += q->adverts;
    }
    if (s->nego)
        st->matches = hrm_negotiator_stats(s->nego)->matches;
    if (s->nnwait > 0) {
        st->node_wait_mean_us = hrm_mean(s->nwait, s->nnwait);
        st->node_wait_p95_us = hrm_percentile(s->nwait, s->nnwait, 95);
    }
    s->rec->preemptions = st->preemptions;
}

static void teardown(struct dsim *s)
{
    for (int32_t n = 0; s->nqs && n < s->c->nnodes; n++)
        hrm_nqs_free(s->nqs[n]);
    for (int32_t i = 0; s->sch && i < s->su.instances; i++)
        hrm_dsched_free(s->sch[i]);
    hrm_free(s->nqs);
    hrm_free(s->node_env);
    hrm_free(s->sch);
    hrm_free(s->sched_env);
    hrm_negotiator_free(s->nego);
    hrm_free(s->exec);
    hrm_free(s->inst_of_job);
    hrm_free(s->nwait);
    sim_core_fini(&s->k);
}

int hrm_dsim_run_ex(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                    const struct hrm_params *params, const struct hrm_sim_config *cfg,
                    const struct hrm_dsim_options *opt, struct hrm_run_record *rec,
                    struct hrm_dsim_stats *stats, struct hrm_error *err)
{
    struct hrm_sim_config defaults = {0};
    struct hrm_dsim_stats local;
    if (!cfg)
        cfg = &defaults;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof(*stats));
    struct dsim s = {.c = c, .wl = wl, .opt = opt, .rec = rec, .st = stats};
    sim_core_init(&s.k, wl, cfg, rec, err);
    int rc = hrm_dsetup_parse(policy, params, c->net.latency_us, cfg->seed, &s.su, err);
    if (rc)
        return rc;
    rc = build(&s, cfg->seed);
    if (rc) {
        teardown(&s);
        return rc;
    }
    s.k.cap_cpu = c->total.v[HRM_DIM_CPU];
    sim_core_run_roles(&s.k, dispatch_event, &s);
    collect(&s);
    rc = s.k.rc;
    teardown(&s);
    return rc;
}

int hrm_dsim_run(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                 const struct hrm_params *params, const struct hrm_sim_config *cfg,
                 struct hrm_run_record *rec, struct hrm_error *err)
{
    return hrm_dsim_run_ex(c, wl, policy, params, cfg, NULL, rec, NULL, err);
}
