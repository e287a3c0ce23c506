/* hrm bench dhrm: decision cost per task, simulated tasks per wall-second. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_workload.h"
#include "cli.h"
#include "hrm/alloc.h"
#include "hrm/dsim.h"

static int64_t mono_ns(void *arg)
{
    (void)arg;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double wall_s(void)
{
    return (double)mono_ns(NULL) / 1e9;
}

/*
 * Experiment 1 of docs/reproduction-p4.md built in code: 10,000 nodes x 4 cores, 1 ms
 * latency, jobs of 100 one-core tasks whose durations are uniform in
 * [50, 150] ms, Poisson arrivals at load x capacity.
 */
static int build(long long tasks, double load, uint64_t seed, struct hrm_cluster **cp,
                 struct hrm_workload **wp)
{
    struct bench_poisson p = {
        .who = "hrm bench dhrm",
        .net = {.latency_us = 1000, .rack_bw = 1.25e9, .core_bw = 5e9, .disk_bw = 1.6e8},
        .nodes = 10000,
        .cores = 4,
        .tasks = tasks,
        .per_job = 100,
        .task_ms = 100,
        .load = load,
        .seed = seed,
        .duration = BENCH_DURATION_UNIFORM,
        .stage = "main"};
    return bench_poisson_build(&p, cp, wp);
}

/* Cost of the clock pair itself, subtracted from each instrumented call. */
static double clock_overhead_ns(void)
{
    int64_t t0 = mono_ns(NULL);
    int64_t x = 0;
    for (int i = 0; i < 100000; i++)
        x += mono_ns(NULL) - mono_ns(NULL);
    (void)x;
    return (double)(mono_ns(NULL) - t0) / 100000.0;
}

static int run_one(const struct hrm_cluster *c, const struct hrm_workload *wl, const char *policy,
                   bool timed, struct hrm_summary *sum, struct hrm_dsim_stats *st, double *wall,
                   int64_t *events)
{
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    struct hrm_sim_config cfg = {.seed = 1};
    struct hrm_dsim_options opt = {.clock = timed ? mono_ns : NULL};
    struct hrm_error err = {{0}};
    double t0 = wall_s();
    int rc = hrm_dsim_run_ex(c, wl, policy, NULL, &cfg, &opt, &rec, st, &err);
    *wall = wall_s() - t0;
    if (rc < 0)
        fprintf(stderr, "hrm bench dhrm: %s: %s\n", policy, err.text);
    else
        hrm_summarize(&rec, policy, sum);
    *events = rec.events;
    hrm_run_record_fini(&rec);
    return rc;
}

int bench_dhrm(int argc, char **argv)
{
    static const struct option opts[] = {
        {"tasks", required_argument, NULL, 't'},
        {"cost-tasks", required_argument, NULL, 'k'},
        {"load", required_argument, NULL, 'l'},
        {"policy", required_argument, NULL, 'p'},
        {"skip-cost", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long long tasks = 1000000, cost_tasks = 200000, load = 80;
    const char *policy = "dhrm-nego";
    bool skip_cost = false;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (ch) {
        case 't':
            bad = cli_parse_int("bench dhrm", "--tasks", optarg, 1, 50000000, &tasks);
            break;
        case 'k':
            bad = cli_parse_int("bench dhrm", "--cost-tasks", optarg, 1, 50000000, &cost_tasks);
            break;
        case 'l':
            bad = cli_parse_int("bench dhrm", "--load", optarg, 1, 100, &load);
            break;
        case 'p':
            policy = optarg;
            break;
        case 's':
            skip_cost = true;
            break;
        case 'h':
            printf("usage: hrm bench dhrm [--tasks N] [--cost-tasks N] [--load PCT] "
                   "[--policy P] [--skip-cost]\n\n"
                   "P4 experiment 1 (10,000 nodes x 4 cores, 1 ms latency, jobs of 100 tasks of\n"
                   "~100 ms, Poisson arrivals at PCT %% load; default 80).  First the decision\n"
                   "cost: wall time inside scheduler instances per task, for every distributed\n"
                   "policy on --cost-tasks tasks (default 200000); then simulated tasks per\n"
                   "wall-second for --policy (default dhrm-nego) on --tasks (default 1000000).\n");
            return CLI_OK;
        default:
            return CLI_USAGE;
        }
        if (bad)
            return CLI_USAGE;
    }
    if (!hrm_dsim_policy_known(policy)) {
        fprintf(stderr, "hrm bench dhrm: '%s' is not a distributed policy\n", policy);
        return CLI_USAGE;
    }
    struct hrm_summary sum;
    struct hrm_dsim_stats st;
    double wall;
    int64_t events;
    int rc = CLI_OK;
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    if (!skip_cost) {
        if (build(cost_tasks, (double)load / 100, 7, &c, &wl) < 0)
            return CLI_FAIL;
        double over = clock_overhead_ns();
        for (size_t i = 0; i < hrm_dsim_policy_count() && rc == CLI_OK; i++) {
            const char *p = hrm_dsim_policy_name(i);
            if (strcmp(p, "ideal") == 0)
                continue;
            if (run_one(c, wl, p, true, &sum, &st, &wall, &events) < 0) {
                rc = CLI_FAIL;
                break;
            }
            double ns = st.sched_ns - over * (double)st.sched_calls;
            printf("BENCH dhrm.decision_us.%s %.3f us/task\n", p, ns / 1e3 / (double)wl->ntasks);
        }
        hrm_workload_free(wl);
        hrm_cluster_free(c);
    }
    if (rc != CLI_OK)
        return rc;
    double t0 = wall_s();
    if (build(tasks, (double)load / 100, 1, &c, &wl) < 0)
        return CLI_FAIL;
    double build_s = wall_s() - t0;
    if (run_one(c, wl, policy, false, &sum, &st, &wall, &events) < 0) {
        rc = CLI_FAIL;
    } else {
        printf("BENCH dhrm.build_s %.3f s\n", build_s);
        printf("BENCH dhrm.sim_wall_s %.3f s\n", wall);
        printf("BENCH dhrm.sim_tasks %" PRId64 " tasks\n", (int64_t)wl->ntasks);
        printf("BENCH dhrm.sim_tasks_per_s %.0f tasks/s\n", (double)wl->ntasks / wall);
        printf("BENCH dhrm.sim_events_per_s %.0f events/s\n", (double)events / wall);
        printf("BENCH dhrm.sim_messages %" PRId64 " messages\n", st.messages);
        printf("BENCH dhrm.p50_over_ideal %.4f ratio\n", sum.slowdown_p50);
        printf("BENCH dhrm.p95_over_ideal %.4f ratio\n", sum.slowdown_p95);
    }
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    return rc;
}
