/* A small strict CSV (RFC 4180) reader that reports malformed records with file:line and resumes.
 */
#include <errno.h>
#include <string.h>

#include "hrm/alloc.h"
#include "trace_private.h"

void csv_init(struct csv_reader *r, FILE *f, const char *name)
{
    memset(r, 0, sizeof(*r));
    r->f = f;
    r->name = name;
    r->line = 1;
}

void csv_fini(struct csv_reader *r)
{
    hrm_free(r->buf);
    r->buf = NULL;
}

static void put(struct csv_reader *r, char c)
{
    HRM_GROW(r->buf, r->cap, r->len + 1);
    r->buf[r->len++] = c;
}

/* Skips to just after the next newline (or EOF), whatever the quoting: after a
 * malformed record the safest resynchronisation point is a line start. */
static void skip_line(struct csv_reader *r, int c)
{
    while (c != EOF && c != '\n')
        c = getc(r->f);
    if (c == '\n')
        r->line++;
}

static int bad(struct csv_reader *r, struct hrm_error *err, int c, const char *reason)
{
    skip_line(r, c);
    return hrm_errorf(err, -HRM_ESPEC, "%s:%d: %s", r->name, r->rec_line, reason);
}

static int end_field(struct csv_reader *r)
{
    if (r->nfields == CSV_MAX_FIELDS)
        return -1;
    put(r, '\0');
    return 0;
}

int csv_next(struct csv_reader *r, struct hrm_error *err)
{
    for (;;) {
        r->len = 0;
        r->nfields = 0;
        r->rec_line = r->line;
        r->off[0] = 0;
        int c = getc(r->f);
        if (c == EOF)
            return ferror(r->f)
                       ? hrm_errorf(err, -HRM_EIO, "%s: read error: %s", r->name, strerror(errno))
                       : 0;
        if (c == '\n') { /* empty line */
            r->line++;
            continue;
        }
        if (c == '\r') {
            int d = getc(r->f);
            if (d == '\n') {
                r->line++;
                continue;
            }
            return bad(r, err, d, "carriage return not followed by a newline");
        }
        bool quoted = false, closed = false; /* in a quoted field; after its closing quote */
        bool field_start = true;
        for (;; c = getc(r->f)) {
            if (r->len >= CSV_MAX_RECORD)
                return bad(r, err, c, "record longer than 65536 bytes");
            if (c == '\0')
                return bad(r, err, c, "NUL byte in record");
            if (quoted) {
                if (c == EOF) /* named by the line the record starts on */
                    return hrm_errorf(err, -HRM_ESPEC, "%s:%d: unterminated quoted field", r->name,
                                      r->rec_line);
                if (c == '"') {
                    int d = getc(r->f);
                    if (d == '"') {
                        put(r, '"');
                        continue;
                    }
                    quoted = false;
                    closed = true;
                    c = d;
                    /* fall through to the unquoted handling of d */
                } else {
                    if (c == '\n')
                        r->line++;
                    put(r, (char)c);
                    continue;
                }
            }
            if (c == '"') {
                if (!field_start)
                    return bad(r, err, c,
                               closed ? "text after a closing quote"
                                      : "quote inside an unquoted field");
                quoted = true;
                field_start = false;
                continue;
            }
            if (c == ',') {
                if (end_field(r) < 0)
                    return bad(r, err, c, "more than 64 fields");
                r->off[++r->nfields] = r->len;
                field_start = true;
                closed = false;
                continue;
            }
            if (c == '\r') {
                int d = getc(r->f);
                if (d != '\n')
                    return bad(r, err, d, "carriage return not followed by a newline");
                c = '\n';
            }
            if (c == '\n' || c == EOF) {
                if (end_field(r) < 0)
                    return bad(r, err, c, "more than 64 fields");
                r->nfields++;
                if (c == '\n')
                    r->line++;
                return 1;
            }
            if (closed)
                return bad(r, err, c, "text after a closing quote");
            put(r, (char)c);
            field_start = false;
        }
    }
}

int trace_parse_uint(const char *s, int64_t max, int64_t *out)
{
    if (!*s)
        return -1;
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
        if (v > max)
            return -1;
    }
    *out = v;
    return 0;
}

bool trace_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= 48)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == '"' || *s == ',' || *s == '=' || *s == 0x7f)
            return false;
    return true;
}

int trace_bad_row(const struct hrm_trace_opts *opts, struct hrm_error *err, const char *msg)
{
    if (opts && opts->strict)
        return hrm_errorf(err, -HRM_ESPEC, "%s", msg);
    if (opts && opts->report)
        opts->report(opts->report_arg, msg);
    return 0;
}
