/* hrm bench flow-incr: warm re-solves of the min-cost flow solver per instance family and change kind. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "hrm/alloc.h"
#include "hrm/flow.h"
#include "hrm/flowgen.h"
#include "hrm/rng.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: hrm bench flow-incr FAMILY [--size S|M] [--name NAME] [--seed N]\n"
        "                           [--algo auto|ssp|scaling] [--repeat R] [--job-tasks K]\n"
        "                           [--gpus N] [--jobs J] [--tasks-per-job K]\n"
        "                           [--kind KIND] [--same-start]\n\n"
        "Solves an instance of FAMILY (netgen, gridgen, goto, p1, p1-rack; see\n"
        "`hrm bench flow-gen --help`) from scratch, then, for each kind of change a\n"
        "scheduler makes, R times (default 10): make the change, re-solve from the\n"
        "previous flow and potentials.  After each kind it checks the warm solution\n"
        "(flow within capacities, supplies met, the potentials an optimality\n"
        "certificate) and solves the same problem from scratch, whose cost must match.\n\n"
        "Change kinds, P1 (min-cost max-flow S -> T) and the general families\n"
        "(fixed supplies):\n"
        "  task-end     a scheduled task leaves | an arc carrying flow is removed\n"
        "  job-arrive   a job of K tasks arrives (copies of random tasks' arcs) |\n"
        "               a new source of K units with 8 arcs, a random sink takes K more\n"
        "  node-dies    a machine with busy GPUs fails | every arc through a vertex\n"
        "               carrying flow is removed (the skeleton keeps it feasible)\n"
        "  arc-cost     one placement arc's | any arc's cost changes\n"
        "  batch        10 task-end, 1 job-arrive, 1 node-dies, 10 arc-cost at once\n\n"
        "  --size S|M        instance size (S)       --name NAME  label in BENCH lines (the size)\n"
        "  --seed N          instance seed (1)       --repeat R   re-solves per kind (10)\n"
        "  --algo A          algorithm of the solves (auto)\n"
        "  --kind KIND       only this change kind (all of them)\n"
        "  --same-start      start each change from a from-scratch solve of the problem\n"
        "                    (untimed) instead of the last warm state: builds compared\n"
        "                    so meet the same problems and states\n"
        "  --job-tasks K     tasks (units) of an arriving job (100)\n"
        "  --gpus, --jobs, --tasks-per-job, --gpus-per-machine, --machines-per-rack:\n"
        "                    the P1 shape (defaults of the size, see flow-gen)\n\n"
        "Prints BENCH flow_incr.FAMILY.NAME.full_cpu_ms, and per kind\n"
        "flow_incr.FAMILY.NAME.KIND.cpu_ms (mean CPU time of a warm re-solve),\n"
        ".max_cpu_ms, .scratch_cpu_ms (the from-scratch solve after the last change)\n"
        "and .ratio_vs_scratch (mean warm / scratch; below 1: the warm start pays).\n");
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct incr {
    const char *family, *name;
    int max; /* P1: min-cost max-flow S -> T; else fixed supplies */
    struct hrm_flowgen_sched s;
    struct hrm_flow *g;
    struct hrm_flowgen_changer ch;
};

static int solve(struct incr *x, double *cpu, struct hrm_error *err)
{
    double c0 = cpu_ms();
    int rc = x->max ? hrm_flow_solve_max(x->g, x->s.S, x->s.T, err) : hrm_flow_solve(x->g, err);
    *cpu = cpu_ms() - c0;
    return rc;
}

/* The solution is a flow meeting the supplies (or +-value at the terminals)
 * and the potentials certify its optimality.  0, or -1 with the first fault. */
static int certify(struct incr *x)
{
    struct hrm_flow *g = x->g;
    int32_t n = hrm_flow_vertices(g);
    int64_t *net = hrm_calloc((size_t)n, sizeof(int64_t));
    int bad = 0;
    for (int32_t a = 0; a < hrm_flow_arcs(g) && !bad; a++) {
        int32_t u = hrm_flow_arc_from(g, a), v = hrm_flow_arc_to(g, a);
        int64_t f = hrm_flow_arc_flow(g, a), cap = hrm_flow_arc_capacity(g, a);
        int64_t rc = hrm_flow_arc_cost(g, a) + hrm_flow_potential(g, u) - hrm_flow_potential(g, v);
        net[u] -= f;
        net[v] += f;
        if (f < 0 || f > cap || (f < cap && rc < 0) || (f > 0 && rc > 0)) {
            fprintf(stderr, "hrm bench flow-incr: arc %d: flow %" PRId64 ", capacity %" PRId64
                            ", reduced cost %" PRId64 "\n", a, f, cap, rc);
            bad = 1;
        }
    }
    for (int32_t v = 0; v < n && !bad; v++) {
        int64_t want = -hrm_flow_supply(g, v);
        if (x->max)
            want = v == x->s.S ? -hrm_flow_value(g) : v == x->s.T ? hrm_flow_value(g) : 0;
        if (net[v] != want) {
            fprintf(stderr, "hrm bench flow-incr: vertex %d: net inflow %" PRId64 ", want %" PRId64
                            "\n", v, net[v], want);
            bad = 1;
        }
    }
    hrm_free(net);
    return bad ? -1 : 0;
}

/* Solves x's problem again from scratch (the state --same-start starts each
 * change from). */
static int same_state(struct incr *x, struct hrm_error *err)
{
    double cpu;
    hrm_flow_reset(x->g);
    if (solve(x, &cpu, err) < 0) {
        fprintf(stderr, "hrm bench flow-incr: solve from scratch failed: %s\n", err->text);
        return -1;
    }
    return 0;
}

static int run_kind(struct incr *x, int k, long long repeat, int same_start)
{
    struct hrm_error err = {{0}};
    double sum = 0, worst = 0, cpu;
    int64_t phases = 0, reads = 0, route = 0;
    for (long long i = 0; i < repeat; i++) {
        /* --same-start: the next change meets the state a from-scratch solve
         * leaves (untimed), not the one the last warm re-solve left, so two
         * builds of the engine meet the same problems and states at every
         * change, however differently their re-solves break ties */
        if (same_start && i > 0 && same_state(x, &err) < 0)
            return -1;
        hrm_flowgen_change(&x->ch, (enum hrm_flowgen_change)k);
        if (solve(x, &cpu, &err) < 0) {
            fprintf(stderr, "hrm bench flow-incr: %s: warm re-solve failed: %s\n", hrm_flowgen_change_name((enum hrm_flowgen_change)k),
                    err.text);
            return -1;
        }
        sum += cpu;
        worst = cpu > worst ? cpu : worst;
        struct hrm_flow_stats one;
        hrm_flow_stats(x->g, &one);
        phases += one.phases;
        reads += one.arcs_read;
        route += one.route_read;
    }
    struct hrm_flow_stats st;
    hrm_flow_stats(x->g, &st);
    int64_t warm_cost = hrm_flow_total_cost(x->g), warm_value = hrm_flow_value(x->g);
    if (certify(x) < 0)
        return -1;
    hrm_flow_reset(x->g);
    double scratch;
    if (solve(x, &scratch, &err) < 0) {
        fprintf(stderr, "hrm bench flow-incr: %s: solve from scratch failed: %s\n", hrm_flowgen_change_name((enum hrm_flowgen_change)k),
                err.text);
        return -1;
    }
    if (hrm_flow_total_cost(x->g) != warm_cost || hrm_flow_value(x->g) != warm_value) {
        fprintf(stderr,
                "hrm bench flow-incr: %s: CHECK FAILED: warm cost %" PRId64 ", from scratch %" PRId64
                "\n", hrm_flowgen_change_name((enum hrm_flowgen_change)k), warm_cost, hrm_flow_total_cost(x->g));
        return -1;
    }
    double mean = repeat > 0 ? sum / (double)repeat : 0;
    fprintf(stderr, "flow-incr: %s %s %s: last re-solve %s, %" PRId64 " phases\n", x->family,
            x->name, hrm_flowgen_change_name((enum hrm_flowgen_change)k), st.warm ? "warm" : "cold", st.phases);
    fprintf(stderr, "flow-incr: %s %s %s: per re-solve %.2f searches reading %.0f arcs\n",
            x->family, x->name, hrm_flowgen_change_name((enum hrm_flowgen_change)k),
            repeat > 0 ? (double)phases / (double)repeat : 0,
            repeat > 0 ? (double)reads / (double)repeat : 0);
    fprintf(stderr, "flow-incr: %s %s %s: the routing read %.0f arcs per re-solve\n",
            x->family, x->name, hrm_flowgen_change_name((enum hrm_flowgen_change)k),
            repeat > 0 ? (double)route / (double)repeat : 0);
    const char *f = x->family, *nm = x->name, *kn = hrm_flowgen_change_name((enum hrm_flowgen_change)k);
    printf("BENCH flow_incr.%s.%s.%s.cpu_ms %.3f ms\n", f, nm, kn, mean);
    printf("BENCH flow_incr.%s.%s.%s.max_cpu_ms %.3f ms\n", f, nm, kn, worst);
    printf("BENCH flow_incr.%s.%s.%s.scratch_cpu_ms %.3f ms\n", f, nm, kn, scratch);
    printf("BENCH flow_incr.%s.%s.%s.ratio_vs_scratch %.4f ratio\n", f, nm, kn,
           scratch > 0 ? mean / scratch : 0);
    fflush(stdout);
    return 0;
}

static const struct {
    const char *name;
    enum hrm_flowgen_family fam;
    int per_gpu;
} families[] = {
    {"netgen", HRM_FLOWGEN_NETGEN, 0}, {"gridgen", HRM_FLOWGEN_GRIDGEN, 0},
    {"goto", HRM_FLOWGEN_GOTO, 0},     {"p1", HRM_FLOWGEN_P1, 1},
    {"p1-rack", HRM_FLOWGEN_P1, 0},
};

int bench_flowincr(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"size", required_argument, NULL, 'z'},   {"name", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 's'},   {"algo", required_argument, NULL, 'a'},
        {"repeat", required_argument, NULL, 'r'}, {"job-tasks", required_argument, NULL, 'k'},
        {"gpus", required_argument, NULL, 'g'},   {"jobs", required_argument, NULL, 'j'},
        {"tasks-per-job", required_argument, NULL, 't'},
        {"gpus-per-machine", required_argument, NULL, 'G'},
        {"machines-per-rack", required_argument, NULL, 'R'},
        {"kind", required_argument, NULL, 'K'},   {"help", no_argument, NULL, 'h'},
        {"same-start", no_argument, NULL, 'X'},
        {NULL, 0, NULL, 0},
    };
    char size = 'S';
    const char *name = NULL;
    long long seed = 1, repeat = 10, job_tasks = 100;
    long long gpus = -1, jobs = -1, tpj = -1, gpm = -1, mpr = -1;
    enum hrm_flow_algo algo = HRM_FLOW_AUTO;
    int c, bad = 0, only = -1, same_start = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1 && !bad) {
        switch (c) {
        case 'z':
            if (strcmp(optarg, "S") != 0 && strcmp(optarg, "M") != 0) {
                fprintf(stderr, "hrm bench flow-incr: --size: '%s' is not S or M\n", optarg);
                return CLI_USAGE;
            }
            size = optarg[0];
            break;
        case 'n':
            name = optarg;
            break;
        case 's':
            bad = cli_parse_int("bench flow-incr", "--seed", optarg, 0, INT64_MAX, &seed);
            break;
        case 'a':
            if (strcmp(optarg, "auto") == 0)
                algo = HRM_FLOW_AUTO;
            else if (strcmp(optarg, "ssp") == 0)
                algo = HRM_FLOW_SSP;
            else if (strcmp(optarg, "scaling") == 0)
                algo = HRM_FLOW_SCALING;
            else {
                fprintf(stderr, "hrm bench flow-incr: --algo: '%s' is not auto, ssp or scaling\n",
                        optarg);
                return CLI_USAGE;
            }
            break;
        case 'r':
            bad = cli_parse_int("bench flow-incr", "--repeat", optarg, 1, 100000, &repeat);
            break;
        case 'k':
            bad = cli_parse_int("bench flow-incr", "--job-tasks", optarg, 1, 100000, &job_tasks);
            break;
        case 'g':
            bad = cli_parse_int("bench flow-incr", "--gpus", optarg, 1, 10000000, &gpus);
            break;
        case 'j':
            bad = cli_parse_int("bench flow-incr", "--jobs", optarg, 1, 10000000, &jobs);
            break;
        case 't':
            bad = cli_parse_int("bench flow-incr", "--tasks-per-job", optarg, 1, 10000000, &tpj);
            break;
        case 'G':
            bad = cli_parse_int("bench flow-incr", "--gpus-per-machine", optarg, 1, 1024, &gpm);
            break;
        case 'R':
            bad = cli_parse_int("bench flow-incr", "--machines-per-rack", optarg, 1, 100000, &mpr);
            break;
        case 'K':
            for (int k = 0; k < HRM_FLOWGEN_NCHANGES; k++)
                if (strcmp(optarg, hrm_flowgen_change_name((enum hrm_flowgen_change)k)) == 0)
                    only = k;
            if (only < 0) {
                fprintf(stderr, "hrm bench flow-incr: --kind: '%s' is not task-end, job-arrive, "
                                "node-dies, arc-cost or batch\n", optarg);
                return CLI_USAGE;
            }
            break;
        case 'X':
            same_start = 1;
            break;
        case 'h':
            usage(stdout);
            return CLI_OK;
        default:
            return CLI_USAGE;
        }
    }
    if (bad)
        return CLI_USAGE;
    if (optind != argc - 1) {
        fprintf(stderr, "hrm bench flow-incr: give one FAMILY (netgen, gridgen, goto, p1, "
                        "p1-rack)\n");
        return CLI_USAGE;
    }
    const char *fam_name = argv[optind];
    int fi = -1;
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
        if (strcmp(fam_name, families[i].name) == 0)
            fi = (int)i;
    if (fi < 0) {
        fprintf(stderr, "hrm bench flow-incr: unknown family '%s' (netgen, gridgen, goto, p1, "
                        "p1-rack)\n", fam_name);
        return CLI_USAGE;
    }
    int p1 = families[fi].fam == HRM_FLOWGEN_P1;
    if (!p1 && (gpus > 0 || jobs > 0 || tpj > 0 || gpm > 0 || mpr > 0)) {
        fprintf(stderr, "hrm bench flow-incr: --gpus, --jobs, --tasks-per-job, "
                        "--gpus-per-machine and --machines-per-rack apply to p1 and p1-rack only\n");
        return CLI_USAGE;
    }
    char sz[2] = {size, 0};
    struct incr x = {.family = fam_name, .name = name ? name : sz, .max = p1};
    x.ch = (struct hrm_flowgen_changer){.s = &x.s, .job_tasks = job_tasks};
    hrm_rng_seed(&x.ch.rng, (uint64_t)seed + 17);
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(families[fi].fam, size, &p);
    p.seed = (uint64_t)seed;
    struct hrm_error err = {{0}};
    if (p1) {
        p.p1.seed = (uint64_t)seed;
        p.p1.per_gpu = families[fi].per_gpu;
        p.p1.gpus = gpus > 0 ? gpus : p.p1.gpus;
        p.p1.jobs = jobs > 0 ? jobs : p.p1.jobs;
        p.p1.tasks_per_job = tpj > 0 ? tpj : p.p1.tasks_per_job;
        p.p1.gpus_per_machine = gpm > 0 ? gpm : p.p1.gpus_per_machine;
        p.p1.machines_per_rack = mpr > 0 ? mpr : p.p1.machines_per_rack;
        if (p.p1.jobs * p.p1.tasks_per_job > 50000000) {
            fprintf(stderr, "hrm bench flow-incr: at most 50,000,000 tasks\n");
            return CLI_USAGE;
        }
        hrm_flowgen_p1_build(&p.p1, &x.s);
        x.g = x.s.g;
    } else {
        if (hrm_flowgen_build(families[fi].fam, &p, &x.g, &err) < 0) {
            fprintf(stderr, "hrm bench flow-incr: %s\n", err.text);
            return CLI_USAGE;
        }
        x.s.g = x.g;
        x.s.S = x.s.T = -1;
        x.ch.skeleton_cap = p.supply;
    }
    hrm_flow_set_algo(x.g, algo);
    int code = CLI_OK;
    double full;
    if (solve(&x, &full, &err) < 0) {
        fprintf(stderr, "hrm bench flow-incr: solve failed: %s\n", err.text);
        code = CLI_FAIL;
        goto out;
    }
    printf("BENCH flow_incr.%s.%s.vertices %" PRId32 " vertices\n", x.family, x.name,
           hrm_flow_vertices(x.g));
    printf("BENCH flow_incr.%s.%s.arcs %" PRId32 " arcs\n", x.family, x.name, hrm_flow_arcs(x.g));
    printf("BENCH flow_incr.%s.%s.full_cpu_ms %.3f ms\n", x.family, x.name, full);
    for (int k = 0; k < HRM_FLOWGEN_NCHANGES; k++)
        if ((only < 0 || k == only) && run_kind(&x, k, repeat, same_start) < 0) {
            code = CLI_FAIL;
            break;
        }
out:
    hrm_flowgen_sched_fini(&x.s);
    return code;
}
