/* Makes a daemon's state folder and its files private, saying so in the log when it closes them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hrm/log.h"
#include "statedir.h"

static void close_file(const char *dir, const char *name)
{
    char path[1200];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 077))
        return;
    if (chmod(path, st.st_mode & 0700) == 0)
        hrm_log(HRM_LOG_NOTICE, "%s was readable by other users (mode %04o): now %04o", path,
                (unsigned)(st.st_mode & 07777), (unsigned)(st.st_mode & 0700));
    else
        hrm_log(HRM_LOG_WARNING, "%s is readable by other users and cannot be closed: %s",
                path, strerror(errno));
}

int statedir_make_private(const char *dir, const char *const *files, struct hrm_error *err)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return hrm_errorf(err, -errno, "%s: %s", dir, strerror(errno));
    struct stat st;
    if (stat(dir, &st) < 0)
        return hrm_errorf(err, -errno, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return hrm_errorf(err, -ENOTDIR, "%s: not a folder", dir);
    unsigned mode = (unsigned)(st.st_mode & 07777);
    if (st.st_mode & 077) {
        if ((st.st_mode & S_ISVTX) || st.st_uid != geteuid())
            return hrm_errorf(err, -EPERM, "%s: other users may enter it (mode %04o) and it is "
                              "not this user's own folder to close: give a state folder of its "
                              "own", dir, mode);
        if (chmod(dir, st.st_mode & 0700) < 0)
            return hrm_errorf(err, -errno, "%s: mode %04o lets other users in, and chmod "
                              "failed: %s", dir, mode, strerror(errno));
        hrm_log(HRM_LOG_NOTICE, "state folder %s was open to other users (mode %04o): now %04o",
                dir, mode, mode & 0700);
    }
    for (size_t i = 0; files && files[i]; i++)
        close_file(dir, files[i]);
    return 0;
}
