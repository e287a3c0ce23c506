/* The shortest-path engine on P1 scheduling graphs: job arrivals under every
 * algorithm, batches of changes, and full solves over many shapes and seeds,
 * each answer certified and compared with from-scratch solves. */
#include "test_flowarr.h"

/* AUTO (what the P1 policies run) and SSP price an arriving job's vertices
 * from the sink side as SCALING does: an arrival is a search or three, not
 * 7-17 searches of the whole graph. */
Test(p1fast, auto_job_arrival_takes_few_searches, .timeout = 900)
{
    expect_arrivals_in_few_searches(HRM_FLOW_AUTO);
}

Test(p1fast, ssp_job_arrival_takes_few_searches, .timeout = 900)
{
    expect_arrivals_in_few_searches(HRM_FLOW_SSP);
}
