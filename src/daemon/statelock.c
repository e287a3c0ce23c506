/* The lock files of a state folder: one process holds each for its life (flock), with its pid inside. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "hrm/daemon.h"

/* The pid the holder wrote, or 0 if unreadable (it may be writing it right now). */
static long holder_pid(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

int hrm_state_lock(const char *state_dir, const char *file, const char *holder,
                   struct hrm_error *err)
{
    char path[1100];
    snprintf(path, sizeof(path), "%.1000s/%s", state_dir, file);
    /* flock, not fcntl locks: a flock belongs to the open file, so nothing else
     * this process opens or closes releases it, and the kernel drops it when the
     * holder dies, even by SIGKILL: a stale file never blocks a restart. */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return hrm_errorf(err, -errno, "%s: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        long pid = e == EWOULDBLOCK ? holder_pid(fd) : 0;
        close(fd);
        if (e != EWOULDBLOCK)
            return hrm_errorf(err, -e, "%s: %s", path, strerror(e));
        if (pid > 0)
            return hrm_errorf(err, -EBUSY, "%s is in use: %s with pid %ld holds %s", state_dir,
                              holder, pid, path);
        return hrm_errorf(err, -EBUSY, "%s is in use: %s holds %s", state_dir, holder, path);
    }
    char text[32];
    int len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)len, 0) != len) {
        int e = errno;
        close(fd);
        return hrm_errorf(err, -e, "%s: %s", path, strerror(e));
    }
    return fd;
}
