/* dp_train.h: the one trainer of the learned placement methods: DOPPLER's policies in three
 * stages (Yao et al. 2026, the authors' run_placement.py and rl_agent.py; differences in
 * doc/doppler-vs-reference.md), and the learned baselines Placeto and GDP under the same stages,
 * loss, exploration, baselines, checkpoints and trajectories (doc/baselines.md). The method is
 * the config's "method" (dp_agent.h: "doppler", "placeto", "gdp"); a config key the method's
 * agent cannot honour is refused naming the key and the method.
 *
 * An episode: reset the environment; at each step SEL picks a ready op (agents without SEL take
 * the graph's topological order) and PLC its device by the stage's exploration rule (below); the
 * cost oracle gives the makespan of the finished assignment. The loss of an episode, over its
 * steps t:
 *
 *   L = - pg_weight * sum_t R_t (log mu_SEL(a_t) + log mu_PLC(d_t))
 *       - il_weight * sum_t (sum over heuristic-optimal ops i of log pi_SEL(i)
 *                            + sum over heuristic-optimal devices k of log pi_PLC(k))
 *       - entropy_weight * sum_t (H(pi_SEL) + H(pi_PLC))
 *
 * with R_t = gamma^(T-1-t) r (R_t = r for GDP, which places every op in one action) and the
 * terminal reward r = baseline - makespan (divided by the baseline when reward is "relative");
 * the SEL terms vanish for agents without SEL. Exploration and the log-likelihood mu:
 *   epsilon-greedy (authors): a uniform choice with probability epsilon, else the argmax; mu = pi,
 *     the softmax, although the actions are not drawn from it (an off-policy, biased estimator);
 *   mixture: a uniform choice with probability epsilon, else a draw from pi; mu = (1 - epsilon) pi
 *     + epsilon / |choices|, the behaviour policy itself (the exact REINFORCE gradient of the
 *     expected cost under the policy that acts; epsilon 0 is plain softmax sampling).
 * Baselines: running (authors): the running average of the stage's makespans, this one included;
 * greedy: the makespan of the greedy policy with the parameters of the batch (Kool et al. 2019,
 * "Attention, learn to solve routing problems!"), so a sampled deviation is rewarded exactly when
 * it beats the greedy placement that model selection and `place` use; batch: the mean makespan of
 * the batch's own rollouts (shared baseline, POMO), optionally with advantages normalised by the
 * batch's standard deviation. The batch baseline rolls the batch out first, then replays each
 * episode with its seed (same actions, no simulation) to accumulate its gradient: simulations are
 * not doubled. Self-imitation (sil_weight) and forced distinct first choices (forced_first) are
 * this project's additions, off in the authors' configuration.
 * Stage I (il) is imitation of the critical-path heuristic on the policy's own rollouts
 * (pg_weight 0), Stage II (sim) REINFORCE against the simulator, Stage III (real) the same
 * against a real-execution oracle. One Adam step per network per `batch` episodes (authors: 1);
 * epsilon and the learning rate decay linearly from their initial to their final value over the
 * stage's episodes (the learning rate really reaches Adam). Why and how this departs from the
 * authors: doc/doppler-vs-reference.md.
 */
#ifndef DP_TRAIN_H
#define DP_TRAIN_H

#include <signal.h>
#include <stdint.h>

#include "dp_agent.h"
#include "dp_cost.h"
#include "dp_doppler.h"
#include "dp_graph.h"
#include "dp_oracle.h"
#include "dp_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DP_TRAIN_STAGE_IL = 0, DP_TRAIN_STAGE_SIM = 1, DP_TRAIN_STAGE_REAL = 2 } dp_train_stage_kind;
#define DP_TRAIN_N_STAGES 3
const char *dp_train_stage_name(int stage);            /* "il", "sim", "real" */
int dp_train_stage_parse(const char *s, int *stage);   /* DP_OK or DP_EINVAL */

typedef enum { DP_TRAIN_EXPLORE_EPSILON_GREEDY = 0, DP_TRAIN_EXPLORE_MIXTURE = 1 } dp_train_exploration;
typedef enum { DP_TRAIN_BASELINE_RUNNING = 0, DP_TRAIN_BASELINE_GREEDY = 1, DP_TRAIN_BASELINE_BATCH = 2 } dp_train_baseline;

typedef struct dp_train_stage {
    long episodes;         /* authors: 2000 / 2000 / 4000 */
    int batch;             /* episodes per update (authors: 1) */
    int exploration;       /* dp_train_exploration (authors: DP_TRAIN_EXPLORE_EPSILON_GREEDY) */
    int baseline;          /* dp_train_baseline (authors: DP_TRAIN_BASELINE_RUNNING); policy-gradient stages */
    double lr, lr_final;   /* 1e-3 / 1e-4 / 1e-4, decaying linearly to lr_final (0) */
    double epsilon, epsilon_final; /* 1.0 / 0.2 / 0.2 -> 0 */
    double entropy_weight; /* 0.001 / 0 / 0 */
    double il_weight;      /* 1 / 0 / 0 */
    double pg_weight;      /* 0 / 1 / 1 */
    int positive_only;     /* 0 (authors); 1: negative rewards count as 0, so the policy only moves
                              towards placements better than the baseline (self-imitation, Oh et
                              al. 2018) */
    /* This project's estimators (all off by default, so the authors' method stays exact): */
    int normalize_advantages; /* 1: with the batch baseline, advantages divided by the batch's
                                 standard deviation of makespans (Kool et al. 2019; POMO) */
    int forced_first;      /* 1: episode j of a batch places its first op on device j mod D (POMO's
                              distinct starts, Kwon et al. 2020); that forced choice gets no gradient */
    double sil_weight;     /* > 0: self-imitation: after each batch, one teacher-forced replay of a
                              placement drawn from the sil_k best found so far, imitated with this
                              weight (Oh et al. 2018); 0 (default): off */
    int sil_k;             /* size of that buffer (default 8) */
    int sil_replays;       /* placements of the buffer imitated after each batch (default 1; at
                              least the buffer's size: each of them once, the cross-entropy method's
                              elite set) */
    long distill;          /* > 0: at the end of the stage, up to that many updates of pure
                              imitation of the best placement found in the stage (teacher-forced, no
                              simulation), stopping when the greedy policy's placement is as good
                              (checked every 10 updates, one simulation each, counted); the stage's
                              final parameters then reproduce what its exploration found. With
                              several training graphs the updates go round the graphs (each its
                              own best placement), checked every 10 rounds (one simulation per
                              graph; score: the mean ratio to the graphs' references), stopping
                              when every graph reaches its target; the best check's parameters
                              are kept either way. 0: off */
    int patience;          /* > 0: end the stage when that many model-selection evaluations in a row
                              did not improve the best greedy makespan (early stopping, e.g. of
                              Stage I before the policy collapses onto the teacher); 0: off */
} dp_train_stage;

typedef struct dp_train_config {
    int method;            /* dp_agent_kind: DP_AGENT_DOPPLER (default), _PLACETO, _GDP */
    dp_doppler_arch arch;  /* DOPPLER's networks ("network") */
    dp_placeto_arch placeto; /* Placeto's network ("placeto": hidden, mlp_hidden, slope) */
    dp_gdp_arch gdp;       /* GDP's network ("gdp": hidden, layers, heads, mlp_hidden, slope) */
    dp_train_stage stage[DP_TRAIN_N_STAGES];
    double gamma;          /* 0.99 */
    double adam_beta1, adam_beta2, adam_eps, weight_decay; /* 0.9, 0.999, 1e-8, 0 (torch) */
    double grad_clip;      /* max global gradient norm per network, 0: none */
    int reward_relative;   /* 0: r in the printed time unit (authors); 1: r divided by the average */
    uint64_t seed;         /* 1 */
    long checkpoint_every; /* episodes between checkpoints (100); rounded up to a multiple of batch */
    int update_sel, update_plc; /* 1, 1: train both networks */
    int coarsen;           /* JSON "coarsen": the run trains on group graphs of at most this many
                              ops (`doppler train --coarsen N`; 0, the default: the graphs
                              themselves). The grouping is the command's (experiments/trainset.c,
                              dp_coarse.h); the trainer records it with the checkpoint, so that a
                              resumed run groups as the run did and place can say when it places
                              otherwise */
    int coarsen_rule;      /* JSON "coarsen_rule": dp_coarse_rule, "packed" (0) or "chains" (1) */
    int pipeline;          /* JSON "pipeline": the run is Stage I then Stage II (`doppler train
                              --pipeline`, or this key in its config file). The command's; recorded
                              with the checkpoint, so that --resume continues the pipeline (a
                              resumed run without --pipeline stopped after Stage I) */
    int sel_topological;   /* 0 (the paper): SEL picks the next op; 1: the ready op earliest in the
                              graph's topological order is taken and SEL is not trained (the
                              single-policy "PLC only" ablation, Placeto's fixed order) */
    int state;             /* dp_env_state of the environment, JSON "state": DP_ENV_STATE_APPEND
                              ("append", the authors' estimate, default: the reproduction) or
                              DP_ENV_STATE_ENGINE ("engine": the exact prefix schedule of the
                              oracle's engine, dp_env.h; needs dp_engine_oracle as the trainer's
                              oracle). The PLC teacher of Stage I is the earliest estimated start
                              under this state. With arch.device_features (JSON
                              "network.features": "doppler" | "engine") it selects this
                              project's method: both "engine" (bench/doppler-engine.json).
                              "network.features": "hint" adds the device each op has in the
                              graph's best instant placement (made when the graph is bound:
                              the best of the six instant methods under its oracle, six
                              simulations counted; dp_env.h column 12), and the PLC's Stage I
                              target is that device instead of the earliest start: once the
                              imitation has converged (PLC agreement 100%) the greedy policy
                              places as the best instant method, and the later stages are to
                              learn where to leave it (issue 29; nothing enforces it). */
    /* Demonstrations (this project's; expert iteration, Anthony et al. 2017, "Thinking fast and
     * slow with deep learning and tree search"): JSON "demonstrations": {"method": "improve" |
     * "anneal" | "local", "budget": B, "checkpoint": FILE (improve's policy)}, or {"method":
     * "best-instant"} (no budget: the best under the oracle of the six instant methods,
     * dp_search_start, one simulation each, all counted). At the first
     * episode of every stage with self-imitation (sil_weight > 0) or distillation, each training
     * graph's placement by that search (B simulations, seed: the run's plus the graph's index,
     * from the search's default start) is replayed once through the policy (its greedy op order,
     * the search's devices; one simulation) and offered to that graph's self-imitation buffer, so
     * that the policy imitates placements better than its own rollouts find. Every simulation is
     * counted in the run's. demo_method "" (default): none. A run resumed from a checkpoint
     * without the buffers of its several graphs (written before 2026-12-02) computes them again
     * for the graphs whose buffer is empty, without counting them twice.
     * dp_train_config_load takes a relative FILE from the working folder when it is there, else
     * from the config file's folder when it is there (the path joined to the folder's). */
    /* The unit of each graph's makespans when several graphs are bound (rewards, model selection,
     * the printed ratios): JSON "reference": "cp" (default: the critical-path heuristic's
     * placement, one simulation) or "best-instant" (the best under the oracle of round-robin, cp,
     * HEFT, CPOP, PEFT and ETF, six simulations: model selection then ranks parameters by the
     * figure the generalization goal is stated in, issue 29). */
    int reference_best_instant;
    /* SEL's imitation target (Stage I, and any stage of il_weight > 0): JSON "sel_teacher": "cp"
     * (default: the ready ops of highest b-level) or "etf" (the ready ops of earliest start over
     * the devices, ETF's key: feature 0 of the dynamic SEL is 0, dp_doppler.h; needs
     * network.sel_dynamic, refused otherwise). The PLC's target is the device of earliest start
     * either way (the hint's device with "network.features": "hint"), and the printed SEL
     * agreement is with the chosen teacher (issue 29). */
    int sel_teacher_etf;
    char demo_method[16];
    long demo_budget;      /* B >= 7 (0 for best-instant) */
    char demo_checkpoint[1024];
} dp_train_config;

/* The authors' values (above), method doppler. (The learned baselines use the same defaults,
 * as the DOPPLER authors' configs for them do.) */
void dp_train_config_default(dp_train_config *c);
/* This project's DOPPLER (`doppler train`'s defaults for method doppler; bench/doppler-project.json
 * holds the same values, tests check they agree): the authors' defaults with the engine's exact
 * state and device features ("state": "engine", "network.features": "engine"), width 64 networks,
 * gamma 1, Stage I of 300 episodes with patience 5, Stage II of 2500 episodes in batches of 16 with
 * softmax sampling, the batch baseline, normalised advantages, forced first choices, elite
 * self-imitation (sil_weight 1 over the 8 best, all 8 per batch), entropy 0.001, lr 1e-3 to 1e-4 and
 * distillation of the best sampled placement at the end (distill 1000). Why:
 * doc/estimators.md. */
void dp_train_config_project(dp_train_config *c);
/* Override c with the values of a JSON config file (any subset of the keys that
 * dp_train_config_to_json writes); unknown keys and bad values are errors naming the key. A
 * top-level "batch" sets the batch of every stage (stages.S.batch then overrides it). A top-level
 * "defaults": "authors" or "project" first resets c to dp_train_config_default or
 * dp_train_config_project (keeping its method), then the other keys apply. */
int dp_train_config_load(dp_train_config *c, const char *path, dp_error *err);
int dp_train_config_from_json_text(dp_train_config *c, const char *text, dp_error *err);
/* The config in force for a run: the one rule every caller applies (doppler train, a sweep's
 * doppler, placeto and gdp runs, doppler place --method placeto/gdp without a checkpoint).
 * method: a dp_agent_kind, or -1 for the config's own (default doppler). path: a JSON config
 * file, or NULL for none. DOPPLER's defaults are this project's method (dp_train_config_project)
 * unless the config says "defaults": "authors"; Placeto's and GDP's are dp_train_config_default's.
 * Errors: the config's own (DP_EINVAL naming the key, DP_EIO), and DP_EINVAL when the config is
 * of another method than a given one. (A sweep's doppler run without train_config had the
 * authors' defaults where doppler train had the project's: issue 28.) */
int dp_train_config_resolve(dp_train_config *c, int method, const char *path, dp_error *err);
/* For a run that trains Stage II alone, for episodes and from a seed it is given, on the whole
 * graph (place --method placeto|gdp without a checkpoint, a sweep's placeto and gdp runs): the
 * first key of c, resolved as dp_train_config_resolve does for c->method, that such a run would
 * read and ignore because it differs from the defaults: "seed", "stages.sim.episodes", "pipeline",
 * "coarsen" (or coarsen_rule), "stages.il" (any of its keys), "stages.real"; NULL when none ("the
 * config" when out of memory). The caller refuses it, naming what gives it instead. */
const char *dp_train_config_stage2_ignored(const dp_train_config *c);
/* The config as JSON text (malloc'd; "method" and every hyperparameter its agent honours, so a
 * run records all of them), as checkpoints record it: the keys added after checkpoints were
 * first written ("reference", "sel_teacher", "network.sel_dynamic", "pipeline") and
 * "demonstrations" only when they are not at their defaults, so that an older checkpoint's config
 * compares equal. NULL when out of memory. */
char *dp_train_config_to_json(const dp_train_config *c);
/* The same with those keys at their defaults too ("demonstrations": null for none): every value
 * in force (`doppler train --print-config`). Read back by dp_train_config_from_json_text it gives
 * the same config. The reading directives "defaults" and the top-level "batch" are not values:
 * their effect is in the values written. */
char *dp_train_config_to_json_all(const dp_train_config *c);
/* The config's objects and their tables (dp_schema.h): "" (the top level's plain keys), "adam",
 * "network", "placeto", "gdp", "stages.S"; the keys with rules across keys ("method", "defaults",
 * "seed", "batch", "demonstrations") are read by hand. Ended by name NULL. */
const dp_schema_section *dp_train_config_sections(void);
/* Why top-level key KEY of the config (a plain key or an object's name: "network", "gamma", ...)
 * does not apply to agent METHOD (DP_AGENT_DOPPLER, _PLACETO, _GDP), as the reader's error says it,
 * or NULL when it applies. The one rule: the reader refuses such a key, the config's JSON leaves it
 * out, and the command's help lists it as refused. */
const char *dp_train_config_refused_key(int method, const char *key);

/* What a progress callback sees after every episode. Makespans in the printed unit. */
typedef struct dp_train_progress {
    int stage;
    long episode, episodes;   /* episodes done in the stage, and its length */
    double epsilon, lr;
    double makespan, best, running_avg;
    double greedy;            /* the latest greedy makespan (model-selection evaluation, or the
                                 greedy baseline of the batch) */
    double sel_agree, plc_agree; /* fraction of this episode's steps that match the heuristic */
    double episodes_per_s;
    int final;                /* 1 on the last call of a stage */
} dp_train_progress;
typedef void (*dp_train_progress_fn)(const dp_train_progress *p, void *ctx);

/* Data-parallel training over processes (`mpirun -n R doppler train`): the library has no MPI,
 * the caller gives the one collective the trainer needs. Episode j of a batch (j = 0 .. B-1) is
 * rolled out, with its seed drawn from the run's generator as one process draws it, by rank
 * j mod R; the ranks exchange each episode's makespan and choices, do the batch's bookkeeping
 * (rewards, baselines, self-imitation buffer, trajectory rows) in episode order, and gather the
 * episodes' gradients, which every rank sums in episode order (one process sums them in that
 * order too) and applies in the same update: every rank computes what one process computes, bit
 * for bit, whatever R. Self-imitation's replays after a batch and model selection's greedy
 * placements of the validation graphs are shared among the ranks the same way; the end-of-stage
 * distillation and demonstrations run whole on every rank. Refused with R > 1 (DP_EINVAL): stage real, and a policy-gradient stage with the running
 * baseline (its reward needs every earlier episode's makespan before the episode's backward). */
typedef struct dp_train_comm {
    int rank, size; /* this process and how many (size 1: one process, no exchange) */
    /* Every rank calls it with the same counts (size values: the bytes each rank gives); mine
     * holds counts[rank] bytes, all receives every rank's, concatenated in rank order. DP_OK, or
     * an error (err set). */
    int (*allgather)(void *ctx, const void *mine, const size_t *counts, void *all, dp_error *err);
    void *ctx;
} dp_train_comm;

/* Whether stage `stage` of config c can run over `ranks` ranks (the refusals above): DP_OK, or
 * DP_EINVAL naming the stage and what to change. */
int dp_train_comm_check(const dp_train_config *c, int stage, int ranks, dp_error *err);

typedef struct dp_train_io {
    const char *trajectory;   /* trajectory file (NULL: none) */
    const char *checkpoint;   /* checkpoint file, written every checkpoint_every episodes and at the
                                 end (NULL: none) */
    dp_train_progress_fn progress;
    void *progress_ctx;
    volatile sig_atomic_t *stop; /* when set non-zero, stop after the current batch (with a
                                    checkpoint, and no model-selection evaluation beyond the
                                    scheduled ones, so that a resumed run ends as an
                                    uninterrupted one); may be NULL */
    const dp_train_comm *comm; /* data-parallel ranks (above); NULL: this process alone. Every
                                  rank but 0 passes no trajectory, checkpoint or progress */
} dp_train_io;

typedef struct dp_train dp_train;

/* A trainer for graph g under costs c (both outlive it; c gives the heuristic features and the
 * teacher) whose episodes are scored by oracle (required; copied, its ctx must outlive the
 * trainer): dp_engine_oracle of the machine's engine for Stages I and II, so that training
 * optimises the model every command reports. Parameters are initialised from cfg->seed. NULL
 * with err on failure (DP_EINVAL without an oracle). */
dp_train *dp_train_alloc(const dp_graph *g, const dp_cost *c, const dp_train_config *cfg, const dp_oracle *oracle,
                             dp_error *err);
/* As dp_train_alloc followed by dp_train_init_from_params(checkpoint, final), without the random
 * initialisation the checkpoint's parameters overwrite (about a quarter of a placement's CPU at
 * 400 ops): what placing with a trained model (dp_place's learned methods) needs. The
 * parameters, and so every placement, are the same as by those two calls; the generator of
 * cfg->seed has not drawn the initialisation's numbers (training from here would differ). NULL
 * with err as either call fails. */
dp_train *dp_train_alloc_from(const dp_graph *g, const dp_cost *c, const dp_train_config *cfg, const dp_oracle *oracle,
                              const char *checkpoint, int final, dp_error *err);
/* Free the trainer and what it made: every added graph's agent and environment, its generators,
 * records and trajectory; not the graphs, costs or oracles it was given. NULL is a no-op. */
void dp_train_free(dp_train *tr);

/* Training on a distribution of graphs: bind another graph g under costs c, scored by oracle
 * (all outlive the trainer; the oracle is copied), to the same parameters, before the first
 * dp_train_run. validation 0: a training graph (each batch of episodes samples one training
 * graph uniformly from the trainer's generator, and its rollouts, baselines and backward are
 * all on that graph); 1: a validation graph, used by model selection only. With more than one
 * graph bound the trainer measures every makespan in units of its graph's reference, the
 * critical-path heuristic's makespan under the configured state (one simulation per graph, made
 * here): rewards, baselines, progress and trajectory rows are those ratios, and the
 * model-selection score (dp_train_use_best, the pipeline's final and selected values) is the
 * mean ratio of the greedy placements over the validation graphs (the training graphs when
 * there are none). dp_train_place and dp_train_policy_probs place the first graph (the one
 * of dp_train_alloc). DOPPLER only (Placeto's and GDP's parameters are sized by the device
 * count); stage real trains on one graph. DP_OK, DP_EINVAL (after training started, another
 * method, a reference makespan that is not positive), DP_ENOMEM. */
int dp_train_add_graph(dp_train *tr, const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, int validation,
                         dp_error *err);
/* Graphs bound: returns the total, with the training and validation counts (either may be NULL). */
int dp_train_n_graphs(const dp_train *tr, int *n_train, int *n_validation);
/* Replace the cost oracle (Stage III's real execution); copied, its ctx must outlive the trainer. */
void dp_train_set_oracle(dp_train *tr, const dp_oracle *o);
/* The DOPPLER networks of a DOPPLER trainer (NULL for the other methods), and the parameter
 * blocks of any (sel may be empty): inspection, benchmarks and tests. */
dp_doppler *dp_train_networks(dp_train *tr);
dp_nn_params *dp_train_sel_params(dp_train *tr);
dp_nn_params *dp_train_plc_params(dp_train *tr);

/* Start from a checkpoint's parameters (--init; its best-greedy parameters when it holds them,
 * see dp_train_use_best): Adam state, counters and RNG start afresh. The checkpoint may have
 * been trained on any graphs and device counts (DOPPLER; Placeto's and GDP's need the same
 * device count); one of another method, architecture (network sizes, slope, path embeddings),
 * device feature set ("network.features"), state or format version is refused (DP_EINVAL,
 * "PATH: incompatible checkpoint: feature set (network.features) \"doppler\" in the checkpoint,
 * \"engine\" here ..."). */
int dp_train_init_from(dp_train *tr, const char *checkpoint, dp_error *err);
/* dp_train_init_from with final 1: the checkpoint's final parameters (/sel/param, /plc/param:
 * those its training ended with, before model selection, which `train` prints as "final")
 * instead of the best-greedy ones; final 0 is dp_train_init_from. */
int dp_train_init_from_params(dp_train *tr, const char *checkpoint, int final, dp_error *err);
/* Continue a run from its checkpoint (--resume; the same graphs, in the same order, as the
 * checkpoint's trained_on says): parameters, Adam state, RNG state, counters;
 * the trajectory file (if io->trajectory) is cut back to the checkpoint's rows. Sets the stage
 * the run was in (dp_train_current_stage). */
int dp_train_resume(dp_train *tr, const char *checkpoint, const char *trajectory, dp_error *err);
/* The stage the trainer runs or last ran (dp_train_stage_kind; -1 before any ran or was resumed) and
 * the episodes trained so far over all stages (a resumed run's included). tr non-NULL
 * (unchecked). */
int dp_train_current_stage(const dp_train *tr);
long dp_train_episode(const dp_train *tr);
/* Wall seconds of the run's training so far: since dp_train_alloc, plus, for a run resumed from
 * a checkpoint (dp_train_resume), the seconds its earlier processes had run when it was written
 * (0 there for a checkpoint written before 2026-12-07). */
double dp_train_seconds(const dp_train *tr);

/* Run (or continue) stage `stage` until its episodes are done (episodes > 0 overrides the
 * config's count). Starting a stage other than the one in progress resets the episode counter,
 * the running average and the Adam state (as the authors' separate runs do). Writes the
 * trajectory rows and checkpoints given in io. */
int dp_train_run(dp_train *tr, int stage, long episodes, const dp_train_io *io, dp_error *err);

/* Inference only (dp_place's learned methods; on 1, off 0, the default): greedy rollouts that ask
 * for no agreement (dp_train_place with agree NULL) keep the ready set as a max-heap on the SEL
 * scores when they are fixed for the episode (DOPPLER's static SEL; not the dynamic SEL, not the
 * topological ablation): the choice is argmax's over the id-ordered set, the first of equal
 * scores, so the placement is the same, at O(log ready) a step instead of O(ready) (the ready
 * set of a training graph holds about 5% of its ops: 5,000 at 99,774 ops). Such a rollout keeps
 * no SEL log-probabilities, entropies or heuristic marks: not for a trainer that learns after. */
void dp_train_set_greedy_heap(dp_train *tr, int on);

/* One episode with the current parameters and no learning: greedy (samples 0: argmax choices)
 * or sampled (samples > 0: the best of the greedy placement and that many placements sampled
 * from the policies, drawn from a generator seeded with seed; the earliest of equal makespans,
 * so never worse than greedy: 1 + samples simulations). Fills assignment (n_ops) and *makespan (raw unit); agree (2 values, may
 * be NULL) gets the fraction of SEL and PLC steps of the (first) rollout that match the
 * critical-path heuristic's choices. */
int dp_train_place(dp_train *tr, int samples, uint64_t seed, int *assignment, double *makespan, double *agree,
                     dp_error *err);

/* Partial simulations the environment of tr's current graph has run so far (dp_env.n_resim: its
 * exact state's prefix runs, resumed or full, for steps and probes; 0 with the authors' append
 * state). They are part of building a placement and not in the oracle's simulation count, so an
 * honest online cost of a "one simulation" greedy placement names them too (issue 29). */
long dp_train_prefix_simulations(const dp_train *tr);

/* How the choices of a rollout compare with the critical-path heuristic's (SEL: the ready op of
 * highest b-level; PLC: the device of earliest estimated start). A step where the heuristic has
 * one best choice agrees when the policy made that choice; a step where several choices tie for
 * the heuristic's best is a tie and never counts as agreement (in_tie says how often the policy's
 * choice was one of the tied ones). Counts of steps; sel and plc: [0] SEL, [1] PLC. */
typedef struct dp_train_agreement {
    int steps;       /* steps of the rollout (the graph's ops) */
    int unique[2];   /* steps where the heuristic's choice is unique and the policy made it */
    int tied[2];     /* steps where the heuristic's best choices tie */
    int in_tie[2];   /* tied steps where the policy's choice is one of the tied */
} dp_train_agreement;
/* The agreement of the trainer's latest rollout (after dp_train_place with samples 0: its
 * greedy placement). */
void dp_train_agreement_get(const dp_train *tr, dp_train_agreement *a);

/* Model selection: at the start of a stage and at every checkpoint boundary (every
 * checkpoint_every episodes and at the end of a stage) the trainer places the graph greedily and keeps the parameters whose greedy
 * makespan is the best so far (saved in the checkpoint as /sel/best, /plc/best). This switches
 * the live parameters to those (returns 1), or returns 0 when there are none. The training
 * itself always continues from the latest parameters. */
int dp_train_use_best(dp_train *tr);

/* The PLC policy's device probabilities of every op (probs: n_ops x n_devices) along the greedy
 * rollout of the current parameters (one simulation): move proposals for annealing from the
 * policy's placement (dp_search_anneal_config.proposal). */
int dp_train_policy_probs(dp_train *tr, float *probs, dp_error *err);

/* Oracle calls so far (every rollout of training, model-selection evaluations and placements). */
long dp_train_simulations(const dp_train *tr);

/* ---- the pipeline: stages in order, with model selection between them ---- */

typedef struct dp_train_pipeline_stage {
    int stage;               /* dp_train_stage_kind */
    int done;                /* 1 when the stage ran here (0: before a resumed checkpoint, or stopped) */
    int before_resume;       /* 1 when it had finished before the checkpoint this run resumed */
    long episodes;           /* episodes of the stage */
    double final_greedy;     /* makespan (raw unit) of the placement with the stage's final parameters */
    double selected_greedy;  /* the same with the model-selected parameters (= final_greedy without
                              * model selection, or when the final ones were the best) */
    double best_sample;      /* best makespan of any training rollout of the stage */
    double agree[2];         /* SEL and PLC agreement with the heuristic, final parameters: the
                              * fraction of steps whose choice is one of the heuristic's (ties
                              * count as agreement here; see agreement) */
    dp_train_agreement agreement;          /* the same placement, ties apart (greedy placements,
                                            * samples 0; all zero otherwise) */
    dp_train_agreement agreement_selected; /* the model-selected placement's */
    long sims;               /* oracle calls the stage spent: training rollouts, evaluations and
                              * the placements above */
    double seconds;
    /* FNV-1a of the final and of the model-selected parameters (SEL's blocks then PLC's,
     * dp_nn_params_checksum from DP_NN_FNV_OFFSET; equal without model selection or when the
     * final ones were the best): the same command and seed give the same numbers on any machine
     * of this kind and any number of MPI ranks */
    unsigned long long final_fnv1a, selected_fnv1a;
} dp_train_pipeline_stage;

typedef struct dp_train_pipeline_result {
    int n_stages;
    int stopped;             /* 1 when io->stop ended it early (checkpoint written) */
    dp_train_pipeline_stage stage[DP_TRAIN_N_STAGES];
} dp_train_pipeline_result;

/* Run stages[0 .. n_stages-1] in order (episodes[k] > 0 overrides stage k's count; episodes may
 * be NULL), the one sequence `doppler train --pipeline`, `--stage S` (n_stages 1) and sweeps
 * use. After each stage: its placement with the final parameters, then, with model_selection,
 * the switch to its model-selected parameters (dp_train_use_best) and their placement; the
 * next stage starts from those, as `--init CHECKPOINT` of the previous stage's checkpoint would.
 * Placements are greedy (samples 0) or the best of `samples` sampled with `seed`. A trainer
 * resumed into stage stages[k] (dp_train_resume) continues there: earlier stages are reported
 * with done = 0. assignment (n_ops, may be NULL) gets the last placement. n_stages <= 3. */
int dp_train_pipeline(dp_train *tr, const int *stages, const long *episodes, int n_stages, int model_selection,
                        int samples, uint64_t seed, const dp_train_io *io, dp_train_pipeline_result *out, int *assignment,
                        dp_error *err);

/* One exploratory choice among n options with probabilities p (softmax of the logits z): by
 * `exploration` (dp_train_exploration) with epsilon eps, drawing from r. Returns the index. */
int dp_train_explore(const float *p, const float *z, int n, int exploration, double eps, gsl_rng *r);
/* The probability that dp_train_explore returns a (the behaviour policy). */
double dp_train_behaviour_prob(const float *p, const float *z, int n, int a, int exploration, double eps);
/* Add to dz (n) the gradient with respect to the logits of the policy-gradient loss of one step,
 * -adv * log mu(a) (mu as in the file comment: pi for epsilon-greedy, the mixture for mixture):
 * -adv * w (onehot(a) - p) with w = 1, respectively w = (1 - eps) p_a / mu(a). */
void dp_train_pg_dlogits(float *dz, const float *p, int n, int a, double adv, int exploration, double eps);

/* Seconds per episode for bench/: [0] one inference episode (the forward of the per-op parts and
 * a greedy rollout with the oracle), [1] one training episode when `batch` episodes share one
 * parameter update (forward once per batch, the rollouts with their episode backward, one
 * backward and one Adam step per batch: batch 1 is the authors' one update per episode), over
 * `reps` episodes each; wall_s wall-clock, cpu_s this process's CPU time. */
int dp_train_bench_batch(dp_train *tr, int reps, int batch, double wall_s[2], double cpu_s[2], dp_error *err);
/* The same at batch 1, wall-clock seconds only (infer_s, train_s). */
int dp_train_bench(dp_train *tr, int reps, double *infer_s, double *train_s, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
