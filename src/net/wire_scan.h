/* A cursor over a frame's text for the readers that skip jansson's tree (wire_hot.c, wire_launch.c): each step takes the one form our peers write and declines the rest. */
#ifndef HRM_NET_WIRE_SCAN_H
#define HRM_NET_WIRE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hrm/jsontext.h"

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

#endif
