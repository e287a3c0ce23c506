/* FGM arithmetic: timelines, Alg. 2, formulas (7) and (15), checkQoS, Def. 4, Alg. 3. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "policy/fgm_private.h"

/* Demands are compared with this slack (milli-cores, bytes): the products of
 * rates and shares carry rounding that must not turn an exact fit into a miss. */
#define SLACK 1e-6

/* ---- timelines ---- */

struct tl_event {
    int64_t t;
    double cpu, mem; /* change of the running tasks' demand */
};

static int cmp_event(const void *a, const void *b)
{
    const struct tl_event *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

void fgm_timeline_build(struct fgm_timeline *tl, int64_t now, double cap_cpu, double cap_mem,
                        double foreign_cpu, double foreign_mem, const struct fgm_load *loads,
                        int32_t nloads)
{
    int32_t total = 0;
    for (int32_t i = 0; i < nloads; i++)
        total += loads[i].nstages;
    struct tl_event *ev = hrm_alloc((size_t)(2 * total + 1) * sizeof(*ev));
    int32_t nev = 0;
    for (int32_t i = 0; i < nloads; i++) {
        int64_t a = loads[i].start_us;
        for (int32_t k = 0; k < loads[i].nstages; k++) {
            const struct fgm_stage *s = &loads[i].st[k];
            bool last = k == loads[i].nstages - 1;
            /* The last stage lasts until the task really ends: after its
             * expected end nothing says when that is. */
            int64_t b = last ? INT64_MAX : a + s->dur_us;
            if (b > now) {
                ev[nev++] = (struct tl_event){a > now ? a : now, s->cpu, s->mem};
                if (!last)
                    ev[nev++] = (struct tl_event){b, -s->cpu, -s->mem};
            }
            a = b;
            if (last || a == INT64_MAX)
                break;
        }
    }
    qsort(ev, (size_t)nev, sizeof(*ev), cmp_event);
    tl->n = 0;
    tl->cap_cpu = cap_cpu;
    tl->cap_mem = cap_mem;
    double cpu = 0, mem = 0;
    int64_t t = now;
    int32_t i = 0;
    for (;;) {
        while (i < nev && ev[i].t <= t) {
            cpu += ev[i].cpu;
            mem += ev[i].mem;
            i++;
        }
        int64_t end = i < nev ? ev[i].t : INT64_MAX;
        if (tl->n == tl->cap) {
            tl->cap = tl->cap ? 2 * tl->cap : 16;
            tl->seg = hrm_realloc(tl->seg, (size_t)tl->cap * sizeof(*tl->seg));
        }
        tl->seg[tl->n++] = (struct fgm_seg){.t0 = t,
                                            .t1 = end,
                                            .cpu_free = cap_cpu - foreign_cpu - cpu,
                                            .mem_free = cap_mem - foreign_mem - mem,
                                            .cpu_work = cpu};
        if (end == INT64_MAX)
            break;
        t = end;
    }
    hrm_free(ev);
}

void fgm_timeline_fini(struct fgm_timeline *tl)
{
    hrm_free(tl->seg);
    memset(tl, 0, sizeof(*tl));
}

/* ---- formulas ---- */

double fgm_max_compression(double w_run, double w_new, double p, double limitation, double cap)
{
    double total = w_run + w_new;
    double x = total > 0 ? (w_new - p * w_run) / total : 0;
    return fmin(fmax(limitation, x), cap);
}

double fgm_compressed_duration(const double *d, const double *rc, int32_t n)
{
    double sum = 0;
    for (int32_t i = 0; i < n; i++)
        sum += d[i] / (1 - rc[i]);
    return sum;
}

/* ---- matching ---- */

static int64_t add_sat(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

bool fgm_match_fine(const struct fgm_timeline *tl, int64_t now, const struct fgm_stage *st,
                    int32_t nst, const struct fgm_match_cfg *cfg, bool *compressed)
{
    *compressed = false;
    int32_t k = 0; /* the first segment that may overlap the current stage */
    int64_t a = now;
    for (int32_t s = 0; s < nst; s++) {
        int64_t b = add_sat(a, st[s].dur_us);
        if (b <= a)
            continue;
        while (k < tl->n && tl->seg[k].t1 <= a)
            k++;
        for (int32_t j = k; j < tl->n && tl->seg[j].t0 < b; j++) {
            const struct fgm_seg *g = &tl->seg[j];
            if (g->mem_free + SLACK < st[s].mem)
                return false; /* memory is incompressible */
            if (g->cpu_free + SLACK >= st[s].cpu)
                continue;
            if (!cfg->compress)
                return false;
            /* Both works are rates times the same overlap: it cancels. */
            double rc = fgm_max_compression(g->cpu_work, st[s].cpu, cfg->p, cfg->limitation,
                                            cfg->max_ratio);
            if (g->cpu_free + rc * tl->cap_cpu + SLACK < st[s].cpu)
                return false;
            *compressed = true;
        }
        a = b;
    }
    return true;
}

bool fgm_match_coarse(const struct fgm_timeline *tl, int64_t now, const struct fgm_stage *st,
                      int32_t nst)
{
    double cpu = 0, mem = 0;
    int64_t total = 0;
    for (int32_t s = 0; s < nst; s++) {
        cpu = fmax(cpu, st[s].cpu);
        mem = fmax(mem, st[s].mem);
        total = add_sat(total, st[s].dur_us);
    }
    int64_t end = add_sat(now, total > 0 ? total : 1);
    for (int32_t j = 0; j < tl->n && tl->seg[j].t0 < end; j++) {
        if (tl->seg[j].t1 <= now)
            continue;
        if (tl->seg[j].cpu_free + SLACK < cpu || tl->seg[j].mem_free + SLACK < mem)
            return false;
    }
    return true;
}

/* The candidate's cpu demand at time t (its stages laid from now). */
static double cand_cpu_at(const struct fgm_stage *cand, int32_t ncand, int64_t now, int64_t t,
                          int64_t *until)
{
    int64_t a = now;
    for (int32_t s = 0; s < ncand; s++) {
        int64_t b = add_sat(a, cand[s].dur_us);
        if (t >= a && t < b) {
            *until = b;
            return cand[s].cpu;
        }
        a = b;
    }
    *until = INT64_MAX;
    return 0;
}

/* Worst compression ratio over [a, b) with the candidate added. */
static double ratio_over(const struct fgm_timeline *tl, int64_t now, int64_t a, int64_t b,
                         const struct fgm_stage *cand, int32_t ncand)
{
    double worst = 0;
    for (int32_t j = 0; j < tl->n && tl->seg[j].t0 < b; j++) {
        const struct fgm_seg *g = &tl->seg[j];
        if (g->t1 <= a)
            continue;
        int64_t t = g->t0 > a ? g->t0 : a, end = g->t1 < b ? g->t1 : b;
        while (t < end) {
            int64_t until;
            double add = cand_cpu_at(cand, ncand, now, t, &until);
            double demand = tl->cap_cpu - g->cpu_free + add;
            if (demand > tl->cap_cpu && demand > 0)
                worst = fmax(worst, 1 - tl->cap_cpu / demand);
            t = until < end ? until : end;
        }
    }
    return worst < 0.999 ? worst : 0.999;
}

/* Expected end of stages st (the first starting at start) if each runs at the
 * worst ratio of its windows, per formula (15). */
static double finish_time(const struct fgm_timeline *tl, int64_t now, int64_t start,
                          const struct fgm_stage *st, int32_t nst, const struct fgm_stage *cand,
                          int32_t ncand)
{
    double end = (double)now;
    int64_t a = start;
    for (int32_t s = 0; s < nst; s++) {
        int64_t b = add_sat(a, st[s].dur_us);
        if (b > now) {
            int64_t from = a > now ? a : now;
            double d = (double)(b - from), rc = ratio_over(tl, now, from, b, cand, ncand);
            end += fgm_compressed_duration(&d, &rc, 1);
        }
        a = b;
    }
    return end;
}

bool fgm_check_qos(const struct fgm_timeline *tl, int64_t now, const struct fgm_stage *cand,
                   int32_t ncand, int64_t cand_deadline, const struct fgm_load *loads,
                   const int64_t *deadlines, int32_t nloads)
{
    if (cand_deadline != INT64_MAX &&
        finish_time(tl, now, now, cand, ncand, cand, ncand) > (double)cand_deadline)
        return false;
    for (int32_t i = 0; i < nloads; i++) {
        if (deadlines[i] == INT64_MAX)
            continue;
        double end =
            finish_time(tl, now, loads[i].start_us, loads[i].st, loads[i].nstages, cand, ncand);
        if (end > (double)deadlines[i])
            return false;
    }
    return true;
}

/* ---- conformity and policy adjustment ---- */

double fgm_conformity(const double *mu, const double *alpha, const double *t, int32_t n,
                      double idle, double th)
{
    double T = 0, mu_bar = 0, alpha_bar = 0, sq = 0;
    for (int32_t i = 0; i < n; i++) {
        T += t[i];
        mu_bar += mu[i] * t[i];
        alpha_bar += alpha[i] * t[i];
        sq += (mu[i] - alpha[i]) * (mu[i] - alpha[i]) * t[i];
    }
    if (T <= 0 || mu_bar <= alpha_bar || idle >= th)
        return 0;
    return sq / T;
}

enum fgm_mode fgm_adjust(double conformity, const struct fgm_thresholds *th)
{
    if (conformity > th->sa)
        return FGM_STOP;
    if (conformity > th->cg)
        return FGM_COARSE;
    if (conformity > th->fg)
        return FGM_FINE;
    return FGM_FINE_COMPRESS;
}

const char *fgm_mode_name(enum fgm_mode m)
{
    static const char *const names[] = {"fine-compress", "fine", "coarse", "stop"};
    return (unsigned)m < 4 ? names[m] : "?";
}
