/* FGM's Alg. 3 record (parameter mode_log): how often nodes changed mode over a run. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/fgm_private.h"

int fgm_modelog_check(const char *path, struct hrm_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return hrm_errorf(err, -HRM_ESPEC, "policy 'fgm': parameter 'mode_log': %s: %s", path,
                          strerror(errno));
    fclose(f);
    return 0;
}

void fgm_modelog_write(const char *path, const struct fgm_alg3_stats *st)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "# fgm Alg. 3 over the run: node mode changes by the mode entered\n");
    for (int m = 0; m < 4; m++)
        fprintf(f, "into_%s %lld\n", fgm_mode_name((enum fgm_mode)m), (long long)st->into[m]);
    fprintf(f, "windows %lld\nwindows_over %lld\nmax_conformity %.6f\n",
            (long long)st->windows, (long long)st->windows_over, st->max_conformity);
    fclose(f);
}
