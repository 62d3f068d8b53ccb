/* dp_doppler.c: the SEL and PLC networks (see dp_doppler.h). */
#include "dp_doppler.h"
#include "dp_alloc.h"
#include "dp_file.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ZS_EPS 1e-6f

void dp_doppler_arch_default(dp_doppler_arch *a)
{
    a->hidden = 128;
    a->mlp_hidden = 64;
    a->steps = 6;
    a->edge_hidden = 128;
    a->slope = 0.1f;
    a->cp_embeddings = 1;
    a->device_features = DP_ENV_FEATURES_DOPPLER;
    a->device_magnitude = 0;
    a->sel_dynamic = 0;
    a->no_grad = 0;
}

/* ---- per-graph inputs ---- */

static void raw_features(const dp_graph *g, const dp_cost *c, const double *bl, const double *tl, float *Xraw)
{
    const int n = g->n_ops, F = DP_DOPPLER_N_NODE_FEATURES;
    for (int v = 0; v < n; v++) {
        double in = 0, out = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) in += dp_cost_mean_comm(c, g->pred_edge[q]);
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) out += dp_cost_mean_comm(c, e);
        float *x = Xraw + (size_t)v * F;
        x[0] = (float)dp_cost_mean_op(c, v);
        x[1] = (float)bl[v];
        x[2] = (float)tl[v];
        x[3] = (float)in;
        x[4] = (float)out;
    }
}

int dp_doppler_node_features(const dp_graph *g, const dp_cost *c, float *X, float *Xraw)
{
    const int n = g->n_ops, F = DP_DOPPLER_N_NODE_FEATURES;
    double *bl = dp_alloc_malloc_n(n, sizeof(double)), *tl = dp_alloc_malloc_n(n, sizeof(double));
    float *raw = Xraw ? Xraw : dp_alloc_malloc_n((size_t)n * F, sizeof(float));
    float mean[DP_DOPPLER_N_NODE_FEATURES], rstd[DP_DOPPLER_N_NODE_FEATURES];
    int rc = DP_ENOMEM;
    if (bl && tl && raw) {
        dp_cost_levels(g, c, bl, tl);
        raw_features(g, c, bl, tl, raw);
        dp_nn_zscore_forward(X, mean, rstd, raw, n, F, ZS_EPS);
        rc = DP_OK;
    }
    if (raw != Xraw) free(raw);
    free(bl); free(tl);
    return rc;
}

static int build_features(dp_doppler *dd)
{
    const dp_graph *g = dd->g;
    const dp_cost *c = dd->c;
    const int n = g->n_ops, F = DP_DOPPLER_N_NODE_FEATURES;
    double *bl = dp_alloc_malloc_n(n, sizeof(double)), *tl = dp_alloc_malloc_n(n, sizeof(double));
    float *mean = dp_alloc_malloc_n(F, sizeof(float)), *rstd = dp_alloc_malloc_n(F, sizeof(float));
    if (!bl || !tl || !mean || !rstd) {
        free(bl); free(tl); free(mean); free(rstd);
        return DP_ENOMEM;
    }
    dp_cost_levels(g, c, bl, tl);
    raw_features(g, c, bl, tl, dd->Xraw);
    /* costs beyond float's range (a machine of extreme --comm-ratio or --bandwidth) give inputs
     * the networks cannot take: said as such, not as a failed allocation */
    for (size_t i = 0; i < (size_t)n * F; i++)
        if (!isfinite(dd->Xraw[i])) {
            free(bl); free(tl); free(mean); free(rstd);
            return DP_ERANGE;
        }
    dp_nn_zscore_forward(dd->X, mean, rstd, dd->Xraw, n, F, ZS_EPS);

    /* paths: next op on the b-path (successor attaining the b-level) and the t-path */
    int *bnext = dp_alloc_malloc_n(n, sizeof(int)), *tnext = dp_alloc_malloc_n(n, sizeof(int));
    int *blen = dp_alloc_malloc_n(n, sizeof(int)), *tlen = dp_alloc_malloc_n(n, sizeof(int));
    int rc = DP_ENOMEM;
    if (!bnext || !tnext || !blen || !tlen) goto out;
    for (int v = 0; v < n; v++) {
        int best = -1;
        double bv = -INFINITY;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
            int w = g->edge_dst[e];
            double x = dp_cost_mean_comm(c, e) + bl[w];
            if (x > bv || (x == bv && w < best)) { bv = x; best = w; }
        }
        bnext[v] = best;
        best = -1;
        bv = -INFINITY;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int e = g->pred_edge[q], u = g->edge_src[e];
            double x = tl[u] + dp_cost_mean_op(c, u) + dp_cost_mean_comm(c, e);
            if (x > bv || (x == bv && u < best)) { bv = x; best = u; }
        }
        tnext[v] = best;
    }
    /* lengths: b-paths in reverse topological order, t-paths in topological order */
    for (int k = n - 1; k >= 0; k--) {
        int v = g->topo[k];
        blen[v] = 1 + (bnext[v] >= 0 ? blen[bnext[v]] : 0);
    }
    for (int k = 0; k < n; k++) {
        int v = g->topo[k];
        tlen[v] = 1 + (tnext[v] >= 0 ? tlen[tnext[v]] : 0);
    }
    /* the chains for the O(n d) path sums: b-paths follow successors (reverse topological order
     * visits a successor first), t-paths predecessors (topological order). The paths themselves
     * are never listed: their lengths sum to O(n^2) on a chain. */
    dd->bnext = bnext;
    dd->tnext = tnext;
    bnext = tnext = NULL;
    dd->rtopo = dp_alloc_malloc_n(n > 0 ? n : 1, sizeof(int));
    if (!dd->rtopo) goto out;
    for (int k = 0; k < n; k++) dd->rtopo[k] = g->topo[n - 1 - k];

    /* the bidirected graph with the edge feature (repeated pairs once) */
    {
        int E = g->n_edges;
        int *src = dp_alloc_malloc_n(2 * (size_t)E + 1, sizeof(int)), *dst = dp_alloc_malloc_n(2 * (size_t)E + 1, sizeof(int));
        float *f = dp_alloc_malloc_n(2 * (size_t)E + 1, sizeof(float)), *fz = dp_alloc_malloc_n(2 * (size_t)E + 1, sizeof(float));
        int m = 0;
        if (!src || !dst || !f || !fz) {
            free(src); free(dst); free(f); free(fz);
            goto out;
        }
        for (int u = 0; u < n; u++)
            for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
                int w = g->edge_dst[e], dup = 0;
                for (int e2 = g->succ_ptr[u]; e2 < e && !dup; e2++) dup = g->edge_dst[e2] == w;
                if (dup) continue;
                float x = (float)dp_cost_mean_comm(c, e);
                src[m] = u; dst[m] = w; f[m++] = x;
                src[m] = w; dst[m] = u; f[m++] = x;
            }
        float em, er;
        if (m > 0) dp_nn_zscore_forward(fz, &em, &er, f, m, 1, ZS_EPS);
        dd->eg = dp_nn_ecgraph_build(n, m, src, dst, fz, NULL);
        free(src); free(dst); free(f); free(fz);
        if (!dd->eg) goto out;
    }
    rc = DP_OK;
out:
    free(bl); free(tl); free(mean); free(rstd);
    free(bnext); free(tnext); free(blen); free(tlen);
    return rc;
}

/* ---- the model: parameters sized by the architecture only ---- */

/* allocate the per-op buffers (in dd->owned), or (bytes != NULL) only add up their sizes */
static int doppler_buffers(dp_doppler *dd, size_t *bytes)
{
    const int n = dd->n, D = dd->D, d = dd->a.hidden, h = dd->a.mlp_hidden;
#define BUF(p, count) do { size_t k_ = (size_t)(count); \
        if (bytes) *bytes += k_ * sizeof *(p); \
        else if (!DP_ALLOC_ZERO(&dd->owned, p, k_, sizeof *(p))) return DP_ENOMEM; } while (0)
    const size_t nd = (size_t)n * d, nD = (size_t)n * D, C = (size_t)dd->chunk, CD = C * D;
    const size_t n_chunks = ((size_t)n + C - 1) / C;
    BUF(dd->s_H, nd); BUF(dd->s_Fpre, nd); BUF(dd->s_Bp, nd); BUF(dd->s_Tp, nd);
    BUF(dd->s_Bm, d); BUF(dd->s_Br, d); BUF(dd->s_Tm, d); BUF(dd->s_Tr, d);
    BUF(dd->s_cat, 4 * nd); BUF(dd->s_A, (size_t)n * h); BUF(dd->s_Aact, (size_t)n * h); BUF(dd->s_score, n);
    /* no_grad (a placement): the forward's buffers only, the device features of one step
     * (p_DFz slot 0, dfz_of) and p_dtmp for the forward's (D, FD) temporary */
    const int ng = dd->a.no_grad;
    if (!ng) { BUF(dd->s_dscore, n); BUF(dd->s_dH, nd); }
    BUF(dd->s_dP, nd);
    BUF(dd->p_H, nd); BUF(dd->p_Fpre, nd); BUF(dd->p_F, nd);
    BUF(dd->p_S, (size_t)D * d); BUF(dd->p_op, n);
    BUF(dd->p_DFz, (ng ? (size_t)D : nD) * dd->FD); BUF(dd->p_L1, CD * d); BUF(dd->p_Sst, CD * d);
    BUF(dd->p_Sm, C * d); BUF(dd->p_Sr, C * d); BUF(dd->p_cat, CD * 2 * d); BUF(dd->p_A, CD * h);
    BUF(dd->p_Sck, (n_chunks ? n_chunks : 1) * D * d); BUF(dd->p_Srep, (size_t)D * d);
    BUF(dd->p_Q, (size_t)n * h);
    BUF(dd->p_wT, (size_t)dd->FD * d + 2 * (size_t)d * h + h);
    if (!ng) { BUF(dd->p_dQ, (size_t)n * h); BUF(dd->p_dlogits, nD); BUF(dd->p_dH, nd); BUF(dd->p_dF, nd); }
    BUF(dd->p_Aact, CD * h);
    if (!ng) BUF(dd->p_dAact, CD * h);
    BUF(dd->p_dS, (size_t)D * d);
    if (!ng) BUF(dd->p_acc, (size_t)D * d);
    BUF(dd->p_dtmp, (size_t)(ng ? D : n > D ? n : D) * (d > dd->FD ? d : dd->FD));
    BUF(dd->devfeat, (size_t)D * dd->FE);
    if (dd->a.sel_dynamic) {
        const size_t nn = n > 0 ? (size_t)n : 1;
        BUF(dd->sd_off, nn + 1);
        BUF(dd->sd_A, nn * DP_DOPPLER_SEL_DYN_HIDDEN); BUF(dd->sd_Aact, nn * DP_DOPPLER_SEL_DYN_HIDDEN);
        BUF(dd->sd_dA, nn * DP_DOPPLER_SEL_DYN_HIDDEN);
        BUF(dd->sd_tmp, nn * 3); BUF(dd->sd_rank, nn);
        /* the feature record's first size: one row per op (it grows with the ready sets) */
        if (bytes) *bytes += nn * DP_DOPPLER_SEL_DYN_FEATURES * sizeof(float);
    }
#undef BUF
    return DP_OK;
}

dp_doppler_model *dp_doppler_model_alloc(const dp_doppler_arch *a, dp_error *err)
{
    if (a->hidden <= 0 || a->mlp_hidden <= 0 || a->steps <= 0 || a->edge_hidden <= 0 || !(a->slope >= 0)) {
        dp_error_set(err, DP_EINVAL, "DOPPLER network sizes must be positive (hidden %d, mlp_hidden %d, steps %d, edge_hidden %d)",
                     a->hidden, a->mlp_hidden, a->steps, a->edge_hidden);
        return NULL;
    }
    if (a->hidden > 4096 || a->mlp_hidden > 4096 || a->steps > 64 || a->edge_hidden > 4096) {
        dp_error_set(err, DP_EINVAL, "DOPPLER network sizes too large (hidden and widths at most 4096, steps at most 64)");
        return NULL;
    }
    if (a->device_features != DP_ENV_FEATURES_DOPPLER && a->device_features != DP_ENV_FEATURES_ENGINE &&
        a->device_features != DP_ENV_FEATURES_HINT) {
        dp_error_set(err, DP_EINVAL, "DOPPLER: unknown device feature set %d", a->device_features);
        return NULL;
    }
    if (a->sel_dynamic != 0 && a->sel_dynamic != 1) {
        dp_error_set(err, DP_EINVAL, "DOPPLER: sel_dynamic must be 0 or 1, got %d", a->sel_dynamic);
        return NULL;
    }
    if (a->device_magnitude != 0 && a->device_magnitude != 1) {
        dp_error_set(err, DP_EINVAL, "DOPPLER: device_magnitude must be 0 or 1, got %d", a->device_magnitude);
        return NULL;
    }
    dp_doppler_model *m = dp_alloc_calloc(1, sizeof *m);
    if (!m) {
        dp_error_set(err, DP_ENOMEM, "out of memory for the DOPPLER parameters");
        return NULL;
    }
    const int F = DP_DOPPLER_N_NODE_FEATURES, d = a->hidden, h = a->mlp_hidden;
    m->a = *a;
    m->FE = dp_env_n_features((dp_env_features)a->device_features);
    m->FD = m->FE * (1 + a->device_magnitude);
    dp_nn_params_init(&m->sel);
    dp_nn_params_init(&m->plc);
    /* SEL parameters */
    if (dp_mpnn_declare(&m->sel_mp, &m->sel, "mpnn", F, d, a->edge_hidden, a->steps) != DP_OK) goto nomem;
    m->s_fw = dp_nn_params_add(&m->sel, "feat.w", d, F);
    m->s_fb = dp_nn_params_add(&m->sel, "feat.b", 1, d);
    m->s_w1 = dp_nn_params_add(&m->sel, "mlp.w1", h, 4 * d);
    m->s_b1 = dp_nn_params_add(&m->sel, "mlp.b1", 1, h);
    m->s_w2 = dp_nn_params_add(&m->sel, "mlp.w2", 1, h);
    m->s_b2 = dp_nn_params_add(&m->sel, "mlp.b2", 1, 1);
    m->s_dw1 = m->s_db1 = m->s_dw2 = -1;
    if (a->sel_dynamic) {
        /* no output bias: the softmax over the ready set ignores it */
        m->s_dw1 = dp_nn_params_add(&m->sel, "dyn.w1", DP_DOPPLER_SEL_DYN_HIDDEN, DP_DOPPLER_SEL_DYN_FEATURES);
        m->s_db1 = dp_nn_params_add(&m->sel, "dyn.b1", 1, DP_DOPPLER_SEL_DYN_HIDDEN);
        m->s_dw2 = dp_nn_params_add(&m->sel, "dyn.w2", 1, DP_DOPPLER_SEL_DYN_HIDDEN);
        if (m->s_dw1 < 0 || m->s_db1 < 0 || m->s_dw2 < 0) goto nomem;
    }
    if (m->s_b2 < 0 || dp_nn_params_alloc(&m->sel) != DP_OK) goto nomem;
    m->sel_mp.p = &m->sel;
    /* PLC parameters: the device branch reads FD features of ONE device, so the device count
     * sizes nothing here */
    if (dp_mpnn_declare(&m->plc_mp, &m->plc, "mpnn", F, d, a->edge_hidden, a->steps) != DP_OK) goto nomem;
    m->p_dw = dp_nn_params_add(&m->plc, "dev.w", d, m->FD);
    m->p_db = dp_nn_params_add(&m->plc, "dev.b", 1, d);
    m->p_fw = dp_nn_params_add(&m->plc, "feat.w", d, F);
    m->p_fb = dp_nn_params_add(&m->plc, "feat.b", 1, d);
    m->p_w1 = dp_nn_params_add(&m->plc, "mlp.w1", h, 4 * d);
    m->p_b1 = dp_nn_params_add(&m->plc, "mlp.b1", 1, h);
    m->p_w2 = dp_nn_params_add(&m->plc, "mlp.w2", 1, h);
    m->p_b2 = dp_nn_params_add(&m->plc, "mlp.b2", 1, 1);
    if (m->p_b2 < 0 || dp_nn_params_alloc(&m->plc) != DP_OK) goto nomem;
    m->plc_mp.p = &m->plc;
    return m;
nomem:
    dp_doppler_model_free(m);
    dp_error_set(err, DP_ENOMEM, "out of memory for the DOPPLER parameters");
    return NULL;
}

void dp_doppler_model_free(dp_doppler_model *m)
{
    if (!m) return;
    dp_nn_params_free(&m->sel);
    dp_nn_params_free(&m->plc);
    free(m);
}

static int init_block(dp_nn_params *p, const int *ws, int nw, gsl_rng *r)
{
    for (int i = 0; i < nw; i++) {
        int rc = dp_nn_init_orthogonal(dp_nn_param(p, ws[i]), p->t[ws[i]].rows, p->t[ws[i]].cols, 1.0, r);
        if (rc != DP_OK) return rc;
    }
    return DP_OK;
}

int dp_doppler_model_init(dp_doppler_model *m, gsl_rng *r)
{
    /* biases are zero already (calloc) but a re-init must clear them */
    memset(m->sel.param, 0, m->sel.n * sizeof(float));
    memset(m->plc.param, 0, m->plc.n * sizeof(float));
    int rc = dp_mpnn_init(&m->sel_mp, r);
    if (rc != DP_OK) return rc;
    int sw[] = {m->s_fw, m->s_w1, m->s_w2};
    if ((rc = init_block(&m->sel, sw, 3, r)) != DP_OK) return rc;
    if ((rc = dp_mpnn_init(&m->plc_mp, r)) != DP_OK) return rc;
    int pw[] = {m->p_dw, m->p_fw, m->p_w1, m->p_w2};
    if ((rc = init_block(&m->plc, pw, 4, r)) != DP_OK) return rc;
    /* the dynamic SEL last, so every other tensor draws what it draws without it; its output
     * layer stays zero: the first policy is the static one */
    if (m->a.sel_dynamic) {
        int dw[] = {m->s_dw1};
        rc = init_block(&m->sel, dw, 1, r);
    }
    return rc;
}

/* ---- a workspace: the model bound to one graph and device count ---- */

/* zeroed, recorded in dd->owned (freed by dp_doppler_free) */
#define ALLOC(p, count) do { if (!DP_ALLOC_ZERO(&dd->owned, p, (size_t)(count), sizeof *(p))) goto nomem; } while (0)

dp_doppler *dp_doppler_bind(dp_doppler_model *m, const dp_graph *g, const dp_cost *c, dp_error *err)
{
    return dp_doppler_bind_chunked(m, g, c, 0, err);
}

dp_doppler *dp_doppler_bind_chunked(dp_doppler_model *m, const dp_graph *g, const dp_cost *c, int chunk_steps, dp_error *err)
{
    dp_doppler *dd = dp_alloc_calloc(1, sizeof *dd);
    if (!dd) goto nomem;
    dd->g = g;
    dd->c = c;
    dd->m = m;
    dd->a = m->a;
    const int n = g->n_ops, D = c->n_devices, F = DP_DOPPLER_N_NODE_FEATURES;
    dd->n = n;
    if (chunk_steps <= 0) chunk_steps = n <= DP_DOPPLER_STEP_CACHE_MAX ? n : DP_DOPPLER_STEP_CHUNK;
    dd->chunk = chunk_steps < n ? chunk_steps : n > 0 ? n : 1;
    dd->FD = m->FD;
    dd->FE = m->FE;
    dd->magnitude_unit = dp_cost_lower_bound(g, c);
    if (!(dd->magnitude_unit > 0) || !isfinite(dd->magnitude_unit)) dd->magnitude_unit = 1.0;
    dd->D = D;
    dd->sel = &m->sel;
    dd->plc = &m->plc;
    dd->s_fw = m->s_fw; dd->s_fb = m->s_fb; dd->s_w1 = m->s_w1; dd->s_b1 = m->s_b1; dd->s_w2 = m->s_w2; dd->s_b2 = m->s_b2;
    dd->p_dw = m->p_dw; dd->p_db = m->p_db; dd->p_fw = m->p_fw; dd->p_fb = m->p_fb;
    dd->p_w1 = m->p_w1; dd->p_b1 = m->p_b1; dd->p_w2 = m->p_w2; dd->p_b2 = m->p_b2;
    ALLOC(dd->X, (size_t)n * F);
    ALLOC(dd->Xraw, (size_t)n * F);
    int frc = build_features(dd);
    if (frc == DP_ERANGE) {
        dp_doppler_free(dd);
        dp_error_set(err, DP_EINVAL, "%s: costs beyond the range of DOPPLER's inputs (an op, path or transfer time over "
                     "3.4e38 in the cost model's unit, float's limit): the machine's --comm-ratio, --bandwidth or "
                     "--peak-flops is extreme", g->source ? g->source : g->name);
        return NULL;
    }
    if (frc != DP_OK) goto nomem;
    /* the MPNNs: the model's tensor ids, this graph's caches */
    dd->sel_mp = m->sel_mp;
    dd->plc_mp = m->plc_mp;
    dd->sel_mp.no_grad = dd->plc_mp.no_grad = dd->a.no_grad;
    /* what the rest needs, before allocating it: the model's parameters with gradient and Adam
     * moments (counted for every workspace: an upper bound), the message-passing caches of both
     * networks and the per-op buffers */
    {
        size_t bytes = 4 * (dd->sel->n + dd->plc->n) * sizeof(float);
        bytes += dp_mpnn_bytes(&dd->sel_mp, dd->eg) + dp_mpnn_bytes_sharing(&dd->plc_mp, dd->eg);
        doppler_buffers(dd, &bytes);
        dd->bytes = bytes + ((size_t)n * F * 2 + (size_t)n * 3) * sizeof(float);
        if (dp_file_mem_check(g->source ? g->source : g->name, "building DOPPLER's networks for this graph", (double)dd->bytes, err) != DP_OK) {
            dp_doppler_free(dd);
            return NULL;
        }
    }
    if (dp_mpnn_alloc(&dd->sel_mp, dd->sel, dd->eg) != DP_OK) goto nomem;
    /* the PLC's MPNN runs after the SEL's, forward and backward (prepare, dp_doppler_backward):
     * it shares the SEL's one-step caches and gradient buffers */
    if (dp_mpnn_alloc_sharing(&dd->plc_mp, dd->plc, dd->eg, &dd->sel_mp) != DP_OK) goto nomem;
    if (doppler_buffers(dd, NULL) != DP_OK) goto nomem;
    if (dd->a.sel_dynamic) {
        dd->sd_cap = n > 0 ? (size_t)n : 1;
        if (!(dd->sd_feat = dp_alloc_malloc_n(dd->sd_cap * DP_DOPPLER_SEL_DYN_FEATURES, sizeof(float)))) goto nomem;
    }
    return dd;
nomem:
    dp_doppler_free(dd);
    dp_error_set(err, DP_ENOMEM, "%s: out of memory for the DOPPLER networks", g->source ? g->source : "graph");
    return NULL;
}

dp_doppler *dp_doppler_alloc(const dp_graph *g, const dp_cost *c, const dp_doppler_arch *a, dp_error *err)
{
    dp_doppler_model *m = dp_doppler_model_alloc(a, err);
    if (!m) return NULL;
    dp_doppler *dd = dp_doppler_bind(m, g, c, err);
    if (!dd) {
        dp_doppler_model_free(m);
        return NULL;
    }
    dd->own_model = 1;
    return dd;
}

void dp_doppler_free(dp_doppler *dd)
{
    if (!dd) return;
    dp_nn_ecgraph_free(dd->eg);
    free(dd->bnext); free(dd->tnext); free(dd->rtopo);
    free(dd->sd_feat);
    dp_mpnn_free(&dd->sel_mp);
    dp_mpnn_free(&dd->plc_mp);
    if (dd->own_model) dp_doppler_model_free(dd->m);
    dp_alloc_table_free(&dd->owned);
    free(dd);
}

int dp_doppler_init(dp_doppler *dd, gsl_rng *r)
{
    return dp_doppler_model_init(dd->m, r);
}

void dp_doppler_zero_grad(dp_doppler *dd)
{
    dp_nn_params_zero_grad(dd->sel);
    dp_nn_params_zero_grad(dd->plc);
    if (dd->a.no_grad) return; /* no per-op gradient buffers */
    const size_t nd = (size_t)dd->n * dd->a.hidden;
    memset(dd->s_dscore, 0, (size_t)dd->n * sizeof(float));
    memset(dd->p_dH, 0, nd * sizeof(float));
    memset(dd->p_dF, 0, nd * sizeof(float));
    memset(dd->p_dQ, 0, (size_t)dd->n * dd->a.mlp_hidden * sizeof(float));
}

/* copy a (rows, w) block into columns [off, off+w) of a (rows, W) matrix */
static void put_cols(float *dst, int W, int off, const float *src, int w, int rows)
{
    for (int i = 0; i < rows; i++) memcpy(dst + (size_t)i * W + off, src + (size_t)i * w, (size_t)w * sizeof(float));
}

/* SEL's scoring head up to the MLP's hidden layer, from s_Fpre, s_H, s_Bp and s_Tp: s_cat, s_A
 * and s_Aact (prepare; and the backward when a previous backward has written its gradients
 * over them: the same calls on the same inputs, so the same bits) */
static void sel_head_forward(dp_doppler *dd)
{
    const int n = dd->n, d = dd->a.hidden, h = dd->a.mlp_hidden;
    const float sl = dd->a.slope;
    const size_t nd = (size_t)n * d;
    const dp_nn_params *S = dd->sel;
    /* concatenation [lrelu(F), H, zscore(B), zscore(T)] written straight into s_cat: the
     * z-scores go through s_dP as a temporary */
    float *tmp = dd->s_dP;
    dp_nn_leaky_relu_forward(tmp, dd->s_Fpre, nd, sl);
    put_cols(dd->s_cat, 4 * d, 0, tmp, d, n);
    put_cols(dd->s_cat, 4 * d, d, dd->s_H, d, n);
    if (dd->a.cp_embeddings) {
        dp_nn_zscore_forward(tmp, dd->s_Bm, dd->s_Br, dd->s_Bp, n, d, ZS_EPS);
        put_cols(dd->s_cat, 4 * d, 2 * d, tmp, d, n);
        dp_nn_zscore_forward(tmp, dd->s_Tm, dd->s_Tr, dd->s_Tp, n, d, ZS_EPS);
        put_cols(dd->s_cat, 4 * d, 3 * d, tmp, d, n);
    } else {
        /* ablation: the path inputs are zero, so they carry no information and no gradient */
        memset(tmp, 0, nd * sizeof(float));
        put_cols(dd->s_cat, 4 * d, 2 * d, tmp, d, n);
        put_cols(dd->s_cat, 4 * d, 3 * d, tmp, d, n);
    }
    dp_nn_linear_forward(dd->s_A, dd->s_cat, dp_nn_param(S, dd->s_w1), dp_nn_param(S, dd->s_b1), n, 4 * d, h);
    dp_nn_leaky_relu_forward(dd->s_Aact, dd->s_A, (size_t)n * h, sl);
}

void dp_doppler_prepare(dp_doppler *dd)
{
    const int n = dd->n, d = dd->a.hidden, h = dd->a.mlp_hidden, F = DP_DOPPLER_N_NODE_FEATURES;
    const float sl = dd->a.slope;
    const size_t nd = (size_t)n * d;
    const dp_nn_params *S = dd->sel, *P = dd->plc;
    /* SEL */
    dd->s_Hpre = (float *)dp_mpnn_forward(&dd->sel_mp, dd->X);
    dp_nn_leaky_relu_forward(dd->s_H, dd->s_Hpre, nd, sl);
    dp_nn_linear_forward(dd->s_Fpre, dd->X, dp_nn_param(S, dd->s_fw), dp_nn_param(S, dd->s_fb), n, F, d);
    dp_nn_chain_sum_forward(dd->s_Bp, dd->s_H, dd->bnext, dd->rtopo, n, d);
    dp_nn_chain_sum_forward(dd->s_Tp, dd->s_H, dd->tnext, dd->g->topo, n, d);
    sel_head_forward(dd);
    dd->sel_spent = 0;
    dp_nn_linear_forward(dd->s_score, dd->s_Aact, dp_nn_param(S, dd->s_w2), dp_nn_param(S, dd->s_b2), n, h, 1);
    /* PLC per-op parts */
    dd->p_Hpre = (float *)dp_mpnn_forward(&dd->plc_mp, dd->X);
    dp_nn_leaky_relu_forward(dd->p_H, dd->p_Hpre, nd, sl);
    dp_nn_linear_forward(dd->p_Fpre, dd->X, dp_nn_param(P, dd->p_fw), dp_nn_param(P, dd->p_fb), n, F, d);
    dp_nn_leaky_relu_forward(dd->p_F, dd->p_Fpre, nd, sl);
    /* the op's part of the scoring MLP's first layer, the same for every device and step:
     * Q = F W1[:, d:2d]^T + H W1[:, 2d:3d]^T + b1 (W1 is (h, 4d), its column blocks act on
     * [device features, F, H, device sums]) */
    const float *w1 = dp_nn_param(P, dd->p_w1);
    for (int v = 0; v < n; v++) memcpy(dd->p_Q + (size_t)v * h, dp_nn_param(P, dd->p_b1), (size_t)h * sizeof(float));
    dp_nn_gemm(0, 1, n, h, d, 1.0f, dd->p_F, d, w1 + d, 4 * d, 1.0f, dd->p_Q, h);
    dp_nn_gemm(0, 1, n, h, d, 1.0f, dd->p_H, d, w1 + 2 * d, 4 * d, 1.0f, dd->p_Q, h);
    /* the weights of a step's products, transposed once here instead of at every step (their
     * transposing copy was a twentieth of a training run, perf) */
    const int FD = dd->FD;
    float *dwT = dd->p_wT, *w1aT = dwT + (size_t)FD * d, *w1bT = w1aT + (size_t)d * h, *w2T = w1bT + (size_t)d * h;
    const float *dw = dp_nn_param(P, dd->p_dw), *w2 = dp_nn_param(P, dd->p_w2);
    for (int o = 0; o < d; o++)
        for (int c = 0; c < FD; c++) dwT[(size_t)c * d + o] = dw[(size_t)o * FD + c];
    for (int o = 0; o < h; o++)
        for (int c = 0; c < d; c++) {
            w1aT[(size_t)c * h + o] = w1[(size_t)o * 4 * d + c];
            w1bT[(size_t)c * h + o] = w1[(size_t)o * 4 * d + 3 * d + c];
        }
    for (int c = 0; c < h; c++) w2T[c] = w2[c];
}

void dp_doppler_episode_begin(dp_doppler *dd)
{
    memset(dd->p_S, 0, (size_t)dd->D * dd->a.hidden * sizeof(float));
    dd->episode_steps = 0;
    if (dd->a.sel_dynamic) dd->sd_off[0] = 0;
}

/* ---- the dynamic SEL ---- */

static float clip4(double x)
{
    return (float)(x < -4 ? -4 : x > 4 ? 4 : x);
}

/* the record's rows of step t (with no_grad the one step's, at 0) */
static float *sd_rows(const dp_doppler *dd, int t)
{
    return dd->sd_feat + (dd->a.no_grad ? 0 : dd->sd_off[t]) * DP_DOPPLER_SEL_DYN_FEATURES;
}

/* b-level descending, then lower id: the rank of feature 4 */
static int sd_by_blevel(const void *pa, const void *pb)
{
    const struct dp_doppler_rank *a = pa, *b = pb;
    if (a->bl != b->bl) return a->bl > b->bl ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

/* the hidden layer of dyn for nr rows of features: sd_A, sd_Aact */
static void sd_hidden(dp_doppler *dd, const float *feat, int nr)
{
    const dp_nn_params *S = dd->sel;
    const dp_doppler_model *m = dd->m;
    const int H = DP_DOPPLER_SEL_DYN_HIDDEN, F = DP_DOPPLER_SEL_DYN_FEATURES;
    dp_nn_linear_forward(dd->sd_A, feat, dp_nn_param(S, m->s_dw1), dp_nn_param(S, m->s_db1), nr, F, H);
    dp_nn_leaky_relu_forward(dd->sd_Aact, dd->sd_A, (size_t)nr * H, dd->a.slope);
}

/* z[i] += dyn(feat row i) for nr rows */
static void sd_forward(dp_doppler *dd, const float *feat, int nr, float *z)
{
    const dp_nn_params *S = dd->sel;
    const dp_doppler_model *m = dd->m;
    const int H = DP_DOPPLER_SEL_DYN_HIDDEN;
    sd_hidden(dd, feat, nr);
    const float *w2 = dp_nn_param(S, m->s_dw2);
    for (int i = 0; i < nr; i++) {
        const float *a = dd->sd_Aact + (size_t)i * H;
        float y = 0;
        for (int j = 0; j < H; j++) y += a[j] * w2[j];
        z[i] += y;
    }
}

int dp_doppler_sel_dynamic_scores(dp_doppler *dd, const dp_env *env, const int *ops, int nr, float *z)
{
    assert(dd->a.sel_dynamic);
    const int F = DP_DOPPLER_SEL_DYN_FEATURES, D = dd->D, t = env->step;
    const dp_graph *g = dd->g;
    const dp_cost *c = dd->c;
    const double L = dd->magnitude_unit;
    if (!dd->a.no_grad) {
        const size_t need = dd->sd_off[t] + (size_t)nr;
        if (need > dd->sd_cap) {
            size_t cap = dd->sd_cap * 2 > need ? dd->sd_cap * 2 : need;
            float *f = dp_alloc_realloc(dd->sd_feat, cap * F * sizeof(float));
            if (!f) return DP_ENOMEM;
            dd->sd_feat = f;
            dd->sd_cap = cap;
        }
        dd->sd_off[t + 1] = need;
    }
    float *feat = sd_rows(dd, t);
    double *tmp = dd->sd_tmp;
    double min_est = INFINITY, min_eft = INFINITY, max_bl = -INFINITY;
    for (int i = 0; i < nr; i++) {
        const int v = ops[i];
        /* the heaviest input's device */
        int heavy = -1;
        double hw = -1;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            const int e = g->pred_edge[q];
            const double w = env->mean_comm[e];
            if (w > hw) { hw = w; heavy = env->assignment[g->edge_src[e]]; }
        }
        double est = INFINITY, eft = INFINITY;
        int best = 0;
        for (int d = 0; d < D; d++) {
            double st = env->dev_avail[d];
            for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
                const int e = g->pred_edge[q], u = g->edge_src[e];
                const double arr = env->est_end[u] + dp_cost_comm(c, e, env->assignment[u], d);
                if (arr > st) st = arr;
            }
            if (st < est) { est = st; best = d; }
            const double fin = st + dp_cost_op(c, v, d);
            if (fin < eft) eft = fin;
        }
        tmp[(size_t)i * 3] = est;
        tmp[(size_t)i * 3 + 1] = eft;
        tmp[(size_t)i * 3 + 2] = env->blevel[v];
        if (est < min_est) min_est = est;
        if (eft < min_eft) min_eft = eft;
        if (env->blevel[v] > max_bl) max_bl = env->blevel[v];
        feat[(size_t)i * F + 3] = heavy >= 0 && heavy == best ? 1.0f : 0.0f;
        dd->sd_rank[i].bl = env->blevel[v];
        dd->sd_rank[i].op = v;
        dd->sd_rank[i].i = i;
    }
    qsort(dd->sd_rank, (size_t)nr, sizeof *dd->sd_rank, sd_by_blevel);
    for (int r = 0; r < nr; r++) feat[(size_t)dd->sd_rank[r].i * F + 4] = nr > 1 ? (float)r / (float)(nr - 1) : 0.0f;
    for (int i = 0; i < nr; i++) {
        float *f = feat + (size_t)i * F;
        f[0] = clip4((tmp[(size_t)i * 3] - min_est) / L);
        f[1] = clip4((tmp[(size_t)i * 3 + 1] - min_eft) / L);
        f[2] = clip4((tmp[(size_t)i * 3 + 2] - max_bl) / L);
    }
    sd_forward(dd, feat, nr, z);
    return DP_OK;
}

const float *dp_doppler_sel_dynamic_features(const dp_doppler *dd, int t)
{
    assert(dd->a.sel_dynamic);
    return sd_rows(dd, t);
}

void dp_doppler_sel_dynamic_replay(dp_doppler *dd, int t, int nr, float *z)
{
    assert(dd->a.sel_dynamic && !dd->a.no_grad);
    assert(dd->sd_off[t + 1] - dd->sd_off[t] == (size_t)nr);
    sd_forward(dd, sd_rows(dd, t), nr, z);
}

void dp_doppler_sel_dynamic_backward(dp_doppler *dd, int t, int nr, const float *dz)
{
    assert(dd->a.sel_dynamic && !dd->a.no_grad);
    const dp_nn_params *S = dd->sel;
    const dp_doppler_model *m = dd->m;
    const int H = DP_DOPPLER_SEL_DYN_HIDDEN, F = DP_DOPPLER_SEL_DYN_FEATURES;
    const float *feat = sd_rows(dd, t);
    sd_hidden(dd, feat, nr); /* the hidden layer again: the same calls on the same inputs */
    /* y = Aact w2^T: dw2 += dz^T Aact, dAact = dz w2 */
    float *gw2 = dp_nn_grad(S, m->s_dw2);
    const float *w2 = dp_nn_param(S, m->s_dw2);
    float *dA = dd->sd_dA;
    memset(dA, 0, (size_t)nr * H * sizeof(float));
    for (int i = 0; i < nr; i++) {
        const float *a = dd->sd_Aact + (size_t)i * H;
        float *da = dA + (size_t)i * H;
        for (int j = 0; j < H; j++) {
            gw2[j] += dz[i] * a[j];
            da[j] = dz[i] * w2[j];
        }
    }
    /* through the leaky ReLU, in place over the pre-activations' copy */
    for (size_t i = 0; i < (size_t)nr * H; i++) dA[i] *= dd->sd_A[i] > 0 ? 1.0f : dd->a.slope;
    dp_nn_linear_backward(NULL, dp_nn_grad(S, m->s_dw1), dp_nn_grad(S, m->s_db1), dA, feat,
                          dp_nn_param(S, m->s_dw1), nr, F, H);
}

/* step t's z-scored device features (D, FD): every step's are kept for the backward, one
 * step's with no_grad */
static float *dfz_of(const dp_doppler *dd, int t)
{
    return dd->p_DFz + (dd->a.no_grad ? 0 : (size_t)t * dd->D * dd->FD);
}

/* The per-step caches of step t (slot t mod C) for op v from its z-scored device features
 * (p_DFz, stored) and the device sums S before the step, and with logits != NULL its logits
 * (D): the forward of a step, and its recomputation in the episode backward (the same calls on
 * the same inputs, so the same bits). */
static void plc_step(dp_doppler *dd, int t, int v, const float *S, float *logits)
{
    const int D = dd->D, d = dd->a.hidden, h = dd->a.mlp_hidden, FD = dd->FD;
    const float sl = dd->a.slope;
    const dp_nn_params *P = dd->plc;
    const size_t s = (size_t)(t % dd->chunk);
    const float *DFz = dfz_of(dd, t);
    float *L1 = dd->p_L1 + s * D * d;
    float *Sst = dd->p_Sst + s * D * d, *cat = dd->p_cat + s * D * 2 * d;
    float *A = dd->p_A + s * D * h, *Aact = dd->p_Aact + s * D * h;
    /* L1 = DFz dev.w^T + dev.b, through dev.w^T of dp_doppler_prepare (as dp_nn_linear_forward: the
     * bias rows, then the product added to them) */
    const float *dwT = dd->p_wT, *w1aT = dwT + (size_t)FD * d, *w1bT = w1aT + (size_t)d * h, *w2T = w1bT + (size_t)d * h;
    for (int k = 0; k < D; k++) memcpy(L1 + (size_t)k * d, dp_nn_param(P, dd->p_db), (size_t)d * sizeof(float));
    dp_nn_gemm(0, 0, D, d, FD, 1.0f, DFz, FD, dwT, d, 1.0f, L1, d);
    /* device sums, z-scored over the devices */
    memcpy(Sst, S, (size_t)D * d * sizeof(float));
    float *zS = dd->p_dS; /* temporary */
    dp_nn_zscore_forward(zS, dd->p_Sm + s * d, dd->p_Sr + s * d, Sst, D, d, ZS_EPS);
    /* the per-device columns [lrelu(L1), zS] (D, 2d); the op's columns are in Q[v] */
    for (int k = 0; k < D; k++) {
        float *row = cat + (size_t)k * 2 * d;
        dp_nn_leaky_relu_forward(row, L1 + (size_t)k * d, (size_t)d, sl);
        memcpy(row + d, zS + (size_t)k * d, (size_t)d * sizeof(float));
    }
    for (int k = 0; k < D; k++) memcpy(A + (size_t)k * h, dd->p_Q + (size_t)v * h, (size_t)h * sizeof(float));
    dp_nn_gemm(0, 0, D, h, d, 1.0f, cat, 2 * d, w1aT, h, 1.0f, A, h);
    dp_nn_gemm(0, 0, D, h, d, 1.0f, cat + d, 2 * d, w1bT, h, 1.0f, A, h);
    dp_nn_leaky_relu_forward(Aact, A, (size_t)D * h, sl);
    if (logits) {
        const float b2 = dp_nn_param(P, dd->p_b2)[0];
        for (int k = 0; k < D; k++) logits[k] = b2;
        dp_nn_gemm(0, 0, D, 1, h, 1.0f, Aact, h, w2T, 1, 1.0f, logits, 1);
    }
}

void dp_doppler_plc_forward(dp_doppler *dd, const dp_env *env, int v, float *logits)
{
    const int D = dd->D, d = dd->a.hidden, FD = dd->FD;
    const int t = env->step;
    float *DFz = dfz_of(dd, t);
    dd->p_op[t] = v;
    dd->episode_steps = t + 1;
    /* a chunk's first step: the device sums its recomputation starts from */
    if (t % dd->chunk == 0) memcpy(dd->p_Sck + (size_t)(t / dd->chunk) * D * d, dd->p_S, (size_t)D * d * sizeof(float));
    /* device features, z-scored over the devices (inputs: no gradient needed) */
    const int FE = dd->FE;
    dp_env_device_features_of(env, (dp_env_features)dd->a.device_features, v, dd->devfeat);
    float *rawp = dd->p_dtmp; /* (D, FE) temporary, then (D, FE) z-scores: p_dtmp holds D x FD */
    for (int i = 0; i < D * FE; i++) rawp[i] = (float)dd->devfeat[i];
    float fm[DP_ENV_MAX_DEVICE_FEATURES], fr[DP_ENV_MAX_DEVICE_FEATURES];
    if (FD == FE) {
        dp_nn_zscore_forward(DFz, fm, fr, rawp, D, FE, ZS_EPS);
    } else {
        /* device_magnitude: [z-scores | (x - mean over devices) / lower bound] per device */
        float *z = rawp + (size_t)D * FE;
        dp_nn_zscore_forward(z, fm, fr, rawp, D, FE, ZS_EPS);
        for (int j = 0; j < FE; j++) {
            double mean = 0;
            for (int k = 0; k < D; k++) mean += dd->devfeat[(size_t)k * FE + j];
            mean /= D;
            /* columns 9 (a share) and the hint (0 or 1) have no time unit */
            const double unit = dd->a.device_features != DP_ENV_FEATURES_DOPPLER && (j == 9 || j == DP_ENV_HINT_COLUMN)
                                    ? 1.0
                                    : dd->magnitude_unit;
            for (int k = 0; k < D; k++) {
                DFz[(size_t)k * FD + j] = z[(size_t)k * FE + j];
                DFz[(size_t)k * FD + FE + j] = (float)((dd->devfeat[(size_t)k * FE + j] - mean) / unit);
            }
        }
    }
    plc_step(dd, t, v, dd->p_S, logits);
}

void dp_doppler_plc_commit(dp_doppler *dd, int v, int k)
{
    const int d = dd->a.hidden;
    float *s = dd->p_S + (size_t)k * d;
    const float *x = dd->p_H + (size_t)v * d;
    for (int j = 0; j < d; j++) s[j] += x[j];
}

void dp_doppler_plc_set_dlogits(dp_doppler *dd, int t, const float *dlogits)
{
    assert(!dd->a.no_grad);
    memcpy(dd->p_dlogits + (size_t)t * dd->D, dlogits, (size_t)dd->D * sizeof(float));
}

/* dp_nn_leaky_relu_backward into a zeroed buffer, written over the forward's input x (read once
 * per element before it is overwritten): x[i] = 0 + dout[i] * (x[i] > 0 ? 1 : slope), the sum the
 * zeroed buffer gave, so the same bits. */
static void leaky_relu_backward_over(float *x, const float *dout, size_t n, float slope)
{
    for (size_t i = 0; i < n; i++) {
        float k = x[i] > 0 ? 1.0f : slope, z = 0.0f;
        z += dout[i] * k;
        x[i] = z;
    }
}

/* The backward of steps t0 .. t1-1, whose caches are in slots 0 .. t1-t0-1, into the PLC's
 * gradients and per-op accumulators; p_acc holds, per device, the gradient of the device sums
 * summed over the steps after t1 - 1 and is carried on to t0. */
static void plc_chunk_backward(dp_doppler *dd, const dp_env *env, int t0, int t1)
{
    const int D = dd->D, d = dd->a.hidden, h = dd->a.mlp_hidden, FD = dd->FD;
    const int R = (t1 - t0) * D;
    const float sl = dd->a.slope;
    const dp_nn_params *P = dd->plc;
    /* The gradients dA, dcat and dL1 of all R rows are written over the forward caches A, cat
     * and L1 once those are no longer read (A after its relu's backward, cat after the W1
     * gradient, L1 after its relu's backward): the same values as separate buffers, about 7 KiB
     * per op less at the default sizes. */
    float *dA = dd->p_A, *dcat = dd->p_cat, *dL1 = dd->p_L1;
    const float *dlogits = dd->p_dlogits + (size_t)t0 * D, *DFz = dd->p_DFz + (size_t)t0 * D * FD;
    /* all steps at once: logits = lrelu(A) w2^T + b2, A = cat w1^T + b1 */
    float *dAact = dd->p_dAact;
    memset(dAact, 0, (size_t)R * h * sizeof(float));
    dp_nn_linear_backward(dAact, dp_nn_grad(P, dd->p_w2), dp_nn_grad(P, dd->p_b2), dlogits, dd->p_Aact,
                          dp_nn_param(P, dd->p_w2), R, h, 1);
    leaky_relu_backward_over(dA, dAact, (size_t)R * h, sl);
    /* A = Q[v] + cat_dev W1_dev^T: the per-device column blocks (0 and 3) here over all R rows,
     * the op's (Q: blocks 1, 2 and b1) once per batch in dp_doppler_backward from dQ[v], the
     * sum of dA over the devices of v's step */
    const float *w1 = dp_nn_param(P, dd->p_w1);
    float *gw1 = dp_nn_grad(P, dd->p_w1);
    dp_nn_gemm(1, 0, h, d, R, 1.0f, dA, h, dd->p_cat, 2 * d, 1.0f, gw1, 4 * d);
    dp_nn_gemm(1, 0, h, d, R, 1.0f, dA, h, dd->p_cat + d, 2 * d, 1.0f,
                gw1 + 3 * d, 4 * d);
    /* cat is read for the last time above: dcat goes over it */
    dp_nn_gemm(0, 0, R, d, h, 1.0f, dA, h, w1, 4 * d, 0.0f, dcat, 2 * d);
    dp_nn_gemm(0, 0, R, d, h, 1.0f, dA, h, w1 + 3 * d, 4 * d, 0.0f,
                dcat + d, 2 * d);
    for (int t = t0; t < t1; t++) {
        float *q = dd->p_dQ + (size_t)dd->p_op[t] * h;
        for (int k = 0; k < D; k++) {
            const float *a = dA + ((size_t)(t - t0) * D + k) * h;
            for (int j = 0; j < h; j++) q[j] += a[j];
        }
    }
    /* device-feature branch: dcat[:, 0:d] through lrelu(L1), L1 = DFz devw^T + devb */
    for (int r = 0; r < R; r++)
        leaky_relu_backward_over(dL1 + (size_t)r * d, dcat + (size_t)r * 2 * d, (size_t)d, sl);
    dp_nn_linear_backward(NULL, dp_nn_grad(P, dd->p_dw), dp_nn_grad(P, dd->p_db), dL1, DFz,
                          dp_nn_param(P, dd->p_dw), R, FD, d);
    /* per-op branches and device sums; walk the steps backwards keeping, per device, the sum of
     * dS over later steps (an op placed at step s is in S_t for every t > s) */
    for (int t = t1 - 1; t >= t0; t--) {
        const size_t s = (size_t)(t - t0);
        int v = dd->p_op[t], k0 = env->assignment[v];
        float *dH = dd->p_dH + (size_t)v * d;
        /* op v is in S_t' for t' > t on its device: those gradients are in acc */
        const float *acc = dd->p_acc + (size_t)k0 * d;
        for (int j = 0; j < d; j++) dH[j] += acc[j];
        memset(dd->p_dS, 0, (size_t)D * d * sizeof(float));
        float *dZ = dd->p_dtmp; /* (D, d) */
        for (int k = 0; k < D; k++)
            memcpy(dZ + (size_t)k * d, dcat + (s * D + k) * 2 * d + d, (size_t)d * sizeof(float));
        dp_nn_zscore_backward(dd->p_dS, dZ, dd->p_Sst + s * D * d, dd->p_Sm + s * d, dd->p_Sr + s * d, D, d, ZS_EPS);
        for (size_t i = 0; i < (size_t)D * d; i++) dd->p_acc[i] += dd->p_dS[i];
    }
}

void dp_doppler_episode_backward(dp_doppler *dd, const dp_env *env)
{
    assert(!dd->a.no_grad);
    const int D = dd->D, d = dd->a.hidden, C = dd->chunk;
    const int T = dd->episode_steps;
    if (T == 0) return;
    memset(dd->p_acc, 0, (size_t)D * d * sizeof(float));
    /* chunks last to first; the last one's caches are the forward's, each earlier one's are
     * recomputed from its first step's device sums by replaying its steps' placements */
    const int last = (T - 1) / C;
    for (int c = last; c >= 0; c--) {
        const int t0 = c * C, t1 = c == last ? T : t0 + C;
        if (c != last) {
            float *S = dd->p_Srep;
            memcpy(S, dd->p_Sck + (size_t)c * D * d, (size_t)D * d * sizeof(float));
            for (int t = t0; t < t1; t++) {
                const int v = dd->p_op[t];
                plc_step(dd, t, v, S, NULL);
                /* dp_doppler_plc_commit's sum, in its order */
                float *sk = S + (size_t)env->assignment[v] * d;
                const float *x = dd->p_H + (size_t)v * d;
                for (int j = 0; j < d; j++) sk[j] += x[j];
            }
        }
        plc_chunk_backward(dd, env, t0, t1);
    }
}

void dp_doppler_backward(dp_doppler *dd)
{
    assert(!dd->a.no_grad);
    const int n = dd->n, d = dd->a.hidden, h = dd->a.mlp_hidden, F = DP_DOPPLER_N_NODE_FEATURES;
    const float sl = dd->a.slope;
    const size_t nd = (size_t)n * d;
    const dp_nn_params *S = dd->sel, *P = dd->plc;
    /* SEL: score = lrelu(A) w2^T + b2. The gradients dAact, dA and dcat are written over the
     * forward caches Aact, A and cat once those are read for the last time (each weight
     * gradient before its input gradient: dp_nn_linear_backward's two GEMMs, called apart; the
     * input gradient's GEMM adds into a zeroed buffer as before), the same values as separate
     * buffers. A second backward without a prepare between recomputes the caches first. */
    if (dd->sel_spent) sel_head_forward(dd);
    dd->sel_spent = 1;
    float *dAact = dd->s_Aact, *dA = dd->s_A, *dcat = dd->s_cat;
    dp_nn_linear_backward(NULL, dp_nn_grad(S, dd->s_w2), dp_nn_grad(S, dd->s_b2), dd->s_dscore, dd->s_Aact,
                          dp_nn_param(S, dd->s_w2), n, h, 1);
    memset(dAact, 0, (size_t)n * h * sizeof(float));
    dp_nn_linear_backward(dAact, NULL, NULL, dd->s_dscore, NULL, dp_nn_param(S, dd->s_w2), n, h, 1);
    leaky_relu_backward_over(dA, dAact, (size_t)n * h, sl);
    dp_nn_linear_backward(NULL, dp_nn_grad(S, dd->s_w1), dp_nn_grad(S, dd->s_b1), dA, dd->s_cat,
                          dp_nn_param(S, dd->s_w1), n, 4 * d, h);
    memset(dcat, 0, 4 * nd * sizeof(float));
    dp_nn_linear_backward(dcat, NULL, NULL, dA, NULL, dp_nn_param(S, dd->s_w1), n, 4 * d, h);
    /* split the concatenation */
    float *dFact = dd->s_dP, *dH = dd->s_dH;
    memset(dH, 0, nd * sizeof(float));
    float *dFpre = dd->p_dtmp; /* (n, d) scratch shared with PLC: not in use here */
    memset(dFpre, 0, nd * sizeof(float));
    for (int v = 0; v < n; v++) {
        const float *dc = dcat + (size_t)v * 4 * d;
        memcpy(dFact + (size_t)v * d, dc, (size_t)d * sizeof(float));
        float *o = dH + (size_t)v * d;
        for (int j = 0; j < d; j++) o[j] = dc[d + j];
    }
    dp_nn_leaky_relu_backward(dFpre, dFact, dd->s_Fpre, nd, sl);
    dp_nn_linear_backward(NULL, dp_nn_grad(S, dd->s_fw), dp_nn_grad(S, dd->s_fb), dFpre, dd->X,
                          dp_nn_param(S, dd->s_fw), n, F, d);
    /* b- and t-path branches: z-score then sum pooling back onto H */
    float *dz = dd->s_dP, *dpool = dFpre;
    for (int which = 0; which < (dd->a.cp_embeddings ? 2 : 0); which++) {
        int off = which == 0 ? 2 * d : 3 * d;
        for (int v = 0; v < n; v++) memcpy(dz + (size_t)v * d, dcat + (size_t)v * 4 * d + off, (size_t)d * sizeof(float));
        memset(dpool, 0, nd * sizeof(float));
        if (which == 0) {
            dp_nn_zscore_backward(dpool, dz, dd->s_Bp, dd->s_Bm, dd->s_Br, n, d, ZS_EPS);
            dp_nn_chain_sum_backward(dH, dpool, dd->bnext, dd->rtopo, n, d);
        } else {
            dp_nn_zscore_backward(dpool, dz, dd->s_Tp, dd->s_Tm, dd->s_Tr, n, d, ZS_EPS);
            dp_nn_chain_sum_backward(dH, dpool, dd->tnext, dd->g->topo, n, d);
        }
    }
    /* through H = lrelu(MPNN(X)) */
    float *dHpre = dd->s_dP;
    memset(dHpre, 0, nd * sizeof(float));
    dp_nn_leaky_relu_backward(dHpre, dH, dd->s_Hpre, nd, sl);
    dp_mpnn_backward(&dd->sel_mp, dHpre);

    /* PLC per-op parts: first Q = F W1[:, d:2d]^T + H W1[:, 2d:3d]^T + b1 */
    {
        const float *w1 = dp_nn_param(P, dd->p_w1);
        float *gw1 = dp_nn_grad(P, dd->p_w1);
        dp_nn_gemm(1, 0, h, d, n, 1.0f, dd->p_dQ, h, dd->p_F, d, 1.0f, gw1 + d, 4 * d);
        dp_nn_gemm(1, 0, h, d, n, 1.0f, dd->p_dQ, h, dd->p_H, d, 1.0f, gw1 + 2 * d, 4 * d);
        dp_nn_gemm(0, 0, n, d, h, 1.0f, dd->p_dQ, h, w1 + d, 4 * d, 1.0f, dd->p_dF, d);
        dp_nn_gemm(0, 0, n, d, h, 1.0f, dd->p_dQ, h, w1 + 2 * d, 4 * d, 1.0f, dd->p_dH, d);
        float *gb1 = dp_nn_grad(P, dd->p_b1);
        for (int v = 0; v < n; v++) {
            const float *q = dd->p_dQ + (size_t)v * h;
            for (int j = 0; j < h; j++) gb1[j] += q[j];
        }
    }
    memset(dFpre, 0, nd * sizeof(float));
    dp_nn_leaky_relu_backward(dFpre, dd->p_dF, dd->p_Fpre, nd, sl);
    dp_nn_linear_backward(NULL, dp_nn_grad(P, dd->p_fw), dp_nn_grad(P, dd->p_fb), dFpre, dd->X,
                          dp_nn_param(P, dd->p_fw), n, F, d);
    memset(dHpre, 0, nd * sizeof(float));
    dp_nn_leaky_relu_backward(dHpre, dd->p_dH, dd->p_Hpre, nd, sl);
    dp_mpnn_backward(&dd->plc_mp, dHpre);
}
