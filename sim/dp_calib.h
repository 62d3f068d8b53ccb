/* dp_calib.h: profiling on the real executor and calibration of the cost model from it.
 *
 * The model calibrated (the one sim/dp_cost.h materialises):
 *   op time of an op of kind k on device d  = a + b x FLOPs + c x bytes   (seconds)
 *       FLOPs: the op's work (multiply-add = 2); bytes: every input edge's bytes + its output's
 *   transfer time on the route src -> dst    = latency_s + bytes / bandwidth_Bps
 *
 * Profile (raw samples, JSON {"format": "doppler-profile", "version": 1, ...}): for each device,
 * each op kind over a sweep of sizes, and for each route, copies over a sweep of sizes, all timed
 * on the real executor (sim/dp_exec.h). An op sample is the time from its start to the start of
 * the next op on the same busy device (so the runtime's per-op dispatch cost is in it, as it is
 * in a real run); a copy sample is the time from the producer's end to the consumer's start on
 * the other device (the copy engine's wake-up, the copy, and the consumer's wake-up).
 *
 * Calibration file (JSON, read by the simulator's cost model, sim/dp_costmodel.h):
 *   {"format": "doppler-calibration", "version": 1, "machine": "...",
 *    "devices": {"<device>": {"ops": {"<kind>": {"a_s": a, "b_s_per_flop": b, "c_s_per_byte": c}},
 *                             "default": {"a_s": ..., "b_s_per_flop": ..., "c_s_per_byte": ...}}},
 *    "routes": [{"src": "<device>", "dst": "<device>", "latency_s": l, "bandwidth_Bps": bw}]}
 *
 * Fit (GSL least squares): for each (device, kind) the subset of {1, FLOPs, bytes} with every
 * coefficient >= 0 and the lowest BIC is fitted to relative error (rows divided by the measured
 * time, so a 10 us op counts as much as a 10 ms one), by gsl_multifit_linear, or by
 * gsl_multifit_robust (bisquare) when a residual lies beyond 4 robust standard deviations
 * (1.4826 x MAD). "default" is the same fit over every kind of the device. Routes: latency +
 * bytes x (1 / bandwidth), the same way. Interference: two numbers per device (below and
 * dp_hisim.h), written as the device's "interference" object. Graph-op samples stay out of the
 * fits: their medians become the device's "measured" list. Memory-bound kinds (elementwise,
 * reductions, sources: the executor's classes) are fitted on {1, bytes} only: their FLOP
 * counts follow each generator's convention (a sum of two inputs is one or two FLOPs per
 * element), their bytes are what they move.
 */
#ifndef DP_CALIB_H
#define DP_CALIB_H

#include <stdint.h>

#include "dp_cost.h"
#include "dp_costmodel.h"
#include "dp_error.h"
#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- profiles ---- */

typedef struct dp_profile_op {
    int device;
    char kind[48];
    double flops, bytes, seconds;
    int graph_op;             /* 1: an op shape of a graph (dp_profile_graph_ops), not the sweep */
} dp_profile_op;

typedef struct dp_profile_copy {
    int src, dst;
    double bytes, seconds;
} dp_profile_copy;

/* One interference sample of a device (see dp_hisim.h):
 *  kind "copy_in":   matmuls on the device while copies into it ran: x = seconds the copies
 *                    overlapped them, y = seconds the matmuls took beyond their time alone;
 *  kind "peer_busy": one op size timed with the other devices idle (x, seconds) and busy
 *                    (y, seconds), `peers` devices busy. */
typedef struct dp_profile_itf {
    int device;
    char kind[16];
    double x, y;
    int peers;
} dp_profile_itf;

typedef struct dp_profile {
    char *machine;            /* free text: host name and CPU model */
    char *backend;            /* executor backend ("cpu") */
    int n_devices;
    char **device;            /* (n_devices) names */
    int n_ops, cap_ops;
    dp_profile_op *ops;
    int n_copies, cap_copies;
    dp_profile_copy *copies;
    int n_itf, cap_itf;
    dp_profile_itf *itf;      /* interference samples (none in profiles made without them) */
} dp_profile;

typedef struct dp_profile_options {
    const char *backend;      /* default "cpu" */
    int repeats;              /* runs per size (default 3) */
    int passes;               /* interleaved passes over the devices of the graph-op and
                               * interference probes (default 9): pass r probes device 0, 1, ...
                               * in turn, then pass r + 1, so that the host's drift in speed
                               * (several percent between minutes on a VM) falls on every
                               * device alike instead of showing as a difference between them */
    int chain;                /* ops per run and size: samples are the gaps between their starts (default 8) */
    int64_t max_elems;        /* largest tensor swept, in floats (default 1 << 20) */
    int64_t max_gemm;         /* largest GEMM dimension swept (default 768) */
    int pin;                  /* pin workers (default 1) */
    uint64_t seed;
    const char *machine;      /* free text recorded in the profile (default "") */
    int nice;                 /* nice value of the executor's workers (dp_exec_options.nice) */
    int background;           /* 1: while a device is profiled, every other device runs a
                               * background sgemm loop (pinned to its core), so that the samples
                               * describe a machine whose devices are all busy, as they are
                               * during most of a parallel run. On hosts whose cores share
                               * execution units or memory bandwidth (2 vCPUs of one VM) an op
                               * is much slower then than on an idle machine. Default 0 */
    int interference;         /* 1 (default): also measure the interference of each device
                               * (copies into it while it computes; its peers busy) */
} dp_profile_options;

void dp_profile_options_init(dp_profile_options *o);

/* Profile n_devices devices of the backend, called names[0..n_devices-1] in the profile (NULL:
 * the backend's names cpu0, cpu1, ...; give a topology's device names so that the calibration
 * describes that topology): every kind in kinds (n_kinds names, e.g. "matmul",
 * "add", "relu", "softmax", "reduce", "input", "synthetic") on every device, then every ordered
 * pair of devices, then (o->interference) each device's interference: a chain of matmuls with
 * copies into the device from another device running (copy_in samples), and matmuls and
 * elementwise ops with every other device idle and then busy with a background sgemm loop
 * (peer_busy samples). The executor classes the kinds (sim/dp_exec.h); "synthetic" profiles the
 * kernels of abstract-cost graphs. Returns DP_OK and *out (free with dp_profile_free). */
int dp_profile_run(int n_devices, const char *const *names, const char *const *kinds, int n_kinds,
                   const dp_profile_options *o, dp_profile **out, dp_error *err);
void dp_profile_free(dp_profile *p);

/* Time the ops of executed graph xg (dp_exec_plan_graph: the kernels as the executor runs them
 * at its scale) where they run: the whole graph on one device, for each of p's devices, o->passes
 * runs, each after a warm-up, interleaved (pass r times device 0, 1, ..., then pass r + 1). An op's sample is the time from its start to the next op's start on the
 * device (its kernel, then the dispatch of the next; the last op: its kernel), with the caches,
 * clocks and memory traffic its neighbours in the graph leave it (an op timed alone on inputs
 * of its own runs up to twice as fast or slow: inputs a producer just wrote are in cache,
 * inputs of a long gone one are not). The samples (graph_op = 1) go to p; the fit keeps their
 * median per (kind, FLOPs, bytes) as the calibration's "measured" ops, which the cost model uses
 * for ops of exactly that kind, FLOPs and bytes. Synthetic kernels (graphs of durations) are
 * skipped. Errors: as dp_profile_run. */
int dp_profile_graph_ops(dp_profile *p, const dp_graph *xg, const dp_profile_options *o, dp_error *err);
int dp_profile_save(const dp_profile *p, const char *path, dp_error *err);
dp_profile *dp_profile_load(const char *path, dp_error *err);

/* 1 when the executor runs ops of `kind` as memory-bound loops (elementwise, reductions,
 * sources), 0 for contractions and synthetic kernels (sim/dp_exec.h classes). */
int dp_profile_kind_memory_bound(const char *kind);

/* ---- fits ---- */

/* How well a fit describes its samples (printed and written to the fit report, not stored in
 * the calibration file). */
typedef struct dp_calib_fit_info {
    int n;                    /* samples */
    int robust;               /* 1 when the robust (bisquare) fit was used */
    char terms[8];            /* regressors kept: "1", "F", "B" ("1FB" = all three) */
    double r2;                /* 1 - SS_res / SS_tot on the measured seconds */
    double rms_rel;           /* root mean square of (predicted - measured) / measured */
    double max_rel;           /* largest |predicted - measured| / measured */
} dp_calib_fit_info;

typedef struct dp_calib_fit_device {
    char *name;
    int n_kinds;
    char **kind;
    dp_calib_affine *coef;    /* (n_kinds) */
    dp_calib_fit_info *info;  /* (n_kinds) */
    dp_calib_affine def;      /* every kind of the device together */
    dp_calib_fit_info def_info;
    /* interference (dp_hisim.h): copy_in = sum of stretch / sum of overlap over the copy_in
     * samples; peer_busy = median over peer_busy samples of (loaded / alone - 1) / peers; both
     * clamped to [0, 100]; 0 without samples */
    double copy_in, peer_busy;
    int n_copy_in, n_peer_busy;  /* samples used */
    int n_measured;           /* graph ops: the median of their samples per (kind, FLOPs, bytes) */
    dp_calib_measured *measured;
} dp_calib_fit_device;

typedef struct dp_calib_fit_route {
    char *src, *dst;
    double latency_s, bandwidth_Bps;
    dp_calib_fit_info info;
} dp_calib_fit_route;

/* The fitted model: what the calibration file holds, plus each fit's statistics. The file is
 * read back by the cost model (dp_calib_load in sim/dp_costmodel.h). */
typedef struct dp_calib_fitted {
    char *machine;
    int n_devices;
    dp_calib_fit_device *dev;
    int n_routes;
    dp_calib_fit_route *route;
} dp_calib_fitted;

/* Fit the model to a profile. Errors: a device or route without usable samples (DP_EINVAL). */
dp_calib_fitted *dp_calib_fit(const dp_profile *p, dp_error *err);
void dp_calib_fitted_free(dp_calib_fitted *c);
/* Atomic write of the calibration file (format above). */
int dp_calib_fitted_save(const dp_calib_fitted *c, const char *path, dp_error *err);
/* Seconds of an op of `kind` on fitted device d (a measured graph op of that kind, FLOPs and
 * bytes, else the kind's fit, else the default). */
double dp_calib_fitted_op_time(const dp_calib_fitted *c, int d, const char *kind, double flops, double bytes);

#ifdef __cplusplus
}
#endif
#endif
