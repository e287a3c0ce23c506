/* The master's side of distributed scheduling (P4): scheduler instances and the negotiator as in-process roles, relaying to the agents' node queue systems. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/cluster.h"
#include "hrm/dsched.h"
#include "hrm/dsetup.h"
#include "hrm/log.h"
#include "hrm/negotiator.h"
#include "hrm/workload.h"
#include "dist_private.h"

/*
 * Where the roles run (docs/runtime.md, "Distributed scheduling"):
 *   - every scheduler instance and the negotiator are sans-IO roles driven by
 *     the master's loop, each with its own hrm_env, exactly as the simulator
 *     drives them;
 *   - every node's queue system runs in its agent (agent_nqs.c), which starts
 *     the tasks itself when a slot frees;
 *   - what the roles send each other crosses the network through the master:
 *     probes and runs from the instances go to the agents, replies come back,
 *     and node-to-node migration traffic is relayed.
 *
 * Unlike the central path, nothing is rebuilt: the roles live as long as the
 * master and take jobs as they come (the workload only grows, and a node that
 * joins is announced with hrm_dsched_node_up).  A restarted master registers
 * the live jobs again and adopts what the agents still hold (hrm_dsched_adopt).
 *
 * Messages to in-process roles are posted and delivered after the current
 * call returns, as the simulator's event queue does: a role never re-enters.
 */

bool dist_policy_known(const char *policy)
{
    return policy && (hrm_dsetup_known(policy) || shared_policy(policy));
}

bool dist_node_queues(const struct master *m)
{
    return m->dist && !m->dist->shared;
}

bool dist_node_free(const struct master *m, int32_t node, struct hrm_res *free_out)
{
    return m->dist->shared && shared_node_free(m, node, free_out);
}

json_t *dist_nodes_extra(const struct master *m)
{
    return m->dist && m->dist->shared ? shared_stats_json(m) : NULL;
}

/* ---- the roles' environment ---- */

static int64_t env_now(struct hrm_env *env)
{
    (void)env;
    return master_now_us();
}

static void env_timer(struct hrm_env *env, int64_t at_us, uint64_t cookie)
{
    struct role_env *re = (struct role_env *)env;
    role_timers_add(&re->m->sched.timers, at_us, re->role, cookie);
}

void dist_post(struct mdist *d, hrm_addr to, const struct hrm_msg *msg)
{
    HRM_GROW(d->posts, d->cap_posts, d->nposts + 1);
    d->posts[d->nposts++] = (struct dpost){to, *msg};
}

static int32_t inst_of_addr(const struct mdist *d, hrm_addr a)
{
    if (a > HRM_ADDR_SCHED0)
        return -1;
    int32_t i = hrm_addr_sched_index(a);
    return i >= 0 && i < d->ninst ? i : -1;
}

bool dist_node_ok(const struct master *m, int32_t n)
{
    return n >= 0 && n < m->nnodes && m->nodes[n].up && m->nodes[n].peer.len > 0;
}

/* The estimate a node uses for a task: the mean run time of the job's
 * finished tasks, else of recent tasks anywhere, else 1 s. */
int64_t dist_estimate_us(const struct mdist *d, const struct rjob *j)
{
    if (j->run_n > 0)
        return j->run_us_sum / j->run_n > 0 ? j->run_us_sum / j->run_n : 1;
    return d->est_ewma_us > 0 ? (int64_t)d->est_ewma_us : DEFAULT_EST_US;
}

static void to_instance(struct master *m, hrm_addr to, const struct hrm_msg *msg, bool relay)
{
    struct mdist *d = m->dist;
    int32_t g = to <= HRM_ADDR_SCHED0 ? hrm_addr_sched_index(to) : -1;
    if (g >= 0 && g < d->ninst) {
        dist_post(d, to, msg);
        return;
    }
    struct rsched *r = g >= 0 ? remote_of_inst(d, g) : NULL;
    if (r && r->up)
        remote_send_msg(m, r, to, msg, relay);
}

void dist_to_instance(struct master *m, hrm_addr to, const struct hrm_msg *msg)
{
    to_instance(m, to, msg, false);
}

/* A run for a node: the task's launch description travels with it, since the
 * node starts the task itself when a slot frees. */
void dist_place(struct master *m, struct rjob *j, int32_t idx, int32_t n, const struct hrm_msg *msg)
{
    struct mdist *d = m->dist;
    struct rtask *t = &j->tasks[idx];
    struct hrm_msg back = {.type = HRM_MSG_TASK_END,
                           .from = hrm_addr_node(n),
                           .job = msg->job,
                           .task = msg->task,
                           .node = n};
    if (!jobs_live(j) || j->failed) {
        /* Cancelled, or the job failed for good: it is skipped, not run. */
        back.status = HRM_OUTCOME_FAILED;
        dist_to_instance(m, msg->from, &back);
        return;
    }
    if (t->state != HRM_RTASK_PENDING) {
        /* Placed twice: cannot happen (a task goes back to its instance only once the table
         * has it pending).  The run the table knows ends it at the instance; this one is
         * dropped. */
        hrm_log(HRM_LOG_WARNING, "instance %d placed task " HRM_TASK_FMT " while it is %s; "
                "ignored", hrm_addr_sched_index(msg->from),
                HRM_TASK_ARGS((long long)j->id, idx, t->attempt), hrm_rtask_state_name(t->state));
        return;
    }
    if (!dist_node_ok(m, n)) {
        back.status = HRM_OUTCOME_LOST; /* placed again elsewhere */
        dist_to_instance(m, msg->from, &back);
        d->lost++;
        return;
    }
    /* Queued on the node until it reports task_started. */
    jobs_task_placed(m, j, idx, n, t->attempt + 1, 0, false);
    json_t *desc = jobs_launch_json(m, j, idx);
    json_object_del(desc, "v");
    json_object_del(desc, "type");
    json_object_set_new(desc, "est_us", json_integer(dist_estimate_us(d, j)));
    json_object_set_new(desc, "queue", json_string(j->queue));
    json_object_set_new(desc, "priority", json_integer(j->priority));
    struct hrm_msg w = *msg;
    w.job = (int32_t)j->id;
    w.task = idx;
    json_t *out = hrm_wire_from_msg(&w);
    json_object_set_new(out, "desc", desc);
    master_send_node(m, n, out);
    trace_step(m, "run", j->id, idx, n);
    d->relayed++;
}

void dist_probe(struct master *m, int32_t n, const struct hrm_msg *msg)
{
    struct mdist *d = m->dist;
    if (!dist_node_ok(m, n)) {
        if (msg->type == HRM_MSG_HOLD) {
            /* Answered for the node: no slot and the worst queue there is.  Not a
             * refusal, which would fail the task if every probe of its round
             * said so; a run sent here anyway comes back lost (dist_place). */
            struct hrm_msg r = {.type = HRM_MSG_HOLD_REPLY,
                                .from = hrm_addr_node(n),
                                .job = -1,
                                .task = -1,
                                .node = n,
                                .attempt = msg->attempt,
                                .gpu_mask = 1u << 20,
                                .value = DOWN_WAIT_US};
            to_instance(m, msg->from, &r, true);
        }
        return; /* del: nothing to undo on a node that is gone */
    }
    master_relay_node(m, n, hrm_wire_from_msg(msg)); /* a hold or its release: no commit */
    trace_step(m, "probe", msg->job, msg->task, n);
    d->relayed++;
    m->counters.probes_relayed++;
}

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *msg)
{
    struct role_env *re = (struct role_env *)env;
    struct master *m = re->m;
    struct mdist *d = m->dist;
    if (to == HRM_ADDR_CLIENT) {
        if (msg->type == HRM_MSG_JOB_END && msg->job >= 0 && (size_t)msg->job < d->map.cap_job_of) {
            struct rjob *j = d->map.job_of[msg->job];
            if (j && j->sched == msg->job && jobs_live(j))
                jobs_finish(m, j);
        }
        return;
    }
    if (to < HRM_ADDR_NODE0) { /* another in-process role (an instance failing a task to itself) */
        dist_post(d, to, msg);
        return;
    }
    int32_t n = to - HRM_ADDR_NODE0;
    if (re->role == ROLE_NEGOTIATOR) { /* migrate_match: job and task are global already */
        if (dist_node_ok(m, n)) {
            master_send_node(m, n, hrm_wire_from_msg(msg));
            d->relayed++;
        }
        return;
    }
    if (msg->type == HRM_MSG_RUN) {
        dist_place(m, d->map.job_of[msg->job], d->map.task_of[msg->task], n, msg);
        return;
    }
    struct hrm_msg w = *msg;
    if (w.task >= 0 && (size_t)w.task < d->map.cap_task_of && w.job >= 0 &&
        (size_t)w.job < d->map.cap_job_of && d->map.job_of[w.job]) {
        w.task = d->map.task_of[w.task]; /* a per-task probe names the task by its global id */
        w.job = (int32_t)d->map.job_of[w.job]->id;
    }
    dist_probe(m, n, &w);
}

/* Delivers posted messages to the in-process roles, in order, until none is left. */
void dist_drain(struct master *m)
{
    struct mdist *d = m->dist;
    if (d->draining)
        return;
    d->draining = true;
    for (size_t i = 0; i < d->nposts; i++) {
        struct dpost p = d->posts[i]; /* a copy: delivering may grow the array */
        int rc = 0;
        int32_t k = inst_of_addr(d, p.to);
        if (k >= 0)
            rc = hrm_dsched_on_msg(d->inst[k], &d->envs[k].env, &p.msg);
        else if (p.to == HRM_ADDR_NEGOTIATOR && d->nego)
            rc = hrm_negotiator_on_msg(d->nego, &d->envs[d->ninst].env, &p.msg);
        if (rc < 0)
            hrm_log(HRM_LOG_WARNING, "scheduler role %d refused a %s from %d: %s", (int)p.to,
                    hrm_msg_name(p.msg.type), (int)p.msg.from, hrm_strerror(rc));
    }
    d->nposts = 0;
    d->draining = false;
}

/* ---- life cycle ---- */

/* A fresh workload and instances over it (the cluster and the negotiator stay). */
static int make_instances(struct mdist *d, struct hrm_error *err)
{
    d->wl = hrm_workload_new();
    for (int32_t i = 0; i < d->ninst; i++) {
        struct hrm_dsched_config c = d->setup.sched;
        c.index = i;
        c.nqs = &d->setup.nqs;
        if (!(d->inst[i] = hrm_dsched_new(d->cluster, d->wl, &c, err)))
            return -HRM_ESPEC;
    }
    return 0;
}

/* hrm-shared: no instances here and no node queues; the commit role (master_shared.c). */
static int new_shared(struct master *m, struct hrm_error *err)
{
    if (m->cfg.nexec_queues > 0 || m->cfg.local_instances > 0)
        return hrm_errorf(err, -HRM_ESPEC, "%s: policy hrm-shared runs its instances in hrm sched "
                          "processes and places straight on the nodes (no node queues)",
                          m->cfg.nexec_queues > 0 ? "--exec-queue" : "--local-instances");
    struct mdist *d = hrm_calloc(1, sizeof(*d));
    m->dist = d;
    d->cluster = hrm_cluster_new(NULL);
    d->wl = hrm_workload_new();
    d->envs = hrm_calloc(1, sizeof(*d->envs));
    return shared_new(m, err);
}

int dist_new(struct master *m, struct hrm_error *err)
{
    if (shared_policy(m->cfg.policy))
        return new_shared(m, err);
    struct hrm_params params = {.items = m->cfg.params, .count = (size_t)m->cfg.nparams};
    struct hrm_dsetup su;
    int rc = hrm_dsetup_parse(m->cfg.policy, &params, LATENCY_US, (uint64_t)master_now_us(), &su,
                              err);
    if (rc < 0)
        return rc;
    if (su.ideal || su.sched.kind == HRM_DSCHED_CENTRAL || su.sched.kind == HRM_DSCHED_SPARROW_BATCH)
        return hrm_errorf(err, -HRM_ESPEC,
                          "policy %s runs in the simulator only; the daemons run d-random, "
                          "sparrow, dhrm, dhrm-batch and dhrm-nego (or any central policy)",
                          m->cfg.policy);
    if (m->cfg.nexec_queues > MAX_EXEC_QUEUES)
        return hrm_errorf(err, -HRM_ESPEC, "at most %d execution queues", MAX_EXEC_QUEUES);
    struct hrm_nqs_queue_cfg queues[MAX_EXEC_QUEUES];
    for (int i = 0; i < m->cfg.nexec_queues; i++) {
        if ((rc = hrm_dsetup_queue_parse(m->cfg.exec_queues[i], &queues[i], err)) < 0)
            return rc;
        for (int k = 0; k < i; k++)
            if (strcmp(queues[k].name, queues[i].name) == 0)
                return hrm_errorf(err, -HRM_ESPEC, "execution queue '%s' given twice",
                                  queues[i].name);
    }
    struct mdist *d = hrm_calloc(1, sizeof(*d));
    m->dist = d;
    d->setup = su;
    d->nqueues = m->cfg.nexec_queues;
    memcpy(d->queues, queues, (size_t)d->nqueues * sizeof(*queues));
    if (d->nqueues > 0) {
        d->setup.nqs.queues = d->queues;
        d->setup.nqs.nqueues = d->nqueues;
    }
    /* The agents' queues cannot preempt: a killed run would need a new attempt
     * number from the master, which only a run message carries. */
    d->setup.nqs.no_preempt = true;
    d->setup.sched.round_timeout_us = ROUND_TIMEOUT_US;
    d->cluster = hrm_cluster_new(NULL);
    d->ninst = m->cfg.local_instances < 0   ? 0
               : m->cfg.local_instances > 0 ? m->cfg.local_instances
                                            : su.instances;
    d->next_base = d->ninst;
    d->inst = hrm_calloc((size_t)d->ninst, sizeof(*d->inst));
    d->envs = hrm_calloc((size_t)d->ninst + 1, sizeof(*d->envs));
    for (int32_t i = 0; i <= d->ninst; i++)
        d->envs[i] = (struct role_env){
            .env = {.now_us = env_now, .send = env_send, .timer = env_timer, .ctx = m},
            .m = m,
            .role = i < d->ninst ? i : ROLE_NEGOTIATOR};
    if ((rc = make_instances(d, err)) < 0)
        return rc;
    if (su.negotiator) {
        struct hrm_negotiator_config nc = d->setup.nego;
        nc.nnodes = DIST_MAX_NODES;
        nc.nqueues = d->nqueues > 0 ? d->nqueues : 1;
        if (!(d->nego = hrm_negotiator_new(&nc, err)))
            return -HRM_ESPEC;
    }
    return 0;
}

void dist_free(struct master *m)
{
    struct mdist *d = m->dist;
    if (!d)
        return;
    shared_free(m);
    if (!d->shared) /* those that went straight from hrm sched to the agents are not here */
        hrm_log(HRM_LOG_INFO, "probes relayed by the master: %llu (holds, releases and replies)",
                (unsigned long long)m->counters.probes_relayed);
    if (d->relayed)
        hrm_log(HRM_LOG_INFO, "distributed scheduling: %lld messages relayed, %lld runs lost "
                "with their node, %lld retried, %lld compactions", (long long)d->relayed,
                (long long)d->lost, (long long)d->retried, (long long)d->compactions);
    for (int32_t i = 0; i < d->ninst; i++)
        hrm_dsched_free(d->inst[i]);
    remote_free(d);
    hrm_negotiator_free(d->nego);
    hrm_workload_free(d->wl);
    hrm_cluster_free(d->cluster);
    hrm_free(d->inst);
    hrm_free(d->envs);
    hrm_free(d->node_up);
    sched_wl_map_free(&d->map);
    hrm_free(d->posts);
    hrm_free(d);
    m->dist = NULL;
}

json_t *dist_welcome(const struct master *m, int32_t n)
{
    const struct mdist *d = m->dist;
    const struct hrm_nqs_config *c = &d->setup.nqs;
    json_t *queues = json_array();
    for (int32_t i = 0; i < d->nqueues; i++) {
        const struct hrm_nqs_queue_cfg *q = &d->queues[i];
        json_array_append_new(queues, json_pack("{s:s, s:i, s:i, s:I, s:I}", "name", q->name,
                                                "priority", q->priority, "max", q->max_running,
                                                "cpu", (json_int_t)q->limit.v[HRM_DIM_CPU], "mem",
                                                (json_int_t)q->limit.v[HRM_DIM_MEM]));
    }
    json_t *w = json_pack("{s:s, s:I, s:[f, f, f], s:b, s:b, s:I, s:I, s:I, s:i}", "policy",
                     m->dist->setup.name, "hold_ttl_us", (json_int_t)c->hold_ttl_us, "eps",
                     c->eps[0], c->eps[1], c->eps[2], "eps_learn", c->eps_learn, "balance",
                     c->balance, "hw_us", (json_int_t)c->hw_us, "lw_us", (json_int_t)c->lw_us,
                     "retry_us", (json_int_t)c->retry_us, "max_parked", (int)c->max_parked);
    json_object_set_new(w, "queues", queues);
    json_t *keys = dist_probe_keys(m->dist, n);
    if (keys) /* its probe listener admits these */
        json_object_set_new(w, "sched_keys", keys);
    return w;
}

const char *dist_refuse_spec(struct master *m, const json_t *spec)
{
    struct mdist *d = m->dist;
    if (!d->shared && strcmp(json_string_value(json_object_get(spec, "kind")), "stream") == 0)
        return "stream jobs need the central path or hrm-shared: their tasks are restarted by "
               "the master's scheduler (start the master with a central policy or hrm-shared)";
    size_t g;
    const json_t *gr;
    if (d->shared)
        return NULL; /* GPUs and every queue name are the central path's, checked there */
    json_array_foreach(json_object_get(spec, "tasks"), g, gr)
    {
        if (json_integer_value(json_object_get(gr, "gpus")) > 0)
            return "GPU tasks need the central path: the node queues of distributed scheduling "
                   "place cpu and memory only (start the master with a central policy)";
    }
    if (d->nqueues == 0)
        return NULL;
    /* A job names one of the execution queues; "default" (the name when none is given)
     * means the first.  Each task keeps within its queue's per-task limit. */
    const char *qname = json_string_value(json_object_get(spec, "queue"));
    int32_t q = -1;
    for (int32_t i = 0; i < d->nqueues && qname; i++)
        if (strcmp(d->queues[i].name, qname) == 0)
            q = i;
    if (q < 0 && qname && strcmp(qname, "default") == 0)
        q = 0;
    if (q < 0) {
        size_t off = (size_t)snprintf(d->why, sizeof(d->why),
                                      "queue '%s' is not an execution queue of this cluster (",
                                      qname ? qname : "");
        for (int32_t i = 0; i < d->nqueues && off < sizeof(d->why); i++)
            off += (size_t)snprintf(d->why + off, sizeof(d->why) - off, "%s%s", i ? ", " : "",
                                    d->queues[i].name);
        if (off < sizeof(d->why))
            snprintf(d->why + off, sizeof(d->why) - off, ")");
        return d->why;
    }
    const struct hrm_res *lim = &d->queues[q].limit;
    json_array_foreach(json_object_get(spec, "tasks"), g, gr)
    {
        int64_t cpu = json_integer_value(json_object_get(gr, "cpu"));
        int64_t mem = json_integer_value(json_object_get(gr, "mem"));
        if ((lim->v[HRM_DIM_CPU] > 0 && cpu > lim->v[HRM_DIM_CPU]) ||
            (lim->v[HRM_DIM_MEM] > 0 && mem > lim->v[HRM_DIM_MEM])) {
            snprintf(d->why, sizeof(d->why),
                     "tasks[%zu] asks more than queue '%s' allows a task (cpus %.3g, mem %lld MiB)",
                     g, d->queues[q].name, (double)lim->v[HRM_DIM_CPU] / 1000.0,
                     (long long)(lim->v[HRM_DIM_MEM] >> 20));
            return d->why;
        }
    }
    return NULL;
}

/* ---- nodes ---- */

static void tell_node(struct master *m, int32_t n, bool up)
{
    struct mdist *d = m->dist;
    if (d->node_up[n] == up)
        return;
    d->node_up[n] = up;
    if (d->shared)
        shared_node(m, n, up);
    for (int32_t i = 0; i < d->ninst; i++)
        hrm_dsched_node_up(d->inst[i], &d->envs[i].env, n, up);
    remote_node(m, n, up);
}

/* The cluster the instances see follows the master's node table. */
static int sync_nodes(struct master *m, struct hrm_error *err)
{
    struct mdist *d = m->dist;
    int32_t known = d->cluster->nnodes;
    for (int32_t n = d->cluster->nnodes; n < m->nnodes && n < DIST_MAX_NODES; n++) {
        const struct rnode *rn = &m->nodes[n];
        int rack = hrm_cluster_find_rack(d->cluster, rn->rack);
        if (rack < 0 && (rack = hrm_cluster_add_rack(d->cluster, rn->rack, err)) < 0)
            return rack;
        struct hrm_node_desc nd = {.name = rn->name,
                                   .rack = rack,
                                   .cores = rn->cores > 0 ? rn->cores : 1,
                                   .cpu_speed = 1.0,
                                   .mem = rn->mem,
                                   /* the node queues place cpu and memory only */
                                   .gpus = d->shared ? rn->gpus : 0,
                                   .gpu_mem = d->shared ? rn->gpu_mem : 0};
        int rc = hrm_cluster_add_node(d->cluster, &nd, err);
        if (rc < 0)
            return rc;
        d->node_up = hrm_realloc(d->node_up, (size_t)d->cluster->nnodes * sizeof(*d->node_up));
        d->node_up[n] = false;
    }
    if (m->nnodes > DIST_MAX_NODES)
        hrm_log(HRM_LOG_WARNING, "distributed scheduling uses the first %d nodes only",
                DIST_MAX_NODES);
    if (d->shared && d->cluster->nnodes > known) { /* new nodes join the cell up */
        int rc = shared_sync(m, err);
        if (rc < 0)
            return rc;
    }
    for (int32_t n = 0; n < d->cluster->nnodes; n++)
        tell_node(m, n, m->nodes[n].up);
    return 0;
}

void dist_node_up(struct master *m, int32_t node)
{
    if (node < m->dist->cluster->nnodes)
        tell_node(m, node, true);
    else
        m->sched.dirty = true;
    dist_drain(m);
}

void dist_node_down(struct master *m, int32_t node)
{
    if (node < m->dist->cluster->nnodes)
        tell_node(m, node, false);
    dist_drain(m);
}

/* ---- jobs ---- */

/* Load of instance g, local or in a scheduler process; -1 when it cannot take jobs. */
static int64_t instance_load(struct mdist *d, int32_t g)
{
    if (g < d->ninst)
        return hrm_dsched_load(d->inst[g]);
    struct rsched *r = remote_of_inst(d, g);
    /* A process's load is shared by its instances; each counts its part. */
    return r && r->up ? r->load / r->count : -1;
}

int32_t dist_pick_instance(struct master *m)
{
    struct mdist *d = m->dist;
    int32_t total = d->next_base, best = -1;
    int64_t best_load = 0;
    /* The least busy instance takes it (or the next in turn: register=1), starting after
     * the last one chosen so that ties rotate. */
    for (int32_t i = 0; i < total; i++) {
        int32_t g = (d->next_inst + i) % total;
        int64_t load = instance_load(d, g);
        if (load < 0)
            continue;
        if (best < 0 || load < best_load) {
            best = g;
            best_load = load;
            if (d->setup.register_rr)
                break;
        }
    }
    if (best >= 0)
        d->next_inst = (best + 1) % total;
    return best;
}

static int register_job(struct master *m, struct rjob *j, struct hrm_error *err)
{
    struct mdist *d = m->dist;
    if (d->shared && !shared_ready(m))
        return 0; /* no node yet: nothing to commit to */
    int32_t k = dist_pick_instance(m);
    if (k < 0)
        return 0; /* only scheduler processes schedule and none is connected: it waits */
    if (k >= d->ninst) /* a scheduler process takes it; the master keeps no workload for it */
        return remote_register_job(m, j, remote_of_inst(d, k), k, err);
    int32_t sj;
    int rc = sched_wl_add_job(d->wl, &d->map, j, dist_estimate_us(d, j), &sj, err);
    if (rc < 0)
        return rc;
    if (sj < 0) {
        jobs_finish(m, j); /* every task ended while no scheduler ran (a restart) */
        return 0;
    }
    j->inst = k;
    trace_step(m, "handed", j->id, -1, -1);
    struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = sj};
    if ((rc = hrm_dsched_on_msg(d->inst[k], &d->envs[k].env, &sub)) < 0)
        return hrm_errorf(err, rc, "scheduler instance %d refused job_submit", k);
    /* Runs the agents still hold (a restart) are adopted, not placed again. */
    for (int32_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i].sched >= 0 && j->tasks[i].state == HRM_RTASK_RUNNING &&
            (rc = hrm_dsched_adopt(d->inst[k], j->tasks[i].sched)) < 0)
            return hrm_errorf(err, rc, "scheduler instance %d refused to adopt a run", k);
    return 0;
}

/*
 * The workload only grows while the master runs (the roles name tasks by
 * index), so once every instance is idle -- no task of any job registered,
 * which also means no job refers to the workload -- and it has grown past
 * --compact-tasks, the instances start over on an empty one.  Replies to
 * probes of the old instances find no round and are dropped (their holds get
 * DEL, or expire).
 */
static int maybe_compact(struct master *m, struct hrm_error *err)
{
    struct mdist *d = m->dist;
    if (d->wl->ntasks < m->cfg.compact_tasks || d->nposts > 0)
        return 0;
    for (int32_t i = 0; i < d->ninst; i++)
        if (hrm_dsched_load(d->inst[i]) > 0)
            return 0;
    hrm_log(HRM_LOG_INFO, "scheduler instances idle: their workload of %d tasks is dropped",
            d->wl->ntasks);
    for (int32_t i = 0; i < d->ninst; i++) {
        hrm_dsched_free(d->inst[i]);
        d->inst[i] = NULL;
    }
    hrm_workload_free(d->wl);
    sched_wl_map_free(&d->map);
    role_timers_clear(&m->sched.timers); /* the old instances' passes and round timeouts */
    for (int32_t n = 0; n < d->cluster->nnodes; n++)
        d->node_up[n] = true; /* new instances take the cluster's nodes as up; sync corrects */
    d->compactions++;
    return make_instances(d, err);
}

int dist_rebuild(struct master *m, struct hrm_error *err)
{
    int rc = maybe_compact(m, err);
    if (rc == 0)
        rc = sync_nodes(m, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < m->njobs; i++) {
        struct rjob *j = m->jobs[i];
        if (j && jobs_live(j) && j->sched < 0 && (rc = register_job(m, j, err)) < 0)
            return rc;
    }
    dist_drain(m);
    return 0;
}

/* Tells the job's instance how a task's run ended; the task leaves the role
 * (its sched index is dropped) unless it is to be placed again. */
static void feed_end(struct master *m, struct rjob *j, int32_t idx, enum hrm_task_outcome outcome)
{
    struct mdist *d = m->dist;
    struct rtask *t = &j->tasks[idx];
    if (d->shared) { /* the cell hears it even while no instance holds the job */
        shared_task_end(m, j, idx, outcome);
        return;
    }
    if (t->sched < 0 || j->sched < 0)
        return;
    if (j->sched == REMOTE_JOB) {
        remote_task_end(m, j, idx, outcome);
        return;
    }
    struct hrm_msg e = {.type = HRM_MSG_TASK_END,
                        .from = t->node >= 0 ? hrm_addr_node(t->node) : HRM_ADDR_CENTRAL,
                        .status = (uint16_t)outcome,
                        .job = j->sched,
                        .task = t->sched,
                        .node = t->node};
    if (outcome == HRM_OUTCOME_DONE || outcome == HRM_OUTCOME_FAILED)
        t->sched = -1;
    dist_post(d, hrm_addr_sched(j->inst), &e);
}

/* The job failed for good: as on the central path, its tasks that have not
 * started are skipped -- here also those already waiting in a node's queue,
 * which the node drops on task_kill.  (Pending ones are skipped when their
 * instance sends their run: dist_place.) */
static void skip_queued(struct master *m, struct rjob *j)
{
    for (int32_t i = 0; i < j->ntasks; i++) {
        struct rtask *t = &j->tasks[i];
        if (t->state != HRM_RTASK_RUNNING || t->start_us >= 0)
            continue;
        master_kill_run(m, t->node, j->id, i, t->attempt);
        feed_end(m, j, i, HRM_OUTCOME_FAILED);
        task_set_state(m, j, i, HRM_RTASK_SKIPPED);
        jobs_persist_task(m, j, i);
    }
}

/* Every task of a job a scheduler process holds has its final outcome, and the process holds
 * none of them any more (a pending task of a failed job still comes back from it). */
static bool remote_job_over(const struct rjob *j)
{
    for (int32_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i].sched >= 0 || j->tasks[i].state == HRM_RTASK_PENDING ||
            j->tasks[i].state == HRM_RTASK_RUNNING)
            return false;
    return true;
}

void dist_task_end(struct master *m, struct rjob *j, int32_t idx, bool ok)
{
    struct mdist *d = m->dist;
    struct rtask *t = &j->tasks[idx];
    if (t->start_us >= 0 && t->end_us >= t->start_us) {
        int64_t run = t->end_us - t->start_us;
        j->run_us_sum += run;
        j->run_n++;
        d->est_ewma_us = d->est_ewma_us > 0 ? 0.9 * d->est_ewma_us + 0.1 * (double)run : (double)run;
    }
    if (ok) {
        task_set_state(m, j, idx, HRM_RTASK_DONE);
        feed_end(m, j, idx, HRM_OUTCOME_DONE);
    } else if (++t->fails < m->cfg.max_attempts && !j->failed) {
        task_set_state(m, j, idx, HRM_RTASK_PENDING); /* another attempt, placed anew */
        d->retried++;
        feed_end(m, j, idx, HRM_OUTCOME_LOST);
    } else {
        task_set_state(m, j, idx, HRM_RTASK_FAILED);
        feed_end(m, j, idx, HRM_OUTCOME_FAILED);
        if (!j->failed)
            skip_queued(m, j);
        j->failed = true;
    }
    /* The job ends with its last task_end, as on the central path: its scheduler process's
     * job_end, two hops later (and later still when that process waits for a core), then
     * finds it ended.  An in-process instance's job_end comes in this turn anyway. */
    if (j->sched == REMOTE_JOB && !d->shared && jobs_live(j) && remote_job_over(j))
        jobs_finish(m, j);
    dist_drain(m);
}

void dist_task_lost(struct master *m, struct rjob *j, int32_t idx)
{
    m->dist->lost++;
    feed_end(m, j, idx, HRM_OUTCOME_LOST);
    dist_drain(m);
}

void dist_job_cancelled(struct master *m, struct rjob *j)
{
    /* Every task the instance still holds ends now; rounds skip them, and
     * runs already sent are killed (running) or dropped (queued) by on_cancel. */
    for (int32_t i = 0; i < j->ntasks; i++)
        feed_end(m, j, i, HRM_OUTCOME_FAILED);
    j->sched = -1; /* the instance's job_end then finds nothing to finish: on_cancel does */
    dist_drain(m);
}

/* ---- timers ---- */

int dist_run_timers(struct master *m, struct hrm_error *err)
{
    struct mdist *d = m->dist;
    struct role_timer due[32];
    size_t ndue = role_timers_take_due(&m->sched.timers, master_now_us(), due, 32);
    for (size_t i = 0; i < ndue; i++) {
        if (due[i].role < 0 || due[i].role >= d->ninst)
            continue; /* the negotiator keeps no timers */
        m->sched.passes++;
        int rc = hrm_dsched_on_timer(d->inst[due[i].role], &d->envs[due[i].role].env,
                                     due[i].cookie);
        if (rc < 0)
            return hrm_errorf(err, rc, "scheduler instance %d: timer failed", due[i].role);
        dist_drain(m);
    }
    return 0;
}

/* ---- what the agents' queue systems send ---- */

static void relay_to_node(struct master *m, int32_t from_node, int32_t to_node, json_t *msg,
                          const struct hrm_msg *parsed)
{
    struct hrm_msg w = *parsed;
    w.from = hrm_addr_node(from_node);
    json_t *out = hrm_wire_from_msg(&w);
    json_t *desc = json_object_get(msg, "desc");
    if (desc)
        json_object_set(out, "desc", desc);
    master_send_node(m, to_node, out);
    m->dist->relayed++;
}

/* A node hands a queued task to another (migration): the table follows it. */
static void on_migrated_run(struct master *m, int32_t n, int32_t to, json_t *msg,
                            const struct hrm_msg *r)
{
    struct rjob *j = jobs_find(m, r->job);
    const json_t *desc = json_object_get(msg, "desc");
    json_int_t attempt = json_integer_value(json_object_get(desc, "attempt"));
    if (!j || r->task < 0 || r->task >= j->ntasks || !desc) {
        hrm_log(HRM_LOG_INFO, "node %s moved an unknown task " HRM_TASK_FMT, m->nodes[n].name,
                HRM_TASK_ARGS((long long)r->job, r->task, attempt));
        return;
    }
    struct rtask *t = &j->tasks[r->task];
    if (t->state != HRM_RTASK_RUNNING || t->node != n || t->attempt != attempt)
        return; /* stale: the task was placed again meanwhile */
    if (!dist_node_ok(m, to)) {
        jobs_task_lost(m, j, r->task);
        return;
    }
    task_set_node(m, j, r->task, to);
    m->counters.negotiator_moves++;
    jobs_persist_task(m, j, r->task);
    events_task(m, "task_migrated", j, r->task, json_pack("{s:s}", "from", m->nodes[n].name));
    relay_to_node(m, n, to, msg, r);
}

/* A role message the master cannot deliver: the sender hears why (and the log). */
static void refuse(struct master *m, int32_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void refuse(struct master *m, int32_t n, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    hrm_log(HRM_LOG_INFO, "node %s: %s", m->nodes[n].name, text);
    /* Records nothing either: it leaves with the relays, in the order of the node's messages. */
    master_relay(m, &m->nodes[n].peer, hrm_wire_error(HRM_WERR_BAD_FIELD, -1, "%s", text));
}

void dist_on_role_msg(struct master *m, int32_t n, int type, json_t *msg)
{
    struct mdist *d = m->dist;
    struct hrm_msg r;
    struct hrm_error err;
    if (hrm_wire_to_msg(type, msg, &r, &err) < 0) {
        refuse(m, n, "%s", err.text);
        return;
    }
    r.from = hrm_addr_node(n); /* a node speaks for itself only */
    json_int_t to = json_integer_value(json_object_get(msg, "to"));
    switch (type) {
    case HRM_MSG_HOLD_REPLY:
    case HRM_MSG_GET_TASK:
        if (to > HRM_ADDR_SCHED0 || to < INT32_MIN ||
            (inst_of_addr(d, (hrm_addr)to) < 0 &&
             !remote_of_inst(d, hrm_addr_sched_index((hrm_addr)to)))) {
            refuse(m, n, "%s: 'to' (%lld) is no scheduler instance", hrm_msg_name(r.type),
                   (long long)to);
            return;
        }
        r.node = n;
        trace_step(m, "reply", r.job, r.task, n);
        m->counters.probes_relayed++;
        to_instance(m, (hrm_addr)to, &r, true); /* the node's word on a probe: no commit */
        break;
    case HRM_MSG_MIGRATE_REQUEST:
    case HRM_MSG_IDLE_ADVERT:
        if (!d->nego || n >= DIST_MAX_NODES || r.status >= (d->nqueues > 0 ? d->nqueues : 1)) {
            refuse(m, n, "%s: %s", hrm_msg_name(r.type),
                   !d->nego ? "no negotiator runs (policy dhrm-nego runs one)"
                            : "queue out of range");
            return;
        }
        r.node = n;
        dist_post(d, HRM_ADDR_NEGOTIATOR, &r);
        break;
    default: { /* node to node: migration */
        int32_t k = (int32_t)(to - HRM_ADDR_NODE0);
        if (to < HRM_ADDR_NODE0 || k >= m->nnodes || k == n) {
            refuse(m, n, "%s: 'to' (%lld) is no other node", hrm_msg_name(r.type),
                   (long long)to);
            return;
        }
        if (type == HRM_MSG_RUN) {
            on_migrated_run(m, n, k, msg, &r);
        } else if (dist_node_ok(m, k)) {
            relay_to_node(m, n, k, msg, &r);
        } else if (type == HRM_MSG_MIGRATE_OFFER) { /* the target is gone: it refuses */
            struct hrm_msg no = {.type = HRM_MSG_MIGRATE_REFUSE,
                                 .from = hrm_addr_node(k),
                                 .job = r.job,
                                 .task = r.task,
                                 .node = k,
                                 .status = HRM_NQS_OVERLOADED};
            master_send_node(m, n, hrm_wire_from_msg(&no));
        }
        break;
    }
    }
    dist_drain(m);
}
