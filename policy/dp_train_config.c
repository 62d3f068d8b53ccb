/* dp_train_config.c: the trainer's configuration: stages' names, defaults (the project's and
 * the authors'), the JSON schema read and written, the checks (see dp_train.h). The trainer
 * (dp_train.c) reads a configuration only through dp_train.h. */
#include "dp_train.h"
#include "dp_json.h"

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
static const char *explore_names[] = {"epsilon-greedy", "mixture"};
static const char *baseline_names[] = {"running", "greedy", "batch"};

static int get_name(json_t *v, const char *key, const char *const *names, int n, int *out, dp_error *err)
{
    const char *s = json_string_value(v);
    for (int i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return DP_OK;
        }
    return n == 2 ? dp_error_set(err, DP_EINVAL, "config: \"%s\" must be \"%s\" or \"%s\"", key, names[0], names[1])
                  : dp_error_set(err, DP_EINVAL, "config: \"%s\" must be \"%s\", \"%s\" or \"%s\"", key, names[0], names[1],
                                 names[2]);
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

void dp_train_config_default(dp_train_config *c)
{
    memset(c, 0, sizeof *c);
    c->method = DP_AGENT_DOPPLER;
    dp_doppler_arch_default(&c->arch);
    dp_placeto_arch_default(&c->placeto);
    dp_gdp_arch_default(&c->gdp);
    const dp_train_stage il = {.episodes = 2000, .batch = 1, .exploration = DP_TRAIN_EXPLORE_EPSILON_GREEDY,
                               .baseline = DP_TRAIN_BASELINE_RUNNING, .lr = 1e-3, .lr_final = 0, .epsilon = 1.0,
                               .epsilon_final = 0, .entropy_weight = 0.001, .il_weight = 1, .pg_weight = 0, .sil_k = 8, .sil_replays = 1};
    const dp_train_stage sim = {.episodes = 2000, .batch = 1, .exploration = DP_TRAIN_EXPLORE_EPSILON_GREEDY,
                                .baseline = DP_TRAIN_BASELINE_RUNNING, .lr = 1e-4, .lr_final = 0, .epsilon = 0.2,
                                .epsilon_final = 0, .entropy_weight = 0, .il_weight = 0, .pg_weight = 1, .sil_k = 8, .sil_replays = 1};
    const dp_train_stage real = {.episodes = 4000, .batch = 1, .exploration = DP_TRAIN_EXPLORE_EPSILON_GREEDY,
                                 .baseline = DP_TRAIN_BASELINE_RUNNING, .lr = 1e-4, .lr_final = 0, .epsilon = 0.2,
                                 .epsilon_final = 0, .entropy_weight = 0, .il_weight = 0, .pg_weight = 1, .sil_k = 8, .sil_replays = 1};
    c->stage[DP_TRAIN_STAGE_IL] = il;
    c->stage[DP_TRAIN_STAGE_SIM] = sim;
    c->stage[DP_TRAIN_STAGE_REAL] = real;
    c->gamma = 0.99;
    c->adam_beta1 = 0.9;
    c->adam_beta2 = 0.999;
    c->adam_eps = 1e-8;
    c->weight_decay = 0;
    c->grad_clip = 0;
    c->reward_relative = 0;
    c->seed = 1;
    c->checkpoint_every = 100;
    c->update_sel = c->update_plc = 1;
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

void dp_train_config_project(dp_train_config *c)
{
    dp_train_config_default(c);
    json_t *o = json_loads(project_json, 0, NULL);
    int rc = o ? from_json(c, o, NULL) : DP_EINVAL;
    json_decref(o);
    assert(rc == DP_OK); /* a constant of this file */
    (void)rc;
}

char *dp_train_config_to_json(const dp_train_config *c)
{
    json_t *o = json_object();
    const int dual = c->method == DP_AGENT_DOPPLER;
    json_object_set_new(o, "method", json_string(dp_agent_name(c->method)));
    /* JSON integers here are signed 64-bit: a larger seed is written as a string of its digits */
    if (c->seed > (uint64_t)INT64_MAX) {
        char digits[24];
        snprintf(digits, sizeof digits, "%" PRIu64, c->seed);
        json_object_set_new(o, "seed", json_string(digits));
    } else {
        json_object_set_new(o, "seed", json_integer((json_int_t)c->seed));
    }
    if (c->method != DP_AGENT_GDP) json_object_set_new(o, "gamma", dp_json_number(c->gamma));
    json_object_set_new(o, "checkpoint_every", json_integer(c->checkpoint_every));
    json_object_set_new(o, "reward", json_string(c->reward_relative ? "relative" : "units"));
    if (dual) {
        json_object_set_new(o, "update_sel", json_boolean(c->update_sel));
        json_object_set_new(o, "sel_topological", json_boolean(c->sel_topological));
    }
    json_object_set_new(o, "update_plc", json_boolean(c->update_plc));
    json_object_set_new(o, "grad_clip", dp_json_number(c->grad_clip));
    json_t *ad = json_object();
    json_object_set_new(ad, "beta1", dp_json_number(c->adam_beta1));
    json_object_set_new(ad, "beta2", dp_json_number(c->adam_beta2));
    json_object_set_new(ad, "eps", dp_json_number(c->adam_eps));
    json_object_set_new(ad, "weight_decay", dp_json_number(c->weight_decay));
    json_object_set_new(o, "adam", ad);
    json_t *nw = json_object();
    json_object_set_new(nw, "hidden", json_integer(c->arch.hidden));
    json_object_set_new(nw, "mlp_hidden", json_integer(c->arch.mlp_hidden));
    json_object_set_new(nw, "steps", json_integer(c->arch.steps));
    json_object_set_new(nw, "edge_hidden", json_integer(c->arch.edge_hidden));
    json_object_set_new(nw, "slope", dp_json_number(c->arch.slope));
    json_object_set_new(nw, "cp_embeddings", json_boolean(c->arch.cp_embeddings));
    json_object_set_new(nw, "magnitude", json_boolean(c->arch.device_magnitude));
    json_object_set_new(nw, "features", json_string(dp_env_features_name((dp_env_features)c->arch.device_features)));
    json_object_set_new(o, "state", json_string(dp_env_state_name((dp_env_state)c->state)));
    if (c->reference_best_instant) json_object_set_new(o, "reference", json_string("best-instant"));
    if (c->demo_method[0]) {
        json_t *d = json_object();
        json_object_set_new(d, "method", json_string(c->demo_method));
        if (strcmp(c->demo_method, "best-instant") != 0) json_object_set_new(d, "budget", json_integer(c->demo_budget));
        if (c->demo_checkpoint[0]) json_object_set_new(d, "checkpoint", json_string(c->demo_checkpoint));
        json_object_set_new(o, "demonstrations", d);
    }
    if (dual) json_object_set_new(o, "network", nw);
    else json_decref(nw);
    if (c->method == DP_AGENT_PLACETO) {
        json_t *p = json_object();
        json_object_set_new(p, "hidden", json_integer(c->placeto.hidden));
        json_object_set_new(p, "mlp_hidden", json_integer(c->placeto.mlp_hidden));
        json_object_set_new(p, "slope", dp_json_number(c->placeto.slope));
        json_object_set_new(o, "placeto", p);
    }
    if (c->method == DP_AGENT_GDP) {
        json_t *q = json_object();
        json_object_set_new(q, "hidden", json_integer(c->gdp.hidden));
        json_object_set_new(q, "layers", json_integer(c->gdp.layers));
        json_object_set_new(q, "heads", json_integer(c->gdp.heads));
        json_object_set_new(q, "mlp_hidden", json_integer(c->gdp.mlp_hidden));
        json_object_set_new(q, "slope", dp_json_number(c->gdp.slope));
        json_object_set_new(o, "gdp", q);
    }
    json_t *st = json_object();
    for (int i = 0; i < DP_TRAIN_N_STAGES; i++) {
        const dp_train_stage *s = &c->stage[i];
        json_t *x = json_object();
        json_object_set_new(x, "episodes", json_integer(s->episodes));
        json_object_set_new(x, "batch", json_integer(s->batch));
        json_object_set_new(x, "exploration", json_string(explore_names[s->exploration]));
        json_object_set_new(x, "baseline", json_string(baseline_names[s->baseline]));
        json_object_set_new(x, "lr", dp_json_number(s->lr));
        json_object_set_new(x, "lr_final", dp_json_number(s->lr_final));
        json_object_set_new(x, "epsilon", dp_json_number(s->epsilon));
        json_object_set_new(x, "epsilon_final", dp_json_number(s->epsilon_final));
        json_object_set_new(x, "entropy_weight", dp_json_number(s->entropy_weight));
        json_object_set_new(x, "il_weight", dp_json_number(s->il_weight));
        json_object_set_new(x, "pg_weight", dp_json_number(s->pg_weight));
        json_object_set_new(x, "positive_only", json_boolean(s->positive_only));
        json_object_set_new(x, "normalize_advantages", json_boolean(s->normalize_advantages));
        json_object_set_new(x, "forced_first", json_boolean(s->forced_first));
        json_object_set_new(x, "sil_weight", json_real(s->sil_weight));
        json_object_set_new(x, "sil_k", json_integer(s->sil_k));
        json_object_set_new(x, "sil_replays", json_integer(s->sil_replays));
        json_object_set_new(x, "distill", json_integer(s->distill));
        json_object_set_new(x, "patience", json_integer(s->patience));
        json_object_set_new(st, stage_names[i], x);
    }
    json_object_set_new(o, "stages", st);
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;
}

static int get_num(json_t *v, const char *key, double lo, double hi, double *out, dp_error *err)
{
    if (!json_is_number(v)) return dp_error_set(err, DP_EINVAL, "config: \"%s\" must be a number", key);
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi)) return dp_error_set(err, DP_EINVAL, "config: \"%s\" = %g out of range [%g, %g]", key, x, lo, hi);
    *out = x;
    return DP_OK;
}

static int get_int(json_t *v, const char *key, long lo, long hi, long *out, dp_error *err)
{
    if (!json_is_integer(v)) return dp_error_set(err, DP_EINVAL, "config: \"%s\" must be an integer", key);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) return dp_error_set(err, DP_EINVAL, "config: \"%s\" = %lld out of range [%ld, %ld]", key, (long long)x, lo, hi);
    *out = (long)x;
    return DP_OK;
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

static int get_bool(json_t *v, const char *key, int *out, dp_error *err)
{
    if (!json_is_boolean(v)) return dp_error_set(err, DP_EINVAL, "config: \"%s\" must be true or false", key);
    *out = json_is_true(v);
    return DP_OK;
}

/* The keys an agent cannot honour: given in its config they are refused, naming the key and the
 * agent (a key that is accepted must change what the agent does). */
static const char *refused_key(int method, const char *key)
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

static int arch_int(json_t *v, const char *key, int lo, int hi, int *out, dp_error *err)
{
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return dp_error_set(err, DP_EINVAL, "config: \"%s\" must be an integer in [%d, %d]", key, lo, hi);
    *out = (int)json_integer_value(v);
    return DP_OK;
}

static int arch_slope(json_t *v, const char *key, float *out, dp_error *err)
{
    if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= 1))
        return dp_error_set(err, DP_EINVAL, "config: \"%s\" must be a number in [0, 1]", key);
    *out = (float)json_number_value(v);
    return DP_OK;
}

/* "placeto": {...} or "gdp": {...}: the baselines' network sizes */
static int arch_from_json(dp_train_config *c, const char *which, json_t *v, dp_error *err)
{
    if (!json_is_object(v)) return dp_error_set(err, DP_EINVAL, "config: \"%s\" must be an object", which);
    const char *k;
    json_t *w;
    json_object_foreach(v, k, w) {
        char full[96];
        snprintf(full, sizeof full, "%s.%s", which, k);
        int rc;
        if (strcmp(which, "placeto") == 0) {
            if (strcmp(k, "hidden") == 0) rc = arch_int(w, full, 1, 4096, &c->placeto.hidden, err);
            else if (strcmp(k, "mlp_hidden") == 0) rc = arch_int(w, full, 1, 4096, &c->placeto.mlp_hidden, err);
            else if (strcmp(k, "slope") == 0) rc = arch_slope(w, full, &c->placeto.slope, err);
            else rc = dp_error_set(err, DP_EINVAL, "config: unknown key \"%s\"", full);
        } else {
            if (strcmp(k, "hidden") == 0) rc = arch_int(w, full, 1, 4096, &c->gdp.hidden, err);
            else if (strcmp(k, "layers") == 0) rc = arch_int(w, full, 0, 64, &c->gdp.layers, err);
            else if (strcmp(k, "heads") == 0) rc = arch_int(w, full, 1, 256, &c->gdp.heads, err);
            else if (strcmp(k, "mlp_hidden") == 0) rc = arch_int(w, full, 1, 4096, &c->gdp.mlp_hidden, err);
            else if (strcmp(k, "slope") == 0) rc = arch_slope(w, full, &c->gdp.slope, err);
            else rc = dp_error_set(err, DP_EINVAL, "config: unknown key \"%s\"", full);
        }
        if (rc != DP_OK) return rc;
    }
    if (c->gdp.hidden % c->gdp.heads != 0)
        return dp_error_set(err, DP_EINVAL, "config: gdp.hidden (%d) must be a multiple of gdp.heads (%d)", c->gdp.hidden,
                            c->gdp.heads);
    return DP_OK;
}

static int from_json(dp_train_config *c, json_t *o, dp_error *err)
{
    if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "config: the top level must be an object");
    const char *key;
    json_t *v;
    long L;
    double x;
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
        const char *why = refused_key(c->method, key);
        if (why) return dp_error_set(err, DP_EINVAL, "config: key \"%s\" does not apply to method %s (%s)", key,
                                     dp_agent_name(c->method), why);
    }
    int rc;
    /* two passes: the stages last, so that stages.S.batch overrides a top-level "batch" */
    for (int pass = 0; pass < 2; pass++)
    json_object_foreach(o, key, v) {
        if ((strcmp(key, "stages") == 0) != pass) continue;
        if (strcmp(key, "seed") == 0) {
            /* 0 .. 2^64-1: an integer, or a string of digits for seeds beyond 2^63-1 */
            const char *t = json_string_value(v);
            char *end = NULL;
            errno = 0;
            unsigned long long u = t && t[0] >= '0' && t[0] <= '9' ? strtoull(t, &end, 10) : 0;
            if (json_is_integer(v) && json_integer_value(v) >= 0) c->seed = (uint64_t)json_integer_value(v);
            else if (t && end && *end == '\0' && errno == 0) c->seed = (uint64_t)u;
            else return dp_error_set(err, DP_EINVAL, "config: \"seed\" must be an integer from 0 to 2^64-1 (beyond 2^63-1 as a string of digits)");
        } else if (strcmp(key, "gamma") == 0) {
            if ((rc = get_num(v, key, 0, 1, &c->gamma, err))) return rc;
        } else if (strcmp(key, "batch") == 0) {
            if ((rc = get_int(v, key, 1, 1 << 20, &L, err))) return rc;
            for (int i = 0; i < DP_TRAIN_N_STAGES; i++) c->stage[i].batch = (int)L;
        } else if (strcmp(key, "checkpoint_every") == 0) {
            if ((rc = get_int(v, key, 1, 1L << 40, &c->checkpoint_every, err))) return rc;
        } else if (strcmp(key, "reward") == 0) {
            const char *s = json_string_value(v);
            if (!s || (strcmp(s, "units") != 0 && strcmp(s, "relative") != 0))
                return dp_error_set(err, DP_EINVAL, "config: \"reward\" must be \"units\" or \"relative\"");
            c->reward_relative = strcmp(s, "relative") == 0;
        } else if (strcmp(key, "reference") == 0) {
            const char *s = json_string_value(v);
            if (!s || (strcmp(s, "cp") != 0 && strcmp(s, "best-instant") != 0))
                return dp_error_set(err, DP_EINVAL, "config: \"reference\" must be \"cp\" or \"best-instant\"");
            c->reference_best_instant = strcmp(s, "best-instant") == 0;
        } else if (strcmp(key, "demonstrations") == 0) {
            if ((rc = demo_from_json(c, v, err))) return rc;
        } else if (strcmp(key, "state") == 0) {
            dp_env_state st;
            if (dp_env_state_parse(json_string_value(v), &st) != DP_OK)
                return dp_error_set(err, DP_EINVAL, "config: \"state\" must be \"append\" or \"engine\"");
            c->state = (int)st;
        } else if (strcmp(key, "update_sel") == 0) {
            if ((rc = get_bool(v, key, &c->update_sel, err))) return rc;
        } else if (strcmp(key, "update_plc") == 0) {
            if ((rc = get_bool(v, key, &c->update_plc, err))) return rc;
        } else if (strcmp(key, "sel_topological") == 0) {
            if ((rc = get_bool(v, key, &c->sel_topological, err))) return rc;
        } else if (strcmp(key, "grad_clip") == 0) {
            if ((rc = get_num(v, key, 0, 1e30, &c->grad_clip, err))) return rc;
        } else if (strcmp(key, "adam") == 0 && json_is_object(v)) {
            const char *k2;
            json_t *w;
            json_object_foreach(v, k2, w) {
                if (strcmp(k2, "beta1") == 0) rc = get_num(w, "adam.beta1", 0, 0.999999, &c->adam_beta1, err);
                else if (strcmp(k2, "beta2") == 0) rc = get_num(w, "adam.beta2", 0, 0.999999999, &c->adam_beta2, err);
                /* eps > 0: with v = 0 (a parameter without gradient yet) Adam divides by it; the
                 * update runs in float, so at least the smallest normal float */
                else if (strcmp(k2, "eps") == 0) rc = get_num(w, "adam.eps", FLT_MIN, 1, &c->adam_eps, err);
                else if (strcmp(k2, "weight_decay") == 0) rc = get_num(w, "adam.weight_decay", 0, 1e6, &c->weight_decay, err);
                else rc = dp_error_set(err, DP_EINVAL, "config: unknown key \"adam.%s\"", k2);
                if (rc) return rc;
            }
        } else if (strcmp(key, "network") == 0 && json_is_object(v)) {
            const char *k2;
            json_t *w;
            json_object_foreach(v, k2, w) {
                if (strcmp(k2, "hidden") == 0) { rc = get_int(w, "network.hidden", 1, 4096, &L, err); c->arch.hidden = (int)L; }
                else if (strcmp(k2, "mlp_hidden") == 0) { rc = get_int(w, "network.mlp_hidden", 1, 4096, &L, err); c->arch.mlp_hidden = (int)L; }
                else if (strcmp(k2, "steps") == 0) { rc = get_int(w, "network.steps", 1, 64, &L, err); c->arch.steps = (int)L; }
                else if (strcmp(k2, "edge_hidden") == 0) { rc = get_int(w, "network.edge_hidden", 1, 4096, &L, err); c->arch.edge_hidden = (int)L; }
                else if (strcmp(k2, "slope") == 0) { rc = get_num(w, "network.slope", 0, 1, &x, err); c->arch.slope = (float)x; }
                else if (strcmp(k2, "cp_embeddings") == 0) rc = get_bool(w, "network.cp_embeddings", &c->arch.cp_embeddings, err);
                else if (strcmp(k2, "magnitude") == 0) rc = get_bool(w, "network.magnitude", &c->arch.device_magnitude, err);
                else if (strcmp(k2, "features") == 0) {
                    dp_env_features fs;
                    rc = dp_env_features_parse(json_string_value(w), &fs) == DP_OK
                             ? DP_OK : dp_error_set(err, DP_EINVAL, "config: \"network.features\" must be \"doppler\" or \"engine\"");
                    if (!rc) c->arch.device_features = (int)fs;
                }
                else rc = dp_error_set(err, DP_EINVAL, "config: unknown key \"network.%s\"", k2);
                if (rc) return rc;
            }
        } else if (strcmp(key, "method") == 0 || strcmp(key, "defaults") == 0) {
            continue; /* read above */
        } else if (strcmp(key, "placeto") == 0 || strcmp(key, "gdp") == 0) {
            int rc2 = arch_from_json(c, key, v, err);
            if (rc2) return rc2;
        } else if (strcmp(key, "stages") == 0 && json_is_object(v)) {
            const char *k2;
            json_t *w;
            json_object_foreach(v, k2, w) {
                int si;
                if (dp_train_stage_parse(k2, &si) != DP_OK || !json_is_object(w))
                    return dp_error_set(err, DP_EINVAL, "config: \"stages.%s\": expected il, sim or real with an object", k2);
                dp_train_stage *s = &c->stage[si];
                const char *k3;
                json_t *y;
                json_object_foreach(w, k3, y) {
                    char full[96];
                    snprintf(full, sizeof full, "stages.%s.%s", k2, k3);
                    if (strcmp(k3, "episodes") == 0) rc = get_int(y, full, 0, 1L << 40, &s->episodes, err);
                    else if (strcmp(k3, "batch") == 0) {
                        rc = get_int(y, full, 1, 1 << 20, &L, err);
                        if (!rc) s->batch = (int)L;
                    } else if (strcmp(k3, "exploration") == 0) rc = get_name(y, full, explore_names, 2, &s->exploration, err);
                    else if (strcmp(k3, "baseline") == 0) rc = get_name(y, full, baseline_names, 3, &s->baseline, err);
                    else if (strcmp(k3, "lr") == 0) rc = get_num(y, full, 0, 10, &s->lr, err);
                    else if (strcmp(k3, "lr_final") == 0) rc = get_num(y, full, 0, 10, &s->lr_final, err);
                    else if (strcmp(k3, "epsilon") == 0) rc = get_num(y, full, 0, 1, &s->epsilon, err);
                    else if (strcmp(k3, "epsilon_final") == 0) rc = get_num(y, full, 0, 1, &s->epsilon_final, err);
                    else if (strcmp(k3, "entropy_weight") == 0) rc = get_num(y, full, -1e6, 1e6, &s->entropy_weight, err);
                    else if (strcmp(k3, "il_weight") == 0) rc = get_num(y, full, -1e6, 1e6, &s->il_weight, err);
                    else if (strcmp(k3, "pg_weight") == 0) rc = get_num(y, full, -1e6, 1e6, &s->pg_weight, err);
                    else if (strcmp(k3, "positive_only") == 0) rc = get_bool(y, full, &s->positive_only, err);
                    else if (strcmp(k3, "normalize_advantages") == 0) rc = get_bool(y, full, &s->normalize_advantages, err);
                    else if (strcmp(k3, "forced_first") == 0) rc = get_bool(y, full, &s->forced_first, err);
                    else if (strcmp(k3, "sil_weight") == 0) rc = get_num(y, full, 0, 1e6, &s->sil_weight, err);
                    else if (strcmp(k3, "sil_k") == 0) {
                        rc = get_int(y, full, 1, 1 << 16, &L, err);
                        if (!rc) s->sil_k = (int)L;
                    } else if (strcmp(k3, "sil_replays") == 0) {
                        rc = get_int(y, full, 1, 1 << 16, &L, err);
                        if (!rc) s->sil_replays = (int)L;
                    } else if (strcmp(k3, "distill") == 0) {
                        rc = get_int(y, full, 0, 1L << 30, &s->distill, err);
                    } else if (strcmp(k3, "patience") == 0) {
                        rc = get_int(y, full, 0, 1 << 30, &L, err);
                        if (!rc) s->patience = (int)L;
                    }
                    else rc = dp_error_set(err, DP_EINVAL, "config: unknown key \"%s\"", full);
                    if (rc) return rc;
                }
            }
        } else {
            return dp_error_set(err, DP_EINVAL, "config: unknown key \"%s\"", key);
        }
    }
    return DP_OK;
}

int dp_train_config_from_json_text(dp_train_config *c, const char *text, dp_error *err)
{
    json_t *o = dp_json_loads_text(text, "config", err);
    if (!o) return DP_EINVAL;
    int rc = from_json(c, o, err);
    json_decref(o);
    return rc;
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

int dp_train_config_load(dp_train_config *c, const char *path, dp_error *err)
{
    /* size and memory checked before parsing, duplicate keys refused, errors at file:line:column */
    json_t *o = dp_json_load(path, err);
    if (!o) return err ? err->code : DP_EINVAL;
    int rc = from_json(c, o, err);
    if (rc == DP_OK) demo_checkpoint_beside(c, o, path);
    json_decref(o);
    if (rc != DP_OK) dp_error_prefix(err, "%s", path);
    return rc;
}

