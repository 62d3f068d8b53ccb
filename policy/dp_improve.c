/* dp_improve.c: the learned improvement method (dp_improve.h, doc/improve.md). */
#include "dp_improve.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "dp_alloc.h"
#include "dp_h5io.h"
#include "dp_json.h"
#include "dp_place.h"
#include "dp_train.h"

#define FO DP_IMPROVE_OP_FEATURES
#define FM DP_IMPROVE_MOVE_FEATURES
#define FZ (FO + FM) /* the move network's input: the op's features, then the move's */

/* ---------------- config ---------------- */

void dp_improve_config_default(dp_improve_config *c)
{
    memset(c, 0, sizeof *c);
    c->arch.hidden = 32;
    c->arch.slope = 0.01f;
    c->episodes = 1000;
    c->horizon = 32;
    c->nstep = 4;
    c->gamma = 0.9;
    c->batch = 8;
    c->lr = 1e-3;
    c->lr_final = 1e-4;
    c->epsilon = 0.1;
    c->grad_clip = 1.0;
    c->elite_prob = 0.5;
    c->seed = 1;
    c->checkpoint_every = 200;
    c->eval_every = 1000;
    c->eval_budget = 200;
}

char *dp_improve_config_to_json(const dp_improve_config *c)
{
    json_t *o = json_object(), *m = json_object();
    json_object_set_new(o, "method", json_string("improve"));
    json_object_set_new(o, "features", json_string(DP_IMPROVE_FEATURES_NAME));
    json_object_set_new(o, "seed", json_integer((json_int_t)c->seed));
    json_object_set_new(m, "hidden", json_integer(c->arch.hidden));
    json_object_set_new(m, "slope", dp_json_number(c->arch.slope));
    json_object_set_new(m, "episodes", json_integer(c->episodes));
    json_object_set_new(m, "horizon", json_integer(c->horizon));
    json_object_set_new(m, "nstep", json_integer(c->nstep));
    json_object_set_new(m, "gamma", dp_json_number(c->gamma));
    json_object_set_new(m, "batch", json_integer(c->batch));
    json_object_set_new(m, "lr", dp_json_number(c->lr));
    json_object_set_new(m, "lr_final", dp_json_number(c->lr_final));
    json_object_set_new(m, "epsilon", dp_json_number(c->epsilon));
    json_object_set_new(m, "grad_clip", dp_json_number(c->grad_clip));
    json_object_set_new(m, "elite_prob", dp_json_number(c->elite_prob));
    json_object_set_new(m, "checkpoint_every", json_integer(c->checkpoint_every));
    json_object_set_new(m, "eval_every", json_integer(c->eval_every));
    json_object_set_new(m, "eval_budget", json_integer(c->eval_budget));
    json_object_set_new(o, "improve", m);
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

static int num_key(json_t *v, const char *key, double lo, double hi, double *out, dp_error *err)
{
    if (!json_is_number(v) || !(json_number_value(v) >= lo && json_number_value(v) <= hi))
        return dp_error_set(err, DP_EINVAL, "config: \"improve.%s\" must be a number in [%g, %g]", key, lo, hi);
    *out = json_number_value(v);
    return DP_OK;
}

static int int_key(json_t *v, const char *key, long lo, long hi, long *out, dp_error *err)
{
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return dp_error_set(err, DP_EINVAL, "config: \"improve.%s\" must be an integer in [%ld, %ld]", key, lo, hi);
    *out = (long)json_integer_value(v);
    return DP_OK;
}

static int config_from_json(dp_improve_config *c, json_t *o, dp_error *err)
{
    if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "config: the top level must be an object");
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (strcmp(key, "method") == 0) {
            const char *s = json_is_string(v) ? json_string_value(v) : "";
            if (strcmp(s, "improve") != 0)
                return dp_error_set(err, DP_EINVAL, "config: \"method\" \"%s\", not \"improve\"", s);
        } else if (strcmp(key, "features") == 0) {
            const char *s = json_is_string(v) ? json_string_value(v) : "";
            if (strcmp(s, DP_IMPROVE_FEATURES_NAME) != 0)
                return dp_error_set(err, DP_EINVAL, "incompatible checkpoint: feature set %s in the checkpoint, %s here", s,
                                    DP_IMPROVE_FEATURES_NAME);
        } else if (strcmp(key, "seed") == 0) {
            if (!json_is_integer(v) || json_integer_value(v) < 0)
                return dp_error_set(err, DP_EINVAL, "config: \"seed\" must be a non-negative integer");
            c->seed = (uint64_t)json_integer_value(v);
        } else if (strcmp(key, "improve") == 0) {
            if (!json_is_object(v)) return dp_error_set(err, DP_EINVAL, "config: \"improve\" must be an object");
            const char *k;
            json_t *x;
            json_object_foreach(v, k, x) {
                long L = 0;
                double d = 0;
                int rc;
                if (strcmp(k, "hidden") == 0) { if ((rc = int_key(x, k, 1, 4096, &L, err))) return rc; c->arch.hidden = (int)L; }
                else if (strcmp(k, "slope") == 0) { if ((rc = num_key(x, k, 0, 1, &d, err))) return rc; c->arch.slope = (float)d; }
                else if (strcmp(k, "episodes") == 0) { if ((rc = int_key(x, k, 1, 1000000000L, &L, err))) return rc; c->episodes = L; }
                else if (strcmp(k, "horizon") == 0) { if ((rc = int_key(x, k, 1, 100000, &L, err))) return rc; c->horizon = (int)L; }
                else if (strcmp(k, "nstep") == 0) { if ((rc = int_key(x, k, 1, 100000, &L, err))) return rc; c->nstep = (int)L; }
                else if (strcmp(k, "gamma") == 0) { if ((rc = num_key(x, k, 0, 1, &d, err))) return rc; c->gamma = d; }
                else if (strcmp(k, "batch") == 0) { if ((rc = int_key(x, k, 1, 100000, &L, err))) return rc; c->batch = (int)L; }
                else if (strcmp(k, "lr") == 0) { if ((rc = num_key(x, k, 0, 1, &d, err))) return rc; c->lr = d; }
                else if (strcmp(k, "lr_final") == 0) { if ((rc = num_key(x, k, 0, 1, &d, err))) return rc; c->lr_final = d; }
                else if (strcmp(k, "epsilon") == 0) { if ((rc = num_key(x, k, 0, 1, &d, err))) return rc; c->epsilon = d; }
                else if (strcmp(k, "grad_clip") == 0) { if ((rc = num_key(x, k, 0, 1e30, &d, err))) return rc; c->grad_clip = d; }
                else if (strcmp(k, "elite_prob") == 0) { if ((rc = num_key(x, k, 0, 1, &d, err))) return rc; c->elite_prob = d; }
                else if (strcmp(k, "checkpoint_every") == 0) { if ((rc = int_key(x, k, 1, 1000000000L, &L, err))) return rc; c->checkpoint_every = L; }
                else if (strcmp(k, "eval_every") == 0) { if ((rc = int_key(x, k, 1, 1000000000L, &L, err))) return rc; c->eval_every = L; }
                else if (strcmp(k, "eval_budget") == 0) { if ((rc = int_key(x, k, 1, 1000000000L, &L, err))) return rc; c->eval_budget = L; }
                else
                    return dp_error_set(err, DP_EINVAL, "config: unknown key \"improve.%s\" (hidden, slope, episodes, horizon, nstep, "
                                        "gamma, batch, lr, lr_final, epsilon, grad_clip, elite_prob, checkpoint_every, eval_every, "
                                        "eval_budget)", k);
            }
        } else {
            return dp_error_set(err, DP_EINVAL, "config: unknown key \"%s\" for method improve (method, features, seed, improve)",
                                key);
        }
    }
    return DP_OK;
}

int dp_improve_config_from_json_text(dp_improve_config *c, const char *text, dp_error *err)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!o) return dp_error_set(err, DP_EINVAL, "config: line %d: %s", je.line, je.text);
    int rc = config_from_json(c, o, err);
    json_decref(o);
    return rc;
}

int dp_improve_config_load(dp_improve_config *c, const char *path, dp_error *err)
{
    json_t *o = dp_json_load(path, err);
    if (!o) return err ? err->code : DP_EIO;
    int rc = config_from_json(c, o, err);
    json_decref(o);
    if (rc != DP_OK) dp_error_prefix(err, "%s", path);
    return rc;
}

/* ---------------- the model: two MLPs ---------------- */

/* An MLP of three linear layers in block p, tensors W1 b1 W2 b2 W3 b3: in (N, F) -> (N, 1). */
typedef struct mlp {
    dp_nn_params p;
    int F, H;
    float slope;
} mlp;

typedef struct mlp_cache { /* activations of N rows, kept for the backward */
    float *in, *h1p, *h1, *h2p, *h2, *out;
    float *d1, *d2; /* backward scratch (N, H) each */
} mlp_cache;

static int mlp_build(mlp *m, int F, int H, float slope)
{
    dp_nn_params_init(&m->p);
    m->F = F;
    m->H = H;
    m->slope = slope;
    if (dp_nn_params_add(&m->p, "W1", H, F) < 0 || dp_nn_params_add(&m->p, "b1", 1, H) < 0 ||
        dp_nn_params_add(&m->p, "W2", H, H) < 0 || dp_nn_params_add(&m->p, "b2", 1, H) < 0 ||
        dp_nn_params_add(&m->p, "W3", 1, H) < 0 || dp_nn_params_add(&m->p, "b3", 1, 1) < 0)
        return DP_ENOMEM;
    return dp_nn_params_alloc(&m->p);
}

static int mlp_init(mlp *m, gsl_rng *r)
{
    int rc = dp_nn_init_orthogonal(dp_nn_param(&m->p, 0), m->H, m->F, sqrt(2.0), r);
    if (rc == DP_OK) rc = dp_nn_init_orthogonal(dp_nn_param(&m->p, 2), m->H, m->H, sqrt(2.0), r);
    if (rc == DP_OK) rc = dp_nn_init_orthogonal(dp_nn_param(&m->p, 4), 1, m->H, 0.01, r);
    for (int i = 1; i < 6; i += 2) memset(dp_nn_param(&m->p, i), 0, (size_t)m->p.t[i].cols * sizeof(float));
    return rc;
}

static int cache_alloc(mlp_cache *k, int N, int F, int H)
{
    const size_t nh = (size_t)N * H;
    k->in = dp_alloc_malloc_n((size_t)N * F, sizeof(float));
    k->h1p = dp_alloc_malloc_n(nh, sizeof(float));
    k->h1 = dp_alloc_malloc_n(nh, sizeof(float));
    k->h2p = dp_alloc_malloc_n(nh, sizeof(float));
    k->h2 = dp_alloc_malloc_n(nh, sizeof(float));
    k->out = dp_alloc_malloc_n((size_t)N, sizeof(float));
    k->d1 = dp_alloc_malloc_n(nh, sizeof(float));
    k->d2 = dp_alloc_malloc_n(nh, sizeof(float));
    return k->in && k->h1p && k->h1 && k->h2p && k->h2 && k->out && k->d1 && k->d2 ? DP_OK : DP_ENOMEM;
}

static void cache_free(mlp_cache *k)
{
    free(k->in); free(k->h1p); free(k->h1); free(k->h2p); free(k->h2); free(k->out); free(k->d1); free(k->d2);
}

/* out (N) from k->in (N, F) */
static void mlp_forward(const mlp *m, mlp_cache *k, int N)
{
    const dp_nn_params *p = &m->p;
    const int F = m->F, H = m->H;
    dp_nn_linear_forward(k->h1p, k->in, dp_nn_param(p, 0), dp_nn_param(p, 1), N, F, H);
    dp_nn_leaky_relu_forward(k->h1, k->h1p, (size_t)N * H, m->slope);
    dp_nn_linear_forward(k->h2p, k->h1, dp_nn_param(p, 2), dp_nn_param(p, 3), N, H, H);
    dp_nn_leaky_relu_forward(k->h2, k->h2p, (size_t)N * H, m->slope);
    dp_nn_linear_forward(k->out, k->h2, dp_nn_param(p, 4), dp_nn_param(p, 5), N, H, 1);
}

/* parameter gradients += from dout (N), the inputs being constants */
static void mlp_backward(mlp *m, mlp_cache *k, const float *dout, int N)
{
    dp_nn_params *p = &m->p;
    const int F = m->F, H = m->H;
    const size_t nh = (size_t)N * H;
    memset(k->d2, 0, nh * sizeof(float));
    dp_nn_linear_backward(k->d2, dp_nn_grad(p, 4), dp_nn_grad(p, 5), dout, k->h2, dp_nn_param(p, 4), N, H, 1);
    memset(k->d1, 0, nh * sizeof(float));
    dp_nn_leaky_relu_backward(k->d1, k->d2, k->h2p, nh, m->slope);
    memset(k->d2, 0, nh * sizeof(float));
    dp_nn_linear_backward(k->d2, dp_nn_grad(p, 2), dp_nn_grad(p, 3), k->d1, k->h1, dp_nn_param(p, 2), N, H, H);
    memset(k->d1, 0, nh * sizeof(float));
    dp_nn_leaky_relu_backward(k->d1, k->d2, k->h1p, nh, m->slope);
    dp_nn_linear_backward(NULL, dp_nn_grad(p, 0), dp_nn_grad(p, 1), k->d1, k->in, dp_nn_param(p, 0), N, F, H);
}

struct dp_improve_model {
    dp_improve_arch arch;
    mlp op, move;
};

dp_improve_model *dp_improve_model_alloc(const dp_improve_arch *a, dp_error *err)
{
    dp_improve_config d;
    dp_improve_config_default(&d);
    if (!a) a = &d.arch;
    if (a->hidden < 1) {
        dp_error_set(err, DP_EINVAL, "improve: hidden width %d, must be positive", a->hidden);
        return NULL;
    }
    dp_improve_model *m = dp_alloc_calloc(1, sizeof *m);
    if (!m) {
        dp_error_set(err, DP_ENOMEM, "out of memory");
        return NULL;
    }
    m->arch = *a;
    if (mlp_build(&m->op, FO, a->hidden, a->slope) != DP_OK || mlp_build(&m->move, FZ, a->hidden, a->slope) != DP_OK) {
        dp_improve_model_free(m);
        dp_error_set(err, DP_ENOMEM, "out of memory");
        return NULL;
    }
    return m;
}

void dp_improve_model_free(dp_improve_model *m)
{
    if (!m) return;
    dp_nn_params_free(&m->op.p);
    dp_nn_params_free(&m->move.p);
    free(m);
}

int dp_improve_model_init(dp_improve_model *m, gsl_rng *r)
{
    int rc = mlp_init(&m->op, r);
    return rc == DP_OK ? mlp_init(&m->move, r) : rc;
}

dp_nn_params *dp_improve_op_params(dp_improve_model *m) { return &m->op.p; }
dp_nn_params *dp_improve_move_params(dp_improve_model *m) { return &m->move.p; }
const dp_improve_arch *dp_improve_model_arch(const dp_improve_model *m) { return &m->arch; }

/* The config of an improvement checkpoint into cfg (DP_EINVAL when another method made it). */
static int checkpoint_config(const char *path, dp_improve_config *cfg, dp_error *err)
{
    dp_h5io_ckpt_info info;
    int rc = dp_h5io_ckpt_read_info(path, &info, err);
    if (rc != DP_OK) return rc;
    json_t *o = info.config_json ? json_loads(info.config_json, 0, NULL) : NULL;
    json_t *jm = o ? json_object_get(o, "method") : NULL;
    const char *made_by = jm && json_is_string(jm) ? json_string_value(jm) : "doppler";
    if (strcmp(made_by, "improve") != 0)
        rc = dp_error_set(err, DP_EINVAL, "%s: not an improve checkpoint (made by %s)", path, made_by);
    else if ((rc = config_from_json(cfg, o, err)) != DP_OK)
        dp_error_prefix(err, "%s", path);
    json_decref(o);
    dp_h5io_ckpt_info_free(&info);
    return rc;
}

int dp_improve_config_from_checkpoint(dp_improve_config *c, const char *path, dp_error *err)
{
    dp_improve_config k;
    dp_improve_config_default(&k);
    int rc = checkpoint_config(path, &k, err);
    if (rc == DP_OK) *c = k;
    return rc;
}

static int model_load(const char *path, int final, dp_improve_model **out, dp_error *err)
{
    *out = NULL;
    dp_improve_config cfg;
    dp_improve_config_default(&cfg);
    int rc = checkpoint_config(path, &cfg, err);
    if (rc != DP_OK) return rc;
    dp_improve_model *m = dp_improve_model_alloc(&cfg.arch, err);
    if (!m) return err ? err->code : DP_ENOMEM;
    dp_h5io_ckpt ck;
    memset(&ck, 0, sizeof ck);
    ck.same_graph = 0;
    float *bs = final ? NULL : dp_alloc_calloc_n(m->op.p.n, sizeof(float)); /* zero: the padding between tensors */
    float *bp = final ? NULL : dp_alloc_calloc_n(m->move.p.n, sizeof(float));
    if (!final && (!bs || !bp)) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
    ck.sel_best = bs;
    ck.plc_best = bp;
    if (rc == DP_OK) rc = dp_h5io_ckpt_read(path, &ck, &m->op.p, &m->move.p, 0, err);
    if (rc == DP_OK && !final && ck.has_best) { /* the model-selected parameters */
        memcpy(m->op.p.param, bs, m->op.p.n * sizeof(float));
        memcpy(m->move.p.param, bp, m->move.p.n * sizeof(float));
    }
    free(bs);
    free(bp);
    free((char *)ck.graph);
    free(ck.config_json);
    if (rc != DP_OK) {
        dp_improve_model_free(m);
        return rc;
    }
    *out = m;
    return DP_OK;
}

int dp_improve_model_load(const char *path, dp_improve_model **out, dp_error *err)
{
    return model_load(path, 0, out, err);
}

int dp_improve_model_load_final(const char *path, dp_improve_model **out, dp_error *err)
{
    return model_load(path, 1, out, err);
}

/* ---------------- the state: features of a placement's schedule ---------------- */

typedef struct op_key {
    double s;
    int pos, v;
} op_key;

static int op_key_cmp(const void *a, const void *b)
{
    const op_key *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

struct dp_improve_state {
    const dp_improve_model *m;
    const dp_graph *g;
    const dp_cost *c;
    int n, D;
    int *pos;            /* (n) topological position */
    double maxdeg;
    /* the current placement and its schedule */
    int *a;              /* (n) */
    double *S, *E, *R;   /* (n) start, end, ready */
    double *xend;        /* (n_edges) transfer arrival, -1: none or unknown; NULL on the fast path */
    double *busy;        /* (D) */
    double M, sumbusy;
    int least;           /* least loaded device */
    double *LS;          /* (n) latest start */
    int *crit;           /* (n) */
    op_key *keys;        /* (n) */
    int *dev_ptr;        /* (D + 1) ops of each device in start order: dev_ops[dev_ptr[d] ..] */
    int *dev_ops, *dev_fill;
    mlp_cache opc;       /* op network over n rows; opc.in holds the op features */
    float *oprob, *ologp, *odz;
    mlp_cache mvc;       /* move network over D - 1 rows */
    int *cand;           /* (D) the candidate devices */
    float *mprob, *mlogp, *mdz, *y, *nb;
};

void dp_improve_state_free(dp_improve_state *s)
{
    if (!s) return;
    free(s->pos); free(s->a); free(s->S); free(s->E); free(s->R); free(s->xend); free(s->busy); free(s->LS);
    free(s->crit); free(s->keys); free(s->dev_ptr); free(s->dev_ops); free(s->dev_fill);
    cache_free(&s->opc);
    cache_free(&s->mvc);
    free(s->oprob); free(s->ologp); free(s->odz); free(s->cand); free(s->mprob); free(s->mlogp); free(s->mdz);
    free(s->y); free(s->nb);
    free(s);
}

dp_improve_state *dp_improve_state_alloc(const dp_improve_model *m, const dp_graph *g, const dp_cost *c, dp_error *err)
{
    dp_improve_state *s = dp_alloc_calloc(1, sizeof *s);
    if (!s) {
        dp_error_set(err, DP_ENOMEM, "out of memory");
        return NULL;
    }
    const int n = g->n_ops, D = c->n_devices, H = m->arch.hidden;
    s->m = m;
    s->g = g;
    s->c = c;
    s->n = n;
    s->D = D;
    s->pos = dp_alloc_malloc_n(n, sizeof(int));
    s->a = dp_alloc_malloc_n(n, sizeof(int));
    s->S = dp_alloc_malloc_n(n, sizeof(double));
    s->E = dp_alloc_malloc_n(n, sizeof(double));
    s->R = dp_alloc_malloc_n(n, sizeof(double));
    s->xend = dp_alloc_malloc_n((size_t)g->n_edges + 1, sizeof(double));
    s->busy = dp_alloc_malloc_n(D, sizeof(double));
    s->LS = dp_alloc_malloc_n(n, sizeof(double));
    s->crit = dp_alloc_malloc_n(n, sizeof(int));
    s->keys = dp_alloc_malloc_n(n, sizeof(op_key));
    s->dev_ptr = dp_alloc_malloc_n((size_t)D + 1, sizeof(int));
    s->dev_ops = dp_alloc_malloc_n(n, sizeof(int));
    s->dev_fill = dp_alloc_malloc_n(D, sizeof(int));
    s->oprob = dp_alloc_malloc_n(n, sizeof(float));
    s->ologp = dp_alloc_malloc_n(n, sizeof(float));
    s->odz = dp_alloc_malloc_n(n, sizeof(float));
    s->cand = dp_alloc_malloc_n(D, sizeof(int));
    s->mprob = dp_alloc_malloc_n(D, sizeof(float));
    s->mlogp = dp_alloc_malloc_n(D, sizeof(float));
    s->mdz = dp_alloc_malloc_n(D, sizeof(float));
    s->y = dp_alloc_malloc_n((size_t)D * FM, sizeof(float));
    s->nb = dp_alloc_malloc_n(D, sizeof(float));
    int ok = s->pos && s->a && s->S && s->E && s->R && s->xend && s->busy && s->LS && s->crit && s->keys && s->dev_ptr &&
             s->dev_ops && s->dev_fill && s->oprob && s->ologp && s->odz && s->cand && s->mprob && s->mlogp && s->mdz &&
             s->y && s->nb;
    if (!ok || cache_alloc(&s->opc, n, FO, H) != DP_OK || cache_alloc(&s->mvc, D, FZ, H) != DP_OK) {
        dp_improve_state_free(s);
        dp_error_set(err, DP_ENOMEM, "%s: out of memory for the improvement policy", g->source);
        return NULL;
    }
    s->maxdeg = 1;
    for (int k = 0; k < n; k++) {
        const int v = g->topo[k];
        s->pos[v] = k;
        const double deg = (g->pred_ptr[v + 1] - g->pred_ptr[v]) + (g->succ_ptr[v + 1] - g->succ_ptr[v]);
        if (deg > s->maxdeg) s->maxdeg = deg;
    }
    return s;
}

/* arrival of edge e's data at its consumer placed on device d (the producer u on its device) */
static inline double arrival(const dp_improve_state *s, int e, int u, int d)
{
    return s->E[u] + dp_cost_comm(s->c, e, s->a[u], d);
}

/* the transfer time of edge e = (u -> w) in the schedule */
static inline double comm_now(const dp_improve_state *s, int e, int u, int w)
{
    if (s->a[u] == s->a[w]) return 0;
    if (s->xend && s->xend[e] >= 0) return fmax(0.0, s->xend[e] - s->E[u]);
    return dp_cost_comm(s->c, e, s->a[u], s->a[w]);
}

/* compute time of device d inside [t1, t2] */
static double busy_in(const dp_improve_state *s, int d, double t1, double t2)
{
    int lo = s->dev_ptr[d], hi = s->dev_ptr[d + 1];
    /* the first op ending after t1 (ends are in start order on a one-stream device) */
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (s->E[s->dev_ops[mid]] <= t1) lo = mid + 1;
        else hi = mid;
    }
    double b = 0;
    for (int k = lo; k < s->dev_ptr[d + 1]; k++) {
        const int v = s->dev_ops[k];
        if (s->S[v] >= t2) break;
        const double x = fmin(t2, s->E[v]) - fmax(t1, s->S[v]);
        if (x > 0) b += x;
    }
    return b;
}

void dp_improve_state_set(dp_improve_state *s, const int *assignment, const dp_engine_schedule *sch)
{
    const dp_graph *g = s->g;
    const int n = s->n, D = s->D;
    memcpy(s->a, assignment, (size_t)n * sizeof(int));
    memcpy(s->S, sch->op_start, (size_t)n * sizeof(double));
    memcpy(s->E, sch->op_end, (size_t)n * sizeof(double));
    memcpy(s->R, sch->op_ready, (size_t)n * sizeof(double));
    if (sch->xfer_end) memcpy(s->xend, sch->xfer_end, (size_t)g->n_edges * sizeof(double));
    else for (int e = 0; e < g->n_edges; e++) s->xend[e] = -1;
    memcpy(s->busy, sch->busy, (size_t)D * sizeof(double));
    const double M = sch->makespan > 0 ? sch->makespan : 1;
    s->M = M;
    s->sumbusy = 0;
    s->least = 0;
    for (int d = 0; d < D; d++) {
        s->sumbusy += s->busy[d];
        if (s->busy[d] < s->busy[s->least]) s->least = d;
    }
    const double meanbusy = s->sumbusy > 0 ? s->sumbusy / D : 1;
    /* ops in start order (ties: topological), and per device */
    for (int v = 0; v < n; v++) s->keys[v] = (op_key){s->S[v], s->pos[v], v};
    qsort(s->keys, (size_t)n, sizeof *s->keys, op_key_cmp);
    memset(s->dev_ptr, 0, (size_t)(D + 1) * sizeof(int));
    for (int v = 0; v < n; v++) s->dev_ptr[s->a[v] + 1]++;
    for (int d = 0; d < D; d++) s->dev_ptr[d + 1] += s->dev_ptr[d];
    memcpy(s->dev_fill, s->dev_ptr, (size_t)D * sizeof(int));
    for (int k = 0; k < n; k++) {
        const int v = s->keys[k].v;
        s->dev_ops[s->dev_fill[s->a[v]]++] = v;
    }
    /* latest starts in the schedule's DAG: data edges with their transfers, and each device's
     * order; processed in reverse start order, so successors come first */
    for (int d = 0; d < D; d++) s->dev_fill[d] = -1; /* the next op on d seen so far */
    double maxdur = 0;
    for (int k = n - 1; k >= 0; k--) {
        const int v = s->keys[k].v;
        double lf = M;
        for (int q = g->succ_ptr[v]; q < g->succ_ptr[v + 1]; q++) {
            const int w = g->edge_dst[q];
            const double x = s->LS[w] - comm_now(s, q, v, w);
            if (x < lf) lf = x;
        }
        const int nx = s->dev_fill[s->a[v]];
        if (nx >= 0 && s->LS[nx] < lf) lf = s->LS[nx];
        s->dev_fill[s->a[v]] = v;
        const double dur = s->E[v] - s->S[v];
        if (dur > maxdur) maxdur = dur;
        s->LS[v] = lf - dur;
    }
    if (!(maxdur > 0)) maxdur = 1;
    const double tol = 1e-9 * M;
    for (int v = 0; v < n; v++) s->crit[v] = s->LS[v] - s->S[v] <= tol;
    for (int v = 0; v < n; v++) {
        float *x = s->opc.in + (size_t)v * FO;
        const int av = s->a[v];
        const int np = g->pred_ptr[v + 1] - g->pred_ptr[v], ns = g->succ_ptr[v + 1] - g->succ_ptr[v];
        int pc = 0, sc = 0, pcrit = 0, scrit = 0;
        double pend = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            const int u = g->edge_src[g->pred_edge[q]];
            pc += s->a[u] != av;
            pcrit += s->crit[u];
            if (s->E[u] > pend) pend = s->E[u];
        }
        for (int q = g->succ_ptr[v]; q < g->succ_ptr[v + 1]; q++) {
            const int w = g->edge_dst[q];
            sc += s->a[w] != av;
            scrit += s->crit[w];
        }
        const double slack = fmax(0.0, s->LS[v] - s->S[v]);
        x[0] = (float)(slack / M);
        x[1] = (float)s->crit[v];
        x[2] = (float)(s->S[v] / M);
        x[3] = (float)(s->E[v] / M);
        x[4] = (float)((s->E[v] - s->S[v]) / maxdur);
        x[5] = (float)(fmax(0.0, s->S[v] - s->R[v]) / M);
        x[6] = (float)(fmax(0.0, s->R[v] - pend) / M);
        x[7] = np ? (float)pc / np : 0.0f;
        x[8] = ns ? (float)sc / ns : 0.0f;
        x[9] = (float)(s->busy[av] / meanbusy);
        x[10] = (float)(1.0 - s->busy[av] / M);
        x[11] = (float)((M - s->LS[v]) / M);
        x[12] = (float)((np + ns) / s->maxdeg);
        x[13] = np ? (float)pcrit / np : 0.0f;
        x[14] = ns ? (float)scrit / ns : 0.0f;
    }
    mlp_forward(&s->m->op, &s->opc, n);
    dp_nn_softmax_forward(s->oprob, s->ologp, s->opc.out, n);
}

const float *dp_improve_state_op_features(const dp_improve_state *s)
{
    return s->opc.in;
}

void dp_improve_state_move_features(const dp_improve_state *s, int v, float *y)
{
    const dp_graph *g = s->g;
    const dp_cost *c = s->c;
    const int D = s->D, av = s->a[v];
    const double M = s->M, meanbusy = s->sumbusy > 0 ? s->sumbusy / D : 1;
    memset(y, 0, (size_t)D * FM * sizeof(float));
    double acur = 0;
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        const int e = g->pred_edge[q];
        const double t = arrival(s, e, g->edge_src[e], av);
        if (t > acur) acur = t;
    }
    float *nb = s->nb;
    for (int d = 0; d < D; d++) nb[d] = 0;
    int deg = 0;
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++, deg++) nb[s->a[g->edge_src[g->pred_edge[q]]]] += 1;
    for (int q = g->succ_ptr[v]; q < g->succ_ptr[v + 1]; q++, deg++) nb[s->a[g->edge_dst[q]]] += 1;
    const double opv = dp_cost_op(c, v, av);
    for (int d = 0; d < D; d++) {
        if (d == av) continue;
        float *r = y + (size_t)d * FM;
        double ad = 0, din = 0, dout = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            const int e = g->pred_edge[q], u = g->edge_src[e];
            const double t = arrival(s, e, u, d);
            if (t > ad) ad = t;
            din += dp_cost_comm(c, e, s->a[u], d) - dp_cost_comm(c, e, s->a[u], av);
        }
        for (int q = g->succ_ptr[v]; q < g->succ_ptr[v + 1]; q++) {
            const int w = g->edge_dst[q];
            dout += dp_cost_comm(c, q, d, s->a[w]) - dp_cost_comm(c, q, av, s->a[w]);
        }
        const double opd = dp_cost_op(c, v, d);
        r[0] = (float)((ad - acur) / M);
        r[1] = (float)(din / M);
        r[2] = (float)(dout / M);
        r[3] = (float)(s->busy[d] / meanbusy);
        r[4] = (float)(1.0 - s->busy[d] / M);
        r[5] = opd > 0 ? (float)fmax(0.0, 1.0 - busy_in(s, d, ad, ad + opd) / opd) : 1.0f;
        r[6] = opv > 0 ? (float)(opd / opv) : 1.0f;
        r[7] = deg ? nb[d] / deg : 0.0f;
        r[8] = deg ? nb[av] / deg : 0.0f;
        r[9] = d == s->least;
    }
}

/* the move network's scores of op v over the other devices: s->cand, probabilities in s->mprob */
static int move_forward(dp_improve_state *s, int v)
{
    const int D = s->D, av = s->a[v];
    dp_improve_state_move_features(s, v, s->y);
    int k = 0;
    for (int d = 0; d < D; d++) {
        if (d == av) continue;
        s->cand[k] = d;
        float *z = s->mvc.in + (size_t)k * FZ;
        memcpy(z, s->opc.in + (size_t)v * FO, FO * sizeof(float));
        memcpy(z + FO, s->y + (size_t)d * FM, FM * sizeof(float));
        k++;
    }
    mlp_forward(&s->m->move, &s->mvc, k);
    dp_nn_softmax_forward(s->mprob, s->mlogp, s->mvc.out, k);
    return k;
}

double dp_improve_state_logp(dp_improve_state *s, int v, int d)
{
    const int k = move_forward(s, v);
    for (int j = 0; j < k; j++)
        if (s->cand[j] == d) return (double)s->ologp[v] + s->mlogp[j];
    return -INFINITY;
}

void dp_improve_state_sample(dp_improve_state *s, double eps, gsl_rng *r, int *v_out, int *d_out, double *logmu,
                             int grad)
{
    const int n = s->n;
    const int v = dp_train_explore(s->oprob, s->opc.out, n, DP_TRAIN_EXPLORE_MIXTURE, eps, r);
    const int k = move_forward(s, v);
    const int j = dp_train_explore(s->mprob, s->mvc.out, k, DP_TRAIN_EXPLORE_MIXTURE, eps, r);
    *v_out = v;
    *d_out = s->cand[j];
    if (logmu)
        *logmu = log(dp_train_behaviour_prob(s->oprob, s->opc.out, n, v, DP_TRAIN_EXPLORE_MIXTURE, eps)) +
                 log(dp_train_behaviour_prob(s->mprob, s->mvc.out, k, j, DP_TRAIN_EXPLORE_MIXTURE, eps));
    if (grad) {
        /* the gradient of -log mu: through the op network (every op's score) and the move
         * network (the candidate devices' scores); casting away const: the model's gradient
         * buffers are the trainer's accumulators */
        dp_improve_model *m = (dp_improve_model *)s->m;
        memset(s->odz, 0, (size_t)n * sizeof(float));
        dp_train_pg_dlogits(s->odz, s->oprob, n, v, 1.0, DP_TRAIN_EXPLORE_MIXTURE, eps);
        mlp_backward(&m->op, &s->opc, s->odz, n);
        memset(s->mdz, 0, (size_t)k * sizeof(float));
        dp_train_pg_dlogits(s->mdz, s->mprob, k, j, 1.0, DP_TRAIN_EXPLORE_MIXTURE, eps);
        mlp_backward(&m->move, &s->mvc, s->mdz, k);
    }
}

/* ---------------- search ---------------- */

/* the op network's scores of the current state again, after its parameters changed */
static void dp_improve_state_rescore(dp_improve_state *s)
{
    mlp_forward(&s->m->op, &s->opc, s->n);
    dp_nn_softmax_forward(s->oprob, s->ologp, s->opc.out, s->n);
}

/* Active search: one REINFORCE sample. The model's grad arrays hold the gradient of -log pi of
 * the move just drawn; reward is its makespan change over the lower bound. The baseline is an
 * exponential average (0.9) of the earlier rewards and the advantage is divided by the running
 * standard deviation of the advantages (the first sample has no baseline yet and is skipped);
 * acc (P1 + the move block's floats) += advantage * gradient. */
static void active_sample(dp_improve_model *m, float *acc, size_t P1, double reward, double *base, double *var, long *count)
{
    if (*count > 0) {
        const double a = reward - *base;
        *var = *count == 1 ? a * a : 0.9 * *var + 0.1 * a * a;
        const double sd = sqrt(*var);
        if (sd > 1e-12) {
            const float w = (float)(a / sd);
            for (size_t j = 0; j < P1; j++) acc[j] += w * m->op.p.grad[j];
            for (size_t j = 0; j < m->move.p.n; j++) acc[P1 + j] += w * m->move.p.grad[j];
        }
        *base = 0.9 * *base + 0.1 * reward;
    } else {
        *base = reward;
    }
    (*count)++;
}

/* Active search: one Adam step (learning rate lr, gradient norm clipped at 1 per block) on the
 * mean of the batch's samples; acc is zeroed */
static void active_step(dp_improve_model *m, float *acc, size_t P1, size_t P, int batch, double lr)
{
    for (size_t j = 0; j < P1; j++) m->op.p.grad[j] = acc[j] / (float)batch;
    for (size_t j = P1; j < P; j++) m->move.p.grad[j - P1] = acc[j] / (float)batch;
    memset(acc, 0, P * sizeof(float));
    dp_nn_params *blk[2] = {&m->op.p, &m->move.p};
    for (int q = 0; q < 2; q++) {
        dp_nn_clip_grad_norm(blk[q], 1.0);
        dp_nn_adam_step(blk[q], (float)lr, 0.9f, 0.999f, 1e-8f, 0.0f);
    }
}

void dp_improve_search_config_init(dp_improve_search_config *cfg)
{
    dp_search_anneal_config_init(&cfg->anneal);
    /* the start: the best of the six instant methods (6 simulations of the budget), not cp:
     * chosen on generated validation graphs (EXPERIMENTS.md), mean makespan over the best of
     * the settings tried 1.0063 against 1.0177 from cp at 20,000 simulations, 1.0048 against
     * 1.0708 at 500 */
    snprintf(cfg->anneal.init, sizeof cfg->anneal.init, "best-instant");
    cfg->greedy = 0;
    cfg->mix = 0.2;
    /* chosen on generated validation graphs (EXPERIMENTS.md): 10 runs, each later one from the
     * best seen after 10 uniform moves, beat one run by about 1% of the makespan on average */
    cfg->restarts = 10;
    cfg->perturb = 10;
    cfg->restart_from_start = 0;
    cfg->first_share = 0;
    cfg->min_run = 400; /* validation: runs of 100 moves lose to one run, of 250 to 2000 win */
    cfg->active_lr = 0;
    cfg->active_batch = 16;
}

int dp_improve_search_check_config(const dp_improve_search_config *cfg, dp_error *err)
{
    if (!(cfg->mix >= 0 && cfg->mix <= 1)) return dp_error_set(err, DP_EINVAL, "improve: \"mix\" must be in [0, 1], got %g", cfg->mix);
    if (cfg->restarts < 1 || cfg->restarts > DP_IMPROVE_MAX_RESTARTS)
        return dp_error_set(err, DP_EINVAL, "improve: \"restarts\" must be an integer in 1..%d, got %d", DP_IMPROVE_MAX_RESTARTS,
                            cfg->restarts);
    if (cfg->perturb < 0 || cfg->perturb > DP_IMPROVE_MAX_PERTURB)
        return dp_error_set(err, DP_EINVAL, "improve: \"perturb\" must be an integer in 0..%d, got %d", DP_IMPROVE_MAX_PERTURB,
                            cfg->perturb);
    if (cfg->min_run < 0)
        return dp_error_set(err, DP_EINVAL, "improve: \"min_run\" must be a non-negative integer, got %ld", cfg->min_run);
    if (!(cfg->first_share >= 0 && cfg->first_share <= 1))
        return dp_error_set(err, DP_EINVAL, "improve: \"first_share\" must be in [0, 1], got %g", cfg->first_share);
    if (!(cfg->active_lr >= 0 && cfg->active_lr <= 1))
        return dp_error_set(err, DP_EINVAL, "improve: \"active_lr\" must be in [0, 1], got %g", cfg->active_lr);
    if (cfg->active_batch < 1 || cfg->active_batch > DP_IMPROVE_MAX_ACTIVE_BATCH)
        return dp_error_set(err, DP_EINVAL, "improve: \"active_batch\" must be an integer in 1..%d, got %d", DP_IMPROVE_MAX_ACTIVE_BATCH,
                            cfg->active_batch);
    return dp_search_check_config(&cfg->anneal, !cfg->greedy, err);
}

/* The improvement search's own keys (dp_search_config_load_keys's extra): accept, mix, restarts, min_run, perturb, restart_from,
 * first_share, active_lr, active_batch. */
static int improve_search_key(void *ctx, const char *key, const json_t *v, const char *path, dp_error *err)
{
    dp_improve_search_config *cfg = ctx;
    if (strcmp(key, "accept") == 0) {
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        if (strcmp(s, "greedy") == 0) cfg->greedy = 1;
        else if (strcmp(s, "anneal") == 0) cfg->greedy = 0;
        else return dp_error_set(err, DP_EINVAL, "%s: \"accept\" must be \"greedy\" or \"anneal\"", path);
        return DP_OK;
    }
    /* the keys whose value is a number in [0, 1] */
    double *unit = strcmp(key, "mix") == 0 ? &cfg->mix : strcmp(key, "first_share") == 0 ? &cfg->first_share
                   : strcmp(key, "active_lr") == 0 ? &cfg->active_lr : NULL;
    if (unit) {
        if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= 1))
            return dp_error_set(err, DP_EINVAL, "%s: \"%s\" must be a number in [0, 1]%s", path, key,
                                unit == &cfg->active_lr ? " (0: no active search)" : "");
        *unit = json_number_value(v);
        return DP_OK;
    }
    if (strcmp(key, "restarts") == 0 || strcmp(key, "perturb") == 0) {
        const int is_r = key[0] == 'r';
        const long lo = is_r ? 1 : 0, hi = is_r ? DP_IMPROVE_MAX_RESTARTS : DP_IMPROVE_MAX_PERTURB;
        if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
            return dp_error_set(err, DP_EINVAL, "%s: \"%s\" must be an integer in %ld..%ld", path, key, lo, hi);
        *(is_r ? &cfg->restarts : &cfg->perturb) = (int)json_integer_value(v);
        return DP_OK;
    }
    if (strcmp(key, "min_run") == 0) {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return dp_error_set(err, DP_EINVAL, "%s: \"min_run\" must be a non-negative integer (moves)", path);
        cfg->min_run = (long)json_integer_value(v);
        return DP_OK;
    }
    if (strcmp(key, "active_batch") == 0) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > DP_IMPROVE_MAX_ACTIVE_BATCH)
            return dp_error_set(err, DP_EINVAL, "%s: \"active_batch\" must be an integer in 1..%d (policy moves per step)", path,
                                DP_IMPROVE_MAX_ACTIVE_BATCH);
        cfg->active_batch = (int)json_integer_value(v);
        return DP_OK;
    }
    if (strcmp(key, "restart_from") == 0) {
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        if (strcmp(s, "best") == 0) cfg->restart_from_start = 0;
        else if (strcmp(s, "start") == 0) cfg->restart_from_start = 1;
        else return dp_error_set(err, DP_EINVAL, "%s: \"restart_from\" must be \"best\" or \"start\"", path);
        return DP_OK;
    }
    return DP_SEARCH_KEY_UNKNOWN;
}

int dp_improve_search_config_load(dp_improve_search_config *cfg, const char *path, dp_error *err)
{
    return dp_search_config_load_keys(&cfg->anneal, path, improve_search_key, cfg,
                                      "accept, mix, restarts, min_run, perturb, restart_from, first_share, active_lr, active_batch, budget, t0, t_end, schedule, swap_prob, init", err);
}

int dp_improve_search(const dp_improve_model *m, const dp_graph *g, const dp_cost *c, const dp_oracle *oracle,
                      const dp_improve_search_config *cfg, uint64_t seed, int *assignment, dp_search_result *res,
                      dp_error *err)
{
    memset(res, 0, sizeof *res);
    dp_engine *e = oracle ? oracle->engine : NULL;
    if (!e) return dp_error_set(err, DP_EINVAL, "improve: the cost oracle must be the machine's engine (its state is the engine's schedule)");
    if (!m) return dp_error_set(err, DP_EINVAL, "improve: a model is required (--checkpoint or --proposals FILE)");
    int rc = dp_improve_search_check_config(cfg, err);
    if (rc != DP_OK) return rc;
    const int annealing = !cfg->greedy;
    const int n = g->n_ops, D = c->n_devices;
    /* active search fine-tunes its own copy of the model (the caller's stays as it was) */
    const int active = cfg->active_lr > 0;
    dp_improve_model *am = NULL;
    float *acc = NULL;
    size_t P1 = 0, P = 0;
    double a_base = 0, a_var = 0;
    long a_count = 0;
    int a_moves = 0;
    double lb = 1; /* active search's reward unit: the lower bound */
    if (active) {
        const double bound = dp_cost_lower_bound(g, c);
        if (bound > 0) lb = bound;
        if (!(am = dp_improve_model_alloc(&m->arch, err))) return err ? err->code : DP_ENOMEM;
        memcpy(am->op.p.param, m->op.p.param, m->op.p.n * sizeof(float));
        memcpy(am->move.p.param, m->move.p.param, m->move.p.n * sizeof(float));
        P1 = am->op.p.n;
        P = P1 + am->move.p.n;
        if (!(acc = dp_alloc_calloc_n(P, sizeof(float)))) {
            dp_improve_model_free(am);
            return dp_error_set(err, DP_ENOMEM, "%s: out of memory for active search", g->source);
        }
        m = am;
    }
    int *cur = dp_alloc_malloc_n(n, sizeof(int)), *best = dp_alloc_malloc_n(n, sizeof(int));
    int *first = dp_alloc_malloc_n(n, sizeof(int));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    dp_improve_state *st = NULL;
    dp_search_anneal_config uni = cfg->anneal;
    uni.proposal = NULL;
    /* the current placement is the engine's incumbent: each move a delta run (dp_engine.h), its
     * schedule the state's when the move is kept */
    dp_engine_incumbent *inc = NULL;
    if (!cur || !best || !first || !r) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory for the search", g->source); goto done; }
    if (!(inc = dp_engine_incumbent_alloc(e, err))) { rc = err ? err->code : DP_ENOMEM; goto done; }
    if (!(st = dp_improve_state_alloc(m, g, c, err))) { rc = err ? err->code : DP_ENOMEM; goto done; }
    gsl_rng_set(r, (unsigned long)seed);
    long start_sims;
    if ((rc = dp_search_start(g, c, oracle, &cfg->anneal, seed, cur, &start_sims, err)) != DP_OK) goto done;
    dp_engine_schedule sch;
    if ((rc = dp_engine_incumbent_set(inc, cur, NULL, err)) != DP_OK ||
        (rc = dp_engine_incumbent_schedule(inc, &sch, err)) != DP_OK)
        goto done;
    double cur_ms = sch.cost, best_ms = sch.cost;
    memcpy(best, cur, (size_t)n * sizeof(int));
    memcpy(first, cur, (size_t)n * sizeof(int));
    res->start = cur_ms;
    res->sims = 1 + start_sims;
    if (dp_search_trace_add(&res->trace, res->sims, best_ms) != DP_OK) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
    if (D > 1) dp_improve_state_set(st, cur, &sch);
    /* The moves left, K, are split into cfg->restarts runs of K / R (the first K mod R one more).
     * Run 0 starts from the start; run i > 0 from the best placement seen (or the start), with
     * cfg->perturb uniform moves applied blindly, simulated once (counted in run i's share), its
     * temperature going again from t0 to t_end of ITS start makespan (a reheat). R = 1 is the
     * single annealing run, move for move. */
    const long K = cfg->anneal.budget > res->sims ? cfg->anneal.budget - res->sims : 0;
    int R = cfg->restarts;
    if (cfg->min_run > 0 && R > 1) { /* no more runs than K / min_run, at least one */
        const long cap = K / cfg->min_run;
        if (cap < R) R = cap < 1 ? 1 : (int)cap;
    }
    for (int run = 0; run < R && D > 1; run++) {
        long Kr = K / R + (run < K % R ? 1 : 0);
        if (cfg->first_share > 0 && R > 1) { /* run 0 gets floor(share K), the others the rest evenly */
            const long K0 = (long)floor(cfg->first_share * (double)K), rest = K - K0;
            Kr = run == 0 ? K0 : rest / (R - 1) + (run - 1 < rest % (R - 1) ? 1 : 0);
        }
        if (Kr == 0) continue;
        if (run > 0) {
            memcpy(cur, cfg->restart_from_start ? first : best, (size_t)n * sizeof(int));
            for (int p = 0; p < cfg->perturb; p++) {
                int u, v, du, dv;
                dp_search_propose(&uni, n, D, cur, r, &u, &v, &du, &dv);
            }
            if ((rc = dp_engine_incumbent_set(inc, cur, NULL, err)) != DP_OK ||
                (rc = dp_engine_incumbent_schedule(inc, &sch, err)) != DP_OK)
                goto done;
            res->sims++;
            Kr--;
            cur_ms = sch.cost;
            dp_improve_state_set(st, cur, &sch);
            if (cur_ms < best_ms) {
                best_ms = cur_ms;
                memcpy(best, cur, (size_t)n * sizeof(int));
                if (dp_search_trace_add(&res->trace, res->sims, best_ms) != DP_OK) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
            }
        }
        const double T0 = cfg->anneal.t0 * cur_ms, T1 = cfg->anneal.t_end * cur_ms;
        for (long k = 0; k < Kr; k++) {
            int u, v = -1, du, dv = -1, policy_move = 0;
            if (cfg->mix > 0 && gsl_rng_uniform(r) < cfg->mix) {
                dp_search_propose(&uni, n, D, cur, r, &u, &v, &du, &dv);
            } else {
                int d;
                policy_move = 1;
                if (active) {
                    dp_nn_params_zero_grad(&am->op.p);
                    dp_nn_params_zero_grad(&am->move.p);
                }
                dp_improve_state_sample(st, 0.0, r, &u, &d, NULL, active);
                du = cur[u];
                cur[u] = d;
            }
            double ms;
            if ((rc = dp_engine_run_delta(inc, cur, INFINITY, &ms, NULL, err)) != DP_OK) goto done;
            res->sims++;
            const int accepted = dp_search_accept(&cfg->anneal, annealing, T0, T1, k, Kr, ms - cur_ms, r);
            if (active && policy_move) { /* one REINFORCE sample: its exact reward, a running baseline */
                active_sample(am, acc, P1, (accepted ? cur_ms - ms : 0.0) / lb, &a_base, &a_var, &a_count);
                a_moves++;
            }
            if (accepted) {
                cur_ms = ms;
                res->accepted++;
                if ((rc = dp_engine_incumbent_accept(inc, cur, err)) != DP_OK ||
                    (rc = dp_engine_incumbent_schedule(inc, &sch, err)) != DP_OK)
                    goto done;
                dp_improve_state_set(st, cur, &sch);
                if (cur_ms < best_ms) {
                    best_ms = cur_ms;
                    memcpy(best, cur, (size_t)n * sizeof(int));
                    if (dp_search_trace_add(&res->trace, res->sims, best_ms) != DP_OK) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
                }
            } else {
                cur[u] = du;
                if (v >= 0) cur[v] = dv;
            }
            if (active && a_moves >= cfg->active_batch) { /* one Adam step; the state rescored with it */
                active_step(am, acc, P1, P, a_moves, cfg->active_lr);
                a_moves = 0;
                dp_improve_state_rescore(st);
            }
        }
    }
    res->best = best_ms;
    memcpy(assignment, best, (size_t)n * sizeof(int));
done:
    if (rc != DP_OK) dp_search_trace_clear(&res->trace);
    dp_engine_incumbent_free(inc);
    dp_improve_state_free(st);
    gsl_rng_free(r);
    free(cur);
    free(best);
    free(first);
    free(acc);
    dp_improve_model_free(am);
    return rc;
}

int dp_improve_propose_search(const char *checkpoint, int annealing, const dp_graph *g, const dp_cost *c,
                              const dp_oracle *oracle, const dp_search_anneal_config *acfg, uint64_t seed, int *assignment,
                              dp_search_result *res, dp_error *err)
{
    memset(res, 0, sizeof *res);
    dp_improve_model *m = NULL;
    int rc = dp_improve_model_load(checkpoint, &m, err);
    if (rc != DP_OK) return rc;
    dp_improve_search_config cfg;
    dp_improve_search_config_init(&cfg);
    cfg.anneal = *acfg;
    cfg.anneal.proposal = NULL;
    cfg.greedy = !annealing;
    cfg.mix = 0.5;
    cfg.restarts = 1; /* annealing's (or local search's) single run, its proposals the policy's */
    cfg.perturb = 0;
    rc = dp_improve_search(m, g, c, oracle, &cfg, seed, assignment, res, err);
    dp_improve_model_free(m);
    return rc;
}

int dp_improve_place(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                     double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    if (has_priority) *has_priority = 0;
    if (!o->checkpoint)
        return dp_error_set(err, DP_EINVAL, "improve: --checkpoint FILE is required (train one with 'doppler train --method improve')");
    dp_improve_search_config cfg;
    dp_improve_search_config_init(&cfg);
    if (o->config && dp_improve_search_config_load(&cfg, o->config, err) != DP_OK) return err ? err->code : DP_EINVAL;
    if (o->budget > 0) cfg.anneal.budget = o->budget;
    dp_improve_model *m = NULL;
    int rc = dp_improve_model_load(o->checkpoint, &m, err);
    if (rc != DP_OK) return rc;
    dp_search_result res;
    rc = dp_improve_search(m, g, c, o->oracle, &cfg, o->seed, assignment, &res, err);
    if (rc == DP_OK) dp_search_trace_clear(&res.trace);
    dp_improve_model_free(m);
    return rc;
}

/* ---------------- training ---------------- */

static double now_s(void)
{
    struct timeval t;
    gettimeofday(&t, NULL);
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
}

typedef struct train_graph {
    dp_improve_state *st;
    double lb;
    int *elite;
    double elite_ms;
} train_graph;

/* The graphs of a run, as its checkpoint records them (a resume must be of the same ones). */
static char *trained_on(int n_graphs, const dp_graph *const *g, const dp_cost *const *c, const int *validation)
{
    json_t *o = json_object(), *l[2] = {json_array(), json_array()};
    for (int i = 0; i < n_graphs; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "graph", json_string(g[i]->name ? g[i]->name : ""));
        json_object_set_new(x, "n_ops", json_integer(g[i]->n_ops));
        json_object_set_new(x, "n_devices", json_integer(c[i]->n_devices));
        char fp[24];
        snprintf(fp, sizeof fp, "%016llx", (unsigned long long)dp_cost_fingerprint(c[i]));
        json_object_set_new(x, "costs", json_string(fp));
        json_array_append_new(l[validation && validation[i] ? 1 : 0], x);
    }
    json_object_set_new(o, "train", l[0]);
    json_object_set_new(o, "validation", l[1]);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* Everything of a run beyond the parameters, the Adam state and the generator that its
 * checkpoint holds so that a resumed run ends as an uninterrupted one. */
typedef struct run_state {
    long episode, sims, traj_ep, traj_st, traj_ev;
    long eval_sims, sel_episode, sel_sims;
    int evaluations, has_sel;
    double final_score, sel_score;
    float *sel_op, *sel_move;   /* the model-selected parameters (op.p.n, move.p.n) */
    char run_id[40];
} run_state;

/* a score as JSON: null for NAN or an infinity */
static json_t *json_score(double x)
{
    return isfinite(x) ? dp_json_number(x) : json_null();
}

static double score_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : key[0] == 'e' ? INFINITY : NAN;
}

static int save(dp_improve_model *m, const dp_improve_config *cfg, const char *path, int n_graphs, const dp_graph *const *g,
                const dp_cost *const *c, const int *validation, const train_graph *tg, int *elites, long n_elites,
                const run_state *rs, gsl_rng *master, dp_error *err)
{
    dp_h5io_ckpt ck;
    memset(&ck, 0, sizeof ck);
    char *cj = dp_improve_config_to_json(cfg), *on = trained_on(n_graphs, g, c, validation);
    /* the per-graph best placements (method_ints, concatenated) and their makespans with the
     * model selection's counters (method_state) */
    json_t *ms = json_object(), *em = json_array();
    long off = 0;
    for (int i = 0; i < n_graphs; i++) {
        json_array_append_new(em, json_score(tg[i].elite_ms));
        memcpy(elites + off, tg[i].elite, (size_t)g[i]->n_ops * sizeof(int));
        off += g[i]->n_ops;
    }
    json_object_set_new(ms, "elite_makespan", em);
    json_object_set_new(ms, "evaluations", json_integer(rs->evaluations));
    json_object_set_new(ms, "eval_simulations", json_integer(rs->eval_sims));
    json_object_set_new(ms, "final_score", json_score(rs->final_score));
    json_object_set_new(ms, "selected_score", json_score(rs->sel_score));
    json_object_set_new(ms, "selected_episode", json_integer(rs->sel_episode));
    json_object_set_new(ms, "selected_simulations", json_integer(rs->sel_sims));
    char *mj = json_dumps(ms, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(ms);
    ck.graph = g[0]->name;
    ck.n_ops = g[0]->n_ops;
    ck.n_devices = c[0]->n_devices;
    ck.trained_on = on;
    ck.features = DP_IMPROVE_FEATURES_NAME;
    ck.config_json = cj;
    snprintf(ck.run_id, sizeof ck.run_id, "%s", rs->run_id);
    ck.stage = DP_TRAIN_STAGE_SIM;
    ck.episode = rs->episode;
    ck.best_makespan = tg[0].elite_ms;
    ck.best_assignment = tg[0].elite;
    ck.traj_episodes = rs->traj_ep;
    ck.traj_steps = rs->traj_st;
    ck.traj_evaluations = rs->traj_ev;
    ck.simulations = rs->sims;
    snprintf(ck.rng_name, sizeof ck.rng_name, "%s", gsl_rng_name(master));
    ck.rng_state = gsl_rng_state(master);
    ck.rng_size = gsl_rng_size(master);
    ck.has_best = rs->has_sel;
    ck.best_greedy = rs->has_sel ? rs->sel_score : INFINITY;
    ck.sel_best = rs->sel_op;
    ck.plc_best = rs->sel_move;
    ck.method_state = mj;
    ck.method_ints = elites;
    ck.n_method_ints = n_elites;
    int rc = mj ? dp_h5io_ckpt_write(path, &ck, &m->op.p, &m->move.p, err) : dp_error_set(err, DP_ENOMEM, "out of memory");
    free(cj);
    free(on);
    free(mj);
    return rc;
}

/* Continue the run of checkpoint `path`: the parameters with their Adam state, the generator,
 * the per-graph best placements and rs; the trajectory (when given) checked to be the run's and
 * cut back to the rows the checkpoint accounts for. */
static int resume_load(dp_improve_model *m, const char *path, const char *traj, int n_graphs, const dp_graph *const *g,
                       const dp_cost *const *c, const int *validation, train_graph *tg, int *elites, long n_elites,
                       run_state *rs, gsl_rng *master, dp_error *err)
{
    dp_h5io_ckpt_info info;
    int rc = dp_h5io_ckpt_read_info(path, &info, err);
    if (rc != DP_OK) return rc;
    char *mine = trained_on(n_graphs, g, c, validation);
    if (!mine) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
    else if (!info.trained_on)
        rc = dp_error_set(err, DP_EINVAL, "%s: a run on other graphs (not said), not on these (%s): --resume continues the same run", path,
                          mine);
    else
        rc = dp_h5io_trained_on_check(path, info.trained_on, mine, err);
    free(mine);
    dp_h5io_ckpt_info_free(&info);
    if (rc != DP_OK) return rc;
    dp_h5io_ckpt ck;
    memset(&ck, 0, sizeof ck);
    ck.n_ops = g[0]->n_ops;
    ck.n_devices = c[0]->n_devices;
    ck.same_graph = 1;
    ck.best_assignment = tg[0].elite;
    const size_t sz = gsl_rng_size(master);
    unsigned char *st = dp_alloc_malloc(sz);
    if (!st) return dp_error_set(err, DP_ENOMEM, "out of memory");
    ck.rng_state = st;
    ck.rng_size = sz;
    ck.sel_best = rs->sel_op;
    ck.plc_best = rs->sel_move;
    ck.read_method_state = 1;
    ck.method_ints = elites;
    ck.n_method_ints = n_elites;
    rc = dp_h5io_ckpt_read(path, &ck, &m->op.p, &m->move.p, 1, err);
    json_t *ms = NULL;
    if (rc == DP_OK && strcmp(ck.rng_name, gsl_rng_name(master)) != 0)
        rc = dp_error_set(err, DP_EINVAL, "%s: generator %s, expected %s", path, ck.rng_name, gsl_rng_name(master));
    if (rc == DP_OK && !(ck.method_state && (ms = json_loads(ck.method_state, 0, NULL)) && json_is_object(ms)))
        rc = dp_error_set(err, DP_EINVAL, "%s: no readable method_state: not a checkpoint of a resumable improve run", path);
    json_t *em = ms ? json_object_get(ms, "elite_makespan") : NULL;
    if (rc == DP_OK && (!json_is_array(em) || (int)json_array_size(em) != n_graphs))
        rc = dp_error_set(err, DP_EINVAL, "%s: method_state.elite_makespan is not an array of %d makespans", path, n_graphs);
    if (rc == DP_OK) {
        memcpy(gsl_rng_state(master), st, sz);
        long off = 0;
        for (int i = 0; i < n_graphs; i++) {
            json_t *x = json_array_get(em, (size_t)i);
            tg[i].elite_ms = json_is_number(x) ? json_number_value(x) : INFINITY;
            memcpy(tg[i].elite, elites + off, (size_t)g[i]->n_ops * sizeof(int));
            off += g[i]->n_ops;
        }
        rs->episode = (long)ck.episode;
        rs->sims = (long)ck.simulations;
        rs->traj_ep = (long)ck.traj_episodes;
        rs->traj_st = (long)ck.traj_steps;
        rs->traj_ev = ck.traj_evaluations > 0 ? (long)ck.traj_evaluations : 0;
        rs->has_sel = ck.has_best;
        rs->evaluations = (int)json_integer_value(json_object_get(ms, "evaluations"));
        rs->eval_sims = (long)json_integer_value(json_object_get(ms, "eval_simulations"));
        rs->final_score = score_of(ms, "final_score");
        rs->sel_score = rs->has_sel ? ck.best_greedy : INFINITY;
        rs->sel_episode = (long)json_integer_value(json_object_get(ms, "selected_episode"));
        rs->sel_sims = (long)json_integer_value(json_object_get(ms, "selected_simulations"));
        snprintf(rs->run_id, sizeof rs->run_id, "%s", ck.run_id);
    }
    json_decref(ms);
    free(st);
    free(ck.method_state);
    free((char *)ck.graph);
    free(ck.config_json);
    if (rc != DP_OK || !traj) return rc;
    if ((rc = dp_h5io_traj_check_run(traj, path, rs->run_id, err)) != DP_OK) return rc;
    return dp_h5io_traj_truncate_rows(traj, rs->traj_ep, rs->traj_st, rs->traj_ev, err);
}

/* The model-selection score of m's parameters: the mean over the validation graphs of the best
 * makespan of the search (cfg->eval_budget simulations from cp, the default search config, seed
 * cfg->seed) over the graph's lower bound; *sims gets the simulations added. */
static int evaluate(const dp_improve_model *m, const dp_improve_config *cfg, int n_graphs, const dp_graph *const *g,
                    const dp_cost *const *c, dp_engine *const *e, const int *validation, const train_graph *tg, int *buf,
                    double *score, long *sims, dp_error *err)
{
    dp_improve_search_config sc;
    dp_improve_search_config_init(&sc);
    sc.anneal.budget = cfg->eval_budget;
    snprintf(sc.anneal.init, sizeof sc.anneal.init, "cp"); /* model selection's search starts from cp */
    double sum = 0;
    int cnt = 0;
    for (int i = 0; i < n_graphs; i++) {
        if (!validation || !validation[i]) continue;
        const dp_oracle o = dp_engine_oracle(e[i]);
        dp_search_result r;
        int rc = dp_improve_search(m, g[i], c[i], &o, &sc, cfg->seed, buf, &r, err);
        if (rc != DP_OK) return rc;
        dp_search_trace_clear(&r.trace);
        sum += r.best / tg[i].lb;
        *sims += r.sims;
        cnt++;
    }
    *score = cnt ? sum / cnt : NAN;
    return DP_OK;
}

/* One model-selection evaluation of m's current parameters at rs->episode: keeps them as the
 * model-selected ones when they score best so far, and fills the evaluation's trajectory row. */
static int select_model(const dp_improve_model *m, const dp_improve_config *cfg, int n_graphs, const dp_graph *const *g,
                        const dp_cost *const *c, dp_engine *const *e, const int *validation, const train_graph *tg, int *buf,
                        run_state *rs, dp_h5io_traj_eval *row, dp_error *err)
{
    double score;
    int rc = evaluate(m, cfg, n_graphs, g, c, e, validation, tg, buf, &score, &rs->eval_sims, err);
    if (rc != DP_OK) return rc;
    rs->evaluations++;
    rs->final_score = score;
    if (score < rs->sel_score) {
        rs->sel_score = score;
        rs->has_sel = 1;
        rs->sel_episode = rs->episode;
        rs->sel_sims = rs->sims;
        memcpy(rs->sel_op, m->op.p.param, m->op.p.n * sizeof(float));
        memcpy(rs->sel_move, m->move.p.param, m->move.p.n * sizeof(float));
    }
    row->stage = DP_TRAIN_STAGE_SIM;
    row->episode = rs->episode;
    row->makespan = score;
    row->best = rs->sel_score;
    row->simulations = rs->sims + rs->eval_sims;
    row->unix_s = now_s();
    return DP_OK;
}

static const char *const START_KINDS[] = {"cp", "round-robin", "random"};

int dp_improve_train(dp_improve_model *m, const dp_improve_config *cfg, int init_params, int n_graphs,
                     const dp_graph *const *g, const dp_cost *const *c, dp_engine *const *e, const int *validation,
                     const dp_improve_io *io, dp_improve_result *res, dp_error *err)
{
    if (res) {
        memset(res, 0, sizeof *res);
        res->final_score = res->selected_score = NAN;
    }
    if (n_graphs < 1) return dp_error_set(err, DP_EINVAL, "improve: no training graph");
    int n_train = 0, n_val = 0;
    for (int i = 0; i < n_graphs; i++) {
        if (c[i]->n_devices < 2)
            return dp_error_set(err, DP_EINVAL, "%s: improve trains on two devices or more, got %d", g[i]->source,
                                c[i]->n_devices);
        if (validation && validation[i]) n_val++;
        else n_train++;
    }
    if (n_train < 1) return dp_error_set(err, DP_EINVAL, "improve: no training graph (only validation graphs)");
    if (cfg->batch < 1 || cfg->horizon < 1 || cfg->nstep < 1 || cfg->episodes < 1 || cfg->eval_every < 1 || cfg->eval_budget < 1)
        return dp_error_set(err, DP_EINVAL, "improve: episodes, batch, horizon, nstep, eval_every and eval_budget must be positive");
    const int resume = io && io->resume;
    if (resume && !io->checkpoint) return dp_error_set(err, DP_EINVAL, "improve: resuming needs the checkpoint file");
    const int B = cfg->batch, T = cfg->horizon;
    const size_t P1 = m->op.p.n, P = P1 + m->move.p.n;
    int rc = DP_OK, maxn = 0;
    long n_elites = 0;
    run_state rs;
    memset(&rs, 0, sizeof rs);
    rs.final_score = NAN;
    rs.sel_score = INFINITY;
    dp_h5io_run_id_new(rs.run_id, sizeof rs.run_id);
    rs.sel_op = dp_alloc_calloc_n(P1, sizeof(float));
    rs.sel_move = dp_alloc_calloc_n(P - P1, sizeof(float));
    dp_h5io_traj_eval evrow[2]; /* evaluation rows waiting for the next trajectory append */
    int n_evrow = 0;
    train_graph *tg = dp_alloc_calloc((size_t)n_graphs, sizeof *tg);
    int *train_idx = dp_alloc_malloc_n((size_t)n_graphs, sizeof(int)), *elites = NULL;
    gsl_rng *master = gsl_rng_alloc(gsl_rng_mt19937), *r = gsl_rng_alloc(gsl_rng_mt19937);
    float *stepgrad = dp_alloc_malloc_n((size_t)B * T * P, sizeof(float)), *grad = dp_alloc_malloc_n(P, sizeof(float));
    double *rew = dp_alloc_malloc_n((size_t)B * T, sizeof(double)), *ret = dp_alloc_malloc_n((size_t)B * T, sizeof(double));
    double *logmu = dp_alloc_malloc_n((size_t)B * T, sizeof(double)), *epms = dp_alloc_malloc_n((size_t)B * 2, sizeof(double));
    int *mv = dp_alloc_malloc_n((size_t)B * T * 2, sizeof(int));
    uint64_t *epseed = dp_alloc_malloc_n((size_t)B, sizeof(uint64_t));
    double *epwall = dp_alloc_malloc_n((size_t)B, sizeof(double));
    dp_h5io_traj_episode *rows_ep = dp_alloc_malloc_n((size_t)B, sizeof *rows_ep);
    dp_h5io_traj_step *rows_st = dp_alloc_malloc_n((size_t)B * T, sizeof *rows_st);
    int *start = NULL, *cur = NULL;
    if (!tg || !train_idx || !master || !r || !stepgrad || !grad || !rew || !ret || !logmu || !epms || !mv || !epseed || !epwall ||
        !rows_ep || !rows_st || !rs.sel_op || !rs.sel_move) {
        rc = dp_error_set(err, DP_ENOMEM, "out of memory for improve training");
        goto done;
    }
    for (int i = 0, k = 0; i < n_graphs; i++)
        if (!validation || !validation[i]) train_idx[k++] = i;
    for (int i = 0; i < n_graphs; i++) {
        if (g[i]->n_ops > maxn) maxn = g[i]->n_ops;
        n_elites += g[i]->n_ops;
        if (!(tg[i].st = dp_improve_state_alloc(m, g[i], c[i], err))) { rc = err ? err->code : DP_ENOMEM; goto done; }
        tg[i].lb = dp_cost_lower_bound(g[i], c[i]);
        if (!(tg[i].lb > 0)) tg[i].lb = 1;
        if (!(tg[i].elite = dp_alloc_calloc_n(g[i]->n_ops, sizeof(int)))) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
        tg[i].elite_ms = INFINITY;
    }
    start = dp_alloc_malloc_n(maxn, sizeof(int));
    cur = dp_alloc_malloc_n(maxn, sizeof(int));
    elites = dp_alloc_malloc_n((size_t)n_elites, sizeof(int));
    if (!start || !cur || !elites) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
    if (resume) {
        if ((rc = resume_load(m, io->checkpoint, io->trajectory, n_graphs, g, c, validation, tg, elites, n_elites, &rs, master, err)) !=
            DP_OK)
            goto done;
    } else {
        gsl_rng_set(master, (unsigned long)cfg->seed);
        if (init_params && (rc = dp_improve_model_init(m, master)) != DP_OK) { dp_error_set(err, rc, "out of memory"); goto done; }
        for (int b = 0; b < 2; b++) { /* Adam afresh (a loaded model's moments are not read) */
            dp_nn_params *p = b ? &m->move.p : &m->op.p;
            memset(p->m, 0, p->n * sizeof(float));
            memset(p->v, 0, p->n * sizeof(float));
            p->adam_t = 0;
        }
        if (io && io->trajectory) {
            char *cj = dp_improve_config_to_json(cfg);
            rc = dp_h5io_traj_create(io->trajectory, g[0]->name, g[0]->n_ops, c[0]->n_devices, "simulator",
                                     "makespan / lower bound", cj, rs.run_id, err);
            free(cj);
            if (rc != DP_OK) goto done;
        }
    }
    long every = cfg->checkpoint_every, eval_every = cfg->eval_every;
    if (every % B) every += B - every % B;
    if (eval_every % B) eval_every += B - eval_every % B;
    /* episodes run in whole batches: the count is rounded up to a multiple of the batch */
    const long n_ep = (cfg->episodes + B - 1) / B * B;
    /* the starting parameters are a candidate too: model selection never returns parameters
     * that score worse than those training started from (their row goes with the first batch's) */
    if (n_val > 0 && rs.evaluations == 0 &&
        (rc = select_model(m, cfg, n_graphs, g, c, e, validation, tg, cur, &rs, &evrow[n_evrow++], err)) != DP_OK)
        goto done;
    for (long ep = rs.episode; ep < n_ep; ep += B) {
        const double frac = (double)ep / (double)n_ep;
        const double lr = cfg->lr + (cfg->lr_final - cfg->lr) * frac;
        /* the batch's graph and start */
        const int gi = train_idx[gsl_rng_uniform_int(master, (unsigned long)n_train)];
        train_graph *t = &tg[gi];
        const dp_graph *gg = g[gi];
        const int n = gg->n_ops;
        const dp_oracle orc = dp_engine_oracle(e[gi]);
        if (isfinite(t->elite_ms) && gsl_rng_uniform(master) < cfg->elite_prob) {
            memcpy(start, t->elite, (size_t)n * sizeof(int));
        } else {
            const char *kind = START_KINDS[gsl_rng_uniform_int(master, 3)];
            dp_place_options po;
            dp_place_options_init(&po);
            po.seed = gsl_rng_get(master);
            po.oracle = &orc;
            if ((rc = dp_place(kind, gg, c[gi], &po, start, NULL, NULL, err)) != DP_OK) goto done;
        }
        dp_nn_params_zero_grad(&m->op.p);
        dp_nn_params_zero_grad(&m->move.p);
        for (int b = 0; b < B; b++) {
            const double t0 = now_s();
            epseed[b] = gsl_rng_get(master);
            gsl_rng_set(r, (unsigned long)epseed[b]);
            memcpy(cur, start, (size_t)n * sizeof(int));
            dp_engine_schedule sch;
            if ((rc = dp_engine_run(e[gi], cur, NULL, &sch, err)) != DP_OK) goto done;
            rs.sims++;
            double cur_ms = sch.cost;
            epms[2 * b] = cur_ms;
            dp_improve_state_set(t->st, cur, &sch);
            for (int s = 0; s < T; s++) {
                const size_t k = (size_t)b * T + s;
                float *sg = stepgrad + k * P;
                memset(m->op.p.grad, 0, P1 * sizeof(float));
                memset(m->move.p.grad, 0, (P - P1) * sizeof(float));
                int u, d;
                dp_improve_state_sample(t->st, cfg->epsilon, r, &u, &d, &logmu[k], 1);
                memcpy(sg, m->op.p.grad, P1 * sizeof(float));
                memcpy(sg + P1, m->move.p.grad, (P - P1) * sizeof(float));
                mv[2 * k] = u;
                mv[2 * k + 1] = d;
                const int du = cur[u];
                cur[u] = d;
                if ((rc = dp_engine_run(e[gi], cur, NULL, &sch, err)) != DP_OK) goto done;
                rs.sims++;
                if (sch.cost <= cur_ms) {
                    rew[k] = (cur_ms - sch.cost) / t->lb;
                    cur_ms = sch.cost;
                    dp_improve_state_set(t->st, cur, &sch);
                    if (cur_ms < t->elite_ms) {
                        t->elite_ms = cur_ms;
                        memcpy(t->elite, cur, (size_t)n * sizeof(int));
                    }
                } else {
                    rew[k] = 0;
                    cur[u] = du;
                }
            }
            epms[2 * b + 1] = cur_ms;
            epwall[b] = now_s() - t0;
        }
        /* n-step returns, the per-step baseline (the batch's mean return at that step) and the
         * advantages' scale (their standard deviation over the batch) */
        for (int b = 0; b < B; b++)
            for (int s = 0; s < T; s++) {
                double G = 0, w = 1;
                for (int q = 0; q < cfg->nstep && s + q < T; q++, w *= cfg->gamma) G += w * rew[(size_t)b * T + s + q];
                ret[(size_t)b * T + s] = G;
            }
        double ss = 0;
        for (int s = 0; s < T; s++) {
            double mean = 0;
            for (int b = 0; b < B; b++) mean += ret[(size_t)b * T + s];
            mean /= B;
            for (int b = 0; b < B; b++) {
                ret[(size_t)b * T + s] -= mean;
                ss += ret[(size_t)b * T + s] * ret[(size_t)b * T + s];
            }
        }
        const double sd = sqrt(ss / ((double)B * T));
        if (sd > 1e-12) {
            for (size_t j = 0; j < P; j++) grad[j] = 0;
            for (size_t k = 0; k < (size_t)B * T; k++) {
                const float a = (float)(ret[k] / sd / ((double)B * T));
                if (a == 0) continue;
                const float *sg = stepgrad + k * P;
                for (size_t j = 0; j < P; j++) grad[j] += a * sg[j];
            }
            memcpy(m->op.p.grad, grad, P1 * sizeof(float));
            memcpy(m->move.p.grad, grad + P1, (P - P1) * sizeof(float));
            dp_nn_params *blk[2] = {&m->op.p, &m->move.p};
            for (int q = 0; q < 2; q++) {
                if (cfg->grad_clip > 0) dp_nn_clip_grad_norm(blk[q], cfg->grad_clip);
                dp_nn_adam_step(blk[q], (float)lr, 0.9f, 0.999f, 1e-8f, 0.0f);
            }
        }
        /* trajectory rows and progress */
        double gain = 0, ratio = 0;
        for (int b = 0; b < B; b++) {
            dp_h5io_traj_episode *re = &rows_ep[b];
            re->stage = DP_TRAIN_STAGE_SIM;
            re->episode = ep + b;
            re->seed = epseed[b];
            re->makespan = epms[2 * b + 1] / t->lb;
            re->reward = (epms[2 * b] - epms[2 * b + 1]) / t->lb;
            re->wall_s = epwall[b];
            re->lr = lr;
            re->epsilon = cfg->epsilon;
            re->sel_agree = re->plc_agree = NAN;
            re->step_offset = rs.traj_st + (long)b * T;
            re->n_steps = T;
            gain += re->reward / B;
            ratio += re->makespan / B;
            for (int s = 0; s < T; s++) {
                const size_t k = (size_t)b * T + s;
                dp_h5io_traj_step *st = &rows_st[k];
                st->sel_op = mv[2 * k];
                st->ready = n;
                st->plc_device = mv[2 * k + 1];
                st->sel_logp = (float)logmu[k];
                st->plc_logp = 0.0f; /* the joint log-likelihood is in sel_logp */
            }
        }
        rs.episode = ep + B;
        const int last = rs.episode >= n_ep;
        if (io && io->progress) {
            dp_improve_progress pg = {rs.episode, n_ep, lr, gain, ratio, rs.sims, last};
            io->progress(&pg, io->progress_ctx);
        }
        /* model selection: the evaluations draw from their own generator, so that they change
         * nothing of the training */
        if (n_val > 0 && (last || rs.episode % eval_every == 0) &&
            (rc = select_model(m, cfg, n_graphs, g, c, e, validation, tg, cur, &rs, &evrow[n_evrow++], err)) != DP_OK)
            goto done;
        if (io && io->trajectory) {
            if ((rc = dp_h5io_traj_append_rows(io->trajectory, rows_ep, B, rows_st, (long)B * T, evrow, n_evrow, err)) != DP_OK) goto done;
            rs.traj_ep += B;
            rs.traj_st += (long)B * T;
            rs.traj_ev += n_evrow;
        }
        n_evrow = 0;
        const int stopping = !last && io && io->stop && *io->stop;
        if (io && io->checkpoint && (last || stopping || rs.episode % every == 0) &&
            (rc = save(m, cfg, io->checkpoint, n_graphs, g, c, validation, tg, elites, n_elites, &rs, master, err)) != DP_OK)
            goto done;
        if (stopping) {
            if (res) res->stopped = 1;
            break;
        }
    }
done:
    if (res) {
        res->episodes = rs.episode;
        res->simulations = rs.sims;
        res->eval_simulations = rs.eval_sims;
        res->evaluations = rs.evaluations;
        res->final_score = rs.evaluations ? rs.final_score : NAN;
        res->selected_score = rs.has_sel ? rs.sel_score : NAN;
        res->selected_episode = rs.sel_episode;
        res->selected_simulations = rs.sel_sims;
    }
    if (tg)
        for (int i = 0; i < n_graphs; i++) {
            dp_improve_state_free(tg[i].st);
            free(tg[i].elite);
        }
    free(tg);
    free(train_idx);
    free(elites);
    free(rs.sel_op);
    free(rs.sel_move);
    gsl_rng_free(master);
    gsl_rng_free(r);
    free(stepgrad); free(grad); free(rew); free(ret); free(logmu); free(epms); free(mv); free(epseed); free(epwall);
    free(rows_ep); free(rows_st); free(start); free(cur);
    return rc;
}
