/* dp_agent.h: a learned placement policy as the one trainer (dp_train.h) sees it.
 *
 * An episode visits the ops in the order a SEL policy picks from the ready set (or, for agents
 * without one, the graph's topological order) and asks the PLC policy for each op's device. The
 * trainer owns everything else: exploration, the loss, baselines, the Adam update, model
 * selection, checkpoints and trajectories. An agent only answers three questions:
 *
 *   per parameter update   prepare: the forward of what does not depend on the episode;
 *   per step               the SEL scores of the ops (one per op, read over the ready set) and
 *                          the PLC logits (D) of the chosen op given the partial assignment;
 *   per episode            backward: the gradients of the loss with respect to those scores and
 *                          logits (given by the trainer) into the parameters.
 *
 * Agents: DOPPLER's dual policy (dp_doppler.h: SEL and PLC), Placeto (dp_placeto.h: PLC over
 * the topological order, Addanki et al. 2019) and GDP (dp_gdp.h: every op's logits in one
 * forward pass, Zhou et al. 2019). Parameters are two named blocks, "sel" and "plc" (an agent
 * without SEL has an empty "sel" block); checkpoints store them under those names.
 */
#ifndef DP_AGENT_H
#define DP_AGENT_H

#include <gsl/gsl_rng.h>

#include "dp_cost.h"
#include "dp_doppler.h"
#include "dp_env.h"
#include "dp_gdp.h"
#include "dp_graph.h"
#include "dp_nn.h"
#include "dp_placeto.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DP_AGENT_DOPPLER = 0, DP_AGENT_PLACETO = 1, DP_AGENT_GDP = 2 } dp_agent_kind;
#define DP_AGENT_N_KINDS 3
const char *dp_agent_name(int kind);               /* "doppler", "placeto", "gdp" */
int dp_agent_parse(const char *s, int *kind);      /* DP_OK or DP_EINVAL */

/* Every architecture; the agent of `kind` reads its own. */
typedef struct dp_agent_arch {
    dp_doppler_arch doppler;
    dp_placeto_arch placeto;
    dp_gdp_arch gdp;
} dp_agent_arch;
/* Set each of a's architectures (a non-NULL, unchecked) to its default: dp_doppler_arch_default,
 * dp_placeto_arch_default and dp_gdp_arch_default. */
void dp_agent_arch_default(dp_agent_arch *a);

typedef struct dp_agent dp_agent;

/* The agent of `kind` for graph g under costs c (both outlive it). NULL with err on failure. */
dp_agent *dp_agent_alloc(int kind, const dp_graph *g, const dp_cost *c, const dp_agent_arch *a, dp_error *err);
/* Free the agent and its network (the shared parameters only when it owns them: not an agent of
 * dp_agent_bind, whose model_of keeps them; the agents bound to an agent go first). NULL is a
 * no-op. */
void dp_agent_free(dp_agent *ag);
/* An agent for graph g under costs c (both outlive it) that shares the parameters of model_of
 * (which must outlive it): its own workspace, the same parameter blocks and gradients, so one
 * model trains on and places several graphs and device counts. DOPPLER only (Placeto's and
 * GDP's parameters are sized by the device count): DP_EINVAL naming the method otherwise. */
dp_agent *dp_agent_bind(const dp_agent *model_of, const dp_graph *g, const dp_cost *c, dp_error *err);
/* The agent's kind (DP_AGENT_DOPPLER, DP_AGENT_PLACETO or DP_AGENT_GDP). */
int dp_agent_kind_of(const dp_agent *ag);
/* Initialise the parameters from r (each network's own scheme). DP_OK or DP_ENOMEM. */
int dp_agent_init(dp_agent *ag, gsl_rng *r);

/* 1 when the agent has a SEL policy (DOPPLER); 0: ops go in topological order. */
int dp_agent_has_sel(const dp_agent *ag);
/* 1 when the agent places every op in one action (GDP): every step's return is the episode's
 * reward, undiscounted (a discount over its ops would weight them by an order it never chose). */
int dp_agent_one_shot(const dp_agent *ag);
/* The parameter blocks: "sel" (possibly empty, n == 0) and "plc". */
dp_nn_params *dp_agent_sel_params(dp_agent *ag);
dp_nn_params *dp_agent_plc_params(dp_agent *ag);

/* Zero both blocks' gradients (start of a batch). */
void dp_agent_zero_grad(dp_agent *ag);
/* The forward of the episode-independent parts, after every parameter change. */
void dp_agent_prepare(dp_agent *ag);
/* Start an episode (after dp_env_reset). */
void dp_agent_episode_begin(dp_agent *ag);
/* SEL scores of every op (n_ops; the policy is their softmax over the ready set), valid after
 * dp_agent_prepare; NULL for agents without SEL. */
const float *dp_agent_sel_scores(const dp_agent *ag);
/* PLC logits (D) of step t, op v, in the environment's current state (v not yet placed). */
void dp_agent_plc_logits(dp_agent *ag, const dp_env *env, int t, int v, float *logits);
/* The device k chosen for v at step t (before dp_env_step). */
void dp_agent_plc_commit(dp_agent *ag, int t, int v, int k);

/* Gradients of the episode's loss: with respect to op v's SEL score (accumulated), and with
 * respect to step t's PLC logits (D, set); then dp_agent_episode_backward adds the episode's
 * contribution to the parameter gradients (env: the finished episode), and after the batch
 * dp_agent_backward completes them. */
void dp_agent_sel_dscore(dp_agent *ag, int v, float g);
void dp_agent_plc_dlogits(dp_agent *ag, int t, const float *dlogits);
void dp_agent_episode_backward(dp_agent *ag, const dp_env *env);
void dp_agent_backward(dp_agent *ag);
/* The gradient state between dp_agent_zero_grad and dp_agent_backward: every float array an
 * episode's backward (dp_agent_sel_dscore .. dp_agent_episode_backward) adds into, as at most
 * max arrays ptr[i] of len[i] floats (DOPPLER: both blocks' grads and the per-op accumulators
 * of this graph, six arrays; Placeto and GDP: the PLC block's grads). Zeroed, then one episode's
 * backward, they hold that episode's gradient alone; the trainer sums episodes' in episode order
 * (dp_train.h, data-parallel training). Returns the number of arrays. */
int dp_agent_grad_state(dp_agent *ag, float **ptr, size_t *len, int max);

/* The DOPPLER networks of a DOPPLER agent (NULL otherwise): inspection, benchmarks, tests. */
dp_doppler *dp_agent_doppler(dp_agent *ag);

#ifdef __cplusplus
}
#endif
#endif
