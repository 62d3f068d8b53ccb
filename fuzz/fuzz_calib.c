/* libFuzzer harness: the calibration reader (dp_calib_load, machine/dp_costmodel.h); an accepted
 * calibration answers lookups of every device and route it names; its interference lies in
 * [0, 100]. */
#include "fuzz_common.h"
#include "dp_costmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    dp_error err;
    dp_error_clear(&err);
    dp_calib *c = dp_calib_load(path, &err);
    if (!c) {
        fuzz_check_error(&err, path);
        return 0;
    }
    FUZZ_CHECK(c->n_devices >= 0 && c->n_routes >= 0);
    for (int r = 0; r < c->n_routes; r++)
        FUZZ_CHECK(dp_calib_find_route(c, c->route[r].src, c->route[r].dst) != NULL);
    for (int d = 0; d < c->n_devices; d++) {
        (void)dp_calib_find(c, c->dev[d].name, "matmul");
        FUZZ_CHECK(c->dev[d].copy_in >= 0 && c->dev[d].copy_in <= 100 && c->dev[d].peer_busy >= 0 && c->dev[d].peer_busy <= 100);
    }
    dp_calib_free(c);
    return 0;
}
