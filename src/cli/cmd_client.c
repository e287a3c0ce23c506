/* hrm submit, jobs, job, nodes, cancel, logs, wait: the user's verbs, each one request to the master. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "hrm/alloc.h"
#include "hrm/jobdesc.h"
#include "hrm/metrics.h"
#include "hrm/units.h"
#include "hrm/wire.h"

static void print_json(const json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("%s\n", s);
    free(s);
}

static bool parse_id(const char *s, long long *id)
{
    char *end;
    *id = strtoll(s, &end, 10);
    return *s && !*end && *id > 0;
}

static const char *fmt_ms(int64_t us, char *buf, size_t len)
{
    if (us < 0)
        snprintf(buf, len, "-");
    else
        hrm_format_duration(us, buf, len);
    return buf;
}

/* A job's estimated start as listed: "-" when nothing of it is pending, "?" when unknown,
 * else the seconds from now ("0s", "45s", "3m05s", "2h10m"). */
static const char *fmt_eta(const json_t *j, char *buf, size_t len)
{
    const json_t *e = json_object_get(j, "estimated_start_s");
    long long s = json_integer_value(e);
    const char *st = json_string_value(json_object_get(j, "state"));
    bool live = st && (strcmp(st, "pending") == 0 || strcmp(st, "running") == 0);
    if (json_integer_value(json_object_get(j, "pending")) == 0 || !live)
        snprintf(buf, len, "-");
    else if (!json_is_integer(e))
        snprintf(buf, len, "?");
    else if (s < 60)
        snprintf(buf, len, "%llds", s);
    else if (s < 3600)
        snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
    else
        snprintf(buf, len, "%lldh%02lldm", s / 3600, s / 60 % 60);
    return buf;
}

/* Runs a one-shot request; prints errors; returns the reply or NULL with *rc set. */
static json_t *one_call(const struct client_opts *o, json_t *req, int *rc)
{
    struct client *c = client_open(o);
    if (!c) {
        json_decref(req);
        *rc = CLI_FAIL;
        return NULL;
    }
    json_t *r = client_call(c, req, rc);
    json_decref(req);
    client_close(c);
    return r;
}

/* getopt_long over a client verb's flags: the common ones (CLIENT_LONG_OPTS but -h) go into o on
 * the way.  The next of the verb's own flags ('h' and getopt's '?' included), -1 at the end, or
 * VERB_BAD_VALUE after client_opt said why a common flag's value is wrong. */
#define VERB_BAD_VALUE (-2)
static int verb_getopt(int argc, char **argv, const char *shortopts, const struct option *opts,
                       struct client_opts *o)
{
    int c, r;
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1 &&
           (r = client_opt(o, c, optarg)) != 0) {
        if (r < 0)
            return VERB_BAD_VALUE;
    }
    return c;
}

/* ---- wait ---- */

static int do_wait(const struct client_opts *o, long long id, double timeout_s)
{
    struct client *c = client_open(o);
    if (!c)
        return CLI_FAIL;
    json_t *req = hrm_wire_new(HRM_WIRE_WAIT);
    json_object_set_new(req, "id", json_integer(id));
    int code;
    /* Resent every 2 s: a master that restarted meanwhile learns the waiter again. */
    json_t *r = client_call_long(c, req, timeout_s, 2.0, &code);
    json_decref(req);
    client_close(c);
    if (!r)
        return timeout_s >= 0 && code == 1 ? 124 : code;
    int exit = (int)json_integer_value(json_object_get(r, "exit"));
    if (o->json)
        print_json(r);
    else if (!isatty(1) || true)
        fprintf(stderr, "job %lld %s (exit %d)\n", id,
                json_string_value(json_object_get(r, "state")), exit);
    json_decref(r);
    return exit;
}

int cmd_wait(int argc, char **argv)
{
    static const struct option opts[] = {CLIENT_LONG_OPTS, {"for", required_argument, NULL, 'f'},
                                         {NULL, 0, NULL, 0}};
    struct client_opts o;
    client_opts_init(&o);
    double wait_s = -1;
    int c;
    while ((c = verb_getopt(argc, argv, "h", opts, &o)) != -1) {
        if (c == VERB_BAD_VALUE)
            return CLI_USAGE;
        if (c == 'f') {
            int64_t us;
            if (hrm_parse_duration(optarg, &us) < 0) {
                fprintf(stderr, "hrm wait: --for: expected a duration like 30s\n");
                return CLI_USAGE;
            }
            wait_s = (double)us / 1e6;
        } else if (c == 'h') {
            printf("usage: hrm wait ID [--for DURATION] [options]\n\n"
                   "Waits until job ID ends and exits with its exit code: 0 when every task\n"
                   "succeeded, else the first failed task's code (128+N for signal N), 143 when\n"
                   "cancelled, 124 when --for elapses first.\n\noptions:\n"
                   "  --for D         give up after D (e.g. 30s; default: wait forever)\n" CLIENT_OPTS_HELP);
            return CLI_OK;
        } else {
            return CLI_USAGE;
        }
    }
    long long id;
    if (optind != argc - 1 || !parse_id(argv[optind], &id)) {
        fprintf(stderr, "usage: hrm wait ID [--for DURATION]\n");
        return CLI_USAGE;
    }
    return do_wait(&o, id, wait_s);
}

/* ---- submit ---- */

/* hrm submit's own exit status: the master never answered, so whether the job
 * exists is unknown (1 means it was refused, or never sent). */
#define SUBMIT_UNKNOWN 3
#define SUBMIT_KEY_MAX 128
/* A submission is resent at this period until answered: the master answers a
 * known key with the job it made, so a resend never makes a second job. */
#define SUBMIT_RESEND_S 2.0

/* A fresh submission key: 128 random bits in hex. */
static int new_submit_key(char out[33])
{
    unsigned char b[16];
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
        return -1;
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

static bool submit_key_ok(const char *key)
{
    size_t n = strlen(key);
    return n > 0 && n <= SUBMIT_KEY_MAX &&
           strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-") == n;
}

/* Sends the submission (req taken) and returns the job's id, or a negative exit code. */
static long long submit_once(const struct client_opts *o, json_t *req, const char *key)
{
    struct client *c = client_open(o);
    if (!c) {
        json_decref(req);
        return -CLI_FAIL; /* nothing was sent */
    }
    json_object_set_new(req, "key", json_string(key));
    int code;
    bool no_answer;
    json_t *r = client_call_ex(c, req, o->timeout_s, SUBMIT_RESEND_S, &code, &no_answer);
    json_decref(req);
    if (!r && no_answer) {
        fprintf(stderr,
                "hrm submit: the master at %s did not answer within %.0f s; the job may or may "
                "not have been submitted: run the same submit with --key %s to find out without "
                "submitting it twice\n",
                client_endpoint(c), o->timeout_s, key);
        code = SUBMIT_UNKNOWN;
    }
    client_close(c);
    if (!r)
        return -code;
    long long id = json_integer_value(json_object_get(r, "id"));
    json_decref(r);
    return id;
}

static void submit_usage(FILE *out)
{
    fprintf(out,
            "usage: hrm submit JOB.json [options]\n"
            "       hrm submit [--cpus N --mem SIZE --gpus N --gpu-mem SIZE --count K]\n"
            "                  [--queue Q --priority P --kind batch|stream --time D]\n"
            "                  [--name NAME] [--env K=V] [--cwd DIR] -- CMD ARGS...\n\n"
            "Submits a job and prints its id once the master has made it durable.\n"
            "JOB.json: {\"name\", \"queue\", \"priority\", \"kind\", \"tasks\": [{\"cmd\", \"cpus\",\n"
            "\"mem\", \"gpus\", \"gpu_mem\", \"count\", \"env\", \"cwd\", \"output\", \"time\"}]} "
            "(docs/runtime.md).\n\noptions:\n"
            "  --cpus N        CPUs per task: 2, 0.5 or 500m (default 1)\n"
            "  --mem SIZE      memory per task: 256M, 2G (default 0: no limit)\n"
            "  --gpus N        GPUs per task: a whole number, or a share of one GPU in\n"
            "                  (0, 1) like 0.5 (default 0)\n"
            "  --gpu-mem SIZE  GPU memory per task, over all its GPUs: 4G (default 0:\n"
            "                  not asked); needs --gpus\n"
            "  --count K       K tasks running CMD (default 1)\n"
            "  --queue Q       queue (default \"default\")\n"
            "  --priority P    higher runs first under priority policies (default 0)\n"
            "  --kind K        batch: the job ends when its tasks have (default); stream: a\n"
            "                  service, its tasks restarted whenever they exit (1 s backoff,\n"
            "                  doubling to 60 s) until the job is cancelled\n"
            "  --name NAME     job name (default: the command's name)\n"
            "  --env K=V       environment for the tasks (repeatable)\n"
            "  --cwd DIR       working directory (default: the current one)\n"
            "  --no-output     send the tasks' stdout and stderr to /dev/null (no logs)\n"
            "  --time D        how long each task is expected to run: 90s, 5m, 2h (default:\n"
            "                  none; estimates then use the same command's past runs)\n"
            "  --wait          wait for the job and exit with its code (see hrm wait)\n"
            "  --key KEY       the submission's key (default: 128 random bits); a job\n"
            "                  submitted again with the same key is not made twice: the\n"
            "                  master answers with the first one's id (1..128 of A-Z a-z\n"
            "                  0-9 . _ : -)\n" CLIENT_OPTS_HELP
            "\nexit status: 0 submitted, 1 master unreachable or refused, 2 bad job,\n"
            "3 no answer: the job may or may not exist (retry with the --key printed)\n");
}

/* The master refuses a frame over HRM_WIRE_MAX_BYTES unread: say so before sending,
 * with the size, rather than wait for an answer.  Frees req when it does not fit. */
static bool submit_fits(json_t *req)
{
    json_object_set_new(req, "req", json_integer(INT64_MAX)); /* the widest id */
    size_t len = 0;
    char *text = hrm_wire_dump(req, &len);
    free(text);
    json_object_del(req, "req");
    if (len <= HRM_WIRE_MAX_BYTES)
        return true;
    fprintf(stderr, "hrm submit: the job description is %zu bytes; the limit is 1 MiB (%d bytes)\n",
            len, HRM_WIRE_MAX_BYTES);
    json_decref(req);
    return false;
}

int cmd_submit(int argc, char **argv)
{
    static const struct option opts[] = {
        CLIENT_LONG_OPTS,
        {"cpus", required_argument, NULL, 'c'},
        {"mem", required_argument, NULL, 'm'},
        {"gpus", required_argument, NULL, 'g'},
        {"gpu-mem", required_argument, NULL, 'G'},
        {"count", required_argument, NULL, 'k'},
        {"queue", required_argument, NULL, 'q'},
        {"priority", required_argument, NULL, 'p'},
        {"kind", required_argument, NULL, 'S'},
        {"name", required_argument, NULL, 'n'},
        {"env", required_argument, NULL, 'e'},
        {"cwd", required_argument, NULL, 'd'},
        {"wait", no_argument, NULL, 'w'},
        {"no-output", no_argument, NULL, 'O'},
        {"key", required_argument, NULL, 'K'},
        {"time", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0},
    };
    struct client_opts o;
    client_opts_init(&o);
    json_t *group = json_object(), *top = json_object(), *env = json_object();
    bool wait = false, flags = false;
    const char *cwd = NULL, *key = NULL;
    char fresh_key[33];
    int c, rc = CLI_USAGE;
    while ((c = verb_getopt(argc, argv, "+h", opts, &o)) != -1) {
        if (c == VERB_BAD_VALUE)
            goto out;
        char *end;
        switch (c) {
        case 'c':
            json_object_set_new(group, "cpus", json_string(optarg));
            flags = true;
            break;
        case 'm':
            json_object_set_new(group, "mem", json_string(optarg));
            flags = true;
            break;
        case 'G':
            json_object_set_new(group, "gpu_mem", json_string(optarg));
            flags = true;
            break;
        case 'g': {
            /* A whole number or a share of one GPU; the job's checks say what is wrong. */
            double v = strtod(optarg, &end);
            if (*end || !*optarg || !isfinite(v)) {
                fprintf(stderr, "hrm submit: --gpus: expected a number of GPUs like 2 or a share "
                                "of one GPU like 0.5\n");
                goto out;
            }
            bool whole = fabs(v) <= 1e6 && v == floor(v);
            json_object_set_new(group, "gpus", whole ? json_integer((json_int_t)v) : json_real(v));
            flags = true;
            break;
        }
        case 'k':
        case 'p': {
            long long v = strtoll(optarg, &end, 10);
            if (*end || !*optarg) {
                fprintf(stderr, "hrm submit: --%s: expected an integer\n",
                        c == 'k' ? "count" : "priority");
                goto out;
            }
            if (c == 'p')
                json_object_set_new(top, "priority", json_integer(v));
            else
                json_object_set_new(group, "count", json_integer(v));
            flags = flags || c != 'p';
            break;
        }
        case 'q':
            json_object_set_new(top, "queue", json_string(optarg));
            break;
        case 'S': /* checked with the rest of the description (hrm_jobdesc_normalise) */
            json_object_set_new(top, "kind", json_string(optarg));
            break;
        case 'n':
            json_object_set_new(top, "name", json_string(optarg));
            break;
        case 'e': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                fprintf(stderr, "hrm submit: --env: expected KEY=VALUE\n");
                goto out;
            }
            *eq = '\0';
            json_object_set_new(env, optarg, json_string(eq + 1));
            flags = true;
            break;
        }
        case 'd':
            cwd = optarg;
            break;
        case 'w':
            wait = true;
            break;
        case 'O':
            json_object_set_new(group, "output", json_false());
            flags = true;
            break;
        case 'T': {
            int64_t us;
            if (hrm_parse_duration(optarg, &us) < 0 || us <= 0) {
                fprintf(stderr, "hrm submit: --time: expected a positive duration like 90s or 2h\n");
                goto out;
            }
            json_object_set_new(group, "time", json_string(optarg));
            flags = true;
            break;
        }
        case 'K':
            if (!submit_key_ok(optarg)) {
                fprintf(stderr, "hrm submit: --key: expected 1..%d characters of A-Z a-z 0-9 . _ "
                                ": -\n", SUBMIT_KEY_MAX);
                goto out;
            }
            key = optarg;
            break;
        case 'h':
            submit_usage(stdout);
            rc = CLI_OK;
            goto out;
        default:
            goto out;
        }
    }
    char here[4096];
    if (!cwd)
        cwd = getcwd(here, sizeof(here)) ? here : "/";
    json_t *desc = NULL;
    bool dashdash = optind > 0 && strcmp(argv[optind - 1], "--") == 0;
    if (dashdash || (optind < argc && flags) || (optind < argc - 1)) {
        if (optind >= argc) {
            fprintf(stderr, "hrm submit: no command after --\n");
            goto out;
        }
        json_t *cmd = json_array();
        for (int i = optind; i < argc; i++)
            json_array_append_new(cmd, json_string(argv[i]));
        json_object_set_new(group, "cmd", cmd);
        json_object_set_new(group, "env", json_incref(env));
        json_object_set_new(group, "cwd", json_string(cwd));
        if (!json_object_get(top, "name")) {
            const char *base = strrchr(argv[optind], '/');
            char name[48];
            snprintf(name, sizeof(name), "%.47s", base ? base + 1 : argv[optind]);
            json_object_set_new(top, "name", json_string(name[0] ? name : "job"));
        }
        desc = json_deep_copy(top);
        json_object_set_new(desc, "tasks", json_pack("[O]", group));
    } else if (optind == argc - 1) {
        struct hrm_error err;
        if (access(argv[optind], F_OK) < 0 && (errno == ENOENT || errno == ENOTDIR)) {
            /* Most likely a command meant to run, not a file that went missing. */
            fprintf(stderr,
                    "hrm submit: %s: no such job file; to run a command use: hrm submit -- %s\n",
                    argv[optind], argv[optind]);
            goto out;
        }
        desc = hrm_jobdesc_load(argv[optind], &err);
        if (!desc) {
            fprintf(stderr, "hrm submit: %s\n", err.text);
            goto out;
        }
        /* Flags that make sense for a whole file override it. */
        const char *k;
        json_t *v;
        json_object_foreach(top, k, v) json_object_set(desc, k, v);
        /* Relative to the submitter, as a shell would run it. */
        size_t i;
        json_t *g;
        json_array_foreach(json_object_get(desc, "tasks"), i, g)
        {
            if (json_is_object(g) && !json_object_get(g, "cwd"))
                json_object_set_new(g, "cwd", json_string(cwd));
        }
    } else {
        submit_usage(stderr);
        goto out;
    }
    struct hrm_error err;
    json_t *norm = hrm_jobdesc_normalise(desc, cwd, &err);
    if (!norm) {
        fprintf(stderr, "hrm submit: %s%s%s\n", optind == argc - 1 && !dashdash ? argv[optind] : "",
                optind == argc - 1 && !dashdash ? ": " : "", err.text);
        json_decref(desc);
        goto out;
    }
    json_decref(norm);
    if (!key && new_submit_key(fresh_key) < 0) {
        fprintf(stderr, "hrm submit: getrandom: %s\n", strerror(errno));
        json_decref(desc);
        rc = CLI_FAIL;
        goto out;
    }
    json_t *req = hrm_wire_new(HRM_WIRE_SUBMIT);
    json_object_set_new(req, "job", desc);
    if (!submit_fits(req))
        goto out;
    long long id = submit_once(&o, req, key ? key : fresh_key);
    if (id < 0) {
        rc = (int)-id;
        goto out;
    }
    if (o.json && !wait)
        printf("{\"id\": %lld}\n", id);
    else
        printf("%lld\n", id);
    fflush(stdout);
    rc = wait ? do_wait(&o, id, -1) : CLI_OK;
out:
    json_decref(group);
    json_decref(top);
    json_decref(env);
    return rc;
}

/* ---- listings ---- */

/* "-" for a job that has not ended (its exit is null), else the code. */
/* "CPUS/MEM" of a {cpu, mem} object (milli-cores, bytes), "-" when absent: hrm job's request,
 * FGM's estimate and the measured peak side by side. */
static const char *fmt_use(const json_t *cpu, const json_t *mem, char *buf, size_t len)
{
    if (!json_is_integer(cpu) || !json_is_integer(mem))
        return "-";
    snprintf(buf, len, "%.2f/%lldM", (double)json_integer_value(cpu) / 1000,
             (long long)((json_integer_value(mem) + (1 << 20) - 1) >> 20));
    return buf;
}

static const char *fmt_exit(const json_t *o, char *buf, size_t len)
{
    const json_t *e = json_object_get(o, "exit");
    if (json_is_integer(e))
        snprintf(buf, len, "%lld", (long long)json_integer_value(e));
    else
        snprintf(buf, len, "-");
    return buf;
}

static long long geti(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

/* "batch" or "stream" ("batch" from a master that predates kinds). */
static const char *job_kind(const json_t *j)
{
    const char *k = json_string_value(json_object_get(j, "kind"));
    return k ? k : "batch";
}

/* A stream task's restarts and how its latest run ended (its runs never end the task). */
static void print_stream_task(const json_t *t)
{
    long long restarts = geti(t, "restarts"), sig = geti(t, "signal");
    char last[48] = "-";
    if (restarts > 0 && sig)
        snprintf(last, sizeof(last), "signal %lld", sig);
    else if (restarts > 0)
        snprintf(last, sizeof(last), "%lld", geti(t, "exit"));
    printf("  %8lld  %-9s", restarts, last);
    if (geti(t, "restart_at_us") > 0)
        printf("  (backoff %.0f s before restart %lld)", (double)geti(t, "backoff_us") / 1e6,
               restarts);
}

/* 1234567 -> "1,234,567" */
static const char *fmt_count(long long v, char *buf, size_t len)
{
    char digits[32];
    int n = snprintf(digits, sizeof(digits), "%lld", v < 0 ? -v : v), k = 0;
    size_t o = 0;
    if (v < 0 && o + 1 < len)
        buf[o++] = '-';
    for (; k < n && o + 1 < len; k++) {
        if (k > 0 && (n - k) % 3 == 0 && o + 1 < len)
            buf[o++] = ',';
        if (o + 1 < len)
            buf[o++] = digits[k];
    }
    buf[o] = '\0';
    return buf;
}

/* Totals over the listed jobs.  Wait and response are over the jobs that ran and ended on their
 * own (done or failed): a cancelled job's end is the user's choice, not the cluster's speed. */
static int summary(const json_t *jobs, bool as_json)
{
    size_t n = json_array_size(jobs), nw = 0;
    double *wait = hrm_calloc(n + 1, sizeof(double)), *resp = hrm_calloc(n + 1, sizeof(double));
    long long done = 0, failed = 0, skipped = 0, cancelled = 0, tasks = 0, jdone = 0, jfailed = 0,
              jcancelled = 0;
    size_t i;
    const json_t *j;
    json_array_foreach(jobs, i, j)
    {
        tasks += geti(j, "ntasks");
        done += geti(j, "done");
        failed += geti(j, "failed");
        skipped += geti(j, "skipped");
        cancelled += geti(j, "cancelled");
        const char *st = json_string_value(json_object_get(j, "state"));
        bool ended = strcmp(st, "done") == 0 || strcmp(st, "failed") == 0;
        jdone += strcmp(st, "done") == 0;
        jfailed += strcmp(st, "failed") == 0;
        jcancelled += strcmp(st, "cancelled") == 0;
        int64_t sub = geti(j, "submit_us"), start = geti(j, "start_us"), end = geti(j, "end_us");
        if (ended && start >= 0 && end >= 0) {
            wait[nw] = (double)(start - sub) / 1e6;
            resp[nw++] = (double)(end - sub) / 1e6;
        }
    }
    double mw = hrm_mean(wait, nw), mr = hrm_mean(resp, nw);
    double pw = hrm_percentile(wait, nw, 95), pr = hrm_percentile(resp, nw, 95);
    if (as_json) {
        json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f}",
                              "jobs", (json_int_t)n, "jobs_done", jdone, "jobs_failed", jfailed,
                              "jobs_cancelled", jcancelled, "tasks", tasks, "tasks_done", done,
                              "tasks_failed", failed, "tasks_skipped", skipped, "tasks_cancelled",
                              cancelled, "wait_mean_s", mw, "wait_p95_s", pw, "response_mean_s",
                              mr, "response_p95_s", pr);
        print_json(o);
        json_decref(o);
    } else {
        printf("jobs      %zu (%lld done, %lld failed, %lld cancelled)\n", n, jdone, jfailed,
               jcancelled);
        printf("tasks     %lld: %lld done, %lld failed, %lld skipped, %lld cancelled\n", tasks,
               done, failed, skipped, cancelled);
        printf("wait      mean %.3f s, p95 %.3f s (submit -> first start; done and failed jobs)\n",
               mw, pw);
        printf("response  mean %.3f s, p95 %.3f s (submit -> end)\n", mr, pr);
    }
    hrm_free(wait);
    hrm_free(resp);
    return CLI_OK;
}

/* Every job the listing asks for, page by page (the master answers at most 2,000 a time), in
 * id order.  NULL after printing why, with *rc set. */
static json_t *list_jobs(const struct client_opts *o, bool all, int *rc)
{
    struct client *c = client_open(o);
    if (!c) {
        *rc = CLI_FAIL;
        return NULL;
    }
    json_t *jobs = json_array();
    long long before = 0;
    for (;;) {
        json_t *req = hrm_wire_new(HRM_WIRE_JOBS);
        json_object_set_new(req, "all", json_boolean(all));
        if (before > 0)
            json_object_set_new(req, "before", json_integer(before));
        json_t *r = client_call(c, req, rc);
        json_decref(req);
        if (!r) {
            json_decref(jobs);
            jobs = NULL;
            break;
        }
        json_t *page = json_object_get(r, "jobs");
        json_array_extend(page, jobs); /* older pages come later: prepend them */
        json_decref(jobs);
        jobs = json_incref(page);
        before = geti(r, "next");
        bool more = json_is_true(json_object_get(r, "truncated")) && before > 0;
        json_decref(r);
        if (!more)
            break;
    }
    client_close(c);
    return jobs;
}

int cmd_jobs(int argc, char **argv)
{
    static const struct option opts[] = {CLIENT_LONG_OPTS,
                                         {"all", no_argument, NULL, 'a'},
                                         {"summary", no_argument, NULL, 's'},
                                         {NULL, 0, NULL, 0}};
    struct client_opts o;
    client_opts_init(&o);
    bool all = false, sum = false;
    int c;
    while ((c = verb_getopt(argc, argv, "ah", opts, &o)) != -1) {
        if (c == VERB_BAD_VALUE)
            return CLI_USAGE;
        if (c == 'a')
            all = true;
        else if (c == 's')
            sum = all = true;
        else if (c == 'h') {
            printf("usage: hrm jobs [--all] [--summary] [options]\n\n"
                   "Lists unfinished jobs and the 50 latest (--all: every job).  ETA: when a\n"
                   "job with pending tasks should start its next one (? unknown, - none pending).\n\noptions:\n"
                   "  -a, --all       every job\n"
                   "  --summary       totals over every job: jobs and tasks by outcome, mean and\n"
                   "                  p95 wait and response (--json: as one object)\n" CLIENT_OPTS_HELP);
            return CLI_OK;
        } else
            return CLI_USAGE;
    }
    if (optind != argc) {
        fprintf(stderr, "usage: hrm jobs [--all] [--summary]\n");
        return CLI_USAGE;
    }
    int rc;
    json_t *jobs = list_jobs(&o, all, &rc);
    if (!jobs)
        return rc;
    if (!o.json)
        cli_escape_strings(jobs); /* names are the submitter's text */
    if (sum) {
        summary(jobs, o.json);
    } else if (o.json) {
        print_json(jobs);
    } else {
        printf("%6s  %-16s %-10s %-6s %-9s %7s %7s %7s %5s %10s %10s %7s\n", "ID", "NAME", "USER",
               "KIND", "STATE", "TASKS", "DONE", "FAILED", "EXIT", "WAIT", "RUNTIME", "ETA");
        size_t i;
        const json_t *j;
        json_array_foreach(jobs, i, j)
        {
            int64_t sub = geti(j, "submit_us"), start = geti(j, "start_us"), end = geti(j, "end_us");
            char w[32], rt[32], ex[24], eta[24];
            printf("%6lld  %-16.16s %-10.10s %-6.6s %-9s %7lld %7lld %7lld %5s %10s %10s %7s\n",
                   geti(j, "id"), json_string_value(json_object_get(j, "name")),
                   json_string_value(json_object_get(j, "user")), job_kind(j),
                   json_string_value(json_object_get(j, "state")), geti(j, "ntasks"),
                   geti(j, "done"), geti(j, "failed"), fmt_exit(j, ex, sizeof(ex)),
                   fmt_ms(start >= 0 ? start - sub : -1, w, sizeof(w)),
                   fmt_ms(start >= 0 && end >= 0 ? end - start : -1, rt, sizeof(rt)),
                   fmt_eta(j, eta, sizeof(eta)));
        }
    }
    json_decref(jobs);
    return CLI_OK;
}

/* hrm logs' own flags. */
struct logs_flags {
    bool err, follow;
};

/* Parses "VERB ID" with the common options and an optional task flag (and logs' flags). */
static int id_verb(int argc, char **argv, const char *usage, struct client_opts *o, long long *id,
                   long long *task, struct logs_flags *lf)
{
    static const struct option opts[] = {CLIENT_LONG_OPTS,
                                         {"task", required_argument, NULL, 't'},
                                         {"err", no_argument, NULL, 'e'},
                                         {"follow", no_argument, NULL, 'f'},
                                         {NULL, 0, NULL, 0}};
    client_opts_init(o);
    int c;
    optind = 1;
    while ((c = verb_getopt(argc, argv, "h", opts, o)) != -1) {
        if (c == VERB_BAD_VALUE)
            return CLI_USAGE;
        if (c == 't' && task) {
            char *end;
            *task = strtoll(optarg, &end, 10);
            if (*end || *task < 0) {
                fprintf(stderr, "hrm %s: --task: expected a task index\n", argv[0]);
                return CLI_USAGE;
            }
        } else if (c == 'e' && lf) {
            lf->err = true;
        } else if (c == 'f' && lf) {
            lf->follow = true;
        } else if (c == 'h') {
            printf("%s\noptions:\n" CLIENT_OPTS_HELP, usage);
            return -1;
        } else {
            fprintf(stderr, "%s", usage);
            return CLI_USAGE;
        }
    }
    if (optind != argc - 1 || !parse_id(argv[optind], id)) {
        fprintf(stderr, "%s", usage);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* Why a task could not start, under its row of `hrm job` (the master strips control characters). */
static void print_launch_error(const json_t *task)
{
    const char *why = json_string_value(json_object_get(task, "error"));
    if (why)
        printf("%6s  launch failed: %s\n", "", why);
}

/* What `hrm job` asks for: a range of tasks, a state, or everything. */
struct job_query {
    long long id, from, to; /* to < 0: the job's end */
    const char *state;
    bool all;
};

static int job_args(int argc, char **argv, struct client_opts *o, struct job_query *q)
{
    static const struct option opts[] = {CLIENT_LONG_OPTS,
                                         {"all", no_argument, NULL, 'a'},
                                         {"tasks", required_argument, NULL, 't'},
                                         {"task-state", required_argument, NULL, 'S'},
                                         {NULL, 0, NULL, 0}};
    static const char usage[] = "usage: hrm job ID [--all | --tasks A:B] [--task-state S] [options]\n";
    client_opts_init(o);
    *q = (struct job_query){.to = -1};
    int c;
    optind = 1;
    while ((c = verb_getopt(argc, argv, "ah", opts, o)) != -1) {
        if (c == VERB_BAD_VALUE)
            return CLI_USAGE;
        char *end;
        switch (c) {
        case 'a':
            q->all = true;
            break;
        case 't':
            q->from = strtoll(optarg, &end, 10);
            if (end == optarg || *end != ':' || q->from < 0 ||
                (q->to = strtoll(end + 1, &end, 10), *end) || q->to <= q->from) {
                fprintf(stderr, "hrm job: --tasks: expected A:B, task indices with A < B "
                                "(tasks A to B-1)\n");
                return CLI_USAGE;
            }
            break;
        case 'S':
            q->state = optarg;
            break;
        case 'h':
            printf("%s\nShows a job and its tasks: the first 2,000 that match, saying so when there\n"
                   "are more.  A job with pending tasks also says why they wait and when the next\n"
                   "should start (--json: pending_reason, estimated_start_s).\n\noptions:\n"
                   "  -a, --all       every task (several requests for a large job)\n"
                   "  --tasks A:B     tasks A to B-1\n"
                   "  --task-state S  only tasks in state S: pending, queued, running, done,\n"
                   "                  failed, skipped or cancelled\n" CLIENT_OPTS_HELP,
                   usage);
            return -1;
        default:
            fprintf(stderr, "%s", usage);
            return CLI_USAGE;
        }
    }
    if (optind != argc - 1 || !parse_id(argv[optind], &q->id)) {
        fprintf(stderr, "%s", usage);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* The job with the tasks q asks for: one page, or every page with --all (their tasks joined). */
static json_t *fetch_job(const struct client_opts *o, const struct job_query *q, int *rc)
{
    struct client *c = client_open(o);
    if (!c) {
        *rc = CLI_FAIL;
        return NULL;
    }
    json_t *job = NULL;
    long long from = q->from;
    for (;;) {
        json_t *req = hrm_wire_new(HRM_WIRE_JOB);
        json_object_set_new(req, "id", json_integer(q->id));
        json_object_set_new(req, "from", json_integer(from));
        if (q->to >= 0)
            json_object_set_new(req, "to", json_integer(q->to));
        if (q->state)
            json_object_set_new(req, "state", json_string(q->state));
        json_t *r = client_call(c, req, rc);
        json_decref(req);
        if (!r) {
            json_decref(job);
            job = NULL;
            break;
        }
        json_t *j = json_object_get(r, "job");
        if (!job)
            job = json_incref(j);
        else
            json_array_extend(json_object_get(job, "tasks"), json_object_get(j, "tasks"));
        from = geti(j, "tasks_next");
        json_object_set_new(job, "tasks_next", json_integer(from));
        json_decref(r);
        if (!q->all || from < 0)
            break;
    }
    client_close(c);
    return job;
}

/* A group's GPU request as people write it: "0.5 GPU, 4G" (4G of GPU memory over its GPUs). */
static const char *fmt_gpu_request(const json_t *group, char *buf, size_t len)
{
    long long gpus = geti(group, "gpus"), share = geti(group, "gpu_share");
    int64_t gmem = geti(group, "gpu_mem");
    int n = share > 0 && share < 1000
                ? snprintf(buf, len, "%g GPU", (double)share / 1000.0)
                : snprintf(buf, len, "%lld GPU%s", gpus, gpus == 1 ? "" : "s");
    if (gmem > 0 && n > 0 && (size_t)n < len) {
        char size[32];
        hrm_format_size(gmem, size, sizeof(size));
        snprintf(buf + n, len - (size_t)n, ", %s", size);
    }
    return buf;
}

/* One line per task group that asks GPUs: "tasks[0]: 0.5 GPU, 4G per task". */
static void print_gpu_requests(const json_t *spec)
{
    size_t g;
    const json_t *group;
    json_array_foreach(json_object_get(spec, "tasks"), g, group)
    {
        char req[64];
        if (geti(group, "gpus") > 0)
            printf("tasks[%zu]: %s per task\n", g, fmt_gpu_request(group, req, sizeof(req)));
    }
}

/* Why the job's pending tasks wait and when the next should start (docs/runtime.md, "Pending
 * jobs: reason and estimate"). */
static void print_pending(const json_t *j)
{
    const char *why = json_string_value(json_object_get(j, "pending_reason"));
    if (!why)
        return;
    char eta[24];
    printf("pending: %s\n", why);
    if (json_is_integer(json_object_get(j, "estimated_start_s")))
        printf("estimated start: in %s\n", fmt_eta(j, eta, sizeof(eta)));
    else
        printf("estimated start: unknown\n");
}

int cmd_job(int argc, char **argv)
{
    struct client_opts o;
    struct job_query q;
    int rc = job_args(argc, argv, &o, &q);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    json_t *j = fetch_job(&o, &q, &rc);
    if (!j)
        return rc;
    if (!o.json)
        cli_escape_strings(j); /* names are the submitter's text */
    if (o.json) {
        print_json(j);
    } else {
        char ex[24];
        printf("job %lld  %s  user %s  queue %s  priority %lld  kind %s\n", q.id,
               json_string_value(json_object_get(j, "name")),
               json_string_value(json_object_get(j, "user")),
               json_string_value(json_object_get(j, "queue")), geti(j, "priority"), job_kind(j));
        bool stream = strcmp(job_kind(j), "stream") == 0;
        long long queued = geti(j, "queued");
        printf("state %s  exit %s  tasks %lld: %lld pending, %lld running, %lld done, %lld failed, "
               "%lld skipped, %lld cancelled\n",
               json_string_value(json_object_get(j, "state")), fmt_exit(j, ex, sizeof(ex)),
               geti(j, "ntasks"), geti(j, "pending") + queued, geti(j, "running") - queued,
               geti(j, "done"), geti(j, "failed"), geti(j, "skipped"), geti(j, "cancelled"));
        print_gpu_requests(json_object_get(j, "spec"));
        print_pending(j);
        printf("%6s  %-10s %7s %-12s %5s %6s %10s %13s %13s %13s%s\n", "TASK", "STATE", "ATTEMPT",
               "NODE", "EXIT", "SIGNAL", "RUNTIME", "REQUEST", "ESTIMATE", "PEAK",
               stream ? "  RESTARTS  LAST-EXIT" : "");
        size_t i;
        const json_t *t;
        const json_t *tasks = json_object_get(j, "tasks");
        json_array_foreach(tasks, i, t)
        {
            int64_t s = geti(t, "start_us"), e = geti(t, "end_us");
            /* Only a run that ended has an exit (a cancelled one's report is not awaited). */
            const char *st = json_string_value(json_object_get(t, "state"));
            bool ended = strcmp(st, "done") == 0 || strcmp(st, "failed") == 0;
            char rt[32], tex[24] = "-", sig[24] = "-";
            if (ended) {
                snprintf(tex, sizeof(tex), "%lld", geti(t, "exit"));
                snprintf(sig, sizeof(sig), "%lld", geti(t, "signal"));
            }
            const json_t *req = json_object_get(t, "request"), *est = json_object_get(t, "estimate");
            char ureq[32], uest[32], upeak[32];
            printf("%6lld  %-10s %7lld %-12.12s %5s %6s %10s %13s %13s %13s", geti(t, "task"),
                   json_string_value(json_object_get(t, "state")), geti(t, "attempt"),
                   json_string_value(json_object_get(t, "node")), tex, sig,
                   fmt_ms(s >= 0 && e >= 0 ? e - s : -1, rt, sizeof(rt)),
                   fmt_use(json_object_get(req, "cpu"), json_object_get(req, "mem"), ureq,
                           sizeof(ureq)),
                   fmt_use(json_object_get(est, "cpu"), json_object_get(est, "mem"), uest,
                           sizeof(uest)),
                   fmt_use(json_object_get(t, "cpu_peak"), json_object_get(t, "rss_peak"), upeak,
                           sizeof(upeak)));
            if (stream)
                print_stream_task(t);
            printf("%s\n", json_is_true(json_object_get(t, "oom")) ? "  (out of memory)" : "");
            print_launch_error(t);
        }
        long long shown = (long long)json_array_size(tasks), matching = geti(j, "tasks_matching");
        if (shown < matching) {
            char a[32], b[32];
            printf("showing %s of %s %stasks; --all / --tasks A:B / --task-state S to see others\n",
                   fmt_count(shown, a, sizeof(a)), fmt_count(matching, b, sizeof(b)),
                   q.state ? "matching " : "");
        }
    }
    json_decref(j);
    return CLI_OK;
}

int cmd_cancel(int argc, char **argv)
{
    struct client_opts o;
    long long id;
    int rc = id_verb(argc, argv,
                     "usage: hrm cancel ID [options]\n\nStops a job: running tasks get SIGTERM "
                     "(SIGKILL 2 s later), pending ones never start.\n",
                     &o, &id, NULL, NULL);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    json_t *req = hrm_wire_new(HRM_WIRE_CANCEL);
    json_object_set_new(req, "id", json_integer(id));
    json_t *r = one_call(&o, req, &rc);
    if (!r)
        return rc;
    if (o.json)
        print_json(r);
    else
        printf("job %lld %s\n", id, json_string_value(json_object_get(r, "state")));
    json_decref(r);
    return CLI_OK;
}

/* Polling of `hrm logs --follow` when nothing new came: from 100 ms up to 1 s. */
#define FOLLOW_MIN_S 0.1
#define FOLLOW_MAX_S 1.0

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static bool task_ended(const char *state)
{
    return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
           strcmp(state, "skipped") == 0 || strcmp(state, "cancelled") == 0;
}

/* Writes a logs_data chunk (base64) to stdout as raw bytes; false if it is not base64. */
static bool write_chunk(const json_t *r)
{
    const json_t *c = json_object_get(r, "chunk");
    size_t len = json_string_length(c), n = 0;
    unsigned char *bin = hrm_alloc(len / 4 * 3 + 3);
    bool ok = sodium_base642bin(bin, len / 4 * 3 + 3, json_string_value(c), len, NULL, &n, NULL,
                                sodium_base64_VARIANT_ORIGINAL) == 0;
    if (ok)
        fwrite(bin, 1, n, stdout);
    hrm_free(bin);
    return ok;
}

/*
 * Reads a task's output in chunks from offset 0 (any size, any bytes) and
 * writes it to stdout as is.  With follow, it polls for more until the task
 * has ended and everything is read, then exits with the task's code.
 */
static int logs_stream(struct client *c, const struct client_opts *o, long long id,
                       long long task, const struct logs_flags *lf)
{
    long long offset = 0, attempt = 0;
    double delay = FOLLOW_MIN_S;
    bool waiting_said = false;
    for (;;) {
        json_t *req = hrm_wire_new(HRM_WIRE_LOGS);
        json_object_set_new(req, "id", json_integer(id));
        json_object_set_new(req, "task", json_integer(task));
        json_object_set_new(req, "stream", json_string(lf->err ? "err" : "out"));
        json_object_set_new(req, "offset", json_integer(offset));
        json_object_set_new(req, "max", json_integer(HRM_LOGS_CHUNK_MAX));
        int rc;
        json_t *r = client_call(c, req, &rc);
        json_decref(req);
        if (!r)
            return rc;
        const char *e = json_string_value(json_object_get(r, "error"));
        char state[16] = "";
        snprintf(state, sizeof(state), "%s", json_string_value(json_object_get(r, "state")) ?: "");
        long long a = json_integer_value(json_object_get(r, "attempt"));
        bool got = false, eof = true;
        if (e && lf->follow && state[0] && !task_ended(state)) {
            /* Its node is down or silent: the task runs again elsewhere once the master notices. */
            if (!waiting_said)
                fprintf(stderr, "hrm logs: %s; waiting for the task to run again\n", e);
            waiting_said = true;
            json_decref(r);
            sleep_s(FOLLOW_MAX_S);
            continue;
        }
        if (e) {
            fprintf(stderr, "hrm logs: %s\n", e);
            json_decref(r);
            return CLI_FAIL;
        }
        if (o->json) {
            char *s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
            printf("%s\n", s);
            free(s);
        }
        if (!json_object_get(r, "chunk") && json_object_get(r, "data")) {
            /* An older agent: the end of the output as text, all it can give (no --follow). */
            const json_t *d = json_object_get(r, "data");
            if (!o->json)
                fwrite(json_string_value(d), 1, json_string_length(d), stdout);
            json_decref(r);
            return CLI_OK;
        } else if (json_is_false(json_object_get(r, "started"))) {
            if (!lf->follow) {
                if (task_ended(state))
                    fprintf(stderr, "hrm logs: task %lld.%lld never ran (%s)\n", id, task, state);
                else
                    fprintf(stderr, "hrm logs: task %lld.%lld has not started yet\n", id, task);
                json_decref(r);
                return CLI_FAIL;
            }
        } else if (attempt && a != attempt) {
            fprintf(stderr, "hrm logs: task %lld.%lld runs again (attempt %lld): its output "
                    "follows from the start\n", id, task, a);
            offset = 0;
            eof = false;
        } else {
            long long next = json_integer_value(json_object_get(r, "next"));
            if (!o->json && !write_chunk(r)) {
                fprintf(stderr, "hrm logs: the master sent a chunk that is not base64\n");
                json_decref(r);
                return CLI_FAIL;
            }
            got = next != offset;
            offset = next;
            eof = json_is_true(json_object_get(r, "eof"));
        }
        if (a)
            attempt = a;
        bool running = json_is_true(json_object_get(r, "running"));
        long long code = json_integer_value(json_object_get(r, "exit"));
        json_decref(r);
        if (!eof || got) {
            delay = FOLLOW_MIN_S;
            if (!eof)
                continue;
        }
        if (!lf->follow)
            return CLI_OK;
        if (!running && task_ended(state)) {
            fflush(stdout);
            fprintf(stderr, "task %lld.%lld %s (exit %lld)\n", id, task, state, code);
            return strcmp(state, "done") == 0 ? 0 : code > 0 && code < 256 ? (int)code : 1;
        }
        fflush(stdout);
        sleep_s(delay);
        delay = delay * 2 < FOLLOW_MAX_S ? delay * 2 : FOLLOW_MAX_S;
    }
}

int cmd_logs(int argc, char **argv)
{
    struct client_opts o;
    long long id, task = 0;
    struct logs_flags lf = {false, false};
    int rc = id_verb(argc, argv,
                     "usage: hrm logs ID [--task N] [--err] [--follow] [options]\n\n"
                     "Prints what task N of job ID wrote to stdout, from its node, byte for byte.\n"
                     "  --task N        the task's index in the job (default 0)\n"
                     "  --err           its stderr instead of its stdout\n"
                     "  --follow        keep printing new output until the task ends, then exit\n"
                     "                  with its code (0 done, 128+N for signal N, 143 cancelled)\n"
                     "  --json          one JSON object per chunk (base64 \"chunk\") instead\n",
                     &o, &id, &task, &lf);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    struct client *c = client_open(&o);
    if (!c)
        return CLI_FAIL;
    rc = logs_stream(c, &o, id, task, &lf);
    fflush(stdout);
    client_close(c);
    return rc;
}

/* A verb with only the common options: 0 to go on, -1 after --help, CLI_USAGE.  usage
 * is the help text before the options; its first line is what a mistake prints. */
static int plain_verb(int argc, char **argv, const char *usage, struct client_opts *o)
{
    static const struct option opts[] = {CLIENT_LONG_OPTS, {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = verb_getopt(argc, argv, "h", opts, o)) != -1) {
        if (c == VERB_BAD_VALUE)
            return CLI_USAGE;
        if (c == 'h') {
            printf("%s\noptions:\n" CLIENT_OPTS_HELP, usage);
            return -1;
        }
        fprintf(stderr, "%.*s\n", (int)strcspn(usage, "\n"), usage);
        return CLI_USAGE;
    }
    return 0;
}

/* The GPUs nodes described at registration (NVML's, or virtual ones), under the table. */
static void print_node_gpus(const json_t *nodes)
{
    bool header = false;
    size_t i, g;
    const json_t *n, *gpu;
    json_array_foreach(nodes, i, n)
    {
        json_array_foreach(json_object_get(n, "gpu_list"), g, gpu)
        {
            if (!header)
                printf("\n%-12s %3s %-40s %-24s %9s %4s\n", "NODE", "GPU", "UUID", "NAME", "MEM",
                       "NUMA");
            header = true;
            char mem[32];
            const char *uuid = json_string_value(json_object_get(gpu, "uuid"));
            hrm_format_size(json_integer_value(json_object_get(gpu, "mem")), mem, sizeof(mem));
            printf("%-12.12s %3lld %-40.40s %-24.24s %9s %4lld\n",
                   json_string_value(json_object_get(n, "name")),
                   (long long)json_integer_value(json_object_get(gpu, "index")),
                   uuid && *uuid ? uuid : "-", json_string_value(json_object_get(gpu, "name")),
                   mem, (long long)json_integer_value(json_object_get(gpu, "numa")));
        }
    }
}

/* Under a node whose GPUs hold tasks: "  GPU shares held: 0.5 1 0" (one per GPU). */
static void print_gpu_shares(const json_t *shares)
{
    size_t g;
    const json_t *v;
    bool any = false;
    json_array_foreach(shares, g, v) any |= json_integer_value(v) > 0;
    if (!any)
        return;
    printf("  GPU shares held:");
    json_array_foreach(shares, g, v) printf(" %g", (double)json_integer_value(v) / 1000.0);
    printf("\n");
}

/* hrm-shared: what the scheduler instances' commits came to (hrm stats has every counter). */
static void print_shared_footer(const json_t *s)
{
    if (!s)
        return;
    printf("shared state: %lld claims, %lld committed, %lld conflicts, %lld retries\n",
           (long long)json_integer_value(json_object_get(s, "claims")),
           (long long)json_integer_value(json_object_get(s, "committed")),
           (long long)json_integer_value(json_object_get(s, "conflicts")),
           (long long)json_integer_value(json_object_get(s, "retries")));
}

/* hrm nodes and hrm stats: only the common options (usage as plain_verb takes it), no argument,
 * and the master's reply to a nodes request; NULL with *rc the exit status (CLI_OK after --help)
 * after printing why. */
static json_t *nodes_reply(int argc, char **argv, const char *usage, struct client_opts *o,
                           int *rc)
{
    client_opts_init(o);
    int v = plain_verb(argc, argv, usage, o);
    if (v) {
        *rc = v < 0 ? CLI_OK : v;
        return NULL;
    }
    if (optind != argc) {
        fprintf(stderr, "%.*s\n", (int)strcspn(usage, "\n"), usage);
        *rc = CLI_USAGE;
        return NULL;
    }
    return one_call(o, hrm_wire_new(HRM_WIRE_NODES), rc);
}

int cmd_nodes(int argc, char **argv)
{
    struct client_opts o;
    static const char usage[] =
        "usage: hrm nodes [options]\n\nLists the nodes: capacity, what is free, load.\n";
    int rc;
    json_t *r = nodes_reply(argc, argv, usage, &o, &rc);
    if (!r)
        return rc;
    if (!o.json)
        cli_escape_strings(r); /* names are the submitter's text */
    const json_t *nodes = json_object_get(r, "nodes");
    if (o.json) {
        print_json(nodes);
    } else {
        printf("%-12s %-6s %-5s %9s %11s %9s %6s %6s %6s %-6s\n", "NODE", "RACK", "STATE", "CPUS",
               "MEM", "GPUS", "TASKS", "QUEUED", "LOAD", "CGROUP");
        size_t i;
        const json_t *n;
        json_array_foreach(nodes, i, n)
        {
            char mem[32], memf[32], cpus[32], gpus[32];
            hrm_format_size(json_integer_value(json_object_get(n, "mem")), mem, sizeof(mem));
            hrm_format_size(json_integer_value(json_object_get(n, "mem_free")), memf, sizeof(memf));
            (void)memf;
            snprintf(cpus, sizeof(cpus), "%.1f/%lld",
                     (double)json_integer_value(json_object_get(n, "cpu_free")) / 1000.0,
                     (long long)json_integer_value(json_object_get(n, "cpus")));
            snprintf(gpus, sizeof(gpus), "%lld/%lld",
                     (long long)json_integer_value(json_object_get(n, "gpu_free")),
                     (long long)json_integer_value(json_object_get(n, "gpus")));
            /* Tasks waiting in the node's execution queues (distributed scheduling). */
            char queued[24] = "-";
            if (json_object_get(n, "queued"))
                snprintf(queued, sizeof(queued), "%lld",
                         (long long)json_integer_value(json_object_get(n, "queued")));
            printf("%-12.12s %-6.6s %-5s %9s %11s %9s %6lld %6s %6.2f %-6s\n",
                   json_string_value(json_object_get(n, "name")),
                   json_string_value(json_object_get(n, "rack")),
                   json_string_value(json_object_get(n, "state")), cpus, mem, gpus,
                   (long long)json_integer_value(json_object_get(n, "tasks")), queued,
                   json_number_value(json_object_get(n, "load")),
                   json_string_value(json_object_get(n, "cgroup")));
            print_gpu_shares(json_object_get(n, "gpu_shares"));
        }
        printf("(CPUS and GPUS: free/total)\n");
        print_node_gpus(nodes);
        cli_print_nodes_perf(nodes);
        print_shared_footer(json_object_get(r, "shared"));
    }
    json_decref(r);
    return CLI_OK;
}

int cmd_stats(int argc, char **argv)
{
    struct client_opts o;
    static const char usage[] =
        "usage: hrm stats [options]\n\nThe master's scheduling counters.  With policy hrm-shared:\n"
        "transactions of the scheduler instances, claims, commits, conflicts (stale: under\n"
        "strict validation, on a node that still fitted), retries (claims of tasks that\n"
        "conflicted before), lock waits, snapshots sent, launches the master refused (the\n"
        "task's job ended meanwhile) and protocol errors (messages refused).\n";
    int rc;
    json_t *r = nodes_reply(argc, argv, usage, &o, &rc);
    if (!r)
        return rc;
    json_t *shared = json_object_get(r, "shared");
    if (o.json) {
        json_t *out = json_object();
        json_object_set(out, "shared", shared ? shared : json_null());
        print_json(out);
        json_decref(out);
    } else if (!shared) {
        printf("no scheduling counters: the master's policy is not hrm-shared\n");
    } else {
        const char *k;
        json_t *val;
        json_object_foreach(shared, k, val) printf("%-18s %lld\n", k,
                                                   (long long)json_integer_value(val));
    }
    json_decref(r);
    return CLI_OK;
}

/* ---- raw: protocol debugging and the malformed-message tests ---- */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = hrm_alloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = hrm_realloc(buf, cap *= 2);
    }
    if (f != stdin)
        fclose(f);
    *len = n;
    return buf;
}

/* @lines:FILE: every line is sent first (pipelined), then as many replies are read; 0, or -1
 * when one could not be sent or the replies stopped for timeout_s. */
static int raw_lines(struct client *cl, const char *frame, const char *path, double timeout_s)
{
    size_t len, sent = 0;
    char *text = read_all(path, &len);
    if (!text) {
        fprintf(stderr, "hrm raw: %s: cannot read\n", path);
        return -1;
    }
    for (size_t a = 0; a < len;) {
        size_t b = a;
        while (b < len && text[b] != '\n')
            b++;
        if (b > a) {
            if (client_send_raw(cl, text + a, b - a) < 0) {
                fprintf(stderr, "hrm raw: %s: cannot send line %zu\n", path, sent + 1);
                hrm_free(text);
                return -1;
            }
            sent++;
        }
        a = b + 1;
    }
    hrm_free(text);
    for (size_t got = 0; got < sent; got++) {
        json_t *r = client_recv(cl, timeout_s);
        if (!r) {
            printf("%s: no reply (%zu of %zu)\n", frame, got, sent);
            return -1;
        }
        char *s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
        printf("%s: %s\n", frame, s);
        fflush(stdout); /* a test reads the replies while more are due */
        free(s);
        json_decref(r);
    }
    return 0;
}

int cmd_raw(int argc, char **argv)
{
    struct client_opts o;
    client_opts_init(&o);
    o.timeout_s = 5;
    static const char usage[] =
        "usage: hrm raw [options] FRAME...\n\n"
        "Sends each FRAME to the master as one message, as is, and prints the reply\n"
        "(one line each).  FRAME is a file, '-' (stdin), @empty (a zero-length frame),\n"
        "@big:N (N bytes of 'x') or @lines:FILE (each line of FILE a frame, all sent\n"
        "before the replies are read, as many as lines, in the order they come: waits\n"
        "answered when their job ends).  --timeout: seconds without a reply before\n"
        "giving up (default 5).  For protocol debugging and tests.\n"
        "exit status: 0 every frame got a reply, 1 otherwise\n";
    int v = plain_verb(argc, argv, usage, &o);
    if (v)
        return v < 0 ? CLI_OK : v;
    if (optind >= argc) {
        fprintf(stderr, "usage: hrm raw [options] FRAME...\n");
        return CLI_USAGE;
    }
    struct client *cl = client_open(&o);
    if (!cl)
        return CLI_FAIL;
    int rc = CLI_OK;
    for (int i = optind; i < argc; i++) {
        size_t len = 0;
        char *buf;
        if (strncmp(argv[i], "@lines:", 7) == 0) {
            rc = raw_lines(cl, argv[i], argv[i] + 7, o.timeout_s) < 0 ? CLI_FAIL : rc;
            continue;
        }
        if (strcmp(argv[i], "@empty") == 0) {
            buf = hrm_alloc(1);
        } else if (strncmp(argv[i], "@big:", 5) == 0) {
            len = (size_t)strtoull(argv[i] + 5, NULL, 10);
            buf = hrm_alloc(len + 1);
            memset(buf, 'x', len);
        } else if (!(buf = read_all(argv[i], &len))) {
            fprintf(stderr, "hrm raw: %s: cannot read\n", argv[i]);
            rc = CLI_FAIL;
            continue;
        }
        json_t *r = NULL;
        int sent = client_send_raw(cl, buf, len);
        hrm_free(buf);
        if (sent == 0)
            r = client_recv(cl, o.timeout_s);
        if (!r) {
            printf("%s: no reply\n", argv[i]);
            rc = CLI_FAIL;
            continue;
        }
        char *s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
        printf("%s: %s\n", argv[i], s);
        free(s);
        json_decref(r);
    }
    client_close(cl);
    return rc;
}
