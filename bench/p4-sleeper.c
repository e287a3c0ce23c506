/* p4-sleeper SECONDS: sleeps SECONDS (a decimal, "0.125") and exits 0, as /bin/sleep SECONDS.
 *
 * bench/p4-testbed --sleeper static builds it with `cc -static` and runs it as each task in
 * place of /bin/sleep.  A static program starts without the dynamic loader, shared libraries and
 * locale that /bin/sleep's start costs (docs/reproduction-p4.md, "Where the median goes beyond
 * the simulator's"): the start a long-running executor does not pay per task, which P4's
 * testbed ran its tasks in.  The task still is a process of its own that the agent starts,
 * waits for and reaps: only the program's own start is cheaper. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* "S", "S.F": whole seconds and up to 9 decimals; anything else is an error. */
static int parse_seconds(const char *s, struct timespec *out)
{
    long long sec = 0, nsec = 0;
    int digits = 0, decimals = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (sec > 100000000)
            return -1;
        sec = sec * 10 + (*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
            if (decimals == 9)
                continue; /* below a nanosecond */
            nsec = nsec * 10 + (*p - '0');
            decimals++;
        }
        for (; decimals < 9; decimals++)
            nsec *= 10;
    }
    if (*p != '\0' || digits == 0)
        return -1;
    out->tv_sec = (time_t)sec;
    out->tv_nsec = (long)nsec;
    return 0;
}

int main(int argc, char **argv)
{
    struct timespec left;
    if (argc != 2 || parse_seconds(argv[1], &left) < 0) {
        fprintf(stderr, "usage: p4-sleeper SECONDS (a decimal such as 0.125)\n");
        return 2;
    }
    /* A signal that interrupts the sleep without ending the process does not shorten it. */
    while (nanosleep(&left, &left) != 0) {
        if (errno != EINTR) {
            fprintf(stderr, "p4-sleeper: nanosleep: %s\n", strerror(errno));
            return 1;
        }
    }
    return 0;
}
