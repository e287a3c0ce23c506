/* The monotonic clock the daemons time intervals, waits and deadlines by. */
#ifndef HRM_CLOCK_H
#define HRM_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in microseconds: never set back, so a wait computed from it never goes
 * negative when an operator or NTP moves the wall clock. */
int64_t hrm_mono_us(void);
/* The CLOCK_MONOTONIC time us microseconds (>= 0) from now, as the absolute deadline of a
 * pthread_cond_timedwait on a condition whose clock is CLOCK_MONOTONIC. */
struct timespec hrm_mono_deadline(int64_t us);

#endif
