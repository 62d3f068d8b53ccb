/* dp_transfer_fifo.c: the per-link FIFO transfer model (dp_transfer.h, DP_TRANSFER_FIFO), store and
 * forward: a transfer is cut into K equal chunks; a chunk crosses the hops (directed channels)
 * of its route in turn; a channel carries one chunk at a time, first come first served, for
 * chunk_bytes / bandwidth seconds, and the chunk reaches the next hop the channel's latency
 * later. Chunk q = id * K + c is chunk c of transfer id. */
#include "dp_transfer_model.h"

#include <stdlib.h>

enum { EV_CHAN_DONE = 1, /* chunk q finished occupying its channel */
       EV_ARRIVE };      /* chunk q reached the next hop */

typedef struct fifo_state {
    int *left;                 /* (m) chunks of each transfer not yet arrived */
    int *chunk_hop;            /* (m K) the hop each chunk is at (index into t->hop_chan) */
    int *chunk_next;           /* (m K) the next chunk in its channel's queue */
    int *q_head, *q_tail;      /* (channels) each channel's queue of waiting chunks */
    unsigned char *chan_busy;  /* (channels) 1 while a chunk occupies it */
} fifo_state;

static inline int route_hop_begin(const dp_topology *t, const dp_topology_route_info *r)
{
    return t->seg[r->seg_begin].hop_begin;
}

static inline int route_hop_end(const dp_topology *t, const dp_topology_route_info *r)
{
    return t->seg[r->seg_end - 1].hop_end;
}

/* seconds per byte of a lone transfer: the sum over its hops of 1 / bandwidth */
static double fifo_nominal(const dp_topology *t, const dp_topology_route_info *r)
{
    double s = 0;
    for (int sg = r->seg_begin; sg < r->seg_end; sg++)
        for (int h = t->seg[sg].hop_begin; h < t->seg[sg].hop_end; h++) s += 1.0 / t->chan_bw[t->hop_chan[h]];
    return s;
}

static int fifo_alloc(dp_transfer *x)
{
    DP_TRANSFER_ALLOC_ZERO(x, x->state, 1, sizeof(fifo_state));
    fifo_state *f = x->state;
    if (!f) return DP_ENOMEM;
    const size_t m1 = (size_t)x->m + 1, NC = (size_t)x->t->n_channels + 1;
    size_t nch;
    if (dp_alloc_size_mul(m1, (size_t)x->K, &nch) != DP_OK) return DP_ENOMEM;
    /* pending: at most one occupancy end per channel and one arrival per chunk */
    if (nch + NC > (size_t)1 << 30) return DP_ENOMEM;
    DP_TRANSFER_ALLOC(x, f->left, m1, sizeof(int));
    DP_TRANSFER_ALLOC(x, f->chunk_hop, nch, sizeof(int));
    DP_TRANSFER_ALLOC(x, f->chunk_next, nch, sizeof(int));
    DP_TRANSFER_ALLOC(x, f->q_head, NC, sizeof(int));
    DP_TRANSFER_ALLOC(x, f->q_tail, NC, sizeof(int));
    DP_TRANSFER_ALLOC(x, f->chan_busy, NC, 1);
    x->ev.cap = (int)(nch + NC);
    DP_TRANSFER_ALLOC(x, x->ev.a, (size_t)x->ev.cap, sizeof(dp_heap_ev));
    return x->owned.failed ? DP_ENOMEM : DP_OK;
}

static void fifo_reset(dp_transfer *x)
{
    fifo_state *f = x->state;
    for (int ch = 0; ch < x->t->n_channels; ch++) { f->q_head[ch] = f->q_tail[ch] = -1; f->chan_busy[ch] = 0; }
}

/* channel ch starts carrying chunk q */
static void chan_occupy(dp_transfer *x, int ch, int q, double now)
{
    fifo_state *f = x->state;
    int id = q / x->K;
    double dt = x->c->edge_data[id] * x->pair_work[dp_transfer_pair(x, id)] / x->K / x->t->chan_bw[ch];
    f->chan_busy[ch] = 1;
    if (x->trace) dp_transfer_log_busy(x, ch, id, now, now + dt);
    dp_heap_evq_push(&x->ev, now + dt, (uint32_t)EV_CHAN_DONE << DP_TRANSFER_EV_SHIFT | (uint32_t)q);
}

/* chunk q asks for the channel of its hop: it takes it, or waits in its queue */
static void chunk_enqueue(dp_transfer *x, int q, double now)
{
    fifo_state *f = x->state;
    int ch = x->t->hop_chan[f->chunk_hop[q]];
    if (!f->chan_busy[ch]) { chan_occupy(x, ch, q, now); return; }
    f->chunk_next[q] = -1;
    if (f->q_tail[ch] < 0) f->q_head[ch] = q;
    else f->chunk_next[f->q_tail[ch]] = q;
    f->q_tail[ch] = q;
}

/* chunk q leaves its channel: the next waiting chunk takes it; q arrives a latency later */
static void chan_done(dp_transfer *x, int q, double now)
{
    fifo_state *f = x->state;
    int ch = x->t->hop_chan[f->chunk_hop[q]];
    f->chan_busy[ch] = 0;
    int nq = f->q_head[ch];
    if (nq >= 0) {
        f->q_head[ch] = f->chunk_next[nq];
        if (f->q_head[ch] < 0) f->q_tail[ch] = -1;
        chan_occupy(x, ch, nq, now);
    }
    int id = q / x->K, p = dp_transfer_pair(x, id);
    double lat = x->t->chan_latency[ch] * x->pair_lat_scale[p];
    if (x->pair_lat_add[p] > 0 && f->chunk_hop[q] == route_hop_begin(x->t, dp_topology_route(x->t, x->src[id], x->dst[id])))
        lat += x->pair_lat_add[p];
    dp_heap_evq_push(&x->ev, now + lat, (uint32_t)EV_ARRIVE << DP_TRANSFER_EV_SHIFT | (uint32_t)q);
}

/* chunk q reached the next hop: on to its channel, or its transfer is one chunk nearer done */
static void chunk_arrive(dp_transfer *x, int q, double now)
{
    fifo_state *f = x->state;
    int id = q / x->K;
    const dp_topology_route_info *r = dp_topology_route(x->t, x->src[id], x->dst[id]);
    if (++f->chunk_hop[q] < route_hop_end(x->t, r)) { chunk_enqueue(x, q, now); return; }
    if (--f->left[id] == 0) x->done[x->n_done++] = id;
}

static int fifo_start(dp_transfer *x, int id, int a, int b, const dp_topology_route_info *r, double now, double *delay)
{
    (void)a; (void)b; (void)delay;
    fifo_state *f = x->state;
    f->left[id] = x->K;
    for (int c = 0; c < x->K; c++) {
        int q = id * x->K + c;
        f->chunk_hop[q] = route_hop_begin(x->t, r);
        chunk_enqueue(x, q, now);
    }
    return 0;
}

static void fifo_advance(dp_transfer *x, double t)
{
    while (x->ev.n > 0 && x->ev.a[0].t <= t) {
        dp_heap_ev e = dp_heap_evq_pop(&x->ev);
        x->n_events++;
        x->now = e.t;
        int q = (int)(e.ev & DP_TRANSFER_EV_MASK);
        if ((e.ev >> DP_TRANSFER_EV_SHIFT) == EV_CHAN_DONE) chan_done(x, q, e.t);
        else chunk_arrive(x, q, e.t);
    }
}

/* every chunk's place and queue link, each transfer's chunks left, the channels' queues */
static void fifo_snapshot(dp_transfer *x, dp_snap *sn)
{
    fifo_state *f = x->state;
    const size_t m1 = (size_t)x->m + 1, nch = m1 * (size_t)x->K, NC = (size_t)x->t->n_channels + 1;
    dp_snap_io(sn, f->left, m1 * sizeof *f->left);
    dp_snap_io(sn, f->chunk_hop, nch * sizeof *f->chunk_hop);
    dp_snap_io(sn, f->chunk_next, nch * sizeof *f->chunk_next);
    dp_snap_io(sn, f->q_head, NC * sizeof *f->q_head);
    dp_snap_io(sn, f->q_tail, NC * sizeof *f->q_tail);
    dp_snap_io(sn, f->chan_busy, NC * sizeof *f->chan_busy);
}

const dp_transfer_model dp_transfer_model_fifo = {
    .name = "fifo",
    .needs_topology = 1,
    .nominal_s_per_byte = fifo_nominal,
    .alloc = fifo_alloc,
    .reset = fifo_reset,
    .start = fifo_start,
    .advance = fifo_advance,
    .snapshot = fifo_snapshot,
};
