/* The fragmentation gradient as P0's tie-break among units of equal wait: in the hrm policy
 * (the simulator) and in the fragmentation experiment (hrm trace frag), which share the rule
 * (hrm_ru_prefer). */
#include <criterion/criterion.h>
#include <string.h>

#include "hrm/frag.h"
#include "hrm/ru.h"
#include "hrm/sim.h"
#include "hrm/spec.h"

#define SEC 1000000ll

/* The comparison itself: the wait first, then the kernels to share with,
 * then the gradient, and only then the tightest GPU. */
Test(p0exp_frag, gradient_ranks_after_wait_and_sharing_before_the_tightest_gpu)
{
    struct hrm_ru_cost tight = {.frag_growth = 200, .gpu_left = 200, .node_left = 200};
    struct hrm_ru_cost loose = {.frag_growth = 125, .gpu_left = 500, .node_left = 500};
    cr_assert(hrm_ru_prefer(&loose, &tight));
    cr_assert(!hrm_ru_prefer(&tight, &loose));
    struct hrm_ru_cost shares = loose;
    shares.sharing = 1;
    cr_assert(hrm_ru_prefer(&tight, &shares));
    struct hrm_ru_cost waits = loose;
    waits.wait = 1;
    cr_assert(hrm_ru_prefer(&tight, &waits));
}

static struct hrm_frag_pod pod(int32_t milli)
{
    return (struct hrm_frag_pod){.cpu = 1000, .mem = 1, .num_gpu = 1, .gpu_milli = milli};
}

/* Two nodes of one GPU and 8 cores; the target workload is half pods of 0.3
 * GPU and half of 0.5.  GPU 0 of n0 has 0.5 free, that of n1 0.6. */
struct two_nodes {
    struct hrm_frag_node nodes[2];
    double frag[2];
    uint32_t version[2];
    struct hrm_frag_type types[2];
    struct hrm_frag_cluster c;
};

static void two_nodes_init(struct two_nodes *t)
{
    memset(t, 0, sizeof(*t));
    t->types[0] = (struct hrm_frag_type){pod(300), 0.5};
    t->types[1] = (struct hrm_frag_type){pod(500), 0.5};
    int32_t left[2] = {500, 600};
    for (int i = 0; i < 2; i++) {
        t->nodes[i] = (struct hrm_frag_node){.cpu_cap = 8000, .cpu_left = 7000, .mem_cap = 64,
                                             .mem_left = 63, .gpus = 1, .model = -1};
        t->nodes[i].gpu_left[0] = left[i];
        t->nodes[i].gpu_tasks[0] = 1;
    }
    t->c = (struct hrm_frag_cluster){.nodes = t->nodes,
                                     .nnodes = 2,
                                     .types = t->types,
                                     .ntypes = 2,
                                     .frag = t->frag,
                                     .version = t->version,
                                     .gpu_cap = 2 * HRM_FRAG_MILLI,
                                     .gpu_left = 1100};
    for (int i = 0; i < 2; i++) {
        t->frag[i] = hrm_frag_node_amount(&t->nodes[i], t->types, 2);
        t->c.frag_total += t->frag[i];
    }
}

/*
 * A pod of 0.3 GPU starts at once on either GPU, stacked beside one pod
 * (equal wait, equal sharing).  By hand, F_n(m) = free share of the GPUs too
 * small for m:
 *  - on n0, 0.5 free becomes 0.2: F goes from (0, 0) to (200, 200), so the
 *    expected fragmentation grows by 0.5 x 200 + 0.5 x 200 = 200;
 *  - on n1, 0.6 free becomes 0.3: from (0, 0) to (0, 300): it grows by 150.
 * The gradient takes n1.  The tightest GPU (what decided before) took n0.
 */
Test(p0exp_frag, equal_wait_the_gradient_decides)
{
    struct two_nodes t;
    two_nodes_init(&t);
    struct hrm_frag_pod p = pod(300);
    struct hrm_frag_choice ch;
    cr_assert_eq(hrm_frag_choose(&t.c, HRM_FRAG_STACK, &p, -1, &ch), 0);
    cr_assert_eq(ch.node, 1);
    cr_assert_eq(ch.gpus, 1u);
    cr_assert_eq(ch.milli_each, 300);
    /* FGD, which descends the same gradient, agrees. */
    cr_assert_eq(hrm_frag_choose(&t.c, HRM_FRAG_FGD, &p, -1, &ch), 0);
    cr_assert_eq(ch.node, 1);
}

/* The same cluster replays 0.3, 0.5, 0.3.  With the gradient: 0.3 on n1
 * (0.5 and 0.3 free), 0.5 fills n0, 0.3 fills n1: every pod placed and no
 * GPU share left.  The tightest GPU put the first 0.3 on n0 (0.2 and 0.6
 * free), the 0.5 on n1 (0.2 and 0.1 free), and refused the last pod with
 * 0.3 of a GPU unallocated. */
Test(p0exp_frag, replay_leaves_no_gpu_share_unallocated)
{
    struct two_nodes t;
    two_nodes_init(&t);
    int32_t seq[] = {300, 500, 300};
    int placed = 0;
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
        struct hrm_frag_pod p = pod(seq[i]);
        struct hrm_frag_choice ch;
        if (hrm_frag_choose(&t.c, HRM_FRAG_STACK, &p, -1, &ch) == 0) {
            hrm_frag_apply(&t.c, &p, &ch);
            placed++;
        }
    }
    cr_assert_eq(placed, 3);
    cr_assert_eq(t.c.gpu_left, 0);
    cr_assert_eq(t.nodes[0].gpu_left[0], 0);
    cr_assert_eq(t.nodes[1].gpu_left[0], 0);
}

/* Without a target workload there is no gradient (growth 0 everywhere) and
 * the tightest GPU decides, as before. */
Test(p0exp_frag, no_target_workload_keeps_the_tightest_gpu)
{
    struct two_nodes t;
    two_nodes_init(&t);
    t.c.ntypes = 0;
    t.c.frag = NULL;
    struct hrm_frag_pod p = pod(300);
    struct hrm_frag_choice ch;
    cr_assert_eq(hrm_frag_choose(&t.c, HRM_FRAG_STACK, &p, -1, &ch), 0);
    cr_assert_eq(ch.node, 0);
}

/*
 * The hrm policy in the simulator: two nodes of one 10G GPU; every task
 * stacks (GPU phases) and runs long.  a (5G) takes n0's GPU, b (4G, at 1 s)
 * the idle GPU of n1 (fewer kernels to share with).  c (3G, at 2 s) starts
 * at once on either GPU beside one task: equal wait, equal sharing.  The
 * workload's kinds are 5G (2 of 5 tasks), 4G (1) and 3G (2).  In thousandths
 * of a GPU, F_n(m) is the free share of a GPU too small for m:
 *  - on n0, 500 free becomes 200: F goes from 0 to 200 for every kind, a
 *    growth of 200;
 *  - on n1, 600 free becomes 300: F goes from 0 to 300 for 5G and 4G, a
 *    growth of 0.4 x 300 + 0.2 x 300 = 180.
 * So c goes to n1 (5G and 3G left), d1 (5G, at 3 s) fills n0 and d2 (3G, at
 * 4 s) fills n1: both start at once.  The tightest GPU put c on n0 (2G and
 * 6G left), d1 on n1 (1G left), and d2 waited for a GPU to free up.
 */
Test(p0exp_frag, hrm_policy_takes_the_gradient_among_equal_waits)
{
#define P0EXP_TASK(name, at, mem, count)                                                           \
    "{\"name\": \"" name "\", \"submit\": \"" at "\", \"task\": {\"cpu\": 1, \"mem\": \"1G\","          \
    " \"gpus\": 1, \"gpu_mem\": \"" mem "\", \"gpu_phases\": {\"cpu\": \"60ms\", \"gpu\": \"40ms\","       \
    " \"count\": " count "}}}"
    const char *text =
        "{\"cluster\": {\"nodes\": [{\"name\": \"n\", \"count\": 2, \"cores\": 16, \"mem\": \"64G\","
        " \"gpus\": 1, \"gpu_mem\": \"10G\"}], \"network\": {\"latency\": 0}},"
        " \"workload\": {\"jobs\": [" P0EXP_TASK("a", "0s", "5G", "1000") ", "
        P0EXP_TASK("b", "1s", "4G", "1000") ", " P0EXP_TASK("c", "2s", "3G", "1000") ", "
        P0EXP_TASK("d1", "3s", "5G", "1000") ", " P0EXP_TASK("d2", "4s", "3G", "10") "]}}";
#undef P0EXP_TASK
    struct hrm_error err = {{0}};
    struct hrm_spec *spec = hrm_spec_load_string(text, "t.json", 1, &err);
    cr_assert_not_null(spec, "%s", err.text);
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, spec->cluster, spec->wl);
    struct hrm_sim_config cfg = {.seed = 1};
    struct hrm_params params = {NULL, 0};
    cr_assert_eq(hrm_sim_run(spec->cluster, spec->wl, "hrm", &params, &cfg, &rec, &err), 0, "%s",
                 err.text);
    cr_assert_eq(rec.tasks_done, 5);
    cr_assert_eq(rec.jobs[1].first_start_us, 1 * SEC);
    cr_assert_eq(rec.jobs[2].first_start_us, 2 * SEC);
    cr_assert_eq(rec.jobs[3].first_start_us, 3 * SEC);
    cr_assert_eq(rec.jobs[4].first_start_us, 4 * SEC);
    hrm_run_record_fini(&rec);
    hrm_spec_free(spec);
}
