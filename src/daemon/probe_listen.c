/* An agent's probe listener: scheduler processes' holds and releases straight from them, on a CURVE socket that admits the scheduler keys the master declared. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/log.h"
#include "hrm/wire.h"
#include "probe_listen.h"

/*
 * P4's probing round is a conversation between a scheduler and the nodes:
 * the master has nothing to record in it (a hold expires by itself, and the
 * run that uses it still goes through the master, which records the
 * placement first).  So a scheduler process that knows this node's endpoint
 * and key (sched_welcome, sched_node) sends its hold and del here, and the
 * reply goes back on the same connection.
 *
 * Trust: the socket is a CURVE server with the agent's own key pair, so the
 * scheduler knows it talks to the node the master named; the handshake admits
 * only the scheduler keys the master listed in its welcome (the scheduler
 * roles of its allow-list), and every message is checked again against the
 * current list.  A scheduler key may speak for any instance address: every
 * scheduler process is trusted alike, as by the master.
 */

#define COMPLAINTS_PER_MINUTE 10
#define COMPLAINT_WINDOW_US 60000000

struct probe_listen {
    struct hrm_server *srv;
    struct hrm_authz *keys; /* the declared scheduler keys */
    bool admitted;          /* the master has declared them: handshakes are answered */
    int32_t nqueues;
    char endpoint[300];
    int64_t taken, refused;
    int64_t window_start_us; /* the complaints' log window (monotonic) */
    int32_t said, unsaid;
    /* a batch being taken apart: its items, the next one, its sender */
    json_t *batch;
    size_t batch_next;
    struct hrm_inmsg batch_from;
    /* answers to one sender, sent as one frame by probe_listen_flush */
    struct pending {
        unsigned char id[256];
        size_t idlen;
        json_t *msgs;
    } *out;
    size_t nout, cap_out;
};

struct probe_listen *probe_listen_new(void *zctx, const char *endpoint,
                                      const struct hrm_keypair *kp, struct hrm_error *err)
{
    struct probe_listen *pl = hrm_calloc(1, sizeof(*pl));
    pl->keys = hrm_authz_new_list();
    if (!(pl->srv = hrm_server_new(zctx, endpoint, kp, pl->keys, err))) {
        hrm_authz_free(pl->keys);
        hrm_free(pl);
        return NULL;
    }
    /* A wildcard address is no place to connect to: the host's name is. */
    const char *bound = hrm_server_endpoint(pl->srv);
    const char *port = strrchr(bound, ':');
    if (strncmp(bound, "tcp://0.0.0.0:", 14) == 0 && port) {
        char host[256] = "localhost";
        gethostname(host, sizeof(host) - 1);
        snprintf(pl->endpoint, sizeof(pl->endpoint), "tcp://%.200s%s", host, port);
    } else {
        snprintf(pl->endpoint, sizeof(pl->endpoint), "%s", bound);
    }
    return pl;
}

void probe_listen_free(struct probe_listen *pl)
{
    if (!pl)
        return;
    hrm_log(HRM_LOG_INFO, "probes taken straight from scheduler processes: %lld (%lld refused)",
            (long long)pl->taken, (long long)pl->refused);
    json_decref(pl->batch);
    for (size_t i = 0; i < pl->nout; i++)
        json_decref(pl->out[i].msgs);
    hrm_free(pl->out);
    hrm_server_free(pl->srv);
    hrm_authz_free(pl->keys);
    hrm_free(pl);
}

const char *probe_listen_endpoint(const struct probe_listen *pl)
{
    return pl->endpoint;
}

void probe_listen_admit(struct probe_listen *pl, const json_t *keys, int32_t nqueues)
{
    size_t n = json_array_size(keys), k = 0, i;
    struct hrm_authz_entry *e = hrm_calloc(n ? n : 1, sizeof(*e));
    const json_t *v;
    json_array_foreach(keys, i, v)
    {
        const char *z = json_string_value(v);
        if (!z || strlen(z) != HRM_KEY_Z85 - 1) {
            hrm_log(HRM_LOG_WARNING, "welcome: sched_keys[%zu] is no Z85 public key; skipped", i);
            continue;
        }
        bool dup = false;
        for (size_t j = 0; j < k; j++)
            dup = dup || strcmp(e[j].pub, z) == 0;
        if (dup)
            continue;
        e[k].role = HRM_PEER_SCHED;
        snprintf(e[k].pub, sizeof(e[k].pub), "%s", z);
        k++;
    }
    bool same = hrm_authz_count(pl->keys) == k;
    for (size_t j = 0; same && j < k; j++)
        same = hrm_authz_find(pl->keys, e[j].pub) != NULL;
    hrm_authz_set(pl->keys, e, k);
    hrm_free(e);
    pl->nqueues = nqueues > 0 ? nqueues : 1;
    if (!pl->admitted || !same) /* said again when a welcome changes them */
        hrm_log(HRM_LOG_INFO, "probes from scheduler processes taken on %s (%zu scheduler key%s)",
                pl->endpoint, k, k == 1 ? "" : "s");
    pl->admitted = true;
}

size_t probe_listen_zsocks(struct probe_listen *pl, void *socks[2])
{
    socks[0] = hrm_server_zsock(pl->srv, 0);
    socks[1] = hrm_server_zsock(pl->srv, 1);
    return pl->admitted ? 2 : 1;
}

bool probe_listen_expecting(const struct probe_listen *pl)
{
    return pl->batch || hrm_authz_count(pl->keys) > 0;
}

/* A probe this node will not take: the sender hears why; the log says it, within bounds. */
static void refuse(struct probe_listen *pl, const struct hrm_inmsg *in, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void refuse(struct probe_listen *pl, const struct hrm_inmsg *in, const char *fmt, ...)
{
    char text[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    pl->refused++;
    int64_t now = hrm_mono_us();
    if (now - pl->window_start_us >= COMPLAINT_WINDOW_US) {
        if (pl->unsaid > 0)
            hrm_log(HRM_LOG_WARNING, "%d more probes refused in the last minute", pl->unsaid);
        pl->window_start_us = now;
        pl->said = pl->unsaid = 0;
    }
    if (pl->said++ < COMPLAINTS_PER_MINUTE)
        hrm_log(HRM_LOG_WARNING, "refused a probe: %s", text);
    else
        pl->unsaid++;
    json_t *e = hrm_wire_error(HRM_WERR_BAD_FIELD, -1, "%s", text);
    hrm_server_send(pl->srv, in->id, in->idlen, e);
    json_decref(e);
}

/* One message (a batch's item or a frame of its own) of type: 1 a probe in *out; 0 refused
 * (answered). */
static int check(struct probe_listen *pl, const struct hrm_inmsg *in, int type, const json_t *msg,
                 struct hrm_msg *out)
{
    struct hrm_error err;
    int rc = 0;
    if (type != HRM_MSG_HOLD && type != HRM_MSG_DEL)
        refuse(pl, in, "'%s': only hold and del come straight to a node (a run goes through "
               "the master)", hrm_wire_name(type));
    else if (hrm_wire_to_msg(type, msg, out, &err) < 0)
        refuse(pl, in, "%s", err.text);
    else if (out->from > HRM_ADDR_SCHED0)
        refuse(pl, in, "%s: 'from' (%d) is no scheduler instance", hrm_wire_name(type),
               (int)out->from);
    else if (type == HRM_MSG_HOLD && (out->node < 0 || out->node >= pl->nqueues))
        refuse(pl, in, "hold: queue %d out of range (this cluster has %d execution queue%s)",
               (int)out->node, (int)pl->nqueues, pl->nqueues == 1 ? "" : "s");
    else
        rc = 1;
    return rc;
}

/* The next item of the batch being taken apart: 1 a probe in *out, 0 none left. */
static int batch_item(struct probe_listen *pl, struct hrm_msg *out)
{
    while (pl->batch) {
        json_t *items = json_object_get(pl->batch, "msgs");
        if (pl->batch_next >= json_array_size(items)) {
            json_decref(pl->batch);
            pl->batch = NULL;
            break;
        }
        const json_t *item = json_array_get(items, pl->batch_next++);
        struct hrm_wire_fault fault;
        int type = hrm_wire_check_item(item, &fault);
        if (type < 0)
            refuse(pl, &pl->batch_from, "%s", fault.message);
        else if (check(pl, &pl->batch_from, type, item, out))
            return 1;
    }
    return 0;
}

int probe_listen_next(struct probe_listen *pl, struct probe_in *in)
{
    /* Before the master's welcome no handshake is answered, so no message can have come: the
     * look at the socket (getpid and a poll(2) in ZeroMQ) would find nothing. */
    if (!pl->batch && !pl->admitted)
        return 0;
    if (!pl->batch)
        hrm_server_handle_zap(pl->srv);
    for (;;) {
        if (batch_item(pl, &in->msg)) {
            memcpy(in->id, pl->batch_from.id, pl->batch_from.idlen);
            in->idlen = pl->batch_from.idlen;
            pl->taken++;
            return 1;
        }
        struct hrm_inmsg m;
        if (hrm_server_recv(pl->srv, &m) < 0)
            return 0;
        if (m.extra_frames) {
            refuse(pl, &m, "a message is one frame");
            continue;
        }
        if (m.role != HRM_PEER_SCHED) {
            refuse(pl, &m, "key %s is not a scheduler key the master declared",
                   m.key.pub[0] ? m.key.pub : "(revoked since its handshake)");
            continue;
        }
        json_t *msg;
        struct hrm_wire_fault fault;
        int type = hrm_wire_decode_from(m.data ? m.data : "", m.len, HRM_PEER_SCHED, &msg,
                                        &fault);
        if (type < 0) {
            refuse(pl, &m, "%s", fault.message);
            continue;
        }
        if (type == HRM_WIRE_BATCH) { /* a scheduler's probes to this node in one of its turns */
            pl->batch = msg;
            pl->batch_next = 0;
            pl->batch_from = m;
            continue;
        }
        int ok = check(pl, &m, type, msg, &in->msg);
        json_decref(msg);
        if (!ok)
            continue;
        memcpy(in->id, m.id, m.idlen);
        in->idlen = m.idlen;
        pl->taken++;
        return 1;
    }
}

int probe_listen_send(struct probe_listen *pl, const struct probe_in *to, const json_t *msg)
{
    struct pending *p = NULL;
    for (size_t i = 0; i < pl->nout && !p; i++)
        if (pl->out[i].idlen == to->idlen && memcmp(pl->out[i].id, to->id, to->idlen) == 0)
            p = &pl->out[i];
    if (!p) {
        HRM_GROW(pl->out, pl->cap_out, pl->nout + 1);
        p = &pl->out[pl->nout++];
        memcpy(p->id, to->id, to->idlen);
        p->idlen = to->idlen;
        p->msgs = json_array();
    }
    json_array_append(p->msgs, (json_t *)msg);
    return 0;
}

void probe_listen_flush(struct probe_listen *pl)
{
    for (size_t i = 0; pl && i < pl->nout; i++) {
        struct pending *p = &pl->out[i];
        size_t k = json_array_size(p->msgs), len;
        char *text = k > 1 ? hrm_wire_dump_batch(p->msgs, &len) : NULL;
        if (text)
            hrm_server_send_raw(pl->srv, p->id, p->idlen, text, len);
        for (size_t j = 0; !text && j < k; j++) /* one, or too many for a frame */
            hrm_server_send(pl->srv, p->id, p->idlen, json_array_get(p->msgs, j));
        free(text);
        json_decref(p->msgs);
    }
    if (pl)
        pl->nout = 0;
}

void probe_listen_counts(const struct probe_listen *pl, int64_t *taken, int64_t *refused)
{
    *taken = pl->taken;
    *refused = pl->refused;
}
