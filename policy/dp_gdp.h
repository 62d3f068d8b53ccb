/* dp_gdp.h: the GDP device policy (Zhou, Roy, Wang, Chandra, Sheng, Xu, Kulkarni, Phothilimthana,
 * Goldie and Mirhoseini, "GDP: Generalized Device Placement for Dataflow Graphs", arXiv
 * 1910.01578, 2019), built from dp_nn layers. Differences from the original (TensorFlow,
 * Transformer-XL, PPO) are listed in doc/baselines.md.
 *
 * Per graph (act = leaky ReLU with the configured slope; 0: ReLU):
 *   X (n, 5)    DOPPLER's z-scored node features (dp_doppler_node_features)
 *   H0 = act(W_in X + b_in)                                      (n, d)
 *   GraphSAGE with mean aggregation over the undirected neighbours (parents and children, each
 *   once; Hamilton, Ying and Leskovec 2017), for l = 1 .. L:
 *     N_l = mean over neighbours u of H_{l-1}[u]   (no neighbour: 0)
 *     H_l = act(W_l [H_{l-1}, N_l] + b_l)                        (n, d)
 *   the ops as a sequence in the topological order g->topo, with a sinusoidal position code:
 *     Z0[t] = H_L[topo[t]] + PE[t]                               (n, d)
 *   one self-attention block over the whole sequence (heads h, dk = d / heads):
 *     Z1 = Z0 + Wo attention(Wq Z0, Wk Z0, Wv Z0) + bo            (n, d)
 *   logits[t] = W2 act(W1 Z1[t] + b1) + b2                       (n, D)
 * and every op t gets its own softmax over the D devices: the whole placement comes from one
 * forward pass, and the devices of different ops are drawn independently given the logits.
 */
#ifndef DP_GDP_H
#define DP_GDP_H

#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_nn.h"

#include <gsl/gsl_rng.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest graph accepted: the attention weights take heads x n^2 floats (1 GiB at 4 heads). */
#define DP_GDP_MAX_OPS 8192

typedef struct dp_gdp_arch {
    int hidden;     /* d: embedding width (multiple of heads) */
    int layers;     /* GraphSAGE layers L */
    int heads;      /* attention heads */
    int mlp_hidden; /* hidden width of the device head */
    float slope;    /* leaky ReLU slope (0: ReLU) */
} dp_gdp_arch;

/* 64, 2, 4, 64, 0 (the DOPPLER authors' GDP: 64 wide, 4 heads). */
void dp_gdp_arch_default(dp_gdp_arch *a);

typedef struct dp_gdp dp_gdp;

/* Build the network for g under c (both outlive it); parameters zero until dp_gdp_init. NULL with
 * err on failure (bad sizes: hidden not a multiple of heads, more than DP_GDP_MAX_OPS ops:
 * DP_EINVAL; memory). */
dp_gdp *dp_gdp_alloc(const dp_graph *g, const dp_cost *c, const dp_gdp_arch *a, dp_error *err);
/* Free the network, its parameters and buffers (not g or c). NULL is a no-op. */
void dp_gdp_free(dp_gdp *gd);
/* Orthogonal weights (gain 1), zero biases, from r. DP_OK or DP_ENOMEM. */
int dp_gdp_init(dp_gdp *gd, gsl_rng *r);
/* The network's parameter block (owned by gd). */
dp_nn_params *dp_gdp_params(dp_gdp *gd);

/* The whole forward pass: logits (n_ops, D), row t for op g->topo[t]; the pointer stays valid
 * (inside gd) until the next forward. */
const float *dp_gdp_forward(dp_gdp *gd);
/* Back-propagate dlogits (n_ops, D) of the last forward; adds into the parameter gradients. */
void dp_gdp_backward(dp_gdp *gd, const float *dlogits);

#ifdef __cplusplus
}
#endif
#endif
