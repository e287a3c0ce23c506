/* Message type names, generated from the one table in env.h. */
#include "hrm/env.h"

const char *hrm_msg_name(enum hrm_msg_type type)
{
    switch (type) {
#define HRM_MSG_CASE(name, text)                                                             \
    case HRM_MSG_##name:                                                                     \
        return text;
        HRM_MSG_MAP(HRM_MSG_CASE)
#undef HRM_MSG_CASE
    default:
        return "unknown";
    }
}
