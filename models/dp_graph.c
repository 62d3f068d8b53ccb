/* dp_graph.c: building and validating the immutable dataflow graph. */
#include "dp_graph.h"
#include "dp_alloc.h"
#include "dp_file.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dp_graph_builder {
    char *name, *source;
    dp_graph_cost_kind kind;
    double time_scale;
    char *time_unit;
    int devices;
    int n_ops, cap_ops;
    char **op_name, **op_kind, **op_type, **op_einsum;
    int *op_ndim;
    int64_t *op_shape;
    double *work, *out_size;
    int n_edges, cap_edges;
    int *src, *dst;
    double *size;
    dp_error mem_err;   /* a growth refused by dp_file_mem_check (code DP_OK when none) */
    int nomem;          /* 1 once a setter ran out of memory: finish then fails (DP_ENOMEM) */
};

/* Bytes a graph of ops ops and edges edges takes while built and after dp_graph_builder_finish
 * (the builder's arrays and strings, the graph's copy with its CSR both ways), an upper estimate
 * (measured: about 200 bytes per op and edge for chainmm graphs). */
#define BUILDER_BYTES_PER_OP 600.0
#define BUILDER_BYTES_PER_EDGE 80.0

/* Before growing to ops and edges: refused (DP_ENOMEM, the message in b->mem_err) when memory
 * cannot hold the graph so grown. */
static int builder_mem_check(dp_graph_builder *b, int ops, int edges)
{
    const double bytes = (double)ops * BUILDER_BYTES_PER_OP + (double)edges * BUILDER_BYTES_PER_EDGE;
    if (bytes < 64.0 * 1024 * 1024) return DP_OK; /* small graphs: no need to ask */
    char what[200];
    snprintf(what, sizeof what, "the graph, grown to %d ops and %d edges,", ops, edges);
    return dp_file_mem_check(b->source, what, bytes, &b->mem_err);
}

int dp_graph_mem_check(const char *source, double ops, double edges, dp_error *err)
{
    char what[200];
    snprintf(what, sizeof what, "reading a graph of %.0f ops and %.0f edges", ops, edges);
    return dp_file_mem_check(source, what, ops * BUILDER_BYTES_PER_OP + edges * BUILDER_BYTES_PER_EDGE, err);
}

const dp_error *dp_graph_builder_error(const dp_graph_builder *b)
{
    return &b->mem_err;
}

dp_graph_builder *dp_graph_builder_alloc(const char *name, const char *source, dp_graph_cost_kind kind)
{
    dp_graph_builder *b = dp_alloc_calloc(1, sizeof *b);
    if (!b) return NULL;
    b->name = dp_alloc_strdup(name ? name : "graph");
    b->source = dp_alloc_strdup(source ? source : (name ? name : "graph"));
    b->kind = kind;
    b->time_scale = 1.0;
    b->time_unit = dp_alloc_strdup(kind == DP_GRAPH_COST_PHYSICAL ? "s" : "time units");
    if (!b->name || !b->source || !b->time_unit) {
        dp_graph_builder_free(b);
        return NULL;
    }
    return b;
}

void dp_graph_builder_free(dp_graph_builder *b)
{
    if (!b) return;
    for (int i = 0; i < b->n_ops; i++) {
        free(b->op_name[i]);
        free(b->op_kind[i]);
        free(b->op_type[i]);
        free(b->op_einsum[i]);
    }
    free(b->op_name); free(b->op_kind); free(b->op_type); free(b->op_einsum);
    free(b->op_ndim); free(b->op_shape); free(b->work); free(b->out_size);
    free(b->src); free(b->dst); free(b->size);
    free(b->name); free(b->source); free(b->time_unit);
    free(b);
}

void dp_graph_builder_set_devices(dp_graph_builder *b, int devices) { b->devices = devices > 0 ? devices : 0; }

int dp_graph_builder_set_time_unit(dp_graph_builder *b, double scale, const char *unit)
{
    b->time_scale = scale;
    if (!unit) return DP_OK;
    /* out of memory the old unit stayed, and the graph was built with the wrong unit's name */
    char *u = dp_alloc_strdup(unit);
    if (!u) { b->nomem = 1; return DP_ENOMEM; }
    free(b->time_unit);
    b->time_unit = u;
    return DP_OK;
}

#define GROW(ptr, cap) \
    do { \
        void *p_ = dp_alloc_realloc((ptr), (size_t)(cap) * sizeof *(ptr)); \
        if (!p_) return DP_ENOMEM; \
        (ptr) = p_; \
    } while (0)

static int grow_ops(dp_graph_builder *b)
{
    if (b->n_ops < b->cap_ops) return DP_OK;
    if (b->cap_ops >= DP_GRAPH_MAX_ELEMS) return DP_ENOMEM;
    int cap = b->cap_ops ? b->cap_ops * 2 : 64;
    if (cap > DP_GRAPH_MAX_ELEMS) cap = DP_GRAPH_MAX_ELEMS;
    if (builder_mem_check(b, cap, b->cap_edges) != DP_OK) return DP_ENOMEM;
    GROW(b->op_name, cap); GROW(b->op_kind, cap); GROW(b->op_type, cap);
    GROW(b->op_einsum, cap); GROW(b->op_ndim, cap); GROW(b->work, cap);
    GROW(b->out_size, cap);
    void *p = dp_alloc_realloc(b->op_shape, (size_t)cap * DP_GRAPH_MAX_DIMS * sizeof *b->op_shape);
    if (!p) return DP_ENOMEM;
    b->op_shape = p;
    b->cap_ops = cap;
    return DP_OK;
}

int dp_graph_builder_add_op(dp_graph_builder *b, const char *name, const char *kind,
                            double work, double out_size)
{
    if (grow_ops(b) != DP_OK) return DP_ENOMEM;
    int id = b->n_ops;
    char buf[32];
    if (!name) { snprintf(buf, sizeof buf, "op%d", id); name = buf; }
    b->op_name[id] = dp_alloc_strdup(name);
    b->op_kind[id] = dp_alloc_strdup(kind ? kind : "op");
    b->op_type[id] = NULL;
    b->op_einsum[id] = NULL;
    b->op_ndim[id] = 0;
    memset(b->op_shape + (size_t)id * DP_GRAPH_MAX_DIMS, 0, DP_GRAPH_MAX_DIMS * sizeof *b->op_shape);
    b->work[id] = work;
    b->out_size[id] = out_size;
    b->n_ops++;
    if (!b->op_name[id] || !b->op_kind[id]) return DP_ENOMEM;
    return id;
}

const char *dp_graph_builder_op_name(const dp_graph_builder *b, int op)
{
    return b->op_name[op];
}

int dp_graph_builder_set_op_info(dp_graph_builder *b, int op, const char *op_type,
                                 const char *einsum, int ndim, const int64_t *shape)
{
    if (op < 0 || op >= b->n_ops || ndim < 0 || ndim > DP_GRAPH_MAX_DIMS || (ndim > 0 && !shape)) return DP_EINVAL;
    /* both copies made before either is stored: a failed copy changes nothing (it was dropped
     * without a word: a review) */
    char *t = op_type ? dp_alloc_strdup(op_type) : NULL, *e = einsum ? dp_alloc_strdup(einsum) : NULL;
    if ((op_type && !t) || (einsum && !e)) {
        free(t);
        free(e);
        return DP_ENOMEM;
    }
    if (op_type) { free(b->op_type[op]); b->op_type[op] = t; }
    if (einsum) { free(b->op_einsum[op]); b->op_einsum[op] = e; }
    b->op_ndim[op] = ndim;
    for (int k = 0; k < ndim; k++) b->op_shape[(size_t)op * DP_GRAPH_MAX_DIMS + k] = shape[k];
    return DP_OK;
}

int dp_graph_builder_add_edge(dp_graph_builder *b, int src, int dst, double size)
{
    if (b->n_edges == b->cap_edges) {
        if (b->cap_edges >= DP_GRAPH_MAX_ELEMS) return DP_ENOMEM;
        int cap = b->cap_edges ? b->cap_edges * 2 : 64;
        if (cap > DP_GRAPH_MAX_ELEMS) cap = DP_GRAPH_MAX_ELEMS;
        if (builder_mem_check(b, b->cap_ops, cap) != DP_OK) return DP_ENOMEM;
        GROW(b->src, cap); GROW(b->dst, cap); GROW(b->size, cap);
        b->cap_edges = cap;
    }
    b->src[b->n_edges] = src;
    b->dst[b->n_edges] = dst;
    b->size[b->n_edges] = size;
    return b->n_edges++;
}

void dp_graph_free(dp_graph *g)
{
    if (!g) return;
    for (int i = 0; i < g->n_ops; i++) {
        if (g->op_name) free(g->op_name[i]);
        if (g->op_kind) free(g->op_kind[i]);
        if (g->op_type) free(g->op_type[i]);
        if (g->op_einsum) free(g->op_einsum[i]);
    }
    free(g->op_name); free(g->op_kind); free(g->op_type); free(g->op_einsum);
    free(g->op_ndim); free(g->op_shape); free(g->work); free(g->out_size);
    free(g->edge_src); free(g->edge_dst); free(g->edge_size);
    free(g->succ_ptr); free(g->pred_ptr); free(g->pred_edge); free(g->n_unique_pred);
    free(g->topo); free(g->sources); free(g->sinks);
    free(g->name); free(g->source); free(g->time_unit);
    free(g);
}

/* String hash set for duplicate-name detection (open addressing, FNV-1a). */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    return h;
}

static int check_unique_names(dp_graph_builder *b, dp_error *err)
{
    size_t cap = 16;
    while (cap < (size_t)b->n_ops * 2) cap <<= 1;
    int *slot = dp_alloc_malloc(cap * sizeof *slot);
    if (!slot) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", b->source);
    for (size_t i = 0; i < cap; i++) slot[i] = -1;
    int rc = DP_OK;
    for (int i = 0; i < b->n_ops && rc == DP_OK; i++) {
        size_t h = (size_t)fnv1a(b->op_name[i]) & (cap - 1);
        while (slot[h] >= 0) {
            if (strcmp(b->op_name[slot[h]], b->op_name[i]) == 0) {
                rc = dp_error_set(err, DP_EINVAL, "%s: op %d: duplicate op name \"%s\" (first used by op %d)",
                                  b->source, i, b->op_name[i], slot[h]);
                break;
            }
            h = (h + 1) & (cap - 1);
        }
        slot[h] = i;
    }
    free(slot);
    return rc;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when s does not start one: overlong forms,
 * surrogates and code points above U+10FFFF are invalid (RFC 3629), as Jansson has them. */
static int utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int n;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; cp = c & 0x07; }
    else return 0;
    for (int k = 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[k] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Byte offset of the first invalid UTF-8 sequence in s, or -1 when s is valid. */
static long utf8_invalid_at(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    for (long i = 0; p[i];) {
        int n = utf8_seq(p + i);
        if (!n) return i;
        i += n;
    }
    return -1;
}

static void utf8_sanitize(char *s)
{
    unsigned char *p = (unsigned char *)s;
    for (size_t i = 0; p[i];) {
        int n = utf8_seq(p + i);
        if (!n) { p[i++] = '?'; continue; }
        i += (size_t)n;
    }
}

static int check_op_strings(const dp_graph_builder *b, dp_error *err)
{
    for (int i = 0; i < b->n_ops; i++) {
        const char *what[4] = {"name", "kind", "type", "einsum"};
        const char *str[4] = {b->op_name[i], b->op_kind[i], b->op_type[i], b->op_einsum[i]};
        for (int k = 0; k < 4; k++) {
            long at = str[k] ? utf8_invalid_at(str[k]) : -1;
            if (at >= 0)
                return dp_error_set(err, DP_EINVAL, "%s: op %d: its %s is not valid UTF-8 (byte %ld is 0x%02x)",
                                    b->source, i, what[k], at + 1, (unsigned char)str[k][at]);
        }
    }
    return DP_OK;
}

dp_graph *dp_graph_builder_finish(dp_graph_builder *b, dp_error *err)
{
    const int n = b->n_ops, m = b->n_edges;
    if (n == 0) {
        dp_error_set(err, DP_EINVAL, "%s: the graph has no ops", b->source);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (!b->op_name[i] || !b->op_kind[i]) {
            dp_error_set(err, DP_ENOMEM, "%s: out of memory", b->source);
            return NULL;
        }
        if (!isfinite(b->work[i]) || b->work[i] < 0) {
            dp_error_set(err, DP_EINVAL, "%s: op %d (\"%s\"): work must be finite and non-negative, got %g",
                         b->source, i, b->op_name[i], b->work[i]);
            return NULL;
        }
        if (!isfinite(b->out_size[i]) || b->out_size[i] < 0) {
            dp_error_set(err, DP_EINVAL, "%s: op %d (\"%s\"): output size must be finite and non-negative, got %g",
                         b->source, i, b->op_name[i], b->out_size[i]);
            return NULL;
        }
    }
    for (int e = 0; e < m; e++) {
        if (b->src[e] < 0 || b->src[e] >= n || b->dst[e] < 0 || b->dst[e] >= n) {
            dp_error_set(err, DP_EINVAL, "%s: edge %d (%d -> %d): op id out of range 0..%d",
                         b->source, e, b->src[e], b->dst[e], n - 1);
            return NULL;
        }
        if (b->src[e] == b->dst[e]) {
            dp_error_set(err, DP_ECYCLE, "%s: edge %d: self loop on op %d (\"%s\")",
                         b->source, e, b->src[e], b->op_name[b->src[e]]);
            return NULL;
        }
        if (!isfinite(b->size[e]) || b->size[e] < 0) {
            dp_error_set(err, DP_EINVAL, "%s: edge %d (%d -> %d): size must be finite and non-negative, got %g",
                         b->source, e, b->src[e], b->dst[e], b->size[e]);
            return NULL;
        }
    }
    if (check_unique_names(b, err) != DP_OK) return NULL;
    if (check_op_strings(b, err) != DP_OK) return NULL;
    /* the time unit is printed and written as a JSON string: a DOT file's unit of invalid UTF-8
     * made the JSON writer fail "out of memory" (a review) */
    const long bad_unit = b->time_unit ? utf8_invalid_at(b->time_unit) : -1;
    if (bad_unit >= 0) {
        dp_error_set(err, DP_EINVAL, "%s: the graph's time unit is not valid UTF-8 (byte %ld is 0x%02x)", b->source, bad_unit + 1,
                     (unsigned char)b->time_unit[bad_unit]);
        return NULL;
    }

    dp_graph *g = b->nomem ? NULL : dp_alloc_calloc(1, sizeof *g);
    if (!g) goto nomem;
    g->n_ops = n;
    g->n_edges = m;
    g->cost_kind = b->kind;
    g->time_scale = b->time_scale;
    g->time_unit = dp_alloc_strdup(b->time_unit);
    g->devices = b->devices;
    g->name = dp_alloc_strdup(b->name);
    if (g->name) utf8_sanitize(g->name);
    g->source = dp_alloc_strdup(b->source);
    g->op_name = dp_alloc_calloc(n, sizeof(char *));
    g->op_kind = dp_alloc_calloc(n, sizeof(char *));
    g->op_type = dp_alloc_calloc(n, sizeof(char *));
    g->op_einsum = dp_alloc_calloc(n, sizeof(char *));
    g->op_ndim = dp_alloc_malloc_n(n, sizeof(int));
    g->op_shape = dp_alloc_malloc_n((size_t)n * DP_GRAPH_MAX_DIMS, sizeof(int64_t));
    g->work = dp_alloc_malloc_n(n, sizeof(double));
    g->out_size = dp_alloc_malloc_n(n, sizeof(double));
    g->edge_src = dp_alloc_malloc_n(m, sizeof(int));
    g->edge_dst = dp_alloc_malloc_n(m, sizeof(int));
    g->edge_size = dp_alloc_malloc_n(m, sizeof(double));
    g->succ_ptr = dp_alloc_calloc((size_t)n + 1, sizeof(int));
    g->pred_ptr = dp_alloc_calloc((size_t)n + 1, sizeof(int));
    g->pred_edge = dp_alloc_malloc_n(m, sizeof(int));
    g->n_unique_pred = dp_alloc_calloc(n, sizeof(int));
    g->topo = dp_alloc_malloc_n(n, sizeof(int));
    g->sources = dp_alloc_malloc_n(n, sizeof(int));
    g->sinks = dp_alloc_malloc_n(n, sizeof(int));
    if (!g->time_unit || !g->name || !g->source || !g->op_name || !g->op_kind || !g->op_type ||
        !g->op_einsum || !g->op_ndim || !g->op_shape || !g->work || !g->out_size || !g->edge_src ||
        !g->edge_dst || !g->edge_size || !g->succ_ptr || !g->pred_ptr || !g->pred_edge ||
        !g->n_unique_pred || !g->topo || !g->sources || !g->sinks)
        goto nomem;
    for (int i = 0; i < n; i++) {
        g->op_name[i] = b->op_name[i]; b->op_name[i] = NULL;
        g->op_kind[i] = b->op_kind[i]; b->op_kind[i] = NULL;
        g->op_type[i] = b->op_type[i]; b->op_type[i] = NULL;
        g->op_einsum[i] = b->op_einsum[i]; b->op_einsum[i] = NULL;
    }
    /* the builder gave its strings away: make it forget them but stay reusable for free() */
    b->n_ops = 0;
    memcpy(g->op_ndim, b->op_ndim, (size_t)n * sizeof(int));
    memcpy(g->op_shape, b->op_shape, (size_t)n * DP_GRAPH_MAX_DIMS * sizeof(int64_t));
    memcpy(g->work, b->work, (size_t)n * sizeof(double));
    memcpy(g->out_size, b->out_size, (size_t)n * sizeof(double));

    /* Order edges: by source, then by the first appearance of (src, dst) among src's edges,
     * then input order. Key of edge e: rank of its first copy within the source's edge list.
     * A stable counting sort by source gives input order per source; within a source, edges
     * are grouped by destination with a per-source scan (degrees are small; the scan uses a
     * "last seen" mark per destination, so the cost is O(deg) per source). */
    {
        int *cnt = g->succ_ptr;
        for (int e = 0; e < m; e++) cnt[b->src[e] + 1]++;
        for (int i = 0; i < n; i++) cnt[i + 1] += cnt[i];
        int *pos = dp_alloc_malloc_n((size_t)n + 1, sizeof(int));
        int *by_src = dp_alloc_malloc_n(m, sizeof(int));
        int *first = dp_alloc_malloc_n(n, sizeof(int));    /* per dst: slot of first copy, for current src */
        int *mark = dp_alloc_malloc_n(n, sizeof(int));     /* per dst: source that set first[] */
        int *grp_next = dp_alloc_malloc_n(m, sizeof(int)); /* linked list of copies of one (src,dst) */
        int *grp_tail = dp_alloc_malloc_n(m, sizeof(int));
        if (!pos || !by_src || !first || !mark || !grp_next || !grp_tail) {
            free(pos); free(by_src); free(first); free(mark); free(grp_next); free(grp_tail);
            goto nomem;
        }
        memcpy(pos, cnt, ((size_t)n + 1) * sizeof(int));
        for (int e = 0; e < m; e++) by_src[pos[b->src[e]]++] = e;
        for (int i = 0; i < n; i++) mark[i] = -1;
        int out = 0, repeated = 0;
        for (int u = 0; u < n; u++) {
            int lo = cnt[u], hi = cnt[u + 1];
            for (int k = lo; k < hi; k++) {
                int e = by_src[k], v = b->dst[e];
                grp_next[k] = -1;
                if (mark[v] != u) { mark[v] = u; first[v] = k; grp_tail[k] = k; }
                else { grp_next[grp_tail[first[v]]] = k; grp_tail[first[v]] = k; repeated++; }
            }
            for (int k = lo; k < hi; k++) {
                int e = by_src[k], v = b->dst[e];
                if (first[v] != k) continue;
                for (int q = k; q >= 0; q = grp_next[q]) {
                    int eq = by_src[q];
                    g->edge_src[out] = b->src[eq];
                    g->edge_dst[out] = b->dst[eq];
                    g->edge_size[out] = b->size[eq];
                    out++;
                }
            }
        }
        g->n_repeated_edges = repeated;
        /* in-edges */
        int *pc = g->pred_ptr;
        for (int e = 0; e < m; e++) pc[g->edge_dst[e] + 1]++;
        for (int i = 0; i < n; i++) pc[i + 1] += pc[i];
        memcpy(pos, pc, ((size_t)n + 1) * sizeof(int));
        for (int e = 0; e < m; e++) g->pred_edge[pos[g->edge_dst[e]]++] = e;
        /* distinct predecessors */
        for (int i = 0; i < n; i++) mark[i] = -1;
        for (int v = 0; v < n; v++)
            for (int k = pc[v]; k < pc[v + 1]; k++) {
                int u = g->edge_src[g->pred_edge[k]];
                if (mark[u] != v) { mark[u] = v; g->n_unique_pred[v]++; }
            }
        /* Kahn's algorithm with a min-heap-free approach: a FIFO seeded with sources in id order.
         * (A plain FIFO gives a valid topological order; ties resolve by id among sources.) */
        int *indeg = first; /* reuse */
        for (int i = 0; i < n; i++) indeg[i] = pc[i + 1] - pc[i];
        int head = 0, tail = 0;
        for (int i = 0; i < n; i++) if (indeg[i] == 0) g->topo[tail++] = i;
        g->n_sources = tail;
        memcpy(g->sources, g->topo, (size_t)tail * sizeof(int));
        while (head < tail) {
            int u = g->topo[head++];
            for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++)
                if (--indeg[g->edge_dst[e]] == 0) g->topo[tail++] = g->edge_dst[e];
        }
        if (tail < n) {
            /* find an op on a cycle: walk predecessors among unfinished ops */
            int v = -1;
            for (int i = 0; i < n; i++) if (indeg[i] > 0) { v = i; break; }
            /* follow unfinished predecessors n times: lands on a cycle */
            for (int step = 0; step < n; step++) {
                int nxt = -1;
                for (int k = pc[v]; k < pc[v + 1]; k++) {
                    int u = g->edge_src[g->pred_edge[k]];
                    if (indeg[u] > 0) { nxt = u; break; }
                }
                if (nxt < 0) break;
                v = nxt;
            }
            dp_error_set(err, DP_ECYCLE, "%s: the graph has a cycle through op %d (\"%s\")",
                         b->source, v, g->op_name[v]);
            free(pos); free(by_src); free(first); free(mark); free(grp_next); free(grp_tail);
            dp_graph_free(g);
            return NULL;
        }
        int ns = 0;
        for (int i = 0; i < n; i++) if (g->succ_ptr[i + 1] == g->succ_ptr[i]) g->sinks[ns++] = i;
        g->n_sinks = ns;
        free(pos); free(by_src); free(first); free(mark); free(grp_next); free(grp_tail);
    }
    /* Sums must stay finite: each cost may be finite while their total (a makespan, the total
     * work, a critical path: all bounded by the sums below) overflows to inf, and printed times
     * are divided by time_scale (5e-324 makes any time inf). */
    if (!(g->time_scale >= DBL_MIN && g->time_scale <= DBL_MAX)) {
        dp_error_set(err, DP_EINVAL, "%s: time_scale %g: must be a finite number of at least %g (printed times are "
                     "divided by it)", b->source, g->time_scale, DBL_MIN);
        dp_graph_free(g);
        return NULL;
    }
    {
        double work = 0, bytes = 0;
        for (int i = 0; i < n; i++) work += g->work[i], bytes += g->out_size[i];
        for (int e = 0; e < m; e++) bytes += g->edge_size[e];
        const char *what = !isfinite(work) ? "the ops' total work" : !isfinite(bytes) ? "the total of the output and edge sizes"
                         : !isfinite((work + bytes) / g->time_scale) ? "the total cost divided by time_scale" : NULL;
        if (what) {
            dp_error_set(err, DP_EINVAL, "%s: %s overflows to infinity (costs near 1e308, or a tiny time_scale): "
                         "makespans and critical paths could not be computed; scale the costs down", b->source, what);
            dp_graph_free(g);
            return NULL;
        }
    }
    return g;
nomem:
    dp_graph_free(g);
    dp_error_set(err, DP_ENOMEM, "%s: out of memory building the graph", b->source);
    return NULL;
}

int dp_graph_find_op(const dp_graph *g, const char *name)
{
    for (int i = 0; i < g->n_ops; i++)
        if (strcmp(g->op_name[i], name) == 0) return i;
    return -1;
}

uint64_t dp_graph_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t fnv_double(uint64_t h, double x)
{
    if (x == 0) x = 0; /* -0 as 0 */
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return dp_graph_hash_bytes(h, &u, sizeof u);
}

static uint64_t fnv_int(uint64_t h, int64_t x)
{
    return dp_graph_hash_bytes(h, &x, sizeof x);
}

uint64_t dp_graph_content_hash(const dp_graph *g)
{
    uint64_t h = 1469598103934665603ULL;
    h = fnv_int(h, (int64_t)g->cost_kind);
    h = fnv_int(h, g->n_ops);
    h = fnv_int(h, g->n_edges);
    for (int v = 0; v < g->n_ops; v++) {
        h = fnv_double(h, g->work[v]);
        /* a sink's output goes nowhere (formats without it, such as DOT, read it as 0) */
        h = fnv_double(h, g->succ_ptr[v + 1] > g->succ_ptr[v] ? g->out_size[v] : 0.0);
    }
    for (int e = 0; e < g->n_edges; e++) {
        h = fnv_int(h, g->edge_src[e]);
        h = fnv_int(h, g->edge_dst[e]);
        h = fnv_double(h, g->edge_size[e]);
    }
    return h;
}

double dp_graph_total_work(const dp_graph *g)
{
    double s = 0;
    for (int i = 0; i < g->n_ops; i++) s += g->work[i];
    return s;
}

int dp_graph_get_n_ops(const dp_graph *g) { return g->n_ops; }
int dp_graph_get_n_edges(const dp_graph *g) { return g->n_edges; }
int dp_graph_get_cost_kind(const dp_graph *g) { return (int)g->cost_kind; }
double dp_graph_get_time_scale(const dp_graph *g) { return g->time_scale; }
int dp_graph_get_devices(const dp_graph *g) { return g->devices; }
const char *dp_graph_get_time_unit(const dp_graph *g) { return g->time_unit; }
const char *dp_graph_get_name(const dp_graph *g) { return g->name; }
const char *dp_graph_get_source(const dp_graph *g) { return g->source; }

int dp_graph_set_source(dp_graph *g, const char *source)
{
    if (!g || !source || utf8_invalid_at(source) >= 0) return DP_EINVAL;
    char *s = dp_alloc_strdup(source);
    if (!s) return DP_ENOMEM;
    free(g->source);
    g->source = s;
    return DP_OK;
}
const double *dp_graph_get_work(const dp_graph *g) { return g->work; }
const double *dp_graph_get_out_size(const dp_graph *g) { return g->out_size; }
const int *dp_graph_get_edge_src(const dp_graph *g) { return g->edge_src; }
const int *dp_graph_get_edge_dst(const dp_graph *g) { return g->edge_dst; }
const double *dp_graph_get_edge_size(const dp_graph *g) { return g->edge_size; }
const int *dp_graph_get_succ_ptr(const dp_graph *g) { return g->succ_ptr; }
const int *dp_graph_get_pred_ptr(const dp_graph *g) { return g->pred_ptr; }
const int *dp_graph_get_topo(const dp_graph *g) { return g->topo; }
const char *dp_graph_get_op_name(const dp_graph *g, int v) { return g->op_name[v]; }
const char *dp_graph_get_op_kind(const dp_graph *g, int v) { return g->op_kind[v]; }

const int *dp_graph_get_sources(const dp_graph *g, int *n)
{
    if (n) *n = g->n_sources;
    return g->sources;
}

const int *dp_graph_get_sinks(const dp_graph *g, int *n)
{
    if (n) *n = g->n_sinks;
    return g->sinks;
}

int dp_graph_get_op_shape(const dp_graph *g, int v, const int64_t **dims)
{
    if (dims) *dims = g->op_shape + (size_t)v * DP_GRAPH_MAX_DIMS;
    return g->op_ndim[v];
}
