/* What the three simulator drivers share: virtual time, the event queue, the client, utilisation
 * and the loop. */
#ifndef HRM_SIM_DRIVER_H
#define HRM_SIM_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/env.h"
#include "hrm/sim.h"
#include "heap.h"

/*
 * The central driver (sim.c), the distributed one (dsim.c) and the
 * shared-state one (ssim.c) differ in the roles they route messages between;
 * they share everything else here.  Each embeds one struct sim_core and hands
 * sim_core_run its dispatch function.  The hot functions are inline so that
 * the drivers' event paths compile as before (one translation unit each).
 */
struct sim_core {
    const struct hrm_workload *wl;    /* borrowed */
    const struct hrm_sim_config *cfg; /* borrowed, never NULL */
    struct hrm_run_record *rec;       /* borrowed */
    struct hrm_error *err;            /* borrowed */
    struct sim_heap heap;
    int64_t now;
    int64_t pending_other; /* queued events other than samples and model steps */
    int32_t next_job;      /* the client's next job to submit */
    int32_t jobs_ended;
    int rc; /* the run's first failure; the loop stops at it */
    /* utilisation: what the executors hold, integrated from the first start */
    int64_t busy_cpu, busy_gpu, cap_cpu, cap_gpu, area_at;
};

void sim_core_init(struct sim_core *k, const struct hrm_workload *wl,
                   const struct hrm_sim_config *cfg, struct hrm_run_record *rec,
                   struct hrm_error *err);
void sim_core_fini(struct sim_core *k);

/* Samples and execution-model steps recur for as long as anything else is
 * queued, so they do not count as work left (see the samplers). */
static inline bool sim_core_is_work(enum sim_event_kind kind)
{
    return kind != EV_SAMPLE && kind != EV_COMPRESS;
}

/* Queues ev at t (never before now). */
static inline void sim_core_push(struct sim_core *k, int64_t t, enum sim_event_kind kind,
                                 struct sim_event *ev)
{
    ev->t = t < k->now ? k->now : t;
    ev->kind = kind;
    if (sim_core_is_work(kind))
        k->pending_other++;
    sim_heap_push(&k->heap, ev);
}

/* Integrates busy and capacity up to now; call before either changes. */
static inline void sim_core_area_update(struct sim_core *k)
{
    struct hrm_run_record *r = k->rec;
    if (r->first_start_us >= 0) {
        double dt = (double)(k->now - k->area_at);
        r->cpu_area += (double)k->busy_cpu * dt;
        r->gpu_area += (double)k->busy_gpu * dt;
        r->cpu_capacity_area += (double)k->cap_cpu * dt;
        r->gpu_capacity_area += (double)k->cap_gpu * dt;
    }
    k->area_at = k->now;
}

/* A task of job starts now: the run's first start (utilisation is integrated from it) and the
 * job's.  Call after the executor's busy counts changed (sim_core_area_update first). */
static inline void sim_core_first_start(struct sim_core *k, int32_t job)
{
    if (k->rec->first_start_us < 0) {
        k->rec->first_start_us = k->now;
        k->area_at = k->now;
    }
    if (k->rec->jobs[job].first_start_us < 0)
        k->rec->jobs[job].first_start_us = k->now;
}

/* How long a simulated executor holds task t's slot on a node of the given speed: its duration
 * scaled (rounded to the microsecond), plus execution.task_overhead, while its process starts. */
static inline int64_t sim_core_exec_run_us(const struct sim_core *k, const struct hrm_task *t,
                                           double speed)
{
    return (int64_t)((double)t->duration_us / speed + 0.5) +
           hrm_execution_task_overhead_us(k->cfg->execution);
}

/* Records the run's first failure of a role: "WHAT rejected MSG at t=...". */
void sim_core_fail(struct sim_core *k, int rc, const char *what, const struct hrm_msg *m);

/* ---- the client ---- */

/* Queues the arrival (EV_ARRIVAL, job in u.arg.a) of the next job, if any. */
void sim_core_client_next(struct sim_core *k);
/* Queues the first arrivals: every job (open loop) or the first
 * max_parallel (closed loop, the P1 testbed). */
void sim_core_client_start(struct sim_core *k);
/* The client got JOB_END: records the end; the closed loop submits the next. */
void sim_core_client_job_end(struct sim_core *k, const struct hrm_msg *m);
/* The scheduler instance a job registers with: the least loaded (ties: the
 * next in turn after *rr), or plain turn when round_robin.  Advances *rr. */
int32_t sim_core_pick_instance(int32_t n, int32_t *rr, bool round_robin,
                               int64_t (*load)(void *arg, int32_t i), void *arg);
/* Queues the first utilisation sample (at 0) when the config asks for samples. */
void sim_core_sampling_start(struct sim_core *k);
/* One utilisation sample: cpu = (held cores + extra_cpu) / cores, gpu likewise, and the tasks
 * running and waiting.  The next is queued while other events are (or keep): a sample alone
 * must not keep the run going. */
void sim_core_sample(struct sim_core *k, double extra_cpu, int32_t running, int32_t waiting,
                     bool keep);

/* A role driver's sample (dsim.c, ssim.c): running tasks on the executors; of the tasks that
 * arrived, the others not done wait. */
static inline void sim_core_sample_roles(struct sim_core *k, int64_t running, int64_t arrived,
                                         int64_t done)
{
    sim_core_sample(k, 0, (int32_t)running, (int32_t)(arrived - running - done), false);
}

/* ---- roles' environments (the distributed and shared-state drivers) ---- */

/*
 * The hrm_env a driver gives one role.  The role sees only &env; the driver's
 * send callback casts it back to learn which role is sending and to reach
 * its own state s.  Time and timers are the same for every driver: now is
 * the core's clock, a timer is an EV_TIMER event for the role's address.
 */
struct sim_role_env {
    struct hrm_env env; /* first, so a role's env pointer is the whole struct */
    void *s;            /* the driver (borrowed) */
    struct sim_core *k; /* its core (borrowed) */
    hrm_addr addr;      /* the role's address */
};

struct sim_role_env sim_role_env(void *s, struct sim_core *k, hrm_addr addr,
                                 void (*send)(struct hrm_env *env, hrm_addr to,
                                              const struct hrm_msg *m));

/* ---- the loop ---- */

/*
 * Pops and dispatches events until none is left, every job has ended, a
 * failure was recorded, or the config's until_us is passed; after (may be
 * NULL) runs after each event.  Reports progress through the config.
 * Returns the number of events dispatched.  Inline so that a driver's
 * dispatch, passed as a constant, is inlined into its loop.
 */
static inline int64_t sim_core_run(struct sim_core *k,
                                   void (*dispatch)(void *arg, const struct sim_event *ev),
                                   void (*after)(void *arg), void *arg)
{
    const struct hrm_sim_config *cfg = k->cfg;
    int64_t every = cfg->progress_every > 0 ? cfg->progress_every : (1 << 20);
    int64_t events = 0;
    struct sim_event ev;
    while (k->heap.n > 0 && !k->rc && k->jobs_ended < k->wl->njobs) {
        sim_heap_pop(&k->heap, &ev);
        if (cfg->until_us > 0 && ev.t > cfg->until_us)
            break;
        if (sim_core_is_work(ev.kind))
            k->pending_other--;
        k->now = ev.t;
        dispatch(arg, &ev);
        if (after)
            after(arg);
        if (++events % every == 0 && cfg->progress) {
            struct hrm_sim_progress pr = {.now_us = k->now,
                                          .events = events,
                                          .jobs_done = k->jobs_ended,
                                          .njobs = k->wl->njobs};
            cfg->progress(cfg->progress_arg, &pr);
        }
    }
    return events;
}

/* The role drivers' (dsim.c, ssim.c) run once their roles are built: the client's first
 * arrivals, the samples, the loop with dispatch (no after step), the last utilisation span, and
 * the count of events in the run record. */
static inline void sim_core_run_roles(struct sim_core *k,
                                      void (*dispatch)(void *arg, const struct sim_event *ev),
                                      void *arg)
{
    sim_core_client_start(k);
    sim_core_sampling_start(k);
    int64_t events = sim_core_run(k, dispatch, NULL, arg);
    sim_core_area_update(k);
    k->rec->events = events;
}

#endif
