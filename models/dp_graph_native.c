/* dp_graph_native.c: the native JSON graph format (doc/graph-format.md): reader and writer (see
 * dp_graph.h). */
#include "dp_graph_format.h"
#include "dp_file.h"
#include "dp_json.h"
#include "dp_strmap.h"

#include <ctype.h>
#include <errno.h>
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

/* Op names -> index, for edges that name their endpoints (a dp_strmap), built on the first such
 * edge. A scan per edge would make a file of n named ops and edges cost O(n^2) (10^5 ops: a
 * minute). Ops without a name are not in it; among equal names (rejected later by the builder)
 * the lowest index is found, since dp_strmap_put keeps the first value of a key. */
typedef struct name_index {
    dp_strmap map;
    int built;
} name_index;

static int name_index_build(name_index *ix, const char **names, size_t n)
{
    ix->built = 1;   /* freed by the caller from here on, even when the map is incomplete */
    if (dp_strmap_init(&ix->map, n) != DP_OK) return DP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (names[i] && dp_strmap_put(&ix->map, names[i], (int)i) < 0) return DP_ENOMEM;
    return DP_OK;
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
        if (!ix->built && name_index_build(ix, names, (size_t)n) != DP_OK) return -4;
        int i = dp_strmap_get(&ix->map, json_string_value(v));
        if (i < 0) return -2;
        *out = i;
        return 0;
    }
    return -3;
}

dp_graph *dp_graph_read_json(const char *path, dp_error *err)
{
    dp_json_arena *arena;
    json_t *root = dp_json_load_scoped(path, &arena, err);
    if (!root) return NULL;
    dp_graph *g = dp_json_to_graph(root, path, err);
    dp_json_scoped_free(root, arena);
    return g;
}

dp_graph *dp_json_to_graph(json_t *root, const char *path, dp_error *err)
{
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    const char **names = NULL;
    name_index ix = {.built = 0};
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
    dp_graph_cost_kind kind;
    if (strcmp(ck, "physical") == 0) kind = DP_GRAPH_COST_PHYSICAL;
    else if (strcmp(ck, "time") == 0) kind = DP_GRAPH_COST_TIME;
    else { dp_error_set(err, DP_EINVAL, "%s: field \"cost_kind\": unknown value \"%s\" (physical or time)", path, ck); return NULL; }
    const char *work_key = kind == DP_GRAPH_COST_PHYSICAL ? "flops" : "time";
    const char *out_key = kind == DP_GRAPH_COST_PHYSICAL ? "out_bytes" : "comm";
    const char *edge_key = kind == DP_GRAPH_COST_PHYSICAL ? "bytes" : "comm";

    json_t *jname = json_object_get(root, "name");
    const char *gname = json_is_string(jname) ? json_string_value(jname) : NULL;
    char stem[256];
    if (!gname) {
        snprintf(stem, sizeof stem, "%s", dp_file_path_stem(path));
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
    names = dp_alloc_calloc_n(n, sizeof *names);
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
        int64_t shape[DP_GRAPH_MAX_DIMS];
        int nd = 0;
        if (js) {
            if (!json_is_array(js) || json_array_size(js) > DP_GRAPH_MAX_DIMS) {
                dp_error_set(err, DP_EINVAL, "%s: ops[%zu].shape: must be an array of at most %d positive integers", path, i, DP_GRAPH_MAX_DIMS);
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
    if (ix.built) dp_strmap_free(&ix.map);
    free(names);
    dp_graph_builder_free(b);
    return g;
}

/* o[key] = v (stolen), 1 when Jansson could not allocate (v NULL, or the member) */
static int put(json_t *o, const char *key, json_t *v)
{
    return !v || json_object_set_new(o, key, v) != 0;
}

json_t *dp_json_from_graph(const dp_graph *g)
{
    /* every Jansson allocation is checked: a failed one gives NULL, never a file without the
     * member (json_*_set_new frees the value it could not store) */
    const int phys = g->cost_kind == DP_GRAPH_COST_PHYSICAL;
    json_t *root = json_object();
    if (!root) return NULL;
    int bad = put(root, "format", json_string("doppler-graph")) || put(root, "version", json_integer(1)) ||
              put(root, "name", json_string(g->name)) || put(root, "cost_kind", json_string(phys ? "physical" : "time")) ||
              put(root, "time_scale", dp_json_number(g->time_scale)) || put(root, "time_unit", json_string(g->time_unit)) ||
              (g->devices > 0 && put(root, "devices", json_integer(g->devices)));
    json_t *ops = bad ? NULL : json_array();
    bad |= put(root, "ops", ops);
    for (int i = 0; i < g->n_ops && !bad; i++) {
        json_t *o = json_object();
        if (!o || json_array_append_new(ops, o) != 0) { bad = 1; break; }
        bad = put(o, "name", json_string(g->op_name[i])) || put(o, "kind", json_string(g->op_kind[i])) ||
              put(o, phys ? "flops" : "time", dp_json_number(g->work[i])) ||
              put(o, phys ? "out_bytes" : "comm", dp_json_number(g->out_size[i])) ||
              (g->op_type[i] && put(o, "op_type", json_string(g->op_type[i]))) ||
              (g->op_einsum[i] && put(o, "einsum", json_string(g->op_einsum[i])));
        if (!bad && g->op_ndim[i] > 0) {
            json_t *s = json_array();
            bad = put(o, "shape", s);
            for (int k = 0; k < g->op_ndim[i] && !bad; k++)
                bad = json_array_append_new(s, json_integer(g->op_shape[(size_t)i * DP_GRAPH_MAX_DIMS + k])) != 0;
        }
    }
    json_t *edges = bad ? NULL : json_array();
    bad |= put(root, "edges", edges);
    for (int e = 0; e < g->n_edges && !bad; e++) {
        json_t *o = json_object();
        if (!o || json_array_append_new(edges, o) != 0) { bad = 1; break; }
        bad = put(o, "src", json_integer(g->edge_src[e])) || put(o, "dst", json_integer(g->edge_dst[e])) ||
              put(o, phys ? "bytes" : "comm", dp_json_number(g->edge_size[e]));
    }
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

double dp_json_graph_bytes(const dp_graph *g)
{
    /* Jansson's tree: an object (DP_JSON_BYTES_PER_OBJECT) and about 100 bytes per member (key,
     * value, table entry); an op has up to 6 members and a shape array, an edge 3 (measured:
     * 167,400 ops and 297,000 edges of chainmm --blocks 30 take about 360 MB) */
    const double per_member = 100, per_elem = 40;
    const double op = DP_JSON_BYTES_PER_OBJECT + 6 * per_member + DP_JSON_BYTES_PER_ARRAY + DP_GRAPH_MAX_DIMS * per_elem;
    const double edge = DP_JSON_BYTES_PER_OBJECT + 3 * per_member;
    return 4096 + (double)g->n_ops * op + (double)g->n_edges * edge;
}

int dp_graph_write_json(const dp_graph *g, const char *path, dp_error *err)
{
    int rc = dp_file_mem_check(path, "writing this graph as JSON (the text's tree in memory)", dp_json_graph_bytes(g), err);
    if (rc != DP_OK) return rc;
    json_t *root = dp_json_from_graph(g);
    if (!root) return dp_error_set(err, DP_ENOMEM, "%s: out of memory building the JSON text of graph %s", path, g->name);
    rc = dp_json_dump_atomic(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17), err);
    json_decref(root);
    return rc;
}

static int native_is_json(json_t *root)
{
    return json_object_get(root, "ops") != NULL;
}

const dp_graph_format dp_graph_format_native = {
    .name = "native",
    .read = dp_graph_read_json,
    .write = dp_graph_write_json,
    .is_json = native_is_json,
    .from_json = dp_json_to_graph,
};
