/* The master's job table: submissions, task records, job ends, the client requests that read or change them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/hash.h"
#include "hrm/jobdesc.h"
#include "hrm/jsontext.h"
#include "hrm/log.h"
#include "hrm/units.h"
#include "master_eta.h"
#include "master_private.h"
#include "master_snap.h"

/* Replies stay under the codec's size limit: listings are capped. */
#define LIST_MAX_TASKS 2000
/* An offset-less logs request gets the end of the output as one wire string. */
#define LOGS_TEXT_MAX_BYTES (32 << 10)

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
    hrm_free(j->gshare);
    for (int32_t i = 0; j->tasks && i < j->ntasks; i++)
        hrm_free(j->tasks[i].error);
    hrm_free(j->tasks);
    hrm_free(j->waiters);
    hrm_free(j);
}

void jobs_free_all(struct master *m)
{
    task_map_free(&m->wait_set);
    task_map_free(&m->wait_peers);
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
    /* Stored descriptions made before kinds existed have none: batch. */
    const char *kind = json_string_value(json_object_get(spec, "kind"));
    j->kind = kind && hrm_job_kind_parse(kind) == HRM_JOB_STREAM ? HRM_JOB_STREAM : HRM_JOB_BATCH;
    j->submit_us = submit_us;
    j->end_us = -1;
    j->sched = -1;
    j->first_start_us = -1;
    const json_t *groups = json_object_get(spec, "tasks");
    j->ngroups = (int32_t)json_array_size(groups);
    j->greq = hrm_calloc((size_t)j->ngroups, sizeof(*j->greq));
    j->gshare = hrm_calloc((size_t)j->ngroups, sizeof(*j->gshare));
    j->ntasks = (int32_t)json_integer_value(json_object_get(spec, "ntasks"));
    j->tasks = hrm_calloc((size_t)j->ntasks, sizeof(*j->tasks));
    int32_t t = 0;
    for (int32_t g = 0; g < j->ngroups; g++) {
        const json_t *gr = json_array_get(groups, (size_t)g);
        j->greq[g].v[HRM_DIM_CPU] = json_integer_value(json_object_get(gr, "cpu"));
        j->greq[g].v[HRM_DIM_MEM] = json_integer_value(json_object_get(gr, "mem"));
        j->greq[g].v[HRM_DIM_GPU] = json_integer_value(json_object_get(gr, "gpus"));
        j->greq[g].v[HRM_DIM_GPU_MEM] = json_integer_value(json_object_get(gr, "gpu_mem"));
        /* Jobs stored before shares existed asked whole GPUs. */
        const json_t *share = json_object_get(gr, "gpu_share");
        j->gshare[g] = share                           ? (int32_t)json_integer_value(share)
                       : j->greq[g].v[HRM_DIM_GPU] > 0 ? 1000
                                                       : 0;
        int64_t count = json_integer_value(json_object_get(gr, "count"));
        for (int64_t k = 0; k < count && t < j->ntasks; k++, t++) {
            j->tasks[t].group = g;
            j->tasks[t].node = -1;
            j->tasks[t].sched = -1;
            j->tasks[t].start_us = j->tasks[t].end_us = -1;
        }
    }
    j->count.state[HRM_RTASK_PENDING] = j->ntasks; /* calloc'd tasks are pending */
    return j;
}

/* ---- the counters: every change of a task's state, start or node passes here ---- */

/* Adds (sign 1) or removes (-1) t's share of its job's and its node's counters. */
static void task_count(struct master *m, struct rjob *j, const struct rtask *t, int32_t sign)
{
    m->task_changes++;
    j->count.state[t->state < RTASK_NSTATES ? t->state : 0] += sign;
    if (t->state != HRM_RTASK_RUNNING)
        return;
    bool queued = t->start_us < 0;
    if (queued)
        j->count.queued += sign;
    if (t->node < 0 || t->node >= m->nnodes)
        return;
    struct rnode *rn = &m->nodes[t->node];
    if (sign > 0) {
        HRM_GROW(rn->runs, rn->cap_runs, (size_t)rn->nruns + 1);
        rn->runs[rn->nruns] = (struct task_ref){j, (int32_t)(t - j->tasks)};
        ((struct rtask *)t)->node_slot = rn->nruns++;
    } else if (t->node_slot >= 0 && t->node_slot < rn->nruns &&
               rn->runs[t->node_slot].job == j &&
               rn->runs[t->node_slot].idx == (int32_t)(t - j->tasks)) {
        struct task_ref last = rn->runs[--rn->nruns];
        rn->runs[t->node_slot] = last;
        last.job->tasks[last.idx].node_slot = t->node_slot;
    }
    if (queued) {
        rn->nqueued += sign;
        return;
    }
    rn->nstarted += sign;
    rn->cpu_used += sign * j->greq[t->group].v[HRM_DIM_CPU];
    rn->mem_used += sign * j->greq[t->group].v[HRM_DIM_MEM];
    for (uint32_t mask = t->gpu_mask; mask; mask &= mask - 1) { /* nothing for CPU tasks */
        rn->gpu_milli[__builtin_ctz(mask)] += sign * j->gshare[t->group];
        rn->gpu_ntasks[__builtin_ctz(mask)] += sign;
    }
}

void task_set_state(struct master *m, struct rjob *j, int32_t idx, uint8_t state)
{
    struct rtask *t = &j->tasks[idx];
    task_count(m, j, t, -1);
    t->state = state;
    task_count(m, j, t, 1);
}

static void task_put_start(struct master *m, struct rjob *j, int32_t idx, int64_t start_us)
{
    struct rtask *t = &j->tasks[idx];
    task_count(m, j, t, -1);
    t->start_us = start_us;
    task_count(m, j, t, 1);
}

/* A run's start as its agent reported it, or as the store kept it (-1: not started). */
void task_set_start(struct master *m, struct rjob *j, int32_t idx, int64_t start_us)
{
    task_put_start(m, j, idx, start_us);
    if (start_us >= 0 &&
        (j->first_start_us < 0 || j->first_start_sent || start_us < j->first_start_us)) {
        j->first_start_us = start_us;
        j->first_start_sent = false;
    }
}

/* A run whose launch the master sends now: it counts as started, and until an agent reports a
 * start, the sending time stands for the job's first start.  A reported start replaces it even
 * when later (the task starts after its launch leaves), so the job's start is the same before
 * and after a restart, which reads the starts the runs' rows kept. */
void task_set_sent(struct master *m, struct rjob *j, int32_t idx, int64_t sent_us)
{
    task_put_start(m, j, idx, sent_us);
    if (j->first_start_us < 0) {
        j->first_start_us = sent_us;
        j->first_start_sent = true;
    }
}

void task_set_node(struct master *m, struct rjob *j, int32_t idx, int32_t node)
{
    struct rtask *t = &j->tasks[idx];
    task_count(m, j, t, -1);
    t->node = node;
    task_count(m, j, t, 1);
}

void task_set_gpus(struct master *m, struct rjob *j, int32_t idx, uint32_t gpu_mask)
{
    struct rtask *t = &j->tasks[idx];
    task_count(m, j, t, -1);
    t->gpu_mask = gpu_mask;
    task_count(m, j, t, 1);
}

void jobs_recount(const struct rjob *j, struct rcounts *out)
{
    memset(out, 0, sizeof(*out));
    for (int32_t i = 0; i < j->ntasks; i++) {
        const struct rtask *t = &j->tasks[i];
        out->state[t->state < RTASK_NSTATES ? t->state : 0]++;
        out->queued += t->state == HRM_RTASK_RUNNING && t->start_us < 0;
    }
}

bool jobs_counts_check(const struct master *m, const struct rjob *only, char *why, size_t len)
{
    for (size_t i = 0; i < m->njobs; i++) {
        const struct rjob *j = m->jobs[i];
        struct rcounts c;
        if (!j || (only && j != only))
            continue;
        jobs_recount(j, &c);
        if (memcmp(&c, &j->count, sizeof(c)) != 0) {
            snprintf(why, len,
                     HRM_JOB_FMT ": counted %d/%d/%d/%d/%d/%d queued %d, recount %d/%d/%d/%d/%d/%d"
                                 " queued %d",
                     (long long)j->id, j->count.state[0], j->count.state[1], j->count.state[2],
                     j->count.state[3], j->count.state[4], j->count.state[5], j->count.queued,
                     c.state[0], c.state[1], c.state[2], c.state[3], c.state[4], c.state[5],
                     c.queued);
            return false;
        }
    }
    if (only)
        return true;
    struct rnode *n = hrm_calloc((size_t)m->nnodes + 1, sizeof(*n));
    for (size_t i = 0; i < m->njobs; i++) {
        const struct rjob *j = m->jobs[i];
        for (int32_t k = 0; j && k < j->ntasks; k++) {
            const struct rtask *t = &j->tasks[k];
            if (t->state != HRM_RTASK_RUNNING || t->node < 0 || t->node >= m->nnodes)
                continue;
            struct rnode *x = &n[t->node];
            if (t->start_us < 0) {
                x->nqueued++;
                continue;
            }
            x->nstarted++;
            x->cpu_used += j->greq[t->group].v[HRM_DIM_CPU];
            x->mem_used += j->greq[t->group].v[HRM_DIM_MEM];
            for (uint32_t mask = t->gpu_mask; mask; mask &= mask - 1) {
                x->gpu_milli[__builtin_ctz(mask)] += j->gshare[t->group];
                x->gpu_ntasks[__builtin_ctz(mask)]++;
            }
        }
    }
    bool ok = true;
    for (int32_t k = 0; k < m->nnodes && ok; k++) {
        const struct rnode *a = &m->nodes[k], *b = &n[k];
        ok = a->nstarted == b->nstarted && a->nqueued == b->nqueued &&
             a->cpu_used == b->cpu_used && a->mem_used == b->mem_used;
        if (ok && (memcmp(a->gpu_milli, b->gpu_milli, sizeof(a->gpu_milli)) != 0 ||
                   memcmp(a->gpu_ntasks, b->gpu_ntasks, sizeof(a->gpu_ntasks)) != 0)) {
            ok = false;
            snprintf(why, len, "node %s: GPU shares counted differ from the recount", a->name);
            break;
        }
        if (!ok)
            snprintf(why, len,
                     "node %s: counted %d started %d queued %lld cpu %lld mem, recount %d %d"
                     " %lld %lld",
                     a->name, a->nstarted, a->nqueued, (long long)a->cpu_used,
                     (long long)a->mem_used, b->nstarted, b->nqueued, (long long)b->cpu_used,
                     (long long)b->mem_used);
    }
    hrm_free(n);
    return ok;
}

/* Test builds check the counters of a job at its end and at every `hrm job`, and every
 * counter at every `hrm nodes`; a drift aborts there, where the change that caused it is near. */
static void counts_assert(const struct master *m, const struct rjob *only)
{
#ifndef NDEBUG
    char why[256];
    if (!jobs_counts_check(m, only, why, sizeof(why))) {
        hrm_log(HRM_LOG_CRIT, "task counters drifted: %s", why);
        abort();
    }
#else
    (void)m;
    (void)only;
#endif
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
                                 .end_us = t->end_us,
                                 .error = t->error,
                                 .restarts = t->restarts,
                                 .crash_streak = t->crash_streak,
                                 .backoff_us = t->backoff_us,
                                 .restart_at_us = t->restart_at_us};
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
    if (row->id >= m->next_job)
        m->next_job = row->id + 1; /* a row dropped below still holds its id */
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
    /* By its index: the store's rows and every registration name a node. */
    int32_t found = nodeidx_find(m, NODEIDX_NAME, name, strlen(name));
    if (found >= 0 || !create)
        return found;
    HRM_GROW(m->nodes, m->cap_nodes, (size_t)m->nnodes + 1);
    struct rnode *rn = &m->nodes[m->nnodes];
    memset(rn, 0, sizeof(*rn));
    snprintf(rn->name, sizeof(rn->name), "%s", name);
    snprintf(rn->rack, sizeof(rn->rack), "r0");
    rn->cores = 1; /* a placeholder until the agent registers: down, holds nothing */
    rn->host_next = -1;
    nodeidx_add(m, NODEIDX_NAME, m->nnodes);
    return m->nnodes++;
}

static int load_task(void *arg, const struct hrm_store_task *row)
{
    struct master *m = arg;
    struct rjob *j = jobs_find(m, row->job);
    if (!j || row->idx < 0 || row->idx >= j->ntasks)
        return 0;
    struct rtask *t = &j->tasks[row->idx];
    task_set_state(m, j, row->idx, (uint8_t)row->state);
    t->attempt = row->attempt;
    task_set_node(m, j, row->idx, row->node[0] ? nodes_find(m, row->node, true) : -1);
    t->exit = row->exit;
    t->signal = row->signal;
    t->oom = row->oom;
    task_set_start(m, j, row->idx, row->start_us);
    t->end_us = row->end_us;
    jobs_set_task_error(t, row->error);
    t->restarts = row->restarts;
    t->crash_streak = row->crash_streak;
    t->backoff_us = row->backoff_us;
    t->restart_at_us = row->state == HRM_RTASK_PENDING ? row->restart_at_us : 0;
    stream_task_loaded(m, t);
    if (t->state == HRM_RTASK_FAILED && jobs_live(j))
        j->failed = true;
    return 0;
}

/* The running kernel's boot (a hash of its boot_id, never 0); 0 if it cannot be read. */
static int64_t host_boot(void)
{
    char id[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return 0;
    if (!fgets(id, sizeof(id), f))
        id[0] = '\0';
    fclose(f);
    uint64_t h = hrm_hash(HRM_HASH_SEED, id, strcspn(id, "\n"));
    return *id ? (int64_t)(h >> 1) | 1 : 0;
}

/*
 * The next job id.  A launch may leave before its turn's commit is synced (turn() in master.c):
 * a master killed then keeps the commit (the kernel's page cache has it), but a host that lost
 * power or crashed may not, and the ids of that commit's jobs would be handed out again while a
 * task of the forgotten job may still run on an agent of another host, which could then pass
 * for the new job's.  So after a host restart (its boot id differs from the one the last master
 * recorded, or is unknown) the ids that commit could have held are skipped.  A master restarted
 * on the same host boot skips nothing.  Written before any turn, as writes of their own (synced).
 */
static int next_job_after_restart(struct master *m, struct hrm_error *err)
{
    int64_t boot = host_boot(), last = hrm_store_meta_get(m->store, "host_boot", 0);
    if (last != 0 && (boot == 0 || boot != last)) {
        hrm_log(HRM_LOG_NOTICE, "the host restarted since the last master: job ids %lld to %lld "
                "skipped (a commit lost with the host may have launched tasks under them)",
                (long long)m->next_job, (long long)(m->next_job + JOB_IDS_UNSYNCED_MAX - 1));
        m->next_job += JOB_IDS_UNSYNCED_MAX;
        int rc = hrm_store_meta_put(m->store, "next_job", m->next_job, err);
        if (rc < 0)
            return rc;
    }
    return boot != last ? hrm_store_meta_put(m->store, "host_boot", boot, err) : 0;
}

int jobs_load(struct master *m, struct hrm_error *err)
{
    m->next_job = 1; /* then past every job row (load_job) */
    int rc = hrm_store_load(m->store, load_job, load_task, m, err);
    if (rc < 0)
        return rc;
    /* The ids skipped after a host's restart (below) are in meta; any other id given is a row. */
    int64_t skipped_to = hrm_store_meta_get(m->store, "next_job", 1);
    if (skipped_to > m->next_job)
        m->next_job = skipped_to;
    return next_job_after_restart(m, err);
}

/* ---- task and job transitions ---- */

void jobs_set_task_error(struct rtask *t, const char *why)
{
    hrm_free(t->error);
    t->error = why && *why ? hrm_strdup(why) : NULL;
    for (char *c = t->error; c && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

void jobs_task_placed(struct master *m, struct rjob *j, int32_t idx, int32_t node, int32_t attempt,
                      uint32_t gpu_mask, bool started)
{
    struct rtask *t = &j->tasks[idx];
    metrics_placed(&m->counters, j->queue, t->attempt == 0, master_now_us() - j->submit_us);
    task_set_state(m, j, idx, HRM_RTASK_RUNNING);
    task_set_node(m, j, idx, node);
    t->attempt = attempt;
    task_count(m, j, t, -1); /* the node's GPU shares follow the mask */
    t->gpu_mask = gpu_mask;
    task_count(m, j, t, 1);
    if (started)
        task_set_sent(m, j, idx, master_now_us());
    else
        task_set_start(m, j, idx, -1);
    t->end_us = -1;
    t->pid = 0;
    jobs_set_task_error(t, NULL); /* a new attempt: an earlier one's failure no longer applies */
    if (j->state == HRM_JOB_PENDING) {
        j->state = HRM_JOB_RUNNING;
        jobs_persist_state(m, j);
        events_add(m, "job_started", j->id, -1, -1, NULL);
    }
    jobs_persist_task(m, j, idx);
    /* Placed in a node's execution queue (distributed policies) or launched: the agent's own
     * task_started is not logged, so that a start costs no transaction of its own. */
    events_task(m, started ? "task_started" : "task_queued", j, idx, NULL);
}

void jobs_task_running(struct master *m, struct rjob *j, int32_t idx, int32_t node, int32_t attempt,
                       uint32_t gpu_mask)
{
    jobs_task_placed(m, j, idx, node, attempt, gpu_mask, true);
    size_t len;
    char *text = jobs_launch_text(j, idx, &len);
    master_send_launch(m, node, text, len);
}

/* A launch's field: ,"name": then its value; false (nothing written) where jansson's tree
 * would not hold it (json_object_set of an absent value) or its dump would fail. */
static bool launch_field(struct hrm_jtext *t, const char *name, const json_t *v)
{
    if (!v)
        return false;
    size_t at = t->len;
    hrm_jtext_key(t, name);
    if (hrm_jtext_value(t, v))
        return true;
    t->len = at;
    return false;
}

/*
 * Every launch written directly (no tree of ~16 fields to build, dump and free per task), field
 * by field as jobs_launch_json builds it: the same bytes (test_onehost3_launch).  Keep the two
 * in step.
 */
char *jobs_launch_text(const struct rjob *j, int32_t idx, size_t *len)
{
    const struct rtask *t = &j->tasks[idx];
    const json_t *g = json_array_get(json_object_get(j->spec, "tasks"), (size_t)t->group);
    struct hrm_jtext x = {0};
    hrm_wire_text_head(&x, HRM_WIRE_TASK_LAUNCH);
    hrm_jtext_field_int(&x, "job", j->id);
    hrm_jtext_field_int(&x, "task", idx);
    hrm_jtext_field_int(&x, "attempt", t->attempt);
    hrm_jtext_field_int(&x, "gpu_mask", t->gpu_mask);
    launch_field(&x, "cmd", json_object_get(g, "cmd"));
    launch_field(&x, "cwd", json_object_get(g, "cwd"));
    launch_field(&x, "env", json_object_get(g, "env"));
    hrm_jtext_field_int(&x, "cpu", j->greq[t->group].v[HRM_DIM_CPU]);
    hrm_jtext_field_int(&x, "mem", j->greq[t->group].v[HRM_DIM_MEM]);
    hrm_jtext_field_int(&x, "gpus", j->greq[t->group].v[HRM_DIM_GPU]);
    hrm_jtext_field_int(&x, "gpu_share", j->gshare[t->group]);
    hrm_jtext_field_int(&x, "gpu_mem", j->greq[t->group].v[HRM_DIM_GPU_MEM]);
    if (json_is_false(json_object_get(g, "output")))
        hrm_jtext_put(&x, ",\"output\":false", 15);
    size_t at = x.len;
    hrm_jtext_put(&x, ",\"user\":", 8);
    if (!hrm_jtext_string(&x, j->user, strlen(j->user)))
        x.len = at; /* json_string refuses it, and the tree leaves the field out */
    hrm_jtext_put(&x, "}", 1);
    return hrm_jtext_take(&x, len);
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
    /* What the agent limits a shared GPU to (docs/protocol.md, "Fractional GPUs"). */
    json_object_set_new(l, "gpu_share", json_integer(j->gshare[t->group]));
    json_object_set_new(l, "gpu_mem", json_integer(j->greq[t->group].v[HRM_DIM_GPU_MEM]));
    if (json_is_false(json_object_get(g, "output")))
        json_object_set_new(l, "output", json_false());
    json_object_set_new(l, "user", json_string(j->user)); /* the account the task runs as */
    return l;
}

void jobs_task_lost(struct master *m, struct rjob *j, int32_t idx)
{
    task_set_state(m, j, idx, HRM_RTASK_PENDING);
    stream_task_lost(j, idx);
    jobs_persist_task(m, j, idx);
    events_task_retried(m, j, idx, "node_lost");
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

/* ---- waits: each job lists its own; an index finds a resent one and counts each client's ---- */

#define MAX_WAITS_DEFAULT 10000

static uint64_t peer_hash(const struct peer_id *p)
{
    return hrm_hash(HRM_HASH_SEED, p->id, p->len);
}

/* The index's keys.  A wait is (job, client, req): the job and the client's hash share the 64-bit
 * part, req the 32-bit one; two requests of one client whose req differ by a multiple of 2^32
 * would be taken for one (a client numbers its requests from 1). */
static int64_t wait_key(const struct waiter *w, int64_t job)
{
    return (int64_t)(peer_hash(&w->peer) ^ ((uint64_t)job * 0x9E3779B97F4A7C15ull));
}

static int32_t waits_of(const struct master *m, uint64_t peer)
{
    int32_t n = task_map_find(&m->wait_peers, (int64_t)peer, 0);
    return n < 0 ? 0 : n;
}

static void waits_set(struct master *m, uint64_t peer, int32_t n)
{
    task_map_del(&m->wait_peers, (int64_t)peer, 0);
    if (n > 0)
        task_map_put(&m->wait_peers, (int64_t)peer, 0, n);
}

static void job_done_reply(struct master *m, const struct peer_id *to, long long req,
                           const struct rjob *j)
{
    json_t *r = hrm_wire_new(HRM_WIRE_JOB_DONE);
    json_object_set_new(r, "req", json_integer(req));
    json_object_set_new(r, "id", json_integer(j->id));
    json_object_set_new(r, "state", json_string(hrm_job_state_name(j->state)));
    json_object_set_new(r, "exit", json_integer(j->exit));
    master_send(m, to, r);
    snap_client_wrote(m); /* a client that heard the job ended lists it ended */
}

/* The job ended: its own waiters hear it (nobody else's list is looked at). */
static void notify_waiters(struct master *m, struct rjob *j)
{
    for (size_t i = 0; i < j->nwaiters; i++) {
        const struct waiter *w = &j->waiters[i];
        job_done_reply(m, &w->peer, w->req, j);
        task_map_del(&m->wait_set, wait_key(w, j->id), (int32_t)w->req);
        uint64_t ph = peer_hash(&w->peer);
        waits_set(m, ph, waits_of(m, ph) - 1);
    }
    j->nwaiters = 0;
    hrm_free(j->waiters);
    j->waiters = NULL;
    j->cap_waiters = 0;
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
                task_set_state(m, j, i, HRM_RTASK_DONE);
            else if (s == HRM_TASK_FAILED)
                task_set_state(m, j, i,
                               t->state == HRM_RTASK_RUNNING ? HRM_RTASK_FAILED
                                                             : HRM_RTASK_SKIPPED);
        } else if (t->state == HRM_RTASK_PENDING) {
            task_set_state(m, j, i, HRM_RTASK_SKIPPED);
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
    trace_step(m, "done", j->id, -1, -1);
    jobs_persist_state(m, j);
    events_add(m, "job_finished", j->id, -1, -1,
               json_pack("{s:s, s:i}", "state", hrm_job_state_name(j->state), "exit", j->exit));
    hrm_log(HRM_LOG_INFO, HRM_JOB_FMT " (%s) %s, exit %d", (long long)j->id, j->name,
            hrm_job_state_name(j->state), j->exit);
    counts_assert(m, j);
    notify_waiters(m, j);
}

/* ---- client requests ---- */

static long long req_of(const json_t *msg)
{
    return json_integer_value(json_object_get(msg, "req"));
}

int32_t jobs_nodes_up(const struct master *m)
{
    int32_t up = 0;
    for (int32_t n = 0; n < m->nnodes; n++)
        up += m->nodes[n].up;
    return up;
}

struct group_ask jobs_group_ask(const json_t *group)
{
    return (struct group_ask){.cpu = json_integer_value(json_object_get(group, "cpu")),
                              .mem = json_integer_value(json_object_get(group, "mem")),
                              .gpus = json_integer_value(json_object_get(group, "gpus")),
                              .gpu_share = json_integer_value(json_object_get(group, "gpu_share")),
                              .gpu_mem = json_integer_value(json_object_get(group, "gpu_mem")),
                              .count = json_integer_value(json_object_get(group, "count"))};
}

static const char *fits_nowhere(struct master *m, const json_t *spec, char *why, size_t len)
{
    if (jobs_nodes_up(m) == 0)
        return NULL; /* nodes may still come: accept and wait */
    size_t g;
    const json_t *gr;
    json_array_foreach(json_object_get(spec, "tasks"), g, gr)
    {
        struct group_ask ask = jobs_group_ask(gr);
        int64_t cpu = ask.cpu, mem = ask.mem, gpus = ask.gpus, gpu_mem = ask.gpu_mem;
        int64_t per_gpu = gpus > 0 ? (gpu_mem + gpus - 1) / gpus : 0, most = 0;
        bool fits = false, gpus_fit = false;
        for (int32_t n = 0; n < m->nnodes && !fits; n++) {
            const struct rnode *rn = &m->nodes[n];
            if (!rn->up || rn->gpus < gpus)
                continue;
            gpus_fit |= gpus == 0 || rn->gpu_mem >= per_gpu;
            most = rn->gpu_mem > most ? rn->gpu_mem : most;
            fits = (int64_t)rn->cores * 1000 >= cpu && rn->mem >= mem &&
                   (gpus == 0 || rn->gpu_mem >= per_gpu);
        }
        if (!fits && gpus > 0 && most > 0 && !gpus_fit) {
            char want[32], have[32];
            hrm_format_size(per_gpu, want, sizeof(want));
            hrm_format_size(most, have, sizeof(have));
            snprintf(why, len,
                     "tasks[%zu].gpu_mem: %s per GPU is more than any node's GPUs have (at most "
                     "%s)",
                     g, want, have);
            return why;
        }
        if (!fits)
            return "a task asks for more than any node has";
    }
    return NULL;
}

static void reply_submitted(struct master *m, const struct peer_id *from, const json_t *msg,
                            int64_t id)
{
    json_t *r = hrm_wire_new(HRM_WIRE_SUBMITTED);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "id", json_integer(id));
    master_send(m, from, r);
}

/* A submission key is 1..SUBMIT_KEY_MAX of [A-Za-z0-9._:-]: printable in logs and errors. */
#define SUBMIT_KEY_MAX 128

static bool submit_key_ok(const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || n > SUBMIT_KEY_MAX || strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                                    "qrstuvwxyz0123456789._:-") != n)
        return false;
    return true;
}

void on_submit(struct master *m, const struct peer_id *from, json_t *msg)
{
    struct hrm_error err;
    /* The client's key makes a resubmission (its retry after no answer)
     * idempotent: a known key gets the job it made, never a second one. */
    const char *key = json_string_value(json_object_get(msg, "key"));
    if (key) {
        if (!submit_key_ok(key)) {
            master_reply_error(m, from, HRM_WERR_BAD_FIELD, req_of(msg),
                               "key: expected 1..%d characters of A-Z a-z 0-9 . _ : -",
                               SUBMIT_KEY_MAX);
            return;
        }
        int64_t known = hrm_store_job_by_key(m->store, key, &err);
        if (known < 0) {
            master_store_failed(m, (int)known, &err);
            return;
        }
        if (known > 0) {
            hrm_log(HRM_LOG_INFO, HRM_JOB_FMT " submitted again (key %s): the same job",
                    (long long)known, key);
            reply_submitted(m, from, msg, known);
            return;
        }
    }
    json_t *spec = hrm_jobdesc_normalise(json_object_get(msg, "job"), "/", &err);
    if (!spec) {
        master_reply_error(m, from, HRM_WERR_BAD_SPEC, req_of(msg), "%s", err.text);
        return;
    }
    const char *user = keys_job_user(m, from, json_object_get(msg, "job"), req_of(msg));
    if (!user) {
        json_decref(spec);
        return;
    }
    json_object_set_new(spec, "user", json_string(user)); /* the key's account, not a label */
    const char *why = m->dist ? dist_refuse_spec(m, spec) : NULL;
    char nowhere[160];
    if (!why)
        why = fits_nowhere(m, spec, nowhere, sizeof(nowhere));
    char stream_why[256];
    if (!why)
        why = stream_refuse_spec(m, spec, stream_why, sizeof(stream_why));
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
                                .spec = text,
                                .submit_key = key};
    /* The job row alone: job rows are never removed, so the next id after a restart is the
     * highest row's plus one (jobs_load), and a meta row rewritten per submission would add a
     * statement and a page to every commit that carries one. */
    int rc = hrm_store_insert_job(m->store, &row, &err);
    free(text);
    if (rc < 0) {
        job_free(j);
        master_store_failed(m, rc, &err);
        return;
    }
    jobs_put(m, j);
    sched_job_arrived(m, j);
    events_add(m, "job_submitted", id, -1, -1,
               json_pack("{s:s, s:s, s:s, s:i}", "name", j->name, "user", j->user, "queue",
                         j->queue, "ntasks", j->ntasks));
    hrm_log(HRM_LOG_INFO, HRM_JOB_FMT " (%s) submitted: %d tasks", (long long)id, j->name,
            j->ntasks);
    m->turn_new_jobs++;
    trace_step(m, "submit", id, -1, -1);
    /* Sent after the turn commits: the acknowledgement follows durability. */
    reply_submitted(m, from, msg, id);
}

/* A job as listed: O(1), from its counters.  "exit" is null until the job ends. */
json_t *jobs_summary_json(const struct rjob *j)
{
    const int32_t *c = j->count.state;
    /* "running" counts the tasks placed on a node; "queued" those of them that
     * wait in the node's execution queue (distributed scheduling) to start. */
    return json_pack("{s:I, s:s, s:s, s:s, s:i, s:s, s:s, s:o, s:i, s:i, s:i, s:i, s:i, s:i, s:i,"
                     " s:i, s:I, s:I, s:I}",
                     "id", (json_int_t)j->id, "name", j->name, "user", j->user, "queue",
                     j->queue, "priority", j->priority, "kind", hrm_job_kind_name(j->kind), "state", hrm_job_state_name(j->state),
                     "exit", jobs_live(j) ? json_null() : json_integer(j->exit), "ntasks",
                     j->ntasks, "pending", c[HRM_RTASK_PENDING], "running",
                     c[HRM_RTASK_RUNNING], "queued", j->count.queued, "done", c[HRM_RTASK_DONE],
                     "failed", c[HRM_RTASK_FAILED], "skipped", c[HRM_RTASK_SKIPPED], "cancelled",
                     c[HRM_RTASK_CANCELLED], "submit_us", (json_int_t)j->submit_us, "start_us",
                     (json_int_t)j->first_start_us, "end_us", (json_int_t)j->end_us);
}

/* An optional integer field that must lie in [lo, hi]: 0 and *out (dflt when absent), or -1
 * after replying with the error. */
static int opt_int(struct master *m, const struct peer_id *from, const json_t *msg,
                   const char *name, json_int_t lo, json_int_t hi, json_int_t dflt, json_int_t *out)
{
    const json_t *v = json_object_get(msg, name);
    *out = v ? json_integer_value(v) : dflt;
    if (*out >= lo && *out <= hi)
        return 0;
    /* A page larger than the master serves is a cap, not a malformed request. */
    bool cap = strcmp(name, "limit") == 0 && *out > hi;
    master_reply_error(m, from, cap ? HRM_WERR_LIMIT : HRM_WERR_BAD_FIELD,
                       req_of(msg), "%s: %lld is out of range %lld..%lld", name, (long long)*out,
                       (long long)lo, (long long)hi);
    return -1;
}

/* Newest first: jobs with an id below "before" (default: all), at most "limit" (<= LIST_MAX_JOBS)
 * of them; without "all", the unfinished ones and the 50 latest.  "next" is the "before" of the
 * following page, 0 when there is none. */
void on_jobs(struct master *m, const struct peer_id *from, json_t *msg)
{
    snap_listing_asked(m); /* snapshots are kept fresh while listings are asked */
    bool all = json_is_true(json_object_get(msg, "all"));
    json_int_t before, limit;
    if (opt_int(m, from, msg, "before", 1, INT64_MAX, (json_int_t)m->njobs + 1, &before) < 0 ||
        opt_int(m, from, msg, "limit", 1, LIST_MAX_JOBS, LIST_MAX_JOBS, &limit) < 0)
        return;
    json_t *list = json_array();
    size_t n = 0, i = (size_t)before - 1 < m->njobs ? (size_t)before - 1 : m->njobs;
    size_t latest = m->njobs; /* "the 50 latest" counts from the newest job, whatever the page */
    while (i > 0 && n < (size_t)limit) {
        struct rjob *j = m->jobs[--i];
        if (j && (all || jobs_live(j) || latest - i <= 50)) {
            json_array_append_new(list, jobs_summary_json(j));
            n++;
        }
    }
    /* Listed in id order. */
    json_t *sorted = json_array();
    for (size_t k = json_array_size(list); k > 0; k--)
        json_array_append(sorted, json_array_get(list, k - 1));
    json_decref(list);
    bool more = false;
    for (size_t k = i; k > 0 && !more; k--) /* is anything older listable? */
        more = m->jobs[k - 1] && (all || jobs_live(m->jobs[k - 1]) || latest - (k - 1) <= 50);
    json_t *r = hrm_wire_new(HRM_WIRE_JOBS_LIST);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    eta_annotate_list(m, sorted);
    json_object_set_new(r, "jobs", sorted);
    json_object_set_new(r, "truncated", json_boolean(more));
    json_object_set_new(r, "next", json_integer(more ? (json_int_t)i + 1 : 0));
    master_send(m, from, r);
}

static const char *task_state_shown(const struct rtask *t)
{
    return t->state == HRM_RTASK_RUNNING && t->start_us < 0 ? "queued"
                                                            : hrm_rtask_state_name(t->state);
}

/* How many of j's tasks in [from, to) are in state (NULL: any): from the counters when the range
 * is the whole job, else by a scan of the range, which the client chose. */
static int64_t tasks_matching(const struct rjob *j, int32_t from, int32_t to, const char *state)
{
    if (!state)
        return to - from;
    if (from == 0 && to == j->ntasks) {
        if (strcmp(state, "queued") == 0)
            return j->count.queued;
        for (int s = 0; s < RTASK_NSTATES; s++)
            if (strcmp(state, hrm_rtask_state_name(s)) == 0)
                return j->count.state[s] - (s == HRM_RTASK_RUNNING ? j->count.queued : 0);
        return 0;
    }
    int64_t n = 0;
    for (int32_t i = from; i < to; i++)
        n += strcmp(task_state_shown(&j->tasks[i]), state) == 0;
    return n;
}

static bool task_state_known(const char *s)
{
    if (strcmp(s, "queued") == 0)
        return true;
    for (int k = 0; k < RTASK_NSTATES; k++)
        if (strcmp(s, hrm_rtask_state_name(k)) == 0)
            return true;
    return false;
}

/* A job and a page of its tasks: those of [from, to) in state (all by default), at most limit
 * (<= LIST_MAX_TASKS).  The job object says how many match ("tasks_matching") and where the
 * next page starts ("tasks_next", -1 at the end), so a client never shows a part as the whole. */
/* The job's description as the sender may see it: another account's job (to a key that is not
 * admin) without its tasks' environment, whose values may be secrets (new reference). */
static json_t *spec_shown(const struct master *m, const struct rjob *j)
{
    if (keys_owns(m, j))
        return json_incref(j->spec);
    json_t *spec = json_deep_copy(j->spec), *g;
    size_t i;
    json_array_foreach(json_object_get(spec, "tasks"), i, g)
    {
        json_object_set_new(g, "env", json_object());
        json_object_set_new(g, "env_hidden", json_true());
    }
    return spec;
}

void on_job(struct master *m, const struct peer_id *from, json_t *msg)
{
    json_int_t id = json_integer_value(json_object_get(msg, "id"));
    struct rjob *j = jobs_find(m, id);
    if (!j) {
        master_reply_error(m, from, HRM_WERR_NOT_FOUND, req_of(msg), "no job %lld", (long long)id);
        return;
    }
    json_int_t lo, hi, limit;
    if (opt_int(m, from, msg, "from", 0, j->ntasks, 0, &lo) < 0 ||
        opt_int(m, from, msg, "to", lo, j->ntasks, j->ntasks, &hi) < 0 ||
        opt_int(m, from, msg, "limit", 1, LIST_MAX_TASKS, LIST_MAX_TASKS, &limit) < 0)
        return;
    const char *state = json_string_value(json_object_get(msg, "state"));
    if (state && !task_state_known(state)) {
        master_reply_error(m, from, HRM_WERR_BAD_FIELD, req_of(msg),
                           "state: '%.40s' is not a task state (pending, queued, running, done, "
                           "failed, skipped, cancelled)",
                           state);
        return;
    }
    counts_assert(m, j);
    json_t *o = jobs_summary_json(j);
    json_t *tasks = json_array();
    int32_t i = (int32_t)lo;
    for (; i < (int32_t)hi && json_array_size(tasks) < (size_t)limit; i++) {
        const struct rtask *t = &j->tasks[i];
        const char *shown = task_state_shown(t);
        if (state && strcmp(state, shown) != 0)
            continue;
        json_array_append_new(
            tasks, json_pack("{s:i, s:s, s:i, s:s, s:i, s:i, s:b, s:I, s:I, s:I, s:I}", "task", i,
                             "state", shown, "attempt", t->attempt, "node",
                             t->node >= 0 ? m->nodes[t->node].name : "", "exit", t->exit,
                             "signal", t->signal, "oom", t->oom, "start_us",
                             (json_int_t)t->start_us, "end_us", (json_int_t)t->end_us, "cpu_us",
                             (json_int_t)t->cpu_us, "rss", (json_int_t)t->rss));
        json_object_set_new(json_array_get(tasks, json_array_size(tasks) - 1), "rss_peak",
                            json_integer(t->rss_peak));
        fgm_task_json(m, j, i, json_array_get(tasks, json_array_size(tasks) - 1));
        if (t->error) /* why a launch failed (command not found, no such working directory, ...) */
            json_object_set_new(json_array_get(tasks, json_array_size(tasks) - 1), "error",
                                json_string(t->error));
        if (j->kind == HRM_JOB_STREAM) { /* exit and signal are then the latest run's */
            json_t *row = json_array_get(tasks, json_array_size(tasks) - 1);
            json_object_set_new(row, "restarts", json_integer(t->restarts));
            json_object_set_new(row, "backoff_us", json_integer(t->backoff_us));
            json_object_set_new(row, "restart_at_us", json_integer(t->restart_at_us));
        }
    }
    bool more = false; /* does a later task of the range match? */
    for (int32_t k = i; k < (int32_t)hi && !more; k++)
        more = !state || strcmp(state, task_state_shown(&j->tasks[k])) == 0;
    json_object_set_new(o, "tasks", tasks);
    json_object_set_new(o, "tasks_matching",
                        json_integer(tasks_matching(j, (int32_t)lo, (int32_t)hi, state)));
    json_object_set_new(o, "tasks_next", json_integer(more ? i : -1));
    json_object_set_new(o, "spec", spec_shown(m, j));
    eta_describe_job(m, j, o);
    json_t *r = hrm_wire_new(HRM_WIRE_JOB_INFO);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "job", o);
    master_send(m, from, r);
}

/* What each node runs and queues comes from the table's counters (exact as of this turn), not
 * from the agents' heartbeats, which lag up to a period behind a job's end. */
json_t *jobs_nodes_json(struct master *m)
{
    json_t *list = json_array();
    int64_t now = hrm_mono_us();
    counts_assert(m, NULL);
    double *scores = master_perf_scores(m);
    for (int32_t n = 0; n < m->nnodes; n++) {
        const struct rnode *rn = &m->nodes[n];
        struct hrm_res fr = {0};
        bool known = sched_node_free(m, n, &fr);
        if (m->dist) {
            known = rn->up;
            fr.v[HRM_DIM_CPU] = (int64_t)rn->cores * 1000 - rn->cpu_used;
            fr.v[HRM_DIM_MEM] = rn->mem - rn->mem_used;
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
                            "tasks", rn->nstarted, "host", rn->host, "cgroup", rn->cgroup));
        json_t *last = json_array_get(list, json_array_size(list) - 1);
        json_object_set_new(last, "foreign_cpu", json_integer(rn->foreign_cpu));
        json_object_set_new(last, "foreign_mem", json_integer(rn->foreign_mem));
        json_object_set_new(last, "disk_busy", json_integer(rn->disk_busy_permille));
        mgpu_node_json(rn, last);
        if (rn->gpus > 0) { /* thousandths of each GPU its started tasks hold */
            json_t *shares = json_array();
            for (int32_t g = 0; g < rn->gpus && g < HRM_MAX_GPUS_PER_NODE; g++)
                json_array_append_new(shares, json_integer(rn->gpu_milli[g]));
            json_object_set_new(last, "gpu_shares", shares);
            json_t *holders = json_array(); /* and how many tasks share each (the page stacks them) */
            for (int32_t g = 0; g < rn->gpus && g < HRM_MAX_GPUS_PER_NODE; g++)
                json_array_append_new(holders, json_integer(rn->gpu_ntasks[g]));
            json_object_set_new(last, "gpu_tasks", holders);
        }
        master_perf_json(m, n, scores, last);
        if (m->dist) {
            json_t *o = json_array_get(list, json_array_size(list) - 1);
            json_object_set_new(o, "queued", json_integer(rn->nqueued));
            json_object_set_new(o, "moved_in", json_integer(rn->moved_in));
            json_object_set_new(o, "moved_out", json_integer(rn->moved_out));
        }
    }
    hrm_free(scores);
    return list;
}

void on_nodes(struct master *m, const struct peer_id *from, json_t *msg)
{
    json_t *list = jobs_nodes_json(m);
    json_t *r = hrm_wire_new(HRM_WIRE_NODES_LIST);
    json_object_set_new(r, "req", json_integer(req_of(msg)));
    json_object_set_new(r, "nodes", list);
    json_t *extra = dist_nodes_extra(m);
    if (extra)
        json_object_set_new(r, "shared", extra);
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
    if (!keys_may_act_on(m, from, j, "cancel", req_of(msg)))
        return;
    if (jobs_live(j)) {
        if (m->dist)
            dist_job_cancelled(m, j); /* before the task states change */
        for (int32_t i = 0; i < j->ntasks; i++) {
            struct rtask *t = &j->tasks[i];
            if (t->state == HRM_RTASK_RUNNING) {
                master_kill_run(m, t->node, j->id, i, t->attempt);
            }
            if (t->state == HRM_RTASK_RUNNING || t->state == HRM_RTASK_PENDING) {
                task_set_state(m, j, i, HRM_RTASK_CANCELLED);
                t->end_us = master_now_us();
                jobs_persist_task(m, j, i);
            }
        }
        j->state = HRM_JOB_CANCELLED;
        j->exit = 143; /* as if the job had been sent SIGTERM */
        j->end_us = master_now_us();
        jobs_persist_state(m, j);
        events_add(m, "job_cancelled", j->id, -1, -1, json_pack("{s:i}", "exit", j->exit));
        m->sched.dirty = true; /* its tasks leave the scheduler with the next rebuild */
        hrm_log(HRM_LOG_INFO, HRM_JOB_FMT " cancelled", (long long)j->id);
        counts_assert(m, j);
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
    if (!jobs_live(j)) {
        job_done_reply(m, from, req_of(msg), j);
        return;
    }
    struct waiter w = {*from, req_of(msg)};
    int64_t key = wait_key(&w, j->id);
    /* A client that asks again (it does every 2 s, and after a master restart) is not listed
     * twice. */
    if (task_map_find(&m->wait_set, key, (int32_t)w.req) >= 0)
        return;
    uint64_t ph = peer_hash(from);
    int32_t held = waits_of(m, ph);
    int32_t cap = m->cfg.max_waits > 0 ? m->cfg.max_waits : MAX_WAITS_DEFAULT;
    if (held >= cap) {
        master_reply_error(m, from, HRM_WERR_LIMIT, req_of(msg),
                           "wait: this client already waits on %d jobs, the most the master "
                           "takes (hrm master --max-waits)",
                           held);
        return;
    }
    task_map_put(&m->wait_set, key, (int32_t)w.req, 1);
    waits_set(m, ph, held + 1);
    HRM_GROW(j->waiters, j->cap_waiters, j->nwaiters + 1);
    j->waiters[j->nwaiters++] = w;
}

/* What a logs_data reply says of the task itself: `hrm logs --follow` stops once the task has
 * ended and its output is read, and exits with the task's code. */
static void logs_task_state(json_t *r, const struct rtask *t)
{
    const char *state = t->state == HRM_RTASK_RUNNING && t->start_us < 0
                            ? "queued"
                            : hrm_rtask_state_name(t->state);
    json_object_set_new(r, "state", json_string(state));
    json_object_set_new(r, "exit", json_integer(t->state == HRM_RTASK_CANCELLED ? 143
                                                : task_exit_code(t)));
    json_object_set_new(r, "attempt", json_integer(t->attempt));
}

/* A chunked read that cannot be served now: a logs_data with the error and the task's state, so
 * that a follower can wait for the task to run again (takes why). */
static void logs_failed(struct master *m, const struct peer_id *to, long long req,
                        const struct rtask *t, json_t *why)
{
    json_t *r = hrm_wire_new(HRM_WIRE_LOGS_DATA);
    json_object_set_new(r, "req", json_integer(req));
    json_object_set_new(r, "error", why);
    logs_task_state(r, t);
    master_send(m, to, r);
}

void on_logs_unanswered(struct master *m, const struct pending_logs *p)
{
    struct rjob *j = jobs_find(m, p->job);
    if (p->chunked && j)
        logs_failed(m, &p->client, p->client_req, &j->tasks[p->task],
                    json_string("the node did not answer"));
    else
        master_reply_error(m, &p->client, HRM_WERR_UNAVAILABLE, p->client_req,
                           "the node did not answer");
}

void on_logs(struct master *m, const struct peer_id *from, json_t *msg)
{
    json_int_t id = json_integer_value(json_object_get(msg, "id"));
    json_int_t task = json_integer_value(json_object_get(msg, "task"));
    const char *stream = json_string_value(json_object_get(msg, "stream"));
    json_int_t max = json_integer_value(json_object_get(msg, "max"));
    const json_t *offset = json_object_get(msg, "offset");
    struct rjob *j = jobs_find(m, id);
    if (!j || task >= j->ntasks) {
        master_reply_error(m, from, HRM_WERR_NOT_FOUND, req_of(msg), "no task %lld.%lld",
                           (long long)id, (long long)task);
        return;
    }
    if (!keys_may_act_on(m, from, j, "read the output of", req_of(msg)))
        return;
    if (!stream)
        stream = "out";
    if (strcmp(stream, "out") != 0 && strcmp(stream, "err") != 0) {
        master_reply_error(m, from, HRM_WERR_BAD_FIELD, req_of(msg), "stream must be out or err");
        return;
    }
    const struct rtask *t = &j->tasks[task];
    bool started = t->attempt > 0 && t->node >= 0 &&
                   !(t->state == HRM_RTASK_RUNNING && t->start_us < 0);
    if (!started && offset) {
        /* A chunked reader (hrm logs --follow) learns the task's state and asks again. */
        json_t *r = hrm_wire_new(HRM_WIRE_LOGS_DATA);
        json_object_set_new(r, "req", json_integer(req_of(msg)));
        json_object_set_new(r, "started", json_false());
        logs_task_state(r, t);
        master_send(m, from, r);
        return;
    }
    if (t->attempt == 0 || t->node < 0) {
        master_reply_error(m, from, HRM_WERR_NOT_FOUND, req_of(msg),
                           "task %lld.%lld has not run yet", (long long)id, (long long)task);
        return;
    }
    if (!m->nodes[t->node].up && offset) {
        logs_failed(m, from, req_of(msg), t, json_sprintf("node %s, which ran task %lld.%lld, is down",
                                                          m->nodes[t->node].name, (long long)id,
                                                          (long long)task));
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
    p->since_us = hrm_mono_us();
    p->job = j->id;
    p->task = (int32_t)task;
    p->attempt = t->attempt;
    p->chunked = offset != NULL;
    json_t *f = hrm_wire_new(HRM_WIRE_LOGS_FETCH);
    json_object_set_new(f, "req", json_integer(p->id));
    json_object_set_new(f, "job", json_integer(j->id));
    json_object_set_new(f, "task", json_integer(task));
    json_object_set_new(f, "attempt", json_integer(t->attempt));
    json_object_set_new(f, "stream", json_string(stream));
    /* Without an offset (an older client) the agent answers with the end of the file as text. */
    json_int_t cap = offset ? HRM_LOGS_CHUNK_MAX : LOGS_TEXT_MAX_BYTES;
    json_object_set_new(f, "max", json_integer(max > 0 && max < cap ? max : cap));
    if (offset)
        json_object_set_new(f, "offset", json_integer(json_integer_value(offset)));
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
        struct rjob *j = jobs_find(m, m->logs[i].job);
        if (j && json_object_get(msg, "chunk")) {
            json_object_set_new(r, "started", json_true());
            logs_task_state(r, &j->tasks[m->logs[i].task]);
            json_object_set_new(r, "attempt", json_integer(m->logs[i].attempt));
        }
        master_send(m, &m->logs[i].client, r);
        m->logs[i] = m->logs[--m->nlogs];
        return;
    }
}
