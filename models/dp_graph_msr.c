/* dp_graph_msr.c: the reader of the msr-fiddle/dnn-partitioning profiled DNN graphs (see
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

static int cmp_id_index(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Index of node id in the sorted (id, index) pairs, or -1. */
static int msr_lookup(const long long *pairs, int n, long long id)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (pairs[2 * mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && pairs[2 * lo] == id ? (int)pairs[2 * lo + 1] : -1;
}

/* A JSON number or boolean as 0/1 (the files use both for flags). */
static int json_flag(json_t *v, int dflt)
{
    if (!v) return dflt;
    if (json_is_boolean(v)) return json_is_true(v);
    if (json_is_number(v)) return json_number_value(v) != 0;
    return -1;
}

static dp_graph *msr_from_json(json_t *root, const char *path, dp_error *err)
{
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    long long *pairs = NULL;
    dp_strmap names = {0};
    char **owned = NULL;
    json_t *nodes = json_object_get(root, "nodes"), *edges = json_object_get(root, "edges");
    if (!json_is_array(nodes)) { dp_error_set(err, DP_EINVAL, "%s: field \"nodes\" must be an array", path); return NULL; }
    if (!json_is_array(edges)) { dp_error_set(err, DP_EINVAL, "%s: field \"edges\" must be an array", path); return NULL; }
    size_t nn = json_array_size(nodes), ne = json_array_size(edges);
    if (nn == 0) { dp_error_set(err, DP_EINVAL, "%s: the graph has no nodes", path); return NULL; }
    if (nn > DP_GRAPH_MAX_ELEMS || ne > DP_GRAPH_MAX_ELEMS) { dp_error_set(err, DP_ENOMEM, "%s: graph beyond the size limit", path); return NULL; }
    int n = (int)nn;
    pairs = dp_alloc_malloc_n(2 * nn, sizeof *pairs);
    owned = dp_alloc_calloc(nn, sizeof *owned);
    if (!pairs || !owned || dp_strmap_init(&names, nn) != DP_OK) goto nomem;
    for (int i = 0; i < n; i++) {
        json_t *o = json_array_get(nodes, i);
        json_t *id = json_is_object(o) ? json_object_get(o, "id") : NULL;
        if (!json_is_integer(id)) { dp_error_set(err, DP_EINVAL, "%s: nodes[%d].id: missing or not an integer", path, i); goto done; }
        pairs[2 * i] = json_integer_value(id);
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, nn, 2 * sizeof *pairs, cmp_id_index);
    for (int i = 1; i < n; i++)
        if (pairs[2 * i] == pairs[2 * i - 2]) {
            dp_error_set(err, DP_EINVAL, "%s: nodes[%lld].id: id %lld is used by nodes[%lld] too", path, pairs[2 * i + 1],
                         pairs[2 * i], pairs[2 * i - 1]);
            goto done;
        }
    {
        char stem[256];
        dp_graph_file_stem(stem, sizeof stem, path);
        b = dp_graph_builder_alloc(stem, path, DP_GRAPH_COST_TIME);
        if (!b) goto nomem;
        dp_graph_builder_set_time_unit(b, 1.0, "ms (profiled)");
    }
    for (int i = 0; i < n; i++) {
        json_t *o = json_array_get(nodes, i);
        json_t *lat = json_object_get(o, "fpgaLatency");
        if (!json_is_number(lat) || !(json_number_value(lat) >= 0) || !isfinite(json_number_value(lat))) {
            dp_error_set(err, DP_EINVAL, "%s: nodes[%d].fpgaLatency: %s", path, i,
                         json_is_number(lat) ? "must be finite and non-negative" : "missing or not a number");
            goto done;
        }
        json_t *cl = json_object_get(o, "cpuLatency");
        if (cl && !json_is_number(cl)) { dp_error_set(err, DP_EINVAL, "%s: nodes[%d].cpuLatency: must be a number", path, i); goto done; }
        int fpga = json_flag(json_object_get(o, "supportedOnFpga"), 1);
        int bwd = json_flag(json_object_get(o, "isBackwardNode"), 0);
        if (fpga < 0 || bwd < 0) {
            dp_error_set(err, DP_EINVAL, "%s: nodes[%d].%s: must be a boolean or 0/1", path, i, fpga < 0 ? "supportedOnFpga" : "isBackwardNode");
            goto done;
        }
        const char *nm = dp_graph_json_str(o, "name");
        long long id = json_integer_value(json_object_get(o, "id"));
        if (!nm) {
            owned[i] = dp_alloc_malloc(32);
            if (!owned[i]) goto nomem;
            snprintf(owned[i], 32, "node%lld", id);
            nm = owned[i];
        }
        int r = dp_strmap_put(&names, nm, i);
        if (r < 0) goto nomem;
        if (r != i) {
            /* a repeated name: made unique with the id (the builder rejects any clash left) */
            size_t len = strlen(nm) + 32;
            char *uniq = dp_alloc_malloc(len);
            if (!uniq) goto nomem;
            snprintf(uniq, len, "%s#%lld", nm, id);
            free(owned[i]);
            owned[i] = uniq;
            nm = uniq;
            if (dp_strmap_put(&names, nm, i) < 0) goto nomem;
        }
        int op = dp_graph_builder_add_op(b, nm, bwd ? "backward" : "forward", json_number_value(lat), 0);
        if (op < 0) goto nomem;
        if (!fpga) dp_graph_builder_set_op_info(b, op, "cpu-only", NULL, 0, NULL);
    }
    for (size_t e = 0; e < ne; e++) {
        json_t *o = json_array_get(edges, e);
        if (!json_is_object(o)) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu]: must be an object", path, e); goto done; }
        const char *key[2] = {"sourceId", "destId"};
        int end[2];
        for (int k = 0; k < 2; k++) {
            json_t *v = json_object_get(o, key[k]);
            if (!json_is_integer(v)) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: missing or not an integer", path, e, key[k]); goto done; }
            end[k] = msr_lookup(pairs, n, json_integer_value(v));
            if (end[k] < 0) {
                dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: no node with id %lld", path, e, key[k], (long long)json_integer_value(v));
                goto done;
            }
        }
        json_t *c = json_object_get(o, "cost");
        if (!json_is_number(c) || !(json_number_value(c) >= 0) || !isfinite(json_number_value(c))) {
            dp_error_set(err, DP_EINVAL, "%s: edges[%zu].cost: must be a finite non-negative number", path, e);
            goto done;
        }
        if (dp_graph_builder_add_edge(b, end[0], end[1], json_number_value(c)) < 0) goto nomem;
    }
    g = dp_graph_builder_finish(b, err);
    if (g) dp_graph_out_size_from_edges(g);
    goto done;
nomem:
    dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
done:
    if (owned) for (size_t i = 0; i < nn; i++) free(owned[i]);
    free(owned);
    free(pairs);
    dp_strmap_free(&names);
    dp_graph_builder_free(b);
    return g;
}

dp_graph *dp_graph_read_msr(const char *path, dp_error *err)
{
    dp_json_arena *arena;
    json_t *root = dp_json_load_scoped(path, &arena, err);
    if (!root) return NULL;
    dp_graph *g = NULL;
    if (!json_is_object(root)) dp_error_set(err, DP_EINVAL, "%s: the top level must be a JSON object", path);
    else g = msr_from_json(root, path, err);
    dp_json_scoped_free(root, arena);
    return g;
}

static int msr_is_json(const dp_json_doc *doc)
{
    return dp_json_doc_type(doc, "nodes") >= 0 && dp_json_doc_type(doc, "edges") >= 0 && dp_json_doc_type(doc, "ops") < 0;
}

const dp_graph_format dp_graph_format_msr = {
    .name = "msr",
    .read = dp_graph_read_msr,
    .is_json = msr_is_json,
    .from_json = msr_from_json,
};
