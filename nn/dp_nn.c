/* dp_nn.c: the layer library (see dp_nn.h). */
#include "dp_nn.h"
#include "dp_alloc.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- parameter blocks ---- */

void dp_nn_params_init(dp_nn_params *p)
{
    memset(p, 0, sizeof *p);
}

int dp_nn_params_add(dp_nn_params *p, const char *name, int rows, int cols)
{
    if (p->failed) return p->failed;
    if (!name || strlen(name) >= DP_NN_NAME_MAX || rows <= 0 || cols <= 0) return DP_EINVAL;
    if (p->n_tensors == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        dp_nn_tensor *t = dp_alloc_realloc(p->t, (size_t)cap * sizeof *t);
        if (!t) return p->failed = DP_ENOMEM;
        p->t = t;
        p->cap = cap;
    }
    dp_nn_tensor *t = &p->t[p->n_tensors];
    memset(t, 0, sizeof *t);
    strcpy(t->name, name);
    t->rows = rows;
    t->cols = cols;
    t->offset = p->n;
    /* keep every tensor 16-float aligned inside the buffer (64 bytes: one cache line) */
    size_t sz = (size_t)rows * (size_t)cols;
    p->n += (sz + 15) & ~(size_t)15;
    return p->n_tensors++;
}

int dp_nn_params_alloc(dp_nn_params *p)
{
    if (p->failed) return p->failed;
    size_t n = p->n ? p->n : 1;
    p->param = dp_alloc_calloc_n(n, sizeof(float));
    p->grad = dp_alloc_calloc_n(n, sizeof(float));
    p->m = dp_alloc_calloc_n(n, sizeof(float));
    p->v = dp_alloc_calloc_n(n, sizeof(float));
    p->adam_t = 0;
    if (!p->param || !p->grad || !p->m || !p->v) return DP_ENOMEM;
    return DP_OK;
}

void dp_nn_params_free(dp_nn_params *p)
{
    if (!p) return;
    free(p->t);
    free(p->param);
    free(p->grad);
    free(p->m);
    free(p->v);
    memset(p, 0, sizeof *p);
}

void dp_nn_params_zero_grad(dp_nn_params *p)
{
    memset(p->grad, 0, p->n * sizeof(float));
}

int dp_nn_params_find(const dp_nn_params *p, const char *name)
{
    for (int i = 0; i < p->n_tensors; i++)
        if (strcmp(p->t[i].name, name) == 0) return i;
    return -1;
}

unsigned long long dp_nn_params_checksum(const dp_nn_params *p, unsigned long long h)
{
    const unsigned char *b = (const unsigned char *)p->param;
    const size_t n = p->param ? p->n * sizeof(float) : 0;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void dp_nn_adam_step(dp_nn_params *p, float lr, float beta1, float beta2, float eps, float weight_decay)
{
    p->adam_t++;
    const double bc1 = 1.0 - pow(beta1, (double)p->adam_t), bc2 = 1.0 - pow(beta2, (double)p->adam_t);
    const float a = (float)(lr / bc1), rbc2 = (float)(1.0 / bc2);
    for (size_t i = 0; i < p->n; i++) {
        float g = p->grad[i] + weight_decay * p->param[i];
        float m = p->m[i] = beta1 * p->m[i] + (1 - beta1) * g;
        float v = p->v[i] = beta2 * p->v[i] + (1 - beta2) * g * g;
        p->param[i] -= a * m / (sqrtf(v * rbc2) + eps);
    }
}

double dp_nn_clip_grad_norm(dp_nn_params *p, double max_norm)
{
    double s = 0;
    for (size_t i = 0; i < p->n; i++) s += (double)p->grad[i] * p->grad[i];
    double norm = sqrt(s);
    if (max_norm > 0 && norm > max_norm) {
        float k = (float)(max_norm / norm);
        for (size_t i = 0; i < p->n; i++) p->grad[i] *= k;
    }
    return norm;
}

/* ---- the matrix product ---- */

/* Eight floats, for the kernel below (GCC's vector extension: AVX2 registers in the AVX2 clone,
 * pairs of SSE registers otherwise); aligned as floats, so loads and stores need no alignment. */
typedef float gemm_v8 __attribute__((vector_size(32), aligned(4)));

/* (a macro: a function returning such a vector changes the ABI where AVX is off, -Wpsabi) */
#define GEMM_LOAD(v, p) memcpy(&(v), (p), sizeof(gemm_v8))

/* One tile of a chunk: rows m..m+R-1 (R 1 to 4) and columns j..j+8W-1 (W 1 or 2) of s, its kc
 * products accumulated in registers in k order, then C's update (gemm_chunk). Every element gets
 * the operations of the scalar loop, in its order, each rounded alone: the same bits (but the
 * payload of a NaN where two NaNs meet, which IEEE 754 leaves to the hardware: a review found the
 * vector add keep the other operand's than the scalar loop did). */
static inline __attribute__((always_inline)) void gemm_tile(const int R, const int W, int trans_a, int m, int j, int kc,
                                                           int k0, float alpha, const float *A, int lda,
                                                           const float *P, int ldp, float beta, int first, float *C,
                                                           int ldc)
{
    gemm_v8 s[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int w = 0; w < W; w++) s[r][w] = (gemm_v8){0};
    for (int k = 0; k < kc; k++) {
        const float *p = P + (size_t)k * ldp + j;
        gemm_v8 p0, p1;
        GEMM_LOAD(p0, p);
        if (W > 1) GEMM_LOAD(p1, p + 8);
        else p1 = p0;
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const float a = trans_a ? A[(size_t)(k0 + k) * lda + m + r] : A[(size_t)(m + r) * lda + k0 + k];
            s[r][0] += a * p0;
            if (W > 1) s[r][1] += a * p1;
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int w = 0; w < W; w++) {
            float *c = C + (size_t)(m + r) * ldc + j + 8 * w;
            gemm_v8 v, old;
            if (!first) {
                GEMM_LOAD(old, c);
                v = old + alpha * s[r][w];
            } else if (beta == 0.0f) {
                v = alpha * s[r][w];
            } else {
                GEMM_LOAD(old, c);
                v = beta * old + alpha * s[r][w];
            }
            memcpy(c, &v, sizeof v);
        }
}

/* The rows m0..m1 of one chunk: s (per row, nc columns) over kc products, then the update of C
 * (first chunk: beta C + alpha s; later ones: C + alpha s). P is op(B)'s chunk, kc rows of nc
 * contiguous columns with row stride ldp. Tiles of 4 rows and 16 columns keep their sums in
 * registers across k (the loop before kept them in arrays, loaded and stored at every product: a
 * third of a zero-shot rollout at 31,374 ops), each s[m][j] still adding its products one after
 * another in k order; the columns past the last multiple of 8 are summed one by one. */
/* A clone for AVX2 (8 floats a vector, not 4), chosen at load time where the CPU has it: the
 * same operations in the same order, each rounded alone (AVX2 has no fused multiply-add, and
 * the clone is not built for a target that does), so the same bits as the default. GCC on
 * x86-64 only, and not under the address sanitizer. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define DP_NN_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define DP_NN_AVX2_CLONE
#endif

DP_NN_AVX2_CLONE
static void gemm_chunk(int trans_a, int m0, int m1, int nc, int kc, int k0, float alpha, const float *A,
                       int lda, const float *P, int ldp, float beta, int first, float *C, int ldc)
{
    const int n16 = nc / 16 * 16, n8 = nc / 8 * 8;
    int m = m0;
    for (; m + 3 < m1; m += 4) {
        for (int j = 0; j < n16; j += 16) gemm_tile(4, 2, trans_a, m, j, kc, k0, alpha, A, lda, P, ldp, beta, first, C, ldc);
        if (n8 > n16) gemm_tile(4, 1, trans_a, m, n16, kc, k0, alpha, A, lda, P, ldp, beta, first, C, ldc);
    }
    for (; m < m1; m++) {
        for (int j = 0; j < n16; j += 16) gemm_tile(1, 2, trans_a, m, j, kc, k0, alpha, A, lda, P, ldp, beta, first, C, ldc);
        if (n8 > n16) gemm_tile(1, 1, trans_a, m, n16, kc, k0, alpha, A, lda, P, ldp, beta, first, C, ldc);
    }
    if (n8 == nc) return;
    /* the last nc - n8 columns (fewer than 8): eight rows at a time, a vector across the rows, so
     * that eight sums run side by side (one row's sum, each add waiting for the one before, made
     * a layer of one output, an MLP's score, the largest product of the improvement search:
     * 254 of its 823 million instructions, and latency-bound); each element still adds its
     * products one by one in k order, each rounded alone: the scalar loop's bits */
    m = m0;
    for (; m + 7 < m1; m += 8)
        for (int j = n8; j < nc; j++) {
            gemm_v8 s = {0};
            for (int k = 0; k < kc; k++) {
                gemm_v8 a;
                if (trans_a) {
                    GEMM_LOAD(a, A + (size_t)(k0 + k) * lda + m);
                } else {
#pragma GCC unroll 8
                    for (int r = 0; r < 8; r++) a[r] = A[(size_t)(m + r) * lda + k0 + k];
                }
                s += a * P[(size_t)k * ldp + j];
            }
#pragma GCC unroll 8
            for (int r = 0; r < 8; r++) {
                float *c = C + (size_t)(m + r) * ldc + j;
                if (!first) *c += alpha * s[r];
                else if (beta == 0.0f) *c = alpha * s[r];
                else *c = beta * *c + alpha * s[r];
            }
        }
    /* the rows left (fewer than 8), one element at a time */
    for (; m < m1; m++) {
        float s0[8];
        for (int j = n8; j < nc; j++) s0[j - n8] = 0.0f;
        for (int k = 0; k < kc; k++) {
            const float a0 = trans_a ? A[(size_t)(k0 + k) * lda + m] : A[(size_t)m * lda + k0 + k];
            const float *p = P + (size_t)k * ldp;
            for (int j = n8; j < nc; j++) {
                const float x0 = a0 * p[j];
                s0[j - n8] += x0;
            }
        }
        float *c0 = C + (size_t)m * ldc;
        if (!first)
            for (int j = n8; j < nc; j++) c0[j] += alpha * s0[j - n8];
        else if (beta == 0.0f)
            for (int j = n8; j < nc; j++) c0[j] = alpha * s0[j - n8];
        else
            for (int j = n8; j < nc; j++) c0[j] = beta * c0[j] + alpha * s0[j - n8];
    }
}

void dp_nn_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc)
{
    assert(M >= 0 && N >= 0 && K >= 0);   /* dimensions (debug builds) */
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {   /* C = beta C */
        for (int m = 0; m < M; m++) {
            float *c = C + (size_t)m * ldc;
            for (int j = 0; j < N; j++) c[j] = beta == 0.0f ? 0.0f : beta * c[j];
        }
        return;
    }
    float panel[DP_NN_GEMM_KC * DP_NN_GEMM_NC];
    for (int n0 = 0; n0 < N; n0 += DP_NN_GEMM_NC) {
        const int nc = N - n0 < DP_NN_GEMM_NC ? N - n0 : DP_NN_GEMM_NC;
        for (int k0 = 0; k0 < K; k0 += DP_NN_GEMM_KC) {
            const int kc = K - k0 < DP_NN_GEMM_KC ? K - k0 : DP_NN_GEMM_KC;
            const float *P;
            int ldp;
            if (trans_b) {   /* op(B)[k][n] = B[n][k]: pack the chunk k-major */
                for (int j = 0; j < nc; j++) {
                    const float *b = B + (size_t)(n0 + j) * ldb + k0;
                    for (int k = 0; k < kc; k++) panel[(size_t)k * nc + j] = b[k];
                }
                P = panel;
                ldp = nc;
            } else {
                P = B + (size_t)k0 * ldb + n0;
                ldp = ldb;
            }
            gemm_chunk(trans_a, 0, M, nc, kc, k0, alpha, A, lda, P, ldp, beta, k0 == 0, C + n0, ldc);
        }
    }
}

/* ---- layers ---- */

void dp_nn_linear_forward(float *out, const float *inp, const float *w, const float *b, int N, int C, int OC)
{
    assert(N >= 0 && C > 0 && OC > 0);   /* layer dimensions (debug builds) */
    /* inp is (N,C), w is (OC,C), out is (N,OC) */
    if (b) {
        for (int i = 0; i < N; i++) memcpy(out + (size_t)i * OC, b, (size_t)OC * sizeof(float));
    }
    dp_nn_gemm(0, 1, N, OC, C, 1.0f, inp, C, w, C, b ? 1.0f : 0.0f, out, OC);
}

void dp_nn_linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                           const float *w, int N, int C, int OC)
{
    assert(N >= 0 && C > 0 && OC > 0);   /* layer dimensions (debug builds) */
    /* dout is (N,OC) */
    if (dinp) dp_nn_gemm(0, 0, N, C, OC, 1.0f, dout, OC, w, C, 1.0f, dinp, C);
    if (dw) dp_nn_gemm(1, 0, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dw, C);
    if (db) {
        for (int i = 0; i < N; i++) {
            const float *d = dout + (size_t)i * OC;
            for (int o = 0; o < OC; o++) db[o] += d[o];
        }
    }
}

/* Both written as a product with a selected constant: the same values as the plain ternary, in a
 * form GCC vectorises (a select between two computed values is not if-converted). out may be inp,
 * so no restrict on the forward. */
void dp_nn_leaky_relu_forward(float *out, const float *inp, size_t n, float slope)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], k = x > 0 ? 1.0f : slope;
        out[i] = x * k;
    }
}

void dp_nn_leaky_relu_backward(float *restrict dinp, const float *restrict dout, const float *restrict inp, size_t n,
                               float slope)
{
    for (size_t i = 0; i < n; i++) {
        float k = inp[i] > 0 ? 1.0f : slope;
        dinp[i] += dout[i] * k;
    }
}

void dp_nn_zscore_forward(float *out, float *mean, float *rstd, const float *inp, int N, int C, float eps)
{
    assert(N >= 0 && C > 0);   /* layer dimensions (debug builds) */
    /* inp, out are (N,C); mean, rstd are (C) */
    for (int j = 0; j < C; j++) {
        double s = 0;
        for (int i = 0; i < N; i++) s += inp[(size_t)i * C + j];
        double mu = N > 0 ? s / N : 0;
        double q = 0;
        for (int i = 0; i < N; i++) {
            double u = inp[(size_t)i * C + j] - mu;
            q += u * u;
        }
        double sd = N > 0 ? sqrt(q / N) : 0;
        mean[j] = (float)mu;
        rstd[j] = (float)(1.0 / (sd + eps));
    }
    for (int i = 0; i < N; i++) {
        const float *x = inp + (size_t)i * C;
        float *y = out + (size_t)i * C;
        for (int j = 0; j < C; j++) y[j] = (x[j] - mean[j]) * rstd[j];
    }
}

void dp_nn_zscore_backward(float *dinp, const float *dout, const float *inp, const float *mean,
                           const float *rstd, int N, int C, float eps)
{
    assert(N >= 0 && C > 0);   /* layer dimensions (debug builds) */
    /* y = u k with u = x - mu, k = 1/(s + eps), s = sqrt(mean(u^2)):
     * dx_i = k (dy_i - mean(dy)) - k^2 (sum_j dy_j u_j) u_i / (N s)   (s > 0; u = 0 when s = 0) */
    if (N <= 0) return;
    for (int j = 0; j < C; j++) {
        double sdy = 0, sdyu = 0;
        for (int i = 0; i < N; i++) {
            double dy = dout[(size_t)i * C + j], u = inp[(size_t)i * C + j] - mean[j];
            sdy += dy;
            sdyu += dy * u;
        }
        double k = rstd[j], s = 1.0 / k - eps;
        double mdy = sdy / N;
        double c2 = s > 0 ? k * k * sdyu / (N * s) : 0;
        for (int i = 0; i < N; i++) {
            double u = inp[(size_t)i * C + j] - mean[j];
            dinp[(size_t)i * C + j] += (float)(k * (dout[(size_t)i * C + j] - mdy) - c2 * u);
        }
    }
}

void dp_nn_sum_pool_forward(float *out, const float *inp, const int *ptr, const int *idx, int M, int C)
{
    assert(M >= 0 && C > 0);   /* layer dimensions (debug builds) */
    for (int m = 0; m < M; m++) {
        float *o = out + (size_t)m * C;
        memset(o, 0, (size_t)C * sizeof(float));
        for (int k = ptr[m]; k < ptr[m + 1]; k++) {
            const float *x = inp + (size_t)idx[k] * C;
            for (int j = 0; j < C; j++) o[j] += x[j];
        }
    }
}

void dp_nn_chain_sum_forward(float *out, const float *inp, const int *next, const int *order, int N, int C)
{
    assert(N >= 0 && C > 0);   /* layer dimensions (debug builds) */
    for (int k = 0; k < N; k++) {
        const int v = order[k], w = next[v];
        float *o = out + (size_t)v * C;
        const float *x = inp + (size_t)v * C;
        if (w < 0) {
            memcpy(o, x, (size_t)C * sizeof(float));
        } else {
            const float *y = out + (size_t)w * C;
            for (int j = 0; j < C; j++) o[j] = x[j] + y[j];
        }
    }
}

void dp_nn_chain_sum_backward(float *dinp, float *dacc, const int *next, const int *order, int N, int C)
{
    assert(N >= 0 && C > 0);   /* layer dimensions (debug builds) */
    /* the reverse order visits every node after all the nodes whose chains pass through it */
    for (int k = N - 1; k >= 0; k--) {
        const int v = order[k], w = next[v];
        const float *a = dacc + (size_t)v * C;
        float *d = dinp + (size_t)v * C;
        for (int j = 0; j < C; j++) d[j] += a[j];
        if (w >= 0) {
            float *b = dacc + (size_t)w * C;
            for (int j = 0; j < C; j++) b[j] += a[j];
        }
    }
}

void dp_nn_sum_pool_backward(float *dinp, const float *dout, const int *ptr, const int *idx, int M, int C)
{
    assert(M >= 0 && C > 0);   /* layer dimensions (debug builds) */
    for (int m = 0; m < M; m++) {
        const float *d = dout + (size_t)m * C;
        for (int k = ptr[m]; k < ptr[m + 1]; k++) {
            float *dx = dinp + (size_t)idx[k] * C;
            for (int j = 0; j < C; j++) dx[j] += d[j];
        }
    }
}

double dp_nn_softmax_forward(float *prob, float *logp, const float *logits, int n)
{
    assert(n > 0);   /* layer dimensions (debug builds) */
    float mx = -INFINITY;
    for (int i = 0; i < n; i++)
        if (logits[i] > mx) mx = logits[i];
    double s = 0;
    for (int i = 0; i < n; i++) s += exp((double)logits[i] - mx);
    double ls = log(s), H = 0, total = 0;
    for (int i = 0; i < n; i++) {
        double lp = (double)logits[i] - mx - ls;
        double p = exp(lp);
        logp[i] = (float)lp;
        prob[i] = (float)p;
        H -= p * lp;
        total += p;
    }
    /* the probabilities sum to 1 (debug builds); non-finite logits give a NaN sum, which the
     * callers report as a diverged model rather than abort here */
    assert(!isfinite(total) || fabs(total - 1) <= 1e-9 * n);
    (void)total;
    return H;
}

void dp_nn_log_softmax_backward(float *dlogits, const float *dlogp, const float *prob, int n)
{
    assert(n > 0);   /* layer dimensions (debug builds) */
    double s = 0;
    for (int i = 0; i < n; i++) s += dlogp[i];
    for (int j = 0; j < n; j++) dlogits[j] += (float)(dlogp[j] - prob[j] * s);
}

void dp_nn_entropy_backward(float *dlogits, float dH, const float *prob, const float *logp, double H, int n)
{
    assert(n > 0);   /* layer dimensions (debug builds) */
    /* dH/dz_j = -p_j (log p_j + H) */
    for (int j = 0; j < n; j++) dlogits[j] += (float)(dH * (-(double)prob[j] * ((double)logp[j] + H)));
}

/* ---- GRU cell ---- */

size_t dp_nn_gru_scratch(int N, int C)
{
    return (size_t)N * 6 * (size_t)C;
}

/* exp(x) for the GRU gates, branch-free so that the gate loops vectorise: x = n ln 2 + r with
 * |r| <= ln 2 / 2, e^r by its degree-6 Taylor polynomial (relative error below 3e-8, under float's
 * half ulp), 2^n through the exponent bits. Arguments are clamped to [-87, 88], where expf is
 * finite and normal; the gates saturate long before. */
static inline float exp_gate(float x)
{
    x = x > 88.0f ? 88.0f : x;
    x = x < -87.0f ? -87.0f : x;
    /* round(x / ln 2) by the 1.5 * 2^23 trick (exact for |x / ln 2| < 2^22) */
    const float t = x * 1.44269504088896341f + 12582912.0f;
    const float n = t - 12582912.0f;
    const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723212e-6f;
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) * (1 << 23);
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static inline float sigmoidf(float x)
{
    return 1.0f / (1.0f + exp_gate(-x));
}

/* tanh(x) = 1 - 2 / (e^{2x} + 1): absolute error a few 1e-8, the scale of float rounding near 1 */
static inline float tanh_gate(float x)
{
    return 1.0f - 2.0f / (exp_gate(2.0f * x) + 1.0f);
}

/* one row of the gates (a function of its own so that the restrict parameters let GCC vectorise
 * it; inlined into each clone of dp_nn_gru_forward, so the AVX2 one runs it 8 floats a vector) */
static inline __attribute__((always_inline)) void gru_row(float *restrict c, float *restrict ho, const float *restrict a,
                                                         const float *restrict b, const float *restrict hp, int C)
{
    for (int j = 0; j < C; j++) {
        float r = sigmoidf(a[j] + b[j]);
        float z = sigmoidf(a[C + j] + b[C + j]);
        float nn = tanh_gate(a[2 * C + j] + r * b[2 * C + j]);
        c[j] = r;
        c[C + j] = z;
        c[2 * C + j] = nn;
        c[3 * C + j] = b[2 * C + j];
        ho[j] = (1 - z) * nn + z * hp[j];
    }
}

/* An AVX2 clone of the GRU's forward and backward (DP_NN_AVX2_CLONE, as the matrix product's
 * kernel): their gate loops (gru_row, gru_row_backward, inlined) then run 8 floats a vector; the
 * same operations in the same order, each rounded alone (no fused multiply-add), so the same bits. */
DP_NN_AVX2_CLONE
void dp_nn_gru_forward(float *hout, float *cache, const float *x, const float *h, const float *w_ih,
                       const float *w_hh, const float *b_ih, const float *b_hh, int N, int C, float *scratch)
{
    assert(N >= 0 && C > 0);   /* layer dimensions (debug builds) */
    /* x, h, hout are (N,C); w_ih, w_hh are (3C,C); cache is (N,4C): r | z | n | ghn */
    const int C3 = 3 * C;
    float *gi = scratch, *gh = scratch + (size_t)N * C3;
    dp_nn_linear_forward(gi, x, w_ih, b_ih, N, C, C3);
    dp_nn_linear_forward(gh, h, w_hh, b_hh, N, C, C3);
    for (int i = 0; i < N; i++)
        gru_row(cache + (size_t)i * 4 * C, hout + (size_t)i * C, gi + (size_t)i * C3, gh + (size_t)i * C3, h + (size_t)i * C, C);
}

static inline __attribute__((always_inline)) void gru_row_backward(float *restrict a, float *restrict b,
                                                                  const float *restrict c, const float *restrict hp,
                                                                  const float *restrict dho, int C)
{
    for (int j = 0; j < C; j++) {
        float r = c[j], z = c[C + j], nn = c[2 * C + j], ghn = c[3 * C + j];
        float d = dho[j];
        float dn = d * (1 - z), dz = d * (hp[j] - nn);
        float dnp = dn * (1 - nn * nn);
        float dr = dnp * ghn;
        float drp = dr * r * (1 - r), dzp = dz * z * (1 - z);
        a[j] = drp;
        a[C + j] = dzp;
        a[2 * C + j] = dnp;
        b[j] = drp;
        b[C + j] = dzp;
        b[2 * C + j] = dnp * r;
    }
}

DP_NN_AVX2_CLONE
void dp_nn_gru_backward(float *dx, float *dh, float *dw_ih, float *dw_hh, float *db_ih, float *db_hh,
                        const float *dhout, const float *cache, const float *x, const float *h,
                        const float *w_ih, const float *w_hh, int N, int C, float *scratch)
{
    assert(N >= 0 && C > 0);   /* layer dimensions (debug builds) */
    const int C3 = 3 * C;
    float *dgi = scratch, *dgh = scratch + (size_t)N * C3;
    for (int i = 0; i < N; i++) {
        const float *c = cache + (size_t)i * 4 * C, *dho = dhout + (size_t)i * C;
        gru_row_backward(dgi + (size_t)i * C3, dgh + (size_t)i * C3, c, h + (size_t)i * C, dho, C);
        if (dh) {
            float *o = dh + (size_t)i * C;
            for (int j = 0; j < C; j++) o[j] += dho[j] * c[C + j];
        }
    }
    dp_nn_linear_backward(dx, dw_ih, db_ih, dgi, x, w_ih, N, C, C3);
    dp_nn_linear_backward(dh, dw_hh, db_hh, dgh, h, w_hh, N, C, C3);
}

/* ---- edge-conditioned convolution ---- */

typedef struct { float f; int dst, src; } ec_edge;

static int ec_edge_cmp(const void *a, const void *b)
{
    const ec_edge *x = a, *y = b;
    if (x->f != y->f) return x->f < y->f ? -1 : 1;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    return (x->src > y->src) - (x->src < y->src);
}

dp_nn_ecgraph *dp_nn_ecgraph_build(int n_nodes, int n_edges, const int *src, const int *dst,
                                   const float *feat, dp_error *err)
{
    dp_nn_ecgraph *g = dp_alloc_calloc(1, sizeof *g);
    ec_edge *e = dp_alloc_malloc_n(n_edges > 0 ? (size_t)n_edges : 1, sizeof *e);
    if (!g || !e) goto nomem;
    for (int i = 0; i < n_edges; i++) {
        if (src[i] < 0 || src[i] >= n_nodes || dst[i] < 0 || dst[i] >= n_nodes || !isfinite(feat[i])) {
            free(e);
            dp_nn_ecgraph_free(g);
            dp_error_set(err, DP_EINVAL, "message-passing graph: edge %d (%d -> %d) out of range or with a non-finite feature",
                         i, src[i], dst[i]);
            return NULL;
        }
        e[i].f = feat[i];
        e[i].dst = dst[i];
        e[i].src = src[i];
    }
    qsort(e, (size_t)n_edges, sizeof *e, ec_edge_cmp);
    g->n_nodes = n_nodes;
    g->n_edges = n_edges;
    int nc = 0, nr = 0;
    for (int i = 0; i < n_edges; i++) {
        if (i == 0 || e[i].f != e[i - 1].f) nc++;
        if (i == 0 || e[i].f != e[i - 1].f || e[i].dst != e[i - 1].dst) nr++;
    }
    g->n_classes = nc;
    g->n_rows = nr;
    g->class_feat = dp_alloc_malloc_n(nc + 1, sizeof(float));
    g->class_ptr = dp_alloc_malloc_n(nc + 1, sizeof(int));
    g->row_dst = dp_alloc_malloc_n(nr + 1, sizeof(int));
    g->row_ptr = dp_alloc_malloc_n(nr + 1, sizeof(int));
    g->src = dp_alloc_malloc_n(n_edges + 1, sizeof(int));
    if (!g->class_feat || !g->class_ptr || !g->row_dst || !g->row_ptr || !g->src) goto nomem;
    int c = -1, r = -1;
    for (int i = 0; i < n_edges; i++) {
        if (i == 0 || e[i].f != e[i - 1].f) {
            c++;
            g->class_feat[c] = e[i].f;
            g->class_ptr[c] = r + 1;
        }
        if (i == 0 || e[i].f != e[i - 1].f || e[i].dst != e[i - 1].dst) {
            r++;
            g->row_dst[r] = e[i].dst;
            g->row_ptr[r] = i;
        }
        g->src[i] = e[i].src;
    }
    g->class_ptr[nc] = nr;
    g->row_ptr[nr] = n_edges;
    g->max_class_rows = 0;
    for (int k = 0; k < nc; k++) {
        int rows = g->class_ptr[k + 1] - g->class_ptr[k];
        if (rows > g->max_class_rows) g->max_class_rows = rows;
    }
    free(e);
    return g;
nomem:
    free(e);
    dp_nn_ecgraph_free(g);
    dp_error_set(err, DP_ENOMEM, "out of memory for the message-passing graph");
    return NULL;
}

void dp_nn_ecgraph_free(dp_nn_ecgraph *g)
{
    if (!g) return;
    free(g->class_feat);
    free(g->class_ptr);
    free(g->row_dst);
    free(g->row_ptr);
    free(g->src);
    free(g);
}

size_t dp_nn_ecconv_scratch(const dp_nn_ecgraph *g, int Cin, int Cout)
{
    return (size_t)(g->max_class_rows > 0 ? g->max_class_rows : 1) * (size_t)(Cin + Cout);
}

void dp_nn_ecconv_forward(float *out, float *gcache, const float *h, const float *wc, const float *bias,
                          const dp_nn_ecgraph *g, int Cin, int Cout, float *scratch)
{
    assert(Cin > 0 && Cout > 0 && g->n_nodes >= 0);   /* layer dimensions (debug builds) */
    /* h (n,Cin); wc (classes,Cin,Cout); out (n,Cout); gcache (rows,Cin) */
    for (int v = 0; v < g->n_nodes; v++) {
        float *o = out + (size_t)v * Cout;
        if (bias) memcpy(o, bias, (size_t)Cout * sizeof(float));
        else memset(o, 0, (size_t)Cout * sizeof(float));
    }
    for (int r = 0; r < g->n_rows; r++) {
        float *gr = gcache + (size_t)r * Cin;
        memset(gr, 0, (size_t)Cin * sizeof(float));
        for (int k = g->row_ptr[r]; k < g->row_ptr[r + 1]; k++) {
            const float *x = h + (size_t)g->src[k] * Cin;
            for (int j = 0; j < Cin; j++) gr[j] += x[j];
        }
    }
    for (int c = 0; c < g->n_classes; c++) {
        int r0 = g->class_ptr[c], nr = g->class_ptr[c + 1] - r0;
        if (nr == 0) continue;
        dp_nn_gemm(0, 0, nr, Cout, Cin, 1.0f, gcache + (size_t)r0 * Cin, Cin,
                    wc + (size_t)c * Cin * Cout, Cout, 0.0f, scratch, Cout);
        for (int r = 0; r < nr; r++) {
            float *o = out + (size_t)g->row_dst[r0 + r] * Cout;
            const float *s = scratch + (size_t)r * Cout;
            for (int j = 0; j < Cout; j++) o[j] += s[j];
        }
    }
}

void dp_nn_ecconv_backward(float *dh, float *dwc, float *dbias, const float *dout, const float *gcache,
                           const float *wc, const dp_nn_ecgraph *g, int Cin, int Cout, float *scratch)
{
    assert(Cin > 0 && Cout > 0 && g->n_nodes >= 0);   /* layer dimensions (debug builds) */
    if (dbias) {
        for (int v = 0; v < g->n_nodes; v++) {
            const float *d = dout + (size_t)v * Cout;
            for (int j = 0; j < Cout; j++) dbias[j] += d[j];
        }
    }
    for (int c = 0; c < g->n_classes; c++) {
        int r0 = g->class_ptr[c], nr = g->class_ptr[c + 1] - r0;
        if (nr == 0) continue;
        /* gather dout rows of this class's destinations */
        for (int r = 0; r < nr; r++)
            memcpy(scratch + (size_t)r * Cout, dout + (size_t)g->row_dst[r0 + r] * Cout, (size_t)Cout * sizeof(float));
        if (dwc)
            dp_nn_gemm(1, 0, Cin, Cout, nr, 1.0f, gcache + (size_t)r0 * Cin, Cin,
                        scratch, Cout, 1.0f, dwc + (size_t)c * Cin * Cout, Cout);
        if (!dh) continue;
        /* dG (nr, Cin) = dout_rows wc^T, then scatter-add to the sources of each row */
        float *dg = scratch + (size_t)g->max_class_rows * Cout;
        dp_nn_gemm(0, 1, nr, Cin, Cout, 1.0f, scratch, Cout,
                    wc + (size_t)c * Cin * Cout, Cout, 0.0f, dg, Cin);
        for (int r = 0; r < nr; r++) {
            const float *d = dg + (size_t)r * Cin;
            for (int k = g->row_ptr[r0 + r]; k < g->row_ptr[r0 + r + 1]; k++) {
                float *dx = dh + (size_t)g->src[k] * Cin;
                for (int j = 0; j < Cin; j++) dx[j] += d[j];
            }
        }
    }
}

/* ---- scaled dot-product attention ---- */

void dp_nn_attention_forward(float *out, float *P, const float *q, const float *k, const float *v, int N, int H,
                             int dk, int dv, int causal)
{
    assert(N >= 0 && H > 0 && dk > 0 && dv > 0);   /* layer dimensions (debug builds) */
    const float scale = 1.0f / sqrtf((float)dk);
    const int lq = H * dk, lv = H * dv;
    for (int h = 0; h < H; h++) {
        float *Ph = P + (size_t)h * N * N;
        /* S = Q_h K_h^T scaled; the rows are then soft-maxed in place */
        dp_nn_gemm(0, 1, N, N, dk, scale, q + (size_t)h * dk, lq,
                    k + (size_t)h * dk, lq, 0.0f, Ph, N);
        for (int i = 0; i < N; i++) {
            float *row = Ph + (size_t)i * N;
            const int m = causal ? i + 1 : N;
            float mx = row[0];
            for (int j = 1; j < m; j++) mx = row[j] > mx ? row[j] : mx;
            double s = 0;
            for (int j = 0; j < m; j++) {
                row[j] = expf(row[j] - mx);
                s += row[j];
            }
            const float r = (float)(1.0 / s);
            for (int j = 0; j < m; j++) row[j] *= r;
            for (int j = m; j < N; j++) row[j] = 0;
        }
        dp_nn_gemm(0, 0, N, dv, N, 1.0f, Ph, N, v + (size_t)h * dv, lv, 0.0f,
                    out + (size_t)h * dv, lv);
    }
}

size_t dp_nn_attention_scratch(int N)
{
    return (size_t)N * (size_t)N;
}

void dp_nn_attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *P, const float *q,
                              const float *k, const float *v, int N, int H, int dk_, int dv_, float *scratch)
{
    assert(N >= 0 && H > 0 && dk_ > 0 && dv_ > 0);   /* layer dimensions (debug builds) */
    const float scale = 1.0f / sqrtf((float)dk_);
    const int lq = H * dk_, lv = H * dv_;
    for (int h = 0; h < H; h++) {
        const float *Ph = P + (size_t)h * N * N, *dO = dout + (size_t)h * dv_;
        if (dv)
            dp_nn_gemm(1, 0, N, dv_, N, 1.0f, Ph, N, dO, lv, 1.0f,
                        dv + (size_t)h * dv_, lv);
        if (!dq && !dk) continue;
        float *dS = scratch;
        dp_nn_gemm(0, 1, N, N, dv_, 1.0f, dO, lv, v + (size_t)h * dv_, lv, 0.0f,
                    dS, N);
        /* softmax backward per row; masked entries have P = 0 and so get no gradient */
        for (int i = 0; i < N; i++) {
            float *d = dS + (size_t)i * N;
            const float *p = Ph + (size_t)i * N;
            double s = 0;
            for (int j = 0; j < N; j++) s += (double)d[j] * p[j];
            for (int j = 0; j < N; j++) d[j] = p[j] * (d[j] - (float)s);
        }
        if (dq)
            dp_nn_gemm(0, 0, N, dk_, N, scale, dS, N, k + (size_t)h * dk_, lq,
                        1.0f, dq + (size_t)h * dk_, lq);
        if (dk)
            dp_nn_gemm(1, 0, N, dk_, N, scale, dS, N, q + (size_t)h * dk_, lq,
                        1.0f, dk + (size_t)h * dk_, lq);
    }
}
