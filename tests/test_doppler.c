/* test_doppler: the DOPPLER SEL and PLC networks (policy/dp_doppler.h): inputs (features, paths,
 * device features) by hand, and whole-network gradients against central finite differences. */
#include "dp_doppler.h"
#include "dp_env.h"
#include "dp_gradcheck.h"
#include "dp_h5io.h"
#include "dp_place.h"
#include "dp_problem.h"
#include "dp_test.h"
#include "dp_test_graphs.h"
#include "dp_train.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 2 -> 4, 3 -> 5, 4 -> 5, 0 -> 4; comp and comm per op */
static dp_graph *small_dag(void)
{
    dp_graph_builder *b = dp_graph_builder_alloc("dag6", "dag6", DP_GRAPH_COST_TIME);
    const double comp[] = {2, 4, 3, 5, 1, 2}, comm[] = {1, 2, 2, 1, 3, 0};
    for (int i = 0; i < 6; i++) dp_graph_builder_add_op(b, NULL, NULL, comp[i], comm[i]);
    int es[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {2, 4}, {3, 5}, {4, 5}, {0, 4}};
    for (int e = 0; e < 8; e++) dp_graph_builder_add_edge(b, es[e][0], es[e][1], comm[es[e][0]]);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    return g;
}

/* a chain of n ops, every edge the same size (one edge class) */
static dp_graph *chain(int n)
{
    dp_graph_builder *b = dp_graph_builder_alloc("chain", "chain", DP_GRAPH_COST_TIME);
    for (int i = 0; i < n; i++) dp_graph_builder_add_op(b, NULL, NULL, 1 + i % 5, 1);
    for (int i = 0; i + 1 < n; i++) dp_graph_builder_add_edge(b, i, i + 1, 1);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

/* The authors' training defaults with tiny networks (fast tests). */
static void tiny_config(dp_train_config *cfg)
{
    dp_train_config_default(cfg);
    cfg->arch.hidden = 8;
    cfg->arch.mlp_hidden = 8;
    cfg->arch.steps = 2;
    cfg->arch.edge_hidden = 4;
}

START_TEST(memory_linear_and_checked)
{
    /* the networks' memory is estimated before allocating: linear in the ops of a chain (the
     * b- and t-paths used to be listed, n^2 / 2 entries each), and refused over the limit */
    dp_doppler_arch a;
    dp_doppler_arch_default(&a);
    size_t bytes[2];
    for (int k = 0; k < 2; k++) {
        dp_graph *g = chain(k ? 4000 : 2000);
        dp_error err;
        dp_cost *c = dp_cost_graph(g, 4, &err);
        dp_doppler *dd = dp_doppler_alloc(g, c, &a, &err);
        ck_assert_msg(dd != NULL, "%s", err.msg);
        bytes[k] = dd->bytes;
        dp_doppler_free(dd);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    /* twice the ops, at most twice the bytes (the parameters are a constant part) */
    ck_assert_msg(bytes[1] <= 2 * bytes[0] && bytes[1] > bytes[0], "%zu then %zu bytes", bytes[0], bytes[1]);
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    setenv("DOPPLER_MEM_LIMIT", "1M", 1);
    dp_doppler *dd = dp_doppler_alloc(g, c, &a, &err);
    unsetenv("DOPPLER_MEM_LIMIT");
    ck_assert_ptr_null(dd);
    ck_assert_int_eq(err.code, DP_ENOMEM);
    ck_assert_msg(strstr(err.msg, "DOPPLER's networks for this graph needs about") != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "DOPPLER_MEM_LIMIT") != NULL, "%s", err.msg);
    dd = dp_doppler_alloc(g, c, &a, &err);
    ck_assert_msg(dd != NULL, "%s", err.msg);
    ck_assert_uint_gt(dd->bytes, 1 << 20);
    dp_doppler_free(dd);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(inputs)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_doppler_arch a;
    dp_doppler_arch_default(&a);
    a.hidden = 8; a.mlp_hidden = 4; a.steps = 2; a.edge_hidden = 4;
    dp_doppler *dd = dp_doppler_alloc(g, c, &a, &err);
    ck_assert_ptr_nonnull(dd);
    /* b-levels: 5: 2; 4: 1+3+2 = 6; 3: 5+1+2 = 8; 2: 3 + max(2+8, 2+6) = 13; 1: 4+2+8 = 14;
     * 0: 2 + max(1+14, 1+13, 1+6) = 17. b-path of 0: 0 1 3 5; of 2: 2 3 5 */
    ck_assert_float_eq(dd->Xraw[0 * 5 + 1], 17);
    ck_assert_int_eq(dd->bnext[0], 1);
    ck_assert_int_eq(dd->bnext[1], 3);
    ck_assert_int_eq(dd->bnext[3], 5);
    ck_assert_int_eq(dd->bnext[5], -1);
    ck_assert_int_eq(dd->bnext[2], 3);
    /* t-levels: 1: 0+2+1 = 3; 2: 3; 3: max(3+4+2, 3+3+2) = 9; 4: max(3+3+2, 0+2+1) = 8;
     * 5: max(9+5+1, 8+1+3) = 15. t-path of 5: 5 3 1 0 (ties between 1 and 2 at 3: 1 is lower
     * id, but 3 is reached from 1 with 3+4+2 = 9 > 8) */
    ck_assert_float_eq(dd->Xraw[5 * 5 + 2], 15);
    ck_assert_int_eq(dd->tnext[5], 3);
    ck_assert_int_eq(dd->tnext[3], 1);
    ck_assert_int_eq(dd->tnext[1], 0);
    ck_assert_int_eq(dd->tnext[0], -1);
    /* in/out communication: op 3 in = 2 + 2, out = 1 */
    ck_assert_float_eq(dd->Xraw[3 * 5 + 3], 4);
    ck_assert_float_eq(dd->Xraw[3 * 5 + 4], 1);
    /* z-scored columns have mean 0 */
    for (int j = 0; j < 5; j++) {
        double s = 0;
        for (int v = 0; v < 6; v++) s += dd->X[v * 5 + j];
        ck_assert_double_eq_tol(s, 0, 1e-5);
    }
    /* bidirected message graph: 8 edges both ways, classes = distinct comm values {1, 2, 3} */
    ck_assert_int_eq(dd->eg->n_edges, 16);
    ck_assert_int_eq(dd->eg->n_classes, 3);
    dp_doppler_free(dd);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(device_features)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_env *env = dp_env_alloc(g, c, &err);
    dp_env_step(env, 0, 0, &err); /* 0 on dev 0: 0..2 */
    dp_env_step(env, 2, 1, &err); /* 2 on dev 1: starts 2+1 = 3, ends 6 */
    dp_env_step(env, 1, 0, &err); /* 1 on dev 0: 2..6 */
    double f[2 * 5];
    dp_env_device_features(env, 3, f); /* inputs 1 (dev 0, 2..6) and 2 (dev 1, 3..6) */
    ck_assert_double_eq(f[0], 6);   /* work on dev 0: 2 + 4 */
    ck_assert_double_eq(f[1], 4);   /* input 1's time */
    ck_assert_double_eq(f[2], 2);
    ck_assert_double_eq(f[3], 6);
    ck_assert_double_eq(f[4], 8);   /* dev 0: avail 6, input 2 arrives 6 + 2 */
    ck_assert_double_eq(f[5], 3);
    ck_assert_double_eq(f[6], 3);
    ck_assert_double_eq(f[7], 3);
    ck_assert_double_eq(f[8], 6);
    ck_assert_double_eq(f[9], 8);   /* dev 1: avail 6, input 1 arrives 6 + 2 */
    dp_env_device_features(env, 4, f); /* inputs 0 (dev 0) and 2 (dev 1) */
    ck_assert_double_eq(f[1], 2);
    ck_assert_double_eq(f[6], 3);
    dp_env_free(env);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* device_magnitude: the PLC's device inputs are the z-scores, then each column centred over
 * the devices in units of the graph's lower bound (small_dag: critical path 0-1-3-5 without
 * transfers, 2 + 4 + 5 + 2 = 13 > work 17 / 3), the busy fraction (column 9) centred only.
 * Ops 0 and 1 on devices 0 and 1: op time already on the devices 2, 4, 0, mean 2, so column 0's
 * magnitudes are 0, 2/13, -2/13, where its z-scores are 0, +-1.22 whatever the sizes. */
START_TEST(device_magnitude_columns)
{
    dp_error err;
    dp_graph *g = small_dag();
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_doppler_arch a;
    dp_doppler_arch_default(&a);
    a.hidden = 6; a.mlp_hidden = 5; a.steps = 2; a.edge_hidden = 3;
    a.device_features = DP_ENV_FEATURES_ENGINE;
    a.device_magnitude = 1;
    dp_doppler *dd = dp_doppler_alloc(g, c, &a, &err);
    ck_assert_msg(dd != NULL, "%s", err.msg);
    const int FE = dp_env_n_features(DP_ENV_FEATURES_ENGINE), FD = dd->FD, D = 3;
    ck_assert_int_eq(FD, 2 * FE);
    ck_assert_double_eq_tol(dd->magnitude_unit, 13, 1e-12);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    ck_assert_int_eq(dp_doppler_init(dd, r), DP_OK);
    dp_env *env = dp_env_alloc(g, c, &err);
    dp_doppler_prepare(dd);
    dp_doppler_episode_begin(dd);
    dp_env_reset(env);
    float logits[3];
    dp_doppler_plc_forward(dd, env, 0, logits);
    dp_doppler_plc_commit(dd, 0, 0);
    ck_assert_int_eq(dp_env_step(env, 0, 0, &err), DP_OK);
    dp_doppler_plc_forward(dd, env, 1, logits);
    dp_doppler_plc_commit(dd, 1, 1);
    ck_assert_int_eq(dp_env_step(env, 1, 1, &err), DP_OK);
    dp_doppler_plc_forward(dd, env, 2, logits);
    const float *row = dd->p_DFz + (size_t)2 * D * FD;
    const double want0[3] = {0, 2.0 / 13, -2.0 / 13};
    for (int k = 0; k < D; k++) {
        ck_assert_double_eq_tol(row[k * FD + FE + 0], want0[k], 1e-6);
        ck_assert_double_eq_tol(fabs(row[k * FD + 0]), k == 0 ? 0 : sqrt(1.5), 1e-3);
    }
    /* every column: centred raw / unit (unit 1 for the busy fraction) */
    for (int j = 0; j < FE; j++) {
        double mean = 0;
        for (int k = 0; k < D; k++) mean += dd->devfeat[k * FE + j];
        mean /= D;
        for (int k = 0; k < D; k++)
            ck_assert_double_eq_tol(row[k * FD + FE + j], (dd->devfeat[k * FE + j] - mean) / (j == 9 ? 1 : 13), 1e-5);
    }
    /* the arch is checked */
    a.device_magnitude = 2;
    ck_assert_ptr_null(dp_doppler_alloc(g, c, &a, &err));
    ck_assert_int_eq(err.code, DP_EINVAL);
    gsl_rng_free(r);
    dp_env_free(env);
    dp_doppler_free(dd);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* ---- whole-network gradient check ---- */

typedef struct {
    dp_graph *g;
    dp_cost *c;
    dp_doppler *dd;
    dp_env *env;
    int acts_v[16], acts_d[16];
    float csel[16][8], cplc[16][4];
    double hw;
} net_ctx;

/* L = sum over steps of sum_i csel_i log pi_SEL(i) + sum_k cplc_k log pi_PLC(k) + hw (H_SEL + H_PLC),
 * along a fixed sequence of actions. With grad != 0 also fills the analytic gradients. */
static double net_run(net_ctx *x, int grad)
{
    dp_doppler *dd = x->dd;
    dp_env *env = x->env;
    dp_error err;
    if (grad) dp_doppler_zero_grad(dd);
    dp_doppler_prepare(dd);
    dp_doppler_episode_begin(dd);
    dp_env_reset(env);
    double L = 0;
    float z[8], p[8], lp[8], dz[8];
    for (int t = 0; t < env->n_ops; t++) {
        int nr = env->n_ready;
        for (int i = 0; i < nr; i++) z[i] = dp_doppler_sel_scores(dd)[env->ready[i]];
        if (dd->a.sel_dynamic) ck_assert_int_eq(dp_doppler_sel_dynamic_scores(dd, env, env->ready, nr, z), DP_OK);
        double H = dp_nn_softmax_forward(p, lp, z, nr);
        for (int i = 0; i < nr; i++) L += x->csel[t][i] * lp[i];
        L += x->hw * H;
        if (grad) {
            for (int i = 0; i < nr; i++) dz[i] = 0;
            dp_nn_log_softmax_backward(dz, x->csel[t], p, nr);
            dp_nn_entropy_backward(dz, (float)x->hw, p, lp, H, nr);
            for (int i = 0; i < nr; i++) dp_doppler_sel_dscore(dd, env->ready[i], dz[i]);
            if (dd->a.sel_dynamic) dp_doppler_sel_dynamic_backward(dd, t, nr, dz);
        }
        int v = x->acts_v[t], D = dd->D;
        dp_doppler_plc_forward(dd, env, v, z);
        H = dp_nn_softmax_forward(p, lp, z, D);
        for (int k = 0; k < D; k++) L += x->cplc[t][k] * lp[k];
        L += x->hw * H;
        if (grad) {
            for (int k = 0; k < D; k++) dz[k] = 0;
            dp_nn_log_softmax_backward(dz, x->cplc[t], p, D);
            dp_nn_entropy_backward(dz, (float)x->hw, p, lp, H, D);
            dp_doppler_plc_set_dlogits(dd, t, dz);
        }
        dp_doppler_plc_commit(dd, v, x->acts_d[t]);
        dp_env_step(env, v, x->acts_d[t], &err);
    }
    if (grad) {
        dp_doppler_episode_backward(dd, env);
        dp_doppler_backward(dd);
    }
    return L;
}

#ifndef GC_H
#define GC_H 2e-3 /* larger steps cross leaky-ReLU kinks and the sign flips of the per-device z-score */
#endif
static double net_loss(void *p)
{
    return net_run(p, 0);
}

/* the paper's network, the engine feature set with device_magnitude (its centred columns
 * in lower bounds enter "dev.w" too), and the dynamic SEL (its "dyn.*" tensors, issue 29) */
START_TEST(network_gradients)
{
    net_ctx x;
    memset(&x, 0, sizeof x);
    dp_error err;
    x.g = small_dag();
    x.c = dp_cost_graph(x.g, 3, &err);
    dp_doppler_arch a;
    dp_doppler_arch_default(&a);
    a.hidden = 6; a.mlp_hidden = 5; a.steps = 2; a.edge_hidden = 3;
    if (_i == 1) {
        a.device_features = DP_ENV_FEATURES_ENGINE;
        a.device_magnitude = 1;
    }
    if (_i == 2) a.sel_dynamic = 1;
    x.dd = dp_doppler_alloc(x.g, x.c, &a, &err);
    ck_assert_ptr_nonnull(x.dd);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    ck_assert_int_eq(dp_doppler_init(x.dd, r), DP_OK);
    /* biases are zero after init; make them non-zero so their gradients are exercised */
    for (size_t i = 0; i < x.dd->sel->n; i++) x.dd->sel->param[i] += (float)(0.2 * (gsl_rng_uniform(r) - 0.5));
    for (size_t i = 0; i < x.dd->plc->n; i++) x.dd->plc->param[i] += (float)(0.2 * (gsl_rng_uniform(r) - 0.5));
    x.env = dp_env_alloc(x.g, x.c, &err);
    /* a fixed rollout: the ops in id order (a topological order here), devices 0 1 2 0 1 2 */
    for (int t = 0; t < 6; t++) {
        x.acts_v[t] = t;
        x.acts_d[t] = t % 3;
        for (int i = 0; i < 8; i++) x.csel[t][i] = (float)(2 * gsl_rng_uniform(r) - 1);
        for (int k = 0; k < 4; k++) x.cplc[t][k] = (float)(2 * gsl_rng_uniform(r) - 1);
    }
    x.hw = 0.3;
    net_run(&x, 1);
    /* copies of the analytic gradients (the loss evaluations below do not touch grad, but keep
     * them apart anyway) */
    float *gs = malloc(x.dd->sel->n * sizeof(float)), *gp = malloc(x.dd->plc->n * sizeof(float));
    memcpy(gs, x.dd->sel->grad, x.dd->sel->n * sizeof(float));
    memcpy(gp, x.dd->plc->grad, x.dd->plc->n * sizeof(float));
    double gn = 0;
    for (size_t i = 0; i < x.dd->sel->n; i++) gn += fabs(gs[i]);
    ck_assert(gn > 1e-3); /* the check below must not pass vacuously */
    gn = 0;
    for (size_t i = 0; i < x.dd->plc->n; i++) gn += fabs(gp[i]);
    ck_assert(gn > 1e-3);
    int bad = 0;
    for (int i = 0; i < x.dd->sel->n_tensors; i++) {
        const dp_nn_tensor *t = &x.dd->sel->t[i];
        size_t n = (size_t)t->rows * t->cols;
        bad += dp_gradcheck(t->name, x.dd->sel->param + t->offset, gs + t->offset, n, n > 60 ? n / 60 : 1, net_loss, &x,
                            GC_H, 3e-2, 3e-3);
    }
    ck_assert_int_eq(bad, 0);
    if (_i == 2) {
        /* the dyn tensors were checked above, and their gradients are not all zero */
        double gd = 0;
        for (int i = 0; i < x.dd->sel->n_tensors; i++) {
            const dp_nn_tensor *t = &x.dd->sel->t[i];
            if (strncmp(t->name, "dyn.", 4) != 0) continue;
            for (size_t j = 0; j < (size_t)t->rows * t->cols; j++) gd += fabs(gs[t->offset + j]);
        }
        ck_assert(gd > 1e-3);
    }
    for (int i = 0; i < x.dd->plc->n_tensors; i++) {
        const dp_nn_tensor *t = &x.dd->plc->t[i];
        size_t n = (size_t)t->rows * t->cols;
        bad += dp_gradcheck(t->name, x.dd->plc->param + t->offset, gp + t->offset, n, n > 60 ? n / 60 : 1, net_loss, &x,
                            GC_H, 3e-2, 3e-3);
    }
    ck_assert_int_eq(bad, 0);
    free(gs);
    free(gp);
    gsl_rng_free(r);
    dp_env_free(x.env);
    dp_doppler_free(x.dd);
    dp_cost_free(x.c);
    dp_graph_free(x.g);
}
END_TEST

/* The dynamic SEL (issue 29) is opt-in and starts as the static one: with sel_dynamic 0 the
 * model has the tensors it always had; with 1 it has those (the same values from the same
 * seed: the dyn tensors draw last) and "dyn.w1", "dyn.b1", "dyn.w2", the last zero, so the
 * scores of every step are the static ones to the bit; a value other than 0 or 1 is refused. */
START_TEST(sel_dynamic_starts_static)
{
    dp_error err;
    dp_graph *g = small_dag();
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_doppler_arch a;
    dp_doppler_arch_default(&a);
    a.hidden = 6; a.mlp_hidden = 5; a.steps = 2; a.edge_hidden = 3;
    dp_doppler *dd[2];
    for (int k = 0; k < 2; k++) {
        a.sel_dynamic = k;
        dd[k] = dp_doppler_alloc(g, c, &a, &err);
        ck_assert_ptr_nonnull(dd[k]);
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(r, 5);
        ck_assert_int_eq(dp_doppler_init(dd[k], r), DP_OK);
        gsl_rng_free(r);
        dp_doppler_prepare(dd[k]);
    }
    ck_assert_int_eq(dd[1]->sel->n_tensors, dd[0]->sel->n_tensors + 3);
    for (int b = 0; b < 2; b++) {
        const dp_nn_params *p0 = b ? dd[0]->plc : dd[0]->sel, *p1 = b ? dd[1]->plc : dd[1]->sel;
        for (int i = 0; i < p0->n_tensors; i++) {
            const dp_nn_tensor *t0 = &p0->t[i], *t1 = &p1->t[i];
            ck_assert_str_eq(t0->name, t1->name);
            ck_assert_int_eq(memcmp(p0->param + t0->offset, p1->param + t1->offset,
                                    (size_t)t0->rows * t0->cols * sizeof(float)), 0);
        }
    }
    const dp_nn_tensor *w2 = &dd[1]->sel->t[dd[1]->m->s_dw2], *w1 = &dd[1]->sel->t[dd[1]->m->s_dw1];
    ck_assert_str_eq(w2->name, "dyn.w2");
    double s1 = 0;
    for (int j = 0; j < w1->rows * w1->cols; j++) s1 += fabs(dd[1]->sel->param[w1->offset + j]);
    ck_assert(s1 > 0); /* dyn.w1 is initialised */
    for (int j = 0; j < w2->rows * w2->cols; j++) ck_assert(dd[1]->sel->param[w2->offset + j] == 0.0f);
    ck_assert_int_eq(memcmp(dd[0]->s_score, dd[1]->s_score, (size_t)g->n_ops * sizeof(float)), 0);
    /* an episode in id order: every step's scores unchanged by the (zero) dynamic terms, and
     * the features within their documented ranges */
    dp_env *env = dp_env_alloc(g, c, &err);
    dp_doppler_episode_begin(dd[1]);
    for (int t = 0; t < g->n_ops; t++) {
        const int nr = env->n_ready;
        float z[8], z0[8];
        for (int i = 0; i < nr; i++) z[i] = z0[i] = dd[1]->s_score[env->ready[i]];
        ck_assert_int_eq(dp_doppler_sel_dynamic_scores(dd[1], env, env->ready, nr, z), DP_OK);
        ck_assert_int_eq(memcmp(z, z0, (size_t)nr * sizeof(float)), 0);
        const float *f = dd[1]->sd_feat + dd[1]->sd_off[t] * DP_DOPPLER_SEL_DYN_FEATURES;
        float mn[3] = {INFINITY, INFINITY, -INFINITY};
        for (int i = 0; i < nr; i++) {
            const float *fi = f + (size_t)i * DP_DOPPLER_SEL_DYN_FEATURES;
            ck_assert(fi[0] >= 0 && fi[1] >= 0 && fi[2] <= 0);
            ck_assert(fi[3] == 0 || fi[3] == 1);
            ck_assert(fi[4] >= 0 && fi[4] <= 1);
            mn[0] = fminf(mn[0], fi[0]); mn[1] = fminf(mn[1], fi[1]); mn[2] = fmaxf(mn[2], fi[2]);
        }
        /* relative to the ready set's extreme: it is 0 */
        ck_assert(mn[0] == 0 && mn[1] == 0 && mn[2] == 0);
        ck_assert_int_eq(dp_env_step(env, t, t % 3, &err), DP_OK);
    }
    dp_env_free(env);
    a.sel_dynamic = 2;
    ck_assert_ptr_null(dp_doppler_model_alloc(&a, &err));
    ck_assert_int_eq(err.code, DP_EINVAL);
    for (int k = 0; k < 2; k++) dp_doppler_free(dd[k]);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* One fixed episode of workspace dd (ops in id order, device t mod D) with fixed logit
 * gradients, its backward added into the model's gradients. */
static void episode_no_prepare(dp_doppler *dd, dp_env *env);
static void shared_episode(dp_doppler *dd, dp_env *env)
{
    dp_doppler_prepare(dd);
    episode_no_prepare(dd, env);
}

/* shared_episode after its prepare */
static void episode_no_prepare(dp_doppler *dd, dp_env *env)
{
    dp_error err;
    dp_doppler_episode_begin(dd);
    dp_env_reset(env);
    float lg[8], dz[8];
    for (int t = 0; t < dd->n; t++) {
        dp_doppler_sel_dscore(dd, t, 0.1f * (float)(t + 1));
        dp_doppler_plc_forward(dd, env, t, lg);
        for (int k = 0; k < dd->D; k++) dz[k] = (float)((k + t) % 3) - 1.0f;
        dp_doppler_plc_set_dlogits(dd, t, dz);
        dp_doppler_plc_commit(dd, t, t % dd->D);
        ck_assert_int_eq(dp_env_step(env, t, t % dd->D, &err), DP_OK);
    }
    dp_doppler_episode_backward(dd, env);
    dp_doppler_backward(dd);
}

/* One model bound to two device counts (issue 16): nothing in the parameters is sized by the
 * graph or the machine, both workspaces read the same parameters, and their gradients add. */
START_TEST(shared_model_two_graphs)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c3 = dp_cost_graph(g, 3, &err), *c5 = dp_cost_graph(g, 5, &err);
    dp_doppler_arch a;
    dp_doppler_arch_default(&a);
    a.hidden = 6; a.mlp_hidden = 5; a.steps = 2; a.edge_hidden = 3;
    dp_doppler_model *m = dp_doppler_model_alloc(&a, &err);
    ck_assert_ptr_nonnull(m);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4);
    ck_assert_int_eq(dp_doppler_model_init(m, r), DP_OK);
    dp_doppler *d3 = dp_doppler_bind(m, g, c3, &err), *d5 = dp_doppler_bind(m, g, c5, &err);
    ck_assert_ptr_nonnull(d3);
    ck_assert_ptr_nonnull(d5);
    ck_assert_ptr_eq(d3->plc, d5->plc);
    ck_assert_ptr_eq(d3->sel->param, m->sel.param);
    /* the same parameter block, whatever the device count, as an own model's */
    dp_doppler *own = dp_doppler_alloc(g, c5, &a, &err);
    ck_assert_ptr_nonnull(own);
    ck_assert_uint_eq(own->plc->n, m->plc.n);
    ck_assert_uint_eq(own->sel->n, m->sel.n);
    dp_doppler_free(own);
    dp_env *e3 = dp_env_alloc(g, c3, &err), *e5 = dp_env_alloc(g, c5, &err);
    const size_t ns = m->sel.n, np = m->plc.n;
    float *g3 = calloc(ns + np, sizeof(float)), *g5 = calloc(ns + np, sizeof(float));
    dp_doppler_zero_grad(d3);
    shared_episode(d3, e3);
    memcpy(g3, m->sel.grad, ns * sizeof(float));
    memcpy(g3 + ns, m->plc.grad, np * sizeof(float));
    dp_doppler_zero_grad(d5);
    shared_episode(d5, e5);
    memcpy(g5, m->sel.grad, ns * sizeof(float));
    memcpy(g5 + ns, m->plc.grad, np * sizeof(float));
    /* both into the one gradient buffer: the sum */
    dp_doppler_zero_grad(d3);
    dp_doppler_zero_grad(d5);
    shared_episode(d3, e3);
    shared_episode(d5, e5);
    double nrm = 0;
    for (size_t i = 0; i < ns + np; i++) {
        const float got = i < ns ? m->sel.grad[i] : m->plc.grad[i - ns];
        ck_assert_float_eq_tol(got, g3[i] + g5[i], 1e-5f * (1 + fabsf(g3[i]) + fabsf(g5[i])));
        nrm += fabs(g5[i]);
    }
    ck_assert(nrm > 1e-3); /* the 5-device graph's gradient reaches the shared parameters */
    /* a parameter change through the model moves both workspaces' logits */
    float before[5], after[5];
    dp_doppler_prepare(d5);
    dp_doppler_episode_begin(d5);
    dp_env_reset(e5);
    dp_doppler_plc_forward(d5, e5, 0, before);
    m->plc.param[m->plc.t[m->p_b2].offset] += 1.0f;
    dp_doppler_prepare(d5);
    dp_doppler_episode_begin(d5);
    dp_doppler_plc_forward(d5, e5, 0, after);
    for (int k = 0; k < 5; k++) ck_assert_float_eq_tol(after[k], before[k] + 1.0f, 1e-5f);
    free(g3);
    free(g5);
    dp_env_free(e3);
    dp_env_free(e5);
    dp_doppler_free(d3);
    dp_doppler_free(d5);
    dp_doppler_model_free(m);
    gsl_rng_free(r);
    dp_cost_free(c3);
    dp_cost_free(c5);
    dp_graph_free(g);
}
END_TEST

/* The PLC's per-step caches in chunks (dp_doppler_bind_chunked, issue 19): the episode
 * backward recomputes each earlier chunk's forward. Only the weight gradients that are sums of
 * the per-chunk GEMMs over steps x devices rows may change, in the last bits of single precision
 * (summation order); every other gradient is bit for bit the unchunked one, and the default
 * binding of a graph under DP_DOPPLER_STEP_CACHE_MAX ops is the unchunked one. */
START_TEST(chunked_step_caches)
{
    const int n = 50, D = 3;
    dp_graph *g = chain(n);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, D, &err);
    dp_doppler_arch a;
    dp_doppler_arch_default(&a);
    a.hidden = 6; a.mlp_hidden = 5; a.steps = 2; a.edge_hidden = 3;
    dp_doppler_model *m = dp_doppler_model_alloc(&a, &err);
    ck_assert_ptr_nonnull(m);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 19);
    ck_assert_int_eq(dp_doppler_model_init(m, r), DP_OK);
    for (size_t i = 0; i < m->plc.n; i++) m->plc.param[i] += (float)(0.2 * (gsl_rng_uniform(r) - 0.5));
    dp_env *env = dp_env_alloc(g, c, &err);
    const size_t np = m->plc.n, ns = m->sel.n;
    float *ref = malloc(np * sizeof(float)), *refs = malloc(ns * sizeof(float));
    dp_doppler *whole = dp_doppler_bind(m, g, c, &err);
    ck_assert_ptr_nonnull(whole);
    ck_assert_int_eq(whole->chunk, n); /* under DP_DOPPLER_STEP_CACHE_MAX: one chunk */
    dp_doppler_zero_grad(whole);
    shared_episode(whole, env);
    memcpy(ref, m->plc.grad, np * sizeof(float));
    memcpy(refs, m->sel.grad, ns * sizeof(float));
    /* a second batch on the same parameters (no prepare): the backward wrote SEL's gradients
     * over its forward caches and must recompute them, to the same bits */
    dp_doppler_zero_grad(whole);
    episode_no_prepare(whole, env);
    ck_assert(memcmp(refs, m->sel.grad, ns * sizeof(float)) == 0);
    ck_assert(memcmp(ref, m->plc.grad, np * sizeof(float)) == 0);
    const int mixed[] = {m->p_dw, m->p_db, m->p_w1, m->p_w2, m->p_b2};
    const int chunks[] = {n, 2 * n, 7, 10, 1};
    for (size_t q = 0; q < sizeof chunks / sizeof chunks[0]; q++) {
        dp_doppler *dd = dp_doppler_bind_chunked(m, g, c, chunks[q], &err);
        ck_assert_ptr_nonnull(dd);
        ck_assert_int_eq(dd->chunk, chunks[q] < n ? chunks[q] : n);
        dp_doppler_zero_grad(dd);
        shared_episode(dd, env);
        ck_assert(memcmp(refs, m->sel.grad, ns * sizeof(float)) == 0);
        for (int i = 0; i < m->plc.n_tensors; i++) {
            const dp_nn_tensor *t = &m->plc.t[i];
            const size_t k = (size_t)t->rows * t->cols;
            const float *got = m->plc.grad + t->offset, *want = ref + t->offset;
            int is_mixed = 0;
            for (size_t j = 0; j < sizeof mixed / sizeof mixed[0]; j++) is_mixed |= mixed[j] == i;
            if (!is_mixed || dd->chunk == n) {
                ck_assert_msg(memcmp(got, want, k * sizeof(float)) == 0, "chunk %d: %s not bit for bit", dd->chunk, t->name);
                continue;
            }
            /* single precision: a different summation order of R = 3 x 50 rows moves the last
             * bits (relative 1e-12 is below float's resolution) */
            double scale = 0;
            for (size_t j = 0; j < k; j++) scale = fmax(scale, fabs(want[j]));
            if (i == m->p_w1) ck_assert(scale > 1e-3); /* not vacuous */
            for (size_t j = 0; j < k; j++)
                ck_assert_msg(fabs(got[j] - want[j]) <= 1e-5 * scale, "chunk %d: %s[%zu] %.9g vs %.9g", dd->chunk, t->name, j,
                              got[j], want[j]);
        }
        dp_doppler_free(dd);
    }
    free(ref);
    free(refs);
    dp_env_free(env);
    dp_doppler_free(whole);
    dp_doppler_model_free(m);
    gsl_rng_free(r);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* ---- Stage III through the oracle interface, with a test double ---- */

typedef struct { long calls; int n_ops; } fake_exec;

/* A stand-in for real execution: "makespan" = 1 + number of ops not on device 0 (raw units). */
static int fake_cost(void *ctx, const int *assignment, double *makespan, dp_error *err)
{
    (void)err;
    fake_exec *f = ctx;
    f->calls++;
    int off = 0;
    for (int v = 0; v < f->n_ops; v++) off += assignment[v] != 0;
    *makespan = 1 + off;
    return DP_OK;
}

START_TEST(stage_real_oracle)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_train_config cfg;
    tiny_config(&cfg);
    cfg.stage[DP_TRAIN_STAGE_REAL].lr = 1e-2;
    cfg.stage[DP_TRAIN_STAGE_REAL].epsilon = 0.1;
    cfg.checkpoint_every = 1000;
    fake_exec fx = {0, g->n_ops};
    dp_oracle o = {.name = "fake-real", .cost = fake_cost, .ctx = &fx};
    dp_train *tr = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_ptr_nonnull(tr);
    int assign[6];
    double before, after;
    ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &before, NULL, &err), DP_OK);
    long calls0 = fx.calls;
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_REAL, 300, NULL, &err), DP_OK);
    ck_assert_int_eq(fx.calls - calls0, 300 + 2); /* one per episode, greedy evaluations at the start and the end */
    ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &after, NULL, &err), DP_OK);
    /* REINFORCE against this oracle must move ops to device 0 */
    ck_assert_msg(after < before || after == 1, "makespan %g -> %g", before, after);
    ck_assert_double_le(after, 3);
    dp_train_free(tr);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* Agreement with the heuristic, ties apart: three identical independent ops on two devices. SEL
 * ties at steps 0 and 1 (equal b-levels) and has one choice at step 2; PLC ties at step 0 (both
 * devices idle). The fraction with ties counted (agree) is (unique + in_tie) / steps. */
START_TEST(agreement_ties_apart)
{
    dp_graph_builder *b = dp_graph_builder_alloc("three", "three", DP_GRAPH_COST_TIME);
    for (int i = 0; i < 3; i++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_ptr_nonnull(g);
    dp_cost *c = dp_cost_graph(g, 2, &err);
    dp_test_sim sim = dp_test_sim_make(g, c);
    dp_train_config cfg;
    dp_train_config_default(&cfg);
    cfg.arch.hidden = 8; cfg.arch.mlp_hidden = 8; cfg.arch.steps = 2; cfg.arch.edge_hidden = 4;
    for (unsigned long long seed = 1; seed <= 6; seed++) {
        cfg.seed = seed;
        dp_train *tr = dp_train_alloc(g, c, &cfg, &sim.oracle, &err);
        ck_assert_ptr_nonnull(tr);
        int assign[3];
        double ms, agree[2];
        ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &ms, agree, &err), DP_OK);
        dp_train_agreement a;
        dp_train_agreement_get(tr, &a);
        ck_assert_int_eq(a.steps, 3);
        ck_assert_int_eq(a.tied[0], 2);
        ck_assert_int_eq(a.in_tie[0], 2);
        ck_assert_int_eq(a.unique[0], 1);
        /* PLC: step 0 ties; with the ops spread over both devices exactly one later step has a
         * unique best device and takes it (A B x: step 1 the idle B, step 2 ties; A A B: step 1
         * misses B, step 2 takes it); all on one device: steps 1 and 2 miss the idle one */
        const int spread = !(assign[0] == assign[1] && assign[1] == assign[2]);
        ck_assert_int_eq(a.unique[1], spread);
        ck_assert_int_eq(a.in_tie[1], a.tied[1]);
        ck_assert(spread ? a.tied[1] == 1 || a.tied[1] == 2 : a.tied[1] == 1);
        for (int i = 0; i < 2; i++) ck_assert_double_eq_tol(agree[i], (a.unique[i] + a.in_tie[i]) / 3.0, 1e-12);
        dp_train_free(tr);
    }
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(config_json)
{
    dp_train_config a, b;
    dp_train_config_default(&a);
    ck_assert_int_eq(a.stage[DP_TRAIN_STAGE_IL].episodes, 2000);
    ck_assert_double_eq(a.stage[DP_TRAIN_STAGE_SIM].lr, 1e-4);
    ck_assert_double_eq(a.stage[DP_TRAIN_STAGE_REAL].epsilon, 0.2);
    ck_assert_double_eq(a.stage[DP_TRAIN_STAGE_IL].entropy_weight, 0.001);
    a.arch.hidden = 40;
    a.stage[DP_TRAIN_STAGE_SIM].lr = 3e-3;
    a.seed = 99;
    char *s = dp_train_config_to_json(&a);
    dp_train_config_default(&b);
    dp_error err;
    ck_assert_int_eq(dp_train_config_from_json_text(&b, s, &err), DP_OK);
    ck_assert_int_eq(b.arch.hidden, 40);
    ck_assert_double_eq(b.stage[DP_TRAIN_STAGE_SIM].lr, 3e-3);
    ck_assert_int_eq(b.seed, 99);
    free(s);
    ck_assert_int_eq(dp_train_config_from_json_text(&b, "{\"stages\": {\"il\": {\"lr\": -1}}}", &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "stages.il.lr"));
    ck_assert_int_eq(dp_train_config_from_json_text(&b, "{\"gamma\": 0.5, \"oops\": 1}", &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "oops"));
}
END_TEST

/* expected cost of a one-step bandit with costs c under the behaviour policy of logits z */
static double bandit_cost(const float *z, const double *c, int n, int exploration, double eps)
{
    float p[8], lp[8];
    dp_nn_softmax_forward(p, lp, z, n);
    double J = 0;
    for (int a = 0; a < n; a++) J += dp_train_behaviour_prob(p, z, n, a, exploration, eps) * c[a];
    return J;
}

START_TEST(policy_gradient_estimator)
{
    /* REINFORCE is unbiased when its log-likelihood is the behaviour policy's: the expectation
     * over the behaviour of the per-step logit gradient with advantage -c(a) must equal the
     * gradient of the expected cost. With the mixture it does; the authors' estimator (the
     * gradient of log softmax for epsilon-greedy actions) does not (bug: Stage II degraded the
     * policy it started from). */
    const int n = 4;
    const float z[4] = {0.3f, -0.2f, 1.1f, 0.4f};
    const double c[4] = {2.0, 1.0, 3.0, 0.5};
    float p[4], lp[4];
    dp_nn_softmax_forward(p, lp, z, n);
    const double eps = 0.3;
    float g[4] = {0, 0, 0, 0}, ga[4] = {0, 0, 0, 0};
    for (int a = 0; a < n; a++) {
        float d[4] = {0, 0, 0, 0}, da[4] = {0, 0, 0, 0};
        dp_train_pg_dlogits(d, p, n, a, -c[a], DP_TRAIN_EXPLORE_MIXTURE, eps);
        dp_train_pg_dlogits(da, p, n, a, -c[a], DP_TRAIN_EXPLORE_EPSILON_GREEDY, eps);
        double mu = dp_train_behaviour_prob(p, z, n, a, DP_TRAIN_EXPLORE_MIXTURE, eps);
        double mua = dp_train_behaviour_prob(p, z, n, a, DP_TRAIN_EXPLORE_EPSILON_GREEDY, eps);
        for (int j = 0; j < n; j++) {
            g[j] += (float)(mu * d[j]);
            ga[j] += (float)(mua * da[j]);
        }
    }
    double off = 0;
    for (int j = 0; j < n; j++) {
        float zp[4], zm[4];
        memcpy(zp, z, sizeof zp);
        memcpy(zm, z, sizeof zm);
        const double h = 1e-3;
        zp[j] += (float)h;
        zm[j] -= (float)h;
        double fd = (bandit_cost(zp, c, n, DP_TRAIN_EXPLORE_MIXTURE, eps) - bandit_cost(zm, c, n, DP_TRAIN_EXPLORE_MIXTURE, eps)) / (2 * h);
        ck_assert_double_eq_tol(g[j], fd, 1e-3);
        off = fmax(off, fabs(ga[j] - fd));
    }
    ck_assert_double_gt(off, 0.05); /* the authors' estimator follows another gradient */
    /* epsilon 0: the mixture is the softmax, and both estimators are the score function */
    for (int a = 0; a < n; a++) {
        float d[4] = {0, 0, 0, 0}, da[4] = {0, 0, 0, 0};
        dp_train_pg_dlogits(d, p, n, a, 1.5, DP_TRAIN_EXPLORE_MIXTURE, 0);
        dp_train_pg_dlogits(da, p, n, a, 1.5, DP_TRAIN_EXPLORE_EPSILON_GREEDY, 0.7);
        for (int j = 0; j < n; j++) {
            ck_assert_float_eq_tol(d[j], -1.5f * ((j == a) - p[j]), 1e-6f);
            ck_assert_float_eq_tol(da[j], d[j], 1e-6f);
        }
    }
}
END_TEST

START_TEST(exploration_frequencies)
{
    /* dp_train_explore draws from dp_train_behaviour_prob */
    const int n = 3;
    const float z[3] = {0.5f, -1.0f, 0.2f};
    float p[3], lp[3];
    dp_nn_softmax_forward(p, lp, z, n);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    for (int ex = 0; ex < 2; ex++) {
        int cnt[3] = {0, 0, 0};
        const int N = 40000;
        for (int i = 0; i < N; i++) cnt[dp_train_explore(p, z, n, ex, 0.25, r)]++;
        double tot = 0;
        for (int a = 0; a < n; a++) {
            double q = dp_train_behaviour_prob(p, z, n, a, ex, 0.25);
            tot += q;
            ck_assert_double_eq_tol((double)cnt[a] / N, q, 0.01);
        }
        ck_assert_double_eq_tol(tot, 1, 1e-6);
    }
    gsl_rng_free(r);
}
END_TEST

/* A device-symmetric test double: "makespan" = 1 + number of edges of small_dag cut by the
 * assignment (the policies see no device identities, so an objective that prefers one device
 * can only be met through argmax tie-breaking, which sampling does not have). */
static int cut_cost(void *ctx, const int *assignment, double *makespan, dp_error *err)
{
    (void)err;
    fake_exec *f = ctx;
    f->calls++;
    const int es[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {2, 4}, {3, 5}, {4, 5}, {0, 4}};
    int cut = 0;
    for (int e = 0; e < 8; e++) cut += assignment[es[e][0]] != assignment[es[e][1]];
    *makespan = 1 + cut;
    return DP_OK;
}

/* the same objective on another problem: every cost twice as large */
static int cut_cost_doubled(void *ctx, const int *assignment, double *makespan, dp_error *err)
{
    int rc = cut_cost(ctx, assignment, makespan, err);
    *makespan *= 2;
    return rc;
}

/* dp_train_set_greedy_heap (inference): the greedy placement with the ready set as a heap on the
 * SEL scores is the id-ordered scan's, assignment and makespan, on random DAGs under the engine
 * state and the authors' append state; with agreement asked for the rollout takes the scan; and a
 * trainer that placed that way trains on exactly as one that did not (same parameters). */
START_TEST(greedy_heap_same_placement)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 29);
    for (int trial = 0; trial < 8; trial++) {
        dp_graph *g = random_dag(r, 40 + 10 * trial, 0.06, 5);
        dp_error err;
        const int D = 2 + trial % 3;
        dp_cost *c = dp_cost_graph(g, D, &err);
        ck_assert_ptr_nonnull(c);
        dp_machine m;
        char dev[8];
        snprintf(dev, sizeof dev, "%d", D);
        const char *kv[] = {"devices", dev, NULL};
        dp_test_machine_make(&m, kv);
        dp_problem *p = dp_problem_alloc_with_costs(g, c, &m, &err);
        ck_assert_ptr_nonnull(p);
        dp_train_config cfg;
        tiny_config(&cfg);
        cfg.seed = (uint64_t)trial + 1;
        cfg.state = trial % 2 ? DP_ENV_STATE_ENGINE : DP_ENV_STATE_APPEND;
        dp_train *t1 = dp_train_alloc(g, c, &cfg, &p->oracle, &err), *t2 = dp_train_alloc(g, c, &cfg, &p->oracle, &err);
        ck_assert_ptr_nonnull(t1);
        ck_assert_ptr_nonnull(t2);
        int *a1 = malloc((size_t)g->n_ops * sizeof(int)), *a2 = malloc((size_t)g->n_ops * sizeof(int));
        for (int round = 0; round < 2; round++) {
            double m1, m2, m3, agree[2];
            ck_assert_int_eq(dp_train_place(t1, 0, 1, a1, &m1, NULL, &err), DP_OK);
            dp_train_set_greedy_heap(t2, 1);
            ck_assert_int_eq(dp_train_place(t2, 0, 1, a2, &m2, NULL, &err), DP_OK);
            ck_assert(m1 == m2);
            ck_assert_mem_eq(a1, a2, (size_t)g->n_ops * sizeof(int));
            ck_assert_int_eq(dp_train_place(t2, 0, 1, a2, &m3, agree, &err), DP_OK);
            ck_assert(m1 == m3);
            ck_assert_mem_eq(a1, a2, (size_t)g->n_ops * sizeof(int));
            ck_assert_int_eq(dp_train_place(t2, 0, 1, a2, &m2, NULL, &err), DP_OK); /* a heap rollout last */
            dp_train_set_greedy_heap(t2, 0);
            /* both train on: the same parameters after */
            ck_assert_int_eq(dp_train_run(t1, DP_TRAIN_STAGE_SIM, 6 * (round + 1), NULL, &err), DP_OK);
            ck_assert_int_eq(dp_train_run(t2, DP_TRAIN_STAGE_SIM, 6 * (round + 1), NULL, &err), DP_OK);
            ck_assert(dp_nn_params_checksum(dp_train_sel_params(t1), DP_NN_FNV_OFFSET) ==
                      dp_nn_params_checksum(dp_train_sel_params(t2), DP_NN_FNV_OFFSET));
            ck_assert(dp_nn_params_checksum(dp_train_plc_params(t1), DP_NN_FNV_OFFSET) ==
                      dp_nn_params_checksum(dp_train_plc_params(t2), DP_NN_FNV_OFFSET));
        }
        free(a1); free(a2);
        dp_train_free(t1);
        dp_train_free(t2);
        dp_problem_free(p);
        dp_machine_free(&m);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(greedy_baseline_improves)
{
    /* Stage II with the mixture, the greedy baseline and batches, from a random initialisation:
     * the greedy placement of the last parameters must reach the optimum (no cut edge) */
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_train_config cfg;
    tiny_config(&cfg);
    dp_train_stage *st = &cfg.stage[DP_TRAIN_STAGE_SIM];
    st->lr = 1e-2;
    st->epsilon = 0.1;
    st->batch = 4;
    st->exploration = DP_TRAIN_EXPLORE_MIXTURE;
    st->baseline = DP_TRAIN_BASELINE_GREEDY;
    cfg.gamma = 1;
    cfg.reward_relative = 1;
    cfg.checkpoint_every = 1000;
    fake_exec fx = {0, g->n_ops};
    dp_oracle o = {.name = "cut", .cost = cut_cost, .ctx = &fx};
    dp_train *tr = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_ptr_nonnull(tr);
    int assign[6];
    double before, after;
    ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &before, NULL, &err), DP_OK);
    ck_assert_double_gt(before, 1);
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_SIM, 200, NULL, &err), DP_OK);
    /* one greedy rollout per batch of 4 (the baseline), plus the evaluations at the start and end */
    ck_assert_int_eq(fx.calls, 1 + 200 + 50 + 2);
    ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &after, NULL, &err), DP_OK);
    ck_assert_msg(after < before, "greedy makespan %g -> %g", before, after);
    ck_assert_msg(after == 1, "greedy makespan %g -> %g", before, after);
    dp_train_free(tr);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* This project's estimators (dp_train_stage): the batch baseline with normalised advantages and
 * forced distinct first choices learns the cut problem; its replays cost no simulation; */
START_TEST(batch_baseline_improves)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_train_config cfg;
    tiny_config(&cfg);
    dp_train_stage *st = &cfg.stage[DP_TRAIN_STAGE_SIM];
    st->lr = 1e-2;
    st->epsilon = st->epsilon_final = 0;
    st->batch = 8;
    st->exploration = DP_TRAIN_EXPLORE_MIXTURE;
    st->baseline = DP_TRAIN_BASELINE_BATCH;
    st->normalize_advantages = 1;
    st->forced_first = 1;
    cfg.gamma = 1;
    cfg.checkpoint_every = 1000;
    fake_exec fx = {0, g->n_ops};
    dp_oracle o = {.name = "cut", .cost = cut_cost, .ctx = &fx};
    dp_train *tr = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_ptr_nonnull(tr);
    int assign[6];
    double before, after;
    ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &before, NULL, &err), DP_OK);
    ck_assert_double_gt(before, 1);
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_SIM, 200, NULL, &err), DP_OK);
    /* one simulation per episode (the replays cost none), plus the evaluations at the start and end */
    ck_assert_int_eq(fx.calls, 1 + 200 + 2);
    ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &after, NULL, &err), DP_OK);
    ck_assert_msg(after == 1, "greedy makespan %g -> %g", before, after);
    dp_train_free(tr);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* self-imitation alone (no policy gradient, uniformly random exploration) makes the greedy policy
 * reproduce the best placement it has seen; without it the parameters do not move */
START_TEST(self_imitation_learns_best)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    for (int on = 0; on < 2; on++) {
        dp_train_config cfg;
        tiny_config(&cfg);
        dp_train_stage *st = &cfg.stage[DP_TRAIN_STAGE_SIM];
        st->lr = st->lr_final = 1e-2;
        st->epsilon = st->epsilon_final = 1; /* every choice uniform: the policy is never followed */
        st->pg_weight = 0;
        st->sil_weight = on ? 1 : 0;
        st->sil_k = 2;
        cfg.checkpoint_every = 1000;
        fake_exec fx = {0, g->n_ops};
        dp_oracle o = {.name = "cut", .cost = cut_cost, .ctx = &fx};
        dp_train *tr = dp_train_alloc(g, c, &cfg, &o, &err);
        ck_assert_ptr_nonnull(tr);
        dp_nn_params *plc = dp_train_plc_params(tr);
        float *p0 = malloc(plc->n * sizeof(float));
        memcpy(p0, plc->param, plc->n * sizeof(float));
        int assign[6];
        double before, after;
        ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &before, NULL, &err), DP_OK);
        ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_SIM, 300, NULL, &err), DP_OK);
        ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &after, NULL, &err), DP_OK);
        if (on) {
            ck_assert_msg(before > 1 && after == 1, "self-imitation: greedy %g -> %g", before, after);
        } else {
            ck_assert_int_eq(memcmp(p0, plc->param, plc->n * sizeof(float)), 0);
        }
        free(p0);
        dp_train_free(tr);
    }
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* Stage II that explores uniformly and learns nothing but distillation (distill steps; 0: none),
 * tiny networks: the distillation tests' config. */
static void uniform_distill_config(dp_train_config *cfg, long distill)
{
    tiny_config(cfg);
    dp_train_stage *st = &cfg->stage[DP_TRAIN_STAGE_SIM];
    st->lr = st->lr_final = 1e-2;
    st->epsilon = st->epsilon_final = 1; /* every choice uniform */
    st->pg_weight = 0;
    st->distill = distill;
    cfg->checkpoint_every = 1000;
}

/* distillation (distill): at the end of a stage that explores uniformly and learns nothing else,
 * the greedy policy is pulled onto the best placement sampled, reaching it (the cut problem's
 * devices are interchangeable: the placement is renamed in order of first use); without it the
 * final greedy placement is the starting one. The checkpoint's best sampled placement reads back
 * for the same graph and device count, not for another graph. */
START_TEST(distill_reproduces_best_sample)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    ck_assert_int_eq(c->homogeneous, 1);
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/dp-distill-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/ck.h5", dir);
    for (int on = 0; on < 2; on++) {
        dp_train_config cfg;
        uniform_distill_config(&cfg, on ? 2000 : 0);
        fake_exec fx = {0, g->n_ops};
        dp_oracle o = {.name = "cut", .cost = cut_cost, .ctx = &fx};
        dp_train *tr = dp_train_alloc(g, c, &cfg, &o, &err);
        ck_assert_ptr_nonnull(tr);
        int assign[6];
        double before;
        ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &before, NULL, &err), DP_OK);
        const int stages[1] = {DP_TRAIN_STAGE_SIM};
        const long eps[1] = {40};
        dp_train_pipeline_result res;
        dp_train_io io = {NULL, path, NULL, NULL, NULL, NULL};
        ck_assert_int_eq(dp_train_pipeline(tr, stages, eps, 1, 0, 0, 1, &io, &res, NULL, &err), DP_OK);
        const dp_train_pipeline_stage *r = &res.stage[0];
        ck_assert_msg(r->best_sample < before, "40 uniform samples found nothing better than %g", before);
        if (on) ck_assert_msg(r->final_greedy <= r->best_sample, "distilled greedy %g, best sample %g", r->final_greedy, r->best_sample);
        else ck_assert_double_eq(r->final_greedy, before);
        /* the best sample, from the checkpoint */
        int seen[6], found = 0;
        double ms;
        ck_assert_int_eq(dp_h5io_ckpt_read_best_sample(path, g->name, g->n_ops, 3, seen, NULL, &found, &err), DP_OK);
        ck_assert_int_eq(found, 1);
        ck_assert_int_eq(cut_cost(&fx, seen, &ms, &err), DP_OK);
        ck_assert_double_eq(ms, r->best_sample);
        ck_assert_int_eq(dp_h5io_ckpt_read_best_sample(path, "another", g->n_ops, 3, seen, NULL, &found, &err), DP_OK);
        ck_assert_int_eq(found, 0);
        ck_assert_int_eq(dp_h5io_ckpt_read_best_sample(path, g->name, g->n_ops, 4, seen, NULL, &found, &err), DP_OK);
        ck_assert_int_eq(found, 0);
        /* the placement step uses it only on the problem it was sampled on: the same oracle gives
         * the recorded makespan; costs twice as large (a graph of the same name and size with
         * other costs, or another machine) do not, and the sample is not used */
        double got = 0;
        ck_assert_int_eq(dp_place_best_sample(path, g, c, &o, seen, &got, &found, &err), DP_OK);
        ck_assert_int_eq(found, 1);
        ck_assert_double_eq(got, r->best_sample);
        dp_oracle o2 = {.name = "cut-doubled", .cost = cut_cost_doubled, .ctx = &fx};
        ck_assert_int_eq(dp_place_best_sample(path, g, c, &o2, seen, &got, &found, &err), DP_OK);
        ck_assert_int_eq(found, 0);
        dp_train_free(tr);
    }
    unlink(path);
    rmdir(dir);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* the spread objective on chain(n): 1 + the chain edges whose two ops share a device (best:
 * neighbours on different devices) */
static int spread_cost(void *ctx, const int *assignment, double *makespan, dp_error *err)
{
    (void)err;
    fake_exec *f = ctx;
    f->calls++;
    int same = 0;
    for (int i = 0; i + 1 < f->n_ops; i++) same += assignment[i] == assignment[i + 1];
    *makespan = 1 + same;
    return DP_OK;
}

/* The greedy makespan on g of a fresh trainer holding src's current parameters. */
static double greedy_with_params(const dp_graph *g, const dp_cost *c, const dp_oracle *o, const dp_train_config *cfg,
                                 dp_train *src)
{
    dp_error err;
    dp_train *tr = dp_train_alloc(g, c, cfg, o, &err);
    ck_assert_ptr_nonnull(tr);
    for (int b = 0; b < 2; b++) {
        dp_nn_params *to = b ? dp_train_plc_params(tr) : dp_train_sel_params(tr);
        const dp_nn_params *from = b ? dp_train_plc_params(src) : dp_train_sel_params(src);
        ck_assert_int_eq(to->n, from->n);
        memcpy(to->param, from->param, (size_t)from->n * sizeof(float));
    }
    int assign[16];
    double ms;
    ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &ms, NULL, &err), DP_OK);
    dp_train_free(tr);
    return ms;
}

/* distillation with several training graphs (one shared model) imitates every graph's best
 * sample, not only the graph in hand when the stage ends: uniform exploration, no other
 * learning; afterwards the greedy placement is better than before on both graphs (a first
 * version distilled only the last batch's graph, and the other kept or lost its placement). */
START_TEST(distill_every_training_graph)
{
    dp_graph *g[2] = {small_dag(), chain(6)};
    dp_error err;
    dp_cost *c[2] = {dp_cost_graph(g[0], 3, &err), dp_cost_graph(g[1], 3, &err)};
    dp_train_config cfg;
    uniform_distill_config(&cfg, 2000);
    fake_exec fx[2] = {{0, g[0]->n_ops}, {0, g[1]->n_ops}};
    dp_oracle o[2] = {{.name = "cut", .cost = cut_cost, .ctx = &fx[0]}, {.name = "spread", .cost = spread_cost, .ctx = &fx[1]}};
    dp_train *tr = dp_train_alloc(g[0], c[0], &cfg, &o[0], &err);
    ck_assert_ptr_nonnull(tr);
    ck_assert_int_eq(dp_train_add_graph(tr, g[1], c[1], &o[1], 0, &err), DP_OK);
    double before[2], after[2];
    for (int i = 0; i < 2; i++) before[i] = greedy_with_params(g[i], c[i], &o[i], &cfg, tr);
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_SIM, 400, NULL, &err), DP_OK);
    for (int i = 0; i < 2; i++) after[i] = greedy_with_params(g[i], c[i], &o[i], &cfg, tr);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(after[i] < before[i], "graph %d: greedy makespan %g after distillation, %g before", i, after[i], before[i]);
    dp_train_free(tr);
    for (int i = 0; i < 2; i++) {
        dp_cost_free(c[i]);
        dp_graph_free(g[i]);
    }
}
END_TEST

/* a Stage II of this project's DOPPLER (batches, elite self-imitation, distillation) stopped
 * halfway and resumed from its checkpoint ends with the parameters of the uninterrupted run: the
 * checkpoint keeps the self-imitation buffer (it used to restart empty) */
static void stop_at_half(const dp_train_progress *p, void *ctx)
{
    volatile sig_atomic_t *stop = ctx;
    if (p->episode == p->episodes / 2 - 1) *stop = 1; /* read at the next batch boundary, episode 32 */
}

/* this project's Stage II configuration with networks small enough for a test, on the fake
 * oracle (no engine: the append state and DOPPLER's device features) */
static void small_project_config(dp_train_config *cfg, long checkpoint_every)
{
    dp_train_config_project(cfg);
    cfg->arch.hidden = cfg->arch.mlp_hidden = 8;
    cfg->arch.steps = 2;
    cfg->arch.edge_hidden = 4;
    cfg->state = DP_ENV_STATE_APPEND; /* the fake oracle has no engine */
    cfg->arch.device_features = DP_ENV_FEATURES_DOPPLER;
    cfg->checkpoint_every = checkpoint_every;
}

/* Stage II of `episodes` run by a trainer that io's progress stops at episode `stopped_at` (its
 * checkpoint at path), then continued to the end by another trainer resumed from that
 * checkpoint, which is returned */
static dp_train *stop_then_resume(const dp_graph *g, const dp_cost *c, const dp_train_config *cfg, const dp_oracle *o,
                                  const dp_train_io *io, long episodes, long stopped_at, const char *path)
{
    dp_error err;
    dp_train *b = dp_train_alloc(g, c, cfg, o, &err);
    ck_assert_int_eq(dp_train_run(b, DP_TRAIN_STAGE_SIM, episodes, io, &err), DP_OK);
    ck_assert_int_eq(dp_train_episode(b), stopped_at);
    dp_train_free(b);
    b = dp_train_alloc(g, c, cfg, o, &err);
    ck_assert_msg(dp_train_resume(b, path, NULL, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(dp_train_run(b, DP_TRAIN_STAGE_SIM, episodes, NULL, &err), DP_OK);
    return b;
}

START_TEST(project_stage2_resumes_exactly)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_train_config cfg;
    small_project_config(&cfg, 16);
    ck_assert_int_eq(cfg.stage[DP_TRAIN_STAGE_SIM].sil_replays, 8);
    ck_assert_int_eq(cfg.stage[DP_TRAIN_STAGE_SIM].distill, 1000);
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/dp-resume2-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/ck.h5", dir);
    fake_exec fx = {0, g->n_ops};
    dp_oracle o = {.name = "cut", .cost = cut_cost, .ctx = &fx};
    /* uninterrupted */
    dp_train *a = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(dp_train_run(a, DP_TRAIN_STAGE_SIM, 64, NULL, &err), DP_OK);
    /* stopped at 32, then resumed by another trainer */
    volatile sig_atomic_t stop = 0;
    dp_train_io io = {NULL, path, stop_at_half, (void *)&stop, &stop, NULL};
    dp_train *b = stop_then_resume(g, c, &cfg, &o, &io, 64, 32, path);
    for (int k = 0; k < 2; k++) {
        dp_nn_params *pa = k ? dp_train_plc_params(a) : dp_train_sel_params(a);
        dp_nn_params *pb = k ? dp_train_plc_params(b) : dp_train_sel_params(b);
        ck_assert_int_eq(pa->n, pb->n);
        ck_assert_msg(memcmp(pa->param, pb->param, pa->n * sizeof(float)) == 0, "resumed %s parameters differ", k ? "PLC" : "SEL");
    }
    dp_train_free(a);
    dp_train_free(b);
    /* the stage's simulation count after a resume is the whole stage's (it was the resumed
     * process's part only: a new user's trial) */
    const int stages[1] = {DP_TRAIN_STAGE_SIM};
    const long eps[1] = {64};
    dp_train_pipeline_result ra, rb;
    a = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_int_eq(dp_train_pipeline(a, stages, eps, 1, 0, 0, 1, NULL, &ra, NULL, &err), DP_OK);
    stop = 0;
    b = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_int_eq(dp_train_pipeline(b, stages, eps, 1, 0, 0, 1, &io, &rb, NULL, &err), DP_OK);
    ck_assert_int_eq(rb.stopped, 1);
    dp_train_free(b);
    b = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_msg(dp_train_resume(b, path, NULL, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(dp_train_pipeline(b, stages, eps, 1, 0, 0, 1, NULL, &rb, NULL, &err), DP_OK);
    ck_assert_int_eq(rb.stage[0].done, 1);
    ck_assert_int_eq(rb.stage[0].sims, ra.stage[0].sims);
    ck_assert_int_eq(dp_train_simulations(b), dp_train_simulations(a));
    dp_train_free(a);
    dp_train_free(b);
    unlink(path);
    rmdir(dir);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* a stop between two model-selection evaluations (SIGTERM at episode 16, evaluations every 32)
 * writes its checkpoint without an evaluation of its own: it used to evaluate there, which cost
 * the resumed run one simulation more, an evaluation row more, and counted towards patience */
static void stop_at_16(const dp_train_progress *p, void *ctx)
{
    volatile sig_atomic_t *stop = ctx;
    if (p->episode == 15) *stop = 1; /* read at the next batch boundary, episode 16 */
}

START_TEST(stop_between_evaluations_resumes_exactly)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_train_config cfg;
    small_project_config(&cfg, 32);
    cfg.stage[DP_TRAIN_STAGE_SIM].patience = 1;
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/dp-resume3-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/ck.h5", dir);
    fake_exec fx = {0, g->n_ops};
    dp_oracle o = {.name = "cut", .cost = cut_cost, .ctx = &fx};
    dp_train *a = dp_train_alloc(g, c, &cfg, &o, &err);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(dp_train_run(a, DP_TRAIN_STAGE_SIM, 96, NULL, &err), DP_OK);
    volatile sig_atomic_t stop = 0;
    dp_train_io io = {NULL, path, stop_at_16, (void *)&stop, &stop, NULL};
    dp_train *b = stop_then_resume(g, c, &cfg, &o, &io, 96, 16, path);
    ck_assert_int_eq(dp_train_episode(b), dp_train_episode(a));
    ck_assert_int_eq(dp_train_simulations(b), dp_train_simulations(a));
    for (int best = 0; best < 2; best++) {
        if (best) ck_assert_int_eq(dp_train_use_best(a), dp_train_use_best(b));
        for (int k = 0; k < 2; k++) {
            dp_nn_params *pa = k ? dp_train_plc_params(a) : dp_train_sel_params(a);
            dp_nn_params *pb = k ? dp_train_plc_params(b) : dp_train_sel_params(b);
            ck_assert_msg(memcmp(pa->param, pb->param, pa->n * sizeof(float)) == 0, "resumed %s %s parameters differ",
                          best ? "model-selected" : "final", k ? "PLC" : "SEL");
        }
    }
    dp_train_free(a);
    dp_train_free(b);
    unlink(path);
    rmdir(dir);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* the same with two training graphs (one shared model): each graph's self-imitation buffer is in
 * the checkpoint, so self-imitation and the end-of-stage distillation, which goes round every
 * graph's buffer, see after a resume what the uninterrupted run saw (the buffers used to restart
 * empty with several graphs, and the resumed run distilled other targets) */
START_TEST(two_graph_stage2_resumes_exactly)
{
    dp_graph *g[2] = {small_dag(), chain(6)};
    dp_error err;
    dp_cost *c[2] = {dp_cost_graph(g[0], 3, &err), dp_cost_graph(g[1], 3, &err)};
    dp_train_config cfg;
    small_project_config(&cfg, 16);
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/dp-resume4-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/ck.h5", dir);
    fake_exec fx[2] = {{0, g[0]->n_ops}, {0, g[1]->n_ops}};
    dp_oracle o[2] = {{.name = "cut", .cost = cut_cost, .ctx = &fx[0]}, {.name = "spread", .cost = spread_cost, .ctx = &fx[1]}};
    dp_train *t[2];
    volatile sig_atomic_t stop = 0;
    dp_train_io io = {NULL, path, stop_at_half, (void *)&stop, &stop, NULL};
    for (int k = 0; k < 2; k++) {
        t[k] = dp_train_alloc(g[0], c[0], &cfg, &o[0], &err);
        ck_assert_ptr_nonnull(t[k]);
        ck_assert_int_eq(dp_train_add_graph(t[k], g[1], c[1], &o[1], 0, &err), DP_OK);
        ck_assert_int_eq(dp_train_run(t[k], DP_TRAIN_STAGE_SIM, 64, k ? &io : NULL, &err), DP_OK);
    }
    ck_assert_int_eq(dp_train_episode(t[1]), 32);
    dp_train_free(t[1]);
    t[1] = dp_train_alloc(g[0], c[0], &cfg, &o[0], &err);
    ck_assert_int_eq(dp_train_add_graph(t[1], g[1], c[1], &o[1], 0, &err), DP_OK);
    ck_assert_msg(dp_train_resume(t[1], path, NULL, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(dp_train_run(t[1], DP_TRAIN_STAGE_SIM, 64, NULL, &err), DP_OK);
    ck_assert_int_eq(dp_train_simulations(t[1]), dp_train_simulations(t[0]));
    for (int k = 0; k < 2; k++) {
        dp_nn_params *pa = k ? dp_train_plc_params(t[0]) : dp_train_sel_params(t[0]);
        dp_nn_params *pb = k ? dp_train_plc_params(t[1]) : dp_train_sel_params(t[1]);
        ck_assert_msg(memcmp(pa->param, pb->param, pa->n * sizeof(float)) == 0, "resumed %s parameters differ", k ? "PLC" : "SEL");
    }
    for (int k = 0; k < 2; k++) dp_train_free(t[k]);
    unlink(path);
    rmdir(dir);
    for (int i = 0; i < 2; i++) {
        dp_cost_free(c[i]);
        dp_graph_free(g[i]);
    }
}
END_TEST

/* early stopping: with patience 2 and a policy that cannot improve (learning rate 0), the stage
 * ends after the start evaluation and two more */
/* The dynamic SEL's keys (issue 29): not written at their defaults (a checkpoint's config is
 * what it was), read back when set; "sel_teacher": "etf" is refused without the dynamic SEL
 * (its marks are the dynamic SEL's earliest-start feature) and trains with it. */
START_TEST(sel_dynamic_config_keys)
{
    dp_train_config a, b;
    dp_error err;
    dp_train_config_default(&a);
    char *s = dp_train_config_to_json(&a);
    ck_assert_ptr_null(strstr(s, "sel_dynamic"));
    ck_assert_ptr_null(strstr(s, "sel_teacher"));
    free(s);
    a.arch.sel_dynamic = 1;
    a.sel_teacher_etf = 1;
    s = dp_train_config_to_json(&a);
    dp_train_config_default(&b);
    ck_assert_int_eq(dp_train_config_from_json_text(&b, s, &err), DP_OK);
    ck_assert_int_eq(b.arch.sel_dynamic, 1);
    ck_assert_int_eq(b.sel_teacher_etf, 1);
    free(s);
    dp_graph *g = small_dag();
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_train_config cfg;
    tiny_config(&cfg);
    cfg.sel_teacher_etf = 1;
    dp_test_sim sim = dp_test_sim_make(g, c);
    ck_assert_ptr_null(dp_train_alloc(g, c, &cfg, &sim.oracle, &err));
    ck_assert_int_eq(err.code, DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "sel_dynamic"));
    cfg.arch.sel_dynamic = 1;
    dp_train *tr = dp_train_alloc(g, c, &cfg, &sim.oracle, &err);
    ck_assert_ptr_nonnull(tr);
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_IL, 20, NULL, &err), DP_OK);
    dp_train_free(tr);
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(patience_stops_stage)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_train_config cfg;
    tiny_config(&cfg);
    cfg.stage[DP_TRAIN_STAGE_IL].lr = cfg.stage[DP_TRAIN_STAGE_IL].lr_final = 0;
    cfg.stage[DP_TRAIN_STAGE_IL].patience = 2;
    cfg.checkpoint_every = 10;
    dp_test_sim sim = dp_test_sim_make(g, c);
    dp_train *tr = dp_train_alloc(g, c, &cfg, &sim.oracle, &err);
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_IL, 500, NULL, &err), DP_OK);
    ck_assert_int_eq(dp_train_episode(tr), 20);
    dp_train_free(tr);
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(config_stage_keys)
{
    dp_train_config a, b;
    dp_train_config_default(&a);
    for (int i = 0; i < DP_TRAIN_N_STAGES; i++) {
        ck_assert_int_eq(a.stage[i].batch, 1);
        ck_assert_int_eq(a.stage[i].exploration, DP_TRAIN_EXPLORE_EPSILON_GREEDY);
        ck_assert_int_eq(a.stage[i].baseline, DP_TRAIN_BASELINE_RUNNING);
    }
    a.stage[DP_TRAIN_STAGE_SIM].batch = 8;
    a.stage[DP_TRAIN_STAGE_SIM].exploration = DP_TRAIN_EXPLORE_MIXTURE;
    a.stage[DP_TRAIN_STAGE_SIM].baseline = DP_TRAIN_BASELINE_GREEDY;
    a.stage[DP_TRAIN_STAGE_SIM].positive_only = 1;
    char *s = dp_train_config_to_json(&a);
    dp_train_config_default(&b);
    dp_error err;
    ck_assert_int_eq(dp_train_config_from_json_text(&b, s, &err), DP_OK);
    free(s);
    ck_assert_int_eq(b.stage[DP_TRAIN_STAGE_SIM].batch, 8);
    ck_assert_int_eq(b.stage[DP_TRAIN_STAGE_SIM].exploration, DP_TRAIN_EXPLORE_MIXTURE);
    ck_assert_int_eq(b.stage[DP_TRAIN_STAGE_SIM].baseline, DP_TRAIN_BASELINE_GREEDY);
    ck_assert_int_eq(b.stage[DP_TRAIN_STAGE_SIM].positive_only, 1);
    ck_assert_int_eq(b.stage[DP_TRAIN_STAGE_IL].positive_only, 0);
    ck_assert_int_eq(b.stage[DP_TRAIN_STAGE_IL].batch, 1);
    /* a top-level batch sets every stage; a stage's own batch wins whatever the key order */
    dp_train_config_default(&b);
    ck_assert_int_eq(dp_train_config_from_json_text(&b, "{\"stages\": {\"sim\": {\"batch\": 8}}, \"batch\": 2}", &err), DP_OK);
    ck_assert_int_eq(b.stage[DP_TRAIN_STAGE_IL].batch, 2);
    ck_assert_int_eq(b.stage[DP_TRAIN_STAGE_REAL].batch, 2);
    ck_assert_int_eq(b.stage[DP_TRAIN_STAGE_SIM].batch, 8);
    ck_assert_int_eq(dp_train_config_from_json_text(&b, "{\"stages\": {\"sim\": {\"exploration\": \"boltzmann\"}}}", &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "stages.sim.exploration"));
    ck_assert_int_eq(dp_train_config_from_json_text(&b, "{\"stages\": {\"sim\": {\"baseline\": 3}}}", &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "stages.sim.baseline"));
}
END_TEST

/* Ablations of the paper's table 4. PLC only: SEL takes the topological order and is never
 * trained (its parameters stay as initialised while PLC's move). Without critical-path
 * embeddings: SEL's path inputs are zero. */
START_TEST(ablation_switches)
{
    dp_graph *g = small_dag();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    dp_train_config cfg;
    tiny_config(&cfg);
    cfg.checkpoint_every = 1000;
    cfg.sel_topological = 1;
    dp_test_sim sim = dp_test_sim_make(g, c);
    dp_train *tr = dp_train_alloc(g, c, &cfg, &sim.oracle, &err);
    ck_assert_ptr_nonnull(tr);
    dp_doppler *dd = dp_train_networks(tr);
    float *sel0 = malloc(dd->sel->n * sizeof(float)), *plc0 = malloc(dd->plc->n * sizeof(float));
    memcpy(sel0, dd->sel->param, dd->sel->n * sizeof(float));
    memcpy(plc0, dd->plc->param, dd->plc->n * sizeof(float));
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_IL, 20, NULL, &err), DP_OK);
    ck_assert_int_eq(memcmp(sel0, dd->sel->param, dd->sel->n * sizeof(float)), 0);
    ck_assert_int_ne(memcmp(plc0, dd->plc->param, dd->plc->n * sizeof(float)), 0);
    dp_train_free(tr);
    free(sel0);
    free(plc0);

    tiny_config(&cfg);
    cfg.arch.cp_embeddings = 0;
    tr = dp_train_alloc(g, c, &cfg, &sim.oracle, &err);
    ck_assert_ptr_nonnull(tr);
    dd = dp_train_networks(tr);
    int assign[16];
    double ms;
    ck_assert_int_eq(dp_train_place(tr, 0, 1, assign, &ms, NULL, &err), DP_OK);
    const int d = cfg.arch.hidden;
    for (int v = 0; v < g->n_ops; v++)
        for (int j = 2 * d; j < 4 * d; j++) ck_assert_float_eq(dd->s_cat[(size_t)v * 4 * d + j], 0.0f);
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_IL, 10, NULL, &err), DP_OK);
    dp_train_free(tr);
    dp_test_sim_free(&sim);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("doppler");
    TCase *t = tcase_create("networks");
    tcase_add_test(t, inputs);
    tcase_add_test(t, memory_linear_and_checked);
    tcase_add_test(t, device_features);
    tcase_add_loop_test(t, network_gradients, 0, 3);
    tcase_add_test(t, sel_dynamic_starts_static);
    tcase_add_test(t, sel_dynamic_config_keys);
    tcase_add_test(t, device_magnitude_columns);
    tcase_add_test(t, shared_model_two_graphs);
    tcase_add_test(t, chunked_step_caches);
    tcase_add_test(t, stage_real_oracle);
    tcase_add_test(t, config_json);
    tcase_add_test(t, agreement_ties_apart);
    tcase_add_test(t, policy_gradient_estimator);
    tcase_add_test(t, exploration_frequencies);
    tcase_add_test(t, greedy_baseline_improves);
    tcase_add_test(t, greedy_heap_same_placement);
    tcase_add_test(t, batch_baseline_improves);
    tcase_add_test(t, self_imitation_learns_best);
    tcase_add_test(t, patience_stops_stage);
    tcase_add_test(t, distill_reproduces_best_sample);
    tcase_add_test(t, distill_every_training_graph);
    tcase_add_test(t, project_stage2_resumes_exactly);
    tcase_add_test(t, stop_between_evaluations_resumes_exactly);
    tcase_add_test(t, two_graph_stage2_resumes_exactly);
    tcase_add_test(t, config_stage_keys);
    tcase_add_test(t, ablation_switches);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
