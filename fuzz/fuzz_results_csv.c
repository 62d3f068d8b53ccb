/* libFuzzer harness: the sweep results CSV reader (dp_results_read_csv, experiments/results.h),
 * which a resumed sweep uses to recover the runs done before a kill: a torn last line is
 * dropped (nothing else: a malformed line elsewhere is an error) and the complete part's length
 * is within the file. */
#include "fuzz_common.h"
#include "results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    dp_error err;
    dp_error_clear(&err);
    dp_result *rows = NULL;
    long n = -1, good = -1;
    if (dp_results_read_csv(path, &rows, &n, &good, &err) != DP_OK) {
        FUZZ_CHECK(err.msg[0] != '\0');
        return 0;
    }
    FUZZ_CHECK(n >= 0 && good >= 0 && (size_t)good <= size);
    /* only a last line without a final newline is dropped: a file that ends with one is whole */
    FUZZ_CHECK((size_t)good == size || data[size - 1] != '\n');
    for (long i = 0; i < n; i++) dp_result_free(&rows[i]);
    free(rows);
    return 0;
}
