/* Parsing and printing of sizes, durations, rates and CPU amounts in specs and flags. */
#ifndef HRM_UNITS_H
#define HRM_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "2G", "512M", "1.5T", "100" (bytes), "4KiB": binary multiples (K = 1024).  >= 0. */
int hrm_parse_size(const char *s, int64_t *bytes);
/* "100ms", "2s", "1.5m", "3h", "250us", "0": to microseconds.  >= 0. */
int hrm_parse_duration(const char *s, int64_t *us);
/* Bandwidth: "1Gb/s" (bits, decimal), "160MB/s" (bytes, decimal), "100MiB/s": bytes per second. */
int hrm_parse_rate(const char *s, double *bytes_per_s);
/* CPU: "2" or "1.5" cores, or "500m" milli-cores: to milli-cores. */
int hrm_parse_cpu(const char *s, int64_t *milli);

/* Human forms, written into buf (always NUL-terminated); return buf. */
char *hrm_format_size(int64_t bytes, char *buf, size_t len);
char *hrm_format_duration(int64_t us, char *buf, size_t len);

#endif
