/* What agents and scheduler processes share as peers of the master: its endpoint, its batches. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "hrm/daemon.h"
#include "hrm/log.h"
#include "hrm/wire.h"
#include "peer.h"

int peer_read_endpoint(const char *state_dir, char *out, size_t len, struct hrm_error *err)
{
    char path[1100];
    snprintf(path, sizeof(path), "%.1000s/" HRM_ENDPOINT_FILE, state_dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return hrm_errorf(err, -errno, "%s: %s (is the master running? or give --master)", path,
                          strerror(errno));
    bool ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
    return ok && out[0] ? 0 : hrm_errorf(err, -EINVAL, "%s is empty", path);
}

void peer_each_item(json_t *batch, void (*fn)(void *ctx, json_t *item), void *ctx)
{
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(batch, "msgs"), i, item)
    {
        struct hrm_wire_fault f;
        if (hrm_wire_check_item(item, &f) < 0)
            hrm_log(HRM_LOG_WARNING, "bad message from the master: %s", f.message);
        else
            fn(ctx, item);
    }
}
