/* Transport: ZeroMQ ROUTER (master) / DEALER (agents, clients) sockets with CURVE keys and a ZAP allow-list. */
#ifndef HRM_TRANSPORT_H
#define HRM_TRANSPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/error.h"

/*
 * Keys.  `hrm keygen DIR` writes four CURVE key pairs: master, agent, client
 * and scheduler (DIR/<name>.key, mode 0600, holds "public Z85" and "secret
 * Z85" lines; DIR/<name>.pub holds the public key alone) and DIR/authorized,
 * the master's allow-list: lines "ROLE Z85 [node=NAME | user=ACCOUNT]" ('#'
 * starts a comment).  An agent key with node=NAME may register only as that
 * node (without it, the master binds it to the name of its first
 * registration); a client key's user=ACCOUNT is the account its jobs run as
 * (required).  `hrm keygen --node NAME` adds DIR/agent-NAME.key and
 * `--client NAME --user ACCOUNT` DIR/client-NAME.key.  A peer whose key is
 * not listed is refused during the handshake and logged; a listed one is
 * tagged with its role, which the master's handler table checks for every
 * message.  A secret key that others may read is refused when loaded.
 */
#define HRM_KEY_Z85 41      /* 40 characters and a NUL */
#define HRM_KEY_NAME_MAX 47 /* a node name or an account bound to a key */

struct hrm_keypair {
    char pub[HRM_KEY_Z85];
    char sec[HRM_KEY_Z85];
};

/* Writes the key files into dir (created 0700 if missing).  Refuses to
 * overwrite existing keys unless force.  The client key acts for client_user,
 * or for the account running this process when NULL.  0 or a negative code
 * with detail. */
int hrm_keys_generate(const char *dir, bool force, const char *client_user,
                      struct hrm_error *err);
/* The HTTP API's bearer tokens (docs/runtime.md, "HTTP API"): DIR/http.token (read-write) and
 * DIR/http-ro.token (read-only), 0600, written by hrm_keys_generate too.  An existing token is
 * kept unless force.  0 or a negative code with detail. */
#define HRM_HTTP_TOKEN_FILE "http.token"
#define HRM_HTTP_RO_TOKEN_FILE "http-ro.token"
int hrm_keys_http_tokens(const char *dir, bool force, struct hrm_error *err);
/* Adds the scheduler key pair (hrm sched) to a key folder made before it existed: the pair and
 * its line in authorized; 0 when it is there already. */
int hrm_keys_add_scheduler(const char *dir, struct hrm_error *err);
/* Adds DIR/agent-NODE.key/.pub and "agent KEY node=NODE" to authorized.  An
 * existing pair is refused (-EEXIST) unless force, which replaces it and its line. */
int hrm_keys_add_node(const char *dir, const char *node, bool force, struct hrm_error *err);
/* agent-PREFIX1..PREFIXcount key pairs, each bound to its node, with one rewrite of
 * authorized (a fleet of simulated agents); an existing pair is an error. */
int hrm_keys_add_nodes(const char *dir, const char *prefix, int32_t count,
                       struct hrm_error *err);
/* Adds DIR/client-NAME.key/.pub and "client KEY user=USER" to authorized, as above; with admin,
 * "client KEY user=USER admin" (the key may act on every account's jobs). */
int hrm_keys_add_client(const char *dir, const char *name, const char *user, bool admin,
                        bool force, struct hrm_error *err);
/* A node name or account that can be bound to a key: 1..HRM_KEY_NAME_MAX of
 * A-Z a-z 0-9 . _ -, not starting with . or -. */
bool hrm_keys_valid_name(const char *s);
/* Loads DIR/<name>.key (pub and sec) or, with only_public, DIR/<name>.pub.  A
 * .key file that its group or others may read is refused (-EPERM). */
int hrm_keys_load(const char *dir, const char *name, bool only_public, struct hrm_keypair *kp,
                  struct hrm_error *err);

/* One line of authorized. */
struct hrm_authz_entry {
    int role;                          /* HRM_PEER_* */
    char pub[HRM_KEY_Z85];
    char bound[HRM_KEY_NAME_MAX + 1];  /* agent: node=; client: user=; "" when not given */
    bool admin; /* client: "admin" on its line: may cancel, and read the output and environment
                 * of, every account's jobs (others: their own account's only) */
};

struct hrm_authz; /* the allow-list */
/* Reads the allow-list; a bad line (a client key without user=, an unknown
 * option, a key listed twice, one node= for two keys) fails with its line. */
struct hrm_authz *hrm_authz_load(const char *path, struct hrm_error *err);
/* Re-reads the file if it changed since it was read: 1 reloaded, 0 unchanged,
 * negative when the new version is refused (the previous list stays, and that
 * version is not tried again). */
int hrm_authz_refresh(struct hrm_authz *a, struct hrm_error *err);
void hrm_authz_free(struct hrm_authz *a);
/* An allow-list kept in memory, not read from a file (an agent's list of the scheduler keys
 * the master declared): empty until hrm_authz_set, which replaces its keys with a copy of
 * keys[0..n).  hrm_authz_refresh leaves it as it is. */
struct hrm_authz *hrm_authz_new_list(void);
void hrm_authz_set(struct hrm_authz *a, const struct hrm_authz_entry *keys, size_t n);
/* Entry i (0 .. hrm_authz_count - 1) in the order of the keys, or NULL. */
const struct hrm_authz_entry *hrm_authz_at(const struct hrm_authz *a, size_t i);
/* The entry of a Z85 public key, or NULL if not listed (valid until the next refresh). */
const struct hrm_authz_entry *hrm_authz_find(const struct hrm_authz *a, const char *z85);
/* Role (HRM_PEER_*) of a Z85 public key, or 0 if not listed. */
int hrm_authz_role(const struct hrm_authz *a, const char *z85);
/* The agent key bound to node by node=, or NULL. */
const struct hrm_authz_entry *hrm_authz_node_key(const struct hrm_authz *a, const char *node);
size_t hrm_authz_count(const struct hrm_authz *a);
/* Changes each time the list is replaced (a reload or hrm_authz_set), so a holder of what was
 * derived from it knows when to derive it again. */
uint64_t hrm_authz_version(const struct hrm_authz *a);

/* One ZeroMQ context per process, shared by its sockets, with one I/O thread. */
void *hrm_zctx_new(void);
/* The same with HRM_ZCTX_IO_THREADS_PER_CPU I/O threads per CPU, up to HRM_ZCTX_IO_THREADS_MAX:
 * for a process that talks to thousands of peers (the master; a fleet of simulated agents),
 * whose I/O threads do every connection's CURVE handshake, encryption and TCP work.  ZeroMQ gives each new connection to
 * the I/O thread least loaded when it is accepted (its descriptors, counted once that thread
 * has taken the connection up), so thousands of agents reconnecting at once (a master restart)
 * hand-shake on every core of an idle host; on a loaded one a burst of accepts can all go to a
 * thread that is behind (docs/benchmarks.md, "A restart's handshakes on the I/O threads"). */
void *hrm_zctx_new_wide(void);
#define HRM_ZCTX_IO_THREADS_MAX 4
/* Two per CPU, not one: a restart's thousands of CURVE handshakes run in parallel only on
 * different I/O threads, and a burst of them goes to the thread that is behind; with two per
 * CPU a 5,000-agent restart beside two busy loops took 3.57 s on average, against 4.26 s with
 * one (seven alternated pairs; docs/benchmarks.md, "A restart's handshakes on the I/O threads"). */
#define HRM_ZCTX_IO_THREADS_PER_CPU 2
void hrm_zctx_free(void *zctx);

/* ---- the master's side ---- */

struct hrm_server;

/* A received message.  data is valid until the next hrm_server_recv. */
struct hrm_inmsg {
    unsigned char id[256]; /* the peer's routing id, for the reply */
    size_t idlen;
    int role;              /* HRM_PEER_* from its key; 0 when the key was revoked since */
    struct hrm_authz_entry key; /* the sender's line of authorized (a copy) */
    const char *data;
    size_t len;
    bool extra_frames;     /* the peer sent more than one payload frame */
};

/*
 * Binds a CURVE ROUTER on endpoint ("tcp://127.0.0.1:*" picks a free port) and
 * a ZAP handler that admits the keys of authz (borrowed, outlives the server;
 * the handler refreshes it when the file changes, so keys added or removed
 * take effect without a restart).
 * zctx is borrowed.
 */
struct hrm_server *hrm_server_new(void *zctx, const char *endpoint, const struct hrm_keypair *kp,
                                  struct hrm_authz *authz, struct hrm_error *err);
void hrm_server_free(struct hrm_server *s);
const char *hrm_server_endpoint(const struct hrm_server *s); /* as bound, with the real port */
/* The two ZeroMQ sockets to poll for ZMQ_POLLIN: [0] messages, [1] ZAP requests. */
void *hrm_server_zsock(struct hrm_server *s, int which);
/* Answers pending handshakes (allow or refuse, refusals logged).  Never blocks. */
void hrm_server_handle_zap(struct hrm_server *s);
/* Re-reads the allow-list if its file changed (logged either way).  The handshakes do it; a
 * holder calls it too where a change must take effect though no peer hand-shakes (a key
 * removed while its peer stays connected). */
void hrm_server_refresh_authz(struct hrm_server *s);
/* Next message, without blocking: 0, -EAGAIN when none, other negative on error. */
int hrm_server_recv(struct hrm_server *s, struct hrm_inmsg *m);
/* Sends msg to a peer; never blocks: a peer that is gone or too far behind
 * loses the message (-EHOSTUNREACH / -EAGAIN), which callers treat as the
 * peer's loss, not theirs. */
int hrm_server_send(struct hrm_server *s, const unsigned char *id, size_t idlen,
                    const json_t *msg);
/* Sends raw bytes (tests: malformed frames are built by hand). */
int hrm_server_send_raw(struct hrm_server *s, const unsigned char *id, size_t idlen,
                        const void *data, size_t len);

/* ---- agents' and clients' side ---- */

struct hrm_conn;

/* Connects a CURVE DEALER to endpoint, authenticating with kp against the
 * master's public key.  ZeroMQ reconnects by itself when the master restarts.
 * Every event of the connection is watched (hrm_conn_wait_ready). */
struct hrm_conn *hrm_conn_new(void *zctx, const char *endpoint, const char *master_pub,
                              const struct hrm_keypair *kp, struct hrm_error *err);
enum hrm_conn_watch {
    HRM_CONN_WATCH_ALL,  /* every event: hrm_conn_wait_ready */
    /* the link's losses and returns only (hrm_conn_link_events): one message per connection
     * and per loss, cheap enough for thousands of connections in one process */
    HRM_CONN_WATCH_LINK,
    /* nothing: two sockets and their descriptors fewer (hrm_conn_wait_ready returns at once) */
    HRM_CONN_WATCH_NONE,
};
/* hrm_conn_new with what to watch, set up before the connection starts.  *watch_rc (if not
 * NULL): 0, or -errno when the monitor could not be made (then nothing is watched, and the
 * connection is made all the same). */
struct hrm_conn *hrm_conn_new_watching(void *zctx, const char *endpoint, const char *master_pub,
                                       const struct hrm_keypair *kp, enum hrm_conn_watch watch,
                                       int *watch_rc, struct hrm_error *err);
void hrm_conn_free(struct hrm_conn *c);
void *hrm_conn_zsock(struct hrm_conn *c);
/* The socket of its monitor (HRM_CONN_WATCH_ALL or _LINK), or NULL: a loop that waits on
 * descriptors polls it too, so a drop is seen when it happens, not at the next timer. */
void *hrm_conn_monitor_zsock(struct hrm_conn *c);
enum { HRM_LINK_LOST = 1, HRM_LINK_UP = 2 };
/* What happened to the link since the last call, without waiting: HRM_LINK_LOST (an
 * established connection dropped), HRM_LINK_UP (a handshake succeeded after the last loss, if
 * any), both, or 0.  Only with HRM_CONN_WATCH_LINK. */
int hrm_conn_link_events(struct hrm_conn *c);
/* Waits for the handshake's outcome: 0 admitted, -EACCES refused (key not
 * authorised), -ECONNREFUSED nobody listens, -ETIMEDOUT no answer. */
int hrm_conn_wait_ready(struct hrm_conn *c, int timeout_ms, struct hrm_error *err);
int hrm_conn_send(struct hrm_conn *c, const json_t *msg);
int hrm_conn_send_raw(struct hrm_conn *c, const void *data, size_t len);
/* Next message within timeout_ms (0: do not wait; -1: forever): 0 with *out
 * (new reference) or -ETIMEDOUT; a frame that does not decode gives -EPROTO
 * with the reason in err. */
int hrm_conn_recv(struct hrm_conn *c, int timeout_ms, json_t **out, struct hrm_error *err);
/* As hrm_conn_recv, but the frame's text goes to hot first: when it returns true it has dealt
 * with the frame (read without a tree), and this returns 1 with *out NULL; otherwise the frame
 * is decoded and checked as hrm_conn_recv does, with the same errors. */
typedef bool hrm_conn_hot_f(void *ctx, const char *buf, size_t len);
int hrm_conn_recv_hot(struct hrm_conn *c, int timeout_ms, hrm_conn_hot_f *hot, void *ctx,
                      json_t **out, struct hrm_error *err);

#endif
