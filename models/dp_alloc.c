/* dp_alloc.c: the allocation table of a workspace (see dp_alloc.h). */
#include "dp_alloc.h"
#include "dp_error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    return malloc(t ? t : 1);
}

void *dp_alloc_calloc_n(size_t n, size_t sz)
{
    if (n == 0 || sz == 0) return calloc(1, 1);
    return calloc(n, sz);
}

void *dp_alloc_table_add(dp_alloc_table *t, void *field, size_t n, size_t sz, int zero)
{
    if (t->n == t->cap) {
        int nc = t->cap ? 2 * t->cap : 32;
        void **f = realloc(t->field, (size_t)nc * sizeof *f);
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
    /* last first: a field may live in memory recorded before it (a state struct's arrays) */
    for (int i = t->n - 1; i >= 0; i--) {
        void *p;
        memcpy(&p, t->field[i], sizeof p);   /* the field's current value, whatever its pointer type */
        free(p);
    }
    free(t->field);
    memset(t, 0, sizeof *t);
}
