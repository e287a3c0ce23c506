/*
 * The master's listening port under a reconnection storm: one listener per ZeroMQ I/O thread on
 * the one listening socket, so each thread accepts, and hand-shakes, its share of thousands of
 * agents reconnecting at once (a master restart); and a listener that loses a connection to
 * another does not hold its thread in accept(), so the connections that thread already has keep
 * going.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include "hrm/clock.h"
#include "hrm/transport.h"
#include "hrm/wire.h"

#define IO_THREADS 3
#define CLIENTS 24

struct rig {
    char dir[64];
    void *zctx;
    struct hrm_authz *authz;
    struct hrm_server *srv;
    struct hrm_keypair master_kp, agent_kp;
    int port;
};

static void rig_open(struct rig *r)
{
    snprintf(r->dir, sizeof(r->dir), "/tmp/hrm-reconcile-XXXXXX");
    cr_assert_not_null(mkdtemp(r->dir));
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_keys_generate(r->dir, false, "nobody", &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_load(r->dir, "master", false, &r->master_kp, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_load(r->dir, "agent", false, &r->agent_kp, &err), 0, "%s", err.text);
    r->authz = hrm_authz_new_list();
    struct hrm_authz_entry e = {.role = HRM_PEER_AGENT};
    snprintf(e.pub, sizeof(e.pub), "%s", r->agent_kp.pub);
    hrm_authz_set(r->authz, &e, 1);
    /* A context as the master's, with a known number of I/O threads whatever the host's CPUs. */
    r->zctx = zmq_ctx_new();
    cr_assert_not_null(r->zctx);
    cr_assert_eq(zmq_ctx_set(r->zctx, ZMQ_IO_THREADS, IO_THREADS), 0);
    r->srv = hrm_server_new(r->zctx, "tcp://127.0.0.1:*", &r->master_kp, r->authz, &err);
    cr_assert_not_null(r->srv, "%s", err.text);
    const char *colon = strrchr(hrm_server_endpoint(r->srv), ':');
    cr_assert_not_null(colon);
    r->port = atoi(colon + 1);
}

static void rig_close(struct rig *r)
{
    hrm_server_free(r->srv);
    hrm_zctx_free(r->zctx);
    hrm_authz_free(r->authz);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
    cr_assert_eq(system(cmd), 0);
}

/* This process's descriptors of a listening TCP socket on port; *nonblocking: all of them. */
static int listening_descriptors(int port, bool *nonblocking)
{
    int n = 0;
    *nonblocking = true;
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        int fd = atoi(de->d_name);
        if (de->d_name[0] == '.' || fd == dirfd(d))
            continue;
        int listening = 0;
        socklen_t len = sizeof(listening);
        struct sockaddr_in a;
        socklen_t alen = sizeof(a);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 || !listening ||
            getsockname(fd, (struct sockaddr *)&a, &alen) < 0 || a.sin_family != AF_INET ||
            ntohs(a.sin_port) != port)
            continue;
        n++;
        if (!(fcntl(fd, F_GETFL) & O_NONBLOCK))
            *nonblocking = false;
    }
    closedir(d);
    return n;
}

static double mono_s(void)
{
    return (double)hrm_mono_us() / 1e6;
}

/* The server's side for a moment: handshakes admitted, each "ping" answered "pong". */
static int serve_a_little(struct hrm_server *srv)
{
    int answered = 0;
    zmq_pollitem_t it[2] = {{hrm_server_zsock(srv, 0), 0, ZMQ_POLLIN, 0},
                            {hrm_server_zsock(srv, 1), 0, ZMQ_POLLIN, 0}};
    zmq_poll(it, 2, 10);
    hrm_server_handle_zap(srv);
    struct hrm_inmsg in;
    while (hrm_server_recv(srv, &in) == 0)
        if (in.len == 4 && memcmp(in.data, "ping", 4) == 0 &&
            hrm_server_send_raw(srv, in.id, in.idlen, "pong", 4) == 0)
            answered++;
    return answered;
}

TestSuite(reconcile, .timeout = 120);

/* Old: one listener (ZeroMQ's), so one I/O thread accepted a whole storm, and the connections
 * accepted in a burst all went to the thread that was behind. */
Test(reconcile, one_listener_per_io_thread)
{
    struct rig r;
    rig_open(&r);
    bool nonblocking;
    int n = listening_descriptors(r.port, &nonblocking);
    cr_assert_eq(n, IO_THREADS, "%d descriptors listen on the server's port for %d I/O threads",
                 n, IO_THREADS);
    cr_assert(nonblocking, "a listener that finds no connection must not wait in accept()");
    rig_close(&r);
    cr_assert_eq(listening_descriptors(r.port, &nonblocking), 0,
                 "the listeners' descriptors outlive the server");
}

/* Clients connecting at once (a small storm over the listeners of every I/O thread), then each
 * sends a ping: every one is answered, whichever thread accepted it. */
Test(reconcile, storm_over_every_listener_answered)
{
    struct rig r;
    rig_open(&r);
    struct hrm_conn *c[CLIENTS];
    bool up[CLIENTS] = {false};
    struct hrm_error err = {{0}};
    for (int i = 0; i < CLIENTS; i++) {
        c[i] = hrm_conn_new(r.zctx, hrm_server_endpoint(r.srv), r.master_kp.pub, &r.agent_kp,
                            &err);
        cr_assert_not_null(c[i], "%s", err.text);
    }
    int nup = 0;
    for (double end = mono_s() + 60; nup < CLIENTS && mono_s() < end;) {
        serve_a_little(r.srv);
        for (int i = 0; i < CLIENTS; i++)
            if (!up[i] && hrm_conn_wait_ready(c[i], 1, &err) == 0) {
                up[i] = true;
                nup++;
            }
    }
    cr_assert_eq(nup, CLIENTS, "%d of %d clients hand-shook", nup, CLIENTS);
    for (int i = 0; i < CLIENTS; i++)
        cr_assert_eq(hrm_conn_send_raw(c[i], "ping", 4), 0);
    bool got[CLIENTS] = {false};
    int answered = 0, pongs = 0;
    for (double end = mono_s() + 30; pongs < CLIENTS && mono_s() < end;) {
        answered += serve_a_little(r.srv);
        for (int i = 0; i < CLIENTS; i++) {
            char buf[8];
            if (!got[i] && zmq_recv(hrm_conn_zsock(c[i]), buf, sizeof(buf), ZMQ_DONTWAIT) == 4 &&
                memcmp(buf, "pong", 4) == 0) {
                got[i] = true;
                pongs++;
            }
        }
    }
    cr_assert_eq(answered, CLIENTS, "%d of %d pings reached the server", answered, CLIENTS);
    cr_assert_eq(pongs, CLIENTS, "%d of %d pongs came back", pongs, CLIENTS);
    for (int i = 0; i < CLIENTS; i++)
        hrm_conn_free(c[i]);
    rig_close(&r);
}
