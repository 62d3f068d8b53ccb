/* dp_train_ckpt.c: the trainer's checkpoints (dp_h5io.h): writing them, loading one to start
 * from (dp_train_init_from) or to continue its run (dp_train_resume), with the self-imitation
 * buffers of every bound graph; the run bookkeeping is the trainer runtime's (dp_runtime.h). */
#include "dp_train.h"
#include "dp_coarse.h"
#include "dp_train_impl.h"
#include "dp_alloc.h"
#include "dp_h5io.h"
#include "dp_schema.h"
#include "dp_json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the parameters were trained and model-selected on, as the checkpoint records it. */
static char *trained_on_json(const dp_train *tr)
{
    const dp_graph **g = dp_alloc_malloc((size_t)tr->n_bd * sizeof *g);
    const dp_cost **c = dp_alloc_malloc((size_t)tr->n_bd * sizeof *c);
    dp_engine **e = dp_alloc_malloc((size_t)tr->n_bd * sizeof *e);
    int *val = dp_alloc_malloc((size_t)tr->n_bd * sizeof *val);
    char *s = NULL;
    if (g && c && e && val) {
        for (int i = 0; i < tr->n_bd; i++) {
            g[i] = tr->bd[i].g;
            c[i] = tr->bd[i].c;
            /* the simulator behind the oracle that scores the graph: the graph in hand's is the
             * trainer's (Stage III's real execution has none), a coarsened graph's the whole
             * graph's engine (the expanded oracle has no engine of its own to read) */
            e[i] = (i == tr->cur ? &tr->oracle : &tr->bd[i].oracle)->simulator;
            val[i] = tr->bd[i].validation;
        }
        s = dp_runtime_trained_on(tr->n_bd, g, c, e, val);
    }
    free(g);
    free(c);
    free(e);
    free(val);
    return s;
}

/* With several bound graphs, every graph's self-imitation buffer into ck (dp_h5io_ckpt.sil_graphs),
 * graph by graph, so that a resumed run imitates and distils what the uninterrupted one did (they
 * used to restart empty). DP_ENOMEM; sil_gather_free frees what it made either way. */
static int sil_gather(dp_train *tr, dp_h5io_ckpt *ck)
{
    if (tr->multi) dp_train_graph_select(tr, tr->cur); /* the fields in hand back to their record */
    const int G = tr->n_bd;
    int *nops = dp_alloc_malloc((size_t)G * sizeof *nops), *ndev = dp_alloc_malloc((size_t)G * sizeof *ndev), *cnt = dp_alloc_malloc((size_t)G * sizeof *cnt);
    ck->sil_graphs = G;
    ck->sil_graph_ops = nops;
    ck->sil_graph_devices = ndev;
    ck->sil_graph_n = cnt;
    if (!nops || !ndev || !cnt) return DP_ENOMEM;
    size_t placements = 0, steps = 0;
    for (int i = 0; i < G; i++) {
        nops[i] = tr->bd[i].n;
        ndev[i] = tr->bd[i].D;
        cnt[i] = tr->bd[i].sil_n;
        placements += (size_t)cnt[i];
        steps += (size_t)cnt[i] * (size_t)nops[i];
    }
    ck->sil_all_ms = dp_alloc_malloc(placements * sizeof(double) + 1);
    ck->sil_all_ops = dp_alloc_malloc(steps * sizeof(int) + 1);
    ck->sil_all_dev = dp_alloc_malloc(steps * sizeof(int) + 1);
    if (!ck->sil_all_ms || !ck->sil_all_ops || !ck->sil_all_dev) return DP_ENOMEM;
    size_t p = 0, o = 0;
    for (int i = 0; i < G; i++) {
        const dp_train_bound *b = &tr->bd[i];
        const size_t k = (size_t)b->sil_n, len = k * (size_t)b->n;
        if (k == 0) continue;
        memcpy(ck->sil_all_ms + p, b->sil_ms, k * sizeof(double));
        memcpy(ck->sil_all_ops + o, b->sil_ops, len * sizeof(int));
        memcpy(ck->sil_all_dev + o, b->sil_dev, len * sizeof(int));
        p += k;
        o += len;
    }
    return DP_OK;
}

/* What sil_gather made (or dp_h5io_ckpt_read's buffers of several graphs). */
static void sil_gather_free(dp_h5io_ckpt *ck)
{
    free((int *)ck->sil_graph_ops);
    free((int *)ck->sil_graph_devices);
    free(ck->sil_graph_n);
    free(ck->sil_all_ms);
    free(ck->sil_all_ops);
    free(ck->sil_all_dev);
    ck->sil_graph_ops = ck->sil_graph_devices = NULL;
    ck->sil_graph_n = NULL;
    ck->sil_all_ms = NULL;
    ck->sil_all_ops = ck->sil_all_dev = NULL;
    ck->sil_graphs = 0;
}

/* Each bound graph's self-imitation buffer from a checkpoint's (sil_gather's form); the graph in
 * hand must be bd[0]. DP_ENOMEM. */
static int sil_scatter(dp_train *tr, const dp_h5io_ckpt *ck)
{
    dp_train_graph_select(tr, tr->cur); /* the fields in hand back to their record */
    size_t p = 0, o = 0;
    for (int i = 0; i < tr->n_bd && i < ck->sil_graphs; i++) {
        dp_train_bound *b = &tr->bd[i];
        const size_t k = (size_t)ck->sil_graph_n[i], len = k * (size_t)b->n;
        if (k == 0) continue;
        double *ms = dp_alloc_malloc(k * sizeof *ms);
        int *ops = dp_alloc_malloc(len * sizeof *ops), *dev = dp_alloc_malloc(len * sizeof *dev);
        if (!ms || !ops || !dev) {
            free(ms); free(ops); free(dev);
            return DP_ENOMEM;
        }
        memcpy(ms, ck->sil_all_ms + p, k * sizeof *ms);
        memcpy(ops, ck->sil_all_ops + o, len * sizeof *ops);
        memcpy(dev, ck->sil_all_dev + o, len * sizeof *dev);
        p += k;
        o += len;
        free(b->sil_ms); free(b->sil_ops); free(b->sil_dev);
        b->sil_ms = ms;
        b->sil_ops = ops;
        b->sil_dev = dev;
        b->sil_n = b->sil_cap = (int)k;
    }
    dp_train_graph_load(tr, tr->cur); /* bd[cur]'s buffer in hand */
    return DP_OK;
}

int dp_train_checkpoint_write(dp_train *tr, const char *path, dp_error *err)
{
    dp_h5io_ckpt ck;
    memset(&ck, 0, sizeof ck);
    char *cfg = dp_train_config_to_json(&tr->cfg);
    char *on = trained_on_json(tr);
    if (!cfg || !on) {
        free(cfg);
        free(on);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the checkpoint's records", path);
    }
    const dp_train_bound *b0 = &tr->bd[0];
    ck.graph = b0->g->name;
    ck.n_ops = b0->n;
    ck.n_devices = b0->D;
    ck.trained_on = on;
    ck.features = tr->cfg.method == DP_AGENT_DOPPLER ? dp_env_features_name((dp_env_features)tr->cfg.arch.device_features)
                                                     : "doppler";
    ck.config_json = cfg;
    snprintf(ck.run_id, sizeof ck.run_id, "%s", tr->run_id);
    ck.stage = tr->stage;
    ck.episode = tr->episode;
    ck.running_sum = tr->running_sum;
    ck.running_count = tr->running_count;
    ck.best_makespan = tr->best;
    ck.best_assignment = tr->best_assign;
    ck.simulations = tr->sims;
    ck.stage_simulations0 = tr->stage_sims0;
    ck.seconds = dp_train_seconds(tr);
    ck.stage_seconds0 = tr->stage_seconds0;
    if (tr->n_bd == 1) {
        ck.sil_n = tr->sil_n;
        ck.sil_ms = tr->sil_ms;
        ck.sil_ops = tr->sil_ops;
        ck.sil_dev = tr->sil_dev;
    } else if (sil_gather(tr, &ck) != DP_OK) {
        free(cfg);
        free(on);
        sil_gather_free(&ck);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the self-imitation buffers", path);
    }
    ck.time_unit = tr->g->time_unit;
    ck.time_scale = tr->multi ? 0 : tr->g->time_scale > 0 ? tr->g->time_scale : 1; /* several graphs: no one unit */
    dp_runtime_ckpt_put(&ck, tr->master, &tr->sel, &tr->traj);
    int rc = dp_h5io_ckpt_write(path, &ck, tr->blk[0], tr->blk[1], err);
    sil_gather_free(&ck);
    free(cfg);
    free(on);
    return rc;
}

/* Whether key (of a network section of the config table) has another value in config x than in
 * config y; ta and tb the values as a refusal names them: integers as written, reals to 6
 * significant digits, switches true or false, choices by name. */
static int network_key_differs(const dp_schema_key *key, const dp_train_config *x, const dp_train_config *y, char *ta, char *tb,
                               size_t cap)
{
    const void *px = (const char *)x + key->offset, *py = (const char *)y + key->offset;
    switch (key->type) {
    case DP_SCHEMA_FLOAT: {
        const float u = *(const float *)px, v = *(const float *)py;
        snprintf(ta, cap, "%g", (double)u);
        snprintf(tb, cap, "%g", (double)v);
        return u != v;
    }
    case DP_SCHEMA_INT: {
        const int u = *(const int *)px, v = *(const int *)py;
        snprintf(ta, cap, "%d", u);
        snprintf(tb, cap, "%d", v);
        return u != v;
    }
    default: /* switches (true, false), choices and any other kind, by their text */
        dp_schema_value_text(key, x, ta, cap);
        dp_schema_value_text(key, y, tb, cap);
        return strcmp(ta, tb) != 0;
    }
}

/* A config value as a refusal names it: reals to the digits that read back (gamma 0.99, not
 * 0.98999999999999999), the rest as compact JSON, "none" for an absent one */
static void value_text(const json_t *v, char *buf, size_t cap)
{
    if (!v) snprintf(buf, cap, "none");
    else if (json_is_real(v)) dp_json_fmt_exact(json_real_value(v), buf, cap);
    else {
        char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        snprintf(buf, cap, "%s", t ? t : "?");
        free(t);
    }
}

/* The first key (a dotted path, in sorted order) whose value differs between the objects a and b
 * into buf, with both values; 0 when none */
static int first_difference(const json_t *a, const json_t *b, const char *prefix, char *buf, size_t cap)
{
    const json_t *ab[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)ab[s], key, v) {
            json_t *o = json_object_get(ab[1 - s], key);
            char path[256];
            snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", key);
            if (o && json_is_object(v) && json_is_object(o)) {
                if (first_difference(s ? o : v, s ? v : o, path, buf, cap)) return 1;
                continue;
            }
            if (o && json_equal(v, o)) continue;
            char x[128], y[128];
            value_text(s ? o : v, x, sizeof x);
            value_text(s ? v : o, y, sizeof y);
            snprintf(buf, cap, "%.200s %.100s in the checkpoint, %.100s here", path, x, y);
            return 1;
        }
    }
    return 0;
}

/* A resumed run goes on with the config it was started with: every key but the stages' episode
 * counts (a resume may train on to more), pipeline (a Stage I run resumed with --pipeline goes
 * on to Stage II) and checkpoint_every (a sweep resumed with an edited
 * train_config, gamma 0.5 and adam.beta1 0.5, gave the old config's result under the new file's
 * name: a review). k: the checkpoint's config, c: this run's. */
static int resume_config_differs(const dp_train_config *k, const dp_train_config *c, const char *path, dp_error *err)
{
    char *ta = dp_train_config_to_json_all(k), *tb = dp_train_config_to_json_all(c);
    json_t *a = ta ? json_loads(ta, 0, NULL) : NULL, *b = tb ? json_loads(tb, 0, NULL) : NULL;
    free(ta);
    free(tb);
    int rc = DP_OK;
    if (!a || !b) rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    else {
        json_t *ab[2] = {a, b};
        for (int s = 0; s < 2; s++) {
            json_object_del(ab[s], "checkpoint_every");
            json_object_del(ab[s], "pipeline"); /* train --resume --pipeline goes on to Stage II */
            const char *stage;
            json_t *st;
            json_object_foreach(json_object_get(ab[s], "stages"), stage, st) json_object_del(st, "episodes");
        }
        char what[512];
        if (first_difference(a, b, "", what, sizeof what))
            rc = dp_error_set(err, DP_EINVAL, "%s: the run to resume trained with another config: %s (resume with the run's "
                              "config, or start afresh)", path, what);
    }
    json_decref(a);
    json_decref(b);
    return rc;
}

/* A checkpoint's parameters fit this trainer when they were made by the same method with the
 * same architecture, device feature set and state (what the inputs mean); the graphs and device
 * counts they were trained on do not matter (DOPPLER: nothing is sized by them). A resumed run
 * (resume 1) must also group its graphs as the run did (coarsen, coarsen_rule). Otherwise
 * DP_EINVAL naming what differs. */
static int check_compatible(const dp_train *tr, const char *path, const dp_h5io_ckpt_info *info, int resume, dp_error *err)
{
    dp_train_config k;
    dp_train_config_default(&k);
    k.method = DP_AGENT_DOPPLER; /* a checkpoint's config without "method" is DOPPLER's */
    if (dp_train_config_from_json_text(&k, info->config_json, err) != DP_OK) {
        dp_error_prefix(err, "%s", path);
        return DP_EINVAL;
    }
    const dp_train_config *c = &tr->cfg;
    if (k.method != c->method)
        return dp_error_set(err, DP_EINVAL, "%s: not a %s checkpoint (made by %s)", path, dp_agent_name(c->method),
                            dp_agent_name(k.method));
    /* the feature set first, with what it means; then every key of the method's network section
     * of the config table (dp_train_config_sections: network, placeto or gdp), in the table's
     * order, so that a key added to the table is checked too */
    if (c->method == DP_AGENT_DOPPLER && k.arch.device_features != c->arch.device_features)
        return dp_error_set(err, DP_EINVAL, "%s: incompatible checkpoint: feature set (network.features) \"%s\" in the checkpoint, "
                            "\"%s\" here: the PLC reads other device features", path,
                            dp_env_features_name((dp_env_features)k.arch.device_features),
                            dp_env_features_name((dp_env_features)c->arch.device_features));
    const char *net = c->method == DP_AGENT_DOPPLER ? "network" : c->method == DP_AGENT_PLACETO ? "placeto" : "gdp";
    for (const dp_schema_section *s = dp_train_config_sections(); s->name; s++) {
        if (strcmp(s->name, net) != 0) continue;
        for (const dp_schema_key *key = s->keys; key->key; key++) {
            char a[64], b[64];
            if (network_key_differs(key, &k, c, a, b, sizeof a))
                return dp_error_set(err, DP_EINVAL, "%s: incompatible checkpoint: %s.%s %s in the checkpoint, %s here", path, net,
                                    key->key, a, b);
        }
    }
    if (k.state != c->state)
        return dp_error_set(err, DP_EINVAL, "%s: incompatible checkpoint: state \"%s\" in the checkpoint, \"%s\" here: the features "
                            "describe another schedule", path, dp_env_state_name((dp_env_state)k.state),
                            dp_env_state_name((dp_env_state)c->state));
    /* a resumed run groups its graphs as the run did (train --coarsen: the config records it) */
    if (resume && (k.coarsen != c->coarsen || (c->coarsen > 0 && k.coarsen_rule != c->coarsen_rule))) {
        char a[64], b[64];
        return dp_error_set(err, DP_EINVAL, "%s: the run trained with %s, this one has %s: resume it with the run's grouping", path,
                            dp_coarse_options_text(k.coarsen, (dp_coarse_rule)k.coarsen_rule, a, sizeof a),
                            dp_coarse_options_text(c->coarsen, (dp_coarse_rule)c->coarsen_rule, b, sizeof b));
    }
    if (c->method != DP_AGENT_DOPPLER && info->n_devices != tr->D)
        return dp_error_set(err, DP_EINVAL, "%s: a %s checkpoint of %d devices, not %d: its parameters are sized by the device count",
                            path, dp_agent_name(c->method), info->n_devices, tr->D);
    return resume ? resume_config_differs(&k, c, path, err) : DP_OK;
}

static int load_checkpoint(dp_train *tr, const char *path, int resume, dp_error *err)
{
    dp_h5io_ckpt_info info;
    int rc0 = dp_h5io_ckpt_read_info(path, &info, err);
    if (rc0 != DP_OK) return rc0;
    rc0 = check_compatible(tr, path, &info, resume, err);
    dp_h5io_ckpt_info_free(&info);
    if (rc0 == DP_OK && resume) {
        /* a resumed run continues on the graphs it trained on */
        char *mine = trained_on_json(tr);
        rc0 = mine ? dp_runtime_resume_check(path, mine, 0, err) : dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
        free(mine);
    }
    if (rc0 != DP_OK) return rc0;
    if (tr->cur != 0) dp_train_graph_select(tr, 0);
    dp_h5io_ckpt ck;
    if (dp_runtime_ckpt_prepare(&ck, tr->n, tr->D, resume, tr->master, &tr->sel, err) != DP_OK) return DP_ENOMEM;
    ck.best_assignment = tr->best_assign;
    int *nops = NULL, *ndev = NULL;
    if (resume && tr->n_bd > 1) { /* every graph's self-imitation buffer */
        nops = dp_alloc_malloc((size_t)tr->n_bd * sizeof *nops);
        ndev = dp_alloc_malloc((size_t)tr->n_bd * sizeof *ndev);
        if (!nops || !ndev) {
            free(nops); free(ndev);
            dp_runtime_ckpt_release(&ck);
            return dp_error_set(err, DP_ENOMEM, "out of memory");
        }
        for (int i = 0; i < tr->n_bd; i++) {
            nops[i] = tr->bd[i].n;
            ndev[i] = tr->bd[i].D;
        }
        ck.sil_graphs = tr->n_bd;
        ck.sil_graph_ops = nops;
        ck.sil_graph_devices = ndev;
    }
    int rc = dp_h5io_ckpt_read(path, &ck, tr->blk[0], tr->blk[1], resume, err);
    if (rc == DP_OK) rc = dp_runtime_ckpt_take(path, &ck, resume, tr->master, &tr->sel, &tr->traj, err);
    if (rc == DP_OK && resume) {
        tr->stage = ck.stage;
        tr->episode = (long)ck.episode;
        tr->running_sum = ck.running_sum;
        tr->running_count = (long)ck.running_count;
        tr->best = ck.best_makespan;
        tr->sims = (long)ck.simulations;
        tr->stage_sims0 = ck.stage_simulations0 >= 0 ? (long)ck.stage_simulations0 : tr->sims;
        if (ck.seconds >= 0) {
            tr->t_origin = dp_train_now_s() - ck.seconds;
            tr->stage_seconds0 = ck.stage_seconds0 >= 0 ? ck.stage_seconds0 : ck.seconds;
        }
        if (tr->n_bd == 1 && ck.sil_n > 0) {
            free(tr->sil_ms); free(tr->sil_ops); free(tr->sil_dev);
            tr->sil_ms = ck.sil_ms;
            tr->sil_ops = ck.sil_ops;
            tr->sil_dev = ck.sil_dev;
            tr->sil_n = tr->sil_cap = ck.sil_n;
            ck.sil_ms = NULL;
            ck.sil_ops = ck.sil_dev = NULL;
        }
        if (tr->n_bd > 1 && ck.sil_graph_n && sil_scatter(tr, &ck) != DP_OK)
            rc = dp_error_set(err, DP_ENOMEM, "out of memory for the self-imitation buffers of %s", path);
        /* the resumed run keeps its identifier ("" for a checkpoint of an older version) */
        snprintf(tr->run_id, sizeof tr->run_id, "%s", ck.run_id);
    }
    free(ck.sil_ms);
    free(ck.sil_ops);
    free(ck.sil_dev);
    sil_gather_free(&ck); /* nops, ndev and the buffers read */
    dp_runtime_ckpt_release(&ck);
    dp_train_params_changed(tr);
    return rc;
}

int dp_train_init_from(dp_train *tr, const char *checkpoint, dp_error *err)
{
    return dp_train_init_from_params(tr, checkpoint, 0, err);
}

int dp_train_init_from_params(dp_train *tr, const char *checkpoint, int final, dp_error *err)
{
    int rc = load_checkpoint(tr, checkpoint, 0, err);
    /* start from the checkpoint's best-greedy parameters when it has them, unless the final ones
     * (its /sel/param: the training's last) are asked for */
    if (rc == DP_OK && !final) dp_train_use_best(tr);
    dp_runtime_select_reset(&tr->sel);
    tr->best = INFINITY;
    return rc;
}

int dp_train_resume(dp_train *tr, const char *checkpoint, const char *trajectory, dp_error *err)
{
    int rc = load_checkpoint(tr, checkpoint, 1, err);
    if (rc != DP_OK) return rc;
    if (trajectory) {
        if ((rc = dp_runtime_traj_resume(&tr->traj, trajectory, checkpoint, tr->run_id, err)) != DP_OK) return rc;
        tr->traj_ready = 1;
    }
    return DP_OK;
}
