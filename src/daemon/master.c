/* hrm master: context built in order, one reactor thread, a static handler table, one durable commit per turn. */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/hash.h"
#include "hrm/jsontext.h"
#include "hrm/log.h"
#include "hrm/wire_hot.h"
#include "master_eta.h"
#include "master_private.h"
#include "master_snap.h"
#include "statedir.h"

/* Messages handled per turn.  One turn is one transaction and one flush of
 * replies; the bound keeps a flood of submissions from starving heartbeats,
 * handshakes and scheduling passes, at ~1 ms of work per hundred messages. */
#define TURN_MAX_MSGS 1024
/* Clients' requests handled first in a turn, at most; and how often a turn of agent messages
 * looks for a waiting client (which ends it: replies leave only after a turn's commit).  Often:
 * a request waits for the agent messages before the look and for the commit of their writes,
 * and on a loaded host 128 of them (the bound before) were hundreds of ms of wall time; a look
 * costs a receive that finds nothing. */
#define TURN_MAX_CLIENT_MSGS 256
#define TURN_CHECK_EVERY 16
#define TICK_US 100000         /* housekeeping: node timeouts, reconciliation */
/* What a registration or a heartbeat may claim (docs/protocol.md, "Agent ↔ master"). */
#define NODE_MEM_MIN ((json_int_t)1 << 20)
#define NODE_MEM_MAX ((json_int_t)1 << 50)
#define HEARTBEAT_LOAD_MAX 1000000
/* An agent's memory may be declared smaller than its host's (--mem): free memory above the
 * declared is fine up to a host this many times larger. */
#define NODE_MEM_SLACK 4096
/* The longest quiet a welcome asks for while the master reconciles (welcome_quiet_ms). */
#define WELCOME_QUIET_MAX_US 10000000
/* Under the client's default 10 s, so that it reads why rather than "no answer". */
#define LOGS_TIMEOUT_US 5000000

int64_t master_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void master_send(struct master *m, const struct peer_id *to, json_t *msg)
{
    HRM_GROW(m->out, m->cap_out, m->nout + 1);
    m->out[m->nout++] = (struct outmsg){.to = *to, .msg = msg};
}

static void send_text(struct master *m, const struct peer_id *to, char *text, size_t len)
{
    HRM_GROW(m->out, m->cap_out, m->nout + 1);
    m->out[m->nout++] = (struct outmsg){.to = *to, .text = text, .len = len};
}

void master_send_launch(struct master *m, int32_t node, char *text, size_t len)
{
    if (node < 0 || node >= m->nnodes || m->nodes[node].peer.len == 0) {
        free(text); /* as send_node: what the node missed is reconciled when it returns */
        return;
    }
    HRM_GROW(m->out, m->cap_out, m->nout + 1);
    m->out[m->nout++] =
        (struct outmsg){.to = m->nodes[node].peer, .text = text, .len = len, .launch = true};
}

void master_relay(struct master *m, const struct peer_id *to, json_t *msg)
{
    int32_t n = nodeidx_find(m, NODEIDX_PEER, to->id, to->len);
    if (n >= 0 && m->nodes[n].welcome_turn == m->turns) {
        master_send(m, to, msg); /* nothing overtakes a welcome: the agent drops what precedes it */
        return;
    }
    HRM_GROW(m->relay, m->cap_relay, m->nrelay + 1);
    m->relay[m->nrelay++] = (struct outmsg){.to = *to, .msg = msg};
}

static void send_node(struct master *m, int32_t node, json_t *msg, bool relay)
{
    if (node < 0 || node >= m->nnodes || m->nodes[node].peer.len == 0) {
        json_decref(msg); /* the node is gone; what it missed is reconciled when it returns */
        return;
    }
    (relay ? master_relay : master_send)(m, &m->nodes[node].peer, msg);
}

void master_send_node(struct master *m, int32_t node, json_t *msg)
{
    send_node(m, node, msg, false);
}

void master_relay_node(struct master *m, int32_t node, json_t *msg)
{
    send_node(m, node, msg, true);
}

void master_reply_error(struct master *m, const struct peer_id *to, enum hrm_wire_err code,
                        long long req, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    master_send(m, to, hrm_wire_error(code, req, "%s", text));
}

void master_store_failed(struct master *m, int rc, const struct hrm_error *err)
{
    /* Fail-stop: memory and disk would disagree from here on.  Nothing of
     * this turn is sent, and a restart rebuilds from what is durable. */
    hrm_log_err(HRM_LOG_CRIT, rc, "%s; stopping", err ? err->text : "store write failed");
    hrm_errorf(&m->turn_err, rc, "%s", err ? err->text : "store write failed");
    m->stop = true;
}

static bool peer_eq(const struct peer_id *a, const struct peer_id *b)
{
    return a->len == b->len && memcmp(a->id, b->id, a->len) == 0;
}

static int32_t node_of_peer(struct master *m, const struct peer_id *p)
{
    return nodeidx_find(m, NODEIDX_PEER, p->id, p->len);
}

char *master_end_ack_text(int64_t job, int64_t task, int64_t attempt, size_t *len)
{
    struct hrm_jtext t = {0};
    hrm_wire_text_head(&t, HRM_WIRE_TASK_END_ACK);
    hrm_jtext_field_int(&t, "job", job);
    hrm_jtext_field_int(&t, "task", task);
    hrm_jtext_field_int(&t, "attempt", attempt);
    hrm_jtext_put(&t, "}", 1);
    return hrm_jtext_take(&t, len);
}

static void ack_task(struct master *m, const struct peer_id *to, json_int_t job, json_int_t task,
                     json_int_t attempt)
{
    size_t len;
    char *text = master_end_ack_text(job, task, attempt, &len);
    send_text(m, to, text, len);
    m->out[m->nout - 1].ack = true; /* it may wait for a later turn's sync (turn()) */
}

void master_kill_run(struct master *m, int32_t node, int64_t job, int64_t task, int64_t attempt)
{
    json_t *k = hrm_wire_new(HRM_WIRE_TASK_KILL);
    json_object_set_new(k, "job", json_integer(job));
    json_object_set_new(k, "task", json_integer(task));
    json_object_set_new(k, "attempt", json_integer(attempt));
    master_send_node(m, node, k);
}

static json_int_t geti(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

/* A task_end's tree (or a registration's "finished" entry, which no schema checks) as the
 * fields read straight from an agent's batch: what the tree lacks reads 0 / absent. */
static struct hrm_hot_msg task_end_of_json(const json_t *e)
{
    return (struct hrm_hot_msg){
        .type = HRM_WIRE_TASK_END, .job = geti(e, "job"), .task = geti(e, "task"),
        .attempt = geti(e, "attempt"), .status = geti(e, "status"), .exit = geti(e, "exit"),
        .signal = geti(e, "signal"), .oom = json_is_true(json_object_get(e, "oom")),
        .start_us = geti(e, "start_us"), .has_start = json_object_get(e, "start_us") != NULL,
        .end_us = geti(e, "end_us"), .has_end = json_object_get(e, "end_us") != NULL,
        .cpu_us = geti(e, "cpu_us"), .rss = geti(e, "rss"),
        .error = json_string_value(json_object_get(e, "error")),
        .has_error = json_object_get(e, "error") != NULL};
}

/* A run ended on node (a task_end message, or a "finished" entry of a
 * registration).  Idempotent: a report about a run that is no longer the
 * task's live one is acknowledged and otherwise ignored. */
static void task_ended_fields(struct master *m, int32_t node, const struct peer_id *from,
                              const struct hrm_hot_msg *e)
{
    json_int_t job = e->job, task = e->task, attempt = e->attempt;
    struct rjob *j = jobs_find(m, job);
    ack_task(m, from, job, task, attempt);
    if (!j || task < 0 || task >= j->ntasks)
        return;
    struct rtask *t = &j->tasks[task];
    if (t->state != HRM_RTASK_RUNNING || t->attempt != attempt || t->node != node)
        return;
    t->exit = (int)e->exit;
    t->signal = (int)e->signal;
    t->oom = e->oom;
    t->end_us = e->has_end ? e->end_us : master_now_us();
    /* A run whose task_started was left out (its end came in the same batch): known now. */
    if (!t->pid && !e->has_error)
        trace_step(m, "started", j->id, (int32_t)task, node);
    trace_step(m, "ended", j->id, (int32_t)task, node);
    if (e->has_start)
        task_set_start(m, j, (int32_t)task, e->start_us);
    t->cpu_us = e->cpu_us;
    t->rss = e->rss;
    jobs_set_task_error(t, e->error);
    bool ok = e->status == HRM_OUTCOME_DONE && t->exit == 0 && t->signal == 0;
    events_task_ended(m, j, (int32_t)task, ok);
    fgm_task_end(m, j, (int32_t)task, ok);
    if (j->kind == HRM_JOB_STREAM && jobs_live(j)) {
        stream_task_ended(m, j, (int32_t)task); /* a service: restarted, whatever its exit */
        return;
    }
    if (m->dist && t->sched >= 0) {
        dist_task_end(m, j, (int32_t)task, ok);
    } else if (t->sched >= 0 && j->sched >= 0 && m->sched.central) {
        struct hrm_error err;
        int rc = sched_task_end(m, j, (int32_t)task, ok, &err);
        if (rc < 0) {
            hrm_log(HRM_LOG_ERR, "%s", err.text);
            m->sched.dirty = true;
        }
    } else {
        /* No scheduler holds it (reconciling after a restart): record the
         * outcome; the rebuild that ends reconciliation finishes the job. */
        task_set_state(m, j, (int32_t)task, ok ? HRM_RTASK_DONE : HRM_RTASK_FAILED);
        if (!ok)
            j->failed = true;
    }
    if (!ok && t->state == HRM_RTASK_PENDING) /* the scheduler runs it again */
        events_task_retried(m, j, (int32_t)task, "failure");
    eta_history_add(m, j, (int32_t)task);
    if (j->tasks[task].state != HRM_RTASK_RUNNING || j->state > HRM_JOB_RUNNING)
        jobs_persist_task(m, j, (int32_t)task);
    if (!ok)
        hrm_log(t->error ? HRM_LOG_NOTICE : HRM_LOG_INFO,
                "task " HRM_TASK_FMT " on %s failed: exit %d signal %d%s%s%s",
                HRM_TASK_ARGS(job, task, attempt), m->nodes[node].name, t->exit, t->signal,
                t->oom ? " (out of memory)" : "", t->error ? ": " : "",
                t->error ? t->error : "");
}

static void task_ended(struct master *m, int32_t node, const struct peer_id *from, const json_t *e)
{
    struct hrm_hot_msg f = task_end_of_json(e);
    task_ended_fields(m, node, from, &f);
}

/*
 * A node that is up registers from another connection: a restarted agent (its old connection
 * is dead) or a second agent started with the same name and key.  The newer one is the node
 * from now on; the older connection is told so and stops (an agent stops on a refused
 * registration), where otherwise the two would take the name from each other at every message.
 */
static void register_takeover(struct master *m, struct rnode *rn)
{
    hrm_log(HRM_LOG_WARNING, "node %s registered again from another connection: the new one "
            "is the node, the previous one is told to stop (two agents with one name?)",
            rn->name);
    json_t *e = hrm_wire_error(HRM_WERR_FORBIDDEN, -1, "node '%s' registered again from "
                               "another connection, which replaces this one: is a second agent "
                               "running with this name?", rn->name);
    json_object_set_new(e, "about", json_string("register"));
    master_send(m, &rn->peer, e);
}

/*
 * How long an agent welcomed now may stay quiet (no heartbeat, no usage report): while the
 * master reconciles it schedules nothing, so the agents already back have nothing to tell it
 * yet, and after a restart of thousands of agents their heartbeats and usage reports (a frame a
 * second each, decrypted, decoded and handled) were what kept the last ones waiting: the longer
 * the reconciliation, the more of them, the longer still.  Until the reconciliation's deadline,
 * half the node timeout at most (the node is never declared down for the silence), and
 * WELCOME_QUIET_MAX_US: the reconciliation usually ends well before its deadline, and the
 * nodes' load figures should not stay unknown long after it.
 */
static int64_t welcome_quiet_ms(const struct master *m)
{
    if (!m->reconciling)
        return 0;
    int64_t quiet = m->cfg.reconcile_us - (hrm_mono_us() - m->start_mono_us);
    if (quiet > m->cfg.node_timeout_us / 2)
        quiet = m->cfg.node_timeout_us / 2;
    if (quiet > WELCOME_QUIET_MAX_US)
        quiet = WELCOME_QUIET_MAX_US;
    return quiet > 0 ? quiet / 1000 : 0;
}

static void send_welcome(struct master *m, int32_t n, const struct peer_id *to)
{
    json_t *w = hrm_wire_new(HRM_WIRE_WELCOME);
    json_object_set_new(w, "node", json_integer(n));
    json_object_set_new(w, "boot", json_integer(m->boot));
    int64_t quiet = welcome_quiet_ms(m);
    if (quiet > 0) /* older agents ignore it and go on at their period */
        json_object_set_new(w, "quiet_ms", json_integer(quiet));
    if (dist_node_queues(m))
        json_object_set_new(w, "nqs", dist_welcome(m, n));
    master_send(m, to, w);
    m->nodes[n].welcome_turn = m->turns;
}

void master_welcome_again(struct master *m, int32_t n)
{
    send_welcome(m, n, &m->nodes[n].peer);
}

/*
 * A registration sent again on the connection whose earlier registration this master answered
 * (the node is up on it): the agent resent it because the answer was slow (thousands of agents
 * registering at once), and the welcome is already on its way ahead of anything sent now.  Its
 * "running" list is older than what this master did since (a launch sent after the first
 * welcome is not in it): reconciling against it again would call that run lost and place the
 * task a second time while the agent runs it.  So only its ended runs are taken (acknowledged,
 * idempotent) and the welcome repeated; nothing else of the node changes.  A registration
 * after a master restart or from a new process comes on a new connection, and one after the
 * node was declared down finds it down: both reconcile in full.
 */
static void register_resent(struct master *m, int32_t n, const struct peer_id *from,
                            const json_t *msg)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(msg, "finished"), i, e)
        task_ended(m, n, from, e);
    hrm_log(HRM_LOG_INFO, "node %s sent its registration again on the same connection: "
            "answered already, welcomed again", m->nodes[n].name);
    m->nodes[n].last_seen_us = hrm_mono_us();
    send_welcome(m, n, from);
}

static void on_register(struct master *m, const struct peer_id *from, json_t *msg)
{
    const char *name = json_string_value(json_object_get(msg, "name"));
    const char *rack = json_string_value(json_object_get(msg, "rack"));
    json_int_t cpu = geti(msg, "cpu"), mem = geti(msg, "mem"), gpus = geti(msg, "gpus");
    json_int_t gpu_mem = geti(msg, "gpu_mem");
    if (!*name || strlen(name) >= NODE_NAME_MAX || !*rack || strlen(rack) >= NODE_NAME_MAX ||
        cpu < 1000 || cpu > (1000LL << 20) || gpus > HRM_MAX_GPUS_PER_NODE) {
        master_reply_error(m, from, HRM_WERR_BAD_FIELD, -1,
                           "register: name and rack of 1..%d characters, cpu >= 1000 milli-cores,"
                           " at most %d GPUs",
                           NODE_NAME_MAX - 1, HRM_MAX_GPUS_PER_NODE);
        return;
    }
    /* Capacities no machine has would skew every placement and sum (docs/protocol.md). */
    if (mem < NODE_MEM_MIN || mem > NODE_MEM_MAX || gpu_mem < 0 || gpu_mem > NODE_MEM_MAX) {
        hrm_log(HRM_LOG_WARNING, "refused a registration as '%.47s': mem %lld or gpu_mem %lld "
                "bytes outside 1 MiB..1 PiB", name, (long long)mem, (long long)gpu_mem);
        master_reply_error(m, from, HRM_WERR_BAD_FIELD, -1,
                           "register: mem %lld and gpu_mem %lld bytes: mem must be 1 MiB..1 PiB,"
                           " gpu_mem at most 1 PiB", (long long)mem, (long long)gpu_mem);
        return;
    }
    if (!keys_may_register(m, from, name))
        return;
    struct hrm_error gerr;
    struct rnode scratch = {0};
    bool topo_changed;
    if (mgpu_register(&scratch, msg, (int32_t)(cpu / 1000), (int32_t)gpus, &topo_changed,
                      &gerr) < 0) {
        master_reply_error(m, from, HRM_WERR_BAD_FIELD, -1, "%s", gerr.text);
        return;
    }
    json_decref(scratch.gpu_list);
    /* One peer is one node: a connection that registers under a new name leaves its old one. */
    m->registrations++;
    int32_t old = node_of_peer(m, from);
    if (old >= 0 && strcmp(m->nodes[old].name, name) != 0)
        nodeidx_set_peer(m, old, NULL);
    int32_t n = nodes_find(m, name, true);
    struct rnode *rn = &m->nodes[n];
    if (rn->up && old == n) {
        register_resent(m, n, from, msg);
        return;
    }
    if (rn->up && rn->peer.len > 0 && !peer_eq(&rn->peer, from))
        register_takeover(m, rn);
    int32_t cores = (int32_t)(cpu / 1000);
    if (rn->cores != cores || rn->mem != mem || rn->gpus != gpus || rn->gpu_mem != gpu_mem ||
        strcmp(rn->rack, rack) != 0 || n >= (m->sched.cluster ? m->sched.cluster->nnodes : 0))
        m->sched.dirty = true;
    mgpu_register(rn, msg, cores, (int32_t)gpus, &topo_changed, &gerr); /* checked above */
    if (topo_changed)
        m->sched.dirty = true;
    master_node_perf(m, rn, json_object_get(msg, "bench"));
    rn->cores = cores;
    rn->mem = mem;
    rn->gpus = (int32_t)gpus;
    rn->gpu_mem = gpu_mem;
    snprintf(rn->rack, sizeof(rn->rack), "%s", rack);
    char host[sizeof(rn->host)];
    snprintf(host, sizeof(host), "%s", json_string_value(json_object_get(msg, "host")) ?: "");
    nodeidx_set_host(m, n, host);
    snprintf(rn->cgroup, sizeof(rn->cgroup), "%s",
             json_string_value(json_object_get(msg, "cgroup")) ?: "none");
    /* Only an agent that says it applies task_cpu gets one: older agents never see it. */
    rn->task_cpu = json_is_true(json_object_get(msg, "task_cpu"));
    nodeidx_set_peer(m, n, from);
    if (m->dist)
        dist_node_probe(m, n, msg);
    rn->last_seen_us = hrm_mono_us();
    bool was_up = rn->up;
    rn->up = true;
    if (!was_up)
        events_add(m, "node_up", 0, -1, n,
                   json_pack("{s:s, s:s, s:i, s:I, s:i}", "reason", "registration", "rack",
                             rn->rack, "cpus", rn->cores, "mem", (json_int_t)rn->mem, "gpus",
                             rn->gpus));
    /* Reconcile: what the agent runs and has finished against the table.  The node's own
     * runs only (rn->runs): the cost follows this node, not every task ever submitted. */
    for (int32_t r = 0; r < rn->nruns; r++)
        rn->runs[r].job->tasks[rn->runs[r].idx].seen = false;
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(msg, "running"), i, e)
    {
        json_int_t job = geti(e, "job"), task = geti(e, "task"), attempt = geti(e, "attempt");
        struct rjob *j = jobs_find(m, job);
        struct rtask *t = j && task >= 0 && task < j->ntasks ? &j->tasks[task] : NULL;
        if (t && t->state == HRM_RTASK_RUNNING && t->attempt == attempt && t->node == n) {
            t->seen = true; /* still running where we placed it: kept */
            t->pid = (int32_t)geti(e, "pid");
            /* The store keeps no GPU mask: the agent's word brings it back after a master
             * restart, so the rebuilt scheduler puts the run back on its GPUs. */
            json_int_t mask = geti(e, "gpu_mask"); /* absent (older agents): 0, ignored */
            bool on_node = mask > 0 && mask <= UINT32_MAX &&
                           (rn->gpus >= 32 || (mask >> rn->gpus) == 0);
            if (on_node && (uint32_t)mask != t->gpu_mask)
                task_set_gpus(m, j, (int32_t)task, (uint32_t)mask);
        } else {
            master_kill_run(m, n, job, task, attempt); /* a run nobody wants any more */
        }
    }
    json_array_foreach(json_object_get(msg, "finished"), i, e)
    {
        struct rjob *j = jobs_find(m, geti(e, "job"));
        json_int_t task = geti(e, "task");
        if (j && task >= 0 && task < j->ntasks && j->tasks[task].attempt == geti(e, "attempt"))
            j->tasks[task].seen = true;
        task_ended(m, n, from, e);
    }
    int lost = 0;
    /* A copy: placing a task again takes it off the node's list. */
    size_t nr = (size_t)rn->nruns;
    struct task_ref *runs = hrm_alloc((nr ? nr : 1) * sizeof(*runs));
    if (nr)
        memcpy(runs, rn->runs, nr * sizeof(*runs));
    for (size_t r = 0; r < nr; r++) {
        struct rjob *j = runs[r].job;
        struct rtask *t = &j->tasks[runs[r].idx];
        if (jobs_live(j) && t->state == HRM_RTASK_RUNNING && t->node == n && !t->seen) {
            jobs_task_lost(m, j, runs[r].idx); /* nobody runs it: placed again */
            lost++;
        }
    }
    hrm_free(runs);
    if (lost)
        m->sched.dirty = true;
    if (!was_up && !m->sched.dirty) {
        struct hrm_error err;
        if (sched_node_up(m, n, &err) < 0) {
            hrm_log(HRM_LOG_ERR, "%s", err.text);
            m->sched.dirty = true;
        }
    }
    hrm_log(HRM_LOG_NOTICE, "node %s (rack %s, %d cpus, %lld MiB, %d GPUs) registered%s; %d lost",
            rn->name, rn->rack, rn->cores, (long long)(rn->mem >> 20), rn->gpus,
            was_up ? " again" : "", lost);
    send_welcome(m, n, from);
}

static void on_heartbeat(struct master *m, int32_t n, const struct peer_id *from, json_t *msg)
{
    struct rnode *rn = &m->nodes[n];
    double load = json_number_value(json_object_get(msg, "load"));
    json_int_t mem_avail = geti(msg, "mem_avail"), ntasks = geti(msg, "ntasks");
    /* A load beyond what any host runs, or free memory beyond what the node declared: a bug or
     * a hostile agent.  Kept out of the table (hrm nodes, the policies' view). */
    if (!(load >= 0 && load <= HEARTBEAT_LOAD_MAX) || mem_avail > NODE_MEM_MAX ||
        (rn->mem > 0 && mem_avail > rn->mem && mem_avail > NODE_MEM_SLACK * rn->mem)) {
        hrm_log(HRM_LOG_WARNING, "bad heartbeat from node %s: load %g, mem_avail %lld bytes "
                "(the node declared %lld): ignored", rn->name, load, (long long)mem_avail,
                (long long)rn->mem);
        master_reply_error(m, from, HRM_WERR_BAD_FIELD, -1,
                           "heartbeat: load %g must be 0..%d, mem_avail %lld bytes at most the "
                           "host's memory", load, HEARTBEAT_LOAD_MAX, (long long)mem_avail);
        return;
    }
    if (m->reconciling)
        m->reconcile_reports++;
    rn->load = load;
    rn->mem_avail = mem_avail;
    rn->ntasks_reported = (int32_t)(ntasks > INT32_MAX ? INT32_MAX : ntasks);
    rn->moved_in = geti(msg, "moved_in");
    rn->moved_out = geti(msg, "moved_out");
}

static void task_started(struct master *m, int32_t n, const struct hrm_hot_msg *e)
{
    struct rjob *j = jobs_find(m, e->job);
    if (!j || e->task >= j->ntasks)
        return;
    struct rtask *t = &j->tasks[e->task];
    if (t->state == HRM_RTASK_RUNNING && t->attempt == e->attempt && t->node == n) {
        t->pid = (int32_t)e->pid;
        task_set_start(m, j, (int32_t)e->task, e->start_us);
        trace_step(m, "started", j->id, (int32_t)e->task, n);
    }
}

static void on_task_started(struct master *m, int32_t n, const struct peer_id *from, json_t *msg)
{
    (void)from;
    struct hrm_hot_msg e = {.job = geti(msg, "job"), .task = geti(msg, "task"),
                            .attempt = geti(msg, "attempt"), .pid = geti(msg, "pid"),
                            .start_us = geti(msg, "start_us")};
    task_started(m, n, &e);
}

static void on_task_end(struct master *m, int32_t n, const struct peer_id *from, json_t *msg)
{
    task_ended(m, n, from, msg);
}

static void on_usage(struct master *m, int32_t n, const struct peer_id *from, json_t *msg)
{
    (void)from;
    if (m->reconciling)
        m->reconcile_reports++;
    usage_on_message(m, n, msg);
}

/* A node queue system's message (distributed scheduling), relayed by the master. */
static void on_role_msg(struct master *m, int32_t n, const struct peer_id *from, json_t *msg)
{
    int type = hrm_wire_type_by_name(json_string_value(json_object_get(msg, "type")));
    if (!m->dist) {
        master_reply_error(m, from, HRM_WERR_FORBIDDEN, -1,
                           "'%s': this master schedules centrally (policy %s)",
                           hrm_wire_name(type), m->cfg.policy);
        return;
    }
    dist_on_role_msg(m, n, type, msg);
}

static void on_peer_error(struct master *m, const struct peer_id *from, json_t *msg)
{
    (void)m;
    (void)from;
    hrm_log(HRM_LOG_WARNING, "a peer reports an error: %s: %s",
            json_string_value(json_object_get(msg, "code")),
            json_string_value(json_object_get(msg, "message")));
}

/* The handler table: who may send a type is the wire table's "senders"
 * column; here, what handles it and whether it needs a registered node. */
typedef void (*peer_handler_f)(struct master *m, const struct peer_id *from, json_t *msg);
typedef void (*node_handler_f)(struct master *m, int32_t node, const struct peer_id *from,
                               json_t *msg);

static const struct handler {
    peer_handler_f peer;
    node_handler_f node; /* for agents' messages: needs a registered, up node */
} handlers[HRM_WIRE_COUNT] = {
    [HRM_WIRE_ERROR] = {.peer = on_peer_error},
    [HRM_WIRE_REGISTER] = {.peer = on_register},
    [HRM_WIRE_HEARTBEAT] = {.node = on_heartbeat},
    [HRM_WIRE_TASK_STARTED] = {.node = on_task_started},
    [HRM_WIRE_TASK_END] = {.node = on_task_end},
    [HRM_WIRE_USAGE] = {.node = on_usage},
    [HRM_WIRE_LOGS_DATA] = {.peer = on_logs_data},
    [HRM_WIRE_SUBMIT] = {.peer = on_submit},
    [HRM_WIRE_JOBS] = {.peer = on_jobs},
    [HRM_WIRE_JOB] = {.peer = on_job},
    [HRM_WIRE_NODES] = {.peer = on_nodes},
    [HRM_WIRE_CANCEL] = {.peer = on_cancel},
    [HRM_WIRE_WAIT] = {.peer = on_wait},
    [HRM_WIRE_LOGS] = {.peer = on_logs},
    [HRM_WIRE_EVENTS] = {.peer = on_events},
    [HRM_WIRE_HOLD_REPLY] = {.node = on_role_msg},
    [HRM_WIRE_GET_TASK] = {.node = on_role_msg},
    [HRM_WIRE_RUN] = {.node = on_role_msg},
    [HRM_WIRE_MIGRATE_REQUEST] = {.node = on_role_msg},
    [HRM_WIRE_IDLE_ADVERT] = {.node = on_role_msg},
    [HRM_WIRE_MIGRATE_OFFER] = {.node = on_role_msg},
    [HRM_WIRE_MIGRATE_ACCEPT] = {.node = on_role_msg},
    [HRM_WIRE_MIGRATE_REFUSE] = {.node = on_role_msg},
    [HRM_WIRE_MIGRATE_PARKED] = {.node = on_role_msg},
    [HRM_WIRE_MIGRATE_PULL] = {.node = on_role_msg},
    [HRM_WIRE_MIGRATE_CANCEL] = {.node = on_role_msg},
};

/* The node of an agent's message of the given type; -1, answered not_registered, if the
 * sender is no node that is up. */
static int32_t sending_node(struct master *m, const struct peer_id *from, int type)
{
    int32_t n = node_of_peer(m, from);
    if (n < 0 || !m->nodes[n].up) {
        m->not_registered_answers++;
        master_reply_error(m, from, HRM_WERR_NOT_REGISTERED, -1,
                           "'%s' from an agent that is not registered", hrm_wire_name(type));
        return -1;
    }
    m->nodes[n].last_seen_us = hrm_mono_us();
    return n;
}

/* One decoded message of a peer with the given role (a frame or a batch item). */
static void dispatch_msg(struct master *m, const struct peer_id *from, int role, int type,
                         json_t *msg)
{
    const struct handler *h = &handlers[type];
    metrics_message(&m->counters, type);
    if (!(hrm_wire_senders(type) & role) ||
        (role != HRM_PEER_SCHED && !h->peer && !h->node)) {
        master_reply_error(m, from, HRM_WERR_FORBIDDEN, geti(msg, "req"),
                           "a %s may not send '%s'",
                           role == HRM_PEER_AGENT   ? "agent"
                           : role == HRM_PEER_SCHED ? "scheduler process"
                                                    : "client",
                           hrm_wire_name(type));
    } else if (role == HRM_PEER_SCHED) {
        if (m->dist)
            dist_on_sched_msg(m, from, type, msg);
        else
            master_reply_error(m, from, HRM_WERR_FORBIDDEN, -1,
                               "this master schedules centrally (policy %s): it takes no "
                               "scheduler processes", m->cfg.policy);
    } else if (h->peer) {
        if (role == HRM_PEER_CLIENT && (type == HRM_WIRE_SUBMIT || type == HRM_WIRE_CANCEL))
            snap_client_wrote(m); /* older listing snapshots are not answered from */
        h->peer(m, from, msg);
    } else {
        int32_t n = sending_node(m, from, type);
        if (n >= 0)
            h->node(m, n, from, msg);
    }
}

/* Up to this many items of an agent's batch are read without a tree (a larger batch, rare: a
 * turn's reports of that many ends, takes the generic path). */
#define HOT_BATCH_MAX 256

/*
 * An agent's task_started or task_end, alone or a batch of them, read without a tree
 * (wire_hot.h): each goes through the steps dispatch_msg takes for it.  False: not such a
 * frame, to be decoded the usual way (which answers any error).
 */
static bool dispatch_hot(struct master *m, const struct peer_id *from, const struct hrm_inmsg *in)
{
    struct hrm_hot_msg items[HOT_BATCH_MAX];
    size_t n;
    if (in->role != HRM_PEER_AGENT || !(hrm_wire_senders(HRM_WIRE_BATCH) & in->role) ||
        !(hrm_wire_senders(HRM_WIRE_TASK_END) & hrm_wire_senders(HRM_WIRE_TASK_STARTED) &
          in->role) ||
        !hrm_wire_read_hot(in->data, in->len, items, HOT_BATCH_MAX, &n))
        return false;
    for (size_t i = 0; i < n; i++) {
        metrics_message(&m->counters, items[i].type);
        int32_t node = sending_node(m, from, items[i].type);
        if (node < 0)
            continue;
        if (items[i].type == HRM_WIRE_TASK_END)
            task_ended_fields(m, node, from, &items[i]);
        else
            task_started(m, node, &items[i]);
    }
    return true;
}

static void dispatch(struct master *m, const struct hrm_inmsg *in)
{
    struct peer_id from;
    from.len = in->idlen;
    memcpy(from.id, in->id, in->idlen);
    m->sender = in->key;
    if (!in->role && in->data) { /* an empty frame is answered by the codec below */
        json_t *e = hrm_wire_error(HRM_WERR_FORBIDDEN, -1,
                                   "this key was removed from the allow-list");
        json_object_set_new(e, "about", json_string("key")); /* a daemon stops on it */
        master_send(m, &from, e);
        return;
    }
    if (in->extra_frames) {
        master_reply_error(m, &from, HRM_WERR_BAD_JSON, -1, "a message is exactly one frame");
        return;
    }
    if (dispatch_hot(m, &from, in))
        return;
    json_t *msg;
    struct hrm_wire_fault f;
    int type = hrm_wire_decode_from(in->data ? in->data : "", in->len, in->role, &msg, &f);
    if (type < 0) {
        hrm_log(HRM_LOG_INFO, "bad message from a %s: %s",
                in->role == HRM_PEER_AGENT ? "agent" : "client", f.message);
        master_reply_error(m, &from, f.code, f.req, "%s", f.message);
        return;
    }
    if (type != HRM_WIRE_BATCH || !(hrm_wire_senders(type) & in->role)) {
        dispatch_msg(m, &from, in->role, type, msg);
        json_decref(msg);
        return;
    }
    /* A batch is its items in order, each checked as if it came alone. */
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(msg, "msgs"), i, item)
    {
        int t = hrm_wire_check_item(item, &f);
        if (t < 0) {
            hrm_log(HRM_LOG_INFO, "bad batch item from a %s: %s",
                    in->role == HRM_PEER_AGENT ? "agent" : "client", f.message);
            /* An agent's bad item records nothing: its answer leaves with the relays, in the
             * order of the agent's role messages around it (master_relay). */
            (in->role == HRM_PEER_AGENT ? master_relay : master_send)(
                m, &from, hrm_wire_error(f.code, geti(item, "req"), "%s", f.message));
            continue;
        }
        dispatch_msg(m, &from, in->role, t, item);
    }
    json_decref(msg);
}

/* ---- housekeeping ---- */

/* reason: the event log's word for why (docs/runtime.md, "Event log"). */
static void node_down(struct master *m, int32_t n, const char *why, const char *reason)
{
    struct rnode *rn = &m->nodes[n];
    rn->up = false;
    hrm_log(HRM_LOG_WARNING, "node %s is down (%s); its tasks go back to the queue", rn->name, why);
    events_add(m, "node_down", 0, -1, n, json_pack("{s:s}", "reason", reason));
    jobs_requeue_node(m, n);
    struct hrm_error err;
    if (sched_node_down(m, n, &err) < 0) {
        hrm_log(HRM_LOG_ERR, "%s", err.text);
        m->sched.dirty = true;
    }
}

static void housekeeping(struct master *m)
{
    int64_t now = hrm_mono_us();
    for (int32_t n = 0; n < m->nnodes; n++)
        if (m->nodes[n].up && now - m->nodes[n].last_seen_us > m->cfg.node_timeout_us)
            node_down(m, n, "no heartbeat", "timeout");
    if (m->dist)
        dist_housekeeping(m);
    stream_housekeeping(m);
    events_housekeeping(m);
    if (m->reconciling) {
        bool all = true;
        for (int32_t n = 0; n < m->nnodes; n++)
            all &= m->nodes[n].up;
        if (all || now - m->start_mono_us > m->cfg.reconcile_us) {
            m->reconciling = false;
            for (int32_t n = 0; n < m->nnodes; n++)
                if (!m->nodes[n].up)
                    jobs_requeue_node(m, n);
            m->sched.dirty = true;
            hrm_log(HRM_LOG_NOTICE, "reconciliation over: scheduling resumes (%lld "
                    "registrations handled, %lld agent messages answered before their node's "
                    "registration, %lld heartbeats and usage reports meanwhile)",
                    (long long)m->registrations, (long long)m->not_registered_answers,
                    (long long)m->reconcile_reports);
        }
    }
    for (size_t i = 0; i < m->nlogs;) {
        if (now - m->logs[i].since_us > LOGS_TIMEOUT_US) {
            on_logs_unanswered(m, &m->logs[i]);
            m->logs[i] = m->logs[--m->nlogs];
        } else {
            i++;
        }
    }
}

static void send_one(struct master *m, const struct peer_id *to, const json_t *msg)
{
    int rc = hrm_server_send(m->srv, to->id, to->len, msg);
    if (rc < 0)
        hrm_log(HRM_LOG_DEBUG, "a %s was not delivered: %s",
                json_string_value(json_object_get(msg, "type")), hrm_strerror(rc));
}

static void send_item(struct master *m, const struct peer_id *to, const struct hrm_wire_item *it)
{
    if (it->msg) {
        send_one(m, to, it->msg);
        return;
    }
    int rc = hrm_server_send_raw(m->srv, to->id, to->len, it->text, it->len);
    if (rc < 0)
        hrm_log(HRM_LOG_DEBUG, "a message was not delivered: %s", hrm_strerror(rc));
}

/*
 * Sends the turn's messages, each peer's in order, the agents' first.  An agent
 * gets its messages of the turn as batches (a burst of launches and acks is one
 * frame, one encryption and one wake-up of the agent instead of hundreds);
 * clients get theirs one by one.
 * BATCH_MAX_ITEMS keeps a batch of launches (~0.5 KiB each) well under the
 * codec's 1 MiB frame limit; a batch of large items that would still exceed it
 * goes as single frames.
 */
#define BATCH_MAX_ITEMS 512

/*
 * Links each message to the next one for the same peer (m->flush_next, SIZE_MAX: none), so
 * that collecting a peer's batch follows its own messages instead of rescanning the turn's:
 * a turn of launches to thousands of agents stays linear.
 */
static void link_by_peer(struct master *m, const struct outmsg *out, size_t nout)
{
    HRM_GROW(m->flush_next, m->cap_flush_next, nout * 3 + 1);
    size_t *next = m->flush_next, *slot = next + nout, cap = nout * 2;
    for (size_t i = 0; i < cap; i++)
        slot[i] = SIZE_MAX; /* peer hash -> the latest message to it so far */
    for (size_t i = 0; i < nout; i++) {
        const struct peer_id *p = &out[i].to;
        size_t k = hrm_hash(HRM_HASH_SEED, p->id, p->len) % cap;
        while (slot[k] != SIZE_MAX && !peer_eq(&out[slot[k]].to, p))
            k = (k + 1) % cap;
        if (slot[k] != SIZE_MAX)
            next[slot[k]] = i;
        slot[k] = i;
        next[i] = SIZE_MAX;
    }
}

/* Marks in first[] (of nout, true/false) the messages that are the first of their peer in out:
 * the heads of link_by_peer's chains. */
static void mark_firsts(const size_t *next, size_t nout, size_t *first)
{
    for (size_t i = 0; i < nout; i++)
        first[i] = 1;
    for (size_t i = 0; i < nout; i++)
        if (next[i] != SIZE_MAX)
            first[next[i]] = 0;
}

/* Every message of the peer whose chain starts at i is a launch or an end's acknowledgement. */
static bool only_launches(const struct outmsg *out, const size_t *next, size_t i)
{
    for (size_t k = i; k != SIZE_MAX; k = next[k])
        if ((out[k].msg || out[k].text) && !out[k].launch && !out[k].ack)
            return false;
    return true;
}

/* Drops the sent messages (NULL) from out, keeping the order of the rest. */
static void compact_out(struct outmsg *out, size_t *nout_io)
{
    size_t n = 0;
    for (size_t i = 0; i < *nout_io; i++)
        if (out[i].msg || out[i].text)
            out[n++] = out[i];
    *nout_io = n;
}

/*
 * Sends the turn's messages; with launches_only, only the launches of agents to which the
 * turn sends nothing but launches and acknowledgements of ends, the rest staying in out for a
 * later call.  A peer's messages leave together and in order, so a launch never overtakes a
 * message of its turn to its agent (a welcome, a kill), except an acknowledgement of an end:
 * that one waits for its commit's sync, which may be a later turn's (the group commit), and
 * names the run it acknowledges (job, task, attempt), which no launch changes.
 */
static void flush_msgs(struct master *m, struct outmsg *out, size_t *nout_io, bool launches_only)
{
    size_t nout = *nout_io;
    if (nout)
        link_by_peer(m, out, nout);
    size_t *first = m->flush_next + nout; /* link_by_peer's hash slots, free again */
    if (launches_only && nout)
        mark_firsts(m->flush_next, nout, first);
    struct hrm_wire_item items[BATCH_MAX_ITEMS];
    /* Agents' batches first, then the clients' replies.  Each send wakes a thread (ZeroMQ's I/O
     * thread, then the peer's): a reply sent first lets the client's chain take the core before
     * the turn's launches have left, and the launch of the job just acknowledged waited for it
     * (docs/benchmarks.md, "Runtime throughput": hop by hop).  A peer's own messages
     * keep their order; no message to a client depends on one to an agent leaving after it. */
    bool clients = false;
    size_t batches = 0;
    for (size_t i = 0; i < nout && !m->stop; i++) {
        struct outmsg *o = &out[i];
        if (!o->msg && !o->text)
            continue; /* sent in an earlier batch */
        if (launches_only && (!first[i] || !only_launches(out, m->flush_next, i)))
            continue; /* not all launches: they wait with the rest */
        if (node_of_peer(m, &o->to) < 0 && !dist_is_sched_peer(m, &o->to)) {
            clients = true; /* the second loop */
            continue;
        }
        /* Texts go to agents only (launches, acknowledgements). */
        size_t n = 0, first_k = i;
        for (size_t k = i; k != SIZE_MAX && n < BATCH_MAX_ITEMS; k = m->flush_next[k])
            if ((out[k].msg || out[k].text) && (!launches_only || out[k].launch))
                items[n++] = (struct hrm_wire_item){out[k].msg, out[k].text, out[k].len};
        if (n == 0)
            continue; /* acknowledgements only: they wait for the sync */
        batches++;
        size_t len;
        char *text = n > 1 ? hrm_wire_batch_text(items, n, &len) : NULL;
        if (text) {
            int rc = hrm_server_send_raw(m->srv, o->to.id, o->to.len, text, len);
            if (rc < 0)
                hrm_log(HRM_LOG_DEBUG, "a batch was not delivered: %s", hrm_strerror(rc));
            free(text);
        } else { /* one item, or too large together: one frame each */
            for (size_t k = 0; k < n; k++)
                send_item(m, &o->to, &items[k]);
        }
        /* Sent: a peer's further messages make the next batch. */
        for (size_t k = first_k, sent = 0; k != SIZE_MAX && sent < n; k = m->flush_next[k]) {
            if ((!out[k].msg && !out[k].text) || (launches_only && !out[k].launch))
                continue;
            json_decref(out[k].msg);
            free(out[k].text);
            out[k].msg = NULL;
            out[k].text = NULL;
            sent++;
        }
    }
    if (launches_only) {
        compact_out(out, nout_io); /* the acknowledgements may wait over several turns */
        m->turn_launch_batches += batches;
        if (batches)
            hrm_log(HRM_LOG_DEBUG, "sent %zu launch batch%s before the commit's sync", batches,
                    batches == 1 ? "" : "es");
        return;
    }
    /* Every message left is to a client (or an HTTP request), sent on its own, in order. */
    size_t replies = 0;
    for (size_t i = 0; clients && i < nout && !m->stop; i++) {
        struct outmsg *o = &out[i];
        if (!o->msg && !o->text)
            continue;
        replies++;
        if (mhttp_peer(&o->to) && o->msg) /* an HTTP request's answer: to its thread */
            mhttp_reply(m, &o->to, o->msg);
        else
            send_item(m, &o->to, &(struct hrm_wire_item){o->msg, o->text, o->len});
    }
    batches += m->turn_launch_batches;
    m->turn_launch_batches = 0;
    if (batches && replies)
        hrm_log(HRM_LOG_DEBUG, "sent %zu agent batch%s, then %zu client message%s", batches,
                batches == 1 ? "" : "es", replies, replies == 1 ? "" : "s");
    for (size_t i = 0; i < nout; i++) {
        json_decref(out[i].msg);
        free(out[i].text);
    }
    *nout_io = 0;
}

static void flush_out(struct master *m)
{
    flush_msgs(m, m->out, &m->nout, false);
    m->out_acks_checked = 0;
}

/*
 * Sends the relays waiting (master_relay): probes, releases of holds and the nodes' replies to
 * probes, which record nothing, so they need not wait for the turn's commit.  What the store
 * must keep first (a run, a task_end to a scheduler process) stays in m->out.  A relay may thus
 * overtake a message of the same turn to the same peer; none depends on that order (a run
 * follows its hold's reply, and a hold's release names a hold no run uses: docs/protocol.md).
 */
static void flush_relays(struct master *m, int64_t turn_start_us)
{
    if (m->nrelay == 0)
        return;
    if (m->trace)
        trace_step(m, "relay", (int64_t)m->nrelay, (int32_t)(master_now_us() - turn_start_us),
                   -1);
    flush_msgs(m, m->relay, &m->nrelay, false);
}

/* Drains the socket into the inbox; a failed receive is logged (what came before it is kept). */
static void fill_inbox(struct master *m)
{
    int rc = inbox_fill(&m->inbox, m->srv);
    if (rc < 0)
        hrm_log_err(HRM_LOG_WARNING, rc, "receive");
}

static void dispatch_from(struct master *m, struct hrm_inmsg *in)
{
    dispatch(m, in);
    inbox_done(in);
}

/*
 * The handshakes re-read the allow-list, but a key removed while its peer stays connected must
 * lose its role though nobody hand-shakes: checked once a tick here too, while the loop holds
 * the socket (the listing reader answers handshakes, and with them reads the list, only while
 * it is lent: master_snap.h), with what follows from a change of the scheduler keys.
 */
static void allow_list_check(struct master *m)
{
    int64_t now = hrm_mono_us();
    if (now < m->allow_list_check_us)
        return;
    m->allow_list_check_us = now + TICK_US;
    hrm_server_refresh_authz(m->srv);
    if (m->dist)
        dist_follow_keys(m);
}

/* Everything left in m->out is an acknowledgement of an end (checked once per message). */
static bool out_only_acks(struct master *m)
{
    for (; m->out_acks_checked < m->nout; m->out_acks_checked++)
        if (!m->out[m->out_acks_checked].ack)
            return false;
    return true;
}

/*
 * The group commit: a turn whose commit only agents wait on (the acknowledgements of their
 * ends, which they keep re-sending until acknowledged, so no person waits) leaves its sync to a
 * later turn's, at most the window after the first such turn: one fdatasync for the ends of
 * several turns.  Anything else in m->out (a client's reply, a kill, a welcome, a task_end to a
 * scheduler process), a stop, or the jobs made since the last sync over JOB_IDS_UNSYNCED_MAX
 * syncs at the turn's end, as every turn does with the window off.
 */
static bool sync_may_wait(struct master *m)
{
    if (m->cfg.group_commit_us <= 0 || m->stop || !hrm_store_sync_pending(m->store) ||
        m->unsynced_new_jobs > 0 || !out_only_acks(m))
        return false;
    int64_t now = hrm_mono_us();
    if (m->sync_due_us == 0)
        m->sync_due_us = now + m->cfg.group_commit_us;
    return now < m->sync_due_us;
}

/* The WAL synced, then what waited for it may leave; a failed sync stops the master (nothing
 * held is sent: those commits failed, as a turn's own does). */
static int sync_now(struct master *m)
{
    struct hrm_error err;
    int rc = hrm_store_sync(m->store, &err);
    if (rc < 0) {
        master_store_failed(m, rc, &err);
        return rc;
    }
    m->sync_due_us = 0;
    m->unsynced_new_jobs = 0;
    return 0;
}

/* A stop (SIGINT, SIGTERM): the held sync made and its acknowledgements sent, before the stop
 * keeps anything more from leaving. */
static void release_held(struct master *m)
{
    if (hrm_store_sync_pending(m->store) || m->nout > 0) {
        if (sync_now(m) == 0)
            flush_out(m);
    }
}

static int turn(struct master *m, int64_t *next_tick)
{
    struct hrm_error err;
    int64_t turn_start_us = m->trace ? master_now_us() : 0;
    m->turns++;
    snap_turn_start(m);
    hrm_server_handle_zap(m->srv);
    allow_list_check(m);
    int rc = hrm_store_begin_split(m->store, &err); /* launches leave before the sync */
    if (rc < 0) {
        master_store_failed(m, rc, &err);
        return rc;
    }
    /* Clients first: a request waits for one bounded batch of agent messages at most, never
     * for the whole fleet's (master_inbox.h).  Bounded too, so a flooding client leaves the
     * agents their turn. */
    fill_inbox(m);
    struct hrm_inmsg in;
    size_t clients = 0, waiting = inbox_len(&m->inbox, INBOX_PEERS);
    while (clients < TURN_MAX_CLIENT_MSGS && !m->stop &&
           inbox_pop(&m->inbox, INBOX_CLIENTS, &in)) {
        snap_client_handled(m, &in);
        dispatch_from(m, &in);
        clients++;
    }
    if (clients && waiting)
        hrm_log(HRM_LOG_INFO, "answering %zu client request%s ahead of %zu agent message%s "
                "waiting", clients, clients == 1 ? "" : "s", waiting, waiting == 1 ? "" : "s");
    /* Nothing written yet in this turn: what was answered reads the state the previous turn
     * committed (listings, a job, the nodes), so the answers leave now, not after this turn's
     * agent messages, scheduling pass and commit.  A write (a submission, a cancel) holds them
     * until the commit, as every reply. */
    if (clients && !hrm_store_txn_open(m->store)) {
        /* ... and the state they read must be durable: an earlier turn's sync held for the
         * group commit is made first. */
        if (hrm_store_sync_pending(m->store) && (rc = sync_now(m)) < 0)
            return rc;
        flush_out(m);
        snap_turn_start(m); /* their replies left: a listing beside the loop may follow them */
    }
    for (int i = 0; i < TURN_MAX_MSGS && !m->stop; i++) {
        if (!inbox_pop(&m->inbox, INBOX_PEERS, &in)) {
            flush_relays(m, turn_start_us); /* what was received so far is relayed: it goes */
            fill_inbox(m);
            if (!inbox_pop(&m->inbox, INBOX_PEERS, &in))
                break;
        }
        dispatch_from(m, &in);
        if ((i + 1) % TURN_CHECK_EVERY == 0) {
            hrm_server_handle_zap(m->srv); /* a long turn does not hold handshakes back */
            fill_inbox(m);
            if (inbox_len(&m->inbox, INBOX_CLIENTS) > 0) {
                hrm_log(HRM_LOG_DEBUG, "turn ends after %d agent messages: a client waits", i + 1);
                break; /* a client waits: this turn ends here, the next answers it first */
            }
        }
    }
    /* From here to the relays, and around the commit and the estimate walk, the socket is the
     * listing reader's (master_snap.h): `jobs` is answered meanwhile. */
    snap_lend(m);
    if (!m->stop)
        mhttp_turn(m);
    if (hrm_mono_us() >= *next_tick) {
        housekeeping(m);
        if (m->trace)
            fflush(m->trace); /* readable while the master runs, a tick behind */
        *next_tick = hrm_mono_us() + TICK_US;
    }
    if (!m->stop && !m->reconciling && m->sched.dirty) {
        if ((rc = sched_rebuild(m, &err)) < 0) {
            hrm_log(HRM_LOG_CRIT, "scheduler: %s", err.text);
            m->stop = true;
        }
    }
    if (!m->stop && !m->reconciling && (rc = sched_add_arrived(m, &err)) < 0) {
        hrm_log(HRM_LOG_CRIT, "scheduler: %s", err.text);
        m->stop = true;
    }
    int64_t passes = m->sched.passes, pass_start = hrm_mono_us();
    if (!m->stop && (rc = sched_run_timers(m, &err)) < 0) {
        hrm_log(HRM_LOG_CRIT, "%s", err.text);
        m->stop = true;
    }
    if (m->sched.passes > passes)
        metrics_passes(&m->counters, m->sched.passes - passes, hrm_mono_us() - pass_start);
    snap_reclaim(m);
    flush_relays(m, turn_start_us); /* the rest of the turn's relays: they need no commit */
    snap_lend(m);
    bool writes = hrm_store_txn_open(m->store), held = false;
    int64_t commit_start = hrm_mono_us();
    if (m->stop) {
        hrm_store_rollback(m->store);
    } else if ((rc = hrm_store_commit_unsynced(m->store, &err)) < 0) {
        master_store_failed(m, rc, &err);
    } else {
        /* The commit is written: from here a crash of the master keeps it, so the turn's
         * launches leave now and the task starts while the WAL syncs.  Everything else (the
         * clients' acknowledgements, ends acknowledged to agents, kills) waits for the sync:
         * what a client or an agent is told is durable (docs/runtime.md, "State folder and
         * durability").  The launches' job ids are bounded over the whole unsynced window. */
        if (hrm_store_sync_pending(m->store))
            m->unsynced_new_jobs += m->turn_new_jobs;
        if (m->unsynced_new_jobs <= JOB_IDS_UNSYNCED_MAX) {
            /* The socket is the loop's for the sends: the listing reader may be using it while
             * it is lent, and a ZeroMQ socket takes one thread at a time. */
            snap_reclaim(m);
            flush_msgs(m, m->out, &m->nout, true);
            snap_lend(m);
        }
        if (m->cfg.test_crash_after_launch && m->turn_launch_batches > 0) {
            hrm_log(HRM_LOG_CRIT, "test: dying after a launch left, before the commit's sync");
            raise(SIGKILL);
        }
        if ((held = sync_may_wait(m))) {
            m->held_syncs += writes;
            if (m->cfg.test_crash_held_acks && writes && m->nout > 0) {
                hrm_log(HRM_LOG_CRIT, "test: dying with %zu end acknowledgement%s held for a "
                        "later sync", m->nout, m->nout == 1 ? "" : "s");
                raise(SIGKILL);
            }
        } else if (sync_now(m) == 0 && m->cfg.test_crash_after_submit && m->turn_new_jobs > 0) {
            hrm_log(HRM_LOG_CRIT, "test: dying after the commit of a submission, before the "
                    "reply");
            raise(SIGKILL);
        }
    }
    if (writes && !m->stop)
        metrics_commit(&m->counters, hrm_mono_us() - commit_start);
    m->turn_new_jobs = 0;
    if (!m->stop && !held) {
        mhttp_after_commit(m); /* readers see this turn's writes before their answers leave */
        snap_after_commit(m);
    }
    snap_reclaim(m);
    if (m->trace && m->nout > 0 && !held)
        trace_step(m, "flush", (int64_t)m->nout, (int32_t)(master_now_us() - turn_start_us), -1);
    if (!held)
        flush_out(m); /* after the sync: nothing is promised that is not durable */
    snap_lend(m);
    if (!m->stop)
        eta_turn(m); /* a step of a listing's estimate walk, after the replies left */
    /* The WAL's checkpoint after the turn's replies and launches have left, not in a commit. */
    if (!m->stop && hrm_store_checkpoint_due(m->store) && hrm_store_checkpoint(m->store, &err) < 0)
        hrm_log(HRM_LOG_WARNING, "%s", err.text);
    snap_reclaim(m);
    return m->stop && m->turn_err.text[0] ? -HRM_EIO : 0;
}

/* ---- context ---- */

static int write_endpoint(struct master *m, struct hrm_error *err)
{
    char tmp[1200], path[1100];
    snprintf(path, sizeof(path), "%s/" HRM_ENDPOINT_FILE, m->state_dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "we");
    if (!f)
        return hrm_errorf(err, -errno, "%s: %s", tmp, strerror(errno));
    fprintf(f, "%s\n", hrm_server_endpoint(m->srv));
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return hrm_errorf(err, -errno, "%s: %s", path, strerror(errno));
    return 0;
}

static void master_free(struct master *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nout; i++) {
        json_decref(m->out[i].msg);
        free(m->out[i].text);
    }
    for (size_t i = 0; i < m->nrelay; i++)
        json_decref(m->relay[i].msg);
    mhttp_stop(m); /* first: its threads wait on the loop, which stops here */
    hrm_free(m->out);
    hrm_free(m->relay);
    hrm_free(m->logs);
    sched_fini(m);
    fgm_free(m);
    dist_free(m);
    jobs_free_all(m);
    for (int32_t n = 0; n < m->nnodes; n++) {
        json_decref(m->nodes[n].gpu_list);
        hrm_free(m->nodes[n].runs);
    }
    hrm_free(m->nodes);
    nodeidx_free(m);
    hrm_free(m->flush_next);
    if (m->sigfd >= 0)
        close(m->sigfd);
    snap_reader_free(m->snap); /* before the socket it borrows */
    inbox_free(&m->inbox);
    hrm_server_free(m->srv);
    hrm_zctx_free(m->zctx);
    hrm_authz_free(m->authz);
    keys_free(m);
    eta_state_free(m->eta);
    hrm_store_close(m->store);
    trace_close(m);
    if (m->lock_fd >= 0)
        close(m->lock_fd); /* last: the store is closed before another master may open it */
    hrm_free(m);
}

static struct master *master_new(const struct hrm_master_config *cfg, struct hrm_error *err)
{
    struct master *m = hrm_calloc(1, sizeof(*m));
    m->sigfd = -1;
    m->lock_fd = -1;
    m->cfg = *cfg;
    if (!m->cfg.policy)
        m->cfg.policy = "drf";
    if (m->cfg.max_attempts <= 0)
        m->cfg.max_attempts = 1;
    if (m->cfg.node_timeout_us <= 0)
        m->cfg.node_timeout_us = 5000000;
    if (m->cfg.reconcile_us <= 0)
        m->cfg.reconcile_us = 5000000;
    if (m->cfg.compact_tasks <= 0)
        m->cfg.compact_tasks = 65536;
    if (m->cfg.max_pass_starts == 0)
        m->cfg.max_pass_starts = MASTER_MAX_PASS_STARTS;
    if (m->cfg.group_commit_us == 0)
        m->cfg.group_commit_us = MASTER_GROUP_COMMIT_US;
    if (m->cfg.eta_turn_rows == 0)
        m->cfg.eta_turn_rows = ETA_TURN_ROWS;
    events_defaults(&m->cfg);
    m->events_since_prune = 1; /* a retention pass at the first tick: a new bound applies at once */
    snprintf(m->state_dir, sizeof(m->state_dir), "%s", cfg->state_dir);
    if (cfg->keys_dir)
        snprintf(m->keys_dir, sizeof(m->keys_dir), "%s", cfg->keys_dir);
    else
        snprintf(m->keys_dir, sizeof(m->keys_dir), "%.1000s/keys", cfg->state_dir);
    sched_init(m);
    m->stream_next_us = INT64_MAX;
    /* Files made before folders were private (the store holds --env values). */
    static const char *const own_files[] = {"hrm.db", "hrm.db-wal", "hrm.db-shm",
                                            HRM_ENDPOINT_FILE, NULL};
    if (statedir_make_private(m->state_dir, own_files, err) < 0)
        goto fail;
    /* One master per state folder, for its whole life: two masters on one
     * hrm.db would both acknowledge jobs and launch tasks. */
    if ((m->lock_fd = hrm_state_lock(m->state_dir, HRM_MASTER_LOCK_FILE, "the master", err)) < 0)
        goto fail;
    /* The policy name is checked before anything is opened.  A distributed
     * policy (dhrm, sparrow, ...) runs instances here and queues in the agents. */
    if (dist_policy_known(m->cfg.policy)) {
        if (dist_new(m, err) < 0)
            goto fail;
    } else if (m->cfg.nexec_queues > 0 || m->cfg.local_instances != 0) {
        hrm_errorf(err, -HRM_ESPEC, "%s needs a distributed policy (dhrm, dhrm-batch, "
                   "dhrm-nego, sparrow, d-random); %s schedules centrally",
                   m->cfg.nexec_queues > 0 ? "--exec-queue" : "--local-instances",
                   m->cfg.policy);
        goto fail;
    } else {
        struct hrm_params params = {.items = m->cfg.params, .count = (size_t)m->cfg.nparams};
        struct hrm_policy *probe = hrm_policy_new(m->cfg.policy, &params, 1, err);
        if (!probe)
            goto fail;
        hrm_policy_free(probe);
    }
    char path[1100];
    snprintf(path, sizeof(path), "%s/hrm.db", m->state_dir);
    if (!(m->store = hrm_store_open(path, err)))
        goto fail;
    struct hrm_keypair kp;
    if (hrm_keys_load(m->keys_dir, "master", false, &kp, err) < 0)
        goto fail;
    snprintf(path, sizeof(path), "%s/authorized", m->keys_dir);
    if (!(m->authz = hrm_authz_load(path, err)))
        goto fail;
    if (jobs_load(m, err) < 0 || keys_load_bindings(m, err) < 0)
        goto fail;
    m->eta = eta_state_new();
    eta_history_rebuild(m);
    m->boot = hrm_store_meta_get(m->store, "boots", 0) + 1;
    if (hrm_store_meta_put(m->store, "boots", m->boot, err) < 0)
        goto fail;
    for (size_t i = 0; i < m->njobs; i++)
        for (int32_t k = 0; m->jobs[i] && k < m->jobs[i]->ntasks; k++)
            m->reconciling |= m->jobs[i]->tasks[k].state == HRM_RTASK_RUNNING;
    if (!(m->zctx = hrm_zctx_new_wide())) {
        hrm_errorf(err, -ENOMEM, "cannot create a ZeroMQ context");
        goto fail;
    }
    /* A restarted master takes its previous address back, so agents and
     * waiting clients, which ZeroMQ reconnects by themselves, find it. */
    char previous[512] = "";
    snprintf(path, sizeof(path), "%s/" HRM_ENDPOINT_FILE, m->state_dir);
    FILE *ef = cfg->listen ? NULL : fopen(path, "re");
    if (ef) {
        if (!fgets(previous, sizeof(previous), ef))
            previous[0] = '\0';
        previous[strcspn(previous, "\n")] = '\0';
        fclose(ef);
    }
    if (previous[0] && (m->srv = hrm_server_new(m->zctx, previous, &kp, m->authz, NULL)))
        hrm_log(HRM_LOG_INFO, "listening on the previous address %s", previous);
    if (!m->srv && !(m->srv = hrm_server_new(m->zctx, cfg->listen ? cfg->listen : HRM_DEFAULT_LISTEN,
                                             &kp, m->authz, err)))
        goto fail;
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if ((m->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        hrm_errorf(err, -errno, "signalfd: %s", strerror(errno));
        goto fail;
    }
    if (!(m->snap = snap_reader_new(m, err)))
        goto fail;
    if (write_endpoint(m, err) < 0 || mhttp_start(m, err) < 0 || trace_open(m, err) < 0)
        goto fail;
    m->start_mono_us = hrm_mono_us();
    return m;
fail:
    master_free(m);
    return NULL;
}

int hrm_master_run(const struct hrm_master_config *cfg, struct hrm_error *err)
{
    hrm_alloc_daemon();
    struct master *m = master_new(cfg, err);
    if (!m)
        return -HRM_EIO;
    size_t live = 0;
    for (size_t i = 0; i < m->njobs; i++)
        live += m->jobs[i] && jobs_live(m->jobs[i]);
    hrm_log(HRM_LOG_NOTICE, "master up on %s (boot %lld, policy %s, %zu jobs, %zu unfinished%s)",
            hrm_server_endpoint(m->srv), (long long)m->boot, m->cfg.policy, m->njobs, live,
            m->reconciling ? "; waiting for agents to reconcile" : "");
    int64_t next_tick = hrm_mono_us() + TICK_US;
    int rc = 0;
    while (!m->stop) {
        int64_t now = hrm_mono_us();
        int64_t wait_us = next_tick - now;
        int64_t t = sched_next_timer(m);
        if (t != INT64_MAX) {
            int64_t d = t - master_now_us();
            if (d < wait_us)
                wait_us = d;
        }
        if (m->sync_due_us > 0 && m->sync_due_us - now < wait_us)
            wait_us = m->sync_due_us - now; /* the group commit's held sync */
        if ((m->sched.dirty && !m->reconciling) || inbox_total(&m->inbox) > 0 ||
            eta_walk_pending(m))
            wait_us = 0; /* a rebuild, messages received and not yet handled, a walk's steps */
        zmq_pollitem_t items[4] = {
            {hrm_server_zsock(m->srv, 0), 0, ZMQ_POLLIN, 0},
            {hrm_server_zsock(m->srv, 1), 0, ZMQ_POLLIN, 0},
            {NULL, m->sigfd, ZMQ_POLLIN, 0},
            {NULL, mhttp_fd(m), ZMQ_POLLIN, 0}, /* the HTTP API's requests */
        };
        long timeout_ms = wait_us <= 0 ? 0 : (long)((wait_us + 999) / 1000);
        if (zmq_poll(items, m->http ? 4 : 3, timeout_ms) < 0 && zmq_errno() != EINTR) {
            rc = hrm_errorf(err, -zmq_errno(), "poll: %s", zmq_strerror(zmq_errno()));
            break;
        }
        if (items[2].revents & ZMQ_POLLIN) {
            struct signalfd_siginfo si;
            if (read(m->sigfd, &si, sizeof(si)) == sizeof(si)) {
                hrm_log(HRM_LOG_NOTICE, "signal %u: stopping", si.ssi_signo);
                release_held(m);
                m->stop = true;
            }
        }
        if ((rc = turn(m, &next_tick)) < 0) {
            hrm_errorf(err, rc, "%s", m->turn_err.text);
            break;
        }
    }
    struct hrm_store_stats st;
    hrm_store_stats(m->store, &st);
    /* The turns against the commits and the tasks: a turn's wake-up and its commit are the
     * master's costs that do not shrink with the tasks a turn carries. */
    hrm_log(HRM_LOG_NOTICE, "master stopped (%lld turns, %lld scheduler rebuilds, %lld passes; "
            "store: %lld rows in %lld statements, %lld commits, %lld syncs, %lld commits whose "
            "sync a later turn made, %lld checkpoints)",
            (long long)m->turns, (long long)m->sched.rebuilds, (long long)m->sched.passes, st.rows,
            st.statements, st.commits, st.syncs, (long long)m->held_syncs, st.checkpoints);
    master_free(m);
    return rc;
}
