/* GET /metrics: the master's figures in the Prometheus text format, rendered on the loop when a
 * snapshot is built (docs/runtime.md, "HTTP API"). */
#include <stdio.h>
#include <stdlib.h>

#include "master_private.h"

char *master_metrics_render(const struct master *m)
{
    int64_t tasks[RTASK_NSTATES] = {0};
    int64_t unfinished = 0;
    for (size_t i = 0; i < m->njobs; i++) {
        const struct rjob *j = m->jobs[i];
        if (!j)
            continue;
        unfinished += jobs_live(j);
        for (int s = 0; s < RTASK_NSTATES; s++)
            tasks[s] += j->count.state[s];
    }
    int32_t up = 0;
    for (int32_t n = 0; n < m->nnodes; n++)
        up += m->nodes[n].up;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    fprintf(f, "# HELP hrm_jobs Jobs in the job table.\n# TYPE hrm_jobs gauge\n");
    fprintf(f, "hrm_jobs %zu\n", m->njobs);
    fprintf(f, "# HELP hrm_jobs_unfinished Jobs pending or running.\n"
               "# TYPE hrm_jobs_unfinished gauge\nhrm_jobs_unfinished %lld\n",
            (long long)unfinished);
    fprintf(f, "# HELP hrm_tasks Tasks by state.\n# TYPE hrm_tasks gauge\n");
    for (int s = 0; s < RTASK_NSTATES; s++)
        fprintf(f, "hrm_tasks{state=\"%s\"} %lld\n", hrm_rtask_state_name(s),
                (long long)tasks[s]);
    fprintf(f, "# HELP hrm_nodes_up Nodes up.\n# TYPE hrm_nodes_up gauge\nhrm_nodes_up %d\n", up);
    fclose(f);
    return out;
}
