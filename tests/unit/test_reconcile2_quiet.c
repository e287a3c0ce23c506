/* A welcome's quiet_ms: the agent's heartbeat and usage report wait until the quiet is over (at
 * an offset within one period), a welcome without it changes nothing, and a master asking for
 * an absurd quiet gets 60 s at most (no overflow of the clock, no node silenced for good). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "daemon/agent_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"

#define PERIOD_US 1000000

static struct agent *quiet_agent(void)
{
    struct agent *a = hrm_calloc(1, sizeof(*a));
    strcpy(a->name, "q-agent-7");
    a->cfg.heartbeat_us = PERIOD_US;
    return a;
}

static json_t *welcome(json_int_t quiet_ms, bool with)
{
    json_t *w = json_pack("{s:s,s:I,s:I}", "type", "welcome", "node", (json_int_t)3, "boot",
                          (json_int_t)2);
    if (with)
        json_object_set_new(w, "quiet_ms", json_integer(quiet_ms));
    return w;
}

/* The agent's next heartbeat and usage report after a welcome asking for quiet_ms, relative to
 * the clock read just before the welcome is handled. */
static void after(json_int_t quiet_ms, bool with, int64_t *hb, int64_t *usage, int64_t *before)
{
    struct agent *a = quiet_agent();
    json_t *w = welcome(quiet_ms, with);
    *before = hrm_mono_us();
    agent_quiet_after_welcome(a, w);
    *hb = a->next_heartbeat_us;
    *usage = a->next_usage_us;
    json_decref(w);
    hrm_free(a);
}

Test(reconcile2_quiet, reports_wait_out_the_quiet_within_one_period)
{
    int64_t hb, usage, before;
    after(5000, true, &hb, &usage, &before);
    cr_assert_geq(hb, before + 5000 * 1000LL);
    cr_assert_lt(hb, hrm_mono_us() + 5000 * 1000LL + PERIOD_US);
    cr_assert_eq(usage, hb, "the usage report resumes with the heartbeat");
}

Test(reconcile2_quiet, a_welcome_without_quiet_changes_nothing)
{
    int64_t hb, usage, before;
    after(0, false, &hb, &usage, &before);
    cr_assert_eq(hb, 0);
    cr_assert_eq(usage, 0);
    after(0, true, &hb, &usage, &before);
    cr_assert_eq(hb, 0);
}

Test(reconcile2_quiet, an_absurd_quiet_is_cut_to_a_minute)
{
    int64_t hb, usage, before;
    after(INT64_MAX / 10, true, &hb, &usage, &before);
    cr_assert_gt(hb, before, "the clock did not wrap");
    cr_assert_leq(hb, hrm_mono_us() + 60000 * 1000LL + PERIOD_US);
    after(3600 * 1000, true, &hb, &usage, &before);
    cr_assert_leq(hb, hrm_mono_us() + 60000 * 1000LL + PERIOD_US);
    cr_assert_geq(hb, before + 60000 * 1000LL);
}
