/* libFuzzer harness: the heterogeneous task-graph reader of the .in format (dp_hetero_read_in,
 * machine/dp_hetero.h): graph and cost tables, then placement and simulation under those costs. */
#include "fuzz_common.h"
#include "dp_hetero.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = NULL;
    dp_cost *c = NULL;
    if (dp_hetero_read_in(path, &g, &c, &err) != DP_OK) {
        FUZZ_CHECK(g == NULL && c == NULL);
        fuzz_check_error(&err, path);
        return 0;
    }
    fuzz_check_graph(g);
    fuzz_check_costs_pipeline(g, c);
    dp_cost_free(c);
    dp_graph_free(g);
    return 0;
}
