/* test_transfer_models: the transfer models behind their table (sim/dp_transfer.h), driven directly
 * through the interface an engine uses (start, next_time, advance), with hand-computed ends:
 * the fixed delay, per-link FIFO (serialisation, chunk pipelining over two hops), max-min fair
 * sharing (equal shares, a late joiner), names, refusals, traces and reset. */
#include "dp_costmodel.h"
#include "dp_graph.h"
#include "dp_test.h"
#include "dp_topology.h"
#include "dp_transfer.h"

#include <math.h>

#define NEAR(x, y) ck_assert_msg(fabs((x) - (y)) <= 1e-9 * fabs((double)(y)) + 1e-15, "%.17g != %.17g", (double)(x), (double)(y))

#define GPU(name) "{\"name\":\"" name "\",\"kind\":\"gpu\",\"peak_flops\":1e12,\"mem_bandwidth_Bps\":1e12," \
                  "\"memory_bytes\":1e12}"

/* two GPUs on one 1 GB/s link without latency */
static const char *ONE_LINK = "{\"devices\":[" GPU("g0") "," GPU("g1") "],"
                              "\"links\":[{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e9,\"latency_s\":0}]}";
/* two GPUs through a switch: two 1 GB/s hops, no latency */
static const char *TWO_HOPS = "{\"devices\":[" GPU("g0") "," GPU("g1") "],"
                              "\"nodes\":[{\"name\":\"sw\",\"kind\":\"switch\"}],"
                              "\"links\":[{\"a\":\"g0\",\"b\":\"sw\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e9,\"latency_s\":0},"
                              "{\"a\":\"sw\",\"b\":\"g1\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e9,\"latency_s\":0}]}";

typedef struct fixture {
    dp_topology *t;
    dp_graph *g;
    dp_cost *c;
} fixture;

/* op 0 feeds ops 1..k, each edge `bytes` (physical units: the topology prices them) */
static fixture setup(const char *topo_json, int k, double bytes)
{
    fixture f;
    dp_error err;
    f.t = dp_topology_parse(topo_json, "test-topology", &err);
    ck_assert_msg(f.t != NULL, "%s", err.msg);
    dp_graph_builder *b = dp_graph_builder_alloc("fan", "fan", DP_GRAPH_COST_PHYSICAL);
    dp_graph_builder_add_op(b, NULL, NULL, 0, bytes);
    for (int i = 0; i < k; i++) {
        dp_graph_builder_add_op(b, NULL, NULL, 0, 0);
        dp_graph_builder_add_edge(b, 0, i + 1, bytes);
    }
    f.g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(f.g != NULL, "%s", err.msg);
    f.c = dp_costmodel_costs(f.g, f.t, NULL, &err);
    ck_assert_msg(f.c != NULL, "%s", err.msg);
    return f;
}

static void teardown(fixture *f)
{
    dp_cost_free(f->c);
    dp_graph_free(f->g);
    dp_topology_free(f->t);
}

static dp_transfer *model(const fixture *f, dp_transfer_kind kind, int chunks)
{
    dp_error err;
    dp_transfer *x = dp_transfer_alloc(kind, f->c, f->t, NULL, chunks, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    return x;
}

/* run the model to the end as an engine would; end[id] gets each transfer's end (transfers
 * start at start[id], in id order at equal times); returns how many ended */
static int drive(dp_transfer *x, int n, const double *start, double *end)
{
    int next = 0, ended = 0;
    for (;;) {
        double tn = dp_transfer_next_time(x);
        double ts = next < n ? start[next] : INFINITY;
        if (ts <= tn && next < n) {
            double delay;
            if (dp_transfer_start(x, next, 0, 1, ts, &delay)) { end[next] = ts + delay; ended++; }
            next++;
            continue;
        }
        if (tn == INFINITY) break;
        const int *done;
        int k = dp_transfer_advance(x, tn, &done);
        for (int i = 0; i < k; i++) { end[done[i]] = tn; ended++; }
    }
    return ended;
}

START_TEST(names_through_the_table)
{
    for (int k = 0; k < 3; k++) ck_assert_int_eq(dp_transfer_kind_parse(dp_transfer_kind_name((dp_transfer_kind)k)), k);
    ck_assert_str_eq(dp_transfer_kind_name(DP_TRANSFER_MAXMIN), "maxmin");
    ck_assert_int_eq(dp_transfer_kind_parse("fifo"), DP_TRANSFER_FIFO);
    ck_assert_int_eq(dp_transfer_kind_parse("lru"), -1);
    ck_assert_str_eq(dp_transfer_kind_name((dp_transfer_kind)7), "?");
}
END_TEST

START_TEST(refusals)
{
    fixture f = setup(ONE_LINK, 1, 1e9);
    dp_error err;
    ck_assert_ptr_null(dp_transfer_alloc(DP_TRANSFER_FIFO, f.c, NULL, NULL, 1, &err));
    ck_assert_int_eq(err.code, DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "fifo needs a topology") != NULL, "%s", err.msg);
    ck_assert_ptr_null(dp_transfer_alloc(DP_TRANSFER_MAXMIN, f.c, NULL, NULL, 1, &err));
    ck_assert_ptr_null(dp_transfer_alloc(DP_TRANSFER_FIFO, f.c, f.t, NULL, 0, &err));
    ck_assert_msg(strstr(err.msg, "chunks") != NULL, "%s", err.msg);
    ck_assert_ptr_null(dp_transfer_alloc((dp_transfer_kind)9, f.c, f.t, NULL, 1, &err));
    /* the fixed model needs no topology */
    dp_transfer *x = dp_transfer_alloc(DP_TRANSFER_FIXED, f.c, NULL, NULL, 1, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_transfer_get_kind(x), DP_TRANSFER_FIXED);
    dp_transfer_free(x);
    teardown(&f);
}
END_TEST

/* fixed: the end is known at the start and equals the cost table's comm; nothing shares */
START_TEST(fixed_delay)
{
    fixture f = setup(ONE_LINK, 2, 1e9);
    dp_transfer *x = model(&f, DP_TRANSFER_FIXED, 1);
    double delay = -1;
    ck_assert_int_eq(dp_transfer_start(x, 0, 0, 1, 0.5, &delay), 1);
    NEAR(delay, dp_cost_comm(f.c, 0, 0, 1));
    NEAR(delay, 1.0);
    ck_assert_int_eq(dp_transfer_start(x, 1, 0, 1, 0.5, &delay), 1);
    NEAR(delay, 1.0);   /* the same link at the same time: still alone */
    ck_assert(dp_transfer_next_time(x) == INFINITY);
    const int *done;
    ck_assert_int_eq(dp_transfer_advance(x, 10, &done), 0);
    dp_transfer_free(x);
    teardown(&f);
}
END_TEST

/* FIFO: two 1 GB transfers on one 1 GB/s link take turns: ends at 1 s and 2 s */
START_TEST(fifo_serialises)
{
    fixture f = setup(ONE_LINK, 2, 1e9);
    dp_transfer *x = model(&f, DP_TRANSFER_FIFO, 1);
    dp_transfer_reset(x, 1);
    const double start[2] = {0, 0};
    double end[2];
    ck_assert_int_eq(drive(x, 2, start, end), 2);
    NEAR(end[0], 1.0);
    NEAR(end[1], 2.0);
    int nb;
    const dp_transfer_busy *b = dp_transfer_busy_log(x, &nb);
    ck_assert_int_eq(nb, 2);
    NEAR(b[1].t0, 1.0);
    NEAR(b[1].t1, 2.0);
    ck_assert_int_eq(b[1].id, 1);
    ck_assert(!dp_transfer_failed(x));
    dp_transfer_free(x);
    teardown(&f);
}
END_TEST

/* FIFO, store and forward over two 1 GB/s hops: 2 s in one chunk; in 4 chunks the hops overlap,
 * 1 s + 1/4 s */
START_TEST(fifo_chunks_pipeline)
{
    fixture f = setup(TWO_HOPS, 1, 1e9);
    const double start[1] = {0};
    double end[1];
    dp_transfer *x = model(&f, DP_TRANSFER_FIFO, 1);
    ck_assert_int_eq(drive(x, 1, start, end), 1);
    NEAR(end[0], 2.0);
    dp_transfer_free(x);
    x = model(&f, DP_TRANSFER_FIFO, 4);
    ck_assert_int_eq(drive(x, 1, start, end), 1);
    NEAR(end[0], 1.25);
    ck_assert_int_gt(dp_transfer_events(x), 0);
    dp_transfer_free(x);
    teardown(&f);
}
END_TEST

/* max-min: two 1 GB transfers on one 1 GB/s link share it, both end at 2 s; a transfer that
 * joins at 0.5 s: the first has 0.5 GB left at half rate (ends at 1.5 s), the second then
 * finishes alone (2.0 s) */
START_TEST(maxmin_shares)
{
    fixture f = setup(ONE_LINK, 2, 1e9);
    dp_transfer *x = model(&f, DP_TRANSFER_MAXMIN, 1);
    const double together[2] = {0, 0}, late[2] = {0, 0.5};
    double end[2];
    dp_transfer_reset(x, 1);
    ck_assert_int_eq(drive(x, 2, together, end), 2);
    NEAR(end[0], 2.0);
    NEAR(end[1], 2.0);
    int nr;
    const dp_transfer_rate *r = dp_transfer_rate_log(x, &nr);
    ck_assert_int_ge(nr, 1);
    ck_assert_int_eq(r[0].n_flows, 2);   /* both joined at 0: half the link each */
    NEAR(r[0].rate_Bps, 0.5e9);
    dp_transfer_reset(x, 0);
    ck_assert_int_eq(drive(x, 2, late, end), 2);
    NEAR(end[0], 1.5);
    NEAR(end[1], 2.0);
    /* reset gives the same run again */
    dp_transfer_reset(x, 0);
    double again[2];
    ck_assert_int_eq(drive(x, 2, late, again), 2);
    ck_assert(again[0] == end[0] && again[1] == end[1]);
    ck_assert_int_gt(dp_transfer_workspace_bytes(x), 0);
    dp_transfer_free(x);
    teardown(&f);
}
END_TEST

/* alone on its route, every model takes the fixed-delay time */
START_TEST(alone_every_model_agrees)
{
    fixture f = setup(TWO_HOPS, 1, 3e8);
    const double start[1] = {0.25};
    for (int k = 0; k < 3; k++) {
        dp_transfer *x = model(&f, (dp_transfer_kind)k, 1);
        double end[1];
        ck_assert_int_eq(drive(x, 1, start, end), 1);
        /* fixed and max-min: bytes x (1 / bottleneck); FIFO in one chunk: store and forward */
        NEAR(end[0], 0.25 + (k == DP_TRANSFER_FIFO ? 0.6 : 0.3));
        dp_transfer_free(x);
    }
    teardown(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("transfer");
    TCase *t = tcase_create("transfer");
    tcase_add_test(t, names_through_the_table);
    tcase_add_test(t, refusals);
    tcase_add_test(t, fixed_delay);
    tcase_add_test(t, fifo_serialises);
    tcase_add_test(t, fifo_chunks_pipeline);
    tcase_add_test(t, maxmin_shares);
    tcase_add_test(t, alone_every_model_agrees);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
