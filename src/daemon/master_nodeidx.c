/* The master's indexes of its nodes: by name, by connection (peer id) and by host, so that a message, a registration or a usage sample costs O(1) rather than a walk of every node. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/hash.h"
#include "master_private.h"

/*
 * Open addressing with linear probing and backward-shift deletion.  A slot holds a node index
 * (-1: empty) and the key's hash; the key itself is read from the node (its name, peer or
 * host), so the tables hold no copies that could drift from the nodes they index.
 */

static uint64_t hash_bytes(const void *p, size_t n)
{
    uint64_t h = hrm_hash(HRM_HASH_SEED, p, n);
    return h ? h : 1;
}

static void key_of(const struct master *m, enum nodeidx_kind kind, int32_t n, const void **key,
                   size_t *len)
{
    const struct rnode *rn = &m->nodes[n];
    switch (kind) {
    case NODEIDX_NAME:
        *key = rn->name, *len = strlen(rn->name);
        break;
    case NODEIDX_PEER:
        *key = rn->peer.id, *len = rn->peer.len;
        break;
    case NODEIDX_HOST:
    default:
        *key = rn->host, *len = strlen(rn->host);
        break;
    }
}

static bool key_eq(const struct master *m, enum nodeidx_kind kind, int32_t n, const void *key,
                   size_t len)
{
    const void *k;
    size_t kl;
    key_of(m, kind, n, &k, &kl);
    return kl == len && memcmp(k, key, len) == 0;
}

static struct nodeidx *table(struct master *m, enum nodeidx_kind kind)
{
    return &m->nodeidx[kind];
}

static void put_slot(struct nodeidx *t, uint64_t h, int32_t n)
{
    size_t mask = t->cap - 1, i = h & mask;
    while (t->node[i] >= 0)
        i = (i + 1) & mask;
    t->node[i] = n;
    t->hash[i] = h;
    t->used++;
}

static void grow(struct nodeidx *t)
{
    if ((t->used + 1) * 2 <= t->cap)
        return;
    struct nodeidx old = *t;
    t->cap = old.cap ? old.cap * 2 : 64;
    t->node = hrm_alloc(t->cap * sizeof(*t->node));
    t->hash = hrm_alloc(t->cap * sizeof(*t->hash));
    memset(t->node, 0xff, t->cap * sizeof(*t->node)); /* -1 */
    t->used = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.node[i] >= 0)
            put_slot(t, old.hash[i], old.node[i]);
    hrm_free(old.node);
    hrm_free(old.hash);
}

int32_t nodeidx_find(const struct master *m, enum nodeidx_kind kind, const void *key, size_t len)
{
    const struct nodeidx *t = &m->nodeidx[kind];
    if (!t->cap || len == 0)
        return -1;
    uint64_t h = hash_bytes(key, len);
    size_t mask = t->cap - 1;
    for (size_t i = h & mask; t->node[i] >= 0; i = (i + 1) & mask)
        if (t->hash[i] == h && key_eq(m, kind, t->node[i], key, len))
            return t->node[i];
    return -1;
}

void nodeidx_add(struct master *m, enum nodeidx_kind kind, int32_t n)
{
    const void *key;
    size_t len;
    key_of(m, kind, n, &key, &len);
    if (len == 0)
        return; /* no peer (not connected), no host: nothing to find it by */
    struct nodeidx *t = table(m, kind);
    grow(t);
    put_slot(t, hash_bytes(key, len), n);
}

/* Removes node n's slot (found by its current key); absent: no-op. */
void nodeidx_del(struct master *m, enum nodeidx_kind kind, int32_t n)
{
    struct nodeidx *t = table(m, kind);
    const void *key;
    size_t len;
    key_of(m, kind, n, &key, &len);
    if (!t->cap || len == 0)
        return;
    size_t mask = t->cap - 1, i = hash_bytes(key, len) & mask;
    while (t->node[i] >= 0 && t->node[i] != n)
        i = (i + 1) & mask;
    if (t->node[i] < 0)
        return;
    /* Backward shift: later entries of the run move up into the hole when their home
     * position is not between the hole and themselves. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; t->node[j] >= 0; j = (j + 1) & mask) {
        size_t home = t->hash[j] & mask;
        if ((j > hole && (home <= hole || home > j)) || (j < hole && home <= hole && home > j)) {
            t->node[hole] = t->node[j];
            t->hash[hole] = t->hash[j];
            hole = j;
        }
    }
    t->node[hole] = -1;
    t->used--;
}

void nodeidx_set_peer(struct master *m, int32_t n, const struct peer_id *p)
{
    nodeidx_del(m, NODEIDX_PEER, n);
    if (p)
        m->nodes[n].peer = *p;
    else
        m->nodes[n].peer.len = 0;
    nodeidx_add(m, NODEIDX_PEER, n);
}

/*
 * Nodes of one host form a ring (host_next); the host index points at one member.  A node
 * that changes host leaves its ring (the index moves to a sibling if it pointed at it) and
 * joins the new host's.
 */
void nodeidx_set_host(struct master *m, int32_t n, const char *host)
{
    struct rnode *rn = &m->nodes[n];
    if (strcmp(rn->host, host) == 0 && (rn->host_next >= 0 || !host[0]))
        return;
    if (rn->host_next >= 0) { /* leave the old ring */
        int32_t prev = n;
        while (m->nodes[prev].host_next != n)
            prev = m->nodes[prev].host_next;
        int32_t next = rn->host_next;
        m->nodes[prev].host_next = next;
        if (nodeidx_find(m, NODEIDX_HOST, rn->host, strlen(rn->host)) == n) {
            nodeidx_del(m, NODEIDX_HOST, n);
            if (next != n)
                nodeidx_add(m, NODEIDX_HOST, next);
        }
        rn->host_next = -1;
    }
    snprintf(rn->host, sizeof(rn->host), "%s", host);
    if (!host[0])
        return;
    int32_t first = nodeidx_find(m, NODEIDX_HOST, host, strlen(host));
    if (first < 0) {
        rn->host_next = n;
        nodeidx_add(m, NODEIDX_HOST, n);
    } else {
        rn->host_next = m->nodes[first].host_next;
        m->nodes[first].host_next = n;
    }
}

void nodeidx_free(struct master *m)
{
    for (int k = 0; k < NODEIDX_KINDS; k++) {
        hrm_free(m->nodeidx[k].node);
        hrm_free(m->nodeidx[k].hash);
        m->nodeidx[k] = (struct nodeidx){0};
    }
}
