/* Error codes and the error-detail buffer: the one error convention of hrm. */
#ifndef HRM_ERROR_H
#define HRM_ERROR_H

#include <errno.h>

/*
 * Functions return 0 on success or a negative code: a negated errno value
 * (-EINVAL, -ENOMEM, -ENOENT, ...) or one of the HRM_E* codes below, which
 * live in a reserved range above errno values.  A failing function has no
 * side effects on its outputs.  Detail for a human goes into an optional
 * struct hrm_error (may be NULL) filled with hrm_errorf().
 */
#define HRM_ERRNO_MAP(X)                                                         \
    X(SPEC, "invalid specification")                                             \
    X(POLICY, "policy error")                                                    \
    X(NOFIT, "request does not fit")                                             \
    X(STATE, "operation not valid in the current state")                        \
    X(UNKNOWN_POLICY, "unknown policy")                                          \
    X(IO, "input/output error")                                                  \
    X(INFEASIBLE, "infeasible")                                                  \
    X(PASS_FULL, "the pass's starts are used up")

enum hrm_errno {
    HRM_E_BASE = 4000,
#define HRM_ERR_ENUM(name, text) HRM_E##name,
    HRM_ERRNO_MAP(HRM_ERR_ENUM)
#undef HRM_ERR_ENUM
    HRM_E_END
};

#define HRM_ERROR_TEXT_MAX 512

struct hrm_error {
    char text[HRM_ERROR_TEXT_MAX];
};

/* Text for a (negative) code returned by an hrm function or a negated errno. */
const char *hrm_strerror(int code);

/* Formats detail into err (if not NULL) and returns code, so callers can write
 * `return hrm_errorf(err, -HRM_ESPEC, "%s: ...", path);`. */
int hrm_errorf(struct hrm_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clears err (if not NULL). */
void hrm_error_clear(struct hrm_error *err);

#endif
