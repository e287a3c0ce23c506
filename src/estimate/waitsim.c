/* P0 `simulaterun`: a unit's queue simulated forward until a new task could start. */
#include <stdbool.h>

#include "hrm/alloc.h"
#include "hrm/waitsim.h"

void hrm_wait_table_push(struct hrm_wait_table *t, const struct hrm_wait_row *row)
{
    HRM_GROW(t->rows, t->cap, t->n + 1);
    t->rows[t->n++] = *row;
}

void hrm_wait_table_fini(struct hrm_wait_table *t)
{
    hrm_free(t->rows);
    t->rows = NULL;
    t->n = t->cap = 0;
}

/* What the simulated unit has free right now. */
struct sim_unit {
    int64_t vcore, gmem;
    int32_t stacked;
    int32_t share_used; /* thousandths given by the rows that give a share */
};

static bool row_fits(const struct hrm_wait_cap *cap, const struct sim_unit *u,
                     const struct hrm_wait_row *r)
{
    if (r->vcore > u->vcore || r->gmem > u->gmem)
        return false;
    if (r->gpu && r->milli > 0 && u->share_used + r->milli > 1000)
        return false;
    return !(r->gpu && cap->max_stack > 0 && u->stacked >= cap->max_stack);
}

static bool row_fits_empty(const struct hrm_wait_cap *cap, const struct hrm_wait_row *r)
{
    struct sim_unit empty = {cap->vcore, cap->gmem, 0, 0};
    return row_fits(cap, &empty, r);
}

static void hold(struct sim_unit *u, const struct hrm_wait_row *r, int sign)
{
    u->vcore -= sign * r->vcore;
    u->gmem -= sign * r->gmem;
    u->stacked += r->gpu ? sign : 0;
    u->share_used += r->gpu ? sign * r->milli : 0;
}

int hrm_waitsim_run(const struct hrm_wait_cap *cap, const struct hrm_wait_row *rows, size_t n,
                    const struct hrm_wait_row *task, int64_t *wait_us)
{
    *wait_us = INT64_MAX;
    /* A row that cannot fit even an empty unit would block the queue forever. */
    if (!row_fits_empty(cap, task))
        return -HRM_ENOFIT;
    for (size_t i = 0; i < n; i++)
        if (rows[i].status == HRM_WAIT_QUEUED && !row_fits_empty(cap, &rows[i]))
            return -HRM_ENOFIT;
    /* ends[k]: end time of the k-th running row of the simulation; each
     * row runs at most once, plus the task itself. */
    int64_t *ends = hrm_alloc((n + 1) * sizeof(*ends));
    const struct hrm_wait_row **who = hrm_alloc((n + 1) * sizeof(*who));
    size_t nrun = 0;
    struct sim_unit u = {cap->vcore, cap->gmem, 0, 0};
    for (size_t i = 0; i < n; i++) {
        if (rows[i].status != HRM_WAIT_RUNNING)
            continue;
        hold(&u, &rows[i], +1);
        ends[nrun] = rows[i].time_us > 0 ? rows[i].time_us : 0;
        who[nrun++] = &rows[i];
    }
    size_t head = 0; /* next queued row (index into rows); n = the task's turn */
    int64_t now = 0;
    int rc = 0;
    for (;;) {
        while (head < n && rows[head].status != HRM_WAIT_QUEUED)
            head++;
        const struct hrm_wait_row *r = head < n ? &rows[head] : task;
        if (row_fits(cap, &u, r)) {
            if (r == task) {
                *wait_us = now;
                break;
            }
            hold(&u, r, +1);
            ends[nrun] = now + (r->time_us > 0 ? r->time_us : 0);
            who[nrun++] = r;
            head++;
            continue;
        }
        if (nrun == 0) { /* cannot happen: every row fits an empty unit */
            rc = -HRM_ENOFIT;
            break;
        }
        /* Jump to the next end and release every row ending then. */
        int64_t next = INT64_MAX;
        for (size_t k = 0; k < nrun; k++)
            if (ends[k] < next)
                next = ends[k];
        now = next;
        for (size_t k = 0; k < nrun;) {
            if (ends[k] == next) {
                hold(&u, who[k], -1);
                ends[k] = ends[--nrun];
                who[k] = who[nrun];
            } else {
                k++;
            }
        }
    }
    hrm_free(ends);
    hrm_free(who);
    return rc;
}
