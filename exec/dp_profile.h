/* dp_profile.h: profiling on the real executor, the samples the calibration is fitted to
 * (machine/dp_calib.h).
 *
 * Profile (raw samples, JSON {"format": "doppler-profile", "version": 1 (another is refused), ...}): for each device,
 * each op kind over a sweep of sizes, and for each route, copies over a sweep of sizes, all timed
 * on the real executor (exec/dp_exec.h). An op sample is the time from its start to the start of
 * the next op on the same busy device (so the runtime's per-op dispatch cost is in it, as it is
 * in a real run); a copy sample is the time from the producer's end to the consumer's start on
 * the other device (the copy engine's wake-up, the copy, and the consumer's wake-up).
 */
#ifndef DP_PROFILE_H
#define DP_PROFILE_H

#include <stdint.h>

#include "dp_error.h"
#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    /* of the runs of this process (not saved): the nice value the executor's workers ran at
     * (dp_exec_nice), and 0 or the errno of a dp_profile_options.nice that could not be set */
    int nice, nice_errno;
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
    /* called after each sweep (a kind on a device, a route, an interference probe) with the
     * sweeps done and their total and what the last one was (NULL: none); for progress lines */
    void (*progress)(int done, int total, const char *what, void *ctx);
    void *progress_ctx;
} dp_profile_options;

/* Set o (non-NULL, unchecked) to the defaults: backend "cpu", repeats 3, passes 9, chain 8,
 * max_elems 1 << 20 floats, max_gemm 768, pinned workers, seed 1, interference measured; machine
 * NULL (recorded as ""), nice 0, no background load, no progress callback. */
void dp_profile_options_init(dp_profile_options *o);

/* Profile n_devices devices of the backend, called names[0..n_devices-1] in the profile (NULL:
 * the backend's names cpu0, cpu1, ...; give a topology's device names so that the calibration
 * describes that topology): every kind in kinds (n_kinds names, e.g. "matmul",
 * "add", "relu", "softmax", "reduce", "input", "synthetic") on every device, then every ordered
 * pair of devices, then (o->interference) each device's interference: a chain of matmuls with
 * copies into the device from another device running (copy_in samples), and matmuls and
 * elementwise ops with every other device idle and then busy with a background sgemm loop
 * (peer_busy samples). The executor classes the kinds (exec/dp_exec.h); "synthetic" profiles the
 * kernels of abstract-cost graphs. Returns DP_OK and *out (free with dp_profile_free). Errors: a
 * kind of 48 bytes or more, which dp_profile_op.kind cannot keep (DP_EINVAL), as dp_exec_alloc. */
int dp_profile_run(int n_devices, const char *const *names, const char *const *kinds, int n_kinds,
                   const dp_profile_options *o, dp_profile **out, dp_error *err);
/* Free a profile (of dp_profile_run or dp_profile_load) and the strings and samples it holds. NULL is a
 * no-op. */
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
 * skipped. Errors: an op kind of 48 bytes or more (DP_EINVAL, naming the graph and the op, before
 * any run), as dp_profile_run. */
int dp_profile_graph_ops(dp_profile *p, const dp_graph *xg, const dp_profile_options *o, dp_error *err);
/* Write p as a JSON profile file ("format": "doppler-profile", version 1: its devices, op, copy
 * and interference samples in seconds) with an atomic write; DP_OK or the write's error. */
int dp_profile_save(const dp_profile *p, const char *path, dp_error *err);
/* Read a profile file written by dp_profile_save; the caller frees it with dp_profile_free. NULL
 * with err: dp_json_load's errors (a file that cannot be read, not JSON), DP_EINVAL naming the
 * file and the field (another format or version, a field of the wrong type, a key the writer does
 * not write, a copy from a device to itself), DP_ENOMEM. */
dp_profile *dp_profile_load(const char *path, dp_error *err);

/* 1 when the executor runs ops of `kind` as memory-bound loops (elementwise, reductions,
 * sources), 0 for contractions and synthetic kernels (exec/dp_exec.h classes). */
int dp_profile_kind_memory_bound(const char *kind);

#ifdef __cplusplus
}
#endif
#endif
