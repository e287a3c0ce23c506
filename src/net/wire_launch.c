/* The master's task_launch and task_end_ack messages and batches read from their text in one pass, declining anything unusual to the generic decoder. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/wire.h"
#include "hrm/wire_launch.h"
#include "wire_scan.h"

/*
 * The fields of the two messages and each one's kind as the schemas of wire.h say
 * (tests/unit/test_onehost7.c compares every verdict with the generic decoder's):
 *   i integer >= 0   u integer 0 .. INT32_MAX   z any integer   b boolean   s string
 *   S array of strings   o object (here: of strings only)
 * "v" of an item is not checked by the generic decoder (only the frame's): any integer.
 */
enum launch_field {
    F_V, F_TYPE, F_JOB, F_TASK, F_ATTEMPT, F_NODE, F_GPU_MASK, F_CMD, F_CWD, F_ENV, F_CPU,
    F_MEM, F_GPUS, F_GPU_SHARE, F_GPU_MEM, F_OUTPUT, F_USER, F_COUNT
};

static const struct scan_field fields[F_COUNT] = {
    [F_V] = {"v", 'z'},         [F_TYPE] = {"type", 's'},       [F_JOB] = {"job", 'i'},
    [F_TASK] = {"task", 'u'},   [F_ATTEMPT] = {"attempt", 'u'}, [F_NODE] = {"node", 'u'},
    [F_GPU_MASK] = {"gpu_mask", 'i'}, [F_CMD] = {"cmd", 'S'},   [F_CWD] = {"cwd", 's'},
    [F_ENV] = {"env", 'o'},     [F_CPU] = {"cpu", 'i'},         [F_MEM] = {"mem", 'i'},
    [F_GPUS] = {"gpus", 'u'},   [F_GPU_SHARE] = {"gpu_share", 'u'}, [F_GPU_MEM] = {"gpu_mem", 'i'},
    [F_OUTPUT] = {"output", 'b'}, [F_USER] = {"user", 's'},
};

#define BIT(f) (1u << (f))
#define ACK_ALLOWED (BIT(F_V) | BIT(F_TYPE) | BIT(F_JOB) | BIT(F_TASK) | BIT(F_ATTEMPT))
#define ACK_NEEDED (ACK_ALLOWED & ~BIT(F_V))
#define LAUNCH_ALLOWED ((BIT(F_COUNT) - 1))
/* "job:i task:u attempt:u node:u? gpu_mask:i? cmd:S cwd:s env:o? cpu:i mem:i gpus:u?
 * gpu_share:u? gpu_mem:i? output:b? user:s?" */
#define LAUNCH_NEEDED                                                                          \
    (BIT(F_TYPE) | BIT(F_JOB) | BIT(F_TASK) | BIT(F_ATTEMPT) | BIT(F_CMD) | BIT(F_CWD) |       \
     BIT(F_CPU) | BIT(F_MEM))

/* A string within the wire's limit, copied into the buffer's text with its NUL. */
static bool string(struct scan *c, struct hrm_launch_buf *b, size_t *used, const char **out)
{
    const char *s;
    size_t n;
    if (!scan_plain_string(c, &s, &n) || n > HRM_WIRE_MAX_STRING)
        return false;
    char *dst = b->text + *used; /* room: each string's copy is shorter than its quoted text */
    memcpy(dst, s, n);
    dst[n] = '\0';
    *used += n + 1;
    *out = dst;
    return true;
}

/* An entry of the strings' table (pointers into text; the table may move as it grows). */
static void push(struct hrm_launch_buf *b, const char *s)
{
    HRM_GROW(b->strs, b->cap_strs, b->nstrs + 1);
    b->strs[b->nstrs++] = s;
}

static bool cmd(struct scan *c, struct hrm_launch_buf *b, size_t *used, struct hrm_launch_msg *m)
{
    if (!scan_eat(c, '['))
        return false;
    m->argv_at = b->nstrs;
    if (!scan_eat(c, ']')) {
        do {
            const char *s;
            if (m->argc >= HRM_WIRE_MAX_ITEMS || !string(c, b, used, &s))
                return false;
            push(b, s);
            m->argc++;
        } while (scan_eat(c, ','));
        if (!scan_eat(c, ']'))
            return false;
    }
    push(b, NULL);
    return true;
}

/* An object of strings with names told apart (jansson refuses a duplicate). */
static bool env(struct scan *c, struct hrm_launch_buf *b, size_t *used, struct hrm_launch_msg *m)
{
    if (!scan_eat(c, '{'))
        return false;
    m->env_at = b->nstrs;
    if (scan_eat(c, '}'))
        return true;
    do {
        const char *k, *v;
        if (m->nenv >= HRM_LAUNCH_ENV_MAX || !string(c, b, used, &k) || !scan_eat(c, ':') ||
            !string(c, b, used, &v))
            return false;
        for (size_t i = 0; i < m->nenv; i++)
            if (strcmp(b->strs[m->env_at + 2 * i], k) == 0)
                return false;
        push(b, k);
        push(b, v);
        m->nenv++;
    } while (scan_eat(c, ','));
    return scan_eat(c, '}');
}

/* One message: an object of known fields, each once, of its kind, then its type's rules.
 * alone: the whole frame, whose "v" the generic decoder checks (a batch's items' it does not). */
static bool item(struct scan *c, struct hrm_launch_buf *b, size_t *used, struct hrm_launch_msg *m,
                 bool alone)
{
    *m = (struct hrm_launch_msg){0};
    int64_t val[F_COUNT] = {0};
    unsigned seen = 0;
    const char *type = NULL;
    if (!scan_eat(c, '{') || scan_eat(c, '}'))
        return false;
    do {
        int f = scan_key(c, fields, F_COUNT, &seen);
        if (f < 0)
            return false; /* a field of no schema here, or a duplicate: jansson judges */
        bool ok;
        switch (fields[f].kind) {
        case 's':
            ok = string(c, b, used, f == F_TYPE ? &type : f == F_CWD ? &m->cwd : &m->user);
            break;
        case 'S':
            ok = cmd(c, b, used, m);
            break;
        case 'o':
            ok = env(c, b, used, m);
            break;
        case 'b':
            ok = scan_boolean(c, &m->output);
            break;
        default:
            ok = scan_integer(c, &val[f]) && scan_in_kind(fields[f].kind, val[f]);
            break;
        }
        if (!ok)
            return false;
    } while (scan_eat(c, ','));
    if (!scan_eat(c, '}') || !type)
        return false;
    static const struct scan_type types[] = {
        {"task_launch", HRM_WIRE_TASK_LAUNCH, LAUNCH_ALLOWED, LAUNCH_NEEDED},
        {"task_end_ack", HRM_WIRE_TASK_END_ACK, ACK_ALLOWED, ACK_NEEDED}};
    const struct scan_type *t =
        scan_type_check(types, 2, type, strlen(type), seen, alone, seen & BIT(F_V), val[F_V]);
    if (!t)
        return false;
    m->type = t->type;
    m->job = val[F_JOB];
    m->task = val[F_TASK];
    m->attempt = val[F_ATTEMPT];
    m->node = val[F_NODE];
    m->gpu_mask = val[F_GPU_MASK];
    m->cpu = val[F_CPU];
    m->mem = val[F_MEM];
    m->gpus = val[F_GPUS];
    m->gpu_share = val[F_GPU_SHARE];
    m->gpu_mem = val[F_GPU_MEM];
    m->has_gpu_share = seen & BIT(F_GPU_SHARE);
    m->has_output = seen & BIT(F_OUTPUT);
    m->has_env = seen & BIT(F_ENV);
    return true;
}

/* One more message into b->msgs (a batch's item, or the frame alone). */
struct launch_at {
    struct hrm_launch_buf *b;
    size_t *used;
    bool alone;
};

static bool one_more(struct scan *c, void *ctx)
{
    struct launch_at *at = ctx;
    struct hrm_launch_buf *b = at->b;
    if (b->nmsgs >= HRM_WIRE_MAX_ITEMS)
        return false;
    HRM_GROW(b->msgs, b->cap_msgs, b->nmsgs + 1);
    if (!item(c, b, at->used, &b->msgs[b->nmsgs], at->alone))
        return false;
    b->nmsgs++;
    return true;
}

int hrm_wire_read_launches(const char *buf, size_t len, struct hrm_launch_buf *b)
{
    b->nmsgs = 0;
    b->nstrs = 0;
    if (!buf || len > HRM_WIRE_MAX_BYTES)
        return 0;
    if (b->cap_text < len + 1) { /* before any copy: the strings' pointers must not move */
        hrm_free(b->text);
        b->text = hrm_alloc(len + 1);
        b->cap_text = len + 1;
    }
    size_t used = 0;
    struct scan c = {buf, buf + len};
    bool ok = scan_batch(&c, one_more, &(struct launch_at){b, &used, false});
    if (!ok) { /* a turn's only message goes alone */
        c = (struct scan){buf, buf + len};
        b->nmsgs = b->nstrs = 0;
        used = 0;
        ok = one_more(&c, &(struct launch_at){b, &used, true});
    }
    if (ok) {
        scan_ws(&c);
        ok = c.p == c.end;
    }
    if (!ok) {
        b->nmsgs = b->nstrs = 0;
        return 0;
    }
    for (size_t i = 0; i < b->nmsgs; i++) { /* the table is where it stays now */
        struct hrm_launch_msg *m = &b->msgs[i];
        if (m->type != HRM_WIRE_TASK_LAUNCH)
            continue;
        m->argv = b->strs + m->argv_at;
        m->env = m->nenv ? b->strs + m->env_at : NULL;
    }
    return 1;
}

long hrm_launch_env_find(const struct hrm_launch_msg *m, const char *name, size_t n)
{
    for (size_t i = 0; i < m->nenv; i++) {
        const char *k = m->env[2 * i];
        if (strncmp(k, name, n) == 0 && k[n] == '\0')
            return (long)i;
    }
    return -1;
}

void hrm_launch_buf_fini(struct hrm_launch_buf *b)
{
    hrm_free(b->msgs);
    hrm_free(b->text);
    hrm_free((void *)b->strs);
    *b = (struct hrm_launch_buf){0};
}
