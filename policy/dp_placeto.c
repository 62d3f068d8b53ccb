/* dp_placeto.c: the Placeto device policy (see dp_placeto.h). */
#include "dp_placeto.h"
#include "dp_alloc.h"
#include "dp_doppler.h"
#include "dp_file.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define F0 DP_DOPPLER_N_NODE_FEATURES
enum { G_ANC = 0, G_DESC = 1, G_PAR = 2, N_GROUPS = 3 };

void dp_placeto_arch_default(dp_placeto_arch *a)
{
    a->hidden = 32;
    a->mlp_hidden = 64;
    a->slope = 0;
}

/* One message-passing sweep (forward over parents, or backward over children): its weights and
 * the activations of the last forward. */
typedef struct sweep {
    int fw, fb, gw, gb;     /* tensor ids: message f (d, d), update g (d, d) */
    const int *ptr, *idx;   /* neighbours the messages come from (parents or children), CSR */
    int reverse;            /* 0: topological order, 1: reverse */
    float *Y;               /* (n, d) each op's state after the sweep: S + lrelu(Gpre) */
    float *Fpre, *Fm;       /* (n, d) its outgoing message pre-activation, after lrelu */
    float *M;               /* (n, d) the incoming messages summed over the neighbours */
    float *Gpre;            /* (n, d) update pre-activation (M's projection) */
    float *dY, *dFpre, *dM, *dG;     /* (n, d) backward workspaces */
} sweep;

struct dp_placeto {
    const dp_graph *g;
    const dp_cost *c;
    dp_placeto_arch a;
    int n, D, F, d, e, h;
    dp_nn_params p;
    int i_w1, i_b1, i_w2, i_b2;          /* node transform */
    int i_h1, i_hb1, i_h2, i_hb2;        /* device head */
    int gf[N_GROUPS], gfb[N_GROUPS], gg[N_GROUPS], ggb[N_GROUPS];
    sweep sw[2];
    dp_alloc_table owned;                /* every array allocated with ALLOC below */
    /* graph structure */
    int *pptr, *pidx, *cptr, *cidx;      /* distinct parents and children, CSR */
    int *pos;                            /* position of each op in topo */
    uint64_t *anc, *desc;                /* (n, words) reachability bitsets */
    int words;
    int *members;                        /* (n) scratch: the ops of one group */
    /* per-step inputs and activations */
    float *Xbase;                        /* (n, 5) z-scored cost features */
    float *X;                            /* (n, F) */
    float *A1, *Z1;                      /* (n, d) node transform pre-activation, after lrelu */
    float *S;                            /* (n, d) node transform output: the sweeps' starting state */
    float *E;                            /* (n, e = 2d) op embeddings [forward sweep Y, backward sweep Y] */
    float *GFpre[N_GROUPS], *GF[N_GROUPS]; /* (n, e) each group's transform pre-activation, after lrelu */
    float *Gm, *GGpre, *GA;              /* (3, e) group means, update pre-activations, outputs */
    int gcount[N_GROUPS];
    float *cat;                          /* (4e) [the three groups' GA, the op's embedding E[v]] */
    float *Hpre, *H;                     /* (h) device head hidden pre-activation, after lrelu */
    float *lg;                           /* (D) logits recomputed by the backward */
    /* backward workspaces */
    float *dE, *dGF;                     /* (n, e) */
    float *dS, *dZ1, *dA1;               /* (n, d) */
    float *dcat;                         /* (4e) */
    float *dH;                           /* (h) */
    float *dGA, *dGm;                    /* (3, e) */
};

static int dedup_csr(int n, const int *ptr, const int *edge_ids, const int *ends, int **optr, int **oidx)
{
    /* the distinct neighbours of each op; repeated edges carry one message */
    *optr = dp_alloc_malloc_n((size_t)n + 1, sizeof(int));
    *oidx = dp_alloc_malloc_n((size_t)ptr[n] + 1, sizeof(int));
    if (!*optr || !*oidx) return DP_ENOMEM;
    int k = 0;
    for (int v = 0; v < n; v++) {
        (*optr)[v] = k;
        for (int q = ptr[v]; q < ptr[v + 1]; q++) {
            int u = ends[edge_ids ? edge_ids[q] : q], dup = 0;
            for (int j = (*optr)[v]; j < k && !dup; j++) dup = (*oidx)[j] == u;
            if (!dup) (*oidx)[k++] = u;
        }
    }
    (*optr)[n] = k;
    return DP_OK;
}

void dp_placeto_free(dp_placeto *pl)
{
    if (!pl) return;
    dp_nn_params_free(&pl->p);
    free(pl->pptr); free(pl->pidx); free(pl->cptr); free(pl->cidx);   /* dedup_csr's */
    dp_alloc_table_free(&pl->owned);
    free(pl);
}

/* zeroed, recorded in pl->owned (freed by dp_placeto_free) */
#define ALLOC(p, count) do { if (!DP_ALLOC_ZERO(&pl->owned, p, (size_t)(count), sizeof *(p))) goto nomem; } while (0)
#define ADD(id, name, r, c) do { if (((id) = dp_nn_params_add(&pl->p, (name), (r), (c))) < 0) goto nomem; } while (0)

dp_placeto *dp_placeto_alloc(const dp_graph *g, const dp_cost *c, const dp_placeto_arch *a, dp_error *err)
{
    if (a->hidden <= 0 || a->mlp_hidden <= 0 || !(a->slope >= 0)) {
        dp_error_set(err, DP_EINVAL, "placeto: network sizes must be positive (hidden %d, mlp_hidden %d)", a->hidden,
                     a->mlp_hidden);
        return NULL;
    }
    if (g->n_ops > DP_PLACETO_MAX_OPS) {
        dp_error_set(err, DP_EINVAL, "placeto: %d ops, more than %d (an episode re-embeds the graph at every step: "
                     "O(n^2) time, and the reachability sets take n^2/4 bytes)", g->n_ops, DP_PLACETO_MAX_OPS);
        return NULL;
    }
    dp_placeto *pl = dp_alloc_calloc(1, sizeof *pl);
    if (!pl) goto nomem;
    pl->g = g;
    pl->c = c;
    pl->a = *a;
    const int n = pl->n = g->n_ops, D = pl->D = c->n_devices;
    const int d = pl->d = a->hidden, e = pl->e = 2 * a->hidden, h = pl->h = a->mlp_hidden;
    const int F = pl->F = F0 + D + 2;
    dp_nn_params_init(&pl->p);
    ADD(pl->i_w1, "nt.w1", d, F); ADD(pl->i_b1, "nt.b1", 1, d);
    ADD(pl->i_w2, "nt.w2", d, d); ADD(pl->i_b2, "nt.b2", 1, d);
    static const char *sname[2] = {"fwd", "bwd"};
    for (int s = 0; s < 2; s++) {
        char nm[DP_NN_NAME_MAX];
        sweep *w = &pl->sw[s];
        snprintf(nm, sizeof nm, "%s.fw", sname[s]); ADD(w->fw, nm, d, d);
        snprintf(nm, sizeof nm, "%s.fb", sname[s]); ADD(w->fb, nm, 1, d);
        snprintf(nm, sizeof nm, "%s.gw", sname[s]); ADD(w->gw, nm, d, d);
        snprintf(nm, sizeof nm, "%s.gb", sname[s]); ADD(w->gb, nm, 1, d);
    }
    static const char *gname[N_GROUPS] = {"anc", "desc", "par"};
    for (int q = 0; q < N_GROUPS; q++) {
        char nm[DP_NN_NAME_MAX];
        snprintf(nm, sizeof nm, "%s.fw", gname[q]); ADD(pl->gf[q], nm, e, e);
        snprintf(nm, sizeof nm, "%s.fb", gname[q]); ADD(pl->gfb[q], nm, 1, e);
        snprintf(nm, sizeof nm, "%s.gw", gname[q]); ADD(pl->gg[q], nm, e, e);
        snprintf(nm, sizeof nm, "%s.gb", gname[q]); ADD(pl->ggb[q], nm, 1, e);
    }
    ADD(pl->i_h1, "head.w1", h, 4 * e); ADD(pl->i_hb1, "head.b1", 1, h);
    ADD(pl->i_h2, "head.w2", D, h); ADD(pl->i_hb2, "head.b2", 1, D);
    if (dp_nn_params_alloc(&pl->p) != DP_OK) goto nomem;

    /* what the graph's buffers need, before allocating them: the reachability bitsets (two of
     * n x ceil(n / 64) words) and the per-op inputs and activations (F0 + F + 6 d + 9 e floats) */
    {
        const double words = (double)((n + 63) / 64);
        const double bytes = 2.0 * n * words * 8 + (double)n * (F0 + F + 6.0 * d + 9.0 * e) * sizeof(float) +
                             4.0 * n * sizeof(int) + 2.0 * g->n_edges * sizeof(int);
        if (dp_file_mem_check(g->source ? g->source : g->name, "Placeto's buffers for this graph", bytes, err) != DP_OK) {
            dp_placeto_free(pl);
            return NULL;
        }
    }
    /* structure: distinct parents and children, positions, reachability */
    if (dedup_csr(n, g->pred_ptr, g->pred_edge, g->edge_src, &pl->pptr, &pl->pidx) != DP_OK) goto nomem;
    if (dedup_csr(n, g->succ_ptr, NULL, g->edge_dst, &pl->cptr, &pl->cidx) != DP_OK) goto nomem;
    ALLOC(pl->pos, n);
    for (int k = 0; k < n; k++) pl->pos[g->topo[k]] = k;
    pl->words = (n + 63) / 64;
    const size_t W = (size_t)pl->words;
    ALLOC(pl->anc, (size_t)n * W);
    ALLOC(pl->desc, (size_t)n * W);
    for (int k = 0; k < n; k++) {
        int v = g->topo[k];
        uint64_t *av = pl->anc + (size_t)v * W;
        for (int j = pl->pptr[v]; j < pl->pptr[v + 1]; j++) {
            int u = pl->pidx[j];
            const uint64_t *au = pl->anc + (size_t)u * W;
            for (size_t w = 0; w < W; w++) av[w] |= au[w];
            av[u >> 6] |= (uint64_t)1 << (u & 63);
        }
    }
    for (int k = n - 1; k >= 0; k--) {
        int v = g->topo[k];
        uint64_t *dv = pl->desc + (size_t)v * W;
        for (int j = pl->cptr[v]; j < pl->cptr[v + 1]; j++) {
            int u = pl->cidx[j];
            const uint64_t *du = pl->desc + (size_t)u * W;
            for (size_t w = 0; w < W; w++) dv[w] |= du[w];
            dv[u >> 6] |= (uint64_t)1 << (u & 63);
        }
    }
    ALLOC(pl->members, n);
    pl->sw[0].ptr = pl->pptr; pl->sw[0].idx = pl->pidx; pl->sw[0].reverse = 0;
    pl->sw[1].ptr = pl->cptr; pl->sw[1].idx = pl->cidx; pl->sw[1].reverse = 1;
    const size_t nd = (size_t)n * d, ne = (size_t)n * e;
    for (int s = 0; s < 2; s++) {
        sweep *w = &pl->sw[s];
        ALLOC(w->Y, nd); ALLOC(w->Fpre, nd); ALLOC(w->Fm, nd); ALLOC(w->M, nd); ALLOC(w->Gpre, nd);
        ALLOC(w->dY, nd); ALLOC(w->dFpre, nd); ALLOC(w->dM, nd); ALLOC(w->dG, nd);
    }
    ALLOC(pl->Xbase, (size_t)n * F0);
    if (dp_doppler_node_features(g, c, pl->Xbase, NULL) != DP_OK) goto nomem;
    ALLOC(pl->X, (size_t)n * F);
    ALLOC(pl->A1, nd); ALLOC(pl->Z1, nd); ALLOC(pl->S, nd); ALLOC(pl->E, ne);
    for (int q = 0; q < N_GROUPS; q++) { ALLOC(pl->GFpre[q], ne); ALLOC(pl->GF[q], ne); }
    ALLOC(pl->Gm, 3 * e); ALLOC(pl->GGpre, 3 * e); ALLOC(pl->GA, 3 * e);
    ALLOC(pl->cat, 4 * e); ALLOC(pl->Hpre, h); ALLOC(pl->H, h); ALLOC(pl->lg, D);
    ALLOC(pl->dE, ne); ALLOC(pl->dGF, ne); ALLOC(pl->dS, nd); ALLOC(pl->dZ1, nd); ALLOC(pl->dA1, nd);
    ALLOC(pl->dcat, 4 * e); ALLOC(pl->dH, h); ALLOC(pl->dGA, 3 * e); ALLOC(pl->dGm, 3 * e);
    return pl;
nomem:
    dp_error_set(err, DP_ENOMEM, "placeto: out of memory for a %d-op graph", g->n_ops);
    dp_placeto_free(pl);
    return NULL;
}

int dp_placeto_init(dp_placeto *pl, gsl_rng *r)
{
    dp_nn_params *p = &pl->p;
    memset(p->param, 0, p->n * sizeof(float));
    int w[4 + 4 + 2 * N_GROUPS + 2], k = 0;
    w[k++] = pl->i_w1; w[k++] = pl->i_w2;
    for (int s = 0; s < 2; s++) { w[k++] = pl->sw[s].fw; w[k++] = pl->sw[s].gw; }
    for (int q = 0; q < N_GROUPS; q++) { w[k++] = pl->gf[q]; w[k++] = pl->gg[q]; }
    w[k++] = pl->i_h1; w[k++] = pl->i_h2;
    for (int i = 0; i < k; i++) {
        int rc = dp_nn_init_orthogonal(dp_nn_param(p, w[i]), p->t[w[i]].rows, p->t[w[i]].cols, 1.0, r);
        if (rc != DP_OK) return rc;
    }
    return DP_OK;
}

dp_nn_params *dp_placeto_params(dp_placeto *pl)
{
    return &pl->p;
}

/* ---- forward ---- */

static void build_state(dp_placeto *pl, int t, const int *assignment)
{
    const int n = pl->n, F = pl->F, D = pl->D;
    const int *topo = pl->g->topo;
    memset(pl->X, 0, (size_t)n * F * sizeof(float));
    for (int u = 0; u < n; u++) memcpy(pl->X + (size_t)u * F, pl->Xbase + (size_t)u * F0, F0 * sizeof(float));
    for (int k = 0; k < t; k++) {
        int u = topo[k], dev = assignment[u];
        float *x = pl->X + (size_t)u * F;
        if (dev >= 0 && dev < D) x[F0 + dev] = 1;
        x[F0 + D + 1] = 1;
    }
    pl->X[(size_t)topo[t] * F + F0 + D] = 1;
}

static void sweep_forward(dp_placeto *pl, sweep *w)
{
    const int n = pl->n, d = pl->d;
    const float sl = pl->a.slope;
    const float *fw = dp_nn_param(&pl->p, w->fw), *fb = dp_nn_param(&pl->p, w->fb);
    const float *gw = dp_nn_param(&pl->p, w->gw), *gb = dp_nn_param(&pl->p, w->gb);
    for (int k = 0; k < n; k++) {
        const int v = pl->g->topo[w->reverse ? n - 1 - k : k];
        float *y = w->Y + (size_t)v * d, *m = w->M + (size_t)v * d, *gp = w->Gpre + (size_t)v * d;
        memcpy(y, pl->S + (size_t)v * d, (size_t)d * sizeof(float));
        if (w->ptr[v + 1] > w->ptr[v]) {
            /* the messages of v's neighbours are final: they come earlier in the sweep */
            memset(m, 0, (size_t)d * sizeof(float));
            for (int j = w->ptr[v]; j < w->ptr[v + 1]; j++) {
                const float *fm = w->Fm + (size_t)w->idx[j] * d;
                for (int i = 0; i < d; i++) m[i] += fm[i];
            }
            dp_nn_linear_forward(gp, m, gw, gb, 1, d, d);
            for (int i = 0; i < d; i++) y[i] += gp[i] > 0 ? gp[i] : sl * gp[i];
        }
        float *fp = w->Fpre + (size_t)v * d;
        dp_nn_linear_forward(fp, y, fw, fb, 1, d, d);
        dp_nn_leaky_relu_forward(w->Fm + (size_t)v * d, fp, (size_t)d, sl);
    }
}

/* the members of group q of op v, into pl->members; returns how many */
static int group_members(const dp_placeto *pl, int q, int v)
{
    const size_t W = (size_t)pl->words;
    const uint64_t *a = pl->anc + (size_t)v * W, *b = pl->desc + (size_t)v * W;
    int m = 0;
    for (int u = 0; u < pl->n; u++) {
        const uint64_t bit = (uint64_t)1 << (u & 63);
        const int in_a = (a[u >> 6] & bit) != 0, in_d = (b[u >> 6] & bit) != 0;
        const int take = q == G_ANC ? in_a : q == G_DESC ? in_d : (!in_a && !in_d && u != v);
        if (take) pl->members[m++] = u;
    }
    return m;
}

static void forward(dp_placeto *pl, int t, const int *assignment, float *logits)
{
    const int n = pl->n, d = pl->d, e = pl->e, h = pl->h, D = pl->D, F = pl->F;
    const float sl = pl->a.slope;
    dp_nn_params *p = &pl->p;
    const int v = pl->g->topo[t];
    build_state(pl, t, assignment);
    dp_nn_linear_forward(pl->A1, pl->X, dp_nn_param(p, pl->i_w1), dp_nn_param(p, pl->i_b1), n, F, d);
    dp_nn_leaky_relu_forward(pl->Z1, pl->A1, (size_t)n * d, sl);
    dp_nn_linear_forward(pl->S, pl->Z1, dp_nn_param(p, pl->i_w2), dp_nn_param(p, pl->i_b2), n, d, d);
    sweep_forward(pl, &pl->sw[0]);
    sweep_forward(pl, &pl->sw[1]);
    for (int u = 0; u < n; u++) {
        memcpy(pl->E + (size_t)u * e, pl->sw[0].Y + (size_t)u * d, (size_t)d * sizeof(float));
        memcpy(pl->E + (size_t)u * e + d, pl->sw[1].Y + (size_t)u * d, (size_t)d * sizeof(float));
    }
    for (int q = 0; q < N_GROUPS; q++) {
        dp_nn_linear_forward(pl->GFpre[q], pl->E, dp_nn_param(p, pl->gf[q]), dp_nn_param(p, pl->gfb[q]), n, e, e);
        dp_nn_leaky_relu_forward(pl->GF[q], pl->GFpre[q], (size_t)n * e, sl);
        const int cnt = pl->gcount[q] = group_members(pl, q, v);
        float *m = pl->Gm + (size_t)q * e;
        memset(m, 0, (size_t)e * sizeof(float));
        for (int k = 0; k < cnt; k++) {
            const float *f = pl->GF[q] + (size_t)pl->members[k] * e;
            for (int i = 0; i < e; i++) m[i] += f[i];
        }
        if (cnt > 0)
            for (int i = 0; i < e; i++) m[i] /= (float)cnt;
        float *gp = pl->GGpre + (size_t)q * e;
        dp_nn_linear_forward(gp, m, dp_nn_param(p, pl->gg[q]), dp_nn_param(p, pl->ggb[q]), 1, e, e);
        dp_nn_leaky_relu_forward(pl->GA + (size_t)q * e, gp, (size_t)e, sl);
        memcpy(pl->cat + (size_t)q * e, pl->GA + (size_t)q * e, (size_t)e * sizeof(float));
    }
    memcpy(pl->cat + 3 * (size_t)e, pl->E + (size_t)v * e, (size_t)e * sizeof(float));
    dp_nn_linear_forward(pl->Hpre, pl->cat, dp_nn_param(p, pl->i_h1), dp_nn_param(p, pl->i_hb1), 1, 4 * e, h);
    dp_nn_leaky_relu_forward(pl->H, pl->Hpre, (size_t)h, sl);
    dp_nn_linear_forward(logits, pl->H, dp_nn_param(p, pl->i_h2), dp_nn_param(p, pl->i_hb2), 1, h, D);
}

void dp_placeto_logits(dp_placeto *pl, int t, const int *assignment, float *logits)
{
    forward(pl, t, assignment, logits);
}

/* ---- backward ---- */

/* the sweep's backward: w->dY holds dL/dY from the embedding's users; adds dL/dS into pl->dS */
static void sweep_backward(dp_placeto *pl, sweep *w)
{
    const int n = pl->n, d = pl->d;
    const float sl = pl->a.slope;
    dp_nn_params *p = &pl->p;
    const float *fw = dp_nn_param(p, w->fw), *gw = dp_nn_param(p, w->gw);
    memset(w->dM, 0, (size_t)n * d * sizeof(float));
    memset(w->dFpre, 0, (size_t)n * d * sizeof(float));
    memset(w->dG, 0, (size_t)n * d * sizeof(float));
    /* the sweep backwards: when v is reached, every op that received v's message has been done */
    for (int k = n - 1; k >= 0; k--) {
        const int v = pl->g->topo[w->reverse ? n - 1 - k : k];
        float *dy = w->dY + (size_t)v * d;
        /* dL/dFm[v] = sum of dL/dM[r] over the ops r that v sent its message to: v's neighbours on the
         * other side, i.e. those r with v in idx[ptr[r] ..] (children for the parent sweep) */
        const int *optr = w->reverse ? pl->pptr : pl->cptr, *oidx = w->reverse ? pl->pidx : pl->cidx;
        float *dfp = w->dFpre + (size_t)v * d;
        const float *fp = w->Fpre + (size_t)v * d;
        for (int j = optr[v]; j < optr[v + 1]; j++) {
            const float *dm = w->dM + (size_t)oidx[j] * d;
            for (int i = 0; i < d; i++) dfp[i] += dm[i];
        }
        for (int i = 0; i < d; i++) dfp[i] *= fp[i] > 0 ? 1.0f : sl;
        dp_nn_linear_backward(dy, NULL, NULL, dfp, NULL, fw, 1, d, d);
        float *ds = pl->dS + (size_t)v * d;
        for (int i = 0; i < d; i++) ds[i] += dy[i];
        if (w->ptr[v + 1] > w->ptr[v]) {
            float *dg = w->dG + (size_t)v * d;
            const float *gp = w->Gpre + (size_t)v * d;
            for (int i = 0; i < d; i++) dg[i] = dy[i] * (gp[i] > 0 ? 1.0f : sl);
            dp_nn_linear_backward(w->dM + (size_t)v * d, NULL, NULL, dg, NULL, gw, 1, d, d);
        }
    }
    /* weight gradients in two GEMMs over all ops (rows without a message have dG = 0) */
    dp_nn_linear_backward(NULL, dp_nn_grad(p, w->fw), dp_nn_grad(p, w->fb), w->dFpre, w->Y, fw, n, d, d);
    dp_nn_linear_backward(NULL, dp_nn_grad(p, w->gw), dp_nn_grad(p, w->gb), w->dG, w->M, gw, n, d, d);
}

static void backward_step(dp_placeto *pl, int t, const float *dlogits)
{
    const int n = pl->n, d = pl->d, e = pl->e, h = pl->h, D = pl->D, F = pl->F;
    const float sl = pl->a.slope;
    dp_nn_params *p = &pl->p;
    const int v = pl->g->topo[t];
    /* head */
    memset(pl->dH, 0, (size_t)h * sizeof(float));
    dp_nn_linear_backward(pl->dH, dp_nn_grad(p, pl->i_h2), dp_nn_grad(p, pl->i_hb2), dlogits, pl->H,
                          dp_nn_param(p, pl->i_h2), 1, h, D);
    for (int i = 0; i < h; i++) pl->dH[i] *= pl->Hpre[i] > 0 ? 1.0f : sl;
    memset(pl->dcat, 0, 4 * (size_t)e * sizeof(float));
    dp_nn_linear_backward(pl->dcat, dp_nn_grad(p, pl->i_h1), dp_nn_grad(p, pl->i_hb1), pl->dH, pl->cat,
                          dp_nn_param(p, pl->i_h1), 1, 4 * e, h);
    /* groups */
    memset(pl->dE, 0, (size_t)n * e * sizeof(float));
    for (int q = 0; q < N_GROUPS; q++) {
        float *dga = pl->dGA + (size_t)q * e, *dgm = pl->dGm + (size_t)q * e;
        const float *gp = pl->GGpre + (size_t)q * e;
        for (int i = 0; i < e; i++) dga[i] = pl->dcat[(size_t)q * e + i] * (gp[i] > 0 ? 1.0f : sl);
        memset(dgm, 0, (size_t)e * sizeof(float));
        dp_nn_linear_backward(dgm, dp_nn_grad(p, pl->gg[q]), dp_nn_grad(p, pl->ggb[q]), dga, pl->Gm + (size_t)q * e,
                              dp_nn_param(p, pl->gg[q]), 1, e, e);
        const int cnt = group_members(pl, q, v);
        if (cnt == 0) continue;
        memset(pl->dGF, 0, (size_t)n * e * sizeof(float));
        const float inv = 1.0f / (float)cnt;
        for (int k = 0; k < cnt; k++) {
            const int u = pl->members[k];
            float *df = pl->dGF + (size_t)u * e;
            const float *fp = pl->GFpre[q] + (size_t)u * e;
            for (int i = 0; i < e; i++) df[i] = dgm[i] * inv * (fp[i] > 0 ? 1.0f : sl);
        }
        dp_nn_linear_backward(pl->dE, dp_nn_grad(p, pl->gf[q]), dp_nn_grad(p, pl->gfb[q]), pl->dGF, pl->E,
                              dp_nn_param(p, pl->gf[q]), n, e, e);
    }
    for (int i = 0; i < e; i++) pl->dE[(size_t)v * e + i] += pl->dcat[3 * (size_t)e + i];
    /* the two sweeps */
    for (int u = 0; u < n; u++) {
        memcpy(pl->sw[0].dY + (size_t)u * d, pl->dE + (size_t)u * e, (size_t)d * sizeof(float));
        memcpy(pl->sw[1].dY + (size_t)u * d, pl->dE + (size_t)u * e + d, (size_t)d * sizeof(float));
    }
    memset(pl->dS, 0, (size_t)n * d * sizeof(float));
    sweep_backward(pl, &pl->sw[0]);
    sweep_backward(pl, &pl->sw[1]);
    /* node transform */
    memset(pl->dZ1, 0, (size_t)n * d * sizeof(float));
    dp_nn_linear_backward(pl->dZ1, dp_nn_grad(p, pl->i_w2), dp_nn_grad(p, pl->i_b2), pl->dS, pl->Z1,
                          dp_nn_param(p, pl->i_w2), n, d, d);
    memset(pl->dA1, 0, (size_t)n * d * sizeof(float));
    dp_nn_leaky_relu_backward(pl->dA1, pl->dZ1, pl->A1, (size_t)n * d, sl);
    dp_nn_linear_backward(NULL, dp_nn_grad(p, pl->i_w1), dp_nn_grad(p, pl->i_b1), pl->dA1, pl->X,
                          dp_nn_param(p, pl->i_w1), n, F, d);
}

void dp_placeto_backward(dp_placeto *pl, const int *assignment, const float *dlogits)
{
    const int D = pl->D;
    for (int t = 0; t < pl->n; t++) {
        const float *dz = dlogits + (size_t)t * D;
        int any = 0;
        for (int k = 0; k < D && !any; k++) any = dz[k] != 0;
        if (!any) continue;
        forward(pl, t, assignment, pl->lg);
        backward_step(pl, t, dz);
    }
}
