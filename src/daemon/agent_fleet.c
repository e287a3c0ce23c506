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
#include "hrm/alloc.h"
#include "hrm/log.h"

#define FLEET_MAX 100000
/* Per agent: its DEALER and the two sockets of its link monitor (hrm_conn_watch_link: the
 * registration on a new connection), a mailbox descriptor each, and its TCP connection's; the
 * rest is slack for reconnections.  Without the monitor (a limit too low for it): 3. */
#define SOCKETS_PER_AGENT 4
#define FDS_PER_AGENT 5
#define FDS_PER_AGENT_UNWATCHED 3
#define LOOP_MAX_WAIT_MS 100

struct fleet {
    struct agent **agents;
    int32_t n, live;
    bool *ready;       /* woken by its socket, or it still had input after its turn */
    /* When each agent's next timer is due (agent_next_due after its latest turn): only its own
     * turn changes it, so the loop reads an array instead of asking every agent twice per
     * wake-up (with 5,000 agents, wake-ups by the thousand a second, that was most of this
     * process's own time, taken from the master beside it). */
    int64_t *due;
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
    hrm_free(f->due);
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
    f->due = hrm_calloc((size_t)count, sizeof(*f->due));
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
    }
    f->live = f->n;
    return 0;
}

static bool has_input(struct agent *a)
{
    int ev = 0;
    size_t len = sizeof(ev);
    return zmq_getsockopt(hrm_conn_zsock(a->conn), ZMQ_EVENTS, &ev, &len) == 0 &&
           (ev & ZMQ_POLLIN);
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
        f.ready[i] = true;
        f.due[i] = agent_next_due(f.agents[i]);
    }
    struct epoll_event evs[512];
    bool stop = false, any_ready = true;
    int rc = 0;
    while (!stop && f.live > 0) {
        int64_t now = agent_mono_us(), due = INT64_MAX;
        for (int32_t i = 0; i < f.n; i++)
            due = f.due[i] < due ? f.due[i] : due;
        int64_t wait_ms = any_ready || due <= now ? 0 : (due - now + 999) / 1000;
        if (wait_ms > LOOP_MAX_WAIT_MS)
            wait_ms = LOOP_MAX_WAIT_MS;
        int n = epoll_wait(f.epfd, evs, 512, (int)wait_ms);
        if (n < 0 && errno != EINTR) {
            rc = hrm_errorf(err, -errno, "epoll_wait: %s", strerror(errno));
            break;
        }
        for (int k = 0; k < n; k++) {
            if (evs[k].data.u32 == UINT32_MAX) {
                struct signalfd_siginfo si;
                while (read(f.sigfd, &si, sizeof(si)) == sizeof(si)) {
                    hrm_log(HRM_LOG_NOTICE, "signal %u: stopping", si.ssi_signo);
                    stop = true;
                }
            } else {
                f.ready[evs[k].data.u32] = true;
            }
        }
        now = agent_mono_us();
        any_ready = false;
        for (int32_t i = 0; i < f.n && !stop; i++) {
            struct agent *a = f.agents[i];
            if (a->stop || (!f.ready[i] && f.due[i] > now))
                continue;
            f.ready[i] = false;
            agent_turn(a);
            f.due[i] = a->stop ? INT64_MAX : agent_next_due(a);
            if (a->stop) {
                hrm_log(HRM_LOG_ERR, "agent %s stops: %s", a->name,
                        a->fatal.text[0] ? a->fatal.text : "?");
                f.live--;
                if (f.n == 1)
                    rc = hrm_errorf(err, -EACCES, "%s", a->fatal.text);
                continue;
            }
            if (has_input(a))
                any_ready = f.ready[i] = true;
        }
    }
    if (f.live == 0 && f.n > 1 && rc == 0)
        rc = hrm_errorf(err, -EACCES, "every agent stopped (see the log)");
    for (int32_t i = 0; i < f.n; i++) {
        exec_stop_all(f.agents[i]);
        agent_flush(f.agents[i]);
    }
    fleet_free(&f);
    return rc;
}
