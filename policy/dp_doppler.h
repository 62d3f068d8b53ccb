/* dp_doppler.h: DOPPLER's two policies, SEL (which ready op next) and PLC (which device), as in
 * Yao et al., "DOPPLER: Dual-Policy Learning for Device Assignment in Asynchronous Dataflow
 * Graphs", ICLR 2026 (networks of the authors' scheduler/rl_agent.py; the differences are listed
 * in doc/doppler-vs-reference.md).
 *
 * Inputs computed once per graph:
 *   X (n, 5)  node features, z-scored per column over the ops: mean op time, b-level, t-level,
 *             total mean transfer time of in-edges, of out-edges (dp_cost_levels, mean costs);
 *   the bidirected graph with one edge feature (mean transfer time), z-scored over the edges;
 *   for each op its b-path (itself, then the successor that attains its b-level, ... to a sink)
 *   and t-path (itself, then the predecessor that attains its t-level, ... to a source).
 *
 * SEL (one parameter block):  H = lrelu(MPNN(X)) (n, d)
 *   Bz = zscore(sum of H over each b-path), Tz likewise (columns over the ops)
 *   score(v) = MLP([lrelu(Linear(5->d) X[v]), H[v], Bz[v], Tz[v]])   4d -> mlp_hidden -> 1
 *   pi_SEL(v | ready) = softmax of score over the ready set.
 * The scores depend only on the parameters, so they are computed once per episode and a step
 * costs O(|ready|). With arch.sel_dynamic (issue 29, not the paper) a step adds to each ready
 * op's score a small MLP of its per-step features (earliest start and finish relative to the
 * ready set, ...: dp_doppler_sel_dynamic_scores), so the order can depend on the state; a step
 * then costs O(|ready| (D + in-degree + hidden)).
 *
 * PLC (its own block):  Hp = lrelu(MPNN'(X)) (n, d), Fp = lrelu(Linear(5->d) X)
 *   for the chosen op v and each device k: devfeat (D, FD) from dp_env_device_features_of with
 *   the architecture's feature set (the authors' five, FE = 5, or the engine set, FE = 12; every
 *   column documented in dp_env.h), z-scored over the devices (FD = FE inputs), and with
 *   device_magnitude also centred over the devices in units of the graph's lower bound (FD = 2 FE); S[k] = sum of Hp over ops already on k, z-scored over the devices;
 *   logit(k) = MLP([lrelu(Linear(FD->d) devfeat[k]), Fp[v], Hp[v], zS[k]])  4d -> mlp_hidden -> 1
 *   pi_PLC(k | v) = softmax over the devices.
 * The op's columns of the first layer (those acting on Fp[v] and Hp[v], with its bias) are the
 * same for every device and step: they are computed for all ops once per parameter update (Q in
 * dp_doppler_prepare) and their backward runs once per batch (dQ in dp_doppler_backward), so a
 * step costs O(D * 2d * mlp_hidden) and the per-episode backward (batched GEMMs over all steps)
 * only covers the per-device columns.
 *
 * Transfer (issue 16): every input is normalised per graph or per step, so the parameters mean
 * the same on any graph, cost unit and machine, and no tensor is sized by the op or device
 * count (dp_doppler_model; one model is bound to many graphs with dp_doppler_bind):
 *   node features X      z-scored per column over the graph's ops (scale and unit free; what
 *                        is lost is each column's absolute level, e.g. the ratio of transfer
 *                        to compute time, which only the device features still carry)
 *   edge feature         z-scored over the graph's edges
 *   b- and t-path sums   z-scored per column over the ops
 *   device features      z-scored per column over the devices at every step (the authors' five
 *                        and the engine set: times and one busy fraction; the hint set: and a
 *                        0/1 hint, dp_env.h); with
 *                        device_magnitude also centred and divided by the graph's lower bound
 *   device sums S        z-scored per column over the devices at every step
 * A column that is constant over the devices (e.g. any column on one device, or before any op
 * is placed) becomes zeros. With D = 2 a varying column is +-1: how devices differ is kept, by
 * how much is not (unless device_magnitude).
 *
 * Usage per batch of episodes: dp_doppler_zero_grad; dp_doppler_prepare (forward of the per-op
 * parts); for each episode: dp_doppler_episode_begin, then per step read dp_doppler_sel_scores,
 * call dp_doppler_plc_forward and dp_doppler_plc_commit; at its end give the gradients of the
 * loss with respect to the logits (dp_doppler_sel_dscore, dp_doppler_plc_set_dlogits) and call
 * dp_doppler_episode_backward; after the batch dp_doppler_backward fills both networks' grads.
 */
#ifndef DP_DOPPLER_H
#define DP_DOPPLER_H

#include "dp_cost.h"
#include "dp_env.h"
#include "dp_graph.h"
#include "dp_alloc.h"
#include "dp_mpnn.h"
#include "dp_nn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_DOPPLER_N_NODE_FEATURES 5
/* The dynamic SEL (arch.sel_dynamic): per-step features of each ready op and the hidden width of
 * the MLP that scores them (dp_doppler_sel_dynamic_scores lists the features). */
#define DP_DOPPLER_SEL_DYN_FEATURES 5
#define DP_DOPPLER_SEL_DYN_HIDDEN 16

typedef struct dp_doppler_arch {
    int hidden;      /* d: MPNN width and projections (authors: 128) */
    int mlp_hidden;  /* hidden width of the scoring MLPs (authors: 64) */
    int steps;       /* message-passing steps (authors: 6) */
    int edge_hidden; /* hidden width of the edge network (authors, dgllife default: 128) */
    float slope;     /* leaky ReLU slope (authors: 0.1) */
    int cp_embeddings; /* 1 (the paper): SEL sees each op's b- and t-path embeddings; 0: those
                          inputs are zero (the "without critical-path embeddings" ablation) */
    int device_features; /* dp_env_features the PLC reads: DP_ENV_FEATURES_DOPPLER (the paper's
                            five, default), DP_ENV_FEATURES_ENGINE (twelve, dp_env.h) or
                            DP_ENV_FEATURES_HINT (thirteen: the hint, dp_train.h); sets
                            the shape of the PLC's "dev.w" block (hidden, FD) */
    int device_magnitude; /* 0 (the paper, default): the PLC's device features are z-scored over
                            the devices only, so how much devices differ is lost (two devices
                            one op apart look like two far apart); 1: each column also enters
                            centred over the devices and divided by the graph's lower bound
                            (dp_cost_lower_bound; the engine set's busy fraction, column 9,
                            and the hint set's hint, column 12, centred only), which keeps the size of a difference in a unit of
                            the graph and still depends on no op or device count. Doubles the
                            "dev.w" block's inputs (FD = 2 x the feature set's count). */
    int sel_dynamic; /* 0 (the paper, default): SEL's scores are static per episode (above); 1:
                            score(v, step) = static score(v) + dyn(f(v, step)), a small MLP
                            (DP_DOPPLER_SEL_DYN_FEATURES -> DP_DOPPLER_SEL_DYN_HIDDEN -> 1, its
                            output layer zero at initialisation, so the policy starts as the
                            static one) of per-step features of the ready op in units of the
                            graph's lower bound (dp_doppler_sel_dynamic_scores): the order can
                            then depend on the state, as ETF's earliest start first does. Adds
                            the SEL tensors "dyn.w1", "dyn.b1", "dyn.w2" (issue 29). */
    int no_grad;    /* not a network size, and not in a config or checkpoint: 1 binds graphs for
                       the forward only (a placement from a checkpoint: `doppler place`), without
                       the gradient buffers and per-step caches of training (the MPNNs keep two
                       node states instead of steps + 1, the device features one step's); the
                       backward functions must not be called. The same placements, bit for bit
                       (tests/test_place_scale.sh). 0 (default): training. */
} dp_doppler_arch;

/* The node features DOPPLER's networks see (the list at the top of this file), for g under c:
 * Xraw (n, 5) as computed (may be NULL when not wanted) and X (n, 5) z-scored per column over the
 * ops. The learned baselines (Placeto, GDP) use the same inputs. DP_OK or DP_ENOMEM. */
int dp_doppler_node_features(const dp_graph *g, const dp_cost *c, float *X, float *Xraw);

/* The authors' sizes: 128, 64, 6, 128, 0.1, with the path embeddings and their five device
 * features. */
void dp_doppler_arch_default(dp_doppler_arch *a);

/* The parameters of both networks: two named blocks sized by the architecture alone (no tensor
 * depends on the op count or the device count: the PLC scores each device from that device's
 * own features and sums, with the same weights, and softmaxes over however many there are). One
 * model can be bound to any number of graphs and machines at once (dp_doppler_bind): their
 * workspaces read the same parameters and accumulate (+=) into the same gradients. */
typedef struct dp_doppler_model {
    dp_doppler_arch a;
    int FE;                         /* device features per device from the environment (dp_env_n_features) */
    int FD;                         /* the device branch's inputs per device: FE, or 2 FE with device_magnitude */
    dp_nn_params sel, plc;          /* the parameter blocks "sel" and "plc" */
    dp_mpnn sel_mp, plc_mp;         /* declared only (tensor ids and sizes; no caches) */
    int s_fw, s_fb, s_w1, s_b1, s_w2, s_b2;
    int s_dw1, s_db1, s_dw2;        /* the dynamic SEL's tensors (-1 without sel_dynamic) */
    int p_dw, p_db, p_fw, p_fb, p_w1, p_b1, p_w2, p_b2;
} dp_doppler_model;

/* The parameter blocks of architecture a (zero until dp_doppler_model_init). NULL with err
 * (DP_EINVAL naming the bad size, DP_ENOMEM). */
dp_doppler_model *dp_doppler_model_alloc(const dp_doppler_arch *a, dp_error *err);
/* Free the model and its two blocks; the workspaces bound to it must be freed first. NULL is a
 * no-op. */
void dp_doppler_model_free(dp_doppler_model *m);
/* Orthogonal weights, zero biases (the authors' layer_init), from r. DP_OK or DP_ENOMEM. */
int dp_doppler_model_init(dp_doppler_model *m, gsl_rng *r);

/* A workspace: a model bound to one graph under one cost model (its device count): the graph's
 * normalised inputs, paths, the MPNN caches and the per-step caches of an episode. */
typedef struct dp_doppler {
    const dp_graph *g;
    const dp_cost *c;
    dp_doppler_model *m;            /* the parameters (owned only when own_model) */
    int own_model;
    dp_doppler_arch a;
    int n, D;
    int FE;                         /* device features per device from the environment (dp_env_n_features) */
    int FD;                         /* the device branch's inputs per device: FE, or 2 FE with device_magnitude */
    double magnitude_unit;          /* the graph's lower bound (> 0), the unit of the magnitude columns */
    dp_alloc_table owned;           /* X, Xraw and every activation buffer below */
    /* per-graph inputs */
    float *X;                       /* (n, 5) z-scored node features */
    float *Xraw;                    /* (n, 5) before the z-score (for inspection) */
    dp_nn_ecgraph *eg;              /* bidirected graph, z-scored edge feature classes */
    int *bnext, *tnext;             /* the next op on each op's b-path / t-path (-1 at the end) */
    int *rtopo;                     /* reverse topological order (b-path sums visit it) */
    size_t bytes;                   /* memory held, estimated before allocating (dp_file_mem_check) */
    /* SEL. Shapes: n ops, d = hidden, h = mlp_hidden; per-graph activations (dp_doppler_prepare) */
    dp_nn_params *sel;              /* the model's block */
    dp_mpnn sel_mp;                 /* the model's MPNN with this graph's caches */
    int s_fw, s_fb, s_w1, s_b1, s_w2, s_b2;
    float *s_Hpre;                 /* (n, d) message passing output (points into sel_mp) */
    float *s_H;                    /* (n, d) lrelu(s_Hpre) */
    float *s_Fpre;                 /* (n, d) node feature projection X W^T + b */
    float *s_Bp, *s_Tp;            /* (n, d) sums of s_H along each op's b-path and t-path */
    float *s_Bm, *s_Br, *s_Tm, *s_Tr; /* (d) z-score means and 1/std of s_Bp and s_Tp over ops */
    float *s_cat;                  /* (n, 4d) [lrelu(s_Fpre), s_H, z(s_Bp), z(s_Tp)]; the
                                      backward writes dcat over it */
    float *s_A, *s_Aact;           /* (n, h) MLP hidden pre-activation, after lrelu; the backward
                                      writes dA and dAact over them */
    int sel_spent;                 /* the backward has written over s_cat, s_A and s_Aact */
    /* dynamic SEL (sel_dynamic): the features of every step's ready ops, step t's rows at
     * sd_off[t] .. sd_off[t + 1] of sd_feat (rows of DP_DOPPLER_SEL_DYN_FEATURES floats; the
     * sum of the ready sets' sizes, grown as needed; with no_grad one step's), and scratch */
    float *sd_feat;
    size_t sd_cap;                 /* rows sd_feat holds */
    size_t *sd_off;                /* (n + 1) */
    float *sd_A, *sd_Aact, *sd_dA; /* (n, DP_DOPPLER_SEL_DYN_HIDDEN) */
    double *sd_tmp;                /* (n, 3) per ready op: earliest start, earliest finish, b-level */
    struct dp_doppler_rank { double bl; int op, i; } *sd_rank; /* (n) the ready set by b-level */
    float *s_score;                /* (n) SEL logit of each op */
    float *s_dscore;               /* (n) gradient of the scores, accumulated over the batch */
    float *s_dH;                   /* (n, d) */
    float *s_dP;                   /* (n, d) gradient of s_Hpre; also the forward's temporary */
    /* PLC. One op is placed per step t < n. The per-step caches marked [C] hold C = dd->chunk
     * steps (step t in slot t mod C): all n steps when n <= DP_DOPPLER_STEP_CACHE_MAX, else
     * DP_DOPPLER_STEP_CHUNK, and the episode backward recomputes each earlier chunk's from the
     * stored inputs of its steps (p_DFz, p_op, the assignment, p_Sck) */
    dp_nn_params *plc;              /* the model's block */
    dp_mpnn plc_mp;
    int p_dw, p_db, p_fw, p_fb, p_w1, p_b1, p_w2, p_b2;
    float *p_Hpre;                 /* (n, d) message passing output (points into plc_mp) */
    float *p_H;                    /* (n, d) lrelu(p_Hpre) */
    float *p_Fpre, *p_F;           /* (n, d) node feature projection, after lrelu */
    float *p_S;                    /* (D, d) current device sums of p_H over placed ops */
    int *p_op;                     /* (n) op of each step */
    float *p_DFz;                  /* (n, D, FD) z-scored device features of each step (then, with
                                      device_magnitude, the centred ones in lower bounds) */
    float *p_L1;                   /* [C] (C, D, d) their projection (then dL1, in the backward) */
    float *p_Sst;                  /* [C] (C, D, d) the device sums at each step */
    float *p_Sm, *p_Sr;            /* [C] (C, d) their z-score means and 1/std over devices */
    float *p_cat;                  /* [C] (C, D, 2d) [lrelu(p_L1), z(p_Sst)] per step and device;
                                      the episode backward writes dcat over it */
    float *p_A, *p_Aact;           /* [C] (C, D, h) MLP hidden pre-activation, after lrelu; the
                                      episode backward writes dA over p_A */
    float *p_Sck;                  /* (ceil(n / C), D, d) the device sums at each chunk's first step */
    float *p_Srep;                 /* (D, d) the device sums replayed while a chunk is recomputed */
    int chunk;                     /* C: steps per chunk of the per-step caches (1 <= C <= n) */
    float *p_dlogits;              /* (n, D) gradient of each step's logits */
    float *p_dH, *p_dF;            /* (n, d) per-op gradient accumulators */
    float *p_Q, *p_dQ;             /* (n, h) the op's part of the PLC MLP's first layer, its
                                      gradient accumulated over the batch */
    float *p_wT;                   /* the PLC weights a step multiplies by, transposed at each
                                      dp_doppler_prepare: dev.w^T (FD, d), the device-feature and
                                      device-sum column blocks of W1 transposed, (d, h) each, and
                                      W2^T (h, 1): a step's products then need no transposing copy
                                      of them (dp_nn_gemm packs op(B) = B^T; the same bits) */
    float *p_dAact;                /* [C] (C, D, h) */
    float *p_dS, *p_acc;           /* (D, d) gradient of the device sums; its running sum over steps */
    float *p_dtmp;                 /* (max(n, D), max(d, FD)) scratch */
    double *devfeat;               /* (D, FE) the last step's raw device features */
    int episode_steps;             /* steps cached in the current episode */
} dp_doppler;

/* The PLC's per-step caches (of the episode backward's batched GEMMs over all steps x devices
 * rows) hold every step of graphs of at most DP_DOPPLER_STEP_CACHE_MAX ops: their results are
 * those of all earlier versions, bit for bit. Larger graphs cache DP_DOPPLER_STEP_CHUNK steps:
 * the episode backward runs chunk by chunk, last to first, and recomputes each earlier chunk's
 * forward from the stored inputs of its steps (activation checkpointing; the recomputation is
 * bit for bit the forward's). The PLC's weight gradients are then sums of per-chunk GEMMs, so
 * they differ from one all-steps GEMM in the last bits of single precision (summation order);
 * nothing else changes in a backward. Adam's steps (of about the learning rate whatever the
 * gradient's size) turn such differences into visible ones where a gradient is near zero: the
 * PLC's output bias (mlp.b2), whose exact gradient is zero (the softmax over the devices is
 * shift-invariant), after one episode on 5,000 ops, and then everything trained after it. Memory per op drops by about 7.5 KiB at this project's sizes (d = 64, 4
 * devices, twelve device features) and 12 KiB at the authors' (d = 128, five). */
#define DP_DOPPLER_STEP_CACHE_MAX 4096
#define DP_DOPPLER_STEP_CHUNK 512

/* Bind model m to graph g under costs c (all three must outlive the workspace): features,
 * paths, caches; the parameters are m's. NULL with err on failure. Memory is
 * O(n d T + (n + E) d + n D FD + C D (d + mlp_hidden) + U d^2) for n ops, E edges, D devices,
 * FD device features, C cached steps (above), d = hidden, T = steps and U distinct edge
 * features (the MPNNs keep only every step's node states, dp_mpnn.h); it is estimated
 * (dd->bytes, the model's parameters included) before the large allocations and refused
 * (DP_ENOMEM, "GRAPH: DOPPLER's networks for this graph need about N MiB ...") when over
 * dp_file_mem_limit() (available memory, ulimits, DOPPLER_MEM_LIMIT); DP_EINVAL ("GRAPH: costs
 * beyond the range of DOPPLER's inputs ...") when an op's node feature (time, b- or t-level,
 * transfer sums) is over float's range under c. bench/bench_inputs.sh measures the peak RSS of
 * training. */
dp_doppler *dp_doppler_bind(dp_doppler_model *m, const dp_graph *g, const dp_cost *c, dp_error *err);
/* dp_doppler_bind with the PLC's per-step caches in chunks of chunk_steps steps (clipped to
 * 1 .. n; chunk_steps <= 0: the rule above). Tests force the chunked path on small graphs with
 * it; results differ from the unchunked ones only in the summation order of the PLC's weight
 * gradients. */
dp_doppler *dp_doppler_bind_chunked(dp_doppler_model *m, const dp_graph *g, const dp_cost *c, int chunk_steps, dp_error *err);
/* A model of architecture a bound to g (the workspace owns it). NULL with err on failure. */
dp_doppler *dp_doppler_alloc(const dp_graph *g, const dp_cost *c, const dp_doppler_arch *a, dp_error *err);
/* Free the workspace (and its model when it owns it: dp_doppler_alloc's; not a model it was
 * bound to, nor g or c). NULL is a no-op. */
void dp_doppler_free(dp_doppler *dd);
/* dp_doppler_model_init of the workspace's model. */
int dp_doppler_init(dp_doppler *dd, gsl_rng *r);

/* Zero both gradient blocks (the model's, shared by every workspace bound to it) and this
 * workspace's per-op accumulators (start of a batch on this graph). */
void dp_doppler_zero_grad(dp_doppler *dd);
/* Forward of everything that depends only on the parameters (both MPNNs, SEL scores, PLC per-op
 * projections). Call after every parameter change, before the episodes that use them. */
void dp_doppler_prepare(dp_doppler *dd);
/* SEL score of every op (n), valid after prepare. */
static inline const float *dp_doppler_sel_scores(const dp_doppler *dd) { return dd->s_score; }

/* The dynamic SEL (arch.sel_dynamic 1; these must not be called otherwise). For the ready ops
 * ops[0..nr) of env at its step t = env->step (nr = env->n_ready, the rollout's order), the
 * features, each in units of the graph's lower bound L (dp_cost_lower_bound) or dimensionless,
 * so they mean the same on any graph size and cost unit, clipped to [-4, 4]:
 *   0 (EST(v) - min over the ready set of EST) / L, EST(v) = min over devices d of
 *     max(dev_avail(d), data-ready time of v on d), the data-ready time the latest over v's
 *     in-edges e = (u, v) of est_end(u) + comm(e, dev(u), d): ETF's key (append estimate);
 *   1 (EFT(v) - min over the ready set of EFT) / L, EFT(v) = min over d of that start plus
 *     op_time(v, d): HEFT's earliest finish;
 *   2 (blevel(v) - max over the ready set of blevel) / L (mean costs): the cp key, relative;
 *   3 1 when v's device of earliest start is the device of its heaviest input (the in-edge of
 *     largest mean transfer time; ties: the first), else 0 (0 for a source);
 *   4 v's rank by b-level in the ready set (0 the highest, ties by lower id) / (nr - 1), 0
 *     when nr = 1.
 * (Differences to the ready set's extreme, since the softmax ignores a per-step constant.)
 * dp_doppler_sel_dynamic_scores computes them, records them as step t's (every step of the
 * episode is kept for the backward; with no_grad only this one) and adds dyn(f) to z[i] (the
 * static scores of ops[i] in the caller's z). DP_OK or DP_ENOMEM (growing the record). */
int dp_doppler_sel_dynamic_scores(dp_doppler *dd, const dp_env *env, const int *ops, int nr, float *z);
/* Step t's recorded features (nr rows of DP_DOPPLER_SEL_DYN_FEATURES; with no_grad the last
 * step's). */
const float *dp_doppler_sel_dynamic_features(const dp_doppler *dd, int t);
/* Add dyn(f) of step t's recorded features (nr rows, the same bits as the rollout's) to z. */
void dp_doppler_sel_dynamic_replay(dp_doppler *dd, int t, int nr, float *z);
/* Back-propagate dL/dz (nr, step t's ready ops) through dyn into the SEL block's gradient
 * (sel.grad, tensors dyn.*; the static scores' part goes through dp_doppler_sel_dscore). */
void dp_doppler_sel_dynamic_backward(dp_doppler *dd, int t, int nr, const float *dz);

/* Start an episode: no op on any device. */
void dp_doppler_episode_begin(dp_doppler *dd);
/* PLC logits (D) for placing ready op v in env's current state (step t = env->step); caches the
 * step for the backward. */
void dp_doppler_plc_forward(dp_doppler *dd, const dp_env *env, int v, float *logits);
/* Record that op v went to device k (after dp_doppler_plc_forward for v). */
void dp_doppler_plc_commit(dp_doppler *dd, int v, int k);

/* Add dL/dscore(v) (the SEL logit gradient of a step, candidate v). */
static inline void dp_doppler_sel_dscore(dp_doppler *dd, int v, float g) { dd->s_dscore[v] += g; }
/* Set dL/dlogits (D) of PLC step t of the current episode. */
void dp_doppler_plc_set_dlogits(dp_doppler *dd, int t, const float *dlogits);
/* Back-propagate the current episode's PLC steps (their dlogits) into the PLC parameters and the
 * per-op accumulators; env must be the finished episode's environment. */
void dp_doppler_episode_backward(dp_doppler *dd, const dp_env *env);
/* Back-propagate the per-op accumulators (SEL score gradients, PLC per-op gradients) through
 * the per-op parts and both MPNNs into sel.grad and plc.grad. */
void dp_doppler_backward(dp_doppler *dd);

#ifdef __cplusplus
}
#endif
#endif
