/* hrm sim: run a spec under one or more policies and report them side by side. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hrm/alloc.h"
#include "hrm/dsim.h"
#include "hrm/policy.h"
#include "hrm/report.h"
#include "hrm/sim.h"
#include "hrm/spec.h"
#include "hrm/units.h"
#include "ssim_report.h"

#define DEFAULT_POLICIES "fifo,capacity,fair,drf"
#define MAX_POLICIES 32

static void sim_usage(FILE *out)
{
    fprintf(out,
            "usage: hrm sim SPEC [options]\n\n"
            "Simulates the cluster and workload of SPEC (see docs/spec-format.md) under each\n"
            "policy and prints the runs side by side.  Same SPEC and seed give the same output.\n\n"
            "options:\n"
            "  -p, --policy LIST        comma-separated policies (default: the spec's sim.policies,\n"
            "                           else " DEFAULT_POLICIES ")\n"
            "  -s, --seed N             random seed for generated jobs and failures (default 1)\n"
            "      --param P.KEY=VALUE  parameter KEY of policy P (repeatable; see below)\n"
            "      --history FILE       fgm's similar-task history: loaded before the run (a\n"
            "                           missing FILE is empty), saved after it; the same as\n"
            "                           --param fgm.history=FILE\n"
            "      --json               print one JSON object per policy instead of the table\n"
            "      --csv DIR            write per-job and utilisation CSV files into DIR\n"
            "      --plot DIR           write response-cdf.png and utilisation.png into DIR (gnuplot)\n"
            "      --sample-interval D  utilisation sampling period, e.g. 1s (default: spec, else 1s)\n"
            "      --until D            stop the simulation at virtual time D\n"
            "      --max-mem SIZE       refuse a spec whose tasks would need more memory than\n"
            "                           SIZE (default: physical memory, ulimit -v and -d)\n"
            "      --list-policies      list the policies and exit\n"
            "      --sweep-load A:B:S   offered load A%%, A+S%%, .. B%% of the cores: scale the\n"
            "                           arrival times and print a response-vs-load table\n"
            "                           (--plot DIR: response-vs-load.png); docs/dhrm.md\n"
            "  -q, --quiet              no progress on the terminal\n"
            "  -h, --help               this help\n\n"
            "FGM parameters (--param fgm.KEY=VALUE, [default]; docs/policies.md):\n"
            "  estimator   min_obs [1] similar runs before a task is predicted; weight [0.3]\n"
            "              of a new run in the smoothed update; compressed_factor [0.2] on\n"
            "              that weight for a run observed compressed; max_stages [4] (1..8)\n"
            "  matching    p [0.05] contention; limitation [0] and max_compression [0.1]\n"
            "              (<= 0.5) of formula (7); mem_headroom [0.1] on predicted memory\n"
            "  adjustment  idle [0.01] and conf_idle [0.1] shares of capacity; thresholds\n"
            "              th_fg [0.001] <= th_cg [0.005] <= th_sa [0.02] of Alg. 3;\n"
            "              window [30] seconds; qos_stretch [1.25] (>= 1); history [none]\n"
            "  record      mode_log [none] file: what Alg. 3 did over the run\n"
            "P1 ablation parameters (gs, gsp, gsd, fs, fsp, fsu; docs/policies.md \"P1\"):\n"
            "  clamp [1] costs keep local <= in-rack <= cross-rack (0: the paper's sum);\n"
            "  nj_unfinished [0] N_j counts blocked GPU tasks too (not fsu); paper [0]: 1 is\n"
            "  delay=0 clamp=0 nj_unfinished=1 (explicit keys still win)\n"
            "NPARSA parameters (--param nparsa.KEY=VALUE, also nparsa-notype.KEY):\n"
            "  threshold [1.1] J = requested GiB / cores above which a job is\n"
            "  memory-intensive, in (0, 1024]; typing [1 for nparsa, 0 for nparsa-notype];\n"
            "  alpha [0.5] weight of the static score, or balance: a 2x2 AHP matrix;\n"
            "  cpu_static, cpu_dynamic, mem_static, mem_dynamic: 4x4 AHP judgment\n"
            "  matrices such as \"1,1/2,1/6,2; 2,1,1/4,2; 6,4,1,8; 1/2,1/2,1/8,1\"\n"
            "  [the paper's weights]; a matrix with consistency ratio >= 0.1 is refused\n"
            "SDASA and Difference (P3's baselines; docs/reproduction-p3.md): sdasa.weights\n"
            "  [mean] one weight set for every job: mean (of NPARSA's two), cpu, memory or\n"
            "  equal; difference.threshold [1.1] J above which a job is memory-intensive\n"
            "HRM parameters (--param hrm.KEY=VALUE, also gpu-exclusive, hrm-static,\n"
            "hrm-unaware; docs/policies.md \"P0\"): lend [1] CPU tasks borrow idle GPU-unit\n"
            "  cores; flex [1] GPU units grow their cores; stream_aware [1]; fair [1]\n"
            "  A_j = min(floor(Q/K), N_j) when GPUs are scarce; stack [0: GPU memory\n"
            "  decides] tasks per GPU; partition [0] share of nodes for stream jobs only\n"
            "Shared-state parameters (--param hrm-shared.KEY=VALUE, also hrm-central;\n"
            "docs/architecture.md): instances [10] (hrm-shared); t_job_ms [100] and\n"
            "  t_task_ms [5] decision time per job and task; strict [0] per-node version\n"
            "  validation; lock_stream [1]; fair_share [1]; register [0] (hrm-shared);\n"
            "  first_fit [0] Omega's first fit instead of the hrm policy's units\n\n"
            "exit status: 0 all runs finished, 1 a run failed, 2 bad usage or spec\n");
}

struct progress_ctx {
    const char *policy;
    struct timespec last;
};

static double since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Progress goes to the terminal only, at most five times a second. */
static void show_progress(void *arg, const struct hrm_sim_progress *p)
{
    struct progress_ctx *pc = arg;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (since(&pc->last, &now) < 0.2)
        return;
    pc->last = now;
    fprintf(stderr, "\r[%s] t=%.1fs events=%" PRId64 " jobs %d/%d   ", pc->policy,
            (double)p->now_us / 1e6, p->events, p->jobs_done, p->njobs);
    fflush(stderr);
}

static int list_policies(void)
{
    for (size_t i = 0; i < hrm_policy_count(); i++) {
        const struct hrm_policy_ops *ops = hrm_policy_at(i);
        printf("%-14s %s\n", ops->name, ops->summary ? ops->summary : "");
    }
    for (size_t i = 0; i < hrm_dsim_policy_count(); i++)
        printf("%-14s %s\n", hrm_dsim_policy_name(i), hrm_dsim_policy_summary(i));
    for (size_t i = 0; i < hrm_ssim_policy_count(); i++)
        printf("%-14s %s\n", hrm_ssim_policy_name(i), hrm_ssim_policy_summary(i));
    return CLI_OK;
}

/* Parameters for one policy: "P.key=value" strings whose P matches, as "key=value". */
static size_t params_for(const char *policy, char **all, size_t nall, const char **out)
{
    size_t n = 0, plen = strlen(policy);
    for (size_t i = 0; i < nall; i++)
        if (strncmp(all[i], policy, plen) == 0 && all[i][plen] == '.')
            out[n++] = all[i] + plen + 1;
    return n;
}

static int split_policies(char *list, char **names, int max)
{
    int n = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (!*tok)
            continue;
        if (n == max)
            return -1;
        names[n++] = tok;
    }
    return n;
}

int cmd_sim(int argc, char **argv)
{
    static const struct option opts[] = {
        {"policy", required_argument, NULL, 'p'},
        {"seed", required_argument, NULL, 's'},
        {"param", required_argument, NULL, 'P'},
        {"history", required_argument, NULL, 'H'},
        {"json", no_argument, NULL, 'j'},
        {"csv", required_argument, NULL, 'c'},
        {"plot", required_argument, NULL, 'g'},
        {"sample-interval", required_argument, NULL, 'i'},
        {"until", required_argument, NULL, 'u'},
        {"list-policies", no_argument, NULL, 'l'},
        {"max-mem", required_argument, NULL, 'M'},
        {"sweep-load", required_argument, NULL, 'L'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *policy_arg = NULL, *csv_dir = NULL, *plot_dir = NULL, *sweep = NULL;
    uint64_t seed = 1;
    int json = 0, quiet = 0;
    int64_t sample_us = -1, until_us = 0, max_mem = 0;
    char **cli_params = NULL;
    char *history = NULL; /* "fgm.history=FILE" of --history */
    size_t ncli_params = 0, cap_params = 0;
    int rc = CLI_USAGE, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:s:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            policy_arg = optarg;
            break;
        case 's': {
            char *end;
            seed = strtoull(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || *optarg == '-') {
                fprintf(stderr, "hrm sim: --seed: '%s' is not a non-negative integer\n", optarg);
                goto out;
            }
            break;
        }
        case 'P':
            if (!strchr(optarg, '.') || !strchr(optarg, '=')) {
                fprintf(stderr, "hrm sim: --param: '%s' is not POLICY.KEY=VALUE\n", optarg);
                goto out;
            }
            HRM_GROW(cli_params, cap_params, ncli_params + 1);
            cli_params[ncli_params++] = optarg;
            break;
        case 'H': {
            if (history) {
                fprintf(stderr, "hrm sim: --history: given twice\n");
                goto out;
            }
            size_t len = strlen(optarg) + sizeof("fgm.history=");
            history = hrm_alloc(len);
            snprintf(history, len, "fgm.history=%s", optarg);
            HRM_GROW(cli_params, cap_params, ncli_params + 1);
            cli_params[ncli_params++] = history;
            break;
        }
        case 'j':
            json = 1;
            break;
        case 'c':
            csv_dir = optarg;
            break;
        case 'g':
            plot_dir = optarg;
            break;
        case 'i':
            if (hrm_parse_duration(optarg, &sample_us) || sample_us <= 0) {
                fprintf(stderr, "hrm sim: --sample-interval: '%s' is not a positive duration "
                                "like 1s\n", optarg);
                goto out;
            }
            break;
        case 'u':
            if (hrm_parse_duration(optarg, &until_us) || until_us <= 0) {
                fprintf(stderr, "hrm sim: --until: '%s' is not a positive duration like 10m\n",
                        optarg);
                goto out;
            }
            break;
        case 'M':
            if (hrm_parse_size(optarg, &max_mem) || max_mem <= 0) {
                fprintf(stderr, "hrm sim: --max-mem: '%s' is not a positive size like 4G\n",
                        optarg);
                goto out;
            }
            break;
        case 'l':
            rc = list_policies();
            goto out;
        case 'L':
            sweep = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            sim_usage(stdout);
            rc = CLI_OK;
            goto out;
        default:
            sim_usage(stderr);
            goto out;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "hrm sim: expected exactly one SPEC file\n\n");
        sim_usage(stderr);
        goto out;
    }
    rc = CLI_USAGE;
    struct hrm_error err = {{0}};
    struct hrm_spec *spec = hrm_spec_load_bounded(argv[optind], seed, max_mem, &err);
    if (!spec) {
        fprintf(stderr, "hrm sim: %s\n", err.text);
        goto out;
    }

    /* Policies: flag, else spec, else the baselines. */
    char *list;
    if (policy_arg) {
        list = hrm_strdup(policy_arg);
    } else if (spec->sim.npolicies > 0) {
        size_t len = 1;
        for (int32_t i = 0; i < spec->sim.npolicies; i++)
            len += strlen(spec->sim.policies[i]) + 1;
        list = hrm_calloc(1, len);
        for (int32_t i = 0; i < spec->sim.npolicies; i++) {
            if (i)
                strcat(list, ",");
            strcat(list, spec->sim.policies[i]);
        }
    } else {
        list = hrm_strdup(DEFAULT_POLICIES);
    }
    char *names[MAX_POLICIES];
    int npol = split_policies(list, names, MAX_POLICIES);
    if (npol <= 0) {
        fprintf(stderr, "hrm sim: --policy: give 1..%d policy names\n", MAX_POLICIES);
        goto free_spec;
    }
    for (int i = 0; i < npol; i++) {
        if (!hrm_policy_find(names[i]) && !hrm_dsim_policy_known(names[i]) &&
            !hrm_ssim_policy_known(names[i])) {
            fprintf(stderr, "hrm sim: unknown policy '%s' (hrm sim --list-policies lists them)\n",
                    names[i]);
            goto free_spec;
        }
    }

    if (history) {
        int with_fgm = 0;
        for (int i = 0; i < npol; i++)
            with_fgm |= strcmp(names[i], "fgm") == 0;
        if (!with_fgm) {
            fprintf(stderr, "hrm sim: --history: only policy fgm keeps a history, and it is "
                            "not among the policies run (add --policy fgm)\n");
            goto free_spec;
        }
    }

    /* Output folders are made and checked now, not after minutes of simulation. */
    const char *bad = csv_dir && hrm_report_prepare(csv_dir, false, &err) < 0     ? "csv"
                      : plot_dir && hrm_report_prepare(plot_dir, true, &err) < 0 ? "plot"
                                                                                  : NULL;
    if (bad) {
        fprintf(stderr, "hrm sim: --%s: %s\n", bad, err.text);
        rc = CLI_FAIL;
        goto free_spec;
    }

    /* All parameters: the spec's, then the command line's (later wins). */
    size_t nall = (size_t)spec->sim.nparams + ncli_params;
    char **all = hrm_calloc(nall + 1, sizeof(*all));
    for (int32_t i = 0; i < spec->sim.nparams; i++)
        all[i] = spec->sim.policy_params[i];
    for (size_t i = 0; i < ncli_params; i++)
        all[spec->sim.nparams + i] = cli_params[i];
    const char **mine = hrm_calloc(nall + 1, sizeof(*mine));

    if (sweep) {
        rc = cli_sweep_load(spec, sweep, (const char *const *)names, npol, (const char **)all,
                            nall, seed, plot_dir, quiet);
        hrm_free(mine);
        hrm_free(all);
        goto free_spec;
    }
    struct hrm_run_record *recs = hrm_calloc((size_t)npol, sizeof(*recs));
    struct hrm_summary *sums = hrm_calloc((size_t)npol, sizeof(*sums));
    struct hrm_report_entry *entries = hrm_calloc((size_t)npol, sizeof(*entries));
    struct hrm_ssim_stats *shared = hrm_calloc((size_t)npol, sizeof(*shared));
    int ran = 0;
    rc = CLI_OK;
    for (int i = 0; i < npol; i++) {
        struct progress_ctx pc = {.policy = names[i]};
        clock_gettime(CLOCK_MONOTONIC, &pc.last);
        struct hrm_sim_config cfg = {
            .seed = seed,
            .sample_interval_us = sample_us > 0 ? sample_us
                                  : spec->sim.sample_interval_us > 0 ? spec->sim.sample_interval_us
                                                                     : 1000000,
            .faults = &spec->faults,
            .execution = &spec->execution,
            .until_us = until_us,
            .progress = (!quiet && isatty(STDERR_FILENO)) ? show_progress : NULL,
            .progress_arg = &pc,
        };
        struct hrm_params params = {.items = mine,
                                    .count = params_for(names[i], all, nall, mine)};
        hrm_run_record_init(&recs[i], spec->cluster, spec->wl);
        ran++;
        int r = cli_is_shared(names[i])
                    ? hrm_ssim_run_ex(spec->cluster, spec->wl, names[i], &params, &cfg, &recs[i],
                                      &shared[i], &err)
                    : hrm_sim_run(spec->cluster, spec->wl, names[i], &params, &cfg, &recs[i], &err);
        if (cfg.progress)
            fprintf(stderr, "\r%*s\r", 60, "");
        if (r < 0) {
            /* Name the policy once: most errors of a policy's own checks already do. */
            char quoted[HRM_NAME_MAX + 3];
            snprintf(quoted, sizeof(quoted), "'%s'", names[i]);
            size_t nl = strlen(names[i]);
            bool named = strstr(err.text, quoted) ||
                         (strncmp(err.text, names[i], nl) == 0 && err.text[nl] == ':');
            if (named)
                fprintf(stderr, "hrm sim: %s\n", err.text);
            else
                fprintf(stderr, "hrm sim: %s: %s\n", names[i], err.text);
            rc = r == -HRM_EUNKNOWN_POLICY || r == -HRM_ESPEC ? CLI_USAGE : CLI_FAIL;
            break;
        }
        hrm_summarize(&recs[i], names[i], &sums[i]);
        entries[i].summary = &sums[i];
        entries[i].record = &recs[i];
    }
    if (rc == CLI_OK) {
        if (json) {
            if (hrm_report_json(stdout, entries, (size_t)npol, &err) < 0) {
                fprintf(stderr, "hrm sim: %s\n", err.text);
                rc = CLI_FAIL;
            }
        } else {
            hrm_report_table(stdout, entries, (size_t)npol);
            cli_report_shared(stdout, names, shared, npol);
        }
        if (rc == CLI_OK && csv_dir && hrm_report_csv(csv_dir, entries, (size_t)npol, &err) < 0) {
            fprintf(stderr, "hrm sim: --csv: %s\n", err.text);
            rc = CLI_FAIL;
        }
        if (rc == CLI_OK && plot_dir &&
            hrm_report_plot_titled(plot_dir, spec->path, entries, (size_t)npol, &err) < 0) {
            fprintf(stderr, "hrm sim: --plot: %s\n", err.text);
            rc = CLI_FAIL;
        }
    }
    for (int i = 0; i < ran; i++)
        hrm_run_record_fini(&recs[i]);
    hrm_free(recs);
    hrm_free(sums);
    hrm_free(entries);
    hrm_free(shared);
    hrm_free(mine);
    hrm_free(all);
free_spec:
    hrm_free(list);
    hrm_spec_free(spec);
out:
    hrm_free(cli_params);
    hrm_free(history);
    return rc;
}
