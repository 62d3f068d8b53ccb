/* dp_improve_train.c: training the learned improvement method (dp_improve_train, dp_improve.h;
 * doc/improve.md). The method supplies its rollouts (improvement episodes from a start placement,
 * each move simulated) and its gradient (n-step REINFORCE with a per-step baseline); model
 * selection, trajectory rows, checkpoint bookkeeping and resume are the trainer runtime's
 * (dp_runtime.h). Its networks are stored in its own checkpoint groups, /op and /move (a
 * checkpoint written before, with them in DOPPLER's /sel and /plc, is read as well). */
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
#include "dp_search.h"
#include "dp_runtime.h"
#include "dp_train.h"
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

/* Everything of a run beyond the parameters, the Adam state and the generator that its
 * checkpoint holds so that a resumed run ends as an uninterrupted one. */
typedef struct run_state {
    long episode, sims;
    long eval_sims, sel_episode, sel_sims;
    dp_runtime_select sel;      /* model selection: evaluations, the final score (last_score), the
                                   selected one (best_score) and its parameters */
    dp_runtime_traj traj;       /* trajectory rows, and the file's */
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
                const dp_cost *const *c, dp_engine *const *e, const int *validation, const train_graph *tg, int *elites, long n_elites,
                const run_state *rs, gsl_rng *master, dp_error *err)
{
    dp_h5io_ckpt ck;
    memset(&ck, 0, sizeof ck);
    char *cj = dp_improve_config_to_json(cfg), *on = dp_runtime_trained_on(n_graphs, g, c, e, validation);
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
    json_object_set_new(ms, "evaluations", json_integer(rs->sel.evaluations));
    json_object_set_new(ms, "eval_simulations", json_integer(rs->eval_sims));
    json_object_set_new(ms, "final_score", json_score(rs->sel.last_score));
    json_object_set_new(ms, "selected_score", json_score(rs->sel.best_score));
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
    ck.best_makespan = INFINITY; /* no sampled placement of DOPPLER's kind: the elites are the method's */
    ck.simulations = rs->sims;
    dp_runtime_ckpt_put(&ck, master, &rs->sel, &rs->traj);
    ck.method_state = mj;
    ck.method_ints = elites;
    ck.n_method_ints = n_elites;
    ck.blocks[0] = "op";
    ck.blocks[1] = "move";
    int rc = mj ? dp_h5io_ckpt_write(path, &ck, dp_improve_op_params(m), dp_improve_move_params(m), err)
                : dp_error_set(err, DP_ENOMEM, "out of memory");
    free(cj);
    free(on);
    free(mj);
    return rc;
}

/* Continue the run of checkpoint `path`: the parameters with their Adam state, the generator,
 * the per-graph best placements and rs; the trajectory (when given) checked to be the run's and
 * cut back to the rows the checkpoint accounts for. A checkpoint written before the method had
 * its own slots (its networks in /sel and /plc, DOPPLER's) is read as well. */
static int resume_load(dp_improve_model *m, const char *path, const char *traj, int n_graphs, const dp_graph *const *g,
                       const dp_cost *const *c, dp_engine *const *e, const int *validation, train_graph *tg, int *elites, long n_elites,
                       run_state *rs, gsl_rng *master, dp_error *err)
{
    char *mine = dp_runtime_trained_on(n_graphs, g, c, e, validation);
    int rc = dp_runtime_resume_check(path, mine, 1, err);
    free(mine);
    if (rc != DP_OK) return rc;
    dp_h5io_ckpt ck;
    if (dp_runtime_ckpt_prepare(&ck, g[0]->n_ops, c[0]->n_devices, 1, master, &rs->sel, err) != DP_OK) return DP_ENOMEM;
    ck.read_method_state = 1;
    ck.method_ints = elites;
    ck.n_method_ints = n_elites;
    ck.blocks[0] = "op";
    ck.blocks[1] = "move";
    rc = dp_h5io_ckpt_read(path, &ck, dp_improve_op_params(m), dp_improve_move_params(m), 1, err);
    json_t *ms = NULL;
    if (rc == DP_OK) rc = dp_runtime_ckpt_take(path, &ck, 1, master, &rs->sel, &rs->traj, err);
    if (rc == DP_OK && !(ck.method_state && (ms = json_loads(ck.method_state, 0, NULL)) && json_is_object(ms)))
        rc = dp_error_set(err, DP_EINVAL, "%s: no readable method_state: not a checkpoint of a resumable improve run", path);
    json_t *em = ms ? json_object_get(ms, "elite_makespan") : NULL;
    if (rc == DP_OK && (!json_is_array(em) || (int)json_array_size(em) != n_graphs))
        rc = dp_error_set(err, DP_EINVAL, "%s: method_state.elite_makespan is not an array of %d makespans", path, n_graphs);
    if (rc == DP_OK) {
        long off = 0;
        for (int i = 0; i < n_graphs; i++) {
            json_t *x = json_array_get(em, (size_t)i);
            tg[i].elite_ms = json_is_number(x) ? json_number_value(x) : INFINITY;
            memcpy(tg[i].elite, elites + off, (size_t)g[i]->n_ops * sizeof(int));
            off += g[i]->n_ops;
        }
        rs->episode = (long)ck.episode;
        rs->sims = (long)ck.simulations;
        rs->sel.evaluations = (int)json_integer_value(json_object_get(ms, "evaluations"));
        rs->eval_sims = (long)json_integer_value(json_object_get(ms, "eval_simulations"));
        rs->sel.last_score = score_of(ms, "final_score");
        rs->sel_episode = (long)json_integer_value(json_object_get(ms, "selected_episode"));
        rs->sel_sims = (long)json_integer_value(json_object_get(ms, "selected_simulations"));
        snprintf(rs->run_id, sizeof rs->run_id, "%s", ck.run_id);
    }
    json_decref(ms);
    dp_runtime_ckpt_release(&ck);
    if (rc != DP_OK || !traj) return rc;
    return dp_runtime_traj_resume(&rs->traj, traj, path, rs->run_id, err);
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
 * model-selected ones when they score best so far, and adds the evaluation's trajectory row. */
static int select_model(dp_improve_model *m, const dp_improve_config *cfg, int n_graphs, const dp_graph *const *g,
                        const dp_cost *const *c, dp_engine *const *e, const int *validation, const train_graph *tg, int *buf,
                        run_state *rs, dp_error *err)
{
    double score;
    int rc = evaluate(m, cfg, n_graphs, g, c, e, validation, tg, buf, &score, &rs->eval_sims, err);
    if (rc != DP_OK) return rc;
    if (dp_runtime_select_offer(&rs->sel, score)) {
        rs->sel_episode = rs->episode;
        rs->sel_sims = rs->sims;
    }
    dp_h5io_traj_eval row = {DP_TRAIN_STAGE_SIM, rs->episode, score, rs->sel.best_score, rs->sims + rs->eval_sims, now_s()};
    return dp_runtime_traj_push_eval(&rs->traj, &row, err);
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
    dp_nn_params *const op = dp_improve_op_params(m), *const move = dp_improve_move_params(m);
    const size_t P1 = op->n, P = P1 + move->n;
    int rc = DP_OK, maxn = 0;
    long n_elites = 0;
    run_state rs;
    memset(&rs, 0, sizeof rs);
    dp_runtime_traj_init(&rs.traj);
    dp_h5io_run_id_new(rs.run_id, sizeof rs.run_id);
    if (dp_runtime_select_init(&rs.sel, op, move, err) != DP_OK) return DP_ENOMEM;
    train_graph *tg = dp_alloc_calloc((size_t)n_graphs, sizeof *tg);
    int *train_idx = dp_alloc_malloc_n((size_t)n_graphs, sizeof(int)), *elites = NULL;
    gsl_rng *master = gsl_rng_alloc(gsl_rng_mt19937), *r = gsl_rng_alloc(gsl_rng_mt19937);
    float *stepgrad = dp_alloc_malloc_n((size_t)B * T * P, sizeof(float)), *grad = dp_alloc_malloc_n(P, sizeof(float));
    double *rew = dp_alloc_malloc_n((size_t)B * T, sizeof(double)), *ret = dp_alloc_malloc_n((size_t)B * T, sizeof(double));
    double *logmu = dp_alloc_malloc_n((size_t)B * T, sizeof(double)), *epms = dp_alloc_malloc_n((size_t)B * 2, sizeof(double));
    int *mv = dp_alloc_malloc_n((size_t)B * T * 2, sizeof(int));
    uint64_t *epseed = dp_alloc_malloc_n((size_t)B, sizeof(uint64_t));
    double *epwall = dp_alloc_malloc_n((size_t)B, sizeof(double));
    int *start = NULL, *cur = NULL;
    if (!tg || !train_idx || !master || !r || !stepgrad || !grad || !rew || !ret || !logmu || !epms || !mv || !epseed || !epwall) {
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
        if ((rc = resume_load(m, io->checkpoint, io->trajectory, n_graphs, g, c, e, validation, tg, elites, n_elites, &rs, master, err)) !=
            DP_OK)
            goto done;
    } else {
        gsl_rng_set(master, (unsigned long)cfg->seed);
        if (init_params && (rc = dp_improve_model_init(m, master)) != DP_OK) { dp_error_set(err, rc, "out of memory"); goto done; }
        for (int b = 0; b < 2; b++) { /* Adam afresh (a loaded model's moments are not read) */
            dp_nn_params *p = b ? move : op;
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
    if (res) res->eval_every = eval_every;
    /* episodes run in whole batches: the count is rounded up to a multiple of the batch */
    const long n_ep = (cfg->episodes + B - 1) / B * B;
    /* fewer episodes than the run has done: nothing would train, and the figures printed were of
     * an earlier evaluation under a later episode's name (a review) */
    if (resume && rs.episode > n_ep) {
        rc = dp_error_set(err, DP_EINVAL, "%s: the run has done %ld episodes, more than the %ld asked (--episodes): give at "
                          "least %ld, or none for the run's own count", io->checkpoint, rs.episode, n_ep, rs.episode);
        goto done;
    }
    /* the starting parameters are a candidate too: model selection never returns parameters
     * that score worse than those training started from (their row goes with the first batch's) */
    if (n_val > 0 && rs.sel.evaluations == 0 && (rc = select_model(m, cfg, n_graphs, g, c, e, validation, tg, cur, &rs, err)) != DP_OK)
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
        dp_nn_params_zero_grad(op);
        dp_nn_params_zero_grad(move);
        for (int b = 0; b < B; b++) {
            const double t0 = now_s();
            epseed[b] = gsl_rng_get(master);
            gsl_rng_set(r, (unsigned long)epseed[b]);
            memcpy(cur, start, (size_t)n * sizeof(int));
            dp_engine_schedule sch;
            if ((rc = dp_engine_run(e[gi], cur, NULL, &sch, err)) != DP_OK) {
                /* (an error that named no graph: a review) */
                dp_error_prefix(err, "%s: an episode's start placement (cp, round-robin or random; under a memory limit "
                                "they may exceed it: --memory-policy penalty trains on the penalised makespan)",
                                gg->source);
                goto done;
            }
            rs.sims++;
            double cur_ms = sch.cost;
            epms[2 * b] = cur_ms;
            dp_improve_state_set(t->st, cur, &sch);
            for (int s = 0; s < T; s++) {
                const size_t k = (size_t)b * T + s;
                float *sg = stepgrad + k * P;
                memset(op->grad, 0, P1 * sizeof(float));
                memset(move->grad, 0, (P - P1) * sizeof(float));
                int u, d;
                dp_improve_state_sample(t->st, cfg->epsilon, r, &u, &d, &logmu[k], 1);
                memcpy(sg, op->grad, P1 * sizeof(float));
                memcpy(sg + P1, move->grad, (P - P1) * sizeof(float));
                mv[2 * k] = u;
                mv[2 * k + 1] = d;
                const int du = cur[u];
                cur[u] = d;
                /* a move over a memory limit is a rejected move, its simulation counted, as in
                 * the search (it ended the training with the limit's error, naming no graph) */
                double ms = 0;
                rc = dp_search_move_over_limit(dp_engine_run(e[gi], cur, NULL, &sch, err), &ms);
                if (rc != DP_OK) {
                    dp_error_prefix(err, "%s", gg->source);
                    goto done;
                }
                if (isfinite(ms)) ms = sch.cost;
                rs.sims++;
                if (ms <= cur_ms) {
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
            memcpy(op->grad, grad, P1 * sizeof(float));
            memcpy(move->grad, grad + P1, (P - P1) * sizeof(float));
            dp_nn_params *blk[2] = {op, move};
            for (int q = 0; q < 2; q++) {
                if (cfg->grad_clip > 0) dp_nn_clip_grad_norm(blk[q], cfg->grad_clip);
                dp_nn_adam_step(blk[q], (float)lr, 0.9f, 0.999f, 1e-8f, 0.0f);
            }
        }
        /* trajectory rows and progress */
        double gain = 0, ratio = 0;
        for (int b = 0; b < B; b++) {
            dp_h5io_traj_episode re = {DP_TRAIN_STAGE_SIM, ep + b, epseed[b], epms[2 * b + 1] / t->lb,
                                       (epms[2 * b] - epms[2 * b + 1]) / t->lb, epwall[b], lr, cfg->epsilon, NAN, NAN,
                                       rs.traj.file_st + rs.traj.n_st, T};
            gain += re.reward / B;
            ratio += re.makespan / B;
            dp_h5io_traj_step *row_st = io && io->trajectory ? dp_runtime_traj_push(&rs.traj, &re, T) : NULL;
            if (io && io->trajectory && !row_st) { rc = dp_error_set(err, DP_ENOMEM, "out of memory for trajectory rows"); goto done; }
            for (int s = 0; row_st && s < T; s++) {
                const size_t k = (size_t)b * T + s;
                dp_h5io_traj_step *st = &row_st[s];
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
            (rc = select_model(m, cfg, n_graphs, g, c, e, validation, tg, cur, &rs, err)) != DP_OK)
            goto done;
        const int stopping = !last && io && io->stop && *io->stop;
        /* the trajectory's rows go to its file where a checkpoint is written (or would be), as
         * the DOPPLER trainer's do: each append rewrites the file whole (atomically), and one a
         * batch wrote 6.7 GB for an 8.8 MB file at 12,000 episodes (a walkthrough); a kill loses
         * the rows since the last checkpoint either way (--resume cuts the file back to them) */
        if (last || stopping || rs.episode % every == 0) {
            if ((rc = dp_runtime_traj_flush(&rs.traj, io ? io->trajectory : NULL, err)) != DP_OK) goto done;
            if (io && io->checkpoint &&
                (rc = save(m, cfg, io->checkpoint, n_graphs, g, c, e, validation, tg, elites, n_elites, &rs, master, err)) !=
                    DP_OK)
                goto done;
        }
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
        res->evaluations = rs.sel.evaluations;
        res->final_score = rs.sel.evaluations ? rs.sel.last_score : NAN;
        res->selected_score = rs.sel.has_best ? rs.sel.best_score : NAN;
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
    dp_runtime_select_free(&rs.sel);
    dp_runtime_traj_free(&rs.traj);
    gsl_rng_free(master);
    gsl_rng_free(r);
    free(stepgrad); free(grad); free(rew); free(ret); free(logmu); free(epms); free(mv); free(epseed); free(epwall);
    free(start); free(cur);
    return rc;
}
