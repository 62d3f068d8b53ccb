/* libFuzzer harness: dp_graph_read_wfcommons (models/dp_graph_formats.h), at the default
 * bandwidth. */
#include "fuzz_common.h"
#include "dp_graph_formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = dp_graph_read_wfcommons(path, DP_GRAPH_WFCOMMONS_BANDWIDTH_BPS, &err);
    if (!g) {
        fuzz_check_error(&err, path);
        return 0;
    }
    fuzz_check_accepted_graph(g);
    dp_graph_free(g);
    return 0;
}
