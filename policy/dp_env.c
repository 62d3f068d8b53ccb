#include "dp_env.h"
#include "dp_alloc.h"
#include "dp_heap.h"
#include "dp_hisim.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

dp_env *dp_env_alloc(const dp_graph *g, const dp_cost *c, dp_error *err)
{
    /* cost tables of another graph were read past their end (the b-levels: a review) */
    if (!g || !c || c->n_ops != g->n_ops || c->n_edges != g->n_edges) {
        dp_error_set(err, DP_EINVAL, "environment: %s", !g || !c ? "a graph and its cost tables are needed"
                     : "the cost tables are of another graph (their ops or edges differ in number)");
        return NULL;
    }
    dp_env *env = dp_alloc_calloc(1, sizeof *env);
    if (!env) goto nomem;
    const int n = g->n_ops, D = c->n_devices;
    env->g = g;
    env->c = c;
    env->n_ops = n;
    env->n_devices = D;
    env->general_exact_max = DP_ENV_GENERAL_EXACT_MAX_OPS;
    env->assignment = dp_alloc_malloc_n(n, sizeof(int));
    env->order = dp_alloc_malloc_n(n, sizeof(int));
    env->ready = dp_alloc_malloc_n(n, sizeof(int));
    env->ready_pos = dp_alloc_malloc_n(n, sizeof(int));
    env->unassigned_preds = dp_alloc_malloc_n(n, sizeof(int));
    env->est_start = dp_alloc_malloc_n(n, sizeof(double));
    env->est_end = dp_alloc_malloc_n(n, sizeof(double));
    env->dev_avail = dp_alloc_malloc_n(D, sizeof(double));
    env->dev_work = dp_alloc_malloc_n(D, sizeof(double));
    env->blevel = dp_alloc_malloc_n(n, sizeof(double));
    env->tlevel = dp_alloc_malloc_n(n, sizeof(double));
    env->est_ready = dp_alloc_malloc_n(n, sizeof(double));
    env->first_copy = dp_alloc_malloc((size_t)g->n_edges + 1);
    env->mean_comm = dp_alloc_malloc_n((size_t)g->n_edges + 1, sizeof(double));
    env->dev_first = dp_alloc_malloc_n(D, sizeof(int));
    env->dev_lastop = dp_alloc_malloc_n(D, sizeof(int));
    env->op_next = dp_alloc_malloc_n(n, sizeof(int));
    env->cand_state = dp_alloc_malloc((size_t)D);
    env->cand_append = dp_alloc_malloc((size_t)D);
    env->cand_start = dp_alloc_malloc_n(D, sizeof(double));
    env->cand_ready = dp_alloc_malloc_n(D, sizeof(double));
    if (!env->assignment || !env->order || !env->ready || !env->ready_pos || !env->unassigned_preds || !env->est_start ||
        !env->est_end || !env->dev_avail || !env->dev_work || !env->blevel || !env->tlevel || !env->est_ready ||
        !env->first_copy || !env->mean_comm || !env->dev_first || !env->dev_lastop || !env->op_next || !env->cand_state ||
        !env->cand_append || !env->cand_start || !env->cand_ready)
        goto nomem;
    dp_cost_levels(g, c, env->blevel, env->tlevel);
    for (int e = 0; e < g->n_edges; e++) env->mean_comm[e] = dp_cost_mean_comm(c, e);
    /* the engines wait for the first copy of a repeated (src, dst) pair only (dp_sim.h); the
     * graph lists a repeat right after its first copy among the source's out-edges */
    for (int u = 0; u < n; u++)
        for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++)
            env->first_copy[e] = (e == g->succ_ptr[u] || g->edge_dst[e - 1] != g->edge_dst[e]);
    dp_env_reset(env);
    return env;
nomem:
    dp_env_free(env);
    dp_error_set(err, DP_ENOMEM, "%s: out of memory for the environment", g->source);
    return NULL;
}

void dp_env_free(dp_env *env)
{
    if (!env) return;
    free(env->assignment); free(env->order); free(env->ready); free(env->ready_pos);
    free(env->unassigned_preds);
    free(env->est_start); free(env->est_end); free(env->dev_avail); free(env->dev_work);
    free(env->blevel); free(env->tlevel); free(env->est_ready); free(env->first_copy); free(env->mean_comm);
    free(env->dev_first); free(env->dev_lastop); free(env->op_next);
    free(env->cand_state); free(env->cand_append); free(env->cand_start); free(env->cand_ready); free(env->cand_sched);
    dp_sim_prefix_free(env->prefix); free(env->by_rank); free(env->rank_bits);
    dp_sim_free(env->surrogate);
    dp_hisim_delta_free(env->hdelta);
    free(env);
}

/* ---- the ready set ordered by a key (b-level, or the caller's): a binary max-heap on (key, -id) ----
 * ready_pos[v] follows every move (the heap's MOVED hook) so that any ready op (not only the
 * top) can be removed. */

#define READY_BEFORE(env, x, y) \
    ((env)->ready_key[x] > (env)->ready_key[y] || ((env)->ready_key[x] == (env)->ready_key[y] && (x) < (y)))
#define READY_MOVED(env, x, i) ((env)->ready_pos[x] = (i))
DP_HEAP_DEFINE(ready_heap, int, dp_env *, READY_BEFORE, READY_MOVED)

static void ready_remove_at(dp_env *env, int idx)
{
    if (env->ready_order == DP_ENV_READY_BY_ID) {
        memmove(env->ready + idx, env->ready + idx + 1, (size_t)(env->n_ready - idx - 1) * sizeof(int));
        env->n_ready--;
        return;
    }
    env->ready_pos[env->ready[idx]] = -1;
    ready_heap_remove_at(env, env->ready, &env->n_ready, idx);
}

/* insert v keeping the order */
static void ready_insert(dp_env *env, int v)
{
    if (env->ready_order != DP_ENV_READY_BY_ID) {
        ready_heap_push(env, env->ready, &env->n_ready, v);
        return;
    }
    int i = env->n_ready++;
    while (i > 0 && env->ready[i - 1] > v) {
        env->ready[i] = env->ready[i - 1];
        i--;
    }
    env->ready[i] = v;
}

void dp_env_reset(dp_env *env)
{
    const dp_graph *g = env->g;
    env->step = 0;
    for (int v = 0; v < env->n_ops; v++) {
        env->assignment[v] = -1;
        env->unassigned_preds[v] = g->pred_ptr[v + 1] - g->pred_ptr[v];
        env->est_start[v] = env->est_end[v] = env->est_ready[v] = 0;
        env->ready_pos[v] = -1;
        env->op_next[v] = -1;
    }
    for (int d = 0; d < env->n_devices; d++) {
        env->dev_avail[d] = env->dev_work[d] = 0;
        env->dev_first[d] = env->dev_lastop[d] = -1;
    }
    env->cand_v = env->cand_step = -1;
    if (env->prefix) dp_sim_prefix_reset(env->prefix);
    env->hdelta_set = 0; /* the delta runs' incumbent: the prefix at the next simulation */
    if (env->ready_order == DP_ENV_READY_BY_ID) {
        memcpy(env->ready, g->sources, (size_t)g->n_sources * sizeof(int));
        env->n_ready = g->n_sources;
    } else {
        env->n_ready = 0;
        for (int i = 0; i < g->n_sources; i++) ready_insert(env, g->sources[i]);
    }
}

void dp_env_set_ready_order(dp_env *env, dp_env_ready_order order)
{
    env->ready_order = order == DP_ENV_READY_BY_BLEVEL ? DP_ENV_READY_BY_BLEVEL : DP_ENV_READY_BY_ID;
    env->ready_key = env->ready_order == DP_ENV_READY_BY_BLEVEL ? env->blevel : NULL;
    dp_env_reset(env);
}

void dp_env_set_ready_key(dp_env *env, const double *key)
{
    env->ready_order = key ? DP_ENV_READY_BY_KEY : DP_ENV_READY_BY_ID;
    env->ready_key = key;
    dp_env_reset(env);
}

/* the append estimate's latest input arrival of v on d (the device's availability aside) */
static double append_arrival(const dp_env *env, int v, int d)
{
    const dp_graph *g = env->g;
    double t = 0;
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        int e = g->pred_edge[q], u = g->edge_src[e];
        double a = env->est_end[u] + dp_cost_comm(env->c, e, env->assignment[u], d);
        if (a > t) t = a;
    }
    return t;
}

static double append_est_start(const dp_env *env, int v, int d)
{
    const dp_graph *g = env->g;
    double t = env->dev_avail[d];
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        int e = g->pred_edge[q], u = g->edge_src[e];
        double a = env->est_end[u] + dp_cost_comm(env->c, e, env->assignment[u], d);
        if (a > t) t = a;
    }
    return t;
}

/* ---- the engine state ---- */

enum { CAND_NONE = 0, CAND_LOCAL = 1, CAND_SIMULATED = 2, CAND_FAILED = 3 };

/* the simulator of the fast path: the engine's own, or the surrogate above
 * DP_ENV_GENERAL_EXACT_MAX_OPS ops of a general engine */
static dp_sim *fast_sim(const dp_env *env)
{
    return env->surrogate ? env->surrogate : dp_engine_fast_sim(env->engine);
}

/* 1 when the general engine's candidates are delta runs from the placed prefix: its incumbent
 * set (the prefix's run, with snapshots) at the first simulation after a reset */
static int hdelta_on(dp_env *env, dp_error *err)
{
    if (!env->hdelta) return 0;
    if (!env->hdelta_set) {
        if (dp_hisim_delta_set(env->hdelta, env->assignment, NULL, err) != DP_OK) return 0;
        env->hdelta_set = 1;
    }
    return 1;
}

/* simulate the prefix plus v on d into candidate slot d (cand_sched[d]) */
static int simulate_candidate(dp_env *env, int v, int d, dp_error *err)
{
    const size_t n = (size_t)env->n_ops;
    dp_engine_schedule s;
    env->assignment[v] = d;
    int rc;
    if (hdelta_on(env, NULL)) {
        /* resumed from the placed prefix's snapshot before v's producers' first end */
        dp_hisim_result r;
        rc = dp_hisim_run_delta_result(env->hdelta, env->assignment, &r, err);
        s.op_start = r.op_start;
        s.op_end = r.op_end;
        s.op_ready = r.op_ready;
    } else {
        rc = dp_engine_run_prefix(env->engine, env->assignment, NULL, &s, err);
    }
    env->assignment[v] = -1;
    env->n_resim++;
    if (rc != DP_OK) {
        env->cand_state[d] = CAND_FAILED;
        env->cand_start[d] = env->cand_ready[d] = INFINITY;
        return rc;
    }
    double *S = env->cand_sched + (size_t)d * 3 * n, *E = S + n, *R = E + n;
    for (int i = 0; i <= env->step; i++) {
        int x = i < env->step ? env->order[i] : v;
        S[x] = s.op_start[x];
        E[x] = s.op_end[x];
        R[x] = s.op_ready[x];
    }
    env->cand_start[d] = S[v];
    env->cand_ready[d] = R[v];
    env->cand_append[d] = 0;
    env->cand_state[d] = CAND_SIMULATED;
    return DP_OK;
}

/* The first index of device d's list (queue order, dp_sim_prefix) whose op's time (time: the
 * prefix's ready, start or end) is at or after t, or after t when strict; along the list these
 * times never decrease. */
static int first_time_at(const dp_sim_prefix *p, const double *time, int d, double t, int strict)
{
    const int *a = p->dev_ops[d];
    int lo = 0, hi = p->dev_n[d];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        double x = time[a[mid]];
        if (x < t || (strict && x == t)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Fill candidate slot d for ready op v (engine state). On the exact fast path the local rule of
 * the header: v's inputs arrive on d at r; the ops of d that arrived before r keep their times
 * and are ahead of v in d's first-come-first-served queue, so v starts at max(r, their latest
 * end); an op of d arriving exactly at r leaves the order to the engine's event sequence, and
 * then the prefix is simulated. */
static void probe(dp_env *env, int v, int d)
{
    if (env->cand_v != v || env->cand_step != env->step) {
        env->cand_v = v;
        env->cand_step = env->step;
        memset(env->cand_state, CAND_NONE, (size_t)env->n_devices);
    }
    if (env->cand_state[d] != CAND_NONE) return;
    if (!env->general) {
        const dp_graph *g = env->g;
        double r = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int e = g->pred_edge[q], u = g->edge_src[e], du = env->assignment[u];
            if (!env->first_copy[e]) continue;
            /* dp_sim: the arrival is the producer's end plus the transfer, when one is needed */
            double a = du != d ? env->est_end[u] + dp_cost_comm(env->c, e, du, d) : env->est_end[u];
            if (a > r) r = a;
        }
        /* d's ops in queue order, ready and end never decreasing: those arriving before r are
         * a prefix of the list, the last of them ends latest */
        const dp_sim_prefix *p = env->prefix;
        const int *a = p->dev_ops[d], i = first_time_at(p, p->ready, d, r, 0);
        double ahead = i > 0 && p->end[a[i - 1]] > 0 ? p->end[a[i - 1]] : 0;
        int append = i == p->dev_n[d], tie = !append && p->ready[a[i]] == r;
        if (tie && g->pred_ptr[v] == g->pred_ptr[v + 1]) {
            /* a source: the engine makes the placed sources ready first, in increasing id, then
             * the ops whose inputs arrive at 0 (zero-time chains); so the ops of d ahead of v are
             * the sources of lower id, a prefix of d's list */
            int lo = 0, hi = p->dev_n[d];
            while (lo < hi) {
                int mid = lo + (hi - lo) / 2, x = a[mid];
                if (p->ready[x] == 0 && g->pred_ptr[x] == g->pred_ptr[x + 1] && x < v) lo = mid + 1;
                else hi = mid;
            }
            ahead = lo > 0 && p->end[a[lo - 1]] > 0 ? p->end[a[lo - 1]] : 0;
            tie = 0;
        }
        if (!tie) {
            env->cand_start[d] = r > ahead ? r : ahead;
            env->cand_ready[d] = r;
            env->cand_append[d] = (unsigned char)append;
            env->cand_state[d] = CAND_LOCAL;
            return;
        }
        /* the engine's event order decides: the run resumed at r, not committed */
        env->assignment[v] = d;
        int rc = dp_sim_prefix_add(fast_sim(env), env->prefix, env->assignment, v, 0,
                                   &env->cand_start[d], &env->cand_ready[d], NULL);
        env->assignment[v] = -1;
        env->n_resim++;
        env->cand_append[d] = 0;
        env->cand_state[d] = rc == DP_OK ? CAND_SIMULATED : CAND_FAILED;
        if (rc != DP_OK) env->cand_start[d] = env->cand_ready[d] = INFINITY;
        return;
    }
    simulate_candidate(env, v, d, NULL);
}

int dp_env_est_start_checked(const dp_env *env, int v, int d, double *start, dp_error *err)
{
    /* an op that is not ready has predecessors without a device (assignment -1): the estimate
     * would index the cost tables with it, past their end */
    if (v < 0 || v >= env->n_ops) return dp_error_set(err, DP_EINVAL, "est_start: op %d out of range 0..%d", v, env->n_ops - 1);
    if (d < 0 || d >= env->n_devices)
        return dp_error_set(err, DP_EINVAL, "est_start: device %d out of range 0..%d", d, env->n_devices - 1);
    if (dp_env_ready_index(env, v) < 0)
        return dp_error_set(err, DP_EINVAL, "est_start: op %d is not in the ready set (an estimate is of a ready op)", v);
    *start = dp_env_est_start(env, v, d);
    return DP_OK;
}

double dp_env_est_start(const dp_env *env, int v, int d)
{
    if (env->state == DP_ENV_STATE_APPEND) return append_est_start(env, v, d);
    dp_env *w = (dp_env *)env; /* the candidate cache (dp_env.h) */
    probe(w, v, d);
    return w->cand_start[d];
}

/* v's input arrival on d under the state (for the features) */
static double ready_on(const dp_env *env, int v, int d)
{
    if (env->state == DP_ENV_STATE_APPEND) return append_arrival(env, v, d);
    probe((dp_env *)env, v, d);
    return env->cand_ready[d];
}

int dp_env_set_state(dp_env *env, dp_env_state state, dp_engine *engine, dp_error *err)
{
    if (state == DP_ENV_STATE_APPEND) {
        dp_hisim_delta_free(env->hdelta);
        env->hdelta = NULL;
        env->state = DP_ENV_STATE_APPEND;
        env->engine = NULL;
        dp_env_reset(env);
        return DP_OK;
    }
    if (state != DP_ENV_STATE_ENGINE) return dp_error_set(err, DP_EINVAL, "environment: unknown state %d", (int)state);
    if (!engine) return dp_error_set(err, DP_EINVAL, "environment: the engine state needs the machine's engine");
    if (dp_engine_graph(engine) != env->g || dp_engine_costs(engine) != env->c)
        return dp_error_set(err, DP_EINVAL, "%s: the engine given to the environment simulates other cost tables or another graph",
                            env->g->source);
    /* a general engine's exact state up to DP_ENV_GENERAL_EXACT_MAX_OPS ops, the surrogate's
     * fast path above (dp_env.h) */
    const int general = dp_engine_is_general(engine), surrogate = general && env->n_ops > env->general_exact_max;
    if (general && !surrogate && !env->cand_sched) {
        env->cand_sched = dp_alloc_malloc_n((size_t)env->n_devices * 3 * (size_t)env->n_ops, sizeof(double));
        if (!env->cand_sched) return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the engine state", env->g->source);
    }
    if (surrogate && !env->surrogate && !(env->surrogate = dp_sim_alloc(env->g, env->c, err))) return err ? err->code : DP_ENOMEM;
    if ((!general || surrogate) && (!env->prefix || !env->by_rank || !env->rank_bits)) {
        if (!env->prefix) env->prefix = dp_sim_prefix_alloc(env->n_ops, env->n_devices);
        if (!env->by_rank) env->by_rank = dp_alloc_malloc_n((size_t)env->n_ops + 1, sizeof *env->by_rank);
        if (!env->rank_bits) env->rank_bits = dp_alloc_malloc_n((size_t)env->n_ops / 64 + 1, sizeof *env->rank_bits);
        if (!env->prefix || !env->by_rank || !env->rank_bits)
            return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the engine state", env->g->source);
    }
    env->state = DP_ENV_STATE_ENGINE;
    env->engine = engine;
    env->general = general && !surrogate;
    /* the general engine's exact state by delta runs, where its options support them (a new one
     * for each engine: it belongs to the engine's simulator) */
    dp_hisim_delta_free(env->hdelta);
    env->hdelta = NULL;
    if (env->general && dp_hisim_delta_supported(dp_engine_general_sim(engine)) &&
        !(env->hdelta = dp_hisim_delta_alloc(dp_engine_general_sim(engine), err)))
        return err ? err->code : DP_ENOMEM;
    if (!surrogate) {
        dp_sim_free(env->surrogate);
        env->surrogate = NULL;
    }
    dp_env_reset(env);
    return DP_OK;
}

const char *dp_env_state_name(dp_env_state s)
{
    return s == DP_ENV_STATE_ENGINE ? "engine" : "append";
}

int dp_env_state_parse(const char *name, dp_env_state *s)
{
    if (name && strcmp(name, "append") == 0) *s = DP_ENV_STATE_APPEND;
    else if (name && strcmp(name, "engine") == 0) *s = DP_ENV_STATE_ENGINE;
    else return DP_EINVAL;
    return DP_OK;
}

const char *dp_env_features_name(dp_env_features fs)
{
    return fs == DP_ENV_FEATURES_HINT ? "hint" : fs == DP_ENV_FEATURES_ENGINE ? "engine" : "doppler";
}

int dp_env_features_parse(const char *name, dp_env_features *fs)
{
    if (name && strcmp(name, "doppler") == 0) *fs = DP_ENV_FEATURES_DOPPLER;
    else if (name && strcmp(name, "engine") == 0) *fs = DP_ENV_FEATURES_ENGINE;
    else if (name && strcmp(name, "hint") == 0) *fs = DP_ENV_FEATURES_HINT;
    else return DP_EINVAL;
    return DP_OK;
}

int dp_env_state_exact(const dp_env *env)
{
    return env && env->state == DP_ENV_STATE_ENGINE && !env->surrogate;
}

int dp_env_n_features(dp_env_features fs)
{
    return fs == DP_ENV_FEATURES_HINT     ? DP_ENV_MAX_DEVICE_FEATURES
           : fs == DP_ENV_FEATURES_ENGINE ? DP_ENV_N_ENGINE_FEATURES
                                          : DP_ENV_N_DEVICE_FEATURES;
}

double dp_env_makespan(const dp_env *env)
{
    double m = 0;
    for (int d = 0; d < env->n_devices; d++)
        if (env->dev_avail[d] > m) m = env->dev_avail[d];
    return m;
}

int dp_env_ready_index(const dp_env *env, int v)
{
    if (v < 0 || v >= env->n_ops) return -1;
    if (env->ready_order != DP_ENV_READY_BY_ID) return env->ready_pos[v];
    int lo = 0, hi = env->n_ready - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (env->ready[mid] == v) return mid;
        if (env->ready[mid] < v) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* the fast path's step: the run resumed at v's READY, committed; the ops it simulated again
 * get their new times, and the devices they run on their new availability (those ops are all
 * of the device's ops ending at or after the resumed instant, the others end before it) */
static int fast_step(dp_env *env, int v, int d, dp_error *err)
{
    dp_sim_prefix *p = env->prefix;
    env->assignment[v] = d;
    int rc = dp_sim_prefix_add(fast_sim(env), p, env->assignment, v, 1, NULL, NULL, err);
    env->assignment[v] = -1;
    env->n_resim++;
    if (rc != DP_OK) return rc;
    for (int i = 0; i < p->n_changed; i++) {
        int x = p->changed[i];
        env->est_start[x] = p->start[x];
        env->est_end[x] = p->end[x];
        env->est_ready[x] = p->ready[x];
    }
    /* each device's last end: its list's last op's (ends never decrease along the list) */
    for (int k = 0; k < env->n_devices; k++)
        if (p->dev_n[k] > 0) env->dev_avail[k] = p->end[p->dev_ops[k][p->dev_n[k] - 1]];
    return DP_OK;
}

/* the engine state's step: v on d; DP_OK or the engine's error (state unchanged) */
static int engine_step(dp_env *env, int v, int d, dp_error *err)
{
    if (!env->general) return fast_step(env, v, d, err);
    probe(env, v, d);
    if (env->cand_state[d] == CAND_LOCAL && !env->cand_append[d]) {
        /* v overtakes placed ops of d: their times (and their successors') move */
        if (simulate_candidate(env, v, d, err) != DP_OK) return err ? err->code : DP_EINVAL;
    } else if (env->cand_state[d] == CAND_FAILED) {
        int rc = simulate_candidate(env, v, d, err); /* again, for the message */
        if (rc != DP_OK) return rc;
    }
    if (env->cand_state[d] == CAND_LOCAL) {
        /* behind every placed op of d: no other time changes */
        env->est_start[v] = env->cand_start[d];
        env->est_end[v] = env->cand_start[d] + dp_cost_op(env->c, v, d);
        env->est_ready[v] = env->cand_ready[d];
        if (env->est_end[v] > env->dev_avail[d]) env->dev_avail[d] = env->est_end[v];
        return DP_OK;
    }
    const size_t n = (size_t)env->n_ops;
    if (hdelta_on(env, NULL)) {
        /* the prefix with v on d, the incumbent of the next step's delta runs (its snapshots
         * from its candidate's run when that recorded them, else from a run from its snapshot) */
        env->assignment[v] = d;
        const int rc = dp_hisim_delta_commit(env->hdelta, env->assignment, err);
        env->assignment[v] = -1;
        if (rc != DP_OK) return rc;
    }
    const double *S = env->cand_sched + (size_t)d * 3 * n, *E = S + n, *R = E + n;
    for (int k = 0; k < env->n_devices; k++) env->dev_avail[k] = 0;
    for (int i = 0; i <= env->step; i++) {
        int x = i < env->step ? env->order[i] : v;
        int dx = i < env->step ? env->assignment[x] : d;
        env->est_start[x] = S[x];
        env->est_end[x] = E[x];
        env->est_ready[x] = R[x];
        if (E[x] > env->dev_avail[dx]) env->dev_avail[dx] = E[x];
    }
    return DP_OK;
}

int dp_env_step(dp_env *env, int v, int d, dp_error *err)
{
    const dp_graph *g = env->g;
    int idx = (v >= 0 && v < env->n_ops) ? dp_env_ready_index(env, v) : -1;
    if (idx < 0) return dp_error_set(err, DP_EINVAL, "op %d is not in the ready set", v);
    if (d < 0 || d >= env->n_devices)
        return dp_error_set(err, DP_EINVAL, "device %d out of range 0..%d", d, env->n_devices - 1);
    double dur = dp_cost_op(env->c, v, d);
    if (env->state == DP_ENV_STATE_ENGINE) {
        int rc = engine_step(env, v, d, err);
        if (rc != DP_OK) return rc;
    } else {
        double st = append_est_start(env, v, d);
        env->est_ready[v] = append_arrival(env, v, d);
        env->est_start[v] = st;
        env->est_end[v] = st + dur;
        env->dev_avail[d] = st + dur;
    }
    env->assignment[v] = d;
    env->order[env->step++] = v;
    env->dev_work[d] += dur;
    if (env->dev_lastop[d] < 0) env->dev_first[d] = v;
    else env->op_next[env->dev_lastop[d]] = v;
    env->dev_lastop[d] = v;
    ready_remove_at(env, idx);
    for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
        int w = g->edge_dst[e];
        if (--env->unassigned_preds[w] == 0) ready_insert(env, w);
    }
    return DP_OK;
}

static inline int close_enough(double a, double b)
{
    return a == b || fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

int dp_env_cp_select(const dp_env *env)
{
    if (env->ready_order == DP_ENV_READY_BY_BLEVEL) return env->n_ready > 0 ? env->ready[0] : -1;
    /* ties by lowest id: the set is in id order but under DP_ENV_READY_BY_KEY, a heap (there the
     * first in heap order won: a review) */
    int best = -1;
    double bl = -INFINITY;
    for (int i = 0; i < env->n_ready; i++) {
        int v = env->ready[i];
        if (env->blevel[v] > bl || (env->blevel[v] == bl && v < best)) { bl = env->blevel[v]; best = v; }
    }
    return best;
}

int dp_env_cp_place(const dp_env *env, int v)
{
    int best = 0;
    double t = INFINITY;
    for (int d = 0; d < env->n_devices; d++) {
        double s = dp_env_est_start(env, v, d);
        if (s < t) { t = s; best = d; }
    }
    return best;
}

int dp_env_cp_select_marks(const dp_env *env, const int *ops, int k, unsigned char *marks)
{
    double bl = -INFINITY;
    for (int i = 0; i < k; i++)
        if (env->blevel[ops[i]] > bl) bl = env->blevel[ops[i]];
    int m = 0;
    for (int i = 0; i < k; i++) {
        marks[i] = close_enough(env->blevel[ops[i]], bl);
        m += marks[i];
    }
    return m;
}

int dp_env_cp_select_all(const dp_env *env, unsigned char *marks)
{
    return dp_env_cp_select_marks(env, env->ready, env->n_ready, marks);
}

int dp_env_cp_place_all(const dp_env *env, int v, unsigned char *marks)
{
    double t = INFINITY;
    double *s = dp_alloc_malloc((size_t)env->n_devices * sizeof *s);
    if (!s) return 0;
    for (int d = 0; d < env->n_devices; d++) {
        s[d] = dp_env_est_start(env, v, d);
        if (s[d] < t) t = s[d];
    }
    int k = 0;
    for (int d = 0; d < env->n_devices; d++) {
        marks[d] = close_enough(s[d], t);
        k += marks[d];
    }
    free(s);
    return k;
}

/* the authors' five columns (dp_env.h) with row stride F */
static void doppler_features(const dp_env *env, int v, double *feat, int F)
{
    const dp_graph *g = env->g;
    const int D = env->n_devices;
    for (int d = 0; d < D; d++) {
        double *f = feat + (size_t)d * F;
        f[0] = env->dev_work[d];
        f[1] = 0;
        f[2] = INFINITY;
        f[3] = 0;
        f[4] = dp_env_est_start(env, v, d);
    }
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        int u = g->edge_src[g->pred_edge[q]];
        int dup = 0;
        for (int q2 = g->pred_ptr[v]; q2 < q && !dup; q2++) dup = g->edge_src[g->pred_edge[q2]] == u;
        if (dup) continue;
        int d = env->assignment[u];
        double *f = feat + (size_t)d * F;
        f[1] += dp_cost_op(env->c, u, d);
        if (env->est_start[u] < f[2]) f[2] = env->est_start[u];
        if (env->est_end[u] > f[3]) f[3] = env->est_end[u];
    }
    for (int d = 0; d < D; d++)
        if (feat[(size_t)d * F + 2] == INFINITY) feat[(size_t)d * F + 2] = 0;
}

void dp_env_device_features(const dp_env *env, int v, double *feat)
{
    doppler_features(env, v, feat, DP_ENV_N_DEVICE_FEATURES);
}

/* the ops of d's list from index i to j, in the order they were placed (env->by_rank); returns
 * how many. Short lists by insertion; longer ones by a bitmap: ranks are distinct, so each op
 * sets its bit in a bitmap of the ranks' span and the set bits, read back in order, give the ops
 * through prefix->placed (the inverse of rank). The span is at most the ops placed (n / 64 words
 * to clear and scan), on 8 devices 8 to 64 times the list's length: about a third of the cost of
 * the least-significant-digit radix sort this replaced (qsort before it), on the 99,774-op
 * rollout whose lists of ops arriving after r run to hundreds (perf: that sort was 10% of it). */
static int placed_order(dp_env *env, int d, int i, int j)
{
    const dp_sim_prefix *p = env->prefix;
    const int *a = p->dev_ops[d];
    const int m = j - i;
    dp_env_ranked *o = env->by_rank;
    if (m < 48) {
        for (int k = 0; k < m; k++) {
            const dp_env_ranked x = {.rank = p->rank[a[i + k]], .op = a[i + k]};
            int q = k;
            for (; q > 0 && o[q - 1].rank > x.rank; q--) o[q] = o[q - 1];
            o[q] = x;
        }
        return m;
    }
    int lo = INT_MAX, hi = -1;
    for (int k = i; k < j; k++) {
        const int r = p->rank[a[k]];
        if (r < lo) lo = r;
        if (r > hi) hi = r;
    }
    const size_t words = (size_t)(hi - lo) / 64 + 1;
    uint64_t *bits = env->rank_bits;
    memset(bits, 0, words * sizeof *bits);
    for (int k = i; k < j; k++) {
        const unsigned r = (unsigned)(p->rank[a[k]] - lo);
        bits[r >> 6] |= (uint64_t)1 << (r & 63);
    }
    int n = 0;
    for (size_t w = 0; w < words; w++)
        for (uint64_t b = bits[w]; b; b &= b - 1) {
            const int r = lo + (int)(w * 64) + __builtin_ctzll(b);
            o[n++] = (dp_env_ranked){.rank = r, .op = p->placed[r]};
        }
    return n;
}

/* Columns 6, 8 and 9's sums for device d on the fast path, from d's list in queue order (ready,
 * start and end never decrease along it) instead of a walk over every op of d: the latest end
 * by est is the last of a prefix of the list, the ops arriving after r a suffix, the ops
 * overlapping [end, end + L) a range. The sums run over their ops in the order they were
 * placed, as the walk over d's ops did, so that every bit is the walk's. */
static void device_sums(const dp_env *cenv, int d, double est, double end, double r, double L, double *last,
                        double *overtaken, double *busy)
{
    dp_env *env = (dp_env *)cenv; /* by_rank: scratch (one thread per env) */
    const dp_sim_prefix *p = env->prefix;
    const int *a = p->dev_ops[d], n = p->dev_n[d];
    int i = first_time_at(p, p->end, d, est, 1);
    *last = i > 0 && p->end[a[i - 1]] > 0 ? p->end[a[i - 1]] : 0;
    int m = placed_order(env, d, first_time_at(p, p->ready, d, r, 1), n);
    *overtaken = 0;
    for (int k = 0; k < m; k++) *overtaken += dp_cost_op(env->c, env->by_rank[k].op, d);
    *busy = 0;
    if (L > 0) {
        m = placed_order(env, d, first_time_at(p, p->end, d, end, 1), first_time_at(p, p->start, d, end + L, 0));
        for (int k = 0; k < m; k++) {
            int x = env->by_rank[k].op;
            const double xs = p->start[x], xe = p->end[x];
            double lo = xs > end ? xs : end, hi = xe < end + L ? xe : end + L;
            if (hi > lo) *busy += hi - lo;
        }
    }
}

/* columns 5..11 of the engine set (dp_env.h) */
static void engine_features(const dp_env *env, int v, double *feat, int F)
{
    const dp_graph *g = env->g;
    const dp_cost *c = env->c;
    const int D = env->n_devices;
    const double L = env->blevel[v] - dp_cost_mean_op(c, v);
    for (int d = 0; d < D; d++) {
        double *f = feat + (size_t)d * F;
        const double est = f[4], end = est + dp_cost_op(c, v, d), r = ready_on(env, v, d);
        double last = 0, overtaken = 0, busy = 0;
        if (env->state == DP_ENV_STATE_ENGINE && !env->general) {
            device_sums(env, d, est, end, r, L, &last, &overtaken, &busy);
        } else {
            for (int x = env->dev_first[d]; x >= 0; x = env->op_next[x]) {
                const double xs = env->est_start[x], xe = env->est_end[x];
                if (xe <= est && xe > last) last = xe;
                if (env->est_ready[x] > r) overtaken += dp_cost_op(c, x, d);
                if (L > 0) {
                    double lo = xs > end ? xs : end, hi = xe < end + L ? xe : end + L;
                    if (hi > lo) busy += hi - lo;
                }
            }
        }
        double in = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int e = g->pred_edge[q], du = env->assignment[g->edge_src[e]];
            if (env->first_copy[e] && du != d) in += dp_cost_comm(c, e, du, d);
        }
        double out = 0;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
            if (!env->first_copy[e]) continue;
            int w = g->edge_dst[e];
            double tot = 0, on = 0;
            for (int q = g->pred_ptr[w]; q < g->pred_ptr[w + 1]; q++) {
                int e2 = g->pred_edge[q], u = g->edge_src[e2];
                if (u == v || !env->first_copy[e2] || env->assignment[u] < 0) continue;
                tot += c->edge_data[e2];
                if (env->assignment[u] == d) on += c->edge_data[e2];
            }
            out += env->mean_comm[e] * (1 - (tot > 0 ? on / tot : 0));
        }
        f[5] = end;
        f[6] = est - last;
        f[7] = env->dev_avail[d] - env->dev_work[d];
        f[8] = overtaken;
        f[9] = L > 0 ? busy / L : 0;
        f[10] = in;
        f[11] = out;
    }
}

void dp_env_device_features_of(const dp_env *env, dp_env_features fs, int v, double *feat)
{
    const int F = dp_env_n_features(fs);
    doppler_features(env, v, feat, F);
    if (fs == DP_ENV_FEATURES_ENGINE || fs == DP_ENV_FEATURES_HINT) engine_features(env, v, feat, F);
    if (fs == DP_ENV_FEATURES_HINT)
        for (int d = 0; d < env->n_devices; d++) feat[(size_t)d * F + DP_ENV_HINT_COLUMN] = env->hint && env->hint[v] == d;
}

void dp_env_set_hint(dp_env *env, const int *hint)
{
    env->hint = hint;
}

int dp_env_get_n_ops(const dp_env *env) { return env->n_ops; }
int dp_env_get_n_devices(const dp_env *env) { return env->n_devices; }
int dp_env_get_step(const dp_env *env) { return env->step; }
int dp_env_get_n_ready(const dp_env *env) { return env->n_ready; }
long dp_env_get_n_resim(const dp_env *env) { return env->n_resim; }
const int *dp_env_get_assignment(const dp_env *env) { return env->assignment; }
const int *dp_env_get_ready(const dp_env *env) { return env->ready; }
const double *dp_env_get_est_start(const dp_env *env) { return env->est_start; }
const double *dp_env_get_est_end(const dp_env *env) { return env->est_end; }
const double *dp_env_get_est_ready(const dp_env *env) { return env->est_ready; }
const double *dp_env_get_dev_avail(const dp_env *env) { return env->dev_avail; }
const double *dp_env_get_dev_work(const dp_env *env) { return env->dev_work; }
