/* dp_placeto.h: the Placeto device policy (Addanki, Venkatakrishnan, Gupta, Mao and Alizadeh,
 * "Placeto: Learning Generalizable Device Placement Algorithms for Distributed Machine Learning",
 * NeurIPS 2019; the authors' TensorFlow code, aravic/generalizable-device-placement), built from
 * dp_nn layers. Differences from the original are listed in doc/baselines.md.
 *
 * An episode visits the ops in the fixed topological order g->topo. At step t (op v = topo[t]) the
 * node features of every op u are (F = 5 + D + 2 columns)
 *   X[u] = [ DOPPLER's 5 z-scored cost features (dp_doppler_node_features),
 *            one-hot of u's device if u was visited (zeros otherwise),
 *            1 if u == v (the current op), 1 if u was visited ]
 * and the graph is embedded anew (act = leaky ReLU with the configured slope; 0: ReLU):
 *   S    = W2 act(W1 X + b1) + b2                                  (n, d) node transform
 *   forward pass, u in topological order:
 *        Yf[u] = S[u] + act(Gf sum over parents p of act(Ff Yf[p] + bff) + bgf)   (no parents: S[u])
 *   backward pass, u in reverse topological order, over children, its own weights: Yb
 *   E    = [Yf, Yb]                                                (n, 2d)
 *   for each group q of v: ancestors (ops that reach v), descendants (ops v reaches), parallel
 *   (ops that are neither, v excluded), each with its own weights:
 *        A_q  = act(Gq mean over u in q of act(Fq E[u] + bfq) + bgq)  (2d; an empty group: act(bgq))
 *   logits(v) = H2 act(H1 [A_anc, A_desc, A_par, E[v]] + bh1) + bh2   (D)  the device head
 *   pi(k | state) = softmax over the D devices.
 * The embedding depends on the placement so far, so it is recomputed at every step (as the
 * original). The backward of an episode recomputes each step's forward from the final assignment
 * (the state of step t is the devices of topo[0 .. t-1]) instead of storing n copies of the
 * activations: memory O(n d), time one extra forward.
 */
#ifndef DP_PLACETO_H
#define DP_PLACETO_H

#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_nn.h"

#include <gsl/gsl_rng.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest graph accepted: an episode costs O(n^2 d^2) and the ancestor and descendant sets
 * n^2 / 4 bytes (100 MB at this size). */
#define DP_PLACETO_MAX_OPS 20000

typedef struct dp_placeto_arch {
    int hidden;     /* d: message-passing width (the embedding is 2d) */
    int mlp_hidden; /* hidden width of the device head */
    float slope;    /* leaky ReLU slope (0: ReLU, the original's) */
} dp_placeto_arch;

/* 32, 64, 0 (the DOPPLER authors' Placeto: 32-wide device head; ReLU as the original). */
void dp_placeto_arch_default(dp_placeto_arch *a);

typedef struct dp_placeto dp_placeto;

/* Build the network for g under c (both outlive it); parameters zero until dp_placeto_init.
 * NULL with err on failure (bad sizes, more than DP_PLACETO_MAX_OPS ops: DP_EINVAL; memory). */
dp_placeto *dp_placeto_alloc(const dp_graph *g, const dp_cost *c, const dp_placeto_arch *a, dp_error *err);
/* Free the network, its parameters and buffers (not g or c). NULL is a no-op. */
void dp_placeto_free(dp_placeto *pl);
/* Orthogonal weights (gain 1), zero biases, from r. DP_OK or DP_ENOMEM. */
int dp_placeto_init(dp_placeto *pl, gsl_rng *r);
/* The network's parameter block. */
dp_nn_params *dp_placeto_params(dp_placeto *pl);

/* Logits (D) of step t (op g->topo[t]) given assignment (n_ops): the devices of topo[0 .. t-1]
 * (other entries are ignored). */
void dp_placeto_logits(dp_placeto *pl, int t, const int *assignment, float *logits);
/* Back-propagate dlogits (n_ops, D), row t the gradient of step t's logits, of an episode that
 * ended with `assignment`; adds into the parameter gradients. Rows of zeros are skipped. */
void dp_placeto_backward(dp_placeto *pl, const int *assignment, const float *dlogits);

#ifdef __cplusplus
}
#endif
#endif
