/* Greedy multi-way assignment (DHRM Alg. 1): jobs in order, queues by wait. */
#include "hrm/dsched.h"

/* Stable merge sort of idx[0..n) by key(idx) using tmp[0..n). */
static void sort_idx(int32_t *idx, int32_t *tmp, size_t n, const void *base, size_t stride,
                     size_t key_off)
{
    if (n < 2)
        return;
#define KEY(i) (*(const int64_t *)((const char *)base + (size_t)(i)*stride + key_off))
    /* insertion sort for short runs keeps the common per-task case (2 slots) cheap */
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            int32_t v = idx[i];
            size_t j = i;
            while (j > 0 && KEY(idx[j - 1]) > KEY(v)) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = v;
        }
        return;
    }
    size_t h = n / 2;
    sort_idx(idx, tmp, h, base, stride, key_off);
    sort_idx(idx + h, tmp, n - h, base, stride, key_off);
    size_t a = 0, b = h, k = 0;
    while (a < h && b < n)
        tmp[k++] = KEY(idx[b]) < KEY(idx[a]) ? idx[b++] : idx[a++];
    while (a < h)
        tmp[k++] = idx[a++];
    while (b < n)
        tmp[k++] = idx[b++];
    for (size_t i = 0; i < n; i++)
        idx[i] = tmp[i];
#undef KEY
}

static bool fits(const struct hrm_gs_task *t, const struct hrm_gs_slot *s, int64_t max_key)
{
    return t->cpu <= s->cpu && t->mem <= s->mem && (max_key < 0 || s->key <= max_key);
}

static bool preferred(const struct hrm_gs_task *t, int32_t node)
{
    for (int32_t i = 0; i < t->nprefs; i++)
        if (t->prefs[i] == node)
            return true;
    return false;
}

size_t hrm_gs_assign(const struct hrm_gs_task *tasks, size_t ntasks,
                     const struct hrm_gs_slot *slots, size_t nslots, int64_t max_key, int32_t *out,
                     int32_t *scratch)
{
    int32_t *torder = scratch, *sorder = scratch + ntasks, *tmp = sorder + nslots;
    for (size_t i = 0; i < ntasks; i++) {
        torder[i] = (int32_t)i;
        out[i] = -1;
    }
    for (size_t i = 0; i < nslots; i++)
        sorder[i] = (int32_t)i;
    sort_idx(torder, tmp, ntasks, tasks, sizeof(*tasks), offsetof(struct hrm_gs_task, order));
    sort_idx(sorder, tmp, nslots, slots, sizeof(*slots), offsetof(struct hrm_gs_slot, key));
    /* A used slot's entry in sorder becomes -1; first skips the used prefix so
     * uniform tasks cost O(tasks + slots) in all. */
    size_t first = 0, assigned = 0;
    for (size_t k = 0; k < ntasks; k++) {
        const struct hrm_gs_task *t = &tasks[torder[k]];
        while (first < nslots && sorder[first] < 0)
            first++;
        size_t pick = nslots;
        if (t->nprefs > 0) {
            for (size_t j = first; j < nslots; j++) {
                int32_t s = sorder[j];
                if (s >= 0 && fits(t, &slots[s], max_key) && preferred(t, slots[s].node)) {
                    pick = j;
                    break;
                }
            }
        }
        for (size_t j = first; pick == nslots && j < nslots; j++) {
            int32_t s = sorder[j];
            if (s >= 0 && fits(t, &slots[s], max_key))
                pick = j;
            else if (s >= 0 && max_key >= 0 && slots[s].key > max_key)
                break; /* sorted: nothing further is allowed either */
        }
        if (pick == nslots)
            continue;
        out[torder[k]] = sorder[pick];
        sorder[pick] = -1;
        assigned++;
    }
    return assigned;
}
