/* dp_alloc.h: the checked allocators (overflow-checked sizes, malloc and calloc of n elements)
 * and one allocation table per workspace, instead of an allocation list and a free list kept in
 * step by hand.
 *
 * A workspace (a simulator, an environment) embeds a dp_alloc_table and allocates each of its
 * arrays with DP_ALLOC(table, field, n, size): the array goes into the struct field and the
 * field's address into the table. dp_alloc_table_free frees what every recorded field holds at
 * that time (so an array later grown with realloc through its field is freed right), last
 * recorded first (so a field may live inside memory the table allocated before it, such as a
 * model's state struct), then the table. A field allocated twice is recorded twice: don't.
 *
 *   DP_ALLOC(&s->mem, s->busy, D, sizeof(double));
 *   ...
 *   if (s->mem.failed) goto nomem;      one check after all the allocations
 *   ...
 *   dp_alloc_table_free(&s->mem);       frees busy and every other array
 */
#ifndef DP_ALLOC_H
#define DP_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Checked size arithmetic: *out = a * b (or a + b); returns 0 (DP_OK) or DP_ENOMEM (dp_error.h)
 * on overflow, *out then unchanged. */
int dp_alloc_size_mul(size_t a, size_t b, size_t *out);
int dp_alloc_size_add(size_t a, size_t b, size_t *out);

/* The project's allocators: malloc, calloc, realloc and strdup with one counter in front of them,
 * used by every allocation of the library and the command line (not by the libraries it calls:
 * HDF5, GSL, OpenBLAS, Jansson). Same contracts as the C library's
 * (NULL when out of memory, errno ENOMEM). Release with free().
 *
 * Fault injection: with DOPPLER_FAIL_ALLOC=K in the environment (read once, at the first
 * allocation; K a positive integer) the K-th allocation of the process, counted from 1 over all
 * threads, fails as if memory ran out; every other allocation succeeds. DOPPLER_FAIL_ALLOC=0 fails
 * none and prints the process's allocation count on stderr at exit ("doppler: N allocations"). tests/test_faults.sh runs
 * commands for every K up to their allocation count and checks a clean "out of memory" error, no
 * partial output and no leak. Without the variable the cost is one relaxed atomic increment. */
void *dp_alloc_malloc(size_t sz);
void *dp_alloc_calloc(size_t n, size_t sz);
void *dp_alloc_realloc(void *p, size_t sz);
char *dp_alloc_strdup(const char *s);
char *dp_alloc_strndup(const char *s, size_t n);

/* Allocations made through the allocators above so far in this process (failed ones included). */
long dp_alloc_count(void);

/* malloc/calloc of n elements of sz bytes with the overflow check: NULL when out of memory or
 * n x sz overflows; n x sz == 0 gives a valid 1-byte block. dp_alloc_calloc_n zeroes. Free with
 * free(). */
void *dp_alloc_malloc_n(size_t n, size_t sz);
void *dp_alloc_calloc_n(size_t n, size_t sz);

typedef struct dp_alloc_table {
    void **field;    /* addresses of the owner's pointer fields (each a T *) */
    int n, cap;
    size_t bytes;    /* bytes allocated through the table (workspace accounting) */
    int failed;      /* 1 once an allocation (or the table itself) ran out of memory */
} dp_alloc_table;

/* Allocate n elements of sz bytes (zeroed when zero is 1), record field (the address of the
 * pointer that will hold them) and return the memory; NULL, with t->failed set, when out of
 * memory or n x sz overflows. */
void *dp_alloc_table_add(dp_alloc_table *t, void *field, size_t n, size_t sz, int zero);

/* Count bytes of memory the owner grew by itself (realloc of a recorded field). */
static inline void dp_alloc_table_grew(dp_alloc_table *t, size_t bytes)
{
    t->bytes += bytes;
}

/* Free every recorded field's memory and the table (the fields are left dangling) and zero *t,
 * so a second free is harmless. t NULL: nothing to do. */
void dp_alloc_table_free(dp_alloc_table *t);

#define DP_ALLOC(t, field, n, sz) ((field) = dp_alloc_table_add((t), &(field), (n), (sz), 0))
#define DP_ALLOC_ZERO(t, field, n, sz) ((field) = dp_alloc_table_add((t), &(field), (n), (sz), 1))

#ifdef __cplusplus
}
#endif
#endif
