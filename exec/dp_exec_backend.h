/* dp_exec_backend.h: what a device backend gives the real executor (exec/dp_exec.h).
 *
 * The executor owns the threads, the dependency counting and the queues; a backend owns device
 * memory, kernels and copies. Every call below is made from the thread that works for `dev`
 * (its compute worker or its copy worker), after that thread called bind(dev), except open,
 * close, alloc/free and read, which the controlling thread makes between runs.
 *
 * Adding a backend is one file that defines a dp_exec_backend and one line in dp_exec.c's table.
 */
#ifndef DP_EXEC_BACKEND_H
#define DP_EXEC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "dp_error.h"
#include "dp_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_exec_backend {
    const char *name;       /* "cpu", "cuda" */
    const char *dev_prefix; /* device names are prefix + index: "cpu0", "gpu1" */
    /* Open n_devices devices; *ctx receives the backend's state. DP_EUNSUPPORTED when there are
     * fewer devices than asked. */
    int (*open)(int n_devices, int pin, void **ctx, dp_error *err);
    void (*close)(void *ctx);
    /* Bind the calling worker thread to device dev (CPU: pin to a core; CUDA: set the device).
     * role 0 = compute worker, 1 = copy worker. */
    int (*bind)(void *ctx, int dev, int role);
    /* Device memory: aligned to 64 bytes; NULL when out of memory. */
    void *(*alloc)(void *ctx, int dev, size_t bytes);
    void (*free)(void *ctx, int dev, void *p);
    /* Fill n floats at p with the deterministic values of (seed, salt): used for weights. */
    int (*fill)(void *ctx, int dev, float *p, int64_t n, uint64_t seed, uint64_t salt);
    /* Run op v's kernel k on dev: in[i] (in_elems[i] floats) are its inputs, all on dev; w is
     * the device's weights (w_elems floats). Synchronous: returns when out is written. */
    int (*run)(void *ctx, int dev, int v, const dp_exec_kernel *k, float *out, const float *const *in,
               const int64_t *in_elems, int n_in, const float *w, int64_t w_elems, uint64_t seed);
    /* Copy bytes from src on src_dev to dst on dst_dev, driven by dst_dev's copy engine.
     * Synchronous. */
    int (*copy)(void *ctx, int dst_dev, void *dst, int src_dev, const void *src, size_t bytes);
    /* Read bytes from device memory to host memory (for tests and checks). */
    int (*read)(void *ctx, int dev, void *host, const void *src, size_t bytes);
} dp_exec_backend;

extern const dp_exec_backend dp_exec_backend_cpu;
#ifdef DP_WITH_CUDA
extern const dp_exec_backend dp_exec_backend_cuda;
#endif

/* The CPU backend's cores: those this process may run on (sched_getaffinity, which taskset and
 * cpusets narrow), in increasing order, into cores (room for cap); returns their count, at least
 * 1 (all online cores, 0..n-1, when the mask cannot be read). Device d of the CPU backend runs on
 * cores[d % count], pinned when count >= the devices (dp_exec_cpu.c); the profiler's background
 * loops use the same cores (dp_profile.c). Until 2026-12-06 devices were pinned to cores 0..D-1
 * whatever the process's mask, so `taskset -c 0 doppler validate` ran on core 1 too. */
int dp_exec_cpu_cores(int *cores, int cap);

/* How many cores dp_exec_cpu_cores gives (the process's allowed cores, at least 1). */
int dp_exec_cpu_count(void);

/* Shared by backends: the deterministic value of element i for (seed, salt), in [-1, 1). */
static inline float dp_exec_value(uint64_t seed, uint64_t salt, uint64_t i)
{
    /* splitmix64 of (seed, salt, i): any device, any order, the same numbers */
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + salt * 0xBF58476D1CE4E5B9ull + i * 0x94D049BB133111EBull;
    z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27; z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)((double)(z >> 40) / (double)(1ull << 23) - 1.0);
}

#ifdef __cplusplus
}
#endif
#endif
