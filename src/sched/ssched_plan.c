/* Shared-state instance placement: first fit from a random node, GPU fair share. */
#include <limits.h>

#include "hrm/alloc.h"
#include "hrm/commit.h"
#include "sched/ssched_private.h"

void ssched_rq_push(struct sjob *j, int32_t ntasks, int32_t task)
{
    j->rq[(j->rq_head + j->rq_n++) % ntasks] = task;
}

void ssched_rq_push_front(struct sjob *j, int32_t ntasks, int32_t task)
{
    j->rq_head = (j->rq_head + ntasks - 1) % ntasks;
    j->rq[j->rq_head] = task;
    j->rq_n++;
}

static int32_t rq_pop(struct sjob *j, int32_t ntasks)
{
    int32_t t = j->rq[j->rq_head];
    j->rq_head = (j->rq_head + 1) % ntasks;
    j->rq_n--;
    return t;
}

/* How many more GPU tasks the job may hold now: unbounded unless GPUs are
 * scarce, i.e. the snapshot's free GPUs cannot cover its ready GPU tasks. */
static int64_t gpu_room(const struct hrm_ssched *s, const struct sjob *j, int32_t ntasks)
{
    if (!s->cfg.fair_share || j->gpu_left == 0)
        return INT64_MAX;
    const struct hrm_task *tasks = &s->wl->tasks[s->wl->jobs[j->job].task_first];
    int64_t want = 0, free = 0;
    for (int32_t k = 0; k < j->rq_n; k++)
        want += tasks[j->rq[(j->rq_head + k) % ntasks]].req.v[HRM_DIM_GPU];
    if (want == 0)
        return INT64_MAX;
    for (int32_t n = 0; n < s->snap.nnodes; n++)
        free += s->snap.nodes[n].down ? 0 : s->snap.nodes[n].free.v[HRM_DIM_GPU];
    if (free >= want)
        return INT64_MAX;
    /* K: the master counted this job in when it asked for the snapshot. */
    int64_t k = s->snap.gpu_jobs > 0 ? s->snap.gpu_jobs : 1;
    int64_t a = hrm_fair_share(s->c->total.v[HRM_DIM_GPU], k, j->gpu_left);
    if (a < 1)
        a = 1; /* Q < K: the leftover goes to whoever asks first, not to nobody */
    return a > j->gpu_running ? a - j->gpu_running : 0;
}

/* First node from *cursor (circularly) whose free resources cover req. */
static int32_t first_fit(const struct hrm_snapshot *snap, int32_t *cursor,
                         const struct hrm_res *req)
{
    int32_t n = snap->nnodes;
    for (int32_t k = 0; k < n; k++) {
        int32_t x = (*cursor + k) % n;
        if (!snap->nodes[x].down && hrm_res_fits(req, &snap->nodes[x].free)) {
            *cursor = x;
            return x;
        }
    }
    return -1;
}

int32_t ssched_plan(struct hrm_ssched *s, struct sjob *j)
{
    const struct hrm_job *wj = &s->wl->jobs[j->job];
    int32_t nt = wj->ntasks, tried = 0;
    int64_t room = gpu_room(s, j, nt);
    if (s->snap.nnodes == 0)
        return 0; /* a daemon's cell before any node registered */
    int32_t cursor = (int32_t)hrm_rng_below(&s->rng, (uint64_t)s->snap.nnodes);
    s->nplan = 0;
    for (int32_t k = 0, count = j->rq_n; k < count; k++) {
        int32_t t = rq_pop(j, nt);
        const struct hrm_task *task = &s->wl->tasks[t];
        bool gpu = task->req.v[HRM_DIM_GPU] > 0;
        if (gpu && room <= 0) {
            s->st.fair_capped++;
            ssched_rq_push(j, nt, t);
            continue;
        }
        tried++;
        int32_t node = first_fit(&s->snap, &cursor, &task->req);
        if (node < 0) {
            ssched_rq_push(j, nt, t);
            continue;
        }
        hrm_res_sub(&s->snap.nodes[node].free, &task->req);
        HRM_GROW(s->plan, s->cap_plan, s->nplan + 1);
        s->plan[s->nplan++] =
            (struct splan){.task = t, .node = node, .seen = s->snap.nodes[node].version};
        uint8_t *ts = &j->tstate[t - wj->task_first];
        if (*ts & S_CONFLICTED)
            s->st.retries++;
        *ts = (uint8_t)((*ts & S_CONFLICTED) | S_CLAIMED);
        if (gpu)
            room--;
    }
    /* The planned claims changed the copy: mark those nodes stale so the next
     * sync brings them back from the cell whatever the claims' fate. */
    for (size_t k = 0; k < s->nplan; k++)
        s->snap.nodes[s->plan[k].node].version = 0;
    return tried;
}
