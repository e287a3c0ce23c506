/* The agent's execution queues: the node queue system role of distributed scheduling (P4), fed by the master's relay, starting real processes. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "agent_private.h"
#include "probe_listen.h"
#include "roletimers.h"
#include "taskmap.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/log.h"
#include "hrm/nqs.h"
#include "hrm/state.h" /* enum hrm_task_outcome */
#include "hrm/wire.h"
#include "hrm/workload.h"

/*
 * The role (src/sched/nqs.c) is the one the simulator runs.  It names tasks
 * by their index in a workload it borrows, so the agent keeps a workload of
 * the tasks it has been told about: each is a job of one task ("local" ids,
 * job k holds task k), added the first time a run or a migration offer brings
 * its launch description.  On the wire tasks are named as everywhere else in
 * the daemons: the master's job id and the index within the job.  Ids are
 * translated at this file's two edges, and nowhere else.  A local id whose task
 * has left (ended, moved away, cancelled, refused) is reused for the next new
 * task, its workload entry rewritten in place: the role keeps nothing about a
 * task id between calls but its queue entries, which it matches by entry and
 * run sequence, so the agent's memory follows the tasks it holds, not the
 * tasks it ever ran.
 *
 * The role's messages to HRM_ADDR_EXEC are this agent's executor: a launch
 * starts the process (exec_launch), and the process's end comes back as the
 * executor's TASK_END.  Everything else goes to the master, addressed by
 * "to", which relays it.  The end of a run that did start is not forwarded:
 * the master learns it from the agent's own task_end report, which carries
 * the exit status; a task the queue refuses becomes a task_end of a launch
 * that failed.
 */

enum ltask_where { L_NONE, L_QUEUED, L_RUNNING };

struct ltask {
    int64_t job;   /* master's job id */
    int32_t task;  /* index within the job */
    json_t *desc;  /* launch description (owned) while the task is here */
    uint8_t where; /* enum ltask_where */
};

struct anqs {
    struct hrm_nqs *q;
    struct hrm_workload *wl;
    struct hrm_env env;
    int32_t node;
    char policy[32];
    struct hrm_nqs_queue_cfg queues[64]; /* the master's execution queues (the role borrows) */
    struct ltask *t; /* per local task */
    size_t nt, cap_t;
    int32_t *free_ids; /* local ids whose task has left, for reuse */
    size_t nfree, cap_free;
    struct task_map ids; /* (job, task) -> local task, for the tasks here */
    struct role_timers timers;
    struct hrm_msg *inbox; /* the executor's reports, delivered outside the role's calls */
    size_t ninbox, cap_inbox;
    bool in_role;
    const struct probe_in *direct; /* the probe being delivered came straight from its sender */
    int64_t ends_ahead; /* flushes of task ends ahead of the launches they free slots for */
};

/* ---- local ids ---- */

/* A task learned from its launch description (already checked against the
 * task_launch schema): a job of one task in the local workload. */
static int32_t local_add(struct anqs *x, int64_t job, int32_t task, const json_t *desc)
{
    struct hrm_error err;
    const char *qname = json_string_value(json_object_get(desc, "queue"));
    int q = qname ? hrm_workload_find_queue(x->wl, qname) : 0;
    if (q < 0 && (q = hrm_workload_set_queue(x->wl, qname, 0.0, 1.0, &err)) < 0)
        q = 0;
    struct hrm_job_desc jd = {
        .name = "task", .kind = HRM_JOB_BATCH, .queue = q, .user = hrm_workload_user(x->wl, "-"),
        .priority = (int32_t)json_integer_value(json_object_get(desc, "priority"))};
    int64_t est = json_integer_value(json_object_get(desc, "est_us"));
    struct hrm_task_desc td = {.duration_us = est > 0 ? est : 1,
                               .est_duration_us = est > 0 ? est : 1};
    td.req.v[HRM_DIM_CPU] = json_integer_value(json_object_get(desc, "cpu"));
    td.req.v[HRM_DIM_MEM] = json_integer_value(json_object_get(desc, "mem"));
    if (x->nfree > 0) { /* an id whose task has left: its entries take the new task */
        int32_t l = x->free_ids[--x->nfree];
        struct hrm_task *wt = &x->wl->tasks[l];
        wt->req = td.req;
        wt->duration_us = td.duration_us;
        wt->est_duration_us = td.est_duration_us;
        x->wl->jobs[l].queue = q;
        x->wl->jobs[l].priority = jd.priority;
        x->t[l] = (struct ltask){.job = job, .task = task};
        task_map_put(&x->ids, job, task, l);
        return l;
    }
    int lj = hrm_workload_add_job(x->wl, &jd, &err);
    if (lj < 0 || hrm_workload_add_stage(x->wl, "t", NULL, 0, &err) < 0 ||
        hrm_workload_add_task(x->wl, &td, &err) != lj) {
        hrm_log(HRM_LOG_ERR, "execution queues: cannot add task " HRM_TASK_FMT ": %s",
                HRM_TASK_ARGS((long long)job, task, 0), err.text);
        return -1;
    }
    HRM_GROW(x->t, x->cap_t, x->nt + 1);
    x->t[x->nt] = (struct ltask){.job = job, .task = task};
    task_map_put(&x->ids, job, task, (int32_t)x->nt);
    return (int32_t)x->nt++;
}

static void local_forget(struct anqs *x, int32_t l)
{
    if (!x->t[l].desc)
        return; /* already gone */
    task_map_del(&x->ids, x->t[l].job, x->t[l].task);
    json_decref(x->t[l].desc);
    x->t[l].desc = NULL;
    x->t[l].where = L_NONE;
    HRM_GROW(x->free_ids, x->cap_free, x->nfree + 1);
    x->free_ids[x->nfree++] = l;
}

/* ---- the role's environment ---- */

static int64_t env_now(struct hrm_env *env)
{
    (void)env;
    return hrm_mono_us();
}

static void env_timer(struct hrm_env *env, int64_t at_us, uint64_t cookie)
{
    struct agent *a = env->ctx;
    role_timers_add(&a->nqs->timers, at_us, 0, cookie);
}

static void exec_msg(struct agent *a, const struct hrm_msg *m)
{
    struct anqs *x = a->nqs;
    int32_t l = m->task;
    if (l < 0 || (size_t)l >= x->nt)
        return;
    if (m->type == HRM_MSG_TASK_LAUNCH) {
        struct ltask *t = &x->t[l];
        if (!t->desc) { /* cannot happen: a queued task keeps its description */
            struct hrm_msg end = {.type = HRM_MSG_TASK_END, .task = l, .job = l,
                                  .attempt = m->attempt, .gpu_mask = m->gpu_mask,
                                  .status = HRM_OUTCOME_FAILED};
            HRM_GROW(x->inbox, x->cap_inbox, x->ninbox + 1);
            x->inbox[x->ninbox++] = end;
            return;
        }
        t->where = L_RUNNING;
        struct nqs_tag tag = {.task = l, .entry = m->attempt, .seq = m->gpu_mask};
        exec_launch(a, t->desc, &tag);
    } else if (m->type == HRM_MSG_TASK_KILL) {
        for (size_t i = 0; i < a->nruns; i++)
            if (a->runs[i].via_nqs && a->runs[i].nqs_task == l && a->runs[i].nqs_seq == m->gpu_mask)
                exec_kill(a, &a->runs[i], SIGTERM);
    }
}

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *msg)
{
    struct agent *a = env->ctx;
    struct anqs *x = a->nqs;
    if (to == HRM_ADDR_EXEC) {
        exec_msg(a, msg);
        return;
    }
    int32_t l = msg->task;
    bool known = l >= 0 && (size_t)l < x->nt && x->t[l].desc;
    if (msg->type == HRM_MSG_TASK_END) {
        /* To the task's scheduler.  A run's end already left as this agent's
         * task_end; value < 0 is a refusal (-reason): the task never started. */
        if (known && msg->value < 0) {
            const json_t *d = x->t[l].desc;
            char why[120];
            snprintf(why, sizeof(why), "refused by node queue: %s",
                     -msg->value == HRM_NQS_OVER_LIMIT ? "it asks more than the queue allows"
                                                       : "no such queue");
            exec_report_failed(a, x->t[l].job, x->t[l].task,
                               (int32_t)json_integer_value(json_object_get(d, "attempt")), why);
            local_forget(x, l);
        }
        return;
    }
    struct hrm_msg w = *msg;
    w.from = hrm_addr_node(x->node);
    if (known) {
        w.job = (int32_t)x->t[l].job;
        w.task = x->t[l].task;
        if (msg->type == HRM_MSG_RUN)
            w.attempt = w.task; /* a migration names its hold by the task */
    }
    json_t *out = hrm_wire_from_msg(&w);
    json_object_set_new(out, "to", json_integer(to));
    /* The answer to a probe that came straight from its scheduler goes back the same way. */
    if (x->direct && msg->type == HRM_MSG_HOLD_REPLY && to == x->direct->msg.from) {
        probe_listen_send(a->probe, x->direct, out);
        json_decref(out);
        return;
    }
    if (known && x->t[l].desc &&
        (msg->type == HRM_MSG_RUN || msg->type == HRM_MSG_MIGRATE_OFFER))
        json_object_set(out, "desc", x->t[l].desc); /* the target learns the task */
    agent_send(a, out);
    /* Handed over, it is the target's now; an offer this node refused leaves nothing here. */
    if (known && (msg->type == HRM_MSG_RUN ||
                  (msg->type == HRM_MSG_MIGRATE_REFUSE && x->t[l].where == L_NONE)))
        local_forget(x, l);
}

/* ---- life cycle ---- */

static void reset(struct agent *a)
{
    struct anqs *x = a->nqs;
    hrm_nqs_free(x->q);
    hrm_workload_free(x->wl);
    for (size_t i = 0; i < x->nt; i++)
        json_decref(x->t[i].desc);
    x->q = NULL;
    x->wl = NULL;
    x->nt = 0;
    x->nfree = 0;
    task_map_clear(&x->ids);
    role_timers_clear(&x->timers);
    x->ninbox = 0;
}

void anqs_configure(struct agent *a, const json_t *welcome)
{
    const json_t *c = json_object_get(welcome, "nqs");
    int32_t node = (int32_t)json_integer_value(json_object_get(welcome, "node"));
    if (!json_is_object(c)) {
        if (a->nqs && hrm_nqs_idle(a->nqs->q)) {
            hrm_log(HRM_LOG_NOTICE, "the master schedules centrally: execution queues stopped");
            anqs_free(a);
        }
        return;
    }
    struct anqs *x = a->nqs;
    const char *policy = json_string_value(json_object_get(c, "policy"));
    if (a->probe) /* the scheduler keys may change with a restarted master: each welcome says */
        probe_listen_admit(a->probe, json_object_get(c, "sched_keys"),
                           (int32_t)json_array_size(json_object_get(c, "queues")));
    if (x && x->q) {
        /* The same master, or a restarted one: the queues carry on.  A restarted
         * master may number the node differently; the role's own idea of its
         * number does not matter, since the master stamps every message it
         * relays with the sender's node and address. */
        x->node = node;
        return;
    }
    if (!x)
        x = a->nqs = hrm_calloc(1, sizeof(*x));
    reset(a);
    x->node = node;
    snprintf(x->policy, sizeof(x->policy), "%s", policy ? policy : "?");
    x->env = (struct hrm_env){.now_us = env_now, .send = env_send, .timer = env_timer, .ctx = a};
    struct hrm_nqs_config cfg = {
        .hold_ttl_us = json_integer_value(json_object_get(c, "hold_ttl_us")),
        .eps_learn = json_is_true(json_object_get(c, "eps_learn")),
        .no_preempt = true,
        .balance = json_is_true(json_object_get(c, "balance")),
        .hw_us = json_integer_value(json_object_get(c, "hw_us")),
        .lw_us = json_integer_value(json_object_get(c, "lw_us")),
        .retry_us = json_integer_value(json_object_get(c, "retry_us")),
        .max_parked = (int32_t)json_integer_value(json_object_get(c, "max_parked"))};
    for (int k = 0; k < 3; k++)
        cfg.eps[k] = json_number_value(json_array_get(json_object_get(c, "eps"), (size_t)k));
    const json_t *qs = json_object_get(c, "queues");
    size_t nq = json_array_size(qs);
    if (nq > sizeof(x->queues) / sizeof(x->queues[0])) {
        hrm_log(HRM_LOG_ERR, "execution queues: the master configures %zu, at most %zu", nq,
                sizeof(x->queues) / sizeof(x->queues[0]));
        anqs_free(a);
        return;
    }
    for (size_t i = 0; i < nq; i++) {
        const json_t *q = json_array_get(qs, i);
        struct hrm_nqs_queue_cfg *o = &x->queues[i];
        memset(o, 0, sizeof(*o));
        snprintf(o->name, sizeof(o->name), "%s", json_string_value(json_object_get(q, "name")) ?: "");
        o->priority = (int32_t)json_integer_value(json_object_get(q, "priority"));
        o->max_running = (int32_t)json_integer_value(json_object_get(q, "max"));
        o->limit.v[HRM_DIM_CPU] = json_integer_value(json_object_get(q, "cpu"));
        o->limit.v[HRM_DIM_MEM] = json_integer_value(json_object_get(q, "mem"));
    }
    if (nq > 0) {
        cfg.queues = x->queues;
        cfg.nqueues = (int32_t)nq;
    }
    struct hrm_res cap = {0};
    cap.v[HRM_DIM_CPU] = a->cpu_milli;
    cap.v[HRM_DIM_MEM] = a->mem;
    struct hrm_error err;
    x->wl = hrm_workload_new();
    if (!(x->q = hrm_nqs_new_capacity(&cap, x->wl, node, &cfg, &err))) {
        hrm_log(HRM_LOG_ERR, "execution queues: %s", err.text);
        anqs_free(a);
        return;
    }
    hrm_log(HRM_LOG_NOTICE, "execution queues on (policy %s, node %d, %zu queue%s%s)", x->policy,
            node, nq ? nq : 1, nq > 1 ? "s" : "", cfg.balance ? ", balanced by the negotiator" : "");
}

void anqs_free(struct agent *a)
{
    if (!a->nqs)
        return;
    hrm_log(HRM_LOG_INFO, "execution queues: task ends reported ahead of the launches they "
            "freed slots for: %lld times", (long long)a->nqs->ends_ahead);
    reset(a);
    hrm_free(a->nqs->t);
    hrm_free(a->nqs->free_ids);
    role_timers_free(&a->nqs->timers);
    task_map_free(&a->nqs->ids);
    hrm_free(a->nqs->inbox);
    hrm_free(a->nqs);
    a->nqs = NULL;
}

/* ---- feeding the role ---- */

static void deliver(struct agent *a, const struct hrm_msg *m)
{
    struct anqs *x = a->nqs;
    x->in_role = true;
    int rc = hrm_nqs_on_msg(x->q, &x->env, m);
    x->in_role = false;
    if (rc < 0)
        hrm_log(HRM_LOG_INFO, "execution queues refused a %s from %d: %s", hrm_msg_name(m->type),
                (int)m->from, hrm_strerror(rc));
}

void anqs_drain(struct agent *a)
{
    struct anqs *x = a->nqs;
    if (!x || x->in_role)
        return;
    /* The inbox holds the executor's task ends.  Each frees a slot, and the queue starts the
     * next task at once: the loop prepares its start (files, environment, cgroups) before the
     * launcher thread clones it (agent_exec.c), time the ends' reports (queued by
     * exec_finish) would wait for too.  So they leave first, as they do when the master launches (a central policy):
     * the master and the task's scheduler learn of the end without waiting for the launches. */
    bool flushed = x->ninbox > 0 && x->q && a->noutq > 0;
    if (flushed)
        agent_flush(a);
    size_t running = a->nruns;
    for (size_t i = 0; i < x->ninbox && x->q; i++) {
        struct hrm_msg m = x->inbox[i];
        deliver(a, &m);
    }
    x->ninbox = 0;
    if (flushed && a->nruns > running) /* the ends freed slots that the queue filled */
        x->ends_ahead++;
}

/* A role message m (wire ids) with the task's launch description, if it brings one. */
static void take(struct agent *a, int type, struct hrm_msg m, const json_t *desc)
{
    struct anqs *x = a->nqs;
    struct hrm_error err;
    if (m.task >= 0) {
        int32_t l = task_map_find(&x->ids, m.job, m.task);
        if (desc) {
            if (hrm_wire_validate(HRM_WIRE_TASK_LAUNCH, desc, &err) < 0 ||
                json_integer_value(json_object_get(desc, "job")) != m.job ||
                json_integer_value(json_object_get(desc, "task")) != m.task) {
                hrm_log(HRM_LOG_WARNING, "bad task description from the master: %s", err.text);
                return;
            }
            if (l < 0 && (l = local_add(x, m.job, m.task, desc)) < 0) {
                if (type == HRM_MSG_RUN) /* never lost silently: the master hears of it */
                    exec_report_failed(a, m.job, m.task,
                                       (int32_t)json_integer_value(json_object_get(desc, "attempt")),
                                       "the node's execution queues could not take it");
                return;
            }
            json_decref(x->t[l].desc);
            x->t[l].desc = json_deep_copy(desc);
        }
        if (l < 0 && type != HRM_MSG_HOLD)
            return; /* about a task that is no longer here: stale */
        if (type == HRM_MSG_RUN && !desc)
            return; /* a run always brings its task */
        m.task = l;
        m.job = l;
        if (type == HRM_MSG_RUN) {
            x->t[l].where = L_QUEUED;
            if (m.status & HRM_RUN_MIGRATED)
                m.attempt = l;
        }
    }
    deliver(a, &m);
    /* A migration the source withdrew before the task came: nothing of it stays. */
    if (type == HRM_MSG_MIGRATE_CANCEL && m.task >= 0 && x->t[m.task].where == L_NONE)
        local_forget(x, m.task);
    anqs_drain(a);
}

void anqs_on_msg(struct agent *a, int type, const json_t *msg)
{
    struct anqs *x = a->nqs;
    if (!x || !x->q) {
        hrm_log(HRM_LOG_INFO, "'%s' from the master, but this agent runs no execution queues",
                hrm_wire_name(type));
        return;
    }
    struct hrm_msg m;
    struct hrm_error err;
    if (hrm_wire_to_msg(type, msg, &m, &err) < 0) {
        hrm_log(HRM_LOG_WARNING, "bad message from the master: %s", err.text);
        return;
    }
    take(a, type, m, json_object_get(msg, "desc"));
}

/* ---- probes straight from scheduler processes ---- */

int anqs_probes_open(struct agent *a, const struct hrm_keypair *mine, struct hrm_error *err)
{
    const char *ep = a->cfg.probe_listen;
    if (ep && strcmp(ep, "off") == 0)
        return 0;
    if (!ep) /* beside a master on this host's loopback, on the loopback too */
        ep = strncmp(a->endpoint, "tcp://127.0.0.1:", 16) == 0 ||
                     strncmp(a->endpoint, "tcp://localhost:", 16) == 0
                 ? PROBE_LISTEN_DEFAULT
                 : "tcp://*:*";
    struct hrm_error why;
    if (!(a->probe = probe_listen_new(a->zctx, ep, mine, &why)))
        return hrm_errorf(err, -HRM_EIO, "--probe-listen %s: %s", ep, why.text);
    return 0;
}

size_t anqs_probes_socks(struct agent *a, void *socks[2])
{
    /* Each ZeroMQ socket in the loop's poll costs two looks at its mailbox (getpid and a
     * poll(2)) per wait, twice when the wait blocks.  While no scheduler key is declared no
     * probe can come; a stray handshake is answered by the turn's own look (the loop wakes at
     * least every 100 ms). */
    return a->probe && probe_listen_expecting(a->probe) ? probe_listen_zsocks(a->probe, socks) : 0;
}

void anqs_probes_take(struct agent *a)
{
    struct probe_in in;
    for (int i = 0; a->probe && i < 4096 && probe_listen_next(a->probe, &in); i++) {
        struct anqs *x = a->nqs;
        if (!x || !x->q) /* before the welcome, as through the master: its hold expires unseen */
            continue;
        x->direct = &in;
        take(a, in.msg.type, in.msg, NULL);
        x->direct = NULL;
    }
    if (a->probe)
        probe_listen_flush(a->probe); /* the replies to each scheduler in one frame */
}

void anqs_probes_take_between(struct agent *a)
{
    if (a->probe && probe_listen_expecting(a->probe))
        anqs_probes_take(a);
}

bool anqs_cancel(struct agent *a, int64_t job, int32_t task, int32_t attempt)
{
    struct anqs *x = a->nqs;
    if (!x || !x->q)
        return false;
    int32_t l = task_map_find(&x->ids, job, task);
    if (l < 0 || x->t[l].where != L_QUEUED ||
        json_integer_value(json_object_get(x->t[l].desc, "attempt")) != attempt)
        return false;
    x->in_role = true;
    int removed = hrm_nqs_cancel(x->q, &x->env, l);
    x->in_role = false;
    if (removed > 0)
        local_forget(x, l);
    anqs_drain(a);
    return removed > 0;
}

void anqs_run_ended(struct agent *a, const struct arun *r)
{
    struct anqs *x = a->nqs;
    if (!x || !x->q || r->nqs_task < 0 || (size_t)r->nqs_task >= x->nt)
        return;
    struct hrm_msg end = {.type = HRM_MSG_TASK_END,
                          .from = HRM_ADDR_EXEC,
                          .job = r->nqs_task,
                          .task = r->nqs_task,
                          .node = x->node,
                          .attempt = r->nqs_entry,
                          .gpu_mask = r->nqs_seq,
                          .status = r->status == 0 ? HRM_OUTCOME_DONE : HRM_OUTCOME_FAILED};
    HRM_GROW(x->inbox, x->cap_inbox, x->ninbox + 1);
    x->inbox[x->ninbox++] = end;
    if (x->t[r->nqs_task].where == L_RUNNING)
        local_forget(x, r->nqs_task);
}

void anqs_list_queued(struct agent *a, json_t *running)
{
    struct anqs *x = a->nqs;
    for (size_t l = 0; x && l < x->nt; l++) {
        const struct ltask *t = &x->t[l];
        if (t->where != L_QUEUED)
            continue;
        json_array_append_new(
            running, json_pack("{s:I, s:i, s:I, s:i, s:I}", "job", (json_int_t)t->job, "task",
                               t->task, "attempt",
                               json_integer_value(json_object_get(t->desc, "attempt")), "pid", 0,
                               "start_us", (json_int_t)0));
    }
}

int64_t anqs_next_timer(const struct agent *a)
{
    return a->nqs ? role_timers_next(&a->nqs->timers) : INT64_MAX;
}

void anqs_run_timers(struct agent *a)
{
    struct anqs *x = a->nqs;
    if (!x || !x->q)
        return;
    struct role_timer due[8];
    size_t ndue = role_timers_take_due(&x->timers, hrm_mono_us(), due, 8);
    for (size_t i = 0; i < ndue; i++) {
        x->in_role = true;
        hrm_nqs_on_timer(x->q, &x->env, due[i].cookie);
        x->in_role = false;
        anqs_drain(a);
    }
}

void anqs_heartbeat(struct agent *a, json_t *hb)
{
    const struct anqs *x = a->nqs;
    if (!x || !x->q)
        return;
    const struct hrm_nqs_stats *st = hrm_nqs_stats(x->q);
    json_object_set_new(hb, "moved_in", json_integer(st->migrated_in));
    json_object_set_new(hb, "moved_out", json_integer(st->migrated_out));
}
