/* test_search.c: the searches over assignments (policy/dp_search.h): the exact branch and bound
 * against hand-computed optima and brute force, annealing and local search (budgets, traces,
 * determinism, configs, starts and proposals), and search at inference through the registry. */
#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_graph.h"
#include "dp_machine.h"
#include "dp_place.h"
#include "dp_search.h"
#include "dp_sim.h"
#include "dp_test.h"
#include "dp_test_graphs.h"
#include "dp_topology.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

static const char *const ALL_METHODS[] = {"cp", "heft", "cpop", "peft", "etf", "anneal", "local",
                                          "random", "round-robin", "single"};

/* The fork-join by hand (any D >= 2): optimum 11. If x, y, z are not all on s's device, an op away
 * from s starts at >= 1 + 2 and ends at >= 7, and t waits for it until >= 10 unless t sits with it;
 * then s's device ops or another remote op feed t no earlier than 10 as well (two of x, y, z after
 * s on one device end at 9, plus transfer 3 when t is elsewhere; or both remote). So t starts at
 * >= 10 and ends at >= 11; all on one device: 14. Reached by s, x, y, t on d0 and z on d1. */
START_TEST(exact_fork_join_hand)
{
    dp_graph *g = fork_join();
    for (int D = 2; D <= 4; D++) {
        dp_error err;
        dp_cost *c = dp_cost_graph(g, D, &err);
        int a[5];
        dp_search_exact_result res;
        dp_test_sim sim = dp_test_sim_make(g, c);
        dp_place_options o;
        dp_place_options_init(&o);
        o.oracle = &sim.oracle;
        ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, NULL, a, &res, &err), DP_OK);
        ck_assert_int_eq(res.proven, 1);
        ck_assert_double_eq(res.makespan, 11);
        ck_assert_double_eq(simulate(g, c, a), 11);
        ck_assert_double_eq(brute_force(g, c), 11);
        /* no method beats it */
        for (size_t m = 0; m < sizeof ALL_METHODS / sizeof *ALL_METHODS; m++) {
            int b[5];
            ck_assert_int_eq(dp_place(ALL_METHODS[m], g, c, &o, b, NULL, NULL, &err), DP_OK);
            ck_assert_msg(simulate(g, c, b) >= 11, "%s beat the optimum", ALL_METHODS[m]);
        }
        dp_test_sim_free(&sim);
        dp_cost_free(c);
    }
    dp_graph_free(g);
}
END_TEST

/* Two chains a1 -> a2 and b1 -> b2 (each op 3) with transfers of 10, and a join j (1) fed by a2
 * and b2 with transfers 1: on two devices the chains go to different devices (no 10-transfer), one
 * chain's end ships to j: 3 + 3 + 1 + 1 = 8. On one device: 13. Any cross-device chain edge costs
 * 10 more. So the optimum is 8, with lower bound max(7, 13/2) = 7 not reached. */
START_TEST(exact_two_chains_hand)
{
    dp_graph_builder *b = dp_graph_builder_alloc("chains", "test", DP_GRAPH_COST_TIME);
    const double w[5] = {3, 3, 3, 3, 1};
    for (int v = 0; v < 5; v++) dp_graph_builder_add_op(b, NULL, NULL, w[v], 0);
    dp_graph_builder_add_edge(b, 0, 1, 10);
    dp_graph_builder_add_edge(b, 2, 3, 10);
    dp_graph_builder_add_edge(b, 1, 4, 1);
    dp_graph_builder_add_edge(b, 3, 4, 1);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    dp_cost *c = dp_cost_graph(g, 2, &err);
    int a[5];
    dp_search_exact_result res;
    dp_test_sim sim = dp_test_sim_make(g, c);
    ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, NULL, a, &res, &err), DP_OK);
    dp_test_sim_free(&sim);
    ck_assert_double_eq(res.lower_bound, 7);
    ck_assert_double_eq(res.makespan, 8);
    ck_assert_int_eq(res.proven, 1);
    ck_assert_int_ne(a[0], a[2]);
    ck_assert_int_eq(a[0], a[1]);
    ck_assert_int_eq(a[2], a[3]);
    ck_assert_double_eq(brute_force(g, c), 8);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* Devices whose cost tables are the same are not interchangeable when the machine treats them
 * differently: here gpu0 has one copy engine, gpu1 and gpu2 unlimited ones (equal op times and
 * links). exact tried only gpu0 for the first op (devices "alike" by costs), so it missed the
 * optimum (7 where 6 is reached: o0, o1 and o4 on gpu1, whose unlimited engines send o0's and
 * o1's outputs to o5 on gpu2 at once; on gpu0 they go one after the other; a review). The same
 * with a memory limit that only gpu0 would pass. */
static dp_graph *tflops_graph(int n, const double *fl, const double *ob, int ne, const int (*e)[2])
{
    dp_graph_builder *b = dp_graph_builder_alloc("ce", "test", DP_GRAPH_COST_PHYSICAL);
    for (int v = 0; v < n; v++) dp_graph_builder_add_op(b, NULL, "op", fl[v] * 1e12, ob[v] * 1e9);
    for (int i = 0; i < ne; i++) dp_graph_builder_add_edge(b, e[i][0], e[i][1], ob[e[i][0]] * 1e9);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

static double exact_on(const dp_graph *g, const char *topo_text, const char *const *keys, int *a, int *homogeneous)
{
    char path[64];
    write_tmp(".json", topo_text, path, sizeof path);
    dp_error err;
    dp_machine m;
    dp_machine_init(&m);
    ck_assert_int_eq(dp_machine_set(&m, "topology", path, &err), DP_OK);
    for (int k = 0; keys && keys[k]; k += 2) ck_assert_int_eq(dp_machine_set(&m, keys[k], keys[k + 1], &err), DP_OK);
    dp_cost *c = dp_machine_costs(&m, g, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    *homogeneous = c->homogeneous;
    dp_engine *e = dp_engine_alloc(g, c, &m, &err);
    ck_assert_msg(e != NULL, "%s", err.msg);
    const dp_oracle o = dp_engine_oracle(e);
    dp_place_options po;
    dp_place_options_init(&po);
    po.oracle = &o;
    po.machine = &m;
    ck_assert_int_eq(dp_place("exact", g, c, &po, a, NULL, NULL, &err), DP_OK);
    double ms;
    ck_assert_int_eq(dp_oracle_cost(&o, a, &ms, &err), DP_OK);
    /* the optimum: every assignment simulated */
    int x[16] = {0};
    double best = INFINITY;
    for (;;) {
        double y;
        ck_assert_int_eq(dp_oracle_cost(&o, x, &y, &err), DP_OK);
        if (y < best) best = y;
        int k = 0;
        while (k < g->n_ops && ++x[k] == c->n_devices) x[k++] = 0;
        if (k == g->n_ops) break;
    }
    ck_assert_double_eq(ms, best);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_machine_free(&m);
    unlink(path);
    return ms;
}

START_TEST(exact_devices_differing_beyond_costs)
{
    const double fl[6] = {1, 1, 2, 3, 4, 3}, ob[6] = {2, 1, 1, 3, 2, 3};
    const int e[5][2] = {{0, 1}, {0, 4}, {1, 4}, {0, 5}, {1, 5}};
    dp_graph *g = tflops_graph(6, fl, ob, 5, e);
    char topo[4096];
    const char *fmt =
        "{\"format\": \"doppler-topology\", \"version\": 1, \"name\": \"ce\", \"devices\": ["
        "{\"name\": \"gpu0\", \"kind\": \"gpu\", \"peak_flops\": 1e12, \"mem_bandwidth_Bps\": 1e15, \"memory_bytes\": %s, \"copy_engines\": %d},"
        "{\"name\": \"gpu1\", \"kind\": \"gpu\", \"peak_flops\": 1e12, \"mem_bandwidth_Bps\": 1e15, \"memory_bytes\": 1e12, \"copy_engines\": 0},"
        "{\"name\": \"gpu2\", \"kind\": \"gpu\", \"peak_flops\": 1e12, \"mem_bandwidth_Bps\": 1e15, \"memory_bytes\": 1e12, \"copy_engines\": 0}],"
        " \"nodes\": [], \"links\": ["
        "{\"a\": \"gpu0\", \"b\": \"gpu1\", \"kind\": \"nvlink\", \"bandwidth_Bps\": 1e9, \"latency_s\": 0},"
        "{\"a\": \"gpu0\", \"b\": \"gpu2\", \"kind\": \"nvlink\", \"bandwidth_Bps\": 1e9, \"latency_s\": 0},"
        "{\"a\": \"gpu1\", \"b\": \"gpu2\", \"kind\": \"nvlink\", \"bandwidth_Bps\": 1e9, \"latency_s\": 0}]}";
    int a[6], homogeneous;
    snprintf(topo, sizeof topo, fmt, "1e12", 1);
    ck_assert_double_eq_tol(exact_on(g, topo, NULL, a, &homogeneous), 6, 1e-9);
    ck_assert_int_eq(homogeneous, 0); /* the trainer renames placements only on alike devices */
    /* the same devices with unlimited engines everywhere: symmetric, 6 too */
    snprintf(topo, sizeof topo, fmt, "1e12", 0);
    ck_assert_double_eq_tol(exact_on(g, topo, NULL, a, &homogeneous), 6, 1e-9);
    ck_assert_int_eq(homogeneous, 1);
    /* under max-min sharing the links decide (not compared): no symmetry; the optimum (exact_on
     * compares with every assignment) is 7 there, o0's and o1's outputs sharing a link */
    static const char *const maxmin[] = {"transfer", "maxmin", NULL};
    ck_assert_double_eq_tol(exact_on(g, topo, maxmin, a, &homogeneous), 7, 1e-9);
    ck_assert_int_eq(homogeneous, 0);
    dp_graph_free(g);
    /* gpu0 with 3 GB, the others 1 TB, under the memory limit of the topology (penalty): 10
     * before, with o0 on gpu0; 8 with o0 on gpu1 and o1 on gpu0 */
    const double fl2[5] = {3, 1, 1, 1, 3}, ob2[5] = {2, 2, 3, 3, 1};
    const int e2[5][2] = {{0, 2}, {0, 3}, {2, 3}, {1, 4}, {3, 4}};
    g = tflops_graph(5, fl2, ob2, 5, e2);
    snprintf(topo, sizeof topo, fmt, "3e9", 0);
    static const char *const mem[] = {"memory_limit", "topology", "memory_policy", "penalty", NULL};
    ck_assert_double_eq_tol(exact_on(g, topo, mem, a, &homogeneous), 8, 1e-9);
    ck_assert_int_eq(homogeneous, 0);
    dp_graph_free(g);
}
END_TEST

/* Exact equals brute force on random small graphs, homogeneous and heterogeneous (where only
 * interchangeable devices are treated as symmetric), and no method beats it. */
START_TEST(exact_matches_brute_force)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    int improved = 0;
    for (int trial = 0; trial < 60; trial++) {
        int D = 2 + trial % 3;
        int n = D == 4 ? 4 + (int)gsl_rng_uniform_int(r, 4) : 4 + (int)gsl_rng_uniform_int(r, 6);
        dp_graph *g = random_dag(r, n, 0.3, 8);
        dp_error err;
        dp_cost *c = trial % 4 == 3 ? random_hetero(r, g, D) : dp_cost_graph(g, D, &err);
        int a[16];
        dp_search_exact_result res;
        dp_search_exact_config cfg;
        dp_search_exact_config_init(&cfg);
        /* with the annealed incumbent, with the list schedulers' only, and from all-on-one-device
         * (where the search itself must find the optimum) */
        cfg.anneal_budget = trial % 3 == 0 ? 200 : 0;
        cfg.list_start = trial % 3 != 2;
        dp_test_sim sim = dp_test_sim_make(g, c);
        ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, &cfg, a, &res, &err), DP_OK);
        ck_assert_int_eq(res.proven, 1);
        double bf = brute_force(g, c);
        ck_assert_msg(fabs(res.makespan - bf) < 1e-9, "trial %d: exact %g, brute force %g", trial, res.makespan, bf);
        ck_assert_double_eq(simulate(g, c, a), res.makespan);
        ck_assert(res.makespan >= res.lower_bound - 1e-9);
        ck_assert(res.makespan <= res.start);
        improved += res.makespan < res.start;
        for (size_t m = 0; m < sizeof ALL_METHODS / sizeof *ALL_METHODS; m++) {
            int b[16];
            dp_place_options o;
            dp_place_options_init(&o);
            o.budget = 300;
            o.oracle = &sim.oracle;
            ck_assert_int_eq(dp_place(ALL_METHODS[m], g, c, &o, b, NULL, NULL, &err), DP_OK);
            ck_assert_msg(simulate(g, c, b) >= res.makespan - 1e-9, "%s beat exact", ALL_METHODS[m]);
        }
        dp_test_sim_free(&sim);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    /* the search had work to do (the start was not already optimal) in many trials */
    ck_assert_int_ge(improved, 15);
    gsl_rng_free(r);
}
END_TEST

START_TEST(exact_limits)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    dp_graph *g = random_dag(r, 30, 0.1, 5);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    int a[30];
    dp_search_exact_result res;
    dp_test_sim sim = dp_test_sim_make(g, c);
    ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, NULL, a, &res, &err), DP_ERANGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "30 ops"));
    /* a node limit leaves the result unproven but valid (the incumbent or better) */
    dp_search_exact_config cfg;
    dp_search_exact_config_init(&cfg);
    cfg.max_ops = 30;
    cfg.max_nodes = 50;
    cfg.anneal_budget = 0;
    ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, &cfg, a, &res, &err), DP_OK);
    ck_assert(res.proven == 0 || res.makespan <= res.lower_bound + 1e-9);
    ck_assert_double_eq(simulate(g, c, a), res.makespan);
    /* more than one stream per device breaks the bounds: refused */
    cfg.max_streams = 2;
    ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, &cfg, a, &res, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "streams"));
    /* no oracle: refused, not silently a private engine */
    ck_assert_int_eq(dp_search_exact(g, c, NULL, NULL, a, &res, &err), DP_EINVAL);
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

START_TEST(anneal_and_local)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    dp_graph *g = random_dag(r, 40, 0.08, 6);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 4, &err);
    dp_search_anneal_config cfg;
    dp_search_anneal_config_init(&cfg);
    cfg.budget = 3000;
    dp_test_sim sim = dp_test_sim_make(g, c);
    const dp_oracle *or = &sim.oracle;
    for (int annealing = 0; annealing < 2; annealing++)
        for (int sched = 0; sched < 2; sched++) {
            cfg.schedule = sched ? DP_SEARCH_ANNEAL_LINEAR : DP_SEARCH_ANNEAL_GEOMETRIC;
            int a[40], b[40];
            dp_search_result res, res2;
            int (*fn)(const dp_graph *, const dp_cost *, const dp_oracle *, const dp_search_anneal_config *, uint64_t, int *,
                      dp_search_result *, dp_error *) = annealing ? dp_search_anneal : dp_search_local;
            ck_assert_int_eq(fn(g, c, or, &cfg, 9, a, &res, &err), DP_OK);
            ck_assert_int_eq(res.sims, 3000);
            ck_assert(res.best <= res.start);
            ck_assert_double_eq(simulate(g, c, a), res.best);
            /* the start is cp's assignment */
            int s[40];
            dp_place("cp", g, c, NULL, s, NULL, NULL, &err);
            ck_assert_double_eq(res.start, simulate(g, c, s));
            /* trace: starts at 1 sim, strictly decreasing, ends at the best */
            ck_assert_int_ge(res.trace.n, 1);
            ck_assert_int_eq(res.trace.sims[0], 1);
            for (long k = 1; k < res.trace.n; k++) {
                ck_assert(res.trace.best[k] < res.trace.best[k - 1]);
                ck_assert(res.trace.sims[k] > res.trace.sims[k - 1]);
            }
            ck_assert_double_eq(res.trace.best[res.trace.n - 1], res.best);
            /* same seed, same result */
            ck_assert_int_eq(fn(g, c, or, &cfg, 9, b, &res2, &err), DP_OK);
            ck_assert_double_eq(res2.best, res.best);
            ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
            dp_search_trace_clear(&res.trace);
            dp_search_trace_clear(&res2.trace);
        }
    /* a bad config */
    cfg.t_end = 1;
    cfg.t0 = 0.5;
    int a[40];
    dp_search_result res;
    ck_assert_int_eq(dp_search_anneal(g, c, or, &cfg, 1, a, &res, &err), DP_EINVAL);
    dp_search_anneal_config_init(&cfg);
    snprintf(cfg.init, sizeof cfg.init, "anneal");
    ck_assert_int_eq(dp_search_anneal(g, c, or, &cfg, 1, a, &res, &err), DP_EINVAL);
    snprintf(cfg.init, sizeof cfg.init, "nosuch");
    ck_assert_int_eq(dp_search_anneal(g, c, or, &cfg, 1, a, &res, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "nosuch"));
    ck_assert_int_eq(dp_search_anneal(g, c, NULL, &cfg, 1, a, &res, &err), DP_EINVAL);
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

/* Random search (place random --samples K): the best of the first K draws of the seeded
 * generator, K simulations, ties to the earlier draw; K = 1 is the plain random placement; the
 * best of K is never worse than the best of fewer; without an oracle it is refused. */
typedef struct counting_oracle {
    const dp_oracle *inner;
    long calls;
} counting_oracle;

static int counting_cost(void *ctx, const int *assignment, double *cost, dp_error *err)
{
    counting_oracle *co = ctx;
    co->calls++;
    return dp_oracle_cost(co->inner, assignment, cost, err);
}

START_TEST(random_best_of_k)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    dp_graph *g = random_dag(r, 30, 0.1, 6);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 4, &err);
    dp_test_sim sim = dp_test_sim_make(g, c);
    counting_oracle co = {.inner = &sim.oracle, .calls = 0};
    dp_oracle counted = {.name = "counted", .cost = counting_cost, .ctx = &co};
    dp_place_options o;
    dp_place_options_init(&o);
    o.seed = 27;
    o.oracle = &counted;
    int plain[30], a[30], draw[30], best_draw[30];
    ck_assert_int_eq(dp_place("random", g, c, &o, plain, NULL, NULL, &err), DP_OK);
    ck_assert_int_eq(co.calls, 0);
    /* the draws by hand: the same generator, device uniform per op in id order */
    gsl_rng *h = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(h, 27);
    double prev = INFINITY, best = INFINITY, worst = 0;
    const int ks[] = {1, 2, 7, 40};
    int drawn = 0;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        const int K = ks[i];
        for (; drawn < K; drawn++) {
            for (int v = 0; v < 30; v++) draw[v] = (int)gsl_rng_uniform_int(h, 4);
            if (drawn == 0) ck_assert_int_eq(memcmp(draw, plain, sizeof draw), 0);
            double ms = simulate(g, c, draw);
            if (ms > worst) worst = ms;
            if (ms < best) {
                best = ms;
                memcpy(best_draw, draw, sizeof draw);
            }
        }
        o.samples = K;
        co.calls = 0;
        ck_assert_int_eq(dp_place("random", g, c, &o, a, NULL, NULL, &err), DP_OK);
        ck_assert_int_eq(co.calls, K > 1 ? K : 0);
        ck_assert_int_eq(memcmp(a, best_draw, sizeof a), 0);
        ck_assert_double_eq(simulate(g, c, a), best);
        ck_assert(best <= prev);
        prev = best;
    }
    /* the draws differ, so choosing among them is tested: the best is below the worst */
    ck_assert(best < worst);
    /* and the first draw is not the best: a search that ignored K would fail */
    ck_assert(best < simulate(g, c, plain));
    o.oracle = NULL;
    o.samples = 3;
    ck_assert_int_eq(dp_place("random", g, c, &o, a, NULL, NULL, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "oracle"));
    gsl_rng_free(h);
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

START_TEST(anneal_config_file)
{
    char path[64];
    write_tmp(".json", "{\"budget\": 77, \"t0\": 0.2, \"t_end\": 0.001, \"schedule\": \"linear\", \"swap_prob\": 0.5, "
                       "\"init\": \"heft\"}", path, sizeof path);
    dp_search_anneal_config cfg;
    dp_search_anneal_config_init(&cfg);
    dp_error err;
    ck_assert_int_eq(dp_search_anneal_config_load(&cfg, path, &err), DP_OK);
    unlink(path);
    ck_assert_int_eq(cfg.budget, 77);
    ck_assert_double_eq(cfg.t0, 0.2);
    ck_assert_double_eq(cfg.t_end, 0.001);
    ck_assert_int_eq(cfg.schedule, DP_SEARCH_ANNEAL_LINEAR);
    ck_assert_double_eq(cfg.swap_prob, 0.5);
    ck_assert_str_eq(cfg.init, "heft");
    write_tmp(".json", "{\"budegt\": 5}", path, sizeof path);
    ck_assert_int_eq(dp_search_anneal_config_load(&cfg, path, &err), DP_EINVAL);
    unlink(path);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown key \"budegt\""));
    write_tmp(".json", "{\"schedule\": \"cubic\"}", path, sizeof path);
    ck_assert_int_eq(dp_search_anneal_config_load(&cfg, path, &err), DP_EINVAL);
    unlink(path);
    /* a bad value of a known key says what is wrong with it (it said "unknown key \"t0\"": the
     * "not my key" answer was -1, which is DP_EINVAL) */
    write_tmp(".json", "{\"t0\": \"x\"}", path, sizeof path);
    ck_assert_int_eq(dp_search_anneal_config_load(&cfg, path, &err), DP_EINVAL);
    unlink(path);
    ck_assert_msg(strstr(err.msg, "\"t0\" must be a number") != NULL, "%s", err.msg);
    /* through the registry, budget from the options */
    dp_graph *g = fork_join();
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_place_options o;
    dp_place_options_init(&o);
    o.budget = 500;
    int a[5];
    /* a method that simulates refuses to run without the machine's oracle */
    ck_assert_int_eq(dp_place("anneal", g, c, &o, a, NULL, NULL, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "oracle"));
    dp_test_sim sim = dp_test_sim_make(g, c);
    o.oracle = &sim.oracle;
    ck_assert_int_eq(dp_place("anneal", g, c, &o, a, NULL, NULL, &err), DP_OK);
    ck_assert_double_eq(simulate(g, c, a), 11);
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* search at inference: annealing from a given start never ends worse than it, and its moves
 * follow the proposal: with all weight on device 0, a moved op only ever lands on device 0 */
START_TEST(anneal_start_and_proposal)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 8);
    dp_graph *g = random_dag(r, 30, 0.1, 6);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 4, &err);
    dp_test_sim sim = dp_test_sim_make(g, c);
    int start[30], a[30];
    for (int v = 0; v < 30; v++) start[v] = 1 + v % 3; /* devices 1..3, never 0 */
    float prop[30 * 4];
    for (int v = 0; v < 30; v++)
        for (int d = 0; d < 4; d++) prop[v * 4 + d] = d == 0;
    dp_search_anneal_config cfg;
    dp_search_anneal_config_init(&cfg);
    cfg.budget = 400;
    cfg.swap_prob = 0;
    cfg.start = start;
    cfg.proposal = prop;
    dp_search_result res;
    ck_assert_int_eq(dp_search_local(g, c, &sim.oracle, &cfg, 3, a, &res, &err), DP_OK);
    ck_assert_double_eq(res.start, simulate(g, c, start));
    ck_assert(res.best <= res.start);
    ck_assert_double_eq(simulate(g, c, a), res.best);
    /* a move from elsewhere lands on device 0; only an op already on 0 (no proposed alternative)
     * moves uniformly, so most moved ops sit on 0 */
    int moved = 0, on0 = 0;
    for (int v = 0; v < 30; v++) {
        moved += a[v] != start[v];
        on0 += a[v] != start[v] && a[v] == 0;
    }
    ck_assert_int_gt(moved, 0);
    ck_assert_msg(2 * on0 > moved, "%d of %d moved ops on device 0", on0, moved);
    dp_search_trace_clear(&res.trace);
    /* through the registry: --refine from cp is never worse than cp */
    dp_place_options o;
    dp_place_options_init(&o);
    o.oracle = &sim.oracle;
    int b[30];
    ck_assert_int_eq(dp_place("cp", g, c, &o, b, NULL, NULL, &err), DP_OK);
    const double cp_ms = simulate(g, c, b);
    o.refine = "anneal";
    o.refine_budget = 300;
    const long s0 = dp_engine_simulations(sim.engine);
    ck_assert_int_eq(dp_place("cp", g, c, &o, b, NULL, NULL, &err), DP_OK);
    ck_assert_int_eq(dp_engine_simulations(sim.engine) - s0, 300);
    ck_assert(simulate(g, c, b) <= cp_ms);
    o.refine = "tabu";
    ck_assert_int_eq(dp_place("cp", g, c, &o, b, NULL, NULL, &err), DP_EINVAL);
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

/* init "best-instant": the start is the best of the six instant methods under the oracle, the
 * six simulations choosing it count in the budget (1 + 6 before the first move), and a budget
 * below that spends the start's simulations only. */
START_TEST(anneal_best_instant_start)
{
    static const char *const inst[] = {"round-robin", "cp", "heft", "cpop", "peft", "etf"};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 12);
    dp_graph *g = random_dag(r, 40, 0.08, 6);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 4, &err);
    dp_test_sim sim = dp_test_sim_make(g, c);
    double best = INFINITY;
    int a[40];
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(dp_place(inst[i], g, c, NULL, a, NULL, NULL, &err), DP_OK);
        const double ms = simulate(g, c, a);
        if (ms < best) best = ms;
    }
    dp_search_anneal_config cfg;
    dp_search_anneal_config_init(&cfg);
    snprintf(cfg.init, sizeof cfg.init, "best-instant");
    cfg.budget = 200;
    for (int annealing = 0; annealing < 2; annealing++) {
        dp_search_result res;
        const long s0 = dp_engine_simulations(sim.engine);
        ck_assert_int_eq((annealing ? dp_search_anneal : dp_search_local)(g, c, &sim.oracle, &cfg, 4, a, &res, &err), DP_OK);
        ck_assert_double_eq(res.start, best);
        ck_assert_int_eq(res.sims, 200);
        ck_assert_int_eq(dp_engine_simulations(sim.engine) - s0, 200);
        ck_assert_int_eq(res.trace.sims[0], 7);
        ck_assert(res.best <= best);
        ck_assert_double_eq(simulate(g, c, a), res.best);
        dp_search_trace_clear(&res.trace);
    }
    /* a budget below the start's 7 simulations is refused, naming them (it spent 7 without a
     * word: a review); 7 is the start alone */
    dp_search_result res;
    for (long b = 1; b < 7; b++) {
        cfg.budget = b;
        const long s0 = dp_engine_simulations(sim.engine);
        ck_assert_int_eq(dp_search_anneal(g, c, &sim.oracle, &cfg, 4, a, &res, &err), DP_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "7 simulations"));
        ck_assert_int_eq(dp_engine_simulations(sim.engine) - s0, 0);
    }
    cfg.budget = 7;
    ck_assert_int_eq(dp_search_anneal(g, c, &sim.oracle, &cfg, 4, a, &res, &err), DP_OK);
    ck_assert_int_eq(res.sims, 7);
    ck_assert_double_eq(res.best, best);
    dp_search_trace_clear(&res.trace);
    /* no oracle to compare the methods with */
    long sims = -1;
    ck_assert_int_eq(dp_search_start(g, c, NULL, &cfg, 4, a, &sims, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "best-instant"));
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

/* a search's start method spends no simulation: a learned start (placeto trains 200 episodes,
 * doppler and improve need a checkpoint the search is not given) is refused, naming it; it used to
 * spend 304 simulations on a budget of 100 (a new user's trial) */
START_TEST(search_start_spends_no_simulation)
{
    dp_search_anneal_config cfg;
    dp_search_anneal_config_init(&cfg);
    dp_error err;
    const char *refused[] = {"placeto", "gdp", "doppler", "improve", "anneal", "local", "exact"};
    for (int i = 0; i < 7; i++) {
        snprintf(cfg.init, sizeof cfg.init, "%s", refused[i]);
        ck_assert_int_eq(dp_search_check_config(&cfg, 1, &err), DP_EINVAL);
        ck_assert_msg(strstr(err.msg, refused[i]) != NULL, "%s", err.msg);
    }
    const char *accepted[] = {"cp", "round-robin", "random", "single", "heft", "best-instant"};
    for (int i = 0; i < 6; i++) {
        snprintf(cfg.init, sizeof cfg.init, "%s", accepted[i]);
        ck_assert_msg(dp_search_check_config(&cfg, 1, &err) == DP_OK, "%s: %s", accepted[i], err.msg);
    }
}
END_TEST

/* Bounded simulation (issue 31): annealing and local search with the engine's bounded oracle
 * (a move's simulation stops once its clock passes the largest cost the acceptance test could
 * take) take the same decisions as with full simulations: the same best makespan, accepted
 * moves, simulations, trace and assignment, on both engines and every kind of machine; and the
 * bound did stop runs (the count of stopped runs is positive), so the test is not vacuous. */
typedef struct bound_count {
    dp_engine *e;
    long stopped, runs;
} bound_count;

static int count_bounded(void *ctx, const int *assignment, double bound, double *cost, dp_error *err)
{
    bound_count *b = ctx;
    int ex = 0, rc = dp_engine_run_bounded(b->e, assignment, bound, cost, &ex, err);
    b->runs++;
    b->stopped += ex;
    if (rc == DP_OK && ex) ck_assert(*cost > bound);
    return rc;
}

static int full_cost(void *ctx, const int *assignment, double *cost, dp_error *err)
{
    bound_count *b = ctx;
    const dp_oracle o = dp_engine_oracle(b->e);
    return dp_oracle_cost(&o, assignment, cost, err);
}

START_TEST(bounded_search_same_decisions)
{
    static const char *const machines[][6] = {
        {"devices", "4", NULL},
        {"devices", "3", "comm_ratio", "4", NULL},
        {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", NULL},
        {"topology", "pcie-gen3-4gpu", "transfer", "fifo", NULL},
        {"topology", "dgx1-v100", NULL},
        {"devices", "4", "mode", "bsp", NULL},
        {"devices", "4", "queue", "priority", NULL},
    };
    char path[4096];
    snprintf(path, sizeof path, "%s/data/graphs/chainmm-small.json", dp_test_srcdir());
    dp_error err;
    dp_graph *g = dp_graph_read(path, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    long stopped = 0;
    for (size_t mi = 0; mi < sizeof machines / sizeof machines[0]; mi++) {
        dp_machine m;
        dp_machine_init(&m);
        for (int k = 0; machines[mi][k]; k += 2)
            ck_assert_int_eq(dp_machine_set(&m, machines[mi][k], machines[mi][k + 1], &err), DP_OK);
        dp_cost *c = dp_machine_costs(&m, g, &err);
        ck_assert_msg(c != NULL, "%s", err.msg);
        dp_engine *e = dp_engine_alloc(g, c, &m, &err);
        ck_assert_msg(e != NULL, "%s", err.msg);
        bound_count bc = {e, 0, 0};
        const dp_oracle full = {.name = "full", .cost = full_cost, .ctx = &bc};
        const dp_oracle bounded = {.name = "bounded", .cost = full_cost, .ctx = &bc, .cost_bounded = count_bounded};
        for (int annealing = 0; annealing < 2; annealing++)
            for (uint64_t seed = 1; seed <= 3; seed++) {
                dp_search_anneal_config cfg;
                dp_search_anneal_config_init(&cfg);
                cfg.budget = 1500;
                int a[64], b[64];
                dp_search_result r1, r2;
                int (*search)(const dp_graph *, const dp_cost *, const dp_oracle *, const dp_search_anneal_config *,
                              uint64_t, int *, dp_search_result *, dp_error *) = annealing ? dp_search_anneal : dp_search_local;
                ck_assert_int_eq(search(g, c, &full, &cfg, seed, a, &r1, &err), DP_OK);
                ck_assert_int_eq(search(g, c, &bounded, &cfg, seed, b, &r2, &err), DP_OK);
                ck_assert_msg(r1.best == r2.best && r1.accepted == r2.accepted && r1.sims == r2.sims,
                              "machine %zu, %s, seed %d: best %.17g / %.17g, accepted %ld / %ld", mi,
                              annealing ? "anneal" : "local", (int)seed, r1.best, r2.best, r1.accepted, r2.accepted);
                ck_assert_int_eq(memcmp(a, b, (size_t)g->n_ops * sizeof(int)), 0);
                ck_assert_int_eq(r1.trace.n, r2.trace.n);
                for (long i = 0; i < r1.trace.n; i++) {
                    ck_assert_int_eq(r1.trace.sims[i], r2.trace.sims[i]);
                    ck_assert(r1.trace.best[i] == r2.trace.best[i]);
                }
                dp_search_trace_clear(&r1.trace);
                dp_search_trace_clear(&r2.trace);
            }
        stopped += bc.stopped;
        dp_engine_free(e);
        dp_cost_free(c);
        dp_machine_free(&m);
    }
    ck_assert_msg(stopped > 0, "no bounded run stopped early: the test would not see a wrong bound");
    dp_graph_free(g);
}
END_TEST

/* dp_search_rng_alloc's generator is mt19937's stream value for value, with its look-ahead read
 * by dp_search_accept_bound at any point of it (issue 31: the peek that replaced a copy of the
 * generator's state): a random interleaving of every draw the searches make, peeks (once or twice
 * in a row) and reseeding, against gsl_rng_mt19937 with a copy of it for each peek. */
START_TEST(search_rng_is_mt19937)
{
    gsl_rng *r = dp_search_rng_alloc(), *ref = gsl_rng_alloc(gsl_rng_mt19937), *copy = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng *pick = gsl_rng_alloc(gsl_rng_mt19937);
    ck_assert(r && ref && copy && pick);
    ck_assert_str_eq(gsl_rng_name(r), "mt19937-peek");
    gsl_rng_set(pick, 7);
    long peeks = 0;
    for (unsigned long seed = 1; seed <= 4; seed++) {
        gsl_rng_set(r, seed);
        gsl_rng_set(ref, seed);
        for (int i = 0; i < 20000; i++) {
            const unsigned long k = gsl_rng_uniform_int(pick, 5);
            if (k == 0) {
                ck_assert(gsl_rng_uniform(r) == gsl_rng_uniform(ref));
            } else if (k == 1) {
                const unsigned long n = 1 + gsl_rng_uniform_int(pick, 1000);
                ck_assert_uint_eq(gsl_rng_uniform_int(r, n), gsl_rng_uniform_int(ref, n));
            } else if (k == 2) {
                ck_assert_uint_eq(gsl_rng_get(r), gsl_rng_get(ref));
            } else {
                /* the bound at T 1 from 0 is -ln u + 1e-6, u the next uniform (INFINITY at 0) */
                gsl_rng_memcpy(copy, ref);
                const double u = gsl_rng_uniform(copy);
                const double want = u > 0 ? -log(u) + 1e-6 : INFINITY;
                ck_assert(dp_search_accept_bound(1, 1.0, 0.0, r) == want);
                if (k == 4) ck_assert(dp_search_accept_bound(1, 1.0, 0.0, r) == want);
                peeks++;
            }
        }
        /* a peek, then a reseed: the held value is dropped */
        (void)dp_search_accept_bound(1, 1.0, 0.0, r);
    }
    gsl_rng_set(r, 99);
    gsl_rng_set(ref, 99);
    for (int i = 0; i < 1000; i++) ck_assert_uint_eq(gsl_rng_get(r), gsl_rng_get(ref));
    /* local search and a temperature of 0 read nothing: the bound is the current cost */
    ck_assert(dp_search_accept_bound(0, 1.0, 5.0, r) == 5.0 && dp_search_accept_bound(1, 0.0, 5.0, r) == 5.0);
    ck_assert_uint_eq(gsl_rng_get(r), gsl_rng_get(ref));
    ck_assert(peeks > 10000);
    gsl_rng_free(r);
    gsl_rng_free(ref);
    gsl_rng_free(copy);
    gsl_rng_free(pick);
}
END_TEST

/* dp_cost_lower_bound is below every makespan on machines of several streams a device: its work
 * term is over the compute streams (dp_cost.streams_total, set by dp_machine_costs from the
 * streams option or the topology's devices). Eight independent ops of time 10 on 2 devices of 4
 * streams run at once: makespan 10, lower bound 10 (it was 80 / 2 = 40, above every makespan). */
START_TEST(lower_bound_counts_streams)
{
    dp_error err;
    dp_graph_builder *b = dp_graph_builder_alloc("par8", "par8", DP_GRAPH_COST_TIME);
    for (int i = 0; i < 8; i++) dp_graph_builder_add_op(b, NULL, NULL, 10, 0);
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    char path[4096];
    snprintf(path, sizeof path, "%s/data/graphs/chainmm-small.json", dp_test_srcdir());
    dp_graph *gp = dp_graph_read(path, NULL, &err);
    ck_assert_msg(gp != NULL, "%s", err.msg);
    static const char *const machines[][6] = {
        {"devices", "2", "streams", "4", NULL},
        {"devices", "2", NULL},
        {"topology", "pcie-gen3-4gpu", "streams", "2", NULL},
        {"topology", "pcie-gen3-4gpu", NULL},
        {"topology", "dgx1-v100", "streams", "3", NULL},
    };
    const int want_streams[] = {8, 2, 8, 4, 24};
    for (size_t mi = 0; mi < sizeof machines / sizeof machines[0]; mi++) {
        dp_machine m;
        dp_machine_init(&m);
        for (int k = 0; machines[mi][k]; k += 2)
            ck_assert_int_eq(dp_machine_set(&m, machines[mi][k], machines[mi][k + 1], &err), DP_OK);
        const dp_graph *G = machines[mi][0][0] == 't' ? gp : g;
        dp_cost *c = dp_machine_costs(&m, G, &err);
        ck_assert_msg(c != NULL, "%s", err.msg);
        ck_assert_int_eq(c->streams_total, want_streams[mi]);
        const double lb = dp_cost_lower_bound(G, c);
        if (mi == 0) ck_assert_double_eq(lb, 10);
        if (mi == 1) ck_assert_double_eq(lb, 40);
        dp_engine *e = dp_engine_alloc(G, c, &m, &err);
        ck_assert_msg(e != NULL, "%s", err.msg);
        const dp_oracle o = dp_engine_oracle(e);
        int a[256];
        ck_assert_int_le(G->n_ops, 256);
        for (size_t i = 0; i < sizeof ALL_METHODS / sizeof ALL_METHODS[0]; i++) {
            dp_place_options po;
            dp_place_options_init(&po);
            po.oracle = &o;
            ck_assert_int_eq(dp_place(ALL_METHODS[i], G, c, &po, a, NULL, NULL, &err), DP_OK);
            double ms;
            ck_assert_int_eq(dp_oracle_cost(&o, a, &ms, &err), DP_OK);
            ck_assert_msg(ms >= lb * (1 - 1e-12), "machine %zu, %s: makespan %.17g below the lower bound %.17g", mi,
                          ALL_METHODS[i], ms, lb);
            if (mi == 0 && strcmp(ALL_METHODS[i], "round-robin") == 0) ck_assert_double_eq(ms, 10);
        }
        dp_engine_free(e);
        dp_cost_free(c);
        dp_machine_free(&m);
    }
    /* a topology whose own devices have several streams (no streams option) */
    dp_machine m;
    dp_machine_init(&m);
    ck_assert_int_eq(dp_machine_set(&m, "topology", "pcie-gen3-4gpu", &err), DP_OK);
    ck_assert_int_eq(dp_machine_load(&m, &err), DP_OK);
    for (int d = 0; d < m.topo->n_devices; d++) m.topo->dev[d].streams = d + 1;
    dp_cost *c = dp_machine_costs(&m, gp, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert_int_eq(c->streams_total, 1 + 2 + 3 + 4);
    dp_cost_free(c);
    dp_machine_free(&m);
    dp_graph_free(g);
    dp_graph_free(gp);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("search");
    TCase *t = tcase_create("search");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, exact_fork_join_hand);
    tcase_add_test(t, bounded_search_same_decisions);
    tcase_add_test(t, search_rng_is_mt19937);
    tcase_add_test(t, lower_bound_counts_streams);
    tcase_add_test(t, exact_two_chains_hand);
    tcase_add_test(t, exact_matches_brute_force);
    tcase_add_test(t, exact_devices_differing_beyond_costs);
    tcase_add_test(t, exact_limits);
    tcase_add_test(t, anneal_and_local);
    tcase_add_test(t, random_best_of_k);
    tcase_add_test(t, anneal_config_file);
    tcase_add_test(t, anneal_start_and_proposal);
    tcase_add_test(t, anneal_best_instant_start);
    tcase_add_test(t, search_start_spends_no_simulation);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return dp_test_run(suite());
}
