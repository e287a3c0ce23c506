/* FGM in the daemons: the estimator's one-line format shared by its file and the store, profiles kept by the store across reopen, the master's compression rule, the agent's handling of task_cpu, and the policy's estimator taken and lent. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "daemon/agent_private.h"
#include "daemon/master_private.h"
#include "hrm/alloc.h"
#include "hrm/fgm.h"
#include "hrm/log.h"
#include "fixture.h"
#include "store_fixture.h"

static struct hrm_est_profile two_stages(void)
{
    struct hrm_est_profile p = {.nobs = 3, .nstages = 2, .duration_us = 5000000};
    p.stage[0] = (struct hrm_est_stage){.duration_us = 2000000, .cpu = 850, .mem = 1 << 26};
    p.stage[1] = (struct hrm_est_stage){.duration_us = 3000000, .cpu = 120, .mem = 1 << 28};
    return p;
}

Test(fgmreal_estimate, a_profile_line_parses_back_to_the_same_profile)
{
    struct hrm_est_key k = {.logic = 0xdeadbeef, .input_class = 0}, k2;
    struct hrm_est_profile p = two_stages(), p2;
    char line[HRM_EST_LINE_MAX];
    hrm_est_format_line(&k, &p, line, sizeof(line));
    struct hrm_error err;
    cr_assert_eq(hrm_est_parse_line(line, &k2, &p2, &err), 0, "%s", err.text);
    cr_assert_eq(k2.logic, k.logic);
    cr_assert_eq(p2.nobs, 3);
    cr_assert_eq(p2.nstages, 2);
    cr_assert_eq(p2.duration_us, p.duration_us);
    cr_assert_eq(p2.stage[1].mem, p.stage[1].mem);
    cr_assert_eq(p2.stage[0].cpu, 850);
}

Test(fgmreal_estimate, a_damaged_line_is_refused_and_names_why)
{
    struct hrm_est_key k;
    struct hrm_est_profile p;
    struct hrm_error err;
    cr_assert_eq(hrm_est_parse_line("deadbeef 0 1 1 -5 100 100", &k, &p, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "stage") != NULL, "%s", err.text);
    cr_assert_eq(hrm_est_parse_line("", &k, &p, &err), -HRM_ESPEC);
}

static int collect(void *arg, const char *line)
{
    struct hrm_est *e = arg;
    struct hrm_est_key k;
    struct hrm_est_profile p;
    struct hrm_error err;
    cr_assert_eq(hrm_est_parse_line(line, &k, &p, &err), 0, "%s", err.text);
    hrm_est_put(e, &k, &p);
    return 0;
}

Test(fgmreal_store, estimates_survive_a_reopen_and_a_key_keeps_its_latest_profile)
{
    char path[256];
    store_fixture_new(path, sizeof(path));
    struct hrm_error err;
    struct hrm_store *s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    struct hrm_est_key k = {.logic = 42};
    struct hrm_est_profile p = two_stages();
    char line[HRM_EST_LINE_MAX];
    cr_assert_eq(hrm_store_begin(s, &err), 0);
    hrm_est_format_line(&k, &p, line, sizeof(line));
    cr_assert_eq(hrm_store_put_estimate(s, k.logic, k.input_class, line, &err), 0, "%s", err.text);
    p.nobs = 4;
    hrm_est_format_line(&k, &p, line, sizeof(line));
    cr_assert_eq(hrm_store_put_estimate(s, k.logic, k.input_class, line, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_store_commit(s, &err), 0);
    hrm_store_close(s);

    s = hrm_store_open(path, &err);
    cr_assert_not_null(s, "%s", err.text);
    struct hrm_est *e = hrm_est_new(NULL, &err);
    cr_assert_eq(hrm_store_load_estimates(s, collect, e, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_est_count(e), 1);
    const struct hrm_est_profile *got = hrm_est_lookup(e, &k);
    cr_assert_not_null(got);
    cr_assert_eq(got->nobs, 4);
    cr_assert_eq(got->stage[0].cpu, 850);
    hrm_est_free(e);
    hrm_store_close(s);
    store_fixture_remove(path);
}

Test(fgmreal_compress, a_node_within_its_cores_keeps_every_request)
{
    cr_assert_eq(fgm_cpu_limit(700, 2000, 2000), 0);
    cr_assert_eq(fgm_cpu_limit(700, 1400, 2000), 0);
    /* within the slack of rounded estimates */
    cr_assert_eq(fgm_cpu_limit(700, 2030, 2000), 0);
}

Test(fgmreal_compress, an_over_committed_node_shares_its_cores_by_charge)
{
    /* estimates 2400 on 2 cores: share 2000 / 2400 of each request */
    cr_assert_eq(fgm_cpu_limit(1000, 2400, 2000), 833);
    cr_assert_eq(fgm_cpu_limit(500, 2400, 2000), 416);
    /* half the cores for twice their estimates: half of each request */
    cr_assert_eq(fgm_cpu_limit(1600, 4000, 2000), 800);
    /* never below a floor that still lets the task run */
    cr_assert_geq(fgm_cpu_limit(1, 1000000, 1000), 1);
}

/* ---- the agent's task_cpu ---- */

struct logged {
    char last[512];
    int n;
};

static void sink(void *arg, int level, const char *line)
{
    struct logged *l = arg;
    (void)level;
    snprintf(l->last, sizeof(l->last), "%s", line);
    l->n++;
}

static json_t *task_cpu(long long job, int task, int attempt, long long cpu)
{
    return json_pack("{s:s, s:I, s:i, s:i, s:I, s:b}", "type", "task_cpu", "job",
                     (json_int_t)job, "task", task, "attempt", attempt, "cpu", (json_int_t)cpu,
                     "compressed", 1);
}

Test(fgmreal_agent, task_cpu_for_a_task_not_running_here_is_logged_and_ignored)
{
    struct logged l = {0};
    hrm_log_set_sink(sink, &l);
    hrm_log_set_level(HRM_LOG_DEBUG);
    struct agent *a = hrm_calloc(1, sizeof(*a));
    a->cpu_milli = 2000;
    struct arun run = {.job = 7, .task = 1, .attempt = 2};
    a->runs = &run;
    a->nruns = 1;
    json_t *m = task_cpu(7, 1, 1, 500); /* an older attempt */
    cr_assert_eq(agent_task_cpu(a, m), -ESRCH);
    cr_assert(strstr(l.last, "7.1#1") && strstr(l.last, "does not run on this node; ignored"),
              "%s", l.last);
    json_decref(m);
    m = task_cpu(9, 0, 1, 500); /* no such job here */
    cr_assert_eq(agent_task_cpu(a, m), -ESRCH);
    json_decref(m);
    run.ended = true; /* it ended as the message crossed it */
    m = task_cpu(7, 1, 2, 500);
    cr_assert_eq(agent_task_cpu(a, m), -ESRCH);
    json_decref(m);
    hrm_log_set_sink(NULL, NULL);
    hrm_free(a);
}

Test(fgmreal_agent, task_cpu_out_of_the_nodes_range_is_refused)
{
    struct logged l = {0};
    hrm_log_set_sink(sink, &l);
    struct agent *a = hrm_calloc(1, sizeof(*a));
    a->cpu_milli = 2000;
    struct arun run = {.job = 7, .task = 1, .attempt = 2};
    a->runs = &run;
    a->nruns = 1;
    json_t *m = task_cpu(7, 1, 2, 0);
    cr_assert_eq(agent_task_cpu(a, m), -EINVAL);
    json_decref(m);
    m = task_cpu(7, 1, 2, 2001);
    cr_assert_eq(agent_task_cpu(a, m), -EINVAL);
    cr_assert(strstr(l.last, "not in 1..2000 milli-cores"), "%s", l.last);
    json_decref(m);
    /* A run without a cgroup (--no-cgroup) cannot be limited: said, not applied. */
    m = task_cpu(7, 1, 2, 500);
    cr_assert_eq(agent_task_cpu(a, m), -ENOENT);
    cr_assert(strstr(l.last, "not applied"), "%s", l.last);
    json_decref(m);
    hrm_log_set_sink(NULL, NULL);
    hrm_free(a);
}

/* ---- the policy's estimator, taken and lent ---- */

Test(fgmreal_policy, only_fgm_has_an_estimator_to_take)
{
    struct hrm_params none = {0};
    struct hrm_error err;
    struct hrm_policy *drf = hrm_policy_new("drf", &none, 1, &err);
    cr_assert_not_null(drf);
    cr_assert_null(hrm_fgm_take_estimator(drf));
    const char *mode;
    double conf;
    cr_assert(!hrm_fgm_node_mode(drf, 0, &mode, &conf));
    hrm_policy_free(drf);

    struct hrm_policy *fgm = hrm_policy_new("fgm", &none, 1, &err);
    cr_assert_not_null(fgm, "%s", err.text);
    struct hrm_est *est = hrm_fgm_take_estimator(fgm);
    cr_assert_not_null(est);
    /* A later build borrows it: freeing that policy leaves the estimator to its owner. */
    struct hrm_policy *again = hrm_policy_new("fgm", &none, 1, &err);
    hrm_fgm_lend_estimator(again, est);
    hrm_policy_free(again);
    hrm_policy_free(fgm);
    struct hrm_est_key k = {.logic = 5};
    struct hrm_est_profile p = two_stages();
    hrm_est_put(est, &k, &p); /* still alive: ASan would catch a use after free */
    cr_assert_eq(hrm_est_count(est), 1);
    hrm_est_free(est);
}

/* ---- foreign load of agents sharing a host (hrm up) ---- */

static json_t *node_sample(long long busy_us, long long tasks_cpu_us, long long mem_used,
                           long long tasks_mem)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "interval_us", (json_int_t)1000000,
                     "cpus", (json_int_t)2, "busy_us", (json_int_t)busy_us, "tasks_cpu_us",
                     (json_int_t)tasks_cpu_us, "mem_total", (json_int_t)(8ll << 30), "mem_used",
                     (json_int_t)mem_used, "tasks_mem", (json_int_t)tasks_mem);
}

static void host_nodes(struct master *m, struct rnode nodes[3])
{
    memset(m, 0, sizeof(*m));
    memset(nodes, 0, 3 * sizeof(*nodes));
    m->nodes = nodes;
    m->nnodes = 3;
    for (int i = 0; i < 3; i++) {
        nodes[i].up = true;
        nodes[i].cores = 1;
        nodes[i].mem = 1ll << 30;
        nodes[i].host_next = -1;
        nodeidx_set_host(m, i, i < 2 ? "box" : "other"); /* the host's ring, as registration does */
    }
}

Test(fgmreal_foreign, a_sibling_agents_tasks_are_not_foreign_load)
{
    struct master m;
    struct rnode nodes[3];
    host_nodes(&m, nodes);
    /* n0's tasks burn 900 milli-cores; the host is busy 1300: 400 are nobody's tasks. */
    json_t *s0 = node_sample(1300000, 900000, 3ll << 30, 1ll << 30);
    struct hrm_usage u0 = {.interval_us = 1000000, .cpu = 400, .mem = 2ll << 30};
    usage_host_foreign(&m, 0, s0, &u0);
    /* n1 has no tasks: what its agent measured as foreign includes n0's 900. */
    json_t *s1 = node_sample(1300000, 0, 3ll << 30, 0);
    struct hrm_usage u1 = {.interval_us = 1000000, .cpu = 1300, .mem = 3ll << 30};
    usage_host_foreign(&m, 1, s1, &u1);
    cr_assert_eq(u1.cpu, 200, "n1's share (1 of 2 cores) of the host's 400: got %lld",
                 (long long)u1.cpu);
    cr_assert_eq(u1.mem, 1ll << 30, "n1's share of 2 GiB: got %lld", (long long)u1.mem);
    /* Alone on its host, a node keeps what its agent measured. */
    struct hrm_usage u2 = {.interval_us = 1000000, .cpu = 1300, .mem = 3ll << 30};
    usage_host_foreign(&m, 2, s1, &u2);
    cr_assert_eq(u2.cpu, 1300);
    cr_assert_eq(u2.mem, 3ll << 30);
    json_decref(s0);
    json_decref(s1);
    nodeidx_free(&m);
}

/* ---- retry by request, carried to a new build of the policy ---- */

/* One 4-core node, one task asking 2 cores and 2 GiB whose command FGM has a profile of (half a
 * core, 256 MiB); returns what the task holds once one pass placed it. */
static int64_t placed_charge(bool by_request)
{
    struct hrm_error err;
    struct hrm_cluster *c = fx_cluster(1, 1, 4, 8 * GIB, 0, 0, NULL);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    struct hrm_task_desc d = {.duration_us = 10000000, .logic = 77};
    d.req.v[HRM_DIM_CPU] = 2000;
    d.req.v[HRM_DIM_MEM] = 2 * GIB;
    cr_assert_geq(hrm_workload_add_task(wl, &d, &err), 0, "%s", err.text);
    struct hrm_est *est = hrm_est_new(NULL, &err);
    struct hrm_est_profile p = {.nobs = 2, .nstages = 1, .duration_us = 10000000};
    p.stage[0] = (struct hrm_est_stage){.duration_us = 10000000, .cpu = 500, .mem = 256 * MIB};
    hrm_est_put(est, &(struct hrm_est_key){.logic = 77}, &p);
    struct hrm_params none = {0};
    struct hrm_policy *fgm = hrm_policy_new("fgm", &none, 1, &err);
    cr_assert_not_null(fgm, "%s", err.text);
    hrm_fgm_lend_estimator(fgm, est);
    struct hrm_state *s = hrm_state_new(c, wl);
    cr_assert_geq(hrm_state_submit_job(s, 0, 0), 0);
    if (by_request)
        hrm_fgm_set_by_request(fgm, s, 0);
    cr_assert_eq(hrm_fgm_by_request(fgm, 0), by_request);
    struct hrm_sched_ctx ctx = {.state = s, .now_us = 1};
    cr_assert_eq(fgm->ops->decide(fgm, &ctx), 0);
    cr_assert_eq(ctx.ndecisions, 1);
    int64_t held = hrm_state_held(s, 0)->v[HRM_DIM_CPU];
    hrm_free(ctx.decisions);
    hrm_state_free(s);
    hrm_policy_free(fgm);
    hrm_est_free(est);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    return held;
}

Test(fgmreal_policy, a_task_marked_for_retry_by_request_is_charged_its_request)
{
    cr_assert_eq(placed_charge(false), 500, "a predicted task holds its estimate");
    cr_assert_eq(placed_charge(true), 2000, "a retried one holds its request");
}

/* ---- demand: use plus run-queue wait ---- */

Test(fgmreal_demand, a_task_that_waited_for_cpu_wanted_more_than_it_used)
{
    /* used 200 milli-cores over 1 s and waited 600 ms for a cpu: it wanted 800 */
    cr_assert_eq(fgm_demand(200, 600000, 1000000, 4), 800);
    /* no wait reported (an older agent, or none): the use */
    cr_assert_eq(fgm_demand(200, 0, 1000000, 4), 200);
    /* never more than the node's cores, nor a wait beyond the interval */
    cr_assert_eq(fgm_demand(900, 5000000, 1000000, 1), 1000);
}
