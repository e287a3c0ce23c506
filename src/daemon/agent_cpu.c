/* The master's task_cpu: FGM compressed (or released) a running task's cpu; the agent sets its cgroup quota. */
#include <errno.h>

#include "hrm/log.h"
#include "agent_private.h"

int agent_task_cpu(struct agent *a, const json_t *msg)
{
    json_int_t job = json_integer_value(json_object_get(msg, "job"));
    int task = (int)json_integer_value(json_object_get(msg, "task"));
    int attempt = (int)json_integer_value(json_object_get(msg, "attempt"));
    json_int_t cpu = json_integer_value(json_object_get(msg, "cpu"));
    bool compressed = json_is_true(json_object_get(msg, "compressed"));
    struct arun *r = NULL;
    for (size_t i = 0; i < a->nruns && !r; i++)
        if (a->runs[i].job == job && a->runs[i].task == task && a->runs[i].attempt == attempt &&
            !a->runs[i].ended)
            r = &a->runs[i];
    /* A task that ended as the message crossed it, or a confused master: nothing to apply. */
    if (!r) {
        hrm_log(HRM_LOG_WARNING,
                "task_cpu for task " HRM_TASK_FMT ": it does not run on this node; ignored",
                HRM_TASK_ARGS(job, task, attempt));
        return -ESRCH;
    }
    if (cpu < 1 || cpu > a->cpu_milli) {
        hrm_log(HRM_LOG_WARNING,
                "task_cpu for task " HRM_TASK_FMT
                ": cpu %lld is not in 1..%lld milli-cores; ignored",
                HRM_TASK_ARGS(job, task, attempt), (long long)cpu, (long long)a->cpu_milli);
        return -EINVAL;
    }
    int rc = cg_task_cpu(a, r, cpu);
    hrm_log(rc < 0 ? HRM_LOG_NOTICE : HRM_LOG_INFO, "task " HRM_TASK_FMT ": cpu %s %lld milli-cores%s",
            HRM_TASK_ARGS(job, task, attempt), compressed ? "compressed to" : "released to",
            (long long)cpu, rc < 0 ? " not applied: the task has no cgroup" : "");
    return rc < 0 ? rc : 0;
}
