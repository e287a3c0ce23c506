/* Error codes to text, and the error-detail buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hrm/error.h"

const char *hrm_strerror(int code)
{
    int c = code < 0 ? -code : code;
    switch (c) {
#define HRM_ERR_CASE(name, text)                                                         \
    case HRM_E##name:                                                                    \
        return text;
        HRM_ERRNO_MAP(HRM_ERR_CASE)
#undef HRM_ERR_CASE
    default:
        break;
    }
    if (c == 0)
        return "success";
    if (c < HRM_E_BASE)
        return strerror(c);
    return "unknown error";
}

int hrm_errorf(struct hrm_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof(err->text), fmt, ap);
        va_end(ap);
    }
    return code;
}

void hrm_error_clear(struct hrm_error *err)
{
    if (err)
        err->text[0] = '\0';
}
