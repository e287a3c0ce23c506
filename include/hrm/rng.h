/* Seeded pseudo-random generator (xoshiro256**): every random choice of hrm comes from one. */
#ifndef HRM_RNG_H
#define HRM_RNG_H

#include <stdint.h>

struct hrm_rng {
    uint64_t s[4];
};

/* Seeds with splitmix64 so that any seed, 0 included, gives a good state. */
void hrm_rng_seed(struct hrm_rng *rng, uint64_t seed);
/* Derives an independent stream (for a policy, a generator, ...) from rng. */
void hrm_rng_fork(struct hrm_rng *rng, struct hrm_rng *child);
uint64_t hrm_rng_u64(struct hrm_rng *rng);
/* Uniform in [0, bound); bound > 0.  Unbiased (Lemire). */
uint64_t hrm_rng_below(struct hrm_rng *rng, uint64_t bound);
/* Uniform double in [0, 1). */
double hrm_rng_double(struct hrm_rng *rng);
/* Exponential with the given mean. */
double hrm_rng_exp(struct hrm_rng *rng, double mean);
/* Normal (Box-Muller, no cached second value so the stream stays simple). */
double hrm_rng_normal(struct hrm_rng *rng, double mean, double stddev);
/* Log-normal with the given mean of the distribution (not of its log) and sigma of the log. */
double hrm_rng_lognormal(struct hrm_rng *rng, double mean, double sigma);

#endif
