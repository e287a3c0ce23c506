/* FNV-1a, the one hash of short keys (names, peers' ids, a boot id) in hrm's own tables. */
#ifndef HRM_HASH_H
#define HRM_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The seed every table of hrm starts from.  It is not FNV's published offset basis (that has
 * one digit more); any seed hashes as well, and changing it would reorder what iterates over
 * these tables (the simulator's outputs among them), so it stays. */
#define HRM_HASH_SEED 1469598103934665603ull

/* h extended by the n bytes at p (FNV-1a): hrm_hash(HRM_HASH_SEED, p, n) for a key alone,
 * a previous result as h to chain several fields.  Not for keys an adversary chooses. */
static inline uint64_t hrm_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The same over a NUL-terminated string (without its NUL). */
static inline uint64_t hrm_hash_str(const char *s)
{
    return hrm_hash(HRM_HASH_SEED, s, strlen(s));
}

#endif
