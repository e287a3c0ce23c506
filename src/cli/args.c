/* Shared by the subcommands: integer flags, the monotonic clock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"

int cli_parse_int(const char *cmd, const char *flag, const char *s, long long lo, long long hi,
                  long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno || v < lo || v > hi) {
        fprintf(stderr, "hrm %s: %s: '%s' must be an integer in %lld..%lld\n", cmd, flag, s, lo,
                hi);
        return -1;
    }
    *out = v;
    return 0;
}

double cli_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
