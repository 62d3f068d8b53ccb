/* dp_gen.h: workload generators: partitioned ML dataflow graphs (ChainMM, FFNN, Llama block and
 * layer) with real shapes, FLOPs and bytes, layered random DAGs, and the training corpus's
 * task graphs (STG, Topcuoglu's layered DAGs, fork-join, series-parallel, workflow shapes) and
 * DNN operator graphs (inception CNN, LSTM/GRU, transformer, mixture of experts).
 *
 * The ML models are block-partitioned einsum programs (dp_gen_einsum.h): graphs of the DOPPLER
 * family (Yao et al., ICLR 2026; their files are in ../shared/data/doppler-graphs) rebuilt from
 * the tensor program, so that every op has a kind, an einsum, an output shape, FLOPs
 * (multiply-add = 2) and output bytes (DP_GRAPH_COST_PHYSICAL). As in DOPPLER's files, model inputs and
 * weights are not ops. The defaults give graphs of the size of the paper's (ops within 20%):
 *
 *   model                   default here           DOPPLER file (ops)
 *   chainmm                 72 ops, 88 edges       chain_mm_112nodes (76)
 *   ffnn                    168 ops, 208 edges     ffnn_192nodes (180)
 *   llama-block             168 ops                transformer_block_215nodes (182)
 *   llama-layer             223 ops                full_transformer_layer_261nodes (229)
 *   llama-block --tp 8      328 ops                8gpu_transformer_block (302)
 *   llama-layer --tp 8      403 ops                8gpu_full_transformer (367)
 *
 * Training (training = 1, `doppler graph gen MODEL --training`): the forward graph, unchanged
 * (same ops, ids and names first), then the loss's gradient, the backward pass and one update
 * per parameter block, built by dp_gen_einsum_backward (dp_gen_einsum.h: the reverse-mode rules,
 * gradient accumulation, FLOPs per kind; partitioned like the forward). The loss: ChainMM, FFNN
 * and llama-block a squared error against a target input, "loss.grad" dY = Y - T (1 FLOP per
 * element, one op per block of Y); llama-layer softmax cross-entropy over the vocabulary,
 * vocabulary-parallel as in Megatron-LM: "loss.sumexp" "bsv->bs" (2 FLOPs per element, with the
 * reduction over the vocabulary blocks) and "loss.grad" "bsv,bs->bsv" (3). The optimizer
 * (optimizer): Adam (default, 12 FLOPs per weight element) or SGD (2). The graph's name gets
 * "_train_adam" or "_train_sgd". Sizes: doc/graph-format.md ("Training graphs"), e.g. the
 * 2-matrix ChainMM in one block: 1 forward + 1 loss + 2 gradients + 2 updates = 6 ops; the
 * default llama-layer 754 ops (forward 223); 32 stacked layers at tp 8 38,574 (11,377).
 *
 * Every generator validates its options and returns NULL with DP_EINVAL naming the option, or
 * when the graph would exceed DP_GEN_MAX_OPS ops or DP_GEN_MAX_EDGES edges (dp_gen_einsum.h).
 *
 * Each generator X below comes as a pair after its options struct, whose comment describes it:
 * dp_gen_X_defaults(o) sets the fields of o (non-NULL, unchecked) to the defaults that comment
 * gives (dp_gen_llama_defaults also takes the block/layer choice); dp_gen_X(o, err) reads o (not
 * kept) and returns a new graph, the caller's, freed with dp_graph_free, or NULL with err as
 * above (DP_ENOMEM when memory runs out).
 */
#ifndef DP_GEN_H
#define DP_GEN_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "dp_gen_einsum.h"
#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ChainMM: X = M1 M2 ... MK, evaluated left to right ----
 * Every matrix is n x n, cut into blocks x blocks. 3D partition (Agarwal et al. 1995, "A
 * three-dimensional approach to parallel matrix multiplication"): each product is blocks^3
 * block products "ij,jk->ik" plus blocks^2 reductions of blocks partials (when blocks > 1).
 * 2D partition: the contraction is not split; each of the blocks^2 output blocks is one op
 * reading a row panel of the left operand (blocks edges) and a column panel of the right one.
 * Ops: (K-1)(p^3 + p^2) in 3D (p > 1), (K-1) p^2 in 2D. FLOPs per product 2 n^3 (+ reductions
 * (p-1) n^2 in 3D). Defaults: K 7, n 20000, p 2, 3D, fp32: 72 ops of which 48 block products of
 * 10000^3 multiply-adds, DOPPLER's block size. */
typedef struct dp_gen_chainmm_opts {
    int matrices;     /* K >= 2 */
    int64_t n;        /* matrix dimension */
    int blocks;       /* p: blocks per matrix dimension (1..n) */
    int three_d;      /* 1: 3D partition, 0: 2D */
    int dtype_bytes;  /* bytes per element (4: fp32) */
    int training;     /* 1: a training step (below), every matrix a parameter; 0 (default) */
    int optimizer;    /* dp_gen_optimizer of the update (DP_GEN_OPT_ADAM) */
} dp_gen_chainmm_opts;
void dp_gen_chainmm_defaults(dp_gen_chainmm_opts *o);
dp_graph *dp_gen_chainmm(const dp_gen_chainmm_opts *o, dp_error *err);

/* ---- FFNN: a multi-layer perceptron, H_l = act(H_{l-1} W_l + b_l) ----
 * Per layer: matmul "bi,io->bo" with batch cut in batch_blocks and both feature dims in
 * feature_blocks (3D: batch_blocks x feature_blocks^2 block products, plus batch_blocks x
 * feature_blocks reductions when feature_blocks > 1), then a bias add (1 FLOP per element) and a
 * ReLU (1 FLOP per element), each batch_blocks x feature_blocks ops. Dims: in -> hidden
 * (layers - 1 times) -> out. Defaults: 3 layers, batch 8192, all dims 16384, batch_blocks 2,
 * feature_blocks 4 (block products of 4096^3, DOPPLER's size): 168 ops, 208 edges. */
typedef struct dp_gen_ffnn_opts {
    int layers;
    int64_t batch, in, hidden, out;
    int batch_blocks, feature_blocks;
    int dtype_bytes;
    int training, optimizer;  /* a training step (below): W_l and b_l are the parameters */
} dp_gen_ffnn_opts;
void dp_gen_ffnn_defaults(dp_gen_ffnn_opts *o);
dp_graph *dp_gen_ffnn(const dp_gen_ffnn_opts *o, dp_error *err);

/* ---- Llama block and layer (Touvron et al. 2023; Llama-7B shapes by default) ----
 * Labels: b batch, s (and t) sequence, d hidden, h heads, e head dim (hidden / heads), f FFN,
 * v vocabulary. Splits: heads, FFN and vocabulary in tp (tensor parallel degree), hidden in
 * hidden_blocks, batch in batch_blocks, sequence in seq_blocks.
 * Block: q/k/v projections "bsd,dhe->bshe" (+ reductions over d), rotary embedding of q and k
 * "bshe,se->bshe" (3 FLOPs per element), scores "bshe,bthe->bhst", softmax over t (fused: one op
 * reading whole rows, 5 FLOPs per element; split: max, exp, sum, divide as einsummable does),
 * weighted sum "bhst,bthe->bshe", output projection "bshe,hed->bsd" (+ reductions over heads),
 * SwiGLU FFN: gate and up "bsd,df->bsf", SiLU (4 FLOPs per element), product, down "bsf,fd->bsd"
 * (+ reductions over f). No causal mask saving: scores are full (FLOPs of the dense product).
 * Layer: the block plus RMSNorm before attention and FFN (sum of squares "bsd->bs", 2 FLOPs per
 * element, and scaling, 3), residual adds after each, a final RMSNorm and the vocabulary
 * projection "bsd,dv->bsv".
 * Defaults: batch 1, seq 4096, hidden 4096, heads 32, ffn 11008, vocab 32000, tp 4,
 * hidden_blocks 4, batch_blocks 1, seq_blocks 1, fused softmax, fp32: block 168 ops, layer 223;
 * with tp 8: 328 and 403; each further stacked layer (layers) adds 194 ops at tp 4 (10 layers: 1,969 ops; 52: 10,117). */
typedef struct dp_gen_llama_opts {
    int layer;          /* 0: block, 1: layer */
    int64_t batch, seq, hidden, heads, ffn, vocab;
    int tp, hidden_blocks, batch_blocks, seq_blocks;
    int softmax_split;  /* 0: fused, 1: max/exp/sum/div */
    int dtype_bytes;
    int layers;         /* layers stacked, 1..1024 (1; layer only: layer l+1 reads layer l's
                         * residual output, one final RMSNorm and vocabulary projection after
                         * the last; ops and weights of layer l > 0 are named "l<l>.NAME") */
    int training, optimizer;  /* a training step (below): the projections, FFN and norm weights
                               * are the parameters; x and the rotary table are not */
} dp_gen_llama_opts;
void dp_gen_llama_defaults(dp_gen_llama_opts *o, int layer);
dp_graph *dp_gen_llama(const dp_gen_llama_opts *o, dp_error *err);

/* ---- Layered random DAG (DAGGEN: Suter and Hunold, github.com/frs69wq/daggen) ----
 * Tasks per level: width = floor(n^fat); each level gets max(1, floor(width (1 + r))) tasks with
 * r uniform in [-(1 - regular), 1 - regular), the last level truncated to n in all. A task of
 * level i > 0 gets min(1 + floor(U[0, density x |level i-1|)), |level i-1|) parents, each from
 * level i - floor(U[1, jump + 1)) (at least 0) at a uniform position, moving to the next task of
 * that level while it is already a parent (giving up when all are), as DAGGEN does.
 * Costs (classic task-graph model, DP_GRAPH_COST_TIME): work uniform integer in [min_work, max_work];
 * an edge u -> v costs ccr x work(u), so the communication-to-computation ratio is ccr (this is
 * DOPPLER's convention, comm = 4 x comp; DAGGEN's own --ccr option only selects a task
 * complexity). All randomness from a GSL mt19937 generator seeded with seed. O(n + edges). */
typedef struct dp_gen_random_opts {
    int n;
    double fat, density, regular;
    int jump;
    double ccr;
    int min_work, max_work;
    unsigned long seed;
} dp_gen_random_opts;
void dp_gen_random_defaults(dp_gen_random_opts *o);
dp_graph *dp_gen_random(const dp_gen_random_opts *o, dp_error *err);

/* ---- task graphs of the scheduling literature (models/dp_gen_tasks.c) ----
 * All give DP_GRAPH_COST_TIME graphs as "random" does: task work a uniform integer in
 * [min_work, max_work] (workflow: a program's base work is, its tasks 0.5..1.5 times it; below),
 * an edge u -> v costs ccr x work(u) (DOPPLER's rule, so the graph's
 * communication-to-computation ratio is ccr), all randomness from a GSL mt19937 generator seeded
 * with seed (0 to 2^32-1: the generator's seed is 32 bits; 0 is GSL's 4357); tasks are numbered
 * in a topological order. Every option is checked (DP_EINVAL naming
 * it and its range). */

/* Kasahara's STG random generator (Tobita and Kasahara, "A standard task graph set for fair
 * evaluation of multiprocessor scheduling algorithms", J. Scheduling 5(5), 2002; the STG site's
 * "How to make STG"). Tasks T_1..T_n in order; an edge T_i -> T_j needs i < j. The precedence
 * methods, as the paper describes them:
 *   sameprob  every pair i < j gets an edge with the same probability p (Almeida et al. 1992);
 *             here p = 2 degree / (n - 1), so that a task has degree predecessors on average
 *   samepred  every task draws its number of predecessors (at most j-1): a real uniform in
 *             [0, 2 degree), rounded up with the probability of its fraction, so its mean is
 *             degree for any real degree (for a whole degree the ends 0 and 2 degree are half as
 *             likely as the counts between: 1/4, 1/2, 1/4 at degree 1), and takes them uniformly
 *             among the earlier tasks
 *   layrprob  tasks fall uniformly into `layers` layers (Adam et al. 1974); pairs in different
 *             layers, lower to higher, get an edge with one probability, chosen so that a task has
 *             degree predecessors on average (capped at 1)
 *   layrpred  layered as layrprob; every task draws its number of predecessors as samepred
 *             does, among the tasks of lower layers
 * Task times: the STG's "unifproc", uniform integers in [min_work, max_work] (the set's 1..10 by
 * default). The set's graphs have 50..2700 tasks and 0.1..0.2 (sameprob) edge probability; STG
 * has no communication: its files give edge cost 0, here ccr x work as above (ccr 0: none). The
 * dummy entry and exit tasks of the STG files are not generated (the STG reader drops them).
 * Edges: O(n + edges) for every method (geometric skips for the probability methods). */
typedef struct dp_gen_stg_opts {
    int n;              /* tasks, 2..1000000 */
    int method;         /* 0 sameprob, 1 samepred, 2 layrprob, 3 layrpred */
    double degree;      /* mean predecessors per task, 0..100 */
    int layers;         /* layrprob, layrpred: 1..n (0: floor(sqrt(n))) */
    double ccr;
    int min_work, max_work;
    unsigned long seed;
} dp_gen_stg_opts;
void dp_gen_stg_defaults(dp_gen_stg_opts *o);
dp_graph *dp_gen_stg(const dp_gen_stg_opts *o, dp_error *err);

/* Layered random DAG of Topcuoglu, Hariri and Wu ("Performance-effective and low-complexity task
 * scheduling for heterogeneous computing", IEEE TPDS 13(3), 2002, section 5.1): v tasks in
 * levels; the height is round(sqrt(v) / alpha) levels (at least 1) and a level's width is uniform
 * in 1..2 round(alpha sqrt(v)) - 1 (mean alpha sqrt(v)), the last level taking what is left (so
 * fewer levels may be used when the widths add up to v sooner); every task of a level but the
 * last gets out_degree children drawn uniformly, without repetition, from the next level (all of
 * it when narrower), and a task of a level > 0 left without a parent gets one from the level
 * before. The paper's ranges: v in {20, 40, 60, 80, 100, 200, 300, 400, 500, 1000}, alpha in
 * {0.5, 1.0, 2.0}, out_degree in {1, 2, 3, 4, 5}, CCR in {0.1, 0.5, 1.0, 5.0, 10.0}. */
typedef struct dp_gen_layered_opts {
    int n;              /* v: tasks, 1..1000000 */
    double alpha;       /* shape, 0.05..20 */
    int out_degree;     /* 1..1000 */
    double ccr;
    int min_work, max_work;
    unsigned long seed;
} dp_gen_layered_opts;
void dp_gen_layered_defaults(dp_gen_layered_opts *o);
dp_graph *dp_gen_layered(const dp_gen_layered_opts *o, dp_error *err);

/* Fork-join graph (the OpenMP / Cilk shape of the scheduling literature, e.g. Sinnen's "Task
 * Scheduling for Parallel Systems", 2007, ch. 4, fork and join graphs): a first task, then
 * `stages` times: `branches` chains of `length` tasks, each chain reading the stage's fork task,
 * and a join task reading every chain's last task (the join is the next stage's fork).
 * Ops 1 + stages (branches length + 1), edges stages branches (length + 1): 2 branches of 1 task,
 * 1 stage: 4 ops, 4 edges. */
typedef struct dp_gen_forkjoin_opts {
    int stages;         /* 1..10000 */
    int branches;       /* 1..10000 */
    int length;         /* tasks per branch, 1..10000 */
    double ccr;
    int min_work, max_work;
    unsigned long seed;
} dp_gen_forkjoin_opts;
void dp_gen_forkjoin_defaults(dp_gen_forkjoin_opts *o);
dp_graph *dp_gen_forkjoin(const dp_gen_forkjoin_opts *o, dp_error *err);

/* Random series-parallel graph (two-terminal SP DAGs, Valdes, Tarjan and Lawler, SIAM J. Comput.
 * 11(2), 1982; the "SeriesParallel" graphs of Sinnen's optimal-scheduling sets are of this kind):
 * from a source task and a sink task joined by an edge, until there are n tasks, an edge (u, v)
 * drawn uniformly is composed with a new task w: in parallel with probability parallel (u -> w
 * -> v added beside the edge, which stays) else in series (u -> v replaced by u -> w -> v). Every
 * graph so built is series-parallel; parallel near 1 gives wide fork-joins, near 0 chains. */
typedef struct dp_gen_sp_opts {
    int n;              /* tasks, 2..1000000 */
    double parallel;    /* probability of a parallel composition, 0..1 */
    double ccr;
    int min_work, max_work;
    unsigned long seed;
} dp_gen_sp_opts;
void dp_gen_sp_defaults(dp_gen_sp_opts *o);
dp_graph *dp_gen_sp(const dp_gen_sp_opts *o, dp_error *err);

/* Scientific workflow shapes, after the structures of the Pegasus workflows that WfCommons'
 * recipes generate (Juve et al., "Characterizing and profiling scientific workflows", FGCS 29(3),
 * 2013; Bharathi et al., WORKS 2008; Coleman et al., FGCS 128, 2022). `width` is the fan-out
 * (images, lanes, sites, ...). Ops are named by their program ("mProjectPP.3"). Each program
 * draws a base work uniform in [min_work, max_work], each of its tasks 0.5..1.5 times it (rounded):
 *   montage      mProjectPP x W; mDiffFit for image pairs (i, i+1) and (i, i+2): 2W - 3 (W >= 2);
 *                mConcatFit; mBgModel; mBackground x W (its projection and the model); mImgtbl;
 *                mAdd; mShrink; mJPEG                                      ops 4W + 3
 *   epigenomics  fastQSplit; per chunk: filterContams, sol2sanger, fastq2bfq, map (a chain);
 *                mapMerge; maqIndex; pileup                               ops 4W + 4
 *   cybershake   ExtractSGT x 2; SeismogramSynthesis x W (one SGT each, alternating);
 *                PeakValCalcOkaya x W (one each); ZipSeis (all seismograms); ZipPSA (all peaks)
 *                                                                         ops 2W + 4
 *   ligo         TmpltBank x W; Inspiral x W; Thinca per group of 5 (the last group smaller);
 *                TrigBank x W (its group's Thinca); Inspiral x W; Thinca per group
 *                                                                         ops 4W + 2 ceil(W/5)
 *   genome       individuals x W; individuals_merge; sifting; mutation_overlap x 7 and
 *                frequency x 7 (the 1000 Genomes populations; merge and sifting each)
 *                                                                         ops W + 16
 *   srasearch    bowtie2-build; fasterq-dump x W; bowtie2 x W (its dump and the index); merge
 *                                                                         ops 2W + 2 */
typedef struct dp_gen_workflow_opts {
    int recipe;         /* 0 montage, 1 epigenomics, 2 cybershake, 3 ligo, 4 genome, 5 srasearch */
    int width;          /* 1..100000 (montage 2..) */
    double ccr;
    int min_work, max_work;
    unsigned long seed;
} dp_gen_workflow_opts;
void dp_gen_workflow_defaults(dp_gen_workflow_opts *o);
dp_graph *dp_gen_workflow(const dp_gen_workflow_opts *o, dp_error *err);

/* ---- DNN operator graphs, one op per operator (models/dp_gen_dnn.c) ----
 * DP_GRAPH_COST_PHYSICAL, as the MSR operator graphs are op-level: work in FLOPs (multiply-add =
 * 2), an op's output bytes = its output elements x dtype_bytes, an edge carries its producer's
 * output. Model inputs and weights are not ops (as in DOPPLER's files). Element-wise costs per
 * output element: add, mul 1; ReLU 1; max-pool and average-pool k x k reads k^2; sigmoid, tanh,
 * SiLU 4; GELU 8; softmax 5; layer norm 5; concat, dispatch (copies) 1. No causal-mask saving. */

/* Branching CNN of inception-style modules (Szegedy et al., "Going deeper with convolutions",
 * CVPR 2015): a 3x3 stem convolution (3 -> channels), then `modules` modules; a module's branch
 * i of `branches` is: i = 0: 1x1 conv; i mod 3 = 1: 1x1, 3x3; i mod 3 = 2: 1x1, 3x3, 3x3;
 * i mod 3 = 0 (i >= 3): 3x3 max-pool, 1x1 conv; branch i gets C / branches output channels
 * (branch 0 the remainder), then a concat. After every reduce_every-th module (not the last) a
 * 3x3 stride-2 max-pool halves the image side (rounded up) and later modules have twice the
 * channels. Head: global average pool, fully connected (classes), softmax. Conv FLOPs
 * 2 batch H W Cin Cout k^2 (stride 1, same padding). Ops 1 + modules (depths + 1) + reductions
 * + 3 (4 branches: 9 ops per module). */
typedef struct dp_gen_cnn_opts {
    int modules;        /* 1..5000 */
    int branches;       /* 1..12 */
    int reduce_every;   /* 0 (never)..5000 */
    int64_t batch, image, channels, classes;
    int dtype_bytes;
} dp_gen_cnn_opts;
void dp_gen_cnn_defaults(dp_gen_cnn_opts *o);
dp_graph *dp_gen_cnn(const dp_gen_cnn_opts *o, dp_error *err);

/* Unrolled recurrent network (LSTM: Hochreiter and Schmidhuber 1997; GRU: Cho et al. 2014),
 * `layers` stacked over `steps` time steps, batch B, input X, hidden H. LSTM cell, 6 ops:
 * xw = x W (2 B X 4H FLOPs), hu = h_{t-1} U (2 B H 4H), gates = xw + hu + bias (2 B 4H), act =
 * sigmoid / tanh of the gates (4 B 4H), cell c = f c_{t-1} + i g (3 B H), hidden h = o tanh(c)
 * (5 B H). GRU cell, 5 ops: xw (2 B X 3H), hu (2 B H 3H), rz = sigmoid(xw + hu) on 2H (6 B 2H),
 * n = tanh(xw_n + r hu_n) (7 B H), h = (1 - z) n + z h_{t-1} (4 B H). Layer l > 0 reads layer
 * l - 1's h_t as its x (X = H); h_0, c_0 and the inputs x_t are model inputs. LSTM edges per
 * cell 6, plus 2 (h, c) from the step before, plus 1 from the layer below: 1 layer, 2 steps: 12
 * ops, 14 edges. */
typedef struct dp_gen_rnn_opts {
    int cell;           /* 0 lstm, 1 gru */
    int layers;         /* 1..64 */
    int steps;          /* 1..100000 */
    int64_t batch, input, hidden;
    int dtype_bytes;
} dp_gen_rnn_opts;
void dp_gen_rnn_defaults(dp_gen_rnn_opts *o);
dp_graph *dp_gen_rnn(const dp_gen_rnn_opts *o, dp_error *err);

/* Transformer (Vaswani et al., "Attention is all you need", NeurIPS 2017), post-norm, encoder
 * and decoder layers, batch B, sequence S (source and target alike), hidden D, heads h cut into
 * head_blocks P groups, FFN F. Attention per head group p: q_p, k_p, v_p (2 B S D D/P each),
 * scores_p (2 B S S D/P), softmax_p (5 B (h/P) S S), attn_p (2 B S S D/P); then o_proj reading
 * every group (2 B S D D), add (residual), layer norm. FFN: ffn1 (2 B S D F), GELU, ffn2, add,
 * layer norm. Encoder layer 6P + 8 ops; decoder layer: self-attention, then cross-attention
 * (keys and values from the last encoder layer) when there is an encoder, then the FFN:
 * 12P + 11 ops with an encoder, 6P + 8 without (decoder-only). */
typedef struct dp_gen_transformer_opts {
    int enc_layers, dec_layers;  /* 0..1024 each, at least one layer */
    int64_t batch, seq, hidden, heads, ffn;
    int head_blocks;             /* P: 1..heads, dividing heads */
    int dtype_bytes;
} dp_gen_transformer_opts;
void dp_gen_transformer_defaults(dp_gen_transformer_opts *o);
dp_graph *dp_gen_transformer(const dp_gen_transformer_opts *o, dp_error *err);

/* Mixture-of-experts transformer layers (Shazeer et al. 2017; Switch / GShard top-k routing,
 * Fedus et al. 2022, Lepikhin et al. 2021): per layer the attention of the transformer above
 * (6P + 3 ops), then router (2 B S D E FLOPs), gate (softmax and top-k, 5 B S E), per expert:
 * dispatch (its tokens T = ceil(k B S / E), capacity factor 1: T D copies), ffn1 (2 T D F),
 * SiLU (4 T F), ffn2 (2 T F D); combine (every expert and the gate: 2 k B S D), add, layer norm.
 * Ops per layer 6P + 4E + 8. */
typedef struct dp_gen_moe_opts {
    int layers;         /* 1..1024 */
    int experts;        /* E: 1..1024 */
    int top_k;          /* 1..E */
    int64_t batch, seq, hidden, heads, ffn;
    int head_blocks;
    int dtype_bytes;
} dp_gen_moe_opts;
void dp_gen_moe_defaults(dp_gen_moe_opts *o);
dp_graph *dp_gen_moe(const dp_gen_moe_opts *o, dp_error *err);

/* ---- by name, with string parameters (for the command line) ---- */

/* DP_GEN_FLAG: an int 0 or 1, given as yes/no, 1/0, true/false or on/off (case ignored); on the
 * command line a flag's option alone (--training) means yes. */
typedef enum { DP_GEN_INT, DP_GEN_INT64, DP_GEN_DOUBLE, DP_GEN_ULONG, DP_GEN_CHOICE, DP_GEN_FLAG } dp_gen_param_type;

typedef struct dp_gen_param {
    const char *name;        /* "blocks" (given as --blocks on the command line) */
    dp_gen_param_type type;
    size_t offset;           /* of the field in the model's options struct */
    double lo, hi;           /* accepted range (numbers) */
    const char *choices;     /* DP_GEN_CHOICE: "2d=0|3d=1": names and the int stored */
    const char *help;
} dp_gen_param;

typedef struct dp_gen_model {
    const char *name;        /* "chainmm", "ffnn", "llama-block", "llama-layer", "random" */
    const char *description;
    size_t opts_size;
    void (*defaults)(void *opts);
    dp_graph *(*generate)(const void *opts, dp_error *err);
    const dp_gen_param *params;  /* ended by name NULL */
} dp_gen_model;

/* The models, ended by an entry with name NULL; one by name (NULL if unknown). */
const dp_gen_model *dp_gen_models(void);
const dp_gen_model *dp_gen_find(const char *name);

/* Generate model `name` with n_params (key, value) pairs overriding defaults. Errors
 * (DP_EINVAL): unknown model (listing the known ones), unknown parameter (listing the model's),
 * a value that does not parse or is out of range (naming the parameter), the generator's own. */
dp_graph *dp_gen_by_name(const char *name, int n_params, const char *const *keys,
                         const char *const *values, dp_error *err);

/* A graph from a generator spec "gen:MODEL?NAME=VALUE&NAME=VALUE" (parameters as dp_gen_by_name
 * takes them; a yes/no parameter's NAME alone is NAME=yes, as graph gen's --training alone). NULL
 * with err (DP_EINVAL naming the spec) on failure. */
dp_graph *dp_gen_spec(const char *spec, dp_error *err);
/* A generator spec checked without generating: its syntax, model name, parameter names and
 * values (types and ranges), as dp_gen_spec reads them, through the same parser; the generator's
 * own checks across parameters (llama's tp against heads, say) are left to dp_gen_spec. DP_OK,
 * or DP_EINVAL with err as dp_gen_spec's. For a command to refuse a misspelt spec before any
 * work (a sweep's graph parameter). */
int dp_gen_spec_check(const char *spec, dp_error *err);

/* A generator's refusal of option param outside lo..hi: DP_EINVAL with "<model>: option <param>
 * must be in <lo>..<hi>", each bound printed exactly (the shortest decimal that reads back as it:
 * 16777216, not %g's 1.67772e+07, which is below it). The one message of every generator's range
 * checks (dp_gen.c, dp_gen_dnn.c, dp_gen_tasks.c). Returns DP_EINVAL. */
int dp_gen_option_error(dp_error *err, const char *model, const char *param, double lo, double hi);

/* Graph families with randomised parameters, for training on a distribution (issue 16): the
 * names "chainmm", "ffnn", "llama-block", "llama-layer", "daggen", "stg", "layered", "forkjoin",
 * "seriesparallel", "workflow", "cnn", "rnn", "transformer", "moe", "llama-train" (NULL-ended;
 * llama-train is not in the wide corpus, DP_GEN_WIDE_CORPUS). Their ranges,
 * each uniform over the values listed (bounds included):
 *   chainmm      matrices 3..8, blocks 2..3, n in {4096, 8192, 16384, 20000}, 3d with
 *                probability 0.75 else 2d (at most 252 ops)
 *   ffnn         layers 2..5, batch in {2048, 4096, 8192, 16384}, in = out features and hidden
 *                each in {4096, 8192, 16384}, batch-blocks 1..2, feature-blocks 2..4 (at most
 *                280 ops)
 *   llama-block, llama-layer
 *                seq in {1024, 2048, 4096}, heads in {16, 32}, tp in {2, 4, 8}, hidden-blocks in
 *                {2, 4}, softmax split with probability 0.25 else fused (Llama-7B's other sizes)
 *   llama-train  llama-layer's draws as one training step (training=1: the backward pass and
 *                the Adam updates; 252 to 1,430 ops)
 *   daggen       DAGGEN random DAGs (model "random"): n 30..300, fat 0.2..0.8, density 0.1..0.5,
 *                regular 0.2..0.9 (uniform reals), jump 1..3, ccr in {0.1, 0.2, ..., 4.0}, the
 *                DAG's own seed a draw of r
 * The wide corpus's families (issue 29), after those (the five above draw as before); "log a..b"
 * is an integer log-uniform in a..b (floor(exp(U[log a, log(b + 1))))), ccr~ a ratio log-uniform
 * in [0.1, 10] (0.1 x 100^U, 3 digits), each graph's seed a draw of r:
 *   stg          n log 10..2700 (the STG set's sizes reach 2700), method any of the four, degree
 *                U[1, 5] (STG files: 0.7..5.7 predecessors on average), ccr~      (10..2700 ops)
 *   layered      Topcuoglu et al.'s sets: v in {20, 40, 60, 80, 100, 200, 300, 400, 500, 1000},
 *                alpha in {0.5, 1, 2}, out-degree 1..5, ccr in {0.1, 0.5, 1, 5, 10} (20..1000)
 *   forkjoin     stages 2..8, branches log 3..32, length 1..4, ccr~                 (9..1033)
 *   seriesparallel n log 10..2000, parallel U[0.2, 0.8], ccr~                       (10..2000)
 *   workflow     recipe any of the six, width log 4..300, ccr~                       (10..1320)
 *   cnn          modules log 2..64, branches 2..6, reduce-every in {0, 2, 3, 4}, batch in
 *                {16, 32, 64}, image in {28, 56}, channels in {64, 128, 256}         (12..921)
 *   rnn          lstm or gru, layers 1..4, steps log 4..256, batch in {16, 32, 64, 128},
 *                hidden = input in {256, 512, 1024}                                  (20..6144)
 *   transformer  enc-layers and dec-layers 0..6 (both 0: 1 encoder layer), hidden in {512,
 *                1024, 2048}, 16 heads, ffn 4 hidden, seq in {128, 256, 512, 1024}, batch in
 *                {1, 4, 8}, head-blocks in {1, 2, 4, 8}                              (14..978)
 *   moe          layers 1..4, experts in {4, 8, 16, 32}, top-k 1..2, the transformer's sizes
 *                                                                                    (30..736)
 * The DNN families are in FLOPs and bytes: their communication-to-computation ratio is the
 * machine's (train --comm-ratio-range 0.1:10 draws DOPPLER's rule per graph).
 * Writes the drawn graph's generator spec (for dp_gen_spec) into spec (cap bytes), drawing from
 * r only: the same generator state gives the same spec. DP_OK, or DP_EINVAL (unknown family,
 * listing the known ones; spec too long). */
/* The wide corpus (issue 29): every family above, in the order of its commands of record, the
 * task graphs first; `train --family all` stands for it (the order fixes which family each
 * round-robin draw comes from, so it is part of what a seed reproduces). */
#define DP_GEN_WIDE_CORPUS \
    "stg,layered,forkjoin,seriesparallel,workflow,cnn,rnn,transformer,moe,daggen,chainmm,ffnn,llama-block,llama-layer"
/* dp_gen_families: the family names listed above, a static NULL-ended array (not to be freed);
 * dp_gen_family_spec: a spec drawn from family (the comment above DP_GEN_WIDE_CORPUS). */
const char *const *dp_gen_families(void);
int dp_gen_family_spec(const char *family, gsl_rng *r, char *spec, size_t cap, dp_error *err);
/* DP_OK when every name of the comma-separated list is a family above (or "all", the wide
 * corpus), else DP_EINVAL naming the first that is not and listing the known ones: for a command
 * to refuse a misspelt --family before any work. */
int dp_gen_family_check(const char *list, dp_error *err);

/* Reading the generators without laying out dp_gen_model and dp_gen_param (bindings: Python's
 * Graph.models). dp_gen_model_at: model i of dp_gen_models() (i from 0), NULL past the end;
 * dp_gen_model_get_name, _description: its fields; dp_gen_model_get_param: its parameter j,
 * NULL past the end; dp_gen_param_get_name, _help: a parameter's fields. Pointers are into the
 * static tables. */
const dp_gen_model *dp_gen_model_at(int i);
const char *dp_gen_model_get_name(const dp_gen_model *m);
const char *dp_gen_model_get_description(const dp_gen_model *m);
const dp_gen_param *dp_gen_model_get_param(const dp_gen_model *m, int j);
const char *dp_gen_param_get_name(const dp_gen_param *p);
const char *dp_gen_param_get_help(const dp_gen_param *p);

/* Write a parameter's default value of a model as text ("20000", "3d") into buf. */
void dp_gen_param_default(const dp_gen_model *m, const dp_gen_param *p, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
