/* The simulator drivers' shared parts that are not on the per-event path: set-up, failures, the
 * client. */
#include <string.h>

#include "driver.h"

void sim_core_init(struct sim_core *k, const struct hrm_workload *wl,
                   const struct hrm_sim_config *cfg, struct hrm_run_record *rec,
                   struct hrm_error *err)
{
    memset(k, 0, sizeof(*k));
    k->wl = wl;
    k->cfg = cfg;
    k->rec = rec;
    k->err = err;
}

void sim_core_fini(struct sim_core *k)
{
    sim_heap_fini(&k->heap);
}

void sim_core_fail(struct sim_core *k, int rc, const char *what, const struct hrm_msg *m)
{
    if (!k->rc)
        k->rc =
            hrm_errorf(k->err, rc, "%s rejected %s at t=%lldus: %s", what,
                       m ? hrm_msg_name(m->type) : "a timer", (long long)k->now, hrm_strerror(rc));
}

void sim_core_client_next(struct sim_core *k)
{
    if (k->next_job >= k->wl->njobs)
        return;
    int32_t j = k->next_job++;
    struct sim_event ev = {.addr = -1};
    ev.u.arg.a = j;
    sim_core_push(k, k->wl->jobs[j].submit_us, EV_ARRIVAL, &ev);
}

void sim_core_client_start(struct sim_core *k)
{
    const struct hrm_workload *wl = k->wl;
    int32_t initial =
        wl->max_parallel > 0 && wl->max_parallel < wl->njobs ? wl->max_parallel : wl->njobs;
    for (int32_t i = 0; i < initial; i++)
        sim_core_client_next(k);
}

void sim_core_client_job_end(struct sim_core *k, const struct hrm_msg *m)
{
    struct hrm_job_record *jr = &k->rec->jobs[m->job];
    jr->end_us = k->now;
    jr->failed = m->status != 0;
    if (k->now > k->rec->last_end_us)
        k->rec->last_end_us = k->now;
    k->jobs_ended++;
    if (k->wl->max_parallel > 0)
        sim_core_client_next(k);
}

int32_t sim_core_pick_instance(int32_t n, int32_t *rr, bool round_robin,
                               int64_t (*load)(void *arg, int32_t i), void *arg)
{
    int32_t pick = *rr % n;
    if (!round_robin) {
        int64_t best = load(arg, pick);
        for (int32_t k = 1; k < n; k++) {
            int32_t i = (*rr + k) % n;
            int64_t l = load(arg, i);
            if (l < best) {
                best = l;
                pick = i;
            }
        }
    }
    *rr = (pick + 1) % n;
    return pick;
}

static int64_t role_now(struct hrm_env *env)
{
    return ((struct sim_role_env *)env)->k->now;
}

static void role_timer(struct hrm_env *env, int64_t at_us, uint64_t cookie)
{
    struct sim_role_env *re = (struct sim_role_env *)env;
    struct sim_event ev = {.addr = re->addr};
    ev.u.cookie = cookie;
    sim_core_push(re->k, at_us, EV_TIMER, &ev);
}

struct sim_role_env sim_role_env(void *s, struct sim_core *k, hrm_addr addr,
                                 void (*send)(struct hrm_env *env, hrm_addr to,
                                              const struct hrm_msg *m))
{
    return (struct sim_role_env){
        .env = {.now_us = role_now, .send = send, .timer = role_timer, .ctx = s},
        .s = s,
        .k = k,
        .addr = addr};
}

void sim_core_sample(struct sim_core *k, double extra_cpu, int32_t running, int32_t waiting,
                     bool keep)
{
    double cpu = k->cap_cpu > 0 ? ((double)k->busy_cpu + extra_cpu) / (double)k->cap_cpu : 0;
    double gpu = k->cap_gpu > 0 ? (double)k->busy_gpu / (double)k->cap_gpu : 0;
    hrm_series_push(&k->rec->series, k->now, cpu, gpu, running, waiting);
    if (k->pending_other > 0 || keep) {
        struct sim_event ev = {.addr = -1};
        sim_core_push(k, k->now + k->cfg->sample_interval_us, EV_SAMPLE, &ev);
    }
}

void sim_core_sampling_start(struct sim_core *k)
{
    if (k->cfg->sample_interval_us > 0) {
        struct sim_event ev = {.addr = -1};
        sim_core_push(k, 0, EV_SAMPLE, &ev);
    }
}
