/* DIMACS min-cost flow format: reader (with line-numbered errors) and writer. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "flow_private.h"
#include "hrm/alloc.h"

/*
 * The reader trusts nothing in the file: every count, id and number is checked
 * against the solver's limits (hrm/flow.h) before it reaches the graph, and
 * memory grows with the lines actually read, never with what the 'p' line
 * claims (the arc count is only a hint, capped).  The one allocation a short
 * file can cause is the vertices' state, hence the vertex limit.
 */

/* Arcs preallocated from the 'p' line's count at most: a lying count costs
 * nothing, a true one only a few re-growths. */
#define ARC_HINT_MAX (1 << 16)

/* Longest text of a bad token quoted in a message. */
#define QUOTE_MAX 24

struct reader {
    const char *name;
    long line;
    struct hrm_error *err;
};

/* Fills err with "name:line: " and the message; returns -HRM_ESPEC. */
__attribute__((format(printf, 2, 3))) static int bad(struct reader *r, const char *fmt, ...)
{
    char msg[HRM_ERROR_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return hrm_errorf(r->err, -HRM_ESPEC, "%s:%ld: %s", r->name, r->line, msg);
}

/* Reads the next integer field of a line into *out: 0; -1 when the line ends
 * (*p is left at the end), -2 for a token that is not an integer, -3 for an
 * integer beyond int64_t (*p is left at the token). */
static int field(char **p, long long *out)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    *p = s;
    if (*s == '\0' || *s == '\n' || *s == '\r')
        return -1;
    /* strtoll would also skip other white space and accept a bare sign */
    if (!isdigit((unsigned char)s[*s == '-' || *s == '+']))
        return -2;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n')
        return -2;
    if (errno == ERANGE)
        return -3;
    *out = v;
    *p = end;
    return 0;
}

/* The token at s, cut at QUOTE_MAX bytes, with bytes that are not printable
 * shown as '?' (a binary file must not put control bytes into a message). */
struct quote {
    char text[QUOTE_MAX + 1];
};

static struct quote quote(const char *s)
{
    struct quote q;
    int n = 0;
    for (; s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '\r' && s[n] != '\n' && n < QUOTE_MAX;
         n++)
        q.text[n] = isprint((unsigned char)s[n]) ? s[n] : '?';
    q.text[n] = '\0';
    return q;
}

/* Reads the integer fields names[0..n) of a line of the given form ("a FROM TO
 * LOW CAP COST") and requires nothing but white space after them. */
static int fields(struct reader *r, char *p, const char *form, const char *const *names, int n,
                  long long *out)
{
    for (int i = 0; i < n; i++) {
        int rc = field(&p, &out[i]);
        if (rc == -1)
            return bad(r, "expected '%s': %s missing", form, names[i]);
        if (rc == -2)
            return bad(r, "expected '%s': %s '%s' is not an integer", form, names[i],
                       quote(p).text);
        if (rc == -3)
            return bad(r, "expected '%s': %s '%s' is beyond 64-bit integers", form, names[i],
                       quote(p).text);
    }
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p && *p != '\r' && *p != '\n')
        return bad(r, "expected '%s': junk '%s' after %s", form, quote(p).text,
                   names[n - 1]);
    return 0;
}

/* a + b for a, b >= 0, saturating at INT64_MAX. */
static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* What the file declared and what it held so far. */
struct problem {
    long long nv, na, arcs;
    long p_line;
    uint8_t *has_supply; /* per vertex: an 'n' line was seen */
    int64_t supply, demand; /* sums of the positive supplies and of the negative ones' magnitudes */
    int64_t neg_cap;        /* sum of the capacities of arcs of negative cost (saturating) */
};

static int read_p(struct reader *r, char *p, int32_t max_vertices, struct problem *pb,
                  struct hrm_flow **g)
{
    if (*g)
        return bad(r, "second 'p' line (the first is line %ld)", pb->p_line);
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, "min", 3) != 0 || (p[3] && !isspace((unsigned char)p[3])))
        return bad(r, "expected 'p min N M' (a min-cost flow problem), found 'p %s'",
                   quote(p).text);
    static const char *const names[] = {"N", "M"};
    long long c[2];
    int rc = fields(r, p + 3, "p min N M", names, 2, c);
    if (rc < 0)
        return rc;
    /* vertex ids are int32_t; each arc becomes two residual arcs (int32_t
     * indices) and solve_max adds one virtual pair */
    if (c[0] < 1 || c[0] > max_vertices)
        return bad(r, "expected 'p min N M': N %lld out of 1..%" PRId32, c[0], max_vertices);
    if (c[1] < 0 || c[1] > HRM_FLOW_DIMACS_MAX_ARCS)
        return bad(r, "expected 'p min N M': M %lld out of 0..%d", c[1], HRM_FLOW_DIMACS_MAX_ARCS);
    pb->nv = c[0];
    pb->na = c[1];
    pb->p_line = r->line;
    *g = hrm_flow_new((int32_t)c[0], (int32_t)(c[1] < ARC_HINT_MAX ? c[1] : ARC_HINT_MAX));
    for (long long i = 0; i < c[0]; i++)
        hrm_flow_add_vertex(*g, 0);
    pb->has_supply = hrm_calloc((size_t)c[0], 1);
    return 0;
}

static int read_n(struct reader *r, char *p, struct problem *pb, struct hrm_flow *g)
{
    static const char *const names[] = {"ID", "SUPPLY"};
    long long c[2];
    int rc = fields(r, p, "n ID SUPPLY", names, 2, c);
    if (rc < 0)
        return rc;
    long long id = c[0], sup = c[1];
    if (id < 1 || id > pb->nv)
        return bad(r, "node %lld out of 1..%lld (the 'p' line's N)", id, pb->nv);
    if (pb->has_supply[id - 1])
        return bad(r, "second 'n' line for node %lld", id);
    if (sup < -HRM_FLOW_CAP_MAX || sup > HRM_FLOW_CAP_MAX)
        return bad(r, "node %lld: supply %lld beyond the solver's limit +-%" PRId64, id, sup,
                   HRM_FLOW_CAP_MAX);
    /* nv < 2^31 supplies of magnitude < 2^40 sum below 2^71: keep the sums
     * exact by refusing a total beyond HRM_FLOW_DIMACS_MAX_TOTAL */
    int64_t *sum = sup > 0 ? &pb->supply : &pb->demand;
    int64_t mag = sup > 0 ? sup : -sup;
    if (*sum > HRM_FLOW_DIMACS_MAX_TOTAL - mag)
        return bad(r, "node %lld: total %s beyond the solver's limit %" PRId64, id,
                   sup > 0 ? "supply" : "demand", (int64_t)HRM_FLOW_DIMACS_MAX_TOTAL);
    *sum += mag;
    pb->has_supply[id - 1] = 1;
    hrm_flow_set_supply(g, (int32_t)(id - 1), sup);
    return 0;
}

static int read_a(struct reader *r, char *p, struct problem *pb, struct hrm_flow *g)
{
    static const char *const names[] = {"FROM", "TO", "LOW", "CAP", "COST"};
    long long c[5];
    int rc = fields(r, p, "a FROM TO LOW CAP COST", names, 5, c);
    if (rc < 0)
        return rc;
    long long u = c[0], v = c[1], low = c[2], cap = c[3], cost = c[4];
    if (u < 1 || u > pb->nv || v < 1 || v > pb->nv)
        return bad(r, "arc %lld -> %lld: vertex out of 1..%lld (the 'p' line's N)", u, v, pb->nv);
    if (cap < 0)
        return bad(r, "arc %lld -> %lld: capacity %lld is negative", u, v, cap);
    if (cap > HRM_FLOW_CAP_MAX)
        return bad(r, "arc %lld -> %lld: capacity %lld beyond the solver's limit %" PRId64, u, v,
                   cap, HRM_FLOW_CAP_MAX);
    if (low < 0 || low > cap)
        return bad(r, "arc %lld -> %lld: lower bound %lld out of 0..%lld (the capacity)", u, v,
                   low, cap);
    if (low != 0)
        return bad(r, "arc %lld -> %lld: lower bound %lld not supported (only 0; shift it into "
                      "the supplies)",
                   u, v, low);
    if (cost < -HRM_FLOW_COST_MAX || cost > HRM_FLOW_COST_MAX)
        return bad(r, "arc %lld -> %lld: cost %lld beyond the solver's limit +-%" PRId64, u, v,
                   cost, HRM_FLOW_COST_MAX);
    if (pb->arcs == pb->na)
        return bad(r, "more arcs than the %lld the 'p' line declares", pb->na);
    if (cost < 0)
        pb->neg_cap = sat_add(pb->neg_cap, cap);
    hrm_flow_add_arc(g, (int32_t)(u - 1), (int32_t)(v - 1), cap, cost);
    pb->arcs++;
    return 0;
}

/*
 * The total cost must fit in int64_t (hrm_flow_total_cost sums flow x cost).
 * In an optimal flow, split into paths and cycles, the paths carry the supply
 * and every cycle of non-zero cost has an arc of negative cost that it does
 * not overfill, so no arc carries more than supply + neg_cap; the sum of
 * |cost| x min(capacity, that) bounds every partial sum of the total cost.
 */
static bool cost_fits(const struct hrm_flow *g, const struct problem *pb)
{
    int64_t most = sat_add(pb->supply, pb->neg_cap);
    __int128 sum = 0;
    for (int32_t a = 0; a < g->m; a++) {
        int64_t c = g->acost[a] < 0 ? -g->acost[a] : g->acost[a];
        int64_t x = g->acap[a] < most ? g->acap[a] : most;
        sum += (__int128)c * x;
        if (sum > INT64_MAX)
            return false;
    }
    return true;
}

/* The last checks, once the whole file is read. */
static int finish(struct reader *r, const struct problem *pb, const struct hrm_flow *g)
{
    if (!g)
        return r->line == 0
                   ? hrm_errorf(r->err, -HRM_ESPEC, "%s: empty file (no 'p min N M' line)", r->name)
                   : bad(r, "no 'p min N M' line");
    if (pb->arcs != pb->na)
        return bad(r, "%lld arcs declared, %lld found (the 'p' line is line %ld)", pb->na,
                   pb->arcs, pb->p_line);
    if (pb->supply != pb->demand)
        return bad(r, "supplies do not balance: total supply %" PRId64 ", total demand %" PRId64
                      " (a min-cost flow needs them equal)",
                   pb->supply, pb->demand);
    if (!cost_fits(g, pb))
        return bad(r, "capacities x costs could make the total cost overflow 64-bit integers "
                      "(sum of |cost| x min(capacity, supply + capacity of negative arcs) "
                      "beyond 2^63-1)");
    return 0;
}

int flow_read_dimacs(FILE *in, const char *name, int32_t max_vertices, struct hrm_flow **out,
                     struct hrm_error *err)
{
    struct reader r = {.name = name ? name : "dimacs", .line = 0, .err = err};
    struct problem pb = {0};
    struct hrm_flow *g = NULL;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, in)) >= 0) {
        r.line++;
        if (memchr(line, '\0', (size_t)len)) {
            rc = bad(&r, "NUL byte in the line (not a text file?)");
            break;
        }
        if (len > HRM_FLOW_DIMACS_MAX_LINE) {
            rc = bad(&r, "line of %zd bytes, longer than the %d allowed", len,
                     HRM_FLOW_DIMACS_MAX_LINE);
            break;
        }
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        char kind = *p;
        if (kind == 'c' || kind == '\n' || kind == '\r' || kind == '\0')
            continue;
        if (!strchr("pna", kind) || (p[1] && !isspace((unsigned char)p[1]))) {
            rc = bad(&r, "unknown line type '%s' (expected c, p, n or a)", quote(p).text);
            break;
        }
        if (kind == 'p') {
            rc = read_p(&r, p + 1, max_vertices, &pb, &g);
            continue;
        }
        if (!g) {
            rc = bad(&r, "'%c' line before the 'p min' line", kind);
            break;
        }
        rc = kind == 'n' ? read_n(&r, p + 1, &pb, g) : read_a(&r, p + 1, &pb, g);
    }
    if (rc == 0 && ferror(in))
        rc = hrm_errorf(err, -HRM_EIO, "%s:%ld: read error", r.name, r.line);
    if (rc == 0)
        rc = finish(&r, &pb, g);
    free(line); /* getline's buffer comes from malloc */
    hrm_free(pb.has_supply);
    if (rc < 0) {
        hrm_flow_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

int hrm_flow_read_dimacs(FILE *in, const char *name, struct hrm_flow **out, struct hrm_error *err)
{
    return flow_read_dimacs(in, name, HRM_FLOW_DIMACS_MAX_VERTICES, out, err);
}

void hrm_flow_dimacs_infeasible(const struct hrm_flow *g, const char *name,
                                struct hrm_error *err)
{
    if (!err)
        return;
    char why[HRM_ERROR_TEXT_MAX];
    snprintf(why, sizeof(why), "%s", err->text);
    int64_t supply = 0, demand = 0;
    for (int32_t v = 0; v < g->n; v++) {
        if (g->supply[v] > 0)
            supply += g->supply[v];
        else
            demand -= g->supply[v];
    }
    /* after a failed solve, the excesses left are what could not be routed */
    int32_t src = -1, dst = -1;
    for (int32_t v = 0; v < g->n && g->ex && (src < 0 || dst < 0); v++) {
        if (src < 0 && g->ex[v] > 0)
            src = v;
        if (dst < 0 && g->ex[v] < 0)
            dst = v;
    }
    if (supply != demand)
        hrm_errorf(err, -HRM_EINFEASIBLE,
                   "%s: supplies cannot be met: total supply %" PRId64 ", total demand %" PRId64,
                   name, supply, demand);
    else if (src >= 0 && dst >= 0)
        hrm_errorf(err, -HRM_EINFEASIBLE,
                   "%s: supplies cannot be met (total supply = demand = %" PRId64
                   "): %" PRId64 " units of node %" PRId32 " cannot reach any demand, node %" PRId32
                   " lacks %" PRId64,
                   name, supply, g->ex[src], src + 1, dst + 1, -g->ex[dst]);
    else
        hrm_errorf(err, -HRM_EINFEASIBLE,
                   "%s: supplies cannot be met (total supply = demand = %" PRId64 "): %s", name,
                   supply, why);
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
