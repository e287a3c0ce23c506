/* Reading a whole input file safely: a regular file only, never more than a bound. */
#ifndef HRM_READFILE_H
#define HRM_READFILE_H

#include <stddef.h>

#include "hrm/error.h"

/*
 * Reads the regular file at path into a new NUL-terminated buffer (*out, caller
 * frees with hrm_free; *len excludes the NUL).  The file is opened without
 * blocking and checked with fstat before any byte is read, so a FIFO, a device
 * such as /dev/zero or a directory is refused at once instead of hanging or
 * being read without end; a file larger than max bytes is refused from its size
 * (and again while reading, in case it grows).  Returns 0, or a negative code
 * with "<display>: <reason>" in err (-HRM_EIO: cannot open/read, -HRM_ESPEC:
 * not a regular file or too large).
 */
int hrm_read_regular_file(const char *path, const char *display, size_t max, char **out,
                          size_t *len, struct hrm_error *err);

#endif
