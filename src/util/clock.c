/* The daemons' monotonic clock (include/hrm/clock.h). */
#include "hrm/clock.h"

int64_t hrm_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct timespec hrm_mono_deadline(int64_t us)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ns = ts.tv_nsec + (us % 1000000) * 1000; /* under 2 s: no overflow for any us */
    ts.tv_sec += us / 1000000 + ns / 1000000000;
    ts.tv_nsec = ns % 1000000000;
    return ts;
}
