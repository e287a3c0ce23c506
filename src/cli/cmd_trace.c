/* hrm trace: import production traces as specs (import) and run the GPU fragmentation experiment
 * (frag). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hrm/alloc.h"
#include "hrm/frag.h"
#include "hrm/trace.h"
#include "hrm/units.h"

#define TRACE_FORMAT "alibaba-gpu-v2023"
#define TRACE_SOURCE "https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2023/csv"

static void trace_usage(FILE *out)
{
    fprintf(out,
            "usage: hrm trace <command> [options]\n\n"
            "Production traces (docs/trace-import.md).\n\n"
            "commands:\n"
            "  import " TRACE_FORMAT " --nodes FILE --pods FILE   write an hrm spec\n"
            "  frag --nodes FILE --pods FILE [--policy LIST]       GPU fragmentation experiment\n\n"
            "'hrm trace <command> --help' describes a command's options.\n");
}

static void import_usage(FILE *out)
{
    fprintf(
        out,
        "usage: hrm trace import " TRACE_FORMAT " --nodes FILE --pods FILE [options]\n\n"
        "Writes the Alibaba GPU-sharing trace (openb_node_list_*.csv, openb_pod_list_*.csv)\n"
        "as a spec that 'hrm sim' runs: one node per node row, one single-task job per pod\n"
        "(LS and Guaranteed pods are stream jobs, BE and Burstable pods batch jobs; a pod's\n"
        "fractional GPU is a share of the GPU's memory).  Bad rows are reported on stderr as\n"
        "FILE:LINE: reason and skipped, with a count at the end.\n\n"
        "The trace is not shipped with hrm (research or study use only): get its CSV files\n"
        "from " TRACE_SOURCE "\n"
        "into data/alibaba-gpu-v2023/.  data/alibaba-gpu-v2023-standin/ holds a synthetic\n"
        "stand-in with the same files and columns.\n\n"
        "options:\n"
        "      --nodes FILE         node list (sn, cpu_milli, memory_mib, gpu, model)\n"
        "      --pods FILE          pod list with times\n"
        "  -o, --out FILE           write the spec to FILE (default: stdout)\n"
        "      --strict             refuse the whole import at the first bad row\n"
        "      --gpu-mem SIZE       nominal memory of every GPU (default 16000M)\n"
        "      --pending D          run time of pods never scheduled (default: leave them out)\n"
        "      --time-scale F       arrivals at creation_time / F, run times unchanged: F\n"
        "                           times the offered load (default 1: as recorded)\n"
        "      --max-run D          cap run times at D (default: none), e.g. 24h: pods that\n"
        "                           live for months (services, censored at the trace end)\n"
        "      --policies LIST      write sim.policies into the spec\n"
        "      --sample-interval D  write sim.sample_interval (default 10m)\n"
        "  -q, --quiet              no summary on stderr (bad rows are still reported)\n"
        "  -h, --help               this help\n\n"
        "exit status: 0 written (bad rows may have been skipped), 2 bad usage or input\n");
}

void cli_trace_report_row(void *arg, const char *msg)
{
    (void)arg;
    fprintf(stderr, "%s\n", msg);
}

int cli_trace_load(struct hrm_trace *t, const char *cmd, const char *nodes, const char *pods,
                   bool strict)
{
    struct hrm_trace_opts o = {.strict = strict, .report = cli_trace_report_row};
    struct hrm_error err = {{0}};
    int bad_nodes = hrm_trace_load_nodes(t, nodes, &o, &err);
    int bad_pods = bad_nodes < 0 ? 0 : hrm_trace_load_pods(t, pods, &o, &err);
    if (bad_nodes < 0 || bad_pods < 0) {
        int rc = bad_nodes < 0 ? bad_nodes : bad_pods;
        fprintf(stderr, "hrm trace %s: %s%s\n", cmd, err.text,
                strict ? " (--strict: refused)" : "");
        if (rc == -HRM_EIO) /* hrm does not ship the trace: say where it comes from */
            fprintf(stderr, "hrm trace %s: the Alibaba GPU-sharing trace v2023 is not part of hrm "
                            "(research or study use only): copy the CSV files of\n"
                            "  " TRACE_SOURCE "\n"
                            "into data/alibaba-gpu-v2023/ (docs/trace-import.md), or try the "
                            "synthetic stand-in in data/alibaba-gpu-v2023-standin/\n",
                    cmd);
        return rc;
    }
    return bad_nodes + bad_pods;
}

static int cmd_trace_import(int argc, char **argv)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'},
        {"pods", required_argument, NULL, 'p'},
        {"out", required_argument, NULL, 'o'},
        {"strict", no_argument, NULL, 'S'},
        {"gpu-mem", required_argument, NULL, 'g'},
        {"pending", required_argument, NULL, 'P'},
        {"policies", required_argument, NULL, 'l'},
        {"time-scale", required_argument, NULL, 't'},
        {"max-run", required_argument, NULL, 'm'},
        {"sample-interval", required_argument, NULL, 'i'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *nodes = NULL, *pods = NULL, *out_path = NULL;
    struct hrm_trace_spec_opts so = {.gpu_mem = 16000ll << 20, .sample_interval_us = 600000000};
    bool strict = false, quiet = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            nodes = optarg;
            break;
        case 'p':
            pods = optarg;
            break;
        case 'o':
            out_path = optarg;
            break;
        case 'S':
            strict = true;
            break;
        case 'g':
            /* A unit is required, as in specs: "16" must not mean 16 bytes. */
            if (hrm_parse_size(optarg, &so.gpu_mem) || so.gpu_mem <= 0 ||
                (*optarg && optarg[strlen(optarg) - 1] >= '0' &&
                 optarg[strlen(optarg) - 1] <= '9')) {
                fprintf(stderr,
                        "hrm trace import: --gpu-mem: '%s' is not a positive size "
                        "like 16G\n",
                        optarg);
                return CLI_USAGE;
            }
            break;
        case 'P':
            if (hrm_parse_duration(optarg, &so.pending_duration_us) ||
                so.pending_duration_us <= 0) {
                fprintf(stderr,
                        "hrm trace import: --pending: '%s' is not a positive "
                        "duration like 10m\n",
                        optarg);
                return CLI_USAGE;
            }
            break;
        case 'l':
            so.policies = optarg;
            break;
        case 't': {
            char *end;
            so.time_scale = strtod(optarg, &end);
            if (!*optarg || *end || !(so.time_scale >= 0.001 && so.time_scale <= 1e9)) {
                fprintf(stderr,
                        "hrm trace import: --time-scale: '%s' is not a number "
                        "0.001..1e9\n",
                        optarg);
                return CLI_USAGE;
            }
            break;
        }
        case 'i':
            if (hrm_parse_duration(optarg, &so.sample_interval_us) || so.sample_interval_us <= 0) {
                fprintf(stderr,
                        "hrm trace import: --sample-interval: '%s' is not a positive "
                        "duration like 10m\n",
                        optarg);
                return CLI_USAGE;
            }
            break;
        case 'm': {
            int64_t us;
            if (hrm_parse_duration(optarg, &us) || us < 1000000) {
                fprintf(stderr,
                        "hrm trace import: --max-run: '%s' is not a duration of at "
                        "least 1s\n",
                        optarg);
                return CLI_USAGE;
            }
            so.max_run_s = us / 1000000;
            break;
        }
        case 'q':
            quiet = true;
            break;
        case 'h':
            import_usage(stdout);
            return CLI_OK;
        default:
            import_usage(stderr);
            return CLI_USAGE;
        }
    }
    if (optind != argc - 1 || strcmp(argv[optind], TRACE_FORMAT) != 0) {
        fprintf(stderr, "hrm trace import: expected the trace format " TRACE_FORMAT
                        " (the only one known)\n\n");
        import_usage(stderr);
        return CLI_USAGE;
    }
    if (!nodes || !pods) {
        fprintf(stderr, "hrm trace import: --nodes and --pods are required\n\n");
        import_usage(stderr);
        return CLI_USAGE;
    }
    int rc = CLI_USAGE;
    struct hrm_trace *t = hrm_trace_new();
    int nbad = cli_trace_load(t, "import", nodes, pods, strict);
    if (nbad < 0)
        goto out;
    so.row = (struct hrm_trace_opts){.strict = strict, .report = cli_trace_report_row};
    /* Into memory first: a refused import leaves no half-written --out file. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    struct hrm_trace_spec_stats st;
    struct hrm_error err = {{0}};
    int r = mem ? hrm_trace_write_spec(mem, t, &so, &st, &err)
                : hrm_errorf(&err, -HRM_EIO, "out of memory");
    if (mem)
        fclose(mem);
    if (r < 0) {
        fprintf(stderr, "hrm trace import: %s%s\n", err.text,
                strict && r == -HRM_ESPEC ? " (--strict: refused)" : "");
        free(text);
        goto out;
    }
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
        fprintf(stderr, "hrm trace import: --out: %s: cannot open\n", out_path);
        free(text);
        goto out;
    }
    bool ok = fwrite(text, 1, len, out) == len && fflush(out) == 0;
    if (out_path)
        ok = fclose(out) == 0 && ok;
    free(text);
    if (!ok) {
        fprintf(stderr, "hrm trace import: write error\n");
        rc = CLI_FAIL;
        goto out;
    }
    nbad += st.nofit_skipped;
    if (!quiet) {
        fprintf(stderr, "hrm trace import: %d nodes, %d jobs (%d stream, %d batch)", t->nnodes,
                st.jobs, st.stream, st.batch);
        if (st.pending_skipped)
            fprintf(stderr, "; %d pods never scheduled left out (--pending D keeps them)",
                    st.pending_skipped);
        if (st.censored)
            fprintf(stderr, "; %d still running at the trace end (cut there)", st.censored);
        if (st.models_dropped)
            fprintf(stderr,
                    "; %d pods name GPU models (gpu_spec), which a spec cannot "
                    "express: constraint dropped",
                    st.models_dropped);
        if (st.capped)
            fprintf(stderr, "; %d run times capped by --max-run", st.capped);
        if (st.zero_clamped)
            fprintf(stderr, "; %d run times of 0 s written as 1 s", st.zero_clamped);
        fprintf(stderr, "\n");
    }
    if (nbad > 0)
        fprintf(stderr, "hrm trace import: %d bad row%s skipped (listed above)\n", nbad,
                nbad == 1 ? "" : "s");
    rc = CLI_OK;
out:
    hrm_trace_free(t);
    return rc;
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 2) {
        trace_usage(stderr);
        return CLI_USAGE;
    }
    if (cli_is_help(argv[1])) {
        trace_usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "import") == 0)
        return cmd_trace_import(argc - 1, argv + 1);
    if (strcmp(argv[1], "frag") == 0)
        return cmd_trace_frag(argc - 1, argv + 1);
    fprintf(stderr, "hrm trace: unknown command '%s'\n\n", argv[1]);
    trace_usage(stderr);
    return CLI_USAGE;
}
