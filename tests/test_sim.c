/* test_sim: the DOPPLER-compatible simulator against the reference makespans and hand-computed
 * schedules. */
#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_machine.h"
#include "dp_problem.h"
#include "dp_graph.h"
#include "dp_sim.h"
#include "dp_test.h"

#include <math.h>

/* build a TIME graph from a compact description */
static dp_graph *tiny(int n, const double *comp, const double *comm, int m, const int (*edges)[2])
{
    dp_graph_builder *b = dp_graph_builder_alloc("tiny", "tiny", DP_GRAPH_COST_TIME);
    for (int i = 0; i < n; i++) dp_graph_builder_add_op(b, NULL, NULL, comp[i], comm[i]);
    for (int e = 0; e < m; e++) dp_graph_builder_add_edge(b, edges[e][0], edges[e][1], comm[edges[e][0]]);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

static double simulate(const dp_graph *g, int D, const int *assign)
{
    dp_error err;
    dp_cost *c = dp_cost_graph(g, D, &err);
    ck_assert_ptr_nonnull(c);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    ck_assert_ptr_nonnull(s);
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(s, assign, &r, &err), DP_OK);
    ck_assert_msg(dp_sim_check_schedule(s, &err) == DP_OK, "%s", err.msg);
    double m = r.makespan;
    dp_sim_free(s);
    dp_cost_free(c);
    return m;
}

/* chain a(2) -> b(3) -> c(4), comm 10 each */
START_TEST(chain_hand)
{
    const double comp[] = {2, 3, 4}, comm[] = {10, 10, 10};
    const int e[][2] = {{0, 1}, {1, 2}};
    dp_graph *g = tiny(3, comp, comm, 2, e);
    int a1[] = {0, 0, 0}, a2[] = {0, 1, 1}, a3[] = {0, 1, 2}, a4[] = {2, 2, 2};
    ck_assert_double_eq(simulate(g, 1, a1), 9);
    ck_assert_double_eq(simulate(g, 2, a2), 19);   /* 2 + 10 + 3 + 4 */
    ck_assert_double_eq(simulate(g, 3, a3), 29);   /* 2 + 10 + 3 + 10 + 4 */
    ck_assert_double_eq(simulate(g, 3, a4), 9);
    dp_graph_free(g);
}
END_TEST

/* fork-join: s(1) -> x(4), y(4), z(4) -> t(1); comm(s) = 2, comm(x,y,z) = 3 */
START_TEST(fork_join_hand)
{
    const double comp[] = {1, 4, 4, 4, 1}, comm[] = {2, 3, 3, 3, 0};
    const int e[][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}};
    dp_graph *g = tiny(5, comp, comm, 6, e);
    int one[] = {0, 0, 0, 0, 0};
    ck_assert_double_eq(simulate(g, 1, one), 14);
    /* 2 devices: s,x,y,t on 0, z on 1: dev0 s[0,1] x[1,5] y[5,9]; z arrives 3, runs [3,7],
     * arrives at t 10; t [10,11] */
    int two[] = {0, 0, 0, 1, 0};
    ck_assert_double_eq(simulate(g, 2, two), 11);
    /* 3 devices: x on 0, y on 1, z on 2, s and t on 0: x[1,5]; y, z start 3, end 7, arrive 10 */
    int three[] = {0, 0, 1, 2, 0};
    ck_assert_double_eq(simulate(g, 3, three), 11);
    /* everything spread: s on 1, t on 2: x on 0 starts 3 ends 7 arrives 10 -> t [10, 11] */
    int spread[] = {1, 0, 1, 0, 2};
    /* y on 1 [1,5], x and z on 0: both arrive at 3, x (lower id, readied first) [3,7], z [7,11]
     * then z's output arrives at 14, t [14,15] */
    ck_assert_double_eq(simulate(g, 3, spread), 15);
    dp_graph_free(g);
}
END_TEST

/* diamond: a(1) -> b(2), c(5) -> d(1); comm 4 from each */
START_TEST(diamond_hand)
{
    const double comp[] = {1, 2, 5, 1}, comm[] = {4, 4, 4, 4};
    const int e[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
    dp_graph *g = tiny(4, comp, comm, 4, e);
    int one[] = {0, 0, 0, 0};
    ck_assert_double_eq(simulate(g, 1, one), 9);
    int two[] = {0, 1, 0, 0};   /* b remote: starts 5 ends 7 arrives 11; c [1,6]; d [11,12] */
    ck_assert_double_eq(simulate(g, 2, two), 12);
    int two_b[] = {0, 0, 1, 0}; /* c remote: [5,10] arrives 14; b [1,3]; d [14,15] */
    ck_assert_double_eq(simulate(g, 2, two_b), 15);
    int three[] = {0, 1, 2, 0}; /* b [5,7]->11, c [5,10]->14, d [14,15] */
    ck_assert_double_eq(simulate(g, 3, three), 15);
    dp_graph_free(g);
}
END_TEST

/* two independent chains a0->a1, b0->b1, all comp 3, comm 1 */
START_TEST(two_chains_hand)
{
    const double comp[] = {3, 3, 3, 3}, comm[] = {1, 1, 1, 1};
    const int e[][2] = {{0, 1}, {2, 3}};
    dp_graph *g = tiny(4, comp, comm, 2, e);
    int one[] = {0, 0, 0, 0};
    ck_assert_double_eq(simulate(g, 1, one), 12);
    int two[] = {0, 0, 1, 1};
    ck_assert_double_eq(simulate(g, 2, two), 6);
    int cross[] = {0, 1, 1, 0}; /* a0 [0,3] on 0, b0 [0,3] on 1; a1 on 1 arrives 4, b1 on 0 arrives 4 */
    ck_assert_double_eq(simulate(g, 2, cross), 7);
    int three[] = {0, 1, 2, 2}; /* a1 on 1: 4..7; b chain on 2: 6 */
    ck_assert_double_eq(simulate(g, 3, three), 7);
    dp_graph_free(g);
}
END_TEST

/* FIFO at the device: ops readied at one instant run in the order they requested the device */
START_TEST(fifo_order)
{
    /* s -> {x, y} on one device; both ready at 1: x (edge order first) runs first */
    const double comp[] = {1, 5, 1}, comm[] = {0, 0, 0};
    const int e[][2] = {{0, 1}, {0, 2}};
    dp_graph *g = tiny(3, comp, comm, 2, e);
    int a[] = {0, 0, 0};
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 1, &err);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    dp_sim_result r;
    dp_sim_run(s, a, &r, &err);
    ck_assert_double_eq(r.op_start[1], 1);
    ck_assert_double_eq(r.op_start[2], 6);
    ck_assert_double_eq(r.makespan, 7);
    ck_assert_double_eq(r.busy[0], 7);
    dp_sim_free(s); dp_cost_free(c); dp_graph_free(g);
}
END_TEST

START_TEST(bad_assignment)
{
    const double comp[] = {1, 1}, comm[] = {1, 1};
    const int e[][2] = {{0, 1}};
    dp_graph *g = tiny(2, comp, comm, 1, e);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    int a[] = {0, 2};
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(s, a, &r, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "op 1"));
    dp_sim_free(s); dp_cost_free(c); dp_graph_free(g);
}
END_TEST

/* dp_engine_run_batch gives each row's dp_engine_run numbers, and names the row at fault;
 * dp_engine_transfers gives the hand-computed transfer times on both engines */
static void check_batch_and_transfers(const dp_machine *m)
{
    /* chain a(2) -> b(3) -> c(4), comm 10 each, on 3 devices */
    const double comp[] = {2, 3, 4}, comm[] = {10, 10, 10};
    const int e[][2] = {{0, 1}, {1, 2}};
    dp_graph *g = tiny(3, comp, comm, 2, e);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    ck_assert_ptr_nonnull(c);
    dp_engine *en = dp_engine_alloc(g, c, m, &err);
    ck_assert_msg(en != NULL, "%s", err.msg);
    const int rows[4][3] = {{0, 0, 0}, {0, 1, 1}, {0, 1, 2}, {2, 2, 2}};
    const double want[4] = {9, 19, 29, 9};
    double ms[4], cost[4], busy[4 * 3];
    ck_assert_int_eq(dp_engine_run_batch(en, 4, &rows[0][0], NULL, ms, cost, busy, &err), DP_OK);
    for (int b = 0; b < 4; b++) {
        dp_engine_schedule s;
        ck_assert_int_eq(dp_engine_run(en, rows[b], NULL, &s, &err), DP_OK);
        ck_assert_double_eq(ms[b], want[b]);
        ck_assert_double_eq(ms[b], s.makespan);
        ck_assert_double_eq(cost[b], s.cost);
        for (int d = 0; d < 3; d++) ck_assert_double_eq(busy[b * 3 + d], s.busy[d]);
    }
    ck_assert_int_eq(dp_engine_simulations(en), 8);
    /* without the optional outputs */
    ck_assert_int_eq(dp_engine_run_batch(en, 2, &rows[1][0], NULL, ms, NULL, NULL, &err), DP_OK);
    ck_assert_double_eq(ms[0], 19);
    ck_assert_double_eq(ms[1], 29);
    /* a device out of range in row 1: the error names the row and the op */
    const int bad[2][3] = {{0, 1, 2}, {0, 3, 0}};
    ck_assert_int_eq(dp_engine_run_batch(en, 2, &bad[0][0], NULL, ms, NULL, NULL, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "assignment 1") && strstr(err.msg, "op 1"), "%s", err.msg);
    ck_assert_double_eq(ms[0], 29);
    /* no assignment: refused (both engines dereferenced it; a review) */
    dp_engine_schedule s0;
    ck_assert_int_eq(dp_engine_run(en, NULL, NULL, &s0, &err), DP_EINVAL);
    ck_assert_int_eq(dp_engine_run_prefix(en, NULL, NULL, &s0, &err), DP_EINVAL);
    double c0;
    ck_assert_int_eq(dp_engine_run_bounded(en, NULL, 1, &c0, NULL, &err), DP_EINVAL);
    /* transfers: a on 0, b and c on 1: edge a->b leaves at 2, arrives at 12; b->c is local */
    dp_engine_schedule s;
    ck_assert_int_eq(dp_engine_run(en, rows[1], NULL, &s, &err), DP_OK);
    double xs[2], xe[2];
    dp_engine_transfers(en, rows[1], &s, xs, xe);
    ck_assert_double_eq(xs[0], 2);
    ck_assert_double_eq(xe[0], 12);
    ck_assert_double_eq(xs[1], -1);
    ck_assert_double_eq(xe[1], -1);
    /* all three apart: b->c leaves at 15, arrives at 25 */
    ck_assert_int_eq(dp_engine_run(en, rows[2], NULL, &s, &err), DP_OK);
    dp_engine_transfers(en, rows[2], &s, xs, xe);
    ck_assert_double_eq(xs[1], 15);
    ck_assert_double_eq(xe[1], 25);
    dp_engine_free(en);
    dp_cost_free(c);
    dp_graph_free(g);
}

START_TEST(engine_batch_fast)
{
    dp_machine m;
    dp_machine_init(&m);
    m.n_devices = 3;
    check_batch_and_transfers(&m);
    dp_machine_free(&m);
}
END_TEST

START_TEST(engine_batch_general)
{
    dp_machine m;
    dp_machine_init(&m);
    dp_error err;
    ck_assert_int_eq(dp_machine_set(&m, "devices", "3", &err), DP_OK);
    ck_assert_int_eq(dp_machine_set(&m, "streams", "2", &err), DP_OK); /* only the general engine has streams */
    ck_assert(dp_machine_general(&m));
    check_batch_and_transfers(&m);
    dp_machine_free(&m);
}
END_TEST

/* comm_ratio (DOPPLER's rule, dp_cost_set_comm_ratio): a chain in FLOPs and bytes,
 * a(1e13 FLOPs) -> b(2e13) -> c(4e13), 1e9 bytes per edge, on 1e13 FLOP/s devices: op times
 * 1, 2, 4 s. Without it a transfer is 1e-5 + 1e9 / 1.2e10 s; with R = 4 it is 4 x the
 * producer's time (4 s after a, 8 s after b), whatever the bytes; R = 0 switches it off. */
START_TEST(comm_ratio_hand)
{
    dp_graph_builder *b = dp_graph_builder_alloc("chain", "chain", DP_GRAPH_COST_PHYSICAL);
    const double flops[] = {1e13, 2e13, 4e13};
    for (int i = 0; i < 3; i++) dp_graph_builder_add_op(b, NULL, NULL, flops[i], 0);
    dp_graph_builder_add_edge(b, 0, 1, 1e9);
    dp_graph_builder_add_edge(b, 1, 2, 1e9);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    const int apart[] = {0, 1, 2}, ab[] = {0, 0, 1}, one[] = {1, 1, 1};
    const double x = 1e-5 + 1e9 / 1.2e10;
    struct { const char *ratio; const int *assign; double want; } c[] = {
        {"0", apart, 7 + 2 * x}, {"4", apart, 7 + 4 + 8}, {"4", ab, 7 + 8}, {"4", one, 7}, {"0.5", apart, 7 + 0.5 + 1},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        dp_machine m;
        dp_machine_init(&m);
        ck_assert_int_eq(dp_machine_set(&m, "devices", "3", &err), DP_OK);
        ck_assert_int_eq(dp_machine_set(&m, "--comm-ratio", c[k].ratio, &err), DP_OK);
        dp_cost *cost = dp_machine_costs(&m, g, &err);
        ck_assert_msg(cost != NULL, "%s", err.msg);
        dp_engine *en = dp_engine_alloc(g, cost, &m, &err);
        ck_assert_msg(en != NULL, "%s", err.msg);
        dp_engine_schedule s;
        ck_assert_int_eq(dp_engine_run(en, c[k].assign, NULL, &s, &err), DP_OK);
        ck_assert_msg(fabs(s.makespan - c[k].want) < 1e-9 * c[k].want, "ratio %s case %zu: %.12g, want %.12g", c[k].ratio, k,
                      s.makespan, c[k].want);
        /* the machine says so in its JSON, and only when set */
        json_t *j = dp_machine_to_json(&m);
        ck_assert_int_eq(json_object_get(j, "comm_ratio") != NULL, strcmp(c[k].ratio, "0") != 0);
        json_decref(j);
        dp_engine_free(en);
        dp_cost_free(cost);
        dp_machine_free(&m);
    }
    /* bad values are refused naming the key; a topology is refused with a ratio */
    dp_machine m;
    dp_machine_init(&m);
    const char *bad[] = {"-1", "nan", "inf", "x", ""};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_int_eq(dp_machine_set(&m, "comm_ratio", bad[k], &err), DP_EINVAL);
        ck_assert_msg(strstr(err.msg, "comm_ratio") != NULL, "%s", err.msg);
    }
    ck_assert_int_eq(dp_machine_set(&m, "comm_ratio", "4", &err), DP_OK);
    ck_assert_int_eq(dp_machine_set(&m, "topology", "dgx1-v100", &err), DP_OK);
    ck_assert_ptr_null(dp_machine_costs(&m, g, &err));
    ck_assert_msg(strstr(err.msg, "comm_ratio") && strstr(err.msg, "topology"), "%s", err.msg);
    dp_machine_free(&m);
    /* tables of another graph are refused, and left as they were */
    dp_cost *cost = dp_cost_uniform(g, 2, 1e13, 1.2e10, 1e-5, &err);
    ck_assert_ptr_nonnull(cost);
    const double keep = cost->edge_data[0];
    ck_assert_int_eq(dp_cost_set_comm_ratio(cost, g, -1, &err), DP_EINVAL);
    ck_assert_double_eq(cost->edge_data[0], keep);
    dp_cost_free(cost);
    dp_graph_free(g);
}
END_TEST

/* issue 33: a machine whose makespans would be inf or overflow is refused at the cost tables,
 * naming the key, and the engine refuses such tables from any caller */
START_TEST(costs_out_of_range)
{
    dp_graph_builder *b = dp_graph_builder_alloc("chain", "chain", DP_GRAPH_COST_PHYSICAL);
    for (int i = 0; i < 3; i++) dp_graph_builder_add_op(b, NULL, NULL, 1e13, 0);
    dp_graph_builder_add_edge(b, 0, 1, 1.6e7);
    dp_graph_builder_add_edge(b, 1, 2, 1.6e7);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    struct { const char *key, *value, *key2, *value2, *named; } c[] = {
        {"peak_flops", "1e-300", "devices", "2", "peak_flops"}, /* op time 1e313: inf */
        {"bandwidth", "1e-300", "devices", "2", "bandwidth"},   /* each transfer 1.6e307, two beyond 1e300 */
        {"comm_ratio", "1e30", "peak_flops", "1e-280", "comm_ratio"}, /* ops 1e293, a transfer 1e30 x that */
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        dp_machine m;
        dp_machine_init(&m);
        ck_assert_int_eq(dp_machine_set(&m, "devices", "2", &err), DP_OK);
        ck_assert_int_eq(dp_machine_set(&m, c[k].key2, c[k].value2, &err), DP_OK);
        ck_assert_int_eq(dp_machine_set(&m, c[k].key, c[k].value, &err), DP_OK);
        ck_assert_ptr_null(dp_machine_costs(&m, g, &err));
        ck_assert_int_eq(err.code, DP_ERANGE);
        ck_assert_msg(strstr(err.msg, c[k].named) && strstr(err.msg, "chain: "), "%s", err.msg);
        dp_machine_free(&m);
    }
    /* the default machine passes; tables broken by hand are refused by the engine */
    dp_cost *cost = dp_cost_uniform(g, 2, 1e13, 1.2e10, 1e-5, &err);
    ck_assert_ptr_nonnull(cost);
    dp_cost_part part;
    ck_assert_int_eq(dp_cost_check(g, cost, &part, &err), DP_OK);
    ck_assert_int_eq(part, DP_COST_PART_NONE);
    cost->op_time[3] = NAN;
    ck_assert_int_eq(dp_cost_check(g, cost, &part, &err), DP_ERANGE);
    ck_assert_int_eq(part, DP_COST_PART_OP);
    ck_assert_ptr_null(dp_engine_alloc(g, cost, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "op 1"));
    cost->op_time[3] = 1;
    cost->inv_bw[1] = 1e295; /* 1.6e7 B x 1e295 s/B, twice */
    ck_assert_int_eq(dp_cost_check(g, cost, &part, &err), DP_ERANGE);
    ck_assert_int_eq(part, DP_COST_PART_TRANSFER);
    ck_assert_ptr_nonnull(strstr(err.msg, "would overflow"));
    cost->inv_bw[1] = -1;
    ck_assert_int_eq(dp_cost_check(g, cost, &part, &err), DP_ERANGE);
    ck_assert_int_eq(part, DP_COST_PART_TRANSFER);
    dp_cost_free(cost);
    dp_graph_free(g);
}
END_TEST

/* One problem object (issue 28): a graph on a machine assembles its costs, its engine and the
 * engine's oracle in one call; the oracle declares its engine. By hand on a(2) -> b(3), a -> c(4),
 * a's output costing 1 to move, on 2 devices: everything on d0 runs serially, 2 + 3 + 4 = 9; b
 * alone on d1: a d0 [0,2], c d0 [2,6], b d1 [2+1, 6]: 6. */
START_TEST(problem_assembles)
{
    dp_error err;
    dp_error_clear(&err);
    dp_graph_builder *b = dp_graph_builder_alloc("abc", "abc", DP_GRAPH_COST_TIME);
    dp_graph_builder_add_op(b, "a", NULL, 2, 1);
    dp_graph_builder_add_op(b, "b", NULL, 3, 0);
    dp_graph_builder_add_op(b, "c", NULL, 4, 0);
    dp_graph_builder_add_edge(b, 0, 1, 1);
    dp_graph_builder_add_edge(b, 0, 2, 1);
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_machine m;
    dp_machine_init(&m);
    ck_assert_int_eq(dp_machine_set(&m, "devices", "2", &err), DP_OK);
    dp_problem *p = dp_problem_alloc(g, &m, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_ptr_eq(p->graph, g);
    ck_assert_int_eq(p->costs->n_devices, 2);
    ck_assert_ptr_eq(p->oracle.engine, p->engine);
    ck_assert_ptr_eq(dp_problem_engine(p), p->engine);
    ck_assert_ptr_eq(dp_problem_costs(p), p->costs);
    const int serial[3] = {0, 0, 0}, split[3] = {0, 1, 0};
    double cost;
    ck_assert_int_eq(dp_oracle_cost(&p->oracle, serial, &cost, &err), DP_OK);
    ck_assert_double_eq(cost, 9);
    ck_assert_int_eq(dp_oracle_cost(dp_problem_oracle(p), split, &cost, &err), DP_OK);
    ck_assert_double_eq(cost, 6);
    ck_assert_int_eq(dp_engine_simulations(p->engine), 2);
    dp_problem_free(p);

    /* the graph's own cost tables are borrowed: still valid after the problem */
    dp_cost *own = dp_cost_graph(g, 2, &err);
    ck_assert_ptr_nonnull(own);
    p = dp_problem_alloc_with_costs(g, own, &m, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_ptr_eq(p->costs, own);
    ck_assert_int_eq(dp_oracle_cost(&p->oracle, split, &cost, &err), DP_OK);
    ck_assert_double_eq(cost, 6);
    dp_problem_free(p);
    ck_assert_int_eq(own->n_devices, 2);
    /* a machine of another device count than the tables: refused, named */
    ck_assert_int_eq(dp_machine_set(&m, "devices", "3", &err), DP_OK);
    ck_assert_ptr_null(dp_problem_alloc_with_costs(g, own, &m, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "devices"));
    dp_cost_free(own);
    dp_machine_free(&m);

    /* a missing topology: no problem, the name in the message */
    dp_machine_init(&m);
    ck_assert_int_eq(dp_machine_set(&m, "topology", "no-such-topology-x", &err), DP_OK);
    ck_assert_ptr_null(dp_problem_alloc(g, &m, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "no-such-topology-x"));
    ck_assert_ptr_null(dp_problem_alloc(NULL, &m, &err));
    dp_machine_free(&m);
    dp_problem_free(NULL);
    dp_graph_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim");
    TCase *t = tcase_create("hand");
    tcase_add_test(t, chain_hand);
    tcase_add_test(t, problem_assembles);
    tcase_add_test(t, fork_join_hand);
    tcase_add_test(t, diamond_hand);
    tcase_add_test(t, two_chains_hand);
    tcase_add_test(t, fifo_order);
    tcase_add_test(t, bad_assignment);
    tcase_add_test(t, engine_batch_fast);
    tcase_add_test(t, engine_batch_general);
    tcase_add_test(t, comm_ratio_hand);
    tcase_add_test(t, costs_out_of_range);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
