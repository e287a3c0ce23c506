/* hrm sched's direct connections to the agents' probe listeners: holds and dels straight to a node, its replies straight back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/log.h"
#include "hrm/wire.h"
#include "sched_probe.h"

/*
 * The master names each node's probe endpoint and key (sched_welcome,
 * sched_node; docs/protocol.md, "Scheduler processes").  A connection is a
 * CURVE client with the process's scheduler key and the agent's key as the
 * server's: the agent admits the scheduler keys the master declared to it,
 * and this process knows it talks to that node.  Connections are made on the
 * first probe to a node and closed when the node goes down or its endpoint
 * changes; ZeroMQ reconnects by itself while the node is up.
 */

struct sprobe {
    char ep[256];
    char pub[HRM_KEY_Z85];
    struct hrm_conn *conn; /* NULL until the first probe */
    json_t *out;           /* this turn's probes to the node, sent as one frame */
};

struct sched_probes {
    void *zctx;
    const struct hrm_keypair *mine; /* borrowed from the process (struct schedp) */
    bool off;
    struct sprobe *nodes;
    size_t cap;
    size_t next; /* where the round-robin of sched_probes_recv starts */
    int64_t sent;
};

struct sched_probes *sched_probes_new(void *zctx, const struct hrm_keypair *mine, bool off)
{
    struct sched_probes *sp = hrm_calloc(1, sizeof(*sp));
    sp->zctx = zctx;
    sp->mine = mine;
    sp->off = off;
    return sp;
}

static void close_node(struct sprobe *s)
{
    hrm_conn_free(s->conn);
    s->conn = NULL;
    json_decref(s->out);
    s->out = NULL;
}

void sched_probes_clear(struct sched_probes *sp)
{
    for (size_t n = 0; sp && n < sp->cap; n++) {
        close_node(&sp->nodes[n]);
        sp->nodes[n].ep[0] = '\0';
    }
}

void sched_probes_free(struct sched_probes *sp)
{
    if (!sp)
        return;
    sched_probes_clear(sp);
    hrm_free(sp->nodes);
    hrm_free(sp);
}

void sched_probes_set(struct sched_probes *sp, int32_t n, const json_t *ep, const json_t *pub)
{
    const char *e = json_string_value(ep), *k = json_string_value(pub);
    if (!sp || n < 0 || sp->off)
        return;
    if (!e || !k || strncmp(e, "tcp://", 6) != 0 || strlen(e) >= sizeof(sp->nodes[0].ep) ||
        strlen(k) != HRM_KEY_Z85 - 1)
        e = k = ""; /* none (an older agent, or one that does not listen): the relay */
    if ((size_t)n >= sp->cap) {
        size_t had = sp->cap;
        HRM_GROW(sp->nodes, sp->cap, (size_t)n + 1);
        memset(sp->nodes + had, 0, (sp->cap - had) * sizeof(*sp->nodes));
    }
    struct sprobe *s = &sp->nodes[n];
    if (strcmp(s->ep, e) == 0 && strcmp(s->pub, k) == 0)
        return;
    close_node(s);
    snprintf(s->ep, sizeof(s->ep), "%s", e);
    snprintf(s->pub, sizeof(s->pub), "%s", k);
    if (e[0])
        hrm_log(HRM_LOG_DEBUG, "node %d takes probes directly on %s", n, e);
}

void sched_probes_down(struct sched_probes *sp, int32_t n)
{
    if (sp && n >= 0 && (size_t)n < sp->cap)
        close_node(&sp->nodes[n]);
}

bool sched_probes_send(struct sched_probes *sp, int32_t n, const json_t *msg)
{
    if (!sp || n < 0 || (size_t)n >= sp->cap || !sp->nodes[n].ep[0])
        return false;
    struct sprobe *s = &sp->nodes[n];
    if (!s->conn) {
        struct hrm_error err;
        /* One socket per node; its losses need no watching. */
        if (!(s->conn = hrm_conn_new_watching(sp->zctx, s->ep, s->pub, sp->mine,
                                              HRM_CONN_WATCH_NONE, NULL, &err))) {
            hrm_log(HRM_LOG_WARNING, "node %d: cannot connect to %s (%s): its probes go "
                    "through the master", n, s->ep, err.text);
            s->ep[0] = '\0';
            return false;
        }
    }
    if (!s->out)
        s->out = json_array();
    json_array_append(s->out, (json_t *)msg);
    sp->sent++;
    return true;
}

void sched_probes_flush(struct sched_probes *sp)
{
    for (size_t n = 0; sp && n < sp->cap; n++) {
        struct sprobe *s = &sp->nodes[n];
        size_t k = json_array_size(s->out), len;
        if (k == 0)
            continue;
        char *text = k > 1 ? hrm_wire_dump_batch(s->out, &len) : NULL;
        if (text)
            hrm_conn_send_raw(s->conn, text, len);
        for (size_t i = 0; !text && i < k; i++) /* one, or too many for a frame */
            hrm_conn_send(s->conn, json_array_get(s->out, i));
        free(text);
        json_array_clear(s->out);
    }
}

size_t sched_probes_poll(struct sched_probes *sp, zmq_pollitem_t *items, size_t max)
{
    size_t k = 0;
    for (size_t n = 0; n < sp->cap && k < max; n++)
        if (sp->nodes[n].conn)
            items[k++] = (zmq_pollitem_t){hrm_conn_zsock(sp->nodes[n].conn), 0, ZMQ_POLLIN, 0};
    return k;
}

int sched_probes_recv(struct sched_probes *sp, json_t **msg, int32_t *node)
{
    for (size_t i = 0; i < sp->cap; i++) {
        size_t n = (sp->next + i) % sp->cap;
        if (!sp->nodes[n].conn)
            continue;
        int ev = 0; /* a look at the socket's flags, not a poll: most nodes have nothing */
        size_t len = sizeof(ev);
        zmq_getsockopt(hrm_conn_zsock(sp->nodes[n].conn), ZMQ_EVENTS, &ev, &len);
        if (!(ev & ZMQ_POLLIN))
            continue;
        struct hrm_error err;
        int rc = hrm_conn_recv(sp->nodes[n].conn, 0, msg, &err);
        if (rc == -ETIMEDOUT)
            continue;
        if (rc < 0) {
            hrm_log(HRM_LOG_WARNING, "node %zu: %s", n, err.text);
            continue;
        }
        sp->next = n + 1; /* a busy node does not starve the others */
        *node = (int32_t)n;
        return 1;
    }
    return 0;
}

int64_t sched_probes_sent(const struct sched_probes *sp)
{
    return sp->sent;
}
