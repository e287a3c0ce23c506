/* hrm bench flood: how long the master takes to answer one client while others flood it with job listings and waits. */
#define _GNU_SOURCE 1 /* mkdtemp */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "hrm/alloc.h"
#include "hrm/metrics.h"
#include "hrm/wire.h"
#include "up.h"

/*
 * What is measured (docs/benchmarks.md, "Master under a request flood"):
 *
 * - answer time: a probe client sends `jobs` (what `hrm jobs` asks) and waits for the answer,
 *   --probes times in a row; the client's monotonic clock around each call.  First on a quiet
 *   master holding one job of --tasks tasks, then while --clients flooders each hold --waits
 *   pending waits on that job and keep 32 `jobs --all` requests in flight.  The ratio of the
 *   two medians is the flood's cost to everyone else.
 * - the flood's own rate: listings answered per second over the flooded probe window.
 * - then the job is cancelled: every flooder must get an answer to each of its waits (the run
 *   fails otherwise).
 */

#define FLOOD_WINDOW 32
#define DRAIN_S 120.0

struct flooder {
    const struct client_opts *co;
    long long job;
    int waits;
    atomic_int *stop;
    atomic_int warm;          /* its waits were read: its first listing came back */
    long long listings, waits_answered, errors;
    int rc;
    pthread_t th;
};

static void *flood_main(void *arg)
{
    struct flooder *f = arg;
    struct client *c = client_open(f->co);
    if (!c) {
        f->rc = -1;
        atomic_store(&f->warm, 1);
        return NULL;
    }
    for (int i = 0; i < f->waits; i++) {
        json_t *w = hrm_wire_new(HRM_WIRE_WAIT);
        json_object_set_new(w, "id", json_integer(f->job));
        client_send(c, w);
        json_decref(w);
    }
    int inflight = 0;
    double drain_end = 0;
    for (;;) {
        bool stop = atomic_load(f->stop);
        if (stop && drain_end == 0)
            drain_end = cli_mono_s() + DRAIN_S;
        if (stop && ((f->waits_answered >= f->waits && inflight == 0) || cli_mono_s() > drain_end))
            break;
        while (!stop && inflight < FLOOD_WINDOW) {
            json_t *q = hrm_wire_new(HRM_WIRE_JOBS);
            json_object_set_new(q, "all", json_true());
            if (client_send(c, q) >= 0)
                inflight++;
            json_decref(q);
        }
        json_t *r = client_recv(c, 0.2);
        if (!r)
            continue;
        const char *type = json_string_value(json_object_get(r, "type"));
        if (type && strcmp(type, "job_done") == 0) {
            f->waits_answered++;
        } else if (type && strcmp(type, "jobs_list") == 0) {
            f->listings++;
            inflight--;
            atomic_store(&f->warm, 1);
        } else {
            f->errors++;
        }
        json_decref(r);
    }
    client_close(c);
    return NULL;
}

/* --probes answer times of `jobs`, in ms, sorted into ms[]; 0 or -1. */
static int probe(struct client *c, int n, double *ms)
{
    for (int i = 0; i < n; i++) {
        json_t *q = hrm_wire_new(HRM_WIRE_JOBS);
        int code;
        double t0 = cli_mono_s();
        json_t *r = client_call(c, q, &code);
        ms[i] = (cli_mono_s() - t0) * 1e3;
        json_decref(q);
        if (!r)
            return -1;
        json_decref(r);
    }
    return 0;
}

struct flood_opts {
    struct up_cluster up;
    const char *attach; /* --state: a running cluster */
    long long tasks;
    int clients, waits, probes;
};

static int flood_args(int argc, char **argv, struct flood_opts *o)
{
    static const struct option opts[] = {
        {"tasks", required_argument, NULL, 't'},   {"clients", required_argument, NULL, 'c'},
        {"waits", required_argument, NULL, 'w'},   {"probes", required_argument, NULL, 'p'},
        {"nodes", required_argument, NULL, 'n'},   {"state", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    up_init(&o->up);
    o->up.nodes = 2;
    o->up.no_cgroup = true;
    o->up.log_level = "warning";
    o->tasks = 200000;
    o->clients = 4;
    o->waits = 10000;
    o->probes = 300;
    int c;
    long long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (cli_parse_int("bench flood", "--tasks", optarg, 1, 10000000, &o->tasks) < 0)
                return CLI_USAGE;
            break;
        case 'c':
        case 'w':
        case 'p':
        case 'n':
            if (cli_parse_int("bench flood",
                              c == 'c'   ? "--clients"
                              : c == 'w' ? "--waits"
                              : c == 'p' ? "--probes"
                                         : "--nodes",
                              optarg, c == 'w' ? 0 : 1, c == 'n' ? UP_MAX_NODES : 1000000, &v) < 0)
                return CLI_USAGE;
            *(c == 'c' ? &o->clients : c == 'w' ? &o->waits : c == 'p' ? &o->probes : &o->up.nodes) =
                (int)v;
            break;
        case 's':
            o->attach = optarg;
            break;
        case 'h':
            printf("usage: hrm bench flood [options]\n\n"
                   "Answer time of the master to one client (`jobs` requests) on a quiet master,\n"
                   "then while other clients flood it with `jobs --all` requests and pending\n"
                   "waits on a job of many tasks; prints BENCH lines and their ratio.\n\noptions:\n"
                   "  --tasks N       tasks of the job everyone lists and waits on (default 200000)\n"
                   "  --clients N     flooding clients (default 4)\n"
                   "  --waits N       waits each of them holds (default 10000, the master's cap)\n"
                   "  --probes N      answer times measured per phase (default 300)\n"
                   "  --nodes N       agents of the local cluster (default 2)\n"
                   "  --state DIR     use the cluster running there (e.g. another build's hrm up)\n"
                   "                  instead of starting one in a temporary folder\n");
            return -1;
        default:
            return CLI_USAGE;
        }
    }
    return optind == argc ? CLI_OK : CLI_USAGE;
}

static void report(const char *name, double *ms, int n)
{
    printf("BENCH master.%sanswer_p50_ms %.3f ms\n", name, hrm_percentile(ms, (size_t)n, 50));
    printf("BENCH master.%sanswer_p99_ms %.3f ms\n", name, hrm_percentile(ms, (size_t)n, 99));
}

/* The measurement on a running cluster whose master c talks to. */
static int flood_run(struct client *c, const struct client_opts *co, const struct flood_opts *o)
{
    /* One job that cannot all run: each task asks for a whole node. */
    json_t *req = hrm_wire_new(HRM_WIRE_SUBMIT);
    json_object_set_new(req, "job", json_pack("{s:s, s:[{s:[s,s], s:I, s:s, s:b}]}", "name",
                                              "flood-target", "tasks", "cmd", "sleep", "3600",
                                              "count", (json_int_t)o->tasks, "cpus", "1",
                                              "output", 0));
    int code;
    json_t *r = client_call(c, req, &code);
    json_decref(req);
    if (!r)
        return -1;
    long long job = json_integer_value(json_object_get(r, "id"));
    json_decref(r);
    printf("BENCH master.flood_job_tasks %lld tasks\n", o->tasks);
    double *quiet = hrm_calloc((size_t)o->probes, sizeof(double));
    double *busy = hrm_calloc((size_t)o->probes, sizeof(double));
    struct flooder *f = hrm_calloc((size_t)o->clients, sizeof(*f));
    atomic_int stop = 0;
    int rc = probe(c, o->probes, quiet);
    int started = 0;
    for (; rc == 0 && started < o->clients; started++) {
        f[started] = (struct flooder){.co = co, .job = job, .waits = o->waits, .stop = &stop};
        if (pthread_create(&f[started].th, NULL, flood_main, &f[started]) != 0)
            rc = -1;
    }
    for (int i = 0; i < started; i++)
        while (!atomic_load(&f[i].warm))
            usleep(10000);
    long long before = 0, after = 0;
    for (int i = 0; i < started; i++)
        before += f[i].listings;
    double t0 = cli_mono_s();
    if (rc == 0)
        rc = probe(c, o->probes, busy);
    double window = cli_mono_s() - t0;
    for (int i = 0; i < started; i++)
        after += f[i].listings;
    /* The job ends: every wait must be answered. */
    req = hrm_wire_new(HRM_WIRE_CANCEL);
    json_object_set_new(req, "id", json_integer(job));
    r = client_call(c, req, &code);
    json_decref(req);
    json_decref(r);
    atomic_store(&stop, 1);
    long long answered = 0, errors = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(f[i].th, NULL);
        answered += f[i].waits_answered;
        errors += f[i].errors;
        rc = f[i].rc < 0 ? -1 : rc;
    }
    if (rc == 0) {
        report("", quiet, o->probes);
        report("flood_", busy, o->probes);
        double q50 = hrm_percentile(quiet, (size_t)o->probes, 50);
        printf("BENCH master.flood_answer_p50_ratio %.2f x\n",
               q50 > 0 ? hrm_percentile(busy, (size_t)o->probes, 50) / q50 : 0);
        printf("BENCH master.flood_clients %d clients\n", o->clients);
        printf("BENCH master.flood_listings_per_s %.0f listings/s\n",
               window > 0 ? (double)(after - before) / window : 0);
        printf("BENCH master.flood_waits_answered %lld of %lld waits\n", answered,
               (long long)o->clients * o->waits);
        printf("BENCH master.flood_errors %lld replies\n", errors);
        if (answered != (long long)o->clients * o->waits || errors) {
            fprintf(stderr, "hrm bench flood: %lld of %lld waits answered, %lld errors\n", answered,
                    (long long)o->clients * o->waits, errors);
            rc = -1;
        }
    }
    hrm_free(quiet);
    hrm_free(busy);
    hrm_free(f);
    return rc;
}

int bench_flood(int argc, char **argv)
{
    struct flood_opts o;
    int rc = flood_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    char tmp[64] = "";
    if (!o.attach) {
        snprintf(tmp, sizeof(tmp), "/tmp/hrm-bench-flood-XXXXXX");
        if (!mkdtemp(tmp)) {
            fprintf(stderr, "hrm bench flood: mkdtemp: %s\n", strerror(errno));
            return CLI_FAIL;
        }
        o.up.state = tmp;
        if (up_start(&o.up, "hrm bench flood") < 0)
            return CLI_FAIL;
    }
    struct client_opts co;
    client_opts_init(&co);
    co.state = o.attach ? o.attach : tmp;
    co.timeout_s = 60;
    struct client *c = client_open(&co);
    rc = c && flood_run(c, &co, &o) == 0 ? CLI_OK : CLI_FAIL;
    client_close(c);
    if (!o.attach) {
        up_stop(&o.up);
        if (rc == CLI_OK)
            bench_remove_tree(tmp);
        else
            fprintf(stderr, "hrm bench flood: failed; daemon logs are in %s/logs\n", tmp);
    }
    return rc;
}
