/* libFuzzer harness: the heterogeneous task-graph CSV reader (dp_hetero_read_csv,
 * machine/dp_hetero.h). The input holds the three files (execution times, connectivity, rates)
 * separated by lines "%%"; with only two parts there is no rate file. */
#include "fuzz_common.h"
#include "dp_hetero.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *part[3] = {NULL, NULL, NULL};
    size_t start = 0;
    int k = 0;
    for (size_t i = 0; i + 3 <= size && k < 2; i++)
        if (data[i] == '%' && data[i + 1] == '%' && data[i + 2] == '\n' && (i == 0 || data[i - 1] == '\n')) {
            part[k] = fuzz_file_slot(k, data + start, i - start);
            k++;
            start = i + 3;
            i += 2;
        }
    part[k] = fuzz_file_slot(k, data + start, size - start);
    if (k == 0) return 0;
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = NULL;
    dp_cost *c = NULL;
    if (dp_hetero_read_csv(part[0], part[1], part[2], &g, &c, &err) != DP_OK) {
        FUZZ_CHECK(g == NULL && c == NULL);
        FUZZ_CHECK(err.msg[0] != '\0');
        return 0;
    }
    fuzz_check_graph(g);
    fuzz_check_costs_pipeline(g, c);
    dp_cost_free(c);
    dp_graph_free(g);
    return 0;
}
