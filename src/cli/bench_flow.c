/* hrm bench flow: the min-cost flow solver on a generated P1 scheduling graph or a DIMACS file. */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/flowgen.h"
#include "hrm/rng.h"

static double clock_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double now_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

/* CPU time of this thread: on a shared machine it leaves out the time other
 * processes hold the core, which wall time does not. */
static double cpu_ms(void)
{
    return clock_ms(CLOCK_THREAD_CPUTIME_ID);
}

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: hrm bench flow [--dimacs FILE | --gpus N --jobs J --tasks-per-job K ...]\n"
        "                      [--algo auto|ssp|scaling|simplex] [--full F] [--repeat R]\n"
        "                      [--write-dimacs FILE]\n\n"
        "Solves a min-cost flow problem from scratch F times (default 3; the best time\n"
        "counts), then re-solves it R times (default 20) after one small change each,\n"
        "from the previous flow.\n\n"
        "  --algo A               auto (default: the simplex where costs take many values,\n"
        "                         or where few, with fixed supplies, under 60,000 vertices\n"
        "                         and no units compete or few compete for many places;\n"
        "                         shortest paths otherwise, and for warm re-solves the\n"
        "                         engine that can reuse the last solve), ssp, scaling or\n"
        "                         simplex (network simplex, block search)\n"
        "  --dimacs FILE          a DIMACS min-cost flow problem ('p min', 'n', 'a' lines);\n"
        "                         warm steps change one random arc's cost\n"
        "  --gpus N               generated P1 scheduling graph (default 2000 GPUs,\n"
        "  --jobs J               100 jobs x 100 tasks): min-cost max-flow S -> T;\n"
        "  --tasks-per-job K      warm steps end one scheduled task, then change one\n"
        "                         placement arc's cost\n"
        "  --gpus-per-machine G   (4)    --machines-per-rack R (20)\n"
        "  --blocks B             (2)    blocks read per task, each with --replicas (3)\n"
        "  --mem-classes C        (2)    GPU memory classes; --big-pct, --need-big-pct (25, 20)\n"
        "  --machine-vertices     one vertex per machine instead of per GPU\n"
        "  --seed S               (1)\n"
        "  --write-dimacs FILE    write the problem (max flow as fixed supplies) and go on\n\n"
        "Prints BENCH flow.vertices, flow.arcs, flow.cost, flow.solve_ms, flow.incremental_ms\n"
        "(mean of the task-end steps, or of the arc steps for DIMACS), flow.incremental_arc_ms,\n"
        "flow.incremental_max_ms (wall time), flow.solve_cpu_ms and flow.incremental_cpu_ms\n"
        "(the thread's CPU time, steadier on a shared machine); a check re-solves from\n"
        "scratch and compares costs.\n");
}

struct opts {
    const char *dimacs, *write;
    enum hrm_flow_algo algo;
    long long repeat, full;
    struct hrm_flowgen_p1 gen;
};

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option lopts[] = {
        {"dimacs", required_argument, NULL, 'd'},
        {"write-dimacs", required_argument, NULL, 'w'},
        {"algo", required_argument, NULL, 'a'},
        {"repeat", required_argument, NULL, 'r'},
        {"full", required_argument, NULL, 'F'},
        {"gpus", required_argument, NULL, 'g'},
        {"jobs", required_argument, NULL, 'j'},
        {"tasks-per-job", required_argument, NULL, 'k'},
        {"gpus-per-machine", required_argument, NULL, 'G'},
        {"machines-per-rack", required_argument, NULL, 'R'},
        {"blocks", required_argument, NULL, 'b'},
        {"replicas", required_argument, NULL, 'p'},
        {"mem-classes", required_argument, NULL, 'c'},
        {"big-pct", required_argument, NULL, 'B'},
        {"need-big-pct", required_argument, NULL, 'N'},
        {"machine-vertices", no_argument, NULL, 'M'},
        {"seed", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct opts){.repeat = 20, .full = 3};
    hrm_flowgen_p1_defaults(&o->gen);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
        long long v = 0;
        int bad = 0;
        struct hrm_flowgen_p1 *p = &o->gen;
        switch (c) {
        case 'd':
            o->dimacs = optarg;
            break;
        case 'w':
            o->write = optarg;
            break;
        case 'a':
            if (strcmp(optarg, "auto") == 0)
                o->algo = HRM_FLOW_AUTO;
            else if (strcmp(optarg, "ssp") == 0)
                o->algo = HRM_FLOW_SSP;
            else if (strcmp(optarg, "scaling") == 0)
                o->algo = HRM_FLOW_SCALING;
            else if (strcmp(optarg, "simplex") == 0)
                o->algo = HRM_FLOW_SIMPLEX;
            else {
                fprintf(stderr, "hrm bench flow: --algo: '%s' is not auto, ssp, scaling or simplex\n",
                        optarg);
                bad = 1;
            }
            break;
        case 'r':
            bad = cli_parse_int("bench flow", "--repeat", optarg, 0, 100000, &o->repeat);
            break;
        case 'F':
            bad = cli_parse_int("bench flow", "--full", optarg, 1, 1000, &o->full);
            break;
        case 'g':
            bad = cli_parse_int("bench flow", "--gpus", optarg, 1, 10000000, &p->gpus);
            break;
        case 'j':
            bad = cli_parse_int("bench flow", "--jobs", optarg, 1, 10000000, &p->jobs);
            break;
        case 'k':
            bad = cli_parse_int("bench flow", "--tasks-per-job", optarg, 1, 10000000,
                                &p->tasks_per_job);
            break;
        case 'G':
            bad = cli_parse_int("bench flow", "--gpus-per-machine", optarg, 1, 1024,
                                &p->gpus_per_machine);
            break;
        case 'R':
            bad = cli_parse_int("bench flow", "--machines-per-rack", optarg, 1, 100000,
                                &p->machines_per_rack);
            break;
        case 'b':
            bad = cli_parse_int("bench flow", "--blocks", optarg, 1, 64, &p->blocks);
            break;
        case 'p':
            bad = cli_parse_int("bench flow", "--replicas", optarg, 1, 16, &p->replicas);
            break;
        case 'c':
            bad = cli_parse_int("bench flow", "--mem-classes", optarg, 1, 16, &p->mem_classes);
            break;
        case 'B':
            bad = cli_parse_int("bench flow", "--big-pct", optarg, 0, 100, &p->big_pct);
            break;
        case 'N':
            bad = cli_parse_int("bench flow", "--need-big-pct", optarg, 0, 100, &p->need_big_pct);
            break;
        case 'M':
            p->per_gpu = 0;
            break;
        case 's':
            bad = cli_parse_int("bench flow", "--seed", optarg, 0, INT64_MAX, &v);
            p->seed = (uint64_t)v;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            return -1;
        }
        if (bad)
            return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "hrm bench flow: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (o->gen.jobs * o->gen.tasks_per_job > 50000000) {
        fprintf(stderr, "hrm bench flow: at most 50,000,000 tasks\n");
        return -1;
    }
    return 0;
}

/* Writes the problem with the max-flow value as fixed supplies (what LEMON solves). */
static int write_supply_form(struct hrm_flow *g, int32_t S, int32_t T, int64_t value,
                             const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hrm bench flow: %s: %s\n", path, strerror(errno));
        return -1;
    }
    int64_t s0 = hrm_flow_supply(g, S), t0 = hrm_flow_supply(g, T);
    hrm_flow_set_supply(g, S, value);
    hrm_flow_set_supply(g, T, -value);
    int rc = hrm_flow_write_dimacs(
        g, f, "hrm bench flow: P1 scheduling graph, S->T max flow as supplies");
    hrm_flow_set_supply(g, S, s0);
    hrm_flow_set_supply(g, T, t0);
    if (fclose(f) != 0 || rc < 0) {
        fprintf(stderr, "hrm bench flow: %s: write failed\n", path);
        return -1;
    }
    return 0;
}

static void print_stats(const char *what, const struct hrm_flow *g)
{
    struct hrm_flow_stats st;
    hrm_flow_stats(g, &st);
    fprintf(stderr,
            "flow: %s: %s%s, %" PRId64 " phases, %" PRId64 " scanned, %" PRId64 " augmentations\n",
            what, st.warm ? "warm " : "", st.simplex   ? "network simplex"
            : st.scaling ? "cost scaling"
                         : "shortest paths", st.phases,
            st.scanned, st.augmentations);
}

/* A from-scratch solve of the same problem must give the same cost. */
static int check_cold(struct hrm_flow *g, int32_t S, int32_t T, int max)
{
    struct hrm_flow *h = hrm_flow_new(hrm_flow_vertices(g), hrm_flow_arcs(g));
    for (int32_t v = 0; v < hrm_flow_vertices(g); v++)
        hrm_flow_add_vertex(h, hrm_flow_supply(g, v));
    for (int32_t a = 0; a < hrm_flow_arcs(g); a++)
        hrm_flow_add_arc(h, hrm_flow_arc_from(g, a), hrm_flow_arc_to(g, a),
                         hrm_flow_arc_capacity(g, a), hrm_flow_arc_cost(g, a));
    struct hrm_error err = {{0}};
    int rc = max ? hrm_flow_solve_max(h, S, T, &err) : hrm_flow_solve(h, &err);
    int ok = rc == 0 && hrm_flow_total_cost(h) == hrm_flow_total_cost(g) &&
             (!max || hrm_flow_value(h) == hrm_flow_value(g));
    if (!ok)
        fprintf(stderr,
                "hrm bench flow: CHECK FAILED: warm cost %" PRId64 ", from scratch %" PRId64
                " (rc %d)\n",
                hrm_flow_total_cost(g), hrm_flow_total_cost(h), rc);
    hrm_flow_free(h);
    return ok ? 0 : -1;
}

/* dimacs: the file g was read from, or NULL. */
static int solve(struct hrm_flow *g, int max, int32_t S, int32_t T, const char *dimacs, double *ms,
                 double *cpu)
{
    struct hrm_error err = {{0}};
    double t0 = now_ms(), c0 = cpu_ms();
    int rc = max ? hrm_flow_solve_max(g, S, T, &err) : hrm_flow_solve(g, &err);
    *cpu = cpu_ms() - c0;
    *ms = now_ms() - t0;
    if (rc == -HRM_EINFEASIBLE && dimacs)
        hrm_flow_dimacs_infeasible(g, dimacs, &err);
    if (rc < 0)
        fprintf(stderr, "hrm bench flow: solve failed: %s\n", err.text);
    return rc;
}

int bench_flow(int argc, char **argv)
{
    struct opts o;
    int prc = parse(argc, argv, &o);
    if (prc != 0)
        return prc > 0 ? CLI_OK : CLI_USAGE;
    struct hrm_flowgen_sched s = {0};
    int max = o.dimacs == NULL;
    struct hrm_error err = {{0}};
    double t0 = now_ms();
    if (o.dimacs) {
        FILE *f = fopen(o.dimacs, "r");
        if (!f) {
            fprintf(stderr, "hrm bench flow: %s: %s\n", o.dimacs, strerror(errno));
            return CLI_USAGE;
        }
        int rc = hrm_flow_read_dimacs(f, o.dimacs, &s.g, &err);
        fclose(f);
        if (rc < 0) {
            fprintf(stderr, "hrm bench flow: %s\n", err.text);
            return CLI_USAGE;
        }
        s.S = s.T = -1;
    } else {
        hrm_flowgen_p1_build(&o.gen, &s);
    }
    double t_build = now_ms() - t0;
    struct hrm_flow *g = s.g;
    hrm_flow_set_algo(g, o.algo);
    printf("BENCH flow.vertices %" PRId32 " vertices\n", hrm_flow_vertices(g));
    printf("BENCH flow.arcs %" PRId32 " arcs\n", hrm_flow_arcs(g));
    fprintf(stderr, "flow: graph built in %.1f ms\n", t_build);
    double ms, best = -1, cpu, best_cpu = -1;
    int code = CLI_OK;
    /* the best of a few from-scratch solves: other work on the machine only adds */
    for (long long k = 0; k < o.full; k++) {
        hrm_flow_reset(g);
        if (solve(g, max, s.S, s.T, o.dimacs, &ms, &cpu) < 0) {
            code = CLI_FAIL;
            goto out;
        }
        best = best < 0 || ms < best ? ms : best;
        best_cpu = best_cpu < 0 || cpu < best_cpu ? cpu : best_cpu;
    }
    ms = best;
    print_stats("full solve", g);
    printf("BENCH flow.cost %" PRId64 " units\n", hrm_flow_total_cost(g));
    if (max)
        printf("BENCH flow.value %" PRId64 " units\n", hrm_flow_value(g));
    printf("BENCH flow.solve_ms %.3f ms\n", ms);
    printf("BENCH flow.solve_cpu_ms %.3f ms\n", best_cpu);
    if (o.write && write_supply_form(g, s.S, s.T, hrm_flow_value(g), o.write) < 0) {
        code = CLI_FAIL;
        goto out;
    }

    /* warm steps: after each change, re-solve from the previous flow */
    struct hrm_rng rng;
    hrm_rng_seed(&rng, o.gen.seed + 17);
    double sum_end = 0, sum_arc = 0, worst = 0, cpu_end = 0, cpu_arc = 0;
    long long n_end = 0, n_arc = 0;
    for (long long i = 0; i < o.repeat; i++) {
        if (max) {
            /* one scheduled task ends: its vertex leaves, its job has one task less */
            int32_t t = -1;
            for (int tries = 0; tries < 1000 && t < 0; tries++) {
                int32_t c = (int32_t)hrm_rng_below(&rng, (uint64_t)s.ntasks);
                if (hrm_flow_arc_flow(g, s.task_arc[c]) > 0)
                    t = c;
            }
            if (t >= 0) {
                int32_t ja = s.job_arc[s.task_job[t]];
                hrm_flow_set_arc(g, s.task_arc[t], 0, hrm_flow_arc_cost(g, s.task_arc[t]));
                hrm_flow_set_arc(g, ja, hrm_flow_arc_capacity(g, ja) - 1, hrm_flow_arc_cost(g, ja));
                if (solve(g, max, s.S, s.T, o.dimacs, &ms, &cpu) < 0) {
                    code = CLI_FAIL;
                    goto out;
                }
                if (i == 0)
                    print_stats("task end", g);
                sum_end += ms;
                cpu_end += cpu;
                worst = ms > worst ? ms : worst;
                n_end++;
            }
        }
        /* one arc's cost changes */
        int32_t a;
        if (max)
            a = s.place_arcs[hrm_rng_below(&rng, (uint64_t)s.nplace)];
        else
            a = (int32_t)hrm_rng_below(&rng, (uint64_t)hrm_flow_arcs(g));
        int64_t c = hrm_flow_arc_cost(g, a);
        int64_t nc = c / 2 + (int64_t)hrm_rng_below(&rng, (uint64_t)(c > 0 ? c : 1) + 1);
        hrm_flow_set_arc(g, a, hrm_flow_arc_capacity(g, a), nc);
        if (solve(g, max, s.S, s.T, o.dimacs, &ms, &cpu) < 0) {
            code = CLI_FAIL;
            goto out;
        }
        if (i == 0)
            print_stats("arc change", g);
        sum_arc += ms;
        cpu_arc += cpu;
        worst = ms > worst ? ms : worst;
        n_arc++;
    }
    if (n_end)
        printf("BENCH flow.incremental_ms %.3f ms\n", sum_end / (double)n_end);
    else if (n_arc)
        printf("BENCH flow.incremental_ms %.3f ms\n", sum_arc / (double)n_arc);
    if (n_end)
        printf("BENCH flow.incremental_cpu_ms %.3f ms\n", cpu_end / (double)n_end);
    else if (n_arc)
        printf("BENCH flow.incremental_cpu_ms %.3f ms\n", cpu_arc / (double)n_arc);
    if (n_arc)
        printf("BENCH flow.incremental_arc_ms %.3f ms\n", sum_arc / (double)n_arc);
    if (n_end + n_arc)
        printf("BENCH flow.incremental_max_ms %.3f ms\n", worst);
    if (o.repeat > 0) {
        if (check_cold(g, s.S, s.T, max) < 0)
            code = CLI_FAIL;
        else
            fprintf(stderr, "flow: warm result equals a from-scratch solve\n");
    }
out:
    hrm_flowgen_sched_fini(&s);
    return code;
}
