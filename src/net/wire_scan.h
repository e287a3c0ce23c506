/* A cursor over a frame's text for the readers that skip jansson's tree (wire_hot.c, wire_launch.c): each step takes the one form our peers write and declines the rest. */
#ifndef HRM_NET_WIRE_SCAN_H
#define HRM_NET_WIRE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hrm/jsontext.h"
#include "hrm/wire.h"

struct scan {
    const char *p, *end;
};

static inline void scan_ws(struct scan *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

static inline bool scan_eat(struct scan *c, char ch)
{
    scan_ws(c);
    if (c->p >= c->end || *c->p != ch)
        return false;
    c->p++;
    return true;
}

/* A string of printable ASCII without escapes: *s, *n its bytes in the text.  Anything else
 * (an escape, a control character, a byte over 0x7E, no end) is declined: jansson judges it. */
static inline bool scan_plain_string(struct scan *c, const char **s, size_t *n)
{
    if (!scan_eat(c, '"'))
        return false;
    const char *start = c->p;
    while (c->p < c->end && *c->p != '"') {
        unsigned char ch = (unsigned char)*c->p;
        if (ch < 0x20 || ch > 0x7E || ch == '\\')
            return false;
        c->p++;
    }
    if (c->p >= c->end)
        return false;
    *s = start;
    *n = (size_t)(c->p - start);
    c->p++;
    return true;
}

/* An integer as jansson reads one (a real, which the schemas refuse, is declined). */
static inline bool scan_integer(struct scan *c, int64_t *v)
{
    scan_ws(c);
    json_int_t x;
    const char *p = hrm_json_scan_integer(c->p, c->end, &x);
    if (!p)
        return false;
    *v = x;
    c->p = p;
    return true;
}

static inline bool scan_boolean(struct scan *c, bool *v)
{
    scan_ws(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "true", 4) == 0) {
        *v = true;
        c->p += 4;
        return true;
    }
    if (left >= 5 && memcmp(c->p, "false", 5) == 0) {
        *v = false;
        c->p += 5;
        return true;
    }
    return false;
}

/* A field kind of wire.h's schemas: i integer >= 0, u 0 .. INT32_MAX, z any integer. */
static inline bool scan_in_kind(char kind, int64_t v)
{
    switch (kind) {
    case 'i':
        return v >= 0;
    case 'u':
        return v >= 0 && v <= INT32_MAX;
    default:
        return true;
    }
}

/* A field a reader knows: its key and its kind, as the schemas of wire.h spell them. */
struct scan_field {
    const char *name;
    char kind;
};

/* The next key of an object, and its ':': its index in fields[0, nfields) (each field a bit
 * of *seen), or -1 for a key no field has, a key seen before (a duplicate, which jansson
 * refuses) or anything that is not a plain key. */
static inline int scan_key(struct scan *c, const struct scan_field *fields, int nfields,
                           unsigned *seen)
{
    const char *k;
    size_t n;
    if (!scan_plain_string(c, &k, &n) || !scan_eat(c, ':') || n == 0)
        return -1;
    for (int f = 0; f < nfields; f++)
        if (fields[f].name[0] == k[0] && strlen(fields[f].name) == n &&
            memcmp(fields[f].name, k, n) == 0) {
            if (*seen & (1u << f))
                return -1;
            *seen |= 1u << f;
            return f;
        }
    return -1;
}

/* A message type a reader takes, with the fields (bits of the reader's own table) it allows
 * and those it needs. */
struct scan_type {
    const char *name;
    int type;
    unsigned allowed, needed;
};

/* The type named s (n bytes) among types[0, ntypes) when the fields seen are its own and
 * include those it needs, and (alone: the frame itself, whose "v" the generic decoder checks)
 * v_seen with v the wire's version; NULL otherwise. */
static inline const struct scan_type *scan_type_check(const struct scan_type *types, size_t ntypes,
                                                      const char *s, size_t n, unsigned seen,
                                                      bool alone, bool v_seen, int64_t v)
{
    const struct scan_type *t = NULL;
    for (size_t i = 0; i < ntypes && !t; i++)
        if (strlen(types[i].name) == n && memcmp(types[i].name, s, n) == 0)
            t = &types[i];
    if (!t || (seen & ~t->allowed) || (seen & t->needed) != t->needed)
        return NULL;
    if (alone && (!v_seen || v != HRM_WIRE_VERSION))
        return NULL;
    return t;
}

/* The frame as a batch: {"v":1,"type":"batch","msgs":[ITEM,...]} with its keys in any order,
 * each once, and nothing else (a "req", another field); item reads each of msgs' items, with
 * ctx.  A lone message is declined at its first field but "v". */
static inline bool scan_batch(struct scan *c, bool (*item)(struct scan *c, void *ctx), void *ctx)
{
    bool v = false, type = false, msgs = false;
    if (!scan_eat(c, '{'))
        return false;
    do {
        const char *k, *s;
        size_t kn, sn;
        int64_t x;
        if (!scan_plain_string(c, &k, &kn) || !scan_eat(c, ':'))
            return false;
        if (kn == 1 && k[0] == 'v' && !v) {
            v = true;
            if (!scan_integer(c, &x) || x != HRM_WIRE_VERSION)
                return false;
        } else if (kn == 4 && memcmp(k, "type", 4) == 0 && !type) {
            type = true;
            if (!scan_plain_string(c, &s, &sn) || sn != 5 || memcmp(s, "batch", 5) != 0)
                return false;
        } else if (kn == 4 && memcmp(k, "msgs", 4) == 0 && !msgs) {
            msgs = true;
            if (!scan_eat(c, '['))
                return false;
            if (!scan_eat(c, ']')) {
                do {
                    if (!item(c, ctx))
                        return false;
                } while (scan_eat(c, ','));
                if (!scan_eat(c, ']'))
                    return false;
            }
        } else {
            return false;
        }
    } while (scan_eat(c, ','));
    return scan_eat(c, '}') && v && type && msgs;
}

#endif
