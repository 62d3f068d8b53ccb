/* dp_gen.c: the ML workload generators (block-partitioned einsum programs), the layered random
 * DAG generator and the by-name interface. */
#include "dp_gen.h"
#include "dp_gen_einsum.h"
#include "dp_json.h"

#include <gsl/gsl_rng.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int dp_gen_option_error(dp_error *err, const char *model, const char *param, double lo, double hi)
{
    char a[32], b[32];
    return dp_error_set(err, DP_EINVAL, "%s: option %s must be in %s..%s", model, param, dp_json_fmt_exact(lo, a, sizeof a),
                        dp_json_fmt_exact(hi, b, sizeof b));
}

static int bad_training(dp_error *err, const char *model, int training, int optimizer)
{
    if (training != 0 && training != 1) return dp_gen_option_error(err, model, "training", 0, 1);
    if (optimizer != DP_GEN_OPT_SGD && optimizer != DP_GEN_OPT_ADAM) return dp_gen_option_error(err, model, "optimizer", 0, 1);
    return DP_OK;
}

/* "_train_adam" or "_train_sgd" appended to a graph name when training. */
static void train_suffix(char *name, size_t cap, int training, int optimizer)
{
    size_t n = strlen(name);
    if (training && n < cap) snprintf(name + n, cap - n, "_train_%s", optimizer == DP_GEN_OPT_SGD ? "sgd" : "adam");
}

/* Training with a squared-error loss 1/2 |Y - T|^2 against a target T (an input): the loss's
 * gradient dY = Y - T, one op per block of Y (1 FLOP per element), then the backward pass and
 * the updates (dp_gen_einsum_backward). */
static void train_mse(dp_gen_einsum *e, int y, const char *labels, int optimizer)
{
    char spec[3 * DP_GRAPH_MAX_DIMS + 8];
    snprintf(spec, sizeof spec, "%s,%s->%s", labels, labels, labels);
    int in[2] = {y, dp_gen_einsum_input(e, "target", labels)};
    int dy = dp_gen_einsum_op(e, "loss.grad", "mse_grad", spec, 1.0, NULL, 2, in);
    dp_gen_einsum_backward(e, y, dy, (dp_gen_optimizer)optimizer);
}

/* ---------------- ChainMM ---------------- */

void dp_gen_chainmm_defaults(dp_gen_chainmm_opts *o)
{
    o->matrices = 7;
    o->n = 20000;
    o->blocks = 2;
    o->three_d = 1;
    o->dtype_bytes = 4;
    o->training = 0;
    o->optimizer = DP_GEN_OPT_ADAM;
}

dp_graph *dp_gen_chainmm(const dp_gen_chainmm_opts *o, dp_error *err)
{
    if (o->matrices < 2 || o->matrices > 25) { dp_gen_option_error(err, "chainmm", "matrices", 2, 25); return NULL; }
    if (o->n < 1) { dp_gen_option_error(err, "chainmm", "n", 1, 1e15); return NULL; }
    if (o->blocks < 1 || o->blocks > o->n) { dp_gen_option_error(err, "chainmm", "blocks", 1, (double)o->n); return NULL; }
    if (bad_training(err, "chainmm", o->training, o->optimizer) != DP_OK) return NULL;
    char name[128];
    snprintf(name, sizeof name, "chainmm_k%d_n%lld_p%d_%s", o->matrices, (long long)o->n, o->blocks,
             o->three_d ? "3d" : "2d");
    train_suffix(name, sizeof name, o->training, o->optimizer);
    dp_gen_einsum *e = dp_gen_einsum_alloc(name, o->dtype_bytes);
    if (!e) { dp_error_set(err, DP_ENOMEM, "chainmm: out of memory"); return NULL; }
    /* dimension t of the chain (rows of M_{t+1}, columns of M_t) is label 'a' + t */
    for (int t = 0; t <= o->matrices; t++) dp_gen_einsum_dim(e, (char)('a' + t), o->n, o->blocks);
    /* every matrix is a parameter when training (each gets a gradient and an update) */
    int (*matrix)(dp_gen_einsum *, const char *, const char *) = o->training ? dp_gen_einsum_param : dp_gen_einsum_input;
    char lab[3] = {'a', 'b', 0};
    int x = matrix(e, "M1", lab);
    for (int t = 2; t <= o->matrices; t++) {
        char mname[16], opname[16], spec[16], ov[8];
        char l0 = 'a', lk = (char)('a' + t - 1), ln = (char)('a' + t);
        snprintf(mname, sizeof mname, "M%d", t);
        char ml[3] = {lk, ln, 0};
        int m = matrix(e, mname, ml);
        snprintf(opname, sizeof opname, "mm%d", t - 1);
        snprintf(spec, sizeof spec, "%c%c,%c%c->%c%c", l0, lk, lk, ln, l0, ln);
        snprintf(ov, sizeof ov, "%c1", lk);
        int in[2] = {x, m};
        x = dp_gen_einsum_op(e, opname, "matmul", spec, 2.0, o->three_d ? NULL : ov, 2, in);
    }
    if (o->training) {
        char yl[3] = {'a', (char)('a' + o->matrices), 0};
        train_mse(e, x, yl, o->optimizer);
    }
    dp_graph *g = dp_gen_einsum_finish(e, err);
    dp_gen_einsum_free(e);
    return g;
}

/* ---------------- FFNN ---------------- */

void dp_gen_ffnn_defaults(dp_gen_ffnn_opts *o)
{
    o->layers = 3;
    o->batch = 8192;
    o->in = o->hidden = o->out = 16384;
    o->batch_blocks = 2;
    o->feature_blocks = 4;
    o->dtype_bytes = 4;
    o->training = 0;
    o->optimizer = DP_GEN_OPT_ADAM;
}

/* ffnn's label of feature dimension l (0 .. layers): 'c' to 'z', then 'A' (l = 24 gave '{', past
 * 'z', and --layers 24, within the documented 1..24, always failed; a review) */
static char ffnn_label(int l)
{
    return (char)(l < 24 ? 'c' + l : 'A' + (l - 24));
}

dp_graph *dp_gen_ffnn(const dp_gen_ffnn_opts *o, dp_error *err)
{
    if (o->layers < 1 || o->layers > 24) { dp_gen_option_error(err, "ffnn", "layers", 1, 24); return NULL; }
    int64_t mind = o->in < o->hidden ? o->in : o->hidden;
    if (o->out < mind) mind = o->out;
    if (o->layers == 1) mind = o->in < o->out ? o->in : o->out;
    if (o->batch < 1 || mind < 1) { dp_error_set(err, DP_EINVAL, "ffnn: batch and dims must be positive"); return NULL; }
    if (o->batch_blocks < 1 || o->batch_blocks > o->batch) { dp_gen_option_error(err, "ffnn", "batch-blocks", 1, (double)o->batch); return NULL; }
    if (o->feature_blocks < 1 || o->feature_blocks > mind) { dp_gen_option_error(err, "ffnn", "feature-blocks", 1, (double)mind); return NULL; }
    if (bad_training(err, "ffnn", o->training, o->optimizer) != DP_OK) return NULL;
    char name[128];
    snprintf(name, sizeof name, "ffnn_l%d_b%lld_h%lld_pb%d_pf%d", o->layers, (long long)o->batch,
             (long long)o->hidden, o->batch_blocks, o->feature_blocks);
    train_suffix(name, sizeof name, o->training, o->optimizer);
    dp_gen_einsum *e = dp_gen_einsum_alloc(name, o->dtype_bytes);
    if (!e) { dp_error_set(err, DP_ENOMEM, "ffnn: out of memory"); return NULL; }
    /* 'b' batch; feature dim l (input of layer l+1) is label ffnn_label(l) */
    dp_gen_einsum_dim(e, 'b', o->batch, o->batch_blocks);
    for (int l = 0; l <= o->layers; l++) {
        int64_t d = l == 0 ? o->in : l == o->layers ? o->out : o->hidden;
        dp_gen_einsum_dim(e, ffnn_label(l), d, o->feature_blocks);
    }
    char hl[3] = {'b', 'c', 0};
    int h = dp_gen_einsum_input(e, "X", hl);
    for (int l = 1; l <= o->layers; l++) {
        char li = ffnn_label(l - 1), lo = ffnn_label(l);
        char nm[32], spec[32], wl[3] = {li, lo, 0}, bl[2] = {lo, 0};
        snprintf(nm, sizeof nm, "W%d", l);
        int w = dp_gen_einsum_param(e, nm, wl);
        snprintf(nm, sizeof nm, "bias%d", l);
        int bias = dp_gen_einsum_param(e, nm, bl);
        snprintf(nm, sizeof nm, "l%d.matmul", l);
        snprintf(spec, sizeof spec, "b%c,%c%c->b%c", li, li, lo, lo);
        int in[2] = {h, w};
        int z = dp_gen_einsum_op(e, nm, "matmul", spec, 2.0, NULL, 2, in);
        snprintf(nm, sizeof nm, "l%d.bias", l);
        snprintf(spec, sizeof spec, "b%c,%c->b%c", lo, lo, lo);
        int in2[2] = {z, bias};
        int y = dp_gen_einsum_op(e, nm, "add", spec, 1.0, NULL, 2, in2);
        snprintf(nm, sizeof nm, "l%d.relu", l);
        snprintf(spec, sizeof spec, "b%c->b%c", lo, lo);
        h = dp_gen_einsum_op(e, nm, "relu", spec, 1.0, NULL, 1, &y);
    }
    if (o->training) {
        char yl[3] = {'b', ffnn_label(o->layers), 0};
        train_mse(e, h, yl, o->optimizer);
    }
    dp_graph *g = dp_gen_einsum_finish(e, err);
    dp_gen_einsum_free(e);
    return g;
}

/* ---------------- Llama ---------------- */

void dp_gen_llama_defaults(dp_gen_llama_opts *o, int layer)
{
    o->layer = layer;
    o->batch = 1;
    o->seq = 4096;
    o->hidden = 4096;
    o->heads = 32;
    o->ffn = 11008;
    o->vocab = 32000;
    o->tp = 4;
    o->hidden_blocks = 4;
    o->batch_blocks = 1;
    o->seq_blocks = 1;
    o->softmax_split = 0;
    o->dtype_bytes = 4;
    o->layers = 1;
    o->training = 0;
    o->optimizer = DP_GEN_OPT_ADAM;
}

/* RMSNorm of x ("bsd"): sum of squares over d, then scale by the weight. */
static int rmsnorm(dp_gen_einsum *e, const char *name, int x, int weight)
{
    char nm[64];
    snprintf(nm, sizeof nm, "%s.sumsq", name);
    int ss = dp_gen_einsum_op(e, nm, "sumsq", "bsd->bs", 2.0, NULL, 1, &x);
    snprintf(nm, sizeof nm, "%s.scale", name);
    int in[3] = {x, ss, weight};
    return dp_gen_einsum_op(e, nm, "rmsnorm", "bsd,bs,d->bsd", 3.0, NULL, 3, in);
}

dp_graph *dp_gen_llama(const dp_gen_llama_opts *o, dp_error *err)
{
    const char *model = o->layer ? "llama-layer" : "llama-block";
    if (o->batch < 1 || o->seq < 1 || o->hidden < 1 || o->heads < 1 || o->ffn < 1 || o->vocab < 1) {
        dp_error_set(err, DP_EINVAL, "%s: batch, seq, hidden, heads, ffn and vocab must be positive", model);
        return NULL;
    }
    if (o->hidden % o->heads != 0) {
        dp_error_set(err, DP_EINVAL, "%s: hidden (%lld) must be a multiple of heads (%lld)", model,
                     (long long)o->hidden, (long long)o->heads);
        return NULL;
    }
    int64_t tpmax = o->heads < o->ffn ? o->heads : o->ffn;
    if (o->layer && o->vocab < tpmax) tpmax = o->vocab;
    if (o->tp < 1 || o->tp > tpmax) { dp_gen_option_error(err, model, "tp", 1, (double)tpmax); return NULL; }
    if (o->hidden_blocks < 1 || o->hidden_blocks > o->hidden) { dp_gen_option_error(err, model, "hidden-blocks", 1, (double)o->hidden); return NULL; }
    if (o->batch_blocks < 1 || o->batch_blocks > o->batch) { dp_gen_option_error(err, model, "batch-blocks", 1, (double)o->batch); return NULL; }
    if (o->seq_blocks < 1 || o->seq_blocks > o->seq) { dp_gen_option_error(err, model, "seq-blocks", 1, (double)o->seq); return NULL; }
    if (o->layers < 1 || o->layers > 1024) { dp_gen_option_error(err, model, "layers", 1, 1024); return NULL; }
    if (bad_training(err, model, o->training, o->optimizer) != DP_OK) return NULL;
    if (!o->layer && o->layers != 1) {
        dp_error_set(err, DP_EINVAL, "llama-block: layers must be 1 (stacked layers are llama-layer's)");
        return NULL;
    }
    char name[160];
    snprintf(name, sizeof name, "%s_b%lld_s%lld_d%lld_tp%d_pd%d", o->layer ? "llama_layer" : "llama_block",
             (long long)o->batch, (long long)o->seq, (long long)o->hidden, o->tp, o->hidden_blocks);
    if (o->layers > 1) {
        size_t n = strlen(name);
        snprintf(name + n, sizeof name - n, "_L%d", o->layers);
    }
    train_suffix(name, sizeof name, o->training, o->optimizer);
    dp_gen_einsum *e = dp_gen_einsum_alloc(name, o->dtype_bytes);
    if (!e) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", model); return NULL; }
    dp_gen_einsum_dim(e, 'b', o->batch, o->batch_blocks);
    dp_gen_einsum_dim(e, 's', o->seq, o->seq_blocks);
    dp_gen_einsum_dim(e, 't', o->seq, o->seq_blocks);
    dp_gen_einsum_dim(e, 'd', o->hidden, o->hidden_blocks);
    dp_gen_einsum_dim(e, 'h', o->heads, o->tp);
    dp_gen_einsum_dim(e, 'e', o->hidden / o->heads, 1);
    dp_gen_einsum_dim(e, 'f', o->ffn, o->tp);
    if (o->layer) dp_gen_einsum_dim(e, 'v', o->vocab, o->tp);

    /* Layer l > 0 of a stack reads layer l - 1's output and has its own weights; its op and
     * weight names carry "l<l>." so that they stay unique (layer 0 keeps the plain names). */
    int x = dp_gen_einsum_input(e, "x", "bsd");
    int nl = o->layer ? o->layers : 1;
    for (int l = 0; l < nl; l++) {
        char pre[16] = "", nm[64];
        if (l > 0) snprintf(pre, sizeof pre, "l%d.", l);
#define NM(s) (snprintf(nm, sizeof nm, "%s%s", pre, (s)), nm)
        int wq = dp_gen_einsum_param(e, NM("Wq"), "dhe"), wk = dp_gen_einsum_param(e, NM("Wk"), "dhe");
        int wv = dp_gen_einsum_param(e, NM("Wv"), "dhe");
        int wo = dp_gen_einsum_param(e, NM("Wo"), "hed");
        int w1 = dp_gen_einsum_param(e, NM("W1"), "df"), w3 = dp_gen_einsum_param(e, NM("W3"), "df");
        int w2 = dp_gen_einsum_param(e, NM("W2"), "fd");
        int rope = dp_gen_einsum_input(e, NM("rope"), "se");
        int h = x;
        if (o->layer) {
            int gw = dp_gen_einsum_param(e, NM("g_attn"), "d");
            char rn[64];
            snprintf(rn, sizeof rn, "%sattn_norm", pre);
            h = rmsnorm(e, rn, x, gw);
        }

        int in[3];
        in[0] = h; in[1] = wq;
        int q = dp_gen_einsum_op(e, NM("q_proj"), "matmul", "bsd,dhe->bshe", 2.0, NULL, 2, in);
        in[1] = wk;
        int k = dp_gen_einsum_op(e, NM("k_proj"), "matmul", "bsd,dhe->bshe", 2.0, NULL, 2, in);
        in[1] = wv;
        int v = dp_gen_einsum_op(e, NM("v_proj"), "matmul", "bsd,dhe->bshe", 2.0, NULL, 2, in);
        in[0] = q; in[1] = rope;
        int qr = dp_gen_einsum_op(e, NM("rope_q"), "rope", "bshe,se->bshe", 3.0, NULL, 2, in);
        in[0] = k;
        int kr = dp_gen_einsum_op(e, NM("rope_k"), "rope", "bshe,se->bshe", 3.0, NULL, 2, in);
        in[0] = qr; in[1] = kr;
        int sc = dp_gen_einsum_op(e, NM("scores"), "matmul", "bshe,bthe->bhst", 2.0, NULL, 2, in);
        int p;
        if (o->softmax_split) {
            int mx = dp_gen_einsum_op(e, NM("softmax.max"), "max", "bhst->bhs", 1.0, NULL, 1, &sc);
            in[0] = sc; in[1] = mx;
            int ex = dp_gen_einsum_op(e, NM("softmax.exp"), "exp", "bhst,bhs->bhst", 2.0, NULL, 2, in);
            int sm = dp_gen_einsum_op(e, NM("softmax.sum"), "sum", "bhst->bhs", 1.0, NULL, 1, &ex);
            in[0] = ex; in[1] = sm;
            p = dp_gen_einsum_op(e, NM("softmax.div"), "div", "bhst,bhs->bhst", 1.0, NULL, 2, in);
        } else {
            /* the whole row in one op: its blocks span t */
            p = dp_gen_einsum_op(e, NM("softmax"), "softmax", "bhst->bhst", 5.0, "t1", 1, &sc);
        }
        in[0] = p; in[1] = v;
        int a = dp_gen_einsum_op(e, NM("attn_v"), "matmul", "bhst,bthe->bshe", 2.0, NULL, 2, in);
        in[0] = a; in[1] = wo;
        int att = dp_gen_einsum_op(e, NM("o_proj"), "matmul", "bshe,hed->bsd", 2.0, NULL, 2, in);
        int r1 = att;
        if (o->layer) {
            in[0] = x; in[1] = att;
            r1 = dp_gen_einsum_op(e, NM("residual1"), "add", "bsd,bsd->bsd", 1.0, NULL, 2, in);
            int gw = dp_gen_einsum_param(e, NM("g_ffn"), "d");
            char rn[64];
            snprintf(rn, sizeof rn, "%sffn_norm", pre);
            h = rmsnorm(e, rn, r1, gw);
        } else {
            h = att;
        }
        in[0] = h; in[1] = w1;
        int gate = dp_gen_einsum_op(e, NM("ffn_gate"), "matmul", "bsd,df->bsf", 2.0, NULL, 2, in);
        in[1] = w3;
        int up = dp_gen_einsum_op(e, NM("ffn_up"), "matmul", "bsd,df->bsf", 2.0, NULL, 2, in);
        int sg = dp_gen_einsum_op(e, NM("silu"), "silu", "bsf->bsf", 4.0, NULL, 1, &gate);
        in[0] = sg; in[1] = up;
        int hm = dp_gen_einsum_op(e, NM("swiglu"), "mul", "bsf,bsf->bsf", 1.0, NULL, 2, in);
        in[0] = hm; in[1] = w2;
        int y = dp_gen_einsum_op(e, NM("ffn_down"), "matmul", "bsf,fd->bsd", 2.0, NULL, 2, in);
        if (o->layer) {
            in[0] = r1; in[1] = y;
            x = dp_gen_einsum_op(e, NM("residual2"), "add", "bsd,bsd->bsd", 1.0, NULL, 2, in);
        } else {
            x = y;
        }
#undef NM
    }
    if (o->layer) {
        int nf = rmsnorm(e, "final_norm", x, dp_gen_einsum_param(e, "g_final", "d"));
        int in[2] = {nf, dp_gen_einsum_param(e, "W_vocab", "dv")};
        int logits = dp_gen_einsum_op(e, "lm_head", "matmul", "bsd,dv->bsv", 2.0, NULL, 2, in);
        if (o->training) {
            /* softmax cross-entropy, vocabulary-parallel (Megatron-LM, Shoeybi et al. 2019):
             * per vocabulary block the partial sum of exponentials of each row (exp and add,
             * 2 FLOPs per element; the blocks' partials summed by the reduction over v), then
             * dlogits = softmax - onehot per block (exp, divide, subtract: 3 per element) */
            int se = dp_gen_einsum_op(e, "loss.sumexp", "sumexp", "bsv->bs", 2.0, NULL, 1, &logits);
            int in2[2] = {logits, se};
            int dy = dp_gen_einsum_op(e, "loss.grad", "xent_grad", "bsv,bs->bsv", 3.0, NULL, 2, in2);
            dp_gen_einsum_backward(e, logits, dy, (dp_gen_optimizer)o->optimizer);
        }
    } else if (o->training) {
        train_mse(e, x, "bsd", o->optimizer);
    }
    dp_graph *g = dp_gen_einsum_finish(e, err);
    dp_gen_einsum_free(e);
    if (g) g->devices = o->tp; /* one block of heads, FFN and vocabulary per device */
    return g;
}

/* ---------------- layered random DAG (DAGGEN) ---------------- */

void dp_gen_random_defaults(dp_gen_random_opts *o)
{
    o->n = 100;
    o->fat = 0.5;
    o->density = 0.5;
    o->regular = 0.9;
    o->jump = 1;
    o->ccr = 1.0;
    o->min_work = 1;
    o->max_work = 100;
    o->seed = 1;
}

dp_graph *dp_gen_random(const dp_gen_random_opts *o, dp_error *err)
{
    if (o->n < 1 || o->n > DP_GEN_MAX_OPS) { dp_gen_option_error(err, "random", "n", 1, DP_GEN_MAX_OPS); return NULL; }
    if (!(o->fat >= 0 && o->fat <= 1)) { dp_gen_option_error(err, "random", "fat", 0, 1); return NULL; }
    if (!(o->density >= 0 && o->density <= 1)) { dp_gen_option_error(err, "random", "density", 0, 1); return NULL; }
    if (!(o->regular >= 0 && o->regular <= 1)) { dp_gen_option_error(err, "random", "regular", 0, 1); return NULL; }
    if (o->jump < 1) { dp_gen_option_error(err, "random", "jump", 1, 1e9); return NULL; }
    if (!(o->ccr >= 0 && isfinite(o->ccr))) { dp_gen_option_error(err, "random", "ccr", 0, 1e300); return NULL; }
    if (o->min_work < 0 || o->max_work < o->min_work) {
        dp_error_set(err, DP_EINVAL, "random: need 0 <= min-work <= max-work, got %d and %d", o->min_work, o->max_work);
        return NULL;
    }
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int *level_start = NULL, *mark = NULL;
    char name[160];
    snprintf(name, sizeof name, "random_n%d_fat%g_density%g_regular%g_jump%d_ccr%g_seed%lu", o->n, o->fat,
             o->density, o->regular, o->jump, o->ccr, o->seed);
    b = dp_graph_builder_alloc(name, name, DP_GRAPH_COST_TIME);
    mark = dp_alloc_malloc_n((size_t)o->n, sizeof(int));
    level_start = dp_alloc_malloc_n((size_t)o->n + 1, sizeof(int));
    if (!rng || !b || !mark || !level_start) { dp_error_set(err, DP_ENOMEM, "random: out of memory"); goto done; }
    gsl_rng_set(rng, o->seed);

    /* levels: task ids are consecutive per level, level L = [level_start[L], level_start[L+1]) */
    double ideal = floor(pow((double)o->n, o->fat)); /* DAGGEN: exp(fat log n); pow rounds n^1 to n */
    long long n_edges = 0;
    int n_levels = 0, total = 0;
    while (total < o->n) {
        double lat = 1.0 - o->regular;
        double r = -lat + 2.0 * lat * gsl_rng_uniform(rng);
        int w = (int)(ideal * (1.0 + r));
        if (w < 1) w = 1;
        if (w > o->n - total) w = o->n - total;
        level_start[n_levels++] = total;
        total += w;
    }
    level_start[n_levels] = total;
    for (int v = 0; v < o->n; v++) {
        double w = o->min_work + (double)gsl_rng_uniform_int(rng, (unsigned long)(o->max_work - o->min_work) + 1);
        if (dp_graph_builder_add_op(b, NULL, "task", w, o->ccr * w) < 0) {
            const dp_error *me = dp_graph_builder_error(b);
            if (me->code != DP_OK) dp_error_set(err, me->code, "%s", me->msg);
            else dp_error_set(err, DP_ENOMEM, "random: out of memory");
            goto done;
        }
        mark[v] = -1;
    }
    for (int L = 1; L < n_levels; L++) {
        int prev = level_start[L] - level_start[L - 1];
        for (int v = level_start[L]; v < level_start[L + 1]; v++) {
            int np = 1 + (int)(o->density * prev * gsl_rng_uniform(rng));
            if (np > prev) np = prev;
            for (int k = 0; k < np; k++) {
                int pl = L - (int)(1.0 + o->jump * gsl_rng_uniform(rng));
                if (pl < 0) pl = 0;
                int lw = level_start[pl + 1] - level_start[pl];
                int pi = (int)(lw * gsl_rng_uniform(rng));
                int m = 0;
                /* next free task of that level, as DAGGEN; mark[u] == v: u is already a parent */
                while (m < lw && mark[level_start[pl] + pi] == v) { pi = (pi + 1) % lw; m++; }
                if (m == lw) continue;
                int u = level_start[pl] + pi;
                mark[u] = v;
                if (++n_edges > DP_GEN_MAX_EDGES) {
                    dp_error_set(err, DP_EINVAL, "random: more than %d edges (the generators' limit): lower density or fat",
                                 DP_GEN_MAX_EDGES);
                    goto done;
                }
                if (dp_graph_builder_add_edge(b, u, v, 0) < 0) {
                    const dp_error *me = dp_graph_builder_error(b);
                    if (me->code != DP_OK) dp_error_set(err, me->code, "%s", me->msg);
                    else dp_error_set(err, DP_ENOMEM, "random: out of memory");
                    goto done;
                }
            }
        }
    }
    g = dp_graph_builder_finish(b, err);
    /* edge u -> v carries ccr x work(u), the producer's output */
    if (g) for (int e = 0; e < g->n_edges; e++) g->edge_size[e] = g->out_size[g->edge_src[e]];
done:
    gsl_rng_free(rng);
    free(mark);
    free(level_start);
    dp_graph_builder_free(b);
    return g;
}

/* ---------------- by name ---------------- */

#define OFF(type, field) offsetof(type, field)
#define DTYPE_PARAM(type) \
    {"dtype", DP_GEN_CHOICE, OFF(type, dtype_bytes), 0, 0, "fp64=8|fp32=4|fp16=2|bf16=2|fp8=1", \
     "element type (bytes per element): fp64, fp32, fp16, bf16, fp8"}
#define TRAINING_PARAMS(type) \
    {"training", DP_GEN_FLAG, OFF(type, training), 0, 1, NULL, \
     "a training step: the forward, the loss's gradient, the backward pass and the parameter updates"}, \
    {"optimizer", DP_GEN_CHOICE, OFF(type, optimizer), 0, 0, "sgd=0|adam=1", \
     "the update with --training: sgd (2 FLOPs per weight element) or adam (12)"}

static const dp_gen_param chainmm_params[] = {
    {"matrices", DP_GEN_INT, OFF(dp_gen_chainmm_opts, matrices), 2, 25, NULL, "matrices in the chain (K; K-1 products)"},
    {"n", DP_GEN_INT64, OFF(dp_gen_chainmm_opts, n), 1, 1e9, NULL, "matrix dimension (every matrix n x n)"},
    {"blocks", DP_GEN_INT, OFF(dp_gen_chainmm_opts, blocks), 1, 4096, NULL, "blocks per matrix dimension"},
    {"partition", DP_GEN_CHOICE, OFF(dp_gen_chainmm_opts, three_d), 0, 0, "2d=0|3d=1",
     "3d: contraction split too, with reductions (Agarwal et al. 1995); 2d: not split"},
    DTYPE_PARAM(dp_gen_chainmm_opts),
    TRAINING_PARAMS(dp_gen_chainmm_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param ffnn_params[] = {
    {"layers", DP_GEN_INT, OFF(dp_gen_ffnn_opts, layers), 1, 24, NULL, "layers (matmul, bias, ReLU each)"},
    {"batch", DP_GEN_INT64, OFF(dp_gen_ffnn_opts, batch), 1, 1e9, NULL, "batch size"},
    {"in-features", DP_GEN_INT64, OFF(dp_gen_ffnn_opts, in), 1, 1e9, NULL, "input features"},
    {"hidden", DP_GEN_INT64, OFF(dp_gen_ffnn_opts, hidden), 1, 1e9, NULL, "hidden features"},
    {"out-features", DP_GEN_INT64, OFF(dp_gen_ffnn_opts, out), 1, 1e9, NULL, "output features"},
    {"batch-blocks", DP_GEN_INT, OFF(dp_gen_ffnn_opts, batch_blocks), 1, 4096, NULL, "blocks of the batch"},
    {"feature-blocks", DP_GEN_INT, OFF(dp_gen_ffnn_opts, feature_blocks), 1, 4096, NULL, "blocks of every feature dim"},
    DTYPE_PARAM(dp_gen_ffnn_opts),
    TRAINING_PARAMS(dp_gen_ffnn_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param llama_params[] = {
    {"batch", DP_GEN_INT64, OFF(dp_gen_llama_opts, batch), 1, 1e9, NULL, "batch size"},
    {"seq", DP_GEN_INT64, OFF(dp_gen_llama_opts, seq), 1, 1e9, NULL, "sequence length"},
    {"hidden", DP_GEN_INT64, OFF(dp_gen_llama_opts, hidden), 1, 1e9, NULL, "hidden size (Llama-7B: 4096)"},
    {"heads", DP_GEN_INT64, OFF(dp_gen_llama_opts, heads), 1, 1e6, NULL, "attention heads (32)"},
    {"ffn", DP_GEN_INT64, OFF(dp_gen_llama_opts, ffn), 1, 1e9, NULL, "FFN size (11008)"},
    {"vocab", DP_GEN_INT64, OFF(dp_gen_llama_opts, vocab), 1, 1e9, NULL, "vocabulary (32000; layer only)"},
    {"tp", DP_GEN_INT, OFF(dp_gen_llama_opts, tp), 1, 4096, NULL, "blocks of heads, FFN and vocabulary (tensor parallel degree)"},
    {"hidden-blocks", DP_GEN_INT, OFF(dp_gen_llama_opts, hidden_blocks), 1, 4096, NULL, "blocks of the hidden dim"},
    {"batch-blocks", DP_GEN_INT, OFF(dp_gen_llama_opts, batch_blocks), 1, 4096, NULL, "blocks of the batch"},
    {"seq-blocks", DP_GEN_INT, OFF(dp_gen_llama_opts, seq_blocks), 1, 4096, NULL, "blocks of the sequence"},
    {"layers", DP_GEN_INT, OFF(dp_gen_llama_opts, layers), 1, 1024, NULL,
     "layers stacked (1; llama-layer only: each layer's output feeds the next, one final norm and vocabulary projection)"},
    {"softmax", DP_GEN_CHOICE, OFF(dp_gen_llama_opts, softmax_split), 0, 0, "fused=0|split=1",
     "fused: one op per row block; split: max, exp, sum, divide"},
    DTYPE_PARAM(dp_gen_llama_opts),
    TRAINING_PARAMS(dp_gen_llama_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param random_params[] = {
    {"n", DP_GEN_INT, OFF(dp_gen_random_opts, n), 1, DP_GEN_MAX_OPS, NULL, "number of tasks"},
    {"fat", DP_GEN_DOUBLE, OFF(dp_gen_random_opts, fat), 0, 1, NULL, "width: n^fat tasks per level"},
    {"density", DP_GEN_DOUBLE, OFF(dp_gen_random_opts, density), 0, 1, NULL, "parents: up to density x previous level"},
    {"regular", DP_GEN_DOUBLE, OFF(dp_gen_random_opts, regular), 0, 1, NULL, "regularity of level widths"},
    {"jump", DP_GEN_INT, OFF(dp_gen_random_opts, jump), 1, 1e9, NULL, "levels an edge may span"},
    {"ccr", DP_GEN_DOUBLE, OFF(dp_gen_random_opts, ccr), 0, 1e12, NULL, "communication to computation ratio"},
    {"min-work", DP_GEN_INT, OFF(dp_gen_random_opts, min_work), 0, 1e9, NULL, "smallest task work"},
    {"max-work", DP_GEN_INT, OFF(dp_gen_random_opts, max_work), 0, 1e9, NULL, "largest task work"},
    {"seed", DP_GEN_ULONG, OFF(dp_gen_random_opts, seed), 0, 0, NULL, "seed of the GSL mt19937 generator (0 to 2^32-1; 0 is GSL's 4357)"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

#define TASK_COMMON(type) \
    {"ccr", DP_GEN_DOUBLE, OFF(type, ccr), 0, 1e12, NULL, "communication to computation ratio (edge = ccr x producer's work)"}, \
    {"min-work", DP_GEN_INT, OFF(type, min_work), 0, 1e9, NULL, "smallest task work"}, \
    {"max-work", DP_GEN_INT, OFF(type, max_work), 0, 1e9, NULL, "largest task work"}, \
    {"seed", DP_GEN_ULONG, OFF(type, seed), 0, 0, NULL, "seed of the GSL mt19937 generator (0 to 2^32-1; 0 is GSL's 4357)"}

static const dp_gen_param stg_params[] = {
    {"n", DP_GEN_INT, OFF(dp_gen_stg_opts, n), 2, 1000000, NULL, "number of tasks"},
    {"method", DP_GEN_CHOICE, OFF(dp_gen_stg_opts, method), 0, 0, "sameprob=0|samepred=1|layrprob=2|layrpred=3",
     "STG precedence method (Tobita and Kasahara 2002)"},
    {"degree", DP_GEN_DOUBLE, OFF(dp_gen_stg_opts, degree), 0, 100, NULL, "mean predecessors per task"},
    {"layers", DP_GEN_INT, OFF(dp_gen_stg_opts, layers), 0, 1000000, NULL, "layrprob, layrpred: layers (0: floor(sqrt(n)))"},
    TASK_COMMON(dp_gen_stg_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param layered_params[] = {
    {"n", DP_GEN_INT, OFF(dp_gen_layered_opts, n), 1, 1000000, NULL, "number of tasks (v)"},
    {"alpha", DP_GEN_DOUBLE, OFF(dp_gen_layered_opts, alpha), 0.05, 20, NULL,
     "shape: sqrt(v)/alpha levels of mean width alpha sqrt(v) (Topcuoglu et al. 2002)"},
    {"out-degree", DP_GEN_INT, OFF(dp_gen_layered_opts, out_degree), 1, 1000, NULL, "children per task in the next level"},
    TASK_COMMON(dp_gen_layered_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param forkjoin_params[] = {
    {"stages", DP_GEN_INT, OFF(dp_gen_forkjoin_opts, stages), 1, 10000, NULL, "fork-join stages in sequence"},
    {"branches", DP_GEN_INT, OFF(dp_gen_forkjoin_opts, branches), 1, 10000, NULL, "parallel branches per stage"},
    {"length", DP_GEN_INT, OFF(dp_gen_forkjoin_opts, length), 1, 10000, NULL, "tasks per branch (a chain)"},
    TASK_COMMON(dp_gen_forkjoin_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param sp_params[] = {
    {"n", DP_GEN_INT, OFF(dp_gen_sp_opts, n), 2, 1000000, NULL, "number of tasks"},
    {"parallel", DP_GEN_DOUBLE, OFF(dp_gen_sp_opts, parallel), 0, 1, NULL,
     "probability of a parallel (else series) composition"},
    TASK_COMMON(dp_gen_sp_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param workflow_params[] = {
    {"recipe", DP_GEN_CHOICE, OFF(dp_gen_workflow_opts, recipe), 0, 0,
     "montage=0|epigenomics=1|cybershake=2|ligo=3|genome=4|1000genome=4|srasearch=5",
     "workflow shape (WfCommons recipes' structures; genome is 1000Genome)"},
    {"width", DP_GEN_INT, OFF(dp_gen_workflow_opts, width), 1, 100000, NULL, "fan-out: images, chunks, sites, ... (montage 2..)"},
    {"ccr", DP_GEN_DOUBLE, OFF(dp_gen_workflow_opts, ccr), 0, 1e12, NULL, "communication to computation ratio (edge = ccr x producer's work)"},
    /* a program's base work, not a task's (its tasks are 0.5..1.5 times it: the help said task
     * work, and --min-work 10 --max-work 10 gave 5 to 15; a review) */
    {"min-work", DP_GEN_INT, OFF(dp_gen_workflow_opts, min_work), 0, 1e9, NULL, "smallest base work of a program (its tasks 0.5..1.5 times it)"},
    {"max-work", DP_GEN_INT, OFF(dp_gen_workflow_opts, max_work), 0, 1e9, NULL, "largest base work of a program (its tasks 0.5..1.5 times it)"},
    {"seed", DP_GEN_ULONG, OFF(dp_gen_workflow_opts, seed), 0, 0, NULL, "seed of the GSL mt19937 generator (0 to 2^32-1; 0 is GSL's 4357)"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param cnn_params[] = {
    {"modules", DP_GEN_INT, OFF(dp_gen_cnn_opts, modules), 1, 5000, NULL, "inception-style modules"},
    {"branches", DP_GEN_INT, OFF(dp_gen_cnn_opts, branches), 1, 12, NULL, "branches per module"},
    {"reduce-every", DP_GEN_INT, OFF(dp_gen_cnn_opts, reduce_every), 0, 5000, NULL,
     "a stride-2 pool after every N modules, doubling channels (0: none)"},
    {"batch", DP_GEN_INT64, OFF(dp_gen_cnn_opts, batch), 1, 1e6, NULL, "batch size"},
    {"image", DP_GEN_INT64, OFF(dp_gen_cnn_opts, image), 1, 1e5, NULL, "image side after the stem (pixels)"},
    {"channels", DP_GEN_INT64, OFF(dp_gen_cnn_opts, channels), 1, 1e6, NULL, "channels of the first modules"},
    {"classes", DP_GEN_INT64, OFF(dp_gen_cnn_opts, classes), 1, 1e7, NULL, "classifier outputs"},
    DTYPE_PARAM(dp_gen_cnn_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param rnn_params[] = {
    {"cell", DP_GEN_CHOICE, OFF(dp_gen_rnn_opts, cell), 0, 0, "lstm=0|gru=1", "recurrent cell"},
    {"layers", DP_GEN_INT, OFF(dp_gen_rnn_opts, layers), 1, 64, NULL, "stacked layers"},
    {"steps", DP_GEN_INT, OFF(dp_gen_rnn_opts, steps), 1, 100000, NULL, "time steps unrolled"},
    {"batch", DP_GEN_INT64, OFF(dp_gen_rnn_opts, batch), 1, 1e6, NULL, "batch size"},
    {"input", DP_GEN_INT64, OFF(dp_gen_rnn_opts, input), 1, 1e6, NULL, "input features"},
    {"hidden", DP_GEN_INT64, OFF(dp_gen_rnn_opts, hidden), 1, 1e6, NULL, "hidden features"},
    DTYPE_PARAM(dp_gen_rnn_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

#define ATTN_PARAMS(type) \
    {"batch", DP_GEN_INT64, OFF(type, batch), 1, 1e6, NULL, "batch size"}, \
    {"seq", DP_GEN_INT64, OFF(type, seq), 1, 1e6, NULL, "sequence length"}, \
    {"hidden", DP_GEN_INT64, OFF(type, hidden), 1, 1e6, NULL, "hidden size"}, \
    {"heads", DP_GEN_INT64, OFF(type, heads), 1, 1e6, NULL, "attention heads"}, \
    {"ffn", DP_GEN_INT64, OFF(type, ffn), 1, 1e7, NULL, "FFN size"}, \
    {"head-blocks", DP_GEN_INT, OFF(type, head_blocks), 1, 1e6, NULL, "head groups, one op each (divides heads)"}, \
    DTYPE_PARAM(type)

static const dp_gen_param transformer_params[] = {
    {"enc-layers", DP_GEN_INT, OFF(dp_gen_transformer_opts, enc_layers), 0, 1024, NULL, "encoder layers"},
    {"dec-layers", DP_GEN_INT, OFF(dp_gen_transformer_opts, dec_layers), 0, 1024, NULL,
     "decoder layers (cross-attention when there is an encoder)"},
    ATTN_PARAMS(dp_gen_transformer_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const dp_gen_param moe_params[] = {
    {"layers", DP_GEN_INT, OFF(dp_gen_moe_opts, layers), 1, 1024, NULL, "MoE transformer layers"},
    {"experts", DP_GEN_INT, OFF(dp_gen_moe_opts, experts), 1, 1024, NULL, "experts per layer"},
    {"top-k", DP_GEN_INT, OFF(dp_gen_moe_opts, top_k), 1, 1024, NULL, "experts per token (1..experts)"},
    ATTN_PARAMS(dp_gen_moe_opts),
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static void chainmm_defaults(void *o) { dp_gen_chainmm_defaults(o); }
static dp_graph *chainmm_gen(const void *o, dp_error *err) { return dp_gen_chainmm(o, err); }
static void ffnn_defaults(void *o) { dp_gen_ffnn_defaults(o); }
static dp_graph *ffnn_gen(const void *o, dp_error *err) { return dp_gen_ffnn(o, err); }
static void block_defaults(void *o) { dp_gen_llama_defaults(o, 0); }
static void layer_defaults(void *o) { dp_gen_llama_defaults(o, 1); }
static dp_graph *llama_gen(const void *o, dp_error *err) { return dp_gen_llama(o, err); }
static void random_defaults(void *o) { dp_gen_random_defaults(o); }
static dp_graph *random_gen(const void *o, dp_error *err) { return dp_gen_random(o, err); }

#define WRAP(nm, type) \
    static void nm##_defaults(void *o) { dp_gen_##nm##_defaults(o); } \
    static dp_graph *nm##_gen(const void *o, dp_error *err) { return dp_gen_##nm(o, err); }
WRAP(stg, dp_gen_stg_opts)
WRAP(layered, dp_gen_layered_opts)
WRAP(forkjoin, dp_gen_forkjoin_opts)
WRAP(sp, dp_gen_sp_opts)
WRAP(workflow, dp_gen_workflow_opts)
WRAP(cnn, dp_gen_cnn_opts)
WRAP(rnn, dp_gen_rnn_opts)
WRAP(transformer, dp_gen_transformer_opts)
WRAP(moe, dp_gen_moe_opts)
#undef WRAP

static const dp_gen_model models[] = {
    {"chainmm", "chain of matrix products, 2D or 3D block partition", sizeof(dp_gen_chainmm_opts),
     chainmm_defaults, chainmm_gen, chainmm_params},
    {"ffnn", "multi-layer perceptron (matmul, bias, ReLU), batch and feature blocks", sizeof(dp_gen_ffnn_opts),
     ffnn_defaults, ffnn_gen, ffnn_params},
    {"llama-block", "Llama attention + SwiGLU FFN, tensor-parallel blocks (Llama-7B shapes)",
     sizeof(dp_gen_llama_opts), block_defaults, llama_gen, llama_params},
    {"llama-layer", "Llama block + RMSNorms, residuals and vocabulary projection", sizeof(dp_gen_llama_opts),
     layer_defaults, llama_gen, llama_params},
    {"random", "layered random DAG (DAGGEN parameters), task-graph costs", sizeof(dp_gen_random_opts),
     random_defaults, random_gen, random_params},
    {"stg", "Kasahara's STG random task graph (sameprob, samepred, layrprob, layrpred)", sizeof(dp_gen_stg_opts),
     stg_defaults, stg_gen, stg_params},
    {"layered", "layered random DAG of Topcuoglu et al. (HEFT's generator)", sizeof(dp_gen_layered_opts),
     layered_defaults, layered_gen, layered_params},
    {"forkjoin", "fork-join stages of parallel chains", sizeof(dp_gen_forkjoin_opts), forkjoin_defaults, forkjoin_gen,
     forkjoin_params},
    {"seriesparallel", "random two-terminal series-parallel DAG", sizeof(dp_gen_sp_opts), sp_defaults, sp_gen, sp_params},
    {"workflow", "scientific workflow shape (Montage, Epigenomics, CyberShake, LIGO, 1000Genome, SRASearch)",
     sizeof(dp_gen_workflow_opts), workflow_defaults, workflow_gen, workflow_params},
    {"cnn", "branching CNN of inception-style modules, one op per operator", sizeof(dp_gen_cnn_opts), cnn_defaults,
     cnn_gen, cnn_params},
    {"rnn", "unrolled stacked LSTM or GRU, one op per cell operator", sizeof(dp_gen_rnn_opts), rnn_defaults, rnn_gen,
     rnn_params},
    {"transformer", "encoder-decoder transformer, attention in head groups", sizeof(dp_gen_transformer_opts),
     transformer_defaults, transformer_gen, transformer_params},
    {"moe", "mixture-of-experts transformer layers (router, top-k experts, combine)", sizeof(dp_gen_moe_opts),
     moe_defaults, moe_gen, moe_params},
    {NULL, NULL, 0, NULL, NULL, NULL},
};

const dp_gen_model *dp_gen_models(void) { return models; }

const dp_gen_model *dp_gen_find(const char *name)
{
    for (const dp_gen_model *m = models; m->name; m++)
        if (strcmp(m->name, name) == 0) return m;
    return NULL;
}

/* room for any model's options */
typedef union {
    dp_gen_chainmm_opts a; dp_gen_ffnn_opts b; dp_gen_llama_opts c; dp_gen_random_opts d; dp_gen_stg_opts e;
    dp_gen_layered_opts f; dp_gen_forkjoin_opts g; dp_gen_sp_opts h; dp_gen_workflow_opts i; dp_gen_cnn_opts j;
    dp_gen_rnn_opts k; dp_gen_transformer_opts l; dp_gen_moe_opts m;
} dp_gen_any_opts;

/* Look a choice up: "2d=0|3d=1" and "3d" -> 1. Returns 0 or -1. */
static int choice_value(const char *choices, const char *s, int *out)
{
    size_t n = strlen(s);
    for (const char *p = choices; *p;) {
        const char *eq = strchr(p, '=');
        if (!eq) return -1;
        if ((size_t)(eq - p) == n && strncmp(p, s, n) == 0) {
            *out = atoi(eq + 1);
            return 0;
        }
        const char *bar = strchr(eq, '|');
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

static int set_param(void *opts, const dp_gen_model *m, const dp_gen_param *p, const char *val, dp_error *err)
{
    char *end;
    char *field = (char *)opts + p->offset;
    switch (p->type) {
    case DP_GEN_INT:
    case DP_GEN_INT64:
    case DP_GEN_DOUBLE: {
        double x = strtod(val, &end);
        /* an integer parameter says so ("expected a number in 1..24" of --layers nan) */
        const char *what = p->type == DP_GEN_DOUBLE ? "a number" : "an integer";
        if (end == val || *end || !isfinite(x) || x < p->lo || x > p->hi || (p->type != DP_GEN_DOUBLE && x != floor(x)))
            /* an integer's bounds in full (%g said 1..1.67772e+07 of random's --n, below the
             * 16777216 it takes: a review); a number's as %g (0..1e+12) */
            return dp_error_set(err, DP_EINVAL, p->type == DP_GEN_DOUBLE ? "%s: --%s: expected %s in %g..%g, got '%s'"
                                : "%s: --%s: expected %s in %.0f..%.0f, got '%s'", m->name, p->name, what, p->lo, p->hi,
                                val);
        if (p->type == DP_GEN_INT) *(int *)field = (int)x;
        else if (p->type == DP_GEN_INT64) *(int64_t *)field = (int64_t)x;
        else *(double *)field = x;
        return DP_OK;
    }
    case DP_GEN_ULONG: {
        if (*val == '-') return dp_error_set(err, DP_EINVAL, "%s: --%s: expected a non-negative integer, got '%s'", m->name, p->name, val);
        errno = 0;
        unsigned long long x = strtoull(val, &end, 10);
        if (end == val || *end)
            return dp_error_set(err, DP_EINVAL, "%s: --%s: expected a non-negative integer, got '%s'", m->name, p->name, val);
        /* GSL's mt19937 takes the seed's low 32 bits: a larger seed gave another's graph, and one
         * past 2^64 was clamped without a word (a review) */
        if (errno == ERANGE || x > 4294967295ULL)
            return dp_error_set(err, DP_EINVAL, "%s: --%s: expected 0 to 4294967295 (GSL's mt19937 takes a 32-bit seed), got '%s'",
                                m->name, p->name, val);
        *(unsigned long *)field = (unsigned long)x;
        return DP_OK;
    }
    case DP_GEN_FLAG: {
        static const char *const on[] = {"1", "yes", "true", "on"}, *const off[] = {"0", "no", "false", "off"};
        for (int i = 0; i < 4; i++) {
            if (strcasecmp(val, on[i]) == 0) { *(int *)field = 1; return DP_OK; }
            if (strcasecmp(val, off[i]) == 0) { *(int *)field = 0; return DP_OK; }
        }
        return dp_error_set(err, DP_EINVAL, "%s: --%s: expected yes or no (1 or 0), got '%s'", m->name, p->name, val);
    }
    case DP_GEN_CHOICE: {
        int v;
        if (choice_value(p->choices, val, &v) != 0) {
            /* the names alone: "sgd=0|adam=1" showed the stored ints, which are no input */
            char names[256];
            size_t len = 0;
            names[0] = '\0';
            for (const char *q = p->choices; q && *q && len < sizeof names;) {
                const char *eq = strchr(q, '=');
                if (!eq) break;
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%.*s", len ? "|" : "", (int)(eq - q), q);
                const char *bar = strchr(eq, '|');
                q = bar ? bar + 1 : NULL;
            }
            return dp_error_set(err, DP_EINVAL, "%s: --%s: expected one of %s, got '%s'", m->name, p->name, names, val);
        }
        *(int *)field = v;
        return DP_OK;
    }
    }
    return dp_error_set(err, DP_EINVAL, "%s: --%s: unknown parameter type", m->name, p->name);
}

void dp_gen_param_default(const dp_gen_model *m, const dp_gen_param *p, char *buf, size_t cap)
{
    dp_gen_any_opts u;
    m->defaults(&u);
    const char *field = (const char *)&u + p->offset;
    switch (p->type) {
    case DP_GEN_INT: snprintf(buf, cap, "%d", *(const int *)field); break;
    case DP_GEN_INT64: snprintf(buf, cap, "%lld", (long long)*(const int64_t *)field); break;
    case DP_GEN_DOUBLE: snprintf(buf, cap, "%g", *(const double *)field); break;
    case DP_GEN_ULONG: snprintf(buf, cap, "%lu", *(const unsigned long *)field); break;
    case DP_GEN_FLAG: snprintf(buf, cap, "%s", *(const int *)field ? "yes" : "no"); break;
    case DP_GEN_CHOICE: {
        int v = *(const int *)field;
        snprintf(buf, cap, "?");
        for (const char *q = p->choices; q && *q;) {
            const char *eq = strchr(q, '=');
            if (!eq) break;
            if (atoi(eq + 1) == v) {
                size_t n = (size_t)(eq - q) < cap - 1 ? (size_t)(eq - q) : cap - 1;
                memcpy(buf, q, n);
                buf[n] = '\0';
                break;
            }
            const char *bar = strchr(eq, '|');
            if (!bar) break;
            q = bar + 1;
        }
        break;
    }
    }
}

/* Model `name` with the (key, value) pairs over its defaults into u, every name and value
 * checked as dp_gen_by_name documents; *model set on DP_OK. The one parser of generator
 * parameters: dp_gen_by_name generates from u, dp_gen_check stops here. */
static int parse_params(const char *name, int n_params, const char *const *keys, const char *const *values,
                        dp_gen_any_opts *u, const dp_gen_model **model, dp_error *err)
{
    const dp_gen_model *m = dp_gen_find(name);
    if (!m) {
        char list[256];
        size_t len = 0;
        list[0] = '\0';
        for (const dp_gen_model *q = models; q->name && len < sizeof list; q++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", q->name);
        return dp_error_set(err, DP_EINVAL, "unknown model '%s' (known: %s)", name, list);
    }
    if (m->opts_size > sizeof *u) return dp_error_set(err, DP_EINVAL, "%s: options too large", m->name);
    m->defaults(u);
    int optimizer_given = 0, training_given = 0;
    for (int i = 0; i < n_params; i++) {
        /* a parameter given twice (gen:ffnn?training&training=no) took the last silently */
        for (int j = 0; j < i; j++)
            if (strcmp(keys[i], keys[j]) == 0) return dp_error_set(err, DP_EINVAL, "%s: parameter --%s given twice", name, keys[i]);
        const dp_gen_param *p = m->params;
        while (p->name && strcmp(p->name, keys[i]) != 0) p++;
        if (!p->name) {
            char list[512];
            size_t len = 0;
            list[0] = '\0';
            for (const dp_gen_param *q = m->params; q->name && len < sizeof list; q++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s--%s", len ? ", " : "", q->name);
            return dp_error_set(err, DP_EINVAL, "%s: unknown parameter --%s (known: %s)", m->name, keys[i], list);
        }
        /* a name alone (a spec's gen:ffnn?training) is a yes/no parameter's yes, as graph gen's
         * --training alone is; any other parameter needs its value */
        const char *val = values[i];
        if (!val && p->type != DP_GEN_FLAG)
            return dp_error_set(err, DP_EINVAL, "%s: parameter %s needs a value (%s=VALUE)", m->name, p->name, p->name);
        if (set_param(u, m, p, val ? val : "yes", err) != DP_OK) return DP_EINVAL;
        if (strcmp(p->name, "optimizer") == 0) optimizer_given = 1;
        if (strcmp(p->name, "training") == 0) training_given = 1;
        /* a block has no vocabulary projection: --vocab 5 gave the default block without a word
         * (a review of the generators); the struct's field is read by llama-layer only */
        if (strcmp(p->name, "vocab") == 0 && strcmp(m->name, "llama-block") == 0)
            return dp_error_set(err, DP_EINVAL, "llama-block: --vocab does not apply: a block has no vocabulary projection "
                                "(llama-layer's)");
    }
    /* the optimizer is the update of a training step: given without --training it changed
     * nothing, without a word (a review); --training=no with it stays (a sweep's grid turns the
     * training step on and off under one optimizer) */
    if (optimizer_given && !training_given)
        return dp_error_set(err, DP_EINVAL, "%s: --optimizer is the update of a training step: give --training too", m->name);
    *model = m;
    return DP_OK;
}

dp_graph *dp_gen_by_name(const char *name, int n_params, const char *const *keys,
                         const char *const *values, dp_error *err)
{
    dp_gen_any_opts u;
    const dp_gen_model *m = NULL;
    if (parse_params(name, n_params, keys, values, &u, &m, err) != DP_OK) return NULL;
    return m->generate(&u, err);
}

/* "gen:MODEL?NAME=VALUE&..." parsed, then its model and parameters read into u (parse_params);
 * errors name the spec */
static int parse_spec(const char *spec, dp_gen_any_opts *u, const dp_gen_model **model, dp_error *err)
{
    char buf[1024];
    if (strncmp(spec, "gen:", 4) != 0)
        return dp_error_set(err, DP_EINVAL, "%s: a generator spec starts with gen: (gen:MODEL?NAME=VALUE&...)", spec);
    if (snprintf(buf, sizeof buf, "%s", spec + 4) >= (int)sizeof buf) return dp_error_set(err, DP_EINVAL, "%s: too long", spec);
    const char *keys[32], *vals[32];
    int n = 0;
    char *q = strchr(buf, '?');
    if (q) {
        *q++ = '\0';
        while (q && *q) {
            char *amp = strchr(q, '&');
            if (amp) *amp = '\0';
            if (!*q) { /* an empty piece (gen:ffnn?&layers=2, a trailing &): nothing */
                q = amp ? amp + 1 : NULL;
                continue;
            }
            char *eq = strchr(q, '=');
            if (eq == q || n == 32)
                return dp_error_set(err, DP_EINVAL, "%s: generator parameters are NAME=VALUE joined by & (a yes/no "
                                    "parameter's NAME alone: yes)", spec);
            if (eq) *eq = '\0';
            keys[n] = q;
            vals[n] = eq ? eq + 1 : NULL; /* a name alone: parse_params */
            n++;
            q = amp ? amp + 1 : NULL;
        }
    }
    if (parse_params(buf, n, keys, vals, u, model, err) != DP_OK) {
        dp_error_prefix(err, "%s", spec);
        return DP_EINVAL;
    }
    return DP_OK;
}

dp_graph *dp_gen_spec(const char *spec, dp_error *err)
{
    dp_gen_any_opts u;
    const dp_gen_model *m = NULL;
    if (parse_spec(spec, &u, &m, err) != DP_OK) return NULL;
    dp_graph *g = m->generate(&u, err);
    if (!g) dp_error_prefix(err, "%s", spec);
    return g;
}

int dp_gen_spec_check(const char *spec, dp_error *err)
{
    dp_gen_any_opts u;
    const dp_gen_model *m = NULL;
    return parse_spec(spec, &u, &m, err);
}

/* ---- families with randomised parameters ---- */

/* new families go at the end: a draw of an existing family must not change */
static const char *const family_names[] = {"chainmm", "ffnn", "llama-block", "llama-layer", "daggen", "stg", "layered",
                                           "forkjoin", "seriesparallel", "workflow", "cnn", "rnn", "transformer", "moe",
                                           "llama-train", NULL};

const char *const *dp_gen_families(void) { return family_names; }

static long pick(gsl_rng *r, const long *v, int n)
{
    return v[gsl_rng_uniform_int(r, (unsigned long)n)];
}

static long uni(gsl_rng *r, long lo, long hi)
{
    return lo + (long)gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1));
}

/* an integer log-uniform in lo..hi (lo >= 1): floor(exp(U[log lo, log(hi + 1)))) */
static long loguni(gsl_rng *r, long lo, long hi)
{
    const double x = exp(log((double)lo) + gsl_rng_uniform(r) * (log((double)hi + 1) - log((double)lo)));
    long v = (long)floor(x);
    return v < lo ? lo : v > hi ? hi : v;
}

/* a communication-to-computation ratio log-uniform in [0.1, 10], to 3 digits */
static double draw_ccr(gsl_rng *r)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.3g", 0.1 * pow(100.0, gsl_rng_uniform(r)));
    return strtod(buf, NULL);
}

int dp_gen_family_spec(const char *family, gsl_rng *r, char *spec, size_t cap, dp_error *err)
{
    int w;
    if (strcmp(family, "chainmm") == 0) {
        static const long ns[] = {4096, 8192, 16384, 20000};
        const long k = uni(r, 3, 8), p = uni(r, 2, 3), n = pick(r, ns, 4);
        const int three = gsl_rng_uniform(r) < 0.75;
        w = snprintf(spec, cap, "gen:chainmm?matrices=%ld&blocks=%ld&n=%ld&partition=%s", k, p, n, three ? "3d" : "2d");
    } else if (strcmp(family, "ffnn") == 0) {
        static const long bs[] = {2048, 4096, 8192, 16384}, hs[] = {4096, 8192, 16384};
        const long layers = uni(r, 2, 5), batch = pick(r, bs, 4), hid = pick(r, hs, 3), in = pick(r, hs, 3);
        const long bb = uni(r, 1, 2), fb = uni(r, 2, 4);
        w = snprintf(spec, cap, "gen:ffnn?layers=%ld&batch=%ld&in-features=%ld&hidden=%ld&out-features=%ld&batch-blocks=%ld&feature-blocks=%ld",
                     layers, batch, in, hid, in, bb, fb);
    } else if (strcmp(family, "llama-block") == 0 || strcmp(family, "llama-layer") == 0 || strcmp(family, "llama-train") == 0) {
        static const long seqs[] = {1024, 2048, 4096}, heads[] = {16, 32}, tps[] = {2, 4, 8}, hbs[] = {2, 4};
        const long seq = pick(r, seqs, 3), h = pick(r, heads, 2), tp = pick(r, tps, 3), hb = pick(r, hbs, 2);
        const int split = gsl_rng_uniform(r) < 0.25;
        /* llama-train: llama-layer's draws, one training step (backward and Adam updates) */
        const int train = strcmp(family, "llama-train") == 0;
        w = snprintf(spec, cap, "gen:%s?seq=%ld&heads=%ld&tp=%ld&hidden-blocks=%ld&softmax=%s%s", train ? "llama-layer" : family, seq,
                     h, tp, hb, split ? "split" : "fused", train ? "&training=1" : "");
    } else if (strcmp(family, "daggen") == 0) {
        const long n = uni(r, 30, 300);
        const double fat = 0.2 + 0.6 * gsl_rng_uniform(r), density = 0.1 + 0.4 * gsl_rng_uniform(r);
        const double regular = 0.2 + 0.7 * gsl_rng_uniform(r), ccr = 0.1 * (double)uni(r, 1, 40);
        const long jump = uni(r, 1, 3);
        const unsigned long seed = gsl_rng_get(r);
        w = snprintf(spec, cap, "gen:random?n=%ld&fat=%.3f&density=%.3f&regular=%.3f&jump=%ld&ccr=%.1f&seed=%lu", n, fat,
                     density, regular, jump, ccr, seed);
    } else if (strcmp(family, "stg") == 0) {
        static const char *const methods[] = {"sameprob", "samepred", "layrprob", "layrpred"};
        const long n = loguni(r, 10, 2700), m = uni(r, 0, 3);
        const double degree = 1.0 + 4.0 * gsl_rng_uniform(r), ccr = draw_ccr(r);
        const unsigned long seed = gsl_rng_get(r);
        w = snprintf(spec, cap, "gen:stg?n=%ld&method=%s&degree=%.2f&ccr=%g&seed=%lu", n, methods[m], degree, ccr, seed);
    } else if (strcmp(family, "layered") == 0) {
        /* the sets of Topcuoglu et al. 2002, section 5.1 */
        static const long vs[] = {20, 40, 60, 80, 100, 200, 300, 400, 500, 1000};
        static const double alphas[] = {0.5, 1.0, 2.0}, ccrs[] = {0.1, 0.5, 1.0, 5.0, 10.0};
        const long n = pick(r, vs, 10);
        const double alpha = alphas[gsl_rng_uniform_int(r, 3)];
        const long out = uni(r, 1, 5);
        const double ccr = ccrs[gsl_rng_uniform_int(r, 5)];
        const unsigned long seed = gsl_rng_get(r);
        w = snprintf(spec, cap, "gen:layered?n=%ld&alpha=%g&out-degree=%ld&ccr=%g&seed=%lu", n, alpha, out, ccr, seed);
    } else if (strcmp(family, "forkjoin") == 0) {
        const long stages = uni(r, 2, 8), branches = loguni(r, 3, 32), length = uni(r, 1, 4);
        const double ccr = draw_ccr(r);
        const unsigned long seed = gsl_rng_get(r);
        w = snprintf(spec, cap, "gen:forkjoin?stages=%ld&branches=%ld&length=%ld&ccr=%g&seed=%lu", stages, branches, length,
                     ccr, seed);
    } else if (strcmp(family, "seriesparallel") == 0) {
        const long n = loguni(r, 10, 2000);
        const double par = 0.2 + 0.6 * gsl_rng_uniform(r), ccr = draw_ccr(r);
        const unsigned long seed = gsl_rng_get(r);
        w = snprintf(spec, cap, "gen:seriesparallel?n=%ld&parallel=%.2f&ccr=%g&seed=%lu", n, par, ccr, seed);
    } else if (strcmp(family, "workflow") == 0) {
        static const char *const recipes[] = {"montage", "epigenomics", "cybershake", "ligo", "genome", "srasearch"};
        const long rec = uni(r, 0, 5), width = loguni(r, 4, 300);
        const double ccr = draw_ccr(r);
        const unsigned long seed = gsl_rng_get(r);
        w = snprintf(spec, cap, "gen:workflow?recipe=%s&width=%ld&ccr=%g&seed=%lu", recipes[rec], width, ccr, seed);
    } else if (strcmp(family, "cnn") == 0) {
        static const long reds[] = {0, 2, 3, 4}, batches[] = {16, 32, 64}, images[] = {28, 56}, chans[] = {64, 128, 256};
        const long modules = loguni(r, 2, 64), branches = uni(r, 2, 6);
        long red = pick(r, reds, 4);
        const long batch = pick(r, batches, 3), image = pick(r, images, 2), ch = pick(r, chans, 3);
        /* a reduction doubles the channels: with many modules and a short reduce-every the
         * channels pass dp_gen_cnn's 1e9 limit, so the reduction interval is raised to the
         * shortest the generator accepts (no further draw: every other draw is unchanged) */
        while (red > 0 && ldexp((double)ch, (int)((modules - 1) / red)) > 1e9) red++;
        w = snprintf(spec, cap, "gen:cnn?modules=%ld&branches=%ld&reduce-every=%ld&batch=%ld&image=%ld&channels=%ld", modules,
                     branches, red, batch, image, ch);
    } else if (strcmp(family, "rnn") == 0) {
        static const long batches[] = {16, 32, 64, 128}, hiddens[] = {256, 512, 1024};
        const int gru = gsl_rng_uniform(r) < 0.5;
        const long layers = uni(r, 1, 4), steps = loguni(r, 4, 256), batch = pick(r, batches, 4), hid = pick(r, hiddens, 3);
        w = snprintf(spec, cap, "gen:rnn?cell=%s&layers=%ld&steps=%ld&batch=%ld&input=%ld&hidden=%ld", gru ? "gru" : "lstm",
                     layers, steps, batch, hid, hid);
    } else if (strcmp(family, "transformer") == 0 || strcmp(family, "moe") == 0) {
        static const long hids[] = {512, 1024, 2048}, seqs[] = {128, 256, 512, 1024}, batches[] = {1, 4, 8}, pbs[] = {1, 2, 4, 8};
        const long hid = pick(r, hids, 3), seq = pick(r, seqs, 4), batch = pick(r, batches, 3), pb = pick(r, pbs, 4);
        if (family[0] == 't') {
            long enc = uni(r, 0, 6), dec = uni(r, 0, 6);
            if (enc + dec == 0) enc = 1;
            w = snprintf(spec, cap, "gen:transformer?enc-layers=%ld&dec-layers=%ld&hidden=%ld&heads=16&ffn=%ld&seq=%ld&batch=%ld"
                         "&head-blocks=%ld", enc, dec, hid, 4 * hid, seq, batch, pb);
        } else {
            static const long experts[] = {4, 8, 16, 32};
            const long layers = uni(r, 1, 4), e = pick(r, experts, 4), k = uni(r, 1, 2);
            w = snprintf(spec, cap, "gen:moe?layers=%ld&experts=%ld&top-k=%ld&hidden=%ld&heads=16&ffn=%ld&seq=%ld&batch=%ld"
                         "&head-blocks=%ld", layers, e, k, hid, 4 * hid, seq, batch, pb);
        }
    } else {
        char list[256];
        size_t len = 0;
        list[0] = '\0';
        for (const char *const *f = family_names; *f && len < sizeof list; f++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *f);
        return dp_error_set(err, DP_EINVAL, "unknown graph family '%s' (known: %s)", family, list);
    }
    if (w < 0 || (size_t)w >= cap) return dp_error_set(err, DP_EINVAL, "%s: spec longer than %zu characters", family, cap);
    return DP_OK;
}

int dp_gen_family_check(const char *list, dp_error *err)
{
    /* an empty list, or an empty name in it ("", "stg,", ",stg"), is refused alike (an empty list
     * passed and failed later, "stg," passed where ",stg" was refused: a review) */
    if (!list || !*list) return dp_error_set(err, DP_EINVAL, "no graph family named (a comma-separated list, or all)");
    for (const char *p = list; p;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) return dp_error_set(err, DP_EINVAL, "'%s': an empty family name in the list", list);
        if (len == 3 && strncmp(p, "all", 3) == 0 && (p != list || end))
            return dp_error_set(err, DP_EINVAL, "'%s': all is the whole corpus, alone, not one family of a list", list);
        int known = p == list && !end && strcmp(p, "all") == 0; /* "all" alone: the wide corpus */
        for (const char *const *f = family_names; *f && !known; f++) known = strlen(*f) == len && strncmp(*f, p, len) == 0;
        if (!known) {
            char names[256];
            size_t n = 0;
            names[0] = '\0';
            for (const char *const *f = family_names; *f && n < sizeof names; f++)
                n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "", *f);
            return dp_error_set(err, DP_EINVAL, "unknown graph family '%.*s' (known: %s, or all)", (int)len, p, names);
        }
        p = end ? end + 1 : NULL;
    }
    return DP_OK;
}

const dp_gen_model *dp_gen_model_at(int i)
{
    const dp_gen_model *t = dp_gen_models();
    if (i < 0) return NULL;
    for (int j = 0; j < i; j++)
        if (!t[j].name) return NULL;
    return t[i].name ? &t[i] : NULL;
}

const char *dp_gen_model_get_name(const dp_gen_model *m) { return m->name; }
const char *dp_gen_model_get_description(const dp_gen_model *m) { return m->description; }

const dp_gen_param *dp_gen_model_get_param(const dp_gen_model *m, int j)
{
    if (!m->params || j < 0) return NULL;
    for (int k = 0; k < j; k++)
        if (!m->params[k].name) return NULL;
    return m->params[j].name ? &m->params[j] : NULL;
}

const char *dp_gen_param_get_name(const dp_gen_param *p) { return p->name; }
const char *dp_gen_param_get_help(const dp_gen_param *p) { return p->help; }
