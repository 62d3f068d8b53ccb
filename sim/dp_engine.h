/* dp_engine.h: the one entry point that decides what a makespan is.
 *
 * An engine simulates assignments of one graph on one machine (dp_machine.h). It takes the
 * exact fast path (dp_sim.h: the DOPPLER-compatible engine, fixed transfer delays, one op at a
 * time per device, FIFO) when the machine allows it (no topology and the default simulator
 * options: dp_machine_general() == 0), and the general engine (dp_hisim.h) otherwise; both give
 * the same makespans where both apply (tests/test_hifi.c). Every command, placement method,
 * search, trainer, sweep and the Python interface simulates through an engine, so a placement
 * is scored by one model wherever it is printed.
 *
 * Usage: e = dp_engine_alloc(g, c, m); any number of dp_engine_run(e, assignment, NULL, &s);
 * dp_engine_free(e). An engine is a workspace: one per thread. Its cost oracle
 * (dp_engine_oracle) is what methods and trainers take.
 */
#ifndef DP_ENGINE_H
#define DP_ENGINE_H

#include <stddef.h>

#include "dp_cost.h"
#include "dp_error.h"
#include "dp_graph.h"
#include "dp_machine.h"
#include "dp_oracle.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_engine dp_engine;

/* A simulated schedule. Arrays are owned by the engine and valid until its next run. Times are
 * in the graph's raw time unit (printed value = time / g->time_scale). */
typedef struct dp_engine_schedule {
    double makespan;            /* last op end */
    double cost;                /* what the oracle returns: the penalised makespan under the
                                 * memory penalty policy (dp_hisim.h), else the makespan */
    int n_devices;
    const double *busy;         /* (n_devices) compute time per device */
    const double *op_start;     /* (n_ops) */
    const double *op_end;       /* (n_ops) */
    const double *op_ready;     /* (n_ops) when the op joined its device's queue (all inputs
                                 * arrived; its level released in bulk-synchronous mode) */
    const double *xfer_start;   /* (n_edges) transfer start, or NULL on the fast path (a transfer
                                 * then starts at its producer's end and lasts dp_cost_comm) */
    const double *xfer_end;     /* (n_edges) arrival; NULL on the fast path */
    const double *mem_peak;     /* (n_devices) peak memory in bytes; NULL on the fast path */
    double mem_excess;          /* max over devices of (peak - capacity) / capacity; 0 within
                                 * capacity, without a limit and on the fast path */
    long n_transfers;           /* cross-device edges moved */
    double transfer_volume;     /* their edge_data summed (bytes, or time units for time graphs) */
    long n_events;              /* events processed */
} dp_engine_schedule;

/* An engine for graph g under cost tables c (dp_machine_costs(m, g)) on machine m. g and c must
 * outlive the engine; m is read at this call only (its loaded topology and calibration must
 * outlive the engine). m NULL: the default machine (dp_machine_init: the DOPPLER-compatible
 * fast path on c's devices). Errors (DP_EINVAL): c does not match g or the machine, options the
 * general engine refuses (dp_hisim_alloc); DP_ERANGE: costs whose makespans could be inf, NaN or
 * overflowing (dp_cost_check: a time not finite or negative, a serial bound beyond
 * DP_COST_TIME_MAX); DP_ENOMEM. */
dp_engine *dp_engine_alloc(const dp_graph *g, const dp_cost *c, const dp_machine *m, dp_error *err);
/* Free the engine and what it owns (its simulator, dp_engine_fast_sim's included, and its
 * priorities); not g, c or the machine's topology and calibration. The schedules its runs filled
 * point into it and are invalid after it; its incumbents (dp_engine_incumbent_alloc) must be
 * freed first. NULL is a no-op. */
void dp_engine_free(dp_engine *e);

/* Simulate an assignment (n_ops device ids in 0..n_devices-1). priority (n_ops, higher runs
 * first, finite) orders a priority queue; NULL: the b-levels (dp_cost_levels), as every command
 * does; FIFO queues ignore it. Errors: DP_EINVAL (no assignment; a device out of range, naming the
 * op; on a priority queue a priority that is NaN or infinite, naming the op), DP_ERANGE (a memory
 * capacity exceeded under the error policy), DP_ENOMEM. */
int dp_engine_run(dp_engine *e, const int *assignment, const double *priority, dp_engine_schedule *out, dp_error *err);

/* Bounded simulation (issue 31): the cost of an assignment (dp_engine_schedule.cost, as
 * dp_engine_run with the default priorities) when it is at most bound, else a number above bound
 * that is no more than the cost: the run stops as soon as the simulated clock passes bound, or
 * as soon as a device's work left shows the cost is above it (early rejection,
 * dp_engine_set_early_reject) (dp_sim_run_bounded, dp_hisim_run_bounded; a machine with a memory
 * limit under the error policy always runs in full). *exceeded (may be NULL) says which. Counted in
 * dp_engine_simulations like a full run. A search that accepts a move only at a cost of at most
 * bound takes the same decisions as with full runs, in less time. Errors as dp_engine_run's. */
int dp_engine_run_bounded(dp_engine *e, const int *assignment, double bound, double *cost, int *exceeded, dp_error *err);

/* ---- delta simulation (issue 31) ----
 *
 * A search that moves a few ops of an incumbent assignment at a time keeps the incumbent in a
 * dp_engine_incumbent and asks for each candidate's cost with dp_engine_run_delta: on the exact
 * fast path the engine resumes from the incumbent's recorded schedule at the first instant the
 * moves can change (dp_sim_run_delta, dp_sim.h: the same cost bit for bit within the bound, ties
 * of the event order included) and stops at the bound as dp_engine_run_bounded does. The general
 * engine resumes from a snapshot of the incumbent's event state taken before the first instant
 * the moves can change (dp_hisim_run_delta, dp_hisim.h "delta runs": the whole state, the transfer
 * model's included, so every transfer model, copy engines, streams, memory and interference;
 * the same costs within the bound bit for bit), with FIFO queues in asynchronous mode; with
 * priority queues or in bulk-synchronous mode it runs each candidate in full with the bound (the
 * same costs, no saving). Which ops moved is found by comparing with the incumbent (O(n_ops)
 * integer compares).
 *
 * Usage: inc = dp_engine_incumbent_alloc(e); dp_engine_incumbent_set(inc, a, &cost); per move:
 * change a, dp_engine_run_delta(inc, a, bound, &cost, &exceeded); when the move is kept,
 * dp_engine_incumbent_accept(inc, a) before any other run of e; when it is undone, nothing. */
typedef struct dp_engine_incumbent dp_engine_incumbent;

/* An incumbent of engine e (which must outlive it); NULL with err filled when out of memory. */
dp_engine_incumbent *dp_engine_incumbent_alloc(dp_engine *e, dp_error *err);
/* Free the incumbent (not its engine). NULL is a no-op. */
void dp_engine_incumbent_free(dp_engine_incumbent *inc);

/* Simulate assignment in full and make it the incumbent; *cost (may be NULL) is its cost
 * (dp_engine_schedule.cost). Counted in dp_engine_simulations. Errors as dp_engine_run's. */
int dp_engine_incumbent_set(dp_engine_incumbent *inc, const int *assignment, double *cost, dp_error *err);

/* The cost of assignment up to bound as dp_engine_run_bounded(e, assignment, bound, cost,
 * exceeded) gives it (the same verdict; within the bound the same cost bit for bit, bound
 * INFINITY: the cost; above it a number above bound and no more than the cost, not always the
 * same number: dp_sim_set_early_reject), resumed from the incumbent
 * on the fast path (above). Counted in dp_engine_simulations. The incumbent is unchanged.
 * Errors: dp_engine_run_bounded's; DP_EINVAL before dp_engine_incumbent_set. */
int dp_engine_run_delta(dp_engine_incumbent *inc, const int *assignment, double bound, double *cost, int *exceeded,
                        dp_error *err);

/* dp_engine_run_delta for a search that knows its move: assignment differs from the incumbent's
 * at most at the ops moved[0..n_moved) (the caller's promise, not checked: a broken one gives a
 * wrong cost; an op may be listed that did not change). On the exact engine without delta runs
 * (graphs under DP_ENGINE_DELTA_MIN_OPS ops) the run then updates its per-assignment tables from
 * this move and the last one instead of comparing every op's device with the last run's
 * (dp_sim_run_bounded_changed: about 2% of an annealing move on DOPPLER's Llama-block); a run of
 * e by any other call in between, or more than 8 moved ops, and it compares them all. n_moved -1
 * (moved NULL): no promise, dp_engine_run_delta. The same cost, verdict and counts as
 * dp_engine_run_delta. Errors: dp_engine_run_delta's; DP_EINVAL for n_moved > 0 with no list or
 * a listed op out of range. */
int dp_engine_run_delta_moved(dp_engine_incumbent *inc, const int *assignment, const int *moved, int n_moved,
                              double bound, double *cost, int *exceeded, dp_error *err);

/* Make assignment, the last dp_engine_run_delta's and e's last run, the incumbent. A run stopped
 * by its bound cannot be accepted (its schedule is incomplete): DP_EINVAL, the incumbent as it
 * was; with delta runs, neither can another assignment than the run's (dp_sim_delta_commit's
 * check; without them, one that differs from the run's at the ops a dp_engine_run_delta_moved
 * run moved, else the caller's promise). O(k log k) for the k ops the run simulated again. */
int dp_engine_incumbent_accept(dp_engine_incumbent *inc, const int *assignment, dp_error *err);

/* The incumbent's schedule into *out: makespan, cost, busy, op_start, op_end and op_ready as
 * dp_engine_run gives them for its assignment, bit for bit (owned by inc, valid until its next
 * set or accept; without delta runs, until e's next run: the schedule of the incumbent's full
 * run, xfer_* and mem_* included). With delta runs the transfer counts, xfer_*, mem_* and
 * n_events are 0 / NULL: the recorded schedule does not keep them. Errors (DP_EINVAL): the
 * incumbent is not set; without delta runs, a run of a candidate since that was not accepted
 * (its schedule is gone: e's last run is the candidate's). */
int dp_engine_incumbent_schedule(dp_engine_incumbent *inc, dp_engine_schedule *out, dp_error *err);

/* Graphs of at least this many ops use delta runs by default (dp_engine_set_delta -1) where the
 * exact engine computes runs op by op (dp_sim_op_order_on; a delta run then resumes the op-order
 * run, dp_sim.h "Op by op"); where it cannot (an op of time 0), delta runs are on at every size
 * (they resume the event loop, which a full run would go through too). Below it a bounded full
 * op-order run costs less than a delta run, which records its events' places and counts the
 * pending inputs of the ops it simulates again: annealing's moves per second with delta runs on
 * over off, on generated graphs (bench/bench_delta, EXPERIMENTS.md "Delta runs op by op"; chosen
 * on those, not on DOPPLER's graphs, two runs): 0.87 to 0.97 at 48 to 168 ops, 0.97 to 1.04 at
 * 216 to 224, 1.01 to 1.15 at 288 to 417 on 4 devices but 0.92 to 0.98 at 216 to 336 on 8 (1.04
 * to 1.07 at 417), 1.07 to 1.97 at 1,056 to 5,713 ops. Re-checked at 5d5126e (EXPERIMENTS.md
 * "Tables per assignment"): 0.84 to 0.93 at 48 to 168 ops, 0.95 to 1.03 at 216 to 336, 1.06 to
 * 1.07 at 417, 1.08 to 1.18 at 1,056 to 1,581. On DOPPLER's Llama-block (182 ops) at 2a7004e a
 * delta run takes a fifth fewer instructions a move than a bounded full run (36,380 against
 * 45,005, cachegrind) and still 15% more time (EXPERIMENTS.md "A moved op's grant"). */
#define DP_ENGINE_DELTA_MIN_OPS 400

/* Delta runs on (1), off (0: dp_engine_run_delta runs every candidate in full, bounded), or by
 * the graph's size (-1, the default: on the exact engine from DP_ENGINE_DELTA_MIN_OPS ops, or
 * always, above; on the general engine at every size where it supports them: annealing's moves
 * per second 1.25 to 1.6 times those of full runs from 72 to 18,457 ops, EXPERIMENTS.md "Delta
 * runs on the general engine"). Either way the same
 * costs and decisions; only the time differs. For tests and benchmarks. Takes effect at the next
 * dp_engine_incumbent_set. */
void dp_engine_set_delta(dp_engine *e, int on);

/* Early rejection of bounded runs on (1, the default) or off (0): dp_sim_set_early_reject or
 * dp_hisim_set_early_reject, whichever engine e is. Either way the same verdicts, the same costs
 * within the bound and the same decisions of every search; only the time differs. For tests and
 * benchmarks. */
void dp_engine_set_early_reject(dp_engine *e, int on);

/* Delta-run statistics of e's incumbents: runs resumed at an instant after 0, runs from the
 * start (sets, and moves of a source), and ops simulated by them (summed; the exact engine's
 * runs only: the general engine counts events, dp_hisim_delta_stats). */
void dp_engine_delta_stats(const dp_engine *e, long *resumed, long *full, long *resimulated);

/* Simulate a placed prefix (dp_sim_run_prefix, dp_hisim_run_prefix): ops with device -1 are
 * absent, the placed ones (closed under predecessors) run as they would in a graph made of them
 * alone; per-op arrays hold -1 for absent ops. This is what the assignment environment's engine
 * state (dp_env.h) re-simulates. Not counted in dp_engine_simulations (a prefix run is part of
 * building one placement, not a placement scored); dp_engine_prefix_simulations counts them.
 * Errors as dp_engine_run's, and DP_EINVAL for a placed op with an absent predecessor. */
int dp_engine_run_prefix(dp_engine *e, const int *assignment, const double *priority, dp_engine_schedule *out, dp_error *err);

/* Simulate a batch of n_batch assignments, assignments (n_batch, n_ops) row-major (row b is
 * assignments[b * n_ops .. (b + 1) * n_ops)), all with one priority array (as dp_engine_run;
 * NULL: the b-levels). Writes makespan (n_batch) and, where not NULL, cost (n_batch: each
 * schedule's dp_engine_schedule.cost) and busy (n_batch, n_devices: compute time per device). The same
 * numbers as n_batch calls of dp_engine_run, for callers that pay per call (the Python
 * interface: one call per batch instead of one per assignment). Stops at the first row that
 * fails, with dp_engine_run's error prefixed by "assignment B" (B its row, from 0); the rows
 * before it are written. */
int dp_engine_run_batch(dp_engine *e, long n_batch, const int *assignments, const double *priority,
                        double *makespan, double *cost, double *busy, dp_error *err);

/* Transfer times of schedule s, the last run of e (of `assignment`): start[k] and end[k]
 * (arrival) for every edge k (n_edges each) that moved data between two devices, -1 for the
 * others (both ends on one device; on the general engine also the repeated copies of an edge,
 * whose data moved with the first). On the general engine these are s->xfer_start and
 * s->xfer_end; on the fast path, whose transfers are unlimited and parallel, a transfer starts at
 * its producer's end and lasts dp_cost_comm. Raw time units, as the schedule. */
void dp_engine_transfers(const dp_engine *e, const int *assignment, const dp_engine_schedule *s, double *start,
                         double *end);

/* The engine as a cost oracle (dp_oracle.h): cost = dp_engine_schedule.cost of the assignment with the
 * default priorities; its engine member is e (the schedules and prefix state a method may read).
 * The oracle points into e and is valid while e lives. */
dp_oracle dp_engine_oracle(dp_engine *e);

/* 1 when e runs the general engine, 0 on the exact fast path. */
int dp_engine_is_general(const dp_engine *e);
/* 1 when e's devices queue ready ops by priority (the machine's queue "priority"): a placement's
 * makespan then depends on the priorities it is run with, 0 otherwise (FIFO: it does not). */
int dp_engine_priority_queue(const dp_engine *e);

/* What e simulates beyond its cost tables, as a 64-bit fingerprint: 0 on the exact fast path
 * (which reads the cost tables only), dp_hisim_fingerprint on the general engine. */
uint64_t dp_engine_fingerprint(const dp_engine *e);

/* The exact fast path's simulator (dp_sim.h), or NULL when e runs the general engine: for the
 * incremental prefix simulation of the assignment environment (dp_sim_prefix_add). It belongs
 * to e (its runs overwrite e's last schedule). */
struct dp_sim *dp_engine_fast_sim(dp_engine *e);

/* The general engine's simulator (dp_hisim.h), or NULL on the exact fast path: for the
 * assignment environment's delta runs of its placed prefix (dp_hisim_delta). It belongs to e
 * (its runs overwrite e's last schedule). */
struct dp_hisim *dp_engine_general_sim(dp_engine *e);

/* Simulations run so far: the runs that succeeded, and those stopped by a resource limit
 * (DP_ERANGE: memory capacity under the error policy), which ran up to it; not the prefix runs
 * (dp_engine_prefix_simulations). */
long dp_engine_simulations(const dp_engine *e);
/* Prefix simulations run so far (dp_engine_run_prefix calls that succeeded). */
long dp_engine_prefix_simulations(const dp_engine *e);

/* The graph and the cost tables e was made for (dp_engine_alloc's g and c, not copies: the
 * caller's, which it still owns). e must be non-NULL (unchecked). */
const dp_graph *dp_engine_graph(const dp_engine *e);
const dp_cost *dp_engine_costs(const dp_engine *e);

/* Write the last run (which must have been of `assignment`) as Chrome trace JSON (dp_sim.h and
 * dp_hisim.h describe the rows). With the general engine, rate and channel counters need
 * the machine's sim.trace option. Atomic write. */
int dp_engine_write_trace(const dp_engine *e, const int *assignment, const char *path, dp_error *err);

/* sizeof(dp_oracle) and sizeof(dp_engine_schedule) in this build: a binding that does not lay
 * them out gives dp_engine_run a buffer of dp_engine_schedule_size() bytes (aligned for a
 * double) and reads it through the accessors below. */
size_t dp_engine_oracle_size(void);
size_t dp_engine_schedule_size(void);

/* Reading a schedule without laying out dp_engine_schedule (bindings: Python's Schedule). s
 * non-NULL (unchecked), filled by dp_engine_run; pointers are the engine's, valid until its next
 * run. Times in the graph's raw unit (printed = time / time_scale). makespan, cost, mem_excess
 * (a ratio), n_transfers, transfer_volume (bytes, or time units for time graphs), n_events;
 * busy (n_devices doubles), op_start, op_end, op_ready (n_ops doubles), mem_peak (n_devices
 * doubles, bytes; NULL on the fast path): the fields of the same names. */
double dp_engine_schedule_get_makespan(const dp_engine_schedule *s);
double dp_engine_schedule_get_cost(const dp_engine_schedule *s);
double dp_engine_schedule_get_mem_excess(const dp_engine_schedule *s);
long dp_engine_schedule_get_n_transfers(const dp_engine_schedule *s);
double dp_engine_schedule_get_transfer_volume(const dp_engine_schedule *s);
long dp_engine_schedule_get_n_events(const dp_engine_schedule *s);
const double *dp_engine_schedule_get_busy(const dp_engine_schedule *s);
const double *dp_engine_schedule_get_op_start(const dp_engine_schedule *s);
const double *dp_engine_schedule_get_op_end(const dp_engine_schedule *s);
const double *dp_engine_schedule_get_op_ready(const dp_engine_schedule *s);
const double *dp_engine_schedule_get_mem_peak(const dp_engine_schedule *s);

#ifdef __cplusplus
}
#endif
#endif
