/* Whole-file input with fstat first: regular files only, bounded, never blocking on a FIFO. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hrm/alloc.h"
#include "hrm/readfile.h"

int hrm_read_regular_file(const char *path, const char *display, size_t max, char **out,
                          size_t *len, struct hrm_error *err)
{
    *out = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return hrm_errorf(err, -HRM_EIO, "%s: cannot open: %s", display, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return hrm_errorf(err, -HRM_EIO, "%s: cannot read: %s", display, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return hrm_errorf(err, -HRM_ESPEC, "%s: not a regular file (a %s)", display,
                          S_ISDIR(st.st_mode)    ? "directory"
                          : S_ISFIFO(st.st_mode) ? "FIFO"
                          : S_ISCHR(st.st_mode)  ? "character device"
                          : S_ISBLK(st.st_mode)  ? "block device"
                          : S_ISSOCK(st.st_mode) ? "socket"
                                                 : "special file");
    }
    if ((unsigned long long)st.st_size > max) {
        close(fd);
        return hrm_errorf(err, -HRM_ESPEC, "%s: %lld bytes, larger than the limit of %zu",
                          display, (long long)st.st_size, max);
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = hrm_alloc(cap + 1);
    for (;;) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            hrm_free(buf);
            close(fd);
            return hrm_errorf(err, -HRM_EIO, "%s: cannot read: %s", display, strerror(e));
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > max) { /* it grew while we read */
            hrm_free(buf);
            close(fd);
            return hrm_errorf(err, -HRM_ESPEC, "%s: larger than the limit of %zu bytes", display,
                              max);
        }
        if (n == cap) {
            cap = cap * 2 < max + 1 ? cap * 2 : max + 1;
            buf = hrm_realloc(buf, cap + 1);
        }
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}
