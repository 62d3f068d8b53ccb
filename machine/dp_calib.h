/* dp_calib.h: the calibration of the cost model: one type (dp_calib), whether fitted to a
 * profile (exec/dp_calib_fit.h, from the samples of exec/dp_profile.h) or read from a file
 * (dp_calib_load), and its file, read and written here and nowhere else.
 *
 * The model calibrated (machine/dp_costmodel.h applies it):
 *   op time of an op of kind k on device d  = a + b x FLOPs + c x bytes   (seconds)
 *       FLOPs: the op's work (multiply-add = 2); bytes: every input edge's bytes + its output's;
 *       an op whose kind, FLOPs and bytes the device "measured" takes those measured seconds
 *   transfer time on the route src -> dst    = latency_s + bytes / bandwidth_Bps
 *   interference (dp_hisim.h): per device, copy_in and peer_busy
 *
 * The calibration file (written by `doppler calibrate` through dp_calib_save):
 *   {"format": "doppler-calibration", "version": 1, "machine": "...",
 *    "devices": {"<device name>": {"ops": {"<op kind>": {"a_s": .., "b_s_per_flop": ..,
 *                                                        "c_s_per_byte": ..}, ...},
 *                                  "default": {"a_s": .., "b_s_per_flop": .., "c_s_per_byte": ..},
 *                                  "interference": {"copy_in": .., "peer_busy": ..},
 *                                  "measured": [{"kind": .., "flops": .., "bytes": .., "seconds": ..}]}},
 *    "routes": [{"src": "<device>", "dst": "<device>", "latency_s": .., "bandwidth_Bps": ..}]}
 * ("default", "interference" and "measured" are optional; interference: each in [0, 100];
 * measured: finite flops, bytes >= 0 and seconds >= 0, each (kind, flops, bytes) once.) Device
 * names are the topology's.
 * Coefficients are checked when read, naming the file and the key: a_s and latency_s lie in
 * [0, DP_COST_TIME_MAX] seconds; b_s_per_flop and c_s_per_byte in [0, DP_COST_TIME_MAX /
 * DP_CALIB_MAX_COUNT], and bandwidth_Bps is at least DP_CALIB_MAX_COUNT / DP_COST_TIME_MAX, so
 * that an op or transfer of up to 2^64 FLOPs or bytes takes a finite time (the fit writes only
 * non-negative coefficients; a negative one made validate's error look smaller). Numbers are
 * written with 10 significant digits.
 *
 * Fit (GSL least squares): for each (device, kind) the subset of {1, FLOPs, bytes} with every
 * coefficient >= 0 and the lowest BIC is fitted to relative error (rows divided by the measured
 * time, so a 10 us op counts as much as a 10 ms one), by gsl_multifit_linear, or by
 * gsl_multifit_robust (bisquare) when a residual lies beyond 4 robust standard deviations
 * (1.4826 x MAD). "default" is the same fit over every kind of the device. Routes: latency +
 * bytes x (1 / bandwidth), the same way. Interference: copy_in = sum of stretch / sum of
 * overlap over the copy_in samples; peer_busy = median over peer_busy samples of
 * (loaded / alone - 1) / peers; both clamped to [0, 100]. Graph-op samples stay out of the fits:
 * their medians become the device's "measured" list. Memory-bound kinds (elementwise,
 * reductions, sources: the executor's classes) are fitted on {1, bytes} only: their FLOP
 * counts follow each generator's convention (a sum of two inputs is one or two FLOPs per
 * element), their bytes are what they move.
 */
#ifndef DP_CALIB_H
#define DP_CALIB_H

#include "dp_cost.h"
#include "dp_error.h"

/* The largest FLOP or byte count of one op or transfer a calibration's coefficients must keep
 * finite (2^64): the coefficient ranges above follow from it and DP_COST_TIME_MAX. */
#define DP_CALIB_MAX_COUNT 18446744073709551616.0

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

/* How well a fit describes its samples (printed and written to the fit report by `doppler
 * calibrate`, not stored in the calibration file: n = 0 in a calibration read from a file). */
typedef struct dp_calib_fit_info {
    int n;                    /* samples */
    int robust;               /* 1 when the robust (bisquare) fit was used */
    char terms[8];            /* regressors kept: "1", "F", "B" ("1FB" = all three) */
    double r2;                /* 1 - SS_res / SS_tot on the measured seconds */
    double rms_rel;           /* root mean square of (predicted - measured) / measured */
    double max_rel;           /* largest |predicted - measured| / measured */
} dp_calib_fit_info;

typedef struct dp_calib_device {
    char *name;
    int n_ops;
    char **op_kind;           /* (n_ops) */
    dp_calib_affine *op;      /* (n_ops) */
    dp_calib_fit_info *op_info; /* (n_ops) the fits' statistics; NULL when read from a file */
    int has_default;
    dp_calib_affine def;      /* every kind of the device together */
    dp_calib_fit_info def_info;
    /* interference ("interference" object; 0 when absent), see dp_hisim.h: while k copies into
     * the device are in flight and j other devices compute, its ops progress at rate
     * 1 / (1 + peer_busy x j) - copy_in x k of their calibrated speed */
    int has_interference;
    double copy_in;    /* compute seconds lost per second of an incoming copy (a CPU device whose
                        * copy worker shares its core), >= 0 */
    double peer_busy;  /* relative slowdown per other busy device (shared memory bandwidth,
                        * caches, clock), >= 0 */
    int n_copy_in, n_peer_busy; /* interference samples the fit used (0 when read from a file) */
    int n_measured;
    dp_calib_measured *measured;  /* (n_measured) sorted by (kind, flops, bytes) */
} dp_calib_device;

typedef struct dp_calib_route {
    char *src, *dst;
    double latency_s, bandwidth_Bps;
    dp_calib_fit_info info;   /* the fit's statistics (n = 0 when read from a file) */
} dp_calib_route;

typedef struct dp_calib {
    char *machine;
    char *path;               /* the file it was read from (NULL when fitted) */
    int n_devices, n_routes;
    dp_calib_device *dev;
    dp_calib_route *route;
} dp_calib;

/* Read a calibration file (format above). Errors name the file and the field (DP_EINVAL), or
 * DP_EIO. */
dp_calib *dp_calib_load(const char *path, dp_error *err);
dp_calib *dp_calib_parse(const char *text, const char *origin, dp_error *err);
/* Atomic write of the calibration file (format above). */
int dp_calib_save(const dp_calib *c, const char *path, dp_error *err);
/* Free a calibration of dp_calib_load or dp_calib_parse and everything it holds (a machine's
 * loaded one is the machine's: dp_machine_free). NULL is a no-op. */
void dp_calib_free(dp_calib *c);

/* A calibration of n_devices devices and n_routes routes, every entry zeroed (NULL when out of
 * memory): for readers and fitters that fill it (dp_calib_parse, exec/dp_calib_fit.h). */
dp_calib *dp_calib_alloc(const char *machine, int n_devices, int n_routes);

/* Sort dv's measured ops by (kind, FLOPs, bytes), the order dp_calib_find_measured searches. */
void dp_calib_sort_measured(dp_calib_device *dv);

/* The bandwidth a fit writes for a route whose copy times do not grow with size (B/s): finite,
 * as JSON has no infinity, and beyond any real link. */
#define DP_CALIB_BANDWIDTH_CAP 1e18

/* The least R^2 of a fit that counts as one: below 0.5 the model explains less than half the
 * variance of the measured times, and its coefficients describe the noise. */
#define DP_CALIB_MIN_R2 0.5

/* A failed fit: 1 with a short reason in why (size bytes; why may be NULL) when R^2 is NaN or
 * below DP_CALIB_MIN_R2, a coefficient is NaN or outside what the file accepts (above), or
 * (routes) the bandwidth is at DP_CALIB_BANDWIDTH_CAP; 0 otherwise. For fits made by
 * dp_calib_fit (a calibration read from a file has no fit statistics: 0). */
int dp_calib_op_fit_failed(const dp_calib_affine *co, const dp_calib_fit_info *in, char *why, size_t size);
int dp_calib_route_fit_failed(const dp_calib_route *rt, char *why, size_t size);
/* The failed interference fit of device d (0 <= d < c->n_devices): 1 with the reason in why when
 * some device of c has interference samples (the profile ran the probes) and d lacks samples of
 * copy_in or of peer_busy, whose 0 would be read as measured; 0 otherwise (no device has samples:
 * a profile made with --no-interference, or a calibration read from a file). */
int dp_calib_interference_fit_failed(const dp_calib *c, int d, char *why, size_t size);

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

/* Seconds of an op of `kind` on device index d (0 <= d < n_devices): the measured graph op of
 * that kind, FLOPs and bytes, else the kind's affine model, else the default (0 when the device
 * has neither). Unclamped (the cost model clamps). */
double dp_calib_op_time(const dp_calib *c, int d, const char *kind, double flops, double bytes);

#ifdef __cplusplus
}
#endif
#endif
