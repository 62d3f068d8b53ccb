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

#include <math.h>

#define NEAR(x, y) ck_assert_msg(fabs((x) - (y)) <= 1e-9 * fabs((double)(y)) + 1e-18, "%.17g != %.17g", (double)(x), (double)(y))

/* DP_COST_TIME graph: op i takes comp[i]; edge k is edges[k] = {src, dst} with data[k] */
static dp_graph *time_graph(int n, const double *comp, int m, const int (*edges)[2], const double *data)
{
    dp_graph_builder *b = dp_graph_builder_alloc("edges", "edges", DP_COST_TIME);
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
    dp_costs *c = dp_costs_graph(g, D, &err);
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
    dp_costs_free(c);
    return x;
}

static double dpsim(const dp_graph *g, int D, const int *assign, double *starts)
{
    dp_error err;
    dp_costs *c = dp_costs_graph(g, D, &err);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    ck_assert_ptr_nonnull(s);
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(s, assign, &r, &err), DP_OK);
    if (starts) memcpy(starts, r.op_start, sizeof(double) * (size_t)g->n_ops);
    double m = r.makespan;
    dp_sim_free(s);
    dp_costs_free(c);
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
    o.queue = DP_QUEUE_PRIORITY;
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
    o.queue = DP_QUEUE_FIFO;
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
    o.queue = DP_QUEUE_PRIORITY;
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
    o.queue = DP_QUEUE_PRIORITY;
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
    o.queue = DP_QUEUE_PRIORITY;
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
    o.mode = DP_MODE_BSP;
    x = hisim(g, 2, a, &o, NULL);
    ck_assert_double_eq(x.makespan, 3);
    /* and with priority queues */
    o.mode = DP_MODE_ASYNC;
    o.queue = DP_QUEUE_PRIORITY;
    const double p[] = {1, 1};
    x = hisim(g, 2, a, &o, p);
    ck_assert_double_eq(x.makespan, 3);
    /* both on one device: u's output is released once v finishes (held 1 unit, then v's) */
    const int one[] = {0, 0};
    o.queue = DP_QUEUE_FIFO;
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
    dp_graph_builder *b = dp_graph_builder_alloc("fan", "fan", DP_COST_PHYSICAL);
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
static void xfer_times(const dp_graph *g, const dp_topology *t, const dp_calib *cal, dp_xfer_kind model, int chunks,
                       const int *assign, double *dur)
{
    dp_error err;
    dp_costs *c = dp_costmodel_costs(g, t, cal, &err);
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
    dp_costs_free(c);
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
        xfer_times(g, t, cal, (dp_xfer_kind)model, 1, fwd, d);
        NEAR(d[0], 1e-3 + 2.0);
        xfer_times(g, t, cal, (dp_xfer_kind)model, 1, back, d);
        NEAR(d[0], 1.0);
        /* without the calibration: the link's numbers */
        xfer_times(g, t, NULL, (dp_xfer_kind)model, 1, fwd, d);
        NEAR(d[0], 1.0);
    }
    /* FIFO in 4 chunks on one hop: the chunks pipeline nothing, 1e-3 + 2 s still */
    xfer_times(g, t, cal, DP_XFER_FIFO, 4, fwd, d);
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
    xfer_times(g, t, cal, DP_XFER_MAXMIN, 1, a, d);
    NEAR(d[0], 4.0);
    NEAR(d[1], 4.0);
    dp_error err;
    dp_costs *c = dp_costmodel_costs(g, t, cal, &err);
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    o.transfer_model = DP_XFER_FIFO;
    o.calibration = cal;
    dp_hisim *s = dp_hisim_alloc(g, c, t, &o, &err);
    dp_hisim_result r;
    ck_assert_int_eq(dp_hisim_run(s, a, NULL, &r, &err), DP_OK);
    /* (op 0 takes 1 ms on the roofline: it writes its output, 1e9 bytes at 1e12 B/s) */
    NEAR(r.xfer_start[1], r.xfer_start[0]);
    NEAR(r.xfer_end[0] - r.xfer_start[0], 2.0);
    NEAR(r.xfer_end[1] - r.xfer_start[0], 4.0);
    dp_hisim_free(s);
    dp_costs_free(c);
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
        xfer_times(g, t, cal, (dp_xfer_kind)model, 1, a, d);
        NEAR(d[0], 5e-6 + S / 2e9);
        xfer_times(g, t, NULL, (dp_xfer_kind)model, 1, a, d);
        NEAR(d[0], 2e-6 + 2 * S / 1e10);
    }
    /* a calibration naming a device the topology lacks is refused by the transfer model too */
    dp_calib *bad = calib("{\"src\":\"g0\",\"dst\":\"g7\",\"latency_s\":0,\"bandwidth_Bps\":1e9}");
    dp_error err;
    dp_costs *c = dp_costmodel_costs(g, t, NULL, &err);
    ck_assert_ptr_null(dp_xfer_alloc(DP_XFER_MAXMIN, c, t, bad, 1, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "g7"));
    dp_costs_free(c);
    dp_calib_free(bad);
    dp_graph_free(g);
    dp_calib_free(cal);
    dp_topology_free(t);
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
    return dp_test_run(s);
}
