/* The master's handling of agents' usage samples: a task and a node sample become the central role's TASK_USAGE and NODE_USAGE, which reach the policy as HRM_EV_TASK_USAGE / HRM_EV_NODE_USAGE with the values worked out by hand; bad samples are refused with the reason. */
#include <criterion/criterion.h>
#include <errno.h>

#include "daemon/master_private.h"
#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/central.h"

/* A policy that places nothing and keeps the usage events it is told of. */
struct recorder {
    struct hrm_event ev[8];
    int n;
};

static void rec_on_event(struct hrm_policy *p, const struct hrm_state *s, const struct hrm_event *ev)
{
    (void)s;
    struct recorder *r = p->priv;
    if ((ev->type == HRM_EV_TASK_USAGE || ev->type == HRM_EV_NODE_USAGE) && r->n < 8)
        r->ev[r->n++] = *ev;
}

static int rec_decide(struct hrm_policy *p, struct hrm_sched_ctx *ctx)
{
    (void)p;
    (void)ctx;
    return 0;
}

static const struct hrm_policy_ops rec_ops = {.name = "recorder", .on_event = rec_on_event,
                                              .decide = rec_decide};

static int64_t env_now(struct hrm_env *env)
{
    (void)env;
    return 7000000;
}
static void env_send(struct hrm_env *env, hrm_addr to, const struct hrm_msg *m)
{
    (void)env, (void)to, (void)m;
}
static void env_timer(struct hrm_env *env, int64_t at, uint64_t cookie)
{
    (void)env, (void)at, (void)cookie;
}

struct fx {
    struct master m;
    struct rjob job;
    struct rtask task;
    struct hrm_cluster *c;
    struct hrm_workload *wl;
    struct hrm_central *central;
    struct recorder rec;
    struct hrm_env env;
};

/* Master job 5, task 0, running attempt 3 on node 1 (of 2: 4 cores, 8 GiB each); in the
 * central role it is workload job 0, task 0, started on node 1. */
static void fx_make(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    f->m.nodes = hrm_calloc(2, sizeof(*f->m.nodes));
    f->m.nnodes = 2;
    for (int n = 0; n < 2; n++)
        f->m.nodes[n] = (struct rnode){.cores = 4, .mem = 8 * GIB, .up = true};
    snprintf(f->m.nodes[1].name, sizeof(f->m.nodes[1].name), "n1");
    f->task = (struct rtask){.state = HRM_RTASK_RUNNING, .attempt = 3, .node = 1, .sched = 0};
    f->job = (struct rjob){.id = 5, .ntasks = 1, .tasks = &f->task, .sched = 0};
    f->m.jobs = hrm_calloc(5, sizeof(*f->m.jobs));
    f->m.njobs = 5;
    f->m.jobs[4] = &f->job;

    f->c = fx_cluster(1, 2, 4, 8 * GIB, 0, 0, NULL);
    f->wl = hrm_workload_new();
    fx_job(f->wl, "j", "u", 0);
    fx_stage(f->wl, "s", NULL, 0);
    fx_tasks(f->wl, 1, 1000, GIB, 0, 0, 1000000);
    struct hrm_policy *p = hrm_calloc(1, sizeof(*p));
    p->ops = &rec_ops;
    p->priv = &f->rec;
    f->central = hrm_central_new(f->c, f->wl, p, NULL);
    f->env = (struct hrm_env){.now_us = env_now, .send = env_send, .timer = env_timer};
    struct hrm_msg sub = {.type = HRM_MSG_JOB_SUBMIT, .job = 0};
    cr_assert_eq(hrm_central_on_msg(f->central, &f->env, &sub), 0);
    /* As the master's rebuild seeds a live run (restore_runs). */
    struct hrm_state *st = (struct hrm_state *)hrm_central_state(f->central);
    st->tasks[0].attempt = 2;
    cr_assert_eq(hrm_state_start(st, 0, 1, 0, 0), 0);
    cr_assert_eq(st->tasks[0].attempt, 3);
}

static void fx_drop(struct fx *f)
{
    hrm_central_free(f->central);
    hrm_workload_free(f->wl);
    hrm_cluster_free(f->c);
    hrm_free(f->m.jobs);
    hrm_free(f->m.nodes);
}

Test(usage_master, task_sample_reaches_the_policy)
{
    struct fx f;
    fx_make(&f);
    /* 250 ms of CPU over 500 ms: 500 milli-cores; 3 MiB + 1 byte of memory. */
    json_t *s = json_pack("{s:i, s:i, s:i, s:i, s:I, s:I, s:i, s:i}", "job", 5, "task", 0,
                          "attempt", 3, "cpu_us", 900000, "rss", (json_int_t)(3 * MIB + 1),
                          "rss_peak", (json_int_t)(6 * MIB), "interval_us", 500000,
                          "cpu_delta_us", 250000);
    struct rjob *j;
    int32_t idx;
    struct hrm_usage u;
    char why[200];
    cr_assert_eq(usage_task_convert(&f.m, 1, s, &j, &idx, &u, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(j, &f.job);
    cr_assert_eq(idx, 0);
    cr_assert_eq(u.cpu, 500);
    cr_assert_eq(u.mem, 3 * MIB + 1);
    cr_assert_eq(u.interval_us, 500000);
    struct hrm_msg msg;
    usage_task_msg(j, &j->tasks[idx], 1, &u, &msg);
    cr_assert_eq(msg.type, HRM_MSG_TASK_USAGE);
    cr_assert_eq(hrm_central_on_msg(f.central, &f.env, &msg), 0);
    cr_assert_eq(f.rec.n, 1);
    const struct hrm_event *ev = &f.rec.ev[0];
    cr_assert_eq(ev->type, HRM_EV_TASK_USAGE);
    cr_assert_eq(ev->job, 0);
    cr_assert_eq(ev->task, 0);
    cr_assert_eq(ev->node, 1);
    cr_assert_eq(ev->attempt, 3);
    cr_assert_eq(ev->usage.cpu, 500);
    cr_assert_eq(ev->usage.mem, 4 * MIB); /* the message carries whole MiB, rounded up */
    cr_assert_eq(ev->usage.interval_us, 500000);
    cr_assert(!ev->usage.compressed);
    json_decref(s);
    fx_drop(&f);
}

Test(usage_master, node_sample_is_the_foreign_load)
{
    struct fx f;
    fx_make(&f);
    /* 2 s on 2 CPUs: 3 s busy, 1 s of it the tasks' -> 2 s foreign over 2 s = 1000 milli-cores;
     * 5 GiB used, 1 GiB the tasks' -> 4 GiB; disks busy 500 ms of 2 s = 250 per mille. */
    json_t *s = json_pack("{s:i, s:i, s:i, s:i, s:I, s:I, s:I, s:i}", "interval_us", 2000000,
                          "cpus", 2, "busy_us", 3000000, "tasks_cpu_us", 1000000, "mem_total",
                          (json_int_t)(16 * GIB), "mem_used", (json_int_t)(5 * GIB), "tasks_mem",
                          (json_int_t)GIB, "disk_busy_ms", 500);
    struct hrm_usage u;
    int64_t disk;
    char why[200];
    cr_assert_eq(usage_node_convert(&f.m.nodes[1], s, &u, &disk, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(u.cpu, 1000);
    cr_assert_eq(u.mem, 4 * GIB);
    cr_assert_eq(disk, 250);
    struct hrm_msg msg;
    usage_node_msg(1, &u, &msg);
    cr_assert_eq(hrm_central_on_msg(f.central, &f.env, &msg), 0);
    cr_assert_eq(f.rec.n, 1);
    cr_assert_eq(f.rec.ev[0].type, HRM_EV_NODE_USAGE);
    cr_assert_eq(f.rec.ev[0].node, 1);
    cr_assert_eq(f.rec.ev[0].usage.cpu, 1000);
    cr_assert_eq(f.rec.ev[0].usage.mem, 4 * GIB);
    cr_assert_eq(f.rec.ev[0].usage.interval_us, 2000000);
    /* Tasks that used more than the node counted (a task ended mid-interval): no foreign load,
     * never a negative one. */
    json_object_set_new(s, "tasks_cpu_us", json_integer(4000000));
    json_object_set_new(s, "tasks_mem", json_integer(6 * GIB));
    cr_assert_eq(usage_node_convert(&f.m.nodes[1], s, &u, &disk, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(u.cpu, 0);
    cr_assert_eq(u.mem, 0);
    json_decref(s);
    fx_drop(&f);
}

static int task_verdict(struct fx *f, int32_t node, const char *key, json_int_t value)
{
    json_t *s = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "job", 5, "task", 0, "attempt",
                          3, "cpu_us", 900000, "rss", 1000, "interval_us", 500000, "cpu_delta_us",
                          250000);
    if (key)
        json_object_set_new(s, key, json_integer(value));
    struct rjob *j;
    int32_t idx;
    struct hrm_usage u;
    char why[200];
    int rc = usage_task_convert(&f->m, node, s, &j, &idx, &u, why, sizeof(why));
    json_decref(s);
    return rc;
}

Test(usage_master, bad_task_samples_are_refused)
{
    struct fx f;
    fx_make(&f);
    cr_assert_eq(task_verdict(&f, 1, NULL, 0), 0);
    cr_assert_eq(task_verdict(&f, 0, NULL, 0), -ESRCH);          /* runs on node 1 */
    cr_assert_eq(task_verdict(&f, 1, "attempt", 2), -ESRCH);    /* an older run */
    cr_assert_eq(task_verdict(&f, 1, "job", 6), -ENOENT);
    cr_assert_eq(task_verdict(&f, 1, "task", 1), -ENOENT);
    cr_assert_eq(task_verdict(&f, 1, "rss", -1), -EINVAL);
    cr_assert_eq(task_verdict(&f, 1, "cpu_delta_us", -1), -EINVAL);
    cr_assert_eq(task_verdict(&f, 1, "interval_us", 0), -EINVAL);
    /* 4 cores: 5 s of CPU in 1 s is more than the node has; 9 GiB more than its 8. */
    cr_assert_eq(task_verdict(&f, 1, "cpu_delta_us", 2500000), -EINVAL);
    cr_assert_eq(task_verdict(&f, 1, "rss", 9 * GIB), -EINVAL);
    fx_drop(&f);
}

Test(usage_master, bad_node_samples_are_refused)
{
    struct fx f;
    fx_make(&f);
    json_t *s = json_pack("{s:i, s:i, s:i, s:i, s:I, s:I, s:I}", "interval_us", 1000000, "cpus",
                          2, "busy_us", 1000000, "tasks_cpu_us", 0, "mem_total",
                          (json_int_t)(16 * GIB), "mem_used", (json_int_t)GIB, "tasks_mem",
                          (json_int_t)0);
    struct hrm_usage u;
    int64_t disk;
    char why[200];
    cr_assert_eq(usage_node_convert(&f.m.nodes[1], s, &u, &disk, why, sizeof(why)), 0, "%s", why);
    json_object_set_new(s, "busy_us", json_integer(3000000)); /* 3 s of 2 CPUs in 1 s */
    cr_assert_eq(usage_node_convert(&f.m.nodes[1], s, &u, &disk, why, sizeof(why)), -EINVAL);
    json_object_set_new(s, "busy_us", json_integer(-1));
    cr_assert_eq(usage_node_convert(&f.m.nodes[1], s, &u, &disk, why, sizeof(why)), -EINVAL);
    json_object_set_new(s, "busy_us", json_integer(0));
    json_object_set_new(s, "mem_used", json_integer(17 * GIB));
    cr_assert_eq(usage_node_convert(&f.m.nodes[1], s, &u, &disk, why, sizeof(why)), -EINVAL);
    json_decref(s);
    fx_drop(&f);
}
