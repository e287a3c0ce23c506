/* The master's step trace (hrm master --trace FILE): one line per step of a task on its way through the scheduler, for bench p4real's "where the time goes". */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "master_private.h"

/*
 * Each line is "WALL_US STEP JOB TASK NODE": the master's clock (CLOCK_REALTIME, the clock of
 * the agents' start_us/end_us on one host) when the master handled the step, the job's id,
 * the task's index (-1: the step is about the whole job, or a probe of a job's batch) and the
 * node (-1: none).  Steps: submit (accepted), handed (given to a scheduler instance), probe
 * (a hold, reserve, del or no_task relayed to a node), reply (a node's hold_reply or get_task
 * relayed to its instance), run (a placement relayed to its node), started (the node's
 * task_started), ended (the node's task_end), done (the job finished), and "flush" once per
 * turn that sent anything (JOB = messages sent, TASK = the turn's length in µs): when what the
 * steps of that turn decided left the master, after its commit; "relay" (same fields) each time
 * relays that need no commit (probes, replies: master_relay) left before it.  The file is written through a buffer,
 * flushed at each housekeeping tick and when the master stops; nothing reads it back.
 */

int trace_open(struct master *m, struct hrm_error *err)
{
    if (!m->cfg.trace_path)
        return 0;
    m->trace = fopen(m->cfg.trace_path, "ae"); /* a restarted master goes on after its past */
    if (!m->trace)
        return hrm_errorf(err, -errno, "--trace %s: %s", m->cfg.trace_path, strerror(errno));
    setvbuf(m->trace, NULL, _IOFBF, 1 << 16);
    return 0;
}

void trace_close(struct master *m)
{
    if (m->trace)
        fclose(m->trace);
    m->trace = NULL;
}

void trace_step(struct master *m, const char *step, int64_t job, int32_t task, int32_t node)
{
    if (m->trace)
        fprintf(m->trace, "%lld %s %lld %d %d\n", (long long)master_now_us(), step,
                (long long)job, task, node);
}
