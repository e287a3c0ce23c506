/* Simulator driver: event loop, simulated clients and node executors around the central scheduling
 * role. */
#include <math.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/central.h"
#include "hrm/dsim.h"
#include "hrm/net.h"
#include "hrm/rng.h"
#include "hrm/sim.h"
#include "hrm/ssim.h"
#include "compress.h"
#include "gpuphase.h"
#include "memspill.h"
#include "driver.h"

enum exec_state { EXEC_IDLE, EXEC_TRANSFER, EXEC_COMPUTE };

/* What a simulated node agent knows about one task it runs. */
struct exec {
    int32_t attempt;
    int32_t node;
    int32_t pending; /* input transfers not done yet */
    uint8_t state;   /* enum exec_state */
    uint8_t reading; /* a pooled task holds its memory in the model while reading */
    uint8_t has_input; /* a killed attempt had read the input and the run keeps it */
    uint32_t gpu_mask;
    int64_t compute_at; /* when the current attempt started computing (plain path) */
    int64_t done_us;    /* compute progress kept from killed attempts, in duration units */
};

struct sim {
    const struct hrm_cluster *c;
    const struct hrm_workload *wl;
    const struct hrm_sim_config *cfg;
    struct hrm_run_record *rec;
    struct hrm_rng rng; /* execution randomness: failures */
    struct sim_core k;  /* time, events, client, utilisation (driver.h) */
    struct hrm_central *central;
    struct hrm_env env;
    struct hrm_net *net;
    uint64_t net_gen;
    int64_t net_at; /* time of the queued network event, or -1 */
    struct exec *exec;
    int32_t *flow_of_block; /* active transfer per input block, -1 if none */
    int32_t *task_of_block; /* the task that reads each block */
    bool *node_down;
    double *speed; /* nodes' cpu_speed, dense: read at every task start */
    /* P2 execution model (compress.c), NULL when no task uses it */
    struct cmp_model *cmp;
    uint64_t cmp_gen;
    int64_t cmp_at;         /* time of the queued model event, or -1 */
    int64_t cmp_idle_ticks; /* model steps in a row with nothing else going on */
    double pool_cpu;        /* cpu the model's tasks receive (they are not in busy_cpu) */
    /* P0 GPU phase model (gpuphase.c), NULL when no task has GPU phases */
    struct gp_model *gp;
    uint64_t gp_gen;
    int64_t gp_at;   /* time of the queued model event, or -1 */
    int64_t pool_at; /* pool_cpu is integrated into the record up to here */
    /* P3 memory model (memspill.c), NULL when no task has a working set */
    struct mem_model *mem;
};

/* ---- events ---- */

static void push(struct sim *s, int64_t t, enum sim_event_kind kind, struct sim_event *ev)
{
    sim_core_push(&s->k, t, kind, ev);
}

static void push_arg(struct sim *s, int64_t t, enum sim_event_kind kind, int32_t a, int32_t b,
                     int32_t c)
{
    struct sim_event ev = {.addr = -1};
    ev.u.arg.a = a;
    ev.u.arg.b = b;
    ev.u.arg.c = c;
    push(s, t, kind, &ev);
}

static void send_msg(struct sim *s, hrm_addr to, const struct hrm_msg *m)
{
    struct sim_event ev = {.addr = to};
    ev.u.msg = *m;
    push(s, s->k.now + s->c->net.latency_us, EV_DELIVER, &ev);
}

/* ---- hrm_env for the central role ---- */

static int64_t env_now(struct hrm_env *env)
{
    return ((struct sim *)env->ctx)->k.now;
}

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *m)
{
    struct sim *s = env->ctx;
    /* Scheduling latency: from a task becoming ready to the scheduler's
     * launch decision (queue wait adds the trip to the node). */
    if (m->type == HRM_MSG_TASK_LAUNCH)
        hrm_run_record_sched_latency(
            s->rec, s->k.now - hrm_central_state(s->central)->tasks[m->task].ready_us);
    send_msg(s, to, m);
}

static void env_timer(struct hrm_env *env, int64_t at_us, uint64_t cookie)
{
    struct sim *s = env->ctx;
    struct sim_event ev = {.addr = HRM_ADDR_CENTRAL};
    ev.u.cookie = cookie;
    push(s, at_us, EV_TIMER, &ev);
}

/* ---- utilisation ---- */

static void area_update(struct sim *s)
{
    sim_core_area_update(&s->k);
}

/* The cpu the execution model's tasks receive, integrated apart from
 * busy_cpu so that area_update, on every start and end, stays as it was. */
static void pool_update(struct sim *s)
{
    if (s->rec->first_start_us >= 0 && s->pool_cpu != 0)
        s->rec->cpu_area += s->pool_cpu * (double)(s->k.now - s->pool_at);
    s->pool_at = s->k.now;
}

/* busy_change when the execution model exists: pooled tasks count the cpu
 * they receive (cmp_hook_busy); the others hold their request, which the
 * model leaves out of the share it divides. */
static __attribute__((noinline)) void busy_change_model(struct sim *s, int32_t task,
                                                        uint32_t gpu_mask, int sign)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    if (!cmp_pooled(s->cmp, task)) {
        cmp_reserve(s->cmp, s->k.now, s->exec[task].node, &t->req, sign);
        s->k.busy_cpu += sign * t->req.v[HRM_DIM_CPU];
    }
    if (!gp_owns(s->gp, s->wl, task))
        s->k.busy_gpu += gpu_mask ? sign * __builtin_popcount(gpu_mask) : 0;
}

static void busy_change(struct sim *s, int32_t task, uint32_t gpu_mask, int sign)
{
    area_update(s);
    if (__builtin_expect(s->cmp != NULL, 0)) {
        busy_change_model(s, task, gpu_mask, sign);
        return;
    }
    s->k.busy_cpu += sign * s->wl->tasks[task].req.v[HRM_DIM_CPU];
    if (gpu_mask && !gp_owns(s->gp, s->wl, task)) /* phased: counted while kernels run */
        s->k.busy_gpu += sign * __builtin_popcount(gpu_mask);
}

/* ---- node executors ---- */

static void net_schedule(struct sim *s)
{
    int64_t t = hrm_net_next_completion(s->net);
    if (t == INT64_MAX || t == s->net_at)
        return;
    /* A newer event supersedes the queued one, which is then ignored. */
    s->net_gen++;
    s->net_at = t;
    struct sim_event ev = {.addr = -1};
    ev.u.cookie = s->net_gen;
    push(s, t, EV_NET, &ev);
}

/* Queues one event for the execution model's next step, like net_schedule. */
static void cmp_schedule(struct sim *s)
{
    if (!s->cmp)
        return;
    /* Usage ticks and foreign load go on only while there is work, or work
     * to come: otherwise a run whose tasks never finish would never end.
     * With tasks waiting and nothing else going on, a few reports let a
     * policy that waits for them act; foreign load may free a node later. */
    const struct hrm_state *st = hrm_central_state(s->central);
    if (!cmp_active(s->cmp) && s->k.pending_other == 0 &&
        (st->nready == 0 || s->cmp_idle_ticks > (cmp_has_background(s->cmp) ? 100000 : 3)))
        return;
    int64_t t = cmp_next(s->cmp);
    if (t == INT64_MAX || t == s->cmp_at)
        return;
    s->cmp_gen++;
    s->cmp_at = t;
    struct sim_event ev = {.addr = -1};
    ev.u.cookie = s->cmp_gen;
    push(s, t, EV_COMPRESS, &ev);
}

/* Queues one event for the GPU phase model's next step, like net_schedule. */
static void gp_schedule(struct sim *s)
{
    int64_t t = s->gp ? gp_next(s->gp) : INT64_MAX;
    if (t == INT64_MAX || t == s->gp_at)
        return;
    s->gp_gen++;
    s->gp_at = t;
    struct sim_event ev = {.addr = -1};
    ev.u.cookie = s->gp_gen;
    push(s, t, EV_GPUPHASE, &ev);
}

/* Stops whatever the executor is doing for task (kill, node failure). */
static void exec_abort(struct sim *s, int32_t task)
{
    struct exec *e = &s->exec[task];
    if (e->state == EXEC_IDLE)
        return;
    if (s->cmp && e->state == EXEC_COMPUTE && cmp_pooled(s->cmp, task)) {
        cmp_remove(s->cmp, s->k.now, task);
        cmp_schedule(s);
    }
    if (e->state == EXEC_COMPUTE && gp_owns(s->gp, s->wl, task)) {
        gp_remove(s->gp, s->k.now, task);
        gp_schedule(s);
    }
    if (e->reading) {
        e->reading = 0;
        cmp_reading(s->cmp, s->k.now, task, e->node, -1);
    }
    const struct hrm_task *t = &s->wl->tasks[task];
    bool net_changed = false;
    for (int32_t b = 0; b < t->nblocks; b++) {
        int32_t *flow = &s->flow_of_block[t->block_first + b];
        if (*flow >= 0) {
            hrm_net_cancel(s->net, s->k.now, *flow);
            *flow = -1;
            net_changed = true;
        }
    }
    busy_change(s, task, e->gpu_mask, -1);
    if (__builtin_expect(s->mem != NULL, 0))
        mem_release(s->mem, task);
    e->state = EXEC_IDLE;
    e->attempt = -1; /* its pending EV_EXEC_END becomes stale */
    if (net_changed)
        net_schedule(s);
}

static void exec_compute(struct sim *s, int32_t task)
{
    struct exec *e = &s->exec[task];
    const struct hrm_task *t = &s->wl->tasks[task];
    double speed = s->speed[e->node];
    int64_t run = (int64_t)((double)(t->duration_us - e->done_us) / speed + 0.5); /* >= 0 */
    /* execution.task_overhead: on the plain path the task's process starts before it computes. */
    int64_t overhead = hrm_execution_task_overhead_us(s->cfg->execution);
    e->compute_at = s->k.now;
    /* P3: the time its spill to the disk takes, for tasks whose end is timed here. */
    if (__builtin_expect(s->mem != NULL, 0) && !(s->gp && gp_owns(s->gp, s->wl, task)) &&
        !(s->cmp && cmp_pooled(s->cmp, task)))
        run += mem_spill_us(s->mem, task, e->node);
    int fail = 0;
    const struct hrm_faults *f = s->cfg->faults;
    double fail_at = 0;
    if (f && f->task_fail_prob > 0 && hrm_rng_double(&s->rng) < f->task_fail_prob) {
        fail = 1;
        fail_at = hrm_rng_double(&s->rng);
        run = (int64_t)((double)run * fail_at);
    }
    e->state = EXEC_COMPUTE;
    if (__builtin_expect(s->gp != NULL, 0) && gp_owns(s->gp, s->wl, task)) {
        /* P0: phases on its GPU, shared with the tasks stacked there. */
        int32_t gpu = e->gpu_mask ? __builtin_ctz(e->gpu_mask) : 0;
        gp_start(s->gp, s->k.now, task, e->attempt, e->node, gpu, speed, fail ? fail_at : 0);
        gp_schedule(s);
        return;
    }
    if (__builtin_expect(s->cmp != NULL, 0) && cmp_pooled(s->cmp, task)) {
        if (e->reading) {
            e->reading = 0;
            cmp_reading(s->cmp, s->k.now, task, e->node, -1);
        }
        /* Progress depends on the node's load: the model times the end. */
        cmp_start(s->cmp, s->k.now, task, e->attempt, e->node, fail ? fmax(fail_at, 1e-9) : 0);
        cmp_schedule(s);
        return;
    }
    e->compute_at = s->k.now + overhead;
    push_arg(s, s->k.now + overhead + run, EV_EXEC_END, task, e->attempt, fail);
}

/* The replica to read: local, else in the rack, else any; the first listed
 * wins a tie so the choice is deterministic.  Replicas on down nodes are skipped. */
static int32_t pick_replica(const struct sim *s, const struct hrm_block *b, int32_t node)
{
    int32_t best = -1;
    enum hrm_locality best_loc = HRM_CROSS;
    for (int32_t r = 0; r < b->nreplicas; r++) {
        int32_t src = b->replicas[r];
        if (s->node_down[src])
            continue;
        enum hrm_locality loc = hrm_net_locality(s->c, src, node);
        if (best < 0 || loc < best_loc) {
            best = src;
            best_loc = loc;
        }
    }
    return best;
}

static void node_launch(struct sim *s, int32_t node, const struct hrm_msg *m)
{
    if (s->node_down[node])
        return; /* the central learns of the failure by NODE_DOWN and requeues */
    int32_t task = m->task;
    struct exec *e = &s->exec[task];
    exec_abort(s, task); /* a stale run of the same task (kill still in flight) */
    e->attempt = m->attempt;
    e->gpu_mask = m->gpu_mask;
    e->pending = 0;
    e->state = EXEC_TRANSFER;
    e->node = node;
    if (s->rec->first_start_us < 0) {
        s->rec->first_start_us = s->k.now;
        s->k.area_at = s->k.now;
    }
    busy_change(s, task, m->gpu_mask, +1);
    if (__builtin_expect(s->mem != NULL, 0))
        mem_hold(s->mem, task, node);
    struct hrm_job_record *jr = &s->rec->jobs[m->job];
    if (jr->first_start_us < 0)
        jr->first_start_us = s->k.now;
    const struct hrm_state *st = hrm_central_state(s->central);
    hrm_run_record_wait(s->rec, s->k.now - st->tasks[task].ready_us);

    const struct hrm_task *t = &s->wl->tasks[task];
    for (int32_t b = 0; b < t->nblocks && !e->has_input; b++) {
        const struct hrm_block *blk = &s->wl->blocks[t->block_first + b];
        int32_t src = pick_replica(s, blk, node);
        if (blk->size <= 0 || src < 0)
            continue; /* with every replica down the data is treated as recomputed */
        switch (hrm_net_locality(s->c, src, node)) {
        case HRM_LOCAL:
            s->rec->bytes_local += blk->size;
            break;
        case HRM_RACK:
            s->rec->bytes_rack += blk->size;
            break;
        case HRM_CROSS:
            s->rec->bytes_cross += blk->size;
            break;
        }
        uint64_t tag = (uint64_t)(t->block_first + b);
        s->flow_of_block[t->block_first + b] =
            hrm_net_start(s->net, s->k.now, src, node, (double)blk->size, tag);
        e->pending++;
    }
    if (e->pending == 0) {
        exec_compute(s, task);
        return;
    }
    if (__builtin_expect(s->cmp != NULL, 0) && cmp_pooled(s->cmp, task)) {
        e->reading = 1;
        cmp_reading(s->cmp, s->k.now, task, node, +1);
    }
    net_schedule(s);
}

/* What a killed attempt leaves to the next one (execution.preempt): with
 * keep_input, its input once read; with resume, also the compute it did.  Only
 * tasks on the plain path (no execution model, no GPU phases) keep progress. */
static void keep_on_kill(struct sim *s, int32_t task)
{
    struct exec *e = &s->exec[task];
    enum hrm_preempt_cost mode = s->cfg->execution ? s->cfg->execution->preempt : 0;
    if (mode == HRM_PREEMPT_RESTART || e->state != EXEC_COMPUTE)
        return;
    e->has_input = 1;
    bool plain = !(s->cmp && cmp_pooled(s->cmp, task)) && !gp_owns(s->gp, s->wl, task);
    if (mode == HRM_PREEMPT_RESUME && plain) {
        int64_t computed = s->k.now > e->compute_at ? s->k.now - e->compute_at : 0;
        int64_t done = (int64_t)((double)computed * s->speed[e->node]);
        int64_t dur = s->wl->tasks[task].duration_us;
        e->done_us = e->done_us + done < dur ? e->done_us + done : dur;
    }
}

static void node_kill(struct sim *s, const struct hrm_msg *m)
{
    struct exec *e = &s->exec[m->task];
    if (e->state == EXEC_IDLE || e->attempt != m->attempt)
        return; /* already ended: the central ignores that end as stale */
    keep_on_kill(s, m->task);
    exec_abort(s, m->task);
}

static void on_block_done(void *arg, uint64_t tag)
{
    struct sim *s = arg;
    int32_t block = (int32_t)tag;
    s->flow_of_block[block] = -1;
    int32_t task = s->task_of_block[block];
    struct exec *e = &s->exec[task];
    if (e->state != EXEC_TRANSFER)
        return;
    if (--e->pending == 0)
        exec_compute(s, task);
}

static void on_exec_end(struct sim *s, int32_t task, int32_t attempt, int fail)
{
    struct exec *e = &s->exec[task];
    if (e->state != EXEC_COMPUTE || e->attempt != attempt)
        return;
    int32_t node = e->node;
    busy_change(s, task, e->gpu_mask, -1);
    if (__builtin_expect(s->mem != NULL, 0))
        mem_release(s->mem, task);
    e->state = EXEC_IDLE;
    if (fail)
        s->rec->task_failures++;
    else
        s->rec->tasks_done++;
    struct hrm_msg m = {.type = HRM_MSG_TASK_END,
                        .status = fail ? HRM_OUTCOME_FAILED : HRM_OUTCOME_DONE,
                        .from = hrm_addr_node(node),
                        .job = s->wl->tasks[task].job,
                        .task = task,
                        .node = node,
                        .attempt = attempt};
    send_msg(s, HRM_ADDR_CENTRAL, &m);
}

/* ---- execution model hooks (compress.c) ---- */

static void cmp_hook_end(void *arg, int32_t task, int32_t attempt, int fail)
{
    on_exec_end(arg, task, attempt, fail);
}

/* A node agent's usage report: one message per sample, as agents send them. */
static void cmp_hook_usage(void *arg, int32_t node, int32_t task, int32_t attempt,
                           const struct hrm_usage *u)
{
    struct sim *s = arg;
    if (s->node_down[node])
        return;
    struct hrm_msg m = {.type = task >= 0 ? HRM_MSG_TASK_USAGE : HRM_MSG_NODE_USAGE,
                        .from = hrm_addr_node(node),
                        .job = task >= 0 ? s->wl->tasks[task].job : -1,
                        .task = task,
                        .node = node,
                        .attempt = attempt};
    hrm_usage_pack(&m, u);
    send_msg(s, HRM_ADDR_CENTRAL, &m);
}

static void gp_hook_busy(void *arg, int delta)
{
    struct sim *s = arg;
    area_update(s);
    s->k.busy_gpu += delta;
}

static void cmp_hook_busy(void *arg, double delta_cpu)
{
    struct sim *s = arg;
    pool_update(s);
    s->pool_cpu += delta_cpu;
}

static void node_set_up(struct sim *s, int32_t node, bool up)
{
    if (s->node_down[node] == !up)
        return;
    area_update(s);
    const struct hrm_res *cap = &s->c->nodes[node].capacity;
    int sign = up ? 1 : -1;
    s->k.cap_cpu += sign * cap->v[HRM_DIM_CPU];
    s->k.cap_gpu += sign * cap->v[HRM_DIM_GPU];
    if (!up) {
        /* Node failures are rare: a scan over all tasks is cheaper overall
         * than keeping a per-node list on every start and end. */
        for (int32_t t = 0; t < s->wl->ntasks; t++) {
            if (s->exec[t].state != EXEC_IDLE && s->exec[t].node == node) {
                exec_abort(s, t);
                s->rec->tasks_lost++;
            }
        }
    }
    s->node_down[node] = !up;
    /* Detection takes one message latency, as a heartbeat monitor would. */
    struct hrm_msg m = {.type = up ? HRM_MSG_NODE_UP : HRM_MSG_NODE_DOWN,
                        .from = hrm_addr_node(node),
                        .job = -1,
                        .task = -1,
                        .node = node};
    send_msg(s, HRM_ADDR_CENTRAL, &m);
}

/* ---- client ---- */

static void client_submit(struct sim *s, int32_t job)
{
    s->rec->jobs[job].submit_us = s->k.now;
    struct hrm_msg m = {
        .type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = job, .task = -1, .node = -1};
    send_msg(s, HRM_ADDR_CENTRAL, &m);
}

static void client_on_msg(struct sim *s, const struct hrm_msg *m)
{
    if (m->type == HRM_MSG_JOB_END)
        sim_core_client_job_end(&s->k, m);
}

/* ---- loop ---- */

static int64_t timing_start(const struct sim *s)
{
    struct hrm_sim_timing *t = s->cfg->timing;
    return t ? t->clock_ns(t->clock_arg) : 0;
}

static void timing_stop(const struct sim *s, int64_t t0)
{
    struct hrm_sim_timing *t = s->cfg->timing;
    if (!t)
        return;
    t->central_ns += (double)(t->clock_ns(t->clock_arg) - t0);
    t->calls++;
}

static void deliver(struct sim *s, const struct sim_event *ev)
{
    const struct hrm_msg *m = &ev->u.msg;
    if (ev->addr == HRM_ADDR_CENTRAL) {
        int64_t t0 = timing_start(s);
        int rc = hrm_central_on_msg(s->central, &s->env, m);
        timing_stop(s, t0);
        if (rc < 0 && !s->k.rc)
            s->k.rc = hrm_errorf(s->k.err, rc, "scheduler rejected %s: %s", hrm_msg_name(m->type),
                                 hrm_strerror(rc));
    } else if (ev->addr == HRM_ADDR_CLIENT) {
        client_on_msg(s, m);
    } else {
        int32_t node = ev->addr - HRM_ADDR_NODE0;
        if (m->type == HRM_MSG_TASK_LAUNCH)
            node_launch(s, node, m);
        else if (m->type == HRM_MSG_TASK_KILL)
            node_kill(s, m);
    }
}

/* Jain's index over allocation shares (P2 "sampled allocation
 * information"; docs/metrics.md): every user with work submitted and not
 * finished, by the dominant share of what it holds (its charges, under a
 * policy that charges estimates), and whether it has a ready task, i.e.
 * still asks for more than it holds.  Samples are rare next to task events,
 * so the scan over jobs and the scratch arrays cost nothing that shows. */
static void sample_shares(struct sim *s, const struct hrm_state *st)
{
    const struct hrm_workload *wl = s->wl;
    if (wl->nusers <= 0)
        return;
    bool *active = hrm_calloc((size_t)wl->nusers, sizeof(*active));
    bool *ready = hrm_calloc((size_t)wl->nusers, sizeof(*ready));
    double *shares = hrm_alloc((size_t)wl->nusers * sizeof(*shares));
    for (int32_t j = 0; j < wl->njobs; j++)
        if (st->jobs[j].submitted && !st->jobs[j].finished) {
            active[wl->jobs[j].user] = true;
            ready[wl->jobs[j].user] |= st->jobs[j].nready > 0;
        }
    size_t n = 0;
    for (int32_t u = 0; u < wl->nusers; u++)
        if (active[u]) {
            ready[n] = ready[u];
            shares[n++] = hrm_state_user_share(st, u);
        }
    hrm_run_record_shares(s->rec, shares, ready, n);
    hrm_free(shares);
    hrm_free(ready);
    hrm_free(active);
}

static void sample(struct sim *s)
{
    const struct hrm_state *st = hrm_central_state(s->central);
    sample_shares(s, st);
    /* The execution model's pool of compressed cpu counts as held; it also keeps sampling on. */
    sim_core_sample(&s->k, s->pool_cpu, (int32_t)st->nrunning, (int32_t)st->nready,
                    s->cmp && cmp_active(s->cmp));
}

static void dispatch_event(void *arg, const struct sim_event *ev)
{
    struct sim *s = arg;
    switch (ev->kind) {
    case EV_DELIVER:
        deliver(s, ev);
        break;
    case EV_TIMER: {
        int64_t t0 = timing_start(s);
        int rc = hrm_central_on_timer(s->central, &s->env, ev->u.cookie);
        timing_stop(s, t0);
        if (rc < 0 && !s->k.rc)
            s->k.rc = hrm_errorf(s->k.err, rc, "policy failed at t=%lldus: %s", (long long)s->k.now,
                                 hrm_strerror(rc));
        break;
    }
    case EV_ARRIVAL:
        client_submit(s, ev->u.arg.a);
        break;
    case EV_EXEC_END:
        on_exec_end(s, ev->u.arg.a, ev->u.arg.b, ev->u.arg.c);
        break;
    case EV_NET:
        if (ev->u.cookie != s->net_gen)
            break;
        s->net_at = -1;
        hrm_net_complete(s->net, s->k.now, on_block_done, s);
        net_schedule(s);
        break;
    case EV_SAMPLE:
        sample(s);
        break;
    case EV_NODE_FAIL:
        node_set_up(s, ev->u.arg.a, false);
        break;
    case EV_NODE_RECOVER:
        node_set_up(s, ev->u.arg.a, true);
        break;
    case EV_COMPRESS:
        if (ev->u.cookie != s->cmp_gen)
            break;
        s->cmp_at = -1;
        s->cmp_idle_ticks =
            cmp_active(s->cmp) || s->k.pending_other > 0 ? 0 : s->cmp_idle_ticks + 1;
        cmp_run(s->cmp, s->k.now);
        cmp_schedule(s);
        break;
    case EV_GPUPHASE:
        if (ev->u.cookie != s->gp_gen)
            break;
        s->gp_at = -1;
        gp_run(s->gp, s->k.now);
        gp_schedule(s);
        break;
    }
}

static void sim_fini(struct sim *s)
{
    hrm_central_free(s->central);
    hrm_net_free(s->net);
    sim_core_fini(&s->k);
    hrm_free(s->exec);
    hrm_free(s->flow_of_block);
    hrm_free(s->task_of_block);
    hrm_free(s->node_down);
    hrm_free(s->speed);
    cmp_free(s->cmp);
    gp_free(s->gp);
    mem_free(s->mem);
}

/* After each event: a dormant execution model wakes when work appears
 * (cmp_schedule).  Only passed to the loop when the model exists. */
static void wake_model(void *arg)
{
    struct sim *s = arg;
    if (s->cmp_at < 0)
        cmp_schedule(s);
}

int hrm_sim_run(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                const struct hrm_params *params, const struct hrm_sim_config *cfg,
                struct hrm_run_record *rec, struct hrm_error *err)
{
    /* The distributed world (P4) has its own driver: src/sim/dsim.c. */
    if (!hrm_policy_find(policy) && hrm_dsim_policy_known(policy))
        return hrm_dsim_run(c, wl, policy, params, cfg, rec, err);
    /* So has the shared-state world (P0): src/sim/ssim.c. */
    if (!hrm_policy_find(policy) && hrm_ssim_policy_known(policy))
        return hrm_ssim_run(c, wl, policy, params, cfg, rec, err);
    struct hrm_sim_config defaults = {0};
    if (!cfg)
        cfg = &defaults;
    struct hrm_policy *p = hrm_policy_new(policy, params, cfg->seed, err);
    if (!p)
        return -HRM_EUNKNOWN_POLICY;
    struct sim s = {.c = c, .wl = wl, .cfg = cfg, .rec = rec, .net_at = -1};
    sim_core_init(&s.k, wl, cfg, rec, err);
    hrm_rng_seed(&s.rng, cfg->seed ^ 0x5eed5eed5eed5eedull);
    struct hrm_central_config ccfg = {.pass_delay_us = cfg->pass_delay_us,
                                      .max_attempts = cfg->faults ? cfg->faults->max_attempts : 0};
    s.central = hrm_central_new(c, wl, p, &ccfg);
    s.env = (struct hrm_env){.now_us = env_now, .send = env_send, .timer = env_timer, .ctx = &s};
    s.net = hrm_net_new(c);
    s.exec = hrm_calloc((size_t)wl->ntasks, sizeof(*s.exec));
    for (int32_t t = 0; t < wl->ntasks; t++)
        s.exec[t].attempt = -1;
    s.flow_of_block = hrm_alloc((size_t)(wl->nblocks ? wl->nblocks : 1) * sizeof(int32_t));
    s.task_of_block = hrm_alloc((size_t)(wl->nblocks ? wl->nblocks : 1) * sizeof(int32_t));
    for (int32_t b = 0; b < wl->nblocks; b++)
        s.flow_of_block[b] = -1;
    for (int32_t t = 0; t < wl->ntasks; t++)
        for (int32_t b = 0; b < wl->tasks[t].nblocks; b++)
            s.task_of_block[wl->tasks[t].block_first + b] = t;
    s.node_down = hrm_calloc((size_t)c->nnodes, sizeof(bool));
    s.speed = hrm_alloc((size_t)c->nnodes * sizeof(double));
    for (int32_t n = 0; n < c->nnodes; n++)
        s.speed[n] = c->nodes[n].cpu_speed;
    s.k.cap_cpu = c->total.v[HRM_DIM_CPU];
    s.k.cap_gpu = c->total.v[HRM_DIM_GPU];
    s.cmp_at = -1;
    struct cmp_hooks hooks = {
        .arg = &s, .end = cmp_hook_end, .usage = cmp_hook_usage, .busy = cmp_hook_busy};
    s.cmp = cmp_new(c, wl, cfg->execution, cfg->seed, &hooks);
    struct gp_hooks gph = {.arg = &s, .end = cmp_hook_end, .busy = gp_hook_busy};
    s.gp = gp_new(c, wl, &gph);
    s.gp_at = -1;
    s.mem = mem_new(c, wl);

    sim_core_client_start(&s.k);
    if (cfg->faults) {
        for (int32_t i = 0; i < cfg->faults->nnode_faults; i++) {
            const struct hrm_node_fault *f = &cfg->faults->node_faults[i];
            push_arg(&s, f->at_us, EV_NODE_FAIL, f->node, 0, 0);
            if (f->recover_us > 0)
                push_arg(&s, f->recover_us, EV_NODE_RECOVER, f->node, 0, 0);
        }
    }
    sim_core_sampling_start(&s.k);
    cmp_schedule(&s); /* nodes report from the start */
    int64_t events = sim_core_run(&s.k, dispatch_event, s.cmp ? wake_model : NULL, &s);
    pool_update(&s);
    area_update(&s);
    rec->events = events;
    rec->preemptions = hrm_central_stats(s.central)->preemptions;
    mem_totals(s.mem, &rec->spill_cache_bytes, &rec->spill_disk_bytes);
    if (cfg->timing) {
        cfg->timing->decisions = hrm_central_stats(s.central)->decisions;
        cfg->timing->passes = hrm_central_stats(s.central)->passes;
    }
    int rc = s.k.rc;
    sim_fini(&s);
    return rc;
}
