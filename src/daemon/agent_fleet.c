/* hrm agent --simulate-exec [--count N]: many simulated agents in one process, one ZeroMQ context and one epoll loop. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <zmq.h>

#include "agent_private.h"
#include "fleet_due.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/log.h"

#define FLEET_MAX 100000
/* Per agent: its DEALER and the two sockets of its link monitor (HRM_CONN_WATCH_LINK: the
 * registration on a new connection), a mailbox descriptor each, and its TCP connection's; the
 * rest is slack for reconnections.  Without the monitor (a limit too low for it): 3. */
#define SOCKETS_PER_AGENT 4
#define FDS_PER_AGENT 5
#define FDS_PER_AGENT_UNWATCHED 3
#define LOOP_MAX_WAIT_MS 100

struct fleet {
    struct agent **agents;
    int32_t n, live;
    /* The agents to turn: woken by their socket, due, or still with input after their turn.
     * ready[i]: agent i is in the list already.  The loop turns the list it took while the
     * turns fill the other one (spare). */
    bool *ready;
    int32_t *ready_list, *spare, nready;
    /* When each agent's next timer is due (agent_next_due after its latest turn): only its own
     * turn changes it.  A heap, so a wake-up looks at the agents it turns and no other: with
     * 2,500 agents a process and wake-ups by the thousand a second (every agent's heartbeat, a
     * master's answers), walking all of them twice per wake-up was O(agents) each time. */
    struct fleet_due due;
    /* Said when the fleet stops: the loop's wake-ups, the agents' turns, and the agents it
     * looked at to find them (about two per turn; not the whole fleet per wake-up). */
    int64_t wakeups, turns, looked;
    void *zctx;
    int epfd, sigfd;
};

/* Enough descriptors for count agents of per_agent each: the soft limit up to the hard one,
 * and the hard one too when we may (root). */
static int raise_nofile(int32_t count, int per_agent, struct hrm_error *err)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)count * (rlim_t)per_agent + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return hrm_errorf(err, -errno, "getrlimit: %s", strerror(errno));
    if (rl.rlim_cur >= need)
        return 0;
    struct rlimit want = {need, rl.rlim_max > need ? rl.rlim_max : need};
    if (setrlimit(RLIMIT_NOFILE, &want) == 0)
        return 0;
    return hrm_errorf(err, -EMFILE, "--count %d needs %llu file descriptors; the limit is %llu "
                      "(hard %llu): raise it (ulimit -n) or run fewer agents per process",
                      count, (unsigned long long)need, (unsigned long long)rl.rlim_cur,
                      (unsigned long long)rl.rlim_max);
}

static void fleet_free(struct fleet *f)
{
    for (int32_t i = 0; i < f->n; i++)
        agent_free(f->agents[i]);
    hrm_free(f->agents);
    hrm_free(f->ready);
    hrm_free(f->ready_list);
    hrm_free(f->spare);
    fleet_due_fini(&f->due);
    if (f->epfd >= 0)
        close(f->epfd);
    if (f->sigfd >= 0)
        close(f->sigfd);
    hrm_zctx_free(f->zctx);
}

static int fleet_open(struct fleet *f, const struct hrm_agent_config *cfg, struct hrm_error *err)
{
    int32_t count = cfg->count > 0 ? cfg->count : 1;
    if (count > FLEET_MAX)
        return hrm_errorf(err, -EINVAL, "--count %d: at most %d agents per process", count,
                          FLEET_MAX);
    /* Watching each agent's link is worth two descriptors more per agent; when the limit does
     * not allow them the agents go without (they register again when told not_registered). */
    struct hrm_error lerr;
    bool watch = raise_nofile(count, FDS_PER_AGENT, &lerr) == 0;
    if (!watch) {
        if (raise_nofile(count, FDS_PER_AGENT_UNWATCHED, err) < 0)
            return -EMFILE;
        hrm_log(HRM_LOG_WARNING, "%s; the agents do without watching their connection (after "
                "a master restart each registers again once told not_registered)", lerr.text);
    }
    if (!(f->zctx = hrm_zctx_new_wide()))
        return hrm_errorf(err, -ENOMEM, "cannot create a ZeroMQ context");
    /* ZeroMQ's default (1,023 sockets per context) would stop a fleet at ~340 agents. */
    zmq_ctx_set(f->zctx, ZMQ_MAX_SOCKETS, count * SOCKETS_PER_AGENT + 64);
    if ((f->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        return hrm_errorf(err, -errno, "epoll: %s", strerror(errno));
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if ((f->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        return hrm_errorf(err, -errno, "signalfd: %s", strerror(errno));
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    epoll_ctl(f->epfd, EPOLL_CTL_ADD, f->sigfd, &ev);
    f->agents = hrm_calloc((size_t)count, sizeof(*f->agents));
    f->ready = hrm_calloc((size_t)count, sizeof(*f->ready));
    f->ready_list = hrm_calloc((size_t)count, sizeof(*f->ready_list));
    f->spare = hrm_calloc((size_t)count, sizeof(*f->spare));
    fleet_due_init(&f->due, count);
    const char *prefix = cfg->name_prefix ? cfg->name_prefix : cfg->name ? cfg->name : "sim";
    for (int32_t i = 0; i < count; i++) {
        char name[64];
        if (count == 1 && !cfg->name_prefix)
            snprintf(name, sizeof(name), "%.47s", prefix);
        else
            snprintf(name, sizeof(name), "%.36s%d", prefix, i + 1);
        struct agent *a = agent_new_simulated(cfg, name, f->zctx, watch, err);
        if (!a)
            return -HRM_EIO;
        f->agents[f->n++] = a;
        /* ZeroMQ's descriptor signals "something changed" (edge-like): the turn after a wake
         * reads until empty, and the loop checks ZMQ_EVENTS again after each send. */
        int fd;
        size_t len = sizeof(fd);
        if (zmq_getsockopt(hrm_conn_zsock(a->conn), ZMQ_FD, &fd, &len) < 0)
            return hrm_errorf(err, -zmq_errno(), "ZMQ_FD: %s", zmq_strerror(zmq_errno()));
        ev = (struct epoll_event){.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(f->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
            return hrm_errorf(err, -errno, "epoll_ctl: %s", strerror(errno));
        /* Its link's monitor wakes it too: the drop of the master's connection is seen when it
         * happens.  Waiting for the agent's next timer (its heartbeat, a second; up to 10 s in
         * the quiet a reconciling master asks for) held its registration back that long after
         * a master restart. */
        void *mon = hrm_conn_monitor_zsock(a->conn);
        len = sizeof(fd);
        if (mon && zmq_getsockopt(mon, ZMQ_FD, &fd, &len) == 0 &&
            epoll_ctl(f->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
            return hrm_errorf(err, -errno, "epoll_ctl: %s", strerror(errno));
    }
    f->live = f->n;
    return 0;
}

static bool sock_has_input(void *sock)
{
    int ev = 0;
    size_t len = sizeof(ev);
    return sock && zmq_getsockopt(sock, ZMQ_EVENTS, &ev, &len) == 0 && (ev & ZMQ_POLLIN);
}

/* A message from the master, or an event of its link, not read yet. */
static bool has_input(struct agent *a)
{
    return sock_has_input(hrm_conn_zsock(a->conn)) ||
           sock_has_input(hrm_conn_monitor_zsock(a->conn));
}

static void mark_ready(struct fleet *f, int32_t i)
{
    if (!f->ready[i]) {
        f->ready[i] = true;
        f->ready_list[f->nready++] = i;
    }
}

/* Turns the agents ready or due now; each one's next due time goes back in the heap. */
static void turn_ready(struct fleet *f, struct hrm_error *err, int *rc)
{
    int64_t now = hrm_mono_us();
    int32_t i;
    while (fleet_due_first(&f->due, &i) <= now) {
        fleet_due_set(&f->due, i, INT64_MAX); /* set again after its turn */
        mark_ready(f, i);
        f->looked++;
    }
    int32_t *list = f->ready_list, count = f->nready;
    f->ready_list = f->spare;
    f->spare = list;
    f->nready = 0;
    for (int32_t k = 0; k < count; k++) {
        i = list[k];
        struct agent *a = f->agents[i];
        f->ready[i] = false;
        f->looked++;
        if (a->stop)
            continue;
        agent_turn(a);
        f->turns++;
        if (a->stop) {
            hrm_log(HRM_LOG_ERR, "agent %s stops: %s", a->name,
                    a->fatal.text[0] ? a->fatal.text : "?");
            f->live--;
            fleet_due_set(&f->due, i, INT64_MAX);
            if (f->n == 1)
                *rc = hrm_errorf(err, -EACCES, "%s", a->fatal.text);
            continue;
        }
        fleet_due_set(&f->due, i, agent_next_due(a));
        if (has_input(a))
            mark_ready(f, i);
    }
}

int agent_fleet_run(const struct hrm_agent_config *cfg, struct hrm_error *err)
{
    struct fleet f = {.epfd = -1, .sigfd = -1};
    if (fleet_open(&f, cfg, err) < 0) {
        fleet_free(&f);
        return -HRM_EIO;
    }
    hrm_log(HRM_LOG_NOTICE, "%d simulated agent%s (%s..., %lld cpus, %lld MiB each); master %s",
            f.n, f.n == 1 ? "" : "s", f.agents[0]->name,
            (long long)(f.agents[0]->cpu_milli / 1000), (long long)(f.agents[0]->mem >> 20),
            f.agents[0]->endpoint);
    /* Each agent's first turn reads its socket once: ZeroMQ signals its descriptor only for a
     * reader that has found its queue empty, so one that never read would never be woken. */
    for (int32_t i = 0; i < f.n; i++) {
        agent_start(f.agents[i]);
        mark_ready(&f, i);
        fleet_due_set(&f.due, i, agent_next_due(f.agents[i]));
    }
    struct epoll_event evs[512];
    bool stop = false;
    int rc = 0;
    while (!stop && f.live > 0) {
        int32_t first;
        int64_t now = hrm_mono_us(), due = fleet_due_first(&f.due, &first);
        int64_t wait_ms = f.nready > 0 || due <= now ? 0 : (due - now + 999) / 1000;
        if (wait_ms > LOOP_MAX_WAIT_MS)
            wait_ms = LOOP_MAX_WAIT_MS;
        int n = epoll_wait(f.epfd, evs, 512, (int)wait_ms);
        if (n < 0 && errno != EINTR) {
            rc = hrm_errorf(err, -errno, "epoll_wait: %s", strerror(errno));
            break;
        }
        f.wakeups++;
        for (int k = 0; k < n; k++) {
            if (evs[k].data.u32 == UINT32_MAX) {
                struct signalfd_siginfo si;
                while (read(f.sigfd, &si, sizeof(si)) == sizeof(si)) {
                    hrm_log(HRM_LOG_NOTICE, "signal %u: stopping", si.ssi_signo);
                    stop = true;
                }
            } else {
                mark_ready(&f, (int32_t)evs[k].data.u32);
            }
        }
        if (!stop)
            turn_ready(&f, err, &rc);
    }
    hrm_log(HRM_LOG_NOTICE, "simulated agents stop: %lld loop wake-ups, %lld agent turns, %lld "
            "agents looked at", (long long)f.wakeups, (long long)f.turns, (long long)f.looked);
    if (f.live == 0 && f.n > 1 && rc == 0)
        rc = hrm_errorf(err, -EACCES, "every agent stopped (see the log)");
    for (int32_t i = 0; i < f.n; i++) {
        exec_stop_all(f.agents[i]);
        agent_flush(f.agents[i]);
    }
    fleet_free(&f);
    return rc;
}
