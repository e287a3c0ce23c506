/* Per-task GPU phase models (P0), kept apart so that tasks without one cost nothing. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/workload.h"

int hrm_workload_set_gpu_phases(struct hrm_workload *wl, const struct hrm_gpu_phases *gp,
                                struct hrm_error *err)
{
    if (wl->ntasks == 0)
        return hrm_errorf(err, -EINVAL, "no task to give GPU phases to");
    int32_t task = wl->ntasks - 1;
    const struct hrm_task *t = &wl->tasks[task];
    if (gp->count < 1 || gp->gpu_us <= 0 || gp->cpu_us < 0)
        return hrm_errorf(err, -EINVAL,
                          "GPU phases need count >= 1, a positive GPU phase and "
                          "a CPU phase >= 0");
    if (t->req.v[HRM_DIM_GPU] != 1)
        return hrm_errorf(err, -EINVAL, "a task with GPU phases asks exactly one GPU");
    if (t->duration_us != gp->count * (gp->cpu_us + gp->gpu_us))
        return hrm_errorf(err, -EINVAL, "duration differs from count x (cpu + gpu)");
    if (task >= wl->ngpu_phases) {
        HRM_GROW(wl->gpu_phases, wl->cap_gpu_phases, (size_t)task + 1);
        memset(&wl->gpu_phases[wl->ngpu_phases], 0,
               (size_t)(task + 1 - wl->ngpu_phases) * sizeof(*wl->gpu_phases));
        wl->ngpu_phases = task + 1;
    }
    wl->gpu_phases[task] = *gp;
    return 0;
}
