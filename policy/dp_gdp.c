/* dp_gdp.c: the GDP device policy (see dp_gdp.h). */
#include "dp_gdp.h"
#include "dp_alloc.h"
#include "dp_doppler.h"
#include "dp_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define F0 DP_DOPPLER_N_NODE_FEATURES

void dp_gdp_arch_default(dp_gdp_arch *a)
{
    a->hidden = 64;
    a->layers = 2;
    a->heads = 4;
    a->mlp_hidden = 64;
    a->slope = 0;
}

struct dp_gdp {
    const dp_graph *g;
    dp_gdp_arch a;
    int n, D, d, L, nh, h;  /* shapes below: n ops (= steps), D devices, d hidden, L layers, nh heads, h mlp */
    dp_nn_params p;
    dp_alloc_table owned;   /* every array below */
    int i_win, i_bin, *i_w, *i_b, i_q, i_k, i_v, i_o, i_bo, i_h1, i_hb1, i_h2, i_hb2;
    int *nptr, *nidx;   /* distinct undirected neighbours, CSR */
    float *X;           /* (n, 5) */
    float *PE;          /* (n, d) position code of step t */
    /* activations */
    float *A0;          /* (n, d) input projection pre-activation */
    float *Hs;          /* (L+1, n, d) H_0 .. H_L */
    float *Cat;         /* (L, n, 2d) [H_{l-1}, N_l] */
    float *Apre;        /* (L, n, d) */
    float *Z0;          /* (n, d) the step sequence: H_L of each step's op plus the position code */
    float *Q, *K, *V;   /* (n, d) attention projections of Z0 (nh heads of d / nh) */
    float *P;           /* (nh, n, n) attention weights */
    float *O;           /* (n, d) attention output */
    float *Z1;          /* (n, d) O W_o^T + b_o + Z0 (residual) */
    float *Upre, *U;    /* (n, h) device head hidden pre-activation, after lrelu */
    float *logits;      /* (n, D) */
    /* backward */
    float *dZ1, *dO, *dQ, *dK, *dV, *dZ0, *dH, *dA; /* (n, d); dA is also the forward's temporary */
    float *dU;          /* (n, h) */
    float *dCat;        /* (n, 2d) */
    float *scratch;     /* (dp_nn_attention_scratch(n)) */
};

void dp_gdp_free(dp_gdp *gd)
{
    if (!gd) return;
    dp_nn_params_free(&gd->p);
    dp_alloc_table_free(&gd->owned);
    free(gd);
}

/* zeroed, recorded in gd->owned (freed by dp_gdp_free) */
#define ALLOC(p, count) do { if (!DP_ALLOC_ZERO(&gd->owned, p, (size_t)(count), sizeof *(p))) goto nomem; } while (0)
#define ADD(id, name, r, c) do { if (((id) = dp_nn_params_add(&gd->p, (name), (r), (c))) < 0) goto nomem; } while (0)

dp_gdp *dp_gdp_alloc(const dp_graph *g, const dp_cost *c, const dp_gdp_arch *a, dp_error *err)
{
    if (a->hidden <= 0 || a->layers < 0 || a->heads <= 0 || a->mlp_hidden <= 0 || !(a->slope >= 0) ||
        a->hidden % a->heads != 0) {
        dp_error_set(err, DP_EINVAL, "gdp: bad network sizes (hidden %d must be a positive multiple of heads %d; layers %d, mlp_hidden %d)",
                     a->hidden, a->heads, a->layers, a->mlp_hidden);
        return NULL;
    }
    if (g->n_ops > DP_GDP_MAX_OPS) {
        dp_error_set(err, DP_EINVAL, "gdp: %d ops, more than %d (full attention keeps heads x n^2 weights; the original "
                     "splits long sequences into Transformer-XL segments, which this version does not)", g->n_ops, DP_GDP_MAX_OPS);
        return NULL;
    }
    dp_gdp *gd = dp_alloc_calloc(1, sizeof *gd);
    if (!gd) goto nomem;
    gd->g = g;
    gd->a = *a;
    const int n = gd->n = g->n_ops, D = gd->D = c->n_devices;
    const int d = gd->d = a->hidden, L = gd->L = a->layers, h = gd->h = a->mlp_hidden;
    gd->nh = a->heads;
    dp_nn_params_init(&gd->p);
    ADD(gd->i_win, "in.w", d, F0); ADD(gd->i_bin, "in.b", 1, d);
    ALLOC(gd->i_w, L + 1);
    ALLOC(gd->i_b, L + 1);
    for (int l = 0; l < L; l++) {
        char nm[DP_NN_NAME_MAX];
        snprintf(nm, sizeof nm, "sage%d.w", l + 1); ADD(gd->i_w[l], nm, d, 2 * d);
        snprintf(nm, sizeof nm, "sage%d.b", l + 1); ADD(gd->i_b[l], nm, 1, d);
    }
    ADD(gd->i_q, "att.wq", d, d); ADD(gd->i_k, "att.wk", d, d); ADD(gd->i_v, "att.wv", d, d);
    ADD(gd->i_o, "att.wo", d, d); ADD(gd->i_bo, "att.bo", 1, d);
    ADD(gd->i_h1, "head.w1", h, d); ADD(gd->i_hb1, "head.b1", 1, h);
    ADD(gd->i_h2, "head.w2", D, h); ADD(gd->i_hb2, "head.b2", 1, D);
    if (dp_nn_params_alloc(&gd->p) != DP_OK) goto nomem;

    /* undirected neighbours, each once (repeated edges and 2-cycles cannot occur twice) */
    ALLOC(gd->nptr, n + 1);
    ALLOC(gd->nidx, 2 * (size_t)g->n_edges + 1);
    int k = 0;
    for (int v = 0; v < n; v++) {
        gd->nptr[v] = k;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int u = g->edge_src[g->pred_edge[q]], dup = 0;
            for (int j = gd->nptr[v]; j < k && !dup; j++) dup = gd->nidx[j] == u;
            if (!dup) gd->nidx[k++] = u;
        }
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
            int u = g->edge_dst[e], dup = 0;
            for (int j = gd->nptr[v]; j < k && !dup; j++) dup = gd->nidx[j] == u;
            if (!dup) gd->nidx[k++] = u;
        }
    }
    gd->nptr[n] = k;
    ALLOC(gd->X, (size_t)n * F0);
    if (dp_doppler_node_features(g, c, gd->X, NULL) != DP_OK) goto nomem;
    /* the sinusoidal position code of Vaswani et al. (2017), over the step index */
    ALLOC(gd->PE, (size_t)n * d);
    for (int t = 0; t < n; t++)
        for (int i = 0; i < d; i++) {
            double ang = t / pow(10000.0, (double)(2 * (i / 2)) / d);
            gd->PE[(size_t)t * d + i] = (float)(i % 2 == 0 ? sin(ang) : cos(ang));
        }
    const size_t nd = (size_t)n * d;
    {
        /* full attention: heads x n^2 weights and an n^2 scratch, then O(n d L) activations */
        const double floats = ((double)gd->nh + 1) * n * (double)n + (double)nd * (4.0 * L + 21) + (double)n * (3.0 * h + D);
        if (dp_file_mem_check(g->source ? g->source : g->name, "GDP's attention for this graph", floats * sizeof(float), err) != DP_OK) {
            dp_gdp_free(gd);
            return NULL;
        }
    }
    ALLOC(gd->A0, nd); ALLOC(gd->Hs, (size_t)(L + 1) * nd); ALLOC(gd->Cat, (size_t)(L > 0 ? L : 1) * 2 * nd);
    ALLOC(gd->Apre, (size_t)(L > 0 ? L : 1) * nd);
    ALLOC(gd->Z0, nd); ALLOC(gd->Q, nd); ALLOC(gd->K, nd); ALLOC(gd->V, nd);
    ALLOC(gd->P, (size_t)gd->nh * n * n); ALLOC(gd->O, nd); ALLOC(gd->Z1, nd);
    ALLOC(gd->Upre, (size_t)n * h); ALLOC(gd->U, (size_t)n * h); ALLOC(gd->logits, (size_t)n * D);
    ALLOC(gd->dZ1, nd); ALLOC(gd->dU, (size_t)n * h); ALLOC(gd->dO, nd); ALLOC(gd->dQ, nd); ALLOC(gd->dK, nd);
    ALLOC(gd->dV, nd); ALLOC(gd->dZ0, nd); ALLOC(gd->dH, nd); ALLOC(gd->dA, nd); ALLOC(gd->dCat, 2 * nd);
    ALLOC(gd->scratch, dp_nn_attention_scratch(n));
    return gd;
nomem:
    dp_error_set(err, DP_ENOMEM, "gdp: out of memory for a %d-op graph", g->n_ops);
    dp_gdp_free(gd);
    return NULL;
}

int dp_gdp_init(dp_gdp *gd, gsl_rng *r)
{
    dp_nn_params *p = &gd->p;
    memset(p->param, 0, p->n * sizeof(float));
    for (int i = 0; i < p->n_tensors; i++) {
        /* weights are every tensor but the biases (one row, named *.b*) */
        const char *dot = strrchr(p->t[i].name, '.');
        if (dot && dot[1] == 'b') continue;
        int rc = dp_nn_init_orthogonal(dp_nn_param(p, i), p->t[i].rows, p->t[i].cols, 1.0, r);
        if (rc != DP_OK) return rc;
    }
    return DP_OK;
}

dp_nn_params *dp_gdp_params(dp_gdp *gd)
{
    return &gd->p;
}

/* mean of the neighbours' rows of H (n, d) into N (n, d) */
static void neighbour_mean(const dp_gdp *gd, float *N, const float *H)
{
    const int d = gd->d;
    dp_nn_sum_pool_forward(N, H, gd->nptr, gd->nidx, gd->n, d);
    for (int v = 0; v < gd->n; v++) {
        const int deg = gd->nptr[v + 1] - gd->nptr[v];
        if (deg > 1)
            for (int i = 0; i < d; i++) N[(size_t)v * d + i] /= (float)deg;
    }
}

/* copy rows: dst (n, W) columns [off, off + w) = src (n, w) */
static void put_cols(float *dst, int W, int off, const float *src, int w, int n)
{
    for (int i = 0; i < n; i++) memcpy(dst + (size_t)i * W + off, src + (size_t)i * w, (size_t)w * sizeof(float));
}

const float *dp_gdp_forward(dp_gdp *gd)
{
    const int n = gd->n, d = gd->d, L = gd->L, h = gd->h, D = gd->D, nh = gd->nh;
    const float sl = gd->a.slope;
    const size_t nd = (size_t)n * d;
    dp_nn_params *p = &gd->p;
    dp_nn_linear_forward(gd->A0, gd->X, dp_nn_param(p, gd->i_win), dp_nn_param(p, gd->i_bin), n, F0, d);
    dp_nn_leaky_relu_forward(gd->Hs, gd->A0, nd, sl);
    for (int l = 0; l < L; l++) {
        const float *Hp = gd->Hs + (size_t)l * nd;
        float *cat = gd->Cat + (size_t)l * 2 * nd, *Nb = gd->dA; /* dA is free during the forward */
        neighbour_mean(gd, Nb, Hp);
        put_cols(cat, 2 * d, 0, Hp, d, n);
        put_cols(cat, 2 * d, d, Nb, d, n);
        float *ap = gd->Apre + (size_t)l * nd;
        dp_nn_linear_forward(ap, cat, dp_nn_param(p, gd->i_w[l]), dp_nn_param(p, gd->i_b[l]), n, 2 * d, d);
        dp_nn_leaky_relu_forward(gd->Hs + (size_t)(l + 1) * nd, ap, nd, sl);
    }
    const float *HL = gd->Hs + (size_t)L * nd;
    for (int t = 0; t < n; t++) {
        const float *hr = HL + (size_t)gd->g->topo[t] * d, *pe = gd->PE + (size_t)t * d;
        float *z = gd->Z0 + (size_t)t * d;
        for (int i = 0; i < d; i++) z[i] = hr[i] + pe[i];
    }
    dp_nn_linear_forward(gd->Q, gd->Z0, dp_nn_param(p, gd->i_q), NULL, n, d, d);
    dp_nn_linear_forward(gd->K, gd->Z0, dp_nn_param(p, gd->i_k), NULL, n, d, d);
    dp_nn_linear_forward(gd->V, gd->Z0, dp_nn_param(p, gd->i_v), NULL, n, d, d);
    dp_nn_attention_forward(gd->O, gd->P, gd->Q, gd->K, gd->V, n, nh, d / nh, d / nh, 0);
    dp_nn_linear_forward(gd->Z1, gd->O, dp_nn_param(p, gd->i_o), dp_nn_param(p, gd->i_bo), n, d, d);
    for (size_t i = 0; i < nd; i++) gd->Z1[i] += gd->Z0[i];
    dp_nn_linear_forward(gd->Upre, gd->Z1, dp_nn_param(p, gd->i_h1), dp_nn_param(p, gd->i_hb1), n, d, h);
    dp_nn_leaky_relu_forward(gd->U, gd->Upre, (size_t)n * h, sl);
    dp_nn_linear_forward(gd->logits, gd->U, dp_nn_param(p, gd->i_h2), dp_nn_param(p, gd->i_hb2), n, h, D);
    return gd->logits;
}

void dp_gdp_backward(dp_gdp *gd, const float *dlogits)
{
    const int n = gd->n, d = gd->d, L = gd->L, h = gd->h, D = gd->D, nh = gd->nh;
    const float sl = gd->a.slope;
    const size_t nd = (size_t)n * d;
    dp_nn_params *p = &gd->p;
    memset(gd->dU, 0, (size_t)n * h * sizeof(float));
    dp_nn_linear_backward(gd->dU, dp_nn_grad(p, gd->i_h2), dp_nn_grad(p, gd->i_hb2), dlogits, gd->U,
                          dp_nn_param(p, gd->i_h2), n, h, D);
    float *dUpre = gd->dU; /* in place: dU is not needed after this */
    for (size_t i = 0; i < (size_t)n * h; i++) dUpre[i] *= gd->Upre[i] > 0 ? 1.0f : sl;
    memset(gd->dZ1, 0, nd * sizeof(float));
    dp_nn_linear_backward(gd->dZ1, dp_nn_grad(p, gd->i_h1), dp_nn_grad(p, gd->i_hb1), dUpre, gd->Z1,
                          dp_nn_param(p, gd->i_h1), n, d, h);
    /* Z1 = Z0 + Wo O + bo */
    memcpy(gd->dZ0, gd->dZ1, nd * sizeof(float));
    memset(gd->dO, 0, nd * sizeof(float));
    dp_nn_linear_backward(gd->dO, dp_nn_grad(p, gd->i_o), dp_nn_grad(p, gd->i_bo), gd->dZ1, gd->O,
                          dp_nn_param(p, gd->i_o), n, d, d);
    memset(gd->dQ, 0, nd * sizeof(float));
    memset(gd->dK, 0, nd * sizeof(float));
    memset(gd->dV, 0, nd * sizeof(float));
    dp_nn_attention_backward(gd->dQ, gd->dK, gd->dV, gd->dO, gd->P, gd->Q, gd->K, gd->V, n, nh, d / nh, d / nh,
                             gd->scratch);
    dp_nn_linear_backward(gd->dZ0, dp_nn_grad(p, gd->i_q), NULL, gd->dQ, gd->Z0, dp_nn_param(p, gd->i_q), n, d, d);
    dp_nn_linear_backward(gd->dZ0, dp_nn_grad(p, gd->i_k), NULL, gd->dK, gd->Z0, dp_nn_param(p, gd->i_k), n, d, d);
    dp_nn_linear_backward(gd->dZ0, dp_nn_grad(p, gd->i_v), NULL, gd->dV, gd->Z0, dp_nn_param(p, gd->i_v), n, d, d);
    /* back from the sequence order to the ops (the position code has no parameters) */
    for (int t = 0; t < n; t++)
        memcpy(gd->dH + (size_t)gd->g->topo[t] * d, gd->dZ0 + (size_t)t * d, (size_t)d * sizeof(float));
    for (int l = L - 1; l >= 0; l--) {
        /* dH holds dL/dH_{l+1} */
        for (size_t i = 0; i < nd; i++) gd->dA[i] = gd->dH[i] * (gd->Apre[(size_t)l * nd + i] > 0 ? 1.0f : sl);
        memset(gd->dCat, 0, 2 * nd * sizeof(float));
        dp_nn_linear_backward(gd->dCat, dp_nn_grad(p, gd->i_w[l]), dp_nn_grad(p, gd->i_b[l]), gd->dA,
                              gd->Cat + (size_t)l * 2 * nd, dp_nn_param(p, gd->i_w[l]), n, 2 * d, d);
        /* dH_l = the self half + the mean's transpose applied to the neighbour half */
        for (int v = 0; v < n; v++) memcpy(gd->dH + (size_t)v * d, gd->dCat + (size_t)v * 2 * d, (size_t)d * sizeof(float));
        for (int v = 0; v < n; v++) {
            const int deg = gd->nptr[v + 1] - gd->nptr[v];
            float *dn = gd->dCat + (size_t)v * 2 * d + d;
            if (deg > 1)
                for (int i = 0; i < d; i++) dn[i] /= (float)deg;
            for (int j = gd->nptr[v]; j < gd->nptr[v + 1]; j++) {
                float *dh = gd->dH + (size_t)gd->nidx[j] * d;
                for (int i = 0; i < d; i++) dh[i] += dn[i];
            }
        }
    }
    memset(gd->dA, 0, nd * sizeof(float));
    dp_nn_leaky_relu_backward(gd->dA, gd->dH, gd->A0, nd, sl);
    dp_nn_linear_backward(NULL, dp_nn_grad(p, gd->i_win), dp_nn_grad(p, gd->i_bin), gd->dA, gd->X,
                          dp_nn_param(p, gd->i_win), n, F0, d);
}
