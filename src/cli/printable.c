/* Text from the master made safe for a terminal: control characters shown as \xHH. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hrm/alloc.h"

static bool is_control(const unsigned char *p, size_t left)
{
    return p[0] < 0x20 || p[0] == 0x7f || (p[0] == 0xc2 && left > 1 && p[1] >= 0x80 && p[1] <= 0x9f);
}

/* A new string with every control byte (C0, DEL, and both bytes of a UTF-8 C1) as \xHH. */
static json_t *escaped(const char *s, size_t len)
{
    char *out = hrm_alloc(len * 4 + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        const unsigned char *p = (const unsigned char *)s + i;
        if (is_control(p, len - i)) {
            size_t k = p[0] == 0xc2 ? 2 : 1;
            for (size_t b = 0; b < k; b++)
                n += (size_t)snprintf(out + n, 5, "\\x%02x", p[b]);
            i += k - 1;
        } else {
            out[n++] = s[i];
        }
    }
    json_t *r = json_stringn_nocheck(out, n);
    hrm_free(out);
    return r;
}

static bool needs_escape(const json_t *v)
{
    const unsigned char *p = (const unsigned char *)json_string_value(v);
    size_t len = json_string_length(v);
    for (size_t i = 0; i < len; i++)
        if (is_control(p + i, len - i))
            return true;
    return false;
}

void cli_escape_strings(json_t *v)
{
    if (json_is_array(v)) {
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item)
        {
            if (json_is_string(item) && needs_escape(item))
                json_array_set_new(v, i, escaped(json_string_value(item), json_string_length(item)));
            else if (!json_is_string(item))
                cli_escape_strings(item);
        }
    } else if (json_is_object(v)) {
        const char *key;
        json_t *item;
        json_object_foreach(v, key, item)
        {
            if (json_is_string(item) && needs_escape(item))
                json_object_set_new(v, key, escaped(json_string_value(item), json_string_length(item)));
            else if (!json_is_string(item))
                cli_escape_strings(item);
        }
    }
}
