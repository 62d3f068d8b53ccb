/* run.h: one experiment run, (graph, machine and cost model, method, seed, hyperparameters) ->
 * makespan, behind a single dispatch function that every sweep, MPI rank and report uses.
 *
 * Parameters a run understands (the keys of its params object, sweep.h):
 *
 *   graph       graph file (required). "shared:REL" is REL under $DOPPLER_SHARED_DATA (default
 *               ../shared/data, tried from the working folder and from the config's folder);
 *               "data:REL" is a bundled file (data/REL); other relative paths are tried from
 *               the working folder, then from the config's folder. "gen:MODEL?k=v&k=v" is a
 *               graph made by the workload generators (`doppler graph gen MODEL --k v`).
 *   format      graph format when the extension does not tell (as `doppler place --format`)
 *   machine     devices, peak_flops, bandwidth, latency, topology, calibration, transfer (the
 *               transfer model), chunks, mode (async or bsp), streams, queue, memory_limit,
 *               memory_policy, memory_penalty, copy_engines: each means what the `doppler place`
 *               option of the same name means (cli.h); topology and calibration files resolve
 *               like graphs, a topology without '/' or ".json" is a bundled name
 *   method      placement method (required): any name of dp_place_methods(), or a method of the
 *               runner table in run.c (training methods)
 *   seed        seed of the method's GSL generator (default 1)
 *   rep         repetition number (set by the sweep; does not change the seed)
 *   device, budget, samples, config   as `doppler place --device/--budget/--samples/--config`
 *               (config is a path, resolved like graph)
 *   timing_repeats   run the method and the simulation this many times and report the mean
 *               seconds of one (default 1); the makespan is the first one's, and each repeat
 *               must give the same makespan (a method that does not is an error)
 *
 * doppler (policy/dp_train.h): episodes_il, episodes_sim (Stage I and II episodes; default the
 *               config's), train_config (a training config JSON file), cfg__KEY__SUB (one key of
 *               it, e.g. cfg__stages__sim__lr), model_selection (true, default: place with the
 *               parameters whose greedy placement was best at the stage's evaluations), samples
 *               (best of K sampled placements instead of the greedy one), bench_reps (also time
 *               inference and training episodes), variant (dual, no_stage1, no_stage2; table 4)
 *
 * Any other parameter is an error for methods that do not take it (a misspelt hyperparameter
 * must not pass silently).
 *
 * What a run leaves: its assignment as JSON ({"devices": [...]}, cli.h format) in the run's
 * folder, plus whatever files its method writes there (trajectories, checkpoints).
 */
#ifndef DP_RUN_H
#define DP_RUN_H

#include <jansson.h>

#include "cli.h"
#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_engine.h"
#include "dp_problem.h"
#include "results.h"
#include <stdint.h>

typedef struct dp_run_context {
    const char *config_dir;  /* folder of the sweep config, for relative paths ("." when none) */
    const char *run_dir;     /* folder for this run's files (created when needed); NULL: none */
    const char *run_dir_rel; /* the same, as stored in result rows (relative to the results file) */
} dp_run_context;

/* Execute one run. Always fills out->status, makespan, units, seconds, episodes, metrics and the
 * file columns (the caller fills key, index and the parameter columns); returns DP_OK when the
 * run succeeded, otherwise the status with err (and out->error) saying why. */
int dp_run_execute(const json_t *params, const dp_run_context *ctx, dp_result *out, dp_error *err);

/* The machine of a run: its graph (owned), the machine (sim/dp_machine.h) and the problem of
 * the graph on it (sim/dp_problem.h: cost tables, engine and the oracle every method and trainer
 * of the run takes). */
typedef struct dp_run_machine {
    dp_graph *g;
    dp_machine m;
    dp_problem *p;
    dp_cost *own_costs; /* a heterogeneous example's own processors (dp_hetero.h), or NULL */
    uint64_t graph_hash; /* the graph file's bytes (dp_run_file_hash); 0 for a generated graph */
} dp_run_machine;

/* FNV-1a (dp_graph_hash_bytes) of the bytes of the file at path into *h: a run's record of which
 * graph file it read (metrics "graph_hash", 16 hex digits), so that rows of one relative "graph"
 * read from two working folders, or of a file edited between a run and its resume, are told apart
 * (dp_sweep_execute and dp_sweep_merge refuse to mix them). DP_OK, or DP_EIO naming path. */
int dp_run_file_hash(const char *path, uint64_t *h, dp_error *err);

/* A simulated schedule: the engine's (arrays valid until its next run). */
typedef dp_engine_schedule dp_run_schedule;

/* Load a run's graph and machine from its parameters (above). Errors name the parameter. */
int dp_run_machine_load(const json_t *params, const dp_run_context *ctx, dp_run_machine *rm, dp_error *err);
void dp_run_machine_free(dp_run_machine *rm);
/* Simulate an assignment on the run's engine; priority may be NULL (b-levels are used when the
 * queue is a priority queue). */
int dp_run_machine_simulate(dp_run_machine *rm, const int *assignment, const double *priority,
                            dp_run_schedule *out, dp_error *err);

/* For the runs of run.c: 1 when name is a graph/machine parameter; DP_OK when every
 * parameter is one of those or in own (NULL-ended; an entry ending in '*' admits a prefix, as
 * dp_place_method.sweep_params), else DP_EINVAL naming the stray one. */
int dp_run_is_machine_param(const char *name);
int dp_run_check_params(const json_t *params, const char *method, const char *const *own, dp_error *err);
/* What a run's parameters can be checked for without running it: a known method, every name one
 * that its method takes (a misspelt one is an error), graph given, integers where integers are
 * expected, the machine's values. Input files are looked for apart (dp_sweep_check_inputs). */
int dp_run_check(const json_t *params, dp_error *err);
/* The configs of a run built as the run builds them, by the run's own functions, without its graph:
 * DOPPLER's training config (train_config, then the cfg__ keys over it), Placeto's and GDP's
 * (train_config, with the keys a Stage II run cannot honour refused), a placement method's config
 * file (config, with budget over its budget: the method's own reading, dp_place_check_config).
 * config_dir: the sweep config's folder, where relative files are looked for (NULL: "."). DP_OK,
 * or DP_EINVAL naming the parameter and the key or value refused ("parameter \"cfg__gama\":
 * config: unknown key \"gama\" (known: ...)"). A config file that is not there is left to
 * dp_sweep_check_inputs (DP_OK), so is a method dp_run_check refuses. It reads only
 * the parameters that dp_run_is_config_param names: runs that agree on those need one check. */
int dp_run_check_config(const json_t *params, const char *config_dir, dp_error *err);
int dp_run_is_config_param(const char *name);
/* Store the metrics every simulated run reports (lower_bound, transfers, transfer_volume,
 * utilisation, peak_memory, ops; plus the members of extra, which is consumed) and the device
 * count in out. */
int dp_run_put_metrics(dp_result *out, const dp_run_machine *rm, const dp_run_schedule *res, json_t *extra);
/* Write the assignment into the run's folder and record its path in out (nothing without a
 * run folder); priority (n_ops or NULL): the queue priorities its makespan was simulated with,
 * written beside it (dp_cli_write_assignment). */
int dp_run_write_assignment(const dp_run_context *ctx, const dp_run_machine *rm, const char *method,
                            const int *assign, const double *priority, double makespan_printed, dp_result *out,
                            dp_error *err);
/* mkdir -p */
int dp_run_mkdir(const char *path, dp_error *err);

/* Resolve a graph or data path as described above into buf. Returns buf, or NULL with err: DP_EIO
 * when no candidate exists (the message lists the places tried), DP_EINVAL when one is there but
 * is not a file that can be read, saying why ("PATH: is a directory, not a file"; it said "No such
 * file or directory"). */
const char *dp_run_resolve_path(const char *spec, const char *config_dir, char *buf, size_t cap,
                                dp_error *err);

#endif
