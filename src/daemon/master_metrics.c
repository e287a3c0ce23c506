/* GET /metrics: the master's figures in the Prometheus text format (docs/runtime.md, "Metrics").
 * Gauges are read from the job and node tables when the text is rendered; counters and
 * histograms come from struct master_counters, fed by the hooks below on the master's loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "master_private.h"

const double metrics_latency_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                         0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5, 10};
const int metrics_latency_nbounds = sizeof(metrics_latency_bounds) / sizeof(double);
const double metrics_wait_bounds[] = {0.05, 0.1, 0.25, 0.5, 1,   2.5,  5,    10,
                                      30,   60,  120,  300, 900, 1800, 3600, 14400};
const int metrics_wait_nbounds = sizeof(metrics_wait_bounds) / sizeof(double);
_Static_assert(sizeof(metrics_latency_bounds) / sizeof(double) <= METRICS_BUCKETS_MAX, "buckets");
_Static_assert(sizeof(metrics_wait_bounds) / sizeof(double) <= METRICS_BUCKETS_MAX, "buckets");

/* ---- the hooks ---- */

void metrics_hist_observe(struct metrics_hist *h, const double *bounds, int nbounds, double v)
{
    int i = 0;
    while (i < nbounds && v > bounds[i]) /* a bucket counts values <= its bound ("le") */
        i++;
    h->n[i]++;
    h->count++;
    h->sum += v;
}

void metrics_message(struct master_counters *c, int type)
{
    if (type >= 0 && type < HRM_WIRE_COUNT)
        c->msgs_in[type]++;
}

void metrics_passes(struct master_counters *c, int64_t npasses, int64_t elapsed_us)
{
    for (int64_t i = 0; i < npasses; i++)
        metrics_hist_observe(&c->pass_seconds, metrics_latency_bounds, metrics_latency_nbounds,
                             (double)elapsed_us / 1e6 / (double)npasses);
}

void metrics_commit(struct master_counters *c, int64_t elapsed_us)
{
    metrics_hist_observe(&c->commit_seconds, metrics_latency_bounds, metrics_latency_nbounds,
                         (double)elapsed_us / 1e6);
}

/* The wait histogram of a queue: its own among the first METRICS_QUEUES_MAX - 1 queues seen,
 * else the shared last one, so that a client inventing queue names cannot grow the master. */
static struct metrics_hist *queue_wait(struct master_counters *c, const char *queue)
{
    for (int32_t i = 0; i < c->nwaits; i++)
        if (strcmp(c->waits[i].queue, queue) == 0)
            return &c->waits[i].wait;
    int32_t i = c->nwaits < METRICS_QUEUES_MAX - 1 ? c->nwaits++ : METRICS_QUEUES_MAX - 1;
    if (i == METRICS_QUEUES_MAX - 1) {
        if (c->nwaits < METRICS_QUEUES_MAX)
            c->nwaits = METRICS_QUEUES_MAX;
        queue = "(other)";
    }
    snprintf(c->waits[i].queue, sizeof(c->waits[i].queue), "%s", queue);
    return &c->waits[i].wait;
}

void metrics_placed(struct master_counters *c, const char *queue, bool first, int64_t wait_us)
{
    c->decisions++;
    if (first)
        metrics_hist_observe(queue_wait(c, queue), metrics_wait_bounds, metrics_wait_nbounds,
                             wait_us > 0 ? (double)wait_us / 1e6 : 0.0);
}

void metrics_usage_sample(struct master_counters *c, bool node, bool ok)
{
    uint64_t *n = node ? (ok ? &c->usage_node_ok : &c->usage_node_bad)
                       : (ok ? &c->usage_task_ok : &c->usage_task_bad);
    (*n)++;
}

/* ---- rendering ---- */

static void head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value, escaped as the text format wants (backslash, quote, newline). */
static void label(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            fprintf(f, "\\%c", *v);
        else if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

/* A sample value: whole numbers (bytes, counts) in full, others to 9 significant digits. */
static void value(FILE *f, double v)
{
    if (v == (double)(long long)v && v > -1e18 && v < 1e18)
        fprintf(f, " %lld\n", (long long)v);
    else
        fprintf(f, " %.9g\n", v);
}

/* One histogram's series; lname/lvalue: one label (NULL: none). */
static void hist(FILE *f, const char *name, const char *lname, const char *lvalue,
                 const struct metrics_hist *h, const double *bounds, int nbounds)
{
    uint64_t cum = 0;
    for (int i = 0; i <= nbounds; i++) {
        cum += h->n[i];
        fprintf(f, "%s_bucket{", name);
        if (lname) {
            fprintf(f, "%s=\"", lname);
            label(f, lvalue);
            fputs("\",", f);
        }
        if (i < nbounds)
            fprintf(f, "le=\"%g\"} %llu\n", bounds[i], (unsigned long long)cum);
        else
            fprintf(f, "le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    }
    const char *suffix[2] = {"_sum", "_count"};
    for (int k = 0; k < 2; k++) {
        fprintf(f, "%s%s", name, suffix[k]);
        if (lname) {
            fprintf(f, "{%s=\"", lname);
            label(f, lvalue);
            fputs("\"}", f);
        }
        if (k == 0)
            value(f, h->sum);
        else
            fprintf(f, " %llu\n", (unsigned long long)h->count);
    }
}

/* Per queue seen in the job table: jobs by state and the tasks waiting to be placed. */
struct queue_row {
    const char *queue;
    int64_t jobs[HRM_JOB_CANCELLED + 1];
    int64_t pending;
};

static void render_jobs(FILE *f, const struct master *m)
{
    int64_t tasks[RTASK_NSTATES] = {0}, queued = 0;
    struct queue_row *rows = NULL;
    size_t nrows = 0, cap = 0;
    for (size_t i = 0; i < m->njobs; i++) {
        const struct rjob *j = m->jobs[i];
        if (!j)
            continue;
        for (int s = 0; s < RTASK_NSTATES; s++)
            tasks[s] += j->count.state[s];
        queued += j->count.queued;
        size_t r = 0;
        while (r < nrows && strcmp(rows[r].queue, j->queue) != 0)
            r++;
        if (r == nrows) {
            HRM_GROW(rows, cap, nrows + 1);
            rows[nrows++] = (struct queue_row){.queue = j->queue};
        }
        if (j->state >= 0 && j->state <= HRM_JOB_CANCELLED)
            rows[r].jobs[j->state]++;
        if (jobs_live(j))
            rows[r].pending += j->count.state[HRM_RTASK_PENDING];
    }
    head(f, "hrm_tasks", "gauge",
         "Tasks of the job table by state (queued: placed, waiting in a node's queue; running "
         "excludes them).");
    for (int s = 0; s < RTASK_NSTATES; s++) {
        int64_t n = tasks[s] - (s == HRM_RTASK_RUNNING ? queued : 0);
        fprintf(f, "hrm_tasks{state=\"%s\"} %lld\n", hrm_rtask_state_name(s), (long long)n);
    }
    fprintf(f, "hrm_tasks{state=\"queued\"} %lld\n", (long long)queued);
    head(f, "hrm_jobs", "gauge", "Jobs of the job table by state and queue.");
    for (size_t r = 0; r < nrows; r++)
        for (int s = 0; s <= HRM_JOB_CANCELLED; s++) {
            fputs("hrm_jobs{queue=\"", f);
            label(f, rows[r].queue);
            fprintf(f, "\",state=\"%s\"} %lld\n", hrm_job_state_name(s),
                    (long long)rows[r].jobs[s]);
        }
    head(f, "hrm_queue_pending_tasks", "gauge",
         "Tasks of unfinished jobs waiting to be placed, by queue (the queue's length).");
    for (size_t r = 0; r < nrows; r++) {
        fputs("hrm_queue_pending_tasks{queue=\"", f);
        label(f, rows[r].queue);
        fprintf(f, "\"} %lld\n", (long long)rows[r].pending);
    }
    hrm_free(rows);
}

/* One gauge per node: value(m, n). */
typedef double (*node_value_f)(const struct master *m, const struct rnode *rn);

static void node_gauge(FILE *f, const struct master *m, const char *name, const char *help,
                       node_value_f get)
{
    head(f, name, "gauge", help);
    for (int32_t n = 0; n < m->nnodes; n++) {
        fprintf(f, "%s{node=\"", name);
        label(f, m->nodes[n].name);
        fputc('"', f);
        fputc('}', f);
        value(f, get(m, &m->nodes[n]));
    }
}

static double v_cores(const struct master *m, const struct rnode *rn)
{
    return rn->cores;
}
static double v_cores_alloc(const struct master *m, const struct rnode *rn)
{
    return (double)rn->cpu_used / 1000.0;
}
static double v_mem(const struct master *m, const struct rnode *rn)
{
    return (double)rn->mem;
}
static double v_mem_alloc(const struct master *m, const struct rnode *rn)
{
    return (double)rn->mem_used;
}
static double v_gpus(const struct master *m, const struct rnode *rn)
{
    return rn->gpus;
}
static double v_gpus_alloc(const struct master *m, const struct rnode *rn)
{
    int64_t milli = 0;
    for (int32_t g = 0; g < rn->gpus && g < HRM_MAX_GPUS_PER_NODE; g++)
        milli += rn->gpu_milli[g];
    return (double)milli / 1000.0;
}
static double v_tasks(const struct master *m, const struct rnode *rn)
{
    return rn->nstarted;
}
static double v_heartbeat_age(const struct master *m, const struct rnode *rn)
{
    return rn->last_seen_us ? (double)(hrm_mono_us() - rn->last_seen_us) / 1e6 : -1.0;
}

static void render_nodes(FILE *f, const struct master *m)
{
    head(f, "hrm_node_up", "gauge", "1 when the node's agent is registered and heard from.");
    for (int32_t n = 0; n < m->nnodes; n++) {
        fputs("hrm_node_up{node=\"", f);
        label(f, m->nodes[n].name);
        fputs("\",rack=\"", f);
        label(f, m->nodes[n].rack);
        fprintf(f, "\"} %d\n", m->nodes[n].up ? 1 : 0);
    }
    node_gauge(f, m, "hrm_node_cpu_cores", "CPU cores the node declared.", v_cores);
    node_gauge(f, m, "hrm_node_cpu_allocated_cores",
               "CPU cores the requests of its started tasks hold.", v_cores_alloc);
    node_gauge(f, m, "hrm_node_memory_bytes", "Memory the node declared.", v_mem);
    node_gauge(f, m, "hrm_node_memory_allocated_bytes",
               "Memory the requests of its started tasks hold.", v_mem_alloc);
    node_gauge(f, m, "hrm_node_gpus", "GPUs the node declared.", v_gpus);
    node_gauge(f, m, "hrm_node_gpus_allocated",
               "GPUs its started tasks hold, shares summed (two halves of one GPU count 1).",
               v_gpus_alloc);
    node_gauge(f, m, "hrm_node_tasks_running", "Tasks started on the node.", v_tasks);
    node_gauge(f, m, "hrm_node_heartbeat_age_seconds",
               "Time since the node's agent was last heard from (-1: never).", v_heartbeat_age);
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
    head(f, name, "counter", help);
    fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void render_sched(FILE *f, const struct master *m)
{
    const struct master_counters *c = &m->counters;
    counter(f, "hrm_sched_decisions_total",
            "Tasks placed on a node by the scheduler (launched, or queued at the node).",
            c->decisions);
    counter(f, "hrm_sched_passes_total", "Scheduling passes run in the master.",
            (uint64_t)m->sched.passes);
    counter(f, "hrm_sched_rebuilds_total", "Rebuilds of the master's central scheduler.",
            (uint64_t)m->sched.rebuilds);
    counter(f, "hrm_sched_passes_bounded_total",
            "Scheduling passes that ended at the master's --max-pass-starts (the rest placed "
            "by the next pass, after the clients' requests).",
            (uint64_t)m->sched.bounded_passes);
    head(f, "hrm_sched_pass_duration_seconds", "histogram",
         "Time one scheduling pass took in the master.");
    hist(f, "hrm_sched_pass_duration_seconds", NULL, NULL, &c->pass_seconds,
         metrics_latency_bounds, metrics_latency_nbounds);
    head(f, "hrm_task_wait_seconds", "histogram",
         "Time from a job's submission to its task's first placement, by queue.");
    for (int32_t i = 0; i < c->nwaits; i++)
        hist(f, "hrm_task_wait_seconds", "queue", c->waits[i].queue, &c->waits[i].wait,
             metrics_wait_bounds, metrics_wait_nbounds);
    /* Shared-state scheduling's commit role (hrm-shared); zero under other policies. */
    json_t *sh = dist_nodes_extra(m);
    static const char *const shared[][3] = {
        {"hrm_shared_transactions_total", "txns", "Shared-state transactions (one job each)."},
        {"hrm_shared_claims_total", "claims", "Shared-state claims validated."},
        {"hrm_shared_commits_total", "committed", "Shared-state claims committed."},
        {"hrm_shared_commit_conflicts_total", "conflicts",
         "Shared-state claims refused by validation (commit conflicts)."},
        {"hrm_shared_retries_total", "retries",
         "Shared-state claims of a task that conflicted before."},
    };
    for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
        counter(f, shared[i][0], shared[i][2],
                (uint64_t)json_integer_value(json_object_get(sh, shared[i][1])));
    json_decref(sh);
    counter(f, "hrm_negotiator_moves_total",
            "Queued tasks the negotiator moved from one node to another (dhrm-nego).",
            c->negotiator_moves);
    counter(f, "hrm_probes_relayed_total",
            "Probes, their releases and their replies the master passed between a scheduler "
            "instance and a node (those that go straight from hrm sched to an agent are not).",
            c->probes_relayed);
}

static void render_runtime(FILE *f, const struct master *m)
{
    const struct master_counters *c = &m->counters;
    head(f, "hrm_usage_samples_total", "counter",
         "Usage samples from the agents, by kind (task, node) and result (accepted, rejected).");
    const char *kinds[2] = {"task", "node"}, *results[2] = {"accepted", "rejected"};
    uint64_t v[2][2] = {{c->usage_task_ok, c->usage_task_bad}, {c->usage_node_ok, c->usage_node_bad}};
    for (int k = 0; k < 2; k++)
        for (int r = 0; r < 2; r++)
            fprintf(f, "hrm_usage_samples_total{kind=\"%s\",result=\"%s\"} %llu\n", kinds[k],
                    results[r], (unsigned long long)v[k][r]);
    head(f, "hrm_store_commit_duration_seconds", "histogram",
         "Time to commit one store transaction (a turn of the master that wrote).");
    hist(f, "hrm_store_commit_duration_seconds", NULL, NULL, &c->commit_seconds,
         metrics_latency_bounds, metrics_latency_nbounds);
    /* Rows against statements: how well the store's per-commit batching groups the turn's
     * task rows and events (one multi-row INSERT for many rows). */
    struct hrm_store_stats st;
    hrm_store_stats(m->store, &st);
    head(f, "hrm_store_rows_total", "counter", "Task rows and events the master wrote.");
    fprintf(f, "hrm_store_rows_total %lld\n", st.rows);
    head(f, "hrm_store_statements_total", "counter",
         "Data statements the store ran (INSERT, UPDATE, DELETE; a multi-row INSERT counts once).");
    fprintf(f, "hrm_store_statements_total %lld\n", st.statements);
    head(f, "hrm_store_commits_total", "counter", "Store transactions committed.");
    fprintf(f, "hrm_store_commits_total %lld\n", st.commits);
    head(f, "hrm_store_checkpoints_total", "counter",
         "WAL checkpoints, each run after a turn's messages have left.");
    fprintf(f, "hrm_store_checkpoints_total %lld\n", st.checkpoints);
    head(f, "hrm_messages_received_total", "counter",
         "Messages the master handled, by type (a batch's items each count).");
    for (int t = 0; t < HRM_WIRE_COUNT; t++)
        if (c->msgs_in[t])
            fprintf(f, "hrm_messages_received_total{type=\"%s\"} %llu\n", hrm_wire_name(t),
                    (unsigned long long)c->msgs_in[t]);
    head(f, "hrm_master_start_time_seconds", "gauge",
         "When this master process started (Unix time).");
    fprintf(f, "hrm_master_start_time_seconds %.3f\n",
            (double)(master_now_us() - (hrm_mono_us() - m->start_mono_us)) / 1e6);
}

char *master_metrics_render(const struct master *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        render_jobs(f, m);
        render_nodes(f, m);
        render_sched(f, m);
        render_runtime(f, m);
    }
    if (!f || fclose(f) != 0 || !text) { /* out of memory: as every allocation (alloc.h) */
        fprintf(stderr, "hrm: out of memory (rendering the metrics)\n");
        abort();
    }
    return text;
}
