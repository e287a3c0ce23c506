/* Stream jobs: the job format's kind, the crash-loop backoff, the capacity check at submission, and preempting policies that never take a stream task's GPU for batch work. */
#include "test_flowpol.h" /* first: hrm/cluster.h needs size_t from an earlier header */

#include <string.h>

#include "daemon/master_private.h"
#include "hrm/jobdesc.h"

/* ---- the job format ---- */

static json_t *normalise(const char *text, struct hrm_error *err)
{
    json_t *in = json_loads(text, 0, NULL);
    cr_assert_not_null(in, "%s", text);
    json_t *out = hrm_jobdesc_normalise(in, "/", err);
    json_decref(in);
    return out;
}

Test(stream_jobdesc, kind_defaults_to_batch_and_stream_is_kept)
{
    struct hrm_error err;
    json_t *b = normalise("{\"tasks\": [{\"cmd\": \"true\"}]}", &err);
    cr_assert_not_null(b, "%s", err.text);
    cr_assert_str_eq(json_string_value(json_object_get(b, "kind")), "batch");
    json_decref(b);
    json_t *s = normalise("{\"kind\": \"stream\", \"tasks\": [{\"cmd\": \"true\"}]}", &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_str_eq(json_string_value(json_object_get(s, "kind")), "stream");
    json_decref(s);
}

Test(stream_jobdesc, an_unknown_kind_is_refused_naming_the_field)
{
    static const char *const bad[] = {
        "{\"kind\": \"service\", \"tasks\": [{\"cmd\": \"true\"}]}",
        "{\"kind\": \"Stream\", \"tasks\": [{\"cmd\": \"true\"}]}",
        "{\"kind\": 1, \"tasks\": [{\"cmd\": \"true\"}]}",
        "{\"kind\": null, \"tasks\": [{\"cmd\": \"true\"}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct hrm_error err = {0};
        json_t *out = normalise(bad[i], &err);
        cr_assert_null(out, "%s accepted", bad[i]);
        cr_assert(strncmp(err.text, "kind: ", 6) == 0, "%s: %s", bad[i], err.text);
    }
}

/* ---- the backoff ---- */

Test(stream_backoff, doubles_from_one_second_to_a_minute)
{
    static const int64_t want[] = {1000000,  2000000,  4000000,  8000000,
                                   16000000, 32000000, 60000000, 60000000};
    for (int32_t k = 1; k <= 8; k++)
        cr_assert_eq(stream_backoff_us(k), want[k - 1], "quick exit %d", k);
    cr_assert_eq(stream_backoff_us(64), 60000000, "the cap holds however long the streak");
}

/* ---- capacity at submission ---- */

static void add_node(struct master *m, int32_t cores, int64_t mem, int32_t gpus, bool up)
{
    HRM_GROW(m->nodes, m->cap_nodes, (size_t)m->nnodes + 1);
    struct rnode *rn = &m->nodes[m->nnodes++];
    memset(rn, 0, sizeof(*rn));
    rn->cores = cores;
    rn->mem = mem;
    rn->gpus = gpus;
    rn->up = up;
}

static const char *refuse(struct master *m, const char *text, char *why, size_t len)
{
    struct hrm_error err;
    json_t *spec = normalise(text, &err);
    cr_assert_not_null(spec, "%s", err.text);
    const char *r = stream_refuse_spec(m, spec, why, len);
    json_decref(spec);
    return r;
}

Test(stream_capacity, count_over_what_the_up_nodes_run_at_once_is_refused)
{
    struct master m = {0};
    add_node(&m, 4, 8 * GIB, 0, true);
    add_node(&m, 2, 1 * GIB, 2, true);
    add_node(&m, 64, 64 * GIB, 8, false); /* down: not counted */
    char why[256];
    /* 1-cpu tasks: 4 + 2 at once. */
    cr_assert_null(refuse(&m, "{\"kind\": \"stream\", \"tasks\": [{\"cmd\": \"x\", \"count\": 6}]}",
                          why, sizeof(why)));
    const char *r =
        refuse(&m, "{\"kind\": \"stream\", \"tasks\": [{\"cmd\": \"x\", \"count\": 7}]}", why,
               sizeof(why));
    cr_assert_not_null(r);
    cr_assert(strncmp(r, "tasks[0].count: ", 16) == 0, "%s", r);
    cr_assert(strstr(r, "at most 6 "), "%s", r);
    /* Memory bounds it: 2G tasks, 4 on the first node and none on the second. */
    r = refuse(&m,
               "{\"kind\": \"stream\", \"tasks\": [{\"cmd\": \"x\"}, "
               "{\"cmd\": \"x\", \"mem\": \"2G\", \"count\": 5}]}",
               why, sizeof(why));
    cr_assert_not_null(r);
    cr_assert(strncmp(r, "tasks[1].count: ", 16) == 0 && strstr(r, "at most 4 "), "%s", r);
    /* GPUs bound it: one 2-GPU task on the second node. */
    r = refuse(&m, "{\"kind\": \"stream\", \"tasks\": [{\"cmd\": \"x\", \"gpus\": 2, \"count\": 2}]}",
               why, sizeof(why));
    cr_assert_not_null(r);
    cr_assert(strstr(r, "at most 1 "), "%s", r);
    /* A batch job waits for room instead: never refused for its count. */
    cr_assert_null(
        refuse(&m, "{\"tasks\": [{\"cmd\": \"x\", \"count\": 100}]}", why, sizeof(why)));
    hrm_free(m.nodes);
}

Test(stream_capacity, no_node_up_yet_accepts)
{
    struct master m = {0};
    add_node(&m, 4, 8 * GIB, 0, false);
    char why[256];
    cr_assert_null(refuse(&m, "{\"kind\": \"stream\", \"tasks\": [{\"cmd\": \"x\", \"count\": 50}]}",
                          why, sizeof(why)),
                   "nodes may still come");
    hrm_free(m.nodes);
}

/* ---- preemption ---- */

/* Two one-GPU nodes; job 0 holds both when job 1 arrives (shares 1/1).  Under gsp and fsp a
 * batch job 0 loses one task to job 1 (the control: the scenario does preempt); a stream job 0
 * keeps both, and job 1 waits.  Returns the preemptions of job 1's pass. */
static size_t over_share_pass(const char *policy, enum hrm_job_kind kind)
{
    struct world w;
    w_init(&w);
    int32_t r = w_rack(&w), job[2];
    w_node(&w, r, 1, 10 * GIB);
    w_node(&w, r, 1, 10 * GIB);
    for (int k = 0; k < 2; k++) {
        job[k] = w_job(&w);
        w_task(&w, 2 * GIB);
        w_task(&w, 2 * GIB);
    }
    w.wl->jobs[job[0]].kind = kind;
    w_begin(&w, policy, NULL, 0);
    w_submit(&w, job[0]);
    cr_assert_eq(w_decide(&w), 2);
    w_submit(&w, job[1]);
    w_decide(&w);
    size_t killed = count_kind(&w, HRM_DECIDE_PREEMPT);
    if (kind != HRM_JOB_BATCH) {
        cr_assert_eq(running_of(&w, job[0]), 2, "%s", policy);
        cr_assert_eq(running_of(&w, job[1]), 0, "%s", policy);
        /* And the context refuses it, whatever a policy asks. */
        int32_t t = w.wl->jobs[job[0]].task_first;
        cr_assert_eq(hrm_ctx_preempt(&w.ctx, t), -HRM_ESTATE);
        cr_assert_eq(w.s->tasks[t].status, HRM_TASK_RUNNING);
    }
    w_fini(&w);
    return killed;
}

static void never_preempts_stream(const char *policy)
{
    cr_assert_eq(over_share_pass(policy, HRM_JOB_BATCH), 1, "%s: the control did not preempt",
                 policy);
    cr_assert_eq(over_share_pass(policy, HRM_JOB_STREAM), 0, "%s killed a stream task", policy);
    cr_assert_eq(over_share_pass(policy, HRM_JOB_SERVICE), 0, "%s killed a service task", policy);
}

Test(stream_preempt, gsp_never_preempts_a_stream_task)
{
    never_preempts_stream("gsp");
}

Test(stream_preempt, fsp_never_preempts_a_stream_task)
{
    never_preempts_stream("fsp");
}

/* ---- the kind reaches the scheduling role ---- */

/* The master's job table to the role's workload: a stream job is a stream job there (the hrm
 * policy's stream queue, the preemption rule), and a task waiting out its backoff is not given
 * to the role until its time comes. */
Test(stream_role, the_workload_job_has_the_kind_and_waiting_tasks_stay_out)
{
    struct rtask tasks[3] = {{.state = HRM_RTASK_RUNNING},
                             {.state = HRM_RTASK_PENDING, .restart_at_us = 5},
                             {.state = HRM_RTASK_PENDING}};
    struct hrm_res req[1] = {{.v = {[HRM_DIM_CPU] = 1000}}};
    int32_t gshare[1] = {0};
    struct rjob j = {.id = 1, .name = "svc", .user = "u", .queue = "default",
                     .kind = HRM_JOB_STREAM, .greq = req, .gshare = gshare, .ngroups = 1,
                     .ntasks = 3, .tasks = tasks};
    struct hrm_workload *wl = hrm_workload_new();
    struct wl_map map = {0};
    struct hrm_error err;
    int32_t sj;
    cr_assert_eq(sched_wl_add_job(wl, &map, &j, 0, &sj, &err), 0, "%s", err.text);
    cr_assert_geq(sj, 0);
    cr_assert_eq(wl->jobs[sj].kind, HRM_JOB_STREAM);
    cr_assert_eq(wl->jobs[sj].ntasks, 2, "the task waiting out its backoff is left out");
    cr_assert_eq(tasks[1].sched, -1);
    cr_assert_geq(tasks[2].sched, 0);
    j.kind = HRM_JOB_BATCH;
    cr_assert_eq(sched_wl_add_job(wl, &map, &j, 0, &sj, &err), 0, "%s", err.text);
    cr_assert_eq(wl->jobs[sj].kind, HRM_JOB_BATCH);
    sched_wl_map_free(&map);
    hrm_workload_free(wl);
}
