/* (job id, task index) -> dense id: the agents' execution queues and the scheduler processes translate wire names with it. */
#include "taskmap.h"

#include "hrm/alloc.h"

static size_t slot_of(const struct task_map *m, int64_t job, int32_t task)
{
    uint64_t k = ((uint64_t)job << 24) ^ (uint64_t)(uint32_t)task;
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (m->cap - 1);
}

static void insert(struct task_map *m, struct task_map_slot e)
{
    size_t i = slot_of(m, e.job, e.task);
    while (m->s[i].id >= 0)
        i = (i + 1) & (m->cap - 1);
    m->s[i] = e;
    m->used++;
}

void task_map_put(struct task_map *m, int64_t job, int32_t task, int32_t id)
{
    if ((m->used + 1) * 2 > m->cap) {
        struct task_map_slot *old = m->s;
        size_t oldcap = m->cap;
        m->cap = oldcap ? oldcap * 2 : 1024;
        m->s = hrm_alloc(m->cap * sizeof(*m->s));
        for (size_t i = 0; i < m->cap; i++)
            m->s[i].id = -1;
        m->used = 0;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].id >= 0)
                insert(m, old[i]);
        hrm_free(old);
    }
    insert(m, (struct task_map_slot){job, task, id});
}

static size_t find_slot(const struct task_map *m, int64_t job, int32_t task)
{
    if (!m->cap)
        return SIZE_MAX;
    for (size_t i = slot_of(m, job, task);; i = (i + 1) & (m->cap - 1)) {
        if (m->s[i].id < 0)
            return SIZE_MAX;
        if (m->s[i].job == job && m->s[i].task == task)
            return i;
    }
}

int32_t task_map_find(const struct task_map *m, int64_t job, int32_t task)
{
    size_t i = find_slot(m, job, task);
    return i == SIZE_MAX ? -1 : m->s[i].id;
}

void task_map_del(struct task_map *m, int64_t job, int32_t task)
{
    size_t i = find_slot(m, job, task), mask = m->cap - 1;
    if (i == SIZE_MAX)
        return;
    /* Backward shift: pull later entries of the probe run into the hole. */
    for (size_t j = (i + 1) & mask; m->s[j].id >= 0; j = (j + 1) & mask) {
        size_t home = slot_of(m, m->s[j].job, m->s[j].task);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->s[i] = m->s[j];
            i = j;
        }
    }
    m->s[i].id = -1;
    m->used--;
}

void task_map_clear(struct task_map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        m->s[i].id = -1;
    m->used = 0;
}

void task_map_free(struct task_map *m)
{
    hrm_free(m->s);
    *m = (struct task_map){0};
}
