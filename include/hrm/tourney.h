/* A tournament over n entrants kept up to date one entrant at a time: the winner in O(1), a
 * change to one entrant replayed in O(log n).  The placement memo of the hrm policy and the
 * master's estimate walk both find where a task starts first with one. */
#ifndef HRM_TOURNEY_H
#define HRM_TOURNEY_H

#include <stdbool.h>
#include <stdint.h>

/* Whether entrant b beats entrant a, where a comes first (a keeps ties).  NULL: the first one
 * present wins. */
typedef bool (*hrm_tourney_beats)(void *ctx, int32_t b, int32_t a);

struct hrm_tourney {
    int32_t size; /* a power of two >= n */
    /* Slot 1 the root, slots size..2 size-1 the entrants (i - size); per slot, the winner of
     * the entrants below it, or -1 when none of them is present. */
    int32_t *win;
};

void hrm_tourney_init(struct hrm_tourney *t, int32_t n); /* no entrant present */
void hrm_tourney_fini(struct hrm_tourney *t);

/* Entrant i present or not, its path to the root not replayed yet (then hrm_tourney_play_all). */
static inline void hrm_tourney_enter(struct hrm_tourney *t, int32_t i, bool present)
{
    t->win[t->size + i] = present ? i : -1;
}

/* The winner below slot, from its two children's. */
static inline void hrm_tourney_play(struct hrm_tourney *t, int32_t slot, hrm_tourney_beats beats,
                                    void *ctx)
{
    int32_t a = t->win[2 * slot], b = t->win[2 * slot + 1];
    t->win[slot] = a < 0 ? b : b < 0 ? a : beats && beats(ctx, b, a) ? b : a;
}

/* Every slot played again, from the entrants up. */
static inline void hrm_tourney_play_all(struct hrm_tourney *t, hrm_tourney_beats beats, void *ctx)
{
    for (int32_t slot = t->size - 1; slot >= 1; slot--)
        hrm_tourney_play(t, slot, beats, ctx);
}

/* Entrant i present or not, and its path to the root replayed. */
static inline void hrm_tourney_update(struct hrm_tourney *t, int32_t i, bool present,
                                      hrm_tourney_beats beats, void *ctx)
{
    hrm_tourney_enter(t, i, present);
    for (int32_t slot = (t->size + i) / 2; slot >= 1; slot /= 2)
        hrm_tourney_play(t, slot, beats, ctx);
}

/* The winner of all, or -1 when no entrant is present. */
static inline int32_t hrm_tourney_winner(const struct hrm_tourney *t)
{
    return t->win[1];
}

#endif
