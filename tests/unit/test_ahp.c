/* AHP: the NPARSA paper's four matrices (weights, CR), refusal, parsing. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "policy/nparsa_private.h"

/* A matrix as the paper prints it, the weight it names for each row's
 * factor (the printed vectors are permutations; the text names them), and
 * the CR it prints. */
struct paper_matrix {
    const char *name;
    double m[16];
    double named[4]; /* weight of row i's factor, from the paper's text */
    double cr;
};

/* Row factors as the named weights reveal them (the paper's order varies):
 * CPU static rows are (disk, cores, mem, speed); CPU dynamic (io, cpu_free,
 * disk_free, mem_free); memory static (cores, speed, mem, disk); memory
 * dynamic (cpu_free, mem_free, disk_free, io). */
static const struct paper_matrix paper[] = {
    {"cpu static",
     {1, 1.0 / 2, 1.0 / 6, 2, 2, 1, 1.0 / 4, 2, 6, 4, 1, 8, 1.0 / 2, 1.0 / 2, 1.0 / 8, 1},
     {0.113, 0.173, 0.641, 0.073},
     0.017},
    {"cpu dynamic",
     {1, 1.0 / 3, 2, 1.0 / 2, 3, 1, 6, 1, 1.0 / 2, 1.0 / 6, 1, 1.0 / 4, 2, 1, 4, 1},
     {0.156, 0.422, 0.078, 0.344},
     0.008},
    {"memory static",
     {1, 2, 1.0 / 4, 1.0 / 2, 1.0 / 2, 1, 1.0 / 6, 1.0 / 4, 4, 6, 1, 2, 2, 4, 1.0 / 2, 1},
     {0.138, 0.074, 0.513, 0.275},
     0.0039},
    {"memory dynamic",
     {1, 1.0 / 4, 1.0 / 2, 1.0 / 2, 4, 1, 2, 2, 2, 1.0 / 2, 1, 1.0 / 2, 2, 1.0 / 2, 2, 1},
     {0.110, 0.442, 0.186, 0.262},
     0.023},
};

Test(ahp, paper_matrices_give_the_printed_consistency_ratios)
{
    for (size_t i = 0; i < sizeof(paper) / sizeof(paper[0]); i++) {
        struct ahp_result r;
        struct hrm_error err = {{0}};
        cr_assert_eq(ahp_weights(paper[i].m, 4, &r, &err), 0, "%s: %s", paper[i].name, err.text);
        /* To three places, as printed; 0.0039 is printed to four. */
        double places = paper[i].cr < 0.005 ? 1e4 : 1e3;
        cr_assert_float_eq(round(r.cr * places) / places, paper[i].cr, 1e-12,
                           "%s: CR %.5f, paper %.4f", paper[i].name, r.cr, paper[i].cr);
    }
}

Test(ahp, paper_matrices_give_the_named_weights)
{
    for (size_t i = 0; i < sizeof(paper) / sizeof(paper[0]); i++) {
        struct ahp_result r;
        cr_assert_eq(ahp_weights(paper[i].m, 4, &r, NULL), 0);
        double sum = 0;
        for (int k = 0; k < 4; k++) {
            sum += r.w[k];
            /* The principal eigenvector: within 0.004 of every printed weight
             * (the paper rounds, and for the memory dynamic matrix seems to
             * have used the row geometric mean, 0.4415 against our 0.4385). */
            cr_assert(fabs(r.w[k] - paper[i].named[k]) < 0.004, "%s: w[%d] = %.4f, paper %.3f",
                      paper[i].name, k, r.w[k], paper[i].named[k]);
        }
        cr_assert_float_eq(sum, 1.0, 1e-12);
    }
}

Test(ahp, three_of_four_matrices_match_to_the_printed_rounding)
{
    /* CPU static, CPU dynamic and memory static: every eigenvector weight is
     * within 0.0015 of the printed one (one unit of the third place, and the
     * paper's own rounding); memory static is exact to three places.  Memory
     * dynamic is the exception (0.4385 / 0.2652 against 0.442 / 0.262, which
     * are the row geometric means 0.4415 / 0.2625: the paper mixed methods),
     * bounded by the 0.004 of the test above. */
    for (int i = 0; i < 3; i++) {
        struct ahp_result r;
        cr_assert_eq(ahp_weights(paper[i].m, 4, &r, NULL), 0);
        for (int k = 0; k < 4; k++)
            cr_assert(fabs(r.w[k] - paper[i].named[k]) <= 0.0015, "%s: w[%d] = %.4f, paper %.3f",
                      paper[i].name, k, r.w[k], paper[i].named[k]);
    }
    struct ahp_result r;
    cr_assert_eq(ahp_weights(paper[2].m, 4, &r, NULL), 0);
    for (int k = 0; k < 4; k++)
        cr_assert_float_eq(round(r.w[k] * 1000) / 1000, paper[2].named[k], 1e-12, "w[%d]=%.4f", k,
                           r.w[k]);
}

Test(ahp, consistent_matrix_has_exact_weights_and_zero_cr)
{
    double m[9] = {1, 2, 4, 0.5, 1, 2, 0.25, 0.5, 1};
    struct ahp_result r;
    cr_assert_eq(ahp_weights(m, 3, &r, NULL), 0);
    cr_assert_float_eq(r.w[0], 4.0 / 7, 1e-12);
    cr_assert_float_eq(r.w[1], 2.0 / 7, 1e-12);
    cr_assert_float_eq(r.w[2], 1.0 / 7, 1e-12);
    cr_assert_float_eq(r.lambda_max, 3.0, 1e-9);
    cr_assert_float_eq(r.cr, 0.0, 1e-9);
    double two[4] = {1, 3, 1.0 / 3, 1};
    cr_assert_eq(ahp_weights(two, 2, &r, NULL), 0);
    cr_assert_float_eq(r.w[0], 0.75, 1e-12);
    cr_assert_eq(r.cr, 0.0); /* 2x2 reciprocal matrices are always consistent */
}

Test(ahp, inconsistent_matrix_is_refused_with_its_cr)
{
    /* a > b (9), b > c (9), yet c > a (9): circular judgments. */
    double m[9] = {1, 9, 1.0 / 9, 1.0 / 9, 1, 9, 9, 1.0 / 9, 1};
    struct ahp_result r;
    struct hrm_error err = {{0}};
    cr_assert_eq(ahp_weights(m, 3, &r, &err), -HRM_ESPEC);
    cr_assert_geq(r.cr, 0.1);
    cr_assert(strstr(err.text, "consistency ratio CR =") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "must be below 0.1") != NULL, "%s", err.text);
}

Test(ahp, malformed_matrices_are_refused)
{
    struct ahp_result r;
    struct hrm_error err = {{0}};
    double nonrecip[4] = {1, 2, 2, 1};
    cr_assert_eq(ahp_weights(nonrecip, 2, &r, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "not reciprocal") != NULL, "%s", err.text);
    double neg[4] = {1, -2, -0.5, 1};
    cr_assert_eq(ahp_weights(neg, 2, &r, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "positive") != NULL, "%s", err.text);
    double diag[4] = {2, 1, 1, 1};
    cr_assert_eq(ahp_weights(diag, 2, &r, &err), -HRM_ESPEC);
}

Test(ahp, random_index_table)
{
    cr_assert_float_eq(ahp_random_index(3), 0.52, 1e-12);
    cr_assert_float_eq(ahp_random_index(4), 0.89, 1e-12);
    cr_assert_float_eq(ahp_random_index(10), 1.49, 1e-12);
}

Test(ahp, parse_fractions_rows_and_errors)
{
    double m[AHP_MAX_N * AHP_MAX_N];
    int n = 0;
    struct hrm_error err = {{0}};
    cr_assert_eq(ahp_parse_matrix("1,1/2,1/6,2; 2,1,1/4,2; 6,4,1,8; 1/2,1/2,1/8,1", m, &n, &err), 0,
                 "%s", err.text);
    cr_assert_eq(n, 4);
    cr_assert_float_eq(m[2], 1.0 / 6, 1e-15);
    cr_assert_float_eq(m[11], 8.0, 1e-15);
    cr_assert_eq(ahp_parse_matrix("1 2;0.5 1", m, &n, &err), 0);
    cr_assert_eq(n, 2);
    cr_assert_eq(ahp_parse_matrix("1,2;0.5", m, &n, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "row 2 has 1 entries") != NULL, "%s", err.text);
    cr_assert_eq(ahp_parse_matrix("1,2,3;1,2,3", m, &n, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "square") != NULL, "%s", err.text);
    cr_assert_eq(ahp_parse_matrix("1,x;1,1", m, &n, &err), -HRM_ESPEC);
    cr_assert_eq(ahp_parse_matrix("1,1/0;1,1", m, &n, &err), -HRM_ESPEC);
    cr_assert_eq(ahp_parse_matrix("", m, &n, &err), -HRM_ESPEC);
}
