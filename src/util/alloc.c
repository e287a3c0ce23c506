/* Allocation wrappers: one place for every allocation, abort on exhaustion (see alloc.h). */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrm/alloc.h"

static void *oom(size_t size)
{
    fprintf(stderr, "hrm: out of memory (allocating %zu bytes)\n", size);
    abort();
}

void *hrm_alloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    return p ? p : oom(size);
}

void *hrm_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    return p ? p : oom(count * size);
}

void *hrm_realloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    return p ? p : oom(size);
}

void *hrm_reallocarray(void *ptr, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return oom(SIZE_MAX);
    return hrm_realloc(ptr, count * size);
}

char *hrm_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = hrm_alloc(n);
    memcpy(d, s, n);
    return d;
}

void hrm_free(void *ptr)
{
    free(ptr);
}

void hrm_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t n = *cap ? *cap : 8;
    while (n < need)
        n *= 2;
    *arr = hrm_reallocarray(*arr, n, elem);
    *cap = n;
}

/*
 * No fastbins (glibc's M_MXFAST = 0).  A daemon's turn allocates many small blocks (a message's
 * JSON values) and a few large ones (a batch's text); each large request while small freed blocks
 * sit in fastbins makes glibc consolidate them all (malloc_consolidate: 3-6 % of the master's
 * CPU under a stream of tasks, perf).  Without fastbins, small blocks are still served by the
 * per-thread cache (tcache) and the rest coalesce when freed.  Measured with trivial tasks: the
 * agents' CPU per task fell by a tenth or more (docs/benchmarks.md, one-host section).
 */
void hrm_alloc_daemon(void)
{
    mallopt(M_MXFAST, 0);
}
