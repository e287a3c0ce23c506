/* hrm bench: named benchmarks printing machine-readable "BENCH <name> <value> <unit>" lines. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_workload.h"
#include "cli.h"
#include "hrm/alloc.h"
#include "hrm/sim.h"

struct bench {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

static int bench_sim(int argc, char **argv);

static const struct bench benches[] = {
    {"sim", "simulator: 10,000 nodes x 4 cores, 1,000,000 tasks of ~100 ms under FIFO", bench_sim},
    {"flow", "min-cost flow solver: P1 scheduling graph or DIMACS file, full and warm solves",
     bench_flow},
    {"flow-gen", "min-cost flow instances (NETGEN, GRIDGEN, GOTO, P1) as DIMACS files",
     bench_flowgen},
    {"flow-incr", "min-cost flow solver: warm re-solves per instance family and change kind",
     bench_flowincr},
    {"dhrm", "distributed schedulers: decision cost per task, simulated tasks/s (P4 exp. 1)",
     bench_dhrm},
    {"central", "central scheduler role: decision cost per task on a spec (P4 Fig. 7)",
     bench_central},
    {"throughput", "runtime: local cluster tasks/s, start latency, CPU and memory per task",
     bench_throughput},
    {"flood", "runtime: the master's answer time to one client while others flood it", bench_flood},
    {"p4real", "runtime: a workload of sleep-task jobs replayed on a real local cluster (P4)",
     bench_p4real},
    {"fleet", "runtime: thousands of simulated agents: placements/s, start p99, reconcile",
     bench_fleet},
};

#define NBENCHES (sizeof(benches) / sizeof(benches[0]))

static void bench_usage(FILE *out)
{
    fprintf(out, "usage: hrm bench NAME [options]\n\n"
                 "Runs a named benchmark; results are lines 'BENCH <name> <value> <unit>'.\n"
                 "'hrm bench NAME --help' lists a benchmark's options.\n\nbenchmarks:\n");
    for (size_t i = 0; i < NBENCHES; i++)
        fprintf(out, "  %-10s %s\n", benches[i].name, benches[i].summary);
}

int cmd_bench(int argc, char **argv)
{
    if (argc < 2) {
        bench_usage(stderr);
        return CLI_USAGE;
    }
    if (cli_is_help(argv[1])) {
        bench_usage(stdout);
        return CLI_OK;
    }
    for (size_t i = 0; i < NBENCHES; i++)
        if (strcmp(argv[1], benches[i].name) == 0)
            return benches[i].run(argc - 1, argv + 1);
    fprintf(stderr, "hrm bench: unknown benchmark '%s'\n\n", argv[1]);
    bench_usage(stderr);
    return CLI_USAGE;
}

/* CPU time of this (single-threaded) process: on a shared or virtual machine
 * the wall clock also counts the time the simulator waited for a core, which
 * says nothing of the simulator's speed "on one core". */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bench_sim(int argc, char **argv)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'},
        {"cores", required_argument, NULL, 'c'},
        {"tasks", required_argument, NULL, 't'},
        {"job-tasks", required_argument, NULL, 'k'},
        {"task-ms", required_argument, NULL, 'm'},
        {"load", required_argument, NULL, 'l'},
        {"policy", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long long nodes = 10000, cores = 4, tasks = 1000000, per_job = 100, task_ms = 100;
    long long load_pct = 80;
    const char *policy = "fifo";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'n':
            bad = cli_parse_int("bench sim", "--nodes", optarg, 1, 1000000, &nodes);
            break;
        case 'c':
            bad = cli_parse_int("bench sim", "--cores", optarg, 1, 1024, &cores);
            break;
        case 't':
            bad = cli_parse_int("bench sim", "--tasks", optarg, 1, 100000000, &tasks);
            break;
        case 'k':
            bad = cli_parse_int("bench sim", "--job-tasks", optarg, 1, 1000000, &per_job);
            break;
        case 'm':
            bad = cli_parse_int("bench sim", "--task-ms", optarg, 1, 3600000, &task_ms);
            break;
        case 'l':
            bad = cli_parse_int("bench sim", "--load", optarg, 1, 100, &load_pct);
            break;
        case 'p':
            policy = optarg;
            break;
        case 'h':
            printf(
                "usage: hrm bench sim [--nodes N] [--cores C] [--tasks T] [--job-tasks K]\n"
                "                     [--task-ms MS] [--load PCT] [--policy NAME]\n\n"
                "Simulates T one-core tasks (exponential durations, mean MS) in jobs of K\n"
                "arriving as a Poisson process at PCT %% of the capacity of N nodes x C cores.\n"
                "Defaults: 10000 nodes, 4 cores, 1000000 tasks, 100 per job, 100 ms, 80 %%, fifo.\n"
                "Prints BENCH sim.* lines: events, events/s, wall time (build excluded),\n"
                "and events per second of the process's own CPU time (events_per_cpu_s),\n"
                "the figure that does not count waiting for a core on a busy machine.\n");
            return CLI_OK;
        default:
            return CLI_USAGE;
        }
        if (bad)
            return CLI_USAGE;
    }
    struct hrm_cluster *cl;
    struct hrm_workload *wl;
    double t0 = cli_mono_s();
    /* no network latency; durations exponential around task_ms */
    struct bench_poisson p = {.who = "hrm bench sim",
                              .nodes = nodes,
                              .cores = cores,
                              .tasks = tasks,
                              .per_job = per_job,
                              .task_ms = (double)task_ms,
                              .load = (double)load_pct / 100.0,
                              .seed = 1,
                              .duration = BENCH_DURATION_EXP,
                              .stage = "tasks"};
    if (bench_poisson_build(&p, &cl, &wl) < 0)
        return CLI_FAIL;
    double t1 = cli_mono_s();
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, cl, wl);
    struct hrm_sim_config cfg = {.seed = 1};
    struct hrm_error err = {{0}};
    double c1 = cpu_now();
    int rc = hrm_sim_run(cl, wl, policy, NULL, &cfg, &rec, &err);
    double c2 = cpu_now();
    double t2 = cli_mono_s();
    if (rc < 0) {
        fprintf(stderr, "hrm bench sim: %s\n", err.text);
    } else {
        struct hrm_summary s;
        hrm_summarize(&rec, policy, &s);
        printf("BENCH sim.build_s %.3f s\n", t1 - t0);
        printf("BENCH sim.wall_s %.3f s\n", t2 - t1);
        printf("BENCH sim.events %" PRId64 " events\n", rec.events);
        printf("BENCH sim.events_per_s %.0f events/s\n", (double)rec.events / (t2 - t1));
        printf("BENCH sim.cpu_s %.3f s\n", c2 - c1);
        printf("BENCH sim.events_per_cpu_s %.0f events/s\n", (double)rec.events / (c2 - c1));
        printf("BENCH sim.tasks_done %" PRId64 " tasks\n", rec.tasks_done);
        printf("BENCH sim.virtual_s %.3f s\n", s.makespan_s);
        printf("BENCH sim.response_p50_s %.4f s\n", s.response_p50_s);
        printf("BENCH sim.cpu_util %.3f fraction\n", s.cpu_util);
    }
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(cl);
    return rc < 0 ? CLI_FAIL : CLI_OK;
}
