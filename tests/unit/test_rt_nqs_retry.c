/* Node queues ask the negotiator again by a timer: a queue behind a task that overruns sees no
 * other event, and its unmatched migration requests (dropped by the negotiator after retry_us)
 * must still be sent again, or idle nodes stay idle beside it. */
#include <criterion/criterion.h>

#include "dhrm_env.h"
#include "fixture.h"
#include "hrm/nqs.h"

#define MS 1000ll

/* The one timer armed since the last clear, which must exist. */
static void armed(const struct fenv *f, int64_t *at, uint64_t *cookie)
{
    cr_assert_eq(f->ntimers, 1, "%d timers armed, expected the retry's", f->ntimers);
    *at = f->timer_at[0];
    *cookie = f->timer_cookie[0];
}

Test(rt_nqs_retry, an_unmatched_request_is_sent_again_with_no_other_event)
{
    /* One node of one core; task 0 (100 ms) runs, task 1 (100 ms) waits behind it. */
    struct hrm_cluster *c = fx_cluster(1, 2, 1, 16 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 2, 1000, GIB, 0, 0, 100 * MS);
    struct fenv f;
    fenv_init(&f);
    struct hrm_nqs_config cfg = {.balance = true, .hw_us = 10 * MS, .retry_us = 20 * MS};
    struct hrm_error err = {{0}};
    struct hrm_nqs *q = hrm_nqs_new(c, wl, 0, &cfg, &err);
    cr_assert_not_null(q, "%s", err.text);
    for (int task = 0; task < 2; task++) {
        struct hrm_msg run = {.type = HRM_MSG_RUN, .from = hrm_addr_sched(0), .job = 0,
                              .task = task, .node = 0, .attempt = -1, .value = hrm_addr_sched(0)};
        fenv_clear(&f);
        cr_assert_eq(hrm_nqs_on_msg(q, &f.env, &run), 0);
    }
    const struct fenv_sent *req = fenv_find(&f, HRM_MSG_MIGRATE_REQUEST, 0);
    cr_assert_not_null(req, "task 1 waits 100 ms > hw: it asks to move");
    cr_assert_eq(req->m.task, 1);

    /* The negotiator matches nothing; no message reaches the node.  Its timer fires at the
     * retry time, and the request goes again, three times over. */
    int64_t at;
    uint64_t cookie;
    armed(&f, &at, &cookie);
    for (int round = 0; round < 3; round++) {
        cr_assert_eq(at, f.now + cfg.retry_us, "round %d: the timer is not at the retry", round);
        f.now = at;
        fenv_clear(&f);
        cr_assert_eq(hrm_nqs_on_timer(q, &f.env, cookie), 0);
        req = fenv_find(&f, HRM_MSG_MIGRATE_REQUEST, 0);
        cr_assert_not_null(req, "round %d: the request was not sent again", round);
        cr_assert_eq(req->m.task, 1);
        cr_assert_eq(fenv_count(&f, HRM_MSG_MIGRATE_REQUEST), 1);
        armed(&f, &at, &cookie);
    }
    /* A stale timer (an earlier one superseded) sends nothing. */
    fenv_clear(&f);
    cr_assert_eq(hrm_nqs_on_timer(q, &f.env, cookie), 0);
    cr_assert_eq(fenv_count(&f, HRM_MSG_MIGRATE_REQUEST), 0);
    hrm_nqs_free(q);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}
