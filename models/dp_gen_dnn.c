/* dp_gen_dnn.c: DNN operator graphs, one op per operator (dp_gen.h): branching CNNs, unrolled
 * recurrent networks, transformers and mixtures of experts, in FLOPs and bytes. */
#include "dp_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An operator graph under construction: ops in FLOPs with output elements; an edge carries its
 * producer's output bytes (set after the build). */
typedef struct og {
    const char *model;
    dp_graph_builder *b;
    double dtype_bytes;
    int failed;
    dp_error *err;
} og;

static int og_begin(og *g, const char *model, const char *name, int dtype_bytes, dp_error *err)
{
    memset(g, 0, sizeof *g);
    g->model = model;
    g->dtype_bytes = dtype_bytes;
    g->err = err;
    g->b = dp_graph_builder_alloc(name, name, DP_GRAPH_COST_PHYSICAL);
    if (!g->b) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", model);
    return DP_OK;
}

static void og_fault(og *g)
{
    const dp_error *me = dp_graph_builder_error(g->b);
    if (me->code != DP_OK) dp_error_set(g->err, me->code, "%s", me->msg);
    else dp_error_set(g->err, DP_ENOMEM, "%s: out of memory", g->model);
    g->failed = 1;
}

/* One op of flops FLOPs writing elems elements, reading the ops in[0..n_in) (entries < 0: model
 * inputs, no edge). Returns its id, or -1 after a fault (sticky). */
static int og_op(og *g, const char *name, const char *kind, double flops, double elems, int n_in, const int *in)
{
    if (g->failed) return -1;
    int id = dp_graph_builder_add_op(g->b, name, kind, flops, elems * g->dtype_bytes);
    if (id < 0) { og_fault(g); return -1; }
    for (int i = 0; i < n_in; i++)
        if (in[i] >= 0 && dp_graph_builder_add_edge(g->b, in[i], id, 0) < 0) { og_fault(g); return -1; }
    return id;
}

static int og1(og *g, const char *name, const char *kind, double flops, double elems, int in0)
{
    return og_op(g, name, kind, flops, elems, 1, &in0);
}

static int og2(og *g, const char *name, const char *kind, double flops, double elems, int in0, int in1)
{
    int in[2] = {in0, in1};
    return og_op(g, name, kind, flops, elems, 2, in);
}

static dp_graph *og_finish(og *g)
{
    dp_graph *out = g->failed ? NULL : dp_graph_builder_finish(g->b, g->err);
    if (out) for (int e = 0; e < out->n_edges; e++) out->edge_size[e] = out->out_size[out->edge_src[e]];
    dp_graph_builder_free(g->b);
    return out;
}

static int check_ops(const char *model, double ops, dp_error *err)
{
    if (ops > DP_GEN_MAX_OPS)
        return dp_error_set(err, DP_EINVAL, "%s: %.0f ops, more than the generators' limit of %d", model, ops, DP_GEN_MAX_OPS);
    return DP_OK;
}

#define NM(...) (snprintf(nm, sizeof nm, __VA_ARGS__), nm)

/* ---------------- branching CNN ---------------- */

void dp_gen_cnn_defaults(dp_gen_cnn_opts *o)
{
    o->modules = 9;
    o->branches = 4;
    o->reduce_every = 3;
    o->batch = 32;
    o->image = 56;
    o->channels = 256;
    o->classes = 1000;
    o->dtype_bytes = 4;
}

/* ops of branch i: 1x1; 1x1 3x3; 1x1 3x3 3x3; pool 1x1 */
static int branch_depth(int i)
{
    return i == 0 ? 1 : i % 3 == 1 ? 2 : i % 3 == 2 ? 3 : 2;
}

static int conv(og *g, const char *name, int in, double B, double H, double cin, double cout, int k)
{
    return og1(g, name, "conv", 2.0 * B * H * H * cin * cout * k * k, B * H * H * cout, in);
}

dp_graph *dp_gen_cnn(const dp_gen_cnn_opts *o, dp_error *err)
{
    if (o->modules < 1 || o->modules > 5000) { dp_gen_option_error(err, "cnn", "modules", 1, 5000); return NULL; }
    if (o->branches < 1 || o->branches > 12) { dp_gen_option_error(err, "cnn", "branches", 1, 12); return NULL; }
    if (o->reduce_every < 0 || o->reduce_every > 5000) { dp_gen_option_error(err, "cnn", "reduce-every", 0, 5000); return NULL; }
    if (o->batch < 1 || o->batch > 1000000) { dp_gen_option_error(err, "cnn", "batch", 1, 1e6); return NULL; }
    if (o->image < 1 || o->image > 100000) { dp_gen_option_error(err, "cnn", "image", 1, 1e5); return NULL; }
    if (o->channels < o->branches || o->channels > 1000000) { dp_gen_option_error(err, "cnn", "channels", o->branches, 1e6); return NULL; }
    if (o->classes < 1 || o->classes > 10000000) { dp_gen_option_error(err, "cnn", "classes", 1, 1e7); return NULL; }
    const int reductions = o->reduce_every ? (o->modules - 1) / o->reduce_every : 0;
    if (ldexp((double)o->channels, reductions) > 1e9) {
        dp_error_set(err, DP_EINVAL, "cnn: %d reductions double the channels (%lld) past 1e9: raise reduce-every or lower "
                     "modules", reductions, (long long)o->channels);
        return NULL;
    }
    double per_module = 1;
    for (int i = 0; i < o->branches; i++) per_module += branch_depth(i);
    if (check_ops("cnn", 4.0 + o->modules * per_module + reductions, err) != DP_OK) return NULL;
    char name[160], nm[64];
    snprintf(name, sizeof name, "cnn_m%d_br%d_b%lld_img%lld_c%lld", o->modules, o->branches, (long long)o->batch,
             (long long)o->image, (long long)o->channels);
    og g;
    if (og_begin(&g, "cnn", name, o->dtype_bytes, err) != DP_OK) return NULL;
    const double B = (double)o->batch;
    double H = (double)o->image, cur = (double)o->channels, width = cur;
    int x = conv(&g, "stem", -1, B, H, 3, cur, 3);
    int ends[12];
    for (int m = 1; m <= o->modules; m++) {
        for (int i = 0; i < o->branches; i++) {
            double cb = floor(width / o->branches) + (i == 0 ? fmod(width, (double)o->branches) : 0);
            int y;
            if (i > 0 && i % 3 == 0) {
                y = og1(&g, NM("m%d.b%d.pool", m, i), "maxpool", 9.0 * B * H * H * cur, B * H * H * cur, x);
                y = conv(&g, NM("m%d.b%d.conv1", m, i), y, B, H, cur, cb, 1);
            } else {
                y = conv(&g, NM("m%d.b%d.conv1", m, i), x, B, H, cur, cb, 1);
                for (int k = 1; k < branch_depth(i); k++) y = conv(&g, NM("m%d.b%d.conv%d", m, i, k + 1), y, B, H, cb, cb, 3);
            }
            ends[i] = y;
        }
        x = og_op(&g, NM("m%d.concat", m), "concat", B * H * H * width, B * H * H * width, o->branches, ends);
        cur = width;
        if (o->reduce_every && m % o->reduce_every == 0 && m < o->modules) {
            H = ceil(H / 2);
            x = og1(&g, NM("reduce%d", m / o->reduce_every), "maxpool", 9.0 * B * H * H * cur, B * H * H * cur, x);
            width *= 2;
        }
    }
    x = og1(&g, "gap", "avgpool", B * H * H * cur, B * cur, x);
    x = og1(&g, "fc", "matmul", 2.0 * B * cur * (double)o->classes, B * (double)o->classes, x);
    og1(&g, "softmax", "softmax", 5.0 * B * (double)o->classes, B * (double)o->classes, x);
    return og_finish(&g);
}

/* ---------------- unrolled RNN ---------------- */

void dp_gen_rnn_defaults(dp_gen_rnn_opts *o)
{
    o->cell = 0;
    o->layers = 2;
    o->steps = 16;
    o->batch = 64;
    o->input = 1024;
    o->hidden = 1024;
    o->dtype_bytes = 4;
}

dp_graph *dp_gen_rnn(const dp_gen_rnn_opts *o, dp_error *err)
{
    if (o->cell < 0 || o->cell > 1) { dp_gen_option_error(err, "rnn", "cell", 0, 1); return NULL; }
    if (o->layers < 1 || o->layers > 64) { dp_gen_option_error(err, "rnn", "layers", 1, 64); return NULL; }
    if (o->steps < 1 || o->steps > 100000) { dp_gen_option_error(err, "rnn", "steps", 1, 100000); return NULL; }
    if (o->batch < 1 || o->batch > 1000000) { dp_gen_option_error(err, "rnn", "batch", 1, 1e6); return NULL; }
    if (o->input < 1 || o->input > 1000000) { dp_gen_option_error(err, "rnn", "input", 1, 1e6); return NULL; }
    if (o->hidden < 1 || o->hidden > 1000000) { dp_gen_option_error(err, "rnn", "hidden", 1, 1e6); return NULL; }
    const int lstm = o->cell == 0;
    if (check_ops("rnn", (double)o->layers * o->steps * (lstm ? 6 : 5), err) != DP_OK) return NULL;
    char name[160], nm[64];
    snprintf(name, sizeof name, "rnn_%s_l%d_t%d_b%lld_h%lld", lstm ? "lstm" : "gru", o->layers, o->steps,
             (long long)o->batch, (long long)o->hidden);
    og g;
    if (og_begin(&g, "rnn", name, o->dtype_bytes, err) != DP_OK) return NULL;
    int *h = dp_alloc_malloc_n((size_t)o->layers, sizeof(int)), *c = dp_alloc_malloc_n((size_t)o->layers, sizeof(int));
    if (!h || !c) { free(h); free(c); dp_graph_builder_free(g.b); dp_error_set(err, DP_ENOMEM, "rnn: out of memory"); return NULL; }
    for (int l = 0; l < o->layers; l++) h[l] = c[l] = -1;  /* h_0, c_0: model inputs */
    const double B = (double)o->batch, H = (double)o->hidden;
    for (int t = 0; t < o->steps; t++) {
        int below = -1;  /* x_t of layer 0: a model input */
        for (int l = 0; l < o->layers; l++) {
            const double X = l == 0 ? (double)o->input : H;
            if (lstm) {
                int xw = og1(&g, NM("l%d.t%d.xw", l, t), "matmul", 2.0 * B * X * 4 * H, B * 4 * H, below);
                int hu = og1(&g, NM("l%d.t%d.hu", l, t), "matmul", 2.0 * B * H * 4 * H, B * 4 * H, h[l]);
                int gates = og2(&g, NM("l%d.t%d.gates", l, t), "add", 2.0 * B * 4 * H, B * 4 * H, xw, hu);
                int act = og1(&g, NM("l%d.t%d.act", l, t), "sigmoid", 4.0 * B * 4 * H, B * 4 * H, gates);
                int cell = og2(&g, NM("l%d.t%d.cell", l, t), "lstm_cell", 3.0 * B * H, B * H, act, c[l]);
                h[l] = og2(&g, NM("l%d.t%d.hidden", l, t), "lstm_hidden", 5.0 * B * H, B * H, act, cell);
                c[l] = cell;
            } else {
                int xw = og1(&g, NM("l%d.t%d.xw", l, t), "matmul", 2.0 * B * X * 3 * H, B * 3 * H, below);
                int hu = og1(&g, NM("l%d.t%d.hu", l, t), "matmul", 2.0 * B * H * 3 * H, B * 3 * H, h[l]);
                int rz = og2(&g, NM("l%d.t%d.rz", l, t), "sigmoid", 6.0 * B * 2 * H, B * 2 * H, xw, hu);
                int in[3] = {xw, hu, rz};
                int n = og_op(&g, NM("l%d.t%d.n", l, t), "tanh", 7.0 * B * H, B * H, 3, in);
                int in2[3] = {rz, n, h[l]};
                h[l] = og_op(&g, NM("l%d.t%d.hidden", l, t), "gru_hidden", 4.0 * B * H, B * H, 3, in2);
            }
            below = h[l];
        }
    }
    free(h);
    free(c);
    return og_finish(&g);
}

/* ---------------- transformer and mixture of experts ---------------- */

typedef struct attn_dims {
    double B, S, D, heads, F;
    int P;
} attn_dims;

/* Multi-head attention of q_in over kv_in (op ids, < 0 for a model input) in P head groups,
 * the output projection, the residual add (with res) and the layer norm. Returns the norm's id. */
static int attention(og *g, const char *pre, const attn_dims *d, int q_in, int kv_in, int res)
{
    char nm[96];
    int *outs = dp_alloc_malloc_n((size_t)d->P, sizeof(int));
    if (!outs) {
        if (!g->failed) dp_error_set(g->err, DP_ENOMEM, "%s: out of memory", g->model);
        g->failed = 1;
        return -1;
    }
    const double dp = d->D / d->P, hp = d->heads / d->P, B = d->B, S = d->S;
    for (int p = 0; p < d->P; p++) {
        int q = og1(g, NM("%s.q%d", pre, p), "matmul", 2.0 * B * S * d->D * dp, B * S * dp, q_in);
        int k = og1(g, NM("%s.k%d", pre, p), "matmul", 2.0 * B * S * d->D * dp, B * S * dp, kv_in);
        int v = og1(g, NM("%s.v%d", pre, p), "matmul", 2.0 * B * S * d->D * dp, B * S * dp, kv_in);
        int s = og2(g, NM("%s.scores%d", pre, p), "matmul", 2.0 * B * S * S * dp, B * hp * S * S, q, k);
        int sm = og1(g, NM("%s.softmax%d", pre, p), "softmax", 5.0 * B * hp * S * S, B * hp * S * S, s);
        outs[p] = og2(g, NM("%s.attn%d", pre, p), "matmul", 2.0 * B * S * S * dp, B * S * dp, sm, v);
    }
    int o = og_op(g, NM("%s.o_proj", pre), "matmul", 2.0 * B * S * d->D * d->D, B * S * d->D, d->P, outs);
    free(outs);
    int a = og2(g, NM("%s.add", pre), "add", B * S * d->D, B * S * d->D, res, o);
    return og1(g, NM("%s.norm", pre), "layernorm", 5.0 * B * S * d->D, B * S * d->D, a);
}

/* FFN (ffn1, GELU, ffn2), residual add and layer norm after x */
static int ffn(og *g, const char *pre, const attn_dims *d, int x)
{
    char nm[96];
    const double B = d->B, S = d->S;
    int f1 = og1(g, NM("%s.ffn1", pre), "matmul", 2.0 * B * S * d->D * d->F, B * S * d->F, x);
    int ge = og1(g, NM("%s.gelu", pre), "gelu", 8.0 * B * S * d->F, B * S * d->F, f1);
    int f2 = og1(g, NM("%s.ffn2", pre), "matmul", 2.0 * B * S * d->F * d->D, B * S * d->D, ge);
    int a = og2(g, NM("%s.ffn_add", pre), "add", B * S * d->D, B * S * d->D, x, f2);
    return og1(g, NM("%s.ffn_norm", pre), "layernorm", 5.0 * B * S * d->D, B * S * d->D, a);
}

/* the shapes both models share: DP_OK or DP_EINVAL */
static int check_attn(const char *model, int64_t batch, int64_t seq, int64_t hidden, int64_t heads, int64_t ffn_,
                      int head_blocks, dp_error *err)
{
    if (batch < 1 || batch > 1000000) return dp_gen_option_error(err, model, "batch", 1, 1e6);
    if (seq < 1 || seq > 1000000) return dp_gen_option_error(err, model, "seq", 1, 1e6);
    if (hidden < 1 || hidden > 1000000) return dp_gen_option_error(err, model, "hidden", 1, 1e6);
    if (heads < 1 || heads > hidden) return dp_gen_option_error(err, model, "heads", 1, (double)hidden);
    if (hidden % heads != 0)
        return dp_error_set(err, DP_EINVAL, "%s: hidden (%lld) must be a multiple of heads (%lld)", model, (long long)hidden,
                            (long long)heads);
    if (ffn_ < 1 || ffn_ > 10000000) return dp_gen_option_error(err, model, "ffn", 1, 1e7);
    if (head_blocks < 1 || head_blocks > heads) return dp_gen_option_error(err, model, "head-blocks", 1, (double)heads);
    if (heads % head_blocks != 0)
        return dp_error_set(err, DP_EINVAL, "%s: heads (%lld) must be a multiple of head-blocks (%d)", model, (long long)heads,
                            head_blocks);
    return DP_OK;
}

void dp_gen_transformer_defaults(dp_gen_transformer_opts *o)
{
    o->enc_layers = 2;
    o->dec_layers = 2;
    o->batch = 8;
    o->seq = 512;
    o->hidden = 1024;
    o->heads = 16;
    o->ffn = 4096;
    o->head_blocks = 4;
    o->dtype_bytes = 4;
}

dp_graph *dp_gen_transformer(const dp_gen_transformer_opts *o, dp_error *err)
{
    if (o->enc_layers < 0 || o->enc_layers > 1024) { dp_gen_option_error(err, "transformer", "enc-layers", 0, 1024); return NULL; }
    if (o->dec_layers < 0 || o->dec_layers > 1024) { dp_gen_option_error(err, "transformer", "dec-layers", 0, 1024); return NULL; }
    if (o->enc_layers + o->dec_layers < 1) {
        dp_error_set(err, DP_EINVAL, "transformer: enc-layers and dec-layers are both 0: give at least one layer");
        return NULL;
    }
    if (check_attn("transformer", o->batch, o->seq, o->hidden, o->heads, o->ffn, o->head_blocks, err) != DP_OK) return NULL;
    const double P = o->head_blocks;
    if (check_ops("transformer", o->enc_layers * (6 * P + 8) + o->dec_layers * (o->enc_layers ? 12 * P + 11 : 6 * P + 8), err) != DP_OK)
        return NULL;
    char name[160], pre[32];
    snprintf(name, sizeof name, "transformer_e%d_d%d_b%lld_s%lld_d%lld_p%d", o->enc_layers, o->dec_layers,
             (long long)o->batch, (long long)o->seq, (long long)o->hidden, o->head_blocks);
    og g;
    if (og_begin(&g, "transformer", name, o->dtype_bytes, err) != DP_OK) return NULL;
    attn_dims d = {(double)o->batch, (double)o->seq, (double)o->hidden, (double)o->heads, (double)o->ffn, o->head_blocks};
    int x = -1;
    for (int l = 0; l < o->enc_layers; l++) {
        snprintf(pre, sizeof pre, "enc%d", l);
        x = ffn(&g, pre, &d, attention(&g, pre, &d, x, x, x));
    }
    const int memory = x;
    int y = -1;
    for (int l = 0; l < o->dec_layers; l++) {
        snprintf(pre, sizeof pre, "dec%d", l);
        y = attention(&g, pre, &d, y, y, y);
        if (o->enc_layers) {
            snprintf(pre, sizeof pre, "dec%d.cross", l);
            y = attention(&g, pre, &d, y, memory, y);
            snprintf(pre, sizeof pre, "dec%d", l);
        }
        y = ffn(&g, pre, &d, y);
    }
    return og_finish(&g);
}

void dp_gen_moe_defaults(dp_gen_moe_opts *o)
{
    o->layers = 2;
    o->experts = 8;
    o->top_k = 2;
    o->batch = 8;
    o->seq = 512;
    o->hidden = 1024;
    o->heads = 16;
    o->ffn = 4096;
    o->head_blocks = 4;
    o->dtype_bytes = 4;
}

dp_graph *dp_gen_moe(const dp_gen_moe_opts *o, dp_error *err)
{
    if (o->layers < 1 || o->layers > 1024) { dp_gen_option_error(err, "moe", "layers", 1, 1024); return NULL; }
    if (o->experts < 1 || o->experts > 1024) { dp_gen_option_error(err, "moe", "experts", 1, 1024); return NULL; }
    if (o->top_k < 1 || o->top_k > o->experts) { dp_gen_option_error(err, "moe", "top-k", 1, o->experts); return NULL; }
    if (check_attn("moe", o->batch, o->seq, o->hidden, o->heads, o->ffn, o->head_blocks, err) != DP_OK) return NULL;
    if (check_ops("moe", (double)o->layers * (6.0 * o->head_blocks + 4.0 * o->experts + 8), err) != DP_OK) return NULL;
    char name[160], pre[32], nm[96];
    snprintf(name, sizeof name, "moe_l%d_e%d_k%d_b%lld_s%lld_d%lld_p%d", o->layers, o->experts, o->top_k,
             (long long)o->batch, (long long)o->seq, (long long)o->hidden, o->head_blocks);
    og g;
    if (og_begin(&g, "moe", name, o->dtype_bytes, err) != DP_OK) return NULL;
    int *outs = dp_alloc_malloc_n((size_t)o->experts + 1, sizeof(int));
    if (!outs) { dp_graph_builder_free(g.b); dp_error_set(err, DP_ENOMEM, "moe: out of memory"); return NULL; }
    attn_dims d = {(double)o->batch, (double)o->seq, (double)o->hidden, (double)o->heads, (double)o->ffn, o->head_blocks};
    const double B = d.B, S = d.S, D = d.D, F = d.F, E = o->experts, K = o->top_k;
    const double T = ceil(K * B * S / E);  /* tokens per expert, capacity factor 1 */
    int x = -1;
    for (int l = 0; l < o->layers; l++) {
        snprintf(pre, sizeof pre, "l%d", l);
        int a = attention(&g, pre, &d, x, x, x);
        int router = og1(&g, NM("%s.router", pre), "matmul", 2.0 * B * S * D * E, B * S * E, a);
        int gate = og1(&g, NM("%s.gate", pre), "topk", 5.0 * B * S * E, B * S * E, router);
        for (int e = 0; e < o->experts; e++) {
            int dsp = og2(&g, NM("%s.e%d.dispatch", pre, e), "dispatch", T * D, T * D, a, gate);
            int f1 = og1(&g, NM("%s.e%d.ffn1", pre, e), "matmul", 2.0 * T * D * F, T * F, dsp);
            int act = og1(&g, NM("%s.e%d.silu", pre, e), "silu", 4.0 * T * F, T * F, f1);
            outs[e] = og1(&g, NM("%s.e%d.ffn2", pre, e), "matmul", 2.0 * T * F * D, T * D, act);
        }
        outs[o->experts] = gate;
        int comb = og_op(&g, NM("%s.combine", pre), "combine", 2.0 * K * B * S * D, B * S * D, o->experts + 1, outs);
        int add = og2(&g, NM("%s.moe_add", pre), "add", B * S * D, B * S * D, a, comb);
        x = og1(&g, NM("%s.moe_norm", pre), "layernorm", 5.0 * B * S * D, B * S * D, add);
    }
    free(outs);
    return og_finish(&g);
}
