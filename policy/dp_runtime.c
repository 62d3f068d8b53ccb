/* dp_runtime.c: the trainer runtime shared by dp_train.c and dp_improve_train.c (see dp_runtime.h). */
#include "dp_runtime.h"
#include "dp_alloc.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- trajectory rows ---- */

void dp_runtime_traj_init(dp_runtime_traj *t)
{
    memset(t, 0, sizeof *t);
}

void dp_runtime_traj_free(dp_runtime_traj *t)
{
    if (!t) return;
    free(t->ep);
    free(t->st);
    free(t->ev);
    dp_runtime_traj_init(t);
}

/* Room for `need` rows of `size` bytes in *buf (capacity *cap, doubled from `first`). */
static int reserve(void **buf, long *cap, long need, long first, size_t size)
{
    if (need <= *cap) return DP_OK;
    long c = *cap ? 2 * *cap : first;
    while (c < need) c *= 2;
    void *x = dp_alloc_realloc(*buf, (size_t)c * size);
    if (!x) return DP_ENOMEM;
    *buf = x;
    *cap = c;
    return DP_OK;
}

dp_h5io_traj_step *dp_runtime_traj_push(dp_runtime_traj *t, const dp_h5io_traj_episode *e, long n_steps)
{
    if (reserve((void **)&t->ep, &t->cap_ep, t->n_ep + 1, 64, sizeof *t->ep) != DP_OK ||
        reserve((void **)&t->st, &t->cap_st, t->n_st + n_steps, 64 * (n_steps > 0 ? n_steps : 1), sizeof *t->st) != DP_OK)
        return NULL;
    t->ep[t->n_ep++] = *e;
    t->n_st += n_steps;
    return t->st + t->n_st - n_steps;
}

int dp_runtime_traj_push_eval(dp_runtime_traj *t, const dp_h5io_traj_eval *v, dp_error *err)
{
    if (reserve((void **)&t->ev, &t->cap_ev, t->n_ev + 1, 16, sizeof *t->ev) != DP_OK)
        return dp_error_set(err, DP_ENOMEM, "out of memory for trajectory rows");
    t->ev[t->n_ev++] = *v;
    return DP_OK;
}

int dp_runtime_traj_flush(dp_runtime_traj *t, const char *path, dp_error *err)
{
    if (path && (t->n_ep || t->n_st || t->n_ev)) {
        int rc = dp_h5io_traj_append_rows(path, t->ep, t->n_ep, t->st, t->n_st, t->ev, t->n_ev, err);
        if (rc != DP_OK) return rc;
        t->file_ep += t->n_ep;
        t->file_st += t->n_st;
        t->file_ev += t->n_ev;
    }
    t->n_ep = t->n_st = t->n_ev = 0;
    return DP_OK;
}

int dp_runtime_traj_resume(dp_runtime_traj *t, const char *path, const char *checkpoint, const char *run_id, dp_error *err)
{
    t->n_ep = t->n_st = t->n_ev = 0;
    int rc = dp_h5io_traj_check_run(path, checkpoint, run_id, err);
    if (rc == DP_OK) rc = dp_h5io_traj_truncate_rows(path, t->file_ep, t->file_st, t->file_ev, err);
    if (rc == DP_OK && t->file_ev < 0) rc = dp_h5io_traj_count_rows(path, &(long){0}, &(long){0}, &t->file_ev, err);
    return rc;
}

/* ---- model selection and patience ---- */

int dp_runtime_select_init(dp_runtime_select *s, dp_nn_params *a, dp_nn_params *b, dp_error *err)
{
    memset(s, 0, sizeof *s);
    s->blk[0] = a;
    s->blk[1] = b;
    for (int i = 0; i < 2; i++)
        if (!(s->best[i] = dp_alloc_calloc_n(s->blk[i]->n ? s->blk[i]->n : 1, sizeof(float)))) {
            dp_runtime_select_free(s);
            return dp_error_set(err, DP_ENOMEM, "out of memory for the model-selected parameters");
        }
    dp_runtime_select_reset(s);
    s->last_score = NAN;
    return DP_OK;
}

void dp_runtime_select_free(dp_runtime_select *s)
{
    if (!s) return;
    free(s->best[0]);
    free(s->best[1]);
    s->best[0] = s->best[1] = NULL;
}

void dp_runtime_select_reset(dp_runtime_select *s)
{
    s->has_best = 0;
    s->best_score = INFINITY;
    s->stale = 0;
}

int dp_runtime_select_offer(dp_runtime_select *s, double score)
{
    s->evaluations++;
    s->last_score = score;
    if (!(score < s->best_score)) {
        s->stale++;
        return 0;
    }
    s->best_score = score;
    for (int i = 0; i < 2; i++) memcpy(s->best[i], s->blk[i]->param, s->blk[i]->n * sizeof(float));
    s->has_best = 1;
    s->stale = 0;
    return 1;
}

int dp_runtime_select_use_best(dp_runtime_select *s)
{
    if (!s->has_best) return 0;
    for (int i = 0; i < 2; i++) memcpy(s->blk[i]->param, s->best[i], s->blk[i]->n * sizeof(float));
    return 1;
}

int dp_runtime_select_patience_spent(const dp_runtime_select *s, int patience)
{
    return patience > 0 && s->stale >= patience;
}

/* ---- checkpoint bookkeeping ---- */

char *dp_runtime_trained_on(int n, const dp_graph *const *g, const dp_cost *const *c, dp_engine *const *engines,
                            const int *validation)
{
    json_t *o = json_object(), *l[2] = {json_array(), json_array()};
    for (int i = 0; i < n; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "graph", json_string(g[i]->name ? g[i]->name : ""));
        json_object_set_new(x, "n_ops", json_integer(g[i]->n_ops));
        json_object_set_new(x, "n_devices", json_integer(c[i]->n_devices));
        char fp[24];
        snprintf(fp, sizeof fp, "%016llx", (unsigned long long)dp_cost_fingerprint(c[i]));
        json_object_set_new(x, "costs", json_string(fp));
        if (engines && engines[i]) {
            /* the simulator beyond the costs (streams, queue, memory, transfer model, ...) */
            snprintf(fp, sizeof fp, "%016llx", (unsigned long long)dp_engine_fingerprint(engines[i]));
            json_object_set_new(x, "engine", json_string(fp));
        }
        json_array_append_new(l[validation && validation[i] ? 1 : 0], x);
    }
    json_object_set_new(o, "train", l[0]);
    json_object_set_new(o, "validation", l[1]);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

int dp_runtime_resume_check(const char *path, const char *mine, int required, dp_error *err)
{
    if (!mine) return dp_error_set(err, DP_ENOMEM, "out of memory");
    dp_h5io_ckpt_info info;
    int rc = dp_h5io_ckpt_read_info(path, &info, err);
    if (rc != DP_OK) return rc;
    if (required && !info.trained_on)
        rc = dp_error_set(err, DP_EINVAL, "%s: a run on other graphs (not said), not on these (%s): --resume continues the same run", path,
                          mine);
    else
        rc = dp_h5io_trained_on_check(path, info.trained_on, mine, err);
    dp_h5io_ckpt_info_free(&info);
    return rc;
}

void dp_runtime_ckpt_put(dp_h5io_ckpt *ck, gsl_rng *r, const dp_runtime_select *s, const dp_runtime_traj *t)
{
    snprintf(ck->rng_name, sizeof ck->rng_name, "%s", gsl_rng_name(r));
    ck->rng_state = gsl_rng_state(r);
    ck->rng_size = gsl_rng_size(r);
    ck->has_best = s->has_best;
    ck->best_greedy = s->has_best ? s->best_score : INFINITY;
    ck->sel_best = s->best[0];
    ck->plc_best = s->best[1];
    ck->stale = s->stale;
    ck->last_greedy = s->last_score;
    ck->traj_episodes = t->file_ep;
    ck->traj_steps = t->file_st;
    ck->traj_evaluations = t->file_ev;
}

int dp_runtime_ckpt_prepare(dp_h5io_ckpt *ck, int n_ops, int n_devices, int same_graph, const gsl_rng *r, dp_runtime_select *s,
                            dp_error *err)
{
    memset(ck, 0, sizeof *ck);
    ck->n_ops = n_ops;
    ck->n_devices = n_devices;
    ck->same_graph = same_graph;
    ck->rng_size = gsl_rng_size(r);
    if (!(ck->rng_state = dp_alloc_malloc(ck->rng_size))) return dp_error_set(err, DP_ENOMEM, "out of memory");
    ck->sel_best = s->best[0];
    ck->plc_best = s->best[1];
    return DP_OK;
}

int dp_runtime_ckpt_take(const char *path, const dp_h5io_ckpt *ck, int resume, gsl_rng *r, dp_runtime_select *s,
                         dp_runtime_traj *t, dp_error *err)
{
    s->has_best = ck->has_best;
    s->best_score = ck->has_best ? ck->best_greedy : INFINITY;
    if (!resume) return DP_OK;
    if (strcmp(ck->rng_name, gsl_rng_name(r)) != 0)
        return dp_error_set(err, DP_EINVAL, "%s: generator %s, expected %s", path, ck->rng_name, gsl_rng_name(r));
    memcpy(gsl_rng_state(r), ck->rng_state, gsl_rng_size(r));
    s->stale = (int)ck->stale;
    if (!isnan(ck->last_greedy)) s->last_score = ck->last_greedy;
    t->file_ep = (long)ck->traj_episodes;
    t->file_st = (long)ck->traj_steps;
    t->file_ev = (long)ck->traj_evaluations;
    return DP_OK;
}

void dp_runtime_ckpt_release(dp_h5io_ckpt *ck)
{
    free(ck->rng_state);
    free((char *)ck->graph);
    free(ck->config_json);
    free(ck->method_state);
    ck->rng_state = NULL;
    ck->graph = NULL;
    ck->config_json = ck->method_state = NULL;
}
