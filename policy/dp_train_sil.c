/* dp_train_sil.c: this project's estimators of the trainer beyond the authors' (dp_train.h:
 * dp_train_stage's sil_k, sil_weight, demos, distill): the self-imitation buffer of the best
 * placements found, imitation of it, demonstrations a stage starts from, and distillation of the
 * best placements into the policy. */
#include "dp_train.h"
#include "dp_train_impl.h"
#include "dp_alloc.h"
#include "dp_search.h"
#include "dp_h5io.h"
#include "dp_place.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* On a machine of interchangeable devices (dp_cost.homogeneous) a placement's makespan does not
 * change when its devices are renamed: dev (n, in the order of `order`) is renamed in order of
 * first use (the first op's device becomes 0, the next new one 1, ...), the one form a greedy
 * policy can reproduce (its logits of devices still alike tie, and argmax takes the lowest). */
static void relabel_first_use(const dp_train *tr, int *dev, int n)
{
    if (!tr->c->homogeneous) return;
    int map[256], next = 0;
    if (tr->D > 256) return;
    for (int k = 0; k < tr->D; k++) map[k] = -1;
    for (int t = 0; t < n; t++) {
        if (map[dev[t]] < 0) map[dev[t]] = next++;
        dev[t] = map[dev[t]];
    }
}

/* Self-imitation buffer: keep the last rollout (its step sequence, devices renamed in order of
 * first use on interchangeable devices) when it is among the sil_k best placements found so far
 * and not already held. */
int dp_train_sil_offer(dp_train *tr, int k_max, double ms)
{
    const int n = tr->n;
    int *dev = tr->scratch_dev; /* the record's devices, renamed (plc_a stays the episode's) */
    memcpy(dev, tr->plc_a, (size_t)n * sizeof *dev);
    relabel_first_use(tr, dev, n);
    if (tr->sil_cap < k_max) {
        double *a = dp_alloc_realloc(tr->sil_ms, (size_t)k_max * sizeof *a);
        if (a) tr->sil_ms = a;
        int *o = dp_alloc_realloc(tr->sil_ops, (size_t)k_max * n * sizeof *o);
        if (o) tr->sil_ops = o;
        int *d = dp_alloc_realloc(tr->sil_dev, (size_t)k_max * n * sizeof *d);
        if (d) tr->sil_dev = d;
        if (!a || !o || !d) return DP_ENOMEM;
        tr->sil_cap = k_max;
    }
    int worst = 0;
    for (int i = 0; i < tr->sil_n; i++) {
        if (tr->sil_ms[i] == ms) {
            int same = 1;
            for (int t = 0; t < n && same; t++)
                same = tr->sil_dev[(size_t)i * n + t] == dev[t] &&
                       tr->sil_ops[(size_t)i * n + t] == tr->sel_v[t];
            if (same) return DP_OK;
        }
        if (tr->sil_ms[i] > tr->sil_ms[worst]) worst = i;
    }
    int slot;
    if (tr->sil_n < k_max) slot = tr->sil_n++;
    else if (ms < tr->sil_ms[worst]) slot = worst;
    else return DP_OK;
    tr->sil_ms[slot] = ms;
    for (int t = 0; t < n; t++) {
        tr->sil_ops[(size_t)slot * n + t] = tr->sel_v[t];
        tr->sil_dev[(size_t)slot * n + t] = dev[t];
    }
    return DP_OK;
}

/* A teacher-forced replay of the buffer's placement i, its actions imitated with weight w (no
 * simulation): the gradient is accumulated, not applied. */
static int sil_imitate(dp_train *tr, const dp_train_stage *st, int i, double w, dp_error *err)
{
    const int n = tr->n, D = tr->D;
    tr->forced_ops = tr->sil_ops + (size_t)i * n;
    tr->forced_dev = tr->sil_dev + (size_t)i * n;
    double ms;
    int rc = dp_train_rollout(tr, DP_TRAIN_MODE_FORCED, 0, NULL, &ms, NULL, err);
    if (rc != DP_OK) return rc;
    /* the targets are the replayed actions themselves */
    tr->sel_marks_chosen = 1;
    for (int t = 0; t < n; t++) {
        tr->sel_nmark[t] = 1;
        tr->sel_marka[t] = 1;
        for (int k = 0; k < D; k++) tr->plc_mark[(size_t)t * D + k] = k == tr->plc_a[t];
    }
    dp_train_stage imitate = *st;
    imitate.il_weight = w;
    imitate.pg_weight = 0;
    imitate.entropy_weight = 0;
    if (dp_train_episode_grad(tr, &imitate, 0, 0, 1.0) != DP_OK)
        return dp_error_set(err, DP_EINVAL, "internal error: a rebuilt ready set differs from the rollout's");
    return DP_OK;
}

int dp_train_sil_plan(dp_train *tr, const dp_train_stage *st, int *idx, double *w)
{
    if (!(st->sil_weight > 0) || tr->sil_n == 0) return 0;
    const int all = st->sil_replays > 1 && st->sil_replays >= tr->sil_n, m = all ? tr->sil_n : (st->sil_replays > 1 ? st->sil_replays : 1);
    for (int r = 0; r < m; r++) {
        idx[r] = all ? r : (int)gsl_rng_uniform_int(tr->master, (unsigned long)tr->sil_n);
        w[r] = st->sil_weight / (all ? m : 1);
    }
    return m;
}

int dp_train_sil_imitate(dp_train *tr, const dp_train_stage *st, int i, double w, dp_error *err)
{
    return sil_imitate(tr, st, i, w, err);
}

/* The index of the best placement in the self-imitation buffer (-1: empty). */
static int sil_best(const dp_train *tr)
{
    int b = -1;
    for (int i = 0; i < tr->sil_n; i++)
        if (b < 0 || tr->sil_ms[i] < tr->sil_ms[b]) b = i;
    return b;
}

/* Demonstrations (dp_train_config.demo_*): each training graph's placement by the configured
 * search, replayed once through the policy (DP_TRAIN_MODE_ASSIGN: its greedy op order, the search's
 * devices exactly: distillation's renaming of devices of tied logits would change the placement,
 * where two devices tie without being alike), simulated and offered to that graph's
 * self-imitation buffer (which renames its devices in order of first use, a true renaming). At the stage's first
 * episode for every training graph, the simulations counted; later (a run with several graphs
 * resumed from a checkpoint written before their buffers were kept) for the graphs whose buffer is empty, not counted again.
 * A graph on one device has one placement: no demonstration, no simulation. */
int dp_train_demo_seed(dp_train *tr, const dp_train_stage *st, dp_error *err)
{
    const dp_train_config *c = &tr->cfg;
    if (!c->demo_method[0] || !(st->sil_weight > 0 || st->distill > 0)) return DP_OK;
    const int keep = tr->cur, first = tr->episode == 0;
    int rc = DP_OK;
    for (int i = 0; i < tr->n_bd && rc == DP_OK; i++) {
        if (tr->bd[i].validation) continue;
        if (tr->multi) dp_train_graph_select(tr, i);
        if (!first && tr->sil_n > 0) continue;
        if (tr->D < 2) continue; /* one device: one placement, nothing to demonstrate (no simulation) */
        dp_place_options po;
        dp_place_options_init(&po);
        po.seed = c->seed + (uint64_t)i;
        po.oracle = &tr->oracle;
        po.budget = c->demo_budget;
        po.checkpoint = c->demo_checkpoint[0] ? c->demo_checkpoint : NULL;
        long spent = c->demo_budget;
        if (strcmp(c->demo_method, "best-instant") == 0) {
            /* the best of the instant methods under the oracle */
            rc = dp_search_best_instant(tr->g, tr->c, &tr->oracle, po.seed, tr->forced_assign, &spent, err);
        } else {
            rc = dp_place(c->demo_method, tr->g, tr->c, &po, tr->forced_assign, NULL, NULL, err);
        }
        if (rc != DP_OK) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            rc = dp_error_set(err, rc, "demonstrations on %s: %s", tr->g->source ? tr->g->source : tr->g->name, msg);
            break;
        }
        if (tr->need_prepare) {
            dp_agent_prepare(tr->ag);
            tr->need_prepare = 0;
        }
        double ms;
        tr->assign_exact = 1;
        rc = dp_train_rollout(tr, DP_TRAIN_MODE_ASSIGN, 0, NULL, &ms, NULL, err);
        tr->assign_exact = 0;
        if (rc != DP_OK) break;
        if ((rc = dp_oracle_cost(&tr->oracle, tr->env->assignment, &ms, err)) != DP_OK) break;
        if (first) tr->sims += spent + 1;
        if (dp_train_sil_offer(tr, st->sil_k, ms) != DP_OK) rc = dp_error_set(err, DP_ENOMEM, "out of memory for the self-imitation buffer");
    }
    if (tr->multi) dp_train_graph_select(tr, keep);
    return rc;
}

/* The distillation target of the graph in hand (its self-imitation buffer's best placement) into
 * dst (n): every op's device, renamed, on interchangeable devices, in order of first use along
 * the greedy SEL order (SEL is not updated while distilling, so that order stays fixed and a
 * greedy PLC can reproduce the placement: devices still alike tie, and argmax takes the lowest).
 * *target = its makespan (raw unit); NAN and no target when the buffer is empty. */
static int distill_target(dp_train *tr, int *dst, double *target, dp_error *err)
{
    const int b = sil_best(tr), n = tr->n, D = tr->D;
    *target = NAN;
    if (b < 0) return DP_OK;
    for (int t = 0; t < n; t++) tr->forced_assign[tr->sil_ops[(size_t)b * n + t]] = tr->sil_dev[(size_t)b * n + t];
    double ms;
    int rc = dp_train_rollout(tr, DP_TRAIN_MODE_ASSIGN, 0, NULL, &ms, NULL, err); /* the greedy op order: sel_v */
    if (rc != DP_OK) return rc;
    if (tr->c->homogeneous && D <= 256) {
        int map[256], next = 0;
        for (int k = 0; k < D; k++) map[k] = -1;
        for (int t = 0; t < n; t++) {
            const int v = tr->sel_v[t];
            if (map[tr->forced_assign[v]] < 0) map[tr->forced_assign[v]] = next++;
        }
        for (int v = 0; v < n; v++) tr->forced_assign[v] = map[tr->forced_assign[v]];
    }
    memcpy(dst, tr->forced_assign, (size_t)n * sizeof *dst);
    *target = tr->sil_ms[b];
    return DP_OK;
}

/* Distillation at the end of a stage (st->distill > 0): up to st->distill Adam steps at learning
 * rate lr of imitation of the buffers' best placements, as assignments: the greedy SEL order is
 * kept and every op's PLC choice is pulled towards its device in that placement, along the greedy
 * rollout itself (teacher forcing on the devices; the makespan depends on the devices only).
 * With one graph, every step imitates its best placement; the greedy placement is checked every
 * 10 steps (one simulation each) and distillation stops when it is no worse than the target.
 * With several graphs the steps go round the training graphs that have a buffer (one shared
 * model: a step on one graph alone would fit that graph and undo the others, which a first
 * version did, distilling only the graph in hand); every 10 rounds each of them is placed
 * greedily (one simulation per graph), the check's score is the mean over them of the greedy
 * makespan / the graph's reference, and distillation stops when every one reaches its target.
 * Either way the stage ends with the parameters of the best check (the first check is before
 * any step, so distillation never ends worse on its graphs than it began). */
int dp_train_distill_best(dp_train *tr, const dp_train_stage *st, double lr, dp_error *err)
{
    if (st->distill <= 0) return DP_OK;
    const int keep_cur = tr->cur;
    /* the graphs distilled (training graphs with a buffer) and their targets */
    int m = 0, rc = DP_OK;
    int *gi = dp_alloc_malloc_n(tr->n_bd, sizeof(int));
    size_t *off = dp_alloc_malloc_n(tr->n_bd, sizeof(size_t));
    double *target = dp_alloc_malloc_n(tr->n_bd, sizeof(double));
    size_t tot = 0;
    for (int i = 0; i < tr->n_bd; i++) tot += (size_t)tr->bd[i].n;
    int *tgt = dp_alloc_malloc_n(tot ? tot : 1, sizeof(int));
    /* the parameters of the best check: the ones the stage ends with */
    float *keep[2] = {dp_alloc_malloc_n(tr->blk[0]->n + 1, sizeof(float)), dp_alloc_malloc_n(tr->blk[1]->n + 1, sizeof(float))};
    if (!gi || !off || !target || !tgt || !keep[0] || !keep[1]) {
        rc = dp_error_set(err, DP_ENOMEM, "out of memory for distillation");
        goto out;
    }
    /* SEL is not updated here, so each graph's greedy op order stays fixed */
    const int keep_sel = tr->cfg.update_sel;
    tr->cfg.update_sel = 0;
    size_t o = 0;
    for (int i = 0; i < tr->n_bd && rc == DP_OK; i++) {
        if (tr->bd[i].validation) continue;
        if (tr->multi) dp_train_graph_select(tr, i);
        double t;
        if ((rc = distill_target(tr, tgt + o, &t, err)) != DP_OK || !(t == t)) continue;
        gi[m] = i;
        off[m] = o;
        target[m++] = t;
        o += (size_t)tr->n;
    }
    double keep_score = INFINITY;
    int reached = 0;
    const long check_every = 10L * (m > 0 ? m : 1);
    for (long k = 0; k < st->distill && rc == DP_OK && m > 0; k++) {
        if (k % check_every == 0) {
            /* greedy placement of every distilled graph */
            double score = 0;
            reached = 1;
            for (int j = 0; j < m && rc == DP_OK; j++) {
                if (tr->multi) dp_train_graph_select(tr, gi[j]);
                double ms;
                if ((rc = dp_train_rollout(tr, DP_TRAIN_MODE_GREEDY, 0, NULL, &ms, NULL, err)) != DP_OK) break;
                score += tr->multi ? ms / tr->bd[gi[j]].ref : ms;
                reached &= ms <= target[j];
            }
            if (rc != DP_OK) break;
            if (score < keep_score) {
                keep_score = score;
                memcpy(keep[0], tr->blk[0]->param, tr->blk[0]->n * sizeof(float));
                memcpy(keep[1], tr->blk[1]->param, tr->blk[1]->n * sizeof(float));
            }
            if (reached) break;
        }
        const int j = (int)(k % m);
        if (tr->multi) dp_train_graph_select(tr, gi[j]);
        memcpy(tr->forced_assign, tgt + off[j], (size_t)tr->n * sizeof(int));
        dp_agent_zero_grad(tr->ag);
        double ms;
        if ((rc = dp_train_rollout(tr, DP_TRAIN_MODE_ASSIGN, 0, NULL, &ms, NULL, err)) != DP_OK) break;
        /* SEL keeps its order (update_sel is 0 here): PLC's targets only */
        const int n = tr->n, D = tr->D;
        for (int t = 0; t < n; t++)
            for (int d = 0; d < D; d++) tr->plc_mark[(size_t)t * D + d] = d == tr->plc_a[t];
        dp_train_stage imitate = *st;
        imitate.il_weight = 1;
        imitate.pg_weight = 0;
        imitate.entropy_weight = 0;
        if (dp_train_episode_grad(tr, &imitate, 0, 0, 1.0) != DP_OK) {
            rc = dp_error_set(err, DP_EINVAL, "internal error: a rebuilt ready set differs from the rollout's");
            break;
        }
        dp_train_update(tr, lr);
        reached = 0;
    }
    tr->cfg.update_sel = keep_sel;
    if (rc == DP_OK && !reached && keep_score < INFINITY) {
        /* the targets were not all reached: the last check was not the best one, or steps followed it */
        memcpy(tr->blk[0]->param, keep[0], tr->blk[0]->n * sizeof(float));
        memcpy(tr->blk[1]->param, keep[1], tr->blk[1]->n * sizeof(float));
        dp_train_params_changed(tr);
    }
    if (tr->multi) dp_train_graph_select(tr, keep_cur);
out:
    free(gi);
    free(off);
    free(target);
    free(tgt);
    free(keep[0]);
    free(keep[1]);
    return rc;
}
