/* dp_oracle.h: the cost oracle a placement method, a search or a training stage asks for the
 * cost of an assignment.
 *
 * DOPPLER's Stage II asks the simulator and Stage III asks real execution (Yao et al. 2026,
 * env/cost.py: Simulator and RealExecuteEngine); methods and trainers see only this interface.
 * The simulator's oracle is dp_engine_oracle (dp_engine.h: the machine's one engine); real
 * execution's is dp_exec_oracle (dp_exec.h). No method builds an engine of its own.
 */
#ifndef DP_ORACLE_H
#define DP_ORACLE_H

#include "dp_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_oracle {
    const char *name; /* "simulator", "real", ... (recorded in trajectories) */
    /* Fill *cost with the cost of assignment (n_ops device ids): the makespan (the penalised
     * makespan under a memory penalty policy), in the graph's raw time unit (printed value =
     * cost / graph->time_scale). Returns DP_OK or an error status with err filled. */
    int (*cost)(void *ctx, const int *assignment, double *cost, dp_error *err);
    void *ctx;
    /* Optional (NULL: cost alone): the cost when it is at most bound, else any number above
     * bound and no more than the cost (a simulation stopped as soon as its clock passed bound,
     * or a lower bound on the cost above it: dp_engine_run_bounded). A search that rejects every cost above bound decides as with cost,
     * sooner. */
    int (*cost_bounded)(void *ctx, const int *assignment, double bound, double *cost, dp_error *err);
    /* Optional (NULL: the oracle has no simulated schedule, e.g. real execution): the simulator
     * behind this oracle (dp_engine.h), whose schedules (each op's start and end) and
     * partial-simulation state the improvement search and the environment's "engine" state read.
     * A capability the oracle declares, so that no method casts an oracle back to its engine. */
    struct dp_engine *engine;
    /* Optional (NULL: engine): an engine whose partial-simulation state the environment's
     * "engine" state reads as its estimate when the oracle's costs are not that engine's own, so
     * engine is NULL (a coarsened problem's expanded oracle, dp_coarse.h: the policy's state is
     * the group graph's engine, its cost the whole graph's on the machine). Searches never read
     * it: they simulate through engine or cost. */
    struct dp_engine *state_engine;
    /* Optional (NULL: the cost is no simulation, e.g. real execution): the engine whose
     * simulation gives cost: engine itself (dp_engine_oracle), or for an expanded oracle of a
     * coarsened problem the whole graph's engine. Only what a checkpoint records of the oracle
     * (dp_runtime_trained_on's simulator fingerprint); never a schedule to read. */
    struct dp_engine *simulator;
} dp_oracle;

/* Ask oracle o for the cost of an assignment (a checked call: o must not be NULL). */
static inline int dp_oracle_cost(const dp_oracle *o, const int *assignment, double *cost, dp_error *err)
{
    return o->cost(o->ctx, assignment, cost, err);
}

/* Ask o for the cost of an assignment that matters only up to bound: o's bounded cost where it
 * has one, else its cost (see dp_oracle.cost_bounded). */
static inline int dp_oracle_cost_bounded(const dp_oracle *o, const int *assignment, double bound, double *cost,
                                         dp_error *err)
{
    return o->cost_bounded ? o->cost_bounded(o->ctx, assignment, bound, cost, err) : o->cost(o->ctx, assignment, cost, err);
}

#ifdef __cplusplus
}
#endif
#endif
