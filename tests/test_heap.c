/* test_heap: the one binary heap (sim/dp_heap.h): the event queue's (time, sequence) order with
 * many ties, an indexed heap with removal anywhere (dp_env's ready set), a heap with the key in
 * a side array (the list schedulers'), growth. Built with DP_HEAP_PARANOID: every push, pop and
 * removal also asserts the whole heap order. */
#define DP_HEAP_PARANOID 1
#include "dp_heap.h"
#include "dp_test.h"

#include <gsl/gsl_rng.h>

/* events at few distinct times come out by time, then in the order they were pushed */
START_TEST(events_by_time_then_sequence)
{
    enum { N = 2000 };
    dp_heap_ev store[N];
    dp_heap_evq h = {.a = store, .cap = N};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    for (int round = 0; round < 3; round++) {
        dp_heap_evq_clear(&h);
        double when[N];
        for (int i = 0; i < N; i++) {
            when[i] = (double)gsl_rng_uniform_int(r, 5);   /* 5 instants: about 400 ties each */
            dp_heap_evq_push(&h, when[i], (uint32_t)i);
            ck_assert_int_eq(h.n, i + 1);
        }
        ck_assert(dp_heap_evq_raw_is_heap(NULL, h.a, h.n));
        double last_t = -1;
        long last_id = -1;
        for (int k = 0; k < N; k++) {
            dp_heap_ev e = dp_heap_evq_pop(&h);
            ck_assert_double_eq(e.t, when[e.ev]);
            ck_assert_msg(e.t > last_t || (e.t == last_t && (long)e.ev > last_id),
                          "event %u at %g after %ld at %g", e.ev, e.t, last_id, last_t);
            ck_assert_uint_eq(e.seq, e.ev);   /* pushed in id order: numbered 0, 1, ... per run */
            last_t = e.t;
            last_id = e.ev;
        }
        ck_assert_int_eq(h.n, 0);
    }
    gsl_rng_free(r);
}
END_TEST

/* interleaved pushes and pops keep the order (a simulator's pattern: events scheduled while
 * others run) */
START_TEST(events_interleaved)
{
    enum { N = 1000 };
    dp_heap_ev store[N];
    dp_heap_evq h = {.a = store, .cap = N};
    dp_heap_evq_clear(&h);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    double now = 0;
    int pushed = 0, popped = 0;
    uint64_t last_seq = 0;
    while (popped < N) {
        if (pushed < N && (h.n == 0 || gsl_rng_uniform(r) < 0.6)) {
            dp_heap_evq_push(&h, now + (double)gsl_rng_uniform_int(r, 3), (uint32_t)pushed++);
        } else {
            dp_heap_ev e = dp_heap_evq_pop(&h);
            ck_assert(e.t >= now);
            if (popped > 0) ck_assert(e.t > now || e.seq > last_seq);
            now = e.t;
            last_seq = e.seq;
            popped++;
        }
    }
    gsl_rng_free(r);
}
END_TEST

/* an indexed max-heap on (key, -id), as dp_env's ready set: removal of any member keeps the
 * positions and the order */
typedef struct idx_ctx {
    const double *key;
    int *pos;
} idx_ctx;
#define IDX_BEFORE(c, x, y) ((c)->key[x] > (c)->key[y] || ((c)->key[x] == (c)->key[y] && (x) < (y)))
#define IDX_MOVED(c, x, i) ((c)->pos[x] = (i))
DP_HEAP_DEFINE(idx_heap, int, idx_ctx *, IDX_BEFORE, IDX_MOVED)

START_TEST(indexed_remove_anywhere)
{
    enum { N = 300 };
    double key[N];
    int pos[N], a[N], n = 0;
    idx_ctx c = {.key = key, .pos = pos};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    for (int v = 0; v < N; v++) {
        key[v] = (double)gsl_rng_uniform_int(r, 10);   /* many equal keys: the id breaks ties */
        pos[v] = -1;
    }
    for (int v = 0; v < N; v++) idx_heap_push(&c, a, &n, v);
    /* remove a third at random positions */
    for (int k = 0; k < N / 3; k++) {
        int i = (int)gsl_rng_uniform_int(r, (unsigned long)n);
        pos[a[i]] = -1;
        idx_heap_remove_at(&c, a, &n, i);
        for (int j = 0; j < n; j++) ck_assert_int_eq(pos[a[j]], j);
    }
    ck_assert_int_eq(n, N - N / 3);
    /* the rest come out by key descending, then id ascending */
    int prev = -1;
    while (n > 0) {
        int v = idx_heap_pop(&c, a, &n);
        if (prev >= 0) ck_assert(key[v] < key[prev] || (key[v] == key[prev] && v > prev));
        prev = v;
    }
    gsl_rng_free(r);
}
END_TEST

/* is_heap finds a broken order (what DP_HEAP_PARANOID asserts after each operation) */
START_TEST(is_heap_detects_disorder)
{
    double key[4] = {4, 3, 2, 1};
    int pos[4];
    idx_ctx c = {.key = key, .pos = pos};
    int good[4] = {0, 1, 2, 3}, bad[4] = {1, 0, 2, 3};
    ck_assert(idx_heap_is_heap(&c, good, 4));
    ck_assert(!idx_heap_is_heap(&c, bad, 4));
    ck_assert(idx_heap_is_heap(&c, bad, 1));
}
END_TEST

/* growth by doubling from 16; a heap that fits is left alone */
START_TEST(grow)
{
    dp_heap_ev *a = NULL;
    int cap = 0;
    a = dp_heap_grow(a, &cap, 1, sizeof *a);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(cap, 16);
    dp_heap_ev *b = dp_heap_grow(a, &cap, 16, sizeof *a);
    ck_assert_ptr_eq(a, b);
    ck_assert_int_eq(cap, 16);
    a = dp_heap_grow(a, &cap, 17, sizeof *a);
    ck_assert_int_eq(cap, 32);
    a = dp_heap_grow(a, &cap, 200, sizeof *a);
    ck_assert_int_eq(cap, 256);
    dp_heap_evq h = {.a = a, .cap = cap};
    dp_heap_evq_clear(&h);
    for (int i = 0; i < cap; i++) dp_heap_evq_push(&h, -i, (uint32_t)i);
    ck_assert_uint_eq(dp_heap_evq_pop(&h).ev, (uint32_t)cap - 1);
    free(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("heap");
    TCase *t = tcase_create("heap");
    tcase_add_test(t, events_by_time_then_sequence);
    tcase_add_test(t, events_interleaved);
    tcase_add_test(t, indexed_remove_anywhere);
    tcase_add_test(t, is_heap_detects_disorder);
    tcase_add_test(t, grow);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
