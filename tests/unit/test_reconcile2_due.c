/* A fleet's due times (fleet_due): the earliest agent found without looking at the others, whatever order the changes come in. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "daemon/fleet_due.h"

static int64_t brute_first(const int64_t *at, int32_t n, int32_t *agent)
{
    int64_t best = INT64_MAX;
    *agent = -1;
    for (int32_t i = 0; i < n; i++)
        if (at[i] < best) {
            best = at[i];
            *agent = i;
        }
    return best;
}

Test(reconcile2_due, starts_with_nothing_due)
{
    struct fleet_due d;
    fleet_due_init(&d, 5);
    int32_t a;
    cr_assert_eq(fleet_due_first(&d, &a), INT64_MAX);
    cr_assert(a >= 0 && a < 5);
    fleet_due_fini(&d);
    fleet_due_init(&d, 0);
    cr_assert_eq(fleet_due_first(&d, &a), INT64_MAX);
    cr_assert_eq(a, -1);
    fleet_due_fini(&d);
}

Test(reconcile2_due, earliest_after_every_change)
{
    enum { N = 257 };
    int64_t at[N];
    struct fleet_due d;
    fleet_due_init(&d, N);
    for (int32_t i = 0; i < N; i++)
        at[i] = INT64_MAX;
    uint64_t x = 88172645463325252ull; /* xorshift: the same sequence every run */
    for (int step = 0; step < 20000; step++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int32_t i = (int32_t)(x % N);
        /* Later and earlier moves, ties, and agents leaving (INT64_MAX). */
        int64_t t = (x >> 20) % 7 == 0 ? INT64_MAX : (int64_t)((x >> 24) % 1000);
        at[i] = t;
        fleet_due_set(&d, i, t);
        int32_t got, want;
        int64_t first = fleet_due_first(&d, &got), expect = brute_first(at, N, &want);
        cr_assert_eq(first, expect, "step %d: %lld, not %lld", step, (long long)first,
                     (long long)expect);
        if (expect != INT64_MAX)
            cr_assert_eq(at[got], expect, "step %d: agent %d is not the earliest", step, got);
    }
    /* Popping in order, as the fleet's loop does: ascending, each agent once. */
    int64_t last = -1;
    for (int32_t k = 0; k < N; k++) {
        int32_t a;
        int64_t t = fleet_due_first(&d, &a);
        if (t == INT64_MAX)
            break;
        cr_assert_geq(t, last);
        last = t;
        fleet_due_set(&d, a, INT64_MAX);
    }
    int32_t a;
    cr_assert_eq(fleet_due_first(&d, &a), INT64_MAX);
    fleet_due_fini(&d);
}
