/* test_mpnn: the message-passing network of the DOPPLER policies (nn/dp_mpnn.h) on its own:
 * its backward against central finite differences of a loss of its output, for every parameter
 * tensor (projection, edge network, convolution bias, GRU); the output's
 * shape and determinism; and that one more step changes the output (the steps are used). */
#include "dp_gradcheck.h"
#include "dp_mpnn.h"
#include "dp_nn.h"
#include "dp_test.h"

#include <gsl/gsl_rng.h>

enum { N = 5, F = 3, D = 4, K = 3 };

typedef struct net {
    dp_nn_ecgraph *g;
    dp_nn_params p;
    dp_mpnn m;
    float X[N * F];
    float wout[N * D];   /* the loss: sum of wout * out, so dL/dout = wout */
} net;

/* 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 4, 1 -> 4 and back (bidirected); two edge feature classes */
static void build(net *t, int steps, unsigned long seed)
{
    const int src[] = {0, 0, 1, 2, 3, 1, 1, 2, 3, 3, 4, 4};
    const int dst[] = {1, 2, 3, 3, 4, 4, 0, 0, 1, 2, 3, 1};
    const float f[] = {0.5f, -1, 0.5f, -1, 0.5f, -1, 0.5f, -1, 0.5f, -1, 0.5f, -1};
    dp_error err;
    t->g = dp_nn_ecgraph_build(N, 12, src, dst, f, &err);
    ck_assert_msg(t->g != NULL, "%s", err.msg);
    dp_nn_params_init(&t->p);
    ck_assert_int_eq(dp_mpnn_declare(&t->m, &t->p, "mpnn", F, D, K, steps), DP_OK);
    ck_assert_int_eq(dp_nn_params_alloc(&t->p), DP_OK);
    ck_assert_int_eq(dp_mpnn_alloc(&t->m, &t->p, t->g), DP_OK);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    ck_assert_int_eq(dp_mpnn_init(&t->m, r), DP_OK);
    /* non-zero biases too, so that their gradients are exercised away from 0 */
    for (int i = 0; i < t->p.n_tensors; i++)
        if (t->p.t[i].rows == 1)
            for (int k = 0; k < t->p.t[i].cols; k++) dp_nn_param(&t->p, i)[k] = (float)(gsl_rng_uniform(r) - 0.5) * 0.2f;
    for (int i = 0; i < N * F; i++) t->X[i] = (float)(gsl_rng_uniform(r) * 2 - 1);
    for (int i = 0; i < N * D; i++) t->wout[i] = (float)(gsl_rng_uniform(r) * 2 - 1);
    gsl_rng_free(r);
}

static void destroy(net *t)
{
    dp_mpnn_free(&t->m);
    dp_nn_params_free(&t->p);
    dp_nn_ecgraph_free(t->g);
}

static double loss(void *ctx)
{
    net *t = ctx;
    const float *out = dp_mpnn_forward(&t->m, t->X);
    double L = 0;
    for (int i = 0; i < N * D; i++) L += (double)t->wout[i] * out[i];
    return L;
}

START_TEST(gradients)
{
    net t;
    build(&t, 2, 5);
    /* the backward gives parameter gradients only (the node features are inputs): every tensor */
    dp_nn_params_zero_grad(&t.p);
    loss(&t);
    dp_mpnn_backward(&t.m, t.wout);
    for (int i = 0; i < t.p.n_tensors; i++) {
        const dp_nn_tensor *x = &t.p.t[i];
        size_t n = (size_t)x->rows * x->cols;
        ck_assert_msg(dp_gradcheck(x->name, dp_nn_param(&t.p, i), dp_nn_grad(&t.p, i), n, 1, loss, &t, 1e-2, 5e-3, 5e-4) == 0,
                      "tensor %s", x->name);
    }
    destroy(&t);
}
END_TEST

/* the output is (n, d), the same for the same parameters, and the backward accumulates (+=) */
START_TEST(shape_determinism_accumulation)
{
    net t;
    build(&t, 3, 9);
    float a[N * D], b[N * D];
    memcpy(a, dp_mpnn_forward(&t.m, t.X), sizeof a);
    memcpy(b, dp_mpnn_forward(&t.m, t.X), sizeof b);
    ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
    dp_nn_params_zero_grad(&t.p);
    dp_mpnn_backward(&t.m, t.wout);
    float *once = malloc(t.p.n * sizeof(float));
    memcpy(once, t.p.grad, t.p.n * sizeof(float));
    dp_mpnn_forward(&t.m, t.X);
    dp_mpnn_backward(&t.m, t.wout);
    for (size_t i = 0; i < t.p.n; i++) ck_assert(fabsf(t.p.grad[i] - 2 * once[i]) <= 1e-5f * (1 + fabsf(once[i])));
    free(once);
    destroy(&t);
    /* one more message-passing step with the same weights changes the output */
    net u;
    build(&u, 4, 9);
    ck_assert_int_ne(memcmp(a, dp_mpnn_forward(&u.m, u.X), sizeof a), 0);
    destroy(&u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mpnn");
    TCase *t = tcase_create("mpnn");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, gradients);
    tcase_add_test(t, shape_determinism_accumulation);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
