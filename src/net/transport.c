/* ZeroMQ transport: CURVE ROUTER with a ZAP allow-list for the master, CURVE DEALER for agents and clients. */
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "hrm/alloc.h"
#include "hrm/log.h"
#include "hrm/transport.h"
#include "hrm/wire.h"

/* Frames above this are dropped by ZeroMQ with the connection (a peer that
 * sends 16 MiB is not talking our protocol); between HRM_WIRE_MAX_BYTES and
 * this they reach the codec, which answers with a too_big error. */
#define HARD_MAX_BYTES (16 << 20)
#define SERVER_HWM 200000 /* queued messages per peer: one burst of launches fits */
/* Connections waiting to be accepted.  ZeroMQ's default, 100, overflows when thousands of agents
 * connect at once (a master restart): the kernel drops their SYNs and each retries 1, 3, 7, 15
 * and 31 s later, which made a fleet's registration and reconciliation take tens of seconds.
 * The kernel caps it at net.core.somaxconn (4,096 by default). */
#define SERVER_BACKLOG 65535

void *hrm_zctx_new(void)
{
    void *z = zmq_ctx_new();
    if (z)
        zmq_ctx_set(z, ZMQ_IO_THREADS, 1);
    return z;
}

void *hrm_zctx_new_wide(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long want = (cpus < 1 ? 1 : cpus) * HRM_ZCTX_IO_THREADS_PER_CPU;
    int threads = want > HRM_ZCTX_IO_THREADS_MAX ? HRM_ZCTX_IO_THREADS_MAX : (int)want;
    void *z = zmq_ctx_new();
    if (z)
        zmq_ctx_set(z, ZMQ_IO_THREADS, threads);
    return z;
}

void hrm_zctx_free(void *zctx)
{
    if (zctx)
        zmq_ctx_term(zctx);
}

static int zerr(struct hrm_error *err, const char *what)
{
    int e = zmq_errno();
    return hrm_errorf(err, -e, "%s: %s", what, zmq_strerror(e));
}

static void set_int(void *sock, int opt, int v)
{
    zmq_setsockopt(sock, opt, &v, sizeof(v));
}

/* ---- server ---- */

struct hrm_server {
    void *sock, *zap;
    void *accepts; /* the ROUTER's ZMQ_EVENT_ACCEPTED events (accepted_reset_on_close) */
    int port;      /* the port it listens on: an accepted connection's local port */
    struct hrm_authz *authz;
    char endpoint[256];
    zmq_msg_t payload; /* the last message received; data handed out points into it */
    bool have_payload;
};

/*
 * Every connection the server accepts closes with a reset (SO_LINGER of 0), not a FIN.  When
 * the master's process ends (a crash, kill -9, a stop), the kernel closes its connections; with
 * a FIN each one then waits in TIME_WAIT on the master's side for a minute, keyed by the agent's
 * address and port.  The agents reconnect at once from new ports, and the kernel walks its
 * ephemeral ports in order per destination (even ones only, some 14,000 here), so after a
 * restart of thousands of agents many new connections come from a port whose old connection is
 * still in TIME_WAIT: that socket answers the SYN with an ACK of the old connection, the agent's
 * kernel resets it and sends its SYN again one second later (TcpExtTCPTimeouts: 1,136 of 5,000
 * connections at one restart).  With a reset nothing stays in TIME_WAIT on the master's side;
 * the agents see the reset as the same drop.  What the master had queued and not yet sent is
 * lost either way (ZMQ_LINGER is 0); bytes already in the kernel's send queue are lost too,
 * where a FIN would have delivered them: the answers a peer misses at the master's exit, which
 * agents and clients resend on the new connection.
 * ZeroMQ has no option for it; its monitor gives each accepted connection's descriptor, set
 * here from the thread that owns the server (hrm_server_handle_zap), not ZeroMQ's.
 */
static void accepts_unwatch(struct hrm_server *s);

static void accepts_watch(struct hrm_server *s, void *zctx)
{
    char mon[64];
    snprintf(mon, sizeof(mon), "inproc://hrm-accepts-%p", (void *)s);
    if (zmq_socket_monitor(s->sock, mon, ZMQ_EVENT_ACCEPTED) != 0)
        return;
    s->accepts = zmq_socket(zctx, ZMQ_PAIR);
    /* No limit on the events waiting: ZeroMQ's I/O thread blocks on a full monitor, and
     * thousands of agents connect in the instant after a restart. */
    if (s->accepts)
        set_int(s->accepts, ZMQ_RCVHWM, 0);
    if (!s->accepts || zmq_connect(s->accepts, mon) != 0) {
        hrm_log(HRM_LOG_WARNING, "cannot watch accepted connections (%s): they close with a FIN",
                zmq_strerror(zmq_errno()));
        accepts_unwatch(s);
    }
}

static void accepts_unwatch(struct hrm_server *s)
{
    if (!s->accepts)
        return;
    zmq_socket_monitor(s->sock, NULL, 0);
    zmq_close(s->accepts);
    s->accepts = NULL;
}

/* The accepted connections since the last call: each set to close with a reset.  A descriptor
 * closed and reused since its event is left alone unless it is again a TCP connection on the
 * server's own port (then it is another accepted connection, whose event follows). */
static void accepts_reset_on_close(struct hrm_server *s)
{
    for (int i = 0; s->accepts && i < 65536; i++) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, s->accepts, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            return;
        }
        uint16_t event = 0;
        uint32_t fd = UINT32_MAX;
        if (zmq_msg_size(&m) >= 6) {
            memcpy(&event, zmq_msg_data(&m), 2);
            memcpy(&fd, (const char *)zmq_msg_data(&m) + 2, 4);
        }
        bool more = zmq_msg_more(&m);
        zmq_msg_close(&m);
        while (more) { /* the endpoint's frame */
            zmq_msg_init(&m);
            zmq_msg_recv(&m, s->accepts, 0);
            more = zmq_msg_more(&m);
            zmq_msg_close(&m);
        }
        if (event != ZMQ_EVENT_ACCEPTED || fd > INT32_MAX)
            continue;
        struct sockaddr_storage local;
        socklen_t len = sizeof(local);
        if (getsockname((int)fd, (struct sockaddr *)&local, &len) < 0)
            continue;
        int port = local.ss_family == AF_INET    ? ntohs(((struct sockaddr_in *)&local)->sin_port)
                   : local.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&local)->sin6_port)
                                                 : -1;
        struct linger reset = {.l_onoff = 1, .l_linger = 0};
        if (port == s->port)
            setsockopt((int)fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    }
}

struct hrm_server *hrm_server_new(void *zctx, const char *endpoint, const struct hrm_keypair *kp,
                                  struct hrm_authz *authz, struct hrm_error *err)
{
    struct hrm_server *s = hrm_calloc(1, sizeof(*s));
    s->authz = authz;
    /* The ZAP handler must exist before the first handshake. */
    s->zap = zmq_socket(zctx, ZMQ_REP);
    if (!s->zap || zmq_bind(s->zap, "inproc://zeromq.zap.01") != 0) {
        zerr(err, "ZAP handler");
        goto fail;
    }
    s->sock = zmq_socket(zctx, ZMQ_ROUTER);
    if (!s->sock) {
        zerr(err, "socket");
        goto fail;
    }
    set_int(s->sock, ZMQ_CURVE_SERVER, 1);
    zmq_setsockopt(s->sock, ZMQ_CURVE_SECRETKEY, kp->sec, strlen(kp->sec));
    zmq_setsockopt(s->sock, ZMQ_ZAP_DOMAIN, "hrm", 3);
    set_int(s->sock, ZMQ_ROUTER_MANDATORY, 1);
    set_int(s->sock, ZMQ_SNDHWM, SERVER_HWM);
    set_int(s->sock, ZMQ_RCVHWM, SERVER_HWM);
    set_int(s->sock, ZMQ_LINGER, 0);
    set_int(s->sock, ZMQ_BACKLOG, SERVER_BACKLOG);
    int64_t maxsz = HARD_MAX_BYTES;
    zmq_setsockopt(s->sock, ZMQ_MAXMSGSIZE, &maxsz, sizeof(maxsz));
    accepts_watch(s, zctx); /* before the bind: no connection is accepted unseen */
    if (zmq_bind(s->sock, endpoint) != 0) {
        int e = zmq_errno();
        hrm_errorf(err, -e, "cannot listen on %s: %s", endpoint, zmq_strerror(e));
        goto fail;
    }
    size_t len = sizeof(s->endpoint);
    zmq_getsockopt(s->sock, ZMQ_LAST_ENDPOINT, s->endpoint, &len);
    const char *colon = strrchr(s->endpoint, ':');
    s->port = colon ? atoi(colon + 1) : 0;
    zmq_msg_init(&s->payload);
    s->have_payload = true;
    return s;
fail:
    accepts_unwatch(s);
    if (s->sock)
        zmq_close(s->sock);
    if (s->zap)
        zmq_close(s->zap);
    hrm_free(s);
    return NULL;
}

void hrm_server_free(struct hrm_server *s)
{
    if (!s)
        return;
    if (s->have_payload)
        zmq_msg_close(&s->payload);
    accepts_unwatch(s);
    zmq_close(s->sock);
    zmq_close(s->zap);
    hrm_free(s);
}

const char *hrm_server_endpoint(const struct hrm_server *s)
{
    return s->endpoint;
}

void *hrm_server_zsock(struct hrm_server *s, int which)
{
    return which == 0 ? s->sock : s->zap;
}

/* One ZAP request (RFC 27): version, request id, domain, address, identity,
 * mechanism, credentials.  The reply's user id is the peer's public key, by
 * which hrm_server_recv finds its line of the allow-list (role and binding). */
static void zap_one(struct hrm_server *s)
{
    char frames[7][64];
    size_t lens[7] = {0};
    int n = 0, more = 1;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, s->zap, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            if (n == 0)
                return;
            break;
        }
        if (n < 7) {
            lens[n] = zmq_msg_size(&m) < 64 ? zmq_msg_size(&m) : 63;
            memcpy(frames[n], zmq_msg_data(&m), lens[n]);
            frames[n][lens[n]] = '\0';
        }
        n++;
        more = zmq_msg_more(&m);
        zmq_msg_close(&m);
    }
    const char *status = "400", *text = "not authorised", *user = "";
    char z85[HRM_KEY_Z85] = "?";
    if (n >= 7 && strcmp(frames[5], "CURVE") == 0 && lens[6] == 32) {
        zmq_z85_encode(z85, (const uint8_t *)frames[6], 32);
        if (hrm_authz_role(s->authz, z85)) {
            status = "200";
            text = "OK";
            user = z85;
        }
    }
    if (status[0] != '2')
        hrm_log(HRM_LOG_WARNING, "refused a peer from %s: key %s is not in the allow-list",
                n >= 4 ? frames[3] : "?", z85);
    const char *reply[6] = {"1.0", n >= 2 ? frames[1] : "", status, text, user, ""};
    size_t rlen[6] = {3, n >= 2 ? lens[1] : 0, 3, strlen(text), strlen(user), 0};
    for (int i = 0; i < 6; i++)
        zmq_send(s->zap, reply[i], rlen[i], i < 5 ? ZMQ_SNDMORE : 0);
}

void hrm_server_refresh_authz(struct hrm_server *s)
{
    struct hrm_error err;
    int rc = hrm_authz_refresh(s->authz, &err);
    if (rc > 0)
        hrm_log(HRM_LOG_NOTICE, "the allow-list changed: %zu keys admitted",
                hrm_authz_count(s->authz));
    else if (rc < 0)
        hrm_log(HRM_LOG_ERR, "%s; the previous allow-list stays", err.text);
}

void hrm_server_handle_zap(struct hrm_server *s)
{
    /* Bounded, but wide: an answer costs a key lookup, and every peer's handshake waits for
     * it (ZeroMQ holds the connection until then).  After a master restart every agent
     * hand-shakes at once; at 64 a turn, 5,000 of them waited ~80 turns of registrations. */
    accepts_reset_on_close(s); /* a connection is accepted before its handshake */
    for (int i = 0; i < 4096; i++) {
        int ev = 0;
        size_t len = sizeof(ev);
        zmq_getsockopt(s->zap, ZMQ_EVENTS, &ev, &len);
        if (!(ev & ZMQ_POLLIN))
            return;
        if (i == 0) /* a key added since (hrm keygen --node) is admitted without a restart */
            hrm_server_refresh_authz(s);
        zap_one(s);
    }
}

int hrm_server_recv(struct hrm_server *s, struct hrm_inmsg *m)
{
    zmq_msg_t idm;
    zmq_msg_init(&idm);
    if (zmq_msg_recv(&idm, s->sock, ZMQ_DONTWAIT) < 0) {
        int e = zmq_errno();
        zmq_msg_close(&idm);
        return e == EAGAIN ? -EAGAIN : -e;
    }
    m->idlen = zmq_msg_size(&idm) < sizeof(m->id) ? zmq_msg_size(&idm) : sizeof(m->id);
    memcpy(m->id, zmq_msg_data(&idm), m->idlen);
    bool more = zmq_msg_more(&idm);
    zmq_msg_close(&idm);
    m->data = NULL;
    m->len = 0;
    m->role = 0;
    memset(&m->key, 0, sizeof(m->key));
    m->extra_frames = false;
    if (!more)
        return 0; /* an empty message: the codec answers it like any bad frame */
    zmq_msg_close(&s->payload);
    zmq_msg_init(&s->payload);
    if (zmq_msg_recv(&s->payload, s->sock, ZMQ_DONTWAIT) < 0)
        return -zmq_errno();
    m->data = zmq_msg_data(&s->payload);
    m->len = zmq_msg_size(&s->payload);
    /* Looked up per message, not per connection: a key removed from the
     * allow-list since its handshake loses its role at once. */
    const char *uid = zmq_msg_gets(&s->payload, "User-Id");
    const struct hrm_authz_entry *e = uid ? hrm_authz_find(s->authz, uid) : NULL;
    if (e) {
        m->key = *e;
        m->role = e->role;
    }
    /* Drain any further frames: one message is one frame. */
    while (zmq_msg_more(&s->payload)) {
        m->extra_frames = true;
        zmq_msg_t x;
        zmq_msg_init(&x);
        int rc = zmq_msg_recv(&x, s->sock, ZMQ_DONTWAIT);
        bool again = rc >= 0 && zmq_msg_more(&x);
        zmq_msg_close(&x);
        if (!again)
            break;
    }
    return 0;
}

int hrm_server_send_raw(struct hrm_server *s, const unsigned char *id, size_t idlen,
                        const void *data, size_t len)
{
    if (zmq_send(s->sock, id, idlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return -zmq_errno();
    if (zmq_send(s->sock, data, len, ZMQ_DONTWAIT) < 0)
        return -zmq_errno();
    return 0;
}

int hrm_server_send(struct hrm_server *s, const unsigned char *id, size_t idlen,
                    const json_t *msg)
{
    size_t len;
    char *text = hrm_wire_dump(msg, &len);
    if (!text)
        return -ENOMEM;
    int rc = hrm_server_send_raw(s, id, idlen, text, len);
    free(text);
    return rc;
}

/* ---- connections ---- */

struct hrm_conn {
    void *zctx; /* borrowed: the monitor's socket is made in it */
    void *sock, *mon;
    char endpoint[256];
};

/* The connection's monitor, made before it connects.  Restarting a monitor once the
 * connection is under way (as this code did: every event first, then the link's only) races
 * with ZeroMQ's I/O thread reporting that connection's events under the same lock: with
 * thousands of agents made at once on a loaded host, a fleet's process hung there before its
 * first agent registered; and the first monitor's two sockets, closed by ZeroMQ's reaper
 * thread later, counted against the context's socket limit meanwhile ("Too many open
 * files"). */
static int conn_monitor(struct hrm_conn *c, enum hrm_conn_watch watch)
{
    if (watch == HRM_CONN_WATCH_NONE)
        return 0;
    char mon[64];
    snprintf(mon, sizeof(mon), "inproc://hrm-mon-%p", (void *)c);
    int events = watch == HRM_CONN_WATCH_LINK
                     ? ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                     : ZMQ_EVENT_ALL;
    if (zmq_socket_monitor(c->sock, mon, events) != 0)
        return -zmq_errno();
    c->mon = zmq_socket(c->zctx, ZMQ_PAIR);
    if (!c->mon || zmq_connect(c->mon, mon) != 0) {
        int e = zmq_errno();
        zmq_socket_monitor(c->sock, NULL, 0);
        if (c->mon)
            zmq_close(c->mon);
        c->mon = NULL;
        return -e;
    }
    return 0;
}

struct hrm_conn *hrm_conn_new_watching(void *zctx, const char *endpoint, const char *master_pub,
                                       const struct hrm_keypair *kp, enum hrm_conn_watch watch,
                                       int *watch_rc, struct hrm_error *err)
{
    struct hrm_conn *c = hrm_calloc(1, sizeof(*c));
    snprintf(c->endpoint, sizeof(c->endpoint), "%s", endpoint);
    c->zctx = zctx;
    c->sock = zmq_socket(zctx, ZMQ_DEALER);
    if (!c->sock) {
        zerr(err, "socket");
        hrm_free(c);
        return NULL;
    }
    zmq_setsockopt(c->sock, ZMQ_CURVE_SERVERKEY, master_pub, strlen(master_pub));
    zmq_setsockopt(c->sock, ZMQ_CURVE_PUBLICKEY, kp->pub, strlen(kp->pub));
    zmq_setsockopt(c->sock, ZMQ_CURVE_SECRETKEY, kp->sec, strlen(kp->sec));
    set_int(c->sock, ZMQ_LINGER, 2000); /* a last report gets its chance on exit */
    set_int(c->sock, ZMQ_SNDHWM, SERVER_HWM);
    set_int(c->sock, ZMQ_RCVHWM, SERVER_HWM);
    set_int(c->sock, ZMQ_RECONNECT_IVL, 100);
    set_int(c->sock, ZMQ_RECONNECT_IVL_MAX, 1000);
    int64_t maxsz = HARD_MAX_BYTES;
    zmq_setsockopt(c->sock, ZMQ_MAXMSGSIZE, &maxsz, sizeof(maxsz));
    int rc = conn_monitor(c, watch);
    if (watch_rc)
        *watch_rc = rc;
    if (zmq_connect(c->sock, endpoint) != 0) {
        int e = zmq_errno();
        hrm_errorf(err, -e, "bad master address '%s': %s", endpoint, zmq_strerror(e));
        hrm_conn_free(c);
        return NULL;
    }
    return c;
}

struct hrm_conn *hrm_conn_new(void *zctx, const char *endpoint, const char *master_pub,
                              const struct hrm_keypair *kp, struct hrm_error *err)
{
    return hrm_conn_new_watching(zctx, endpoint, master_pub, kp, HRM_CONN_WATCH_ALL, NULL, err);
}

void hrm_conn_free(struct hrm_conn *c)
{
    if (!c)
        return;
    if (c->mon) {
        zmq_socket_monitor(c->sock, NULL, 0);
        zmq_close(c->mon);
    }
    zmq_close(c->sock);
    hrm_free(c);
}

/* One event of a socket monitor (its number), or -1 when none could be read (flags as
 * zmq_msg_recv's). The endpoint frame that follows is read and dropped. */
static int monitor_event(void *mon, int flags)
{
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, mon, flags) < 0) {
        zmq_msg_close(&m);
        return -1;
    }
    uint16_t event = 0;
    if (zmq_msg_size(&m) >= 2)
        memcpy(&event, zmq_msg_data(&m), 2);
    bool more = zmq_msg_more(&m);
    zmq_msg_close(&m);
    while (more) {
        zmq_msg_init(&m);
        zmq_msg_recv(&m, mon, 0);
        more = zmq_msg_more(&m);
        zmq_msg_close(&m);
    }
    return event;
}

int hrm_conn_link_events(struct hrm_conn *c)
{
    int seen = 0;
    while (c->mon) {
        int event = monitor_event(c->mon, ZMQ_DONTWAIT);
        if (event < 0)
            break;
        if (event == ZMQ_EVENT_DISCONNECTED)
            seen = HRM_LINK_LOST; /* a handshake before this loss is over */
        else if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            seen |= HRM_LINK_UP;
    }
    return seen;
}

void *hrm_conn_zsock(struct hrm_conn *c)
{
    return c->sock;
}

void *hrm_conn_monitor_zsock(struct hrm_conn *c)
{
    return c->mon;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int hrm_conn_wait_ready(struct hrm_conn *c, int timeout_ms, struct hrm_error *err)
{
    if (!c->mon)
        return 0; /* no monitor: let the request's own timeout speak */
    int64_t deadline = mono_ms() + timeout_ms;
    int refused = 0;
    for (;;) {
        int64_t left = deadline - mono_ms();
        if (left <= 0)
            break;
        zmq_pollitem_t it = {c->mon, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, (long)left) <= 0)
            continue;
        int event = monitor_event(c->mon, 0);
        if (event < 0)
            break;
        switch (event) {
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
            return 0;
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
            return hrm_errorf(err, -EACCES,
                              "the master at %s refused this key (not in its allow-list)",
                              c->endpoint);
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
            return hrm_errorf(err, -EACCES,
                              "the handshake with %s failed (wrong master key?)", c->endpoint);
        case ZMQ_EVENT_CONNECT_RETRIED:
            /* Connection refused; a master that is starting gets a few tries. */
            if (++refused >= 3)
                return hrm_errorf(err, -ECONNREFUSED, "no master at %s (is it running?)",
                                  c->endpoint);
            break;
        default:
            break;
        }
    }
    return hrm_errorf(err, -ETIMEDOUT, "no answer from the master at %s within %d ms",
                      c->endpoint, timeout_ms);
}

int hrm_conn_send_raw(struct hrm_conn *c, const void *data, size_t len)
{
    if (zmq_send(c->sock, data, len, ZMQ_DONTWAIT) < 0)
        return -zmq_errno();
    return 0;
}

int hrm_conn_send(struct hrm_conn *c, const json_t *msg)
{
    size_t len;
    char *text = hrm_wire_dump(msg, &len);
    if (!text)
        return -ENOMEM;
    int rc = hrm_conn_send_raw(c, text, len);
    free(text);
    return rc;
}

int hrm_conn_recv(struct hrm_conn *c, int timeout_ms, json_t **out, struct hrm_error *err)
{
    return hrm_conn_recv_hot(c, timeout_ms, NULL, NULL, out, err);
}

int hrm_conn_recv_hot(struct hrm_conn *c, int timeout_ms, hrm_conn_hot_f *hot, void *ctx,
                      json_t **out, struct hrm_error *err)
{
    *out = NULL;
    /* Without a wait, no poll: zmq_poll costs a poll(2) on the socket's descriptor and then
     * ZeroMQ's own look at its mailbox (getpid and another poll(2)) for every message of a
     * burst; a receive that does not wait takes a message already queued with no system call
     * and looks at the mailbox only when the queue is empty. */
    if (timeout_ms != 0) {
        zmq_pollitem_t it = {c->sock, 0, ZMQ_POLLIN, 0};
        int n = zmq_poll(&it, 1, timeout_ms);
        if (n < 0)
            return hrm_errorf(err, -zmq_errno(), "poll: %s", zmq_strerror(zmq_errno()));
        if (n == 0)
            return -ETIMEDOUT;
    }
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, c->sock, ZMQ_DONTWAIT) < 0) {
        int e = zmq_errno();
        zmq_msg_close(&m);
        if (timeout_ms == 0 && e != EAGAIN)
            return hrm_errorf(err, -e, "receive: %s", zmq_strerror(e));
        return -ETIMEDOUT;
    }
    if (hot && hot(ctx, zmq_msg_data(&m), zmq_msg_size(&m))) {
        zmq_msg_close(&m);
        return 1;
    }
    struct hrm_wire_fault f;
    int type = hrm_wire_decode_from(zmq_msg_data(&m), zmq_msg_size(&m), HRM_PEER_FROM_MASTER,
                                    out, &f);
    zmq_msg_close(&m);
    if (type < 0)
        return hrm_errorf(err, -EPROTO, "bad message from the master: %s", f.message);
    return 0;
}
