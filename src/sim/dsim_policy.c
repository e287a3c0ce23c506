/* The distributed policies as the simulator lists them (src/sched/dsetup.c has the table). */
#include "hrm/dsetup.h"
#include "hrm/dsim.h"

size_t hrm_dsim_policy_count(void)
{
    return hrm_dsetup_count();
}

const char *hrm_dsim_policy_name(size_t i)
{
    return hrm_dsetup_name(i);
}

const char *hrm_dsim_policy_summary(size_t i)
{
    return hrm_dsetup_summary(i);
}

bool hrm_dsim_policy_known(const char *name)
{
    return hrm_dsetup_known(name);
}
