/* The master's /metrics text: histograms count values into the right cumulative buckets, the
 * gauges follow the job and node tables, label values are escaped, and queues beyond the cap
 * share one wait histogram. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/master_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"

static struct rjob *job_make(int64_t id, const char *queue, int state, int32_t pending,
                             int32_t running, int32_t done)
{
    struct rjob *j = hrm_calloc(1, sizeof(*j));
    j->id = id;
    snprintf(j->queue, sizeof(j->queue), "%s", queue);
    j->state = state;
    j->ntasks = pending + running + done;
    j->count.state[HRM_RTASK_PENDING] = pending;
    j->count.state[HRM_RTASK_RUNNING] = running;
    j->count.state[HRM_RTASK_DONE] = done;
    return j;
}

static void make(struct master *m)
{
    memset(m, 0, sizeof(*m));
    m->njobs = 3;
    m->jobs = hrm_calloc(3, sizeof(*m->jobs));
    m->jobs[0] = job_make(1, "default", HRM_JOB_DONE, 0, 0, 4);
    m->jobs[1] = job_make(2, "default", HRM_JOB_RUNNING, 2, 3, 1);
    m->jobs[2] = job_make(3, "we\"ird", HRM_JOB_PENDING, 5, 0, 0);
    m->jobs[1]->count.queued = 1;
    m->nnodes = 2;
    m->nodes = hrm_calloc(2, sizeof(*m->nodes));
    snprintf(m->nodes[0].name, NODE_NAME_MAX, "n1");
    snprintf(m->nodes[0].rack, NODE_NAME_MAX, "r1");
    m->nodes[0].up = true;
    m->nodes[0].cores = 4;
    m->nodes[0].cpu_used = 2500;
    m->nodes[0].mem = 8LL << 30;
    m->nodes[0].mem_used = 1LL << 30;
    m->nodes[0].gpus = 2;
    m->nodes[0].gpu_milli[0] = 1000;
    m->nodes[0].gpu_milli[1] = 500;
    m->nodes[0].last_seen_us = hrm_mono_us();
    snprintf(m->nodes[1].name, NODE_NAME_MAX, "n2");
    snprintf(m->nodes[1].rack, NODE_NAME_MAX, "r2");
}

static void drop(struct master *m)
{
    for (size_t k = 0; k < m->njobs; k++)
        hrm_free(m->jobs[k]);
    hrm_free(m->jobs);
    hrm_free(m->nodes);
}

static void expect_line(const char *text, const char *line)
{
    char want[512];
    snprintf(want, sizeof(want), "\n%s\n", line);
    cr_expect(strstr(text, want) != NULL, "no line '%s' in:\n%s", line, text);
}

Test(metricsrt, gauges_follow_the_tables)
{
    struct master m;
    make(&m);
    char *t = master_metrics_render(&m);
    expect_line(t, "hrm_tasks{state=\"pending\"} 7");
    expect_line(t, "hrm_tasks{state=\"running\"} 2");
    expect_line(t, "hrm_tasks{state=\"queued\"} 1");
    expect_line(t, "hrm_tasks{state=\"done\"} 5");
    expect_line(t, "hrm_jobs{queue=\"default\",state=\"done\"} 1");
    expect_line(t, "hrm_jobs{queue=\"default\",state=\"running\"} 1");
    expect_line(t, "hrm_jobs{queue=\"we\\\"ird\",state=\"pending\"} 1");
    expect_line(t, "hrm_queue_pending_tasks{queue=\"default\"} 2");
    expect_line(t, "hrm_queue_pending_tasks{queue=\"we\\\"ird\"} 5");
    expect_line(t, "hrm_node_up{node=\"n1\",rack=\"r1\"} 1");
    expect_line(t, "hrm_node_up{node=\"n2\",rack=\"r2\"} 0");
    expect_line(t, "hrm_node_cpu_cores{node=\"n1\"} 4");
    expect_line(t, "hrm_node_cpu_allocated_cores{node=\"n1\"} 2.5");
    expect_line(t, "hrm_node_memory_allocated_bytes{node=\"n1\"} 1073741824");
    expect_line(t, "hrm_node_gpus_allocated{node=\"n1\"} 1.5");
    expect_line(t, "hrm_node_heartbeat_age_seconds{node=\"n2\"} -1");
    expect_line(t, "# TYPE hrm_sched_decisions_total counter");
    free(t);
    drop(&m);
}

Test(metricsrt, histograms_are_cumulative)
{
    struct master m;
    make(&m);
    metrics_placed(&m.counters, "default", true, 300000);   /* 0.3 s */
    metrics_placed(&m.counters, "default", true, 3000000);  /* 3 s */
    metrics_placed(&m.counters, "default", false, 9000000); /* a retry: no wait */
    metrics_passes(&m.counters, 2, 4000);                   /* 2 ms each */
    metrics_message(&m.counters, HRM_WIRE_SUBMIT);
    metrics_message(&m.counters, HRM_WIRE_SUBMIT);
    metrics_usage_sample(&m.counters, true, false);
    char *t = master_metrics_render(&m);
    expect_line(t, "hrm_sched_decisions_total 3");
    expect_line(t, "hrm_task_wait_seconds_bucket{queue=\"default\",le=\"0.25\"} 0");
    expect_line(t, "hrm_task_wait_seconds_bucket{queue=\"default\",le=\"0.5\"} 1");
    expect_line(t, "hrm_task_wait_seconds_bucket{queue=\"default\",le=\"5\"} 2");
    expect_line(t, "hrm_task_wait_seconds_bucket{queue=\"default\",le=\"+Inf\"} 2");
    expect_line(t, "hrm_task_wait_seconds_count{queue=\"default\"} 2");
    expect_line(t, "hrm_task_wait_seconds_sum{queue=\"default\"} 3.3");
    expect_line(t, "hrm_sched_pass_duration_seconds_bucket{le=\"0.001\"} 0");
    expect_line(t, "hrm_sched_pass_duration_seconds_bucket{le=\"0.0025\"} 2");
    expect_line(t, "hrm_sched_pass_duration_seconds_count 2");
    expect_line(t, "hrm_messages_received_total{type=\"submit\"} 2");
    expect_line(t, "hrm_usage_samples_total{kind=\"node\",result=\"rejected\"} 1");
    expect_line(t, "hrm_usage_samples_total{kind=\"task\",result=\"accepted\"} 0");
    free(t);
    drop(&m);
}

Test(metricsrt, queues_beyond_the_cap_share_one_histogram)
{
    struct master_counters *c = hrm_calloc(1, sizeof(*c));
    char q[32];
    for (int i = 0; i < METRICS_QUEUES_MAX + 5; i++) {
        snprintf(q, sizeof(q), "q%d", i);
        metrics_placed(c, q, true, 1000);
    }
    cr_assert_eq(c->nwaits, METRICS_QUEUES_MAX);
    cr_expect_str_eq(c->waits[METRICS_QUEUES_MAX - 2].queue, "q14");
    cr_expect_str_eq(c->waits[METRICS_QUEUES_MAX - 1].queue, "(other)");
    cr_expect_eq(c->waits[METRICS_QUEUES_MAX - 1].wait.count, 6);
    metrics_placed(c, "q3", true, 1000); /* a known queue keeps its own */
    cr_expect_eq(c->waits[3].wait.count, 2);
    hrm_free(c);
}
