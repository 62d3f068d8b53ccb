/* dp_agent.c: DOPPLER, Placeto and GDP behind the agent interface of dp_agent.h. */
#include "dp_agent.h"
#include "dp_alloc.h"

#include <stdlib.h>
#include <string.h>

static const char *const agent_names[DP_AGENT_N_KINDS] = {"doppler", "placeto", "gdp"};

const char *dp_agent_name(int kind)
{
    return kind >= 0 && kind < DP_AGENT_N_KINDS ? agent_names[kind] : "?";
}

int dp_agent_parse(const char *s, int *kind)
{
    for (int i = 0; i < DP_AGENT_N_KINDS; i++)
        if (s && strcmp(s, agent_names[i]) == 0) {
            *kind = i;
            return DP_OK;
        }
    return DP_EINVAL;
}

void dp_agent_arch_default(dp_agent_arch *a)
{
    dp_doppler_arch_default(&a->doppler);
    dp_placeto_arch_default(&a->placeto);
    dp_gdp_arch_default(&a->gdp);
}

struct dp_agent {
    int kind;
    int n, D;
    dp_doppler *dd;      /* DOPPLER */
    dp_placeto *pl;      /* Placeto */
    dp_gdp *gd;          /* GDP */
    const float *logits; /* GDP: (n, D) logits of the last forward, row t = op topo[t] */
    float *dz;           /* Placeto, GDP: (n, D) dL/dlogits of the episode, row t = step t */
    dp_nn_params empty;  /* the "sel" block of agents without SEL */
};

dp_agent *dp_agent_alloc(int kind, const dp_graph *g, const dp_cost *c, const dp_agent_arch *a, dp_error *err)
{
    dp_agent *ag = dp_alloc_calloc(1, sizeof *ag);
    if (!ag) {
        dp_error_set(err, DP_ENOMEM, "out of memory for the agent");
        return NULL;
    }
    ag->kind = kind;
    ag->n = g->n_ops;
    ag->D = c->n_devices;
    dp_nn_params_init(&ag->empty);
    int ok;
    switch (kind) {
    case DP_AGENT_DOPPLER: ok = (ag->dd = dp_doppler_alloc(g, c, &a->doppler, err)) != NULL; break;
    case DP_AGENT_PLACETO: ok = (ag->pl = dp_placeto_alloc(g, c, &a->placeto, err)) != NULL; break;
    case DP_AGENT_GDP: ok = (ag->gd = dp_gdp_alloc(g, c, &a->gdp, err)) != NULL; break;
    default: ok = 0; dp_error_set(err, DP_EINVAL, "unknown agent %d", kind);
    }
    if (ok && kind != DP_AGENT_DOPPLER) {
        ag->dz = dp_alloc_calloc_n((size_t)ag->n * ag->D, sizeof(float));
        if (!ag->dz || dp_nn_params_alloc(&ag->empty) != DP_OK) {
            dp_error_set(err, DP_ENOMEM, "out of memory for the %s agent", dp_agent_name(kind));
            ok = 0;
        }
    }
    if (!ok) {
        dp_agent_free(ag);
        return NULL;
    }
    return ag;
}

dp_agent *dp_agent_bind(const dp_agent *model_of, const dp_graph *g, const dp_cost *c, dp_error *err)
{
    if (!model_of->dd) {
        dp_error_set(err, DP_EINVAL, "%s: its parameters are sized by the device count and its workspace by the graph: "
                     "only doppler's models are bound to several graphs", dp_agent_name(model_of->kind));
        return NULL;
    }
    dp_agent *ag = dp_alloc_calloc(1, sizeof *ag);
    if (!ag) {
        dp_error_set(err, DP_ENOMEM, "out of memory for the agent");
        return NULL;
    }
    ag->kind = model_of->kind;
    ag->n = g->n_ops;
    ag->D = c->n_devices;
    dp_nn_params_init(&ag->empty);
    if (!(ag->dd = dp_doppler_bind(model_of->dd->m, g, c, err))) {
        dp_agent_free(ag);
        return NULL;
    }
    return ag;
}

void dp_agent_free(dp_agent *ag)
{
    if (!ag) return;
    dp_doppler_free(ag->dd);
    dp_placeto_free(ag->pl);
    dp_gdp_free(ag->gd);
    dp_nn_params_free(&ag->empty);
    free(ag->dz);
    free(ag);
}

int dp_agent_kind_of(const dp_agent *ag)
{
    return ag->kind;
}

int dp_agent_init(dp_agent *ag, gsl_rng *r)
{
    if (ag->dd) return dp_doppler_init(ag->dd, r);
    if (ag->pl) return dp_placeto_init(ag->pl, r);
    return dp_gdp_init(ag->gd, r);
}

int dp_agent_has_sel(const dp_agent *ag)
{
    return ag->dd != NULL;
}

int dp_agent_one_shot(const dp_agent *ag)
{
    return ag->gd != NULL;
}

dp_nn_params *dp_agent_sel_params(dp_agent *ag)
{
    return ag->dd ? ag->dd->sel : &ag->empty;
}

dp_nn_params *dp_agent_plc_params(dp_agent *ag)
{
    if (ag->dd) return ag->dd->plc;
    return ag->pl ? dp_placeto_params(ag->pl) : dp_gdp_params(ag->gd);
}

void dp_agent_zero_grad(dp_agent *ag)
{
    if (ag->dd) dp_doppler_zero_grad(ag->dd);
    else dp_nn_params_zero_grad(dp_agent_plc_params(ag));
}

void dp_agent_prepare(dp_agent *ag)
{
    if (ag->dd) dp_doppler_prepare(ag->dd);
    else if (ag->gd) ag->logits = dp_gdp_forward(ag->gd);
}

void dp_agent_episode_begin(dp_agent *ag)
{
    if (ag->dd) dp_doppler_episode_begin(ag->dd);
}

const float *dp_agent_sel_scores(const dp_agent *ag)
{
    return ag->dd ? dp_doppler_sel_scores(ag->dd) : NULL;
}

void dp_agent_plc_logits(dp_agent *ag, const dp_env *env, int t, int v, float *logits)
{
    if (ag->dd) dp_doppler_plc_forward(ag->dd, env, v, logits);
    else if (ag->pl) dp_placeto_logits(ag->pl, t, env->assignment, logits);
    else memcpy(logits, ag->logits + (size_t)t * ag->D, (size_t)ag->D * sizeof(float));
}

void dp_agent_plc_commit(dp_agent *ag, int t, int v, int k)
{
    (void)t;
    if (ag->dd) dp_doppler_plc_commit(ag->dd, v, k);
}

void dp_agent_sel_dscore(dp_agent *ag, int v, float g)
{
    if (ag->dd) dp_doppler_sel_dscore(ag->dd, v, g);
}

void dp_agent_plc_dlogits(dp_agent *ag, int t, const float *dlogits)
{
    if (ag->dd) dp_doppler_plc_set_dlogits(ag->dd, t, dlogits);
    else memcpy(ag->dz + (size_t)t * ag->D, dlogits, (size_t)ag->D * sizeof(float));
}

void dp_agent_episode_backward(dp_agent *ag, const dp_env *env)
{
    if (ag->dd) dp_doppler_episode_backward(ag->dd, env);
    else if (ag->pl) dp_placeto_backward(ag->pl, env->assignment, ag->dz);
    else dp_gdp_backward(ag->gd, ag->dz);
}

void dp_agent_backward(dp_agent *ag)
{
    if (ag->dd) dp_doppler_backward(ag->dd);
}

int dp_agent_grad_state(dp_agent *ag, float **ptr, size_t *len, int max)
{
    float *p[6];
    size_t l[6];
    int k = 0;
    if (ag->dd) {
        dp_doppler *dd = ag->dd;
        const size_t n = (size_t)dd->n, nd = n * (size_t)dd->a.hidden;
        p[k] = dd->sel->grad, l[k++] = dd->sel->n;
        p[k] = dd->plc->grad, l[k++] = dd->plc->n;
        if (!dd->a.no_grad) {
            p[k] = dd->s_dscore, l[k++] = n;
            p[k] = dd->p_dH, l[k++] = nd;
            p[k] = dd->p_dF, l[k++] = nd;
            p[k] = dd->p_dQ, l[k++] = n * (size_t)dd->a.mlp_hidden;
        }
    } else {
        dp_nn_params *b = dp_agent_plc_params(ag);
        p[k] = b->grad, l[k++] = b->n;
    }
    int m = 0;
    for (int i = 0; i < k && m < max; i++)
        if (l[i] > 0) {
            ptr[m] = p[i];
            len[m++] = l[i];
        }
    return m;
}

dp_doppler *dp_agent_doppler(dp_agent *ag)
{
    return ag->dd;
}
