/* execution.task_overhead: the spec reads it, and every simulator holds a task's slot that long
 * beyond its run time, outside the job's ideal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "hrm/metrics.h"
#include "hrm/sim.h"
#include "hrm/spec.h"

#define MS 1000ll

static const char *const spec_head =
    "{\"cluster\": {\"nodes\": [{\"name\": \"n\", \"count\": 1, \"cores\": 1, \"mem\": \"1G\"}]},"
    " \"workload\": {\"jobs\": [{\"name\": \"j\", \"submit\": \"0s\", \"task\": {\"cpu\": 1, "
    "\"mem\": \"1G\"}, \"tasks\": [{\"duration\": \"100ms\"}]}]}";

static struct hrm_spec *load(const char *execution, struct hrm_error *err)
{
    char text[1024];
    snprintf(text, sizeof(text), "%s%s%s}", spec_head, execution ? ", \"execution\": " : "",
             execution ? execution : "");
    return hrm_spec_load_string(text, "t.json", 1, err);
}

Test(p4start, spec_reads_task_overhead_and_defaults_to_none)
{
    struct hrm_error err = {{0}};
    struct hrm_spec *s = load("{\"task_overhead\": \"7.5ms\"}", &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(s->execution.task_overhead_us, 7500);
    cr_assert_eq(hrm_execution_task_overhead_us(&s->execution), 7500);
    hrm_spec_free(s);
    s = load(NULL, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(s->execution.task_overhead_us, 0);
    hrm_spec_free(s);
    cr_assert_eq(hrm_execution_task_overhead_us(NULL), 0, "no execution settings: no overhead");
}

Test(p4start, spec_refuses_a_bad_task_overhead_with_its_key)
{
    const char *bad[] = {"{\"task_overhead\": \"2m\"}", "{\"task_overhead\": \"5\"}",
                         "{\"task_overhead\": 5}", "{\"task_overhead\": \"-1ms\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct hrm_error err = {{0}};
        struct hrm_spec *s = load(bad[i], &err);
        cr_assert_null(s, "%s was accepted", bad[i]);
        cr_assert(strstr(err.text, "task_overhead"), "%s: the key is not named: %s", bad[i],
                  err.text);
    }
}

/* One node of one core, ntasks tasks of 100 ms in one job; the job's end under policy. */
static int64_t job_end(const char *policy, int ntasks, int64_t overhead_us, int64_t *ideal_us)
{
    struct hrm_netcfg net = {.latency_us = MS};
    struct hrm_cluster *c = fx_cluster(1, 1, 1, 8 * GIB, 0, 0, &net);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, ntasks, 1000, GIB, 0, 0, 100 * MS);
    struct hrm_execution x = {
        .contention = 0.05, .usage_interval_us = 0, .task_overhead_us = overhead_us};
    struct hrm_sim_config cfg = {.seed = 1, .execution = &x};
    struct hrm_run_record rec;
    struct hrm_error err = {{0}};
    hrm_run_record_init(&rec, c, wl);
    int rc = hrm_sim_run(c, wl, policy, NULL, &cfg, &rec, &err);
    cr_assert_eq(rc, 0, "%s: %s", policy, err.text);
    cr_assert_eq(rec.tasks_done, ntasks, "%s", policy);
    int64_t end = rec.jobs[0].end_us;
    *ideal_us = hrm_job_ideal_us(wl, c, 0);
    hrm_run_record_fini(&rec);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    return end;
}

static const char *const policies[] = {"fifo",    "drf",       "d-random",
                                       "sparrow", "dhrm-nego", "hrm-central"};

/* One task: the job ends one overhead later on the central path, the distributed one (node
 * queues) and the shared-state one alike; the ideal stays the run time's. */
Test(p4start, every_simulator_holds_the_slot_for_the_overhead_outside_the_ideal)
{
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
        int64_t ideal0, ideal1;
        int64_t plain = job_end(policies[i], 1, 0, &ideal0);
        int64_t held = job_end(policies[i], 1, 10 * MS, &ideal1);
        cr_assert_eq(held - plain, 10 * MS, "%s: %lld -> %lld", policies[i], (long long)plain,
                     (long long)held);
        cr_assert_eq(ideal1, 100 * MS, "%s: the overhead is part of the ideal", policies[i]);
        cr_assert_eq(ideal0, ideal1, "%s", policies[i]);
    }
}

/* Two tasks on one slot: the second starts only once the first has held it for its overhead
 * and its run, so the job ends at least two overheads later.  Exactly two where the next
 * start follows the end at once (node queues, a central pass on each end); the shared-state
 * scheduler's modelled decision times overlap the held slot differently, so there at least
 * one. */
Test(p4start, the_slot_stays_held_for_the_overhead_before_the_next_task)
{
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
        int64_t ideal;
        int64_t plain = job_end(policies[i], 2, 0, &ideal);
        int64_t held = job_end(policies[i], 2, 10 * MS, &ideal);
        if (strcmp(policies[i], "hrm-central") == 0)
            cr_assert_geq(held - plain, 10 * MS, "%s: %lld -> %lld", policies[i], (long long)plain,
                          (long long)held);
        else
            cr_assert_eq(held - plain, 20 * MS, "%s: %lld -> %lld", policies[i], (long long)plain,
                         (long long)held);
    }
}
