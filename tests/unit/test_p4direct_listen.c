/* An agent's probe listener: a scheduler key the master declared probes the node directly, one probe or a batch of them, and hears back in one frame; any other key is refused at the handshake; a probe out of range, a run or a forged sender gets an error reply, and the listener goes on. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/probe_listen.h"
#include "hrm/transport.h"
#include "hrm/wire.h"

static char dir[] = "/tmp/hrm-p4direct-XXXXXX";
static void *zctx;
static struct probe_listen *pl;
static struct hrm_keypair agent_kp, sched_kp, client_kp;

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_keys_generate(dir, false, "nobody", &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_load(dir, "agent", false, &agent_kp, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_load(dir, "scheduler", false, &sched_kp, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_load(dir, "client", false, &client_kp, &err), 0, "%s", err.text);
    zctx = hrm_zctx_new();
    pl = probe_listen_new(zctx, "tcp://127.0.0.1:*", &agent_kp, &err);
    cr_assert_not_null(pl, "%s", err.text);
    cr_assert(strncmp(probe_listen_endpoint(pl), "tcp://127.0.0.1:", 16) == 0);
    json_t *keys = json_pack("[s]", sched_kp.pub);
    probe_listen_admit(pl, keys, 2); /* two execution queues: 0 and 1 */
    json_decref(keys);
}

static void teardown(void)
{
    probe_listen_free(pl);
    hrm_zctx_free(zctx);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(p4direct_listen, .init = setup, .fini = teardown, .timeout = 120);

static int64_t now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

/* The handshake's outcome, the listener answering it meanwhile (one thread). */
static int handshake(struct hrm_conn *c)
{
    struct probe_in in;
    int64_t end = now_s() + 60;
    while (now_s() < end) {
        cr_assert_eq(probe_listen_next(pl, &in), 0, "a probe before any was sent");
        int rc = hrm_conn_wait_ready(c, 20, NULL);
        if (rc != -ETIMEDOUT)
            return rc;
    }
    return -ETIMEDOUT;
}

/* The next message the listener takes (1), or its answer on c when it refuses (0: *reply). */
static int exchange(struct hrm_conn *c, struct probe_in *in, json_t **reply)
{
    *reply = NULL;
    int64_t end = now_s() + 60;
    while (now_s() < end) {
        if (probe_listen_next(pl, in))
            return 1;
        if (hrm_conn_recv(c, 20, reply, NULL) == 0)
            return 0;
    }
    cr_assert_fail("neither a probe nor an answer within 60 s");
    return -1;
}

static struct hrm_conn *connect_as(const struct hrm_keypair *kp)
{
    struct hrm_error err = {{0}};
    struct hrm_conn *c = hrm_conn_new(zctx, probe_listen_endpoint(pl), agent_kp.pub, kp, &err);
    cr_assert_not_null(c, "%s", err.text);
    return c;
}

static json_t *hold(int from, int queue)
{
    struct hrm_msg m = {.type = HRM_MSG_HOLD, .from = from, .job = 7, .task = 3, .node = queue,
                        .attempt = 41, .status = 1, .gpu_mask = 1000, .value = 1 << 20};
    return hrm_wire_from_msg(&m);
}

static void send_taken(struct hrm_conn *c, json_t *msg) /* takes msg */
{
    cr_assert_eq(hrm_conn_send(c, msg), 0);
    json_decref(msg);
}

static void expect_refusal(struct hrm_conn *c, json_t *msg, const char *says)
{
    send_taken(c, msg);
    struct probe_in in;
    json_t *reply;
    cr_assert_eq(exchange(c, &in, &reply), 0, "the listener took a message it must refuse");
    cr_assert_str_eq(json_string_value(json_object_get(reply, "type")), "error");
    cr_assert_str_eq(json_string_value(json_object_get(reply, "code")), "bad_field");
    const char *text = json_string_value(json_object_get(reply, "message"));
    cr_assert(text && strstr(text, says), "'%s' does not say '%s'", text, says);
    json_decref(reply);
}

Test(p4direct_listen, a_key_not_declared_is_refused_at_the_handshake)
{
    struct hrm_conn *c = connect_as(&client_kp);
    cr_assert_eq(handshake(c), -EACCES);
    hrm_conn_free(c);
    int64_t taken, refused;
    probe_listen_counts(pl, &taken, &refused);
    cr_assert_eq(taken, 0);
}

Test(p4direct_listen, a_declared_scheduler_probes_and_hears_back)
{
    struct hrm_conn *c = connect_as(&sched_kp);
    cr_assert_eq(handshake(c), 0);
    send_taken(c, hold(hrm_addr_sched(3), 1));
    struct probe_in in;
    json_t *reply;
    cr_assert_eq(exchange(c, &in, &reply), 1);
    cr_assert_eq(in.msg.type, HRM_MSG_HOLD);
    cr_assert_eq(in.msg.from, hrm_addr_sched(3));
    cr_assert_eq(in.msg.node, 1);
    cr_assert_eq(in.msg.attempt, 41);
    struct hrm_msg r = {.type = HRM_MSG_HOLD_REPLY, .from = hrm_addr_node(0), .attempt = 41,
                        .status = 1, .job = 7, .task = 3};
    json_t *out = hrm_wire_from_msg(&r);
    cr_assert_eq(probe_listen_send(pl, &in, out), 0);
    json_decref(out);
    probe_listen_flush(pl);
    cr_assert_eq(hrm_conn_recv(c, 60000, &reply, NULL), 0);
    cr_assert_str_eq(json_string_value(json_object_get(reply, "type")), "hold_reply");
    cr_assert_eq(json_integer_value(json_object_get(reply, "attempt")), 41);
    json_decref(reply);
    hrm_conn_free(c);
}

Test(p4direct_listen, bad_probes_get_an_error_and_the_listener_goes_on)
{
    struct hrm_conn *c = connect_as(&sched_kp);
    cr_assert_eq(handshake(c), 0);
    expect_refusal(c, hold(hrm_addr_sched(0), 2), "queue 2 out of range");
    expect_refusal(c, hold(hrm_addr_sched(0), -1), "queue -1 out of range");
    expect_refusal(c, hold(hrm_addr_node(1), 0), "is no scheduler instance");
    struct hrm_msg run = {.type = HRM_MSG_RUN, .from = hrm_addr_sched(0), .job = 7, .task = 3};
    expect_refusal(c, hrm_wire_from_msg(&run), "only hold and del");
    json_t *junk = json_pack("{s:i, s:s}", "v", 1, "type", "hold"); /* fields missing */
    expect_refusal(c, junk, "hold");
    /* ... and a good probe after them is taken. */
    send_taken(c, hold(hrm_addr_sched(0), 0));
    struct probe_in in;
    json_t *reply;
    cr_assert_eq(exchange(c, &in, &reply), 1);
    cr_assert_eq(in.msg.type, HRM_MSG_HOLD);
    int64_t taken, refused;
    probe_listen_counts(pl, &taken, &refused);
    cr_assert_eq(taken, 1);
    cr_assert_eq(refused, 5);
    hrm_conn_free(c);
}

Test(p4direct_listen, a_new_declaration_drops_a_key)
{
    struct hrm_conn *c = connect_as(&sched_kp);
    cr_assert_eq(handshake(c), 0);
    json_t *none = json_array();
    probe_listen_admit(pl, none, 1); /* a restarted master declares other keys */
    json_decref(none);
    expect_refusal(c, hold(hrm_addr_sched(0), 0), "not a scheduler key the master declared");
    hrm_conn_free(c);
}

Test(p4direct_listen, a_batch_is_taken_item_by_item_and_answered_in_one_frame)
{
    struct hrm_conn *c = connect_as(&sched_kp);
    cr_assert_eq(handshake(c), 0);
    json_t *items = json_array();
    json_array_append_new(items, hold(hrm_addr_sched(1), 0));
    json_array_append_new(items, hold(hrm_addr_sched(1), 5)); /* out of range: refused alone */
    struct hrm_msg del = {.type = HRM_MSG_DEL, .from = hrm_addr_sched(1), .attempt = 40};
    json_array_append_new(items, hrm_wire_from_msg(&del));
    size_t len;
    char *text = hrm_wire_dump_batch(items, &len);
    json_decref(items);
    cr_assert_not_null(text);
    cr_assert_eq(hrm_conn_send_raw(c, text, len), 0);
    free(text);
    struct probe_in in[2];
    json_t *reply;
    cr_assert_eq(exchange(c, &in[0], &reply), 1);
    cr_assert_eq(in[0].msg.type, HRM_MSG_HOLD);
    cr_assert_eq(probe_listen_next(pl, &in[1]), 1, "the batch's third item was not taken");
    cr_assert_eq(in[1].msg.type, HRM_MSG_DEL);
    cr_assert_eq(in[1].msg.attempt, 40);
    for (int k = 0; k < 2; k++) {
        struct hrm_msg r = {.type = HRM_MSG_HOLD_REPLY, .from = hrm_addr_node(0), .attempt = k};
        json_t *out = hrm_wire_from_msg(&r);
        probe_listen_send(pl, &in[k], out);
        json_decref(out);
    }
    probe_listen_flush(pl);
    /* The refusal of the second item, then both answers in one batch. */
    int batches = 0, errors = 0;
    while (batches == 0) {
        cr_assert_eq(hrm_conn_recv(c, 60000, &reply, NULL), 0, "no answer within 60 s");
        const char *type = json_string_value(json_object_get(reply, "type"));
        if (strcmp(type, "error") == 0) {
            errors++;
        } else {
            cr_assert_str_eq(type, "batch");
            cr_assert_eq(json_array_size(json_object_get(reply, "msgs")), 2);
            batches++;
        }
        json_decref(reply);
    }
    cr_assert_eq(errors, 1);
    hrm_conn_free(c);
}
