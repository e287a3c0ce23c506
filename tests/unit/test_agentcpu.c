/*
 * The agent's CPU per task: fewer wake-ups and frames per start.  The launcher thread's hold
 * (agent_exec_thread.c): a launch that is back does not wake the agent's loop at once; the loop
 * takes it in a turn it makes anyway (a short task's SIGCHLD, the next launches), and only a
 * launch left untaken for the hold makes the launcher's fd readable.  And a frame of only
 * task_starteds waits for the next report that goes anyway (agent.c, agent_flush_due).  Counts
 * and events only: a hold is either far longer than the test (nothing may wake the loop) or
 * waited for as an event (the fd), never timed.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"

#define HOLD_FOREVER_US (600LL * 1000000) /* longer than any run of this test */
#define HOLD_SHORT_US 20000
#define EVENT_WAIT_MS 30000 /* the bound on waiting for the fd: a failure, not a figure */

struct job {
    struct launch_item item; /* first, as struct launch has it */
    int n;
};

static void work(void *ctx, struct launch_item *it)
{
    (void)ctx;
    (void)it;
}

static bool readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* Takes what is done and checks it is jobs[0..n) in order. */
static void take_all(struct launcher *l, const struct job *jobs, int n)
{
    struct launch_item *it = launcher_take(l);
    for (int i = 0; i < n; i++) {
        cr_assert_not_null(it, "launch %d was not handed back", i);
        cr_assert_eq(((const struct job *)it)->n, jobs[i].n, "handed back in submission order");
        it = it->next;
    }
    cr_assert_null(it, "more handed back than submitted");
}

/* A launcher of work() with that hold, or the test fails. */
static struct launcher *launcher_held(int64_t hold_us)
{
    struct hrm_error err;
    struct launcher *l = launcher_new(work, NULL, hold_us, &err);
    cr_assert_not_null(l, "%s", err.text);
    return l;
}

Test(agentcpu, launches_back_do_not_wake_the_loop_before_their_hold)
{
    struct launcher *l = launcher_held(HOLD_FOREVER_US);
    struct job jobs[3];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3; i++) {
            jobs[i] = (struct job){.n = 3 * round + i};
            launcher_submit(l, &jobs[i].item);
        }
        launcher_wait_idle(l); /* all three are back */
        cr_assert(!readable(launcher_fd(l), 0),
                  "round %d: launches back within their hold woke the loop", round);
        take_all(l, jobs, 3); /* a turn made for another reason takes them */
        cr_assert(!readable(launcher_fd(l), 0), "round %d: taken: the fd is quiet", round);
    }
    launcher_free(l);
}

Test(agentcpu, a_launch_left_untaken_wakes_the_loop_once_its_hold_is_over)
{
    struct launcher *l = launcher_held(HOLD_SHORT_US);
    struct job jobs[2] = {{.n = 0}, {.n = 1}};
    for (int round = 0; round < 2; round++) {
        launcher_submit(l, &jobs[round].item);
        /* No turn takes it: the launcher's fd must become readable by itself. */
        cr_assert(readable(launcher_fd(l), EVENT_WAIT_MS),
                  "round %d: a launch nobody took never woke the loop", round);
        take_all(l, &jobs[round], 1);
        cr_assert(!readable(launcher_fd(l), 0), "round %d: taken: the fd is quiet", round);
    }
    launcher_free(l);
}

/* Frees what the test queued (agent.c's drop_queued is its own). */
static void drop_texts(struct agent *a)
{
    for (size_t i = 0; i < a->noutq; i++)
        free((char *)a->outq[i].text);
    a->noutq = a->nstarts_queued = 0;
}

static char *text(void)
{
    char *t = malloc(3);
    cr_assert_not_null(t);
    memcpy(t, "{}", 3);
    return t;
}

Test(agentcpu, a_frame_of_only_task_starteds_waits_for_the_next_report)
{
    struct agent *a = hrm_calloc(1, sizeof(*a));
    cr_assert_eq(agent_flush_due(a), INT64_MAX, "nothing queued: no frame is due");
    int64_t before = hrm_mono_us();
    agent_send_start_text(a, text(), 2);
    int64_t due = agent_flush_due(a);
    cr_assert_gt(due, before, "a task_started alone waits for a frame that goes anyway");
    cr_assert_neq(due, INT64_MAX, "but not forever");
    agent_send_start_text(a, text(), 2);
    cr_assert_eq(agent_flush_due(a), due, "a second start waits no longer than the first");
    agent_send_text(a, text(), 2); /* an end, a heartbeat: it leaves at once, the starts too */
    cr_assert_eq(agent_flush_due(a), 0);
    drop_texts(a);
    cr_assert_eq(agent_flush_due(a), INT64_MAX);
    a->simulate = true; /* a fleet's simulated agents send their starts at once */
    agent_send_start_text(a, text(), 2);
    cr_assert_eq(agent_flush_due(a), 0);
    drop_texts(a);
    hrm_free(a->outq);
    hrm_free(a);
}

Test(agentcpu, a_hold_turned_off_wakes_the_loop_for_what_waits)
{
    struct launcher *l = launcher_held(HOLD_FOREVER_US);
    struct job jobs[2] = {{.n = 0}, {.n = 1}};
    launcher_submit(l, &jobs[0].item);
    launcher_wait_idle(l);
    cr_assert(!readable(launcher_fd(l), 0), "held");
    /* A node that starts running a node queue system turns the hold off (agent_exec.c). */
    launcher_set_hold(l, 0);
    cr_assert(readable(launcher_fd(l), EVENT_WAIT_MS), "what was held wakes the loop now");
    take_all(l, &jobs[0], 1);
    launcher_submit(l, &jobs[1].item);
    cr_assert(readable(launcher_fd(l), EVENT_WAIT_MS), "without a hold, each launch wakes it");
    take_all(l, &jobs[1], 1);
    launcher_free(l);
}
