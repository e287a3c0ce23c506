/* Tests of the spec reader: examples, the P1 testbed, determinism, the bad-spec corpus, fuzzing. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/rng.h"
#include "hrm/spec.h"

/* Criterion's test processes end without LeakSanitizer's exit check, so the
 * tests ask for one: under ASan every test of this suite ends with a leak check
 * (in the body: a failed assertion in .fini does not fail the test). */
#if defined(__SANITIZE_ADDRESS__) && __has_include(<sanitizer/lsan_interface.h>)
#include <sanitizer/lsan_interface.h>
static void check_leaks(void)
{
    cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leaked (see the report above)");
}
#else
static void check_leaks(void)
{
}
#endif

#ifndef HRM_SOURCE_DIR
#define HRM_SOURCE_DIR "."
#endif

#define GIB (1ll << 30)
#define MIB (1ll << 20)

/* ---- helpers ---- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = hrm_alloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static struct hrm_spec *load_ok(const char *rel, uint64_t seed)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", HRM_SOURCE_DIR, rel);
    struct hrm_error err = {{0}};
    struct hrm_spec *s = hrm_spec_load(path, seed, &err);
    cr_assert_not_null(s, "%s: %s", rel, err.text);
    return s;
}

static struct hrm_spec *load_str(const char *text, struct hrm_error *err)
{
    return hrm_spec_load_string(text, "inline.json", 1, err);
}

static int find_job(const struct hrm_workload *wl, const char *name)
{
    for (int32_t j = 0; j < wl->njobs; j++)
        if (strcmp(wl->jobs[j].name, name) == 0)
            return j;
    cr_assert_fail("no job %s", name);
    return -1;
}

static const struct hrm_stage *job_stage(const struct hrm_workload *wl, int job, int k)
{
    cr_assert_lt(k, wl->jobs[job].nstages);
    return &wl->stages[wl->jobs[job].stage_first + k];
}

static const struct hrm_task *stage_task(const struct hrm_workload *wl, const struct hrm_stage *s,
                                         int i)
{
    cr_assert_lt(i, s->ntasks);
    return &wl->tasks[s->task_first + i];
}

/* Fragments (a cluster or a workload alone) are named *-cluster.json / *-workload.json. */
static bool is_fragment(const char *name)
{
    size_t n = strlen(name);
    return (n > 13 && strcmp(name + n - 13, "-cluster.json") == 0) ||
           (n > 14 && strcmp(name + n - 14, "-workload.json") == 0);
}

static bool has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && strcmp(name + n - k, suffix) == 0;
}

/* Sorted names of dir ending in suffix; returns count, *out owned by caller. */
static size_t list_dir(const char *dir, const char *suffix, char ***out)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!has_suffix(e->d_name, suffix))
            continue;
        HRM_GROW(names, cap, n + 1);
        names[n++] = hrm_strdup(e->d_name);
    }
    closedir(d);
    for (size_t i = 1; i < n; i++) /* insertion sort: tens of names */
        for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
            char *t = names[k];
            names[k] = names[k - 1];
            names[k - 1] = t;
        }
    *out = names;
    return n;
}

static void free_list(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hrm_free(names[i]);
    hrm_free(names);
}

/* Every block has 1..HRM_MAX_REPLICAS distinct replicas on existing nodes. */
static void check_replicas(const struct hrm_spec *s)
{
    for (int32_t b = 0; b < s->wl->nblocks; b++) {
        const struct hrm_block *blk = &s->wl->blocks[b];
        cr_assert(blk->nreplicas >= 1 && blk->nreplicas <= HRM_MAX_REPLICAS);
        for (int r = 0; r < blk->nreplicas; r++) {
            cr_assert(blk->replicas[r] >= 0 && blk->replicas[r] < s->cluster->nnodes);
            for (int k = 0; k < r; k++)
                cr_assert_neq(blk->replicas[k], blk->replicas[r], "block %d: replica twice", b);
        }
    }
}

/* ---- examples ---- */

Test(spec, examples_load)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/examples", HRM_SOURCE_DIR);
    char **names;
    size_t n = list_dir(dir, ".json", &names);
    size_t specs = 0;
    for (size_t i = 0; i < n; i++) {
        char rel[300];
        snprintf(rel, sizeof(rel), "examples/%s", names[i]);
        if (is_fragment(names[i])) {
            /* A fragment is not a spec, and says so. */
            char path[800];
            snprintf(path, sizeof(path), "%s/%s", HRM_SOURCE_DIR, rel);
            struct hrm_error err = {{0}};
            cr_assert_null(hrm_spec_load(path, 1, &err), "%s", rel);
            cr_assert(strstr(err.text, "this looks like a"), "%s: %s", rel, err.text);
            continue;
        }
        struct hrm_spec *s = load_ok(rel, 1);
        cr_assert_gt(s->cluster->nnodes, 0);
        cr_assert_gt(s->wl->njobs, 0);
        struct hrm_error err;
        cr_assert_eq(hrm_workload_check(s->wl, s->cluster, &err), 0, "%s: %s", rel, err.text);
        check_replicas(s);
        hrm_spec_free(s);
        specs++;
    }
    cr_assert_geq(specs, 5, "expected at least 5 example specs, found %zu", specs);
    free_list(names, n);
    check_leaks();
}

Test(spec, p1_testbed)
{
    struct hrm_spec *s = load_ok("examples/p1-testbed.json", 1);
    const struct hrm_cluster *c = s->cluster;
    const struct hrm_workload *wl = s->wl;
    cr_assert_eq(c->nnodes, 15);
    cr_assert_eq(c->nracks, 4);
    cr_assert_eq(c->total.v[HRM_DIM_GPU], 30);
    int per_rack[4] = {4, 4, 4, 3};
    for (int r = 0; r < 4; r++)
        cr_assert_eq(c->racks[r].nnodes, per_rack[r], "rack %d", r);
    cr_assert_str_eq(c->nodes[0].name, "n1");
    cr_assert_str_eq(c->nodes[14].name, "n15");
    cr_assert_eq(c->nodes[12].rack, 3, "n13 is in r4");
    for (int i = 0; i < 15; i++) {
        cr_assert_eq(c->nodes[i].cores, 16);
        cr_assert_eq(c->nodes[i].mem, 32 * GIB);
        cr_assert_eq(c->nodes[i].gpus, 2);
        cr_assert_eq(c->nodes[i].capacity.v[HRM_DIM_GPU_MEM], 20 * GIB);
        cr_assert_float_eq(c->nodes[i].disk_bw, 160e6, 1);
    }
    cr_assert_float_eq(c->net.rack_bw, 125e6, 1);
    cr_assert_float_eq(c->net.core_bw, 125e6, 1);

    cr_assert_eq(wl->njobs, 36);
    cr_assert_eq(wl->max_parallel, 6);
    cr_assert_eq(hrm_workload_fair_m(wl), 6);
    for (int j = 0; j < 36; j++) {
        char name[16];
        snprintf(name, sizeof(name), "J%d", j + 1);
        cr_assert_str_eq(wl->jobs[j].name, name, "jobs in paper order");
    }
    /* J1: MM with 6 blocks: mult (6 tasks, 2 x 1 GB input, on a GPU) then add (6 tasks). */
    int j1 = find_job(wl, "J1");
    cr_assert_eq(wl->jobs[j1].nstages, 2);
    const struct hrm_stage *mult = job_stage(wl, j1, 0), *add = job_stage(wl, j1, 1);
    cr_assert_str_eq(mult->name, "mult");
    cr_assert_eq(mult->ntasks, 6);
    cr_assert_eq(add->ntasks, 6);
    cr_assert_eq(add->ndeps, 1);
    cr_assert_eq(wl->stage_deps[add->dep_first], wl->jobs[j1].stage_first);
    const struct hrm_task *t = stage_task(wl, mult, 0);
    cr_assert_eq(t->req.v[HRM_DIM_GPU], 1);
    cr_assert_eq(t->nblocks, 2);
    cr_assert_eq(wl->blocks[t->block_first].size, GIB);
    cr_assert_eq(wl->blocks[t->block_first + 1].size, GIB);
    cr_assert_eq(wl->blocks[t->block_first].nreplicas, 3);
    /* J5: B blocks are 60 MB. */
    t = stage_task(wl, job_stage(wl, find_job(wl, "J5"), 0), 0);
    cr_assert_eq(wl->blocks[t->block_first + 1].size, 60 * MIB);
    cr_assert_eq(job_stage(wl, find_job(wl, "J8"), 0)->ntasks, 30);
    /* J16: SIO with 60 map tasks on GPUs and one CPU reduce task. */
    int j16 = find_job(wl, "J16");
    cr_assert_eq(job_stage(wl, j16, 0)->ntasks, 60);
    const struct hrm_stage *reduce = job_stage(wl, j16, 1);
    cr_assert_eq(reduce->ntasks, 1);
    cr_assert_eq(stage_task(wl, reduce, 0)->req.v[HRM_DIM_GPU], 0);
    cr_assert_eq(wl->blocks[stage_task(wl, job_stage(wl, j16, 0), 0)->block_first].size, 3 * GIB);
    cr_assert_eq(job_stage(wl, find_job(wl, "J17"), 0)->ntasks, 4);
    cr_assert_eq(job_stage(wl, find_job(wl, "J30"), 0)->ntasks, 60);
    /* k-means: 10 chained iterations reading the same shards (same replicas). */
    int j32 = find_job(wl, "J32");
    cr_assert_eq(wl->jobs[j32].nstages, 10);
    for (int k = 1; k < 10; k++) {
        const struct hrm_stage *st = job_stage(wl, j32, k);
        cr_assert_eq(st->ntasks, 8);
        cr_assert_eq(st->ndeps, 1);
        cr_assert_eq(wl->stage_deps[st->dep_first], wl->jobs[j32].stage_first + k - 1);
        for (int i = 0; i < 8; i++) {
            const struct hrm_block *a =
                &wl->blocks[stage_task(wl, job_stage(wl, j32, 0), i)->block_first];
            const struct hrm_block *b = &wl->blocks[stage_task(wl, st, i)->block_first];
            cr_assert_eq(a->size, 500 * MIB);
            cr_assert_eq(memcmp(a->replicas, b->replicas, sizeof(a->replicas)), 0);
        }
    }
    /* YOLOv3: 5/10/20 shards of 10,000 images. */
    cr_assert_eq(job_stage(wl, find_job(wl, "J34"), 0)->ntasks, 5);
    cr_assert_eq(job_stage(wl, find_job(wl, "J36"), 0)->ntasks, 20);
    /* Total input read, by the paper ~1.3 TB moved; ours is within 1.2..1.5 TB. */
    int64_t bytes = 0;
    for (int32_t b = 0; b < wl->nblocks; b++)
        bytes += wl->blocks[b].size;
    cr_assert(bytes > 1200 * GIB && bytes < 1500 * GIB, "input %lld GiB", (long long)(bytes / GIB));
    check_replicas(s);
    cr_assert_eq(s->sim.npolicies, 6);
    cr_assert_str_eq(s->sim.policies[0], "gs");
    hrm_spec_free(s);
    check_leaks();
}

Test(spec, p1_testbed_10g_same_jobs)
{
    struct hrm_spec *a = load_ok("examples/p1-testbed.json", 9);
    struct hrm_spec *b = load_ok("examples/p1-testbed-10g.json", 9);
    cr_assert_float_eq(b->cluster->net.core_bw, 1.25e9, 1);
    cr_assert_eq(a->wl->nblocks, b->wl->nblocks);
    cr_assert_eq(memcmp(a->wl->blocks, b->wl->blocks, sizeof(struct hrm_block) * a->wl->nblocks), 0,
                 "same seed: same data placement on both networks");
    hrm_spec_free(a);
    hrm_spec_free(b);
    check_leaks();
}

Test(spec, drf_paper)
{
    struct hrm_spec *s = load_ok("examples/drf-paper.json", 1);
    cr_assert_eq(s->cluster->nnodes, 1);
    cr_assert_eq(s->cluster->total.v[HRM_DIM_CPU], 9000);
    cr_assert_eq(s->cluster->total.v[HRM_DIM_MEM], 18 * GIB);
    const struct hrm_workload *wl = s->wl;
    const struct hrm_task *a = &wl->tasks[wl->jobs[find_job(wl, "A")].task_first];
    const struct hrm_task *b = &wl->tasks[wl->jobs[find_job(wl, "B")].task_first];
    cr_assert_eq(a->req.v[HRM_DIM_CPU], 1000);
    cr_assert_eq(a->req.v[HRM_DIM_MEM], 4 * GIB);
    cr_assert_eq(b->req.v[HRM_DIM_CPU], 3000);
    cr_assert_eq(b->req.v[HRM_DIM_MEM], GIB);
    cr_assert_neq(wl->jobs[0].user, wl->jobs[1].user);
    hrm_spec_free(s);
    check_leaks();
}

Test(spec, mixed)
{
    struct hrm_spec *s = load_ok("examples/mixed.json", 1);
    const struct hrm_workload *wl = s->wl;
    int prod = hrm_workload_find_queue(wl, "prod"), dev = hrm_workload_find_queue(wl, "dev");
    cr_assert(prod > 0 && dev > 0);
    cr_assert_float_eq(wl->queues[prod].guarantee, 0.6, 1e-12);
    cr_assert_float_eq(wl->queues[dev].max, 0.8, 1e-12);
    /* An unlisted default queue keeps what the others leave: nothing here. */
    cr_assert_float_eq(wl->queues[hrm_workload_find_queue(wl, "default")].guarantee, 0, 1e-9);
    cr_assert_eq(wl->jobs[find_job(wl, "clickstream")].kind, HRM_JOB_STREAM);
    cr_assert_eq(wl->jobs[find_job(wl, "web")].kind, HRM_JOB_SERVICE);
    cr_assert_eq(wl->jobs[find_job(wl, "clickstream")].priority, 10);
    cr_assert_eq(wl->jobs[find_job(wl, "train")].deadline_us, 1200000000LL);
    /* Profiled tasks: 3 phases; unspecified dimensions take the task's request. */
    const struct hrm_task *t = &wl->tasks[wl->jobs[find_job(wl, "etl-profiled")].task_first];
    cr_assert_eq(t->nphases, 3);
    cr_assert_eq(t->duration_us, 50000000);
    cr_assert_eq(wl->phases[t->phase_first].demand.v[HRM_DIM_CPU], 1000);
    cr_assert_eq(wl->phases[t->phase_first + 2].demand.v[HRM_DIM_CPU], 500);
    /* est_duration differs from duration where the spec says so. */
    t = &wl->tasks[wl->jobs[find_job(wl, "yolo-infer")].task_first];
    cr_assert_eq(t->duration_us, 60000000);
    cr_assert_eq(t->est_duration_us, 45000000);
    /* Explicit replicas. */
    t = &wl->tasks[wl->jobs[find_job(wl, "train")].task_first];
    cr_assert_eq(t->nblocks, 4);
    const struct hrm_block *blk = &wl->blocks[t->block_first + 3];
    cr_assert_eq(blk->nreplicas, 2);
    cr_assert_str_eq(s->cluster->nodes[blk->replicas[0]].name, "gpu1");
    /* Node groups spread over racks round robin and name their nodes. */
    cr_assert_eq(hrm_cluster_find_node(s->cluster, "cpu6"), 5);
    cr_assert_eq(s->cluster->nodes[1].rack, 1);
    cr_assert_float_eq(s->cluster->nodes[6].cpu_speed, 1.2, 1e-12);
    cr_assert_eq(s->cluster->nodes[6].disk_kind, HRM_DISK_NVME);
    /* Faults and sim settings. */
    cr_assert_float_eq(s->faults.task_fail_prob, 0.01, 1e-12);
    cr_assert_eq(s->faults.nnode_faults, 1);
    cr_assert_eq(s->faults.node_faults[0].node, hrm_cluster_find_node(s->cluster, "cpu3"));
    cr_assert_eq(s->faults.node_faults[0].at_us, 300000000LL);
    cr_assert_eq(s->faults.node_faults[0].recover_us, 600000000LL);
    cr_assert_eq(s->sim.sample_interval_us, 5000000);
    hrm_spec_free(s);
    check_leaks();
}

/* ---- generators and determinism ---- */

static void assert_same_workload(const struct hrm_workload *a, const struct hrm_workload *b)
{
    cr_assert_eq(a->njobs, b->njobs);
    cr_assert_eq(a->nstages, b->nstages);
    cr_assert_eq(a->ntasks, b->ntasks);
    cr_assert_eq(a->nblocks, b->nblocks);
    cr_assert_eq(a->nstage_deps, b->nstage_deps);
    cr_assert_eq(a->nusers, b->nusers);
    for (int32_t j = 0; j < a->njobs; j++) {
        const struct hrm_job *x = &a->jobs[j], *y = &b->jobs[j];
        cr_assert_str_eq(x->name, y->name);
        cr_assert_eq(x->kind, y->kind);
        cr_assert_eq(x->user, y->user);
        cr_assert_eq(x->queue, y->queue);
        cr_assert_eq(x->submit_us, y->submit_us, "job %s", x->name);
        cr_assert_eq(x->nstages, y->nstages);
        cr_assert_eq(x->ntasks, y->ntasks);
    }
    for (int32_t i = 0; i < a->nstages; i++) {
        cr_assert_str_eq(a->stages[i].name, b->stages[i].name);
        cr_assert_eq(a->stages[i].ntasks, b->stages[i].ntasks);
        cr_assert_eq(a->stages[i].ndeps, b->stages[i].ndeps);
    }
    for (int32_t i = 0; i < a->ntasks; i++) {
        const struct hrm_task *x = &a->tasks[i], *y = &b->tasks[i];
        cr_assert_eq(x->duration_us, y->duration_us, "task %d", i);
        cr_assert_eq(x->est_duration_us, y->est_duration_us);
        cr_assert_eq(memcmp(&x->req, &y->req, sizeof(x->req)), 0);
        cr_assert_eq(x->nblocks, y->nblocks);
    }
    for (int32_t i = 0; i < a->nblocks; i++) {
        cr_assert_eq(a->blocks[i].size, b->blocks[i].size);
        cr_assert_eq(a->blocks[i].nreplicas, b->blocks[i].nreplicas);
        for (int r = 0; r < a->blocks[i].nreplicas; r++)
            cr_assert_eq(a->blocks[i].replicas[r], b->blocks[i].replicas[r]);
    }
    for (int32_t i = 0; i < a->nstage_deps; i++)
        cr_assert_eq(a->stage_deps[i], b->stage_deps[i]);
    for (int32_t i = 0; i < a->nusers; i++)
        cr_assert_str_eq(a->users[i], b->users[i]);
}

static bool differs(const struct hrm_workload *a, const struct hrm_workload *b)
{
    if (a->ntasks != b->ntasks || a->njobs != b->njobs || a->nblocks != b->nblocks)
        return true;
    for (int32_t j = 0; j < a->njobs; j++)
        if (a->jobs[j].submit_us != b->jobs[j].submit_us)
            return true;
    for (int32_t i = 0; i < a->ntasks; i++)
        if (a->tasks[i].duration_us != b->tasks[i].duration_us)
            return true;
    return false;
}

Test(spec, same_seed_same_workload)
{
    struct hrm_spec *a = load_ok("examples/poisson.json", 42);
    struct hrm_spec *b = load_ok("examples/poisson.json", 42);
    assert_same_workload(a->wl, b->wl);
    struct hrm_spec *c = load_ok("examples/poisson.json", 43);
    cr_assert(differs(a->wl, c->wl), "another seed must give other jobs");
    hrm_spec_free(a);
    hrm_spec_free(b);
    hrm_spec_free(c);
    /* Explicit jobs with random replicas too. */
    a = load_ok("examples/p1-testbed.json", 5);
    b = load_ok("examples/p1-testbed.json", 5);
    assert_same_workload(a->wl, b->wl);
    c = load_ok("examples/p1-testbed.json", 6);
    cr_assert_neq(memcmp(a->wl->blocks, c->wl->blocks, sizeof(struct hrm_block) * 10), 0);
    hrm_spec_free(a);
    hrm_spec_free(b);
    hrm_spec_free(c);
    check_leaks();
}

Test(spec, generators)
{
    struct hrm_spec *s = load_ok("examples/poisson.json", 7);
    const struct hrm_workload *wl = s->wl;
    cr_assert_eq(wl->njobs, 312);
    cr_assert_str_eq(wl->jobs[0].name, "short1");
    cr_assert_str_eq(wl->jobs[299].name, "short300");
    cr_assert_str_eq(wl->jobs[300].name, "batch1");
    int64_t prev = -1;
    double gaps = 0;
    for (int j = 0; j < 300; j++) {
        const struct hrm_job *job = &wl->jobs[j];
        cr_assert_geq(job->submit_us, prev, "Poisson arrivals are ordered");
        if (j > 0)
            gaps += (double)(job->submit_us - prev);
        prev = job->submit_us;
        cr_assert(job->ntasks >= 10 && job->ntasks <= 100, "uniform 10..100: %d", job->ntasks);
        char user[16];
        snprintf(user, sizeof(user), "user%d", j % 10 + 1);
        cr_assert_str_eq(wl->users[job->user], user, "users round robin");
        for (int32_t t = 0; t < job->ntasks; t++) {
            const struct hrm_task *task = &wl->tasks[job->task_first + t];
            cr_assert(task->duration_us >= 1 && task->duration_us <= 2000000);
        }
    }
    /* rate 20/s: the mean gap is 50 ms; 299 samples land within 35..65 ms. */
    double mean_gap = gaps / 299;
    cr_assert(mean_gap > 35e3 && mean_gap < 65e3, "mean gap %f", mean_gap);
    bool est_differs = false;
    for (int32_t t = wl->jobs[0].task_first; t < wl->jobs[0].task_first + wl->jobs[0].ntasks; t++)
        est_differs |= wl->tasks[t].est_duration_us != wl->tasks[t].duration_us;
    cr_assert(est_differs, "est_error perturbs estimates");
    for (int j = 300; j < 312; j++) {
        const struct hrm_job *job = &wl->jobs[j];
        cr_assert_eq(job->submit_us, 500000 + (int64_t)(j - 300) * 1000000, "fixed interval");
        cr_assert_eq(job->nstages, 2);
        const struct hrm_stage *map = &wl->stages[job->stage_first];
        const struct hrm_stage *red = &wl->stages[job->stage_first + 1];
        cr_assert_str_eq(map->name, "map");
        cr_assert(map->ntasks >= 20 && map->ntasks <= 60);
        cr_assert_eq(red->ntasks, 4);
        cr_assert_eq(red->ndeps, 1);
        cr_assert_eq(wl->stage_deps[red->dep_first], job->stage_first);
        const struct hrm_task *mt = &wl->tasks[map->task_first];
        cr_assert_eq(mt->nblocks, 1);
        cr_assert_eq(mt->req.v[HRM_DIM_CPU], 2000);
        for (int32_t t = 0; t < red->ntasks; t++)
            cr_assert_geq(wl->tasks[red->task_first + t].duration_us, 1000000, "min clamp");
        cr_assert_str_eq(wl->users[job->user], (j - 300) % 2 ? "bob" : "alice");
    }
    hrm_spec_free(s);
    check_leaks();
}

/* ---- smaller behaviours, inline specs ---- */

static const char *const tiny_cluster =
    "\"cluster\": {\"nodes\": [{\"name\": \"n\", \"count\": 3, \"cores\": 4, \"mem\": \"8G\"}]}";

Test(spec, defaults)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{%s, \"workload\": {\"jobs\": [{\"name\": \"j\", \"task\": "
             "{\"duration\": \"1s\"}}]}}",
             tiny_cluster);
    struct hrm_error err = {{0}};
    struct hrm_spec *s = load_str(text, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_str_eq(s->path, "inline.json");
    cr_assert_eq(s->cluster->nracks, 1);
    cr_assert_str_eq(s->cluster->racks[0].name, "rack0");
    cr_assert_str_eq(s->cluster->nodes[2].name, "n3");
    cr_assert_float_eq(s->cluster->nodes[0].cpu_speed, 1.0, 0);
    cr_assert_float_eq(s->cluster->nodes[0].disk_bw, 160e6, 1);
    cr_assert_eq(s->cluster->net.latency_us, 100);
    const struct hrm_workload *wl = s->wl;
    cr_assert_eq(wl->njobs, 1);
    cr_assert_eq(wl->jobs[0].kind, HRM_JOB_BATCH);
    cr_assert_str_eq(wl->users[wl->jobs[0].user], "default");
    cr_assert_str_eq(wl->queues[wl->jobs[0].queue].name, "default");
    cr_assert_eq(wl->jobs[0].nstages, 1);
    cr_assert_str_eq(wl->stages[0].name, "main");
    cr_assert_eq(wl->ntasks, 1);
    cr_assert_eq(wl->tasks[0].req.v[HRM_DIM_CPU], 1000);
    cr_assert_eq(wl->tasks[0].req.v[HRM_DIM_MEM], GIB);
    cr_assert_eq(wl->tasks[0].est_duration_us, 1000000);
    cr_assert_eq(s->faults.max_attempts, 4);
    cr_assert_eq(s->sim.sample_interval_us, 1000000);
    cr_assert_eq(s->sim.npolicies, 0);
    hrm_spec_free(s);
    check_leaks();
}

Test(spec, node_names_and_tasks_list)
{
    const char *text =
        "{\"cluster\": {\"racks\": [\"a\", {\"name\": \"b\"}], \"nodes\": ["
        "{\"name\": \"n\", \"count\": 2, \"rack\": \"a\", \"cores\": 4, \"mem\": \"8G\"},"
        "{\"name\": \"n\", \"count\": 2, \"rack\": \"b\", \"cores\": 4, \"mem\": \"8G\"},"
        "{\"name\": \"big\", \"rack\": \"b\", \"cores\": 64, \"mem\": \"1T\", \"comment\": "
        "\"x\"}]},"
        " \"workload\": {\"jobs\": [{\"name\": \"j\", \"stages\": [{\"name\": \"s\","
        " \"task\": {\"cpu\": \"500m\", \"mem\": \"1G\", \"duration\": \"2s\"},"
        " \"tasks\": [{}, {\"cpu\": 32, \"mem\": \"100G\"}, {\"duration\": \"1m\","
        " \"input\": {\"size\": \"1G\", \"blocks\": 3, \"replicas\": [\"n4\", \"big\"]}}]}]}]}}";
    struct hrm_error err = {{0}};
    struct hrm_spec *s = load_str(text, &err);
    cr_assert_not_null(s, "%s", err.text);
    const char *expect[] = {"n1", "n2", "n3", "n4", "big"};
    for (int i = 0; i < 5; i++)
        cr_assert_str_eq(s->cluster->nodes[i].name, expect[i]);
    cr_assert_eq(s->cluster->nodes[2].rack, 1);
    const struct hrm_task *t = s->wl->tasks;
    cr_assert_eq(t[0].req.v[HRM_DIM_CPU], 500);
    cr_assert_eq(t[1].req.v[HRM_DIM_CPU], 32000);
    cr_assert_eq(t[1].duration_us, 2000000, "inherited from the template");
    cr_assert_eq(t[2].duration_us, 60000000);
    cr_assert_eq(t[2].nblocks, 3);
    cr_assert_eq(s->wl->blocks[t[2].block_first].replicas[1], 4);
    hrm_spec_free(s);
    check_leaks();
}

Test(spec, faults_and_params)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{%s, \"workload\": {\"jobs\": [{\"name\": \"j\", \"task\": {\"duration\": \"1s\"}}]},"
             " \"faults\": {\"task_fail_prob\": 0.1, \"max_attempts\": 2, \"node_failures\":"
             " [{\"node\": \"n2\", \"at\": \"3s\"}]},"
             " \"sim\": {\"policies\": [\"fifo\", \"gsd\"], \"params\": {\"gsd.delay1\": 3,"
             " \"gsd.frac\": 0.25, \"fs.on\": true, \"drf.mode\": \"x\"},"
             " \"sample_interval\": \"250ms\"}}",
             tiny_cluster);
    struct hrm_error err = {{0}};
    struct hrm_spec *s = load_str(text, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_float_eq(s->faults.task_fail_prob, 0.1, 0);
    cr_assert_eq(s->faults.max_attempts, 2);
    cr_assert_eq(s->faults.nnode_faults, 1);
    cr_assert_eq(s->faults.node_faults[0].node, 1);
    cr_assert_eq(s->faults.node_faults[0].recover_us, 0, "never recovers");
    cr_assert_eq(s->sim.npolicies, 2);
    cr_assert_str_eq(s->sim.policies[1], "gsd");
    cr_assert_eq(s->sim.nparams, 4);
    cr_assert_str_eq(s->sim.policy_params[0], "gsd.delay1=3");
    cr_assert_str_eq(s->sim.policy_params[1], "gsd.frac=0.25");
    cr_assert_str_eq(s->sim.policy_params[2], "fs.on=true");
    cr_assert_str_eq(s->sim.policy_params[3], "drf.mode=x");
    cr_assert_eq(s->sim.sample_interval_us, 250000);
    hrm_spec_free(s);
    /* The list form gives the same strings. */
    snprintf(text, sizeof(text),
             "{%s, \"workload\": {\"jobs\": [{\"name\": \"j\", \"task\": {\"duration\": \"1s\"}}]},"
             " \"sim\": {\"params\": [\"gsd.delay1=3\", \"fs.alpha=1.5\"]}}",
             tiny_cluster);
    s = load_str(text, &err);
    cr_assert_not_null(s, "%s", err.text);
    cr_assert_eq(s->sim.nparams, 2);
    cr_assert_str_eq(s->sim.policy_params[1], "fs.alpha=1.5");
    hrm_spec_free(s);
    check_leaks();
}

Test(spec, error_api)
{
    struct hrm_error err = {{0}};
    cr_assert_null(hrm_spec_load("/nonexistent/dir/spec.json", 1, &err));
    cr_assert(strstr(err.text, "/nonexistent/dir/spec.json: cannot open"), "%s", err.text);
    cr_assert_null(hrm_spec_load_string(NULL, NULL, 1, &err));
    cr_assert_null(hrm_spec_load_string("{\n  \"cluster\": ,\n}", "x.json", 1, &err));
    cr_assert(strstr(err.text, "x.json: not valid JSON: line 2"), "%s", err.text);
    /* err may be NULL. */
    cr_assert_null(hrm_spec_load_string("[]", "x.json", 1, NULL));
    cr_assert_null(hrm_spec_load("/nonexistent", 1, NULL));
    /* A directory is not a spec. */
    cr_assert_null(hrm_spec_load(HRM_SOURCE_DIR "/examples", 1, &err));
    cr_assert(strstr(err.text, "not a regular file (a directory)"), "%s",
              err.text);
    hrm_spec_free(NULL);
    check_leaks();
}

/* ---- the bad-spec corpus: tests/data/bad/<name>.json with <name>.expect ---- */

Test(spec, bad_corpus)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/tests/data/bad", HRM_SOURCE_DIR);
    char **names;
    size_t n = list_dir(dir, ".json", &names);
    cr_assert_geq(n, 50, "the corpus has %zu files", n);
    for (size_t i = 0; i < n; i++) {
        char path[800], expect_path[800];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        snprintf(expect_path, sizeof(expect_path), "%.*s.expect", (int)strlen(path) - 5, path);
        char *expect = read_text(expect_path);
        expect[strcspn(expect, "\n")] = '\0';
        cr_assert_neq(expect[0], '\0', "%s: empty .expect", names[i]);
        struct hrm_error err = {{0}};
        struct hrm_spec *s = hrm_spec_load(path, 1, &err);
        cr_expect_null(s, "%s: loaded but should fail", names[i]);
        hrm_spec_free(s);
        cr_expect(strstr(err.text, expect) != NULL, "%s:\n  expected: %s\n  got:      %s", names[i],
                  expect, err.text);
        hrm_free(expect);
    }
    free_list(names, n);
    check_leaks();
}

/* ---- robustness: seeded random mutations of valid specs never crash or leak ---- */

static void mutate(char *buf, size_t *len, struct hrm_rng *rng)
{
    static const char junk[] = "{}[]\",:0123456789-.eE \n\\\x80\xff"
                               "abcGMsu/";
    int kind = (int)hrm_rng_below(rng, 5);
    if (*len == 0)
        return;
    size_t at = (size_t)hrm_rng_below(rng, *len);
    switch (kind) {
    case 0: /* truncate */
        *len = at;
        break;
    case 1: /* flip a byte to a random value */
        buf[at] = (char)(hrm_rng_below(rng, 255) + 1);
        break;
    case 2: /* replace with a character that matters to JSON or to units */
        buf[at] = junk[hrm_rng_below(rng, sizeof(junk) - 1)];
        break;
    case 3: /* delete a run of characters */
    {
        size_t run = 1 + (size_t)hrm_rng_below(rng, 8);
        if (run > *len - at)
            run = *len - at;
        memmove(buf + at, buf + at + run, *len - at - run);
        *len -= run;
        break;
    }
    default: /* duplicate a character */
        memmove(buf + at + 1, buf + at, *len - at);
        (*len)++;
        break;
    }
    buf[*len] = '\0';
}

static void fuzz_text(const char *text, const char *path, int rounds, uint64_t seed)
{
    struct hrm_rng rng;
    hrm_rng_seed(&rng, seed);
    size_t n = strlen(text);
    char *buf = hrm_alloc(n + 64);
    int loaded = 0;
    for (int r = 0; r < rounds; r++) {
        memcpy(buf, text, n + 1);
        size_t len = n;
        int muts = 1 + (int)hrm_rng_below(&rng, 4);
        for (int m = 0; m < muts && len + 8 < n + 64; m++)
            mutate(buf, &len, &rng);
        struct hrm_error err = {{0}};
        struct hrm_spec *s = hrm_spec_load_string(buf, path, 1, &err);
        if (s) {
            loaded++;
            hrm_spec_free(s);
        } else {
            cr_assert_neq(err.text[0], '\0', "round %d: NULL without a message", r);
        }
    }
    hrm_free(buf);
    /* Some mutations (in comments, names) keep the spec valid: both paths were taken. */
    cr_log_info("%s: %d of %d mutants loaded", path, loaded, rounds);
}

Test(spec, mutations, .timeout = 600)
{
    const char *specs[] = {"drf-paper.json", "mixed.json", "poisson.json", "p1-testbed.json"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/examples/%s", HRM_SOURCE_DIR, specs[i]);
        char *text = read_text(path);
        fuzz_text(text, path, i == 2 ? 60 : 300, 1000 + i);
        hrm_free(text);
    }
    /* The P1 fragments inline, so mutations reach the cluster and the workload. */
    char path[512];
    snprintf(path, sizeof(path), "%s/examples/p1-cluster.json", HRM_SOURCE_DIR);
    char *cl = read_text(path);
    snprintf(path, sizeof(path), "%s/examples/p1-workload.json", HRM_SOURCE_DIR);
    char *wl = read_text(path);
    size_t n = strlen(cl) + strlen(wl) + 64;
    char *text = hrm_alloc(n);
    snprintf(text, n, "{\"cluster\": %s, \"workload\": %s}", cl, wl);
    fuzz_text(text, path, 300, 77);
    hrm_free(text);
    hrm_free(cl);
    hrm_free(wl);
    check_leaks();
}
