/* The tournament shared by the hrm policy's placement memo and the master's estimate walk: after
 * any sequence of entrants' changes, its winner is the scan's (the first of the least key, or
 * the first present when nothing beats). */
#include <criterion/criterion.h>

#include "hrm/rng.h"
#include "hrm/tourney.h"

#define N 37

static bool less_key(void *ctx, int32_t b, int32_t a)
{
    const int64_t *key = ctx;
    return key[b] < key[a];
}

static int32_t scan(const bool *present, const int64_t *key, bool by_key)
{
    int32_t best = -1;
    for (int32_t i = 0; i < N; i++)
        if (present[i] && (best < 0 || (by_key && key[i] < key[best])))
            best = i;
    return best;
}

Test(jobsp_tourney, winner_is_the_scans_after_each_change)
{
    struct hrm_tourney by_key, first;
    hrm_tourney_init(&by_key, N);
    hrm_tourney_init(&first, N);
    cr_assert_eq(hrm_tourney_winner(&by_key), -1);
    struct hrm_rng r;
    hrm_rng_seed(&r, 3);
    bool present[N];
    int64_t key[N];
    for (int32_t i = 0; i < N; i++) {
        present[i] = hrm_rng_below(&r, 3) != 0;
        key[i] = (int64_t)hrm_rng_below(&r, 5); /* ties on purpose */
        hrm_tourney_enter(&by_key, i, present[i]);
        hrm_tourney_enter(&first, i, present[i]);
    }
    hrm_tourney_play_all(&by_key, less_key, key);
    hrm_tourney_play_all(&first, NULL, NULL);
    for (int step = 0; step < 2000; step++) {
        cr_assert_eq(hrm_tourney_winner(&by_key), scan(present, key, true), "step %d", step);
        cr_assert_eq(hrm_tourney_winner(&first), scan(present, key, false), "step %d", step);
        int32_t i = (int32_t)hrm_rng_below(&r, N);
        present[i] = hrm_rng_below(&r, 4) != 0;
        key[i] = (int64_t)hrm_rng_below(&r, 5);
        hrm_tourney_update(&by_key, i, present[i], less_key, key);
        hrm_tourney_update(&first, i, present[i], NULL, NULL);
    }
    hrm_tourney_fini(&by_key);
    hrm_tourney_fini(&first);
}
