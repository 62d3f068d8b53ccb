/* dp_ptrain.c: training and placing with Placeto and GDP (see dp_ptrain.h). */
#include "dp_ptrain.h"
#include "dp_json.h"
#include "dp_env.h"
#include "dp_h5io.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_rng.h>

/* ---- config ---- */

static const char *method_names[2] = {"placeto", "gdp"};

const char *dp_ptrain_method_name(int method)
{
    return method == DP_PTRAIN_PLACETO || method == DP_PTRAIN_GDP ? method_names[method] : "?";
}

int dp_ptrain_method_parse(const char *s, int *method)
{
    for (int i = 0; i < 2; i++)
        if (s && strcmp(s, method_names[i]) == 0) {
            *method = i;
            return DP_OK;
        }
    return DP_EINVAL;
}

void dp_ptrain_config_default(dp_ptrain_config *c, int method)
{
    memset(c, 0, sizeof *c);
    c->method = method;
    dp_placeto_arch_default(&c->placeto);
    dp_gdp_arch_default(&c->gdp);
    dp_train_config_default(&c->train);
}

char *dp_ptrain_config_to_json(const dp_ptrain_config *c)
{
    char *base = dp_train_config_to_json(&c->train);
    json_t *o = base ? json_loads(base, 0, NULL) : NULL;
    free(base);
    if (!o) return NULL;
    json_object_set_new(o, "method", json_string(dp_ptrain_method_name(c->method)));
    json_t *p = json_object();
    json_object_set_new(p, "hidden", json_integer(c->placeto.hidden));
    json_object_set_new(p, "mlp_hidden", json_integer(c->placeto.mlp_hidden));
    json_object_set_new(p, "slope", json_real(c->placeto.slope));
    json_object_set_new(o, "placeto", p);
    json_t *q = json_object();
    json_object_set_new(q, "hidden", json_integer(c->gdp.hidden));
    json_object_set_new(q, "layers", json_integer(c->gdp.layers));
    json_object_set_new(q, "heads", json_integer(c->gdp.heads));
    json_object_set_new(q, "mlp_hidden", json_integer(c->gdp.mlp_hidden));
    json_object_set_new(q, "slope", json_real(c->gdp.slope));
    json_object_set_new(o, "gdp", q);
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;
}

static int arch_int(json_t *v, const char *key, int lo, int hi, int *out, dp_error *err)
{
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return dp_error_set(err, DP_EINVAL, "config: \"%s\" must be an integer in [%d, %d]", key, lo, hi);
    *out = (int)json_integer_value(v);
    return DP_OK;
}

static int arch_slope(json_t *v, const char *key, float *out, dp_error *err)
{
    if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= 1))
        return dp_error_set(err, DP_EINVAL, "config: \"%s\" must be a number in [0, 1]", key);
    *out = (float)json_number_value(v);
    return DP_OK;
}

static int arch_from_json(dp_ptrain_config *c, const char *which, json_t *v, dp_error *err)
{
    if (!json_is_object(v)) return dp_error_set(err, DP_EINVAL, "config: \"%s\" must be an object", which);
    const char *k;
    json_t *w;
    json_object_foreach(v, k, w) {
        char full[96];
        snprintf(full, sizeof full, "%s.%s", which, k);
        int rc;
        if (strcmp(which, "placeto") == 0) {
            if (strcmp(k, "hidden") == 0) rc = arch_int(w, full, 1, 4096, &c->placeto.hidden, err);
            else if (strcmp(k, "mlp_hidden") == 0) rc = arch_int(w, full, 1, 4096, &c->placeto.mlp_hidden, err);
            else if (strcmp(k, "slope") == 0) rc = arch_slope(w, full, &c->placeto.slope, err);
            else rc = dp_error_set(err, DP_EINVAL, "config: unknown key \"%s\"", full);
        } else {
            if (strcmp(k, "hidden") == 0) rc = arch_int(w, full, 1, 4096, &c->gdp.hidden, err);
            else if (strcmp(k, "layers") == 0) rc = arch_int(w, full, 0, 64, &c->gdp.layers, err);
            else if (strcmp(k, "heads") == 0) rc = arch_int(w, full, 1, 256, &c->gdp.heads, err);
            else if (strcmp(k, "mlp_hidden") == 0) rc = arch_int(w, full, 1, 4096, &c->gdp.mlp_hidden, err);
            else if (strcmp(k, "slope") == 0) rc = arch_slope(w, full, &c->gdp.slope, err);
            else rc = dp_error_set(err, DP_EINVAL, "config: unknown key \"%s\"", full);
        }
        if (rc != DP_OK) return rc;
    }
    if (c->gdp.hidden % c->gdp.heads != 0)
        return dp_error_set(err, DP_EINVAL, "config: gdp.hidden (%d) must be a multiple of gdp.heads (%d)", c->gdp.hidden,
                            c->gdp.heads);
    return DP_OK;
}

static int from_json(dp_ptrain_config *c, json_t *o, dp_error *err)
{
    if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "config: the top level must be an object");
    json_t *m = json_object_get(o, "method");
    if (m) {
        if (dp_ptrain_method_parse(json_string_value(m), &c->method) != DP_OK)
            return dp_error_set(err, DP_EINVAL, "config: \"method\" must be \"placeto\" or \"gdp\"");
        json_object_del(o, "method");
    }
    static const char *arch_keys[2] = {"placeto", "gdp"};
    for (int i = 0; i < 2; i++) {
        json_t *a = json_object_get(o, arch_keys[i]);
        if (!a) continue;
        int rc = arch_from_json(c, arch_keys[i], a, err);
        if (rc != DP_OK) return rc;
        json_object_del(o, arch_keys[i]);
    }
    /* the rest is DOPPLER's training config, read by its own reader */
    char *rest = json_dumps(o, JSON_REAL_PRECISION(17));
    if (!rest) return dp_error_set(err, DP_ENOMEM, "out of memory");
    int rc = dp_train_config_from_json_text(&c->train, rest, err);
    free(rest);
    return rc;
}

int dp_ptrain_config_from_json_text(dp_ptrain_config *c, const char *text, dp_error *err)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!o) return dp_error_set(err, DP_EINVAL, "config: line %d: %s", je.line, je.text);
    int rc = from_json(c, o, err);
    json_decref(o);
    return rc;
}

int dp_ptrain_config_load(dp_ptrain_config *c, const char *path, dp_error *err)
{
    /* size and memory checked before parsing, duplicate keys refused, errors at file:line:column */
    json_t *o = dp_json_load(path, err);
    if (!o) return err ? err->code : DP_EINVAL;
    int rc = from_json(c, o, err);
    json_decref(o);
    if (rc != DP_OK) dp_error_prefix(err, "%s", path);
    return rc;
}

/* ---- the trainer ---- */

struct dp_ptrainer {
    const dp_graph *g;
    const dp_costs *c;
    dp_ptrain_config cfg;
    dp_placeto *pl;
    dp_gdp *gd;
    dp_nn_params *params;
    dp_nn_params empty;     /* the /sel block of the checkpoints: these methods have no SEL */
    dp_env *env;
    dp_oracle oracle;       /* the cost of an assignment (a copy of the caller's) */
    gsl_rng *master, *ep;
    int n, D;
    int stage;
    long episode;
    double running_sum;
    long running_count;
    double best;
    int *best_assign;
    int traj_ready;
    long traj_episodes, traj_steps;
    /* model selection, as DOPPLER's trainer: the parameters whose greedy placement was best */
    float *best_param;      /* (params->n) */
    double best_greedy;     /* raw unit */
    int has_best;
    double last_greedy;           /* makespan of the latest greedy evaluation (raw time) */
    /* the current episode */
    float *z, *p, *lp, *dz;  /* (n, D) logits, probabilities, log-probabilities, dL/dlogits */
    double *H;               /* (n) entropies */
    int *a;                  /* (n) devices chosen */
    unsigned char *mark;     /* (D) earliest-start devices of a step */
    float *dlp;              /* (D) */
    dp_traj_episode *rows_ep;
    dp_traj_step *rows_st;
    long n_rows_ep, cap_rows_ep, n_rows_st, cap_rows_st;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void dp_ptrainer_free(dp_ptrainer *tr)
{
    if (!tr) return;
    dp_placeto_free(tr->pl);
    dp_gdp_free(tr->gd);
    dp_nn_params_free(&tr->empty);
    dp_env_free(tr->env);
    if (tr->master) gsl_rng_free(tr->master);
    if (tr->ep) gsl_rng_free(tr->ep);
    free(tr->best_assign);
    free(tr->best_param);
    free(tr->z); free(tr->p); free(tr->lp); free(tr->dz); free(tr->H); free(tr->a); free(tr->mark); free(tr->dlp);
    free(tr->rows_ep); free(tr->rows_st);
    free(tr);
}

dp_ptrainer *dp_ptrainer_alloc(const dp_graph *g, const dp_costs *c, const dp_ptrain_config *cfg, const dp_oracle *oracle,
                                dp_error *err)
{
    if (!oracle) {
        dp_error_set(err, DP_EINVAL, "trainer: a cost oracle is required (dp_engine_oracle of the machine's engine)");
        return NULL;
    }
    dp_ptrainer *tr = calloc(1, sizeof *tr);
    if (!tr) goto nomem;
    tr->oracle = *oracle;
    tr->g = g;
    tr->c = c;
    tr->cfg = *cfg;
    for (int k = 0; k <= DP_STAGE_REAL; k++)
        if (tr->cfg.train.stage[k].batch < 1) tr->cfg.train.stage[k].batch = 1;
    tr->n = g->n_ops;
    tr->D = c->n_devices;
    if (cfg->method == DP_PTRAIN_PLACETO) {
        if (!(tr->pl = dp_placeto_alloc(g, c, &cfg->placeto, err))) goto fail;
        tr->params = dp_placeto_params(tr->pl);
    } else if (cfg->method == DP_PTRAIN_GDP) {
        if (!(tr->gd = dp_gdp_alloc(g, c, &cfg->gdp, err))) goto fail;
        tr->params = dp_gdp_params(tr->gd);
    } else {
        dp_error_set(err, DP_EINVAL, "unknown learned baseline %d", cfg->method);
        goto fail;
    }
    dp_nn_params_init(&tr->empty);
    if (dp_nn_params_alloc(&tr->empty) != DP_OK) goto nomem;
    if (!(tr->env = dp_env_alloc(g, c, err))) goto fail;
    tr->master = gsl_rng_alloc(gsl_rng_mt19937);
    tr->ep = gsl_rng_alloc(gsl_rng_mt19937);
    if (!tr->master || !tr->ep) goto nomem;
    gsl_rng_set(tr->master, (unsigned long)cfg->train.seed);
    const size_t nD = (size_t)tr->n * tr->D;
    tr->best_assign = dp_calloc_n((size_t)tr->n, sizeof(int));
    tr->z = dp_calloc_n(nD, sizeof(float));
    tr->p = dp_calloc_n(nD, sizeof(float));
    tr->lp = dp_calloc_n(nD, sizeof(float));
    tr->dz = dp_calloc_n(nD, sizeof(float));
    tr->H = dp_calloc_n((size_t)tr->n, sizeof(double));
    tr->a = dp_calloc_n((size_t)tr->n, sizeof(int));
    tr->mark = dp_calloc_n((size_t)tr->D, 1);
    tr->dlp = dp_calloc_n((size_t)tr->D, sizeof(float));
    if (!tr->best_assign || !tr->z || !tr->p || !tr->lp || !tr->dz || !tr->H || !tr->a || !tr->mark || !tr->dlp) goto nomem;
    if (!(tr->best_param = dp_calloc_n(tr->params->n ? tr->params->n : 1, sizeof(float)))) goto nomem;
    int rc = tr->pl ? dp_placeto_init(tr->pl, tr->master) : dp_gdp_init(tr->gd, tr->master);
    if (rc != DP_OK) goto nomem;
    tr->stage = -1;
    tr->best = INFINITY;
    tr->best_greedy = INFINITY;
    return tr;
nomem:
    dp_error_set(err, DP_ENOMEM, "out of memory for the %s trainer", dp_ptrain_method_name(cfg->method));
fail:
    dp_ptrainer_free(tr);
    return NULL;
}

void dp_ptrainer_set_oracle(dp_ptrainer *tr, const dp_oracle *o)
{
    if (o) tr->oracle = *o;
}

dp_nn_params *dp_ptrainer_params(dp_ptrainer *tr)
{
    return tr->params;
}

int dp_ptrainer_stage(const dp_ptrainer *tr)
{
    return tr->stage;
}

long dp_ptrainer_episode(const dp_ptrainer *tr)
{
    return tr->episode;
}

enum { MODE_EPSILON = 0, MODE_GREEDY = 1, MODE_SAMPLE = 2 };

static int choose(const float *p, const float *z, int k, int mode, double eps, gsl_rng *r)
{
    if (mode == MODE_SAMPLE) {
        double u = gsl_rng_uniform(r), s = 0;
        for (int i = 0; i < k; i++) {
            s += p[i];
            if (u < s) return i;
        }
        return k - 1;
    }
    if (mode == MODE_EPSILON && eps > 0 && gsl_rng_uniform(r) < eps) return (int)gsl_rng_uniform_int(r, (unsigned long)k);
    int best = 0;
    for (int i = 1; i < k; i++)
        if (z[i] > z[best]) best = i;
    return best;
}

/* One episode with the current parameters; records logits, probabilities and choices. */
static int rollout(dp_ptrainer *tr, int mode, double eps, gsl_rng *r, double *ms, double *plc_agree, dp_error *err)
{
    const int n = tr->n, D = tr->D;
    dp_env *env = tr->env;
    const float *all = tr->gd ? dp_gdp_forward(tr->gd) : NULL;
    dp_env_reset(env);
    int agree = 0;
    for (int t = 0; t < n; t++) {
        const int v = tr->g->topo[t];
        float *z = tr->z + (size_t)t * D, *p = tr->p + (size_t)t * D, *lp = tr->lp + (size_t)t * D;
        if (all) memcpy(z, all + (size_t)t * D, (size_t)D * sizeof(float));
        else dp_placeto_logits(tr->pl, t, env->assignment, z);
        tr->H[t] = dp_nn_softmax_forward(p, lp, z, D);
        int k = tr->a[t] = choose(p, z, D, mode, eps, r);
        if (plc_agree) {
            dp_env_cp_place_all(env, v, tr->mark);
            agree += tr->mark[k];
        }
        int rc = dp_env_step(env, v, k, err);
        if (rc != DP_OK) return rc;
    }
    if (plc_agree) *plc_agree = (double)agree / n;
    return dp_oracle_cost(&tr->oracle, env->assignment, ms, err);
}

/* dL/dlogits of the recorded episode, scaled, back through the network */
static void episode_grad(dp_ptrainer *tr, const dp_train_stage *st, double r, double scale)
{
    const int n = tr->n, D = tr->D;
    const int sequential = tr->pl != NULL;
    double R = r;
    for (int t = n - 1; t >= 0; t--) {
        const float *p = tr->p + (size_t)t * D, *lp = tr->lp + (size_t)t * D;
        float *dz = tr->dz + (size_t)t * D;
        for (int k = 0; k < D; k++) {
            tr->dlp[k] = 0;
            dz[k] = 0;
        }
        tr->dlp[tr->a[t]] = (float)(-st->pg_weight * R);
        dp_nn_log_softmax_backward(dz, tr->dlp, p, D);
        if (st->entropy_weight != 0) dp_nn_entropy_backward(dz, (float)(-st->entropy_weight), p, lp, tr->H[t], D);
        for (int k = 0; k < D; k++) dz[k] = (float)(scale * dz[k]);
        if (sequential) R *= tr->cfg.train.gamma;
    }
    if (tr->pl) dp_placeto_backward(tr->pl, tr->env->assignment, tr->dz);
    else dp_gdp_backward(tr->gd, tr->dz);
}

static void update(dp_ptrainer *tr, double lr)
{
    const dp_train_config *c = &tr->cfg.train;
    if (c->grad_clip > 0) dp_nn_clip_grad_norm(tr->params, c->grad_clip);
    dp_nn_adam_step(tr->params, (float)lr, (float)c->adam_beta1, (float)c->adam_beta2, (float)c->adam_eps,
                    (float)c->weight_decay);
}

/* ---- trajectory rows and checkpoints ---- */

static int push_rows(dp_ptrainer *tr, const dp_traj_episode *e)
{
    if (tr->n_rows_ep == tr->cap_rows_ep) {
        long cap = tr->cap_rows_ep ? 2 * tr->cap_rows_ep : 64;
        dp_traj_episode *x = realloc(tr->rows_ep, (size_t)cap * sizeof *x);
        if (!x) return DP_ENOMEM;
        tr->rows_ep = x;
        tr->cap_rows_ep = cap;
    }
    tr->rows_ep[tr->n_rows_ep++] = *e;
    if (tr->n_rows_st + tr->n > tr->cap_rows_st) {
        long cap = tr->cap_rows_st ? 2 * tr->cap_rows_st : 64L * tr->n;
        while (cap < tr->n_rows_st + tr->n) cap *= 2;
        dp_traj_step *x = realloc(tr->rows_st, (size_t)cap * sizeof *x);
        if (!x) return DP_ENOMEM;
        tr->rows_st = x;
        tr->cap_rows_st = cap;
    }
    for (int t = 0; t < tr->n; t++) {
        dp_traj_step *s = &tr->rows_st[tr->n_rows_st++];
        s->sel_op = tr->g->topo[t];
        s->sel_logp = 0;
        s->ready = 1;
        s->plc_device = tr->a[t];
        s->plc_logp = tr->lp[(size_t)t * tr->D + tr->a[t]];
    }
    return DP_OK;
}

static int flush_rows(dp_ptrainer *tr, const char *path, dp_error *err)
{
    if (path && (tr->n_rows_ep || tr->n_rows_st)) {
        int rc = dp_traj_append(path, tr->rows_ep, tr->n_rows_ep, tr->rows_st, tr->n_rows_st, err);
        if (rc != DP_OK) return rc;
        tr->traj_episodes += tr->n_rows_ep;
        tr->traj_steps += tr->n_rows_st;
    }
    tr->n_rows_ep = tr->n_rows_st = 0;
    return DP_OK;
}

static int save_checkpoint(dp_ptrainer *tr, const char *path, dp_error *err)
{
    dp_ckpt ck;
    memset(&ck, 0, sizeof ck);
    char *cfg = dp_ptrain_config_to_json(&tr->cfg);
    if (!cfg) return dp_error_set(err, DP_ENOMEM, "out of memory");
    ck.graph = tr->g->name;
    ck.n_ops = tr->n;
    ck.n_devices = tr->D;
    ck.config_json = cfg;
    ck.stage = tr->stage;
    ck.episode = tr->episode;
    ck.running_sum = tr->running_sum;
    ck.running_count = tr->running_count;
    ck.best_makespan = tr->best;
    ck.best_assignment = tr->best_assign;
    ck.traj_episodes = tr->traj_episodes;
    ck.traj_steps = tr->traj_steps;
    snprintf(ck.rng_name, sizeof ck.rng_name, "%s", gsl_rng_name(tr->master));
    ck.rng_state = gsl_rng_state(tr->master);
    ck.rng_size = gsl_rng_size(tr->master);
    ck.has_best = tr->has_best;
    ck.best_greedy = tr->best_greedy;
    ck.sel_best = tr->empty.param;
    ck.plc_best = tr->best_param;
    int rc = dp_ckpt_write(path, &ck, &tr->empty, tr->params, err);
    free(cfg);
    return rc;
}

static int load_checkpoint(dp_ptrainer *tr, const char *path, int resume, dp_error *err)
{
    dp_ckpt ck;
    memset(&ck, 0, sizeof ck);
    ck.n_ops = tr->n;
    ck.n_devices = tr->D;
    ck.best_assignment = tr->best_assign;
    size_t sz = gsl_rng_size(tr->master);
    unsigned char *st = malloc(sz);
    if (!st) return dp_error_set(err, DP_ENOMEM, "out of memory");
    ck.rng_state = st;
    ck.rng_size = sz;
    ck.sel_best = tr->empty.param;
    ck.plc_best = tr->best_param;
    int rc = dp_ckpt_read(path, &ck, &tr->empty, tr->params, resume, err);
    if (rc == DP_OK) {
        tr->has_best = ck.has_best;
        tr->best_greedy = ck.has_best ? ck.best_greedy : INFINITY;
        /* the checkpoint must hold this method's network (the shapes were checked by the reader) */
        dp_ptrain_config other;
        dp_ptrain_config_default(&other, -1);
        dp_error e2;
        if (!ck.config_json || dp_ptrain_config_from_json_text(&other, ck.config_json, &e2) != DP_OK || other.method != tr->cfg.method)
            rc = dp_error_set(err, DP_EINVAL, "%s: not a %s checkpoint", path, dp_ptrain_method_name(tr->cfg.method));
    }
    if (rc == DP_OK && resume) {
        if (strcmp(ck.rng_name, gsl_rng_name(tr->master)) != 0) {
            rc = dp_error_set(err, DP_EINVAL, "%s: generator %s, expected %s", path, ck.rng_name, gsl_rng_name(tr->master));
        } else {
            memcpy(gsl_rng_state(tr->master), st, sz);
            tr->stage = ck.stage;
            tr->episode = (long)ck.episode;
            tr->running_sum = ck.running_sum;
            tr->running_count = (long)ck.running_count;
            tr->best = ck.best_makespan;
            tr->traj_episodes = (long)ck.traj_episodes;
            tr->traj_steps = (long)ck.traj_steps;
        }
    }
    free(st);
    free((char *)ck.graph);
    free(ck.config_json);
    return rc;
}

int dp_ptrainer_init_from(dp_ptrainer *tr, const char *checkpoint, dp_error *err)
{
    int rc = load_checkpoint(tr, checkpoint, 0, err);
    /* the checkpoint's best-greedy parameters when it has them (as dp_trainer_init_from) */
    if (rc == DP_OK) dp_ptrainer_use_best(tr);
    tr->has_best = 0;
    tr->best_greedy = INFINITY;
    tr->best = INFINITY;
    return rc;
}

int dp_ptrainer_resume(dp_ptrainer *tr, const char *checkpoint, const char *trajectory, dp_error *err)
{
    int rc = load_checkpoint(tr, checkpoint, 1, err);
    if (rc != DP_OK) return rc;
    if (trajectory) {
        rc = dp_traj_truncate(trajectory, tr->traj_episodes, tr->traj_steps, err);
        if (rc != DP_OK) return rc;
        tr->traj_ready = 1;
    }
    return DP_OK;
}

/* Greedy placement with the current parameters, kept when the best so far. Runs at stage start
 * and at checkpoint boundaries (after an update): it disturbs neither gradients nor the RNG. */
static int eval_greedy(dp_ptrainer *tr, dp_error *err)
{
    double ms;
    int rc = rollout(tr, MODE_GREEDY, 0, NULL, &ms, NULL, err);
    if (rc != DP_OK) return rc;
    tr->last_greedy = ms;
    if (ms < tr->best_greedy) {
        tr->best_greedy = ms;
        memcpy(tr->best_param, tr->params->param, tr->params->n * sizeof(float));
        tr->has_best = 1;
    }
    return DP_OK;
}

int dp_ptrainer_use_best(dp_ptrainer *tr)
{
    if (!tr->has_best) return 0;
    memcpy(tr->params->param, tr->best_param, tr->params->n * sizeof(float));
    return 1;
}

/* ---- the training loop ---- */

int dp_ptrainer_run(dp_ptrainer *tr, int stage, long episodes, const dp_train_io *io, dp_error *err)
{
    if (stage != DP_STAGE_SIM && stage != DP_STAGE_REAL)
        return dp_error_set(err, DP_EINVAL, "%s learns by reinforcement only: stage sim or real, not %s",
                            dp_ptrain_method_name(tr->cfg.method), dp_stage_name(stage));
    dp_train_stage st = tr->cfg.train.stage[stage];
    if (episodes > 0) st.episodes = episodes;
    const dp_train_config *c = &tr->cfg.train;
    dp_train_io none;
    memset(&none, 0, sizeof none);
    if (!io) io = &none;
    if (stage != tr->stage) {
        tr->stage = stage;
        tr->episode = 0;
        tr->running_sum = 0;
        tr->running_count = 0;
        tr->best = INFINITY;
        tr->has_best = 0;
        tr->best_greedy = INFINITY;
        memset(tr->params->m, 0, tr->params->n * sizeof(float));
        memset(tr->params->v, 0, tr->params->n * sizeof(float));
        tr->params->adam_t = 0;
    }
    /* the starting point is a candidate too */
    if (tr->episode == 0 && !tr->has_best) {
        int rc0 = eval_greedy(tr, err);
        if (rc0 != DP_OK) return rc0;
    }
    if (io->trajectory && !tr->traj_ready) {
        char *cfg = dp_ptrain_config_to_json(&tr->cfg);
        int rc = cfg ? dp_traj_create(io->trajectory, tr->g->name, tr->n, tr->D, tr->oracle.name, tr->g->time_unit, cfg, err)
                     : dp_error_set(err, DP_ENOMEM, "out of memory");
        free(cfg);
        if (rc != DP_OK) return rc;
        tr->traj_ready = 1;
        tr->traj_episodes = tr->traj_steps = 0;
    }
    const double sc = tr->g->time_scale > 0 ? tr->g->time_scale : 1;
    long every = c->checkpoint_every > 0 ? c->checkpoint_every : 100;
    if (every % st.batch) every += st.batch - every % st.batch;
    const double t0 = now_s();
    long done_here = 0;
    int rc = DP_OK;
    while (tr->episode < st.episodes) {
        const long e = tr->episode;
        const double frac = (double)e / (double)st.episodes;
        const double eps = st.epsilon + (st.epsilon_final - st.epsilon) * frac;
        if (e % st.batch == 0) dp_nn_params_zero_grad(tr->params);
        const double te = now_s();
        uint64_t seed = gsl_rng_get(tr->master);
        gsl_rng_set(tr->ep, (unsigned long)seed);
        double ms, agree = 0;
        rc = rollout(tr, MODE_EPSILON, eps, tr->ep, &ms, &agree, err);
        if (rc != DP_OK) break;
        const double msp = ms / sc;
        tr->running_sum += msp;
        tr->running_count++;
        const double avg = tr->running_sum / (double)tr->running_count;
        double r = avg - msp;
        if (c->reward_relative && avg > 0) r /= avg;
        if (ms < tr->best) {
            tr->best = ms;
            memcpy(tr->best_assign, tr->env->assignment, (size_t)tr->n * sizeof(int));
        }
        episode_grad(tr, &st, r, 1.0 / st.batch);
        const double lr = st.lr + (st.lr_final - st.lr) * frac;
        tr->episode++;
        done_here++;
        if (tr->episode % st.batch == 0 || tr->episode == st.episodes) update(tr, lr);
        dp_traj_episode row = {stage, e, seed, msp, r, now_s() - te, lr, eps, 0, agree, tr->traj_steps + tr->n_rows_st, tr->n};
        if (io->trajectory && push_rows(tr, &row) != DP_OK) {
            rc = dp_error_set(err, DP_ENOMEM, "out of memory for trajectory rows");
            break;
        }
        const int last = tr->episode == st.episodes;
        const int stop = io->stop && *io->stop && tr->episode % st.batch == 0;
        if (io->progress) {
            dp_train_progress pr = {.stage = stage, .episode = tr->episode, .episodes = st.episodes,
                                    .epsilon = eps, .lr = lr, .makespan = msp, .best = tr->best / sc,
                                    .running_avg = avg, .greedy = tr->last_greedy / sc, .sel_agree = 0,
                                    .plc_agree = agree,
                                    .episodes_per_s = done_here / fmax(now_s() - t0, 1e-9),
                                    .final = last || stop};
            io->progress(&pr, io->progress_ctx);
        }
        if (last || stop || tr->episode % every == 0) {
            if ((rc = eval_greedy(tr, err)) != DP_OK) break;
            if ((rc = flush_rows(tr, io->trajectory, err)) != DP_OK) break;
            if (io->checkpoint && (rc = save_checkpoint(tr, io->checkpoint, err)) != DP_OK) break;
        }
        if (stop) break;
    }
    return rc;
}

int dp_ptrainer_place(dp_ptrainer *tr, int samples, uint64_t seed, int *assignment, double *makespan, dp_error *err)
{
    double ms;
    int rc;
    if (samples <= 0) {
        if ((rc = rollout(tr, MODE_GREEDY, 0, NULL, &ms, NULL, err)) != DP_OK) return rc;
        memcpy(assignment, tr->env->assignment, (size_t)tr->n * sizeof(int));
        *makespan = ms;
        return DP_OK;
    }
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return dp_error_set(err, DP_ENOMEM, "out of memory");
    gsl_rng_set(r, (unsigned long)seed);
    double best = INFINITY;
    rc = DP_OK;
    for (int s = 0; s < samples && rc == DP_OK; s++) {
        rc = rollout(tr, MODE_SAMPLE, 0, r, &ms, NULL, err);
        if (rc == DP_OK && ms < best) {
            best = ms;
            memcpy(assignment, tr->env->assignment, (size_t)tr->n * sizeof(int));
        }
    }
    gsl_rng_free(r);
    *makespan = best;
    return rc;
}

int dp_ptrainer_bench(dp_ptrainer *tr, int reps, double *infer_s, double *train_s, dp_error *err)
{
    if (reps < 1) reps = 1;
    double ms;
    int rc = DP_OK;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return dp_error_set(err, DP_ENOMEM, "out of memory");
    gsl_rng_set(r, 7);
    double t0 = now_s();
    for (int i = 0; i < reps && rc == DP_OK; i++) rc = rollout(tr, MODE_GREEDY, 0, NULL, &ms, NULL, err);
    *infer_s = (now_s() - t0) / reps;
    dp_train_stage st = tr->cfg.train.stage[DP_STAGE_SIM];
    st.pg_weight = 1;
    t0 = now_s();
    for (int i = 0; i < reps && rc == DP_OK; i++) {
        dp_nn_params_zero_grad(tr->params);
        if ((rc = rollout(tr, MODE_EPSILON, 0.5, r, &ms, NULL, err)) != DP_OK) break;
        episode_grad(tr, &st, 0.1, 1.0);
        update(tr, 1e-6);
    }
    *train_s = (now_s() - t0) / reps;
    gsl_rng_free(r);
    return rc;
}

/* ---- the placement methods ---- */

static int place_learned(int method, const dp_graph *g, const dp_costs *c, const dp_place_options *o, int *assignment,
                         double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    if (has_priority) *has_priority = 0;
    dp_ptrain_config cfg;
    dp_ptrain_config_default(&cfg, method);
    int rc;
    if (o->checkpoint) {
        char *json = NULL;
        if ((rc = dp_ckpt_read_config(o->checkpoint, &json, err)) != DP_OK) return rc;
        json_t *j = json_loads(json, 0, NULL);
        const char *jm = j ? json_string_value(json_object_get(j, "method")) : NULL;
        char m[32]; /* a copy: the string dies with j */
        snprintf(m, sizeof m, "%s", jm ? jm : "doppler train");
        int ok = jm && strcmp(jm, dp_ptrain_method_name(method)) == 0;
        json_decref(j);
        rc = ok ? dp_ptrain_config_from_json_text(&cfg, json, err)
                : dp_error_set(err, DP_EINVAL, "%s: not a %s checkpoint (made by %s)", o->checkpoint,
                               dp_ptrain_method_name(method), m);
        free(json);
        if (rc != DP_OK) return rc;
    } else {
        if (o->config && (rc = dp_ptrain_config_load(&cfg, o->config, err)) != DP_OK) return rc;
        cfg.method = method;
        cfg.train.seed = o->seed;
    }
    dp_ptrainer *tr = dp_ptrainer_alloc(g, c, &cfg, o->oracle, err);
    if (!tr) return err ? err->code : DP_ENOMEM;
    if (o->checkpoint) {
        rc = dp_ptrainer_init_from(tr, o->checkpoint, err);
    } else {
        rc = dp_ptrainer_run(tr, DP_STAGE_SIM, o->budget > 0 ? o->budget : 200, NULL, err);
        dp_ptrainer_use_best(tr);
    }
    double ms;
    if (rc == DP_OK) rc = dp_ptrainer_place(tr, o->samples > 1 ? o->samples : 0, o->seed, assignment, &ms, err);
    dp_ptrainer_free(tr);
    return rc;
}

int dp_place_placeto(const dp_graph *g, const dp_costs *c, const dp_place_options *o, int *assignment,
                     double *priority, int *has_priority, dp_error *err)
{
    return place_learned(DP_PTRAIN_PLACETO, g, c, o, assignment, priority, has_priority, err);
}

int dp_place_gdp(const dp_graph *g, const dp_costs *c, const dp_place_options *o, int *assignment, double *priority,
                 int *has_priority, dp_error *err)
{
    return place_learned(DP_PTRAIN_GDP, g, c, o, assignment, priority, has_priority, err);
}
