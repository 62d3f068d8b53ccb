/* test_policy: the assignment environment and the foundation's placement methods. */
#include "dp_cost.h"
#include "dp_env.h"
#include "dp_graph.h"
#include "dp_place.h"
#include "dp_test.h"

#include <gsl/gsl_rng.h>
#include <string.h>

static dp_graph *fork_join(void)
{
    /* s(1) -> x(4), y(4), z(4) -> t(1); comm 2 from s, 3 from x,y,z */
    dp_graph_builder *b = dp_graph_builder_alloc("fj", "fj", DP_GRAPH_COST_TIME);
    const double comp[] = {1, 4, 4, 4, 1}, comm[] = {2, 3, 3, 3, 0};
    for (int i = 0; i < 5; i++) dp_graph_builder_add_op(b, NULL, NULL, comp[i], comm[i]);
    int es[][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}};
    for (int e = 0; e < 6; e++) dp_graph_builder_add_edge(b, es[e][0], es[e][1], comm[es[e][0]]);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    return g;
}

START_TEST(levels)
{
    dp_graph *g = fork_join();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    double bl[5], tl[5];
    dp_cost_levels(g, c, bl, tl);
    /* blevel(t)=1, x: 4+3+1=8, s: 1+2+8=11; tlevel(s)=0, x: 0+1+2=3, t: 3+4+3=10 */
    ck_assert_double_eq(bl[4], 1);
    ck_assert_double_eq(bl[1], 8);
    ck_assert_double_eq(bl[0], 11);
    ck_assert_double_eq(tl[0], 0);
    ck_assert_double_eq(tl[2], 3);
    ck_assert_double_eq(tl[4], 10);
    ck_assert_double_eq(dp_cost_critical_path(g, c), 11);
    /* lower bound: max(cp without comm = 1+4+1 = 6, work/3 = 14/3) = 6 */
    ck_assert_double_eq(dp_cost_lower_bound(g, c), 6);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(env_steps)
{
    dp_graph *g = fork_join();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_env *env = dp_env_alloc(g, c, &err);
    ck_assert_int_eq(env->n_ready, 1);
    ck_assert_int_eq(dp_env_step(env, 1, 0, &err), DP_EINVAL); /* x not ready */
    ck_assert_int_eq(dp_env_step(env, 0, 0, &err), DP_OK);
    ck_assert_int_eq(env->n_ready, 3);
    /* x on device 0: avail 1, input local -> 1; on device 1: 1 + 2 = 3 */
    ck_assert_double_eq(dp_env_est_start(env, 1, 0), 1);
    ck_assert_double_eq(dp_env_est_start(env, 1, 1), 3);
    ck_assert_int_eq(dp_env_cp_place(env, 1), 0);
    dp_env_step(env, 1, 0, &err);
    /* y: device 0 busy until 5, device 1 at 3 */
    ck_assert_int_eq(dp_env_cp_place(env, 2), 1);
    unsigned char marks[3];
    ck_assert_int_eq(dp_env_cp_select_all(env, marks), 2); /* y and z tie on b-level */
    ck_assert_int_eq(dp_env_cp_select(env), 2);            /* lowest id */
    dp_env_free(env);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* the accessors and setters bindings use instead of laying the structs out (issue 28 item 7) */
START_TEST(binding_accessors)
{
    dp_graph *g = fork_join();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    ck_assert_int_eq(dp_graph_get_n_ops(g), 5);
    ck_assert_int_eq(dp_graph_get_n_edges(g), 6);
    ck_assert_int_eq(dp_graph_get_cost_kind(g), DP_GRAPH_COST_TIME);
    ck_assert_double_eq(dp_graph_get_work(g)[1], 4);
    ck_assert_int_eq(dp_graph_get_pred_ptr(g)[5], 6);
    int n = 0;
    ck_assert_int_eq(dp_graph_get_sinks(g, &n)[0], 4);
    ck_assert_int_eq(n, 1);
    const int64_t *dims = NULL;
    ck_assert_int_eq(dp_graph_get_op_shape(g, 0, &dims), 0);
    ck_assert_ptr_nonnull(dims);
    ck_assert_int_eq(dp_cost_get_n_devices(c), 2);
    ck_assert_double_eq(dp_cost_get_op_time(c)[1 * 2 + 1], 4);
    dp_env *env = dp_env_alloc(g, c, &err);
    const int *ready = dp_env_get_ready(env);
    const double *end = dp_env_get_est_end(env);
    ck_assert_int_eq(dp_env_get_n_ready(env), 1);
    ck_assert_int_eq(dp_env_step(env, 0, 1, &err), DP_OK);
    /* the same arrays, updated in place by the step */
    ck_assert_ptr_eq(dp_env_get_ready(env), ready);
    ck_assert_int_eq(dp_env_get_step(env), 1);
    ck_assert_int_eq(dp_env_get_n_ready(env), 3);
    ck_assert_int_eq(ready[0], 1);
    ck_assert_int_eq(dp_env_get_assignment(env)[0], 1);
    ck_assert_double_eq(end[0], 1);
    ck_assert_double_eq(dp_env_get_dev_work(env)[1], 1);
    dp_env_free(env);

    /* place options by key: the command's refusals, text copied, NULL back to the default */
    dp_place_options *o = dp_place_options_alloc(&err);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(dp_place_options_set(o, "seed", "18446744073709551615", &err), DP_OK);
    ck_assert_uint_eq(o->seed, UINT64_MAX);
    ck_assert_int_eq(dp_place_options_set(o, "seed", "18446744073709551616", &err), DP_EINVAL);
    ck_assert_int_eq(dp_place_options_set(o, "seed", "-1", &err), DP_EINVAL);
    ck_assert_uint_eq(o->seed, UINT64_MAX);
    ck_assert_int_eq(dp_place_options_set(o, "samples", "0", &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "samples"));
    ck_assert_int_eq(dp_place_options_set(o, "budget", "12x", &err), DP_EINVAL);
    ck_assert_int_eq(dp_place_options_set(o, "nope", "1", &err), DP_EINVAL);
    ck_assert_int_eq(dp_place_options_set(o, "ties", "heap", &err), DP_OK);
    ck_assert_int_eq(o->list_ties, 1);
    char path[] = "policy.h5";
    ck_assert_int_eq(dp_place_options_set(o, "checkpoint", path, &err), DP_OK);
    path[0] = 'X';
    ck_assert_str_eq(o->checkpoint, "policy.h5");
    ck_assert_int_eq(dp_place_check_options("cp", o, &err), DP_EINVAL);
    ck_assert_int_eq(dp_place_options_set(o, "checkpoint", NULL, &err), DP_OK);
    ck_assert_int_eq(dp_place_options_set(o, "ties", NULL, &err), DP_OK);
    ck_assert_ptr_null(o->checkpoint);
    ck_assert_int_eq(dp_place_check_options("cp", o, &err), DP_OK);
    ck_assert_int_eq(dp_place_options_set(o, "refine", "tabu", &err), DP_EINVAL);
    ck_assert_int_eq(dp_place_options_set(o, "refine", "local", &err), DP_OK);
    ck_assert_int_eq(dp_place_options_set(o, "refine_budget", "50", &err), DP_OK);
    ck_assert_int_eq(o->refine_budget, 50);
    ck_assert_int_eq(dp_place_options_set(o, "append_only", "true", &err), DP_OK);
    ck_assert_int_eq(o->list_append_only, 1);
    dp_place_options_free(o);
    dp_place_options_free(NULL);

    /* the method table by index */
    const dp_place_method *m = dp_place_method_at(0);
    ck_assert_ptr_nonnull(m);
    int k = 0;
    while (dp_place_method_at(k)) k++;
    ck_assert_ptr_null(dp_place_method_at(k + 1));
    ck_assert_ptr_eq(dp_place_find(dp_place_method_get_name(dp_place_method_at(k - 1))), dp_place_method_at(k - 1));
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(cp_fork_join)
{
    dp_graph *g = fork_join();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    int a[5];
    double prio[5];
    int hp = 0;
    dp_place_options o;
    dp_place_options_init(&o);
    ck_assert_int_eq(dp_place("cp", g, c, &o, a, prio, &hp, &err), DP_OK);
    ck_assert_int_eq(hp, 1);
    /* s on 0; x on 0 (start 1); y on 1 (start 3); z: dev0 avail 5, dev1 avail 7, dev2 3 -> 2 */
    ck_assert_int_eq(a[0], 0);
    ck_assert_int_eq(a[1], 0);
    ck_assert_int_eq(a[2], 1);
    ck_assert_int_eq(a[3], 2);
    ck_assert_int_eq(a[4], 0);
    ck_assert_int_eq(dp_place("nope", g, c, &o, a, NULL, NULL, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "known: cp"));
    /* issue 33: a NULL name reached strcmp (a fault under Python's place(graph, None)) */
    ck_assert_int_eq(dp_place(NULL, g, c, &o, a, NULL, NULL, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "no method name"));
    ck_assert_ptr_null(dp_place_find(NULL));
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(simple_methods)
{
    dp_graph *g = fork_join();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    int a[5], b[5];
    dp_place_options o;
    dp_place_options_init(&o);
    o.seed = 7;
    dp_place("random", g, c, &o, a, NULL, NULL, &err);
    dp_place("random", g, c, &o, b, NULL, NULL, &err);
    for (int i = 0; i < 5; i++) { ck_assert_int_eq(a[i], b[i]); ck_assert(a[i] >= 0 && a[i] < 3); }
    dp_place("round-robin", g, c, &o, a, NULL, NULL, &err);
    for (int k = 0; k < 5; k++) ck_assert_int_eq(a[g->topo[k]], k % 3);
    o.device = 2;
    dp_place("single", g, c, &o, a, NULL, NULL, &err);
    for (int i = 0; i < 5; i++) ck_assert_int_eq(a[i], 2);
    o.device = 3;
    ck_assert_int_eq(dp_place("single", g, c, &o, a, NULL, NULL, &err), DP_EINVAL);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* The b-level heap order makes the same critical-path choices as the sorted-by-id scan, ties
 * included (random DAGs with many equal b-levels), and keeps env->ready a valid heap whose
 * positions dp_env_ready_index reports; the heap on a caller's key (dp_env_set_ready_key) tops
 * with argmax's choice over the id-ordered set at every step. */
START_TEST(ready_orders_agree)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 12345);
    for (int trial = 0; trial < 40; trial++) {
        const int n = 2 + (int)gsl_rng_uniform_int(r, 60);
        dp_graph_builder *b = dp_graph_builder_alloc("rnd", "rnd", DP_GRAPH_COST_TIME);
        for (int i = 0; i < n; i++)
            dp_graph_builder_add_op(b, NULL, NULL, (double)gsl_rng_uniform_int(r, 3), (double)gsl_rng_uniform_int(r, 3));
        for (int v = 1; v < n; v++)
            for (int u = 0; u < v; u++)
                if (gsl_rng_uniform(r) < 0.08) dp_graph_builder_add_edge(b, u, v, (double)gsl_rng_uniform_int(r, 4));
        dp_error err;
        dp_graph *g = dp_graph_builder_finish(b, &err);
        dp_graph_builder_free(b);
        ck_assert_msg(g != NULL, "%s", err.msg);
        dp_cost *c = dp_cost_graph(g, 1 + trial % 4, &err);
        dp_env *e1 = dp_env_alloc(g, c, &err), *e2 = dp_env_alloc(g, c, &err), *e3 = dp_env_alloc(g, c, &err);
        dp_env_set_ready_order(e2, DP_ENV_READY_BY_BLEVEL);
        /* a caller's key with many ties (and -0 beside 0): the heap's top is argmax's choice over
         * the id-ordered set, `>` in increasing id (the first of equal keys) */
        double *key = malloc((size_t)n * sizeof *key);
        for (int v = 0; v < n; v++) key[v] = gsl_rng_uniform(r) < 0.2 ? -0.0 : (double)gsl_rng_uniform_int(r, 3) - 1;
        dp_env_set_ready_key(e3, key);
        ck_assert_int_eq(e3->ready_order, DP_ENV_READY_BY_KEY);
        while (!dp_env_done(e1)) {
            ck_assert_int_eq(e1->n_ready, e2->n_ready);
            ck_assert_int_eq(e1->n_ready, e3->n_ready);
            int best = 0;
            for (int i = 1; i < e1->n_ready; i++)
                if (key[e1->ready[i]] > key[e1->ready[best]]) best = i;
            ck_assert_int_eq(e3->ready[0], e1->ready[best]);
            for (int i = 0; i < e3->n_ready; i++) ck_assert_int_eq(dp_env_ready_index(e3, e3->ready[i]), i);
            for (int i = 0; i < e2->n_ready; i++) {
                ck_assert_int_eq(dp_env_ready_index(e2, e2->ready[i]), i);
                ck_assert_int_ge(dp_env_ready_index(e1, e2->ready[i]), 0);
                if (i > 0) {
                    int p = e2->ready[(i - 1) / 2], q = e2->ready[i];
                    ck_assert(e2->blevel[p] > e2->blevel[q] || (e2->blevel[p] == e2->blevel[q] && p < q));
                }
            }
            int v = dp_env_cp_select(e1);
            ck_assert_int_eq(dp_env_cp_select(e2), v);
            int d = dp_env_cp_place(e1, v);
            ck_assert_int_eq(dp_env_cp_place(e2, v), d);
            /* now and then step an op that is not the top, to exercise removal inside the heap */
            if (e1->n_ready > 2 && gsl_rng_uniform(r) < 0.3) v = e1->ready[e1->n_ready - 1];
            ck_assert_int_eq(dp_env_step(e1, v, d, &err), DP_OK);
            ck_assert_int_eq(dp_env_step(e2, v, d, &err), DP_OK);
            ck_assert_int_eq(dp_env_step(e3, v, d, &err), DP_OK);
            ck_assert_int_eq(dp_env_ready_index(e2, v), -1);
            ck_assert_int_eq(dp_env_ready_index(e3, v), -1);
        }
        ck_assert(dp_env_done(e2));
        ck_assert(dp_env_done(e3));
        dp_env_set_ready_key(e3, NULL);
        ck_assert_int_eq(e3->ready_order, DP_ENV_READY_BY_ID);
        ck_assert_int_eq(e3->n_ready, g->n_sources);
        for (int i = 1; i < e3->n_ready; i++) ck_assert_int_lt(e3->ready[i - 1], e3->ready[i]);
        dp_env_free(e3);
        free(key);
        ck_assert_int_eq(dp_env_cp_select(e2), -1);
        for (int v = 0; v < n; v++) ck_assert_double_eq(e1->est_end[v], e2->est_end[v]);
        dp_env_free(e1);
        dp_env_free(e2);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");
    TCase *t = tcase_create("env");
    tcase_add_test(t, levels);
    tcase_add_test(t, env_steps);
    tcase_add_test(t, cp_fork_join);
    tcase_add_test(t, simple_methods);
    tcase_add_test(t, ready_orders_agree);
    tcase_add_test(t, binding_accessors);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
