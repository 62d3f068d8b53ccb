/* dp_nn.h: a small neural-network layer library in plain C (the style of karpathy/llm.c).
 *
 * Used by the DOPPLER SEL and PLC networks (policy/dp_doppler.h) and by the learned baselines
 * (Placeto, GDP). The API below is meant to stay stable; extend it, do not change it.
 *
 * Conventions
 * - Numbers are float (single precision, as llm.c): the networks are small and float GEMMs are
 *   twice as fast as double ones. Losses and sums of many terms are accumulated in double.
 * - Matrices are row-major. "inp is (N, C)" means N rows of C floats. A linear layer's weight is
 *   (OC, C) (PyTorch's nn.Linear layout) and computes out = inp w^T + b.
 * - Every layer is a pair xxx_forward / xxx_backward. A backward ADDS (+=) into every gradient
 *   buffer it is given (dinp, dweight, dbias), so a tensor used twice gets both contributions;
 *   zero the gradients once before an episode or batch (dp_nn_params_zero_grad). Gradient
 *   pointers may be NULL when that gradient is not wanted.
 * - Forward functions cache nothing themselves: what a backward needs (inputs, pre-activations,
 *   statistics) is passed back to it by the caller, who keeps it in named buffers.
 * - Dense products go through the project's own kernel (dp_nn_gemm), never through BLAS: its
 *   arithmetic is fixed by its definition, so an element of a product has the same bits whatever
 *   the batch (rows) it is computed in, the path that computes it (training's episode, its
 *   greedy evaluation, doppler place, Python, a sweep), the CPU and the build. A policy's choices
 *   therefore never depend on which code or which BLAS kernel ran it (issue 28: OpenBLAS's
 *   sgemv and sgemm, and its Haswell and auto-detected kernels, round differently, and greedy
 *   choices flipped on the last bit). No function allocates memory except the
 *   *_alloc/_build ones; workspaces ("scratch") are passed in, sized by the *_scratch functions.
 * - All parameters of a network live in ONE contiguous buffer (dp_nn_params.param), gradients and
 *   Adam moments in mirror buffers of the same layout: zeroing, Adam and checkpointing are single
 *   loops over one array.
 * - Randomness only through a caller-provided, seeded GSL generator.
 */
#ifndef DP_NN_H
#define DP_NN_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "dp_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Parameter blocks: named tensors in one buffer.
 * Usage: dp_nn_params_init(&p); i = dp_nn_params_add(&p, "w1", OC, C); ...; dp_nn_params_alloc(&p);
 * then dp_nn_param(&p, i) / dp_nn_grad(&p, i) give the tensors. Tensors are 2-D (rows, cols);
 * a bias is (1, OC). */

#define DP_NN_NAME_MAX 48

typedef struct dp_nn_tensor {
    char name[DP_NN_NAME_MAX];
    size_t offset;  /* in floats, into param/grad/m/v */
    int rows, cols;
} dp_nn_tensor;

typedef struct dp_nn_params {
    int n_tensors, cap;
    dp_nn_tensor *t;
    size_t n;       /* total number of floats */
    float *param;   /* (n) the parameters */
    float *grad;    /* (n) gradients, same layout */
    float *m, *v;   /* (n) Adam first and second moments */
    long adam_t;    /* Adam steps taken (for bias correction) */
    int failed;     /* DP_ENOMEM once a dp_nn_params_add ran out of memory (0: not); sticks */
} dp_nn_params;

/* Make *p (non-NULL, unchecked) an empty block: no tensors, nothing allocated, adam_t 0 (every
 * field zeroed; whatever p held before is not freed). */
void dp_nn_params_init(dp_nn_params *p);
/* Declare a tensor (before dp_nn_params_alloc). Returns its index, or DP_ENOMEM / DP_EINVAL
 * (name too long, non-positive size). Out of memory sticks: every later add and
 * dp_nn_params_alloc return DP_ENOMEM too, so a caller may check only the last of a run of adds
 * (a middle one's was missed that way, and its negative index used: tests/test_faults.sh). */
int dp_nn_params_add(dp_nn_params *p, const char *name, int rows, int cols);
/* Allocate param/grad/m/v (all zeroed). DP_OK or DP_ENOMEM. */
int dp_nn_params_alloc(dp_nn_params *p);
/* Free the tensor table and the four buffers and zero *p (as dp_nn_params_init): a second free is
 * harmless. p NULL: nothing to do; the struct itself is the caller's. */
void dp_nn_params_free(dp_nn_params *p);
/* Tensor i's parameters and gradient (rows x cols floats, row-major), pointers into the block's
 * buffers, valid until dp_nn_params_free; i must be an index dp_nn_params_add returned (unchecked),
 * after dp_nn_params_alloc. */
static inline float *dp_nn_param(const dp_nn_params *p, int i) { return p->param + p->t[i].offset; }
static inline float *dp_nn_grad(const dp_nn_params *p, int i) { return p->grad + p->t[i].offset; }
/* Set every gradient to 0 (p->n floats; after dp_nn_params_alloc). */
void dp_nn_params_zero_grad(dp_nn_params *p);
/* Index of the tensor called name, or -1. */
int dp_nn_params_find(const dp_nn_params *p, const char *name);
/* The 64-bit FNV-1a hash of the parameters' bytes (p->n floats, padding included), folded into
 * h (start with DP_NN_FNV_OFFSET): one number that says whether two runs ended with the same
 * parameters to the last bit (doppler train --json, tests of reproducible training). */
#define DP_NN_FNV_OFFSET 0xcbf29ce484222325ULL
unsigned long long dp_nn_params_checksum(const dp_nn_params *p, unsigned long long h);

/* Orthogonal initialisation (Saxe et al. 2014; PyTorch's nn.init.orthogonal_): w (rows, cols)
 * becomes gain * Q, Q from the QR decomposition of a Gaussian matrix drawn from r (GSL
 * gsl_linalg_QR_decomp), signs fixed by diag(R) so the distribution is uniform (Haar). Rows (or
 * columns, whichever are fewer) are orthonormal. DP_OK or DP_ENOMEM. */
int dp_nn_init_orthogonal(float *w, int rows, int cols, double gain, gsl_rng *r);

/* Adam (Kingma and Ba 2015) with bias correction, one step over the whole block:
 *   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
 * (t = ++p->adam_t). weight_decay > 0 adds weight_decay * p to g first (L2, as torch.optim.Adam).
 * Gradients are left as they are. */
void dp_nn_adam_step(dp_nn_params *p, float lr, float beta1, float beta2, float eps, float weight_decay);

/* Scale all gradients so that their global L2 norm is at most max_norm (no-op when max_norm <= 0).
 * Returns the norm before clipping. */
double dp_nn_clip_grad_norm(dp_nn_params *p, double max_norm);

/* ---------------------------------------------------------------------------------------------
 * The matrix product. */

/* C (M, N) = alpha op(A) op(B) + beta C, row-major; op(A) is (M, K): A itself (trans_a 0, A is
 * (M, K) with row stride lda) or A^T (trans_a 1, A is (K, M)); op(B) (K, N) likewise with ldb;
 * C has row stride ldc. The arguments of cblas_sgemm (CblasRowMajor), with one fixed arithmetic:
 * k runs in chunks of DP_NN_GEMM_KC from 0; within a chunk the products op(A)[m][k] op(B)[k][n]
 * are each rounded to float and added one after another in k order to a sum s_c that starts at
 * 0; then C[m][n] = beta C[m][n] + alpha s_0 (alpha s_0 alone when beta is 0, so C may hold
 * anything then), and C[m][n] += alpha s_c for each later chunk. No fused multiply-add (the
 * library is built with -ffp-contract=off). So each element depends only on its row of op(A),
 * its column of op(B), alpha, beta and its old value: never on M, N, the strides, the other
 * elements or the CPU. K = 0 gives C = beta C. Nothing is allocated (a panel of
 * DP_NN_GEMM_KC x DP_NN_GEMM_NC floats lives on the stack). */
#define DP_NN_GEMM_KC 128
#define DP_NN_GEMM_NC 64
void dp_nn_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc);

/* ---------------------------------------------------------------------------------------------
 * Layers. */

/* Linear: out (N, OC) = inp (N, C) w^T + b; w is (OC, C), b is (OC) or NULL. */
void dp_nn_linear_forward(float *out, const float *inp, const float *w, const float *b, int N, int C, int OC);
/* dinp (N, C) += dout w; dw (OC, C) += dout^T inp; db (OC) += column sums of dout. Any of dinp,
 * dw, db may be NULL. */
void dp_nn_linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                           const float *w, int N, int C, int OC);

/* Leaky ReLU: out = inp if inp > 0 else slope * inp (slope 0: ReLU). n elements; out may be inp. */
void dp_nn_leaky_relu_forward(float *out, const float *inp, size_t n, float slope);
/* dinp += dout * (inp > 0 ? 1 : slope); inp is the forward's input (pre-activation). */
void dp_nn_leaky_relu_backward(float *dinp, const float *dout, const float *inp, size_t n, float slope);

/* Column-wise z-score (the authors' normalize_feat_state): for each column j of inp (N, C),
 *   out[i][j] = (inp[i][j] - mean_j) / (std_j + eps),  std_j the population standard deviation.
 * mean and rstd (C each; rstd = 1 / (std + eps)) are written for the backward. A constant column
 * gives zeros. */
void dp_nn_zscore_forward(float *out, float *mean, float *rstd, const float *inp, int N, int C, float eps);
/* dinp (N, C) += the gradient through the z-score (mean and std both depend on every row). */
void dp_nn_zscore_backward(float *dinp, const float *dout, const float *inp, const float *mean,
                           const float *rstd, int N, int C, float eps);

/* Sum pooling over index lists (CSR): out[m] (C) = sum over k in ptr[m] .. ptr[m+1]-1 of
 * inp[idx[k]]. out is (M, C), inp is (N, C) with idx entries in 0..N-1 (repeats allowed). */
void dp_nn_sum_pool_forward(float *out, const float *inp, const int *ptr, const int *idx, int M, int C);
/* dinp[idx[k]] += dout[m] for every k of list m. */
void dp_nn_sum_pool_backward(float *dinp, const float *dout, const int *ptr, const int *idx, int M, int C);

/* Sums along chains: the chain of v is v, next[v], next[next[v]], ... until -1 (a forest of
 * paths, e.g. each op's b-level path), and out[v] (C) = the sum of inp over v's chain. This is
 * sum pooling over the chains' index lists, computed in O(N C) instead of O(total length x C) by
 * out[v] = inp[v] + out[next[v]]. order (N) lists the nodes so that next[v] comes before v. */
void dp_nn_chain_sum_forward(float *out, const float *inp, const int *next, const int *order, int N, int C);
/* dinp (N, C) += the gradient; dacc (N, C) holds dL/dout on entry and is used as the accumulator
 * (overwritten). */
void dp_nn_chain_sum_backward(float *dinp, float *dacc, const int *next, const int *order, int N, int C);

/* Softmax over a candidate set of n logits: prob and logp (n each; logp = log prob, computed
 * stably). Returns the entropy -sum p log p (nats, double). */
double dp_nn_softmax_forward(float *prob, float *logp, const float *logits, int n);
/* Backward of logp = log_softmax(logits): dlogits[j] += dlogp[j] - prob[j] * sum_i dlogp[i]. */
void dp_nn_log_softmax_backward(float *dlogits, const float *dlogp, const float *prob, int n);
/* Backward of H = -sum p log p with respect to the logits, scaled by dH:
 * dlogits[j] += dH * (-prob[j] * (logp[j] + H)). H is the value softmax_forward returned. */
void dp_nn_entropy_backward(float *dlogits, float dH, const float *prob, const float *logp, double H, int n);

/* GRU cell (Cho et al. 2014, PyTorch's nn.GRUCell gate order r, z, n), N rows of width C:
 *   r = sig(x Wir^T + bir + h Whr^T + bhr),  z = sig(x Wiz^T + biz + h Whz^T + bhz),
 *   n = tanh(x Win^T + bin + r * (h Whn^T + bhn)),  hout = (1 - z) * n + z * h.
 * w_ih and w_hh are (3C, C) (rows r, z, n), b_ih and b_hh (3C). x, h, hout are (N, C); hout must
 * not alias x or h. cache (N, 4C) keeps r, z, n and h Whn^T + bhn for the backward; scratch holds
 * dp_nn_gru_scratch(N, C) floats. */
size_t dp_nn_gru_scratch(int N, int C);
void dp_nn_gru_forward(float *hout, float *cache, const float *x, const float *h, const float *w_ih,
                       const float *w_hh, const float *b_ih, const float *b_hh, int N, int C, float *scratch);
/* dx, dh (N, C) += ; dw_ih, dw_hh (3C, C) += ; db_ih, db_hh (3C) += . Any may be NULL except that
 * the scratch (dp_nn_gru_scratch floats) is required. */
void dp_nn_gru_backward(float *dx, float *dh, float *dw_ih, float *dw_hh, float *db_ih, float *db_hh,
                        const float *dhout, const float *cache, const float *x, const float *h,
                        const float *w_ih, const float *w_hh, int N, int C, float *scratch);

/* ---------------------------------------------------------------------------------------------
 * Message passing with an edge feature: the edge-conditioned convolution (Gilmer et al. 2017;
 * Simonovsky and Komodakis 2017; DGL's NNConv with sum aggregation, as DOPPLER's MPNN uses it):
 *
 *   out[v] = bias + sum over edges e = (u -> v) of h[u] W(x_e),   W(x_e) a (Cin, Cout) matrix
 *
 * produced from the edge's scalar feature x_e by an edge network. Edges with the SAME feature
 * value share W, so the graph is stored grouped by (feature class, destination): for each class
 * c and each destination v that has in-edges of class c, G[c, v] = sum of h[u] over those edges
 * (a sparse gather), and out[v] += G[c, v] W_c (one GEMM per class). This costs
 * sum_c rows_c * Cin * Cout instead of |E| * Cin * Cout and is exact: it is the same sum.
 * Dataflow graphs built from partitioned einsums have few distinct transfer sizes (DOPPLER's
 * graphs: 2 to 11), so the edge network runs once per class, not per edge. */

typedef struct dp_nn_ecgraph {
    int n_nodes, n_edges;
    int n_classes;
    float *class_feat;  /* (n_classes) the feature value of each class */
    int *class_ptr;     /* (n_classes + 1) rows of class c: class_ptr[c] .. class_ptr[c+1]-1 */
    int n_rows;
    int *row_dst;       /* (n_rows) destination node of each row */
    int *row_ptr;       /* (n_rows + 1) sources of row k: src[row_ptr[k] .. row_ptr[k+1]-1] */
    int *src;           /* (n_edges) */
    int max_class_rows; /* largest rows_c */
} dp_nn_ecgraph;

/* Build from an edge list (src[e] -> dst[e] with scalar feature feat[e], e < n_edges); classes
 * are distinct feature values (exact equality), in increasing value. NULL with err on failure. */
dp_nn_ecgraph *dp_nn_ecgraph_build(int n_nodes, int n_edges, const int *src, const int *dst,
                                   const float *feat, dp_error *err);
/* Free the graph and its arrays. NULL is a no-op. */
void dp_nn_ecgraph_free(dp_nn_ecgraph *g);

/* Floats of scratch the convolution needs: max_class_rows * (Cin + Cout). */
size_t dp_nn_ecconv_scratch(const dp_nn_ecgraph *g, int Cin, int Cout);
/* out (n_nodes, Cout) = bias + messages (above); h (n_nodes, Cin); wc (n_classes, Cin, Cout), the
 * class matrices; bias (Cout) or NULL. gcache (n_rows, Cin) receives the gathered sums G for the
 * backward. */
void dp_nn_ecconv_forward(float *out, float *gcache, const float *h, const float *wc, const float *bias,
                          const dp_nn_ecgraph *g, int Cin, int Cout, float *scratch);
/* dh (n_nodes, Cin) +=, dwc (n_classes, Cin, Cout) +=, dbias (Cout) +=. */
void dp_nn_ecconv_backward(float *dh, float *dwc, float *dbias, const float *dout, const float *gcache,
                           const float *wc, const dp_nn_ecgraph *g, int Cin, int Cout, float *scratch);


/* ---------------------------------------------------------------------------------------------
 * Scaled dot-product self-attention (Vaswani et al. 2017, eq. 1) with H heads, as GDP's
 * Transformer policy uses it over the topologically ordered ops (Zhou et al. 2019):
 *
 *   for each head h:  P_h = softmax_rows(Q_h K_h^T / sqrt(dk))   (N, N)
 *                     out_h = P_h V_h                            (N, dv)
 *
 * q and k are (N, H*dk), v and out (N, H*dv), row-major; head h owns columns h*dk .. h*dk+dk-1
 * of q and k and h*dv .. h*dv+dv-1 of v and out (the concatenation of the heads). With causal = 1
 * row i attends only to columns j <= i (P[i][j] = 0 for j > i). P (H, N, N) receives the
 * attention weights for the backward. The projections producing q, k, v and mixing the heads
 * are ordinary linear layers around this one. */
void dp_nn_attention_forward(float *out, float *P, const float *q, const float *k, const float *v, int N, int H,
                             int dk, int dv, int causal);
/* Floats of scratch the backward needs: N * N. */
size_t dp_nn_attention_scratch(int N);
/* dq, dk (N, H*dk) +=, dv (N, H*dv) += from dout (N, H*dv); P is the forward's. Any of dq, dk,
 * dv may be NULL. Per head: dV += P^T dO; dP = dO V^T; dS = P * (dP - rowsum(dP * P));
 * dQ += dS K / sqrt(dk); dK += dS^T Q / sqrt(dk). */
void dp_nn_attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *P, const float *q,
                              const float *k, const float *v, int N, int H, int dk_, int dv_, float *scratch);

#ifdef __cplusplus
}
#endif
#endif
