/* P1 fair shares and flow network: shares, exact aggregation, GPU memory, max flow. */
#include "test_flowpol.h"

/* ---- fair shares ---- */

static void check_share(int64_t q, int32_t k, const int64_t *n, int32_t nj, const int64_t *want)
{
    int64_t a[16];
    p1_fair_share(q, k, n, nj, a);
    for (int32_t i = 0; i < nj; i++)
        cr_assert_eq(a[i], want[i], "q=%ld k=%d job %d: %ld, want %ld", (long)q, k, i, (long)a[i],
                     (long)want[i]);
}

Test(share, hand_worked_examples)
{
    /* the example: floor(10/3) = 3 -> {2, 3, 3}, 2 left over to the waiting jobs */
    check_share(10, 3, (int64_t[]){2, 8, 8}, 3, (int64_t[]){2, 4, 4});
    /* the testbed: 30 GPUs, 6 jobs; 3 left over, one each to the three still waiting */
    check_share(30, 6, (int64_t[]){60, 4, 10, 5, 3, 20}, 6, (int64_t[]){6, 4, 6, 5, 3, 6});
    /* fewer leftovers than waiting jobs: the earlier jobs get them */
    check_share(7, 3, (int64_t[]){10, 10, 10}, 3, (int64_t[]){3, 2, 2});
    /* demand below the cluster: everyone gets what it asks */
    check_share(10, 2, (int64_t[]){3, 4}, 2, (int64_t[]){3, 4});
    /* running jobs without demand count in K, their part is spread */
    check_share(10, 4, (int64_t[]){10, 10}, 2, (int64_t[]){5, 5});
    /* spreading saturates a small job and goes on with the others */
    check_share(12, 3, (int64_t[]){1, 100, 5}, 3, (int64_t[]){1, 6, 5});
    check_share(0, 3, (int64_t[]){1, 2, 3}, 3, (int64_t[]){0, 0, 0});
    check_share(5, 0, (int64_t[]){1, 2}, 2, (int64_t[]){0, 0});
}

Test(share, properties_on_random_cases)
{
    struct hrm_rng rng;
    hrm_rng_seed(&rng, 11);
    for (int rep = 0; rep < 2000; rep++) {
        int32_t nj = 1 + (int32_t)hrm_rng_below(&rng, 12);
        int32_t k = nj + (int32_t)hrm_rng_below(&rng, 3);
        int64_t q = (int64_t)hrm_rng_below(&rng, 80), n[16], a[16], sum_n = 0, sum_a = 0;
        for (int32_t i = 0; i < nj; i++) {
            n[i] = (int64_t)hrm_rng_below(&rng, 30);
            sum_n += n[i];
        }
        p1_fair_share(q, k, n, nj, a);
        for (int32_t i = 0; i < nj; i++) {
            int64_t base = q / k;
            cr_assert_leq(a[i], n[i]);
            cr_assert_geq(a[i], base < n[i] ? base : n[i]);
            sum_a += a[i];
        }
        cr_assert_eq(sum_a, q < sum_n ? q : sum_n);
        /* evenly: a job still waiting has at most one GPU less than any other */
        for (int32_t i = 0; i < nj; i++)
            for (int32_t x = 0; x < nj; x++)
                if (a[i] < n[i])
                    cr_assert_leq(a[x], a[i] + 1);
    }
}

Test(share, computed_from_the_state)
{
    struct world w;
    w_init(&w);
    int32_t r = w_rack(&w);
    for (int i = 0; i < 10; i++)
        w_node(&w, r, 1, 10 * GIB);
    int32_t j[3];
    int ntasks[3] = {2, 8, 8};
    for (int x = 0; x < 3; x++) {
        j[x] = w_job(&w);
        for (int t = 0; t < ntasks[x]; t++)
            w_task(&w, 2 * GIB);
    }
    w_begin(&w, NULL, NULL, 0);
    for (int x = 0; x < 3; x++)
        w_submit(&w, j[x]);
    w_start(&w, w.wl->jobs[j[1]].task_first, 0); /* held GPUs count in N_j */
    struct p1_shares sh = {0};
    p1_shares_compute(&sh, w.s);
    cr_assert_eq(sh.njobs, 3);
    cr_assert_eq(sh.q, 10);
    int64_t want[3] = {2, 4, 4};
    for (int x = 0; x < 3; x++) {
        cr_assert_eq(sh.jobs[x], j[x], "arrival order");
        cr_assert_eq(sh.demand[x], ntasks[x]);
        cr_assert_eq(sh.share[x], want[x]);
    }
    cr_assert_eq(sh.held[1], 1);
    cr_assert_eq(sh.ready[1], 7);
    p1_shares_fini(&sh);
    w_fini(&w);
}

/* ---- the network ---- */

/* Placements are legal: ready tasks, once each, on free GPUs of up nodes that
 * hold them, each GPU once.  Returns the sum of their transfer costs. */
static int64_t check_places(const struct flownet *net, const struct hrm_state *s)
{
    const struct flownet_place *pl;
    size_t n = flownet_places(net, &pl);
    const struct hrm_cluster *c = s->cluster;
    struct p1_cost m = {.c = c, .alpha1 = P1_ALPHA1_DEFAULT, .alpha2 = P1_ALPHA2_DEFAULT};
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        const struct hrm_node *node = &c->nodes[pl[i].node];
        cr_assert_eq(s->tasks[pl[i].task].status, HRM_TASK_READY);
        cr_assert(s->nodes[pl[i].node].up);
        cr_assert_lt(pl[i].gpu, node->gpus);
        cr_assert_eq(s->nodes[pl[i].node].gpu_busy & (1u << pl[i].gpu), 0, "GPU busy");
        cr_assert_geq(c->units[node->unit_first + pl[i].gpu].gpu_mem,
                      p1_task_gpu_need(&s->wl->tasks[pl[i].task]), "GPU too small");
        for (size_t k = 0; k < i; k++) {
            cr_assert_neq(pl[k].task, pl[i].task);
            cr_assert(pl[k].node != pl[i].node || pl[k].gpu != pl[i].gpu, "GPU used twice");
        }
        sum += p1_cost_node(&m, s, pl[i].task, pl[i].node);
    }
    return sum;
}

/* A random small cluster and workload: racks, nodes with 1-2 GPUs of mixed
 * memory and disks of mixed speed, a core as fast as a rack link or 10x,
 * jobs whose tasks read 0-3 blocks with 1-3 replicas and ask GPU memory that
 * some GPUs (or none) hold. */
static void random_world(struct world *w, struct hrm_rng *rng)
{
    static const int64_t gmem[] = {4 * GIB, 8 * GIB, 16 * GIB};
    static const int64_t tmem[] = {1 * GIB, 6 * GIB, 12 * GIB, 20 * GIB};
    static const double disk[] = {50e6, 160e6, 2e9};
    struct hrm_netcfg net = {.rack_bw = 125e6, .core_bw = hrm_rng_below(rng, 2) ? 125e6 : 1.25e9};
    w_init_net(w, &net);
    int32_t nr = 1 + (int32_t)hrm_rng_below(rng, 3);
    for (int32_t r = 0; r < nr; r++) {
        w_rack(w);
        int32_t nn = 1 + (int32_t)hrm_rng_below(rng, 3);
        for (int32_t i = 0; i < nn; i++)
            w_node_disk(w, r, 1 + (int32_t)hrm_rng_below(rng, 2), gmem[hrm_rng_below(rng, 3)],
                        disk[hrm_rng_below(rng, 3)]);
    }
    int32_t nj = 1 + (int32_t)hrm_rng_below(rng, 3);
    for (int32_t j = 0; j < nj; j++) {
        w_job(w);
        int32_t nt = 1 + (int32_t)hrm_rng_below(rng, 5);
        for (int32_t t = 0; t < nt; t++) {
            w_task(w, tmem[hrm_rng_below(rng, 4)]);
            int32_t nb = (int32_t)hrm_rng_below(rng, 4);
            for (int32_t b = 0; b < nb; b++) {
                int32_t reps[3], nrep = 1 + (int32_t)hrm_rng_below(rng, 3);
                if (nrep > w->c->nnodes)
                    nrep = w->c->nnodes;
                for (int32_t k = 0; k < nrep; k++) {
                    bool dup;
                    do {
                        reps[k] = (int32_t)hrm_rng_below(rng, (uint64_t)w->c->nnodes);
                        dup = false;
                        for (int32_t x = 0; x < k; x++)
                            dup |= reps[x] == reps[k];
                    } while (dup);
                }
                w_block(w, (1 + (int64_t)hrm_rng_below(rng, 8)) * 256 * MIB, reps, nrep);
            }
        }
    }
}

/* Random state: every job submitted, some tasks already running, maybe a node down. */
static void random_state(struct world *w, struct hrm_rng *rng)
{
    w_begin(w, NULL, NULL, 0);
    for (int32_t j = 0; j < w->wl->njobs; j++)
        w_submit(w, j);
    for (int32_t t = 0; t < w->wl->ntasks; t++) {
        if (hrm_rng_below(rng, 3) != 0)
            continue;
        int32_t n = (int32_t)hrm_rng_below(rng, (uint64_t)w->c->nnodes);
        if (hrm_state_fits(w->s, t, n))
            w_start(w, t, n);
    }
    if (hrm_rng_below(rng, 4) == 0)
        hrm_state_node_down(w->s, (int32_t)hrm_rng_below(rng, (uint64_t)w->c->nnodes), 0);
}

/* Trap (2) of the issue: aggregators per memory tier keep the optimum exact. */
Test(flownet, aggregated_equals_full_bipartite_on_random_cases)
{
    for (uint64_t seed = 1; seed <= 300; seed++) {
        struct hrm_rng rng;
        hrm_rng_seed(&rng, seed);
        struct world w;
        random_world(&w, &rng);
        random_state(&w, &rng);
        for (int uns = 0; uns < 2; uns++) {
            struct p1_shares sh = {0};
            struct flownet *agg = net_new(uns, true, true), *full = net_new(uns, false, true);
            net_run(agg, w.s, &sh);
            net_run(full, w.s, &sh);
            cr_assert_eq(flownet_cost(agg), flownet_cost(full), "seed %lu uns %d: %ld vs %ld",
                         (unsigned long)seed, uns, (long)flownet_cost(agg),
                         (long)flownet_cost(full));
            struct flownet_stats sa, sf;
            flownet_stats(agg, &sa);
            flownet_stats(full, &sf);
            if (sa.tasks > 0)
                cr_assert_eq(hrm_flow_value(flownet_graph(agg)),
                             hrm_flow_value(flownet_graph(full)));
            int64_t ca = check_places(agg, w.s), cf = check_places(full, w.s);
            if (!uns) {
                /* Without unscheduled arcs the cost is the placements' alone:
                 * what was read off the aggregators costs what was solved. */
                cr_assert_eq(ca, flownet_cost(agg), "seed %lu", (unsigned long)seed);
                cr_assert_eq(cf, flownet_cost(full));
            }
            flownet_free(agg);
            flownet_free(full);
            p1_shares_fini(&sh);
        }
        w_fini(&w);
    }
}

/* Warm re-solves over a changing state give the optimum of a fresh build. */
Test(flownet, incremental_matches_a_fresh_build_pass_after_pass)
{
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct hrm_rng rng;
        hrm_rng_seed(&rng, 100 + seed);
        struct world w;
        random_world(&w, &rng);
        w_begin(&w, NULL, NULL, 0);
        struct flownet *inc = net_new(true, true, true);
        struct p1_shares sh = {0};
        int32_t submitted = 0;
        for (int pass = 0; pass < 25; pass++) {
            if (submitted < w.wl->njobs && hrm_rng_below(&rng, 2) == 0)
                w_submit(&w, submitted++);
            if (pass == 12)
                hrm_state_node_down(w.s, 0, w.ctx.now_us);
            if (pass == 16)
                hrm_state_node_up(w.s, 0);
            net_run(inc, w.s, &sh);
            struct flownet *fresh = net_new(true, true, false);
            struct p1_shares sh2 = {0};
            net_run(fresh, w.s, &sh2);
            cr_assert_eq(flownet_cost(inc), flownet_cost(fresh), "seed %lu pass %d",
                         (unsigned long)seed, pass);
            check_places(inc, w.s);
            /* apply the placements, then let some tasks end */
            const struct flownet_place *pl;
            size_t n = flownet_places(inc, &pl);
            for (size_t i = 0; i < n; i++)
                hrm_state_start(w.s, pl[i].task, pl[i].node, 1u << pl[i].gpu, w.ctx.now_us);
            for (int32_t t = 0; t < w.wl->ntasks; t++)
                if (w.s->tasks[t].status == HRM_TASK_RUNNING && hrm_rng_below(&rng, 3) == 0)
                    hrm_state_stop(
                        w.s, t, hrm_rng_below(&rng, 4) ? HRM_OUTCOME_DONE : HRM_OUTCOME_PREEMPTED,
                        w.ctx.now_us);
            w.ctx.now_us += 1000;
            flownet_free(fresh);
            p1_shares_fini(&sh2);
        }
        struct flownet_stats st;
        flownet_stats(inc, &st);
        cr_assert_leq(st.builds, 3, "built at start and on the node changes only");
        flownet_free(inc);
        p1_shares_fini(&sh);
        w_fini(&w);
    }
}

/* A task never lands on a GPU too small for it, even when its data is there. */
Test(flownet, gpu_memory_excludes_small_gpus)
{
    for (int variant = 0; variant < 4; variant++) {
        bool agg = variant & 1, uns = variant & 2;
        struct world w;
        w_init(&w);
        int32_t r0 = w_rack(&w), r1 = w_rack(&w);
        int32_t small = w_node(&w, r0, 2, 4 * GIB);
        int32_t big = w_node(&w, r1, 1, 16 * GIB);
        w_job(&w);
        int32_t t = w_task_on(&w, 8 * GIB, GIB, small); /* its data is on the small GPUs' node */
        w_job(&w);
        int32_t filler = w_task(&w, 2 * GIB);
        w_begin(&w, NULL, NULL, 0);
        w_submit(&w, 0);
        struct flownet *net = net_new(uns, agg, true);
        struct p1_shares sh = {0};
        net_run(net, w.s, &sh);
        const struct flownet_place *pl;
        cr_assert_eq(flownet_places(net, &pl), 1);
        cr_assert_eq(pl[0].task, t);
        cr_assert_eq(pl[0].node, big, "cross-rack on 16G rather than local on 4G");
        /* with the big GPU taken it waits rather than squeeze onto 4G */
        w_submit(&w, 1);
        w_start(&w, filler, big);
        net_run(net, w.s, &sh);
        cr_assert_eq(flownet_places(net, &pl), 0);
        flownet_free(net);
        p1_shares_fini(&sh);
        w_fini(&w);
    }
}

/* Trap (1) of the issue: with the paper's fixed supplies the unscheduled
 * capacities N_j - A_j force A_j placements that GPU memory rules out, and
 * the problem has no feasible flow; the maximum flow places what it can. */
Test(flownet, infeasible_with_fixed_supply_is_solved_as_max_flow)
{
    struct world w;
    w_init(&w);
    int32_t r = w_rack(&w);
    w_node(&w, r, 2, 8 * GIB);
    int32_t big = w_node(&w, r, 1, 16 * GIB);
    int32_t a = w_job(&w);
    int32_t a0 = w_task(&w, 12 * GIB), a1 = w_task(&w, 12 * GIB);
    int32_t b = w_job(&w);
    w_task(&w, 4 * GIB);
    w_task(&w, 4 * GIB);
    w_begin(&w, NULL, NULL, 0);
    w_submit(&w, a);
    w_submit(&w, b);
    struct flownet *net = net_new(true, true, true);
    struct p1_shares sh = {0};
    net_run(net, w.s, &sh);
    /* Q = 3, K = 2: A = {2, 1}; job a needs 12G, only one 16G GPU */
    cr_assert_eq(sh.share[0], 2);
    cr_assert_eq(sh.share[1], 1);
    const struct flownet_place *pl;
    size_t n = flownet_places(net, &pl);
    int placed_a = 0, placed_b = 0;
    for (size_t i = 0; i < n; i++) {
        if (pl[i].task == a0 || pl[i].task == a1) {
            placed_a++;
            cr_assert_eq(pl[i].node, big);
        } else {
            placed_b++;
        }
    }
    cr_assert_eq(placed_a, 1);
    cr_assert_geq(placed_b, 1, "b's share is placed too");
    /* The same graph with the paper's fixed supplies has no feasible flow. */
    struct hrm_flow *g = flownet_graph(net);
    hrm_flow_set_supply(g, flownet_source(net), 4);
    hrm_flow_set_supply(g, flownet_sink(net), -4);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_flow_solve(g, &err), -HRM_EINFEASIBLE);
    flownet_free(net);
    p1_shares_fini(&sh);
    w_fini(&w);
}

/* Costs on a hand-worked case: 1 GiB local = 1073741824 / 160e6 s = 6711 ms;
 * in-rack max(1.5 x 8.59 s, 6.71 s) = 12885 ms; cross-rack 3 x 8.59 s = 25770 ms. */
Test(flownet, transfer_costs_by_hand)
{
    struct world w;
    w_init(&w);
    int32_t r0 = w_rack(&w), r1 = w_rack(&w);
    int32_t n0 = w_node(&w, r0, 1, 10 * GIB), n1 = w_node(&w, r0, 1, 10 * GIB);
    int32_t n2 = w_node(&w, r1, 1, 10 * GIB);
    w_job(&w);
    int32_t t = w_task(&w, GIB);
    int32_t reps[2] = {n0, n2};
    w_block(&w, GIB, &n0, 1);
    w_block(&w, GIB, reps, 2);
    w_begin(&w, NULL, NULL, 0);
    struct p1_cost m = {.c = w.c, .alpha1 = 1.5, .alpha2 = 3.0};
    cr_assert_eq(p1_cost_node(&m, w.s, t, n0), 13422); /* 2 x 6710.89 */
    cr_assert_eq(p1_cost_node(&m, w.s, t, n1), 25770); /* 2 x 12884.9 */
    cr_assert_eq(p1_cost_node(&m, w.s, t, n2), 32481); /* 25769.8 + 6710.9 */
    cr_assert_eq(p1_cost_rack(&m, w.s, t, r0), 25770);
    cr_assert_eq(p1_cost_remote(&m, w.s, t), 51540);
    /* a replica on a down node is not read */
    hrm_state_node_down(w.s, n2, 0);
    cr_assert_eq(p1_cost_node(&m, w.s, t, n1), 25770);
    cr_assert_eq(p1_cost_remote(&m, w.s, t), 51540);
    w_fini(&w);
}
