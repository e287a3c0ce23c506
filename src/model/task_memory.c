/* Per-task memory models (P3), kept apart so that tasks without one cost nothing. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/workload.h"

int hrm_workload_set_task_memory(struct hrm_workload *wl, const struct hrm_task_memory *m,
                                 struct hrm_error *err)
{
    if (wl->ntasks == 0)
        return hrm_errorf(err, -EINVAL, "no task to give a memory model to");
    if (m->working_set <= 0 || m->spill_passes < 0 || m->spill_passes > 1000)
        return hrm_errorf(err, -EINVAL,
                          "a memory model needs a working set > 0 and spill passes in 0..1000");
    int32_t task = wl->ntasks - 1;
    if (task >= wl->ntask_memory) {
        HRM_GROW(wl->task_memory, wl->cap_task_memory, (size_t)task + 1);
        memset(&wl->task_memory[wl->ntask_memory], 0,
               (size_t)(task + 1 - wl->ntask_memory) * sizeof(*wl->task_memory));
        wl->ntask_memory = task + 1;
    }
    wl->task_memory[task] = *m;
    return 0;
}
