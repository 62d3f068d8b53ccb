/* dp_mpnn.h: the message-passing network of the DOPPLER policies (Yao et al. 2026; the authors
 * use dgllife's MPNNGNN: Gilmer et al. 2017), built from dp_nn layers.
 *
 *   H0     = relu(X Wp^T + bp)                               X (n, F) node features, H (n, d)
 *   W_c    = reshape(W2 relu(w1 x_c + b1) + b2)  (d, d)      edge network, one per edge class
 *   for t = 1..T:
 *     M    = relu(ecconv(H, W_c) + b_conv)                   sum of h[u] W(x_e) over in-edges
 *     H    = GRU(M, H)
 *   out    = H_T                                             (n, d)
 *
 * exactly the dgllife computation (NNConv with sum aggregation, then a GRU whose hidden state is
 * the node state). The only change is how it is computed: edges with equal features share one
 * matrix (see dp_nn_ecconv), so the edge network runs once per distinct transfer size instead of
 * once per edge, and messages are summed before they are multiplied. Parameters go into the
 * caller's dp_nn_params block under names prefixed "PREFIX." so a network keeps ONE buffer.
 */
#ifndef DP_MPNN_H
#define DP_MPNN_H

#include "dp_alloc.h"
#include "dp_nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_mpnn {
    int n, F, d, K, T;             /* nodes, input features, hidden width, edge hidden, steps */
    int no_grad;                   /* set before dp_mpnn_alloc(_sharing): 1 allocates for the forward
                                      only (inference: a placement): H holds two states, the
                                      forward alternating between them, and the gradient buffers
                                      dH, dHp, dM, dA are NULL; dp_mpnn_backward must not be
                                      called. The forward's output is bit for bit the same. */
    const dp_nn_ecgraph *g;        /* not owned */
    const dp_nn_params *p;         /* the network's block (not owned) */
    int i_pw, i_pb, i_ew1, i_eb1, i_ew2, i_eb2, i_cb, i_wih, i_whh, i_bih, i_bhh; /* tensor ids */
    dp_alloc_table owned;          /* every array below */
    /* activations cached by the forward for the backward (U: edge feature classes, rows: the
     * gathered rows of the edge-conditioned convolution, dp_nn.h) */
    float *P;      /* (n, d) projection pre-activation */
    float *E1;     /* (U, K) edge network hidden pre-activation */
    float *R1;     /* (U, K) relu(E1) */
    float *Wc;     /* (U, d*d) class matrices */
    float *H;      /* (T+1, n, d) node states, every step's (the only per-step cache); (2, n, d)
                      with no_grad */
    float *A;      /* (n, d) convolution pre-activation of one step */
    float *M;      /* (n, d) messages after relu of one step */
    float *G;      /* (rows, d) gathered sums of one step */
    float *gru;    /* (n, 4d) GRU caches of one step */
    /* workspaces */
    const float *X; /* the input of the last forward (kept by the caller) */
    float *dH, *dHp;   /* (n, d) gradient of the state after and before a step */
    float *dM, *dA;    /* (n, d) gradient of a step's messages and convolution pre-activation */
    float *dWc;        /* (U, d*d) gradient of the class matrices */
    float *dR1, *dE1;  /* (U, K) gradient of the edge network's hidden layer, after and before relu */
    float *scratch;    /* (scratch_n) the GRU's and the convolution's, whichever is larger */
    size_t scratch_n;
} dp_mpnn;

/* Declare the MPNN's tensors in p (before dp_nn_params_alloc). */
int dp_mpnn_declare(dp_mpnn *m, dp_nn_params *p, const char *prefix, int F, int d, int K, int T);
/* After dp_nn_params_alloc: allocate caches for graph g (n nodes). DP_OK or DP_ENOMEM. */
int dp_mpnn_alloc(dp_mpnn *m, const dp_nn_params *p, const dp_nn_ecgraph *g);
/* Bytes dp_mpnn_alloc would allocate for graph g (after dp_mpnn_declare): O((T n + rows + U d) d)
 * for T steps, n nodes, rows (destination, edge class) pairs and U edge classes (distinct edge
 * features, each with a d x d matrix). Only the node states of every step are kept; the backward
 * recomputes one step's convolution and GRU caches from its input state (the same calls on the
 * same inputs: bit for bit the forward's), which costs one more forward and saves about
 * 6 (T - 1) n d floats (gradient checkpointing at every step). */
size_t dp_mpnn_bytes(const dp_mpnn *m, const dp_nn_ecgraph *g);
/* The same for another network of the same width on the same graph that shares with (an MPNN
 * already allocated by dp_mpnn_alloc, which must outlive m) its one-step caches, gradient
 * buffers and scratch: only its own parameters' companions and node states are allocated. The
 * two must never interleave: one's forward, or backward, runs to its end before the other's
 * starts (the DOPPLER workspace runs SEL's, then PLC's). Bit for bit the results of separate
 * buffers. DP_OK, DP_EINVAL (another graph or width), DP_ENOMEM. */
int dp_mpnn_alloc_sharing(dp_mpnn *m, const dp_nn_params *p, const dp_nn_ecgraph *g, const dp_mpnn *with);
/* The bytes dp_mpnn_alloc_sharing would allocate for graph g (as dp_mpnn_bytes). */
size_t dp_mpnn_bytes_sharing(const dp_mpnn *m, const dp_nn_ecgraph *g);
/* Free the buffers dp_mpnn_alloc or dp_mpnn_alloc_sharing allocated (not the parameter block, the
 * graph or a shared MPNN's buffers); m's buffer pointers are left dangling, but a second free is
 * harmless. m NULL: nothing to do; the struct itself is the caller's. */
void dp_mpnn_free(dp_mpnn *m);
/* Orthogonal weights (gain 1), zero biases, as the authors' layer_init; GRU and NNConv as
 * PyTorch/DGL initialise them would differ, but one rule for all keeps it simple (documented in
 * doc/doppler-vs-reference.md). */
int dp_mpnn_init(dp_mpnn *m, gsl_rng *r);
/* Forward over the node features X (n, F), which must stay valid until the backward; returns a pointer to the output (n, d) inside m. */
const float *dp_mpnn_forward(dp_mpnn *m, const float *X);
/* Backward from dout (n, d); accumulates into the parameter gradients. Not with no_grad. */
void dp_mpnn_backward(dp_mpnn *m, const float *dout);

#ifdef __cplusplus
}
#endif
#endif
