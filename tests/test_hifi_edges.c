/* test_hifi_edges: the general engine (dp_hisim) and the transfer models (dp_transfer) at their
 * edges: priority queues among ops ready at one instant, repeated edges, calibrated routes under
 * the contention models, zero sizes and durations, bulk-synchronous corner cases. Every expected
 * value is computed by hand in the comment above its check. */
#include "dp_cost.h"
#include "dp_costmodel.h"
#include "dp_graph.h"
#include "dp_hisim.h"
#include "dp_sim.h"
#include "dp_test.h"
#include "dp_topology.h"
#include "dp_transfer.h"

#include <gsl/gsl_rng.h>
#include <math.h>

#define NEAR(x, y) ck_assert_msg(fabs((x) - (y)) <= 1e-9 * fabs((double)(y)) + 1e-18, "%.17g != %.17g", (double)(x), (double)(y))

/* DP_GRAPH_COST_TIME graph: op i takes comp[i]; edge k is edges[k] = {src, dst} with data[k] */
static dp_graph *time_graph(int n, const double *comp, int m, const int (*edges)[2], const double *data)
{
    dp_graph_builder *b = dp_graph_builder_alloc("edges", "edges", DP_GRAPH_COST_TIME);
    for (int i = 0; i < n; i++) dp_graph_builder_add_op(b, NULL, NULL, comp[i], 1);
    for (int k = 0; k < m; k++) dp_graph_builder_add_edge(b, edges[k][0], edges[k][1], data ? data[k] : 0);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

typedef struct outcome {
    double makespan;
    double start[16], ready[16];
    double xreq[16], xstart[16], xend[16];
    double mem_peak[4];
    long n_transfers;
    double volume;
} outcome;

/* the general engine on the DOPPLER-compatible cost tables of g (D devices, no topology) */
static outcome hisim(const dp_graph *g, int D, const int *assign, const dp_hisim_options *o, const double *prio)
{
    dp_error err;
    dp_cost *c = dp_cost_graph(g, D, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    dp_hisim *s = dp_hisim_alloc(g, c, NULL, o, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    dp_hisim_result r;
    ck_assert_msg(dp_hisim_run(s, assign, prio, &r, &err) == DP_OK, "%s", err.msg);
    outcome x;
    memset(&x, 0, sizeof x);
    x.makespan = r.makespan;
    ck_assert_int_le(g->n_ops, 16);
    ck_assert_int_le(g->n_edges, 16);
    for (int v = 0; v < g->n_ops; v++) { x.start[v] = r.op_start[v]; x.ready[v] = r.op_ready[v]; }
    for (int e = 0; e < g->n_edges; e++) { x.xreq[e] = r.xfer_request[e]; x.xstart[e] = r.xfer_start[e]; x.xend[e] = r.xfer_end[e]; }
    for (int d = 0; d < D && d < 4; d++) x.mem_peak[d] = r.mem_peak[d];
    x.n_transfers = r.n_transfers;
    x.volume = r.transfer_volume;
    dp_hisim_free(s);
    dp_cost_free(c);
    return x;
}

static double dpsim(const dp_graph *g, int D, const int *assign, double *starts)
{
    dp_error err;
    dp_cost *c = dp_cost_graph(g, D, &err);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    ck_assert_ptr_nonnull(s);
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(s, assign, &r, &err), DP_OK);
    if (starts) memcpy(starts, r.op_start, sizeof(double) * (size_t)g->n_ops);
    double m = r.makespan;
    dp_sim_free(s);
    dp_cost_free(c);
    return m;
}

/* ---------------- priority queues ---------------- */

/* a(1) -> b(1), a -> c(1), one device, priorities a 3, b 1, c 2: b and c become ready together
 * when a finishes at 1; c has the higher priority and runs [1, 2], b [2, 3]. (The engine used to
 * grant b, whose ready event came first, because the device was free when it was processed.) */
START_TEST(priority_among_ops_ready_together)
{
    const double comp[] = {1, 1, 1};
    const int e[][2] = {{0, 1}, {0, 2}};
    dp_graph *g = time_graph(3, comp, 2, e, NULL);
    const int a[] = {0, 0, 0};
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    o.queue = DP_HISIM_QUEUE_PRIORITY;
    const double p[] = {3, 1, 2};
    outcome x = hisim(g, 1, a, &o, p);
    ck_assert_double_eq(x.start[2], 1);
    ck_assert_double_eq(x.start[1], 2);
    ck_assert_double_eq(x.makespan, 3);
    /* the other priorities: b first */
    const double q[] = {3, 2, 1};
    x = hisim(g, 1, a, &o, q);
    ck_assert_double_eq(x.start[1], 1);
    ck_assert_double_eq(x.start[2], 2);
    /* FIFO keeps the arrival order (b's edge is listed first): b [1, 2], c [2, 3] */
    o.queue = DP_HISIM_QUEUE_FIFO;
    x = hisim(g, 1, a, &o, NULL);
    ck_assert_double_eq(x.start[1], 1);
    ck_assert_double_eq(x.start[2], 2);
    dp_graph_free(g);
}
END_TEST

/* three sources on one device, priorities 1, 3, 2: all ready at 0, they run 1, 2, 0 (each 1) */
START_TEST(priority_among_sources)
{
    const double comp[] = {1, 1, 1};
    dp_graph *g = time_graph(3, comp, 0, NULL, NULL);
    const int a[] = {0, 0, 0};
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    o.queue = DP_HISIM_QUEUE_PRIORITY;
    const double p[] = {1, 3, 2};
    outcome x = hisim(g, 1, a, &o, p);
    ck_assert_double_eq(x.start[1], 0);
    ck_assert_double_eq(x.start[2], 1);
    ck_assert_double_eq(x.start[0], 2);
    /* two streams: 1 and 2 at 0, then 0 at 1 */
    o.streams = 2;
    x = hisim(g, 1, a, &o, p);
    ck_assert_double_eq(x.start[1], 0);
    ck_assert_double_eq(x.start[2], 0);
    ck_assert_double_eq(x.start[0], 1);
    dp_graph_free(g);
}
END_TEST

/* sources a(0) (priority 5) and c(2) (priority 2), a -> b(1) (priority 10), one device. At 0: a
 * beats c; a takes no time, so b is ready at 0 too, and b (10) beats c (2): b [0, 1], c [1, 3].
 * A grant made when a's stream came back, before a's finish made b ready, would run c first. */
START_TEST(priority_zero_time_op_same_instant)
{
    const double comp[] = {0, 1, 2};
    const int e[][2] = {{0, 1}};
    dp_graph *g = time_graph(3, comp, 1, e, NULL);
    const int a[] = {0, 0, 0};
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    o.queue = DP_HISIM_QUEUE_PRIORITY;
    const double p[] = {5, 10, 2};
    outcome x = hisim(g, 1, a, &o, p);
    ck_assert_double_eq(x.start[0], 0);
    ck_assert_double_eq(x.start[1], 0);
    ck_assert_double_eq(x.start[2], 1);
    ck_assert_double_eq(x.makespan, 3);
    dp_graph_free(g);
}
END_TEST

/* priorities do not make an idle device wait: x (priority 1) is alone ready at 0 and runs, the
 * higher-priority y arriving at 1 (after s's transfer) waits for it */
START_TEST(priority_work_conserving)
{
    /* s(1) on device 1 -> y(1) on device 0 (edge 0: comm 0, arrives at 1); x(3) on device 0 */
    const double comp[] = {1, 1, 3};
    const int e[][2] = {{0, 1}};
    dp_graph *g = time_graph(3, comp, 1, e, NULL);
    const int a[] = {1, 0, 0};
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    o.queue = DP_HISIM_QUEUE_PRIORITY;
    const double p[] = {9, 8, 1};
    outcome x = hisim(g, 2, a, &o, p);
    ck_assert_double_eq(x.start[2], 0);
    ck_assert_double_eq(x.ready[1], 1);
    ck_assert_double_eq(x.start[1], 3);
    dp_graph_free(g);
}
END_TEST

/* ---------------- repeated edges ---------------- */

/* u(1) on device 0 -> v(1) on device 1 twice: the first copy's data is 1, the repeat's 5. A
 * repeated edge is one input (dp_sim and the reference): v is ready when the first copy arrives,
 * at 2, and runs [2, 3]. (The engine used to wait for the repeat too: ready at 6.) */
START_TEST(repeated_edge_is_one_input)
{
    const double comp[] = {1, 1};
    const int e[][2] = {{0, 1}, {0, 1}};
    const double data[] = {1, 5};
    dp_graph *g = time_graph(2, comp, 2, e, data);
    ck_assert_int_eq(g->n_repeated_edges, 1);
    const int a[] = {0, 1};
    double st[2];
    ck_assert_double_eq(dpsim(g, 2, a, st), 3);
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    outcome x = hisim(g, 2, a, &o, NULL);
    ck_assert_double_eq(x.ready[1], 2);
    ck_assert_double_eq(x.start[1], st[1]);
    ck_assert_double_eq(x.makespan, 3);
    /* the repeat moves nothing: one transfer of 1 unit, the repeat never requested; the receiver
     * holds the one copy (1) and v's output (1) */
    ck_assert_int_eq(x.n_transfers, 1);
    ck_assert_double_eq(x.volume, 1);
    ck_assert_double_eq(x.xreq[1], -1);
    ck_assert_double_eq(x.mem_peak[1], 2);
    /* so in bulk-synchronous mode: level 0 ends when u and its one transfer have ended (2) */
    o.mode = DP_HISIM_MODE_BSP;
    x = hisim(g, 2, a, &o, NULL);
    ck_assert_double_eq(x.makespan, 3);
    /* and with priority queues */
    o.mode = DP_HISIM_MODE_ASYNC;
    o.queue = DP_HISIM_QUEUE_PRIORITY;
    const double p[] = {1, 1};
    x = hisim(g, 2, a, &o, p);
    ck_assert_double_eq(x.makespan, 3);
    /* both on one device: u's output is released once v finishes (held 1 unit, then v's) */
    const int one[] = {0, 0};
    o.queue = DP_HISIM_QUEUE_FIFO;
    x = hisim(g, 1, one, &o, NULL);
    ck_assert_double_eq(x.makespan, 2);
    ck_assert_double_eq(x.mem_peak[0], 2);
    ck_assert_int_eq(x.n_transfers, 0);
    dp_graph_free(g);
}
END_TEST

/* ---------------- calibrated routes under the contention models ---------------- */

#define GPU(name) "{\"name\":\"" name "\",\"kind\":\"gpu\",\"peak_flops\":1e12,\"mem_bandwidth_Bps\":1e12," \
                  "\"memory_bytes\":1e12}"

static dp_topology *topo(const char *json)
{
    dp_error err;
    dp_topology *t = dp_topology_parse(json, "test-topology", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    return t;
}

static dp_calib *calib(const char *routes)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "{\"format\":\"doppler-calibration\",\"version\":1,\"devices\":{},\"routes\":[%s]}", routes);
    dp_error err;
    dp_calib *c = dp_calib_parse(buf, "cal.json", &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    return c;
}

/* physical graph: op 0 (no work) feeds ops 1..k with `bytes` each (no work) */
static dp_graph *fan(int k, double bytes)
{
    dp_graph_builder *b = dp_graph_builder_alloc("fan", "fan", DP_GRAPH_COST_PHYSICAL);
    dp_graph_builder_add_op(b, NULL, NULL, 0, bytes);
    for (int i = 0; i < k; i++) {
        dp_graph_builder_add_op(b, NULL, NULL, 0, 0);
        dp_graph_builder_add_edge(b, 0, i + 1, bytes);
    }
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

/* transfer durations (end - start) of edges 0..m-1 of g on t under a model, with calibration */
static void xfer_times(const dp_graph *g, const dp_topology *t, const dp_calib *cal, dp_transfer_kind model, int chunks,
                       const int *assign, double *dur)
{
    dp_error err;
    dp_cost *c = dp_costmodel_costs(g, t, cal, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    o.transfer_model = model;
    o.chunks = chunks;
    o.calibration = cal;
    dp_hisim *s = dp_hisim_alloc(g, c, t, &o, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    dp_hisim_result r;
    ck_assert_msg(dp_hisim_run(s, assign, NULL, &r, &err) == DP_OK, "%s", err.msg);
    for (int e = 0; e < g->n_edges; e++) dur[e] = r.xfer_end[e] - r.xfer_start[e];
    dp_hisim_free(s);
    dp_cost_free(c);
}

/* one 1 GB/s link without latency; the calibration measured g0 -> g1 at 1 ms + 0.5 GB/s.
 * S = 1e9 bytes alone: 1e-3 + 2 s in every model (the fixed model always did; FIFO and max-min
 * used to give the link's 1 s). g1 -> g0 is not calibrated: 1 s. */
START_TEST(calibrated_route_alone)
{
    dp_topology *t = topo("{\"devices\":[" GPU("g0") "," GPU("g1") "],"
                          "\"links\":[{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e9,\"latency_s\":0}]}");
    dp_calib *cal = calib("{\"src\":\"g0\",\"dst\":\"g1\",\"latency_s\":1e-3,\"bandwidth_Bps\":5e8}");
    dp_graph *g = fan(1, 1e9);
    const int fwd[] = {0, 1}, back[] = {1, 0};
    double d[2];
    for (int model = 0; model < 3; model++) {
        xfer_times(g, t, cal, (dp_transfer_kind)model, 1, fwd, d);
        NEAR(d[0], 1e-3 + 2.0);
        xfer_times(g, t, cal, (dp_transfer_kind)model, 1, back, d);
        NEAR(d[0], 1.0);
        /* without the calibration: the link's numbers */
        xfer_times(g, t, NULL, (dp_transfer_kind)model, 1, fwd, d);
        NEAR(d[0], 1.0);
    }
    /* FIFO in 4 chunks on one hop: the chunks pipeline nothing, 1e-3 + 2 s still */
    xfer_times(g, t, cal, DP_TRANSFER_FIFO, 4, fwd, d);
    NEAR(d[0], 1e-3 + 2.0);
    dp_graph_free(g);
    dp_calib_free(cal);
    dp_topology_free(t);
}
END_TEST

/* two calibrated transfers of S = 1e9 from g0 to g1 (and g2 on another link) share nothing /
 * the g0 -> g1 link. Calibration g0 -> g1: 0 latency, 0.5 GB/s, so each counts as 2e9 bytes on the
 * 1 GB/s link. Max-min: both flow at 0.5 GB/s nominal = 0.25 GB/s real: 4 s each. FIFO: the first
 * 2 s, the second waits for it and ends at 4 s (2 s of its own). */
START_TEST(calibrated_route_shared)
{
    dp_topology *t = topo("{\"devices\":[" GPU("g0") "," GPU("g1") "],"
                          "\"links\":[{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e9,\"latency_s\":0}]}");
    dp_calib *cal = calib("{\"src\":\"g0\",\"dst\":\"g1\",\"latency_s\":0,\"bandwidth_Bps\":5e8}");
    dp_graph *g = fan(2, 1e9);
    const int a[] = {0, 1, 1};
    double d[2];
    xfer_times(g, t, cal, DP_TRANSFER_MAXMIN, 1, a, d);
    NEAR(d[0], 4.0);
    NEAR(d[1], 4.0);
    dp_error err;
    dp_cost *c = dp_costmodel_costs(g, t, cal, &err);
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    o.transfer_model = DP_TRANSFER_FIFO;
    o.calibration = cal;
    dp_hisim *s = dp_hisim_alloc(g, c, t, &o, &err);
    dp_hisim_result r;
    ck_assert_int_eq(dp_hisim_run(s, a, NULL, &r, &err), DP_OK);
    /* (op 0 takes 1 ms on the roofline: it writes its output, 1e9 bytes at 1e12 B/s) */
    NEAR(r.xfer_start[1], r.xfer_start[0]);
    NEAR(r.xfer_end[0] - r.xfer_start[0], 2.0);
    NEAR(r.xfer_end[1] - r.xfer_start[0], 4.0);
    dp_hisim_free(s);
    dp_cost_free(c);
    dp_graph_free(g);
    dp_calib_free(cal);
    dp_topology_free(t);
}
END_TEST

/* a staged route g0 -> h -> g1 (two PCIe hops of 1e10 B/s, 1 us each); calibrated at 5 us and
 * 2e9 B/s: every model gives 5e-6 + S / 2e9 alone (FIFO with one chunk); the latency is split
 * over the two hops, the bytes weigh 5x on each. Uncalibrated: 2 us + 2 S / 1e10. */
START_TEST(calibrated_staged_route)
{
    dp_topology *t = topo("{\"devices\":[" GPU("g0") "," GPU("g1") "],\"peer_to_peer\":false,"
                          "\"nodes\":[{\"name\":\"h\",\"kind\":\"host\"}],"
                          "\"links\":[{\"a\":\"g0\",\"b\":\"h\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e10,\"latency_s\":1e-6},"
                          "{\"a\":\"g1\",\"b\":\"h\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e10,\"latency_s\":1e-6}]}");
    dp_calib *cal = calib("{\"src\":\"g0\",\"dst\":\"g1\",\"latency_s\":5e-6,\"bandwidth_Bps\":2e9}");
    const double S = 1e8;
    dp_graph *g = fan(1, S);
    const int a[] = {0, 1};
    double d[1];
    for (int model = 0; model < 3; model++) {
        xfer_times(g, t, cal, (dp_transfer_kind)model, 1, a, d);
        NEAR(d[0], 5e-6 + S / 2e9);
        xfer_times(g, t, NULL, (dp_transfer_kind)model, 1, a, d);
        NEAR(d[0], 2e-6 + 2 * S / 1e10);
    }
    /* a calibration naming a device the topology lacks is refused by the transfer model too */
    dp_calib *bad = calib("{\"src\":\"g0\",\"dst\":\"g7\",\"latency_s\":0,\"bandwidth_Bps\":1e9}");
    dp_error err;
    dp_cost *c = dp_costmodel_costs(g, t, NULL, &err);
    ck_assert_ptr_null(dp_transfer_alloc(DP_TRANSFER_MAXMIN, c, t, bad, 1, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "g7"));
    dp_cost_free(c);
    dp_calib_free(bad);
    dp_graph_free(g);
    dp_calib_free(cal);
    dp_topology_free(t);
}
END_TEST

/* ---------------- zero sizes and durations, corner cases ---------------- */

static const char *one_link(double latency)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "{\"devices\":[" GPU("g0") "," GPU("g1") "],"
             "\"links\":[{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e9,\"latency_s\":%g}]}", latency);
    return buf;
}

/* physical graph: op 0 -> op 1 (edge of b1 bytes), op 0 -> op 2 (b2 bytes); no op touches bytes
 * of its own (out_bytes 0), so ops take 0 s except for their inputs at 1e12 B/s */
static dp_graph *two_edges(double b1, double b2)
{
    dp_graph_builder *b = dp_graph_builder_alloc("two", "two", DP_GRAPH_COST_PHYSICAL);
    for (int i = 0; i < 3; i++) dp_graph_builder_add_op(b, NULL, NULL, 0, 0);
    dp_graph_builder_add_edge(b, 0, 1, b1);
    dp_graph_builder_add_edge(b, 0, 2, b2);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

/* an empty transfer takes exactly the route latency in every model (FIFO in any chunks), and
 * nothing at all on a link without latency; alone or beside a 1 s transfer under max-min (its
 * share is irrelevant when it has nothing to move); under FIFO it queues behind a transfer
 * listed before it on the channel (1 s + latency), and the big one does not wait for it */
START_TEST(zero_size_transfers)
{
    const double L = 1e-6;
    const int a[] = {0, 1, 1};
    double d[2];
    for (int model = 0; model < 3; model++)
        for (int chunks = 1; chunks <= 4; chunks += 3) {
            if (chunks > 1 && model != DP_TRANSFER_FIFO) continue;
            dp_topology *t = topo(one_link(L));
            dp_graph *g = two_edges(0, 0);
            xfer_times(g, t, NULL, (dp_transfer_kind)model, chunks, a, d);
            NEAR(d[0], L);
            NEAR(d[1], L);
            dp_topology_free(t);
            t = topo(one_link(0));
            xfer_times(g, t, NULL, (dp_transfer_kind)model, chunks, a, d);
            ck_assert_double_eq(d[0], 0);
            ck_assert_double_eq(d[1], 0);
            dp_topology_free(t);
            dp_graph_free(g);
        }
    dp_topology *t = topo(one_link(L));
    dp_graph *g = two_edges(0, 1e9);  /* the empty one first */
    xfer_times(g, t, NULL, DP_TRANSFER_MAXMIN, 1, a, d);
    NEAR(d[0], L);
    NEAR(d[1], L + 1.0);
    xfer_times(g, t, NULL, DP_TRANSFER_FIFO, 1, a, d);
    NEAR(d[0], L);
    NEAR(d[1], L + 1.0);
    dp_graph_free(g);
    g = two_edges(1e9, 0);  /* the big one first */
    xfer_times(g, t, NULL, DP_TRANSFER_MAXMIN, 1, a, d);
    NEAR(d[0], L + 1.0);
    NEAR(d[1], L);
    xfer_times(g, t, NULL, DP_TRANSFER_FIFO, 1, a, d);
    NEAR(d[0], L + 1.0);
    NEAR(d[1], L + 1.0);
    dp_graph_free(g);
    dp_topology_free(t);
}
END_TEST

/* zero-time ops: a(0) on 0 -> b(0) on 1 -> c(0) on 0, comm 0: everything at 0, makespan 0, in
 * every queue discipline and mode; with comm(a) = 1: b and c at 1 (bsp: c after b's level) */
START_TEST(zero_time_ops)
{
    const double comp[] = {0, 0, 0};
    const int e[][2] = {{0, 1}, {1, 2}};
    const int a[] = {0, 1, 0};
    const double p[] = {1, 2, 3};
    for (int mode = 0; mode < 2; mode++)
        for (int q = 0; q < 2; q++) {
            dp_hisim_options o;
            dp_hisim_options_init(&o);
            o.mode = (dp_hisim_mode)mode;
            o.queue = (dp_hisim_queue_kind)q;
            const double zero[] = {0, 0};
            dp_graph *g = time_graph(3, comp, 2, e, zero);
            outcome x = hisim(g, 2, a, &o, p);
            ck_assert_double_eq(x.makespan, 0);
            for (int v = 0; v < 3; v++) ck_assert_double_eq(x.start[v], 0);
            dp_graph_free(g);
            const double one[] = {1, 0};
            g = time_graph(3, comp, 2, e, one);
            x = hisim(g, 2, a, &o, p);
            ck_assert_double_eq(x.start[1], 1);
            ck_assert_double_eq(x.start[2], 1);
            ck_assert_double_eq(x.makespan, 1);
            dp_graph_free(g);
        }
}
END_TEST

/* a(2) -> b(1), and c(1) without inputs, all on one device.
 * FIFO: a and c are ready at 0 (op order): a [0, 2], c [2, 3], b (ready 2, queued behind c) [3, 4].
 * priority a 5, b 10, c 1: a [0, 2]; at 2 b beats c: b [2, 3], c [3, 4].
 * bulk-synchronous (FIFO): level 0 = a, c: a [0, 2], c [2, 3]; level 1 at 3: b [3, 4]. */
START_TEST(source_on_busy_device)
{
    const double comp[] = {2, 1, 1};
    const int e[][2] = {{0, 1}};
    dp_graph *g = time_graph(3, comp, 1, e, NULL);
    const int a[] = {0, 0, 0};
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    outcome x = hisim(g, 1, a, &o, NULL);
    ck_assert_double_eq(x.start[2], 2);
    ck_assert_double_eq(x.ready[1], 2);
    ck_assert_double_eq(x.start[1], 3);
    ck_assert_double_eq(x.ready[2], 0);
    o.queue = DP_HISIM_QUEUE_PRIORITY;
    const double p[] = {5, 10, 1};
    x = hisim(g, 1, a, &o, p);
    ck_assert_double_eq(x.start[0], 0);
    ck_assert_double_eq(x.start[1], 2);
    ck_assert_double_eq(x.start[2], 3);
    o.queue = DP_HISIM_QUEUE_FIFO;
    o.mode = DP_HISIM_MODE_BSP;
    x = hisim(g, 1, a, &o, NULL);
    ck_assert_double_eq(x.start[2], 2);
    ck_assert_double_eq(x.ready[1], 3);
    ck_assert_double_eq(x.start[1], 3);
    ck_assert_double_eq(x.makespan, 4);
    dp_graph_free(g);
}
END_TEST

/* no edges: one level. Ops 1, 2, 3, 4 on devices 0, 1, 0, 1: device 0 busy 4, device 1 busy 6;
 * bulk-synchronous = asynchronous = 6 */
START_TEST(bsp_single_level)
{
    const double comp[] = {1, 2, 3, 4};
    dp_graph *g = time_graph(4, comp, 0, NULL, NULL);
    const int a[] = {0, 1, 0, 1};
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    ck_assert_double_eq(hisim(g, 2, a, &o, NULL).makespan, 6);
    o.mode = DP_HISIM_MODE_BSP;
    outcome x = hisim(g, 2, a, &o, NULL);
    ck_assert_double_eq(x.makespan, 6);
    ck_assert_double_eq(x.start[2], 1);
    ck_assert_double_eq(x.start[3], 2);
    dp_graph_free(g);
}
END_TEST

/* more streams than ops: three sources on one device with 8 streams run together on streams
 * 0, 1, 2 (FIFO and priority); makespan = the longest (3) */
START_TEST(more_streams_than_ops)
{
    const double comp[] = {1, 3, 2};
    dp_graph *g = time_graph(3, comp, 0, NULL, NULL);
    const int a[] = {0, 0, 0};
    const double p[] = {1, 3, 2};
    for (int q = 0; q < 2; q++) {
        dp_error err;
        dp_cost *c = dp_cost_graph(g, 1, &err);
        dp_hisim_options o;
        dp_hisim_options_init(&o);
        o.streams = 8;
        o.queue = (dp_hisim_queue_kind)q;
        dp_hisim *s = dp_hisim_alloc(g, c, NULL, &o, &err);
        dp_hisim_result r;
        ck_assert_int_eq(dp_hisim_run(s, a, p, &r, &err), DP_OK);
        ck_assert_double_eq(r.makespan, 3);
        int seen = 0;
        for (int v = 0; v < 3; v++) {
            ck_assert_double_eq(r.op_start[v], 0);
            ck_assert(r.op_stream[v] >= 0 && r.op_stream[v] < 3);
            seen |= 1 << r.op_stream[v];
        }
        ck_assert_int_eq(seen, 7);
        /* a second run on the same workspace gives the same */
        ck_assert_int_eq(dp_hisim_run(s, a, p, &r, &err), DP_OK);
        ck_assert_double_eq(r.makespan, 3);
        dp_hisim_free(s);
        dp_cost_free(c);
    }
    dp_graph_free(g);
}
END_TEST

/* ---------------- invariants on random graphs ---------------- */

/* Random DAGs (op times 1..5, so no two rounds share an instant; comm 0..3, repeated edges
 * included) under every combination of queue, mode and stream count, no topology (fixed delays).
 * Checked for every op v on device d:
 *   - inputs: v is ready no earlier than each first-copy in-edge's producer end + its transfer
 *     (comm on another device, 0 on the same one), and in asynchronous mode at exactly the latest;
 *   - work conservation: while v waits (from ready to start) all of d's streams are busy;
 *   - discipline: when v starts, no op of d that is ready and still waiting has a higher priority
 *     (priority queues) or became ready strictly earlier (FIFO);
 *   - bulk-synchronous: v starts after every op of the previous levels and their transfers ended;
 *   - at most `streams` ops run at once on d. */
START_TEST(random_invariants)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    for (int trial = 0; trial < 300; trial++) {
        int n = 2 + (int)gsl_rng_uniform_int(rng, 30), D = 1 + (int)gsl_rng_uniform_int(rng, 3);
        dp_graph_builder *b = dp_graph_builder_alloc("rnd", "rnd", DP_GRAPH_COST_TIME);
        double *comm = malloc(sizeof(double) * (size_t)n);
        for (int i = 0; i < n; i++) {
            comm[i] = (double)gsl_rng_uniform_int(rng, 4);
            dp_graph_builder_add_op(b, NULL, NULL, 1 + (double)gsl_rng_uniform_int(rng, 5), comm[i]);
        }
        for (int v = 1; v < n; v++)
            for (int j = (int)gsl_rng_uniform_int(rng, 4); j > 0; j--) {
                int u = (int)gsl_rng_uniform_int(rng, (unsigned long)v);
                dp_graph_builder_add_edge(b, u, v, comm[u]);
            }
        dp_error err;
        dp_graph *g = dp_graph_builder_finish(b, &err);
        dp_graph_builder_free(b);
        ck_assert_msg(g != NULL, "%s", err.msg);
        int *a = malloc(sizeof(int) * (size_t)n);
        double *prio = malloc(sizeof(double) * (size_t)n);
        for (int v = 0; v < n; v++) {
            a[v] = (int)gsl_rng_uniform_int(rng, (unsigned long)D);
            prio[v] = (double)gsl_rng_uniform_int(rng, 6);  /* ties on purpose */
        }
        dp_cost *c = dp_cost_graph(g, D, &err);
        dp_hisim_options o;
        dp_hisim_options_init(&o);
        o.queue = (dp_hisim_queue_kind)gsl_rng_uniform_int(rng, 2);
        o.mode = (dp_hisim_mode)gsl_rng_uniform_int(rng, 2);
        o.streams = 1 + (int)gsl_rng_uniform_int(rng, 3);
        dp_hisim *s = dp_hisim_alloc(g, c, NULL, &o, &err);
        dp_hisim_result r;
        ck_assert_int_eq(dp_hisim_run(s, a, prio, &r, &err), DP_OK);
        int nl;
        const int *level = dp_hisim_levels(s, &nl);
        for (int v = 0; v < n; v++) {
            const int d = a[v];
            double latest = 0;
            for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
                int e = g->pred_edge[q], u = g->edge_src[e];
                double t = r.op_end[u] + (a[u] != d ? dp_cost_comm(c, e, a[u], d) : 0);
                ck_assert_msg(r.op_ready[v] >= t, "trial %d: op %d ready %g before its input from %d at %g", trial, v,
                              r.op_ready[v], u, t);
                if (t > latest) latest = t;
            }
            if (o.mode == DP_HISIM_MODE_ASYNC)
                ck_assert_msg(r.op_ready[v] == latest, "trial %d: op %d ready %g, inputs at %g", trial, v, r.op_ready[v], latest);
            ck_assert(r.op_start[v] >= r.op_ready[v]);
            /* running ops of d at the instants v waits through, and the discipline at v's start */
            for (int w = 0; w < n; w++) {
                if (a[w] != d || w == v) continue;
                double t = r.op_end[w];
                if (t >= r.op_ready[v] && t < r.op_start[v]) {
                    int busy = 0;
                    for (int x = 0; x < n; x++) busy += a[x] == d && r.op_start[x] <= t && t < r.op_end[x];
                    ck_assert_msg(busy == o.streams, "trial %d: op %d waits at %g with %d of %d streams busy", trial, v, t,
                                  busy, o.streams);
                }
                if (r.op_ready[w] <= r.op_start[v] && r.op_start[w] > r.op_start[v]) {
                    if (o.queue == DP_HISIM_QUEUE_PRIORITY)
                        ck_assert_msg(prio[w] <= prio[v], "trial %d: op %d (priority %g) starts at %g before waiting op %d "
                                      "(priority %g)", trial, v, prio[v], r.op_start[v], w, prio[w]);
                    else
                        ck_assert_msg(r.op_ready[w] >= r.op_ready[v], "trial %d: op %d (ready %g) starts before op %d "
                                      "(ready %g)", trial, v, r.op_ready[v], w, r.op_ready[w]);
                }
            }
            int busy = 0;
            for (int x = 0; x < n; x++) busy += a[x] == d && r.op_start[x] <= r.op_start[v] && r.op_start[v] < r.op_end[x];
            ck_assert_int_le(busy, o.streams);
            if (o.mode == DP_HISIM_MODE_BSP)
                for (int e = 0; e < g->n_edges; e++) {
                    int u = g->edge_src[e];
                    if (level[u] >= level[v]) continue;
                    ck_assert(r.op_start[v] >= r.op_end[u]);
                    if (r.xfer_end[e] >= 0) ck_assert(r.op_start[v] >= r.xfer_end[e]);
                }
        }
        dp_hisim_free(s);
        dp_cost_free(c);
        free(a);
        free(prio);
        free(comm);
        dp_graph_free(g);
    }
    gsl_rng_free(rng);
}
END_TEST

/* Random physical DAGs on three GPUs behind one PCIe switch (1e9 B/s, 1 us per link) plus an
 * NVLink between g0 and g1, random copy-engine limits, under FIFO (1 or 3 chunks) and max-min,
 * either queue discipline, one or two streams, repeated edges included. Checked: a transfer is requested when its producer ends and is never
 * faster than alone on an idle route (route latency + bytes / bottleneck); at no instant does a
 * device drive more transfers in one direction than its copy engines; each channel carries no
 * more than bandwidth x makespan; the consumer is ready no earlier than the transfer's end. */
START_TEST(random_transfer_invariants)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    for (int trial = 0; trial < 120; trial++) {
        int ce[3];
        for (int d = 0; d < 3; d++) ce[d] = (int)gsl_rng_uniform_int(rng, 3);
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"devices\":["
                 "{\"name\":\"g0\",\"kind\":\"gpu\",\"peak_flops\":1e12,\"mem_bandwidth_Bps\":1e12,\"memory_bytes\":1e12,\"copy_engines\":%d},"
                 "{\"name\":\"g1\",\"kind\":\"gpu\",\"peak_flops\":1e12,\"mem_bandwidth_Bps\":1e12,\"memory_bytes\":1e12,\"copy_engines\":%d},"
                 "{\"name\":\"g2\",\"kind\":\"gpu\",\"peak_flops\":1e12,\"mem_bandwidth_Bps\":1e12,\"memory_bytes\":1e12,\"copy_engines\":%d}],"
                 "\"nodes\":[{\"name\":\"sw\",\"kind\":\"switch\"}],"
                 "\"links\":[{\"a\":\"g0\",\"b\":\"sw\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e9,\"latency_s\":1e-6},"
                 "{\"a\":\"g1\",\"b\":\"sw\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e9,\"latency_s\":1e-6},"
                 "{\"a\":\"g2\",\"b\":\"sw\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e9,\"latency_s\":1e-6},"
                 "{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"nvlink\",\"bandwidth_Bps\":3e9,\"latency_s\":1e-6}]}",
                 ce[0], ce[1], ce[2]);
        dp_topology *t = topo(json);
        int n = 2 + (int)gsl_rng_uniform_int(rng, 25);
        dp_graph_builder *b = dp_graph_builder_alloc("rnd", "rnd", DP_GRAPH_COST_PHYSICAL);
        for (int i = 0; i < n; i++)
            dp_graph_builder_add_op(b, NULL, NULL, 1e9 * (double)gsl_rng_uniform_int(rng, 4),
                                    1e8 * (double)gsl_rng_uniform_int(rng, 3));
        for (int v = 1; v < n; v++)
            for (int j = (int)gsl_rng_uniform_int(rng, 4); j > 0; j--)
                dp_graph_builder_add_edge(b, (int)gsl_rng_uniform_int(rng, (unsigned long)v), v,
                                          1e8 * (double)gsl_rng_uniform_int(rng, 3));
        dp_error err;
        dp_graph *g = dp_graph_builder_finish(b, &err);
        dp_graph_builder_free(b);
        ck_assert_msg(g != NULL, "%s", err.msg);
        int *a = malloc(sizeof(int) * (size_t)n);
        for (int v = 0; v < n; v++) a[v] = (int)gsl_rng_uniform_int(rng, 3);
        dp_cost *c = dp_costmodel_costs(g, t, NULL, &err);
        dp_hisim_options o;
        dp_hisim_options_init(&o);
        o.transfer_model = gsl_rng_uniform_int(rng, 2) ? DP_TRANSFER_MAXMIN : DP_TRANSFER_FIFO;
        o.chunks = 1 + 2 * (int)gsl_rng_uniform_int(rng, 2);
        o.mode = (dp_hisim_mode)gsl_rng_uniform_int(rng, 2);
        o.queue = (dp_hisim_queue_kind)gsl_rng_uniform_int(rng, 2);
        o.streams = 1 + (int)gsl_rng_uniform_int(rng, 2);
        double *prio = malloc(sizeof(double) * (size_t)n);
        for (int v = 0; v < n; v++) prio[v] = (double)gsl_rng_uniform_int(rng, 4);
        dp_hisim *s = dp_hisim_alloc(g, c, t, &o, &err);
        ck_assert_msg(s != NULL, "%s", err.msg);
        dp_hisim_result r;
        ck_assert_msg(dp_hisim_run(s, a, prio, &r, &err) == DP_OK, "%s", err.msg);
        free(prio);
        const double eps = 1e-12;
        for (int e = 0; e < g->n_edges; e++) {
            int u = g->edge_src[e], v = g->edge_dst[e];
            if (r.xfer_request[e] < 0) continue;
            ck_assert(a[u] != a[v]);
            ck_assert_double_eq(r.xfer_request[e], r.op_end[u]);
            ck_assert(r.xfer_start[e] >= r.xfer_request[e]);
            const dp_topology_route_info *rt = dp_topology_route(t, a[u], a[v]);
            double alone = rt->latency_s + c->edge_data[e] / rt->bottleneck_Bps;
            ck_assert_msg(r.xfer_end[e] - r.xfer_start[e] >= alone * (1 - 1e-9), "trial %d: edge %d took %g, alone %g", trial,
                          e, r.xfer_end[e] - r.xfer_start[e], alone);
            ck_assert(r.op_ready[v] >= r.xfer_end[e] - eps || o.mode == DP_HISIM_MODE_BSP);
            ck_assert(r.op_start[v] >= r.xfer_end[e] - eps);
            /* copy engines at this transfer's start */
            int out = 0, in = 0;
            for (int f = 0; f < g->n_edges; f++) {
                if (r.xfer_request[f] < 0 || !(r.xfer_start[f] <= r.xfer_start[e] && r.xfer_start[e] < r.xfer_end[f])) continue;
                out += a[g->edge_src[f]] == a[u];
                in += a[g->edge_dst[f]] == a[v];
            }
            if (ce[a[u]] > 0) ck_assert_int_le(out, ce[a[u]]);
            if (ce[a[v]] > 0) ck_assert_int_le(in, ce[a[v]]);
        }
        for (int ch = 0; ch < t->n_channels; ch++)
            ck_assert(r.chan_bytes[ch] <= t->chan_bw[ch] * r.makespan * (1 + 1e-9));
        dp_hisim_free(s);
        dp_cost_free(c);
        free(a);
        dp_graph_free(g);
        dp_topology_free(t);
    }
    gsl_rng_free(rng);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hifi_edges");
    TCase *p = tcase_create("priority");
    tcase_add_test(p, priority_among_ops_ready_together);
    tcase_add_test(p, priority_among_sources);
    tcase_add_test(p, priority_zero_time_op_same_instant);
    tcase_add_test(p, priority_work_conserving);
    suite_add_tcase(s, p);
    TCase *r = tcase_create("repeated_edges");
    tcase_add_test(r, repeated_edge_is_one_input);
    suite_add_tcase(s, r);
    TCase *k = tcase_create("calibration");
    tcase_add_test(k, calibrated_route_alone);
    tcase_add_test(k, calibrated_route_shared);
    tcase_add_test(k, calibrated_staged_route);
    suite_add_tcase(s, k);
    TCase *z = tcase_create("corners");
    tcase_add_test(z, zero_size_transfers);
    tcase_add_test(z, zero_time_ops);
    tcase_add_test(z, source_on_busy_device);
    tcase_add_test(z, bsp_single_level);
    tcase_add_test(z, more_streams_than_ops);
    suite_add_tcase(s, z);
    TCase *iv = tcase_create("invariants");
    tcase_add_test(iv, random_invariants);
    tcase_add_test(iv, random_transfer_invariants);
    suite_add_tcase(s, iv);
    return dp_test_run(s);
}
