/* hrm nodes: the second table, the nodes' measured performance and their NPARSA scores. */
#include <jansson.h>
#include <stdio.h>
#include <time.h>

#include "cli.h"

/* A figure scaled for the table, "-" when unknown (JSON null). */
static const char *fig(const json_t *v, double scale, const char *fmt, char *buf, size_t len)
{
    if (!json_is_number(v))
        return "-";
    snprintf(buf, len, fmt, json_number_value(v) / scale);
    return buf;
}

void cli_print_nodes_perf(const json_t *nodes)
{
    printf("\n%-12s %10s %6s %9s %9s %9s %9s %-16s\n", "NODE", "CPU", "SPEED", "MEM-BW",
           "DISK", "SCORE-CPU", "SCORE-MEM", "MEASURED");
    size_t i;
    const json_t *n;
    json_array_foreach(nodes, i, n)
    {
        const json_t *b = json_object_get(n, "bench"), *s = json_object_get(n, "ahp_score");
        char c[32], sp[32], mb[32], d[32], sc[32], sm[32], at[32] = "never";
        const json_t *when = json_object_get(b, "at");
        if (json_is_integer(when)) {
            time_t t = (time_t)json_integer_value(when);
            struct tm tm;
            strftime(at, sizeof(at), "%Y-%m-%d %H:%M", gmtime_r(&t, &tm));
        }
        printf("%-12.12s %10s %6s %9s %9s %9s %9s %-16s\n",
               json_string_value(json_object_get(n, "name")),
               fig(json_object_get(b, "cpu"), 1e6, "%.1f", c, sizeof(c)),
               fig(json_object_get(n, "cpu_speed"), 1, "%.2f", sp, sizeof(sp)),
               fig(json_object_get(b, "mem_bw"), 1e6, "%.0f", mb, sizeof(mb)),
               fig(json_object_get(b, "disk_bw"), 1e6, "%.1f", d, sizeof(d)),
               fig(json_object_get(s, "cpu"), 1, "%.3f", sc, sizeof(sc)),
               fig(json_object_get(s, "mem"), 1, "%.3f", sm, sizeof(sm)), at);
    }
    printf("(CPU: M iterations/s per core of the bench kernel; SPEED: CPU relative to the "
           "fastest node, what NPARSA reads; MEM-BW, DISK: MB/s; SCORE-CPU/-MEM: NPARSA's "
           "P for a CPU- or memory-intensive job, paper weights; MEASURED: UTC)\n");
}
