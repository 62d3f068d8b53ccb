/* dp_exec.c: the real executor's planning (kernels of scaled ops), threads and runs.
 *
 * Invariants of a run:
 *   - need[v] (inputs of v not yet on dev(v), counting each distinct predecessor once) is only
 *     touched under the mutex of dev(v);
 *   - an op is pushed on its device's ready queue exactly once, when need[v] reaches 0; a copy is
 *     pushed on its destination's copy queue exactly once, when its producer ends;
 *   - so each queue holds at most n_ops (n_copies) entries per run and never wraps;
 *   - the run ends when done_ops == n_ops (under run_mu): every op ran, every copy that feeds an
 *     op ran before it. Copies whose consumers all ran are complete too (a consumer waits for it).
 */
#define _GNU_SOURCE
#include "dp_exec.h"
#include "dp_alloc.h"
#include "dp_exec_backend.h"
#include "dp_file.h"

#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const dp_exec_backend *const backends[] = {
    &dp_exec_backend_cpu,
#ifdef DP_WITH_CUDA
    &dp_exec_backend_cuda,
#endif
    NULL,
};

void dp_exec_options_init(dp_exec_options *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "cpu";
    o->scale = 1.0;
    o->pin = 1;
    o->seed = 1;
}

/* ---- planning ---- */

/* total FLOPs of work that maps to one second on one core, roughly: for the default size of
 * synthetic graphs */
#define DP_EXEC_DEFAULT_FLOPS 2e8
#define SYNTH_TILE_FLOPS (2.0 * 64 * 64)

static int has_word(const char *kind, const char *w)
{
    return strstr(kind, w) != NULL;
}

/* the einsum's operands: returns the number of operands on the left of "->" (0 if none) and
 * whether an index of the left side is missing from the right (a summed index) */
static int einsum_info(const char *e, int *summed)
{
    *summed = 0;
    if (!e) return 0;
    const char *arrow = strstr(e, "->");
    if (!arrow) return 0;
    int n_ops = 1;
    for (const char *p = e; p < arrow; p++) {
        if (*p == ',') n_ops++;
        else if (isalpha((unsigned char)*p) && !strchr(arrow + 2, *p)) *summed = 1;
    }
    return n_ops;
}

static void classify(const dp_graph *g, int v, int *cls, int *func)
{
    char kind[64];
    size_t i = 0;
    for (; g->op_kind[v][i] && i + 1 < sizeof kind; i++) kind[i] = (char)tolower((unsigned char)g->op_kind[v][i]);
    kind[i] = 0;
    int summed = 0;
    int n_operands = einsum_info(g->op_einsum[v], &summed);
    *func = DP_EXEC_F_IDENTITY;
    int n_pred = g->pred_ptr[v + 1] - g->pred_ptr[v];
    if (g->cost_kind == DP_GRAPH_COST_TIME) { *cls = DP_EXEC_SYNTH; return; }
    if (has_word(kind, "matmul") || has_word(kind, "gemm") || has_word(kind, "einsum") || has_word(kind, "contract") ||
        !strcmp(kind, "mm") || !strcmp(kind, "bmm") || !strcmp(kind, "linear") || !strcmp(kind, "dot") ||
        (n_operands >= 2 && summed)) {
        *cls = DP_EXEC_GEMM;
        return;
    }
    if (has_word(kind, "reduce") || !strcmp(kind, "sum") || !strcmp(kind, "mean") || (n_operands == 1 && summed))
        *cls = DP_EXEC_REDUCE;
    else
        *cls = DP_EXEC_ELEMWISE;
    if (has_word(kind, "softmax")) *func = DP_EXEC_F_SOFTMAX;
    else if (has_word(kind, "gelu")) *func = DP_EXEC_F_GELU;
    else if (has_word(kind, "relu")) *func = DP_EXEC_F_RELU;
    else if (has_word(kind, "silu") || has_word(kind, "swish")) *func = DP_EXEC_F_SILU;
    else if (has_word(kind, "tanh")) *func = DP_EXEC_F_TANH;
    else if (has_word(kind, "sigmoid")) *func = DP_EXEC_F_SIGMOID;
    else if (has_word(kind, "exp")) *func = DP_EXEC_F_EXP;
    else if (has_word(kind, "mul") || has_word(kind, "hadamard")) *func = DP_EXEC_F_MUL;
    if (n_pred == 0) *cls = DP_EXEC_SOURCE;
}

static int64_t scale_dim(double d, double s)
{
    double x = ceil(d * s - 1e-9);
    return x < 1 ? 1 : (int64_t)x;
}

/* the kernel of op v without its bytes (those need the producers' sizes) */
static void plan_op(const dp_graph *g, int v, const dp_exec_options *o, double fpu, double bpu, dp_exec_kernel *k)
{
    memset(k, 0, sizeof *k);
    classify(g, v, &k->cls, &k->func);
    if (k->cls == DP_EXEC_SYNTH) {
        double kk = round(g->work[v] * fpu / SYNTH_TILE_FLOPS);
        k->k = kk < 1 ? 1 : (int64_t)kk;
        k->m = k->n = 64;
        k->flops = SYNTH_TILE_FLOPS * (double)k->k;
        double oe = round(g->out_size[v] * bpu / 4.0);
        k->out_elems = oe < 1 ? 1 : (int64_t)oe;
        return;
    }
    const double s = o->scale;
    double dims[DP_GRAPH_MAX_DIMS];
    int nd = g->op_ndim[v];
    for (int i = 0; i < nd; i++) dims[i] = (double)g->op_shape[(size_t)v * DP_GRAPH_MAX_DIMS + i];
    if (nd == 0) {
        /* no shape: a square-ish matrix of the output's fp32 elements */
        double p = g->out_size[v] / 4.0;
        if (p < 1) p = 1;
        double r = floor(sqrt(p));
        dims[0] = r;
        dims[1] = ceil(p / r);
        nd = 2;
    }
    double p_orig = 1;
    int64_t lead = 1, last = 1;
    for (int i = 0; i < nd; i++) {
        p_orig *= dims[i] > 0 ? dims[i] : 1;
        int64_t sd = scale_dim(dims[i] > 0 ? dims[i] : 1, s);
        if (i + 1 < nd) lead *= sd;
        else last = sd;
    }
    k->out_elems = lead * last;
    k->row = last;
    const double ratio = (double)k->out_elems / p_orig;
    const int n_in = g->pred_ptr[v + 1] - g->pred_ptr[v];
    switch (k->cls) {
    case DP_EXEC_GEMM: {
        double korig = g->work[v] > 0 ? g->work[v] / (2.0 * p_orig) : 1.0;
        k->m = lead;
        k->n = last;
        k->k = scale_dim(korig < 1 ? 1 : korig, s);
        k->flops = 2.0 * (double)k->m * (double)k->n * (double)k->k;
        break;
    }
    case DP_EXEC_SOURCE:
        k->flops = (double)k->out_elems;
        break;
    default:
        k->flops = g->work[v] > 0 ? g->work[v] * ratio : (double)k->out_elems * (n_in > 0 ? n_in : 1);
        break;
    }
}

static void synth_units(const dp_graph *g, const dp_exec_options *o, double *fpu, double *bpu)
{
    *fpu = o->flops_per_unit;
    *bpu = o->bytes_per_unit;
    if (g->cost_kind != DP_GRAPH_COST_TIME) return;
    if (*fpu <= 0) {
        double w = dp_graph_total_work(g);
        *fpu = w > 0 ? DP_EXEC_DEFAULT_FLOPS / w : 1.0;
    }
    /* a unit of transfer moves an eighth as many bytes as a unit of work does FLOPs: on one core,
     * memcpy of B bytes and sgemm of 8B FLOPs take comparable times */
    if (*bpu <= 0) *bpu = *fpu / 8.0;
}

int dp_exec_plan(const dp_graph *g, const dp_exec_options *o, dp_exec_kernel *k, dp_error *err)
{
    if (!(o->scale > 0 && o->scale <= 1))
        return dp_error_set(err, DP_EINVAL, "executor: scale %g outside (0, 1]", o->scale);
    double fpu, bpu;
    synth_units(g, o, &fpu, &bpu);
    if (g->cost_kind == DP_GRAPH_COST_TIME) {
        if (!isfinite(fpu) || !isfinite(bpu))
            return dp_error_set(err, DP_EINVAL, "executor: synthetic kernels of %g FLOPs and %g bytes per unit: finite units "
                                "expected", fpu, bpu);
        /* counts past 2^53 overflowed the int64 tile count (flops_per_unit 7.5e22 gave an op
         * -7.6e22 FLOPs, an error that blamed the graph's work: a review) */
        for (int v = 0; v < g->n_ops; v++) {
            const double tiles = round(g->work[v] * fpu / SYNTH_TILE_FLOPS), floats = round(g->out_size[v] * bpu / 4.0);
            if (tiles > DP_EXEC_MAX_COUNT || floats > DP_EXEC_MAX_COUNT)
                return dp_error_set(err, DP_EINVAL, "executor: op %d (\"%s\") at %g FLOPs per unit of work: %.3g tiles of sgemm "
                                    "and %.3g floats of output, more than the executor counts (2^53)", v, g->op_name[v], fpu,
                                    tiles, floats);
        }
    }
    for (int v = 0; v < g->n_ops; v++) plan_op(g, v, o, fpu, bpu, &k[v]);
    for (int v = 0; v < g->n_ops; v++) {
        double in = 0;
        for (int i = g->pred_ptr[v]; i < g->pred_ptr[v + 1]; i++) in += (double)k[g->edge_src[g->pred_edge[i]]].out_elems;
        k[v].bytes = 4.0 * (in + (double)k[v].out_elems);
    }
    return DP_OK;
}

static double total_flops_at(const dp_graph *g, const dp_exec_options *base, double s, dp_exec_kernel *k)
{
    dp_exec_options o = *base;
    o.scale = s;
    double fpu, bpu;
    synth_units(g, &o, &fpu, &bpu);
    double t = 0;
    for (int v = 0; v < g->n_ops; v++) {
        plan_op(g, v, &o, fpu, bpu, k);
        t += k->flops;
    }
    return t;
}

double dp_exec_auto_scale(const dp_graph *g, double target_flops)
{
    if (g->cost_kind == DP_GRAPH_COST_TIME) {
        double w = dp_graph_total_work(g);
        return w > 0 ? target_flops / w : 1.0;
    }
    dp_exec_options o;
    dp_exec_options_init(&o);
    dp_exec_kernel k;
    if (total_flops_at(g, &o, 1.0, &k) <= target_flops) return 1.0;
    double lo = log(1e-6), hi = 0;
    for (int it = 0; it < 60; it++) {
        double mid = 0.5 * (lo + hi);
        if (total_flops_at(g, &o, exp(mid), &k) < target_flops) lo = mid;
        else hi = mid;
    }
    return exp(hi);
}

/* ---- the executor ---- */

typedef struct dev_state {
    pthread_mutex_t mu;
    pthread_cond_t cv_compute, cv_copy;
    int *ready, r_head, r_tail;
    int *copyq, c_head, c_tail;
    pthread_t th_compute, th_copy;
    int have_compute, have_copy;
    int quit;                  /* set under mu: the workers of this device end */
    float *weights;
    int64_t w_elems;
} dev_state;

struct dp_exec {
    const dp_graph *g;
    int n, D;
    const dp_exec_backend *be;
    void *ctx;
    dp_exec_options opt;
    dp_exec_kernel *k;
    dp_graph *xg;
    unsigned char *first_copy; /* per edge: first of its (src, dst) pair */
    dev_state *dev;
    long live;
    /* the prepared assignment */
    int prepared;
    int *assign;
    float **buf;               /* (n) output of each op, on its device */
    int n_copies;
    int *ucopy_ptr;            /* (n + 1): copies of op u are ucopy_ptr[u] .. ucopy_ptr[u+1] */
    int *copy_src, *copy_dev;
    float **copy_buf;
    const float **in_ptr;      /* (n_edges) in pred_edge order: the input of each in-edge */
    int64_t *in_elems;
    int *need_init, *need;
    double *op_start, *op_end, *copy_start, *copy_end;
    int ran;
    /* run control */
    pthread_mutex_t run_mu;
    pthread_cond_t run_cv;
    int done_ops, failed;
    struct timespec t0;
    /* the workers' start (under run_mu): how many have set their nice, the nice they run at, the
     * errno of a setpriority that failed (0: none) */
    int n_started, nice_applied, nice_errno;
};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void *dev_alloc(dp_exec *x, int d, size_t bytes)
{
    void *p = x->be->alloc(x->ctx, d, bytes);
    if (p) x->live++;
    return p;
}

/* The CPU backend's memory is the host's, which malloc overcommits: a graph too large for it
 * (validate --scale 1 on ChainMM: about 30 GB) was allocated in full and then touched, and the
 * kernel's OOM killer ended the process, or another one (a review). Refused before, against the
 * memory available (dp_file_mem_check); a GPU backend's own allocator says when it is full. */
static int host_mem_check(const dp_exec *x, const dp_graph *g, double bytes, const char *what, dp_error *err)
{
    if (x->be != &dp_exec_backend_cpu || dp_file_mem_check(g->source ? g->source : g->name, what, bytes, err) == DP_OK)
        return DP_OK;
    if (err) {
        const size_t len = strlen(err->msg);
        snprintf(err->msg + len, sizeof err->msg - len, "; run it at a smaller --scale or --target-flops");
    }
    return DP_ENOMEM;
}

static void dev_free(dp_exec *x, int d, void *p)
{
    if (!p) return;
    x->be->free(x->ctx, d, p);
    x->live--;
}

/* inputs of v that have arrived on d: called under d's mutex; pushes v when complete */
static void arrived(dp_exec *x, int u, int d)
{
    const dp_graph *g = x->g;
    dev_state *s = &x->dev[d];
    for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
        int v = g->edge_dst[e];
        if (!x->first_copy[e] || x->assign[v] != d) continue;
        if (--x->need[v] == 0) s->ready[s->r_tail++] = v;
    }
}

static void op_done(dp_exec *x, int fail)
{
    pthread_mutex_lock(&x->run_mu);
    if (fail) x->failed = 1;
    if (++x->done_ops == x->n) pthread_cond_signal(&x->run_cv);
    pthread_mutex_unlock(&x->run_mu);
}

typedef struct worker_arg {
    dp_exec *x;
    int d;
} worker_arg;

/* the calling worker's nice value (Linux: per thread), then what it runs at, read back, for
 * dp_exec_nice (a failed setpriority was ignored, and validate reported the nice asked for as
 * applied: a review); counts the worker started */
static void worker_priority(dp_exec *x)
{
    const id_t tid = (id_t)syscall(SYS_gettid);
    int set_errno = 0;
    if (x->opt.nice != 0 && setpriority(PRIO_PROCESS, tid, x->opt.nice) != 0) set_errno = errno ? errno : EPERM;
    errno = 0;
    int now = getpriority(PRIO_PROCESS, tid);
    if (now == -1 && errno) now = x->opt.nice;   /* not readable: what was set */
    pthread_mutex_lock(&x->run_mu);
    /* the first failure, and the nice of a worker that failed: what its ops run at */
    if (x->n_started == 0 || (set_errno && !x->nice_errno)) x->nice_applied = now;
    if (set_errno && !x->nice_errno) x->nice_errno = set_errno;
    x->n_started++;
    pthread_cond_broadcast(&x->run_cv);
    pthread_mutex_unlock(&x->run_mu);
}

static void *compute_worker(void *arg)
{
    dp_exec *x = ((worker_arg *)arg)->x;
    const int d = ((worker_arg *)arg)->d;
    free(arg);
    const dp_graph *g = x->g;
    dev_state *s = &x->dev[d];
    x->be->bind(x->ctx, d, 0);
    worker_priority(x);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->r_head == s->r_tail && !s->quit) pthread_cond_wait(&s->cv_compute, &s->mu);
        if (s->quit) break;
        int v = s->ready[s->r_head++];
        pthread_mutex_unlock(&s->mu);
        const int p0 = g->pred_ptr[v];
        x->op_start[v] = since(&x->t0);
        int rc = x->be->run(x->ctx, d, v, &x->k[v], x->buf[v], x->in_ptr + p0, x->in_elems + p0,
                            g->pred_ptr[v + 1] - p0, s->weights, s->w_elems, x->opt.seed);
        x->op_end[v] = since(&x->t0);
        /* remote consumers: hand the output to their devices' copy engines */
        for (int c = x->ucopy_ptr[v]; c < x->ucopy_ptr[v + 1]; c++) {
            dev_state *t = &x->dev[x->copy_dev[c]];
            pthread_mutex_lock(&t->mu);
            t->copyq[t->c_tail++] = c;
            pthread_cond_signal(&t->cv_copy);
            pthread_mutex_unlock(&t->mu);
        }
        pthread_mutex_lock(&s->mu);
        arrived(x, v, d);
        pthread_mutex_unlock(&s->mu);
        op_done(x, rc != DP_OK);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void *copy_worker(void *arg)
{
    dp_exec *x = ((worker_arg *)arg)->x;
    const int d = ((worker_arg *)arg)->d;
    free(arg);
    dev_state *s = &x->dev[d];
    x->be->bind(x->ctx, d, 1);
    worker_priority(x);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->c_head == s->c_tail && !s->quit) pthread_cond_wait(&s->cv_copy, &s->mu);
        if (s->quit) break;
        int c = s->copyq[s->c_head++];
        pthread_mutex_unlock(&s->mu);
        int u = x->copy_src[c];
        x->copy_start[c] = since(&x->t0);
        int rc = x->be->copy(x->ctx, d, x->copy_buf[c], x->assign[u], x->buf[u], (size_t)x->k[u].out_elems * sizeof(float));
        x->copy_end[c] = since(&x->t0);
        if (rc != DP_OK) {
            pthread_mutex_lock(&x->run_mu);
            x->failed = 1;
            pthread_mutex_unlock(&x->run_mu);
        }
        pthread_mutex_lock(&s->mu);
        int before = s->r_tail;
        arrived(x, u, d);
        if (s->r_tail != before) pthread_cond_signal(&s->cv_compute);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void release_assignment(dp_exec *x)
{
    if (!x->buf) return;
    for (int v = 0; v < x->n; v++) {
        dev_free(x, x->assign[v], x->buf[v]);
        x->buf[v] = NULL;
    }
    for (int c = 0; c < x->n_copies; c++) {
        dev_free(x, x->copy_dev[c], x->copy_buf[c]);
        x->copy_buf[c] = NULL;
    }
    x->n_copies = 0;
    x->prepared = 0;
    x->ran = 0;
}

static void stop_workers(dp_exec *x)
{
    for (int d = 0; d < x->D; d++) {
        pthread_mutex_lock(&x->dev[d].mu);
        x->dev[d].quit = 1;
        pthread_cond_broadcast(&x->dev[d].cv_compute);
        pthread_cond_broadcast(&x->dev[d].cv_copy);
        pthread_mutex_unlock(&x->dev[d].mu);
    }
    for (int d = 0; d < x->D; d++) {
        if (x->dev[d].have_compute) pthread_join(x->dev[d].th_compute, NULL);
        if (x->dev[d].have_copy) pthread_join(x->dev[d].th_copy, NULL);
        x->dev[d].have_compute = x->dev[d].have_copy = 0;
    }
}

void dp_exec_free(dp_exec *x)
{
    if (!x) return;
    if (x->dev) {
        stop_workers(x);
        release_assignment(x);
        for (int d = 0; d < x->D; d++) {
            dev_free(x, d, x->dev[d].weights);
            free(x->dev[d].ready);
            free(x->dev[d].copyq);
            pthread_mutex_destroy(&x->dev[d].mu);
            pthread_cond_destroy(&x->dev[d].cv_compute);
            pthread_cond_destroy(&x->dev[d].cv_copy);
        }
        free(x->dev);
        pthread_mutex_destroy(&x->run_mu);
        pthread_cond_destroy(&x->run_cv);
    }
    if (x->ctx) x->be->close(x->ctx);
    dp_graph_free(x->xg);
    free(x->k); free(x->first_copy); free(x->assign); free(x->buf); free(x->ucopy_ptr);
    free(x->copy_src); free(x->copy_dev); free(x->copy_buf); free(x->in_ptr); free(x->in_elems);
    free(x->need_init); free(x->need); free(x->op_start); free(x->op_end); free(x->copy_start);
    free(x->copy_end);
    free(x);
}

static dp_graph *executed_graph(const dp_graph *g, const dp_exec_kernel *k, dp_error *err)
{
    dp_graph_builder *b = dp_graph_builder_alloc(g->name, g->source, DP_GRAPH_COST_PHYSICAL);
    if (!b) { dp_error_set(err, DP_ENOMEM, "out of memory"); return NULL; }
    dp_graph_builder_set_time_unit(b, 1.0, "s");
    for (int v = 0; v < g->n_ops; v++) {
        /* synthetic kernels are one kind, whatever the file called the op */
        const char *kind = k[v].cls == DP_EXEC_SYNTH ? "synthetic" : g->op_kind[v];
        dp_graph_builder_add_op(b, g->op_name[v], kind, k[v].flops, 4.0 * (double)k[v].out_elems);
        int64_t shape[2] = {k[v].out_elems / (k[v].row > 0 ? k[v].row : 1), k[v].row > 0 ? k[v].row : 1};
        dp_graph_builder_set_op_info(b, v, g->op_type[v], g->op_einsum[v], 2, shape);
    }
    for (int e = 0; e < g->n_edges; e++)
        dp_graph_builder_add_edge(b, g->edge_src[e], g->edge_dst[e], 4.0 * (double)k[g->edge_src[e]].out_elems);
    dp_graph *xg = dp_graph_builder_finish(b, err);
    dp_graph_builder_free(b);
    return xg;
}

dp_graph *dp_exec_plan_graph(const dp_graph *g, const dp_exec_options *o, dp_error *err)
{
    dp_exec_options def;
    if (!o) { dp_exec_options_init(&def); o = &def; }
    dp_exec_kernel *k = dp_alloc_calloc_n(g->n_ops, sizeof *k);
    if (!k) { dp_error_set(err, DP_ENOMEM, "out of memory"); return NULL; }
    dp_graph *xg = dp_exec_plan(g, o, k, err) == DP_OK ? executed_graph(g, k, err) : NULL;
    free(k);
    return xg;
}

dp_exec *dp_exec_alloc(const dp_graph *g, int n_devices, const dp_exec_options *o, dp_error *err)
{
    dp_exec_options def;
    if (!o) { dp_exec_options_init(&def); o = &def; }
    const dp_exec_backend *be = NULL;
    const char *want = o->backend ? o->backend : "cpu";
    for (int i = 0; backends[i]; i++)
        if (strcmp(backends[i]->name, want) == 0) be = backends[i];
    if (!be) {
        dp_error_set(err, DP_EUNSUPPORTED, "executor: backend '%s' not built in (available: cpu%s)", want,
#ifdef DP_WITH_CUDA
                     ", cuda"
#else
                     "; configure --with-cuda for cuda"
#endif
        );
        return NULL;
    }
    if (n_devices < 1 || n_devices > DP_EXEC_MAX_DEVICES) {
        dp_error_set(err, DP_EINVAL, "executor: %d devices (1..%d)", n_devices, DP_EXEC_MAX_DEVICES);
        return NULL;
    }
    dp_exec *x = dp_alloc_calloc(1, sizeof *x);
    if (!x) { dp_error_set(err, DP_ENOMEM, "out of memory"); return NULL; }
    x->g = g;
    x->n = g->n_ops;
    x->D = n_devices;
    x->be = be;
    x->opt = *o;
    x->opt.backend = be->name;
    const int n = g->n_ops, m = g->n_edges;
    x->k = dp_alloc_calloc_n(n, sizeof *x->k);
    if (!x->k) goto nomem;
    if (dp_exec_plan(g, o, x->k, err) != DP_OK) goto fail;
    x->xg = executed_graph(g, x->k, err);
    if (!x->xg) goto fail;
    x->first_copy = dp_alloc_malloc((size_t)m + 1);
    x->assign = dp_alloc_calloc_n(n, sizeof(int));
    x->buf = dp_alloc_calloc_n(n, sizeof(float *));
    x->ucopy_ptr = dp_alloc_calloc_n((size_t)n + 1, sizeof(int));
    /* at most one copy per (op, other device), and at most one per edge */
    size_t cap = (size_t)m + 1;
    x->copy_src = dp_alloc_malloc_n(cap, sizeof(int));
    x->copy_dev = dp_alloc_malloc_n(cap, sizeof(int));
    x->copy_buf = dp_alloc_calloc_n(cap, sizeof(float *));
    x->copy_start = dp_alloc_malloc_n(cap, sizeof(double));
    x->copy_end = dp_alloc_malloc_n(cap, sizeof(double));
    x->in_ptr = dp_alloc_calloc_n((size_t)m + 1, sizeof(float *));
    x->in_elems = dp_alloc_calloc_n((size_t)m + 1, sizeof(int64_t));
    x->need_init = dp_alloc_malloc_n(n, sizeof(int));
    x->need = dp_alloc_malloc_n(n, sizeof(int));
    x->op_start = dp_alloc_calloc_n(n, sizeof(double));
    x->op_end = dp_alloc_calloc_n(n, sizeof(double));
    x->dev = dp_alloc_calloc_n(n_devices, sizeof(dev_state));
    if (!x->first_copy || !x->assign || !x->buf || !x->ucopy_ptr || !x->copy_src || !x->copy_dev ||
        !x->copy_buf || !x->copy_start || !x->copy_end || !x->in_ptr || !x->in_elems || !x->need_init ||
        !x->need || !x->op_start || !x->op_end || !x->dev)
        goto nomem;
    for (int u = 0; u < n; u++)
        for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++)
            x->first_copy[e] = (e == g->succ_ptr[u] || g->edge_dst[e - 1] != g->edge_dst[e]);
    for (int v = 0; v < n; v++) x->need_init[v] = g->n_unique_pred[v];
    pthread_mutex_init(&x->run_mu, NULL);
    pthread_cond_init(&x->run_cv, NULL);
    for (int d = 0; d < n_devices; d++) {
        pthread_mutex_init(&x->dev[d].mu, NULL);
        pthread_cond_init(&x->dev[d].cv_compute, NULL);
        pthread_cond_init(&x->dev[d].cv_copy, NULL);
    }
    if (be->open(n_devices, o->pin, &x->ctx, err) != DP_OK) { x->ctx = NULL; goto fail; }
    /* weights: large enough for every GEMM operand and the synthetic tiles, plus room for the
     * per-op offsets */
    int64_t need = 2 * 64 * 256;
    for (int v = 0; v < n; v++) {
        if (x->k[v].cls != DP_EXEC_GEMM) continue;
        int64_t a = x->k[v].m * x->k[v].k, b = x->k[v].k * x->k[v].n;
        if (a > need) need = a;
        if (b > need) need = b;
    }
    if (host_mem_check(x, g, (double)n_devices * (double)(need + 8192) * sizeof(float),
                       "the executor's weight memory (a buffer per device, for the graph's largest product)", err) != DP_OK)
        goto fail;
    for (int d = 0; d < n_devices; d++) {
        dev_state *s = &x->dev[d];
        s->ready = dp_alloc_malloc_n(n, sizeof(int));
        s->copyq = dp_alloc_malloc_n(cap, sizeof(int));
        s->w_elems = need + 8192;
        s->weights = dev_alloc(x, d, (size_t)s->w_elems * sizeof(float));
        if (!s->ready || !s->copyq || !s->weights) goto nomem;
        be->fill(x->ctx, d, s->weights, s->w_elems, o->seed, 0);
    }
    for (int d = 0; d < n_devices; d++) {
        for (int role = 0; role < 2; role++) {
            worker_arg *a = dp_alloc_malloc(sizeof *a);
            if (!a) goto nomem;
            a->x = x;
            a->d = d;
            pthread_t *th = role == 0 ? &x->dev[d].th_compute : &x->dev[d].th_copy;
            if (pthread_create(th, NULL, role == 0 ? compute_worker : copy_worker, a) != 0) {
                free(a);
                dp_error_set(err, DP_ENOMEM, "executor: cannot start worker threads");
                goto fail;
            }
            if (role == 0) x->dev[d].have_compute = 1;
            else x->dev[d].have_copy = 1;
        }
    }
    /* every worker has set its nice: dp_exec_nice says what they run at */
    pthread_mutex_lock(&x->run_mu);
    while (x->n_started < 2 * n_devices) pthread_cond_wait(&x->run_cv, &x->run_mu);
    pthread_mutex_unlock(&x->run_mu);
    return x;
nomem:
    dp_error_set(err, DP_ENOMEM, "executor: out of memory for %s", g->source ? g->source : "graph");
fail:
    dp_exec_free(x);
    return NULL;
}

const dp_graph *dp_exec_graph(const dp_exec *x) { return x->xg; }
const dp_exec_kernel *dp_exec_kernels(const dp_exec *x) { return x->k; }
int dp_exec_pinned(const dp_exec *x)
{
    if (!x->opt.pin || x->be != &dp_exec_backend_cpu) return 0;
    int cores[CPU_SETSIZE];
    return dp_exec_cpu_cores(cores, CPU_SETSIZE) >= x->D;
}

int dp_exec_nice(const dp_exec *x, int *set_errno)
{
    if (set_errno) *set_errno = x->nice_errno;
    return x->nice_applied;
}

int dp_exec_n_devices(const dp_exec *x) { return x->D; }
const char *dp_exec_backend_name(const dp_exec *x) { return x->be->name; }
long dp_exec_live_buffers(const dp_exec *x) { return x->live; }

int dp_exec_prepare(dp_exec *x, const int *assignment, dp_error *err)
{
    const dp_graph *g = x->g;
    const int n = x->n, D = x->D;
    for (int v = 0; v < n; v++)
        if (assignment[v] < 0 || assignment[v] >= D)
            return dp_error_set(err, DP_EINVAL, "assignment: op %d (\"%s\") has device %d, outside 0..%d", v,
                                g->op_name[v], assignment[v], D - 1);
    release_assignment(x);
    {
        /* every output, and one copy per (producer, other device of a consumer), as below */
        double bytes = 0;
        for (int u = 0; u < n; u++) {
            int copies = 0;
            for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
                const int d = assignment[g->edge_dst[e]];
                int dup = d == assignment[u];
                for (int f = g->succ_ptr[u]; f < e && !dup; f++) dup = assignment[g->edge_dst[f]] == d;
                copies += !dup;
            }
            bytes += (1.0 + copies) * (double)x->k[u].out_elems * sizeof(float);
        }
        if (host_mem_check(x, g, bytes, "one assignment on the executor", err) != DP_OK)
            return DP_ENOMEM;
    }
    memcpy(x->assign, assignment, (size_t)n * sizeof(int));
    for (int v = 0; v < n; v++) {
        x->buf[v] = dev_alloc(x, assignment[v], (size_t)x->k[v].out_elems * sizeof(float));
        if (!x->buf[v]) goto nomem;
    }
    /* copies: one per (producer, other device holding a consumer), grouped by producer */
    int nc = 0;
    for (int u = 0; u < n; u++) {
        x->ucopy_ptr[u] = nc;
        for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
            int d = assignment[g->edge_dst[e]];
            if (d == assignment[u]) continue;
            int dup = 0;
            for (int c = x->ucopy_ptr[u]; c < nc; c++) dup |= x->copy_dev[c] == d;
            if (dup) continue;
            x->copy_src[nc] = u;
            x->copy_dev[nc] = d;
            x->copy_buf[nc] = dev_alloc(x, d, (size_t)x->k[u].out_elems * sizeof(float));
            nc++;
            x->n_copies = nc;
            if (!x->copy_buf[nc - 1]) goto nomem;
        }
    }
    x->ucopy_ptr[n] = nc;
    x->n_copies = nc;
    for (int v = 0; v < n; v++) {
        for (int i = g->pred_ptr[v]; i < g->pred_ptr[v + 1]; i++) {
            int u = g->edge_src[g->pred_edge[i]];
            const float *p = x->buf[u];
            if (assignment[u] != assignment[v])
                for (int c = x->ucopy_ptr[u]; c < x->ucopy_ptr[u + 1]; c++)
                    if (x->copy_dev[c] == assignment[v]) p = x->copy_buf[c];
            x->in_ptr[i] = p;
            x->in_elems[i] = x->k[u].out_elems;
        }
    }
    x->prepared = 1;
    return DP_OK;
nomem:
    release_assignment(x);
    return dp_error_set(err, DP_ENOMEM, "executor: out of device memory for the assignment's buffers");
}

int dp_exec_run(dp_exec *x, dp_exec_result *res, dp_error *err)
{
    if (!x->prepared) return dp_error_set(err, DP_EINVAL, "executor: no assignment prepared");
    const dp_graph *g = x->g;
    memcpy(x->need, x->need_init, (size_t)x->n * sizeof(int));
    for (int d = 0; d < x->D; d++) {
        dev_state *s = &x->dev[d];
        pthread_mutex_lock(&s->mu);
        s->r_head = s->r_tail = s->c_head = s->c_tail = 0;
        pthread_mutex_unlock(&s->mu);
    }
    pthread_mutex_lock(&x->run_mu);
    x->done_ops = 0;
    x->failed = 0;
    pthread_mutex_unlock(&x->run_mu);
    clock_gettime(CLOCK_MONOTONIC, &x->t0);
    for (int i = 0; i < g->n_sources; i++) {
        int v = g->sources[i];
        dev_state *s = &x->dev[x->assign[v]];
        pthread_mutex_lock(&s->mu);
        s->ready[s->r_tail++] = v;
        pthread_cond_signal(&s->cv_compute);
        pthread_mutex_unlock(&s->mu);
    }
    pthread_mutex_lock(&x->run_mu);
    while (x->done_ops < x->n) pthread_cond_wait(&x->run_cv, &x->run_mu);
    int failed = x->failed;
    pthread_mutex_unlock(&x->run_mu);
    /* every copy feeding an op ended before that op started; wait for nothing else: a copy
     * whose consumers all ran has ended (they waited for it) */
    x->ran = 1;
    double mk = 0;
    for (int v = 0; v < x->n; v++) if (x->op_end[v] > mk) mk = x->op_end[v];
    double bytes = 0;
    for (int c = 0; c < x->n_copies; c++) bytes += 4.0 * (double)x->k[x->copy_src[c]].out_elems;
    res->makespan = mk;
    res->op_start = x->op_start;
    res->op_end = x->op_end;
    res->n_copies = x->n_copies;
    res->copy_src = x->copy_src;
    res->copy_dev = x->copy_dev;
    res->copy_start = x->copy_start;
    res->copy_end = x->copy_end;
    res->copy_bytes = bytes;
    if (failed) return dp_error_set(err, DP_EIO, "executor: a kernel or copy failed on the %s backend", x->be->name);
    return DP_OK;
}

double dp_exec_median(double *v, int n)
{
    if (n <= 0) return 0;
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

int dp_exec_measure(dp_exec *x, const int *assignment, int warmup, int repeats, double *samples,
                    dp_exec_stats *st, dp_error *err)
{
    if (repeats < 1) return dp_error_set(err, DP_EINVAL, "executor: repeats %d (at least 1)", repeats);
    int rc = dp_exec_prepare(x, assignment, err);
    if (rc != DP_OK) return rc;
    dp_exec_result res;
    for (int i = 0; i < warmup; i++)
        if ((rc = dp_exec_run(x, &res, err)) != DP_OK) return rc;
    double *t = dp_alloc_malloc_n((size_t)repeats, sizeof(double));
    if (!t) return dp_error_set(err, DP_ENOMEM, "out of memory");
    for (int i = 0; i < repeats; i++) {
        if ((rc = dp_exec_run(x, &res, err)) != DP_OK) { free(t); return rc; }
        t[i] = res.makespan;
        if (samples) samples[i] = res.makespan;
    }
    gsl_sort(t, 1, (size_t)repeats);
    st->repeats = repeats;
    st->min = t[0];
    st->max = t[repeats - 1];
    st->median = gsl_stats_median_from_sorted_data(t, 1, (size_t)repeats);
    st->mean = gsl_stats_mean(t, 1, (size_t)repeats);
    st->q25 = gsl_stats_quantile_from_sorted_data(t, 1, (size_t)repeats, 0.25);
    st->q75 = gsl_stats_quantile_from_sorted_data(t, 1, (size_t)repeats, 0.75);
    free(t);
    return DP_OK;
}

int64_t dp_exec_read_output(dp_exec *x, int v, float *out, int64_t cap, dp_error *err)
{
    if (!x->ran) return dp_error_set(err, DP_EINVAL, "executor: nothing has run");
    if (v < 0 || v >= x->n) return dp_error_set(err, DP_EINVAL, "executor: op %d out of range", v);
    int64_t n = x->k[v].out_elems;
    int64_t c = n < cap ? n : cap;
    if (c > 0 && x->be->read(x->ctx, x->assign[v], out, x->buf[v], (size_t)c * sizeof(float)) != DP_OK)
        return dp_error_set(err, DP_EIO, "executor: cannot read op %d's output", v);
    return n;
}

/* the paired measurement of dp_exec_oracle_cost (ctx->ref_x set) */
static int oracle_paired(dp_exec_oracle_ctx *o, const int *assignment, double *makespan, dp_error *err)
{
    const int R = o->repeats > 0 ? o->repeats : 1;
    if (o->ref_x->n != o->x->n || o->ref_x->D != o->x->D || !o->ref_x->prepared)
        return dp_error_set(err, DP_EINVAL, "oracle: the reference executor must run the same graph on the same devices, prepared");
    int rc = dp_exec_prepare(o->x, assignment, err);
    if (rc != DP_OK) return rc;
    dp_exec_result res;
    for (int i = 0; i < o->warmup; i++)
        if ((rc = dp_exec_run(o->x, &res, err)) != DP_OK) return rc;
    double *ratio = dp_alloc_malloc_n((size_t)(2 * R), sizeof(double)), *ref = ratio ? ratio + R : NULL;
    if (!ratio) return dp_error_set(err, DP_ENOMEM, "out of memory");
    for (int i = 0; i < R && rc == DP_OK; i++) {
        if ((rc = dp_exec_run(o->ref_x, &res, err)) != DP_OK) break;
        ref[i] = res.makespan;
        if ((rc = dp_exec_run(o->x, &res, err)) != DP_OK) break;
        ratio[i] = res.makespan / ref[i];
    }
    if (rc == DP_OK) {
        gsl_sort(ref, 1, (size_t)R);
        gsl_sort(ratio, 1, (size_t)R);
        o->ref_last = gsl_stats_median_from_sorted_data(ref, 1, (size_t)R);
        if (!(o->ref_level > 0)) o->ref_level = o->ref_last;
        *makespan = o->ref_level * gsl_stats_median_from_sorted_data(ratio, 1, (size_t)R);
        o->calls++;
    }
    free(ratio);
    return rc;
}

int dp_exec_oracle_cost(void *ctx, const int *assignment, double *makespan, dp_error *err)
{
    dp_exec_oracle_ctx *o = ctx;
    if (o->ref_x) return oracle_paired(o, assignment, makespan, err);
    dp_exec_stats st;
    int rc = dp_exec_measure(o->x, assignment, o->warmup, o->repeats > 0 ? o->repeats : 1, NULL, &st, err);
    if (rc != DP_OK) return rc;
    o->calls++;
    *makespan = st.median;
    return DP_OK;
}
