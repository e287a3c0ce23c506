/*
 * A stand-in for NVIDIA's libnvidia-ml.so.1 with the entry points the agent uses, for the
 * tests of GPU discovery on machines without a GPU.  Its GPUs come from the environment:
 *   HRM_NVML_STUB="UUID,NAME,MEM_MIB,NUMA;UUID,NAME,MEM_MIB,NUMA;..."
 * (unset or empty: no GPU).  NUMA is the OS number of the GPU's NUMA node, -1 for none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define MAX_GPUS 64

struct stub_gpu {
    char uuid[80], name[96];
    unsigned long long mem;
    int numa;
};

struct nvml_memory {
    unsigned long long total, free, used;
};

static struct stub_gpu gpus[MAX_GPUS];
static unsigned int ngpus;
static int inited;

/* Exported with the names and calling conventions of NVML's (nvml.h). */
int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned int *count);
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device);
int nvmlDeviceGetName(void *device, char *name, unsigned int length);
int nvmlDeviceGetUUID(void *device, char *uuid, unsigned int length);
int nvmlDeviceGetMemoryInfo(void *device, struct nvml_memory *memory);
int nvmlDeviceGetMemoryAffinity(void *device, unsigned int size, unsigned long *set, int scope);

int nvmlInit_v2(void)
{
    const char *spec = getenv("HRM_NVML_STUB");
    ngpus = 0;
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", spec ? spec : "");
    for (char *save = NULL, *g = strtok_r(buf, ";", &save); g && ngpus < MAX_GPUS;
         g = strtok_r(NULL, ";", &save)) {
        struct stub_gpu *d = &gpus[ngpus++];
        char *f[4] = {0}, *s2 = NULL;
        int k = 0;
        for (char *p = strtok_r(g, ",", &s2); p && k < 4; p = strtok_r(NULL, ",", &s2))
            f[k++] = p;
        snprintf(d->uuid, sizeof(d->uuid), "%s", f[0] ? f[0] : "");
        snprintf(d->name, sizeof(d->name), "%s", f[1] ? f[1] : "Stub GPU");
        d->mem = (f[2] ? strtoull(f[2], NULL, 10) : 16384) << 20;
        d->numa = f[3] ? atoi(f[3]) : -1;
    }
    inited = 1;
    return NVML_SUCCESS;
}

int nvmlShutdown(void)
{
    inited = 0;
    return NVML_SUCCESS;
}

int nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!inited)
        return NVML_ERROR_UNINITIALIZED;
    *count = ngpus;
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device)
{
    if (!inited)
        return NVML_ERROR_UNINITIALIZED;
    if (index >= ngpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &gpus[index];
    return NVML_SUCCESS;
}

static int copy_out(const char *text, char *out, unsigned int length)
{
    if (strlen(text) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, text, strlen(text) + 1);
    return NVML_SUCCESS;
}

int nvmlDeviceGetName(void *device, char *name, unsigned int length)
{
    return copy_out(((struct stub_gpu *)device)->name, name, length);
}

int nvmlDeviceGetUUID(void *device, char *uuid, unsigned int length)
{
    return copy_out(((struct stub_gpu *)device)->uuid, uuid, length);
}

int nvmlDeviceGetMemoryInfo(void *device, struct nvml_memory *memory)
{
    const struct stub_gpu *d = device;
    memory->total = d->mem;
    memory->free = d->mem;
    memory->used = 0;
    return NVML_SUCCESS;
}

int nvmlDeviceGetMemoryAffinity(void *device, unsigned int size, unsigned long *set, int scope)
{
    const struct stub_gpu *d = device;
    const unsigned bits = 8 * sizeof(unsigned long);
    if (scope != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d->numa < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    if ((unsigned)d->numa / bits >= size)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memset(set, 0, size * sizeof(*set));
    set[(unsigned)d->numa / bits] |= 1ul << ((unsigned)d->numa % bits);
    return NVML_SUCCESS;
}
