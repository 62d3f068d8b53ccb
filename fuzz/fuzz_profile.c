/* libFuzzer harness: the profile reader (dp_profile_load, machine/dp_calib.h) and the fit of an
 * accepted profile (dp_calib_fit): a refused profile or fit names the file or the device; an
 * accepted fit has finite coefficients and interference within [0, 100]. */
#include "fuzz_common.h"
#include "dp_calib.h"
#include "dp_calib_fit.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    dp_error err;
    dp_error_clear(&err);
    dp_profile *p = dp_profile_load(path, &err);
    if (!p) {
        fuzz_check_error(&err, path);
        return 0;
    }
    FUZZ_CHECK(p->n_devices >= 1 && p->n_ops >= 0 && p->n_copies >= 0 && p->n_itf >= 0);
    for (int i = 0; i < p->n_itf; i++) FUZZ_CHECK(p->itf[i].device >= 0 && p->itf[i].device < p->n_devices && p->itf[i].peers >= 1);
    dp_error_clear(&err);
    dp_calib *c = dp_calib_fit(p, &err);
    if (!c) {
        FUZZ_CHECK(err.code != DP_OK && err.msg[0] != 0);
    } else {
        for (int d = 0; d < c->n_devices; d++) {
            const dp_calib_device *dv = &c->dev[d];
            for (int k = 0; k < dv->n_ops; k++)
                FUZZ_CHECK(isfinite(dv->op[k].a_s) && isfinite(dv->op[k].b_s_per_flop) && isfinite(dv->op[k].c_s_per_byte));
            FUZZ_CHECK(dv->copy_in >= 0 && dv->copy_in <= 100 && dv->peer_busy >= 0 && dv->peer_busy <= 100);
        }
        for (int r = 0; r < c->n_routes; r++) FUZZ_CHECK(isfinite(c->route[r].latency_s) && c->route[r].bandwidth_Bps > 0);
        dp_calib_free(c);
    }
    dp_profile_free(p);
    return 0;
}
