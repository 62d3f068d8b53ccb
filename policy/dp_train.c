/* dp_train.c: the one trainer of the learned placement methods (see dp_train.h, dp_agent.h): the
 * trainer and the graphs bound to it, rollouts, an episode's gradient and the optimiser step,
 * placements, agreement and timing. The training loop is dp_train_run.c's, what data-parallel
 * ranks share dp_train_mpi.c's (dp_train_impl.h). */
#include "dp_train.h"
#include "dp_alloc.h"
#include "dp_train_impl.h"
#include "dp_runtime.h"
#include "dp_place.h"
#include "dp_search.h"
#include "dp_json.h"
#include "dp_h5io.h"

#include <jansson.h>
#include <assert.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

/* ---- the trainer ---- */

double dp_train_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void bound_free(dp_train_bound *b)
{
    dp_agent_free(b->ag);
    dp_env_free(b->env);
    free(b->topo_pos);
    free(b->sil_ms); free(b->sil_ops); free(b->sil_dev);
    free(b->hint);
}

/* Make bd[i] the graph in hand: the per-graph fields of the one in hand go back to its record,
 * bd[i]'s become the trainer's. */
void dp_train_graph_select(dp_train *tr, int i)
{
    dp_train_bound *o = &tr->bd[tr->cur];
    o->need_prepare = tr->need_prepare;
    o->oracle = tr->oracle;
    o->sil_n = tr->sil_n; o->sil_cap = tr->sil_cap;
    o->sil_ms = tr->sil_ms; o->sil_ops = tr->sil_ops; o->sil_dev = tr->sil_dev;
    dp_train_graph_load(tr, i);
}

/* Make bd[i] the graph in hand without saving the one in hand (the first selection). */
void dp_train_graph_load(dp_train *tr, int i)
{
    dp_train_bound *b = &tr->bd[i];
    tr->cur = i;
    tr->g = b->g;
    tr->c = b->c;
    tr->ag = b->ag;
    tr->env = b->env;
    tr->oracle = b->oracle;
    tr->n = b->n;
    tr->D = b->D;
    tr->topo_pos = b->topo_pos;
    tr->need_prepare = b->need_prepare;
    tr->sil_n = b->sil_n; tr->sil_cap = b->sil_cap;
    tr->sil_ms = b->sil_ms; tr->sil_ops = b->sil_ops; tr->sil_dev = b->sil_dev;
}

/* Every bound graph's forward is stale (the shared parameters changed). */
void dp_train_params_changed(dp_train *tr)
{
    tr->need_prepare = 1;
    for (int i = 0; i < tr->n_bd; i++) tr->bd[i].need_prepare = 1;
}

void dp_train_free(dp_train *tr)
{
    if (!tr) return;
    if (tr->bd) {
        dp_train_graph_select(tr, tr->cur); /* the per-graph fields in hand back to their record */
        /* the graphs bound to bd[0]'s parameters go first */
        for (int i = tr->n_bd - 1; i >= 0; i--) bound_free(&tr->bd[i]);
        free(tr->bd);
    }
    if (tr->master) gsl_rng_free(tr->master);
    if (tr->ep) gsl_rng_free(tr->ep);
    free(tr->best_assign);
    free(tr->forced_assign);
    free(tr->scratch_dev);
    dp_runtime_select_free(&tr->sel);
    free(tr->sel_a); free(tr->sel_v); free(tr->sel_nr); free(tr->sel_lpa); free(tr->sel_nmark); free(tr->sel_marka);
    free(tr->rs_ops); free(tr->rs_pos); free(tr->rs_at); free(tr->rs_z); free(tr->rs_p); free(tr->rs_lp); free(tr->rs_mark);
    free(tr->sel_H); free(tr->sel_key); free(tr->plc_p); free(tr->plc_lp); free(tr->plc_z); free(tr->plc_mark); free(tr->plc_a);
    free(tr->plc_H); free(tr->zbuf); free(tr->gbuf);
    dp_runtime_traj_free(&tr->traj);
    free(tr);
}

/* Size the episode records for graphs of up to n ops on up to D devices. */
static int ensure_records(dp_train *tr, int n_ops, int n_dev)
{
    if (n_ops <= tr->max_n && n_dev <= tr->max_D && tr->sel_v) return DP_OK;
    const size_t n = (size_t)(n_ops > tr->max_n ? n_ops : tr->max_n), D = (size_t)(n_dev > tr->max_D ? n_dev : tr->max_D);
#define GROW(p, count) do { void *q_ = dp_alloc_realloc((p), (count) * sizeof *(p)); if (!q_) return DP_ENOMEM; (p) = q_; } while (0)
    GROW(tr->sel_a, n);
    GROW(tr->sel_v, n);
    GROW(tr->sel_nr, n);
    GROW(tr->sel_lpa, n);
    GROW(tr->sel_nmark, n);
    GROW(tr->sel_marka, n);
    GROW(tr->rs_ops, n);
    GROW(tr->rs_pos, n);
    GROW(tr->rs_at, n);
    GROW(tr->rs_z, n);
    GROW(tr->rs_p, n);
    GROW(tr->rs_lp, n);
    GROW(tr->rs_mark, n);
    GROW(tr->sel_H, n);
    GROW(tr->sel_key, n);
    GROW(tr->plc_p, n * D);
    GROW(tr->plc_lp, n * D);
    GROW(tr->plc_z, n * D);
    GROW(tr->plc_mark, n * D);
    GROW(tr->plc_a, n);
    GROW(tr->forced_assign, n);
    GROW(tr->scratch_dev, n);
    GROW(tr->plc_H, n);
    GROW(tr->zbuf, n > D ? n : D);
    GROW(tr->gbuf, n > D ? n : D);
#undef GROW
    tr->max_n = (int)n;
    tr->max_D = (int)D;
    return DP_OK;
}

/* network.features "hint": b's graph's best instant placement (the best of round-robin, cp,
 * HEFT, CPOP, PEFT and ETF under b's oracle, ties to the first: dp_search_start's "best-instant",
 * one simulation each, counted in tr->sims) into b->hint, which b's environment reads */
static int bind_hint(dp_train *tr, dp_train_bound *b, dp_error *err)
{
    if (!(b->hint = dp_alloc_malloc_n((size_t)b->n, sizeof(int))))
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the hint placement", b->g->name);
    long spent = 0;
    const int rc = dp_search_best_instant(b->g, b->c, &b->oracle, tr->cfg.seed, b->hint, &spent, err);
    if (rc != DP_OK) return rc;
    tr->sims += spent;
    dp_env_set_hint(b->env, b->hint);
    return DP_OK;
}

/* Bind g to the trainer: its agent (bd[0]'s allocates the model, later ones share it), its
 * environment in the configured state on its oracle's engine. */
static int bind_graph(dp_train *tr, const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, int validation,
                      dp_error *err)
{
    dp_train_bound *nb = dp_alloc_realloc(tr->bd, (size_t)(tr->n_bd + 1) * sizeof *nb);
    if (!nb) return dp_error_set(err, DP_ENOMEM, "out of memory for the trainer");
    tr->bd = nb;
    dp_train_bound *b = &tr->bd[tr->n_bd];
    memset(b, 0, sizeof *b);
    b->g = g;
    b->c = c;
    b->oracle = *oracle;
    b->n = g->n_ops;
    b->D = c->n_devices;
    b->validation = validation;
    b->need_prepare = 1;
    if (tr->n_bd == 0) {
        dp_agent_arch arch = {.doppler = tr->cfg.arch, .placeto = tr->cfg.placeto, .gdp = tr->cfg.gdp};
        b->ag = dp_agent_alloc(tr->cfg.method, g, c, &arch, err);
    } else {
        b->ag = dp_agent_bind(tr->bd[0].ag, g, c, err);
    }
    int rc = DP_OK;
    if (!b->ag) rc = err ? err->code : DP_ENOMEM;
    if (rc == DP_OK && !(b->env = dp_env_alloc(g, c, err))) rc = err ? err->code : DP_ENOMEM;
    if (rc == DP_OK && tr->cfg.state == DP_ENV_STATE_ENGINE &&
        dp_env_set_state(b->env, DP_ENV_STATE_ENGINE, oracle->state_engine ? oracle->state_engine : oracle->engine, err) != DP_OK) {
        dp_error_prefix(err, "config \"state\": \"engine\" needs the simulator's oracle (dp_engine_oracle)");
        rc = DP_EINVAL;
    }
    if (rc == DP_OK && tr->cfg.method == DP_AGENT_DOPPLER && tr->cfg.arch.device_features == DP_ENV_FEATURES_HINT)
        rc = bind_hint(tr, b, err);
    if (rc == DP_OK && !(b->topo_pos = dp_alloc_malloc_n((size_t)b->n + 1, sizeof(int))))
        rc = dp_error_set(err, DP_ENOMEM, "out of memory for the trainer");
    if (rc == DP_OK) {
        for (int k = 0; k < g->n_ops; k++) b->topo_pos[g->topo[k]] = k;
        if (ensure_records(tr, b->n, b->D) != DP_OK) rc = dp_error_set(err, DP_ENOMEM, "out of memory for the trainer");
    }
    if (rc != DP_OK) {
        bound_free(b);
        return rc;
    }
    tr->n_bd++;
    if (!validation) tr->n_train++;
    return DP_OK;
}

static dp_train *train_alloc(const dp_graph *g, const dp_cost *c, const dp_train_config *cfg, const dp_oracle *oracle,
                             int init, dp_error *err);

dp_train *dp_train_alloc(const dp_graph *g, const dp_cost *c, const dp_train_config *cfg, const dp_oracle *oracle,
                              dp_error *err)
{
    return train_alloc(g, c, cfg, oracle, 1, err);
}

dp_train *dp_train_alloc_from(const dp_graph *g, const dp_cost *c, const dp_train_config *cfg, const dp_oracle *oracle,
                              const char *checkpoint, int final, dp_error *err)
{
    dp_train *tr = train_alloc(g, c, cfg, oracle, 0, err);
    if (tr && dp_train_init_from_params(tr, checkpoint, final, err) != DP_OK) {
        dp_train_free(tr);
        return NULL;
    }
    return tr;
}

/* init 0: the parameters stay zero (the caller loads them) */
static dp_train *train_alloc(const dp_graph *g, const dp_cost *c, const dp_train_config *cfg, const dp_oracle *oracle,
                             int init, dp_error *err)
{
    if (!oracle) {
        dp_error_set(err, DP_EINVAL, "trainer: a cost oracle is required (dp_engine_oracle of the machine's engine)");
        return NULL;
    }
    dp_train *tr = dp_alloc_calloc(1, sizeof *tr);
    if (!tr) goto nomem;
    tr->cfg = *cfg;
    if (tr->cfg.sel_topological) tr->cfg.update_sel = 0; /* SEL takes no decision to learn from */
    if (tr->cfg.sel_teacher_etf && (tr->cfg.method != DP_AGENT_DOPPLER || !tr->cfg.arch.sel_dynamic)) {
        dp_error_set(err, DP_EINVAL, "config \"sel_teacher\": \"etf\" needs DOPPLER with \"network\": {\"sel_dynamic\": true} "
                     "(its marks are the dynamic SEL's earliest-start feature)");
        free(tr);
        return NULL;
    }
    for (int i = 0; i < DP_TRAIN_N_STAGES; i++)
        if (tr->cfg.stage[i].batch < 1) tr->cfg.stage[i].batch = 1;
    if (bind_graph(tr, g, c, oracle, 0, err) != DP_OK) goto fail;
    dp_train_graph_load(tr, 0);
    if (!dp_agent_has_sel(tr->ag)) {
        tr->cfg.sel_topological = 1; /* no SEL: the topological order (refused as a key) */
        tr->cfg.update_sel = 0;
    }
    tr->blk[0] = dp_agent_sel_params(tr->ag);
    tr->blk[1] = dp_agent_plc_params(tr->ag);
    tr->master = gsl_rng_alloc(gsl_rng_mt19937);
    tr->ep = gsl_rng_alloc(gsl_rng_mt19937);
    if (!tr->master || !tr->ep) goto nomem;
    gsl_rng_set(tr->master, (unsigned long)cfg->seed);
    tr->best_assign = dp_alloc_calloc_n((size_t)tr->n + 1, sizeof(int));
    if (!tr->best_assign) goto nomem;
    /* zeroed: a checkpoint's best parameters are read tensor by tensor, and the gaps between
     * tensors in the flat array must not become parameters of uninitialised memory */
    if (dp_runtime_select_init(&tr->sel, tr->blk[0], tr->blk[1], err) != DP_OK) goto fail;
    tr->sel.last_score = 0; /* progress reports 0 before the first greedy placement */
    tr->t_origin = dp_train_now_s();
    tr->stage_seconds0 = 0;
    if (init && dp_agent_init(tr->ag, tr->master) != DP_OK) goto nomem;
    tr->stage = -1;
    tr->best = INFINITY;
    tr->need_prepare = 1;
    tr->force_first_dev = -1;
    dp_h5io_run_id_new(tr->run_id, sizeof tr->run_id);
    return tr;
nomem:
    dp_error_set(err, DP_ENOMEM, "out of memory for the trainer");
fail:
    dp_train_free(tr);
    return NULL;
}

/* The critical-path heuristic's makespan of the graph in hand under the environment's state
 * (one simulation), or with config "reference": "best-instant" the best instant method's (six
 * simulations): the unit of its makespans when several graphs are bound. */
static int reference_makespan(dp_train *tr, double *ms, dp_error *err)
{
    if (tr->cfg.reference_best_instant) {
        int *a = dp_alloc_malloc_n(tr->n, sizeof(int));
        if (!a) return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the reference placement", tr->g->name);
        long spent = 0;
        int rc = dp_search_best_instant(tr->g, tr->c, &tr->oracle, tr->cfg.seed, a, &spent, err);
        if (rc == DP_OK) rc = dp_oracle_cost(&tr->oracle, a, ms, err);
        free(a);
        tr->sims += spent; /* the best one's cost is one of those */
        if (rc == DP_OK && !(*ms > 0)) rc = dp_error_set(err, DP_EINVAL, "%s: the best instant placement's makespan is %g, not "
                                                         "positive: no unit for its makespans", tr->g->name, *ms);
        return rc;
    }
    dp_env *env = tr->env;
    dp_env_reset(env);
    for (int t = 0; t < tr->n; t++) {
        const int v = dp_env_cp_select(env);
        const int rc = dp_env_step(env, v, dp_env_cp_place(env, v), err);
        if (rc != DP_OK) return rc;
    }
    tr->sims++;
    int rc = dp_oracle_cost(&tr->oracle, env->assignment, ms, err);
    if (rc == DP_OK && !(*ms > 0)) rc = dp_error_set(err, DP_EINVAL, "%s: the critical-path placement's makespan is %g, not positive: "
                                                     "no unit for its makespans", tr->g->name, *ms);
    return rc;
}

int dp_train_add_graph(dp_train *tr, const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, int validation,
                         dp_error *err)
{
    if (!oracle) return dp_error_set(err, DP_EINVAL, "trainer: a cost oracle is required for %s", g->name);
    if (tr->stage >= 0) return dp_error_set(err, DP_EINVAL, "trainer: graphs are added before training starts");
    const int keep = tr->cur;
    int rc = bind_graph(tr, g, c, oracle, validation, err);
    if (rc != DP_OK) return rc;
    /* with several graphs every makespan is in units of its graph's reference: the first graph's
     * too (computed once, when the second one arrives) */
    tr->multi = 1;
    for (int i = 0; i < tr->n_bd && rc == DP_OK; i++) {
        if (tr->bd[i].ref > 0) continue;
        dp_train_graph_select(tr, i);
        double ms;
        if ((rc = reference_makespan(tr, &ms, err)) == DP_OK) tr->bd[i].ref = ms;
    }
    dp_train_graph_select(tr, keep);
    return rc;
}

int dp_train_n_graphs(const dp_train *tr, int *n_train, int *n_validation)
{
    if (n_train) *n_train = tr->n_train;
    if (n_validation) *n_validation = tr->n_bd - tr->n_train;
    return tr->n_bd;
}

void dp_train_set_oracle(dp_train *tr, const dp_oracle *o)
{
    if (o) tr->oracle = *o;
}

dp_doppler *dp_train_networks(dp_train *tr)
{
    return dp_agent_doppler(tr->ag);
}

dp_nn_params *dp_train_sel_params(dp_train *tr)
{
    return tr->blk[0];
}

dp_nn_params *dp_train_plc_params(dp_train *tr)
{
    return tr->blk[1];
}

int dp_train_current_stage(const dp_train *tr)
{
    return tr->stage;
}

long dp_train_episode(const dp_train *tr)
{
    return tr->episode;
}

double dp_train_seconds(const dp_train *tr)
{
    return dp_train_now_s() - tr->t_origin;
}

static inline int close_enough(double a, double b)
{
    return a == b || fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

static int argmax(const float *z, int k)
{
    int best = 0;
    for (int i = 1; i < k; i++)
        if (z[i] > z[best]) best = i;
    return best;
}

static int sample(const float *p, int k, gsl_rng *r)
{
    double u = gsl_rng_uniform(r), s = 0;
    for (int i = 0; i < k; i++) {
        s += p[i];
        if (u < s) return i;
    }
    return k - 1;
}

static int choose(const float *p, const float *z, int k, int mode, double eps, gsl_rng *r)
{
    if (mode == DP_TRAIN_MODE_SAMPLE) return sample(p, k, r);
    if (mode == DP_TRAIN_MODE_GREEDY) return argmax(z, k);
    if (eps > 0 && gsl_rng_uniform(r) < eps) return (int)gsl_rng_uniform_int(r, (unsigned long)k);
    return mode == DP_TRAIN_MODE_MIXTURE ? sample(p, k, r) : argmax(z, k);
}

int dp_train_explore(const float *p, const float *z, int n, int exploration, double eps, gsl_rng *r)
{
    return choose(p, z, n, exploration == DP_TRAIN_EXPLORE_MIXTURE ? DP_TRAIN_MODE_MIXTURE : DP_TRAIN_MODE_EPSILON, eps, r);
}

double dp_train_behaviour_prob(const float *p, const float *z, int n, int a, int exploration, double eps)
{
    if (exploration == DP_TRAIN_EXPLORE_MIXTURE) return (1 - eps) * p[a] + eps / n;
    return (1 - eps) * (a == argmax(z, n)) + eps / n;
}

void dp_train_pg_dlogits(float *dz, const float *p, int n, int a, double adv, int exploration, double eps)
{
    /* d log mu(a) / dz_j = (1 - eps) p_a (delta_aj - p_j) / mu(a) for the mixture; the authors
     * use d log pi(a) / dz_j = delta_aj - p_j whatever drew a */
    double w = 1;
    if (exploration == DP_TRAIN_EXPLORE_MIXTURE && eps > 0) {
        double pa = (1 - eps) * p[a];
        w = pa / (pa + eps / n);
    }
    for (int j = 0; j < n; j++) dz[j] += (float)(-adv * w * ((j == a) - (double)p[j]));
}

/* The critical-path heuristic's devices for op v at step t (earliest estimated start) into
 * plc_mark row t: the PLC targets of imitation and the agreement statistics. DOPPLER's device
 * features already hold the estimates (column 4); other agents ask the environment. */
static void heuristic_devices(dp_train *tr, int t, int v)
{
    const int D = tr->D;
    unsigned char *mark = tr->plc_mark + (size_t)t * D;
    const dp_doppler *dd = dp_agent_doppler(tr->ag);
    if (dd && dd->a.device_features == DP_ENV_FEATURES_HINT) {
        /* the hint's device: the best instant placement's */
        for (int k = 0; k < D; k++) mark[k] = dd->devfeat[(size_t)k * dd->FE + DP_ENV_HINT_COLUMN] != 0;
        return;
    }
    if (!dd) {
        dp_env_cp_place_all(tr->env, v, mark);
        return;
    }
    double mn = INFINITY;
    for (int k = 0; k < D; k++) mn = fmin(mn, dd->devfeat[(size_t)k * dd->FE + 4]);
    for (int k = 0; k < D; k++) mark[k] = close_enough(dd->devfeat[(size_t)k * dd->FE + 4], mn);
}

/* The networks when SEL has per-step terms (network.sel_dynamic, and SEL choosing: not the
 * topological-order ablation), NULL otherwise: the rollout and the episode's gradient agree. */
static dp_doppler *dynamic_sel(dp_train *tr)
{
    dp_doppler *dd = dp_agent_doppler(tr->ag);
    return dd && dd->a.sel_dynamic && !tr->cfg.sel_topological ? dd : NULL;
}

/* ETF's choices among step t's nr ready ops (config "sel_teacher": "etf"): those of earliest
 * start over the devices, feature 0 of the dynamic SEL (its start minus the ready set's least)
 * being 0, into marks; returns how many. */
static int etf_marks(const dp_doppler *dd, int t, int nr, unsigned char *marks)
{
    const float *f = dp_doppler_sel_dynamic_features(dd, t);
    int k = 0;
    for (int i = 0; i < nr; i++) k += marks[i] = f[(size_t)i * DP_DOPPLER_SEL_DYN_FEATURES] == 0.0f;
    return k;
}

/* One rollout with the prepared networks; records every step. */
int dp_train_rollout(dp_train *tr, int mode, double eps, gsl_rng *r, double *ms, double agree[2], dp_error *err)
{
    dp_agent *ag = tr->ag;
    dp_env *env = tr->env;
    const int D = tr->D;
    if (tr->need_prepare) {
        dp_agent_prepare(ag);
        tr->need_prepare = 0;
    }
    const float *score = dp_agent_sel_scores(ag); /* NULL: no SEL, topological order */
    /* the dynamic SEL (network.sel_dynamic): per-step terms on top of the static scores */
    dp_doppler *dyn = dynamic_sel(tr);
    dp_agent_episode_begin(ag);
    /* inference (dp_train_set_greedy_heap): a greedy rollout of static SEL scores that reports no
     * agreement keeps the ready set as a max-heap on (score, -id) (dp_env_set_ready_key), whose
     * top is argmax's choice over the id-ordered set (the first of equal scores): the same
     * placement in O(log ready) a step instead of O(ready); its SEL records (log-probabilities,
     * entropies, heuristic marks) are not kept. Any other rollout orders the set by op id. */
    int heap = tr->greedy_heap && mode == DP_TRAIN_MODE_GREEDY && !agree && score && !dyn && !tr->cfg.sel_topological;
    for (int v = 0; heap && v < tr->n; v++) {
        if (isnan(score[v])) heap = 0; /* argmax's scan and a heap disagree on NaN */
        tr->sel_key[v] = score[v];
    }
    if (heap) dp_env_set_ready_key(env, tr->sel_key);
    else if (env->ready_order != DP_ENV_READY_BY_ID) dp_env_set_ready_order(env, DP_ENV_READY_BY_ID);
    dp_env_reset(env);
    int sel_ok = 0, plc_ok = 0;
    tr->sel_marks_chosen = 0;
    for (int t = 0; t < tr->n; t++) {
        const int nr = env->n_ready;
        int v;
        if (heap) {
            v = env->ready[0];
            tr->sel_a[t] = -1;
            tr->sel_v[t] = v;
            tr->sel_nr[t] = nr;
            tr->sel_lpa[t] = NAN;
            tr->sel_H[t] = NAN;
            tr->sel_nmark[t] = 0;
            tr->sel_marka[t] = 0;
        } else {
            int *ops = tr->rs_ops;
            float *z = tr->rs_z, *p = tr->rs_p, *lp = tr->rs_lp;
            for (int i = 0; i < nr; i++) {
                ops[i] = env->ready[i];
                z[i] = score ? score[ops[i]] : 0.0f;
                /* episode_grad rebuilds the ready sets in increasing op id: that is what it must be */
                if (i > 0 && ops[i] <= ops[i - 1])
                    return dp_error_set(err, DP_EINVAL, "internal error: the ready set is not in increasing op id");
            }
            if (dyn && dp_doppler_sel_dynamic_scores(dyn, env, ops, nr, z) != DP_OK)
                return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the dynamic SEL's features", tr->g->name);
            tr->sel_H[t] = dp_nn_softmax_forward(p, lp, z, nr);
            const int nmark = dyn && tr->cfg.sel_teacher_etf ? etf_marks(dyn, t, nr, tr->rs_mark)
                                                              : dp_env_cp_select_all(env, tr->rs_mark);
            int a;
            if (mode == DP_TRAIN_MODE_FORCED) {
                /* teacher forcing: the recorded op of this step (ready: the record is a rollout) */
                a = 0;
                while (a < nr - 1 && ops[a] != tr->forced_ops[t]) a++;
            } else if (tr->cfg.sel_topological) {
                /* PLC-only ablation: the ready op earliest in the topological order */
                a = 0;
                for (int i = 1; i < nr; i++)
                    if (tr->topo_pos[ops[i]] < tr->topo_pos[ops[a]]) a = i;
            } else {
                a = choose(p, z, nr, mode == DP_TRAIN_MODE_ASSIGN ? DP_TRAIN_MODE_GREEDY : mode, eps, r);
            }
            tr->sel_a[t] = a;
            tr->sel_v[t] = ops[a];
            tr->sel_nr[t] = nr;
            tr->sel_lpa[t] = lp[a];
            tr->sel_nmark[t] = nmark;
            tr->sel_marka[t] = tr->rs_mark[a];
            sel_ok += tr->rs_mark[a];
            v = ops[a];
        }
        float *pz = tr->plc_z + (size_t)t * D, *pp = tr->plc_p + (size_t)t * D, *plp = tr->plc_lp + (size_t)t * D;
        dp_agent_plc_logits(ag, env, t, v, pz);
        tr->plc_H[t] = dp_nn_softmax_forward(pp, plp, pz, D);
        heuristic_devices(tr, t, v);
        int k;
        if (mode == DP_TRAIN_MODE_FORCED) k = tr->forced_dev[t];
        else if (mode == DP_TRAIN_MODE_ASSIGN) {
            /* devices the network cannot tell apart here (bitwise equal logits) on a machine of
             * interchangeable devices: greedy takes the lowest, so the target's names of the two
             * are swapped for the ops not yet placed (the placement may change; distillation
             * checks the makespan by simulation) */
            k = tr->forced_assign[v];
            if (tr->c->homogeneous && !tr->assign_exact)
                for (int j = 0; j < k; j++)
                    if (pz[j] == pz[k]) {
                        for (int u = 0; u < tr->n; u++)
                            if (env->assignment[u] < 0)
                                tr->forced_assign[u] = tr->forced_assign[u] == k ? j : tr->forced_assign[u] == j ? k : tr->forced_assign[u];
                        k = j;
                        break;
                    }
        }
        else if (t == 0 && tr->force_first_dev >= 0) k = tr->force_first_dev % D;
        else k = choose(pp, pz, D, mode, eps, r);
        tr->plc_a[t] = k;
        plc_ok += tr->plc_mark[(size_t)t * D + k];
        dp_agent_plc_commit(ag, t, v, k);
        int rc = dp_env_step(env, v, k, err);
        if (rc != DP_OK) return rc;
    }
    if (agree) {
        agree[0] = (double)sel_ok / tr->n;
        agree[1] = (double)plc_ok / tr->n;
    }
    tr->forced0 = mode != DP_TRAIN_MODE_FORCED && mode != DP_TRAIN_MODE_ASSIGN && tr->force_first_dev >= 0;
    if (tr->skip_oracle || mode == DP_TRAIN_MODE_FORCED || mode == DP_TRAIN_MODE_ASSIGN) {
        *ms = NAN; /* a replay: the caller knows the makespan */
        return DP_OK;
    }
    tr->sims++;
    return dp_oracle_cost(&tr->oracle, env->assignment, ms, err);
}

/* the position of the first element >= x in the increasing list a[0..m) (m when none) */
static int lower_bound(const int *a, int m, int x)
{
    int lo = 0, hi = m;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* remove x from the increasing list a[0..*m) when it is there; insert x */
static void sorted_remove(int *a, int *m, int x)
{
    const int lo = lower_bound(a, *m, x);
    if (lo < *m && a[lo] == x) {
        memmove(a + lo, a + lo + 1, (size_t)(*m - lo - 1) * sizeof *a);
        (*m)--;
    }
}

static void sorted_insert(int *a, int *m, int x)
{
    const int lo = lower_bound(a, *m, x);
    memmove(a + lo + 1, a + lo, (size_t)(*m - lo) * sizeof *a);
    a[lo] = x;
    (*m)++;
}

/* dL/dlogits of the recorded episode (loss in dp_train.h), scaled, into the networks. The SEL
 * part walks the steps backwards rebuilding each ready set from the next one: R_t = R_{t+1}
 * without the ops that placing v_t made ready, with v_t (in increasing op id, as the
 * environment keeps it); its softmax is recomputed from the scores the rollout used, unchanged
 * since (the parameters change only in update), with the dynamic SEL's terms from the features
 * the rollout recorded for step t (dp_doppler_sel_dynamic_replay), whose gradient goes straight
 * into the SEL block. DP_OK, or DP_EINVAL when a rebuilt set is not
 * the rollout's (an internal error). */
int dp_train_episode_grad(dp_train *tr, const dp_train_stage *st, double eps, double r, double scale)
{
    dp_agent *ag = tr->ag;
    const int D = tr->D, T = tr->n;
    const double gam = dp_agent_one_shot(ag) ? 1.0 : tr->cfg.gamma;
    float *dlp = tr->gbuf, *dz = tr->zbuf;
    const dp_graph *g = tr->env->g;
    const float *score = dp_agent_sel_scores(ag);
    dp_doppler *dyn = dynamic_sel(tr); /* the dynamic SEL, as in the rollout */
    int *cur = tr->rs_ops, m = 0;
    if (tr->cfg.update_sel) {
        for (int t = 0; t < T; t++) tr->rs_pos[tr->sel_v[t]] = t;
        for (int w = 0; w < T; w++) {
            int at = -1;
            for (int i = g->pred_ptr[w]; i < g->pred_ptr[w + 1]; i++) {
                const int u = g->edge_src[g->pred_edge[i]];
                if (tr->rs_pos[u] > at) at = tr->rs_pos[u];
            }
            tr->rs_at[w] = at;
        }
    }
    double R = r; /* R_t = gamma^(T-1-t) r, built from the last step back */
    for (int t = T - 1; t >= 0; t--, R *= gam) {
        if (tr->cfg.update_sel) {
            const int v = tr->sel_v[t];
            for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
                if (tr->rs_at[g->edge_dst[e]] == t) sorted_remove(cur, &m, g->edge_dst[e]);
            sorted_insert(cur, &m, v);
            if (m != tr->sel_nr[t] || cur[tr->sel_a[t]] != v)
                return DP_EINVAL;
            const int nr = m;
            float *z = tr->rs_z, *p = tr->rs_p, *lp = tr->rs_lp;
            unsigned char *mark = tr->rs_mark;
            for (int i = 0; i < nr; i++) z[i] = score ? score[cur[i]] : 0.0f;
            if (dyn) dp_doppler_sel_dynamic_replay(dyn, t, nr, z);
            dp_nn_softmax_forward(p, lp, z, nr);
            if (tr->sel_marks_chosen)
                for (int i = 0; i < nr; i++) mark[i] = i == tr->sel_a[t];
            else if (dyn && tr->cfg.sel_teacher_etf)
                etf_marks(dyn, t, nr, mark);
            else
                dp_env_cp_select_marks(tr->env, cur, nr, mark);
            for (int i = 0; i < nr; i++) {
                dlp[i] = mark[i] ? (float)(-st->il_weight) : 0.0f;
                dz[i] = 0;
            }
            dp_nn_log_softmax_backward(dz, dlp, p, nr);
            if (st->pg_weight != 0) dp_train_pg_dlogits(dz, p, nr, tr->sel_a[t], st->pg_weight * R, st->exploration, eps);
            if (st->entropy_weight != 0) dp_nn_entropy_backward(dz, (float)(-st->entropy_weight), p, lp, tr->sel_H[t], nr);
            for (int i = 0; i < nr; i++) dp_agent_sel_dscore(ag, cur[i], (float)(scale * dz[i]));
            if (dyn) {
                for (int i = 0; i < nr; i++) dz[i] = (float)(scale * dz[i]);
                dp_doppler_sel_dynamic_backward(dyn, t, nr, dz);
            }
        }
        const float *pp = tr->plc_p + (size_t)t * D, *plp = tr->plc_lp + (size_t)t * D;
        for (int k = 0; k < D; k++) {
            dlp[k] = tr->plc_mark[(size_t)t * D + k] ? (float)(-st->il_weight) : 0.0f;
            dz[k] = 0;
        }
        dp_nn_log_softmax_backward(dz, dlp, pp, D);
        if (st->pg_weight != 0) dp_train_pg_dlogits(dz, pp, D, tr->plc_a[t], st->pg_weight * R, st->exploration, eps);
        if (st->entropy_weight != 0) dp_nn_entropy_backward(dz, (float)(-st->entropy_weight), pp, plp, tr->plc_H[t], D);
        const int plc_on = tr->cfg.update_plc && !(t == 0 && tr->forced0);
        for (int k = 0; k < D; k++) dz[k] = plc_on ? (float)(scale * dz[k]) : 0.0f;
        dp_agent_plc_dlogits(ag, t, dz);
    }
    if (tr->cfg.update_plc) dp_agent_episode_backward(ag, tr->env);
    return DP_OK;
}

void dp_train_update(dp_train *tr, double lr)
{
    const dp_train_config *c = &tr->cfg;
    dp_agent_backward(tr->ag);
    const int on[2] = {c->update_sel, c->update_plc};
    for (int b = 0; b < 2; b++) {
        dp_nn_params *p = tr->blk[b];
        if (!on[b] || p->n == 0) continue;
        if (c->grad_clip > 0) dp_nn_clip_grad_norm(p, c->grad_clip);
        dp_nn_adam_step(p, (float)lr, (float)c->adam_beta1, (float)c->adam_beta2, (float)c->adam_eps, (float)c->weight_decay);
    }
    dp_train_params_changed(tr);
}

/* ---- placements, agreement and timing ---- */

void dp_train_agreement_get(const dp_train *tr, dp_train_agreement *a)
{
    memset(a, 0, sizeof *a);
    a->steps = tr->n;
    for (int t = 0; t < tr->n; t++) {
        const unsigned char *pm = tr->plc_mark + (size_t)t * tr->D;
        int best[2] = {tr->sel_nmark[t], 0}, hit[2] = {tr->sel_marka[t], pm[tr->plc_a[t]]};
        for (int k = 0; k < tr->D; k++) best[1] += pm[k];
        for (int i = 0; i < 2; i++) {
            if (best[i] > 1) {
                a->tied[i]++;
                a->in_tie[i] += hit[i];
            } else {
                a->unique[i] += hit[i];
            }
        }
    }
}

long dp_train_prefix_simulations(const dp_train *tr)
{
    return tr->env ? tr->env->n_resim : 0;
}

void dp_train_set_greedy_heap(dp_train *tr, int on) { tr->greedy_heap = on != 0; }

int dp_train_place(dp_train *tr, int samples, uint64_t seed, int *assignment, double *makespan, double *agree,
                     dp_error *err)
{
    if (tr->cur != 0) dp_train_graph_select(tr, 0);
    double ms;
    int rc = dp_train_rollout(tr, DP_TRAIN_MODE_GREEDY, 0, NULL, &ms, agree, err);
    /* with samples, a placement over a resource limit (memory under the error policy) is a
     * candidate of infinite cost, as in the searches: the greedy one over it ended the run,
     * though samples fitted (a review) */
    if (samples > 0) rc = dp_search_move_over_limit(rc, &ms);
    if (rc != DP_OK) return rc;
    /* the greedy placement, simulated already, is the first candidate: best of K is never
     * worse than greedy (it kept the samples' best only until 2026-12-06) */
    memcpy(assignment, tr->env->assignment, (size_t)tr->n * sizeof(int));
    *makespan = ms;
    if (samples <= 0) return DP_OK;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return dp_error_set(err, DP_ENOMEM, "out of memory");
    gsl_rng_set(r, (unsigned long)seed);
    double best = ms;
    for (int s = 0; s < samples; s++) {
        rc = dp_search_move_over_limit(dp_train_rollout(tr, DP_TRAIN_MODE_SAMPLE, 0, r, &ms, NULL, err), &ms);
        if (rc != DP_OK) break;
        if (ms < best) {
            best = ms;
            memcpy(assignment, tr->env->assignment, (size_t)tr->n * sizeof(int));
        }
    }
    gsl_rng_free(r);
    *makespan = best;
    if (rc == DP_OK && isinf(best))
        rc = dp_error_set(err, DP_ERANGE, "%s: the greedy placement and each of the %d sampled ones exceed a resource limit "
                          "(memory capacity under the error policy)", tr->g->name, samples);
    return rc;
}

static double cpu_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int dp_train_bench_batch(dp_train *tr, int reps, int batch, double wall_s[2], double cpu_s[2], dp_error *err)
{
    if (reps < 1) reps = 1;
    if (batch < 1) batch = 1;
    const int batches = (reps + batch - 1) / batch;
    double ms;
    int rc = DP_OK;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return dp_error_set(err, DP_ENOMEM, "out of memory");
    gsl_rng_set(r, 7);
    /* inference: the per-episode forward (prepare) and a greedy rollout with the oracle */
    double t0 = dp_train_now_s(), c0 = cpu_now_s();
    for (int i = 0; i < reps && rc == DP_OK; i++) {
        tr->need_prepare = 1;
        rc = dp_train_rollout(tr, DP_TRAIN_MODE_GREEDY, 0, NULL, &ms, NULL, err);
    }
    wall_s[0] = (dp_train_now_s() - t0) / reps;
    cpu_s[0] = (cpu_now_s() - c0) / reps;
    /* training as dp_train_run does it: per batch one forward of the per-op parts (in the
     * first rollout), `batch` exploratory rollouts with their episode backward, one backward
     * and one Adam step per network */
    dp_train_stage st = tr->cfg.stage[DP_TRAIN_STAGE_IL];
    st.pg_weight = 1;
    st.exploration = DP_TRAIN_EXPLORE_MIXTURE;
    t0 = dp_train_now_s();
    c0 = cpu_now_s();
    for (int b = 0; b < batches && rc == DP_OK; b++) {
        dp_agent_zero_grad(tr->ag);
        for (int i = 0; i < batch && rc == DP_OK; i++) {
            if ((rc = dp_train_rollout(tr, DP_TRAIN_MODE_MIXTURE, 0.1, r, &ms, NULL, err)) != DP_OK) break;
            if (dp_train_episode_grad(tr, &st, 0.1, 0.1, 1.0 / batch) != DP_OK)
                rc = dp_error_set(err, DP_EINVAL, "internal error: a rebuilt ready set differs from the rollout's");
        }
        if (rc == DP_OK) dp_train_update(tr, 1e-6);
    }
    wall_s[1] = (dp_train_now_s() - t0) / ((double)batch * batches);
    cpu_s[1] = (cpu_now_s() - c0) / ((double)batch * batches);
    gsl_rng_free(r);
    return rc;
}

int dp_train_bench(dp_train *tr, int reps, double *infer_s, double *train_s, dp_error *err)
{
    double w[2], c[2];
    int rc = dp_train_bench_batch(tr, reps, 1, w, c, err);
    if (rc == DP_OK) {
        *infer_s = w[0];
        *train_s = w[1];
    }
    return rc;
}

long dp_train_simulations(const dp_train *tr)
{
    return tr->sims;
}

int dp_train_policy_probs(dp_train *tr, float *probs, dp_error *err)
{
    if (tr->cur != 0) dp_train_graph_select(tr, 0);
    double ms;
    int rc = dp_train_rollout(tr, DP_TRAIN_MODE_GREEDY, 0, NULL, &ms, NULL, err);
    if (rc != DP_OK) return rc;
    const int D = tr->D;
    for (int t = 0; t < tr->n; t++) {
        const int v = tr->sel_v[t];
        memcpy(probs + (size_t)v * D, tr->plc_p + (size_t)t * D, (size_t)D * sizeof(float));
    }
    return DP_OK;
}
