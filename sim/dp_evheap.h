/* dp_evheap.h (internal, not installed): a binary min-heap of events keyed by (time, sequence
 * number), so that events of one instant come out in the order they were scheduled: the
 * simulators are deterministic, ties included. Storage is given by the caller (allocated once
 * per workspace); the capacity must cover the most events ever pending at once. */
#ifndef DP_EVHEAP_H
#define DP_EVHEAP_H

#include <stdint.h>

typedef struct dp_ev {
    double t;
    uint64_t seq;
    uint32_t ev;  /* the owner's encoding (kind and id) */
} dp_ev;

typedef struct dp_evheap {
    dp_ev *a;
    int n, cap;
    uint64_t seq;
} dp_evheap;

static inline int dp_ev_less(const dp_ev *x, const dp_ev *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static inline void dp_evheap_clear(dp_evheap *h)
{
    h->n = 0;
    h->seq = 0;
}

/* Push; the caller guarantees n < cap. */
static inline void dp_evheap_push(dp_evheap *h, double t, uint32_t ev)
{
    dp_ev x = {t, h->seq++, ev};
    int i = h->n++;
    while (i > 0) {
        int p = (i - 1) >> 1;
        if (!dp_ev_less(&x, &h->a[p])) break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = x;
}

static inline dp_ev dp_evheap_pop(dp_evheap *h)
{
    dp_ev top = h->a[0];
    dp_ev x = h->a[--h->n];
    int n = h->n, i = 0;
    for (;;) {
        int l = 2 * i + 1;
        if (l >= n) break;
        int r = l + 1;
        int m = (r < n && dp_ev_less(&h->a[r], &h->a[l])) ? r : l;
        if (!dp_ev_less(&h->a[m], &x)) break;
        h->a[i] = h->a[m];
        i = m;
    }
    h->a[i] = x;
    return top;
}

#endif
