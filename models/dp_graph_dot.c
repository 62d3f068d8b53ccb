/* dp_graph_dot.c: Graphviz DOT task graphs: the reader (Weight attributes) and the writer (see
 * dp_graph_formats.h). */
#include "dp_graph_format.h"
#include "dp_alloc.h"
#include "dp_file.h"
#include "dp_graph_formats.h"
#include "dp_json.h"
#include "dp_strmap.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- reader ---------------- */

typedef enum {
    DT_EOF, DT_ID, DT_LBRACE, DT_RBRACE, DT_LBRACK, DT_RBRACK, DT_EQ, DT_SEMI, DT_COMMA, DT_COLON,
    DT_ARROW, DT_DASHES
} dot_ttype;

typedef struct dot_tok {
    dot_ttype type;
    int line;
    int quoted;
    size_t str;  /* offset of the NUL-terminated text in the arena (DT_ID) */
} dot_tok;

typedef struct dot_lex {
    const char *path;
    dot_tok *tok;
    int n_tok, cap_tok;
    char *arena;
    size_t n_arena, cap_arena;
} dot_lex;

static int arena_put(dot_lex *L, const char *s, size_t n, size_t *off)
{
    if (L->n_arena + n + 1 > L->cap_arena) {
        size_t cap = L->cap_arena ? L->cap_arena : 4096;
        while (L->n_arena + n + 1 > cap) cap *= 2;
        char *p = dp_alloc_realloc(L->arena, cap);
        if (!p) return DP_ENOMEM;
        L->arena = p;
        L->cap_arena = cap;
    }
    *off = L->n_arena;
    memcpy(L->arena + L->n_arena, s, n);
    L->arena[L->n_arena + n] = '\0';
    L->n_arena += n + 1;
    return DP_OK;
}

static int tok_push(dot_lex *L, dot_ttype t, int line, int quoted, size_t str)
{
    if (L->n_tok == L->cap_tok) {
        int cap = L->cap_tok ? 2 * L->cap_tok : 256;
        if (cap > DP_GRAPH_MAX_ELEMS) return DP_ENOMEM;
        dot_tok *p = dp_alloc_realloc(L->tok, (size_t)cap * sizeof *p);
        if (!p) return DP_ENOMEM;
        L->tok = p;
        L->cap_tok = cap;
    }
    L->tok[L->n_tok].type = t;
    L->tok[L->n_tok].line = line;
    L->tok[L->n_tok].quoted = quoted;
    L->tok[L->n_tok].str = str;
    L->n_tok++;
    return DP_OK;
}

static int is_id_start(int c) { return isalpha(c) || c == '_' || c >= 0x80; }
static int is_id_char(int c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* Split the whole text into tokens (IDs, numerals and quoted strings all become DT_ID). */
static int dot_tokenize(dot_lex *L, const char *s, size_t n, dp_error *err)
{
    int line = 1;
    size_t i = 0;
    int at_line_start = 1;
    char *sbuf = NULL;
    size_t scap = 0;
    while (i < n) {
        int c = (unsigned char)s[i];
        if (c == '\n') { line++; i++; at_line_start = 1; continue; }
        if (isspace(c)) { i++; continue; }
        if (c == '#' && at_line_start) {  /* preprocessor output lines are ignored */
            while (i < n && s[i] != '\n') i++;
            continue;
        }
        at_line_start = 0;
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') i++;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            int start = line;
            i += 2;
            while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) { if (s[i] == '\n') line++; i++; }
            if (i + 1 >= n) { free(sbuf); return dp_error_set(err, DP_EINVAL, "%s:%d: unterminated comment", L->path, start); }
            i += 2;
            continue;
        }
        int rc = DP_OK;
        size_t off = 0;
        if (c == '"') {
            int start = line;
            size_t k = 0;
            i++;
            for (;;) {
                if (i >= n) { free(sbuf); return dp_error_set(err, DP_EINVAL, "%s:%d: unterminated string", L->path, start); }
                char ch = s[i];
                if (ch == '"') { i++; break; }
                /* two backslashes are one pair, both kept, as Graphviz reads them: "p\\" is
                 * the string p\\ (it read \" as an escaped quote and found no end: a review) */
                const int pair = ch == '\\' && i + 1 < n && s[i + 1] == '\\';
                if (pair) {
                    i += 2; /* both written below */
                } else if (ch == '\\' && i + 1 < n && (s[i + 1] == '"' || s[i + 1] == '\n' || s[i + 1] == '\r')) {
                    if (s[i + 1] == '"') { ch = '"'; i += 2; }
                    else { /* line continuation */
                        i += 2;
                        if (s[i - 1] == '\r' && i < n && s[i] == '\n') i++;
                        line++;
                        continue;
                    }
                } else {
                    if (ch == '\n') line++;
                    i++;
                }
                if (k + 3 > scap) {
                    size_t cap = scap ? 2 * scap : 256;
                    char *p = dp_alloc_realloc(sbuf, cap);
                    if (!p) { free(sbuf); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", L->path); }
                    sbuf = p;
                    scap = cap;
                }
                if (pair) sbuf[k++] = '\\';
                sbuf[k++] = ch;
            }
            rc = arena_put(L, sbuf ? sbuf : "", k, &off);
            if (rc == DP_OK) rc = tok_push(L, DT_ID, start, 1, off);
        } else if (is_id_start(c)) {
            size_t j = i;
            while (j < n && is_id_char((unsigned char)s[j])) j++;
            rc = arena_put(L, s + i, j - i, &off);
            if (rc == DP_OK) rc = tok_push(L, DT_ID, line, 0, off);
            i = j;
        } else if (isdigit(c) || c == '.' || (c == '-' && i + 1 < n && (isdigit((unsigned char)s[i + 1]) || s[i + 1] == '.'))) {
            size_t j = i + (c == '-');
            while (j < n && (isdigit((unsigned char)s[j]) || s[j] == '.')) j++;
            rc = arena_put(L, s + i, j - i, &off);
            if (rc == DP_OK) rc = tok_push(L, DT_ID, line, 0, off);
            i = j;
        } else if (c == '-' && i + 1 < n && (s[i + 1] == '>' || s[i + 1] == '-')) {
            rc = tok_push(L, s[i + 1] == '>' ? DT_ARROW : DT_DASHES, line, 0, 0);
            i += 2;
        } else {
            dot_ttype t;
            switch (c) {
            case '{': t = DT_LBRACE; break;
            case '}': t = DT_RBRACE; break;
            case '[': t = DT_LBRACK; break;
            case ']': t = DT_RBRACK; break;
            case '=': t = DT_EQ; break;
            case ';': t = DT_SEMI; break;
            case ',': t = DT_COMMA; break;
            case ':': t = DT_COLON; break;
            case '<':
                free(sbuf);
                return dp_error_set(err, DP_EINVAL, "%s:%d: HTML strings (<...>) are not supported", L->path, line);
            default:
                free(sbuf);
                return dp_error_set(err, DP_EINVAL, "%s:%d: unexpected character '%c'", L->path, line, isprint(c) ? c : '?');
            }
            rc = tok_push(L, t, line, 0, 0);
            i++;
        }
        if (rc != DP_OK) { free(sbuf); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", L->path); }
    }
    free(sbuf);
    return tok_push(L, DT_EOF, line, 0, 0) == DP_OK ? DP_OK : dp_error_set(err, DP_ENOMEM, "%s: out of memory", L->path);
}

static int dot_kw(const dot_lex *L, const dot_tok *t, const char *kw)
{
    return t->type == DT_ID && !t->quoted && strcasecmp(L->arena + t->str, kw) == 0;
}

static const char *dot_ttype_name(dot_ttype t)
{
    static const char *names[] = {"the end of the file", "an identifier", "'{'", "'}'", "'['", "']'", "'='", "';'",
                                  "','", "':'", "'->'", "'--'"};
    return names[t];
}

typedef struct dot_node {
    const char *name;
    double weight;  /* NAN: not given */
    double out_bytes; /* NAN: not given (then the largest out-edge) */
    const char *kind;
    const char *op_type, *einsum; /* NULL: not given */
    int ndim;                     /* 0: no shape given */
    int64_t shape[DP_GRAPH_MAX_DIMS];
    int line;
} dot_node;

typedef struct dot_attrs {
    int has_weight, has_out_bytes;
    double weight, out_bytes;
    const char *kind;
    const char *op_type, *einsum; /* this project's writer's op attributes doppler_op_type,
                                     doppler_einsum (NULL: not given) */
    int ndim;                     /* doppler_shape: its rank, 0 when not given ("shape" is Graphviz's) */
    int64_t shape[DP_GRAPH_MAX_DIMS];
    /* graph attributes, in either form ("doppler_costs=...;" or "graph [doppler_costs=...]"):
     * NULL / NAN / -1 when not given */
    const char *costs, *time_unit;
    double time_scale;
    int devices;
} dot_attrs;

typedef struct dot_scope {
    double node_w, edge_w;  /* NAN: no default */
    const char *node_kind;
    const char *node_op_type, *node_einsum; /* node [...] defaults of this project's attributes */
    int node_ndim;
    int64_t node_shape[DP_GRAPH_MAX_DIMS];
} dot_scope;

static void dot_attrs_clear(dot_attrs *a)
{
    a->has_weight = a->has_out_bytes = 0;
    a->kind = a->costs = a->time_unit = NULL;
    a->op_type = a->einsum = NULL;
    a->ndim = 0;
    a->time_scale = NAN;
    a->devices = -1;
}

/* the graph attributes a gives, into g (a later statement overrides an earlier one) */
static void dot_graph_attrs_take(dot_attrs *g, const dot_attrs *a)
{
    if (a->costs) g->costs = a->costs;
    if (a->time_unit) g->time_unit = a->time_unit;
    if (!isnan(a->time_scale)) g->time_scale = a->time_scale;
    if (a->devices >= 0) g->devices = a->devices;
}

/* a finite number >= 0 (> 0 with positive) from val, or an error naming the attribute */
static int dot_number(const dot_lex *L, const char *key, const char *val, int line, int positive, double *out,
                      dp_error *err)
{
    char *end;
    const double w = strtod(val, &end);
    if (end == val || *end || !isfinite(w) || w < 0 || (positive && !(w > 0)))
        return dp_error_set(err, DP_EINVAL, "%s:%d: %s must be a finite %s number, got \"%s\"", L->path, line, key,
                            positive ? "positive" : "non-negative", val);
    *out = w;
    return DP_OK;
}

/* One attribute key=val into a (others are ignored: DOT files carry many for drawing). This
 * project's writer adds, to keep a graph through DOT (a review of the eighteenth session found
 * them lost): out_bytes on nodes (an op's output, which the largest out-edge need not be: a sink
 * has none); doppler_costs, doppler_time_scale, doppler_time_unit and doppler_devices on the
 * graph. */
static int dot_attr_set(const dot_lex *L, dot_attrs *a, const char *key, const char *val, int line, dp_error *err)
{
    if (strcmp(key, "Weight") == 0) {
        a->has_weight = 1;
        return dot_number(L, "Weight", val, line, 0, &a->weight, err);
    }
    if (strcmp(key, "out_bytes") == 0) {
        a->has_out_bytes = 1;
        return dot_number(L, "out_bytes", val, line, 0, &a->out_bytes, err);
    }
    if (strcmp(key, "kind") == 0) a->kind = val;
    else if (strcmp(key, "doppler_op_type") == 0) a->op_type = val;
    else if (strcmp(key, "doppler_einsum") == 0) a->einsum = val;
    else if (strcmp(key, "doppler_shape") == 0) {
        /* "d1,d2,...": positive integers, at most DP_GRAPH_MAX_DIMS */
        const char *p = val;
        int nd = 0;
        while (*p) {
            char *end;
            errno = 0;
            const long long d = strtoll(p, &end, 10);
            if (end == p || errno || d <= 0 || nd == DP_GRAPH_MAX_DIMS || (*end && *end != ','))
                return dp_error_set(err, DP_EINVAL, "%s:%d: doppler_shape must be at most %d positive integers separated by commas, "
                                    "got \"%s\"", L->path, line, DP_GRAPH_MAX_DIMS, val);
            a->shape[nd++] = d;
            p = *end ? end + 1 : end;
        }
        a->ndim = nd;
    } else if (strcmp(key, "doppler_costs") == 0) {
        if (strcmp(val, "flops-bytes") != 0 && strcmp(val, "times") != 0)
            return dp_error_set(err, DP_EINVAL, "%s:%d: doppler_costs must be \"flops-bytes\" or \"times\", got \"%s\"", L->path,
                                line, val);
        a->costs = val;
    } else if (strcmp(key, "doppler_time_scale") == 0) {
        return dot_number(L, "doppler_time_scale", val, line, 1, &a->time_scale, err);
    } else if (strcmp(key, "doppler_time_unit") == 0) {
        a->time_unit = val;
    } else if (strcmp(key, "doppler_devices") == 0) {
        double d;
        int rc = dot_number(L, "doppler_devices", val, line, 0, &d, err);
        if (rc != DP_OK) return rc;
        if (d != floor(d) || d < 1 || d > DP_GRAPH_MAX_DEVICES)
            return dp_error_set(err, DP_EINVAL, "%s:%d: doppler_devices must be a whole number 1..%d, got \"%s\"",
                                L->path, line, DP_GRAPH_MAX_DEVICES, val);
        a->devices = (int)d;
    }
    return DP_OK;
}

/* Parse "[a=b, ...][...]" at *pos (if present) into attrs. */
static int dot_attr_list(const dot_lex *L, int *pos, dot_attrs *a, dp_error *err)
{
    dot_attrs_clear(a);
    while (L->tok[*pos].type == DT_LBRACK) {
        (*pos)++;
        for (;;) {
            const dot_tok *t = &L->tok[*pos];
            if (t->type == DT_RBRACK) { (*pos)++; break; }
            if (t->type == DT_COMMA || t->type == DT_SEMI) { (*pos)++; continue; }
            if (t->type != DT_ID)
                return dp_error_set(err, DP_EINVAL, "%s:%d: expected an attribute name, found %s", L->path, t->line, dot_ttype_name(t->type));
            const char *key = L->arena + t->str;
            (*pos)++;
            if (L->tok[*pos].type != DT_EQ)
                return dp_error_set(err, DP_EINVAL, "%s:%d: expected '=' after attribute %s", L->path, L->tok[*pos].line, key);
            (*pos)++;
            const dot_tok *v = &L->tok[*pos];
            if (v->type != DT_ID)
                return dp_error_set(err, DP_EINVAL, "%s:%d: expected a value for attribute %s, found %s", L->path, v->line, key,
                                    dot_ttype_name(v->type));
            (*pos)++;
            const int rc = dot_attr_set(L, a, key, L->arena + v->str, v->line, err);
            if (rc != DP_OK) return rc;
        }
    }
    return DP_OK;
}

typedef struct dot_graph {
    dot_node *node;
    int n_node, cap_node;
    int *esrc, *edst, *eline;
    double *ew;
    int n_edge, cap_edge;
    dp_strmap ids;
} dot_graph;

/* The node named by token t (created with the scope's defaults on first sight), or negative. */
static int dot_node_of(const dot_lex *L, dot_graph *G, const dot_tok *t, const dot_scope *sc)
{
    const char *name = L->arena + t->str;
    int i = dp_strmap_get(&G->ids, name);
    if (i >= 0) return i;
    if (G->n_node == G->cap_node) {
        int cap = G->cap_node ? 2 * G->cap_node : 64;
        if (cap > DP_GRAPH_MAX_ELEMS) return DP_ENOMEM;
        dot_node *p = dp_alloc_realloc(G->node, (size_t)cap * sizeof *p);
        if (!p) return DP_ENOMEM;
        G->node = p;
        G->cap_node = cap;
    }
    i = G->n_node++;
    G->node[i].name = name;
    G->node[i].weight = sc->node_w;
    G->node[i].out_bytes = NAN;
    G->node[i].kind = sc->node_kind;
    /* the scope's node defaults, as Graphviz applies them to every attribute (doppler_op_type,
     * doppler_einsum and doppler_shape in node [...] were dropped: a review) */
    G->node[i].op_type = sc->node_op_type;
    G->node[i].einsum = sc->node_einsum;
    G->node[i].ndim = sc->node_ndim;
    memcpy(G->node[i].shape, sc->node_shape, sizeof sc->node_shape);
    G->node[i].line = t->line;
    return dp_strmap_put(&G->ids, name, i);
}

static int dot_add_edge(dot_graph *G, int u, int v, double w, int line)
{
    if (G->n_edge == G->cap_edge) {
        int cap = G->cap_edge ? 2 * G->cap_edge : 64;
        if (cap > DP_GRAPH_MAX_ELEMS) return DP_ENOMEM;
        int *a = dp_alloc_realloc(G->esrc, (size_t)cap * sizeof *a);
        if (a) G->esrc = a;
        int *b = dp_alloc_realloc(G->edst, (size_t)cap * sizeof *b);
        if (b) G->edst = b;
        int *c = dp_alloc_realloc(G->eline, (size_t)cap * sizeof *c);
        if (c) G->eline = c;
        double *d = dp_alloc_realloc(G->ew, (size_t)cap * sizeof *d);
        if (d) G->ew = d;
        if (!a || !b || !c || !d) return DP_ENOMEM;
        G->cap_edge = cap;
    }
    G->esrc[G->n_edge] = u;
    G->edst[G->n_edge] = v;
    G->ew[G->n_edge] = w;
    G->eline[G->n_edge] = line;
    G->n_edge++;
    return DP_OK;
}

/* Skip an optional ":port[:compass]" after a node id. */
static void dot_skip_port(const dot_lex *L, int *pos)
{
    for (int k = 0; k < 2 && L->tok[*pos].type == DT_COLON && L->tok[*pos + 1].type == DT_ID; k++) *pos += 2;
}

static int pair_cmp(const void *x, const void *y)
{
    const long long a = *(const long long *)x, b = *(const long long *)y;
    return (a > b) - (a < b);
}

/* A strict digraph merges repeated edges (one edge, the last attributes); this reader keeps every
 * edge, so it refuses the file with the first repeat rather than read another graph (it read one
 * silently: a review of the eighteenth session). */
static int dot_strict_repeat(const dot_graph *G, const char *path, dp_error *err)
{
    long long *k = dp_alloc_malloc_n((size_t)G->n_edge + 1, sizeof *k);
    if (!k) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    for (int e = 0; e < G->n_edge; e++) k[e] = (long long)G->esrc[e] * DP_GRAPH_MAX_ELEMS + G->edst[e];
    qsort(k, (size_t)G->n_edge, sizeof *k, pair_cmp);
    int rc = DP_OK;
    for (int e = 1; e < G->n_edge && rc == DP_OK; e++)
        if (k[e] == k[e - 1]) {
            const int u = (int)(k[e] / DP_GRAPH_MAX_ELEMS), v = (int)(k[e] % DP_GRAPH_MAX_ELEMS);
            rc = dp_error_set(err, DP_EINVAL, "%s: a strict digraph merges the repeated edge %s -> %s, which this reader "
                              "would keep twice: remove \"strict\" or the repeat", path, G->node[u].name, G->node[v].name);
        }
    free(k);
    return rc;
}

dp_graph *dp_graph_read_dot(const char *path, dp_error *err)
{
    size_t size;
    char *text = dp_file_read_text(path, &size, err);
    if (!text) return NULL;
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    dot_lex L = {path, NULL, 0, 0, NULL, 0, 0};
    dot_graph G;
    memset(&G, 0, sizeof G);
    dot_scope *stack = NULL;
    int depth = 0, cap_stack = 0;
    int physical = 0; /* doppler_costs="flops-bytes": Weights in FLOPs and bytes */
    int strict = 0;   /* "strict digraph": repeated edges would merge; refused below */
    dot_attrs ga;     /* the graph's attributes (doppler_time_scale, _time_unit, _devices) */
    dot_attrs_clear(&ga);
    char gname[256];
    dp_graph_file_stem(gname, sizeof gname, path);
    if (dot_tokenize(&L, text, size, err) != DP_OK) goto done;
    if (dp_strmap_init(&G.ids, 64) != DP_OK) goto nomem;
    int pos = 0;
    if (dot_kw(&L, &L.tok[pos], "strict")) {
        strict = 1;
        pos++;
    }
    if (dot_kw(&L, &L.tok[pos], "graph")) {
        dp_error_set(err, DP_EINVAL, "%s:%d: an undirected graph is not a task graph (expected digraph)", path, L.tok[pos].line);
        goto done;
    }
    if (!dot_kw(&L, &L.tok[pos], "digraph")) {
        dp_error_set(err, DP_EINVAL, "%s:%d: expected \"digraph\", found %s", path, L.tok[pos].line,
                     L.tok[pos].type == DT_ID ? L.arena + L.tok[pos].str : dot_ttype_name(L.tok[pos].type));
        goto done;
    }
    pos++;
    if (L.tok[pos].type == DT_ID) {
        snprintf(gname, sizeof gname, "%s", L.arena + L.tok[pos].str);
        pos++;
    }
    if (L.tok[pos].type != DT_LBRACE) {
        dp_error_set(err, DP_EINVAL, "%s:%d: expected '{', found %s", path, L.tok[pos].line, dot_ttype_name(L.tok[pos].type));
        goto done;
    }
    pos++;
    cap_stack = 8;
    stack = dp_alloc_malloc((size_t)cap_stack * sizeof *stack);
    if (!stack) goto nomem;
    stack[0].node_w = stack[0].edge_w = NAN;
    stack[0].node_kind = stack[0].node_op_type = stack[0].node_einsum = NULL;
    stack[0].node_ndim = 0;
    depth = 1;
    while (depth > 0) {
        const dot_tok *t = &L.tok[pos];
        dot_scope *sc = &stack[depth - 1];
        dot_attrs a;
        if (t->type == DT_EOF) { dp_error_set(err, DP_EINVAL, "%s:%d: truncated file: missing '}'", path, t->line); goto done; }
        if (t->type == DT_RBRACE) { depth--; pos++; continue; }
        if (t->type == DT_SEMI || t->type == DT_COMMA) { pos++; continue; }
        if (t->type == DT_LBRACE || dot_kw(&L, t, "subgraph")) {
            /* a subgraph: a scope for defaults; its nodes and edges are the graph's */
            if (t->type != DT_LBRACE) {
                pos++;
                if (L.tok[pos].type == DT_ID) pos++;
                if (L.tok[pos].type != DT_LBRACE) {
                    dp_error_set(err, DP_EINVAL, "%s:%d: expected '{' after subgraph", path, L.tok[pos].line);
                    goto done;
                }
            }
            pos++;
            if (depth == cap_stack) {
                dot_scope *p = dp_alloc_realloc(stack, (size_t)cap_stack * 2 * sizeof *p);
                if (!p) goto nomem;
                stack = p;
                cap_stack *= 2;
            }
            stack[depth] = stack[depth - 1];
            depth++;
            continue;
        }
        if ((dot_kw(&L, t, "graph") || dot_kw(&L, t, "node") || dot_kw(&L, t, "edge")) && L.tok[pos + 1].type == DT_LBRACK) {
            int is_node = dot_kw(&L, t, "node"), is_edge = dot_kw(&L, t, "edge"), is_graph = !is_node && !is_edge;
            pos++;
            if (dot_attr_list(&L, &pos, &a, err) != DP_OK) goto done;
            if (is_graph) {
                /* graph [doppler_costs=...]: the form Graphviz's tools write (it was ignored, and
                 * FLOPs read as times: a review of the eighteenth session) */
                dot_graph_attrs_take(&ga, &a);
            }
            if (is_node && a.has_weight) sc->node_w = a.weight;
            if (is_node && a.kind) sc->node_kind = a.kind;
            if (is_node && a.op_type) sc->node_op_type = a.op_type;
            if (is_node && a.einsum) sc->node_einsum = a.einsum;
            if (is_node && a.ndim) {
                sc->node_ndim = a.ndim;
                memcpy(sc->node_shape, a.shape, sizeof a.shape);
            }
            if (is_edge && a.has_weight) sc->edge_w = a.weight;
            continue;
        }
        if (t->type != DT_ID) {
            dp_error_set(err, DP_EINVAL, "%s:%d: expected a statement, found %s", path, t->line, dot_ttype_name(t->type));
            goto done;
        }
        if (L.tok[pos + 1].type == DT_EQ) {  /* graph attribute: ignored but doppler_costs */
            if (L.tok[pos + 2].type != DT_ID) {
                dp_error_set(err, DP_EINVAL, "%s:%d: expected a value after '='", path, L.tok[pos + 2].line);
                goto done;
            }
            /* doppler_costs="flops-bytes" (this project's writer, for a graph in FLOPs and bytes):
             * the Weights are FLOPs and bytes, costed by the machine, not times; and the other
             * doppler_ attributes (dot_attr_set) */
            dot_attrs one;
            dot_attrs_clear(&one);
            if (dot_attr_set(&L, &one, L.arena + t->str, L.arena + L.tok[pos + 2].str, t->line, err) != DP_OK) goto done;
            dot_graph_attrs_take(&ga, &one);
            pos += 3;
            continue;
        }
        int first = pos;
        pos++;
        dot_skip_port(&L, &pos);
        if (L.tok[pos].type == DT_DASHES) {
            dp_error_set(err, DP_EINVAL, "%s:%d: '--' is an undirected edge; task graphs use '->'", path, L.tok[pos].line);
            goto done;
        }
        if (L.tok[pos].type == DT_ARROW) {
            int start = pos;
            /* count the chain, then read the attributes, then add the edges */
            while (L.tok[pos].type == DT_ARROW) {
                pos++;
                if (L.tok[pos].type != DT_ID) {
                    dp_error_set(err, DP_EINVAL, "%s:%d: expected a node after '->'%s", path, L.tok[pos].line,
                                 L.tok[pos].type == DT_LBRACE ? " (subgraphs as edge ends are not supported)" : "");
                    goto done;
                }
                pos++;
                dot_skip_port(&L, &pos);
            }
            if (dot_attr_list(&L, &pos, &a, err) != DP_OK) goto done;
            double w = a.has_weight ? a.weight : sc->edge_w;
            if (isnan(w)) { dp_error_set(err, DP_EINVAL, "%s:%d: edge from %s has no Weight", path, t->line, L.arena + t->str); goto done; }
            int u = dot_node_of(&L, &G, &L.tok[first], sc);
            if (u < 0) goto nomem;
            for (int q = start; q < pos && L.tok[q].type == DT_ARROW;) {
                q++;
                int v = dot_node_of(&L, &G, &L.tok[q], sc);
                if (v < 0) goto nomem;
                if (dot_add_edge(&G, u, v, w, L.tok[q].line) != DP_OK) goto nomem;
                u = v;
                q++;
                while (q < pos && L.tok[q].type == DT_COLON) q += 2;
            }
            continue;
        }
        if (dot_attr_list(&L, &pos, &a, err) != DP_OK) goto done;
        int v = dot_node_of(&L, &G, t, sc);
        if (v < 0) goto nomem;
        if (a.has_weight) G.node[v].weight = a.weight;
        if (a.has_out_bytes) G.node[v].out_bytes = a.out_bytes;
        if (a.kind) G.node[v].kind = a.kind;
        if (a.op_type) G.node[v].op_type = a.op_type;
        if (a.einsum) G.node[v].einsum = a.einsum;
        if (a.ndim) {
            G.node[v].ndim = a.ndim;
            memcpy(G.node[v].shape, a.shape, sizeof a.shape);
        }
    }
    physical = ga.costs && strcmp(ga.costs, "flops-bytes") == 0;
    if (L.tok[pos].type != DT_EOF) {
        dp_error_set(err, DP_EINVAL, "%s:%d: unexpected %s after the graph's closing '}'", path, L.tok[pos].line,
                     dot_ttype_name(L.tok[pos].type));
        goto done;
    }
    if (G.n_node == 0) { dp_error_set(err, DP_EINVAL, "%s: the graph has no nodes", path); goto done; }
    if (strict && dot_strict_repeat(&G, path, err) != DP_OK) goto done;
    b = dp_graph_builder_alloc(gname, path, physical ? DP_GRAPH_COST_PHYSICAL : DP_GRAPH_COST_TIME);
    if (!b) goto nomem;
    if (ga.devices > 0) dp_graph_builder_set_devices(b, ga.devices);
    if (!isnan(ga.time_scale) || ga.time_unit) {
        if (dp_graph_builder_set_time_unit(b, isnan(ga.time_scale) ? 1 : ga.time_scale, ga.time_unit ? ga.time_unit : "time units") !=
            DP_OK)
            goto nomem;
    }
    for (int i = 0; i < G.n_node; i++) {
        if (isnan(G.node[i].weight)) {
            dp_error_set(err, DP_EINVAL, "%s:%d: node %s has no Weight", path, G.node[i].line, G.node[i].name);
            goto done;
        }
        const int id = dp_graph_builder_add_op(b, G.node[i].name, G.node[i].kind ? G.node[i].kind : "task", G.node[i].weight,
                                               isnan(G.node[i].out_bytes) ? 0 : G.node[i].out_bytes);
        if (id < 0) goto nomem;
        if ((G.node[i].op_type || G.node[i].einsum || G.node[i].ndim) &&
            dp_graph_builder_set_op_info(b, id, G.node[i].op_type, G.node[i].einsum, G.node[i].ndim, G.node[i].shape) != DP_OK)
            goto nomem;
    }
    for (int e = 0; e < G.n_edge; e++)
        if (dp_graph_builder_add_edge(b, G.esrc[e], G.edst[e], G.ew[e]) < 0) goto nomem;
    g = dp_graph_builder_finish(b, err);
    /* an op without out_bytes (a DOT file from elsewhere, or written before 2026-12-06): its
     * largest out-edge */
    if (g)
        for (int v = 0; v < g->n_ops; v++) {
            if (!isnan(G.node[v].out_bytes)) continue;
            double m = 0;
            for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
                if (g->edge_size[e] > m) m = g->edge_size[e];
            g->out_size[v] = m;
        }
    goto done;
nomem:
    dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
done:
    free(stack);
    free(G.node);
    free(G.esrc); free(G.edst); free(G.eline); free(G.ew);
    dp_strmap_free(&G.ids);
    free(L.tok);
    free(L.arena);
    dp_graph_builder_free(b);
    free(text);
    return g;
}

/* ---------------- writer ---------------- */

/* x as a DOT ID: a numeral where dp_json_fmt_exact's text is one ([-](.[0-9]+|[0-9]+(.[0-9]*)?)), else
 * quoted ("1e+12", "2.072e-06": DOT numerals have no exponent, and the reader refused the graph
 * the writer had written: a helper's report; attribute values read through strtod either way) */
static const char *dot_num(double x, char *buf, size_t cap)
{
    char t[32];
    dp_json_fmt_exact(x, t, sizeof t);
    if (strpbrk(t, "eEnNiI")) snprintf(buf, cap, "\"%.32s\"", t);
    else snprintf(buf, cap, "%s", t);
    return buf;
}

/* s as a DOT quoted string. DOT's only escape in a quoted string is \" (a backslash before anything
 * else stays, and a newline is itself): it escaped \ as \\ and a newline as \n, which the
 * reader, as DOT says, kept as two characters (a review of the eighteenth session). A string that
 * ends in a backslash, or has one before a newline, cannot be written (dot_writable). */
static void dot_quoted_body(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"') fputc('\\', f);
        fputc(*s, f);
    }
}

static void dot_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    dot_quoted_body(f, s);
    fputc('"', f);
}

/* s can be a DOT quoted string read back as itself, by this reader and by Graphviz (which both
 * take two backslashes as a pair): no odd run of backslashes before a quote (written \\\", the
 * run's last backslash and the quote's escape made a pair, and the quote ended the string:
 * Graphviz failed on a\\"b: a review), before a line end (a line continuation) or at its end
 * (it would escape the closing quote) */
static int dot_writable(const char *s)
{
    size_t run = 0;
    for (; ; s++) {
        if (*s == '\\') {
            run++;
            continue;
        }
        if ((run & 1) && (*s == '"' || *s == '\n' || *s == '\r' || *s == '\0')) return 0;
        run = 0;
        if (!*s) return 1;
    }
}

static void dot_write_node(FILE *f, const dp_graph *g, int v, const char *color)
{
    char w[48], lab[64];
    fprintf(f, "  ");
    dot_quoted(f, g->op_name[v]);
    fprintf(f, " [label=");
    /* the label in the printed unit (a DOPPLER file's op of 1e12 file units is 100 DOPPLER units;
     * it said "1e+12 DOPPLER units") */
    if (g->cost_kind == DP_GRAPH_COST_PHYSICAL) snprintf(lab, sizeof lab, "%.4g FLOPs", g->work[v]);
    else snprintf(lab, sizeof lab, "%.4g %s", g->work[v] / g->time_scale, g->time_unit);
    fputc('"', f);
    for (const char *s = g->op_name[v]; *s; s++) { if (*s == '"' || *s == '\\') fputc('\\', f); fputc(*s, f); }
    fputs("\\n", f);
    for (const char *s = g->op_kind[v]; *s; s++) { if (*s == '"' || *s == '\\') fputc('\\', f); fputc(*s, f); }
    fputs("\\n", f);
    for (const char *s = lab; *s; s++) { if (*s == '"' || *s == '\\') fputc('\\', f); fputc(*s, f); }
    fputc('"', f);
    fprintf(f, ", kind=");
    dot_quoted(f, g->op_kind[v]);
    /* the op's type, einsum and output shape, which validate's kernels read (dropped without a
     * word: a review) */
    if (g->op_type[v]) {
        fputs(", doppler_op_type=", f);
        dot_quoted(f, g->op_type[v]);
    }
    if (g->op_einsum[v]) {
        fputs(", doppler_einsum=", f);
        dot_quoted(f, g->op_einsum[v]);
    }
    if (g->op_ndim[v] > 0) {
        fputs(", doppler_shape=\"", f);
        for (int k = 0; k < g->op_ndim[v]; k++)
            fprintf(f, "%s%lld", k ? "," : "", (long long)g->op_shape[(size_t)v * DP_GRAPH_MAX_DIMS + k]);
        fputc('"', f);
    }
    char ob[48];
    fprintf(f, ", Weight=%s, out_bytes=%s, fillcolor=\"%s\"];\n", dot_num(g->work[v], w, sizeof w),
            dot_num(g->out_size[v], ob, sizeof ob), color);
}

int dp_graph_write_dot(const dp_graph *g, const char *path, const int *assignment, int n_devices, dp_error *err)
{
    /* ColorBrewer Set3: pale, distinct, readable under black text */
    static const char *palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                    "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
    const int n_pal = (int)(sizeof palette / sizeof palette[0]);
    if (assignment)
        for (int v = 0; v < g->n_ops; v++)
            if (assignment[v] < 0 || assignment[v] >= n_devices)
                return dp_error_set(err, DP_EINVAL, "%s: op %d (\"%s\"): device %d outside 0..%d", path, v, g->op_name[v],
                                    assignment[v], n_devices - 1);
#define DOT_CANNOT "a backslash (an odd run of them) at its end, before a quote or before a line end, which DOT cannot hold"
    if (!dot_writable(g->name))
        return dp_error_set(err, DP_EINVAL, "%s: the graph's name \"%s\" has " DOT_CANNOT, path, g->name);
    /* the time unit is a quoted string too (written, then refused by the reader: a review) */
    if (g->time_unit && !dot_writable(g->time_unit))
        return dp_error_set(err, DP_EINVAL, "%s: the graph's time unit \"%s\" has " DOT_CANNOT, path, g->time_unit);
    for (int v = 0; v < g->n_ops; v++) {
        const char *what[4] = {"name", "kind", "op_type", "einsum"};
        const char *str[4] = {g->op_name[v], g->op_kind[v], g->op_type[v], g->op_einsum[v]};
        for (int k = 0; k < 4; k++)
            if (str[k] && !dot_writable(str[k]))
                return dp_error_set(err, DP_EINVAL, "%s: op %d (\"%s\"): its %s \"%s\" has " DOT_CANNOT, path, v, g->op_name[v],
                                    what[k], str[k]);
    }
#undef DOT_CANNOT
    /* colour per kind, in order of first appearance */
    int *color = dp_alloc_malloc_n((size_t)g->n_ops, sizeof *color);
    dp_strmap kinds;
    if (!color || dp_strmap_init(&kinds, 16) != DP_OK) {
        free(color);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    }
    int n_kinds = 0;
    for (int v = 0; v < g->n_ops; v++) {
        int k = dp_strmap_put(&kinds, g->op_kind[v], n_kinds);
        if (k < 0) { free(color); dp_strmap_free(&kinds); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); }
        if (k == n_kinds) n_kinds++;
        color[v] = k % n_pal;
    }
    dp_strmap_free(&kinds);
    char tmp[4200];
    FILE *f = dp_file_atomic_open(path, tmp, sizeof tmp, err);
    if (!f) { free(color); return err ? err->code : DP_EIO; }
    char b1[48];
    fprintf(f, "digraph ");
    dot_quoted(f, g->name);
    fprintf(f, " {\n  graph [label=");
    /* written whole (cut at 511 bytes it could end in a backslash, which escaped the closing
     * quote, or inside a UTF-8 character: a review); the name's and unit's texts are writable */
    char counts[96];
    snprintf(counts, sizeof counts, ": %d ops, %d edges (", g->n_ops, g->n_edges);
    fputc('"', f);
    dot_quoted_body(f, g->name);
    fputs(counts, f);
    dot_quoted_body(f, g->cost_kind == DP_GRAPH_COST_PHYSICAL ? "FLOPs and bytes" : g->time_unit);
    fputs(")\"", f);
    fprintf(f, ", labelloc=t];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n");
    /* a graph in FLOPs and bytes says so, so that reading it back costs it on the machine again
     * (its Weights read as times made a matmul of 1.7e10 FLOPs a task of 1.7e10 time units and a
     * transfer of 16 MiB one of 1.7e7: the communication all but vanished) */
    if (g->cost_kind == DP_GRAPH_COST_PHYSICAL) fprintf(f, "  doppler_costs=\"flops-bytes\";\n");
    /* the printed unit and the device count the graph was made for (both were lost: a DOPPLER
     * file read back printed file units, and an 8-GPU graph defaulted to 4 devices) */
    char ts[48];
    fprintf(f, "  doppler_time_scale=%s;\n  doppler_time_unit=", dot_num(g->time_scale, ts, sizeof ts));
    dot_quoted(f, g->time_unit);
    fprintf(f, ";\n");
    if (g->devices > 0) fprintf(f, "  doppler_devices=%d;\n", g->devices);
    /* the nodes in op order, so that the file reads back with the same op ids (an assignment is
     * by index: written by cluster, they read back in another order and an assignment file
     * placed other ops, silently); then each device's cluster names its ops */
    for (int v = 0; v < g->n_ops; v++) dot_write_node(f, g, v, palette[color[v]]);
    if (assignment) {
        for (int d = 0; d < n_devices; d++) {
            fprintf(f, "  subgraph \"cluster_device%d\" {\n    label=\"device %d\";\n    style=dashed;\n", d, d);
            for (int v = 0; v < g->n_ops; v++)
                if (assignment[v] == d) {
                    fputs("    ", f);
                    dot_quoted(f, g->op_name[v]);
                    fputs(";\n", f);
                }
            fprintf(f, "  }\n");
        }
    }
    for (int e = 0; e < g->n_edges; e++) {
        fprintf(f, "  ");
        dot_quoted(f, g->op_name[g->edge_src[e]]);
        fprintf(f, " -> ");
        dot_quoted(f, g->op_name[g->edge_dst[e]]);
        fprintf(f, " [Weight=%s];\n", dot_num(g->edge_size[e], b1, sizeof b1));
    }
    fprintf(f, "}\n");
    free(color);
    if (ferror(f)) {
        const int e = errno; /* the last failed write's reason (said "write failed" alone) */
        dp_file_atomic_abort(f, tmp);
        return dp_error_set(err, DP_EIO, "%s: write failed: %s", path, strerror(e ? e : EIO));
    }
    return dp_file_atomic_commit(f, tmp, path, err);
}

static int dot_write_plain(const dp_graph *g, const char *path, dp_error *err)
{
    return dp_graph_write_dot(g, path, NULL, 0, err);
}

const dp_graph_format dp_graph_format_dot = {
    .name = "dot",
    .ext = {".dot", ".gv"},
    .read = dp_graph_read_dot,
    .write = dot_write_plain,
};
