/* dp_hisim.c: the general event engine (see dp_hisim.h). Its event kinds and their order are
 * dp_sim's; what it adds hangs off the handlers: streams, queue disciplines, copy engines, the
 * transfer model, memory, barriers. */
#include "dp_hisim.h"
#include "dp_heap.h"
#include "dp_json.h"

#include <assert.h>
#include <limits.h>
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

struct dp_hisim {
    const dp_graph *g;
    const dp_costs *c;
    const dp_topology *t;
    dp_hisim_options o;
    int n, m, D;
    size_t bytes_held;
    dp_xfer *x;
    int contention;            /* transfer model with internal events */
    /* levels (bulk-synchronous) */
    int *level, *level_ptr, *level_ops, n_levels;
    /* run state */
    const int *dev;
    const double *prio;
    unsigned char *first_copy; /* per edge: 1 unless it repeats an earlier (src, dst) pair */
    dp_evheap heap;
    uint32_t *fifo;
    int fifo_head, fifo_tail, fifo_cap;
    int *arrived, *n_in;
    /* device queues: FIFO lists, or per-device heaps in one array */
    int *qhead, *qtail, *qnext;
    pq_item *pq;
    int *pq_off, *pq_n;
    uint64_t pq_seq;
    int *dirty, n_dirty;               /* priority queues: devices to dispatch at the end of the instant */
    unsigned char *is_dirty;
    int *free_streams, *streams;
    int *stream_stack, *stream_top;    /* free stream ids per device (stack in a D x max_streams array) */
    int max_streams;
    int *op_stream;
    double *busy, *start, *end, *ready;
    double now, makespan;
    long n_events, n_transfers;
    double volume;
    /* copy engines */
    int ce_limited;
    int *out_free, *in_free;
    int *pend_head, *pend_tail, *pend_next;  /* per (src, dst) pair FIFO of waiting edges */
    uint64_t *req_seq;
    uint64_t req_counter;
    int *ce_dirty, n_ce_dirty;         /* devices whose engines came free (or got a request) this instant */
    unsigned char *is_ce_dirty;
    double *x_req, *x_start, *x_end;
    /* memory */
    int *holders;
    double *mem_cur, *mem_peak, *mem_cap;
    double mem_excess;
    /* barriers */
    int cur_level;
    long *level_left;
    double *chan_bytes;
    /* interference (calibrated slowdowns, dp_hisim.h): op progress rates per device */
    int itf;                   /* 1 when some device has copy_in or peer_busy > 0 */
    double *copy_in, *peer_busy, *rate;  /* (D) */
    int *k_in, *n_running;     /* (D) copies into the device in flight; ops running on it */
    int n_busy_dev;            /* devices with an op running */
    int *run_ops;              /* (D x max_streams) the ops running on each device */
    double *rem, *last, *due;  /* (n) work left (s at full rate), when it was counted, end due */
    int failed;
    dp_error *err;
};

void dp_hisim_options_init(dp_hisim_options *o)
{
    memset(o, 0, sizeof *o);
    o->transfer_model = DP_XFER_FIXED;
    o->chunks = 1;
    o->mode = DP_MODE_ASYNC;
    o->streams = 0;
    o->queue = DP_QUEUE_FIFO;
    o->memory_limit = 0;
    o->memory_policy = DP_MEMORY_ERROR;
    o->memory_penalty = 1.0;
    o->copy_engines = 1;
}

int dp_hisim_options_default(const dp_hisim_options *o)
{
    return o->transfer_model == DP_XFER_FIXED && o->mode == DP_MODE_ASYNC && o->streams <= 1 &&
           o->queue == DP_QUEUE_FIFO && o->memory_limit == 0;
}

static void *track(dp_hisim *s, void *p, size_t n, size_t sz)
{
    s->bytes_held += n * sz;
    return p;
}
#define ALLOC(s, n, sz) track((s), dp_malloc_n((n), (sz)), (n), (sz))

void dp_hisim_free(dp_hisim *s)
{
    if (!s) return;
    dp_xfer_free(s->x);
    free(s->level); free(s->level_ptr); free(s->level_ops); free(s->heap.a); free(s->fifo);
    free(s->arrived); free(s->n_in); free(s->qhead); free(s->qtail); free(s->qnext); free(s->pq);
    free(s->pq_off); free(s->pq_n); free(s->free_streams); free(s->streams); free(s->stream_stack);
    free(s->stream_top); free(s->op_stream); free(s->busy); free(s->start); free(s->end); free(s->ready);
    free(s->out_free); free(s->in_free); free(s->pend_head); free(s->pend_tail); free(s->pend_next);
    free(s->req_seq); free(s->ce_dirty); free(s->is_ce_dirty); free(s->x_req); free(s->x_start); free(s->x_end); free(s->holders);
    free(s->mem_cur); free(s->mem_peak); free(s->mem_cap); free(s->level_left); free(s->chan_bytes);
    free(s->first_copy); free(s->dirty); free(s->is_dirty);
    free(s->copy_in); free(s->peer_busy); free(s->rate); free(s->k_in); free(s->n_running); free(s->run_ops);
    free(s->rem); free(s->last); free(s->due);
    free(s);
}

dp_hisim *dp_hisim_alloc(const dp_graph *g, const dp_costs *c, const dp_topology *t,
                         const dp_hisim_options *o, dp_error *err)
{
    if (c->n_ops != g->n_ops || c->n_edges != g->n_edges) {
        dp_error_set(err, DP_EINVAL, "%s: cost tables do not match the graph", g->source);
        return NULL;
    }
    if (t && t->n_devices != c->n_devices) {
        dp_error_set(err, DP_EINVAL, "topology %s has %d devices, the cost tables %d", t->name, t->n_devices, c->n_devices);
        return NULL;
    }
    if (o->streams < 0 || o->streams > 1024) {
        dp_error_set(err, DP_EINVAL, "streams must be 1..1024, got %d", o->streams);
        return NULL;
    }
    if (o->memory_limit == DP_HISIM_MEMORY_TOPOLOGY && !t) {
        dp_error_set(err, DP_EINVAL, "memory limit \"topology\" needs a topology");
        return NULL;
    }
    if (!(o->memory_limit >= 0 || o->memory_limit == DP_HISIM_MEMORY_TOPOLOGY) || !isfinite(o->memory_limit) ||
        !(o->memory_penalty >= 0)) {
        dp_error_set(err, DP_EINVAL, "memory limit must be a non-negative number of bytes and the penalty >= 0");
        return NULL;
    }
    if (g->n_ops >= (int)EV_ID_MASK || g->n_edges >= (int)EV_ID_MASK) {
        dp_error_set(err, DP_ENOMEM, "%s: graph too large for the simulator", g->source);
        return NULL;
    }
    dp_hisim *s = calloc(1, sizeof *s);
    if (!s) goto nomem;
    s->g = g;
    s->c = c;
    s->t = t;
    s->o = *o;
    s->n = g->n_ops;
    s->m = g->n_edges;
    s->D = c->n_devices;
    s->bytes_held = sizeof *s;
    s->x = dp_xfer_alloc(o->transfer_model, c, t, o->calibration, o->chunks, err);
    if (!s->x) { dp_hisim_free(s); return NULL; }
    s->contention = o->transfer_model != DP_XFER_FIXED;
    const size_t n = (size_t)s->n, m1 = (size_t)s->m + 1, D = (size_t)s->D;
    /* streams and copy engines per device */
    s->streams = ALLOC(s, D, sizeof(int));
    s->free_streams = ALLOC(s, D, sizeof(int));
    s->out_free = ALLOC(s, D, sizeof(int));
    s->in_free = ALLOC(s, D, sizeof(int));
    if (!s->streams || !s->free_streams || !s->out_free || !s->in_free) goto nomem;
    s->max_streams = 1;
    for (int d = 0; d < s->D; d++) {
        s->streams[d] = o->streams > 0 ? o->streams : (t ? t->dev[d].streams : 1);
        if (s->streams[d] > s->max_streams) s->max_streams = s->streams[d];
        int ce = (t && o->copy_engines) ? t->dev[d].copy_engines : 0;
        if (ce > 0) s->ce_limited = 1;
    }
    s->stream_stack = ALLOC(s, D * (size_t)s->max_streams, sizeof(int));
    s->stream_top = ALLOC(s, D, sizeof(int));
    s->fifo_cap = 2 * s->m + 5 * s->n + 1;
    s->fifo = ALLOC(s, (size_t)s->fifo_cap, sizeof(uint32_t));
    s->heap.cap = s->m + s->n + 1;
    s->heap.a = ALLOC(s, (size_t)s->heap.cap, sizeof(dp_ev));
    s->arrived = ALLOC(s, n, sizeof(int));
    s->n_in = ALLOC(s, n, sizeof(int));
    s->qhead = ALLOC(s, D, sizeof(int));
    s->qtail = ALLOC(s, D, sizeof(int));
    s->qnext = ALLOC(s, n, sizeof(int));
    s->op_stream = ALLOC(s, n, sizeof(int));
    s->busy = ALLOC(s, D, sizeof(double));
    s->start = ALLOC(s, n, sizeof(double));
    s->end = ALLOC(s, n, sizeof(double));
    s->ready = ALLOC(s, n, sizeof(double));
    s->x_req = ALLOC(s, m1, sizeof(double));
    s->x_start = ALLOC(s, m1, sizeof(double));
    s->x_end = ALLOC(s, m1, sizeof(double));
    s->holders = ALLOC(s, n, sizeof(int));
    s->mem_cur = ALLOC(s, D, sizeof(double));
    s->mem_peak = ALLOC(s, D, sizeof(double));
    s->mem_cap = ALLOC(s, D, sizeof(double));
    s->first_copy = ALLOC(s, m1, 1);
    if (!s->first_copy) goto nomem;
    if (!s->stream_stack || !s->stream_top || !s->fifo || !s->heap.a || !s->arrived || !s->n_in || !s->qhead ||
        !s->qtail || !s->qnext || !s->op_stream || !s->busy || !s->start || !s->end || !s->ready || !s->x_req ||
        !s->x_start || !s->x_end || !s->holders || !s->mem_cur || !s->mem_peak || !s->mem_cap)
        goto nomem;
    /* a repeated edge is one input (the reference's semantics, see dp_sim.h): only the first copy
     * of each (src, dst) pair moves data and is waited for; the graph lists a repeat right after
     * its first copy among the source's out-edges */
    for (int u = 0; u < s->n; u++)
        for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++)
            s->first_copy[e] = (e == g->succ_ptr[u] || g->edge_dst[e - 1] != g->edge_dst[e]);
    for (int v = 0; v < s->n; v++) s->n_in[v] = g->n_unique_pred[v];
    for (int d = 0; d < s->D; d++)
        s->mem_cap[d] = o->memory_limit == DP_HISIM_MEMORY_TOPOLOGY ? t->dev[d].memory_bytes : o->memory_limit;
    if (o->queue == DP_QUEUE_PRIORITY) {
        s->pq = ALLOC(s, n, sizeof(pq_item));
        s->pq_off = ALLOC(s, D + 1, sizeof(int));
        s->pq_n = ALLOC(s, D, sizeof(int));
        s->dirty = ALLOC(s, D, sizeof(int));
        s->is_dirty = ALLOC(s, D, 1);
        if (!s->pq || !s->pq_off || !s->pq_n || !s->dirty || !s->is_dirty) goto nomem;
    }
    if (s->ce_limited) {
        s->pend_head = ALLOC(s, D * D, sizeof(int));
        s->pend_tail = ALLOC(s, D * D, sizeof(int));
        s->pend_next = ALLOC(s, m1, sizeof(int));
        s->req_seq = ALLOC(s, m1, sizeof(uint64_t));
        s->ce_dirty = ALLOC(s, D, sizeof(int));
        s->is_ce_dirty = ALLOC(s, D, 1);
        if (!s->pend_head || !s->pend_tail || !s->pend_next || !s->req_seq || !s->ce_dirty || !s->is_ce_dirty)
            goto nomem;
    }
    if (t) {
        s->chan_bytes = ALLOC(s, (size_t)t->n_channels + 1, sizeof(double));
        if (!s->chan_bytes) goto nomem;
    }
    /* interference: the calibration's slowdowns of the topology's devices */
    for (int d = 0; t && d < s->D; d++) {
        const dp_calib_device *cd = dp_calib_find_device(o->calibration, t->dev[d].name);
        if (cd && (cd->copy_in > 0 || cd->peer_busy > 0)) s->itf = 1;
    }
    if (s->itf) {
        s->copy_in = ALLOC(s, D, sizeof(double));
        s->peer_busy = ALLOC(s, D, sizeof(double));
        s->rate = ALLOC(s, D, sizeof(double));
        s->k_in = ALLOC(s, D, sizeof(int));
        s->n_running = ALLOC(s, D, sizeof(int));
        s->run_ops = ALLOC(s, D * (size_t)s->max_streams, sizeof(int));
        s->rem = ALLOC(s, n, sizeof(double));
        s->last = ALLOC(s, n, sizeof(double));
        s->due = ALLOC(s, n, sizeof(double));
        if (!s->copy_in || !s->peer_busy || !s->rate || !s->k_in || !s->n_running || !s->run_ops || !s->rem ||
            !s->last || !s->due)
            goto nomem;
        for (int d = 0; d < s->D; d++) {
            const dp_calib_device *cd = dp_calib_find_device(o->calibration, t->dev[d].name);
            s->copy_in[d] = cd ? cd->copy_in : 0;
            s->peer_busy[d] = cd ? cd->peer_busy : 0;
        }
    }
    /* levels: longest-path depth, over the topological order */
    s->level = ALLOC(s, n, sizeof(int));
    if (!s->level) goto nomem;
    s->n_levels = 0;
    for (int k = 0; k < s->n; k++) {
        int v = g->topo[k], lv = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int u = g->edge_src[g->pred_edge[q]];
            if (s->level[u] + 1 > lv) lv = s->level[u] + 1;
        }
        s->level[v] = lv;
        if (lv + 1 > s->n_levels) s->n_levels = lv + 1;
    }
    s->level_ptr = track(s, calloc((size_t)s->n_levels + 1, sizeof(int)), (size_t)s->n_levels + 1, sizeof(int));
    s->level_ops = ALLOC(s, n, sizeof(int));
    s->level_left = ALLOC(s, (size_t)s->n_levels, sizeof(long));
    if (!s->level_ptr || !s->level_ops || !s->level_left) goto nomem;
    for (int v = 0; v < s->n; v++) s->level_ptr[s->level[v] + 1]++;
    for (int l = 0; l < s->n_levels; l++) s->level_ptr[l + 1] += s->level_ptr[l];
    {
        int *fill = calloc((size_t)s->n_levels, sizeof(int));
        if (!fill) goto nomem;
        for (int v = 0; v < s->n; v++) s->level_ops[s->level_ptr[s->level[v]] + fill[s->level[v]]++] = v;
        free(fill);
    }
    return s;
nomem:
    dp_hisim_free(s);
    dp_error_set(err, DP_ENOMEM, "%s: out of memory for the simulator", g->source);
    return NULL;
}

const int *dp_hisim_levels(const dp_hisim *s, int *n_levels)
{
    *n_levels = s->n_levels;
    return s->level;
}

size_t dp_hisim_workspace_bytes(const dp_hisim *s)
{
    return s->bytes_held + dp_xfer_workspace_bytes(s->x);
}

/* ---------------- queues ---------------- */

static inline void fifo_push(dp_hisim *s, uint32_t kind, uint32_t id)
{
    assert(s->fifo_tail < s->fifo_cap);
    s->fifo[s->fifo_tail++] = kind << EV_SHIFT | id;
}

static void schedule_at(dp_hisim *s, double t, uint32_t kind, uint32_t id);

static inline void schedule(dp_hisim *s, double delay, uint32_t kind, uint32_t id)
{
    /* with interference the heap also holds the stale events of moved ends: it may have to grow
     * (m + n + 1 slots hold every live event, not those) */
    if (delay > 0 && s->itf) schedule_at(s, s->now + delay, kind, id);
    else if (delay > 0) dp_evheap_push(&s->heap, s->now + delay, kind << EV_SHIFT | id);
    else fifo_push(s, kind, id);
}

/* a device's priority queue: highest priority first, then arrival order */
#define PQ_BEFORE(ctx, x, y) ((x).pri > (y).pri || ((x).pri == (y).pri && (x).seq < (y).seq))
DP_HEAP_DEFINE(pq_heap, pq_item, const void *, PQ_BEFORE, DP_HEAP_NO_INDEX)

static void pq_push(dp_hisim *s, int d, int v)
{
    pq_item x = {.pri = s->prio[v], .seq = s->pq_seq++, .op = v};
    pq_heap_push(NULL, s->pq + s->pq_off[d], &s->pq_n[d], x);
}

static int pq_pop(dp_hisim *s, int d)
{
    return pq_heap_pop(NULL, s->pq + s->pq_off[d], &s->pq_n[d]).op;
}

static inline int queue_empty(const dp_hisim *s, int d)
{
    return s->pq ? s->pq_n[d] == 0 : s->qhead[d] < 0;
}

static inline void grant_head(dp_hisim *s, int d)
{
    int v;
    if (s->pq) {
        v = pq_pop(s, d);
    } else {
        v = s->qhead[d];
        s->qhead[d] = s->qnext[v];
        if (s->qhead[d] < 0) s->qtail[d] = -1;
    }
    s->free_streams[d]--;
    s->op_stream[v] = s->stream_stack[(size_t)d * s->max_streams + --s->stream_top[d]];
    fifo_push(s, EV_GRANTED, (uint32_t)v);
}

/* Priority queues choose among every op that is ready at an instant: an op's ready event and a
 * stream's release only mark the device, and the grants are made once the instant's other events
 * have run (dispatch_dirty), so that of b and c made ready by one finish the higher priority
 * runs first whichever event came first. (FIFO grants at once: its order is the arrival order,
 * which is dp_sim's and the reference's.) */
static inline void mark_dirty(dp_hisim *s, int d)
{
    if (s->is_dirty[d]) return;
    s->is_dirty[d] = 1;
    s->dirty[s->n_dirty++] = d;
}

/* grant free streams to the best ready ops, devices in the order they were marked */
static void dispatch_dirty(dp_hisim *s)
{
    for (int i = 0; i < s->n_dirty; i++) {
        int d = s->dirty[i];
        s->is_dirty[d] = 0;
        while (s->free_streams[d] > 0 && !queue_empty(s, d)) grant_head(s, d);
    }
    s->n_dirty = 0;
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
    s->mem_cur[d] += bytes;
    if (s->mem_cur[d] > s->mem_peak[d]) {
        s->mem_peak[d] = s->mem_cur[d];
        if (s->mem_cap[d] > 0 && s->mem_peak[d] > s->mem_cap[d] && s->o.memory_policy == DP_MEMORY_ERROR) {
            char b[300];
            fail(s, DP_ERANGE, "memory capacity exceeded on device %s: %.6g bytes in use at t=%.6g when %s \"%s\" "
                 "needed %.6g bytes; capacity %.6g bytes (--memory-limit)", dev_name(s, d, b, sizeof b),
                 s->mem_cur[d], s->now / s->g->time_scale, what, what[0] == 'o' ? s->g->op_name[id] : s->g->op_name[s->g->edge_dst[id]],
                 bytes, s->mem_cap[d]);
        }
    }
}

static inline void producer_release(dp_hisim *s, int u)
{
    if (--s->holders[u] == 0) s->mem_cur[s->dev[u]] -= s->g->out_size[u];
}

/* ---------------- barriers ---------------- */

static void level_done(dp_hisim *s, int l)
{
    /* a level's count reaches 0 only once it has been released (its ops cannot start before),
     * so l is the current level here */
    if (--s->level_left[l] != 0) return;
    assert(l == s->cur_level);
    if (++s->cur_level >= s->n_levels) return;
    for (int i = s->level_ptr[s->cur_level]; i < s->level_ptr[s->cur_level + 1]; i++)
        if (s->dev[s->level_ops[i]] >= 0) fifo_push(s, EV_READY, (uint32_t)s->level_ops[i]);
}

/* ---------------- interference ---------------- */

/* an event at absolute time t, growing the heap when rescheduled ends have filled it */
static void schedule_at(dp_hisim *s, double t, uint32_t kind, uint32_t id)
{
    if (s->heap.n == s->heap.cap) {
        const int cap = s->heap.cap;
        dp_ev *a = dp_heap_grow(s->heap.a, &s->heap.cap, cap + 1, sizeof *a);
        if (!a) { fail(s, DP_ENOMEM, "out of memory in the simulator's event heap"); return; }
        s->bytes_held += (size_t)(s->heap.cap - cap) * sizeof *a;
        s->heap.a = a;
    }
    dp_evheap_push(&s->heap, t, kind << EV_SHIFT | id);
}

static inline double itf_rate(const dp_hisim *s, int d)
{
    int others = s->n_busy_dev - (s->n_running[d] > 0);
    return 1.0 / (1.0 + s->copy_in[d] * s->k_in[d] + s->peer_busy[d] * others);
}

/* device d's rate may have changed: count the work its running ops did at the old rate, then
 * move their ends (the old end events become stale: due[v] no longer matches them) */
static void itf_rerate(dp_hisim *s, int d)
{
    double r = itf_rate(s, d);
    if (r == s->rate[d]) return;
    for (int i = 0; i < s->n_running[d]; i++) {
        int v = s->run_ops[(size_t)d * s->max_streams + i];
        s->rem[v] -= (s->now - s->last[v]) * s->rate[d];
        if (s->rem[v] < 0) s->rem[v] = 0;
        s->last[v] = s->now;
        double due = s->now + s->rem[v] / r;
        if (due == s->due[v]) continue;   /* its event stands (a rate change at its very end) */
        s->due[v] = due;
        schedule_at(s, due, EV_COMPUTE_DONE, (uint32_t)v);
    }
    s->rate[d] = r;
}

/* device d went busy or idle: every other device with a peer slowdown changes rate */
static void itf_peers(dp_hisim *s, int d)
{
    for (int e = 0; e < s->D; e++)
        if (e != d && s->peer_busy[e] > 0) itf_rerate(s, e);
}

/* ---------------- transfers ---------------- */

static void xfer_begin(dp_hisim *s, int e, int a, int b)
{
    s->x_start[e] = s->now;
    if (s->ce_limited) { s->out_free[a]--; s->in_free[b]--; }
    mem_alloc(s, b, s->c->edge_data[e], "transfer to", e);
    if (s->t) {
        const dp_topo_route *r = dp_topology_route(s->t, a, b);
        for (int sg = r->seg_begin; sg < r->seg_end; sg++)
            for (int h = s->t->seg[sg].hop_begin; h < s->t->seg[sg].hop_end; h++)
                s->chan_bytes[s->t->hop_chan[h]] += s->c->edge_data[e];
    }
    if (s->itf && s->copy_in[b] > 0) {
        s->k_in[b]++;
        itf_rerate(s, b);
    }
    double delay;
    if (dp_xfer_start(s->x, e, a, b, s->now, &delay)) schedule(s, delay, EV_XFER_DONE, (uint32_t)e);
}

static inline int ce_ok(const dp_hisim *s, int a, int b)
{
    return s->out_free[a] > 0 && s->in_free[b] > 0;
}

static inline void ce_mark(dp_hisim *s, int d)
{
    if (s->is_ce_dirty[d]) return;
    s->is_ce_dirty[d] = 1;
    s->ce_dirty[s->n_ce_dirty++] = d;
}

/* Copy engines are granted at the end of an instant, in request order: when several transfers
 * end at one time, granting after each end in turn would let a younger request take an engine
 * that an older one, still waiting for an engine the next end frees, should have had. So a
 * transfer's end only marks its devices; a request made while some are marked waits for the
 * grant too (it is the youngest), else it starts at once when both its engines are free. */
static void xfer_request(dp_hisim *s, int e, int a, int b)
{
    s->x_req[e] = s->now;
    s->n_transfers++;
    s->volume += s->c->edge_data[e];
    if (!s->ce_limited || (s->n_ce_dirty == 0 && ce_ok(s, a, b))) { xfer_begin(s, e, a, b); return; }
    int p = a * s->D + b;
    s->req_seq[e] = s->req_counter++;
    s->pend_next[e] = -1;
    if (s->pend_tail[p] < 0) s->pend_head[p] = e;
    else s->pend_next[s->pend_tail[p]] = e;
    s->pend_tail[p] = e;
    if (s->n_ce_dirty > 0) ce_mark(s, a);
}

/* the instant is over: start the waiting transfers that the marked devices' engines allow, oldest
 * request first. Outside the marked devices nothing changed, so no other waiting transfer can
 * start (each waits for an engine that is still held). */
static void xfer_grant(dp_hisim *s)
{
    const int D = s->D;
    for (;;) {
        int best = -1, bp = -1;
        for (int i = 0; i < s->n_ce_dirty; i++) {
            int x = s->ce_dirty[i];
            for (int k = 0; k < 2 * D; k++) {
                int p = k < D ? x * D + k : (k - D) * D + x;
                int e = s->pend_head[p];
                if (e < 0 || !ce_ok(s, p / D, p % D)) continue;
                if (best < 0 || s->req_seq[e] < s->req_seq[best]) { best = e; bp = p; }
            }
        }
        if (best < 0) break;
        s->pend_head[bp] = s->pend_next[best];
        if (s->pend_head[bp] < 0) s->pend_tail[bp] = -1;
        xfer_begin(s, best, bp / D, bp % D);
    }
    for (int i = 0; i < s->n_ce_dirty; i++) s->is_ce_dirty[s->ce_dirty[i]] = 0;
    s->n_ce_dirty = 0;
}

static void xfer_done(dp_hisim *s, int e)
{
    const dp_graph *g = s->g;
    int u = g->edge_src[e], a = s->dev[u], b = s->dev[g->edge_dst[e]];
    if (a != b) {
        s->x_end[e] = s->now;
        producer_release(s, u);
        if (s->itf && s->copy_in[b] > 0) {
            s->k_in[b]--;
            itf_rerate(s, b);
        }
        if (s->ce_limited) {
            s->out_free[a]++;
            s->in_free[b]++;
            ce_mark(s, a);
            ce_mark(s, b);
        }
        if (s->o.mode == DP_MODE_BSP) level_done(s, s->level[u]);
    }
    fifo_push(s, EV_EDGE_ARRIVED, (uint32_t)e);
}

/* ---------------- handlers, named after what happens ---------------- */

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
        else s->mem_cur[du] -= s->c->edge_data[e];
    }
    for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
        if (!s->first_copy[e]) continue;
        int dv = s->dev[g->edge_dst[e]];
        if (dv < 0) continue; /* an absent op of a prefix run */
        if (dv != du) xfer_request(s, e, du, dv);
        else schedule(s, 0, EV_XFER_DONE, (uint32_t)e);
    }
    if (s->o.mode == DP_MODE_BSP) level_done(s, s->level[u]);
}

static inline void edge_arrived(dp_hisim *s, int e)
{
    int v = s->g->edge_dst[e];
    if (++s->arrived[v] == s->n_in[v] && s->o.mode == DP_MODE_ASYNC) fifo_push(s, EV_READY, (uint32_t)v);
}

static inline void op_ready(dp_hisim *s, int v)
{
    int d = s->dev[v];
    s->ready[v] = s->now;
    if (s->pq) {
        pq_push(s, d, v);
        mark_dirty(s, d);
        return;
    }
    s->qnext[v] = -1;
    if (s->qtail[d] < 0) s->qhead[d] = v;
    else s->qnext[s->qtail[d]] = v;
    s->qtail[d] = v;
    if (s->free_streams[d] > 0) grant_head(s, d);
}

static inline void op_start(dp_hisim *s, int v)
{
    int d = s->dev[v];
    double t = dp_costs_op(s->c, v, d);
    s->start[v] = s->now;
    s->busy[d] += t;
    mem_alloc(s, d, s->g->out_size[v], "op", v);
    if (s->itf) {
        s->run_ops[(size_t)d * s->max_streams + s->n_running[d]++] = v;
        if (s->n_running[d] == 1) { s->n_busy_dev++; itf_peers(s, d); }
        s->rem[v] = t;
        s->last[v] = s->now;
        s->due[v] = s->now + t / s->rate[d];
        schedule_at(s, s->due[v], EV_COMPUTE_DONE, (uint32_t)v);
        return;
    }
    schedule(s, t, EV_COMPUTE_DONE, (uint32_t)v);
}

static inline void compute_done(dp_hisim *s, int v)
{
    int d = s->dev[v];
    if (s->itf) {
        int *ro = &s->run_ops[(size_t)d * s->max_streams];
        for (int i = 0; i < s->n_running[d]; i++)
            if (ro[i] == v) { ro[i] = ro[--s->n_running[d]]; break; }
        if (s->n_running[d] == 0) { s->n_busy_dev--; itf_peers(s, d); }
    }
    s->end[v] = s->now;
    s->free_streams[d]++;
    s->stream_stack[(size_t)d * s->max_streams + s->stream_top[d]++] = s->op_stream[v];
    fifo_push(s, EV_RELEASE, (uint32_t)d);
    fifo_push(s, EV_FINISH, (uint32_t)v);
}

static inline void device_release(dp_hisim *s, int d)
{
    if (s->pq) { mark_dirty(s, d); return; }
    while (s->free_streams[d] > 0 && !queue_empty(s, d)) grant_head(s, d);
}

static inline void dispatch(dp_hisim *s, uint32_t ev)
{
    uint32_t id = ev & EV_ID_MASK;
    s->n_events++;
    switch (ev >> EV_SHIFT) {
    case EV_XFER_DONE: xfer_done(s, (int)id); break;
    case EV_EDGE_ARRIVED: edge_arrived(s, (int)id); break;
    case EV_READY: op_ready(s, (int)id); break;
    case EV_GRANTED: op_start(s, (int)id); break;
    case EV_COMPUTE_DONE:
        /* an end moved by a rate change leaves its old event behind: only the due one counts,
         * once (due = -inf after it) */
        if (s->itf && s->due[id] != s->now) { s->n_events--; break; }
        if (s->itf) s->due[id] = -INFINITY;
        compute_done(s, (int)id);
        break;
    case EV_RELEASE: device_release(s, (int)id); break;
    case EV_FINISH: op_finish(s, (int)id); break;
    }
}

/* The engine loop; absent ops (device -1, prefix runs only) are never made ready. */
static int run(dp_hisim *s, const int *assignment, const double *priority, int prefix, dp_hisim_result *res,
               dp_error *err)
{
    const dp_graph *g = s->g;
    const int n = s->n, D = s->D;
    for (int v = 0; v < n; v++) {
        if (prefix && assignment[v] == -1) continue;
        if (assignment[v] < 0 || assignment[v] >= D)
            return dp_error_set(err, DP_EINVAL, "assignment: op %d (\"%s\") has device %d, outside 0..%d",
                                v, g->op_name[v], assignment[v], D - 1);
        for (int q = g->pred_ptr[v]; prefix && q < g->pred_ptr[v + 1]; q++) {
            int u = g->edge_src[g->pred_edge[q]];
            if (assignment[u] < 0)
                return dp_error_set(err, DP_EINVAL, "prefix assignment: op %d (\"%s\") is placed but its predecessor "
                                    "%d (\"%s\") is not", v, g->op_name[v], u, g->op_name[u]);
        }
    }
    if (s->o.queue == DP_QUEUE_PRIORITY && !priority)
        return dp_error_set(err, DP_EINVAL, "priority queues need a priority per op (the placement method gave none)");
    s->dev = assignment;
    s->prio = priority;
    s->err = err;
    s->failed = 0;
    dp_evheap_clear(&s->heap);
    s->fifo_head = s->fifo_tail = 0;
    s->now = s->makespan = 0;
    s->n_events = s->n_transfers = 0;
    s->volume = 0;
    s->req_counter = 0;
    s->pq_seq = 0;
    memset(s->arrived, 0, (size_t)n * sizeof(int));
    for (int v = 0; v < n; v++) {
        s->holders[v] = 0;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
            s->holders[v] += s->first_copy[e] && assignment[g->edge_dst[e]] >= 0;
        if (s->holders[v] == 0) s->holders[v] = -1;  /* a sink's output stays */
        s->start[v] = s->end[v] = s->ready[v] = -1;
        s->op_stream[v] = -1;
    }
    for (int e = 0; e < s->m; e++) s->x_req[e] = s->x_start[e] = s->x_end[e] = -1;
    for (int d = 0; d < D; d++) {
        s->qhead[d] = s->qtail[d] = -1;
        s->free_streams[d] = s->streams[d];
        s->stream_top[d] = s->streams[d];
        for (int k = 0; k < s->streams[d]; k++)
            s->stream_stack[(size_t)d * s->max_streams + k] = s->streams[d] - 1 - k;  /* stream 0 first */
        s->busy[d] = 0;
        s->mem_cur[d] = s->mem_peak[d] = 0;
        int ce = (s->t && s->o.copy_engines) ? s->t->dev[d].copy_engines : 0;
        s->out_free[d] = s->in_free[d] = ce > 0 ? ce : INT_MAX;
        if (s->itf) { s->k_in[d] = s->n_running[d] = 0; s->rate[d] = 1.0; }
    }
    s->n_busy_dev = 0;
    if (s->pq) {
        for (int d = 0; d <= D; d++) s->pq_off[d] = 0;
        for (int v = 0; v < n; v++)
            if (assignment[v] >= 0) s->pq_off[assignment[v] + 1]++;
        for (int d = 0; d < D; d++) { s->pq_off[d + 1] += s->pq_off[d]; s->pq_n[d] = 0; s->is_dirty[d] = 0; }
        s->n_dirty = 0;
    }
    if (s->ce_limited) {
        for (int p = 0; p < D * D; p++) s->pend_head[p] = s->pend_tail[p] = -1;
        for (int d = 0; d < D; d++) s->is_ce_dirty[d] = 0;
        s->n_ce_dirty = 0;
    }
    if (s->chan_bytes) memset(s->chan_bytes, 0, (size_t)s->t->n_channels * sizeof(double));
    s->cur_level = 0;
    if (s->o.mode == DP_MODE_BSP) {
        for (int l = 0; l < s->n_levels; l++) s->level_left[l] = 0;
        for (int v = 0; v < n; v++)
            if (assignment[v] >= 0) s->level_left[s->level[v]]++;
        for (int e = 0; e < s->m; e++)
            if (s->first_copy[e] && assignment[g->edge_dst[e]] >= 0 && assignment[g->edge_src[e]] != assignment[g->edge_dst[e]])
                s->level_left[s->level[g->edge_src[e]]]++;
    }
    dp_xfer_reset(s->x, s->o.trace);
    /* set-up at time 0: sources become ready in op order (level 0 in bulk-synchronous mode) */
    for (int i = 0; i < g->n_sources; i++)
        if (assignment[g->sources[i]] >= 0) fifo_push(s, EV_READY, (uint32_t)g->sources[i]);
    for (;;) {
        while (s->fifo_head < s->fifo_tail && !s->failed) dispatch(s, s->fifo[s->fifo_head++]);
        s->fifo_head = s->fifo_tail = 0;
        if (s->failed) break;
        double tm = s->contention ? dp_xfer_next_time(s->x) : INFINITY;
        double th = s->heap.n > 0 ? s->heap.a[0].t : INFINITY;
        double next = th < tm ? th : tm;
        /* the instant is over (nothing else happens now): priority queues grant; the grants'
         * events (zero-time ops included) make a new round of this instant */
        if (s->n_ce_dirty > 0 && !(next <= s->now)) { xfer_grant(s); continue; }
        if (s->n_dirty > 0 && !(next <= s->now)) { dispatch_dirty(s); continue; }
        if (next == INFINITY) break;
        s->now = next;
        /* every heap event of this instant, then the transfers the model ends now, then the FIFO */
        while (s->heap.n > 0 && s->heap.a[0].t == s->now) dispatch(s, dp_evheap_pop(&s->heap).ev);
        if (tm <= s->now) {
            const int *done;
            int k = dp_xfer_advance(s->x, s->now, &done);
            if (dp_xfer_failed(s->x)) fail(s, DP_ENOMEM, "out of memory in the transfer model");
            for (int i = 0; i < k; i++) xfer_done(s, done[i]);
        }
    }
    s->err = NULL;
    if (s->failed) return s->failed;
    for (int v = 0; v < n; v++)
        if (s->end[v] < 0 && assignment[v] >= 0)
            return dp_error_set(err, DP_EINVAL, "simulation ended with op %d (\"%s\") never run (internal error)", v, g->op_name[v]);
    s->mem_excess = 0;
    for (int d = 0; d < D; d++)
        if (s->mem_cap[d] > 0 && s->mem_peak[d] > s->mem_cap[d]) {
            double x = (s->mem_peak[d] - s->mem_cap[d]) / s->mem_cap[d];
            if (x > s->mem_excess) s->mem_excess = x;
        }
    res->makespan = s->makespan;
    res->n_devices = D;
    res->busy = s->busy;
    res->n_transfers = s->n_transfers;
    res->transfer_volume = s->volume;
    res->op_start = s->start;
    res->op_end = s->end;
    res->op_ready = s->ready;
    res->op_stream = s->op_stream;
    res->xfer_request = s->x_req;
    res->xfer_start = s->x_start;
    res->xfer_end = s->x_end;
    res->mem_peak = s->mem_peak;
    res->mem_capacity = s->mem_cap;
    res->mem_excess = s->mem_excess;
    res->penalised_makespan = s->makespan * (1 + s->o.memory_penalty * s->mem_excess);
    res->chan_bytes = s->chan_bytes;
    res->n_events = s->n_events + dp_xfer_events(s->x);
    return DP_OK;
}

int dp_hisim_run(dp_hisim *s, const int *assignment, const double *priority, dp_hisim_result *res, dp_error *err)
{
    return run(s, assignment, priority, 0, res, err);
}

int dp_hisim_run_prefix(dp_hisim *s, const int *assignment, const double *priority, dp_hisim_result *res,
                        dp_error *err)
{
    return run(s, assignment, priority, 1, res, err);
}

/* ---------------- Chrome trace ---------------- */

static void route_text(const dp_topology *t, int a, int b, char *buf, size_t cap)
{
    const dp_topo_route *r = dp_topology_route(t, a, b);
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
    json_t *root = json_object();
    json_t *evs = json_array();
    json_object_set_new(root, "displayTimeUnit", json_string("ms"));
    json_t *meta = json_object();
    json_object_set_new(meta, "graph", json_string(g->name));
    json_object_set_new(meta, "time_unit", json_string(g->time_unit));
    json_object_set_new(meta, "transfer_model", json_string(dp_xfer_kind_name(s->o.transfer_model)));
    json_object_set_new(meta, "mode", json_string(s->o.mode == DP_MODE_BSP ? "bsp" : "async"));
    if (s->t) json_object_set_new(meta, "topology", json_string(s->t->name));
    json_object_set_new(meta, "note", json_string("trace times are microseconds of the printed unit; op args in the printed unit"));
    json_object_set_new(root, "otherData", meta);
    char nm[512];
    for (int d = 0; d < s->D; d++)
        for (int k = 0; k < s->streams[d]; k++) {
            if (s->t) snprintf(nm, sizeof nm, "%s stream %d", s->t->dev[d].name, k);
            else snprintf(nm, sizeof nm, "device %d stream %d", d, k);
            json_array_append_new(evs, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name", "ph", "M", "pid", 0,
                                                 "tid", d * s->max_streams + k, "args", "name", nm));
        }
    for (int v = 0; v < g->n_ops; v++) {
        double inputs_done = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int u = g->edge_src[g->pred_edge[q]];
            if (s->end[u] > inputs_done) inputs_done = s->end[u];
        }
        json_t *x = json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:{s:f,s:f,s:f}}", "name", g->op_name[v], "cat", g->op_kind[v],
                              "ph", "X", "pid", 0, "tid", assignment[v] * s->max_streams + s->op_stream[v],
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
        double flow0 = dp_xfer_flow_start(s->x, e);
        double moving = s->x_end[e] - (flow0 >= 0 ? flow0 : s->x_start[e]);
        json_t *args = json_pack("{s:s,s:f,s:f,s:f}", "route", nm, "queued_for_copy_engines", (s->x_start[e] - s->x_req[e]) / sc,
                                 "bytes", s->c->edge_data[e], "duration", (s->x_end[e] - s->x_start[e]) / sc);
        if (g->cost_kind == DP_COST_PHYSICAL && moving > 0)
            json_object_set_new(args, "mean_rate_Bps", dp_json_number(s->c->edge_data[e] / moving));
        char label[64];
        snprintf(label, sizeof label, "%s->%s", s->t ? s->t->dev[a].name : "", s->t ? s->t->dev[b].name : "");
        json_array_append_new(evs, json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:f,s:o}", "name", label, "cat", "transfer", "ph", "b",
                                             "id", e, "pid", 1, "tid", a, "ts", s->x_start[e] * us, "args", args));
        json_array_append_new(evs, json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:f}", "name", label, "cat", "transfer", "ph", "e",
                                             "id", e, "pid", 1, "tid", a, "ts", s->x_end[e] * us));
    }
    int nlog;
    const dp_xfer_rate *rl = dp_xfer_rate_log(s->x, &nlog);
    for (int i = 0; i < nlog && s->t; i++) {
        const dp_topology *t = s->t;
        int k = rl[i].klass;
        snprintf(nm, sizeof nm, "per-flow rate %s..%s (class %d)", t->node_name[t->class_from[k]], t->node_name[t->class_to[k]], k);
        json_array_append_new(evs, json_pack("{s:s,s:s,s:i,s:f,s:{s:f,s:i}}", "name", nm, "ph", "C", "pid", 1, "ts", rl[i].t * us,
                                             "args", "Bps", rl[i].rate_Bps, "flows", rl[i].n_flows));
    }
    const dp_xfer_busy *bl = dp_xfer_busy_log(s->x, &nlog);
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
