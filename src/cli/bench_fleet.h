/* hrm bench fleet's parts: the options, and the helpers its series share (bench_fleet.c). */
#ifndef HRM_CLI_BENCH_FLEET_H
#define HRM_CLI_BENCH_FLEET_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "client.h"

#define MAX_SCHEDS 16
#define MAX_QUEUED_POINTS 8

/* Fleet processes at most (--agents over --per-process). */
#define MAX_FLEETS 40

struct fopts {
    long long agents, tasks, per_job, cpus, scheds;
    double task_s, window_s;
    double jobs_every_s; /* --jobs-every: the pause between two `jobs` while the tasks run */
    const char *policy;
    bool keep, reconcile;
    long long queued[MAX_QUEUED_POINTS]; /* --queued: the series' queue lengths, 0 ended */
    int nqueued;
    char self[4096], state[512], logs[700];
    long long per_process; /* simulated agents per fleet process (--per-process) */
    int nfleets;
    pid_t master, fleets[MAX_FLEETS], sched[MAX_SCHEDS];
};

extern volatile sig_atomic_t fleet_interrupted;

double fleet_mono_s(void);
void fleet_nap_s(double s);
/* One request, its answer (owned by the caller; NULL on none); takes fields. */
json_t *fleet_call(struct client *c, int type, json_t *fields);
double fleet_proc_cpu_s(pid_t pid);
int fleet_cmp_ll(const void *a, const void *b);
long long fleet_pct(const long long *v, long long n, double p);
json_t *fleet_job_req(long long count, const char *cmd0, const char *cmd1, long long cpus);
/* Submits n jobs pipelined (per_job tasks each, the last one last); their ids into ids[];
 * the number accepted. */
long long fleet_submit_jobs(struct client *c, long long n, long long per_job, long long last,
                            const char *arg, long long *ids);

/* --queued (bench_fleet_queued.c): placements/s against the tasks queued; prints BENCH lines. */
int fleet_queued_series(const struct fopts *o, struct client *c);

#endif
