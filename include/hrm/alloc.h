/* Allocation: every allocation of hrm goes through these wrappers. */
#ifndef HRM_ALLOC_H
#define HRM_ALLOC_H

#include <stddef.h>

/*
 * Out-of-memory policy: these abort the process with a message (as Redis'
 * zmalloc does).  The scheduling core builds large, interlinked structures
 * whose partial construction would be worse than a clean stop, and a
 * scheduler that cannot allocate cannot schedule.  Keeping every allocation
 * in one place also leaves room for fault injection later.
 */
void *hrm_alloc(size_t size);                 /* uninitialised */
void *hrm_calloc(size_t count, size_t size);  /* zeroed; overflow-checked */
void *hrm_realloc(void *ptr, size_t size);
void *hrm_reallocarray(void *ptr, size_t count, size_t size); /* overflow-checked */
char *hrm_strdup(const char *s);
void hrm_free(void *ptr);

/* Grows *arr (element size elem) so that it holds at least need elements;
 * *cap is updated.  Doubling growth. */
void hrm_grow(void **arr, size_t *cap, size_t need, size_t elem);
#define HRM_GROW(arr, cap, need) hrm_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Sets the C library's allocator up for a long-running daemon that frees most of what it
 * allocates within one turn of its loop (messages, their JSON); call once at start. */
void hrm_alloc_daemon(void);

#endif
