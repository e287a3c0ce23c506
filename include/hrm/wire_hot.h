/* The agents' hot messages (task_started, task_end) read straight from a batch's text, without a jansson tree. */
#ifndef HRM_WIRE_HOT_H
#define HRM_WIRE_HOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One task_started or task_end, its fields as the generic decoder (hrm_wire_decode_from, then
 * hrm_wire_check_item) would give them.  Fields a message does not carry are 0 / false, and
 * has_start / has_end say whether start_us / end_us were there.
 */
struct hrm_hot_msg {
    int type; /* HRM_WIRE_TASK_STARTED or HRM_WIRE_TASK_END */
    int64_t job, task, attempt;
    int64_t pid;                        /* task_started */
    int64_t status, exit, signal;       /* task_end */
    int64_t start_us, end_us, cpu_us, rss;
    bool oom, has_start, has_end;
    /* A task_end's error text (borrowed), for the master's own conversion of a tree: this
     * reader declines a message that has one (NULL, has_error false). */
    const char *error;
    bool has_error;
};

/*
 * A frame of an agent read without building its tree, when it is a task_started or a task_end
 * alone, or a batch whose items are all task_started and task_end messages, in the form our
 * agents write (keys of their schemas only, integers and booleans, no escapes, no null):
 *   1: read; out[0, *n) its messages in order (at most cap).  The generic decoder would accept
 *      the frame and each of a batch's items with the same values: no error to report.
 *   0: not read (anything else, valid or not: another type, an unknown field, a string with
 *      an escape, more than cap items, a text that is not JSON).  *n is 0; the caller decodes
 *      the frame the usual way, which words any error (docs/protocol.md).
 * Why: decoding the agents' reports into trees, checking and freeing them was a sixth of the
 * master's CPU per task (docs/benchmarks.md, "Runtime throughput").
 */
int hrm_wire_read_hot(const char *buf, size_t len, struct hrm_hot_msg *out, size_t cap, size_t *n);

#endif
