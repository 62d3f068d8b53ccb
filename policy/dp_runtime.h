/* dp_runtime.h: the trainer runtime, the pieces of a training run that both trainers share
 * (dp_train.h: DOPPLER, Placeto and GDP; dp_improve.h: the improvement method), so that each
 * trainer supplies only its rollouts and gradients:
 *   - trajectory rows waiting for the next append to the run's trajectory file (dp_h5io.h), the
 *     rows the file holds, and a resumed run's trajectory cut back to its checkpoint;
 *   - model selection: the parameters (two blocks) whose evaluation scored best so far, the
 *     latest score, and patience (evaluations in a row without a better score);
 *   - a checkpoint's run bookkeeping: what the run trained on (the trained_on JSON), its
 *     generator's state written and restored, a resume refused when the graphs differ.
 * Scores are whatever the trainer evaluates (lower is better): a raw greedy makespan, or a mean
 * ratio over several graphs. Errors: DP_ENOMEM, and those of dp_h5io.h naming the file. */
#ifndef DP_RUNTIME_H
#define DP_RUNTIME_H

#include <gsl/gsl_rng.h>

#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_graph.h"
#include "dp_h5io.h"
#include "dp_nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- trajectory rows ---- */

typedef struct dp_runtime_traj {
    dp_h5io_traj_episode *ep; /* pending rows (n_* of cap_*) */
    dp_h5io_traj_step *st;
    dp_h5io_traj_eval *ev;
    long n_ep, cap_ep, n_st, cap_st, n_ev, cap_ev;
    long file_ep, file_st, file_ev; /* rows in the file (file_ev -1: not known yet, an older
                                       checkpoint's resume, counted by dp_runtime_traj_resume) */
} dp_runtime_traj;

/* Zero t (no rows, nothing in the file). */
void dp_runtime_traj_init(dp_runtime_traj *t);
/* Free t's rows and zero it again (as dp_runtime_traj_init: a second free is harmless); the struct
 * itself is the caller's. t NULL: nothing to do. */
void dp_runtime_traj_free(dp_runtime_traj *t);
/* Add episode row e and room for its n_steps step rows, which the caller fills through the
 * pointer returned (rows st[n_st - n_steps .. n_st - 1]); NULL when out of memory. */
dp_h5io_traj_step *dp_runtime_traj_push(dp_runtime_traj *t, const dp_h5io_traj_episode *e, long n_steps);
/* Add an evaluation row. DP_OK or DP_ENOMEM (err set). */
int dp_runtime_traj_push_eval(dp_runtime_traj *t, const dp_h5io_traj_eval *v, dp_error *err);
/* Append the pending rows to the trajectory file at path (NULL: none, the rows are dropped), count
 * them as the file's and empty the buffers. Errors: dp_h5io_traj_append_rows's. */
int dp_runtime_traj_flush(dp_runtime_traj *t, const char *path, dp_error *err);
/* A resumed run's trajectory: the file at path must be of run run_id (dp_h5io_traj_check_run)
 * and is cut back to t's file_* rows (the checkpoint's); file_ev < 0 keeps the evaluation rows
 * and counts them. Pending rows are dropped. */
int dp_runtime_traj_resume(dp_runtime_traj *t, const char *path, const char *checkpoint, const char *run_id, dp_error *err);

/* ---- model selection and patience ---- */

typedef struct dp_runtime_select {
    dp_nn_params *blk[2]; /* the parameter blocks selected (the caller's) */
    float *best[2];       /* their values at the best evaluation (blk[i]->n floats each) */
    int has_best;         /* best[] hold parameters */
    double best_score;    /* INFINITY before any */
    double last_score;    /* the latest evaluation's (NAN before any) */
    int evaluations;      /* evaluations offered */
    int stale;            /* evaluations in a row without a better score (patience) */
} dp_runtime_select;

/* Bind s to the blocks a and b (b may have n 0) and allocate its copies. DP_ENOMEM. */
int dp_runtime_select_init(dp_runtime_select *s, dp_nn_params *a, dp_nn_params *b, dp_error *err);
/* Free the copies (best[], set to NULL: a second free is harmless); not the blocks, which are the
 * caller's. s NULL: nothing to do. */
void dp_runtime_select_free(dp_runtime_select *s);
/* Forget the selection (a new stage): no best, best_score INFINITY, stale 0. */
void dp_runtime_select_reset(dp_runtime_select *s);
/* One evaluation's score of the blocks' current values: counted, kept as last_score, and when
 * strictly better than best_score the values are copied as the best (stale 0; else stale + 1).
 * Returns 1 when it was the best so far, 0 otherwise. */
int dp_runtime_select_offer(dp_runtime_select *s, double score);
/* Copy the best values into the blocks; 0 (nothing changed) when there are none. */
int dp_runtime_select_use_best(dp_runtime_select *s);
/* Patience spent: patience > 0 and that many evaluations in a row without improvement. */
int dp_runtime_select_patience_spent(const dp_runtime_select *s, int patience);

/* ---- checkpoint bookkeeping ---- */

/* The trained_on JSON text of a checkpoint (dp_h5io.h) for n graphs g[i] with cost tables c[i]
 * simulated by engines[i] (its dp_engine_fingerprint as "engine"; engines or an entry NULL: not
 * said, e.g. real execution), validation[i] 1 for a model-selection graph (validation NULL:
 * none); malloc'd, NULL when out of memory. */
char *dp_runtime_trained_on(int n, const dp_graph *const *g, const dp_cost *const *c, dp_engine *const *engines,
                            const int *validation);
/* A resume of checkpoint path on the graphs `mine` (dp_runtime_trained_on's text) continues its
 * run: dp_h5io_trained_on_check, and with `required` 1 a checkpoint that does not say what it
 * trained on is refused ("PATH: a run on other graphs (not said) ..."). */
int dp_runtime_resume_check(const char *path, const char *mine, int required, dp_error *err);
/* What the runtime keeps, into ck for writing (dp_h5io_ckpt_write): the generator's name and
 * state (pointing into r), model selection (has_best, best_greedy, the best parameters as
 * sel_best and plc_best, stale, the latest score as last_greedy) and the trajectory file's row
 * counts. */
void dp_runtime_ckpt_put(dp_h5io_ckpt *ck, gsl_rng *r, const dp_runtime_select *s, const dp_runtime_traj *t);
/* Make ck ready for dp_h5io_ckpt_read: zeroed, the graph's size, same_graph, a buffer for r's
 * state and s's best-parameter buffers (the caller sets the rest: best_assignment, blocks, ...).
 * DP_ENOMEM. Release with dp_runtime_ckpt_release, read or not. */
int dp_runtime_ckpt_prepare(dp_h5io_ckpt *ck, int n_ops, int n_devices, int same_graph, const gsl_rng *r, dp_runtime_select *s,
                            dp_error *err);
/* After a successful read of checkpoint path into ck: s's best and its score; with resume 1 also
 * r's state (DP_EINVAL "PATH: generator NAME, expected NAME" when the checkpoint's generator is
 * another), s's patience and t's file row counts (traj_evaluations -1, a checkpoint that does not
 * count them: dp_runtime_traj_resume counts the file's). */
int dp_runtime_ckpt_take(const char *path, const dp_h5io_ckpt *ck, int resume, gsl_rng *r, dp_runtime_select *s,
                         dp_runtime_traj *t, dp_error *err);
/* Free what dp_runtime_ckpt_prepare and the read allocated: the generator's buffer, graph,
 * config_json and method_state. */
void dp_runtime_ckpt_release(dp_h5io_ckpt *ck);

#ifdef __cplusplus
}
#endif
#endif
