/* FGM (P2): DRF order, stage-by-stage matching on node timelines, compression, Alg. 3. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/estimate.h"
#include "hrm/fgm.h"
#include "policy/fgm_private.h"
#include "policy/policy_private.h"

#define HIST 5         /* recent conformity windows averaged by Alg. 3 */
#define FAILED_KEYS 16 /* per-pass memory of candidates that fit nowhere */
#define MAXST (HRM_EST_MAX_STAGES + 1)

/* What FGM assumed about a run it placed: its stages from its start. */
struct run {
    int32_t attempt;
    bool predicted; /* from the history; else matched by its request */
    int32_t nstages;
    struct fgm_stage st[MAXST];
    int64_t start_us, deadline_us;
    bool sampled;
    double cpu, mem; /* its last usage sample */
    int32_t next_free;
};

struct node {
    enum fgm_mode mode;
    /* the node's last report of its foreign load */
    bool reported;
    double use_cpu, use_mem;
    int64_t report_at, report_iv;
    /* the period (samples arriving together) being summed for Def. 4 */
    int64_t tick_at, tick_dt;
    double tick_mu[2], tick_alpha[2];
    /* the current conformity window, per resource (0 cpu, 1 mem) */
    int64_t win_start;
    double w_T, w_mu[2], w_alpha[2], w_sq[2], w_idle[2];
    double hist[HIST];
    int32_t nhist, hpos;
    double conformity;
    int64_t last_reclaim;
    /* this pass's timeline */
    uint64_t tl_pass;
    struct fgm_timeline tl;
};

struct fgm_priv {
    /* parameters */
    int64_t min_obs, window_us;
    double p, limitation, max_ratio, idle, conf_idle, stretch, headroom;
    struct fgm_thresholds th;
    char history[1024];
    char mode_log[1024]; /* Alg. 3's record written at the end, or "" */
    struct fgm_alg3_stats alg3;
    struct hrm_est *est;
    bool est_borrowed; /* taken or lent (hrm/fgm.h): read it, never feed or free it */
    /* per task */
    struct hrm_est_key *keys;
    uint8_t *by_request; /* a predicted run failed: retried by its request */
    int32_t *run_of;     /* run slot + 1, 0 none */
    int32_t ntasks;
    struct run *runs;
    size_t nruns, cap_runs;
    int32_t free_run;
    struct node *nodes;
    int32_t nnodes;
    uint64_t pass;
    /* scratch */
    struct policy_groups groups;
    struct policy_heap heap;
    struct fgm_load *loads;
    int64_t *deadlines;
    size_t cap_loads;
    struct hrm_est_key failed[FAILED_KEYS];
    int32_t nfailed;
};

/* ---- parameters ---- */

static const char *const fgm_keys[] = {
    "min_obs",         "weight",      "compressed_factor", "max_stages",   "p",     "limitation",
    "max_compression", "idle",        "conf_idle",         "th_fg",        "th_cg", "th_sa",
    "window",          "qos_stretch", "history",           "mem_headroom", "mode_log", NULL};

static const char *param_text(const struct hrm_params *params, const char *key)
{
    const char *v = NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < params->count; i++)
        if (params->items[i] && strncmp(params->items[i], key, kl) == 0 &&
            params->items[i][kl] == '=')
            v = params->items[i] + kl + 1;
    return v;
}

static int range_err(struct hrm_error *err, const char *key, const char *what)
{
    return hrm_errorf(err, -HRM_ESPEC, "policy 'fgm': parameter '%s' must be %s", key, what);
}

static int configure(struct fgm_priv *p, const struct hrm_params *params, struct hrm_error *err)
{
    int rc = hrm_params_check(params, fgm_keys, "fgm", err);
    if (rc)
        return rc;
    p->min_obs = 1;
    p->window_us = 30000000;
    p->p = 0.05;
    p->limitation = 0;
    p->max_ratio = 0.10;
    p->idle = 0.01;
    p->conf_idle = 0.10;
    p->stretch = 1.25;
    p->headroom = 0.10;
    p->th = (struct fgm_thresholds){.sa = 0.02, .cg = 0.005, .fg = 0.001};
    /* The estimator's defaults, stated here so that an explicit 0 is range
     * checked under its key rather than read as "default". */
    struct hrm_est_config ec = {.weight = 0.3, .compressed_factor = 0.2};
    int64_t stages = 4;
    double window_s = 30;
    struct hrm_error pe = {{0}};
    if ((rc = hrm_params_int(params, "min_obs", &p->min_obs, &pe)) ||
        (rc = hrm_params_double(params, "weight", &ec.weight, &pe)) ||
        (rc = hrm_params_double(params, "compressed_factor", &ec.compressed_factor, &pe)) ||
        (rc = hrm_params_int(params, "max_stages", &stages, &pe)) ||
        (rc = hrm_params_double(params, "p", &p->p, &pe)) ||
        (rc = hrm_params_double(params, "limitation", &p->limitation, &pe)) ||
        (rc = hrm_params_double(params, "max_compression", &p->max_ratio, &pe)) ||
        (rc = hrm_params_double(params, "idle", &p->idle, &pe)) ||
        (rc = hrm_params_double(params, "conf_idle", &p->conf_idle, &pe)) ||
        (rc = hrm_params_double(params, "th_fg", &p->th.fg, &pe)) ||
        (rc = hrm_params_double(params, "th_cg", &p->th.cg, &pe)) ||
        (rc = hrm_params_double(params, "th_sa", &p->th.sa, &pe)) ||
        (rc = hrm_params_double(params, "window", &window_s, &pe)) ||
        (rc = hrm_params_double(params, "qos_stretch", &p->stretch, &pe)) ||
        (rc = hrm_params_double(params, "mem_headroom", &p->headroom, &pe)))
        return hrm_errorf(err, rc, "policy 'fgm': %s", pe.text);
    if (!(ec.weight > 0 && ec.weight <= 1))
        return range_err(err, "weight", "in (0, 1]");
    if (!(ec.compressed_factor > 0 && ec.compressed_factor <= 1))
        return range_err(err, "compressed_factor", "in (0, 1]");
    if (stages < 1 || stages > HRM_EST_MAX_STAGES)
        return range_err(err, "max_stages", "in 1..8");
    if (p->min_obs < 1 || p->min_obs > 1000000)
        return range_err(err, "min_obs", "1..1000000");
    if (!(p->p >= 0 && p->p <= 10))
        return range_err(err, "p", "in 0..10");
    if (!(p->max_ratio > 0 && p->max_ratio <= 0.5))
        return range_err(err, "max_compression", "in (0, 0.5] (the paper measured 0.1)");
    if (!(p->limitation >= 0 && p->limitation <= p->max_ratio))
        return range_err(err, "limitation", "in 0..max_compression");
    if (!(p->idle >= 0 && p->idle < 1))
        return range_err(err, "idle", "a fraction in [0, 1)");
    if (!(p->conf_idle >= 0 && p->conf_idle <= 1))
        return range_err(err, "conf_idle", "a fraction in 0..1");
    if (!(p->th.fg >= 0 && p->th.fg <= p->th.cg && p->th.cg <= p->th.sa))
        return range_err(err, "th_fg", "at most th_cg, itself at most th_sa (all >= 0)");
    if (!(window_s >= 0.001 && window_s <= 86400))
        return range_err(err, "window", "in 0.001..86400 seconds");
    if (!(p->headroom >= 0 && p->headroom <= 1))
        return range_err(err, "mem_headroom", "in 0..1");
    if (!(p->stretch >= 1))
        return range_err(err, "qos_stretch", "at least 1");
    p->window_us = (int64_t)(window_s * 1e6);
    ec.max_stages = (int32_t)stages;
    struct hrm_error e2;
    if (!(p->est = hrm_est_new(&ec, &e2)))
        return hrm_errorf(err, -HRM_ESPEC, "policy 'fgm': %s", e2.text);
    const char *hist = param_text(params, "history");
    if (hist) {
        if (!*hist || strlen(hist) >= sizeof(p->history))
            return range_err(err, "history", "a file path of 1..1023 bytes");
        snprintf(p->history, sizeof(p->history), "%s", hist);
        /* A history that does not exist yet is an empty one. */
        rc = hrm_est_load(p->est, p->history, &e2);
        if (rc && rc != -ENOENT)
            return hrm_errorf(err, rc, "policy 'fgm': parameter 'history': %s", e2.text);
        /* fini saves what was learned but cannot report a failure: write the
         * file now, so that a path that cannot be written is refused before
         * the run rather than losing its history after it. */
        rc = hrm_est_save(p->est, p->history, &e2);
        if (rc)
            return hrm_errorf(err, rc, "policy 'fgm': parameter 'history': %s", e2.text);
    }
    const char *log = param_text(params, "mode_log");
    if (log) {
        if (!*log || strlen(log) >= sizeof(p->mode_log))
            return range_err(err, "mode_log", "a file path of 1..1023 bytes");
        if ((rc = fgm_modelog_check(log, err)))
            return rc;
        snprintf(p->mode_log, sizeof(p->mode_log), "%s", log);
    }
    return 0;
}

static int fgm_init(struct hrm_policy *policy, const struct hrm_params *params,
                    struct hrm_error *err)
{
    struct fgm_priv *p = hrm_calloc(1, sizeof(*p));
    p->free_run = -1;
    int rc = configure(p, params, err);
    if (rc) {
        hrm_est_free(p->est);
        hrm_free(p);
        return rc;
    }
    policy->priv = p;
    return 0;
}

static void fgm_fini(struct hrm_policy *policy)
{
    struct fgm_priv *p = policy->priv;
    if (!p)
        return;
    /* Persist what was learned.  fini cannot report errors, but configure
     * wrote the file already, so only a disk that filled or vanished during
     * the run loses it (the next run then starts from the older file). */
    if (p->history[0])
        hrm_est_save(p->est, p->history, NULL);
    if (p->mode_log[0])
        fgm_modelog_write(p->mode_log, &p->alg3);
    if (!p->est_borrowed)
        hrm_est_free(p->est);
    for (int32_t n = 0; n < p->nnodes; n++)
        fgm_timeline_fini(&p->nodes[n].tl);
    hrm_free(p->nodes);
    hrm_free(p->keys);
    hrm_free(p->by_request);
    hrm_free(p->run_of);
    hrm_free(p->runs);
    hrm_free(p->loads);
    hrm_free(p->deadlines);
    policy_groups_fini(&p->groups);
    policy_heap_fini(&p->heap);
    hrm_free(p);
    policy->priv = NULL;
}

/* Per-task and per-node arrays, made on first sight of the state. */
static void ensure(struct fgm_priv *p, const struct hrm_state *s)
{
    if (p->keys && p->ntasks == s->wl->ntasks && p->nnodes == s->cluster->nnodes)
        return;
    hrm_free(p->keys);
    hrm_free(p->by_request);
    hrm_free(p->run_of);
    for (int32_t n = 0; n < p->nnodes; n++)
        fgm_timeline_fini(&p->nodes[n].tl);
    hrm_free(p->nodes);
    p->ntasks = s->wl->ntasks;
    p->nnodes = s->cluster->nnodes;
    p->keys = hrm_calloc((size_t)(p->ntasks ? p->ntasks : 1), sizeof(*p->keys));
    for (int32_t t = 0; t < p->ntasks; t++)
        p->keys[t] = hrm_est_key_of(s->wl, t);
    p->run_of = hrm_calloc((size_t)(p->ntasks ? p->ntasks : 1), sizeof(*p->run_of));
    p->by_request = hrm_calloc((size_t)(p->ntasks ? p->ntasks : 1), sizeof(*p->by_request));
    p->nodes = hrm_calloc((size_t)(p->nnodes ? p->nnodes : 1), sizeof(*p->nodes));
}

/* ---- runs ---- */

static struct run *run_get(struct fgm_priv *p, const struct hrm_state *s, int32_t task)
{
    if (!p->run_of || task < 0 || task >= p->ntasks || p->run_of[task] == 0)
        return NULL;
    struct run *r = &p->runs[p->run_of[task] - 1];
    /* A run FGM did not see end (node failure) is replaced by the next one. */
    return r->attempt == s->tasks[task].attempt ? r : NULL;
}

static void run_drop(struct fgm_priv *p, int32_t task)
{
    if (!p->run_of || task < 0 || task >= p->ntasks || p->run_of[task] == 0)
        return;
    int32_t slot = p->run_of[task] - 1;
    p->runs[slot].next_free = p->free_run;
    p->free_run = slot;
    p->run_of[task] = 0;
}

static struct run *run_new(struct fgm_priv *p, int32_t task)
{
    run_drop(p, task);
    int32_t slot;
    if (p->free_run >= 0) {
        slot = p->free_run;
        p->free_run = p->runs[slot].next_free;
    } else {
        HRM_GROW(p->runs, p->cap_runs, p->nruns + 1);
        slot = (int32_t)p->nruns++;
    }
    memset(&p->runs[slot], 0, sizeof(p->runs[slot]));
    p->run_of[task] = slot + 1;
    return &p->runs[slot];
}

/* Average assumed demand of r over its elapsed [e0, e1). */
static void assumed_avg(const struct run *r, int64_t e0, int64_t e1, double *cpu, double *mem)
{
    double c = 0, m = 0;
    int64_t a = 0;
    for (int32_t k = 0; k < r->nstages; k++) {
        bool last = k == r->nstages - 1;
        int64_t b = last ? INT64_MAX : a + r->st[k].dur_us;
        int64_t lo = a > e0 ? a : e0, hi = b < e1 ? b : e1;
        if (hi > lo) {
            c += r->st[k].cpu * (double)(hi - lo);
            m += r->st[k].mem * (double)(hi - lo);
        }
        a = b;
    }
    double len = (double)(e1 - e0);
    *cpu = len > 0 ? c / len : 0;
    *mem = len > 0 ? m / len : 0;
}

/* ---- conformity (Def. 4) and Alg. 3 ---- */

/* Closes the node's current sample period into its window. */
static void close_tick(struct fgm_priv *p, const struct hrm_state *s, int32_t node)
{
    struct node *nd = &p->nodes[node];
    if (nd->tick_dt <= 0)
        return;
    const struct hrm_res *cap = &s->cluster->nodes[node].capacity;
    double capv[2] = {(double)cap->v[HRM_DIM_CPU], (double)cap->v[HRM_DIM_MEM]};
    double use[2] = {nd->use_cpu, nd->use_mem};
    double dt = (double)nd->tick_dt;
    nd->w_T += dt;
    for (int r = 0; r < 2; r++) {
        double mu = nd->tick_mu[r] / capv[r], al = nd->tick_alpha[r] / capv[r];
        /* Idle share (formula (14) over the period): foreign load and tasks. */
        double idle = 1 - ((nd->reported ? use[r] : 0) + nd->tick_mu[r]) / capv[r];
        nd->w_mu[r] += mu * dt;
        nd->w_alpha[r] += al * dt;
        nd->w_sq[r] += (mu - al) * (mu - al) * dt;
        nd->w_idle[r] += idle * dt;
        nd->tick_mu[r] = nd->tick_alpha[r] = 0;
    }
    nd->tick_dt = 0;
}

/* Rolls the node's conformity windows forward to now and sets its mode. */
static void roll_windows(struct fgm_priv *p, int32_t node, int64_t now)
{
    struct node *nd = &p->nodes[node];
    int32_t pushed = 0;
    while (now >= nd->win_start + p->window_us) {
        double f = 0;
        for (int r = 0; r < 2 && nd->w_T > 0; r++) {
            /* Def. 4 with the window's time-weighted means (formula (14)). */
            bool over = nd->w_mu[r] > nd->w_alpha[r];
            bool short_ = nd->w_idle[r] / nd->w_T < p->conf_idle;
            if (over && short_)
                f = fmax(f, nd->w_sq[r] / nd->w_T);
        }
        nd->hist[nd->hpos] = f;
        nd->hpos = (nd->hpos + 1) % HIST;
        p->alg3.windows++;
        p->alg3.windows_over += f > 0;
        if (nd->nhist < HIST)
            nd->nhist++;
        nd->w_T = 0;
        memset(nd->w_mu, 0, sizeof(nd->w_mu));
        memset(nd->w_alpha, 0, sizeof(nd->w_alpha));
        memset(nd->w_sq, 0, sizeof(nd->w_sq));
        memset(nd->w_idle, 0, sizeof(nd->w_idle));
        nd->win_start += p->window_us;
        /* After HIST empty windows the history is all zeros: skip ahead. */
        if (++pushed >= HIST && now >= nd->win_start + p->window_us)
            nd->win_start = now - (now - nd->win_start) % p->window_us;
    }
    double sum = 0;
    for (int32_t i = 0; i < nd->nhist; i++)
        sum += nd->hist[i];
    nd->conformity = nd->nhist ? sum / nd->nhist : 0;
    enum fgm_mode mode = fgm_adjust(nd->conformity, &p->th);
    if (mode != nd->mode)
        p->alg3.into[mode]++;
    nd->mode = mode;
    if (nd->conformity > p->alg3.max_conformity)
        p->alg3.max_conformity = nd->conformity;
}

/* Memory is incompressible: a run seen using more than assumed holds at
 * least that much for the rest of the stage it is in, so the timeline stops
 * offering memory the node does not have (else the retry of a task that
 * failed for want of it would fail the same way).  Later stages keep their
 * estimate: programs do give memory back between phases. */
static void raise_memory(struct run *r, int64_t now, double mem)
{
    int64_t a = r->start_us;
    for (int32_t k = 0; k < r->nstages; k++) {
        bool last = k == r->nstages - 1;
        int64_t b = last ? INT64_MAX : a + r->st[k].dur_us;
        if (b > now) {
            if (r->st[k].mem < mem)
                r->st[k].mem = mem;
            return;
        }
        a = b;
    }
}

static void on_task_usage(struct fgm_priv *p, const struct hrm_state *s, const struct hrm_event *ev)
{
    if (!p->est_borrowed)
        hrm_est_sample(p->est, ev->task, ev->attempt,
                       &(struct hrm_est_sample){.interval_us = ev->usage.interval_us,
                                                .cpu = ev->usage.cpu,
                                                .mem = ev->usage.mem,
                                                .compressed = ev->usage.compressed});
    struct run *r = run_get(p, s, ev->task);
    if (!r)
        return;
    r->sampled = true;
    r->cpu = (double)ev->usage.cpu;
    r->mem = (double)ev->usage.mem;
    raise_memory(r, ev->now_us, r->mem);
    struct node *nd = &p->nodes[ev->node];
    if (nd->tick_at != ev->now_us) {
        close_tick(p, s, ev->node);
        roll_windows(p, ev->node, ev->now_us);
        nd->tick_at = ev->now_us;
    }
    if (ev->usage.interval_us > nd->tick_dt)
        nd->tick_dt = ev->usage.interval_us;
    double ac, am;
    int64_t e1 = ev->now_us - r->start_us;
    assumed_avg(r, e1 - ev->usage.interval_us, e1, &ac, &am);
    nd->tick_mu[0] += (double)ev->usage.cpu;
    nd->tick_mu[1] += (double)ev->usage.mem;
    nd->tick_alpha[0] += ac;
    nd->tick_alpha[1] += am;
}

static void fgm_on_event(struct hrm_policy *policy, const struct hrm_state *s,
                         const struct hrm_event *ev)
{
    struct fgm_priv *p = policy->priv;
    ensure(p, s);
    switch (ev->type) {
    case HRM_EV_TASK_USAGE:
        on_task_usage(p, s, ev);
        break;
    case HRM_EV_NODE_USAGE: {
        struct node *nd = &p->nodes[ev->node];
        nd->reported = true;
        nd->use_cpu = (double)ev->usage.cpu;
        nd->use_mem = (double)ev->usage.mem;
        nd->report_at = ev->now_us;
        nd->report_iv = ev->usage.interval_us;
        break;
    }
    case HRM_EV_TASK_STOP: {
        /* A predicted run that failed most likely met a memory shortfall
         * (incompressible: failure, not slowdown); its retry asks for its
         * request rather than risking the same estimate again. */
        struct run *failed = run_get(p, s, ev->task);
        if (ev->outcome == HRM_OUTCOME_FAILED && failed && failed->predicted)
            p->by_request[ev->task] = 1;
        /* The history learns from runs that completed; others teach nothing
         * about how long the program takes. */
        const struct hrm_task_state *ts = &s->tasks[ev->task];
        double speed = ev->node >= 0 ? s->cluster->nodes[ev->node].cpu_speed : 1.0;
        if (!p->est_borrowed)
            hrm_est_task_end(p->est, ev->task, ts->attempt, ev->outcome == HRM_OUTCOME_DONE,
                             &p->keys[ev->task], speed);
        run_drop(p, ev->task);
        break;
    }
    case HRM_EV_JOB_SUBMIT:
    case HRM_EV_TASK_START:
    case HRM_EV_JOB_END:
    case HRM_EV_NODE_DOWN:
    case HRM_EV_NODE_UP:
        break;
    }
}

/* ---- what a task is expected to do on a node ---- */

/* Expected input read time on node: the local disk if a replica is there,
 * else the slower of a replica's disk and the link. */
static int64_t input_us(const struct hrm_state *s, int32_t task, int32_t node)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    const struct hrm_cluster *c = s->cluster;
    double us = 0;
    for (int32_t b = 0; b < t->nblocks; b++) {
        const struct hrm_block *blk = &s->wl->blocks[t->block_first + b];
        bool local = false;
        double remote_bw = 0;
        for (int32_t r = 0; r < blk->nreplicas; r++) {
            int32_t src = blk->replicas[r];
            local |= src == node;
            double d = c->nodes[src].disk_bw > 0 ? c->nodes[src].disk_bw : c->net.disk_bw;
            remote_bw = fmax(remote_bw, fmin(d, c->net.rack_bw));
        }
        double bw = local ? (c->nodes[node].disk_bw > 0 ? c->nodes[node].disk_bw : c->net.disk_bw)
                          : remote_bw;
        if (bw > 0)
            us += (double)blk->size / bw * 1e6;
    }
    return (int64_t)ceil(us);
}

/* Whether a profile could run on node at all: one learned elsewhere (a
 * history from another cluster) may ask more than the node has, and would
 * then never be placed; such a task goes by its request instead. */
static bool fits_node(const struct hrm_est_profile *pr, const struct hrm_node *n, double headroom)
{
    for (int32_t k = 0; k < pr->nstages; k++)
        if ((double)pr->stage[k].cpu > (double)n->capacity.v[HRM_DIM_CPU] ||
            (double)pr->stage[k].mem * (1 + headroom) > (double)n->capacity.v[HRM_DIM_MEM])
            return false;
    return true;
}

/* The task's expected stages on node: a read stage (no cpu, the first stage's
 * memory: the process waits on its input), then the history's
 * stages or, when unpredictable, its request for its stated duration.
 * Returns the stage count; *predicted says which. */
static int32_t plan(struct fgm_priv *p, const struct hrm_state *s, int32_t task, int32_t node,
                    struct fgm_stage *st, bool *predicted)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    double speed = s->cluster->nodes[node].cpu_speed > 0 ? s->cluster->nodes[node].cpu_speed : 1;
    int32_t n = 0;
    int64_t read = input_us(s, task, node);
    if (read > 0)
        st[n++] = (struct fgm_stage){.dur_us = read};
    const struct hrm_est_profile *pr = NULL;
    /* Services and streams run until stopped: no history predicts them. */
    if (s->wl->jobs[t->job].kind == HRM_JOB_BATCH && !p->by_request[task])
        pr = hrm_est_lookup(p->est, &p->keys[task]);
    *predicted =
        pr && pr->nobs >= p->min_obs && fits_node(pr, &s->cluster->nodes[node], p->headroom);
    if (*predicted) {
        for (int32_t k = 0; k < pr->nstages; k++)
            st[n++] = (struct fgm_stage){
                .dur_us = (int64_t)ceil((double)pr->stage[k].duration_us / speed),
                .cpu = (double)pr->stage[k].cpu,
                /* Memory is incompressible: a shortfall fails the task, so
                 * the estimate gets headroom for run-to-run variation. */
                .mem = (double)pr->stage[k].mem * (1 + p->headroom)};
    } else {
        st[n++] = (struct fgm_stage){.dur_us = (int64_t)ceil((double)t->est_duration_us / speed),
                                     .cpu = (double)t->req.v[HRM_DIM_CPU],
                                     .mem = (double)t->req.v[HRM_DIM_MEM]};
    }
    /* While it reads, the process already holds its first stage's memory. */
    if (read > 0)
        st[0].mem = st[1].mem;
    return n;
}

static int64_t deadline_of(struct fgm_priv *p, const struct hrm_state *s, int32_t task,
                           int64_t start, const struct fgm_stage *st, int32_t nst)
{
    const struct hrm_job *j = &s->wl->jobs[s->wl->tasks[task].job];
    double total = 0;
    for (int32_t k = 0; k < nst; k++)
        total += (double)st[k].dur_us;
    int64_t d = start + (int64_t)(p->stretch * total);
    if (j->deadline_us > 0) {
        int64_t jd = s->jobs[s->wl->tasks[task].job].submit_us + j->deadline_us;
        if (jd < d)
            d = jd;
    }
    return d;
}

/* ---- the node's view this pass ---- */

/* Loads (running tasks' expected stages) of node into p->loads, with their
 * deadlines; returns the count and the tasks' current use (their last sample,
 * else what was assumed for now), for the foreign-load and idle estimates. */
static int32_t node_loads(struct fgm_priv *p, const struct hrm_state *s, int32_t node, int64_t now,
                          double *cur_cpu, double *cur_mem)
{
    size_t need = (size_t)s->nodes[node].nrunning + 1;
    if (need > p->cap_loads) {
        HRM_GROW(p->loads, p->cap_loads, need);
        p->deadlines = hrm_realloc(p->deadlines, p->cap_loads * sizeof(*p->deadlines));
    }
    /* First make sure every running task has a run: making one may move the
     * runs array, and the loads below point into it. */
    for (int32_t t = s->nodes[node].run_head; t >= 0; t = s->tasks[t].next) {
        if (run_get(p, s, t))
            continue;
        /* Started before FGM saw it (or by another policy): expected like an
         * unplaced task, from its real start. */
        struct run tmp = {.start_us = s->tasks[t].start_us,
                          .attempt = s->tasks[t].attempt,
                          .deadline_us = INT64_MAX};
        tmp.nstages = plan(p, s, t, node, tmp.st, &tmp.predicted);
        struct run *r = run_new(p, t);
        tmp.next_free = r->next_free;
        *r = tmp;
    }
    int32_t n = 0;
    *cur_cpu = *cur_mem = 0;
    for (int32_t t = s->nodes[node].run_head; t >= 0; t = s->tasks[t].next) {
        struct run *r = run_get(p, s, t);
        double c = r->cpu, m = r->mem;
        if (!r->sampled) {
            int64_t e = now - r->start_us;
            assumed_avg(r, e, e + 1, &c, &m);
        }
        *cur_cpu += c;
        *cur_mem += m;
        p->loads[n] =
            (struct fgm_load){.start_us = r->start_us, .nstages = r->nstages, .st = r->st};
        p->deadlines[n] = r->deadline_us;
        n++;
    }
    return n;
}

/* Builds node's timeline for this pass (once, and again after a start
 * there), with the foreign load of the node's last report taken to last;
 * returns false when the node is not schedulable (Alg. 1 line 1). */
static bool node_view(struct fgm_priv *p, const struct hrm_state *s, int32_t node, int64_t now,
                      int32_t *nloads)
{
    struct node *nd = &p->nodes[node];
    const struct hrm_res *cap = &s->cluster->nodes[node].capacity;
    double cc = (double)cap->v[HRM_DIM_CPU], cm = (double)cap->v[HRM_DIM_MEM];
    double cur_cpu, cur_mem, fc = 0, fm = 0;
    *nloads = node_loads(p, s, node, now, &cur_cpu, &cur_mem);
    /* A report older than three periods says nothing about now. */
    if (nd->reported && now - nd->report_at <= 3 * (nd->report_iv > 0 ? nd->report_iv : 1)) {
        fc = nd->use_cpu;
        fm = nd->use_mem;
    }
    if (nd->tl_pass != p->pass) {
        fgm_timeline_build(&nd->tl, now, cc, cm, fc, fm, p->loads, *nloads);
        nd->tl_pass = p->pass;
    }
    if (nd->mode == FGM_STOP || !s->nodes[node].up)
        return false;
    /* Idle now: capacity less foreign load and what the tasks use now. */
    return cc - fc - cur_cpu >= p->idle * cc && cm - fm - cur_mem >= p->idle * cm;
}

/* ---- decisions ---- */

static bool key_failed(const struct fgm_priv *p, const struct hrm_est_key *k)
{
    for (int32_t i = 0; i < p->nfailed; i++)
        if (p->failed[i].logic == k->logic && p->failed[i].input_class == k->input_class)
            return true;
    return false;
}

/* FGM matches cpu and memory; GPUs, disk and network go by request. */
static bool other_dims_fit(const struct hrm_state *s, int32_t task, int32_t node)
{
    const struct hrm_task *t = &s->wl->tasks[task];
    static const int dims[] = {HRM_DIM_GPU_MEM, HRM_DIM_DISK, HRM_DIM_NET};
    for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++)
        if (t->req.v[dims[i]] > s->nodes[node].free.v[dims[i]])
            return false;
    uint32_t mask;
    return t->req.v[HRM_DIM_GPU] == 0 || hrm_state_pick_gpus(s, task, node, &mask) == 0;
}

/* Tries task on node in the node's mode; with allow_compress false, fine
 * matching may not compress.  On success fills the plan and returns true. */
static bool try_node(struct fgm_priv *p, const struct hrm_state *s, int32_t task, int32_t node,
                     int64_t now, bool allow_compress, struct run *out)
{
    int32_t nloads;
    if (!other_dims_fit(s, task, node))
        return false;
    if (!node_view(p, s, node, now, &nloads))
        return false;
    struct node *nd = &p->nodes[node];
    bool predicted;
    out->nstages = plan(p, s, task, node, out->st, &predicted);
    out->predicted = predicted;
    const struct fgm_timeline *tl = &nd->tl;
    bool compressed = false, ok;
    if (!predicted || nd->mode == FGM_COARSE) {
        /* Unpredictable tasks get their request; a coarse node takes peaks. */
        ok = fgm_match_coarse(tl, now, out->st, out->nstages);
    } else {
        struct fgm_match_cfg mc = {.compress = allow_compress && nd->mode == FGM_FINE_COMPRESS,
                                   .p = p->p,
                                   .limitation = p->limitation,
                                   .max_ratio = p->max_ratio};
        ok = fgm_match_fine(tl, now, out->st, out->nstages, &mc, &compressed);
    }
    if (!ok)
        return false;
    out->deadline_us = deadline_of(p, s, task, now, out->st, out->nstages);
    /* checkQoS only matters where the node will compress. */
    if (compressed && !fgm_check_qos(tl, now, out->st, out->nstages, out->deadline_us, p->loads,
                                     p->deadlines, nloads))
        return false;
    return true;
}

/* Places task somewhere: first a node where it fits without compressing,
 * then one that may compress (compression only when necessary).  Returns the
 * node or -1, with the plan in *out. */
static int32_t place(struct fgm_priv *p, const struct hrm_state *s, int32_t task, int64_t now,
                     struct run *out)
{
    for (int pass = 0; pass < 2; pass++)
        for (int32_t n = 0; n < p->nnodes; n++)
            if (try_node(p, s, task, n, now, pass == 1, out))
                return n;
    return -1;
}

/* Alg. 3 lines 4-5: a stopped node whose tasks degrade (run past their
 * stretched expectation) gets resources back: its youngest task FGM placed
 * by prediction is preempted, at most once per conformity window. */
static int reclaim(struct fgm_priv *p, struct hrm_sched_ctx *ctx, int32_t node)
{
    const struct hrm_state *s = ctx->state;
    struct node *nd = &p->nodes[node];
    if (nd->mode != FGM_STOP || ctx->now_us - nd->last_reclaim < p->window_us)
        return 0;
    bool degraded = false;
    int32_t youngest = -1;
    int64_t ys = INT64_MIN;
    for (int32_t t = s->nodes[node].run_head; t >= 0; t = s->tasks[t].next) {
        struct run *r = run_get(p, s, t);
        if (!r)
            continue;
        degraded |= r->deadline_us != INT64_MAX && ctx->now_us > r->deadline_us;
        if (r->predicted && r->start_us > ys && hrm_ctx_may_preempt(s, t)) {
            ys = r->start_us;
            youngest = t;
        }
    }
    if (!degraded || youngest < 0)
        return 0;
    nd->last_reclaim = ctx->now_us;
    run_drop(p, youngest);
    return hrm_ctx_preempt(ctx, youngest);
}

/*
 * Alg. 1 over the whole cluster.  Every node's mode comes from its recent
 * conformity (Alg. 3).  The pending tasks are taken in DRF order (users by
 * dominant share of what they hold, as drf.c does); each goes to the first
 * node, in id order, where it matches: unpredictable tasks by request
 * against the least free over their stated duration, predicted ones stage by
 * stage (Alg. 2) in the node's mode, compression only where no node fits
 * without it, and checkQoS where a node would compress.  A placed task holds
 * its expected peak demand in the state (hrm_ctx_start_charged), so fairness
 * counts what FGM allocated.  A user whose next task fits nowhere is passed
 * over for the rest of the pass, as in drf.c.
 */
static int fgm_decide(struct hrm_policy *policy, struct hrm_sched_ctx *ctx)
{
    struct fgm_priv *p = policy->priv;
    const struct hrm_state *s = ctx->state;
    int64_t now = ctx->now_us;
    ensure(p, s);
    p->pass++;
    p->nfailed = 0;
    for (int32_t n = 0; n < p->nnodes; n++) {
        if (p->nodes[n].tick_at < now) {
            close_tick(p, s, n);
            p->nodes[n].tick_at = now;
        }
        roll_windows(p, n, now);
        int rc = reclaim(p, ctx, n);
        if (rc)
            return rc;
    }
    if (s->active_head < 0)
        return 0;
    policy_users_by_share(&p->groups, &p->heap, s);
    struct policy_heap_item it;
    struct run plan_;
    while (policy_heap_pop(&p->heap, &it)) {
        int32_t task = policy_groups_next_task(&p->groups, s, it.id);
        if (task < 0)
            continue;
        /* Tasks alike (same program and input) that fit nowhere this pass
         * will not fit later in it: resources only shrink during a pass. */
        if (key_failed(p, &p->keys[task]))
            continue;
        memset(&plan_, 0, sizeof(plan_));
        int32_t node = place(p, s, task, now, &plan_);
        if (node < 0) {
            if (p->nfailed < FAILED_KEYS)
                p->failed[p->nfailed++] = p->keys[task];
            continue;
        }
        struct hrm_res charge = s->wl->tasks[task].req;
        charge.v[HRM_DIM_CPU] = charge.v[HRM_DIM_MEM] = 0;
        for (int32_t k = 0; k < plan_.nstages; k++) {
            charge.v[HRM_DIM_CPU] = (int64_t)fmax((double)charge.v[HRM_DIM_CPU], plan_.st[k].cpu);
            charge.v[HRM_DIM_MEM] = (int64_t)fmax((double)charge.v[HRM_DIM_MEM], plan_.st[k].mem);
        }
        int rc = hrm_ctx_start_charged(ctx, task, node, HRM_GPUS_ANY, &charge);
        if (rc)
            return rc;
        struct run *r = run_new(p, task);
        *r = plan_;
        r->start_us = now;
        r->attempt = s->tasks[task].attempt;
        r->next_free = -1;
        p->nodes[node].tl_pass = 0; /* its timeline changed */
        policy_heap_push(&p->heap, hrm_state_user_share(s, it.id), it.id, it.id);
    }
    return 0;
}

/* ---- what the daemons ask (hrm/fgm.h) ---- */

static struct fgm_priv *fgm_of(const struct hrm_policy *policy)
{
    return policy && policy->ops == &hrm_policy_fgm ? policy->priv : NULL;
}

struct hrm_est *hrm_fgm_take_estimator(struct hrm_policy *policy)
{
    struct fgm_priv *p = fgm_of(policy);
    if (!p)
        return NULL;
    p->est_borrowed = true;
    return p->est;
}

void hrm_fgm_lend_estimator(struct hrm_policy *policy, struct hrm_est *est)
{
    struct fgm_priv *p = fgm_of(policy);
    if (!p || !est)
        return;
    if (!p->est_borrowed)
        hrm_est_free(p->est);
    p->est = est;
    p->est_borrowed = true;
}

bool hrm_fgm_by_request(const struct hrm_policy *policy, int32_t task)
{
    const struct fgm_priv *p = fgm_of(policy);
    return p && p->by_request && task >= 0 && task < p->ntasks && p->by_request[task];
}

void hrm_fgm_set_by_request(struct hrm_policy *policy, const struct hrm_state *s, int32_t task)
{
    struct fgm_priv *p = fgm_of(policy);
    if (!p)
        return;
    ensure(p, s);
    if (task >= 0 && task < p->ntasks)
        p->by_request[task] = 1;
}

bool hrm_fgm_node_mode(const struct hrm_policy *policy, int32_t node, const char **mode,
                       double *conformity)
{
    const struct fgm_priv *p = fgm_of(policy);
    if (!p || node < 0 || node >= p->nnodes)
        return false;
    *mode = fgm_mode_name(p->nodes[node].mode);
    *conformity = p->nodes[node].conformity;
    return true;
}

const struct hrm_policy_ops hrm_policy_fgm = {
    .name = "fgm",
    .summary = "FGM: DRF order, stage-by-stage matching on predicted demand, cpu compression",
    .init = fgm_init,
    .fini = fgm_fini,
    .on_event = fgm_on_event,
    .decide = fgm_decide,
};
