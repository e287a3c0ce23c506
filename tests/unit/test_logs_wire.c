/* logs_data on the wire: a full chunk of base64 fits a frame, the B kind's limit is exact, text stays under the string limit. */
#include <criterion/criterion.h>
#include <sodium.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/wire.h"

/* A logs_data reply as an agent sends it, with a chunk of n bytes of every value. */
static json_t *reply_with_chunk(size_t n)
{
    unsigned char *bin = hrm_alloc(n + 1);
    for (size_t i = 0; i < n; i++)
        bin[i] = (unsigned char)(i * 7);
    size_t len = sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL);
    char *b64 = hrm_alloc(len);
    sodium_bin2base64(b64, len, bin, n, sodium_base64_VARIANT_ORIGINAL);
    json_t *m = hrm_wire_new(HRM_WIRE_LOGS_DATA);
    json_object_set_new(m, "req", json_integer(1));
    json_object_set_new(m, "chunk", json_string(b64));
    json_object_set_new(m, "next", json_integer((json_int_t)n));
    json_object_set_new(m, "size", json_integer((json_int_t)n));
    json_object_set_new(m, "eof", json_true());
    hrm_free(b64);
    hrm_free(bin);
    return m;
}

Test(logs_wire, a_full_chunk_decodes_from_one_frame)
{
    json_t *m = reply_with_chunk(HRM_LOGS_CHUNK_MAX);
    size_t len;
    char *text = hrm_wire_dump(m, &len);
    cr_assert_lt(len, (size_t)HRM_WIRE_MAX_BYTES, "a chunk must fit a frame");
    json_t *back;
    struct hrm_wire_fault f;
    cr_assert_eq(hrm_wire_decode(text, len, &back, &f), HRM_WIRE_LOGS_DATA, "%s", f.message);
    cr_assert(json_equal(m, back));
    json_decref(back);
    free(text);
    json_decref(m);
}

Test(logs_wire, the_chunk_limit_is_exact)
{
    json_t *m = hrm_wire_new(HRM_WIRE_LOGS_DATA);
    json_object_set_new(m, "req", json_integer(1));
    char *s = hrm_alloc(HRM_WIRE_MAX_BLOB + 2);
    memset(s, 'A', HRM_WIRE_MAX_BLOB + 1);
    s[HRM_WIRE_MAX_BLOB] = '\0';
    json_object_set_new(m, "chunk", json_string(s));
    cr_assert_eq(hrm_wire_validate(HRM_WIRE_LOGS_DATA, m, NULL), 0);
    s[HRM_WIRE_MAX_BLOB] = 'A';
    s[HRM_WIRE_MAX_BLOB + 1] = '\0';
    json_object_set_new(m, "chunk", json_string(s));
    struct hrm_error err;
    cr_assert_lt(hrm_wire_validate(HRM_WIRE_LOGS_DATA, m, &err), 0);
    cr_assert(strstr(err.text, "chunk"), "%s", err.text);
    /* The text form keeps the string limit. */
    json_object_del(m, "chunk");
    s[HRM_WIRE_MAX_STRING + 1] = '\0';
    json_object_set_new(m, "data", json_string(s));
    cr_assert_lt(hrm_wire_validate(HRM_WIRE_LOGS_DATA, m, NULL), 0);
    hrm_free(s);
    json_decref(m);
}

Test(logs_wire, requests_carry_an_offset)
{
    json_t *m = hrm_wire_new(HRM_WIRE_LOGS);
    json_object_set_new(m, "req", json_integer(1));
    json_object_set_new(m, "id", json_integer(2));
    json_object_set_new(m, "offset", json_integer(-1));
    cr_assert_lt(hrm_wire_validate(HRM_WIRE_LOGS, m, NULL), 0, "a negative offset is refused");
    json_object_set_new(m, "offset", json_integer(1LL << 40));
    cr_assert_eq(hrm_wire_validate(HRM_WIRE_LOGS, m, NULL), 0, "offsets beyond 4 GiB are fine");
    json_decref(m);
}
