/* Wire codec at its exact size limits: a frame, a string and an array each at the limit pass, one
 * byte or item more is refused with the documented code. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/wire.h"

/* A frame of exactly len bytes: prefix, then fill repeated up to len - strlen(suffix), then
 * suffix.  Caller frees. */
static char *frame(const char *prefix, const char *fill, const char *suffix, size_t len)
{
    size_t np = strlen(prefix), nf = strlen(fill), ns = strlen(suffix);
    cr_assert_geq(len, np + ns);
    cr_assert_eq((len - np - ns) % nf, 0, "fill does not divide the frame");
    char *buf = hrm_alloc(len + 1);
    memcpy(buf, prefix, np);
    for (size_t at = np; at < len - ns; at += nf)
        memcpy(buf + at, fill, nf);
    memcpy(buf + len - ns, suffix, ns);
    buf[len] = '\0';
    return buf;
}

static int decode(const char *buf, size_t len, struct hrm_wire_fault *f)
{
    json_t *m = NULL;
    int rc = hrm_wire_decode(buf, len, &m, f);
    cr_assert((rc >= 0) == (m != NULL));
    json_decref(m);
    return rc;
}

Test(rt_wire_limits, a_frame_of_exactly_one_mib_is_read_one_byte_more_is_too_big)
{
    /* A valid "nodes" request padded with JSON whitespace to the size wanted. */
    const char *head = "{\"v\":1,\"type\":\"nodes\",\"req\":5";
    struct hrm_wire_fault f;
    char *at = frame(head, " ", "}", HRM_WIRE_MAX_BYTES);
    cr_assert_eq(strlen(at), (size_t)(1 << 20));
    cr_assert_eq(decode(at, HRM_WIRE_MAX_BYTES, &f), HRM_WIRE_NODES, "%s", f.message);
    hrm_free(at);

    char *over = frame(head, " ", "}", HRM_WIRE_MAX_BYTES + 1);
    cr_assert_eq(decode(over, HRM_WIRE_MAX_BYTES + 1, &f), -EMSGSIZE);
    cr_assert_eq(f.code, HRM_WERR_TOO_BIG);
    cr_assert_str_eq(hrm_wire_err_code(f.code), "too_big");
    hrm_free(over);
}

/* Decodes head, nfill copies of fill, tail. */
static int decode_filled(const char *head, const char *fill, size_t nfill, const char *tail,
                         struct hrm_wire_fault *f)
{
    size_t len = strlen(head) + nfill * strlen(fill) + strlen(tail);
    char *buf = frame(head, fill, tail, len);
    int rc = decode(buf, len, f);
    hrm_free(buf);
    return rc;
}

/* An "error" message whose "message" string holds n bytes. */
static int string_of(size_t n, struct hrm_wire_fault *f)
{
    return decode_filled("{\"v\":1,\"type\":\"error\",\"code\":\"x\",\"message\":\"", "a", n,
                         "\"}", f);
}

Test(rt_wire_limits, a_string_of_exactly_64_kib_passes_one_byte_more_is_a_bad_field)
{
    struct hrm_wire_fault f;
    cr_assert_eq(string_of(HRM_WIRE_MAX_STRING, &f), HRM_WIRE_ERROR, "%s", f.message);
    cr_assert_eq(string_of(HRM_WIRE_MAX_STRING + 1, &f), -EPROTO);
    cr_assert_eq(f.code, HRM_WERR_BAD_FIELD);
    cr_assert(strstr(f.message, "'message'"), "%s", f.message);
    cr_assert(strstr(f.message, "65536"), "%s", f.message);
}

Test(rt_wire_limits, a_multibyte_string_counts_bytes_not_characters)
{
    /* 32,768 two-byte characters are 64 KiB exactly; one more character is over. */
    const char *head = "{\"v\":1,\"type\":\"error\",\"code\":\"x\",\"message\":\"";
    const char *tail = "\"}";
    struct hrm_wire_fault f;
    size_t at = strlen(head) + HRM_WIRE_MAX_STRING + strlen(tail);
    char *ok = frame(head, "\xc3\xa9", tail, at);
    cr_assert_eq(decode(ok, at, &f), HRM_WIRE_ERROR, "%s", f.message);
    hrm_free(ok);
    char *over = frame(head, "\xc3\xa9", tail, at + 2);
    cr_assert_eq(decode(over, at + 2, &f), -EPROTO);
    cr_assert_eq(f.code, HRM_WERR_BAD_FIELD);
    hrm_free(over);
}

/* A "usage" message whose "samples" array holds n items (each "0"). */
static int array_of(size_t n, struct hrm_wire_fault *f)
{
    return decode_filled("{\"v\":1,\"type\":\"usage\",\"samples\":[", "0,", n - 1, "0]}", f);
}

Test(rt_wire_limits, an_array_of_65536_items_passes_65537_is_a_bad_field)
{
    struct hrm_wire_fault f;
    cr_assert_eq(array_of(HRM_WIRE_MAX_ITEMS, &f), HRM_WIRE_USAGE, "%s", f.message);
    cr_assert_eq(array_of(HRM_WIRE_MAX_ITEMS + 1, &f), -EPROTO);
    cr_assert_eq(f.code, HRM_WERR_BAD_FIELD);
    cr_assert(strstr(f.message, "'samples'"), "%s", f.message);
    cr_assert(strstr(f.message, "65536"), "%s", f.message);
}

Test(rt_wire_limits, a_batch_dumped_past_one_mib_is_refused_at_one_mib_it_is_sent)
{
    /* One item with a string sized so the whole batch frame is exactly 1 MiB, then 1 MiB + 1. */
    json_t *probe = json_array();
    json_array_append_new(probe, json_pack("{s:i, s:s, s:s, s:s}", "v", 1, "type", "error",
                                           "code", "x", "message", ""));
    size_t empty_len;
    char *s = hrm_wire_dump_batch(probe, &empty_len);
    cr_assert_not_null(s);
    free(s);
    json_decref(probe);
    for (int extra = 0; extra <= 1; extra++) {
        size_t n = HRM_WIRE_MAX_BYTES - empty_len + (size_t)extra;
        char *text = hrm_alloc(n + 1);
        memset(text, 'a', n);
        text[n] = '\0';
        json_t *items = json_array();
        json_array_append_new(items, json_pack("{s:i, s:s, s:s, s:s}", "v", 1, "type", "error",
                                               "code", "x", "message", text));
        size_t len = 0;
        s = hrm_wire_dump_batch(items, &len);
        if (extra == 0) {
            cr_assert_not_null(s, "a batch of exactly 1 MiB was refused");
            cr_assert_eq(len, (size_t)HRM_WIRE_MAX_BYTES);
        } else {
            cr_assert_null(s, "a batch of 1 MiB + 1 was dumped");
        }
        free(s);
        json_decref(items);
        hrm_free(text);
    }
}
