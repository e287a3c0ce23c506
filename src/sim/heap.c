/* Radix heap of simulator events: O(1) push, amortised O(log T) pop, FIFO among equal times. */
#include <string.h>

#include "hrm/alloc.h"
#include "heap.h"

static inline int bucket_of(int64_t t, int64_t last)
{
    uint64_t x = (uint64_t)t ^ (uint64_t)last;
    return x == 0 ? 0 : 64 - __builtin_clzll(x);
}

static inline void append(struct sim_heap_bucket *b, const struct sim_event *ev)
{
    if (b->n == b->cap)
        HRM_GROW(b->items, b->cap, b->n + 1);
    b->items[b->n++] = *ev;
}

void sim_heap_push(struct sim_heap *h, const struct sim_event *ev)
{
    append(&h->b[bucket_of(ev->t, h->last)], ev);
    h->n++;
}

/* Bucket 0 is empty: move the lowest non-empty bucket down around its minimum. */
static void refill(struct sim_heap *h)
{
    int i = 1;
    while (h->b[i].n == 0)
        i++;
    struct sim_heap_bucket *src = &h->b[i];
    int64_t min = src->items[0].t;
    for (size_t k = 1; k < src->n; k++)
        if (src->items[k].t < min)
            min = src->items[k].t;
    h->last = min;
    /* Every item lands in a bucket below i, in its current order. */
    for (size_t k = 0; k < src->n; k++)
        append(&h->b[bucket_of(src->items[k].t, min)], &src->items[k]);
    src->n = 0;
}

void sim_heap_pop(struct sim_heap *h, struct sim_event *out)
{
    struct sim_heap_bucket *b0 = &h->b[0];
    if (b0->head == b0->n) {
        b0->head = b0->n = 0;
        refill(h);
    }
    *out = b0->items[b0->head++];
    h->n--;
}

void sim_heap_fini(struct sim_heap *h)
{
    for (int i = 0; i < SIM_HEAP_BUCKETS; i++)
        hrm_free(h->b[i].items);
    memset(h, 0, sizeof(*h));
}
