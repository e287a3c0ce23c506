/* A tournament over n entrants (include/hrm/tourney.h): its slots. */
#include "hrm/tourney.h"

#include "hrm/alloc.h"

void hrm_tourney_init(struct hrm_tourney *t, int32_t n)
{
    for (t->size = 1; t->size < n; t->size *= 2)
        ;
    t->win = hrm_alloc(2 * (size_t)t->size * sizeof(*t->win));
    for (int32_t i = 0; i < 2 * t->size; i++)
        t->win[i] = -1;
}

void hrm_tourney_fini(struct hrm_tourney *t)
{
    hrm_free(t->win);
    *t = (struct hrm_tourney){0};
}
