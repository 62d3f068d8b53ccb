/* dp_strmap.c: a string -> int map (see dp_strmap.h). */
#include "dp_strmap.h"
#include "dp_alloc.h"
#include "dp_error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    return h;
}

int dp_strmap_init(dp_strmap *m, size_t expect)
{
    m->cap = 16;
    while (m->cap < 2 * expect + 2) m->cap <<= 1;
    m->n = 0;
    m->key = dp_alloc_calloc(m->cap, sizeof *m->key);
    m->val = dp_alloc_malloc_n(m->cap, sizeof *m->val);
    return m->key && m->val ? DP_OK : DP_ENOMEM;
}

void dp_strmap_free(dp_strmap *m)
{
    free(m->key);
    free(m->val);
}

/* Value of key, or -1. */
int dp_strmap_get(const dp_strmap *m, const char *key)
{
    size_t h = (size_t)fnv1a(key) & (m->cap - 1);
    while (m->key[h]) {
        if (strcmp(m->key[h], key) == 0) return m->val[h];
        h = (h + 1) & (m->cap - 1);
    }
    return -1;
}

/* Insert key -> val unless present; returns the value now stored (the old one if present), or
 * DP_ENOMEM (negative) when growing fails. */
int dp_strmap_put(dp_strmap *m, const char *key, int val)
{
    if (2 * (m->n + 1) > m->cap) {
        dp_strmap g;
        g.cap = m->cap * 2;
        g.n = 0;
        g.key = dp_alloc_calloc(g.cap, sizeof *g.key);
        g.val = dp_alloc_malloc_n(g.cap, sizeof *g.val);
        if (!g.key || !g.val) { dp_strmap_free(&g); return DP_ENOMEM; }
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i]) {
                size_t h = (size_t)fnv1a(m->key[i]) & (g.cap - 1);
                while (g.key[h]) h = (h + 1) & (g.cap - 1);
                g.key[h] = m->key[i];
                g.val[h] = m->val[i];
                g.n++;
            }
        dp_strmap_free(m);
        *m = g;
    }
    size_t h = (size_t)fnv1a(key) & (m->cap - 1);
    while (m->key[h]) {
        if (strcmp(m->key[h], key) == 0) return m->val[h];
        h = (h + 1) & (m->cap - 1);
    }
    m->key[h] = key;
    m->val[h] = val;
    m->n++;
    return val;
}
