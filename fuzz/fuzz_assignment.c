/* libFuzzer harness: the assignment reader of the command (dp_cli_read_assignment), JSON or
 * DOPPLER's comma-separated line. The first two bytes choose the op count (1..64) and the
 * device count (1..16); the rest is the file. */
#include "fuzz_common.h"
#include "cli.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    const int n_ops = 1 + data[0] % 64, n_dev = 1 + data[1] % 16;
    const char *path = fuzz_file(data + 2, size - 2);
    int out[64], has_prio = -1;
    double prio[64];
    for (int i = 0; i < 64; i++) { out[i] = -7; prio[i] = -7.5; }
    dp_error err;
    dp_error_clear(&err);
    int rc = dp_cli_read_assignment(path, NULL, n_ops, n_dev, out, prio, &has_prio, &err);
    if (rc != DP_OK) {
        fuzz_check_error(&err, path);
        return 0;
    }
    for (int i = 0; i < n_ops; i++) FUZZ_CHECK(out[i] >= 0 && out[i] < n_dev);
    for (int i = n_ops; i < 64; i++) FUZZ_CHECK(out[i] == -7);
    /* the priorities, when there are some: finite, one per op, nothing written past them */
    FUZZ_CHECK(has_prio == 0 || has_prio == 1);
    for (int i = 0; has_prio && i < n_ops; i++) FUZZ_CHECK(isfinite(prio[i]));
    for (int i = has_prio ? n_ops : 0; i < 64; i++) FUZZ_CHECK(prio[i] == -7.5);
    return 0;
}
