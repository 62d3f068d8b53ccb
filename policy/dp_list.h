/* dp_list.h: classic list schedulers for heterogeneous devices: HEFT, CPOP, PEFT and ETF.
 *
 * Each one builds a full static schedule (device, start and finish of every op) under the cost
 * tables in force (machine/dp_cost.h: op_time per op and device, transfer time
 * latency + data * inv_bw between distinct devices, free on one device), with no link contention
 * and one op at a time per device. The schedule's own length is `makespan`; the assignment part
 * (device per op) is what the placement registry (policy/dp_place.h) returns, together with the
 * method's rank as a priority per op (higher first).
 *
 * Note: the scheduler's own schedule and the simulation of its assignment differ in general. The
 * work-conserving simulator (sim/dp_sim.h) starts whatever is ready on a device first come first
 * served; HEFT, CPOP and PEFT may insert an op into an earlier idle gap and order each device by
 * their ranks. The simulated makespan can be shorter or longer than `makespan`.
 *
 * Mean costs in the ranks follow Topcuoglu et al.: the mean op time w(v) over devices and the
 * mean transfer time c(e) = L + data(e) / B, with L the mean start-up latency and B the mean
 * transfer rate (1 / inv_bw) over ordered pairs of distinct devices (0 with one device; a pair of
 * infinite rate, inv_bw = 0, makes B infinite and c(e) = L). With the DOPPLER-compatible or
 * classic model (inv_bw = 1, latency 0) c(e) is the edge's own cost.
 *
 * Ties: ops of equal rank are taken lowest id first; devices of equal finish time lowest index
 * first. Selection is always among ready ops (all predecessors scheduled), so a rank that is not
 * strictly decreasing along edges (zero-cost ops) still yields a valid schedule.
 */
#ifndef DP_LIST_H
#define DP_LIST_H

#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_place.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_list_schedule {
    int n_ops, n_devices;
    int *device;       /* (n_ops) device of each op */
    double *start;     /* (n_ops) start time (graph time unit, raw) */
    double *finish;    /* (n_ops) finish time */
    double *priority;  /* (n_ops) the method's rank (higher first; see each method) */
    int *order;        /* (n_ops) ops in the order the method scheduled them */
    double makespan;   /* max finish */
    int append_only;   /* 0 (default): HEFT, CPOP and PEFT insert an op into the earliest idle gap
                        * of a device that holds it; 1: append after the device's last op (the
                        * variant nedjulius/heft-cpop-simulator's CPOP implements). Set by the
                        * caller before running a method; ETF always appends. */
    int ties;          /* order among ready ops of equal priority in HEFT, CPOP and PEFT:
                        * DP_LIST_TIES_ID (0, default) lowest op id first; DP_LIST_TIES_HEAP the
                        * order of a C++ std::priority_queue (LLVM libc++'s) keyed by priority
                        * alone, ops pushed as
                        * they become ready in the order of the finishing op's out-edges (the
                        * order nedjulius/heft-cpop-simulator's CPOP follows). Set by the caller. */
    /* workspace: per-device timelines, each device's ops in start order (arrays that grow) */
    int **dev_ops;     /* (n_devices) */
    int *dev_n, *dev_cap; /* (n_devices) */
} dp_list_schedule;

enum { DP_LIST_TIES_ID = 0, DP_LIST_TIES_HEAP = 1 };

/* Allocate a schedule (and workspace) for n_ops ops on n_devices devices; NULL when out of memory. */
dp_list_schedule *dp_list_schedule_alloc(int n_ops, int n_devices);
/* Free the schedule and its workspace. NULL is a no-op. */
void dp_list_schedule_free(dp_list_schedule *s);

/* Mean transfer time of every edge (n_edges), as defined above. */
void dp_list_mean_comm(const dp_graph *g, const dp_cost *c, double *cbar);

/* Upward rank (Topcuoglu et al. 2002, eq. 3): rank_u(v) = w(v) + max over out-edges e = (v, x) of
 * (c(e) + rank_u(x)); rank_u = w at sinks. Downward rank (eq. 5): rank_d(v) = max over in-edges
 * e = (u, v) of (rank_d(u) + w(u) + c(e)); 0 at sources. Arrays of n_ops; iterative. */
void dp_list_rank_upward(const dp_graph *g, const dp_cost *c, double *rank_u);
void dp_list_rank_downward(const dp_graph *g, const dp_cost *c, double *rank_d);

/* Optimistic cost table (Arabnejad and Barbosa 2014, eq. 6): oct (n_ops x n_devices),
 * OCT(v, p) = max over out-edges e = (v, x) of min over devices q of
 *             (OCT(x, q) + op_time(x, q) + (q != p ? c(e) : 0)); 0 at sinks. */
void dp_list_oct(const dp_graph *g, const dp_cost *c, double *oct);

/* HEFT (Topcuoglu, Hariri and Wu 2002): ops by decreasing rank_u; each to the device giving the
 * earliest finish time with insertion into idle gaps. priority = rank_u.
 * Returns DP_OK, or DP_EINVAL when s does not match g and c. */
int dp_list_heft(const dp_graph *g, const dp_cost *c, dp_list_schedule *s, dp_error *err);

/* CPOP (Topcuoglu et al. 2002): priority = rank_u + rank_d; the critical path is followed from the
 * entry op of highest priority through successors whose priority equals it (relative tolerance
 * 1e-9; lowest id first); the critical-path device is the one minimising the path's total op time
 * (lowest index on ties). Ready ops by decreasing priority; critical-path ops go to that device,
 * the others to the device of earliest finish time (insertion-based). */
int dp_list_cpop(const dp_graph *g, const dp_cost *c, dp_list_schedule *s, dp_error *err);

/* PEFT (Arabnejad and Barbosa 2014): priority = rank_oct(v) = mean over devices of OCT(v, .);
 * ready ops by decreasing rank_oct; each to the device minimising EFT(v, p) + OCT(v, p), with
 * the insertion-based EFT. */
int dp_list_peft(const dp_graph *g, const dp_cost *c, dp_list_schedule *s, dp_error *err);

/* ETF (Hwang, Chow, Anger and Lee 1989): repeatedly the (ready op, device) pair of earliest start
 * time, ops appended at the end of the device (no insertion); ties by higher static level (longest
 * path to a sink by mean op time, no communication), then lowest op id, then lowest device.
 * priority = static level. On heterogeneous devices the pair is still chosen by start time, as in
 * the original (homogeneous) formulation. */
int dp_list_etf(const dp_graph *g, const dp_cost *c, dp_list_schedule *s, dp_error *err);

/* Check that s is a feasible schedule of g under c: every op has a device in range, finish = start
 * + op time, an op starts no earlier than each input's finish plus its transfer time, and ops on
 * one device do not overlap (relative tolerance 1e-9). DP_EINVAL names the first violation. */
int dp_list_check(const dp_graph *g, const dp_cost *c, const dp_list_schedule *s, dp_error *err);

/* The four as placement methods (registered in policy/dp_place.c as heft, cpop, peft, etf):
 * assignment = the schedule's devices, priority = the method's rank, has_priority = 1. */
int dp_list_place_heft(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                  double *priority, int *has_priority, dp_error *err);
int dp_list_place_cpop(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                  double *priority, int *has_priority, dp_error *err);
int dp_list_place_peft(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                  double *priority, int *has_priority, dp_error *err);
int dp_list_place_etf(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                 double *priority, int *has_priority, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
