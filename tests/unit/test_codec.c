/* Wire codec: versioned decode, schema validation, size limits, role messages, documentation of every type. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/jobdesc.h"
#include "hrm/wire.h"

static int decode(const char *text, json_t **out, struct hrm_wire_fault *f)
{
    return hrm_wire_decode(text, strlen(text), out, f);
}

Test(codec, decodes_a_valid_message)
{
    json_t *m;
    struct hrm_wire_fault f;
    int type = decode("{\"v\":1,\"type\":\"job\",\"req\":7,\"id\":3}", &m, &f);
    cr_assert_eq(type, HRM_WIRE_JOB);
    cr_assert_eq(json_integer_value(json_object_get(m, "id")), 3);
    json_decref(m);
}

Test(codec, rejects_with_the_right_code)
{
    static const struct {
        const char *text;
        enum hrm_wire_err code;
    } cases[] = {
        {"", HRM_WERR_BAD_JSON},
        {"nope", HRM_WERR_BAD_JSON},
        {"[1]", HRM_WERR_BAD_JSON},
        {"{\"type\":\"job\",\"req\":1,\"id\":1}", HRM_WERR_BAD_VERSION},
        {"{\"v\":\"1\",\"type\":\"job\",\"req\":1,\"id\":1}", HRM_WERR_BAD_VERSION},
        {"{\"v\":2,\"type\":\"job\",\"req\":1,\"id\":1}", HRM_WERR_BAD_VERSION},
        {"{\"v\":1,\"type\":\"nosuch\"}", HRM_WERR_UNKNOWN_TYPE},
        {"{\"v\":1,\"type\":7}", HRM_WERR_UNKNOWN_TYPE},
        {"{\"v\":1,\"type\":\"job\",\"req\":1}", HRM_WERR_BAD_FIELD},
        {"{\"v\":1,\"type\":\"job\",\"req\":1,\"id\":-1}", HRM_WERR_BAD_FIELD},
        {"{\"v\":1,\"type\":\"job\",\"req\":1,\"id\":\"x\"}", HRM_WERR_BAD_FIELD},
        {"{\"v\":1,\"type\":\"logs\",\"req\":1,\"id\":1,\"task\":4294967296}", HRM_WERR_BAD_FIELD},
        {"{\"v\":1,\"type\":\"submit\",\"req\":1,\"job\":[]}", HRM_WERR_BAD_FIELD},
        {"{\"v\":1,\"type\":\"task_launch\",\"job\":1,\"task\":0,\"attempt\":1,\"cmd\":[1],"
         "\"cwd\":\"/\",\"cpu\":1,\"mem\":0}",
         HRM_WERR_BAD_FIELD},
        {"{\"v\":1,\"v\":1,\"type\":\"jobs\",\"req\":1}", HRM_WERR_BAD_JSON},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *m = (json_t *)1;
        struct hrm_wire_fault f;
        int rc = decode(cases[i].text, &m, &f);
        cr_assert_lt(rc, 0, "case %zu accepted", i);
        cr_assert_null(m);
        cr_assert_eq(f.code, cases[i].code, "case %zu: code %s, message %s", i,
                     hrm_wire_err_code(f.code), f.message);
        cr_assert(f.message[0]);
    }
}

Test(codec, keeps_the_request_id_of_a_bad_message)
{
    json_t *m;
    struct hrm_wire_fault f;
    cr_assert_lt(decode("{\"v\":1,\"type\":\"job\",\"req\":42}", &m, &f), 0);
    cr_assert_eq(f.req, 42);
}

Test(codec, refuses_oversized_frames_unread)
{
    size_t len = HRM_WIRE_MAX_BYTES + 1;
    char *buf = hrm_alloc(len);
    memset(buf, ' ', len);
    json_t *m;
    struct hrm_wire_fault f;
    cr_assert_eq(hrm_wire_decode(buf, len, &m, &f), -EMSGSIZE);
    cr_assert_eq(f.code, HRM_WERR_TOO_BIG);
    hrm_free(buf);
}

Test(codec, survives_deep_nesting_and_binary)
{
    size_t n = 100000;
    char *buf = hrm_alloc(2 * n);
    memset(buf, '[', n);
    memset(buf + n, ']', n);
    json_t *m;
    struct hrm_wire_fault f;
    cr_assert_lt(hrm_wire_decode(buf, 2 * n, &m, &f), 0);
    hrm_free(buf);
    const char bin[] = "\xff\xfe\x00{\"v\":1}";
    cr_assert_lt(hrm_wire_decode(bin, sizeof(bin), &m, &f), 0);
}

Test(codec, role_messages_round_trip)
{
    struct hrm_msg in = {.type = HRM_MSG_TASK_END,
                         .status = 1,
                         .from = 5,
                         .job = 9,
                         .task = 12,
                         .node = 3,
                         .attempt = 2,
                         .gpu_mask = 0x5,
                         .value = -77};
    json_t *j = hrm_wire_from_msg(&in);
    size_t len;
    char *text = hrm_wire_dump(j, &len);
    json_t *back;
    struct hrm_wire_fault f;
    int type = hrm_wire_decode(text, len, &back, &f);
    cr_assert_eq(type, HRM_WIRE_TASK_END, "%s", f.message);
    struct hrm_msg out;
    cr_assert_eq(hrm_wire_to_msg(type, back, &out, NULL), 0);
    cr_assert(in.type == out.type && in.status == out.status && in.from == out.from &&
              in.job == out.job && in.task == out.task && in.node == out.node &&
              in.attempt == out.attempt && in.gpu_mask == out.gpu_mask && in.value == out.value);
    free(text);
    json_decref(j);
    json_decref(back);
    /* Every role type has a name on the wire and encodes (task_launch also needs the agent
     * protocol's command fields, so only its name is checked). */
    for (int t = 0; t < HRM_MSG_COUNT; t++) {
        cr_assert_eq(hrm_wire_type_by_name(hrm_msg_name((enum hrm_msg_type)t)), t);
        if (t == HRM_MSG_TASK_LAUNCH)
            continue;
        struct hrm_msg m = {.type = (uint16_t)t};
        json_t *o = hrm_wire_from_msg(&m);
        struct hrm_msg r;
        cr_assert_eq(hrm_wire_to_msg(t, o, &r, NULL), 0, "%s", hrm_msg_name((enum hrm_msg_type)t));
        json_decref(o);
    }
}

Test(codec, role_message_fields_out_of_range)
{
    json_t *o = json_pack("{s:i, s:s, s:I}", "v", 1, "type", "run", "job", (json_int_t)1 << 40);
    struct hrm_msg m;
    struct hrm_error err;
    cr_assert_lt(hrm_wire_to_msg(HRM_WIRE_RUN, o, &m, &err), 0);
    json_decref(o);
}

Test(codec, error_replies_are_valid_messages)
{
    json_t *e = hrm_wire_error(HRM_WERR_NOT_FOUND, 5, "no job %d", 3);
    cr_assert_eq(hrm_wire_validate(HRM_WIRE_ERROR, e, NULL), 0);
    cr_assert_str_eq(json_string_value(json_object_get(e, "code")), "not_found");
    json_decref(e);
}

/* The protocol document names every message type of the table. */
Test(codec, every_type_is_documented)
{
    FILE *f = fopen(HRM_SOURCE_DIR "/docs/protocol.md", "r");
    cr_assert_not_null(f, "docs/protocol.md missing");
    static char doc[1 << 18];
    size_t n = fread(doc, 1, sizeof(doc) - 1, f);
    fclose(f);
    doc[n] = '\0';
    for (int t = HRM_MSG_COUNT; t < HRM_WIRE_COUNT; t++) {
        char want[64];
        snprintf(want, sizeof(want), "`%s`", hrm_wire_name(t));
        cr_expect(strstr(doc, want), "docs/protocol.md does not document %s", want);
    }
    for (int t = HRM_MSG_TASK_LAUNCH; t <= HRM_MSG_TASK_END; t++) {
        char want[64];
        snprintf(want, sizeof(want), "`%s`", hrm_wire_name(t));
        cr_expect(strstr(doc, want), "docs/protocol.md does not document %s", want);
    }
    for (int e = 0; e < HRM_WERR_COUNT; e++) {
        char want[64];
        snprintf(want, sizeof(want), "`%s`", hrm_wire_err_code((enum hrm_wire_err)e));
        cr_expect(strstr(doc, want), "docs/protocol.md does not document error %s", want);
    }
}

Test(jobdesc, normalises_and_names_bad_fields)
{
    json_error_t je;
    json_t *d = json_loads("{\"name\":\"x\",\"tasks\":[{\"cmd\":\"echo hi\",\"cpus\":\"500m\","
                           "\"mem\":\"1G\",\"count\":3},{\"cmd\":[\"true\"],\"cpus\":2}]}",
                           0, &je);
    struct hrm_error err;
    json_t *n = hrm_jobdesc_normalise(d, "/tmp", &err);
    cr_assert_not_null(n, "%s", err.text);
    cr_assert_eq(json_integer_value(json_object_get(n, "ntasks")), 4);
    const json_t *g0 = json_array_get(json_object_get(n, "tasks"), 0);
    cr_assert_eq(json_integer_value(json_object_get(g0, "cpu")), 500);
    cr_assert_eq(json_integer_value(json_object_get(g0, "mem")), 1LL << 30);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(g0, "cmd"), 0)), "/bin/sh");
    cr_assert_str_eq(json_string_value(json_object_get(g0, "cwd")), "/tmp");
    json_decref(n);
    json_decref(d);
    static const char *bad[] = {
        "[]", "{\"tasks\":[]}", "{\"tasks\":[{\"cmd\":[]}]}", "{\"tasks\":[{\"cmd\":\"x\",\"cpus\":0}]}",
        "{\"tasks\":[{\"cmd\":\"x\",\"mem\":\"lots\"}]}", "{\"tasks\":[{\"cmd\":\"x\",\"count\":0}]}",
        "{\"tasks\":[{\"cmd\":\"x\",\"cwd\":\"rel\"}]}", "{\"tasks\":[{\"cmd\":\"x\",\"bogus\":1}]}",
        "{\"name\":\"\",\"tasks\":[{\"cmd\":\"x\"}]}", "{\"tasks\":[{\"cmd\":\"x\"}],\"extra\":1}",
        "{\"tasks\":[{\"cmd\":\"x\",\"env\":{\"A\":1}}]}",
        "{\"tasks\":[{\"cmd\":\"x\",\"count\":1000000},{\"cmd\":\"y\",\"count\":1}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *b = json_loads(bad[i], 0, &je);
        cr_assert_not_null(b, "case %zu", i);
        cr_assert_null(hrm_jobdesc_normalise(b, NULL, &err), "case %zu accepted", i);
        cr_assert(err.text[0]);
        json_decref(b);
    }
}
