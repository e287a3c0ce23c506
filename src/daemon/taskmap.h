/* A daemon's dense ids for the tasks it holds, found by their wire names (job id, index in the job). */
#ifndef HRM_TASKMAP_H
#define HRM_TASKMAP_H

#include <stdint.h>
#include <stddef.h>

struct task_map_slot {
    int64_t job;
    int32_t task, id; /* id -1: empty */
};

/* Open addressing, linear probing, backward-shift deletion. */
struct task_map {
    struct task_map_slot *s;
    size_t cap, used;
};

void task_map_put(struct task_map *m, int64_t job, int32_t task, int32_t id); /* a new key */
int32_t task_map_find(const struct task_map *m, int64_t job, int32_t task);    /* or -1 */
void task_map_del(struct task_map *m, int64_t job, int32_t task);              /* absent: no-op */
void task_map_clear(struct task_map *m);
void task_map_free(struct task_map *m);

#endif
