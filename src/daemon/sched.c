/* hrm sched: scheduler instances of the master's distributed policy in a process of their own, talking to the master; one reactor thread. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/daemon.h"
#include "hrm/dsched.h"
#include "hrm/dsetup.h"
#include "hrm/log.h"
#include "hrm/ssched.h"
#include "hrm/state.h"
#include "hrm/transport.h"
#include "hrm/wire.h"
#include "hrm/workload.h"
#include "peer.h"
#include "roletimers.h"
#include "sched_probe.h"
#include "sim/ssim_private.h" /* hrm-shared's parameters, parsed as hrm sim parses them */
#include "taskmap.h"

/*
 * The instances are the roles the master runs itself (src/sched/dsched*.c),
 * built from the policy, parameters and execution queues the master's
 * sched_welcome gives, numbered base .. base + count - 1 by the master.  The
 * master hands each one jobs (sched_job, the tasks' requests and estimates),
 * the ends of their tasks and the nodes' replies to their probes; the
 * instances' probes and runs go back to it, which relays them to the agents
 * (master_remote.c).  Tasks travel as (job id, index in the job), as
 * everywhere on the wire; the roles' workload numbers them densely, and this
 * file translates at its edges.  The process keeps nothing durable: when the
 * master restarts, or when it registers again, it starts over and the master
 * hands the jobs out anew.
 *
 * With the master's policy hrm-shared the instances are the shared-state ones
 * (src/sched/ssched*.c) instead: each asks the master for a snapshot of the
 * cell, places its job's ready tasks on it and sends its claims, which the
 * master validates and launches (master_shared.c).  A snapshot reply carries
 * the nodes that changed since the instance's last one; `snaps` keeps, per
 * instance, the copy the master knows it holds.
 */

#define REGISTER_RETRY_US 1000000
#define TURN_MAX_MSGS 512
#define HEARTBEAT_US 1000000
#define COMPACT_TASKS 65536

struct sched_env {
    struct hrm_env env; /* first */
    struct schedp *p;
    int32_t i; /* local instance */
};

struct spost {
    int32_t i;
    struct hrm_msg msg;
};

struct schedp {
    struct hrm_sched_config cfg;
    char name[48], endpoint[512], keys_dir[1100];
    void *zctx;
    struct hrm_keypair mine; /* the scheduler key pair; probes borrows it */
    struct hrm_conn *conn;
    struct sched_probes *probes; /* straight to the agents that take probes directly */
    int sigfd;
    bool registered, stop, refused;
    int64_t register_sent_us, next_heartbeat_us;
    json_t *outq;
    /* the roles, once welcomed */
    int32_t base, count;
    struct hrm_dsetup setup;
    struct hrm_nqs_queue_cfg queues[16];
    struct hrm_cluster *cluster;
    struct hrm_workload *wl;
    struct hrm_dsched **inst;
    struct hrm_ssched **sinst;   /* hrm-shared: these instead of inst */
    struct hrm_snapshot *snaps;  /* hrm-shared: per instance, the cell as the master sent it */
    struct ssim_setup ssetup;
    struct sched_env *envs;
    int64_t *job_id;   /* per workload job: the master's id */
    int32_t *job_inst; /* per workload job: the local instance holding it */
    bool *node_up;     /* per node: what the master said, for a rebuild */
    size_t cap_node_up;
    int32_t *task_idx; /* per workload task: index in its job */
    size_t cap_job_id, cap_task_idx;
    struct task_map ids; /* (job id, index) -> workload task */
    json_t *building; /* sched_job chunks of the job being received */
    int64_t building_job;
    int32_t building_inst;
    struct role_timers timers; /* role: the local instance */
    struct spost *posts;
    size_t nposts, cap_posts;
    bool draining;
    FILE *trace; /* --trace: the probing rounds' steps (sched_trace) */
    int64_t traced_sent; /* messages traced as sent since the last flush line */
};

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * The step trace (hrm sched --trace FILE): one line per step, "WALL_US STEP JOB TASK NODE" as
 * in the master's (master_trace.c), on the same clock, so that bench p4real can put the two
 * side by side and split the master's "handed -> run" into its hops and this process's round.
 * Steps: job (JOB the master's id: its last chunk arrived and it joined its instance), hold
 * (JOB the probe id, TASK the slots wanted, NODE: sent straight to the node), reply (JOB the
 * probe id, TASK the slots held or -reason, NODE: its answer arrived), run (JOB, TASK, NODE:
 * the instance placed the task; the run leaves for the master with the turn), and flush (JOB
 * the messages traced in the turn, TASK -1, NODE -1: they left).
 */
static void sched_trace(struct schedp *p, const char *step, int64_t job, int64_t task,
                        int32_t node)
{
    if (p->trace)
        fprintf(p->trace, "%lld %s %lld %lld %d\n", (long long)wall_us(), step, (long long)job,
                (long long)task, node);
}

/* ---- sending to the master ---- */

static void send_msg(struct schedp *p, json_t *msg) /* takes msg; leaves with the turn */
{
    json_array_append_new(p->outq, msg);
}

static void flush(struct schedp *p)
{
    sched_probes_flush(p->probes); /* the turn's probes straight to the nodes */
    if (p->traced_sent > 0)
        sched_trace(p, "flush", p->traced_sent, -1, -1);
    p->traced_sent = 0;
    size_t n = json_array_size(p->outq);
    if (n == 0)
        return;
    for (size_t off = 0; off < n; off += 512) {
        json_t *items = json_array();
        for (size_t i = off; i < n && i < off + 512; i++)
            json_array_append(items, json_array_get(p->outq, i));
        size_t len;
        char *text = json_array_size(items) > 1 ? hrm_wire_dump_batch(items, &len) : NULL;
        if (text) {
            hrm_conn_send_raw(p->conn, text, len);
            free(text);
        } else {
            for (size_t i = 0; i < json_array_size(items); i++)
                hrm_conn_send(p->conn, json_array_get(items, i));
        }
        json_decref(items);
    }
    json_array_clear(p->outq);
}

/* ---- the roles' environment ---- */

static int64_t env_now(struct hrm_env *env)
{
    (void)env;
    return wall_us();
}

static void env_timer(struct hrm_env *env, int64_t at_us, uint64_t cookie)
{
    struct sched_env *se = (struct sched_env *)env;
    role_timers_add(&se->p->timers, at_us, se->i, cookie);
}

static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *msg)
{
    struct sched_env *se = (struct sched_env *)env;
    struct schedp *p = se->p;
    if (to <= HRM_ADDR_SCHED0) { /* an instance failing a task to itself */
        int32_t i = hrm_addr_sched_index(to) - p->base;
        if (i >= 0 && i < p->count) {
            HRM_GROW(p->posts, p->cap_posts, p->nposts + 1);
            p->posts[p->nposts++] = (struct spost){i, *msg};
        }
        return;
    }
    struct hrm_msg w = *msg;
    if (w.job >= 0 && w.job < p->wl->njobs) {
        if (w.task >= 0 && w.task < p->wl->ntasks)
            w.task = p->task_idx[w.task];
        w.job = (int32_t)p->job_id[w.job];
    }
    json_t *out = hrm_wire_from_msg(&w);
    /* A probe and its release go straight to a node that takes them and is up; a run goes
     * through the master, which records the placement before it leaves. */
    int32_t n = to - HRM_ADDR_NODE0;
    if ((w.type == HRM_MSG_HOLD || w.type == HRM_MSG_DEL) && n >= 0 &&
        n < p->cluster->nnodes && p->node_up[n] && sched_probes_send(p->probes, n, out)) {
        if (w.type == HRM_MSG_HOLD) {
            sched_trace(p, "hold", w.attempt, w.status, n);
            p->traced_sent++;
        }
        json_decref(out);
        return;
    }
    if (w.type == HRM_MSG_RUN) {
        sched_trace(p, "run", w.job, w.task, n);
        p->traced_sent++;
    }
    if (to != HRM_ADDR_CLIENT) /* job_end goes to the master itself */
        json_object_set_new(out, "to", json_integer(to));
    send_msg(p, out);
}

static bool welcomed(const struct schedp *p)
{
    return p->inst || p->sinst;
}

static void deliver(struct schedp *p, int32_t i, const struct hrm_msg *m)
{
    int rc = p->sinst ? hrm_ssched_on_msg(p->sinst[i], &p->envs[i].env, m)
                      : hrm_dsched_on_msg(p->inst[i], &p->envs[i].env, m);
    if (rc < 0)
        hrm_log(HRM_LOG_INFO, "instance %d refused a %s: %s", p->base + i, hrm_msg_name(m->type),
                hrm_strerror(rc));
}

static void drain(struct schedp *p)
{
    if (p->draining)
        return;
    p->draining = true;
    for (size_t k = 0; k < p->nposts; k++) {
        struct spost s = p->posts[k];
        deliver(p, s.i, &s.msg);
    }
    p->nposts = 0;
    p->draining = false;
}

/* ---- life cycle of the roles ---- */

static void roles_free(struct schedp *p)
{
    for (int32_t i = 0; p->inst && i < p->count; i++)
        hrm_dsched_free(p->inst[i]);
    for (int32_t i = 0; p->sinst && i < p->count; i++) {
        hrm_ssched_free(p->sinst[i]);
        hrm_snapshot_fini(&p->snaps[i]);
    }
    hrm_free(p->inst);
    hrm_free(p->sinst);
    hrm_free(p->snaps);
    p->sinst = NULL;
    p->snaps = NULL;
    hrm_free(p->envs);
    hrm_workload_free(p->wl);
    hrm_cluster_free(p->cluster);
    hrm_free(p->job_id);
    hrm_free(p->job_inst);
    hrm_free(p->task_idx);
    task_map_clear(&p->ids);
    json_decref(p->building);
    p->inst = NULL;
    p->envs = NULL;
    p->wl = NULL;
    p->cluster = NULL;
    p->job_id = NULL;
    p->job_inst = NULL;
    p->task_idx = NULL;
    p->building = NULL;
    p->cap_job_id = p->cap_task_idx = 0;
    role_timers_clear(&p->timers);
    p->nposts = 0;
    sched_probes_clear(p->probes);
}

static int add_node(struct schedp *p, int32_t n, struct hrm_error *err)
{
    if (p->cluster->nracks == 0 && hrm_cluster_add_rack(p->cluster, "r", err) < 0)
        return -1;
    while (p->cluster->nnodes <= n) {
        /* Instances use a node's index only (its capacity is the node's own business). */
        char name[32];
        snprintf(name, sizeof(name), "n%d", p->cluster->nnodes);
        struct hrm_node_desc d = {.name = name, .rack = 0, .cores = 1, .cpu_speed = 1.0,
                                  .mem = 1};
        if (hrm_cluster_add_node(p->cluster, &d, err) < 0)
            return -1;
        for (int32_t i = 0; p->inst && i < p->count; i++) /* a node is down until told */
            hrm_dsched_node_up(p->inst[i], &p->envs[i].env, p->cluster->nnodes - 1, false);
        HRM_GROW(p->node_up, p->cap_node_up, (size_t)p->cluster->nnodes);
        p->node_up[p->cluster->nnodes - 1] = false;
    }
    return 0;
}

static void set_node(struct schedp *p, int32_t n, bool up)
{
    p->node_up[n] = up;
    if (!up)
        sched_probes_down(p->probes, n);
    for (int32_t i = 0; i < p->count; i++)
        hrm_dsched_node_up(p->inst[i], &p->envs[i].env, n, up);
}

static int make_instances(struct schedp *p, struct hrm_error *err)
{
    p->wl = hrm_workload_new();
    p->inst = hrm_calloc((size_t)p->count, sizeof(*p->inst));
    for (int32_t i = 0; i < p->count; i++) {
        struct hrm_dsched_config c = p->setup.sched;
        c.index = p->base + i;
        c.nqs = &p->setup.nqs;
        c.round_timeout_us = 2000000; /* as the master's own: a dead node's probe is given up */
        if (!(p->inst[i] = hrm_dsched_new(p->cluster, p->wl, &c, err)))
            return -HRM_ESPEC;
    }
    for (int32_t n = 0; n < p->cluster->nnodes; n++) /* new instances take every node as up */
        if (!p->node_up[n])
            for (int32_t i = 0; i < p->count; i++)
                hrm_dsched_node_up(p->inst[i], &p->envs[i].env, n, false);
    return 0;
}

/* The workload only grows; once every instance is idle and it is large, they start over. */
static int maybe_compact(struct schedp *p, struct hrm_error *err)
{
    if (p->sinst || p->wl->ntasks < COMPACT_TASKS || p->nposts > 0)
        return 0;
    for (int32_t i = 0; i < p->count; i++)
        if (hrm_dsched_load(p->inst[i]) > 0)
            return 0;
    for (int32_t i = 0; i < p->count; i++)
        hrm_dsched_free(p->inst[i]);
    hrm_free(p->inst);
    hrm_workload_free(p->wl);
    task_map_clear(&p->ids);
    role_timers_clear(&p->timers);
    hrm_log(HRM_LOG_INFO, "instances idle: their workload is dropped");
    return make_instances(p, err);
}

static void make_envs(struct schedp *p)
{
    p->envs = hrm_calloc((size_t)p->count, sizeof(*p->envs));
    for (int32_t i = 0; i < p->count; i++)
        p->envs[i] = (struct sched_env){
            .env = {.now_us = env_now, .send = env_send, .timer = env_timer, .ctx = p},
            .p = p,
            .i = i};
}

/* hrm-shared: the shared-state instances over a workload of the jobs given here.  The
 * decision time is the simulator's model of a scheduler's thinking; here the thinking is
 * real, so it is 0 unless the parameters ask for it (t_job_ms, t_task_ms: experiments). */
static int shared_roles_new(struct schedp *p, const char *policy, const struct hrm_params *params,
                            struct hrm_error *err)
{
    int rc = ssim_setup_parse(policy, params, (uint64_t)wall_us(), &p->ssetup, err);
    if (rc < 0)
        return rc;
    bool t_job = false, t_task = false;
    for (size_t i = 0; i < params->count; i++) {
        t_job |= strncmp(params->items[i], "t_job_ms=", 9) == 0;
        t_task |= strncmp(params->items[i], "t_task_ms=", 10) == 0;
    }
    if (!t_job)
        p->ssetup.sched.t_job_us = 0;
    if (!t_task)
        p->ssetup.sched.t_task_us = 0;
    p->cluster = hrm_cluster_new(NULL);
    p->wl = hrm_workload_new();
    make_envs(p);
    p->sinst = hrm_calloc((size_t)p->count, sizeof(*p->sinst));
    p->snaps = hrm_calloc((size_t)p->count, sizeof(*p->snaps));
    for (int32_t i = 0; i < p->count; i++) {
        struct hrm_ssched_config c = p->ssetup.sched;
        c.index = p->base + i;
        c.seed = p->ssetup.sched.seed + (uint64_t)i;
        hrm_snapshot_init(&p->snaps[i], 0);
        if (!(p->sinst[i] = hrm_ssched_new(p->cluster, p->wl, &c, err)))
            return -HRM_ESPEC;
    }
    return 0;
}

/* sched_welcome: the master's policy, parameters, execution queues and nodes. */
static int roles_new(struct schedp *p, const json_t *w, struct hrm_error *err)
{
    roles_free(p);
    const char *policy = json_string_value(json_object_get(w, "policy"));
    const json_t *jp = json_object_get(w, "params"), *jq = json_object_get(w, "queues");
    size_t np = json_array_size(jp), nq = json_array_size(jq);
    const char **items = hrm_calloc(np + 1, sizeof(*items));
    for (size_t i = 0; i < np; i++)
        items[i] = json_string_value(json_array_get(jp, i));
    struct hrm_params params = {.items = items, .count = np};
    p->base = (int32_t)json_integer_value(json_object_get(w, "base"));
    if (policy && strcmp(policy, "hrm-shared") == 0) {
        int src = shared_roles_new(p, policy, &params, err);
        hrm_free(items);
        return src;
    }
    int rc = hrm_dsetup_parse(policy, &params, 250, (uint64_t)wall_us(), &p->setup, err);
    hrm_free(items);
    if (rc < 0)
        return rc;
    if (nq > sizeof(p->queues) / sizeof(p->queues[0]))
        return hrm_errorf(err, -HRM_ESPEC, "%zu execution queues", nq);
    for (size_t i = 0; i < nq; i++)
        if ((rc = hrm_dsetup_queue_parse(json_string_value(json_array_get(jq, i)), &p->queues[i],
                                         err)) < 0)
            return rc;
    if (nq > 0) {
        p->setup.nqs.queues = p->queues;
        p->setup.nqs.nqueues = (int32_t)nq;
    }
    p->cluster = hrm_cluster_new(NULL);
    make_envs(p);
    if ((rc = make_instances(p, err)) < 0)
        return rc;
    size_t k;
    const json_t *node;
    json_array_foreach(json_object_get(w, "nodes"), k, node)
    {
        int32_t n = (int32_t)json_integer_value(json_array_get(node, 0));
        if (n < 0 || n > 1000000 || add_node(p, n, err) < 0)
            return hrm_errorf(err, -HRM_ESPEC, "welcome: bad node %d", n);
        /* [node, up, probe endpoint, agent key]: the last two when it takes probes directly */
        sched_probes_set(p->probes, n, json_array_get(node, 2), json_array_get(node, 3));
        set_node(p, n, json_is_true(json_array_get(node, 1)));
    }
    return 0;
}

/* The whole job is in: it joins the workload and its instance. */
static void job_ready(struct schedp *p, int32_t i, int64_t id, const char *queue,
                      enum hrm_job_kind kind)
{
    struct hrm_error err;
    const json_t *tasks = p->building;
    if (maybe_compact(p, &err) < 0) {
        hrm_log(HRM_LOG_ERR, "%s", err.text);
        p->stop = true;
        return;
    }
    int q = hrm_workload_find_queue(p->wl, queue);
    if (q < 0 && (q = hrm_workload_set_queue(p->wl, queue, 0.0, 1.0, &err)) < 0)
        q = 0;
    struct hrm_job_desc jd = {.name = "job", .kind = kind, .queue = q,
                              .user = hrm_workload_user(p->wl, "-")};
    int sj = hrm_workload_add_job(p->wl, &jd, &err);
    if (sj < 0 || hrm_workload_add_stage(p->wl, "tasks", NULL, 0, &err) < 0) {
        hrm_log(HRM_LOG_ERR, "job %lld: %s", (long long)id, err.text);
        return;
    }
    HRM_GROW(p->job_id, p->cap_job_id, (size_t)sj + 1);
    p->job_inst = hrm_realloc(p->job_inst, p->cap_job_id * sizeof(*p->job_inst));
    p->job_id[sj] = id;
    p->job_inst[sj] = i;
    size_t k;
    const json_t *t;
    json_array_foreach(tasks, k, t)
    {
        struct hrm_task_desc td = {.duration_us = json_integer_value(json_array_get(t, 3)),
                                   .est_duration_us = json_integer_value(json_array_get(t, 3))};
        td.req.v[HRM_DIM_CPU] = json_integer_value(json_array_get(t, 1));
        td.req.v[HRM_DIM_MEM] = json_integer_value(json_array_get(t, 2));
        const json_t *req = json_array_get(t, 5); /* hrm-shared: every dimension */
        for (int d = 0; d < HRM_NDIM && json_array_size(req) == HRM_NDIM; d++)
            td.req.v[d] = json_integer_value(json_array_get(req, (size_t)d));
        td.gpu_milli = (int32_t)json_integer_value(json_array_get(t, 6)); /* hrm-shared */
        int st = hrm_workload_add_task(p->wl, &td, &err);
        if (st < 0) {
            hrm_log(HRM_LOG_ERR, "job %lld: %s", (long long)id, err.text);
            return;
        }
        HRM_GROW(p->task_idx, p->cap_task_idx, (size_t)st + 1);
        p->task_idx[st] = (int32_t)json_integer_value(json_array_get(t, 0));
        task_map_put(&p->ids, id, p->task_idx[st], st);
    }
    struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .from = HRM_ADDR_CLIENT, .job = sj};
    sched_trace(p, "job", id, -1, -1);
    deliver(p, i, &sub);
    int32_t first = p->wl->jobs[sj].task_first;
    json_array_foreach(tasks, k, t)
    {
        if (json_is_true(json_array_get(t, 4)) &&
            (p->sinst ? hrm_ssched_adopt(p->sinst[i], first + (int32_t)k)
                      : hrm_dsched_adopt(p->inst[i], first + (int32_t)k)) < 0)
            hrm_log(HRM_LOG_WARNING, "job %lld: task %lld not adopted", (long long)id,
                    (long long)json_integer_value(json_array_get(t, 0)));
    }
}

/* ---- what the master sends ---- */

static void on_sched_job(struct schedp *p, const json_t *msg)
{
    int32_t g = (int32_t)json_integer_value(json_object_get(msg, "inst"));
    int64_t id = json_integer_value(json_object_get(msg, "job"));
    hrm_log(HRM_LOG_DEBUG, "job %lld for instance %d", (long long)id, g);
    if (!welcomed(p) || g < p->base || g >= p->base + p->count) {
        hrm_log(HRM_LOG_WARNING, "sched_job for instance %d, not one of ours", g);
        return;
    }
    size_t k;
    const json_t *t;
    json_array_foreach(json_object_get(msg, "tasks"), k, t)
    {
        if (!json_is_array(t) || json_array_size(t) < 5 || json_array_size(t) > 7 ||
            !json_is_integer(json_array_get(t, 0)) ||
            json_integer_value(json_array_get(t, 0)) < 0) {
            hrm_log(HRM_LOG_WARNING, "sched_job %lld: a malformed task", (long long)id);
            return;
        }
    }
    if (p->building && (p->building_job != id || p->building_inst != g)) {
        /* The master sends a job's chunks back to back; anything else is a fault. */
        hrm_log(HRM_LOG_WARNING, "sched_job %lld arrived inside job %lld: the partial job is "
                "dropped (the master hands it out again if this process is declared gone)",
                (long long)id, (long long)p->building_job);
        json_decref(p->building);
        p->building = NULL;
    }
    if (!p->building) {
        p->building = json_array();
        p->building_job = id;
        p->building_inst = g;
    }
    json_array_extend(p->building, json_object_get(msg, "tasks"));
    if (!json_is_true(json_object_get(msg, "last")))
        return;
    const char *queue = json_string_value(json_object_get(msg, "queue"));
    const char *kind = json_string_value(json_object_get(msg, "kind"));
    job_ready(p, g - p->base, id, queue ? queue : "default",
              kind && strcmp(kind, "stream") == 0 ? HRM_JOB_STREAM : HRM_JOB_BATCH);
    json_decref(p->building);
    p->building = NULL;
}

/* The nodes the reply carries, [node, version, up, free by dimension..., GPUs, capacity by
 * dimension..., [[memory, memory used, share used, tasks, alone] per GPU]], join the
 * instance's copy, which the instance then takes as its snapshot. */
static void on_snapshot(struct schedp *p, int32_t i, const struct hrm_msg *m, const json_t *msg)
{
    struct hrm_snapshot *snap = &p->snaps[i];
    struct hrm_error err;
    size_t k;
    const json_t *e;
    json_array_foreach(json_object_get(msg, "nodes"), k, e)
    {
        json_int_t n = json_integer_value(json_array_get(e, 0));
        const json_t *recs = json_array_get(e, 4 + 2 * HRM_NDIM);
        if (!json_is_array(e) || json_array_size(e) != 5 + 2 * HRM_NDIM || !json_is_array(recs) ||
            json_array_size(recs) > HRM_MAX_GPUS_PER_NODE || n < 0 || n > 1000000) {
            hrm_log(HRM_LOG_WARNING, "snap_reply: a malformed node entry; ignored");
            continue;
        }
        while (p->cluster->nnodes <= n) { /* the GPUs count in the fair share */
            char name[32];
            snprintf(name, sizeof(name), "n%d", p->cluster->nnodes);
            if (p->cluster->nracks == 0 && hrm_cluster_add_rack(p->cluster, "r", &err) < 0)
                break;
            int32_t gpus = p->cluster->nnodes == n
                               ? (int32_t)json_integer_value(json_array_get(e, 3 + HRM_NDIM))
                               : 0;
            struct hrm_node_desc d = {.name = name, .rack = 0, .cores = 1, .cpu_speed = 1.0,
                                      .mem = 1, .gpus = gpus > 0 && gpus <= 32 ? gpus : 0};
            if (hrm_cluster_add_node(p->cluster, &d, &err) < 0)
                break;
        }
        if (n >= snap->nnodes) {
            snap->nodes = hrm_realloc(snap->nodes, (size_t)(n + 1) * sizeof(*snap->nodes));
            memset(snap->nodes + snap->nnodes, 0,
                   (size_t)(n + 1 - snap->nnodes) * sizeof(*snap->nodes));
            snap->nnodes = (int32_t)n + 1;
        }
        struct hrm_cell_node *cn = &snap->nodes[n];
        cn->version = (uint64_t)json_integer_value(json_array_get(e, 1));
        cn->down = !json_is_true(json_array_get(e, 2));
        for (int d = 0; d < HRM_NDIM; d++) {
            cn->free.v[d] = json_integer_value(json_array_get(e, 3 + (size_t)d));
            cn->cap.v[d] = json_integer_value(json_array_get(e, 4 + HRM_NDIM + (size_t)d));
        }
        struct hrm_cell_gpu *rec =
            hrm_snapshot_gpus_of(snap, (int32_t)n, (int32_t)json_array_size(recs));
        size_t g;
        const json_t *r;
        json_array_foreach(recs, g, r)
        {
            rec[g] = (struct hrm_cell_gpu){
                .gmem_cap = json_integer_value(json_array_get(r, 0)),
                .gmem_used = json_integer_value(json_array_get(r, 1)),
                .share_used = (int32_t)json_integer_value(json_array_get(r, 2)),
                .tasks = (int32_t)json_integer_value(json_array_get(r, 3)),
                .solo = (int32_t)json_integer_value(json_array_get(r, 4))};
        }
    }
    snap->version = (uint64_t)m->value;
    snap->gpu_jobs = (int32_t)json_integer_value(json_object_get(msg, "gpu_jobs"));
    int rc = hrm_ssched_on_snapshot(p->sinst[i], &p->envs[i].env, m, snap);
    if (rc < 0)
        hrm_log(HRM_LOG_INFO, "instance %d refused a snapshot: %s", p->base + i,
                hrm_strerror(rc));
}

static void on_role(struct schedp *p, int type, const json_t *msg)
{
    struct hrm_msg m;
    struct hrm_error err;
    if (!welcomed(p) || hrm_wire_to_msg(type, msg, &m, &err) < 0) {
        hrm_log(HRM_LOG_INFO, "%s from the master dropped", hrm_wire_name(type));
        return;
    }
    if (type == HRM_MSG_TASK_END) { /* (job id, index): the instance that holds the job */
        int32_t t = task_map_find(&p->ids, m.job, m.task);
        if (t < 0)
            return;
        int32_t j = p->wl->tasks[t].job;
        m.job = j;
        m.task = t;
        deliver(p, p->job_inst[j], &m);
        return;
    }
    json_int_t to = json_integer_value(json_object_get(msg, "to"));
    int32_t i = to <= HRM_ADDR_SCHED0 ? hrm_addr_sched_index((hrm_addr)to) - p->base : -1;
    if (i < 0 || i >= p->count)
        return;
    if (p->sinst && type == HRM_MSG_SNAP_REPLY) {
        on_snapshot(p, i, &m, msg);
        return;
    }
    if (p->sinst && type == HRM_MSG_CLAIM_ACK) { /* (job id, index) to the workload's */
        int32_t t = task_map_find(&p->ids, m.job, m.task);
        if (t < 0)
            return;
        m.job = p->wl->tasks[t].job;
        m.task = t;
    }
    deliver(p, i, &m); /* hold_reply, claim_ack (get_task: no policy of the daemons sends it) */
}

struct node_item {
    struct schedp *p;
    int32_t n;
};

static void on_node_msg(struct schedp *p, int32_t n, json_t *msg);

static void on_node_item(void *ctx, json_t *item)
{
    struct node_item *ni = ctx;
    on_node_msg(ni->p, ni->n, item);
}

/* A message from node n's probe listener: the reply to a probe sent straight to it. */
static void on_node_msg(struct schedp *p, int32_t n, json_t *msg)
{
    int type = hrm_wire_type_by_name(json_string_value(json_object_get(msg, "type")));
    if (type == HRM_WIRE_BATCH) { /* the replies to one frame of probes */
        struct node_item ni = {p, n};
        peer_each_item(msg, on_node_item, &ni);
    } else if (type == HRM_MSG_HOLD_REPLY) {
        /* The connection says which node answers, as the master's stamp does on a relay. */
        json_object_set_new(msg, "from", json_integer(hrm_addr_node(n)));
        json_object_set_new(msg, "node", json_integer(n));
        if (p->trace) {
            json_int_t held = json_integer_value(json_object_get(msg, "status")),
                       value = json_integer_value(json_object_get(msg, "value"));
            sched_trace(p, "reply", json_integer_value(json_object_get(msg, "attempt")),
                        value < 0 ? value : held, n);
        }
        on_role(p, type, msg);
        drain(p);
    } else if (type == HRM_WIRE_ERROR) {
        hrm_log(HRM_LOG_WARNING, "node %d refused a probe: %s", n,
                json_string_value(json_object_get(msg, "message")));
    } else {
        hrm_log(HRM_LOG_WARNING, "unexpected '%s' from node %d's probe listener",
                hrm_wire_name(type), n);
    }
}

static void send_register(struct schedp *p);

static void on_message(struct schedp *p, json_t *msg);

static void on_item(void *ctx, json_t *item)
{
    on_message(ctx, item);
}

static void on_message(struct schedp *p, json_t *msg)
{
    int type = hrm_wire_type_by_name(json_string_value(json_object_get(msg, "type")));
    struct hrm_error err;
    switch (type) {
    case HRM_WIRE_BATCH:
        peer_each_item(msg, on_item, p);
        break;
    case HRM_WIRE_SCHED_WELCOME:
        if (roles_new(p, msg, &err) < 0) {
            hrm_log(HRM_LOG_ERR, "cannot run the master's policy here: %s", err.text);
            p->stop = true;
            break;
        }
        p->registered = true;
        hrm_log(HRM_LOG_NOTICE, "registered with the master: instances %d..%d of policy %s",
                p->base, p->base + p->count - 1, p->sinst ? p->ssetup.name : p->setup.name);
        break;
    case HRM_WIRE_SCHED_JOB:
        on_sched_job(p, msg);
        break;
    case HRM_WIRE_SCHED_NODE: {
        int32_t n = (int32_t)json_integer_value(json_object_get(msg, "node"));
        if (!p->inst || n > 1000000 || add_node(p, n, &err) < 0)
            break;
        sched_probes_set(p->probes, n, json_object_get(msg, "probe"), json_object_get(msg, "pub"));
        set_node(p, n, json_is_true(json_object_get(msg, "up")));
        break;
    }
    case HRM_WIRE_ERROR: {
        const char *code = json_string_value(json_object_get(msg, "code"));
        if (code && strcmp(code, "not_registered") == 0) {
            /* The master restarted (or lost us): everything starts over. */
            if (p->registered || hrm_mono_us() - p->register_sent_us > REGISTER_RETRY_US) {
                p->registered = false;
                roles_free(p);
                send_register(p);
            }
        } else if (code && strcmp(code, "forbidden") == 0 &&
                   (!p->registered ||
                    strcmp(json_string_value(json_object_get(msg, "about")) ?: "", "key") == 0)) {
            /* A master that schedules centrally, or a key that is not a scheduler's (or no
             * longer is: removed from the allow-list; the master gives its jobs to others). */
            hrm_log(HRM_LOG_ERR, "the master refuses this process: %s",
                    json_string_value(json_object_get(msg, "message")));
            p->refused = true;
            p->stop = true;
        } else {
            hrm_log(HRM_LOG_WARNING, "master: %s: %s", code,
                    json_string_value(json_object_get(msg, "message")));
        }
        break;
    }
    default:
        if (type >= 0 && type < HRM_MSG_COUNT)
            on_role(p, type, msg);
        else
            hrm_log(HRM_LOG_WARNING, "unexpected '%s' from the master", hrm_wire_name(type));
        break;
    }
    drain(p);
}

static void send_register(struct schedp *p)
{
    json_t *m = hrm_wire_new(HRM_WIRE_SCHED_REGISTER);
    json_object_set_new(m, "name", json_string(p->name));
    json_object_set_new(m, "instances", json_integer(p->count));
    flush(p);
    hrm_conn_send(p->conn, m);
    json_decref(m);
    p->register_sent_us = hrm_mono_us();
}

static void run_timers(struct schedp *p)
{
    struct role_timer due[32];
    size_t ndue = role_timers_take_due(&p->timers, wall_us(), due, 32);
    for (size_t i = 0; i < ndue && welcomed(p); i++) {
        if (p->sinst)
            hrm_ssched_on_timer(p->sinst[due[i].role], &p->envs[due[i].role].env,
                                due[i].cookie);
        else
            hrm_dsched_on_timer(p->inst[due[i].role], &p->envs[due[i].role].env,
                                due[i].cookie);
        drain(p);
    }
}

static void schedp_free(struct schedp *p)
{
    if (!p)
        return;
    roles_free(p);
    if (p->sigfd >= 0)
        close(p->sigfd);
    if (p->trace)
        fclose(p->trace);
    json_decref(p->outq);
    if (p->probes)
        hrm_log(HRM_LOG_INFO, "probes sent straight to the nodes: %lld",
                (long long)sched_probes_sent(p->probes));
    sched_probes_free(p->probes);
    hrm_conn_free(p->conn);
    hrm_zctx_free(p->zctx);
    role_timers_free(&p->timers);
    task_map_free(&p->ids);
    hrm_free(p->posts);
    hrm_free(p->node_up);
    hrm_free(p);
}

int hrm_sched_run(const struct hrm_sched_config *cfg, struct hrm_error *err)
{
    struct schedp *p = hrm_calloc(1, sizeof(*p));
    p->sigfd = -1;
    p->cfg = *cfg;
    p->outq = json_array();
    p->count = cfg->instances > 0 ? cfg->instances : 1;
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    snprintf(p->name, sizeof(p->name), "%.47s", cfg->name ? cfg->name : host);
    const char *state = cfg->state_dir ? cfg->state_dir : ".";
    if (cfg->keys_dir)
        snprintf(p->keys_dir, sizeof(p->keys_dir), "%s", cfg->keys_dir);
    else
        snprintf(p->keys_dir, sizeof(p->keys_dir), "%.1000s/keys", state);
    int rc = 0;
    if (cfg->trace_path) {
        /* Appended to: a restarted process goes on after its past, as the master's trace. */
        if (!(p->trace = fopen(cfg->trace_path, "ae"))) {
            rc = hrm_errorf(err, -errno, "--trace %s: %s", cfg->trace_path, strerror(errno));
            goto out;
        }
        setvbuf(p->trace, NULL, _IOFBF, 1 << 16);
    }
    if (cfg->master)
        snprintf(p->endpoint, sizeof(p->endpoint), "%s", cfg->master);
    else if ((rc = peer_read_endpoint(state, p->endpoint, sizeof(p->endpoint), err)) < 0)
        goto out;
    struct hrm_keypair master;
    if ((rc = hrm_keys_load(p->keys_dir, "scheduler", false, &p->mine, err)) < 0) {
        if (rc == -ENOENT) /* a key folder made before scheduler processes existed */
            hrm_errorf(err, rc, "%s/scheduler.key: no such file (add one to the cluster's keys with "
                       "'hrm keygen --add-scheduler %s', then restart the master)", p->keys_dir,
                       p->keys_dir);
        goto out;
    }
    if ((rc = hrm_keys_load(p->keys_dir, "master", true, &master, err)) < 0)
        goto out;
    if (!(p->zctx = hrm_zctx_new())) {
        rc = hrm_errorf(err, -ENOMEM, "cannot create a ZeroMQ context");
        goto out;
    }
    if (!(p->conn = hrm_conn_new(p->zctx, p->endpoint, master.pub, &p->mine, err))) {
        rc = -HRM_EIO;
        goto out;
    }
    p->probes = sched_probes_new(p->zctx, &p->mine, cfg->probe_via_master);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if ((p->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        rc = hrm_errorf(err, -errno, "signalfd: %s", strerror(errno));
        goto out;
    }
    hrm_log(HRM_LOG_NOTICE, "scheduler process %s: %d instances; master %s", p->name, p->count,
            p->endpoint);
    send_register(p);
    p->next_heartbeat_us = hrm_mono_us() + HEARTBEAT_US;
    zmq_pollitem_t *items = NULL; /* the master, the signals, the nodes' probe listeners */
    size_t cap_items = 0;
    while (!p->stop) {
        int64_t wait_us = p->next_heartbeat_us - hrm_mono_us();
        int64_t next = role_timers_next(&p->timers);
        if (next != INT64_MAX && next - wall_us() < wait_us)
            wait_us = next - wall_us();
        if (wait_us > 100000)
            wait_us = 100000;
        size_t want = 2 + (p->cluster ? (size_t)p->cluster->nnodes : 0);
        HRM_GROW(items, cap_items, want);
        items[0] = (zmq_pollitem_t){hrm_conn_zsock(p->conn), 0, ZMQ_POLLIN, 0};
        items[1] = (zmq_pollitem_t){NULL, p->sigfd, ZMQ_POLLIN, 0};
        size_t nitems = 2 + sched_probes_poll(p->probes, items + 2, cap_items - 2);
        if (zmq_poll(items, (int)nitems, wait_us > 0 ? (long)((wait_us + 999) / 1000) : 0) < 0 &&
            zmq_errno() != EINTR)
            break;
        if (items[1].revents & ZMQ_POLLIN) {
            struct signalfd_siginfo si;
            if (read(p->sigfd, &si, sizeof(si)) == sizeof(si)) {
                hrm_log(HRM_LOG_NOTICE, "signal %u: stopping", si.ssi_signo);
                p->stop = true;
            }
        }
        for (int i = 0; i < TURN_MAX_MSGS && !p->stop; i++) {
            json_t *msg;
            struct hrm_error rerr;
            int r = hrm_conn_recv(p->conn, 0, &msg, &rerr);
            if (r == -ETIMEDOUT)
                break;
            if (r < 0) {
                hrm_log(HRM_LOG_WARNING, "%s", rerr.text);
                continue;
            }
            on_message(p, msg);
            json_decref(msg);
        }
        json_t *reply;
        int32_t node;
        for (int i = 0; i < TURN_MAX_MSGS && !p->stop && sched_probes_recv(p->probes, &reply, &node);
             i++) {
            on_node_msg(p, node, reply);
            json_decref(reply);
        }
        run_timers(p);
        int64_t mono = hrm_mono_us();
        if (!p->registered && mono - p->register_sent_us >= REGISTER_RETRY_US)
            send_register(p);
        if (mono >= p->next_heartbeat_us) {
            send_msg(p, hrm_wire_new(HRM_WIRE_HEARTBEAT));
            p->next_heartbeat_us = mono + HEARTBEAT_US;
            if (p->trace)
                fflush(p->trace); /* a process that is killed leaves its trace up to here */
        }
        flush(p);
    }
    hrm_free(items);
    if (p->refused)
        rc = hrm_errorf(err, -EPERM, "the master refused this scheduler process (see the log)");
out:
    schedp_free(p);
    return rc;
}
