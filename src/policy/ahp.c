/* Analytic hierarchy process: principal-eigenvector weights and consistency ratio. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/nparsa_private.h"

/*
 * Random consistency indices: Saaty's revised table (mean CI of random
 * reciprocal matrices, Saaty 1994/2000: 0, 0, 0.52, 0.89, 1.11, 1.25, 1.35,
 * 1.40, 1.45, 1.49).  It is the table the NPARSA paper used: with the older
 * RI(4) = 0.90 its four matrices give CR 0.0170, 0.0076, 0.0038, 0.0225, and
 * the paper prints 0.017, 0.008, 0.0039 and 0.023, which only 0.89 reproduces.
 */
static const double random_index[AHP_MAX_N + 1] = {0,    0,    0,    0.52, 0.89, 1.11,
                                                   1.25, 1.35, 1.40, 1.45, 1.49};

double ahp_random_index(int n)
{
    return n >= 1 && n <= AHP_MAX_N ? random_index[n] : 0;
}

/* Checks the matrix is a positive reciprocal one with a unit diagonal. */
static int check_matrix(const double *m, int n, struct hrm_error *err)
{
    if (n < 1 || n > AHP_MAX_N)
        return hrm_errorf(err, -HRM_ESPEC, "judgment matrix must be 1x1 to %dx%d, not %dx%d",
                          AHP_MAX_N, AHP_MAX_N, n, n);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double a = m[i * n + j], b = m[j * n + i];
            if (!(a > 0) || !isfinite(a))
                return hrm_errorf(err, -HRM_ESPEC,
                                  "judgment matrix entry (%d,%d) = %g must be positive", i + 1,
                                  j + 1, a);
            if (i == j && fabs(a - 1) > 1e-9)
                return hrm_errorf(err, -HRM_ESPEC,
                                  "judgment matrix diagonal entry (%d,%d) = %g must be 1", i + 1,
                                  j + 1, a);
            /* Entries such as 1/3 written as 0.333 are accepted. */
            if (fabs(a * b - 1) > 1e-3)
                return hrm_errorf(err, -HRM_ESPEC,
                                  "judgment matrix is not reciprocal: (%d,%d) = %g but (%d,%d) = "
                                  "%g, expected %g",
                                  i + 1, j + 1, a, j + 1, i + 1, b, 1 / a);
        }
    }
    return 0;
}

int ahp_weights(const double *m, int n, struct ahp_result *out, struct hrm_error *err)
{
    int rc = check_matrix(m, n, err);
    if (rc)
        return rc;
    /* Power iteration: a positive matrix has a simple dominant eigenvalue
     * with a positive eigenvector (Perron), so it converges from the
     * uniform vector; judgment matrices are tiny and converge in a few
     * dozen steps. */
    double w[AHP_MAX_N], v[AHP_MAX_N];
    for (int i = 0; i < n; i++)
        w[i] = 1.0 / n;
    for (int iter = 0; iter < 10000; iter++) {
        double sum = 0, change = 0;
        for (int i = 0; i < n; i++) {
            v[i] = 0;
            for (int j = 0; j < n; j++)
                v[i] += m[i * n + j] * w[j];
            sum += v[i];
        }
        for (int i = 0; i < n; i++) {
            v[i] /= sum;
            change = fmax(change, fabs(v[i] - w[i]));
            w[i] = v[i];
        }
        if (change < 1e-15)
            break;
    }
    double lambda = 0;
    for (int i = 0; i < n; i++) {
        double aw = 0;
        for (int j = 0; j < n; j++)
            aw += m[i * n + j] * w[j];
        lambda += aw / w[i];
    }
    lambda /= n;
    memset(out, 0, sizeof(*out));
    out->n = n;
    memcpy(out->w, w, (size_t)n * sizeof(double));
    out->lambda_max = lambda;
    out->ci = n > 1 ? (lambda - n) / (n - 1) : 0;
    if (out->ci < 0)
        out->ci = 0; /* rounding below n for a perfectly consistent matrix */
    out->cr = n > 2 ? out->ci / ahp_random_index(n) : 0;
    if (out->cr >= AHP_CR_LIMIT)
        return hrm_errorf(err, -HRM_ESPEC,
                          "judgment matrix is too inconsistent: consistency ratio CR = %.3f "
                          "(must be below %.1f); revise the pairwise comparisons",
                          out->cr, AHP_CR_LIMIT);
    return 0;
}

/* One entry: a number or a/b.  Advances *p; 0 or -1. */
static int parse_entry(const char **p, double *out)
{
    char *end;
    double a = strtod(*p, &end);
    if (end == *p)
        return -1;
    *p = end;
    if (**p == '/') {
        (*p)++;
        double b = strtod(*p, &end);
        if (end == *p || b == 0)
            return -1;
        *p = end;
        a /= b;
    }
    *out = a;
    return 0;
}

int ahp_parse_matrix(const char *text, double *m, int *n_out, struct hrm_error *err)
{
    double vals[AHP_MAX_N * AHP_MAX_N];
    int rows = 0, cols = -1, cur = 0, nvals = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == ';' || *p == '\0') {
            if (cur > 0 || *p == ';') {
                if (cols >= 0 && cur != cols)
                    return hrm_errorf(err, -HRM_ESPEC, "matrix row %d has %d entries, row 1 has %d",
                                      rows + 1, cur, cols);
                cols = cur;
                rows++;
                cur = 0;
            }
            if (*p == '\0')
                break;
            p++;
            continue;
        }
        if (nvals == AHP_MAX_N * AHP_MAX_N)
            return hrm_errorf(err, -HRM_ESPEC, "matrix larger than %dx%d", AHP_MAX_N, AHP_MAX_N);
        if (parse_entry(&p, &vals[nvals]) != 0)
            return hrm_errorf(err, -HRM_ESPEC,
                              "matrix '%s': entry %d of row %d is not a number or fraction a/b",
                              text, cur + 1, rows + 1);
        nvals++;
        cur++;
    }
    if (rows == 0 || cols != rows)
        return hrm_errorf(err, -HRM_ESPEC,
                          "matrix '%s' must be square, rows separated by ';' (got %d rows of %d)",
                          text, rows, cols < 0 ? 0 : cols);
    if (rows > AHP_MAX_N)
        return hrm_errorf(err, -HRM_ESPEC, "matrix larger than %dx%d", AHP_MAX_N, AHP_MAX_N);
    memcpy(m, vals, (size_t)nvals * sizeof(double));
    *n_out = rows;
    return 0;
}
