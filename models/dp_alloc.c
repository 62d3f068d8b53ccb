/* dp_alloc.c: the allocation table of a workspace (see dp_alloc.h). */
#include "dp_alloc.h"
#include "dp_error.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DOPPLER_FAIL_ALLOC: -1 unread, 0 off, K > 0 the allocation to fail. Threads racing on the first
 * read all store the same value (and DOPPLER_FAIL_ALLOC=0 may register the report twice: it then
 * prints twice, the same count). */
static atomic_long fail_at = -1;
static atomic_long calls;

static void report_count(void)
{
    fprintf(stderr, "doppler: %ld allocations (DOPPLER_FAIL_ALLOC=0)\n", dp_alloc_count());
}

/* 1 when this allocation is the one DOPPLER_FAIL_ALLOC names (errno set to ENOMEM). */
static int injected_failure(void)
{
    long n = atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed) + 1;
    long k = atomic_load_explicit(&fail_at, memory_order_relaxed);
    if (k < 0) {
        const char *e = getenv("DOPPLER_FAIL_ALLOC");
        char *end = NULL;
        long v = e && *e ? strtol(e, &end, 10) : 0;
        k = end && *end == '\0' && v > 0 ? v : 0;
        atomic_store_explicit(&fail_at, k, memory_order_relaxed);
        if (end && *end == '\0' && v == 0) atexit(report_count);
    }
    if (k == 0 || n != k) return 0;
    errno = ENOMEM;
    return 1;
}

long dp_alloc_count(void)
{
    return atomic_load_explicit(&calls, memory_order_relaxed);
}

void *dp_alloc_malloc(size_t sz)
{
    return injected_failure() ? NULL : malloc(sz);
}

void *dp_alloc_calloc(size_t n, size_t sz)
{
    return injected_failure() ? NULL : calloc(n, sz);
}

void *dp_alloc_realloc(void *p, size_t sz)
{
    return injected_failure() ? NULL : realloc(p, sz);
}

char *dp_alloc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = dp_alloc_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

char *dp_alloc_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = dp_alloc_malloc(len + 1);
    if (!d) return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

int dp_alloc_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return DP_ENOMEM;
    *out = a * b;
    return DP_OK;
}

int dp_alloc_size_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a) return DP_ENOMEM;
    *out = a + b;
    return DP_OK;
}

void *dp_alloc_malloc_n(size_t n, size_t sz)
{
    size_t t;
    if (dp_alloc_size_mul(n, sz, &t) != DP_OK) return NULL;
    return dp_alloc_malloc(t ? t : 1);
}

void *dp_alloc_calloc_n(size_t n, size_t sz)
{
    if (n == 0 || sz == 0) return dp_alloc_calloc(1, 1);
    return dp_alloc_calloc(n, sz);
}

void *dp_alloc_table_add(dp_alloc_table *t, void *field, size_t n, size_t sz, int zero)
{
    if (t->n == t->cap) {
        int nc = t->cap ? 2 * t->cap : 32;
        void **f = dp_alloc_realloc(t->field, (size_t)nc * sizeof *f);
        if (!f) { t->failed = 1; return NULL; }
        t->field = f;
        t->cap = nc;
    }
    void *p = zero ? dp_alloc_calloc_n(n, sz) : dp_alloc_malloc_n(n, sz);
    size_t bytes;
    if (!p || dp_alloc_size_mul(n, sz, &bytes) != DP_OK) {
        free(p);
        t->failed = 1;
        return NULL;
    }
    t->field[t->n++] = field;
    t->bytes += bytes;
    return p;
}

void dp_alloc_table_free(dp_alloc_table *t)
{
    if (!t) return;
    /* last first: a field may live in memory recorded before it (a state struct's arrays) */
    for (int i = t->n - 1; i >= 0; i--) {
        void *p;
        memcpy(&p, t->field[i], sizeof p);   /* the field's current value, whatever its pointer type */
        free(p);
    }
    free(t->field);
    memset(t, 0, sizeof *t);
}
