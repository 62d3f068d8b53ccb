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
 * sequence numbers give, so the heap only holds events in the future (two small sorted queues,
 * op ends and transfers, in fact: dp_sim.c). A complete run processes 5 events per op (READY,
 * GRANTED, COMPUTE_DONE, RELEASE, FINISH) and 2 per first copy of an (op, consumer) pair
 * (TRANSFER_DONE, EDGE_ARRIVED); n_events counts them (an arrival that does not complete its
 * consumer's inputs is counted without being queued: it changes nothing else). An event that is
 * the next in this order when it is scheduled (nothing else is waiting in the FIFO, no other
 * heap event is at its instant, and its scheduler schedules nothing after it) runs at once,
 * without a FIFO entry: the same order, sequence numbers and count (issue 31; dp_sim.c).
 * A complete run (dp_sim_run, dp_sim_run_bounded) is computed op by op where every op's time is
 * positive: two events an op (READY, COMPUTE_DONE), the order of the others derived from their
 * fixed places within an instant, the same schedule and count bit for bit (dp_sim_set_op_order
 * below; dp_sim.c, "the op-order run"); so is a delta run of an incumbent it recorded ("Op by
 * op" below).
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
    long n_transfers;         /* cross-device edges (a repeated edge once: its repeats move nothing) */
    double transfer_volume;   /* sum of edge_data over cross-device edges (bytes or time) */
    const double *op_start;   /* (n_ops) start time of each op; owned by the sim */
    const double *op_end;     /* (n_ops) end time of each op */
    const double *op_ready;   /* (n_ops) when each op joined its device's queue (its last input
                                 arrived) */
    long n_events;            /* events processed (for benchmarks; a repeated edge's later
                                 copies, which change nothing, are no events) */
} dp_sim_result;

/* Allocate a simulator workspace for graph g under costs c (both must outlive it, unchanged: it
 * keeps a bound on the transfer times for dp_sim_prefix_add).
 * Returns NULL with err filled when out of memory or when c does not match g. */
dp_sim *dp_sim_alloc(const dp_graph *g, const dp_cost *c, dp_error *err);
/* Free the workspace (its schedule arrays with it; not g or c). NULL is a no-op. */
void dp_sim_free(dp_sim *s);

/* Simulate the assignment (n_ops device ids in 0..n_devices-1). res's arrays stay valid until
 * the next run. Returns DP_OK, or DP_EINVAL (naming the op) for a device id out of range. */
int dp_sim_run(dp_sim *s, const int *assignment, dp_sim_result *res, dp_error *err);

/* The schedule of s's last complete run (dp_sim_run, dp_sim_run_prefix, an unbounded
 * dp_sim_run_bounded) is feasible: every placed op joined its device's queue after its inputs'
 * producers ended (ready >= their end), started no earlier, ended no earlier than it started and
 * no later than the makespan, and no device is busy longer than the makespan (up to a relative
 * 1e-9: busy time is a sum of op times). O(ops + edges); the assignment the run was given must
 * still be alive. For tests: the runs themselves do not check it (issue 31: it was a tenth of a
 * simulation). Returns DP_OK, or DP_EINVAL naming the first op or device that breaks it. */
int dp_sim_check_schedule(const dp_sim *s, dp_error *err);

/* A bounded run (the searches' bounded simulation, issue 31): as dp_sim_run, but the event loop
 * stops as soon as the clock would pass bound (seconds, the graph's raw unit), or, on the
 * op-order run, as soon as a device's work left shows the makespan is above it (early
 * rejection, dp_sim_set_early_reject, below). Then *exceeded is 1 and *cost more than bound and
 * no more than the makespan: the instant the clock would have moved to (every event happens
 * before some op's end), or that lower bound. So a search that rejects any cost above bound
 * takes the decision the full run would have led to. Else *exceeded is 0 and *cost the makespan,
 * bit for bit dp_sim_run's. *exceeded is 1 exactly when the makespan is above bound (a negative
 * bound included: a makespan of 0, every event at time 0, is then exceeded with cost 0). bound
 * INFINITY: a full run. Errors as dp_sim_run. */
int dp_sim_run_bounded(dp_sim *s, const int *assignment, double bound, double *cost, int *exceeded, dp_error *err);

/* The count of the syncs of s's per-assignment tables so far: it changes with every run that
 * takes a new assignment (dp_sim_run, dp_sim_run_bounded, delta and prefix runs of the op-order
 * run), so a caller that reads it after a run and finds it unchanged before the next knows the
 * tables still hold that run's assignment (dp_sim_run_bounded_changed). */
long dp_sim_tables_gen(const dp_sim *s);

/* dp_sim_run_bounded(s, assignment, bound, cost, exceeded) for a search that knows what it
 * changed: when dp_sim_tables_gen(s) is still gen, the caller promises that assignment differs
 * from the assignment of the run after which it read gen at most at the ops changed[0..k) (an op
 * may be listed twice, or not have changed), and the run syncs its tables from that list
 * instead of comparing every op's device with the last run's (an annealing move on DOPPLER's
 * Llama-block: about 840 instructions of 43,600, issue 31). With another gen the list is not
 * used: the same as dp_sim_run_bounded. A broken promise gives a wrong cost (the list is not
 * checked against the assignment). The same cost (an early-rejected one's too, bit for bit: the
 * tables are updated in op order either way), verdict and counts as dp_sim_run_bounded. Errors: dp_sim_run_bounded's; DP_EINVAL for k < 0 or an op of the list outside 0..n_ops-1. */
int dp_sim_run_bounded_changed(dp_sim *s, const int *assignment, long gen, const int *changed, int k, double bound,
                               double *cost, int *exceeded, dp_error *err);

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

/* ---- incremental prefix simulation (the assignment environment's engine state, dp_env.h) ----
 *
 * A placed prefix grows by one op at a time, v on device d, v having no placed successor. The
 * engine's schedule of the prefix plus v equals the prefix's up to the instant r at which v's
 * inputs are all on d (v's READY): before r, v's events (its inputs' copies) touch nothing but
 * v's arrival count, and the copies' sequence numbers are fixed by their producers' FINISH
 * (send_output), so every other event happens in the same order at the same time. From the
 * prefix's schedule and the place each op's events took in the engine's event order
 * (sequence numbers: seq_done, seq_fin, seq_ready below), the engine's state at the start of
 * instant r is rebuilt exactly: the COMPUTE_DONE of the ops running at r and the transfers in
 * flight at r in the heap with their sequence numbers, each device's queue of the ops that
 * arrived before r and had not started (in the order of their READY events), each later
 * op's count of arrived inputs. The engine's own loop then runs from r: only the ops ending at or
 * after r are simulated again, ties in the engine's event order included. Each device's ops are
 * kept in its queue order (dev_ops below), in which their arrival, start and end times never
 * decrease (one slot, first come first served): the ops ending at or after r are a suffix of
 * each device's list, found by binary search. A step costs O(D log n + k log k) for the k ops
 * ending at or after r, instead of a prefix simulation of every placed op; k is small when ops
 * are added about in the order they run, O(n) for an op added long after the ops that follow it
 * in time. With r = 0 (v a source, or only zero-time producers) the prefix is simulated from the
 * start (dp_sim_run_prefix). Every run of the engine numbers its events this way (dp_sim_run's
 * order of events, and so its schedules, are those it always had: the reference simulator's
 * makespans of tests/test_doppler_data.c, ties included).
 *
 * A commit's run converges (dp_sim_set_converge_prefix, on by default): it stops at the end of
 * the first instant at which v is done and the state is p's (as a delta run's, below: v, which
 * has no placed successor, then changes nothing later), and the commit takes the run's events
 * up to that instant and p's after it. The ops simulated again are then those ready by that
 * instant (n_resimulated counts those). The set-up is lazy: of the k ops, those running or
 * queued at r are set up at once, the others (not ready at r) when the first of their inputs
 * reaches them in the run, and the copies in flight at r are found from their producers (the
 * ops ending in [r - the longest transfer, r)); so a probe or a commit that converges walks the
 * inputs of the ops it reaches only, and lists only those and the ops running or queued at r.
 * The commit keeps p's later events in the order of their numbers: the run's numbers go below
 * them when the numbers of p's events it made again leave room, else p's later events move up
 * by twice the run's count (a pass over each list from its first op ending after the instant),
 * so the numbers grow linearly in the events the runs make.
 *
 * Usage: p = dp_sim_prefix_alloc(n_ops, n_devices); dp_sim_prefix_reset(p) at the start of an episode;
 * per step dp_sim_prefix_add(s, p, assignment, v, 1, ...) with assignment holding the prefix and
 * v's device; probes (what v's start on d would be) pass commit 0. The prefix must have been
 * built by dp_sim_prefix_add calls on a simulator of the same graph and costs (any dp_sim of
 * them: the state is in p). */
typedef struct dp_sim_prefix {
    int n_ops;
    double *start, *end, *ready;  /* (n_ops) the prefix's schedule (placed ops; others undefined) */
    uint64_t *seq_done, *seq_fin, *seq_ready; /* (n_ops) the places of the ops' events (dp_sim.c) */
    uint64_t seq_next;            /* above every sequence number in the arrays */
    int *placed, n_placed;        /* (n_ops) the placed ops in the order they were added */
    int *rank;                    /* (n_ops) index of each placed op in placed */
    int n_devices;
    int **dev_ops, *dev_n, *dev_cap; /* (n_devices) each device's placed ops in its queue order:
                                     ready, start and end non-decreasing along the list */
    int *changed, n_changed;      /* (n_ops) the ops whose times the last commit wrote (v included;
                                     every other op keeps its times) */
    int *dev;                     /* (n_ops) each placed op's device (others undefined) */
    double makespan;              /* the last end of the placed ops (0 with none) */
    int op_order;                 /* 1: a delta incumbent whose event places are the op-order
                                     run's (dp_sim_prefix_set on a simulator with the op-order
                                     run on; seq_done: each op's grant, seq_fin: its
                                     COMPUTE_DONE, seq_ready: its READY, in one sequence), so its
                                     delta runs resume op by op; 0: the event loop's */
    long n_full, n_resumed;       /* commits and probes that simulated from 0 / resumed at r */
    long n_converged;             /* delta runs and commits that stopped once their state was
                                     p's again (dp_sim_set_converge, _converge_prefix) */
    long n_resimulated;           /* ops simulated again by those runs, summed (of a run that
                                     converged, those ready by the instant it stopped at) */
    long n_retimed;               /* of those, by commits of dp_sim_prefix_add: the ops whose
                                     ready, start or end the commit changed (the added op
                                     included), summed. Any exact state must rewrite these, so
                                     n_retimed / commits bounds below the work per step of every
                                     exact incremental method; n_resimulated - n_retimed is
                                     what this one simulates again without a change */
} dp_sim_prefix;

/* Allocate an empty prefix for a graph of n_ops ops on n_devices devices; NULL when out of
 * memory. */
dp_sim_prefix *dp_sim_prefix_alloc(int n_ops, int n_devices);
/* Free the prefix and its arrays. NULL is a no-op. */
void dp_sim_prefix_free(dp_sim_prefix *p);
/* Empty the prefix (the statistics are kept). */
void dp_sim_prefix_reset(dp_sim_prefix *p);

/* The engine's schedule of p's ops plus v on assignment[v] (above). assignment: (n_ops) the
 * device of every op of p, of v, -1 for the others. v must be unplaced in p with every
 * predecessor in p. Writes v's start and its READY time (when its inputs are all on its
 * device) to *start and *ready (either may be NULL). commit 1: p becomes the prefix plus v
 * (p->changed lists the ops whose times were written); commit 0 (a probe): p is unchanged, and
 * the run stops at the end of the instant v starts at (no later event changes v's start or
 * READY), so a probe costs the events up to that instant, not the whole future of the ops ending
 * at or after r.
 * Overwrites s's last result (after a probe only v's start and ready are meaningful). Errors (DP_EINVAL, p unchanged): v out of range, a device out of range
 * (the check is O(in-degree of v)), a predecessor of v unplaced; DP_ENOMEM (a device's list
 * could not grow; p unchanged). */
int dp_sim_prefix_add(dp_sim *s, dp_sim_prefix *p, const int *assignment, int v, int commit, double *start,
                      double *ready, dp_error *err);

/* ---- delta simulation (issue 31) ----
 *
 * A search moves a few ops of an incumbent assignment and asks for the makespan of the result.
 * With the incumbent's complete schedule in a dp_sim_prefix (every op placed), the engine resumes
 * at the instant t of the first event the moves change, as dp_sim_prefix_add resumes at an added
 * op's READY, and simulates only the ops ending at or after t: the schedule and the makespan are
 * dp_sim_run's bit for bit, ties of the event order included.
 *
 * Why: before a moved op v's READY, v's events (its inputs' copies) touch nothing but v's count
 * of arrived inputs, in the old run and in the new one; the copies' sequence numbers are fixed
 * by their producers' FINISH. So the two runs are the same event for event before the earliest,
 * over the moved ops, of v's READY in the incumbent's schedule (p->ready[v]) and v's READY on
 * its new device, which is no earlier than the latest arrival on that device of v's inputs from
 * unmoved producers (their ends are the incumbent's: they end before t or at t itself). t is the
 * least of those bounds; t = 0 (a moved source, or only moved or zero-time producers) runs from
 * the start. A moved op's READY in the incumbent is at or after t, so it is in the resumed set
 * (its old device's list from the first op ending at or after t) and starts the run not ready,
 * with the inputs that reach its new device before t counted. Sequence numbers of the resumed
 * run start above every number of the incumbent's (p->seq_next), which keeps their order.
 *
 * Convergence (FlexFlow's delta simulation, issue 31): a run within its bound (p's makespan no
 * more than it) also stops at the end of an instant tau (no event left at tau: a delay that
 * vanishes in rounding queues its copy at the instant itself) at which its state is p's at the
 * end of tau: the same events in the queues at the same times and in the same order, the same queue
 * on each device, every op done, running, queued or waiting in both with the same arrived
 * inputs, and every moved op done. Every later event is then p's, so the cost is p's makespan;
 * a commit takes the run's events up to tau and p's after it (their sequence numbers shifted
 * above the run's). The check runs only at instants where no event in the queues differs from
 * p's (counted as they are pushed). Off by default (dp_sim_set_converge: fewer instructions,
 * not less time, on this project's host).
 *
 * Op by op: where s computes complete runs op by op (dp_sim_set_op_order, below), the incumbent
 * keeps the op-order run's event places (p->op_order) and a delta run resumes the op-order run
 * at a later t: over the moved ops, the least of v's grant in the incumbent (p->start[v], not
 * its READY: there a READY on a busy device only appends v to the device's queue and takes the
 * next sequence number, which changes no other op's time or order before v's grant) and v's
 * READY on its new device, bounded as above (issue 31; tests/test_delta.c
 * `op_order_delta_resumes_at_grant`: a small gain, the share of the ops an annealing delta run
 * simulates again falls by 0 to 1.1 points, EXPERIMENTS.md "A moved op's grant"). The state
 * at t: the op running on each device at t and the ops queued behind it (each device's list
 * from its first op ending at or after t; a moved op queued there leaves it), the ops whose last
 * inputs are in flight at t (found from the producers that ended within the longest transfer
 * before t) with their READYs queued, the moved ops; every other op counts the copies still to
 * come, one for each producer ending at or after t (counted from those producers: each device's
 * list from its cut). Two events an op of the k ops ending at or after t, against the event
 * loop's seven; no convergence; early rejection (dp_sim_set_early_reject) as in a complete
 * op-order run, with each device's work not granted at t. The same costs
 * and commits bit for bit (tests/test_delta.c `op_order_delta`); a run whose times do not move
 * the clock falls back to a full event-loop run, and its commit makes p the event loop's.
 *
 * Usage: p = dp_sim_prefix_alloc(n_ops, n_devices); dp_sim_prefix_set(s, p, incumbent, ...);
 * per move dp_sim_run_delta(s, p, candidate, bound, ...); when the search accepts the candidate,
 * dp_sim_delta_commit(s, p, candidate) before any other run of s. Cost of a move: O(n_ops) to
 * find the moved ops (integer compares), O(D log n_ops) to find the ops to simulate again, and
 * the events of the k ops ending at or after t (with the bound: only those up to the bound);
 * a commit O(k log k). */

/* Simulate assignment in full (dp_sim_run) and make p its complete schedule (every op placed,
 * each device's list with room for every op, so that commits never allocate). res as
 * dp_sim_run's (may be NULL). Errors: dp_sim_run's; DP_EINVAL when p is not for s's numbers of
 * ops and devices; DP_ENOMEM. */
int dp_sim_prefix_set(dp_sim *s, dp_sim_prefix *p, const int *assignment, dp_sim_result *res, dp_error *err);

/* A delta run: the cost of assignment as dp_sim_run_bounded(s, assignment, bound, ...) gives it
 * (within the bound, bit for bit; above it, the same verdict and a cost above the bound and no
 * more than the makespan, which may be another number: early rejection's bound on a resumed run
 * sums the work left from the instant it resumed at), by resuming from p's complete schedule (dp_sim_prefix_set or a commit) at the
 * first instant a moved op (assignment[v] != p->dev[v]) can change (above). No moved op: p's
 * makespan (*exceeded when it is above bound). s's per-op arrays then hold the new times of the
 * ops simulated again only (of those the run reached, when its bound stopped it or it
 * converged; the others' entries are stale, INFINITY or, for an op-order run's READY times,
 * -INFINITY). p is not changed (its statistics n_resumed, n_full, n_resimulated
 * count the run). Errors (DP_EINVAL): p holds no complete schedule of s's graph; a moved op's
 * device out of range (naming it). */
int dp_sim_run_delta(dp_sim *s, dp_sim_prefix *p, const int *assignment, double bound, double *cost, int *exceeded,
                     dp_error *err);

/* Make p the schedule of the last delta run's assignment, which must be s's last run, run from p
 * and not stopped by its bound, and be given as assignment (the same devices: checked in O(n);
 * DP_EINVAL otherwise, p unchanged). O(k log k) for the k ops it
 * simulated again; p->changed lists those whose times it wrote. p may be a complete schedule
 * built by dp_sim_prefix_add's commits: its device lists then get room for every op first
 * (DP_ENOMEM, p unchanged, when that fails). */
int dp_sim_delta_commit(dp_sim *s, dp_sim_prefix *p, const int *assignment, dp_error *err);

/* For tests: on 0, every event of s's runs goes through the FIFO (the engine's order as it was
 * before events ran at once, issue 31); on 1 (the default), an event that is next in the order
 * runs at once. Both give the same schedules, sequence numbers and event counts. */
void dp_sim_set_direct(dp_sim *s, int on);

/* The op-order run (issue 31): on 1 (the default), dp_sim_run and dp_sim_run_bounded compute a
 * complete run op by op, one heap entry an op in the order of the ops' READY events, where
 * the event loop processes 5 events an op and 2 a first copy (dp_sim.c, "the op-order run").
 * The READY order at one instant is the event loop's, derived from the events' places in the
 * order (time, level in the instant, parent's place, index among its parent's children), so the
 * schedules, busy sums, makespans, bounded runs' costs and event counts are the event loop's bit
 * for bit. Only where every op's time is positive on every device (else every run goes through
 * the event loop); a positive time or delay that does not move the clock falls back to the event
 * loop. On 0, every run goes through the event loop. For tests and benchmarks. */
void dp_sim_set_op_order(dp_sim *s, int on);
/* Early rejection (issue 31's bounded simulation, made stronger): on 1 (the default), a bounded
 * op-order run (dp_sim_run_bounded, dp_sim_run_delta with a finite bound) also stops as soon as
 * one device's work is known to end past the bound: when an op granted device d at time now ends
 * at e = now + its time, d still has to run every op of the assignment on it not granted yet, one
 * at a time, so no schedule ends before e + that work; once that (less a relative 1e-9 and the
 * rounding of the sums, 8 (n_ops + 1,024) DBL_EPSILON) is above the bound, *exceeded is 1 and *cost that
 * lower bound. A cost above the bound is still more than the bound and no more than the makespan,
 * so a search takes the same decisions (tests/test_search.c bounded_search_same_decisions); the
 * number differs from the clock's first instant past the bound, which the event loop and runs
 * with it off give. Runs within their bound are unchanged, bit for bit. Annealing's moves per
 * second with it (bench/bench_delta, EXPERIMENTS.md "Early rejection"): about 2x on DOPPLER's
 * ChainMM, 1.25x on FFNN, the same on its Llama graphs (their rejected runs fail late). Each
 * device's work is kept per assignment (summed again after n_ops + 1,024 updates, and as soon as
 * a device's sum falls below a quarter of its peak since: a huge op's rounding does not stay
 * behind when it moves off). On 0, a
 * bounded run stops at the clock's first instant past the bound only. For tests and
 * benchmarks. */
void dp_sim_set_early_reject(dp_sim *s, int on);
/* How many runs of s were computed op by op (the others went through the event loop; delta
 * runs of an op-order incumbent counted too). */
long dp_sim_op_order_runs(const dp_sim *s);
/* 1 when s computes complete runs op by op (on, and every op's time positive on every device),
 * else 0. */
int dp_sim_op_order_on(const dp_sim *s);

/* Convergence of delta runs (dp_sim_run_delta): mode 0, a delta run never stops when its state
 * is the incumbent's again (it runs to the end or to its bound, as before issue 31's
 * convergence; the default: on this project's host it cut instructions but not time,
 * EXPERIMENTS.md); 1, every delta run within its bound may; 2, the simulator turns it on or off
 * by the events it saves over probes of both (dp_sim.c). Every mode gives the same costs, and
 * commits the same schedules, device lists and order of sequence numbers (not the same
 * numbers). For tests and benchmarks. */
void dp_sim_set_converge(dp_sim *s, int mode);

/* Convergence of prefix additions (dp_sim_prefix_add with commit 1): on (the default), a commit's
 * run stops at the end of an instant at which the added op is done and the state is the
 * prefix's (as a delta run's, above), and the commit splices the two; off, it simulates every op
 * ending at or after the added op's READY. Both give the same schedules, device lists and order
 * of sequence numbers (not the same numbers). For tests and benchmarks. */
void dp_sim_set_converge_prefix(dp_sim *s, int on);

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
