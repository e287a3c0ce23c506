/* JSON text to and from jansson trees, faster than jansson's own for the wire's messages, with the same results. */
#ifndef HRM_JSONTEXT_H
#define HRM_JSONTEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The compact text of v: byte for byte what json_dumps(v, JSON_COMPACT) writes (keys in
 * insertion order, jansson's escapes, its spelling of reals), NULL where it returns NULL (an
 * invalid UTF-8 string, a value that is neither an object nor an array).  The caller frees the
 * text with free(); *len (if not NULL) is its length.  Why: every message of the daemons is
 * written by this, and jansson's writer (a callback per piece, printf per integer) was a sixth
 * of the master's CPU per task (docs/benchmarks.md, "Where the time goes now").
 */
char *hrm_json_dump(const json_t *v, size_t *len);

/*
 * A JSON text written piece by piece, for messages encoded without building their tree (the
 * master's launches and acknowledgements): the pieces are written as hrm_json_dump writes
 * them, so a message built here has the bytes of its tree's dump.  Start from {0}.
 */
struct hrm_jtext {
    char *p;
    size_t len, cap;
};
void hrm_jtext_put(struct hrm_jtext *t, const char *s, size_t n); /* raw bytes */
void hrm_jtext_int(struct hrm_jtext *t, json_int_t v);
/* ,"name": before a member's value, and ,"name":v for an integer member: name is one of our
 * own keys, written as is (no escapes needed). */
void hrm_jtext_key(struct hrm_jtext *t, const char *name);
void hrm_jtext_field_int(struct hrm_jtext *t, const char *name, json_int_t v);
/* A string, or a whole value (borrowed); false and nothing written where json_dumps fails. */
bool hrm_jtext_string(struct hrm_jtext *t, const char *s, size_t n);
bool hrm_jtext_value(struct hrm_jtext *t, const json_t *v);
/* The text, NUL-terminated, for free(); t is empty again. */
char *hrm_jtext_take(struct hrm_jtext *t, size_t *len);

/*
 * The tree of buf[0, len): the same tree as json_loadb(buf, len, flags, error), with the same
 * error when the text is refused.  Only flags 0 and JSON_REJECT_DUPLICATES take the fast path;
 * a text it does not take on (an escape \u, a byte over 0x7F, a number it cannot read exactly,
 * anything invalid) is handed to json_loadb, so that jansson decides and words every refusal.
 */
json_t *hrm_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error);

/*
 * The fast path alone: 1 and *out the tree when it read the text itself; 0 and *out NULL when
 * it declined (the text needs jansson: see above), having allocated nothing.
 */
int hrm_json_parse_fast(const char *buf, size_t len, size_t flags, json_t **out);

/*
 * An integer at p (before end) as jansson reads one into a json_int_t: an optional '-', no
 * leading zero, within json_int_t.  Returns the end of its digits and *v; NULL for anything
 * else a number may be (a fraction or an exponent: a real; too large: jansson's error).
 */
const char *hrm_json_scan_integer(const char *p, const char *end, json_int_t *v);

#endif
