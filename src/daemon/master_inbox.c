/* The master's inbox: messages drained from its socket, clients' requests apart (master_inbox.h). */
#include <errno.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/wire.h"
#include "master_inbox.h"

enum inbox_class inbox_class_of(const struct hrm_inmsg *in)
{
    return in->role == HRM_PEER_CLIENT ? INBOX_CLIENTS : INBOX_PEERS;
}

static size_t inbox_max(const struct inbox *ib)
{
    return ib->max ? ib->max : INBOX_DEFAULT_MAX;
}

size_t inbox_len(const struct inbox *ib, enum inbox_class c)
{
    return ib->q[c].len;
}

size_t inbox_total(const struct inbox *ib)
{
    size_t n = 0;
    for (int c = 0; c < INBOX_CLASSES; c++)
        n += ib->q[c].len;
    return n;
}

/* Doubles the ring, its items moved to the front in order. */
static void queue_grow(struct inbox_queue *q)
{
    size_t cap = q->cap ? q->cap * 2 : 64;
    struct hrm_inmsg *items = hrm_alloc(cap * sizeof(*items));
    for (size_t i = 0; i < q->len; i++)
        items[i] = q->items[(q->head + i) % q->cap];
    hrm_free(q->items);
    q->items = items;
    q->cap = cap;
    q->head = 0;
}

int inbox_push(struct inbox *ib, const struct hrm_inmsg *in)
{
    if (inbox_total(ib) >= inbox_max(ib))
        return -ENOSPC;
    inbox_push_any(ib, in);
    return 0;
}

void inbox_push_any(struct inbox *ib, const struct hrm_inmsg *in)
{
    struct inbox_queue *q = &ib->q[inbox_class_of(in)];
    if (q->len == q->cap)
        queue_grow(q);
    struct hrm_inmsg *slot = &q->items[(q->head + q->len) % q->cap];
    *slot = *in;
    if (in->data) {
        char *copy = hrm_alloc(in->len + 1);
        memcpy(copy, in->data, in->len);
        copy[in->len] = '\0';
        slot->data = copy;
    }
    q->len++;
}

void inbox_move_class(struct inbox *dst, struct inbox *src, enum inbox_class c)
{
    struct inbox_queue *d = &dst->q[c], *s = &src->q[c];
    if (s->len == 0)
        return;
    /* src's messages go first: s's ring, then d's after it. */
    while (s->cap < s->len + d->len)
        queue_grow(s);
    for (size_t i = 0; i < d->len; i++)
        s->items[(s->head + s->len + i) % s->cap] = d->items[(d->head + i) % d->cap];
    s->len += d->len;
    struct inbox_queue t = *d;
    *d = *s;
    *s = (struct inbox_queue){.items = t.items, .cap = t.cap};
}

void inbox_give_back(struct inbox *loop, struct inbox *pending, struct inbox *kept)
{
    inbox_move_class(loop, pending, INBOX_CLIENTS);
    inbox_move_class(loop, kept, INBOX_CLIENTS);
    inbox_move_class(kept, loop, INBOX_PEERS); /* the loop's first */
    inbox_move_class(loop, kept, INBOX_PEERS);
}

bool inbox_pop(struct inbox *ib, enum inbox_class c, struct hrm_inmsg *out)
{
    struct inbox_queue *q = &ib->q[c];
    if (q->len == 0)
        return false;
    *out = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return true;
}

void inbox_done(struct hrm_inmsg *in)
{
    hrm_free((char *)in->data);
    in->data = NULL;
}

int inbox_fill(struct inbox *ib, struct hrm_server *srv)
{
    int n = 0;
    while (inbox_total(ib) < inbox_max(ib)) {
        struct hrm_inmsg in;
        int rc = hrm_server_recv(srv, &in);
        if (rc == -EAGAIN)
            break;
        if (rc < 0)
            return rc;
        inbox_push(ib, &in); /* room checked above */
        n++;
    }
    return n;
}

void inbox_free(struct inbox *ib)
{
    for (int c = 0; c < INBOX_CLASSES; c++) {
        struct hrm_inmsg in;
        while (inbox_pop(ib, (enum inbox_class)c, &in))
            inbox_done(&in);
        hrm_free(ib->q[c].items);
        ib->q[c] = (struct inbox_queue){0};
    }
}
