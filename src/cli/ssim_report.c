/* The shared-state block of hrm sim's report: commit, conflict and retry counts per policy. */
#include <inttypes.h>
#include <stddef.h>

#include "hrm/policy.h"
#include "ssim_report.h"

bool cli_is_shared(const char *name)
{
    return !hrm_policy_find(name) && hrm_ssim_policy_known(name);
}

enum kind { K_I32, K_INT, K_RATE, K_SEC };

struct row {
    const char *label;
    enum kind kind;
    size_t off;
};

#define AT(field) offsetof(struct hrm_ssim_stats, field)

static const struct row rows[] = {
    {"instances", K_I32, AT(instances)},
    {"transactions", K_INT, AT(txns)},
    {"  pessimistic (locked)", K_INT, AT(txns_locked)},
    {"  deferred by a lock", K_INT, AT(txns_deferred)},
    {"  with a conflict", K_INT, AT(txns_conflicted)},
    {"claims", K_INT, AT(claims)},
    {"  committed", K_INT, AT(committed)},
    {"  conflicts", K_INT, AT(conflicts)},
    {"  conflicts, stale version", K_INT, AT(conflicts_stale)},
    {"  of stream jobs", K_INT, AT(conflicts_stream)},
    {"  retries", K_INT, AT(retries)},
    {"  under the lock", K_INT, AT(locked_bounced)},
    {"conflict rate (claims)", K_RATE, AT(conflict_rate)},
    {"conflict fraction (txns)", K_RATE, AT(txn_conflict_fraction)},
    {"lock waits", K_INT, AT(lock_waits)},
    {"waits for a change", K_INT, AT(waits)},
    {"fair-share held back", K_INT, AT(fair_capped)},
    {"decision time (s)", K_SEC, AT(decision_s)},
    {"job sched delay mean (s)", K_SEC, AT(delay_mean_s)},
    {"job sched delay p95 (s)", K_SEC, AT(delay_p95_s)},
    {"  batch jobs mean (s)", K_SEC, AT(batch_delay_mean_s)},
    {"  stream jobs mean (s)", K_SEC, AT(stream_delay_mean_s)},
    {"stream start mean (s)", K_SEC, AT(stream_start_mean_s)},
    {"stream start p95 (s)", K_SEC, AT(stream_start_p95_s)},
};

void cli_report_shared(FILE *out, char *const *names, const struct hrm_ssim_stats *st, int n)
{
    int any = 0;
    for (int i = 0; i < n; i++)
        any += cli_is_shared(names[i]);
    if (!any)
        return;
    fprintf(out, "\nshared-state commits (P0)\n%-28s", "");
    for (int i = 0; i < n; i++)
        if (cli_is_shared(names[i]))
            fprintf(out, " %14s", names[i]);
    fputc('\n', out);
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        fprintf(out, "%-28s", rows[r].label);
        for (int i = 0; i < n; i++) {
            if (!cli_is_shared(names[i]))
                continue;
            const char *base = (const char *)&st[i] + rows[r].off;
            if (rows[r].kind == K_I32)
                fprintf(out, " %14d", *(const int32_t *)base);
            else if (rows[r].kind == K_INT)
                fprintf(out, " %14" PRId64, *(const int64_t *)base);
            else if (rows[r].kind == K_RATE)
                fprintf(out, " %14.4f", *(const double *)base);
            else
                fprintf(out, " %14.3f", *(const double *)base);
        }
        fputc('\n', out);
    }
}
