/* hrm bench central: the central role's decision cost, measured on a spec's workload. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "hrm/alloc.h"
#include "hrm/metrics.h"
#include "hrm/sim.h"
#include "hrm/spec.h"

#define DEFAULT_SPEC "examples/p4-exp2-100ms.json"
#define DEFAULT_POLICIES "fifo,drf,hrm"

/* CPU time of this (single-threaded) process: on a shared machine the wall
 * clock also counts time spent waiting for a core, which is not the role's
 * cost. */
static int64_t cpu_ns(void *arg)
{
    (void)arg;
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Cost of one clock read: a timed interval holds about one (the end of the
 * first read to the end of the second), so it is subtracted once per call. */
static double clock_overhead_ns(void)
{
    int64_t t0 = cpu_ns(NULL), x = 0;
    for (int i = 0; i < 100000; i++)
        x += cpu_ns(NULL);
    (void)x;
    return (double)(cpu_ns(NULL) - t0) / 100000.0;
}

/* One timed run of policy: decision cost (role time per started task) in us,
 * or a negative value after printing the error. */
static double run_policy(const struct hrm_spec *spec, const char *policy, double over_ns,
                         struct hrm_sim_timing *tm)
{
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, spec->cluster, spec->wl);
    *tm = (struct hrm_sim_timing){.clock_ns = cpu_ns};
    struct hrm_sim_config cfg = {.seed = 1, .execution = &spec->execution, .timing = tm};
    struct hrm_error err = {{0}};
    int rc = hrm_sim_run(spec->cluster, spec->wl, policy, NULL, &cfg, &rec, &err);
    hrm_run_record_fini(&rec);
    if (rc < 0) {
        fprintf(stderr, "hrm bench central: %s: %s\n", policy, err.text);
        return -1;
    }
    if (tm->decisions <= 0) {
        fprintf(stderr, "hrm bench central: %s: started no task\n", policy);
        return -1;
    }
    double ns = tm->central_ns - over_ns * (double)tm->calls;
    return (ns > 0 ? ns : 0) / 1e3 / (double)tm->decisions;
}

int bench_central(int argc, char **argv)
{
    static const struct option opts[] = {
        {"spec", required_argument, NULL, 's'},
        {"policy", required_argument, NULL, 'p'},
        {"repeat", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *path = DEFAULT_SPEC, *policies = DEFAULT_POLICIES;
    long long repeat = 3;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (ch) {
        case 's':
            path = optarg;
            break;
        case 'p':
            policies = optarg;
            break;
        case 'r':
            bad = cli_parse_int("bench central", "--repeat", optarg, 1, 100, &repeat);
            break;
        case 'h':
            printf("usage: hrm bench central [--spec FILE] [--policy P,...] [--repeat N]\n\n"
                   "The central scheduler role's cost per decision: CPU time inside the role\n"
                   "(src/sched/central.c, the code the master runs) per task it starts, while\n"
                   "the simulator runs FILE's workload (default %s, P4's\n"
                   "Fig. 7 burst of 140 x 160 tasks on 350 x 8 slots) under each central policy\n"
                   "of --policy (default %s).  Each policy runs --repeat times\n"
                   "(default 3) and the fastest run counts.  Prints\n"
                   "'BENCH central.decision_us.POLICY <us> us/task' and, for the cheapest\n"
                   "policy, 'BENCH central.decision_us.min'.\n",
                   DEFAULT_SPEC, DEFAULT_POLICIES);
            return CLI_OK;
        default:
            return CLI_USAGE;
        }
        if (bad)
            return CLI_USAGE;
    }
    if (optind != argc) {
        fprintf(stderr, "hrm bench central: unexpected argument '%s'\n", argv[optind]);
        return CLI_USAGE;
    }
    char *list = hrm_strdup(policies);
    for (char *save = NULL, *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (!hrm_policy_find(p)) {
            fprintf(stderr, "hrm bench central: --policy: '%s' is not a central policy "
                            "(hrm sim --list-policies lists them)\n", p);
            hrm_free(list);
            return CLI_USAGE;
        }
    struct hrm_error err = {{0}};
    struct hrm_spec *spec = hrm_spec_load(path, 1, &err);
    if (!spec) {
        fprintf(stderr, "hrm bench central: --spec: %s\n", err.text);
        hrm_free(list);
        return CLI_USAGE;
    }
    double over = clock_overhead_ns(), best_all = -1;
    int rc = CLI_OK;
    strcpy(list, policies);
    for (char *save = NULL, *p = strtok_r(list, ",", &save); p && rc == CLI_OK;
         p = strtok_r(NULL, ",", &save)) {
        double best = -1;
        struct hrm_sim_timing tm;
        for (long long r = 0; r < repeat; r++) {
            double us = run_policy(spec, p, over, &tm);
            if (us < 0) {
                rc = CLI_FAIL;
                break;
            }
            if (best < 0 || us < best)
                best = us;
        }
        if (rc != CLI_OK)
            break;
        printf("BENCH central.decision_us.%s %.3f us/task\n", p, best);
        printf("BENCH central.passes.%s %" PRId64 " passes\n", p, tm.passes);
        printf("BENCH central.decisions.%s %" PRId64 " tasks\n", p, tm.decisions);
        printf("BENCH central.calls.%s %" PRId64 " calls\n", p, tm.calls);
        if (best_all < 0 || best < best_all)
            best_all = best;
    }
    if (rc == CLI_OK) {
        printf("BENCH central.decision_us.min %.3f us/task\n", best_all);
        printf("BENCH central.clock_read_ns %.1f ns\n", over);
    }
    hrm_spec_free(spec);
    hrm_free(list);
    return rc;
}
