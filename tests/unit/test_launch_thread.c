/* The agent's launcher thread (agent_exec_thread.c): work runs off the caller's thread, in submission order, and its fd says when finished work is there to take. */
#include <criterion/criterion.h>
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

#include "daemon/agent_private.h"

struct job {
    struct launch_item item; /* first, as struct launch has it */
    int n;
    int gate;   /* read end: the work waits here until the test writes (-1: no wait) */
    int *order; /* where the work writes its n, in the order the works ran */
    size_t *norder;
};

static void work(void *ctx, struct launch_item *it)
{
    (void)ctx;
    struct job *j = (struct job *)it;
    char c;
    /* No assertion here: Criterion's are the test thread's.  A failed read shows as order. */
    if (j->gate >= 0 && read(j->gate, &c, 1) != 1)
        return;
    j->order[(*j->norder)++] = j->n; /* one work at a time: no lock needed */
}

static bool readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

Test(launch_thread, runs_in_order_off_the_caller_and_wakes_once_per_batch)
{
    struct hrm_error err;
    struct launcher *l = launcher_new(work, NULL, 0, &err);
    cr_assert_not_null(l, "%s", err.text);
    int gate[2];
    cr_assert_eq(pipe(gate), 0);
    int order[8];
    size_t norder = 0;
    struct job jobs[4];
    for (int i = 0; i < 4; i++)
        jobs[i] = (struct job){.n = i, .gate = i == 0 ? gate[0] : -1, .order = order,
                               .norder = &norder};
    /* The first work blocks until the test writes: the test goes on meanwhile (submits the
     * others, looks at the fd), which it could not if submitting ran the work. */
    for (int i = 0; i < 4; i++)
        launcher_submit(l, &jobs[i].item);
    cr_assert(!readable(launcher_fd(l), 0), "nothing is finished while the first work waits");
    cr_assert_null(launcher_take(l));
    cr_assert_eq(write(gate[1], "x", 1), 1);
    launcher_wait_idle(l);
    cr_assert(readable(launcher_fd(l), 0), "finished work wakes the caller");
    struct launch_item *it = launcher_take(l);
    for (int i = 0; i < 4; i++) {
        cr_assert_not_null(it, "work %d was not handed back", i);
        cr_assert_eq(((struct job *)it)->n, i, "handed back in submission order");
        it = it->next;
    }
    cr_assert_null(it);
    cr_assert_eq(norder, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(order[i], i, "ran in submission order");
    cr_assert(!readable(launcher_fd(l), 0), "taken: the fd is quiet again");
    cr_assert_null(launcher_take(l));
    launcher_free(l);
    close(gate[0]);
    close(gate[1]);
}
