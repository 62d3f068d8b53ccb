/* dp_oracle.h: the cost oracle a training stage asks for the makespan of an assignment.
 *
 * DOPPLER's Stage II asks the simulator and Stage III asks real execution (Yao et al. 2026,
 * env/cost.py: Simulator and RealExecuteEngine); training code sees only this interface. The
 * default is the DOPPLER-compatible simulator (dp_sim) over the cost tables in force; the
 * contention-aware models and the real-device validator plug in the same way.
 */
#ifndef DP_ORACLE_H
#define DP_ORACLE_H

#include "dp_error.h"
#include "dp_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_oracle {
    const char *name; /* "simulator", "real", ... (recorded in trajectories) */
    /* Fill *makespan with the makespan of assignment (n_ops device ids), in the cost model's time
     * unit (the graph's raw unit: printed value = makespan / graph->time_scale). Returns DP_OK or
     * an error status with err filled. */
    int (*cost)(void *ctx, const int *assignment, double *makespan, dp_error *err);
    void *ctx;
} dp_oracle;

/* The simulator as oracle; ctx is a dp_sim *. */
int dp_oracle_sim_cost(void *ctx, const int *assignment, double *makespan, dp_error *err);

static inline dp_oracle dp_oracle_sim(dp_sim *s)
{
    dp_oracle o = {"simulator", dp_oracle_sim_cost, s};
    return o;
}

#ifdef __cplusplus
}
#endif
#endif
