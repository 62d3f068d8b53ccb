/* test_gen.c: the workload generators (models/dp_gen.h, models/dp_gen_einsum.h): op, edge and
 * FLOP counts against hand calculations for small dims, the defaults against the paper's sizes,
 * the random DAG's structure and determinism, and critical-path placement + simulation on every
 * default graph. */
#include "dp_test.h"

#include <math.h>
#include <stdarg.h>

#include <gsl/gsl_rng.h>

#include "dp_cost.h"
#include "dp_gen.h"
#include "dp_gen_einsum.h"
#include "dp_place.h"
#include "dp_sim.h"

static int count_kind(const dp_graph *g, const char *kind)
{
    int n = 0;
    for (int v = 0; v < g->n_ops; v++) n += strcmp(g->op_kind[v], kind) == 0;
    return n;
}

static double total_edge(const dp_graph *g)
{
    double s = 0;
    for (int e = 0; e < g->n_edges; e++) s += g->edge_size[e];
    return s;
}

/* ---- ChainMM ---- */

START_TEST(chainmm_3d_2x2_hand)
{
    /* M1 M2 M3, 4 x 4, 2 x 2 blocks of 2 x 2: per product 8 block products (2*2^3 = 16 FLOPs
     * each) and 4 reductions of 2 partials (2*2 = 4 adds each): 128 + 16 = 144 FLOPs, 12 ops.
     * Edges: product 1 reads inputs only: 8 partial -> reduction edges; product 2: each block
     * product reads one block of the first result (8) + 8 partial -> reduction edges. */
    dp_gen_chainmm_opts o;
    dp_gen_chainmm_defaults(&o);
    o.matrices = 3; o.n = 4; o.blocks = 2; o.three_d = 1;
    dp_error err;
    dp_graph *g = dp_gen_chainmm(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 24);
    ck_assert_int_eq(g->n_edges, 24);
    ck_assert_int_eq(count_kind(g, "matmul"), 16);
    ck_assert_int_eq(count_kind(g, "reduce"), 8);
    ck_assert_double_eq(dp_graph_total_work(g), 288);
    ck_assert_double_eq(total_edge(g), 24 * 16); /* every block is 2 x 2 fp32 */
    ck_assert_int_eq(g->n_sources, 8);
    ck_assert_int_eq(g->n_sinks, 4);
    int v = dp_graph_find_op(g, "mm1[a1,c0,b1]");
    ck_assert_int_ge(v, 0);
    ck_assert_str_eq(g->op_einsum[v], "ab,bc->ac");
    ck_assert_str_eq(g->op_type[v], "einsummable");
    ck_assert_int_eq(g->op_ndim[v], 2);
    ck_assert_int_eq(g->op_shape[(size_t)v * DP_GRAPH_MAX_DIMS], 2);
    int r = dp_graph_find_op(g, "mm2.red[a0,d1]");
    ck_assert_int_ge(r, 0);
    ck_assert_str_eq(g->op_type[r], "formation");
    ck_assert_str_eq(g->op_einsum[r], "ad+ad->ad");
    ck_assert_int_eq(g->pred_ptr[r + 1] - g->pred_ptr[r], 2);
    ck_assert_double_eq(g->work[r], 4);
    dp_graph_free(g);
}
END_TEST

START_TEST(chainmm_2d_panels)
{
    /* 2D: the contraction is whole, so product 2's output block (i, k) reads the row panel
     * (i, 0), (i, 1) of the first result: 2 edges of 16 bytes each. 4 ops per product. */
    dp_gen_chainmm_opts o;
    dp_gen_chainmm_defaults(&o);
    o.matrices = 3; o.n = 4; o.blocks = 2; o.three_d = 0;
    dp_error err;
    dp_graph *g = dp_gen_chainmm(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 8);
    ck_assert_int_eq(g->n_edges, 8);
    ck_assert_double_eq(dp_graph_total_work(g), 256);
    int v = dp_graph_find_op(g, "mm2[a1,d0]");
    ck_assert_int_ge(v, 0);
    ck_assert_int_eq(g->pred_ptr[v + 1] - g->pred_ptr[v], 2);
    for (int k = g->pred_ptr[v]; k < g->pred_ptr[v + 1]; k++) {
        int e = g->pred_edge[k];
        ck_assert_double_eq(g->edge_size[e], 16);
        ck_assert(strncmp(g->op_name[g->edge_src[e]], "mm1[a1,", 7) == 0);
    }
    dp_graph_free(g);
}
END_TEST

START_TEST(chainmm_uneven_blocks)
{
    /* n = 5 in 2 blocks: sizes 2 and 3. One product: 2 * 5^3 = 250 FLOPs in 8 block products,
     * reductions add 5 x 5 = 25 elements once: 275 FLOPs. */
    dp_gen_chainmm_opts o;
    dp_gen_chainmm_defaults(&o);
    o.matrices = 2; o.n = 5; o.blocks = 2;
    dp_error err;
    dp_graph *g = dp_gen_chainmm(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 12);
    ck_assert_int_eq(g->n_edges, 8);
    ck_assert_double_eq(dp_graph_total_work(g), 275);
    double out = 0;
    for (int v = 0; v < g->n_ops; v++) if (strcmp(g->op_kind[v], "reduce") == 0) out += g->out_size[v];
    ck_assert_double_eq(out, 25 * 4);
    dp_graph_free(g);
}
END_TEST

START_TEST(chainmm_default_size)
{
    /* 7 matrices of 20000^2 in 2 x 2 blocks: 6 x (8 + 4) = 72 ops (DOPPLER: 76); block products
     * of 10000^3 multiply-adds like DOPPLER's (1e12 there, 2e12 FLOPs here). */
    dp_gen_chainmm_opts o;
    dp_gen_chainmm_defaults(&o);
    dp_error err;
    dp_graph *g = dp_gen_chainmm(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 72);
    ck_assert_int_eq(g->n_edges, 88);
    ck_assert(abs(g->n_ops - 76) <= 0.2 * 76);
    ck_assert_double_eq_tol(dp_graph_total_work(g), 6 * (2 * 8e12 + 4e8), 1e3);
    ck_assert_double_eq(g->work[0], 2e12);
    dp_graph_free(g);
}
END_TEST

/* ---- FFNN ---- */

START_TEST(ffnn_hand)
{
    /* 2 layers, batch 4, dims 4, 2 x 2 blocks. Per layer: 8 block products (2*2*2*2 = 16 FLOPs),
     * 4 reductions (4 adds), 4 bias adds (4), 4 ReLUs (4): 20 ops, 128 + 16 + 16 + 16 = 176 FLOPs.
     * Edges: layer 1: 8 (partials -> reductions) + 4 + 4; layer 2: + 8 (products read ReLU
     * blocks) = 24. */
    dp_gen_ffnn_opts o;
    dp_gen_ffnn_defaults(&o);
    o.layers = 2; o.batch = 4; o.in = o.hidden = o.out = 4; o.batch_blocks = 2; o.feature_blocks = 2;
    dp_error err;
    dp_graph *g = dp_gen_ffnn(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 40);
    ck_assert_int_eq(g->n_edges, 40);
    ck_assert_double_eq(dp_graph_total_work(g), 352);
    ck_assert_int_eq(count_kind(g, "matmul"), 16);
    ck_assert_int_eq(count_kind(g, "relu"), 8);
    ck_assert_int_eq(count_kind(g, "add"), 8);
    ck_assert_int_eq(count_kind(g, "reduce"), 8);
    ck_assert_int_eq(g->n_sinks, 4);
    dp_graph_free(g);
}
END_TEST

START_TEST(ffnn_default_size)
{
    dp_gen_ffnn_opts o;
    dp_gen_ffnn_defaults(&o);
    dp_error err;
    dp_graph *g = dp_gen_ffnn(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 168);
    ck_assert_int_eq(g->n_edges, 208);
    ck_assert(abs(g->n_ops - 180) <= 0.2 * 180);
    /* per layer 2*8192*16384^2 + (3 + 1 + 1) x 8192 x 16384 */
    ck_assert_double_eq(dp_graph_total_work(g), 3 * (2.0 * 8192 * 16384 * 16384 + 5.0 * 8192 * 16384));
    ck_assert_double_eq(g->work[0], 2.0 * 4096 * 4096 * 4096);
    dp_graph_free(g);
}
END_TEST

/* ---- Llama ---- */

static void small_llama(dp_gen_llama_opts *o, int layer)
{
    dp_gen_llama_defaults(o, layer);
    o->batch = 1; o->seq = 4; o->hidden = 8; o->heads = 2; o->ffn = 8; o->vocab = 16;
    o->tp = 2; o->hidden_blocks = 2;
}

START_TEST(llama_block_hand)
{
    /* B 1, S 4, D 8, H 2 (E 4), F 8, tp 2, hidden 2 blocks.
     * ops: q/k/v 3 x (2x2 partials + 2 reductions) = 18; rope 2 + 2; scores 2; softmax 2;
     * attn_v 2; o_proj 4 + 2; gate, up 2 x (4 + 2); silu 2; mul 2; down 4 + 2: 56.
     * FLOPs: q/k/v 3 x 2SDD = 1536, + 3 x 32 reduction adds; rope 2 x 3 x 32 = 192;
     * scores 2BHSSE = 256; softmax 5BHSS = 160; attn_v 256; o_proj 2SDD = 512 + 32;
     * gate, up 2 x 2SDF = 1024 + 2 x 32; silu 4SF = 128; mul 32; down 512 + 32: 4832.
     * edges: q/k/v reductions 3 x 4; rope 2 x 2; scores 2 x 2; softmax 2; attn_v 2 x 2;
     * o_proj 4 + 4; gate, up 2 x (4 + 4); silu 2; mul 4; down 4 + 4: 64. */
    dp_gen_llama_opts o;
    small_llama(&o, 0);
    dp_error err;
    dp_graph *g = dp_gen_llama(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 56);
    ck_assert_int_eq(g->n_edges, 64);
    ck_assert_double_eq(dp_graph_total_work(g), 4832);
    ck_assert_int_eq(count_kind(g, "softmax"), 2);
    ck_assert_int_eq(count_kind(g, "rope"), 4);
    /* the scores block of head group 1 reads rope_q and rope_k of that group, 4 x 4 x 4 bytes each */
    int v = dp_graph_find_op(g, "scores[h1]");
    ck_assert_int_ge(v, 0);
    ck_assert_int_eq(g->pred_ptr[v + 1] - g->pred_ptr[v], 2);
    ck_assert_double_eq(g->edge_size[g->pred_edge[g->pred_ptr[v]]], 64);
    ck_assert_double_eq(g->out_size[v], 1 * 1 * 4 * 4 * 4);
    dp_graph_free(g);

    o.softmax_split = 1; /* max, exp, sum, divide: 4 ops per head group instead of 1 */
    g = dp_gen_llama(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 62);
    /* max S*S + exp 2SS + sum SS + div SS = 5 FLOPs per score, as the fused op */
    ck_assert_double_eq(dp_graph_total_work(g), 4832);
    dp_graph_free(g);
}
END_TEST

START_TEST(llama_layer_hand)
{
    /* The block plus: three RMSNorms (2 sum-of-squares partials + 1 reduction + 2 scalings:
     * 2SD + S adds + 3SD = 64 + 4 + 96 = 164 FLOPs, 5 ops each), two residual adds (2 ops,
     * 32 FLOPs each), vocabulary projection (4 partials + 2 reductions, 2SDV + SV = 1088):
     * 56 + 15 + 4 + 6 = 81 ops, 4832 + 492 + 64 + 1088 = 6476 FLOPs. Edges: the block's 64,
     * + 12 (q/k/v partials now read the norm), norms 4 + 8 + 8, residuals 2 + 4, lm_head 8: 110. */
    dp_gen_llama_opts o;
    small_llama(&o, 1);
    dp_error err;
    dp_graph *g = dp_gen_llama(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 81);
    ck_assert_int_eq(g->n_edges, 110);
    ck_assert_double_eq(dp_graph_total_work(g), 6476);
    ck_assert_int_eq(count_kind(g, "rmsnorm"), 6);
    ck_assert_int_eq(g->n_sinks, 2);
    dp_graph_free(g);
}
END_TEST

START_TEST(llama_default_sizes)
{
    /* the paper's graphs: block 182, layer 229, 8-way block 302, 8-way layer 367 ops */
    static const struct { int layer, tp, ops, paper; } c[] = {
        {0, 4, 168, 182}, {1, 4, 223, 229}, {0, 8, 328, 302}, {1, 8, 403, 367}};
    for (int i = 0; i < 4; i++) {
        dp_gen_llama_opts o;
        dp_gen_llama_defaults(&o, c[i].layer);
        o.tp = c[i].tp;
        dp_error err;
        dp_graph *g = dp_gen_llama(&o, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        ck_assert_int_eq(g->n_ops, c[i].ops);
        ck_assert(abs(g->n_ops - c[i].paper) <= 0.2 * c[i].paper);
        if (!c[i].layer) {
            /* Llama-7B block, 4096 tokens: q/k/v/o 4 x 2*4096^3, scores and attn_v
             * 2 x 2*32*4096^2*128, FFN 3 x 2*4096^2*11008, plus the small ops */
            double big = 4 * 2.0 * 4096 * 4096 * 4096 + 2 * 2.0 * 32 * 4096.0 * 4096 * 128 + 3 * 2.0 * 4096 * 4096 * 11008;
            ck_assert(dp_graph_total_work(g) > big && dp_graph_total_work(g) < 1.01 * big);
        }
        dp_graph_free(g);
    }
}
END_TEST

START_TEST(llama_layers_stacked)
{
    /* Three stacked small layers: the single layer's 81 ops, 6476 FLOPs, minus the final norm
     * (5 ops, 164 FLOPs) and vocabulary projection (6 ops, 1088 FLOPs) is 70 ops and 5224 FLOPs
     * per layer: 81 + 2 x 70 = 221 ops, 6476 + 2 x 5224 = 16924 FLOPs; still two sinks (the
     * projection's reductions), and layer 2's attention norm reads layer 1's residual. */
    dp_gen_llama_opts o;
    small_llama(&o, 1);
    o.layers = 3;
    dp_error err;
    dp_graph *g = dp_gen_llama(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 221);
    ck_assert_double_eq(dp_graph_total_work(g), 16924);
    ck_assert_int_eq(g->n_sinks, 2);
    ck_assert_int_eq(count_kind(g, "rmsnorm"), 2 * (3 * 2 + 1));
    ck_assert(strstr(g->name, "_L3") != NULL);
    int res = -1, norm = -1;
    for (int v = 0; v < g->n_ops; v++) {
        if (strncmp(g->op_name[v], "l1.residual2[", 13) == 0) res = v;
        if (strncmp(g->op_name[v], "l2.attn_norm.sumsq[", 19) == 0) norm = v;
    }
    ck_assert(res >= 0 && norm >= 0);
    int found = 0;
    for (int k = g->pred_ptr[norm]; k < g->pred_ptr[norm + 1]; k++)
        if (g->edge_src[g->pred_edge[k]] == res) found = 1;
    ck_assert(found);
    dp_graph_free(g);
    /* a block does not stack */
    small_llama(&o, 0);
    o.layers = 2;
    ck_assert(dp_gen_llama(&o, &err) == NULL);
    ck_assert(strstr(err.msg, "layers") != NULL);
}
END_TEST

START_TEST(llama_invalid)
{
    dp_gen_llama_opts o;
    dp_gen_llama_defaults(&o, 0);
    o.heads = 30; /* 4096 is not a multiple of 30 */
    dp_error err;
    ck_assert(dp_gen_llama(&o, &err) == NULL);
    ck_assert(strstr(err.msg, "multiple of heads") != NULL);
    dp_gen_llama_defaults(&o, 0);
    o.tp = 64; /* more blocks than heads */
    ck_assert(dp_gen_llama(&o, &err) == NULL);
    ck_assert(strstr(err.msg, "tp") != NULL);
}
END_TEST

/* ---- the einsum machinery ---- */

START_TEST(einsum_errors)
{
    dp_error err;
    dp_gen_einsum *e = dp_gen_einsum_alloc("t", 4);
    ck_assert_int_eq(dp_gen_einsum_dim(e, 'i', 4, 8), -1); /* split beyond the size */
    ck_assert(dp_gen_einsum_finish(e, &err) == NULL);
    ck_assert(strstr(err.msg, "split must be in 1..4") != NULL);
    dp_gen_einsum_free(e);

    e = dp_gen_einsum_alloc("t", 4);
    dp_gen_einsum_dim(e, 'i', 4, 2);
    dp_gen_einsum_dim(e, 'j', 6, 2);
    int a = dp_gen_einsum_input(e, "A", "ij");
    int in[2] = {a, a};
    ck_assert_int_eq(dp_gen_einsum_op(e, "bad", "matmul", "ij,ij->ik", 2, NULL, 2, in), -1); /* k undeclared */
    ck_assert(dp_gen_einsum_finish(e, &err) == NULL);
    ck_assert(strstr(err.msg, "op bad") != NULL);
    dp_gen_einsum_free(e);

    e = dp_gen_einsum_alloc("t", 4);
    dp_gen_einsum_dim(e, 'i', 4, 2);
    dp_gen_einsum_dim(e, 'j', 6, 2);
    a = dp_gen_einsum_input(e, "A", "ij");
    ck_assert_int_eq(dp_gen_einsum_op(e, "sz", "copy", "ji->ji", 1, NULL, 1, &a), -1); /* sizes differ */
    ck_assert(dp_gen_einsum_finish(e, &err) == NULL);
    ck_assert(strstr(err.msg, "has size 4, label 'j' has 6") != NULL);
    dp_gen_einsum_free(e);
}
END_TEST

START_TEST(einsum_same_block_twice)
{
    /* x * x reads the same block twice: one edge, the bytes once */
    dp_error err;
    dp_gen_einsum *e = dp_gen_einsum_alloc("t", 4);
    dp_gen_einsum_dim(e, 'i', 8, 2);
    int x = dp_gen_einsum_input(e, "x", "i");
    int y = dp_gen_einsum_op(e, "neg", "neg", "i->i", 1, NULL, 1, &x);
    int in[2] = {y, y};
    dp_gen_einsum_op(e, "sq", "mul", "i,i->i", 1, NULL, 2, in);
    dp_graph *g = dp_gen_einsum_finish(e, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 4);
    ck_assert_int_eq(g->n_edges, 2);
    ck_assert_double_eq(g->edge_size[0], 16);
    dp_graph_free(g);
    dp_gen_einsum_free(e);
}
END_TEST

/* ---- random DAG ---- */

START_TEST(random_structure)
{
    dp_gen_random_opts o;
    dp_gen_random_defaults(&o);
    o.n = 500; o.seed = 7; o.ccr = 2.5;
    dp_error err;
    dp_graph *a = dp_gen_random(&o, &err);
    ck_assert_msg(a != NULL, "%s", err.msg);
    dp_graph *b = dp_gen_random(&o, &err);
    ck_assert_int_eq(a->n_ops, 500);
    ck_assert_int_eq(a->n_edges, b->n_edges);
    ck_assert_int_eq(a->n_repeated_edges, 0);
    for (int e = 0; e < a->n_edges; e++) {
        ck_assert_int_eq(a->edge_src[e], b->edge_src[e]);
        ck_assert_int_eq(a->edge_dst[e], b->edge_dst[e]);
        ck_assert_int_lt(a->edge_src[e], a->edge_dst[e]); /* levels are numbered in order */
        ck_assert_double_eq(a->edge_size[e], 2.5 * a->work[a->edge_src[e]]);
    }
    for (int v = 0; v < a->n_ops; v++) {
        ck_assert(a->work[v] >= 1 && a->work[v] <= 100 && a->work[v] == floor(a->work[v]));
        ck_assert_double_eq(a->work[v], b->work[v]);
    }
    ck_assert_int_eq(a->cost_kind, DP_GRAPH_COST_TIME);
    dp_graph_free(b);
    o.seed = 8;
    b = dp_gen_random(&o, &err);
    int same = a->n_edges == b->n_edges;
    for (int v = 0; v < a->n_ops && same; v++) same = a->work[v] == b->work[v];
    ck_assert(!same);
    dp_graph_free(a);
    dp_graph_free(b);
}
END_TEST

START_TEST(random_shapes)
{
    dp_gen_random_opts o;
    dp_gen_random_defaults(&o);
    dp_error err;
    /* fat 0: one task per level, one parent each: a chain */
    o.n = 50; o.fat = 0;
    dp_graph *g = dp_gen_random(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_edges, 49);
    ck_assert_int_eq(g->n_sources, 1);
    ck_assert_int_eq(g->n_sinks, 1);
    dp_graph_free(g);
    /* fat 1, regular 1: all n tasks in one level: no edges */
    o.fat = 1; o.regular = 1;
    g = dp_gen_random(&o, &err);
    ck_assert_int_eq(g->n_edges, 0);
    dp_graph_free(g);
    /* regular 1: levels of floor(40^0.5) = 6 tasks (6 x 6 + 4); jump 1 links consecutive
     * levels only, jump 3 spans up to 3 levels */
    o.n = 40; o.fat = 0.5; o.density = 1;
    g = dp_gen_random(&o, &err);
    ck_assert_int_eq(g->n_sources, 6);
    for (int e = 0; e < g->n_edges; e++) ck_assert_int_eq(g->edge_dst[e] / 6 - g->edge_src[e] / 6, 1);
    dp_graph_free(g);
    o.jump = 3;
    g = dp_gen_random(&o, &err);
    int longer = 0;
    for (int e = 0; e < g->n_edges; e++) {
        int span = g->edge_dst[e] / 6 - g->edge_src[e] / 6;
        ck_assert(span >= 1 && span <= 3);
        longer += span > 1;
    }
    ck_assert_int_gt(longer, 0);
    dp_graph_free(g);
    o.jump = 0;
    ck_assert(dp_gen_random(&o, &err) == NULL);
    ck_assert(strstr(err.msg, "jump") != NULL);
}
END_TEST

/* ---- by name ---- */

START_TEST(by_name)
{
    dp_error err;
    const char *k[] = {"matrices", "n", "blocks", "partition", "dtype"};
    const char *v[] = {"3", "4", "2", "2d", "fp16"};
    dp_graph *g = dp_gen_by_name("chainmm", 5, k, v, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 8);
    ck_assert_double_eq(g->out_size[0], 2 * 2 * 2); /* 2 x 2 block of fp16 */
    dp_graph_free(g);
    ck_assert(dp_gen_by_name("nope", 0, NULL, NULL, &err) == NULL);
    ck_assert(strstr(err.msg, "known: chainmm, ffnn, llama-block, llama-layer, random") != NULL);
    const char *bk[] = {"blocksize"}, *bv[] = {"2"};
    ck_assert(dp_gen_by_name("chainmm", 1, bk, bv, &err) == NULL);
    ck_assert(strstr(err.msg, "unknown parameter --blocksize") != NULL);
    const char *ck[] = {"partition"}, *cv[] = {"4d"};
    ck_assert(dp_gen_by_name("chainmm", 1, ck, cv, &err) == NULL);
    ck_assert(strstr(err.msg, "--partition: expected one of") != NULL);
    const char *nk[] = {"n"}, *nv[] = {"12x"};
    ck_assert(dp_gen_by_name("random", 1, nk, nv, &err) == NULL);
    ck_assert(strstr(err.msg, "--n: expected an integer in 1..") != NULL);
    const char *lk[] = {"blocks", "n"}, *lv[] = {"400", "400"}; /* 6 x 400^3 block products */
    ck_assert(dp_gen_by_name("chainmm", 2, lk, lv, &err) == NULL);
    ck_assert(strstr(err.msg, "the generators' limit") != NULL);
    const char *tk[] = {"tp"}, *tv[] = {"8"};
    g = dp_gen_by_name("llama-layer", 1, tk, tv, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 403);
    dp_graph_free(g);
    char buf[32];
    const dp_gen_model *m = dp_gen_find("chainmm");
    dp_gen_param_default(m, &m->params[3], buf, sizeof buf);
    ck_assert_str_eq(buf, "3d");
}
END_TEST


/* ---- training graphs (--training: dp_gen_einsum_backward) ---- */

/* the edge u -> v's bytes, or -1 when there is none */
static double edge_bytes(const dp_graph *g, int u, int v)
{
    for (int k = g->succ_ptr[u]; k < g->succ_ptr[u + 1]; k++)
        if (g->edge_dst[k] == v) return g->edge_size[k];
    return -1;
}

static int op_of(const dp_graph *g, const char *name)
{
    int v = dp_graph_find_op(g, name);
    ck_assert_msg(v >= 0, "no op %s", name);
    return v;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

START_TEST(chainmm_training_hand)
{
    /* X = M1 M2, n = 4, one block: forward mm1 2n^3 = 128 FLOPs; the loss's gradient dX = X - T
     * (16 elements, 1 FLOP each); dM1 = dX M2^T and dM2 = M1^T dX, 128 FLOPs each (the two
     * transposed products); the Adam updates of M1 and M2, 12 x 16 each. Every op's output is
     * a 4 x 4 fp32 block (64 bytes). Edges: mm1 -> loss.grad (X), loss.grad -> both gradients
     * (dX), each gradient -> its update; M1, M2 and T are inputs (no edges). */
    dp_gen_chainmm_opts o;
    dp_gen_chainmm_defaults(&o);
    o.matrices = 2; o.n = 4; o.blocks = 1; o.training = 1;
    dp_error err;
    dp_graph *g = dp_gen_chainmm(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_str_eq(g->name, "chainmm_k2_n4_p1_3d_train_adam");
    ck_assert_int_eq(g->n_ops, 6);
    ck_assert_int_eq(g->n_edges, 5);
    int mm = op_of(g, "mm1"), loss = op_of(g, "loss.grad"), d1 = op_of(g, "mm1.grad0"), d2 = op_of(g, "mm1.grad1");
    int u1 = op_of(g, "M1.update"), u2 = op_of(g, "M2.update");
    ck_assert_int_eq(mm, 0); /* the forward first, unchanged */
    ck_assert_str_eq(g->op_einsum[d1], "ac,bc->ab");
    ck_assert_str_eq(g->op_einsum[d2], "ac,ab->bc"); /* dY first, then the other inputs */
    ck_assert_str_eq(g->op_kind[d1], "matmul");
    ck_assert_str_eq(g->op_kind[u1], "adam");
    ck_assert_str_eq(g->op_kind[loss], "mse_grad");
    ck_assert_double_eq(g->work[mm], 128);
    ck_assert_double_eq(g->work[loss], 16);
    ck_assert_double_eq(g->work[d1], 128);
    ck_assert_double_eq(g->work[d2], 128);
    ck_assert_double_eq(g->work[u1], 192);
    ck_assert_double_eq(g->work[u2], 192);
    ck_assert_double_eq(dp_graph_total_work(g), 784);
    for (int v = 0; v < g->n_ops; v++) ck_assert_double_eq(g->out_size[v], 64);
    ck_assert_double_eq(edge_bytes(g, mm, loss), 64);
    ck_assert_double_eq(edge_bytes(g, loss, d1), 64);
    ck_assert_double_eq(edge_bytes(g, loss, d2), 64);
    ck_assert_double_eq(edge_bytes(g, d1, u1), 64);
    ck_assert_double_eq(edge_bytes(g, d2, u2), 64);
    dp_graph_free(g);

    /* SGD: 2 FLOPs per weight element */
    o.optimizer = DP_GEN_OPT_SGD;
    g = dp_gen_chainmm(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_str_eq(g->op_kind[op_of(g, "M2.update")], "sgd");
    ck_assert_double_eq(dp_graph_total_work(g), 128 + 16 + 256 + 2 * 32);
    dp_graph_free(g);
}
END_TEST

START_TEST(chainmm_training_blocked)
{
    /* M1 M2 M3, 4 x 4 in 2 x 2 blocks (3D): the backward's block products are twice the
     * forward's (two transposed products per product, each 8 blocks of 2 x 2^3 = 16 FLOPs);
     * each of the 4 gradients has 4 reductions of 2 partials, as the forward's products have;
     * each weight gets one update per block (4), reading every contribution to it. */
    dp_gen_chainmm_opts o;
    dp_gen_chainmm_defaults(&o);
    o.matrices = 3; o.n = 4; o.blocks = 2; o.three_d = 1;
    dp_error err;
    dp_graph *f = dp_gen_chainmm(&o, &err);
    o.training = 1;
    dp_graph *g = dp_gen_chainmm(&o, &err);
    ck_assert_msg(f != NULL && g != NULL, "%s", err.msg);
    double fwd = 0, bwd = 0;
    int n_bwd = 0, n_red = 0, n_upd = 0;
    for (int v = 0; v < g->n_ops; v++) {
        if (strcmp(g->op_kind[v], "matmul") == 0) {
            if (strstr(g->op_name[v], ".grad")) { bwd += g->work[v]; n_bwd++; }
            else fwd += g->work[v];
        }
        if (strcmp(g->op_kind[v], "reduce") == 0 && strstr(g->op_name[v], ".grad")) n_red++;
        if (ends_with(g->op_name[v], ".update") || strstr(g->op_name[v], ".update[")) {
            n_upd++;
            ck_assert_str_eq(g->op_kind[v], "adam");
            ck_assert_double_eq(g->work[v], 12 * 4);
        }
    }
    ck_assert_double_eq(fwd, 256);
    ck_assert_double_eq(bwd, 512);
    ck_assert_int_eq(n_bwd, 4 * 8);
    ck_assert_int_eq(n_red, 4 * 4);
    ck_assert_int_eq(n_upd, 3 * 4);
    /* 24 forward ops, 4 loss blocks, 4 x 12 gradient ops, 12 updates */
    ck_assert_int_eq(g->n_ops, 24 + 4 + 48 + 12);
    /* the forward is unchanged: same first ops and the same edges among them */
    int same = 0;
    for (int v = 0; v < f->n_ops; v++) {
        ck_assert_str_eq(g->op_name[v], f->op_name[v]);
        ck_assert_double_eq(g->work[v], f->work[v]);
        ck_assert_double_eq(g->out_size[v], f->out_size[v]);
    }
    for (int k = 0; k < g->n_edges; k++) same += g->edge_src[k] < f->n_ops && g->edge_dst[k] < f->n_ops;
    ck_assert_int_eq(same, f->n_edges);
    /* M2's block [b0,c1] update reads the reduction of its gradient's block */
    int u = op_of(g, "M2.update[b0,c1]");
    ck_assert_int_eq(g->pred_ptr[u + 1] - g->pred_ptr[u], 1);
    ck_assert_str_eq(g->op_name[g->edge_src[g->pred_edge[g->pred_ptr[u]]]], "mm1.grad1.red[b0,c1]");
    dp_graph_free(f);
    dp_graph_free(g);
}
END_TEST

START_TEST(ffnn_training_hand)
{
    /* 2 layers, batch 4, all dims 4, one block: forward 3 ops per layer (matmul 128, bias 16,
     * ReLU 16 FLOPs). Backward: the loss's gradient (16), per layer one ReLU gradient (16), one
     * bias gradient (the sum over the batch, 16) and the weight gradient (128), plus the input
     * gradient (128) of layer 2 only (X needs none); the bias add passes dY through without an
     * op. Updates of W1, W2 (Adam 12 x 16) and bias1, bias2 (12 x 4). */
    dp_gen_ffnn_opts o;
    dp_gen_ffnn_defaults(&o);
    o.layers = 2; o.batch = 4; o.in = o.hidden = o.out = 4; o.batch_blocks = 1; o.feature_blocks = 1;
    o.training = 1;
    dp_error err;
    dp_graph *g = dp_gen_ffnn(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 6 + 1 + 7 + 4);
    ck_assert_int_eq(g->n_edges, 20);
    ck_assert_int_eq(count_kind(g, "relu_grad"), 2);
    ck_assert_int_eq(count_kind(g, "add_grad"), 2);
    ck_assert_int_eq(count_kind(g, "matmul"), 2 + 3);
    ck_assert_int_eq(count_kind(g, "adam"), 4);
    ck_assert_double_eq(dp_graph_total_work(g), 320 + 16 + 2 * 16 + 2 * 16 + 3 * 128 + 2 * 192 + 2 * 48);
    int b2 = op_of(g, "l2.bias.grad1");
    ck_assert_str_eq(g->op_einsum[b2], "be->e");
    ck_assert_double_eq(g->out_size[b2], 16);
    /* the ReLU's gradient reads dY (the loss's) and its output (the mask) */
    int r2 = op_of(g, "l2.relu.grad0");
    ck_assert_double_eq(edge_bytes(g, op_of(g, "loss.grad"), r2), 64);
    ck_assert_double_eq(edge_bytes(g, op_of(g, "l2.relu"), r2), 64);
    /* layer 2's input gradient feeds layer 1's ReLU gradient; layer 1's activation feeds
     * layer 2's weight gradient */
    ck_assert_double_eq(edge_bytes(g, op_of(g, "l2.matmul.grad0"), op_of(g, "l1.relu.grad0")), 64);
    ck_assert_double_eq(edge_bytes(g, op_of(g, "l1.relu"), op_of(g, "l2.matmul.grad1")), 64);
    ck_assert_int_eq(dp_graph_find_op(g, "l1.matmul.grad0"), -1);
    ck_assert_double_eq(edge_bytes(g, op_of(g, "l1.bias.grad1"), op_of(g, "bias1.update")), 16);
    dp_graph_free(g);
}
END_TEST

START_TEST(einsum_training_shared_weight)
{
    /* W used by two products (a weight shared across blocks): y = x1 W + x2 W. The add passes
     * dy to both products; W gets two contributions, summed by one grad_acc op (k - 1 = 1 FLOP
     * per element), then one update reading it. */
    dp_error err;
    dp_gen_einsum *e = dp_gen_einsum_alloc("shared", 4);
    dp_gen_einsum_dim(e, 'i', 2, 1);
    dp_gen_einsum_dim(e, 'j', 3, 1);
    dp_gen_einsum_dim(e, 'k', 5, 1);
    int x1 = dp_gen_einsum_input(e, "x1", "ij"), x2 = dp_gen_einsum_input(e, "x2", "ij");
    int w = dp_gen_einsum_param(e, "W", "jk");
    int in[2] = {x1, w};
    int y1 = dp_gen_einsum_op(e, "mm1", "matmul", "ij,jk->ik", 2, NULL, 2, in);
    in[0] = x2;
    int y2 = dp_gen_einsum_op(e, "mm2", "matmul", "ij,jk->ik", 2, NULL, 2, in);
    in[0] = y1; in[1] = y2;
    int y = dp_gen_einsum_op(e, "sum", "add", "ik,ik->ik", 1, NULL, 2, in);
    int dy = dp_gen_einsum_op(e, "dy", "mse_grad", "ik->ik", 1, NULL, 1, &y);
    ck_assert_int_eq(dp_gen_einsum_backward(e, y, dy, DP_GEN_OPT_SGD), 0);
    ck_assert_int_eq(dp_gen_einsum_backward(e, y, dy, DP_GEN_OPT_SGD), -1); /* once */
    ck_assert(dp_gen_einsum_finish(e, &err) == NULL);
    ck_assert(strstr(err.msg, "built once") != NULL);
    dp_gen_einsum_free(e);

    e = dp_gen_einsum_alloc("shared", 4);
    dp_gen_einsum_dim(e, 'i', 2, 1);
    dp_gen_einsum_dim(e, 'j', 3, 1);
    dp_gen_einsum_dim(e, 'k', 5, 1);
    x1 = dp_gen_einsum_input(e, "x1", "ij"); x2 = dp_gen_einsum_input(e, "x2", "ij");
    w = dp_gen_einsum_param(e, "W", "jk");
    in[0] = x1; in[1] = w;
    y1 = dp_gen_einsum_op(e, "mm1", "matmul", "ij,jk->ik", 2, NULL, 2, in);
    in[0] = x2;
    y2 = dp_gen_einsum_op(e, "mm2", "matmul", "ij,jk->ik", 2, NULL, 2, in);
    in[0] = y1; in[1] = y2;
    y = dp_gen_einsum_op(e, "sum", "add", "ik,ik->ik", 1, NULL, 2, in);
    dy = dp_gen_einsum_op(e, "dy", "mse_grad", "ik->ik", 1, NULL, 1, &y);
    ck_assert_int_eq(dp_gen_einsum_backward(e, y, dy, DP_GEN_OPT_SGD), 0);
    dp_graph *g = dp_gen_einsum_finish(e, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    /* mm1, mm2, sum, dy; mm1.grad1, mm2.grad1 (dW = x^T dy: 2 x 2*3*5); W.grad_acc; W.update */
    ck_assert_int_eq(g->n_ops, 8);
    int g1 = op_of(g, "mm1.grad1"), g2 = op_of(g, "mm2.grad1"), acc = op_of(g, "W.grad_acc"), up = op_of(g, "W.update");
    ck_assert_double_eq(g->work[g1], 60);
    ck_assert_double_eq(g->work[acc], 15);
    ck_assert_double_eq(g->work[up], 30);
    ck_assert_str_eq(g->op_einsum[acc], "jk,jk->jk");
    ck_assert_double_eq(edge_bytes(g, op_of(g, "dy"), g1), 40); /* dy passes through the add */
    ck_assert_double_eq(edge_bytes(g, g1, acc), 60);
    ck_assert_double_eq(edge_bytes(g, g2, acc), 60);
    ck_assert_double_eq(edge_bytes(g, acc, up), 60);
    ck_assert_int_eq(g->pred_ptr[up + 1] - g->pred_ptr[up], 1);
    ck_assert_int_eq(dp_graph_find_op(g, "mm1.grad0"), -1); /* x1 is an input */
    dp_graph_free(g);
    dp_gen_einsum_free(e);

    /* a kind without a backward rule is named */
    e = dp_gen_einsum_alloc("t", 4);
    dp_gen_einsum_dim(e, 'i', 4, 1);
    int p = dp_gen_einsum_param(e, "p", "i");
    int q = dp_gen_einsum_op(e, "odd", "cosh", "i->i", 1, NULL, 1, &p);
    int dq = dp_gen_einsum_op(e, "dq", "mse_grad", "i->i", 1, NULL, 1, &q);
    ck_assert_int_eq(dp_gen_einsum_backward(e, q, dq, DP_GEN_OPT_ADAM), -1);
    ck_assert(dp_gen_einsum_finish(e, &err) == NULL);
    ck_assert(strstr(err.msg, "op odd: kind 'cosh' has no backward rule") != NULL);
    dp_gen_einsum_free(e);
}
END_TEST

/* Properties of a training graph against its forward graph: the forward first and unchanged,
 * contraction gradients of twice the forward's FLOPs (every contraction input needs a
 * gradient: llama-layer, ChainMM), each weight block updated once, after every gradient op
 * that contributes to it. */
static void check_training(const char *model, int n, const char *const *k, const char *const *v, int all_inputs_grad)
{
    dp_error err;
    dp_graph *f = dp_gen_by_name(model, n, k, v, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    const char *k2[16], *v2[16];
    for (int i = 0; i < n; i++) { k2[i] = k[i]; v2[i] = v[i]; }
    k2[n] = "training"; v2[n] = "yes";
    dp_graph *g = dp_gen_by_name(model, n + 1, k2, v2, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_gt(g->n_ops, 2 * f->n_ops);
    for (int u = 0; u < f->n_ops; u++) {
        ck_assert_str_eq(g->op_name[u], f->op_name[u]);
        ck_assert_str_eq(g->op_kind[u], f->op_kind[u]);
        ck_assert_double_eq(g->work[u], f->work[u]);
    }
    int same = 0;
    for (int e = 0; e < g->n_edges; e++) {
        ck_assert_int_lt(g->edge_src[e], g->edge_dst[e]); /* ids in a topological order: a DAG */
        same += g->edge_dst[e] < f->n_ops;
    }
    ck_assert_int_eq(same, f->n_edges);
    double fwd = 0, bwd = 0;
    for (int u = 0; u < g->n_ops; u++) {
        if (strcmp(g->op_kind[u], "matmul") != 0) continue;
        if (u < f->n_ops) fwd += g->work[u];
        else bwd += g->work[u];
    }
    if (all_inputs_grad) ck_assert_double_eq_tol(bwd, 2 * fwd, 1e-9 * fwd);
    else ck_assert(bwd > fwd && bwd < 2 * fwd);
    /* the updates: sinks, each reading gradient ops only, and every gradient op reaches one */
    int n_upd = 0;
    for (int u = f->n_ops; u < g->n_ops; u++) {
        const char *nm = g->op_name[u];
        int upd = strstr(nm, ".update") != NULL;
        if (!upd) {
            ck_assert_msg(g->succ_ptr[u + 1] > g->succ_ptr[u] || ends_with(nm, ".grad0") || strstr(nm, ".grad0["),
                          "%s: %s is a sink and no update", model, nm);
            continue;
        }
        n_upd++;
        ck_assert_int_eq(g->succ_ptr[u + 1], g->succ_ptr[u]);
        for (int q = g->pred_ptr[u]; q < g->pred_ptr[u + 1]; q++)
        {
            const char *src = g->op_name[g->edge_src[g->pred_edge[q]]];
            ck_assert_msg(strstr(src, ".grad") != NULL, "%s: %s reads %s", model, nm, src);
        }
    }
    ck_assert_int_gt(n_upd, 0);
    /* no op of a stop-gradient (the split softmax's max) */
    ck_assert_int_eq(count_kind(g, "max_grad"), 0);
    dp_graph_free(f);
    dp_graph_free(g);
}

START_TEST(training_properties)
{
    const char *ck[] = {"matrices", "n", "blocks", "partition"}, *cv[] = {"4", "64", "4", "2d"};
    check_training("chainmm", 4, ck, cv, 1);
    const char *lk[] = {"layers", "seq", "hidden", "heads", "ffn", "vocab", "tp", "hidden-blocks", "softmax"};
    const char *lv[] = {"2", "16", "32", "4", "64", "32", "2", "2", "split"};
    check_training("llama-layer", 9, lk, lv, 1);
    const char *bk[] = {"seq", "hidden", "heads", "ffn", "tp", "hidden-blocks", "softmax"};
    const char *bv[] = {"16", "32", "4", "64", "2", "2", "split"};
    check_training("llama-block", 7, bk, bv, 0); /* x needs no gradient; a block has no vocab */
    check_training("ffnn", 0, NULL, NULL, 0);
}
END_TEST

START_TEST(training_by_name)
{
    dp_error err;
    const char *k[] = {"training", "optimizer"}, *v[] = {"maybe", "sgd"};
    ck_assert(dp_gen_by_name("ffnn", 1, k, v, &err) == NULL);
    ck_assert(strstr(err.msg, "--training: expected yes or no") != NULL);
    const char *v2[] = {"TRUE", "sgd"};
    dp_graph *g = dp_gen_by_name("ffnn", 2, k, v2, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert(ends_with(g->name, "_train_sgd"));
    dp_graph_free(g);
    const char *v3[] = {"0"};
    g = dp_gen_by_name("llama-layer", 1, k, v3, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 223); /* the forward's default size */
    dp_graph_free(g);
    char buf[32];
    const dp_gen_model *m = dp_gen_find("llama-layer");
    const dp_gen_param *p = m->params;
    while (p->name && strcmp(p->name, "training") != 0) p++;
    ck_assert(p->name != NULL);
    dp_gen_param_default(m, p, buf, sizeof buf);
    ck_assert_str_eq(buf, "no");
}
END_TEST

/* dp_gen_spec_check reads a spec as dp_gen_spec does, without generating: a sweep refuses a
 * misspelt gen: graph before any run with it (it ran them, each failing, and wrote results) */
START_TEST(spec_check)
{
    dp_error err;
    static const struct { const char *spec, *needle; } bad[] = {
        {"gen:llama-layer?tp=2&bogus=1", "gen:llama-layer?tp=2&bogus=1: llama-layer: unknown parameter --bogus"},
        {"gen:nomodel", "gen:nomodel: unknown model 'nomodel'"},
        {"gen:ffnn?layers=nan", "--layers"},
        {"gen:ffnn?optimizer=sgd", "give --training too"},
        {"gen:llama-block?vocab=5", "--vocab does not apply"},
        {"gen:chainmm?matrices", "parameter matrices needs a value (matrices=VALUE)"},
        {"gen:chainmm?=3", "NAME=VALUE"},
        {"gen:ffnn?training&training=no", "parameter --training given twice"},
        {"chainmm", "starts with gen:"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dp_error_clear(&err);
        ck_assert_int_eq(dp_gen_spec_check(bad[i].spec, &err), DP_EINVAL);
        ck_assert_msg(strstr(err.msg, bad[i].needle) != NULL, "%s: %s", bad[i].spec, err.msg);
        ck_assert(dp_gen_spec(bad[i].spec, &err) == NULL); /* the same verdict as generating */
    }
    static const char *const good[] = {"gen:chainmm", "gen:llama-layer?tp=8", "gen:ffnn?training=yes&optimizer=sgd",
                                       "gen:ffnn?&layers=2&", "gen:ffnn?",
                                       "gen:stg?n=20&method=layrpred&seed=4294967295"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(dp_gen_spec_check(good[i], &err) == DP_OK, "%s: %s", good[i], err.msg);
    /* a yes/no parameter's name alone is its yes, as graph gen's --training alone (the spec
     * refused it: a review): the same graph as training=yes */
    dp_graph *g1 = dp_gen_spec("gen:ffnn?layers=2&training", &err), *g2 = dp_gen_spec("gen:ffnn?layers=2&training=yes", &err);
    ck_assert(g1 && g2);
    ck_assert_int_eq(g1->n_ops, g2->n_ops);
    ck_assert_int_eq(g1->n_edges, g2->n_edges);
    ck_assert_str_eq(g1->name, g2->name);
    dp_graph_free(g1);
    dp_graph_free(g2);
    /* names and values only: the generator's checks across parameters are dp_gen_spec's */
    ck_assert_int_eq(dp_gen_spec_check("gen:llama-block?heads=3", &err), DP_OK);
    ck_assert(dp_gen_spec("gen:llama-block?heads=3", &err) == NULL);
}
END_TEST

/* ---- every default graph places and simulates ---- */

START_TEST(place_and_simulate_defaults)
{
    const char *models[] = {"chainmm", "ffnn", "llama-block", "llama-layer", "random"};
    for (int i = 0; i < 5; i++) {
        dp_error err;
        dp_graph *g = dp_gen_by_name(models[i], 0, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        dp_cost *c = dp_cost_uniform(g, 4, 1e13, 1.2e10, 1e-5, &err);
        ck_assert_msg(c != NULL, "%s", err.msg);
        int *a = malloc((size_t)g->n_ops * sizeof *a);
        dp_place_options po;
        dp_place_options_init(&po);
        ck_assert_int_eq(dp_place("cp", g, c, &po, a, NULL, NULL, &err), DP_OK);
        dp_sim *s = dp_sim_alloc(g, c, &err);
        ck_assert(s != NULL);
        dp_sim_result r;
        ck_assert_int_eq(dp_sim_run(s, a, &r, &err), DP_OK);
        double lb = dp_cost_lower_bound(g, c);
        ck_assert_msg(r.makespan >= lb * (1 - 1e-12), "%s: makespan %g below the bound %g", models[i], r.makespan, lb);
        ck_assert(isfinite(r.makespan) && r.makespan > 0);
        dp_sim_free(s);
        free(a);
        dp_cost_free(c);
        dp_graph_free(g);
    }
}
END_TEST


/* ---- task-graph generators (dp_gen_tasks.c) ---- */

/* every edge costs ccr x its producer's work, as the generators promise */
static void check_ccr_edges(const dp_graph *g, double ccr)
{
    ck_assert_int_eq(g->cost_kind, DP_GRAPH_COST_TIME);
    for (int e = 0; e < g->n_edges; e++) ck_assert_double_eq(g->edge_size[e], ccr * g->work[g->edge_src[e]]);
}

/* a model by name with (key, value) pairs: NULL-terminated list */
static dp_graph *gen(const char *model, dp_error *err, ...)
{
    const char *k[16], *v[16];
    int n = 0;
    va_list ap;
    va_start(ap, err);
    for (const char *key; (key = va_arg(ap, const char *)) != NULL && n < 16; n++) {
        k[n] = key;
        v[n] = va_arg(ap, const char *);
    }
    va_end(ap);
    return dp_gen_by_name(model, n, k, v, err);
}

/* the model fails with DP_EINVAL and a message holding want */
static void gen_fails(const char *model, const char *key, const char *val, const char *want)
{
    dp_error err;
    dp_graph *g = gen(model, &err, key, val, NULL);
    ck_assert_msg(g == NULL, "%s --%s %s: accepted", model, key, val);
    ck_assert_int_eq(err.code, DP_EINVAL);
    ck_assert_msg(strstr(err.msg, want) != NULL, "%s --%s %s: '%s' lacks '%s'", model, key, val, err.msg, want);
}

/* A parameter's refusal says what it takes in the words a user gives: a choice's names, not the
 * ints stored ("expected one of sgd=0|adam=1"), and an integer parameter an integer ("expected
 * a number in 1..24" of ffnn --layers nan); for every parameter of every model */
START_TEST(param_messages)
{
    dp_error err;
    gen_fails("ffnn", "optimizer", "adam2", "ffnn: --optimizer: expected one of sgd|adam, got 'adam2'");
    gen_fails("ffnn", "layers", "nan", "ffnn: --layers: expected an integer in 1..24, got 'nan'");
    gen_fails("ffnn", "layers", "2.5", "ffnn: --layers: expected an integer in 1..24, got '2.5'");
    gen_fails("layered", "alpha", "x", "layered: --alpha: expected a number in 0.05..20, got 'x'");
    for (const dp_gen_model *m = dp_gen_models(); m->name; m++)
        for (const dp_gen_param *p = m->params; p->name; p++) {
            if (p->type != DP_GEN_CHOICE && p->type != DP_GEN_INT && p->type != DP_GEN_INT64) continue;
            const char *k[] = {p->name}, *v[] = {"nan"};
            ck_assert(dp_gen_by_name(m->name, 1, k, v, &err) == NULL);
            if (p->type == DP_GEN_CHOICE) {
                ck_assert_msg(strstr(err.msg, "expected one of ") && !strchr(err.msg, '='), "%s --%s: %s", m->name, p->name, err.msg);
            } else {
                ck_assert_msg(strstr(err.msg, "expected an integer in ") != NULL, "%s --%s: %s", m->name, p->name, err.msg);
            }
        }
}
END_TEST

START_TEST(stg_methods)
{
    dp_error err;
    /* degree 0: no edge; a degree beyond n - 1 (p capped at 1): every pair i < j */
    dp_graph *g = gen("stg", &err, "n", "30", "degree", "0", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 30);
    ck_assert_int_eq(g->n_edges, 0);
    dp_graph_free(g);
    /* options a generator does not read are refused, not ignored (a review): layers of a method
     * without layers, a block's vocabulary */
    ck_assert_ptr_null(gen("stg", &err, "n", "30", "layers", "5", NULL));
    ck_assert_ptr_nonnull(strstr(err.msg, "does not apply to method sameprob"));
    ck_assert_ptr_null(gen("stg", &err, "n", "30", "layers", "5", "method", "samepred", NULL));
    g = gen("stg", &err, "n", "30", "layers", "5", "method", "layrpred", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_free(g);
    ck_assert_ptr_null(gen("llama-block", &err, "vocab", "5", NULL));
    ck_assert_ptr_nonnull(strstr(err.msg, "--vocab does not apply"));
    g = gen("llama-layer", &err, "vocab", "5", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_free(g);
    g = gen("stg", &err, "n", "30", "degree", "40", NULL);
    ck_assert_int_eq(g->n_edges, 30 * 29 / 2);
    for (int e = 0; e < g->n_edges; e++) ck_assert_int_lt(g->edge_src[e], g->edge_dst[e]);
    dp_graph_free(g);
    /* every method: edges go forward, about degree x n of them (n 3000, degree 3: 9000 +- 5%),
     * works in the STG's 1..10, ccr 2 on every edge */
    const char *methods[] = {"sameprob", "samepred", "layrprob", "layrpred"};
    for (int m = 0; m < 4; m++) {
        g = gen("stg", &err, "n", "3000", "degree", "3", "method", methods[m], "ccr", "2", NULL);
        ck_assert_msg(g != NULL, "%s", err.msg);
        ck_assert_int_eq(g->n_ops, 3000);
        ck_assert_msg(fabs(g->n_edges - 9000.0) < 450, "%s: %d edges", methods[m], g->n_edges);
        for (int e = 0; e < g->n_edges; e++) ck_assert_int_lt(g->edge_src[e], g->edge_dst[e]);
        for (int v = 0; v < g->n_ops; v++) ck_assert(g->work[v] >= 1 && g->work[v] <= 10);
        check_ccr_edges(g, 2);
        /* the predecessor methods draw 0..2 degree predecessors */
        if (m % 2 == 1)
            for (int v = 0; v < g->n_ops; v++) ck_assert_int_le(g->pred_ptr[v + 1] - g->pred_ptr[v], 6);
        dp_graph_free(g);
    }
    /* layered: no edge inside a layer. One layer: no edge at all */
    g = gen("stg", &err, "n", "50", "method", "layrprob", "layers", "1", NULL);
    ck_assert_int_eq(g->n_edges, 0);
    dp_graph_free(g);
    g = gen("stg", &err, "n", "50", "method", "layrpred", "layers", "1", NULL);
    ck_assert_int_eq(g->n_edges, 0);
    dp_graph_free(g);
    gen_fails("stg", "n", "1", "--n: expected an integer in 2..1000000");
    /* the bounds exactly: random's --n said 1..1.67772e+07 (%g), below the largest it takes, 16777216 */
    gen_fails("random", "n", "0", "--n: expected an integer in 1..16777216, got '0'");
    /* and the generators' own range checks, which a C caller meets (dp_gen_option_error: they
     * printed %g too, three copies of it) */
    {
        dp_gen_random_opts ro;
        dp_gen_random_defaults(&ro);
        ro.n = 0;
        ck_assert(dp_gen_random(&ro, &err) == NULL);
        ck_assert_str_eq(err.msg, "random: option n must be in 1..16777216");
        dp_gen_random_defaults(&ro);
        ro.ccr = -1;
        ck_assert(dp_gen_random(&ro, &err) == NULL);
        ck_assert_str_eq(err.msg, "random: option ccr must be in 0..1e+300");
        ck_assert_int_eq(dp_gen_option_error(&err, "m", "x", 0.1, 2.5e-7), DP_EINVAL);
        ck_assert_str_eq(err.msg, "m: option x must be in 0.1..2.5e-07");
    }
    gen_fails("stg", "degree", "101", "--degree");
    gen_fails("stg", "method", "fifo", "expected one of sameprob|samepred|layrprob|layrpred, got 'fifo'");
    gen_fails("stg", "layers", "101", "stg: option layers must be in 0..100");
    gen_fails("stg", "ccr", "-1", "--ccr");
    dp_gen_stg_opts o;
    dp_gen_stg_defaults(&o);
    o.min_work = 5; o.max_work = 4;
    ck_assert(dp_gen_stg(&o, &err) == NULL);
    ck_assert(strstr(err.msg, "min-work <= max-work") != NULL);
}
END_TEST

START_TEST(layered_topcuoglu)
{
    dp_error err;
    dp_graph *g = gen("layered", &err, "n", "400", "alpha", "2", "out-degree", "3", "ccr", "0.5", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 400);
    check_ccr_edges(g, 0.5);
    /* levels are ranges of ids: the sources are the first level (a prefix of the ids) and the
     * sinks the last (a suffix); edges go from one level to the next */
    for (int e = 0; e < g->n_edges; e++) ck_assert_int_lt(g->edge_src[e], g->edge_dst[e]);
    int first_level = 0;
    while (first_level < g->n_ops && g->pred_ptr[first_level + 1] == g->pred_ptr[first_level]) first_level++;
    ck_assert_int_eq(g->n_sources, first_level);
    for (int i = 0; i < g->n_sinks; i++) ck_assert_int_eq(g->sinks[i], g->n_ops - g->n_sinks + i);
    /* out-degree 1: a task of a level but the last has one child, plus one per orphan of the next
     * level it was drawn to adopt: at least n - sinks edges, and every task of the next level has a
     * parent */
    dp_graph_free(g);
    g = gen("layered", &err, "n", "300", "alpha", "0.5", "out-degree", "1", NULL);
    ck_assert_int_ge(g->n_edges, g->n_ops - g->n_sinks);
    for (int v = 0; v < g->n_ops - g->n_sinks; v++) ck_assert_int_ge(g->succ_ptr[v + 1] - g->succ_ptr[v], 1);
    dp_graph_free(g);
    /* alpha 20 on 4 tasks: one level, no edge */
    g = gen("layered", &err, "n", "4", "alpha", "20", NULL);
    ck_assert_int_eq(g->n_edges, 0);
    dp_graph_free(g);
    gen_fails("layered", "alpha", "0", "--alpha: expected a number in 0.05..20");
    gen_fails("layered", "out-degree", "0", "--out-degree");
    gen_fails("layered", "n", "0", "--n");
}
END_TEST

START_TEST(forkjoin_hand)
{
    dp_error err;
    /* fork, 2 branches of 1 task, join: 4 ops, 4 edges */
    dp_graph *g = gen("forkjoin", &err, "stages", "1", "branches", "2", "length", "1", "ccr", "3", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 4);
    ck_assert_int_eq(g->n_edges, 4);
    ck_assert_int_eq(g->n_sources, 1);
    ck_assert_int_eq(g->n_sinks, 1);
    ck_assert_int_eq(count_kind(g, "join"), 1);
    check_ccr_edges(g, 3);
    dp_graph_free(g);
    /* 1 + stages (branches length + 1) ops, stages branches (length + 1) edges */
    g = gen("forkjoin", &err, "stages", "3", "branches", "5", "length", "2", NULL);
    ck_assert_int_eq(g->n_ops, 34);
    ck_assert_int_eq(g->n_edges, 45);
    ck_assert_int_ge(dp_graph_find_op(g, "s2.b4.t1"), 0);
    dp_graph_free(g);
    gen_fails("forkjoin", "branches", "0", "--branches");
    gen_fails("forkjoin", "stages", "10001", "--stages");
    const char *k[] = {"stages", "branches", "length"}, *v[] = {"10000", "10000", "10000"};
    ck_assert(dp_gen_by_name("forkjoin", 3, k, v, &err) == NULL);
    ck_assert(strstr(err.msg, "the generators' limit") != NULL);
}
END_TEST

START_TEST(seriesparallel_shapes)
{
    dp_error err;
    dp_graph *g = gen("seriesparallel", &err, "n", "2", NULL);
    ck_assert_int_eq(g->n_ops, 2);
    ck_assert_int_eq(g->n_edges, 1);
    dp_graph_free(g);
    /* series only: a chain of n tasks */
    g = gen("seriesparallel", &err, "n", "40", "parallel", "0", NULL);
    ck_assert_int_eq(g->n_ops, 40);
    ck_assert_int_eq(g->n_edges, 39);
    ck_assert_int_eq(g->n_sources, 1);
    ck_assert_int_eq(g->n_sinks, 1);
    for (int v = 0; v < g->n_ops; v++) ck_assert_int_le(g->pred_ptr[v + 1] - g->pred_ptr[v], 1);
    dp_graph_free(g);
    /* parallel only: the first edge and n - 2 parallel paths of two edges */
    g = gen("seriesparallel", &err, "n", "40", "parallel", "1", NULL);
    ck_assert_int_eq(g->n_edges, 1 + 2 * 38);
    ck_assert_int_eq(g->n_sources, 1);
    ck_assert_int_eq(g->n_sinks, 1);
    dp_graph_free(g);
    g = gen("seriesparallel", &err, "n", "500", "parallel", "0.4", "ccr", "0.25", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_sources, 1);
    ck_assert_int_eq(g->n_sinks, 1);
    check_ccr_edges(g, 0.25);
    dp_graph_free(g);
    gen_fails("seriesparallel", "parallel", "1.5", "--parallel");
    gen_fails("seriesparallel", "n", "1", "--n");
    /* tasks numbered in a topological order, as every generator's: the sink was task 1 and half
     * the edges went from a higher id to a lower (a review); the works are those drawn before */
    const char *par[3] = {"0", "0.5", "1"};
    for (int i = 0; i < 3; i++) {
        g = gen("seriesparallel", &err, "n", "100", "parallel", par[i], NULL);
        ck_assert_msg(g != NULL, "%s", err.msg);
        for (int e = 0; e < g->n_edges; e++)
            ck_assert_msg(g->edge_src[e] < g->edge_dst[e], "parallel %s: edge %d: %d -> %d", par[i], e, g->edge_src[e],
                          g->edge_dst[e]);
        ck_assert_str_eq(g->op_name[0], "source");
        ck_assert_str_eq(g->op_name[g->n_ops - 1], "sink");
        ck_assert_double_eq(dp_graph_total_work(g), 4612); /* seed 1's draws, in any numbering */
        dp_graph_free(g);
    }
}
END_TEST

/* ffnn's documented 1..24 layers: 24 always failed (a feature dimension's label past 'z'); a
 * generator seed beyond the 32 bits mt19937 takes gave another seed's graph, or was clamped */
START_TEST(ffnn_most_layers_and_seed_range)
{
    dp_error err;
    dp_graph *g23 = gen("ffnn", &err, "layers", "23", "training", "yes", NULL), *g24 = gen("ffnn", &err, "layers", "24", "training", "yes", NULL);
    ck_assert_msg(g23 && g24, "%s", err.msg);
    dp_graph *f23 = gen("ffnn", &err, "layers", "23", NULL), *f24 = gen("ffnn", &err, "layers", "24", NULL);
    ck_assert_msg(f23 && f24, "%s", err.msg);
    ck_assert_int_eq(f24->n_ops - f23->n_ops, 56); /* a layer of the default blocks */
    ck_assert_int_gt(g24->n_ops, g23->n_ops);
    dp_graph_free(g23);
    dp_graph_free(g24);
    dp_graph_free(f23);
    dp_graph_free(f24);
    gen_fails("ffnn", "layers", "25", "--layers");
    gen_fails("stg", "seed", "4294967296", "32-bit seed");
    gen_fails("stg", "seed", "99999999999999999999999", "32-bit seed");
    dp_graph *g = gen("stg", &err, "seed", "4294967295", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_free(g);
}
END_TEST

START_TEST(workflow_recipes)
{
    /* W = 7: ops by the formulas of dp_gen.h, sinks as the shapes have them */
    const char *recipes[] = {"montage", "epigenomics", "cybershake", "ligo", "genome", "srasearch"};
    const int ops[] = {4 * 7 + 3, 4 * 7 + 4, 2 * 7 + 4, 4 * 7 + 2 * 2, 7 + 16, 2 * 7 + 2};
    const int sinks[] = {1, 1, 2, 2, 14, 1};
    const int sources[] = {7, 1, 2, 7, 8, 8};
    for (int i = 0; i < 6; i++) {
        dp_error err;
        dp_graph *g = gen("workflow", &err, "recipe", recipes[i], "width", "7", "ccr", "1.5", NULL);
        ck_assert_msg(g != NULL, "%s: %s", recipes[i], err.msg);
        ck_assert_msg(g->n_ops == ops[i], "%s: %d ops", recipes[i], g->n_ops);
        ck_assert_msg(g->n_sinks == sinks[i], "%s: %d sinks", recipes[i], g->n_sinks);
        ck_assert_msg(g->n_sources == sources[i], "%s: %d sources", recipes[i], g->n_sources);
        check_ccr_edges(g, 1.5);
        dp_graph_free(g);
    }
    dp_error err;
    dp_graph *g = gen("workflow", &err, "recipe", "montage", "width", "2", NULL);
    ck_assert_int_eq(g->n_ops, 11);
    ck_assert_int_eq(count_kind(g, "mDiffFit"), 1);
    dp_graph_free(g);
    gen_fails("workflow", "width", "0", "--width");
    const char *k[] = {"recipe", "width"}, *v[] = {"montage", "1"};
    ck_assert(dp_gen_by_name("workflow", 2, k, v, &err) == NULL);
    ck_assert(strstr(err.msg, "workflow: option width must be in 2..100000") != NULL);
    gen_fails("workflow", "recipe", "blast", "--recipe: expected one of montage|");
}
END_TEST

START_TEST(task_generators_deterministic)
{
    /* the same seed gives the same graph, another seed another one */
    const char *models[] = {"stg", "layered", "forkjoin", "seriesparallel", "workflow"};
    for (int i = 0; i < 5; i++) {
        dp_error err;
        dp_graph *a = gen(models[i], &err, "seed", "7", NULL), *b = gen(models[i], &err, "seed", "7", NULL);
        dp_graph *c = gen(models[i], &err, "seed", "8", NULL);
        ck_assert_msg(a && b && c, "%s: %s", models[i], err.msg);
        ck_assert_uint_eq(dp_graph_content_hash(a), dp_graph_content_hash(b));
        ck_assert_msg(dp_graph_content_hash(a) != dp_graph_content_hash(c), "%s: seed ignored", models[i]);
        dp_graph_free(a);
        dp_graph_free(b);
        dp_graph_free(c);
    }
}
END_TEST

/* ---- DNN operator graphs (dp_gen_dnn.c) ---- */

START_TEST(rnn_lstm_hand)
{
    /* 1 layer, 2 steps, batch 1, input 2, hidden 1: per cell xw 2*2*4 = 16, hu 2*1*4 = 8,
     * gates 2*4 = 8, act 4*4 = 16, cell 3, hidden 5: 56 FLOPs; 12 ops; edges 6 per cell plus h
     * and c from step 0 into step 1: 14 */
    dp_error err;
    dp_graph *g = gen("rnn", &err, "layers", "1", "steps", "2", "batch", "1", "input", "2", "hidden", "1", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->cost_kind, DP_GRAPH_COST_PHYSICAL);
    ck_assert_int_eq(g->n_ops, 12);
    ck_assert_int_eq(g->n_edges, 14);
    ck_assert_double_eq(dp_graph_total_work(g), 2 * 56);
    int xw = dp_graph_find_op(g, "l0.t1.xw"), hu = dp_graph_find_op(g, "l0.t1.hu");
    ck_assert_double_eq(g->work[xw], 16);
    ck_assert_double_eq(g->out_size[xw], 4 * 4); /* 4 gates of fp32 */
    ck_assert_int_eq(g->pred_ptr[xw + 1] - g->pred_ptr[xw], 0); /* x_1: a model input */
    ck_assert_int_eq(g->pred_ptr[hu + 1] - g->pred_ptr[hu], 1); /* h_0 -> hu_1 */
    ck_assert_int_eq(g->n_sinks, 1);
    dp_graph_free(g);
    /* GRU, same dims: xw 12, hu 6, rz 12, n 7, h 4 = 41 per cell; edges 7 per cell + hu, h: 16 */
    g = gen("rnn", &err, "cell", "gru", "layers", "1", "steps", "2", "batch", "1", "input", "2", "hidden", "1", NULL);
    ck_assert_int_eq(g->n_ops, 10);
    ck_assert_int_eq(g->n_edges, 16);
    ck_assert_double_eq(dp_graph_total_work(g), 2 * 41);
    dp_graph_free(g);
    /* 3 layers x 5 steps of LSTM: 90 ops; layers 1 and 2 read the layer below (1 edge per cell) */
    g = gen("rnn", &err, "layers", "3", "steps", "5", NULL);
    ck_assert_int_eq(g->n_ops, 90);
    ck_assert_int_eq(g->n_edges, 15 * 6 + 3 * 4 * 2 + 2 * 5);
    dp_graph_free(g);
    gen_fails("rnn", "layers", "65", "--layers");
    gen_fails("rnn", "cell", "rnn", "expected one of lstm|gru, got 'rnn'");
    gen_fails("rnn", "hidden", "0", "--hidden");
}
END_TEST

START_TEST(cnn_hand)
{
    /* 1 module of 4 branches (1 + 2 + 3 + 2 ops) + concat, stem, gap, fc, softmax: 13 ops.
     * Stem: 2 x 1 x 2 x 2 x 3 x 4 x 9 = 864 FLOPs; branch 1's 3x3 conv: 1 -> 1 channel: 72 */
    dp_error err;
    dp_graph *g = gen("cnn", &err, "modules", "1", "branches", "4", "reduce-every", "0", "batch", "1", "image", "2",
                      "channels", "4", "classes", "3", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 13);
    ck_assert_double_eq(g->work[dp_graph_find_op(g, "stem")], 864);
    ck_assert_double_eq(g->work[dp_graph_find_op(g, "m1.b1.conv2")], 72);
    int cat = dp_graph_find_op(g, "m1.concat");
    ck_assert_int_eq(g->pred_ptr[cat + 1] - g->pred_ptr[cat], 4);
    ck_assert_double_eq(g->out_size[cat], 2 * 2 * 4 * 4);
    ck_assert_int_eq(g->n_sources, 1);
    ck_assert_int_eq(g->n_sinks, 1);
    dp_graph_free(g);
    /* the default: 9 modules of 9 ops, 2 reductions, 4 more */
    g = gen("cnn", &err, NULL);
    ck_assert_int_eq(g->n_ops, 1 + 9 * 9 + 2 + 3);
    dp_graph_free(g);
    gen_fails("cnn", "branches", "13", "--branches");
    gen_fails("cnn", "channels", "2", "cnn: option channels must be in 4..1e+06"); /* fewer than the 4 branches */
    const char *k[] = {"modules", "reduce-every"}, *v[] = {"500", "1"};
    ck_assert(dp_gen_by_name("cnn", 2, k, v, &err) == NULL);
    ck_assert(strstr(err.msg, "reductions double the channels") != NULL);
}
END_TEST

START_TEST(transformer_moe_hand)
{
    dp_error err;
    /* encoder 6P + 8, decoder with cross-attention 12P + 11: P 2 -> 20 + 35 */
    dp_graph *g = gen("transformer", &err, "enc-layers", "1", "dec-layers", "1", "head-blocks", "2", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 55);
    int k = dp_graph_find_op(g, "dec0.cross.k1"), enc = dp_graph_find_op(g, "enc0.ffn_norm");
    ck_assert_int_eq(g->pred_ptr[k + 1] - g->pred_ptr[k], 1);
    ck_assert_int_eq(g->edge_src[g->pred_edge[g->pred_ptr[k]]], enc); /* keys from the encoder */
    dp_graph_free(g);
    /* tiny dims: q of group 0 = 2 B S D D/P = 2 x 1 x 3 x 4 x 2 = 48 FLOPs; scores 2 B S S D/P = 36 */
    g = gen("transformer", &err, "enc-layers", "1", "dec-layers", "0", "batch", "1", "seq", "3", "hidden", "4", "heads", "2",
            "ffn", "8", "head-blocks", "2", NULL);
    ck_assert_int_eq(g->n_ops, 20);
    ck_assert_double_eq(g->work[dp_graph_find_op(g, "enc0.q0")], 48);
    ck_assert_double_eq(g->work[dp_graph_find_op(g, "enc0.scores1")], 36);
    ck_assert_double_eq(g->out_size[dp_graph_find_op(g, "enc0.softmax0")], 1 * 1 * 3 * 3 * 4);
    dp_graph_free(g);
    /* MoE: 6P + 4E + 8 per layer; tokens per expert ceil(k B S / E) = ceil(2 x 1 x 4 / 4) = 2:
     * ffn1 2 T D F = 2 x 2 x 4 x 8 = 128 */
    g = gen("moe", &err, "layers", "2", "experts", "4", "top-k", "2", "batch", "1", "seq", "4", "hidden", "4", "heads", "2",
            "ffn", "8", "head-blocks", "1", NULL);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 2 * (6 + 16 + 8));
    ck_assert_double_eq(g->work[dp_graph_find_op(g, "l1.e3.ffn1")], 128);
    int comb = dp_graph_find_op(g, "l0.combine");
    ck_assert_int_eq(g->pred_ptr[comb + 1] - g->pred_ptr[comb], 5);
    dp_graph_free(g);
    gen_fails("transformer", "head-blocks", "3", "heads (16) must be a multiple of head-blocks (3)");
    gen_fails("moe", "top-k", "9", "moe: option top-k must be in 1..8");
    gen_fails("moe", "heads", "5", "hidden (1024) must be a multiple of heads (5)");
    const char *kk[] = {"enc-layers", "dec-layers"}, *vv[] = {"0", "0"};
    ck_assert(dp_gen_by_name("transformer", 2, kk, vv, &err) == NULL);
    ck_assert(strstr(err.msg, "at least one layer") != NULL);
}
END_TEST

/* ---- families ---- */

START_TEST(new_families)
{
    /* 12 draws of each new family: the spec names the family's model, the graph builds, its op
     * count is in the documented range (10 to several thousand); the same generator state gives
     * the same specs */
    const char *fam[] = {"stg", "layered", "forkjoin", "seriesparallel", "workflow", "cnn", "rnn", "transformer", "moe"};
    const char *model[] = {"stg", "layered", "forkjoin", "seriesparallel", "workflow", "cnn", "rnn", "transformer", "moe"};
    const int lo[] = {10, 20, 9, 10, 10, 12, 20, 14, 30}, hi[] = {2700, 1000, 1033, 2000, 1320, 921, 6144, 978, 736};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937), *r2 = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 29);
    gsl_rng_set(r2, 29);
    for (int f = 0; f < 9; f++) {
        int min_ops = 1 << 30, max_ops = 0;
        for (int i = 0; i < 12; i++) {
            char spec[512], spec2[512], want[64];
            dp_error err;
            ck_assert_int_eq(dp_gen_family_spec(fam[f], r, spec, sizeof spec, &err), DP_OK);
            ck_assert_int_eq(dp_gen_family_spec(fam[f], r2, spec2, sizeof spec2, &err), DP_OK);
            ck_assert_str_eq(spec, spec2);
            snprintf(want, sizeof want, "gen:%s?", model[f]);
            ck_assert_msg(strncmp(spec, want, strlen(want)) == 0, "%s", spec);
            dp_graph *g = dp_gen_spec(spec, &err);
            ck_assert_msg(g != NULL, "%s: %s", spec, err.msg);
            ck_assert_msg(g->n_ops >= lo[f] && g->n_ops <= hi[f], "%s: %d ops", spec, g->n_ops);
            if (g->n_ops < min_ops) min_ops = g->n_ops;
            if (g->n_ops > max_ops) max_ops = g->n_ops;
            dp_graph_free(g);
        }
        ck_assert_msg(max_ops > min_ops, "%s: every draw has %d ops", fam[f], min_ops);
    }
    gsl_rng_free(r);
    gsl_rng_free(r2);
    /* the list: the existing families first, unchanged, the new ones after */
    const char *const *names = dp_gen_families();
    const char *want[] = {"chainmm", "ffnn", "llama-block", "llama-layer", "daggen", "stg", "layered", "forkjoin",
                          "seriesparallel", "workflow", "cnn", "rnn", "transformer", "moe"};
    for (int i = 0; i < 14; i++) ck_assert_str_eq(names[i], want[i]);
    ck_assert_str_eq(names[14], "llama-train");
    ck_assert(names[15] == NULL);
    /* llama-train: llama-layer's draw from the same generator state, as a training step */
    {
        char a[256], b[256], want_b[300];
        dp_error e2;
        gsl_rng *ra = gsl_rng_alloc(gsl_rng_mt19937), *rb = gsl_rng_alloc(gsl_rng_mt19937);
        for (int k = 0; k < 20; k++) {
            gsl_rng_set(ra, (unsigned long)k);
            gsl_rng_set(rb, (unsigned long)k);
            ck_assert_int_eq(dp_gen_family_spec("llama-layer", ra, a, sizeof a, &e2), DP_OK);
            ck_assert_int_eq(dp_gen_family_spec("llama-train", rb, b, sizeof b, &e2), DP_OK);
            snprintf(want_b, sizeof want_b, "%s&training=1", a);
            ck_assert_str_eq(b, want_b);
            dp_graph *g = dp_gen_spec(b, &e2);
            ck_assert_msg(g != NULL, "%s: %s", b, e2.msg);
            ck_assert_int_ge(g->n_ops, 252);
            ck_assert_int_le(g->n_ops, 1430);
            dp_graph_free(g);
        }
        gsl_rng_free(ra);
        gsl_rng_free(rb);
    }
    char spec[64];
    dp_error err;
    gsl_rng *r3 = gsl_rng_alloc(gsl_rng_mt19937);
    ck_assert_int_eq(dp_gen_family_spec("gnn", r3, spec, sizeof spec, &err), DP_EINVAL);
    ck_assert(strstr(err.msg, "known: chainmm, ffnn, llama-block, llama-layer, daggen, stg,") != NULL);
    gsl_rng_free(r3);
}
END_TEST

/* Issue 29: the cnn family drew modules up to 64 with a reduction every 2 modules, so 31
 * doublings of 64 channels passed the generator's 1e9 limit and `train --family ... --seed 4`
 * stopped at its first graph. Every draw of every family must build. */
START_TEST(family_draws_build)
{
    const char *const *names = dp_gen_families();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int f = 0; names[f]; f++) {
        gsl_rng_set(r, 4);
        const int draws = strcmp(names[f], "cnn") == 0 ? 2000 : 60;
        for (int i = 0; i < draws; i++) {
            char spec[512];
            dp_error err;
            ck_assert_int_eq(dp_gen_family_spec(names[f], r, spec, sizeof spec, &err), DP_OK);
            dp_graph *g = dp_gen_spec(spec, &err);
            ck_assert_msg(g != NULL, "draw %d of %s: %s: %s", i, names[f], spec, err.msg);
            dp_graph_free(g);
        }
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(new_models_place_and_simulate)
{
    const char *models[] = {"stg", "layered", "forkjoin", "seriesparallel", "workflow", "cnn", "rnn", "transformer", "moe"};
    for (int i = 0; i < 9; i++) {
        dp_error err;
        dp_graph *g = dp_gen_by_name(models[i], 0, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        dp_cost *c = dp_cost_uniform(g, 4, 1e13, 1.2e10, 1e-5, &err);
        ck_assert_msg(c != NULL, "%s", err.msg);
        int *a = malloc((size_t)g->n_ops * sizeof *a);
        dp_place_options po;
        dp_place_options_init(&po);
        ck_assert_int_eq(dp_place("cp", g, c, &po, a, NULL, NULL, &err), DP_OK);
        dp_sim *s = dp_sim_alloc(g, c, &err);
        dp_sim_result r;
        ck_assert_int_eq(dp_sim_run(s, a, &r, &err), DP_OK);
        ck_assert_msg(r.makespan >= dp_cost_lower_bound(g, c) * (1 - 1e-12), "%s", models[i]);
        dp_sim_free(s);
        free(a);
        dp_cost_free(c);
        dp_graph_free(g);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gen");
    TCase *t = tcase_create("models");
    tcase_add_test(t, chainmm_3d_2x2_hand);
    tcase_add_test(t, chainmm_2d_panels);
    tcase_add_test(t, chainmm_uneven_blocks);
    tcase_add_test(t, chainmm_default_size);
    tcase_add_test(t, ffnn_hand);
    tcase_add_test(t, ffnn_default_size);
    tcase_add_test(t, llama_block_hand);
    tcase_add_test(t, llama_layer_hand);
    tcase_add_test(t, llama_default_sizes);
    tcase_add_test(t, llama_layers_stacked);
    tcase_add_test(t, llama_invalid);
    tcase_add_test(t, einsum_errors);
    tcase_add_test(t, einsum_same_block_twice);
    tcase_add_test(t, random_structure);
    tcase_add_test(t, random_shapes);
    tcase_add_test(t, by_name);
    tcase_add_test(t, place_and_simulate_defaults);
    tcase_add_test(t, stg_methods);
    tcase_add_test(t, layered_topcuoglu);
    tcase_add_test(t, forkjoin_hand);
    tcase_add_test(t, seriesparallel_shapes);
    tcase_add_test(t, ffnn_most_layers_and_seed_range);
    tcase_add_test(t, workflow_recipes);
    tcase_add_test(t, task_generators_deterministic);
    tcase_add_test(t, rnn_lstm_hand);
    tcase_add_test(t, cnn_hand);
    tcase_add_test(t, transformer_moe_hand);
    tcase_add_test(t, new_families);
    tcase_add_test(t, family_draws_build);
    tcase_add_test(t, new_models_place_and_simulate);
    tcase_add_test(t, chainmm_training_hand);
    tcase_add_test(t, chainmm_training_blocked);
    tcase_add_test(t, ffnn_training_hand);
    tcase_add_test(t, einsum_training_shared_weight);
    tcase_add_test(t, training_properties);
    tcase_add_test(t, training_by_name);
    tcase_add_test(t, spec_check);
    tcase_add_test(t, param_messages);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
