/* A recording hrm_env for the distributed roles' unit tests. */
#ifndef HRM_TEST_DHRM_ENV_H
#define HRM_TEST_DHRM_ENV_H

#include <criterion/criterion.h>
#include <string.h>

#include "hrm/env.h"

#define FENV_MAX 4096

struct fenv_sent {
    hrm_addr to;
    struct hrm_msg m;
};

struct fenv {
    struct hrm_env env; /* first: the callbacks cast back */
    int64_t now;
    struct fenv_sent sent[FENV_MAX];
    int nsent;
    int64_t timer_at[64];
    uint64_t timer_cookie[64];
    int ntimers;
};

static inline int64_t fenv_now(struct hrm_env *e)
{
    return ((struct fenv *)e)->now;
}

static inline void fenv_send(struct hrm_env *e, hrm_addr to, const struct hrm_msg *m)
{
    struct fenv *f = (struct fenv *)e;
    cr_assert_lt(f->nsent, FENV_MAX);
    f->sent[f->nsent].to = to;
    f->sent[f->nsent].m = *m;
    f->nsent++;
}

static inline void fenv_timer(struct hrm_env *e, int64_t at, uint64_t cookie)
{
    struct fenv *f = (struct fenv *)e;
    cr_assert_lt(f->ntimers, 64);
    f->timer_at[f->ntimers] = at;
    f->timer_cookie[f->ntimers] = cookie;
    f->ntimers++;
}

static inline void fenv_init(struct fenv *f)
{
    memset(f, 0, sizeof(*f));
    f->env.now_us = fenv_now;
    f->env.send = fenv_send;
    f->env.timer = fenv_timer;
    f->env.ctx = f;
}

static inline void fenv_clear(struct fenv *f)
{
    f->nsent = 0;
    f->ntimers = 0;
}

/* The i-th message of a type sent since the last clear, or NULL. */
static inline const struct fenv_sent *fenv_find(const struct fenv *f, int type, int i)
{
    for (int k = 0; k < f->nsent; k++)
        if (f->sent[k].m.type == type && i-- == 0)
            return &f->sent[k];
    return NULL;
}

static inline int fenv_count(const struct fenv *f, int type)
{
    int n = 0;
    for (int k = 0; k < f->nsent; k++)
        n += f->sent[k].m.type == type;
    return n;
}

#endif
