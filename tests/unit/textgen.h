/* Generated frames for the readers that skip jansson's tree (test_onehost6_hot.c, test_onehost7.c): random picks, a text to build, white space, and integers of any range now and then odd. */
#ifndef HRM_TEST_TEXTGEN_H
#define HRM_TEST_TEXTGEN_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <stdbool.h>

#include "hrm/rng.h"

static inline uint64_t pick(struct hrm_rng *r, uint64_t n)
{
    return hrm_rng_u64(r) % n;
}

struct text {
    char p[16384];
    size_t len;
};

static inline void put(struct text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n < sizeof(t->p)) {
        memcpy(t->p + t->len, s, n);
        t->len += n;
    }
}

/* White space jansson skips, now and then. */
static inline void gap(struct hrm_rng *r, struct text *t)
{
    static const char *const ws[] = {" ", "\n", "\t ", "\r\n"};
    if (pick(r, 12) == 0)
        put(t, ws[pick(r, 4)]);
}

/* An integer field's value: a valid integer of any range, or one time in odd_in anything else
 * (out of range, a real, a string, null, an escape, UTF-8, a leading zero). */
static inline const char *random_number(struct hrm_rng *r, uint64_t odd_in, char *buf, size_t cap)
{
    static const char *const odd[] = {
        "-1", "2147483647", "2147483648", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "99999999999999999999999", "01",
        "-0", "0.0", "1.5", "1e3", "1E3", "-", "true", "false", "null", "\"7\"", "[]", "{}",
        "[1]", "\"\\u0037\"", "tru", "nul", "0x10", "+1", "\"\xc3\xa9\"", "1700000000123456"};
    if (pick(r, odd_in) == 0)
        return odd[pick(r, sizeof(odd) / sizeof(odd[0]))];
    snprintf(buf, cap, "%llu", (unsigned long long)(hrm_rng_u64(r) >> (33 + pick(r, 31))));
    return buf;
}

/* A frame: mostly a batch of 0 to 4 items from item, its head now and then odd (another
 * version, a "req", a duplicate or missing key, not an object), or an item alone. */
static inline void random_frame(struct hrm_rng *r, struct text *t,
                                void (*item)(struct hrm_rng *r, struct text *t))
{
    t->len = 0;
    static const char *const heads[] = {
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[", "{\"type\":\"batch\",\"v\":1,\"msgs\":[",
        "{ \"v\" : 1 , \"type\" : \"batch\" , \"msgs\" : [ ", "{\"v\":2,\"type\":\"batch\",\"msgs\":[",
        "{\"v\":1,\"type\":\"batch\",\"req\":3,\"msgs\":[", "{\"v\":1,\"msgs\":[",
        "{\"v\":1,\"type\":\"batch\",\"type\":\"batch\",\"msgs\":[", "{\"v\":1,\"type\":\"batches\",\"msgs\":[",
        "{\"v\":1.0,\"type\":\"batch\",\"msgs\":[", "[", "{\"v\":1,\"type\":\"batch\",\"msgs\":{"};
    if (pick(r, 4) == 0) {
        item(r, t);
        return;
    }
    bool plain = pick(r, 4) != 0;
    put(t, plain ? heads[0] : heads[pick(r, sizeof(heads) / sizeof(heads[0]))]);
    for (uint64_t i = pick(r, 5); i > 0; i--) {
        item(r, t);
        if (i > 1)
            put(t, ",");
    }
    put(t, "]");
    if (pick(r, 30) == 0)
        put(t, ",\"msgs\":[]");
    put(t, "}");
    if (pick(r, 30) == 0)
        put(t, pick(r, 2) ? " \n" : " x");
}

/* keys[0, nk) in a random order. */
static inline void shuffle(struct hrm_rng *r, const char **keys, size_t nk)
{
    for (size_t i = nk; i > 1; i--) {
        size_t j = pick(r, i);
        const char *k = keys[i - 1];
        keys[i - 1] = keys[j];
        keys[j] = k;
    }
}

/* "key": with white space now and then, after a comma unless it is the object's first. */
static inline void put_key(struct hrm_rng *r, struct text *t, const char *key, bool first)
{
    if (!first)
        put(t, ",");
    gap(r, t);
    put(t, "\"");
    put(t, key);
    put(t, "\"");
    gap(r, t);
    put(t, ":");
    gap(r, t);
}

static inline json_int_t geti(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

/* The same frame damaged three ways for check(ctx, text, len): a byte changed, cut short, a NUL
 * inside. */
static inline void damaged(struct hrm_rng *r, const struct text *t,
                           void (*check)(void *ctx, const char *p, size_t len), void *ctx)
{
    static struct text bad;
    if (t->len == 0)
        return;
    static const char subst[] = "\"\\{}[],:0-.e \x01\x80xtfn9";
    bad = *t;
    bad.p[pick(r, t->len)] = subst[pick(r, sizeof(subst) - 1)];
    check(ctx, bad.p, bad.len);
    check(ctx, t->p, pick(r, t->len));
    bad = *t;
    bad.p[pick(r, t->len)] = '\0';
    check(ctx, bad.p, bad.len);
}

#endif
