/* The HTTP API's pieces without a server: the bridge between handler threads and the master's loop
 * (calls answered across threads, snapshots shared by reference, a closed bridge refusing), and a
 * logs_data over the string limit inside an agent's batch (the API reads outputs in 256 KiB chunks). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "daemon/master_http.h"
#include "hrm/alloc.h"
#include "hrm/wire.h"

/* The loop's side: answers every request with {"type": "ok", "echo": its "n"}, until told to stop. */
struct loop_arg {
    struct http_bridge *b;
    int answered;
    atomic_bool stop;
};

static void *loop(void *p)
{
    struct loop_arg *a = p;
    while (!atomic_load(&a->stop)) {
        struct http_call_in in[4];
        size_t n = http_bridge_take(a->b, in, 4);
        for (size_t i = 0; i < n; i++) {
            json_t *r = json_pack("{s:s, s:O}", "type", "ok", "echo",
                                  json_object_get(in[i].req, "n"));
            http_bridge_answer(a->b, in[i].id, r);
            json_decref(r);
            json_decref(in[i].req);
            a->answered++;
        }
        if (http_bridge_wanted(a->b)) {
            struct http_snapshot *s = http_snapshot_new();
            s->nodes = http_text_new("[1]", 3);
            http_bridge_publish(a->b, s);
        }
    }
    return NULL;
}

Test(http_bridge, calls_are_answered_from_another_thread_in_order_of_their_ids)
{
    struct hrm_error err;
    struct http_bridge *b = http_bridge_new(&err);
    cr_assert(b, "%s", err.text);
    struct loop_arg a = {.b = b};
    pthread_t t;
    pthread_create(&t, NULL, loop, &a);
    for (int i = 0; i < 50; i++) {
        json_t *r = http_bridge_call(b, json_pack("{s:i}", "n", i), false, 60000000);
        cr_assert(r, "call %d unanswered", i);
        cr_assert_eq(json_integer_value(json_object_get(r, "echo")), i);
        json_decref(r);
    }
    struct http_snapshot *s = http_bridge_snapshot(b, 0); /* too old: waits for a new one */
    cr_assert(s && s->nodes && strcmp(s->nodes->data, "[1]") == 0);
    cr_assert_geq(s->generation, 1);
    http_snapshot_unref(s); /* the bridge still holds it */
    atomic_store(&a.stop, true);
    pthread_join(t, NULL);
    cr_assert_eq(a.answered, 50);
    http_bridge_close(b);
    cr_assert_null(http_bridge_call(b, json_object(), false, 1000000), "a closed bridge takes no call");
    cr_assert_null(http_bridge_snapshot(b, 0));
    cr_assert_eq(http_bridge_wait_events(b, 0, 1000000), -1);
    http_bridge_free(b);
}

Test(http_bridge, an_unanswered_call_times_out_and_a_late_answer_is_dropped)
{
    struct hrm_error err;
    struct http_bridge *b = http_bridge_new(&err);
    cr_assert_null(http_bridge_call(b, json_pack("{s:i}", "n", 1), false, 1000));
    struct http_call_in in[2];
    cr_assert_eq(http_bridge_take(b, in, 2), 0, "an abandoned call is not handed to the loop");
    http_bridge_free(b); /* frees the abandoned call: ASan sees no leak */
}

Test(http_bridge, a_text_outlives_the_snapshot_that_shared_it)
{
    struct http_text *t = http_text_of_json(json_pack("{s:i}", "a", 1));
    cr_assert_str_eq(t->data, "{\"a\":1}");
    struct http_snapshot *s = http_snapshot_new();
    s->nodes = http_text_ref(t);
    http_snapshot_unref(s);
    cr_assert_str_eq(t->data, "{\"a\":1}");
    http_text_unref(t);
}

Test(http_wire, a_logs_data_over_the_string_limit_is_valid_in_a_batch)
{
    size_t n = 200 << 10; /* base64 of it is over HRM_WIRE_MAX_STRING */
    unsigned char *bin = hrm_calloc(1, n);
    size_t len = sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL);
    char *b64 = hrm_alloc(len);
    sodium_bin2base64(b64, len, bin, n, sodium_base64_VARIANT_ORIGINAL);
    cr_assert_gt(strlen(b64), (size_t)HRM_WIRE_MAX_STRING);
    json_t *logs = hrm_wire_new(HRM_WIRE_LOGS_DATA);
    json_object_set_new(logs, "req", json_integer(7));
    json_object_set_new(logs, "chunk", json_string(b64));
    json_t *hb = hrm_wire_new(HRM_WIRE_HEARTBEAT);
    json_t *items = json_pack("[o, o]", logs, hb);
    size_t flen;
    char *frame = hrm_wire_dump_batch(items, &flen);
    cr_assert(frame);
    json_t *msg;
    struct hrm_wire_fault f;
    cr_assert_eq(hrm_wire_decode_from(frame, flen, HRM_PEER_AGENT, &msg, &f), HRM_WIRE_BATCH, "%s",
                 f.message);
    cr_assert_eq(hrm_wire_check_item(json_array_get(json_object_get(msg, "msgs"), 0), &f),
                 HRM_WIRE_LOGS_DATA, "%s", f.message);
    /* A plain string over the limit in an item is still refused, item by item. */
    json_object_set_new(hb, "extra", json_string(b64));
    cr_assert_lt(hrm_wire_check_item(hb, &f), 0);
    json_decref(msg);
    json_decref(items);
    free(frame);
    hrm_free(b64);
    hrm_free(bin);
}
