/* The master's launches and acknowledgements read without a tree (src/net/wire_launch.c) against the generic decoder, over generated and hand-written texts. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/rng.h"
#include "hrm/wire.h"
#include "hrm/wire_launch.h"
#include "textgen.h"

#define ROUNDS 6000

/* A string as JSON text: mostly plain words and paths, now and then an escape, UTF-8, a control
 * character, an invalid byte, or no string at all. */
static const char *random_string(struct hrm_rng *r)
{
    static const char *const plain[] = {"\"/bin/true\"", "\"true\"", "\"-c\"", "\"echo $X\"",
                                        "\"/tmp/w d\"", "\"\"", "\"PATH\"", "\"/usr/bin:/bin\"",
                                        "\"alice\"", "\"HOME\"", "\"x=y\"", "\"a'b`c\""};
    static const char *const odd[] = {"\"a\\nb\"", "\"\\u0041\"", "\"caf\xc3\xa9\"", "\"\x01\"",
                                      "\"\xff\"", "\"\\\"\"", "null", "7", "[]", "{}",
                                      "\"tab\there\"", "\"\\/\"", "\"a\\u0000b\"", "\"\x7f\""};
    if (pick(r, 150) == 0)
        return odd[pick(r, sizeof(odd) / sizeof(odd[0]))];
    return plain[pick(r, sizeof(plain) / sizeof(plain[0]))];
}

static void random_cmd(struct hrm_rng *r, struct text *t)
{
    if (pick(r, 40) == 0) {
        put(t, pick(r, 2) ? "\"/bin/true\"" : "{}");
        return;
    }
    put(t, "[");
    uint64_t n = pick(r, 25) == 0 ? 0 : 1 + pick(r, 4);
    for (uint64_t i = 0; i < n; i++) {
        if (i)
            put(t, ",");
        gap(r, t);
        put(t, random_string(r));
    }
    put(t, "]");
}

static void random_env(struct hrm_rng *r, struct text *t)
{
    static const char *const names[] = {"\"PATH\"", "\"HOME\"", "\"X\"", "\"LANG\"", "\"Y_2\"",
                                        "\"HRM_JOB_ID\"", "\"\"", "\"P\\u0041TH\""};
    if (pick(r, 40) == 0) {
        put(t, pick(r, 2) ? "[]" : "\"PATH=/bin\"");
        return;
    }
    put(t, "{");
    uint64_t n = pick(r, 5);
    for (uint64_t i = 0; i < n; i++) {
        if (i)
            put(t, ",");
        gap(r, t);
        /* Names repeat now and then (the picks collide): jansson refuses a duplicate. */
        put(t, pick(r, 30) ? names[pick(r, 6)] : names[pick(r, 8)]);
        put(t, ":");
        put(t, pick(r, 30) ? random_string(r) : (pick(r, 2) ? "{\"a\":\"b\"}" : "1"));
    }
    put(t, "}");
}

/* One message: a task_launch or a task_end_ack, its fields in a random order, some left out,
 * some of the wrong kind, now and then a field of neither, a duplicate or an escape. */
static void random_item(struct hrm_rng *r, struct text *t)
{
    static const char *const launch[] = {"job", "task",  "attempt", "node", "gpu_mask",
                                         "cmd", "cwd",   "env",     "cpu",  "mem",
                                         "gpus", "gpu_share", "gpu_mem", "output", "user"};
    static const char *const ack[] = {"job", "task", "attempt"};
    static const char *const types[] = {"\"task_launch\"", "\"task_end_ack\"", "\"task_kill\"",
                                        "\"welcome\"", "\"task_end\"", "\"task\\u005flaunch\"",
                                        "\"batch\"", "7", "null", "\"task_launch \""};
    bool is_ack = pick(r, 4) == 0;
    const char *const *names = is_ack ? ack : launch;
    size_t nnames = is_ack ? 3 : 15;
    const char *keys[32];
    size_t nk = 0;
    if (pick(r, 6))
        keys[nk++] = "v";
    if (pick(r, 20))
        keys[nk++] = "type";
    for (size_t i = 0; i < nnames; i++)
        if (pick(r, 200) && (i < 3 || i == 5 || i == 6 || i == 8 || i == 9 || pick(r, 2)))
            keys[nk++] = names[i];
    static const char *const extra[] = {"req", "foo", "j\\u006fb", "status", "queue", "cmd",
                                        "job", "env", "\xc3\xa9"};
    if (pick(r, 60) == 0)
        keys[nk++] = extra[pick(r, sizeof(extra) / sizeof(extra[0]))];
    shuffle(r, keys, nk);
    put(t, "{");
    for (size_t i = 0; i < nk; i++) {
        char buf[32];
        put_key(r, t, keys[i], i == 0);
        const char *k = keys[i];
        if (strcmp(k, "type") == 0)
            put(t, pick(r, 30) ? (is_ack ? "\"task_end_ack\"" : "\"task_launch\"")
                               : types[pick(r, 10)]);
        else if (strcmp(k, "v") == 0)
            put(t, pick(r, 6) ? "1" : random_number(r, 200, buf, sizeof(buf)));
        else if (strcmp(k, "output") == 0)
            put(t, pick(r, 6) ? (pick(r, 2) ? "true" : "false") : random_number(r, 200, buf, sizeof(buf)));
        else if (strcmp(k, "cmd") == 0)
            random_cmd(r, t);
        else if (strcmp(k, "env") == 0)
            random_env(r, t);
        else if (strcmp(k, "cwd") == 0 || strcmp(k, "user") == 0 || strcmp(k, "queue") == 0)
            put(t, random_string(r));
        else
            put(t, random_number(r, 200, buf, sizeof(buf)));
        gap(r, t);
    }
    put(t, "}");
}

static void same_string(const char *hot, const json_t *v, const char *what)
{
    if (!v) {
        cr_assert_null(hot, "%s: %s read where the tree has none", what, hot);
        return;
    }
    cr_assert_not_null(hot, "%s", what);
    cr_assert_eq(strlen(hot), json_string_length(v), "%s", what);
    cr_assert_str_eq(hot, json_string_value(v), "%s", what);
}

/* One launch read against its item in the tree: every field the launch path uses. */
static void same_launch(const struct hrm_launch_msg *h, const json_t *it, const char *what)
{
    cr_assert_eq(h->node, geti(it, "node"), "%s", what);
    cr_assert_eq(h->gpu_mask, geti(it, "gpu_mask"), "%s", what);
    cr_assert_eq(h->cpu, geti(it, "cpu"), "%s", what);
    cr_assert_eq(h->mem, geti(it, "mem"), "%s", what);
    cr_assert_eq(h->gpus, geti(it, "gpus"), "%s", what);
    cr_assert_eq(h->gpu_share, geti(it, "gpu_share"), "%s", what);
    cr_assert_eq(h->gpu_mem, geti(it, "gpu_mem"), "%s", what);
    cr_assert_eq(h->has_gpu_share, json_object_get(it, "gpu_share") != NULL, "%s", what);
    const json_t *out = json_object_get(it, "output");
    cr_assert_eq(h->has_output, out != NULL, "%s", what);
    cr_assert_eq(h->output, json_is_true(out), "%s", what);
    same_string(h->cwd, json_object_get(it, "cwd"), what);
    same_string(h->user, json_object_get(it, "user"), what);
    const json_t *cmd = json_object_get(it, "cmd");
    cr_assert_eq(h->argc, json_array_size(cmd), "%s", what);
    for (size_t i = 0; i < h->argc; i++)
        same_string(h->argv[i], json_array_get(cmd, i), what);
    cr_assert_null(h->argv[h->argc], "%s: argv ends with NULL", what);
    const json_t *env = json_object_get(it, "env");
    cr_assert_eq(h->has_env, env != NULL, "%s", what);
    cr_assert_eq(h->nenv, json_object_size(env), "%s", what);
    size_t i = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)env, k, v) /* in the text's order, as jansson keeps it */
    {
        cr_assert_str_eq(h->env[2 * i], k, "%s", what);
        same_string(h->env[2 * i + 1], v, what);
        cr_assert_eq(hrm_launch_env_find(h, k, strlen(k)), (long)i, "%s", what);
        i++;
    }
}

/*
 * The reader's verdict on text against the generic decoder's (a frame from the master): where
 * the reader takes a frame, the generic decoder takes it too, every item passes its check, and
 * the values are the same.  Returns whether the reader took it.
 */
static bool same_as_generic(struct hrm_launch_buf *b, const char *text, size_t len,
                            const char *what)
{
    int hot = hrm_wire_read_launches(text, len, b);
    cr_assert(hot == 0 || hot == 1);
    json_t *msg = NULL;
    struct hrm_wire_fault f;
    int type = hrm_wire_decode_from(text, len, HRM_PEER_FROM_MASTER, &msg, &f);
    if (!hot) {
        cr_assert_eq(b->nmsgs, 0, "%s", what);
        json_decref(msg);
        return false;
    }
    cr_assert_geq(type, 0, "%s: the reader took %.*s, the decoder said %s", what, (int)len,
                  text, f.message);
    json_t *items = json_object_get(msg, "msgs");
    if (type != HRM_WIRE_BATCH) { /* a message alone: the decoder checked it whole */
        cr_assert_eq(b->nmsgs, 1, "%s", what);
        items = json_pack("[O]", msg);
    } else {
        json_incref(items);
    }
    cr_assert_eq(json_array_size(items), b->nmsgs, "%s: %.*s", what, (int)len, text);
    for (size_t i = 0; i < b->nmsgs; i++) {
        const json_t *it = json_array_get(items, i);
        const struct hrm_launch_msg *h = &b->msgs[i];
        int t = type == HRM_WIRE_BATCH ? hrm_wire_check_item(it, &f) : type;
        cr_assert_eq(t, h->type, "%s: item %zu of %.*s: %s", what, i, (int)len, text, f.message);
        cr_assert_eq(h->job, geti(it, "job"), "%s", what);
        cr_assert_eq(h->task, geti(it, "task"), "%s", what);
        cr_assert_eq(h->attempt, geti(it, "attempt"), "%s", what);
        if (h->type == HRM_WIRE_TASK_LAUNCH)
            same_launch(h, it, what);
    }
    json_decref(items);
    json_decref(msg);
    return true;
}

struct damage_ctx {
    struct hrm_launch_buf *b;
    const char *what;
};

static void check_damaged(void *ctx, const char *p, size_t len)
{
    struct damage_ctx *d = ctx;
    same_as_generic(d->b, p, len, d->what);
}

Test(onehost7, takes_only_what_the_generic_decoder_takes)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 7);
    size_t taken = 0, items = 0, launches_with_env = 0;
    static struct text t;
    struct hrm_launch_buf b = {0}; /* one buffer for every frame, as an agent keeps it */
    for (int i = 0; i < ROUNDS; i++) {
        random_frame(&r, &t, random_item);
        char what[32];
        snprintf(what, sizeof(what), "round %d", i);
        if (same_as_generic(&b, t.p, t.len, what)) {
            taken++;
            items += b.nmsgs;
            for (size_t k = 0; k < b.nmsgs; k++)
                launches_with_env += b.msgs[k].nenv > 0;
        }
        damaged(&r, &t, check_damaged, &(struct damage_ctx){&b, what});
    }
    hrm_launch_buf_fini(&b);
    /* Both verdicts were exercised: a reader that declines everything fails here. */
    cr_assert_gt(taken, ROUNDS / 10, "frames read: %zu of %d", taken, ROUNDS);
    cr_assert_gt(items, taken, "items read: %zu in %zu frames", items, taken);
    cr_assert_gt(launches_with_env, taken / 10, "launches with an env: %zu", launches_with_env);
    cr_assert_lt(taken, ROUNDS * 9 / 10, "frames read: %zu of %d", taken, ROUNDS);
}

#define LAUNCH_HEAD "{\"v\":1,\"type\":\"task_launch\",\"job\":7,\"task\":3,\"attempt\":1,"
/* The master's launch as jobs_launch_text writes it. */
#define MASTER_LAUNCH                                                                          \
    LAUNCH_HEAD "\"gpu_mask\":0,\"cmd\":[\"/bin/sh\",\"-c\",\"echo $X > o\"],\"cwd\":\"/tmp\","  \
                "\"env\":{\"X\":\"1\",\"PATH\":\"/usr/bin:/bin\"},\"cpu\":1000,\"mem\":0,"      \
                "\"gpus\":0,\"gpu_share\":1000,\"gpu_mem\":0,\"output\":false,\"user\":\"root\"}"

/* What our master sends at full rate is read; what it never sends, or what is wrong, is left
 * to the generic decoder, which words the error (docs/protocol.md). */
Test(onehost7, reads_the_masters_launches_and_declines_the_rest)
{
    static const char *const taken[] = {
        MASTER_LAUNCH,
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[" MASTER_LAUNCH ",{\"v\":1,\"type\":\"task_end_ack\","
        "\"job\":6,\"task\":0,\"attempt\":2}," MASTER_LAUNCH "]}",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[]}",
        LAUNCH_HEAD "\"cmd\":[],\"cwd\":\"\",\"cpu\":0,\"mem\":0}",
        " {\"msgs\" :[ {\"type\":\"task_end_ack\",\"attempt\":3,\"task\":1,\"job\":9} ] ,"
        "\"type\":\"batch\",\"v\":1}\n",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":2,\"env\":{}}",
    };
    struct hrm_launch_buf b = {0};
    for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
        cr_assert(same_as_generic(&b, taken[i], strlen(taken[i]), "taken"), "text %zu declined", i);
    cr_assert_eq(hrm_wire_read_launches(taken[1], strlen(taken[1]), &b), 1);
    cr_assert_eq(b.nmsgs, 3);
    const struct hrm_launch_msg *m = &b.msgs[0];
    cr_assert_eq(m->type, HRM_WIRE_TASK_LAUNCH);
    cr_assert_eq(m->argc, 3);
    cr_assert_str_eq(m->argv[2], "echo $X > o");
    cr_assert_eq(m->nenv, 2);
    cr_assert_str_eq(m->env[3], "/usr/bin:/bin");
    cr_assert_eq(hrm_launch_env_find(m, "PATH", 4), 1);
    cr_assert_eq(hrm_launch_env_find(m, "PATHX", 4), 1, "the name's first n bytes");
    cr_assert_eq(hrm_launch_env_find(m, "PAT", 3), -1);
    cr_assert(m->has_output && !m->output && m->has_gpu_share);
    cr_assert_str_eq(m->user, "root");
    cr_assert_eq(b.msgs[1].type, HRM_WIRE_TASK_END_ACK);
    cr_assert_eq(b.msgs[1].attempt, 2);
    cr_assert_str_eq(b.msgs[2].cwd, "/tmp");

    static const char *const declined[] = {
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1}",               /* no mem */
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cpu\":1,\"mem\":1}",                   /* no cwd */
        LAUNCH_HEAD "\"cmd\":[\"tr\\u0075e\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1}", /* escape */
        LAUNCH_HEAD "\"cmd\":[\"caf\xc3\xa9\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1}",  /* UTF-8 */
        LAUNCH_HEAD "\"cmd\":[\"true\",1],\"cwd\":\"/\",\"cpu\":1,\"mem\":1}",
        LAUNCH_HEAD "\"cmd\":\"true\",\"cwd\":\"/\",\"cpu\":1,\"mem\":1}",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":-1,\"mem\":1}",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1,\"gpus\":2147483648}",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1,\"output\":0}",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1,\"user\":null}",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1,\"env\":{\"A\":\"1\","
                    "\"A\":\"2\"}}",                                             /* duplicate */
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1,\"env\":{\"A\":1}}",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1,\"queue\":\"q\"}",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1,\"job\":8}",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1,\"req\":2}",
        LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1} x",
        "{\"v\":2,\"type\":\"task_launch\",\"job\":7,\"task\":3,\"attempt\":1,\"cmd\":[\"true\"],"
        "\"cwd\":\"/\",\"cpu\":1,\"mem\":1}",
        "{\"v\":1,\"type\":\"task_kill\",\"job\":7,\"task\":3,\"attempt\":1}",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[{\"v\":1,\"type\":\"task_kill\",\"job\":7,\"task\":3,"
        "\"attempt\":1}]}",
        "{\"v\":1,\"type\":\"task_end_ack\",\"job\":7,\"task\":3,\"attempt\":1,\"cmd\":[]}",
        "{\"v\":1,\"type\":\"batch\",\"msgs\":[],\"req\":4}",
        "",
    };
    for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++) {
        cr_assert_eq(hrm_wire_read_launches(declined[i], strlen(declined[i]), &b), 0,
                     "taken: %s", declined[i]);
        cr_assert_eq(b.nmsgs, 0);
        same_as_generic(&b, declined[i], strlen(declined[i]), "declined");
    }
    cr_assert_eq(hrm_wire_read_launches(NULL, 0, &b), 0);
    hrm_launch_buf_fini(&b);
}

/* Strings and envs at and over the wire's limits: declined where the generic decoder refuses,
 * and an env of more names than the reader tells apart is left to the generic decoder. */
Test(onehost7, limits)
{
    struct hrm_launch_buf b = {0};
    size_t cap = HRM_WIRE_MAX_STRING + 4096;
    char *text = malloc(cap), *big = malloc(HRM_WIRE_MAX_STRING + 2);
    for (int over = 0; over <= 1; over++) {
        memset(big, 'x', HRM_WIRE_MAX_STRING + over);
        big[HRM_WIRE_MAX_STRING + over] = '\0';
        snprintf(text, cap, LAUNCH_HEAD "\"cmd\":[\"%s\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":1}", big);
        cr_assert_eq(same_as_generic(&b, text, strlen(text), "long"), !over);
    }
    size_t at = (size_t)snprintf(text, cap, LAUNCH_HEAD "\"cmd\":[\"true\"],\"cwd\":\"/\","
                                 "\"cpu\":1,\"mem\":1,\"env\":{");
    for (int i = 0; i <= HRM_LAUNCH_ENV_MAX; i++)
        at += (size_t)snprintf(text + at, cap - at, "%s\"V%d\":\"%d\"", i ? "," : "", i, i);
    snprintf(text + at, cap - at, "}}");
    cr_assert_not(same_as_generic(&b, text, strlen(text), "many names"));
    json_t *msg;
    struct hrm_wire_fault f;
    cr_assert_geq(hrm_wire_decode_from(text, strlen(text), HRM_PEER_FROM_MASTER, &msg, &f), 0,
                  "the generic decoder takes it: %s", f.message);
    json_decref(msg);
    free(big);
    free(text);
    hrm_launch_buf_fini(&b);
}
