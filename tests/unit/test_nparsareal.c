/* NPARSA in the daemons: the bench figures (parsing, cache file), the slow-down flags, the mapping of measured figures to NPARSA's cpu_speed and disk_bw on hand-worked values, and the nodes' foreign load in NPARSA's dynamic indicators. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/master_private.h"
#include "daemon/nodeperf.h"
#include "fixture.h"
#include "hrm/alloc.h"
#include "hrm/policy.h"
#include "policy/nparsa_private.h"

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    cr_assert_not_null(o, "%s", je.text);
    return o;
}

Test(nparsareal, bench_figures_are_read_and_checked)
{
    char why[160] = "";
    struct node_perf p;
    json_t *o = parse("{\"cpu\": 4e8, \"mem_bw\": 1e10, \"disk_bw\": 2e8, \"at\": 1700000000,"
                      " \"speed\": 0.25, \"disk_bps\": 50000000}");
    cr_assert_eq(nodeperf_from_json(o, &p, why, sizeof(why)), 0, "%s", why);
    cr_assert_float_eq(p.cpu, 4e8, 1e-3);
    cr_assert_float_eq(p.mem_bw, 1e10, 1e-3);
    cr_assert_float_eq(p.disk_bw, 2e8, 1e-3);
    cr_assert_eq(p.at, 1700000000);
    cr_assert_float_eq(p.speed, 0.25, 1e-12);
    cr_assert_eq(p.disk_bps, 50000000);
    json_decref(o);
    /* An old or plain one: speed 1, no throttle. */
    o = parse("{\"cpu\": 1, \"mem_bw\": 2, \"disk_bw\": 0}");
    cr_assert_eq(nodeperf_from_json(o, &p, why, sizeof(why)), 0, "%s", why);
    cr_assert_float_eq(p.speed, 1, 1e-12);
    cr_assert_eq(p.disk_bps, 0);
    json_decref(o);
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"{\"cpu\": -1, \"mem_bw\": 1, \"disk_bw\": 1}", "'cpu' = -1 is out of range"},
        {"{\"mem_bw\": 1, \"disk_bw\": 1}", "'cpu' is missing"},
        {"{\"cpu\": \"fast\", \"mem_bw\": 1, \"disk_bw\": 1}", "'cpu' is not a number"},
        {"{\"cpu\": 1, \"mem_bw\": 1, \"disk_bw\": 1, \"speed\": 0}", "'speed' = 0"},
        {"{\"cpu\": 1, \"mem_bw\": 1, \"disk_bw\": 1, \"speed\": 1.5}", "'speed' = 1.5"},
        {"[1]", "not an object"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o = parse(bad[i].text);
        cr_assert_eq(nodeperf_from_json(o, &p, why, sizeof(why)), -1, "%s accepted", bad[i].text);
        cr_assert(strstr(why, bad[i].why), "%s: %s", bad[i].text, why);
        json_decref(o);
    }
}

Test(nparsareal, bench_cache_round_trip_and_staleness)
{
    char dir[] = "/tmp/hrm-nparsareal-XXXXXX", path[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/bench-n1.json", dir);
    struct hrm_error err = {{0}};
    struct node_perf p = {.cpu = 3.5e8, .mem_bw = 9e9, .disk_bw = 1.5e8, .at = 1800000000,
                          .speed = 0.5, .disk_bps = 0}, q;
    cr_assert_eq(nodeperf_cache_read(path, &q, &err), -ENOENT);
    cr_assert_eq(nodeperf_cache_write(path, &p, &err), 0, "%s", err.text);
    cr_assert_eq(nodeperf_cache_read(path, &q, &err), 0, "%s", err.text);
    cr_assert(q.cpu == p.cpu && q.mem_bw == p.mem_bw && q.disk_bw == p.disk_bw && q.at == p.at &&
              q.speed == p.speed && q.disk_bps == 0);
    /* It answers for the same limits only, and only when complete. */
    cr_assert(nodeperf_cache_fits(&q, 0.5, 0));
    cr_assert_not(nodeperf_cache_fits(&q, 1, 0), "measured at speed 0.5, asked at 1");
    cr_assert_not(nodeperf_cache_fits(&q, 0.5, 1000000), "measured without a disk throttle");
    q.disk_bw = 0;
    cr_assert_not(nodeperf_cache_fits(&q, 0.5, 0), "the disk figure is unknown");
    /* A corrupt file and one of another version are refused naming the file. */
    FILE *f = fopen(path, "w");
    fputs("{\"version\": 1, \"cpu\": ", f);
    fclose(f);
    cr_assert_lt(nodeperf_cache_read(path, &q, &err), 0);
    cr_assert(strstr(err.text, path), "%s", err.text);
    f = fopen(path, "w");
    fputs("{\"version\": 7, \"cpu\": 1, \"mem_bw\": 1, \"disk_bw\": 1}", f);
    fclose(f);
    cr_assert_lt(nodeperf_cache_read(path, &q, &err), 0);
    cr_assert(strstr(err.text, "version 1"), "%s", err.text);
    unlink(path);
    rmdir(dir);
}

Test(nparsareal, speed_and_disk_flags)
{
    char why[200];
    double s = 0;
    int64_t b = 0;
    cr_assert_eq(nodeperf_parse_speed("--speed", "0.25", &s, why, sizeof(why)), 0);
    cr_assert_float_eq(s, 0.25, 1e-12);
    cr_assert_eq(nodeperf_parse_speed("--speed", "1", &s, why, sizeof(why)), 0);
    static const char *const bad[] = {"0", "1.0001", "-0.5", "abc", "0.5x", "", "nan", "inf"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(nodeperf_parse_speed("--speed", bad[i], &s, why, sizeof(why)), -1, "%s",
                     bad[i]);
        cr_assert(strstr(why, "--speed") && strstr(why, "(0, 1]"), "%s", why);
    }
    cr_assert_eq(nodeperf_parse_bps("--disk-bps", "50MB/s", &b, why, sizeof(why)), 0);
    cr_assert_eq(b, 50000000);
    cr_assert_eq(nodeperf_parse_bps("--disk-bps", "20M", &b, why, sizeof(why)), 0);
    cr_assert_eq(b, 20 << 20, "a size is bytes per second");
    cr_assert_eq(nodeperf_parse_bps("--disk-bps", "0", &b, why, sizeof(why)), -1);
    cr_assert(strstr(why, "--disk-bps: '0'"), "%s", why);
    /* Lists: one value per agent, empty items refused, the bad item named. */
    double sv[8];
    int64_t bv[8];
    int n = 0;
    cr_assert_eq(nodeperf_parse_list("--node-speed", "1,1,0.5,0.25", sv, NULL, 8, &n, why,
                                     sizeof(why)), 0, "%s", why);
    cr_assert_eq(n, 4);
    cr_assert(sv[0] == 1 && sv[1] == 1 && sv[2] == 0.5 && sv[3] == 0.25);
    cr_assert_eq(nodeperf_parse_list("--node-speed", "1,,0.5", sv, NULL, 8, &n, why,
                                     sizeof(why)), -1);
    cr_assert(strstr(why, "--node-speed: ''"), "%s", why);
    cr_assert_eq(nodeperf_parse_list("--node-speed", "1,2", sv, NULL, 8, &n, why, sizeof(why)),
                 -1);
    cr_assert(strstr(why, "--node-speed: '2'"), "%s", why);
    cr_assert_eq(nodeperf_parse_list("--node-speed", "1,1,1", sv, NULL, 2, &n, why,
                                     sizeof(why)), -1);
    cr_assert(strstr(why, "at most 2"), "%s", why);
    cr_assert_eq(nodeperf_parse_list("--node-disk-bps", "100MB/s,20M", NULL, bv, 8, &n, why,
                                     sizeof(why)), 0, "%s", why);
    cr_assert(n == 2 && bv[0] == 100000000 && bv[1] == 20 << 20);
}

Test(nparsareal, measured_figures_map_to_nparsa_inputs)
{
    /*
     * Four nodes: CPU kernel 400, 100, 200 M iterations/s per core and one unknown; disks
     * 200, unknown, 50 and 100 MB/s.  cpu_speed = cpu / 400 (the fastest): 1, 0.25, 0.5, and
     * the unknown one the slowest known, 100 / 400 = 0.25.  disk_bw as measured, the unknown
     * one the slowest known, 50 MB/s.
     */
    struct node_perf perf[4] = {{.cpu = 400e6, .disk_bw = 200e6},
                                {.cpu = 100e6, .disk_bw = 0},
                                {.cpu = 200e6, .disk_bw = 50e6},
                                {.cpu = 0, .disk_bw = 100e6}};
    double speed[4], disk[4];
    nodeperf_map(perf, 4, speed, disk);
    const double want_speed[4] = {1, 0.25, 0.5, 0.25}, want_disk[4] = {200e6, 50e6, 50e6, 100e6};
    for (int i = 0; i < 4; i++) {
        cr_assert_float_eq(speed[i], want_speed[i], 1e-12, "node %d: %g", i, speed[i]);
        cr_assert_float_eq(disk[i], want_disk[i], 1e-3, "node %d: %g", i, disk[i]);
    }
    /* No bench anywhere: every node as before any bench, speed 1 and the default disk. */
    struct node_perf none[2];
    memset(none, 0, sizeof(none));
    nodeperf_map(none, 2, speed, disk);
    cr_assert(speed[0] == 1 && speed[1] == 1 && disk[0] == 0 && disk[1] == 0);
}

/* Two identical nodes of 4 cores and 8 GiB, the first at cpu_speed s0. */
static struct hrm_cluster *pair(double s0)
{
    struct hrm_error err;
    struct hrm_cluster *c = hrm_cluster_new(NULL);
    hrm_cluster_add_rack(c, "r", &err);
    struct hrm_node_desc a = {.name = "a", .cores = 4, .mem = 8 * GIB, .cpu_speed = s0};
    struct hrm_node_desc b = {.name = "b", .cores = 4, .mem = 8 * GIB, .cpu_speed = 1};
    cr_assert_geq(hrm_cluster_add_node(c, &a, &err), 0, "%s", err.text);
    cr_assert_geq(hrm_cluster_add_node(c, &b, &err), 0, "%s", err.text);
    return c;
}

Test(nparsareal, foreign_load_comes_off_the_dynamic_indicators)
{
    struct hrm_cluster *c = pair(1);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 1, 1000, GIB, 0, 0, 1000000);
    struct hrm_state *s = hrm_state_new(c, wl);
    struct nparsa_node x;
    nparsa_indicators(s, 0, 0, &x);
    cr_assert_float_eq(x.d[NPARSA_D_CPU], 1.0, 1e-12);
    /* 3 of 4 cores and 2 of 8 GiB used by what is not an hrm task: (4000 - 3000) / 4000
     * and (8 - 2) / 8. */
    struct hrm_usage f = {.interval_us = 1000000, .cpu = 3000, .mem = 2 * GIB};
    nparsa_less_foreign(&x, s, 0, &f);
    cr_assert_float_eq(x.d[NPARSA_D_CPU], 0.25, 1e-12);
    cr_assert_float_eq(x.d[NPARSA_D_MEM], 0.75, 1e-12);
    /* More than the node: nothing left, not negative. */
    f.cpu = 9000;
    nparsa_less_foreign(&x, s, 0, &f);
    cr_assert_float_eq(x.d[NPARSA_D_CPU], 0, 1e-12);
    hrm_state_free(s);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* Where NPARSA puts one 1-core task of 256 MiB (CPU-intensive) after the policy heard of
 * foreign load on node 0 (none when cpu is 0). */
static int32_t placed_after_report(double s0, int64_t foreign_cpu)
{
    struct hrm_cluster *c = pair(s0);
    struct hrm_workload *wl = hrm_workload_new();
    fx_job(wl, "j", "u", 0);
    fx_stage(wl, "s", NULL, 0);
    fx_tasks(wl, 1, 1000, 256 * MIB, 0, 0, 1000000);
    struct hrm_state *s = hrm_state_new(c, wl);
    hrm_state_submit_job(s, 0, 0);
    struct hrm_error err = {{0}};
    struct hrm_policy *p = hrm_policy_new("nparsa", NULL, 1, &err);
    cr_assert_not_null(p, "%s", err.text);
    if (foreign_cpu > 0) {
        cr_assert_not_null(p->ops->on_event, "NPARSA does not listen to usage reports");
        struct hrm_event ev = {.type = HRM_EV_NODE_USAGE, .job = -1, .task = -1, .node = 0,
                               .usage = {.interval_us = 1000000, .cpu = foreign_cpu}};
        p->ops->on_event(p, s, &ev);
    }
    struct hrm_sched_ctx ctx = {.state = s};
    cr_assert_eq(p->ops->decide(p, &ctx), 0);
    cr_assert_eq(ctx.ndecisions, 1);
    int32_t node = ctx.decisions[0].node;
    hrm_free(ctx.decisions);
    hrm_policy_free(p);
    hrm_state_free(s);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
    return node;
}

Test(nparsareal, node_usage_reports_steer_placement)
{
    /* Alike but for the names: the lowest id wins the tie. */
    cr_assert_eq(placed_after_report(1, 0), 0);
    /* Node 0 busy with 3 foreign cores: its free-CPU indicator drops from 1 to 0.25, a loss
     * of 0.5 x 0.422 x 0.75 = 0.158 of its score: the task goes to node 1. */
    cr_assert_eq(placed_after_report(1, 3000), 1);
}

Test(nparsareal, a_measured_slow_node_loses_a_cpu_job)
{
    /* Node 0 measured at a quarter of node 1's speed: S loses 0.5 x 0.073 x 0.75 = 0.027;
     * the rest alike, so the CPU job goes to node 1. */
    cr_assert_eq(placed_after_report(0.25, 0), 1);
}

Test(nparsareal, master_keeps_benches_and_maps_them)
{
    struct master *m = hrm_calloc(1, sizeof(*m));
    m->nnodes = 3;
    m->nodes = hrm_calloc(3, sizeof(*m->nodes));
    for (int i = 0; i < 3; i++)
        snprintf(m->nodes[i].name, sizeof(m->nodes[i].name), "n%d", i);
    json_t *fast = parse("{\"cpu\": 6e8, \"mem_bw\": 1e10, \"disk_bw\": 3e8, \"at\": 1}");
    json_t *slow = parse("{\"cpu\": 1.5e8, \"mem_bw\": 5e9, \"disk_bw\": 1e8, \"at\": 1}");
    json_t *bad = parse("{\"cpu\": -3, \"mem_bw\": 1, \"disk_bw\": 1}");
    m->sched.dirty = false;
    master_node_perf(m, &m->nodes[0], fast);
    cr_assert(m->sched.dirty, "a new figure rebuilds the scheduler's cluster");
    master_node_perf(m, &m->nodes[1], slow);
    m->sched.dirty = false;
    master_node_perf(m, &m->nodes[1], slow);
    cr_assert_not(m->sched.dirty, "the same figures again change nothing");
    /* A malformed bench leaves the node unknown; an agent that sends none likewise. */
    master_node_perf(m, &m->nodes[2], bad);
    cr_assert_eq(m->nodes[2].perf.cpu, 0);
    master_node_perf(m, &m->nodes[2], NULL);
    cr_assert_eq(m->nodes[2].perf.cpu, 0);
    /* 6e8 is the fastest: 1; 1.5e8 / 6e8 = 0.25; the unknown node the slowest known, 0.25,
     * and the slowest known disk, 1e8. */
    double speed[3], disk[3];
    master_perf_map(m, speed, disk);
    cr_assert_float_eq(speed[0], 1, 1e-12);
    cr_assert_float_eq(speed[1], 0.25, 1e-12);
    cr_assert_float_eq(speed[2], 0.25, 1e-12);
    cr_assert(disk[0] == 3e8 && disk[1] == 1e8 && disk[2] == 1e8);
    json_decref(fast);
    json_decref(slow);
    json_decref(bad);
    hrm_free(m->nodes);
    hrm_free(m);
}
