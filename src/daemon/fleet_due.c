/* When each simulated agent of a fleet is next due: an indexed binary min-heap. */
#include "fleet_due.h"

#include "hrm/alloc.h"

void fleet_due_init(struct fleet_due *d, int32_t n)
{
    size_t k = n > 0 ? (size_t)n : 1;
    d->n = n;
    d->heap = hrm_calloc(k, sizeof(*d->heap));
    d->pos = hrm_calloc(k, sizeof(*d->pos));
    d->at = hrm_calloc(k, sizeof(*d->at));
    for (int32_t i = 0; i < n; i++) { /* all equal: any order is a heap */
        d->heap[i] = d->pos[i] = i;
        d->at[i] = INT64_MAX;
    }
}

void fleet_due_fini(struct fleet_due *d)
{
    hrm_free(d->heap);
    hrm_free(d->pos);
    hrm_free(d->at);
    *d = (struct fleet_due){0};
}

static void place(struct fleet_due *d, int32_t k, int32_t agent)
{
    d->heap[k] = agent;
    d->pos[agent] = k;
}

void fleet_due_set(struct fleet_due *d, int32_t i, int64_t t)
{
    d->at[i] = t;
    int32_t k = d->pos[i];
    while (k > 0 && d->at[d->heap[(k - 1) / 2]] > t) { /* earlier: towards the root */
        place(d, k, d->heap[(k - 1) / 2]);
        k = (k - 1) / 2;
    }
    for (;;) { /* later: towards the leaves */
        int32_t c = 2 * k + 1;
        if (c >= d->n)
            break;
        if (c + 1 < d->n && d->at[d->heap[c + 1]] < d->at[d->heap[c]])
            c++;
        if (d->at[d->heap[c]] >= t)
            break;
        place(d, k, d->heap[c]);
        k = c;
    }
    place(d, k, i);
}

int64_t fleet_due_first(const struct fleet_due *d, int32_t *agent)
{
    *agent = d->n > 0 ? d->heap[0] : -1;
    return d->n > 0 ? d->at[d->heap[0]] : INT64_MAX;
}
