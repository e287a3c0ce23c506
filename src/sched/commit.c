/* Master side of the shared-state commit protocol: snapshots, cell lock, claim validation. */

#include "hrm/alloc.h"
#include "hrm/commit.h"
#include "hrm/ruplace.h"

/* One instance as the master sees it: the transaction it is sending, and a
 * snapshot request waiting for the cell to change. */
struct pclaim {
    int32_t job, task, node;
    uint32_t gpu_mask; /* the GPUs the instance placed it on (0: none named) */
    uint64_t seen;
};

struct inst {
    struct pclaim *claims;
    size_t nclaims, cap;
    int32_t txn;
    bool locked_txn; /* its claims come under the lock */
    bool parked, parked_lock;
    uint64_t parked_ver;
    int32_t parked_txn;
};

/* A FIFO of instance indices; each instance is in it at most once, so
 * `instances` slots are enough. */
struct ring {
    int32_t *v, *txn;
    int32_t head, n, cap;
};

struct hrm_commit {
    const struct hrm_cluster *c;
    const struct hrm_workload *wl;
    struct hrm_commit_config cfg;
    struct hrm_cell cell;
    struct inst *inst;
    int32_t *node_of; /* per task: its node while running, else -1 */
    uint32_t *gpus_of; /* per task: the GPUs it holds there (0: none named) */
    int32_t *owner;   /* per task: the instance that committed it */
    /* K of the fair share: jobs with GPU tasks not ended that have asked for a
     * snapshot (P1's "running jobs": holding GPUs or waiting for them). */
    int32_t *gpu_left;    /* per job: GPU tasks not ended */
    bool *gpu_counted;    /* per job: counted in cell.gpu_jobs */
    int32_t holder;       /* instance holding the cell lock, -1 */
    struct ring lockq;    /* lock requests in arrival order */
    struct ring deferred; /* complete transactions waiting for the lock */
    int32_t nparked;
    uint64_t woken_at; /* cell version when parked requests were last looked at */
    uint8_t *ok;       /* scratch: per claim, passed the version check */
    size_t cap_ok;
    int32_t ntasks, njobs; /* of the workload, as far as the per-task and per-job arrays go */
    struct hrm_commit_stats st;
};

static void ring_init(struct ring *r, int32_t cap)
{
    r->v = hrm_alloc((size_t)cap * sizeof(*r->v));
    r->txn = hrm_alloc((size_t)cap * sizeof(*r->txn));
    r->head = r->n = 0;
    r->cap = cap;
}

static void ring_push(struct ring *r, int32_t v, int32_t txn)
{
    int32_t at = (r->head + r->n++) % r->cap;
    r->v[at] = v;
    r->txn[at] = txn;
}

/* Drops v from the ring, keeping the order of the others. */
static void ring_remove(struct ring *r, int32_t v)
{
    int32_t kept = 0;
    for (int32_t k = 0; k < r->n; k++) {
        int32_t from = (r->head + k) % r->cap, to = (r->head + kept) % r->cap;
        if (r->v[from] == v)
            continue;
        r->v[to] = r->v[from];
        r->txn[to] = r->txn[from];
        kept++;
    }
    r->n = kept;
}

static int32_t ring_pop(struct ring *r, int32_t *txn)
{
    int32_t v = r->v[r->head];
    if (txn)
        *txn = r->txn[r->head];
    r->head = (r->head + 1) % r->cap;
    r->n--;
    return v;
}

struct hrm_commit *hrm_commit_new(const struct hrm_cluster *cluster, const struct hrm_workload *wl,
                                  const struct hrm_commit_config *cfg, struct hrm_error *err)
{
    if (!cfg || cfg->instances < 1 || cfg->instances > 4096 ||
        (cfg->validate != HRM_VALIDATE_RESOURCE && cfg->validate != HRM_VALIDATE_VERSION)) {
        hrm_errorf(err, -EINVAL, "commit: need 1..4096 instances and a validation mode");
        return NULL;
    }
    struct hrm_commit *m = hrm_calloc(1, sizeof(*m));
    if (hrm_cell_init(&m->cell, cluster, err) < 0) {
        hrm_free(m);
        return NULL;
    }
    m->c = cluster;
    m->wl = wl;
    m->cfg = *cfg;
    m->holder = -1;
    m->inst = hrm_calloc((size_t)cfg->instances, sizeof(*m->inst));
    size_t nt = (size_t)(wl->ntasks > 0 ? wl->ntasks : 1);
    m->node_of = hrm_alloc(nt * sizeof(*m->node_of));
    for (size_t t = 0; t < nt; t++)
        m->node_of[t] = -1;
    m->owner = hrm_calloc(nt, sizeof(*m->owner));
    m->gpus_of = hrm_calloc(nt, sizeof(*m->gpus_of));
    size_t nj = (size_t)(wl->njobs > 0 ? wl->njobs : 1);
    m->gpu_left = hrm_calloc(nj, sizeof(*m->gpu_left));
    m->gpu_counted = hrm_calloc(nj, sizeof(*m->gpu_counted));
    for (int32_t t = 0; t < wl->ntasks; t++)
        m->gpu_left[wl->tasks[t].job] += wl->tasks[t].req.v[HRM_DIM_GPU] > 0;
    m->ntasks = wl->ntasks;
    m->njobs = wl->njobs;
    ring_init(&m->lockq, cfg->instances);
    ring_init(&m->deferred, cfg->instances);
    m->woken_at = m->cell.version;
    return m;
}

void hrm_commit_free(struct hrm_commit *m)
{
    if (!m)
        return;
    for (int32_t i = 0; i < m->cfg.instances; i++)
        hrm_free(m->inst[i].claims);
    hrm_free(m->inst);
    hrm_free(m->node_of);
    hrm_free(m->owner);
    hrm_free(m->gpus_of);
    hrm_free(m->gpu_left);
    hrm_free(m->gpu_counted);
    hrm_free(m->lockq.v);
    hrm_free(m->lockq.txn);
    hrm_free(m->deferred.v);
    hrm_free(m->deferred.txn);
    hrm_free(m->ok);
    hrm_cell_fini(&m->cell);
    hrm_free(m);
}

const struct hrm_cell *hrm_commit_cell(const struct hrm_commit *m)
{
    return &m->cell;
}

const struct hrm_commit_stats *hrm_commit_stats(const struct hrm_commit *m)
{
    return &m->st;
}

/* ---- snapshots and the lock ---- */

static void reply(struct hrm_commit *m, struct hrm_env *env, int32_t i, int32_t txn, bool lock)
{
    struct hrm_msg r = {.type = HRM_MSG_SNAP_REPLY,
                        .status = lock ? HRM_SNAP_LOCK : 0,
                        .from = HRM_ADDR_CENTRAL,
                        .job = -1,
                        .task = -1,
                        .node = -1,
                        .attempt = txn,
                        .value = (int64_t)m->cell.version};
    m->st.syncs++;
    env->send(env, hrm_addr_sched(i), &r);
}

static void serve(struct hrm_commit *m, struct hrm_env *env, int32_t i, int32_t txn, bool lock)
{
    if (!lock) {
        reply(m, env, i, txn, false);
    } else if (m->holder < 0) {
        m->holder = i;
        m->st.lock_grants++;
        reply(m, env, i, txn, true);
    } else {
        m->st.lock_waits++;
        ring_push(&m->lockq, i, txn);
    }
}

/* ---- validation ---- */

struct hrm_cell_use hrm_commit_use_of(const struct hrm_workload *wl, int32_t task, uint32_t mask)
{
    const struct hrm_task *t = &wl->tasks[task];
    bool gpu = t->req.v[HRM_DIM_GPU] > 0;
    return (struct hrm_cell_use){.req = t->req,
                                 .gpu_mask = gpu ? mask : 0,
                                 .gmem = hrm_ru_task_gmem(&t->req),
                                 .milli = gpu ? t->gpu_milli : 0,
                                 .solo = gpu && !hrm_ru_task_stackable(wl, task)};
}

static struct hrm_cell_use use_of(const struct hrm_commit *m, int32_t task, uint32_t mask)
{
    return hrm_commit_use_of(m->wl, task, mask);
}

static void ack(struct hrm_env *env, int32_t i, const struct pclaim *c, int32_t txn,
                enum hrm_claim_verdict v)
{
    struct hrm_msg a = {.type = HRM_MSG_CLAIM_ACK,
                        .status = (uint16_t)v,
                        .from = HRM_ADDR_CENTRAL,
                        .job = c->job,
                        .task = c->task,
                        .node = c->node,
                        .attempt = txn};
    env->send(env, hrm_addr_sched(i), &a);
}

static void launch(struct hrm_commit *m, struct hrm_env *env, int32_t i, const struct pclaim *c)
{
    const struct hrm_task *t = &m->wl->tasks[c->task];
    m->node_of[c->task] = c->node;
    m->owner[c->task] = i;
    m->gpus_of[c->task] = c->gpu_mask;
    struct hrm_msg l = {.type = HRM_MSG_TASK_LAUNCH,
                        .from = HRM_ADDR_CENTRAL,
                        .job = t->job,
                        .task = c->task,
                        .node = c->node,
                        .attempt = 0,
                        .gpu_mask = c->gpu_mask};
    env->send(env, hrm_addr_node(c->node), &l);
}

/* Validates instance i's complete transaction claim by claim.  Strict
 * validation compares every claim with the node's version *before* the
 * transaction: two claims of one transaction on one node were planned on the
 * same snapshot, and the first must not make the second look stale.  A
 * malformed claim refuses the whole transaction before anything changes. */
static int process(struct hrm_commit *m, struct hrm_env *env, int32_t i)
{
    struct inst *in = &m->inst[i];
    bool locked = in->locked_txn;
    HRM_GROW(m->ok, m->cap_ok, in->nclaims + 1);
    for (size_t k = 0; k < in->nclaims; k++) {
        const struct pclaim *c = &in->claims[k];
        if (c->task < 0 || c->task >= m->wl->ntasks || c->node < 0 || c->node >= m->c->nnodes ||
            m->wl->tasks[c->task].job != c->job || m->node_of[c->task] >= 0)
            return -HRM_ESTATE; /* a claim for a task already running: the instance lost track */
        m->ok[k] = locked || m->cfg.validate == HRM_VALIDATE_RESOURCE ||
                   m->cell.nodes[c->node].version == c->seen;
    }
    m->st.txns++;
    m->st.txns_locked += locked;
    for (size_t k = 0; k < in->nclaims; k++) {
        const struct pclaim *c = &in->claims[k];
        struct hrm_cell_use use = use_of(m, c->task, c->gpu_mask);
        struct hrm_res charge;
        m->st.claims++;
        /* A task claimed twice in one transaction commits once; the copy conflicts. */
        if (m->ok[k] && m->node_of[c->task] < 0 &&
            hrm_cell_take_use(&m->cell, c->node, &use) == 0) {
            m->st.committed++;
            launch(m, env, i, c);
            ack(env, i, c, in->txn, HRM_CLAIM_COMMITTED);
            continue;
        }
        m->st.conflicts++;
        if (!m->ok[k] &&
            hrm_cell_node_fits(&m->cell.nodes[c->node], m->cell.gpus, &use, &charge))
            m->st.conflicts_stale++;
        if (locked)
            m->st.locked_bounced++;
        ack(env, i, c, in->txn, HRM_CLAIM_CONFLICT);
    }
    in->nclaims = 0;
    in->locked_txn = false;
    return 0;
}

/* After every message: with the lock free, the deferred transactions go
 * first (they were complete before anyone asked for the lock again), then
 * requests parked until the cell changed, then the next lock request.  Doing
 * this only here keeps a lock from being granted between two deferred
 * transactions, which could change the cell under the new holder's
 * snapshot. */
static int settle(struct hrm_commit *m, struct hrm_env *env)
{
    while (m->holder < 0 && m->deferred.n > 0) {
        int rc = process(m, env, ring_pop(&m->deferred, NULL));
        if (rc < 0)
            return rc;
    }
    if (m->nparked > 0 && m->cell.version != m->woken_at) {
        for (int32_t i = 0; i < m->cfg.instances; i++) {
            struct inst *in = &m->inst[i];
            if (in->parked && in->parked_ver < m->cell.version) {
                in->parked = false;
                m->nparked--;
                serve(m, env, i, in->parked_txn, in->parked_lock);
            }
        }
    }
    m->woken_at = m->cell.version;
    if (m->holder < 0 && m->lockq.n > 0) {
        int32_t txn, i = ring_pop(&m->lockq, &txn);
        m->holder = i;
        m->st.lock_grants++;
        reply(m, env, i, txn, true);
    }
    return 0;
}

/* ---- messages ---- */

static int on_snap_request(struct hrm_commit *m, struct hrm_env *env, int32_t i,
                           const struct hrm_msg *msg)
{
    bool lock = msg->status & HRM_SNAP_LOCK;
    struct inst *in = &m->inst[i];
    if (in->parked || m->holder == i)
        return -HRM_ESTATE;
    if (msg->job >= 0 && msg->job < m->wl->njobs && m->gpu_left[msg->job] > 0 &&
        !m->gpu_counted[msg->job]) {
        m->gpu_counted[msg->job] = true; /* before the reply: the asker is one of the K */
        m->cell.gpu_jobs++;
    }
    if (msg->value > 0 && (uint64_t)msg->value >= m->cell.version) {
        in->parked = true;
        in->parked_lock = lock;
        in->parked_ver = (uint64_t)msg->value;
        in->parked_txn = msg->attempt;
        m->nparked++;
        m->st.syncs_parked++;
        return 0;
    }
    serve(m, env, i, msg->attempt, lock);
    return 0;
}

static int on_claim(struct hrm_commit *m, struct hrm_env *env, int32_t i, const struct hrm_msg *msg)
{
    struct inst *in = &m->inst[i];
    bool locked = msg->status & HRM_CLAIM_LOCKED;
    if (locked && m->holder != i)
        return -HRM_ESTATE;
    if (in->nclaims > 0 && in->txn != msg->attempt)
        return -HRM_ESTATE; /* a new transaction before the last one was complete */
    in->txn = msg->attempt;
    in->locked_txn = locked;
    if (msg->task >= 0) {
        HRM_GROW(in->claims, in->cap, in->nclaims + 1);
        in->claims[in->nclaims++] = (struct pclaim){.job = msg->job,
                                                    .task = msg->task,
                                                    .node = msg->node,
                                                    .gpu_mask = msg->gpu_mask,
                                                    .seen = (uint64_t)msg->value};
    }
    if (!(msg->status & HRM_CLAIM_LAST))
        return 0;
    if (locked) {
        int rc = process(m, env, i);
        m->holder = -1;
        return rc;
    }
    if (m->holder >= 0) {
        m->st.txns_deferred++;
        ring_push(&m->deferred, i, msg->attempt);
        return 0;
    }
    return process(m, env, i);
}

static int on_task_end(struct hrm_commit *m, struct hrm_env *env, const struct hrm_msg *msg)
{
    if (msg->task < 0 || msg->task >= m->wl->ntasks)
        return -HRM_ESTATE;
    if (m->node_of[msg->task] != msg->node)
        return 0; /* a repeated report */
    const struct hrm_task *t = &m->wl->tasks[msg->task];
    struct hrm_cell_use use = use_of(m, msg->task, m->gpus_of[msg->task]);
    int rc = hrm_cell_give_use(&m->cell, msg->node, &use);
    if (rc < 0)
        return rc;
    m->node_of[msg->task] = -1;
    m->gpus_of[msg->task] = 0;
    if (t->req.v[HRM_DIM_GPU] > 0 && --m->gpu_left[t->job] == 0 && m->gpu_counted[t->job]) {
        m->gpu_counted[t->job] = false;
        m->cell.gpu_jobs--;
    }
    struct hrm_msg f = *msg;
    f.from = HRM_ADDR_CENTRAL;
    env->send(env, hrm_addr_sched(m->owner[msg->task]), &f);
    return 0;
}

/* ---- a cell and a workload that grow, instances that go (the daemons) ---- */

int hrm_commit_grow(struct hrm_commit *m, struct hrm_env *env)
{
    const struct hrm_workload *wl = m->wl;
    hrm_cell_grow(&m->cell);
    if (wl->ntasks > m->ntasks) {
        size_t nt = (size_t)wl->ntasks;
        m->node_of = hrm_realloc(m->node_of, nt * sizeof(*m->node_of));
        m->owner = hrm_realloc(m->owner, nt * sizeof(*m->owner));
        m->gpus_of = hrm_realloc(m->gpus_of, nt * sizeof(*m->gpus_of));
        for (size_t t = (size_t)m->ntasks; t < nt; t++) {
            m->node_of[t] = -1;
            m->owner[t] = 0;
            m->gpus_of[t] = 0;
        }
    }
    if (wl->njobs > m->njobs) {
        size_t nj = (size_t)wl->njobs;
        m->gpu_left = hrm_realloc(m->gpu_left, nj * sizeof(*m->gpu_left));
        m->gpu_counted = hrm_realloc(m->gpu_counted, nj * sizeof(*m->gpu_counted));
        for (size_t j = (size_t)m->njobs; j < nj; j++) {
            m->gpu_left[j] = 0;
            m->gpu_counted[j] = false;
        }
    }
    for (int32_t t = m->ntasks; t < wl->ntasks; t++)
        m->gpu_left[wl->tasks[t].job] += wl->tasks[t].req.v[HRM_DIM_GPU] > 0;
    m->ntasks = wl->ntasks;
    m->njobs = wl->njobs;
    return settle(m, env);
}

int hrm_commit_node_up(struct hrm_commit *m, struct hrm_env *env, int32_t node, bool up)
{
    int rc = hrm_cell_set_up(&m->cell, node, up);
    return rc < 0 ? rc : settle(m, env);
}

int hrm_commit_adopt(struct hrm_commit *m, int32_t task, int32_t node, int32_t i)
{
    return hrm_commit_adopt_on(m, task, node, 0, i);
}

int hrm_commit_adopt_on(struct hrm_commit *m, int32_t task, int32_t node, uint32_t gpu_mask,
                        int32_t i)
{
    if (task < 0 || task >= m->ntasks || i < 0 || i >= m->cfg.instances || m->node_of[task] >= 0)
        return -HRM_ESTATE;
    struct hrm_cell_use use = use_of(m, task, gpu_mask);
    int rc = hrm_cell_take_use(&m->cell, node, &use);
    if (rc < 0)
        return rc;
    m->node_of[task] = node;
    m->owner[task] = i;
    m->gpus_of[task] = use.gpu_mask;
    return 0;
}

int32_t hrm_commit_task_node(const struct hrm_commit *m, int32_t task)
{
    return task >= 0 && task < m->ntasks ? m->node_of[task] : -1;
}

int hrm_commit_forget(struct hrm_commit *m, struct hrm_env *env, int32_t i)
{
    if (i < 0 || i >= m->cfg.instances)
        return -HRM_ESTATE;
    struct inst *in = &m->inst[i];
    in->nclaims = 0;
    in->locked_txn = false;
    if (in->parked) {
        in->parked = false;
        m->nparked--;
    }
    ring_remove(&m->lockq, i);
    ring_remove(&m->deferred, i);
    if (m->holder == i)
        m->holder = -1;
    return settle(m, env);
}

int hrm_commit_on_msg(struct hrm_commit *m, struct hrm_env *env, const struct hrm_msg *msg)
{
    int rc = 0;
    if (msg->type == HRM_MSG_TASK_END) {
        rc = on_task_end(m, env, msg);
    } else if (msg->type == HRM_MSG_SNAP_REQUEST || msg->type == HRM_MSG_CLAIM) {
        int32_t i = hrm_addr_sched_index(msg->from);
        if (msg->from > HRM_ADDR_SCHED0 || i >= m->cfg.instances)
            return -HRM_ESTATE;
        rc =
            msg->type == HRM_MSG_CLAIM ? on_claim(m, env, i, msg) : on_snap_request(m, env, i, msg);
    }
    if (rc < 0)
        return rc;
    return settle(m, env);
}
