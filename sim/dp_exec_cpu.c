/* dp_exec_cpu.c: the CPU backend of the real executor. A device is a core: its workers are
 * pinned to it (when there are enough cores), its memory is host memory it allocated, its
 * kernels are CBLAS (OpenBLAS, one thread) and plain loops, its copy engine is memcpy run by
 * its own copy worker. */
#define _GNU_SOURCE
#include "dp_exec_backend.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct cpu_ctx {
    int n_devices;
    int pin;     /* pin workers: only when every device gets its own core */
    int n_cores;
} cpu_ctx;

static int cpu_open(int n_devices, int pin, void **ctx, dp_error *err)
{
    cpu_ctx *c = calloc(1, sizeof *c);
    if (!c) return dp_error_set(err, DP_ENOMEM, "cpu backend: out of memory");
    c->n_devices = n_devices;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    c->n_cores = nc > 0 ? (int)nc : 1;
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
    CPU_SET(dev % c->n_cores, &set);
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

static inline float apply_f(int f, float x)
{
    switch (f) {
    case DP_EXEC_F_RELU: return x > 0 ? x : 0;
    case DP_EXEC_F_GELU: return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
    case DP_EXEC_F_SILU: return x / (1.0f + expf(-x));
    case DP_EXEC_F_TANH: return tanhf(x);
    case DP_EXEC_F_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case DP_EXEC_F_EXP: return expf(x);
    default: return x;
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
    for (int j = 0; j < n_in; j++) {
        const float *x = in[j];
        const int64_t nx = in_elems[j];
        if (nx >= n) {
            if (j == 0) memcpy(out, x, (size_t)n * sizeof(float));
            else if (mul) for (int64_t i = 0; i < n; i++) out[i] *= x[i];
            else for (int64_t i = 0; i < n; i++) out[i] += x[i];
        } else {
            for (int64_t i = 0; i < n; i++) {
                float y = x[i % nx];
                out[i] = j == 0 ? y : mul ? out[i] * y : out[i] + y;
            }
        }
    }
    if (k->func == DP_EXEC_F_SOFTMAX) {
        const int64_t r = k->row > 0 && n % k->row == 0 ? k->row : n;
        const float s = mul ? 1.0f : 1.0f / (float)n_in;
        for (int64_t i0 = 0; i0 < n; i0 += r) {
            float mx = -INFINITY, sum = 0;
            for (int64_t i = i0; i < i0 + r; i++) mx = fmaxf(mx, out[i] * s);
            for (int64_t i = i0; i < i0 + r; i++) { out[i] = expf(out[i] * s - mx); sum += out[i]; }
            for (int64_t i = i0; i < i0 + r; i++) out[i] /= sum;
        }
        return;
    }
    const float s = mul || n_in == 0 ? 1.0f : 1.0f / (float)n_in;
    const int f = k->func;
    if (f == DP_EXEC_F_IDENTITY || f == DP_EXEC_F_MUL) {
        if (s != 1.0f) for (int64_t i = 0; i < n; i++) out[i] *= s;
    } else {
        for (int64_t i = 0; i < n; i++) out[i] = apply_f(f, out[i] * s);
    }
}

static void kernel_reduce(const dp_exec_kernel *k, float *out, const float *const *in,
                          const int64_t *in_elems, int n_in)
{
    const int64_t n = k->out_elems;
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
    for (int64_t i = 0; i < k->out_elems; i++) out[i] = c[i % (SYNTH_T * SYNTH_T)] + add;
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
