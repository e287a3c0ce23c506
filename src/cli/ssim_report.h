/* The shared-state block of hrm sim's report: commit, conflict and retry counts per policy. */
#ifndef HRM_CLI_SSIM_REPORT_H
#define HRM_CLI_SSIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "hrm/ssim.h"

/* Whether hrm sim runs name through the shared-state driver. */
bool cli_is_shared(const char *name);
/* Rows for the policies of names that are shared-state ones (st[i] belongs
 * to names[i]); prints nothing when there is none. */
void cli_report_shared(FILE *out, char *const *names, const struct hrm_ssim_stats *st, int n);

#endif
