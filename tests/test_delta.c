/* test_delta: delta simulation (issue 31; dp_sim_run_delta, dp_engine_run_delta). Many random
 * moves (one op, a swap, several ops at once) over random DAGs with integer and zero op and
 * transfer times (exact ties of the event order), repeated edges and 1-6 devices: every delta
 * run's cost and bound verdict equal the bounded full run's bit for bit, and after every accepted
 * move the incumbent's schedule (every op's start, end, ready) is the full run's. The general
 * engine, which runs each candidate in full, gives the bounded costs on every machine option.
 * Annealing and local search take the same decisions (placement, best, accepted moves,
 * simulations) with delta runs on and off. */
#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_gen.h"
#include "dp_graph.h"
#include "dp_improve.h"
#include "dp_machine.h"
#include "dp_search.h"
#include "dp_sim.h"
#include "dp_test.h"

#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* n ops with op times 0..3 (a quarter zero), edges i -> j (i < j) with probability p, a tenth of
 * them repeated (the same pair twice), edge data 0..3 */
static dp_graph *tie_dag(gsl_rng *r, int n, double p)
{
    dp_graph_builder *b = dp_graph_builder_alloc("ties", "ties", DP_GRAPH_COST_TIME);
    for (int i = 0; i < n; i++) dp_graph_builder_add_op(b, NULL, NULL, (double)gsl_rng_uniform_int(r, 4), 0);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (gsl_rng_uniform(r) < p) {
                const int copies = gsl_rng_uniform(r) < 0.1 ? 2 : 1;
                for (int k = 0; k < copies; k++)
                    dp_graph_builder_add_edge(b, i, j, (double)gsl_rng_uniform_int(r, 4));
            }
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_builder_free(b);
    return g;
}

/* n ops in layers of 2 to 6, each op after the first layer fed by 2 or 3 ops of the layer before
 * (fan-in: an op's inputs often arrive at one instant from several producers), edge data 1 */
static dp_graph *fanin_dag(gsl_rng *r, int n)
{
    dp_graph_builder *b = dp_graph_builder_alloc("fanin", "fanin", DP_GRAPH_COST_TIME);
    for (int i = 0; i < n; i++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    int lo = 0, w = 2 + (int)gsl_rng_uniform_int(r, 5);
    for (int i = w; i < n;) {
        const int w2 = 2 + (int)gsl_rng_uniform_int(r, 5);
        for (int j = i; j < i + w2 && j < n; j++) {
            const int k = 2 + (int)gsl_rng_uniform_int(r, 2);
            for (int x = 0; x < k; x++) dp_graph_builder_add_edge(b, lo + (int)gsl_rng_uniform_int(r, (unsigned long)w), j, 1);
        }
        lo = i;
        w = w2 < n - i ? w2 : n - i;
        i += w2;
    }
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_builder_free(b);
    return g;
}

/* heterogeneous integer costs: op times 0..3, latency 0..2, inverse bandwidth 0..2 */
static dp_cost *tie_costs(gsl_rng *r, const dp_graph *g, int D)
{
    dp_cost *c = dp_cost_alloc(g, D);
    for (int v = 0; v < g->n_ops; v++)
        for (int d = 0; d < D; d++) c->op_time[v * D + d] = (double)gsl_rng_uniform_int(r, 4);
    memcpy(c->edge_data, g->edge_size, (size_t)g->n_edges * sizeof(double));
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++)
            if (a != b) {
                c->inv_bw[a * D + b] = (double)gsl_rng_uniform_int(r, 3);
                c->latency[a * D + b] = (double)gsl_rng_uniform_int(r, 3);
            }
    dp_cost_update_homogeneous(c);
    return c;
}

/* a random move of cur: one op (half the moves), a swap of two ops, or 2-4 ops at once; the
 * moved ops' old devices go to old[] (undo) */
/* Two bounded costs of one assignment (issue 31): the same verdict; within the bound the same
 * cost, bit for bit; above it, each more than the bound and no more than the assignment's cost
 * (full), which is all a search reads of it (early rejection, dp_sim_set_early_reject, stops
 * runs at different instants). 1 when they agree. */
static int bounded_agree(double ca, int ea, double cb, int eb, double bound, double full)
{
    if (ea != eb) return 0;
    if (!ea) return ca == cb && ca == full;
    return ca > bound && cb > bound && ca <= full && cb <= full;
}

static int random_move(gsl_rng *r, int n, int D, int *cur, int *ops, int *old)
{
    const double x = gsl_rng_uniform(r);
    const int k = x < 0.5 ? 1 : x < 0.8 ? 2 : 2 + (int)gsl_rng_uniform_int(r, 3);
    for (int i = 0; i < k; i++) {
        ops[i] = (int)gsl_rng_uniform_int(r, (unsigned long)n);
        old[i] = cur[ops[i]];
    }
    if (k == 2 && x < 0.8) { /* a swap (a no-op on one device or on two ops of one device) */
        cur[ops[0]] = old[1];
        cur[ops[1]] = old[0];
    } else {
        for (int i = 0; i < k; i++) cur[ops[i]] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
    }
    return k;
}

static void undo_move(int *cur, const int *ops, const int *old, int k)
{
    for (int i = k - 1; i >= 0; i--) cur[ops[i]] = old[i];
}

/* the events of a complete run (dp_sim.h): READY, GRANTED, COMPUTE_DONE, RELEASE and FINISH of
 * every op, TRANSFER_DONE and EDGE_ARRIVED of every first copy of an (op, consumer) pair */
static long full_run_events(const dp_graph *g)
{
    long k = 5L * g->n_ops;
    for (int e = 0; e < g->n_edges; e++)
        k += 2 * (e == g->succ_ptr[g->edge_src[e]] || g->edge_dst[e - 1] != g->edge_dst[e]);
    return k;
}

/* positive integer op times 1..3 (ties everywhere, none zero), transfers latency 0..2 + data 0..3
 * x inverse bandwidth 0..2 (many zero), heterogeneous devices */
static dp_cost *tie_costs_positive(gsl_rng *r, const dp_graph *g, int D)
{
    dp_cost *c = tie_costs(r, g, D);
    for (int i = 0; i < g->n_ops * D; i++) c->op_time[i] = 1 + (double)gsl_rng_uniform_int(r, 3);
    dp_cost_update_homogeneous(c);
    return c;
}

/* dp_sim_run_delta against dp_sim_run_bounded and dp_sim_run, 40 graphs x 150 moves. costs 0:
 * integer times with zeros (the event loop's delta runs); 1: positive integer times (the
 * op-order delta runs, p->op_order); 2: as 1 with one op of time 1e17 in each graph, after
 * which a delay of 1 does not move the clock (the op-order runs fall back to the event loop,
 * and a commit of such a run makes the incumbent the event loop's); 3: fan-in DAGs with op
 * times 1 and 2 and transfers of 1 (copies from producers that ended before the resumed instant
 * arriving together after it: the READY key's order among them) */
static void delta_against_full(unsigned long seed, int costs, const char *name)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    long resumed = 0, full = 0, moves = 0, resimulated = 0, ops_total = 0, by_ops = 0, incumbents_by_ops = 0;
    for (int gi = 0; gi < 40; gi++) {
        const int n = 2 + (int)gsl_rng_uniform_int(r, 70), D = 1 + gi % 6;
        dp_graph *g = costs == 3 ? fanin_dag(r, n) : tie_dag(r, n, gsl_rng_uniform(r) * 0.3);
        dp_cost *c = costs ? tie_costs_positive(r, g, D) : tie_costs(r, g, D);
        if (costs == 3) {
            /* every op 1 or 2, every transfer 1: copies from several producers arrive at one instant */
            for (int i = 0; i < n * D; i++) c->op_time[i] = 1 + (i % 7 == 0);
            for (int k = 0; k < D * D; k++) {
                c->latency[k] = k % (D + 1) == 0 ? 0 : 1;
                c->inv_bw[k] = 0;
            }
            dp_cost_update_homogeneous(c);
        }
        if (costs == 2) {
            const int v = (int)gsl_rng_uniform_int(r, (unsigned long)n);
            for (int d = 0; d < D; d++) c->op_time[v * D + d] = 1e17;
            dp_cost_update_homogeneous(c);
        }
        dp_error err;
        dp_sim *s = dp_sim_alloc(g, c, &err), *ref = dp_sim_alloc(g, c, &err);
        dp_sim_prefix *p = dp_sim_prefix_alloc(n, D);
        ck_assert(s && ref && p);
        dp_sim_set_op_order(ref, 0); /* the reference: the event loop */
        /* early rejection off on half the graphs: then a cost above the bound is the event
         * loop's too (the clock's first instant past it) */
        const int early = gi % 2 == 0;
        dp_sim_set_early_reject(s, early);
        int *cur = malloc((size_t)n * sizeof *cur), ops[4], old[4];
        for (int v = 0; v < n; v++) cur[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        dp_sim_result x, y;
        ck_assert_int_eq(dp_sim_prefix_set(s, p, cur, &x, &err), DP_OK);
        if (costs == 1) ck_assert_int_eq(p->op_order, 1);
        int zero = 0;
        for (int i = 0; i < n * D; i++) zero |= c->op_time[i] == 0;
        if (costs == 0) ck_assert_int_eq(p->op_order, !zero);
        incumbents_by_ops += p->op_order;
        ck_assert_int_eq(dp_sim_run(ref, cur, &y, &err), DP_OK);
        ck_assert_msg(dp_sim_check_schedule(ref, &err) == DP_OK, "%s", err.msg);
        ck_assert_int_eq(y.n_events, full_run_events(g));
        ck_assert(x.makespan == y.makespan && p->makespan == y.makespan);
        for (int m = 0; m < 150; m++) {
            const int k = random_move(r, n, D, cur, ops, old);
            /* bounds: none, the incumbent's makespan, a random one below or above it */
            const double u = gsl_rng_uniform(r);
            const double bound = u < 0.25 ? INFINITY : u < 0.5 ? p->makespan : p->makespan * 2 * gsl_rng_uniform(r);
            double cd, cf;
            int exd, exf;
            ck_assert_int_eq(dp_sim_run_delta(s, p, cur, bound, &cd, &exd, &err), DP_OK);
            ck_assert_int_eq(dp_sim_run_bounded(ref, cur, bound, &cf, &exf, &err), DP_OK);
            if (early) {
                dp_sim_result z;
                ck_assert_int_eq(dp_sim_run(ref, cur, &z, &err), DP_OK);
                ck_assert_msg(bounded_agree(cd, exd, cf, exf, bound, z.makespan),
                              "%s: graph %d move %d: delta %.17g (%d), full %.17g (%d), bound %g, makespan %.17g", name,
                              gi, m, cd, exd, cf, exf, bound, z.makespan);
            } else {
                ck_assert_msg(cd == cf && exd == exf, "%s: graph %d move %d: delta %.17g (%d), full %.17g (%d), bound %g",
                              name, gi, m, cd, exd, cf, exf, bound);
            }
            moves++;
            if (!exd && gsl_rng_uniform(r) < 0.5) {
                ck_assert_int_eq(dp_sim_delta_commit(s, p, cur, &err), DP_OK);
                ck_assert_int_eq(dp_sim_run(ref, cur, &y, &err), DP_OK);
                ck_assert_msg(dp_sim_check_schedule(ref, &err) == DP_OK, "graph %d move %d: %s", gi, m, err.msg);
                ck_assert_int_eq(y.n_events, full_run_events(g));
                ck_assert(p->makespan == y.makespan);
                for (int v = 0; v < n; v++)
                    ck_assert_msg(p->start[v] == y.op_start[v] && p->end[v] == y.op_end[v] &&
                                      p->ready[v] == y.op_ready[v] && p->dev[v] == cur[v],
                                  "%s: graph %d move %d op %d: incumbent [%.17g, %.17g] ready %.17g, full [%.17g, %.17g] "
                                  "ready %.17g", name, gi, m, v, p->start[v], p->end[v], p->ready[v], y.op_start[v],
                                  y.op_end[v], y.op_ready[v]);
                /* each device's list holds its ops in queue order */
                int total = 0;
                for (int d = 0; d < D; d++) {
                    total += p->dev_n[d];
                    for (int i = 0; i < p->dev_n[d]; i++) {
                        int a = p->dev_ops[d][i];
                        ck_assert_int_eq(cur[a], d);
                        if (i > 0) {
                            int z = p->dev_ops[d][i - 1];
                            ck_assert(p->ready[z] <= p->ready[a] && p->start[z] <= p->start[a] && p->end[z] <= p->end[a]);
                            ck_assert_msg(p->seq_ready[z] < p->seq_ready[a], "graph %d move %d device %d: list order", gi, m, d);
                        }
                    }
                }
                ck_assert_int_eq(total, n);
            } else {
                /* a run stopped by its bound cannot be committed */
                if (exd) ck_assert_int_eq(dp_sim_delta_commit(s, p, cur, &err), DP_EINVAL);
                undo_move(cur, ops, old, k);
            }
        }
        if (costs == 1) ck_assert_int_eq(p->op_order, 1);
        by_ops += dp_sim_op_order_runs(s);
        resumed += p->n_resumed;
        full += p->n_full;
        resimulated += p->n_resimulated;
        ops_total += (long)n * (p->n_resumed + p->n_full);
        free(cur);
        dp_sim_prefix_free(p);
        dp_sim_free(s);
        dp_sim_free(ref);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    /* most runs resumed after 0, and they simulated fewer ops than full runs would */
    ck_assert_int_gt(resumed, moves / 3);
    ck_assert_int_lt(resimulated, ops_total);
    /* the op-order delta runs: every run (the incumbents' included) op by op with positive
     * times; with a huge time, some incumbents stay op by op and some runs fall back */
    if (costs == 1 || costs == 3) ck_assert_int_eq(by_ops, resumed + full);
    if (costs == 2) ck_assert(incumbents_by_ops > 0 && by_ops > 0 && by_ops < moves);
    fprintf(stderr, "%s: %ld moves, %ld resumed, %ld from 0, %ld of %ld op simulations, %ld runs op by op\n", name,
            moves, resumed, full, resimulated, ops_total, by_ops);
    gsl_rng_free(r);
}

START_TEST(sim_delta_bit_identical)
{
    delta_against_full(31, 0, "sim_delta_bit_identical");
}
END_TEST

START_TEST(op_order_delta)
{
    delta_against_full(3131, 1, "op_order_delta");
    delta_against_full(313, 2, "op_order_delta (fallback)");
    delta_against_full(3133, 3, "op_order_delta (fan-in ties)");
}
END_TEST

/* every field of two schedules' states the same, bit for bit (the places in the event order too) */
static void assert_same_state(const dp_sim_prefix *a, const dp_sim_prefix *b, int n, int gi, int m)
{
    ck_assert_msg(a->makespan == b->makespan && a->seq_next == b->seq_next, "graph %d step %d: makespan %.17g / %.17g",
                  gi, m, a->makespan, b->makespan);
    for (int v = 0; v < n; v++)
        ck_assert_msg(a->start[v] == b->start[v] && a->end[v] == b->end[v] && a->ready[v] == b->ready[v] &&
                          a->seq_done[v] == b->seq_done[v] && a->seq_fin[v] == b->seq_fin[v] &&
                          a->seq_ready[v] == b->seq_ready[v],
                      "graph %d step %d op %d: at once [%.17g, %.17g] ready %.17g seq %llu %llu %llu, through the FIFO "
                      "[%.17g, %.17g] ready %.17g seq %llu %llu %llu", gi, m, v, a->start[v], a->end[v], a->ready[v],
                      (unsigned long long)a->seq_ready[v], (unsigned long long)a->seq_done[v],
                      (unsigned long long)a->seq_fin[v], b->start[v], b->end[v], b->ready[v],
                      (unsigned long long)b->seq_ready[v], (unsigned long long)b->seq_done[v],
                      (unsigned long long)b->seq_fin[v]);
}

START_TEST(op_order_same_as_events)
{
    /* the op-order run (dp_sim_set_op_order, dp_sim.c) against the event loop: complete and
     * bounded runs on DAGs with integer times (ties of the event order everywhere: siblings
     * ready at one instant on one device, devices freed at one instant, transfers arriving with
     * their consumers' other inputs), repeated edges, 1-6 devices: every op's ready, start and
     * end, busy time per device, makespan, event count, transfers and their volume, and a
     * bounded run's cost and verdict, bit for bit. Times of zero fall back to the event loop
     * (the same results; counted) */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 777);
    long runs = 0, by_ops = 0;
    for (int gi = 0; gi < 150; gi++) {
        const int n = 2 + (int)gsl_rng_uniform_int(r, 90), D = 1 + gi % 6;
        dp_graph *g = tie_dag(r, n, gsl_rng_uniform(r) * 0.3);
        dp_cost *c = gi % 5 == 4 ? tie_costs(r, g, D) : tie_costs_positive(r, g, D);
        dp_error err;
        dp_sim *a = dp_sim_alloc(g, c, &err), *b = dp_sim_alloc(g, c, &err);
        ck_assert(a && b);
        dp_sim_set_op_order(b, 0);
        int *cur = malloc((size_t)n * sizeof *cur);
        for (int k = 0; k < 40; k++) {
            /* random assignments, some on fewer devices (more ties on each) */
            const int Dk = k % 3 == 2 ? 1 + (int)gsl_rng_uniform_int(r, (unsigned long)D) : D;
            for (int v = 0; v < n; v++) cur[v] = (int)gsl_rng_uniform_int(r, (unsigned long)Dk);
            dp_sim_result x, y;
            const long before = dp_sim_op_order_runs(a);
            ck_assert_int_eq(dp_sim_run(a, cur, &x, &err), DP_OK);
            ck_assert_int_eq(dp_sim_run(b, cur, &y, &err), DP_OK);
            ck_assert_int_eq(dp_sim_op_order_runs(b), 0);
            runs++;
            by_ops += dp_sim_op_order_runs(a) - before;
            ck_assert_msg(x.makespan == y.makespan, "graph %d run %d: op order %.17g, events %.17g", gi, k, x.makespan,
                          y.makespan);
            ck_assert_int_eq(x.n_events, y.n_events);
            ck_assert_int_eq(x.n_events, full_run_events(g));
            ck_assert_int_eq(x.n_transfers, y.n_transfers);
            ck_assert(x.transfer_volume == y.transfer_volume);
            for (int v = 0; v < n; v++)
                ck_assert_msg(x.op_start[v] == y.op_start[v] && x.op_end[v] == y.op_end[v] && x.op_ready[v] == y.op_ready[v],
                              "graph %d run %d op %d: op order ready %g start %g end %g, events %g %g %g", gi, k, v,
                              x.op_ready[v], x.op_start[v], x.op_end[v], y.op_ready[v], y.op_start[v], y.op_end[v]);
            for (int d = 0; d < D; d++) ck_assert(x.busy[d] == y.busy[d]);
            ck_assert_int_eq(dp_sim_check_schedule(a, &err), DP_OK);
            const double bound = y.makespan * 1.2 * gsl_rng_uniform(r);
            double ca, cb;
            int ea, eb;
            ck_assert_int_eq(dp_sim_run_bounded(a, cur, bound, &ca, &ea, &err), DP_OK);
            ck_assert_int_eq(dp_sim_run_bounded(b, cur, bound, &cb, &eb, &err), DP_OK);
            ck_assert_msg(bounded_agree(ca, ea, cb, eb, bound, y.makespan),
                          "graph %d run %d bound %g: op order %.17g (%d), events %.17g (%d)", gi, k, bound, ca, ea, cb, eb);
            /* early rejection off: the clock's first instant past the bound, bit for bit */
            dp_sim_set_early_reject(a, 0);
            ck_assert_int_eq(dp_sim_run_bounded(a, cur, bound, &ca, &ea, &err), DP_OK);
            dp_sim_set_early_reject(a, 1);
            ck_assert_msg(ca == cb && ea == eb, "graph %d run %d bound %g: op order %.17g (%d), events %.17g (%d)", gi, k,
                          bound, ca, ea, cb, eb);
        }
        free(cur);
        dp_sim_free(a);
        dp_sim_free(b);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    /* most runs went op by op (a fifth of the graphs have zero times and go to the event loop) */
    ck_assert_msg(by_ops > runs / 2, "%ld of %ld runs op by op", by_ops, runs);
    gsl_rng_free(r);
    /* a time or a delay too small to move the clock: the run falls back to the event loop */
    for (int tiny_delay = 0; tiny_delay < 2; tiny_delay++) {
        dp_graph_builder *gb = dp_graph_builder_alloc("tiny", "tiny", DP_GRAPH_COST_TIME);
        dp_graph_builder_add_op(gb, NULL, NULL, 1, 0);
        dp_graph_builder_add_op(gb, NULL, NULL, tiny_delay ? 1 : 1e-17, 0);
        dp_graph_builder_add_op(gb, NULL, NULL, 2, 0);
        dp_graph_builder_add_edge(gb, 0, 1, tiny_delay ? 1e-17 : 1);
        dp_graph_builder_add_edge(gb, 0, 2, 1);
        dp_error err;
        dp_graph *g = dp_graph_builder_finish(gb, &err);
        dp_graph_builder_free(gb);
        ck_assert(g != NULL);
        dp_cost *c = dp_cost_graph(g, 2, &err);
        dp_sim *a = dp_sim_alloc(g, c, &err), *b = dp_sim_alloc(g, c, &err);
        dp_sim_set_op_order(b, 0);
        const int asg[3] = {0, tiny_delay, 0};
        dp_sim_result x, y;
        ck_assert_int_eq(dp_sim_run(a, asg, &x, &err), DP_OK);
        ck_assert_int_eq(dp_sim_run(b, asg, &y, &err), DP_OK);
        ck_assert_int_eq(dp_sim_op_order_runs(a), 0);
        ck_assert(x.makespan == y.makespan && x.makespan == 3);
        for (int v = 0; v < 3; v++) ck_assert(x.op_start[v] == y.op_start[v] && x.op_end[v] == y.op_end[v]);
        dp_sim_free(a);
        dp_sim_free(b);
        dp_cost_free(c);
        dp_graph_free(g);
    }
}
END_TEST

START_TEST(early_reject_hand_computed)
{
    /* Early rejection (dp_sim_set_early_reject), by hand: ops 0 -> 1, 2 and 3 alone, each of
     * time 1 on either of 2 devices, no transfer time. All four on device 0: op 0, 2, 3 ready
     * at 0 and queued in op order, op 1 ready at 1 behind them; makespan 4. Bound 2.5: the clock
     * passes it at 3 (early rejection off: cost 3); on, the first grant (op 0, ending at 1, with
     * 3 of device 0's work after it) shows the makespan is at least 4, so the run stops there
     * with cost 4 less the bound's relative margin (1e-9 and the rounding). Ops 0, 1 on device 0
     * and 2, 3 on device 1: makespan 2, and bound 1.5 stops at the first grant with 2. */
    dp_graph_builder *b = dp_graph_builder_alloc("early", "early", DP_GRAPH_COST_TIME);
    for (int i = 0; i < 4; i++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    dp_graph_builder_add_edge(b, 0, 1, 0);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_builder_free(b);
    dp_cost *c = dp_cost_alloc(g, 2);
    for (int i = 0; i < 8; i++) c->op_time[i] = 1;
    dp_cost_update_homogeneous(c);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    ck_assert(s != NULL);
    const int one[4] = {0, 0, 0, 0}, two[4] = {0, 0, 1, 1};
    double cost;
    int ex;
    dp_sim_result res;
    ck_assert_int_eq(dp_sim_run(s, one, &res, &err), DP_OK);
    ck_assert(res.makespan == 4);
    dp_sim_set_early_reject(s, 0);
    ck_assert_int_eq(dp_sim_run_bounded(s, one, 2.5, &cost, &ex, &err), DP_OK);
    ck_assert(ex == 1 && cost == 3);
    dp_sim_set_early_reject(s, 1);
    ck_assert_int_eq(dp_sim_run_bounded(s, one, 2.5, &cost, &ex, &err), DP_OK);
    ck_assert_msg(ex == 1 && cost > 4 * (1 - 2e-9) && cost <= 4, "cost %.17g", cost);
    /* a bound just below the makespan, within the margin: no early stop, the clock passes it at 4 */
    const double near = 4 * (1 - 1e-12);
    ck_assert_int_eq(dp_sim_run_bounded(s, one, near, &cost, &ex, &err), DP_OK);
    ck_assert(ex == 1 && cost == 4);
    /* at the makespan: within the bound, the makespan itself */
    ck_assert_int_eq(dp_sim_run_bounded(s, one, 4, &cost, &ex, &err), DP_OK);
    ck_assert(ex == 0 && cost == 4);
    ck_assert_int_eq(dp_sim_run_bounded(s, two, 1.5, &cost, &ex, &err), DP_OK);
    ck_assert_msg(ex == 1 && cost > 2 * (1 - 2e-9) && cost <= 2, "cost %.17g", cost);
    ck_assert_int_eq(dp_sim_run_bounded(s, two, 2, &cost, &ex, &err), DP_OK);
    ck_assert(ex == 0 && cost == 2);
    /* a delta run of the incumbent one moved to two: the same verdicts */
    dp_sim_prefix *p = dp_sim_prefix_alloc(4, 2);
    ck_assert_int_eq(dp_sim_prefix_set(s, p, one, &res, &err), DP_OK);
    ck_assert_int_eq(dp_sim_run_delta(s, p, two, 1.5, &cost, &ex, &err), DP_OK);
    ck_assert_msg(ex == 1 && cost > 2 * (1 - 2e-9) && cost <= 2, "cost %.17g", cost);
    ck_assert_int_eq(dp_sim_run_delta(s, p, two, 2, &cost, &ex, &err), DP_OK);
    ck_assert(ex == 0 && cost == 2);
    dp_sim_prefix_free(p);
    dp_sim_free(s);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(early_reject_wide_range)
{
    /* The devices' work kept per assignment must not keep a huge op's rounding after the op
     * leaves (found by a review of f2d50a5, which failed both cases). Ops 0..9 a chain of time 1,
     * op 10 alone; op 10 takes 1e17 on device 0. With every op on device 0 the sum of device 0's
     * work rounds 1e17 + 10 to 1e17 + 16; op 10 moved to device 1, device 0's work is 10 and the
     * makespan 10, within a bound of 12 (the kept sum said 16: exceeded, cost 16). Then ops 9 and
     * 10 at 1e308 on device 0 (the sum overflows to infinity, and stayed so after they left):
     * moved to device 1, the makespan is 9, within 10. Full bounded runs, delta runs of an
     * incumbent and the engine's both. */
    for (int k = 0; k < 2; k++) {
        dp_graph_builder *b = dp_graph_builder_alloc("wide", "wide", DP_GRAPH_COST_TIME);
        for (int i = 0; i < 11; i++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
        for (int i = 0; i < (k ? 8 : 9); i++) dp_graph_builder_add_edge(b, i, i + 1, 0);
        dp_error err;
        dp_graph *g = dp_graph_builder_finish(b, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        dp_graph_builder_free(b);
        dp_cost *c = dp_cost_alloc(g, 2);
        for (int i = 0; i < 22; i++) c->op_time[i] = 1;
        c->op_time[10 * 2] = k ? 1e308 : 1e17;
        if (k) c->op_time[9 * 2] = 1e308;
        dp_cost_update_homogeneous(c);
        int a1[11] = {0}, a2[11] = {0};
        a2[10] = 1;
        if (k) a2[9] = 1;
        const double makespan = k ? 9 : 10, bound = k ? 10 : 12;
        dp_sim *s = dp_sim_alloc(g, c, &err);
        ck_assert(s != NULL);
        dp_sim_result res;
        double cost;
        int ex;
        ck_assert_int_eq(dp_sim_run(s, a1, &res, &err), DP_OK);
        ck_assert_int_eq(dp_sim_run_bounded(s, a2, bound, &cost, &ex, &err), DP_OK);
        ck_assert_msg(ex == 0 && cost == makespan, "case %d: bounded cost %.17g exceeded %d", k, cost, ex);
        dp_sim_prefix *p = dp_sim_prefix_alloc(11, 2);
        ck_assert_int_eq(dp_sim_prefix_set(s, p, a1, &res, &err), DP_OK);
        ck_assert_int_eq(dp_sim_run_delta(s, p, a2, bound, &cost, &ex, &err), DP_OK);
        ck_assert_msg(ex == 0 && cost == makespan, "case %d: delta cost %.17g exceeded %d", k, cost, ex);
        /* the engine refuses costs whose makespans could overflow (case 1: DP_ERANGE) */
        dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
        ck_assert_msg(k ? e == NULL && err.code == DP_ERANGE : e != NULL, "case %d: %s", k, err.msg);
        if (e) {
            dp_engine_incumbent *inc = dp_engine_incumbent_alloc(e, &err);
            ck_assert(inc != NULL);
            ck_assert_int_eq(dp_engine_incumbent_set(inc, a1, NULL, &err), DP_OK);
            ck_assert_int_eq(dp_engine_run_delta(inc, a2, bound, &cost, &ex, &err), DP_OK);
            ck_assert_msg(ex == 0 && cost == makespan, "case %d: engine delta cost %.17g exceeded %d", k, cost, ex);
            dp_engine_incumbent_free(inc);
            dp_engine_free(e);
        }
        dp_sim_prefix_free(p);
        dp_sim_free(s);
        dp_cost_free(c);
        dp_graph_free(g);
    }
}
END_TEST

/* a graph made by hand: n ops, op i of time[i] (1 when time is NULL), and the m edges e[k] =
 * {producer, consumer, data} */
static dp_graph *hand_dag(int n, const double *time, const int (*e)[3], int m)
{
    dp_graph_builder *gb = dp_graph_builder_alloc("hand", "hand", DP_GRAPH_COST_TIME);
    for (int i = 0; i < n; i++) dp_graph_builder_add_op(gb, NULL, NULL, time ? time[i] : 1, 0);
    for (int k = 0; k < m; k++) dp_graph_builder_add_edge(gb, e[k][0], e[k][1], e[k][2]);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(gb, &err);
    dp_graph_builder_free(gb);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

/* p's schedule of its n ops is the full run r's, bit for bit */
static void assert_prefix_is_run(const dp_sim_prefix *p, const dp_sim_result *r, int n)
{
    for (int v = 0; v < n; v++)
        ck_assert_msg(p->start[v] == r->op_start[v] && p->end[v] == r->op_end[v] && p->ready[v] == r->op_ready[v],
                      "op %d: prefix %g %g %g, full %g %g %g", v, p->start[v], p->end[v], p->ready[v], r->op_start[v],
                      r->op_end[v], r->op_ready[v]);
    ck_assert(p->makespan == r->makespan);
}

START_TEST(prefix_infinite_transfer)
{
    /* a prefix addition whose op is READY at INFINITY (an infinite transfer, in a cost table made
     * by hand) runs from time 0: resumed at INFINITY, the commit failed an assertion (found by a
     * review's fuzzer); the prefix's schedule is then the full run's */
    dp_graph *g = hand_dag(3, NULL, (const int[][3]){{0, 1, 1}, {1, 2, 0}}, 2);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    ck_assert(c != NULL);
    c->edge_data[0] = INFINITY; /* graphs refuse it; cost tables made by hand may hold it */
    dp_sim *s = dp_sim_alloc(g, c, &err), *f = dp_sim_alloc(g, c, &err);
    dp_sim_prefix *p = dp_sim_prefix_alloc(3, 2);
    ck_assert(s && f && p);
    const int full[3] = {0, 1, 1};
    int a[3] = {-1, -1, -1};
    for (int v = 0; v < 3; v++) {
        a[v] = full[v];
        double st, rd;
        ck_assert_int_eq(dp_sim_prefix_add(s, p, a, v, 1, &st, &rd, &err), DP_OK);
    }
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(f, full, &r, &err), DP_OK);
    assert_prefix_is_run(p, &r, 3);
    ck_assert(r.makespan == INFINITY);
    dp_sim_prefix_free(p);
    dp_sim_free(s);
    dp_sim_free(f);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(op_order_delta_resumes_at_grant)
{
    /* An op-order delta run resumes at the least, over the moved ops, of the op's grant in the
     * incumbent (its READY there only queued it) and its READY on the new device; it resumed at
     * the old READY before (issue 31). Ops 0..4: P (1 s) and A (5 s) on device 0, V (1 s, after
     * P: READY at 1, queued behind A, granted at 6); B0 (1.5 s) and B1 (2 s, after B0) on device
     * 1. V moved to device 1 is READY there at 2 (P's end and a 1 s copy), so the run resumes at
     * 2, not 1: A and B1 are running then, V is set up; 3 ops simulated again, not 5 (P and B0
     * end before 2). The schedule and makespan are the full run's. */
    const double time[5] = {1, 5, 1, 1.5, 2};
    dp_graph *g = hand_dag(5, time, (const int[][3]){{0, 2, 1}, {3, 4, 0}}, 2);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    ck_assert(c != NULL);
    dp_sim *s = dp_sim_alloc(g, c, &err), *f = dp_sim_alloc(g, c, &err);
    dp_sim_prefix *p = dp_sim_prefix_alloc(5, 2);
    ck_assert(s && f && p);
    int a[5] = {0, 0, 0, 1, 1};
    ck_assert_int_eq(dp_sim_prefix_set(s, p, a, NULL, &err), DP_OK);
    ck_assert_int_eq(p->op_order, 1);
    ck_assert(p->ready[2] == 1 && p->start[2] == 6);
    a[2] = 1;
    const long before = p->n_resimulated, resumed = p->n_resumed;
    double cost;
    int exceeded;
    ck_assert_int_eq(dp_sim_run_delta(s, p, a, INFINITY, &cost, &exceeded, &err), DP_OK);
    ck_assert_int_eq(p->n_resumed, resumed + 1);
    ck_assert_int_eq(p->n_resimulated - before, 3);
    ck_assert_int_eq(dp_sim_delta_commit(s, p, a, &err), DP_OK);
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(f, a, &r, &err), DP_OK);
    ck_assert(!exceeded && cost == r.makespan);
    assert_prefix_is_run(p, &r, 5);
    ck_assert(r.op_ready[2] == 2 && r.op_start[2] == 3.5);
    dp_sim_prefix_free(p);
    dp_sim_free(s);
    dp_sim_free(f);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(converge_event_at_instant)
{
    /* A delta run that may converge (dp_sim_set_converge 1) took the incumbent's makespan when a
     * copy whose delay vanishes in rounding was still queued at the instant tau it checked
     * (found by a review's differential driver). S (16 s) feeds A (1e17 s) and B (2 s) on device
     * 0, which both feed X on device 2 (copies of 2 and 8 s; 1 s from S to B across devices).
     * The incumbent runs B after A: B ends at 1e17 + 16 (its 2 s vanish), its copy reaches X at
     * 1e17 + 32 (rounded), the makespan. B moved to device 1 ends at 19 and X is ready at 1e17 +
     * 16 (A's copy: 2 s vanish), the full run's makespan. At the end of instant 1e17 + 16 the run
     * still held A's copy to X, at that instant, while X's count of arrived inputs (one: B's)
     * matched the incumbent's (one: A's, arrived by then), so it "converged". An instant with
     * events left at it is not over: no convergence there. */
    const double time[4] = {16, 1e17, 2, 2};
    dp_graph *g = hand_dag(4, time, (const int[][3]){{0, 1, 0}, {0, 2, 1}, {1, 3, 2}, {2, 3, 8}}, 4);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    ck_assert(c != NULL);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            c->latency[a * 3 + b] = 0;
            c->inv_bw[a * 3 + b] = a != b;
        }
    for (int e = 0; e < g->n_edges; e++) c->edge_data[e] = g->edge_size[e];
    dp_cost_update_homogeneous(c);
    int inc[4] = {0, 0, 0, 2}, moved[4] = {0, 0, 1, 2};
    dp_sim_result r, q;
    dp_sim *f = dp_sim_alloc(g, c, &err);
    ck_assert(f != NULL);
    ck_assert_int_eq(dp_sim_run(f, inc, &q, &err), DP_OK);
    ck_assert(q.makespan == 1e17 + 32 && q.op_end[2] == 1e17 + 16);
    ck_assert_int_eq(dp_sim_run(f, moved, &r, &err), DP_OK);
    ck_assert(r.makespan == 1e17 + 16 && r.op_end[2] == 19);
    for (int mode = 0; mode <= 2; mode++) {
        dp_sim *s = dp_sim_alloc(g, c, &err);
        dp_sim_prefix *p = dp_sim_prefix_alloc(4, 3);
        ck_assert(s && p);
        dp_sim_set_converge(s, mode);
        ck_assert_int_eq(dp_sim_prefix_set(s, p, inc, NULL, &err), DP_OK);
        double cost;
        int exceeded;
        ck_assert_int_eq(dp_sim_run_delta(s, p, moved, INFINITY, &cost, &exceeded, &err), DP_OK);
        ck_assert_msg(!exceeded && cost == r.makespan, "converge %d: delta %a, full run %a", mode, cost, r.makespan);
        ck_assert_int_eq(dp_sim_delta_commit(s, p, moved, &err), DP_OK);
        assert_prefix_is_run(p, &r, 4);
        dp_sim_prefix_free(p);
        dp_sim_free(s);
    }
    dp_sim_free(f);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(bounded_verdict_is_cost_above_bound)
{
    /* every op of time 0: the makespan is 0, above a negative bound, but no instant passes it
     * (every event at time 0). Bounded and delta runs said "within the bound" with cost 0 (a
     * review's differential driver, rev21); exceeded now, cost 0 (> bound, <= the makespan). */
    dp_graph *g = hand_dag(2, (const double[]){0, 0}, (const int[][3]){{0, 1, 0}}, 1);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    ck_assert(c != NULL);
    const double bounds[2] = {-1, -0x1p-1074};
    for (int k = 0; k < 2; k++) {
        dp_sim *s = dp_sim_alloc(g, c, &err);
        dp_sim_prefix *p = dp_sim_prefix_alloc(2, 2);
        ck_assert(s && p);
        int a[2] = {0, 0};
        double cost;
        int ex;
        ck_assert_int_eq(dp_sim_run_bounded(s, a, bounds[k], &cost, &ex, &err), DP_OK);
        ck_assert_msg(ex == 1 && cost == 0, "bound %a: cost %a, exceeded %d", bounds[k], cost, ex);
        ck_assert_int_eq(dp_sim_prefix_set(s, p, a, NULL, &err), DP_OK);
        a[1] = 1;
        ck_assert_int_eq(dp_sim_run_delta(s, p, a, bounds[k], &cost, &ex, &err), DP_OK);
        ck_assert_msg(ex == 1 && cost == 0, "delta, bound %a: cost %a, exceeded %d", bounds[k], cost, ex);
        ck_assert_int_eq(dp_sim_delta_commit(s, p, a, &err), DP_EINVAL); /* an exceeded run commits nothing */
        ck_assert_int_eq(dp_sim_run_delta(s, p, a, 0, &cost, &ex, &err), DP_OK);
        ck_assert(ex == 0 && cost == 0);
        dp_sim_prefix_free(p);
        dp_sim_free(s);
    }
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(delta_from_prefix_built_schedule)
{
    /* a complete schedule built op by op (dp_sim_prefix_add's commits) as a delta run's
     * incumbent: its lists had room for the ops placed on each device only, and a commit that
     * moved an op to a device with none failed an assertion (writing past the list without
     * assertions; a review's differential driver, rev21). The commit now gives every list room. */
    dp_graph *g = hand_dag(2, NULL, NULL, 0);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_sim *s = dp_sim_alloc(g, c, &err), *f = dp_sim_alloc(g, c, &err);
    dp_sim_prefix *p = dp_sim_prefix_alloc(2, 2);
    ck_assert(c && s && f && p);
    int a[2] = {-1, -1};
    for (int v = 0; v < 2; v++) {
        a[v] = 0;
        double st, rd;
        ck_assert_int_eq(dp_sim_prefix_add(s, p, a, v, 1, &st, &rd, &err), DP_OK);
    }
    ck_assert(p->makespan == 2);
    a[1] = 1;
    double cost;
    int ex;
    ck_assert_int_eq(dp_sim_run_delta(s, p, a, INFINITY, &cost, &ex, &err), DP_OK);
    ck_assert(ex == 0 && cost == 1);
    ck_assert_int_eq(dp_sim_delta_commit(s, p, a, &err), DP_OK);
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(f, a, &r, &err), DP_OK);
    assert_prefix_is_run(p, &r, 2);
    ck_assert(p->dev_n[0] == 1 && p->dev_n[1] == 1 && p->dev_ops[1][0] == 1);
    dp_sim_prefix_free(p);
    dp_sim_free(s);
    dp_sim_free(f);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(converge_at_infinity)
{
    /* a delta run that may converge (dp_sim_set_converge) whose incumbent's makespan is
     * INFINITY (an infinite op time, in a cost table made by hand): at the end of the instant
     * at INFINITY, op 0's copy to op 1 is still queued at INFINITY (INFINITY + its delay), and
     * op 1's unwritten times (INFINITY) compared as done by then, so the run "converged" at
     * INFINITY, which conv_at cannot tell from a run that ended, and the commit failed an
     * assertion (found by a review's differential driver). The incumbent's schedule after the
     * commit is the full run's. Ops: 0 (infinite time) on device 0, 1 after it on device 1, 2 a
     * source moved from device 0 to device 2 (the run starts from time 0). */
    dp_graph *g = hand_dag(3, NULL, (const int[][3]){{0, 1, 1}}, 1);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    ck_assert(c != NULL);
    for (int d = 0; d < 3; d++) c->op_time[0 * 3 + d] = INFINITY; /* graphs refuse it */
    dp_sim *s = dp_sim_alloc(g, c, &err), *f = dp_sim_alloc(g, c, &err);
    dp_sim_prefix *p = dp_sim_prefix_alloc(3, 3);
    ck_assert(s && f && p);
    dp_sim_set_converge(s, 1);
    const int inc[3] = {0, 1, 0}, cand[3] = {0, 1, 2};
    ck_assert_int_eq(dp_sim_prefix_set(s, p, inc, NULL, &err), DP_OK);
    ck_assert(p->makespan == INFINITY);
    double cost;
    int exceeded;
    ck_assert_int_eq(dp_sim_run_delta(s, p, cand, INFINITY, &cost, &exceeded, &err), DP_OK);
    ck_assert(exceeded == 0 && cost == INFINITY);
    ck_assert_int_eq(dp_sim_delta_commit(s, p, cand, &err), DP_OK);
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(f, cand, &r, &err), DP_OK);
    assert_prefix_is_run(p, &r, 3);
    for (int v = 0; v < 3; v++) ck_assert_int_eq(p->dev[v], cand[v]);
    ck_assert(r.makespan == INFINITY);
    dp_sim_prefix_free(p);
    dp_sim_free(s);
    dp_sim_free(f);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(bounded_infinite_time)
{
    /* an event at an infinite time is past any finite bound: the run exceeds it (it held cost 1,
     * not exceeded, in both the op-order run and the event loop: the verdict was read from an
     * INFINITY sentinel) */
    dp_graph *g = hand_dag(2, (const double[]){1, 2}, (const int[][3]){{0, 1, 0}}, 1);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 1, &err);
    ck_assert(c != NULL);
    c->op_time[1] = INFINITY; /* graphs refuse it; cost tables made by hand may hold it */
    for (int op_order = 0; op_order < 2; op_order++) {
        dp_sim *s = dp_sim_alloc(g, c, &err);
        dp_sim_set_op_order(s, op_order);
        const int a[2] = {0, 0};
        double cost;
        int exceeded;
        ck_assert_int_eq(dp_sim_run_bounded(s, a, 5, &cost, &exceeded, &err), DP_OK);
        ck_assert_msg(exceeded == 1 && cost == INFINITY, "op order %d: cost %g, exceeded %d", op_order, cost, exceeded);
        ck_assert_int_eq(dp_sim_op_order_runs(s), op_order);
        dp_sim_result r;
        ck_assert_int_eq(dp_sim_run(s, a, &r, &err), DP_OK);
        ck_assert(r.makespan == INFINITY);
        dp_sim_free(s);
    }
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(op_order_infinite_events)
{
    /* events at an infinite time: the op-order run reads an empty queue's first time from the
     * slot after its end (EVQ_END_T, infinity), so a run whose next instant is infinite must tell an
     * ended run from events at infinity, which it hands to the event loop (the queues must not
     * be read past their ends). Ops 3 and 4 take infinite times, each last on its device: two
     * COMPUTE_DONEs at infinity end the run. With _i == 1, op 5 follows ops 1 and 4, and its
     * copy from op 4 arrives at infinity. Device 0: ops 0, 1, 2, 4; device 1: ops 5 (a source
     * when _i == 0) and 3. Every op's times, op order on and off, unbounded and bounded, bit for
     * bit, and which runs the op-order run kept. */
    const int edges[][3] = {{0, 1, 1}, {0, 2, 1}, {2, 3, 1}, {1, 4, 1}, {1, 5, 1}, {4, 5, 1}};
    dp_graph *g = hand_dag(6, (const double[]){1, 2, 3, 4, 5, 6}, edges, _i ? 6 : 4);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    ck_assert(c != NULL);
    /* graphs refuse these; cost tables made by hand may hold them */
    c->op_time[3 * 2 + 1] = INFINITY;
    c->op_time[4 * 2 + 0] = INFINITY;
    const int a[6] = {0, 0, 0, 1, 0, 1};
    dp_sim_result r[2];
    double cost[2];
    int exceeded[2];
    dp_sim *s[2];
    for (int op_order = 0; op_order < 2; op_order++) {
        s[op_order] = dp_sim_alloc(g, c, &err);
        ck_assert(s[op_order] != NULL);
        dp_sim_set_op_order(s[op_order], op_order);
        ck_assert_int_eq(dp_sim_run(s[op_order], a, &r[op_order], &err), DP_OK);
        ck_assert(r[op_order].makespan == INFINITY);
        ck_assert_int_eq(r[op_order].n_events, r[0].n_events);
    }
    for (int v = 0; v < 6; v++)
        ck_assert_msg(r[0].op_start[v] == r[1].op_start[v] && r[0].op_end[v] == r[1].op_end[v] &&
                          r[0].op_ready[v] == r[1].op_ready[v],
                      "op %d: event loop %g %g %g, op order %g %g %g", v, r[0].op_ready[v], r[0].op_start[v],
                      r[0].op_end[v], r[1].op_ready[v], r[1].op_start[v], r[1].op_end[v]);
    /* the unbounded run went to the event loop (the op-order run counted none) */
    ck_assert_int_eq(dp_sim_op_order_runs(s[1]), 0);
    for (int b = 0; b < 3; b++) {
        const double bound = b == 0 ? 3 : b == 1 ? 100 : INFINITY;
        for (int op_order = 0; op_order < 2; op_order++)
            ck_assert_int_eq(dp_sim_run_bounded(s[op_order], a, bound, &cost[op_order], &exceeded[op_order], &err),
                             DP_OK);
        /* the same verdict; above the bound, each cost is (the first instant past it or a
         * lower bound), within it the makespan */
        ck_assert_msg(exceeded[0] == (b < 2) && exceeded[1] == exceeded[0] && cost[0] > (b < 2 ? bound : 0) &&
                          cost[1] > (b < 2 ? bound : 0) && (b < 2 || (cost[0] == INFINITY && cost[1] == INFINITY)),
                      "bound %g: event loop %g (%d), op order %g (%d)", bound, cost[0], exceeded[0], cost[1],
                      exceeded[1]);
    }
    /* finite bounds stop the op-order run before infinity (its own runs) */
    ck_assert_int_eq(dp_sim_op_order_runs(s[1]), 2);
    dp_sim_free(s[0]);
    dp_sim_free(s[1]);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(direct_same_as_fifo)
{
    /* events run at once (dp_sim.h) against every event through the FIFO (dp_sim_set_direct 0),
     * on DAGs with integer and zero times (ties everywhere): full runs (schedules, busy time
     * summed in the same order, event counts, places in the event order), delta runs with
     * bounds and their commits, and an environment's incremental prefix with probes */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3131);
    for (int gi = 0; gi < 60; gi++) {
        const int n = 2 + (int)gsl_rng_uniform_int(r, 80), D = 1 + gi % 6;
        dp_graph *g = tie_dag(r, n, gsl_rng_uniform(r) * 0.3);
        dp_cost *c = tie_costs(r, g, D);
        dp_error err;
        dp_sim *a = dp_sim_alloc(g, c, &err), *b = dp_sim_alloc(g, c, &err);
        dp_sim_prefix *pa = dp_sim_prefix_alloc(n, D), *pb = dp_sim_prefix_alloc(n, D);
        ck_assert(a && b && pa && pb);
        dp_sim_set_direct(b, 0);
        int *cur = malloc((size_t)n * sizeof *cur), *part = malloc((size_t)n * sizeof *part), ops[4], old[4];
        for (int v = 0; v < n; v++) cur[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        dp_sim_result x, y;
        ck_assert_int_eq(dp_sim_prefix_set(a, pa, cur, &x, &err), DP_OK);
        ck_assert_int_eq(dp_sim_prefix_set(b, pb, cur, &y, &err), DP_OK);
        ck_assert_int_eq(x.n_events, y.n_events);
        ck_assert_int_eq(x.n_events, full_run_events(g));
        for (int d = 0; d < D; d++) ck_assert(x.busy[d] == y.busy[d]);
        assert_same_state(pa, pb, n, gi, -1);
        for (int m = 0; m < 40; m++) {
            const int k = random_move(r, n, D, cur, ops, old);
            const double u = gsl_rng_uniform(r);
            const double bound = u < 0.3 ? INFINITY : pa->makespan * 1.5 * gsl_rng_uniform(r);
            double ca, cb;
            int ea, eb;
            ck_assert_int_eq(dp_sim_run_delta(a, pa, cur, bound, &ca, &ea, &err), DP_OK);
            ck_assert_int_eq(dp_sim_run_delta(b, pb, cur, bound, &cb, &eb, &err), DP_OK);
            ck_assert_msg(ca == cb && ea == eb, "graph %d move %d: at once %.17g (%d), through the FIFO %.17g (%d)", gi,
                          m, ca, ea, cb, eb);
            if (!ea) {
                ck_assert_int_eq(dp_sim_delta_commit(a, pa, cur, &err), DP_OK);
                ck_assert_int_eq(dp_sim_delta_commit(b, pb, cur, &err), DP_OK);
                assert_same_state(pa, pb, n, gi, m);
            } else {
                undo_move(cur, ops, old, k);
            }
            /* full runs of the candidate, from time 0 */
            ck_assert_int_eq(dp_sim_run(a, cur, &x, &err), DP_OK);
            ck_assert_int_eq(dp_sim_run(b, cur, &y, &err), DP_OK);
            ck_assert(x.makespan == y.makespan && x.n_events == y.n_events);
            for (int v = 0; v < n; v++)
                ck_assert(x.op_start[v] == y.op_start[v] && x.op_end[v] == y.op_end[v] && x.op_ready[v] == y.op_ready[v]);
        }
        /* an episode's prefix, op by op in index order (edges go from lower to higher indices):
         * a probe on a random device, then the op committed on another */
        dp_sim_prefix_reset(pa);
        dp_sim_prefix_reset(pb);
        for (int v = 0; v < n; v++) part[v] = -1;
        for (int v = 0; v < n; v++) {
            double sa, ra, sb, rb;
            part[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
            ck_assert_int_eq(dp_sim_prefix_add(a, pa, part, v, 0, &sa, &ra, &err), DP_OK);
            ck_assert_int_eq(dp_sim_prefix_add(b, pb, part, v, 0, &sb, &rb, &err), DP_OK);
            ck_assert_msg(sa == sb && ra == rb, "graph %d probe %d: start %.17g / %.17g", gi, v, sa, sb);
            part[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
            ck_assert_int_eq(dp_sim_prefix_add(a, pa, part, v, 1, &sa, &ra, &err), DP_OK);
            ck_assert_int_eq(dp_sim_prefix_add(b, pb, part, v, 1, &sb, &rb, &err), DP_OK);
            ck_assert(sa == sb && ra == rb);
            assert_same_state(pa, pb, v + 1 < n ? 0 : n, gi, v);
            for (int i = 0; i <= v; i++)
                ck_assert(pa->start[i] == pb->start[i] && pa->end[i] == pb->end[i] && pa->ready[i] == pb->ready[i] &&
                          pa->seq_ready[i] == pb->seq_ready[i] && pa->seq_done[i] == pb->seq_done[i]);
        }
        free(cur);
        free(part);
        dp_sim_prefix_free(pa);
        dp_sim_prefix_free(pb);
        dp_sim_free(a);
        dp_sim_free(b);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

/* the places of p's events in the event order, as a permutation: (kind, op) sorted by sequence
 * number (a FINISH's block of copies only for ops with successors, a COMPUTE_DONE only for ops
 * of nonzero time: an empty block, and a zero-time op's COMPUTE_DONE, which goes to the FIFO
 * unnumbered, share their number with the next event) */
typedef struct placed_ev {
    uint64_t seq;
    int kind, op;
} placed_ev;

static int placed_ev_cmp(const void *a, const void *b)
{
    const placed_ev *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : 0;
}

static int event_order(const dp_sim_prefix *p, const dp_graph *g, const dp_cost *c, placed_ev *out)
{
    int k = 0;
    for (int v = 0; v < p->n_ops; v++) {
        out[k++] = (placed_ev){p->seq_ready[v], 0, v};
        if (dp_cost_op(c, v, p->dev[v]) > 0) out[k++] = (placed_ev){p->seq_done[v], 1, v};
        if (g->succ_ptr[v + 1] > g->succ_ptr[v]) out[k++] = (placed_ev){p->seq_fin[v], 2, v};
    }
    qsort(out, (size_t)k, sizeof *out, placed_ev_cmp);
    for (int i = 1; i < k; i++) ck_assert_msg(out[i].seq != out[i - 1].seq, "two events share a sequence number");
    return k;
}

/* a run numbers at most 2 events per op and one per edge (READY, COMPUTE_DONE, FINISH's copies):
 * after `runs` runs the next number is within 2 (runs + 1) times that, when each commit's numbers
 * grow by at most twice its run's events (a prefix addition's commit leaves room after its run's
 * numbers, PREFIX_SEQ_SLACK in sim/dp_sim.c; an earlier renumbering of converged commits doubled
 * them instead, which overflowed 64 bits in long rollouts) */
static void assert_numbers_linear(const dp_sim_prefix *p, const dp_graph *g, int runs, int gi)
{
    const uint64_t per_run = 2 * (uint64_t)g->n_ops + (uint64_t)g->n_edges + 1;
    ck_assert_msg(p->seq_next <= 2 * (uint64_t)(runs + 1) * per_run, "graph %d: next number %llu after %d runs (%llu a run)",
                  gi, (unsigned long long)p->seq_next, runs, (unsigned long long)per_run);
}

START_TEST(converge_same_as_not)
{
    /* delta runs that stop once their state is the incumbent's again (dp_sim_set_converge 1)
     * against runs that never do (0) and full runs, on DAGs with integer and zero times (ties
     * everywhere) and random bounds: the same costs; after each commit the same schedules,
     * device lists and order of the events' sequence numbers; the runs went on from the
     * committed states (the next moves) give the same costs again */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3107);
    long converged = 0, moves = 0;
    for (int gi = 0; gi < 80; gi++) {
        const int n = 2 + (int)gsl_rng_uniform_int(r, 80), D = 1 + gi % 6;
        dp_graph *g = tie_dag(r, n, gsl_rng_uniform(r) * 0.3);
        dp_cost *c = tie_costs(r, g, D);
        dp_error err;
        dp_sim *a = dp_sim_alloc(g, c, &err), *b = dp_sim_alloc(g, c, &err), *ref = dp_sim_alloc(g, c, &err);
        dp_sim_prefix *pa = dp_sim_prefix_alloc(n, D), *pb = dp_sim_prefix_alloc(n, D);
        ck_assert(a && b && ref && pa && pb);
        dp_sim_set_converge(a, 1);
        dp_sim_set_converge(b, 0);
        int *cur = malloc((size_t)n * sizeof *cur), ops[4], old[4];
        placed_ev *ea = malloc(3 * (size_t)n * sizeof *ea), *eb = malloc(3 * (size_t)n * sizeof *eb);
        for (int v = 0; v < n; v++) cur[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        ck_assert_int_eq(dp_sim_prefix_set(a, pa, cur, NULL, &err), DP_OK);
        ck_assert_int_eq(dp_sim_prefix_set(b, pb, cur, NULL, &err), DP_OK);
        int n_commits = 0;
        for (int m = 0; m < 400; m++) {
            const int k = random_move(r, n, D, cur, ops, old);
            const double u = gsl_rng_uniform(r);
            const double bound = u < 0.3 ? INFINITY : u < 0.6 ? pa->makespan : pa->makespan * 1.5 * gsl_rng_uniform(r);
            double ca, cb, cf;
            int xa, xb, xf;
            ck_assert_int_eq(dp_sim_run_delta(a, pa, cur, bound, &ca, &xa, &err), DP_OK);
            ck_assert_int_eq(dp_sim_run_delta(b, pb, cur, bound, &cb, &xb, &err), DP_OK);
            ck_assert_int_eq(dp_sim_run_bounded(ref, cur, bound, &cf, &xf, &err), DP_OK);
            ck_assert_msg(ca == cb && xa == xb && ca == cf && xa == xf,
                          "graph %d move %d: converging %.17g (%d), not %.17g (%d), full %.17g (%d)", gi, m, ca, xa, cb,
                          xb, cf, xf);
            moves++;
            if (!xa && gsl_rng_uniform(r) < 0.6) {
                ck_assert_int_eq(dp_sim_delta_commit(a, pa, cur, &err), DP_OK);
                ck_assert_int_eq(dp_sim_delta_commit(b, pb, cur, &err), DP_OK);
                ck_assert(pa->makespan == pb->makespan);
                assert_numbers_linear(pa, g, ++n_commits, gi);
                for (int v = 0; v < n; v++)
                    ck_assert_msg(pa->start[v] == pb->start[v] && pa->end[v] == pb->end[v] &&
                                      pa->ready[v] == pb->ready[v] && pa->dev[v] == pb->dev[v],
                                  "graph %d move %d op %d: converging [%.17g, %.17g] ready %.17g, not [%.17g, %.17g] "
                                  "ready %.17g", gi, m, v, pa->start[v], pa->end[v], pa->ready[v], pb->start[v],
                                  pb->end[v], pb->ready[v]);
                for (int d = 0; d < D; d++) {
                    ck_assert_int_eq(pa->dev_n[d], pb->dev_n[d]);
                    for (int i = 0; i < pa->dev_n[d]; i++) ck_assert_int_eq(pa->dev_ops[d][i], pb->dev_ops[d][i]);
                }
                const int na = event_order(pa, g, c, ea), nb = event_order(pb, g, c, eb);
                ck_assert_int_eq(na, nb);
                for (int i = 0; i < na; i++)
                    ck_assert_msg(ea[i].kind == eb[i].kind && ea[i].op == eb[i].op,
                                  "graph %d move %d: event %d of the order: converging (%d, op %d), not (%d, op %d)", gi,
                                  m, i, ea[i].kind, ea[i].op, eb[i].kind, eb[i].op);
            } else {
                undo_move(cur, ops, old, k);
            }
        }
        converged += pa->n_converged;
        ck_assert_int_eq(pb->n_converged, 0);
        free(cur);
        free(ea);
        free(eb);
        dp_sim_prefix_free(pa);
        dp_sim_prefix_free(pb);
        dp_sim_free(a);
        dp_sim_free(b);
        dp_sim_free(ref);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    /* the path under test was taken, often */
    ck_assert_int_gt(converged, moves / 20);
    fprintf(stderr, "converge_same_as_not: %ld moves, %ld converged\n", moves, converged);
    gsl_rng_free(r);
}
END_TEST

/* a random topological order of g's ops (a random ready op at each step: ops are added far from
 * the order they run in, as a learned policy adds them) */
static void random_topo_order(gsl_rng *r, const dp_graph *g, int *order)
{
    const int n = g->n_ops;
    int *need = malloc((size_t)n * sizeof *need), *ready = malloc((size_t)n * sizeof *ready), nr = 0;
    for (int v = 0; v < n; v++) {
        need[v] = g->pred_ptr[v + 1] - g->pred_ptr[v];
        if (!need[v]) ready[nr++] = v;
    }
    for (int i = 0; i < n; i++) {
        ck_assert_int_gt(nr, 0);
        const int j = (int)gsl_rng_uniform_int(r, (unsigned long)nr), v = ready[j];
        ready[j] = ready[--nr];
        order[i] = v;
        for (int q = g->succ_ptr[v]; q < g->succ_ptr[v + 1]; q++)
            if (--need[g->edge_dst[q]] == 0) ready[nr++] = g->edge_dst[q];
    }
    free(need);
    free(ready);
}

START_TEST(prefix_converge_same_as_not)
{
    /* prefix additions whose commits stop once the state is the prefix's again (the added op
     * done; dp_sim_set_converge_prefix 1) against commits that simulate every op ending at or
     * after the added op's READY (0), on DAGs with integer and zero times (ties everywhere), ops
     * added in random topological orders with probes between: the same probes; after every
     * commit the same schedules, device lists and order of the events' sequence numbers, and
     * the schedule of the prefix simulated from the start */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3163);
    long converged = 0, commits = 0, resim_a = 0, resim_b = 0;
    for (int gi = 0; gi < 120; gi++) {
        const int n = 2 + (int)gsl_rng_uniform_int(r, 80), D = 1 + gi % 6;
        dp_graph *g = tie_dag(r, n, gsl_rng_uniform(r) * 0.3);
        dp_cost *c = tie_costs(r, g, D);
        /* every fifth graph: one edge far longer than the others, so that the lazy set-up's
         * window for the copies in flight (the longest transfer) holds most producers */
        if (gi % 5 == 4 && g->n_edges > 0) c->edge_data[gsl_rng_uniform_int(r, (unsigned long)g->n_edges)] = 1000;
        dp_error err;
        dp_sim *a = dp_sim_alloc(g, c, &err), *b = dp_sim_alloc(g, c, &err), *ref = dp_sim_alloc(g, c, &err);
        dp_sim_prefix *pa = dp_sim_prefix_alloc(n, D), *pb = dp_sim_prefix_alloc(n, D);
        ck_assert(a && b && ref && pa && pb);
        dp_sim_set_converge_prefix(a, 1);
        dp_sim_set_converge_prefix(b, 0);
        int *order = malloc((size_t)n * sizeof *order), *part = malloc((size_t)n * sizeof *part);
        placed_ev *ea = malloc(3 * (size_t)n * sizeof *ea), *eb = malloc(3 * (size_t)n * sizeof *eb);
        for (int rep = 0; rep < 3; rep++) {
            random_topo_order(r, g, order);
            dp_sim_prefix_reset(pa);
            dp_sim_prefix_reset(pb);
            for (int v = 0; v < n; v++) part[v] = -1;
            for (int i = 0; i < n; i++) {
                const int v = order[i];
                double sa, ra, sb, rb;
                part[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
                ck_assert_int_eq(dp_sim_prefix_add(a, pa, part, v, 0, &sa, &ra, &err), DP_OK);
                ck_assert_int_eq(dp_sim_prefix_add(b, pb, part, v, 0, &sb, &rb, &err), DP_OK);
                ck_assert_msg(sa == sb && ra == rb, "graph %d probe %d: start %.17g / %.17g", gi, v, sa, sb);
                part[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
                ck_assert_int_eq(dp_sim_prefix_add(a, pa, part, v, 1, &sa, &ra, &err), DP_OK);
                ck_assert_int_eq(dp_sim_prefix_add(b, pb, part, v, 1, &sb, &rb, &err), DP_OK);
                ck_assert_msg(sa == sb && ra == rb, "graph %d add %d: start %.17g / %.17g", gi, v, sa, sb);
                commits++;
                assert_numbers_linear(pa, g, i + 1, gi);
                dp_sim_result x;
                ck_assert_int_eq(dp_sim_run_prefix(ref, part, &x, &err), DP_OK);
                ck_assert_msg(pa->makespan == pb->makespan && pa->makespan == x.makespan,
                              "graph %d step %d: makespan %.17g / %.17g / from the start %.17g", gi, i, pa->makespan,
                              pb->makespan, x.makespan);
                for (int j = 0; j <= i; j++) {
                    const int u = order[j];
                    ck_assert_msg(pa->start[u] == pb->start[u] && pa->end[u] == pb->end[u] &&
                                      pa->ready[u] == pb->ready[u] && pa->dev[u] == pb->dev[u] &&
                                      pa->start[u] == x.op_start[u] && pa->end[u] == x.op_end[u],
                                  "graph %d step %d op %d: converging [%.17g, %.17g] ready %.17g, not [%.17g, %.17g] "
                                  "ready %.17g, from the start [%.17g, %.17g]", gi, i, u, pa->start[u], pa->end[u],
                                  pa->ready[u], pb->start[u], pb->end[u], pb->ready[u], x.op_start[u], x.op_end[u]);
                }
                for (int d = 0; d < D; d++) {
                    ck_assert_int_eq(pa->dev_n[d], pb->dev_n[d]);
                    for (int j = 0; j < pa->dev_n[d]; j++) {
                        ck_assert_int_eq(pa->dev_ops[d][j], pb->dev_ops[d][j]);
                        if (j > 0)
                            ck_assert_msg(pa->seq_ready[pa->dev_ops[d][j - 1]] < pa->seq_ready[pa->dev_ops[d][j]],
                                          "graph %d step %d device %d: list order", gi, i, d);
                    }
                }
            }
            /* the whole order of events once every op is placed (event_order reads every op) */
            const int na = event_order(pa, g, c, ea), nb = event_order(pb, g, c, eb);
            ck_assert_int_eq(na, nb);
            for (int j = 0; j < na; j++)
                ck_assert_msg(ea[j].kind == eb[j].kind && ea[j].op == eb[j].op,
                              "graph %d: event %d of the order: converging (%d, op %d), not (%d, op %d)", gi, j,
                              ea[j].kind, ea[j].op, eb[j].kind, eb[j].op);
        }
        converged += pa->n_converged;
        resim_a += pa->n_resimulated;
        resim_b += pb->n_resimulated;
        ck_assert_int_eq(pb->n_converged, 0);
        free(order);
        free(part);
        free(ea);
        free(eb);
        dp_sim_prefix_free(pa);
        dp_sim_prefix_free(pb);
        dp_sim_free(a);
        dp_sim_free(b);
        dp_sim_free(ref);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    /* the path under test was taken, often, and it simulated fewer ops */
    ck_assert_int_gt(converged, commits / 20);
    ck_assert_int_lt(resim_a, resim_b);
    fprintf(stderr, "prefix_converge_same_as_not: %ld commits, %ld converged, ops simulated again %ld against %ld\n",
            commits, converged, resim_a, resim_b);
    gsl_rng_free(r);
}
END_TEST

START_TEST(prefix_converges_after_heaped_queue)
{
    /* A commit converges once its event queues have held more events than a sorted queue keeps
     * (EVQ_SORTED_MAX, 32, in sim/dp_sim.c) and shrunk again. Op 0 (time 1, device 0) feeds 40
     * ops on device 1 (time 1 each; transfer latency 10), the last of which starts a chain of 60
     * ops on device 1; op 101 (time 1), op 0's other consumer, is added last, on device 0. Its
     * run resumes at 1, where op 0 ends and sends 40 copies at once (the transfer queue becomes
     * a heap), op 101 is done at 2, and the copies arrive at 11; after them the state is the
     * prefix's, so the commit stops there (converged) instead of simulating the chain to its end
     * at 111. Before a heaped queue was sorted again on shrinking, the convergence check
     * refused every instant after the heap, and every commit ran to the end (none converged).
     * The schedule is the one of the commits that do not converge. */
    const int fan = 40, chain = 60, n = 1 + fan + chain + 1;
    dp_graph_builder *b = dp_graph_builder_alloc("heaped", "heaped", DP_GRAPH_COST_TIME);
    for (int i = 0; i < n; i++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    for (int i = 1; i <= fan; i++) dp_graph_builder_add_edge(b, 0, i, 0);
    for (int i = 0; i < chain; i++) dp_graph_builder_add_edge(b, i == 0 ? fan : fan + i, fan + 1 + i, 0);
    dp_graph_builder_add_edge(b, 0, n - 1, 0);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_builder_free(b);
    dp_cost *c = dp_cost_alloc(g, 2);
    for (int i = 0; i < 2 * n; i++) c->op_time[i] = 1;
    c->latency[0 * 2 + 1] = c->latency[1 * 2 + 0] = 10;
    dp_cost_update_homogeneous(c);
    dp_sim *sa = dp_sim_alloc(g, c, &err), *sb = dp_sim_alloc(g, c, &err);
    dp_sim_prefix *pa = dp_sim_prefix_alloc(n, 2), *pb = dp_sim_prefix_alloc(n, 2);
    ck_assert(sa && sb && pa && pb);
    dp_sim_set_converge_prefix(sa, 1);
    dp_sim_set_converge_prefix(sb, 0);
    dp_sim_prefix_reset(pa);
    dp_sim_prefix_reset(pb);
    int *part = malloc((size_t)n * sizeof *part);
    for (int v = 0; v < n; v++) part[v] = -1;
    double st, rd;
    for (int v = 0; v < n; v++) {
        part[v] = v == 0 || v == n - 1 ? 0 : 1;
        ck_assert_int_eq(dp_sim_prefix_add(sa, pa, part, v, 1, &st, &rd, &err), DP_OK);
        ck_assert_int_eq(dp_sim_prefix_add(sb, pb, part, v, 1, &st, &rd, &err), DP_OK);
    }
    /* the last commit (op 101) converged, simulating the 40 fan-out ops, op 0 and op 101 again
     * at most, not the chain */
    const long conv0 = pa->n_converged;
    ck_assert_msg(pa->start[n - 1] == 1 && pa->end[n - 1] == 2, "op %d [%.17g, %.17g]", n - 1, pa->start[n - 1],
                  pa->end[n - 1]);
    ck_assert_msg(pa->makespan == 111 && pb->makespan == 111, "makespan %.17g / %.17g", pa->makespan, pb->makespan);
    for (int v = 0; v < n; v++)
        ck_assert_msg(pa->start[v] == pb->start[v] && pa->end[v] == pb->end[v] && pa->ready[v] == pb->ready[v],
                      "op %d: converging [%.17g, %.17g], not [%.17g, %.17g]", v, pa->start[v], pa->end[v], pb->start[v],
                      pb->end[v]);
    /* the last addition alone, counted: it converges */
    dp_sim_prefix_reset(pa);
    for (int v = 0; v < n; v++) part[v] = -1;
    for (int v = 0; v < n - 1; v++) {
        part[v] = v == 0 ? 0 : 1;
        ck_assert_int_eq(dp_sim_prefix_add(sa, pa, part, v, 1, &st, &rd, &err), DP_OK);
    }
    const long c0 = pa->n_converged, k0 = pa->n_resimulated;
    part[n - 1] = 0;
    ck_assert_int_eq(dp_sim_prefix_add(sa, pa, part, n - 1, 1, &st, &rd, &err), DP_OK);
    ck_assert_msg(pa->n_converged == c0 + 1, "the last commit did not converge (%ld commits converged of %d; %ld before)",
                  pa->n_converged, n, conv0);
    ck_assert_msg(pa->n_resimulated - k0 <= fan + 2, "%ld ops simulated again", pa->n_resimulated - k0);
    free(part);
    dp_sim_prefix_free(pa);
    dp_sim_prefix_free(pb);
    dp_sim_free(sa);
    dp_sim_free(sb);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(op_order_refuses_bad_device)
{
    /* the op-order run checks only the ops whose device changed since its last run
     * (ops_tables_sync): a device out of range is refused there, named, at the first run and
     * after a good one, and the run after the refusal equals a fresh simulator's, bit for bit */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    dp_graph *g = tie_dag(r, 40, 0.1);
    dp_cost *c = tie_costs_positive(r, g, 3);
    dp_error err;
    dp_sim *s = dp_sim_alloc(g, c, &err);
    ck_assert(s != NULL && dp_sim_op_order_on(s));
    int a[40];
    dp_sim_result res, fresh;
    for (int v = 0; v < 40; v++) a[v] = v % 3;
    a[5] = 3;
    ck_assert_int_eq(dp_sim_run(s, a, &res, &err), DP_EINVAL); /* the first run: every op is new */
    ck_assert_msg(strstr(err.msg, "op 5 ") && strstr(err.msg, "device 3, outside 0..2"), "%s", err.msg);
    a[5] = 1;
    ck_assert_int_eq(dp_sim_run(s, a, &res, &err), DP_OK);
    const long runs = dp_sim_op_order_runs(s);
    ck_assert_int_gt(runs, 0);
    a[2] = 1;     /* changed, in range, before the bad ones */
    a[17] = 3;
    a[29] = -2;
    ck_assert_int_eq(dp_sim_run(s, a, &res, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 17 ") && strstr(err.msg, "device 3, outside 0..2"), "%s", err.msg);
    a[17] = 0;
    ck_assert_int_eq(dp_sim_run(s, a, &res, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 29 ") && strstr(err.msg, "device -2"), "%s", err.msg);
    a[29] = 2;
    ck_assert_int_eq(dp_sim_run(s, a, &res, &err), DP_OK);
    ck_assert_int_eq(dp_sim_op_order_runs(s), runs + 1);
    dp_sim *f = dp_sim_alloc(g, c, &err);
    ck_assert(f != NULL);
    ck_assert_int_eq(dp_sim_run(f, a, &fresh, &err), DP_OK);
    ck_assert(res.makespan == fresh.makespan);
    for (int v = 0; v < 40; v++) ck_assert(res.op_start[v] == fresh.op_start[v] && res.op_end[v] == fresh.op_end[v]);
    dp_sim_free(f);
    dp_sim_free(s);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);

    /* a review's reproducers (9ab6904 checked the changed ops one by one as it updated them):
     * (a) -1 on a simulator that never ran: its tables said -1 too, and it ran (makespan 1);
     * (b) a refusal after op 0's update had written edge 0->2 from op 2's refused-run device:
     * [1, 0, 0] then kept that edge's time 0 (makespan 2 for 12); (c) INT_MIN beside a
     * changed op was read as a device (a read far outside the cost tables) */
    g = hand_dag(3, (const double[]){1, 1, 1}, (const int[][3]){{0, 2, 10}}, 1);
    c = dp_cost_graph(g, 2, &err);
    ck_assert(c != NULL);
    for (int k = 0; k < 3; k++) {
        s = dp_sim_alloc(g, c, &err);
        f = dp_sim_alloc(g, c, &err);
        ck_assert(s && f && dp_sim_op_order_on(s));
        if (k == 0) {
            ck_assert_int_eq(dp_sim_run(s, (const int[]){0, -1, 0}, &res, &err), DP_EINVAL);
            ck_assert_msg(strstr(err.msg, "op 1 ") && strstr(err.msg, "device -1"), "%s", err.msg);
        } else {
            ck_assert_int_eq(dp_sim_run(s, (const int[]){0, 0, 0}, &res, &err), DP_OK);
            ck_assert(res.makespan == 3);
            const int bad[3] = {1, k == 1 ? 5 : INT_MIN, 1};
            ck_assert_int_eq(dp_sim_run(s, bad, &res, &err), DP_EINVAL);
            ck_assert_msg(strstr(err.msg, "op 1 "), "%s", err.msg);
        }
        const int good[3] = {1, 0, 0};
        ck_assert_int_eq(dp_sim_run(s, good, &res, &err), DP_OK);
        ck_assert_int_eq(dp_sim_run(f, good, &fresh, &err), DP_OK);
        ck_assert_msg(res.makespan == 12 && fresh.makespan == 12, "case %d: %g, fresh %g", k, res.makespan,
                      fresh.makespan);
        double cost;
        int exceeded;
        ck_assert_int_eq(dp_sim_run_bounded(s, good, 11.5, &cost, &exceeded, &err), DP_OK);
        ck_assert(exceeded);
        dp_sim_free(f);
        dp_sim_free(s);
    }
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(op_order_second_copy)
{
    /* two edges from op 0 to op 1: the second copy of the pair is not a transfer (first_copy),
     * and the op-order run sends it to a slot no op has, with time 0 (ops_edge). Its time
     * here, 100, must not reach the run: not its makespan, not a bounded run's verdict, also
     * after op 1 moved away and back (its edges' times written again) */
    dp_graph *g = hand_dag(3, (const double[]){1, 1, 1}, (const int[][3]){{0, 1, 1}, {0, 1, 100}, {1, 2, 0}}, 3);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    ck_assert(c != NULL);
    dp_sim *s = dp_sim_alloc(g, c, &err), *ev = dp_sim_alloc(g, c, &err);
    ck_assert(s && ev && dp_sim_op_order_on(s));
    dp_sim_set_op_order(ev, 0);
    int a[3] = {0, 1, 1};
    dp_sim_result r, re;
    for (int round = 0; round < 3; round++) {
        if (round == 1) a[1] = 0; /* op 1 beside op 0: no transfer at all */
        if (round == 2) a[1] = 1;
        const long runs = dp_sim_op_order_runs(s);
        ck_assert_int_eq(dp_sim_run(s, a, &r, &err), DP_OK);
        ck_assert_int_eq(dp_sim_op_order_runs(s), runs + 1);
        ck_assert_int_eq(dp_sim_run(ev, a, &re, &err), DP_OK);
        ck_assert_msg(r.makespan == re.makespan, "round %d: %g against the event loop's %g", round, r.makespan,
                      re.makespan);
        ck_assert(r.makespan == (a[1] == 0 ? 3 : 4)); /* 1 + (1 transfer) + 1 + 1 */
        double cost;
        int exceeded;
        ck_assert_int_eq(dp_sim_run_bounded(s, a, r.makespan + 0.5, &cost, &exceeded, &err), DP_OK);
        ck_assert_msg(!exceeded && cost == r.makespan, "round %d: exceeded %d, cost %g", round, exceeded, cost);
        ck_assert_int_eq(dp_sim_run_bounded(s, a, r.makespan - 0.5, &cost, &exceeded, &err), DP_OK);
        ck_assert(exceeded && cost > r.makespan - 0.5);
    }
    dp_sim_free(ev);
    dp_sim_free(s);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(run_refuses_bad_device)
{
    /* dp_sim_run's device check (one pass, then the first op out of range named): -1 and D are
     * refused in a full run, -1 is an absent op in a prefix run, D is refused there too */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    dp_graph *g = tie_dag(r, 40, 0.1);
    dp_cost *c = tie_costs(r, g, 3);
    dp_error err;
    dp_sim *s = dp_sim_alloc(g, c, &err);
    ck_assert(s != NULL);
    int a[40];
    dp_sim_result res;
    for (int v = 0; v < 40; v++) a[v] = v % 3;
    ck_assert_int_eq(dp_sim_run(s, a, &res, &err), DP_OK);
    a[17] = 3;
    a[29] = -2;
    ck_assert_int_eq(dp_sim_run(s, a, &res, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 17 ") && strstr(err.msg, "device 3, outside 0..2"), "%s", err.msg);
    ck_assert_int_eq(dp_sim_run_prefix(s, a, &res, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 17 "), "%s", err.msg);
    a[17] = 0;
    ck_assert_int_eq(dp_sim_run(s, a, &res, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 29 ") && strstr(err.msg, "device -2"), "%s", err.msg);
    a[29] = 2;
    a[39] = -1; /* no op depends on the last one: a valid prefix */
    ck_assert_int_eq(dp_sim_run(s, a, &res, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 39 "), "%s", err.msg);
    ck_assert_int_eq(dp_sim_run_prefix(s, a, &res, &err), DP_OK);
    ck_assert(res.op_start[39] == -1);
    dp_sim_free(s);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

START_TEST(delta_refusals)
{
    /* refused: a run before the state is set, a device out of range (naming the op), a commit
     * after another run; the state is unchanged by them */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    dp_graph *g = tie_dag(r, 20, 0.2);
    dp_cost *c = tie_costs(r, g, 3);
    dp_error err;
    dp_sim *s = dp_sim_alloc(g, c, &err);
    dp_sim_prefix *p = dp_sim_prefix_alloc(20, 3);
    int a[20];
    for (int v = 0; v < 20; v++) a[v] = v % 3;
    double cost;
    int ex;
    ck_assert_int_eq(dp_sim_run_delta(s, p, a, INFINITY, &cost, &ex, &err), DP_EINVAL);
    ck_assert_int_eq(dp_sim_prefix_set(s, p, a, NULL, &err), DP_OK);
    const double ms = p->makespan;
    a[7] = 3;
    ck_assert_int_eq(dp_sim_run_delta(s, p, a, INFINITY, &cost, &ex, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "op 7"));
    a[7] = (7 + 1) % 3;
    ck_assert_int_eq(dp_sim_run_delta(s, p, a, INFINITY, &cost, &ex, &err), DP_OK);
    dp_sim_result x;
    ck_assert_int_eq(dp_sim_run(s, a, &x, &err), DP_OK);
    ck_assert_int_eq(dp_sim_delta_commit(s, p, a, &err), DP_EINVAL);
    ck_assert(p->makespan == ms);
    /* the engine: a delta run before the set, an accept of a run stopped by its bound */
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    dp_engine_incumbent *inc = dp_engine_incumbent_alloc(e, &err);
    ck_assert_int_eq(dp_engine_run_delta(inc, a, INFINITY, &cost, &ex, &err), DP_EINVAL);
    ck_assert_int_eq(dp_engine_incumbent_set(inc, a, &cost, &err), DP_OK);
    ck_assert(cost == x.makespan);
    a[0] = (a[0] + 1) % 3;
    ck_assert_int_eq(dp_engine_run_delta(inc, a, 0, &cost, &ex, &err), DP_OK);
    ck_assert_int_eq(ex, 1);
    ck_assert_int_eq(dp_engine_incumbent_accept(inc, a, &err), DP_EINVAL);
    dp_engine_incumbent_free(inc);
    dp_engine_free(e);
    dp_sim_prefix_free(p);
    dp_sim_free(s);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

START_TEST(bounded_repeated_edge)
{
    /* u(1) -> v(1) twice, data 1 then 10, on two devices (transfer time = data): v waits for the
     * first copy only, u [0, 1], v [2, 3], makespan 3; the second copy lands at 11. A bounded run
     * at bound 3 is within it: it stopped at 11 > 3 ("exceeded", a cost past the makespan) while
     * the later copy was an event */
    dp_graph_builder *b = dp_graph_builder_alloc("rep", "rep", DP_GRAPH_COST_TIME);
    dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    dp_graph_builder_add_edge(b, 0, 1, 1);
    dp_graph_builder_add_edge(b, 0, 1, 10);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_cost *c = dp_cost_alloc(g, 2);
    for (int i = 0; i < 4; i++) c->op_time[i] = 1;
    memcpy(c->edge_data, g->edge_size, (size_t)g->n_edges * sizeof(double));
    c->inv_bw[1] = c->inv_bw[2] = 1;
    dp_cost_update_homogeneous(c);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    const int a[2] = {0, 1};
    dp_sim_result x;
    ck_assert_int_eq(dp_sim_run(s, a, &x, &err), DP_OK);
    /* one transfer of the first copy's data: the repeat moves nothing that any op waits for, and
     * the general engine counts it so (this engine counted 2 of volume 11: a review) */
    ck_assert(x.makespan == 3 && x.n_transfers == 1 && x.transfer_volume == 1);
    double cost;
    int ex;
    ck_assert_int_eq(dp_sim_run_bounded(s, a, 3, &cost, &ex, &err), DP_OK);
    ck_assert_int_eq(ex, 0);
    ck_assert(cost == 3);
    ck_assert_int_eq(dp_sim_run_bounded(s, a, 2.5, &cost, &ex, &err), DP_OK);
    ck_assert(ex == 1 && cost == 3);
    dp_sim_free(s);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

static dp_graph *small_llama(void)
{
    dp_gen_llama_opts o;
    dp_gen_llama_defaults(&o, 0);
    o.seq = 256;
    o.hidden = 512;
    o.heads = 8;
    o.ffn = 1024;
    o.vocab = 1000;
    o.tp = 2;
    o.hidden_blocks = 2;
    dp_error err;
    dp_graph *g = dp_gen_llama(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

/* the default machine (the fast path, resumed runs) and the general engine's options (runs
 * resumed from snapshots, dp_hisim.h; full bounded runs with priority queues, 5, and in
 * bulk-synchronous mode, 6) */
static const char *const machines[][12] = {
    {NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "fixed", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "fifo", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", NULL},
    {"topology", "dgx1-v100", "transfer", "fifo", "chunks", "4", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", "streams", "2", "queue", "priority", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", "mode", "bsp", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", "memory_limit", "3e7", "memory_policy", "penalty", NULL},
};
#define N_MACHINES ((int)(sizeof machines / sizeof machines[0]))

START_TEST(engine_delta_default)
{
    /* the default choice of delta runs (dp_engine_set_delta -1, DP_ENGINE_DELTA_MIN_OPS): where
     * the exact engine runs op by op, bounded full runs below the threshold and op-order delta
     * runs from it; with an op of time 0 (the event loop), delta runs at every size. The costs
     * are the full runs' either way */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4004);
    const int sizes[3] = {60, DP_ENGINE_DELTA_MIN_OPS + 10, 60};
    for (int k = 0; k < 3; k++) {
        const int n = sizes[k], D = 3;
        dp_graph *g = tie_dag(r, n, 4.0 / n);
        dp_cost *c = tie_costs_positive(r, g, D);
        if (k == 2) c->op_time[0] = 0; /* no op-order run */
        dp_error err;
        dp_engine *e = dp_engine_alloc(g, c, NULL, &err), *ref = dp_engine_alloc(g, c, NULL, &err);
        ck_assert_msg(e && ref, "%s", err.msg);
        dp_engine_incumbent *inc = dp_engine_incumbent_alloc(e, &err);
        int *cur = malloc((size_t)n * sizeof *cur), ops[4], old[4];
        for (int v = 0; v < n; v++) cur[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        double cur_cost;
        ck_assert_int_eq(dp_engine_incumbent_set(inc, cur, &cur_cost, &err), DP_OK);
        for (int m = 0; m < 50; m++) {
            const int nm = random_move(r, n, D, cur, ops, old);
            double cd, cf;
            int exd, exf;
            ck_assert_int_eq(dp_engine_run_delta(inc, cur, cur_cost * 1.01, &cd, &exd, &err), DP_OK);
            ck_assert_int_eq(dp_engine_run_bounded(ref, cur, cur_cost * 1.01, &cf, &exf, &err), DP_OK);
            ck_assert(cd == cf && exd == exf);
            if (!exd) {
                ck_assert_int_eq(dp_engine_incumbent_accept(inc, cur, &err), DP_OK);
                cur_cost = cd;
            } else {
                undo_move(cur, ops, old, nm);
            }
        }
        long resumed, full;
        dp_engine_delta_stats(e, &resumed, &full, NULL);
        if (k == 0) ck_assert_int_eq(resumed + full, 0);
        else ck_assert_int_gt(resumed, 10);
        free(cur);
        dp_engine_incumbent_free(inc);
        dp_engine_free(e);
        dp_engine_free(ref);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(incumbent_rejected_candidate_and_wrong_commit)
{
    /* A review: (1) without delta runs, a candidate run in full (bound INFINITY) and not accepted
     * left its schedule as the incumbent's (makespan and times), with DP_OK; (2) a commit given
     * another assignment than the delta run's made p that assignment with the run's schedule,
     * and every later delta cost was wrong */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5151);
    const int n = 40, D = 3;
    dp_graph *g = tie_dag(r, n, 0.1);
    dp_cost *c = tie_costs_positive(r, g, D);
    dp_error err;
    int a1[40], a2[40], a3[40];
    for (int v = 0; v < n; v++) a1[v] = a2[v] = a3[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
    a2[5] = (a1[5] + 1) % D;
    a3[5] = (a1[5] + 2) % D;
    a3[17] = (a1[17] + 1) % D;
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err), *ref = dp_engine_alloc(g, c, NULL, &err);
    ck_assert_msg(e && ref, "%s", err.msg);
    dp_engine_schedule s1, s;
    ck_assert_int_eq(dp_engine_run(ref, a1, NULL, &s1, &err), DP_OK);
    const double m1 = s1.makespan;
    for (int delta = 0; delta < 2; delta++) {
        dp_engine_set_delta(e, delta);
        dp_engine_incumbent *inc = dp_engine_incumbent_alloc(e, &err);
        double cost;
        int ex;
        ck_assert_int_eq(dp_engine_incumbent_set(inc, a1, &cost, &err), DP_OK);
        ck_assert(cost == m1);
        ck_assert_int_eq(dp_engine_run_delta(inc, a2, INFINITY, &cost, &ex, &err), DP_OK);
        /* not accepted: the incumbent's schedule, or (no delta runs: e's arrays hold the
         * candidate's) an error, never the candidate's */
        const int rc = dp_engine_incumbent_schedule(inc, &s, &err);
        if (delta) ck_assert(rc == DP_OK && s.makespan == m1);
        else ck_assert_int_eq(rc, DP_EINVAL);
        /* accepted: the candidate's */
        ck_assert_int_eq(dp_engine_run_delta(inc, a2, INFINITY, &cost, &ex, &err), DP_OK);
        if (delta) {
            /* another assignment is refused, the incumbent as it was */
            ck_assert_int_eq(dp_engine_incumbent_accept(inc, a3, &err), DP_EINVAL);
            ck_assert_ptr_nonnull(strstr(err.msg, "not the last delta run's"));
        }
        ck_assert_int_eq(dp_engine_incumbent_accept(inc, a2, &err), DP_OK);
        ck_assert_int_eq(dp_engine_incumbent_schedule(inc, &s, &err), DP_OK);
        ck_assert(s.makespan == cost);
        /* the next delta cost is the full run's */
        double c3, f3;
        ck_assert_int_eq(dp_engine_run_delta(inc, a3, INFINITY, &c3, &ex, &err), DP_OK);
        ck_assert_int_eq(dp_engine_run_bounded(ref, a3, INFINITY, &f3, &ex, &err), DP_OK);
        ck_assert(c3 == f3);
        dp_engine_incumbent_free(inc);
    }
    dp_engine_free(e);
    dp_engine_free(ref);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

START_TEST(engine_delta_every_machine)
{
    /* dp_engine_run_delta against dp_engine_run_bounded on a second engine, random moves with
     * accepts, on machine _i */
    dp_machine m;
    dp_test_machine_make(&m, machines[_i]);
    dp_graph *g = small_llama();
    dp_error err;
    dp_cost *c = dp_machine_costs(&m, g, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    dp_engine *e = dp_engine_alloc(g, c, &m, &err), *ref = dp_engine_alloc(g, c, &m, &err);
    ck_assert_msg(e && ref, "%s", err.msg);
    ck_assert_int_eq(dp_engine_is_general(e), _i > 0);
    const int snaps = _i > 0 && _i != 5 && _i != 6; /* the general engine's delta runs */
    const int n = g->n_ops, D = c->n_devices;
    /* a graph this small runs bounded full runs by default (DP_ENGINE_DELTA_MIN_OPS): delta runs
     * on, to test them */
    ck_assert_int_lt(n, DP_ENGINE_DELTA_MIN_OPS);
    dp_engine_set_delta(e, 1);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 300 + (unsigned long)_i);
    int *cur = malloc((size_t)n * sizeof *cur), ops[4], old[4];
    for (int v = 0; v < n; v++) cur[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
    dp_engine_incumbent *inc = dp_engine_incumbent_alloc(e, &err);
    double cur_cost, cf;
    ck_assert_int_eq(dp_engine_incumbent_set(inc, cur, &cur_cost, &err), DP_OK);
    dp_engine_schedule sch;
    ck_assert_int_eq(dp_engine_run(ref, cur, NULL, &sch, &err), DP_OK);
    ck_assert(cur_cost == sch.cost);
    const int n_moves = _i == 0 ? 400 : 40;
    for (int k = 0; k < n_moves; k++) {
        const int nm = random_move(r, n, D, cur, ops, old);
        const double bound = gsl_rng_uniform(r) < 0.3 ? INFINITY : cur_cost * (0.9 + 0.2 * gsl_rng_uniform(r));
        double cd;
        int exd, exf;
        ck_assert_int_eq(dp_engine_run_delta(inc, cur, bound, &cd, &exd, &err), DP_OK);
        ck_assert_int_eq(dp_engine_run_bounded(ref, cur, bound, &cf, &exf, &err), DP_OK);
        double full;
        ck_assert_int_eq(dp_engine_run_bounded(ref, cur, INFINITY, &full, NULL, &err), DP_OK);
        ck_assert_msg(bounded_agree(cd, exd, cf, exf, bound, full), "machine %d move %d: delta %.17g (%d), full %.17g (%d)",
                      _i, k, cd, exd, cf, exf);
        if (!exd && cd <= cur_cost * 1.02) {
            ck_assert_int_eq(dp_engine_incumbent_accept(inc, cur, &err), DP_OK);
            cur_cost = cd;
            /* the incumbent's schedule is the full run's, compute times included (the general
             * engine without delta runs keeps it from full runs only) */
            dp_engine_schedule is;
            if (_i > 0 && !snaps && bound < INFINITY) {
                ck_assert_int_eq(dp_engine_incumbent_schedule(inc, &is, &err), DP_EINVAL);
                continue;
            }
            ck_assert_int_eq(dp_engine_incumbent_schedule(inc, &is, &err), DP_OK);
            ck_assert_int_eq(dp_engine_run(ref, cur, NULL, &sch, &err), DP_OK);
            ck_assert(is.makespan == sch.makespan && is.cost == sch.cost);
            for (int d = 0; d < D; d++) ck_assert_msg(is.busy[d] == sch.busy[d], "machine %d move %d device %d", _i, k, d);
            for (int v = 0; v < n; v++)
                ck_assert(is.op_start[v] == sch.op_start[v] && is.op_end[v] == sch.op_end[v] &&
                          is.op_ready[v] == sch.op_ready[v]);
        } else {
            undo_move(cur, ops, old, nm);
        }
    }
    long resumed;
    dp_engine_delta_stats(e, &resumed, NULL, NULL);
    if (_i == 0 || snaps) ck_assert_int_gt(resumed, n_moves / 4);
    else ck_assert_int_eq(resumed, 0);
    /* by default (the graph's size), no delta run on the exact engine: the same costs from
     * bounded full runs */
    dp_engine_set_delta(e, -1);
    ck_assert_int_eq(dp_engine_incumbent_set(inc, cur, &cur_cost, &err), DP_OK);
    for (int k = 0; k < 20; k++) {
        const int nm = random_move(r, n, D, cur, ops, old);
        double cd;
        int exd, exf;
        ck_assert_int_eq(dp_engine_run_delta(inc, cur, cur_cost, &cd, &exd, &err), DP_OK);
        ck_assert_int_eq(dp_engine_run_bounded(ref, cur, cur_cost, &cf, &exf, &err), DP_OK);
        double full;
        ck_assert_int_eq(dp_engine_run_bounded(ref, cur, INFINITY, &full, NULL, &err), DP_OK);
        ck_assert(bounded_agree(cd, exd, cf, exf, cur_cost, full));
        undo_move(cur, ops, old, nm);
    }
    long resumed_after;
    dp_engine_delta_stats(e, &resumed_after, NULL, NULL);
    /* (the general engine's delta runs are on at every size by default) */
    if (snaps) ck_assert_int_gt(resumed_after, resumed);
    else ck_assert_int_eq(resumed_after, resumed);
    free(cur);
    dp_engine_incumbent_free(inc);
    dp_engine_free(e);
    dp_engine_free(ref);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
    dp_machine_free(&m);
}
END_TEST

START_TEST(run_bounded_changed_hint)
{
    /* dp_sim_run_bounded_changed (issue 31: a search's move named, no scan of the assignment)
     * against dp_sim_run_bounded on a twin workspace given the same runs (rejected runs' costs
     * too, bit for bit: they come from sums kept over the runs): random moves with accepts and undos, the
     * last move's and this one's ops listed (twice where they repeat, unchanged ones too); a list
     * read after another run (a stale generation) is not used, nor one after a run with the
     * op-order run off, which does not sync the tables; bad lists are refused */
    dp_machine m;
    dp_test_machine_make(&m, machines[0]);
    dp_graph *g = small_llama();
    dp_error err;
    dp_cost *c = dp_machine_costs(&m, g, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    dp_sim *s = dp_sim_alloc(g, c, &err), *ref = dp_sim_alloc(g, c, &err);
    ck_assert_msg(s && ref, "%s", err.msg);
    ck_assert(dp_sim_op_order_on(s));
    const int n = g->n_ops, D = c->n_devices;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77);
    int *cur = malloc((size_t)n * sizeof *cur), *other = malloc((size_t)n * sizeof *other);
    int ops[4], old[4], last[4], n_last = 0, used = 0;
    for (int v = 0; v < n; v++) cur[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
    double cost, want;
    int ex, exw;
    ck_assert_int_eq(dp_sim_run_bounded(s, cur, INFINITY, &cost, &ex, &err), DP_OK);
    long gen = dp_sim_tables_gen(s);
    ck_assert_int_ge(gen, 0);
    for (int k = 0; k < 3000; k++) {
        const int nm = random_move(r, n, D, cur, ops, old);
        int list[8], kl = 0;
        for (int i = 0; i < n_last; i++) list[kl++] = last[i];
        for (int i = 0; i < nm; i++) list[kl++] = ops[i];
        const double bound = gsl_rng_uniform(r) < 0.2 ? INFINITY : cost * (0.95 + 0.1 * gsl_rng_uniform(r));
        double cd;
        int exd;
        const int stale = k % 97 == 50, off = k % 97 == 80;
        if (stale || off) {
            /* another assignment run in between (with the op-order run off: no sync, so the
             * tables keep the assignment before it) */
            for (int v = 0; v < n; v++) other[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
            if (off) dp_sim_set_op_order(s, 0);
            if (off) dp_sim_set_op_order(ref, 0);
            ck_assert_int_eq(dp_sim_run_bounded(s, other, INFINITY, &cd, &exd, &err), DP_OK);
            ck_assert_int_eq(dp_sim_run_bounded(ref, other, INFINITY, &cd, &exd, &err), DP_OK);
            if (off) dp_sim_set_op_order(ref, 1);
            if (off) {
                ck_assert_int_eq(dp_sim_tables_gen(s), -1);
                dp_sim_set_op_order(s, 1);
            } else {
                ck_assert_int_ne(dp_sim_tables_gen(s), gen);
            }
        }
        ck_assert_int_eq(dp_sim_run_bounded_changed(s, cur, gen, list, kl, bound, &cd, &exd, &err), DP_OK);
        ck_assert_int_eq(dp_sim_run_bounded(ref, cur, bound, &want, &exw, &err), DP_OK);
        ck_assert_msg(exd == exw && cd == want, "move %d (stale %d, off %d): %.17g (%d) against %.17g (%d)", k,
                      stale, off, cd, exd, want, exw);
        if (!stale && !off) used++;
        gen = dp_sim_tables_gen(s);
        ck_assert_int_ge(gen, 0);
        if (!exd && gsl_rng_uniform(r) < 0.5) {
            cost = cd;
            n_last = 0;
        } else {
            undo_move(cur, ops, old, nm);
            for (int i = 0; i < nm; i++) last[i] = ops[i];
            n_last = nm;
        }
    }
    ck_assert_int_gt(used, 2500);
    /* refused: a negative count, an op out of range, a count with no list */
    const int bad[2] = {0, n};
    ck_assert_int_eq(dp_sim_run_bounded_changed(s, cur, gen, bad, -1, INFINITY, &cost, &ex, &err), DP_EINVAL);
    ck_assert_int_eq(dp_sim_run_bounded_changed(s, cur, gen, bad, 2, INFINITY, &cost, &ex, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "not an op"));
    ck_assert_int_eq(dp_sim_run_bounded_changed(s, cur, gen, NULL, 1, INFINITY, &cost, &ex, &err), DP_EINVAL);
    free(cur);
    free(other);
    dp_sim_free(s);
    dp_sim_free(ref);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
    dp_machine_free(&m);
}
END_TEST

START_TEST(changed_list_same_rounding)
{
    /* A review: a list in another order than op order updated the devices' work sums in that
     * order, and an early-rejected run's cost (a lower bound from them) differed in its last bits
     * from a twin workspace given the same calls without the list (5.2999999946903129 against
     * 5.299999994690312); now the same bits */
    dp_error err;
    dp_graph_builder *b = dp_graph_builder_alloc("r", "r", DP_GRAPH_COST_TIME);
    for (int i = 0; i < 5; i++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    dp_graph_builder_add_edge(b, 2, 3, 0);
    dp_graph_builder_add_edge(b, 0, 1, 0);
    dp_graph *g = dp_graph_builder_finish(b, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_builder_free(b);
    const int D = 2;
    dp_cost *c = dp_cost_alloc(g, D);
    const double t[5] = {2, 2, 2, 3e-16, 1.3};
    for (int v = 0; v < 5; v++)
        for (int d = 0; d < D; d++) c->op_time[v * D + d] = t[v];
    dp_cost_update_homogeneous(c);
    dp_sim *s = dp_sim_alloc(g, c, &err), *twin = dp_sim_alloc(g, c, &err);
    ck_assert_msg(s && twin, "%s", err.msg);
    int a[5] = {1, 0, 1, 1, 0};
    double cs, ct;
    int es, et;
    ck_assert_int_eq(dp_sim_run_bounded(s, a, INFINITY, &cs, &es, &err), DP_OK);
    ck_assert_int_eq(dp_sim_run_bounded(twin, a, INFINITY, &ct, &et, &err), DP_OK);
    const long gen = dp_sim_tables_gen(s);
    a[3] = 0;
    a[0] = 0;
    const int changed[2] = {3, 0};
    ck_assert_int_eq(dp_sim_run_bounded_changed(s, a, gen, changed, 2, 2.7, &cs, &es, &err), DP_OK);
    ck_assert_int_eq(dp_sim_run_bounded(twin, a, 2.7, &ct, &et, &err), DP_OK);
    ck_assert_int_eq(es, 1);
    ck_assert_int_eq(et, 1);
    ck_assert_msg(cs == ct, "rejected cost %.17g with the list, %.17g without", cs, ct);
    dp_sim_free(s);
    dp_sim_free(twin);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(accept_other_than_last_run)
{
    /* A review: without delta runs, accepting an earlier candidate after a later one's run left
     * the tables holding the later one while the next named move trusted them to hold the
     * incumbent (50 where the cost is 20); now refused, as with delta runs */
    dp_error err;
    dp_graph_builder *b = dp_graph_builder_alloc("r", "r", DP_GRAPH_COST_TIME);
    for (int i = 0; i < 3; i++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    dp_graph *g = dp_graph_builder_finish(b, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_builder_free(b);
    dp_cost *c = dp_cost_alloc(g, 2);
    const double t[3] = {1, 5, 1};
    for (int i = 0; i < 6; i++) c->op_time[i] = t[i / 2] * (i % 2 ? 10 : 1);
    dp_cost_update_homogeneous(c);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err), *ref = dp_engine_alloc(g, c, NULL, &err);
    ck_assert_msg(e && ref, "%s", err.msg);
    dp_engine_incumbent *inc = dp_engine_incumbent_alloc(e, &err);
    int A[3] = {0, 0, 0}, B[3] = {1, 0, 0}, C[3] = {0, 1, 0}, X[3] = {1, 0, 1};
    double cost, want;
    int ex, wex;
    ck_assert_int_eq(dp_engine_incumbent_set(inc, A, &cost, &err), DP_OK);
    const int mb = 0, mc = 1, mx = 2;
    ck_assert_int_eq(dp_engine_run_delta_moved(inc, B, &mb, 1, 100, &cost, &ex, &err), DP_OK);
    ck_assert_int_eq(dp_engine_run_delta_moved(inc, C, &mc, 1, 100, &cost, &ex, &err), DP_OK);
    ck_assert_int_eq(dp_engine_incumbent_accept(inc, B, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "not the last delta run's"));
    /* the incumbent is still A: X moves ops 0 and 2 from it */
    const int mx2[2] = {0, mx};
    ck_assert_int_eq(dp_engine_run_delta_moved(inc, X, mx2, 2, 100, &cost, &ex, &err), DP_OK);
    ck_assert_int_eq(dp_engine_run_bounded(ref, X, 100, &want, &wex, &err), DP_OK);
    ck_assert_msg(cost == want && ex == wex, "%g against %g", cost, want);
    ck_assert_int_eq(dp_engine_incumbent_accept(inc, X, &err), DP_OK);
    dp_engine_incumbent_free(inc);
    dp_engine_free(e);
    dp_engine_free(ref);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(engine_delta_moved)
{
    /* dp_engine_run_delta_moved (the searches' call) against dp_engine_run_bounded on a second
     * engine, on the exact engine without delta runs (where it names the moves to the tables)
     * and with them, and on a general engine: random moves with accepts; every few moves a run
     * of another assignment on the same engine (the next move's tables are then compared in
     * full), a full run of the candidate (bound INFINITY) and a candidate of dp_engine_run_delta
     * (no list) */
    for (int mi = 0; mi < 3; mi++) {
        dp_machine m;
        dp_test_machine_make(&m, machines[mi == 2 ? 2 : 0]);
        dp_graph *g = small_llama();
        dp_error err;
        dp_cost *c = dp_machine_costs(&m, g, &err);
        ck_assert_msg(c != NULL, "%s", err.msg);
        dp_engine *e = dp_engine_alloc(g, c, &m, &err), *ref = dp_engine_alloc(g, c, &m, &err);
        ck_assert_msg(e && ref, "%s", err.msg);
        if (mi == 1) dp_engine_set_delta(e, 1);
        const int n = g->n_ops, D = c->n_devices;
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(r, 500 + (unsigned long)mi);
        int *cur = malloc((size_t)n * sizeof *cur), *other = malloc((size_t)n * sizeof *other), ops[4], old[4];
        for (int v = 0; v < n; v++) cur[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        dp_engine_incumbent *inc = dp_engine_incumbent_alloc(e, &err);
        double cur_cost;
        ck_assert_int_eq(dp_engine_incumbent_set(inc, cur, &cur_cost, &err), DP_OK);
        const int n_moves = mi == 2 ? 60 : 1500;
        for (int k = 0; k < n_moves; k++) {
            const int nm = random_move(r, n, D, cur, ops, old);
            const double bound = k % 13 == 5 ? INFINITY : cur_cost * (0.97 + 0.06 * gsl_rng_uniform(r));
            if (k % 29 == 11) {
                for (int v = 0; v < n; v++) other[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
                double co;
                ck_assert_int_eq(dp_engine_run_bounded(e, other, INFINITY, &co, NULL, &err), DP_OK);
            }
            double cd, cf;
            int exd, exf;
            if (k % 31 == 7) ck_assert_int_eq(dp_engine_run_delta(inc, cur, bound, &cd, &exd, &err), DP_OK);
            else ck_assert_int_eq(dp_engine_run_delta_moved(inc, cur, ops, nm, bound, &cd, &exd, &err), DP_OK);
            ck_assert_int_eq(dp_engine_run_bounded(ref, cur, bound, &cf, &exf, &err), DP_OK);
            double full;
            ck_assert_int_eq(dp_engine_run_bounded(ref, cur, INFINITY, &full, NULL, &err), DP_OK);
            ck_assert_msg(bounded_agree(cd, exd, cf, exf, bound, full), "engine %d move %d: %.17g (%d), full %.17g (%d)", mi,
                          k, cd, exd, cf, exf);
            if (!exd && cd <= cur_cost * 1.01) {
                ck_assert_int_eq(dp_engine_incumbent_accept(inc, cur, &err), DP_OK);
                cur_cost = cd;
            } else {
                undo_move(cur, ops, old, nm);
            }
        }
        const int bad = n;
        double cd;
        ck_assert_int_eq(dp_engine_run_delta_moved(inc, cur, &bad, 1, INFINITY, &cd, NULL, &err), DP_EINVAL);
        ck_assert_int_eq(dp_engine_run_delta_moved(inc, cur, NULL, 1, INFINITY, &cd, NULL, &err), DP_EINVAL);
        free(cur);
        free(other);
        dp_engine_incumbent_free(inc);
        dp_engine_free(e);
        dp_engine_free(ref);
        dp_cost_free(c);
        dp_graph_free(g);
        gsl_rng_free(r);
        dp_machine_free(&m);
    }
}
END_TEST

START_TEST(improve_same_with_delta_off)
{
    /* the improvement search (a random policy, annealing and greedy, with uniform moves mixed
     * in) decides the same with delta runs on and off */
    dp_graph *g = small_llama();
    dp_error err;
    dp_machine m;
    dp_test_machine_make(&m, NULL);
    dp_cost *c = dp_machine_costs(&m, g, &err);
    dp_machine_free(&m);
    ck_assert_msg(c != NULL, "%s", err.msg);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    const dp_oracle o = dp_engine_oracle(e);
    dp_improve_config icfg;
    dp_improve_config_default(&icfg);
    icfg.arch.hidden = 8;
    dp_improve_model *model = dp_improve_model_alloc(&icfg.arch, &err);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    ck_assert_int_eq(dp_improve_model_init(model, r), DP_OK);
    const int n = g->n_ops;
    for (int greedy = 0; greedy <= 1; greedy++) {
        dp_improve_search_config cfg;
        dp_improve_search_config_init(&cfg);
        cfg.greedy = greedy;
        cfg.mix = 0.5;
        cfg.restarts = 2;
        cfg.anneal.budget = 300;
        int *a[2];
        dp_search_result res[2];
        for (int on = 0; on < 2; on++) {
            dp_engine_set_delta(e, on);
            a[on] = malloc((size_t)n * sizeof(int));
            ck_assert_int_eq(dp_improve_search(model, g, c, &o, &cfg, 9, a[on], &res[on], &err), DP_OK);
        }
        ck_assert_msg(res[0].best == res[1].best && res[0].accepted == res[1].accepted && res[0].sims == res[1].sims,
                      "greedy %d: off %.17g %ld, on %.17g %ld", greedy, res[0].best, res[0].accepted, res[1].best,
                      res[1].accepted);
        ck_assert(memcmp(a[0], a[1], (size_t)n * sizeof(int)) == 0);
        for (int on = 0; on < 2; on++) {
            free(a[on]);
            dp_search_trace_clear(&res[on].trace);
        }
    }
    long resumed;
    dp_engine_delta_stats(e, &resumed, NULL, NULL);
    ck_assert_int_gt(resumed, 0);
    gsl_rng_free(r);
    dp_improve_model_free(model);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(searches_same_with_delta_off)
{
    /* annealing and local search (and a swap-heavy annealing) decide the same with delta runs
     * on and off: the same placement, best, accepted moves and simulations */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77);
    for (int gi = 0; gi < 9; gi++) {
        dp_graph *g = gi == 8 ? small_llama() : tie_dag(r, 10 + (int)gsl_rng_uniform_int(r, 60), 0.15);
        dp_error err;
        const int D = 1 + gi % 6;
        dp_machine m;
        dp_test_machine_make(&m, NULL);
        dp_cost *c = gi == 8 ? dp_machine_costs(&m, g, &err) : tie_costs(r, g, D);
        dp_machine_free(&m);
        ck_assert_msg(c != NULL, "%s", err.msg);
        const int n = g->n_ops;
        dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
        ck_assert_msg(e != NULL, "%s", err.msg);
        const dp_oracle o = dp_engine_oracle(e);
        for (int mode = 0; mode < 3; mode++) {
            dp_search_anneal_config cfg;
            dp_search_anneal_config_init(&cfg);
            cfg.budget = 1500;
            if (mode == 2) cfg.swap_prob = 0.8;
            int *a[2];
            dp_search_result res[2];
            for (int on = 0; on < 2; on++) {
                dp_engine_set_delta(e, on);
                a[on] = malloc((size_t)n * sizeof(int));
                const int rc = mode == 1 ? dp_search_local(g, c, &o, &cfg, 11 + (uint64_t)gi, a[on], &res[on], &err)
                                         : dp_search_anneal(g, c, &o, &cfg, 11 + (uint64_t)gi, a[on], &res[on], &err);
                ck_assert_msg(rc == DP_OK, "%s", err.msg);
            }
            ck_assert_msg(res[0].best == res[1].best && res[0].accepted == res[1].accepted && res[0].sims == res[1].sims,
                          "graph %d mode %d: off best %.17g accepted %ld sims %ld, on %.17g %ld %ld", gi, mode, res[0].best,
                          res[0].accepted, res[0].sims, res[1].best, res[1].accepted, res[1].sims);
            ck_assert_int_eq(res[0].trace.n, res[1].trace.n);
            ck_assert(memcmp(a[0], a[1], (size_t)n * sizeof(int)) == 0);
            for (int on = 0; on < 2; on++) {
                free(a[on]);
                dp_search_trace_clear(&res[on].trace);
            }
        }
        long resumed;
        dp_engine_delta_stats(e, &resumed, NULL, NULL);
        if (D > 1) ck_assert_int_gt(resumed, 0);
        dp_engine_free(e);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(early_reject_every_machine)
{
    /* early rejection (dp_engine_set_early_reject) on every machine option of machines[]: bounded
     * runs with it on and off give the same verdict and, within the bound, the same cost; above
     * it, costs above the bound and at most the full run's. Annealing and local search then
     * decide the same with it on and off: the same placement, best, accepted moves and
     * simulations. Counts the runs it stopped before the clock passed the bound (on costs below
     * the off ones), so the test is not vacuous. */
    dp_machine m;
    dp_test_machine_make(&m, machines[_i]);
    dp_graph *g = small_llama();
    dp_error err;
    dp_cost *c = dp_machine_costs(&m, g, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    dp_engine *on = dp_engine_alloc(g, c, &m, &err), *off = dp_engine_alloc(g, c, &m, &err);
    ck_assert_msg(on && off, "%s", err.msg);
    dp_engine_set_early_reject(off, 0);
    const int n = g->n_ops, D = c->n_devices;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 500 + (unsigned long)_i);
    int *a = malloc((size_t)n * sizeof *a);
    long earlier = 0;
    for (int k = 0; k < 300; k++) {
        for (int v = 0; v < n; v++) a[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        double full, c1, c0;
        int e1, e0;
        ck_assert_int_eq(dp_engine_run_bounded(off, a, INFINITY, &full, NULL, &err), DP_OK);
        const double bound = full * (0.5 + 0.6 * gsl_rng_uniform(r));
        ck_assert_int_eq(dp_engine_run_bounded(on, a, bound, &c1, &e1, &err), DP_OK);
        ck_assert_int_eq(dp_engine_run_bounded(off, a, bound, &c0, &e0, &err), DP_OK);
        ck_assert_msg(bounded_agree(c1, e1, c0, e0, bound, full), "machine %d run %d: on %.17g (%d), off %.17g (%d), "
                      "bound %.17g, cost %.17g", _i, k, c1, e1, c0, e0, bound, full);
        ck_assert_int_eq(e1, full > bound);
        earlier += e1 && c1 < c0;
    }
    /* the machines with one stream a device stop some runs early (a machine of two streams, and
     * the error memory policy, never does) */
    int streams = 0;
    for (int k = 0; machines[_i][k]; k += 2) streams |= strcmp(machines[_i][k], "streams") == 0 && atoi(machines[_i][k + 1]) > 1;
    if (!streams) ck_assert_msg(earlier > 0, "machine %d: no run stopped early", _i);
    else ck_assert_int_eq(earlier, 0);
    const dp_oracle o1 = dp_engine_oracle(on), o0 = dp_engine_oracle(off);
    for (int mode = 0; mode < 2; mode++) {
        dp_search_anneal_config cfg;
        dp_search_anneal_config_init(&cfg);
        cfg.budget = 600;
        int *b[2];
        dp_search_result res[2];
        for (int x = 0; x < 2; x++) {
            b[x] = malloc((size_t)n * sizeof(int));
            const dp_oracle *o = x ? &o1 : &o0;
            const int rc = mode ? dp_search_local(g, c, o, &cfg, 5 + (uint64_t)_i, b[x], &res[x], &err)
                                : dp_search_anneal(g, c, o, &cfg, 5 + (uint64_t)_i, b[x], &res[x], &err);
            ck_assert_msg(rc == DP_OK, "%s", err.msg);
        }
        ck_assert_msg(res[0].best == res[1].best && res[0].accepted == res[1].accepted && res[0].sims == res[1].sims,
                      "machine %d mode %d: off best %.17g accepted %ld, on %.17g %ld", _i, mode, res[0].best,
                      res[0].accepted, res[1].best, res[1].accepted);
        ck_assert(memcmp(b[0], b[1], (size_t)n * sizeof(int)) == 0);
        for (int x = 0; x < 2; x++) {
            free(b[x]);
            dp_search_trace_clear(&res[x].trace);
        }
    }
    free(a);
    gsl_rng_free(r);
    dp_engine_free(on);
    dp_engine_free(off);
    dp_cost_free(c);
    dp_graph_free(g);
    dp_machine_free(&m);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("delta");
    TCase *t = tcase_create("delta");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, sim_delta_bit_identical);
    tcase_add_test(t, op_order_delta);
    tcase_add_test(t, op_order_delta_resumes_at_grant);
    tcase_add_test(t, converge_event_at_instant);
    tcase_add_test(t, bounded_verdict_is_cost_above_bound);
    tcase_add_test(t, delta_from_prefix_built_schedule);
    tcase_add_test(t, prefix_infinite_transfer);
    tcase_add_test(t, converge_at_infinity);
    tcase_add_test(t, early_reject_hand_computed);
    tcase_add_test(t, early_reject_wide_range);
    tcase_add_loop_test(t, op_order_infinite_events, 0, 2);
    tcase_add_test(t, delta_refusals);
    tcase_add_test(t, op_order_same_as_events);
    tcase_add_test(t, bounded_infinite_time);
    tcase_add_test(t, direct_same_as_fifo);
    tcase_add_test(t, converge_same_as_not);
    tcase_add_test(t, prefix_converge_same_as_not);
    tcase_add_test(t, prefix_converges_after_heaped_queue);
    tcase_add_test(t, run_refuses_bad_device);
    tcase_add_test(t, op_order_refuses_bad_device);
    tcase_add_test(t, op_order_second_copy);
    tcase_add_test(t, bounded_repeated_edge);
    tcase_add_loop_test(t, engine_delta_every_machine, 0, N_MACHINES);
    tcase_add_test(t, engine_delta_default);
    tcase_add_test(t, incumbent_rejected_candidate_and_wrong_commit);
    tcase_add_test(t, searches_same_with_delta_off);
    tcase_add_loop_test(t, early_reject_every_machine, 0, N_MACHINES);
    tcase_add_test(t, improve_same_with_delta_off);
    tcase_add_test(t, run_bounded_changed_hint);
    tcase_add_test(t, engine_delta_moved);
    tcase_add_test(t, changed_list_same_rounding);
    tcase_add_test(t, accept_other_than_last_run);
    suite_add_tcase(su, t);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? 0 : 1;
}
