/* Why a job is pending and when it should start: the reason text and P0's simulaterun over the cluster. */
#include <stdio.h>
#include <string.h>

#include "dist_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/hash.h"
#include "hrm/log.h"
#include "hrm/units.h"
#include "master_eta.h"
#include "master_private.h"

/* ---- the cluster as simulaterun units ---- */

void eta_sim_init(struct eta_sim *s, const struct eta_node *nodes, int32_t nnodes, int64_t budget)
{
    *s = (struct eta_sim){.nodes = nodes, .nnodes = nnodes, .budget = budget};
    s->tables = hrm_calloc((size_t)(nnodes > 0 ? nnodes : 1), sizeof(*s->tables));
    s->wait = hrm_calloc((size_t)(nnodes > 0 ? nnodes : 1), sizeof(*s->wait));
    hrm_tourney_init(&s->best, nnodes);
    s->changed = hrm_alloc((size_t)(nnodes > 0 ? nnodes : 1) * sizeof(*s->changed));
}

void eta_sim_fini(struct eta_sim *s)
{
    for (int32_t n = 0; n < s->nnodes; n++)
        hrm_wait_table_fini(&s->tables[n]);
    hrm_free(s->tables);
    hrm_free(s->wait);
    hrm_tourney_fini(&s->best);
    hrm_free(s->changed);
    *s = (struct eta_sim){0};
}

static struct hrm_wait_row task_row(const struct eta_task *t, uint8_t status)
{
    return (struct hrm_wait_row){.time_us = t->time_us < 0 ? ETA_UNKNOWN_US : t->time_us,
                                 .vcore = t->req.v[HRM_DIM_CPU],
                                 .gpu = t->req.v[HRM_DIM_GPU] > 0,
                                 .gmem = t->req.v[HRM_DIM_MEM],
                                 .status = status};
}

/* Node's table changed: its answer for the last shape is asked again at the next question. */
static void forget_node(struct eta_sim *s, int32_t node)
{
    if (!s->has_last || s->wait[node] == -2)
        return; /* already to be asked (or never answered: down, or the shape never fits) */
    s->wait[node] = -2;
    s->changed[s->nchanged++] = node;
}

void eta_sim_running(struct eta_sim *s, int32_t node, const struct eta_task *t)
{
    struct hrm_wait_table *tb = &s->tables[node];
    struct hrm_wait_row row = task_row(t, HRM_WAIT_RUNNING);
    hrm_wait_table_push(tb, &row);
    /* Running rows come first: move it before the first queued row. */
    size_t k = tb->n - 1;
    while (k > 0 && tb->rows[k - 1].status == HRM_WAIT_QUEUED) {
        tb->rows[k] = tb->rows[k - 1];
        k--;
    }
    tb->rows[k] = row;
    forget_node(s, node);
}

void eta_sim_queued(struct eta_sim *s, int32_t node, const struct eta_task *t)
{
    struct hrm_wait_row row = task_row(t, HRM_WAIT_QUEUED);
    hrm_wait_table_push(&s->tables[node], &row);
    forget_node(s, node);
}

/* simulaterun of t on node, from the cache when the node's table has not changed since. */
static int64_t node_wait(struct eta_sim *s, int32_t n, const struct eta_task *t)
{
    const struct eta_node *nd = &s->nodes[n];
    if (!nd->up || t->req.v[HRM_DIM_GPU] > nd->cap.v[HRM_DIM_GPU])
        return -1;
    if (s->wait[n] != -2)
        return s->wait[n];
    const struct hrm_wait_table *tb = &s->tables[n];
    s->work += (int64_t)tb->n + 1;
    struct hrm_wait_cap cap = {.vcore = nd->cap.v[HRM_DIM_CPU],
                               .gmem = nd->cap.v[HRM_DIM_MEM],
                               .max_stack = (int32_t)nd->cap.v[HRM_DIM_GPU]};
    struct hrm_wait_row me = task_row(t, HRM_WAIT_QUEUED);
    int64_t wait;
    if (hrm_waitsim_run(&cap, tb->rows, tb->n, &me, &wait) < 0)
        wait = -1; /* it, or a row queued there, can never fit the node */
    s->wait[n] = wait;
    return wait;
}

/* Whether the last shape starts on node b before node a (a, the lower index, keeps a tie, as a
 * walk over the nodes in order would choose). */
static bool starts_before(void *ctx, int32_t b, int32_t a)
{
    const struct eta_sim *s = ctx;
    return s->wait[b] < s->wait[a];
}

/* The node where t starts first and its raw simulated wait (-1 and -1: none / work spent).
 * Every node's answer is asked when the shape differs from the last question's; otherwise only
 * those of the nodes whose table changed since (the tournament keeps the others'). */
static int32_t best_node(struct eta_sim *s, const struct eta_task *t, int64_t *wait_out)
{
    *wait_out = -1;
    if (s->work > s->budget)
        return -1;
    if (!s->has_last || memcmp(&s->last, t, sizeof(*t)) != 0) {
        s->last = *t;
        s->has_last = true;
        s->nchanged = 0;
        for (int32_t n = 0; n < s->nnodes; n++)
            s->wait[n] = -2;
        s->looked += s->nnodes;
        for (int32_t n = 0; n < s->nnodes; n++)
            hrm_tourney_enter(&s->best, n, node_wait(s, n, t) >= 0);
        hrm_tourney_play_all(&s->best, starts_before, s);
    } else {
        s->looked += s->nchanged;
        for (int32_t k = 0; k < s->nchanged; k++)
            hrm_tourney_update(&s->best, s->changed[k], node_wait(s, s->changed[k], t) >= 0,
                               starts_before, s);
        s->nchanged = 0;
    }
    int32_t best = hrm_tourney_winner(&s->best);
    if (best >= 0)
        *wait_out = s->wait[best];
    if (s->work > s->budget) /* spent during this very question: its answer is partial */
        return *wait_out = -1;
    return best;
}

int64_t eta_sim_start(struct eta_sim *s, const struct eta_task *t, int32_t *node)
{
    int64_t wait;
    *node = best_node(s, t, &wait);
    return *node < 0 || wait >= ETA_UNKNOWN_US ? -1 : wait;
}

void eta_sim_enqueue(struct eta_sim *s, const struct eta_task *t)
{
    int64_t wait;
    int32_t n = best_node(s, t, &wait);
    if (n >= 0)
        eta_sim_queued(s, n, t);
}

/* ---- words ---- */

/* Appends one part of a list ("a", "a and b", "a, b and c"): i is its index, n the count. */
static void list_part(char *buf, size_t len, size_t *at, int i, int n, const char *part)
{
    const char *sep = i == 0 ? "" : i == n - 1 ? " and " : ", ";
    int w = snprintf(buf + *at, len - *at, "%s%s", sep, part);
    if (w > 0)
        *at = *at + (size_t)w < len ? *at + (size_t)w : len - 1;
}

char *eta_request_text(const struct hrm_res *req, int32_t gpu_share, char *buf, size_t len)
{
    char parts[3][64], size[32];
    int n = 0;
    int64_t cpu = req->v[HRM_DIM_CPU], gpu = req->v[HRM_DIM_GPU];
    if (cpu % 1000 == 0)
        snprintf(parts[n++], sizeof(parts[0]), "%lld CPU%s", (long long)(cpu / 1000),
                 cpu == 1000 ? "" : "s");
    else
        snprintf(parts[n++], sizeof(parts[0]), "%g CPU%s", (double)cpu / 1000,
                 cpu < 1000 ? "" : "s");
    if (req->v[HRM_DIM_MEM] > 0)
        snprintf(parts[n++], sizeof(parts[0]), "%s memory",
                 hrm_format_size(req->v[HRM_DIM_MEM], size, sizeof(size)));
    if (gpu > 0) {
        int w = gpu_share > 0 && gpu_share < 1000
                    ? snprintf(parts[n], sizeof(parts[0]), "%g GPU", gpu_share / 1000.0)
                    : snprintf(parts[n], sizeof(parts[0]), "%lld GPU%s", (long long)gpu,
                               gpu == 1 ? "" : "s");
        if (req->v[HRM_DIM_GPU_MEM] > 0 && w > 0)
            snprintf(parts[n] + w, sizeof(parts[0]) - (size_t)w, " with %s",
                     hrm_format_size(req->v[HRM_DIM_GPU_MEM], size, sizeof(size)));
        n++;
    }
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        list_part(buf, len, &at, i, n, parts[i]);
    return buf;
}

static bool fits(const struct hrm_res *req, const struct hrm_res *have, int dim)
{
    return req->v[dim] <= have->v[dim];
}

static const int reason_dims[] = {HRM_DIM_CPU, HRM_DIM_MEM, HRM_DIM_GPU};
static const char *const reason_dim_names[] = {"CPUs", "memory", "GPUs"};
#define NREASON_DIMS 3

static bool fits_all(const struct hrm_res *req, const struct hrm_res *have)
{
    for (int d = 0; d < NREASON_DIMS; d++)
        if (!fits(req, have, reason_dims[d]))
            return false;
    return true;
}

/* "node3, node4 and 2 more" of the nodes that could hold the task but are down. */
static void down_names(const struct eta_reason_in *in, char *buf, size_t len)
{
    int32_t n = 0, shown = 0;
    for (int32_t k = 0; k < in->nnodes; k++)
        n += !in->nodes[k].up && fits_all(in->req, &in->nodes[k].cap);
    size_t at = 0;
    buf[0] = '\0';
    int parts = n > 3 ? 4 : (int)n;
    for (int32_t k = 0; k < in->nnodes && shown < 3; k++)
        if (!in->nodes[k].up && fits_all(in->req, &in->nodes[k].cap))
            list_part(buf, len, &at, shown++, parts, in->names[k]);
    if (n > 3) {
        char more[32];
        snprintf(more, sizeof(more), "%d more", (int)(n - 3));
        list_part(buf, len, &at, 3, 4, more);
    }
}

char *eta_reason(const struct eta_reason_in *in, char *buf, size_t len)
{
    char req[160], names[256];
    eta_request_text(in->req, in->gpu_share, req, sizeof(req));
    if (in->failed) {
        snprintf(buf, len, "a task of the job failed for good: its pending tasks will be skipped");
        return buf;
    }
    if (in->reconciling) {
        snprintf(buf, len, "the master is reconciling after a restart: nothing starts until the "
                           "agents are back or hrm master --reconcile has passed");
        return buf;
    }
    if (in->nnodes == 0) {
        snprintf(buf, len, "no node has registered yet");
        return buf;
    }
    /* Per dimension: on how many up nodes that could hold the task it is short now. */
    int32_t could = 0, could_down = 0, fit_now = 0, short_on[NREASON_DIMS] = {0};
    for (int32_t k = 0; k < in->nnodes; k++) {
        const struct eta_node *nd = &in->nodes[k];
        if (!fits_all(in->req, &nd->cap))
            continue;
        if (!nd->up) {
            could_down++;
            continue;
        }
        could++;
        bool all = true;
        for (int d = 0; d < NREASON_DIMS; d++)
            if (!fits(in->req, &nd->free, reason_dims[d])) {
                short_on[d]++;
                all = false;
            }
        fit_now += all;
    }
    size_t at = 0;
    int w;
    if (could == 0 && could_down > 0) {
        down_names(in, names, sizeof(names));
        w = snprintf(buf, len, "the node%s that could run its tasks (%s) %s down",
                     could_down == 1 ? "" : "s", names, could_down == 1 ? "is" : "are");
    } else if (could == 0) {
        w = snprintf(buf, len, "no node is big enough for %s", req);
    } else if (fit_now == 0) {
        w = snprintf(buf, len, "waiting for %s free on one node (", req);
        int nparts = 0, i = 0;
        for (int d = 0; d < NREASON_DIMS; d++)
            nparts += short_on[d] > 0;
        at = w > 0 && (size_t)w < len ? (size_t)w : len - 1;
        for (int d = 0; d < NREASON_DIMS; d++) {
            if (!short_on[d])
                continue;
            char part[64];
            snprintf(part, sizeof(part), "%s short on %d node%s", reason_dim_names[d],
                     (int)short_on[d], short_on[d] == 1 ? "" : "s");
            list_part(buf, len, &at, i++, nparts, part);
        }
        w = snprintf(buf + at, len - at, ")");
        w = w > 0 ? (int)(at + (size_t)w) : (int)at;
    } else if (in->ahead == 0) {
        w = snprintf(buf, len, "room for %s on %d node%s: %s", req, (int)fit_now,
                     fit_now == 1 ? "" : "s",
                     in->holder ? in->holder : "it starts at the next scheduling pass");
    } else {
        w = 0;
        buf[0] = '\0';
    }
    at = w <= 0 ? 0 : (size_t)w < len ? (size_t)w : len - 1;
    if (in->ahead > 0)
        snprintf(buf + at, len - at, "%s%d job%s ahead in queue %s", at ? "; " : "",
                 (int)in->ahead, in->ahead == 1 ? "" : "s", in->queue);
    return buf;
}

/* ---- run-time history: the mean run of a user's finished tasks of one command ---- */

struct eta_hist_slot {
    uint64_t key; /* 0: empty */
    int64_t sum_us, n;
};

struct eta_history {
    struct eta_hist_slot *s;
    size_t cap, used;
};

/* The latest walk: each job's estimated start (wall clock, us; -1 unknown or not pending), and
 * what it was computed from. */
struct eta_memo {
    int64_t *start_us; /* per job index (id - 1) */
    size_t njobs;
    uint64_t task_changes, nodes_key;
    int64_t at_us; /* monotonic; 0: never computed */
};

struct eta_walk;
static void walk_free(struct eta_walk *w);

struct eta_state {
    struct eta_history hist;
    struct eta_memo memo;
    struct eta_walk *spread; /* a listing's walk under way over the turns (eta_turn), or NULL */
};

struct eta_state *eta_state_new(void)
{
    return hrm_calloc(1, sizeof(struct eta_state));
}

void eta_state_free(struct eta_state *e)
{
    if (!e)
        return;
    hrm_free(e->hist.s);
    hrm_free(e->memo.start_us);
    walk_free(e->spread);
    hrm_free(e);
}

/* The user and the group's command, each argument with its length (no two lists share a key
 * by concatenation).  A collision of 64 bits would only mix two histories. */
static uint64_t hist_key(const struct rjob *j, int32_t g)
{
    /* Seeded with FNV's published basis (not HRM_HASH_SEED): the keys stay as they were. */
    uint64_t h = hrm_hash(14695981039346656037ull, j->user, strlen(j->user) + 1);
    const json_t *cmd = json_object_get(json_array_get(json_object_get(j->spec, "tasks"),
                                                       (size_t)g), "cmd");
    size_t i;
    const json_t *a;
    json_array_foreach(cmd, i, a)
    {
        uint64_t n = json_string_length(a);
        h = hrm_hash(h, (const char *)&n, sizeof(n));
        h = hrm_hash(h, json_string_value(a), (size_t)n);
    }
    return h ? h : 1;
}

static struct eta_hist_slot *hist_slot(struct eta_history *h, uint64_t key, bool create)
{
    if (create && (h->used + 1) * 2 > h->cap) {
        struct eta_history bigger = {.cap = h->cap ? h->cap * 2 : 64};
        bigger.s = hrm_calloc(bigger.cap, sizeof(*bigger.s));
        for (size_t k = 0; k < h->cap; k++)
            if (h->s[k].key)
                *hist_slot(&bigger, h->s[k].key, true) = h->s[k];
        hrm_free(h->s);
        h->s = bigger.s;
        h->cap = bigger.cap;
    }
    if (h->cap == 0)
        return NULL;
    for (size_t k = key & (h->cap - 1);; k = (k + 1) & (h->cap - 1)) {
        if (h->s[k].key == key)
            return &h->s[k];
        if (!h->s[k].key) {
            if (!create)
                return NULL;
            h->s[k].key = key;
            h->used++;
            return &h->s[k];
        }
    }
}

static void hist_add(struct eta_history *h, const struct rjob *j, const struct rtask *t)
{
    if (t->start_us < 0 || t->end_us < t->start_us)
        return;
    struct eta_hist_slot *s = hist_slot(h, hist_key(j, t->group), true);
    s->sum_us += t->end_us - t->start_us;
    s->n++;
}

void eta_history_add(struct master *m, const struct rjob *j, int32_t idx)
{
    if (j->tasks[idx].state == HRM_RTASK_DONE)
        hist_add(&m->eta->hist, j, &j->tasks[idx]);
}

void eta_history_rebuild(struct master *m)
{
    for (size_t i = 0; i < m->njobs; i++)
        for (int32_t k = 0; m->jobs[i] && k < m->jobs[i]->ntasks; k++)
            if (m->jobs[i]->tasks[k].state == HRM_RTASK_DONE)
                hist_add(&m->eta->hist, m->jobs[i], &m->jobs[i]->tasks[k]);
}

/* What a task of group g is expected to run: the group's "time", else the mean of its user's
 * finished runs of the same command, else -1 (unknown). */
static int64_t group_time(struct master *m, const struct rjob *j, int32_t g)
{
    const json_t *gr = json_array_get(json_object_get(j->spec, "tasks"), (size_t)g);
    const json_t *t = json_object_get(gr, "time_us");
    if (t)
        return json_integer_value(t);
    struct eta_hist_slot *s = hist_slot(&m->eta->hist, hist_key(j, g), false);
    return s && s->n > 0 ? s->sum_us / s->n : -1;
}

/* ---- the walk ---- */

static bool has_pending(const struct rjob *j)
{
    return jobs_live(j) && !j->failed && j->count.state[HRM_RTASK_PENDING] > 0;
}

static void build_nodes(const struct master *m, struct eta_node *nodes)
{
    for (int32_t n = 0; n < m->nnodes; n++) {
        const struct rnode *rn = &m->nodes[n];
        struct eta_node *nd = &nodes[n];
        *nd = (struct eta_node){.up = rn->up};
        nd->cap.v[HRM_DIM_CPU] = (int64_t)rn->cores * 1000;
        nd->cap.v[HRM_DIM_MEM] = rn->mem;
        nd->cap.v[HRM_DIM_GPU] = rn->gpus;
        nd->cap.v[HRM_DIM_GPU_MEM] = rn->gpu_mem * rn->gpus;
        if (!sched_node_free(m, n, &nd->free)) { /* from the table's counters */
            nd->free = nd->cap;
            nd->free.v[HRM_DIM_CPU] -= rn->cpu_used;
            nd->free.v[HRM_DIM_MEM] -= rn->mem_used;
        }
    }
}

/* Group times of job j, computed once per walk (a job has few groups). */
static int64_t *job_times(struct master *m, const struct rjob *j)
{
    int64_t *t = hrm_alloc((size_t)j->ngroups * sizeof(*t));
    for (int32_t g = 0; g < j->ngroups; g++)
        t[g] = group_time(m, j, g);
    return t;
}

/* Every running task (then every task queued on a node) into its node's table. */
static void add_runs(struct master *m, struct eta_sim *s, int64_t now)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < m->njobs; i++) {
            struct rjob *j = m->jobs[i];
            if (!j || !jobs_live(j) || j->count.state[HRM_RTASK_RUNNING] == 0)
                continue;
            int64_t *gt = job_times(m, j);
            for (int32_t k = 0; k < j->ntasks; k++) {
                const struct rtask *t = &j->tasks[k];
                if (t->state != HRM_RTASK_RUNNING || t->node < 0 || t->node >= s->nnodes ||
                    (t->start_us >= 0) != (pass == 0))
                    continue;
                struct eta_task et = {.req = j->greq[t->group], .time_us = gt[t->group]};
                if (pass == 0) {
                    /* Left of its run: expected minus elapsed; one past its expected run is
                     * taken to end now. */
                    if (et.time_us >= 0)
                        et.time_us = et.time_us > now - t->start_us
                                         ? et.time_us - (now - t->start_us) : 0;
                    eta_sim_running(s, t->node, &et);
                } else {
                    eta_sim_queued(s, t->node, &et);
                }
            }
            hrm_free(gt);
        }
}

/*
 * A walk, resumable: every pending job's estimated start (wall-clock us into start_us[id - 1]),
 * taking pending tasks in the order the cluster serves them.  A listing's walk runs over several
 * turns (eta_turn), a bounded number of rows in each, so that no request waits for a whole walk
 * (up to ETA_WORK_MAX rows: 20-30 ms of the master's CPU on an idle core at 5,000 agents and
 * 100,000 tasks queued, the better part of a second on a loaded host).  Between two steps the
 * job table may change: a job's tasks are read as they are at the step that queues them, and a
 * job no longer at its index is passed over; the next walk starts from what is then true.
 */
struct eta_walk {
    struct eta_node *nodes;
    struct eta_sim s;
    int64_t now;            /* wall clock the estimates count from */
    int64_t *start_us;      /* per job index: the estimates so far (-1 unknown) */
    size_t njobs;           /* the jobs it covers (the table's size when it began) */
    size_t q;               /* the next job to look at */
    const struct rjob *job; /* m->jobs[q] while its tasks are being queued, else NULL */
    int64_t *gt;            /* that job's group times */
    int32_t k;              /* its next task */
    int32_t turns;          /* steps taken */
    int64_t began_mono;
    uint64_t task_changes, nodes_key; /* what it was computed from */
};

static struct eta_walk *walk_begin(struct master *m, int64_t now, uint64_t nodes_key)
{
    struct eta_walk *w = hrm_calloc(1, sizeof(*w));
    w->nodes = hrm_calloc((size_t)(m->nnodes > 0 ? m->nnodes : 1), sizeof(*w->nodes));
    build_nodes(m, w->nodes);
    eta_sim_init(&w->s, w->nodes, m->nnodes, ETA_WORK_MAX);
    w->now = now;
    add_runs(m, &w->s, now);
    w->njobs = m->njobs;
    w->start_us = hrm_alloc((w->njobs ? w->njobs : 1) * sizeof(int64_t));
    for (size_t k = 0; k < w->njobs; k++)
        w->start_us[k] = -1;
    w->began_mono = hrm_mono_us();
    w->task_changes = m->task_changes;
    w->nodes_key = nodes_key;
    return w;
}

static void walk_free(struct eta_walk *w)
{
    if (!w)
        return;
    eta_sim_fini(&w->s);
    hrm_free(w->nodes);
    hrm_free(w->gt);
    hrm_free(w->start_us);
    hrm_free(w);
}

/* Queues pending tasks until about max_rows more waiting-table rows are visited (< 0: no
 * bound).  True when every job is walked. */
static bool walk_advance(struct master *m, struct eta_walk *w, int64_t max_rows)
{
    struct eta_sim *s = &w->s;
    int64_t stop = max_rows < 0 ? INT64_MAX : s->work + max_rows;
    w->turns++;
    /* Served in submission order (the job table's, and the scheduler state's arrival order,
     * which FIFO-like policies walk; no central policy reads a job's priority). */
    while (w->q < w->njobs && w->q < m->njobs) {
        struct rjob *j = m->jobs[w->q];
        if (w->job && j != w->job) { /* the job went away between two steps */
            hrm_free(w->gt);
            w->gt = NULL;
            w->job = NULL;
            w->q++;
            continue;
        }
        if (!w->job) {
            if (!j || !has_pending(j)) {
                w->q++;
                continue;
            }
            if (s->work >= stop)
                return false;
            int32_t node, first = 0;
            while (j->tasks[first].state != HRM_RTASK_PENDING)
                first++;
            w->gt = job_times(m, j);
            struct eta_task next = {.req = j->greq[j->tasks[first].group],
                                    .time_us = w->gt[j->tasks[first].group]};
            int64_t wait = eta_sim_start(s, &next, &node);
            w->start_us[j->id - 1] = wait < 0 ? -1 : w->now + wait;
            w->job = j;
            w->k = first;
        }
        for (; w->k < j->ntasks && s->work <= s->budget; w->k++) {
            if (s->work >= stop)
                return false;
            const struct rtask *t = &j->tasks[w->k];
            if (t->state != HRM_RTASK_PENDING)
                continue;
            struct eta_task et = {.req = j->greq[t->group], .time_us = w->gt[t->group]};
            eta_sim_enqueue(s, &et);
        }
        hrm_free(w->gt);
        w->gt = NULL;
        w->job = NULL;
        w->q++;
    }
    return true;
}

/* What the nodes are (up, capacity), as one number: a change means a new walk. */
static uint64_t nodes_key(const struct master *m)
{
    uint64_t h = 14695981039346656037ull;
    for (int32_t n = 0; n < m->nnodes; n++) {
        const struct rnode *rn = &m->nodes[n];
        int64_t v[5] = {rn->up, rn->cores, rn->mem, rn->gpus, rn->gpu_mem};
        h = hrm_hash(h, (const char *)v, sizeof(v));
    }
    return h;
}

/* The finished walk w becomes the memo (w is freed), as of at_mono: a walk taken at once, when
 * it began; one spread over the turns, when it ended, so that the next starts a memo's age
 * later (on a loaded host a walk over the turns can take longer than ETA_MEMO_US, and the
 * walks would follow each other without a pause). */
static void memo_take(struct eta_memo *e, struct eta_walk *w, int64_t at_mono)
{
    hrm_free(e->start_us);
    e->start_us = w->start_us;
    w->start_us = NULL;
    e->njobs = w->njobs;
    e->task_changes = w->task_changes;
    e->nodes_key = w->nodes_key;
    e->at_us = at_mono > 0 ? at_mono : 1;
    walk_free(w);
}

/*
 * Every job's estimated start (wall clock, -1 unknown), from the memo while it holds.
 * listing: for `hrm jobs`, whose estimates are whole seconds, the memo holds for ETA_MEMO_US
 * even if tasks started or ended since; past that, while the jobs and the nodes are those it
 * was computed for, the listing is still answered from it and a new walk runs over the next
 * turns (eta_turn), so a listing never waits for a walk but the first one (no memo, or one
 * older than ETA_SPREAD_MAX_US that no walk is refreshing).  `hrm job ID` walks at once after
 * any change: its estimate stays exact.
 */
static const int64_t *estimates(struct master *m, bool listing)
{
    struct eta_memo *e = &m->eta->memo;
    uint64_t key = nodes_key(m);
    int64_t mono = hrm_mono_us();
    bool same = e->at_us > 0 && e->njobs == m->njobs && e->nodes_key == key;
    if (same && (listing || e->task_changes == m->task_changes) && mono - e->at_us < ETA_MEMO_US)
        return e->start_us;
    if (listing && same && !m->reconciling &&
        (m->eta->spread || mono - e->at_us < ETA_SPREAD_MAX_US)) {
        if (!m->eta->spread)
            m->eta->spread = walk_begin(m, master_now_us(), key);
        return e->start_us;
    }
    walk_free(m->eta->spread); /* this walk is newer than the one under way */
    m->eta->spread = NULL;
    struct eta_walk *w = walk_begin(m, master_now_us(), key);
    if (!m->reconciling) {
        walk_advance(m, w, -1);
        hrm_log(HRM_LOG_DEBUG, "estimates: a walk of %lld waiting-table rows (%lld node answers "
                "read, %d nodes) took %lld us", (long long)w->s.work, (long long)w->s.looked,
                m->nnodes, (long long)(hrm_mono_us() - mono));
    }
    memo_take(e, w, mono);
    return e->start_us;
}

int32_t eta_walk_run(struct master *m, int64_t now, int64_t rows, int64_t *start_us)
{
    struct eta_walk *w = walk_begin(m, now, 0);
    while (!walk_advance(m, w, rows))
        ;
    memcpy(start_us, w->start_us, w->njobs * sizeof(int64_t));
    int32_t steps = w->turns;
    walk_free(w);
    return steps;
}

bool eta_walk_pending(const struct master *m)
{
    return m->eta->spread != NULL;
}

void eta_turn(struct master *m)
{
    struct eta_walk *w = m->eta->spread;
    if (!w)
        return;
    if (m->reconciling || w->s.nnodes != m->nnodes) { /* its nodes are not the cluster's now */
        walk_free(w);
        m->eta->spread = NULL;
        return;
    }
    if (!walk_advance(m, w, m->cfg.eta_turn_rows > 0 ? m->cfg.eta_turn_rows : ETA_TURN_ROWS))
        return;
    m->eta->spread = NULL;
    hrm_log(HRM_LOG_DEBUG, "estimates: a walk of %lld waiting-table rows (%lld node answers read, "
            "%d nodes) over %d turns took %lld us", (long long)w->s.work, (long long)w->s.looked,
            m->nnodes, (int)w->turns, (long long)(hrm_mono_us() - w->began_mono));
    /* Kept with the nodes it saw: if they changed meanwhile, the next listing walks at once. */
    memo_take(&m->eta->memo, w, hrm_mono_us());
}

static json_t *seconds_or_null(int64_t start_us)
{
    if (start_us < 0)
        return json_null();
    int64_t us = start_us - master_now_us();
    return json_integer(us > 0 ? (us + 500000) / 1000000 : 0); /* nearest second */
}

/* Pending jobs of j's queue submitted before it. */
static int32_t jobs_ahead(const struct master *m, const struct rjob *j)
{
    int32_t n = 0;
    for (int64_t id = 1; id < j->id; id++) {
        const struct rjob *o = m->jobs[id - 1];
        n += o && has_pending(o) && strcmp(o->queue, j->queue) == 0;
    }
    return n;
}

/* Who holds back a job that fits somewhere and has nothing ahead of it. */
static void holder_text(const struct master *m, const struct rjob *j, char *buf, size_t len)
{
    if (m->dist) {
        const struct mdist *d = m->dist;
        if (d->ninst == 0 && d->nrs == 0)
            snprintf(buf, len, "no scheduler instance runs (the master waits for hrm sched "
                               "processes)");
        else
            snprintf(buf, len, "scheduler instances of policy %s have not placed it yet",
                     m->cfg.policy);
        return;
    }
    /* The user's share of the up CPUs, as fair policies weigh it. */
    int64_t used = 0, total = 0;
    for (int32_t n = 0; n < m->nnodes; n++)
        total += m->nodes[n].up ? (int64_t)m->nodes[n].cores * 1000 : 0;
    for (size_t i = 0; i < m->njobs; i++) {
        const struct rjob *o = m->jobs[i];
        if (o && jobs_live(o) && o->count.state[HRM_RTASK_RUNNING] > 0 &&
            strcmp(o->user, j->user) == 0)
            for (int32_t k = 0; k < o->ntasks; k++)
                used += o->tasks[k].state == HRM_RTASK_RUNNING
                            ? o->greq[o->tasks[k].group].v[HRM_DIM_CPU] : 0;
    }
    snprintf(buf, len, "policy %s has not started it yet (user %s holds %d%% of the up CPUs)",
             m->cfg.policy, j->user, total > 0 ? (int)(used * 100 / total) : 0);
}

void eta_describe_job(struct master *m, const struct rjob *j, json_t *o)
{
    bool pending = jobs_live(j) && j->count.state[HRM_RTASK_PENDING] > 0;
    if (!pending) {
        json_object_set_new(o, "pending_reason", json_null());
        json_object_set_new(o, "estimated_start_s", json_null());
        return;
    }
    int64_t start = has_pending(j) ? estimates(m, false)[j->id - 1] : -1;
    struct eta_node *nodes = hrm_calloc((size_t)(m->nnodes > 0 ? m->nnodes : 1), sizeof(*nodes));
    const char **names = hrm_calloc((size_t)(m->nnodes > 0 ? m->nnodes : 1), sizeof(*names));
    build_nodes(m, nodes);
    for (int32_t n = 0; n < m->nnodes; n++)
        names[n] = m->nodes[n].name;
    int32_t first = 0;
    while (j->tasks[first].state != HRM_RTASK_PENDING)
        first++;
    char holder[256], reason[768];
    holder_text(m, j, holder, sizeof(holder));
    struct eta_reason_in in = {.req = &j->greq[j->tasks[first].group],
                               .gpu_share = j->gshare[j->tasks[first].group],
                               .nodes = nodes,
                               .names = names,
                               .nnodes = m->nnodes,
                               .ahead = jobs_ahead(m, j),
                               .queue = j->queue,
                               .reconciling = m->reconciling,
                               .failed = j->failed,
                               .holder = holder};
    eta_reason(&in, reason, sizeof(reason));
    /* A stream task waiting out its backoff is not for any scheduler yet: that comes first. */
    const struct rtask *ft = &j->tasks[first];
    if (stream_task_waiting(ft)) {
        int64_t left = ft->restart_at_us - master_now_us();
        snprintf(reason, sizeof(reason),
                 "task %d waits out its crash-loop backoff: restart %d in %.1f s", (int)first,
                 (int)ft->restarts, left > 0 ? (double)left / 1e6 : 0.0);
    }
    hrm_free(names);
    hrm_free(nodes);
    json_object_set_new(o, "pending_reason", json_string(reason));
    json_object_set_new(o, "estimated_start_s", seconds_or_null(start));
}

void eta_annotate_list(struct master *m, json_t *list)
{
    const int64_t *start = NULL;
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        const struct rjob *j = jobs_find(m, json_integer_value(json_object_get(o, "id")));
        bool pending = j && has_pending(j);
        if (pending && !start)
            start = estimates(m, true);
        json_object_set_new(o, "estimated_start_s",
                            seconds_or_null(pending ? start[j->id - 1] : -1));
    }
}
