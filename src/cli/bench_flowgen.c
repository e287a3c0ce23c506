/* hrm bench flow-gen: writes a generated min-cost flow instance as a DIMACS file. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hrm/flowgen.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: hrm bench flow-gen FAMILY [--size S|M] [--seed N] [parameters] [--out FILE]\n\n"
        "Writes a min-cost flow instance as a DIMACS file ('p min', 'n', 'a' lines) that\n"
        "`hrm bench flow --dimacs` and LEMON read; the same parameters and seed give the\n"
        "same file.  Every instance has balanced supplies and a feasible flow.\n\n"
        "families:\n"
        "  netgen    NETGEN-style random network: pure sources and sinks, a random\n"
        "            skeleton cycle that keeps it feasible, random arcs\n"
        "  gridgen   GRIDGEN-style grid, arcs both ways between neighbours, sources and\n"
        "            sinks at random grid vertices, extra random arcs\n"
        "  goto      GOTO-like grid on a torus with long-range arcs costed by length,\n"
        "            wide cost and capacity ranges, one source and one sink (modelled\n"
        "            on Goldberg's GOTO family, built to be hard for cost scaling)\n"
        "  p1        P1 scheduling graph with one vertex per GPU (as `hrm bench flow`),\n"
        "            the maximum flow written as fixed supplies\n"
        "  p1-rack   the same with one vertex per machine (rack-aggregated arcs)\n\n"
        "options (defaults: size S / size M):\n"
        "  --size S|M             instance size (S)\n"
        "  --seed N               random seed (1)\n"
        "  --out FILE             where to write (standard output)\n"
        "netgen, gridgen, goto:\n"
        "  --arcs M               arcs in all; netgen 16000/64000, gridgen 12000/48000,\n"
        "                         goto 8 per vertex\n"
        "  --supply N             total supply (netgen 100000/400000, gridgen\n"
        "                         50000/200000, goto 2^20/2^22)\n"
        "  --cost-min, --cost-max arc cost range (1, 10000; goto 1, 2^20)\n"
        "  --cap-min, --cap-max   arc capacity range (1, 1000; goto 1, 2^16)\n"
        "netgen, gridgen:\n"
        "  --sources N, --sinks N supply and demand vertices (netgen 20/80 each,\n"
        "                         gridgen 10/40 each; goto has one of each)\n"
        "netgen:\n"
        "  --nodes N              vertices (2000/8000)\n"
        "gridgen, goto:\n"
        "  --rows R, --cols C     grid shape (gridgen 40x50/80x100, goto 45x45/90x90)\n"
        "p1, p1-rack:\n"
        "  --gpus N               GPUs (1000/10000)\n"
        "  --jobs J               jobs (10/1000)\n"
        "  --tasks-per-job K      tasks per job (200/10)\n"
        "  --gpus-per-machine G   (4)\n"
        "  --machines-per-rack R  (20)\n");
}

enum fl { F_NODES, F_ARCS, F_SOURCES, F_SINKS, F_SUPPLY, F_ROWS, F_COLS, F_COSTMIN, F_COSTMAX,
          F_CAPMIN, F_CAPMAX, F_GPUS, F_JOBS, F_TPJ, F_GPM, F_MPR, F_SEED, NFL };

static const struct option lopts[] = {
    {"nodes", required_argument, NULL, F_NODES},
    {"arcs", required_argument, NULL, F_ARCS},
    {"sources", required_argument, NULL, F_SOURCES},
    {"sinks", required_argument, NULL, F_SINKS},
    {"supply", required_argument, NULL, F_SUPPLY},
    {"rows", required_argument, NULL, F_ROWS},
    {"cols", required_argument, NULL, F_COLS},
    {"cost-min", required_argument, NULL, F_COSTMIN},
    {"cost-max", required_argument, NULL, F_COSTMAX},
    {"cap-min", required_argument, NULL, F_CAPMIN},
    {"cap-max", required_argument, NULL, F_CAPMAX},
    {"gpus", required_argument, NULL, F_GPUS},
    {"jobs", required_argument, NULL, F_JOBS},
    {"tasks-per-job", required_argument, NULL, F_TPJ},
    {"gpus-per-machine", required_argument, NULL, F_GPM},
    {"machines-per-rack", required_argument, NULL, F_MPR},
    {"seed", required_argument, NULL, F_SEED},
    {"size", required_argument, NULL, 'z'},
    {"out", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The flags each family takes (bit per enum fl). */
#define BIT(f) (1u << (f))
#define COMMON (BIT(F_ARCS) | BIT(F_SUPPLY) | BIT(F_COSTMIN) | BIT(F_COSTMAX) | BIT(F_CAPMIN) | \
                BIT(F_CAPMAX) | BIT(F_SEED))
#define P1FLAGS (BIT(F_GPUS) | BIT(F_JOBS) | BIT(F_TPJ) | BIT(F_GPM) | BIT(F_MPR) | BIT(F_SEED))

static const struct family {
    const char *name;
    enum hrm_flowgen_family fam;
    unsigned flags;
} families[] = {
    {"netgen", HRM_FLOWGEN_NETGEN, COMMON | BIT(F_NODES) | BIT(F_SOURCES) | BIT(F_SINKS)},
    {"gridgen", HRM_FLOWGEN_GRIDGEN,
     COMMON | BIT(F_ROWS) | BIT(F_COLS) | BIT(F_SOURCES) | BIT(F_SINKS)},
    {"goto", HRM_FLOWGEN_GOTO, COMMON | BIT(F_ROWS) | BIT(F_COLS)},
    {"p1", HRM_FLOWGEN_P1, P1FLAGS},
    {"p1-rack", HRM_FLOWGEN_P1, P1FLAGS},
};

static long long *field(struct hrm_flowgen_params *p, enum fl f)
{
    long long *at[NFL] = {
        [F_NODES] = &p->nodes,      [F_ARCS] = &p->arcs,         [F_SOURCES] = &p->sources,
        [F_SINKS] = &p->sinks,      [F_SUPPLY] = &p->supply,     [F_ROWS] = &p->rows,
        [F_COLS] = &p->cols,        [F_COSTMIN] = &p->cost_min,  [F_COSTMAX] = &p->cost_max,
        [F_CAPMIN] = &p->cap_min,   [F_CAPMAX] = &p->cap_max,    [F_GPUS] = &p->p1.gpus,
        [F_JOBS] = &p->p1.jobs,     [F_TPJ] = &p->p1.tasks_per_job,
        [F_GPM] = &p->p1.gpus_per_machine, [F_MPR] = &p->p1.machines_per_rack,
    };
    return at[f];
}

int bench_flowgen(int argc, char **argv)
{
    long long val[NFL] = {0};
    int set[NFL] = {0};
    const char *out = NULL;
    char size = 'S';
    int c;
    optind = 1;
    opterr = 0; /* getopt's own message would name "flow-gen", not the command */
    while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
        char flag[32];
        switch (c) {
        case 'h':
            usage(stdout);
            return CLI_OK;
        case 'o':
            out = optarg;
            break;
        case 'z':
            if (strcmp(optarg, "S") != 0 && strcmp(optarg, "M") != 0) {
                fprintf(stderr, "hrm bench flow-gen: --size: '%s' is not S or M\n", optarg);
                return CLI_USAGE;
            }
            size = optarg[0];
            break;
        case '?':
            fprintf(stderr, "hrm bench flow-gen: %s: unknown option, or its value is missing\n",
                    argv[optind - 1]);
            return CLI_USAGE;
        default: /* lopts[c] is the option of enum fl c */
            snprintf(flag, sizeof flag, "--%s", lopts[c].name);
            if (cli_parse_int("bench flow-gen", flag, optarg, c == F_COSTMIN || c == F_SEED ? 0 : 1,
                              INT64_MAX / 4, &val[c]) < 0)
                return CLI_USAGE;
            set[c] = 1;
        }
    }
    const char *name = optind < argc ? argv[optind] : NULL;
    if (optind + 1 < argc) {
        fprintf(stderr, "hrm bench flow-gen: unexpected argument '%s'\n", argv[optind + 1]);
        return CLI_USAGE;
    }
    if (!name) {
        fprintf(stderr, "hrm bench flow-gen: which FAMILY? netgen, gridgen, goto, p1 or p1-rack\n");
        return CLI_USAGE;
    }
    const struct family *fam = NULL;
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
        if (strcmp(name, families[i].name) == 0)
            fam = &families[i];
    if (!fam) {
        fprintf(stderr,
                "hrm bench flow-gen: FAMILY: '%s' is not netgen, gridgen, goto, p1 or p1-rack\n",
                name);
        return CLI_USAGE;
    }
    struct hrm_flowgen_params p;
    hrm_flowgen_defaults(fam->fam, size, &p);
    p.p1.per_gpu = strcmp(fam->name, "p1-rack") != 0;
    for (int f = 0; f < NFL; f++) {
        if (!set[f])
            continue;
        if (!(fam->flags & BIT(f))) {
            fprintf(stderr, "hrm bench flow-gen: --%s does not apply to %s\n", lopts[f].name,
                    fam->name);
            return CLI_USAGE;
        }
        if (f == F_SEED)
            p.seed = (uint64_t)val[f];
        else
            *field(&p, (enum fl)f) = val[f];
    }
    struct hrm_error err = {{0}};
    struct hrm_flow *g = NULL;
    int rc = hrm_flowgen_build(fam->fam, &p, &g, &err);
    if (rc < 0) {
        fprintf(stderr, "hrm bench flow-gen: %s: %s\n", fam->name, err.text);
        return rc == -EINVAL ? CLI_USAGE : CLI_FAIL;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "hrm bench flow-gen: --out: %s: %s\n", out, strerror(errno));
        hrm_flow_free(g);
        return CLI_USAGE;
    }
    char comment[256];
    snprintf(comment, sizeof comment, "hrm bench flow-gen %s --size %c --seed %llu", fam->name,
             size, (unsigned long long)p.seed);
    rc = hrm_flow_write_dimacs(g, f, comment);
    if ((out && fclose(f) != 0) || (!out && fflush(f) != 0) || rc < 0) {
        fprintf(stderr, "hrm bench flow-gen: %s: write failed\n", out ? out : "standard output");
        rc = -1;
    }
    hrm_flow_free(g);
    return rc < 0 ? CLI_FAIL : CLI_OK;
}
