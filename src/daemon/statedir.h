/* A daemon's state folder is private: hrm.db holds the jobs' environments, output the tasks' data. */
#ifndef HRM_STATEDIR_H
#define HRM_STATEDIR_H

#include "hrm/error.h"

/*
 * Creates dir (0700) if missing.  An existing folder that its group or others
 * may enter is made 0700 and the change logged, as are the files of `files`
 * (names in dir, NULL-terminated; missing ones skipped) that they may read.
 * A folder this user does not own, or a shared one (sticky bit, as /tmp), is
 * not changed but refused: it is not ours to close.
 */
int statedir_make_private(const char *dir, const char *const *files, struct hrm_error *err);

#endif
