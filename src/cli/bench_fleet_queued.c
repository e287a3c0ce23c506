/* hrm bench fleet --queued: placements/s, arrival cost, master CPU and memory against the number of tasks queued, while jobs keep arriving. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_fleet.h"
#include "hrm/alloc.h"
#include "hrm/procstat.h"
#include "hrm/wire.h"

/*
 * One point of the series (docs/benchmarks.md, "Fleet", "Growth with the queue"):
 * - the backlog: N one-CPU tasks submitted at once in jobs of --per-job tasks (one job of N
 *   when --per-job >= N); submit_s is the time until the master acknowledged them all;
 * - then a window of --window seconds during which a job of ARRIVAL_TASKS tasks arrives every
 *   ARRIVAL_GAP_S (the arrivals a live cluster has; before the central role grew, each turn
 *   with an arrival rebuilt it over every queued task);
 * - placements_per_s: the rate of the backlog's starts within the window, from the start that
 *   filled the last idle slot (the first pass fills the idle cluster at once) to the start
 *   that halved the backlog or the window's last start: the queue holds N/2 to N tasks
 *   meanwhile;
 * - arrival_ack_p50/p99_ms: from sending an arrival's submission to the master's
 *   acknowledgement, which it sends after the turn that took the job in;
 * - master_cpu_ms_per_1k: the master's CPU in the window per 1,000 placements;
 * - master_rss_mb: the master's peak VmRSS over the window, the backlog in memory.
 * Afterwards every job is cancelled and the next point starts on an idle cluster.
 */

#define ARRIVAL_TASKS 10
#define ARRIVAL_GAP_S 0.05 /* 20 jobs a second */
#define MAX_ARRIVALS 100000

struct qpoint {
    long long n;
    double submit_s, rate, ack_p50_ms, ack_p99_ms, cpu_ms_per_1k, rss_mb;
};

static long long wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Tasks of the jobs ids[0..n) that started in [from_us, to_us), their starts into out.  Tasks are read page by page in
 * order and a job's reading stops at its first page with no task started (the policies place a
 * job's tasks about in order); two jobs in a row with none end it (jobs are served about in
 * order too), so reading stays proportional to the tasks placed, not to the backlog. */
struct starts {
    long long *us;
    size_t n, cap;
};

static long long started_within(struct client *c, const long long *ids, long long n,
                                long long from_us, long long to_us, struct starts *out)
{
    long long count = 0;
    int idle_jobs = 0;
    for (long long i = 0; i < n && idle_jobs < 2 && !fleet_interrupted; i++) {
        long long any = 0;
        for (long long from = 0; from >= 0;) {
            json_t *r = fleet_call(c, HRM_WIRE_JOB,
                                   json_pack("{s:I, s:I, s:i}", "id", (json_int_t)ids[i], "from",
                                             (json_int_t)from, "limit", 2000));
            json_t *job = json_object_get(r, "job");
            long long page = 0;
            size_t k;
            json_t *t;
            json_array_foreach(json_object_get(job, "tasks"), k, t)
            {
                long long st = json_integer_value(json_object_get(t, "start_us"));
                page += st > 0;
                if (st >= from_us && st < to_us) {
                    HRM_GROW(out->us, out->cap, out->n + 1);
                    out->us[out->n++] = st;
                    count++;
                }
            }
            from = job && page > 0 ? json_integer_value(json_object_get(job, "tasks_next")) : -1;
            any += page;
            json_decref(r);
        }
        idle_jobs = any ? 0 : idle_jobs + 1;
    }
    return count;
}

/* Cancels every job of ids[0..n), pipelined; waits for the answers. */
static void cancel_all(struct client *c, const long long *ids, long long n)
{
    long long sent = 0, got = 0;
    for (long long i = 0; i < n; i++) {
        if (ids[i] <= 0)
            continue;
        json_t *req = hrm_wire_new(HRM_WIRE_CANCEL);
        json_object_set_new(req, "id", json_integer(ids[i]));
        sent += client_send(c, req) >= 0;
        json_decref(req);
    }
    for (double end = fleet_mono_s() + 300; got < sent && fleet_mono_s() < end;) {
        json_t *r = client_recv(c, 0.5);
        got += r != NULL;
        json_decref(r);
    }
}

/* Waits until the master lists no live job. */
static void wait_idle(struct client *c)
{
    for (double end = fleet_mono_s() + 300; fleet_mono_s() < end && !fleet_interrupted;) {
        /* without "all": the unfinished jobs, and the latest finished ones */
        json_t *r = fleet_call(c, HRM_WIRE_JOBS, NULL);
        size_t live = 0, i;
        json_t *j;
        json_array_foreach(json_object_get(r, "jobs"), i, j)
        {
            const char *st = json_string_value(json_object_get(j, "state"));
            live += st && (strcmp(st, "pending") == 0 || strcmp(st, "running") == 0);
        }
        json_decref(r);
        if (live == 0)
            return;
        fleet_nap_s(0.2);
    }
}

/* The window: arrivals every ARRIVAL_GAP_S, their acknowledgement times into ack_us[], their
 * ids into ids[]; the master's peak RSS. */
static long long arrivals(const struct fopts *o, struct client *c, const char *arg,
                          long long *ids, long long *ack_us, long long *nack, long long *rss_kb)
{
    static double sent_at[MAX_ARRIVALS];
    long long first = -1, nsent = 0;
    double start = fleet_mono_s(), next = start, next_rss = start;
    *nack = 0;
    while (!fleet_interrupted) {
        double now = fleet_mono_s();
        bool open = now < start + o->window_s;
        if (!open && (*nack >= nsent || now > start + o->window_s + 60))
            break;
        if (open && now >= next && nsent < MAX_ARRIVALS) {
            json_t *req = hrm_wire_new(HRM_WIRE_SUBMIT);
            json_t *body = fleet_job_req(ARRIVAL_TASKS, "sleep", arg, 1);
            json_object_update(req, body);
            json_decref(body);
            long long id = client_send(c, req);
            json_decref(req);
            if (id >= 0) {
                if (first < 0)
                    first = id;
                sent_at[id - first] = now;
                nsent++;
            }
            next += ARRIVAL_GAP_S;
        }
        if (now >= next_rss) {
            long long rss = hrm_proc_rss_kb(o->master);
            *rss_kb = rss > *rss_kb ? rss : *rss_kb;
            next_rss = now + 0.2;
        }
        json_t *r = client_recv(c, 0.005);
        if (!r)
            continue;
        long long req = json_integer_value(json_object_get(r, "req"));
        const char *type = json_string_value(json_object_get(r, "type"));
        if (type && strcmp(type, "submitted") == 0 && first >= 0 && req >= first &&
            req < first + nsent) {
            ids[*nack] = json_integer_value(json_object_get(r, "id"));
            ack_us[(*nack)++] = (long long)((fleet_mono_s() - sent_at[req - first]) * 1e6);
        }
        json_decref(r);
    }
    return nsent;
}

static int point(const struct fopts *o, struct client *c, long long n, struct qpoint *pt)
{
    long long per_job = o->per_job < n ? o->per_job : n;
    long long njobs = (n + per_job - 1) / per_job, last = n - (njobs - 1) * per_job;
    long long *ids = hrm_calloc((size_t)njobs, sizeof(*ids));
    long long *arr_ids = hrm_calloc(MAX_ARRIVALS, sizeof(*arr_ids));
    long long *ack = hrm_calloc(MAX_ARRIVALS, sizeof(*ack));
    char arg[32];
    snprintf(arg, sizeof(arg), "%.3f", o->task_s);
    int rc = -1;
    double t0 = fleet_mono_s();
    if (fleet_submit_jobs(c, njobs, per_job, last, arg, ids) < njobs) {
        fprintf(stderr, "hrm bench fleet: --queued %lld: not every job was accepted\n", n);
        goto out;
    }
    pt->n = n;
    pt->submit_s = fleet_mono_s() - t0;
    long long rss_kb = 0, nack = 0;
    double cpu0 = fleet_proc_cpu_s(o->master);
    long long w0 = wall_us();
    long long nsent = arrivals(o, c, arg, arr_ids, ack, &nack, &rss_kb);
    double cpu_s = fleet_proc_cpu_s(o->master) - cpu0;
    long long w1 = w0 + (long long)(o->window_s * 1e6);
    struct starts st = {0};
    long long placed = started_within(c, ids, njobs, w0, w1, &st);
    qsort(ack, (size_t)nack, sizeof(*ack), fleet_cmp_ll);
    qsort(st.us, st.n, sizeof(*st.us), fleet_cmp_ll);
    /* From the start that filled every slot (the first pass fills the idle cluster at once)
     * to the one that halved the backlog, or the window's last. */
    long long from = o->agents * o->cpus, to = placed < n / 2 ? placed : n / 2;
    if (from >= to - 1)
        from = 0;
    pt->rate = to - 1 > from ? (double)(to - 1 - from) * 1e6 / (double)(st.us[to - 1] - st.us[from])
                             : 0;
    hrm_free(st.us);
    pt->ack_p50_ms = (double)fleet_pct(ack, nack, 0.5) / 1000;
    pt->ack_p99_ms = (double)fleet_pct(ack, nack, 0.99) / 1000;
    pt->cpu_ms_per_1k = placed > 0 ? cpu_s * 1e6 / (double)placed : 0;
    pt->rss_mb = (double)rss_kb / 1024;
    if (nack < nsent)
        fprintf(stderr, "hrm bench fleet: --queued %lld: %lld of %lld arrivals acknowledged\n", n,
                nack, nsent);
    cancel_all(c, ids, njobs);
    cancel_all(c, arr_ids, nack);
    wait_idle(c);
    rc = 0; /* no start in the window is a figure (0 placements/s), not a failure */
out:
    hrm_free(ids);
    hrm_free(arr_ids);
    hrm_free(ack);
    return rc;
}

int fleet_queued_series(const struct fopts *o, struct client *c)
{
    struct qpoint pts[MAX_QUEUED_POINTS] = {0};
    int rc = 0, npts = 0;
    for (int i = 0; i < o->nqueued && !fleet_interrupted; i++) {
        if (point(o, c, o->queued[i], &pts[npts]) < 0) {
            rc = -1;
            break;
        }
        const struct qpoint *p = &pts[npts++];
        printf("BENCH fleet.queued_%lld.placements_per_s %.0f tasks/s\n", p->n, p->rate);
        printf("BENCH fleet.queued_%lld.ratio %.2f (placements/s over the %lld point's)\n", p->n,
               pts[0].rate > 0 ? p->rate / pts[0].rate : 0, pts[0].n);
        printf("BENCH fleet.queued_%lld.arrival_ack_p50_ms %.1f ms\n", p->n, p->ack_p50_ms);
        printf("BENCH fleet.queued_%lld.arrival_ack_p99_ms %.1f ms\n", p->n, p->ack_p99_ms);
        printf("BENCH fleet.queued_%lld.master_cpu_ms_per_1k %.1f ms\n", p->n, p->cpu_ms_per_1k);
        printf("BENCH fleet.queued_%lld.master_rss_mb %.1f MB\n", p->n, p->rss_mb);
        printf("BENCH fleet.queued_%lld.submit_s %.2f s\n", p->n, p->submit_s);
        fflush(stdout);
    }
    return rc;
}
