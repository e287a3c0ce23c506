/* The master's job table: submissions, task records, job ends, the client requests that read or change them. */
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/jobdesc.h"
#include "hrm/log.h"
#include "master_private.h"

/* Replies stay under the codec's size limit: listings are capped. */
#define LIST_MAX_JOBS 2000
#define LIST_MAX_TASKS 2000
#define LOGS_MAX_BYTES (256 << 10)

bool jobs_live(const struct rjob *j)
{
    return j->state == HRM_JOB_PENDING || j->state == HRM_JOB_RUNNING;
}

struct rjob *jobs_find(struct master *m, int64_t id)
{
    if (id < 1 || (size_t)id > m->njobs)
        return NULL;
    return m->jobs[id - 1];
}

static void job_free(struct rjob *j)
{
    if (!j)
        return;
    json_decref(j->spec);
    hrm_free(j->greq);
    hrm_free(j->tasks);
    hrm_free(j->waiters);
    hrm_free(j);
}

void jobs_free_all(struct master *m)
{
    for (size_t i = 0; i < m->njobs; i++)
        job_free(m->jobs[i]);
    hrm_free(m->jobs);
    m->jobs = NULL;
    m->njobs = 0;
}

/* Builds the in-memory record from a normalised description (taken). */
static struct rjob *job_new(int64_t id, json_t *spec, int64_t submit_us)
{
    struct rjob *j = hrm_calloc(1, sizeof(*j));
    j->id = id;
    j->spec = spec;
    snprintf(j->name, sizeof(j->name), "%s", json_string_value(json_object_get(spec, "name")));
    snprintf(j->user, sizeof(j->user), "%s", json_string_value(json_object_get(spec, "user")));
    snprintf(j->queue, sizeof(j->queue), "%s", json_string_value(json_object_get(spec, "queue")));
    j->priority = (int32_t)json_integer_value(json_object_get(spec, "priority"));
    j->submit_us = submit_us;
    j->end_us = -1;
    j->sched = -1;
    const json_t *groups = json_object_get(spec, "tasks");
    j->ngroups = (int32_t)json_array_size(groups);
    j->greq = hrm_calloc((size_t)j->ngroups, sizeof(*j->greq));
    j->ntasks = (int32_t)json_integer_value(json_object_get(spec, "ntasks"));
    j->tasks = hrm_calloc((size_t)j->ntasks, sizeof(*j->tasks));
    int32_t t = 0;
    for (int32_t g = 0; g < j->ngroups; g++) {
        const json_t *gr = json_array_get(groups, (size_t)g);
        j->greq[g].v[HRM_DIM_CPU] = json_integer_value(json_object_get(gr, "cpu"));
        j->greq[g].v[HRM_DIM_MEM] = json_integer_value(json_object_get(gr, "mem"));
        j->greq[g].v[HRM_DIM_GPU] = json_integer_value(json_object_get(gr, "gpus"));
        int64_t count = json_integer_value(json_object_get(gr, "count"));
        for (int64_t k = 0; k < count && t < j->ntasks; k++, t++) {
            j->tasks[t].group = g;
            j->tasks[t].node = -1;
            j->tasks[t].sched = -1;
            j->tasks[t].start_us = j->tasks[t].end_us = -1;
        }
    }
    return j;
}

static void jobs_put(struct master *m, struct rjob *j)
{
    HRM_GROW(m->jobs, m->cap_jobs, (size_t)j->id);
    while (m->njobs < (size_t)j->id)
        m->jobs[m->njobs++] = NULL;
    m->jobs[j->id - 1] = j;
}

void jobs_persist_task(struct master *m, struct rjob *j, int32_t idx)
{
    const struct rtask *t = &j->tasks[idx];
    struct hrm_store_task row = {.job = j->id,
                                 .idx = idx,
                                 .state = t->state,
                                 .attempt = t->attempt,
                                 .node = t->node >= 0 ? m->nodes[t->node].name : "",
                                 .exit = t->exit,
                                 .signal = t->signal,
                                 .oom = t->oom,
                                 .start_us = t->start_us,
                                 .end_us = t->end_us};
    struct hrm_error err;
    int rc = hrm_store_put_task(m->store, &row, &err);
    if (rc < 0)
        master_store_failed(m, rc, &err);
}

void jobs_persist_state(struct master *m, struct rjob *j)
{
    struct hrm_error err;
    int rc = hrm_store_set_job_state(m->store, j->id, j->state, j->exit, j->end_us, &err);
    if (rc < 0)
        master_store_failed(m, rc, &err);
}

/* ---- restart: the store replayed into the table ---- */

static int load_job(void *arg, const struct hrm_store_job *row)
{
    struct master *m = arg;
    json_error_t jerr;
    json_t *spec = json_loads(row->spec, 0, &jerr);
    if (!json_is_object(spec) || json_integer_value(json_object_get(spec, "ntasks")) != row->ntasks) {
        json_decref(spec);
        hrm_log(HRM_LOG_ERR, HRM_JOB_FMT ": stored description unreadable; dropped",
                (long long)row->id);
        return 0;
    }
    struct rjob *j = job_new(row->id, spec, row->submit_us);
    j->state = row->state;
    j->exit = row->exit;
    j->end_us = row->end_us;
    jobs_put(m, j);
    return 0;
}

int32_t nodes_find(struct master *m, const char *name, bool create)
{
    for (int32_t n = 0; n < m->nnodes; n++)
        if (strcmp(m->nodes[n].name, name) == 0)
            return n;
    if (!create)
        return -1;
    HRM_GROW(m->nodes, m->cap_nodes, (size_t)m->nnodes + 1);
    struct rnode *rn = &m->nodes[m->nnodes];
    memset(rn, 0, sizeof(*rn));
    snprintf(rn->name, sizeof(rn->name), "%s", name);
    snprintf(rn->rack, sizeof(rn->rack), "r0");
    rn->cores = 1; /* a placeholder until the agent registers: down, holds nothing */
    return m->nnodes++;
}

static int load_task(void *arg, const struct hrm_store_task *row)
{
    struct master *m = arg;
    struct rjob *j = jobs_find(m, row->job);
    if (!j || row->idx < 0 || row->idx >= j->ntasks)
        return 0;
    struct rtask *t = &j->tasks[row->idx];
    t->state = (uint8_t)row->state;
    t->attempt = row->attempt;
    t->node = row->node[0] ? nodes_find(m, row->node, true) : -1;
    t->exit = row->exit;
    t->signal = row->signal;
    t->oom = row->oom;
    t->start_us = row->start_us;
    t->end_us = row->end_us;
    if (t->state == HRM_RTASK_FAILED && jobs_live(j))
        j->failed = true;
    return 0;
}

int jobs_load(struct master *m, struct hrm_error *err)
{
    int rc = hrm_store_load(m->store, load_job, load_task, m, err);
    if (rc < 0)
        return rc;
    m->next_job = hrm_store_meta_get(m->store, "next_job", 1);
    if ((int64_t)m->njobs + 1 > m->next_job)
        m->next_job = (int64_t)m->njobs + 1;
    return 0;
}

/* ---- task and job transitions ---- */

void jobs_task_placed(struct master *m, struct rjob *j, int32_t idx, int32_t node, int32_t attempt,
                      uint32_t gpu_mask, bool started)
{
    struct rtask *t = &j->tasks[idx];
    t->state = HRM_RTASK_RUNNING;
    t->node = node;
    t->attempt = attempt;
    t->gpu_mask = gpu_mask;
    t->start_us = started ? master_now_us() : -1;
    t->end_us = -1;
    t->pid = 0;
    if (j->state == HRM_JOB_PENDING) {
        j->state = HRM_JOB_RUNNING;
        jobs_persist_state(m, j);
    }
    jobs_persist_task(m, j, idx);
}

void jobs_task_running(struct master *m, struct rjob *j, int32_t idx, int32_t node, int32_t attempt,
                       uint32_t gpu_mask)
{
    jobs_task_placed(m, j, idx, node, attempt, gpu_mask, true);
    master_send_node(m, node, jobs_launch_json(m, j, idx));
}

json_t *jobs_launch_json(struct master *m, struct rjob *j, int32_t idx)
{
    (void)m;
    const struct rtask *t = &j->tasks[idx];
    const json_t *g = json_array_get(json_object_get(j->spec, "tasks"), (size_t)t->group);
    json_t *l = hrm_wire_new(HRM_WIRE_TASK_LAUNCH);
    json_object_set_new(l, "job", json_integer(j->id));
    json_object_set_new(l, "task", json_integer(idx));
    json_object_set_new(l, "attempt", json_integer(t->attempt));
    json_object_set_new(l, "gpu_mask", json_integer(t->gpu_mask));
    json_object_set(l, "cmd", json_object_get(g, "cmd"));
    json_object_set(l, "cwd", json_object_get(g, "cwd"));
    json_object_set(l, "env", json_object_get(g, "env"));
    json_object_set_new(l, "cpu", json_integer(j->greq[t->group].v[HRM_DIM_CPU]));
    json_object_set_new(l, "mem", json_integer(j->greq[t->group].v[HRM_DIM_MEM]));
    json_object_set_new(l, "gpus", json_integer(j->greq[t->group].v[HRM_DIM_GPU]));
    if (json_is_false(json_object_get(g, "output")))
        json_object_set_new(l, "output", json_false());
    json_object_set_new(l, "user", json_string(j->user)); /* the account the task runs as */
    return l;
}

void jobs_task_lost(struct master *m, struct rjob *j, int32_t idx)
{
    j->tasks[idx].state = HRM_RTASK_PENDING;
    jobs_persist_task(m, j, idx);
    if (m->dist)
        dist_task_lost(m, j, idx);
}

void jobs_requeue_node(struct master *m, int32_t node)
{
    for (size_t i = 0; i < m->njobs; i++) {
        struct rjob *j = m->jobs[i];
        if (!j || !jobs_live(j))
            continue;
        for (int32_t k = 0; k < j->ntasks; k++) {
            if (j->tasks[k].state == HRM_RTASK_RUNNING && j->tasks[k].node == node)
                jobs_task_lost(m, j, k);
        }
    }
}

static int task_exit_code(const struct rtask *t)
{
    return t->signal ? 128 + t->signal : t->exit;
}

static void notify_waiters(struct master *m, struct rjob *j)
{
    for (size_t i = 0; i < j->nwaiters; i++) {
        json_t *r = hrm_wire_new(HRM_WIRE_JOB_DONE);
        json_object_set_new(r, "req", json_integer(j->waiters[i].req));
        json_object_set_new(r, "id", json_integer(j->id));
        json_object_set_new(r, "state", json_string(hrm_job_state_name(j->state)));
        json_object_set_new(r, "exit", json_integer(j->exit));
        master_send(m, &j->waiters[i].peer, r);
    }
    j->nwaiters = 0;
}

void jobs_finish(struct master *m, struct rjob *j)
{
    const struct hrm_state *st = m->sched.central ? hrm_central_state(m->sched.central) : NULL;
    bool failed = false;
    int exit = 0;
    for (int32_t i = 0; i < j->ntasks; i++) {
        struct rtask *t = &j->tasks[i];
        uint8_t before = t->state;
        if (t->sched >= 0 && st) {
            uint8_t s = st->tasks[t->sched].status;
            if (s == HRM_TASK_DONE)
                t->state = HRM_RTASK_DONE;
            else if (s == HRM_TASK_FAILED)
                t->state = t->state == HRM_RTASK_RUNNING ? HRM_RTASK_FAILED : HRM_RTASK_SKIPPED;
        } else if (t->state == HRM_RTASK_PENDING) {
            t->state = HRM_RTASK_SKIPPED;
        }
        t->sched = -1;
        if (t->state != before)
            jobs_persist_task(m, j, i);
        if (t->state == HRM_RTASK_FAILED && !failed) {
            failed = true;
            exit = task_exit_code(t);
            if (exit == 0)
                exit = 1;
        }
    }
    j->sched = -1;
    j->state = failed ? HRM_JOB_FAILED : HRM_JOB_DONE;
    j->exit = exit;
    j->end_us = master_now_us();
    jobs_persist_state(m, j);
    hrm_log(HRM_LOG_INFO, HRM_JOB_FMT " (%s) %s, exit %d", (long long)j->id, j->name,
            hrm_job_state_name(j->state), j->exit);
    notify_waiters(m, j);
}

/* ---- client requests ---- */

static long long req_of(const json_t *msg)
{
    return json_integer_value(json_object_get(msg, "req"));
}

static const char *fits_nowhere(struct master *m, const json_t *spec)
{
    bool any = false;
    for (int32_t n = 0; n < m->nnodes; n++)
        any |= m->nodes[n].up;
    if (!any)
        return NULL; /* nodes may still come: accept and wait */
    size_t g;
    const json_t *gr;
    json_array_foreach(json_object_get(spec, "tasks"), g, gr)
    {
        int64_t cpu = json_integer_value(json_object_get(gr, "cpu"));
        int64_t mem = json_integer_value(json_object_get(gr, "mem"));
        int64_t gpus = json_integer_value(json_object_get(gr, "gpus"));
        bool fits = false;
        for (int32_t n = 0; n < m->nnodes && !fits; n++) {
            const struct rnode *rn = &m->nodes[n];
            fits = rn->up && (int64_t)rn->cores * 1000 >= cpu && rn->mem >= mem && rn->gpus >= gpus;
        }
        if (!fits)
            return "a task asks for more than any node has";
    }
    return NULL;
}

void on_submit(struct master *m, const struct peer_id *from, json_t *msg)
{
    struct hrm_error err;
    json_t *spec = hrm_jobdesc_normalise(json_object_get(msg, "job"), "/", &err);
    if (!spec) {
        master_reply_error(m, from, HRM_WERR_BAD_SPEC, req_of(msg), "%s", err.text);
        return;
    }
    const char *why = m->dist ? dist_refuse_spec(m, spec) : NULL;
    if (!why)
        why = fits_nowhere(m, spec);
    if (why) {
        json_decref(spec);
        master_reply_error(m, from, HRM_WERR_BAD_SPEC, req_of(msg), "%s", why);
        return;
    }
    int64_t id = m->next_job++;
    char *text = json_dumps(spec, JSON_COMPACT);
    struct rjob *j = job_new(id, spec, master_now_us());
    struct hrm_store_job row = {.id = id,
                                .name = j->name,
                                .user = j->user,
                                .queue = j->queue,
                                .priority = j->priority,
                                .ntasks = j->ntasks,
                                .submit_us = j->submit_us,
                                .end_us = -1,
                                .state = HRM_JOB_PENDING,
                                .spec = text};
    int rc = hrm_store_put_job(m->store, &row, &err);
    if (rc == 0)
        rc = hrm_store_meta_put(m->store, "next_job", m->next_job, &err);
    free(text);
    if (rc < 0) {
        job_free(j);
        master_store_failed(m, rc, &err);
        return;
    }
    jobs_put(m, j);
    m->sched.dirty = true;
    hrm_log(HRM_LOG_INFO, HRM_JOB_FMT " (%s) submitted: %d tasks", (long long)id, j->name,
            j->ntasks);
    /* Sent after the turn commits: the acknowledgement follows durability. */
    json_t *r = hrm_wire_new(HRM_WIRE_SUBMITTED);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "id", json_integer(id));
    master_send(m, from, r);
}

static json_t *job_summary(const struct rjob *j)
{
    int32_t count[6] = {0}, queued = 0;
    int64_t first_start = -1;
    for (int32_t i = 0; i < j->ntasks; i++) {
        const struct rtask *t = &j->tasks[i];
        count[t->state < 6 ? t->state : 0]++;
        queued += t->state == HRM_RTASK_RUNNING && t->start_us < 0;
        if (t->start_us >= 0 && (first_start < 0 || t->start_us < first_start))
            first_start = t->start_us;
    }
    /* "running" counts the tasks placed on a node; "queued" those of them that
     * wait in the node's execution queue (distributed scheduling) to start. */
    return json_pack("{s:I, s:s, s:s, s:s, s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i,"
                     " s:i, s:I, s:I, s:I}",
                     "id", (json_int_t)j->id, "name", j->name, "user", j->user, "queue",
                     j->queue, "priority", j->priority, "state", hrm_job_state_name(j->state),
                     "exit", j->exit, "ntasks", j->ntasks, "pending", count[HRM_RTASK_PENDING],
                     "running", count[HRM_RTASK_RUNNING], "queued", queued, "done",
                     count[HRM_RTASK_DONE],
                     "failed", count[HRM_RTASK_FAILED], "skipped", count[HRM_RTASK_SKIPPED],
                     "cancelled", count[HRM_RTASK_CANCELLED], "submit_us",
                     (json_int_t)j->submit_us, "start_us", (json_int_t)first_start, "end_us",
                     (json_int_t)j->end_us);
}

void on_jobs(struct master *m, const struct peer_id *from, json_t *msg)
{
    bool all = json_is_true(json_object_get(msg, "all"));
    json_t *list = json_array();
    /* Newest first up to the cap, then listed in id order. */
    size_t n = 0, i = m->njobs;
    while (i > 0 && n < LIST_MAX_JOBS) {
        struct rjob *j = m->jobs[--i];
        if (j && (all || jobs_live(j) || n < 50)) {
            json_array_insert_new(list, 0, job_summary(j));
            n++;
        }
    }
    json_t *r = hrm_wire_new(HRM_WIRE_JOBS_LIST);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "jobs", list);
    json_object_set_new(r, "truncated", json_boolean(i > 0));
    master_send(m, from, r);
}

void on_job(struct master *m, const struct peer_id *from, json_t *msg)
{
    json_int_t id = json_integer_value(json_object_get(msg, "id"));
    struct rjob *j = jobs_find(m, id);
    if (!j) {
        master_reply_error(m, from, HRM_WERR_NOT_FOUND, req_of(msg), "no job %lld", (long long)id);
        return;
    }
    json_t *o = job_summary(j);
    json_t *tasks = json_array();
    for (int32_t i = 0; i < j->ntasks && i < LIST_MAX_TASKS; i++) {
        const struct rtask *t = &j->tasks[i];
        json_array_append_new(
            tasks, json_pack("{s:i, s:s, s:i, s:s, s:i, s:i, s:b, s:I, s:I, s:I, s:I}", "task", i,
                             "state",
                             t->state == HRM_RTASK_RUNNING && t->start_us < 0
                                 ? "queued"
                                 : hrm_rtask_state_name(t->state),
                             "attempt", t->attempt,
                             "node", t->node >= 0 ? m->nodes[t->node].name : "", "exit", t->exit,
                             "signal", t->signal, "oom", t->oom, "start_us",
                             (json_int_t)t->start_us, "end_us", (json_int_t)t->end_us, "cpu_us",
                             (json_int_t)t->cpu_us, "rss", (json_int_t)t->rss));
    }
    json_object_set_new(o, "tasks", tasks);
    json_object_set(o, "spec", j->spec);
    json_t *r = hrm_wire_new(HRM_WIRE_JOB_INFO);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "job", o);
    master_send(m, from, r);
}

/* Distributed scheduling: what each node runs and queues, from the table (exact as of this
 * turn, where the agents' heartbeats would be up to a second old). */
struct node_use {
    int32_t running, queued;
    int64_t cpu, mem;
};

static struct node_use *nodes_use(struct master *m)
{
    struct node_use *u = hrm_calloc((size_t)m->nnodes + 1, sizeof(*u));
    for (size_t i = 0; i < m->njobs; i++) {
        const struct rjob *j = m->jobs[i];
        for (int32_t k = 0; j && jobs_live(j) && k < j->ntasks; k++) {
            const struct rtask *t = &j->tasks[k];
            if (t->state != HRM_RTASK_RUNNING || t->node < 0 || t->node >= m->nnodes)
                continue;
            struct node_use *x = &u[t->node];
            if (t->start_us < 0) {
                x->queued++;
                continue;
            }
            x->running++;
            x->cpu += j->greq[t->group].v[HRM_DIM_CPU];
            x->mem += j->greq[t->group].v[HRM_DIM_MEM];
        }
    }
    return u;
}

void on_nodes(struct master *m, const struct peer_id *from, json_t *msg)
{
    json_t *list = json_array();
    int64_t now = master_mono_us();
    struct node_use *use = m->dist ? nodes_use(m) : NULL;
    for (int32_t n = 0; n < m->nnodes; n++) {
        const struct rnode *rn = &m->nodes[n];
        struct hrm_res fr = {0};
        bool known = sched_node_free(m, n, &fr);
        if (use) {
            known = rn->up;
            fr.v[HRM_DIM_CPU] = (int64_t)rn->cores * 1000 - use[n].cpu;
            fr.v[HRM_DIM_MEM] = rn->mem - use[n].mem;
        }
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:i, s:I, s:i, s:I, s:I, s:I, s:f, s:I, s:i, s:s,"
                            " s:s}",
                            "name", rn->name, "rack", rn->rack, "state", rn->up ? "up" : "down",
                            "cpus", rn->cores, "mem", (json_int_t)rn->mem, "gpus", rn->gpus,
                            "cpu_free", (json_int_t)(known ? fr.v[HRM_DIM_CPU] : 0), "mem_free",
                            (json_int_t)(known ? fr.v[HRM_DIM_MEM] : 0), "gpu_free",
                            (json_int_t)(known ? fr.v[HRM_DIM_GPU] : 0), "load", rn->load,
                            "seen_ms_ago",
                            (json_int_t)(rn->last_seen_us ? (now - rn->last_seen_us) / 1000 : -1),
                            "tasks", use ? use[n].running : rn->ntasks_reported, "host", rn->host,
                            "cgroup", rn->cgroup));
        if (use) {
            json_t *o = json_array_get(list, json_array_size(list) - 1);
            json_object_set_new(o, "queued", json_integer(use[n].queued));
            json_object_set_new(o, "moved_in", json_integer(rn->moved_in));
            json_object_set_new(o, "moved_out", json_integer(rn->moved_out));
        }
    }
    hrm_free(use);
    json_t *r = hrm_wire_new(HRM_WIRE_NODES_LIST);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "nodes", list);
    master_send(m, from, r);
}

void on_cancel(struct master *m, const struct peer_id *from, json_t *msg)
{
    json_int_t id = json_integer_value(json_object_get(msg, "id"));
    struct rjob *j = jobs_find(m, id);
    if (!j) {
        master_reply_error(m, from, HRM_WERR_NOT_FOUND, req_of(msg), "no job %lld", (long long)id);
        return;
    }
    if (jobs_live(j)) {
        if (m->dist)
            dist_job_cancelled(m, j); /* before the task states change */
        for (int32_t i = 0; i < j->ntasks; i++) {
            struct rtask *t = &j->tasks[i];
            if (t->state == HRM_RTASK_RUNNING) {
                json_t *k = hrm_wire_new(HRM_WIRE_TASK_KILL);
                json_object_set_new(k, "job", json_integer(j->id));
                json_object_set_new(k, "task", json_integer(i));
                json_object_set_new(k, "attempt", json_integer(t->attempt));
                master_send_node(m, t->node, k);
            }
            if (t->state == HRM_RTASK_RUNNING || t->state == HRM_RTASK_PENDING) {
                t->state = HRM_RTASK_CANCELLED;
                t->end_us = master_now_us();
                jobs_persist_task(m, j, i);
            }
        }
        j->state = HRM_JOB_CANCELLED;
        j->exit = 143; /* as if the job had been sent SIGTERM */
        j->end_us = master_now_us();
        jobs_persist_state(m, j);
        m->sched.dirty = true; /* its tasks leave the scheduler with the next rebuild */
        hrm_log(HRM_LOG_INFO, HRM_JOB_FMT " cancelled", (long long)j->id);
        notify_waiters(m, j);
    }
    json_t *r = hrm_wire_new(HRM_WIRE_CANCELLED);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "id", json_integer(j->id));
    json_object_set_new(r, "state", json_string(hrm_job_state_name(j->state)));
    master_send(m, from, r);
}

void on_wait(struct master *m, const struct peer_id *from, json_t *msg)
{
    json_int_t id = json_integer_value(json_object_get(msg, "id"));
    struct rjob *j = jobs_find(m, id);
    if (!j) {
        master_reply_error(m, from, HRM_WERR_NOT_FOUND, req_of(msg), "no job %lld", (long long)id);
        return;
    }
    if (jobs_live(j)) {
        /* A client that asks again (it does after a master restart) is not listed twice. */
        for (size_t i = 0; i < j->nwaiters; i++)
            if (j->waiters[i].req == req_of(msg) && j->waiters[i].peer.len == from->len &&
                memcmp(j->waiters[i].peer.id, from->id, from->len) == 0)
                return;
        HRM_GROW(j->waiters, j->cap_waiters, j->nwaiters + 1);
        j->waiters[j->nwaiters++] = (struct waiter){*from, req_of(msg)};
        return;
    }
    json_t *r = hrm_wire_new(HRM_WIRE_JOB_DONE);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "id", json_integer(j->id));
    json_object_set_new(r, "state", json_string(hrm_job_state_name(j->state)));
    json_object_set_new(r, "exit", json_integer(j->exit));
    master_send(m, from, r);
}

void on_logs(struct master *m, const struct peer_id *from, json_t *msg)
{
    json_int_t id = json_integer_value(json_object_get(msg, "id"));
    json_int_t task = json_integer_value(json_object_get(msg, "task"));
    const char *stream = json_string_value(json_object_get(msg, "stream"));
    json_int_t max = json_integer_value(json_object_get(msg, "max"));
    struct rjob *j = jobs_find(m, id);
    if (!j || task >= j->ntasks) {
        master_reply_error(m, from, HRM_WERR_NOT_FOUND, req_of(msg), "no task %lld.%lld",
                           (long long)id, (long long)task);
        return;
    }
    if (!stream)
        stream = "out";
    if (strcmp(stream, "out") != 0 && strcmp(stream, "err") != 0) {
        master_reply_error(m, from, HRM_WERR_BAD_FIELD, req_of(msg), "stream must be out or err");
        return;
    }
    const struct rtask *t = &j->tasks[task];
    if (t->attempt == 0 || t->node < 0) {
        master_reply_error(m, from, HRM_WERR_NOT_FOUND, req_of(msg),
                           "task %lld.%lld has not run yet", (long long)id, (long long)task);
        return;
    }
    if (!m->nodes[t->node].up) {
        master_reply_error(m, from, HRM_WERR_UNAVAILABLE, req_of(msg),
                           "node %s, which ran task %lld.%lld, is down", m->nodes[t->node].name,
                           (long long)id, (long long)task);
        return;
    }
    HRM_GROW(m->logs, m->cap_logs, m->nlogs + 1);
    struct pending_logs *p = &m->logs[m->nlogs++];
    p->id = ++m->next_logs_id;
    p->client = *from;
    p->client_req = req_of(msg);
    p->since_us = master_mono_us();
    json_t *f = hrm_wire_new(HRM_WIRE_LOGS_FETCH);
    json_object_set_new(f, "req", json_integer(p->id));
    json_object_set_new(f, "job", json_integer(j->id));
    json_object_set_new(f, "task", json_integer(task));
    json_object_set_new(f, "attempt", json_integer(t->attempt));
    json_object_set_new(f, "stream", json_string(stream));
    json_object_set_new(f, "max", json_integer(max > 0 && max < LOGS_MAX_BYTES ? max : LOGS_MAX_BYTES));
    master_send_node(m, t->node, f);
}

void on_logs_data(struct master *m, const struct peer_id *from, json_t *msg)
{
    (void)from;
    long long id = req_of(msg);
    for (size_t i = 0; i < m->nlogs; i++) {
        if (m->logs[i].id != id)
            continue;
        json_t *r = json_deep_copy(msg);
        json_object_set_new(r, "req", json_integer(m->logs[i].client_req));
        master_send(m, &m->logs[i].client, r);
        m->logs[i] = m->logs[--m->nlogs];
        return;
    }
}
