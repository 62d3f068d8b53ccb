/* dp_sim.h: discrete-event simulation of an assignment on an asynchronous, work-conserving
 * runtime.
 *
 * This is the DOPPLER-compatible engine: the fixed-delay transfer model, one compute slot per
 * device served first come first served, transfers that never wait for each other. With the
 * graph's own costs (dp_cost_graph) it reproduces the authors' SimPy simulator (Yao et al. 2026,
 * env/cost.py) exactly, ties included: the events of
 * ../shared/data/doppler-graphs/reference-makespans/README.md are processed in order of
 * (time, priority, sequence number). The engine is exact and fast: events scheduled with zero
 * delay go to a FIFO behind the heap events of the same instant, which is the order their
 * sequence numbers give, so the heap only holds events in the future.
 *
 * Usage: s = dp_sim_alloc(g, costs); then any number of dp_sim_run(s, assignment, &res);
 * dp_sim_free(s). A dp_sim is a workspace: one per thread.
 */
#ifndef DP_SIM_H
#define DP_SIM_H

#include <stdint.h>

#include "dp_cost.h"
#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_sim dp_sim;

typedef struct dp_sim_result {
    double makespan;          /* time of the last op finish, in the graph's time unit (raw) */
    int n_devices;
    const double *busy;       /* (n_devices) total compute time per device; owned by the sim */
    long n_transfers;         /* cross-device edges (a repeated edge counts each time) */
    double transfer_volume;   /* sum of edge_data over cross-device edges (bytes or time) */
    const double *op_start;   /* (n_ops) start time of each op; owned by the sim */
    const double *op_end;     /* (n_ops) end time of each op */
    const double *op_ready;   /* (n_ops) when each op joined its device's queue (its last input
                                 arrived) */
    long n_events;            /* events processed (for benchmarks) */
} dp_sim_result;

/* Allocate a simulator workspace for graph g under costs c (both must outlive it).
 * Returns NULL with err filled when out of memory or when c does not match g. */
dp_sim *dp_sim_alloc(const dp_graph *g, const dp_cost *c, dp_error *err);
void dp_sim_free(dp_sim *s);

/* Simulate the assignment (n_ops device ids in 0..n_devices-1). res's arrays stay valid until
 * the next run. Returns DP_OK, or DP_EINVAL (naming the op) for a device id out of range. */
int dp_sim_run(dp_sim *s, const int *assignment, dp_sim_result *res, dp_error *err);

/* Simulate a placed prefix: ops with device -1 are absent (never run, never waited for, no
 * transfer to them), the others run exactly as dp_sim_run runs a graph made of them alone. The
 * placed ops must be closed under predecessors (every predecessor of a placed op is placed),
 * which the ready-set order of an assignment episode (dp_env.h) guarantees. res as dp_sim_run's;
 * op_start, op_end and op_ready are -1 for absent ops; the makespan is the last placed op's end
 * (0 with nothing placed). Costs O(placed ops + their edges) plus O(n_ops) for the check.
 * Errors (DP_EINVAL): a device id other than -1 out of range; a placed op with an absent
 * predecessor (naming both).
 *
 * A prefix's schedule is not in general the final schedule of those ops: an op placed later
 * may become ready on a device before an op placed earlier and, first come first served, run
 * ahead of it (dp_env.h, "engine state"). With every op placed it is dp_sim_run's schedule. */
int dp_sim_run_prefix(dp_sim *s, const int *assignment, dp_sim_result *res, dp_error *err);

/* Utilisation of device d in res: busy[d] / makespan (0 when the makespan is 0). */
double dp_sim_utilisation(const dp_sim_result *res, int d);

/* Write the last run as Chrome trace JSON (one row per device, one slice per op, transfers as
 * flow events), viewable in Perfetto or chrome://tracing. Times are written in microseconds of
 * the printed unit (raw time / time_scale * 1e6). Atomic write. */
int dp_sim_write_trace(const dp_sim *s, const int *assignment, const char *path, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
