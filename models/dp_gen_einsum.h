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
void dp_gen_einsum_free(dp_gen_einsum *e);

/* Declare label (a letter a-z or A-Z) with its size (>= 1) and default split (1..size).
 * Returns 0, or -1 (sticky error) on a bad label, size or split, or a redeclaration. */
int dp_gen_einsum_dim(dp_gen_einsum *e, char label, int64_t size, int split);

/* An external tensor (not an op) with dims given by labels ("bsd"). Returns its tensor id. */
int dp_gen_einsum_input(dp_gen_einsum *e, const char *name, const char *labels);

/* One einsum op. spec is "in1,in2,...->out" over declared labels; n_in inputs (tensor ids) in
 * spec order. splits overrides default splits of this op's labels: NULL or "" for none, else
 * pairs label+count such as "j1" or "t1 d2" (spaces optional). flops_per_point as above.
 * name must be unique among ops (block ops get "name[i,j,..]"). Returns the output tensor id,
 * or -1. An input's dims must have the sizes of the labels naming them in spec (a tensor may
 * be read under another label of the same size, e.g. keys' "s" as "t"). Every output label must
 * appear in an input. */
int dp_gen_einsum_op(dp_gen_einsum *e, const char *name, const char *kind, const char *spec, double flops_per_point,
              const char *splits, int n_in, const int *inputs);

/* Build the graph (consumes nothing; free e afterwards). NULL with err filled on the first
 * recorded fault (DP_EINVAL naming the op and the problem) or on a builder error. */
dp_graph *dp_gen_einsum_finish(dp_gen_einsum *e, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
