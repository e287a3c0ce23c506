/* P3 memory model (src/sim/memspill.c) and the SDASA and Difference baselines, on hand-worked
 * figures. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "hrm/policy.h"
#include "hrm/sim.h"
#include "policy/nparsa_private.h"
#include "sim/memspill.h"

#define SEC 1000000ll
#define DISK_BW 1e8 /* 100 MB/s */

/* n nodes of `cores` cores and `mem` bytes, each with a 100 MB/s disk. */
static struct hrm_cluster *nodes(int n, int cores, int64_t mem)
{
    struct hrm_error err;
    struct hrm_cluster *c = hrm_cluster_new(NULL);
    cr_assert_geq(hrm_cluster_add_rack(c, "r0", &err), 0, "%s", err.text);
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%d", i);
        struct hrm_node_desc d = {
            .name = name, .rack = 0, .cores = cores, .mem = mem, .disk_bw = DISK_BW};
        cr_assert_geq(hrm_cluster_add_node(c, &d, &err), 0, "%s", err.text);
    }
    return c;
}

/* Appends one job of n tasks of 1 core, req bytes and 1 s; a working set ws (0: none). */
static void add_job(struct hrm_workload *wl, const char *name, int n, int64_t req, int64_t ws,
                    int32_t passes)
{
    struct hrm_error err;
    fx_job(wl, name, "u", 0);
    fx_stage(wl, "s", NULL, 0);
    for (int i = 0; i < n; i++) {
        fx_tasks(wl, 1, 1000, req, 0, 0, SEC);
        if (ws > 0) {
            struct hrm_task_memory m = {.working_set = ws, .spill_passes = passes};
            cr_assert_eq(hrm_workload_set_task_memory(wl, &m, &err), 0, "%s", err.text);
        }
    }
}

Test(p3mem, no_model_without_a_working_set)
{
    struct hrm_cluster *c = nodes(1, 4, 4 * GIB);
    struct hrm_workload *wl = hrm_workload_new();
    add_job(wl, "j", 2, GIB, 0, 0);
    cr_assert_null(mem_new(c, wl), "the simulator must run as before");
    cr_assert_null(hrm_workload_task_memory(wl, 0));
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/*
 * One 4 GiB node, 100 MB/s disk.  A and B ask 1 GiB and touch 2.5 GiB (2 passes): heaps 2 GiB,
 * page cache 2 GiB.  A spills 1.5 GiB, all into the cache: +0.  B spills 1.5 GiB, 0.5 GiB still
 * cached, 1 GiB to the disk: 2 x 1073741824 B / 1e8 B/s = 21.474836 s.  C (1 GiB, touches
 * 1.25 GiB) comes next: heaps 3 GiB, the cache is full (3 + 2 > 4), so its 0.25 GiB go to the
 * disk, shared with B: 2 x 268435456 / (1e8 / 2) = 10.737418 s.  When B ends, D (same as C)
 * finds heaps 3 GiB and 1.5 GiB cached: no cache, the disk shared with C: 10.737418 s again.
 * E asks 1 GiB and touches 0.5 GiB: no spill, and its heap is 0.5 GiB.
 */
Test(p3mem, spill_to_the_page_cache_then_to_the_disk)
{
    struct hrm_cluster *c = nodes(1, 8, 4 * GIB);
    struct hrm_workload *wl = hrm_workload_new();
    add_job(wl, "ab", 2, GIB, 5 * GIB / 2, 2);
    add_job(wl, "cd", 2, GIB, 5 * GIB / 4, 2);
    add_job(wl, "e", 1, GIB, GIB / 2, 2);
    struct mem_model *m = mem_new(c, wl);
    cr_assert_not_null(m);
    mem_hold(m, 0, 0);
    mem_hold(m, 1, 0);
    cr_assert_eq(mem_spill_us(m, 0, 0), 0, "A's spill fits the page cache");
    cr_assert_eq(mem_spill_us(m, 1, 0), 21474836);
    mem_hold(m, 2, 0);
    cr_assert_eq(mem_spill_us(m, 2, 0), 10737418, "C shares the disk with B");
    mem_release(m, 1);
    mem_release(m, 1); /* twice: a no-op */
    mem_hold(m, 3, 0);
    cr_assert_eq(mem_spill_us(m, 3, 0), 10737418, "D shares the disk with C, not B");
    int64_t cached, disk;
    mem_totals(m, &cached, &disk);
    cr_assert_eq(cached, 3 * GIB / 2 + GIB / 2);
    cr_assert_eq(disk, GIB + GIB / 2);
    /* E: nothing beyond its heap, which is its working set. */
    mem_release(m, 0);
    mem_release(m, 2);
    mem_release(m, 3);
    mem_hold(m, 4, 0);
    cr_assert_eq(mem_spill_us(m, 4, 0), 0);
    /* A again on the now empty node beside E: heaps 1.5 GiB, cache 2.5 GiB >= 1.5 GiB. */
    mem_hold(m, 0, 0);
    cr_assert_eq(mem_spill_us(m, 0, 0), 0);
    mem_free(m);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

Test(p3mem, zero_passes_cost_nothing_and_bad_models_are_refused)
{
    struct hrm_cluster *c = nodes(1, 8, 2 * GIB);
    struct hrm_workload *wl = hrm_workload_new();
    add_job(wl, "j", 1, GIB, 4 * GIB, 0);
    struct mem_model *m = mem_new(c, wl);
    mem_hold(m, 0, 0);
    cr_assert_eq(mem_spill_us(m, 0, 0), 0);
    mem_free(m);
    struct hrm_error err;
    struct hrm_task_memory bad = {.working_set = 0, .spill_passes = 2};
    cr_assert_neq(hrm_workload_set_task_memory(wl, &bad, &err), 0);
    bad = (struct hrm_task_memory){.working_set = GIB, .spill_passes = -1};
    cr_assert_neq(hrm_workload_set_task_memory(wl, &bad, &err), 0);
    cr_assert(strstr(err.text, "spill passes"), "%s", err.text);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

static int64_t run_end(const struct hrm_cluster *c, const struct hrm_workload *wl,
                       const char *policy, int32_t job)
{
    struct hrm_error err = {{0}};
    struct hrm_run_record rec;
    hrm_run_record_init(&rec, c, wl);
    cr_assert_eq(hrm_sim_run(c, wl, policy, NULL, NULL, &rec, &err), 0, "%s", err.text);
    int64_t end = rec.jobs[job].end_us;
    hrm_run_record_fini(&rec);
    return end;
}

/* The simulator adds the spill to the run: one 4 GiB node, two tasks of 1 s asking 1 GiB and
 * touching 2.5 GiB as A and B above: the job ends at 1 s + 21.474836 s. */
Test(p3mem, simulated_run_time_grows_by_the_spill)
{
    struct hrm_cluster *c = nodes(1, 2, 4 * GIB);
    struct hrm_workload *wl = hrm_workload_new();
    add_job(wl, "ab", 2, GIB, 5 * GIB / 2, 2);
    cr_assert_eq(run_end(c, wl, "fifo", 0), SEC + 21474836);
    hrm_workload_free(wl);
    /* Working sets within the request: the same run as without a model. */
    wl = hrm_workload_new();
    add_job(wl, "ab", 2, GIB, GIB, 2);
    cr_assert_eq(run_end(c, wl, "fifo", 0), SEC);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/*
 * Difference on indicators: a node with half its cpu and 80 % of its memory free and all its
 * disk free has the utilisation (0.5, 0.2, 0); for a CPU-intensive job its distance from
 * (0, 1, 0) is sqrt(0.25 + 0.64) = 0.943, the idle node's sqrt(0 + 1) = 1, so the loaded node
 * ranks first; for a memory-intensive job the distances from (-, 0, 0) are 0.2 and 0.
 */
Test(p3mem, difference_ranks_by_distance_from_the_ideal_load)
{
    struct nparsa_node n[2] = {{.d = {0.5, 0.8, 0, 1}}, {.d = {1, 1, 0, 1}}};
    double score[2];
    difference_score(n, 2, NPARSA_CPU, score);
    cr_assert_float_eq(score[0], -0.9433981132, 1e-9);
    cr_assert_float_eq(score[1], -1.0, 1e-12);
    difference_score(n, 2, NPARSA_MEM, score);
    cr_assert_float_eq(score[0], -0.2, 1e-12);
    cr_assert_float_eq(score[1], 0.0, 1e-12);
}

/*
 * End to end: two nodes of 2 cores and 4 GiB.  A CPU-intensive job (J = 1) of two tasks asking
 * 1 GiB and touching 2.5 GiB: Difference packs both on n0 (after the first, n0's distance 0.901
 * beats the idle n1's 1), where the second spills 1 GiB to the disk as B above: 1 s +
 * 21.474836 s.  NPARSA spreads them (free cpu weighs 0.422): each node caches its 1.5 GiB,
 * 1 s.  A memory-intensive job (J = 2, 2 GiB asked, 2.5 GiB touched): Difference spreads it
 * (n0's memory is half used after the first): 0.5 GiB each into a 2 GiB cache, 1 s.
 */
Test(p3mem, difference_packs_cpu_jobs_and_pays_for_it_in_spills)
{
    struct hrm_cluster *c = nodes(2, 2, 4 * GIB);
    struct hrm_workload *wl = hrm_workload_new();
    add_job(wl, "cpu", 2, GIB, 5 * GIB / 2, 2);
    cr_assert_eq(run_end(c, wl, "difference", 0), SEC + 21474836);
    cr_assert_eq(run_end(c, wl, "nparsa", 0), SEC);
    cr_assert_eq(run_end(c, wl, "sdasa", 0), SEC);
    hrm_workload_free(wl);
    wl = hrm_workload_new();
    add_job(wl, "mem", 2, 2 * GIB, 5 * GIB / 2, 2);
    cr_assert_eq(run_end(c, wl, "difference", 0), SEC);
    hrm_workload_free(wl);
    hrm_cluster_free(c);
}

/* SDASA: one weight set for every job, the mean of NPARSA's two by default. */
Test(p3mem, sdasa_weight_sets)
{
    struct hrm_error err = {{0}};
    struct hrm_policy *p = hrm_policy_new("sdasa", NULL, 1, &err);
    cr_assert_not_null(p, "%s", err.text);
    const struct nparsa_priv *pv = p->priv;
    cr_assert(!pv->typing);
    const double s[] = {0.1555, 0.577, 0.194, 0.0735}, d[] = {0.266, 0.393, 0.209, 0.132};
    for (int k = 0; k < 4; k++) {
        cr_assert_float_eq(pv->w[NPARSA_CPU].s[k], s[k], 1e-12, "static %d", k);
        cr_assert_float_eq(pv->w[NPARSA_CPU].d[k], d[k], 1e-12, "dynamic %d", k);
        cr_assert_float_eq(pv->w[NPARSA_MEM].s[k], s[k], 1e-12, "static %d", k);
    }
    cr_assert_float_eq(pv->w[NPARSA_CPU].alpha, 0.5, 1e-12);
    hrm_policy_free(p);
    const char *eq[] = {"weights=equal"};
    struct hrm_params params = {.items = eq, .count = 1};
    p = hrm_policy_new("sdasa", &params, 1, &err);
    cr_assert_not_null(p, "%s", err.text);
    pv = p->priv;
    cr_assert_float_eq(pv->w[NPARSA_CPU].s[1], 0.25, 1e-12);
    cr_assert_float_eq(pv->w[NPARSA_CPU].d[2], 0.25, 1e-12);
    hrm_policy_free(p);
    const char *cpu[] = {"weights=cpu"};
    params.items = cpu;
    p = hrm_policy_new("sdasa", &params, 1, &err);
    pv = p->priv;
    cr_assert_float_eq(pv->w[NPARSA_CPU].s[1], 0.641, 1e-12);
    cr_assert_float_eq(pv->w[NPARSA_MEM].d[0], 0.422, 1e-12, "the CPU weights for every job");
    hrm_policy_free(p);
    const char *bad[] = {"weights=heavy"};
    params.items = bad;
    cr_assert_null(hrm_policy_new("sdasa", &params, 1, &err));
    cr_assert(strstr(err.text, "policy 'sdasa'") && strstr(err.text, "'weights'") &&
                  strstr(err.text, "heavy"),
              "%s", err.text);
    const char *unknown[] = {"threshold=1"};
    params.items = unknown;
    cr_assert_null(hrm_policy_new("sdasa", &params, 1, &err));
    cr_assert(strstr(err.text, "unknown parameter 'threshold'"), "%s", err.text);
    const char *th[] = {"threshold=0"};
    params.items = th;
    cr_assert_null(hrm_policy_new("difference", &params, 1, &err));
    cr_assert(strstr(err.text, "policy 'difference'") && strstr(err.text, "'threshold'"), "%s",
              err.text);
}
