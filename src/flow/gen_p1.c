/* P1's scheduling network as a min-cost flow instance (hrm bench flow, hrm bench flow-gen). */
#include <stdbool.h>

#include "hrm/alloc.h"
#include "hrm/flowgen.h"
#include "hrm/rng.h"

void hrm_flowgen_sched_fini(struct hrm_flowgen_sched *s)
{
    hrm_flow_free(s->g);
    hrm_free(s->task_arc);
    hrm_free(s->task_job);
    hrm_free(s->job_arc);
    hrm_free(s->place_arcs);
    hrm_free(s->task_place);
    hrm_free(s->mach_arc);
    *s = (struct hrm_flowgen_sched){0};
}

void hrm_flowgen_p1_defaults(struct hrm_flowgen_p1 *p)
{
    *p = (struct hrm_flowgen_p1){.gpus = 2000,
                                 .jobs = 100,
                                 .tasks_per_job = 100,
                                 .gpus_per_machine = 4,
                                 .machines_per_rack = 20,
                                 .blocks = 2,
                                 .replicas = 3,
                                 .mem_classes = 2,
                                 .big_pct = 25,
                                 .need_big_pct = 20,
                                 .per_gpu = 1,
                                 .seed = 1};
}

/*
 * P1's network with Quincy-style aggregation, sized like the paper's
 * large case.  Racks of machines_per_rack machines with gpus_per_machine GPUs;
 * big_pct % of machines have the large GPU-memory class.  A task reads
 * `blocks` blocks, each with `replicas` replicas on random machines; it gets an
 * arc to every machine holding one of its blocks (local cost), to those
 * machines' racks (in-rack cost) and to the cluster (cross-rack cost); costs
 * follow P1 (bytes / D locally, / B_r in-rack times alpha1, / B_s cross-rack
 * times alpha2).  Aggregators exist per memory class and are chained
 * class k -> class k+1 so a task that needs class k reaches exactly the GPUs
 * of class >= k.  Unscheduled vertices take N_j - A_j at cost alpha3 x the
 * job's cross-rack cost, with A_j = min(floor(Q / K), N_j).
 */
void hrm_flowgen_p1_build(const struct hrm_flowgen_p1 *p, struct hrm_flowgen_sched *s)
{
    struct hrm_rng rng;
    hrm_rng_seed(&rng, p->seed);
    long long machines = (p->gpus + p->gpus_per_machine - 1) / p->gpus_per_machine;
    long long racks = (machines + p->machines_per_rack - 1) / p->machines_per_rack;
    long long nc = p->mem_classes;
    long long ntasks = p->jobs * p->tasks_per_job;
    int32_t vhint = (int32_t)(4 + nc * (racks + 1) + machines + p->gpus + p->jobs * 2 + ntasks);
    struct hrm_flow *g = hrm_flow_new(vhint, (int32_t)(ntasks * 16 + p->gpus * 2));
    s->g = g;
    s->S = hrm_flow_add_vertex(g, 0);
    s->T = hrm_flow_add_vertex(g, 0);
    int32_t *clus = hrm_alloc(sizeof(int32_t) * (size_t)nc);
    int32_t *rack = hrm_alloc(sizeof(int32_t) * (size_t)(racks * nc));
    int32_t *mach = hrm_alloc(sizeof(int32_t) * (size_t)machines);
    int32_t *mclass = hrm_alloc(sizeof(int32_t) * (size_t)machines);
    s->nmach = (int32_t)machines;
    s->mach_arc = hrm_alloc(sizeof(int32_t) * (size_t)(machines + 1));
    for (long long c = 0; c < nc; c++) {
        clus[c] = hrm_flow_add_vertex(g, 0);
        if (c > 0)
            hrm_flow_add_arc(g, clus[c - 1], clus[c], p->gpus, 0);
    }
    for (long long r = 0; r < racks; r++)
        for (long long c = 0; c < nc; c++) {
            int32_t v = hrm_flow_add_vertex(g, 0);
            rack[r * nc + c] = v;
            hrm_flow_add_arc(g, clus[c], v, p->gpus, 0);
            if (c > 0)
                hrm_flow_add_arc(g, rack[r * nc + c - 1], v, p->gpus, 0);
        }
    long long left = p->gpus;
    for (long long m = 0; m < machines; m++) {
        long long k = left < p->gpus_per_machine ? left : p->gpus_per_machine;
        left -= k;
        mclass[m] =
            nc > 1 && (long long)hrm_rng_below(&rng, 100) < p->big_pct ? (int32_t)nc - 1 : 0;
        if (nc > 2 && mclass[m] == 0)
            mclass[m] = (int32_t)hrm_rng_below(&rng, (uint64_t)nc - 1);
        mach[m] = hrm_flow_add_vertex(g, 0);
        s->mach_arc[m] =
            hrm_flow_add_arc(g, rack[(m / p->machines_per_rack) * nc + mclass[m]], mach[m], k, 0);
        if (p->per_gpu) {
            for (long long i = 0; i < k; i++) {
                int32_t gv = hrm_flow_add_vertex(g, 0);
                hrm_flow_add_arc(g, mach[m], gv, 1, 0);
                hrm_flow_add_arc(g, gv, s->T, 1, 1);
            }
        } else {
            hrm_flow_add_arc(g, mach[m], s->T, k, 1);
        }
    }
    /* costs in units of 10 ms: D = 200 MB/s, B_r = B_s = 125 MB/s, alpha1 1.5, alpha2 3, alpha3 4
     */
    static const int64_t block_mb[] = {500, 1000, 2000, 3000};
    const double local_per_mb = 1000.0 / 200 / 10, rack_per_mb = 1.5 * 1000.0 / 125 / 10;
    const double cross_per_mb = 3.0 * 1000.0 / 125 / 10;
    s->ntasks = (int32_t)ntasks;
    s->njobs = (int32_t)p->jobs;
    s->task_arc = hrm_alloc(sizeof(int32_t) * (size_t)(ntasks + 1));
    s->task_job = hrm_alloc(sizeof(int32_t) * (size_t)(ntasks + 1));
    s->job_arc = hrm_alloc(sizeof(int32_t) * (size_t)(p->jobs + 1));
    s->task_place = hrm_alloc(sizeof(int32_t) * (size_t)(ntasks + 1));
    size_t place_cap = 0;
    s->place_arcs = NULL;
    s->nplace = 0;
    long long share = p->gpus / (p->jobs > 0 ? p->jobs : 1);
    int64_t *mcost = hrm_calloc((size_t)machines, sizeof(int64_t));
    int64_t *rcost = hrm_calloc((size_t)racks, sizeof(int64_t));
    int32_t *touched_m = hrm_alloc(sizeof(int32_t) * (size_t)(p->blocks * p->replicas + 1));
    int32_t *touched_r = hrm_alloc(sizeof(int32_t) * (size_t)(p->blocks * p->replicas + 1));
    int32_t *rep = hrm_alloc(sizeof(int32_t) * (size_t)(p->blocks * p->replicas + 1));
    int32_t t = 0;
    for (long long j = 0; j < p->jobs; j++) {
        int64_t mb = block_mb[hrm_rng_below(&rng, 4)];
        int32_t jv = hrm_flow_add_vertex(g, 0);
        s->job_arc[j] = hrm_flow_add_arc(g, s->S, jv, p->tasks_per_job, 1);
        int64_t cross_block = (int64_t)(cross_per_mb * (double)mb);
        for (long long k = 0; k < p->tasks_per_job; k++, t++) {
            int32_t tv = hrm_flow_add_vertex(g, 0);
            s->task_arc[t] = hrm_flow_add_arc(g, jv, tv, 1, 1);
            s->task_job[t] = (int32_t)j;
            s->task_place[t] = s->nplace;
            int32_t need = nc > 1 && (long long)hrm_rng_below(&rng, 100) < p->need_big_pct
                               ? (int32_t)nc - 1
                               : 0;
            int nm = 0, nr = 0, nrep = 0;
            int64_t all_cross = cross_block * p->blocks;
            int64_t local = (int64_t)(local_per_mb * (double)mb);
            int64_t inrack = (int64_t)(rack_per_mb * (double)mb);
            for (long long x = 0; x < p->blocks * p->replicas; x++) {
                int32_t m = (int32_t)hrm_rng_below(&rng, (uint64_t)machines);
                int32_t r = (int32_t)(m / p->machines_per_rack);
                rep[nrep++] = m;
                bool seen = false;
                for (int y = 0; y < nm; y++)
                    seen |= touched_m[y] == m;
                if (!seen)
                    touched_m[nm++] = m;
                seen = false;
                for (int y = 0; y < nr; y++)
                    seen |= touched_r[y] == r;
                if (!seen)
                    touched_r[nr++] = r;
            }
            /* each machine / rack holding data pays, per block, its cheapest replica */
            for (int y = 0; y < nm; y++) {
                int32_t m = touched_m[y];
                mcost[m] = 0;
                for (long long b = 0; b < p->blocks; b++) {
                    int64_t best = cross_block;
                    for (long long x = 0; x < p->replicas; x++) {
                        int32_t h = rep[b * p->replicas + x];
                        if (h == m)
                            best = local;
                        else if (h / p->machines_per_rack == m / p->machines_per_rack &&
                                 best > inrack)
                            best = inrack;
                    }
                    mcost[m] += best;
                }
            }
            for (int y = 0; y < nr; y++) {
                int32_t r = touched_r[y];
                rcost[r] = 0;
                for (long long b = 0; b < p->blocks; b++) {
                    int64_t best = cross_block;
                    for (long long x = 0; x < p->replicas; x++)
                        if (rep[b * p->replicas + x] / p->machines_per_rack == r)
                            best = inrack;
                    rcost[r] += best;
                }
            }
            for (int y = 0; y < nm; y++) {
                int32_t m = touched_m[y];
                if (mclass[m] < need)
                    continue;
                HRM_GROW(s->place_arcs, place_cap, (size_t)s->nplace + 1);
                s->place_arcs[s->nplace++] = hrm_flow_add_arc(g, tv, mach[m], 1, mcost[m]);
            }
            for (int y = 0; y < nr; y++) {
                HRM_GROW(s->place_arcs, place_cap, (size_t)s->nplace + 1);
                s->place_arcs[s->nplace++] =
                    hrm_flow_add_arc(g, tv, rack[touched_r[y] * nc + need], 1, rcost[touched_r[y]]);
            }
            HRM_GROW(s->place_arcs, place_cap, (size_t)s->nplace + 1);
            s->place_arcs[s->nplace++] = hrm_flow_add_arc(g, tv, clus[need], 1, all_cross);
        }
        long long a = share < p->tasks_per_job ? share : p->tasks_per_job;
        if (p->tasks_per_job - a > 0) {
            int32_t uv = hrm_flow_add_vertex(g, 0);
            int64_t alpha3 = 4 * cross_block * p->blocks;
            hrm_flow_add_arc(g, jv, uv, p->tasks_per_job - a, alpha3);
            hrm_flow_add_arc(g, uv, s->T, p->tasks_per_job - a, 0);
        }
    }
    s->task_place[t] = s->nplace;
    hrm_free(mcost);
    hrm_free(rcost);
    hrm_free(touched_m);
    hrm_free(touched_r);
    hrm_free(rep);
    hrm_free(clus);
    hrm_free(rack);
    hrm_free(mach);
    hrm_free(mclass);
}
