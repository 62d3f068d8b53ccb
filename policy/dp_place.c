#include "dp_place.h"
#include "dp_alloc.h"
#include "dp_file.h"
#include "dp_env.h"
#include "dp_h5io.h"
#include "dp_train.h"
#include "dp_list.h"
#include "dp_search.h"
#include "dp_improve.h"

#include <gsl/gsl_rng.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

void dp_place_options_init(dp_place_options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->samples = 0; /* the method's own: greedy for the learned ones, one for random */
}

/* dp_place_options_alloc's object: the options first (the pointer handed out), then what the
 * setters keep for them */
typedef struct place_options_box {
    dp_place_options o;
    char *text[4];     /* owned copies of checkpoint, config, refine, proposals */
    dp_oracle oracle;  /* dp_place_options_set_engine's */
} place_options_box;

static place_options_box *options_box(dp_place_options *o)
{
    return (place_options_box *)(void *)o;   /* o is the box's first member */
}

dp_place_options *dp_place_options_alloc(dp_error *err)
{
    place_options_box *b = dp_alloc_calloc(1, sizeof *b);
    if (!b) {
        dp_error_set(err, DP_ENOMEM, "place options: out of memory");
        return NULL;
    }
    dp_place_options_init(&b->o);
    return &b->o;
}

void dp_place_options_free(dp_place_options *o)
{
    if (!o) return;
    place_options_box *b = options_box(o);
    for (int i = 0; i < 4; i++) free(b->text[i]);
    free(b);
}

/* an integer option's text: decimal digits only, lo..hi */
static int options_integer(const char *key, const char *value, unsigned long long lo, unsigned long long hi,
                           unsigned long long *out, dp_error *err)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = value[0] >= '0' && value[0] <= '9' ? strtoull(value, &end, 10) : 0;
    if (!end || *end || errno == ERANGE || v < lo || v > hi)
        return dp_error_set(err, DP_EINVAL, "place options: %s: expected an integer %llu..%llu, got \"%s\"", key, lo, hi,
                            value);
    *out = v;
    return DP_OK;
}

int dp_place_options_set(dp_place_options *o, const char *key, const char *value, dp_error *err)
{
    static const char *const text_keys[4] = {"checkpoint", "config", "refine", "proposals"};
    if (!o || !key) return dp_error_set(err, DP_EINVAL, "place options: no options or no key");
    place_options_box *b = options_box(o);
    for (int i = 0; i < 4; i++) {
        if (strcmp(key, text_keys[i]) != 0) continue;
        if (i == 2 && value && strcmp(value, "anneal") != 0 && strcmp(value, "local") != 0 && strcmp(value, "improve") != 0)
            return dp_error_set(err, DP_EINVAL, "place options: refine: anneal, local or improve, got \"%s\"", value);
        char *copy = NULL;
        if (value && !(copy = dp_alloc_strdup(value))) return dp_error_set(err, DP_ENOMEM, "place options: out of memory");
        free(b->text[i]);
        b->text[i] = copy;
        const char **field[4] = {&o->checkpoint, &o->config, &o->refine, &o->proposals};
        *field[i] = copy;
        return DP_OK;
    }
    dp_place_options def;
    dp_place_options_init(&def);
    unsigned long long v = 0;
    int rc = DP_OK;
    if (strcmp(key, "seed") == 0) {
        if (!value) o->seed = def.seed;
        else if ((rc = options_integer(key, value, 0, UINT64_MAX, &v, err)) == DP_OK) o->seed = (uint64_t)v;
    } else if (strcmp(key, "device") == 0) {
        if (!value) o->device = def.device;
        else if ((rc = options_integer(key, value, 0, 4095, &v, err)) == DP_OK) o->device = (int)v;
    } else if (strcmp(key, "samples") == 0) {
        if (!value) o->samples = def.samples;
        else if ((rc = options_integer(key, value, 1, 1000000, &v, err)) == DP_OK) o->samples = (int)v;
    } else if (strcmp(key, "budget") == 0) {
        if (!value) o->budget = def.budget;
        else if ((rc = options_integer(key, value, 1, 1000000000000000ull, &v, err)) == DP_OK) o->budget = (long)v;
    } else if (strcmp(key, "refine_budget") == 0) {
        if (!value) o->refine_budget = def.refine_budget;
        else if ((rc = options_integer(key, value, 1, 1000000000000000ull, &v, err)) == DP_OK) o->refine_budget = (long)v;
    } else if (strcmp(key, "append_only") == 0) {
        if (!value) o->list_append_only = def.list_append_only;
        else if (strcmp(value, "1") == 0 || strcmp(value, "true") == 0) o->list_append_only = 1;
        else if (strcmp(value, "0") == 0 || strcmp(value, "false") == 0) o->list_append_only = 0;
        else rc = dp_error_set(err, DP_EINVAL, "place options: append_only: 0, 1, false or true, got \"%s\"", value);
    } else if (strcmp(key, "parameters") == 0) {
        if (!value) o->final_parameters = def.final_parameters;
        else if (strcmp(value, "selected") == 0) o->final_parameters = 0;
        else if (strcmp(value, "final") == 0) o->final_parameters = 1;
        else rc = dp_error_set(err, DP_EINVAL, "place options: parameters: selected or final, got \"%s\"", value);
        if (rc == DP_OK) o->parameters_set = value != NULL;
    } else if (strcmp(key, "ties") == 0) {
        if (!value) o->list_ties = def.list_ties;
        else if (strcmp(value, "id") == 0) o->list_ties = DP_LIST_TIES_ID;
        else if (strcmp(value, "heap") == 0) o->list_ties = DP_LIST_TIES_HEAP;
        else rc = dp_error_set(err, DP_EINVAL, "place options: ties: id or heap, got \"%s\"", value);
    } else {
        rc = dp_error_set(err, DP_EINVAL, "place options: unknown key \"%s\" (known: seed, device, checkpoint, samples, "
                          "budget, config, refine, refine_budget, proposals, append_only, ties, parameters)", key);
    }
    return rc;
}

void dp_place_options_set_engine(dp_place_options *o, dp_engine *engine)
{
    place_options_box *b = options_box(o);
    if (!engine) {
        o->oracle = NULL;
        return;
    }
    b->oracle = dp_engine_oracle(engine);
    o->oracle = &b->oracle;
}

void dp_place_options_set_machine(dp_place_options *o, const dp_machine *m)
{
    o->machine = m;
}

int dp_place_cp(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                double *priority, int *has_priority, dp_error *err)
{
    (void)o;
    dp_env *env = dp_env_alloc(g, c, err);
    if (!env) return err ? err->code : DP_ENOMEM;
    /* only the top of the b-level order is wanted: the heap keeps a step O(deg log ready) */
    dp_env_set_ready_order(env, DP_ENV_READY_BY_BLEVEL);
    while (!dp_env_done(env)) {
        int v = dp_env_cp_select(env);
        int d = dp_env_cp_place(env, v);
        int rc = dp_env_step(env, v, d, err);
        if (rc != DP_OK) { dp_env_free(env); return rc; }
    }
    memcpy(assignment, env->assignment, (size_t)g->n_ops * sizeof(int));
    if (priority) memcpy(priority, env->blevel, (size_t)g->n_ops * sizeof(double));
    if (has_priority) *has_priority = 1;
    dp_env_free(env);
    return DP_OK;
}

int dp_place_random(const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                    int *assignment, double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    if (has_priority) *has_priority = 0;
    const int samples = o->samples > 1 ? o->samples : 1;
    if (samples > 1 && !o->oracle)
        return dp_error_set(err, DP_EINVAL, "random: the best of %d samples simulates each: it needs the machine's "
                                            "cost oracle (dp_place_options.oracle)", samples);
    int *cand = samples > 1 ? dp_alloc_malloc_n((size_t)g->n_ops, sizeof(int)) : NULL;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r || (samples > 1 && !cand)) {
        gsl_rng_free(r);
        free(cand);
        return dp_error_set(err, DP_ENOMEM, "out of memory");
    }
    gsl_rng_set(r, (unsigned long)o->seed);
    /* sample k is the k-th draw of one generator: the best of K is a prefix of the best of K' > K,
     * and the best of 1 is the plain random placement */
    double best = INFINITY;
    int rc = DP_OK;
    for (int k = 0; k < samples && rc == DP_OK; k++) {
        int *a = samples > 1 ? cand : assignment;
        for (int v = 0; v < g->n_ops; v++) a[v] = (int)gsl_rng_uniform_int(r, (unsigned long)c->n_devices);
        if (samples == 1) break;
        double ms;
        /* a sample over a resource limit (memory under the error policy) is one of infinite cost,
         * as in the searches: it ended the whole run, though other samples fitted (a review) */
        rc = dp_search_move_over_limit(dp_oracle_cost(o->oracle, a, &ms, err), &ms);
        if (rc == DP_OK && ms < best) { /* ties: the earlier sample */
            best = ms;
            memcpy(assignment, a, (size_t)g->n_ops * sizeof(int));
        }
    }
    gsl_rng_free(r);
    free(cand);
    if (rc == DP_OK && samples > 1 && isinf(best))
        rc = dp_error_set(err, DP_ERANGE, "%s: random: each of the %d samples exceeds a resource limit (memory capacity "
                          "under the error policy)", g->source ? g->source : g->name, samples);
    return rc;
}

int dp_place_round_robin(const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                         int *assignment, double *priority, int *has_priority, dp_error *err)
{
    (void)o; (void)err; (void)priority;
    for (int k = 0; k < g->n_ops; k++) assignment[g->topo[k]] = k % c->n_devices;
    if (has_priority) *has_priority = 0;
    return DP_OK;
}

int dp_place_single(const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                    int *assignment, double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    if (o->device < 0 || o->device >= c->n_devices)
        return dp_error_set(err, DP_EINVAL, "single: device %d out of range 0..%d", o->device, c->n_devices - 1);
    for (int v = 0; v < g->n_ops; v++) assignment[v] = o->device;
    if (has_priority) *has_priority = 0;
    return DP_OK;
}

/* The learned methods (doppler, placeto, gdp): with o->checkpoint, its policy (the parameters
 * model selection kept) places; otherwise placeto and gdp first train o->budget episodes (200)
 * of Stage II from o->seed with o->config, through the one trainer (dp_train.h). */
/* the trainer's progress as the caller's (episodes done, of the stage's) */
static void train_progress(const dp_train_progress *p, void *ctx)
{
    const dp_place_options *o = ctx;
    o->progress(p->episode, p->episodes, o->progress_ctx);
}

/* The config placeto and gdp train with here, without a checkpoint: o->config as every trainer
 * reads it (dp_train_config_resolve), refusing the keys this Stage II training from --budget and
 * --seed cannot honour (dp_train_config_stage2_ignored), the seed o->seed. */
static int learned_config(int kind, const dp_place_options *o, dp_train_config *cfg, dp_error *err)
{
    dp_train_config_default(cfg);
    cfg->method = kind;
    int rc = dp_train_config_resolve(cfg, kind, o->config, err);
    if (rc != DP_OK) return rc;
    /* place trains Stage II alone, for --budget episodes from --seed, on the whole graph: a
     * config's seed, episodes, pipeline, Stage I's or Stage III's keys or coarsening were read
     * and ignored (reviews); they are refused, naming the option that does it here */
    const char *key = dp_train_config_stage2_ignored(cfg);
    if (key) {
        const char *hint = strcmp(key, "seed") == 0                  ? " (give --seed)"
                           : strcmp(key, "stages.sim.episodes") == 0 ? " (give --budget)"
                           : strcmp(key, "coarsen") == 0              ? " or coarsen_rule (give --coarsen and --coarsen-rule)"
                                                                      : " (place trains Stage II alone; doppler train runs the stages)";
        return dp_error_set(err, DP_EINVAL, "%s: --method %s with --config: the key %s%s does not apply to place",
                            o->config, dp_agent_name(kind), key, hint);
    }
    cfg->seed = o->seed;
    return DP_OK;
}

/* placeto's and gdp's check_config (dp_place_method): a config is read only without a checkpoint */
static int learned_check_config(int kind, const dp_place_options *o, dp_error *err)
{
    dp_train_config cfg;
    return o->config && !o->checkpoint ? learned_config(kind, o, &cfg, err) : DP_OK;
}
static int place_placeto_config(const dp_place_options *o, dp_error *err)
{
    return learned_check_config(DP_AGENT_PLACETO, o, err);
}
static int place_gdp_config(const dp_place_options *o, dp_error *err)
{
    return learned_check_config(DP_AGENT_GDP, o, err);
}

static int place_learned(int kind, const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                         int *has_priority, dp_error *err)
{
    if (has_priority) *has_priority = 0;
    const char *name = dp_agent_name(kind);
    if (kind == DP_AGENT_DOPPLER && !o->checkpoint)
        return dp_error_set(err, DP_EINVAL, "method doppler places with a trained policy: --checkpoint FILE is required (train one with 'doppler train')");
    dp_train_config cfg;
    dp_train_config_default(&cfg);
    cfg.method = kind;
    int rc;
    if (o->checkpoint && o->config)
        /* the checkpoint holds the config its parameters were trained under (issue 28: a
         * --config beside --checkpoint was ignored without a word) */
        return dp_error_set(err, DP_EINVAL, "%s: --config %s does not apply with --checkpoint (the checkpoint holds "
                            "the config it was trained under; a config trains a new model without --checkpoint)",
                            name, o->config);
    if (o->checkpoint) {
        char *json = NULL;
        if ((rc = dp_h5io_ckpt_read_config(o->checkpoint, &json, err)) != DP_OK) return rc;
        cfg.method = DP_AGENT_DOPPLER; /* a checkpoint's config without "method" is DOPPLER's */
        rc = dp_train_config_from_json_text(&cfg, json, err);
        free(json);
        if (rc != DP_OK) {
            dp_error_prefix(err, "%s", o->checkpoint);
            return rc;
        }
        if (cfg.method != kind)
            return dp_error_set(err, DP_EINVAL, "%s: not a %s checkpoint (made by %s)", o->checkpoint, name,
                                dp_agent_name(cfg.method));
    } else if ((rc = learned_config(kind, o, &cfg, err)) != DP_OK) {
        return rc;
    }
    /* from a checkpoint: its parameters, without the random initialisation they replace; no
     * training follows, so DOPPLER's networks are bound for the forward only (no gradient
     * buffers or per-step caches: dp_doppler_arch.no_grad) */
    if (o->checkpoint) cfg.arch.no_grad = 1;
    dp_train *tr = o->checkpoint ? dp_train_alloc_from(g, c, &cfg, o->oracle, o->checkpoint, o->final_parameters, err)
                                 : dp_train_alloc(g, c, &cfg, o->oracle, err);
    if (!tr) return err ? err->code : DP_ENOMEM;
    rc = DP_OK;
    if (!o->checkpoint) {
        dp_train_io io = {NULL, NULL, o->progress ? train_progress : NULL, (void *)o, NULL, NULL};
        rc = dp_train_run(tr, DP_TRAIN_STAGE_SIM, o->budget > 0 ? o->budget : 200, &io, err);
    }
    /* the model-selected parameters (a checkpoint's best, or this run's), unless the final ones
     * are asked for: the parameters the training ended with, which dp_train_use_best replaces */
    if (rc == DP_OK && !o->final_parameters) dp_train_use_best(tr);
    double ms;
    if (rc == DP_OK && o->proposal) rc = dp_train_policy_probs(tr, o->proposal, err);
    dp_train_set_greedy_heap(tr, 1); /* the same placement, O(log ready) a step */
    /* --samples K (K >= 1): the best of greedy and K samples (--samples 1 was greedy alone: a review) */
    if (rc == DP_OK) rc = dp_train_place(tr, o->samples, o->seed, assignment, &ms, NULL, err);
    if (o->prefix_simulations) *o->prefix_simulations += dp_train_prefix_simulations(tr);
    dp_train_free(tr);
    if (rc == DP_OK && o->best_seen && o->checkpoint) {
        /* the best placement the training sampled, if it simulates better here */
        int *seen = dp_alloc_malloc_n((size_t)g->n_ops, sizeof(int)), found = 0;
        double ms2;
        if (!seen) return dp_error_set(err, DP_ENOMEM, "out of memory");
        rc = dp_place_best_sample(o->checkpoint, g, c, o->oracle, seen, &ms2, &found, err);
        if (rc == DP_OK && found && ms2 < ms) memcpy(assignment, seen, (size_t)g->n_ops * sizeof(int));
        free(seen);
    }
    return rc;
}

int dp_place_best_sample(const char *checkpoint, const dp_graph *g, const dp_cost *c, const dp_oracle *oracle,
                         int *assignment, double *makespan, int *found, dp_error *err)
{
    double recorded = NAN, ms = NAN;
    *found = 0;
    int rc = dp_h5io_ckpt_read_best_sample(checkpoint, g->name, g->n_ops, c->n_devices, assignment, &recorded, found, err);
    if (rc != DP_OK || !*found) return rc;
    *found = 0;
    if ((rc = dp_oracle_cost(oracle, assignment, &ms, err)) != DP_OK) return rc;
    /* another problem of the same name and size: its simulation gives another makespan */
    if (!(fabs(ms - recorded) <= 1e-9 * fabs(recorded))) return DP_OK;
    *found = 1;
    if (makespan) *makespan = ms;
    return DP_OK;
}

int dp_place_doppler(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                     double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    return place_learned(DP_AGENT_DOPPLER, g, c, o, assignment, has_priority, err);
}

int dp_place_placeto(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                     double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    return place_learned(DP_AGENT_PLACETO, g, c, o, assignment, has_priority, err);
}

int dp_place_gdp(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment, double *priority,
                 int *has_priority, dp_error *err)
{
    (void)priority;
    return place_learned(DP_AGENT_GDP, g, c, o, assignment, has_priority, err);
}

/* The registry. Issues that add methods add one line here. */
/* The sweep parameters of the training runs (dp_place_method.sweep_params; experiments/run.c):
 * DOPPLER's two stages, with cfg__KEY__SUBKEY for one key of the training config */
static const char *const stages_sweep_params[] = {"method", "seed", "episodes_il", "episodes_sim", "train_config", "samples",
                                                  "bench_reps", "variant", "model_selection", "cfg__*", NULL};
static const char *const agent_sweep_params[] = {"method", "seed", "episodes", "train_config", "samples", "bench_reps", NULL};

static const dp_place_method methods[] = {
    {"cp", "critical-path list scheduling: highest b-level first, earliest estimated start (Kwok & Ahmad 1999)", dp_place_cp, 0, 300, 16, 48, 0, NULL, 0, NULL, NULL, NULL},
    {"random", "uniformly random device per op (seeded GSL mt19937); --samples K: the best of K, each simulated", dp_place_random, 0, 16, 0, 0, DP_PLACE_OPT_SAMPLES, NULL, 0, NULL, NULL, NULL},
    {"round-robin", "op k of the topological order on device k mod D", dp_place_round_robin, 0, 16, 0, 0, 0, NULL, 0, NULL, NULL, NULL},
    {"single", "every op on one device (--device, default 0)", dp_place_single, 0, 16, 0, 0, DP_PLACE_OPT_DEVICE, NULL, 0, NULL, NULL, NULL},
    {"doppler", "DOPPLER's trained SEL and PLC policies (--checkpoint; --samples K: best of K; Yao et al. 2026)", dp_place_doppler, 1, 300, 16, 64, DP_PLACE_OPT_CHECKPOINT | DP_PLACE_OPT_SAMPLES | DP_PLACE_OPT_NEEDS_CHECKPOINT, NULL,
     DP_PLACE_SWEEP_STAGES, stages_sweep_params, NULL, NULL},
    {"heft", "HEFT: upward rank, insertion-based earliest finish time (Topcuoglu, Hariri & Wu 2002)", dp_list_place_heft, 0, 160, 24, 24, DP_PLACE_OPT_LIST, dp_list_heft, 0, NULL, NULL, NULL},
    {"cpop", "CPOP: critical path on one device, others by earliest finish (Topcuoglu, Hariri & Wu 2002)", dp_list_place_cpop, 0, 160, 24, 24, DP_PLACE_OPT_LIST, dp_list_cpop, 0, NULL, NULL, NULL},
    {"peft", "PEFT: optimistic cost table rank and EFT + OCT device choice (Arabnejad & Barbosa 2014)", dp_list_place_peft, 0, 160, 24, 32, DP_PLACE_OPT_LIST, dp_list_peft, 0, NULL, NULL, NULL},
    {"etf", "ETF: earliest start (op, device) pair first, ties by static level (Hwang et al. 1989)", dp_list_place_etf, 0, 160, 24, 24, 0, dp_list_etf, 0, NULL, NULL, NULL},
    {"anneal", "simulated annealing over assignments, simulator as cost (--budget sims, --config JSON)", dp_search_place_anneal, 1, 300, 16, 48, DP_PLACE_OPT_BUDGET | DP_PLACE_OPT_CONFIG | DP_PLACE_OPT_PROPOSALS, NULL, 0, NULL, dp_search_config_sections, dp_search_place_anneal_config},
    {"local", "local search over assignments: move/swap, keep if no worse (--budget sims)", dp_search_place_local, 1, 300, 16, 48, DP_PLACE_OPT_BUDGET | DP_PLACE_OPT_CONFIG | DP_PLACE_OPT_PROPOSALS, NULL, 0, NULL, dp_search_config_sections, dp_search_place_local_config},
    {"exact", "branch and bound over assignments for small graphs (<= 24 ops), FIFO-simulated optimum", dp_search_place_exact, 1, 300, 16, 48, DP_PLACE_OPT_BUDGET, NULL, 0, NULL, NULL, NULL},
    {"improve", "learned improvement: a policy reads the schedule and proposes moves, each simulated (--checkpoint of train --method improve, --budget sims)", dp_improve_place, 1, 600, 32, 64, DP_PLACE_OPT_CHECKPOINT | DP_PLACE_OPT_BUDGET | DP_PLACE_OPT_CONFIG | DP_PLACE_OPT_NEEDS_CHECKPOINT, NULL, 0, NULL, dp_improve_search_sections, dp_improve_place_config},
    {"placeto", "Placeto: topological order, graph embedding, REINFORCE (Addanki et al. 2019); --checkpoint, else trains --budget episodes (200) from --seed", dp_place_placeto, 1, 300, 16, 48, DP_PLACE_OPT_CHECKPOINT | DP_PLACE_OPT_SAMPLES | DP_PLACE_OPT_BUDGET | DP_PLACE_OPT_CONFIG | DP_PLACE_OPT_TRAINS_WITHOUT_CHECKPOINT, NULL,
     DP_PLACE_SWEEP_AGENT, agent_sweep_params, dp_train_config_sections, place_placeto_config},
    {"gdp", "GDP: GraphSAGE + attention, one-shot placement, REINFORCE (Zhou et al. 2019); --checkpoint, else trains --budget episodes (200) from --seed", dp_place_gdp, 1, 300, 16, 48, DP_PLACE_OPT_CHECKPOINT | DP_PLACE_OPT_SAMPLES | DP_PLACE_OPT_BUDGET | DP_PLACE_OPT_CONFIG | DP_PLACE_OPT_TRAINS_WITHOUT_CHECKPOINT, NULL,
     DP_PLACE_SWEEP_AGENT, agent_sweep_params, dp_train_config_sections, place_gdp_config},
    {NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, 0, NULL, NULL, NULL},
};

const dp_place_method *dp_place_methods(void)
{
    return methods;
}

int dp_place_check_config(const char *name, const dp_place_options *o, dp_error *err)
{
    const dp_place_method *m = dp_place_find(name);
    if (!m) {
        int dummy = 0;
        return dp_place(name, NULL, NULL, NULL, &dummy, NULL, NULL, err); /* its "unknown method" message */
    }
    return o && o->config && m->check_config ? m->check_config(o, err) : DP_OK;
}

/* The options' command spellings, in the mask's bit order (the bits of the two conditions have none). */
static const char *const option_names[] = {"--device", "--checkpoint", "--samples", "--budget", "--config", "--proposals",
                                           "--append-only/--ties"};

void dp_place_options_text(const dp_place_method *m, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap) buf[0] = '\0';
    for (size_t i = 0; i < sizeof option_names / sizeof *option_names; i++)
        if (m->options & (1u << i)) {
            int k = snprintf(buf + len, cap > len ? cap - len : 0, "%s%s", len ? " " : "", option_names[i]);
            if (k > 0) len += (size_t)k;
            if (i == 1 && (m->options & DP_PLACE_OPT_NEEDS_CHECKPOINT)) {
                k = snprintf(buf + len, cap > len ? cap - len : 0, " (required)");
                if (k > 0) len += (size_t)k;
            }
        }
}

size_t dp_place_method_size(void)
{
    return sizeof(dp_place_method);
}

/* "doppler, placeto, gdp or random": the methods whose options include bit */
static void methods_reading(unsigned bit, char *buf, size_t cap)
{
    int n = 0, k = 0;
    for (const dp_place_method *q = methods; q->name; q++) n += (q->options & bit) != 0;
    size_t len = 0;
    buf[0] = '\0';
    for (const dp_place_method *q = methods; q->name; q++) {
        if (!(q->options & bit)) continue;
        k++;
        int w = snprintf(buf + len, cap > len ? cap - len : 0, "%s%s", k == 1 ? "" : k == n ? " or " : ", ", q->name);
        if (w > 0) len += (size_t)w;
    }
}

int dp_place_check_options(const char *name, const dp_place_options *o, dp_error *err)
{
    const dp_place_method *m = dp_place_find(name);
    if (!m) {
        int dummy = 0;
        return dp_place(name, NULL, NULL, NULL, &dummy, NULL, NULL, err);   /* its "unknown method" message */
    }
    dp_place_options def;
    if (!o) { dp_place_options_init(&def); o = &def; }
    const int ck = o->checkpoint != NULL;
    /* the options given, as DP_PLACE_OPT_* bits */
    unsigned given = (o->device != 0 ? DP_PLACE_OPT_DEVICE : 0u) | (ck ? DP_PLACE_OPT_CHECKPOINT : 0u) |
                     (o->samples > 0 ? DP_PLACE_OPT_SAMPLES : 0u) | (o->budget > 0 ? DP_PLACE_OPT_BUDGET : 0u) |
                     (o->config ? DP_PLACE_OPT_CONFIG : 0u) | (o->proposals ? DP_PLACE_OPT_PROPOSALS : 0u) |
                     (o->list_append_only || o->list_ties ? DP_PLACE_OPT_LIST : 0u);
    unsigned reads = m->options;
    /* a method that trains without a checkpoint reads its training budget and config only then */
    if ((m->options & DP_PLACE_OPT_TRAINS_WITHOUT_CHECKPOINT) && ck) reads &= ~(DP_PLACE_OPT_BUDGET | DP_PLACE_OPT_CONFIG);
    /* refine reads proposals for any method */
    if (o->refine) reads |= DP_PLACE_OPT_PROPOSALS;
    for (size_t i = 0; i < sizeof option_names / sizeof *option_names; i++) {
        const unsigned bit = 1u << i;
        if (!(given & bit) || (reads & bit)) continue;
        char who[256];
        methods_reading(bit, who, sizeof who);
        if ((m->options & bit) && ck)
            return dp_error_set(err, DP_EINVAL, "%s: --method %s with --checkpoint does not use it (the checkpoint holds "
                                "the config it was trained under; %s trains here only without a checkpoint)",
                                option_names[i], name, name);
        return dp_error_set(err, DP_EINVAL, "%s: for --method %s%s; --method %s does not use it", option_names[i], who,
                            bit == DP_PLACE_OPT_PROPOSALS ? ", or with --refine" : "", name);
    }
    if ((o->final_parameters || o->parameters_set) && !(m->options & DP_PLACE_OPT_CHECKPOINT)) {
        char who[256];
        methods_reading(DP_PLACE_OPT_CHECKPOINT, who, sizeof who);
        return dp_error_set(err, DP_EINVAL, "--parameters: the parameters of a trained policy, for --method %s; --method %s "
                            "has none", who, name);
    }
    if (o->refine_budget > 0 && !o->refine)
        return dp_error_set(err, DP_EINVAL, "--refine-budget: the simulations of --refine; give --refine anneal, local "
                            "or improve too");
    if (o->refine && strcmp(o->refine, "improve") == 0 && !o->proposals)
        return dp_error_set(err, DP_EINVAL, "--refine improve: the improvement search needs its policy: --proposals FILE "
                            "(doppler train --method improve)");
    /* a missing required checkpoint is the method's own error (a run-time one, exit 1) */
    return DP_OK;
}

const dp_place_method *dp_place_find(const char *name)
{
    if (!name) return NULL;
    for (const dp_place_method *m = methods; m->name; m++)
        if (strcmp(m->name, name) == 0) return m;
    return NULL;
}

/* refine "improve": the improvement search (dp_improve_search, its default acceptance and mix)
 * of checkpoint's policy from acfg's start, for acfg's budget */
static int refine_improve(const char *checkpoint, const dp_graph *g, const dp_cost *c, const dp_oracle *oracle,
                          const dp_search_anneal_config *acfg, uint64_t seed, int *assignment, dp_search_result *res,
                          dp_error *err)
{
    dp_improve_model *m = NULL;
    int rc = dp_improve_model_load(checkpoint, &m, err);
    if (rc != DP_OK) return rc;
    dp_improve_search_config icfg;
    dp_improve_search_config_init(&icfg);
    icfg.anneal.budget = acfg->budget;
    icfg.anneal.start = acfg->start;
    rc = dp_improve_search(m, g, c, oracle, &icfg, seed, assignment, res, err);
    dp_improve_model_free(m);
    return rc;
}

/* The refine options of o (o->refine set): the search's name, an improvement policy for
 * "improve", the oracle. Sets *annealing (1 for "anneal"). */
static int refine_check(const dp_place_options *o, int *annealing, dp_error *err)
{
    const int improving = strcmp(o->refine, "improve") == 0;
    *annealing = strcmp(o->refine, "anneal") == 0;
    if (!*annealing && !improving && strcmp(o->refine, "local") != 0)
        return dp_error_set(err, DP_EINVAL, "refine: \"anneal\", \"local\" or \"improve\", got \"%s\"", o->refine);
    if (improving && !o->proposals)
        return dp_error_set(err, DP_EINVAL, "refine: \"improve\" is the improvement search of an improvement policy: give "
                                            "its checkpoint (--proposals FILE, from doppler train --method improve)");
    if (!o->oracle) return dp_error_set(err, DP_EINVAL, "refine: it simulates: it needs the machine's cost oracle");
    return DP_OK;
}

/* dp_place_refine, and the refined placement's cost (the oracle's: default priorities) in *best */
static int refine_run(const dp_graph *g, const dp_cost *c, const dp_place_options *o, const int *start,
                      const float *proposal, int *assignment, double *best, dp_error *err);

int dp_place_refine(const dp_graph *g, const dp_cost *c, const dp_place_options *o, const int *start,
                    const float *proposal, int *assignment, dp_error *err)
{
    double best;
    return refine_run(g, c, o, start, proposal, assignment, &best, err);
}

static int refine_run(const dp_graph *g, const dp_cost *c, const dp_place_options *o, const int *start,
                      const float *proposal, int *assignment, double *best, dp_error *err)
{
    if (!o || !o->refine) return dp_error_set(err, DP_EINVAL, "refine: no search named (dp_place_options.refine)");
    int annealing, rc0 = refine_check(o, &annealing, err);
    if (rc0 != DP_OK) return rc0;
    const int improving = strcmp(o->refine, "improve") == 0;
    dp_search_anneal_config cfg;
    dp_search_anneal_config_init(&cfg);
    cfg.budget = o->refine_budget > 0 ? o->refine_budget : 2000;
    cfg.start = start;
    cfg.proposal = proposal;
    dp_search_result res;
    int rc = improving    ? refine_improve(o->proposals, g, c, o->oracle, &cfg, o->seed, assignment, &res, err)
             : o->proposals ? dp_improve_propose_search(o->proposals, annealing, g, c, o->oracle, &cfg, o->seed, assignment, &res, err)
             : annealing  ? dp_search_anneal(g, c, o->oracle, &cfg, o->seed, assignment, &res, err)
                          : dp_search_local(g, c, o->oracle, &cfg, o->seed, assignment, &res, err);
    if (rc == DP_OK) dp_search_trace_clear(&res.trace);
    *best = res.best;
    return rc;
}

int dp_place(const char *name, const dp_graph *g, const dp_cost *c, const dp_place_options *o,
             int *assignment, double *priority, int *has_priority, dp_error *err)
{
    if (!name) return dp_error_set(err, DP_EINVAL, "place: no method name (NULL)");
    const dp_place_method *m = dp_place_find(name);
    if (!m) {
        char list[512] = "";
        for (const dp_place_method *q = methods; q->name; q++) {
            strncat(list, q->name, sizeof list - strlen(list) - 1);
            if (q[1].name) strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
        return dp_error_set(err, DP_EINVAL, "unknown method \"%s\" (known: %s)", name, list);
    }
    if (!g || !c || !assignment) return dp_error_set(err, DP_EINVAL, "place: graph, cost tables and assignment are required");
    /* the method's working memory (the costs, graph and oracle are the caller's, already held):
     * refused beforehand, with the number and DOPPLER_MEM_LIMIT, when it cannot fit */
    {
        const double ops = g->n_ops, D = c->n_devices;
        const double bytes = 65536 + ops * m->bytes_op + (double)g->n_edges * m->bytes_edge + ops * D * m->bytes_op_device +
                             (o && o->refine ? ops * (300 + 8 * D) : 0);
        char what[96];
        snprintf(what, sizeof what, "method %s on this graph (%d ops, %d devices)", m->name, g->n_ops, c->n_devices);
        int rc = dp_file_mem_check(g->source ? g->source : g->name, what, bytes, err);
        if (rc != DP_OK) return rc;
    }
    dp_place_options def;
    if (!o) { dp_place_options_init(&def); o = &def; }
    if (m->simulates && !o->oracle)
        return dp_error_set(err, DP_EINVAL, "method %s simulates: it needs the machine's cost oracle (dp_place_options.oracle)",
                            name);
    int hp = 0;
    if (!o->refine) {
        int rc = m->fn(g, c, o, assignment, priority, &hp, err);
        if (has_priority) *has_priority = hp;
        return rc;
    }
    /* search at inference: the method's placement (and a learned method's probabilities as
     * proposals) starts annealing or local search on the same oracle */
    int annealing, rc0 = refine_check(o, &annealing, err);
    if (rc0 != DP_OK) return rc0;
    /* zeroed: a method that gives no probabilities (improve) leaves it so, and the search's moves
     * are then uniform (they were drawn from the uninitialised array: a review) */
    float *prop = m->simulates && strcmp(name, "anneal") && strcmp(name, "local") && strcmp(name, "exact")
                      ? dp_alloc_calloc_n((size_t)g->n_ops * c->n_devices, sizeof(float))
                      : NULL;
    int *start = dp_alloc_malloc_n((size_t)g->n_ops, sizeof(int));
    if (!start) {
        free(prop);
        return dp_error_set(err, DP_ENOMEM, "out of memory");
    }
    dp_place_options inner = *o;
    inner.refine = NULL;
    inner.proposal = prop;
    inner.best_seen = 1;
    int rc = m->fn(g, c, &inner, start, priority, &hp, err);
    if (rc == DP_OK && prop) {
        int filled = 0;
        for (size_t i = 0, nd = (size_t)g->n_ops * c->n_devices; i < nd && !filled; i++) filled = prop[i] != 0;
        if (!filled) {
            free(prop);
            prop = NULL;
        }
    }
    if (rc == DP_OK && o->proposal && prop) memcpy(o->proposal, prop, (size_t)g->n_ops * c->n_devices * sizeof(float));
    if (rc == DP_OK && prop) {
        /* half the policy, half uniform: a peaked policy would otherwise propose little else than
         * the device the op is on, and the search would stall where the policy put it */
        const size_t nd = (size_t)g->n_ops * c->n_devices;
        for (size_t i = 0; i < nd; i++) prop[i] = 0.5f * prop[i] + 0.5f / (float)c->n_devices;
    }
    double refined = INFINITY;
    if (rc == DP_OK) rc = refine_run(g, c, o, start, prop, assignment, &refined, err);
    int keep_start = 0;
    dp_engine *e = o->oracle ? o->oracle->engine : NULL;
    if (rc == DP_OK && hp && priority && has_priority && e && dp_engine_priority_queue(e)) {
        /* the search scores placements with the default priorities (b-levels); the method's own
         * placement runs with its own, which can be better: "never worse than the method" held
         * only on FIFO queues (PEFT's 12 refined to 14; a review). The method's placement with
         * its priorities is simulated once more (counted) and kept when the refined one is worse */
        dp_engine_schedule s;
        rc = dp_engine_run(e, start, priority, &s, err);
        if (rc == DP_OK && s.cost < refined) {
            keep_start = 1;
            memcpy(assignment, start, (size_t)g->n_ops * sizeof(int));
        }
    }
    free(start);
    free(prop);
    if (has_priority) *has_priority = keep_start;
    return rc;
}

const dp_place_method *dp_place_method_at(int i)
{
    if (i < 0) return NULL;
    for (int j = 0; j < i; j++)
        if (!methods[j].name) return NULL;
    return methods[i].name ? &methods[i] : NULL;
}

const char *dp_place_method_get_name(const dp_place_method *m) { return m->name; }
const char *dp_place_method_get_description(const dp_place_method *m) { return m->description; }
int dp_place_method_get_simulates(const dp_place_method *m) { return m->simulates != 0; }
const dp_schema_section *dp_place_method_get_config(const dp_place_method *m) { return m->config ? m->config() : NULL; }
