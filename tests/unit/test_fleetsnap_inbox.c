/* The messages the listing reader looked at or received while it held the master's socket go
 * back to the loop's inbox in the order received: each client's, and each agent's after the
 * agent messages the loop held already (a register before a task_end), whatever the rings' wraps. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "daemon/master_inbox.h"
#include "hrm/wire.h"

static void push(struct inbox *ib, int role, const char *prefix, int i)
{
    char text[32];
    snprintf(text, sizeof(text), "%s%d", prefix, i);
    struct hrm_inmsg in = {.role = role, .data = text, .len = strlen(text), .idlen = 1};
    in.id[0] = role == HRM_PEER_CLIENT ? 'c' : 'a';
    inbox_push_any(ib, &in);
}

static void expect(struct inbox *ib, enum inbox_class c, const char *prefix, int from, int to)
{
    char text[32];
    struct hrm_inmsg out;
    for (int i = from; i < to; i++) {
        cr_assert(inbox_pop(ib, c, &out), "%s%d missing", prefix, i);
        snprintf(text, sizeof(text), "%s%d", prefix, i);
        cr_assert_str_eq(out.data, text);
        inbox_done(&out);
    }
}

Test(fleetsnap_inbox, given_back_in_the_order_received)
{
    struct inbox loop = {0}, pending = {0}, kept = {0};
    /* The loop's agent ring wrapped (80 in, 40 handled), its clients' requests lent (pending):
     * the reader looked at 3 of 8 and kept them, then the lend ended. */
    for (int i = 0; i < 80; i++)
        push(&loop, HRM_PEER_AGENT, "l", i);
    expect(&loop, INBOX_PEERS, "l", 0, 40);
    for (int i = 0; i < 8; i++)
        push(&loop, HRM_PEER_CLIENT, "c", i);
    inbox_move_class(&pending, &loop, INBOX_CLIENTS);
    cr_assert_eq(inbox_len(&loop, INBOX_CLIENTS), 0);
    struct hrm_inmsg out;
    for (int i = 0; i < 3; i++) {
        cr_assert(inbox_pop(&pending, INBOX_CLIENTS, &out));
        inbox_push_any(&kept, &out);
        inbox_done(&out);
    }
    /* Agents' messages the reader received meanwhile. */
    for (int i = 80; i < 150; i++)
        push(&kept, HRM_PEER_AGENT, "l", i);
    inbox_give_back(&loop, &pending, &kept);
    cr_assert_eq(inbox_total(&kept), 0);
    cr_assert_eq(inbox_total(&pending), 0);
    expect(&loop, INBOX_CLIENTS, "c", 0, 8);
    expect(&loop, INBOX_PEERS, "l", 40, 150);
    cr_assert_eq(inbox_total(&loop), 0);
    /* All three usable again. */
    push(&kept, HRM_PEER_AGENT, "again", 0);
    push(&loop, HRM_PEER_AGENT, "first", 0);
    inbox_give_back(&loop, &pending, &kept);
    expect(&loop, INBOX_PEERS, "first", 0, 1);
    expect(&loop, INBOX_PEERS, "again", 0, 1);
    inbox_free(&loop);
    inbox_free(&pending);
    inbox_free(&kept);
}

Test(fleetsnap_inbox, clients_received_after_the_lent_ones)
{
    /* The reader looked at every lent request (kept 2 of them) and then received more. */
    struct inbox loop = {0}, pending = {0}, kept = {0};
    push(&kept, HRM_PEER_CLIENT, "c", 0);
    push(&kept, HRM_PEER_CLIENT, "c", 1);
    push(&kept, HRM_PEER_CLIENT, "c", 2);
    push(&kept, HRM_PEER_AGENT, "a", 0);
    inbox_give_back(&loop, &pending, &kept);
    expect(&loop, INBOX_CLIENTS, "c", 0, 3);
    expect(&loop, INBOX_PEERS, "a", 0, 1);
    inbox_free(&loop);
    inbox_free(&pending);
    inbox_free(&kept);
}

Test(fleetsnap_inbox, beyond_the_bound)
{
    /* What the reader received is the loop's whatever the loop's bound: nothing is dropped. */
    struct inbox loop = {.max = 10}, pending = {0}, kept = {0};
    for (int i = 0; i < 10; i++)
        push(&loop, HRM_PEER_AGENT, "l", i);
    for (int i = 10; i < 15; i++)
        push(&kept, HRM_PEER_AGENT, "l", i);
    inbox_give_back(&loop, &pending, &kept);
    cr_assert_eq(inbox_total(&loop), 15);
    cr_assert_eq(loop.max, 10);
    expect(&loop, INBOX_PEERS, "l", 0, 15);
    inbox_free(&loop);
    inbox_free(&pending);
    inbox_free(&kept);
}
