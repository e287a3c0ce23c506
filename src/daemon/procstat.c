/* /proc/PID/stat read once: CPU times and resident memory (proc(5) field order). */
#include "hrm/procstat.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int hrm_proc_stat_read(pid_t pid, struct hrm_proc_stat *out)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: the fields start after the last ')'. */
    char *p = strrchr(buf, ')');
    unsigned long long ut, st;
    long long cut, cst, rss;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime
     * cstime priority nice num_threads itrealvalue starttime vsize rss */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld "
                            "%*d %*d %*d %*d %*u %*u %lld",
                     &ut, &st, &cut, &cst, &rss) != 5)
        return -1;
    unsigned long long tick = (unsigned long long)sysconf(_SC_CLK_TCK);
    out->cpu_us = (int64_t)((ut + st) * 1000000ULL / tick);
    out->children_cpu_us = (int64_t)((unsigned long long)(cut + cst) * 1000000ULL / tick);
    out->rss_bytes = rss * sysconf(_SC_PAGESIZE);
    return 0;
}

long long hrm_proc_rss_kb(pid_t pid)
{
    struct hrm_proc_stat ps;
    return hrm_proc_stat_read(pid, &ps) < 0 ? -1 : (long long)(ps.rss_bytes / 1024);
}
