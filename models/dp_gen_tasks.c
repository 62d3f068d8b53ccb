/* dp_gen_tasks.c: task-graph generators of the scheduling literature (dp_gen.h): Kasahara's STG
 * methods, Topcuoglu's layered DAGs, fork-join, series-parallel and workflow shapes. All cost
 * edges by DOPPLER's rule (ccr x the producer's work), as the DAGGEN generator in dp_gen.c. */
#include "dp_gen.h"
#include "dp_alloc.h"

#include <gsl/gsl_rng.h>
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A task graph under construction: the builder, the generator and the first fault. */
typedef struct tg {
    const char *model;
    dp_graph_builder *b;
    gsl_rng *r;
    double ccr;
    int min_work, max_work;
    long long n_edges;
    int failed;
    dp_error *err;
} tg;

/* the options every task generator shares: DP_OK or DP_EINVAL naming the option */
static int check_common(const char *model, double ccr, int min_work, int max_work, dp_error *err)
{
    if (!(ccr >= 0 && ccr <= 1e12)) return dp_gen_option_error(err, model, "ccr", 0, 1e12);
    if (min_work < 0 || max_work < min_work)
        return dp_error_set(err, DP_EINVAL, "%s: need 0 <= min-work <= max-work, got %d and %d", model, min_work, max_work);
    return DP_OK;
}

static int tg_begin(tg *t, const char *model, const char *name, double ccr, int min_work, int max_work,
                    unsigned long seed, dp_error *err)
{
    memset(t, 0, sizeof *t);
    t->model = model;
    t->ccr = ccr;
    t->min_work = min_work;
    t->max_work = max_work;
    t->err = err;
    t->b = dp_graph_builder_alloc(name, name, DP_GRAPH_COST_TIME);
    t->r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!t->b || !t->r) {
        dp_graph_builder_free(t->b);
        gsl_rng_free(t->r);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory", model);
    }
    gsl_rng_set(t->r, seed);
    return DP_OK;
}

/* a builder refusal (memory check, dp_graph_builder_error) or plain out of memory */
static void tg_builder_fault(tg *t)
{
    const dp_error *me = dp_graph_builder_error(t->b);
    if (me->code != DP_OK) dp_error_set(t->err, me->code, "%s", me->msg);
    else dp_error_set(t->err, DP_ENOMEM, "%s: out of memory", t->model);
    t->failed = 1;
}

/* a work drawn uniform in [min_work, max_work] */
static double tg_work(tg *t)
{
    return t->min_work + (double)gsl_rng_uniform_int(t->r, (unsigned long)(t->max_work - t->min_work) + 1);
}

static int tg_task(tg *t, const char *name, const char *kind, double work)
{
    if (t->failed) return -1;
    int id = dp_graph_builder_add_op(t->b, name, kind, work, t->ccr * work);
    if (id < 0) tg_builder_fault(t);
    return id;
}

static void tg_edge(tg *t, int u, int v)
{
    if (t->failed) return;
    if (++t->n_edges > DP_GEN_MAX_EDGES) {
        dp_error_set(t->err, DP_EINVAL, "%s: more than %d edges (the generators' limit)", t->model, DP_GEN_MAX_EDGES);
        t->failed = 1;
        return;
    }
    if (dp_graph_builder_add_edge(t->b, u, v, 0) < 0) tg_builder_fault(t);
}

/* Build, cost every edge u -> v with u's output (ccr x work(u)) and free the machinery. */
static dp_graph *tg_finish(tg *t)
{
    dp_graph *g = t->failed ? NULL : dp_graph_builder_finish(t->b, t->err);
    if (g) for (int e = 0; e < g->n_edges; e++) g->edge_size[e] = g->out_size[g->edge_src[e]];
    dp_graph_builder_free(t->b);
    gsl_rng_free(t->r);
    return g;
}

/* k distinct values of [0, c) in increasing order into out (Floyd's algorithm; mark[] holds tag
 * for the values taken, and must not hold it for any value before the call). k <= c. */
static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void choose_distinct(gsl_rng *r, int c, int k, int *mark, int tag, int *out)
{
    int n = 0;
    for (int i = c - k; i < c; i++) {
        int x = (int)gsl_rng_uniform_int(r, (unsigned long)i + 1);
        if (mark[x] == tag) x = i;
        mark[x] = tag;
        out[n++] = x;
    }
    qsort(out, (size_t)n, sizeof *out, cmp_int);
}

/* a predecessor count: uniform real in [0, 2 mean] rounded up with probability its fraction */
static int draw_count(gsl_rng *r, double mean)
{
    double x = 2.0 * mean * gsl_rng_uniform(r);
    int k = (int)floor(x);
    if (gsl_rng_uniform(r) < x - k) k++;
    return k;
}

/* ---------------- STG (Tobita and Kasahara 2002) ---------------- */

void dp_gen_stg_defaults(dp_gen_stg_opts *o)
{
    o->n = 100;
    o->method = 0;
    o->degree = 2.0;
    o->layers = 0;
    o->ccr = 1.0;
    o->min_work = 1;
    o->max_work = 10;
    o->seed = 1;
}

dp_graph *dp_gen_stg(const dp_gen_stg_opts *o, dp_error *err)
{
    static const char *const methods[] = {"sameprob", "samepred", "layrprob", "layrpred"};
    if (o->n < 2 || o->n > 1000000) { dp_gen_option_error(err, "stg", "n", 2, 1000000); return NULL; }
    if (o->method < 0 || o->method > 3) { dp_gen_option_error(err, "stg", "method", 0, 3); return NULL; }
    if (!(o->degree >= 0 && o->degree <= 100)) { dp_gen_option_error(err, "stg", "degree", 0, 100); return NULL; }
    if (o->layers < 0 || o->layers > o->n) { dp_gen_option_error(err, "stg", "layers", 0, o->n); return NULL; }
    /* sameprob and samepred have no layers: --layers 5 gave the graph without it, under a name
     * without it (a review of the generators) */
    if (o->layers != 0 && o->method < 2) {
        dp_error_set(err, DP_EINVAL, "stg: layers %d does not apply to method %s (layrprob and layrpred only)", o->layers,
                     o->method == 0 ? "sameprob" : "samepred");
        return NULL;
    }
    if (check_common("stg", o->ccr, o->min_work, o->max_work, err) != DP_OK) return NULL;
    const int layered = o->method >= 2, by_prob = o->method == 0 || o->method == 2;
    const int n_layers = o->layers ? o->layers : (int)floor(sqrt((double)o->n));
    char name[192];
    snprintf(name, sizeof name, "stg_%s_n%d_deg%g%s_ccr%g_seed%lu", methods[o->method], o->n, o->degree,
             layered ? "_layered" : "", o->ccr, o->seed);
    tg t;
    if (tg_begin(&t, "stg", name, o->ccr, o->min_work, o->max_work, o->seed, err) != DP_OK) return NULL;
    int *cand = dp_alloc_malloc_n((size_t)o->n, sizeof(int));   /* tasks before cand[j] may precede j */
    int *mark = dp_alloc_malloc_n((size_t)o->n, sizeof(int));
    int *pick = dp_alloc_malloc_n((size_t)o->n, sizeof(int));
    int *lsize = dp_alloc_malloc_n((size_t)n_layers + 1, sizeof(int));
    if (!cand || !mark || !pick || !lsize) { dp_error_set(err, DP_ENOMEM, "stg: out of memory"); t.failed = 1; goto done; }
    for (int v = 0; v < o->n; v++) {
        char nm[24];
        snprintf(nm, sizeof nm, "%d", v + 1);  /* the STG numbers real tasks 1..n */
        tg_task(&t, nm, "task", tg_work(&t));
        mark[v] = -1;
    }
    if (layered) {
        /* each task in a uniform layer; ids in layer order, so a layer is a range of ids */
        for (int l = 0; l <= n_layers; l++) lsize[l] = 0;
        for (int v = 0; v < o->n; v++) lsize[gsl_rng_uniform_int(t.r, (unsigned long)n_layers)]++;
        int start = 0;
        for (int l = 0; l < n_layers; l++) {
            for (int v = start; v < start + lsize[l]; v++) cand[v] = start;
            start += lsize[l];
        }
    } else {
        for (int v = 0; v < o->n; v++) cand[v] = v;
    }
    double p = 0;
    if (by_prob) {
        double pairs = 0;
        for (int v = 0; v < o->n; v++) pairs += cand[v];
        p = pairs > 0 ? o->degree * o->n / pairs : 0;
        if (p > 1) p = 1;
    }
    for (int v = 0; v < o->n && !t.failed; v++) {
        const int c = cand[v];
        if (c == 0) continue;
        if (by_prob) {
            if (p <= 0) continue;
            if (p >= 1) { for (int u = 0; u < c; u++) tg_edge(&t, u, v); continue; }
            /* geometric skips: the next edge after a run of failures of probability 1 - p */
            const double l1p = log1p(-p);
            for (double u = -1;;) {
                u += 1 + floor(log(gsl_rng_uniform_pos(t.r)) / l1p);
                if (u >= c) break;
                tg_edge(&t, (int)u, v);
            }
        } else {
            int k = draw_count(t.r, o->degree);
            if (k > c) k = c;
            choose_distinct(t.r, c, k, mark, v, pick);
            for (int i = 0; i < k; i++) tg_edge(&t, pick[i], v);
        }
    }
done:
    free(cand);
    free(mark);
    free(pick);
    free(lsize);
    return tg_finish(&t);
}

/* ---------------- layered (Topcuoglu et al. 2002) ---------------- */

void dp_gen_layered_defaults(dp_gen_layered_opts *o)
{
    o->n = 100;
    o->alpha = 1.0;
    o->out_degree = 2;
    o->ccr = 1.0;
    o->min_work = 1;
    o->max_work = 100;
    o->seed = 1;
}

dp_graph *dp_gen_layered(const dp_gen_layered_opts *o, dp_error *err)
{
    if (o->n < 1 || o->n > 1000000) { dp_gen_option_error(err, "layered", "n", 1, 1000000); return NULL; }
    if (!(o->alpha >= 0.05 && o->alpha <= 20)) { dp_gen_option_error(err, "layered", "alpha", 0.05, 20); return NULL; }
    if (o->out_degree < 1 || o->out_degree > 1000) { dp_gen_option_error(err, "layered", "out-degree", 1, 1000); return NULL; }
    if (check_common("layered", o->ccr, o->min_work, o->max_work, err) != DP_OK) return NULL;
    char name[160];
    snprintf(name, sizeof name, "layered_n%d_alpha%g_out%d_ccr%g_seed%lu", o->n, o->alpha, o->out_degree, o->ccr, o->seed);
    tg t;
    if (tg_begin(&t, "layered", name, o->ccr, o->min_work, o->max_work, o->seed, err) != DP_OK) return NULL;
    int *start = dp_alloc_malloc_n((size_t)o->n + 1, sizeof(int));
    int *mark = dp_alloc_malloc_n((size_t)o->n, sizeof(int));
    int *pick = dp_alloc_malloc_n((size_t)o->n, sizeof(int));
    char *has_parent = dp_alloc_calloc((size_t)o->n, 1);
    if (!start || !mark || !pick || !has_parent) { dp_error_set(err, DP_ENOMEM, "layered: out of memory"); t.failed = 1; goto done; }
    const double root = sqrt((double)o->n);
    int height = (int)lround(root / o->alpha);
    if (height < 1) height = 1;
    long wmax = 2 * lround(o->alpha * root) - 1;
    if (wmax < 1) wmax = 1;
    int levels = 0, total = 0;
    while (total < o->n) {
        int w = levels == height - 1 ? o->n - total : 1 + (int)gsl_rng_uniform_int(t.r, (unsigned long)wmax);
        if (w > o->n - total) w = o->n - total;
        start[levels++] = total;
        total += w;
    }
    start[levels] = total;
    for (int v = 0; v < o->n; v++) {
        tg_task(&t, NULL, "task", tg_work(&t));
        mark[v] = -1;
    }
    for (int L = 0; L + 1 < levels && !t.failed; L++) {
        const int next = start[L + 1], wn = start[L + 2] - start[L + 1];
        const int k = o->out_degree < wn ? o->out_degree : wn;
        for (int u = start[L]; u < start[L + 1]; u++) {
            choose_distinct(t.r, wn, k, mark + next, u, pick);
            for (int i = 0; i < k; i++) {
                tg_edge(&t, u, next + pick[i]);
                has_parent[next + pick[i]] = 1;
            }
        }
        for (int v = next; v < next + wn; v++)
            if (!has_parent[v]) tg_edge(&t, start[L] + (int)gsl_rng_uniform_int(t.r, (unsigned long)(start[L + 1] - start[L])), v);
    }
done:
    free(start);
    free(mark);
    free(pick);
    free(has_parent);
    return tg_finish(&t);
}

/* ---------------- fork-join ---------------- */

void dp_gen_forkjoin_defaults(dp_gen_forkjoin_opts *o)
{
    o->stages = 3;
    o->branches = 8;
    o->length = 2;
    o->ccr = 1.0;
    o->min_work = 1;
    o->max_work = 100;
    o->seed = 1;
}

dp_graph *dp_gen_forkjoin(const dp_gen_forkjoin_opts *o, dp_error *err)
{
    if (o->stages < 1 || o->stages > 10000) { dp_gen_option_error(err, "forkjoin", "stages", 1, 10000); return NULL; }
    if (o->branches < 1 || o->branches > 10000) { dp_gen_option_error(err, "forkjoin", "branches", 1, 10000); return NULL; }
    if (o->length < 1 || o->length > 10000) { dp_gen_option_error(err, "forkjoin", "length", 1, 10000); return NULL; }
    if (check_common("forkjoin", o->ccr, o->min_work, o->max_work, err) != DP_OK) return NULL;
    const double ops = 1.0 + (double)o->stages * ((double)o->branches * o->length + 1);
    if (ops > DP_GEN_MAX_OPS) {
        dp_error_set(err, DP_EINVAL, "forkjoin: %.0f ops, more than the generators' limit of %d: fewer stages, branches or length",
                     ops, DP_GEN_MAX_OPS);
        return NULL;
    }
    char name[160];
    snprintf(name, sizeof name, "forkjoin_s%d_b%d_l%d_ccr%g_seed%lu", o->stages, o->branches, o->length, o->ccr, o->seed);
    tg t;
    if (tg_begin(&t, "forkjoin", name, o->ccr, o->min_work, o->max_work, o->seed, err) != DP_OK) return NULL;
    int fork = tg_task(&t, "fork0", "fork", tg_work(&t));
    for (int s = 0; s < o->stages && !t.failed; s++) {
        int *last = dp_alloc_malloc_n((size_t)o->branches, sizeof(int));
        if (!last) { dp_error_set(err, DP_ENOMEM, "forkjoin: out of memory"); t.failed = 1; break; }
        for (int b = 0; b < o->branches; b++) {
            int prev = fork;
            for (int k = 0; k < o->length; k++) {
                char nm[48];
                snprintf(nm, sizeof nm, "s%d.b%d.t%d", s, b, k);
                int v = tg_task(&t, nm, "task", tg_work(&t));
                tg_edge(&t, prev, v);
                prev = v;
            }
            last[b] = prev;
        }
        char nm[32];
        snprintf(nm, sizeof nm, "join%d", s + 1);
        int join = tg_task(&t, nm, "join", tg_work(&t));
        for (int b = 0; b < o->branches; b++) tg_edge(&t, last[b], join);
        free(last);
        fork = join;
    }
    return tg_finish(&t);
}

/* ---------------- series-parallel ---------------- */

void dp_gen_sp_defaults(dp_gen_sp_opts *o)
{
    o->n = 100;
    o->parallel = 0.5;
    o->ccr = 1.0;
    o->min_work = 1;
    o->max_work = 100;
    o->seed = 1;
}

dp_graph *dp_gen_sp(const dp_gen_sp_opts *o, dp_error *err)
{
    if (o->n < 2 || o->n > 1000000) { dp_gen_option_error(err, "seriesparallel", "n", 2, 1000000); return NULL; }
    if (!(o->parallel >= 0 && o->parallel <= 1)) { dp_gen_option_error(err, "seriesparallel", "parallel", 0, 1); return NULL; }
    if (check_common("seriesparallel", o->ccr, o->min_work, o->max_work, err) != DP_OK) return NULL;
    char name[160];
    snprintf(name, sizeof name, "seriesparallel_n%d_par%g_ccr%g_seed%lu", o->n, o->parallel, o->ccr, o->seed);
    tg t;
    if (tg_begin(&t, "seriesparallel", name, o->ccr, o->min_work, o->max_work, o->seed, err) != DP_OK) return NULL;
    /* at most 2 edges per composition: 1 + 2 (n - 2) */
    const size_t cap = 2 * (size_t)o->n;
    int *es = dp_alloc_malloc_n(cap, sizeof(int)), *ed = dp_alloc_malloc_n(cap, sizeof(int));
    if (!es || !ed) { dp_error_set(err, DP_ENOMEM, "seriesparallel: out of memory"); t.failed = 1; goto done; }
    int ne = 1, nt = 2;
    es[0] = 0;
    ed[0] = 1;
    while (nt < o->n) {
        const int e = (int)gsl_rng_uniform_int(t.r, (unsigned long)ne), u = es[e], v = ed[e], w = nt++;
        if (gsl_rng_uniform(t.r) < o->parallel) {
            es[ne] = u; ed[ne] = w; ne++;
        } else {
            ed[e] = w;
        }
        es[ne] = w; ed[ne] = v; ne++;
    }
    {
        /* the tasks were made in composition order (the sink second, each new task before some
         * made earlier): numbered now in a topological order, as every generator's (dp_gen.h;
         * half the edges went from a higher id to a lower: a review). Kahn's order, a FIFO from
         * the source; each task keeps the work drawn for it in composition order */
        const int n = o->n;
        int *indeg = dp_alloc_calloc_n((size_t)n, sizeof(int)), *pos = dp_alloc_malloc_n((size_t)n, sizeof(int));
        int *order = dp_alloc_malloc_n((size_t)n, sizeof(int)), *ptr = dp_alloc_calloc_n((size_t)n + 1, sizeof(int));
        int *adj = dp_alloc_malloc_n((size_t)ne, sizeof(int));
        double *work = dp_alloc_malloc_n((size_t)n, sizeof(double));
        if (!indeg || !pos || !order || !ptr || !adj || !work) {
            dp_error_set(err, DP_ENOMEM, "seriesparallel: out of memory");
            t.failed = 1;
        } else {
            for (int v = 0; v < n; v++) work[v] = tg_work(&t);
            for (int e = 0; e < ne; e++) {
                ptr[es[e] + 1]++;
                indeg[ed[e]]++;
            }
            for (int v = 0; v < n; v++) ptr[v + 1] += ptr[v];
            for (int e = 0; e < ne; e++) adj[ptr[es[e]]++] = ed[e];
            for (int v = n; v > 0; v--) ptr[v] = ptr[v - 1];
            ptr[0] = 0;
            int head = 0, tail = 0;
            for (int v = 0; v < n; v++)
                if (indeg[v] == 0) order[tail++] = v;
            while (head < tail) {
                const int u = order[head++];
                for (int q = ptr[u]; q < ptr[u + 1]; q++)
                    if (--indeg[adj[q]] == 0) order[tail++] = adj[q];
            }
            assert(tail == n);
            for (int k = 0; k < n; k++) pos[order[k]] = k;
            for (int k = 0; k < n; k++) {
                const int v = order[k];
                tg_task(&t, v == 0 ? "source" : v == 1 ? "sink" : NULL, "task", work[v]);
            }
            for (int e = 0; e < ne; e++) tg_edge(&t, pos[es[e]], pos[ed[e]]);
        }
        free(indeg);
        free(pos);
        free(order);
        free(ptr);
        free(adj);
        free(work);
    }
done:
    free(es);
    free(ed);
    return tg_finish(&t);
}

/* ---------------- workflow shapes ---------------- */

void dp_gen_workflow_defaults(dp_gen_workflow_opts *o)
{
    o->recipe = 0;
    o->width = 20;
    o->ccr = 1.0;
    o->min_work = 1;
    o->max_work = 100;
    o->seed = 1;
}

/* a workflow under construction: the programs' base works, drawn at a program's first task */
typedef struct wf {
    tg t;
    double base[16];
} wf;

static int wf_task(wf *w, int prog, const char *program, int index)
{
    if (w->base[prog] < 0) w->base[prog] = tg_work(&w->t);
    double work = floor(w->base[prog] * (0.5 + gsl_rng_uniform(w->t.r)) + 0.5);
    char nm[64];
    if (index >= 0) snprintf(nm, sizeof nm, "%s.%d", program, index);
    else snprintf(nm, sizeof nm, "%s", program);
    return tg_task(&w->t, nm, program, work);
}

dp_graph *dp_gen_workflow(const dp_gen_workflow_opts *o, dp_error *err)
{
    static const char *const recipes[] = {"montage", "epigenomics", "cybershake", "ligo", "genome", "srasearch"};
    if (o->recipe < 0 || o->recipe > 5) { dp_gen_option_error(err, "workflow", "recipe", 0, 5); return NULL; }
    const int wmin = o->recipe == 0 ? 2 : 1;
    if (o->width < wmin || o->width > 100000) { dp_gen_option_error(err, "workflow", "width", wmin, 100000); return NULL; }
    if (check_common("workflow", o->ccr, o->min_work, o->max_work, err) != DP_OK) return NULL;
    char name[160];
    snprintf(name, sizeof name, "workflow_%s_w%d_ccr%g_seed%lu", recipes[o->recipe], o->width, o->ccr, o->seed);
    wf w;
    if (tg_begin(&w.t, "workflow", name, o->ccr, o->min_work, o->max_work, o->seed, err) != DP_OK) return NULL;
    for (int i = 0; i < 16; i++) w.base[i] = -1;
    tg *t = &w.t;
    const int W = o->width;
    int *a = dp_alloc_malloc_n((size_t)W, sizeof(int)), *b = dp_alloc_malloc_n((size_t)W, sizeof(int));
    int *c = dp_alloc_malloc_n((size_t)W, sizeof(int));
    if (!a || !b || !c) { dp_error_set(err, DP_ENOMEM, "workflow: out of memory"); t->failed = 1; goto done; }
    switch (o->recipe) {
    case 0: { /* montage */
        for (int i = 0; i < W; i++) a[i] = wf_task(&w, 0, "mProjectPP", i);
        int k = 0, first_diff = -1;  /* the mDiffFit tasks have consecutive ids */
        for (int d = 1; d <= 2; d++)
            for (int i = 0; i + d < W; i++) {
                int v = wf_task(&w, 1, "mDiffFit", k++);
                if (first_diff < 0) first_diff = v;
                tg_edge(t, a[i], v);
                tg_edge(t, a[i + d], v);
            }
        int concat = wf_task(&w, 2, "mConcatFit", -1);
        for (int v = first_diff; v >= 0 && v < concat; v++) tg_edge(t, v, concat);
        int model = wf_task(&w, 3, "mBgModel", -1);
        tg_edge(t, concat, model);
        for (int i = 0; i < W; i++) {
            b[i] = wf_task(&w, 4, "mBackground", i);
            tg_edge(t, a[i], b[i]);
            tg_edge(t, model, b[i]);
        }
        int tbl = wf_task(&w, 5, "mImgtbl", -1);
        for (int i = 0; i < W; i++) tg_edge(t, b[i], tbl);
        int add = wf_task(&w, 6, "mAdd", -1);
        tg_edge(t, tbl, add);
        for (int i = 0; i < W; i++) tg_edge(t, b[i], add);
        int shrink = wf_task(&w, 7, "mShrink", -1);
        tg_edge(t, add, shrink);
        int jpeg = wf_task(&w, 8, "mJPEG", -1);
        tg_edge(t, shrink, jpeg);
        break;
    }
    case 1: { /* epigenomics */
        static const char *const chain[] = {"filterContams", "sol2sanger", "fastq2bfq", "map"};
        int split = wf_task(&w, 0, "fastQSplit", -1);
        for (int i = 0; i < W; i++) {
            int prev = split;
            for (int s = 0; s < 4; s++) {
                int v = wf_task(&w, 1 + s, chain[s], i);
                tg_edge(t, prev, v);
                prev = v;
            }
            a[i] = prev;
        }
        int merge = wf_task(&w, 5, "mapMerge", -1);
        for (int i = 0; i < W; i++) tg_edge(t, a[i], merge);
        int index = wf_task(&w, 6, "maqIndex", -1);
        tg_edge(t, merge, index);
        int pile = wf_task(&w, 7, "pileup", -1);
        tg_edge(t, index, pile);
        break;
    }
    case 2: { /* cybershake */
        int sgt[2] = {wf_task(&w, 0, "ExtractSGT", 0), wf_task(&w, 0, "ExtractSGT", 1)};
        for (int i = 0; i < W; i++) {
            a[i] = wf_task(&w, 1, "SeismogramSynthesis", i);
            tg_edge(t, sgt[i % 2], a[i]);
        }
        for (int i = 0; i < W; i++) {
            b[i] = wf_task(&w, 2, "PeakValCalcOkaya", i);
            tg_edge(t, a[i], b[i]);
        }
        int zs = wf_task(&w, 3, "ZipSeis", -1);
        for (int i = 0; i < W; i++) tg_edge(t, a[i], zs);
        int zp = wf_task(&w, 4, "ZipPSA", -1);
        for (int i = 0; i < W; i++) tg_edge(t, b[i], zp);
        break;
    }
    case 3: { /* ligo: two rounds of inspiral analysis, groups of 5 joined by Thinca */
        const int groups = (W + 4) / 5;
        for (int i = 0; i < W; i++) a[i] = wf_task(&w, 0, "TmpltBank", i);
        for (int i = 0; i < W; i++) {
            b[i] = wf_task(&w, 1, "Inspiral", i);
            tg_edge(t, a[i], b[i]);
        }
        for (int gi = 0; gi < groups; gi++) {
            c[gi] = wf_task(&w, 2, "Thinca", gi);
            for (int i = 5 * gi; i < W && i < 5 * gi + 5; i++) tg_edge(t, b[i], c[gi]);
        }
        for (int i = 0; i < W; i++) {
            a[i] = wf_task(&w, 3, "TrigBank", i);
            tg_edge(t, c[i / 5], a[i]);
        }
        for (int i = 0; i < W; i++) {
            b[i] = wf_task(&w, 1, "Inspiral", W + i);
            tg_edge(t, a[i], b[i]);
        }
        for (int gi = 0; gi < groups; gi++) {
            int v = wf_task(&w, 2, "Thinca", groups + gi);
            for (int i = 5 * gi; i < W && i < 5 * gi + 5; i++) tg_edge(t, b[i], v);
        }
        break;
    }
    case 4: { /* genome (1000 Genomes) */
        for (int i = 0; i < W; i++) a[i] = wf_task(&w, 0, "individuals", i);
        int merge = wf_task(&w, 1, "individuals_merge", -1);
        for (int i = 0; i < W; i++) tg_edge(t, a[i], merge);
        int sift = wf_task(&w, 2, "sifting", -1);
        for (int p = 0; p < 7; p++) {
            int m = wf_task(&w, 3, "mutation_overlap", p);
            tg_edge(t, merge, m);
            tg_edge(t, sift, m);
            int f = wf_task(&w, 4, "frequency", p);
            tg_edge(t, merge, f);
            tg_edge(t, sift, f);
        }
        break;
    }
    case 5: { /* srasearch */
        int index = wf_task(&w, 0, "bowtie2-build", -1);
        for (int i = 0; i < W; i++) a[i] = wf_task(&w, 1, "fasterq-dump", i);
        for (int i = 0; i < W; i++) {
            b[i] = wf_task(&w, 2, "bowtie2", i);
            tg_edge(t, a[i], b[i]);
            tg_edge(t, index, b[i]);
        }
        int merge = wf_task(&w, 3, "merge", -1);
        for (int i = 0; i < W; i++) tg_edge(t, b[i], merge);
        break;
    }
    }
done:
    free(a);
    free(b);
    free(c);
    return tg_finish(t);
}
