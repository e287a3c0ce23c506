/*
 * The daemons' system calls per message: a receive that does not wait takes a message already
 * queued without poll(2) (an agent receives a burst of launches this way), and an agent's probe
 * listener is looked at only while a scheduler key is declared.  The counts are taken by
 * tracing a child's main thread (ptrace), so ZeroMQ's own I/O thread is not counted.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "daemon/probe_listen.h"
#include "hrm/transport.h"
#include "hrm/wire.h"

#if defined(__x86_64__) /* the traced calls' numbers are read from x86-64 registers */
#define BURST 400

/* The child marks what its main thread just did with system calls it makes nowhere else. */
#define MARK_GOT SYS_getppid   /* a receive returned a message */
#define MARK_EMPTY SYS_getpgrp /* a receive found nothing */
#define MARK_WAITED SYS_getsid /* what came since is not a receive's (a wait, the sends) */
#define MARK_START SYS_umask   /* the burst starts */

struct counts {
    long got, empty;          /* receives of each outcome */
    long polls_got, polls_empty; /* poll(2) and ppoll(2) in them */
    long got_without_poll;    /* receives that returned a message with no poll(2) */
};

static bool hot_take(void *ctx, const char *buf, size_t len)
{
    (void)buf;
    (void)len;
    (*(long *)ctx)++;
    return true;
}

/* The child: a server and an agent-side connection in one process; the server sends a burst of
 * BURST frames and the connection takes them with receives that do not wait, waiting (marked
 * apart) only when nothing is there. */
static void child_main(void)
{
    char dir[] = "/tmp/hrm-onehostcpu-XXXXXX";
    if (!mkdtemp(dir))
        _exit(10);
    struct hrm_error err = {{0}};
    struct hrm_keypair master_kp, agent_kp;
    if (hrm_keys_generate(dir, false, "nobody", &err) < 0 ||
        hrm_keys_load(dir, "master", false, &master_kp, &err) < 0 ||
        hrm_keys_load(dir, "agent", false, &agent_kp, &err) < 0)
        _exit(11);
    struct hrm_authz *authz = hrm_authz_new_list();
    struct hrm_authz_entry e = {.role = HRM_PEER_AGENT};
    snprintf(e.pub, sizeof(e.pub), "%s", agent_kp.pub);
    hrm_authz_set(authz, &e, 1);
    void *zctx = hrm_zctx_new();
    struct hrm_server *srv = hrm_server_new(zctx, "tcp://127.0.0.1:*", &master_kp, authz, &err);
    if (!srv)
        _exit(12);
    struct hrm_conn *c = hrm_conn_new(zctx, hrm_server_endpoint(srv), master_kp.pub, &agent_kp,
                                      &err);
    if (!c)
        _exit(13);
    int rc = -ETIMEDOUT;
    for (int i = 0; i < 3000 && rc == -ETIMEDOUT; i++) {
        hrm_server_handle_zap(srv);
        rc = hrm_conn_wait_ready(c, 20, NULL);
    }
    if (rc != 0 || hrm_conn_send_raw(c, "hello", 5) < 0)
        _exit(14);
    struct hrm_inmsg in;
    zmq_pollitem_t it = {hrm_server_zsock(srv, 0), 0, ZMQ_POLLIN, 0};
    while (hrm_server_recv(srv, &in) == -EAGAIN)
        zmq_poll(&it, 1, -1);
    syscall(MARK_START, 022);
    for (int i = 0; i < BURST; i++)
        if (hrm_server_send_raw(srv, in.id, in.idlen, "{}", 2) < 0)
            _exit(15);
    syscall(MARK_WAITED, 0); /* the sends' own calls are not the receives' */
    long got = 0;
    zmq_pollitem_t wait_it = {hrm_conn_zsock(c), 0, ZMQ_POLLIN, 0};
    while (got < BURST) {
        json_t *msg = NULL;
        long before = got;
        rc = hrm_conn_recv_hot(c, 0, hot_take, &got, &msg, &err);
        json_decref(msg);
        if (got > before) {
            syscall(MARK_GOT);
        } else {
            syscall(MARK_EMPTY);
            zmq_poll(&wait_it, 1, -1);
            syscall(MARK_WAITED, 0);
        }
    }
    hrm_conn_free(c);
    hrm_server_free(srv);
    hrm_zctx_free(zctx);
    hrm_authz_free(authz);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    _exit(system(cmd) == 0 ? 0 : 16); /* _exit: LeakSanitizer's tracer cannot attach under ours */
}

/* Runs child_main under ptrace and counts the poll(2)s of its receives after MARK_START. */
static struct counts traced_counts(void)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
            _exit(9);
        raise(SIGSTOP);
        child_main();
    }
    struct counts k = {0};
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFSTOPPED(st));
    ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL));
    bool entering = true, started = false;
    long polls = 0;
    int sig = 0;
    for (;;) {
        cr_assert_eq(ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig), 0);
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        if (WIFEXITED(st)) {
            cr_assert_eq(WEXITSTATUS(st), 0, "the traced child failed at step %d",
                         WEXITSTATUS(st));
            break;
        }
        cr_assert(!WIFSIGNALED(st), "the traced child died of signal %d", WTERMSIG(st));
        sig = 0;
        if (!WIFSTOPPED(st))
            continue;
        if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
            sig = WSTOPSIG(st); /* a signal of its own: delivered */
            continue;
        }
        bool entry = entering; /* a call stops at its entry, then at its exit */
        entering = !entering;
        if (entry) {
            struct user_regs_struct regs;
            cr_assert_eq(ptrace(PTRACE_GETREGS, pid, NULL, &regs), 0);
            long nr = (long)regs.orig_rax;
            if (nr == MARK_START) {
                started = true;
                polls = 0;
            } else if (!started) {
                continue;
            } else if (nr == SYS_poll || nr == SYS_ppoll) {
                polls++;
            } else if (nr == MARK_GOT) {
                k.got++;
                k.polls_got += polls;
                k.got_without_poll += polls == 0;
                polls = 0;
            } else if (nr == MARK_EMPTY) {
                k.empty++;
                k.polls_empty += polls;
                polls = 0;
            } else if (nr == MARK_WAITED) {
                polls = 0; /* the wait's own */
            }
        }
    }
    return k;
}
#endif

TestSuite(onehostcpu, .timeout = 120);

Test(onehostcpu, burst_received_without_poll)
{
#if !defined(__x86_64__)
    cr_skip_test("the system call count reads x86-64 registers");
#else
    struct counts k = traced_counts();
    fprintf(stderr, "onehostcpu: %ld receives with a message (%ld poll(2)s, %ld without any), %ld empty (%ld "
                "poll(2)s)\n", k.got, k.polls_got, k.got_without_poll, k.empty, k.polls_empty);
    cr_assert_eq(k.got, BURST);
    /* A frame already queued is taken with no poll(2): zmq_poll before each receive made
     * one per frame at least (the descriptor's), two when ZeroMQ looked at its mailbox. */
    cr_assert_geq(k.got_without_poll, BURST / 2, "%ld of %d receives without a poll(2)",
                  k.got_without_poll, BURST);
    cr_assert_lt(k.polls_got, BURST / 2);
    /* A receive that finds nothing looks at the mailbox once. */
    cr_assert_leq(k.polls_empty, k.empty);
#endif
}

Test(onehostcpu, probe_listener_expects_senders_only_with_a_key)
{
    char dir[] = "/tmp/hrm-onehostcpu-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    struct hrm_error err = {{0}};
    struct hrm_keypair agent_kp, sched_kp;
    cr_assert_eq(hrm_keys_generate(dir, false, "nobody", &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_load(dir, "agent", false, &agent_kp, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_load(dir, "scheduler", false, &sched_kp, &err), 0, "%s", err.text);
    void *zctx = hrm_zctx_new();
    struct probe_listen *pl = probe_listen_new(zctx, "tcp://127.0.0.1:*", &agent_kp, &err);
    cr_assert_not_null(pl, "%s", err.text);
    void *socks[2];
    cr_assert_not(probe_listen_expecting(pl), "before the master's welcome");
    json_t *none = json_array();
    probe_listen_admit(pl, none, 0); /* a central policy's welcome: no scheduler key */
    cr_assert_not(probe_listen_expecting(pl), "no scheduler key declared");
    cr_assert_eq(probe_listen_zsocks(pl, socks), 2, "the sockets are still there to look at");
    json_t *keys = json_pack("[s]", sched_kp.pub);
    probe_listen_admit(pl, keys, 1);
    cr_assert(probe_listen_expecting(pl), "a scheduler key declared");
    probe_listen_admit(pl, none, 0);
    cr_assert_not(probe_listen_expecting(pl), "the key withdrawn");
    json_decref(keys);
    json_decref(none);
    probe_listen_free(pl);
    hrm_zctx_free(zctx);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
