/* DIMACS min-cost flow format: reader (with line-numbered errors) and writer. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flow_private.h"
#include "hrm/alloc.h"

/* Reads the next integer field of a line; 0, or -1 when missing or malformed. */
static int field(char **p, long long *out)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0' || *s == '\n' || *s == '\r')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno == ERANGE || (*end && !isspace((unsigned char)*end)))
        return -1;
    *out = v;
    *p = end;
    return 0;
}

static bool line_done(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return *p == '\0';
}

int hrm_flow_read_dimacs(FILE *in, const char *name, struct hrm_flow **out, struct hrm_error *err)
{
    char *line = NULL;
    size_t len = 0;
    long lineno = 0;
    long long nv = -1, na = -1, arcs = 0;
    struct hrm_flow *g = NULL;
    int rc = 0;
    if (!name)
        name = "dimacs";
    while (getline(&line, &len, in) >= 0) {
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        char kind = *p;
        if (kind == 'c' || kind == '\n' || kind == '\r' || kind == '\0')
            continue;
        p++;
        if (kind == 'p') {
            while (*p == ' ' || *p == '\t')
                p++;
            if (g) {
                rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: second 'p' line", name, lineno);
                goto fail;
            }
            if (strncmp(p, "min", 3) != 0 || !isspace((unsigned char)p[3])) {
                rc = hrm_errorf(err, -HRM_ESPEC,
                                "%s:%ld: expected 'p min N M' (a min-cost flow problem)", name,
                                lineno);
                goto fail;
            }
            p += 3;
            if (field(&p, &nv) < 0 || field(&p, &na) < 0 || !line_done(p) || nv < 0 || na < 0 ||
                nv >= INT32_MAX - 1 || na >= INT32_MAX / 2 - 2) {
                rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: expected 'p min N M' with N, M >= 0",
                                name, lineno);
                goto fail;
            }
            g = hrm_flow_new((int32_t)nv, (int32_t)na);
            for (long long i = 0; i < nv; i++)
                hrm_flow_add_vertex(g, 0);
            continue;
        }
        if (kind != 'n' && kind != 'a') {
            rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: unknown line type '%c'", name, lineno,
                            isprint((unsigned char)kind) ? kind : '?');
            goto fail;
        }
        if (!g) {
            rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: '%c' line before the 'p min' line", name,
                            lineno, kind);
            goto fail;
        }
        if (kind == 'n') {
            long long id, sup;
            if (field(&p, &id) < 0 || field(&p, &sup) < 0 || !line_done(p)) {
                rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: expected 'n ID SUPPLY'", name, lineno);
                goto fail;
            }
            if (id < 1 || id > nv) {
                rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: vertex %lld out of 1..%lld", name, lineno,
                                id, nv);
                goto fail;
            }
            if (sup < -HRM_FLOW_CAP_MAX || sup > HRM_FLOW_CAP_MAX) {
                rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: supply %lld out of range", name, lineno,
                                sup);
                goto fail;
            }
            hrm_flow_set_supply(g, (int32_t)(id - 1), sup);
            continue;
        }
        long long u, v, low, cap, cost;
        if (field(&p, &u) < 0 || field(&p, &v) < 0 || field(&p, &low) < 0 || field(&p, &cap) < 0 ||
            field(&p, &cost) < 0 || !line_done(p)) {
            rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: expected 'a FROM TO LOW CAP COST'", name,
                            lineno);
            goto fail;
        }
        if (u < 1 || u > nv || v < 1 || v > nv) {
            rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: arc %lld -> %lld: vertex out of 1..%lld",
                            name, lineno, u, v, nv);
            goto fail;
        }
        if (low != 0) {
            rc = hrm_errorf(err, -HRM_ESPEC,
                            "%s:%ld: lower bound %lld not supported (only 0; shift it into the "
                            "supplies)",
                            name, lineno, low);
            goto fail;
        }
        if (cap < 0 || cap > HRM_FLOW_CAP_MAX || cost < -HRM_FLOW_COST_MAX ||
            cost > HRM_FLOW_COST_MAX) {
            rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: capacity %lld or cost %lld out of range",
                            name, lineno, cap, cost);
            goto fail;
        }
        if (arcs == na) {
            rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: more arcs than the %lld declared", name,
                            lineno, na);
            goto fail;
        }
        hrm_flow_add_arc(g, (int32_t)(u - 1), (int32_t)(v - 1), cap, cost);
        arcs++;
    }
    if (ferror(in)) {
        rc = hrm_errorf(err, -HRM_EIO, "%s:%ld: read error", name, lineno);
        goto fail;
    }
    if (!g) {
        rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: no 'p min N M' line", name, lineno);
        goto fail;
    }
    if (arcs != na) {
        rc = hrm_errorf(err, -HRM_ESPEC, "%s:%ld: %lld arcs declared, %lld found", name, lineno, na,
                        arcs);
        goto fail;
    }
    free(line);
    *out = g;
    return 0;
fail:
    free(line); /* getline's buffer comes from malloc */
    hrm_flow_free(g);
    return rc;
}

int hrm_flow_write_dimacs(const struct hrm_flow *g, FILE *out, const char *comment)
{
    if (comment)
        fprintf(out, "c %s\n", comment);
    fprintf(out, "p min %" PRId32 " %" PRId32 "\n", g->n, g->m);
    for (int32_t v = 0; v < g->n; v++)
        if (g->supply[v])
            fprintf(out, "n %" PRId32 " %" PRId64 "\n", v + 1, g->supply[v]);
    for (int32_t a = 0; a < g->m; a++)
        fprintf(out, "a %" PRId32 " %" PRId32 " 0 %" PRId64 " %" PRId64 "\n", g->afrom[a] + 1,
                g->ato[a] + 1, g->acap[a], g->acost[a]);
    return fflush(out) == 0 && !ferror(out) ? 0 : -HRM_EIO;
}
