/* hrm_proc_stat_read: CPU times and memory of a live process, a child's CPU once reaped, and a process that is gone. */
#include <criterion/criterion.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hrm/procstat.h"

Test(usage_procstat, reads_this_process)
{
    struct hrm_proc_stat ps;
    cr_assert_eq(hrm_proc_stat_read(getpid(), &ps), 0);
    cr_assert_geq(ps.cpu_us, 0);
    cr_assert_gt(ps.rss_bytes, 0, "a running process has resident pages");
    cr_assert_eq(ps.rss_bytes % sysconf(_SC_PAGESIZE), 0, "rss counts whole pages");
}

Test(usage_procstat, a_reaped_childs_cpu_counts_as_children)
{
    struct hrm_proc_stat before, after;
    cr_assert_eq(hrm_proc_stat_read(getpid(), &before), 0);
    pid_t c = fork();
    if (c == 0) {
        /* Burn CPU until the child's own stat shows at least one tick. */
        struct hrm_proc_stat me;
        volatile unsigned long x = 0;
        do {
            for (int i = 0; i < 1000000; i++)
                x += (unsigned long)i;
        } while (hrm_proc_stat_read(getpid(), &me) == 0 && me.cpu_us == 0);
        _exit(0);
    }
    int st;
    cr_assert_eq(waitpid(c, &st, 0), c);
    cr_assert_eq(hrm_proc_stat_read(getpid(), &after), 0);
    cr_assert_gt(after.children_cpu_us, before.children_cpu_us);
}

Test(usage_procstat, a_process_that_is_gone)
{
    pid_t c = fork();
    if (c == 0)
        _exit(0);
    int st;
    cr_assert_eq(waitpid(c, &st, 0), c);
    struct hrm_proc_stat ps;
    cr_assert_eq(hrm_proc_stat_read(c, &ps), -1);
}
