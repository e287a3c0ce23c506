/* The wire's JSON writer and reader (src/net/jsontext.c) against jansson's own, over random messages and texts. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/jsontext.h"
#include "hrm/rng.h"
#include "hrm/wire.h"

#define ROUNDS 4000

static uint64_t pick(struct hrm_rng *r, uint64_t n)
{
    return hrm_rng_u64(r) % n;
}

/* Bytes that exercise every branch of the escaper: printable ASCII, the escaped characters,
 * control characters, '/', DEL, valid 2-, 3- and 4-byte UTF-8 and, when allowed, invalid
 * sequences (a lone continuation byte, a surrogate, an overlong form, a cut sequence). */
static size_t random_text(struct hrm_rng *r, char *buf, size_t cap, bool allow_invalid)
{
    static const char *const pieces[] = {
        "a", "Z", "0", " ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x01", "\x1f",
        "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x80\xa8", "key", "=",
        "HRM_JOB_ID", "{", "}", "[", "]", ",", ":"};
    static const char *const bad[] = {"\x80", "\xed\xa0\x80", "\xc0\xaf", "\xe2\x82", "\xff",
                                      "\xf5\x80\x80\x80"};
    size_t n = 0, parts = pick(r, 8);
    for (size_t i = 0; i < parts; i++) {
        const char *p = allow_invalid && pick(r, 40) == 0 ? bad[pick(r, 6)]
                                                          : pieces[pick(r, sizeof(pieces) /
                                                                               sizeof(pieces[0]))];
        size_t l = strlen(p);
        if (n + l >= cap)
            break;
        memcpy(buf + n, p, l);
        n += l;
    }
    if (pick(r, 30) == 0 && n + 1 < cap)
        buf[n++] = '\0'; /* an embedded NUL: jansson writes \u0000 */
    buf[n] = '\0';
    return n;
}

static json_t *random_value(struct hrm_rng *r, int depth, bool allow_invalid)
{
    char text[128];
    switch (depth > 3 ? 2 + pick(r, 6) : pick(r, 8)) {
    case 0: {
        json_t *o = json_object();
        for (uint64_t i = pick(r, 6); i > 0; i--) {
            /* Keys stay valid: jansson 2.14 ignores a key's invalid UTF-8 half-way through
             * writing it (it writes broken JSON), where ours refuses the message. */
            size_t n = random_text(r, text, sizeof(text), false);
            json_object_setn_new_nocheck(o, text, n, random_value(r, depth + 1, allow_invalid));
        }
        return o;
    }
    case 1: {
        json_t *a = json_array();
        for (uint64_t i = pick(r, 6); i > 0; i--)
            json_array_append_new(a, random_value(r, depth + 1, allow_invalid));
        return a;
    }
    case 2: {
        size_t n = random_text(r, text, sizeof(text), allow_invalid);
        return json_stringn_nocheck(text, n);
    }
    case 3: {
        static const json_int_t edges[] = {0, 1, -1, 9, 10, -10, INT32_MAX, INT64_MAX, INT64_MIN,
                                           INT64_MIN + 1, 1700000000123456};
        return json_integer(pick(r, 2) ? edges[pick(r, 11)]
                                       : (json_int_t)(hrm_rng_u64(r) >> pick(r, 64)) *
                                             (pick(r, 2) ? 1 : -1));
    }
    case 4: {
        static const double reals[] = {0.5, -1.25, 1e300, 3.0, 0.1, -0.0, 1e-7, 123456789.0};
        return json_real(reals[pick(r, 8)]);
    }
    case 5:
        return json_true();
    case 6:
        return json_false();
    default:
        return json_null();
    }
}

static json_t *random_message(struct hrm_rng *r, bool allow_invalid)
{
    json_t *m = pick(r, 4) ? hrm_wire_new(HRM_WIRE_TASK_END) : json_object();
    for (uint64_t i = pick(r, 8); i > 0; i--) {
        char key[128];
        size_t n = random_text(r, key, sizeof(key), false);
        json_object_setn_new_nocheck(m, key, n, random_value(r, 0, allow_invalid));
    }
    return pick(r, 8) == 0 ? json_pack("[o]", m) : m;
}

Test(onehost3_json, writes_jansson_s_compact_bytes)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 15);
    size_t refused = 0;
    for (int i = 0; i < ROUNDS; i++) {
        json_t *m = random_message(&r, true);
        char *want = json_dumps(m, JSON_COMPACT);
        size_t len = 12345;
        char *got = hrm_json_dump(m, &len);
        if (!want) {
            cr_assert_null(got, "round %d: jansson refused, ours wrote %s", i, got);
            refused++;
        } else {
            cr_assert_not_null(got, "round %d: ours refused %s", i, want);
            cr_assert_eq(len, strlen(want), "round %d", i);
            cr_assert_str_eq(got, want, "round %d", i);
        }
        free(want);
        free(got);
        json_decref(m);
    }
    cr_assert_gt(refused, 0, "the invalid UTF-8 cases were exercised");
    cr_assert_lt(refused, ROUNDS / 2);
    /* A bare value is refused, as json_dumps does without JSON_ENCODE_ANY. */
    json_t *i = json_integer(3);
    cr_assert_null(hrm_json_dump(i, NULL));
    json_decref(i);
}

/* Both readers give the same verdict; the same tree (same key order) or the same error. */
static void same_as_jansson(const char *text, size_t len, size_t flags, int round)
{
    json_error_t ej, eo;
    json_t *want = json_loadb(text, len, flags, &ej);
    json_t *got = hrm_json_loadb(text, len, flags, &eo);
    if (!want) {
        cr_assert_null(got, "round %d: jansson refused (%s), ours read %.*s", round, ej.text,
                       (int)len, text);
        cr_assert_str_eq(eo.text, ej.text, "round %d", round);
        cr_assert_eq(eo.position, ej.position, "round %d", round);
        return;
    }
    cr_assert_not_null(got, "round %d: ours refused %.*s (%s)", round, (int)len, text, eo.text);
    cr_assert(json_equal(want, got), "round %d", round);
    char *a = json_dumps(want, JSON_COMPACT), *b = json_dumps(got, JSON_COMPACT);
    cr_assert_str_eq(b, a, "round %d: key order", round);
    free(a);
    free(b);
    json_decref(want);
    json_decref(got);
}

Test(onehost3_json, reads_what_jansson_reads)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 17);
    static const size_t dump_flags[] = {JSON_COMPACT, JSON_INDENT(1), JSON_ENSURE_ASCII,
                                        JSON_COMPACT | JSON_ESCAPE_SLASH};
    size_t fast = 0;
    for (int i = 0; i < ROUNDS; i++) {
        json_t *m = random_message(&r, false);
        char *text = json_dumps(m, dump_flags[pick(&r, 4)]);
        cr_assert_not_null(text);
        size_t len = strlen(text);
        size_t flags = pick(&r, 2) ? JSON_REJECT_DUPLICATES : 0;
        same_as_jansson(text, len, flags, i);
        json_t *v;
        fast += (size_t)hrm_json_parse_fast(text, len, flags, &v);
        json_decref(v);
        /* The same text damaged: a byte changed, one cut off, a duplicate key, trailing data. */
        char bad[8192];
        if (len + 16 < sizeof(bad)) {
            memcpy(bad, text, len);
            size_t at = pick(&r, len);
            static const char subst[] = "\"\\{}[],:0-.e \x01\x80xtfn";
            bad[at] = subst[pick(&r, sizeof(subst) - 1)];
            same_as_jansson(bad, len, flags, i);
            same_as_jansson(text, pick(&r, len + 1), flags, i);
            memcpy(bad, text, len);
            memcpy(bad + len, " x", 2);
            same_as_jansson(bad, len + 2, flags, i);
        }
        free(text);
        json_decref(m);
    }
    cr_assert_gt(fast, ROUNDS / 4, "most texts are read without jansson's reader: %zu", fast);
    static const char *const cases[] = {
        "{\"v\":1,\"v\":2}", "{\"a\":01}", "{\"a\":-}", "{\"a\":1.5}", "{\"a\":1e3}",
        "{\"a\":9223372036854775807}", "{\"a\":9223372036854775808}",
        "{\"a\":-9223372036854775808}", "{\"a\":-9223372036854775809}", "{\"a\":-0}",
        "{\"a\":\"\\u0000\"}", "{\"a\":\"\\u00e9\"}", "{\"a\":\"\\q\"}", "{\"a\":tru}",
        "[1,]", "[,1]", "{\"a\" 1}", "{,}", "{}", "[]", " \n{ } \t", "", "  ", "1", "\"s\"",
        "{\"a\":[[[[[[]]]]]]}", "{\"\\n\":{\"\\t\":\"\\/\\\"\"}}", "{\"a\":\"\x01\"}",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        for (size_t f = 0; f < 2; f++)
            same_as_jansson(cases[i], strlen(cases[i]), f ? JSON_REJECT_DUPLICATES : 0, (int)i);
}

/* The hot messages take the fast path both ways: what a run of trivial tasks sends. */
Test(onehost3_json, reads_the_hot_messages_itself)
{
    static const char *const texts[] = {
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[{\"v\":1,\"type\":\"task_end\",\"job\":7,\"task\":3,"
        "\"attempt\":1,\"status\":0,\"exit\":0,\"signal\":0,\"oom\":false,\"start_us\":"
        "1764151234567890,\"end_us\":1764151234569001,\"cpu_us\":512,\"rss\":1163264},"
        "{\"v\":1,\"type\":\"task_started\",\"job\":7,\"task\":4,\"attempt\":1,\"pid\":4242,"
        "\"start_us\":1764151234568000}]}",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[{\"v\":1,\"type\":\"task_launch\",\"job\":7,"
        "\"task\":3,\"attempt\":1,\"gpu_mask\":0,\"cmd\":[\"/bin/true\"],\"cwd\":\"/tmp/w d\","
        "\"env\":{\"PATH\":\"/usr/bin:/bin\",\"A\":\"x=\\\"y\\\"\"},\"cpu\":1000,\"mem\":"
        "268435456,\"gpus\":0,\"gpu_share\":0,\"gpu_mem\":0,\"output\":false,\"user\":\"root\"},"
        "{\"v\":1,\"type\":\"task_end_ack\",\"job\":7,\"task\":2,\"attempt\":1}]}",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        json_t *v;
        cr_assert_eq(hrm_json_parse_fast(texts[i], strlen(texts[i]), JSON_REJECT_DUPLICATES, &v),
                     1, "text %zu", i);
        char *back = hrm_json_dump(v, NULL);
        cr_assert_str_eq(back, texts[i]);
        free(back);
        json_decref(v);
        json_t *m;
        struct hrm_wire_fault f;
        cr_assert_eq(hrm_wire_decode(texts[i], strlen(texts[i]), &m, &f), HRM_WIRE_BATCH);
        json_decref(m);
    }
}
