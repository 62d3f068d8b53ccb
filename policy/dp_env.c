#include "dp_env.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

dp_env *dp_env_alloc(const dp_graph *g, const dp_costs *c, dp_error *err)
{
    dp_env *env = calloc(1, sizeof *env);
    if (!env) goto nomem;
    const int n = g->n_ops, D = c->n_devices;
    env->g = g;
    env->c = c;
    env->n_ops = n;
    env->n_devices = D;
    env->assignment = dp_malloc_n(n, sizeof(int));
    env->order = dp_malloc_n(n, sizeof(int));
    env->ready = dp_malloc_n(n, sizeof(int));
    env->ready_pos = dp_malloc_n(n, sizeof(int));
    env->unassigned_preds = dp_malloc_n(n, sizeof(int));
    env->est_start = dp_malloc_n(n, sizeof(double));
    env->est_end = dp_malloc_n(n, sizeof(double));
    env->dev_avail = dp_malloc_n(D, sizeof(double));
    env->dev_work = dp_malloc_n(D, sizeof(double));
    env->blevel = dp_malloc_n(n, sizeof(double));
    env->tlevel = dp_malloc_n(n, sizeof(double));
    if (!env->assignment || !env->order || !env->ready || !env->ready_pos || !env->unassigned_preds || !env->est_start ||
        !env->est_end || !env->dev_avail || !env->dev_work || !env->blevel || !env->tlevel)
        goto nomem;
    dp_costs_levels(g, c, env->blevel, env->tlevel);
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
    free(env->blevel); free(env->tlevel);
    free(env);
}

/* ---- the ready set ordered by b-level: a binary max-heap on (blevel, -id) ----
 * ready_pos[v] follows every move so that any ready op (not only the top) can be removed. */

static inline int heap_above(const dp_env *env, int a, int b)
{
    const double ba = env->blevel[a], bb = env->blevel[b];
    return ba > bb || (ba == bb && a < b);
}

static void heap_place(dp_env *env, int i, int v)
{
    env->ready[i] = v;
    env->ready_pos[v] = i;
}

static void heap_sift_up(dp_env *env, int i)
{
    int v = env->ready[i];
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!heap_above(env, v, env->ready[p])) break;
        heap_place(env, i, env->ready[p]);
        i = p;
    }
    heap_place(env, i, v);
}

static void heap_sift_down(dp_env *env, int i)
{
    const int n = env->n_ready;
    int v = env->ready[i];
    for (;;) {
        int l = 2 * i + 1;
        if (l >= n) break;
        int r = l + 1;
        int c = (r < n && heap_above(env, env->ready[r], env->ready[l])) ? r : l;
        if (!heap_above(env, env->ready[c], v)) break;
        heap_place(env, i, env->ready[c]);
        i = c;
    }
    heap_place(env, i, v);
}

static void ready_remove_at(dp_env *env, int idx)
{
    if (env->ready_order == DP_ENV_READY_BY_ID) {
        memmove(env->ready + idx, env->ready + idx + 1, (size_t)(env->n_ready - idx - 1) * sizeof(int));
        env->n_ready--;
        return;
    }
    int v = env->ready[idx], last = env->ready[--env->n_ready];
    env->ready_pos[v] = -1;
    if (idx == env->n_ready) return;
    heap_place(env, idx, last);
    heap_sift_up(env, idx);
    heap_sift_down(env, env->ready_pos[last]);
}

/* insert v keeping the order */
static void ready_insert(dp_env *env, int v)
{
    int i = env->n_ready++;
    if (env->ready_order == DP_ENV_READY_BY_BLEVEL) {
        heap_place(env, i, v);
        heap_sift_up(env, i);
        return;
    }
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
        env->est_start[v] = env->est_end[v] = 0;
        env->ready_pos[v] = -1;
    }
    for (int d = 0; d < env->n_devices; d++) env->dev_avail[d] = env->dev_work[d] = 0;
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
    dp_env_reset(env);
}

double dp_env_est_start(const dp_env *env, int v, int d)
{
    const dp_graph *g = env->g;
    double t = env->dev_avail[d];
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        int e = g->pred_edge[q], u = g->edge_src[e];
        double a = env->est_end[u] + dp_costs_comm(env->c, e, env->assignment[u], d);
        if (a > t) t = a;
    }
    return t;
}

int dp_env_ready_index(const dp_env *env, int v)
{
    if (v < 0 || v >= env->n_ops) return -1;
    if (env->ready_order == DP_ENV_READY_BY_BLEVEL) return env->ready_pos[v];
    int lo = 0, hi = env->n_ready - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (env->ready[mid] == v) return mid;
        if (env->ready[mid] < v) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

int dp_env_step(dp_env *env, int v, int d, dp_error *err)
{
    const dp_graph *g = env->g;
    int idx = (v >= 0 && v < env->n_ops) ? dp_env_ready_index(env, v) : -1;
    if (idx < 0) return dp_error_set(err, DP_EINVAL, "op %d is not in the ready set", v);
    if (d < 0 || d >= env->n_devices)
        return dp_error_set(err, DP_EINVAL, "device %d out of range 0..%d", d, env->n_devices - 1);
    double st = dp_env_est_start(env, v, d);
    double dur = dp_costs_op(env->c, v, d);
    env->assignment[v] = d;
    env->order[env->step++] = v;
    env->est_start[v] = st;
    env->est_end[v] = st + dur;
    env->dev_avail[d] = st + dur;
    env->dev_work[d] += dur;
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
    int best = -1;
    double bl = -INFINITY;
    for (int i = 0; i < env->n_ready; i++) {
        int v = env->ready[i];
        if (env->blevel[v] > bl) { bl = env->blevel[v]; best = v; }
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

int dp_env_cp_select_all(const dp_env *env, unsigned char *marks)
{
    double bl = -INFINITY;
    for (int i = 0; i < env->n_ready; i++)
        if (env->blevel[env->ready[i]] > bl) bl = env->blevel[env->ready[i]];
    int k = 0;
    for (int i = 0; i < env->n_ready; i++) {
        marks[i] = close_enough(env->blevel[env->ready[i]], bl);
        k += marks[i];
    }
    return k;
}

int dp_env_cp_place_all(const dp_env *env, int v, unsigned char *marks)
{
    double t = INFINITY;
    double *s = malloc((size_t)env->n_devices * sizeof *s);
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

void dp_env_device_features(const dp_env *env, int v, double *feat)
{
    const dp_graph *g = env->g;
    const int D = env->n_devices, F = DP_ENV_N_DEVICE_FEATURES;
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
        f[1] += dp_costs_op(env->c, u, d);
        if (env->est_start[u] < f[2]) f[2] = env->est_start[u];
        if (env->est_end[u] > f[3]) f[3] = env->est_end[u];
    }
    for (int d = 0; d < D; d++)
        if (feat[(size_t)d * F + 2] == INFINITY) feat[(size_t)d * F + 2] = 0;
}
