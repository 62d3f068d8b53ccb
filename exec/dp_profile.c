/* dp_profile.c: timing op kinds and copies on the real executor (see dp_profile.h). */
#define _GNU_SOURCE
#include "dp_profile.h"
#include "dp_alloc.h"
#include "dp_calib.h"
#include "dp_costmodel.h"
#include "dp_exec.h"
#include "dp_exec_backend.h"
#include "dp_json.h"

#include <cblas.h>
#include <gsl/gsl_sort.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void dp_profile_options_init(dp_profile_options *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "cpu";
    o->repeats = 3;
    o->passes = 9;
    o->chain = 8;
    o->max_elems = (int64_t)1 << 20;
    o->max_gemm = 768;
    o->pin = 1;
    o->seed = 1;
    o->interference = 1;
}

void dp_profile_free(dp_profile *p)
{
    if (!p) return;
    for (int d = 0; d < p->n_devices && p->device; d++) free(p->device[d]);
    free(p->device);
    free(p->machine);
    free(p->backend);
    free(p->ops);
    free(p->copies);
    free(p->itf);
    free(p);
}

static dp_profile *profile_new(int n_devices, const char *backend, const char *machine, const char *prefix)
{
    dp_profile *p = dp_alloc_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n_devices = n_devices;
    p->device = dp_alloc_calloc((size_t)n_devices, sizeof(char *));
    p->backend = dp_alloc_strdup(backend ? backend : "cpu");
    p->machine = dp_alloc_strdup(machine ? machine : "");
    if (!p->device || !p->backend || !p->machine) { dp_profile_free(p); return NULL; }
    for (int d = 0; d < n_devices && prefix; d++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s%d", prefix, d);
        if (!(p->device[d] = dp_alloc_strdup(nm))) { dp_profile_free(p); return NULL; }
    }
    return p;
}

/* room for one more element in the array *a of n elements (capacity *cap, doubling from first) */
static int grow(void **a, int n, int *cap, int first, size_t size)
{
    if (n < *cap) return DP_OK;
    int c = *cap ? 2 * *cap : first;
    void *b = dp_alloc_realloc(*a, (size_t)c * size);
    if (!b) return DP_ENOMEM;
    *a = b;
    *cap = c;
    return DP_OK;
}

/* the executor options of a probe */
static void exec_options(const dp_profile_options *o, dp_exec_options *xo)
{
    dp_exec_options_init(xo);
    xo->backend = o->backend;
    xo->pin = o->pin;
    xo->seed = o->seed;
    xo->nice = o->nice;
}

/* an executor of the profile's runs; the nice its workers run at (dp_exec_nice) goes to p, and
 * the first failure to set o->nice */
static dp_exec *profile_exec_alloc(dp_profile *p, const dp_graph *g, int D, const dp_exec_options *xo, dp_error *err)
{
    dp_exec *x = dp_exec_alloc(g, D, xo, err);
    if (!x) return NULL;
    int e = 0;
    const int now = dp_exec_nice(x, &e);
    if (!p->nice_errno) p->nice = now;
    if (e && !p->nice_errno) p->nice_errno = e;
    return x;
}

static int add_op(dp_profile *p, int d, const char *kind, double flops, double bytes, double s, int graph_op)
{
    if (grow((void **)&p->ops, p->n_ops, &p->cap_ops, 256, sizeof *p->ops) != DP_OK) return DP_ENOMEM;
    dp_profile_op *o = &p->ops[p->n_ops++];
    o->device = d;
    snprintf(o->kind, sizeof o->kind, "%s", kind);
    o->flops = flops;
    o->bytes = bytes;
    o->seconds = s;
    o->graph_op = graph_op;
    return DP_OK;
}

static int add_copy(dp_profile *p, int a, int b, double bytes, double s)
{
    if (grow((void **)&p->copies, p->n_copies, &p->cap_copies, 64, sizeof *p->copies) != DP_OK) return DP_ENOMEM;
    p->copies[p->n_copies++] = (dp_profile_copy){a, b, bytes, s};
    return DP_OK;
}

static int add_itf(dp_profile *p, int d, const char *kind, double x, double y, int peers)
{
    if (grow((void **)&p->itf, p->n_itf, &p->cap_itf, 32, sizeof *p->itf) != DP_OK) return DP_ENOMEM;
    dp_profile_itf *t = &p->itf[p->n_itf++];
    t->device = d;
    snprintf(t->kind, sizeof t->kind, "%s", kind);
    t->x = x;
    t->y = y;
    t->peers = peers;
    return DP_OK;
}

/* one size of one kind: `n_src` sources feeding `chain` independent ops of the kind, all on
 * device d; the ops run back to back in id order (FIFO), so the gap between two starts is one
 * op's time on a busy device, dispatch included */
typedef struct probe {
    const char *kind;
    int time_graph;            /* synthetic: a DP_GRAPH_COST_TIME graph */
    int n_src;                 /* 0: the ops are sources themselves (kind "input") */
    int64_t src_shape[2];
    int op_ndim;
    int64_t op_shape[2];
    double op_work;
    const char *einsum;
} probe;

static dp_graph *probe_graph(const probe *pr, int chain, dp_error *err)
{
    dp_graph_builder *b = dp_graph_builder_alloc("profile", "profile", pr->time_graph ? DP_GRAPH_COST_TIME : DP_GRAPH_COST_PHYSICAL);
    if (!b) { dp_error_set(err, DP_ENOMEM, "out of memory"); return NULL; }
    const double src_bytes = 4.0 * (double)(pr->src_shape[0] * pr->src_shape[1]);
    for (int s = 0; s < pr->n_src; s++) {
        int id = dp_graph_builder_add_op(b, NULL, "input", pr->time_graph ? 1 : 0, src_bytes);
        dp_graph_builder_set_op_info(b, id, NULL, NULL, 2, pr->src_shape);
    }
    double ob = 4.0;
    for (int i = 0; i < pr->op_ndim; i++) ob *= (double)pr->op_shape[i];
    for (int i = 0; i < chain; i++) {
        /* time graphs run with 1 FLOP and 1 byte per unit: sizes are FLOPs and bytes there too */
        int id = dp_graph_builder_add_op(b, NULL, pr->time_graph ? "synthetic" : pr->kind, pr->op_work, ob);
        dp_graph_builder_set_op_info(b, id, NULL, pr->einsum, pr->op_ndim, pr->op_shape);
        for (int s = 0; s < pr->n_src; s++) dp_graph_builder_add_edge(b, s, id, src_bytes);
    }
    dp_graph *g = dp_graph_builder_finish(b, err);
    dp_graph_builder_free(b);
    return g;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Time the `chain` ops first .. first + chain - 1 of probe graph g (freed here), all on device
 * d: per run, the median gap between their starts. The samples go to p (kind, graph_op); with
 * `med_out`, the median over runs goes there instead. */
static int time_chain(dp_profile *p, int D, int d, dp_graph *g, int first, int chain, const char *kind, int time_graph,
                      int graph_op, const dp_profile_options *o, double *med_out, dp_error *err)
{
    dp_exec_options xo;
    exec_options(o, &xo);
    if (time_graph) xo.flops_per_unit = xo.bytes_per_unit = 1;
    int rc = DP_OK;
    int *assign = NULL;
    double *starts = NULL, *gaps = NULL, *meds = NULL;
    dp_exec *x = profile_exec_alloc(p, g, D, &xo, err);
    if (!x) { rc = err ? err->code : DP_ENOMEM; goto done; }
    assign = dp_alloc_malloc((size_t)g->n_ops * sizeof(int));
    starts = dp_alloc_malloc((size_t)chain * sizeof(double));
    gaps = dp_alloc_malloc((size_t)chain * sizeof(double));
    if (!assign || !starts || !gaps) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
    for (int v = 0; v < g->n_ops; v++) assign[v] = d;
    if ((rc = dp_exec_prepare(x, assign, err)) != DP_OK) goto done;
    const dp_graph *xg = dp_exec_graph(x);
    /* every op of the chain has the same size: describe them by the first */
    double flops = xg->work[first], bytes = xg->out_size[first];
    for (int i = xg->pred_ptr[first]; i < xg->pred_ptr[first + 1]; i++) bytes += xg->edge_size[xg->pred_edge[i]];
    dp_exec_result res;
    meds = med_out ? dp_alloc_malloc((size_t)o->repeats * sizeof(double)) : NULL;
    if (med_out && !meds) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
    for (int r = -1; r < o->repeats; r++) {   /* r = -1: warm-up */
        if ((rc = dp_exec_run(x, &res, err)) != DP_OK) goto done;
        if (r < 0) continue;
        for (int i = 0; i < chain; i++) starts[i] = res.op_start[first + i];
        qsort(starts, (size_t)chain, sizeof(double), cmp_double);
        for (int i = 0; i + 1 < chain; i++) gaps[i] = starts[i + 1] - starts[i];
        /* the median gap of a run: one preempted op (the machine is shared) does not count */
        gsl_sort(gaps, 1, (size_t)(chain - 1));
        double med = gsl_stats_median_from_sorted_data(gaps, 1, (size_t)(chain - 1));
        if (meds) { meds[r] = med; continue; }
        if ((rc = add_op(p, d, kind, flops, bytes, med, graph_op)) != DP_OK) { dp_error_set(err, rc, "out of memory"); goto done; }
    }
    if (meds) {
        gsl_sort(meds, 1, (size_t)o->repeats);
        *med_out = gsl_stats_median_from_sorted_data(meds, 1, (size_t)o->repeats);
    }
done:
    free(meds);
    free(assign); free(starts); free(gaps);
    dp_exec_free(x);
    dp_graph_free(g);
    return rc;
}

/* the samples go to p (kind pr->kind); with `med_out`, their median goes there instead */
static int run_probe_to(dp_profile *p, int D, int d, const probe *pr, const dp_profile_options *o, double *med_out,
                        dp_error *err)
{
    const int chain = o->chain < 2 ? 2 : o->chain;
    dp_graph *g = probe_graph(pr, chain, err);
    if (!g) return err ? err->code : DP_EINVAL;
    return time_chain(p, D, d, g, pr->n_src, chain, pr->kind, pr->time_graph, 0, o, med_out, err);
}

static int run_probe(dp_profile *p, int D, int d, const probe *pr, const dp_profile_options *o, dp_error *err)
{
    return run_probe_to(p, D, d, pr, o, NULL, err);
}

/* ---- the ops of a graph ---- */

int dp_profile_graph_ops(dp_profile *p, const dp_graph *xg, const dp_profile_options *o, dp_error *err)
{
    dp_profile_options def;
    if (!o) { dp_profile_options_init(&def); o = &def; }
    if (xg->cost_kind != DP_GRAPH_COST_PHYSICAL)
        return dp_error_set(err, DP_EINVAL, "%s: profile graph ops: an executed graph (FLOPs and bytes) is needed", xg->source);
    const int n = xg->n_ops;
    /* a kind the profile cannot keep is refused (its samples were dropped without a word) */
    for (int v = 0; v < n; v++)
        if (strlen(xg->op_kind[v]) >= sizeof p->ops[0].kind)
            return dp_error_set(err, DP_EINVAL, "%s: op %d (\"%s\"): kind '%s' is longer than %zu bytes (the longest a profile "
                                "keeps)", xg->source ? xg->source : xg->name, v, xg->op_name[v], xg->op_kind[v],
                                sizeof p->ops[0].kind - 1);
    dp_exec_options xo;
    exec_options(o, &xo);
    int rc = DP_OK;
    int *assign = dp_alloc_malloc((size_t)(n > 0 ? n : 1) * sizeof(int)), *order = dp_alloc_malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    double *t0 = dp_alloc_malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    dp_exec *x = NULL;
    if (!assign || !order || !t0) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
    /* the executed graph at scale 1 runs the same kernels (dp_exec_plan of its FLOPs and shapes) */
    if (!(x = profile_exec_alloc(p, xg, p->n_devices, &xo, err))) { rc = err ? err->code : DP_ENOMEM; goto done; }
    const dp_graph *rg = dp_exec_graph(x);
    /* interleaved passes, the devices in turn within each: the host's speed drifts by several
     * percent between minutes (a VM's neighbours, clocks), and timing every run of one device
     * before the next device's would put that drift into the devices' times as a difference
     * between them (two identical cores profiled 2 to 6% apart, with opposite signs for two
     * graphs, which the simulator then took for a faster core) */
    for (int r = 0; r < o->passes && rc == DP_OK; r++) {
        for (int d = 0; d < p->n_devices && rc == DP_OK; d++) {
            for (int v = 0; v < n; v++) assign[v] = d;
            if ((rc = dp_exec_prepare(x, assign, err)) != DP_OK) break;
            dp_exec_result res;
            /* a warm-up run after each prepare (first touch of the device's buffers) */
            if ((rc = dp_exec_run(x, &res, err)) != DP_OK) break;
            if ((rc = dp_exec_run(x, &res, err)) != DP_OK) break;
            /* ops in start order; an op's sample is the time to the next start on the device (its
             * kernel and the dispatch of the next), the last op's its kernel */
            for (int v = 0; v < n; v++) { order[v] = v; t0[v] = res.op_start[v]; }
            for (int i = 1; i < n; i++) {   /* insertion sort by start: runs are nearly sorted */
                int v = order[i], j = i - 1;
                while (j >= 0 && t0[order[j]] > t0[v]) { order[j + 1] = order[j]; j--; }
                order[j + 1] = v;
            }
            for (int i = 0; i < n && rc == DP_OK; i++) {
                int v = order[i];
                if (strcmp(rg->op_kind[v], "synthetic") == 0) continue;
                double sec = i + 1 < n ? res.op_start[order[i + 1]] - res.op_start[v] : res.op_end[v] - res.op_start[v];
                if ((rc = add_op(p, d, rg->op_kind[v], rg->work[v], dp_costmodel_op_bytes(rg, v), sec, 1)) != DP_OK)
                    dp_error_set(err, rc, "out of memory");
            }
        }
    }
done:
    dp_exec_free(x);
    free(assign); free(order); free(t0);
    return rc;
}

/* the executor's class of a kind: a two-op graph source -> op planned */
static int kind_class(const char *kind)
{
    if (strcmp(kind, "synthetic") == 0) return DP_EXEC_SYNTH;
    dp_graph_builder *b = dp_graph_builder_alloc("k", "k", DP_GRAPH_COST_PHYSICAL);
    dp_graph_builder_add_op(b, NULL, "input", 0, 4);
    dp_graph_builder_add_op(b, NULL, kind, 2, 4);
    dp_graph_builder_add_edge(b, 0, 1, 4);
    dp_graph *g = dp_graph_builder_finish(b, NULL);
    dp_graph_builder_free(b);
    if (!g) return DP_EXEC_ELEMWISE;
    dp_exec_options o;
    dp_exec_options_init(&o);
    dp_exec_kernel k[2];
    dp_exec_plan(g, &o, k, NULL);
    dp_graph_free(g);
    return strcmp(kind, "input") == 0 ? DP_EXEC_SOURCE : k[1].cls;
}

int dp_profile_kind_memory_bound(const char *kind)
{
    int cls = kind_class(kind);
    return cls != DP_EXEC_GEMM && cls != DP_EXEC_SYNTH;
}

static int profile_kind(dp_profile *p, int D, int d, const char *kind, const dp_profile_options *o, dp_error *err)
{
    const int cls = kind_class(kind);
    probe pr;
    memset(&pr, 0, sizeof pr);
    pr.kind = kind;
    int rc = DP_OK;
    if (cls == DP_EXEC_GEMM) {
        static const int64_t dims[] = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768};
        for (size_t i = 0; i < sizeof dims / sizeof *dims && dims[i] <= o->max_gemm; i++) {
            const int64_t s = dims[i], q = s / 4 < 8 ? 8 : s / 4;
            const int64_t cfg[4][3] = {{s, s, s}, {s, s, q}, {q, s, s}, {s, q, 4 * s}};
            for (int c = 0; c < 4 && rc == DP_OK; c++) {
                const int64_t m = cfg[c][0], n = cfg[c][1], k = cfg[c][2];
                pr.n_src = 1;
                pr.src_shape[0] = m; pr.src_shape[1] = k;
                pr.op_ndim = 2;
                pr.op_shape[0] = m; pr.op_shape[1] = n;
                pr.op_work = 2.0 * (double)m * (double)n * (double)k;
                pr.einsum = "ij,jk->ik";
                rc = run_probe(p, D, d, &pr, o, err);
            }
        }
        return rc;
    }
    if (cls == DP_EXEC_SYNTH) {
        /* k tiles of 64 x 64 x 1 (2 x 64 x 64 FLOPs each), outputs small and large */
        pr.time_graph = 1;
        pr.n_src = 1;
        int j = 0;
        /* up to 65536 tiles (5.4e8 FLOPs) at the default max_gemm, scaled down with it */
        int64_t kmax = o->max_gemm * o->max_gemm / 9;
        kmax = kmax < 16 ? 16 : kmax > 65536 ? 65536 : kmax;
        for (int64_t k = 16; k <= kmax && rc == DP_OK; k *= 2, j++) {
            int64_t e = j % 2 ? 256 : (k * 64 < o->max_elems ? k * 64 : o->max_elems);
            pr.src_shape[0] = e / 64 > 0 ? e / 64 : 1; pr.src_shape[1] = 64;
            pr.op_ndim = 2;
            pr.op_shape[0] = pr.src_shape[0]; pr.op_shape[1] = 64;
            pr.op_work = 2.0 * 64 * 64 * (double)k;
            rc = run_probe(p, D, d, &pr, o, err);
        }
        return rc;
    }
    /* elementwise, reductions, sources: tensors of 256 .. max_elems floats; one or two inputs.
     * Reductions take both forms graphs give them: a row sum of one input, and the sum of two
     * inputs of the output's shape (the partial results of a split contraction, "ac+ac->ac") */
    int j = 0;
    for (int64_t e = 256; e <= o->max_elems && rc == DP_OK; e *= 2, j++) {
        const int64_t row = e < 256 ? e : 256;
        pr.src_shape[0] = e / row; pr.src_shape[1] = row;
        pr.n_src = cls == DP_EXEC_SOURCE ? 0 : ((cls == DP_EXEC_ELEMWISE || cls == DP_EXEC_REDUCE) && j % 2) ? 2 : 1;
        if (cls == DP_EXEC_REDUCE && pr.n_src == 1) {
            pr.op_ndim = 1;
            pr.op_shape[0] = e / row;   /* a row sum */
        } else {
            pr.op_ndim = 2;
            pr.op_shape[0] = e / row; pr.op_shape[1] = row;
        }
        pr.op_work = (double)e * (pr.n_src > 0 ? pr.n_src : 1);
        rc = run_probe(p, D, d, &pr, o, err);
    }
    return rc;
}

/* a copy a -> b: source on a, a small consumer on b; sample = consumer start - source end */
static int profile_route(dp_profile *p, int D, int a, int b, const dp_profile_options *o, dp_error *err)
{
    int rc = DP_OK;
    for (int64_t e = 256; e <= 4 * o->max_elems && rc == DP_OK; e *= 2) {
        const int64_t row = 256;
        dp_graph_builder *gb = dp_graph_builder_alloc("copy", "profile", DP_GRAPH_COST_PHYSICAL);
        int64_t sh[2] = {e / row, row}, one[1] = {1};
        dp_graph_builder_add_op(gb, NULL, "input", 0, 4.0 * (double)e);
        dp_graph_builder_set_op_info(gb, 0, NULL, NULL, 2, sh);
        dp_graph_builder_add_op(gb, NULL, "reduce", (double)e, 4);
        dp_graph_builder_set_op_info(gb, 1, NULL, NULL, 1, one);
        dp_graph_builder_add_edge(gb, 0, 1, 4.0 * (double)e);
        dp_graph *g = dp_graph_builder_finish(gb, err);
        dp_graph_builder_free(gb);
        if (!g) return err ? err->code : DP_EINVAL;
        dp_exec_options xo;
        exec_options(o, &xo);
        dp_exec *x = profile_exec_alloc(p, g, D, &xo, err);
        if (!x) { dp_graph_free(g); return err ? err->code : DP_ENOMEM; }
        int assign[2] = {a, b};
        rc = dp_exec_prepare(x, assign, err);
        dp_exec_result res;
        for (int r = -1; r < 2 * o->repeats && rc == DP_OK; r++) {
            if ((rc = dp_exec_run(x, &res, err)) != DP_OK) break;
            if (r < 0) continue;
            rc = add_copy(p, a, b, 4.0 * (double)e, res.op_start[1] - res.op_end[0]);
            if (rc != DP_OK) dp_error_set(err, rc, "out of memory");
        }
        dp_exec_free(x);
        dp_graph_free(g);
    }
    return rc;
}

/* ---- background load: the other devices busy while one is profiled ---- */

typedef struct background {
    pthread_t th;
    int core, nice, started;
    atomic_int *stop;
} background;

static void *background_loop(void *arg)
{
    background *b = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(b->core, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (b->nice) (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), b->nice);
    /* 64^3: 0.03 ms a call, so the stop flag is seen at once (also under valgrind, where a
     * 256^3 call took seconds and each stop waited for it) */
    enum { N = 64 };
    float *a = dp_alloc_calloc((size_t)3 * N * N, sizeof(float));
    if (!a) return NULL;
    for (int i = 0; i < 2 * N * N; i++) a[i] = (float)((i % 17) - 8) / 8.0f;
    while (!atomic_load(b->stop))
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f / N, a, N, a + N * N, N, 0.0f, a + 2 * N * N, N);
    free(a);
    return NULL;
}

/* start a loop on every core but device d's (device e is core cores[e] when pinned:
 * dp_exec_cpu_cores) */
static void background_start(background *bg, int D, int d, int nice, atomic_int *stop)
{
    int cores[CPU_SETSIZE];
    const int nc = dp_exec_cpu_cores(cores, CPU_SETSIZE);
    atomic_store(stop, 0);
    for (int e = 0; e < D; e++) {
        bg[e].started = 0;
        if (e == d || e >= nc) continue;
        bg[e].core = cores[e];
        bg[e].nice = nice;
        bg[e].stop = stop;
        bg[e].started = pthread_create(&bg[e].th, NULL, background_loop, &bg[e]) == 0;
    }
}

static void background_stop(background *bg, int D, atomic_int *stop)
{
    atomic_store(stop, 1);
    for (int e = 0; e < D; e++)
        if (bg[e].started) pthread_join(bg[e].th, NULL);
}

/* ---- interference ---- */

/* copy_in of device d: NM matmuls of s^3 on d (one shared source); NC sources of E floats on
 * device e, each read by a row sum on d, so that d's copy worker copies NC x 4E bytes while d
 * computes. Per run: the seconds the copies into d overlapped d's matmuls, and the seconds
 * those matmuls took beyond the median matmul that no copy overlapped. */
static int itf_copy_in(dp_profile *p, int D, int d, int e, const dp_profile_options *o, dp_error *err)
{
    enum { NM = 16, NC = 6 };
    const int64_t s = o->max_gemm < 384 ? o->max_gemm : 384, E = o->max_elems;
    dp_graph_builder *b = dp_graph_builder_alloc("copy-in", "profile", DP_GRAPH_COST_PHYSICAL);
    if (!b) return dp_error_set(err, DP_ENOMEM, "out of memory");
    int64_t sh[2] = {s, s}, rows[2] = {E / 256 > 0 ? E / 256 : 1, 256}, one[1] = {1};
    const double mb = 4.0 * (double)(s * s), cb = 4.0 * (double)(rows[0] * rows[1]);
    dp_graph_builder_add_op(b, NULL, "input", 0, mb);
    dp_graph_builder_set_op_info(b, 0, NULL, NULL, 2, sh);
    for (int i = 0; i < NM; i++) {
        int v = dp_graph_builder_add_op(b, NULL, "matmul", 2.0 * (double)s * (double)s * (double)s, mb);
        dp_graph_builder_set_op_info(b, v, NULL, "ij,jk->ik", 2, sh);
        dp_graph_builder_add_edge(b, 0, v, mb);
    }
    for (int i = 0; i < NC; i++) {
        int u = dp_graph_builder_add_op(b, NULL, "input", 0, cb);
        dp_graph_builder_set_op_info(b, u, NULL, NULL, 2, rows);
        int r = dp_graph_builder_add_op(b, NULL, "reduce", cb / 4.0, 4);
        dp_graph_builder_set_op_info(b, r, NULL, NULL, 1, one);
        dp_graph_builder_add_edge(b, u, r, cb);
    }
    dp_graph *g = dp_graph_builder_finish(b, err);
    dp_graph_builder_free(b);
    if (!g) return err ? err->code : DP_EINVAL;
    dp_exec_options xo;
    exec_options(o, &xo);
    int rc = DP_OK;
    int *assign = dp_alloc_calloc((size_t)g->n_ops, sizeof(int));
    double alone[NM], ov[NM];
    dp_exec *x = assign ? profile_exec_alloc(p, g, D, &xo, err) : NULL;
    if (!assign) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
    else if (!x) rc = err ? err->code : DP_ENOMEM;
    if (rc == DP_OK) {
        for (int v = 0; v < g->n_ops; v++) assign[v] = d;
        for (int i = 0; i < NC; i++) assign[1 + NM + 2 * i] = e;
        rc = dp_exec_prepare(x, assign, err);
    }
    dp_exec_result res;
    for (int r = -1; r < o->repeats && rc == DP_OK; r++) {   /* r = -1: warm-up */
        if ((rc = dp_exec_run(x, &res, err)) != DP_OK) break;
        if (r < 0) continue;
        int n_alone = 0;
        double overlap = 0, taken = 0, n_ov = 0;
        for (int v = 1; v <= NM; v++) {
            double o_v = 0;
            for (int i = 0; i < res.n_copies; i++) {
                if (res.copy_dev[i] != d) continue;
                double a = res.copy_start[i] > res.op_start[v] ? res.copy_start[i] : res.op_start[v];
                double z = res.copy_end[i] < res.op_end[v] ? res.copy_end[i] : res.op_end[v];
                if (z > a) o_v += z - a;
            }
            ov[v - 1] = o_v;
            if (o_v > 0) { overlap += o_v; taken += res.op_end[v] - res.op_start[v]; n_ov++; }
            else alone[n_alone++] = res.op_end[v] - res.op_start[v];
        }
        if (n_alone < 3 || n_ov == 0) continue;   /* nothing to compare in this run */
        gsl_sort(alone, 1, (size_t)n_alone);
        double base = gsl_stats_median_from_sorted_data(alone, 1, (size_t)n_alone);
        if ((rc = add_itf(p, d, "copy_in", overlap, taken - n_ov * base, 1)) != DP_OK) dp_error_set(err, rc, "out of memory");
    }
    (void)ov;
    dp_exec_free(x);
    free(assign);
    dp_graph_free(g);
    return rc;
}

/* peer_busy of device d: matmuls of three sizes and elementwise adds of two, each timed with
 * the other devices idle, then busy (background sgemm loops on their cores) */
static int itf_peer_busy(dp_profile *p, int D, int d, background *bg, atomic_int *stop, const dp_profile_options *o,
                         dp_error *err)
{
    int cores[CPU_SETSIZE];
    const int nc = dp_exec_cpu_cores(cores, CPU_SETSIZE);
    int peers = 0;
    for (int e = 0; e < D; e++) peers += e != d && e < nc;
    if (peers == 0) return DP_OK;
    int rc = DP_OK;
    for (int c = 0; c < 5 && rc == DP_OK; c++) {
        probe pr;
        memset(&pr, 0, sizeof pr);
        pr.n_src = 1;
        pr.op_ndim = 2;
        if (c < 3) {
            static const int64_t dims[3] = {192, 256, 384};
            int64_t m = dims[c] < o->max_gemm ? dims[c] : o->max_gemm;
            pr.kind = "matmul";
            pr.src_shape[0] = pr.src_shape[1] = pr.op_shape[0] = pr.op_shape[1] = m;
            pr.op_work = 2.0 * (double)m * (double)m * (double)m;
            pr.einsum = "ij,jk->ik";
        } else {
            int64_t e = c == 3 ? o->max_elems / 4 : o->max_elems;
            pr.kind = "add";
            pr.n_src = 2;
            pr.src_shape[0] = pr.op_shape[0] = e / 256 > 0 ? e / 256 : 1;
            pr.src_shape[1] = pr.op_shape[1] = 256;
            pr.op_work = 2.0 * (double)(pr.op_shape[0] * 256);
        }
        double alone = 0, loaded = 0;
        if ((rc = run_probe_to(p, D, d, &pr, o, &alone, err)) != DP_OK) break;
        background_start(bg, D, d, o->nice, stop);
        rc = run_probe_to(p, D, d, &pr, o, &loaded, err);
        background_stop(bg, D, stop);
        if (rc != DP_OK) break;
        if (alone > 0 && (rc = add_itf(p, d, "peer_busy", alone, loaded, peers)) != DP_OK) dp_error_set(err, rc, "out of memory");
    }
    return rc;
}

int dp_profile_run(int n_devices, const char *const *names, const char *const *kinds, int n_kinds,
                   const dp_profile_options *o, dp_profile **out, dp_error *err)
{
    dp_profile_options def;
    if (!o) { dp_profile_options_init(&def); o = &def; }
    if (n_devices < 1) return dp_error_set(err, DP_EINVAL, "profile: %d devices", n_devices);
    if (o->repeats < 1 || o->passes < 1 || o->max_elems < 256 || o->max_gemm < 16)
        return dp_error_set(err, DP_EINVAL, "profile: repeats >= 1, passes >= 1, max_elems >= 256, max_gemm >= 16");
    /* a kind the profile cannot keep is refused (it was cut to 47 bytes: a kind no op has) */
    for (int k = 0; k < n_kinds; k++)
        if (strlen(kinds[k]) >= sizeof ((dp_profile_op *)0)->kind)
            return dp_error_set(err, DP_EINVAL, "profile: kind '%s' is longer than %zu bytes", kinds[k],
                                sizeof ((dp_profile_op *)0)->kind - 1);
    /* device names as the executor's backend gives them: cpu0, cpu1, ... (gpu0, ... for cuda) */
    const char *prefix = strcmp(o->backend ? o->backend : "cpu", "cuda") == 0 ? "gpu" : "cpu";
    dp_profile *p = profile_new(n_devices, o->backend, o->machine, names ? NULL : prefix);
    if (!p) return dp_error_set(err, DP_ENOMEM, "out of memory");
    for (int d = 0; names && d < n_devices; d++)
        if (!(p->device[d] = dp_alloc_strdup(names[d]))) { dp_profile_free(p); return dp_error_set(err, DP_ENOMEM, "out of memory"); }
    int rc = DP_OK;
    background *bg = dp_alloc_calloc((size_t)n_devices, sizeof *bg);
    atomic_int stop;
    atomic_init(&stop, 1);
    if (!bg) { dp_profile_free(p); return dp_error_set(err, DP_ENOMEM, "out of memory"); }
    const int total = n_kinds * n_devices + n_devices * (n_devices - 1) +
                      (n_devices > 1 && o->interference ? o->passes * n_devices : 0);
    int done = 0;
    char what[160];
    /* a sweep that failed is not reported done (it printed "profiled 1/22" before the error) */
#define PROGRESS(...) do { \
        if (rc != DP_OK) break; \
        done++; \
        if (o->progress) { snprintf(what, sizeof what, __VA_ARGS__); o->progress(done, total, what, o->progress_ctx); } \
    } while (0)
    /* each kind on every device in turn (not every kind on one device, then the next): the
     * devices' sweeps of a kind lie seconds apart, and the host's drift is alike for them */
    for (int i = 0; i < n_kinds && rc == DP_OK; i++)
        for (int d = 0; d < n_devices && rc == DP_OK; d++) {
            if (o->background) background_start(bg, n_devices, d, o->nice, &stop);
            rc = profile_kind(p, n_devices, d, kinds[i], o, err);
            if (o->background) background_stop(bg, n_devices, &stop);
            PROGRESS("%s on %s", kinds[i], p->device[d]);
        }
    /* copies: the source device is idle once its op ended; the destination's core runs the copy
     * worker; with background load, every device but the destination is busy */
    for (int b = 0; b < n_devices && rc == DP_OK; b++) {
        if (o->background) background_start(bg, n_devices, b, o->nice, &stop);
        for (int a = 0; a < n_devices && rc == DP_OK; a++)
            if (a != b) {
                rc = profile_route(p, n_devices, a, b, o, err);
                PROGRESS("copies %s -> %s", p->device[a], p->device[b]);
            }
        if (o->background) background_stop(bg, n_devices, &stop);
    }
    /* interference: interleaved passes over the devices (o->passes); each probe compares times
     * taken moments apart (matmuls with and without copies in one run; an op alone, then with its
     * peers busy), and the passes spread the host's drift over every device */
    for (int r = 0; r < o->passes && n_devices > 1 && o->interference && rc == DP_OK; r++)
        for (int d = 0; d < n_devices && rc == DP_OK; d++) {
            rc = itf_copy_in(p, n_devices, d, (d + 1) % n_devices, o, err);
            if (rc == DP_OK) rc = itf_peer_busy(p, n_devices, d, bg, &stop, o, err);
            PROGRESS("interference on %s, pass %d", p->device[d], r + 1);
        }
#undef PROGRESS
    free(bg);
    if (rc != DP_OK) { dp_profile_free(p); return rc; }
    *out = p;
    return DP_OK;
}

int dp_profile_save(const dp_profile *p, const char *path, dp_error *err)
{
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("doppler-profile"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "machine", json_string(p->machine));
    json_object_set_new(root, "backend", json_string(p->backend));
    json_t *devs = json_array();
    for (int d = 0; d < p->n_devices; d++) json_array_append_new(devs, json_string(p->device[d]));
    json_object_set_new(root, "devices", devs);
    json_object_set_new(root, "op_sample",
                        json_string("median gap between the starts of consecutive ops of one size on a busy device, per run (s)"));
    json_object_set_new(root, "copy_sample", json_string("consumer start - producer end across the route, per run (s)"));
    json_t *ops = json_array();
    for (int i = 0; i < p->n_ops; i++) {
        const dp_profile_op *o = &p->ops[i];
        json_t *j = json_pack("{s:s,s:s,s:f,s:f,s:f}", "device", p->device[o->device], "kind", o->kind, "flops", o->flops,
                              "bytes", o->bytes, "seconds", o->seconds);
        if (o->graph_op) json_object_set_new(j, "graph_op", json_true());
        json_array_append_new(ops, j);
    }
    json_object_set_new(root, "ops", ops);
    json_t *cps = json_array();
    for (int i = 0; i < p->n_copies; i++) {
        const dp_profile_copy *c = &p->copies[i];
        json_array_append_new(cps, json_pack("{s:s,s:s,s:f,s:f}", "src", p->device[c->src], "dst", p->device[c->dst],
                                             "bytes", c->bytes, "seconds", c->seconds));
    }
    json_object_set_new(root, "copies", cps);
    json_object_set_new(root, "interference_sample",
                        json_string("copy_in: x = seconds copies into the device overlapped its matmuls, y = seconds those "
                                    "matmuls took beyond their time alone; peer_busy: x = seconds of an op with the other "
                                    "devices idle, y = with `peers` of them busy"));
    json_t *itf = json_array();
    for (int i = 0; i < p->n_itf; i++) {
        const dp_profile_itf *t = &p->itf[i];
        json_array_append_new(itf, json_pack("{s:s,s:s,s:f,s:f,s:i}", "device", p->device[t->device], "kind", t->kind,
                                             "x", t->x, "y", t->y, "peers", t->peers));
    }
    json_object_set_new(root, "interference", itf);
    int rc = dp_json_dump_atomic(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10), err);
    json_decref(root);
    return rc;
}

static int dev_index(const dp_profile *p, const char *name)
{
    for (int d = 0; d < p->n_devices; d++)
        if (strcmp(p->device[d], name) == 0) return d;
    return -1;
}

dp_profile *dp_profile_load(const char *path, dp_error *err)
{
    json_t *root = dp_json_load(path, err);
    if (!root) return NULL;
    dp_profile *p = NULL;
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "doppler-profile") != 0) {
        dp_error_set(err, DP_EINVAL, "%s: field \"format\" must be \"doppler-profile\"", path);
        goto fail;
    }
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        /* a later version's fields would be read by this version's meaning */
        dp_error_set(err, DP_EINVAL, "%s: field \"version\": only version 1 is known", path);
        goto fail;
    }
    /* every key known, as the calibration and topology readers: a misspelt optional key
     * ("interferance", "graph_ops") was ignored, and the calibration fitted without what it held
     * (a review) */
    static const char *const root_keys[] = {"format", "version", "machine", "backend", "devices", "op_sample",
                                            "copy_sample", "ops", "copies", "interference_sample", "interference", NULL};
    static const char *const op_keys[] = {"device", "kind", "flops", "bytes", "seconds", "graph_op", NULL};
    static const char *const copy_keys[] = {"src", "dst", "bytes", "seconds", NULL};
    static const char *const itf_keys[] = {"device", "kind", "x", "y", "peers", NULL};
    char where[64];
    if (json_is_object(root) && dp_json_known_keys(root, root_keys, path, "profile", err) != DP_OK) goto fail;
    json_t *devs = json_object_get(root, "devices"), *ops = json_object_get(root, "ops"),
           *cps = json_object_get(root, "copies");
    if (!json_is_array(devs) || json_array_size(devs) == 0 || !json_is_array(ops) || !json_is_array(cps)) {
        dp_error_set(err, DP_EINVAL, "%s: fields \"devices\", \"ops\" and \"copies\" must be arrays (devices non-empty)", path);
        goto fail;
    }
    json_t *m = json_object_get(root, "machine"), *be = json_object_get(root, "backend");
    p = profile_new((int)json_array_size(devs), json_is_string(be) ? json_string_value(be) : "cpu",
                    json_is_string(m) ? json_string_value(m) : "", NULL);
    if (!p) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    for (int d = 0; d < p->n_devices; d++) {
        json_t *s = json_array_get(devs, (size_t)d);
        if (!json_is_string(s)) { dp_error_set(err, DP_EINVAL, "%s: devices[%d] must be a string", path, d); goto fail; }
        /* a name twice: samples are found by name, so the second device had none and the fit
         * failed ("no op samples for device core0": a review) */
        for (int e = 0; e < d; e++)
            if (strcmp(p->device[e], json_string_value(s)) == 0) {
                dp_error_set(err, DP_EINVAL, "%s: devices[%d]: \"%s\" appears twice (first at devices[%d])", path, d,
                             json_string_value(s), e);
                goto fail;
            }
        p->device[d] = dp_alloc_strdup(json_string_value(s));
        if (!p->device[d]) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    }
    size_t i;
    json_t *o;
    json_array_foreach(ops, i, o) {
        const char *dev = NULL, *kind = NULL;
        double f = -1, b = -1, s = -1;
        snprintf(where, sizeof where, "ops[%zu]", i);
        if (json_is_object(o) && dp_json_known_keys(o, op_keys, path, where, err) != DP_OK) goto fail;
        if (json_unpack(o, "{s:s,s:s,s:F,s:F,s:F}", "device", &dev, "kind", &kind, "flops", &f, "bytes", &b, "seconds", &s) != 0 ||
            dev_index(p, dev) < 0 || !(f >= 0 && b >= 0 && s >= 0 && isfinite(f + b + s))) {
            dp_error_set(err, DP_EINVAL, "%s: ops[%zu]: needs a known device, kind, and finite flops, bytes, seconds >= 0", path, i);
            goto fail;
        }
        /* a boolean (dp_profile_save writes true): 1 read as false made a graph op a sweep sample */
        json_t *go = json_object_get(o, "graph_op");
        if (go && !json_is_boolean(go)) {
            dp_error_set(err, DP_EINVAL, "%s: ops[%zu].graph_op: must be true or false", path, i);
            goto fail;
        }
        int graph_op = json_is_true(go);
        if (strlen(kind) >= sizeof p->ops[0].kind) {
            dp_error_set(err, DP_EINVAL, "%s: ops[%zu]: kind longer than %zu bytes", path, i, sizeof p->ops[0].kind - 1);
            goto fail;
        }
        if (add_op(p, dev_index(p, dev), kind, f, b, s, graph_op) != DP_OK) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    }
    json_array_foreach(cps, i, o) {
        const char *a = NULL, *b = NULL;
        double by = -1, s = -1;
        snprintf(where, sizeof where, "copies[%zu]", i);
        if (json_is_object(o) && dp_json_known_keys(o, copy_keys, path, where, err) != DP_OK) goto fail;
        if (json_unpack(o, "{s:s,s:s,s:F,s:F}", "src", &a, "dst", &b, "bytes", &by, "seconds", &s) != 0 ||
            dev_index(p, a) < 0 || dev_index(p, b) < 0 || !(by >= 0 && s >= 0 && isfinite(by + s))) {
            dp_error_set(err, DP_EINVAL, "%s: copies[%zu]: needs known src and dst devices, finite bytes, seconds >= 0", path, i);
            goto fail;
        }
        /* a copy from a device to itself is no route's: it was dropped by the fit, whose error
         * then named the route left short of samples, not this entry */
        if (strcmp(a, b) == 0) {
            dp_error_set(err, DP_EINVAL, "%s: copies[%zu]: src and dst are the same device \"%s\"", path, i, a);
            goto fail;
        }
        if (add_copy(p, dev_index(p, a), dev_index(p, b), by, s) != DP_OK) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    }
    json_t *itf = json_object_get(root, "interference");  /* optional: older profiles lack it */
    if (itf && !json_is_array(itf)) { dp_error_set(err, DP_EINVAL, "%s: field \"interference\" must be an array", path); goto fail; }
    json_array_foreach(itf, i, o) {
        const char *dev = NULL, *kind = NULL;
        double x = -1, y = 0;
        int peers = 0;
        snprintf(where, sizeof where, "interference[%zu]", i);
        if (json_is_object(o) && dp_json_known_keys(o, itf_keys, path, where, err) != DP_OK) goto fail;
        if (json_unpack(o, "{s:s,s:s,s:F,s:F,s:i}", "device", &dev, "kind", &kind, "x", &x, "y", &y, "peers", &peers) != 0 ||
            dev_index(p, dev) < 0 || (strcmp(kind, "copy_in") != 0 && strcmp(kind, "peer_busy") != 0) ||
            !(x >= 0 && isfinite(x) && isfinite(y)) || peers < 1) {
            dp_error_set(err, DP_EINVAL, "%s: interference[%zu]: needs a known device, kind copy_in or peer_busy, finite x >= 0 "
                         "and y, peers >= 1", path, i);
            goto fail;
        }
        if (add_itf(p, dev_index(p, dev), kind, x, y, peers) != DP_OK) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    }
    json_decref(root);
    return p;
fail:
    dp_profile_free(p);
    json_decref(root);
    return NULL;
}
