/* dp_hisim.c: the general event engine (see dp_hisim.h). Its event kinds and their order are
 * dp_sim's; what it adds hangs off the handlers: streams, queue disciplines, copy engines, the
 * transfer model, memory, barriers. */
#include "dp_hisim.h"
#include "dp_alloc.h"
#include "dp_heap.h"
#include "dp_json.h"
#include "dp_sim_shared.h"
#include "dp_snap.h"
#include "dp_transfer_model.h"

#include <assert.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum ev_kind {
    EV_XFER_DONE,    /* id = edge: the data is on the consumer's device */
    EV_EDGE_ARRIVED, /* id = edge */
    EV_READY,        /* id = op: joins its device queue */
    EV_GRANTED,      /* id = op: got a stream */
    EV_COMPUTE_DONE, /* id = op */
    EV_RELEASE,      /* id = device: a stream is free */
    EV_FINISH        /* id = op: outputs leave */
};
#define EV_SHIFT 28
#define EV_ID_MASK ((1u << EV_SHIFT) - 1)

typedef struct pq_item {
    double pri;
    uint64_t seq;
    int op;
} pq_item;

/* The engine's state, one struct per feature; each has its alloc (in dp_hisim_alloc's order)
 * and its reset (at the start of every run). Every array is allocated through s->owned, which
 * frees them all. */

/* the events: the heap of future ones, the FIFO of the present instant's */
typedef struct events {
    dp_heap_evq heap;      /* kind << EV_SHIFT | id, by (time, scheduling order) */
    uint32_t *fifo;      /* this instant's, in the order they happened */
    int fifo_head, fifo_tail, fifo_cap;
} events;

/* device queues (FIFO lists, or per-device priority heaps in one array) and streams */
typedef struct queues {
    int *qhead, *qtail, *qnext;        /* FIFO: (D) ends of each device's list, (n) links */
    pq_item *pq;                       /* priority: device d's heap is pq + pq_off[d]; NULL: FIFO */
    int *pq_off, *pq_n;                /* (D + 1) offsets by the assignment, (D) sizes */
    uint64_t pq_seq;
    int *dirty, n_dirty;               /* priority: devices to grant at the end of the instant */
    unsigned char *is_dirty;
    int *streams, *free_streams;       /* (D) streams of each device, and how many are free */
    int *stream_stack, *stream_top;    /* free stream ids per device (stack in a D x max_streams array) */
    int max_streams;
    int *op_stream;                    /* (n) the stream each op ran on */
} queues;

/* copy engines: per device, transfers out and in at once */
typedef struct copy_engines {
    int limited;                       /* some device has a finite count (else nothing waits) */
    int *out_free, *in_free;           /* (D) free engines */
    int *pend_head, *pend_tail, *pend_next;  /* per (src, dst) pair FIFO of waiting edges */
    uint64_t *req_seq;                 /* (m) order of the waiting edges' requests */
    uint64_t req_counter;
    int *dirty, n_dirty;               /* devices whose engines came free (or got a request) this instant */
    unsigned char *is_dirty;
    double t_first;                    /* when the first of them was marked: the grant waits for the
                                        * events within DP_HISIM_COINCIDE_REL of it (dp_hisim.h) */
} copy_engines;

/* memory accounting: an op's output lives until its last consumer ran, a received copy until
 * its consumer ran */
typedef struct memory {
    int *holders;                      /* (n) consumers still to read each output; -1: a sink's */
    double *cur, *peak, *cap;          /* (D) bytes in use, the peak, the capacity (0: none) */
    double excess;                     /* largest (peak - cap) / cap over devices */
} memory;

/* barriers (bulk-synchronous mode): a level starts once the previous one and its transfers ended */
typedef struct barriers {
    int *level, n_levels;              /* (n) longest-path depth of each op */
    int *level_ptr, *level_ops;        /* CSR: the ops of each level */
    int cur_level;
    long *level_left;                  /* (levels) ops and cross-device transfers not yet done */
} barriers;

/* interference (calibrated slowdowns, dp_hisim.h): op progress rates per device */
typedef struct interference {
    int on;                            /* 1 when some device has copy_in or peer_busy > 0 */
    double *copy_in, *peer_busy, *rate;  /* (D) */
    int *k_in, *n_running;             /* (D) copies into the device in flight; ops running on it */
    int n_busy_dev;                    /* devices with an op running */
    int *run_ops;                      /* (D x max_streams) the ops running on each device */
    double *rem, *last, *due;          /* (n) work left (s at full rate), when it was counted, end due */
} interference;

struct dp_hisim {
    const dp_graph *g;
    const dp_cost *c;
    const dp_topology *t;
    dp_hisim_options o;
    int n, m, D;
    dp_alloc_table owned;      /* every array below */
    dp_transfer *x;
    int contention;            /* transfer model with internal events */
    unsigned char *first_copy; /* (m) 1 unless the edge repeats an earlier (src, dst) pair */
    int *n_in;                 /* (n) distinct producers each op waits for */
    events ev;
    queues q;
    copy_engines ce;
    memory mem;
    barriers bar;
    interference itf;
    /* the run: its inputs, clock and records */
    const int *dev;
    const double *prio;
    int *arrived;              /* (n) inputs arrived */
    double *busy, *start, *end, *ready;  /* (D) busy time; (n) op times */
    double *x_req, *x_start, *x_end;     /* (m) transfer times */
    double *chan_bytes;        /* (channels) with a topology */
    double now, makespan;
    long n_events, n_transfers;
    double volume;
    double bound, exceeded;    /* a bounded run (dp_hisim_run_bounded); INFINITY otherwise */
    /* early rejection (dp_hisim_set_early_reject, as dp_sim's): early_reject the option (1 by
     * default); early: this run applies it (a finite bound, one stream a device); dev_work (D):
     * each device's work (seconds at full rate) in the run's assignment, so that dev_work[d] -
     * busy[d] is what d has not started; lb_scale: 1 less the relative rounding of those sums */
    int early_reject, early;
    double *dev_work, lb_scale;
    int failed;
    dp_error *err;
    /* delta runs (dp_hisim_delta, below): the incumbent this run restores a snapshot of or takes
     * snapshots for (NULL: none); the runs so far (a commit takes a delta run's records from s
     * only while it was s's last) */
    dp_hisim_delta *rec;
    long run_id;
    /* the run's assignment has absent ops (a prefix): its memory is not the placement's, and
     * no capacity is an error (dp_hisim_run_prefix) */
    int partial;
};

void dp_hisim_options_init(dp_hisim_options *o)
{
    memset(o, 0, sizeof *o);
    o->transfer_model = DP_TRANSFER_FIXED;
    o->chunks = 1;
    o->mode = DP_HISIM_MODE_ASYNC;
    o->streams = 0;
    o->queue = DP_HISIM_QUEUE_FIFO;
    o->memory_limit = 0;
    o->memory_policy = DP_HISIM_MEMORY_ERROR;
    o->memory_penalty = 1.0;
    o->copy_engines = 1;
}

int dp_hisim_options_default(const dp_hisim_options *o)
{
    return o->transfer_model == DP_TRANSFER_FIXED && o->mode == DP_HISIM_MODE_ASYNC && o->streams <= 1 &&
           o->queue == DP_HISIM_QUEUE_FIFO && o->memory_limit == 0;
}

/* FNV-1a of a value's bytes, continuing h */
#define HASH(h, x) ((h) = dp_graph_hash_bytes((h), &(x), sizeof(x)))

uint64_t dp_hisim_fingerprint(const dp_hisim *s)
{
    uint64_t h = 14695981039346656037ULL;
    const dp_hisim_options *o = &s->o;
    const int opt[7] = {(int)o->transfer_model, o->chunks, (int)o->mode, (int)o->queue, (int)o->memory_policy,
                        o->copy_engines, s->D};
    HASH(h, opt);
    HASH(h, o->memory_limit);
    HASH(h, o->memory_penalty);
    for (int d = 0; d < s->D; d++) {
        const int k[2] = {s->q.streams[d], s->t && o->copy_engines ? s->t->dev[d].copy_engines : 0};
        HASH(h, k);
        HASH(h, s->mem.cap[d]);
        const double itf[2] = {s->itf.copy_in ? s->itf.copy_in[d] : 0, s->itf.peer_busy ? s->itf.peer_busy[d] : 0};
        HASH(h, itf);
    }
    if (s->t)
        for (int l = 0; l < s->t->n_links; l++) {
            const dp_topology_link *k = &s->t->link[l];
            const int ends[3] = {k->a, k->b, k->half_duplex};
            const double bw[2] = {k->bandwidth_Bps, k->latency_s};
            HASH(h, ends);
            HASH(h, bw);
        }
    const dp_calib *cal = o->calibration;
    for (int r = 0; cal && r < cal->n_routes; r++) {
        h = dp_graph_hash_bytes(h, cal->route[r].src, strlen(cal->route[r].src) + 1);
        h = dp_graph_hash_bytes(h, cal->route[r].dst, strlen(cal->route[r].dst) + 1);
        HASH(h, cal->route[r].latency_s);
        HASH(h, cal->route[r].bandwidth_Bps);
    }
    return h;
}
#undef HASH

#define ALLOC(s, field, n, sz) DP_ALLOC(&(s)->owned, field, (n), (sz))
#define CALLOC(s, field, n, sz) DP_ALLOC_ZERO(&(s)->owned, field, (n), (sz))

void dp_hisim_free(dp_hisim *s)
{
    if (!s) return;
    dp_transfer_free(s->x);
    dp_alloc_table_free(&s->owned);
    free(s);
}

/* (m + n + 1 slots hold every live event; interference may grow the heap: schedule_at) */
static void events_alloc(dp_hisim *s)
{
    s->ev.fifo_cap = 2 * s->m + 5 * s->n + 1;
    ALLOC(s, s->ev.fifo, (size_t)s->ev.fifo_cap, sizeof(uint32_t));
    s->ev.heap.cap = s->m + s->n + 1;
    ALLOC(s, s->ev.heap.a, (size_t)s->ev.heap.cap, sizeof(dp_heap_ev));
}

static void events_reset(dp_hisim *s)
{
    dp_heap_evq_clear(&s->ev.heap);
    s->ev.fifo_head = s->ev.fifo_tail = 0;
}

static void queues_alloc(dp_hisim *s)
{
    const size_t n = (size_t)s->n, D = (size_t)s->D;
    ALLOC(s, s->q.streams, D, sizeof(int));
    ALLOC(s, s->q.free_streams, D, sizeof(int));
    if (!s->q.streams) return;
    s->q.max_streams = 1;
    for (int d = 0; d < s->D; d++) {
        s->q.streams[d] = s->o.streams > 0 ? s->o.streams : (s->t ? s->t->dev[d].streams : 1);
        if (s->q.streams[d] > s->q.max_streams) s->q.max_streams = s->q.streams[d];
    }
    ALLOC(s, s->q.stream_stack, D * (size_t)s->q.max_streams, sizeof(int));
    ALLOC(s, s->q.stream_top, D, sizeof(int));
    ALLOC(s, s->q.qhead, D, sizeof(int));
    ALLOC(s, s->q.qtail, D, sizeof(int));
    ALLOC(s, s->q.qnext, n, sizeof(int));
    ALLOC(s, s->q.op_stream, n, sizeof(int));
    if (s->o.queue == DP_HISIM_QUEUE_PRIORITY) {
        ALLOC(s, s->q.pq, n, sizeof(pq_item));
        ALLOC(s, s->q.pq_off, D + 1, sizeof(int));
        ALLOC(s, s->q.pq_n, D, sizeof(int));
        ALLOC(s, s->q.dirty, D, sizeof(int));
        ALLOC(s, s->q.is_dirty, D, 1);
    }
}

/* every stream free (stream 0 first), every queue empty; priority heaps laid out by device */
static void queues_reset(dp_hisim *s)
{
    queues *q = &s->q;
    q->pq_seq = 0;
    for (int v = 0; v < s->n; v++) q->op_stream[v] = -1;
    for (int d = 0; d < s->D; d++) {
        q->qhead[d] = q->qtail[d] = -1;
        q->free_streams[d] = q->streams[d];
        q->stream_top[d] = q->streams[d];
        for (int k = 0; k < q->streams[d]; k++) q->stream_stack[(size_t)d * q->max_streams + k] = q->streams[d] - 1 - k;
    }
    if (!q->pq) return;
    for (int d = 0; d <= s->D; d++) q->pq_off[d] = 0;
    for (int v = 0; v < s->n; v++)
        if (s->dev[v] >= 0) q->pq_off[s->dev[v] + 1]++;
    for (int d = 0; d < s->D; d++) { q->pq_off[d + 1] += q->pq_off[d]; q->pq_n[d] = 0; q->is_dirty[d] = 0; }
    q->n_dirty = 0;
}

static void copy_engines_alloc(dp_hisim *s)
{
    const size_t m1 = (size_t)s->m + 1, D = (size_t)s->D;
    for (int d = 0; d < s->D; d++)
        if (s->t && s->o.copy_engines && s->t->dev[d].copy_engines > 0) s->ce.limited = 1;
    ALLOC(s, s->ce.out_free, D, sizeof(int));
    ALLOC(s, s->ce.in_free, D, sizeof(int));
    if (!s->ce.limited) return;
    ALLOC(s, s->ce.pend_head, D * D, sizeof(int));
    ALLOC(s, s->ce.pend_tail, D * D, sizeof(int));
    ALLOC(s, s->ce.pend_next, m1, sizeof(int));
    ALLOC(s, s->ce.req_seq, m1, sizeof(uint64_t));
    ALLOC(s, s->ce.dirty, D, sizeof(int));
    ALLOC(s, s->ce.is_dirty, D, 1);
}

static void copy_engines_reset(dp_hisim *s)
{
    copy_engines *ce = &s->ce;
    ce->req_counter = 0;
    for (int d = 0; d < s->D; d++) {
        int k = (s->t && s->o.copy_engines) ? s->t->dev[d].copy_engines : 0;
        ce->out_free[d] = ce->in_free[d] = k > 0 ? k : INT_MAX;
    }
    ce->n_dirty = 0;
    if (!ce->limited) return;
    for (int p = 0; p < s->D * s->D; p++) ce->pend_head[p] = ce->pend_tail[p] = -1;
    for (int d = 0; d < s->D; d++) ce->is_dirty[d] = 0;
}

static void memory_alloc(dp_hisim *s)
{
    const size_t D = (size_t)s->D;
    ALLOC(s, s->mem.holders, (size_t)s->n, sizeof(int));
    ALLOC(s, s->mem.cur, D, sizeof(double));
    ALLOC(s, s->mem.peak, D, sizeof(double));
    ALLOC(s, s->mem.cap, D, sizeof(double));
    if (!s->mem.cap) return;
    for (int d = 0; d < s->D; d++)
        s->mem.cap[d] = s->o.memory_limit == DP_HISIM_MEMORY_TOPOLOGY ? s->t->dev[d].memory_bytes : s->o.memory_limit;
}

/* nothing in use; each output is held by its distinct placed consumers */
static void memory_reset(dp_hisim *s)
{
    const dp_graph *g = s->g;
    for (int v = 0; v < s->n; v++) {
        int h = 0;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) h += s->first_copy[e] && s->dev[g->edge_dst[e]] >= 0;
        s->mem.holders[v] = h > 0 ? h : -1;  /* a sink's output stays */
    }
    for (int d = 0; d < s->D; d++) s->mem.cur[d] = s->mem.peak[d] = 0;
    s->mem.excess = 0;
}

/* levels: longest-path depth, over the topological order */
static void barriers_alloc(dp_hisim *s)
{
    const dp_graph *g = s->g;
    barriers *b = &s->bar;
    ALLOC(s, b->level, (size_t)s->n, sizeof(int));
    ALLOC(s, b->level_ops, (size_t)s->n, sizeof(int));
    if (!b->level || !b->level_ops) return;
    b->n_levels = 0;
    for (int k = 0; k < s->n; k++) {
        int v = g->topo[k], lv = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int u = g->edge_src[g->pred_edge[q]];
            if (b->level[u] + 1 > lv) lv = b->level[u] + 1;
        }
        b->level[v] = lv;
        if (lv + 1 > b->n_levels) b->n_levels = lv + 1;
    }
    CALLOC(s, b->level_ptr, (size_t)b->n_levels + 1, sizeof(int));
    ALLOC(s, b->level_left, (size_t)b->n_levels, sizeof(long));
    int *fill = dp_alloc_calloc((size_t)b->n_levels, sizeof(int));
    if (!b->level_ptr || !b->level_left || !fill) { free(fill); s->owned.failed = 1; return; }
    for (int v = 0; v < s->n; v++) b->level_ptr[b->level[v] + 1]++;
    for (int l = 0; l < b->n_levels; l++) b->level_ptr[l + 1] += b->level_ptr[l];
    for (int v = 0; v < s->n; v++) b->level_ops[b->level_ptr[b->level[v]] + fill[b->level[v]]++] = v;
    free(fill);
}

/* level 0 first; a level waits for its placed ops and for the cross-device transfers they send */
static void barriers_reset(dp_hisim *s)
{
    const dp_graph *g = s->g;
    barriers *b = &s->bar;
    b->cur_level = 0;
    if (s->o.mode != DP_HISIM_MODE_BSP) return;
    for (int l = 0; l < b->n_levels; l++) b->level_left[l] = 0;
    for (int v = 0; v < s->n; v++)
        if (s->dev[v] >= 0) b->level_left[b->level[v]]++;
    for (int e = 0; e < s->m; e++)
        if (s->first_copy[e] && s->dev[g->edge_dst[e]] >= 0 && s->dev[g->edge_src[e]] != s->dev[g->edge_dst[e]])
            b->level_left[b->level[g->edge_src[e]]]++;
}

/* the calibration's slowdowns of the topology's devices; off when none slows anything */
static void interference_alloc(dp_hisim *s)
{
    interference *f = &s->itf;
    const size_t n = (size_t)s->n, D = (size_t)s->D;
    for (int d = 0; s->t && d < s->D; d++) {
        const dp_calib_device *cd = dp_calib_find_device(s->o.calibration, s->t->dev[d].name);
        if (cd && (cd->copy_in > 0 || cd->peer_busy > 0)) f->on = 1;
    }
    if (!f->on) return;
    ALLOC(s, f->copy_in, D, sizeof(double));
    ALLOC(s, f->peer_busy, D, sizeof(double));
    ALLOC(s, f->rate, D, sizeof(double));
    ALLOC(s, f->k_in, D, sizeof(int));
    ALLOC(s, f->n_running, D, sizeof(int));
    ALLOC(s, f->run_ops, D * (size_t)s->q.max_streams, sizeof(int));
    ALLOC(s, f->rem, n, sizeof(double));
    ALLOC(s, f->last, n, sizeof(double));
    ALLOC(s, f->due, n, sizeof(double));
    if (!f->copy_in || !f->peer_busy) return;
    for (int d = 0; d < s->D; d++) {
        const dp_calib_device *cd = dp_calib_find_device(s->o.calibration, s->t->dev[d].name);
        f->copy_in[d] = cd ? cd->copy_in : 0;
        f->peer_busy[d] = cd ? cd->peer_busy : 0;
    }
}

static void interference_reset(dp_hisim *s)
{
    interference *f = &s->itf;
    f->n_busy_dev = 0;
    if (!f->on) return;
    for (int d = 0; d < s->D; d++) { f->k_in[d] = f->n_running[d] = 0; f->rate[d] = 1.0; }
}

/* the run's records: nothing happened yet (-1) */
static void records_reset(dp_hisim *s)
{
    s->now = s->makespan = 0;
    s->n_events = s->n_transfers = 0;
    s->volume = 0;
    memset(s->arrived, 0, (size_t)s->n * sizeof(int));
    for (int v = 0; v < s->n; v++) s->start[v] = s->end[v] = s->ready[v] = -1;
    for (int e = 0; e < s->m; e++) s->x_req[e] = s->x_start[e] = s->x_end[e] = -1;
    for (int d = 0; d < s->D; d++) s->busy[d] = 0;
    if (s->chan_bytes) memset(s->chan_bytes, 0, (size_t)s->t->n_channels * sizeof(double));
}

static void records_alloc(dp_hisim *s)
{
    const size_t n = (size_t)s->n, m1 = (size_t)s->m + 1;
    ALLOC(s, s->arrived, n, sizeof(int));
    ALLOC(s, s->busy, (size_t)s->D, sizeof(double));
    ALLOC(s, s->start, n, sizeof(double));
    ALLOC(s, s->end, n, sizeof(double));
    ALLOC(s, s->ready, n, sizeof(double));
    ALLOC(s, s->x_req, m1, sizeof(double));
    ALLOC(s, s->x_start, m1, sizeof(double));
    ALLOC(s, s->x_end, m1, sizeof(double));
    if (s->t) ALLOC(s, s->chan_bytes, (size_t)s->t->n_channels + 1, sizeof(double));
}

/* a repeated edge is one input (the reference's semantics, see dp_sim.h): only the first copy
 * of each (src, dst) pair moves data and is waited for; the graph lists a repeat right after
 * its first copy among the source's out-edges */
static void inputs_alloc(dp_hisim *s)
{
    const dp_graph *g = s->g;
    ALLOC(s, s->first_copy, (size_t)s->m + 1, 1);
    ALLOC(s, s->n_in, (size_t)s->n, sizeof(int));
    if (!s->first_copy || !s->n_in) return;
    for (int u = 0; u < s->n; u++)
        for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++)
            s->first_copy[e] = (e == g->succ_ptr[u] || g->edge_dst[e - 1] != g->edge_dst[e]);
    for (int v = 0; v < s->n; v++) s->n_in[v] = g->n_unique_pred[v];
}

static int check_options(const dp_graph *g, const dp_cost *c, const dp_topology *t, const dp_hisim_options *o,
                         dp_error *err)
{
    if (c->n_ops != g->n_ops || c->n_edges != g->n_edges)
        return dp_error_set(err, DP_EINVAL, "%s: cost tables do not match the graph", g->source);
    if (t && t->n_devices != c->n_devices)
        return dp_error_set(err, DP_EINVAL, "topology %s has %d devices, the cost tables %d", t->name, t->n_devices,
                            c->n_devices);
    if (o->streams < 0 || o->streams > 1024)
        return dp_error_set(err, DP_EINVAL, "streams must be 1..1024, got %d", o->streams);
    if (o->memory_limit == DP_HISIM_MEMORY_TOPOLOGY && !t)
        return dp_error_set(err, DP_EINVAL, "memory limit \"topology\" needs a topology");
    if (!(o->memory_limit >= 0 || o->memory_limit == DP_HISIM_MEMORY_TOPOLOGY) || !isfinite(o->memory_limit) ||
        !(o->memory_penalty >= 0))
        return dp_error_set(err, DP_EINVAL, "memory limit must be a non-negative number of bytes and the penalty >= 0");
    if (g->n_ops >= (int)EV_ID_MASK || g->n_edges >= (int)EV_ID_MASK)
        return dp_error_set(err, DP_ENOMEM, "%s: graph too large for the simulator", g->source);
    return DP_OK;
}

dp_hisim *dp_hisim_alloc(const dp_graph *g, const dp_cost *c, const dp_topology *t,
                         const dp_hisim_options *o, dp_error *err)
{
    if (check_options(g, c, t, o, err) != DP_OK) return NULL;
    dp_hisim *s = dp_alloc_calloc(1, sizeof *s);
    if (s) {
        s->bound = s->exceeded = INFINITY;
        s->early_reject = 1;
    }
    if (!s) goto nomem;
    s->g = g;
    s->c = c;
    s->t = t;
    s->o = *o;
    s->n = g->n_ops;
    s->m = g->n_edges;
    s->D = c->n_devices;
    s->x = dp_transfer_alloc(o->transfer_model, c, t, o->calibration, o->chunks, err);
    if (!s->x) { dp_hisim_free(s); return NULL; }
    s->contention = o->transfer_model != DP_TRANSFER_FIXED;
    inputs_alloc(s);
    events_alloc(s);
    queues_alloc(s);
    if (s->owned.failed) goto nomem;   /* interference needs max_streams */
    copy_engines_alloc(s);
    memory_alloc(s);
    barriers_alloc(s);
    interference_alloc(s);
    records_alloc(s);
    ALLOC(s, s->dev_work, (size_t)s->D, sizeof(double));
    if (s->owned.failed) goto nomem;
    /* dev_work - busy: two sums of at most n op times; a device's last end a sum of as many
     * (dp_sim_shared.h) */
    s->lb_scale = dp_sim_lb_scale((double)s->n + 1);
    return s;
nomem:
    dp_hisim_free(s);
    dp_error_set(err, DP_ENOMEM, "%s: out of memory for the simulator", g->source);
    return NULL;
}

const int *dp_hisim_levels(const dp_hisim *s, int *n_levels)
{
    *n_levels = s->bar.n_levels;
    return s->bar.level;
}

size_t dp_hisim_workspace_bytes(const dp_hisim *s)
{
    return sizeof *s + s->owned.bytes + dp_transfer_workspace_bytes(s->x);
}

/* ---------------- queues ---------------- */

static inline void fifo_push(dp_hisim *s, uint32_t kind, uint32_t id)
{
    assert(s->ev.fifo_tail < s->ev.fifo_cap);
    s->ev.fifo[s->ev.fifo_tail++] = kind << EV_SHIFT | id;
}

static void schedule_at(dp_hisim *s, double t, uint32_t kind, uint32_t id);

static inline void schedule(dp_hisim *s, double delay, uint32_t kind, uint32_t id)
{
    /* with interference the heap also holds the stale events of moved ends: it may have to grow
     * (m + n + 1 slots hold every live event, not those) */
    if (delay > 0 && s->itf.on) schedule_at(s, s->now + delay, kind, id);
    else if (delay > 0) dp_heap_evq_push(&s->ev.heap, s->now + delay, kind << EV_SHIFT | id);
    else fifo_push(s, kind, id);
}

/* a device's priority queue: highest priority first, then arrival order */
#define PQ_BEFORE(ctx, x, y) ((x).pri > (y).pri || ((x).pri == (y).pri && (x).seq < (y).seq))
DP_HEAP_DEFINE(pq_heap, pq_item, const void *, PQ_BEFORE, DP_HEAP_NO_INDEX)

static void pq_push(dp_hisim *s, int d, int v)
{
    pq_item x = {.pri = s->prio[v], .seq = s->q.pq_seq++, .op = v};
    pq_heap_push(NULL, s->q.pq + s->q.pq_off[d], &s->q.pq_n[d], x);
}

static int pq_pop(dp_hisim *s, int d)
{
    return pq_heap_pop(NULL, s->q.pq + s->q.pq_off[d], &s->q.pq_n[d]).op;
}

static inline int queue_empty(const dp_hisim *s, int d)
{
    return s->q.pq ? s->q.pq_n[d] == 0 : s->q.qhead[d] < 0;
}

static inline void grant_head(dp_hisim *s, int d)
{
    int v;
    if (s->q.pq) {
        v = pq_pop(s, d);
    } else {
        v = s->q.qhead[d];
        s->q.qhead[d] = s->q.qnext[v];
        if (s->q.qhead[d] < 0) s->q.qtail[d] = -1;
    }
    s->q.free_streams[d]--;
    s->q.op_stream[v] = s->q.stream_stack[(size_t)d * s->q.max_streams + --s->q.stream_top[d]];
    fifo_push(s, EV_GRANTED, (uint32_t)v);
}

/* Priority queues choose among every op that is ready at an instant: an op's ready event and a
 * stream's release only mark the device, and the grants are made once the instant's other events
 * have run (dispatch_dirty), so that of b and c made ready by one finish the higher priority
 * runs first whichever event came first. (FIFO grants at once: its order is the arrival order,
 * which is dp_sim's and the reference's.) */
static inline void mark_dirty(dp_hisim *s, int d)
{
    if (s->q.is_dirty[d]) return;
    s->q.is_dirty[d] = 1;
    s->q.dirty[s->q.n_dirty++] = d;
}

/* grant free streams to the best ready ops, devices in the order they were marked */
static void dispatch_dirty(dp_hisim *s)
{
    for (int i = 0; i < s->q.n_dirty; i++) {
        int d = s->q.dirty[i];
        s->q.is_dirty[d] = 0;
        while (s->q.free_streams[d] > 0 && !queue_empty(s, d)) grant_head(s, d);
    }
    s->q.n_dirty = 0;
}

/* ---------------- memory ---------------- */

static void fail(dp_hisim *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(dp_hisim *s, int code, const char *fmt, ...)
{
    if (s->failed) return;
    s->failed = code;
    if (s->err) {
        char buf[DP_ERROR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        dp_error_set(s->err, code, "%s", buf);
    }
}

static inline const char *dev_name(const dp_hisim *s, int d, char *buf, size_t cap)
{
    if (s->t) snprintf(buf, cap, "%d (%s)", d, s->t->dev[d].name);
    else snprintf(buf, cap, "%d", d);
    return buf;
}

static inline void mem_alloc(dp_hisim *s, int d, double bytes, const char *what, int id)
{
    s->mem.cur[d] += bytes;
    if (s->mem.cur[d] > s->mem.peak[d]) {
        s->mem.peak[d] = s->mem.cur[d];
        if (s->mem.cap[d] > 0 && s->mem.peak[d] > s->mem.cap[d] && s->o.memory_policy == DP_HISIM_MEMORY_ERROR &&
            !s->partial) {
            char b[300];
            /* a time graph's memory is in its file's comm units (dp_hisim.h), not bytes (a review) */
            const char *u = s->g->cost_kind == DP_GRAPH_COST_PHYSICAL ? "bytes" : "file units";
            /* the time in the graph's printed unit, as makespans are (it had none: a review) */
            fail(s, DP_ERANGE, "memory capacity exceeded on device %s: %.6g %s in use at t=%.6g %s when %s \"%s\" "
                 "needed %.6g %s; capacity %.6g %s (--memory-limit)", dev_name(s, d, b, sizeof b),
                 s->mem.cur[d], u, s->now / s->g->time_scale, s->g->time_unit, what,
                 what[0] == 'o' ? s->g->op_name[id] : s->g->op_name[s->g->edge_dst[id]], bytes, u, s->mem.cap[d], u);
        }
    }
}

static inline void producer_release(dp_hisim *s, int u)
{
    if (--s->mem.holders[u] == 0) s->mem.cur[s->dev[u]] -= s->g->out_size[u];
}

/* ---------------- barriers ---------------- */

static void level_done(dp_hisim *s, int l)
{
    /* a level's count reaches 0 only once it has been released (its ops cannot start before),
     * so l is the current level here */
    if (--s->bar.level_left[l] != 0) return;
    assert(l == s->bar.cur_level);
    if (++s->bar.cur_level >= s->bar.n_levels) return;
    for (int i = s->bar.level_ptr[s->bar.cur_level]; i < s->bar.level_ptr[s->bar.cur_level + 1]; i++)
        if (s->dev[s->bar.level_ops[i]] >= 0) fifo_push(s, EV_READY, (uint32_t)s->bar.level_ops[i]);
}

/* ---------------- interference ---------------- */

/* an event at absolute time t, growing the heap when rescheduled ends have filled it */
static void schedule_at(dp_hisim *s, double t, uint32_t kind, uint32_t id)
{
    if (s->ev.heap.n == s->ev.heap.cap) {
        const int cap = s->ev.heap.cap;
        dp_heap_ev *a = dp_heap_grow(s->ev.heap.a, &s->ev.heap.cap, cap + 1, sizeof *a);
        if (!a) { fail(s, DP_ENOMEM, "out of memory in the simulator's event heap"); return; }
        dp_alloc_table_grew(&s->owned, (size_t)(s->ev.heap.cap - cap) * sizeof *a);
        s->ev.heap.a = a;
    }
    dp_heap_evq_push(&s->ev.heap, t, kind << EV_SHIFT | id);
}

/* d's rate (dp_hisim.h): the peers slow its ops to 1 / (1 + peer_busy x j), and each second of
 * k copies into d costs them copy_in x k seconds, the quantity doppler calibrate measures (extra
 * seconds of the overlapped kernels over the seconds a copy overlapped them), so the copies take
 * copy_in x k off the rate; at or below 0 an op falls back while they last (copy_in above 1: the
 * CPU copy worker stalls the core and its caches refill). Until 2026-12-07 the rate was
 * 1 / (1 + copy_in x k + peer_busy x j), which charged copy_in / (1 + copy_in) seconds a second
 * of a copy: 0.52 instead of the measured 1.07 for data/calibrations/cpu-2core.json (a review);
 * the copies' term is taken off the peers' rate rather than divided by it, so that a busy peer
 * never makes an op that loses work to a copy lose less (a review of that change) */
static inline double itf_rate(const dp_hisim *s, int d)
{
    int others = s->itf.n_busy_dev - (s->itf.n_running[d] > 0);
    return 1.0 / (1.0 + s->itf.peer_busy[d] * others) - s->itf.copy_in[d] * s->itf.k_in[d];
}

/* the end of rem seconds of work at rate r from now: now when none is left, never while r <= 0
 * (the op waits for the copies in flight to end: they always do, transfers are not slowed). An op
 * whose work left is within rounding of none (a few ulps of the clock: its end computed a few
 * ulps after the instant a copy starts) ends now at a rate at or below 0, rather than wait for
 * the whole copy and lose copy_in - 1 of it (0.1 + 0.2 is 0.30000000000000004: an op due then was
 * charged a 1 s copy starting at 0.3; a review) */
static inline double itf_due(double now, double rem, double r)
{
    if (rem <= 0) return now;
    if (r > 0) return now + rem / r;
    return rem <= 8 * DBL_EPSILON * fabs(now) ? now : INFINITY;
}

/* device d's rate may have changed: count the work its running ops did at the old rate, then
 * move their ends (the old end events become stale: due[v] no longer matches them) */
static void itf_rerate(dp_hisim *s, int d)
{
    double r = itf_rate(s, d);
    if (r == s->itf.rate[d]) return;
    for (int i = 0; i < s->itf.n_running[d]; i++) {
        int v = s->itf.run_ops[(size_t)d * s->q.max_streams + i];
        s->itf.rem[v] -= (s->now - s->itf.last[v]) * s->itf.rate[d];
        if (s->itf.rem[v] < 0) s->itf.rem[v] = 0;
        s->itf.last[v] = s->now;
        double due = itf_due(s->now, s->itf.rem[v], r);
        if (due == s->itf.due[v]) continue;   /* its event stands (a rate change at its very end) */
        s->itf.due[v] = due;
        if (due < INFINITY) schedule_at(s, due, EV_COMPUTE_DONE, (uint32_t)v);
    }
    s->itf.rate[d] = r;
}

/* device d went busy or idle: every other device with a peer slowdown changes rate */
static void itf_peers(dp_hisim *s, int d)
{
    for (int e = 0; e < s->D; e++)
        if (e != d && s->itf.peer_busy[e] > 0) itf_rerate(s, e);
}

/* op v starts on device d with t seconds of work at full rate: its end follows d's rate */
static void itf_op_start(dp_hisim *s, int v, int d, double t)
{
    interference *f = &s->itf;
    f->run_ops[(size_t)d * s->q.max_streams + f->n_running[d]++] = v;
    if (f->n_running[d] == 1) { f->n_busy_dev++; itf_peers(s, d); }
    f->rem[v] = t;
    f->last[v] = s->now;
    f->due[v] = itf_due(s->now, t, f->rate[d]);
    if (f->due[v] < INFINITY) schedule_at(s, f->due[v], EV_COMPUTE_DONE, (uint32_t)v);
}

/* op v's compute ended on device d */
static void itf_op_end(dp_hisim *s, int v, int d)
{
    interference *f = &s->itf;
    int *ro = &f->run_ops[(size_t)d * s->q.max_streams];
    for (int i = 0; i < f->n_running[d]; i++)
        if (ro[i] == v) { ro[i] = ro[--f->n_running[d]]; break; }
    if (f->n_running[d] == 0) { f->n_busy_dev--; itf_peers(s, d); }
}

/* an end moved by a rate change leaves its old event behind: only the due one counts, once
 * (due = -inf after it); 1 when this end event of op v is the due one */
static inline int itf_end_due(dp_hisim *s, int v)
{
    if (s->itf.due[v] != s->now) return 0;
    s->itf.due[v] = -INFINITY;
    return 1;
}

/* ---------------- transfers ---------------- */

static void transfer_start(dp_hisim *s, int e, int a, int b)
{
    s->x_start[e] = s->now;
    if (s->ce.limited) { s->ce.out_free[a]--; s->ce.in_free[b]--; }
    mem_alloc(s, b, s->c->edge_data[e], "transfer to", e);
    if (s->t) {
        const dp_topology_route_info *r = dp_topology_route(s->t, a, b);
        for (int sg = r->seg_begin; sg < r->seg_end; sg++)
            for (int h = s->t->seg[sg].hop_begin; h < s->t->seg[sg].hop_end; h++)
                s->chan_bytes[s->t->hop_chan[h]] += s->c->edge_data[e];
    }
    if (s->itf.on && s->itf.copy_in[b] > 0) {
        s->itf.k_in[b]++;
        itf_rerate(s, b);
    }
    double delay;
    if (dp_transfer_start(s->x, e, a, b, s->now, &delay)) schedule(s, delay, EV_XFER_DONE, (uint32_t)e);
}

static inline int ce_ok(const dp_hisim *s, int a, int b)
{
    return s->ce.out_free[a] > 0 && s->ce.in_free[b] > 0;
}

static inline void ce_mark(dp_hisim *s, int d)
{
    if (s->ce.is_dirty[d]) return;
    if (s->ce.n_dirty == 0) s->ce.t_first = s->now;
    s->ce.is_dirty[d] = 1;
    s->ce.dirty[s->ce.n_dirty++] = d;
}

/* Copy engines are granted at the end of an instant, in request order: when several transfers
 * end at one time (or at times that differ by rounding only: ce_instant_end), granting after
 * each end in turn would let a younger request take an engine
 * that an older one, still waiting for an engine the next end frees, should have had. So a
 * transfer's end only marks its devices; a request made while some are marked waits for the
 * grant too (it is the youngest), else it starts at once when both its engines are free. */
static void transfer_request(dp_hisim *s, int e, int a, int b)
{
    copy_engines *ce = &s->ce;
    s->x_req[e] = s->now;
    s->n_transfers++;
    s->volume += s->c->edge_data[e];
    if (!ce->limited || (ce->n_dirty == 0 && ce_ok(s, a, b))) { transfer_start(s, e, a, b); return; }
    int p = a * s->D + b;
    ce->req_seq[e] = ce->req_counter++;
    ce->pend_next[e] = -1;
    if (ce->pend_tail[p] < 0) ce->pend_head[p] = e;
    else ce->pend_next[ce->pend_tail[p]] = e;
    ce->pend_tail[p] = e;
    if (ce->n_dirty > 0) ce_mark(s, a);
}

/* the last time that is one instant with the first engine freed (or request queued) since the
 * last grant: ends that differ from it by rounding only (dp_hisim.h) */
static inline double ce_instant_end(const dp_hisim *s)
{
    return s->ce.t_first + DP_HISIM_COINCIDE_REL * s->ce.t_first;
}

/* the instant is over: start the waiting transfers that the marked devices' engines allow, oldest
 * request first. Outside the marked devices nothing changed, so no other waiting transfer can
 * start (each waits for an engine that is still held). */
static void transfer_grant(dp_hisim *s)
{
    copy_engines *ce = &s->ce;
    const int D = s->D;
    for (;;) {
        int best = -1, bp = -1;
        for (int i = 0; i < ce->n_dirty; i++) {
            int x = ce->dirty[i];
            for (int k = 0; k < 2 * D; k++) {
                int p = k < D ? x * D + k : (k - D) * D + x;
                int e = ce->pend_head[p];
                if (e < 0 || !ce_ok(s, p / D, p % D)) continue;
                if (best < 0 || ce->req_seq[e] < ce->req_seq[best]) { best = e; bp = p; }
            }
        }
        if (best < 0) break;
        ce->pend_head[bp] = ce->pend_next[best];
        if (ce->pend_head[bp] < 0) ce->pend_tail[bp] = -1;
        transfer_start(s, best, bp / D, bp % D);
    }
    for (int i = 0; i < ce->n_dirty; i++) ce->is_dirty[ce->dirty[i]] = 0;
    ce->n_dirty = 0;
}

static void transfer_finish(dp_hisim *s, int e)
{
    const dp_graph *g = s->g;
    int u = g->edge_src[e], a = s->dev[u], b = s->dev[g->edge_dst[e]];
    if (a != b) {
        s->x_end[e] = s->now;
        producer_release(s, u);
        if (s->itf.on && s->itf.copy_in[b] > 0) {
            s->itf.k_in[b]--;
            itf_rerate(s, b);
        }
        if (s->ce.limited) {
            s->ce.out_free[a]++;
            s->ce.in_free[b]++;
            ce_mark(s, a);
            ce_mark(s, b);
        }
        if (s->o.mode == DP_HISIM_MODE_BSP) level_done(s, s->bar.level[u]);
    }
    fifo_push(s, EV_EDGE_ARRIVED, (uint32_t)e);
}

/* ---------------- handlers, named after what happens ---------------- */

/* a first copy of an output: a transfer to another device, at once to the same device */
static inline void send_output(void *ctx, int e, int du, int dv)
{
    dp_hisim *s = ctx;
    if (dv != du) transfer_request(s, e, du, dv);
    else schedule(s, 0, EV_XFER_DONE, (uint32_t)e);
}

static inline void op_finish(dp_hisim *s, int u)
{
    const dp_graph *g = s->g;
    const int du = s->dev[u];
    s->makespan = s->now;
    /* inputs consumed: local producers' outputs and received copies can go */
    for (int q = g->pred_ptr[u]; q < g->pred_ptr[u + 1]; q++) {
        int e = g->pred_edge[q], p = g->edge_src[e];
        if (!s->first_copy[e]) continue;
        if (s->dev[p] == du) producer_release(s, p);
        else s->mem.cur[du] -= s->c->edge_data[e];
    }
    dp_sim_send_outputs(g, s->dev, u, s->first_copy, send_output, s);
    if (s->o.mode == DP_HISIM_MODE_BSP) level_done(s, s->bar.level[u]);
}

static inline void edge_arrived(dp_hisim *s, int e)
{
    int v = s->g->edge_dst[e];
    /* only first copies are sent (op_finish), one arrival per distinct producer */
    assert(s->arrived[v] < s->n_in[v]);
    if (++s->arrived[v] == s->n_in[v] && s->o.mode == DP_HISIM_MODE_ASYNC) fifo_push(s, EV_READY, (uint32_t)v);
}

static inline void op_ready(dp_hisim *s, int v)
{
    int d = s->dev[v];
    s->ready[v] = s->now;
    if (s->q.pq) {
        pq_push(s, d, v);
        mark_dirty(s, d);
        return;
    }
    s->q.qnext[v] = -1;
    if (s->q.qtail[d] < 0) s->q.qhead[d] = v;
    else s->q.qnext[s->q.qtail[d]] = v;
    s->q.qtail[d] = v;
    if (s->q.free_streams[d] > 0) grant_head(s, d);
}

static inline void op_start(dp_hisim *s, int v)
{
    int d = s->dev[v];
    double t = dp_cost_op(s->c, v, d);
    s->start[v] = s->now;
    s->busy[d] += t;
    if (s->early) {
        /* device d runs one op at a time, at its full rate or slower (interference): no
         * schedule ends before v's end at full rate plus d's work not started (dp_sim's early
         * rejection); the run stops at this event (run_events) */
        const double lb = dp_sim_work_lb(s->now + t, s->dev_work[d] - s->busy[d], s->lb_scale);
        if (lb > s->bound && lb < s->exceeded) s->exceeded = lb;
    }
    mem_alloc(s, d, s->g->out_size[v], "op", v);
    if (s->itf.on) itf_op_start(s, v, d, t);
    else schedule(s, t, EV_COMPUTE_DONE, (uint32_t)v);
}

static inline void compute_done(dp_hisim *s, int v)
{
    int d = s->dev[v];
    if (s->itf.on) itf_op_end(s, v, d);
    s->end[v] = s->now;
    s->q.free_streams[d]++;
    s->q.stream_stack[(size_t)d * s->q.max_streams + s->q.stream_top[d]++] = s->q.op_stream[v];
    fifo_push(s, EV_RELEASE, (uint32_t)d);
    fifo_push(s, EV_FINISH, (uint32_t)v);
}

static inline void device_release(dp_hisim *s, int d)
{
    if (s->q.pq) { mark_dirty(s, d); return; }
    while (s->q.free_streams[d] > 0 && !queue_empty(s, d)) grant_head(s, d);
}

/* inlined into the loop (as dp_sim's: a call per event was a sixth of its instructions) */
static inline __attribute__((always_inline)) void dispatch(dp_hisim *s, uint32_t ev)
{
    uint32_t id = ev & EV_ID_MASK;
    s->n_events++;
    switch (ev >> EV_SHIFT) {
    case EV_XFER_DONE: transfer_finish(s, (int)id); break;
    case EV_EDGE_ARRIVED: edge_arrived(s, (int)id); break;
    case EV_READY: op_ready(s, (int)id); break;
    case EV_GRANTED: op_start(s, (int)id); break;
    case EV_COMPUTE_DONE:
        if (s->itf.on && !itf_end_due(s, (int)id)) { s->n_events--; break; }   /* a stale end */
        compute_done(s, (int)id);
        break;
    case EV_RELEASE: device_release(s, (int)id); break;
    case EV_FINISH: op_finish(s, (int)id); break;
    }
}

/* one saved state: the engine's between two instants, before every event at t */
typedef struct snap_slot {
    unsigned char *buf;
    size_t cap;
    double t;
    long events;   /* the engine events run before it */
    long gen;      /* the incumbent generation whose run took it (holders_at) */
} snap_slot;

#define DELTA_SLOTS 16
#define DELTA_BYTES ((size_t)256 << 20)

struct dp_hisim_delta {
    dp_hisim *s;
    int K;                   /* slots of each set */
    double snapshot_bytes;   /* a snapshot's bytes at most (dp_hisim_delta_alloc's estimate) */
    long interval;           /* engine events between two snapshots */
    snap_slot *inc, *cand;   /* (K) the incumbent's snapshots, the last run's */
    int n_inc;               /* inc[0..n_inc) are the incumbent's, at increasing t */
    int set;                 /* an incumbent is set */
    int complete;            /* the last delta run was complete */
    long run_id;             /* its s->run_id */
    int recorded;            /* it recorded (snapshots to cand, records to s): a commit runs nothing */
    int from;                /* the snapshot it resumed from (-1: time 0) */
    double commit_rate;      /* delta runs committed, a moving average (DELTA_RECORD_RATE) */
    int *assign, *last;      /* (n) the incumbent's assignment, the last run's */
    int *moved, n_moved;     /* (n) the ops the last candidate moved, their count */
    int prefix_seen;         /* an assignment with absent ops (a prefix) was run: holders_at */
    long gen;                /* the incumbent's generation: one more at each set and commit */
    long *placed_gen;        /* (n) the generation that placed each op of the incumbent; -1: absent */
    int *placed_list, n_placed; /* (n) the incumbent's ops in the order they were placed (their
                              * generations never decrease along it) */
    unsigned *stamp;         /* (n) holders_at's marks, stamp_cur the current one */
    unsigned stamp_cur;
    /* the run that records: the set it writes, the next slot and when */
    snap_slot *writing;
    int next_j;
    long next_at;
    /* the incumbent's result (dp_hisim_delta_result): its records, copied from s */
    double *start, *end, *ready, *x_req, *x_start, *x_end, *busy, *mem_peak, *chan_bytes;
    int *op_stream;
    double makespan, volume, mem_excess, penalised;
    long n_transfers, n_events;
    long n_resumed, n_full, n_skipped;
};

static void snap_take(dp_hisim *s, double t);

/* the event loop: each instant's events in the order dp_sim.h gives, until none is left */
static void run_events(dp_hisim *s)
{
    for (;;) {
        while (s->ev.fifo_head < s->ev.fifo_tail && !s->failed && s->exceeded == INFINITY)
            dispatch(s, s->ev.fifo[s->ev.fifo_head++]);
        s->ev.fifo_head = s->ev.fifo_tail = 0;
        if (s->failed || s->exceeded < INFINITY) return; /* an error, or early rejection (op_start) */
        double tm = s->contention ? dp_transfer_next_time(s->x) : INFINITY;
        double th = s->ev.heap.n > 0 ? s->ev.heap.a[0].t : INFINITY;
        double next = th < tm ? th : tm;
        /* the instant is over (nothing else happens now): priority queues grant; the grants'
         * events (zero-time ops included) make a new round of this instant. For copy engines
         * the instant extends over the events that differ from its first end by rounding only
         * (next <= ce_instant_end: the grant is made at the latest of them) */
        if (s->ce.n_dirty > 0 && !(next <= ce_instant_end(s))) { transfer_grant(s); continue; }
        if (s->q.n_dirty > 0 && !(next <= s->now)) { dispatch_dirty(s); continue; }
        if (next == INFINITY) return;
        /* a bounded run ends before the clock passes its bound (every event happens before
         * some op's end, so the makespan is at least next) */
        if (next > s->bound) {
            s->exceeded = next;
            return;
        }
        /* between two instants (the copy engines' instant over too): a delta run's snapshot */
        /* (next > now: every event run so far is before next, every one pending at or after it) */
        if (s->rec && s->n_events >= s->rec->next_at && s->ce.n_dirty == 0 && next > s->now) snap_take(s, next);
        s->now = next;
        /* every heap event of this instant, then the transfers the model ends now, then the FIFO */
        while (s->ev.heap.n > 0 && s->ev.heap.a[0].t == s->now) dispatch(s, dp_heap_evq_pop(&s->ev.heap).ev);
        if (tm <= s->now) {
            const int *done;
            int k = dp_transfer_advance(s->x, s->now, &done);
            if (dp_transfer_failed(s->x)) fail(s, DP_ENOMEM, "out of memory in the transfer model");
            for (int i = 0; i < k; i++) transfer_finish(s, done[i]);
        }
    }
}

static void fill_result(dp_hisim *s, dp_hisim_result *res)
{
    for (int d = 0; d < s->D; d++)
        if (s->mem.cap[d] > 0 && s->mem.peak[d] > s->mem.cap[d]) {
            double x = (s->mem.peak[d] - s->mem.cap[d]) / s->mem.cap[d];
            if (x > s->mem.excess) s->mem.excess = x;
        }
    DP_SIM_RESULT_RECORDS(res, s);
    res->op_stream = s->q.op_stream;
    res->xfer_request = s->x_req;
    res->xfer_start = s->x_start;
    res->xfer_end = s->x_end;
    res->mem_peak = s->mem.peak;
    res->mem_capacity = s->mem.cap;
    res->mem_excess = s->mem.excess;
    res->penalised_makespan = s->makespan * (1 + s->o.memory_penalty * s->mem.excess);
    res->chan_bytes = s->chan_bytes;
    res->n_events = s->n_events + dp_transfer_events(s->x);
}

/* the assignment's devices are in range (prefix: or -1, an absent op, whose successors must be
 * absent too); of the ops ops[0..k) only when ops is not NULL (a delta run's moved ops: the others
 * are the incumbent's, checked by its run; one that removes an op runs in full) */
static int check_assignment(const dp_hisim *s, const int *assignment, int prefix, const int *ops, int k, dp_error *err)
{
    const dp_graph *g = s->g;
    const int count = ops ? k : s->n;
    for (int i = 0; i < count; i++) {
        const int v = ops ? ops[i] : i;
        if (prefix && assignment[v] == -1) continue;
        if (assignment[v] < 0 || assignment[v] >= s->D)
            return dp_error_set(err, DP_EINVAL, "assignment: op %d (\"%s\") has device %d, outside 0..%d",
                                v, g->op_name[v], assignment[v], s->D - 1);
        for (int q = g->pred_ptr[v]; prefix && q < g->pred_ptr[v + 1]; q++) {
            int u = g->edge_src[g->pred_edge[q]];
            if (assignment[u] < 0)
                return dp_error_set(err, DP_EINVAL, "prefix assignment: op %d (\"%s\") is placed but its predecessor "
                                    "%d (\"%s\") is not", v, g->op_name[v], u, g->op_name[u]);
        }
    }
    return DP_OK;
}

static int snap_restore(dp_hisim *s, int from);

/* A run; absent ops (device -1, prefix runs only) are never made ready. from >= 0: resumed
 * from the state of snapshot from of s->rec's incumbent (dp_hisim_run_delta, which restored the
 * incumbent's records first), else from time 0. */
static int run(dp_hisim *s, const int *assignment, const double *priority, int prefix, int from,
               dp_hisim_result *res, dp_error *err)
{
    const dp_graph *g = s->g;
    int rc = from >= 0 ? check_assignment(s, assignment, prefix, s->rec->moved, s->rec->n_moved, err)
                       : check_assignment(s, assignment, prefix, NULL, 0, err);
    if (rc != DP_OK) return rc;
    if (s->o.queue == DP_HISIM_QUEUE_PRIORITY && !priority)
        return dp_error_set(err, DP_EINVAL, "priority queues need a priority per op (the placement method gave none)");
    if (s->o.queue == DP_HISIM_QUEUE_PRIORITY)
        for (int v = 0; v < s->n; v++)
            if (!isfinite(priority[v]))
                return dp_error_set(err, DP_EINVAL, "%s: op %d (%s): priority %g is not a finite number", g->source, v,
                                    g->op_name[v], priority[v]);
    s->dev = assignment;
    s->prio = priority;
    s->err = err;
    s->failed = 0;
    s->exceeded = INFINITY;
    s->run_id++;
    /* (a delta run's prefix flag is its assignment's absent ops, delta_from) */
    s->partial = prefix && from >= 0;
    for (int v = 0; prefix && from < 0 && v < s->n && !s->partial; v++) s->partial = assignment[v] < 0;
    s->early = s->early_reject && s->bound < INFINITY && s->q.max_streams == 1;
    if (s->early) {
        for (int d = 0; d < s->D; d++) s->dev_work[d] = 0;
        for (int v = 0; v < s->n; v++)
            if (assignment[v] >= 0) s->dev_work[assignment[v]] += dp_cost_op(s->c, v, assignment[v]);
    }
    if (from >= 0) {
        if (!snap_restore(s, from)) {
            s->err = NULL;
            return dp_error_set(err, DP_ENOMEM, "%s: out of memory restoring the simulator's state", g->source);
        }
        /* a snapshot of a prefix (no capacity an error) over a capacity: a complete run under the
         * error policy fails before the snapshot's instant, so it runs from time 0, for its
         * message (the device, op and time it first passes it) */
        for (int d = 0; !s->partial && s->o.memory_policy == DP_HISIM_MEMORY_ERROR && d < s->D; d++)
            if (s->mem.cap[d] > 0 && s->mem.peak[d] > s->mem.cap[d]) from = -1;
    }
    if (from < 0) {
        records_reset(s);
        events_reset(s);
        queues_reset(s);
        copy_engines_reset(s);
        memory_reset(s);
        barriers_reset(s);
        interference_reset(s);
        dp_transfer_reset(s->x, s->o.trace);
        /* set-up at time 0: sources become ready in op order (level 0 in bulk-synchronous mode) */
        for (int i = 0; i < g->n_sources; i++)
            if (assignment[g->sources[i]] >= 0) fifo_push(s, EV_READY, (uint32_t)g->sources[i]);
    }
    run_events(s);
    s->err = NULL;
    if (s->failed) return s->failed;
    if (s->exceeded < INFINITY) return DP_OK; /* a bounded run stopped early: no records */
    /* (a delta run's records before its snapshot are not written: dp_hisim_run_delta) */
    for (int v = 0; (from < 0 || s->rec->writing) && v < s->n; v++)
        if (s->end[v] < 0 && assignment[v] >= 0)
            return dp_error_set(err, DP_EINVAL, "simulation ended with op %d (\"%s\") never run (internal error)", v, g->op_name[v]);
    fill_result(s, res);
    /* the penalised makespan overflows with a limit and a penalty at the ends of their ranges
     * (1e-300 bytes and 1e30: inf, printed "penalised makespan inf s", null in JSON, and
     * "every assignment exceeds a resource limit" from exact; a makespan of 0 gave NaN: a review) */
    if (!isfinite(res->penalised_makespan))
        return dp_error_set(err, DP_EINVAL, "memory penalty: the penalised makespan, makespan x (1 + penalty x excess) = "
                            "%g x (1 + %g x %g), is not a finite number: --memory-limit or --memory-penalty is extreme",
                            s->makespan, s->o.memory_penalty, s->mem.excess);
    return DP_OK;
}

int dp_hisim_run(dp_hisim *s, const int *assignment, const double *priority, dp_hisim_result *res, dp_error *err)
{
    return run(s, assignment, priority, 0, -1, res, err);
}

int dp_hisim_run_prefix(dp_hisim *s, const int *assignment, const double *priority, dp_hisim_result *res,
                        dp_error *err)
{
    return run(s, assignment, priority, 1, -1, res, err);
}

/* A bounded run from snapshot from (-1: time 0), its verdict and cost (dp_hisim_run_bounded);
 * *complete: 1 when the run reached its end (its records are the full run's) */
static int run_bounded_from(dp_hisim *s, const int *assignment, const double *priority, int prefix, double bound,
                            int from, double *cost, int *exceeded, int *complete, dp_error *err)
{
    dp_hisim_result r;
    /* under the error memory policy an over-capacity run is an error wherever it happens: a
     * bounded run could stop before it, so such a machine runs in full */
    const int mem_error = s->o.memory_policy == DP_HISIM_MEMORY_ERROR && s->o.memory_limit != 0;
    s->bound = mem_error ? INFINITY : bound;
    int rc = run(s, assignment, priority, prefix, from, &r, err);
    s->bound = INFINITY;
    *complete = 0;
    if (rc != DP_OK) {
        s->exceeded = INFINITY;
        return rc;
    }
    *complete = !(s->exceeded < INFINITY);
    *exceeded = s->exceeded < INFINITY;
    *cost = *exceeded ? s->exceeded : r.penalised_makespan;
    /* the clock stayed within the bound, the cost did not: a memory penalty on top of the
     * makespan, a run in full under the error policy, or a makespan of 0 above a negative bound
     * (tests/test_hifi.c bounded_verdict_is_cost_above_bound) */
    if (!*exceeded && *cost > bound) *exceeded = 1;
    s->exceeded = INFINITY;
    return DP_OK;
}

int dp_hisim_run_bounded(dp_hisim *s, const int *assignment, const double *priority, double bound, double *cost,
                         int *exceeded, dp_error *err)
{
    int complete;
    return run_bounded_from(s, assignment, priority, 0, bound, -1, cost, exceeded, &complete, err);
}

void dp_hisim_set_early_reject(dp_hisim *s, int on)
{
    s->early_reject = on != 0;
}

/* ---------------- delta runs: snapshots of the event state (dp_hisim.h) ---------------- */

/* Every field that events after the snapshot's instant read, in one list for both directions
 * (dp_snap.h). Not saved: the options and tables (the workspace's), the run's inputs (dev,
 * prio, bound, early and dev_work: run() sets them for each run), the FIFO of the instant (empty
 * between instants), the copy engines' and priority queues' dirty lists (empty: snap_take's
 * condition; priority queues have no delta runs), bulk-synchronous levels (no delta runs), and
 * the records start, end, ready and xfer_* (written, never read, by the events: a resumed run
 * starts from the incumbent's, dp_hisim_run_delta). */
static void state_io(dp_hisim *s, dp_snap *sn)
{
    const size_t n = (size_t)s->n, D = (size_t)s->D, m1 = (size_t)s->m + 1;
    DP_SNAP_VAR(sn, s->now);
    DP_SNAP_VAR(sn, s->makespan);
    DP_SNAP_VAR(sn, s->n_events);
    DP_SNAP_VAR(sn, s->n_transfers);
    DP_SNAP_VAR(sn, s->volume);
    dp_snap_io(sn, s->arrived, n * sizeof *s->arrived);
    dp_snap_io(sn, s->busy, D * sizeof *s->busy);
    if (s->chan_bytes) dp_snap_io(sn, s->chan_bytes, (size_t)s->t->n_channels * sizeof *s->chan_bytes);
    /* the pending events (interference may have grown the heap: schedule_at) */
    int hn = s->ev.heap.n;
    DP_SNAP_VAR(sn, hn);
    DP_SNAP_VAR(sn, s->ev.heap.seq);
    if (dp_snap_restoring(sn) && !sn->failed) {
        if (hn > s->ev.heap.cap) {
            const int cap = s->ev.heap.cap;
            dp_heap_ev *a = dp_heap_grow(s->ev.heap.a, &s->ev.heap.cap, hn, sizeof *a);
            if (!a) {
                sn->failed = 1;
                return;
            }
            dp_alloc_table_grew(&s->owned, (size_t)(s->ev.heap.cap - cap) * sizeof *a);
            s->ev.heap.a = a;
        }
        s->ev.heap.n = hn;
    }
    dp_snap_io(sn, s->ev.heap.a, (size_t)hn * sizeof *s->ev.heap.a);
    /* device queues and streams */
    queues *q = &s->q;
    dp_snap_io(sn, q->qhead, D * sizeof *q->qhead);
    dp_snap_io(sn, q->qtail, D * sizeof *q->qtail);
    dp_snap_io(sn, q->qnext, n * sizeof *q->qnext);
    dp_snap_io(sn, q->free_streams, D * sizeof *q->free_streams);
    dp_snap_io(sn, q->stream_stack, D * (size_t)q->max_streams * sizeof *q->stream_stack);
    dp_snap_io(sn, q->stream_top, D * sizeof *q->stream_top);
    dp_snap_io(sn, q->op_stream, n * sizeof *q->op_stream);
    /* copy engines: free counts, waiting requests (none marked: snap_take's condition; a run
     * stopped by its bound may have left marks) */
    copy_engines *ce = &s->ce;
    dp_snap_io(sn, ce->out_free, D * sizeof *ce->out_free);
    dp_snap_io(sn, ce->in_free, D * sizeof *ce->in_free);
    DP_SNAP_VAR(sn, ce->n_dirty);
    if (ce->limited) {
        dp_snap_io(sn, ce->is_dirty, D * sizeof *ce->is_dirty);
        dp_snap_io(sn, ce->pend_head, D * D * sizeof *ce->pend_head);
        dp_snap_io(sn, ce->pend_tail, D * D * sizeof *ce->pend_tail);
        dp_snap_io(sn, ce->pend_next, m1 * sizeof *ce->pend_next);
        dp_snap_io(sn, ce->req_seq, m1 * sizeof *ce->req_seq);
        DP_SNAP_VAR(sn, ce->req_counter);
    }
    /* memory */
    dp_snap_io(sn, s->mem.holders, n * sizeof *s->mem.holders);
    dp_snap_io(sn, s->mem.cur, D * sizeof *s->mem.cur);
    dp_snap_io(sn, s->mem.peak, D * sizeof *s->mem.peak);
    DP_SNAP_VAR(sn, s->mem.excess); /* 0 until the run's end (fill_result) */
    /* interference */
    interference *f = &s->itf;
    DP_SNAP_VAR(sn, f->n_busy_dev);
    if (f->on) {
        dp_snap_io(sn, f->rate, D * sizeof *f->rate);
        dp_snap_io(sn, f->k_in, D * sizeof *f->k_in);
        dp_snap_io(sn, f->n_running, D * sizeof *f->n_running);
        dp_snap_io(sn, f->run_ops, D * (size_t)q->max_streams * sizeof *f->run_ops);
        dp_snap_io(sn, f->rem, n * sizeof *f->rem);
        dp_snap_io(sn, f->last, n * sizeof *f->last);
        dp_snap_io(sn, f->due, n * sizeof *f->due);
    }
    dp_transfer_snapshot(s->x, sn);
}

/* the recording run's next snapshot, of the state before the events at t (run_events); a save
 * that runs out of memory ends this run's snapshots (the slots before stay valid) */
static void snap_take(dp_hisim *s, double t)
{
    dp_hisim_delta *d = s->rec;
    const int j = d->next_j;
    if (j >= d->K) {
        d->next_at = LONG_MAX;
        return;
    }
    snap_slot *sl = &d->writing[j];
    dp_snap sn = dp_snap_begin(sl->buf, sl->cap, 0);
    state_io(s, &sn);
    sl->buf = sn.buf;
    sl->cap = sn.cap;
    if (sn.failed) {
        d->next_at = LONG_MAX;
        return;
    }
    sl->t = t;
    sl->events = s->n_events;
    d->next_j = j + 1;
    d->next_at = (long)(j + 2) * d->interval;
}

/* Output u's holders (memory_reset's count of the placed consumers that have not released it yet)
 * at instant t, for the run's assignment (s->dev). A consumer w released it before t when it ran
 * on u's device and ended before t, or when the copy to its device ended before t: events before
 * t are the incumbent's (d's records; an op placed now and absent then, or moved, has neither:
 * its producers end at or after t*). */
static void holders_of(dp_hisim *s, const dp_hisim_delta *d, int u, double t)
{
    const dp_graph *g = s->g;
    int placed = 0, held = 0;
    for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
        const int w = g->edge_dst[e];
        if (!s->first_copy[e] || s->dev[w] < 0) continue;
        placed++;
        const double rel = s->dev[w] == s->dev[u] ? d->end[w] : d->x_end[e];
        held += !(rel >= 0 && rel < t);
    }
    s->mem.holders[u] = placed ? held : -1;
}

/* the holders of v's producers, each once (d->stamp) */
static void holders_of_producers(dp_hisim *s, dp_hisim_delta *d, int v, double t)
{
    const dp_graph *g = s->g;
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        const int e = g->pred_edge[q], u = g->edge_src[e];
        if (!s->first_copy[e] || d->stamp[u] == d->stamp_cur) continue;
        d->stamp[u] = d->stamp_cur;
        holders_of(s, d, u, t);
    }
}

/* With prefixes the count memory_reset makes at time 0 depends on which consumers are placed, so
 * a snapshot taken when the incumbent's prefix was smaller holds other counts for the producers
 * of the ops placed since (the incumbent's placed after the snapshot's generation, and the run's
 * own added ops): theirs are counted again at the snapshot's instant sl->t. */
static void holders_at(dp_hisim *s, dp_hisim_delta *d, const snap_slot *sl)
{
    if (++d->stamp_cur == 0) {
        memset(d->stamp, 0, (size_t)s->n * sizeof *d->stamp);
        d->stamp_cur = 1;
    }
    for (int i = d->n_placed - 1; i >= 0 && d->placed_gen[d->placed_list[i]] > sl->gen; i--)
        holders_of_producers(s, d, d->placed_list[i], sl->t);
    for (int i = 0; i < d->n_moved; i++) {
        const int v = d->moved[i];
        if (d->assign[v] < 0 && s->dev[v] >= 0) holders_of_producers(s, d, v, sl->t);
    }
}

/* s's state from the incumbent's snapshot from; 0 when out of memory */
static int snap_restore(dp_hisim *s, int from)
{
    dp_hisim_delta *d = s->rec;
    const snap_slot *sl = &d->inc[from];
    dp_snap sn = dp_snap_begin(sl->buf, sl->cap, 1);
    state_io(s, &sn);
    s->ev.fifo_head = s->ev.fifo_tail = 0;
    if (d->prefix_seen) holders_at(s, d, sl);
    return !sn.failed;
}

int dp_hisim_delta_supported(const dp_hisim *s)
{
    return s->o.queue == DP_HISIM_QUEUE_FIFO && s->o.mode == DP_HISIM_MODE_ASYNC && !s->o.trace;
}

void dp_hisim_delta_free(dp_hisim_delta *d)
{
    if (!d) return;
    for (int j = 0; j < d->K; j++) {
        if (d->inc) free(d->inc[j].buf);
        if (d->cand) free(d->cand[j].buf);
    }
    free(d->inc); free(d->cand);
    free(d->assign); free(d->last); free(d->moved); free(d->placed_gen); free(d->placed_list); free(d->stamp);
    free(d->start); free(d->end); free(d->ready); free(d->x_req); free(d->x_start); free(d->x_end);
    free(d->busy); free(d->mem_peak); free(d->chan_bytes); free(d->op_stream);
    free(d);
}

dp_hisim_delta *dp_hisim_delta_alloc(dp_hisim *s, dp_error *err)
{
    if (!dp_hisim_delta_supported(s)) {
        dp_error_set(err, DP_EINVAL, "%s: delta runs need FIFO queues, asynchronous mode and no trace", s->g->source);
        return NULL;
    }
    dp_hisim_delta *d = dp_alloc_calloc(1, sizeof *d);
    if (!d) goto nomem;
    d->s = s;
    const size_t n = (size_t)s->n, m1 = (size_t)s->m + 1, D = (size_t)s->D;
    /* a snapshot's bytes: what state_io saves of the workspace now (every array in full, the
     * transfer model's included: FIFO chunks were left out of an estimate by op and edge
     * counts, 32 snapshots of 1,024 chunks an edge took 748 MB where a run takes 39: a review),
     * with the event heap at its capacity instead of its events now */
    dp_snap probe = dp_snap_begin(NULL, 0, 0);
    state_io(s, &probe);
    free(probe.buf);
    if (probe.failed) goto nomem;
    const double est = (double)probe.pos + (double)s->ev.heap.cap * sizeof(dp_heap_ev) + 4096;
    d->snapshot_bytes = est;
    d->K = DELTA_SLOTS;
    while (d->K > 1 && 2.0 * d->K * est > (double)DELTA_BYTES) d->K--;
    /* a run's engine events: five an op (READY, GRANTED, COMPUTE_DONE, RELEASE, FINISH) and
     * two an edge (its copy's end, its arrival); the snapshots spread over them */
    d->interval = (long)((5.0 * (double)n + 2.0 * (double)s->m) / (d->K + 1)) + 1;
    d->inc = dp_alloc_calloc((size_t)d->K, sizeof *d->inc);
    d->cand = dp_alloc_calloc((size_t)d->K, sizeof *d->cand);
    d->assign = dp_alloc_malloc_n(n, sizeof *d->assign);
    d->last = dp_alloc_malloc_n(n, sizeof *d->last);
    d->moved = dp_alloc_malloc_n(n, sizeof *d->moved);
    d->placed_gen = dp_alloc_malloc_n(n, sizeof *d->placed_gen);
    d->placed_list = dp_alloc_malloc_n(n, sizeof *d->placed_list);
    d->stamp = dp_alloc_calloc_n(n, sizeof *d->stamp);
    d->start = dp_alloc_malloc_n(n, sizeof(double));
    d->end = dp_alloc_malloc_n(n, sizeof(double));
    d->ready = dp_alloc_malloc_n(n, sizeof(double));
    d->op_stream = dp_alloc_malloc_n(n, sizeof(int));
    d->x_req = dp_alloc_malloc_n(m1, sizeof(double));
    d->x_start = dp_alloc_malloc_n(m1, sizeof(double));
    d->x_end = dp_alloc_malloc_n(m1, sizeof(double));
    d->busy = dp_alloc_malloc_n(D, sizeof(double));
    d->mem_peak = dp_alloc_malloc_n(D, sizeof(double));
    if (s->chan_bytes) d->chan_bytes = dp_alloc_malloc_n((size_t)s->t->n_channels + 1, sizeof(double));
    if (!d->inc || !d->cand || !d->assign || !d->last || !d->moved || !d->placed_gen || !d->placed_list || !d->stamp ||
        !d->start || !d->end || !d->ready ||
        !d->op_stream || !d->x_req || !d->x_start || !d->x_end || !d->busy || !d->mem_peak ||
        (s->chan_bytes && !d->chan_bytes))
        goto nomem;
    return d;
nomem:
    dp_hisim_delta_free(d);
    dp_error_set(err, DP_ENOMEM, "%s: out of memory for the simulator's snapshots", s->g->source);
    return NULL;
}

/* the records of s's last (complete) run to d's incumbent result (to 1), or d's to s's (0) */
static void records_copy(dp_hisim_delta *d, int to_d)
{
    dp_hisim *s = d->s;
    const size_t n = (size_t)s->n, m1 = (size_t)s->m + 1, D = (size_t)s->D;
#define RC(dst, src, k) memcpy(to_d ? (dst) : (src), to_d ? (src) : (dst), (k) * sizeof *(dst))
    RC(d->start, s->start, n);
    RC(d->end, s->end, n);
    RC(d->ready, s->ready, n);
    RC(d->x_req, s->x_req, m1);
    RC(d->x_start, s->x_start, m1);
    RC(d->x_end, s->x_end, m1);
#undef RC
    if (!to_d) return;
    memcpy(d->op_stream, s->q.op_stream, n * sizeof *d->op_stream);
    memcpy(d->busy, s->busy, D * sizeof *d->busy);
    memcpy(d->mem_peak, s->mem.peak, D * sizeof *d->mem_peak);
    if (s->chan_bytes) memcpy(d->chan_bytes, s->chan_bytes, (size_t)s->t->n_channels * sizeof *d->chan_bytes);
    /* the run's result (fill_result) */
    dp_hisim_result r;
    fill_result(s, &r);
    d->makespan = r.makespan;
    d->volume = r.transfer_volume;
    d->n_transfers = r.n_transfers;
    d->n_events = r.n_events;
    d->mem_excess = r.mem_excess;
    d->penalised = r.penalised_makespan;
}

/* a new incumbent generation for assignment: its snapshots inc[from + 1 .. n_inc) are its run's;
 * the ops it places that the previous one did not (all, after from -1: every snapshot is new)
 * are placed in this generation */
static void next_generation(dp_hisim_delta *d, const int *assignment, int from)
{
    const int n = d->s->n;
    d->gen++;
    for (int j = from + 1; j < d->n_inc; j++) d->inc[j].gen = d->gen;
    if (from < 0) {
        d->n_placed = 0;
        for (int v = 0; v < n; v++) {
            d->placed_gen[v] = assignment[v] >= 0 ? d->gen : -1;
            if (assignment[v] >= 0) d->placed_list[d->n_placed++] = v;
        }
        return;
    }
    /* resumed from a snapshot: no op the incumbent placed is absent (delta_from) */
    for (int i = 0; i < d->n_moved; i++) {
        const int v = d->moved[i];
        if (d->assign[v] >= 0) continue;
        d->placed_gen[v] = d->gen;
        d->placed_list[d->n_placed++] = v;
    }
}

int dp_hisim_delta_set(dp_hisim_delta *d, const int *assignment, dp_hisim_result *res, dp_error *err)
{
    dp_hisim *s = d->s;
    d->set = d->complete = 0;
    d->n_inc = 0;
    s->rec = d;
    d->writing = d->inc;
    d->next_j = 0;
    d->next_at = d->interval;
    int prefix = 0;
    for (int v = 0; v < s->n && !prefix; v++) prefix = assignment[v] < 0;
    d->prefix_seen |= prefix;
    dp_hisim_result r;
    const int rc = run(s, assignment, NULL, prefix, -1, &r, err);
    s->rec = NULL;
    d->n_full++;
    if (rc != DP_OK) return rc;
    d->n_inc = d->next_j;
    next_generation(d, assignment, -1);
    records_copy(d, 1);
    memcpy(d->assign, assignment, (size_t)s->n * sizeof *d->assign);
    d->set = 1;
    return res ? dp_hisim_delta_result(d, res, err) : DP_OK;
}

/* The ops of assignment whose devices differ from the incumbent's (to d->moved, d->n_moved), and
 * the last incumbent snapshot before t*, the first instant the engine reads one of their devices
 * (dp_hisim.h): -1 when none is (a source moved, t* before the first snapshot, or an op placed in
 * the incumbent's prefix absent from assignment's). *prefix: 1 when assignment has absent ops. */
static int delta_from(dp_hisim_delta *d, const int *assignment, int *prefix)
{
    const dp_hisim *s = d->s;
    const dp_graph *g = s->g;
    double tstar = INFINITY;
    int k = 0, absent = 0;
    for (int v = 0; v < s->n; v++) {
        absent |= assignment[v] < 0;
        if (assignment[v] == d->assign[v]) continue;
        d->moved[k++] = v;
        if (assignment[v] < 0 || g->pred_ptr[v] == g->pred_ptr[v + 1]) tstar = -INFINITY;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            const double e = d->end[g->edge_src[g->pred_edge[q]]];
            if (e < tstar) tstar = e;
        }
    }
    d->n_moved = k;
    *prefix = absent;
    d->prefix_seen |= absent;
    int from = d->n_inc - 1;
    while (from >= 0 && !(d->inc[from].t <= tstar)) from--;
    return from;
}

/* A run from snapshot from (d->moved[0..n_moved): the moved ops) that writes the full run's
 * records: the incumbent's in s first (a copy into or out of a moved op is requested after t*,
 * and one that is local in the candidate is never written: none yet). From time 0 the run
 * resets them itself. */
static void records_from(dp_hisim_delta *d, int from)
{
    dp_hisim *s = d->s;
    const dp_graph *g = s->g;
    if (from < 0) return;
    records_copy(d, 0);
    for (int i = 0; i < d->n_moved; i++) {
        const int v = d->moved[i];
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            const int e = g->pred_edge[q];
            s->x_req[e] = s->x_start[e] = s->x_end[e] = -1;
        }
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) s->x_req[e] = s->x_start[e] = s->x_end[e] = -1;
    }
}

/* the run from snapshot from takes its snapshots to d->cand from from + 1 on (on: 1), or none */
static void snapshots_from(dp_hisim_delta *d, int from, int on)
{
    d->writing = on ? d->cand : NULL;
    d->next_j = from + 1;
    d->next_at = on ? (long)(from + 2) * d->interval : LONG_MAX;
}

/* The share of delta runs committed (a moving average over about the last 50 runs) above which
 * a delta run records (its snapshots and records, ready for a commit) instead of leaving them to
 * the commit, which then runs again from the same snapshot: recording costs every run copies of
 * the state (each about the snapshot's size), running again costs a committed one the events
 * after its snapshot. Annealing commits most moves while hot and few once cool. */
#define DELTA_RECORD_RATE 0.3

/* A delta run of assignment up to bound; records: with the full run's records in s (res, may
 * be NULL: its result) */
static int delta_run(dp_hisim_delta *d, const int *assignment, double bound, int records, double *cost, int *exceeded,
                     dp_hisim_result *res, dp_error *err)
{
    dp_hisim *s = d->s;
    d->complete = d->recorded = 0;
    if (!d->set) return dp_error_set(err, DP_EINVAL, "delta run: the incumbent is not set (dp_hisim_delta_set)");
    int prefix;
    const int from = delta_from(d, assignment, &prefix);
    d->recorded = d->commit_rate > DELTA_RECORD_RATE;
    d->commit_rate *= 1 - 1.0 / 50;
    s->rec = d;
    if (d->recorded || records) records_from(d, from);
    snapshots_from(d, from, d->recorded);
    d->from = from;
    int complete = 0, ex = 0;
    double c = 0;
    const int rc = run_bounded_from(s, assignment, NULL, prefix, bound, from, &c, &ex, &complete, err);
    s->rec = NULL;
    if (from >= 0) {
        d->n_resumed++;
        d->n_skipped += d->inc[from].events;
    } else {
        d->n_full++;
    }
    if (rc != DP_OK) return rc;
    if (cost) *cost = c;
    if (exceeded) *exceeded = ex;
    d->complete = complete;
    if (complete) memcpy(d->last, assignment, (size_t)s->n * sizeof *d->last);
    d->run_id = s->run_id;
    if (res && complete) fill_result(s, res);
    return DP_OK;
}

int dp_hisim_run_delta(dp_hisim_delta *d, const int *assignment, double bound, double *cost, int *exceeded,
                       dp_error *err)
{
    return delta_run(d, assignment, bound, 0, cost, exceeded, NULL, err);
}

int dp_hisim_run_delta_result(dp_hisim_delta *d, const int *assignment, dp_hisim_result *res, dp_error *err)
{
    return delta_run(d, assignment, INFINITY, 1, NULL, NULL, res, err);
}

int dp_hisim_delta_is_last(const dp_hisim_delta *d, const int *assignment)
{
    return d->set && d->complete && memcmp(assignment, d->last, (size_t)d->s->n * sizeof *assignment) == 0;
}

int dp_hisim_delta_commit(dp_hisim_delta *d, const int *assignment, dp_error *err)
{
    dp_hisim *s = d->s;
    if (!d->set) return dp_error_set(err, DP_EINVAL, "delta commit: the incumbent is not set (dp_hisim_delta_set)");
    int from = d->from;
    /* (another run of s since the delta run overwrote its records) */
    if (!d->recorded || !dp_hisim_delta_is_last(d, assignment) || d->run_id != s->run_id) {
        /* a run from the incumbent's snapshot before assignment's t*, recording */
        int prefix;
        from = delta_from(d, assignment, &prefix);
        s->rec = d;
        records_from(d, from);
        snapshots_from(d, from, 1);
        dp_hisim_result r;
        const int rc = run(s, assignment, NULL, prefix, from, &r, err);
        s->rec = NULL;
        d->complete = d->recorded = 0;
        if (rc != DP_OK) return rc;
    }
    for (int j = from + 1; j < d->next_j; j++) {
        const snap_slot t = d->inc[j];
        d->inc[j] = d->cand[j];
        d->cand[j] = t;
    }
    d->n_inc = d->next_j;
    next_generation(d, assignment, from);
    records_copy(d, 1);
    memcpy(d->assign, assignment, (size_t)s->n * sizeof *d->assign);
    d->complete = d->recorded = 0;
    d->commit_rate += 1.0 / 50;
    return DP_OK;
}

int dp_hisim_delta_result(const dp_hisim_delta *d, dp_hisim_result *res, dp_error *err)
{
    const dp_hisim *s = d->s;
    if (!d->set) return dp_error_set(err, DP_EINVAL, "delta: no incumbent (dp_hisim_delta_set)");
    *res = (dp_hisim_result){
        .makespan = d->makespan, .n_devices = s->D, .busy = d->busy, .n_transfers = d->n_transfers,
        .transfer_volume = d->volume, .op_start = d->start, .op_end = d->end, .op_ready = d->ready,
        .op_stream = d->op_stream, .xfer_request = d->x_req, .xfer_start = d->x_start, .xfer_end = d->x_end,
        .mem_peak = d->mem_peak, .mem_capacity = s->mem.cap, .mem_excess = d->mem_excess,
        .penalised_makespan = d->penalised,
        .chan_bytes = d->chan_bytes, .n_events = d->n_events,
    };
    return DP_OK;
}

int dp_hisim_delta_slots(const dp_hisim_delta *d, double *snapshot_bytes)
{
    if (snapshot_bytes) *snapshot_bytes = d->snapshot_bytes;
    return d->K;
}

void dp_hisim_delta_stats(const dp_hisim_delta *d, long *resumed, long *full, long *skipped)
{
    if (resumed) *resumed = d->n_resumed;
    if (full) *full = d->n_full;
    if (skipped) *skipped = d->n_skipped;
}

/* ---------------- Chrome trace ---------------- */

static void route_text(const dp_topology *t, int a, int b, char *buf, size_t cap)
{
    const dp_topology_route_info *r = dp_topology_route(t, a, b);
    size_t len = 0;
    buf[0] = 0;
    len += (size_t)snprintf(buf + len, cap - len, "%s", t->node_name[a]);
    for (int sg = r->seg_begin; sg < r->seg_end && len < cap; sg++) {
        if (sg > r->seg_begin && len < cap) len += (size_t)snprintf(buf + len, cap - len, " [staged]");
        for (int h = t->seg[sg].hop_begin; h < t->seg[sg].hop_end && len < cap; h++)
            len += (size_t)snprintf(buf + len, cap - len, " -> %s", t->node_name[t->hop_to[h]]);
    }
}

int dp_hisim_write_trace(const dp_hisim *s, const int *assignment, const char *path, dp_error *err)
{
    const dp_graph *g = s->g;
    const double sc = g->time_scale, us = 1e6 / sc;
    json_t *meta, *root = dp_sim_trace_root(g, &meta);
    json_t *evs = json_array();
    json_object_set_new(meta, "transfer_model", json_string(dp_transfer_kind_name(s->o.transfer_model)));
    json_object_set_new(meta, "mode", json_string(s->o.mode == DP_HISIM_MODE_BSP ? "bsp" : "async"));
    if (s->t) json_object_set_new(meta, "topology", json_string(s->t->name));
    json_object_set_new(meta, "note", json_string("trace times are microseconds of the printed unit; op args in the printed unit"));
    char nm[512];
    for (int d = 0; d < s->D; d++)
        for (int k = 0; k < s->q.streams[d]; k++) {
            if (s->t) snprintf(nm, sizeof nm, "%s stream %d", s->t->dev[d].name, k);
            else snprintf(nm, sizeof nm, "device %d stream %d", d, k);
            json_array_append_new(evs, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name", "ph", "M", "pid", 0,
                                                 "tid", d * s->q.max_streams + k, "args", "name", nm));
        }
    for (int v = 0; v < g->n_ops; v++) {
        double inputs_done = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int u = g->edge_src[g->pred_edge[q]];
            if (s->end[u] > inputs_done) inputs_done = s->end[u];
        }
        json_t *x = json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:{s:f,s:f,s:f}}", "name", g->op_name[v], "cat", g->op_kind[v],
                              "ph", "X", "pid", 0, "tid", assignment[v] * s->q.max_streams + s->q.op_stream[v],
                              "ts", s->start[v] * us, "dur", (s->end[v] - s->start[v]) * us, "args",
                              "wait_for_inputs", (s->ready[v] - inputs_done) / sc, "queued", (s->start[v] - s->ready[v]) / sc,
                              "run", (s->end[v] - s->start[v]) / sc);
        json_array_append_new(evs, x);
    }
    json_array_append_new(evs, json_pack("{s:s,s:s,s:i,s:{s:s}}", "name", "process_name", "ph", "M", "pid", 1, "args",
                                         "name", "transfers"));
    for (int e = 0; e < g->n_edges; e++) {
        if (s->x_req[e] < 0) continue;
        int a = assignment[g->edge_src[e]], b = assignment[g->edge_dst[e]];
        if (s->t) route_text(s->t, a, b, nm, sizeof nm);
        else snprintf(nm, sizeof nm, "device %d -> device %d", a, b);
        /* bytes over the whole transfer, latency included, in every model (it was over the time
         * after a model's own notion of when data moved: the fixed model's whole delay, max-min's
         * less its first latency, so one transfer gave other rates under each; a review) */
        const double moving = s->x_end[e] - s->x_start[e];
        json_t *args = json_pack("{s:s,s:f,s:f,s:f}", "route", nm, "queued_for_copy_engines", (s->x_start[e] - s->x_req[e]) / sc,
                                 "bytes", s->c->edge_data[e], "duration", (s->x_end[e] - s->x_start[e]) / sc);
        if (g->cost_kind == DP_GRAPH_COST_PHYSICAL && moving > 0)
            json_object_set_new(args, "mean_rate_Bps", dp_json_number(s->c->edge_data[e] / moving));
        char label[64];
        snprintf(label, sizeof label, "%s->%s", s->t ? s->t->dev[a].name : "", s->t ? s->t->dev[b].name : "");
        json_array_append_new(evs, json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:f,s:o}", "name", label, "cat", "transfer", "ph", "b",
                                             "id", e, "pid", 1, "tid", a, "ts", s->x_start[e] * us, "args", args));
        json_array_append_new(evs, json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:f}", "name", label, "cat", "transfer", "ph", "e",
                                             "id", e, "pid", 1, "tid", a, "ts", s->x_end[e] * us));
    }
    int nlog;
    const dp_transfer_rate *rl = dp_transfer_rate_log(s->x, &nlog);
    for (int i = 0; i < nlog && s->t; i++) {
        const dp_topology *t = s->t;
        int k = rl[i].klass;
        snprintf(nm, sizeof nm, "per-flow rate %s..%s (class %d)", t->node_name[t->class_from[k]], t->node_name[t->class_to[k]], k);
        json_array_append_new(evs, json_pack("{s:s,s:s,s:i,s:f,s:{s:f,s:i}}", "name", nm, "ph", "C", "pid", 1, "ts", rl[i].t * us,
                                             "args", "Bps", rl[i].rate_Bps, "flows", rl[i].n_flows));
    }
    const dp_transfer_busy *bl = dp_transfer_busy_log(s->x, &nlog);
    if (nlog > 0 && s->t) {
        for (int ch = 0; ch < s->t->n_channels; ch++) {
            /* a half-duplex link's one channel carries both directions */
            int half = s->t->link[s->t->chan_link[ch]].half_duplex;
            snprintf(nm, sizeof nm, "channel %s %s %s", s->t->node_name[s->t->chan_from[ch]], half ? "<->" : "->",
                     s->t->node_name[s->t->chan_to[ch]]);
            json_array_append_new(evs, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name", "ph", "M", "pid", 2,
                                                 "tid", ch, "args", "name", nm));
        }
        for (int i = 0; i < nlog; i++)
            json_array_append_new(evs, json_pack("{s:s,s:s,s:i,s:i,s:f,s:f,s:{s:i}}", "name", "chunk", "ph", "X", "pid", 2,
                                                 "tid", bl[i].chan, "ts", bl[i].t0 * us, "dur", (bl[i].t1 - bl[i].t0) * us,
                                                 "args", "edge", bl[i].id));
    }
    json_object_set_new(root, "traceEvents", evs);
    int rc = dp_json_dump_atomic(root, path, JSON_COMPACT, err);
    json_decref(root);
    return rc;
}
