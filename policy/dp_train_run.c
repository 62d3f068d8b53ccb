/* dp_train_run.c: the trainer's training loop (see dp_train.h, dp_train_impl.h): a stage's batches
 * of episodes, their rewards and baselines, the batch's summed gradient and optimiser step,
 * evaluations with model selection and patience, trajectory rows and checkpoints at their
 * boundaries, and the pipeline of stages. What data-parallel ranks exchange is dp_train_mpi.c's. */
#include "dp_train.h"
#include "dp_alloc.h"
#include "dp_train_impl.h"
#include "dp_runtime.h"
#include "dp_h5io.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_rng.h>

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

/* Greedy placement with the current parameters; keep them when it is the best so far. Runs at
 * checkpoint boundaries (after an update), so it disturbs neither gradients nor the RNG. */
static int eval_greedy(dp_train *tr, dp_error *err)
{
    double ms;
    int rc = dp_train_eval_score(tr, &ms, err);
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

/* ---- an episode's gradient, summed in episode order ---- */

static void grad_state_get(dp_train *tr, dp_train_grad_state *s)
{
    s->n = dp_agent_grad_state(tr->ag, s->p, s->len, 8);
    s->total = 0;
    for (int i = 0; i < s->n; i++) s->total += s->len[i];
}

/* dst = the episode's gradient (first) or dst += it, element by element; then the agent's
 * state is zero again, ready for the next episode. */
void dp_train_grad_take(const dp_train_grad_state *s, float *dst, int first)
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
static void grad_put(const dp_train_grad_state *s, const float *src)
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
                                agree[0], agree[1], x->done_here / fmax(dp_train_now_s() - x->t0, 1e-9), last || stop};
        x->io->progress(&pr, x->io->progress_ctx);
    }
    return DP_OK;
}

/* Episode j of the batch (episode e of the stage) rolled out from its seed in rollout mode mode,
 * at the stage's exploration for e (*eps); replay: the rollout again for its backward, without
 * simulating (the makespan is known: *ms is NaN). The same seed, parameters and forced first
 * device give the same choices. */
static int episode_from_seed(dp_train *tr, const dp_train_stage *st, int mode, long j, long e, uint64_t seed, int replay,
                             double *eps, double *ms, double agree[2], dp_error *err)
{
    *eps = st->epsilon + (st->epsilon_final - st->epsilon) * ((double)e / (double)st->episodes);
    gsl_rng_set(tr->ep, (unsigned long)seed);
    tr->force_first_dev = st->forced_first ? (int)j : -1;
    tr->skip_oracle = replay;
    const int rc = dp_train_rollout(tr, mode, *eps, tr->ep, ms, agree, err);
    tr->force_first_dev = -1;
    tr->skip_oracle = 0;
    return rc;
}

/* The backward of the episode in hand (reward r, a batch of B) taken into dst: dst = its gradient
 * (first) or dst += it (dp_train_grad_take; dst a rank's slot for the exchange, or the batch's
 * sum). */
static int episode_backward(dp_train *tr, const dp_train_stage *st, const dp_train_grad_state *gs, double eps, double r, int B,
                            float *dst, int first, dp_error *err)
{
    if (dp_train_episode_grad(tr, st, eps, r, 1.0 / B) != DP_OK)
        return dp_error_set(err, DP_EINVAL, "internal error: a rebuilt ready set differs from the rollout's");
    dp_train_grad_take(gs, dst, first);
    return DP_OK;
}

static int run_stage(dp_train *tr, int stage, long episodes, const dp_train_io *io, dp_error *err)
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
        tr->stage_seconds0 = dp_train_seconds(tr);
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
                                tr->multi ? (tr->cfg.reference_best_instant ? "ratio to the best instant placement" : "ratio to the critical-path rollout in the training state") : tr->g->time_unit, cfg, tr->run_id, err);
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
    x.t0 = dp_train_now_s();
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
        dp_train_grad_state gs;
        grad_state_get(tr, &gs);
        long own[R];
        for (int q = 0; q < R; q++) own[q] = dp_train_rank_count(nb, R, q);
        const size_t RS = dp_train_rec_size(tr->n);
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
            const double te = dp_train_now_s();
            double eps;
            if ((rc = episode_from_seed(tr, st, mode, j, e, bseed[j], 0, &eps, &bms[j], bagree + 2 * j, err)) != DP_OK) break;
            bhash[j] = assignment_hash(tr->env->assignment, tr->n);
            if (!cm && keep_sil && dp_train_sil_offer(tr, st->sil_k, bms[j]) != DP_OK) {
                rc = dp_error_set(err, DP_ENOMEM, "out of memory for the self-imitation buffer");
                break;
            }
            if (x.batch_base) {
                bsec[j] = dp_train_now_s() - te;
                if (cm) dp_train_rec_pack(tr, rmine + (size_t)mine * RS, bms[j], bagree + 2 * j, bsec[j]);
                continue;
            }
            double r, avg = 0;
            if (!cm) r = episode_book(tr, &x, bms[j], tr->env->assignment, &avg);
            else r = x.greedy_base ? reward_of(tr, st, 0, x.base, 0, bms[j] / x.sc) : 0; /* 0: no policy gradient */
            if ((rc = episode_backward(tr, st, &gs, eps, r, B, cm ? gmine + (size_t)mine * gs.total : gsum, cm ? 1 : j == 0, err)) !=
                DP_OK)
                break;
            bsec[j] = dp_train_now_s() - te;
            if (cm) {
                dp_train_rec_pack(tr, rmine + (size_t)mine * RS, bms[j], bagree + 2 * j, bsec[j]);
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
            if ((rc = dp_train_gather(cm, rmine, own, RS * sizeof *rmine, rall, err)) != DP_OK) break;
            tr->sims += nb - own[me]; /* the other ranks' rollouts */
            for (long j = 0; j < nb && rc == DP_OK; j++) {
                const double *rec = rall + (size_t)dp_train_rank_slot(nb, R, j) * RS;
                bms[j] = rec[DP_TRAIN_REC_MS];
                bagree[2 * j] = rec[DP_TRAIN_REC_AGREE0];
                bagree[2 * j + 1] = rec[DP_TRAIN_REC_AGREE1];
                bsec[j] = rec[DP_TRAIN_REC_SECONDS];
                if (keep_sil) {
                    dp_train_rec_load(tr, rec, rassign);
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
                const double te = dp_train_now_s();
                double eps, ms;
                if ((rc = episode_from_seed(tr, st, mode, j, e, bseed[j], 1, &eps, &ms, NULL, err)) != DP_OK) break;
                /* the replay must be the rollout: same seed, same parameters, same choices */
                if (assignment_hash(tr->env->assignment, tr->n) != bhash[j]) {
                    rc = dp_error_set(err, DP_EINVAL, "internal error: the replay of episode %ld differs from its rollout", e);
                    break;
                }
                double r, avg = 0;
                if (!cm) r = episode_book(tr, &x, bms[j], tr->env->assignment, &avg);
                else r = reward_of(tr, st, 1, x.bmean, x.bsd, bms[j] / x.sc);
                if ((rc = episode_backward(tr, st, &gs, eps, r, B, cm ? gmine + (size_t)mine * gs.total : gsum, cm ? 1 : j == 0,
                                           err)) != DP_OK)
                    break;
                if (cm) continue;
                tr->episode++;
                if (j == nb - 1) stop = io->stop && *io->stop;
                rc = episode_report(tr, &x, e, bseed[j], bms[j], r, avg, bagree + 2 * j, bsec[j] + dp_train_now_s() - te, stop, err);
            }
            if (rc != DP_OK) break;
        }
        if (cm) {
            /* every episode's gradient, summed in episode order; any rank's stop stops all */
            if ((rc = dp_train_gather(cm, gmine, own, gs.total * sizeof *gmine, gall, err)) != DP_OK) break;
            for (long j = 0; j < nb; j++) {
                const float *g = gall + (size_t)dp_train_rank_slot(nb, R, j) * gs.total;
                if (j == 0) memcpy(gsum, g, gs.total * sizeof *gsum);
                else
                    for (size_t k = 0; k < gs.total; k++) gsum[k] += g[k];
            }
            int st_me = io->stop && *io->stop, st_all[R];
            long one[R];
            for (int q = 0; q < R; q++) one[q] = 1;
            if ((rc = dp_train_gather(cm, &st_me, one, sizeof st_me, st_all, err)) != DP_OK) break;
            for (int q = 0; q < R; q++) stop |= st_all[q];
            if (stop && io->stop) *io->stop = 1;
            /* the batch's bookkeeping and rows, in episode order */
            for (long j = 0; j < nb && rc == DP_OK; j++) {
                const double *rec = rall + (size_t)dp_train_rank_slot(nb, R, j) * RS;
                dp_train_rec_load(tr, rec, rassign);
                double avg;
                const double r = episode_book(tr, &x, bms[j], rassign, &avg);
                tr->episode++;
                rc = episode_report(tr, &x, e0 + j, bseed[j], bms[j], r, avg, bagree + 2 * j, bsec[j], j == nb - 1 && stop, err);
            }
            if (rc != DP_OK) break;
        }
        /* the batch's update: its summed gradient, then self-imitation's, one optimiser step */
        if ((rc = dp_train_sil_batch(tr, st, cm, &gs, gsum, err)) != DP_OK) break;
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
    /* a stage of 0 episodes: its checkpoint (the starting parameters, evaluated above) is written
     * too; it was only written after an episode, so `train` named a checkpoint, and a place
     * command for it, that did not exist (a review) */
    if (rc == DP_OK && st->episodes == 0 && tr->episode == 0) {
        if (io->trajectory) rc = dp_runtime_traj_flush(&tr->traj, io->trajectory, err);
        if (rc == DP_OK && io->checkpoint) rc = dp_train_checkpoint_write(tr, io->checkpoint, err);
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

/* the trainer's current parameters' FNV-1a (dp_train_pipeline_stage) */
static unsigned long long params_fnv1a(dp_train *tr)
{
    return dp_nn_params_checksum(dp_train_plc_params(tr), dp_nn_params_checksum(dp_train_sel_params(tr), DP_NN_FNV_OFFSET));
}

/* A placement of an episode or an evaluation over a resource limit (memory under the error
 * policy) stops the training: the error says so and what trains past it (it gave the engine's
 * message alone, which read as a fault of the machine: a review) */
int dp_train_run(dp_train *tr, int stage, long episodes, const dp_train_io *io, dp_error *err)
{
    const int rc = run_stage(tr, stage, episodes, io, err);
    if (rc == DP_ERANGE) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        dp_error_set(err, DP_ERANGE, "training stopped: %s (under --memory-policy error a placement over the limit has "
                     "no cost to learn from; --memory-policy penalty scores it by its excess)", msg);
    }
    return rc;
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
    /* resumed in its last stage with more episodes done than asked: nothing would train, and the
     * figures printed were the checkpoint's under the new count (a review; the improvement
     * method's training refuses the same) */
    if (first == n_stages - 1 && tr->stage == stages[first]) {
        const long want = episodes && episodes[first] > 0 ? episodes[first] : tr->cfg.stage[stages[first]].episodes;
        if (tr->episode > want) {
            free(tmp);
            return dp_error_set(err, DP_EINVAL, "%s: the run has done %ld episodes of stage %s, more than the %ld asked "
                                "(--episodes): give at least %ld, or none for the run's own count",
                                io && io->checkpoint ? io->checkpoint : "the checkpoint", tr->episode,
                                dp_train_stage_name(stages[first]), want, tr->episode);
        }
    }
    for (int k = 0; k < n_stages; k++) {
        dp_train_pipeline_stage *r = &out->stage[k];
        r->stage = stages[k];
        r->done = 0;
        r->before_resume = k < first;
        r->final_greedy = r->selected_greedy = r->best_sample = NAN;
        r->agree[0] = r->agree[1] = NAN;
        memset(&r->agreement, 0, sizeof r->agreement);
        memset(&r->agreement_selected, 0, sizeof r->agreement_selected);
        r->sims = 0;
        r->seconds = 0;
        r->final_fnv1a = r->selected_fnv1a = 0;
    }
    out->n_stages = n_stages;
    out->stopped = 0;
    for (int k = first; k < n_stages && rc == DP_OK; k++) {
        dp_train_pipeline_stage *r = &out->stage[k];
        const long sims0 = tr->sims;
        const double t0 = dp_train_now_s();
        if ((rc = dp_train_run(tr, stages[k], episodes ? episodes[k] : 0, io, err)) != DP_OK) break;
        /* a stop at the stage's end is every rank's or none's: rank 0 writes the stage's
         * checkpoint after the others have gone on, and a signal in that gap stopped it alone
         * while they waited for it in the next stage (a review of MPI training) */
        int stop_here = io && io->stop && *io->stop;
        const dp_train_comm *cm = tr->comm && tr->comm->size > 1 ? tr->comm : NULL;
        if (cm) {
            const int R = cm->size;
            int st_all[R];
            long one[R];
            for (int q = 0; q < R; q++) one[q] = 1;
            if ((rc = dp_train_gather(cm, &stop_here, one, sizeof stop_here, st_all, err)) != DP_OK) break;
            for (int q = 0; q < R; q++) stop_here |= st_all[q];
            if (stop_here && io && io->stop) *io->stop = 1;
        }
        if (stop_here) {
            out->stopped = 1;
            break;
        }
        r->episodes = tr->episode;
        r->best_sample = tr->best;
        /* with several graphs: the validation score (mean ratio to the references) of the final
         * and the model-selected parameters, and the first graph's placement */
        if (tr->multi && (rc = dp_train_eval_score(tr, &r->final_greedy, err)) != DP_OK) break;
        const double g0 = r->final_greedy;
        if ((rc = dp_train_place(tr, samples, seed, tmp, &r->final_greedy, r->agree, err)) != DP_OK) break;
        if (tr->multi) r->final_greedy = g0;
        if (samples <= 0) dp_train_agreement_get(tr, &r->agreement); /* else the last sample's: none */
        r->agreement_selected = r->agreement;
        r->selected_greedy = r->final_greedy;
        r->final_fnv1a = r->selected_fnv1a = params_fnv1a(tr);
        /* model selection: the next stage (and the result) start from the parameters whose greedy
         * placement was best at the stage's evaluations, as `doppler train --init` does */
        if (model_selection && dp_train_use_best(tr)) {
            if (tr->multi && (rc = dp_train_eval_score(tr, &r->selected_greedy, err)) != DP_OK) break;
            const double g1 = r->selected_greedy;
            if ((rc = dp_train_place(tr, samples, seed, tmp, &r->selected_greedy, NULL, err)) != DP_OK) break;
            if (tr->multi) r->selected_greedy = g1;
            if (samples <= 0) dp_train_agreement_get(tr, &r->agreement_selected);
            r->selected_fnv1a = params_fnv1a(tr);
        }
        /* the stage's whole count and time: a resumed stage began in an earlier process (its
         * time was the part after the restart: a sweep's killed run; a review) */
        const int began_before = k == first && tr->stage_sims0 < sims0;
        r->sims = tr->sims - (began_before ? tr->stage_sims0 : sims0);
        r->seconds = began_before ? dp_train_seconds(tr) - tr->stage_seconds0 : dp_train_now_s() - t0;
        r->done = 1;
        if (assignment) memcpy(assignment, tmp, (size_t)n * sizeof(int));
    }
    free(tmp);
    return rc;
}
