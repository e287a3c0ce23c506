/* Scheduler processes (hrm sched): instances outside the master, registered by name, given jobs and task ends, their probes and runs relayed as the master's own. */
#include <string.h>

#include "dist_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/log.h"

/*
 * A scheduler process runs `count` instances of the master's distributed
 * policy (src/daemon/sched.c).  The master numbers every instance, its own
 * first (0 .. ninst-1), then each process's in the order they first register
 * (a process that registers again under its name gets its numbers back), so
 * instance g is at address hrm_addr_sched(g) wherever it runs and the agents'
 * replies are routed by that address alone.
 *
 * The job table stays the truth.  A job given to a process keeps no entry in
 * the master's workload: its record says REMOTE_JOB, and its tasks' sched
 * field only marks them as held by an instance.  When a process goes silent
 * for --node-timeout, or registers afresh (it restarted), every job it held
 * is registered again with whichever instance is least busy; runs already on
 * the nodes are adopted, as after a master restart.
 */

#define SCHED_JOB_CHUNK 8192 /* tasks per sched_job message, far below the 1 MiB frame */

struct rsched *remote_of_inst(struct mdist *d, int32_t g)
{
    for (size_t i = 0; i < d->nrs; i++)
        if (g >= d->rs[i].base && g < d->rs[i].base + d->rs[i].count)
            return &d->rs[i];
    return NULL;
}

static struct rsched *remote_of_peer(struct mdist *d, const struct peer_id *p)
{
    for (size_t i = 0; i < d->nrs; i++)
        if (d->rs[i].up && d->rs[i].peer.len == p->len &&
            memcmp(d->rs[i].peer.id, p->id, p->len) == 0)
            return &d->rs[i];
    return NULL;
}

bool dist_is_sched_peer(struct master *m, const struct peer_id *p)
{
    return m->dist && remote_of_peer(m->dist, p) != NULL;
}

void remote_send_msg(struct master *m, struct rsched *r, hrm_addr to, const struct hrm_msg *msg,
                     bool relay)
{
    json_t *out = hrm_wire_from_msg(msg);
    json_object_set_new(out, "to", json_integer(to)); /* which of its instances */
    if (relay && r->welcome_turn != m->turns) /* nothing overtakes its sched_welcome */
        master_relay(m, &r->peer, out);
    else
        master_send(m, &r->peer, out);
    m->dist->relayed++;
}

void remote_free(struct mdist *d)
{
    hrm_free(d->probe);
    json_decref(d->keysets);
    d->probe = NULL;
    d->keysets = NULL;
    hrm_free(d->rs);
    d->rs = NULL;
    d->nrs = 0;
}

/* Its jobs go back to be registered again (dist_rebuild, in this turn). */
void remote_down(struct master *m, struct rsched *r, const char *why)
{
    r->up = false;
    r->load = 0;
    if (m->dist->shared)
        shared_process_gone(m, r);
    int32_t jobs = 0;
    for (size_t i = 0; i < m->njobs; i++) {
        struct rjob *j = m->jobs[i];
        if (!j || j->sched != REMOTE_JOB || j->inst < r->base || j->inst >= r->base + r->count)
            continue;
        j->sched = -1;
        for (int32_t k = 0; k < j->ntasks; k++)
            j->tasks[k].sched = -1;
        jobs++;
    }
    m->sched.dirty = true;
    hrm_log(HRM_LOG_WARNING, "scheduler process %s is gone (%s): its %d jobs go to other instances",
            r->name, why, jobs);
}

int remote_register_job(struct master *m, struct rjob *j, struct rsched *r, int32_t g,
                        struct hrm_error *err)
{
    int32_t live = 0;
    for (int32_t i = 0; i < j->ntasks; i++)
        live += sched_task_live(j, &j->tasks[i]);
    if (live == 0) {
        jobs_finish(m, j); /* every task ended while no scheduler ran (a restart) */
        return 0;
    }
    int kind = HRM_JOB_BATCH;
    if (m->dist->shared && (kind = shared_job_added(m, j, g, err)) < 0)
        return kind;
    int64_t est = dist_estimate_us(m->dist, j);
    j->inst = g;
    j->sched = REMOTE_JOB;
    json_t *tasks = json_array();
    int32_t sent = 0;
    for (int32_t i = 0; i < j->ntasks; i++) {
        struct rtask *t = &j->tasks[i];
        t->sched = -1;
        if (!sched_task_live(j, t))
            continue;
        t->sched = i; /* held by an instance */
        const struct hrm_res *q = &j->greq[t->group];
        /* [task, cpu, mem, estimate, adopt]: a run the nodes hold is adopted, not placed;
         * hrm-shared adds [request by dimension], GPU share (thousandths). */
        json_t *e = json_pack("[i, I, I, I, b]", i, (json_int_t)q->v[HRM_DIM_CPU],
                              (json_int_t)q->v[HRM_DIM_MEM], (json_int_t)est,
                              t->state == HRM_RTASK_RUNNING);
        if (m->dist->shared) { /* hrm-shared places every dimension: the whole request */
            json_t *req = json_array();
            for (int d = 0; d < HRM_NDIM; d++)
                json_array_append_new(req, json_integer(q->v[d]));
            json_array_append_new(e, req);
            json_array_append_new(e, json_integer(j->gshare[t->group])); /* GPU share */
        }
        json_array_append_new(tasks, e);
        if (++sent == live || json_array_size(tasks) == SCHED_JOB_CHUNK) {
            json_t *msg = hrm_wire_new(HRM_WIRE_SCHED_JOB);
            json_object_set_new(msg, "inst", json_integer(g));
            json_object_set_new(msg, "job", json_integer(j->id));
            json_object_set_new(msg, "queue", json_string(j->queue));
            json_object_set_new(msg, "tasks", tasks);
            json_object_set_new(msg, "last", json_boolean(sent == live));
            if (m->dist->shared)
                json_object_set_new(msg, "kind",
                                    json_string(kind == HRM_JOB_STREAM ? "stream" : "batch"));
            master_send(m, &r->peer, msg);
            tasks = json_array();
        }
    }
    json_decref(tasks);
    r->load += live;
    trace_step(m, "handed", j->id, -1, -1);
    hrm_log(HRM_LOG_DEBUG, "job %lld (%d tasks) to instance %d of %s", (long long)j->id, live, g,
            r->name);
    return 0;
}

void remote_task_end(struct master *m, struct rjob *j, int32_t idx, enum hrm_task_outcome outcome)
{
    struct rtask *t = &j->tasks[idx];
    bool final = outcome == HRM_OUTCOME_DONE || outcome == HRM_OUTCOME_FAILED;
    if (final)
        t->sched = -1;
    struct rsched *r = remote_of_inst(m->dist, j->inst);
    if (!r || !r->up)
        return; /* the job is registered again elsewhere, from the table */
    if (final && r->load > 0)
        r->load--;
    struct hrm_msg e = {.type = HRM_MSG_TASK_END,
                        .from = t->node >= 0 ? hrm_addr_node(t->node) : HRM_ADDR_CENTRAL,
                        .status = (uint16_t)outcome,
                        .job = (int32_t)j->id,
                        .task = idx,
                        .node = t->node};
    remote_send_msg(m, r, hrm_addr_sched(j->inst), &e, false); /* after the end's commit */
}

void remote_node(struct master *m, int32_t n, bool up)
{
    struct mdist *d = m->dist;
    for (size_t i = 0; i < d->nrs; i++) {
        if (!d->rs[i].up)
            continue;
        json_t *msg = hrm_wire_new(HRM_WIRE_SCHED_NODE);
        json_object_set_new(msg, "node", json_integer(n));
        json_object_set_new(msg, "up", json_boolean(up));
        remote_probe_fields(d, &d->rs[i], n, msg);
        master_send(m, &d->rs[i].peer, msg);
    }
}

/* ---- direct probes ----
 *
 * An agent that listens for probes (hrm agent --probe-listen) says where in its register; its
 * welcome then lists the scheduler keys of the allow-list, the only ones its listener admits.
 * A scheduler process learns a node's endpoint and key (sched_welcome, sched_node) only if the
 * node was told the process's key: one whose key was added to the allow-list after the node's
 * welcome keeps probing that node through the master until the node registers again.  Each
 * distinct set of keys is kept once (keysets); a node keeps the index of its own. */

static bool keyset_has(const json_t *set, const char *pub)
{
    size_t i;
    const json_t *k;
    json_array_foreach(set, i, k)
    {
        if (strcmp(json_string_value(k), pub) == 0)
            return true;
    }
    return false;
}

/* The allow-list's scheduler keys now, as an index of keysets. */
static int32_t current_keyset(struct master *m)
{
    struct mdist *d = m->dist;
    json_t *now = json_array();
    const struct hrm_authz_entry *e;
    for (size_t i = 0; (e = hrm_authz_at(m->authz, i)) != NULL; i++)
        if (e->role == HRM_PEER_SCHED)
            json_array_append_new(now, json_string(e->pub));
    if (!d->keysets)
        d->keysets = json_array();
    size_t last = json_array_size(d->keysets);
    if (last > 0 && json_equal(json_array_get(d->keysets, last - 1), now)) {
        json_decref(now);
        return (int32_t)last - 1;
    }
    json_array_append_new(d->keysets, now);
    return (int32_t)last;
}

void dist_node_probe(struct master *m, int32_t n, const json_t *msg)
{
    struct mdist *d = m->dist;
    if (d->shared)
        return; /* no node queues to probe */
    size_t had = d->cap_probe;
    HRM_GROW(d->probe, d->cap_probe, (size_t)n + 1);
    memset(d->probe + had, 0, (d->cap_probe - had) * sizeof(*d->probe));
    struct dprobe *p = &d->probe[n], was = *p;
    const char *ep = json_string_value(json_object_get(msg, "probe"));
    if (ep && (strncmp(ep, "tcp://", 6) != 0 || strlen(ep) >= sizeof(p->ep))) {
        hrm_log(HRM_LOG_WARNING, "node %s: probe endpoint '%.64s' ignored (tcp://HOST:PORT of "
                "at most %zu characters): its probes go through the master", m->nodes[n].name,
                ep, sizeof(p->ep) - 1);
        ep = NULL;
    }
    snprintf(p->ep, sizeof(p->ep), "%s", ep ? ep : "");
    snprintf(p->pub, sizeof(p->pub), "%s", ep ? m->sender.pub : "");
    p->keyset = ep ? current_keyset(m) : 0;
    bool changed = strcmp(was.ep, p->ep) != 0 || strcmp(was.pub, p->pub) != 0 ||
                   was.keyset != p->keyset;
    /* A node known to the processes and still up on a new listener (its agent restarted within
     * the node timeout) is announced again; one coming up is announced by dist_node_up. */
    if (changed && n < d->cluster->nnodes && d->node_up[n])
        remote_node(m, n, true);
}

json_t *dist_probe_keys(const struct mdist *d, int32_t n)
{
    if (!d->probe || (size_t)n >= d->cap_probe || !d->probe[n].ep[0])
        return NULL;
    return json_deep_copy(json_array_get(d->keysets, (size_t)d->probe[n].keyset));
}

void remote_probe_fields(const struct mdist *d, const struct rsched *r, int32_t n, json_t *out)
{
    if (!d->probe || (size_t)n >= d->cap_probe || !d->probe[n].ep[0] ||
        !keyset_has(json_array_get(d->keysets, (size_t)d->probe[n].keyset), r->pub))
        return;
    if (json_is_array(out)) {
        json_array_append_new(out, json_string(d->probe[n].ep));
        json_array_append_new(out, json_string(d->probe[n].pub));
    } else {
        json_object_set_new(out, "probe", json_string(d->probe[n].ep));
        json_object_set_new(out, "pub", json_string(d->probe[n].pub));
    }
}

/*
 * The allow-list changed: each node that takes probes straight from scheduler processes is
 * welcomed again with the scheduler keys listed now, and the processes are told the nodes
 * again (a process whose key was added gets their endpoints).  Without it a removed key could
 * still hold queue slots on a node until the node registered again, and an added one probed
 * every node through the master until then.
 */
void dist_follow_keys(struct master *m)
{
    struct mdist *d = m->dist;
    if (d->shared)
        return; /* no node queues, no probe listeners */
    uint64_t version = hrm_authz_version(m->authz);
    if (version == d->keys_version)
        return;
    d->keys_version = version;
    int32_t now = -1;
    size_t told = 0;
    for (size_t n = 0; n < d->cap_probe && (int32_t)n < m->nnodes; n++) {
        struct dprobe *p = &d->probe[n];
        if (!p->ep[0])
            continue;
        if (now < 0)
            now = current_keyset(m);
        if (p->keyset == now)
            continue;
        p->keyset = now;
        if (!m->nodes[n].up)
            continue; /* its next registration's welcome declares them */
        master_welcome_again(m, (int32_t)n);
        if ((int32_t)n < d->cluster->nnodes && d->node_up[n])
            remote_node(m, (int32_t)n, true);
        told++;
    }
    if (told)
        hrm_log(HRM_LOG_NOTICE, "the scheduler keys changed: %zu node%s told the %zu listed now",
                told, told == 1 ? "" : "s", json_array_size(json_array_get(d->keysets, (size_t)now)));
}

void dist_housekeeping(struct master *m)
{
    struct mdist *d = m->dist;
    if (d->shared)
        shared_housekeeping(m);
    int64_t now = hrm_mono_us();
    for (size_t i = 0; i < d->nrs; i++)
        if (d->rs[i].up && now - d->rs[i].last_seen_us > m->cfg.node_timeout_us)
            remote_down(m, &d->rs[i], "no heartbeat");
}

/* ---- what scheduler processes send ---- */

static void on_register(struct master *m, const struct peer_id *from, json_t *msg)
{
    struct mdist *d = m->dist;
    const char *name = json_string_value(json_object_get(msg, "name"));
    json_int_t count = json_integer_value(json_object_get(msg, "instances"));
    if (!*name || strlen(name) >= sizeof(d->rs[0].name) || count < 1 || count > 4096) {
        master_reply_error(m, from, HRM_WERR_BAD_FIELD, -1,
                           "sched_register: a name of 1..%d characters and 1..4096 instances",
                           (int)sizeof(d->rs[0].name) - 1);
        return;
    }
    struct rsched *r = NULL;
    for (size_t i = 0; i < d->nrs; i++)
        if (strcmp(d->rs[i].name, name) == 0)
            r = &d->rs[i];
    if (r && r->up) /* it restarted: what its instances held is gone with them */
        remote_down(m, r, "registered again");
    if (!r || r->count != count) {
        if (!r) {
            HRM_GROW(d->rs, d->cap_rs, d->nrs + 1);
            r = &d->rs[d->nrs++];
            memset(r, 0, sizeof(*r));
            snprintf(r->name, sizeof(r->name), "%s", name);
        }
        r->base = d->next_base; /* a process that changed its count gets new numbers */
        r->count = (int32_t)count;
        d->next_base += r->count;
    }
    r->peer = *from;
    snprintf(r->pub, sizeof(r->pub), "%s", m->sender.pub);
    r->up = true;
    r->load = 0;
    r->last_seen_us = hrm_mono_us();
    json_t *params = json_array(), *queues = json_array(), *nodes = json_array();
    for (int i = 0; i < m->cfg.nparams; i++)
        json_array_append_new(params, json_string(m->cfg.params[i]));
    for (int i = 0; i < m->cfg.nexec_queues; i++)
        json_array_append_new(queues, json_string(m->cfg.exec_queues[i]));
    for (int32_t n = 0; n < d->cluster->nnodes; n++) {
        json_t *e = json_pack("[i, b]", n, d->node_up[n]);
        remote_probe_fields(d, r, n, e); /* [node, up, probe endpoint, agent key] */
        json_array_append_new(nodes, e);
    }
    json_t *w = hrm_wire_new(HRM_WIRE_SCHED_WELCOME);
    json_object_set_new(w, "base", json_integer(r->base));
    json_object_set_new(w, "boot", json_integer(m->boot));
    json_object_set_new(w, "policy", json_string(m->cfg.policy));
    json_object_set_new(w, "params", params);
    json_object_set_new(w, "queues", queues);
    json_object_set_new(w, "nodes", nodes);
    master_send(m, from, w);
    r->welcome_turn = m->turns;
    m->sched.dirty = true; /* jobs waiting for an instance get one */
    hrm_log(HRM_LOG_NOTICE, "scheduler process %s registered: instances %d..%d", r->name, r->base,
            r->base + r->count - 1);
}

/* A scheduler process's bad messages get a reply each but at most this many log lines a
 * minute, then a count: a flooding process cannot drown the log (nor the master in writing it). */
#define SCHED_COMPLAINTS_PER_MINUTE 10
#define SCHED_COMPLAINT_WINDOW_US 60000000

static void refuse(struct master *m, const struct peer_id *to, const char *what, const char *why)
{
    struct usage_complaints *c = &m->sched_complaints;
    int64_t now = hrm_mono_us();
    if (now - c->window_start_us >= SCHED_COMPLAINT_WINDOW_US) {
        if (c->unsaid > 0)
            hrm_log(HRM_LOG_WARNING, "%lld more bad messages from scheduler processes refused "
                    "in the last minute", (long long)c->unsaid);
        *c = (struct usage_complaints){.window_start_us = now};
    }
    if (c->said < SCHED_COMPLAINTS_PER_MINUTE) {
        c->said++;
        hrm_log(HRM_LOG_WARNING, "scheduler process: refused %s: %s%s", what, why,
                c->said == SCHED_COMPLAINTS_PER_MINUTE
                    ? " (more this minute are refused without a line)"
                    : "");
    } else {
        c->unsaid++;
    }
    master_reply_error(m, to, HRM_WERR_BAD_FIELD, -1, "%s: %s", what, why);
}

/* hrm-shared: the table, not an instance's word, says when a job is over. */
static bool runs_left(const struct mdist *d, const struct rjob *j)
{
    for (int32_t i = 0; d->shared && i < j->ntasks; i++)
        if (sched_task_live(j, &j->tasks[i]))
            return true;
    return false;
}

void dist_on_sched_msg(struct master *m, const struct peer_id *from, int type, json_t *msg)
{
    struct mdist *d = m->dist;
    if (type == HRM_WIRE_SCHED_REGISTER) {
        on_register(m, from, msg);
        return;
    }
    struct rsched *r = remote_of_peer(d, from);
    if (!r) {
        master_reply_error(m, from, HRM_WERR_NOT_REGISTERED, -1,
                           "'%s' from a scheduler process that is not registered",
                           hrm_wire_name(type));
        return;
    }
    r->last_seen_us = hrm_mono_us();
    if (type == HRM_WIRE_HEARTBEAT)
        return;
    struct hrm_msg w;
    struct hrm_error err;
    if (hrm_wire_to_msg(type, msg, &w, &err) < 0) {
        refuse(m, from, hrm_wire_name(type), err.text);
        return;
    }
    int32_t g = w.from <= HRM_ADDR_SCHED0 ? hrm_addr_sched_index(w.from) : -1;
    if (g < r->base || g >= r->base + r->count) {
        refuse(m, from, hrm_wire_name(type), "'from' is none of this process's instances");
        return;
    }
    if (d->shared && (type == HRM_MSG_SNAP_REQUEST || type == HRM_MSG_CLAIM)) {
        shared_on_msg(m, r, g, &w);
        dist_drain(m);
        return;
    }
    struct rjob *j = w.job >= 0 ? jobs_find(m, w.job) : NULL;
    if (type == HRM_MSG_JOB_END) {
        if (j && j->sched == REMOTE_JOB && j->inst == g && jobs_live(j) && !runs_left(d, j))
            jobs_finish(m, j);
        return;
    }
    if (d->shared) {
        refuse(m, from, hrm_wire_name(type), "policy hrm-shared takes snap_request, claim and "
               "job_end from scheduler processes");
        return;
    }
    json_int_t to = json_integer_value(json_object_get(msg, "to"));
    int32_t n = (int32_t)(to - HRM_ADDR_NODE0);
    if (to < HRM_ADDR_NODE0 || n >= m->nnodes) {
        refuse(m, from, hrm_wire_name(type), "'to' is no node");
        return;
    }
    if (type == HRM_MSG_RUN) {
        if (!j || w.task < 0 || w.task >= j->ntasks) {
            refuse(m, from, "run", "no such task");
            return;
        }
        if (j->sched != REMOTE_JOB || j->inst != g || j->tasks[w.task].sched < 0)
            return; /* the job moved to another instance meanwhile (this one was down) */
        dist_place(m, j, w.task, n, &w);
    } else {
        dist_probe(m, n, &w); /* hold, del */
    }
    dist_drain(m);
}
