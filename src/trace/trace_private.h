/* Internals of the trace module: a small strict CSV reader and row helpers. */
#ifndef HRM_TRACE_PRIVATE_H
#define HRM_TRACE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hrm/error.h"
#include "hrm/trace.h"

/* Bounds that turn a runaway file (no newline, binary data) into a bad row
 * instead of unbounded memory: real trace rows are under 200 bytes. */
#define CSV_MAX_RECORD 65536
#define CSV_MAX_FIELDS 64

/*
 * RFC 4180 records: fields separated by ',', optionally double-quoted; inside
 * quotes '""' is a quote and commas and newlines are data.  Lines end in LF or
 * CRLF.  Empty lines are skipped.  A record that breaks the rules (quote inside
 * an unquoted field, text after a closing quote, unterminated quote, NUL byte,
 * bare CR, too long, too many fields) is reported and the reader resumes at
 * the next line, so one bad row never hides the rest of the file.
 */
struct csv_reader {
    FILE *f;          /* borrowed */
    const char *name; /* borrowed: file name for messages */
    int32_t line;     /* current physical line (1-based) */
    int32_t rec_line; /* line where the last record started */
    char *buf;        /* fields of the last record, each NUL-terminated */
    size_t len, cap;
    size_t off[CSV_MAX_FIELDS];
    int nfields;
};

void csv_init(struct csv_reader *r, FILE *f, const char *name);
void csv_fini(struct csv_reader *r);
/* 1: a record is in r (fields via csv_field); 0: end of file; -HRM_ESPEC: a
 * malformed record, err = "name:line: reason" (call again for the next one);
 * -HRM_EIO: read error. */
int csv_next(struct csv_reader *r, struct hrm_error *err);
static inline const char *csv_field(const struct csv_reader *r, int i)
{
    return r->buf + r->off[i];
}

/* Strict non-negative decimal integer <= max ("", signs, spaces, 1e3 are
 * errors).  0 or -1. */
int trace_parse_uint(const char *s, int64_t max, int64_t *out);
/* Whether s is a valid hrm name (1..47 chars, no whitespace, '"', ',', '='). */
bool trace_name_ok(const char *s);
/* Reports a bad row: with opts->strict returns -HRM_ESPEC with err set; else
 * hands the message to opts->report and returns 0. */
int trace_bad_row(const struct hrm_trace_opts *opts, struct hrm_error *err, const char *msg);

/* Whether p fits some empty node of t. */
bool trace_pod_fits_any(const struct hrm_trace *t, const struct hrm_trace_pod *p);

#endif
