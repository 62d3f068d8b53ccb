#include "dp_json.h"
#include "dp_alloc.h"
#include "dp_file.h"
#include "dp_strmap.h"

#include <stdio.h>
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
    errno = 0;
    if (json_dumpf(value, f, flags) != 0 || fputc('\n', f) == EOF) {
        const int e = errno; /* the failed write's reason (said "write failed" alone) */
        dp_file_atomic_abort(f, tmp);
        return dp_error_set(err, DP_EIO, "%s: write failed: %s", path, strerror(e ? e : EIO));
    }
    return dp_file_atomic_commit(f, tmp, path, err);
}

json_t *dp_json_number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

const char *dp_json_fmt_exact(double x, char *buf, size_t cap)
{
    for (int p = 6; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, x);
        if (strtod(buf, NULL) == x) break;
    }
    return buf;
}

int dp_json_same_value(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b) && !(json_is_integer(a) && json_is_integer(b)))
        return json_number_value(a) == json_number_value(b);
    return json_equal((json_t *)a, (json_t *)b);
}

json_t *dp_json_seed(uint64_t seed)
{
    if (seed <= (uint64_t)INT64_MAX) return json_integer((json_int_t)seed);
    char digits[24];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)seed);
    return json_string(digits);
}

int dp_json_seed_value(const json_t *v, uint64_t *seed)
{
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0) return -1;
        *seed = (uint64_t)json_integer_value(v);
        return 0;
    }
    const char *t = json_string_value(v);
    if (!t || t[0] < '0' || t[0] > '9') return -1;
    char *end = NULL;
    errno = 0;
    const unsigned long long u = strtoull(t, &end, 10);
    if (*end != '\0' || errno != 0) return -1;
    *seed = (uint64_t)u;
    return 0;
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

char *dp_json_read_text(const char *path, size_t *size, dp_error *err)
{
    char *text = dp_file_read_text(path, size, err);
    if (text && dp_file_mem_check(path, "parsing this JSON file", dp_json_parse_bytes(text, *size), err) != DP_OK) {
        free(text);
        return NULL;
    }
    return text;
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

/* Jansson's tree of text (size bytes, read from path), into a new arena when arena is not NULL
 * (dp_json_load_scoped), after dp_file_mem_check of the parse's bound; errors as dp_json_load's. */
static json_t *parse_text(const char *path, const char *text, size_t size, dp_json_arena **arena, dp_error *err)
{
    /* Jansson keeps every value as a node: a graph file takes about 30 bytes of memory per byte
     * of text (10^6 ops: 40 MB of JSON, 1.2 GiB parsed). Refuse what cannot fit before parsing. */
    if (arena) *arena = NULL;
    const double bytes = dp_json_parse_bytes(text, size);
    if (dp_file_mem_check(path, "parsing this JSON file", bytes, err) != DP_OK) return NULL;
    dp_json_arena *a = arena ? arena_new(bytes) : NULL;
    json_error_t jerr;
    tl_arena = a;
    json_t *root = json_loadb(text, size, JSON_REJECT_DUPLICATES, &jerr);
    tl_arena = NULL;
    if (!root) {
        dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
        dp_json_scoped_free(NULL, a);
        return NULL;
    }
    if (arena) *arena = a;
    return root;
}

/* The text of JSON file path (dp_file_read_text), or NULL with err set (a directory named too) */
static char *json_text(const char *path, size_t *size, dp_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        dp_error_set(err, DP_EIO, "%s: is a directory, not a JSON file", path);
        return NULL;
    }
    return dp_file_read_text(path, size, err);
}

/* dp_json_load, and dp_json_load_scoped when arena is not NULL */
static json_t *load(const char *path, dp_json_arena **arena, dp_error *err)
{
    if (arena) *arena = NULL;
    size_t size;
    char *text = json_text(path, &size, err);
    if (!text) return NULL;
    json_t *root = parse_text(path, text, size, arena, err);
    free(text);
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

/* ---------------- dp_json_doc: a top-level object read a member at a time ---------------- */

typedef struct doc_member {
    char *key;          /* decoded (Jansson) */
    size_t at, end;     /* the value's bytes in the text */
    size_t *elem;       /* an array's elements: the bytes [elem[2k], elem[2k + 1]) of element k */
    size_t n_elem;
} doc_member;

struct dp_json_doc {
    char *path, *text;
    size_t size;
    int object;           /* the top level is an object */
    json_t *tree;         /* the tree when the scan could not follow the text (then m is empty) */
    dp_json_arena *arena; /* tree's */
    doc_member *m;
    size_t n, cap;
    dp_strmap keys;       /* key -> index in m */
};

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_ws(const char *t, size_t n, size_t p)
{
    while (p < n && is_ws(t[p])) p++;
    return p;
}

/* The end of the string starting at t[p] == '"' (one past its closing quote), or 0 when the text
 * ends first or a raw control character is in it. Escapes are skipped, not checked: Jansson
 * checks them when the piece holding the string is parsed. */
static size_t skip_string(const char *t, size_t n, size_t p)
{
    for (p++; p < n; p++) {
        const unsigned char c = (unsigned char)t[p];
        if (c == '"') return p + 1;
        if (c == '\\') p++;
        else if (c < 0x20) return 0;
    }
    return 0;
}

/* Nesting deeper than this (the top-level object at depth 1) is left to Jansson's tree, which
 * refuses a depth above its own limit (2048, JSON_PARSER_MAX_DEPTH): a piece parsed alone sits
 * one or two levels higher than in the whole text, so the scan must not hand Jansson a piece
 * whose depth in the text it would refuse. No graph file comes near it. */
#define DOC_MAX_DEPTH 1024

/* The end of the value starting at t[p] (no white space before it), or 0 when the structure is
 * not JSON's: brackets that do not match, a missing or extra comma or colon, a key that is not a
 * string, the text ending inside, or more than max_depth brackets open at once. A scalar is the
 * run of bytes up to white space or one of ",:]}" (Jansson checks it when its piece is parsed).
 * Iterative, so no recursion whatever the text. */
static size_t skip_value(const char *t, size_t n, size_t p, size_t max_depth)
{
    char stack[DOC_MAX_DEPTH];
    size_t depth = 0;
    size_t end = 0;
    for (;;) {
        /* a value at p */
        if (p >= n) goto out;
        char c = t[p];
        if (c == '{' || c == '[') {
            const char close = c == '{' ? '}' : ']';
            p = skip_ws(t, n, p + 1);
            if (p < n && t[p] == close) {
                p++;
                goto after;
            }
            if (depth == max_depth || depth == sizeof stack) goto out;
            stack[depth++] = c;
            if (c == '[') continue;
            goto key;
        }
        if (c == '"') {
            if (!(p = skip_string(t, n, p))) goto out;
            goto after;
        }
        if (c == ',' || c == ':' || c == ']' || c == '}' || is_ws(c)) goto out;
        while (p < n && !is_ws(t[p]) && t[p] != ',' && t[p] != ':' && t[p] != ']' && t[p] != '}' && t[p] != '[' &&
               t[p] != '{' && t[p] != '"')
            p++;
    after:
        if (depth == 0) {
            end = p;
            goto out;
        }
        p = skip_ws(t, n, p);
        if (p >= n) goto out;
        if (t[p] == ',') {
            p = skip_ws(t, n, p + 1);
            if (stack[depth - 1] == '[') continue;
            goto key;
        }
        if (t[p] == (stack[depth - 1] == '[' ? ']' : '}')) {
            depth--;
            p++;
            goto after;
        }
        goto out;
    key:
        if (p >= n || t[p] != '"' || !(p = skip_string(t, n, p))) goto out;
        p = skip_ws(t, n, p);
        if (p >= n || t[p] != ':') goto out;
        p = skip_ws(t, n, p + 1);
    }
out:
    return end;
}

/* A fault in a piece of d: Jansson's message for the whole text when it refuses it (what
 * dp_json_load says of the file), else the piece's own (at byte `at`). DP_EINVAL, or DP_ENOMEM. */
static int doc_fault(dp_json_doc *d, const json_error_t *piece, size_t at, dp_error *err)
{
    json_error_t je;
    if (dp_file_mem_check(d->path, "parsing this JSON file", dp_json_parse_bytes(d->text, d->size), err) != DP_OK)
        return DP_ENOMEM;
    json_t *root = json_loadb(d->text, d->size, JSON_REJECT_DUPLICATES, &je);
    if (!root) return dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", d->path, je.line, je.column, je.text);
    json_decref(root);
    int line = 1;
    for (size_t i = 0; i < at && i < d->size; i++) line += d->text[i] == '\n';
    return dp_error_set(err, DP_EINVAL, "%s:%d: %s (in the value starting on this line)", d->path,
                        line + (piece->line > 0 ? piece->line - 1 : 0), piece->text);
}

/* Jansson's value of the piece [at, end) of d's text, or NULL with err set */
static json_t *doc_piece(dp_json_doc *d, size_t at, size_t end, dp_error *err)
{
    json_error_t je;
    json_t *v = json_loadb(d->text + at, end - at, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!v) doc_fault(d, &je, at, err);
    return v;
}

/* The scan of the top-level object: 0, 1 when the scan cannot follow the text (the caller then
 * takes Jansson's tree), or DP_ENOMEM / DP_EINVAL (a key Jansson refuses; err set) */
static int doc_scan(dp_json_doc *d, dp_error *err)
{
    const char *t = d->text;
    const size_t n = d->size;
    size_t p = skip_ws(t, n, 0);
    if (p >= n || t[p] != '{') return 1;
    p = skip_ws(t, n, p + 1);
    if (dp_strmap_init(&d->keys, 16) != DP_OK) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", d->path);
    if (p < n && t[p] == '}') {
        p++;
    } else {
        for (;;) {
            if (p >= n || t[p] != '"') return 1;
            const size_t ka = p;
            if (!(p = skip_string(t, n, p))) return 1;
            const size_t ke = p;
            p = skip_ws(t, n, p);
            if (p >= n || t[p] != ':') return 1;
            const size_t va = skip_ws(t, n, p + 1);
            size_t ve = 0, *elem = NULL, n_elem = 0, cap_elem = 0;
            if (va < n && t[va] == '[') { /* an array: each element's bounds kept */
                size_t q = skip_ws(t, n, va + 1);
                if (q < n && t[q] == ']') ve = q + 1;
                while (!ve) {
                    const size_t e = skip_value(t, n, q, DOC_MAX_DEPTH - 2); /* in the object and the array */
                    if (!e) break;
                    if (n_elem == cap_elem) {
                        cap_elem = cap_elem ? 2 * cap_elem : 64;
                        size_t *x = realloc(elem, 2 * cap_elem * sizeof *x);
                        if (!x) {
                            free(elem);
                            return dp_error_set(err, DP_ENOMEM, "%s: out of memory", d->path);
                        }
                        elem = x;
                    }
                    elem[2 * n_elem] = q;
                    elem[2 * n_elem + 1] = e;
                    n_elem++;
                    q = skip_ws(t, n, e);
                    if (q < n && t[q] == ']') ve = q + 1;
                    else if (q < n && t[q] == ',') q = skip_ws(t, n, q + 1);
                    else break;
                }
            } else {
                ve = skip_value(t, n, va, DOC_MAX_DEPTH - 1); /* in the object */
            }
            if (!ve) {
                free(elem);
                return 1;
            }
            if (d->n == d->cap) {
                const size_t c = d->cap ? 2 * d->cap : 16;
                doc_member *m = realloc(d->m, c * sizeof *m);
                if (!m) {
                    free(elem);
                    return dp_error_set(err, DP_ENOMEM, "%s: out of memory", d->path);
                }
                d->m = m;
                d->cap = c;
            }
            json_t *k = doc_piece(d, ka, ke, err);
            if (!k) {
                free(elem);
                return err ? err->code : DP_EINVAL;
            }
            char *key = dp_alloc_strdup(json_string_value(k));
            json_decref(k);
            if (!key) {
                free(elem);
                return dp_error_set(err, DP_ENOMEM, "%s: out of memory", d->path);
            }
            d->m[d->n] = (doc_member){key, va, ve, elem, n_elem};
            const int at = dp_strmap_put(&d->keys, key, (int)d->n);
            d->n++;
            if (at < 0) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", d->path);
            if (at != (int)d->n - 1) { /* a duplicate key: Jansson's message */
                json_error_t none = {.line = 0};
                snprintf(none.text, sizeof none.text, "duplicate object key");
                return doc_fault(d, &none, ka, err);
            }
            p = skip_ws(t, n, ve);
            if (p < n && t[p] == ',') {
                p = skip_ws(t, n, p + 1);
                continue;
            }
            if (p < n && t[p] == '}') {
                p++;
                break;
            }
            return 1;
        }
    }
    if (skip_ws(t, n, p) != n) return 1;
    d->object = 1;
    return 0;
}

static void doc_clear_members(dp_json_doc *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->m[i].key);
        free(d->m[i].elem);
    }
    free(d->m);
    d->m = NULL;
    d->n = d->cap = 0;
    if (d->keys.key) dp_strmap_free(&d->keys);
    memset(&d->keys, 0, sizeof d->keys);
}

dp_json_doc *dp_json_doc_open(const char *path, dp_error *err)
{
    dp_json_doc *d = calloc(1, sizeof *d);
    if (!d || !(d->path = dp_alloc_strdup(path))) {
        free(d);
        dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    if (!(d->text = json_text(path, &d->size, err))) {
        dp_json_doc_close(d);
        return NULL;
    }
    const int rc = doc_scan(d, err);
    if (rc == 1) {
        /* the scan could not follow the text: Jansson's tree decides (and names any fault) */
        doc_clear_members(d);
        d->object = 0;
        if (!(d->tree = parse_text(path, d->text, d->size, &d->arena, err))) {
            dp_json_doc_close(d);
            return NULL;
        }
        d->object = json_is_object(d->tree);
    } else if (rc != 0) {
        dp_json_doc_close(d);
        return NULL;
    }
    return d;
}

void dp_json_doc_close(dp_json_doc *d)
{
    if (!d) return;
    if (d->tree) dp_json_scoped_free(d->tree, d->arena);
    doc_clear_members(d);
    free(d->text);
    free(d->path);
    free(d);
}

int dp_json_doc_is_object(const dp_json_doc *d)
{
    return d->object;
}

static const doc_member *doc_get(const dp_json_doc *d, const char *key)
{
    if (!d->object || d->tree) return NULL;
    const int i = dp_strmap_get(&d->keys, key);
    return i < 0 ? NULL : &d->m[i];
}

int dp_json_doc_type(const dp_json_doc *d, const char *key)
{
    if (d->tree) {
        json_t *v = d->object ? json_object_get(d->tree, key) : NULL;
        return v ? (int)json_typeof(v) : -1;
    }
    const doc_member *m = doc_get(d, key);
    if (!m) return -1;
    switch (d->text[m->at]) {
    case '{': return JSON_OBJECT;
    case '[': return JSON_ARRAY;
    case '"': return JSON_STRING;
    case 't': return JSON_TRUE;
    case 'f': return JSON_FALSE;
    case 'n': return JSON_NULL;
    default:
        for (size_t i = m->at; i < m->end; i++)
            if (d->text[i] == '.' || d->text[i] == 'e' || d->text[i] == 'E') return JSON_REAL;
        return JSON_INTEGER;
    }
}

long dp_json_doc_length(const dp_json_doc *d, const char *key)
{
    if (d->tree) {
        json_t *v = d->object ? json_object_get(d->tree, key) : NULL;
        return json_is_array(v) ? (long)json_array_size(v) : -1;
    }
    const doc_member *m = doc_get(d, key);
    return m && d->text[m->at] == '[' ? (long)m->n_elem : -1;
}

json_t *dp_json_doc_members(dp_json_doc *d, const char *const *skip, dp_error *err)
{
    json_t *o = json_object();
    if (!o) {
        dp_error_set(err, DP_ENOMEM, "%s: out of memory", d->path);
        return NULL;
    }
    if (d->tree) {
        if (!d->object) return o;
        const char *k;
        json_t *v;
        json_object_foreach(d->tree, k, v) {
            int skipped = 0;
            for (int i = 0; skip && skip[i] && !skipped; i++) skipped = strcmp(k, skip[i]) == 0;
            if (!skipped && json_object_set(o, k, v) != 0) goto oom;
        }
        return o;
    }
    for (size_t j = 0; j < d->n; j++) {
        int skipped = 0;
        for (int i = 0; skip && skip[i] && !skipped; i++) skipped = strcmp(d->m[j].key, skip[i]) == 0;
        if (skipped) continue;
        json_t *v = doc_piece(d, d->m[j].at, d->m[j].end, err);
        if (!v) {
            json_decref(o);
            return NULL;
        }
        if (json_object_set_new(o, d->m[j].key, v) != 0) goto oom;
    }
    return o;
oom:
    json_decref(o);
    dp_error_set(err, DP_ENOMEM, "%s: out of memory", d->path);
    return NULL;
}

json_t *dp_json_doc_parse(dp_json_doc *d, const char *raw, size_t len, dp_error *err)
{
    return doc_piece(d, (size_t)(raw - d->text), (size_t)(raw - d->text) + len, err);
}

int dp_json_doc_each(dp_json_doc *d, const char *key, dp_json_doc_each_fn fn, void *ctx, dp_error *err)
{
    if (d->tree) {
        json_t *a = d->object ? json_object_get(d->tree, key) : NULL;
        if (!json_is_array(a)) return dp_error_set(err, DP_EINVAL, "%s: \"%s\" is not an array member", d->path, key);
        for (size_t i = 0; i < json_array_size(a); i++) {
            const int rc = fn(d, json_array_get(a, i), NULL, 0, i, ctx);
            if (rc) return rc;
        }
        return 0;
    }
    const doc_member *m = doc_get(d, key);
    if (!m || d->text[m->at] != '[') return dp_error_set(err, DP_EINVAL, "%s: \"%s\" is not an array member", d->path, key);
    for (size_t i = 0; i < m->n_elem; i++) {
        const int rc = fn(d, NULL, d->text + m->elem[2 * i], m->elem[2 * i + 1] - m->elem[2 * i], i, ctx);
        if (rc) return rc;
    }
    return 0;
}

json_t *dp_json_doc_tree(dp_json_doc *d, dp_json_arena **arena, dp_error *err)
{
    if (d->tree) { /* handed over: the document keeps no tree from here on */
        json_t *t = d->tree;
        *arena = d->arena;
        d->tree = NULL;
        d->arena = NULL;
        doc_clear_members(d);
        d->object = 0;
        return t;
    }
    return parse_text(d->path, d->text, d->size, arena, err);
}

/* (dp_json.h) */
int dp_json_known_keys(const json_t *o, const char *const *known, const char *origin, const char *where, dp_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        int ok = 0;
        for (const char *const *k = known; *k && !ok; k++) ok = strcmp(*k, key) == 0;
        if (ok) continue;
        char list[512];
        size_t len = 0;
        list[0] = 0;
        for (const char *const *k = known; *k && len < sizeof list; k++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *k);
        return dp_error_set(err, DP_EINVAL, "%s: %s: unknown key \"%s\" (known: %s)", origin, where, key, list);
    }
    return DP_OK;
}
