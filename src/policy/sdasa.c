/* SDASA (cited by P3 as its ref. [6]): node priority from static and dynamic indicators, one
 * weight set for every job (no job typing), placement on the highest priority. */
#include <string.h>

#include "hrm/alloc.h"
#include "policy/nparsa_private.h"
#include "policy/policy_private.h"

/*
 * P3 describes SDASA (HU, SHENG, MAO 2020) as NPARSA without the job type: the node's
 * priority is computed from its configuration and its real-time resource state and adjusted
 * as tasks run, and the best node gets the work.  Its own weights are not in P3, so they are
 * a choice of ours, named by the parameter "weights":
 *   mean   (default) the mean of NPARSA's two AHP weight sets: a scorer meant for jobs of
 *          both kinds, which neither favours;
 *   cpu    NPARSA's CPU-intensive weights (the policy nparsa-notype);
 *   memory NPARSA's memory-intensive weights;
 *   equal  every indicator 0.25.
 * docs/reproduction-p3.md has the sensitivity of P3's figures to this choice.
 */

static const char *const sdasa_keys[] = {"weights", NULL};
static const char *const sdasa_weight_sets[] = {"mean", "cpu", "memory", "equal", NULL};

static struct nparsa_weights weight_set(int which)
{
    struct nparsa_weights w = {.alpha = 0.5};
    for (int k = 0; k < NPARSA_NSTATIC; k++) {
        const double c = nparsa_paper_cpu.s[k], m = nparsa_paper_mem.s[k];
        w.s[k] = which == 0 ? (c + m) / 2 : which == 1 ? c : which == 2 ? m : 0.25;
    }
    for (int k = 0; k < NPARSA_NDYNAMIC; k++) {
        const double c = nparsa_paper_cpu.d[k], m = nparsa_paper_mem.d[k];
        w.d[k] = which == 0 ? (c + m) / 2 : which == 1 ? c : which == 2 ? m : 0.25;
    }
    return w;
}

static int sdasa_init(struct hrm_policy *policy, const struct hrm_params *params,
                      struct hrm_error *err)
{
    int rc = hrm_params_check(params, sdasa_keys, "sdasa", err);
    if (rc)
        return rc;
    const char *text = NULL;
    for (size_t i = 0; i < params->count; i++)
        if (params->items[i] && strncmp(params->items[i], "weights=", 8) == 0)
            text = params->items[i] + 8; /* the last one wins, as for every parameter */
    int which = 0;
    if (text) {
        for (which = 0; sdasa_weight_sets[which] && strcmp(sdasa_weight_sets[which], text);)
            which++;
        if (!sdasa_weight_sets[which])
            return hrm_errorf(err, -HRM_ESPEC,
                              "policy 'sdasa': parameter 'weights' must be mean, cpu, memory or "
                              "equal, not '%s'",
                              text);
    }
    struct nparsa_priv *p = nparsa_priv_new(false);
    p->w[NPARSA_CPU] = p->w[NPARSA_MEM] = weight_set(which);
    policy->priv = p;
    return 0;
}

const struct hrm_policy_ops hrm_policy_sdasa = {
    .name = "sdasa",
    .summary = "SDASA: every job to the nodes of best priority, one weight set (no job typing)",
    .init = sdasa_init,
    .fini = nparsa_policy_fini,
    .on_event = nparsa_policy_on_event,
    .decide = nparsa_policy_decide,
};
