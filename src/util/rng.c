/* xoshiro256** seeded through splitmix64: fast, small state, reproducible everywhere. */
#include <math.h>

#include "hrm/rng.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void hrm_rng_seed(struct hrm_rng *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&x);
}

uint64_t hrm_rng_u64(struct hrm_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void hrm_rng_fork(struct hrm_rng *rng, struct hrm_rng *child)
{
    hrm_rng_seed(child, hrm_rng_u64(rng));
}

uint64_t hrm_rng_below(struct hrm_rng *rng, uint64_t bound)
{
    /* Lemire's multiply-shift with rejection of the biased low zone. */
    __uint128_t m = (__uint128_t)hrm_rng_u64(rng) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t threshold = -bound % bound;
        while (low < threshold) {
            m = (__uint128_t)hrm_rng_u64(rng) * bound;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double hrm_rng_double(struct hrm_rng *rng)
{
    return (double)(hrm_rng_u64(rng) >> 11) * 0x1.0p-53;
}

double hrm_rng_exp(struct hrm_rng *rng, double mean)
{
    return -mean * log1p(-hrm_rng_double(rng));
}

double hrm_rng_normal(struct hrm_rng *rng, double mean, double stddev)
{
    double u1 = 1.0 - hrm_rng_double(rng); /* (0, 1] so log is finite */
    double u2 = hrm_rng_double(rng);
    return mean + stddev * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double hrm_rng_lognormal(struct hrm_rng *rng, double mean, double sigma)
{
    /* E[X] = exp(mu + sigma^2/2) = mean  =>  mu = ln(mean) - sigma^2/2 */
    double mu = log(mean) - sigma * sigma / 2.0;
    return exp(hrm_rng_normal(rng, mu, sigma));
}
