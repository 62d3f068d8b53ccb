/* dp_exec_cpu.c: the CPU backend of the real executor. A device is a core: its workers are
 * pinned to it (when there are enough cores), its memory is host memory it allocated, its
 * kernels are CBLAS (OpenBLAS, one thread) and plain loops, its copy engine is memcpy run by
 * its own copy worker. */
#define _GNU_SOURCE
#include "dp_exec_backend.h"
#include "dp_alloc.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the most cores a device map holds (CPU_SETSIZE: glibc's cpu_set_t) */
#define CPU_MAX_CORES CPU_SETSIZE

int dp_exec_cpu_cores(int *cores, int cap)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int i = 0; i < CPU_SETSIZE && n < cap; i++)
            if (CPU_ISSET(i, &set)) cores[n++] = i;
    if (n == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        for (int i = 0; i < (nc > 0 ? nc : 1) && n < cap; i++) cores[n++] = i;
    }
    return n;
}

int dp_exec_cpu_count(void)
{
    int cores[CPU_MAX_CORES];
    return dp_exec_cpu_cores(cores, CPU_MAX_CORES);
}

typedef struct cpu_ctx {
    int n_devices;
    int pin;     /* pin workers: only when every device gets its own core */
    int n_cores; /* the process's cores (dp_exec_cpu_cores) */
    int cores[CPU_MAX_CORES];
} cpu_ctx;

static int cpu_open(int n_devices, int pin, void **ctx, dp_error *err)
{
    cpu_ctx *c = dp_alloc_calloc(1, sizeof *c);
    if (!c) return dp_error_set(err, DP_ENOMEM, "cpu backend: out of memory");
    c->n_devices = n_devices;
    c->n_cores = dp_exec_cpu_cores(c->cores, CPU_MAX_CORES);
    c->pin = pin && c->n_cores >= n_devices;
    /* one sgemm per op on its device's core: OpenBLAS must not start threads of its own, which
     * would run on the other devices' cores */
    openblas_set_num_threads(1);
    *ctx = c;
    return DP_OK;
}

static void cpu_close(void *ctx)
{
    free(ctx);
}

static int cpu_bind(void *ctx, int dev, int role)
{
    (void)role;
    cpu_ctx *c = ctx;
    if (!c->pin) return DP_OK;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(c->cores[dev % c->n_cores], &set);
    /* a failed pin (restricted cpuset) only costs fidelity, not correctness */
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    return DP_OK;
}

static void *cpu_alloc(void *ctx, int dev, size_t bytes)
{
    (void)ctx; (void)dev;
    size_t n = (bytes + 63) / 64 * 64;
    if (n == 0) n = 64;
    return aligned_alloc(64, n);
}

static void cpu_free(void *ctx, int dev, void *p)
{
    (void)ctx; (void)dev;
    free(p);
}

static int cpu_fill(void *ctx, int dev, float *p, int64_t n, uint64_t seed, uint64_t salt)
{
    (void)ctx; (void)dev;
    for (int64_t i = 0; i < n; i++) p[i] = dp_exec_value(seed, salt, (uint64_t)i);
    return DP_OK;
}

static inline float f_relu(float x) { return fmaxf(x, 0.0f); } /* branch-free: signs are random */
static inline float f_gelu(float x) { return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))); }
static inline float f_silu(float x) { return x / (1.0f + expf(-x)); }
static inline float f_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
static inline float f_id(float x) { return x; }

/* out[i] = F(combination of a[i] (and b[i])): one pass over memory, a loop per function so
 * that each one vectorises (the switch is outside the loops) */
#define EW_LOOPS(F)                                                                    \
    do {                                                                               \
        if (!b) for (int64_t i = 0; i < n; i++) out[i] = F(a[i] * s);                  \
        else if (mul) for (int64_t i = 0; i < n; i++) out[i] = F(a[i] * b[i]);         \
        else for (int64_t i = 0; i < n; i++) out[i] = F((a[i] + b[i]) * s);            \
    } while (0)

static void ew_apply(int f, float *out, int64_t n, const float *a, const float *b, float s, int mul)
{
    switch (f) {
    case DP_EXEC_F_RELU: EW_LOOPS(f_relu); break;
    case DP_EXEC_F_GELU: EW_LOOPS(f_gelu); break;
    case DP_EXEC_F_SILU: EW_LOOPS(f_silu); break;
    case DP_EXEC_F_TANH: EW_LOOPS(tanhf); break;
    case DP_EXEC_F_SIGMOID: EW_LOOPS(f_sigmoid); break;
    case DP_EXEC_F_EXP: EW_LOOPS(expf); break;
    default: EW_LOOPS(f_id); break;
    }
}

/* weights for a GEMM operand of `need` floats: the same slice on every device (the offset
 * depends on the op only), so results do not depend on the assignment */
static const float *weights_for(const float *w, int64_t w_elems, int v, int slot, int64_t need)
{
    int64_t span = w_elems - need;
    int64_t off = span > 0 ? ((int64_t)v * 128 + slot * 64) % span : 0;
    return w + (off / 16) * 16;
}

static void kernel_gemm(int v, const dp_exec_kernel *k, float *out, const float *const *in,
                        const int64_t *in_elems, int n_in, const float *w, int64_t w_elems)
{
    const int64_t m = k->m, n = k->n, kk = k->k;
    const float *a = NULL, *b = NULL;
    int next = 0;
    if (next < n_in && in_elems[next] >= m * kk) a = in[next++];
    if (next < n_in && in_elems[next] >= kk * n) b = in[next++];
    if (!a) a = weights_for(w, w_elems, v, 0, m * kk);
    if (!b) b = weights_for(w, w_elems, v, 1, kk * n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)kk, 1.0f / (float)kk, a,
                (int)kk, b, (int)n, 0.0f, out, (int)n);
}

static void kernel_elemwise(const dp_exec_kernel *k, float *out, const float *const *in,
                            const int64_t *in_elems, int n_in)
{
    const int64_t n = k->out_elems;
    const int mul = k->func == DP_EXEC_F_MUL;
    const int f = k->func == DP_EXEC_F_SOFTMAX ? DP_EXEC_F_IDENTITY : k->func;
    const float s = mul || n_in == 0 ? 1.0f : 1.0f / (float)n_in;
    if (n_in == 1 && in_elems[0] >= n) {
        ew_apply(f, out, n, in[0], NULL, s, mul);
    } else if (n_in == 2 && in_elems[0] >= n && in_elems[1] >= n) {
        ew_apply(f, out, n, in[0], in[1], s, mul);
    } else {
        /* more inputs, or broadcast ones (a bias): accumulate, then apply in place */
        for (int j = 0; j < n_in; j++) {
            const float *x = in[j];
            const int64_t nx = in_elems[j];
            for (int64_t i0 = 0; i0 < n; i0 += nx) {
                const int64_t len = n - i0 < nx ? n - i0 : nx;
                float *o = out + i0;
                if (j == 0) memcpy(o, x, (size_t)len * sizeof(float));
                else if (mul) for (int64_t i = 0; i < len; i++) o[i] *= x[i];
                else for (int64_t i = 0; i < len; i++) o[i] += x[i];
            }
        }
        ew_apply(f, out, n, out, NULL, s, 0);
    }
    if (k->func == DP_EXEC_F_SOFTMAX) {
        const int64_t r = k->row > 0 && n % k->row == 0 ? k->row : n;
        for (int64_t i0 = 0; i0 < n; i0 += r) {
            float mx = -INFINITY, sum = 0;
            for (int64_t i = i0; i < i0 + r; i++) mx = fmaxf(mx, out[i]);
            for (int64_t i = i0; i < i0 + r; i++) { out[i] = expf(out[i] - mx); sum += out[i]; }
            const float inv = 1.0f / sum;
            for (int64_t i = i0; i < i0 + r; i++) out[i] *= inv;
        }
    }
}

static void kernel_reduce(const dp_exec_kernel *k, float *out, const float *const *in,
                          const int64_t *in_elems, int n_in)
{
    const int64_t n = k->out_elems;
    int same = n_in > 0;
    for (int j = 0; j < n_in; j++) same &= in_elems[j] == n;
    if (same) {
        /* an n-ary sum of equal shapes (partial results of a split contraction: "ac+ac->ac"):
         * one pass over the output in cache-sized blocks, the same additions in the same order
         * as the general loop below, so the result is bit for bit the same */
        const float s = n_in > 1 ? 1.0f / (float)n_in : 1.0f;
        enum { BLOCK = 2048 };
        for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
            const int64_t len = n - i0 < BLOCK ? n - i0 : BLOCK;
            float *o = out + i0;
            for (int64_t i = 0; i < len; i++) o[i] = 0.0f + in[0][i0 + i];
            for (int j = 1; j < n_in; j++)
                for (int64_t i = 0; i < len; i++) o[i] += in[j][i0 + i];
            if (n_in > 1)
                for (int64_t i = 0; i < len; i++) o[i] *= s;
        }
        return;
    }
    memset(out, 0, (size_t)n * sizeof(float));
    int64_t total = 0;
    for (int j = 0; j < n_in; j++) {
        const float *x = in[j];
        const int64_t nx = in_elems[j];
        total += nx;
        /* out[i mod n] += x[i], in runs of n so the inner loop vectorises */
        for (int64_t i0 = 0; i0 < nx; i0 += n) {
            int64_t len = nx - i0 < n ? nx - i0 : n;
            for (int64_t i = 0; i < len; i++) out[i] += x[i0 + i];
        }
    }
    const int64_t per = (total + n - 1) / n;
    if (per > 1) {
        const float s = 1.0f / (float)per;
        for (int64_t i = 0; i < n; i++) out[i] *= s;
    }
}

#define SYNTH_T 64
#define SYNTH_C 256

static void kernel_synth(const dp_exec_kernel *k, float *out, const float *const *in,
                         const int64_t *in_elems, int n_in, const float *w)
{
    /* read every input: the data dependence is real and so is the memory traffic */
    double s = 0;
    for (int j = 0; j < n_in; j++) {
        float part = 0;
        for (int64_t i = 0; i < in_elems[j]; i++) part += in[j][i];
        s += part / (double)in_elems[j];
    }
    float c[SYNTH_T * SYNTH_T];
    const float *a = w, *b = w + SYNTH_T * SYNTH_C;
    const float alpha = 1.0f / (float)k->k;
    for (int64_t done = 0; done < k->k; done += SYNTH_C) {
        int kc = (int)(k->k - done < SYNTH_C ? k->k - done : SYNTH_C);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, SYNTH_T, SYNTH_T, kc, alpha, a, SYNTH_C, b,
                    SYNTH_T, done == 0 ? 0.0f : 1.0f, c, SYNTH_T);
    }
    const float add = n_in ? (float)(s / n_in) : 0.0f;
    for (int64_t i0 = 0; i0 < k->out_elems; i0 += SYNTH_T * SYNTH_T) {
        const int64_t len = k->out_elems - i0 < SYNTH_T * SYNTH_T ? k->out_elems - i0 : SYNTH_T * SYNTH_T;
        for (int64_t i = 0; i < len; i++) out[i0 + i] = c[i] + add;
    }
}

static int cpu_run(void *ctx, int dev, int v, const dp_exec_kernel *k, float *out, const float *const *in,
                   const int64_t *in_elems, int n_in, const float *w, int64_t w_elems, uint64_t seed)
{
    (void)ctx; (void)dev;
    switch (k->cls) {
    case DP_EXEC_SOURCE: cpu_fill(ctx, dev, out, k->out_elems, seed, (uint64_t)v + 1); break;
    case DP_EXEC_GEMM: kernel_gemm(v, k, out, in, in_elems, n_in, w, w_elems); break;
    case DP_EXEC_ELEMWISE: kernel_elemwise(k, out, in, in_elems, n_in); break;
    case DP_EXEC_REDUCE: kernel_reduce(k, out, in, in_elems, n_in); break;
    case DP_EXEC_SYNTH: kernel_synth(k, out, in, in_elems, n_in, w); break;
    default: return DP_EINVAL;
    }
    return DP_OK;
}

static int cpu_copy(void *ctx, int dst_dev, void *dst, int src_dev, const void *src, size_t bytes)
{
    (void)ctx; (void)dst_dev; (void)src_dev;
    memcpy(dst, src, bytes);
    return DP_OK;
}

static int cpu_read(void *ctx, int dev, void *host, const void *src, size_t bytes)
{
    (void)ctx; (void)dev;
    memcpy(host, src, bytes);
    return DP_OK;
}

const dp_exec_backend dp_exec_backend_cpu = {
    "cpu", "cpu", cpu_open, cpu_close, cpu_bind, cpu_alloc, cpu_free, cpu_fill, cpu_run, cpu_copy, cpu_read,
};
