/* dp_problem.h: one placement problem, assembled in one place.
 *
 * A problem is a dataflow graph on a machine: the graph (dp_graph.h), the machine (dp_machine.h:
 * one key/value spec, the same keys on the command line, in sweep configs and in Python), the
 * cost tables of the graph on that machine (dp_machine_costs), the engine that simulates an
 * assignment (dp_engine.h: the one entry point that decides what a makespan is) and that engine
 * as a cost oracle (dp_oracle.h). Every command (place, train, validate), the sweep runner, the
 * benchmarks and the Python package build their problems through dp_problem_alloc, so that a
 * graph on a machine has one cost table and one engine wherever it is simulated.
 */
#ifndef DP_PROBLEM_H
#define DP_PROBLEM_H

#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_error.h"
#include "dp_graph.h"
#include "dp_machine.h"
#include "dp_oracle.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_problem {
    const dp_graph *graph;     /* borrowed: outlives the problem */
    const dp_machine *machine; /* borrowed: outlives the problem (loaded by dp_problem_alloc) */
    const dp_cost *costs;      /* dp_machine_costs(machine, graph) (owned), or the graph's own
                                * (dp_problem_alloc_with_costs: borrowed) */
    dp_engine *engine;         /* owned: dp_engine_alloc(graph, costs, machine) */
    dp_oracle oracle;          /* dp_engine_oracle(engine): valid while the problem lives */
    dp_cost *owned_costs;      /* costs when the problem made them, else NULL */
} dp_problem;

/* The problem of graph g on machine m: loads m's topology and calibration (dp_machine_load) when
 * they are not loaded yet, computes g's cost tables on m and allocates the engine. g and m are
 * borrowed and must outlive the problem; m may be changed after this call only in keys that
 * enter the cost tables (bandwidth, comm_ratio, peak_flops, latency: read here once). Returns the
 * problem, or NULL with err set: dp_machine_load's errors (a missing or malformed topology or
 * calibration file, named), dp_machine_costs's (a graph the machine cannot cost: DP_EINVAL with
 * the machine key named), dp_engine_alloc's (DP_EINVAL, DP_ERANGE), DP_ENOMEM. */
dp_problem *dp_problem_alloc(const dp_graph *g, dp_machine *m, dp_error *err);

/* The problem of graph g with cost tables c that come with it (a heterogeneous example's own
 * per-processor times: dp_hetero.h; the real executor's measured tables) on machine m, whose
 * device count must be c's. c is borrowed and must outlive the problem. Errors as
 * dp_problem_alloc's. */
dp_problem *dp_problem_alloc_with_costs(const dp_graph *g, const dp_cost *c, dp_machine *m, dp_error *err);

/* Free p (its costs and engine; not the graph or the machine). NULL is a no-op. */
void dp_problem_free(dp_problem *p);

/* Accessors for bindings that hold the problem as an opaque handle (the Python package). */
const dp_cost *dp_problem_costs(const dp_problem *p);
dp_engine *dp_problem_engine(const dp_problem *p);
const dp_oracle *dp_problem_oracle(const dp_problem *p);

#ifdef __cplusplus
}
#endif
#endif
