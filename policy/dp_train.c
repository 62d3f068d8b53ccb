/* dp_train.c: the one trainer of the learned placement methods (see dp_train.h, dp_agent.h). */
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

static double now_s(void)
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
    free(tr->sel_H); free(tr->plc_p); free(tr->plc_lp); free(tr->plc_z); free(tr->plc_mark); free(tr->plc_a);
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
        dp_env_set_state(b->env, DP_ENV_STATE_ENGINE, oracle->engine, err) != DP_OK) {
        dp_error_prefix(err, "config \"state\": \"engine\" needs the simulator's oracle (dp_engine_oracle)");
        rc = DP_EINVAL;
    }
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
                              const char *checkpoint, dp_error *err)
{
    dp_train *tr = train_alloc(g, c, cfg, oracle, 0, err);
    if (tr && dp_train_init_from(tr, checkpoint, err) != DP_OK) {
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
        dp_search_anneal_config sc;
        dp_search_anneal_config_init(&sc);
        snprintf(sc.init, sizeof sc.init, "best-instant");
        int *a = dp_alloc_malloc_n(tr->n, sizeof(int));
        if (!a) return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the reference placement", tr->g->name);
        long spent = 0;
        int rc = dp_search_start(tr->g, tr->c, &tr->oracle, &sc, tr->cfg.seed, a, &spent, err);
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
    if (!dd) {
        dp_env_cp_place_all(tr->env, v, mark);
        return;
    }
    double mn = INFINITY;
    for (int k = 0; k < D; k++) mn = fmin(mn, dd->devfeat[(size_t)k * dd->FE + 4]);
    for (int k = 0; k < D; k++) mark[k] = close_enough(dd->devfeat[(size_t)k * dd->FE + 4], mn);
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
    dp_agent_episode_begin(ag);
    dp_env_reset(env);
    int sel_ok = 0, plc_ok = 0;
    tr->sel_marks_chosen = 0;
    for (int t = 0; t < tr->n; t++) {
        const int nr = env->n_ready;
        int *ops = tr->rs_ops;
        float *z = tr->rs_z, *p = tr->rs_p, *lp = tr->rs_lp;
        for (int i = 0; i < nr; i++) {
            ops[i] = env->ready[i];
            z[i] = score ? score[ops[i]] : 0.0f;
            /* episode_grad rebuilds the ready sets in increasing op id: that is what it must be */
            if (i > 0 && ops[i] <= ops[i - 1])
                return dp_error_set(err, DP_EINVAL, "internal error: the ready set is not in increasing op id");
        }
        tr->sel_H[t] = dp_nn_softmax_forward(p, lp, z, nr);
        const int nmark = dp_env_cp_select_all(env, tr->rs_mark);
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
        int v = ops[a];
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

/* remove x from the increasing list a[0..*m) when it is there; insert x */
static void sorted_remove(int *a, int *m, int x)
{
    int lo = 0, hi = *m;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    if (lo < *m && a[lo] == x) {
        memmove(a + lo, a + lo + 1, (size_t)(*m - lo - 1) * sizeof *a);
        (*m)--;
    }
}

static void sorted_insert(int *a, int *m, int x)
{
    int lo = 0, hi = *m;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    memmove(a + lo + 1, a + lo, (size_t)(*m - lo) * sizeof *a);
    a[lo] = x;
    (*m)++;
}

/* dL/dlogits of the recorded episode (loss in dp_train.h), scaled, into the networks. The SEL
 * part walks the steps backwards rebuilding each ready set from the next one: R_t = R_{t+1}
 * without the ops that placing v_t made ready, with v_t (in increasing op id, as the
 * environment keeps it); its softmax is recomputed from the scores the rollout used, unchanged
 * since (the parameters change only in update). DP_OK, or DP_EINVAL when a rebuilt set is not
 * the rollout's (an internal error). */
int dp_train_episode_grad(dp_train *tr, const dp_train_stage *st, double eps, double r, double scale)
{
    dp_agent *ag = tr->ag;
    const int D = tr->D, T = tr->n;
    const double gam = dp_agent_one_shot(ag) ? 1.0 : tr->cfg.gamma;
    float *dlp = tr->gbuf, *dz = tr->zbuf;
    const dp_graph *g = tr->env->g;
    const float *score = dp_agent_sel_scores(ag);
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
            dp_nn_softmax_forward(p, lp, z, nr);
            if (tr->sel_marks_chosen)
                for (int i = 0; i < nr; i++) mark[i] = i == tr->sel_a[t];
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

/* ---- trajectory rows and checkpoints ---- */

static int push_rows(dp_train *tr, const dp_h5io_traj_episode *e)
{
    dp_h5io_traj_step *s = dp_runtime_traj_push(&tr->traj, e, tr->n);
    if (!s) return DP_ENOMEM;
    for (int t = 0; t < tr->n; t++, s++) {
        s->sel_op = tr->sel_v[t];
        s->sel_logp = tr->cfg.sel_topological ? 0.0f : tr->sel_lpa[t]; /* a fixed order: no choice */
        s->ready = tr->sel_nr[t];
        s->plc_device = tr->plc_a[t];
        s->plc_logp = tr->plc_lp[(size_t)t * tr->D + tr->plc_a[t]];
    }
    return DP_OK;
}

/* The model-selection score of the current parameters: the greedy makespan of the graph (raw
 * unit); with several graphs bound, the mean over the validation graphs (the training graphs
 * when there are none) of the greedy makespan divided by the graph's reference (the
 * critical-path heuristic's makespan). One simulation per graph scored. */
static int gather_items(const dp_train_comm *cm, const void *mine, const long *own, size_t size, void *all, dp_error *err);

static int eval_score(dp_train *tr, double *score, dp_error *err)
{
    if (!tr->multi) return dp_train_rollout(tr, DP_TRAIN_MODE_GREEDY, 0, NULL, score, NULL, err);
    const int keep = tr->cur, nval = tr->n_bd - tr->n_train;
    /* the graphs scored, shared among the ranks (dp_train_comm): the largest first, each to the
     * rank with the fewest ops so far (ties: the lower graph, the lower rank), so that one large
     * graph does not leave a rank with most of the work; the scores are summed in graph order */
    const dp_train_comm *cm = tr->comm;
    const int R = cm ? cm->size : 1, me = cm ? cm->rank : 0;
    int *idx = dp_alloc_malloc_n((size_t)3 * tr->n_bd, sizeof *idx), m = 0;
    double *ms = dp_alloc_malloc_n((size_t)2 * tr->n_bd, sizeof *ms), *all = ms ? ms + tr->n_bd : NULL;
    long *own = dp_alloc_calloc_n((size_t)2 * R, sizeof *own), *load = own ? own + R : NULL;
    if (!idx || !ms || !own) {
        free(idx);
        free(ms);
        free(own);
        return dp_error_set(err, DP_ENOMEM, "out of memory");
    }
    int *owner = idx + tr->n_bd, *pos = owner + tr->n_bd;
    for (int i = 0; i < tr->n_bd; i++)
        if (tr->bd[i].validation == (nval > 0)) idx[m++] = i;
    for (int p = 0; p < m; p++) owner[p] = -1;
    for (int done = 0; done < m; done++) {
        int big = -1;
        for (int p = 0; p < m; p++)
            if (owner[p] < 0 && (big < 0 || tr->bd[idx[p]].n > tr->bd[idx[big]].n)) big = p;
        int q = 0;
        for (int r = 1; r < R; r++)
            if (load[r] < load[q]) q = r;
        owner[big] = q;
        load[q] += tr->bd[idx[big]].n;
    }
    for (int p = 0; p < m; p++) pos[p] = (int)own[owner[p]]++;
    int rc = DP_OK;
    for (int p = 0; p < m && rc == DP_OK; p++) {
        if (owner[p] != me) continue;
        dp_train_graph_select(tr, idx[p]);
        rc = dp_train_rollout(tr, DP_TRAIN_MODE_GREEDY, 0, NULL, &ms[pos[p]], NULL, err);
    }
    dp_train_graph_select(tr, keep);
    if (rc == DP_OK && cm) {
        rc = gather_items(cm, ms, own, sizeof *ms, all, err);
        tr->sims += m - own[me]; /* the other ranks' simulations */
    }
    double sum = 0;
    for (int p = 0; p < m && rc == DP_OK; p++) {
        long at = pos[p];
        for (int q = 0; cm && q < owner[p]; q++) at += own[q];
        sum += (cm ? all[at] : ms[at]) / tr->bd[idx[p]].ref;
    }
    *score = m ? sum / m : NAN;
    free(idx);
    free(ms);
    free(own);
    return rc;
}

/* Greedy placement with the current parameters; keep them when it is the best so far. Runs at
 * checkpoint boundaries (after an update), so it disturbs neither gradients nor the RNG. */
static int eval_greedy(dp_train *tr, dp_error *err)
{
    double ms;
    int rc = eval_score(tr, &ms, err);
    if (rc != DP_OK) return rc;
    dp_runtime_select_offer(&tr->sel, ms);
    /* its trajectory row (written with the episodes' at the next flush); several graphs: the
     * score is already a ratio, the trajectory's unit */
    const double sc = tr->multi ? 1 : tr->g->time_scale > 0 ? tr->g->time_scale : 1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    dp_h5io_traj_eval row = {tr->stage, tr->episode, ms / sc, tr->sel.best_score / sc, tr->sims,
                             (double)now.tv_sec + 1e-9 * (double)now.tv_nsec};
    return dp_runtime_traj_push_eval(&tr->traj, &row, err);
}

int dp_train_use_best(dp_train *tr)
{
    if (!dp_runtime_select_use_best(&tr->sel)) return 0;
    dp_train_params_changed(tr);
    return 1;
}

int dp_train_comm_check(const dp_train_config *c, int stage, int ranks, dp_error *err)
{
    if (ranks <= 1) return DP_OK;
    const dp_train_stage *st = &c->stage[stage];
    if (stage == DP_TRAIN_STAGE_REAL)
        return dp_error_set(err, DP_EINVAL, "stage real runs on one process (the real devices), not on %d ranks", ranks);
    if (st->pg_weight != 0 && st->baseline == DP_TRAIN_BASELINE_RUNNING)
        return dp_error_set(err, DP_EINVAL,
                            "stage %s: the running baseline needs every earlier episode's makespan before an episode's "
                            "backward, so its episodes cannot be split over %d ranks: give the stage \"baseline\": \"greedy\" "
                            "or \"batch\"", dp_train_stage_name(stage), ranks);
    return DP_OK;
}

/* ---- an episode's gradient, summed in episode order ---- */

/* The agent's gradient state (dp_agent_grad_state) of the graph in hand: n arrays. */
typedef struct grad_state {
    float *p[8];
    size_t len[8], total;
    int n;
} grad_state;

static void grad_state_get(dp_train *tr, grad_state *s)
{
    s->n = dp_agent_grad_state(tr->ag, s->p, s->len, 8);
    s->total = 0;
    for (int i = 0; i < s->n; i++) s->total += s->len[i];
}

/* dst = the episode's gradient (first) or dst += it, element by element; then the agent's
 * state is zero again, ready for the next episode. */
static void grad_take(const grad_state *s, float *dst, int first)
{
    for (int i = 0; i < s->n; i++) {
        float *w = s->p[i];
        if (first) memcpy(dst, w, s->len[i] * sizeof(float));
        else
            for (size_t k = 0; k < s->len[i]; k++) dst[k] += w[k];
        memset(w, 0, s->len[i] * sizeof(float));
        dst += s->len[i];
    }
}

/* The agent's state = src (the batch's summed gradient). */
static void grad_put(const grad_state *s, const float *src)
{
    for (int i = 0; i < s->n; i++) {
        memcpy(s->p[i], src, s->len[i] * sizeof(float));
        src += s->len[i];
    }
}

/* Room for n elements of size bytes in *buf (capacity *cap elements). */
static int grow(void **buf, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap) return DP_OK;
    void *x = dp_alloc_realloc(*buf, n * size);
    if (!x) return DP_ENOMEM;
    *buf = x;
    *cap = n;
    return DP_OK;
}

/* ---- data-parallel ranks (dp_train_comm) ---- */

/* Episodes j < nb of a batch that rank r rolls out (j mod R == r), and where rank r's come in
 * the rank-ordered concatenation of an allgather. */
static long rank_count(long nb, int R, int r)
{
    return r < nb ? (nb - r + R - 1) / R : 0;
}
static long rank_offset(long nb, int R, int r)
{
    long o = 0;
    for (int q = 0; q < r; q++) o += rank_count(nb, R, q);
    return o;
}
/* The position of episode j in that concatenation. */
static long rank_slot(long nb, int R, long j)
{
    return rank_offset(nb, R, (int)(j % R)) + j / R;
}

/* Allgather of each rank's own[rank] items of size bytes each (own: the items per rank). */
static int gather_items(const dp_train_comm *cm, const void *mine, const long *own, size_t size, void *all, dp_error *err)
{
    size_t counts[cm->size];
    for (int r = 0; r < cm->size; r++) counts[r] = (size_t)own[r] * size;
    return cm->allgather(cm->ctx, mine, counts, all, err);
}

/* An episode's record as the ranks exchange it: makespan, agreement, seconds, then per step the
 * op, its device, the ready-set size, both log-probabilities, and the assignment (by op). */
enum { REC_MS, REC_AGREE0, REC_AGREE1, REC_SECONDS, REC_HEAD };
static size_t rec_size(int n)
{
    return REC_HEAD + 6 * (size_t)n;
}
static void rec_pack(const dp_train *tr, double *rec, double ms, const double agree[2], double seconds)
{
    const int n = tr->n, D = tr->D;
    rec[REC_MS] = ms;
    rec[REC_AGREE0] = agree[0];
    rec[REC_AGREE1] = agree[1];
    rec[REC_SECONDS] = seconds;
    double *x = rec + REC_HEAD;
    for (int t = 0; t < n; t++, x += 6) {
        x[0] = tr->sel_v[t];
        x[1] = tr->plc_a[t];
        x[2] = tr->sel_nr[t];
        x[3] = tr->sel_lpa[t];
        x[4] = tr->plc_lp[(size_t)t * D + tr->plc_a[t]];
        x[5] = tr->env->assignment[t];
    }
}
/* The record's steps into the trainer's episode record (what the self-imitation buffer and the
 * trajectory rows read) and its assignment into assign (n). */
static void rec_load(dp_train *tr, const double *rec, int *assign)
{
    const int n = tr->n, D = tr->D;
    const double *x = rec + REC_HEAD;
    for (int t = 0; t < n; t++, x += 6) {
        tr->sel_v[t] = (int)x[0];
        tr->plc_a[t] = (int)x[1];
        tr->sel_nr[t] = (int)x[2];
        tr->sel_lpa[t] = (float)x[3];
        tr->plc_lp[(size_t)t * D + tr->plc_a[t]] = (float)x[4];
        assign[t] = (int)x[5];
    }
}

/* ---- the training loop ---- */

/* FNV-1a over the devices: checks that a replay reproduced its rollout */
static uint64_t assignment_hash(const int *a, int n)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)(unsigned)a[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Self-imitation after a batch (dp_train_impl.h): the buffer's replays, shared among the ranks
 * as a batch's episodes are (replay k by rank k mod R), each one's gradient added to the batch's
 * sum gsum in replay order. */
static int sil_batch(dp_train *tr, const dp_train_stage *st, const dp_train_comm *cm, const grad_state *gs, float *gsum,
                     dp_error *err)
{
    if (!(st->sil_weight > 0) || tr->sil_n == 0) return DP_OK;
    const int R = cm ? cm->size : 1, me = cm ? cm->rank : 0;
    const int cap = (st->sil_replays > tr->sil_n ? st->sil_replays : tr->sil_n) + 1;
    int *idx = dp_alloc_malloc_n((size_t)cap, sizeof *idx);
    double *w = dp_alloc_malloc_n((size_t)cap, sizeof *w);
    long own[R];
    const int m = idx && w ? dp_train_sil_plan(tr, st, idx, w) : 0;
    for (int q = 0; q < R; q++) own[q] = rank_count(m, R, q);
    float *mine = cm ? dp_alloc_malloc_n((size_t)own[me] * gs->total + 1, sizeof *mine) : NULL;
    float *all = cm ? dp_alloc_malloc_n((size_t)m * gs->total + 1, sizeof *all) : NULL;
    int rc = DP_OK;
    if (!idx || !w || (cm && (!mine || !all))) rc = dp_error_set(err, DP_ENOMEM, "out of memory for self-imitation");
    long k = 0;
    for (int j = me; j < m && rc == DP_OK; j += R, k++)
        if ((rc = dp_train_sil_imitate(tr, st, idx[j], w[j], err)) == DP_OK) grad_take(gs, cm ? mine + (size_t)k * gs->total : gsum, cm != NULL);
    if (rc == DP_OK && cm && (rc = gather_items(cm, mine, own, gs->total * sizeof *mine, all, err)) == DP_OK)
        for (int j = 0; j < m; j++) {
            const float *g = all + (size_t)rank_slot(m, R, j) * gs->total;
            for (size_t i = 0; i < gs->total; i++) gsum[i] += g[i];
        }
    free(idx);
    free(w);
    free(mine);
    free(all);
    return rc;
}

/* The reward of an episode of makespan msp against baseline b (printed unit; bsd: the batch's
 * standard deviation, for the normalised batch baseline). */
static double reward_of(const dp_train *tr, const dp_train_stage *st, int batch_base, double b, double bsd, double msp)
{
    double r = b - msp;
    if (batch_base && st->normalize_advantages) r = bsd > 0 ? r / bsd : 0;
    else if (tr->cfg.reward_relative && b > 0) r /= b;
    if (st->positive_only && r < 0) r = 0;
    return r;
}

/* What a stage's run keeps from batch to batch. */
typedef struct run_ctx {
    dp_train_stage st;
    int stage, greedy_base, batch_base, B;
    const dp_train_io *io;
    double sc;          /* the unit of makespans in rewards and rows */
    double base;        /* the greedy baseline of the batch in hand (printed unit) */
    double bmean, bsd;  /* the batch baseline: mean and sd of the batch's makespans (printed unit) */
    double t0;
    long done_here;
    long batch_start;   /* the batch's first episode */
} run_ctx;

/* An episode's bookkeeping before its backward, in episode order: the running average, the
 * reward and the best makespan (assign: its assignment). Returns the reward; *avg the running
 * average. */
static double episode_book(dp_train *tr, run_ctx *x, double ms, const int *assign, double *avg)
{
    const double msp = ms / x->sc;
    tr->running_sum += msp;
    tr->running_count++;
    *avg = tr->running_sum / (double)tr->running_count;
    const double b = x->greedy_base ? x->base : x->batch_base ? x->bmean : *avg;
    const double r = reward_of(tr, &x->st, x->batch_base, b, x->bsd, msp);
    if (tr->multi ? msp < tr->best : ms < tr->best) {
        /* with several graphs: the best ratio to a reference, on any training graph (the
         * assignment kept is of the first graph only) */
        tr->best = tr->multi ? msp : ms;
        if (tr->cur == 0) memcpy(tr->best_assign, assign, (size_t)tr->n * sizeof(int));
    }
    return r;
}

/* An episode's rows and progress after its backward (tr->episode counts it already); seed, r,
 * avg, agree and seconds are its own, the steps tr's episode record. stop: the run stops after
 * this batch. */
static int episode_report(dp_train *tr, run_ctx *x, long e, uint64_t seed, double ms, double r, double avg,
                          const double agree[2], double seconds, int stop, dp_error *err)
{
    const dp_train_stage *st = &x->st;
    const double frac = (double)e / (double)st->episodes;
    const double eps = st->epsilon + (st->epsilon_final - st->epsilon) * frac;
    const double lr = st->lr + (st->lr_final - st->lr) * frac;
    const double msp = ms / x->sc;
    x->done_here++;
    dp_h5io_traj_episode row = {x->stage, e, seed, msp, r, seconds, lr, eps, agree[0], agree[1],
                                tr->traj.file_st + tr->traj.n_st, tr->n};
    if (x->io->trajectory && push_rows(tr, &row) != DP_OK) return dp_error_set(err, DP_ENOMEM, "out of memory for trajectory rows");
    if (x->io->progress) {
        const double bsc = tr->multi ? 1 : x->sc; /* tr->best and sel.last_score: raw, or ratios with several graphs */
        const int last = tr->episode == st->episodes;
        dp_train_progress pr = {x->stage, tr->episode, st->episodes, eps, lr, msp, tr->best / bsc, avg, tr->sel.last_score / bsc,
                                agree[0], agree[1], x->done_here / fmax(now_s() - x->t0, 1e-9), last || stop};
        x->io->progress(&pr, x->io->progress_ctx);
    }
    return DP_OK;
}

int dp_train_run(dp_train *tr, int stage, long episodes, const dp_train_io *io, dp_error *err)
{
    if (stage < 0 || stage >= DP_TRAIN_N_STAGES) return dp_error_set(err, DP_EINVAL, "no stage %d", stage);
    run_ctx x;
    memset(&x, 0, sizeof x);
    x.st = tr->cfg.stage[stage];
    dp_train_stage *st = &x.st;
    if (episodes > 0) st->episodes = episodes;
    const dp_train_config *c = &tr->cfg;
    dp_train_io none;
    memset(&none, 0, sizeof none);
    if (!io) io = &none;
    x.io = io;
    x.stage = stage;
    const dp_train_comm *cm = io->comm && io->comm->size > 1 ? io->comm : NULL;
    const int R = cm ? cm->size : 1, me = cm ? cm->rank : 0;
    tr->comm = cm;
    if (cm) {
        dp_train_config one = tr->cfg;
        one.stage[stage] = *st;
        const int rc0 = dp_train_comm_check(&one, stage, R, err);
        if (rc0 != DP_OK) return rc0;
    }
    if (stage != tr->stage) {
        /* a new stage: counters, running average and Adam start afresh (the authors' stages
         * are separate runs that only load the previous one's parameters) */
        tr->stage = stage;
        tr->episode = 0;
        tr->stage_sims0 = tr->sims;
        tr->running_sum = 0;
        tr->running_count = 0;
        tr->best = INFINITY;
        dp_runtime_select_reset(&tr->sel);
        for (int b = 0; b < 2; b++) {
            dp_nn_params *p = tr->blk[b];
            if (p->n) {
                memset(p->m, 0, p->n * sizeof(float));
                memset(p->v, 0, p->n * sizeof(float));
            }
            p->adam_t = 0;
        }
    }
    if (tr->multi) {
        if (tr->n_train < 1) return dp_error_set(err, DP_EINVAL, "trainer: no training graph (only validation graphs)");
        if (stage == DP_TRAIN_STAGE_REAL)
            return dp_error_set(err, DP_EINVAL, "stage real trains on one graph (the executed one), not on %d", tr->n_bd);
        dp_train_graph_select(tr, 0);
    }
    /* a stage its patience ended (a resumed checkpoint of it) is done */
    if (tr->episode > 0 && dp_runtime_select_patience_spent(&tr->sel, st->patience)) return DP_OK;
    /* the starting point is a candidate too: model selection never returns a policy whose
     * greedy placement is worse than the one the stage started from */
    if (tr->episode == 0 && !tr->sel.has_best) {
        int rc0 = eval_greedy(tr, err);
        if (rc0 != DP_OK) return rc0;
        tr->sel.stale = 0; /* the stage's starting point is no step of its patience */
    }
    const int rc_demo = dp_train_demo_seed(tr, st, err);
    if (rc_demo != DP_OK) return rc_demo;
    if (io->trajectory && !tr->traj_ready) {
        char *cfg = dp_train_config_to_json(c);
        int rc = dp_h5io_traj_create(io->trajectory, tr->g->name, tr->n, tr->D, tr->oracle.name,
                                tr->multi ? (tr->cfg.reference_best_instant ? "ratio to the best instant placement" : "ratio to the critical-path placement") : tr->g->time_unit, cfg, tr->run_id, err);
        free(cfg);
        if (rc != DP_OK) return rc;
        tr->traj_ready = 1;
        tr->traj.file_ep = tr->traj.file_st = tr->traj.file_ev = 0;
    }
    /* the unit of makespans in rewards, baselines, progress and trajectory rows: the graph's
     * printed unit, or with several graphs the graph's reference (so they are comparable) */
    x.sc = tr->multi ? tr->bd[tr->cur].ref : tr->g->time_scale > 0 ? tr->g->time_scale : 1;
    long every = c->checkpoint_every > 0 ? c->checkpoint_every : 100;
    const int B = st->batch > 0 ? st->batch : 1;
    x.B = B;
    if (every % B) every += B - every % B;
    x.greedy_base = st->pg_weight != 0 && st->baseline == DP_TRAIN_BASELINE_GREEDY;
    x.batch_base = st->pg_weight != 0 && st->baseline == DP_TRAIN_BASELINE_BATCH;
    const int keep_sil = st->sil_weight > 0 || st->distill > 0;
    /* per episode of a batch: seed, makespan, agreement, replay check; the batch's summed
     * gradient; with ranks, the records and gradients exchanged */
    uint64_t *bseed = dp_alloc_malloc_n((size_t)B, sizeof *bseed), *bhash = dp_alloc_malloc_n((size_t)B, sizeof *bhash);
    double *bms = dp_alloc_malloc_n((size_t)B, sizeof *bms), *bagree = dp_alloc_malloc_n((size_t)2 * B, sizeof *bagree);
    double *bsec = dp_alloc_malloc_n((size_t)B, sizeof *bsec);
    float *gsum = NULL, *gmine = NULL, *gall = NULL;
    double *rmine = NULL, *rall = NULL;
    int *rassign = NULL;
    size_t gsum_cap = 0, gmine_cap = 0, gall_cap = 0, rmine_cap = 0, rall_cap = 0, rassign_cap = 0;
    int rc = DP_OK, early = 0;
    if (!bseed || !bhash || !bms || !bagree || !bsec) rc = dp_error_set(err, DP_ENOMEM, "out of memory for the batch");
    const int mode = st->exploration == DP_TRAIN_EXPLORE_MIXTURE ? DP_TRAIN_MODE_MIXTURE : DP_TRAIN_MODE_EPSILON;
    x.t0 = now_s();
    while (rc == DP_OK && tr->episode < st->episodes) {
        /* a batch: episodes e0 .. e0 + nb - 1. Batches start at multiples of B, and where this
         * call starts mid-batch (a finished stage run again with more episodes: its last batch
         * was short, and the rest of that batch is a batch of its own) */
        const long e0 = tr->episode, room = B - e0 % B, nb = st->episodes - e0 < room ? st->episodes - e0 : room;
        x.batch_start = e0;
        if (tr->multi) {
            /* each batch samples one training graph, uniformly: the batch's rollouts,
             * baselines and backward are all on it */
            int k = (int)gsl_rng_uniform_int(tr->master, (unsigned long)tr->n_train), i = 0;
            for (; i < tr->n_bd; i++)
                if (!tr->bd[i].validation && k-- == 0) break;
            dp_train_graph_select(tr, i);
            x.sc = tr->bd[i].ref;
        }
        dp_agent_zero_grad(tr->ag);
        if (tr->need_prepare) {
            dp_agent_prepare(tr->ag);
            tr->need_prepare = 0;
        }
        if (x.greedy_base) {
            /* the greedy placement of this batch's parameters; it uses no randomness, so a
             * resumed run recomputes the same value */
            double gms;
            if ((rc = dp_train_rollout(tr, DP_TRAIN_MODE_GREEDY, 0, NULL, &gms, NULL, err)) != DP_OK) break;
            x.base = gms / x.sc;
            tr->sel.last_score = tr->multi ? x.base : gms;
        }
        /* the batch's seeds, in episode order, whichever rank rolls the episode out */
        for (long j = 0; j < nb; j++) bseed[j] = gsl_rng_get(tr->master);
        grad_state gs;
        grad_state_get(tr, &gs);
        long own[R];
        for (int q = 0; q < R; q++) own[q] = rank_count(nb, R, q);
        const size_t RS = rec_size(tr->n);
        if (grow((void **)&gsum, &gsum_cap, gs.total ? gs.total : 1, sizeof *gsum) != DP_OK ||
            (cm && (grow((void **)&gmine, &gmine_cap, (size_t)own[me] * gs.total + 1, sizeof *gmine) != DP_OK ||
                    grow((void **)&gall, &gall_cap, (size_t)nb * gs.total + 1, sizeof *gall) != DP_OK ||
                    grow((void **)&rmine, &rmine_cap, (size_t)own[me] * RS + 1, sizeof *rmine) != DP_OK ||
                    grow((void **)&rall, &rall_cap, (size_t)nb * RS, sizeof *rall) != DP_OK ||
                    grow((void **)&rassign, &rassign_cap, (size_t)tr->n, sizeof *rassign) != DP_OK))) {
            rc = dp_error_set(err, DP_ENOMEM, "out of memory for the batch's gradients");
            break;
        }
        /* the batch's stop: after it, when asked (with ranks: when any rank was asked) */
        int stop = 0;
        /* Phase 1: the rollouts of this rank's episodes (one process: all of them). Without
         * the batch baseline each is followed by its backward (its reward known here: one
         * process keeps the running average as it goes; with ranks the baseline is the greedy
         * one or there is no policy gradient); with it, the makespans come first, and each
         * episode is replayed from its seed (same actions, no simulation) for its backward. */
        long mine = 0;
        for (long j = me; j < nb && rc == DP_OK; j += R, mine++) {
            const long e = e0 + j;
            const double eps = st->epsilon + (st->epsilon_final - st->epsilon) * ((double)e / (double)st->episodes);
            const double te = now_s();
            gsl_rng_set(tr->ep, (unsigned long)bseed[j]);
            tr->force_first_dev = st->forced_first ? (int)j : -1;
            rc = dp_train_rollout(tr, mode, eps, tr->ep, &bms[j], bagree + 2 * j, err);
            tr->force_first_dev = -1;
            if (rc != DP_OK) break;
            bhash[j] = assignment_hash(tr->env->assignment, tr->n);
            if (!cm && keep_sil && dp_train_sil_offer(tr, st->sil_k, bms[j]) != DP_OK) {
                rc = dp_error_set(err, DP_ENOMEM, "out of memory for the self-imitation buffer");
                break;
            }
            if (x.batch_base) {
                bsec[j] = now_s() - te;
                if (cm) rec_pack(tr, rmine + (size_t)mine * RS, bms[j], bagree + 2 * j, bsec[j]);
                continue;
            }
            double r, avg = 0;
            if (!cm) r = episode_book(tr, &x, bms[j], tr->env->assignment, &avg);
            else r = x.greedy_base ? reward_of(tr, st, 0, x.base, 0, bms[j] / x.sc) : 0; /* 0: no policy gradient */
            if (dp_train_episode_grad(tr, st, eps, r, 1.0 / B) != DP_OK) {
                rc = dp_error_set(err, DP_EINVAL, "internal error: a rebuilt ready set differs from the rollout's");
                break;
            }
            grad_take(&gs, cm ? gmine + (size_t)mine * gs.total : gsum, cm ? 1 : j == 0);
            bsec[j] = now_s() - te;
            if (cm) {
                rec_pack(tr, rmine + (size_t)mine * RS, bms[j], bagree + 2 * j, bsec[j]);
                continue;
            }
            tr->episode++;
            if (j == nb - 1) stop = io->stop && *io->stop;
            rc = episode_report(tr, &x, e, bseed[j], bms[j], r, avg, bagree + 2 * j, bsec[j], stop, err);
        }
        if (rc != DP_OK) break;
        if (cm) {
            /* every rank's records, in rank order; then the self-imitation buffer gets every
             * episode in episode order, as one process offers them */
            if ((rc = gather_items(cm, rmine, own, RS * sizeof *rmine, rall, err)) != DP_OK) break;
            tr->sims += nb - own[me]; /* the other ranks' rollouts */
            for (long j = 0; j < nb && rc == DP_OK; j++) {
                const double *rec = rall + (size_t)rank_slot(nb, R, j) * RS;
                bms[j] = rec[REC_MS];
                bagree[2 * j] = rec[REC_AGREE0];
                bagree[2 * j + 1] = rec[REC_AGREE1];
                bsec[j] = rec[REC_SECONDS];
                if (keep_sil) {
                    rec_load(tr, rec, rassign);
                    if (dp_train_sil_offer(tr, st->sil_k, bms[j]) != DP_OK)
                        rc = dp_error_set(err, DP_ENOMEM, "out of memory for the self-imitation buffer");
                }
            }
            if (rc != DP_OK) break;
        }
        if (x.batch_base) {
            double sum = 0, sum2 = 0;
            for (long j = 0; j < nb; j++) {
                sum += bms[j] / x.sc;
                sum2 += (bms[j] / x.sc) * (bms[j] / x.sc);
            }
            x.bmean = sum / (double)nb;
            x.bsd = nb > 1 ? sqrt(fmax(0.0, (sum2 - sum * x.bmean) / (double)(nb - 1))) : 0;
            /* Phase 2: each episode of this rank replayed for its backward */
            mine = 0;
            for (long j = me; j < nb && rc == DP_OK; j += R, mine++) {
                const long e = e0 + j;
                const double eps = st->epsilon + (st->epsilon_final - st->epsilon) * ((double)e / (double)st->episodes);
                const double te = now_s();
                gsl_rng_set(tr->ep, (unsigned long)bseed[j]);
                double ms;
                tr->force_first_dev = st->forced_first ? (int)j : -1;
                tr->skip_oracle = 1;
                rc = dp_train_rollout(tr, mode, eps, tr->ep, &ms, NULL, err);
                tr->force_first_dev = -1;
                tr->skip_oracle = 0;
                if (rc != DP_OK) break;
                /* the replay must be the rollout: same seed, same parameters, same choices */
                if (assignment_hash(tr->env->assignment, tr->n) != bhash[j]) {
                    rc = dp_error_set(err, DP_EINVAL, "internal error: the replay of episode %ld differs from its rollout", e);
                    break;
                }
                double r, avg = 0;
                if (!cm) r = episode_book(tr, &x, bms[j], tr->env->assignment, &avg);
                else r = reward_of(tr, st, 1, x.bmean, x.bsd, bms[j] / x.sc);
                if (dp_train_episode_grad(tr, st, eps, r, 1.0 / B) != DP_OK) {
                    rc = dp_error_set(err, DP_EINVAL, "internal error: a rebuilt ready set differs from the rollout's");
                    break;
                }
                grad_take(&gs, cm ? gmine + (size_t)mine * gs.total : gsum, cm ? 1 : j == 0);
                if (cm) continue;
                tr->episode++;
                if (j == nb - 1) stop = io->stop && *io->stop;
                rc = episode_report(tr, &x, e, bseed[j], bms[j], r, avg, bagree + 2 * j, bsec[j] + now_s() - te, stop, err);
            }
            if (rc != DP_OK) break;
        }
        if (cm) {
            /* every episode's gradient, summed in episode order; any rank's stop stops all */
            if ((rc = gather_items(cm, gmine, own, gs.total * sizeof *gmine, gall, err)) != DP_OK) break;
            for (long j = 0; j < nb; j++) {
                const float *g = gall + (size_t)rank_slot(nb, R, j) * gs.total;
                if (j == 0) memcpy(gsum, g, gs.total * sizeof *gsum);
                else
                    for (size_t k = 0; k < gs.total; k++) gsum[k] += g[k];
            }
            int st_me = io->stop && *io->stop, st_all[R];
            long one[R];
            for (int q = 0; q < R; q++) one[q] = 1;
            if ((rc = gather_items(cm, &st_me, one, sizeof st_me, st_all, err)) != DP_OK) break;
            for (int q = 0; q < R; q++) stop |= st_all[q];
            if (stop && io->stop) *io->stop = 1;
            /* the batch's bookkeeping and rows, in episode order */
            for (long j = 0; j < nb && rc == DP_OK; j++) {
                const double *rec = rall + (size_t)rank_slot(nb, R, j) * RS;
                rec_load(tr, rec, rassign);
                double avg;
                const double r = episode_book(tr, &x, bms[j], rassign, &avg);
                tr->episode++;
                rc = episode_report(tr, &x, e0 + j, bseed[j], bms[j], r, avg, bagree + 2 * j, bsec[j], j == nb - 1 && stop, err);
            }
            if (rc != DP_OK) break;
        }
        /* the batch's update: its summed gradient, then self-imitation's, one optimiser step */
        if ((rc = sil_batch(tr, st, cm, &gs, gsum, err)) != DP_OK) break;
        grad_put(&gs, gsum);
        const double frac = (double)(tr->episode - 1) / (double)st->episodes;
        const double lr = st->lr + (st->lr_final - st->lr) * frac;
        dp_train_update(tr, lr);
        const int last = tr->episode == st->episodes;
        if (last || stop || tr->episode % every == 0) {
            /* a stop between two evaluations only checkpoints: an evaluation of its own would be
             * a simulation, an evaluation row and a step towards patience that the uninterrupted
             * run does not have (a resumed run must end as that one) */
            if (last || tr->episode % every == 0) {
                if (last && st->distill > 0 && (rc = dp_train_distill_best(tr, st, st->lr, err)) != DP_OK) break;
                if ((rc = eval_greedy(tr, err)) != DP_OK) break;
                /* early stopping: the stage ends when the greedy placement stopped improving */
                early = dp_runtime_select_patience_spent(&tr->sel, st->patience) && !last;
            }
            if ((rc = dp_runtime_traj_flush(&tr->traj, io->trajectory, err)) != DP_OK) break;
            if (io->checkpoint && (rc = dp_train_checkpoint_write(tr, io->checkpoint, err)) != DP_OK) break;
        }
        if (stop || early) break;
    }
    free(bseed);
    free(bms);
    free(bagree);
    free(bhash);
    free(bsec);
    free(gsum);
    free(gmine);
    free(gall);
    free(rmine);
    free(rall);
    free(rassign);
    return rc;
}

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

int dp_train_place(dp_train *tr, int samples, uint64_t seed, int *assignment, double *makespan, double *agree,
                     dp_error *err)
{
    if (tr->cur != 0) dp_train_graph_select(tr, 0);
    double ms;
    int rc = dp_train_rollout(tr, DP_TRAIN_MODE_GREEDY, 0, NULL, &ms, agree, err);
    if (rc != DP_OK) return rc;
    if (samples <= 0) {
        memcpy(assignment, tr->env->assignment, (size_t)tr->n * sizeof(int));
        *makespan = ms;
        return DP_OK;
    }
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return dp_error_set(err, DP_ENOMEM, "out of memory");
    gsl_rng_set(r, (unsigned long)seed);
    double best = INFINITY;
    for (int s = 0; s < samples; s++) {
        rc = dp_train_rollout(tr, DP_TRAIN_MODE_SAMPLE, 0, r, &ms, NULL, err);
        if (rc != DP_OK) break;
        if (ms < best) {
            best = ms;
            memcpy(assignment, tr->env->assignment, (size_t)tr->n * sizeof(int));
        }
    }
    gsl_rng_free(r);
    *makespan = best;
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
    double t0 = now_s(), c0 = cpu_now_s();
    for (int i = 0; i < reps && rc == DP_OK; i++) {
        tr->need_prepare = 1;
        rc = dp_train_rollout(tr, DP_TRAIN_MODE_GREEDY, 0, NULL, &ms, NULL, err);
    }
    wall_s[0] = (now_s() - t0) / reps;
    cpu_s[0] = (cpu_now_s() - c0) / reps;
    /* training as dp_train_run does it: per batch one forward of the per-op parts (in the
     * first rollout), `batch` exploratory rollouts with their episode backward, one backward
     * and one Adam step per network */
    dp_train_stage st = tr->cfg.stage[DP_TRAIN_STAGE_IL];
    st.pg_weight = 1;
    st.exploration = DP_TRAIN_EXPLORE_MIXTURE;
    t0 = now_s();
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
    wall_s[1] = (now_s() - t0) / ((double)batch * batches);
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

int dp_train_pipeline(dp_train *tr, const int *stages, const long *episodes, int n_stages, int model_selection,
                        int samples, uint64_t seed, const dp_train_io *io, dp_train_pipeline_result *out, int *assignment,
                        dp_error *err)
{
    const int n = tr->bd[0].n; /* placements are of the first training graph */
    int *tmp = dp_alloc_malloc_n((size_t)n, sizeof(int));
    if (!tmp) return dp_error_set(err, DP_ENOMEM, "out of memory");
    int rc = DP_OK;
    /* a resumed run continues the stage its checkpoint was in: the stages before it are done */
    int first = 0;
    for (int k = 0; k < n_stages; k++)
        if (stages[k] == tr->stage) first = k;
    for (int k = 0; k < n_stages; k++) {
        dp_train_pipeline_stage *r = &out->stage[k];
        r->stage = stages[k];
        r->done = 0;
        r->final_greedy = r->selected_greedy = r->best_sample = NAN;
        r->agree[0] = r->agree[1] = NAN;
        memset(&r->agreement, 0, sizeof r->agreement);
        memset(&r->agreement_selected, 0, sizeof r->agreement_selected);
        r->sims = 0;
        r->seconds = 0;
    }
    out->n_stages = n_stages;
    out->stopped = 0;
    for (int k = first; k < n_stages && rc == DP_OK; k++) {
        dp_train_pipeline_stage *r = &out->stage[k];
        const long sims0 = tr->sims;
        const double t0 = now_s();
        if ((rc = dp_train_run(tr, stages[k], episodes ? episodes[k] : 0, io, err)) != DP_OK) break;
        if (io && io->stop && *io->stop) {
            out->stopped = 1;
            break;
        }
        r->episodes = tr->episode;
        r->best_sample = tr->best;
        /* with several graphs: the validation score (mean ratio to the references) of the final
         * and the model-selected parameters, and the first graph's placement */
        if (tr->multi && (rc = eval_score(tr, &r->final_greedy, err)) != DP_OK) break;
        const double g0 = r->final_greedy;
        if ((rc = dp_train_place(tr, samples, seed, tmp, &r->final_greedy, r->agree, err)) != DP_OK) break;
        if (tr->multi) r->final_greedy = g0;
        if (samples <= 0) dp_train_agreement_get(tr, &r->agreement); /* else the last sample's: none */
        r->agreement_selected = r->agreement;
        r->selected_greedy = r->final_greedy;
        /* model selection: the next stage (and the result) start from the parameters whose greedy
         * placement was best at the stage's evaluations, as `doppler train --init` does */
        if (model_selection && dp_train_use_best(tr)) {
            if (tr->multi && (rc = eval_score(tr, &r->selected_greedy, err)) != DP_OK) break;
            const double g1 = r->selected_greedy;
            if ((rc = dp_train_place(tr, samples, seed, tmp, &r->selected_greedy, NULL, err)) != DP_OK) break;
            if (tr->multi) r->selected_greedy = g1;
            if (samples <= 0) dp_train_agreement_get(tr, &r->agreement_selected);
        }
        /* the stage's whole count: a resumed stage began in an earlier process */
        r->sims = tr->sims - (k == first && tr->stage_sims0 < sims0 ? tr->stage_sims0 : sims0);
        r->seconds = now_s() - t0;
        r->done = 1;
        if (assignment) memcpy(assignment, tmp, (size_t)n * sizeof(int));
    }
    free(tmp);
    return rc;
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
