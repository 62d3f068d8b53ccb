/* dp_train_config.c: the trainer's configuration: stages' names, defaults (the project's and
 * the authors'), the JSON schema read and written, the checks (see dp_train.h). The trainer
 * (dp_train.c) reads a configuration only through dp_train.h. */
#include "dp_train.h"
#include "dp_json.h"
#include "dp_schema.h"

#include <jansson.h>
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- stages and config ---- */

static const char *stage_names[DP_TRAIN_N_STAGES] = {"il", "sim", "real"};

/* The tables of the config's objects (dp_schema.h): the top level's plain keys, "adam",
 * "network" (DOPPLER's), "placeto", "gdp" and each stage's. The keys read by hand below are the
 * ones with rules across keys: "method", "defaults", "seed" (up to 2^64-1), "batch" (every
 * stage's), "demonstrations". */
#define TC(f) offsetof(dp_train_config, f)
static const dp_schema_key top_keys[] = {
    {"gamma", DP_SCHEMA_DOUBLE, TC(gamma), 0, 1, NULL, 0, "0.99", "discount of the return", NULL, NULL, 0, NULL},
    {"checkpoint_every", DP_SCHEMA_LONG, TC(checkpoint_every), 1, 1099511627776.0, NULL, 0, "100",
     "episodes between checkpoints (rounded up to a multiple of batch)", NULL, NULL, 0, NULL},
    {"reward", DP_SCHEMA_ENUM, TC(reward_relative), 0, 0, "units|relative", 0, "units",
     "the reward in the printed time unit (authors) or divided by the average", NULL, NULL, 0, NULL},
    {"reference", DP_SCHEMA_ENUM, TC(reference_best_instant), 0, 0, "cp|best-instant", 0, "cp",
     "the unit of a distribution's makespans: each graph's cp or best instant placement", NULL, NULL, 0, NULL},
    {"sel_teacher", DP_SCHEMA_ENUM, TC(sel_teacher_etf), 0, 0, "cp|etf", 0, "cp",
     "the SEL imitation target: cp's highest b-level, or ETF's earliest start (needs network.sel_dynamic)", NULL, NULL, 0, NULL},
    {"state", DP_SCHEMA_ENUM, TC(state), 0, 0, "append|engine", 0, "append",
     "the environment's state: the authors' append estimate or the engine's prefix schedule", NULL, NULL, 0, NULL},
    {"update_sel", DP_SCHEMA_BOOL, TC(update_sel), 0, 0, NULL, 0, "true", "train the SEL network", NULL, NULL, 0, NULL},
    {"update_plc", DP_SCHEMA_BOOL, TC(update_plc), 0, 0, NULL, 0, "true", "train the PLC network", NULL, NULL, 0, NULL},
    {"sel_topological", DP_SCHEMA_BOOL, TC(sel_topological), 0, 0, NULL, 0, "false",
     "the ready op earliest in topological order instead of SEL's choice", NULL, NULL, 0, NULL},
    {"grad_clip", DP_SCHEMA_DOUBLE, TC(grad_clip), 0, 1e30, NULL, 0, "0", "max global gradient norm per network (0: none)", NULL, NULL, 0, NULL},
    {"coarsen", DP_SCHEMA_INT, TC(coarsen), 0, 1 << 28, NULL, 0, "0",
     "train on each graph's group graph, groups of at most N ops (train --coarsen N; 0: the graphs themselves)", NULL, NULL, 0, NULL},
    {"coarsen_rule", DP_SCHEMA_ENUM, TC(coarsen_rule), 0, 0, "packed|chains", 0, "packed",
     "with coarsen: how ops are grouped (train --coarsen-rule)", NULL, NULL, 0, NULL},
    {"pipeline", DP_SCHEMA_BOOL, TC(pipeline), 0, 0, NULL, 0, "false",
     "Stage I then Stage II (train --pipeline; recorded so that --resume continues the pipeline)", NULL, NULL, 0, NULL},
    {0},
};

static const dp_schema_key adam_keys[] = {
    {"beta1", DP_SCHEMA_DOUBLE, TC(adam_beta1), 0, 0.999999, NULL, 0, "0.9", "Adam's first moment decay", NULL, NULL, 0, NULL},
    {"beta2", DP_SCHEMA_DOUBLE, TC(adam_beta2), 0, 0.999999999, NULL, 0, "0.999", "Adam's second moment decay", NULL, NULL, 0, NULL},
    /* eps > 0: with v = 0 (a parameter without gradient yet) Adam divides by it; the update runs
     * in float, so at least the smallest normal float */
    {"eps", DP_SCHEMA_DOUBLE, TC(adam_eps), FLT_MIN, 1, NULL, 0, "1e-08", "Adam's epsilon", NULL, NULL, 0, NULL},
    {"weight_decay", DP_SCHEMA_DOUBLE, TC(weight_decay), 0, 1e6, NULL, 0, "0", "L2 weight decay", NULL, NULL, 0, NULL},
    {0},
};

/* defaults: dp_doppler_arch_default's, dp_placeto_arch_default's, dp_gdp_arch_default's
 * (tests/test_schema.c checks they agree) */
static const dp_schema_key network_keys[] = {
    {"hidden", DP_SCHEMA_INT, TC(arch.hidden), 1, 4096, NULL, 0, "128", "MPNN width and projections", NULL, NULL, 0, NULL},
    {"mlp_hidden", DP_SCHEMA_INT, TC(arch.mlp_hidden), 1, 4096, NULL, 0, "64", "hidden width of the scoring MLPs", NULL, NULL, 0, NULL},
    {"steps", DP_SCHEMA_INT, TC(arch.steps), 1, 64, NULL, 0, "6", "message-passing steps", NULL, NULL, 0, NULL},
    {"edge_hidden", DP_SCHEMA_INT, TC(arch.edge_hidden), 1, 4096, NULL, 0, "128", "hidden width of the edge network", NULL, NULL, 0, NULL},
    {"slope", DP_SCHEMA_FLOAT, TC(arch.slope), 0, 1, NULL, 0, "0.1", "leaky ReLU slope", NULL, NULL, 0, NULL},
    {"cp_embeddings", DP_SCHEMA_BOOL, TC(arch.cp_embeddings), 0, 0, NULL, 0, "true", "SEL sees the b- and t-path embeddings", NULL, NULL, 0, NULL},
    {"magnitude", DP_SCHEMA_BOOL, TC(arch.device_magnitude), 0, 0, NULL, 0, "false",
     "the PLC's device features keep their magnitude (not z-scored)", NULL, NULL, 0, NULL},
    {"sel_dynamic", DP_SCHEMA_BOOL, TC(arch.sel_dynamic), 0, 0, NULL, 0, "false",
     "SEL adds per-step terms of each ready op's state (earliest start and finish, ...) to its static score (issue 29)",
     NULL, NULL, 0, NULL},
    {"features", DP_SCHEMA_ENUM, TC(arch.device_features), 0, 0, "doppler|engine|hint", 0, "doppler",
     "the PLC's device features: the authors' five, this project's twelve, or those and the best instant placement's device "
     "(hint: each graph's best instant placement is made first, its simulations counted)", NULL, NULL, 0, NULL},
    {0},
};

static const dp_schema_key placeto_keys[] = {
    {"hidden", DP_SCHEMA_INT, TC(placeto.hidden), 1, 4096, NULL, 0, "32", "embedding width", NULL, NULL, 0, NULL},
    {"mlp_hidden", DP_SCHEMA_INT, TC(placeto.mlp_hidden), 1, 4096, NULL, 0, "64", "hidden width of the policy MLP", NULL, NULL, 0, NULL},
    {"slope", DP_SCHEMA_FLOAT, TC(placeto.slope), 0, 1, NULL, 0, "0", "leaky ReLU slope", NULL, NULL, 0, NULL},
    {0},
};

static const dp_schema_key gdp_keys[] = {
    {"hidden", DP_SCHEMA_INT, TC(gdp.hidden), 1, 4096, NULL, 0, "64", "width (a multiple of heads)", NULL, NULL, 0, NULL},
    {"layers", DP_SCHEMA_INT, TC(gdp.layers), 0, 64, NULL, 0, "2", "GraphSAGE layers (the encoder; one attention block follows them)", NULL, NULL, 0, NULL},
    {"heads", DP_SCHEMA_INT, TC(gdp.heads), 1, 256, NULL, 0, "4", "attention heads", NULL, NULL, 0, NULL},
    {"mlp_hidden", DP_SCHEMA_INT, TC(gdp.mlp_hidden), 1, 4096, NULL, 0, "64", "hidden width of the policy MLP", NULL, NULL, 0, NULL},
    {"slope", DP_SCHEMA_FLOAT, TC(gdp.slope), 0, 1, NULL, 0, "0", "leaky ReLU slope", NULL, NULL, 0, NULL},
    {0},
};
#undef TC

/* a stage's keys; the defaults are the authors' Stage II and III, Stage I's differ (stage_defaults) */
#define SC(f) offsetof(dp_train_stage, f)
static const dp_schema_key stage_keys[] = {
    {"episodes", DP_SCHEMA_LONG, SC(episodes), 0, 1099511627776.0, NULL, 0, "2000", "episodes of the stage", NULL, NULL, 0, NULL},
    {"batch", DP_SCHEMA_INT, SC(batch), 1, 1 << 20, NULL, 0, "1", "episodes per update", NULL, NULL, 0, NULL},
    {"exploration", DP_SCHEMA_ENUM, SC(exploration), 0, 0, "epsilon-greedy|mixture", 0, "epsilon-greedy",
     "how epsilon explores", NULL, NULL, 0, NULL},
    {"baseline", DP_SCHEMA_ENUM, SC(baseline), 0, 0, "running|greedy|batch", 0, "running", "the policy gradient's baseline", NULL, NULL, 0, NULL},
    {"lr", DP_SCHEMA_DOUBLE, SC(lr), 0, 10, NULL, 0, "0.0001", "Adam learning rate at the start", NULL, NULL, 0, NULL},
    {"lr_final", DP_SCHEMA_DOUBLE, SC(lr_final), 0, 10, NULL, 0, "0", "learning rate at the end (linear decay)", NULL, NULL, 0, NULL},
    {"epsilon", DP_SCHEMA_DOUBLE, SC(epsilon), 0, 1, NULL, 0, "0.2", "exploration at the start", NULL, NULL, 0, NULL},
    {"epsilon_final", DP_SCHEMA_DOUBLE, SC(epsilon_final), 0, 1, NULL, 0, "0", "exploration at the end", NULL, NULL, 0, NULL},
    {"entropy_weight", DP_SCHEMA_DOUBLE, SC(entropy_weight), -1e6, 1e6, NULL, 0, "0", "weight of the entropy bonus", NULL, NULL, 0, NULL},
    {"il_weight", DP_SCHEMA_DOUBLE, SC(il_weight), -1e6, 1e6, NULL, 0, "0", "weight of imitation of the teacher", NULL, NULL, 0, NULL},
    {"pg_weight", DP_SCHEMA_DOUBLE, SC(pg_weight), -1e6, 1e6, NULL, 0, "1", "weight of the policy gradient", NULL, NULL, 0, NULL},
    {"positive_only", DP_SCHEMA_BOOL, SC(positive_only), 0, 0, NULL, 0, "false", "negative advantages count as 0", NULL, NULL, 0, NULL},
    {"normalize_advantages", DP_SCHEMA_BOOL, SC(normalize_advantages), 0, 0, NULL, 0, "false",
     "advantages divided by the batch's standard deviation", NULL, NULL, 0, NULL},
    {"forced_first", DP_SCHEMA_BOOL, SC(forced_first), 0, 0, NULL, 0, "false", "episode j's first op on device j mod D", NULL, NULL, 0, NULL},
    {"sil_weight", DP_SCHEMA_DOUBLE, SC(sil_weight), 0, 1e6, NULL, 0, "0", "self-imitation weight (0: off)", NULL, NULL, 0, NULL},
    {"sil_k", DP_SCHEMA_INT, SC(sil_k), 1, 1 << 16, NULL, 0, "8", "self-imitation buffer size", NULL, NULL, 0, NULL},
    {"sil_replays", DP_SCHEMA_INT, SC(sil_replays), 1, 1 << 16, NULL, 0, "1", "buffer placements imitated per batch", NULL, NULL, 0, NULL},
    {"distill", DP_SCHEMA_LONG, SC(distill), 0, 1 << 30, NULL, 0, "0", "updates imitating the stage's best at its end (0: off)", NULL, NULL, 0, NULL},
    {"patience", DP_SCHEMA_INT, SC(patience), 0, 1 << 30, NULL, 0, "0", "evaluations without improvement that end the stage (0: off)", NULL, NULL, 0, NULL},
    {0},
};
#undef SC

/* the authors' stages where they differ from the table's defaults (Stage I imitates the teacher) */
static const char authors_stages_json[] =
    "{\"il\": {\"lr\": 0.001, \"epsilon\": 1.0, \"entropy_weight\": 0.001, \"il_weight\": 1, \"pg_weight\": 0},"
    " \"real\": {\"episodes\": 4000}}";

/* the top level's keys outside its table: read by hand (rules across keys), or objects */
static const char *const top_others[] = {"method", "defaults", "seed", "batch", "demonstrations", "adam", "network",
                                         "placeto", "gdp", "stages", NULL};

static const dp_schema_section sections[] = {
    {"", top_keys, "the top level, besides method (doppler, placeto, gdp), defaults (authors, project), seed (0 to 2^64-1), batch (every stage's) and demonstrations {method, budget, checkpoint} (doc/estimators.md); the defaults are the authors' (\"defaults\": \"authors\"), method doppler's this project's (\"defaults\": \"project\"; --print-config shows them)", top_others},
    {"adam", adam_keys, "the optimiser", NULL},
    {"network", network_keys, "DOPPLER's networks (method doppler)", NULL},
    {"placeto", placeto_keys, "Placeto's network (method placeto)", NULL},
    {"gdp", gdp_keys, "GDP's network (method gdp)", NULL},
    {"stages.S", stage_keys, "each stage S of il, sim, real; the defaults are the authors' Stage II (sim); their Stage I (il) imitates and Stage III (real) runs longer (--print-config with \"defaults\": \"authors\" shows them)", NULL},
    {NULL, NULL, NULL, NULL},
};

const dp_schema_section *dp_train_config_sections(void)
{
    return sections;
}

const char *dp_train_stage_name(int stage)
{
    return stage >= 0 && stage < DP_TRAIN_N_STAGES ? stage_names[stage] : "?";
}

int dp_train_stage_parse(const char *s, int *stage)
{
    for (int i = 0; i < DP_TRAIN_N_STAGES; i++)
        if (strcmp(s, stage_names[i]) == 0) {
            *stage = i;
            return DP_OK;
        }
    return DP_EINVAL;
}

static int stages_from_json(dp_train_config *c, json_t *v, dp_error *err);

void dp_train_config_default(dp_train_config *c)
{
    memset(c, 0, sizeof *c);
    c->method = DP_AGENT_DOPPLER;
    dp_doppler_arch_default(&c->arch);
    dp_placeto_arch_default(&c->placeto);
    dp_gdp_arch_default(&c->gdp);
    dp_schema_defaults(top_keys, c);
    dp_schema_defaults(adam_keys, c);
    for (int i = 0; i < DP_TRAIN_N_STAGES; i++) dp_schema_defaults(stage_keys, &c->stage[i]);
    json_t *o = json_loads(authors_stages_json, 0, NULL);
    int rc = o ? stages_from_json(c, o, NULL) : DP_EINVAL;
    json_decref(o);
    assert(rc == DP_OK); /* a constant of this file */
    (void)rc;
    c->seed = 1;
}

/* bench/doppler-project.json (tests/test_train.sh checks they agree) */
static const char project_json[] =
    "{\"network\": {\"hidden\": 64, \"mlp_hidden\": 64, \"steps\": 6, \"edge_hidden\": 16, \"features\": \"engine\"},"
    " \"state\": \"engine\", \"gamma\": 1,"
    " \"stages\": {\"il\": {\"episodes\": 300, \"patience\": 5},"
    " \"sim\": {\"episodes\": 2500, \"batch\": 16, \"baseline\": \"batch\", \"normalize_advantages\": true,"
    " \"exploration\": \"mixture\", \"epsilon\": 0, \"epsilon_final\": 0, \"lr\": 0.001, \"lr_final\": 0.0001,"
    " \"forced_first\": true, \"sil_weight\": 1, \"sil_k\": 8, \"sil_replays\": 8, \"distill\": 1000,"
    " \"entropy_weight\": 0.001}}}";

static int from_json(dp_train_config *c, json_t *o, dp_error *err);

int dp_train_config_resolve(dp_train_config *c, int method, const char *path, dp_error *err)
{
    dp_train_config_default(c);
    if (method >= 0) c->method = method; /* before the config: it decides which keys apply */
    if (path && dp_train_config_load(c, path, err) != DP_OK) return err->code ? err->code : DP_EINVAL;
    if (method >= 0 && c->method != method)
        return dp_error_set(err, DP_EINVAL, "%s: a config of method %s, not %s", path, dp_agent_name(c->method),
                            dp_agent_name(method));
    if (c->method == DP_AGENT_DOPPLER) {
        /* this project's method, unless the config resets to the authors' ("defaults") */
        dp_train_config_project(c);
        if (path && dp_train_config_load(c, path, err) != DP_OK) return err->code ? err->code : DP_EINVAL;
    }
    return DP_OK;
}

/* 1 when the subtree at path (a.b) of two configs' every-value JSON differs (or is missing) */
static int subtree_differs(json_t *a, json_t *b, const char *k1, const char *k2)
{
    json_t *x = json_object_get(a, k1), *y = json_object_get(b, k1);
    if (k2) {
        x = json_object_get(x, k2);
        y = json_object_get(y, k2);
    }
    return !x || !y || !json_equal(x, y);
}

const char *dp_train_config_stage2_ignored(const dp_train_config *c)
{
    dp_train_config def;
    if (dp_train_config_resolve(&def, c->method, NULL, NULL) != DP_OK) return "the config";
    if (c->seed != def.seed) return "seed";
    if (c->stage[DP_TRAIN_STAGE_SIM].episodes != def.stage[DP_TRAIN_STAGE_SIM].episodes) return "stages.sim.episodes";
    if (c->pipeline != def.pipeline) return "pipeline";
    if (c->coarsen != def.coarsen || c->coarsen_rule != def.coarsen_rule) return "coarsen";
    /* every key of Stage I's and Stage III's settings (only their episodes were compared: lr,
     * epsilon and the others were read and ignored; a review) */
    char *tc = dp_train_config_to_json_all(c), *td = dp_train_config_to_json_all(&def);
    json_t *jc = tc ? json_loads(tc, 0, NULL) : NULL, *jd = td ? json_loads(td, 0, NULL) : NULL;
    const char *key = !jc || !jd                                    ? "the config"
                      : subtree_differs(jc, jd, "stages", "il")   ? "stages.il"
                      : subtree_differs(jc, jd, "stages", "real") ? "stages.real"
                                                                  : NULL;
    json_decref(jc);
    json_decref(jd);
    free(tc);
    free(td);
    return key;
}

void dp_train_config_project(dp_train_config *c)
{
    dp_train_config_default(c);
    json_t *o = json_loads(project_json, 0, NULL);
    int rc = o ? from_json(c, o, NULL) : DP_EINVAL;
    json_decref(o);
    assert(rc == DP_OK); /* a constant of this file */
    (void)rc;
}


/* o.key = a new object of table t read from base (NULL on failure: ENOMEM) */
static json_t *section_json(const dp_schema_key *t, const void *base)
{
    json_t *x = json_object();
    if (x && dp_schema_to_json(t, base, x, 1) != DP_OK) {
        json_decref(x);
        return NULL;
    }
    return x;
}

/* every: also the keys a checkpoint's config leaves out at their defaults (below) */
static char *config_to_json(const dp_train_config *c, int every)
{
    json_t *o = json_object();
    json_object_set_new(o, "method", json_string(dp_agent_name(c->method)));
    json_object_set_new(o, "seed", dp_json_seed(c->seed)); /* beyond 2^63-1 a string of its digits */
    dp_schema_to_json(top_keys, c, o, 1);
    /* "reference" came after checkpoints were written without it: its default is not written */
    if (!every && !c->reference_best_instant) json_object_del(o, "reference");
    /* so did "sel_teacher" and "network.sel_dynamic" (issue 29): their defaults are not written
     * either, so a checkpoint's config is what it was */
    if (!every && !c->sel_teacher_etf) json_object_del(o, "sel_teacher");
    /* and "pipeline" (a run's own, recorded since 2026-12-06) */
    if (!every && !c->pipeline) json_object_del(o, "pipeline");
    json_object_set_new(o, "adam", section_json(adam_keys, c));
    json_object_set_new(o, "network", section_json(network_keys, c));
    if (!every && !c->arch.sel_dynamic) json_object_del(json_object_get(o, "network"), "sel_dynamic");
    json_object_set_new(o, "placeto", section_json(placeto_keys, c));
    json_object_set_new(o, "gdp", section_json(gdp_keys, c));
    if (every && !c->demo_method[0]) json_object_set_new(o, "demonstrations", json_null()); /* none */
    if (c->demo_method[0]) {
        json_t *d = json_object();
        json_object_set_new(d, "method", json_string(c->demo_method));
        if (strcmp(c->demo_method, "best-instant") != 0) json_object_set_new(d, "budget", json_integer(c->demo_budget));
        if (c->demo_checkpoint[0]) json_object_set_new(d, "checkpoint", json_string(c->demo_checkpoint));
        json_object_set_new(o, "demonstrations", d);
    }
    json_t *st = json_object();
    for (int i = 0; i < DP_TRAIN_N_STAGES; i++) json_object_set_new(st, stage_names[i], section_json(stage_keys, &c->stage[i]));
    json_object_set_new(o, "stages", st);
    /* what the method cannot honour is not written (it would be refused when read back) */
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(o, tmp, key, v) if (dp_train_config_refused_key(c->method, key)) json_object_del(o, key);
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;
}

char *dp_train_config_to_json(const dp_train_config *c)
{
    return config_to_json(c, 0);
}

char *dp_train_config_to_json_all(const dp_train_config *c)
{
    return config_to_json(c, 1);
}

/* "demonstrations": {"method", "budget", "checkpoint"} (dp_train.h); null or {} removes them */
static int demo_from_json(dp_train_config *c, json_t *v, dp_error *err)
{
    if (json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0)) {
        c->demo_method[0] = c->demo_checkpoint[0] = '\0';
        c->demo_budget = 0;
        return DP_OK;
    }
    if (!json_is_object(v))
        return dp_error_set(err, DP_EINVAL, "config: \"demonstrations\" must be an object {\"method\", \"budget\", \"checkpoint\"}");
    const char *k;
    json_t *w;
    const char *method = NULL, *ck = NULL;
    long budget = -1;
    json_object_foreach(v, k, w) {
        if (strcmp(k, "method") == 0) {
            method = json_string_value(w);
            if (!method || (strcmp(method, "improve") != 0 && strcmp(method, "anneal") != 0 && strcmp(method, "local") != 0 &&
                            strcmp(method, "best-instant") != 0))
                return dp_error_set(err, DP_EINVAL, "config: \"demonstrations.method\" must be \"improve\", \"anneal\", \"local\" "
                                    "or \"best-instant\"");
        } else if (strcmp(k, "budget") == 0) {
            if (!json_is_integer(w) || json_integer_value(w) < 7 || json_integer_value(w) > (1LL << 30))
                return dp_error_set(err, DP_EINVAL, "config: \"demonstrations.budget\" must be an integer in [7, 2^30] (simulations per graph)");
            budget = (long)json_integer_value(w);
        } else if (strcmp(k, "checkpoint") == 0) {
            ck = json_string_value(w);
            if (!ck || !*ck || strlen(ck) >= sizeof c->demo_checkpoint)
                return dp_error_set(err, DP_EINVAL, "config: \"demonstrations.checkpoint\" must be a file name (under %zu bytes)",
                                    sizeof c->demo_checkpoint);
        } else {
            return dp_error_set(err, DP_EINVAL, "config: unknown key \"demonstrations.%s\" (known: method, budget, checkpoint)", k);
        }
    }
    if (!method) return dp_error_set(err, DP_EINVAL, "config: \"demonstrations\" needs \"method\"");
    const int instant = strcmp(method, "best-instant") == 0;
    if (instant && budget >= 0)
        return dp_error_set(err, DP_EINVAL, "config: \"demonstrations\" by \"best-instant\" take no \"budget\" (one simulation "
                            "of each instant method)");
    if (!instant && budget < 0)
        return dp_error_set(err, DP_EINVAL, "config: \"demonstrations\" by a search need its \"budget\"");
    if (strcmp(method, "improve") == 0 && !ck)
        return dp_error_set(err, DP_EINVAL, "config: \"demonstrations\" by \"improve\" need its policy: \"checkpoint\"");
    if (strcmp(method, "improve") != 0 && ck)
        return dp_error_set(err, DP_EINVAL, "config: \"demonstrations.checkpoint\" is the improve method's policy; %s takes none", method);
    snprintf(c->demo_method, sizeof c->demo_method, "%s", method);
    snprintf(c->demo_checkpoint, sizeof c->demo_checkpoint, "%s", ck ? ck : "");
    c->demo_budget = instant ? 0 : budget;
    return DP_OK;
}

/* The keys an agent cannot honour: given in its config they are refused, naming the key and the
 * agent (a key that is accepted must change what the agent does). */
const char *dp_train_config_refused_key(int method, const char *key)
{
    if (method != DP_AGENT_DOPPLER) {
        if (strcmp(key, "network") == 0) return "DOPPLER's networks; its own sizes are under its name";
        if (strcmp(key, "update_sel") == 0 || strcmp(key, "sel_topological") == 0)
            return "it has no SEL policy: it places the ops in topological order";
    }
    if (method != DP_AGENT_PLACETO && strcmp(key, "placeto") == 0) return "Placeto's network";
    if (method != DP_AGENT_GDP && strcmp(key, "gdp") == 0) return "GDP's network";
    if (method == DP_AGENT_GDP && strcmp(key, "gamma") == 0)
        return "it places every op in one action: every op's return is the episode's reward, undiscounted";
    return NULL;
}

/* "stages": {"il": {...}, "sim": {...}, "real": {...}} */
static int stages_from_json(dp_train_config *c, json_t *v, dp_error *err)
{
    if (!json_is_object(v)) return dp_error_set(err, DP_EINVAL, "config: \"stages\" must be an object");
    const char *k;
    json_t *w;
    json_object_foreach(v, k, w) {
        int si;
        if (dp_train_stage_parse(k, &si) != DP_OK || !json_is_object(w))
            return dp_error_set(err, DP_EINVAL, "config: \"stages.%s\": expected il, sim or real with an object", k);
        char prefix[32];
        snprintf(prefix, sizeof prefix, "stages.%s.", k);
        int rc = dp_schema_from_json(stage_keys, &c->stage[si], w, "config", prefix, NULL, err);
        if (rc != DP_OK) return rc;
    }
    return DP_OK;
}

static int from_json(dp_train_config *c, json_t *o, dp_error *err)
{
    if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "config: the top level must be an object");
    const char *key;
    json_t *v;
    /* the method first: it decides which keys apply */
    json_t *jm = json_object_get(o, "method");
    if (jm && dp_agent_parse(json_string_value(jm), &c->method) != DP_OK)
        return dp_error_set(err, DP_EINVAL, "config: \"method\" must be \"doppler\", \"placeto\" or \"gdp\", got \"%s\"%s",
                            json_is_string(jm) ? json_string_value(jm) : "?",
                            json_is_string(jm) && strcmp(json_string_value(jm), "improve") == 0
                                ? " (a learned improvement policy: place with --method improve or --proposals)" : "");
    json_t *jd = json_object_get(o, "defaults");
    if (jd) {
        const char *d = json_string_value(jd);
        const int m = c->method;
        if (d && strcmp(d, "authors") == 0) dp_train_config_default(c);
        else if (d && strcmp(d, "project") == 0) dp_train_config_project(c);
        else return dp_error_set(err, DP_EINVAL, "config: \"defaults\" must be \"authors\" or \"project\"");
        c->method = m;
    }
    json_object_foreach(o, key, v) {
        const char *why = dp_train_config_refused_key(c->method, key);
        if (why) return dp_error_set(err, DP_EINVAL, "config: key \"%s\" does not apply to method %s (%s)", key,
                                     dp_agent_name(c->method), why);
    }
    /* the table's keys, then the others */
    int rc = dp_schema_from_json(top_keys, c, o, "config", NULL, top_others, err);
    if (rc != DP_OK) return rc;
    if ((v = json_object_get(o, "seed"))) {
        /* 0 .. 2^64-1: an integer, or a string of digits for seeds beyond 2^63-1 */
        if (dp_json_seed_value(v, &c->seed) != 0)
            return dp_error_set(err, DP_EINVAL, "config: \"seed\" must be an integer from 0 to 2^64-1 (beyond 2^63-1 as a string of digits)");
    }
    if ((v = json_object_get(o, "batch"))) {
        /* every stage's; a stage's own "batch" (read after) overrides it */
        dp_train_stage s = c->stage[0];
        if ((rc = dp_schema_set_json(dp_schema_find(stage_keys, "batch"), &s, v, "config", NULL, err))) return rc;
        for (int i = 0; i < DP_TRAIN_N_STAGES; i++) c->stage[i].batch = s.batch;
    }
    if ((v = json_object_get(o, "demonstrations")) && (rc = demo_from_json(c, v, err))) return rc;
    if ((v = json_object_get(o, "adam")) && (rc = dp_schema_from_json(adam_keys, c, v, "config", "adam.", NULL, err))) return rc;
    if ((v = json_object_get(o, "network")) && (rc = dp_schema_from_json(network_keys, c, v, "config", "network.", NULL, err)))
        return rc;
    if ((v = json_object_get(o, "placeto")) && (rc = dp_schema_from_json(placeto_keys, c, v, "config", "placeto.", NULL, err)))
        return rc;
    if ((v = json_object_get(o, "gdp"))) {
        if ((rc = dp_schema_from_json(gdp_keys, c, v, "config", "gdp.", NULL, err))) return rc;
        if (c->gdp.hidden % c->gdp.heads != 0)
            return dp_error_set(err, DP_EINVAL, "config: gdp.hidden (%d) must be a multiple of gdp.heads (%d)", c->gdp.hidden,
                                c->gdp.heads);
    }
    if ((v = json_object_get(o, "stages")) && (rc = stages_from_json(c, v, err))) return rc;
    return DP_OK;
}

/* A relative "demonstrations.checkpoint" of the config file `path` (object o) that the working
 * folder does not hold but the config's folder does: that one (a sweep config's rule) */
static void demo_checkpoint_beside(dp_train_config *c, json_t *o, const char *path)
{
    json_t *d = json_object_get(o, "demonstrations");
    const char *ck = json_is_object(d) ? json_string_value(json_object_get(d, "checkpoint")) : NULL;
    const char *slash = strrchr(path, '/');
    if (!ck || ck[0] == '/' || !slash || access(ck, F_OK) == 0) return;
    char beside[sizeof c->demo_checkpoint];
    const int len = snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - path), path, ck);
    if (len < 0 || (size_t)len >= sizeof beside || access(beside, F_OK) != 0) return; /* named when it is opened */
    snprintf(c->demo_checkpoint, sizeof c->demo_checkpoint, "%s", beside);
}

/* the reader of a file or text (dp_schema_load) */
static int read_config(void *c, const json_t *o, const char *path, dp_error *err)
{
    int rc = from_json(c, (json_t *)o, err);
    if (rc == DP_OK && path) demo_checkpoint_beside(c, (json_t *)o, path);
    return rc;
}

int dp_train_config_from_json_text(dp_train_config *c, const char *text, dp_error *err)
{
    return dp_schema_load(NULL, text, read_config, c, err);
}

int dp_train_config_load(dp_train_config *c, const char *path, dp_error *err)
{
    return dp_schema_load(path, NULL, read_config, c, err);
}

