/* libFuzzer harness: the topology reader (dp_topology_load, machine/dp_topology.h). An accepted
 * topology must have a route between every pair of devices, and the cost model built on it for
 * a small physical graph must give finite, non-negative costs. */
#include "fuzz_common.h"
#include "dp_costmodel.h"
#include "dp_topology.h"

static dp_graph *small_graph(void)
{
    dp_graph_builder *b = dp_graph_builder_alloc("fz", "fz", DP_GRAPH_COST_PHYSICAL);
    dp_graph_builder_add_op(b, "a", "matmul", 2e9, 4e6);
    dp_graph_builder_add_op(b, "b", "add", 1e6, 4e6);
    dp_graph_builder_add_op(b, "c", "matmul", 2e9, 8e6);
    dp_graph_builder_add_edge(b, 0, 1, 4e6);
    dp_graph_builder_add_edge(b, 0, 2, 4e6);
    dp_graph_builder_add_edge(b, 1, 2, 4e6);
    dp_graph *g = dp_graph_builder_finish(b, NULL);
    dp_graph_builder_free(b);
    return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static dp_graph *g;
    if (!g) g = small_graph();
    const char *path = fuzz_file(data, size);
    dp_error err;
    dp_error_clear(&err);
    dp_topology *t = dp_topology_load(path, &err);
    if (!t) {
        fuzz_check_error(&err, path);
        return 0;
    }
    FUZZ_CHECK(t->n_devices > 0);
    for (int a = 0; a < t->n_devices; a++)
        for (int b = 0; b < t->n_devices; b++) {
            const dp_topology_route_info *r = dp_topology_route(t, a, b);
            if (a == b) continue;
            FUZZ_CHECK(r->n_hops > 0 && r->seg_end > r->seg_begin);
            FUZZ_CHECK(isfinite(r->latency_s) && r->latency_s >= 0);
            FUZZ_CHECK(r->inv_bw >= 0 && !isnan(r->inv_bw));
        }
    dp_cost *c = dp_costmodel_costs(g, t, NULL, &err);
    if (c) {
        for (size_t k = 0; k < (size_t)g->n_ops * c->n_devices; k++)
            FUZZ_CHECK(c->op_time[k] >= 0 && !isnan(c->op_time[k]));
        dp_cost_free(c);
    }
    dp_topology_free(t);
    return 0;
}
