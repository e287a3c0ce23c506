/* hrm policy (P0): the unit a new ready task joins, by the rule below, remembered per kind of task so a choice costs the nodes that changed, not every unit. */
#include <assert.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/tourney.h"
#include "policy/hrm_private.h"

/*
 * The rule, as a scan of the units in order (hrmp_choose_scan): P0 placement, by hrm_ru_prefer:
 * the least wait first.  Stream: the simulated wait (simulaterun); batch: the queue length (0
 * when it starts now).  A unit that cannot start the task now waits at least 1.  Among equal
 * waits, GPU tasks with GPU phases prefer fewer kernels to share with.  Then, at no cost in
 * wait, every task the least growth of its node's expected fragmentation for the workload's
 * kinds of task (FGD's gradient, hrmp_frag_growth); then every GPU task the tightest GPU and
 * node; CPU tasks the node where their cores strand the least GPU capacity, then the node left
 * with the least free CPU + GPU share (hrm_ru_cost_cpu_task); then the shortest queue.  A CPU
 * unit whose free cores equal a CPU task's request is taken at once (no fragment left).
 *
 * So the choice is the first unit taken at once if there is one, else the first of the least
 * cost (hrm_ru_prefer is a strict order: ties keep the first seen), and a unit's cost depends
 * on the task and on its own node alone (its units, queues, free resources; the fragmentation
 * measure adds the workload's kinds, which change only when the workload grows).  The memo
 * below keeps, for tasks alike (hrmp_choice_alike), each node's own result and a tournament
 * over the nodes in their order (a node's winner over the next's on ties); a node that changed
 * (hrmp_node_changed: a task queued, dequeued, started or ended there, a re-binding, the node
 * up or down) is weighed again and its path to the root replayed.  A million tasks of one job
 * queued at once cost O(units per node + log nodes) each instead of O(units).  Stream tasks'
 * simulated waits depend on the clock: they are scanned.
 */

#define CHANGES_RING 4096 /* node changes remembered; a memo further behind is made again */
#define NCHOICES 8        /* kinds of task remembered at once (least recently used goes) */

struct pick {
    int32_t best; /* unit, or -1 */
    struct hrm_ru_cost cost;
    bool measured; /* cost.frag_growth is known */
};

/* One node's units for the task, in order. */
struct leaf {
    struct pick pk;   /* the node's least cost (complete only when taken < 0) */
    int32_t taken;    /* the node's first unit taken at once, or -1 */
    uint32_t version; /* node_cversion + 1 when weighed; 0: never */
};

struct hrmp_choice {
    int32_t rep;     /* a task of the kind it remembers; -1: unused */
    uint64_t seen;   /* node changes (p->nchanges) taken into account */
    uint64_t epoch;  /* p->choice_epoch when made */
    uint64_t used;   /* p->choice_clock at its last use */
    struct leaf *leaf; /* per node */
    /* Two tournaments over the nodes: of their least costs, and of the first node with a unit
     * taken at once. */
    struct hrm_tourney win, taken;
};

static int64_t unit_spare(const struct hrm_ru *ru)
{
    return (int64_t)ru->ncores * 1000 - ru->cpu_used;
}

static bool is_gpu_task(const struct hrm_state *s, int32_t task)
{
    return s->wl->tasks[task].req.v[HRM_DIM_GPU] > 0;
}

/* Weighs node's units for task against *pk (the best of the units before them); returns a unit
 * taken at once (the scan stops there), or -1. */
static int32_t weigh_node(struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t node,
                          int64_t now, struct pick *pk)
{
    const struct hrm_res *req = &s->wl->tasks[task].req;
    bool stream = hrmp_queue_of(p, s, task) == HRMP_STREAM, gpu = is_gpu_task(s, task);
    struct hrm_ru_plan plan;
    struct hrm_ru_rules r = hrmp_rules_of(p, task);
    struct hrm_ru_host h;
    hrmp_host(p, s, p->ru_first[node], &h);
    for (int32_t u = p->ru_first[node]; u < p->ru_first[node + 1]; u++) {
        if (!hrm_ru_host_admits(&h, s->wl, task, u - h.first, r))
            continue;
        const struct hrm_ru *ru = &p->ru[u];
        int32_t len = hrmp_queue_len(p, u);
        bool now_ok =
            len == ru->ntasks && hrm_ru_host_can_start(&h, s->wl, task, u - h.first, r, &plan);
        if (!gpu && now_ok && unit_spare(ru) == req->v[HRM_DIM_CPU])
            return u; /* taken at once */
        if (!now_ok && pk->best >= 0 && pk->cost.wait == 0)
            continue; /* cannot beat a unit that starts it now */
        struct hrm_ru_cost cost = {.queue = len};
        if (!now_ok) {
            int64_t w = stream ? hrmp_unit_wait(p, s, task, u, now) : len;
            cost.wait = w < INT64_MAX ? w + 1 : w;
        }
        hrm_ru_host_cost(&h, s->wl, task, u - h.first, &cost);
        /* The fragmentation gradient breaks ties of wait and sharing; measured only then (it
         * weighs every kind of task). */
        bool measured = false;
        if (pk->best >= 0 && cost.wait == pk->cost.wait && cost.sharing == pk->cost.sharing) {
            if (!pk->measured)
                pk->cost.frag_growth = hrmp_frag_growth(p, s, task, pk->best);
            pk->measured = true;
            cost.frag_growth = hrmp_frag_growth(p, s, task, u);
            measured = true;
        }
        if (pk->best < 0 || hrm_ru_prefer(&cost, &pk->cost))
            *pk = (struct pick){.best = u, .cost = cost, .measured = measured};
    }
    return -1;
}

int32_t hrmp_choose_scan(struct hrmp *p, const struct hrm_state *s, int32_t task, int64_t now)
{
    hrmp_settle_rules(p, s, task);
    struct pick pk = {.best = -1};
    for (int32_t node = 0; node < p->nnodes; node++) {
        if (!s->nodes[node].up)
            continue;
        int32_t u = weigh_node(p, s, task, node, now, &pk);
        if (u >= 0)
            return u;
    }
    return pk.best;
}

/* ---- the memo ---- */

void hrmp_node_changed(struct hrmp *p, int32_t node)
{
    if (!p->node_cversion)
        return;
    p->node_cversion[node]++;
    p->changes[p->nchanges++ % CHANGES_RING] = node;
}

void hrmp_choices_reset(struct hrmp *p)
{
    p->choice_epoch++;
}

void hrmp_choices_build(struct hrmp *p)
{
    p->node_cversion = hrm_calloc((size_t)p->nnodes + 1, sizeof(*p->node_cversion));
    p->changes = hrm_calloc(CHANGES_RING, sizeof(*p->changes));
    p->choices = hrm_calloc(NCHOICES, sizeof(*p->choices));
    for (int i = 0; i < NCHOICES; i++)
        p->choices[i].rep = -1;
}

void hrmp_choices_fini(struct hrmp *p)
{
    for (int i = 0; p->choices && i < NCHOICES; i++) {
        hrm_free(p->choices[i].leaf);
        if (p->choices[i].leaf) {
            hrm_tourney_fini(&p->choices[i].win);
            hrm_tourney_fini(&p->choices[i].taken);
        }
    }
    hrm_free(p->choices);
    hrm_free(p->changes);
    hrm_free(p->node_cversion);
}

/* Whether tasks a and b are chosen for alike: everything the rule reads of a task. */
static bool alike(const struct hrmp *p, const struct hrm_state *s, int32_t a, int32_t b)
{
    const struct hrm_workload *wl = s->wl;
    const struct hrm_task *x = &wl->tasks[a], *y = &wl->tasks[b];
    return memcmp(&x->req, &y->req, sizeof(x->req)) == 0 && x->gpu_milli == y->gpu_milli &&
           wl->jobs[x->job].kind == wl->jobs[y->job].kind &&
           (hrm_workload_gpu_phases(wl, a) != NULL) == (hrm_workload_gpu_phases(wl, b) != NULL) &&
           p->relaxed[a] == p->relaxed[b] && p->task_kind[a] == p->task_kind[b];
}

static void weigh_leaf(struct hrmp *p, const struct hrm_state *s, int32_t task, int32_t node,
                       struct leaf *lf)
{
    lf->pk = (struct pick){.best = -1};
    p->units_weighed += p->ru_first[node + 1] - p->ru_first[node];
    lf->taken = s->nodes[node].up ? weigh_node(p, s, task, node, 0, &lf->pk) : -1;
    lf->version = p->node_cversion[node] + 1;
}

/* Whether node b's least cost beats node a's (a comes first in the scan: it keeps ties), their
 * fragmentation growths measured if wait and sharing tie, as the scan measures them. */
static bool leaf_beats(struct hrmp *p, const struct hrm_state *s, int32_t task, struct leaf *b,
                       struct leaf *a)
{
    if (b->pk.cost.wait == a->pk.cost.wait && b->pk.cost.sharing == a->pk.cost.sharing) {
        struct leaf *both[2] = {a, b};
        for (int i = 0; i < 2; i++) {
            if (!both[i]->pk.measured)
                both[i]->pk.cost.frag_growth = hrmp_frag_growth(p, s, task, both[i]->pk.best);
            both[i]->pk.measured = true;
        }
    }
    return hrm_ru_prefer(&b->pk.cost, &a->pk.cost);
}

/* What the tournament of least costs compares with (leaf_beats). */
struct match {
    struct hrmp *p;
    const struct hrm_state *s;
    int32_t task;
    struct hrmp_choice *c;
};

static bool node_beats(void *ctx, int32_t b, int32_t a)
{
    struct match *m = ctx;
    return leaf_beats(m->p, m->s, m->task, &m->c->leaf[b], &m->c->leaf[a]);
}

/* Node's leaf into both tournaments; its paths replayed when replay. */
static void enter_leaf(struct match *m, int32_t node, bool replay)
{
    const struct leaf *lf = &m->c->leaf[node];
    if (replay) {
        hrm_tourney_update(&m->c->taken, node, lf->taken >= 0, NULL, NULL);
        hrm_tourney_update(&m->c->win, node, lf->pk.best >= 0, node_beats, m);
    } else {
        hrm_tourney_enter(&m->c->taken, node, lf->taken >= 0);
        hrm_tourney_enter(&m->c->win, node, lf->pk.best >= 0);
    }
}

static void make(struct hrmp *p, const struct hrm_state *s, int32_t task, struct hrmp_choice *c)
{
    if (!c->leaf) {
        c->leaf = hrm_alloc((size_t)(p->nnodes ? p->nnodes : 1) * sizeof(*c->leaf));
        hrm_tourney_init(&c->win, p->nnodes);
        hrm_tourney_init(&c->taken, p->nnodes);
    }
    struct match m = {p, s, task, c};
    for (int32_t n = 0; n < p->nnodes; n++) {
        weigh_leaf(p, s, task, n, &c->leaf[n]);
        enter_leaf(&m, n, false);
    }
    hrm_tourney_play_all(&c->taken, NULL, NULL);
    hrm_tourney_play_all(&c->win, node_beats, &m);
    c->rep = task;
    c->epoch = p->choice_epoch;
    c->seen = p->nchanges;
}

/* Weighs again the nodes that changed since the memo was brought up to date. */
static void catch_up(struct hrmp *p, const struct hrm_state *s, int32_t task, struct hrmp_choice *c)
{
    struct match m = {p, s, task, c};
    for (uint64_t k = c->seen; k < p->nchanges; k++) {
        int32_t n = p->changes[k % CHANGES_RING];
        if (c->leaf[n].version == p->node_cversion[n] + 1)
            continue; /* weighed since its last change */
        weigh_leaf(p, s, task, n, &c->leaf[n]);
        enter_leaf(&m, n, true);
    }
    c->seen = p->nchanges;
}

static struct hrmp_choice *choice_for(struct hrmp *p, const struct hrm_state *s, int32_t task)
{
    struct hrmp_choice *lru = &p->choices[0];
    for (int i = 0; i < NCHOICES; i++) {
        struct hrmp_choice *c = &p->choices[i];
        if (c->rep >= 0 && c->epoch == p->choice_epoch && alike(p, s, c->rep, task)) {
            if (p->nchanges - c->seen > CHANGES_RING || p->nchanges - c->seen > (uint64_t)p->nnodes)
                make(p, s, task, c); /* cheaper made again than caught up */
            else
                catch_up(p, s, task, c);
            return c;
        }
        if (c->rep < 0 || c->used < lru->used)
            lru = c;
    }
    make(p, s, task, lru);
    return lru;
}

int32_t hrmp_choose(struct hrmp *p, const struct hrm_state *s, int32_t task, int64_t now)
{
    hrmp_settle_rules(p, s, task);
    if (hrmp_queue_of(p, s, task) == HRMP_STREAM) {
        p->units_weighed += p->nru;
        return hrmp_choose_scan(p, s, task, now); /* its waits depend on the clock */
    }
    struct hrmp_choice *c = choice_for(p, s, task);
    c->used = ++p->choice_clock;
    int32_t taken = hrm_tourney_winner(&c->taken), win = hrm_tourney_winner(&c->win);
    int32_t u = taken >= 0 ? c->leaf[taken].taken : win >= 0 ? c->leaf[win].pk.best : -1;
    /* The test build checks the memo against the scan on every choice. */
    assert(u == hrmp_choose_scan(p, s, task, now));
    return u;
}
