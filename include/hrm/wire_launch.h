/* The master's task_launch and task_end_ack messages read straight from a frame's text into structs, without a jansson tree. */
#ifndef HRM_WIRE_LAUNCH_H
#define HRM_WIRE_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One task_launch or task_end_ack, its fields as the generic decoder (hrm_wire_decode_from,
 * then hrm_wire_check_item for a batch's items) would give them.  Optional fields a message
 * does not carry are 0 / NULL with their has_ flag false.  Strings are NUL-terminated and
 * borrowed from the struct hrm_launch_buf that read them, valid until its next read.
 */
struct hrm_launch_msg {
    int type; /* HRM_WIRE_TASK_LAUNCH or HRM_WIRE_TASK_END_ACK */
    int64_t job, task, attempt;
    /* task_launch only */
    int64_t node, gpu_mask, cpu, mem, gpus, gpu_share, gpu_mem;
    bool has_gpu_share, has_output, output;
    const char *cwd;
    const char *user;         /* NULL: not given */
    const char *const *argv;  /* argc strings, then NULL */
    size_t argc;
    const char *const *env;   /* nenv pairs: env[2i] a name, env[2i + 1] its value */
    size_t nenv;
    bool has_env;
    size_t argv_at, env_at;   /* the reader's own: where argv and env start in its table */
};

/* What a read leaves, reused from frame to frame (zeroed before the first read). */
struct hrm_launch_buf {
    struct hrm_launch_msg *msgs;
    size_t nmsgs, cap_msgs;
    char *text; /* the strings, each copied once with its NUL */
    size_t cap_text;
    const char **strs; /* argv and env entries of every message */
    size_t nstrs, cap_strs;
};

/*
 * A frame from the master read without building its tree, when it is a task_launch or a
 * task_end_ack alone, or a batch of only those, in the form the master writes (the schemas'
 * fields only, integers, booleans, strings of printable ASCII without escapes, an env of
 * strings with at most HRM_LAUNCH_ENV_MAX names, no null):
 *   1: read; b->msgs[0, b->nmsgs) its messages in order.  The generic decoder would accept the
 *      frame and each of a batch's items with the same values: there is no error to report.
 *   0: not read (anything else, valid or not); b->nmsgs is 0 and the caller decodes the frame
 *      the usual way, which words any error (docs/protocol.md).
 * Why: reading each launch into a tree, checking and freeing it was about a seventh of an
 * agent's loop per task (docs/benchmarks.md, "Runtime throughput").
 */
#define HRM_LAUNCH_ENV_MAX 64 /* names told apart by a pairwise check (duplicates are refused) */
int hrm_wire_read_launches(const char *buf, size_t len, struct hrm_launch_buf *b);
/* The index of the env pair named name (n bytes) in m, or -1 when m's env has none. */
long hrm_launch_env_find(const struct hrm_launch_msg *m, const char *name, size_t n);
void hrm_launch_buf_fini(struct hrm_launch_buf *b);

#endif
