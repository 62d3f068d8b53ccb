/* dp_graph_doppler.c: the reader and the writer of DOPPLER's compute_graph text files (see
 * dp_graph.h). */
#include "dp_graph_format.h"
#include "dp_alloc.h"
#include "dp_file.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What reading, placing and simulating a graph allocates per op and per edge, for the memory
 * check before a reader allocates (measured with bench/bench_scale: 10^6 ops ~ 410 MiB from
 * DOPPLER text, with the op names, kinds, shapes, CSR, cost tables and simulator state). */
#define DP_READ_BYTES_PER_OP 400.0
#define DP_READ_BYTES_PER_EDGE 100.0

/* Parse a list line: tokens of digits separated by commas, spaces or tabs. Any other
 * character is an error (the reference would silently split on it; we name it). */
static int parse_int_list(const char *path, int lineno, const char *s, size_t len,
                          long long **out, int *count, dp_error *err)
{
    int cap = 16, n = 0;
    long long *v = dp_alloc_malloc(cap * sizeof *v);
    if (!v) return dp_error_set(err, DP_ENOMEM, "%s:%d: out of memory", path, lineno);
    size_t i = 0;
    while (i < len) {
        char c = s[i];
        if (c == ',' || c == ' ' || c == '\t' || c == '\r') { i++; continue; }
        if (!isdigit((unsigned char)c)) {
            free(v);
            return dp_error_set(err, DP_EINVAL, "%s:%d:%zu: unexpected character '%c' in a list of op ids",
                                path, lineno, i + 1, isprint((unsigned char)c) ? c : '?');
        }
        long long x = 0;
        size_t start = i;
        while (i < len && isdigit((unsigned char)s[i])) {
            if (i - start >= 12) {
                free(v);
                return dp_error_set(err, DP_EINVAL, "%s:%d:%zu: id too large", path, lineno, start + 1);
            }
            x = x * 10 + (s[i] - '0');
            i++;
        }
        if (n == cap) {
            if (cap >= DP_GRAPH_MAX_ELEMS) { free(v); return dp_error_set(err, DP_ENOMEM, "%s:%d: list too long", path, lineno); }
            cap *= 2;
            long long *nv = dp_alloc_realloc(v, cap * sizeof *v);
            if (!nv) { free(v); return dp_error_set(err, DP_ENOMEM, "%s:%d: out of memory", path, lineno); }
            v = nv;
        }
        v[n++] = x;
    }
    *out = v;
    *count = n;
    return DP_OK;
}

/* Parse "comp,comm[,type]". comp and comm are digit runs (the reference's \d+). */
static int parse_cost_line(const char *path, int lineno, const char *s, size_t len,
                           double *comp, double *comm, char *type, size_t type_cap, dp_error *err)
{
    double val[2];
    size_t i = 0;
    for (int k = 0; k < 2; k++) {
        while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i >= len || !isdigit((unsigned char)s[i])) {
            if (i < len && (s[i] == '-' ))
                return dp_error_set(err, DP_EINVAL, "%s:%d:%zu: negative %s cost", path, lineno, i + 1, k ? "communication" : "computation");
            return dp_error_set(err, DP_EINVAL, "%s:%d:%zu: expected the %s cost (a non-negative integer)%s",
                                path, lineno, i + 1, k ? "communication" : "computation",
                                i >= len ? ", found end of line" : "");
        }
        /* exact in an integer, then refused above 2^53: a double holds every integer up to it
         * and no longer all of them above (summed as a double digit by digit, a larger cost was
         * read as a nearby other number and written back as that one: a review) */
        const size_t start = i;
        uint64_t x = 0;
        int big = 0;
        for (; i < len && isdigit((unsigned char)s[i]); i++) {
            if (x > (UINT64_MAX - 9) / 10) big = 1;
            else x = x * 10 + (uint64_t)(s[i] - '0');
        }
        if (big || x > ((uint64_t)1 << 53))
            return dp_error_set(err, DP_EINVAL, "%s:%d:%zu: %s cost %.*s%s is above 2^53 (9007199254740992), the largest "
                                "whole number a cost holds exactly", path, lineno, start + 1,
                                k ? "communication" : "computation", (int)(i - start > 24 ? 24 : i - start), s + start,
                                i - start > 24 ? "..." : "");
        val[k] = (double)x;
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
        if (k == 0) {
            if (i >= len || s[i] != ',')
                return dp_error_set(err, DP_EINVAL, "%s:%d:%zu: expected ',' after the computation cost",
                                    path, lineno, i + 1);
            i++;
        }
    }
    type[0] = '\0';
    if (i < len) {
        if (s[i] != ',')
            return dp_error_set(err, DP_EINVAL, "%s:%d:%zu: unexpected '%c' after the communication cost",
                                path, lineno, i + 1, isprint((unsigned char)s[i]) ? s[i] : '?');
        i++;
        size_t t = 0;
        while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
        while (i < len && s[i] != '\r' && s[i] != ' ' && s[i] != '\t') {
            if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
                return dp_error_set(err, DP_EINVAL, "%s:%d:%zu: bad character in op type", path, lineno, i + 1);
            if (t + 1 < type_cap) type[t++] = s[i];
            i++;
        }
        type[t] = '\0';
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
        if (i < len)
            return dp_error_set(err, DP_EINVAL, "%s:%d:%zu: trailing text after the op type", path, lineno, i + 1);
    }
    *comp = val[0];
    *comm = val[1];
    return DP_OK;
}

static int is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)s[i])) return 0;
    return 1;
}

dp_graph *dp_graph_read_doppler(const char *path, dp_error *err)
{
    size_t size;
    char *text = dp_file_read_text(path, &size, err);
    if (!text) return NULL;
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    long long *hdr = NULL, *inputs = NULL, *srcs = NULL, *dsts = NULL;
    int nh = 0, ni = 0, ns = 0, nd = 0;

    /* Count before allocating: lines up to the last non-blank one, and the edge ids on line 3.
     * A file that claims more than memory holds is refused here, not by the OOM killer. */
    while (size > 0 && isspace((unsigned char)text[size - 1])) size--;
    size_t nlines = 1, line3 = 0, line3_end = size;
    for (size_t i = 0; i < size; i++)
        if (text[i] == '\n') {
            if (nlines == 2) line3 = i + 1;
            if (nlines == 3) line3_end = i;
            nlines++;
        }
    const char **ls = NULL;
    size_t *ll = NULL;
    if (nlines > (size_t)DP_GRAPH_MAX_ELEMS + 4) {
        dp_error_set(err, DP_ENOMEM, "%s: %zu lines, more ops than the limit of %d", path, nlines, DP_GRAPH_MAX_ELEMS);
        goto done;
    }
    {
        double n_edges = 0;
        for (size_t i = line3; i < line3_end && nlines > 2; i++)
            if (isdigit((unsigned char)text[i]) && (i == line3 || !isdigit((unsigned char)text[i - 1]))) n_edges++;
        double n_ops = nlines > 4 ? (double)(nlines - 4) : 0;
        if (dp_file_mem_check(path, "the graph", (double)nlines * 2 * sizeof(size_t) + n_ops * DP_READ_BYTES_PER_OP +
                                            n_edges * DP_READ_BYTES_PER_EDGE, err) != DP_OK)
            goto done;
    }
    ls = dp_alloc_malloc_n(nlines, sizeof *ls);
    ll = dp_alloc_malloc_n(nlines, sizeof *ll);
    if (!ls || !ll) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    {
        size_t k = 0, st = 0;
        for (size_t i = 0; i <= size; i++)
            if (i == size || text[i] == '\n') { ls[k] = text + st; ll[k] = i - st; k++; st = i + 1; }
        nlines = k;
    }
    while (nlines > 0 && is_blank(ls[nlines - 1], ll[nlines - 1])) nlines--;
    if (nlines < 4) {
        dp_error_set(err, DP_EINVAL, "%s: truncated file: %zu non-empty line%s, a DOPPLER graph needs at least 4 "
                     "(node count, input ids, edge sources, edge destinations)", path, nlines, nlines == 1 ? "" : "s");
        goto done;
    }
    if (parse_int_list(path, 1, ls[0], ll[0], &hdr, &nh, err) != DP_OK) goto done;
    if (nh != 1) { dp_error_set(err, DP_EINVAL, "%s:1: expected one number (total node count), found %d", path, nh); goto done; }
    if (parse_int_list(path, 2, ls[1], ll[1], &inputs, &ni, err) != DP_OK) goto done;
    if (parse_int_list(path, 3, ls[2], ll[2], &srcs, &ns, err) != DP_OK) goto done;
    if (parse_int_list(path, 4, ls[3], ll[3], &dsts, &nd, err) != DP_OK) goto done;
    if (ns != nd) {
        dp_error_set(err, DP_EINVAL, "%s:4: %d edge destinations for %d edge sources on line 3", path, nd, ns);
        goto done;
    }
    long long total = hdr[0];
    long long n = total - ni;
    if (n <= 0) {
        dp_error_set(err, DP_EINVAL, "%s:1: node count %lld leaves no ops after removing %d inputs", path, total, ni);
        goto done;
    }
    if (n > DP_GRAPH_MAX_ELEMS) {
        dp_error_set(err, DP_ENOMEM, "%s:1: node count %lld is beyond the limit of %d", path, total, DP_GRAPH_MAX_ELEMS);
        goto done;
    }
    if ((long long)nlines - 4 != n) {
        dp_error_set(err, DP_EINVAL, "%s: expected %lld op lines (node count %lld minus %d inputs) after line 4, found %zu",
                     path, n, total, ni, nlines - 4);
        goto done;
    }
    {
        const char *stem = dp_file_path_stem(path);
        char name[256];
        snprintf(name, sizeof name, "%s", stem);
        char *dot = strrchr(name, '.');
        if (dot) *dot = '\0';
        b = dp_graph_builder_alloc(name, path, DP_GRAPH_COST_TIME);
    }
    if (!b) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    dp_graph_builder_set_time_unit(b, 1e10, "DOPPLER units (simulated time / 1e10)");
    /* the authors name their 8-GPU graphs 8gpu_*; the others are their 4-GPU setting, but
     * their names do not say so */
    if (strncmp(dp_file_path_stem(path), "8gpu_", 5) == 0) dp_graph_builder_set_devices(b, 8);
    for (long long i = 0; i < n; i++) {
        double comp = 0, comm = 0;
        char type[64];
        int lineno = (int)(i + 5);
        if (parse_cost_line(path, lineno, ls[i + 4], ll[i + 4], &comp, &comm, type, sizeof type, err) != DP_OK)
            goto done;
        int id = dp_graph_builder_add_op(b, NULL, type[0] ? type : "op", comp, comm);
        if (id < 0) { dp_error_set(err, id, "%s:%d: out of memory", path, lineno); goto done; }
        if (type[0]) dp_graph_builder_set_op_info(b, id, type, NULL, 0, NULL);
    }
    for (int e = 0; e < ns; e++) {
        if (srcs[e] >= n || dsts[e] >= n) {
            dp_error_set(err, DP_EINVAL, "%s:%d: edge %d (%lld -> %lld): op id out of range 0..%lld",
                         path, srcs[e] >= n ? 3 : 4, e, srcs[e], dsts[e], n - 1);
            goto done;
        }
        if (dp_graph_builder_add_edge(b, (int)srcs[e], (int)dsts[e], 0) < 0) {
            dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
            goto done;
        }
    }
    /* edge u->v costs comm(u): set sizes now that all ops are known */
    g = dp_graph_builder_finish(b, err);
    if (g) for (int e = 0; e < g->n_edges; e++) g->edge_size[e] = g->out_size[g->edge_src[e]];
done:
    free(hdr); free(inputs); free(srcs); free(dsts);
    free(ls); free(ll);
    dp_graph_builder_free(b);
    free(text);
    return g;
}

/* a cost as the format holds it: a non-negative integer the reader gets back exactly */
static int doppler_integer(double x)
{
    return x >= 0 && x <= 9007199254740992.0 && x == floor(x);
}

/* x, or the whole number nearest it when x is that number but for rounding (within a relative
 * 1e-12: a product such as 0.1 x 3 x 10 comes out 3.0000000000000004, which the format could
 * not hold and graph convert --comm-ratio 0.1 --time-scale 10 refused; a review) */
static double whole_within_rounding(double x)
{
    const double r = nearbyint(x);
    return fabs(x - r) <= 1e-12 * fabs(r) ? r : x;
}

/* an op type the reader takes back: letters, digits and '_' */
static int doppler_type_ok(const char *t)
{
    if (!t || !*t) return 0;
    for (; *t; t++)
        if (!(isalnum((unsigned char)*t) || *t == '_')) return 0;
    return 1;
}

int dp_graph_write_doppler_ratio(const dp_graph *g, const char *path, double comm_ratio, double time_scale, dp_error *err)
{
    if (g->cost_kind != DP_GRAPH_COST_TIME)
        return dp_error_set(err, DP_EINVAL, "%s: cannot write graph %s%s%s%s in DOPPLER's format: its costs are FLOPs and "
                            "bytes, and the format holds times (it can hold a graph of DOPPLER files, STG, DOT, WfCommons, "
                            "MSR or a task-graph generator)", path, g->name, g->source ? " (read from " : "",
                            g->source ? g->source : "", g->source ? ")" : "");
    if (!(comm_ratio >= 0 && isfinite(comm_ratio)))
        return dp_error_set(err, DP_EINVAL, "%s: communication ratio must be a non-negative number, got %g", path, comm_ratio);
    if (!(time_scale > 0 && isfinite(time_scale)))
        return dp_error_set(err, DP_EINVAL, "%s: time scale must be a positive number, got %g", path, time_scale);
    if (comm_ratio > 0)
        for (int e = 0; e < g->n_edges; e++)
            if (g->edge_size[e] != 0)
                return dp_error_set(err, DP_EINVAL, "%s: graph %s has transfer times of its own (edge %d, %s -> %s: %g); a "
                                    "communication ratio applies to graphs whose edges carry none (STG, DOT without "
                                    "sizes)", path, g->name, e, g->op_name[g->edge_src[e]], g->op_name[g->edge_dst[e]],
                                    g->edge_size[e]);
    /* one communication cost per op: every out-edge must carry the same */
    double *comm = dp_alloc_malloc_n((size_t)g->n_ops, sizeof *comm);
    if (!comm) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    int rc = DP_OK;
    for (int v = 0; v < g->n_ops && rc == DP_OK; v++) {
        const double comp = whole_within_rounding(g->work[v] * time_scale);
        double c;
        if (comm_ratio > 0) {
            c = whole_within_rounding(comm_ratio * comp);
        } else if (g->succ_ptr[v + 1] > g->succ_ptr[v]) {
            const double first = g->edge_size[g->succ_ptr[v]];
            for (int e = g->succ_ptr[v] + 1; e < g->succ_ptr[v + 1]; e++)
                if (g->edge_size[e] != first) {
                    rc = dp_error_set(err, DP_EINVAL, "%s: op %d (%s) sends %g to %s and %g to %s; DOPPLER's format gives an "
                                      "op one communication cost for all its out-edges", path, v, g->op_name[v], first,
                                      g->op_name[g->edge_dst[g->succ_ptr[v]]], g->edge_size[e], g->op_name[g->edge_dst[e]]);
                    break;
                }
            c = whole_within_rounding(first * time_scale);
        } else {
            c = whole_within_rounding(g->out_size[v] * time_scale);  /* a sink: its output goes nowhere */
        }
        if (rc != DP_OK) break;
        if (!doppler_integer(comp) || !doppler_integer(c))
            rc = dp_error_set(err, DP_EINVAL, "%s: op %d (%s): %s %.17g is not a whole number up to 2^53; DOPPLER's format "
                              "holds integers: scale every time by a factor that makes them whole (graph convert "
                              "--time-scale S)", path, v, g->op_name[v], !doppler_integer(comp) ? "computation" : "communication",
                              !doppler_integer(comp) ? comp : c);
        comm[v] = c;
    }
    if (rc != DP_OK) { free(comm); return rc; }
    char tmp[4200];
    FILE *f = dp_file_atomic_open(path, tmp, sizeof tmp, err);
    if (!f) { free(comm); return err ? err->code : DP_EIO; }
    /* no model inputs: line 2 is empty and the node count is the op count */
    fprintf(f, "%d\n\n", g->n_ops);
    for (int e = 0; e < g->n_edges; e++) fprintf(f, "%s%d", e ? ", " : "", g->edge_src[e]);
    fputc('\n', f);
    for (int e = 0; e < g->n_edges; e++) fprintf(f, "%s%d", e ? ", " : "", g->edge_dst[e]);
    fputc('\n', f);
    for (int v = 0; v < g->n_ops; v++) {
        const char *type = g->op_type && doppler_type_ok(g->op_type[v]) ? g->op_type[v] : NULL;
        fprintf(f, "%.0f,%.0f%s%s\n", whole_within_rounding(g->work[v] * time_scale), comm[v], type ? "," : "",
                type ? type : "");
    }
    free(comm);
    return dp_file_atomic_commit(f, tmp, path, err);
}

int dp_graph_write_doppler(const dp_graph *g, const char *path, dp_error *err)
{
    return dp_graph_write_doppler_ratio(g, path, 0, 1, err);
}

const dp_graph_format dp_graph_format_doppler = {
    .name = "doppler",
    .ext = {".txt"},
    .read = dp_graph_read_doppler,
    .write = dp_graph_write_doppler,
};
