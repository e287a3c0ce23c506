/* JSON text to and from jansson trees: jansson's compact output byte for byte, and its parser's trees, without its per-byte callbacks. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/jsontext.h"

/* ---- UTF-8, by jansson's rules (utf8.c): no overlong forms, no surrogates, nothing over
 * U+10FFFF.  Returns the length of the sequence at s, 0 if it is not valid. ---- */

static size_t utf8_seq(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    size_t n;
    uint32_t v;
    if (c < 0x80)
        return 1;
    if (c < 0xC2)
        return 0; /* a continuation byte, or an overlong 2-byte form */
    if (c < 0xE0) {
        n = 2;
        v = c & 0x1F;
    } else if (c < 0xF0) {
        n = 3;
        v = c & 0x0F;
    } else if (c < 0xF5) {
        n = 4;
        v = c & 0x07;
    } else {
        return 0;
    }
    if (n > avail)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || (n == 3 && v < 0x800) ||
        (n == 4 && v < 0x10000))
        return 0;
    return n;
}

/* ---- writing ---- */

static void out_reserve(struct hrm_jtext *o, size_t more)
{
    if (o->len + more <= o->cap)
        return;
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + more)
        cap *= 2;
    o->p = hrm_realloc(o->p, cap);
    o->cap = cap;
}

static void out_put(struct hrm_jtext *o, const char *s, size_t n)
{
    out_reserve(o, n);
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void out_ch(struct hrm_jtext *o, char c)
{
    out_reserve(o, 1);
    o->p[o->len++] = c;
}

static void out_int(struct hrm_jtext *o, json_int_t v)
{
    char tmp[24];
    size_t n = 0;
    /* Through unsigned: the most negative value has no positive counterpart. */
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    out_reserve(o, n + 1);
    if (v < 0)
        o->p[o->len++] = '-';
    while (n)
        o->p[o->len++] = tmp[--n];
}

/* jansson's dump_string: \\ \" \b \f \n \r \t, \u00XX (upper-case hex) for the other control
 * characters, everything else as it is; false on invalid UTF-8 (json_dumps fails then). */
static bool out_string(struct hrm_jtext *o, const char *str, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)str;
    out_reserve(o, len + 2);
    o->p[o->len++] = '"';
    size_t run = 0; /* bytes from s[run] on that need no escape, not yet copied */
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        if (c >= 0x80) {
            size_t n = utf8_seq(s + i, len - i);
            if (n == 0)
                return false;
            i += n;
            continue;
        }
        if (c != '"' && c != '\\' && c >= 0x20) {
            i++;
            continue;
        }
        out_put(o, str + run, i - run);
        char esc[6] = {'\\', 0, '0', '0', hex[c >> 4], hex[c & 15]};
        size_t n = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            esc[1] = 'u';
            n = 6;
        }
        out_put(o, esc, n);
        run = ++i;
    }
    out_put(o, str + run, len - run);
    out_ch(o, '"');
    return true;
}

static bool out_value(struct hrm_jtext *o, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        out_ch(o, '{');
        bool first = true;
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            if (!first)
                out_ch(o, ',');
            first = false;
            if (!out_string(o, json_object_iter_key(it), json_object_iter_key_len(it)))
                return false;
            out_ch(o, ':');
            if (!out_value(o, json_object_iter_value(it)))
                return false;
        }
        out_ch(o, '}');
        return true;
    }
    case JSON_ARRAY: {
        out_ch(o, '[');
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            if (i)
                out_ch(o, ',');
            if (!out_value(o, json_array_get(v, i)))
                return false;
        }
        out_ch(o, ']');
        return true;
    }
    case JSON_STRING:
        return out_string(o, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        out_int(o, json_integer_value(v));
        return true;
    case JSON_REAL: { /* rare on the wire: jansson's own spelling ("%.17g", then ".0" etc.) */
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!s)
            return false;
        out_put(o, s, strlen(s));
        free(s);
        return true;
    }
    case JSON_TRUE:
        out_put(o, "true", 4);
        return true;
    case JSON_FALSE:
        out_put(o, "false", 5);
        return true;
    case JSON_NULL:
        out_put(o, "null", 4);
        return true;
    }
    return false;
}

char *hrm_json_dump(const json_t *v, size_t *len)
{
    if (!json_is_object(v) && !json_is_array(v))
        return NULL; /* as json_dumps without JSON_ENCODE_ANY */
    struct hrm_jtext o = {0};
    if (!out_value(&o, v)) {
        hrm_free(o.p);
        return NULL;
    }
    out_ch(&o, '\0');
    if (len)
        *len = o.len - 1;
    return o.p;
}

void hrm_jtext_put(struct hrm_jtext *t, const char *s, size_t n)
{
    out_put(t, s, n);
}

void hrm_jtext_int(struct hrm_jtext *t, json_int_t v)
{
    out_int(t, v);
}

void hrm_jtext_key(struct hrm_jtext *t, const char *name)
{
    out_put(t, ",\"", 2);
    out_put(t, name, strlen(name));
    out_put(t, "\":", 2);
}

void hrm_jtext_field_int(struct hrm_jtext *t, const char *name, json_int_t v)
{
    hrm_jtext_key(t, name);
    out_int(t, v);
}

bool hrm_jtext_string(struct hrm_jtext *t, const char *s, size_t n)
{
    size_t at = t->len;
    if (out_string(t, s, n))
        return true;
    t->len = at;
    return false;
}

bool hrm_jtext_value(struct hrm_jtext *t, const json_t *v)
{
    size_t at = t->len;
    if (out_value(t, v))
        return true;
    t->len = at;
    return false;
}

char *hrm_jtext_take(struct hrm_jtext *t, size_t *len)
{
    out_ch(t, '\0');
    if (len)
        *len = t->len - 1;
    char *p = t->p;
    *t = (struct hrm_jtext){0};
    return p;
}

/* ---- reading ---- */

/* Deeper texts go to jansson, whose own limit (2,048) and error then apply. */
#define FAST_MAX_DEPTH 256

struct in {
    const char *p, *end;
    size_t flags;
    char *scratch; /* unescaped strings */
    size_t cap_scratch;
};

static void skip_ws(struct in *in)
{
    while (in->p < in->end &&
           (*in->p == ' ' || *in->p == '\n' || *in->p == '\r' || *in->p == '\t'))
        in->p++;
}

/*
 * A string whose opening quote has been read: *s and *n its bytes (in the text when it has no
 * escape, else in the scratch buffer).  False for what jansson must judge: \u escapes (and
 * the NUL they may spell), control characters, invalid UTF-8, a bad escape, no end.
 */
static bool read_string(struct in *in, const char **s, size_t *n)
{
    const unsigned char *p = (const unsigned char *)in->p, *end = (const unsigned char *)in->end;
    const unsigned char *start = p;
    size_t out = 0;
    bool escaped = false;
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            if (!escaped) {
                *s = (const char *)start;
                *n = (size_t)(p - start);
            } else {
                *s = in->scratch;
                *n = out;
            }
            in->p = (const char *)p + 1;
            return true;
        }
        if (c < 0x20)
            return false;
        size_t len = 1;
        char put = (char)c;
        if (c == '\\') {
            if (p + 1 >= end)
                return false;
            switch (p[1]) {
            case '"': put = '"'; break;
            case '\\': put = '\\'; break;
            case '/': put = '/'; break;
            case 'b': put = '\b'; break;
            case 'f': put = '\f'; break;
            case 'n': put = '\n'; break;
            case 'r': put = '\r'; break;
            case 't': put = '\t'; break;
            default:
                return false; /* \u, or not an escape */
            }
            if (!escaped) { /* from here on the string is built in the scratch buffer */
                escaped = true;
                out = (size_t)(p - start);
                HRM_GROW(in->scratch, in->cap_scratch, (size_t)(end - start) + 1);
                memcpy(in->scratch, start, out);
            }
            in->scratch[out++] = put;
            p += 2;
            continue;
        }
        if (c >= 0x80 && (len = utf8_seq(p, (size_t)(end - p))) == 0)
            return false;
        if (escaped) {
            memcpy(in->scratch + out, p, len);
            out += len;
        }
        p += len;
    }
    return false;
}

const char *hrm_json_scan_integer(const char *p, const char *end, json_int_t *v)
{
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    }
    if (p >= end || *p < '0' || *p > '9')
        return NULL;
    if (*p == '0' && p + 1 < end && p[1] >= '0' && p[1] <= '9')
        return NULL;
    unsigned long long u = 0, limit = neg ? (unsigned long long)INT64_MAX + 1 : INT64_MAX;
    while (p < end && *p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (u > (limit - d) / 10)
            return NULL;
        u = u * 10 + d;
        p++;
    }
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E'))
        return NULL;
    *v = neg ? (json_int_t)(0ull - u) : (json_int_t)u;
    return p;
}

static bool read_integer(struct in *in, json_int_t *v)
{
    const char *p = hrm_json_scan_integer(in->p, in->end, v);
    if (!p)
        return false;
    in->p = p;
    return true;
}

static bool literal(struct in *in, const char *word, size_t n)
{
    if ((size_t)(in->end - in->p) < n || memcmp(in->p, word, n) != 0)
        return false;
    in->p += n;
    return true;
}

static json_t *read_value(struct in *in, int depth);

/* After an object's or an array's item: 0 at its end (read), 1 at a comma (read), -1 else. */
static int after_item(struct in *in, char close)
{
    skip_ws(in);
    if (in->p >= in->end || (*in->p != close && *in->p != ','))
        return -1;
    return *in->p++ == ',';
}

static json_t *read_object(struct in *in, int depth)
{
    json_t *obj = json_object();
    skip_ws(in);
    if (in->p < in->end && *in->p == '}') {
        in->p++;
        return obj;
    }
    for (;;) {
        const char *key;
        size_t klen;
        if (in->p >= in->end || *in->p != '"')
            goto fail;
        in->p++;
        if (!read_string(in, &key, &klen))
            goto fail;
        /* A key unescaped into the scratch buffer must outlive the value's own strings. */
        char *kcopy = NULL;
        if (key == in->scratch) {
            kcopy = hrm_alloc(klen + 1);
            memcpy(kcopy, key, klen);
            key = kcopy;
        }
        bool dup = (in->flags & JSON_REJECT_DUPLICATES) && json_object_getn(obj, key, klen);
        skip_ws(in);
        json_t *v = NULL;
        if (!dup && in->p < in->end && *in->p == ':') {
            in->p++;
            v = read_value(in, depth);
        }
        int rc = v ? json_object_setn_new_nocheck(obj, key, klen, v) : -1;
        hrm_free(kcopy);
        if (rc < 0)
            goto fail;
        int next = after_item(in, '}');
        if (next < 0)
            goto fail;
        if (next == 0)
            return obj;
        skip_ws(in);
    }
fail:
    json_decref(obj);
    return NULL;
}

static json_t *read_array(struct in *in, int depth)
{
    json_t *arr = json_array();
    skip_ws(in);
    if (in->p < in->end && *in->p == ']') {
        in->p++;
        return arr;
    }
    for (;;) {
        json_t *v = read_value(in, depth);
        if (!v || json_array_append_new(arr, v) < 0)
            goto fail;
        int next = after_item(in, ']');
        if (next < 0)
            goto fail;
        if (next == 0)
            return arr;
    }
fail:
    json_decref(arr);
    return NULL;
}

static json_t *read_value(struct in *in, int depth)
{
    skip_ws(in);
    if (in->p >= in->end)
        return NULL;
    switch (*in->p) {
    case '{':
        if (depth >= FAST_MAX_DEPTH)
            return NULL;
        in->p++;
        return read_object(in, depth + 1);
    case '[':
        if (depth >= FAST_MAX_DEPTH)
            return NULL;
        in->p++;
        return read_array(in, depth + 1);
    case '"': {
        const char *s;
        size_t n;
        in->p++;
        return read_string(in, &s, &n) ? json_stringn_nocheck(s, n) : NULL;
    }
    case 't':
        return literal(in, "true", 4) ? json_true() : NULL;
    case 'f':
        return literal(in, "false", 5) ? json_false() : NULL;
    case 'n':
        return literal(in, "null", 4) ? json_null() : NULL;
    default: {
        json_int_t v;
        return read_integer(in, &v) ? json_integer(v) : NULL;
    }
    }
}

int hrm_json_parse_fast(const char *buf, size_t len, size_t flags, json_t **out)
{
    *out = NULL;
    if (!buf || (flags & ~(size_t)JSON_REJECT_DUPLICATES))
        return 0;
    struct in in = {.p = buf, .end = buf + len, .flags = flags};
    skip_ws(&in);
    json_t *v = NULL;
    /* As json_loadb without JSON_DECODE_ANY: an object or an array, then only white space. */
    if (in.p < in.end && (*in.p == '{' || *in.p == '['))
        v = read_value(&in, 0);
    hrm_free(in.scratch);
    if (v) {
        skip_ws(&in);
        if (in.p != in.end) {
            json_decref(v);
            v = NULL;
        }
    }
    *out = v;
    return v != NULL;
}

json_t *hrm_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error)
{
    json_t *v;
    if (hrm_json_parse_fast(buf, len, flags, &v)) {
        if (error) { /* as jansson leaves it after a success */
            memset(error, 0, sizeof(*error));
            error->line = error->column = -1;
            snprintf(error->source, sizeof(error->source), "<buffer>");
        }
        return v;
    }
    return json_loadb(buf, len, flags, error);
}
