/* Wire codec: message table lookups, schema validation, versioned JSON encode/decode, role messages. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/jsontext.h"
#include "hrm/wire.h"

/* Role messages carry the fields of struct hrm_msg; the agent protocol adds a
 * few of its own to three of them (docs/protocol.md). */
#define ROLE_GENERIC "status:u? from:z? job:z? task:z? node:z? attempt:z? gpu_mask:i? value:z?"
#define ROLE_P4 ROLE_GENERIC " to:z? desc:o?"

static const char *const role_names[] = {
#define ROLE_NAME(name, text) text,
    HRM_MSG_MAP(ROLE_NAME)
#undef ROLE_NAME
};

static const struct {
    int type;
    const char *schema;
    int senders;
} role_wire[] = {
    {HRM_WIRE_TASK_LAUNCH,
     "job:i task:u attempt:u node:u? gpu_mask:i? cmd:S cwd:s env:o? cpu:i mem:i gpus:u? "
     "gpu_share:u? gpu_mem:i? output:b? user:s?",
     0},
    {HRM_WIRE_TASK_KILL, "job:i task:u attempt:u", 0},
    {HRM_WIRE_TASK_END,
     "job:i task:u attempt:u status:u exit:z? signal:u? oom:b? start_us:i? end_us:i? "
     "cpu_us:i? rss:i? error:s?",
     HRM_PEER_AGENT},
    /* Distributed scheduling (docs/protocol.md, "Distributed scheduling"): what a node's
     * queue system sends travels through the master, addressed by "to"; a task it hands
     * to another node carries its launch description in "desc". */
    {HRM_WIRE_HOLD_REPLY, ROLE_P4, HRM_PEER_AGENT},
    {HRM_WIRE_GET_TASK, ROLE_P4, HRM_PEER_AGENT},
    {HRM_WIRE_RUN, ROLE_P4, HRM_PEER_AGENT | HRM_PEER_SCHED},
    /* A scheduler process's instances (hrm sched) probe, place and report through the master. */
    {HRM_WIRE_HOLD, ROLE_P4, HRM_PEER_SCHED},
    {HRM_WIRE_DEL, ROLE_P4, HRM_PEER_SCHED},
    {HRM_WIRE_JOB_END, ROLE_GENERIC, HRM_PEER_SCHED},
    /* Shared-state scheduling (docs/protocol.md, "Shared-state scheduling"): a scheduler
     * process's instances ask for snapshots and send claims; a snapshot reply carries the
     * nodes that changed since the instance's last one. */
    {HRM_WIRE_SNAP_REQUEST, ROLE_GENERIC " to:z?", HRM_PEER_SCHED},
    {HRM_WIRE_CLAIM, ROLE_GENERIC " to:z?", HRM_PEER_SCHED},
    {HRM_WIRE_SNAP_REPLY, ROLE_GENERIC " to:z? nodes:a?", 0},
    {HRM_WIRE_CLAIM_ACK, ROLE_GENERIC " to:z?", 0},
    {HRM_WIRE_MIGRATE_REQUEST, ROLE_P4, HRM_PEER_AGENT},
    {HRM_WIRE_IDLE_ADVERT, ROLE_P4, HRM_PEER_AGENT},
    {HRM_WIRE_MIGRATE_OFFER, ROLE_P4, HRM_PEER_AGENT},
    {HRM_WIRE_MIGRATE_ACCEPT, ROLE_P4, HRM_PEER_AGENT},
    {HRM_WIRE_MIGRATE_REFUSE, ROLE_P4, HRM_PEER_AGENT},
    {HRM_WIRE_MIGRATE_PARKED, ROLE_P4, HRM_PEER_AGENT},
    {HRM_WIRE_MIGRATE_PULL, ROLE_P4, HRM_PEER_AGENT},
    {HRM_WIRE_MIGRATE_CANCEL, ROLE_P4, HRM_PEER_AGENT},
};

static const struct {
    const char *name, *schema;
    int senders;
} daemon_wire[] = {
#define DAEMON_ROW(name, text, schema, senders) {text, schema, senders},
    HRM_WIRE_MAP(DAEMON_ROW)
#undef DAEMON_ROW
};

static const struct {
    const char *code, *text;
} wire_errs[] = {
#define ERR_ROW(name, code, text) {code, text},
    HRM_WIRE_ERR_MAP(ERR_ROW)
#undef ERR_ROW
};

const char *hrm_wire_name(int type)
{
    if (type >= 0 && type < HRM_MSG_COUNT)
        return role_names[type];
    if (type >= HRM_MSG_COUNT && type < HRM_WIRE_COUNT)
        return daemon_wire[type - HRM_MSG_COUNT].name;
    return "?";
}

int hrm_wire_type_by_name(const char *name)
{
    if (!name)
        return -1;
    /* Every message received looks its type up: the first byte rules out most names without
     * a call to strcmp. */
    for (int t = 0; t < HRM_WIRE_COUNT; t++) {
        const char *n = hrm_wire_name(t);
        if (n[0] == name[0] && strcmp(n, name) == 0)
            return t;
    }
    return -1;
}

const char *hrm_wire_schema(int type)
{
    if (type >= HRM_MSG_COUNT && type < HRM_WIRE_COUNT)
        return daemon_wire[type - HRM_MSG_COUNT].schema;
    for (size_t i = 0; i < sizeof(role_wire) / sizeof(role_wire[0]); i++)
        if (role_wire[i].type == type)
            return role_wire[i].schema;
    return type >= 0 && type < HRM_MSG_COUNT ? ROLE_GENERIC : "";
}

int hrm_wire_senders(int type)
{
    if (type >= HRM_MSG_COUNT && type < HRM_WIRE_COUNT)
        return daemon_wire[type - HRM_MSG_COUNT].senders;
    for (size_t i = 0; i < sizeof(role_wire) / sizeof(role_wire[0]); i++)
        if (role_wire[i].type == type)
            return role_wire[i].senders;
    return 0;
}

const char *hrm_wire_err_code(enum hrm_wire_err e)
{
    return e < HRM_WERR_COUNT ? wire_errs[e].code : "internal";
}

/* ---- schema validation ---- */

static int check_field(const json_t *v, char kind, const char *name, struct hrm_error *err)
{
    switch (kind) {
    case 'u':
    case 'i':
    case 'z': {
        if (!json_is_integer(v))
            return hrm_errorf(err, -EPROTO, "field '%s' must be an integer", name);
        json_int_t x = json_integer_value(v);
        if (kind != 'z' && x < 0)
            return hrm_errorf(err, -EPROTO, "field '%s' must not be negative", name);
        if (kind == 'u' && x > INT32_MAX)
            return hrm_errorf(err, -EPROTO, "field '%s' is out of range", name);
        return 0;
    }
    case 'n':
        return json_is_number(v) ? 0
                                 : hrm_errorf(err, -EPROTO, "field '%s' must be a number", name);
    case 's':
        if (!json_is_string(v))
            return hrm_errorf(err, -EPROTO, "field '%s' must be a string", name);
        if (json_string_length(v) > HRM_WIRE_MAX_STRING)
            return hrm_errorf(err, -EPROTO, "field '%s' is longer than %d bytes", name,
                              HRM_WIRE_MAX_STRING);
        return 0;
    case 'B':
        if (!json_is_string(v))
            return hrm_errorf(err, -EPROTO, "field '%s' must be a string", name);
        if (json_string_length(v) > HRM_WIRE_MAX_BLOB)
            return hrm_errorf(err, -EPROTO, "field '%s' is longer than %d bytes", name,
                              HRM_WIRE_MAX_BLOB);
        return 0;
    case 'b':
        return json_is_boolean(v) ? 0
                                  : hrm_errorf(err, -EPROTO, "field '%s' must be a boolean", name);
    case 'o':
        return json_is_object(v) ? 0
                                 : hrm_errorf(err, -EPROTO, "field '%s' must be an object", name);
    case 'a':
    case 'S': {
        if (!json_is_array(v))
            return hrm_errorf(err, -EPROTO, "field '%s' must be an array", name);
        if (json_array_size(v) > HRM_WIRE_MAX_ITEMS)
            return hrm_errorf(err, -EPROTO, "field '%s' has more than %d items", name,
                              HRM_WIRE_MAX_ITEMS);
        if (kind == 'S') {
            size_t i;
            const json_t *item;
            json_array_foreach(v, i, item)
            {
                if (!json_is_string(item))
                    return hrm_errorf(err, -EPROTO, "field '%s' must hold strings only", name);
            }
        }
        return 0;
    }
    default:
        return hrm_errorf(err, -EINVAL, "schema bug: kind '%c' of '%s'", kind, name);
    }
}

int hrm_wire_validate(int type, const json_t *obj, struct hrm_error *err)
{
    if (!json_is_object(obj))
        return hrm_errorf(err, -EPROTO, "message is not an object");
    const char *p = hrm_wire_schema(type);
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        char name[64];
        size_t n = strcspn(p, ":");
        if (n == 0 || n >= sizeof(name) || p[n] != ':')
            return hrm_errorf(err, -EINVAL, "schema bug in '%s'", hrm_wire_name(type));
        const char *at = p;
        char kind = p[n + 1];
        bool optional = p[n + 2] == '?';
        p += n + 2 + (optional ? 1 : 0);
        /* The name is looked up in place; copied only for an error's text. */
        const json_t *v = json_object_getn(obj, at, n);
        if (v && !json_is_null(v) && check_field(v, kind, "", NULL) == 0)
            continue;
        memcpy(name, at, n);
        name[n] = '\0';
        if (!v || json_is_null(v)) {
            if (optional)
                continue;
            return hrm_errorf(err, -EPROTO, "%s: missing field '%s'", hrm_wire_name(type), name);
        }
        int rc = check_field(v, kind, name, err);
        if (rc < 0) {
            if (err) {
                char tmp[HRM_ERROR_TEXT_MAX];
                snprintf(tmp, sizeof(tmp), "%s", err->text);
                snprintf(err->text, sizeof(err->text), "%s: %.400s", hrm_wire_name(type), tmp);
            }
            return rc;
        }
    }
    return 0;
}

/* ---- frames ---- */

static int fault(struct hrm_wire_fault *f, enum hrm_wire_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fault(struct hrm_wire_fault *f, enum hrm_wire_err code, const char *fmt, ...)
{
    if (f) {
        f->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->message, sizeof(f->message), fmt, ap);
        va_end(ap);
    }
    return -EPROTO;
}

/* The request id of a frame too large to parse, when it can be read cheaply: a client
 * adds "req" last, so a frame ending in ,"req":N} carries it in its last bytes.  A
 * false match costs only an error reply with the wrong id. */
static long long tail_req(const char *buf, size_t len)
{
    static const char key[] = "\"req\":";
    size_t i = len;
    while (i > 0 && (buf[i - 1] == ' ' || buf[i - 1] == '\n'))
        i--;
    if (i == 0 || buf[--i] != '}')
        return -1;
    size_t end = i;
    while (i > 0 && buf[i - 1] >= '0' && buf[i - 1] <= '9' && end - i < 18)
        i--;
    if (i == end || i < sizeof(key) - 1 + 1)
        return -1;
    size_t k = i - (sizeof(key) - 1);
    if (memcmp(buf + k, key, sizeof(key) - 1) != 0 || (buf[k - 1] != ',' && buf[k - 1] != '{'))
        return -1;
    long long v = 0;
    for (size_t p = i; p < end; p++)
        v = v * 10 + (buf[p] - '0');
    return v;
}

/* Every string (object keys too) and every array or object anywhere in a message,
 * known field or not, within the protocol's limits: a receiver that ignores a field
 * still holds it in memory while it handles the message. */
/* Whether the type's schema declares field name as kind 'B' (base64 bytes): those are
 * bounded by HRM_WIRE_MAX_BLOB in check_field, not by the string limit. */
static bool schema_is_blob(int type, const char *name)
{
    const char *p = hrm_wire_schema(type);
    size_t n = strlen(name);
    while (p && (p = strstr(p, name)) != NULL) {
        bool starts = p == hrm_wire_schema(type) || p[-1] == ' ';
        if (starts && p[n] == ':')
            return p[n + 1] == 'B';
        p += n;
    }
    return false;
}

static int check_limits(const json_t *v, struct hrm_error *err);

/* An object's fields within the limits; blob_type >= 0: a message of that type, whose
 * top-level 'B' fields are left to check_field. */
static int check_object_limits(const json_t *obj, int blob_type, struct hrm_error *err)
{
    if (json_object_size(obj) > HRM_WIRE_MAX_ITEMS)
        return hrm_errorf(err, -EPROTO, "an object has more than %d fields", HRM_WIRE_MAX_ITEMS);
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)obj, key, item)
    {
        /* Only a string over the string limit needs to know (a search of the schema). */
        if (blob_type >= 0 && json_is_string(item) &&
            json_string_length(item) > HRM_WIRE_MAX_STRING && schema_is_blob(blob_type, key))
            continue;
        /* A batch's items are checked one by one as messages of their own types
         * (hrm_wire_check_item), whose 'B' fields may exceed the string limit: a logs_data
         * batched with a heartbeat is as valid as one sent alone. */
        if (blob_type == HRM_WIRE_BATCH && strcmp(key, "msgs") == 0 && json_is_array(item)) {
            if (json_array_size(item) > HRM_WIRE_MAX_ITEMS)
                return hrm_errorf(err, -EPROTO, "field 'msgs': more than %d items",
                                  HRM_WIRE_MAX_ITEMS);
            continue;
        }
        if (strlen(key) > HRM_WIRE_MAX_STRING)
            return hrm_errorf(err, -EPROTO, "a field name is longer than %d bytes",
                              HRM_WIRE_MAX_STRING);
        int rc = check_limits(item, err);
        if (rc < 0) {
            if (err) {
                char tmp[HRM_ERROR_TEXT_MAX];
                snprintf(tmp, sizeof(tmp), "%s", err->text);
                snprintf(err->text, sizeof(err->text), "field '%.64s': %.400s", key, tmp);
            }
            return rc;
        }
    }
    return 0;
}

static int check_limits(const json_t *v, struct hrm_error *err)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        if (json_string_length(v) > HRM_WIRE_MAX_STRING)
            return hrm_errorf(err, -EPROTO, "a string is longer than %d bytes",
                              HRM_WIRE_MAX_STRING);
        return 0;
    case JSON_ARRAY: {
        if (json_array_size(v) > HRM_WIRE_MAX_ITEMS)
            return hrm_errorf(err, -EPROTO, "an array has more than %d items",
                              HRM_WIRE_MAX_ITEMS);
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item)
        {
            int rc = check_limits(item, err);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    case JSON_OBJECT:
        return check_object_limits(v, -1, err);
    default:
        return 0;
    }
}

int hrm_wire_decode(const void *buf, size_t len, json_t **out, struct hrm_wire_fault *f)
{
    return hrm_wire_decode_from(buf, len, 0, out, f);
}

int hrm_wire_decode_from(const void *buf, size_t len, int role, json_t **out,
                         struct hrm_wire_fault *f)
{
    *out = NULL;
    if (f) {
        f->req = -1;
        f->message[0] = '\0';
    }
    size_t max = role == HRM_PEER_AGENT || role == HRM_PEER_FROM_MASTER
                     ? HRM_WIRE_MAX_REGISTER_BYTES
                     : HRM_WIRE_MAX_BYTES;
    if (len > max) {
        fault(f, HRM_WERR_TOO_BIG, "message of %zu bytes exceeds the limit of %zu", len, max);
        if (f)
            f->req = tail_req(buf, len);
        return -EMSGSIZE;
    }
    json_error_t jerr;
    /* JSON_REJECT_DUPLICATES: two "type" keys could mean two things to two readers. */
    json_t *obj = hrm_json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj)
        return fault(f, HRM_WERR_BAD_JSON, "invalid JSON at byte %d: %s", jerr.position,
                     jerr.text);
    if (!json_is_object(obj)) {
        json_decref(obj);
        return fault(f, HRM_WERR_BAD_JSON, "a message must be a JSON object");
    }
    const json_t *req = json_object_get(obj, "req");
    if (f && json_is_integer(req))
        f->req = json_integer_value(req);
    const json_t *v = json_object_get(obj, "v");
    if (!json_is_integer(v) || json_integer_value(v) != HRM_WIRE_VERSION) {
        json_decref(obj);
        return fault(f, HRM_WERR_BAD_VERSION, "field \"v\" must be %d", HRM_WIRE_VERSION);
    }
    const char *tname = json_string_value(json_object_get(obj, "type"));
    int type = hrm_wire_type_by_name(tname);
    if (type < 0) {
        fault(f, HRM_WERR_UNKNOWN_TYPE, "unknown message type '%.64s'", tname ? tname : "(none)");
        json_decref(obj); /* after: tname points into obj */
        return -EPROTO;
    }
    /* Only an agent's register may exceed HRM_WIRE_MAX_BYTES: it lists every task the
     * node runs or has finished unacknowledged, and must arrive whole (reconciliation). */
    if (len > HRM_WIRE_MAX_BYTES && type != HRM_WIRE_REGISTER && role != HRM_PEER_FROM_MASTER) {
        json_decref(obj);
        return fault(f, HRM_WERR_TOO_BIG, "message of %zu bytes exceeds the limit of %d", len,
                     HRM_WIRE_MAX_BYTES);
    }
    struct hrm_error err;
    if (hrm_wire_validate(type, obj, &err) < 0 || check_object_limits(obj, type, &err) < 0) {
        json_decref(obj);
        return fault(f, HRM_WERR_BAD_FIELD, "%s", err.text);
    }
    *out = obj;
    return type;
}

int hrm_wire_check_item(const json_t *item, struct hrm_wire_fault *f)
{
    if (f) {
        f->req = -1;
        f->message[0] = '\0';
    }
    if (!json_is_object(item))
        return fault(f, HRM_WERR_BAD_JSON, "batch: an item is not a JSON object");
    const char *tname = json_string_value(json_object_get(item, "type"));
    int type = hrm_wire_type_by_name(tname);
    if (type < 0 || type == HRM_WIRE_BATCH)
        return fault(f, HRM_WERR_UNKNOWN_TYPE, "batch: item type '%.64s' %s",
                     tname ? tname : "(none)", type < 0 ? "is unknown" : "may not be nested");
    struct hrm_error err;
    if (hrm_wire_validate(type, item, &err) < 0 || check_object_limits(item, type, &err) < 0)
        return fault(f, HRM_WERR_BAD_FIELD, "%s", err.text);
    return type;
}

json_t *hrm_wire_new(int type)
{
    /* Built directly: json_pack reads its format string at every call, for every message. */
    json_t *m = json_object();
    json_object_set_new(m, "v", json_integer(HRM_WIRE_VERSION));
    json_object_set_new(m, "type", json_string(hrm_wire_name(type)));
    return m;
}

char *hrm_wire_dump(const json_t *msg, size_t *len)
{
    return hrm_json_dump(msg, len); /* json_dumps(msg, JSON_COMPACT)'s bytes */
}

char *hrm_wire_dump_batch(json_t *items, size_t *len)
{
    json_t *b = hrm_wire_new(HRM_WIRE_BATCH);
    json_object_set(b, "msgs", items);
    char *s = hrm_wire_dump(b, len);
    json_decref(b);
    if (s && *len > HRM_WIRE_MAX_BYTES) {
        free(s);
        return NULL;
    }
    return s;
}

void hrm_wire_text_head(struct hrm_jtext *t, int type)
{
    const char *name = hrm_wire_name(type);
    hrm_jtext_put(t, "{\"v\":", 5);
    hrm_jtext_int(t, HRM_WIRE_VERSION);
    hrm_jtext_put(t, ",\"type\":\"", 9);
    hrm_jtext_put(t, name, strlen(name));
    hrm_jtext_put(t, "\"", 1);
}

char *hrm_wire_batch_text(const struct hrm_wire_item *items, size_t n, size_t *len)
{
    struct hrm_jtext t = {0};
    hrm_wire_text_head(&t, HRM_WIRE_BATCH);
    hrm_jtext_put(&t, ",\"msgs\":[", 9);
    for (size_t i = 0; i < n; i++) {
        if (i)
            hrm_jtext_put(&t, ",", 1);
        if (!items[i].msg) {
            hrm_jtext_put(&t, items[i].text, items[i].len);
        } else if (!hrm_jtext_value(&t, items[i].msg)) {
            free(t.p); /* as json_dumps: a message it cannot write fails the batch */
            return NULL;
        }
        if (t.len > HRM_WIRE_MAX_BYTES)
            break;
    }
    hrm_jtext_put(&t, "]}", 2);
    char *s = hrm_jtext_take(&t, len);
    if (*len > HRM_WIRE_MAX_BYTES) {
        free(s);
        return NULL;
    }
    return s;
}

json_t *hrm_wire_error(enum hrm_wire_err code, long long req, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    json_t *m = hrm_wire_new(HRM_WIRE_ERROR);
    json_object_set_new(m, "code", json_string(hrm_wire_err_code(code)));
    /* Text from a peer may hold invalid UTF-8; jansson refuses it, so fall back. */
    json_t *t = json_string(text);
    json_object_set_new(m, "message", t ? t : json_string("(unprintable detail)"));
    if (req >= 0)
        json_object_set_new(m, "req", json_integer(req));
    return m;
}

/* ---- role messages: generated from the fields of struct hrm_msg ---- */

#define MSG_FIELDS(X)                                                                          \
    X(status, UINT16_MAX, 0)                                                                   \
    X(from, INT32_MAX, INT32_MIN)                                                              \
    X(job, INT32_MAX, INT32_MIN)                                                               \
    X(task, INT32_MAX, INT32_MIN)                                                              \
    X(node, INT32_MAX, INT32_MIN)                                                              \
    X(attempt, INT32_MAX, INT32_MIN)                                                           \
    X(gpu_mask, UINT32_MAX, 0)                                                                 \
    X(value, INT64_MAX, INT64_MIN)

json_t *hrm_wire_from_msg(const struct hrm_msg *msg)
{
    json_t *o = hrm_wire_new(msg->type);
#define TO_JSON(f, max, min) json_object_set_new(o, #f, json_integer((json_int_t)msg->f));
    MSG_FIELDS(TO_JSON)
#undef TO_JSON
    return o;
}

int hrm_wire_to_msg(int type, const json_t *obj, struct hrm_msg *msg, struct hrm_error *err)
{
    if (type < 0 || type >= HRM_MSG_COUNT)
        return hrm_errorf(err, -EPROTO, "'%s' is not a scheduling-role message",
                          hrm_wire_name(type));
    int rc = hrm_wire_validate(type, obj, err);
    if (rc < 0)
        return rc;
    struct hrm_msg m = {.type = (uint16_t)type};
    const json_t *v;
#define FROM_JSON(f, max, min)                                                                 \
    v = json_object_get(obj, #f);                                                              \
    if (json_is_integer(v)) {                                                                  \
        json_int_t x = json_integer_value(v);                                                  \
        if (x < (json_int_t)(min) || x > (json_int_t)(max))                          \
            return hrm_errorf(err, -EPROTO, "%s: field '%s' out of range",                     \
                              hrm_wire_name(type), #f);                                         \
        m.f = (__typeof__(m.f))x;                                                              \
    }
    MSG_FIELDS(FROM_JSON)
#undef FROM_JSON
    *msg = m;
    return 0;
}
