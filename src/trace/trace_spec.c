/* Writes an Alibaba GPU trace as an hrm spec: nodes as they are, each pod as a one-task job
 * (docs/trace-import.md). */
#include <inttypes.h>
#include <string.h>

#include "hrm/alloc.h"
#include "trace_private.h"

#define MIB_BYTES ((int64_t)1 << 20)

/* A size the spec reader takes back exactly: whole MiB as "M", else bytes. */
static void put_size(FILE *out, int64_t bytes)
{
    if (bytes % MIB_BYTES == 0)
        fprintf(out, "\"%" PRId64 "M\"", bytes / MIB_BYTES);
    else
        fprintf(out, "\"%" PRId64 "B\"", bytes);
}

/* A JSON string of s without its directory (file names may hold any byte). */
static void put_basename(FILE *out, const char *s)
{
    const char *slash = s ? strrchr(s, '/') : NULL;
    s = slash ? slash + 1 : s ? s : "-";
    putc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(out, "\\u%04x", c < 0x20 ? c : 0xfffd); /* keep the output valid UTF-8 */
        else
            putc(c, out);
    }
    putc('"', out);
}

/* GPU memory of a pod's request: its share of the nominal GPU, floored, so that
 * shares that add up to at most 1000 never add up to more than one GPU. */
static int64_t pod_gpu_mem(const struct hrm_trace_pod *p, int64_t gpu_mem)
{
    if (p->num_gpu == 0)
        return 0;
    if (p->num_gpu == 1)
        return gpu_mem * p->gpu_milli / 1000;
    return gpu_mem * p->num_gpu;
}

static int64_t trace_end(const struct hrm_trace *t)
{
    int64_t end = 0;
    for (int32_t i = 0; i < t->npods; i++) {
        const struct hrm_trace_pod *p = &t->pods[i];
        if (p->deletion > end)
            end = p->deletion;
        if (p->creation > end)
            end = p->creation;
    }
    return end;
}

/* Policy names must be spec names: they are written into the JSON unescaped. */
static bool policies_ok(const char *s)
{
    char buf[HRM_NAME_MAX];
    while (s && *s) {
        size_t n = strcspn(s, ",");
        if (n >= sizeof(buf))
            return false;
        memcpy(buf, s, n);
        buf[n] = '\0';
        if (n > 0 && !trace_name_ok(buf))
            return false;
        s += n + (s[n] == ',');
    }
    return true;
}

static void write_nodes(FILE *out, const struct hrm_trace *t, int64_t gpu_mem)
{
    fprintf(out, "  \"cluster\": {\"nodes\": [\n");
    for (int32_t i = 0; i < t->nnodes; i++) {
        const struct hrm_trace_node *n = &t->nodes[i];
        fprintf(out, "    {\"name\": \"%s\", \"cores\": %" PRId64 ", \"mem\": ", n->name,
                n->cpu_milli / 1000);
        put_size(out, n->mem_mib * MIB_BYTES);
        if (n->gpus > 0) {
            fprintf(out, ", \"gpus\": %d, \"gpu_mem\": ", n->gpus);
            put_size(out, gpu_mem);
        }
        fprintf(out, "}%s\n", i + 1 < t->nnodes ? "," : "");
    }
    fprintf(out, "  ]},\n");
}

/* Run time of a pod in seconds, or -1 to leave it out (never scheduled). */
static int64_t pod_run_s(const struct hrm_trace_pod *p, int64_t end,
                         const struct hrm_trace_spec_opts *o, struct hrm_trace_spec_stats *st)
{
    if (p->scheduled < 0) {
        if (o->pending_duration_us <= 0) {
            st->pending_skipped++;
            return -1;
        }
        return 0; /* the caller writes pending_duration_us */
    }
    int64_t stop = p->deletion >= 0 ? p->deletion : end;
    if (p->phase == HRM_POD_RUNNING && stop == end)
        st->censored++;
    int64_t run = stop - p->scheduled;
    if (run <= 0) {
        st->zero_clamped++;
        run = 1; /* the spec needs a positive duration; the trace has whole seconds */
    }
    if (o->max_run_s > 0 && run > o->max_run_s) {
        st->capped++;
        run = o->max_run_s;
    }
    return run;
}

static void write_job(FILE *out, const struct hrm_trace_pod *p, int64_t run_s,
                      const struct hrm_trace_spec_opts *o, bool first)
{
    bool stream = p->qos == HRM_QOS_LS || p->qos == HRM_QOS_GUARANTEED;
    /* Whole microseconds, so that a scaled arrival is exact to the spec's resolution. */
    double scale = o->time_scale > 0 ? o->time_scale : 1.0;
    int64_t submit_us = (int64_t)((double)p->creation * 1e6 / scale);
    fprintf(out,
            "%s    {\"name\": \"%s\", \"kind\": \"%s\", \"submit\": \"%" PRId64 "us\", "
            "\"task\": {\"cpu\": \"%" PRId64 "m\", \"mem\": ",
            first ? "" : ",\n", p->name, stream ? "stream" : "batch", submit_us,
            p->cpu_milli > 0 ? p->cpu_milli : 1);
    put_size(out, (p->mem_mib > 0 ? p->mem_mib : 1) * MIB_BYTES);
    if (p->num_gpu > 0) {
        fprintf(out, ", \"gpus\": %d, \"gpu_mem\": ", p->num_gpu);
        put_size(out, pod_gpu_mem(p, o->gpu_mem));
    }
    if (run_s > 0)
        fprintf(out, ", \"duration\": \"%" PRId64 "s\"}}", run_s);
    else
        fprintf(out, ", \"duration\": \"%" PRId64 "us\"}}", o->pending_duration_us);
}

int hrm_trace_write_spec(FILE *out, const struct hrm_trace *t, const struct hrm_trace_spec_opts *o,
                         struct hrm_trace_spec_stats *stats, struct hrm_error *err)
{
    struct hrm_trace_spec_stats st = {0};
    char msg[HRM_ERROR_TEXT_MAX];
    int rc;
    if (!t->pods_have_times)
        return hrm_errorf(err, -HRM_ESPEC,
                          "%s: the pod list has no creation, deletion and "
                          "scheduled times: it can be packed (hrm trace frag) but not replayed",
                          t->pods_file ? t->pods_file : "pods");
    if (t->nnodes == 0)
        return hrm_errorf(err, -HRM_ESPEC, "%s: no node", t->nodes_file ? t->nodes_file : "nodes");
    if (o->gpu_mem <= 0 || o->gpu_mem > (1ll << 50))
        return hrm_errorf(err, -HRM_ESPEC, "the nominal GPU memory must be 1 B..1 PiB");
    if (o->max_run_s < 0)
        return hrm_errorf(err, -HRM_ESPEC, "the run-time cap must not be negative");
    if (!(o->time_scale >= 0 && o->time_scale <= 1e9))
        return hrm_errorf(err, -HRM_ESPEC, "the time scale must be 0..1e9");
    if (!policies_ok(o->policies))
        return hrm_errorf(err, -HRM_ESPEC, "policies: '%.64s' is not a list of names", o->policies);
    /* First pass: which pods go in, so that a refusal writes nothing. */
    bool *keep = hrm_calloc((size_t)t->npods + 1, sizeof(*keep));
    int64_t end = trace_end(t);
    for (int32_t i = 0; i < t->npods; i++) {
        const struct hrm_trace_pod *p = &t->pods[i];
        if (!trace_pod_fits_any(t, p)) {
            snprintf(msg, sizeof(msg),
                     "%s:%d: pod '%s' {cpu=%" PRId64 "m mem=%" PRId64
                     "M gpus=%d} fits no node of %s",
                     t->pods_file ? t->pods_file : "pods", p->line, p->name, p->cpu_milli,
                     p->mem_mib, p->num_gpu, t->nodes_file ? t->nodes_file : "the node list");
            st.nofit_skipped++;
            if ((rc = trace_bad_row(&o->row, err, msg)) < 0)
                goto out;
            continue;
        }
        if (pod_run_s(p, end, o, &st) < 0)
            continue;
        keep[i] = true;
        st.jobs++;
        st.models_dropped += p->models != 0;
        if (p->qos == HRM_QOS_LS || p->qos == HRM_QOS_GUARANTEED)
            st.stream++;
        else
            st.batch++;
    }
    if (st.jobs == 0) {
        rc = hrm_errorf(err, -HRM_ESPEC, "%s: no pod left to replay",
                        t->pods_file ? t->pods_file : "pods");
        goto out;
    }
    /* Second pass: write.  The counters of pod_run_s are taken from the first. */
    struct hrm_trace_spec_stats scratch = {0};
    fprintf(out, "{\n  \"comment\": [\"Alibaba GPU-sharing trace v2023 (Weng et al., ATC '23) "
                 "imported by hrm trace import; GPU memory is a share of a nominal GPU; see "
                 "docs/trace-import.md\", ");
    put_basename(out, t->nodes_file);
    fprintf(out, ", ");
    put_basename(out, t->pods_file);
    fprintf(out, "],\n");
    write_nodes(out, t, o->gpu_mem);
    fprintf(out, "  \"workload\": {\"jobs\": [\n");
    bool first = true;
    for (int32_t i = 0; i < t->npods; i++) {
        if (!keep[i])
            continue;
        write_job(out, &t->pods[i], pod_run_s(&t->pods[i], end, o, &scratch), o, first);
        first = false;
    }
    fprintf(out, "\n  ]}");
    if (o->sample_interval_us > 0 || (o->policies && *o->policies)) {
        fprintf(out, ",\n  \"sim\": {");
        const char *sep = "";
        if (o->sample_interval_us > 0) {
            fprintf(out, "\"sample_interval\": \"%" PRId64 "%s\"",
                    o->sample_interval_us % 1000000 ? o->sample_interval_us
                                                    : o->sample_interval_us / 1000000,
                    o->sample_interval_us % 1000000 ? "us" : "s");
            sep = ", ";
        }
        if (o->policies && *o->policies) {
            fprintf(out, "%s\"policies\": [", sep);
            const char *s = o->policies;
            for (bool firstp = true; *s;) {
                size_t n = strcspn(s, ",");
                if (n > 0) { /* checked by policies_ok */
                    fprintf(out, "%s\"%.*s\"", firstp ? "" : ", ", (int)n, s);
                    firstp = false;
                }
                s += n + (s[n] == ',');
            }
            fprintf(out, "]");
        }
        fprintf(out, "}");
    }
    fprintf(out, "\n}\n");
    if (fflush(out) != 0 || ferror(out)) {
        rc = hrm_errorf(err, -HRM_EIO, "write error: %s", strerror(errno));
        goto out;
    }
    rc = 0;
    if (stats)
        *stats = st;
out:
    hrm_free(keep);
    return rc;
}
