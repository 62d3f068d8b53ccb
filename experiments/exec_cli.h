/* exec_cli.h: what the commands that run the real executor share (calibrate, validate, train
 * --stage real). */
#ifndef DP_EXEC_CLI_H
#define DP_EXEC_CLI_H

#include <stddef.h>

#include "dp_topology.h"

/* Op kinds profiled when none are given: the kinds the generators emit, plus the synthetic
 * kernels of abstract-cost graphs. */
#define DP_CLI_DEFAULT_KINDS "input,matmul,add,mul,relu,gelu,silu,softmax,reduce,synthetic"

/* --target-flops of command cmd: a number in (0, DP_EXEC_MAX_FLOPS] into *out, and 0; else a
 * usage error naming the option (printed) and DP_EXIT_USAGE (inf and 1e25 were taken, and
 * overflowed the executor's tile count). */
int dp_cli_parse_target_flops(const char *cmd, const char *arg, double *out);
/* The size options of the executed graph, given once each and not together: *given holds the
 * bits of those seen (1: --scale, 2: --target-flops) and gets `which`. 0, or a usage error
 * (printed) and DP_EXIT_USAGE when the other one was given (--scale won over --target-flops
 * without a word: a review). place, simulate, train, validate and calibrate profile call it. */
int dp_cli_exec_size_option(const char *cmd, int *given, int which);

/* "HOST: CPU MODEL, N cores" from gethostname and /proc/cpuinfo (what is known). */
void dp_cli_machine_name(char *buf, size_t cap);

/* A warning on stderr when the executor's backend (NULL: cpu) is the CPU and topology t (NULL:
 * none) has GPU devices: every device then runs as a CPU core, so that the measured times are
 * the cores' while the simulated ones, and a calibration's names, are the GPUs' (validate said
 * nothing at MAPE 98.9%, nor calibrate profile: a review); else, for the CPU backend, when a
 * device's streams or copy_engines is not 1 (the executor runs one op and one incoming copy at a
 * time a device, so the simulated machine would not be the measured one). For every command that
 * runs the executor on a topology: validate, calibrate profile, train --stage real
 * (dp_cli_real_open). */
void dp_cli_warn_backend_topology(const char *backend, const dp_topology *t);

/* A warning on stderr when the executor's workers could not be given the nice value asked for
 * (--nice requested; set_errno from dp_exec_nice, 0: nothing said): "--nice -5: not applied
 * (Permission denied); the workers run at nice 0" (it was reported applied: a review). */
void dp_cli_warn_nice(int requested, int applied, int set_errno);

/* ---- Stage III: real execution as the training cost (doppler train --stage real) ---- */

#include "cli.h"
#include "dp_exec.h"
#include "dp_oracle.h"

typedef struct dp_cli_real {
    dp_exec *x;              /* the executor of the graph on the machine's devices */
    const dp_graph *xg;      /* the graph as executed (scaled): train on this one */
    dp_cost *costs;         /* its costs on the machine (calibration, else roofline) */
    dp_exec_oracle_ctx ctx;
    dp_oracle oracle;        /* {"real", dp_exec_oracle_cost, &ctx} */
    dp_exec *ref_x;          /* with a reference: its executor (ctx.ref_x) */
    dp_exec_options xo;      /* the options x was made with (its scale) */
} dp_cli_real;

/* Set up the real executor of g on machine m (its topology, default cpu-2core: device d of the
 * executor is the topology's device d), scaled so that the graph totals target_flops FLOPs (or
 * by scale when > 0), the executed graph's costs, and the oracle (median of `repeats` runs after
 * one warm-up). Errors as dp_exec_alloc and dp_machine_costs. */
int dp_cli_real_open(dp_cli_real *r, const dp_graph *g, dp_machine *m, const dp_exec_options *xo, double scale,
                     double target_flops, int repeats, dp_error *err);
/* DP_OK, or DP_EINVAL when scale > 0 is given for a graph in durations (a DOPPLER .txt, STG),
 * whose kernels --target-flops sizes: --scale is a fraction of a graph's FLOPs (it was ignored
 * without a word). path names the graph in the message. */
int dp_cli_real_scale_check(const dp_graph *g, const char *path, double scale, dp_error *err);

/* The size the real executor runs graph g at, into o: for a graph in FLOPs and bytes the scale of
 * every kernel dimension (scale, (0, 1], or 0: the one giving target_flops FLOPs in all,
 * dp_exec_auto_scale), for a graph of durations the FLOPs a time unit stands for (target_flops
 * in all). target_flops 0: 2e10. One rule for every command that sizes a graph for the executor
 * (train --scale/--target-flops, place's, train --stage real, validate, calibrate). */
void dp_cli_exec_size(const dp_graph *g, double scale, double target_flops, dp_exec_options *o);

/* The graph the real executor runs for g at --scale scale / --target-flops target_flops
 * (dp_cli_exec_size; dp_exec_plan_graph): what train --scale/--target-flops trains Stages I and
 * II on, and what place --scale/--target-flops places, so that the place command train prints
 * gives the placement it reported. NULL with err set: --scale on a graph of durations
 * (dp_cli_real_scale_check, path names the graph), dp_exec_plan_graph's errors. Caller frees with
 * dp_graph_free. */
dp_graph *dp_cli_exec_graph(const dp_graph *g, const char *path, double scale, double target_flops, dp_error *err);

/* Pair every measured run of the oracle with a run of the placement of `method` (e.g. "cp") on
 * a second executor (dp_exec_oracle_ctx.ref_x): the costs are then that placement's first
 * median times the ratio of each run to its reference run, so that the host's drift between
 * minutes leaves REINFORCE's rewards. Doubles the runs per episode. Errors: an unknown method
 * (DP_EINVAL), as dp_exec_alloc. */
int dp_cli_real_reference(dp_cli_real *r, const dp_graph *g, const char *method, dp_error *err);
void dp_cli_real_close(dp_cli_real *r);

#endif
