/* The messages the listing reader kept while it held the master's socket go back to the loop's
 * inbox ahead of what the loop holds, each class in the order received, whatever the rings' wraps. */
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

Test(fleetsnap_inbox, kept_go_first_in_order)
{
    struct inbox loop = {0}, kept = {0};
    struct hrm_inmsg out;
    /* The loop's rings wrapped: 50 in, 40 out, 30 more in (a ring of 64). */
    for (int i = 0; i < 80; i++)
        push(&loop, HRM_PEER_AGENT, "l", i);
    expect(&loop, INBOX_PEERS, "l", 0, 40);
    for (int i = 0; i < 3; i++)
        push(&loop, HRM_PEER_CLIENT, "lc", i);
    for (int i = 0; i < 100; i++)
        push(&kept, i % 4 == 0 ? HRM_PEER_CLIENT : HRM_PEER_AGENT, "k", i);
    inbox_move(&loop, &kept);
    cr_assert_eq(inbox_total(&kept), 0);
    cr_assert_eq(inbox_total(&loop), 40 + 3 + 100);
    for (int i = 0; i < 100; i += 4) {
        char text[32];
        snprintf(text, sizeof(text), "k%d", i);
        cr_assert(inbox_pop(&loop, INBOX_CLIENTS, &out));
        cr_assert_str_eq(out.data, text);
        inbox_done(&out);
    }
    expect(&loop, INBOX_CLIENTS, "lc", 0, 3);
    for (int i = 0; i < 100; i++) {
        if (i % 4 == 0)
            continue;
        char text[32];
        snprintf(text, sizeof(text), "k%d", i);
        cr_assert(inbox_pop(&loop, INBOX_PEERS, &out));
        cr_assert_str_eq(out.data, text);
        inbox_done(&out);
    }
    expect(&loop, INBOX_PEERS, "l", 40, 80);
    cr_assert_eq(inbox_total(&loop), 0);
    /* Both usable again. */
    push(&kept, HRM_PEER_AGENT, "again", 0);
    inbox_move(&loop, &kept);
    expect(&loop, INBOX_PEERS, "again", 0, 1);
    inbox_free(&loop);
    inbox_free(&kept);
}

Test(fleetsnap_inbox, kept_beyond_the_bound)
{
    /* What the reader received is the loop's whatever the loop's bound: nothing is dropped. */
    struct inbox loop = {.max = 10}, kept = {0};
    for (int i = 0; i < 10; i++)
        push(&loop, HRM_PEER_AGENT, "l", i);
    for (int i = 0; i < 5; i++)
        push(&kept, HRM_PEER_AGENT, "k", i);
    inbox_move(&loop, &kept);
    cr_assert_eq(inbox_total(&loop), 15);
    cr_assert_eq(loop.max, 10);
    expect(&loop, INBOX_PEERS, "k", 0, 5);
    expect(&loop, INBOX_PEERS, "l", 0, 10);
    inbox_free(&loop);
    inbox_free(&kept);
}
