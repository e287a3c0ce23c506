/* hrm trace frag: the GPU fragmentation experiment of Weng et al. (ATC '23) on a node and pod list.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hrm/alloc.h"
#include "hrm/frag.h"
#include "hrm/trace.h"

#define DEFAULT_FRAG_POLICIES "bestfit,exclusive,hrm,fgd"

static void frag_usage(FILE *out)
{
    fprintf(out,
            "usage: hrm trace frag --nodes FILE --pods FILE [options]\n\n"
            "Pods drawn at random from the pod list arrive one by one and are placed by each\n"
            "policy or refused, until their GPU demand reaches --until %% of the cluster's GPUs.\n"
            "Prints the GPU capacity allocated and free-but-fragmented (the paper's measure)\n"
            "when the first pod is refused and at given arrival levels "
            "(docs/reproduction-p0-trace.md).\n\n"
            "options:\n"
            "      --nodes FILE     node list (openb_node_list_*.csv)\n"
            "      --pods FILE      pod list (openb_pod_list_*.csv; times not needed)\n"
            "  -p, --policy LIST    of bestfit, exclusive (one task per GPU), hrm (queue\n"
            "                       stacking), fgd (default " DEFAULT_FRAG_POLICIES ")\n"
            "  -s, --seed N         random seed (default 1)\n"
            "  -r, --runs R         repetitions; figures are means (default 10)\n"
            "      --until PCT      stop arrivals at PCT %% of the GPU capacity (default 130)\n"
            "      --series         also print CSV lines 'series,policy,arrived%%,...' per 1 %%\n"
            "      --strict         refuse the input at the first bad row\n"
            "  -h, --help           this help\n\n"
            "exit status: 0 done, 2 bad usage or input\n");
}

static void print_point_cols(const struct hrm_frag_point *p, double gpus)
{
    printf(" %7.1f %7.1f %7.1f %7.1f %8.0f", 100 * p->allocated, 100 * p->requested,
           100 * p->fragmented, 100 * p->unallocated, p->unallocated * gpus);
}

static void print_results(const struct hrm_trace *t, const struct hrm_frag_result *res, int n,
                          long long seed, long long until, bool series)
{
    int64_t gpus = 0;
    for (int32_t i = 0; i < t->nnodes; i++)
        gpus += t->nodes[i].gpus;
    printf("# GPU fragmentation (method of Weng et al., ATC '23): %d nodes, %lld GPUs; pods "
           "drawn from %d (%d types); seed %lld, %d runs, arrivals to %lld%% of GPU capacity\n",
           t->nnodes, (long long)gpus, res[0].pool, res[0].ntypes, seed, res[0].runs, until);
    printf("# %% of GPU capacity: alloc = held by pods, req = asked by them (differs for "
           "exclusive), frag = free but fragmented, free = unallocated; free GPUs in GPUs\n\n");
    printf("when the first pod is refused (mean over the runs with a refusal)\n");
    printf("%-10s %7s %7s %7s %7s %7s %8s %6s\n", "policy", "arrived", "alloc", "req", "frag",
           "free", "freeGPUs", "runs");
    for (int i = 0; i < n; i++) {
        printf("%-10s", hrm_frag_policy_name(res[i].policy));
        if (res[i].refused_runs == 0) {
            printf(" %7s\n", "never");
            continue;
        }
        printf(" %7.1f", 100 * res[i].first_refusal.arrived);
        print_point_cols(&res[i].first_refusal, (double)gpus);
        printf(" %6d\n", res[i].refused_runs);
    }
    static const int levels[] = {50, 80, 90, 100, 110, 120, 130, 150, 200, 300};
    for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
        if (levels[l] > until)
            break;
        printf("\nafter arrivals of %d%% of the GPU capacity\n", levels[l]);
        printf("%-10s %7s %7s %7s %7s %8s %9s\n", "policy", "alloc", "req", "frag", "free",
               "freeGPUs", "frag/free");
        for (int i = 0; i < n; i++) {
            const struct hrm_frag_point *p = &res[i].points[levels[l]];
            printf("%-10s", hrm_frag_policy_name(res[i].policy));
            print_point_cols(p, (double)gpus);
            printf(" %9.3f\n", p->unallocated > 0 ? p->fragmented / p->unallocated : 0.0);
        }
    }
    printf("\n%-10s %10s %10s\n", "policy", "placed", "refused");
    for (int i = 0; i < n; i++)
        printf("%-10s %10.1f %10.1f\n", hrm_frag_policy_name(res[i].policy), res[i].placed,
               res[i].refused);
    if (!series)
        return;
    printf("\nseries,policy,arrived_pct,alloc_pct,req_pct,frag_pct,free_pct\n");
    for (int i = 0; i < n; i++)
        for (int32_t k = 0; k < res[i].npoints; k++) {
            const struct hrm_frag_point *p = &res[i].points[k];
            printf("series,%s,%d,%.3f,%.3f,%.3f,%.3f\n", hrm_frag_policy_name(res[i].policy), k,
                   100 * p->allocated, 100 * p->requested, 100 * p->fragmented,
                   100 * p->unallocated);
        }
}

int cmd_trace_frag(int argc, char **argv)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'},  {"pods", required_argument, NULL, 'P'},
        {"policy", required_argument, NULL, 'p'}, {"seed", required_argument, NULL, 's'},
        {"runs", required_argument, NULL, 'r'},   {"until", required_argument, NULL, 'u'},
        {"series", no_argument, NULL, 'S'},       {"strict", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *nodes = NULL, *pods = NULL, *plist = DEFAULT_FRAG_POLICIES;
    long long seed = 1, runs = 10, until = 130;
    bool series = false, strict = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:s:r:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            nodes = optarg;
            break;
        case 'P':
            pods = optarg;
            break;
        case 'p':
            plist = optarg;
            break;
        case 's':
            if (cli_parse_int("trace frag", "--seed", optarg, 0, 2147483647L, &seed) < 0)
                return CLI_USAGE;
            break;
        case 'r':
            if (cli_parse_int("trace frag", "--runs", optarg, 1, 10000, &runs) < 0)
                return CLI_USAGE;
            break;
        case 'u':
            if (cli_parse_int("trace frag", "--until", optarg, 1, HRM_FRAG_MAX_POINTS - 1, &until) <
                0)
                return CLI_USAGE;
            break;
        case 'S':
            series = true;
            break;
        case 'x':
            strict = true;
            break;
        case 'h':
            frag_usage(stdout);
            return CLI_OK;
        default:
            frag_usage(stderr);
            return CLI_USAGE;
        }
    }
    if (optind != argc || !nodes || !pods) {
        fprintf(stderr, "hrm trace frag: --nodes and --pods are required, and nothing else\n\n");
        frag_usage(stderr);
        return CLI_USAGE;
    }
    enum hrm_frag_policy pols[HRM_FRAG_NPOLICIES * 4];
    int npol = 0;
    for (const char *s = plist; *s;) {
        size_t len = strcspn(s, ",");
        char name[32];
        snprintf(name, sizeof(name), "%.*s", (int)(len < 31 ? len : 31), s);
        int p = hrm_frag_policy_parse(name);
        if (p < 0 || len >= 31 || npol == (int)(sizeof(pols) / sizeof(pols[0]))) {
            fprintf(stderr,
                    "hrm trace frag: --policy: '%.*s' is not one of bestfit, "
                    "exclusive, hrm, fgd\n",
                    (int)len, s);
            return CLI_USAGE;
        }
        pols[npol++] = (enum hrm_frag_policy)p;
        s += len + (s[len] == ',');
    }
    if (npol == 0) {
        fprintf(stderr, "hrm trace frag: --policy: no policy given\n");
        return CLI_USAGE;
    }
    int rc = CLI_USAGE;
    struct hrm_trace *t = hrm_trace_new();
    struct hrm_error err = {{0}};
    int nbad = cli_trace_load(t, "frag", nodes, pods, strict);
    if (nbad < 0)
        goto out;
    if (nbad > 0)
        fprintf(stderr, "hrm trace frag: %d bad rows skipped (listed above)\n", nbad);
    struct hrm_frag_result *res = hrm_calloc((size_t)npol, sizeof(*res));
    struct hrm_frag_config cfg = {
        .seed = (uint64_t)seed, .runs = (int32_t)runs, .until_pct = (int32_t)until};
    for (int i = 0; i < npol; i++) {
        if (hrm_frag_run(t, pols[i], &cfg, &res[i], &err) < 0) {
            fprintf(stderr, "hrm trace frag: %s\n", err.text);
            hrm_free(res);
            goto out;
        }
    }
    print_results(t, res, npol, seed, until, series);
    hrm_free(res);
    rc = CLI_OK;
out:
    hrm_trace_free(t);
    return rc;
}
