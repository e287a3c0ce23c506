/* Parsing and printing of sizes, durations, rates and CPU amounts. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hrm/units.h"

/* Splits "1.5Gb/s" into a finite non-negative number and the suffix after it. */
static int parse_number(const char *s, double *num, const char **suffix)
{
    if (!s)
        return -EINVAL;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0' || *s == '-' || *s == '+')
        return -EINVAL;
    /* strtod accepts hex, inf and nan: allow digits and one dot only. */
    const char *p = s;
    int digits = 0, dots = 0;
    while (isdigit((unsigned char)*p) || *p == '.') {
        if (*p == '.')
            dots++;
        else
            digits++;
        p++;
    }
    if (digits == 0 || dots > 1)
        return -EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end != p || !isfinite(v) || v < 0)
        return -EINVAL;
    while (isspace((unsigned char)*end))
        end++;
    *num = v;
    *suffix = end;
    return 0;
}

static int trailing_ok(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

static int to_int64(double v, int64_t *out)
{
    if (!(v < 9.2e18))
        return -ERANGE;
    *out = (int64_t)llround(v);
    return 0;
}

/* A unit suffix and what one of it is worth in the parser's base unit. */
struct unit {
    const char *name;
    double mult;
};

#define NUNITS(units) (sizeof(units) / sizeof((units)[0]))

/* Splits s into a number (*v) and the unit of units[0..n) whose name is the whole suffix, blanks
 * allowed after it, compared with cmp (strncmp, or strncasecmp where case does not matter): *u,
 * NULL when the suffix names none.  0, or -EINVAL when s does not start with a number. */
static int parse_quantity(const char *s, const struct unit *units, size_t n,
                          int (*cmp)(const char *, const char *, size_t), double *v,
                          const struct unit **u)
{
    const char *suf;
    int rc = parse_number(s, v, &suf);
    if (rc)
        return rc;
    size_t len = strcspn(suf, " \t");
    *u = NULL;
    for (size_t i = 0; i < n && !*u; i++) {
        if (strlen(units[i].name) == len && cmp(suf, units[i].name, len) == 0 &&
            trailing_ok(suf + len))
            *u = &units[i];
    }
    return 0;
}

int hrm_parse_size(const char *s, int64_t *bytes)
{
    static const struct unit units[] = {
        {"", 1},           {"B", 1},
        {"K", 0x1p10},     {"KB", 0x1p10},  {"KiB", 0x1p10},
        {"M", 0x1p20},     {"MB", 0x1p20},  {"MiB", 0x1p20},
        {"G", 0x1p30},     {"GB", 0x1p30},  {"GiB", 0x1p30},
        {"T", 0x1p40},     {"TB", 0x1p40},  {"TiB", 0x1p40},
        {"P", 0x1p50},     {"PB", 0x1p50},  {"PiB", 0x1p50},
    };
    double v;
    const struct unit *u;
    int rc = parse_quantity(s, units, NUNITS(units), strncasecmp, &v, &u);
    if (rc)
        return rc;
    return u ? to_int64(v * u->mult, bytes) : -EINVAL;
}

int hrm_parse_duration(const char *s, int64_t *us)
{
    static const struct unit units[] = {
        {"", 0}, /* a bare number: only 0, the one that is unambiguous */
        {"us", 1}, {"ms", 1e3}, {"s", 1e6}, {"m", 60e6}, {"min", 60e6}, {"h", 3600e6},
    };
    double v;
    const struct unit *u;
    int rc = parse_quantity(s, units, NUNITS(units), strncmp, &v, &u);
    if (rc)
        return rc;
    if (!u || (u->mult == 0 && v != 0))
        return -EINVAL;
    return to_int64(v * u->mult, us);
}

int hrm_parse_rate(const char *s, double *bytes_per_s)
{
    static const struct unit units[] = { /* to bytes per second; case matters: b bits, B bytes */
        {"b/s", 1 / 8.0},      {"Kb/s", 1e3 / 8},   {"Mb/s", 1e6 / 8},   {"Gb/s", 1e9 / 8},
        {"B/s", 1},            {"KB/s", 1e3},       {"MB/s", 1e6},       {"GB/s", 1e9},
        {"KiB/s", 0x1p10},     {"MiB/s", 0x1p20},   {"GiB/s", 0x1p30},
        {"bps", 1 / 8.0},      {"Kbps", 1e3 / 8},   {"Mbps", 1e6 / 8},   {"Gbps", 1e9 / 8},
    };
    double v;
    const struct unit *u;
    int rc = parse_quantity(s, units, NUNITS(units), strncmp, &v, &u);
    if (rc)
        return rc;
    if (!u)
        return -EINVAL;
    *bytes_per_s = v * u->mult;
    return v > 0 ? 0 : -EINVAL;
}

int hrm_parse_cpu(const char *s, int64_t *milli)
{
    double v;
    const char *suf;
    int rc = parse_number(s, &v, &suf);
    if (rc)
        return rc;
    if (trailing_ok(suf))
        return to_int64(v * 1000.0, milli);
    if (suf[0] == 'm' && trailing_ok(suf + 1))
        return to_int64(v, milli);
    return -EINVAL;
}

char *hrm_format_size(int64_t bytes, char *buf, size_t len)
{
    static const char *const suffix[] = {"B", "K", "M", "G", "T", "P"};
    double v = (double)bytes;
    int i = 0;
    while (v >= 1024.0 && i < 5) {
        v /= 1024.0;
        i++;
    }
    if (i == 0)
        snprintf(buf, len, "%lldB", (long long)bytes);
    else
        snprintf(buf, len, "%.1f%s", v, suffix[i]);
    return buf;
}

char *hrm_format_duration(int64_t us, char *buf, size_t len)
{
    if (us < 1000)
        snprintf(buf, len, "%lldus", (long long)us);
    else if (us < 1000000)
        snprintf(buf, len, "%.1fms", us / 1e3);
    else
        snprintf(buf, len, "%.2fs", us / 1e6);
    return buf;
}
