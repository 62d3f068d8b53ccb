/* dp_list.c: HEFT, CPOP, PEFT and ETF (see dp_list.h). */
#define _GNU_SOURCE /* qsort_r */
#include "dp_list.h"
#include "dp_alloc.h"
#include "dp_heap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

dp_list_schedule *dp_list_schedule_alloc(int n_ops, int n_devices)
{
    if (n_ops < 1 || n_devices < 1) return NULL;
    dp_list_schedule *s = dp_alloc_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->n_ops = n_ops;
    s->n_devices = n_devices;
    s->device = dp_alloc_malloc_n(n_ops, sizeof(int));
    s->start = dp_alloc_malloc_n(n_ops, sizeof(double));
    s->finish = dp_alloc_malloc_n(n_ops, sizeof(double));
    s->priority = dp_alloc_malloc_n(n_ops, sizeof(double));
    s->order = dp_alloc_malloc_n(n_ops, sizeof(int));
    s->dev_ops = dp_alloc_calloc((size_t)n_devices, sizeof *s->dev_ops);
    s->dev_n = dp_alloc_calloc((size_t)n_devices, sizeof(int));
    s->dev_cap = dp_alloc_calloc((size_t)n_devices, sizeof(int));
    if (!s->device || !s->start || !s->finish || !s->priority || !s->order || !s->dev_ops || !s->dev_n || !s->dev_cap) {
        dp_list_schedule_free(s);
        return NULL;
    }
    return s;
}

void dp_list_schedule_free(dp_list_schedule *s)
{
    if (!s) return;
    free(s->device); free(s->start); free(s->finish); free(s->priority); free(s->order);
    for (int d = 0; s->dev_ops && d < s->n_devices; d++) free(s->dev_ops[d]);
    free(s->dev_ops); free(s->dev_n); free(s->dev_cap);
    free(s);
}

/* ---------------- mean costs and ranks ---------------- */

void dp_list_mean_comm(const dp_graph *g, const dp_cost *c, double *cbar)
{
    const int D = c->n_devices;
    if (D < 2) {
        for (int e = 0; e < g->n_edges; e++) cbar[e] = 0;
        return;
    }
    double lat = 0, rate = 0;
    int infinite = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b) continue;
            size_t k = (size_t)a * D + b;
            lat += c->latency[k];
            if (c->inv_bw[k] > 0) rate += 1.0 / c->inv_bw[k];
            else infinite = 1;
        }
    const double pairs = (double)D * (D - 1);
    lat /= pairs;
    const double inv_rate = infinite ? 0.0 : pairs / rate;
    for (int e = 0; e < g->n_edges; e++) cbar[e] = lat + c->edge_data[e] * inv_rate;
}

static double *mean_ops(const dp_graph *g, const dp_cost *c)
{
    double *w = dp_alloc_malloc_n(g->n_ops, sizeof(double));
    if (w)
        for (int v = 0; v < g->n_ops; v++) w[v] = dp_cost_mean_op(c, v);
    return w;
}

/* rank_u given mean op times w and mean comm cbar */
static void rank_up(const dp_graph *g, const double *w, const double *cbar, double *r)
{
    for (int k = g->n_ops - 1; k >= 0; k--) {
        int v = g->topo[k];
        double best = 0;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
            double x = cbar[e] + r[g->edge_dst[e]];
            if (x > best) best = x;
        }
        r[v] = w[v] + best;
    }
}

static void rank_down(const dp_graph *g, const double *w, const double *cbar, double *r)
{
    for (int k = 0; k < g->n_ops; k++) {
        int v = g->topo[k];
        double best = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int e = g->pred_edge[q], u = g->edge_src[e];
            double x = r[u] + w[u] + cbar[e];
            if (x > best) best = x;
        }
        r[v] = best;
    }
}

void dp_list_rank_upward(const dp_graph *g, const dp_cost *c, double *rank_u)
{
    double *w = mean_ops(g, c), *cbar = dp_alloc_malloc_n(g->n_edges > 0 ? g->n_edges : 1, sizeof(double));
    if (w && cbar) {
        dp_list_mean_comm(g, c, cbar);
        rank_up(g, w, cbar, rank_u);
    }
    free(w);
    free(cbar);
}

void dp_list_rank_downward(const dp_graph *g, const dp_cost *c, double *rank_d)
{
    double *w = mean_ops(g, c), *cbar = dp_alloc_malloc_n(g->n_edges > 0 ? g->n_edges : 1, sizeof(double));
    if (w && cbar) {
        dp_list_mean_comm(g, c, cbar);
        rank_down(g, w, cbar, rank_d);
    }
    free(w);
    free(cbar);
}

static void oct_table(const dp_graph *g, const dp_cost *c, const double *cbar, double *oct)
{
    const int D = c->n_devices;
    for (int k = g->n_ops - 1; k >= 0; k--) {
        int v = g->topo[k];
        for (int p = 0; p < D; p++) {
            double worst = 0;
            for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
                int x = g->edge_dst[e];
                double best = INFINITY;
                for (int q = 0; q < D; q++) {
                    double y = oct[(size_t)x * D + q] + dp_cost_op(c, x, q) + (q != p ? cbar[e] : 0.0);
                    if (y < best) best = y;
                }
                if (best > worst) worst = best;
            }
            oct[(size_t)v * D + p] = worst;
        }
    }
}

void dp_list_oct(const dp_graph *g, const dp_cost *c, double *oct)
{
    double *cbar = dp_alloc_malloc_n(g->n_edges > 0 ? g->n_edges : 1, sizeof(double));
    if (!cbar) return;
    dp_list_mean_comm(g, c, cbar);
    oct_table(g, c, cbar, oct);
    free(cbar);
}

/* ---------------- the ready set: a binary heap by (key desc, id asc) ---------------- */

/* ctx is the key array (the priorities): higher first, then the lower op id */
#define RH_BEFORE(key, x, y) ((key)[x] > (key)[y] || ((key)[x] == (key)[y] && (x) < (y)))
DP_HEAP_DEFINE(ready_heap, int, const double *, RH_BEFORE, DP_HEAP_NO_INDEX)

/* The other tie order (ties == DP_LIST_TIES_HEAP): a binary heap ordered by priority alone, run
 * as LLVM libc++'s std::priority_queue runs one (the standard library of nedjulius/heft-cpop-
 * simulator's published outputs, which GNU libstdc++'s heap does not reproduce): a push moves up
 * past strictly smaller parents; a pop moves the hole from the root down to a leaf, each time to
 * the larger child (the left one when the two are equal), then fills the hole with the last
 * element and moves that up past strictly smaller parents. Among equal priorities the order is
 * this heap's, not the ids'. It is not the library's heap (sim/dp_heap.h) on purpose: its pop
 * and its tie order are another library's. */
static void libcxx_push(const double *key, int *a, int *n, int v)
{
    int i = (*n)++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!(key[a[p]] < key[v])) break;
        a[i] = a[p];
        i = p;
    }
    a[i] = v;
}

static int libcxx_pop(const double *key, int *a, int *n)
{
    int top = a[0], len = *n, hole = 0;
    for (;;) {
        int child = 2 * hole + 1;
        if (child >= len) break;
        if (child + 1 < len && key[a[child]] < key[a[child + 1]]) child++;
        a[hole] = a[child];
        hole = child;
    }
    int last = --*n;
    if (hole != last) {
        int x = a[last];
        while (hole > 0) {
            int p = (hole - 1) / 2;
            if (!(key[a[p]] < key[x])) break;
            a[hole] = a[p];
            hole = p;
        }
        a[hole] = x;
    }
    return top;
}

/* the ready set of either tie order */
static inline void ready_push(int libcxx, const double *key, int *a, int *n, int v)
{
    if (libcxx) libcxx_push(key, a, n, v);
    else ready_heap_push(key, a, n, v);
}

static inline int ready_pop(int libcxx, const double *key, int *a, int *n)
{
    return libcxx ? libcxx_pop(key, a, n) : ready_heap_pop(key, a, n);
}

/* ---------------- device timelines ---------------- */

static void timelines_reset(dp_list_schedule *s)
{
    for (int d = 0; d < s->n_devices; d++) s->dev_n[d] = 0;
    for (int v = 0; v < s->n_ops; v++) s->device[v] = -1;
    s->makespan = 0;
}

/* Earliest start >= ready of an op of duration dur on device d, in the first idle gap that holds
 * it (insertion) or after the last op (append only). *pos gets its index in the device's ops.
 * The gaps are visited in start order as before, but those before the first op x with start[x]
 * < ready + dur are skipped by binary search: no such gap can hold the op (its start would be at
 * least ready, and rounding is monotonic), so the slot is the one the full walk finds, and a
 * device of k ops costs O(log k) when the op goes at its end (a chain: it was O(k), O(n^2) in
 * all: a 10^6-op chain did not finish in 10 minutes). */
static double find_slot(const dp_list_schedule *s, int d, double ready, double dur, int insertion, int *pos)
{
    const int *a = s->dev_ops[d], k = s->dev_n[d];
    int i = k;
    if (insertion) {
        const double lim = ready + dur;
        int lo = 0, hi = k;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (s->start[a[mid]] < lim) lo = mid + 1;
            else hi = mid;
        }
        double free_from = lo > 0 ? s->finish[a[lo - 1]] : 0;
        for (i = lo; i < k; i++) {
            double st = ready > free_from ? ready : free_from;
            if (st + dur <= s->start[a[i]]) { *pos = i; return st; }
            free_from = s->finish[a[i]];
        }
    }
    double free_from = k > 0 ? s->finish[a[k - 1]] : 0;
    *pos = k;
    return ready > free_from ? ready : free_from;
}

/* Put v on device d at index pos of its ops. DP_OK or DP_ENOMEM. */
static int place_op(dp_list_schedule *s, int v, int d, double st, double dur, int pos, int step)
{
    if (s->dev_n[d] == s->dev_cap[d]) {
        int cap = s->dev_cap[d] ? 2 * s->dev_cap[d] : 64;
        if (cap > s->n_ops) cap = s->n_ops;
        int *a = dp_alloc_realloc(s->dev_ops[d], (size_t)cap * sizeof *a);
        if (!a) return DP_ENOMEM;
        s->dev_ops[d] = a;
        s->dev_cap[d] = cap;
    }
    int *a = s->dev_ops[d];
    memmove(a + pos + 1, a + pos, (size_t)(s->dev_n[d] - pos) * sizeof *a);
    a[pos] = v;
    s->dev_n[d]++;
    s->device[v] = d;
    s->start[v] = st;
    s->finish[v] = st + dur;
    s->order[step] = v;
    if (s->finish[v] > s->makespan) s->makespan = s->finish[v];
    return DP_OK;
}

/* When v's inputs are all available on device d (inputs' finish plus transfer). */
static double data_ready(const dp_graph *g, const dp_cost *c, const dp_list_schedule *s, int v, int d)
{
    double t = 0;
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        int e = g->pred_edge[q], u = g->edge_src[e];
        double a = s->finish[u] + dp_cost_comm(c, e, s->device[u], d);
        if (a > t) t = a;
    }
    return t;
}

static int check_args(const dp_graph *g, const dp_cost *c, const dp_list_schedule *s, dp_error *err)
{
    if (c->n_ops != g->n_ops || c->n_edges != g->n_edges)
        return dp_error_set(err, DP_EINVAL, "%s: cost tables do not match the graph", g->source);
    if (s->n_ops != g->n_ops || s->n_devices != c->n_devices)
        return dp_error_set(err, DP_EINVAL, "%s: schedule sized for %d ops on %d devices, need %d on %d", g->source,
                            s->n_ops, s->n_devices, g->n_ops, c->n_devices);
    return DP_OK;
}

/* The insertion-based list scheduler shared by HEFT, CPOP and PEFT: ready ops by decreasing
 * priority; device = argmin over d of EFT(v, d) + bias[v][d] (bias NULL: 0), except that ops with
 * fixed[v] >= 0 go to that device. */
static int list_insertion(const dp_graph *g, const dp_cost *c, dp_list_schedule *s, const double *bias,
                          const int *fixed, dp_error *err)
{
    const int n = g->n_ops, D = c->n_devices;
    int *waiting = dp_alloc_malloc_n(n, sizeof(int));
    int *ready = dp_alloc_malloc_n(n, sizeof(int)), n_ready = 0;
    if (!waiting || !ready) {
        free(waiting); free(ready);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the list scheduler", g->source);
    }
    timelines_reset(s);
    const int std_heap = s->ties == DP_LIST_TIES_HEAP;
    for (int v = 0; v < n; v++) {
        waiting[v] = g->pred_ptr[v + 1] - g->pred_ptr[v];
        if (waiting[v] == 0) ready_push(std_heap, s->priority, ready, &n_ready, v);
    }
    for (int step = 0; step < n; step++) {
        int v = ready_pop(std_heap, s->priority, ready, &n_ready);
        int best_d = -1, best_pos = -1;
        double best_obj = INFINITY, best_st = 0;
        int lo = 0, hi = D;
        if (fixed && fixed[v] >= 0) { lo = fixed[v]; hi = lo + 1; }
        for (int d = lo; d < hi; d++) {
            double dur = dp_cost_op(c, v, d);
            int pos;
            double st = find_slot(s, d, data_ready(g, c, s, v, d), dur, !s->append_only, &pos);
            double obj = st + dur + (bias ? bias[(size_t)v * D + d] : 0.0);
            if (obj < best_obj || best_d < 0) { best_obj = obj; best_d = d; best_st = st; best_pos = pos; }
        }
        if (place_op(s, v, best_d, best_st, dp_cost_op(c, v, best_d), best_pos, step) != DP_OK) {
            free(waiting); free(ready);
            return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the list scheduler", g->source);
        }
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
            if (--waiting[g->edge_dst[e]] == 0) ready_push(std_heap, s->priority, ready, &n_ready, g->edge_dst[e]);
    }
    free(waiting);
    free(ready);
    return DP_OK;
}

/* mean op times and mean comm, allocated together */
static int means(const dp_graph *g, const dp_cost *c, double **w, double **cbar, dp_error *err)
{
    *w = mean_ops(g, c);
    *cbar = dp_alloc_malloc_n(g->n_edges > 0 ? g->n_edges : 1, sizeof(double));
    if (!*w || !*cbar) {
        free(*w); free(*cbar);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the ranks", g->source);
    }
    dp_list_mean_comm(g, c, *cbar);
    return DP_OK;
}

int dp_list_heft(const dp_graph *g, const dp_cost *c, dp_list_schedule *s, dp_error *err)
{
    int rc = check_args(g, c, s, err);
    if (rc != DP_OK) return rc;
    double *w, *cbar;
    if ((rc = means(g, c, &w, &cbar, err)) != DP_OK) return rc;
    rank_up(g, w, cbar, s->priority);
    free(w);
    free(cbar);
    return list_insertion(g, c, s, NULL, NULL, err);
}

static inline int close_rel(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

int dp_list_cpop(const dp_graph *g, const dp_cost *c, dp_list_schedule *s, dp_error *err)
{
    int rc = check_args(g, c, s, err);
    if (rc != DP_OK) return rc;
    const int n = g->n_ops, D = c->n_devices;
    double *w, *cbar;
    if ((rc = means(g, c, &w, &cbar, err)) != DP_OK) return rc;
    double *rd = dp_alloc_malloc_n(n, sizeof(double));
    int *fixed = dp_alloc_malloc_n(n, sizeof(int));
    double *cp_work = dp_alloc_calloc_n(D, sizeof(double));
    if (!rd || !fixed || !cp_work) {
        rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory for CPOP", g->source);
        goto done;
    }
    rank_up(g, w, cbar, s->priority);
    rank_down(g, w, cbar, rd);
    for (int v = 0; v < n; v++) { s->priority[v] += rd[v]; fixed[v] = -1; }
    /* the critical path: from the entry of highest priority, along successors of equal priority */
    int v = g->sources[0];
    for (int i = 1; i < g->n_sources; i++)
        if (s->priority[g->sources[i]] > s->priority[v]) v = g->sources[i];
    const double cp_len = s->priority[v];
    int n_cp = 0;
    while (v >= 0) {
        fixed[v] = 0; /* marks "on the path"; the device is chosen below */
        n_cp++;
        for (int d = 0; d < D; d++) cp_work[d] += dp_cost_op(c, v, d);
        int nxt = -1, fallback = -1;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
            int x = g->edge_dst[e];
            if (close_rel(s->priority[x], cp_len) && (nxt < 0 || x < nxt)) nxt = x;
            if (fallback < 0 || s->priority[x] > s->priority[fallback] ||
                (s->priority[x] == s->priority[fallback] && x < fallback))
                fallback = x;
        }
        /* rounding can leave no successor exactly at |CP|: follow the highest one */
        v = nxt >= 0 ? nxt : fallback;
        if (n_cp > n) break; /* cannot happen in a DAG; a guard against a corrupt graph */
    }
    int cp_dev = 0;
    for (int d = 1; d < D; d++)
        if (cp_work[d] < cp_work[cp_dev]) cp_dev = d;
    for (int u = 0; u < n; u++) fixed[u] = fixed[u] == 0 ? cp_dev : -1;
    rc = list_insertion(g, c, s, NULL, fixed, err);
done:
    free(w); free(cbar); free(rd); free(fixed); free(cp_work);
    return rc;
}

int dp_list_peft(const dp_graph *g, const dp_cost *c, dp_list_schedule *s, dp_error *err)
{
    int rc = check_args(g, c, s, err);
    if (rc != DP_OK) return rc;
    const int n = g->n_ops, D = c->n_devices;
    size_t nd;
    if (dp_alloc_size_mul((size_t)n, (size_t)D, &nd) != DP_OK) return dp_error_set(err, DP_ENOMEM, "%s: OCT too large", g->source);
    double *oct = dp_alloc_malloc_n(nd, sizeof(double));
    double *cbar = dp_alloc_malloc_n(g->n_edges > 0 ? g->n_edges : 1, sizeof(double));
    if (!oct || !cbar) {
        free(oct); free(cbar);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory for PEFT's cost table", g->source);
    }
    dp_list_mean_comm(g, c, cbar);
    oct_table(g, c, cbar, oct);
    for (int v = 0; v < n; v++) {
        double sum = 0;
        for (int d = 0; d < D; d++) sum += oct[(size_t)v * D + d];
        s->priority[v] = sum / D;
    }
    rc = list_insertion(g, c, s, oct, NULL, err);
    free(oct);
    free(cbar);
    return rc;
}

int dp_list_etf(const dp_graph *g, const dp_cost *c, dp_list_schedule *s, dp_error *err)
{
    int rc = check_args(g, c, s, err);
    if (rc != DP_OK) return rc;
    const int n = g->n_ops, D = c->n_devices;
    int *waiting = dp_alloc_malloc_n(n, sizeof(int));
    int *ready = dp_alloc_malloc_n(n, sizeof(int));
    int *tail = dp_alloc_malloc_n(D, sizeof(int));
    double *avail = dp_alloc_calloc_n(D, sizeof(double));
    if (!waiting || !ready || !tail || !avail) {
        rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory for ETF", g->source);
        goto done;
    }
    /* static level: longest path to a sink by mean op time, no communication */
    for (int k = n - 1; k >= 0; k--) {
        int v = g->topo[k];
        double best = 0;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
            if (s->priority[g->edge_dst[e]] > best) best = s->priority[g->edge_dst[e]];
        s->priority[v] = dp_cost_mean_op(c, v) + best;
    }
    timelines_reset(s);
    for (int d = 0; d < D; d++) tail[d] = -1;
    int n_ready = 0;
    for (int v = 0; v < n; v++) {
        waiting[v] = g->pred_ptr[v + 1] - g->pred_ptr[v];
        if (waiting[v] == 0) ready[n_ready++] = v;
    }
    for (int step = 0; step < n; step++) {
        int bi = -1, bd = -1;
        double bst = INFINITY;
        for (int i = 0; i < n_ready; i++) {
            int v = ready[i];
            for (int d = 0; d < D; d++) {
                double st = data_ready(g, c, s, v, d);
                if (avail[d] > st) st = avail[d];
                int better;
                if (bi < 0 || st < bst) better = 1;
                else if (st > bst) better = 0;
                else {
                    int bv = ready[bi];
                    if (s->priority[v] != s->priority[bv]) better = s->priority[v] > s->priority[bv];
                    else if (v != bv) better = v < bv;
                    else better = d < bd;
                }
                if (better) { bi = i; bd = d; bst = st; }
            }
        }
        int v = ready[bi];
        ready[bi] = ready[--n_ready];
        if (place_op(s, v, bd, bst, dp_cost_op(c, v, bd), s->dev_n[bd], step) != DP_OK) {
            rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory for the list scheduler", g->source);
            goto done;
        }
        tail[bd] = v;
        avail[bd] = s->finish[v];
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
            if (--waiting[g->edge_dst[e]] == 0) ready[n_ready++] = g->edge_dst[e];
    }
done:
    free(waiting); free(ready); free(tail); free(avail);
    return rc;
}

/* ---------------- feasibility ---------------- */

static int by_start(const void *pa, const void *pb, void *arg)
{
    const int a = *(const int *)pa, b = *(const int *)pb;
    const dp_list_schedule *s = arg;
    if (s->start[a] != s->start[b]) return s->start[a] < s->start[b] ? -1 : 1;
    if (s->finish[a] != s->finish[b]) return s->finish[a] < s->finish[b] ? -1 : 1;
    return (a > b) - (a < b);
}

static inline int later(double a, double b)
{
    return a > b + 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

int dp_list_check(const dp_graph *g, const dp_cost *c, const dp_list_schedule *s, dp_error *err)
{
    const int n = g->n_ops, D = c->n_devices;
    for (int v = 0; v < n; v++) {
        int d = s->device[v];
        if (d < 0 || d >= D) return dp_error_set(err, DP_EINVAL, "schedule: op %s has device %d", g->op_name[v], d);
        double dur = dp_cost_op(c, v, d);
        if (later(s->finish[v], s->start[v] + dur) || later(s->start[v] + dur, s->finish[v]) || s->start[v] < 0)
            return dp_error_set(err, DP_EINVAL, "schedule: op %s runs %g..%g but takes %g on device %d", g->op_name[v],
                                s->start[v], s->finish[v], dur, d);
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int e = g->pred_edge[q], u = g->edge_src[e];
            double arrive = s->finish[u] + dp_cost_comm(c, e, s->device[u], d);
            if (later(arrive, s->start[v]))
                return dp_error_set(err, DP_EINVAL, "schedule: op %s starts at %g before its input from %s arrives at %g",
                                    g->op_name[v], s->start[v], g->op_name[u], arrive);
        }
    }
    /* overlap: sort the ops of each device by start, then finish, then id (what the insertion
     * sort used here gave, in O(n log n): it was O(n^2) on a device's ops out of start order) */
    int *idx = dp_alloc_malloc_n(n, sizeof(int));
    if (!idx) return dp_error_set(err, DP_ENOMEM, "out of memory");
    int rc = DP_OK;
    for (int d = 0; d < D && rc == DP_OK; d++) {
        int k = 0;
        for (int v = 0; v < n; v++)
            if (s->device[v] == d) idx[k++] = v;
        qsort_r(idx, (size_t)k, sizeof *idx, by_start, (void *)s);
        for (int i = 1; i < k; i++)
            if (later(s->finish[idx[i - 1]], s->start[idx[i]])) {
                rc = dp_error_set(err, DP_EINVAL, "schedule: ops %s and %s overlap on device %d", g->op_name[idx[i - 1]],
                                  g->op_name[idx[i]], d);
                break;
            }
    }
    free(idx);
    return rc;
}

/* ---------------- as placement methods ---------------- */

typedef int (*list_fn)(const dp_graph *, const dp_cost *, dp_list_schedule *, dp_error *);

static int place_with(list_fn fn, const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                      double *priority, int *has_priority, dp_error *err)
{
    /* the caller's schedule when it wants it (dp_place_options.list_schedule_out), else one of
     * our own */
    dp_list_schedule *s = o && o->list_schedule_out ? o->list_schedule_out : dp_list_schedule_alloc(g->n_ops, c->n_devices);
    if (!s) return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the schedule", g->source);
    if (o) {
        s->append_only = o->list_append_only != 0;
        s->ties = o->list_ties == DP_LIST_TIES_HEAP ? DP_LIST_TIES_HEAP : DP_LIST_TIES_ID;
    }
    int rc = fn(g, c, s, err);
    if (rc == DP_OK) {
        memcpy(assignment, s->device, (size_t)g->n_ops * sizeof(int));
        if (priority) memcpy(priority, s->priority, (size_t)g->n_ops * sizeof(double));
        if (has_priority) *has_priority = 1;
    }
    if (!o || s != o->list_schedule_out) dp_list_schedule_free(s);
    return rc;
}

int dp_list_place_heft(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                  double *priority, int *has_priority, dp_error *err)
{
    return place_with(dp_list_heft, g, c, o, assignment, priority, has_priority, err);
}

int dp_list_place_cpop(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                  double *priority, int *has_priority, dp_error *err)
{
    return place_with(dp_list_cpop, g, c, o, assignment, priority, has_priority, err);
}

int dp_list_place_peft(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                  double *priority, int *has_priority, dp_error *err)
{
    return place_with(dp_list_peft, g, c, o, assignment, priority, has_priority, err);
}

int dp_list_place_etf(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                 double *priority, int *has_priority, dp_error *err)
{
    return place_with(dp_list_etf, g, c, o, assignment, priority, has_priority, err);
}
