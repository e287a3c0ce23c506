/* Job descriptions for the real cluster: the JSON a user submits, checked and normalised. */
#ifndef HRM_JOBDESC_H
#define HRM_JOBDESC_H

#include <jansson.h>
#include <stdint.h>

#include "hrm/error.h"

/*
 * A job file (hrm submit job.json) or the flags of `hrm submit -- CMD`:
 *   {"name": "n", "user": "u", "queue": "q", "priority": 0, "kind": "batch" | "stream",
 *    "tasks": [{"cmd": ["prog", "arg"] | "shell text", "cpus": 1 | "500m",
 *               "mem": "256M" | bytes, "gpus": 0 | 2 | 0.5, "gpu_mem": "4G" | bytes,
 *               "count": 1, "env": {"K": "V"}, "cwd": "/dir"}, ...]}
 * Sizes and CPU amounts use the same syntax as the simulator's specs
 * (hrm/units.h).  "gpus" is a whole count or a share of one GPU in (0, 1);
 * "gpu_mem" is the GPU memory over all the task's GPUs and needs gpus.
 * Normalised, the job has its kind (default "batch") and every group has cmd as
 * an array of strings, cpu in milli-cores,
 * mem in bytes, gpus (the count of GPUs: 1 for a share), gpu_share (thousandths
 * of each GPU: 1..999 a share, 1000 whole GPUs, 0 without GPUs), gpu_mem
 * (bytes, 0 = not asked), count, env (object) and cwd.  env may not set
 * HRM_*, CUDA_VISIBLE_DEVICES or CUDA_MPS_*: the agent sets those.
 */
#define HRM_JOB_MAX_TASKS 1000000
#define HRM_JOB_MAX_GROUPS 1024
#define HRM_JOB_MAX_ARGS 4096
#define HRM_JOB_MAX_STRING (64 << 10) /* an argument, env name or value, cwd: the wire's limit */
#define HRM_JOB_MAX_FILE (16 << 20) /* bytes of a job file; sent compact, it must fit 1 MiB */

/* Checks desc and returns its normalised form (new reference) with "ntasks"
 * added, or NULL with err naming the field: "tasks[2].mem: ...".  cwd_default
 * fills groups without cwd (may be NULL: then "/"). */
json_t *hrm_jobdesc_normalise(const json_t *desc, const char *cwd_default,
                              struct hrm_error *err);

/* Reads a job file: a regular file of at most HRM_JOB_MAX_FILE bytes (a FIFO or a
 * device is refused before anything is read); NULL with "<path>: ..." in err. */
json_t *hrm_jobdesc_load(const char *path, struct hrm_error *err);

#endif
