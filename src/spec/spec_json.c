/* JSON helpers of the spec reader: paths for messages, file loading, typed getters, name sets. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/hash.h"
#include "hrm/readfile.h"
#include "hrm/units.h"
#include "spec/spec_private.h"

/* ---- paths and messages ---- */

static size_t push_fmt(struct spec_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static size_t push_fmt(struct spec_ctx *c, const char *fmt, ...)
{
    size_t mark = c->plen;
    size_t room = sizeof(c->path) - c->plen;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->path + c->plen, room, fmt, ap);
    va_end(ap);
    /* A path too long for the buffer is kept truncated: messages stay useful. */
    if (n < 0)
        c->path[c->plen] = '\0';
    else if ((size_t)n >= room)
        c->plen = sizeof(c->path) - 1;
    else
        c->plen += (size_t)n;
    return mark;
}

size_t spec_push_key(struct spec_ctx *c, const char *key)
{
    return push_fmt(c, c->plen ? ".%.64s" : "%.64s", key);
}

size_t spec_push_index(struct spec_ctx *c, size_t i)
{
    return push_fmt(c, "[%zu]", i);
}

void spec_pop(struct spec_ctx *c, size_t mark)
{
    c->plen = mark;
    c->path[mark] = '\0';
}

static int fail_v(struct spec_ctx *c, const char *fmt, va_list ap)
{
    char reason[HRM_ERROR_TEXT_MAX];
    vsnprintf(reason, sizeof(reason), fmt, ap);
    if (c->plen)
        return hrm_errorf(c->err, -HRM_ESPEC, "%s: %s: %s", c->file, c->path, reason);
    return hrm_errorf(c->err, -HRM_ESPEC, "%s: %s", c->file, reason);
}

int spec_fail(struct spec_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_v(c, fmt, ap);
    va_end(ap);
    return rc;
}

int spec_fail_key(struct spec_ctx *c, const char *key, const char *fmt, ...)
{
    size_t mark = spec_push_key(c, key);
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_v(c, fmt, ap);
    va_end(ap);
    spec_pop(c, mark);
    return rc;
}

const char *spec_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "a list";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "?";
}

/* ---- files ---- */

json_t *spec_parse_text(const char *text, size_t len, const char *display, struct hrm_error *err)
{
    json_error_t jerr;
    /* Duplicate keys are almost always a mistake in a hand-written spec. */
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        hrm_errorf(err, -HRM_ESPEC, "%s: not valid JSON: line %d, column %d: %s", display,
                   jerr.line, jerr.column, jerr.text);
    return root;
}

json_t *spec_read_file(const char *fs_path, const char *display, struct hrm_error *err)
{
    char *buf;
    size_t len;
    if (hrm_read_regular_file(fs_path, display, SPEC_MAX_FILE, &buf, &len, err) < 0)
        return NULL;
    json_t *root = spec_parse_text(buf, len, display, err);
    hrm_free(buf);
    return root;
}

/* ---- shapes of values ---- */

static bool allowed_key(const char *key, const char *const *known)
{
    if (strcmp(key, "comment") == 0)
        return true;
    for (size_t i = 0; known[i]; i++)
        if (strcmp(key, known[i]) == 0)
            return true;
    return false;
}

int spec_object(struct spec_ctx *c, const json_t *v, const char *const *known)
{
    if (!json_is_object(v))
        return spec_fail(c, "must be an object, not %s", spec_type_name(v));
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        (void)val;
        if (!allowed_key(key, known))
            return spec_fail(c, "unknown key \"%.64s\"", key);
    }
    return 0;
}

int spec_array(struct spec_ctx *c, const json_t *v, bool nonempty)
{
    if (!json_is_array(v))
        return spec_fail(c, "must be a list, not %s", spec_type_name(v));
    if (nonempty && json_array_size(v) == 0)
        return spec_fail(c, "must not be an empty list");
    return 0;
}

/* Common shape of the key getters: absent/required handling and the path. */
#define KEY_GETTER(c, obj, key, flags, call)                                                       \
    do {                                                                                           \
        const json_t *v_ = json_object_get((obj), (key));                                          \
        if (!v_) {                                                                                 \
            if ((flags)&SPEC_REQUIRED)                                                             \
                return spec_fail((c), "missing key \"%s\"", (key));                                \
            return 0;                                                                              \
        }                                                                                          \
        size_t mark_ = spec_push_key((c), (key));                                                  \
        int rc_ = (call);                                                                          \
        spec_pop((c), mark_);                                                                      \
        return rc_;                                                                                \
    } while (0)

int spec_int_value(struct spec_ctx *c, const json_t *v, int64_t min, int64_t max, int64_t *out)
{
    if (!json_is_integer(v))
        return spec_fail(c, "must be an integer, not %s", spec_type_name(v));
    json_int_t x = json_integer_value(v);
    if (x < min || x > max) {
        if (max == INT64_MAX)
            return spec_fail(c, "must be an integer >= %" PRId64 ", not %" PRId64, min, (int64_t)x);
        return spec_fail(c, "must be an integer within %" PRId64 "..%" PRId64 ", not %" PRId64, min,
                         max, (int64_t)x);
    }
    *out = x;
    return 0;
}

int spec_int(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, int64_t min,
             int64_t max, int64_t *out)
{
    KEY_GETTER(c, obj, key, flags, spec_int_value(c, v_, min, max, out));
}

int spec_num_value(struct spec_ctx *c, const json_t *v, double min, double max, double *out)
{
    if (!json_is_number(v))
        return spec_fail(c, "must be a number, not %s", spec_type_name(v));
    double x = json_number_value(v);
    if (!(x >= min && x <= max)) {
        if (isinf(max))
            return spec_fail(c, "must be a number >= %.15g, not %.15g", min, x);
        return spec_fail(c, "must be a number within %.15g..%.15g, not %.15g", min, max, x);
    }
    *out = x;
    return 0;
}

int spec_num(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, double min,
             double max, double *out)
{
    KEY_GETTER(c, obj, key, flags, spec_num_value(c, v_, min, max, out));
}

/* Sizes and durations are strings so that the unit is never guessed; the
 * bare number 0 is the one value that needs no unit. */
int spec_size_value(struct spec_ctx *c, const json_t *v, unsigned flags, int64_t *out)
{
    const char *what = (flags & SPEC_POSITIVE) ? "must be a positive size like \"2G\""
                                               : "must be a size like \"2G\"";
    int64_t x;
    if (json_is_integer(v) && json_integer_value(v) == 0)
        x = 0;
    else if (!json_is_string(v) || hrm_parse_size(json_string_value(v), &x) != 0)
        return spec_fail(c, "%s", what);
    if ((flags & SPEC_POSITIVE) && x <= 0)
        return spec_fail(c, "%s", what);
    /* units.h reads "32" as 32 bytes; in a hand-written spec that is nearly
     * always a forgotten "G", so a non-zero size must name its unit ("32B"). */
    const char *str = json_is_string(v) ? json_string_value(v) : "0";
    size_t n = strlen(str);
    while (n > 0 && isspace((unsigned char)str[n - 1]))
        n--;
    if (x != 0 && n > 0 && !isalpha((unsigned char)str[n - 1]))
        return spec_fail(c,
                         "\"%.32s\" has no unit: write \"%.32sG\", \"%.32sM\" or, for bytes, "
                         "\"%.32sB\"",
                         str, str, str, str);
    /* 1 PiB per value keeps every sum of sizes far from int64 overflow. */
    if (x > ((int64_t)1 << 50))
        return spec_fail(c, "size larger than 1P");
    *out = x;
    return 0;
}

int spec_size(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, int64_t *out)
{
    KEY_GETTER(c, obj, key, flags, spec_size_value(c, v_, flags, out));
}

/* 1000 days: longer than any experiment, and sums of many stay within int64. */
#define MAX_DURATION_US ((int64_t)1000 * 86400 * 1000000)

int spec_duration_value(struct spec_ctx *c, const json_t *v, unsigned flags, int64_t *out)
{
    const char *what = (flags & SPEC_POSITIVE) ? "must be a positive duration like \"2s\""
                                               : "must be a duration like \"2s\"";
    int64_t x;
    if (json_is_integer(v) && json_integer_value(v) == 0)
        x = 0;
    else if (!json_is_string(v) || hrm_parse_duration(json_string_value(v), &x) != 0)
        return spec_fail(c, "%s", what);
    if ((flags & SPEC_POSITIVE) && x <= 0)
        return spec_fail(c, "%s", what);
    if (x > MAX_DURATION_US)
        return spec_fail(c, "duration longer than 1000 days");
    *out = x;
    return 0;
}

int spec_duration(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags,
                  int64_t *out)
{
    KEY_GETTER(c, obj, key, flags, spec_duration_value(c, v_, flags, out));
}

static int rate_value(struct spec_ctx *c, const json_t *v, double *out)
{
    double x;
    if (!json_is_string(v) || hrm_parse_rate(json_string_value(v), &x) != 0 || !(x > 0) || x > 1e15)
        return spec_fail(c, "must be a positive rate like \"1Gb/s\" or \"160MB/s\"");
    *out = x;
    return 0;
}

int spec_rate(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, double *out)
{
    KEY_GETTER(c, obj, key, flags, rate_value(c, v_, out));
}

static int cpu_value(struct spec_ctx *c, const json_t *v, unsigned flags, int64_t *out)
{
    const char *what = (flags & SPEC_POSITIVE)
                           ? "must be a positive number of cores (2, 0.5) or milli-cores (\"500m\")"
                           : "must be a number of cores (2, 0.5) or milli-cores (\"500m\")";
    int64_t x;
    if (json_is_number(v)) {
        double d = json_number_value(v);
        if (!(d >= 0 && d <= 1e9))
            return spec_fail(c, "%s", what);
        x = (int64_t)llround(d * 1000.0);
    } else if (!json_is_string(v) || hrm_parse_cpu(json_string_value(v), &x) != 0 ||
               x > (int64_t)1e12) {
        return spec_fail(c, "%s", what);
    }
    if ((flags & SPEC_POSITIVE) && x <= 0)
        return spec_fail(c, "%s", what);
    *out = x;
    return 0;
}

int spec_cpu(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags, int64_t *out)
{
    KEY_GETTER(c, obj, key, flags, cpu_value(c, v_, flags, out));
}

bool spec_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= HRM_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)name[i];
        /* Names appear in reports, CSV files and "policy.key=value" strings. */
        if (ch <= ' ' || ch == 0x7f || ch == '"' || ch == ',' || ch == '=')
            return false;
    }
    return true;
}

int spec_name_value(struct spec_ctx *c, const json_t *v, const char **out)
{
    if (!json_is_string(v))
        return spec_fail(c, "must be a name (a string), not %s", spec_type_name(v));
    const char *s = json_string_value(v);
    if (!spec_name_ok(s))
        return spec_fail(c,
                         "must be a name of 1..%d characters without spaces, quotes, commas "
                         "or '='",
                         HRM_NAME_MAX - 1);
    *out = s;
    return 0;
}

int spec_name(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags,
              const char **out)
{
    KEY_GETTER(c, obj, key, flags, spec_name_value(c, v_, out));
}

static int choice_value(struct spec_ctx *c, const json_t *v, const char *const *choices, int *out)
{
    if (json_is_string(v)) {
        for (int i = 0; choices[i]; i++)
            if (strcmp(json_string_value(v), choices[i]) == 0) {
                *out = i;
                return 0;
            }
    }
    char list[160] = "";
    size_t off = 0;
    for (int i = 0; choices[i] && off < sizeof(list); i++)
        off +=
            (size_t)snprintf(list + off, sizeof(list) - off, "%s\"%s\"", i ? ", " : "", choices[i]);
    return spec_fail(c, "must be one of %s", list);
}

int spec_choice(struct spec_ctx *c, const json_t *obj, const char *key, unsigned flags,
                const char *const *choices, int *out)
{
    KEY_GETTER(c, obj, key, flags, choice_value(c, v_, choices, out));
}

/* ---- name sets ---- */

static uint64_t hash_name(const char *s)
{
    return hrm_hash_str(s);
}

void spec_names_init(struct spec_names *s, const char *(*name_of)(const void *, int32_t),
                     const void *owner)
{
    memset(s, 0, sizeof(*s));
    s->name_of = name_of;
    s->owner = owner;
}

void spec_names_fini(struct spec_names *s)
{
    hrm_free(s->slots);
    s->slots = NULL;
    s->cap = s->n = 0;
}

int32_t spec_names_find(const struct spec_names *s, const char *name)
{
    if (s->cap == 0)
        return -1;
    size_t mask = s->cap - 1;
    for (size_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
        int32_t slot = s->slots[i];
        if (slot == 0)
            return -1;
        if (strcmp(s->name_of(s->owner, slot - 1), name) == 0)
            return slot - 1;
    }
}

static void names_insert(struct spec_names *s, int32_t id)
{
    size_t mask = s->cap - 1;
    size_t i = hash_name(s->name_of(s->owner, id)) & mask;
    while (s->slots[i] != 0)
        i = (i + 1) & mask;
    s->slots[i] = id + 1;
}

void spec_names_add(struct spec_names *s, int32_t id)
{
    /* Keep the load at most one half so probes stay short. */
    if (2 * (s->n + 1) > s->cap) {
        int32_t *old = s->slots;
        size_t old_cap = s->cap;
        s->cap = old_cap ? old_cap * 2 : 64;
        s->slots = hrm_calloc(s->cap, sizeof(*s->slots));
        for (size_t i = 0; i < old_cap; i++)
            if (old[i])
                names_insert(s, old[i] - 1);
        hrm_free(old);
    }
    names_insert(s, id);
    s->n++;
}
