/* dp_graph_native.c: the native JSON graph format (doc/graph-format.md): reader and writer (see
 * dp_graph.h). */
#include "dp_graph_format.h"
#include "dp_file.h"
#include "dp_json.h"
#include "dp_strmap.h"

#include <errno.h>
#include <ctype.h>
#include <locale.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int json_number(json_t *o, const char *key, double *out, int required)
{
    json_t *v = json_object_get(o, key);
    if (!v) return required ? -1 : 1;
    if (!json_is_number(v)) return -2;
    *out = json_number_value(v);
    return 0;
}

/* The reader of one native document, shared by the two ways of reading one: a tree (a
 * json_t root: dp_json_to_graph) and a document scanned a member at a time (a file:
 * dp_graph_read_json, which parses one op or edge at a time; dp_json.h dp_json_doc). Each op and
 * each edge goes through read_op and read_edge, the same code either way. */
typedef struct native_rd {
    const char *path;
    dp_error *err;
    dp_graph_builder *b;
    const char *work_key, *out_key, *edge_key;
    size_t n;             /* ops */
    double *out;          /* (n) each op's output size (0 when it gives none): an edge's default */
    unsigned char *named; /* (n) 1 when the op has a name of its own */
    /* Op names -> index, for edges that name their endpoints (a dp_strmap), built on the first
     * such edge. A scan per edge would make a file of n named ops and edges cost O(n^2) (10^5
     * ops: a minute). Ops without a name are not in it; among equal names (rejected later by the
     * builder) the lowest index is found, since dp_strmap_put keeps the first value of a key. */
    dp_strmap map;
    int map_built;
} native_rd;

static int name_index_build(native_rd *r)
{
    r->map_built = 1; /* freed by the caller from here on, even when the map is incomplete */
    if (dp_strmap_init(&r->map, r->n) != DP_OK) return DP_ENOMEM;
    for (size_t i = 0; i < r->n; i++)
        if (r->named[i] && dp_strmap_put(&r->map, dp_graph_builder_op_name(r->b, (int)i), (int)i) < 0) return DP_ENOMEM;
    return DP_OK;
}

/* 0 and *out set, or -1 index out of range, -2 unknown name, -3 wrong type, -4 out of memory */
static int edge_endpoint(json_t *v, native_rd *r, int *out)
{
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0 || (size_t)x >= r->n) return -1;
        *out = (int)x;
        return 0;
    }
    if (json_is_string(v)) {
        if (!r->map_built && name_index_build(r) != DP_OK) return -4;
        int i = dp_strmap_get(&r->map, json_string_value(v));
        if (i < 0) return -2;
        *out = i;
        return 0;
    }
    return -3;
}

/* ops[i]: DP_OK, or an error (set) */
static int read_op(json_t *op, size_t i, void *ctx)
{
    native_rd *r = ctx;
    const char *path = r->path;
    dp_error *err = r->err;
    if (!json_is_object(op)) return dp_error_set(err, DP_EINVAL, "%s: ops[%zu]: must be an object", path, i);
    json_t *jn = json_object_get(op, "name");
    json_t *jk = json_object_get(op, "kind");
    if (jn && !json_is_string(jn)) return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].name: must be a string", path, i);
    if (jk && !json_is_string(jk)) return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].kind: must be a string", path, i);
    double w = 0, o = 0;
    int rc = json_number(op, r->work_key, &w, 1);
    if (rc < 0) return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].%s: %s", path, i, r->work_key, rc == -1 ? "missing" : "must be a number");
    rc = json_number(op, r->out_key, &o, 0);
    if (rc < 0) return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].%s: must be a number", path, i, r->out_key);
    if (!isfinite(w) || w < 0) return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].%s: must be finite and non-negative, got %g", path, i, r->work_key, w);
    if (!isfinite(o) || o < 0) return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].%s: must be finite and non-negative, got %g", path, i, r->out_key, o);
    const int id = dp_graph_builder_add_op(r->b, jn ? json_string_value(jn) : NULL, jk ? json_string_value(jk) : NULL, w, o);
    if (id < 0) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    r->out[i] = o;
    r->named[i] = jn != NULL;
    json_t *jt = json_object_get(op, "op_type"), *je = json_object_get(op, "einsum"), *js = json_object_get(op, "shape");
    if (jt && !json_is_string(jt)) return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].op_type: must be a string", path, i);
    if (je && !json_is_string(je)) return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].einsum: must be a string", path, i);
    int64_t shape[DP_GRAPH_MAX_DIMS];
    int nd = 0;
    if (js) {
        if (!json_is_array(js) || json_array_size(js) > DP_GRAPH_MAX_DIMS)
            return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].shape: must be an array of at most %d positive integers", path, i, DP_GRAPH_MAX_DIMS);
        nd = (int)json_array_size(js);
        for (int k = 0; k < nd; k++) {
            json_t *x = json_array_get(js, k);
            if (!json_is_integer(x) || json_integer_value(x) <= 0)
                return dp_error_set(err, DP_EINVAL, "%s: ops[%zu].shape[%d]: must be a positive integer", path, i, k);
            shape[k] = json_integer_value(x);
        }
    }
    if (jt || je || nd)
        dp_graph_builder_set_op_info(r->b, id, jt ? json_string_value(jt) : NULL, je ? json_string_value(je) : NULL, nd, shape);
    return DP_OK;
}

/* edges[e]: DP_OK, or an error (set) */
static int read_edge(json_t *ed, size_t e, void *ctx)
{
    native_rd *r = ctx;
    const char *path = r->path;
    dp_error *err = r->err;
    if (!json_is_object(ed)) return dp_error_set(err, DP_EINVAL, "%s: edges[%zu]: must be an object", path, e);
    int s = -1, d = -1;
    const char *which[2] = {"src", "dst"};
    int *dest[2] = {&s, &d};
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(ed, which[k]);
        if (!v) return dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: missing", path, e, which[k]);
        int rr = edge_endpoint(v, r, dest[k]);
        if (rr == -4) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
        if (rr == -1) return dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: op index %lld out of range 0..%zu", path, e, which[k], (long long)json_integer_value(v), r->n ? r->n - 1 : 0);
        if (rr == -2) return dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: no op named \"%s\"", path, e, which[k], json_string_value(v));
        if (rr == -3) return dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: must be an op index or name", path, e, which[k]);
    }
    double sz = NAN;
    int rc = json_number(ed, r->edge_key, &sz, 0);
    if (rc == -2) return dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: must be a number", path, e, r->edge_key);
    if (rc == 1) sz = r->out[s];
    if (!isfinite(sz) || sz < 0) return dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: must be finite and non-negative, got %g", path, e, r->edge_key, sz);
    if (dp_graph_builder_add_edge(r->b, s, d, sz) < 0) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    return DP_OK;
}

/* ---- the fast path of a scanned document: an op or edge whose text is plain ----
 *
 * An element is read here, without Jansson, only when everything in it is plain and valid: an
 * object of at most FLAT_MAX members whose keys and string values have no escape, no control
 * character and no byte above 0x7F, whose values are strings, numbers (JSON's grammar; integers
 * of at most 18 digits) or arrays of at most DP_GRAPH_MAX_DIMS integers, with no repeated key,
 * and whose content read_op or read_edge would accept (types, finite non-negative numbers,
 * positive shape, endpoints that exist). Anything else is handed to Jansson and read_op or
 * read_edge, which give the value or the message they always have: this path decides no fault
 * and no value of its own (an integer converts as Jansson's json_integer_value, a real as its
 * strtod, with the locale's decimal point as Jansson does). */
#define FLAT_MAX 16

typedef struct flat_member {
    const char *key;
    size_t klen;
    char type;          /* 's' string, 'i' integer, 'r' real, 'a' array of integers */
    const char *s;      /* string: its bytes (not NUL-terminated) */
    size_t slen;
    double num;         /* 'i', 'r' */
    long long ival;     /* 'i' */
    int n;              /* 'a': elements */
    long long arr[DP_GRAPH_MAX_DIMS];
} flat_member;

static size_t flat_ws(const char *t, size_t n, size_t p)
{
    while (p < n && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r')) p++;
    return p;
}

/* a plain string at t[p] == '"': its end past the closing quote, or 0 */
static size_t flat_string(const char *t, size_t n, size_t p)
{
    for (p++; p < n; p++) {
        const unsigned char c = (unsigned char)t[p];
        if (c == '"') return p + 1;
        if (c == '\\' || c < 0x20 || c > 0x7F) return 0;
    }
    return 0;
}

static int flat_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* a number at t[p] (JSON's grammar): its end, or 0; *real when it has a fraction or exponent */
static size_t flat_number(const char *t, size_t n, size_t p, int *real)
{
    *real = 0;
    if (p < n && t[p] == '-') p++;
    if (p >= n || !flat_digit(t[p])) return 0;
    if (t[p] == '0') p++;
    else while (p < n && flat_digit(t[p])) p++;
    if (p < n && t[p] == '.') {
        *real = 1;
        if (++p >= n || !flat_digit(t[p])) return 0;
        while (p < n && flat_digit(t[p])) p++;
    }
    if (p < n && (t[p] == 'e' || t[p] == 'E')) {
        *real = 1;
        if (++p < n && (t[p] == '+' || t[p] == '-')) p++;
        if (p >= n || !flat_digit(t[p])) return 0;
        while (p < n && flat_digit(t[p])) p++;
    }
    return p;
}

/* the number [a, b) as Jansson reads it; 0, or 1 when Jansson would refuse it or the text is
 * longer than this path takes */
static int flat_value(const char *t, size_t a, size_t b, int real, double *num, long long *ival)
{
    char buf[64];
    if (b - a >= sizeof buf) return 1;
    memcpy(buf, t + a, b - a);
    buf[b - a] = '\0';
    if (!real) {
        if (b - a > 18 + (t[a] == '-')) return 1; /* Jansson's strtoll may overflow: its message */
        *ival = strtoll(buf, NULL, 10);
        *num = (double)*ival;
        return 0;
    }
    const char point = localeconv()->decimal_point[0];
    for (char *c = buf; *c; c++)
        if (*c == '.') *c = point;
    *num = strtod(buf, NULL);
    return isinf(*num) ? 1 : 0;
}

/* the object [0, n) of t into m (at most FLAT_MAX members): their count, or -1 when it is not
 * plain (above) */
static int flat_object(const char *t, size_t n, flat_member *m)
{
    size_t p = flat_ws(t, n, 0);
    if (p >= n || t[p] != '{') return -1;
    p = flat_ws(t, n, p + 1);
    if (p < n && t[p] == '}') return flat_ws(t, n, p + 1) == n ? 0 : -1;
    int k = 0;
    for (;;) {
        if (k == FLAT_MAX || p >= n || t[p] != '"') return -1;
        flat_member *x = &m[k];
        size_t e = flat_string(t, n, p);
        if (!e) return -1;
        x->key = t + p + 1;
        x->klen = e - p - 2;
        for (int j = 0; j < k; j++)
            if (m[j].klen == x->klen && memcmp(m[j].key, x->key, x->klen) == 0) return -1;
        p = flat_ws(t, n, e);
        if (p >= n || t[p] != ':') return -1;
        p = flat_ws(t, n, p + 1);
        if (p >= n) return -1;
        int real;
        if (t[p] == '"') {
            if (!(e = flat_string(t, n, p))) return -1;
            x->type = 's';
            x->s = t + p + 1;
            x->slen = e - p - 2;
        } else if (t[p] == '[') {
            x->type = 'a';
            x->n = 0;
            p = flat_ws(t, n, p + 1);
            if (p < n && t[p] == ']') {
                e = p + 1;
            } else {
                for (;;) {
                    if (x->n == DP_GRAPH_MAX_DIMS) return -1;
                    if (!(e = flat_number(t, n, p, &real)) || real) return -1;
                    double unused;
                    if (flat_value(t, p, e, 0, &unused, &x->arr[x->n])) return -1;
                    x->n++;
                    p = flat_ws(t, n, e);
                    if (p < n && t[p] == ']') {
                        e = p + 1;
                        break;
                    }
                    if (p >= n || t[p] != ',') return -1;
                    p = flat_ws(t, n, p + 1);
                }
            }
        } else {
            if (!(e = flat_number(t, n, p, &real))) return -1;
            x->type = real ? 'r' : 'i';
            if (flat_value(t, p, e, real, &x->num, &x->ival)) return -1;
        }
        k++;
        p = flat_ws(t, n, e);
        if (p < n && t[p] == ',') {
            p = flat_ws(t, n, p + 1);
            continue;
        }
        if (p < n && t[p] == '}') return flat_ws(t, n, p + 1) == n ? k : -1;
        return -1;
    }
}

static const flat_member *flat_get(const flat_member *m, int k, const char *key)
{
    const size_t len = strlen(key);
    for (int j = 0; j < k; j++)
        if (m[j].klen == len && memcmp(m[j].key, key, len) == 0) return &m[j];
    return NULL;
}

/* the string member as a C string in buf (cap bytes): buf, NULL when absent; *bad when it is not
 * a string or does not fit */
static const char *flat_str(const flat_member *x, char *buf, size_t cap, int *bad)
{
    if (!x) return NULL;
    if (x->type != 's' || x->slen >= cap) {
        *bad = 1;
        return NULL;
    }
    memcpy(buf, x->s, x->slen);
    buf[x->slen] = '\0';
    return buf;
}

/* ops[i] from its text: DP_OK, 1 when not plain or not valid (Jansson's path decides), or
 * DP_ENOMEM (set) */
static int fast_op(native_rd *r, const char *raw, size_t len, size_t i)
{
    flat_member m[FLAT_MAX];
    const int k = flat_object(raw, len, m);
    if (k < 0) return 1;
    const flat_member *jw = flat_get(m, k, r->work_key), *jo = flat_get(m, k, r->out_key), *js = flat_get(m, k, "shape");
    if (!jw || jw->type == 's' || jw->type == 'a' || (jo && (jo->type == 's' || jo->type == 'a'))) return 1;
    const double w = jw->num, o = jo ? jo->num : 0;
    if (!(isfinite(w) && w >= 0 && isfinite(o) && o >= 0)) return 1;
    if (js && js->type != 'a') return 1;
    int64_t shape[DP_GRAPH_MAX_DIMS];
    const int nd = js ? js->n : 0;
    for (int d = 0; d < nd; d++) {
        if (js->arr[d] <= 0) return 1;
        shape[d] = js->arr[d];
    }
    char name[512], kind[512], type[512], einsum[512];
    int bad = 0;
    const char *n = flat_str(flat_get(m, k, "name"), name, sizeof name, &bad);
    const char *kd = flat_str(flat_get(m, k, "kind"), kind, sizeof kind, &bad);
    const char *ty = flat_str(flat_get(m, k, "op_type"), type, sizeof type, &bad);
    const char *es = flat_str(flat_get(m, k, "einsum"), einsum, sizeof einsum, &bad);
    if (bad) return 1;
    const int id = dp_graph_builder_add_op(r->b, n, kd, w, o);
    if (id < 0) return dp_error_set(r->err, DP_ENOMEM, "%s: out of memory", r->path);
    r->out[i] = o;
    r->named[i] = n != NULL;
    if (ty || es || nd) dp_graph_builder_set_op_info(r->b, id, ty, es, nd, shape);
    return DP_OK;
}

/* edges[e] from its text: as fast_op */
static int fast_edge(native_rd *r, const char *raw, size_t len)
{
    flat_member m[FLAT_MAX];
    const int k = flat_object(raw, len, m);
    if (k < 0) return 1;
    const char *which[2] = {"src", "dst"};
    int end[2];
    for (int j = 0; j < 2; j++) {
        const flat_member *x = flat_get(m, k, which[j]);
        if (!x) return 1;
        if (x->type == 'i') {
            if (x->ival < 0 || (unsigned long long)x->ival >= r->n) return 1;
            end[j] = (int)x->ival;
        } else if (x->type == 's') {
            char name[512];
            int bad = 0;
            const char *s = flat_str(x, name, sizeof name, &bad);
            if (bad) return 1;
            if (!r->map_built && name_index_build(r) != DP_OK) return dp_error_set(r->err, DP_ENOMEM, "%s: out of memory", r->path);
            if ((end[j] = dp_strmap_get(&r->map, s)) < 0) return 1;
        } else {
            return 1;
        }
    }
    const flat_member *x = flat_get(m, k, r->edge_key);
    if (x && x->type != 'i' && x->type != 'r') return 1;
    const double sz = x ? x->num : r->out[end[0]];
    if (!(isfinite(sz) && sz >= 0)) return 1;
    if (dp_graph_builder_add_edge(r->b, end[0], end[1], sz) < 0) return dp_error_set(r->err, DP_ENOMEM, "%s: out of memory", r->path);
    return DP_OK;
}

/* dp_json_doc_each's callbacks: the fast path, else Jansson's value and read_op / read_edge */
static int each_op(dp_json_doc *d, json_t *elem, const char *raw, size_t len, size_t i, void *ctx)
{
    native_rd *r = ctx;
    if (elem) return read_op(elem, i, r);
    const int rc = fast_op(r, raw, len, i);
    if (rc != 1) return rc;
    json_t *v = dp_json_doc_parse(d, raw, len, r->err);
    if (!v) return DP_EINVAL;
    const int rr = read_op(v, i, r);
    json_decref(v);
    return rr;
}

static int each_edge(dp_json_doc *d, json_t *elem, const char *raw, size_t len, size_t e, void *ctx)
{
    native_rd *r = ctx;
    if (elem) return read_edge(elem, e, r);
    const int rc = fast_edge(r, raw, len);
    if (rc != 1) return rc;
    json_t *v = dp_json_doc_parse(d, raw, len, r->err);
    if (!v) return DP_EINVAL;
    const int rr = read_edge(v, e, r);
    json_decref(v);
    return rr;
}

/* The graph of a native document: its top-level members other than "ops" and "edges" as the
 * object hdr, and the two arrays from the tree root (root not NULL) or the scanned doc. */
static dp_graph *native_read(json_t *hdr, json_t *root, dp_json_doc *doc, const char *path, dp_error *err)
{
    dp_graph *g = NULL;
    native_rd r = {.path = path, .err = err};
    const int ops_type = root ? (json_object_get(root, "ops") ? (int)json_typeof(json_object_get(root, "ops")) : -1)
                              : dp_json_doc_type(doc, "ops");
    const int edges_type = root ? (json_object_get(root, "edges") ? (int)json_typeof(json_object_get(root, "edges")) : -1)
                                : dp_json_doc_type(doc, "edges");
    if (ops_type != JSON_ARRAY) { dp_error_set(err, DP_EINVAL, "%s: field \"ops\" must be an array", path); return NULL; }
    if (edges_type != -1 && edges_type != JSON_ARRAY) { dp_error_set(err, DP_EINVAL, "%s: field \"edges\" must be an array", path); return NULL; }
    const char *ck = "physical";
    json_t *jck = json_object_get(hdr, "cost_kind");
    if (jck) {
        if (!json_is_string(jck)) { dp_error_set(err, DP_EINVAL, "%s: field \"cost_kind\" must be \"physical\" or \"time\"", path); return NULL; }
        ck = json_string_value(jck);
    }
    dp_graph_cost_kind kind;
    if (strcmp(ck, "physical") == 0) kind = DP_GRAPH_COST_PHYSICAL;
    else if (strcmp(ck, "time") == 0) kind = DP_GRAPH_COST_TIME;
    else { dp_error_set(err, DP_EINVAL, "%s: field \"cost_kind\": unknown value \"%s\" (physical or time)", path, ck); return NULL; }
    r.work_key = kind == DP_GRAPH_COST_PHYSICAL ? "flops" : "time";
    r.out_key = kind == DP_GRAPH_COST_PHYSICAL ? "out_bytes" : "comm";
    r.edge_key = kind == DP_GRAPH_COST_PHYSICAL ? "bytes" : "comm";

    json_t *jname = json_object_get(hdr, "name");
    const char *gname = json_is_string(jname) ? json_string_value(jname) : NULL;
    char stem[256];
    if (!gname) {
        snprintf(stem, sizeof stem, "%s", dp_file_path_stem(path));
        char *dot = strrchr(stem, '.');
        if (dot) *dot = '\0';
        gname = stem;
    }
    r.b = dp_graph_builder_alloc(gname, path, kind);
    if (!r.b) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); return NULL; }
    double scale = 1.0;
    int rc = json_number(hdr, "time_scale", &scale, 0);
    if (rc == -2 || (rc == 0 && !(isfinite(scale) && scale > 0))) {
        dp_error_set(err, DP_EINVAL, "%s: field \"time_scale\" must be a positive number", path);
        goto done;
    }
    json_t *ju = json_object_get(hdr, "time_unit");
    if (ju && !json_is_string(ju)) { dp_error_set(err, DP_EINVAL, "%s: field \"time_unit\" must be a string", path); goto done; }
    dp_graph_builder_set_time_unit(r.b, scale, ju ? json_string_value(ju) : NULL);
    json_t *jd = json_object_get(hdr, "devices");
    if (jd && !(json_is_integer(jd) && json_integer_value(jd) >= 1 && json_integer_value(jd) <= DP_GRAPH_MAX_DEVICES)) {
        dp_error_set(err, DP_EINVAL, "%s: field \"devices\" must be an integer 1..%d (the device count the graph was made "
                     "for)", path, DP_GRAPH_MAX_DEVICES);
        goto done;
    }
    if (jd) dp_graph_builder_set_devices(r.b, (int)json_integer_value(jd));

    const long nl = root ? (long)json_array_size(json_object_get(root, "ops")) : dp_json_doc_length(doc, "ops");
    r.n = nl < 0 ? 0 : (size_t)nl;
    if (r.n > DP_GRAPH_MAX_ELEMS) { dp_error_set(err, DP_ENOMEM, "%s: %zu ops is beyond the limit", path, r.n); goto done; }
    if (!root) { /* no tree was parsed (whose own check would have refused it): the graph's */
        const long ml = edges_type == JSON_ARRAY ? dp_json_doc_length(doc, "edges") : 0;
        if (dp_graph_mem_check(path, (double)r.n, (double)(ml > 0 ? ml : 0), err) != DP_OK) goto done;
    }
    r.out = dp_alloc_calloc_n(r.n, sizeof *r.out);
    r.named = dp_alloc_calloc_n(r.n, sizeof *r.named);
    if (!r.out || !r.named) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    if (root) {
        json_t *ops = json_object_get(root, "ops");
        for (size_t i = 0; i < r.n; i++)
            if (read_op(json_array_get(ops, i), i, &r) != DP_OK) goto done;
    } else if (dp_json_doc_each(doc, "ops", each_op, &r, err) != DP_OK) {
        goto done;
    }
    if (edges_type == JSON_ARRAY) {
        const long ml = root ? (long)json_array_size(json_object_get(root, "edges")) : dp_json_doc_length(doc, "edges");
        const size_t m = ml < 0 ? 0 : (size_t)ml;
        if (m > DP_GRAPH_MAX_ELEMS) { dp_error_set(err, DP_ENOMEM, "%s: %zu edges is beyond the limit", path, m); goto done; }
        if (root) {
            json_t *edges = json_object_get(root, "edges");
            for (size_t e = 0; e < m; e++)
                if (read_edge(json_array_get(edges, e), e, &r) != DP_OK) goto done;
        } else if (dp_json_doc_each(doc, "edges", each_edge, &r, err) != DP_OK) {
            goto done;
        }
    }
    g = dp_graph_builder_finish(r.b, err);
done:
    if (r.map_built) dp_strmap_free(&r.map);
    free(r.out);
    free(r.named);
    dp_graph_builder_free(r.b);
    return g;
}

/* The native graph of a scanned document, op by op (no tree of the whole file). Any fault but
 * memory's is then named by the tree's reader instead, so a file gives the same message either
 * way, whatever part of it is bad (the tree's parse reports a syntax fault anywhere before any
 * fault of content). */
static dp_graph *native_from_doc(dp_json_doc *doc, const char *path, dp_error *err)
{
    static const char *const skip[] = {"ops", "edges", NULL};
    dp_graph *g = NULL;
    json_t *hdr = dp_json_doc_is_object(doc) ? dp_json_doc_members(doc, skip, err) : NULL;
    if (hdr) g = native_read(hdr, NULL, doc, path, err);
    json_decref(hdr);
    if (g || (err && err->code == DP_ENOMEM)) return g;
    dp_json_arena *arena;
    json_t *root = dp_json_doc_tree(doc, &arena, err);
    if (!root) return NULL;
    g = dp_json_to_graph(root, path, err);
    dp_json_scoped_free(root, arena);
    return g;
}

dp_graph *dp_graph_read_json(const char *path, dp_error *err)
{
    dp_json_doc *doc = dp_json_doc_open(path, err);
    if (!doc) return NULL;
    dp_graph *g = native_from_doc(doc, path, err);
    dp_json_doc_close(doc);
    return g;
}

dp_graph *dp_json_to_graph(json_t *root, const char *path, dp_error *err)
{
    if (!json_is_object(root)) { dp_error_set(err, DP_EINVAL, "%s: the top level must be a JSON object", path); return NULL; }
    return native_read(root, root, NULL, path, err);
}

/* o[key] = v (stolen), 1 when Jansson could not allocate (v NULL, or the member) */
static int put(json_t *o, const char *key, json_t *v)
{
    return !v || json_object_set_new(o, key, v) != 0;
}

/* The pieces of a graph's native JSON, each a new value (NULL when a Jansson allocation failed):
 * the top-level members before "ops", op i, edge e. dp_json_from_graph puts them in one tree;
 * dp_graph_write_json writes them one at a time. */
static json_t *header_json(const dp_graph *g)
{
    /* every Jansson allocation is checked: a failed one gives NULL, never a file without the
     * member (json_*_set_new frees the value it could not store) */
    const int phys = g->cost_kind == DP_GRAPH_COST_PHYSICAL;
    json_t *root = json_object();
    if (!root) return NULL;
    const int bad = put(root, "format", json_string("doppler-graph")) || put(root, "version", json_integer(1)) ||
                    put(root, "name", json_string(g->name)) || put(root, "cost_kind", json_string(phys ? "physical" : "time")) ||
                    put(root, "time_scale", dp_json_number(g->time_scale)) || put(root, "time_unit", json_string(g->time_unit)) ||
                    (g->devices > 0 && put(root, "devices", json_integer(g->devices)));
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

static json_t *op_json(const dp_graph *g, int i)
{
    const int phys = g->cost_kind == DP_GRAPH_COST_PHYSICAL;
    json_t *o = json_object();
    if (!o) return NULL;
    int bad = put(o, "name", json_string(g->op_name[i])) || put(o, "kind", json_string(g->op_kind[i])) ||
              put(o, phys ? "flops" : "time", dp_json_number(g->work[i])) ||
              put(o, phys ? "out_bytes" : "comm", dp_json_number(g->out_size[i])) ||
              (g->op_type[i] && put(o, "op_type", json_string(g->op_type[i]))) ||
              (g->op_einsum[i] && put(o, "einsum", json_string(g->op_einsum[i])));
    if (!bad && g->op_ndim[i] > 0) {
        json_t *sh = json_array();
        bad = put(o, "shape", sh);
        for (int k = 0; k < g->op_ndim[i] && !bad; k++)
            bad = json_array_append_new(sh, json_integer(g->op_shape[(size_t)i * DP_GRAPH_MAX_DIMS + k])) != 0;
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *edge_json(const dp_graph *g, int e)
{
    const int phys = g->cost_kind == DP_GRAPH_COST_PHYSICAL;
    json_t *o = json_object();
    if (!o) return NULL;
    if (put(o, "src", json_integer(g->edge_src[e])) || put(o, "dst", json_integer(g->edge_dst[e])) ||
        put(o, phys ? "bytes" : "comm", dp_json_number(g->edge_size[e]))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *dp_json_from_graph(const dp_graph *g)
{
    json_t *root = header_json(g);
    json_t *ops = root ? json_array() : NULL;
    int bad = !root || put(root, "ops", ops);
    for (int i = 0; i < g->n_ops && !bad; i++) bad = json_array_append_new(ops, op_json(g, i)) != 0;
    json_t *edges = bad ? NULL : json_array();
    bad = bad || put(root, "edges", edges);
    for (int e = 0; e < g->n_edges && !bad; e++) bad = json_array_append_new(edges, edge_json(g, e)) != 0;
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

#define NATIVE_DUMP_FLAGS (JSON_INDENT(1) | JSON_REAL_PRECISION(17))

/* Jansson's text of piece v (consumed) at depth 2 of the document: each line indented by two
 * more spaces, as json_dumpf of the whole tree writes an element of "ops" or "edges". 0, or -1
 * (v NULL: out of memory; or a write failed). */
static int put_piece(FILE *f, json_t *v, char **buf, size_t *cap)
{
    if (!v) return -1;
    size_t n = json_dumpb(v, *buf, *cap, NATIVE_DUMP_FLAGS);
    if (n > *cap) {
        char *nb = realloc(*buf, 2 * n);
        if (!nb) {
            json_decref(v);
            return -1;
        }
        *buf = nb;
        *cap = 2 * n;
        n = json_dumpb(v, *buf, *cap, NATIVE_DUMP_FLAGS);
    }
    json_decref(v);
    if (n == 0 || n > *cap) return -1;
    const char *s = *buf, *end = s + n;
    if (fputs("  ", f) == EOF) return -1;
    for (const char *nl; (nl = memchr(s, '\n', (size_t)(end - s)));) {
        if (fwrite(s, 1, (size_t)(nl + 1 - s), f) != (size_t)(nl + 1 - s) || fputs("  ", f) == EOF) return -1;
        s = nl + 1;
    }
    return fwrite(s, 1, (size_t)(end - s), f) == (size_t)(end - s) ? 0 : -1;
}

int dp_graph_write_json(const dp_graph *g, const char *path, dp_error *err)
{
    /* The text json_dumpf(dp_json_from_graph(g), JSON_INDENT(1) | JSON_REAL_PRECISION(17)) gives,
     * byte for byte (tests/test_models.c json_writer_same_as_tree), written a piece at a time:
     * Jansson formats the header and each op and edge, and no tree of the whole graph is held
     * (99,774 ops: 270 MiB peak with the tree). */
    json_t *hdr = header_json(g);
    char *h = hdr ? json_dumps(hdr, NATIVE_DUMP_FLAGS) : NULL;
    json_decref(hdr);
    const size_t hn = h ? strlen(h) : 0;
    if (!h || hn < 2 || h[hn - 1] != '}' || h[hn - 2] != '\n') {
        free(h);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory building the JSON text of graph %s", path, g->name);
    }
    char tmp[4200];
    FILE *f = dp_file_atomic_open(path, tmp, sizeof tmp, err);
    if (!f) {
        free(h);
        return err ? err->code : DP_EIO;
    }
    size_t cap = 4096;
    char *buf = malloc(cap);
    int bad = !buf || fwrite(h, 1, hn - 2, f) != hn - 2 || fputs(",\n \"ops\": [", f) == EOF;
    free(h);
    for (int i = 0; i < g->n_ops && !bad; i++)
        bad = fputs(i ? ",\n" : "\n", f) == EOF || put_piece(f, op_json(g, i), &buf, &cap) != 0;
    bad = bad || fputs(g->n_ops ? "\n ],\n \"edges\": [" : "],\n \"edges\": [", f) == EOF;
    for (int e = 0; e < g->n_edges && !bad; e++)
        bad = fputs(e ? ",\n" : "\n", f) == EOF || put_piece(f, edge_json(g, e), &buf, &cap) != 0;
    bad = bad || fputs(g->n_edges ? "\n ]\n}\n" : "]\n}\n", f) == EOF;
    free(buf);
    if (bad) {
        const int io = ferror(f), e = errno; /* the failed write's reason, before the abort's calls */
        dp_file_atomic_abort(f, tmp);
        if (io) return dp_error_set(err, DP_EIO, "%s: write failed: %s", path, strerror(e ? e : EIO));
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory building the JSON text of graph %s", path, g->name);
    }
    return dp_file_atomic_commit(f, tmp, path, err);
}

static int native_is_json(const dp_json_doc *doc)
{
    return dp_json_doc_type(doc, "ops") >= 0;
}

const dp_graph_format dp_graph_format_native = {
    .name = "native",
    .read = dp_graph_read_json,
    .write = dp_graph_write_json,
    .is_json = native_is_json,
    .from_doc = native_from_doc,
    .from_json = dp_json_to_graph,
};
