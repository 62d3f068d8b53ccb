/* dp_costmodel.h: op and transfer times of a physical graph (FLOPs, bytes) on a topology, from a
 * calibration (machine/dp_calib.h) where one exists, else from the devices' roofline.
 *
 * Op v of kind k on device d:
 *   measured (the device lists an op of kind k with v's FLOPs and bytes in "measured"):
 *       time = its measured seconds (the graph's own op shapes, timed by the profiler: an
 *       affine fit over a sweep of sizes misses the efficiency of particular shapes, e.g. a
 *       593^3 sgemm runs 10% slower per FLOP than a 512^3 one);
 *   calibrated (the device has an entry for k, or a "default" entry):
 *       time = a_s + b_s_per_flop * FLOPs(v) + c_s_per_byte * bytes(v)
 *   otherwise the roofline (Williams, Waterman and Patterson, CACM 2009):
 *       time = max(FLOPs(v) / (peak_flops * efficiency), bytes(v) / mem_bandwidth_Bps)
 *              + launch_overhead_s
 * where bytes(v) = output bytes of v + bytes of all its in-edges (what the kernel reads and
 * writes). Each device has its own numbers, so heterogeneous machines come out as they are.
 *
 * Transfer of b bytes from a to b' alone on its route (the fixed-delay model and the dp_cost
 * tables): latency (sum over the route's links) + b * inv_bw (sum over the route's segments of
 * 1 / bottleneck bandwidth: a staged route pays both hops), or, where the calibration measured
 * the pair, its latency_s + b / bandwidth_Bps.
 *
 * The calibration (its type and file) is machine/dp_calib.h.
 */
#ifndef DP_COSTMODEL_H
#define DP_COSTMODEL_H

#include "dp_calib.h"
#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bytes(v): output bytes plus the bytes of every in-edge. */
double dp_costmodel_op_bytes(const dp_graph *g, int v);

/* Roofline time of an op of `flops` FLOPs touching `bytes` bytes on device dv (seconds). */
double dp_costmodel_roofline(const dp_topology_device *dv, double flops, double bytes);

/* The cost tables of physical graph g on topology t (n_devices = t's devices), with calibration
 * cal (may be NULL). Errors: a DP_GRAPH_COST_TIME graph (its costs are durations, not FLOPs and bytes:
 * DP_EINVAL), a calibration naming a device the topology lacks (DP_EINVAL), out of memory. */
dp_cost *dp_costmodel_costs(const dp_graph *g, const dp_topology *t, const dp_calib *cal, dp_error *err);

/* Every device and route end a calibration names is a device of topology t: DP_OK, or DP_EINVAL
 * naming the calibration's field and the missing device ("CAL: routes[2].dst: topology T has
 * no device \"gX\""; for devices also both sets of names and the profile that would match).
 * dp_costmodel_costs and the transfer models (dp_transfer.c) call it. */
int dp_costmodel_check_names(const dp_topology *t, const dp_calib *cal, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
