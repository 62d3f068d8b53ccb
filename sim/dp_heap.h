/* dp_heap.h (internal, not installed): the one binary heap of the library, and its event-queue
 * instance.
 *
 * Every priority queue in doppler is this heap: the event queues of the simulators (dp_hisim,
 * the transfer models; dp_sim's once it holds more than a few events: below that a sorted array
 * is cheaper, sim/dp_sim.c), the priority device queues of the general engine, the per-class
 * flow queues of max-min sharing, the ready sets of the list schedulers (policy/dp_list.c) and of
 * the assignment environment (policy/dp_env.c). One implementation means one place for the
 * invariants and one order of moves, so that a heap's layout (which dp_env exposes as its ready
 * array) is the same whichever owner builds it.
 *
 * DP_HEAP_DEFINE(name, T, CTX, BEFORE, MOVED) defines, for elements of type T kept in a
 * caller-owned array a[0..n):
 *
 *   int  name_sift_up(CTX ctx, T *a, int i)         restore the order after a[i] moved up the order;
 *                                                   returns where that element is now
 *   void name_sift_down(CTX ctx, T *a, int n, int i) restore the order after a[i] moved down it
 *   void name_push(CTX ctx, T *a, int *n, T x)      insert x; the caller guarantees room for *n + 1
 *   T    name_pop(CTX ctx, T *a, int *n)            remove and return the first element; *n > 0
 *   void name_remove_at(CTX ctx, T *a, int *n, int i) remove a[i] (any position), 0 <= i < *n
 *   int  name_is_heap(CTX ctx, const T *a, int n)   1 when a[0..n) is in heap order (O(n): tests)
 *
 * BEFORE(ctx, x, y) is a strict total order on the elements that can be in one heap at once
 * ("x comes out before y"): a heap is deterministic only when no two of its elements tie, so
 * every owner breaks equal keys by a sequence number or an id: events by (time, sequence number
 * of scheduling), device queues by (priority descending, arrival number), ready sets by
 * (b-level descending, op id). MOVED(ctx, x, i) is called whenever element x is stored at index
 * i: an indexed heap records positions there (dp_env's ready_pos, which makes name_remove_at of
 * any ready op O(log n)); others pass DP_HEAP_NO_INDEX.
 *
 * Invariant (heap order): for every i > 0, BEFORE(a[i], a[(i - 1) / 2]) is false. Debug builds
 * (without NDEBUG) assert it around every element a push, pop or removal places: O(1) each.
 * Defining DP_HEAP_PARANOID before including this header also asserts the whole order after
 * every push, pop and removal (O(n) each: for tests).
 *
 * Storage is the caller's (allocated once per workspace and reused); the heap never allocates.
 * Growable owners call dp_heap_grow before a push that may not fit. */
#ifndef DP_HEAP_H
#define DP_HEAP_H

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include "dp_alloc.h"

#define DP_HEAP_NO_INDEX(ctx, x, i) ((void)0)

#ifdef DP_HEAP_PARANOID
#define DP_HEAP_ASSERT_ORDER(name, ctx, a, n) assert(name##_is_heap((ctx), (a), (n)))
#else
#define DP_HEAP_ASSERT_ORDER(name, ctx, a, n) ((void)0)
#endif

#define DP_HEAP_DEFINE(name, T, CTX, BEFORE, MOVED)                                                  \
    static inline int name##_is_heap(CTX ctx, const T *a, int n)                                     \
    {                                                                                                \
        for (int i = 1; i < n; i++)                                                                  \
            if (BEFORE(ctx, a[i], a[(i - 1) >> 1])) return 0;                                        \
        return 1;                                                                                    \
    }                                                                                                \
    /* store x at or above hole i (a[i] is free), moving the parents it comes before down */     \
    static inline int name##_place_up(CTX ctx, T *a, int i, T x)                                     \
    {                                                                                                \
        while (i > 0) {                                                                              \
            int p = (i - 1) >> 1;                                                                    \
            if (!(BEFORE(ctx, x, a[p]))) break;                                                      \
            a[i] = a[p];                                                                             \
            MOVED(ctx, a[i], i);                                                                     \
            i = p;                                                                                   \
        }                                                                                            \
        assert(i == 0 || !(BEFORE(ctx, x, a[(i - 1) >> 1])));                                        \
        a[i] = x;                                                                                    \
        MOVED(ctx, a[i], i);                                                                         \
        return i;                                                                                    \
    }                                                                                                \
    /* store x at or below hole i of a[0..n), moving the children that come before it up */       \
    static inline void name##_place_down(CTX ctx, T *a, int n, int i, T x)                           \
    {                                                                                                \
        for (;;) {                                                                                   \
            int l = 2 * i + 1;                                                                       \
            if (l >= n) break;                                                                       \
            int r = l + 1;                                                                           \
            int c = (r < n && (BEFORE(ctx, a[r], a[l]))) ? r : l;                                    \
            if (!(BEFORE(ctx, a[c], x))) break;                                                      \
            a[i] = a[c];                                                                             \
            MOVED(ctx, a[i], i);                                                                     \
            i = c;                                                                                   \
        }                                                                                            \
        assert(2 * i + 1 >= n || !(BEFORE(ctx, a[2 * i + 1], x)));                                   \
        assert(2 * i + 2 >= n || !(BEFORE(ctx, a[2 * i + 2], x)));                                   \
        a[i] = x;                                                                                    \
        MOVED(ctx, a[i], i);                                                                         \
    }                                                                                                \
    static inline int name##_sift_up(CTX ctx, T *a, int i)                                           \
    {                                                                                                \
        return name##_place_up(ctx, a, i, a[i]);                                                     \
    }                                                                                                \
    static inline void name##_sift_down(CTX ctx, T *a, int n, int i)                                 \
    {                                                                                                \
        name##_place_down(ctx, a, n, i, a[i]);                                                       \
    }                                                                                                \
    static inline void name##_push(CTX ctx, T *a, int *n, T x)                                       \
    {                                                                                                \
        name##_place_up(ctx, a, (*n)++, x);                                                          \
        DP_HEAP_ASSERT_ORDER(name, ctx, a, *n);                                                      \
    }                                                                                                \
    static inline T name##_pop(CTX ctx, T *a, int *n)                                                \
    {                                                                                                \
        assert(*n > 0);                                                                              \
        T top = a[0];                                                                                \
        if (--*n > 0) name##_place_down(ctx, a, *n, 0, a[*n]);                                      \
        DP_HEAP_ASSERT_ORDER(name, ctx, a, *n);                                                      \
        return top;                                                                                  \
    }                                                                                                \
    static inline void name##_remove_at(CTX ctx, T *a, int *n, int i)                                \
    {                                                                                                \
        assert(i >= 0 && i < *n);                                                                    \
        if (i == --*n) return;                                                                       \
        /* the last element belongs above hole i or at or below it: up, then down from where it   \
         * stopped (a no-op when it moved up) */                                                   \
        name##_sift_down(ctx, a, *n, name##_place_up(ctx, a, i, a[*n]));                             \
        DP_HEAP_ASSERT_ORDER(name, ctx, a, *n);                                                      \
    }

/* ---- the event queue: (time, sequence number) ----
 * Events of one instant come out in the order they were scheduled, so the simulators are
 * deterministic, ties included. */

typedef struct dp_heap_ev {
    double t;      /* seconds (or the graph's time unit) at which the event happens */
    uint64_t seq;  /* scheduling order: dp_heap_evq_push numbers the events 0, 1, ... per run */
    uint32_t ev;   /* the owner's encoding (kind and id) */
} dp_heap_ev;

typedef struct dp_heap_evq {
    dp_heap_ev *a;      /* storage of cap events, given by the owner */
    int n, cap;
    uint64_t seq;  /* the next sequence number */
} dp_heap_evq;

#define DP_HEAP_EV_BEFORE(ctx, x, y) ((x).t < (y).t || ((x).t == (y).t && (x).seq < (y).seq))
DP_HEAP_DEFINE(dp_heap_evq_raw, dp_heap_ev, const void *, DP_HEAP_EV_BEFORE, DP_HEAP_NO_INDEX)

/* Empty the queue and restart the sequence numbers (once per run). */
static inline void dp_heap_evq_clear(dp_heap_evq *h)
{
    h->n = 0;
    h->seq = 0;
}

/* Schedule event ev at time t; the caller guarantees n < cap (dp_heap_grow otherwise). */
static inline void dp_heap_evq_push(dp_heap_evq *h, double t, uint32_t ev)
{
    assert(h->n < h->cap);
    dp_heap_ev x = {.t = t, .seq = h->seq++, .ev = ev};
    dp_heap_evq_raw_push(NULL, h->a, &h->n, x);
}

/* Schedule event ev at time t with a sequence number the owner chose (an owner that numbers
 * events itself, such as a simulation resumed from a recorded state: dp_sim_prefix_add). */
static inline void dp_heap_evq_push_seq(dp_heap_evq *h, double t, uint64_t seq, uint32_t ev)
{
    assert(h->n < h->cap);
    dp_heap_ev x = {.t = t, .seq = seq, .ev = ev};
    dp_heap_evq_raw_push(NULL, h->a, &h->n, x);
}

/* The earliest event (smallest time, then sequence number), removed; n > 0. */
static inline dp_heap_ev dp_heap_evq_pop(dp_heap_evq *h)
{
    return dp_heap_evq_raw_pop(NULL, h->a, &h->n);
}

/* Storage for at least need elements of elem bytes, grown from a (cap elements; NULL and 0 at
 * first) by doubling (from 16). Returns the storage, a itself when it holds need already, and
 * *cap updated; NULL when out of memory (a and *cap then unchanged, a still valid). */
static inline void *dp_heap_grow(void *a, int *cap, int need, size_t elem)
{
    if (need <= *cap) return a;
    int nc = *cap > 0 ? *cap : 16;
    while (nc < need) nc *= 2;
    void *p = dp_alloc_realloc(a, (size_t)nc * elem);
    if (p) *cap = nc;
    return p;
}

#endif
