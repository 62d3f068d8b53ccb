/* dp_gen_einsum.c: expanding einsum ops over block-partitioned tensors into a dataflow graph. */
#include "dp_gen_einsum.h"
#include "dp_alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EIN_MAX_LABELS 16  /* distinct labels in one op */
#define EIN_MAX_INPUTS 8

typedef struct ein_tensor {
    char *name;
    int ndim;
    char label[DP_GRAPH_MAX_DIMS];
    int64_t size[DP_GRAPH_MAX_DIMS];
    int split[DP_GRAPH_MAX_DIMS];
    int n_blocks;
    int *producer;  /* per block (row-major over dims): op id, or -1 for an external tensor */
    int param;      /* a trainable external tensor (dp_gen_einsum_param) */
    int op;         /* the tape entry that produced it, or -1 (external) */
    int needs_grad; /* a parameter, or an op output that depends on one */
    int *contrib;   /* backward: tensors holding contributions to its gradient */
    int n_contrib, cap_contrib;
} ein_tensor;

/* One declared op, kept for the backward pass. */
typedef struct ein_tape {
    char *name, *kind, *spec, *splits;
    double flops_per_point;
    int n_in;
    int in[EIN_MAX_INPUTS];
    int out;
} ein_tape;

typedef struct ein_dep {
    int op;
    double bytes;
} ein_dep;

struct dp_gen_einsum {
    dp_graph_builder *b;
    char *name;
    int dtype_bytes;
    int64_t size[128];
    int split[128];
    ein_tensor *t;
    int n_t, cap_t;
    int failed;
    dp_error err;
    ein_dep *deps;
    int n_deps, cap_deps;
    long long n_ops, n_edges;  /* graph ops and edges created so far */
    ein_tape *tape;
    int n_tape, cap_tape;
    int backward_done;
};

static int fail(dp_gen_einsum *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(dp_gen_einsum *e, const char *fmt, ...)
{
    if (!e->failed) {
        char msg[DP_ERROR_MSG_MAX - 64];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        dp_error_set(&e->err, DP_EINVAL, "%s: %s", e->name, msg);
        e->failed = 1;
    }
    return -1;
}

static int fail_nomem(dp_gen_einsum *e)
{
    if (!e->failed) {
        const dp_error *me = e->b ? dp_graph_builder_error(e->b) : NULL;
        if (me && me->code != DP_OK) dp_error_set(&e->err, me->code, "%s", me->msg);
        else dp_error_set(&e->err, DP_ENOMEM, "%s: out of memory generating the graph", e->name);
        e->failed = 1;
    }
    return -1;
}

static int is_label(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

dp_gen_einsum *dp_gen_einsum_alloc(const char *name, int dtype_bytes)
{
    dp_gen_einsum *e = dp_alloc_calloc(1, sizeof *e);
    if (!e) return NULL;
    e->name = dp_alloc_strdup(name ? name : "graph");
    e->b = dp_graph_builder_alloc(name, name, DP_GRAPH_COST_PHYSICAL);
    if (!e->name || !e->b) {
        dp_gen_einsum_free(e);
        return NULL;
    }
    e->dtype_bytes = dtype_bytes;
    dp_error_clear(&e->err);
    if (dtype_bytes <= 0) fail(e, "dtype size must be positive, got %d bytes", dtype_bytes);
    return e;
}

void dp_gen_einsum_free(dp_gen_einsum *e)
{
    if (!e) return;
    for (int i = 0; i < e->n_t; i++) {
        free(e->t[i].name);
        free(e->t[i].producer);
        free(e->t[i].contrib);
    }
    free(e->t);
    for (int i = 0; i < e->n_tape; i++) {
        free(e->tape[i].name);
        free(e->tape[i].kind);
        free(e->tape[i].spec);
        free(e->tape[i].splits);
    }
    free(e->tape);
    free(e->deps);
    dp_graph_builder_free(e->b);
    free(e->name);
    free(e);
}

int dp_gen_einsum_dim(dp_gen_einsum *e, char label, int64_t size, int split)
{
    if (e->failed) return -1;
    int c = (unsigned char)label;
    if (!is_label(c)) return fail(e, "dimension label '%c' is not a letter", label);
    if (e->size[c]) return fail(e, "dimension '%c' declared twice", label);
    if (size < 1) return fail(e, "dimension '%c': size must be at least 1, got %lld", label, (long long)size);
    if (split < 1 || split > size)
        return fail(e, "dimension '%c': split must be in 1..%lld (its size), got %d", label, (long long)size, split);
    e->size[c] = size;
    e->split[c] = split;
    return 0;
}

static int new_tensor(dp_gen_einsum *e, const char *name, const char *labels, const int *split)
{
    if (e->n_t == e->cap_t) {
        int cap = e->cap_t ? 2 * e->cap_t : 32;
        ein_tensor *p = dp_alloc_realloc(e->t, (size_t)cap * sizeof *p);
        if (!p) return fail_nomem(e);
        e->t = p;
        e->cap_t = cap;
    }
    ein_tensor *t = &e->t[e->n_t];
    memset(t, 0, sizeof *t);
    t->ndim = (int)strlen(labels);
    long long nb = 1;
    for (int k = 0; k < t->ndim; k++) {
        t->label[k] = labels[k];
        t->size[k] = e->size[(unsigned char)labels[k]];
        t->split[k] = split[k];
        nb *= split[k];
    }
    if (nb > DP_GRAPH_MAX_ELEMS) return fail(e, "tensor %s: %lld blocks is beyond the limit", name, nb);
    t->n_blocks = (int)nb;
    t->op = -1;
    t->name = dp_alloc_strdup(name);
    t->producer = dp_alloc_malloc_n((size_t)nb, sizeof(int));
    if (!t->name || !t->producer) {
        free(t->name);
        free(t->producer);
        return fail_nomem(e);
    }
    for (long long i = 0; i < nb; i++) t->producer[i] = -1;
    return e->n_t++;
}

int dp_gen_einsum_input(dp_gen_einsum *e, const char *name, const char *labels)
{
    if (e->failed) return -1;
    int n = (int)strlen(labels);
    if (n > DP_GRAPH_MAX_DIMS) return fail(e, "input %s: more than %d dimensions", name, DP_GRAPH_MAX_DIMS);
    int split[DP_GRAPH_MAX_DIMS];
    for (int k = 0; k < n; k++) {
        int c = (unsigned char)labels[k];
        if (!is_label(c) || !e->size[c]) return fail(e, "input %s: dimension '%c' is not declared", name, labels[k]);
        split[k] = e->split[c];
    }
    return new_tensor(e, name, labels, split);
}

/* Start of block k of a dimension of size n cut in p. */
static inline int64_t block_start(int64_t k, int64_t n, int p)
{
    return k * n / p;
}

/* The block of a dimension (size n, cut in p) that holds index x. */
static int block_of(int64_t x, int64_t n, int p)
{
    int64_t k = x * p / n;
    while (k + 1 < p && block_start(k + 1, n, p) <= x) k++;
    while (k > 0 && block_start(k, n, p) > x) k--;
    return (int)k;
}

static int add_dep(dp_gen_einsum *e, int op, double bytes)
{
    for (int i = 0; i < e->n_deps; i++)
        if (e->deps[i].op == op) {
            /* the same block read at two places of one op travels once */
            if (bytes > e->deps[i].bytes) e->deps[i].bytes = bytes;
            return 0;
        }
    if (e->n_deps == e->cap_deps) {
        int cap = e->cap_deps ? 2 * e->cap_deps : 64;
        ein_dep *p = dp_alloc_realloc(e->deps, (size_t)cap * sizeof *p);
        if (!p) return fail_nomem(e);
        e->deps = p;
        e->cap_deps = cap;
    }
    e->deps[e->n_deps].op = op;
    e->deps[e->n_deps].bytes = bytes;
    e->n_deps++;
    return 0;
}

/* Block name: "name" when the op is one block, else "name[x1,y0]" listing the split labels. */
static void block_name(char *buf, size_t cap, const char *name, const char *suffix, int n_labels,
                       const char *labels, const int *split, const int *idx)
{
    size_t len = (size_t)snprintf(buf, cap, "%s%s", name, suffix);
    int first = 1;
    for (int l = 0; l < n_labels && len < cap; l++) {
        if (split[l] <= 1) continue;
        len += (size_t)snprintf(buf + len, cap - len, "%s%c%d", first ? "[" : ",", labels[l], idx[l]);
        first = 0;
    }
    if (!first && len < cap) snprintf(buf + len, cap - len, "]");
}

/* The op's blocks, edges and reductions (dp_gen_einsum_op without the tape). broadcast: an
 * output label may appear in no input (a gradient broadcast over a summed label). */
static int expand_op(dp_gen_einsum *e, const char *name, const char *kind, const char *spec, double flops_per_point,
                     const char *splits, int n_in, const int *inputs, int broadcast)
{
    if (e->failed) return -1;
    if (n_in < 1 || n_in > EIN_MAX_INPUTS) return fail(e, "op %s: %d inputs (1..%d allowed)", name, n_in, EIN_MAX_INPUTS);
    for (int i = 0; i < n_in; i++)
        if (inputs[i] < 0 || inputs[i] >= e->n_t) return fail(e, "op %s: input %d is not a tensor", name, i);

    /* parse "a,b->c" */
    char term[EIN_MAX_INPUTS + 1][DP_GRAPH_MAX_DIMS + 1];
    int n_terms = 0;
    const char *arrow = strstr(spec, "->");
    if (!arrow) return fail(e, "op %s: einsum \"%s\" has no \"->\"", name, spec);
    {
        const char *p = spec;
        while (p <= arrow) {
            const char *q = p;
            while (q < arrow && *q != ',') q++;
            if (n_terms >= EIN_MAX_INPUTS || q - p > DP_GRAPH_MAX_DIMS)
                return fail(e, "op %s: einsum \"%s\": too many inputs or dimensions", name, spec);
            memcpy(term[n_terms], p, (size_t)(q - p));
            term[n_terms][q - p] = '\0';
            n_terms++;
            p = q + 1;
        }
        if (strlen(arrow + 2) > DP_GRAPH_MAX_DIMS) return fail(e, "op %s: einsum \"%s\": output has too many dimensions", name, spec);
        strcpy(term[n_terms], arrow + 2);
    }
    if (n_terms != n_in) return fail(e, "op %s: einsum \"%s\" has %d inputs, %d tensors given", name, spec, n_terms, n_in);
    const char *out = term[n_terms];

    /* labels of the op: output labels first, then the summed ones */
    char lab[EIN_MAX_LABELS];
    int n_lab = 0, n_out = (int)strlen(out);
    for (int k = 0; k < n_out; k++) {
        int c = (unsigned char)out[k];
        if (!is_label(c) || !e->size[c]) return fail(e, "op %s: output dimension '%c' is not declared", name, out[k]);
        if (memchr(lab, c, (size_t)n_lab)) return fail(e, "op %s: output dimension '%c' repeated", name, out[k]);
        lab[n_lab++] = (char)c;
    }
    for (int i = 0; i < n_in; i++) {
        const ein_tensor *t = &e->t[inputs[i]];
        if ((int)strlen(term[i]) != t->ndim)
            return fail(e, "op %s: input %d (%s) has %d dimensions, einsum term \"%s\" names %d", name, i, t->name,
                        t->ndim, term[i], (int)strlen(term[i]));
        for (int k = 0; k < t->ndim; k++) {
            int c = (unsigned char)term[i][k];
            if (!is_label(c) || !e->size[c]) return fail(e, "op %s: dimension '%c' is not declared", name, term[i][k]);
            if (e->size[c] != t->size[k])
                return fail(e, "op %s: input %d (%s) dimension %d has size %lld, label '%c' has %lld", name, i, t->name, k,
                            (long long)t->size[k], c, (long long)e->size[c]);
            if (!memchr(lab, c, (size_t)n_lab)) {
                if (n_lab == EIN_MAX_LABELS) return fail(e, "op %s: more than %d labels", name, EIN_MAX_LABELS);
                lab[n_lab++] = (char)c;
            }
        }
    }
    for (int k = 0; k < n_out && !broadcast; k++) {
        int found = 0;
        for (int i = 0; i < n_in && !found; i++) found = strchr(term[i], out[k]) != NULL;
        if (!found) return fail(e, "op %s: output dimension '%c' appears in no input", name, out[k]);
    }

    /* splits */
    int split[EIN_MAX_LABELS];
    int64_t size[EIN_MAX_LABELS];
    for (int l = 0; l < n_lab; l++) {
        split[l] = e->split[(unsigned char)lab[l]];
        size[l] = e->size[(unsigned char)lab[l]];
    }
    for (const char *p = splits ? splits : ""; *p;) {
        if (*p == ' ' || *p == ',') { p++; continue; }
        char c = *p++;
        if (*p == '=') p++;
        char *end;
        long v = strtol(p, &end, 10);
        const char *hit = memchr(lab, c, (size_t)n_lab);
        if (!is_label((unsigned char)c) || end == p || !hit)
            return fail(e, "op %s: bad split override \"%s\" (label of the op, then a count)", name, splits);
        int l = (int)(hit - lab);
        if (v < 1 || v > size[l]) return fail(e, "op %s: split of '%c' must be in 1..%lld, got %ld", name, c, (long long)size[l], v);
        split[l] = (int)v;
        p = end;
    }
    /* block counts, checked as they grow (each split <= 2^31, so no product overflows) */
    long long n_ob = 1, n_rb = 1;
    for (int l = 0; l < n_lab; l++) {
        if (l < n_out) n_ob *= split[l];
        else n_rb *= split[l];
        if (e->n_ops + n_ob * (n_rb + 1) > DP_GEN_MAX_OPS)
            return fail(e, "op %s: the graph would have more than %d ops (the generators' limit): use fewer blocks", name,
                        DP_GEN_MAX_OPS);
    }
    e->n_ops += n_ob * (n_rb > 1 ? n_rb + 1 : 1);

    int out_split[DP_GRAPH_MAX_DIMS];
    for (int l = 0; l < n_out; l++) out_split[l] = split[l];
    int tid = new_tensor(e, name, out, out_split);
    if (tid < 0) return -1;

    int idx[EIN_MAX_LABELS];
    int64_t lo[128], hi[128];
    char nbuf[512];
    int *partial = dp_alloc_malloc_n((size_t)n_rb, sizeof(int));
    if (!partial) return fail_nomem(e);
    int rc = tid;
    for (long long ob = 0; ob < n_ob && rc >= 0; ob++) {
        long long r = ob;
        for (int l = n_out - 1; l >= 0; l--) { idx[l] = (int)(r % split[l]); r /= split[l]; }
        int64_t shape[DP_GRAPH_MAX_DIMS];
        double out_elems = 1;
        for (long long rb = 0; rb < n_rb && rc >= 0; rb++) {
            long long q = rb;
            for (int l = n_lab - 1; l >= n_out; l--) { idx[l] = (int)(q % split[l]); q /= split[l]; }
            double points = 1;
            out_elems = 1;
            for (int l = 0; l < n_lab; l++) {
                int c = (unsigned char)lab[l];
                lo[c] = block_start(idx[l], size[l], split[l]);
                hi[c] = block_start(idx[l] + 1, size[l], split[l]);
                points *= (double)(hi[c] - lo[c]);
                if (l < n_out) {
                    shape[l] = hi[c] - lo[c];
                    out_elems *= (double)shape[l];
                }
            }
            block_name(nbuf, sizeof nbuf, name, "", n_lab, lab, split, idx);
            int op = dp_graph_builder_add_op(e->b, nbuf, kind, flops_per_point * points, out_elems * e->dtype_bytes);
            if (op < 0) { rc = fail_nomem(e); break; }
            dp_graph_builder_set_op_info(e->b, op, "einsummable", spec, n_out, shape);
            partial[rb] = op;
            /* the input blocks this block reads */
            e->n_deps = 0;
            for (int i = 0; i < n_in && rc >= 0; i++) {
                const ein_tensor *t = &e->t[inputs[i]];
                int b0[DP_GRAPH_MAX_DIMS], b1[DP_GRAPH_MAX_DIMS], cur[DP_GRAPH_MAX_DIMS];
                for (int k = 0; k < t->ndim; k++) {
                    int c = (unsigned char)term[i][k];
                    b0[k] = block_of(lo[c], t->size[k], t->split[k]);
                    b1[k] = block_of(hi[c] - 1, t->size[k], t->split[k]);
                    cur[k] = b0[k];
                }
                for (;;) {
                    long long lin = 0;
                    double vol = 1;
                    for (int k = 0; k < t->ndim; k++) {
                        int c = (unsigned char)term[i][k];
                        lin = lin * t->split[k] + cur[k];
                        int64_t s = block_start(cur[k], t->size[k], t->split[k]);
                        int64_t f = block_start(cur[k] + 1, t->size[k], t->split[k]);
                        int64_t a = s > lo[c] ? s : lo[c], z = f < hi[c] ? f : hi[c];
                        vol *= (double)(z - a);
                    }
                    int prod = t->producer[lin];
                    if (prod >= 0 && add_dep(e, prod, vol * e->dtype_bytes) < 0) { rc = -1; break; }
                    int k = t->ndim - 1;
                    while (k >= 0 && cur[k] == b1[k]) { cur[k] = b0[k]; k--; }
                    if (k < 0) break;
                    cur[k]++;
                }
            }
            e->n_edges += e->n_deps + (n_rb > 1);
            if (e->n_edges > DP_GEN_MAX_EDGES) {
                rc = fail(e, "op %s: the graph would have more than %d edges (the generators' limit): use fewer blocks",
                          name, DP_GEN_MAX_EDGES);
                break;
            }
            for (int d = 0; d < e->n_deps && rc >= 0; d++)
                if (dp_graph_builder_add_edge(e->b, e->deps[d].op, op, e->deps[d].bytes) < 0) rc = fail_nomem(e);
        }
        if (rc < 0) break;
        int producer = partial[0];
        if (n_rb > 1) {
            /* the reduction of the partial results of this output block */
            block_name(nbuf, sizeof nbuf, name, ".red", n_out, lab, split, idx);
            double bytes = out_elems * e->dtype_bytes;
            producer = dp_graph_builder_add_op(e->b, nbuf, "reduce", (double)(n_rb - 1) * out_elems, bytes);
            if (producer < 0) { rc = fail_nomem(e); break; }
            /* "ik+ik->ik": the sum (or max) of the partials; long sums abbreviated */
            char ebuf[128];
            if (n_rb <= 8) {
                size_t len = 0;
                for (long long k = 0; k < n_rb; k++)
                    len += (size_t)snprintf(ebuf + len, sizeof ebuf - len, "%s%s", k ? "+" : "", out);
                snprintf(ebuf + len, sizeof ebuf - len, "->%s", out);
            } else {
                snprintf(ebuf, sizeof ebuf, "%s+...(%lld terms)->%s", out, n_rb, out);
            }
            dp_graph_builder_set_op_info(e->b, producer, "formation", ebuf, n_out, shape);
            for (long long k = 0; k < n_rb; k++)
                if (dp_graph_builder_add_edge(e->b, partial[k], producer, bytes) < 0) { rc = fail_nomem(e); break; }
        }
        e->t[tid].producer[ob] = producer;
    }
    free(partial);
    return rc;
}

int dp_gen_einsum_param(dp_gen_einsum *e, const char *name, const char *labels)
{
    int t = dp_gen_einsum_input(e, name, labels);
    if (t >= 0) e->t[t].param = e->t[t].needs_grad = 1;
    return t;
}

/* ---- backward pass (dp_gen_einsum.h: the rules) ---- */

typedef enum {
    BWD_PRODUCT, /* dY and the other inputs */
    BWD_SUM,     /* dY alone, summed or broadcast to the input's labels */
    BWD_INPUT,   /* dY and the input */
    BWD_OUTPUT,  /* dY and the forward output */
    BWD_ALL,     /* dY and every input */
    BWD_NONE     /* a stop-gradient */
} bwd_mode;

typedef struct bwd_rule {
    const char *kind;
    bwd_mode mode;
    double flops[3]; /* per point of the iteration space, for input 0, 1, 2 (2 for the rest) */
} bwd_rule;

static const bwd_rule bwd_rules[] = {
    {"matmul", BWD_PRODUCT, {2, 2, 2}},
    {"mul", BWD_PRODUCT, {1, 1, 1}},
    {"rope", BWD_PRODUCT, {3, 3, 3}},
    {"add", BWD_SUM, {1, 1, 1}},
    {"sum", BWD_SUM, {1, 1, 1}},
    {"relu", BWD_OUTPUT, {1, 1, 1}},
    {"silu", BWD_INPUT, {8, 8, 8}},
    {"sumsq", BWD_INPUT, {2, 2, 2}},
    {"rmsnorm", BWD_ALL, {3, 4, 3}},
    {"softmax", BWD_OUTPUT, {4, 4, 4}},
    {"exp", BWD_OUTPUT, {1, 2, 2}},
    {"div", BWD_ALL, {1, 3, 3}},
    {"max", BWD_NONE, {0, 0, 0}},
    {NULL, BWD_NONE, {0, 0, 0}},
};

static const bwd_rule *find_rule(const char *kind)
{
    for (const bwd_rule *r = bwd_rules; r->kind; r++)
        if (strcmp(r->kind, kind) == 0) return r;
    return NULL;
}

/* "a,b->c" into terms; returns the number of inputs, or -1. */
static int split_terms(const char *spec, char term[][DP_GRAPH_MAX_DIMS + 1], char *out)
{
    const char *arrow = strstr(spec, "->");
    if (!arrow || strlen(arrow + 2) > DP_GRAPH_MAX_DIMS) return -1;
    int n = 0;
    for (const char *p = spec; p <= arrow;) {
        const char *q = p;
        while (q < arrow && *q != ',') q++;
        if (n >= EIN_MAX_INPUTS || q - p > DP_GRAPH_MAX_DIMS) return -1;
        memcpy(term[n], p, (size_t)(q - p));
        term[n][q - p] = '\0';
        n++;
        p = q + 1;
    }
    strcpy(out, arrow + 2);
    return n;
}

static char *dup_or_null(const char *s)
{
    return s ? dp_alloc_strdup(s) : NULL;
}

int dp_gen_einsum_op(dp_gen_einsum *e, const char *name, const char *kind, const char *spec, double flops_per_point,
              const char *splits, int n_in, const int *inputs)
{
    int tid = expand_op(e, name, kind, spec, flops_per_point, splits, n_in, inputs, 0);
    if (tid < 0) return -1;
    if (e->n_tape == e->cap_tape) {
        int cap = e->cap_tape ? 2 * e->cap_tape : 64;
        ein_tape *p = dp_alloc_realloc(e->tape, (size_t)cap * sizeof *p);
        if (!p) return fail_nomem(e);
        e->tape = p;
        e->cap_tape = cap;
    }
    ein_tape *op = &e->tape[e->n_tape];
    memset(op, 0, sizeof *op);
    op->name = dp_alloc_strdup(name);
    op->kind = dp_alloc_strdup(kind);
    op->spec = dp_alloc_strdup(spec);
    op->splits = dup_or_null(splits);
    if (!op->name || !op->kind || !op->spec || (splits && !op->splits)) {
        free(op->name);
        free(op->kind);
        free(op->spec);
        free(op->splits);
        return fail_nomem(e);
    }
    op->flops_per_point = flops_per_point;
    op->n_in = n_in;
    op->out = tid;
    int needs = 0;
    for (int i = 0; i < n_in; i++) {
        op->in[i] = inputs[i];
        needs |= e->t[inputs[i]].needs_grad;
    }
    const bwd_rule *r = find_rule(kind);
    e->t[tid].needs_grad = needs && !(r && r->mode == BWD_NONE);
    e->t[tid].op = e->n_tape++;
    return tid;
}

static int add_contrib(dp_gen_einsum *e, int tensor, int grad)
{
    ein_tensor *t = &e->t[tensor];
    if (t->n_contrib == t->cap_contrib) {
        int cap = t->cap_contrib ? 2 * t->cap_contrib : 4;
        int *p = dp_alloc_realloc(t->contrib, (size_t)cap * sizeof *p);
        if (!p) return fail_nomem(e);
        t->contrib = p;
        t->cap_contrib = cap;
    }
    t->contrib[t->n_contrib++] = grad;
    return 0;
}

/* Split overrides giving a tensor's own partition: "b1 s1 d4". */
static void tensor_splits(const ein_tensor *t, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < t->ndim && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%c%d", k ? " " : "", t->label[k], t->split[k]);
}

/* The gradient of a tensor: its one contribution, or the sum of them ("grad_acc" ops of up to
 * EIN_MAX_INPUTS terms, chained). -1 when it has none (it does not reach the loss) or on error. */
static int gradient_of(dp_gen_einsum *e, int tensor)
{
    int round = 0;
    while (e->t[tensor].n_contrib > 1) {
        ein_tensor *t = &e->t[tensor];
        int k = t->n_contrib < EIN_MAX_INPUTS ? t->n_contrib : EIN_MAX_INPUTS;
        char lab[DP_GRAPH_MAX_DIMS + 1], spec[(DP_GRAPH_MAX_DIMS + 1) * (EIN_MAX_INPUTS + 1) + 2], sp[96], nm[512];
        memcpy(lab, t->label, (size_t)t->ndim);
        lab[t->ndim] = '\0';
        size_t len = 0;
        for (int i = 0; i < k; i++) len += (size_t)snprintf(spec + len, sizeof spec - len, "%s%s", i ? "," : "", lab);
        snprintf(spec + len, sizeof spec - len, "->%s", lab);
        tensor_splits(t, sp, sizeof sp);
        if (round == 0) snprintf(nm, sizeof nm, "%s.grad_acc", t->name);
        else snprintf(nm, sizeof nm, "%s.grad_acc%d", t->name, round + 1);
        int in[EIN_MAX_INPUTS];
        memcpy(in, t->contrib + t->n_contrib - k, (size_t)k * sizeof *in);
        int g = expand_op(e, nm, "grad_acc", spec, (double)(k - 1), sp, k, in, 0);
        if (g < 0) return -1;
        t = &e->t[tensor]; /* expand_op may move the tensors */
        t->n_contrib -= k;
        if (add_contrib(e, tensor, g) < 0) return -1;
        round++;
    }
    return e->t[tensor].n_contrib ? e->t[tensor].contrib[0] : -1;
}

/* The split overrides of a forward op restricted to the labels of spec (a gradient op's). */
static void keep_splits(const char *splits, const char *spec, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const char *p = splits ? splits : ""; *p;) {
        if (*p == ' ' || *p == ',') { p++; continue; }
        const char *q = p + 1;
        while (*q && *q != ' ' && *q != ',' && !is_label((unsigned char)*q)) q++;
        if (is_label((unsigned char)*p) && strchr(spec, *p) && len < cap) len += (size_t)snprintf(buf + len, cap - len, "%s%.*s", len ? " " : "", (int)(q - p), p);
        p = q;
    }
}

/* The gradient ops of tape entry k given dY. */
static int backward_op(dp_gen_einsum *e, int k, int dy)
{
    const ein_tape *op = &e->tape[k];
    const bwd_rule *r = find_rule(op->kind);
    if (!r) {
        char list[256];
        size_t len = 0;
        for (const bwd_rule *q = bwd_rules; q->kind && len < sizeof list; q++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", q->kind);
        return fail(e, "op %s: kind '%s' has no backward rule (known: %s)", op->name, op->kind, list);
    }
    if (r->mode == BWD_NONE) return 0;
    char term[EIN_MAX_INPUTS + 1][DP_GRAPH_MAX_DIMS + 1], out[DP_GRAPH_MAX_DIMS + 1];
    if (split_terms(op->spec, term, out) != op->n_in) return fail(e, "op %s: einsum \"%s\" unreadable", op->name, op->spec);
    for (int i = 0; i < op->n_in; i++) {
        int x = op->in[i];
        if (!e->t[x].needs_grad) continue;
        if (r->mode == BWD_SUM && strcmp(term[i], out) == 0) {
            /* dY passes through unchanged (a residual or the main operand of a bias add) */
            if (add_contrib(e, x, dy) < 0) return -1;
            continue;
        }
        int in[EIN_MAX_INPUTS + 1], n = 0;
        char spec[(DP_GRAPH_MAX_DIMS + 1) * (EIN_MAX_INPUTS + 2) + 2];
        size_t len = (size_t)snprintf(spec, sizeof spec, "%s", out);
        in[n++] = dy;
#define READ(t_, lab_) \
    do { \
        if (n == EIN_MAX_INPUTS) return fail(e, "op %s: its gradient would read more than %d tensors", op->name, EIN_MAX_INPUTS); \
        in[n++] = (t_); \
        len += (size_t)snprintf(spec + len, sizeof spec - len, ",%s", (lab_)); \
    } while (0)
        switch (r->mode) {
        case BWD_PRODUCT:
            for (int j = 0; j < op->n_in; j++)
                if (j != i) READ(op->in[j], term[j]);
            break;
        case BWD_INPUT: READ(x, term[i]); break;
        case BWD_OUTPUT: READ(op->out, out); break;
        case BWD_ALL:
            for (int j = 0; j < op->n_in; j++) READ(op->in[j], term[j]);
            break;
        case BWD_SUM:
        case BWD_NONE: break;
        }
#undef READ
        snprintf(spec + len, sizeof spec - len, "->%s", term[i]);
        char nm[512], kind[64], sp[128];
        snprintf(nm, sizeof nm, "%s.grad%d", op->name, i);
        if (strcmp(op->kind, "matmul") == 0) snprintf(kind, sizeof kind, "matmul");
        else snprintf(kind, sizeof kind, "%s_grad", op->kind);
        keep_splits(op->splits, spec, sp, sizeof sp);
        double f = r->flops[i < 3 ? i : 2];
        int g = expand_op(e, nm, kind, spec, f, sp, n, in, 1);
        if (g < 0 || add_contrib(e, x, g) < 0) return -1;
    }
    return 0;
}

int dp_gen_einsum_backward(dp_gen_einsum *e, int y, int dy, dp_gen_optimizer optimizer)
{
    if (e->failed) return -1;
    if (e->backward_done) return fail(e, "the backward pass is built once");
    if (y < 0 || y >= e->n_t || e->t[y].op < 0) return fail(e, "backward: the loss's tensor must be an op's output");
    if (dy < 0 || dy >= e->n_t) return fail(e, "backward: the loss gradient is not a tensor");
    if (optimizer != DP_GEN_OPT_SGD && optimizer != DP_GEN_OPT_ADAM) return fail(e, "backward: unknown optimizer %d", (int)optimizer);
    const ein_tensor *ty = &e->t[y], *td = &e->t[dy];
    int same = ty->ndim == td->ndim;
    for (int k = 0; same && k < ty->ndim; k++) same = ty->size[k] == td->size[k];
    if (!same) return fail(e, "backward: the loss gradient %s does not have the dimensions of %s", td->name, ty->name);
    e->backward_done = 1;
    if (add_contrib(e, y, dy) < 0) return -1;
    for (int k = e->t[y].op; k >= 0; k--) {
        int out = e->tape[k].out;
        if (!e->t[out].needs_grad) continue;
        int g = gradient_of(e, out);
        if (e->failed) return -1;
        if (g < 0) continue; /* does not reach the loss */
        if (backward_op(e, k, g) < 0) return -1;
    }
    /* the parameter updates, in declaration order */
    int n_t = e->n_t;
    for (int w = 0; w < n_t; w++) {
        if (!e->t[w].param) continue;
        int g = gradient_of(e, w);
        if (e->failed) return -1;
        if (g < 0) continue; /* a weight the loss does not depend on */
        const ein_tensor *t = &e->t[w];
        char lab[DP_GRAPH_MAX_DIMS + 1], spec[3 * DP_GRAPH_MAX_DIMS + 8], sp[96], nm[512];
        memcpy(lab, t->label, (size_t)t->ndim);
        lab[t->ndim] = '\0';
        snprintf(spec, sizeof spec, "%s,%s->%s", lab, lab, lab);
        tensor_splits(t, sp, sizeof sp);
        snprintf(nm, sizeof nm, "%s.update", t->name);
        int in[2] = {w, g};
        if (optimizer == DP_GEN_OPT_ADAM) {
            if (expand_op(e, nm, "adam", spec, 12.0, sp, 2, in, 0) < 0) return -1;
        } else if (expand_op(e, nm, "sgd", spec, 2.0, sp, 2, in, 0) < 0) {
            return -1;
        }
    }
    return 0;
}

dp_graph *dp_gen_einsum_finish(dp_gen_einsum *e, dp_error *err)
{
    if (e->failed) {
        if (err) *err = e->err;
        return NULL;
    }
    return dp_graph_builder_finish(e->b, err);
}
