/* dp_hisim.h: the general (high-fidelity) event engine: a topology's links under a chosen
 * transfer model, copy engines, k compute streams per device, FIFO or priority queues, memory
 * accounting, asynchronous or bulk-synchronous execution.
 *
 * With the default options (fixed-delay transfers, one stream, FIFO queues, asynchronous, no
 * memory limit, no topology) it processes the same events in the same order as dp_sim (see
 * dp_sim.h; less dp_sim's events for the repeats of repeated edges, which change nothing) and
 * gives identical makespans and op start times; dp_sim stays the fast path for that case.
 *
 * The system simulated:
 *  - an op is ready when all its in-edges have arrived on its device (asynchronous mode) or when
 *    its level is released (bulk-synchronous mode, below); it then queues for one of its
 *    device's `streams` compute slots, first come first served or by the caller's priority
 *    (higher first, ties first come first served, in the order the ready events ran; grants
 *    made at the end of the instant schedule later events in another order than FIFO's, so
 *    equal priorities are not the FIFO queue); it runs op_time(v, device) seconds.
 *    FIFO queues grant a free stream the moment an op is ready (dp_sim's and the reference's
 *    order). Priority queues grant at the end of each instant, once every event of that instant
 *    has run (zero-time ops included, in further rounds of the same instant): the highest
 *    priority among all ops ready at that instant wins, whichever ready event came first. Both
 *    are work-conserving: a free stream never waits for a better op still to come, so a list
 *    schedule (HEFT, CPOP, ...) simulated with its own ranks is realised start for start unless
 *    it keeps a device idle while a lower-priority op is ready for it;
 *  - a repeated edge (same source and destination as an earlier one) is one input, as in dp_sim
 *    and the reference: the op waits only for the first copy, and the repeat moves no data (no
 *    transfer, no memory, not counted in n_transfers, where dp_sim counts every copy);
 *  - when an op finishes, each out-edge to an op on the same device arrives at once, each edge to
 *    another device is a transfer under the transfer model (dp_transfer.h), one per edge;
 *  - copy engines: a transfer from a to b needs one of a's outgoing and one of b's incoming copy
 *    engines (each device has copy_engines per direction in the topology; 0 = unlimited) for its
 *    whole duration; a transfer starts when requested if both its engines are free, else it
 *    waits. Engines freed at one instant are granted together, once that instant's events have
 *    run, each to the oldest waiting request whose two engines are then free (a younger request
 *    whose engines are free does not wait behind an older one blocked on another engine);
 *    requests of one instant are ordered as the events that made them were scheduled; ends that differ by rounding only (by at most DP_HISIM_COINCIDE_REL
 *    of the clock, e.g. 0.1 + 0.2 against 0.3) are one instant for this grant, made at the
 *    latest of them, so that a younger request never overtakes an older one because the engine
 *    it waits for came free a few ulps earlier;
 *  - memory (bytes of the graph; for DP_GRAPH_COST_TIME graphs the file's comm units): an op's output
 *    (out_size) occupies its device from the op's start until every local consumer has finished
 *    and every outgoing transfer has ended (the output of a sink stays to the end); a transferred
 *    edge (edge_data) occupies the receiving device from the transfer's start until its consumer
 *    finishes. Peak per device is reported; with a capacity an over-capacity run fails
 *    (DP_ERANGE naming device, op and time) or, with the penalty policy, completes and reports
 *    the excess;
 *  - interference (only where the options' calibration gives a device "interference", see
 *    dp_costmodel.h; doppler calibrate measures it): an op on device d progresses at rate
 *        1 / (1 + peer_busy(d) x j) - copy_in(d) x k
 *    of its calibrated speed while k transfers into d are in flight and j other devices run an
 *    op; its end moves whenever k or j changes (remaining work / new rate; at a rate r of 0 or
 *    below the op falls back, its work left growing by -r seconds a second and its end waiting
 *    for the copies to end, unless its work left is within a few ulps of the clock: it ends
 *    then). copy_in describes a
 *    device whose copy engine is a thread on its own core (the CPU executor's copy worker: every
 *    second of a copy into d costs d's kernel copy_in seconds, cache refill included: the
 *    quantity doppler calibrate fits, extra kernel seconds over overlapped copy seconds; until
 *    2026-12-07 the rate was 1 / (1 + copy_in x k + ...), which charged copy_in / (1 + copy_in)
 *    seconds a second);
 *    peer_busy describes devices that share memory bandwidth, caches or a clock budget (cores
 *    of one socket). Transfers themselves are not slowed. Without interference the engine is
 *    event for event the one described above;
 *  - bulk-synchronous mode: op levels are longest-path depths from the sources (level 0 =
 *    sources); level L+1 is released (its ops become ready, in op id order) when every op of
 *    level L and every transfer out of those ops has ended. This is the superstep execution of
 *    the systems DOPPLER compares against (Yao et al. 2026, introduction).
 */
#ifndef DP_HISIM_H
#define DP_HISIM_H

#include <stddef.h>

#include "dp_cost.h"
#include "dp_costmodel.h"
#include "dp_graph.h"
#include "dp_topology.h"
#include "dp_transfer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DP_HISIM_MODE_ASYNC = 0, DP_HISIM_MODE_BSP } dp_hisim_mode;
typedef enum { DP_HISIM_QUEUE_FIFO = 0, DP_HISIM_QUEUE_PRIORITY } dp_hisim_queue_kind;
typedef enum { DP_HISIM_MEMORY_ERROR = 0, DP_HISIM_MEMORY_PENALTY } dp_hisim_memory_policy;

/* memory_limit value meaning "each device's memory_bytes from the topology" */
#define DP_HISIM_MEMORY_TOPOLOGY (-1.0)

/* Relative tolerance (of the clock, in seconds or the graph's time unit) within which transfer
 * ends are one instant for the copy-engine grant (see above): about 4,500 ulps, far above the
 * rounding of sums of a few thousand event times and far below any latency or duration that the
 * engine models (at t = 1 s: 1e-12 s). */
#define DP_HISIM_COINCIDE_REL 1e-12

typedef struct dp_hisim_options {
    dp_transfer_kind transfer_model;   /* default DP_TRANSFER_FIXED */
    int chunks;                    /* FIFO model: chunks per transfer (default 1) */
    dp_hisim_mode mode;             /* default DP_HISIM_MODE_ASYNC */
    int streams;                   /* compute streams per device; 0 (default): the topology's, 1 without */
    dp_hisim_queue_kind queue;           /* default DP_HISIM_QUEUE_FIFO */
    double memory_limit;           /* bytes per device; 0 (default) none; DP_HISIM_MEMORY_TOPOLOGY */
    dp_hisim_memory_policy memory_policy;/* default DP_HISIM_MEMORY_ERROR */
    double memory_penalty;         /* penalty policy: penalised = makespan x (1 + penalty x excess); default 1 */
    int copy_engines;              /* 1 (default): the topology's limits; 0: unlimited */
    int trace;                     /* 1: keep channel/rate logs for dp_hisim_write_trace */
    const dp_calib *calibration;   /* the calibration the cost tables were made with (NULL, the
                                    * default: none): FIFO and max-min then time its routes by it
                                    * (dp_transfer.h); must outlive the workspace */
} dp_hisim_options;

/* Set every field of o (non-NULL, unchecked) to its default: the fixed transfer model with 1
 * chunk, asynchronous mode, streams 0 (the topology's, 1 without one), FIFO queues, no memory
 * limit (0) under the error policy with penalty 1, copy_engines 1 (the topology's limits), no
 * trace, no calibration (NULL). Options so initialised are the defaults of
 * dp_hisim_options_default (dp_sim's engine). */
void dp_hisim_options_init(dp_hisim_options *o);

/* 1 when the options are the defaults dp_sim implements (then dp_sim gives the same result). */
int dp_hisim_options_default(const dp_hisim_options *o);

typedef struct dp_hisim_result {
    double makespan;            /* time of the last op end (graph time unit) */
    int n_devices;
    const double *busy;         /* (n_devices) total compute time (op times at full rate: without
                                 * the stretch of interference) */
    long n_transfers;           /* cross-device edges (first copies of repeated edges only) */
    double transfer_volume;     /* sum of their edge_data */
    const double *op_start, *op_end;  /* (n_ops) */
    const double *op_ready;     /* (n_ops) when the op joined its device queue */
    const int *op_stream;       /* (n_ops) the stream it ran on */
    const double *xfer_request; /* (n_edges) when the transfer was asked for (-1: local edge) */
    const double *xfer_start;   /* (n_edges) when it got its copy engines and started */
    const double *xfer_end;     /* (n_edges) when it arrived */
    const double *mem_peak;     /* (n_devices) peak memory */
    const double *mem_capacity; /* (n_devices) capacity in force (0: none) */
    double mem_excess;          /* max over devices of (peak - capacity) / capacity, 0 when within */
    double penalised_makespan;  /* makespan x (1 + penalty x excess) (= makespan without excess) */
    const double *chan_bytes;   /* (topology channels) bytes carried per channel; NULL without topology */
    long n_events;              /* engine events + transfer model events */
} dp_hisim_result;

typedef struct dp_hisim dp_hisim;

/* Workspace for graph g under costs c on topology t (NULL: no topology, then only the fixed
 * transfer model, unlimited copy engines and the options' stream count are possible). All
 * must outlive it. Errors (DP_EINVAL): c does not match g, t's device count differs from c's, a
 * contention model without a topology, bad option values; DP_ENOMEM. */
dp_hisim *dp_hisim_alloc(const dp_graph *g, const dp_cost *c, const dp_topology *t,
                         const dp_hisim_options *o, dp_error *err);
/* Free the workspace and its transfer model (not g, c, t or the calibration). NULL is a no-op. */
void dp_hisim_free(dp_hisim *s);

/* A 64-bit fingerprint (FNV-1a) of what s reads beyond its cost tables (dp_cost_fingerprint):
 * the options (transfer model, chunks, mode, queue, memory limit, policy and penalty, copy
 * engines), each device's streams, copy engines, memory capacity and calibrated interference,
 * the topology's links and the calibration's routes. Two workspaces of equal cost tables and
 * fingerprints give the same makespans; a checkpoint records it so that --resume refuses
 * another simulator (dp_runtime_trained_on). */
uint64_t dp_hisim_fingerprint(const dp_hisim *s);

/* Simulate an assignment (n_ops device ids). priority (n_ops, higher first) is used with
 * DP_HISIM_QUEUE_PRIORITY and may be NULL otherwise (NULL with DP_HISIM_QUEUE_PRIORITY: DP_EINVAL;
 * so is a priority that is NaN or infinite, naming the op).
 * Returns DP_OK; DP_EINVAL for a device id out of range; DP_ERANGE for a memory capacity
 * exceeded under DP_HISIM_MEMORY_ERROR (message names the device, op, time, need and capacity);
 * DP_ENOMEM. res's arrays stay valid until the next run. */
int dp_hisim_run(dp_hisim *s, const int *assignment, const double *priority, dp_hisim_result *res,
                 dp_error *err);

/* Simulate a placed prefix: ops with device -1 are absent (never run, never waited for, no
 * transfer to them, no memory held for them: an output whose consumers are all absent stays,
 * as a sink's; in bulk-synchronous mode a level waits only for its placed ops), the others run
 * exactly as dp_hisim_run runs a graph made of them alone. The placed ops must be closed under
 * predecessors (dp_env.h's episodes guarantee it). res as dp_hisim_run's; per-op arrays hold -1
 * for absent ops. Errors as dp_hisim_run's, and DP_EINVAL for a placed op with an absent
 * predecessor (naming both). With every op placed it is dp_hisim_run. Costs a run of the placed
 * ops plus O(n_ops + n_edges) of set-up.
 * Memory: with ops absent, a capacity exceeded is not an error under the error policy (peaks
 * and excess are reported): a prefix's memory is not its placement's (an output waiting only
 * for absent consumers stays, one whose placed consumers have read it goes, whatever the absent
 * ones will need), and a prefix of a placement that fits went over the capacity (ffnn on the
 * PCIe topology, round-robin, a limit of 8e8 bytes: step 32 of 96 at 8.05e8 where the whole
 * placement peaks at 7.38e8; the assignment environment refused the episode: a review). */
int dp_hisim_run_prefix(dp_hisim *s, const int *assignment, const double *priority, dp_hisim_result *res,
                        dp_error *err);

/* A bounded run, as dp_sim_run_bounded: the event loop stops as soon as the clock would pass
 * bound, or (early rejection, dp_hisim_set_early_reject) as soon as an op's start shows the
 * makespan is above it; then *exceeded is 1 and *cost more than bound and at most the penalised
 * makespan (that instant, or that lower bound), else *exceeded is 0 and *cost the penalised
 * makespan, bit for bit dp_hisim_run's. *exceeded is 1 exactly when the penalised makespan is
 * above bound: also where the clock stays within it (a memory penalty, a run in full, a makespan
 * of 0 and a negative bound), with *cost the penalised makespan. Under the error memory policy
 * with a memory limit the run is always complete (an over-capacity run must fail as it would in
 * full). Errors as dp_hisim_run. */
int dp_hisim_run_bounded(dp_hisim *s, const int *assignment, const double *priority, double bound, double *cost,
                         int *exceeded, dp_error *err);

/* Early rejection (dp_sim_set_early_reject's, issue 31): on 1 (the default), where every device
 * has one stream, a bounded run also stops when an op starts on device d at time now with time t
 * and now + t + d's work not started yet (less a relative 1e-9 and the sums' rounding) is above
 * the bound: d runs its ops one at a time and never faster than its calibrated time (interference
 * only slows an op; bulk-synchronous levels, copy engines and contention only delay), so no
 * schedule ends sooner. Off: only the clock's first instant past the bound. For tests and
 * benchmarks; the verdict and every cost within the bound are the same either way. */
void dp_hisim_set_early_reject(dp_hisim *s, int on);

/* ---- delta runs (issue 31 item 1): snapshots of the event state ----
 *
 * A search that moves a few ops of an incumbent assignment at a time asks for each candidate's
 * cost with a run resumed from a saved state of the incumbent's run, instead of from time 0.
 * The state at an instant is more than the per-op times a schedule records (the max-min model's
 * flows and service levels, FIFO channels' queues, copy engines and their waiting requests,
 * streams, memory held, interference rates), so it is saved whole: the incumbent's run takes
 * snapshots between instants (every state the later events read: the event heap, device
 * queues, streams, copy engines, memory, interference, and the transfer model's own state,
 * dp_transfer_model.h) at about K evenly spaced points of its events, and a candidate's run
 * restores the last one taken before the first instant its moves can change, then runs the
 * same event loop from there.
 *
 * Which instant: the engine reads an op's device first when one of its producers finishes
 * (the copy to it is sent then), or at time 0 for a source; nothing else before reads it. So
 * with M the ops whose devices differ from the incumbent's, every event before
 *     t* = min over v in M of (min over v's producers u of the incumbent's end of u; 0 for a source)
 * is the incumbent's, and a snapshot taken before every event of an instant t <= t* is the
 * candidate's state at t. The resumed run is then the full run from t on, event for event: its
 * cost within the bound is bit for bit dp_hisim_run_bounded's, and its verdict the same (early
 * rejection's bound checks the ops started from t on: each is a lower bound of the makespan, so
 * a run above the bound is still found above it); above the bound the number reported may
 * differ, as dp_hisim_run_bounded allows. A candidate committed becomes the incumbent with the
 * full run's records (the incumbent's before t, its run's after) and the snapshots taken after t
 * (by the candidate's own run while most runs are committed, else by a run from the same
 * snapshot at the commit). A run under the error memory policy resumed from a snapshot of a
 * prefix already over a capacity runs from time 0 (dp_hisim_run_prefix: a prefix is never
 * refused for its memory).
 *
 * Supported where the engine's state at an instant is what the snapshot saves: FIFO device
 * queues, asynchronous mode, no trace (dp_hisim_delta_supported). Priority queues (their heaps
 * are laid out by the assignment's device counts) and bulk-synchronous mode (its level counts
 * are the assignment's cross-device edges) run each candidate in full (dp_engine.h).
 * Memory: K snapshots for the incumbent and K for the candidate, each about 16 bytes an op,
 * 8 to 16 an edge (more with interference, FIFO chunks, copy engines) and the pending events;
 * K is 16, fewer where 2 K snapshots would pass 256 MiB. */
typedef struct dp_hisim_delta dp_hisim_delta;

/* 1 when s supports delta runs (above): FIFO queues, asynchronous mode, no trace. */
int dp_hisim_delta_supported(const dp_hisim *s);

/* The incumbent and snapshots of workspace s (which must outlive it); NULL with err set when s
 * does not support delta runs (DP_EINVAL) or out of memory (DP_ENOMEM). */
dp_hisim_delta *dp_hisim_delta_alloc(dp_hisim *s, dp_error *err);
/* Free it (not its workspace). NULL is a no-op. */
void dp_hisim_delta_free(dp_hisim_delta *d);

/* Simulate assignment in full (dp_hisim_run, FIFO queues: no priority; with ops of device -1, a
 * prefix: dp_hisim_run_prefix) taking snapshots, and make it the incumbent; *res (may be NULL) is
 * its result, whose arrays are d's (valid until the next set or commit). Errors as dp_hisim_run's
 * (dp_hisim_run_prefix's); after an error d has no incumbent.
 *
 * Prefixes: the assignment environment (policy/dp_env.h) keeps the placed prefix as the
 * incumbent and asks for the prefix plus one more op on each device; an op absent from the
 * incumbent (-1) and placed in the candidate is a moved op whose t* is its producers' first end,
 * as any (its producers' outputs are then held for it too: restored from the snapshot, the count
 * of each producer's holders is raised by one; none has finished before t*). A candidate that
 * removes an op the incumbent placed runs from time 0. */
int dp_hisim_delta_set(dp_hisim_delta *d, const int *assignment, dp_hisim_result *res, dp_error *err);

/* The cost of assignment up to bound as dp_hisim_run_bounded(s, assignment, NULL, bound, cost,
 * exceeded, err) gives it (the same verdict; within the bound the same cost bit for bit),
 * resumed from the incumbent's last snapshot before t* (above); under the error memory policy
 * with a memory limit, in full from there as dp_hisim_run_bounded's. O(n_ops) to find the
 * moved ops, O(n_ops + n_edges) to restore the state and the incumbent's records, then the
 * events from the snapshot on. s's records are the run's (its schedule when it completed).
 * Errors as dp_hisim_run_bounded's; DP_EINVAL without an incumbent. */
int dp_hisim_run_delta(dp_hisim_delta *d, const int *assignment, double bound, double *cost, int *exceeded,
                       dp_error *err);

/* The complete delta run of assignment (unbounded, prefixes allowed) with its result in *res: the
 * full run's records, bit for bit dp_hisim_run's (dp_hisim_run_prefix's), the incumbent's before
 * the snapshot restored (res's arrays are s's: valid until its next run). Errors as
 * dp_hisim_run's; DP_EINVAL without an incumbent. */
int dp_hisim_run_delta_result(dp_hisim_delta *d, const int *assignment, dp_hisim_result *res, dp_error *err);

/* 1 when assignment is that of d's last delta run and that run completed (was not stopped by its
 * bound and did not fail). */
int dp_hisim_delta_is_last(const dp_hisim_delta *d, const int *assignment);

/* Make assignment the incumbent. When it is the last delta run's (dp_hisim_delta_is_last) and
 * that run recorded its snapshots (it does while many runs are committed), they and its records
 * become d's at no run; else a run from the incumbent's last snapshot before assignment's t*
 * takes them (s's records are that run's). Errors as dp_hisim_run's (the incumbent unchanged);
 * DP_EINVAL without an incumbent. O(n_ops + n_edges) besides the run. */
int dp_hisim_delta_commit(dp_hisim_delta *d, const int *assignment, dp_error *err);

/* The incumbent's result, bit for bit dp_hisim_run's for its assignment (arrays d's, valid
 * until the next set or commit); DP_EINVAL without an incumbent. */
int dp_hisim_delta_result(const dp_hisim_delta *d, dp_hisim_result *res, dp_error *err);

/* The snapshots d keeps for the incumbent (and as many for a candidate): K, 16 or fewer so that
 * 2 K snapshots of at most *snapshot_bytes each (may be NULL: every array of the state in full,
 * the transfer model's included, and the event heap at its capacity) stay within 256 MiB. */
int dp_hisim_delta_slots(const dp_hisim_delta *d, double *snapshot_bytes);

/* Runs of d resumed from a snapshot (*resumed) or from time 0 (*full: no snapshot before t*,
 * sets included), and the engine events the resumed runs did not run again (*skipped: each
 * one's snapshot's event count). Any pointer may be NULL. */
void dp_hisim_delta_stats(const dp_hisim_delta *d, long *resumed, long *full, long *skipped);

/* Chrome trace JSON of the last run: one row per device stream, a slice per op (args: wait for
 * inputs, queued, run, in seconds of the printed unit); transfers as async slices (args: route,
 * queued for copy engines, bytes, mean rate); max-min rate counters per route class and FIFO
 * channel occupancy when the run was traced. Times in microseconds of the printed unit. Atomic. */
int dp_hisim_write_trace(const dp_hisim *s, const int *assignment, const char *path, dp_error *err);

/* Bytes of workspace held (engine + transfer model), for the memory benchmark. */
size_t dp_hisim_workspace_bytes(const dp_hisim *s);

/* Levels (longest-path depth from a source) of the last alloc, and their count. */
const int *dp_hisim_levels(const dp_hisim *s, int *n_levels);

#ifdef __cplusplus
}
#endif
#endif
