/* dp_gen.h: workload generators: partitioned ML dataflow graphs (ChainMM, FFNN, Llama block and
 * layer) with real shapes, FLOPs and bytes, and layered random DAGs.
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
 * takes them). NULL with err (DP_EINVAL naming the spec) on failure. */
dp_graph *dp_gen_spec(const char *spec, dp_error *err);

/* Graph families with randomised parameters, for training on a distribution (issue 16): the
 * names "chainmm", "ffnn", "llama-block", "llama-layer", "daggen" (NULL-ended). Their ranges,
 * each uniform over the values listed (bounds included):
 *   chainmm      matrices 3..8, blocks 2..3, n in {4096, 8192, 16384, 20000}, 3d with
 *                probability 0.75 else 2d (at most 252 ops)
 *   ffnn         layers 2..5, batch in {2048, 4096, 8192, 16384}, in = out features and hidden
 *                each in {4096, 8192, 16384}, batch-blocks 1..2, feature-blocks 2..4 (at most
 *                280 ops)
 *   llama-block, llama-layer
 *                seq in {1024, 2048, 4096}, heads in {16, 32}, tp in {2, 4, 8}, hidden-blocks in
 *                {2, 4}, softmax split with probability 0.25 else fused (Llama-7B's other sizes)
 *   daggen       DAGGEN random DAGs (model "random"): n 30..300, fat 0.2..0.8, density 0.1..0.5,
 *                regular 0.2..0.9 (uniform reals), jump 1..3, ccr in {0.1, 0.2, ..., 4.0}, the
 *                DAG's own seed a draw of r
 * Writes the drawn graph's generator spec (for dp_gen_spec) into spec (cap bytes), drawing from
 * r only: the same generator state gives the same spec. DP_OK, or DP_EINVAL (unknown family,
 * listing the known ones; spec too long). */
const char *const *dp_gen_families(void);
int dp_gen_family_spec(const char *family, gsl_rng *r, char *spec, size_t cap, dp_error *err);

/* Write a parameter's default value of a model as text ("20000", "3d") into buf. */
void dp_gen_param_default(const dp_gen_model *m, const dp_gen_param *p, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
