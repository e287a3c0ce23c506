/* One input of the DIMACS reader's fuzz target, shared by the libFuzzer target
 * (tests/fuzz/fuzz_dimacs.c) and the corpus replay (tests/unit/test_dimacs_corpus.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow_private.h"
#include "hrm/flow.h"

/* Vertices a fuzzed file may declare: small, so memory stays small. */
#define DIMACS_FUZZ_MAX_VERTICES 4096

/* Reads data as a DIMACS file; when it is accepted and small, solves it with each
 * algorithm and writes it back.  Aborts when an error does not name the file (and
 * the sanitizers catch the rest).  Returns 1 when the reader accepted the file. */
static int dimacs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* fmemopen refuses empty buffers; test_dimacs_bad covers empty files */
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        abort();
    struct hrm_flow *g = NULL;
    struct hrm_error err = {{0}};
    int rc = flow_read_dimacs(f, "fuzz", DIMACS_FUZZ_MAX_VERTICES, &g, &err);
    fclose(f);
    if (rc < 0) {
        if (g || strncmp(err.text, "fuzz:", 5) != 0)
            abort();
        return 0;
    }
    if (hrm_flow_vertices(g) <= 256 && hrm_flow_arcs(g) <= 1024) {
        enum hrm_flow_algo algos[] = {HRM_FLOW_SSP, HRM_FLOW_SCALING, HRM_FLOW_SIMPLEX};
        for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
            hrm_flow_reset(g);
            hrm_flow_set_algo(g, algos[i]);
            rc = hrm_flow_solve(g, &err);
            if (rc == -HRM_EINFEASIBLE)
                hrm_flow_dimacs_infeasible(g, "fuzz", &err);
            else if (rc < 0)
                abort(); /* the reader let through what the solver refuses */
            else
                (void)hrm_flow_total_cost(g); /* UBSan checks it fits */
        }
    }
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        hrm_flow_write_dimacs(g, null, NULL);
        fclose(null);
    }
    hrm_flow_free(g);
    return 1;
}
