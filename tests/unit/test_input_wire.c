/* Wire limits on every value, the too_big request id, the agent's large register, and job names and env. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/jobdesc.h"
#include "hrm/wire.h"

/* {"v":1,"type":"jobs","req":1,"x":<value>}: a known type with an unknown field. */
static int decode_with_extra(const char *value, struct hrm_wire_fault *f)
{
    size_t len = strlen(value) + 64;
    char *text = hrm_alloc(len);
    snprintf(text, len, "{\"v\":1,\"type\":\"jobs\",\"req\":1,\"x\":%s}", value);
    json_t *m;
    int rc = hrm_wire_decode(text, strlen(text), &m, f);
    json_decref(m);
    hrm_free(text);
    return rc;
}

/* wrap (a format with one %s) around inner as the unknown field: refused with bad_field
 * and a message holding want. */
static void refused_wrapped(const char *wrap, const char *inner, const char *want)
{
    size_t len = strlen(wrap) + strlen(inner) + 1;
    char *value = hrm_alloc(len);
    snprintf(value, len, wrap, inner);
    struct hrm_wire_fault f;
    cr_assert_lt(decode_with_extra(value, &f), 0);
    cr_assert_eq(f.code, HRM_WERR_BAD_FIELD);
    cr_assert(strstr(f.message, want), "%s", f.message);
    hrm_free(value);
}

/* n copies of item joined by commas, in brackets. */
static char *array_of(const char *item, size_t n)
{
    size_t il = strlen(item), len = n * (il + 1) + 3, k = 0;
    char *s = hrm_alloc(len);
    s[k++] = '[';
    for (size_t i = 0; i < n; i++) {
        if (i)
            s[k++] = ',';
        memcpy(s + k, item, il);
        k += il;
    }
    s[k++] = ']';
    s[k] = '\0';
    return s;
}

Test(input_wire, unknown_fields_obey_the_limits_at_any_depth)
{
    struct hrm_wire_fault f;
    /* At the limits: accepted. */
    char *str = hrm_alloc(HRM_WIRE_MAX_STRING + 4);
    str[0] = '"';
    memset(str + 1, 'a', HRM_WIRE_MAX_STRING);
    strcpy(str + 1 + HRM_WIRE_MAX_STRING, "\"");
    cr_assert_eq(decode_with_extra(str, &f), HRM_WIRE_JOBS, "%s", f.message);
    char *arr = array_of("0", HRM_WIRE_MAX_ITEMS);
    cr_assert_eq(decode_with_extra(arr, &f), HRM_WIRE_JOBS, "%s", f.message);
    hrm_free(arr);
    /* One over, top level or nested in arrays and objects: bad_field naming the place. */
    str = hrm_realloc(str, HRM_WIRE_MAX_STRING + 5);
    str[0] = '"';
    memset(str + 1, 'a', HRM_WIRE_MAX_STRING + 1);
    strcpy(str + 2 + HRM_WIRE_MAX_STRING, "\"");
    cr_assert_lt(decode_with_extra(str, &f), 0);
    cr_assert_eq(f.code, HRM_WERR_BAD_FIELD);
    cr_assert(strstr(f.message, "field 'x'") && strstr(f.message, "longer than"), "%s", f.message);
    refused_wrapped("[{\"k\":[%s]}]", str, "longer than");
    arr = array_of("0", HRM_WIRE_MAX_ITEMS + 1);
    refused_wrapped("{\"deep\":%s}", arr, "more than 65536 items");
    hrm_free(arr);
    /* A key over the string limit. */
    str[HRM_WIRE_MAX_STRING + 2] = '\0';
    refused_wrapped("{%s\":1}", str, "field name");
    hrm_free(str);
    /* Batch items are checked the same way. */
    json_t *item = json_pack("{s:i, s:s, s:i, s:o}", "v", 1, "type", "jobs", "req", 1, "x",
                             json_array());
    for (int i = 0; i <= HRM_WIRE_MAX_ITEMS; i++)
        json_array_append_new(json_object_get(item, "x"), json_integer(i));
    cr_assert_lt(hrm_wire_check_item(item, &f), 0);
    cr_assert_eq(f.code, HRM_WERR_BAD_FIELD);
    json_decref(item);
}

static char *big_frame(const char *head, const char *tail, size_t pad)
{
    size_t len = strlen(head) + pad + strlen(tail) + 1;
    char *s = hrm_alloc(len);
    strcpy(s, head);
    memset(s + strlen(head), 'x', pad);
    strcpy(s + strlen(head) + pad, tail);
    return s;
}

Test(input_wire, too_big_keeps_the_request_id_it_ends_with)
{
    static const struct {
        const char *tail;
        long long req;
    } cases[] = {
        {"\",\"req\":4242}", 4242}, {"\",\"req\":7}\n", 7}, {"\"}", -1},
        {"\",\"req\":}", -1},       {"\",\"xreq\":5}", -1}, {"\",\"req\":\"5\"}", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *s = big_frame("{\"v\":1,\"type\":\"submit\",\"job\":\"", cases[i].tail,
                            HRM_WIRE_MAX_BYTES);
        json_t *m;
        struct hrm_wire_fault f;
        cr_assert_eq(hrm_wire_decode(s, strlen(s), &m, &f), -EMSGSIZE);
        cr_assert_eq(f.code, HRM_WERR_TOO_BIG);
        cr_assert_eq(f.req, cases[i].req, "case %zu: %lld", i, f.req);
        hrm_free(s);
    }
}

Test(input_wire, an_agent_register_may_exceed_one_mebibyte)
{
    json_t *reg = json_pack("{s:i, s:s, s:s, s:s, s:i, s:I, s:i, s:[], s:[]}", "v", 1, "type",
                            "register", "name", "n1", "rack", "r0", "cpu", 4000, "mem",
                            (json_int_t)1 << 33, "gpus", 0, "running", "finished");
    for (int i = 0; i < 5000; i++) {
        json_array_append_new(json_object_get(reg, "running"),
                              json_pack("{s:i, s:i, s:i, s:i, s:I}", "job", 900000 + i, "task",
                                        i, "attempt", 1, "pid", 100000 + i, "start_us",
                                        (json_int_t)1764100000000000LL + i));
        json_array_append_new(json_object_get(reg, "finished"),
                              json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:I, s:I, s:I, s:I}",
                                        "job", 800000 + i, "task", i, "attempt", 1, "status", 0,
                                        "exit", 0, "signal", 0, "oom", 0, "start_us",
                                        (json_int_t)1764100000000000LL, "end_us",
                                        (json_int_t)1764100001000000LL, "cpu_us",
                                        (json_int_t)123456, "rss", (json_int_t)4096000));
    }
    size_t len;
    char *text = hrm_wire_dump(reg, &len);
    cr_assert_gt(len, (size_t)HRM_WIRE_MAX_BYTES);
    json_t *m;
    struct hrm_wire_fault f;
    cr_assert_eq(hrm_wire_decode_from(text, len, HRM_PEER_AGENT, &m, &f), HRM_WIRE_REGISTER,
                 "%s", f.message);
    cr_assert_eq(json_array_size(json_object_get(m, "running")), 5000);
    json_decref(m);
    /* From a client (or an unknown peer), the same frame is too big, unread. */
    cr_assert_eq(hrm_wire_decode_from(text, len, HRM_PEER_CLIENT, &m, &f), -EMSGSIZE);
    cr_assert_eq(hrm_wire_decode(text, len, &m, &f), -EMSGSIZE);
    free(text);
    json_decref(reg);
    /* Any other type from an agent: too big after parsing. */
    char *hb = big_frame("{\"v\":1,\"type\":\"heartbeat\",\"pad\":[\"", "\"]}", HRM_WIRE_MAX_BYTES);
    cr_assert_lt(hrm_wire_decode_from(hb, strlen(hb), HRM_PEER_AGENT, &m, &f), 0);
    cr_assert_eq(f.code, HRM_WERR_TOO_BIG);
    hrm_free(hb);
    /* Over the register bound: refused unread. */
    char *huge = big_frame("{\"v\":1,\"type\":\"register\",\"pad\":\"", "\"}",
                           HRM_WIRE_MAX_REGISTER_BYTES);
    cr_assert_eq(hrm_wire_decode_from(huge, strlen(huge), HRM_PEER_AGENT, &m, &f), -EMSGSIZE);
    hrm_free(huge);
}

Test(input_wire, job_names_and_env_names)
{
    static const char *bad[] = {
        "{\"name\":\"a\\u001b[2J\",\"tasks\":[{\"cmd\":\"x\"}]}",
        "{\"name\":\"a\\nb\",\"tasks\":[{\"cmd\":\"x\"}]}",
        "{\"queue\":\"q\\u007f\",\"tasks\":[{\"cmd\":\"x\"}]}",
        "{\"user\":\"u\\u009b\",\"tasks\":[{\"cmd\":\"x\"}]}",
        "{\"tasks\":[{\"cmd\":\"x\",\"env\":{\"HRM_JOB_ID\":\"1\"}}]}",
        "{\"tasks\":[{\"cmd\":\"x\"},{\"cmd\":\"y\",\"env\":{\"HRM_NODE\":\"n9\"}}]}",
    };
    static const char *field[] = {"name:", "name:", "queue:", "user:", "tasks[0].env.HRM_JOB_ID",
                                  "tasks[1].env.HRM_NODE"};
    json_error_t je;
    struct hrm_error err;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *d = json_loads(bad[i], 0, &je);
        cr_assert_not_null(d, "case %zu: %s", i, je.text);
        cr_assert_null(hrm_jobdesc_normalise(d, NULL, &err), "case %zu accepted", i);
        cr_assert(strstr(err.text, field[i]), "case %zu: %s", i, err.text);
        json_decref(d);
    }
    /* Printable UTF-8 (é, U+00A0) and other env names stay allowed. */
    json_t *d = json_loads("{\"name\":\"caf\\u00e9\\u00a0x\",\"tasks\":[{\"cmd\":\"x\","
                           "\"env\":{\"HRMX\":\"1\",\"MY_HRM_\":\"2\"}}]}",
                           0, &je);
    json_t *n = hrm_jobdesc_normalise(d, NULL, &err);
    cr_assert_not_null(n, "%s", err.text);
    json_decref(n);
    json_decref(d);
}

Test(input_wire, job_strings_within_the_wire_limit)
{
    static const char *const wraps[] = {
        "{\"tasks\":[{\"cmd\":\"%s\"}]}",
        "{\"tasks\":[{\"cmd\":[\"x\",\"%s\"]}]}",
        "{\"tasks\":[{\"cmd\":\"x\",\"env\":{\"K\":\"%s\"}}]}",
        "{\"tasks\":[{\"cmd\":\"x\",\"cwd\":\"/%s\"}]}",
    };
    static const char *const field[] = {"tasks[0].cmd:", "tasks[0].cmd[1]:", "tasks[0].env.K:",
                                        "tasks[0].cwd:"};
    char *big = hrm_alloc(HRM_JOB_MAX_STRING + 2);
    memset(big, 'a', HRM_JOB_MAX_STRING + 1);
    big[HRM_JOB_MAX_STRING + 1] = '\0';
    for (size_t i = 0; i < sizeof(wraps) / sizeof(wraps[0]); i++) {
        size_t len = strlen(wraps[i]) + strlen(big) + 1;
        char *text = hrm_alloc(len);
        snprintf(text, len, wraps[i], big);
        json_error_t je;
        json_t *d = json_loads(text, 0, &je);
        cr_assert_not_null(d, "case %zu: %s", i, je.text);
        struct hrm_error err;
        cr_assert_null(hrm_jobdesc_normalise(d, NULL, &err), "case %zu accepted", i);
        cr_assert(strstr(err.text, field[i]), "case %zu: %s", i, err.text);
        json_decref(d);
        hrm_free(text);
    }
    hrm_free(big);
}
