/* dp_transfer_maxmin.c: the max-min fair sharing transfer model (dp_transfer.h, DP_TRANSFER_MAXMIN;
 * Bertsekas and Gallager, Data Networks, 6.5.2). Each route segment first waits its latency,
 * then its bytes flow at the max-min fair share of every channel it crosses among all flowing
 * transfers, found by progressive filling and recomputed whenever a flow joins or leaves.
 *
 * Transfers on the same segment class (the topology's classes: segments crossing the same
 * channels) always get the same rate, so a class keeps one service level `served` (bytes served
 * to each of its flows since the reset) and a heap of its flows keyed by the level at which each
 * one finishes: a rate change is O(classes), not O(flows). */
#include "dp_transfer_model.h"
#include "dp_alloc.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

enum { EV_LATENCY = 1 };  /* transfer id finished its segment's latency */

typedef struct flow_key {
    double key;      /* the class's service level at which the flow finishes */
    int id;          /* transfer */
} flow_key;

typedef struct klass {
    flow_key *h;     /* growable heap of flows in their bandwidth phase */
    int n, cap;      /* n = flows in their bandwidth phase */
    double rate;     /* bytes/s per flow */
    double served;   /* bytes served to each flow of the class since the reset */
    double logged_rate;
    int logged_n;
} klass;

typedef struct mm_state {
    int *seg;                      /* (m) each transfer's current segment (index into t->seg) */
    klass *cls;                    /* (classes) */
    int *chan_cls_ptr, *chan_cls;  /* CSR: classes crossing each channel */
    double *cap_rem;               /* (channels) capacity not yet shared out in mm_rates */
    double *load;                  /* (channels) flows not yet frozen; -1 outside mm_rates */
    int *loaded;                   /* channels with load in the current rate computation */
    unsigned char *frozen;         /* (classes) rate fixed in this computation */
    int *active, n_active;         /* classes with flows */
    int *active_pos;               /* (classes) index in active, -1 when idle */
    double next_done;              /* when the next segment ends (INFINITY: none) */
    int next_cls;                  /* in which class */
} mm_state;

/* a class's flows, earliest finishing service level first (then transfer id) */
#define FLOW_BEFORE(ctx, x, y) ((x).key < (y).key || ((x).key == (y).key && (x).id < (y).id))
DP_HEAP_DEFINE(flow_heap, flow_key, const void *, FLOW_BEFORE, DP_HEAP_NO_INDEX)

/* seconds per byte of a lone transfer: the route's sum over segments of 1 / bottleneck */
static double mm_nominal(const dp_topology *t, const dp_topology_route_info *r)
{
    (void)t;
    return r->inv_bw;
}

static int mm_alloc(dp_transfer *x)
{
    const dp_topology *t = x->t;
    DP_TRANSFER_ALLOC_ZERO(x, x->state, 1, sizeof(mm_state));
    mm_state *s = x->state;
    if (!s) return DP_ENOMEM;
    const size_t m1 = (size_t)x->m + 1, NC = (size_t)t->n_channels + 1, NK = (size_t)t->n_classes + 1;
    DP_TRANSFER_ALLOC(x, s->seg, m1, sizeof(int));
    DP_TRANSFER_ALLOC_ZERO(x, s->cls, NK, sizeof(klass));
    DP_TRANSFER_ALLOC(x, s->cap_rem, NC, sizeof(double));
    DP_TRANSFER_ALLOC(x, s->load, NC, sizeof(double));
    DP_TRANSFER_ALLOC(x, s->loaded, NC, sizeof(int));
    DP_TRANSFER_ALLOC(x, s->frozen, NK, 1);
    DP_TRANSFER_ALLOC(x, s->active, NK, sizeof(int));
    DP_TRANSFER_ALLOC(x, s->active_pos, NK, sizeof(int));
    DP_TRANSFER_ALLOC_ZERO(x, s->chan_cls_ptr, NC + 1, sizeof(int));
    DP_TRANSFER_ALLOC(x, s->chan_cls, (size_t)t->class_ptr[t->n_classes] + 1, sizeof(int));
    x->ev.cap = x->m + 1;   /* at most one latency pending per transfer */
    DP_TRANSFER_ALLOC(x, x->ev.a, (size_t)x->ev.cap, sizeof(dp_heap_ev));
    if (x->owned.failed) return DP_ENOMEM;
    for (int k = 0; k < t->n_classes; k++)
        for (int q = t->class_ptr[k]; q < t->class_ptr[k + 1]; q++) s->chan_cls_ptr[t->class_chan[q] + 1]++;
    for (size_t ch = 0; ch < NC; ch++) s->chan_cls_ptr[ch + 1] += s->chan_cls_ptr[ch];
    int *fill = dp_alloc_calloc(NC, sizeof(int));
    if (!fill) return DP_ENOMEM;
    for (int k = 0; k < t->n_classes; k++)
        for (int q = t->class_ptr[k]; q < t->class_ptr[k + 1]; q++) {
            int ch = t->class_chan[q];
            s->chan_cls[s->chan_cls_ptr[ch] + fill[ch]++] = k;
        }
    free(fill);
    return DP_OK;
}

/* the per-class flow heaps grow during runs, outside x->owned */
static void mm_free(dp_transfer *x)
{
    mm_state *s = x->state;
    if (!s || !s->cls) return;
    for (int k = 0; k < x->t->n_classes; k++) free(s->cls[k].h);
}

static void mm_reset(dp_transfer *x)
{
    mm_state *s = x->state;
    for (int k = 0; k < x->t->n_classes; k++) {
        klass *q = &s->cls[k];
        q->n = 0;
        q->rate = 0;
        q->served = 0;
        q->logged_rate = -1;
        q->logged_n = -1;
        s->active_pos[k] = -1;
    }
    for (int ch = 0; ch < x->t->n_channels; ch++) s->load[ch] = -1;
    s->n_active = 0;
    s->next_done = INFINITY;
    s->next_cls = -1;
}

static size_t mm_extra_bytes(const dp_transfer *x)
{
    const mm_state *s = x->state;
    size_t b = 0;
    for (int k = 0; k < x->t->n_classes; k++) b += (size_t)s->cls[k].cap * sizeof(flow_key);
    return b;
}

/* returns DP_ENOMEM when the heap cannot grow (the run then fails: dp_transfer_failed) */
static int flows_push(klass *q, double key, int id)
{
    flow_key *h = dp_heap_grow(q->h, &q->cap, q->n + 1, sizeof *h);
    if (!h) return DP_ENOMEM;
    q->h = h;
    flow_heap_push(NULL, q->h, &q->n, (flow_key){.key = key, .id = id});
    return DP_OK;
}

/* bring every flowing class's service up to time t */
static void mm_sync(dp_transfer *x, double t)
{
    mm_state *s = x->state;
    double dt = t - x->now;
    if (dt > 0)
        for (int i = 0; i < s->n_active; i++) {
            klass *q = &s->cls[s->active[i]];
            q->served += q->rate * dt;
        }
    x->now = t;
}

/* progressive filling over the flowing classes (a class of n flows weighs n on its channels):
 * repeatedly the loaded channel with the smallest fair share (remaining capacity / unfrozen
 * flows) fixes the rate of every unfrozen class crossing it */
static void mm_rates(dp_transfer *x)
{
    mm_state *s = x->state;
    const dp_topology *t = x->t;
    int nl = 0;
    for (int i = 0; i < s->n_active; i++) {
        int k = s->active[i];
        s->frozen[k] = 0;
        for (int p = t->class_ptr[k]; p < t->class_ptr[k + 1]; p++) {
            int ch = t->class_chan[p];
            if (s->load[ch] < 0) {  /* first time this round: remember it as loaded */
                s->cap_rem[ch] = t->chan_bw[ch];
                s->load[ch] = 0;
                s->loaded[nl++] = ch;
            }
            s->load[ch] += s->cls[k].n;
        }
    }
    int left = s->n_active;
    while (left > 0) {
        int best = -1;
        double share = INFINITY;
        for (int j = 0; j < nl; ) {
            int ch = s->loaded[j];
            if (s->load[ch] <= 0) {  /* every flow on it is frozen: drop it from the scan */
                s->load[ch] = -1;
                s->loaded[j] = s->loaded[--nl];
                continue;
            }
            double sh = s->cap_rem[ch] / s->load[ch];
            if (sh < share || (sh == share && ch < best)) { share = sh; best = ch; }
            j++;
        }
        assert(best >= 0);
        if (share < 0) share = 0;
        for (int j = s->chan_cls_ptr[best]; j < s->chan_cls_ptr[best + 1]; j++) {
            int k = s->chan_cls[j];
            if (s->active_pos[k] < 0 || s->frozen[k]) continue;
            s->frozen[k] = 1;
            s->cls[k].rate = share;
            left--;
            for (int p = t->class_ptr[k]; p < t->class_ptr[k + 1]; p++) {
                int ch = t->class_chan[p];
                s->cap_rem[ch] -= share * s->cls[k].n;
                s->load[ch] -= s->cls[k].n;
            }
        }
    }
    for (int j = 0; j < nl; j++) s->load[s->loaded[j]] = -1;
    /* the next segment end: each class's first finisher */
    s->next_done = INFINITY;
    s->next_cls = -1;
    for (int i = 0; i < s->n_active; i++) {
        int k = s->active[i];
        klass *q = &s->cls[k];
        double te = q->rate > 0 ? x->now + (q->h[0].key - q->served) / q->rate : INFINITY;
        if (q->h[0].key <= q->served) te = x->now;
        if (te < s->next_done || (te == s->next_done && k < s->next_cls)) { s->next_done = te; s->next_cls = k; }
        if (x->trace && (q->rate != q->logged_rate || q->n != q->logged_n)) {
            dp_transfer_log_rate(x, x->now, k, q->n, q->rate);
            q->logged_rate = q->rate;
            q->logged_n = q->n;
        }
    }
}

static void class_activate(mm_state *s, int k)
{
    if (s->active_pos[k] >= 0) return;
    s->active_pos[k] = s->n_active;
    s->active[s->n_active++] = k;
}

static void class_deactivate(dp_transfer *x, int k)
{
    mm_state *s = x->state;
    int i = s->active_pos[k];
    int last = s->active[--s->n_active];
    s->active[i] = last;
    s->active_pos[last] = i;
    s->active_pos[k] = -1;
    if (x->trace) {
        dp_transfer_log_rate(x, x->now, k, 0, 0);
        s->cls[k].logged_rate = 0;
        s->cls[k].logged_n = 0;
    }
}

/* transfer id begins its current segment: its latency first */
static void segment_begin(dp_transfer *x, int id, double now)
{
    mm_state *s = x->state;
    const dp_topology_segment *sg = &x->t->seg[s->seg[id]];
    const int p = dp_transfer_pair(x, id);
    double lat = sg->latency_s * x->pair_lat_scale[p];
    if (s->seg[id] == dp_topology_route(x->t, x->src[id], x->dst[id])->seg_begin) lat += x->pair_lat_add[p];
    dp_heap_evq_push(&x->ev, now + lat, (uint32_t)EV_LATENCY << DP_TRANSFER_EV_SHIFT | (uint32_t)id);
}

/* transfer id starts flowing on its segment's class (the caller recomputes rates) */
static void flow_join(dp_transfer *x, int id)
{
    mm_state *s = x->state;
    int k = x->t->seg[s->seg[id]].klass;
    klass *q = &s->cls[k];
    double work = x->c->edge_data[id] * x->pair_work[dp_transfer_pair(x, id)];
    if (flows_push(q, q->served + work, id) != DP_OK) { x->failed = 1; return; }
    class_activate(s, k);
}

/* every flow of class k due at its service level leaves: on to its next segment, or done */
static void class_finish(dp_transfer *x, int k, double now)
{
    mm_state *s = x->state;
    klass *q = &s->cls[k];
    if (q->served < q->h[0].key) q->served = q->h[0].key;
    double tol = 1e-12 * (q->served > 1 ? q->served : 1);
    while (q->n > 0 && q->h[0].key <= q->served + tol) {
        int id = flow_heap_pop(NULL, q->h, &q->n).id;
        if (++s->seg[id] < dp_topology_route(x->t, x->src[id], x->dst[id])->seg_end)
            segment_begin(x, id, now);
        else
            x->done[x->n_done++] = id;
    }
    if (q->n == 0) class_deactivate(x, k);
}

static int mm_start(dp_transfer *x, int id, int a, int b, const dp_topology_route_info *r, double now, double *delay)
{
    (void)a; (void)b; (void)delay;
    mm_state *s = x->state;
    mm_sync(x, now);
    s->seg[id] = r->seg_begin;
    segment_begin(x, id, now);
    return 0;
}

static double mm_next_time(const dp_transfer *x)
{
    const mm_state *s = x->state;
    double t = x->ev.n > 0 ? x->ev.a[0].t : INFINITY;
    return s->next_done < t ? s->next_done : t;
}

static void mm_advance(dp_transfer *x, double t)
{
    mm_state *s = x->state;
    for (;;) {
        double tl = x->ev.n > 0 ? x->ev.a[0].t : INFINITY;
        double te = s->next_done < tl ? s->next_done : tl;
        if (!(te <= t)) break;
        mm_sync(x, te);
        x->n_events++;
        if (s->next_done <= tl) {
            /* segment ends in the class that finishes first (all its flows due now) */
            class_finish(x, s->next_cls, te);
        } else {
            while (x->ev.n > 0 && x->ev.a[0].t == te) flow_join(x, (int)(dp_heap_evq_pop(&x->ev).ev & DP_TRANSFER_EV_MASK));
        }
        mm_rates(x);
    }
}

/* each transfer's segment, each class's flows (its heap's live elements, grown on restore),
 * service level and rate, the active classes and the next segment end (cap_rem, load, loaded
 * and frozen are mm_rates' scratch: load is -1 between its calls) */
static void mm_snapshot(dp_transfer *x, dp_snap *sn)
{
    mm_state *s = x->state;
    const size_t m1 = (size_t)x->m + 1, NK = (size_t)x->t->n_classes + 1;
    dp_snap_io(sn, s->seg, m1 * sizeof *s->seg);
    for (int k = 0; k < x->t->n_classes; k++) {
        klass *q = &s->cls[k];
        int n = q->n;
        DP_SNAP_VAR(sn, n);
        if (dp_snap_restoring(sn) && !sn->failed) {
            if (n > q->cap) {
                flow_key *h = dp_heap_grow(q->h, &q->cap, n, sizeof *h);
                if (!h) {
                    sn->failed = 1;
                    return;
                }
                q->h = h;
            }
            q->n = n;
        }
        dp_snap_io(sn, q->h, (size_t)n * sizeof *q->h);
        DP_SNAP_VAR(sn, q->rate);
        DP_SNAP_VAR(sn, q->served);
        DP_SNAP_VAR(sn, q->logged_rate);
        DP_SNAP_VAR(sn, q->logged_n);
    }
    dp_snap_io(sn, s->active, NK * sizeof *s->active);
    dp_snap_io(sn, s->active_pos, NK * sizeof *s->active_pos);
    DP_SNAP_VAR(sn, s->n_active);
    DP_SNAP_VAR(sn, s->next_done);
    DP_SNAP_VAR(sn, s->next_cls);
}

const dp_transfer_model dp_transfer_model_maxmin = {
    .name = "maxmin",
    .needs_topology = 1,
    .nominal_s_per_byte = mm_nominal,
    .alloc = mm_alloc,
    .free = mm_free,
    .reset = mm_reset,
    .start = mm_start,
    .next_time = mm_next_time,
    .advance = mm_advance,
    .extra_bytes = mm_extra_bytes,
    .snapshot = mm_snapshot,
};
