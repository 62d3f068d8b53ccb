/* dp_ptrain.h: training and placing with the learned baselines, Placeto (dp_placeto.h) and GDP
 * (dp_gdp.h), under the conventions of DOPPLER's trainer (dp_train.h): the same config file (its
 * stages, Adam, gamma, batch, seed, checkpoint_every), the same cost oracle (dp_oracle.h), the
 * same trajectory and checkpoint files (dp_h5io.h) and the same progress callback.
 *
 * Both baselines visit the ops in the fixed topological order g->topo and choose a device for
 * each; there is no SEL policy. An episode: for t = 0 .. n-1, the device of op topo[t] is chosen
 * epsilon-greedily (uniform with probability epsilon, else the argmax, as the DOPPLER authors'
 * baselines) from the policy's softmax; the oracle gives the makespan of the finished assignment.
 * The loss of an episode (REINFORCE with the running average of all makespans so far as
 * baseline, Williams 1992):
 *
 *   L = - pg_weight * sum_t R_t log pi(d_t | state_t) - entropy_weight * sum_t H(pi(. | state_t))
 *
 * r = (running average, this episode included) - makespan (divided by the average with reward
 * "relative"). Placeto decides sequentially, so R_t = gamma^(T-1-t) r as DOPPLER's PLC; GDP places
 * every op in one forward pass and the placement is one action, so R_t = r for every op. One Adam
 * step per `batch` episodes; epsilon and the learning rate decay linearly over the stage.
 *
 * Stages: both learn by reinforcement only (their papers have no imitation), so only the "sim"
 * stage (simulator oracle; the DOPPLER authors' config for these baselines: 2000 episodes, lr
 * 1e-4, epsilon 0.2) and "real" (another oracle, dp_ptrainer_set_oracle) are accepted.
 *
 * Config JSON: every key of dp_train_config_to_json, plus
 *   "method": "placeto" | "gdp",
 *   "placeto": {"hidden", "mlp_hidden", "slope"},  "gdp": {"hidden", "layers", "heads", "mlp_hidden", "slope"}.
 * Checkpoints: dp_h5io's layout, with an empty /sel block and the network in /plc; the config
 * attribute carries the method and both architectures.
 */
#ifndef DP_PTRAIN_H
#define DP_PTRAIN_H

#include "dp_gdp.h"
#include "dp_placeto.h"
#include "dp_place.h"
#include "dp_train.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DP_PTRAIN_PLACETO = 0, DP_PTRAIN_GDP = 1 } dp_ptrain_method;
const char *dp_ptrain_method_name(int method);         /* "placeto", "gdp" */
int dp_ptrain_method_parse(const char *s, int *method); /* DP_OK or DP_EINVAL */

typedef struct dp_ptrain_config {
    int method;             /* dp_ptrain_method */
    dp_placeto_arch placeto;
    dp_gdp_arch gdp;
    dp_train_config train;  /* stages, gamma, batch, Adam, grad_clip, reward, seed, checkpoint_every
                               (its DOPPLER network sizes are unused) */
} dp_ptrain_config;

/* Defaults: dp_train_config_default and the architectures' defaults. */
void dp_ptrain_config_default(dp_ptrain_config *c, int method);
/* Override c with a JSON config (the keys above; "method" may be absent, then c->method stays).
 * Unknown keys and bad values are errors naming the key. */
int dp_ptrain_config_from_json_text(dp_ptrain_config *c, const char *text, dp_error *err);
int dp_ptrain_config_load(dp_ptrain_config *c, const char *path, dp_error *err);
/* Every hyperparameter as JSON text (malloc'd). */
char *dp_ptrain_config_to_json(const dp_ptrain_config *c);

typedef struct dp_ptrainer dp_ptrainer;

/* A trainer for graph g under costs c (both outlive it) whose episodes are scored by oracle
 * (required; copied, its ctx must outlive the trainer: dp_engine_oracle of the machine's
 * engine); the network is initialised from cfg->train.seed. NULL with err on failure. */
dp_ptrainer *dp_ptrainer_alloc(const dp_graph *g, const dp_costs *c, const dp_ptrain_config *cfg, const dp_oracle *oracle,
                               dp_error *err);
void dp_ptrainer_free(dp_ptrainer *tr);
/* Replace the cost oracle (copied; its ctx must outlive the trainer). */
void dp_ptrainer_set_oracle(dp_ptrainer *tr, const dp_oracle *o);
/* The network's parameter block (tests, benchmarks). */
dp_nn_params *dp_ptrainer_params(dp_ptrainer *tr);

/* Parameters from a checkpoint, its best-greedy ones when it holds them (Adam, counters and RNG
 * afresh). */
int dp_ptrainer_init_from(dp_ptrainer *tr, const char *checkpoint, dp_error *err);
/* Continue a run exactly (parameters, Adam, RNG, counters; the trajectory cut back). */
int dp_ptrainer_resume(dp_ptrainer *tr, const char *checkpoint, const char *trajectory, dp_error *err);
int dp_ptrainer_stage(const dp_ptrainer *tr);
long dp_ptrainer_episode(const dp_ptrainer *tr);

/* Run (or continue) stage DP_STAGE_SIM or DP_STAGE_REAL (DP_STAGE_IL: DP_EINVAL) until its
 * episodes are done (episodes > 0 overrides the config). As dp_trainer_run: a new stage resets
 * the counters, running average and Adam; trajectory rows and checkpoints as io says (trajectory
 * steps: sel_op = the op visited, sel_logp 0, ready 1, plc_device, plc_logp; sel_agree 0;
 * plc_agree the fraction of devices that are the earliest-start choice). */
int dp_ptrainer_run(dp_ptrainer *tr, int stage, long episodes, const dp_train_io *io, dp_error *err);

/* One episode without learning: greedy (samples 0) or the best of `samples` placements sampled
 * from the policy with a generator seeded by seed. Fills assignment (n_ops) and *makespan (raw
 * unit). */
int dp_ptrainer_place(dp_ptrainer *tr, int samples, uint64_t seed, int *assignment, double *makespan, dp_error *err);

/* Model selection, as DOPPLER's trainer (dp_trainer_use_best): at the start of a stage and at
 * every checkpoint boundary (every checkpoint_every episodes and at the end) the trainer places
 * greedily and keeps the parameters whose makespan is the best so far (checkpoint /plc/best).
 * This switches the live parameters to those (returns 1), or returns 0 when there are none.
 * dp_ptrainer_init_from and the placement methods use them. */
int dp_ptrainer_use_best(dp_ptrainer *tr);

/* Seconds of one inference episode (greedy rollout with the oracle) and one training episode
 * (rollout, loss, backward, Adam), averaged over reps. For bench/. */
int dp_ptrainer_bench(dp_ptrainer *tr, int reps, double *infer_s, double *train_s, dp_error *err);

/* The placement methods "placeto" and "gdp" (dp_place.h): with o->checkpoint, the policy of that
 * checkpoint places greedily (o->samples > 1: the best of that many samples, seed o->seed);
 * without, a policy is trained first for o->budget episodes (0: 200) of the "sim" stage from seed
 * o->seed, config o->config if given, then its best-greedy parameters place greedily. */
int dp_place_placeto(const dp_graph *g, const dp_costs *c, const dp_place_options *o, int *assignment,
                     double *priority, int *has_priority, dp_error *err);
int dp_place_gdp(const dp_graph *g, const dp_costs *c, const dp_place_options *o, int *assignment,
                 double *priority, int *has_priority, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
