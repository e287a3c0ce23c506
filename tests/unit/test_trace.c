/* Tests of the trace module: CSV reading, Alibaba GPU trace rows, spec export, fragmentation
 * measure and packing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/frag.h"
#include "hrm/rng.h"
#include "hrm/spec.h"
#include "hrm/trace.h"
#include "trace/trace_private.h"

#ifndef HRM_SOURCE_DIR
#define HRM_SOURCE_DIR "."
#endif
#define DATA HRM_SOURCE_DIR "/tests/data/trace/"

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

/* ---- helpers ---- */

/* Collected bad-row messages. */
struct msgs {
    char text[32][HRM_ERROR_TEXT_MAX];
    int n;
};

static void collect(void *arg, const char *msg)
{
    struct msgs *m = arg;
    if (m->n < 32)
        snprintf(m->text[m->n], sizeof(m->text[0]), "%s", msg);
    m->n++;
}

static bool has_msg(const struct msgs *m, const char *needle)
{
    for (int i = 0; i < m->n && i < 32; i++)
        if (strstr(m->text[i], needle))
            return true;
    return false;
}

static FILE *mem_file(const char *text, size_t len)
{
    FILE *f = fmemopen((void *)text, len, "rb");
    cr_assert_not_null(f);
    return f;
}

typedef int (*read_f)(struct hrm_trace *, FILE *, const char *, const struct hrm_trace_opts *,
                      struct hrm_error *);

/* Reads text with read (hrm_trace_read_nodes or _pods) as "t.csv". */
static int read_text(read_f read, struct hrm_trace *t, const char *text,
                     const struct hrm_trace_opts *o, struct hrm_error *err)
{
    FILE *f = mem_file(text, strlen(text));
    int rc = read(t, f, "t.csv", o, err);
    fclose(f);
    return rc;
}

/* All records of text as "a|b|c" lines (errors as "ERR <message>"), into out. */
static void csv_dump(const char *text, size_t len, char *out, size_t cap)
{
    FILE *f = mem_file(text, len);
    struct csv_reader r;
    struct hrm_error err = {{0}};
    csv_init(&r, f, "t.csv");
    out[0] = '\0';
    int rc;
    while ((rc = csv_next(&r, &err)) != 0) {
        size_t used = strlen(out);
        if (rc < 0) {
            snprintf(out + used, cap - used, "ERR %s\n", err.text);
            if (rc == -HRM_EIO)
                break;
            continue;
        }
        for (int i = 0; i < r.nfields; i++) {
            used = strlen(out);
            snprintf(out + used, cap - used, "%s%s", i ? "|" : "", csv_field(&r, i));
        }
        used = strlen(out);
        snprintf(out + used, cap - used, " @%d\n", r.rec_line);
    }
    csv_fini(&r);
    fclose(f);
}

/* ---- CSV ---- */

Test(trace_csv, quoted_fields)
{
    static const char text[] = "a,\"b,c\",\"say \"\"hi\"\"\"\r\n"
                               "\n"
                               "\"multi\nline\",,\"\"\n"
                               "last,row";
    char out[1024];
    csv_dump(text, sizeof(text) - 1, out, sizeof(out));
    cr_assert_str_eq(out, "a|b,c|say \"hi\" @1\n"
                          "multi\nline|| @3\n"
                          "last|row @5\n");
}

Test(trace_csv, malformed_records_are_reported_and_skipped)
{
    static const char text[] = "ok,1\n"
                               "bad\"quote,2\n"
                               "\"closed\"x,3\n"
                               "cr\rhere,4\n"
                               "ok,5\n"
                               "\"never closed,6\n";
    char out[2048];
    csv_dump(text, sizeof(text) - 1, out, sizeof(out));
    cr_assert_str_eq(out, "ok|1 @1\n"
                          "ERR t.csv:2: quote inside an unquoted field\n"
                          "ERR t.csv:3: text after a closing quote\n"
                          "ERR t.csv:4: carriage return not followed by a newline\n"
                          "ok|5 @5\n"
                          "ERR t.csv:6: unterminated quoted field\n");
}

Test(trace_csv, nul_and_long_records)
{
    char text[70000 + 16];
    memcpy(text, "a,\0b\nok\n", 8);
    char out[1024];
    csv_dump(text, 8, out, sizeof(out));
    cr_assert_str_eq(out, "ERR t.csv:1: NUL byte in record\nok @2\n");
    memset(text, 'x', 70000);
    memcpy(text + 70000, "\nok\n", 4);
    csv_dump(text, 70004, out, sizeof(out));
    cr_assert_str_eq(out, "ERR t.csv:1: record longer than 65536 bytes\nok @2\n");
    check_leaks();
}

Test(trace_csv, integers_and_names)
{
    int64_t v;
    cr_assert_eq(trace_parse_uint("0", 10, &v), 0);
    cr_assert_eq(trace_parse_uint("120200", 1000000, &v), 0);
    cr_assert_eq(v, 120200);
    const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "11", "1.0"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_lt(trace_parse_uint(bad[i], 10, &v), 0, "'%s' accepted", bad[i]);
    cr_assert(trace_name_ok("openb-pod-0000"));
    cr_assert_not(trace_name_ok(""));
    cr_assert_not(trace_name_ok("a b"));
    cr_assert_not(trace_name_ok("a=b"));
    cr_assert_not(trace_name_ok("0123456789012345678901234567890123456789012345678"));
}

/* ---- rows ---- */

Test(trace_rows, fixture_files_map_their_columns)
{
    struct hrm_trace *t = hrm_trace_new();
    struct hrm_error err = {{0}};
    struct msgs m = {0};
    struct hrm_trace_opts o = {.report = collect, .report_arg = &m};
    cr_assert_eq(hrm_trace_load_nodes(t, DATA "nodes.csv", &o, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_trace_load_pods(t, DATA "pods.csv", &o, &err), 0, "%s", err.text);
    cr_assert_eq(m.n, 0);
    cr_assert_eq(t->nnodes, 3);
    cr_assert_eq(t->npods, 7);
    cr_assert(t->pods_have_times);
    const struct hrm_trace_node *v = &t->nodes[2];
    cr_assert_str_eq(v->name, "node-v100");
    cr_assert_eq(v->cpu_milli, 32000);
    cr_assert_eq(v->mem_mib, 131072);
    cr_assert_eq(v->gpus, 4);
    cr_assert_str_eq(t->models[v->model], "V100M16");
    cr_assert_eq(t->nodes[0].model, -1);
    const struct hrm_trace_pod *q = &t->pods[4];
    cr_assert_str_eq(q->name, "pod-quoted");
    cr_assert_eq(q->gpu_milli, 250);
    cr_assert_eq(q->qos, HRM_QOS_BURSTABLE);
    cr_assert_eq(q->models, (1u << t->nodes[1].model) | (1u << v->model));
    cr_assert_eq(q->line, 6);
    const struct hrm_trace_pod *pend = &t->pods[6];
    cr_assert_eq(pend->phase, HRM_POD_PENDING);
    cr_assert_eq(pend->scheduled, -1);
    cr_assert_eq(pend->creation, 60);
    cr_assert_eq(hrm_trace_pod_gpu_milli(&t->pods[3]), 4000);
    /* pod-quoted may use T4 or V100M16 only, pod-multi needs 4 GPUs */
    cr_assert_not(hrm_trace_pod_fits_node(q, &t->nodes[0]));
    cr_assert(hrm_trace_pod_fits_node(q, &t->nodes[1]));
    cr_assert_not(hrm_trace_pod_fits_node(&t->pods[3], &t->nodes[1]));
    cr_assert(hrm_trace_pod_fits_node(&t->pods[3], v));
    hrm_trace_free(t);
    check_leaks();
}

Test(trace_rows, bad_rows_named_by_file_and_line)
{
    struct hrm_trace *t = hrm_trace_new();
    struct hrm_error err = {{0}};
    struct msgs m = {0};
    struct hrm_trace_opts o = {.report = collect, .report_arg = &m};
    cr_assert_eq(hrm_trace_load_nodes(t, DATA "nodes.csv", &o, &err), 0, "%s", err.text);
    int nbad = hrm_trace_load_pods(t, DATA "bad_pods.csv", &o, &err);
    cr_assert_eq(nbad, 7, "%d: %s", nbad, m.text[0]);
    cr_assert_eq(m.n, 7);
    cr_assert(has_msg(&m, "bad_pods.csv:3: cpu_milli '12x' is not an integer"));
    cr_assert(has_msg(&m, "bad_pods.csv:4: expected 11 fields, found 7"));
    cr_assert(has_msg(&m, "bad_pods.csv:5: qos 'XX' is not one of LS, BE"));
    cr_assert(has_msg(&m, "bad_pods.csv:6: gpu_milli 300 without a GPU"));
    cr_assert(has_msg(&m, "bad_pods.csv:7: quote inside an unquoted field"));
    cr_assert(has_msg(&m, "bad_pods.csv:8: pod 'good-1' already on line 2"));
    cr_assert(has_msg(&m, "bad_pods.csv:9: deletion_time 10 is before scheduled_time 40"));
    /* the rows after a bad one are read */
    cr_assert_eq(t->npods, 3);
    cr_assert_str_eq(t->pods[2].name, "good-2");
    hrm_trace_free(t);
    check_leaks();
}

Test(trace_rows, strict_refuses_the_file_and_keeps_nothing)
{
    struct hrm_trace *t = hrm_trace_new();
    struct hrm_error err = {{0}};
    struct hrm_trace_opts o = {.strict = true};
    int rc = hrm_trace_load_pods(t, DATA "bad_pods.csv", &o, &err);
    cr_assert_eq(rc, -HRM_ESPEC);
    cr_assert(strstr(err.text, "bad_pods.csv:3: cpu_milli"), "%s", err.text);
    cr_assert_eq(t->npods, 0);
    struct msgs m = {0};
    struct hrm_trace_opts lax = {.report = collect, .report_arg = &m};
    cr_assert_eq(hrm_trace_load_nodes(t, DATA "bad_nodes.csv", &lax, &err), 3);
    cr_assert(has_msg(&m, "bad_nodes.csv:2: a node with GPUs needs a model"));
    cr_assert(has_msg(&m, "bad_nodes.csv:3: cpu_milli 8500 is not a positive whole number"));
    cr_assert(has_msg(&m, "bad_nodes.csv:5: node 'n3' already on line 4"));
    cr_assert_eq(t->nnodes, 1);
    hrm_trace_free(t);
    check_leaks();
}

Test(trace_rows, bad_headers_refuse_the_file)
{
    struct hrm_error err = {{0}};
    struct hrm_trace *t = hrm_trace_new();
    struct {
        const char *text, *want;
    } cases[] = {
        {"", "empty file"},
        {"sn,cpu_milli,memory_mib,gpu\n", "missing column 'model'"},
        {"sn,cpu_milli,memory_mib,gpu,model,colour\n", "unknown column 'colour'"},
        {"sn,sn,cpu_milli,memory_mib,gpu,model\n", "column 'sn' appears twice"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(read_text(hrm_trace_read_nodes, t, cases[i].text, NULL, &err), -HRM_ESPEC);
        cr_assert(strstr(err.text, cases[i].want), "%s", err.text);
    }
    cr_assert_eq(read_text(hrm_trace_read_pods, t,
                           "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\n", NULL,
                           &err),
                 -HRM_ESPEC);
    cr_assert(strstr(err.text, "or none"), "%s", err.text);
    /* the multigpu lists have no times at all: fine for packing */
    cr_assert_eq(read_text(hrm_trace_read_pods, t,
                           "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,2,1000\n", NULL,
                           &err),
                 0, "%s", err.text);
    cr_assert_not(t->pods_have_times);
    cr_assert_eq(t->pods[0].creation, -1);
    hrm_trace_free(t);
    check_leaks();
}

/* Truncated and garbage rows: every outcome is a count or an error, never a crash. */
Test(trace_rows, fuzz)
{
    static const char header[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,"
                                 "pod_phase,creation_time,deletion_time,scheduled_time\n";
    static const char row[] = "\"p\",4000,8192,1,500,\"T4|A10\",LS,Running,0,100,0\n";
    static const char alphabet[] = "\",|\r\n0123456789LSBEp-x\\ \t";
    struct hrm_rng rng;
    hrm_rng_seed(&rng, 7);
    char buf[512];
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = strlen(header);
        memcpy(buf, header, len);
        int rows = 1 + (int)hrm_rng_below(&rng, 4);
        for (int r = 0; r < rows; r++) {
            size_t rl = strlen(row);
            memcpy(buf + len, row, rl);
            /* mutate a few bytes, then maybe truncate */
            for (int k = 0; k < 3; k++)
                buf[len + hrm_rng_below(&rng, rl)] =
                    alphabet[hrm_rng_below(&rng, sizeof(alphabet) - 1)];
            len += rl;
        }
        if (hrm_rng_below(&rng, 3) == 0)
            len = strlen(header) + hrm_rng_below(&rng, len - strlen(header) + 1);
        struct hrm_trace *t = hrm_trace_new();
        struct hrm_error err = {{0}};
        struct msgs m = {0};
        struct hrm_trace_opts o = {
            .report = collect, .report_arg = &m, .strict = hrm_rng_below(&rng, 2) == 0};
        FILE *f = mem_file(buf, len);
        int rc = hrm_trace_read_pods(t, f, "fuzz.csv", &o, &err);
        fclose(f);
        if (rc >= 0) {
            cr_assert_eq(rc, m.n);
            for (int i = 0; i < m.n && i < 32; i++)
                cr_assert(strncmp(m.text[i], "fuzz.csv:", 9) == 0, "%s", m.text[i]);
        } else {
            cr_assert_eq(t->npods, 0);
            cr_assert(strncmp(err.text, "fuzz.csv", 8) == 0, "%s", err.text);
        }
        hrm_trace_free(t);
    }
    check_leaks();
}

/* ---- spec export ---- */

static struct hrm_trace *load_fixture(const char *pods)
{
    struct hrm_trace *t = hrm_trace_new();
    struct hrm_error err = {{0}};
    struct hrm_trace_opts o = {0};
    cr_assert_geq(hrm_trace_load_nodes(t, DATA "nodes.csv", &o, &err), 0, "%s", err.text);
    cr_assert_geq(hrm_trace_load_pods(t, pods, &o, &err), 0, "%s", err.text);
    return t;
}

static char *write_spec(const struct hrm_trace *t, const struct hrm_trace_spec_opts *so,
                        struct hrm_trace_spec_stats *st, int *rc, struct hrm_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    *rc = hrm_trace_write_spec(f, t, so, st, err);
    fclose(f);
    return text;
}

static const struct hrm_job *job_named(const struct hrm_workload *wl, const char *name)
{
    for (int32_t j = 0; j < wl->njobs; j++)
        if (strcmp(wl->jobs[j].name, name) == 0)
            return &wl->jobs[j];
    return NULL;
}

Test(trace_spec, mapping_of_hand_written_rows)
{
    struct hrm_trace *t = load_fixture(DATA "pods.csv");
    struct hrm_trace_spec_opts so = {
        .gpu_mem = 16000ll << 20, .sample_interval_us = 60000000, .policies = "fifo,drf"};
    struct hrm_trace_spec_stats st;
    struct hrm_error err = {{0}};
    int rc;
    char *text = write_spec(t, &so, &st, &rc, &err);
    cr_assert_eq(rc, 0, "%s", err.text);
    cr_assert_eq(st.jobs, 6);
    cr_assert_eq(st.pending_skipped, 1);
    cr_assert_eq(st.stream, 3); /* LS, LS, Guaranteed */
    cr_assert_eq(st.batch, 3);  /* BE, BE, Burstable */
    cr_assert_eq(st.zero_clamped, 1);
    cr_assert_eq(st.models_dropped, 1);
    struct hrm_spec *spec = hrm_spec_load_string(text, "trace.json", 1, &err);
    cr_assert_not_null(spec, "%s\n%s", err.text, text);
    cr_assert_eq(spec->cluster->nnodes, 3);
    cr_assert_eq(spec->cluster->nodes[2].gpus, 4);
    cr_assert_eq(spec->cluster->nodes[2].capacity.v[HRM_DIM_CPU], 32000);
    cr_assert_eq(spec->cluster->nodes[2].capacity.v[HRM_DIM_GPU_MEM], 4 * (16000ll << 20));
    cr_assert_eq(spec->wl->njobs, 6);
    cr_assert_eq(spec->sim.npolicies, 2);
    cr_assert_eq(spec->sim.sample_interval_us, 60000000);

    const struct hrm_job *half = job_named(spec->wl, "pod-ls-half");
    cr_assert_not_null(half);
    cr_assert_eq(half->kind, HRM_JOB_STREAM);
    const struct hrm_task *ht = &spec->wl->tasks[half->task_first];
    cr_assert_eq(ht->req.v[HRM_DIM_CPU], 4000);
    cr_assert_eq(ht->req.v[HRM_DIM_MEM], 8192ll << 20);
    cr_assert_eq(ht->req.v[HRM_DIM_GPU], 1);
    cr_assert_eq(ht->req.v[HRM_DIM_GPU_MEM], 8000ll << 20); /* half of the nominal GPU */
    cr_assert_eq(ht->duration_us, 100 * 1000000ll);

    const struct hrm_job *whole = job_named(spec->wl, "pod-be-whole");
    cr_assert_eq(whole->kind, HRM_JOB_BATCH);
    cr_assert_eq(whole->submit_us, 10 * 1000000ll);
    /* run time is deletion - scheduled, not deletion - creation */
    cr_assert_eq(spec->wl->tasks[whole->task_first].duration_us, 55 * 1000000ll);
    cr_assert_eq(spec->wl->tasks[whole->task_first].req.v[HRM_DIM_GPU_MEM], 16000ll << 20);

    const struct hrm_job *multi = job_named(spec->wl, "pod-multi");
    cr_assert_eq(spec->wl->tasks[multi->task_first].req.v[HRM_DIM_GPU_MEM], 4 * (16000ll << 20));
    cr_assert_eq(job_named(spec->wl, "pod-guar")->kind, HRM_JOB_STREAM);
    cr_assert_eq(spec->wl->tasks[job_named(spec->wl, "pod-guar")->task_first].duration_us, 1000000);
    cr_assert_null(job_named(spec->wl, "pod-pending"));
    cr_assert_eq(spec->wl->tasks[job_named(spec->wl, "pod-be-cpu")->task_first].req.v[HRM_DIM_GPU],
                 0);
    hrm_spec_free(spec);
    free(text);

    /* pending pods kept with a run time; arrivals compressed by the time scale */
    so.pending_duration_us = 30000000;
    so.time_scale = 10;
    text = write_spec(t, &so, &st, &rc, &err);
    cr_assert_eq(rc, 0, "%s", err.text);
    spec = hrm_spec_load_string(text, "trace.json", 1, &err);
    cr_assert_not_null(spec, "%s", err.text);
    const struct hrm_job *pend = job_named(spec->wl, "pod-pending");
    cr_assert_not_null(pend);
    cr_assert_eq(pend->submit_us, 6000000);
    cr_assert_eq(spec->wl->tasks[pend->task_first].duration_us, 30000000);
    cr_assert_eq(spec->wl->tasks[pend->task_first].req.v[HRM_DIM_GPU_MEM],
                 (16000ll << 20) * 470 / 1000);
    cr_assert_eq(spec->wl->tasks[job_named(spec->wl, "pod-be-whole")->task_first].duration_us,
                 55 * 1000000ll);
    hrm_spec_free(spec);
    free(text);
    hrm_trace_free(t);
    check_leaks();
}

Test(trace_spec, same_trace_same_bytes)
{
    struct hrm_trace *t = load_fixture(DATA "pods.csv");
    struct hrm_trace_spec_opts so = {.gpu_mem = 16ll << 30};
    struct hrm_error err = {{0}};
    int rc1, rc2;
    char *a = write_spec(t, &so, NULL, &rc1, &err);
    char *b = write_spec(t, &so, NULL, &rc2, &err);
    cr_assert_eq(rc1, 0);
    cr_assert_eq(rc2, 0);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    /* policy names go into the JSON: anything else is refused */
    so.policies = "fifo,a\"b";
    a = write_spec(t, &so, NULL, &rc1, &err);
    cr_assert_eq(rc1, -HRM_ESPEC);
    free(a);
    hrm_trace_free(t);
}

Test(trace_spec, pods_that_fit_no_node)
{
    struct hrm_trace *t = hrm_trace_new();
    struct hrm_error err = {{0}};
    struct msgs m = {0};
    struct hrm_trace_opts lax = {.report = collect, .report_arg = &m};
    cr_assert_eq(hrm_trace_load_nodes(t, DATA "nodes.csv", &lax, &err), 0);
    cr_assert_eq(hrm_trace_load_pods(t, DATA "bad_pods.csv", &lax, &err), 7);
    m.n = 0;
    struct hrm_trace_spec_opts so = {.gpu_mem = 16ll << 30, .row = lax};
    struct hrm_trace_spec_stats st;
    int rc;
    char *text = write_spec(t, &so, &st, &rc, &err);
    cr_assert_eq(rc, 0, "%s", err.text);
    cr_assert_eq(st.nofit_skipped, 1);
    cr_assert_eq(m.n, 1);
    cr_assert(has_msg(&m, "bad_pods.csv:10: pod 'bad-nofit'"), "%s", m.text[0]);
    cr_assert(has_msg(&m, "fits no node"));
    cr_assert_eq(st.jobs, 2);
    free(text);
    so.row.strict = true;
    text = write_spec(t, &so, &st, &rc, &err);
    cr_assert_eq(rc, -HRM_ESPEC);
    cr_assert(strstr(err.text, "bad_pods.csv:10:"), "%s", err.text);
    cr_assert(!text || !*text, "a refused import writes nothing");
    free(text);
    hrm_trace_free(t);
    check_leaks();
}

Test(trace_spec, refuses_pods_without_times)
{
    struct hrm_trace *t = hrm_trace_new();
    struct hrm_error err = {{0}};
    cr_assert_eq(read_text(hrm_trace_read_nodes, t,
                           "sn,cpu_milli,memory_mib,gpu,model\nn,8000,1024,1,T4\n", NULL, &err),
                 0);
    cr_assert_eq(read_text(hrm_trace_read_pods, t,
                           "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,300\n", NULL,
                           &err),
                 0);
    struct hrm_trace_spec_opts so = {.gpu_mem = 16ll << 30};
    int rc;
    char *text = write_spec(t, &so, NULL, &rc, &err);
    cr_assert_eq(rc, -HRM_ESPEC);
    cr_assert(strstr(err.text, "no creation, deletion and scheduled times"), "%s", err.text);
    free(text);
    hrm_trace_free(t);
}

/* ---- fragmentation ---- */

/* A trace with the given nodes (cpu milli, gpus) built in code. */
static struct hrm_trace *frag_trace(const int64_t *cpu, const int32_t *gpus, int n)
{
    struct hrm_trace *t = hrm_trace_new();
    t->nnodes = n;
    t->nodes = hrm_calloc((size_t)n, sizeof(*t->nodes));
    for (int i = 0; i < n; i++) {
        snprintf(t->nodes[i].name, sizeof(t->nodes[i].name), "n%d", i);
        t->nodes[i].cpu_milli = cpu[i];
        t->nodes[i].mem_mib = 1 << 20;
        t->nodes[i].gpus = gpus[i];
        t->nodes[i].model = -1;
    }
    return t;
}

static struct hrm_frag_pod fpod(int64_t cpu, int32_t num_gpu, int32_t milli)
{
    return (struct hrm_frag_pod){.cpu = cpu, .mem = 1, .num_gpu = num_gpu, .gpu_milli = milli};
}

static void place(struct hrm_frag_cluster *c, struct hrm_frag_pod p, int32_t node, int32_t gpu)
{
    struct hrm_frag_choice ch = {
        .node = node, .gpus = gpu >= 0 ? 1u << gpu : 0, .milli_each = gpu >= 0 ? p.gpu_milli : 0};
    hrm_frag_apply(c, &p, &ch);
}

/*
 * Hand-worked: target workload t1 <1 core, 0.5 GPU> 50 %, t2 <2 cores, no GPU>
 * 25 %, t3 <6 cores, 1 GPU> 25 %.
 * Node A (8 cores, 2 GPUs) with 0.7 GPU used on GPU 1: free [1000, 300].
 *   F(t1) = 300 (GPU 1 too small), F(t2) = 1300 (no GPU used), F(t3) = 300: 550.
 * Node B (8 cores, 1 GPU) with 7 cores used by a cpu pod: free cpu 1000, [1000].
 *   F(t1) = 0, F(t2) = 1000, F(t3) = 1000 (too little cpu): 500.
 * Cluster: 1050 of 3000 = 35 %.
 */
Test(trace_frag, hand_worked_two_nodes)
{
    int64_t cpu[] = {8000, 8000};
    int32_t gpus[] = {2, 1};
    struct hrm_trace *t = frag_trace(cpu, gpus, 2);
    struct hrm_frag_type types[] = {
        {fpod(1000, 1, 500), 0.5}, {fpod(2000, 0, 0), 0.25}, {fpod(6000, 1, 1000), 0.25}};
    for (int i = 0; i < 3; i++)
        types[i].pod.mem = 0;
    struct hrm_frag_cluster c;
    hrm_frag_cluster_init(&c, t, types, 3);
    cr_assert_eq(c.gpu_cap, 3000);
    place(&c, fpod(0, 1, 700), 0, 1);
    place(&c, fpod(7000, 0, 0), 1, -1);
    cr_assert_eq(hrm_frag_node_pod(&c.nodes[0], &types[0].pod), 300);
    cr_assert_eq(hrm_frag_node_pod(&c.nodes[0], &types[1].pod), 1300);
    cr_assert_eq(hrm_frag_node_pod(&c.nodes[0], &types[2].pod), 300);
    cr_assert_eq(hrm_frag_node_pod(&c.nodes[1], &types[0].pod), 0);
    cr_assert_eq(hrm_frag_node_pod(&c.nodes[1], &types[2].pod), 1000);
    cr_assert_float_eq(c.frag[0], 550.0, 1e-9);
    cr_assert_float_eq(c.frag[1], 500.0, 1e-9);
    cr_assert_float_eq(c.frag_total / (double)c.gpu_cap, 0.35, 1e-12);
    cr_assert_eq(c.gpu_left, 2300);
    cr_assert_eq(c.gpu_requested, 700);
    hrm_frag_cluster_fini(&c);
    hrm_trace_free(t);
    check_leaks();
}

/*
 * Two nodes of 8 cores and 2 GPUs; GPU 1 of node 0 holds 0.4 (free 600) and
 * GPU 0 of node 1 holds 0.6 (free 400).
 */
static void tiny_cluster(struct hrm_frag_cluster *c, struct hrm_trace **t,
                         const struct hrm_frag_type *types, int32_t ntypes)
{
    int64_t cpu[] = {8000, 8000};
    int32_t gpus[] = {2, 2};
    *t = frag_trace(cpu, gpus, 2);
    hrm_frag_cluster_init(c, *t, types, ntypes);
    place(c, fpod(0, 1, 400), 0, 1);
    place(c, fpod(0, 1, 600), 1, 0);
}

Test(trace_frag, each_policy_on_a_tiny_case)
{
    struct hrm_frag_type types[] = {{fpod(1000, 1, 300), 0.5}, {fpod(1000, 1, 1000), 0.5}};
    struct hrm_frag_cluster c;
    struct hrm_trace *t;
    tiny_cluster(&c, &t, types, 2);
    struct hrm_frag_choice ch;
    struct hrm_frag_pod p400 = fpod(1000, 1, 400), p300 = fpod(1000, 1, 300);

    /* best-fit: node 1 is left tighter; on it the tightest GPU that fits */
    cr_assert_eq(hrm_frag_choose(&c, HRM_FRAG_BESTFIT, &p300, -1, &ch), 0);
    cr_assert_eq(ch.node, 1);
    cr_assert_eq(ch.gpus, 1u << 0);
    cr_assert_eq(ch.milli_each, 300);
    /* one task per GPU: a whole idle GPU, held whole */
    cr_assert_eq(hrm_frag_choose(&c, HRM_FRAG_EXCLUSIVE, &p300, -1, &ch), 0);
    cr_assert_eq(ch.node, 1);
    cr_assert_eq(ch.gpus, 1u << 1);
    cr_assert_eq(ch.milli_each, 1000);
    /* hrm stacking: an exactly fitting RU at once ... */
    cr_assert_eq(hrm_frag_choose(&c, HRM_FRAG_STACK, &p400, -1, &ch), 0);
    cr_assert_eq(ch.node, 1);
    cr_assert_eq(ch.gpus, 1u << 0);
    /* ... else (no RU makes it wait) the least growth of expected fragmentation,
     * as the hrm policy (hrm_ru_prefer): 600 -> 300 on node 0 leaves the whole-GPU
     * type no worse off and shrinks its fragment (growth -150); the tightest GPU,
     * 400 -> 100 on node 1, grows it by -100 only */
    cr_assert_eq(hrm_frag_choose(&c, HRM_FRAG_STACK, &p300, -1, &ch), 0);
    cr_assert_eq(ch.node, 0);
    cr_assert_eq(ch.gpus, 1u << 1);
    cr_assert(hrm_frag_ru_admit(400, 1, 400));
    cr_assert_not(hrm_frag_ru_admit(399, 1, 400));

    /* FGD: no other option grows the expected fragmentation less */
    for (int32_t type = -1; type < 1; type++) {
        cr_assert_eq(hrm_frag_choose(&c, HRM_FRAG_FGD, &p300, type, &ch), 0);
        struct hrm_frag_node after = c.nodes[ch.node];
        after.gpu_left[__builtin_ctz(ch.gpus)] -= 300;
        after.cpu_left -= 1000;
        double best = hrm_frag_node_amount(&after, types, 2) - c.frag[ch.node];
        for (int32_t n = 0; n < 2; n++)
            for (int32_t g = 0; g < 2; g++) {
                if (c.nodes[n].gpu_left[g] < 300)
                    continue;
                struct hrm_frag_node alt = c.nodes[n];
                alt.gpu_left[g] -= 300;
                alt.cpu_left -= 1000;
                cr_assert_leq(best, hrm_frag_node_amount(&alt, types, 2) - c.frag[n] + 1e-9);
            }
    }
    /* whole-GPU pods, and refusals */
    struct hrm_frag_pod two = fpod(1000, 2, 1000), big = fpod(9000, 0, 0);
    for (int pol = 0; pol < HRM_FRAG_NPOLICIES; pol++) {
        cr_assert_eq(hrm_frag_choose(&c, pol, &two, -1, &ch), -HRM_ENOFIT, "%d", pol);
        cr_assert_eq(hrm_frag_choose(&c, pol, &big, -1, &ch), -HRM_ENOFIT, "%d", pol);
        struct hrm_frag_pod one = fpod(1000, 1, 1000);
        cr_assert_eq(hrm_frag_choose(&c, pol, &one, -1, &ch), 0);
        cr_assert_eq(ch.milli_each, 1000);
        cr_assert_eq(c.nodes[ch.node].gpu_left[__builtin_ctz(ch.gpus)], 1000);
    }
    hrm_frag_cluster_fini(&c);
    hrm_trace_free(t);
    check_leaks();
}

/*
 * hrm stacking places a pod without GPU where its cores strand the least GPU
 * capacity.  Node 0 (8 cores, 1 GPU) is empty.  Node 1 (8 cores, 1 GPU) holds
 * a whole-GPU pod of 1 core and a CPU pod of 1 core.  A CPU pod of 6 cores:
 *   on node 0 it leaves 2/8 of the cores and the whole GPU: 1 - 0.25 = 0.75 of
 *   the GPU stranded;
 *   on node 1 it leaves no core and no GPU: nothing stranded.
 * So node 1.  The old rule (the CPU RU with the fewest pods) took node 0, and
 * with a target workload of <4 cores, 1 GPU> its GPU became a fragment:
 * F = 1000 on node 0 (2 cores left), against F = 0 with the pod on node 1.
 */
Test(trace_frag, hrm_cpu_pod_strands_no_gpu)
{
    int64_t cpu[] = {8000, 8000};
    int32_t gpus[] = {1, 1};
    struct hrm_trace *t = frag_trace(cpu, gpus, 2);
    struct hrm_frag_type types[] = {{fpod(4000, 1, 1000), 1.0}};
    struct hrm_frag_cluster c;
    hrm_frag_cluster_init(&c, t, types, 1);
    place(&c, fpod(1000, 1, 1000), 1, 0);
    place(&c, fpod(1000, 0, 0), 1, -1);
    struct hrm_frag_pod six = fpod(6000, 0, 0);
    struct hrm_frag_choice ch;
    cr_assert_eq(hrm_frag_choose(&c, HRM_FRAG_STACK, &six, -1, &ch), 0);
    cr_assert_eq(ch.node, 1);
    cr_assert_eq(ch.gpus, 0u);
    struct hrm_frag_node old = c.nodes[0];
    old.cpu_left -= 6000;
    cr_assert_float_eq(hrm_frag_node_amount(&old, types, 1), 1000.0, 1e-9);
    hrm_frag_apply(&c, &six, &ch);
    cr_assert_float_eq(c.frag_total, 0.0, 1e-9);
    hrm_frag_cluster_fini(&c);
    hrm_trace_free(t);
    check_leaks();
}

Test(trace_frag, names)
{
    for (int p = 0; p < HRM_FRAG_NPOLICIES; p++)
        cr_assert_eq(hrm_frag_policy_parse(hrm_frag_policy_name(p)), p);
    cr_assert_eq(hrm_frag_policy_parse("nosuch"), -1);
}

static void run_fixture(enum hrm_frag_policy pol, uint64_t seed, struct hrm_frag_result *res)
{
    struct hrm_trace *t = load_fixture(DATA "pods.csv");
    struct hrm_frag_config cfg = {.seed = seed, .runs = 3, .until_pct = 150};
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_frag_run(t, pol, &cfg, res, &err), 0, "%s", err.text);
    hrm_trace_free(t);
}

Test(trace_frag, experiment_is_deterministic_and_consistent)
{
    struct hrm_frag_result *a = hrm_calloc(2, sizeof(*a));
    for (int pol = 0; pol < HRM_FRAG_NPOLICIES; pol++) {
        run_fixture(pol, 5, &a[0]);
        run_fixture(pol, 5, &a[1]);
        cr_assert_eq(memcmp(&a[0], &a[1], sizeof(a[0])), 0, "policy %d", pol);
        cr_assert_eq(a[0].npoints, 151);
        cr_assert_eq(a[0].pool, 7);
        for (int32_t k = 0; k < a[0].npoints; k++) {
            const struct hrm_frag_point *p = &a[0].points[k];
            cr_assert_geq(p->arrived, k / 100.0 - 1e-9);
            cr_assert_float_eq(p->allocated + p->unallocated, 1.0, 1e-9);
            cr_assert_leq(p->fragmented, p->unallocated + 1e-9);
            cr_assert_geq(p->fragmented, -1e-9);
            cr_assert_leq(p->requested, p->allocated + 1e-9);
        }
        /* 150 % of the GPUs asked for cannot all fit: someone was refused */
        cr_assert_eq(a[0].refused_runs, 3);
        cr_assert_gt(a[0].refused, 0);
    }
    hrm_free(a);
    check_leaks();
}

Test(trace_frag, bad_config)
{
    struct hrm_trace *t = load_fixture(DATA "pods.csv");
    struct hrm_frag_result *res = hrm_calloc(1, sizeof(*res));
    struct hrm_error err = {{0}};
    struct hrm_frag_config cfg = {.seed = 1, .runs = 0, .until_pct = 100};
    cr_assert_eq(hrm_frag_run(t, HRM_FRAG_FGD, &cfg, res, &err), -HRM_ESPEC);
    cfg.runs = 1;
    cfg.until_pct = HRM_FRAG_MAX_POINTS;
    cr_assert_eq(hrm_frag_run(t, HRM_FRAG_FGD, &cfg, res, &err), -HRM_ESPEC);
    hrm_free(res);
    hrm_trace_free(t);
    int64_t cpu[] = {8000};
    int32_t gpus[] = {0};
    t = frag_trace(cpu, gpus, 1);
    res = hrm_calloc(1, sizeof(*res));
    cfg.until_pct = 100;
    cr_assert_eq(hrm_frag_run(t, HRM_FRAG_BESTFIT, &cfg, res, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "no GPU"), "%s", err.text);
    hrm_free(res);
    hrm_trace_free(t);
    check_leaks();
}
