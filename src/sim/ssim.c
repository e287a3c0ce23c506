/* Shared-state simulator driver: the master, the instances, node executors, the client. */
#include <stddef.h>
#include <string.h>

#include "hrm/alloc.h"
#include "sim/driver.h"
#include "sim/ssim_private.h"

struct ssim {
    const struct hrm_cluster *c;
    const struct hrm_workload *wl;
    struct hrm_run_record *rec;
    struct hrm_ssim_stats *st;
    struct ssim_setup su;
    struct sim_core k;
    struct hrm_commit *master;
    struct sim_role_env master_env, client_env, exec_env;
    struct hrm_ssched **sch;
    struct sim_role_env *sched_env;
    /* A snapshot in flight to each instance: taken when the master replies,
     * handed over on delivery (what the wire would carry). */
    struct hrm_snapshot *staging;
    int32_t *inst_of_job;
    int64_t *job_delay; /* per job: longest ready -> commit of its tasks, -1 none */
    bool *running;      /* per task: the executor runs it */
    int32_t rr;
    int64_t nrunning, arrived, done;
};

/* ---- node executors: a launch runs for duration / speed, then reports ---- */

static int64_t ready_of(const struct ssim *s, int32_t task)
{
    int32_t job = s->wl->tasks[task].job;
    return hrm_ssched_ready_us(s->sch[s->inst_of_job[job]], task);
}

static void exec_launch(struct ssim *s, const struct hrm_msg *m)
{
    const struct hrm_task *t = &s->wl->tasks[m->task];
    if (s->running[m->task]) {
        sim_core_fail(&s->k, -HRM_ESTATE, "node", m);
        return;
    }
    sim_core_area_update(&s->k);
    s->running[m->task] = true;
    s->nrunning++;
    s->k.busy_cpu += t->req.v[HRM_DIM_CPU];
    s->k.busy_gpu += t->req.v[HRM_DIM_GPU];
    sim_core_first_start(&s->k, t->job);
    int64_t ready = ready_of(s, m->task);
    hrm_run_record_wait(s->rec, ready >= 0 ? s->k.now - ready : 0);
    struct sim_event ev = {.addr = -1};
    ev.u.arg.a = m->task;
    ev.u.arg.c = m->node;
    int64_t run = sim_core_exec_run_us(&s->k, t, s->c->nodes[m->node].cpu_speed);
    sim_core_push(&s->k, s->k.now + run, EV_EXEC_END, &ev);
}

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *m);

static void exec_end(struct ssim *s, int32_t task, int32_t node)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    sim_core_area_update(&s->k);
    s->running[task] = false;
    s->nrunning--;
    s->done++;
    s->k.busy_cpu -= t->req.v[HRM_DIM_CPU];
    s->k.busy_gpu -= t->req.v[HRM_DIM_GPU];
    s->rec->tasks_done++;
    struct hrm_msg m = {.type = HRM_MSG_TASK_END,
                        .from = hrm_addr_node(node),
                        .job = t->job,
                        .task = task,
                        .node = node,
                        .status = HRM_OUTCOME_DONE};
    env_send(&s->exec_env.env, HRM_ADDR_CENTRAL, &m);
}

/* ---- hrm_env ---- */

/* What the driver observes on the way: commits (scheduling delay) and the
 * cell as it is when the master answers a snapshot request. */
static void observe(struct ssim *s, hrm_addr from, hrm_addr to, const struct hrm_msg *m)
{
    if (from != HRM_ADDR_CENTRAL)
        return;
    if (m->type == HRM_MSG_SNAP_REPLY) {
        hrm_snapshot_sync(&s->staging[hrm_addr_sched_index(to)], hrm_commit_cell(s->master));
    } else if (m->type == HRM_MSG_TASK_LAUNCH) {
        int64_t ready = ready_of(s, m->task);
        if (ready >= 0) {
            int64_t d = s->k.now - ready;
            hrm_run_record_sched_latency(s->rec, d);
            if (d > s->job_delay[m->job])
                s->job_delay[m->job] = d;
        }
    }
}

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *m)
{
    struct sim_role_env *re = (struct sim_role_env *)env;
    struct ssim *s = re->s;
    observe(s, re->addr, to, m);
    /* hrm-central: the one instance lives in the master, no hop between them. */
    bool local = s->su.colocated && ((re->addr == HRM_ADDR_CENTRAL && to <= HRM_ADDR_SCHED0) ||
                                     (re->addr <= HRM_ADDR_SCHED0 && to == HRM_ADDR_CENTRAL));
    s->st->messages++;
    struct sim_event ev = {.addr = to};
    ev.u.msg = *m;
    sim_core_push(&s->k, s->k.now + (local ? 0 : s->c->net.latency_us), EV_DELIVER, &ev);
}

/* ---- the client ---- */

static int64_t instance_load(void *arg, int32_t i)
{
    return hrm_ssched_load(((struct ssim *)arg)->sch[i]);
}

/* A job registers with the least busy instance (ties: the next in turn), or
 * in plain turn with register=1. */
static void client_submit(struct ssim *s, int32_t job)
{
    s->rec->jobs[job].submit_us = s->k.now;
    s->arrived += s->wl->jobs[job].ntasks;
    int32_t pick =
        sim_core_pick_instance(s->su.instances, &s->rr, s->su.register_rr, instance_load, s);
    s->inst_of_job[job] = pick;
    struct hrm_msg m = {
        .type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = job, .task = -1, .node = -1};
    env_send(&s->client_env.env, hrm_addr_sched(pick), &m);
}

static void client_on_msg(struct ssim *s, const struct hrm_msg *m)
{
    if (m->type == HRM_MSG_JOB_END)
        sim_core_client_job_end(&s->k, m);
}

/* ---- dispatch ---- */

static void deliver(struct ssim *s, const struct sim_event *ev)
{
    const struct hrm_msg *m = &ev->u.msg;
    hrm_addr a = ev->addr;
    int rc = 0;
    if (a == HRM_ADDR_CENTRAL) {
        if ((rc = hrm_commit_on_msg(s->master, &s->master_env.env, m)) < 0)
            sim_core_fail(&s->k, rc, "master", m);
    } else if (a >= HRM_ADDR_NODE0) {
        if (m->type == HRM_MSG_TASK_LAUNCH)
            exec_launch(s, m);
    } else if (a <= HRM_ADDR_SCHED0) {
        int32_t i = hrm_addr_sched_index(a);
        rc = m->type == HRM_MSG_SNAP_REPLY
                 ? hrm_ssched_on_snapshot(s->sch[i], &s->sched_env[i].env, m, &s->staging[i])
                 : hrm_ssched_on_msg(s->sch[i], &s->sched_env[i].env, m);
        if (rc < 0)
            sim_core_fail(&s->k, rc, "scheduler", m);
    } else if (a == HRM_ADDR_CLIENT) {
        client_on_msg(s, m);
    }
}

static void dispatch_event(void *arg, const struct sim_event *ev)
{
    struct ssim *s = arg;
    switch (ev->kind) {
    case EV_DELIVER:
        deliver(s, ev);
        break;
    case EV_TIMER:
        if (ev->addr <= HRM_ADDR_SCHED0) {
            int32_t i = hrm_addr_sched_index(ev->addr);
            int rc = hrm_ssched_on_timer(s->sch[i], &s->sched_env[i].env, ev->u.cookie);
            if (rc < 0)
                sim_core_fail(&s->k, rc, "scheduler", NULL);
        }
        break;
    case EV_ARRIVAL:
        client_submit(s, ev->u.arg.a);
        break;
    case EV_EXEC_END:
        exec_end(s, ev->u.arg.a, ev->u.arg.c);
        break;
    case EV_SAMPLE:
        sim_core_sample_roles(&s->k, s->nrunning, s->arrived, s->done);
        break;
    default:
        break;
    }
}

/* ---- set-up, the loop, the figures ---- */

static int build(struct ssim *s)
{
    const struct hrm_cluster *c = s->c;
    size_t nt = (size_t)(s->wl->ntasks ? s->wl->ntasks : 1);
    size_t nj = (size_t)(s->wl->njobs ? s->wl->njobs : 1);
    s->running = hrm_calloc(nt, sizeof(*s->running));
    s->inst_of_job = hrm_calloc(nj, sizeof(*s->inst_of_job));
    s->job_delay = hrm_alloc(nj * sizeof(*s->job_delay));
    for (size_t j = 0; j < nj; j++)
        s->job_delay[j] = -1;
    s->master_env = sim_role_env(s, &s->k, HRM_ADDR_CENTRAL, env_send);
    s->client_env = sim_role_env(s, &s->k, HRM_ADDR_CLIENT, env_send);
    s->exec_env =
        sim_role_env(s, &s->k, HRM_ADDR_NODE0, env_send); /* a task end names its node in from */
    s->master = hrm_commit_new(c, s->wl, &s->su.commit, s->k.err);
    if (!s->master)
        return -HRM_ESPEC;
    int32_t ni = s->su.instances;
    s->sch = hrm_calloc((size_t)ni, sizeof(*s->sch));
    s->sched_env = hrm_alloc((size_t)ni * sizeof(*s->sched_env));
    s->staging = hrm_calloc((size_t)ni, sizeof(*s->staging));
    for (int32_t i = 0; i < ni; i++) {
        struct hrm_ssched_config sc = s->su.sched;
        sc.index = i;
        sc.seed = s->su.sched.seed + (uint64_t)i;
        s->sched_env[i] = sim_role_env(s, &s->k, hrm_addr_sched(i), env_send);
        hrm_snapshot_init(&s->staging[i], c->nnodes);
        s->sch[i] = hrm_ssched_new(c, s->wl, &sc, s->k.err);
        if (!s->sch[i])
            return -HRM_ESPEC;
    }
    return 0;
}

static void delays(struct ssim *s)
{
    struct hrm_ssim_stats *st = s->st;
    size_t nj = (size_t)s->wl->njobs, n = 0, nb = 0, ns = 0, nstart = 0;
    double *all = hrm_alloc((nj ? nj : 1) * sizeof(double));
    double *start = hrm_alloc((nj ? nj : 1) * sizeof(double));
    double bsum = 0, ssum = 0;
    for (size_t j = 0; j < nj; j++) {
        bool stream = s->wl->jobs[j].kind == HRM_JOB_STREAM;
        const struct hrm_job_record *jr = &s->rec->jobs[j];
        if (stream && jr->first_start_us >= 0)
            start[nstart++] = (double)(jr->first_start_us - jr->submit_us) / 1e6;
        if (s->job_delay[j] < 0)
            continue;
        double d = (double)s->job_delay[j] / 1e6;
        all[n++] = d;
        if (stream) {
            ssum += d;
            ns++;
        } else {
            bsum += d;
            nb++;
        }
    }
    st->delay_mean_s = hrm_mean(all, n);
    st->delay_p95_s = hrm_percentile(all, n, 95);
    st->batch_delay_mean_s = nb ? bsum / (double)nb : 0;
    st->stream_delay_mean_s = ns ? ssum / (double)ns : 0;
    st->stream_jobs = (int32_t)nstart;
    st->stream_start_mean_s = hrm_mean(start, nstart);
    st->stream_start_p95_s = hrm_percentile(start, nstart, 95);
    hrm_free(all);
    hrm_free(start);
}

static void collect(struct ssim *s)
{
    struct hrm_ssim_stats *st = s->st;
    st->instances = s->su.instances;
    for (int32_t i = 0; s->sch && i < s->su.instances && s->sch[i]; i++) {
        const struct hrm_ssched_stats *d = hrm_ssched_stats(s->sch[i]);
        st->txns += d->txns;
        st->txns_locked += d->txns_locked;
        st->txns_empty += d->txns_empty;
        st->txns_conflicted += d->txns_conflicted;
        st->claims += d->claims;
        st->committed += d->committed;
        st->conflicts += d->conflicts;
        st->conflicts_stream += d->conflicts_stream;
        st->retries += d->retries;
        st->waits += d->waits;
        st->fair_capped += d->fair_capped;
        st->decision_s += (double)d->decision_us / 1e6;
    }
    if (s->master) {
        const struct hrm_commit_stats *m = hrm_commit_stats(s->master);
        st->conflicts_stale = m->conflicts_stale;
        st->locked_bounced = m->locked_bounced;
        st->lock_grants = m->lock_grants;
        st->lock_waits = m->lock_waits;
        st->txns_deferred = m->txns_deferred;
        st->syncs = m->syncs;
    }
    st->conflict_rate = st->claims ? (double)st->conflicts / (double)st->claims : 0;
    int64_t with_claims = st->txns - st->txns_empty;
    st->txn_conflict_fraction =
        with_claims > 0 ? (double)st->txns_conflicted / (double)with_claims : 0;
    delays(s);
}

static void teardown(struct ssim *s)
{
    for (int32_t i = 0; s->sch && i < s->su.instances; i++) {
        hrm_ssched_free(s->sch[i]);
        hrm_snapshot_fini(&s->staging[i]);
    }
    hrm_free(s->sch);
    hrm_free(s->sched_env);
    hrm_free(s->staging);
    hrm_commit_free(s->master);
    hrm_free(s->running);
    hrm_free(s->inst_of_job);
    hrm_free(s->job_delay);
    sim_core_fini(&s->k);
}

int hrm_ssim_run_ex(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                    const struct hrm_params *params, const struct hrm_sim_config *cfg,
                    struct hrm_run_record *rec, struct hrm_ssim_stats *stats, struct hrm_error *err)
{
    struct hrm_sim_config defaults = {0};
    struct hrm_ssim_stats local;
    if (!cfg)
        cfg = &defaults;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof(*stats));
    struct ssim s = {.c = c, .wl = wl, .rec = rec, .st = stats};
    sim_core_init(&s.k, wl, cfg, rec, err);
    int rc = ssim_setup_parse(policy, params, cfg->seed, &s.su, err);
    if (rc)
        return rc;
    rc = build(&s);
    if (rc) {
        teardown(&s);
        return rc;
    }
    s.k.cap_cpu = c->total.v[HRM_DIM_CPU];
    s.k.cap_gpu = c->total.v[HRM_DIM_GPU];
    sim_core_run_roles(&s.k, dispatch_event, &s);
    collect(&s);
    rc = s.k.rc;
    teardown(&s);
    return rc;
}

int hrm_ssim_run(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                 const struct hrm_params *params, const struct hrm_sim_config *cfg,
                 struct hrm_run_record *rec, struct hrm_error *err)
{
    return hrm_ssim_run_ex(c, wl, policy, params, cfg, rec, NULL, err);
}
