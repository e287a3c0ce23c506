/* The agents' benches at the master: kept per node, mapped to the cpu_speed and disk_bw NPARSA reads, shown by hrm nodes with the AHP scores per job type. */
#include <math.h>
#include <stdio.h>

#include "hrm/alloc.h"
#include "hrm/log.h"
#include "master_private.h"
#include "policy/nparsa_private.h"

void master_node_perf(struct master *m, struct rnode *rn, const json_t *bench)
{
    struct node_perf p = {0};
    char why[160];
    if (bench && nodeperf_from_json(bench, &p, why, sizeof(why)) < 0) {
        hrm_log(HRM_LOG_WARNING, "node %s: its bench is malformed (%s); its performance is "
                "unknown", rn->name, why);
        p = (struct node_perf){0};
    }
    if (p.cpu != rn->perf.cpu || p.disk_bw != rn->perf.disk_bw)
        m->sched.dirty = true; /* every node's cpu_speed is relative to the fastest */
    rn->perf = p;
}

void master_perf_map(const struct master *m, double *cpu_speed, double *disk_bw)
{
    struct node_perf *perf = hrm_calloc((size_t)m->nnodes + 1, sizeof(*perf));
    for (int32_t n = 0; n < m->nnodes; n++)
        perf[n] = m->nodes[n].perf;
    nodeperf_map(perf, m->nnodes, cpu_speed, disk_bw);
    hrm_free(perf);
}

/* A figure for JSON: null when unknown. */
static json_t *figure(double v)
{
    return v > 0 && isfinite(v) ? json_real(v) : json_null();
}

double *master_perf_scores(const struct master *m)
{
    const struct msched *s = &m->sched;
    if (m->dist || !s->central || !s->cluster)
        return NULL;
    const struct hrm_state *st = hrm_central_state(s->central);
    int32_t n = s->cluster->nnodes;
    double *v = hrm_calloc(2 * (size_t)n + 1, sizeof(*v));
    nparsa_scores_paper(st, NPARSA_CPU, v);
    nparsa_scores_paper(st, NPARSA_MEM, v + n);
    return v;
}

void master_perf_json(const struct master *m, int32_t n, const double *scores, json_t *o)
{
    const struct rnode *rn = &m->nodes[n];
    json_t *b = json_object();
    json_object_set_new(b, "cpu", figure(rn->perf.cpu));
    json_object_set_new(b, "mem_bw", figure(rn->perf.mem_bw));
    json_object_set_new(b, "disk_bw", figure(rn->perf.disk_bw));
    json_object_set_new(b, "at", rn->perf.at > 0 ? json_integer(rn->perf.at) : json_null());
    json_object_set_new(o, "bench", b);
    /* What the scheduler's cluster holds: the mapped figures, once it is built. */
    const struct msched *s = &m->sched;
    bool built = s->cluster && n < s->cluster->nnodes;
    json_object_set_new(o, "cpu_speed",
                        built ? json_real(s->cluster->nodes[n].cpu_speed) : json_null());
    json_t *score = json_object();
    if (scores && built) {
        double cpu = scores[n], mem = scores[s->cluster->nnodes + n];
        json_object_set_new(score, "cpu", isnan(cpu) ? json_null() : json_real(cpu));
        json_object_set_new(score, "mem", isnan(mem) ? json_null() : json_real(mem));
    }
    json_object_set_new(o, "ahp_score", score);
}
