/* dp_costmodel.h: op and transfer times of a physical graph (FLOPs, bytes) on a topology, from a
 * calibration file where one exists, else from the devices' roofline.
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
 * Transfer of b bytes from a to b' alone on its route (the fixed-delay model and the dp_costs
 * tables): latency (sum over the route's links) + b * inv_bw (sum over the route's segments of
 * 1 / bottleneck bandwidth: a staged route pays both hops), or, where the calibration measured
 * the pair, its latency_s + b / bandwidth_Bps.
 *
 * The calibration JSON (written by `doppler calibrate`, read here) is
 *   {"format": "doppler-calibration", "version": 1, "machine": "...",
 *    "devices": {"<device name>": {"ops": {"<op kind>": {"a_s": .., "b_s_per_flop": ..,
 *                                                        "c_s_per_byte": ..}, ...},
 *                                  "default": {"a_s": .., "b_s_per_flop": .., "c_s_per_byte": ..},
 *                                  "interference": {"copy_in": .., "peer_busy": ..},
 *                                  "measured": [{"kind": .., "flops": .., "bytes": .., "seconds": ..}]}},
 *    "routes": [{"src": "<device>", "dst": "<device>", "latency_s": .., "bandwidth_Bps": ..}]}
 * ("interference" is optional: the slowdowns of dp_hisim.h, each in [0, 100]; "measured" is
 * optional: finite flops, bytes >= 0 and seconds >= 0.)
 * Device names are the topology's. Coefficients are finite; a_s, b and c may be any sign a fit
 * gives, but a resulting negative time is clamped to 0.
 */
#ifndef DP_COSTMODEL_H
#define DP_COSTMODEL_H

#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_calib_affine {
    double a_s;           /* seconds */
    double b_s_per_flop;  /* seconds per FLOP */
    double c_s_per_byte;  /* seconds per byte */
} dp_calib_affine;

/* The measured time of one op as it runs in a graph (profiled by `doppler calibrate profile
 * --graph`): ops of this kind, FLOPs and bytes take `seconds` on the device, whatever the fit
 * says. Keys match to a relative 1e-9. */
typedef struct dp_calib_measured {
    char *kind;
    double flops, bytes, seconds;
} dp_calib_measured;

typedef struct dp_calib_device {
    char *name;
    int n_ops;
    char **op_kind;          /* (n_ops) */
    dp_calib_affine *op;     /* (n_ops) */
    int has_default;
    dp_calib_affine def;
    /* interference (optional "interference" object; 0 when absent), see dp_hisim.h: while k
     * copies into the device are in flight and j other devices compute, its ops progress at
     * rate 1 / (1 + copy_in x k + peer_busy x j) of their calibrated speed */
    double copy_in;    /* compute seconds lost per second of an incoming copy (a CPU device whose
                        * copy worker shares its core), >= 0 */
    double peer_busy;  /* relative slowdown per other busy device (shared memory bandwidth,
                        * caches, clock), >= 0 */
    int n_measured;
    dp_calib_measured *measured;  /* (n_measured) sorted by (kind, flops, bytes) */
} dp_calib_device;

typedef struct dp_calib_route {
    char *src, *dst;
    double latency_s, bandwidth_Bps;
} dp_calib_route;

typedef struct dp_calib {
    char *machine, *path;
    int n_devices, n_routes;
    dp_calib_device *dev;
    dp_calib_route *route;
} dp_calib;

/* Read a calibration file (format above). Errors name the file and the field (DP_EINVAL), or
 * DP_EIO. */
dp_calib *dp_calib_load(const char *path, dp_error *err);
dp_calib *dp_calib_parse(const char *text, const char *origin, dp_error *err);
void dp_calib_free(dp_calib *c);

/* The calibration's entry for `device`, or NULL (c may be NULL). */
const dp_calib_device *dp_calib_find_device(const dp_calib *c, const char *device);

/* The affine model of op kind `kind` on device `device`: its own entry, else the device's
 * default; NULL when the calibration has neither (then the roofline applies). */
const dp_calib_affine *dp_calib_find(const dp_calib *c, const char *device, const char *kind);

/* The measured seconds of an op of `kind` with `flops` and `bytes` on `device`, or -1 when the
 * calibration has none (binary search over the device's sorted list). */
double dp_calib_find_measured(const dp_calib *c, const char *device, const char *kind, double flops, double bytes);

/* The calibrated route src -> dst, or NULL. */
const dp_calib_route *dp_calib_find_route(const dp_calib *c, const char *src, const char *dst);

/* bytes(v): output bytes plus the bytes of every in-edge. */
double dp_costmodel_op_bytes(const dp_graph *g, int v);

/* Roofline time of an op of `flops` FLOPs touching `bytes` bytes on device dv (seconds). */
double dp_costmodel_roofline(const dp_topo_device *dv, double flops, double bytes);

/* The cost tables of physical graph g on topology t (n_devices = t's devices), with calibration
 * cal (may be NULL). Errors: a DP_COST_TIME graph (its costs are durations, not FLOPs and bytes:
 * DP_EINVAL), a calibration naming a device the topology lacks (DP_EINVAL), out of memory. */
dp_costs *dp_costmodel_costs(const dp_graph *g, const dp_topology *t, const dp_calib *cal, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
