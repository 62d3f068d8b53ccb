/* dp_exec_cuda.c: the CUDA backend of the real executor (configure --with-cuda).
 *
 * A device is a GPU. Per GPU: one compute stream (the executor's compute worker issues an op's
 * kernels on it and waits for them), one copy stream (the copy worker issues peer copies on it:
 * the GPU's copy engine), a cuBLAS handle bound to the compute stream, and the elementwise,
 * reduction, fill and synthetic kernels compiled at open with NVRTC (so no nvcc is needed to
 * build). Dependencies are resolved by the executor's worker threads on the host: every call
 * below returns when its work is done on the GPU (stream synchronisation), which keeps the
 * executor's timings and its dependency counting the same as on the CPU backend.
 *
 * The kernels compute what dp_exec_cpu.c computes (same formulas, float arithmetic in a
 * different order: results agree to rounding, not bit for bit, across backends; within the CUDA
 * backend an assignment still does not change them, which is what the tests check).
 *
 * STATUS: written without a GPU at hand; not compiled or tested in this project's CI (see the
 * validator's note). Build with ./configure --with-cuda[=PREFIX] and run tests/test_exec with
 * DOPPLER_EXEC_BACKEND=cuda on a machine with one or more GPUs.
 */
#ifdef DP_WITH_CUDA
#include "dp_exec_backend.h"
#include "dp_alloc.h"

#include <cuda.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kernel_src =
    "typedef unsigned long long u64;\n"
    "__device__ float dp_value(u64 seed, u64 salt, u64 i) {\n"
    "  u64 z = seed * 0x9E3779B97F4A7C15ull + salt * 0xBF58476D1CE4E5B9ull + i * 0x94D049BB133111EBull;\n"
    "  z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ull; z ^= z >> 27; z *= 0x94D049BB133111EBull; z ^= z >> 31;\n"
    "  return (float)((double)(z >> 40) / (double)(1ull << 23) - 1.0); }\n"
    "__device__ float dp_f(int f, float x) {\n"
    "  switch (f) { case 1: return fmaxf(x, 0.0f);\n"
    "  case 2: return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));\n"
    "  case 3: return x / (1.0f + expf(-x)); case 4: return tanhf(x);\n"
    "  case 5: return 1.0f / (1.0f + expf(-x)); case 6: return expf(x); default: return x; } }\n"
    "extern \"C\" __global__ void dp_fill(float *p, long long n, u64 seed, u64 salt) {\n"
    "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)\n"
    "    p[i] = dp_value(seed, salt, (u64)i); }\n"
    /* out[i] = combine(out[i], x[i mod nx]) for input j (j == 0: assign) */
    "extern \"C\" __global__ void dp_accum(float *out, long long n, const float *x, long long nx, int j, int mul) {\n"
    "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {\n"
    "    float y = x[i % nx]; out[i] = j == 0 ? y : mul ? out[i] * y : out[i] + y; } }\n"
    "extern \"C\" __global__ void dp_apply(float *out, long long n, float s, int f) {\n"
    "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)\n"
    "    out[i] = dp_f(f, out[i] * s); }\n"
    /* one block per row: max, exp, sum, scale */
    "extern \"C\" __global__ void dp_softmax(float *out, long long rows, long long r) {\n"
    "  __shared__ float red[256]; float *x = out + blockIdx.x * r;\n"
    "  float m = -3.4e38f; for (long long i = threadIdx.x; i < r; i += blockDim.x) m = fmaxf(m, x[i]);\n"
    "  red[threadIdx.x] = m; __syncthreads();\n"
    "  for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]); __syncthreads(); }\n"
    "  m = red[0]; __syncthreads(); float t = 0;\n"
    "  for (long long i = threadIdx.x; i < r; i += blockDim.x) { x[i] = expf(x[i] - m); t += x[i]; }\n"
    "  red[threadIdx.x] = t; __syncthreads();\n"
    "  for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s]; __syncthreads(); }\n"
    "  float inv = 1.0f / red[0]; for (long long i = threadIdx.x; i < r; i += blockDim.x) x[i] *= inv; }\n"
    "extern \"C\" __global__ void dp_reduce(float *out, long long n, const float *x, long long nx) {\n"
    "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nx; i += (long long)gridDim.x * blockDim.x)\n"
    "    atomicAdd(&out[i % n], x[i]); }\n"
    "extern \"C\" __global__ void dp_sum(float *acc, const float *x, long long nx, float w) {\n"
    "  float t = 0; for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nx; i += (long long)gridDim.x * blockDim.x) t += x[i];\n"
    "  atomicAdd(acc, t * w); }\n"
    "extern \"C\" __global__ void dp_synth_out(float *out, long long n, const float *c, const float *acc) {\n"
    "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)\n"
    "    out[i] = c[i % 4096] + acc[0]; }\n";

enum { K_FILL, K_ACCUM, K_APPLY, K_SOFTMAX, K_REDUCE, K_SUM, K_SYNTH_OUT, K_N };
static const char *const kernel_names[K_N] = {"dp_fill", "dp_accum", "dp_apply", "dp_softmax", "dp_reduce", "dp_sum", "dp_synth_out"};

typedef struct gpu {
    cudaStream_t compute, copy;
    cublasHandle_t blas;
    CUmodule mod;
    CUfunction fn[K_N];
    float *scratch;  /* 64 x 64 synthetic tile + 1 accumulator */
} gpu;

typedef struct cuda_ctx {
    int n;
    gpu *g;
} cuda_ctx;

#define CU_OK(x) ((x) == cudaSuccess)

static void cuda_close(void *ctx)
{
    cuda_ctx *c = ctx;
    if (!c) return;
    for (int d = 0; d < c->n; d++) {
        gpu *g = &c->g[d];
        cudaSetDevice(d);
        if (g->blas) cublasDestroy(g->blas);
        if (g->compute) cudaStreamDestroy(g->compute);
        if (g->copy) cudaStreamDestroy(g->copy);
        if (g->scratch) cudaFree(g->scratch);
        if (g->mod) cuModuleUnload(g->mod);
    }
    free(c->g);
    free(c);
}

static int compile_ptx(char **ptx, dp_error *err)
{
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, kernel_src, "doppler_exec.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return dp_error_set(err, DP_EUNSUPPORTED, "cuda backend: NVRTC cannot create the kernel program");
    const char *opts[] = {"--use_fast_math"};
    nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
    if (r != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = dp_alloc_malloc(n + 1);
        if (log) { nvrtcGetProgramLog(prog, log); log[n] = 0; }
        dp_error_set(err, DP_EUNSUPPORTED, "cuda backend: NVRTC: %s", log ? log : nvrtcGetErrorString(r));
        free(log);
        nvrtcDestroyProgram(&prog);
        return DP_EUNSUPPORTED;
    }
    size_t n = 0;
    nvrtcGetPTXSize(prog, &n);
    *ptx = dp_alloc_malloc(n);
    if (!*ptx) { nvrtcDestroyProgram(&prog); return dp_error_set(err, DP_ENOMEM, "out of memory"); }
    nvrtcGetPTX(prog, *ptx);
    nvrtcDestroyProgram(&prog);
    return DP_OK;
}

static int cuda_open(int n_devices, int pin, void **ctx, dp_error *err)
{
    (void)pin;
    int have = 0;
    if (!CU_OK(cudaGetDeviceCount(&have)) || have < n_devices)
        return dp_error_set(err, DP_EUNSUPPORTED, "cuda backend: %d GPUs asked, %d present", n_devices, have);
    cuda_ctx *c = dp_alloc_calloc(1, sizeof *c);
    if (!c || !(c->g = dp_alloc_calloc((size_t)n_devices, sizeof(gpu)))) { free(c); return dp_error_set(err, DP_ENOMEM, "out of memory"); }
    c->n = n_devices;
    char *ptx = NULL;
    int rc = compile_ptx(&ptx, err);
    if (rc != DP_OK) { cuda_close(c); return rc; }
    for (int d = 0; d < n_devices; d++) {
        gpu *g = &c->g[d];
        if (!CU_OK(cudaSetDevice(d)) || !CU_OK(cudaFree(0)) || /* create the primary context */
            !CU_OK(cudaStreamCreateWithFlags(&g->compute, cudaStreamNonBlocking)) ||
            !CU_OK(cudaStreamCreateWithFlags(&g->copy, cudaStreamNonBlocking)) ||
            cublasCreate(&g->blas) != CUBLAS_STATUS_SUCCESS || cublasSetStream(g->blas, g->compute) != CUBLAS_STATUS_SUCCESS ||
            !CU_OK(cudaMalloc((void **)&g->scratch, (4096 + 64) * sizeof(float))) ||
            cuModuleLoadData(&g->mod, ptx) != CUDA_SUCCESS) {
            free(ptx);
            cuda_close(c);
            return dp_error_set(err, DP_EUNSUPPORTED, "cuda backend: cannot set up GPU %d", d);
        }
        for (int k = 0; k < K_N; k++)
            if (cuModuleGetFunction(&g->fn[k], g->mod, kernel_names[k]) != CUDA_SUCCESS) {
                free(ptx);
                cuda_close(c);
                return dp_error_set(err, DP_EUNSUPPORTED, "cuda backend: kernel %s missing", kernel_names[k]);
            }
        /* peer access where the hardware has it; elsewhere cudaMemcpyPeer stages through the host */
        for (int e = 0; e < n_devices; e++) {
            int ok = 0;
            if (e != d && CU_OK(cudaDeviceCanAccessPeer(&ok, d, e)) && ok) cudaDeviceEnablePeerAccess(e, 0);
        }
    }
    free(ptx);
    cudaGetLastError(); /* "peer access already enabled" is not an error here */
    *ctx = c;
    return DP_OK;
}

static int cuda_bind(void *ctx, int dev, int role)
{
    (void)ctx; (void)role;
    return CU_OK(cudaSetDevice(dev)) ? DP_OK : DP_EIO;
}

static void *cuda_alloc(void *ctx, int dev, size_t bytes)
{
    (void)ctx;
    void *p = NULL;
    if (!CU_OK(cudaSetDevice(dev)) || !CU_OK(cudaMalloc(&p, bytes ? bytes : 64))) return NULL;
    return p;
}

static void cuda_free(void *ctx, int dev, void *p)
{
    (void)ctx;
    cudaSetDevice(dev);
    cudaFree(p);
}

static int launch(gpu *g, int k, long long n, void **args, unsigned block, unsigned shared)
{
    long long grid = (n + block - 1) / block;
    if (grid > 65535) grid = 65535;
    if (grid < 1) grid = 1;
    return cuLaunchKernel(g->fn[k], (unsigned)grid, 1, 1, block, 1, 1, shared, (CUstream)g->compute, args, NULL) == CUDA_SUCCESS
               ? DP_OK : DP_EIO;
}

static int cuda_fill(void *ctx, int dev, float *p, int64_t n, uint64_t seed, uint64_t salt)
{
    gpu *g = &((cuda_ctx *)ctx)->g[dev];
    cudaSetDevice(dev);
    long long nn = n;
    unsigned long long s = seed, t = salt;
    void *args[] = {&p, &nn, &s, &t};
    if (launch(g, K_FILL, nn, args, 256, 0) != DP_OK) return DP_EIO;
    return CU_OK(cudaStreamSynchronize(g->compute)) ? DP_OK : DP_EIO;
}

static const float *weights_for(const float *w, int64_t w_elems, int v, int slot, int64_t need)
{
    int64_t span = w_elems - need;
    int64_t off = span > 0 ? ((int64_t)v * 128 + slot * 64) % span : 0;
    return w + (off / 16) * 16;
}

static int cuda_run(void *ctx, int dev, int v, const dp_exec_kernel *k, float *out, const float *const *in,
                    const int64_t *in_elems, int n_in, const float *w, int64_t w_elems, uint64_t seed)
{
    gpu *g = &((cuda_ctx *)ctx)->g[dev];
    long long n = k->out_elems;
    int rc = DP_OK;
    switch (k->cls) {
    case DP_EXEC_SOURCE: {
        unsigned long long s = seed, t = (unsigned long long)v + 1;
        void *args[] = {&out, &n, &s, &t};
        rc = launch(g, K_FILL, n, args, 256, 0);
        break;
    }
    case DP_EXEC_GEMM: {
        const int64_t m = k->m, nn = k->n, kk = k->k;
        const float *a = NULL, *b = NULL;
        int next = 0;
        if (next < n_in && in_elems[next] >= m * kk) a = in[next++];
        if (next < n_in && in_elems[next] >= kk * nn) b = in[next++];
        if (!a) a = weights_for(w, w_elems, v, 0, m * kk);
        if (!b) b = weights_for(w, w_elems, v, 1, kk * nn);
        /* row-major C = A B is column-major C^T = B^T A^T */
        const float alpha = 1.0f / (float)kk, beta = 0.0f;
        rc = cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)nn, (int)m, (int)kk, &alpha, b, (int)nn, a, (int)kk, &beta,
                         out, (int)nn) == CUBLAS_STATUS_SUCCESS ? DP_OK : DP_EIO;
        break;
    }
    case DP_EXEC_ELEMWISE: {
        int mul = k->func == DP_EXEC_F_MUL;
        for (int j = 0; j < n_in && rc == DP_OK; j++) {
            const float *x = in[j];
            long long nx = in_elems[j];
            void *args[] = {&out, &n, &x, &nx, &j, &mul};
            rc = launch(g, K_ACCUM, n, args, 256, 0);
        }
        float s = mul || n_in == 0 ? 1.0f : 1.0f / (float)n_in;
        int f = k->func == DP_EXEC_F_SOFTMAX || k->func == DP_EXEC_F_MUL ? DP_EXEC_F_IDENTITY : k->func;
        void *args[] = {&out, &n, &s, &f};
        if (rc == DP_OK) rc = launch(g, K_APPLY, n, args, 256, 0);
        if (rc == DP_OK && k->func == DP_EXEC_F_SOFTMAX) {
            long long r = k->row > 0 && n % k->row == 0 ? k->row : n, rows = n / r;
            void *a2[] = {&out, &rows, &r};
            long long grid = rows;
            rc = cuLaunchKernel(g->fn[K_SOFTMAX], (unsigned)grid, 1, 1, 256, 1, 1, 0, (CUstream)g->compute, a2, NULL) == CUDA_SUCCESS
                     ? DP_OK : DP_EIO;
        }
        break;
    }
    case DP_EXEC_REDUCE: {
        if (!CU_OK(cudaMemsetAsync(out, 0, (size_t)n * sizeof(float), g->compute))) return DP_EIO;
        int64_t total = 0;
        for (int j = 0; j < n_in && rc == DP_OK; j++) {
            const float *x = in[j];
            long long nx = in_elems[j];
            total += nx;
            void *args[] = {&out, &n, &x, &nx};
            rc = launch(g, K_REDUCE, nx, args, 256, 0);
        }
        int64_t per = (total + n - 1) / n;
        float s = per > 1 ? 1.0f / (float)per : 1.0f;
        int f = DP_EXEC_F_IDENTITY;
        void *args[] = {&out, &n, &s, &f};
        if (rc == DP_OK && per > 1) rc = launch(g, K_APPLY, n, args, 256, 0);
        break;
    }
    case DP_EXEC_SYNTH: {
        float *c = g->scratch, *acc = g->scratch + 4096;
        if (!CU_OK(cudaMemsetAsync(acc, 0, sizeof(float), g->compute))) return DP_EIO;
        for (int j = 0; j < n_in && rc == DP_OK; j++) {
            const float *x = in[j];
            long long nx = in_elems[j];
            float wj = 1.0f / ((float)nx * (float)n_in);
            void *args[] = {&acc, &x, &nx, &wj};
            rc = launch(g, K_SUM, nx, args, 256, 0);
        }
        const float *a = w, *b = w + 64 * 256;
        const float alpha = 1.0f / (float)k->k;
        for (int64_t done = 0; done < k->k && rc == DP_OK; done += 256) {
            int kc = (int)(k->k - done < 256 ? k->k - done : 256);
            const float beta = done == 0 ? 0.0f : 1.0f;
            rc = cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, kc, &alpha, b, 64, a, 256, &beta, c, 64) ==
                         CUBLAS_STATUS_SUCCESS ? DP_OK : DP_EIO;
        }
        const float *cc = c, *aa = acc;
        void *args[] = {&out, &n, &cc, &aa};
        if (rc == DP_OK) rc = launch(g, K_SYNTH_OUT, n, args, 256, 0);
        break;
    }
    default:
        return DP_EINVAL;
    }
    if (rc != DP_OK) return rc;
    return CU_OK(cudaStreamSynchronize(g->compute)) ? DP_OK : DP_EIO;
}

static int cuda_copy(void *ctx, int dst_dev, void *dst, int src_dev, const void *src, size_t bytes)
{
    gpu *g = &((cuda_ctx *)ctx)->g[dst_dev];
    if (!CU_OK(cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, g->copy))) return DP_EIO;
    return CU_OK(cudaStreamSynchronize(g->copy)) ? DP_OK : DP_EIO;
}

static int cuda_read(void *ctx, int dev, void *host, const void *src, size_t bytes)
{
    (void)ctx;
    cudaSetDevice(dev);
    return CU_OK(cudaMemcpy(host, src, bytes, cudaMemcpyDeviceToHost)) ? DP_OK : DP_EIO;
}

const dp_exec_backend dp_exec_backend_cuda = {
    "cuda", "gpu", cuda_open, cuda_close, cuda_bind, cuda_alloc, cuda_free, cuda_fill, cuda_run, cuda_copy, cuda_read,
};
#endif
