/* The distributed policies by name (DHRM, Sparrow, baselines) turned into role configurations. */
#ifndef HRM_DSETUP_H
#define HRM_DSETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hrm/dsched.h"
#include "hrm/error.h"
#include "hrm/negotiator.h"
#include "hrm/nqs.h"
#include "hrm/policy.h"

/* What a distributed policy runs: the instances, the node queues, the negotiator. */
struct hrm_dsetup {
    const char *name; /* the policy's name (static storage) */
    bool ideal;       /* the zero-wait bound: no roles at all */
    bool negotiator;  /* run the negotiator and balance the queues */
    int32_t instances;
    int32_t register_rr;            /* 0: least busy instance, 1: round robin */
    struct hrm_dsched_config sched; /* index, nqs and seed to be set per instance */
    struct hrm_nqs_config nqs;
    struct hrm_negotiator_config nego; /* nnodes and nqueues to be set by the driver */
};

/* The policies, in listing order (the simulator lists and summarises them). */
size_t hrm_dsetup_count(void);
const char *hrm_dsetup_name(size_t i);    /* NULL past the end */
const char *hrm_dsetup_summary(size_t i); /* NULL past the end */
bool hrm_dsetup_known(const char *policy);

/*
 * Fills setup for a known policy from params (defaults for absent keys);
 * latency_us (one-way message latency) scales the defaults counted in message
 * trips.  0, or -HRM_EUNKNOWN_POLICY or -HRM_ESPEC with detail.
 */
int hrm_dsetup_parse(const char *policy, const struct hrm_params *params, int64_t latency_us,
                     uint64_t seed, struct hrm_dsetup *setup, struct hrm_error *err);

/*
 * One execution queue of the nodes from its text form,
 *   NAME[,priority=P][,max=N][,cpus=C][,mem=SIZE]
 * (priority: higher runs first, default 0; max: tasks it runs at once on a node, default no
 * limit; cpus, mem: the most one task of it may ask, default no limit; units as in specs).
 * 0, or -HRM_ESPEC with detail naming the part that is wrong.
 */
int hrm_dsetup_queue_parse(const char *text, struct hrm_nqs_queue_cfg *out, struct hrm_error *err);

#endif
