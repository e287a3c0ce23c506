/* hrm events: the cluster's event log (docs/runtime.md, "Event log"), as a table or JSON lines,
 * paged from the master, and with --follow polled until a signal or the master goes away. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "client.h"
#include "hrm/wire.h"

#define EVENTS_PAGE 1000        /* asked per request: the master serves at most 10,000 */
#define EVENTS_LIMIT_MAX 1000000
/* --follow's polling when nothing new came: from 100 ms up to 1 s. */
#define FOLLOW_MIN_MS 100
#define FOLLOW_MAX_MS 1000

struct events_flags {
    long long since, limit; /* limit 0: no limit */
    bool follow;
};

static const char usage_line[] =
    "usage: hrm events [--since N] [--limit K] [--follow] [--json] [options]\n";

static void print_event(const json_t *e, bool as_json)
{
    if (as_json) {
        char *s = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);
        printf("%s\n", s);
        free(s);
        return;
    }
    long long us = json_integer_value(json_object_get(e, "time_us"));
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    char when[32] = "?", job[24] = "-", task[24] = "-";
    if (gmtime_r(&t, &tm)) {
        size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(when + n, sizeof(when) - n, ".%03lldZ", (us / 1000) % 1000);
    }
    long long j = json_integer_value(json_object_get(e, "job"));
    long long k = json_integer_value(json_object_get(e, "task"));
    if (j > 0)
        snprintf(job, sizeof(job), "%lld", j);
    if (k >= 0)
        snprintf(task, sizeof(task), "%lld", k);
    const char *node = json_string_value(json_object_get(e, "node"));
    const json_t *d = json_object_get(e, "detail");
    char *detail = json_is_string(d) ? strdup(json_string_value(d))
                                     : json_dumps(d, JSON_COMPACT | JSON_ENCODE_ANY);
    printf("%8lld  %-24s %-15s %6s %5s %-12s %s\n",
           (long long)json_integer_value(json_object_get(e, "seq")), when,
           json_string_value(json_object_get(e, "kind")), job, task, node && *node ? node : "-",
           detail ? detail : "");
    free(detail);
}

/* Sleeps ms, or less when SIGINT/SIGTERM (blocked by the caller) arrives: then true. */
static bool signalled_within(int ms)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    return sigtimedwait(&set, NULL, &ts) > 0;
}

static int run(const struct client_opts *o, const struct events_flags *f)
{
    struct client *c = client_open(o);
    if (!c)
        return CLI_FAIL;
    long long since = f->since, printed = 0;
    int delay = FOLLOW_MIN_MS, rc = CLI_OK;
    bool header = !o->json;
    for (;;) {
        long long want = EVENTS_PAGE;
        if (f->limit && f->limit - printed < want)
            want = f->limit - printed;
        json_t *req = hrm_wire_new(HRM_WIRE_EVENTS);
        json_object_set_new(req, "since", json_integer(since));
        json_object_set_new(req, "limit", json_integer(want));
        int code;
        json_t *r = client_call(c, req, &code);
        json_decref(req);
        if (!r) {
            if (f->follow)
                fprintf(stderr, "hrm events: the master went away; stopped after event %lld\n",
                        since);
            rc = code;
            break;
        }
        const json_t *list = json_object_get(r, "events");
        if (!o->json)
            cli_escape_strings((json_t *)list); /* node names and errors are others' text */
        if (header) {
            printf("%8s  %-24s %-15s %6s %5s %-12s %s\n", "SEQ", "TIME", "KIND", "JOB", "TASK",
                   "NODE", "DETAIL");
            header = false;
        }
        size_t i;
        const json_t *e;
        json_array_foreach(list, i, e) print_event(e, o->json);
        printed += (long long)json_array_size(list);
        since = json_integer_value(json_object_get(r, "next"));
        bool more = json_is_true(json_object_get(r, "more"));
        json_decref(r);
        fflush(stdout);
        if (f->limit && printed >= f->limit)
            break;
        if (more) {
            delay = FOLLOW_MIN_MS;
            if (f->follow && signalled_within(0)) /* a long backlog still stops at once */
                break;
            continue;
        }
        if (!f->follow)
            break;
        if (i > 0)
            delay = FOLLOW_MIN_MS;
        if (signalled_within(delay))
            break;
        delay = delay * 2 < FOLLOW_MAX_MS ? delay * 2 : FOLLOW_MAX_MS;
    }
    client_close(c);
    return rc;
}

int cmd_events(int argc, char **argv)
{
    static const struct option opts[] = {CLIENT_LONG_OPTS,
                                         {"since", required_argument, NULL, 'S'},
                                         {"limit", required_argument, NULL, 'n'},
                                         {"follow", no_argument, NULL, 'f'},
                                         {NULL, 0, NULL, 0}};
    struct client_opts o;
    client_opts_init(&o);
    struct events_flags f = {0};
    int c;
    while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
        int r = client_opt(&o, c, optarg);
        if (r < 0)
            return CLI_USAGE;
        if (r)
            continue;
        switch (c) {
        case 'S':
            if (cli_parse_int("events", "--since", optarg, 0, INT64_MAX, &f.since) < 0)
                return CLI_USAGE;
            break;
        case 'n':
            if (cli_parse_int("events", "--limit", optarg, 1, EVENTS_LIMIT_MAX, &f.limit) < 0)
                return CLI_USAGE;
            break;
        case 'f':
            f.follow = true;
            break;
        case 'h':
            printf("%s\n"
                   "Prints the cluster's event log: jobs submitted, started, finished and\n"
                   "cancelled; tasks started, ended, retried (failure, node_lost, preempted),\n"
                   "restarted (stream jobs) and migrated; nodes up and down.  Each event has a\n"
                   "sequence number that only grows, also across master restarts.\n\n"
                   "options:\n"
                   "  --since N       only the events after sequence number N (default 0: from\n"
                   "                  the oldest the master keeps)\n"
                   "  --limit K       print at most K events, 1..%d (default: every one)\n"
                   "  -f, --follow    then wait for new events and print them as they come\n"
                   "                  (polled every 0.1 to 1 s) until SIGINT/SIGTERM, or until\n"
                   "                  the master goes away (exit status 1)\n"
                   "%s\n"
                   "--json prints one JSON object per line: seq, time_us, kind, job (0: none),\n"
                   "task (-1: none), node (\"\": none), detail.\n",
                   usage_line, EVENTS_LIMIT_MAX, CLIENT_OPTS_HELP);
            return CLI_OK;
        default:
            fputs(usage_line, stderr);
            return CLI_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "hrm events: unexpected argument '%s'\n", argv[optind]);
        return CLI_USAGE;
    }
    /* Blocked: --follow reads them in its wait (sigtimedwait), so a signal never cuts a line. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (f.follow)
        sigprocmask(SIG_BLOCK, &set, NULL);
    return run(&o, &f);
}
