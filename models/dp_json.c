#include "dp_json.h"
#include "dp_file.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

int dp_json_dump_atomic(json_t *value, const char *path, size_t flags, dp_error *err)
{
    char tmp[4200];
    FILE *f = dp_file_atomic_open(path, tmp, sizeof tmp, err);
    if (!f) return err ? err->code : DP_EIO;
    if (json_dumpf(value, f, flags) != 0 || fputc('\n', f) == EOF) {
        dp_file_atomic_abort(f, tmp);
        return dp_error_set(err, DP_EIO, "%s: write failed", path);
    }
    return dp_file_atomic_commit(f, tmp, path, err);
}

json_t *dp_json_number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

double dp_json_parse_bytes(const char *text, size_t size)
{
    size_t obj = 0, arr = 0;
    for (size_t i = 0; i < size; i++) {
        obj += text[i] == '{';
        arr += text[i] == '[';
    }
    return (double)size * DP_JSON_BYTES_PER_BYTE + (double)obj * DP_JSON_BYTES_PER_OBJECT +
           (double)arr * DP_JSON_BYTES_PER_ARRAY;
}

/* dp_json_read_text, with the parse's memory bound (dp_json_parse_bytes) into *bytes */
static char *read_text(const char *path, size_t *size, double *bytes, dp_error *err)
{
    char *text = dp_file_read_text(path, size, err);
    if (text && dp_file_mem_check(path, "parsing this JSON file", *bytes = dp_json_parse_bytes(text, *size), err) != DP_OK) {
        free(text);
        return NULL;
    }
    return text;
}

char *dp_json_read_text(const char *path, size_t *size, dp_error *err)
{
    double bytes;
    return read_text(path, size, &bytes, err);
}

/* The arena of dp_json_load_scoped. Jansson takes one allocator for the whole process
 * (json_set_alloc_funcs), so ours is installed when the library loads (before any thread or
 * Jansson value exists) and does three things: while this thread parses into an arena
 * (tl_arena), a request is a bump of the arena's pointer (16-byte aligned); a free of a pointer
 * inside any live arena (the registry below, which any thread may read) does nothing, since the
 * arena is unmapped as a whole; everything else is malloc and free, as without it. A value
 * parsed by dp_json_load (or json_loads) is therefore a malloc'd value as before. */
struct dp_json_arena {
    char *base;
    size_t cap, used;
    int overflow; /* a request did not fit and came from malloc: the tree must be freed node by node */
    int slot;     /* its place in the registry */
};

#define ARENA_SLOTS 16
static _Atomic uintptr_t arena_lo[ARENA_SLOTS], arena_hi[ARENA_SLOTS];
static _Atomic int arena_used[ARENA_SLOTS];
static _Thread_local dp_json_arena *tl_arena;
static _Atomic size_t arena_limit; /* dp_json_arena_set_limit; 0: none */

static void *arena_malloc(size_t n)
{
    dp_json_arena *a = tl_arena;
    if (a) {
        const size_t m = (n + 15) & ~(size_t)15;
        if (m >= n && m <= a->cap - a->used) {
            void *p = a->base + a->used;
            a->used += m;
            return p;
        }
        a->overflow = 1;
    }
    return malloc(n);
}

static void arena_free(void *p)
{
    const uintptr_t u = (uintptr_t)p;
    for (int i = 0; i < ARENA_SLOTS; i++)
        if (u >= atomic_load_explicit(&arena_lo[i], memory_order_relaxed) &&
            u < atomic_load_explicit(&arena_hi[i], memory_order_relaxed))
            return;
    free(p);
}

__attribute__((constructor)) static void arena_install(void)
{
    json_set_alloc_funcs(arena_malloc, arena_free);
}

/* A new registered arena for a parse of at most `bytes` (dp_json_parse_bytes), or NULL when none
 * can be had. */
static dp_json_arena *arena_new(double bytes)
{
    /* address space for the parse's upper bound (touched only as used); huge pages where the
     * kernel gives them cut the page faults of a large file's tree by up to 512 */
    /* a program that installed its own allocator since (json_set_alloc_funcs) parses as it chose */
    json_malloc_t fm;
    json_free_t ff;
    json_get_alloc_funcs(&fm, &ff);
    if (fm != arena_malloc || ff != arena_free) return NULL;
    dp_json_arena *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    const size_t huge = (size_t)1 << 21;
    size_t cap = ((size_t)bytes + 4096 + huge - 1) & ~(huge - 1);
    const size_t limit = atomic_load(&arena_limit);
    if (limit && cap > limit) cap = limit;
    void *base = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        free(a);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(base, cap, MADV_HUGEPAGE);
#endif
    a->base = base;
    a->cap = cap;
    a->slot = -1;
    for (int i = 0; i < ARENA_SLOTS && a->slot < 0; i++) {
        int expect = 0;
        if (atomic_compare_exchange_strong(&arena_used[i], &expect, 1)) a->slot = i;
    }
    if (a->slot < 0) {
        munmap(base, cap);
        free(a);
        return NULL;
    }
    atomic_store(&arena_lo[a->slot], (uintptr_t)base);
    atomic_store(&arena_hi[a->slot], (uintptr_t)base + cap);
    return a;
}

/* dp_json_load, and dp_json_load_scoped when arena is not NULL */
static json_t *load(const char *path, dp_json_arena **arena, dp_error *err)
{
    /* Jansson keeps every value as a node: a graph file takes about 30 bytes of memory per byte
     * of text (10^6 ops: 40 MB of JSON, 1.2 GiB parsed). Refuse what cannot fit before parsing. */
    if (arena) *arena = NULL;
    struct stat st;
    if (stat(path, &st) != 0) {
        dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        dp_error_set(err, DP_EIO, "%s: is a directory, not a JSON file", path);
        return NULL;
    }
    size_t size;
    double bytes = 0;
    char *text = read_text(path, &size, &bytes, err);
    if (!text) return NULL;
    dp_json_arena *a = arena ? arena_new(bytes) : NULL;
    json_error_t jerr;
    tl_arena = a;
    json_t *root = json_loadb(text, size, JSON_REJECT_DUPLICATES, &jerr);
    tl_arena = NULL;
    free(text);
    if (!root) {
        dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
        dp_json_scoped_free(NULL, a);
        return NULL;
    }
    if (arena) *arena = a;
    return root;
}

json_t *dp_json_load(const char *path, dp_error *err)
{
    return load(path, NULL, err);
}

json_t *dp_json_load_scoped(const char *path, dp_json_arena **arena, dp_error *err)
{
    return load(path, arena, err);
}

void dp_json_arena_set_limit(size_t bytes)
{
    atomic_store(&arena_limit, bytes);
}

int dp_json_arenas_live(void)
{
    int n = 0;
    for (int i = 0; i < ARENA_SLOTS; i++) n += atomic_load(&arena_used[i]);
    return n;
}

void dp_json_scoped_free(json_t *root, dp_json_arena *arena)
{
    /* when every value is in the arena, unmapping it frees the tree: no walk over its nodes */
    if (!arena || arena->overflow) json_decref(root);
    if (!arena) return;
    atomic_store(&arena_hi[arena->slot], 0);
    atomic_store(&arena_lo[arena->slot], 0);
    munmap(arena->base, arena->cap);
    atomic_store(&arena_used[arena->slot], 0);
    free(arena);
}

json_t *dp_json_loads_text(const char *text, const char *what, dp_error *err)
{
    json_error_t je;
    json_t *o = json_loads(text ? text : "", 0, &je);
    if (!o) dp_error_set(err, DP_EINVAL, "%s: line %d: %s", what, je.line, je.text);
    return o;
}
