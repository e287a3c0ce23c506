/* A process's CPU time and resident memory from /proc/PID/stat: the agent's usage without a
 * cgroup, and hrm bench throughput's accounting of the daemons. */
#ifndef HRM_PROCSTAT_H
#define HRM_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

struct hrm_proc_stat {
    int64_t cpu_us;          /* utime + stime of the process itself */
    int64_t children_cpu_us; /* cutime + cstime: of its children it has reaped */
    int64_t rss_bytes;       /* resident set */
};

/* 0, or -1 when the process is gone or its stat line cannot be read. */
int hrm_proc_stat_read(pid_t pid, struct hrm_proc_stat *out);

/* The resident set in KiB (the benches' memory figures), or -1 as above. */
long long hrm_proc_rss_kb(pid_t pid);

#endif
