/* The master's node indexes at fleet size (by name, by connection, by host ring) and a simulated run's duration. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "daemon/agent_private.h"
#include "daemon/master_private.h"
#include "hrm/alloc.h"

static struct master *fleet_master(int32_t n)
{
    struct master *m = hrm_calloc(1, sizeof(*m));
    for (int32_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "f%d", i + 1);
        cr_assert_eq(nodes_find(m, name, true), i);
    }
    return m;
}

static void fleet_free(struct master *m)
{
    nodeidx_free(m);
    hrm_free(m->nodes);
    hrm_free(m);
}

static struct peer_id peer_of(int32_t i)
{
    struct peer_id p = {.len = 5};
    p.id[0] = 0;
    memcpy(p.id + 1, &i, sizeof(i));
    return p;
}

Test(fleet_nodeidx, names_found_among_five_thousand)
{
    struct master *m = fleet_master(5000);
    cr_assert_eq(nodes_find(m, "f1", false), 0);
    cr_assert_eq(nodes_find(m, "f5000", false), 4999);
    cr_assert_eq(nodes_find(m, "f5001", false), -1);
    cr_assert_eq(nodes_find(m, "f2500", true), 2499, "an existing name makes no new node");
    cr_assert_eq(m->nnodes, 5000);
    fleet_free(m);
}

Test(fleet_nodeidx, connections_move_and_leave)
{
    struct master *m = fleet_master(3000);
    for (int32_t i = 0; i < 3000; i++) {
        struct peer_id p = peer_of(i);
        nodeidx_set_peer(m, i, &p);
    }
    /* Every other node reconnects (a new peer id); a third leaves. */
    for (int32_t i = 0; i < 3000; i += 2) {
        struct peer_id p = peer_of(100000 + i);
        nodeidx_set_peer(m, i, &p);
    }
    for (int32_t i = 1; i < 3000; i += 3)
        nodeidx_set_peer(m, i, NULL);
    for (int32_t i = 0; i < 3000; i++) {
        struct peer_id old = peer_of(i), now = peer_of(100000 + i);
        int32_t want_old = i % 2 == 1 && i % 3 != 1 ? i : -1;
        cr_assert_eq(nodeidx_find(m, NODEIDX_PEER, old.id, old.len), want_old, "node %d", i);
        int32_t want_now = i % 2 == 0 && i % 3 != 1 ? i : -1;
        cr_assert_eq(nodeidx_find(m, NODEIDX_PEER, now.id, now.len), want_now, "node %d", i);
        cr_assert_eq(m->nodes[i].peer.len == 0, i % 3 == 1);
    }
    fleet_free(m);
}

/* The nodes of a host, walked from any of them along host_next. */
static int32_t ring_size(const struct master *m, int32_t n)
{
    if (m->nodes[n].host_next < 0)
        return 0;
    int32_t k = 1;
    for (int32_t x = m->nodes[n].host_next; x != n; x = m->nodes[x].host_next)
        k++;
    return k;
}

Test(fleet_nodeidx, host_rings_follow_changes)
{
    struct master *m = fleet_master(100);
    for (int32_t i = 0; i < 100; i++) /* four agents per host, as hrm up runs them */
        nodeidx_set_host(m, i, i % 25 == 0 ? "" : (char[]){'h', (char)('a' + i / 4), 0});
    cr_assert_eq(ring_size(m, 0), 0, "a node without a host is in no ring");
    cr_assert_eq(ring_size(m, 5), 4);
    cr_assert_eq(ring_size(m, 1), 3, "host ha: nodes 1..3 (node 0 has none)");
    /* Node 5 moves to its own host; node 6 to host ha; re-registering unchanged is a no-op. */
    nodeidx_set_host(m, 5, "alone");
    nodeidx_set_host(m, 6, "ha");
    nodeidx_set_host(m, 6, "ha");
    cr_assert_eq(ring_size(m, 5), 1);
    cr_assert_eq(m->nodes[5].host_next, 5);
    cr_assert_eq(ring_size(m, 4), 2, "host hb kept nodes 4 and 7");
    cr_assert_eq(ring_size(m, 1), 4, "host ha: 1, 2, 3 and 6");
    cr_assert_eq(nodeidx_find(m, NODEIDX_HOST, "hb", 2) >= 0, true);
    /* Its last members leave: the host is gone from the index. */
    nodeidx_set_host(m, 4, "x");
    nodeidx_set_host(m, 7, "x");
    cr_assert_eq(nodeidx_find(m, NODEIDX_HOST, "hb", 2), -1);
    cr_assert_eq(ring_size(m, 4), 2);
    fleet_free(m);
}

Test(fleet_simexec, duration_from_sleep_or_env)
{
    json_t *env = json_pack("{s:s}", "SIMULATE_DURATION", "250ms");
    json_t *sleep = json_pack("[s, s]", "sleep", "0.2");
    json_t *sleep_s = json_pack("[s, s]", "/bin/sleep", "3s");
    json_t *other = json_pack("[s, s]", "./job", "0.2");
    json_t *bad = json_pack("[s, s]", "sleep", "soon");
    cr_assert_eq(simexec_duration_us(sleep, NULL), 200000);
    cr_assert_eq(simexec_duration_us(sleep_s, NULL), 3000000);
    cr_assert_eq(simexec_duration_us(sleep, env), 200000, "sleep N wins over the variable");
    cr_assert_eq(simexec_duration_us(other, env), 250000);
    cr_assert_eq(simexec_duration_us(other, NULL), 0, "nothing declared: ends at once");
    cr_assert_eq(simexec_duration_us(bad, NULL), 0);
    json_decref(env);
    json_decref(sleep);
    json_decref(sleep_s);
    json_decref(other);
    json_decref(bad);
}
