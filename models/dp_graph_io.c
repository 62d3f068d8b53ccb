/* dp_graph_io.c: DOPPLER text and native JSON graph readers and the JSON writer. */
#include "dp_graph.h"
#include "dp_file.h"
#include "dp_graph_formats.h"
#include "dp_json.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- DOPPLER compute_graph text ---------------- */

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
    long long *v = malloc(cap * sizeof *v);
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
            long long *nv = realloc(v, cap * sizeof *v);
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
        double x = 0;
        while (i < len && isdigit((unsigned char)s[i])) x = x * 10 + (s[i++] - '0');
        if (!isfinite(x))
            return dp_error_set(err, DP_EINVAL, "%s:%d: cost is not finite", path, lineno);
        val[k] = x;
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
    char *text = dp_read_text(path, &size, err);
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
        if (dp_mem_check(path, "the graph", (double)nlines * 2 * sizeof(size_t) + n_ops * DP_READ_BYTES_PER_OP +
                                            n_edges * DP_READ_BYTES_PER_EDGE, err) != DP_OK)
            goto done;
    }
    ls = dp_malloc_n(nlines, sizeof *ls);
    ll = dp_malloc_n(nlines, sizeof *ll);
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
        const char *stem = dp_path_stem(path);
        char name[256];
        snprintf(name, sizeof name, "%s", stem);
        char *dot = strrchr(name, '.');
        if (dot) *dot = '\0';
        b = dp_graph_builder_alloc(name, path, DP_COST_TIME);
    }
    if (!b) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    dp_graph_builder_set_time_unit(b, 1e10, "DOPPLER units (simulated time / 1e10)");
    /* the authors name their 8-GPU graphs 8gpu_*; the others are their 4-GPU setting, but
     * their names do not say so */
    if (strncmp(dp_path_stem(path), "8gpu_", 5) == 0) dp_graph_builder_set_devices(b, 8);
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

/* ---------------- native JSON ---------------- */

static int json_number(json_t *o, const char *key, double *out, int required)
{
    json_t *v = json_object_get(o, key);
    if (!v) return required ? -1 : 1;
    if (!json_is_number(v)) return -2;
    *out = json_number_value(v);
    return 0;
}

/* Op names -> index, for edges that name their endpoints: open addressing on FNV-1a, built on
 * the first such edge. A scan per edge would make a file of n named ops and edges cost O(n^2)
 * (10^5 ops: a minute). Ops without a name are not in it; among equal names (rejected later
 * by the builder) the lowest index is found. */
typedef struct name_index {
    int *slot;      /* op index or -1 */
    size_t mask;    /* capacity - 1 (a power of two >= 2n) */
} name_index;

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    return h;
}

static int name_index_build(name_index *ix, const char **names, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    ix->slot = dp_malloc_n(cap, sizeof *ix->slot);
    if (!ix->slot) return DP_ENOMEM;
    ix->mask = cap - 1;
    for (size_t i = 0; i < cap; i++) ix->slot[i] = -1;
    for (size_t i = 0; i < n; i++) {
        if (!names[i]) continue;
        size_t h = (size_t)name_hash(names[i]) & ix->mask;
        while (ix->slot[h] >= 0) h = (h + 1) & ix->mask;
        ix->slot[h] = (int)i;
    }
    return DP_OK;
}

static int name_index_find(const name_index *ix, const char **names, const char *s)
{
    size_t h = (size_t)name_hash(s) & ix->mask;
    for (; ix->slot[h] >= 0; h = (h + 1) & ix->mask)
        if (strcmp(names[ix->slot[h]], s) == 0) return ix->slot[h];
    return -1;
}

/* 0 and *out set, or -1 index out of range, -2 unknown name, -3 wrong type, -4 out of memory */
static int edge_endpoint(json_t *v, name_index *ix, int n, const char **names, int *out)
{
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0 || x >= n) return -1;
        *out = (int)x;
        return 0;
    }
    if (json_is_string(v)) {
        if (!ix->slot && name_index_build(ix, names, (size_t)n) != DP_OK) return -4;
        int i = name_index_find(ix, names, json_string_value(v));
        if (i < 0) return -2;
        *out = i;
        return 0;
    }
    return -3;
}

dp_graph *dp_graph_read_json(const char *path, dp_error *err)
{
    json_t *root = dp_json_load(path, err);
    if (!root) return NULL;
    dp_graph *g = dp_graph_from_json(root, path, err);
    json_decref(root);
    return g;
}

dp_graph *dp_graph_from_json(json_t *root, const char *path, dp_error *err)
{
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    const char **names = NULL;
    name_index ix = {NULL, 0};
    if (!json_is_object(root)) { dp_error_set(err, DP_EINVAL, "%s: the top level must be a JSON object", path); return NULL; }
    json_t *ops = json_object_get(root, "ops");
    json_t *edges = json_object_get(root, "edges");
    if (!json_is_array(ops)) { dp_error_set(err, DP_EINVAL, "%s: field \"ops\" must be an array", path); return NULL; }
    if (edges && !json_is_array(edges)) { dp_error_set(err, DP_EINVAL, "%s: field \"edges\" must be an array", path); return NULL; }
    const char *ck = "physical";
    json_t *jck = json_object_get(root, "cost_kind");
    if (jck) {
        if (!json_is_string(jck)) { dp_error_set(err, DP_EINVAL, "%s: field \"cost_kind\" must be \"physical\" or \"time\"", path); return NULL; }
        ck = json_string_value(jck);
    }
    dp_cost_kind kind;
    if (strcmp(ck, "physical") == 0) kind = DP_COST_PHYSICAL;
    else if (strcmp(ck, "time") == 0) kind = DP_COST_TIME;
    else { dp_error_set(err, DP_EINVAL, "%s: field \"cost_kind\": unknown value \"%s\" (physical or time)", path, ck); return NULL; }
    const char *work_key = kind == DP_COST_PHYSICAL ? "flops" : "time";
    const char *out_key = kind == DP_COST_PHYSICAL ? "out_bytes" : "comm";
    const char *edge_key = kind == DP_COST_PHYSICAL ? "bytes" : "comm";

    json_t *jname = json_object_get(root, "name");
    const char *gname = json_is_string(jname) ? json_string_value(jname) : NULL;
    char stem[256];
    if (!gname) {
        snprintf(stem, sizeof stem, "%s", dp_path_stem(path));
        char *dot = strrchr(stem, '.');
        if (dot) *dot = '\0';
        gname = stem;
    }
    b = dp_graph_builder_alloc(gname, path, kind);
    if (!b) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); return NULL; }
    double scale = 1.0;
    int r = json_number(root, "time_scale", &scale, 0);
    if (r == -2 || (r == 0 && !(isfinite(scale) && scale > 0))) {
        dp_error_set(err, DP_EINVAL, "%s: field \"time_scale\" must be a positive number", path);
        goto done;
    }
    json_t *ju = json_object_get(root, "time_unit");
    if (ju && !json_is_string(ju)) { dp_error_set(err, DP_EINVAL, "%s: field \"time_unit\" must be a string", path); goto done; }
    dp_graph_builder_set_time_unit(b, scale, ju ? json_string_value(ju) : NULL);
    json_t *jd = json_object_get(root, "devices");
    if (jd && !(json_is_integer(jd) && json_integer_value(jd) >= 1 && json_integer_value(jd) <= 1 << 20)) {
        dp_error_set(err, DP_EINVAL, "%s: field \"devices\" must be a positive integer (the device count the graph was made for)", path);
        goto done;
    }
    if (jd) dp_graph_builder_set_devices(b, (int)json_integer_value(jd));

    size_t n = json_array_size(ops);
    if (n > DP_GRAPH_MAX_ELEMS) { dp_error_set(err, DP_ENOMEM, "%s: %zu ops is beyond the limit", path, n); goto done; }
    names = dp_calloc_n(n, sizeof *names);
    if (!names) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    for (size_t i = 0; i < n; i++) {
        json_t *op = json_array_get(ops, i);
        if (!json_is_object(op)) { dp_error_set(err, DP_EINVAL, "%s: ops[%zu]: must be an object", path, i); goto done; }
        json_t *jn = json_object_get(op, "name");
        json_t *jk = json_object_get(op, "kind");
        if (jn && !json_is_string(jn)) { dp_error_set(err, DP_EINVAL, "%s: ops[%zu].name: must be a string", path, i); goto done; }
        if (jk && !json_is_string(jk)) { dp_error_set(err, DP_EINVAL, "%s: ops[%zu].kind: must be a string", path, i); goto done; }
        double w = 0, o = 0;
        r = json_number(op, work_key, &w, 1);
        if (r < 0) { dp_error_set(err, DP_EINVAL, "%s: ops[%zu].%s: %s", path, i, work_key, r == -1 ? "missing" : "must be a number"); goto done; }
        r = json_number(op, out_key, &o, 0);
        if (r < 0) { dp_error_set(err, DP_EINVAL, "%s: ops[%zu].%s: must be a number", path, i, out_key); goto done; }
        if (!isfinite(w) || w < 0) { dp_error_set(err, DP_EINVAL, "%s: ops[%zu].%s: must be finite and non-negative, got %g", path, i, work_key, w); goto done; }
        if (!isfinite(o) || o < 0) { dp_error_set(err, DP_EINVAL, "%s: ops[%zu].%s: must be finite and non-negative, got %g", path, i, out_key, o); goto done; }
        int id = dp_graph_builder_add_op(b, jn ? json_string_value(jn) : NULL, jk ? json_string_value(jk) : NULL, w, o);
        if (id < 0) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
        json_t *jt = json_object_get(op, "op_type"), *je = json_object_get(op, "einsum"), *js = json_object_get(op, "shape");
        if (jt && !json_is_string(jt)) { dp_error_set(err, DP_EINVAL, "%s: ops[%zu].op_type: must be a string", path, i); goto done; }
        if (je && !json_is_string(je)) { dp_error_set(err, DP_EINVAL, "%s: ops[%zu].einsum: must be a string", path, i); goto done; }
        int64_t shape[DP_MAX_DIMS];
        int nd = 0;
        if (js) {
            if (!json_is_array(js) || json_array_size(js) > DP_MAX_DIMS) {
                dp_error_set(err, DP_EINVAL, "%s: ops[%zu].shape: must be an array of at most %d positive integers", path, i, DP_MAX_DIMS);
                goto done;
            }
            nd = (int)json_array_size(js);
            for (int k = 0; k < nd; k++) {
                json_t *x = json_array_get(js, k);
                if (!json_is_integer(x) || json_integer_value(x) <= 0) {
                    dp_error_set(err, DP_EINVAL, "%s: ops[%zu].shape[%d]: must be a positive integer", path, i, k);
                    goto done;
                }
                shape[k] = json_integer_value(x);
            }
        }
        if (jt || je || nd)
            dp_graph_builder_set_op_info(b, id, jt ? json_string_value(jt) : NULL, je ? json_string_value(je) : NULL, nd, shape);
        names[i] = jn ? json_string_value(jn) : NULL;
    }
    size_t m = json_array_size(edges);
    if (m > DP_GRAPH_MAX_ELEMS) { dp_error_set(err, DP_ENOMEM, "%s: %zu edges is beyond the limit", path, m); goto done; }
    for (size_t e = 0; e < m; e++) {
        json_t *ed = json_array_get(edges, e);
        if (!json_is_object(ed)) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu]: must be an object", path, e); goto done; }
        int s = -1, d = -1;
        const char *which[2] = {"src", "dst"};
        int *dest[2] = {&s, &d};
        for (int k = 0; k < 2; k++) {
            json_t *v = json_object_get(ed, which[k]);
            if (!v) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: missing", path, e, which[k]); goto done; }
            int rr = edge_endpoint(v, &ix, (int)n, names, dest[k]);
            if (rr == -4) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
            if (rr == -1) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: op index %lld out of range 0..%zu", path, e, which[k], (long long)json_integer_value(v), n ? n - 1 : 0); goto done; }
            if (rr == -2) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: no op named \"%s\"", path, e, which[k], json_string_value(v)); goto done; }
            if (rr == -3) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: must be an op index or name", path, e, which[k]); goto done; }
        }
        double sz = NAN;
        r = json_number(ed, edge_key, &sz, 0);
        if (r == -2) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: must be a number", path, e, edge_key); goto done; }
        if (r == 1) {
            json_t *op = json_array_get(ops, s);
            sz = 0;
            json_number(op, out_key, &sz, 0);
        }
        if (!isfinite(sz) || sz < 0) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: must be finite and non-negative, got %g", path, e, edge_key, sz); goto done; }
        if (dp_graph_builder_add_edge(b, s, d, sz) < 0) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    }
    g = dp_graph_builder_finish(b, err);
done:
    free(ix.slot);
    free(names);
    dp_graph_builder_free(b);
    return g;
}

json_t *dp_graph_to_json(const dp_graph *g)
{
    const int phys = g->cost_kind == DP_COST_PHYSICAL;
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("doppler-graph"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "name", json_string(g->name));
    json_object_set_new(root, "cost_kind", json_string(phys ? "physical" : "time"));
    json_object_set_new(root, "time_scale", dp_json_number(g->time_scale));
    json_object_set_new(root, "time_unit", json_string(g->time_unit));
    if (g->devices > 0) json_object_set_new(root, "devices", json_integer(g->devices));
    json_t *ops = json_array();
    for (int i = 0; i < g->n_ops; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(g->op_name[i]));
        json_object_set_new(o, "kind", json_string(g->op_kind[i]));
        json_object_set_new(o, phys ? "flops" : "time", dp_json_number(g->work[i]));
        json_object_set_new(o, phys ? "out_bytes" : "comm", dp_json_number(g->out_size[i]));
        if (g->op_type[i]) json_object_set_new(o, "op_type", json_string(g->op_type[i]));
        if (g->op_einsum[i]) json_object_set_new(o, "einsum", json_string(g->op_einsum[i]));
        if (g->op_ndim[i] > 0) {
            json_t *s = json_array();
            for (int k = 0; k < g->op_ndim[i]; k++)
                json_array_append_new(s, json_integer(g->op_shape[(size_t)i * DP_MAX_DIMS + k]));
            json_object_set_new(o, "shape", s);
        }
        json_array_append_new(ops, o);
    }
    json_object_set_new(root, "ops", ops);
    json_t *edges = json_array();
    for (int e = 0; e < g->n_edges; e++) {
        json_t *o = json_object();
        json_object_set_new(o, "src", json_integer(g->edge_src[e]));
        json_object_set_new(o, "dst", json_integer(g->edge_dst[e]));
        json_object_set_new(o, phys ? "bytes" : "comm", dp_json_number(g->edge_size[e]));
        json_array_append_new(edges, o);
    }
    json_object_set_new(root, "edges", edges);
    return root;
}

int dp_graph_write_json(const dp_graph *g, const char *path, dp_error *err)
{
    json_t *root = dp_graph_to_json(g);
    if (!root) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    int rc = dp_json_dump_atomic(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17), err);
    json_decref(root);
    return rc;
}

dp_graph *dp_graph_read(const char *path, const char *format, dp_error *err)
{
    const char *fmt = format;
    if (!fmt) {
        const char *dot = strrchr(dp_path_stem(path), '.');
        if (dot && strcmp(dot, ".txt") == 0) fmt = "doppler";
        else if (dot && strcmp(dot, ".json") == 0) fmt = "json";
        else if (dot && strcmp(dot, ".stg") == 0) fmt = "stg";
        else if (dot && (strcmp(dot, ".dot") == 0 || strcmp(dot, ".gv") == 0)) fmt = "dot";
        else if (dot && strcmp(dot, ".in") == 0) {
            dp_error_set(err, DP_EINVAL, "%s: a HEFT example (format heft-in) carries its own processors: graph info "
                         "and place read it; as a graph alone it has no format here", path);
            return NULL;
        } else {
            dp_error_set(err, DP_EINVAL, "%s: cannot tell the graph format from the file name; give --format", path);
            return NULL;
        }
    }
    if (strcmp(fmt, "doppler") == 0) return dp_graph_read_doppler(path, err);
    /* "json": native, WfCommons or MSR, told apart by content */
    if (strcmp(fmt, "json") == 0) return dp_graph_read_json_any(path, err);
    if (strcmp(fmt, "native") == 0) return dp_graph_read_json(path, err);
    if (strcmp(fmt, "wfcommons") == 0) return dp_graph_read_wfcommons(path, DP_WFCOMMONS_BANDWIDTH_BPS, err);
    if (strcmp(fmt, "msr") == 0) return dp_graph_read_msr(path, err);
    if (strcmp(fmt, "stg") == 0) return dp_graph_read_stg(path, err);
    if (strcmp(fmt, "dot") == 0) return dp_graph_read_dot(path, err);
    if (strcmp(fmt, "heft-in") == 0 || strcmp(fmt, "heft-csv") == 0) {
        dp_error_set(err, DP_EINVAL, "%s: format %s is a heterogeneous example with its own processors: graph info and "
                     "place read it; as a graph alone it has no format here", path, fmt);
        return NULL;
    }
    dp_error_set(err, DP_EINVAL, "%s: unknown graph format \"%s\" (doppler, json, native, wfcommons, msr, stg, dot)", path, fmt);
    return NULL;
}
