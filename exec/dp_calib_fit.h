/* dp_calib_fit.h: fitting a calibration (machine/dp_calib.h) to a profile measured on the
 * machine (dp_profile.h).
 *
 * The fit belongs with the profiler in exec/: the calibration type in machine/ is what the cost
 * model reads, and knows nothing of how it was measured (the layers: exec/ depends on machine/,
 * never the other way). The model and the fit's rules are dp_calib.h's.
 */
#ifndef DP_CALIB_FIT_H
#define DP_CALIB_FIT_H

#include "dp_calib.h"
#include "dp_error.h"
#include "dp_profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fit the model to a profile (above). Two samples of a two-term model (a route's latency +
 * bytes / bandwidth; a memory-bound kind's {1, bytes}) are fitted exactly by the line through
 * them when both coefficients are >= 0. A route whose copy times do not grow with size gets
 * bandwidth DP_CALIB_BANDWIDTH_CAP (unmeasured). Errors: a device or route without usable samples
 * (DP_EINVAL). The fit is returned even when a part of it failed (dp_calib_op_fit_failed,
 * dp_calib_route_fit_failed say which): the caller decides. */
dp_calib *dp_calib_fit(const dp_profile *p, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
