/* dp_exec.h: the real executor. Runs an assignment of a dataflow graph for real, on an
 * asynchronous, work-conserving runtime, and measures its makespan.
 *
 * It is the thing the simulator (sim/dp_sim.h) models, made real, so that the simulator can be
 * checked against it (doppler validate), calibrated from it (doppler calibrate) and replaced by
 * it as the cost of DOPPLER's Stage III (Yao et al. 2026: REINFORCE on measured makespans).
 *
 * Runtime (the same one the simulator models):
 *   - one compute worker per device (a thread; on the CPU backend pinned to its own core when
 *     there are at least as many cores as devices), running, first come first served, whatever
 *     op of its own has all its inputs on the device (work-conserving: no barriers);
 *   - every device owns its buffers: an op's output lives on its device; an edge u -> v between
 *     two devices is a real copy of u's output into a buffer of dev(v), done by dev(v)'s copy
 *     worker (its copy engine), not by a compute worker. One copy per (producer, consumer device)
 *     serves every consumer of u on that device;
 *   - workers sleep on condition variables when idle (no busy waiting).
 *
 * Kernels: each op becomes a real kernel on scaled dimensions (every dimension of its output
 * shape, and the contraction length, times `scale`, rounded up):
 *   DP_EXEC_GEMM      contractions (kind matmul/einsum/..., or an einsum with a summed index):
 *                     one sgemm (CBLAS) C(M,N) = A(M,K) B(K,N) / K, M = product of the output's
 *                     leading dims, N its last dim, K = FLOPs / (2 M N) of the unscaled op;
 *                     A and B are the op's first and second inputs when they are large enough,
 *                     else constant weights owned by the device;
 *   DP_EXEC_ELEMWISE  everything else: out[i] = f(mean over inputs of in[i mod n_in]) with f by
 *                     kind (relu, gelu, silu, tanh, sigmoid, exp, identity; "mul" multiplies),
 *                     softmax normalises rows; sources fill their output deterministically;
 *   DP_EXEC_REDUCE    reductions (kind reduce/sum/mean/...): out[i mod n_out] += in[i];
 *   DP_EXEC_SYNTH     graphs with abstract costs only (DP_GRAPH_COST_TIME, e.g. DOPPLER's files):
 *                     sgemm chunks (64 x 64 x 256) totalling work x flops_per_unit FLOPs, after
 *                     reading every input; the output has out_size x bytes_per_unit bytes.
 * Every kernel's result depends only on its inputs and the op id, never on the device, so an
 * assignment changes the time but not the numbers (tests compare against a single-device run).
 *
 * The executed graph (dp_exec_graph) is the graph as executed: FLOPs and bytes of the scaled
 * kernels. The simulator and the calibration describe that graph.
 *
 * Backends (dp_exec_backend.h): "cpu" (this file's default: malloc'd memory, CBLAS, memcpy) and,
 * when configured --with-cuda, "cuda" (one compute stream per GPU, cuBLAS, peer copies on a copy
 * stream).
 *
 * Usage: x = dp_exec_alloc(g, n_devices, &opt, err); dp_exec_measure(x, assignment, ...) any
 * number of times; dp_exec_free(x). One dp_exec runs one assignment at a time (not reentrant).
 */
#ifndef DP_EXEC_H
#define DP_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "dp_error.h"
#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { DP_EXEC_SOURCE = 0, DP_EXEC_GEMM, DP_EXEC_ELEMWISE, DP_EXEC_REDUCE, DP_EXEC_SYNTH };

/* Elementwise functions (dp_exec_kernel.func). */
enum {
    DP_EXEC_F_IDENTITY = 0, DP_EXEC_F_RELU, DP_EXEC_F_GELU, DP_EXEC_F_SILU, DP_EXEC_F_TANH,
    DP_EXEC_F_SIGMOID, DP_EXEC_F_EXP, DP_EXEC_F_SOFTMAX, DP_EXEC_F_MUL
};

/* One op's kernel after scaling. */
typedef struct dp_exec_kernel {
    int cls;             /* DP_EXEC_* class */
    int func;            /* DP_EXEC_F_* for elementwise ops */
    int64_t m, n, k;     /* GEMM: C(m,n) = A(m,k) B(k,n); SYNTH: total contraction length k */
    int64_t out_elems;   /* floats in the op's output buffer (>= 1) */
    int64_t row;         /* softmax row length (last output dim), else 0 */
    double flops;        /* FLOPs executed (multiply-add = 2) */
    double bytes;        /* bytes read (every input once) + bytes written (the output) */
} dp_exec_kernel;

typedef struct dp_exec_options {
    const char *backend;    /* "cpu" (default) or "cuda" (only when built --with-cuda) */
    double scale;           /* dimension factor for physical graphs, (0, 1] (default 1) */
    double flops_per_unit;  /* synthetic kernels: FLOPs per unit of work (time graphs) */
    double bytes_per_unit;  /* synthetic kernels: bytes per unit of out_size (time graphs) */
    int pin;                /* 1: pin each device's workers to core d (when cores >= devices),
                             * 0: let the OS place them (default 1) */
    uint64_t seed;          /* data of sources and weights (default 1) */
    int nice;               /* nice value of the worker threads (Linux per-thread; default 0 =
                             * unchanged). Negative values (root only) let measurements on a
                             * shared machine take the cores from other processes while they
                             * run; a value that cannot be set leaves the workers at their
                             * inherited nice, which dp_exec_nice reports */
} dp_exec_options;

/* The most FLOPs the kernels of one run may total (what --target-flops may ask): an op's
 * synthetic tiles (8192 FLOPs each) then number at most 1.2e14, exact in a double and an int64
 * (1e25 overflowed the tile count), and one run takes days of a core already. */
#define DP_EXEC_MAX_FLOPS 1e18
/* The most tiles or floats of one op's kernel dp_exec_plan accepts: 2^53, what a double and an
 * int64 both count exactly. */
#define DP_EXEC_MAX_COUNT 9007199254740992.0

/* Defaults: cpu backend, scale 1, flops_per_unit 0 and bytes_per_unit 0 (0 = chosen by
 * dp_exec_alloc so the graph's total work is 2e8 FLOPs: about 0.1 s on one core), pin 1. */
void dp_exec_options_init(dp_exec_options *o);

/* The scale at which the kernels of physical graph g total about `target_flops` FLOPs (bisection
 * over (1e-6, 1]; 1 when the graph is smaller than that already). For time graphs returns the
 * flops_per_unit giving that total. */
double dp_exec_auto_scale(const dp_graph *g, double target_flops);

/* The kernels of g under o (n_ops entries into k). Pure: no executor needed. Errors: DP_EINVAL
 * for a scale out of range, for synthetic units (flops_per_unit, bytes_per_unit) that are not
 * finite, and for an op whose synthetic tiles or output floats exceed DP_EXEC_MAX_COUNT (naming
 * the op and the units). */
int dp_exec_plan(const dp_graph *g, const dp_exec_options *o, dp_exec_kernel *k, dp_error *err);

/* The executed graph of g under o without an executor (no threads, no device memory): what
 * dp_exec_graph gives, for training the earlier stages on the same graph Stage III runs.
 * Caller frees with dp_graph_free. */
dp_graph *dp_exec_plan_graph(const dp_graph *g, const dp_exec_options *o, dp_error *err);

typedef struct dp_exec dp_exec;

/* The most devices an executor runs (dp_exec_alloc). */
#define DP_EXEC_MAX_DEVICES 1024

/* An executor for g (which must outlive it) on n_devices (1..DP_EXEC_MAX_DEVICES) devices named
 * by the backend ("cpu0", "cpu1", ...). Starts 2 x n_devices worker threads. Errors: unknown or
 * unavailable backend (DP_EUNSUPPORTED), bad options or device count (DP_EINVAL), out of memory
 * or threads (DP_ENOMEM; the CPU backend's weight buffers are checked against the host's available
 * memory first, dp_file_mem_check, naming the graph). */
dp_exec *dp_exec_alloc(const dp_graph *g, int n_devices, const dp_exec_options *o, dp_error *err);
/* Joins the workers and frees every buffer of every device. NULL is allowed. */
void dp_exec_free(dp_exec *x);

/* The executed graph: g with work = executed FLOPs, out_size and edge sizes = bytes of the
 * kernels' outputs, names and kinds kept (kind "synthetic" for synthetic kernels), shape
 * (rows, last dim) of the output; physical cost kind even for time graphs. Owned by x. */
const dp_graph *dp_exec_graph(const dp_exec *x);
/* The executor's kernels (one per op of the executed graph, owned by x), its device count and
 * its backend's name ("cpu", ...: a static string). x non-NULL (unchecked). */
const dp_exec_kernel *dp_exec_kernels(const dp_exec *x);
int dp_exec_n_devices(const dp_exec *x);
/* The nice value x's worker threads run at, read back from them after dp_exec_options.nice was
 * set (the inherited one, e.g. 19 under nice -n 19, when nice is 0 or could not be set); and in
 * *set_errno (may be NULL) 0, or the errno of the setpriority that failed (EACCES: a nice below
 * the current one needs CAP_SYS_NICE or RLIMIT_NICE). */
int dp_exec_nice(const dp_exec *x, int *set_errno);
const char *dp_exec_backend_name(const dp_exec *x);
/* 1 when x's worker threads are pinned, each device to its own core (the CPU backend with
 * dp_exec_options.pin and at least as many cores the process may use as devices: taskset -c 0
 * leaves one, and two devices then share it unpinned), else 0 (validate says which). */
int dp_exec_pinned(const dp_exec *x);

/* One run's timings (seconds from the run's start, by CLOCK_MONOTONIC). Arrays owned by x, valid
 * until the next run. */
typedef struct dp_exec_result {
    double makespan;          /* last op end - run start */
    const double *op_start;   /* (n_ops) kernel start of each op */
    const double *op_end;     /* (n_ops) kernel end */
    int n_copies;             /* cross-device copies done: one per (producer, consumer device) */
    const int *copy_src;      /* (n_copies) producer op */
    const int *copy_dev;      /* (n_copies) destination device */
    const double *copy_start; /* (n_copies) */
    const double *copy_end;   /* (n_copies) */
    double copy_bytes;        /* bytes copied between devices */
} dp_exec_result;

/* Allocate the buffers of an assignment on their devices (the previous assignment's are freed).
 * Needed before dp_exec_run; dp_exec_measure calls it. Errors: a device id out of range
 * (DP_EINVAL, naming the op), out of device memory (DP_ENOMEM; with the CPU backend, whose memory
 * the host overcommits, the assignment's bytes are checked against the available memory before any
 * allocation: dp_file_mem_check, naming the graph). */
int dp_exec_prepare(dp_exec *x, const int *assignment, dp_error *err);

/* Run the prepared assignment once; fills res. Errors: nothing prepared (DP_EINVAL), a kernel or
 * copy failed in the backend (DP_EIO). */
int dp_exec_run(dp_exec *x, dp_exec_result *res, dp_error *err);

/* Measured makespan statistics over repeats (seconds). */
typedef struct dp_exec_stats {
    int repeats;
    double median, min, max, mean;
    double q25, q75;          /* quartiles (linear interpolation, as gsl_stats_quantile_from_sorted_data) */
} dp_exec_stats;

/* Prepare the assignment, run it `warmup` times unmeasured, then `repeats` (>= 1) times; each
 * makespan goes to samples (may be NULL; `repeats` entries otherwise) and their statistics to st. */
int dp_exec_measure(dp_exec *x, const int *assignment, int warmup, int repeats, double *samples,
                    dp_exec_stats *st, dp_error *err);

/* Copy op v's output (as last run) into out (at most cap floats); returns the number of floats of
 * the output (which may exceed cap) or a negative status when nothing has run. */
int64_t dp_exec_read_output(dp_exec *x, int v, float *out, int64_t cap, dp_error *err);

/* Number of device buffers currently allocated by the backend (outputs, copies, weights): 0
 * after dp_exec_free's teardown; used by tests to check that nothing leaks between runs. */
long dp_exec_live_buffers(const dp_exec *x);

/* ---- the real executor as a cost oracle (DOPPLER's Stage III: RealExecuteEngine) ----
 * Matches the dp_oracle interface of sim/dp_oracle.h: {"real", dp_exec_oracle_cost, &ctx}. */
typedef struct dp_exec_oracle_ctx {
    dp_exec *x;
    int warmup;    /* unmeasured runs after preparing the assignment (default 1: first touch) */
    int repeats;   /* measured runs; the cost is their median (default 3) */
    long calls;    /* counted by the oracle */
    /* Optional reference (a paired design against the host's drift, 3 to 13% between minutes
     * on a shared VM, which would otherwise enter REINFORCE's rewards as noise): ref_x is an
     * executor of the same graph on the same devices, prepared with a reference assignment
     * (e.g. the critical-path heuristic's) and warmed up. Each measured run of the assignment
     * then follows a run of the reference, and the cost is ref_level x the median of the
     * ratios (run / reference run): a makespan in the reference's units of the first call. */
    dp_exec *ref_x;     /* NULL: no reference (the plain median) */
    double ref_level;   /* seconds: the reference's median makespan over the first call's runs
                         * (set by the first call when 0) */
    double ref_last;    /* seconds: the reference's median in the last call (its drift) */
} dp_exec_oracle_ctx;

/* *makespan = median measured makespan (seconds) of the assignment over ctx->repeats runs, or
 * with ctx->ref_x, ref_level x median(run / paired reference run). ctx is a dp_exec_oracle_ctx.
 * Errors as dp_exec_measure; DP_EINVAL when ref_x runs another graph or device count. */
int dp_exec_oracle_cost(void *ctx, const int *assignment, double *makespan, dp_error *err);

/* The median of n values (sorted in place). */
double dp_exec_median(double *v, int n);

#ifdef __cplusplus
}
#endif
#endif
