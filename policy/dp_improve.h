/* dp_improve.h: a learned improvement method (this project's; not in the DOPPLER paper).
 *
 * Where DOPPLER builds a placement op by op and learns from one makespan per placement, this
 * policy looks at a COMPLETE placement and its simulated schedule and proposes one move: an op
 * and the device it should go to. Every move is simulated, so every decision gets its own,
 * exact reward (the makespan change). doc/improve.md describes the method.
 *
 * State (dp_improve_state_set): the engine's schedule of the current placement (dp_engine.h),
 * read as per-op features, all normalised per graph (times by the makespan, loads by the mean
 * load, degrees by the largest), so nothing depends on the op or device count:
 *   op (DP_IMPROVE_OP_FEATURES): slack (latest start minus start in the schedule's DAG, whose
 *     edges are the data edges with their transfers and the order of ops on each device), on
 *     the critical path (slack 0), start, end, duration, queueing wait, transfer wait, share of
 *     in- and out-edges that cross devices, its device's load and idle share, tail (makespan
 *     minus latest start), degree, the share of critical predecessors and successors;
 *   move (DP_IMPROVE_MOVE_FEATURES, per op v and device d != its own): the change of v's data
 *     arrival on d, of its incoming and outgoing transfer times, d's load and idle share, d's
 *     idle share in the window where v would run there, v's op time on d relative to its own
 *     device's, the share of v's neighbours on d and on its own device, d least loaded.
 * Action: op v ~ softmax over all ops of an op network's scores (block "op": an MLP over the
 * op features), then device d ~ softmax over the other devices of a move network's scores
 * (block "move": an MLP over the op's and the move's features). Both networks are shared by
 * every op and device, so one model places any graph on any device count.
 * Costs per decision: features O(n log n + e), the op network over n ops (recomputed only when
 * a move is accepted), the move network over D - 1 devices, and ONE simulation.
 */
#ifndef DP_IMPROVE_H
#define DP_IMPROVE_H

#include <gsl/gsl_rng.h>
#include <signal.h>
#include <stdint.h>

#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_graph.h"
#include "dp_nn.h"
#include "dp_oracle.h"
#include "dp_search.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_IMPROVE_OP_FEATURES 15
#define DP_IMPROVE_MOVE_FEATURES 10
/* The feature set's name, recorded in checkpoints: a checkpoint of another one is refused. */
#define DP_IMPROVE_FEATURES_NAME "improve-v1"

typedef struct dp_improve_arch {
    int hidden;        /* width of both MLPs' two hidden layers (default 32) */
    float slope;       /* leaky ReLU slope (0.01) */
} dp_improve_arch;

typedef struct dp_improve_config {
    dp_improve_arch arch;
    long episodes;          /* training episodes (default 1000) */
    int horizon;            /* moves per episode, each one simulation (32) */
    int nstep;              /* n of the n-step return: a move is credited with the rewards of
                             * itself and the next nstep - 1 moves (4) */
    double gamma;           /* discount within the n-step return (0.9) */
    int batch;              /* episodes per Adam step; a batch shares one graph and one start (8) */
    double lr, lr_final;    /* Adam learning rate, decaying linearly (1e-3 -> 1e-4) */
    double epsilon;         /* exploration: a uniform op (and device) with this probability, the
                             * log-likelihood being the mixture's (0.1) */
    double grad_clip;       /* max gradient norm per network (1) */
    double elite_prob;      /* chance that a batch starts from the best placement training found
                             * so far on its graph instead of cp, round-robin or random (0.5) */
    uint64_t seed;          /* 1 */
    long checkpoint_every;  /* episodes between checkpoints (200), rounded up to a batch multiple */
    long eval_every;        /* episodes between model-selection evaluations on the validation
                             * graphs (1000), rounded up to a batch multiple; the start and the
                             * end are evaluated too */
    long eval_budget;       /* simulations of each evaluation's search on a validation graph (200) */
} dp_improve_config;

/* Set every field of c (non-NULL, unchecked) to the defaults in parentheses above: hidden 32,
 * slope 0.01, episodes 1000, horizon 32, nstep 4, gamma 0.9, batch 8, lr 1e-3 to lr_final 1e-4,
 * epsilon 0.1, grad_clip 1, elite_prob 0.5, seed 1, checkpoint_every 200, eval_every 1000,
 * eval_budget 200. */
void dp_improve_config_default(dp_improve_config *c);
/* Override c by a JSON object {"method": "improve", "improve": {"hidden", "slope", "episodes",
 * "horizon", "nstep", "gamma", "batch", "lr", "lr_final", "epsilon", "grad_clip", "elite_prob",
 * "checkpoint_every", "eval_every", "eval_budget"}, "seed"}; any subset, unknown keys and bad values
 * are DP_EINVAL naming the key. */
int dp_improve_config_from_json_text(dp_improve_config *c, const char *text, dp_error *err);
/* The same from the JSON file at path (dp_schema_load): a file that cannot be read or is not
 * JSON fails with dp_json_load's error (naming its line and column), a bad key or value with
 * DP_EINVAL prefixed "PATH: ". On an error c may hold the keys read before it (read into a
 * copy to keep the old config). */
int dp_improve_config_load(dp_improve_config *c, const char *path, dp_error *err);
/* The config's tables (dp_schema.h): the keys under "improve" (types, ranges, defaults, help); the
 * top level's "method", "features" and "seed" are read by hand. */
const dp_schema_section *dp_improve_config_sections(void);
/* The config as JSON text (malloc'd), with "method": "improve" and "features". */
char *dp_improve_config_to_json(const dp_improve_config *c);

/* ---- the model: two parameter blocks, "op" (op network) and "move" (move network) ---- */

typedef struct dp_improve_model dp_improve_model;

/* A model of architecture a (NULL: the default, hidden 32 and slope 0.01): the two blocks
 * allocated, every parameter 0 until dp_improve_model_init (or a checkpoint's are copied in).
 * NULL with err: DP_EINVAL for hidden < 1, DP_ENOMEM. Free with dp_improve_model_free. */
dp_improve_model *dp_improve_model_alloc(const dp_improve_arch *a, dp_error *err);
/* Free the model and its two parameter blocks (dp_improve_op_params' and
 * dp_improve_move_params' pointers are invalid after it); its states (dp_improve_state_alloc)
 * must be freed first. NULL is a no-op. */
void dp_improve_model_free(dp_improve_model *m);
/* Orthogonal weights (gain sqrt 2, the last layer 0.01), zero biases, drawn from r. */
int dp_improve_model_init(dp_improve_model *m, gsl_rng *r);
/* The op network's and the move network's parameter blocks, and the architecture: owned by m,
 * valid until dp_improve_model_free. */
dp_nn_params *dp_improve_op_params(dp_improve_model *m);
dp_nn_params *dp_improve_move_params(dp_improve_model *m);
const dp_improve_arch *dp_improve_model_arch(const dp_improve_model *m);

/* Read a checkpoint written by dp_improve_train into a new model (*out): its model-selected
 * parameters (the best on the validation graphs, dp_improve_train) when it holds them, else its
 * final ones, as DOPPLER's checkpoints are placed with (place --checkpoint, --proposals, --init).
 * Refused (DP_EINVAL) naming what differs: a checkpoint of another method ("PATH: not an improve
 * checkpoint (made by doppler)") or feature set ("PATH: incompatible checkpoint: feature set
 * improve-v0 in the checkpoint, improve-v1 here"); the checkpoint's errors otherwise
 * (dp_h5io_ckpt_read). */
int dp_improve_model_load(const char *path, dp_improve_model **out, dp_error *err);
/* The same with the final parameters (those training ended with) whether or not it holds
 * model-selected ones. */
int dp_improve_model_load_final(const char *path, dp_improve_model **out, dp_error *err);

/* ---- the policy on one graph ---- */

typedef struct dp_improve_state dp_improve_state;

/* A workspace for graph g under costs c (both outlive it) with model m (outlives it). */
dp_improve_state *dp_improve_state_alloc(const dp_improve_model *m, const dp_graph *g, const dp_cost *c, dp_error *err);
/* Free the workspace (not m, g or c). NULL is a no-op. */
void dp_improve_state_free(dp_improve_state *s);
/* Read the placement `assignment` and its schedule sch (the engine's last run of it): the op
 * features, the op network's forward and the op probabilities. */
void dp_improve_state_set(dp_improve_state *s, const int *assignment, const dp_engine_schedule *sch);
/* The op features of the state (n_ops x DP_IMPROVE_OP_FEATURES), for tests and inspection. */
const float *dp_improve_state_op_features(const dp_improve_state *s);
/* The move features of op v to every device (n_devices x DP_IMPROVE_MOVE_FEATURES; the row of
 * v's own device is zero) into y. */
void dp_improve_state_move_features(const dp_improve_state *s, int v, float *y);
/* Log-probability of the move (v, d) under the policy (d not v's device): log pi(v) + log pi(d|v). */
double dp_improve_state_logp(dp_improve_state *s, int v, int d);
/* Draw a move from the policy mixed with uniform choices: op v with probability
 * (1 - eps) pi(v) + eps / n, then d among the other devices likewise. *logmu (may be NULL) gets
 * the log of that behaviour probability. With grad: the gradient of -log mu with respect to the
 * parameters is ADDED to both blocks' grad arrays. */
void dp_improve_state_sample(dp_improve_state *s, double eps, gsl_rng *r, int *v, int *d, double *logmu, int grad);

/* ---- search ---- */

typedef struct dp_improve_search_config {
    dp_search_anneal_config anneal; /* budget (simulations, the start included), t0, t_end, schedule,
                              * swap_prob of the uniform moves, init, start: as annealing's */
    int greedy;              /* 0 (default): annealing's temperature schedule; 1: accept a move
                              * that is no worse (local search). EXPERIMENTS.md compares them */
    double mix;              /* probability that a move is annealing's uniform move instead of the
                              * policy's (default 0.2; 0.5 when it is annealing's proposal) */
    int restarts;            /* R >= 1 runs sharing the budget (default 10): the moves left after the
                              * start are split evenly (the first runs one more for a remainder);
                              * run 0 starts from the start, each later run from the best
                              * placement seen so far (restart_from_start 0) or from the start (1),
                              * after `perturb` uniform moves applied unsimulated; the run's first
                              * placement is simulated (one simulation of its share) and its
                              * temperature goes again from t0 to t_end times ITS makespan (a
                              * reheat; greedy acceptance: a plain restart). 1..DP_IMPROVE_MAX_RESTARTS */
    int perturb;             /* uniform moves (annealing's neighbourhood, swaps included) applied
                              * to a later run's first placement (default 10), 0..DP_IMPROVE_MAX_PERTURB */
    int restart_from_start;  /* 0 (default): later runs start from the best seen; 1: from the start */
    long min_run;            /* the fewest moves a run gets: the runs are min(restarts, max(1,
                              * moves left / min_run)), so that a small budget is not cut into
                              * runs too short to anneal (default 400; 0: no minimum) */
    double first_share;      /* share of the moves for run 0, in [0, 1] (its floor); the later runs
                              * split the rest evenly. 0 (default): all runs get an even share */
    double active_lr;        /* active search (Bello et al. 2017, "Neural combinatorial optimization
                              * with reinforcement learning", section 4.2): > 0 fine-tunes a copy of
                              * the model on the graph being placed while searching, with the
                              * search's own simulations: every policy move (not the uniform share)
                              * is a REINFORCE sample whose reward is its exact makespan change
                              * (accepted: old - new, rejected: 0, over the lower bound), its
                              * baseline an exponential average of the earlier rewards (0.9), the
                              * advantage divided by their running standard deviation; one Adam
                              * step of this learning rate every active_batch policy moves
                              * (gradient norm clipped at 1). No simulation beyond the budget.
                              * 0 (default): the model is fixed. In [0, 1] */
    int active_batch;        /* policy moves per Adam step of active search (default 16),
                              * 1..DP_IMPROVE_MAX_ACTIVE_BATCH */
} dp_improve_search_config;

#define DP_IMPROVE_MAX_RESTARTS 1000
#define DP_IMPROVE_MAX_PERTURB 100000
#define DP_IMPROVE_MAX_ACTIVE_BATCH 100000

/* The defaults: start "best-instant" (anneal.init; annealing's other defaults), annealing's
 * acceptance, mix 0.2, 10 restarts of at least 400 moves from the best with 10 perturbing moves,
 * no active search (active_lr 0, active_batch 16). */
void dp_improve_search_config_init(dp_improve_search_config *cfg);
/* Read {"accept": "greedy"|"anneal", "mix", "restarts", "min_run", "perturb",
 * "restart_from": "best"|"start", "first_share", "active_lr", "active_batch", "budget", "t0", "t_end", "schedule", "swap_prob", "init"} over cfg; unknown keys and bad values
 * (mix or first_share outside [0, 1], restarts, perturb or min_run not an integer in range) are
 * DP_EINVAL naming the file
 * and the key. */
int dp_improve_search_config_load(dp_improve_search_config *cfg, const char *path, dp_error *err);
/* The improvement search's tables as the sections of a config (dp_place_method.config of improve):
 * its own keys, then annealing's (dp_search_anneal_keys), at the top level. */
const dp_schema_section *dp_improve_search_sections(void);
/* DP_EINVAL naming the field for a config dp_improve_search would refuse (mix, restarts, perturb,
 * min_run, first_share out of range; annealing's checks, dp_search_check_config), else DP_OK. */
int dp_improve_search_check_config(const dp_improve_search_config *cfg, dp_error *err);

/* Improve the start placement with model m: each step samples a move (the policy's, or with
 * probability cfg->mix annealing's uniform move), simulates it, and accepts it by cfg's rule, in
 * cfg->restarts runs (see the config); the best placement seen over all runs is written to
 * assignment (never worse than the start, nor than any run's best). Spends exactly
 * cfg->anneal.budget simulations (the start's and the restarts' included; with one device only
 * the start's). The oracle must be an engine's
 * (dp_engine_oracle): the state is its schedule (DP_EINVAL otherwise). res as annealing's (its
 * trace: the best against simulations spent). Deterministic per seed. */
int dp_improve_search(const dp_improve_model *m, const dp_graph *g, const dp_cost *c, const dp_oracle *oracle,
                      const dp_improve_search_config *cfg, uint64_t seed, int *assignment, dp_search_result *res,
                      dp_error *err);

/* Annealing (annealing 1) or local search (0) as dp_search_anneal and dp_search_local, from
 * acfg's start, with the moves proposed by the improvement model of checkpoint `checkpoint`
 * mixed half and half with annealing's uniform moves (acfg->proposal is ignored), one run (no
 * restarts): `doppler place
 * --method anneal --proposals FILE`, and --refine with --proposals. Errors: the checkpoint's
 * (dp_improve_model_load), the search's. */
int dp_improve_propose_search(const char *checkpoint, int annealing, const dp_graph *g, const dp_cost *c,
                              const dp_oracle *oracle, const dp_search_anneal_config *acfg, uint64_t seed, int *assignment,
                              dp_search_result *res, dp_error *err);

/* The placement method "improve" (dp_place.h): the model of o->checkpoint (required) improves
 * the start placement (o->config: dp_improve_search_config_load's keys; default the best of the
 * six instant methods ("init": "best-instant", 6 simulations of the budget), annealing's
 * acceptance, mix 0.2, 10 restarts of at least 400 moves with 10 perturbing moves) for o->budget simulations (default 20000), seed o->seed. */
int dp_improve_place(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                     double *priority, int *has_priority, dp_error *err);
/* improve's check_config (dp_place.h): o->config read over the defaults, o->budget over its
 * budget, and checked (dp_improve_search_check_config), as dp_improve_place does before it loads
 * the checkpoint; DP_OK, or DP_EIO/DP_EINVAL naming the file and the key. */
int dp_improve_place_config(const dp_place_options *o, dp_error *err);

/* ---- training ---- */

typedef struct dp_improve_progress {
    long episode, episodes;
    double lr;
    double gain;          /* mean over the batch of (start - end makespan) / lower bound */
    double ratio;         /* mean over the batch of end makespan / lower bound */
    long simulations;
    int final;
} dp_improve_progress;

typedef struct dp_improve_io {
    const char *checkpoint;  /* written every checkpoint_every episodes, when stopped and at the end
                              * (NULL: none) */
    const char *trajectory;  /* trajectory file (dp_h5io.h; NULL: none): one episode row per
                              * episode (makespan: its end makespan / the lower bound, reward:
                              * the gain in the same unit), one step row per move (sel_op: the op,
                              * ready: the op count, plc_device: the device, *_logp: the log
                              * behaviour probabilities); one evaluation row per model-selection
                              * evaluation (makespan: its score, best: the best score so far) */
    void (*progress)(const dp_improve_progress *p, void *ctx);
    void *progress_ctx;
    int resume;              /* 1: continue the run of `checkpoint` where it stopped (its
                              * parameters, Adam state, generator, counters, per-graph best
                              * placements and model selection; the trajectory cut back to the rows
                              * the checkpoint accounts for): the run then ends exactly as an
                              * uninterrupted one would */
    volatile sig_atomic_t *stop; /* when it becomes non-zero, stop after the current batch with a
                              * checkpoint (NULL: never) */
} dp_improve_io;

/* What a training run did. Scores are the model-selection score: the mean over the validation
 * graphs of the best makespan of dp_improve_search (cfg->eval_budget simulations from cp, the
 * default search config, seed cfg->seed) divided by the graph's lower bound; NAN without
 * validation graphs. */
typedef struct dp_improve_result {
    long episodes;           /* episodes done (all of them unless stopped) */
    int stopped;             /* 1 when io->stop ended the run early */
    long simulations;        /* training simulations (the moves and each episode's start) */
    long eval_simulations;   /* the evaluations' simulations (validation graphs x eval_budget each) */
    int evaluations;         /* evaluations made, the start's included */
    long eval_every;         /* episodes between evaluations: cfg->eval_every rounded up to whole
                              * batches, as they ran */
    double final_score;      /* the final parameters' score (the last evaluation) */
    double selected_score;   /* the model-selected parameters' score: the best evaluation */
    long selected_episode;   /* the episode the model-selected parameters were evaluated at */
    long selected_simulations; /* training simulations spent to reach them */
} dp_improve_result;

/* Train m (its parameters initialised from cfg->seed when init_params, else as they are: fine-tuning
 * a loaded model, dp_improve_model_load; Adam starts afresh) on the graphs g[i] under costs c[i],
 * each simulated by its engine e[i] (i < n_graphs), those with validation[i] 1 (validation may be
 * NULL: none) used for model selection only: each batch samples a training graph and a start
 * (cp, round-robin, random, or the best placement found so far), then every episode makes
 * cfg->horizon moves from it, one simulation each; a move's reward is the makespan decrease it
 * brings under greedy acceptance (0 for a rejected move) divided by the graph's lower bound; its
 * return is the discounted sum over cfg->nstep moves, its advantage that minus the mean return of
 * the batch's episodes at the same step (a per-step baseline), divided by their standard
 * deviation; one Adam step per batch, cfg->episodes rounded up to whole batches (the progress
 * reports the rounded count). With validation graphs the parameters are scored (dp_improve_result)
 * at the start, every cfg->eval_every episodes and at the end; the best scored are kept as the
 * model-selected parameters (/op/best and /move/best in the checkpoint, what dp_improve_model_load
 * reads); the evaluations use their own generator, so they change nothing of the training.
 * Writes io's checkpoint (its own groups "op" and "move", no best_assignment; one of the layout
 * before 2026-12-04, with "sel" and "plc", is read too; config with "method": "improve") and
 * trajectory, through the trainer runtime (dp_runtime.h);
 * io->resume continues io->checkpoint's run, which must be of the same graphs (names, sizes, roles;
 * DP_EINVAL naming both lists otherwise) and config (the caller's cfg: the checkpoint's, see
 * dp_improve_config_from_checkpoint). res (may be NULL) gets what the run did. */
int dp_improve_train(dp_improve_model *m, const dp_improve_config *cfg, int init_params, int n_graphs,
                     const dp_graph *const *g, const dp_cost *const *c, dp_engine *const *e, const int *validation,
                     const dp_improve_io *io, dp_improve_result *res, dp_error *err);

/* The config of the run of an improvement checkpoint (to resume it) into c. DP_EINVAL: not an
 * improve checkpoint (naming the method that made it); the checkpoint's errors. */
int dp_improve_config_from_checkpoint(dp_improve_config *c, const char *path, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
