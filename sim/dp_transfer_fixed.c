/* dp_transfer_fixed.c: the fixed-delay transfer model (dp_transfer.h, DP_TRANSFER_FIXED): a
 * transfer of edge e from a to b takes dp_cost_comm(e, a, b) whatever else is moving, the
 * DOPPLER-compatible model with unlimited parallel transfers. Its end is known at its start, so
 * it has no internal events and no state. */
#include "dp_transfer_model.h"

static int fixed_start(dp_transfer *x, int id, int a, int b, const dp_topology_route_info *r, double now, double *delay)
{
    (void)r;
    (void)now;
    *delay = dp_cost_comm(x->c, id, a, b);
    return 1;
}

const dp_transfer_model dp_transfer_model_fixed = {
    .name = "fixed",
    .needs_topology = 0,
    .start = fixed_start,
};
