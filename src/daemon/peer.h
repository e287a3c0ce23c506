/* What the master's peers that are daemons (agents, scheduler processes) share: finding the master, unpacking its batches. */
#ifndef HRM_PEER_H
#define HRM_PEER_H

#include <jansson.h>
#include <stddef.h>

#include "hrm/error.h"

/* The master's endpoint from <state_dir>/endpoint (hrm master writes it) into out. */
int peer_read_endpoint(const char *state_dir, char *out, size_t len, struct hrm_error *err);

/* Each item of a batch from the master that passes its schema, in order; bad ones are logged
 * and skipped. */
void peer_each_item(json_t *batch, void (*fn)(void *ctx, json_t *item), void *ctx);

#endif
