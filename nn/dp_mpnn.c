/* dp_mpnn.c: the DOPPLER message-passing network (see dp_mpnn.h). */
#include "dp_mpnn.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(dp_nn_params *p, const char *prefix, const char *name, int rows, int cols)
{
    char full[DP_NN_NAME_MAX];
    snprintf(full, sizeof full, "%s.%s", prefix, name);
    return dp_nn_params_add(p, full, rows, cols);
}

int dp_mpnn_declare(dp_mpnn *m, dp_nn_params *p, const char *prefix, int F, int d, int K, int T)
{
    memset(m, 0, sizeof *m);
    m->F = F;
    m->d = d;
    m->K = K;
    m->T = T;
    if (F <= 0 || d <= 0 || K <= 0 || T <= 0) return DP_EINVAL;
    m->i_pw = add(p, prefix, "proj.w", d, F);
    m->i_pb = add(p, prefix, "proj.b", 1, d);
    m->i_ew1 = add(p, prefix, "edge.w1", K, 1);
    m->i_eb1 = add(p, prefix, "edge.b1", 1, K);
    m->i_ew2 = add(p, prefix, "edge.w2", d * d, K);
    m->i_eb2 = add(p, prefix, "edge.b2", 1, d * d);
    m->i_cb = add(p, prefix, "conv.b", 1, d);
    m->i_wih = add(p, prefix, "gru.w_ih", 3 * d, d);
    m->i_whh = add(p, prefix, "gru.w_hh", 3 * d, d);
    m->i_bih = add(p, prefix, "gru.b_ih", 1, 3 * d);
    m->i_bhh = add(p, prefix, "gru.b_hh", 1, 3 * d);
    int ids[] = {m->i_pw, m->i_pb, m->i_ew1, m->i_eb1, m->i_ew2, m->i_eb2, m->i_cb, m->i_wih, m->i_whh, m->i_bih, m->i_bhh};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i] < 0) return ids[i];
    return DP_OK;
}

/* allocate the caches (in m->owned), or (bytes != NULL) only add up their sizes; with share,
 * the one-step caches, gradients and scratch are share's */
static int mpnn_buffers(dp_mpnn *m, const dp_nn_ecgraph *g, size_t *bytes, const dp_mpnn *share)
{
    const size_t n = (size_t)g->n_nodes, d = (size_t)m->d, T = (size_t)m->T, U = (size_t)(g->n_classes ? g->n_classes : 1);
    const size_t rows = (size_t)(g->n_rows ? g->n_rows : 1), K = (size_t)m->K;
#define BUF(ptr, count) do { size_t k_ = (size_t)(count); \
        if (bytes) *bytes += k_ * sizeof(float); \
        else if (!DP_ALLOC(&m->owned, ptr, k_, sizeof(float))) return DP_ENOMEM; } while (0)
    BUF(m->P, n * d);
    BUF(m->E1, U * K);
    BUF(m->R1, U * K);
    BUF(m->Wc, U * d * d);
    BUF(m->H, (m->no_grad ? 2 : T + 1) * n * d);
    BUF(m->dWc, U * d * d);
    BUF(m->dR1, U * K);
    BUF(m->dE1, U * K);
    size_t s1 = dp_nn_gru_scratch(g->n_nodes, m->d), s2 = dp_nn_ecconv_scratch(g, m->d, m->d);
    m->scratch_n = s1 > s2 ? s1 : s2;
    if (share) {
        m->A = share->A; m->M = share->M; m->G = share->G; m->gru = share->gru;
        m->dH = share->dH; m->dHp = share->dHp; m->dM = share->dM; m->dA = share->dA;
        m->scratch = share->scratch;
        return DP_OK;
    }
    BUF(m->A, n * d);
    BUF(m->M, n * d);
    BUF(m->G, rows * d);
    BUF(m->gru, n * 4 * d);
    BUF(m->scratch, m->scratch_n);
    if (m->no_grad) {
        m->dH = m->dHp = m->dM = m->dA = NULL;
        return DP_OK;
    }
    BUF(m->dH, n * d);
    BUF(m->dHp, n * d);
    BUF(m->dM, n * d);
    BUF(m->dA, n * d);
#undef BUF
    return DP_OK;
}

size_t dp_mpnn_bytes(const dp_mpnn *m, const dp_nn_ecgraph *g)
{
    dp_mpnn tmp = *m;
    size_t bytes = 0;
    mpnn_buffers(&tmp, g, &bytes, NULL);
    return bytes;
}

size_t dp_mpnn_bytes_sharing(const dp_mpnn *m, const dp_nn_ecgraph *g)
{
    dp_mpnn tmp = *m, other = *m;
    size_t bytes = 0;
    mpnn_buffers(&tmp, g, &bytes, &other);
    return bytes;
}

int dp_mpnn_alloc(dp_mpnn *m, const dp_nn_params *p, const dp_nn_ecgraph *g)
{
    m->p = p;
    m->g = g;
    m->n = g->n_nodes;
    return mpnn_buffers(m, g, NULL, NULL);
}

int dp_mpnn_alloc_sharing(dp_mpnn *m, const dp_nn_params *p, const dp_nn_ecgraph *g, const dp_mpnn *with)
{
    if (with->g != g || with->d != m->d || with->n != g->n_nodes || with->scratch_n < dp_nn_gru_scratch(g->n_nodes, m->d) ||
        (with->no_grad && !m->no_grad))
        return DP_EINVAL;
    m->p = p;
    m->g = g;
    m->n = g->n_nodes;
    return mpnn_buffers(m, g, NULL, with);
}

void dp_mpnn_free(dp_mpnn *m)
{
    if (!m) return;
    dp_alloc_table_free(&m->owned);
}

int dp_mpnn_init(dp_mpnn *m, gsl_rng *r)
{
    const dp_nn_params *p = m->p;
    int ws[] = {m->i_pw, m->i_ew1, m->i_ew2, m->i_wih, m->i_whh};
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        const dp_nn_tensor *t = &p->t[ws[i]];
        int rc = dp_nn_init_orthogonal(dp_nn_param(p, ws[i]), t->rows, t->cols, 1.0, r);
        if (rc != DP_OK) return rc;
    }
    int bs[] = {m->i_pb, m->i_eb1, m->i_eb2, m->i_cb, m->i_bih, m->i_bhh};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
        const dp_nn_tensor *t = &p->t[bs[i]];
        memset(dp_nn_param(p, bs[i]), 0, (size_t)t->rows * t->cols * sizeof(float));
    }
    return DP_OK;
}

/* One message-passing step from state H to Hn, leaving its caches (A, M, G, gru) for the backward
 * of this step. The backward calls it again on the stored H of a step: the same calls on the same
 * inputs give the forward's caches bit for bit. */
static void mpnn_step(dp_mpnn *m, const float *H, float *Hn)
{
    const dp_nn_params *p = m->p;
    const size_t nd = (size_t)m->n * m->d;
    const int d = m->d;
    dp_nn_ecconv_forward(m->A, m->G, H, m->Wc, dp_nn_param(p, m->i_cb), m->g, d, d, m->scratch);
    dp_nn_leaky_relu_forward(m->M, m->A, nd, 0.0f);
    dp_nn_gru_forward(Hn, m->gru, m->M, H, dp_nn_param(p, m->i_wih), dp_nn_param(p, m->i_whh), dp_nn_param(p, m->i_bih),
                      dp_nn_param(p, m->i_bhh), m->n, d, m->scratch);
}

const float *dp_mpnn_forward(dp_mpnn *m, const float *X)
{
    const dp_nn_params *p = m->p;
    const dp_nn_ecgraph *g = m->g;
    const int n = m->n, d = m->d, K = m->K, U = g->n_classes;
    const size_t nd = (size_t)n * d;
    m->X = X;
    dp_nn_linear_forward(m->P, X, dp_nn_param(p, m->i_pw), dp_nn_param(p, m->i_pb), n, m->F, d);
    dp_nn_leaky_relu_forward(m->H, m->P, nd, 0.0f);
    if (U > 0) {
        dp_nn_linear_forward(m->E1, g->class_feat, dp_nn_param(p, m->i_ew1), dp_nn_param(p, m->i_eb1), U, 1, K);
        dp_nn_leaky_relu_forward(m->R1, m->E1, (size_t)U * K, 0.0f);
        dp_nn_linear_forward(m->Wc, m->R1, dp_nn_param(p, m->i_ew2), dp_nn_param(p, m->i_eb2), U, K, d * d);
    }
    if (m->no_grad) {
        /* two states, in turn: step t reads state t % 2 and writes the other */
        for (int t = 0; t < m->T; t++) {
            float *H = m->H + (size_t)(t % 2) * nd;
            mpnn_step(m, H, m->H + (size_t)((t + 1) % 2) * nd);
        }
        return m->H + (size_t)(m->T % 2) * nd;
    }
    for (int t = 0; t < m->T; t++) {
        float *H = m->H + (size_t)t * nd;
        mpnn_step(m, H, H + nd);
    }
    return m->H + (size_t)m->T * nd;
}

void dp_mpnn_backward(dp_mpnn *m, const float *dout)
{
    const dp_nn_params *p = m->p;
    const dp_nn_ecgraph *g = m->g;
    const int n = m->n, d = m->d, K = m->K, U = g->n_classes;
    const size_t nd = (size_t)n * d;
    assert(!m->no_grad);
    memcpy(m->dH, dout, nd * sizeof(float));
    memset(m->dWc, 0, (size_t)(U ? U : 1) * d * d * sizeof(float));
    for (int t = m->T - 1; t >= 0; t--) {
        const float *H = m->H + (size_t)t * nd;
        /* this step's caches again, from its input state (its output goes to dA, unused yet) */
        mpnn_step(m, H, m->dA);
        memset(m->dM, 0, nd * sizeof(float));
        memset(m->dHp, 0, nd * sizeof(float));
        dp_nn_gru_backward(m->dM, m->dHp, dp_nn_grad(p, m->i_wih), dp_nn_grad(p, m->i_whh), dp_nn_grad(p, m->i_bih),
                           dp_nn_grad(p, m->i_bhh), m->dH, m->gru, m->M, H, dp_nn_param(p, m->i_wih),
                           dp_nn_param(p, m->i_whh), n, d, m->scratch);
        memset(m->dA, 0, nd * sizeof(float));
        dp_nn_leaky_relu_backward(m->dA, m->dM, m->A, nd, 0.0f);
        dp_nn_ecconv_backward(m->dHp, m->dWc, dp_nn_grad(p, m->i_cb), m->dA, m->G, m->Wc, g, d, d, m->scratch);
        float *sw = m->dH;
        m->dH = m->dHp;
        m->dHp = sw;
    }
    /* dH now holds the gradient at H0 = relu(P): reuse dA for dP */
    memset(m->dA, 0, nd * sizeof(float));
    dp_nn_leaky_relu_backward(m->dA, m->dH, m->P, nd, 0.0f);
    dp_nn_linear_backward(NULL, dp_nn_grad(p, m->i_pw), dp_nn_grad(p, m->i_pb), m->dA, m->X, dp_nn_param(p, m->i_pw),
                          n, m->F, d);
    if (U > 0) {
        memset(m->dR1, 0, (size_t)U * K * sizeof(float));
        dp_nn_linear_backward(m->dR1, dp_nn_grad(p, m->i_ew2), dp_nn_grad(p, m->i_eb2), m->dWc, m->R1,
                              dp_nn_param(p, m->i_ew2), U, K, d * d);
        float *dE1 = m->dE1;
        memset(dE1, 0, (size_t)U * K * sizeof(float));
        dp_nn_leaky_relu_backward(dE1, m->dR1, m->E1, (size_t)U * K, 0.0f);
        dp_nn_linear_backward(NULL, dp_nn_grad(p, m->i_ew1), dp_nn_grad(p, m->i_eb1), dE1, g->class_feat,
                              dp_nn_param(p, m->i_ew1), U, 1, K);
    }
}
