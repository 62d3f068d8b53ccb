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
#include "dp_schema.h"
#include "dp_train.h"

#define FO DP_IMPROVE_OP_FEATURES
#define FM DP_IMPROVE_MOVE_FEATURES
#define FZ (FO + FM) /* the move network's input: the op's features, then the move's */

/* ---------------- config ---------------- */

/* the keys under "improve" (dp_improve.h) */
#define IC(f) offsetof(dp_improve_config, f)
static const dp_schema_key config_keys[] = {
    {"hidden", DP_SCHEMA_INT, IC(arch.hidden), 1, 4096, NULL, 0, "32", "hidden units of the op and move networks", NULL, NULL, 0, NULL},
    {"slope", DP_SCHEMA_FLOAT, IC(arch.slope), 0, 1, NULL, 0, "0.01", "leaky ReLU slope", NULL, NULL, 0, NULL},
    {"episodes", DP_SCHEMA_LONG, IC(episodes), 1, 1e9, NULL, 0, "1000", "training episodes", NULL, NULL, 0, NULL},
    {"horizon", DP_SCHEMA_INT, IC(horizon), 1, 100000, NULL, 0, "32", "moves per episode, each one simulation", NULL, NULL, 0, NULL},
    {"nstep", DP_SCHEMA_INT, IC(nstep), 1, 100000, NULL, 0, "4", "n of the n-step return", NULL, NULL, 0, NULL},
    {"gamma", DP_SCHEMA_DOUBLE, IC(gamma), 0, 1, NULL, 0, "0.9", "discount within the n-step return", NULL, NULL, 0, NULL},
    {"batch", DP_SCHEMA_INT, IC(batch), 1, 100000, NULL, 0, "8", "episodes per Adam step (one graph, one start)", NULL, NULL, 0, NULL},
    {"lr", DP_SCHEMA_DOUBLE, IC(lr), 0, 1, NULL, 0, "0.001", "Adam learning rate at the start", NULL, NULL, 0, NULL},
    {"lr_final", DP_SCHEMA_DOUBLE, IC(lr_final), 0, 1, NULL, 0, "0.0001", "learning rate at the end (linear decay)", NULL, NULL, 0, NULL},
    {"epsilon", DP_SCHEMA_DOUBLE, IC(epsilon), 0, 1, NULL, 0, "0.1", "chance of a uniform op (and device)", NULL, NULL, 0, NULL},
    {"grad_clip", DP_SCHEMA_DOUBLE, IC(grad_clip), 0, 1e30, NULL, 0, "1", "max gradient norm per network", NULL, NULL, 0, NULL},
    {"elite_prob", DP_SCHEMA_DOUBLE, IC(elite_prob), 0, 1, NULL, 0, "0.5", "chance a batch starts from the best placement found", NULL, NULL, 0, NULL},
    {"checkpoint_every", DP_SCHEMA_LONG, IC(checkpoint_every), 1, 1e9, NULL, 0, "200", "episodes between checkpoints", NULL, NULL, 0, NULL},
    {"eval_every", DP_SCHEMA_LONG, IC(eval_every), 1, 1e9, NULL, 0, "1000", "episodes between model-selection evaluations", NULL, NULL, 0, NULL},
    {"eval_budget", DP_SCHEMA_LONG, IC(eval_budget), 1, 1e9, NULL, 0, "200", "simulations of an evaluation's search per graph", NULL, NULL, 0, NULL},
    {0},
};
#undef IC

static const char *const config_others[] = {"method", "features", "seed", "improve", NULL};

static const dp_schema_section config_sections[] = {
    {"", NULL, "the top level: method (improve), features (the checkpoint's feature set), seed", config_others},
    {"improve", config_keys, "the improvement method's training", NULL},
    {NULL, NULL, NULL, NULL},
};

const dp_schema_section *dp_improve_config_sections(void)
{
    return config_sections;
}

void dp_improve_config_default(dp_improve_config *c)
{
    memset(c, 0, sizeof *c);
    dp_schema_defaults(config_keys, c);
    c->seed = 1;
}

char *dp_improve_config_to_json(const dp_improve_config *c)
{
    json_t *o = json_object(), *m = json_object();
    json_object_set_new(o, "method", json_string("improve"));
    json_object_set_new(o, "features", json_string(DP_IMPROVE_FEATURES_NAME));
    json_object_set_new(o, "seed", dp_json_seed(c->seed)); /* beyond 2^63-1 a string of its digits */
    dp_schema_to_json(config_keys, c, m, 1);
    json_object_set_new(o, "improve", m);
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
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
                /* (it said "incompatible checkpoint" of a config file too: a review) */
                return dp_error_set(err, DP_EINVAL, "\"features\" \"%s\": the improvement policy's feature set is %s (a "
                                    "checkpoint of another cannot be read; a config cannot choose one)", s,
                                    DP_IMPROVE_FEATURES_NAME);
        } else if (strcmp(key, "seed") == 0) {
            /* a seed beyond 2^63-1 was written as a negative integer and refused on reading (a
             * review): written and read as DOPPLER's config does */
            if (dp_json_seed_value(v, &c->seed) != 0)
                return dp_error_set(err, DP_EINVAL, "config: \"seed\" must be an integer from 0 to 2^64-1 (beyond 2^63-1 as a string of digits)");
        } else if (strcmp(key, "improve") == 0) {
            int rc = dp_schema_from_json(config_keys, c, v, "config", "improve.", NULL, err);
            if (rc != DP_OK) return rc;
        } else {
            return dp_error_set(err, DP_EINVAL, "config: unknown key \"%s\" for method improve (method, features, seed, improve)",
                                key);
        }
    }
    return DP_OK;
}

static int read_config(void *c, const json_t *o, const char *path, dp_error *err)
{
    (void)path;
    return config_from_json(c, (json_t *)o, err);
}

int dp_improve_config_from_json_text(dp_improve_config *c, const char *text, dp_error *err)
{
    return dp_schema_load(NULL, text, read_config, c, err);
}

int dp_improve_config_load(dp_improve_config *c, const char *path, dp_error *err)
{
    return dp_schema_load(path, NULL, read_config, c, err);
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
    ck.blocks[0] = "op"; /* its own slots (/sel and /plc in checkpoints written before) */
    ck.blocks[1] = "move";
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
    op_key *keys;        /* (n) the ops in start order (ties: topological), the last state's */
    int keys_set;        /* keys hold every op (a state was set): the next sort starts from them */
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

/* s->keys: every op by (start S, topological position), a strict order (positions differ), so
 * any sort gives the same array. A move of the search shifts some starts and keeps most ops in
 * the last state's order: the ops are taken in that order and sorted by insertion, O(n) plus the
 * pairs out of order; past 8n shifts (a restart's perturbed placement, say) qsort sorts the rest
 * from scratch. qsort alone was 7% of the improvement search's instructions (Llama-block). */
static void sort_by_start(dp_improve_state *s)
{
    const int n = s->n;
    op_key *k = s->keys;
    if (!s->keys_set) {
        for (int v = 0; v < n; v++) k[v] = (op_key){s->S[v], s->pos[v], v};
        qsort(k, (size_t)n, sizeof *k, op_key_cmp);
        s->keys_set = 1;
        return;
    }
    for (int i = 0; i < n; i++) k[i].s = s->S[k[i].v];
    long budget = 8L * n;
    for (int i = 1; i < n; i++) {
        const op_key x = k[i];
        int j = i;
        while (j > 0 && op_key_cmp(&k[j - 1], &x) > 0) { /* qsort's order, one definition */
            k[j] = k[j - 1];
            j--;
            if (--budget < 0) {
                k[j] = x;
                qsort(k, (size_t)n, sizeof *k, op_key_cmp);
                return;
            }
        }
        k[j] = x;
    }
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
    sort_by_start(s);
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

/* The improvement search's own keys, beside annealing's (dp_search_anneal_keys) */
#define IS(f) offsetof(dp_improve_search_config, f)
static const dp_schema_key search_keys[] = {
    {"accept", DP_SCHEMA_ENUM, IS(greedy), 0, 0, "anneal|greedy", 0, "anneal", "annealing's acceptance or greedy (local search)", NULL, NULL, 0, NULL},
    {"mix", DP_SCHEMA_DOUBLE, IS(mix), 0, 1, NULL, 0, "0.2", "chance a move is annealing's uniform move, not the policy's", NULL, NULL, 0, NULL},
    {"restarts", DP_SCHEMA_INT, IS(restarts), 1, DP_IMPROVE_MAX_RESTARTS, NULL, 0, "10", "runs sharing the budget", NULL, NULL, 0, NULL},
    {"min_run", DP_SCHEMA_LONG, IS(min_run), 0, HUGE_VAL, NULL, 0, "400", "the fewest moves a run gets (0: no minimum)", NULL, NULL, 0, NULL},
    {"perturb", DP_SCHEMA_INT, IS(perturb), 0, DP_IMPROVE_MAX_PERTURB, NULL, 0, "10", "uniform moves before a later run", NULL, NULL, 0, NULL},
    {"restart_from", DP_SCHEMA_ENUM, IS(restart_from_start), 0, 0, "best|start", 0, "best", "where a later run starts", NULL, NULL, 0, NULL},
    {"first_share", DP_SCHEMA_DOUBLE, IS(first_share), 0, 1, NULL, 0, "0", "the first run's share of the moves (0: an even share)", NULL, NULL, 0, NULL},
    {"active_lr", DP_SCHEMA_DOUBLE, IS(active_lr), 0, 1, NULL, 0, "0", "active search's learning rate (0: no active search)", NULL, NULL, 0, NULL},
    {"active_batch", DP_SCHEMA_INT, IS(active_batch), 1, DP_IMPROVE_MAX_ACTIVE_BATCH, NULL, 0, "16", "policy moves per active search step", NULL, NULL, 0, NULL},
    {0},
};
#undef IS

void dp_improve_search_config_init(dp_improve_search_config *cfg)
{
    dp_search_anneal_config_init(&cfg->anneal);
    /* the start: the best of the six instant methods (6 simulations of the budget), not cp:
     * chosen on generated validation graphs (EXPERIMENTS.md), mean makespan over the best of
     * the settings tried 1.0063 against 1.0177 from cp at 20,000 simulations, 1.0048 against
     * 1.0708 at 500 */
    snprintf(cfg->anneal.init, sizeof cfg->anneal.init, "best-instant");
    /* the table's defaults, chosen on generated validation graphs (EXPERIMENTS.md): 10 runs, each
     * later one from the best seen after 10 uniform moves, beat one run by about 1% of the
     * makespan on average; runs of 100 moves lose to one run, of 250 to 2000 win (min_run 400) */
    dp_schema_defaults(search_keys, cfg);
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

/* annealing's keys as the improvement search takes them: init's default is best-instant
 * (dp_improve_search_config_init), which `doppler config improve` shows (it listed annealing's
 * cp under a line saying the search starts from best-instant); made at the first call */
#define ANNEAL_KEYS_MAX 64
static dp_schema_key improve_anneal_keys[ANNEAL_KEYS_MAX];

static const dp_schema_section search_sections[] = {
    {"", search_keys, "the improvement search's own keys", NULL},
    {"", improve_anneal_keys, "annealing's keys, with annealing's defaults but one: the improvement search starts from init best-instant, not cp", NULL},
    {NULL, NULL, NULL, NULL},
};

const dp_schema_section *dp_improve_search_sections(void)
{
    if (!improve_anneal_keys[0].key)
        for (int i = 0; dp_search_anneal_keys[i].key && i < ANNEAL_KEYS_MAX - 1; i++) {
            improve_anneal_keys[i] = dp_search_anneal_keys[i];
            if (strcmp(improve_anneal_keys[i].key, "init") == 0) improve_anneal_keys[i].def = "best-instant";
        }
    return search_sections;
}

int dp_improve_search_config_load(dp_improve_search_config *cfg, const char *path, dp_error *err)
{
    return dp_search_config_load_keys(&cfg->anneal, path, search_keys, cfg, err);
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
            const int *base = cfg->restart_from_start ? first : best;
            memcpy(cur, base, (size_t)n * sizeof(int));
            for (int p = 0; p < cfg->perturb; p++) {
                int u, v, du, dv;
                dp_search_propose(&uni, n, D, cur, r, &u, &v, &du, &dv);
            }
            rc = dp_engine_incumbent_set(inc, cur, NULL, err);
            if (rc == DP_OK) rc = dp_engine_incumbent_schedule(inc, &sch, err);
            if (rc == DP_ERANGE) {
                /* the perturbed start is over a memory limit: a rejected start, as a move over it
                 * is (doc/improve.md), its simulation counted; the run starts from the placement
                 * it perturbed (simulated again, counted), or is over when its share is spent
                 * (the whole search ended with the limit's error: a review) */
                res->sims++;
                rc = DP_OK; /* (it was left DP_ERANGE: the last run's ended the search with the error) */
                if (--Kr == 0) continue;
                memcpy(cur, base, (size_t)n * sizeof(int));
                rc = dp_engine_incumbent_set(inc, cur, NULL, err);
                if (rc == DP_OK) rc = dp_engine_incumbent_schedule(inc, &sch, err);
            }
            if (rc != DP_OK) goto done;
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
            if ((rc = dp_search_move_over_limit(dp_engine_run_delta(inc, cur, INFINITY, &ms, NULL, err), &ms)) != DP_OK)
                goto done;
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

/* The config the improve placement searches with: o->config's keys over the defaults, o->budget
 * over the file's, checked. The one reading of it, for the placement and for its check before
 * any graph (dp_improve_place_config). */
static int improve_place_config(const dp_place_options *o, dp_improve_search_config *cfg, dp_error *err)
{
    dp_improve_search_config_init(cfg);
    if (o->config && dp_improve_search_config_load(cfg, o->config, err) != DP_OK) return err ? err->code : DP_EINVAL;
    /* --budget replaces the file's before the values are checked (a file's budget of 3 was
     * refused though --budget 20 replaced it: a review) */
    if (o->budget > 0) cfg->anneal.budget = o->budget;
    if (o->config && dp_improve_search_check_config(cfg, err) != DP_OK) {
        /* the file's values together, naming it (a review) */
        dp_error_prefix(err, "%s", o->config);
        return err ? err->code : DP_EINVAL;
    }
    return DP_OK;
}

int dp_improve_place_config(const dp_place_options *o, dp_error *err)
{
    dp_improve_search_config cfg;
    return improve_place_config(o, &cfg, err);
}

int dp_improve_place(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                     double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    if (has_priority) *has_priority = 0;
    if (!o->checkpoint)
        return dp_error_set(err, DP_EINVAL, "improve: --checkpoint FILE is required (train one with 'doppler train --method improve')");
    dp_improve_search_config cfg;
    int rc0 = improve_place_config(o, &cfg, err);
    if (rc0 != DP_OK) return rc0;
    dp_improve_model *m = NULL;
    int rc = o->final_parameters ? dp_improve_model_load_final(o->checkpoint, &m, err)
                                 : dp_improve_model_load(o->checkpoint, &m, err);
    if (rc != DP_OK) return rc;
    dp_search_result res;
    rc = dp_improve_search(m, g, c, o->oracle, &cfg, o->seed, assignment, &res, err);
    if (rc == DP_OK) dp_search_trace_clear(&res.trace);
    dp_improve_model_free(m);
    return rc;
}
