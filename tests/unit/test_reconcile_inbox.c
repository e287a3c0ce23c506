/* The master's inbox: clients' requests apart from agents' messages, each queue in order, bounded, data owned. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/master_inbox.h"
#include "hrm/wire.h"

static struct hrm_inmsg msg(int role, const char *peer, const char *text)
{
    struct hrm_inmsg in = {.role = role, .data = text, .len = strlen(text)};
    in.idlen = strlen(peer);
    memcpy(in.id, peer, in.idlen);
    return in;
}

Test(reconcile_inbox, clients_apart_each_queue_in_order)
{
    struct inbox ib = {0};
    char text[32];
    /* Interleaved as a fair queue hands them out: agent, scheduler, client, agent, ... */
    for (int i = 0; i < 300; i++) {
        snprintf(text, sizeof(text), "m%d", i);
        int role = i % 3 == 0 ? HRM_PEER_AGENT : i % 3 == 1 ? HRM_PEER_SCHED : HRM_PEER_CLIENT;
        struct hrm_inmsg in = msg(role, role == HRM_PEER_CLIENT ? "c" : "a", text);
        cr_assert_eq(inbox_push(&ib, &in), 0);
        text[0] = 'x'; /* the inbox holds its own copy */
    }
    cr_assert_eq(inbox_len(&ib, INBOX_CLIENTS), 100);
    cr_assert_eq(inbox_len(&ib, INBOX_PEERS), 200);
    cr_assert_eq(inbox_total(&ib), 300);
    struct hrm_inmsg out;
    for (int i = 2; i < 300; i += 3) {
        cr_assert(inbox_pop(&ib, INBOX_CLIENTS, &out));
        snprintf(text, sizeof(text), "m%d", i);
        cr_assert_str_eq(out.data, text);
        cr_assert_eq(out.len, strlen(text));
        cr_assert_eq(out.role, HRM_PEER_CLIENT);
        cr_assert_eq(out.idlen, 1);
        cr_assert_eq(out.id[0], 'c');
        inbox_done(&out);
    }
    cr_assert_not(inbox_pop(&ib, INBOX_CLIENTS, &out));
    for (int i = 0; i < 300; i++) {
        if (i % 3 == 2)
            continue;
        cr_assert(inbox_pop(&ib, INBOX_PEERS, &out));
        snprintf(text, sizeof(text), "m%d", i);
        cr_assert_str_eq(out.data, text);
        inbox_done(&out);
    }
    cr_assert_not(inbox_pop(&ib, INBOX_PEERS, &out));
    cr_assert_eq(inbox_total(&ib), 0);
    inbox_free(&ib);
}

Test(reconcile_inbox, bounded_and_ring_wraps)
{
    struct inbox ib = {.max = 100};
    char text[32];
    int pushed = 0, popped = 0;
    /* Push and pop in waves so the ring wraps and grows while it holds messages. */
    for (int wave = 0; wave < 5; wave++) {
        for (int i = 0; i < 80; i++) {
            snprintf(text, sizeof(text), "%d", pushed);
            struct hrm_inmsg in = msg(HRM_PEER_AGENT, "a", text);
            int rc = inbox_push(&ib, &in);
            if (inbox_total(&ib) >= 100 && rc < 0) {
                cr_assert_eq(rc, -ENOSPC);
                break;
            }
            cr_assert_eq(rc, 0);
            pushed++;
        }
        cr_assert_leq(inbox_total(&ib), 100);
        for (int i = 0; i < 50; i++) {
            struct hrm_inmsg out;
            cr_assert(inbox_pop(&ib, INBOX_PEERS, &out));
            snprintf(text, sizeof(text), "%d", popped++);
            cr_assert_str_eq(out.data, text);
            inbox_done(&out);
        }
    }
    struct hrm_inmsg full = msg(HRM_PEER_CLIENT, "c", "late");
    while (inbox_total(&ib) < 100) {
        struct hrm_inmsg in = msg(HRM_PEER_AGENT, "a", "fill");
        cr_assert_eq(inbox_push(&ib, &in), 0);
    }
    cr_assert_eq(inbox_push(&ib, &full), -ENOSPC, "a full inbox takes no more, clients' either");
    cr_assert_eq(inbox_len(&ib, INBOX_CLIENTS), 0);
    inbox_free(&ib); /* what it still holds is freed (ASan checks) */
    cr_assert_eq(inbox_total(&ib), 0);
}

Test(reconcile_inbox, empty_frame_and_revoked_key)
{
    struct inbox ib = {0};
    struct hrm_inmsg empty = {.role = HRM_PEER_CLIENT, .data = NULL, .len = 0, .idlen = 1};
    struct hrm_inmsg revoked = msg(0, "r", "{}"); /* key removed since its handshake */
    cr_assert_eq(inbox_push(&ib, &empty), 0);
    cr_assert_eq(inbox_push(&ib, &revoked), 0);
    cr_assert_eq(inbox_class_of(&revoked), INBOX_PEERS);
    struct hrm_inmsg out;
    cr_assert(inbox_pop(&ib, INBOX_CLIENTS, &out));
    cr_assert_null(out.data, "an empty frame stays empty (the codec answers it)");
    inbox_done(&out);
    cr_assert(inbox_pop(&ib, INBOX_PEERS, &out));
    cr_assert_eq(out.role, 0);
    inbox_done(&out);
    inbox_free(&ib);
}
