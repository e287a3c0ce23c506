/*
 * The I/O threads of a process that talks to thousands of peers (the master, a fleet of simulated
 * agents): two per CPU up to four, so that a restart's thousands of CURVE handshakes, which run
 * in parallel only on different I/O threads, are spread wider than one thread per CPU.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "hrm/transport.h"

/* This process's threads named as ZeroMQ names its I/O threads. */
static int zmq_io_threads_running(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    cr_assert_not_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(comm, sizeof(comm), f) && strncmp(comm, "ZMQbg/IO/", 9) == 0)
                n++;
            fclose(f);
        }
    }
    closedir(d);
    return n;
}

TestSuite(reconcile, .timeout = 60);

/* Old: one per CPU (2 on a 2-CPU host). */
Test(reconcile, wide_context_runs_two_io_threads_per_cpu)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long want = (cpus < 1 ? 1 : cpus) * 2;
    if (want > HRM_ZCTX_IO_THREADS_MAX)
        want = HRM_ZCTX_IO_THREADS_MAX;
    int before = zmq_io_threads_running();
    void *z = hrm_zctx_new_wide();
    cr_assert_not_null(z);
    void *s = zmq_socket(z, ZMQ_ROUTER); /* ZeroMQ starts its threads with the first socket */
    cr_assert_not_null(s);
    /* Each thread names itself once it runs: wait (bounded) for the names. */
    int n = 0;
    for (int i = 0; i < 500 && (n = zmq_io_threads_running() - before) < want; i++)
        usleep(10000);
    cr_assert_eq(n, want, "%d I/O threads for %ld CPUs (want %ld)", n, cpus, want);
    zmq_close(s);
    hrm_zctx_free(z);
}
