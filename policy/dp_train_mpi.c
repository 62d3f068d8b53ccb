/* dp_train_mpi.c: the trainer's data-parallel ranks (dp_train_comm, dp_train.h): which rank rolls
 * out which episode of a batch, the episode records and gradients the ranks exchange, the
 * self-imitation replays of a batch and the model-selection score's graphs shared among them, and
 * the check that a stage can be split over ranks. With one process (comm NULL) the replays and
 * the score are computed whole, in the same order. */
#include "dp_train.h"
#include "dp_alloc.h"
#include "dp_train_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- which rank rolls out which episode, and what the ranks exchange ---- */

/* Episodes j < nb of a batch that rank r rolls out (j mod R == r), and where rank r's come in
 * the rank-ordered concatenation of an allgather. */
long dp_train_rank_count(long nb, int R, int r)
{
    return r < nb ? (nb - r + R - 1) / R : 0;
}
static long rank_offset(long nb, int R, int r)
{
    long o = 0;
    for (int q = 0; q < r; q++) o += dp_train_rank_count(nb, R, q);
    return o;
}
/* The position of episode j in that concatenation. */
long dp_train_rank_slot(long nb, int R, long j)
{
    return rank_offset(nb, R, (int)(j % R)) + j / R;
}

/* Allgather of each rank's own[rank] items of size bytes each (own: the items per rank). */
int dp_train_gather(const dp_train_comm *cm, const void *mine, const long *own, size_t size, void *all, dp_error *err)
{
    size_t counts[cm->size];
    for (int r = 0; r < cm->size; r++) counts[r] = (size_t)own[r] * size;
    return cm->allgather(cm->ctx, mine, counts, all, err);
}

/* An episode's record as the ranks exchange it: makespan, agreement, seconds, then per step the
 * op, its device, the ready-set size, both log-probabilities, and the assignment (by op). */
size_t dp_train_rec_size(int n)
{
    return DP_TRAIN_REC_HEAD + 6 * (size_t)n;
}
void dp_train_rec_pack(const dp_train *tr, double *rec, double ms, const double agree[2], double seconds)
{
    const int n = tr->n, D = tr->D;
    rec[DP_TRAIN_REC_MS] = ms;
    rec[DP_TRAIN_REC_AGREE0] = agree[0];
    rec[DP_TRAIN_REC_AGREE1] = agree[1];
    rec[DP_TRAIN_REC_SECONDS] = seconds;
    double *x = rec + DP_TRAIN_REC_HEAD;
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
void dp_train_rec_load(dp_train *tr, const double *rec, int *assign)
{
    const int n = tr->n, D = tr->D;
    const double *x = rec + DP_TRAIN_REC_HEAD;
    for (int t = 0; t < n; t++, x += 6) {
        tr->sel_v[t] = (int)x[0];
        tr->plc_a[t] = (int)x[1];
        tr->sel_nr[t] = (int)x[2];
        tr->sel_lpa[t] = (float)x[3];
        tr->plc_lp[(size_t)t * D + tr->plc_a[t]] = (float)x[4];
        assign[t] = (int)x[5];
    }
}

/* ---- a batch's self-imitation replays and the model-selection score, shared among the ranks ---- */

/* Self-imitation after a batch (dp_train_impl.h): the buffer's replays, shared among the ranks
 * as a batch's episodes are (replay k by rank k mod R), each one's gradient added to the batch's
 * sum gsum in replay order. */
int dp_train_sil_batch(dp_train *tr, const dp_train_stage *st, const dp_train_comm *cm, const dp_train_grad_state *gs,
                       float *gsum, dp_error *err)
{
    if (!(st->sil_weight > 0) || tr->sil_n == 0) return DP_OK;
    const int R = cm ? cm->size : 1, me = cm ? cm->rank : 0;
    const int cap = (st->sil_replays > tr->sil_n ? st->sil_replays : tr->sil_n) + 1;
    int *idx = dp_alloc_malloc_n((size_t)cap, sizeof *idx);
    double *w = dp_alloc_malloc_n((size_t)cap, sizeof *w);
    long own[R];
    const int m = idx && w ? dp_train_sil_plan(tr, st, idx, w) : 0;
    for (int q = 0; q < R; q++) own[q] = dp_train_rank_count(m, R, q);
    float *mine = cm ? dp_alloc_malloc_n((size_t)own[me] * gs->total + 1, sizeof *mine) : NULL;
    float *all = cm ? dp_alloc_malloc_n((size_t)m * gs->total + 1, sizeof *all) : NULL;
    int rc = DP_OK;
    if (!idx || !w || (cm && (!mine || !all))) rc = dp_error_set(err, DP_ENOMEM, "out of memory for self-imitation");
    long k = 0;
    for (int j = me; j < m && rc == DP_OK; j += R, k++)
        if ((rc = dp_train_sil_imitate(tr, st, idx[j], w[j], err)) == DP_OK) dp_train_grad_take(gs, cm ? mine + (size_t)k * gs->total : gsum, cm != NULL);
    if (rc == DP_OK && cm && (rc = dp_train_gather(cm, mine, own, gs->total * sizeof *mine, all, err)) == DP_OK)
        for (int j = 0; j < m; j++) {
            const float *g = all + (size_t)dp_train_rank_slot(m, R, j) * gs->total;
            for (size_t i = 0; i < gs->total; i++) gsum[i] += g[i];
        }
    free(idx);
    free(w);
    free(mine);
    free(all);
    return rc;
}

/* The model-selection score of the current parameters: the greedy makespan of the graph (raw
 * unit); with several graphs bound, the mean over the validation graphs (the training graphs
 * when there are none) of the greedy makespan divided by the graph's reference (the
 * critical-path heuristic's makespan). One simulation per graph scored. */
int dp_train_eval_score(dp_train *tr, double *score, dp_error *err)
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
        rc = dp_train_gather(cm, ms, own, sizeof *ms, all, err);
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
