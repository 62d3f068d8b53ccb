/* dp_transfer.h: transfer models behind one interface (as SimGrid's network models: the engine
 * starts a communication, the model says when it ends). Each model is one file
 * (sim/dp_transfer_fixed.c, _fifo.c, _maxmin.c) behind the table in sim/dp_transfer.c; what a
 * model provides is sim/dp_transfer_model.h.
 *
 *   DP_TRANSFER_FIXED   fixed delay: a transfer of edge e from a to b takes dp_cost_comm(e, a, b)
 *                   (latency + bytes x inv_bw) whatever else is moving: the DOPPLER-compatible
 *                   model (Yao et al. 2026, env/cost.py), with unlimited parallel transfers.
 *   DP_TRANSFER_FIFO    per-link FIFO, store and forward: the transfer is cut into `chunks` equal
 *                   chunks; a chunk crosses the hops (directed channels) of its route in turn;
 *                   a channel carries one chunk at a time, first come first served, for
 *                   chunk_bytes / bandwidth seconds, and the chunk reaches the next hop the
 *                   channel's latency later. With one chunk and one hop: latency + bytes / bw.
 *   DP_TRANSFER_MAXMIN  max-min fair sharing (Bertsekas and Gallager, Data Networks, 6.5.2): each
 *                   route segment first waits its latency, then its bytes flow at a rate that is
 *                   the max-min fair share of every channel it crosses among all flowing
 *                   transfers, found by progressive filling and recomputed whenever a flow joins
 *                   or leaves; a staged route's segments run one after the other (store and
 *                   forward at host memory). Alone on its route a transfer takes exactly the
 *                   fixed-delay time latency + bytes x sum over segments of 1 / bottleneck.
 *
 * FIFO and max-min need a topology (routes and channels); fixed needs only the cost tables.
 * Transfer ids are edge ids (0 .. n_edges-1), each started at most once per run.
 *
 * Calibrated routes (dp_costmodel.h: a measured latency_s and bandwidth_Bps for a device pair)
 * replace the topology's numbers for that pair in every model, so that a lone transfer takes the
 * measured latency_s + bytes / bandwidth_Bps, as in the fixed model (FIFO: with one chunk):
 *   - latency: each link latency on the route is scaled by latency_s / (the route's latency)
 *     (a route of zero latency gets all of latency_s on its first hop / segment);
 *   - bandwidth: the transfer counts as f x bytes on the route's channels, with
 *     f = (1 / bandwidth_Bps) / (its nominal seconds per byte): for max-min the route's inv_bw
 *     (sum over segments of 1 / bottleneck), for FIFO the sum over its hops of 1 / bandwidth.
 * So a calibration that measured 12 GB/s on a 16 GB/s link makes the transfer cost 16/12 of its
 * bytes of link capacity: two such transfers sharing the link get 6 GB/s each (the measured
 * overhead is proportional, as protocol overhead is). Pairs the calibration lacks keep the
 * topology's numbers (f = 1). Channel rates in the max-min trace log are in these nominal bytes.
 *
 * The engine drives a model so: dp_transfer_start() at the transfer's start time; a model that knows
 * the end at once (fixed) returns it and the engine schedules it itself; otherwise the engine asks
 * dp_transfer_next_time() for the model's next internal event and calls dp_transfer_advance() to that
 * time, which returns the transfers that ended. Times never go backwards.
 */
#ifndef DP_TRANSFER_H
#define DP_TRANSFER_H

#include "dp_cost.h"
#include "dp_costmodel.h"
#include "dp_topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DP_TRANSFER_FIXED = 0, DP_TRANSFER_FIFO, DP_TRANSFER_MAXMIN } dp_transfer_kind;

typedef struct dp_transfer dp_transfer;

/* One logged interval of channel use (FIFO: a chunk occupying a channel at full bandwidth). */
typedef struct dp_transfer_busy {
    double t0, t1;
    int chan, id;
} dp_transfer_busy;

/* One logged rate change (max-min): from time t every flow of segment class `klass` moves at
 * rate_Bps, and n_flows of them are flowing. */
typedef struct dp_transfer_rate {
    double t;
    int klass, n_flows;
    double rate_Bps;
} dp_transfer_rate;

/* Allocate a model workspace for costs c (edge ids and sizes: edge_data is bytes) on topology t
 * (NULL allowed only for DP_TRANSFER_FIXED), with calibration cal (NULL: none; the fixed model takes
 * its times from c, which dp_costmodel_costs already calibrated, and ignores it). chunks >= 1
 * (FIFO only; others ignore it). Errors: DP_EINVAL (no topology for a contention model,
 * chunks < 1, device count mismatch, a calibrated route naming a device t lacks), DP_ENOMEM. */
dp_transfer *dp_transfer_alloc(dp_transfer_kind kind, const dp_cost *c, const dp_topology *t, const dp_calib *cal, int chunks,
                       dp_error *err);
/* Free the workspace (its logs included; not c, t or cal). NULL is a no-op. */
void dp_transfer_free(dp_transfer *x);

/* Forget every transfer (start of a run). trace: 1 to log channel use / rate changes. */
void dp_transfer_reset(dp_transfer *x, int trace);

/* The model x was allocated for (x non-NULL, unchecked). */
dp_transfer_kind dp_transfer_get_kind(const dp_transfer *x);
/* The name of a model as dp_transfer_kind_parse reads it ("fixed", "fifo", "maxmin"): a static
 * string; "?" for a value outside the enumeration. */
const char *dp_transfer_kind_name(dp_transfer_kind k);
/* "fixed", "fifo", "maxmin" -> kind; -1 when unknown. */
int dp_transfer_kind_parse(const char *s);

/* Start transfer id (an edge) from device a to device b (a != b) at time now. Returns 1 and sets
 * *delay (seconds from now) when the end is known now (the fixed model: the engine schedules it
 * at now + delay, the same arithmetic as dp_sim), else 0: the end will come out of
 * dp_transfer_advance(). */
int dp_transfer_start(dp_transfer *x, int id, int a, int b, double now, double *delay);

/* Time of the model's next internal event (INFINITY when none). */
double dp_transfer_next_time(const dp_transfer *x);

/* Process every internal event up to and including time t; returns how many transfers ended and
 * points *done at their ids (valid until the next call), in the order they ended. */
int dp_transfer_advance(dp_transfer *x, double t, const int **done);

/* 1 when the last run ran out of memory inside the model (its results are invalid). */
int dp_transfer_failed(const dp_transfer *x);

/* Internal events processed since the last reset (for benchmarks). */
long dp_transfer_events(const dp_transfer *x);

/* The logs of the last run when tracing (NULL, 0 otherwise). */
const dp_transfer_busy *dp_transfer_busy_log(const dp_transfer *x, int *n);
const dp_transfer_rate *dp_transfer_rate_log(const dp_transfer *x, int *n);

/* Bytes of workspace held (for the linear-memory benchmark). */
size_t dp_transfer_workspace_bytes(const dp_transfer *x);

#ifdef __cplusplus
}
#endif
#endif
