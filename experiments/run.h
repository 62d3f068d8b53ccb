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
 *   devices     number of identical devices (default 4)
 *   peak_flops, bandwidth, latency   the uniform machine for graphs in FLOPs and bytes
 *               (defaults as `doppler place`: 1e13 FLOP/s, 1.2e10 B/s, 1e-5 s)
 *   method      placement method (required): any name of dp_place_methods()
 *   seed        seed of the method's GSL generator (default 1)
 *   rep         repetition number (set by the sweep; does not change the seed)
 *   device, budget, samples, config   as `doppler place --device/--budget/--samples/--config`
 *               (config is a path, resolved like graph)
 *   timing_repeats   run the method and the simulation this many times and report the mean
 *               seconds of one (default 1); the makespan is the first one's, and each repeat
 *               must give the same makespan (a method that does not is an error)
 *
 * Any other parameter is an error for methods that take none (a misspelt hyperparameter must not
 * pass silently).
 *
 * What a run leaves: its assignment as JSON ({"devices": [...]}, cli.h format) in the run's
 * folder, plus whatever files its method writes there (trajectories, checkpoints).
 */
#ifndef DP_RUN_H
#define DP_RUN_H

#include <jansson.h>

#include "dp_cost.h"
#include "dp_graph.h"
#include "results.h"

typedef struct dp_run_context {
    const char *config_dir;  /* folder of the sweep config, for relative paths ("." when none) */
    const char *run_dir;     /* folder for this run's files (created when needed); NULL: none */
    const char *run_dir_rel; /* the same, as stored in result rows (relative to the results file) */
} dp_run_context;

/* Execute one run. Always fills out->status, makespan, units, seconds, episodes, metrics and the
 * file columns (the caller fills key, index and the parameter columns); returns DP_OK when the
 * run succeeded, otherwise the status with err (and out->error) saying why. */
int dp_run_execute(const json_t *params, const dp_run_context *ctx, dp_result *out, dp_error *err);

/* The graph and cost tables of a run, as dp_run_execute builds them (for reports that redraw a
 * run's schedule). Free with dp_graph_free / dp_costs_free. */
int dp_run_load(const json_t *params, const dp_run_context *ctx, dp_graph **g, dp_costs **c,
                dp_error *err);

/* Resolve a graph or data path as described above into buf. Returns buf, or NULL with err when
 * no candidate exists (the message lists the places tried). */
const char *dp_run_resolve_path(const char *spec, const char *config_dir, char *buf, size_t cap,
                                dp_error *err);

#endif
