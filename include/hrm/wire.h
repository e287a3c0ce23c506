/* The wire protocol: every message type in one table, its JSON schema, the versioned codec. */
#ifndef HRM_WIRE_H
#define HRM_WIRE_H

#include <jansson.h>
#include <stddef.h>

#include "hrm/env.h"
#include "hrm/error.h"

/*
 * A message is one JSON object in one ZeroMQ frame:
 *   {"v": HRM_WIRE_VERSION, "type": "<name>", ...fields}
 * docs/protocol.md documents each type; tests/unit/test_codec.c checks that
 * every type of the table below appears there.
 *
 * Types come from two tables.  The scheduling roles' messages (HRM_MSG_MAP in
 * env.h) come first, with the same numbers as enum hrm_msg_type, so a struct
 * hrm_msg crosses the wire with hrm_wire_from_msg/hrm_wire_to_msg; then the
 * daemons' own messages, below.
 *
 * Schemas are strings of space-separated "name:T" fields, a trailing '?'
 * marking an optional one.  T is
 *   u  integer 0 .. 2^31-1           i  integer 0 .. 2^63-1 (ids, bytes, µs)
 *   z  any integer                   n  number
 *   s  string (<= HRM_WIRE_MAX_STRING bytes)      b  boolean
 *   o  object     a  array (<= HRM_WIRE_MAX_ITEMS)   S  array of strings
 *   B  base64 string (<= HRM_WIRE_MAX_BLOB characters): bytes of any value (logs)
 * Fields not in the schema are ignored, so a peer may add fields within a
 * version; removing or retyping one needs a new version.
 *
 * X(NAME, "name", schema, senders): senders is a mask of HRM_PEER_* allowed
 * to send the message to the master (0: sent by the master only).
 */
#define HRM_WIRE_VERSION 1
#define HRM_WIRE_MAX_BYTES (1 << 20)  /* larger messages get an error reply */
#define HRM_WIRE_MAX_STRING (64 << 10)
#define HRM_WIRE_MAX_ITEMS 65536
/* An agent's register lists every task the node runs or has finished unacknowledged;
 * it may be this large (the transport's own limit), about 70,000 finished tasks. */
#define HRM_WIRE_MAX_REGISTER_BYTES (16 << 20)
#define HRM_WIRE_MAX_BLOB (768 << 10)
/* Bytes of task output per logs_data: 256 KiB is 344 KiB of base64, well inside a frame. */
#define HRM_LOGS_CHUNK_MAX (256 << 10)

enum hrm_peer {
    HRM_PEER_AGENT = 1,  /* a node agent (key listed as "agent") */
    HRM_PEER_CLIENT = 2, /* a user's CLI (key listed as "client") */
    HRM_PEER_SCHED = 4,  /* a scheduler process, hrm sched (key listed as "scheduler") */
    /* Not a key's role: hrm_wire_decode_from's for a frame the master sent (its listings of
     * thousands of nodes or jobs may pass HRM_WIRE_MAX_BYTES, up to the 16 MiB ZeroMQ takes). */
    HRM_PEER_FROM_MASTER = 0x100,
};

#define HRM_WIRE_MAP(X)                                                                        \
    X(ERROR, "error", "code:s message:s req:i? about:s?", HRM_PEER_AGENT | HRM_PEER_CLIENT)    \
    /* several messages in one frame, between master and agent (not nested) */                 \
    X(BATCH, "batch", "msgs:a", HRM_PEER_AGENT | HRM_PEER_SCHED)                               \
    /* agent <-> master */                                                                     \
    X(REGISTER, "register",                                                                    \
      "name:s rack:s cpu:i mem:i gpus:u gpu_mem:i? cores:u? numa:u? pci:u? running:a "        \
      "finished:a cgroup:s? host:s?",                                                          \
      HRM_PEER_AGENT)                                                                          \
    X(WELCOME, "welcome", "node:u boot:i quiet_ms:u?", 0)                                      \
    X(HEARTBEAT, "heartbeat", "load:n? mem_avail:i? ntasks:u? moved_in:i? moved_out:i?", \
      HRM_PEER_AGENT | HRM_PEER_SCHED)                                                         \
    X(TASK_STARTED, "task_started", "job:i task:u attempt:u pid:u start_us:i", HRM_PEER_AGENT) \
    X(USAGE, "usage", "samples:a", HRM_PEER_AGENT)                                                 \
    X(TASK_CPU, "task_cpu", "job:i task:u attempt:u cpu:i compressed:b?", 0)                   \
    X(TASK_END_ACK, "task_end_ack", "job:i task:u attempt:u", 0)                               \
    X(LOGS_FETCH, "logs_fetch", "req:i job:i task:u attempt:u stream:s max:i offset:i?", 0)    \
    X(LOGS_DATA, "logs_data",                                                                  \
      "req:i data:s? size:i? error:s? chunk:B? next:i? eof:b? running:b? started:b? state:s? " \
      "exit:z? attempt:u?",                                                                    \
      HRM_PEER_AGENT)                                                                          \
    /* scheduler process (hrm sched) <-> master */                                             \
    X(SCHED_REGISTER, "sched_register", "name:s instances:u", HRM_PEER_SCHED)                  \
    X(SCHED_WELCOME, "sched_welcome", "base:u boot:i policy:s params:S queues:S nodes:a", 0)   \
    X(SCHED_JOB, "sched_job", "inst:u job:i queue:s? tasks:a last:b", 0)                       \
    X(SCHED_NODE, "sched_node", "node:u up:b", 0)                                              \
    /* client <-> master */                                                                    \
    X(SUBMIT, "submit", "req:i job:o key:s?", HRM_PEER_CLIENT)                                 \
    X(SUBMITTED, "submitted", "req:i id:i", 0)                                                 \
    X(JOBS, "jobs", "req:i all:b? before:i? limit:i?", HRM_PEER_CLIENT)                        \
    X(JOBS_LIST, "jobs_list", "req:i jobs:a truncated:b? next:i?", 0)                          \
    X(JOB, "job", "req:i id:i from:i? to:i? state:s? limit:i?", HRM_PEER_CLIENT)               \
    X(JOB_INFO, "job_info", "req:i job:o", 0)                                                  \
    X(NODES, "nodes", "req:i", HRM_PEER_CLIENT)                                                \
    X(NODES_LIST, "nodes_list", "req:i nodes:a", 0)                                            \
    X(CANCEL, "cancel", "req:i id:i", HRM_PEER_CLIENT)                                         \
    X(CANCELLED, "cancelled", "req:i id:i state:s", 0)                                         \
    X(WAIT, "wait", "req:i id:i", HRM_PEER_CLIENT)                                             \
    X(JOB_DONE, "job_done", "req:i id:i state:s exit:z", 0)                                    \
    X(LOGS, "logs", "req:i id:i task:u? stream:s? max:i? offset:i?", HRM_PEER_CLIENT)         \
    X(EVENTS, "events", "req:i since:i? limit:i?", HRM_PEER_CLIENT)                            \
    X(EVENTS_LIST, "events_list", "req:i events:a next:i more:b last:i", 0)

enum hrm_wire_type {
#define HRM_WIRE_ROLE_ENUM(name, text) HRM_WIRE_##name,
    HRM_MSG_MAP(HRM_WIRE_ROLE_ENUM)
#undef HRM_WIRE_ROLE_ENUM
#define HRM_WIRE_ENUM(name, text, schema, senders) HRM_WIRE_##name,
    HRM_WIRE_MAP(HRM_WIRE_ENUM)
#undef HRM_WIRE_ENUM
    HRM_WIRE_COUNT
};

/* Error codes of "error" replies: code string, meaning. */
#define HRM_WIRE_ERR_MAP(X)                                                                    \
    X(BAD_JSON, "bad_json", "not a JSON object")                                               \
    X(TOO_BIG, "too_big", "message larger than HRM_WIRE_MAX_BYTES")                            \
    X(BAD_VERSION, "bad_version", "missing or unsupported \"v\"")                              \
    X(UNKNOWN_TYPE, "unknown_type", "missing or unknown \"type\"")                             \
    X(BAD_FIELD, "bad_field", "a field is missing, of the wrong type or out of range")         \
    X(FORBIDDEN, "forbidden", "this peer's role may not send this type")                       \
    X(BAD_SPEC, "bad_spec", "the job description is invalid")                                  \
    X(NOT_FOUND, "not_found", "no such job, task or node")                                     \
    X(NOT_REGISTERED, "not_registered", "an agent message before register: register again")   \
    X(UNAVAILABLE, "unavailable", "the answer needs a node that is down")                      \
    X(STORE, "store", "the master could not make the request durable")                         \
    X(INTERNAL, "internal", "the master hit a bug; the request was not applied")               \
    X(LIMIT, "limit", "over a per-client cap (pending waits, listing size)")

enum hrm_wire_err {
#define HRM_WIRE_ERR_ENUM(name, code, text) HRM_WERR_##name,
    HRM_WIRE_ERR_MAP(HRM_WIRE_ERR_ENUM)
#undef HRM_WIRE_ERR_ENUM
    HRM_WERR_COUNT
};

const char *hrm_wire_name(int type);         /* "?" when out of range */
int hrm_wire_type_by_name(const char *name); /* or -1 */
const char *hrm_wire_schema(int type);
int hrm_wire_senders(int type);              /* HRM_PEER_* mask */
const char *hrm_wire_err_code(enum hrm_wire_err e);

/* What a failed decode says to the sender. */
struct hrm_wire_fault {
    enum hrm_wire_err code;
    char message[256];
    long long req; /* the request id, when one could be read; else -1 */
};

/*
 * Parses one frame and validates it against its type's schema.  On success
 * returns the type (>= 0) and *out (new reference, caller decrefs).  On failure
 * returns a negative code, *out is NULL and fault says what to reply.  Never
 * crashes on any input; len may be anything (larger than HRM_WIRE_MAX_BYTES is
 * refused unread).
 */
int hrm_wire_decode(const void *buf, size_t len, json_t **out, struct hrm_wire_fault *fault);
/* Same, for a frame from a peer of the given role (HRM_PEER_*, 0: unknown): an agent's
 * register may be up to HRM_WIRE_MAX_REGISTER_BYTES.  A frame refused for its size
 * gets the "req" it ends with, when it ends with one, in fault->req. */
int hrm_wire_decode_from(const void *buf, size_t len, int role, json_t **out,
                         struct hrm_wire_fault *fault);

/* Validates obj against type's schema; 0 or -EPROTO with detail in err. */
int hrm_wire_validate(int type, const json_t *obj, struct hrm_error *err);

/* Checks one message of a batch: an object with a known, non-batch "type"
 * that passes its schema.  Returns the type or -EPROTO with detail in fault. */
int hrm_wire_check_item(const json_t *item, struct hrm_wire_fault *fault);

/* A batch of items (a JSON array of whole messages, borrowed) serialised as one
 * frame, or NULL when that frame would exceed HRM_WIRE_MAX_BYTES (the caller
 * then sends the items one by one).  Caller frees with free(). */
char *hrm_wire_dump_batch(json_t *items, size_t *len);

/* One message of a batch: its tree (borrowed), or, when msg is NULL, its text (borrowed). */
struct hrm_wire_item {
    const json_t *msg;
    const char *text;
    size_t len;
};

/* The batch frame of n items: the bytes hrm_wire_dump_batch writes for the same messages
 * (texts copied as they are), or NULL over HRM_WIRE_MAX_BYTES.  Caller frees with free(). */
char *hrm_wire_batch_text(const struct hrm_wire_item *items, size_t n, size_t *len);

/* {"v": version, "type": name}: the start of every message (new reference). */
json_t *hrm_wire_new(int type);
/* The same start written as text, without the closing brace: {"v":1,"type":"name" (the
 * messages written without a tree go on with their fields; hrm/jsontext.h). */
struct hrm_jtext;
void hrm_wire_text_head(struct hrm_jtext *t, int type);
/* Serialises a message (compact); NULL on failure.  Caller frees with free(). */
char *hrm_wire_dump(const json_t *msg, size_t *len);
/* An error reply. */
json_t *hrm_wire_error(enum hrm_wire_err code, long long req, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A scheduling-role message as JSON (new reference) and back.  to_msg checks
 * the type is a role type and every field fits its struct member. */
json_t *hrm_wire_from_msg(const struct hrm_msg *msg);
int hrm_wire_to_msg(int type, const json_t *obj, struct hrm_msg *msg, struct hrm_error *err);

#endif
