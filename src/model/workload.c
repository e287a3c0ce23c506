/* Workload model builders: jobs, stages (a DAG), tasks, input blocks and stage profiles. */
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/workload.h"

static const char *const kind_names[] = {
    [HRM_JOB_BATCH] = "batch", [HRM_JOB_STREAM] = "stream", [HRM_JOB_SERVICE] = "service"};

const char *hrm_job_kind_name(enum hrm_job_kind kind)
{
    return (unsigned)kind <= HRM_JOB_SERVICE ? kind_names[kind] : "?";
}

int hrm_job_kind_parse(const char *s)
{
    for (int k = 0; k <= HRM_JOB_SERVICE; k++)
        if (strcmp(s, kind_names[k]) == 0)
            return k;
    return -1;
}

struct hrm_workload *hrm_workload_new(void)
{
    struct hrm_workload *wl = hrm_calloc(1, sizeof(*wl));
    hrm_workload_set_queue(wl, "default", 1.0, 1.0, NULL);
    return wl;
}

void hrm_workload_free(struct hrm_workload *wl)
{
    if (!wl)
        return;
    hrm_free(wl->jobs);
    hrm_free(wl->stages);
    hrm_free(wl->tasks);
    hrm_free(wl->blocks);
    hrm_free(wl->phases);
    hrm_free(wl->stage_deps);
    hrm_free(wl->users);
    hrm_free(wl->queues);
    hrm_free(wl->gpu_phases);
    hrm_free(wl->task_memory);
    hrm_free(wl);
}

static int check_name(const char *name, const char *what, struct hrm_error *err)
{
    if (!name || !name[0])
        return hrm_errorf(err, -EINVAL, "%s name must not be empty", what);
    if (strlen(name) >= HRM_NAME_MAX)
        return hrm_errorf(err, -ENAMETOOLONG, "%s name is longer than %d characters", what,
                          HRM_NAME_MAX - 1);
    return 0;
}

int32_t hrm_workload_user(struct hrm_workload *wl, const char *name)
{
    /* Users are few (tens); a linear search keeps the model free of a hash table. */
    for (int32_t i = 0; i < wl->nusers; i++)
        if (strcmp(wl->users[i], name) == 0)
            return i;
    HRM_GROW(wl->users, wl->cap_users, (size_t)wl->nusers + 1);
    snprintf(wl->users[wl->nusers], HRM_NAME_MAX, "%s", name);
    return wl->nusers++;
}

int hrm_workload_find_queue(const struct hrm_workload *wl, const char *name)
{
    for (int32_t i = 0; i < wl->nqueues; i++)
        if (strcmp(wl->queues[i].name, name) == 0)
            return i;
    return -1;
}

int hrm_workload_set_queue(struct hrm_workload *wl, const char *name, double guarantee,
                           double max, struct hrm_error *err)
{
    int rc = check_name(name, "queue", err);
    if (rc)
        return rc;
    if (!(guarantee >= 0 && guarantee <= 1))
        return hrm_errorf(err, -EINVAL, "queue '%s': guarantee must be within 0..1", name);
    if (!(max >= guarantee && max <= 1) || max <= 0)
        return hrm_errorf(err, -EINVAL, "queue '%s': max must be within guarantee..1 and > 0",
                          name);
    int q = hrm_workload_find_queue(wl, name);
    if (q < 0) {
        HRM_GROW(wl->queues, wl->cap_queues, (size_t)wl->nqueues + 1);
        q = wl->nqueues++;
        memset(&wl->queues[q], 0, sizeof(wl->queues[q]));
        strcpy(wl->queues[q].name, name);
    }
    wl->queues[q].guarantee = guarantee;
    wl->queues[q].max = max;
    return q;
}

int hrm_workload_add_job(struct hrm_workload *wl, const struct hrm_job_desc *d,
                         struct hrm_error *err)
{
    int rc = check_name(d->name, "job", err);
    if (rc)
        return rc;
    if ((unsigned)d->kind > HRM_JOB_SERVICE)
        return hrm_errorf(err, -EINVAL, "job '%s': bad kind", d->name);
    if (d->user < 0 || d->user >= wl->nusers)
        return hrm_errorf(err, -EINVAL, "job '%s': no user %d", d->name, d->user);
    if (d->queue < 0 || d->queue >= wl->nqueues)
        return hrm_errorf(err, -EINVAL, "job '%s': no queue %d", d->name, d->queue);
    if (d->submit_us < 0 || d->deadline_us < 0)
        return hrm_errorf(err, -EINVAL, "job '%s': negative time", d->name);
    if (wl->njobs > 0 && wl->jobs[wl->njobs - 1].ntasks == 0)
        return hrm_errorf(err, -EINVAL, "job '%s' has no task",
                          wl->jobs[wl->njobs - 1].name);
    HRM_GROW(wl->jobs, wl->cap_jobs, (size_t)wl->njobs + 1);
    struct hrm_job *j = &wl->jobs[wl->njobs];
    memset(j, 0, sizeof(*j));
    strcpy(j->name, d->name);
    j->kind = d->kind;
    j->user = d->user;
    j->queue = d->queue;
    j->priority = d->priority;
    j->submit_us = d->submit_us;
    j->deadline_us = d->deadline_us;
    j->stage_first = wl->nstages;
    j->task_first = wl->ntasks;
    return wl->njobs++;
}

int hrm_workload_add_stage(struct hrm_workload *wl, const char *name, const int32_t *deps,
                           int32_t ndeps, struct hrm_error *err)
{
    int rc = check_name(name, "stage", err);
    if (rc)
        return rc;
    if (wl->njobs == 0)
        return hrm_errorf(err, -EINVAL, "stage '%s' before any job", name);
    struct hrm_job *j = &wl->jobs[wl->njobs - 1];
    if (j->nstages > 0 && wl->stages[wl->nstages - 1].ntasks == 0)
        return hrm_errorf(err, -EINVAL, "job '%s': stage '%s' has no task", j->name,
                          wl->stages[wl->nstages - 1].name);
    for (int32_t i = 0; i < j->nstages; i++)
        if (strcmp(wl->stages[j->stage_first + i].name, name) == 0)
            return hrm_errorf(err, -EEXIST, "job '%s': stage '%s' is defined twice", j->name,
                              name);
    for (int32_t i = 0; i < ndeps; i++) {
        /* Only earlier stages of the same job: the graph stays acyclic. */
        if (deps[i] < j->stage_first || deps[i] >= wl->nstages)
            return hrm_errorf(err, -EINVAL,
                              "job '%s': stage '%s' may depend only on earlier stages of its job",
                              j->name, name);
        for (int32_t k = 0; k < i; k++)
            if (deps[k] == deps[i])
                return hrm_errorf(err, -EINVAL, "job '%s': stage '%s' lists a dependency twice",
                                  j->name, name);
    }
    HRM_GROW(wl->stages, wl->cap_stages, (size_t)wl->nstages + 1);
    HRM_GROW(wl->stage_deps, wl->cap_deps, (size_t)wl->nstage_deps + (size_t)ndeps);
    struct hrm_stage *s = &wl->stages[wl->nstages];
    memset(s, 0, sizeof(*s));
    strcpy(s->name, name);
    s->job = wl->njobs - 1;
    s->task_first = wl->ntasks;
    s->dep_first = wl->nstage_deps;
    s->ndeps = ndeps;
    if (ndeps > 0)
        memcpy(&wl->stage_deps[wl->nstage_deps], deps, (size_t)ndeps * sizeof(*deps));
    wl->nstage_deps += ndeps;
    j->nstages++;
    return wl->nstages++;
}

int hrm_workload_add_task(struct hrm_workload *wl, const struct hrm_task_desc *d,
                          struct hrm_error *err)
{
    if (wl->njobs == 0 || wl->jobs[wl->njobs - 1].nstages == 0)
        return hrm_errorf(err, -EINVAL, "task before any stage");
    struct hrm_job *j = &wl->jobs[wl->njobs - 1];
    struct hrm_stage *s = &wl->stages[wl->nstages - 1];
    for (int dim = 0; dim < HRM_NDIM; dim++)
        if (d->req.v[dim] < 0)
            return hrm_errorf(err, -EINVAL, "job '%s' stage '%s': negative %s request", j->name,
                              s->name, hrm_dim_info(dim)->name);
    if (d->req.v[HRM_DIM_CPU] <= 0)
        return hrm_errorf(err, -EINVAL, "job '%s' stage '%s': a task must ask for some cpu",
                          j->name, s->name);
    if (d->req.v[HRM_DIM_GPU_MEM] > 0 && d->req.v[HRM_DIM_GPU] <= 0)
        return hrm_errorf(err, -EINVAL, "job '%s' stage '%s': gpu_mem without gpus", j->name,
                          s->name);
    if (d->duration_us < 0 || d->est_duration_us < 0)
        return hrm_errorf(err, -EINVAL, "job '%s' stage '%s': negative duration", j->name,
                          s->name);
    /* A share below one GPU names one GPU; whole GPUs (1000) any count of them. */
    if (d->gpu_milli < 0 || d->gpu_milli > 1000)
        return hrm_errorf(err, -EINVAL, "job '%s' stage '%s': GPU share %d: must be 0..1000",
                          j->name, s->name, d->gpu_milli);
    if ((d->gpu_milli > 0 && d->req.v[HRM_DIM_GPU] <= 0) ||
        (d->gpu_milli > 0 && d->gpu_milli < 1000 && d->req.v[HRM_DIM_GPU] != 1))
        return hrm_errorf(
            err, -EINVAL, "job '%s' stage '%s': a GPU share of %d thousandths needs %s", j->name,
            s->name, d->gpu_milli, d->gpu_milli < 1000 ? "exactly one GPU" : "gpus > 0");
    HRM_GROW(wl->tasks, wl->cap_tasks, (size_t)wl->ntasks + 1);
    struct hrm_task *t = &wl->tasks[wl->ntasks];
    memset(t, 0, sizeof(*t));
    t->job = wl->njobs - 1;
    t->stage = wl->nstages - 1;
    t->index = s->ntasks;
    t->req = d->req;
    t->duration_us = d->duration_us;
    t->est_duration_us = d->est_duration_us ? d->est_duration_us : d->duration_us;
    t->logic = d->logic;
    t->gpu_milli = d->gpu_milli;
    t->block_first = wl->nblocks;
    t->phase_first = wl->nphases;
    s->ntasks++;
    j->ntasks++;
    return wl->ntasks++;
}

int hrm_workload_add_block(struct hrm_workload *wl, int64_t size, const int32_t *replicas,
                           int32_t nreplicas, struct hrm_error *err)
{
    if (wl->ntasks == 0)
        return hrm_errorf(err, -EINVAL, "input block before any task");
    if (size < 0)
        return hrm_errorf(err, -EINVAL, "negative block size");
    if (nreplicas < 1 || nreplicas > HRM_MAX_REPLICAS)
        return hrm_errorf(err, -EINVAL, "a block needs 1..%d replicas", HRM_MAX_REPLICAS);
    HRM_GROW(wl->blocks, wl->cap_blocks, (size_t)wl->nblocks + 1);
    struct hrm_block *b = &wl->blocks[wl->nblocks];
    memset(b, 0, sizeof(*b));
    b->size = size;
    b->nreplicas = nreplicas;
    memcpy(b->replicas, replicas, (size_t)nreplicas * sizeof(*replicas));
    wl->tasks[wl->ntasks - 1].nblocks++;
    return wl->nblocks++;
}

int hrm_workload_add_phase(struct hrm_workload *wl, int64_t duration_us,
                           const struct hrm_res *demand, struct hrm_error *err)
{
    if (wl->ntasks == 0)
        return hrm_errorf(err, -EINVAL, "profile phase before any task");
    if (duration_us <= 0)
        return hrm_errorf(err, -EINVAL, "a profile phase needs a positive duration");
    HRM_GROW(wl->phases, wl->cap_phases, (size_t)wl->nphases + 1);
    wl->phases[wl->nphases].duration_us = duration_us;
    wl->phases[wl->nphases].demand = *demand;
    wl->tasks[wl->ntasks - 1].nphases++;
    return wl->nphases++;
}

/* Whether a task's request fits an empty node, GPUs included (per-GPU memory). */
static bool fits_empty_node(const struct hrm_task *t, const struct hrm_cluster *c,
                            const struct hrm_node *n)
{
    if (!hrm_res_fits(&t->req, &n->capacity))
        return false;
    int64_t gpus = t->req.v[HRM_DIM_GPU];
    if (gpus == 0)
        return true;
    int64_t per_gpu = (t->req.v[HRM_DIM_GPU_MEM] + gpus - 1) / gpus;
    int64_t ok = 0;
    for (int32_t u = 0; u < n->gpus; u++)
        if (c->units[n->unit_first + u].gpu_mem >= per_gpu)
            ok++;
    return ok >= gpus;
}

int hrm_workload_check(const struct hrm_workload *wl, const struct hrm_cluster *c,
                       struct hrm_error *err)
{
    if (c->nnodes == 0)
        return hrm_errorf(err, -HRM_ESPEC, "the cluster has no node");
    for (int32_t j = 0; j < wl->njobs; j++) {
        const struct hrm_job *job = &wl->jobs[j];
        if (job->ntasks == 0)
            return hrm_errorf(err, -HRM_ESPEC, "job '%s' has no task", job->name);
        for (int32_t s = 0; s < job->nstages; s++)
            if (wl->stages[job->stage_first + s].ntasks == 0)
                return hrm_errorf(err, -HRM_ESPEC, "job '%s': stage '%s' has no task",
                                  job->name, wl->stages[job->stage_first + s].name);
    }
    /* Tasks of a stage usually share a request: check each distinct request once. */
    const struct hrm_task *last_ok = NULL;
    for (int32_t i = 0; i < wl->ntasks; i++) {
        const struct hrm_task *t = &wl->tasks[i];
        for (int32_t b = 0; b < t->nblocks; b++) {
            const struct hrm_block *blk = &wl->blocks[t->block_first + b];
            for (int32_t r = 0; r < blk->nreplicas; r++)
                if (blk->replicas[r] < 0 || blk->replicas[r] >= c->nnodes)
                    return hrm_errorf(err, -HRM_ESPEC, "job '%s': replica on unknown node %d",
                                      wl->jobs[t->job].name, blk->replicas[r]);
        }
        if (last_ok && memcmp(&last_ok->req, &t->req, sizeof(t->req)) == 0)
            continue;
        bool fits = false;
        for (int32_t n = 0; n < c->nnodes && !fits; n++)
            fits = fits_empty_node(t, c, &c->nodes[n]);
        if (!fits) {
            char buf[160];
            return hrm_errorf(err, -HRM_ESPEC,
                              "job '%s' stage '%s': task request {%s} fits no node, so it could "
                              "never run",
                              wl->jobs[t->job].name, wl->stages[t->stage].name,
                              hrm_res_format(&t->req, buf, sizeof(buf)));
        }
        last_ok = t;
    }
    return 0;
}

int32_t hrm_workload_fair_m(const struct hrm_workload *wl)
{
    if (wl->fair_m > 0)
        return wl->fair_m;
    if (wl->max_parallel > 0)
        return wl->max_parallel;
    return 1;
}

uint32_t hrm_workload_logic_id(const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h ? h : 1; /* 0 means "none" */
}
