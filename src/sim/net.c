/* Flow-level network model with max-min fair sharing by progressive filling. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/net.h"

#define MAX_HOPS 5

struct flow {
    bool active;
    uint8_t nlinks;
    int32_t links[MAX_HOPS];
    double remaining; /* bytes */
    double rate;      /* bytes/s */
    uint64_t tag;
    int32_t next_free;
};

struct hrm_net {
    const struct hrm_cluster *c;
    int32_t nlinks;
    double *capacity; /* bytes/s per link */
    /* scratch for progressive filling */
    double *cap_left;
    int32_t *users;
    int32_t *touched;
    struct flow *flows;
    size_t cap_flows;
    int32_t nflows;     /* slots used */
    int32_t free_head;  /* recycled slots */
    int32_t *active;    /* ids of active flows, in start order */
    size_t cap_active;
    int32_t nactive;
    uint64_t *done_tags; /* scratch for hrm_net_complete */
    size_t cap_done;
    int64_t last_us;    /* time the remaining bytes are accounted to */
};

/* Link numbering: per node 3 links (disk, nic out, nic in), then per rack 2. */
static int32_t link_disk(int32_t n)
{
    return 3 * n;
}
static int32_t link_out(int32_t n)
{
    return 3 * n + 1;
}
static int32_t link_in(int32_t n)
{
    return 3 * n + 2;
}
static int32_t link_up(const struct hrm_cluster *c, int32_t r)
{
    return 3 * c->nnodes + 2 * r;
}
static int32_t link_down(const struct hrm_cluster *c, int32_t r)
{
    return 3 * c->nnodes + 2 * r + 1;
}

struct hrm_net *hrm_net_new(const struct hrm_cluster *c)
{
    struct hrm_net *net = hrm_calloc(1, sizeof(*net));
    net->c = c;
    net->nlinks = 3 * c->nnodes + 2 * c->nracks;
    net->capacity = hrm_calloc((size_t)net->nlinks, sizeof(double));
    net->cap_left = hrm_calloc((size_t)net->nlinks, sizeof(double));
    net->users = hrm_calloc((size_t)net->nlinks, sizeof(int32_t));
    net->touched = hrm_calloc((size_t)net->nlinks, sizeof(int32_t));
    for (int32_t n = 0; n < c->nnodes; n++) {
        const struct hrm_node *node = &c->nodes[n];
        double nic = node->capacity.v[HRM_DIM_NET] > 0 ? (double)node->capacity.v[HRM_DIM_NET]
                                                       : c->net.rack_bw;
        net->capacity[link_disk(n)] = node->disk_bw > 0 ? node->disk_bw : c->net.disk_bw;
        net->capacity[link_out(n)] = nic;
        net->capacity[link_in(n)] = nic;
    }
    for (int32_t r = 0; r < c->nracks; r++) {
        net->capacity[link_up(c, r)] = c->net.core_bw;
        net->capacity[link_down(c, r)] = c->net.core_bw;
    }
    net->free_head = -1;
    return net;
}

void hrm_net_free(struct hrm_net *net)
{
    if (!net)
        return;
    hrm_free(net->capacity);
    hrm_free(net->cap_left);
    hrm_free(net->users);
    hrm_free(net->touched);
    hrm_free(net->flows);
    hrm_free(net->active);
    hrm_free(net->done_tags);
    hrm_free(net);
}

enum hrm_locality hrm_net_locality(const struct hrm_cluster *c, int32_t src, int32_t dst)
{
    if (src == dst)
        return HRM_LOCAL;
    return c->nodes[src].rack == c->nodes[dst].rack ? HRM_RACK : HRM_CROSS;
}

/* Moves every active flow's remaining bytes forward to now. */
static void advance(struct hrm_net *net, int64_t now_us)
{
    double dt = (double)(now_us - net->last_us) / 1e6;
    if (dt > 0) {
        for (int32_t i = 0; i < net->nactive; i++) {
            struct flow *f = &net->flows[net->active[i]];
            f->remaining -= f->rate * dt;
        }
    }
    net->last_us = now_us;
}

/*
 * Max-min fair rates by progressive filling: repeatedly find the link whose
 * remaining capacity split over its unfrozen flows is smallest, give that
 * share to those flows and freeze them.  Cost O(rounds x touched links),
 * rounds <= flows; scheduling workloads keep active transfers in the hundreds.
 */
static void recompute(struct hrm_net *net)
{
    int32_t ntouched = 0;
    for (int32_t i = 0; i < net->nactive; i++) {
        struct flow *f = &net->flows[net->active[i]];
        f->rate = -1; /* unfrozen */
        for (int k = 0; k < f->nlinks; k++) {
            int32_t l = f->links[k];
            if (net->users[l]++ == 0) {
                net->touched[ntouched++] = l;
                net->cap_left[l] = net->capacity[l];
            }
        }
    }
    int32_t unfrozen = net->nactive;
    while (unfrozen > 0) {
        int32_t best = -1;
        double best_share = INFINITY;
        for (int32_t i = 0; i < ntouched; i++) {
            int32_t l = net->touched[i];
            if (net->users[l] == 0)
                continue;
            double share = net->cap_left[l] / net->users[l];
            if (share < best_share) {
                best_share = share;
                best = l;
            }
        }
        if (best < 0)
            break;
        if (best_share < 0)
            best_share = 0;
        for (int32_t i = 0; i < net->nactive; i++) {
            struct flow *f = &net->flows[net->active[i]];
            if (f->rate >= 0)
                continue;
            bool crosses = false;
            for (int k = 0; k < f->nlinks && !crosses; k++)
                crosses = f->links[k] == best;
            if (!crosses)
                continue;
            f->rate = best_share;
            unfrozen--;
            for (int k = 0; k < f->nlinks; k++) {
                int32_t l = f->links[k];
                net->cap_left[l] -= best_share;
                net->users[l]--;
            }
        }
    }
    for (int32_t i = 0; i < ntouched; i++)
        net->users[net->touched[i]] = 0;
}

int32_t hrm_net_start(struct hrm_net *net, int64_t now_us, int32_t src, int32_t dst, double bytes,
                      uint64_t tag)
{
    advance(net, now_us);
    int32_t id;
    if (net->free_head >= 0) {
        id = net->free_head;
        net->free_head = net->flows[id].next_free;
    } else {
        HRM_GROW(net->flows, net->cap_flows, (size_t)net->nflows + 1);
        id = net->nflows++;
    }
    struct flow *f = &net->flows[id];
    memset(f, 0, sizeof(*f));
    const struct hrm_cluster *c = net->c;
    f->links[f->nlinks++] = link_disk(src);
    if (src != dst) {
        f->links[f->nlinks++] = link_out(src);
        int32_t rs = c->nodes[src].rack, rd = c->nodes[dst].rack;
        if (rs != rd) {
            f->links[f->nlinks++] = link_up(c, rs);
            f->links[f->nlinks++] = link_down(c, rd);
        }
        f->links[f->nlinks++] = link_in(dst);
    }
    f->active = true;
    f->remaining = bytes;
    f->tag = tag;
    HRM_GROW(net->active, net->cap_active, (size_t)net->nactive + 1);
    net->active[net->nactive++] = id;
    recompute(net);
    return id;
}

static void remove_active(struct hrm_net *net, int32_t idx)
{
    int32_t id = net->active[idx];
    memmove(&net->active[idx], &net->active[idx + 1],
            (size_t)(net->nactive - idx - 1) * sizeof(int32_t));
    net->nactive--;
    net->flows[id].active = false;
    net->flows[id].next_free = net->free_head;
    net->free_head = id;
}

void hrm_net_cancel(struct hrm_net *net, int64_t now_us, int32_t id)
{
    advance(net, now_us);
    for (int32_t i = 0; i < net->nactive; i++) {
        if (net->active[i] == id) {
            remove_active(net, i);
            recompute(net);
            return;
        }
    }
}

/* Microseconds until f is done, rounded up so that at that time it is. */
static int64_t time_left_us(const struct flow *f)
{
    if (f->remaining <= 0)
        return 0;
    if (f->rate <= 0)
        return INT64_MAX / 4;
    return (int64_t)ceil(f->remaining / f->rate * 1e6);
}

int64_t hrm_net_next_completion(const struct hrm_net *net)
{
    int64_t best = INT64_MAX;
    for (int32_t i = 0; i < net->nactive; i++) {
        int64_t t = net->last_us + time_left_us(&net->flows[net->active[i]]);
        if (t < best)
            best = t;
    }
    return best;
}

int hrm_net_complete(struct hrm_net *net, int64_t now_us, void (*done)(void *arg, uint64_t tag),
                     void *arg)
{
    advance(net, now_us);
    /* Done means less than a microsecond of transfer left: completion times
     * are rounded up to whole microseconds. */
    int32_t ndone = 0;
    HRM_GROW(net->done_tags, net->cap_done, (size_t)net->nactive + 1);
    for (int32_t i = 0; i < net->nactive;) {
        struct flow *f = &net->flows[net->active[i]];
        if (f->remaining <= f->rate * 1e-6 + 1e-9) {
            net->done_tags[ndone++] = f->tag;
            remove_active(net, i);
            continue;
        }
        i++;
    }
    if (ndone == 0)
        return 0;
    recompute(net);
    /* Callbacks may start new transfers (which reuse done_tags' owner, the
     * net), so hand them a private copy. */
    uint64_t *tags = hrm_alloc((size_t)ndone * sizeof(*tags));
    memcpy(tags, net->done_tags, (size_t)ndone * sizeof(*tags));
    for (int32_t k = 0; k < ndone; k++)
        done(arg, tags[k]);
    hrm_free(tags);
    return ndone;
}

double hrm_net_rate(const struct hrm_net *net, int32_t id)
{
    return net->flows[id].active ? net->flows[id].rate : 0.0;
}

int32_t hrm_net_active(const struct hrm_net *net)
{
    return net->nactive;
}
