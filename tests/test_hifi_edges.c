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
    return dp_test_run(s);
}
