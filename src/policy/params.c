/* Policy parameters: typed look-up of "key=value" items and rejection of unknown keys. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/policy.h"

/* Value of key, or NULL.  The last item wins, so a command-line item appended
 * after the spec's own overrides it. */
static const char *param_value(const struct hrm_params *p, const char *key)
{
    if (!p)
        return NULL;
    size_t klen = strlen(key);
    const char *v = NULL;
    for (size_t i = 0; i < p->count; i++) {
        const char *item = p->items[i];
        if (item && strncmp(item, key, klen) == 0 && item[klen] == '=')
            v = item + klen + 1;
    }
    return v;
}

int hrm_params_double(const struct hrm_params *p, const char *key, double *out,
                      struct hrm_error *err)
{
    const char *v = param_value(p, key);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !isfinite(d))
        return hrm_errorf(err, -HRM_ESPEC, "parameter '%s': '%s' is not a number", key, v);
    *out = d;
    return 0;
}

int hrm_params_int(const struct hrm_params *p, const char *key, int64_t *out, struct hrm_error *err)
{
    const char *v = param_value(p, key);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE)
        return hrm_errorf(err, -HRM_ESPEC, "parameter '%s': '%s' is not an integer", key, v);
    *out = (int64_t)x;
    return 0;
}

int hrm_params_bool(const struct hrm_params *p, const char *key, bool *out, struct hrm_error *err)
{
    int64_t v = *out ? 1 : 0;
    int rc = hrm_params_int(p, key, &v, err);
    if (rc)
        return rc;
    if (v != 0 && v != 1)
        return hrm_errorf(err, -HRM_ESPEC, "parameter '%s': %lld is not 0 or 1", key, (long long)v);
    *out = v == 1;
    return 0;
}

int hrm_params_ms(const struct hrm_params *p, const char *key, int64_t *us, double max_ms,
                  bool negative_is_none, struct hrm_error *err)
{
    double ms = *us < 0 ? -1.0 : (double)*us / 1000.0;
    int rc = hrm_params_double(p, key, &ms, err);
    if (rc)
        return rc;
    if (!(ms >= 0 && ms <= max_ms) && !(ms < 0 && negative_is_none))
        return hrm_errorf(err, -HRM_ESPEC, "parameter '%s': %g is not a duration in ms", key, ms);
    *us = ms < 0 ? -1 : (int64_t)llround(ms * 1000.0);
    return 0;
}

/* "a, b, c" or "none" into buf. */
static void format_known(const char *const *known, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; known && known[i] && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", known[i]);
    if (buf[0] == '\0')
        snprintf(buf, len, "it takes none");
}

int hrm_params_check(const struct hrm_params *p, const char *const *known, const char *policy,
                     struct hrm_error *err)
{
    if (!p)
        return 0;
    for (size_t i = 0; i < p->count; i++) {
        const char *item = p->items[i] ? p->items[i] : "";
        const char *eq = strchr(item, '=');
        if (!eq || eq == item)
            return hrm_errorf(err, -HRM_ESPEC, "policy '%s': parameter '%s' is not key=value",
                              policy, item);
        size_t klen = (size_t)(eq - item);
        bool ok = false;
        for (size_t k = 0; known && known[k] && !ok; k++)
            ok = strlen(known[k]) == klen && strncmp(known[k], item, klen) == 0;
        if (!ok) {
            char list[256];
            format_known(known, list, sizeof(list));
            return hrm_errorf(err, -HRM_ESPEC, "policy '%s': unknown parameter '%.*s' (%s%s)",
                              policy, (int)klen, item, known && known[0] ? "known: " : "", list);
        }
    }
    return 0;
}
