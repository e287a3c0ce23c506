/* FGM (P2) in the master: the estimator kept across rebuilds and in the store, tasks' CPU compressed on their agents, Alg. 3's modes logged. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/fgm.h"
#include "hrm/log.h"
#include "master_private.h"

/*
 * The policy is rebuilt whenever jobs arrive, so the estimator lives here:
 * taken from the first build of an FGM policy, lent to every later one, fed by
 * the master under estimator slots that belong to a run for its whole life
 * (the scheduler's task numbers change at each rebuild), and each profile it
 * updates is written to the store in the turn's transaction.
 */

/* A node over-committed by estimate by less than this share of its cores is
 * left alone: rounding of estimates is no reason to throttle tasks. */
#define COMPRESS_SLACK 0.02
/* No task is throttled below this (milli-cores): it must still make progress. */
#define MIN_CPU_MILLI 10

uint32_t fgm_task_logic(const struct rjob *j, int32_t group)
{
    const json_t *g = json_array_get(json_object_get(j->spec, "tasks"), (size_t)group);
    const json_t *cmd = json_object_get(g, "cmd");
    size_t n = json_array_size(cmd);
    const char **argv = hrm_alloc((n ? n : 1) * sizeof(*argv));
    for (size_t i = 0; i < n; i++)
        argv[i] = json_string_value(json_array_get(cmd, i)) ?: "";
    uint32_t logic = hrm_est_logic_of_command(argv, n);
    hrm_free(argv);
    return logic;
}

static struct hrm_est_key key_of(const struct rjob *j, int32_t idx)
{
    /* The runtime's tasks read no blocks: input class 0, as hrm_est_key_of gives the policy. */
    return (struct hrm_est_key){.logic = fgm_task_logic(j, j->tasks[idx].group)};
}

static int load_one(void *arg, const char *line)
{
    struct hrm_est_key k;
    struct hrm_est_profile p;
    struct hrm_error err;
    if (hrm_est_parse_line(line, &k, &p, &err) < 0) {
        /* One damaged row costs its own profile, not the others nor the master. */
        hrm_log(HRM_LOG_WARNING, "store: estimates: %s; skipped", err.text);
        return 0;
    }
    hrm_est_put(arg, &k, &p);
    return 0;
}

void fgm_attach(struct master *m, struct hrm_policy *policy)
{
    struct mfgm *f = &m->fgm;
    f->nmodes = 0; /* a new policy starts its conformity windows afresh */
    if (f->est) {
        hrm_fgm_lend_estimator(policy, f->est);
        return;
    }
    if (!(f->est = hrm_fgm_take_estimator(policy)))
        return; /* not FGM: nothing learns */
    struct hrm_error err;
    if (hrm_store_load_estimates(m->store, load_one, f->est, &err) < 0)
        hrm_log(HRM_LOG_WARNING, "%s: FGM starts without its history", err.text);
    hrm_log(HRM_LOG_INFO, "FGM history: %d similar-task profiles from the store",
            hrm_est_count(f->est));
}

void fgm_free(struct master *m)
{
    hrm_est_free(m->fgm.est);
    hrm_free(m->fgm.free_slots);
    hrm_free(m->fgm.modes);
    m->fgm = (struct mfgm){0};
}

static int32_t slot_of(struct mfgm *f, struct rtask *t)
{
    if (t->est_slot == 0) {
        if (f->nfree > 0)
            t->est_slot = f->free_slots[--f->nfree];
        else
            t->est_slot = ++f->nslots;
    }
    return t->est_slot - 1;
}

static void slot_release(struct mfgm *f, struct rtask *t)
{
    if (t->est_slot == 0)
        return;
    HRM_GROW(f->free_slots, f->cap_free, f->nfree + 1);
    f->free_slots[f->nfree++] = t->est_slot;
    t->est_slot = 0;
}

int64_t fgm_demand(int64_t use_milli, int64_t wait_us, int64_t interval_us, int64_t cores)
{
    if (wait_us <= 0 || interval_us <= 0)
        return use_milli;
    /* A runnable process either runs or waits on a run queue: on a busy host its use
     * understates its demand by the time it waited. */
    if (wait_us > interval_us)
        wait_us = interval_us;
    int64_t demand = use_milli + (wait_us * 1000 + interval_us / 2) / interval_us;
    return demand < cores * 1000 ? demand : cores * 1000;
}

void fgm_sample(struct master *m, struct rjob *j, int32_t idx, const struct hrm_usage *u,
                int64_t wait_us)
{
    struct rtask *t = &j->tasks[idx];
    if (u->cpu > t->cpu_peak)
        t->cpu_peak = u->cpu;
    struct mfgm *f = &m->fgm;
    if (!f->est)
        return;
    hrm_est_sample(f->est, slot_of(f, t), t->attempt,
                   &(struct hrm_est_sample){.interval_us = u->interval_us,
                                            .cpu = fgm_demand(u->cpu, wait_us, u->interval_us,
                                                              m->nodes[t->node].cores),
                                            .mem = u->mem,
                                            .compressed = t->cpu_limit > 0});
}

void fgm_task_end(struct master *m, struct rjob *j, int32_t idx, bool ok)
{
    struct mfgm *f = &m->fgm;
    struct rtask *t = &j->tasks[idx];
    t->cpu_limit = 0; /* its cgroup is gone with it */
    if (!f->est || t->est_slot == 0)
        return;
    struct hrm_est_key k = key_of(j, idx);
    hrm_est_task_end(f->est, t->est_slot - 1, t->attempt, ok, &k, 1.0);
    slot_release(f, t);
    const struct hrm_est_profile *p = ok ? hrm_est_lookup(f->est, &k) : NULL;
    if (!p)
        return;
    char line[HRM_EST_LINE_MAX];
    hrm_est_format_line(&k, p, line, sizeof(line));
    struct hrm_error err;
    int rc = hrm_store_put_estimate(m->store, k.logic, k.input_class, line, &err);
    if (rc < 0)
        master_store_failed(m, rc, &err);
    else
        hrm_log(HRM_LOG_DEBUG, "FGM learned from task " HRM_TASK_FMT ": %s",
                HRM_TASK_ARGS(j->id, idx, t->attempt), line);
}

static json_t *estimate_json(const struct master *m, const struct rjob *j, int32_t idx)
{
    if (!m->fgm.est)
        return json_null();
    struct hrm_est_key k = key_of(j, idx);
    const struct hrm_est_profile *p = hrm_est_lookup(m->fgm.est, &k);
    if (!p)
        return json_null();
    int64_t cpu = 0, mem = 0;
    for (int32_t s = 0; s < p->nstages; s++) {
        cpu = p->stage[s].cpu > cpu ? p->stage[s].cpu : cpu;
        mem = p->stage[s].mem > mem ? p->stage[s].mem : mem;
    }
    return json_pack("{s:I, s:I, s:I, s:i}", "cpu", (json_int_t)cpu, "mem", (json_int_t)mem,
                     "duration_us", (json_int_t)p->duration_us, "runs", p->nobs);
}

void fgm_task_json(const struct master *m, const struct rjob *j, int32_t idx, json_t *o)
{
    const struct rtask *t = &j->tasks[idx];
    const struct hrm_res *req = &j->greq[t->group];
    json_object_set_new(o, "request", json_pack("{s:I, s:I}", "cpu",
                                                (json_int_t)req->v[HRM_DIM_CPU], "mem",
                                                (json_int_t)req->v[HRM_DIM_MEM]));
    json_object_set_new(o, "estimate", estimate_json(m, j, idx));
    json_object_set_new(o, "cpu_peak", json_integer(t->cpu_peak));
    if (t->cpu_limit > 0 && t->state == HRM_RTASK_RUNNING)
        json_object_set_new(o, "cpu_limit", json_integer(t->cpu_limit));
}

/* ---- what the scheduler's rebuilds must keep ---- */

void fgm_launched(struct master *m, struct rjob *j, int32_t idx, int32_t task)
{
    struct rtask *t = &j->tasks[idx];
    t->cpu_limit = 0; /* a new run starts with its request */
    t->charge_cpu = t->charge_mem = 0;
    const struct hrm_state *st = hrm_central_state(m->sched.central);
    const struct hrm_res *held = hrm_state_held(st, task), *req = &j->greq[t->group];
    if (held->v[HRM_DIM_CPU] != req->v[HRM_DIM_CPU] || held->v[HRM_DIM_MEM] != req->v[HRM_DIM_MEM]) {
        t->charge_cpu = held->v[HRM_DIM_CPU];
        t->charge_mem = held->v[HRM_DIM_MEM];
    }
}

int fgm_restore_start(struct hrm_state *st, int32_t task, const struct rjob *j,
                      const struct rtask *rt)
{
    if (rt->charge_cpu == 0 && rt->charge_mem == 0)
        return hrm_state_start(st, task, rt->node, rt->gpu_mask, rt->start_us);
    /* FGM placed it by estimate: charged by request now, a node FGM packed would not hold its
     * own tasks, and the rebuild would stop them. */
    struct hrm_res charge = j->greq[rt->group];
    charge.v[HRM_DIM_CPU] = rt->charge_cpu;
    charge.v[HRM_DIM_MEM] = rt->charge_mem;
    return hrm_state_start_charged(st, task, rt->node, rt->gpu_mask, &charge, rt->start_us);
}

void fgm_after_task_end(struct master *m, struct rjob *j, int32_t idx)
{
    struct rtask *t = &j->tasks[idx];
    if (m->fgm.est && t->sched >= 0)
        t->by_request = hrm_fgm_by_request(m->sched.policy, t->sched);
}

void fgm_restore_retries(struct master *m, struct hrm_policy *policy)
{
    const struct msched *s = &m->sched;
    if (!m->fgm.est)
        return;
    const struct hrm_state *st = hrm_central_state(s->central);
    for (int32_t t = 0; t < s->wl->ntasks; t++) {
        const struct rjob *j = s->map.job_of[s->wl->tasks[t].job];
        if (j->tasks[s->map.task_of[t]].by_request)
            hrm_fgm_set_by_request(policy, st, t);
    }
}

/* ---- compression ---- */

int64_t fgm_cpu_limit(int64_t request, int64_t total_charge, int64_t capacity)
{
    if (request <= 0 || capacity <= 0 ||
        (double)total_charge <= (double)capacity * (1 + COMPRESS_SLACK))
        return 0;
    /* As the simulator's fluid model (src/sim/compress.c): every process gets the same share
     * 1 - r_c = capacity / demand of its demand.  Its demand is bounded by its request, not
     * by its estimate: an estimate learned on a busy host understates it, and a quota on it
     * would hold the task there when the host frees up. */
    int64_t limit = (int64_t)floor((double)request * (double)capacity / (double)total_charge);
    return limit < MIN_CPU_MILLI ? MIN_CPU_MILLI : limit;
}

static void send_cpu(struct master *m, struct rjob *j, int32_t idx, int64_t limit)
{
    struct rtask *t = &j->tasks[idx];
    int64_t request = j->greq[t->group].v[HRM_DIM_CPU];
    json_t *c = hrm_wire_new(HRM_WIRE_TASK_CPU);
    json_object_set_new(c, "job", json_integer(j->id));
    json_object_set_new(c, "task", json_integer(idx));
    json_object_set_new(c, "attempt", json_integer(t->attempt));
    json_object_set_new(c, "cpu", json_integer(limit > 0 ? limit : request));
    json_object_set_new(c, "compressed", json_boolean(limit > 0));
    master_send_node(m, t->node, c);
    hrm_log(HRM_LOG_INFO, "task " HRM_TASK_FMT " on %s: cpu %s %lld milli-cores (request %lld)",
            HRM_TASK_ARGS(j->id, idx, t->attempt), m->nodes[t->node].name,
            limit > 0 ? "compressed to" : "released to", (long long)(limit > 0 ? limit : request),
            (long long)request);
    t->cpu_limit = limit;
}

/* Each node's tasks, charged by estimate, against its cores: over them (FGM compressed, Alg. 2
 * with r_c > 0), every task's quota (its request) shrinks by the same share; back under them,
 * each gets its request again.  Foreign load is not a reason to throttle: FGM places around it, and the
 * kernel shares the cpu with it. */
static void compress_nodes(struct master *m, const struct hrm_state *st)
{
    struct msched *s = &m->sched;
    for (int32_t n = 0; n < m->nnodes && n < st->cluster->nnodes; n++) {
        if (!m->nodes[n].up || !m->nodes[n].task_cpu)
            continue;
        int64_t total = 0;
        for (int32_t t = st->nodes[n].run_head; t >= 0; t = st->tasks[t].next)
            total += hrm_state_held(st, t)->v[HRM_DIM_CPU];
        int64_t cap = st->cluster->nodes[n].capacity.v[HRM_DIM_CPU];
        for (int32_t t = st->nodes[n].run_head; t >= 0; t = st->tasks[t].next) {
            struct rjob *j = s->map.job_of[s->wl->tasks[t].job];
            int32_t idx = s->map.task_of[t];
            struct rtask *rt = &j->tasks[idx];
            if (rt->state != HRM_RTASK_RUNNING || rt->node != n)
                continue;
            int64_t limit = fgm_cpu_limit(j->greq[rt->group].v[HRM_DIM_CPU], total, cap);
            /* Small moves of the share are not worth a message and a cgroup write. */
            if (limit == rt->cpu_limit ||
                (limit > 0 && rt->cpu_limit > 0 && llabs(limit - rt->cpu_limit) * 20 < limit))
                continue;
            send_cpu(m, j, idx, limit);
        }
    }
}

/* Alg. 3: a node's mode changes with its conformity; say so, with the figure. */
static void log_modes(struct master *m)
{
    struct mfgm *f = &m->fgm;
    if (f->nmodes < m->nnodes) {
        f->modes = hrm_realloc(f->modes, (size_t)m->nnodes * sizeof(*f->modes));
        for (int32_t n = f->nmodes; n < m->nnodes; n++)
            f->modes[n] = NULL;
        f->nmodes = m->nnodes;
    }
    for (int32_t n = 0; n < m->nnodes; n++) {
        const char *mode;
        double conformity;
        if (!hrm_fgm_node_mode(m->sched.policy, n, &mode, &conformity) || mode == f->modes[n])
            continue;
        if (f->modes[n])
            hrm_log(HRM_LOG_INFO, "FGM: node %s goes from %s to %s (conformity %.4f)",
                    m->nodes[n].name, f->modes[n], mode, conformity);
        f->modes[n] = mode;
    }
}

void fgm_after_pass(struct master *m)
{
    const struct msched *s = &m->sched;
    if (!m->fgm.est || !s->central || m->dist)
        return;
    log_modes(m);
    compress_nodes(m, hrm_central_state(s->central));
}
