/* dp_gen_einsum.h: block-partitioned einsum graphs, the machinery behind the ML workload
 * generators (dp_gen.h).
 *
 * A tensor program is written as a sequence of einsum ops over named dimensions ("labels", one
 * letter each). Every label has a size and a default split (the number of blocks it is cut
 * into); an op may override the split of any of its labels. An op then becomes, in the dataflow
 * graph, one block op per combination of label blocks (the einsummable / Agarwal et al. 1995
 * "3D" decomposition: a matrix product ij,jk->ik with i, j, k each cut in p gives p^3 block
 * products), plus, when labels that are summed over (in an input but not in the output) are
 * split into r > 1 blocks, one reduction op per output block that adds the r partial results.
 *
 * Edges: a block op depends on every block of each input tensor that overlaps the region it
 * reads; the edge carries the overlap in bytes (so a consumer cut differently from its
 * producer, e.g. a "2D" product reading whole row panels of a 3D-cut matrix, gets one edge per
 * overlapping block). Tensors given with dp_gen_einsum_input() are external (weights, the model input):
 * they are not ops and give no edges, as in DOPPLER's files (Yao et al. 2026), whose input
 * nodes are removed.
 *
 * Costs (DP_GRAPH_COST_PHYSICAL): a block op's FLOPs are flops_per_point times the number of points of
 * its iteration space (product of the block sizes of all its labels): 2 for a contraction
 * (one multiply-add = 2 FLOPs), 1 for an add, more for transcendental elementwise ops. A
 * reduction op adds r partials: (r - 1) x output elements FLOPs. Output bytes = output elements
 * x dtype_bytes. Each op records its kind ("matmul", "reduce", ...), op_type "einsummable" (a
 * block op) or "formation" (a reduction, DOPPLER's gdp_ file names), its einsum and its output
 * block shape.
 *
 * Blocks: a dimension of size n cut in p gives block k = [floor(k n / p), floor((k+1) n / p)),
 * sizes differing by at most one.
 *
 * Training (dp_gen_einsum_backward): the ops are recorded on a tape as they are declared; the
 * backward pass is built by the standard reverse-mode rules (Griewank and Walther, "Evaluating
 * Derivatives", 2008, ch. 3; the einsum form of each rule as in llm.c's layer backwards): the
 * tape is walked from the loss back, every op whose output's gradient dY is known gives one
 * gradient op per input that needs a gradient (parameters, dp_gen_einsum_param, and the outputs
 * of ops that depend on one; model inputs such as x get none), and a tensor read by k > 1 ops
 * gets its gradient as the sum of the k contributions (one "grad_acc" op, k - 1 FLOPs per
 * element, partitioned like the tensor; chained when k > 8). A gradient op runs over the
 * forward op's iteration space with the forward's splits (its split overrides included), so
 * the backward is blocked like the forward; summed labels that are split give reductions as in
 * the forward. Its inputs and FLOPs per point of that space follow the op's kind:
 *
 *   kind                     input i's gradient reads           FLOPs per point
 *   matmul (any contraction) dY and the other inputs             2 (as forward: 2mnk each)
 *   mul                      dY and the other input              1
 *   rope (x, table)          dY and the table (rotation by -a)   3
 *   add                      dY, summed over labels i lacks      1; no op when i has dY's
 *                            (a bias gradient)                   labels (dY passes through)
 *   sum                      dY broadcast over the summed labels 1
 *   relu                     dY and the output (mask)            1
 *   silu                     dY and the input                    8 (sigmoid 3, 5 more)
 *   sumsq                    dY and the input (2 x dY)           2
 *   rmsnorm (x, ss, g)       dY and all inputs                   3, 4, 3
 *   softmax                  dY and the output: Y (dY - sum dY Y)  4
 *   exp                      dY and the output                   1
 *   div (a, b)               dY and all inputs                   1, 3
 *   max                      none: a stop-gradient (the softmax's shift; its gradient
 *                            contributions cancel exactly)
 *
 * Each gradient op is named after its forward op and the input's position in the spec,
 * "NAME.grad<i>" (block ops "NAME.grad<i>[..]"), kind "matmul" for contractions, "<kind>_grad"
 * otherwise. Finally every parameter W with a gradient gets its update, "W.update", one op per
 * block of W (W's own partition) reading W (an input: no edge) and dW: SGD, w -= lr g, 2 FLOPs
 * per element, or Adam (Kingma and Ba 2015), m and v moments 3 + 4, bias-corrected step 5:
 * 12 FLOPs per element. The optimizer state lives with the update op; its output is the new
 * weight block. The loss and its gradient are the generator's (dp_gen.h).
 *
 * Errors are sticky: the first fault (a bad spec, a split larger than its size, ...) is kept,
 * later calls return -1 and do nothing, and dp_gen_einsum_finish() reports it. Generators therefore
 * check once, at the end.
 */
#ifndef DP_GEN_EINSUM_H
#define DP_GEN_EINSUM_H

#include <stdint.h>

#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size limits of generated graphs (far below DP_GRAPH_MAX_ELEMS, so that a too large request
 * fails at once with DP_EINVAL instead of exhausting memory: a generated op costs about 200
 * bytes, an edge 16). */
#define DP_GEN_MAX_OPS (1 << 24)
#define DP_GEN_MAX_EDGES (1 << 26)

typedef struct dp_gen_einsum dp_gen_einsum;

/* Start a program for graph `name` with elements of dtype_bytes bytes (4 for fp32). */
dp_gen_einsum *dp_gen_einsum_alloc(const char *name, int dtype_bytes);
/* Free the program and the tensors and strings it holds (a graph it built is its own). NULL is a
 * no-op. */
void dp_gen_einsum_free(dp_gen_einsum *e);

/* Declare label (a letter a-z or A-Z) with its size (>= 1) and default split (1..size).
 * Returns 0, or -1 (sticky error) on a bad label, size or split, or a redeclaration. */
int dp_gen_einsum_dim(dp_gen_einsum *e, char label, int64_t size, int split);

/* An external tensor (not an op) with dims given by labels ("bsd"). Returns its tensor id. */
int dp_gen_einsum_input(dp_gen_einsum *e, const char *name, const char *labels);

/* A trainable external tensor (a weight): as dp_gen_einsum_input, and the backward pass gives
 * it a gradient and an update. Returns its tensor id, or -1. */
int dp_gen_einsum_param(dp_gen_einsum *e, const char *name, const char *labels);

/* One einsum op. spec is "in1,in2,...->out" over declared labels; n_in inputs (tensor ids) in
 * spec order. splits overrides default splits of this op's labels: NULL or "" for none, else
 * pairs label+count such as "j1" or "t1 d2" (spaces optional). flops_per_point as above.
 * name must be unique among ops (block ops get "name[i,j,..]"). Returns the output tensor id,
 * or -1. An input's dims must have the sizes of the labels naming them in spec (a tensor may
 * be read under another label of the same size, e.g. keys' "s" as "t"). Every output label must
 * appear in an input. */
int dp_gen_einsum_op(dp_gen_einsum *e, const char *name, const char *kind, const char *spec, double flops_per_point,
              const char *splits, int n_in, const int *inputs);

/* Optimizers of the parameter update (FLOPs per element above). */
typedef enum { DP_GEN_OPT_SGD = 0, DP_GEN_OPT_ADAM = 1 } dp_gen_optimizer;

/* Append the backward pass and the parameter updates: y is the tensor the loss was computed
 * from (an op's output) and dy the tensor holding dL/dy (labels and sizes of y's, produced by
 * the caller's loss ops, which are declared after y and are not differentiated). Ops declared
 * after this call are not differentiated either. Call at most once. Returns 0, or -1 (sticky
 * error: y not an op's output, dy's dims not y's, a kind without a rule above, a second call). */
int dp_gen_einsum_backward(dp_gen_einsum *e, int y, int dy, dp_gen_optimizer optimizer);

/* Build the graph (consumes nothing; free e afterwards). NULL with err filled on the first
 * recorded fault (DP_EINVAL naming the op and the problem) or on a builder error. */
dp_graph *dp_gen_einsum_finish(dp_gen_einsum *e, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
