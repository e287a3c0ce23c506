/* Flow-level network: transfer times and max-min fair sharing worked out by hand. */
#include <criterion/criterion.h>

#include "fixture.h"
#include "hrm/net.h"

static void count_done(void *arg, uint64_t tag)
{
    uint64_t *seen = arg;
    *seen |= 1ull << tag;
}

/* Runs the network until idle; returns the completion time of each tag. */
static void run_until_idle(struct hrm_net *net, int64_t *done_at, int n)
{
    for (int guard = 0; guard < 100 && hrm_net_active(net) > 0; guard++) {
        int64_t t = hrm_net_next_completion(net);
        uint64_t seen = 0;
        hrm_net_complete(net, t, count_done, &seen);
        for (int i = 0; i < n; i++)
            if (seen & (1ull << i))
                done_at[i] = t;
    }
    cr_assert_eq(hrm_net_active(net), 0, "network drained");
}

/* 2 racks x 2 nodes; disk 100 B/s, NIC 100 B/s, rack uplink 30 B/s. */
static struct hrm_cluster *small(void)
{
    struct hrm_netcfg cfg = {.disk_bw = 100, .rack_bw = 100, .core_bw = 30};
    return fx_cluster(2, 2, 4, GIB, 0, 0, &cfg);
}

Test(net, one_local_read_takes_size_over_disk_bandwidth)
{
    struct hrm_cluster *c = small();
    struct hrm_net *net = hrm_net_new(c);
    hrm_net_start(net, 0, 0, 0, 100, 0);
    int64_t at[1] = {-1};
    run_until_idle(net, at, 1);
    cr_assert_eq(at[0], 1000000, "100 B at 100 B/s take 1 s");
    hrm_net_free(net);
    hrm_cluster_free(c);
}

Test(net, two_transfers_sharing_one_link_take_twice_as_long)
{
    struct hrm_cluster *c = small();
    struct hrm_net *net = hrm_net_new(c);
    /* Both read node 0's disk: one locally, one from its rack neighbour. */
    int32_t a = hrm_net_start(net, 0, 0, 0, 100, 0);
    int32_t b = hrm_net_start(net, 0, 0, 1, 100, 1);
    cr_assert_float_eq(hrm_net_rate(net, a), 50.0, 1e-9);
    cr_assert_float_eq(hrm_net_rate(net, b), 50.0, 1e-9);
    int64_t at[2] = {-1, -1};
    run_until_idle(net, at, 2);
    cr_assert_eq(at[0], 2000000);
    cr_assert_eq(at[1], 2000000);
    hrm_net_free(net);
    hrm_cluster_free(c);
}

Test(net, max_min_gives_the_unbottlenecked_flow_the_rest)
{
    struct hrm_cluster *c = small();
    struct hrm_net *net = hrm_net_new(c);
    /* From node 0: x to node 2 (other rack, uplink 30 B/s), y to node 1 (same
     * rack).  They share node 0's disk and NIC (100 B/s): x is held to 30 by
     * the uplink, so y gets the remaining 70. */
    int32_t x = hrm_net_start(net, 0, 0, 2, 300, 0);
    int32_t y = hrm_net_start(net, 0, 0, 1, 700, 1);
    cr_assert_float_eq(hrm_net_rate(net, x), 30.0, 1e-9);
    cr_assert_float_eq(hrm_net_rate(net, y), 70.0, 1e-9);
    int64_t at[2] = {-1, -1};
    run_until_idle(net, at, 2);
    cr_assert_eq(at[0], 10000000);
    cr_assert_eq(at[1], 10000000);
    hrm_net_free(net);
    hrm_cluster_free(c);
}

Test(net, a_finished_or_cancelled_flow_frees_its_share)
{
    struct hrm_cluster *c = small();
    struct hrm_net *net = hrm_net_new(c);
    int32_t a = hrm_net_start(net, 0, 0, 0, 50, 0);  /* 50 B */
    int32_t b = hrm_net_start(net, 0, 0, 0, 150, 1); /* 150 B */
    (void)a;
    /* Both at 50 B/s: a done at 1 s; b then has 100 B left alone at 100 B/s: done at 2 s. */
    int64_t at[2] = {-1, -1};
    run_until_idle(net, at, 2);
    cr_assert_eq(at[0], 1000000);
    cr_assert_eq(at[1], 2000000);

    int32_t p = hrm_net_start(net, 0, 1, 1, 100, 0);
    int32_t q = hrm_net_start(net, 0, 1, 1, 100, 1);
    hrm_net_cancel(net, 500000, q); /* p has 75 B left, then runs alone */
    cr_assert_float_eq(hrm_net_rate(net, p), 100.0, 1e-9);
    cr_assert_eq(hrm_net_next_completion(net), 1250000);
    (void)b;
    hrm_net_free(net);
    hrm_cluster_free(c);
}

Test(net, locality_levels)
{
    struct hrm_cluster *c = small();
    cr_assert_eq(hrm_net_locality(c, 0, 0), HRM_LOCAL);
    cr_assert_eq(hrm_net_locality(c, 0, 1), HRM_RACK);
    cr_assert_eq(hrm_net_locality(c, 0, 3), HRM_CROSS);
    hrm_cluster_free(c);
}
