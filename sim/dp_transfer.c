/* dp_transfer.c: the fixed-delay, per-link FIFO and max-min transfer models (see dp_transfer.h). */
#include "dp_transfer.h"
#include "dp_heap.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* internal event kinds (encoded kind << 28 | id) */
enum { XE_CHAN_DONE = 1, /* FIFO: chunk id finished occupying its channel */
       XE_ARRIVE,        /* FIFO: chunk id reached the next hop */
       XE_LATENCY };     /* max-min: transfer id finished its segment's latency */
#define XE_SHIFT 28
#define XE_MASK ((1u << XE_SHIFT) - 1)

/* a growable per-class heap of flows keyed by the service level at which they finish */
typedef struct flow_key {
    double key;
    int id;
} flow_key;

typedef struct klass {
    flow_key *h;
    int n, cap;      /* n = flows in their bandwidth phase */
    double rate;     /* bytes/s per flow */
    double served;   /* bytes served to each flow of the class since the reset */
    double logged_rate;
    int logged_n;
} klass;

struct dp_xfer {
    dp_xfer_kind kind;
    const dp_costs *c;
    const dp_topology *t;
    int D, m, K;     /* devices, transfers (edges), chunks */
    size_t bytes_held;
    dp_evheap ev;
    long n_events;
    int trace;
    double now;
    /* per transfer */
    int *src, *dst;
    /* per device pair (a * D + b): calibrated routes (dp_transfer.h); 1, 1, 0 when uncalibrated */
    double *pair_work, *pair_lat_scale, *pair_lat_add;
    int *seg;        /* max-min: current segment (absolute index into t->seg) */
    int *left;       /* FIFO: chunks not yet arrived */
    double *flow_t0;
    /* FIFO: per chunk (id * K + c) the hop it is at, and the channel queue link */
    int *chunk_hop, *chunk_next;
    int *q_head, *q_tail;          /* per channel */
    unsigned char *chan_busy;
    /* max-min */
    klass *cls;
    int *chan_cls_ptr, *chan_cls;  /* CSR: classes crossing each channel */
    double *cap_rem;
    double *load;    /* flows not yet frozen on each channel; -1 outside a rate computation */
    int *loaded;     /* channels with load in the current rate computation */
    unsigned char *frozen;
    int *active;                   /* classes with flows */
    int n_active;
    int *active_pos;
    double next_done;
    int next_cls;
    /* output */
    int *done;
    int n_done;
    int failed;      /* a per-class heap could not grow: the run is invalid */
    dp_xfer_busy *busy_log;
    int n_busy, cap_busy;
    dp_xfer_rate *rate_log;
    int n_rate, cap_rate;
};

static const char *kind_names[] = {"fixed", "fifo", "maxmin"};

const char *dp_xfer_kind_name(dp_xfer_kind k)
{
    return (unsigned)k < 3 ? kind_names[k] : "?";
}

int dp_xfer_kind_parse(const char *s)
{
    for (int k = 0; k < 3; k++)
        if (strcmp(s, kind_names[k]) == 0) return k;
    return -1;
}

dp_xfer_kind dp_xfer_get_kind(const dp_xfer *x)
{
    return x->kind;
}

static void *track(dp_xfer *x, void *p, size_t n, size_t sz)
{
    x->bytes_held += n * sz;
    return p;
}

#define ALLOC(x, n, sz) track((x), dp_malloc_n((n), (sz)), (n), (sz))

/* the calibrated numbers of each device pair, for model `kind` (see dp_transfer.h) */
static int calibrate_pairs(dp_xfer *x, const dp_calib *cal, dp_error *err)
{
    const dp_topology *t = x->t;
    const int D = x->D;
    for (int p = 0; p < D * D; p++) { x->pair_work[p] = 1; x->pair_lat_scale[p] = 1; x->pair_lat_add[p] = 0; }
    if (!cal) return DP_OK;
    for (int r = 0; r < cal->n_routes; r++)
        if (dp_topology_find_device(t, cal->route[r].src) < 0 || dp_topology_find_device(t, cal->route[r].dst) < 0)
            return dp_error_set(err, DP_EINVAL, "%s: routes[%d]: topology %s has no device \"%s\" or \"%s\"",
                                cal->path ? cal->path : "calibration", r, t->name, cal->route[r].src, cal->route[r].dst);
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            const dp_calib_route *cr = a == b ? NULL : dp_calib_find_route(cal, t->dev[a].name, t->dev[b].name);
            if (!cr) continue;
            const dp_topo_route *r = dp_topology_route(t, a, b);
            const int p = a * D + b;
            if (r->latency_s > 0) x->pair_lat_scale[p] = cr->latency_s / r->latency_s;
            else x->pair_lat_add[p] = cr->latency_s;
            double nominal = 0;  /* seconds per byte of a lone transfer under this model */
            if (x->kind == DP_XFER_FIFO) {
                for (int sg = r->seg_begin; sg < r->seg_end; sg++)
                    for (int h = t->seg[sg].hop_begin; h < t->seg[sg].hop_end; h++) nominal += 1.0 / t->chan_bw[t->hop_chan[h]];
            } else {
                nominal = r->inv_bw;
            }
            x->pair_work[p] = (1.0 / cr->bandwidth_Bps) / nominal;
        }
    return DP_OK;
}

dp_xfer *dp_xfer_alloc(dp_xfer_kind kind, const dp_costs *c, const dp_topology *t, const dp_calib *cal, int chunks,
                       dp_error *err)
{
    if (kind != DP_XFER_FIXED && !t) {
        dp_error_set(err, DP_EINVAL, "transfer model %s needs a topology (--topology): it shares links", dp_xfer_kind_name(kind));
        return NULL;
    }
    if (t && t->n_devices != c->n_devices) {
        dp_error_set(err, DP_EINVAL, "topology %s has %d devices, the cost tables %d", t->name, t->n_devices, c->n_devices);
        return NULL;
    }
    if (chunks < 1 || chunks > 1024) {
        dp_error_set(err, DP_EINVAL, "chunks must be 1..1024, got %d", chunks);
        return NULL;
    }
    dp_xfer *x = calloc(1, sizeof *x);
    if (!x) goto nomem;
    x->kind = kind;
    x->c = c;
    x->t = t;
    x->D = c->n_devices;
    x->m = c->n_edges;
    x->K = kind == DP_XFER_FIFO ? chunks : 1;
    if ((double)x->m * x->K >= (double)XE_MASK) {
        free(x);
        dp_error_set(err, DP_ENOMEM, "%d transfers x %d chunks: too many for the transfer model", c->n_edges, chunks);
        return NULL;
    }
    x->bytes_held = sizeof *x;
    size_t m1 = (size_t)x->m + 1;
    x->done = ALLOC(x, m1, sizeof(int));
    x->flow_t0 = ALLOC(x, m1, sizeof(double));
    if (!x->done || !x->flow_t0) goto nomem;
    if (kind == DP_XFER_FIXED) return x;
    x->src = ALLOC(x, m1, sizeof(int));
    x->dst = ALLOC(x, m1, sizeof(int));
    const size_t DD = (size_t)x->D * (size_t)x->D;
    x->pair_work = ALLOC(x, DD, sizeof(double));
    x->pair_lat_scale = ALLOC(x, DD, sizeof(double));
    x->pair_lat_add = ALLOC(x, DD, sizeof(double));
    if (!x->src || !x->dst || !x->pair_work || !x->pair_lat_scale || !x->pair_lat_add) goto nomem;
    if (calibrate_pairs(x, cal, err) != DP_OK) {
        dp_xfer_free(x);
        return NULL;
    }
    const int NC = t->n_channels + 1;
    if (kind == DP_XFER_FIFO) {
        size_t nch;
        if (dp_size_mul(m1, (size_t)x->K, &nch) != DP_OK) goto nomem;
        x->left = ALLOC(x, m1, sizeof(int));
        x->chunk_hop = ALLOC(x, nch, sizeof(int));
        x->chunk_next = ALLOC(x, nch, sizeof(int));
        x->q_head = ALLOC(x, NC, sizeof(int));
        x->q_tail = ALLOC(x, NC, sizeof(int));
        x->chan_busy = ALLOC(x, NC, 1);
        /* pending: at most one occupancy end per channel and one arrival per chunk */
        x->ev.cap = (int)(nch + NC);
        if (nch + NC > (size_t)1 << 30) goto nomem;
        x->ev.a = ALLOC(x, (size_t)x->ev.cap, sizeof(dp_ev));
        if (!x->left || !x->chunk_hop || !x->chunk_next || !x->q_head || !x->q_tail || !x->chan_busy || !x->ev.a) goto nomem;
    } else {
        x->seg = ALLOC(x, m1, sizeof(int));
        x->cls = track(x, calloc((size_t)t->n_classes + 1, sizeof(klass)), (size_t)t->n_classes + 1, sizeof(klass));
        x->cap_rem = ALLOC(x, NC, sizeof(double));
        x->load = ALLOC(x, NC, sizeof(double));
        x->loaded = ALLOC(x, NC, sizeof(int));
        x->frozen = ALLOC(x, (size_t)t->n_classes + 1, 1);
        x->active = ALLOC(x, (size_t)t->n_classes + 1, sizeof(int));
        x->active_pos = ALLOC(x, (size_t)t->n_classes + 1, sizeof(int));
        x->chan_cls_ptr = track(x, calloc((size_t)NC + 1, sizeof(int)), (size_t)NC + 1, sizeof(int));
        x->chan_cls = ALLOC(x, (size_t)t->class_ptr[t->n_classes] + 1, sizeof(int));
        x->ev.cap = x->m + 1;
        x->ev.a = ALLOC(x, (size_t)x->ev.cap, sizeof(dp_ev));
        if (!x->seg || !x->cls || !x->cap_rem || !x->load || !x->loaded || !x->frozen || !x->active || !x->active_pos ||
            !x->chan_cls_ptr || !x->chan_cls || !x->ev.a) goto nomem;
        for (int k = 0; k < t->n_classes; k++)
            for (int q = t->class_ptr[k]; q < t->class_ptr[k + 1]; q++) x->chan_cls_ptr[t->class_chan[q] + 1]++;
        for (int ch = 0; ch < NC; ch++) x->chan_cls_ptr[ch + 1] += x->chan_cls_ptr[ch];
        int *fill = calloc((size_t)NC, sizeof(int));
        if (!fill) goto nomem;
        for (int k = 0; k < t->n_classes; k++)
            for (int q = t->class_ptr[k]; q < t->class_ptr[k + 1]; q++) {
                int ch = t->class_chan[q];
                x->chan_cls[x->chan_cls_ptr[ch] + fill[ch]++] = k;
            }
        free(fill);
    }
    dp_xfer_reset(x, 0);
    return x;
nomem:
    dp_xfer_free(x);
    dp_error_set(err, DP_ENOMEM, "out of memory for the %s transfer model", dp_xfer_kind_name(kind));
    return NULL;
}

void dp_xfer_free(dp_xfer *x)
{
    if (!x) return;
    if (x->cls)
        for (int k = 0; k < x->t->n_classes; k++) free(x->cls[k].h);
    free(x->done); free(x->flow_t0); free(x->src); free(x->dst); free(x->seg); free(x->left);
    free(x->pair_work); free(x->pair_lat_scale); free(x->pair_lat_add);
    free(x->chunk_hop); free(x->chunk_next); free(x->q_head); free(x->q_tail); free(x->chan_busy);
    free(x->cls); free(x->cap_rem); free(x->load); free(x->loaded); free(x->frozen); free(x->active); free(x->active_pos);
    free(x->chan_cls_ptr); free(x->chan_cls); free(x->ev.a); free(x->busy_log); free(x->rate_log);
    free(x);
}

void dp_xfer_reset(dp_xfer *x, int trace)
{
    x->trace = trace;
    x->now = 0;
    x->n_events = 0;
    x->n_done = 0;
    x->n_busy = 0;
    x->n_rate = 0;
    x->failed = 0;
    dp_evheap_clear(&x->ev);
    if (x->kind == DP_XFER_FIFO) {
        for (int ch = 0; ch < x->t->n_channels; ch++) { x->q_head[ch] = x->q_tail[ch] = -1; x->chan_busy[ch] = 0; }
    } else if (x->kind == DP_XFER_MAXMIN) {
        for (int k = 0; k < x->t->n_classes; k++) {
            klass *q = &x->cls[k];
            q->n = 0;
            q->rate = 0;
            q->served = 0;
            q->logged_rate = -1;
            q->logged_n = -1;
            x->active_pos[k] = -1;
        }
        for (int ch = 0; ch < x->t->n_channels; ch++) x->load[ch] = -1;
        x->n_active = 0;
        x->next_done = INFINITY;
        x->next_cls = -1;
    }
}

static void log_busy(dp_xfer *x, int chan, int id, double t0, double t1)
{
    if (x->n_busy == x->cap_busy) {
        int nc = x->cap_busy ? 2 * x->cap_busy : 1024;
        dp_xfer_busy *p = realloc(x->busy_log, (size_t)nc * sizeof *p);
        if (!p) return;  /* the trace loses entries, the simulation does not change */
        x->busy_log = p;
        x->cap_busy = nc;
    }
    x->busy_log[x->n_busy++] = (dp_xfer_busy){t0, t1, chan, id};
}

static void log_rate(dp_xfer *x, double t, int k, int n, double r)
{
    if (x->n_rate == x->cap_rate) {
        int nc = x->cap_rate ? 2 * x->cap_rate : 1024;
        dp_xfer_rate *p = realloc(x->rate_log, (size_t)nc * sizeof *p);
        if (!p) return;
        x->rate_log = p;
        x->cap_rate = nc;
    }
    x->rate_log[x->n_rate++] = (dp_xfer_rate){t, k, n, r};
}

/* ---------------- per-link FIFO ---------------- */

static inline int route_hop_begin(const dp_topology *t, const dp_topo_route *r)
{
    return t->seg[r->seg_begin].hop_begin;
}

static inline int route_hop_end(const dp_topology *t, const dp_topo_route *r)
{
    return t->seg[r->seg_end - 1].hop_end;
}

/* the channel at `hop` starts carrying chunk q */
static void fifo_occupy(dp_xfer *x, int ch, int q, double now)
{
    int id = q / x->K;
    double dt = x->c->edge_data[id] * x->pair_work[x->src[id] * x->D + x->dst[id]] / x->K / x->t->chan_bw[ch];
    x->chan_busy[ch] = 1;
    if (x->trace) log_busy(x, ch, id, now, now + dt);
    dp_evheap_push(&x->ev, now + dt, (uint32_t)XE_CHAN_DONE << XE_SHIFT | (uint32_t)q);
}

static void fifo_enqueue(dp_xfer *x, int q, double now)
{
    int ch = x->t->hop_chan[x->chunk_hop[q]];
    if (!x->chan_busy[ch]) { fifo_occupy(x, ch, q, now); return; }
    x->chunk_next[q] = -1;
    if (x->q_tail[ch] < 0) x->q_head[ch] = q;
    else x->chunk_next[x->q_tail[ch]] = q;
    x->q_tail[ch] = q;
}

static void fifo_chan_done(dp_xfer *x, int q, double now)
{
    int ch = x->t->hop_chan[x->chunk_hop[q]];
    x->chan_busy[ch] = 0;
    int nq = x->q_head[ch];
    if (nq >= 0) {
        x->q_head[ch] = x->chunk_next[nq];
        if (x->q_head[ch] < 0) x->q_tail[ch] = -1;
        fifo_occupy(x, ch, nq, now);
    }
    int id = q / x->K, p = x->src[id] * x->D + x->dst[id];
    double lat = x->t->chan_latency[ch] * x->pair_lat_scale[p];
    if (x->pair_lat_add[p] > 0 && x->chunk_hop[q] == route_hop_begin(x->t, dp_topology_route(x->t, x->src[id], x->dst[id])))
        lat += x->pair_lat_add[p];
    dp_evheap_push(&x->ev, now + lat, (uint32_t)XE_ARRIVE << XE_SHIFT | (uint32_t)q);
}

static void fifo_arrive(dp_xfer *x, int q, double now)
{
    int id = q / x->K;
    const dp_topo_route *r = dp_topology_route(x->t, x->src[id], x->dst[id]);
    if (++x->chunk_hop[q] < route_hop_end(x->t, r)) { fifo_enqueue(x, q, now); return; }
    if (--x->left[id] == 0) x->done[x->n_done++] = id;
}

/* ---------------- max-min fair sharing ---------------- */

/* a class's flows, earliest finishing service level first (then transfer id) */
#define FLOW_BEFORE(ctx, x, y) ((x).key < (y).key || ((x).key == (y).key && (x).id < (y).id))
DP_HEAP_DEFINE(flow_heap, flow_key, const void *, FLOW_BEFORE, DP_HEAP_NO_INDEX)

/* returns DP_ENOMEM when the heap cannot grow (the run then fails: dp_xfer_failed) */
static int kheap_push(klass *q, double key, int id)
{
    flow_key *h = dp_heap_grow(q->h, &q->cap, q->n + 1, sizeof *h);
    if (!h) return DP_ENOMEM;
    q->h = h;
    flow_heap_push(NULL, q->h, &q->n, (flow_key){.key = key, .id = id});
    return DP_OK;
}

static flow_key kheap_pop(klass *q)
{
    return flow_heap_pop(NULL, q->h, &q->n);
}

/* bring every flowing class's service up to time t */
static void mm_sync(dp_xfer *x, double t)
{
    double dt = t - x->now;
    if (dt > 0)
        for (int i = 0; i < x->n_active; i++) {
            klass *q = &x->cls[x->active[i]];
            q->served += q->rate * dt;
        }
    x->now = t;
}

/* progressive filling over the flowing classes (a class of n flows weighs n on its channels):
 * repeatedly the loaded channel with the smallest fair share (remaining capacity / unfrozen
 * flows) fixes the rate of every unfrozen class crossing it */
static void mm_rates(dp_xfer *x)
{
    const dp_topology *t = x->t;
    int nl = 0;
    for (int i = 0; i < x->n_active; i++) {
        int k = x->active[i];
        x->frozen[k] = 0;
        for (int p = t->class_ptr[k]; p < t->class_ptr[k + 1]; p++) {
            int ch = t->class_chan[p];
            if (x->load[ch] < 0) {  /* first time this round: remember it as loaded */
                x->cap_rem[ch] = t->chan_bw[ch];
                x->load[ch] = 0;
                x->loaded[nl++] = ch;
            }
            x->load[ch] += x->cls[k].n;
        }
    }
    int left = x->n_active;
    while (left > 0) {
        int best = -1;
        double share = INFINITY;
        for (int j = 0; j < nl; ) {
            int ch = x->loaded[j];
            if (x->load[ch] <= 0) {  /* every flow on it is frozen: drop it from the scan */
                x->load[ch] = -1;
                x->loaded[j] = x->loaded[--nl];
                continue;
            }
            double sh = x->cap_rem[ch] / x->load[ch];
            if (sh < share || (sh == share && ch < best)) { share = sh; best = ch; }
            j++;
        }
        assert(best >= 0);
        if (share < 0) share = 0;
        for (int j = x->chan_cls_ptr[best]; j < x->chan_cls_ptr[best + 1]; j++) {
            int k = x->chan_cls[j];
            if (x->active_pos[k] < 0 || x->frozen[k]) continue;
            x->frozen[k] = 1;
            x->cls[k].rate = share;
            left--;
            for (int p = t->class_ptr[k]; p < t->class_ptr[k + 1]; p++) {
                int ch = t->class_chan[p];
                x->cap_rem[ch] -= share * x->cls[k].n;
                x->load[ch] -= x->cls[k].n;
            }
        }
    }
    for (int j = 0; j < nl; j++) x->load[x->loaded[j]] = -1;
    /* the next segment end: each class's first finisher */
    x->next_done = INFINITY;
    x->next_cls = -1;
    for (int i = 0; i < x->n_active; i++) {
        int k = x->active[i];
        klass *q = &x->cls[k];
        double te = q->rate > 0 ? x->now + (q->h[0].key - q->served) / q->rate : INFINITY;
        if (q->h[0].key <= q->served) te = x->now;
        if (te < x->next_done || (te == x->next_done && k < x->next_cls)) { x->next_done = te; x->next_cls = k; }
        if (x->trace && (q->rate != q->logged_rate || q->n != q->logged_n)) {
            log_rate(x, x->now, k, q->n, q->rate);
            q->logged_rate = q->rate;
            q->logged_n = q->n;
        }
    }
}

static void mm_activate(dp_xfer *x, int k)
{
    if (x->active_pos[k] >= 0) return;
    x->active_pos[k] = x->n_active;
    x->active[x->n_active++] = k;
}

static void mm_deactivate(dp_xfer *x, int k)
{
    int i = x->active_pos[k];
    int last = x->active[--x->n_active];
    x->active[i] = last;
    x->active_pos[last] = i;
    x->active_pos[k] = -1;
    if (x->trace) {
        log_rate(x, x->now, k, 0, 0);
        x->cls[k].logged_rate = 0;
        x->cls[k].logged_n = 0;
    }
}

/* transfer id begins segment x->seg[id]: its latency first */
static void mm_begin_segment(dp_xfer *x, int id, double now)
{
    const dp_topo_segment *s = &x->t->seg[x->seg[id]];
    const int p = x->src[id] * x->D + x->dst[id];
    double lat = s->latency_s * x->pair_lat_scale[p];
    if (x->seg[id] == dp_topology_route(x->t, x->src[id], x->dst[id])->seg_begin) lat += x->pair_lat_add[p];
    dp_evheap_push(&x->ev, now + lat, (uint32_t)XE_LATENCY << XE_SHIFT | (uint32_t)id);
}

/* transfer id starts flowing on its segment's class (the caller recomputes rates) */
static void mm_join(dp_xfer *x, int id)
{
    int k = x->t->seg[x->seg[id]].klass;
    klass *q = &x->cls[k];
    if (x->flow_t0[id] < 0) x->flow_t0[id] = x->now;
    double work = x->c->edge_data[id] * x->pair_work[x->src[id] * x->D + x->dst[id]];
    if (kheap_push(q, q->served + work, id) != DP_OK) { x->failed = 1; return; }
    mm_activate(x, k);
}

/* ---------------- the interface ---------------- */

int dp_xfer_start(dp_xfer *x, int id, int a, int b, double now, double *delay)
{
    assert(a != b && id >= 0 && id < x->m);
    if (x->kind == DP_XFER_FIXED) {
        x->flow_t0[id] = now;
        *delay = dp_costs_comm(x->c, id, a, b);
        return 1;
    }
    x->src[id] = a;
    x->dst[id] = b;
    const dp_topo_route *r = dp_topology_route(x->t, a, b);
    if (x->kind == DP_XFER_FIFO) {
        x->flow_t0[id] = now;
        x->left[id] = x->K;
        for (int c = 0; c < x->K; c++) {
            int q = id * x->K + c;
            x->chunk_hop[q] = route_hop_begin(x->t, r);
            fifo_enqueue(x, q, now);
        }
        return 0;
    }
    mm_sync(x, now);
    x->seg[id] = r->seg_begin;
    x->flow_t0[id] = -1;
    mm_begin_segment(x, id, now);
    return 0;
}

double dp_xfer_next_time(const dp_xfer *x)
{
    double t = x->ev.n > 0 ? x->ev.a[0].t : INFINITY;
    if (x->kind == DP_XFER_MAXMIN && x->next_done < t) t = x->next_done;
    return t;
}

int dp_xfer_advance(dp_xfer *x, double t, const int **done)
{
    x->n_done = 0;
    if (x->kind == DP_XFER_FIFO) {
        while (x->ev.n > 0 && x->ev.a[0].t <= t) {
            dp_ev e = dp_evheap_pop(&x->ev);
            x->n_events++;
            x->now = e.t;
            int q = (int)(e.ev & XE_MASK);
            if ((e.ev >> XE_SHIFT) == XE_CHAN_DONE) fifo_chan_done(x, q, e.t);
            else fifo_arrive(x, q, e.t);
        }
    } else if (x->kind == DP_XFER_MAXMIN) {
        for (;;) {
            double tl = x->ev.n > 0 ? x->ev.a[0].t : INFINITY;
            double te = x->next_done < tl ? x->next_done : tl;
            if (!(te <= t)) break;
            mm_sync(x, te);
            x->n_events++;
            if (x->next_done <= tl) {
                /* segment ends in the class that finishes first (all its flows due now) */
                int k = x->next_cls;
                klass *q = &x->cls[k];
                if (q->served < q->h[0].key) q->served = q->h[0].key;
                double tol = 1e-12 * (q->served > 1 ? q->served : 1);
                while (q->n > 0 && q->h[0].key <= q->served + tol) {
                    int id = kheap_pop(q).id;
                    if (++x->seg[id] < dp_topology_route(x->t, x->src[id], x->dst[id])->seg_end)
                        mm_begin_segment(x, id, te);
                    else
                        x->done[x->n_done++] = id;
                }
                if (q->n == 0) mm_deactivate(x, k);
            } else {
                while (x->ev.n > 0 && x->ev.a[0].t == te) mm_join(x, (int)(dp_evheap_pop(&x->ev).ev & XE_MASK));
            }
            mm_rates(x);
        }
    }
    *done = x->done;
    return x->n_done;
}

double dp_xfer_flow_start(const dp_xfer *x, int id)
{
    return x->flow_t0[id];
}

int dp_xfer_failed(const dp_xfer *x)
{
    return x->failed;
}

long dp_xfer_events(const dp_xfer *x)
{
    return x->n_events;
}

const dp_xfer_busy *dp_xfer_busy_log(const dp_xfer *x, int *n)
{
    *n = x->n_busy;
    return x->busy_log;
}

const dp_xfer_rate *dp_xfer_rate_log(const dp_xfer *x, int *n)
{
    *n = x->n_rate;
    return x->rate_log;
}

size_t dp_xfer_workspace_bytes(const dp_xfer *x)
{
    size_t b = x->bytes_held;
    if (x->cls)
        for (int k = 0; k < x->t->n_classes; k++) b += (size_t)x->cls[k].cap * sizeof(flow_key);
    return b;
}
