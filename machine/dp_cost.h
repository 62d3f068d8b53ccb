/* dp_cost.h: the cost model in force, materialised as arrays for the simulator and the policies.
 *
 * Every cost model (DOPPLER-compatible fixed costs, the classic task-graph model, the calibrated
 * roofline model of a topology) reduces, for the fixed-delay transfer model, to:
 *
 *   op time of op v on device d     = op_time[v * n_devices + d]
 *   transfer time of edge e, u -> v = 0                                      if dev(u) == dev(v)
 *                                   = latency[a*D + b] + edge_data[e] * inv_bw[a*D + b]  otherwise
 *
 * with a = dev(u), b = dev(v). Times are in the graph's time unit (seconds for physical graphs;
 * DOPPLER's raw units for DOPPLER files, printed divided by time_scale). edge_data is bytes for
 * physical graphs (inv_bw in s/B) or the transfer duration for time graphs (inv_bw = 1).
 */
#ifndef DP_COST_H
#define DP_COST_H

#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_cost {
    int n_ops, n_edges, n_devices;
    double *op_time;    /* (n_ops, n_devices) */
    double *edge_data;  /* (n_edges) */
    double *latency;    /* (n_devices, n_devices), diagonal unused */
    double *inv_bw;     /* (n_devices, n_devices), diagonal unused */
    int homogeneous;    /* 1 when op times do not depend on the device and all pairs are alike (and,
                         * from dp_machine_costs, the engine treats the devices alike:
                         * dp_machine_devices_alike) */
    double time_scale;  /* copied from the graph: printed time = time / time_scale */
    int streams_total;  /* compute streams of all devices together: the most ops that run at once
                         * (n_devices, one each, unless the machine gives more: dp_machine_costs);
                         * only dp_cost_lower_bound reads it */
} dp_cost;

/* Reading cost tables without laying out dp_cost (bindings: Python's doppler.Costs). c must be
 * non-NULL (unchecked); pointers point into c. The counts n_ops, n_edges, n_devices (D);
 * op_time (n_ops x D doubles, row-major), edge_data (n_edges doubles), latency and inv_bw (D x D
 * doubles, row-major, diagonal unused), all in the graph's raw time unit (see the top of this
 * file); homogeneous (0 or 1) and time_scale as the fields. */
int dp_cost_get_n_ops(const dp_cost *c);
int dp_cost_get_n_edges(const dp_cost *c);
int dp_cost_get_n_devices(const dp_cost *c);
const double *dp_cost_get_op_time(const dp_cost *c);
const double *dp_cost_get_edge_data(const dp_cost *c);
const double *dp_cost_get_latency(const dp_cost *c);
const double *dp_cost_get_inv_bw(const dp_cost *c);
int dp_cost_get_homogeneous(const dp_cost *c);
double dp_cost_get_time_scale(const dp_cost *c);

/* The graph's own costs on n_devices identical devices: op time = work, a cross-device edge costs
 * its size (for DP_GRAPH_COST_TIME graphs: for DOPPLER files, comm of the producer). This is the
 * DOPPLER-compatible model (Yao et al. 2026, env/cost.py) and the classic task-graph model
 * (STG, Sinnen). For DP_GRAPH_COST_PHYSICAL graphs it needs a topology: returns NULL with DP_EINVAL. */
dp_cost *dp_cost_graph(const dp_graph *g, int n_devices, dp_error *err);

/* A uniform machine for DP_GRAPH_COST_PHYSICAL graphs: n_devices identical devices of peak_flops FLOP/s
 * (op time = FLOPs / peak_flops) joined pairwise by links of bandwidth_Bps bytes per second and
 * latency_s seconds (transfer = latency_s + bytes / bandwidth_Bps). For DP_GRAPH_COST_TIME graphs the
 * graph's own costs are used (as dp_cost_graph). The simplest machine; topologies (dp_topology)
 * describe real ones. */
dp_cost *dp_cost_uniform(const dp_graph *g, int n_devices, double peak_flops,
                           double bandwidth_Bps, double latency_s, dp_error *err);

/* DOPPLER's communication rule on existing cost tables of g: every cross-device edge u->v then
 * costs comm_ratio x u's op time (its mean over the devices, seconds or the graph's time unit),
 * with latency 0 and bandwidth 1, whatever the edge's size. Every op of the six DOPPLER graph
 * files follows this rule with comm_ratio 4 (Yao et al. 2026: comm = 4 x time), where the uniform
 * machine (dp_cost_uniform) makes a matmul's output cheap to send against its compute and an
 * element-wise op's dear; train --comm-ratio costs generated graphs so. Returns DP_OK, or
 * DP_EINVAL when comm_ratio is negative, NaN or infinite, or c was not made for g (tables left
 * as they were). */
int dp_cost_set_comm_ratio(dp_cost *c, const dp_graph *g, double comm_ratio, dp_error *err);

/* Empty cost tables for g on n_devices (op times 0, latency 0, inv_bw 1): for models that fill
 * them in themselves (heterogeneous examples, topologies). */
dp_cost *dp_cost_alloc(const dp_graph *g, int n_devices);
/* Free cost tables from any of the functions above (or dp_machine_costs): the four arrays and c.
 * The graph is not owned and not touched; whatever still reads c (a simulator, an engine, an
 * environment made for it) must be freed first or not used again. NULL is a no-op. */
void dp_cost_free(dp_cost *c);

/* A 64-bit fingerprint (FNV-1a) of the cost tables: the counts and the bytes of op_time,
 * edge_data, latency and inv_bw. Equal tables give equal fingerprints on any machine of the same
 * floating-point format; another machine (bandwidth, peak FLOP/s, latency, topology, calibration)
 * gives another one. A checkpoint records each graph's, so that a resumed run is refused on other
 * costs. */
uint64_t dp_cost_fingerprint(const dp_cost *c);

/* The largest time a simulation may reach (the cost tables' unit). Every time of a schedule is
 * at most the serial bound: every op at its largest time and every edge's transfer at its
 * largest, one after another (a work-conserving runtime is never idle while work remains;
 * sharing a link only stretches transfers within that sum). Keeping the bound below 1e300 leaves
 * a factor of about 1e8 below DBL_MAX for the sums the methods form from makespans (means over
 * batches and episodes, annealing's differences) before a double overflows. */
#define DP_COST_TIME_MAX 1e300

/* What dp_cost_check found out of range. */
typedef enum { DP_COST_PART_NONE = 0, DP_COST_PART_OP = 1, DP_COST_PART_TRANSFER = 2 } dp_cost_part;

/* Check that every makespan of g on c is a finite number: every op time, edge amount, latency
 * and inverse bandwidth is finite and non-negative, and the serial bound (above) is at most
 * DP_COST_TIME_MAX. Returns DP_OK, or DP_ERANGE with a message naming the graph (its file) and the op, edge
 * or device pair (the first found; for the bound, its op and transfer parts) and *part (may be
 * NULL) saying whether op times or transfers are at fault, so that a caller can name the machine
 * keys behind them (dp_machine_costs does). dp_engine_alloc refuses cost tables that fail it. */
int dp_cost_check(const dp_graph *g, const dp_cost *c, dp_cost_part *part, dp_error *err);

/* Recompute c->homogeneous after filling the arrays by hand. */
void dp_cost_update_homogeneous(dp_cost *c);

/* The time of op v (0 <= v < n_ops) on device d (0 <= d < n_devices): op_time's entry, in the
 * cost tables' unit. Unchecked: an index out of range reads past the table. */
static inline double dp_cost_op(const dp_cost *c, int v, int d)
{
    return c->op_time[(size_t)v * c->n_devices + d];
}

/* The time of edge e's transfer from device a to device b when alone on the way: 0 when a == b,
 * else latency + edge_data[e] x inv_bw of the pair (the fixed-delay model; contention is the
 * general engine's, dp_hisim.h). In the cost tables' unit; indices unchecked, as dp_cost_op's. */
static inline double dp_cost_comm(const dp_cost *c, int e, int a, int b)
{
    if (a == b) return 0.0;
    size_t k = (size_t)a * c->n_devices + b;
    return c->latency[k] + c->edge_data[e] * c->inv_bw[k];
}

/* Mean op time of v over devices, and mean transfer time of e over ordered pairs of distinct
 * devices (0 with one device): the averages the b-level uses (dp_cost_levels; cp, graph info).
 * HEFT's, CPOP's and PEFT's ranks use the mean latency plus the data over the mean rate instead,
 * as Topcuoglu et al. 2002 define them (policy/dp_list.h): different on machines whose links
 * differ. */
double dp_cost_mean_op(const dp_cost *c, int v);
double dp_cost_mean_comm(const dp_cost *c, int e);

/* b-level and t-level of every op (arrays of n_ops), with mean costs (Kwok and Ahmad 1999):
 *   blevel(v) = mean_op(v) + max over out-edges e=(v,w) of (mean_comm(e) + blevel(w))
 *   tlevel(v) = max over in-edges e=(u,v) of (tlevel(u) + mean_op(u) + mean_comm(e)), 0 at sources.
 * The critical path length is max over v of blevel(v). Either output may be NULL.
 * Iterative over the topological order: no recursion. */
void dp_cost_levels(const dp_graph *g, const dp_cost *c, double *blevel, double *tlevel);

/* Critical path length: max blevel. Lower bound on the makespan with zero communication:
 * max(critical path by op time alone, total min op time / c->streams_total), each op at its
 * least time over the devices: no schedule of any engine and options is shorter (an op runs at
 * least its time on one stream, interference and transfers only add). With more than one stream
 * per device the work term is over every stream (it was over the devices: a bound above the
 * makespans of 2 devices of 4 streams, found in review). Both are floating-point values of the
 * exact bound, and a simulated makespan is a floating-point sum too (of the same op times in
 * another order): a schedule that meets the bound exactly (a perfectly balanced placement, a
 * chain on one device) can come out below it by a few units in the last place, at most about
 * n_ops x DBL_EPSILON relative (round-robin on data/graphs/ffnn.json at 4 devices:
 * 0.32990381998079982 against 0.32990381998080037). Compare with a relative tolerance (the
 * tests use 1e-12); the value itself is not lowered, as it is every learned method's reward
 * unit and every ratio's denominator, bit for bit. */
double dp_cost_critical_path(const dp_graph *g, const dp_cost *c);
double dp_cost_lower_bound(const dp_graph *g, const dp_cost *c);
/* dp_cost_lower_bound's two terms: *critical_path, the longest path of least op times (no
 * transfers), and *work, the least op times summed over the compute streams (either may be
 * NULL); DP_OK or DP_ENOMEM. place --coarsen prints them (dp_coarse_report). */
int dp_cost_bound_terms(const dp_graph *g, const dp_cost *c, double *critical_path, double *work);

#ifdef __cplusplus
}
#endif
#endif
