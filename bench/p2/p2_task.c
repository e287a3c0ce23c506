/* bench/p2-real's task: touches MEM_MB of memory and holds it, then uses CPU_MS of CPU time at a
 * duty cycle (DUTY of every 10 ms busy, the rest asleep), so it uses about DUTY cores and MEM_MB
 * while its request says more.  usage: p2_task CPU_MS DUTY MEM_MB */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: p2_task CPU_MS DUTY MEM_MB\n");
        return 2;
    }
    double work = atof(argv[1]), duty = atof(argv[2]);
    long mem = atol(argv[3]);
    if (!(work > 0) || !(duty > 0 && duty <= 1) || mem < 0) {
        fprintf(stderr, "p2_task: CPU_MS > 0, DUTY in (0, 1], MEM_MB >= 0\n");
        return 2;
    }
    size_t bytes = (size_t)mem << 20;
    volatile char *buf = bytes ? malloc(bytes) : NULL;
    if (bytes && !buf)
        return 3;
    for (size_t i = 0; i < bytes; i += 4096)
        buf[i] = (char)i; /* resident, not just reserved */
    double start = cpu_ms(), busy_ms = 10 * duty;
    struct timespec nap = {0, (long)((10 - busy_ms) * 1e6)};
    volatile unsigned long x = 1;
    while (cpu_ms() - start < work) {
        double slice = cpu_ms();
        while (cpu_ms() - slice < busy_ms)
            for (int i = 0; i < 1000; i++)
                x = x * 6364136223846793005ul + 1442695040888963407ul;
        if (nap.tv_nsec > 0)
            nanosleep(&nap, NULL);
    }
    /* touch the memory again so it stays counted to the end */
    for (size_t i = 0; i < bytes; i += 4096)
        buf[i]++;
    return x == 0; /* never: keeps the loop from being optimised away */
}
