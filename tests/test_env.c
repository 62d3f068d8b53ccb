/* test_env: the environment's engine state (dp_env.h) and the prefix simulations it rests on
 * (dp_engine_run_prefix): at every step of random episodes the state's times are the engine's
 * schedule of the placed prefix, every estimated start is the start the engine gives the op on
 * that device, and after the last step the estimate is the engine's makespan; on the fast path
 * and on the general engine (fixed, FIFO and max-min transfers on topologies, streams, priority
 * queues, bulk-synchronous, memory penalty). */
#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_env.h"
#include "dp_gen.h"
#include "dp_graph.h"
#include "dp_hisim.h"
#include "dp_machine.h"
#include "dp_search.h"
#include "dp_sim.h"
#include "dp_test.h"
#include "dp_train.h"

#include <math.h>

#include <gsl/gsl_rng.h>

static dp_graph *random_dag(int n, double ccr, unsigned long seed)
{
    dp_gen_random_opts o;
    dp_gen_random_defaults(&o);
    o.n = n;
    o.ccr = ccr;
    o.seed = seed;
    o.min_work = 1;
    o.max_work = 4; /* small integers: many exact ties of arrival times */
    dp_error err;
    dp_graph *g = dp_gen_random(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

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

static dp_graph *small_chainmm(void)
{
    dp_gen_chainmm_opts o;
    dp_gen_chainmm_defaults(&o);
    o.matrices = 4;
    o.n = 2048;
    dp_error err;
    dp_graph *g = dp_gen_chainmm(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

/* One episode with a random ready op and a random device at each step, checked against a
 * second engine (ref) at every step. Returns the prefix simulations the environment ran. */
static long check_episode(const dp_graph *g, const dp_cost *c, dp_engine *e, dp_engine *ref, gsl_rng *r,
                          const char *what)
{
    dp_error err;
    const int n = g->n_ops, D = c->n_devices;
    dp_env *env = dp_env_alloc(g, c, &err);
    ck_assert_ptr_nonnull(env);
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
    int *pre = malloc((size_t)n * sizeof *pre);
    for (int v = 0; v < n; v++) pre[v] = -1;
    dp_engine_schedule s;
    while (!dp_env_done(env)) {
        int v = env->ready[gsl_rng_uniform_int(r, (unsigned long)env->n_ready)];
        /* every device's estimate is the engine's start of v on it */
        for (int d = 0; d < D; d++) {
            double est = dp_env_est_start(env, v, d);
            pre[v] = d;
            ck_assert_int_eq(dp_engine_run_prefix(ref, pre, NULL, &s, &err), DP_OK);
            pre[v] = -1;
            ck_assert_msg(est == s.op_start[v], "%s: step %d op %d device %d: estimate %.17g, engine %.17g", what,
                          env->step, v, d, est, s.op_start[v]);
        }
        int d = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        ck_assert_int_eq(dp_env_step(env, v, d, &err), DP_OK);
        pre[v] = d;
        /* the state is the engine's schedule of the prefix */
        ck_assert_int_eq(dp_engine_run_prefix(ref, pre, NULL, &s, &err), DP_OK);
        for (int i = 0; i < env->step; i++) {
            int x = env->order[i];
            ck_assert_msg(env->est_start[x] == s.op_start[x] && env->est_end[x] == s.op_end[x] &&
                              env->est_ready[x] == s.op_ready[x],
                          "%s: step %d op %d: state [%.17g, %.17g] ready %.17g, engine [%.17g, %.17g] ready %.17g", what,
                          env->step, x, env->est_start[x], env->est_end[x], env->est_ready[x], s.op_start[x],
                          s.op_end[x], s.op_ready[x]);
        }
        ck_assert_msg(dp_env_makespan(env) == s.makespan, "%s: step %d: makespan %.17g vs %.17g", what, env->step,
                      dp_env_makespan(env), s.makespan);
    }
    /* after the last step: the engine's makespan of the whole assignment */
    ck_assert_int_eq(dp_engine_run(ref, env->assignment, NULL, &s, &err), DP_OK);
    ck_assert_msg(dp_env_makespan(env) == s.makespan, "%s: final %.17g vs simulated %.17g", what, dp_env_makespan(env),
                  s.makespan);
    for (int v = 0; v < n; v++) ck_assert(env->est_start[v] == s.op_start[v] && env->est_end[v] == s.op_end[v]);
    long k = env->n_resim;
    free(pre);
    dp_env_free(env);
    return k;
}

/* the same, without the per-step reference (cheap enough for more episodes): only the end */
static void check_final(const dp_graph *g, const dp_cost *c, dp_engine *e, gsl_rng *r, int greedy, const char *what)
{
    dp_error err;
    dp_env *env = dp_env_alloc(g, c, &err);
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
    while (!dp_env_done(env)) {
        int v = greedy ? dp_env_cp_select(env) : env->ready[gsl_rng_uniform_int(r, (unsigned long)env->n_ready)];
        int d = greedy ? dp_env_cp_place(env, v) : (int)gsl_rng_uniform_int(r, (unsigned long)c->n_devices);
        ck_assert_int_eq(dp_env_step(env, v, d, &err), DP_OK);
    }
    dp_engine_schedule s;
    ck_assert_int_eq(dp_engine_run(e, env->assignment, NULL, &s, &err), DP_OK);
    ck_assert_msg(dp_env_makespan(env) == s.makespan, "%s: final %.17g vs simulated %.17g", what, dp_env_makespan(env),
                  s.makespan);
    dp_env_free(env);
}

START_TEST(prefix_runs)
{
    /* the fast path's and the general engine's prefix runs agree, as their full runs do; the
     * full prefix is the full run; a placed op without its predecessor is refused */
    dp_graph *g = random_dag(60, 2.0, 3);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_sim *fs = dp_sim_alloc(g, c, &err);
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    dp_hisim *hs = dp_hisim_alloc(g, c, NULL, &o, &err);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    int *a = malloc((size_t)g->n_ops * sizeof *a), *pre = malloc((size_t)g->n_ops * sizeof *pre);
    for (int v = 0; v < g->n_ops; v++) a[v] = (int)gsl_rng_uniform_int(r, 3);
    for (int k = 0; k <= g->n_ops; k += 7) {
        /* the first k ops of the topological order: closed under predecessors */
        for (int v = 0; v < g->n_ops; v++) pre[v] = -1;
        for (int i = 0; i < k; i++) pre[g->topo[i]] = a[g->topo[i]];
        dp_sim_result x;
        dp_hisim_result y;
        ck_assert_int_eq(dp_sim_run_prefix(fs, pre, &x, &err), DP_OK);
        ck_assert_int_eq(dp_hisim_run_prefix(hs, pre, NULL, &y, &err), DP_OK);
        ck_assert_double_eq(x.makespan, y.makespan);
        for (int v = 0; v < g->n_ops; v++) {
            ck_assert_double_eq(x.op_start[v], y.op_start[v]);
            ck_assert_double_eq(x.op_ready[v], y.op_ready[v]);
            if (pre[v] < 0) ck_assert_double_eq(x.op_end[v], -1);
        }
    }
    dp_sim_result x, z;
    ck_assert_int_eq(dp_sim_run_prefix(fs, a, &x, &err), DP_OK);
    double m = x.makespan;
    ck_assert_int_eq(dp_sim_run(fs, a, &z, &err), DP_OK);
    ck_assert_double_eq(m, z.makespan);
    /* refused: the last op of the topological order placed, one of its predecessors not */
    int v = g->topo[g->n_ops - 1];
    ck_assert_int_gt(g->pred_ptr[v + 1], g->pred_ptr[v]);
    memcpy(pre, a, (size_t)g->n_ops * sizeof *pre);
    pre[g->edge_src[g->pred_edge[g->pred_ptr[v]]]] = -1;
    ck_assert_int_eq(dp_sim_run_prefix(fs, pre, &x, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "predecessor"));
    dp_hisim_result y;
    ck_assert_int_eq(dp_hisim_run_prefix(hs, pre, NULL, &y, &err), DP_EINVAL);
    free(a); free(pre);
    gsl_rng_free(r);
    dp_hisim_free(hs);
    dp_sim_free(fs);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(fast_path_exact)
{
    /* DOPPLER-compatible engine: random DAGs with integer costs (arrival ties), 2..5 devices */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    long resim = 0;
    for (int gi = 0; gi < 6; gi++) {
        dp_graph *g = random_dag(40 + 15 * gi, gi % 2 ? 4.0 : 0.5, 100 + (unsigned long)gi);
        dp_error err;
        dp_cost *c = dp_cost_graph(g, 2 + gi % 4, &err);
        dp_engine *e = dp_engine_alloc(g, c, NULL, &err), *ref = dp_engine_alloc(g, c, NULL, &err);
        ck_assert(!dp_engine_is_general(e));
        char what[64];
        snprintf(what, sizeof what, "fast path, graph %d", gi);
        for (int ep = 0; ep < 3; ep++) resim += check_episode(g, c, e, ref, r, what);
        for (int ep = 0; ep < 20; ep++) check_final(g, c, e, r, 0, what);
        check_final(g, c, e, r, 1, what);
        dp_engine_free(e); dp_engine_free(ref);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    /* both ways were taken: the local rule, and simulations for overtakes and ties */
    ck_assert_int_gt(resim, 0);
    gsl_rng_free(r);
}
END_TEST

/* A random DAG of n ops with zero times mixed in (ops of zero time, outputs and edges of zero
 * size: copies that arrive at once) and repeated edges (a second copy of one (src, dst) pair,
 * which the engines ignore on arrival): the corner cases of the engine's event order. */
static dp_graph *random_zero_dag(int n, gsl_rng *r)
{
    dp_graph_builder *b = dp_graph_builder_alloc("zero", "zero", DP_GRAPH_COST_TIME);
    for (int i = 0; i < n; i++) {
        double comp = gsl_rng_uniform(r) < 0.3 ? 0 : (double)(1 + gsl_rng_uniform_int(r, 3));
        double out = gsl_rng_uniform(r) < 0.25 ? 0 : (double)(1 + gsl_rng_uniform_int(r, 4));
        dp_graph_builder_add_op(b, NULL, NULL, comp, out);
    }
    for (int i = 1; i < n; i++) {
        int k = (int)gsl_rng_uniform_int(r, 4);
        for (int j = 0; j < k; j++) {
            int u = (int)gsl_rng_uniform_int(r, (unsigned long)i);
            double size = gsl_rng_uniform(r) < 0.2 ? 0 : (double)(1 + gsl_rng_uniform_int(r, 3));
            dp_graph_builder_add_edge(b, u, i, size);
            if (gsl_rng_uniform(r) < 0.1) dp_graph_builder_add_edge(b, u, i, size);
        }
    }
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_builder_free(b);
    return g;
}

START_TEST(fast_path_resumed_exact)
{
    /* The resumed runs of the fast path (dp_sim_prefix_add): at every step of random episodes,
     * on random DAGs with integer and zero times (ties of arrivals, zero-time ops and copies,
     * repeated edges), 1 to 6 devices, every device's estimate and the whole state bit for bit
     * equal to the engine's simulation of the prefix from the start (check_episode). Most runs
     * resume at the added op's READY and simulate a part of the prefix again. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1234);
    long resumed = 0, resimulated = 0, placed = 0;
    for (int gi = 0; gi < 12; gi++) {
        dp_graph *g = random_zero_dag(30 + 10 * gi, r);
        dp_error err;
        const int D = 1 + gi % 6;
        dp_cost *c = dp_cost_graph(g, D, &err);
        dp_engine *e = dp_engine_alloc(g, c, NULL, &err), *ref = dp_engine_alloc(g, c, NULL, &err);
        ck_assert(!dp_engine_is_general(e));
        char what[64];
        snprintf(what, sizeof what, "zero-time DAG %d, %d devices", gi, D);
        for (int ep = 0; ep < 3; ep++) check_episode(g, c, e, ref, r, what);
        for (int ep = 0; ep < 10; ep++) check_final(g, c, e, r, ep % 2, what);
        /* the statistics of one more episode */
        dp_env *env = dp_env_alloc(g, c, &err);
        ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
        long r0 = env->prefix->n_resumed, k0 = env->prefix->n_resimulated;
        while (!dp_env_done(env)) {
            int v = env->ready[gsl_rng_uniform_int(r, (unsigned long)env->n_ready)];
            ck_assert_int_eq(dp_env_step(env, v, (int)gsl_rng_uniform_int(r, (unsigned long)D), &err), DP_OK);
            placed += env->step;
        }
        resumed += env->prefix->n_resumed - r0;
        resimulated += env->prefix->n_resimulated - k0;
        dp_env_free(env);
        dp_engine_free(e); dp_engine_free(ref);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    ck_assert_int_gt(resumed, 0);
    /* fewer ops simulated than a prefix simulation at every step would */
    ck_assert_int_lt(resimulated, placed);
    gsl_rng_free(r);
}
END_TEST

START_TEST(prefix_add_contract)
{
    /* dp_sim_prefix_add directly: ops added in a random topological order on random devices,
     * each commit equal to the prefix simulated from the start (every placed op, bit for bit),
     * and each device's list in queue order (times never decreasing); an uncommitted probe
     * leaves the prefix as it was; refused: an unplaced predecessor, a device out of range */
    dp_graph *g = random_dag(80, 1.0, 77);
    dp_error err;
    const int D = 3, n = g->n_ops;
    dp_cost *c = dp_cost_graph(g, D, &err);
    dp_sim *s = dp_sim_alloc(g, c, &err), *ref = dp_sim_alloc(g, c, &err);
    dp_sim_prefix *p = dp_sim_prefix_alloc(n, D);
    ck_assert_ptr_nonnull(p);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9);
    int *a = malloc((size_t)n * sizeof *a);
    for (int v = 0; v < n; v++) a[v] = -1;
    for (int i = 0; i < n; i++) {
        int v = g->topo[i];
        /* an uncommitted probe on every device changes nothing */
        double before_end = p->n_placed > 0 ? p->end[p->placed[p->n_placed - 1]] : 0;
        int before_n = p->n_placed;
        for (int d = 0; d < D; d++) {
            a[v] = d;
            double st, rd;
            ck_assert_int_eq(dp_sim_prefix_add(s, p, a, v, 0, &st, &rd, &err), DP_OK);
            dp_sim_result x;
            ck_assert_int_eq(dp_sim_run_prefix(ref, a, &x, &err), DP_OK);
            ck_assert(st == x.op_start[v] && rd == x.op_ready[v]);
        }
        ck_assert_int_eq(p->n_placed, before_n);
        if (before_n > 0) ck_assert(p->end[p->placed[before_n - 1]] == before_end);
        a[v] = (int)gsl_rng_uniform_int(r, D);
        ck_assert_int_eq(dp_sim_prefix_add(s, p, a, v, 1, NULL, NULL, &err), DP_OK);
        dp_sim_result x;
        ck_assert_int_eq(dp_sim_run_prefix(ref, a, &x, &err), DP_OK);
        for (int j = 0; j <= i; j++) {
            int u = g->topo[j];
            ck_assert(p->start[u] == x.op_start[u] && p->end[u] == x.op_end[u] && p->ready[u] == x.op_ready[u]);
        }
        int total = 0;
        for (int d = 0; d < D; d++) {
            total += p->dev_n[d];
            for (int k = 1; k < p->dev_n[d]; k++) {
                int y = p->dev_ops[d][k - 1], z = p->dev_ops[d][k];
                ck_assert(a[y] == d && a[z] == d);
                ck_assert(p->ready[y] <= p->ready[z] && p->start[y] <= p->start[z] && p->end[y] <= p->end[z]);
            }
        }
        ck_assert_int_eq(total, i + 1);
    }
    ck_assert_int_gt(p->n_resumed, 0);
    /* refused, p unchanged: an op whose predecessor is not placed; a device out of range */
    dp_sim_prefix_reset(p);
    for (int v = 0; v < n; v++) a[v] = -1;
    int w = g->topo[n - 1];
    ck_assert_int_gt(g->pred_ptr[w + 1], g->pred_ptr[w]);
    a[w] = 0;
    ck_assert_int_eq(dp_sim_prefix_add(s, p, a, w, 1, NULL, NULL, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "predecessor"));
    a[w] = -1;
    a[g->sources[0]] = D;
    ck_assert_int_eq(dp_sim_prefix_add(s, p, a, g->sources[0], 1, NULL, NULL, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "outside"));
    ck_assert_int_eq(p->n_placed, 0);
    free(a);
    gsl_rng_free(r);
    dp_sim_prefix_free(p);
    dp_sim_free(s);
    dp_sim_free(ref);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(state_switch_features)
{
    /* an environment switched from the engine state back to append (or to the general engine)
     * reads its features as one that never held the engine state: the fast path's lists are
     * not consulted outside it */
    dp_graph *g = random_dag(50, 1.0, 21);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    dp_env *sw = dp_env_alloc(g, c, &err), *app = dp_env_alloc(g, c, &err);
    ck_assert_int_eq(dp_env_set_state(sw, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
    for (int i = 0; i < 10; i++) ck_assert_int_eq(dp_env_step(sw, sw->ready[0], i % 3, &err), DP_OK);
    ck_assert_int_eq(dp_env_set_state(sw, DP_ENV_STATE_APPEND, NULL, &err), DP_OK);
    const int F = dp_env_n_features(DP_ENV_FEATURES_ENGINE);
    double *f1 = malloc((size_t)3 * F * sizeof *f1), *f2 = malloc((size_t)3 * F * sizeof *f2);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4);
    while (!dp_env_done(app)) {
        int v = app->ready[gsl_rng_uniform_int(r, (unsigned long)app->n_ready)];
        dp_env_device_features_of(sw, DP_ENV_FEATURES_ENGINE, v, f1);
        dp_env_device_features_of(app, DP_ENV_FEATURES_ENGINE, v, f2);
        for (int k = 0; k < 3 * F; k++) ck_assert_msg(f1[k] == f2[k], "step %d feature %d: %.17g vs %.17g", app->step, k, f1[k], f2[k]);
        int d = (int)gsl_rng_uniform_int(r, 3);
        ck_assert_int_eq(dp_env_step(sw, v, d, &err), DP_OK);
        ck_assert_int_eq(dp_env_step(app, v, d, &err), DP_OK);
    }
    free(f1); free(f2);
    gsl_rng_free(r);
    dp_env_free(sw); dp_env_free(app);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(zero_time_race)
{
    /* u(2) on 1; p(2), x(0), k(1) on 0, all sources; v after u on 0, the copy of zero time.
     * At 2 p and u end (u first: it was granted first); p's release grants x, whose zero time
     * ends at once and frees device 0 one step of the event order before its release: v's
     * READY (u's copy) falls in between, on an idle device with k queued. The engine then
     * grants the head of the queue, k, not v: first come first served holds, and the local
     * rule (v behind every op of d that arrived before it: k, ending at 3) is exact there. */
    dp_graph_builder *b = dp_graph_builder_alloc("race", "race", DP_GRAPH_COST_TIME);
    const double comp[] = {2, 2, 0, 1, 1};
    for (int i = 0; i < 5; i++) dp_graph_builder_add_op(b, NULL, NULL, comp[i], 0);
    dp_graph_builder_add_edge(b, 0, 4, 0);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    dp_env *env = dp_env_alloc(g, c, &err);
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
    const int ops[] = {0, 1, 2, 3}, devs[] = {1, 0, 0, 0};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(dp_env_step(env, ops[i], devs[i], &err), DP_OK);
    ck_assert_double_eq(env->est_end[3], 3);
    long before = env->n_resim;
    ck_assert_double_eq(dp_env_est_start(env, 4, 0), 3);
    ck_assert_int_eq(env->n_resim, before); /* no tie: the local rule */
    ck_assert_int_eq(dp_env_step(env, 4, 0, &err), DP_OK);
    dp_engine_schedule s;
    ck_assert_int_eq(dp_engine_run(e, env->assignment, NULL, &s, &err), DP_OK);
    ck_assert_double_eq(s.op_start[2], 2);
    ck_assert_double_eq(s.op_start[3], 2);
    ck_assert_double_eq(s.op_start[4], 3);
    ck_assert_double_eq(env->est_start[4], 3);
    ck_assert_double_eq(dp_env_makespan(env), s.makespan);
    dp_env_free(env);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(fast_path_doppler_file)
{
    char path[1024];
    dp_error err;
    dp_graph *g = dp_graph_read(dp_test_path(path, sizeof path, dp_test_srcdir(), "tests/data/tiny-doppler.txt"), NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_cost *c = dp_cost_graph(g, 4, &err);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err), *ref = dp_engine_alloc(g, c, NULL, &err);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2);
    for (int ep = 0; ep < 10; ep++) check_episode(g, c, e, ref, r, "tiny-doppler");
    gsl_rng_free(r);
    dp_engine_free(e); dp_engine_free(ref);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* general engine: one machine per test index */
static const char *const general_machines[][12] = {
    {"topology", "pcie-gen3-4gpu", "transfer", "fixed", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "fifo", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", NULL},
    {"topology", "dgx1-v100", "transfer", "maxmin", NULL},
    {"topology", "dgx1-v100", "transfer", "fifo", "chunks", "4", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", "streams", "2", "queue", "priority", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", "mode", "bsp", NULL},
    {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", "memory_limit", "3e7", "memory_policy", "penalty", NULL},
};

START_TEST(general_engine_exact)
{
    dp_machine m;
    dp_test_machine_make(&m, general_machines[_i]);
    dp_graph *gs[2] = {small_llama(), small_chainmm()};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 40 + (unsigned long)_i);
    for (int gi = 0; gi < 2; gi++) {
        dp_error err;
        dp_cost *c = dp_machine_costs(&m, gs[gi], &err);
        ck_assert_msg(c != NULL, "%s", err.msg);
        dp_engine *e = dp_engine_alloc(gs[gi], c, &m, &err), *ref = dp_engine_alloc(gs[gi], c, &m, &err);
        ck_assert_msg(e && ref, "%s", err.msg);
        ck_assert(dp_engine_is_general(e));
        char what[160];
        snprintf(what, sizeof what, "machine %d (%s %s), graph %s", _i, general_machines[_i][1], general_machines[_i][3],
                 gs[gi]->name);
        /* FIFO queues in asynchronous mode: the state by delta runs from the prefix's snapshots
         * (dp_hisim.h), checked step by step below against full prefix runs of ref */
        dp_env *probe_env = dp_env_alloc(gs[gi], c, &err);
        ck_assert_int_eq(dp_env_set_state(probe_env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
        ck_assert_int_eq(probe_env->hdelta != NULL, _i != 5 && _i != 6);
        dp_env_free(probe_env);
        check_episode(gs[gi], c, e, ref, r, what);
        for (int ep = 0; ep < 4; ep++) check_final(gs[gi], c, e, r, 0, what);
        check_final(gs[gi], c, e, r, 1, what);
        dp_engine_free(e); dp_engine_free(ref);
        dp_cost_free(c);
        dp_graph_free(gs[gi]);
    }
    gsl_rng_free(r);
    dp_machine_free(&m);
}
END_TEST

/* Under the error memory policy the environment refuses no step of a placement that fits: a
 * prefix's memory is not the placement's (dp_hisim_run_prefix). ffnn on the PCIe topology under
 * max-min, random placements, each under a limit just above its own peak: an episode in
 * topological order was refused part way (a prefix holding 8.05e8 bytes where the placement
 * peaks at 7.38e8: a review); with a limit just below its peak the last step is refused. */
START_TEST(general_engine_memory_error_policy_prefixes)
{
    static const char *const kv0[] = {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", NULL};
    dp_machine m0;
    dp_test_machine_make(&m0, kv0);
    dp_gen_ffnn_opts fo;
    dp_gen_ffnn_defaults(&fo);
    dp_error err;
    dp_graph *g = dp_gen_ffnn(&fo, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_cost *c = dp_machine_costs(&m0, g, &err);
    dp_engine *e0 = dp_engine_alloc(g, c, &m0, &err);
    ck_assert_msg(c && e0, "%s", err.msg);
    const int n = g->n_ops, D = c->n_devices;
    int *a = malloc(sizeof(int) * (size_t)n);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    for (int trial = 0; trial < 4; trial++) {
        for (int v = 0; v < n; v++) a[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        dp_engine_schedule s;
        ck_assert_int_eq(dp_engine_run(e0, a, NULL, &s, &err), DP_OK);
        const double makespan = s.makespan;
        double peak = 0;
        for (int d = 0; d < D; d++) peak = s.mem_peak[d] > peak ? s.mem_peak[d] : peak;
        for (int below = 0; below < 2; below++) {
            char lim[32];
            snprintf(lim, sizeof lim, "%.17g", below ? peak * (1 - 1e-7) : peak * (1 + 1e-7));
            const char *const kv[] = {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", "memory_limit", lim, NULL};
            dp_machine m;
            dp_test_machine_make(&m, kv);
            dp_engine *e = dp_engine_alloc(g, c, &m, &err);
            ck_assert_msg(e != NULL, "%s", err.msg);
            dp_env *env = dp_env_alloc(g, c, &err);
            ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
            for (int k = 0; k < n - 1; k++) {
                const int v = g->topo[k];
                ck_assert_msg(dp_env_est_start(env, v, a[v]) < INFINITY, "trial %d step %d: estimate +inf", trial, k);
                ck_assert_msg(dp_env_step(env, v, a[v], &err) == DP_OK, "trial %d step %d refused: %s", trial, k, err.msg);
            }
            const int last = g->topo[n - 1];
            if (below) {
                /* the complete placement goes over: its last step is refused, naming the capacity */
                ck_assert(dp_env_est_start(env, last, a[last]) == INFINITY);
                ck_assert_int_eq(dp_env_step(env, last, a[last], &err), DP_ERANGE);
                ck_assert_ptr_nonnull(strstr(err.msg, "memory capacity exceeded"));
            } else {
                ck_assert_int_eq(dp_env_step(env, last, a[last], &err), DP_OK);
                ck_assert(dp_env_makespan(env) == makespan);
            }
            dp_env_free(env);
            dp_engine_free(e);
            dp_machine_free(&m);
        }
    }
    gsl_rng_free(r);
    free(a);
    dp_engine_free(e0);
    dp_cost_free(c);
    dp_graph_free(g);
    dp_machine_free(&m0);
}
END_TEST

/* Above env->general_exact_max ops a general engine's state is the surrogate's (dp_env.h
 * DP_ENV_GENERAL_EXACT_MAX_OPS): the DOPPLER-compatible engine on the same cost tables, so every
 * estimate, feature and the final makespan equal, bit for bit, those of an environment on that
 * engine; at or below it the state is the general engine's. */
START_TEST(general_engine_surrogate)
{
    dp_machine m;
    dp_test_machine_make(&m, general_machines[3]); /* dgx1-v100, max-min */
    dp_graph *g = small_llama();
    dp_error err;
    dp_cost *c = dp_machine_costs(&m, g, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    dp_engine *eg = dp_engine_alloc(g, c, &m, &err), *ef = dp_engine_alloc(g, c, NULL, &err);
    ck_assert(eg && ef && dp_engine_is_general(eg) && !dp_engine_is_general(ef));
    dp_env *a = dp_env_alloc(g, c, &err), *b = dp_env_alloc(g, c, &err);
    ck_assert(a && b);
    ck_assert_int_eq(a->general_exact_max, DP_ENV_GENERAL_EXACT_MAX_OPS);
    ck_assert_int_eq(dp_env_set_state(a, DP_ENV_STATE_ENGINE, eg, &err), DP_OK);
    ck_assert(a->general && !a->surrogate); /* a small graph: the exact general state */
    a->general_exact_max = g->n_ops - 1;
    ck_assert_int_eq(dp_env_set_state(a, DP_ENV_STATE_ENGINE, eg, &err), DP_OK);
    ck_assert(!a->general && a->surrogate);
    ck_assert_int_eq(dp_env_set_state(b, DP_ENV_STATE_ENGINE, ef, &err), DP_OK);
    const int D = c->n_devices, FE = dp_env_n_features(DP_ENV_FEATURES_ENGINE);
    double *fa = malloc((size_t)D * FE * sizeof *fa), *fb = malloc((size_t)D * FE * sizeof *fb);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77);
    for (int ep = 0; ep < 3; ep++) {
        dp_env_reset(a);
        dp_env_reset(b);
        while (!dp_env_done(a)) {
            ck_assert_int_eq(a->n_ready, b->n_ready);
            int v = a->ready[gsl_rng_uniform_int(r, (unsigned long)a->n_ready)];
            dp_env_device_features_of(a, DP_ENV_FEATURES_ENGINE, v, fa);
            dp_env_device_features_of(b, DP_ENV_FEATURES_ENGINE, v, fb);
            ck_assert_msg(memcmp(fa, fb, (size_t)D * FE * sizeof *fa) == 0, "step %d: the features differ", a->step);
            int d = (int)gsl_rng_uniform_int(r, (unsigned long)D);
            ck_assert_int_eq(dp_env_step(a, v, d, &err), DP_OK);
            ck_assert_int_eq(dp_env_step(b, v, d, &err), DP_OK);
        }
        ck_assert(dp_env_makespan(a) == dp_env_makespan(b));
        dp_engine_schedule s;
        ck_assert_int_eq(dp_engine_run(ef, a->assignment, NULL, &s, &err), DP_OK);
        ck_assert(dp_env_makespan(a) == s.makespan);
    }
    /* back at or below the threshold: the general engine's state again */
    a->general_exact_max = DP_ENV_GENERAL_EXACT_MAX_OPS;
    ck_assert_int_eq(dp_env_set_state(a, DP_ENV_STATE_ENGINE, eg, &err), DP_OK);
    ck_assert(a->general && !a->surrogate);
    gsl_rng_free(r);
    free(fa); free(fb);
    dp_env_free(a); dp_env_free(b);
    dp_engine_free(eg); dp_engine_free(ef);
    dp_cost_free(c);
    dp_graph_free(g);
    dp_machine_free(&m);
}
END_TEST

/* s(1) -> a(1) -> b(5) on device 0; s -> c(1) -> x(1) on device 0, c on device 1 (comm 10). */
static dp_graph *overtake_graph(void)
{
    dp_graph_builder *b = dp_graph_builder_alloc("ot", "ot", DP_GRAPH_COST_TIME);
    const double comp[] = {1, 1, 5, 1, 1};
    for (int i = 0; i < 5; i++) dp_graph_builder_add_op(b, NULL, NULL, comp[i], 10);
    int es[][2] = {{0, 1}, {1, 2}, {0, 3}, {3, 4}};
    for (int e = 0; e < 4; e++) dp_graph_builder_add_edge(b, es[e][0], es[e][1], 10);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    return g;
}

START_TEST(append_is_another_scheduler)
{
    /* The authors' estimate appends ops to a device in placement order; the engine serves them
     * in arrival order. s on 0 [0,1]; c on 1 (arrives 11) [11,12]; x after c on 0 (arrives 22)
     * [22,23]; a after s on 0: the engine runs it at once [1,2] (it arrives at 1, long before
     * x), the append estimate behind x [23,24]; b after a on 0 then starts at 2, not 24. */
    dp_graph *g = overtake_graph();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    dp_env *env = dp_env_alloc(g, c, &err), *app = dp_env_alloc(g, c, &err);
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
    const int ops[] = {0, 3, 4, 1}, devs[] = {0, 1, 0, 0};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(dp_env_step(env, ops[i], devs[i], &err), DP_OK);
        ck_assert_int_eq(dp_env_step(app, ops[i], devs[i], &err), DP_OK);
    }
    ck_assert_double_eq(env->est_start[4], 22);
    ck_assert_double_eq(env->est_start[1], 1);
    ck_assert_double_eq(app->est_start[1], 23);
    ck_assert_double_eq(dp_env_est_start(env, 2, 0), 2);
    ck_assert_double_eq(dp_env_est_start(app, 2, 0), 24);
    /* b on device 1: arrives 2 + 10 = 12, when c has just freed it */
    ck_assert_double_eq(dp_env_est_start(env, 2, 1), 12);
    ck_assert_int_eq(dp_env_cp_place(env, 2), 0);
    /* the device features read the state's times (column 4: the estimated start) */
    double f[2 * DP_ENV_N_DEVICE_FEATURES];
    dp_env_device_features(env, 2, f);
    ck_assert_double_eq(f[4], 2);
    ck_assert_double_eq(f[DP_ENV_N_DEVICE_FEATURES + 4], 12);
    dp_env_free(app);
    dp_env_free(env);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(later_op_moves_earlier_one)
{
    /* s(1) on 0; c(1) on 1 (arrives 11) ; x(1) after c on 0 (arrives 22); a(30) after s on 0
     * arrives at 1: placed after x, a runs ahead of x (first come first served) and x moves
     * from 22 to 31. The prefix's times are exact for the prefix, not final. */
    dp_graph_builder *b = dp_graph_builder_alloc("mv", "mv", DP_GRAPH_COST_TIME);
    const double comp[] = {1, 30, 1, 1};
    for (int i = 0; i < 4; i++) dp_graph_builder_add_op(b, NULL, NULL, comp[i], 10);
    int es[][2] = {{0, 1}, {0, 2}, {2, 3}};
    for (int e = 0; e < 3; e++) dp_graph_builder_add_edge(b, es[e][0], es[e][1], 10);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    dp_env *env = dp_env_alloc(g, c, &err);
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
    ck_assert_int_eq(dp_env_step(env, 0, 0, &err), DP_OK);
    ck_assert_int_eq(dp_env_step(env, 2, 1, &err), DP_OK);
    ck_assert_int_eq(dp_env_step(env, 3, 0, &err), DP_OK);
    ck_assert_double_eq(env->est_start[3], 22);
    long before = env->n_resim;
    ck_assert_double_eq(dp_env_est_start(env, 1, 0), 1);
    ck_assert_int_eq(dp_env_step(env, 1, 0, &err), DP_OK);
    ck_assert_int_gt(env->n_resim, before); /* a overtook x: the prefix was simulated again */
    ck_assert_double_eq(env->est_start[3], 31);
    ck_assert_double_eq(dp_env_makespan(env), 32);
    dp_engine_schedule s;
    ck_assert_int_eq(dp_engine_run(e, env->assignment, NULL, &s, &err), DP_OK);
    ck_assert_double_eq(s.makespan, 32);
    /* issue 33: an estimate of an op that is not ready is refused, in both states (it read the
     * cost tables with a predecessor's device -1, past their end) */
    dp_env_reset(env);
    double t = -7;
    ck_assert_int_eq(dp_env_est_start_checked(env, 0, 1, &t, &err), DP_OK);
    ck_assert_double_eq(t, dp_env_est_start(env, 0, 1));
    t = -7;
    ck_assert_int_eq(dp_env_est_start_checked(env, 3, 0, &t, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "op 3 is not in the ready set"));
    ck_assert_int_eq(dp_env_est_start_checked(env, 4, 0, &t, &err), DP_EINVAL);
    ck_assert_int_eq(dp_env_est_start_checked(env, 0, 2, &t, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "device 2 out of range"));
    ck_assert_double_eq(t, -7); /* nothing written */
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_APPEND, NULL, &err), DP_OK);
    ck_assert_int_eq(dp_env_est_start_checked(env, 2, 0, &t, &err), DP_EINVAL);
    dp_env_free(env);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* A review: dp_env_cp_select under DP_ENV_READY_BY_KEY took the first of equal b-levels in heap
 * order (op 1 here), not the lowest id as the header says; and dp_env_alloc read another graph's
 * cost tables past their end */
START_TEST(cp_select_ties_by_key_and_foreign_costs)
{
    dp_graph_builder *b = dp_graph_builder_alloc("two", "two", DP_GRAPH_COST_TIME);
    dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_cost *c = dp_cost_graph(g, 1, &err);
    dp_env *env = dp_env_alloc(g, c, &err);
    ck_assert_ptr_nonnull(env);
    ck_assert_int_eq(dp_env_cp_select(env), 0);
    const double key[2] = {0, 1};
    dp_env_set_ready_key(env, key);
    ck_assert_int_eq(env->ready[0], 1); /* the heap's order */
    ck_assert_int_eq(dp_env_cp_select(env), 0);
    dp_env_set_ready_order(env, DP_ENV_READY_BY_BLEVEL);
    ck_assert_int_eq(dp_env_cp_select(env), 0);
    dp_env_free(env);
    /* cost tables of another graph */
    dp_graph *big = small_chainmm();
    dp_error_clear(&err);
    ck_assert_ptr_null(dp_env_alloc(big, c, &err));
    ck_assert_int_eq(err.code, DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "another graph"));
    dp_graph_free(big);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(engine_features)
{
    /* the state of append_is_another_scheduler; b (5 units, after a) is placed next */
    dp_graph *g = overtake_graph();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    dp_env *env = dp_env_alloc(g, c, &err);
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
    const int ops[] = {0, 3, 4}, devs[] = {0, 1, 0};
    for (int i = 0; i < 3; i++) ck_assert_int_eq(dp_env_step(env, ops[i], devs[i], &err), DP_OK);
    enum { F = 12, FH = DP_ENV_MAX_DEVICE_FEATURES };
    ck_assert_int_eq(dp_env_n_features(DP_ENV_FEATURES_ENGINE), F);
    ck_assert_int_eq(dp_env_n_features(DP_ENV_FEATURES_HINT), FH);
    ck_assert_int_eq(FH, F + 1);
    ck_assert_int_eq(dp_env_n_features(DP_ENV_FEATURES_DOPPLER), DP_ENV_N_DEVICE_FEATURES);
    double f[2 * F], f5[2 * DP_ENV_N_DEVICE_FEATURES], g5[2 * DP_ENV_N_DEVICE_FEATURES];
    /* a (after s on 0) on device 0 arrives at 1, before x (22): it overtakes x's 1 unit */
    dp_env_device_features_of(env, DP_ENV_FEATURES_ENGINE, 1, f);
    ck_assert_double_eq(f[4], 1);
    ck_assert_double_eq(f[8], 1);
    /* on 1 it arrives at 1 + 10 = 11, with c (a tie): s sends to a before c (edge order), so a
     * queues first and starts at 11, ahead of c */
    ck_assert_double_eq(f[F + 4], 11);
    ck_assert_int_eq(dp_env_step(env, 1, 0, &err), DP_OK);
    /* b: on 0 it starts at 2 (a ends at 2), on 1 at 12 (input 2 + 10; c holds 1 until 12) */
    dp_env_device_features_of(env, DP_ENV_FEATURES_ENGINE, 2, f);
    const double want0[F] = {3, 1, 1, 2, 2, 7, 0, 20, 1, 0, 0, 0};
    const double want1[F] = {1, 0, 0, 0, 12, 17, 0, 11, 0, 0, 10, 0};
    for (int k = 0; k < F; k++) {
        ck_assert_msg(f[k] == want0[k], "device 0 feature %d: %g, want %g", k, f[k], want0[k]);
        ck_assert_msg(f[F + k] == want1[k], "device 1 feature %d: %g, want %g", k, f[F + k], want1[k]);
    }
    /* the hint set: those twelve, then 1 on the device the hint gives the op (0 without one) */
    double fh[2 * FH];
    dp_env_device_features_of(env, DP_ENV_FEATURES_HINT, 2, fh);
    for (int k = 0; k < F; k++) {
        ck_assert_double_eq(fh[k], want0[k]);
        ck_assert_double_eq(fh[FH + k], want1[k]);
    }
    ck_assert_double_eq(fh[F], 0);
    ck_assert_double_eq(fh[FH + F], 0);
    const int hint[] = {0, 0, 1, 1, 0};
    ck_assert_int_eq(g->n_ops, 5);
    dp_env_set_hint(env, hint);
    dp_env_device_features_of(env, DP_ENV_FEATURES_HINT, 2, fh);
    ck_assert_double_eq(fh[F], 0);
    ck_assert_double_eq(fh[FH + F], 1);
    ck_assert_double_eq(fh[FH + 4], want1[4]);
    /* the authors' set is the first five columns */
    dp_env_device_features_of(env, DP_ENV_FEATURES_DOPPLER, 2, f5);
    dp_env_device_features(env, 2, g5);
    for (int k = 0; k < 2 * DP_ENV_N_DEVICE_FEATURES; k++) ck_assert_double_eq(f5[k], g5[k]);
    dp_env_reset(env); /* the hint stays */
    dp_env_device_features_of(env, DP_ENV_FEATURES_HINT, 0, fh);
    ck_assert_double_eq(fh[F], 1);
    ck_assert_double_eq(fh[FH + F], 0);
    dp_env_free(env);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* Columns 8 and 9 on the fast path (device_sums) sum over d's ops in the order they were placed,
 * as the definition (dp_env.h) walks them: here the definition's walk over the placed ops, at
 * every fifth step of random episodes placed far from the order the ops run in, so that the
 * lists of ops arriving after r run past the 48 of the short sort (the bitmap of ranks: the
 * order it reads back must be the placement order, bit for bit). */
START_TEST(engine_feature_sums_placed_order)
{
    /* 40 chains of 20 ops (times 1 / (0.4 + u), u uniform: every bit of the mantissa used, so
     * that a sum's bits depend on its order; 0.5 + 2.5 u left sums of 100 ops exact), op i of a
     * chain also feeding op i + 1 of the next one at random; placed mostly chain by chain (the
     * ready op of the highest id), so an op that arrives early on d is placed after many of d's
     * ops that arrive late */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9);
    enum { CHAINS = 40, LEN = 20 };
    dp_graph_builder *b = dp_graph_builder_alloc("chains", "chains", DP_GRAPH_COST_TIME);
    for (int i = 0; i < CHAINS * LEN; i++)
        dp_graph_builder_add_op(b, NULL, NULL, 1 / (0.4 + gsl_rng_uniform(r)), 1 / (0.5 + gsl_rng_uniform(r)));
    for (int ch = 0; ch < CHAINS; ch++)
        for (int i = 0; i + 1 < LEN; i++) {
            dp_graph_builder_add_edge(b, ch * LEN + i, ch * LEN + i + 1, 1);
            if (ch + 1 < CHAINS && gsl_rng_uniform(r) < 0.2) dp_graph_builder_add_edge(b, ch * LEN + i, (ch + 1) * LEN + i + 1, 1);
        }
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_builder_free(b);
    const int D = 4;
    dp_cost *c = dp_cost_graph(g, D, &err);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    dp_env *env = dp_env_alloc(g, c, &err);
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, e, &err), DP_OK);
    const int F = dp_env_n_features(DP_ENV_FEATURES_ENGINE), n = g->n_ops;
    double *f = malloc((size_t)D * F * sizeof *f);
    int *order = malloc((size_t)n * sizeof *order);
    int longest = 0, checked = 0;
    for (int ep = 0; ep < 2; ep++) {
        dp_env_reset(env);
        int placed = 0;
        while (!dp_env_done(env)) {
            int v = env->ready[gsl_rng_uniform_int(r, (unsigned long)env->n_ready)];
            if (gsl_rng_uniform(r) < 0.8)
                for (int i = 0; i < env->n_ready; i++)
                    if (env->ready[i] > v) v = env->ready[i];
            if (env->step % 5 == 0) {
                dp_env_device_features_of(env, DP_ENV_FEATURES_ENGINE, v, f);
                const dp_sim_prefix *p = env->prefix;
                const double L = env->blevel[v] - dp_cost_mean_op(c, v);
                for (int d = 0; d < D; d++) {
                    const double rd = env->cand_ready[d], end = f[(size_t)d * F + 5];
                    double overtaken = 0, busy = 0;
                    int after = 0;
                    for (int k = 0; k < placed; k++) {
                        const int x = order[k];
                        if (env->assignment[x] != d) continue;
                        if (p->ready[x] > rd) {
                            overtaken += dp_cost_op(c, x, d);
                            after++;
                        }
                        const double lo = p->start[x] > end ? p->start[x] : end;
                        const double hi = p->end[x] < end + L ? p->end[x] : end + L;
                        if (L > 0 && hi > lo) busy += hi - lo;
                    }
                    if (after > longest) longest = after;
                    ck_assert_msg(f[(size_t)d * F + 8] == overtaken, "step %d device %d: overtaken %.17g, walk %.17g",
                                  env->step, d, f[(size_t)d * F + 8], overtaken);
                    ck_assert_msg(f[(size_t)d * F + 9] == (L > 0 ? busy / L : 0), "step %d device %d: busy %.17g, walk %.17g",
                                  env->step, d, f[(size_t)d * F + 9], L > 0 ? busy / L : 0);
                    checked++;
                }
            }
            const int d = (int)gsl_rng_uniform_int(r, (unsigned long)D);
            ck_assert_int_eq(dp_env_step(env, v, d, &err), DP_OK);
            order[placed++] = v;
        }
    }
    ck_assert_int_gt(checked, 500);
    ck_assert_int_ge(longest, 96); /* the bitmap's lists, not only the short sort's */
    gsl_rng_free(r);
    free(f); free(order);
    dp_env_free(env);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

static int fixed_cost(void *ctx, const int *a, double *cost, dp_error *err)
{
    (void)ctx; (void)a; (void)err;
    *cost = 1;
    return DP_OK;
}

START_TEST(trainer_engine_state)
{
    dp_train_config cfg;
    dp_train_config_default(&cfg);
    ck_assert_int_eq(cfg.state, DP_ENV_STATE_APPEND);
    ck_assert_int_eq(cfg.arch.device_features, DP_ENV_FEATURES_DOPPLER);
    dp_error err;
    ck_assert_int_eq(dp_train_config_from_json_text(&cfg, "{\"state\": \"engine\", \"network\": {\"features\": \"engine\", "
                                                    "\"hidden\": 8, \"mlp_hidden\": 8, \"steps\": 2, \"edge_hidden\": 4}}", &err), DP_OK);
    ck_assert_int_eq(cfg.state, DP_ENV_STATE_ENGINE);
    ck_assert_int_eq(cfg.arch.device_features, DP_ENV_FEATURES_ENGINE);
    char *js = dp_train_config_to_json(&cfg);
    ck_assert_ptr_nonnull(strstr(js, "\"state\": \"engine\""));
    ck_assert_ptr_nonnull(strstr(js, "\"features\": \"engine\""));
    dp_train_config back;
    dp_train_config_default(&back);
    ck_assert_int_eq(dp_train_config_from_json_text(&back, js, &err), DP_OK);
    ck_assert_int_eq(back.state, DP_ENV_STATE_ENGINE);
    ck_assert_int_eq(back.arch.device_features, DP_ENV_FEATURES_ENGINE);
    free(js);
    dp_train_config bad;
    dp_train_config_default(&bad);
    ck_assert_int_eq(dp_train_config_from_json_text(&bad, "{\"state\": \"exact\"}", &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "state"));
    ck_assert_int_eq(dp_train_config_from_json_text(&bad, "{\"network\": {\"features\": 3}}", &err), DP_EINVAL);

    dp_graph *g = random_dag(30, 2.0, 9);
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    /* the engine state needs the simulator's oracle */
    dp_oracle other = {.name = "fixed", .cost = fixed_cost, .ctx = NULL};
    ck_assert_ptr_null(dp_train_alloc(g, c, &cfg, &other, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "engine"));
    dp_oracle o = dp_engine_oracle(e);
    /* the simulator's oracle declares its engine; any other has none (no cast back) */
    ck_assert_ptr_eq(o.engine, e);
    ck_assert_ptr_null(other.engine);
    dp_train *tr = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_msg(tr != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_train_networks(tr)->FD, dp_env_n_features(DP_ENV_FEATURES_ENGINE));
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_IL, 4, NULL, &err), DP_OK);
    int *a = malloc((size_t)g->n_ops * sizeof *a);
    double ms, sim, agree[2];
    ck_assert_int_eq(dp_train_place(tr, 0, 1, a, &ms, agree, &err), DP_OK);
    ck_assert_int_eq(dp_oracle_cost(&o, a, &sim, &err), DP_OK);
    ck_assert_double_eq(ms, sim);
    free(a);
    dp_train_free(tr);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* network.features "hint": the trainer makes each graph's best instant placement first (its six
 * simulations counted), the PLC reads it as column 12 and Stage I imitates it, so the greedy
 * policy after Stage I places as the best instant method (every op on the hint's device). The
 * test that held the wrong value: without the hint as Stage I's target (the critical-path
 * teacher) the placement is cp's, not the best instant one. */
START_TEST(trainer_hint_features)
{
    dp_train_config cfg;
    dp_train_config_default(&cfg);
    dp_error err;
    ck_assert_int_eq(dp_train_config_from_json_text(&cfg, "{\"state\": \"engine\", \"network\": {\"features\": \"hint\", "
                                                    "\"hidden\": 16, \"mlp_hidden\": 16, \"steps\": 2, \"edge_hidden\": 4}, "
                                                    "\"stages\": {\"il\": {\"patience\": 0}}}", &err), DP_OK);
    ck_assert_int_eq(cfg.arch.device_features, DP_ENV_FEATURES_HINT);
    char *js = dp_train_config_to_json(&cfg);
    ck_assert_ptr_nonnull(strstr(js, "\"features\": \"hint\""));
    free(js);
    dp_graph *g = random_dag(30, 2.0, 9);
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    dp_oracle o = dp_engine_oracle(e);
    /* the best instant placement, as the trainer makes it */
    dp_search_anneal_config sc;
    dp_search_anneal_config_init(&sc);
    snprintf(sc.init, sizeof sc.init, "best-instant");
    int *best = malloc((size_t)g->n_ops * sizeof *best), *a = malloc((size_t)g->n_ops * sizeof *a);
    long spent = 0;
    double best_ms, ms, sim, agree[2];
    ck_assert_int_eq(dp_search_start(g, c, &o, &sc, cfg.seed, best, &spent, &err), DP_OK);
    ck_assert_int_eq(spent, 6);
    ck_assert_int_eq(dp_oracle_cost(&o, best, &best_ms, &err), DP_OK);
    dp_train *tr = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_msg(tr != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_train_networks(tr)->FD, 13); /* magnitude off: the 13 columns */
    ck_assert_int_ge(dp_train_simulations(tr), 6);
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_IL, 200, NULL, &err), DP_OK);
    ck_assert_int_eq(dp_train_place(tr, 0, 1, a, &ms, agree, &err), DP_OK);
    ck_assert_int_eq(dp_oracle_cost(&o, a, &sim, &err), DP_OK);
    ck_assert_double_eq(ms, sim);
    ck_assert_double_eq(agree[1], 1);
    for (int v = 0; v < g->n_ops; v++) ck_assert_int_eq(a[v], best[v]);
    ck_assert_double_eq(ms, best_ms);
    free(a);
    free(best);
    dp_train_free(tr);
    dp_engine_free(e);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(state_errors)
{
    dp_graph *g = random_dag(20, 1.0, 1), *h = random_dag(20, 1.0, 2);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err), *ch = dp_cost_graph(h, 2, &err);
    dp_engine *eh = dp_engine_alloc(h, ch, NULL, &err);
    dp_env *env = dp_env_alloc(g, c, &err);
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, NULL, &err), DP_EINVAL);
    ck_assert_int_eq(dp_env_set_state(env, DP_ENV_STATE_ENGINE, eh, &err), DP_EINVAL);
    ck_assert_int_eq(env->state, DP_ENV_STATE_APPEND);
    dp_env_state st;
    dp_env_features fs;
    ck_assert_int_eq(dp_env_state_parse("engine", &st), DP_OK);
    ck_assert_int_eq(st, DP_ENV_STATE_ENGINE);
    ck_assert_int_eq(dp_env_state_parse("exact", &st), DP_EINVAL);
    ck_assert_int_eq(dp_env_features_parse("doppler", &fs), DP_OK);
    ck_assert_int_eq(fs, DP_ENV_FEATURES_DOPPLER);
    ck_assert_str_eq(dp_env_features_name(DP_ENV_FEATURES_ENGINE), "engine");
    dp_env_free(env);
    dp_engine_free(eh);
    dp_cost_free(c); dp_cost_free(ch);
    dp_graph_free(g); dp_graph_free(h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("env");
    TCase *t = tcase_create("engine state");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, prefix_runs);
    tcase_add_test(t, fast_path_exact);
    tcase_add_test(t, fast_path_resumed_exact);
    tcase_add_test(t, prefix_add_contract);
    tcase_add_test(t, state_switch_features);
    tcase_add_test(t, zero_time_race);
    tcase_add_test(t, fast_path_doppler_file);
    tcase_add_loop_test(t, general_engine_exact, 0, (int)(sizeof general_machines / sizeof general_machines[0]));
    tcase_add_test(t, general_engine_surrogate);
    tcase_add_test(t, general_engine_memory_error_policy_prefixes);
    tcase_add_test(t, append_is_another_scheduler);
    tcase_add_test(t, later_op_moves_earlier_one);
    tcase_add_test(t, state_errors);
    tcase_add_test(t, engine_features);
    tcase_add_test(t, engine_feature_sums_placed_order);
    tcase_add_test(t, cp_select_ties_by_key_and_foreign_costs);
    tcase_add_test(t, trainer_engine_state);
    tcase_add_test(t, trainer_hint_features);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
