/* test_nn: the layer library (nn/dp_nn.h): hand-computed values, and every layer's backward
 * against central finite differences (gsl_deriv_central). */
#include "dp_gradcheck.h"
#include "dp_nn.h"
#include "dp_test.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static gsl_rng *rng_new(unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    return r;
}

static void fill(float *x, size_t n, gsl_rng *r, double scale)
{
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * (2 * gsl_rng_uniform(r) - 1));
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* ---- the matrix product ---- */

/* dp_nn_gemm's definition written out plainly (nn/dp_nn.h): per chunk of DP_NN_GEMM_KC values of
 * k, a float sum from 0 in k order; beta C + alpha s_0, then + alpha s_c. */
static float gemm_ref(int ta, int tb, int m, int n, int K, float alpha, const float *A, int lda,
                      const float *B, int ldb, float beta, float c)
{
    if (K == 0) return beta == 0.0f ? 0.0f : beta * c;
    for (int k0 = 0; k0 < K; k0 += DP_NN_GEMM_KC) {
        float s = 0.0f;
        for (int k = k0; k < K && k < k0 + DP_NN_GEMM_KC; k++) {
            volatile float x = (ta ? A[(size_t)k * lda + m] : A[(size_t)m * lda + k]) *
                               (tb ? B[(size_t)n * ldb + k] : B[(size_t)k * ldb + n]);
            s += x;
        }
        volatile float as = alpha * s;
        if (k0 > 0) c += as;
        else if (beta == 0.0f) c = as;
        else {
            volatile float bc = beta * c;
            c = bc + as;
        }
    }
    return c;
}

/* Every element of every shape and transposition is the definition's bits (not close: equal),
 * and within float rounding of the double product. */
START_TEST(gemm_definition)
{
    gsl_rng *r = rng_new(11);
    const int shapes[][3] = {{1, 1, 1}, {1, 64, 128}, {3, 65, 129}, {7, 130, 300}, {2, 1, 513}, {5, 3, 0}, {64, 96, 256}, {6, 24, 130}, {9, 13, 7}, {4, 8, 1}, {182, 1, 32}, {17, 3, 300}, {23, 7, 15}};
    const float ab[][2] = {{1, 0}, {1, 1}, {0.25f, -1.5f}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const int M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
        const int lda = 3 + (M > K ? M : K), ldb = 5 + (N > K ? N : K), ldc = N + 2;
        const size_t na = (size_t)lda * (M > K ? M : K) + 1, nb = (size_t)ldb * (N > K ? N : K) + 1;
        float *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B);
        float *C0 = malloc((size_t)M * ldc * sizeof *C0), *C = malloc((size_t)M * ldc * sizeof *C);
        fill(A, na, r, 1.0);
        fill(B, nb, r, 1.0);
        fill(C0, (size_t)M * ldc, r, 1.0);
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (size_t q = 0; q < sizeof ab / sizeof *ab; q++) {
                    memcpy(C, C0, (size_t)M * ldc * sizeof *C);
                    dp_nn_gemm(ta, tb, M, N, K, ab[q][0], A, lda, B, ldb, ab[q][1], C, ldc);
                    for (int m = 0; m < M; m++)
                        for (int n = 0; n < N; n++) {
                            const float want = gemm_ref(ta, tb, m, n, K, ab[q][0], A, lda, B, ldb, ab[q][1],
                                                        C0[(size_t)m * ldc + n]);
                            const float got = C[(size_t)m * ldc + n];
                            ck_assert_msg(memcmp(&got, &want, sizeof got) == 0,
                                          "gemm %dx%dx%d ta %d tb %d: C[%d][%d] %.9g, definition %.9g", M, N, K,
                                          ta, tb, m, n, got, want);
                            double d = ab[q][1] * (double)C0[(size_t)m * ldc + n];
                            for (int k = 0; k < K; k++)
                                d += ab[q][0] * (double)(ta ? A[(size_t)k * lda + m] : A[(size_t)m * lda + k]) *
                                     (tb ? B[(size_t)n * ldb + k] : B[(size_t)k * ldb + n]);
                            ck_assert_msg(fabs(got - d) <= 1e-5 * (K + 2), "gemm %.9g vs double %.9g", got, d);
                        }
                    /* the padding between rows of C is untouched */
                    for (int m = 0; m < M; m++)
                        for (int n = N; n < ldc; n++) ck_assert(C[(size_t)m * ldc + n] == C0[(size_t)m * ldc + n]);
                }
        free(A);
        free(B);
        free(C0);
        free(C);
    }
    gsl_rng_free(r);
}
END_TEST

/* Issue 28: a row of a linear layer has the same bits computed alone (one op, one device: what
 * doppler place's step computes) or in a batch (training's episode and its greedy evaluation),
 * and with the weight given transposed. Through OpenBLAS the single row went through sgemv and
 * the batch through sgemm, which round differently under the Haswell kernel; greedy choices
 * flipped on the last bit and place gave another placement than train had reported. */
START_TEST(linear_row_independent_of_batch)
{
    gsl_rng *r = rng_new(5);
    const int N = 37, C = 515, OC = 130;
    float *x = malloc((size_t)N * C * sizeof *x), *w = malloc((size_t)OC * C * sizeof *w), b[130];
    float *wt = malloc((size_t)OC * C * sizeof *wt), *all = malloc((size_t)N * OC * sizeof *all);
    float one[130], viat[130];
    fill(x, (size_t)N * C, r, 1.0);
    fill(w, (size_t)OC * C, r, 0.1);
    fill(b, OC, r, 1.0);
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++) wt[(size_t)c * OC + o] = w[(size_t)o * C + c];
    dp_nn_linear_forward(all, x, w, b, N, C, OC);
    for (int i = 0; i < N; i++) {
        dp_nn_linear_forward(one, x + (size_t)i * C, w, b, 1, C, OC);
        memcpy(viat, b, sizeof b);
        dp_nn_gemm(0, 0, 1, OC, C, 1.0f, x + (size_t)i * C, C, wt, OC, 1.0f, viat, OC);
        ck_assert_msg(memcmp(one, all + (size_t)i * OC, sizeof one) == 0, "row %d alone differs from the batch", i);
        ck_assert_msg(memcmp(one, viat, sizeof one) == 0, "row %d through the transposed weight differs", i);
    }
    free(x);
    free(w);
    free(wt);
    free(all);
    gsl_rng_free(r);
}
END_TEST

/* ---- linear ---- */
typedef struct { int N, C, OC; float *x, *w, *b, *out, *R; } lin_ctx;
static double lin_loss(void *p)
{
    lin_ctx *c = p;
    dp_nn_linear_forward(c->out, c->x, c->w, c->b, c->N, c->C, c->OC);
    return dot(c->out, c->R, (size_t)c->N * c->OC);
}

START_TEST(linear_values)
{
    /* out = x w^T + b, x = [1 2], w = [[1 0],[2 -1],[0.5 0.5]], b = [0 1 -1] */
    float x[2] = {1, 2}, w[6] = {1, 0, 2, -1, 0.5f, 0.5f}, b[3] = {0, 1, -1}, out[3];
    dp_nn_linear_forward(out, x, w, b, 1, 2, 3);
    ck_assert_float_eq(out[0], 1);
    ck_assert_float_eq(out[1], 1);
    ck_assert_float_eq(out[2], 0.5f);
    float x2[4] = {1, 2, -1, 0}, out2[6];
    dp_nn_linear_forward(out2, x2, w, NULL, 2, 2, 3);
    ck_assert_float_eq(out2[3], -1);
    ck_assert_float_eq(out2[4], -2);
    ck_assert_float_eq(out2[5], -0.5f);
}
END_TEST

START_TEST(linear_grad)
{
    gsl_rng *r = rng_new(1);
    lin_ctx c = {5, 4, 3, NULL, NULL, NULL, NULL, NULL};
    float x[20], w[12], b[3], out[15], R[15], dx[20] = {0}, dw[12] = {0}, db[3] = {0};
    c.x = x; c.w = w; c.b = b; c.out = out; c.R = R;
    fill(x, 20, r, 1); fill(w, 12, r, 1); fill(b, 3, r, 1); fill(R, 15, r, 1);
    dp_nn_linear_backward(dx, dw, db, R, x, w, 5, 4, 3);
    ck_assert_int_eq(dp_gradcheck("lin.x", x, dx, 20, 1, lin_loss, &c, 1e-2, 1e-3, 1e-4), 0);
    ck_assert_int_eq(dp_gradcheck("lin.w", w, dw, 12, 1, lin_loss, &c, 1e-2, 1e-3, 1e-4), 0);
    ck_assert_int_eq(dp_gradcheck("lin.b", b, db, 3, 1, lin_loss, &c, 1e-2, 1e-3, 1e-4), 0);
    /* the backward accumulates: a second call doubles the gradient */
    float dw1 = dw[7];
    dp_nn_linear_backward(NULL, dw, NULL, R, x, w, 5, 4, 3);
    ck_assert_float_eq_tol(dw[7], 2 * dw1, 1e-5);
    gsl_rng_free(r);
}
END_TEST

/* ---- leaky relu ---- */
typedef struct { size_t n; float *x, *out, *R; float slope; } act_ctx;
static double act_loss(void *p)
{
    act_ctx *c = p;
    dp_nn_leaky_relu_forward(c->out, c->x, c->n, c->slope);
    return dot(c->out, c->R, c->n);
}

START_TEST(leaky_relu)
{
    float x[4] = {-2, -0.5f, 0.5f, 3}, y[4];
    dp_nn_leaky_relu_forward(y, x, 4, 0.1f);
    ck_assert_float_eq_tol(y[0], -0.2f, 1e-7);
    ck_assert_float_eq(y[3], 3);
    gsl_rng *r = rng_new(2);
    float xs[16], out[16], R[16], dx[16] = {0};
    fill(xs, 16, r, 1);
    for (int i = 0; i < 16; i++)
        if (fabsf(xs[i]) < 0.05f) xs[i] = 0.3f; /* keep away from the kink */
    fill(R, 16, r, 1);
    act_ctx c = {16, xs, out, R, 0.1f};
    dp_nn_leaky_relu_backward(dx, R, xs, 16, 0.1f);
    ck_assert_int_eq(dp_gradcheck("lrelu.x", xs, dx, 16, 1, act_loss, &c, 1e-2, 1e-3, 1e-4), 0);
    gsl_rng_free(r);
}
END_TEST

/* ---- z-score ---- */
typedef struct { int N, C; float *x, *out, *mean, *rstd, *R; } z_ctx;
static double z_loss(void *p)
{
    z_ctx *c = p;
    dp_nn_zscore_forward(c->out, c->mean, c->rstd, c->x, c->N, c->C, 1e-6f);
    return dot(c->out, c->R, (size_t)c->N * c->C);
}

START_TEST(zscore)
{
    /* column [1 2 3]: mean 2, population std sqrt(2/3); column [5 5 5]: constant -> zeros */
    float x[6] = {1, 5, 2, 5, 3, 5}, y[6], mean[2], rstd[2];
    dp_nn_zscore_forward(y, mean, rstd, x, 3, 2, 1e-6f);
    ck_assert_float_eq_tol(mean[0], 2, 1e-6);
    ck_assert_float_eq_tol(y[0], -1 / sqrtf(2.0f / 3), 1e-5);
    ck_assert_float_eq_tol(y[4], 1 / sqrtf(2.0f / 3), 1e-5);
    ck_assert_float_eq(y[1], 0);
    gsl_rng *r = rng_new(3);
    enum { N = 6, C = 3 };
    float xs[N * C], out[N * C], R[N * C], m[C], s[C], dx[N * C] = {0};
    fill(xs, N * C, r, 2);
    fill(R, N * C, r, 1);
    z_ctx c = {N, C, xs, out, m, s, R};
    z_loss(&c);
    dp_nn_zscore_backward(dx, R, xs, m, s, N, C, 1e-6f);
    ck_assert_int_eq(dp_gradcheck("zscore.x", xs, dx, N * C, 1, z_loss, &c, 1e-2, 2e-3, 1e-3), 0);
    /* a constant column gets zero gradient and no NaN */
    float xc[4] = {1, 1, 1, 1}, Rc[4] = {1, -2, 3, 0.5f}, dxc[4] = {0}, yc[4];
    dp_nn_zscore_forward(yc, m, s, xc, 4, 1, 1e-6f);
    dp_nn_zscore_backward(dxc, Rc, xc, m, s, 4, 1, 1e-6f);
    for (int i = 0; i < 4; i++) ck_assert(isfinite(dxc[i]));
    gsl_rng_free(r);
}
END_TEST

/* ---- sum pooling ---- */
typedef struct { float *x, *out, *R; const int *ptr, *idx; int M, C; } pool_ctx;
static double pool_loss(void *p)
{
    pool_ctx *c = p;
    dp_nn_sum_pool_forward(c->out, c->x, c->ptr, c->idx, c->M, c->C);
    return dot(c->out, c->R, (size_t)c->M * c->C);
}

START_TEST(sum_pool)
{
    /* lists {0,2}, {}, {1,1,3} over 4 rows of 2 */
    const int ptr[4] = {0, 2, 2, 5}, idx[5] = {0, 2, 1, 1, 3};
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[6], R[6], dx[8] = {0};
    dp_nn_sum_pool_forward(out, x, ptr, idx, 3, 2);
    ck_assert_float_eq(out[0], 6);
    ck_assert_float_eq(out[1], 8);
    ck_assert_float_eq(out[2], 0);
    ck_assert_float_eq(out[4], 13);
    ck_assert_float_eq(out[5], 16);
    gsl_rng *r = rng_new(4);
    fill(R, 6, r, 1);
    pool_ctx c = {x, out, R, ptr, idx, 3, 2};
    dp_nn_sum_pool_backward(dx, R, ptr, idx, 3, 2);
    ck_assert_int_eq(dp_gradcheck("pool.x", x, dx, 8, 1, pool_loss, &c, 1e-1, 1e-3, 1e-4), 0);
    gsl_rng_free(r);
}
END_TEST

START_TEST(chain_sum)
{
    /* a forest of chains over 6 rows of 3: 0 -> 2 -> 5, 1 -> 2, 3 -> 4, 5 and 4 end; the order
     * lists each next before the node */
    const int next[6] = {2, 2, 5, 4, -1, -1}, order[6] = {5, 4, 2, 3, 0, 1};
    /* the same sums as index lists for sum pooling */
    const int ptr[7] = {0, 3, 6, 8, 10, 11, 12}, idx[12] = {0, 2, 5, 1, 2, 5, 2, 5, 3, 4, 4, 5};
    gsl_rng *r = rng_new(11);
    float x[18], out[18], ref[18], R[18], dacc[18], dx[18] = {0}, dref[18] = {0};
    fill(x, 18, r, 1);
    fill(R, 18, r, 1);
    dp_nn_chain_sum_forward(out, x, next, order, 6, 3);
    dp_nn_sum_pool_forward(ref, x, ptr, idx, 6, 3);
    for (int i = 0; i < 18; i++) ck_assert_float_eq_tol(out[i], ref[i], 1e-6f);
    memcpy(dacc, R, sizeof dacc);
    dp_nn_chain_sum_backward(dx, dacc, next, order, 6, 3);
    dp_nn_sum_pool_backward(dref, R, ptr, idx, 6, 3);
    for (int i = 0; i < 18; i++) ck_assert_float_eq_tol(dx[i], dref[i], 1e-6f);
    /* row 2 is on the chains of 0, 1 and 2 */
    for (int j = 0; j < 3; j++) ck_assert_float_eq_tol(dx[2 * 3 + j], R[j] + R[3 + j] + R[6 + j], 1e-6f);
    gsl_rng_free(r);
}
END_TEST

/* ---- softmax, log-softmax, entropy ---- */
typedef struct { int n; float *z, *p, *lp, *cw; double hw; } sm_ctx;
static double sm_loss(void *q)
{
    sm_ctx *c = q;
    double H = dp_nn_softmax_forward(c->p, c->lp, c->z, c->n);
    return dot(c->lp, c->cw, (size_t)c->n) + c->hw * H;
}

START_TEST(softmax)
{
    float z[3] = {0, 0, (float)log(2.0)}, p[3], lp[3];
    double H = dp_nn_softmax_forward(p, lp, z, 3);
    ck_assert_float_eq_tol(p[0], 0.25f, 1e-7);
    ck_assert_float_eq_tol(p[2], 0.5f, 1e-7);
    ck_assert_double_eq_tol(H, 1.5 * log(2.0), 1e-7);
    /* large logits stay finite */
    float zb[2] = {1000, 0};
    dp_nn_softmax_forward(p, lp, zb, 2);
    ck_assert_float_eq(p[0], 1);
    ck_assert(isfinite(lp[1]));
    gsl_rng *r = rng_new(5);
    enum { N = 7 };
    float zs[N], ps[N], lps[N], cw[N], dz[N] = {0};
    fill(zs, N, r, 2);
    fill(cw, N, r, 1);
    sm_ctx c = {N, zs, ps, lps, cw, 0.7};
    double Hs = dp_nn_softmax_forward(ps, lps, zs, N);
    dp_nn_log_softmax_backward(dz, cw, ps, N);
    dp_nn_entropy_backward(dz, 0.7f, ps, lps, Hs, N);
    ck_assert_int_eq(dp_gradcheck("softmax.z", zs, dz, N, 1, sm_loss, &c, 1e-2, 1e-3, 1e-4), 0);
    gsl_rng_free(r);
}
END_TEST

/* ---- GRU ---- */
typedef struct { int N, C; float *x, *h, *wi, *wh, *bi, *bh, *out, *cache, *scr, *R; } gru_ctx;
static double gru_loss(void *p)
{
    gru_ctx *c = p;
    dp_nn_gru_forward(c->out, c->cache, c->x, c->h, c->wi, c->wh, c->bi, c->bh, c->N, c->C, c->scr);
    return dot(c->out, c->R, (size_t)c->N * c->C);
}

START_TEST(gru)
{
    enum { N = 3, C = 4 };
    gsl_rng *r = rng_new(6);
    float x[N * C], h[N * C], wi[3 * C * C], wh[3 * C * C], bi[3 * C], bh[3 * C], out[N * C], cache[N * 4 * C],
        scr[N * 6 * C], R[N * C];
    float dx[N * C] = {0}, dh[N * C] = {0}, dwi[3 * C * C] = {0}, dwh[3 * C * C] = {0}, dbi[3 * C] = {0}, dbh[3 * C] = {0};
    fill(x, N * C, r, 1); fill(h, N * C, r, 1); fill(wi, 3 * C * C, r, 0.8); fill(wh, 3 * C * C, r, 0.8);
    fill(bi, 3 * C, r, 0.5); fill(bh, 3 * C, r, 0.5); fill(R, N * C, r, 1);
    ck_assert_uint_eq(dp_nn_gru_scratch(N, C), N * 6 * C);
    gru_ctx c = {N, C, x, h, wi, wh, bi, bh, out, cache, scr, R};
    gru_loss(&c);
    /* hand check of one unit: recompute row 0, unit 0 from the definition */
    {
        double gr = bi[0] + bh[0], gz = bi[C] + bh[C], gin = bi[2 * C], ghn = bh[2 * C];
        for (int k = 0; k < C; k++) {
            gr += wi[k] * x[k] + wh[k] * h[k];
            gz += wi[C * C + k] * x[k] + wh[C * C + k] * h[k];
            gin += wi[2 * C * C + k] * x[k];
            ghn += wh[2 * C * C + k] * h[k];
        }
        double rr = 1 / (1 + exp(-gr)), zz = 1 / (1 + exp(-gz)), nn = tanh(gin + rr * ghn);
        ck_assert_double_eq_tol(out[0], (1 - zz) * nn + zz * h[0], 1e-5);
    }
    /* the gates' exp is computed without libm (vectorised): every gate, over the whole range and
     * into saturation, within float rounding of libm's */
    {
        enum { M = 2001 };
        float gx[M], gh0[M], o[M], ca[4 * M], sc[6 * M];
        /* C = 1, N = M: x runs over [-100, 100]; with w_ih = (1, 1, 1) and w_hh = 0 every gate's
         * pre-activation is x + its bias */
        float w1[3] = {1, 1, 1}, w0[3] = {0, 0, 0}, b0[3] = {0, 0, 0};
        for (int i = 0; i < M; i++) {
            gx[i] = -100.0f + 0.1f * (float)i;
            gh0[i] = 0.5f;
        }
        dp_nn_gru_forward(o, ca, gx, gh0, w1, w0, b0, b0, M, 1, sc);
        double worst = 0;
        for (int i = 0; i < M; i++) {
            double sg = 1 / (1 + exp(-(double)gx[i])), th = tanh((double)gx[i]);
            ck_assert(isfinite(o[i]));
            worst = fmax(worst, fabs(ca[4 * i] - sg));
            worst = fmax(worst, fabs(ca[4 * i + 1] - sg));
            worst = fmax(worst, fabs(ca[4 * i + 2] - th));
            worst = fmax(worst, fabs((double)o[i] - ((1 - sg) * th + sg * 0.5)));
        }
        ck_assert_double_lt(worst, 3e-7);
    }
    dp_nn_gru_backward(dx, dh, dwi, dwh, dbi, dbh, R, cache, x, h, wi, wh, N, C, scr);
    ck_assert_int_eq(dp_gradcheck("gru.x", x, dx, N * C, 1, gru_loss, &c, 1e-2, 2e-3, 1e-4), 0);
    ck_assert_int_eq(dp_gradcheck("gru.h", h, dh, N * C, 1, gru_loss, &c, 1e-2, 2e-3, 1e-4), 0);
    ck_assert_int_eq(dp_gradcheck("gru.wih", wi, dwi, 3 * C * C, 1, gru_loss, &c, 1e-2, 2e-3, 1e-4), 0);
    ck_assert_int_eq(dp_gradcheck("gru.whh", wh, dwh, 3 * C * C, 1, gru_loss, &c, 1e-2, 2e-3, 1e-4), 0);
    ck_assert_int_eq(dp_gradcheck("gru.bih", bi, dbi, 3 * C, 1, gru_loss, &c, 1e-2, 2e-3, 1e-4), 0);
    ck_assert_int_eq(dp_gradcheck("gru.bhh", bh, dbh, 3 * C, 1, gru_loss, &c, 1e-2, 2e-3, 1e-4), 0);
    gsl_rng_free(r);
}
END_TEST

/* ---- edge-conditioned convolution ---- */
typedef struct { dp_nn_ecgraph *g; int Ci, Co; float *h, *wc, *b, *out, *gc, *scr, *R; } ec_ctx;
static double ec_loss(void *p)
{
    ec_ctx *c = p;
    dp_nn_ecconv_forward(c->out, c->gc, c->h, c->wc, c->b, c->g, c->Ci, c->Co, c->scr);
    return dot(c->out, c->R, (size_t)c->g->n_nodes * c->Co);
}

START_TEST(ecconv)
{
    /* 4 nodes; edges 0->1 (f 2), 0->2 (f 2), 1->3 (f 5), 2->3 (f 2), 3->0 (f 5), 1->2 (f 2) */
    const int src[6] = {0, 0, 1, 2, 3, 1}, dst[6] = {1, 2, 3, 3, 0, 2};
    const float f[6] = {2, 2, 5, 2, 5, 2};
    dp_error err;
    dp_nn_ecgraph *g = dp_nn_ecgraph_build(4, 6, src, dst, f, &err);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(g->n_classes, 2);
    ck_assert_float_eq(g->class_feat[0], 2);
    /* class 2 rows: dst 1, 2, 3; class 5 rows: dst 0, 3 */
    ck_assert_int_eq(g->n_rows, 5);
    ck_assert_int_eq(g->max_class_rows, 3);
    enum { Ci = 3, Co = 2 };
    gsl_rng *r = rng_new(7);
    float h[4 * Ci], wc[2 * Ci * Co], b[Co], out[4 * Co], gc[5 * Ci], R[4 * Co];
    float scr[3 * (Ci + Co)];
    ck_assert_uint_eq(dp_nn_ecconv_scratch(g, Ci, Co), 3 * (Ci + Co));
    fill(h, 4 * Ci, r, 1); fill(wc, 2 * Ci * Co, r, 1); fill(b, Co, r, 1); fill(R, 4 * Co, r, 1);
    ec_ctx c = {g, Ci, Co, h, wc, b, out, gc, scr, R};
    ec_loss(&c);
    /* out[3] = b + (h1 W5) + (h2 W2) computed by hand */
    for (int j = 0; j < Co; j++) {
        double s = b[j];
        for (int k = 0; k < Ci; k++) s += h[Ci + k] * wc[Ci * Co + k * Co + j] + h[2 * Ci + k] * wc[k * Co + j];
        ck_assert_double_eq_tol(out[3 * Co + j], s, 1e-5);
    }
    float dh[4 * Ci] = {0}, dwc[2 * Ci * Co] = {0}, db[Co] = {0};
    dp_nn_ecconv_backward(dh, dwc, db, R, gc, wc, g, Ci, Co, scr);
    ck_assert_int_eq(dp_gradcheck("ec.h", h, dh, 4 * Ci, 1, ec_loss, &c, 1e-2, 1e-3, 1e-4), 0);
    ck_assert_int_eq(dp_gradcheck("ec.w", wc, dwc, 2 * Ci * Co, 1, ec_loss, &c, 1e-2, 1e-3, 1e-4), 0);
    ck_assert_int_eq(dp_gradcheck("ec.b", b, db, Co, 1, ec_loss, &c, 1e-2, 1e-3, 1e-4), 0);
    dp_nn_ecgraph_free(g);
    /* bad edges are rejected */
    const int bad_dst[1] = {9};
    ck_assert_ptr_null(dp_nn_ecgraph_build(4, 1, src, bad_dst, f, &err));
    ck_assert_int_eq(err.code, DP_EINVAL);
    gsl_rng_free(r);
}
END_TEST

/* ---- scaled dot-product attention ---- */
typedef struct { int N, H, dk, dv, causal; float *q, *k, *v, *out, *P, *R; } att_ctx;
static double att_loss(void *p)
{
    att_ctx *c = p;
    dp_nn_attention_forward(c->out, c->P, c->q, c->k, c->v, c->N, c->H, c->dk, c->dv, c->causal);
    return dot(c->out, c->R, (size_t)c->N * c->H * c->dv);
}

START_TEST(attention_values)
{
    /* one head, N = 2, dk = 1: q = [1, 0], k = [ln 3 * sqrt(1), 0] -> row 0 scores (ln 3, 0):
     * weights (3/4, 1/4); row 1 scores (0, 0): (1/2, 1/2). v = [[4], [8]] */
    float q[2] = {1, 0}, k[2] = {(float)log(3.0), 0}, v[2] = {4, 8}, out[2], P[4];
    dp_nn_attention_forward(out, P, q, k, v, 2, 1, 1, 1, 0);
    ck_assert_float_eq_tol(P[0], 0.75f, 1e-6);
    ck_assert_float_eq_tol(P[1], 0.25f, 1e-6);
    ck_assert_float_eq_tol(out[0], 5.0f, 1e-5);
    ck_assert_float_eq_tol(out[1], 6.0f, 1e-5);
    /* causal: row 0 sees only itself */
    dp_nn_attention_forward(out, P, q, k, v, 2, 1, 1, 1, 1);
    ck_assert_float_eq(P[0], 1);
    ck_assert_float_eq(P[1], 0);
    ck_assert_float_eq_tol(out[0], 4.0f, 1e-6);
    /* the 1/sqrt(dk) scale: dk = 4 with q = k rows of 1 -> score 4 / 2 = 2 against 0 */
    float q4[8] = {1, 1, 1, 1, 0, 0, 0, 0}, v2[2] = {1, 0}, o4[2], P4[4];
    dp_nn_attention_forward(o4, P4, q4, q4, v2, 2, 1, 4, 1, 0);
    ck_assert_float_eq_tol(P4[0], (float)(exp(2.0) / (exp(2.0) + 1)), 1e-6);
}
END_TEST

START_TEST(attention_grad)
{
    enum { N = 5, H = 2, DK = 3, DV = 2 };
    gsl_rng *r = rng_new(9);
    float q[N * H * DK], k[N * H * DK], v[N * H * DV], out[N * H * DV], P[H * N * N], R[N * H * DV], scr[N * N];
    ck_assert_uint_eq(dp_nn_attention_scratch(N), N * N);
    for (int causal = 0; causal <= 1; causal++) {
        fill(q, N * H * DK, r, 1); fill(k, N * H * DK, r, 1); fill(v, N * H * DV, r, 1); fill(R, N * H * DV, r, 1);
        float dq[N * H * DK] = {0}, dk[N * H * DK] = {0}, dv[N * H * DV] = {0};
        att_ctx c = {N, H, DK, DV, causal, q, k, v, out, P, R};
        att_loss(&c);
        /* rows of P sum to 1 */
        for (int i = 0; i < H * N; i++) {
            double s = 0;
            for (int j = 0; j < N; j++) s += P[i * N + j];
            ck_assert_double_eq_tol(s, 1, 1e-6);
        }
        dp_nn_attention_backward(dq, dk, dv, R, P, q, k, v, N, H, DK, DV, scr);
        ck_assert_int_eq(dp_gradcheck("att.q", q, dq, N * H * DK, 1, att_loss, &c, 1e-2, 1e-3, 1e-4), 0);
        ck_assert_int_eq(dp_gradcheck("att.k", k, dk, N * H * DK, 1, att_loss, &c, 1e-2, 1e-3, 1e-4), 0);
        ck_assert_int_eq(dp_gradcheck("att.v", v, dv, N * H * DV, 1, att_loss, &c, 1e-2, 1e-3, 1e-4), 0);
        /* in the causal case the first row's output does not depend on later keys */
        if (causal) {
            float keep = k[4 * H * DK];
            float o0 = out[0];
            k[4 * H * DK] += 1;
            att_loss(&c);
            ck_assert_float_eq(out[0], o0);
            k[4 * H * DK] = keep;
        }
    }
    gsl_rng_free(r);
}
END_TEST

/* ---- orthogonal init with a dirty heap ---- */
/* gsl_linalg_QR_decomp_r writes only the upper triangle of T: a T taken from malloc held heap
 * garbage below it, which made the "orthogonal" weights neither orthogonal nor reproducible
 * (two trainers with one seed started from different parameters). Fill freed blocks of the
 * sizes init allocates with garbage first, so that malloc hands them back dirty. */
static void dirty_heap(size_t k)
{
    for (int rep = 0; rep < 8; rep++) {
        size_t sz[4] = {k * k * sizeof(double), k * k * sizeof(double) + 64, 4096, 65536};
        void *b[4];
        for (int i = 0; i < 4; i++) {
            b[i] = malloc(sz[i]);
            if (b[i]) memset(b[i], 0x5a, sz[i]);
        }
        for (int i = 0; i < 4; i++) free(b[i]);
    }
}

START_TEST(orthogonal_dirty_heap)
{
    static const int shapes[][2] = {{16, 4}, {4, 16}, {9, 9}, {40, 12}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int R = shapes[s][0], C = shapes[s][1], k = R < C ? R : C;
        float w1[16 * 40], w2[16 * 40];
        gsl_rng *r = rng_new(21);
        dirty_heap((size_t)k);
        ck_assert_int_eq(dp_nn_init_orthogonal(w1, R, C, 1.0, r), DP_OK);
        gsl_rng_set(r, 21);
        dirty_heap((size_t)k);
        ck_assert_int_eq(dp_nn_init_orthogonal(w2, R, C, 1.0, r), DP_OK);
        ck_assert_int_eq(memcmp(w1, w2, (size_t)R * C * sizeof(float)), 0);
        /* the k vectors along the short side are orthonormal */
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) {
                double d = 0;
                for (int l = 0; l < (R < C ? C : R); l++)
                    d += R >= C ? (double)w1[l * C + i] * w1[l * C + j] : (double)w1[i * C + l] * w1[j * C + l];
                ck_assert_double_eq_tol(d, i == j ? 1.0 : 0.0, 1e-5);
            }
        gsl_rng_free(r);
    }
}
END_TEST

/* ---- parameters, init, Adam ---- */
START_TEST(params_init_adam)
{
    dp_nn_params p;
    dp_nn_params_init(&p);
    int a = dp_nn_params_add(&p, "w", 5, 3), b = dp_nn_params_add(&p, "wide", 3, 5);
    ck_assert_int_eq(dp_nn_params_add(&p, "bad", 0, 3), DP_EINVAL);
    ck_assert_int_eq(dp_nn_params_alloc(&p), DP_OK);
    ck_assert_int_eq(dp_nn_params_find(&p, "wide"), b);
    ck_assert_int_eq(dp_nn_params_find(&p, "nope"), -1);
    gsl_rng *r = rng_new(8);
    ck_assert_int_eq(dp_nn_init_orthogonal(dp_nn_param(&p, a), 5, 3, 1.0, r), DP_OK);
    ck_assert_int_eq(dp_nn_init_orthogonal(dp_nn_param(&p, b), 3, 5, 2.0, r), DP_OK);
    /* tall: columns orthonormal; wide: rows orthogonal with norm gain */
    float *w = dp_nn_param(&p, a), *v = dp_nn_param(&p, b);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0, t = 0;
            for (int k = 0; k < 5; k++) {
                s += (double)w[k * 3 + i] * w[k * 3 + j];
                t += (double)v[i * 5 + k] * v[j * 5 + k];
            }
            ck_assert_double_eq_tol(s, (i == j ? 1.0 : 0.0), 1e-6);
            ck_assert_double_eq_tol(t, (i == j ? 4.0 : 0.0), 1e-5);
        }
    /* the same on a dirty heap: GSL's blocked QR leaves the block reflector's lower triangle as
     * malloc gave it, and a freed buffer of that size filled with large values is what the next
     * allocation of T gets (bug: weights of 1e8 in every (d, 5) projection of `doppler train`) */
    const int shapes[][2] = {{64, 5}, {5, 64}, {16, 16}, {7, 3}};
    for (int sh = 0; sh < 4; sh++) {
        const int R = shapes[sh][0], C = shapes[sh][1], k = R < C ? R : C, m = R < C ? C : R;
        double *junk = malloc((size_t)k * k * sizeof(double));
        ck_assert_ptr_nonnull(junk);
        for (int i = 0; i < k * k; i++) junk[i] = 1e30;
        free(junk);
        float *ww = malloc((size_t)R * C * sizeof(float));
        ck_assert_ptr_nonnull(ww);
        ck_assert_int_eq(dp_nn_init_orthogonal(ww, R, C, 1.0, r), DP_OK);
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) {
                double s = 0;
                for (int q = 0; q < m; q++)
                    s += R >= C ? (double)ww[q * C + i] * ww[q * C + j] : (double)ww[i * C + q] * ww[j * C + q];
                ck_assert_double_eq_tol(s, i == j ? 1 : 0, 1e-5);
            }
        free(ww);
    }
    /* Adam's first step moves every parameter by lr against the gradient's sign */
    float before = w[0];
    dp_nn_params_zero_grad(&p);
    dp_nn_grad(&p, a)[0] = 3.0f;
    dp_nn_adam_step(&p, 0.01f, 0.9f, 0.999f, 1e-8f, 0);
    ck_assert_float_eq_tol(w[0], before - 0.01f, 1e-6);
    ck_assert_int_eq(p.adam_t, 1);
    /* Adam minimises a quadratic sum (x - 3)^2 */
    dp_nn_params q;
    dp_nn_params_init(&q);
    dp_nn_params_add(&q, "x", 1, 4);
    dp_nn_params_alloc(&q);
    for (int it = 0; it < 3000; it++) {
        for (int i = 0; i < 4; i++) q.grad[i] = 2 * (q.param[i] - 3);
        dp_nn_adam_step(&q, 0.01f, 0.9f, 0.999f, 1e-8f, 0);
    }
    for (int i = 0; i < 4; i++) ck_assert_float_eq_tol(q.param[i], 3, 1e-2);
    /* clipping */
    for (int i = 0; i < 4; i++) q.grad[i] = 3;
    ck_assert_double_eq_tol(dp_nn_clip_grad_norm(&q, 1.0), 6, 1e-9);
    ck_assert_double_eq_tol(dp_nn_clip_grad_norm(&q, 0), 1, 1e-6);
    dp_nn_params_free(&q);
    dp_nn_params_free(&p);
    gsl_rng_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nn");
    TCase *t = tcase_create("layers");
    tcase_add_test(t, gemm_definition);
    tcase_add_test(t, linear_row_independent_of_batch);
    tcase_add_test(t, linear_values);
    tcase_add_test(t, linear_grad);
    tcase_add_test(t, leaky_relu);
    tcase_add_test(t, zscore);
    tcase_add_test(t, sum_pool);
    tcase_add_test(t, chain_sum);
    tcase_add_test(t, softmax);
    tcase_add_test(t, gru);
    tcase_add_test(t, ecconv);
    tcase_add_test(t, attention_values);
    tcase_add_test(t, attention_grad);
    tcase_add_test(t, orthogonal_dirty_heap);
    tcase_add_test(t, params_init_adam);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
