/* FGM internals (P2): timelines, matching, formulas, conformity, policy adjustment. */
#ifndef HRM_FGM_PRIVATE_H
#define HRM_FGM_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "hrm/error.h"

/* A stage of a task as the matcher sees it: wall time on the node in question. */
struct fgm_stage {
    int64_t dur_us;
    double cpu; /* milli-cores */
    double mem; /* bytes */
};

/*
 * A node's future free resources: segments [t0, t1) in time order, the last
 * one open (t1 = INT64_MAX).  cpu_free and mem_free are what is left after
 * foreign load and the stages running tasks are expected to be in; cpu_work
 * is the sum of those tasks' cpu demands (the w_i of formula (7), per us).
 */
struct fgm_seg {
    int64_t t0, t1;
    double cpu_free, mem_free;
    double cpu_work;
};

struct fgm_timeline {
    struct fgm_seg *seg;
    int32_t n, cap;
    double cap_cpu, cap_mem; /* the node's capacity N */
};

/* One running task's expected stages from start_us; after the last one ends
 * it is assumed to hold the last stage's demand until it really ends. */
struct fgm_load {
    int64_t start_us;
    int32_t nstages;
    const struct fgm_stage *st;
};

/* Builds the timeline from now: capacity less foreign load less the loads.
 * O(k log k) for k stages. */
void fgm_timeline_build(struct fgm_timeline *tl, int64_t now, double cap_cpu, double cap_mem,
                        double foreign_cpu, double foreign_mem, const struct fgm_load *loads,
                        int32_t nloads);
void fgm_timeline_fini(struct fgm_timeline *tl);

/* Formula (7): the most a window may compress cpu, given the work of the
 * running tasks w_run = sum w_i and of the new one w_new in it:
 * min(max(limitation, (w_new - p w_run) / (w_run + w_new)), cap). */
double fgm_max_compression(double w_run, double w_new, double p, double limitation, double cap);

/* Formula (15): D = sum D_i / (1 - r_ci), r_ci < 1. */
double fgm_compressed_duration(const double *d, const double *rc, int32_t n);

struct fgm_match_cfg {
    bool compress;     /* fine-grained with compression (else r_c = 0) */
    double p;          /* contention of formula (5)/(7) */
    double limitation; /* of formula (7) */
    double max_ratio;  /* cap of formula (7): 10 % */
};

/*
 * Alg. 2: the task's stages, laid from now, against the timeline.  Every
 * segment a stage overlaps must hold its memory (incompressible); its cpu
 * must fit in cpu_free + r_c * N, r_c from formula (7) over the overlap (0
 * without compression).  True on a match; *compressed says whether some
 * window needed r_c > 0.
 */
bool fgm_match_fine(const struct fgm_timeline *tl, int64_t now, const struct fgm_stage *st,
                    int32_t nst, const struct fgm_match_cfg *cfg, bool *compressed);
/* Coarse matching (Alg. 1 lines 13-15): the peak demand against the least
 * free over [now, now + total duration). */
bool fgm_match_coarse(const struct fgm_timeline *tl, int64_t now, const struct fgm_stage *st,
                      int32_t nst);

/*
 * checkQoS with formula (15): with the candidate's stages laid from now, each
 * remaining stage of each load (and of the candidate) runs at the worst
 * compression ratio max(0, 1 - N / demand) of the windows it overlaps; the
 * check passes when every one ends by its deadline (INT64_MAX = none).
 */
bool fgm_check_qos(const struct fgm_timeline *tl, int64_t now, const struct fgm_stage *cand,
                   int32_t ncand, int64_t cand_deadline, const struct fgm_load *loads,
                   const int64_t *deadlines, int32_t nloads);

/*
 * Def. 4 over n periods of lengths t_i: F = sum (mu_i - alpha_i)^2 t_i / T
 * when the time-weighted mean use exceeds the mean estimate and the idle
 * share is below th (both as fractions of capacity), else 0.
 */
double fgm_conformity(const double *mu, const double *alpha, const double *t, int32_t n,
                      double idle, double th);

/* Alg. 3: a node's allocation mode from its recent average conformity. */
enum fgm_mode { FGM_FINE_COMPRESS, FGM_FINE, FGM_COARSE, FGM_STOP };
struct fgm_thresholds {
    double sa, cg, fg; /* stop allocating > sa; coarse > cg; fine without compression > fg */
};
enum fgm_mode fgm_adjust(double conformity, const struct fgm_thresholds *th);
const char *fgm_mode_name(enum fgm_mode m);

/* What Alg. 3 did over a run (parameter mode_log; fgm_modelog.c). */
struct fgm_alg3_stats {
    int64_t into[4];         /* node mode changes, by the mode entered (enum fgm_mode) */
    int64_t windows;         /* conformity windows closed, over all nodes */
    int64_t windows_over;    /* of those, windows with F > 0 (use above the estimate, node short) */
    double max_conformity;   /* the largest node conformity (mean of its last windows) seen */
};

/* Truncates path so that one that cannot be written is refused before the
 * run: 0, or a negative code with detail naming the parameter. */
int fgm_modelog_check(const char *path, struct hrm_error *err);
/* Writes st to path, one "key value" line each (fini: errors are lost). */
void fgm_modelog_write(const char *path, const struct fgm_alg3_stats *st);

#endif
