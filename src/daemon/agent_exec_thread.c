/* The agent's launcher thread: starts tasks (clone .. execve) one at a time while the agent's loop goes on answering probes and reporting ends. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "agent_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"

/*
 * Why a thread: clone(CLONE_VM | CLONE_VFORK) suspends the calling thread until the child has
 * called execve, and on a busy host that is milliseconds (the child waits for a core, then
 * for the kernel to load the program).  Done by the agent's loop, every probe that came
 * meanwhile waited for it, and a scheduler's round waits for its slowest node's reply.  Here
 * only this thread waits; the loop prepares each start (files, environment, cgroups, cores)
 * and finishes it (the run's pid, its task_started, a kill that came meanwhile) itself, so
 * the agent's data is touched by one thread only.  Starts stay in the order they were asked.
 *
 * PR_SET_PDEATHSIG fires when the thread that made the child exits, not the process: this
 * thread lives as long as the agent (launcher_free, after every task has been reaped).
 */
struct launcher {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* the thread waits for work (or its hold); launcher_wait_idle */
    struct launch_item *todo, **todo_tail;
    struct launch_item *done, **done_tail;
    size_t busy;             /* submitted and not yet in done */
    int efd;                 /* readable while done holds items held hold_us (eventfd) */
    bool signalled;          /* efd was written for what done holds */
    int64_t done_since_us;   /* when done got its first item (CLOCK_MONOTONIC) */
    int64_t hold_us;         /* how long done waits for launcher_take before efd is written */
    bool stop;
    launch_fn *work;
    void *ctx;
};

/* Wakes the loop for what done holds, once; under mu. */
static void signal_done(struct launcher *l)
{
    uint64_t one = 1;
    ssize_t w = write(l->efd, &one, sizeof(one)); /* only fails when the count is huge */
    (void)w;
    l->signalled = true;
}

/*
 * The hold: a launch that is back is not announced on efd at once but hold_us later, if the
 * agent's loop has not taken it meanwhile in a turn it made for another reason.  A short
 * task's own SIGCHLD is such a turn: its pid, its start and its end are then handled
 * together, where announcing each launch cost the loop a wake-up (and the master a frame) of
 * its own.  Under mu: waits for work, or until the hold of what done holds is over.
 */
static void wait_for_work(struct launcher *l)
{
    while (!l->todo && !l->stop) {
        if (!l->done || l->signalled) {
            pthread_cond_wait(&l->cv, &l->mu);
            continue;
        }
        int64_t due = l->done_since_us + l->hold_us;
        if (hrm_mono_us() >= due) {
            signal_done(l);
            continue;
        }
        struct timespec ts = {.tv_sec = (time_t)(due / 1000000),
                              .tv_nsec = (long)(due % 1000000) * 1000};
        pthread_cond_timedwait(&l->cv, &l->mu, &ts);
    }
}

static void *loop(void *arg)
{
    struct launcher *l = arg;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        wait_for_work(l);
        if (!l->todo)
            break; /* stopping, and nothing left to start */
        struct launch_item *it = l->todo;
        l->todo = it->next;
        if (!l->todo)
            l->todo_tail = &l->todo;
        pthread_mutex_unlock(&l->mu);
        l->work(l->ctx, it); /* blocks until the child's execve (or its exit) */
        pthread_mutex_lock(&l->mu);
        it->next = NULL;
        if (!l->done)
            l->done_since_us = hrm_mono_us();
        *l->done_tail = it;
        l->done_tail = &it->next;
        l->busy--;
        /* Between launches of a backlog too: the hold counts from the first item not taken. */
        if (!l->signalled && hrm_mono_us() - l->done_since_us >= l->hold_us)
            signal_done(l);
        pthread_cond_broadcast(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

struct launcher *launcher_new(launch_fn *work, void *ctx, int64_t hold_us, struct hrm_error *err)
{
    struct launcher *l = hrm_calloc(1, sizeof(*l));
    l->hold_us = hold_us > 0 ? hold_us : 0;
    l->todo_tail = &l->todo;
    l->done_tail = &l->done;
    l->work = work;
    l->ctx = ctx;
    if ((l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        hrm_errorf(err, -errno, "eventfd: %s", strerror(errno));
        hrm_free(l);
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_t ca; /* the hold's deadline is on the monotonic clock */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    /* No signal for this thread: the agent reads its own from a signalfd, and the child
     * clears its mask before execve. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&l->thread, NULL, loop, l);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        hrm_errorf(err, -rc, "launcher thread: %s", strerror(rc));
        close(l->efd);
        pthread_cond_destroy(&l->cv);
        pthread_mutex_destroy(&l->mu);
        hrm_free(l);
        return NULL;
    }
    return l;
}

void launcher_submit(struct launcher *l, struct launch_item *it)
{
    it->next = NULL;
    pthread_mutex_lock(&l->mu);
    *l->todo_tail = it;
    l->todo_tail = &it->next;
    l->busy++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

struct launch_item *launcher_take(struct launcher *l)
{
    pthread_mutex_lock(&l->mu);
    struct launch_item *it = l->done;
    if (it) {
        if (l->signalled) { /* the fd is readable exactly while signalled: both under mu */
            uint64_t n;
            ssize_t r = read(l->efd, &n, sizeof(n));
            (void)r;
            l->signalled = false;
        }
        l->done = NULL;
        l->done_tail = &l->done;
    }
    pthread_mutex_unlock(&l->mu);
    return it; /* a list, in the order they were submitted */
}

void launcher_set_hold(struct launcher *l, int64_t hold_us)
{
    pthread_mutex_lock(&l->mu);
    l->hold_us = hold_us > 0 ? hold_us : 0;
    pthread_cond_broadcast(&l->cv); /* a thread waiting out the old hold looks again */
    pthread_mutex_unlock(&l->mu);
}

int launcher_fd(const struct launcher *l)
{
    return l->efd;
}

void launcher_wait_idle(struct launcher *l)
{
    pthread_mutex_lock(&l->mu);
    while (l->busy > 0)
        pthread_cond_wait(&l->cv, &l->mu);
    pthread_mutex_unlock(&l->mu);
}

void launcher_free(struct launcher *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->thread, NULL);
    close(l->efd);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    hrm_free(l);
}
