/* The synthetic cluster and Poisson workload of `hrm bench sim` and `hrm bench dhrm`. */
#include "bench_workload.h"

#include <stdio.h>

#include "hrm/rng.h"

static struct hrm_cluster *uniform_cluster(const struct bench_poisson *p)
{
    struct hrm_error err;
    struct hrm_cluster *c = hrm_cluster_new(&p->net);
    char name[HRM_NAME_MAX];
    for (long long r = 0; r < (p->nodes + 39) / 40; r++) {
        snprintf(name, sizeof(name), "r%lld", r);
        hrm_cluster_add_rack(c, name, &err);
    }
    for (long long n = 0; n < p->nodes; n++) {
        snprintf(name, sizeof(name), "n%lld", n);
        struct hrm_node_desc d = {
            .name = name, .rack = (int32_t)(n / 40), .cores = (int32_t)p->cores, .mem = 16ll << 30};
        if (hrm_cluster_add_node(c, &d, &err) < 0) {
            fprintf(stderr, "%s: %s\n", p->who, err.text);
            hrm_cluster_free(c);
            return NULL;
        }
    }
    return c;
}

static double draw_ms(const struct bench_poisson *p, struct hrm_rng *rng)
{
    if (p->duration == BENCH_DURATION_UNIFORM)
        return p->task_ms * (0.5 + hrm_rng_double(rng));
    double ms = hrm_rng_exp(rng, p->task_ms);
    return ms < 1 ? 1 : ms;
}

int bench_poisson_build(const struct bench_poisson *p, struct hrm_cluster **cp,
                        struct hrm_workload **wp)
{
    struct hrm_cluster *c = uniform_cluster(p);
    if (!c)
        return -1;
    struct hrm_error err;
    struct hrm_workload *wl = hrm_workload_new();
    int32_t user = hrm_workload_user(wl, "bench");
    struct hrm_rng rng;
    hrm_rng_seed(&rng, p->seed);
    /* jobs/s so that offered work = load x capacity */
    double job_rate =
        p->load * (double)(p->nodes * p->cores) / ((double)p->per_job * p->task_ms / 1e3);
    double t = 0;
    char name[HRM_NAME_MAX];
    for (long long j = 0, left = p->tasks; left > 0; j++) {
        snprintf(name, sizeof(name), "j%lld", j);
        struct hrm_job_desc jd = {.name = name, .user = user, .submit_us = (int64_t)(t * 1e6)};
        hrm_workload_add_job(wl, &jd, &err);
        hrm_workload_add_stage(wl, p->stage, NULL, 0, &err);
        long long k = left < p->per_job ? left : p->per_job;
        for (long long i = 0; i < k; i++) {
            struct hrm_task_desc td = {.duration_us = (int64_t)(draw_ms(p, &rng) * 1e3)};
            td.req.v[HRM_DIM_CPU] = 1000;
            td.req.v[HRM_DIM_MEM] = 1ll << 30;
            hrm_workload_add_task(wl, &td, &err);
        }
        left -= k;
        t += hrm_rng_exp(&rng, 1.0 / job_rate);
    }
    *cp = c;
    *wp = wl;
    return 0;
}
