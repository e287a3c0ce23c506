/* The agents' hot batches read without a tree (src/net/wire_hot.c) against the generic decoder, over generated and hand-written texts. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/rng.h"
#include "hrm/wire.h"
#include "hrm/wire_hot.h"
#include "textgen.h"

#define ROUNDS 6000
#define CAP 64

/* One item of a batch: a task_started or a task_end, its fields in a random order, some left
 * out, some of the wrong kind, now and then a field of neither, a duplicate or an escape. */
static void random_item(struct hrm_rng *r, struct text *t)
{
    static const char *const started[] = {"job", "task", "attempt", "pid", "start_us"};
    static const char *const ended[] = {"job",    "task", "attempt",  "status", "exit",  "signal",
                                        "oom",    "start_us", "end_us", "cpu_us", "rss"};
    static const char *const types[] = {"\"task_started\"", "\"task_end\"", "\"task_end\"",
                                        "\"heartbeat\"", "\"task_end_ack\"", "\"task_ended\"",
                                        "\"task\\u005fend\"", "\"batch\"", "7", "null"};
    bool is_end = pick(r, 2);
    const char *const *names = is_end ? ended : started;
    size_t nnames = is_end ? 11 : 5;
    const char *keys[24];
    size_t nk = 0;
    if (pick(r, 6))
        keys[nk++] = "v";
    if (pick(r, 20))
        keys[nk++] = "type";
    for (size_t i = 0; i < nnames; i++)
        if (pick(r, 60))
            keys[nk++] = names[i];
    static const char *const extra[] = {"error", "req", "foo", "j\\u006fb", "gpu_mask", "pid",
                                        "exit", "job"};
    if (pick(r, 30) == 0)
        keys[nk++] = extra[pick(r, sizeof(extra) / sizeof(extra[0]))];
    shuffle(r, keys, nk);
    put(t, "{");
    for (size_t i = 0; i < nk; i++) {
        char buf[32];
        put_key(r, t, keys[i], i == 0);
        if (strcmp(keys[i], "type") == 0)
            put(t, pick(r, 8) ? (is_end ? "\"task_end\"" : "\"task_started\"")
                              : types[pick(r, 10)]);
        else if (strcmp(keys[i], "v") == 0)
            put(t, pick(r, 6) ? "1" : random_number(r, 40, buf, sizeof(buf)));
        else if (strcmp(keys[i], "oom") == 0)
            put(t, pick(r, 6) ? (pick(r, 2) ? "true" : "false") : random_number(r, 40, buf, sizeof(buf)));
        else if (strcmp(keys[i], "error") == 0)
            put(t, pick(r, 2) ? "\"exec: no such file\"" : "\"caf\xc3\xa9 \\\"x\\\"\"");
        else
            put(t, random_number(r, 40, buf, sizeof(buf)));
        gap(r, t);
    }
    put(t, "}");
}

/*
 * The reader's verdict on text against the generic decoder's: where the reader takes a frame,
 * the generic decoder takes it too, every item passes its check, and the values are the same.
 * Returns whether the reader took it.
 */
static bool same_as_generic(const char *text, size_t len, const char *what)
{
    struct hrm_hot_msg out[CAP];
    size_t n = 999;
    int hot = hrm_wire_read_hot(text, len, out, CAP, &n);
    cr_assert(hot == 0 || hot == 1);
    json_t *msg = NULL;
    struct hrm_wire_fault f;
    int type = hrm_wire_decode_from(text, len, HRM_PEER_AGENT, &msg, &f);
    if (!hot) {
        cr_assert_eq(n, 0, "%s", what);
        json_decref(msg);
        return false;
    }
    cr_assert_geq(type, 0, "%s: the reader took %.*s, the decoder said %s", what, (int)len,
                  text, f.message);
    json_t *items = json_object_get(msg, "msgs");
    if (type != HRM_WIRE_BATCH) { /* a message alone: the decoder checked it whole */
        cr_assert_eq(n, 1, "%s", what);
        items = json_pack("[O]", msg);
    } else {
        json_incref(items);
    }
    cr_assert_eq(json_array_size(items), n, "%s: %.*s", what, (int)len, text);
    for (size_t i = 0; i < n; i++) {
        const json_t *it = json_array_get(items, i);
        const struct hrm_hot_msg *h = &out[i];
        int t = type == HRM_WIRE_BATCH ? hrm_wire_check_item(it, &f) : type;
        cr_assert_eq(t, h->type, "%s: item %zu of %.*s: %s", what, i, (int)len, text, f.message);
        cr_assert_eq(h->job, geti(it, "job"));
        cr_assert_eq(h->task, geti(it, "task"));
        cr_assert_eq(h->attempt, geti(it, "attempt"));
        cr_assert_eq(h->pid, geti(it, "pid"));
        cr_assert_eq(h->status, geti(it, "status"));
        cr_assert_eq(h->exit, geti(it, "exit"));
        cr_assert_eq(h->signal, geti(it, "signal"));
        cr_assert_eq(h->start_us, geti(it, "start_us"));
        cr_assert_eq(h->end_us, geti(it, "end_us"));
        cr_assert_eq(h->cpu_us, geti(it, "cpu_us"));
        cr_assert_eq(h->rss, geti(it, "rss"));
        cr_assert_eq(h->oom, json_is_true(json_object_get(it, "oom")));
        cr_assert_eq(h->has_start, json_object_get(it, "start_us") != NULL);
        cr_assert_eq(h->has_end, json_object_get(it, "end_us") != NULL);
        cr_assert_null(h->error);
        cr_assert_not(h->has_error);
    }
    json_decref(items);
    json_decref(msg);
    return true;
}

static void check_damaged(void *what, const char *p, size_t len)
{
    same_as_generic(p, len, what);
}

Test(onehost6_hot, takes_only_what_the_generic_decoder_takes)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 6);
    size_t taken = 0, items = 0;
    static struct text t;
    for (int i = 0; i < ROUNDS; i++) {
        random_frame(&r, &t, random_item);
        char what[32];
        snprintf(what, sizeof(what), "round %d", i);
        if (same_as_generic(t.p, t.len, what)) {
            taken++;
            struct hrm_hot_msg out[CAP];
            size_t n;
            hrm_wire_read_hot(t.p, t.len, out, CAP, &n);
            items += n;
        }
        damaged(&r, &t, check_damaged, what);
    }
    /* Both verdicts were exercised: the test would pass a reader that declines everything
     * otherwise. */
    cr_assert_gt(taken, ROUNDS / 10, "frames read: %zu of %d", taken, ROUNDS);
    cr_assert_gt(items, taken, "items read: %zu in %zu frames", items, taken);
    cr_assert_lt(taken, ROUNDS * 9 / 10, "frames read: %zu of %d", taken, ROUNDS);
}

/* What our agents send at full rate is read; what they never send, or what is wrong, is left
 * to the generic decoder, which words the error (docs/protocol.md). */
Test(onehost6_hot, reads_the_agents_batches_and_declines_the_rest)
{
    static const char *const taken[] = {
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[{\"v\":1,\"type\":\"task_end\",\"job\":7,\"task\":3,"
        "\"attempt\":1,\"status\":0,\"exit\":0,\"signal\":0,\"oom\":false,\"start_us\":"
        "1764151234567890,\"end_us\":1764151234569001,\"cpu_us\":512,\"rss\":1163264},"
        "{\"v\":1,\"type\":\"task_started\",\"job\":7,\"task\":4,\"attempt\":1,\"pid\":4242,"
        "\"start_us\":1764151234568000}]}",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[]}",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[{\"type\":\"task_end\",\"job\":0,\"task\":2147483647,"
        "\"attempt\":0,\"status\":1,\"exit\":-9223372036854775808,\"oom\":true}]}",
        " {\"msgs\" :[ {\"type\":\"task_end\",\"status\":2,\"attempt\":3,\"task\":1,\"job\":9} ] ,"
        "\"type\":\"batch\",\"v\":1}\n",
        "{\"v\":1,\"type\":\"task_started\",\"job\":7,\"task\":4,\"attempt\":1,\"pid\":4242,"
        "\"start_us\":1764151234568000}",
        "{\"type\":\"task_end\",\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,\"v\":1}",
    };
    for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
        cr_assert(same_as_generic(taken[i], strlen(taken[i]), "taken"), "text %zu declined", i);
    struct hrm_hot_msg out[CAP];
    size_t n;
    cr_assert_eq(hrm_wire_read_hot(taken[0], strlen(taken[0]), out, CAP, &n), 1);
    cr_assert_eq(n, 2);
    cr_assert_eq(out[0].type, HRM_WIRE_TASK_END);
    cr_assert_eq(out[0].end_us, 1764151234569001);
    cr_assert_eq(out[0].rss, 1163264);
    cr_assert(out[0].has_start && out[0].has_end && !out[0].oom);
    cr_assert_eq(out[1].type, HRM_WIRE_TASK_STARTED);
    cr_assert_eq(out[1].pid, 4242);
    /* More items than the caller's room: declined, not cut short. */
    cr_assert_eq(hrm_wire_read_hot(taken[0], strlen(taken[0]), out, 1, &n), 0);
    cr_assert_eq(n, 0);

#define END(fields) "{\"v\":1,\"type\":\"batch\",\"msgs\":[{\"v\":1,\"type\":\"task_end\"," fields "}]}"
    static const char *const declined[] = {
        END("\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,\"error\":\"exec: no such file\""),
        END("\"job\":7,\"task\":3,\"attempt\":1"),                        /* no status */
        END("\"job\":-7,\"task\":3,\"attempt\":1,\"status\":0"),          /* job:i */
        END("\"job\":7,\"task\":2147483648,\"attempt\":1,\"status\":0"),  /* task:u */
        END("\"job\":9223372036854775808,\"task\":3,\"attempt\":1,\"status\":0"),
        END("\"job\":7.0,\"task\":3,\"attempt\":1,\"status\":0"),
        END("\"job\":1e2,\"task\":3,\"attempt\":1,\"status\":0"),
        END("\"job\":07,\"task\":3,\"attempt\":1,\"status\":0"),
        END("\"job\":\"7\",\"task\":3,\"attempt\":1,\"status\":0"),
        END("\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,\"oom\":1"),
        END("\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,\"rss\":null"),
        END("\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,\"job\":8"), /* duplicate */
        END("\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,\"pid\":5"), /* task_started's */
        END("\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,\"colour\":\"red\""),
        END("\"j\\u006fb\":7,\"task\":3,\"attempt\":1,\"status\":0"),
        END("\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,\"\xc3\xa9\":1"),
        END("\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,"),
        END("\"job\":7,\"task\":3,\"attempt\":1,\"status\":0}{"),
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[{\"v\":1,\"type\":\"task_started\",\"job\":7,"
        "\"task\":3,\"attempt\":1,\"pid\":5}]}", /* no start_us */
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[{\"v\":1,\"type\":\"heartbeat\",\"ntasks\":1}]}",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[{\"v\":1,\"type\":\"task\\u005fend\",\"job\":7,"
        "\"task\":3,\"attempt\":1,\"status\":0}]}",
        "{\"v\":2,\"type\":\"batch\",\"msgs\":[]}",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[],\"req\":4}",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[]} x",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[]",
        "{\"v\":2,\"type\":\"task_end\",\"job\":7,\"task\":3,\"attempt\":1,\"status\":0}",
        "{\"type\":\"task_end\",\"job\":7,\"task\":3,\"attempt\":1,\"status\":0}",
        "{\"v\":1,\"type\":\"task_end\",\"job\":7,\"task\":3,\"attempt\":1,\"status\":0,"
        "\"req\":5}",
        "{\"v\":1,\"type\":\"task_end_ack\",\"job\":7,\"task\":3,\"attempt\":1}",
        "",
    };
#undef END
    for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++) {
        cr_assert_eq(hrm_wire_read_hot(declined[i], strlen(declined[i]), out, CAP, &n), 0,
                     "taken: %s", declined[i]);
        cr_assert_eq(n, 0);
    }
    cr_assert_eq(hrm_wire_read_hot(NULL, 0, out, CAP, &n), 0);
}
