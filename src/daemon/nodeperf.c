/* Node performance figures: validation, cache file, wire form, the slow-down flags and the mapping to NPARSA's inputs. */
#include "nodeperf.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hrm/units.h"

static const char *const figure_keys[] = {"cpu", "mem_bw", "disk_bw"};

/* A number >= 0 (integer or real); absent is 0 when optional. */
static int get_number(const json_t *o, const char *key, bool optional, double lo, double hi,
                      double *out, char *why, size_t len)
{
    const json_t *v = json_object_get(o, key);
    if (!v && optional)
        return 0;
    if (!json_is_number(v)) {
        snprintf(why, len, "'%s' is %s", key, v ? "not a number" : "missing");
        return -1;
    }
    double d = json_number_value(v);
    if (!isfinite(d) || d < lo || d > hi) {
        snprintf(why, len, "'%s' = %g is out of range (%g..%g)", key, d, lo, hi);
        return -1;
    }
    *out = d;
    return 0;
}

int nodeperf_from_json(const json_t *o, struct node_perf *p, char *why, size_t len)
{
    if (!json_is_object(o)) {
        snprintf(why, len, "not an object");
        return -1;
    }
    struct node_perf r = {.speed = 1};
    double *fig[] = {&r.cpu, &r.mem_bw, &r.disk_bw};
    double at = 0, bps = 0;
    for (size_t i = 0; i < sizeof(fig) / sizeof(fig[0]); i++)
        if (get_number(o, figure_keys[i], false, 0, 1e15, fig[i], why, len) < 0)
            return -1;
    if (get_number(o, "at", true, 0, 1e11, &at, why, len) < 0 ||
        get_number(o, "speed", true, 1e-9, 1, &r.speed, why, len) < 0 ||
        get_number(o, "disk_bps", true, 0, 1e15, &bps, why, len) < 0)
        return -1;
    r.at = (int64_t)at;
    r.disk_bps = (int64_t)bps;
    *p = r;
    return 0;
}

json_t *nodeperf_to_json(const struct node_perf *p)
{
    return json_pack("{s:i, s:f, s:f, s:f, s:I, s:f, s:I}", "version", NODEPERF_VERSION, "cpu",
                     p->cpu, "mem_bw", p->mem_bw, "disk_bw", p->disk_bw, "at", (json_int_t)p->at,
                     "speed", p->speed, "disk_bps", (json_int_t)p->disk_bps);
}

int nodeperf_cache_read(const char *path, struct node_perf *p, struct hrm_error *err)
{
    if (access(path, F_OK) != 0)
        return -ENOENT;
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    if (!o)
        return hrm_errorf(err, -HRM_ESPEC, "%s: line %d: %s", path, je.line, je.text);
    char why[160];
    int rc = 0;
    const json_t *v = json_object_get(o, "version");
    if (!json_is_integer(v) || json_integer_value(v) != NODEPERF_VERSION)
        rc = hrm_errorf(err, -HRM_ESPEC, "%s: not a bench file of version %d", path,
                        NODEPERF_VERSION);
    else if (nodeperf_from_json(o, p, why, sizeof(why)) < 0)
        rc = hrm_errorf(err, -HRM_ESPEC, "%s: %s", path, why);
    json_decref(o);
    return rc;
}

int nodeperf_cache_write(const char *path, const struct node_perf *p, struct hrm_error *err)
{
    char tmp[1200];
    snprintf(tmp, sizeof(tmp), "%.1150s.tmp", path);
    json_t *o = nodeperf_to_json(p);
    int rc = json_dump_file(o, tmp, JSON_INDENT(2));
    json_decref(o);
    if (rc < 0 || rename(tmp, path) < 0) {
        int e = errno ? errno : EIO;
        unlink(tmp);
        return hrm_errorf(err, -e, "cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

bool nodeperf_cache_fits(const struct node_perf *c, double speed, int64_t disk_bps)
{
    return c->cpu > 0 && c->mem_bw > 0 && c->disk_bw > 0 && fabs(c->speed - speed) < 1e-9 &&
           c->disk_bps == disk_bps;
}

int nodeperf_parse_speed(const char *flag, const char *text, double *out, char *why, size_t len)
{
    char *end;
    double v = text ? strtod(text, &end) : 0;
    if (!text || end == text || *end || !isfinite(v) || !(v > 0 && v <= 1)) {
        snprintf(why, len, "%s: '%s': expected a share of the host's CPUs in (0, 1], like 0.5",
                 flag, text ? text : "");
        return -1;
    }
    *out = v;
    return 0;
}

int nodeperf_parse_bps(const char *flag, const char *text, int64_t *out, char *why, size_t len)
{
    double rate = 0;
    int64_t size = 0;
    if (text && hrm_parse_rate(text, &rate) == 0 && rate >= 1) {
        *out = (int64_t)rate;
        return 0;
    }
    if (text && hrm_parse_size(text, &size) == 0 && size > 0) {
        *out = size;
        return 0;
    }
    snprintf(why, len, "%s: '%s': expected a write rate above 0, like 50MB/s or 20M (bytes per "
             "second)", flag, text ? text : "");
    return -1;
}

int nodeperf_parse_list(const char *flag, const char *text, double *out_speed, int64_t *out_bps,
                        int max, int *n, char *why, size_t len)
{
    char buf[1024];
    if (!text || !*text || strlen(text) >= sizeof(buf)) {
        snprintf(why, len, "%s: expected a comma-separated list of values", flag);
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", text);
    int k = 0;
    /* strtok_r would skip empty items ("1,,0.5"): split by hand so they are refused. */
    for (char *item = buf, *next; item; item = next) {
        next = strchr(item, ',');
        if (next)
            *next++ = '\0';
        if (k == max) {
            snprintf(why, len, "%s: at most %d values", flag, max);
            return -1;
        }
        int rc = out_speed ? nodeperf_parse_speed(flag, item, &out_speed[k], why, len)
                           : nodeperf_parse_bps(flag, item, &out_bps[k], why, len);
        if (rc < 0)
            return -1;
        k++;
    }
    *n = k;
    return 0;
}

/* The largest and smallest positive value of a figure over the nodes; 0 when none. */
static void known_range(const struct node_perf *perf, int n, size_t off, double *lo, double *hi)
{
    *lo = *hi = 0;
    for (int i = 0; i < n; i++) {
        double v = *(const double *)((const char *)&perf[i] + off);
        if (v > 0) {
            *hi = fmax(*hi, v);
            *lo = *lo > 0 ? fmin(*lo, v) : v;
        }
    }
}

void nodeperf_map(const struct node_perf *perf, int n, double *cpu_speed, double *disk_bw)
{
    double clo, chi, dlo, dhi;
    known_range(perf, n, offsetof(struct node_perf, cpu), &clo, &chi);
    known_range(perf, n, offsetof(struct node_perf, disk_bw), &dlo, &dhi);
    for (int i = 0; i < n; i++) {
        double c = perf[i].cpu > 0 ? perf[i].cpu : clo;
        cpu_speed[i] = chi > 0 ? c / chi : 1.0;
        disk_bw[i] = perf[i].disk_bw > 0 ? perf[i].disk_bw : dlo;
    }
}
