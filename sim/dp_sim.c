/* dp_sim.c: the DOPPLER-compatible event engine (see dp_sim.h for the event order). */
#include "dp_sim.h"
#include "dp_alloc.h"
#include "dp_heap.h"
#include "dp_json.h"
#include "dp_sim_shared.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* updates of the devices' work (dev_work) past n after which it is summed again (ops_tables_sync) */
#define WORK_RESUM 1024

enum ev_kind {
    EV_TRANSFER_DONE, /* id = edge */
    EV_EDGE_ARRIVED,  /* id = edge */
    EV_READY,         /* id = op */
    EV_GRANTED,       /* id = op */
    EV_COMPUTE_DONE,  /* id = op */
    EV_RELEASE_FINISH /* id = op: its device's RELEASE, then its FINISH (below) */
};

#define EV_SHIFT 28
#define EV_ID_MASK ((1u << EV_SHIFT) - 1)

/* Convergence of delta runs on or off (converge 2, dp_sim_run_delta): of every period of delta
 * runs, the first CONV_PROBE may converge, the next CONV_PROBE may not, and the rest may when
 * the first processed fewer than CONV_GAIN times the events of the next. A run that may converge
 * costs more an event (its bookkeeping, the checks, the commit: a seventh more an event on
 * ChainMM, a third on Llama-layer, cachegrind of annealing, issue 31), so it pays only when it
 * saves more events than that. The period is CONV_PERIOD, and doubles, up to CONV_PERIOD_MAX,
 * after each choice of off that follows another, so that the probes cost little where
 * convergence does not pay. Either way the costs and decisions are the same; only the time
 * differs.
 * Off by default: on this project's 2-core host, convergence cuts the instructions of an
 * annealing move (cachegrind, mode 2: Llama-layer -8%, 8-GPU layer -22%) but not its time (CPU
 * seconds of annealing at budget 1e5, one binary, the mode chosen at run time: 5 to 10% more),
 * so the events' proxy above does not measure what it costs there (EXPERIMENTS.md, issue 31). */
#define CONV_PERIOD 4096
#define CONV_PERIOD_MAX 65536
#define CONV_PROBE 128
#define CONV_GAIN 0.75

/* ---- the event queue: the events in the future, by (time, sequence number) ----
 * The order is strict and total (no two events share a sequence number), so every priority queue
 * pops the same events in the same order; this one is chosen for the queues the engine sees, a
 * few events (a mean of 3 to 10 on DOPPLER's graphs, at most 29 in annealing: issue 31). While it
 * holds at most EVQ_SORTED_MAX events it is a sorted array a[lo..hi): a pop is lo++, a push an
 * insertion from the end, where a new event (at now plus a duration) usually belongs. The binary
 * heap (dp_heap.h) cost three times the instructions on these sizes (cachegrind of bench_sim).
 * Past EVQ_SORTED_MAX, a queue of thousands of transfers would make insertion O(n): the array,
 * sorted and so already in heap order, becomes dp_heap's heap (O(log n)), until a pop leaves
 * EVQ_UNHEAP_MAX events or fewer and evq_unheap sorts them back into the array (a heap to the end
 * of the run kept convergence, which reads the queues in order, from ever passing: c3ce8d5).
 * The engine keeps two such queues, COMPUTE_DONE events (at most one a device) and TRANSFER_DONE
 * events, and pops the earlier of their first events: a new op's end, soon, no longer has to be
 * inserted past the transfers still in flight (annealing 3 to 8% faster, bench_sim about even).
 * The sorted array starts at index 1: a[lo - 1] is a sentinel at minus infinity (a[0]) or the
 * last event popped, and no event pushed is ever before either (it is at now or later, with a
 * sequence number above every one given before it, the resumed incumbent's included), so the
 * insertion loop needs no bound check (issue 31: a tenth fewer instructions an annealing move
 * on ChainMM, whose transfer queue is long). Capacity: every op's COMPUTE_DONE and every edge's
 * TRANSFER_DONE is pushed at most once a run (the op-order run's queues: an op's COMPUTE_DONE
 * and its READY), so hi <= ops + 1 < the compute queue's cap and hi <= edges + 1 < the transfer
 * queue's (an unheap leaves hi at the events left + 1, no more than before), and a pop need not
 * return lo and hi to 1 when the queue empties (the test was a mispredicted branch a pop: the
 * op-order run 3% faster, issue 31). a[hi].t is always EVQ_END_T (the arrays have cap + 1 slots), so
 * the op-order run reads its queues' first times with no test for an empty queue (issue 31: 6%
 * fewer instructions an annealing move on Llama-block, 4 to 9% more moves a second). */
#define EVQ_SORTED_MAX 32

typedef struct evq {
    dp_heap_ev *a;      /* (cap) storage */
    int lo, hi, cap;    /* the events are a[lo..hi) */
    int heaped;         /* 0: sorted ascending, lo >= 1, a[0] the sentinel; 1: lo == 0 and a[0..hi)
                           is in dp_heap's heap order */
} evq;

/* the time of the slot after the last event (a[hi].t, both forms): plus infinity, so that the
 * first event's time, read without a test for an empty queue, is infinite when there is none
 * (the op-order run's loop; nothing reads the slot's other fields, so only its time is written) */
#define EVQ_END_T INFINITY

static inline void evq_clear(evq *q)
{
    q->lo = q->hi = 1;
    q->heaped = 0;
    q->a[0] = (dp_heap_ev){.t = -INFINITY, .seq = 0, .ev = 0};
    q->a[1].t = EVQ_END_T;
}

static inline __attribute__((always_inline)) void evq_push(evq *q, double t, uint64_t seq, uint32_t ev)
{
    dp_heap_ev x = {.t = t, .seq = seq, .ev = ev};
    assert(q->hi < q->cap);
    if (q->heaped || q->hi - q->lo >= EVQ_SORTED_MAX) {
        if (!q->heaped) {
            memmove(q->a, q->a + q->lo, (size_t)(q->hi - q->lo) * sizeof *q->a);
            q->hi -= q->lo;
            q->lo = 0;
            q->heaped = 1;
        }
        /* through a copy of hi: q's address stays unescaped (a local queue stays in registers) */
        int hi = q->hi;
        dp_heap_evq_raw_push(NULL, q->a, &hi, x);
        q->hi = hi;
        q->a[hi].t = EVQ_END_T;
        return;
    }
    int i = q->hi++;
    q->a[i + 1].t = EVQ_END_T;
    while (DP_HEAP_EV_BEFORE(NULL, x, q->a[i - 1])) { /* stops at a[lo - 1] at the latest */
        q->a[i] = q->a[i - 1];
        i--;
    }
    q->a[i] = x;
}

/* the queue of the two, computes c and transfers x, whose first event is the earlier; NULL when
 * both are empty */
static inline evq *evq_first(evq *c, evq *x)
{
    if (c->lo == c->hi) return x->lo == x->hi ? NULL : x;
    if (x->lo == x->hi) return c;
    return DP_HEAP_EV_BEFORE(NULL, x->a[x->lo], c->a[c->lo]) ? x : c;
}

/* a heaped queue that has shrunk to EVQ_UNHEAP_MAX events or fewer is sorted again (a heap stays
 * one to the end of the run otherwise; the order of the events is their keys' either way) */
#define EVQ_UNHEAP_MAX 16

/* q's events (a[0..hi), heap order, at most EVQ_UNHEAP_MAX) put back in the sorted form: the
 * queue cleared (evq_clear: the sentinel) and each event pushed again (evq_push's sorted
 * insertion) */
static __attribute__((noinline)) void evq_unheap(evq *q)
{
    dp_heap_ev x[EVQ_UNHEAP_MAX];
    const int n = q->hi;
    assert(n <= EVQ_UNHEAP_MAX);
    memcpy(x, q->a, (size_t)n * sizeof *x);
    evq_clear(q);
    for (int i = 0; i < n; i++) evq_push(q, x[i].t, x[i].seq, x[i].ev);
}

/* the earliest event, removed; the queue is not empty */
static inline uint32_t evq_pop(evq *q)
{
    if (q->heaped) {
        int hi = q->hi; /* evq_push */
        const uint32_t ev = dp_heap_evq_raw_pop(NULL, q->a, &hi).ev;
        q->hi = hi;
        q->a[hi].t = EVQ_END_T;
        if (hi <= EVQ_UNHEAP_MAX) evq_unheap(q);
        return ev;
    }
    return q->a[q->lo++].ev;
}

/* an edge as the op-order run reads it, its fields side by side (one array instead of three in
 * the loop's hottest lines: fewer live pointers, fewer spills; issue 31): its transfer time in
 * the tables' assignment (ops_tables_sync), and its consumer. An edge that is not the first copy
 * of its (producer, consumer) pair (first_copy) has time 0 and the consumer n, a slot no op
 * has, whose count of pending copies never reaches 0 (OPS_NO_OP_PENDING): the run's loop sends
 * it as any copy, and it changes nothing (a test of first_copy a copy in the loop cost 3
 * instructions a copy, 1.4% of an annealing move on Llama-block) */
typedef struct ops_edge {
    double delay;
    int dst;
} ops_edge;

/* the pending copies of the slot n (ops_edge) at a run's start: more than the edges */
#define OPS_NO_OP_PENDING INT_MAX

struct dp_sim {
    const dp_graph *g;
    const dp_cost *c;
    int n, m, D;
    dp_alloc_table owned;  /* every array below */
    /* per edge: 1 when it is the first copy of its (src, dst) pair */
    unsigned char *first_copy;
    /* run state */
    const int *dev;
    evq qc, qx;        /* events in the future, COMPUTE_DONE and TRANSFER_DONE; ev = kind << EV_SHIFT | id */
    uint64_t seq;      /* the next sequence number of an event */
    uint64_t seq_base; /* the first number of the last run (0, or the state's it resumed from) */
    uint32_t *fifo;
    int fifo_head, fifo_tail, fifo_cap;
    int *arrived;
    int *qhead, *qtail, *qnext;
    unsigned char *busy_flag;
    double *busy, *start, *end, *ready;
    /* where each op's events fell in the event order (dp_sim_prefix): the sequence number of
     * its COMPUTE_DONE, the first of the block its FINISH numbers its copies from (copy of edge
     * e = that + e - succ_ptr[u]: a consumer placed later finds its copy's place), its READY */
    uint64_t *seq_done, *seq_fin, *seq_ready;
    uint64_t fin_base;  /* seq_fin of the op whose outputs are being sent */
    int *fut;           /* (n + 1) scratch of a resumed run: the ops it simulates again */
    int *kept, n_kept;  /* (n + 1) its ops running or queued at its instant, by device, then in
                           queue order (the order of its devices' lists) */
    int *rorder, n_rorder; /* (n + 1) the ops made ready by the last run, in the order of their READY */
    int *cut;           /* (D) a resumed run's first index of each device's list it simulates again */
    unsigned char *moved; /* (n) 1 for the ops a resumed run places anew (cleared after it) */
    int *moved_ops;     /* (n) a delta run's moved ops */
    int *moved_dev, delta_n_moved; /* (n) their devices in the last delta run, and how many: its
                                      commit checks that it is given that assignment */
    /* the last delta run (dp_sim_run_delta), which dp_sim_delta_commit makes p's: its prefix
     * state (NULL when the last run was no complete delta run), how many ops it simulated
     * (fut[0..delta_k)) */
    const dp_sim_prefix *delta_p;
    int delta_k;
    int delta_events; /* the last delta run of an op-order incumbent went through the event loop */
    /* convergence (dp_sim.h, "delta simulation"): a delta run within its bound stops at the end
     * of an instant at which its state is conv_p's (NULL: never), its ops fut[0..n_fut) and its
     * moved ops moved_ops[0..n_moved); conv_at: the instant it stopped at (INFINITY: it ran to
     * the end); converge: 0 turns it off (dp_sim_set_converge, for tests). dev_cnt, dev_tail:
     * (D) scratch of the commit */
    const dp_sim_prefix *conv_p;
    int n_fut, n_moved, converge;
    /* a prefix addition's run (dp_sim_prefix_add) that may converge: the op it adds (not in
     * conv_p, whose entries for it are stale), -1 in a delta run; converge_prefix: whether a
     * commit's run may converge (dp_sim_set_converge_prefix) */
    int conv_added, converge_prefix;
    /* converge 2: on or off by what it saves (dp_sim_run_delta): the delta run's
     * place in the present period, the period, the events of the probes with it on ([1]) and
     * off ([0]), the choice */
    long conv_phase, conv_period;
    double conv_events[2];
    int conv_choice, conv_last;
    double conv_at;
    int *dev_cnt, *dev_tail;
    /* (n), (m): 1 for an op's COMPUTE_DONE, an edge's TRANSFER_DONE in the queues that is not
     * p's (another time, or not created when p's was); n_diff: how many are in the queues. The
     * check of convergence runs only when none is (loop()) */
    unsigned char *cdiff, *xdiff;
    int n_diff;
    /* (n) of each op not ready when a run that may converge resumed: the inputs that had
     * arrived then (arr_at) and a lower bound on p's next arrival of an input (arr_next): while
     * the clock is below it, p's count is arr_at, and converged() compares without a walk over
     * the op's inputs */
    double *arr_next;
    int *arr_at;
    /* lazy set-up of a resumed prefix run (dp_sim_prefix_add; resume()): lz_p, the prefix it
     * resumed from (NULL: every op set up at once), lz_t the instant. An op not ready then is
     * set up (its inputs arrived before lz_t counted) when the first of its inputs reaches it
     * in the run (lazy_setup), so that a run that stops early (a probe, a commit that
     * converges) does not walk the inputs of every op ending after lz_t. touch[x] ==
     * touch_stamp: x set up in this run; touched[0..n_touched): those ops. The copies in
     * flight at lz_t are found from their producers: ops ending in [lz_t - max_delay, lz_t),
     * max_delay bounding every transfer (from the cost tables at dp_sim_alloc) */
    const dp_sim_prefix *lz_p;
    double lz_t, max_delay;
    double *out_delay; /* (n) a bound on every copy's transfer time from each op (its edges' data,
                          the largest latency and inverse bandwidth; INFINITY as max_delay) */
    uint32_t *touch, touch_stamp;
    int *touched, n_touched;
    /* a probe (dp_sim_prefix_add, commit 0) wants one op's start alone: the loop stops at the
     * end of the instant op stop_op starts at (stopped set), since no later event changes its
     * start or READY; -1: run to the end */
    int stop_op, stopped;
    /* 1 (the default): events that are next in the event order run at once, with no FIFO
     * entry (loop()); 0: every event through the FIFO (dp_sim_set_direct, for tests) */
    int direct;
    double now, makespan;
    long n_events, n_transfers;
    double volume;
    /* a bounded run (dp_sim_run_bounded): the loop stops before the clock passes bound, and
     * exceeded is the time it would have moved to, and over_bound 1; over_bound 0 otherwise (a
     * flag, not an INFINITY sentinel: an event at an infinite time is past any finite bound) */
    double bound, exceeded;
    int over_bound;
    /* the op-order run (run_ops, below): its queues of COMPUTE_DONEs and delayed READYs, each
     * op's READY order key (n); the events of a complete run (5 an op, 2 a first copy); ops_on:
     * 0 turns the op-order run off (dp_sim_set_op_order, for tests and benchmarks) */
    evq oq_done, oq_ready;
    uint64_t *rkey;
    /* the op-order run's per-assignment tables (ops_tables_sync): the assignment they hold
     * (tdev, n; -1 before the first run), each op's time on its device (otime, n) and each
     * edge's transfer time between its ops' devices (oedge[e].delay, m: 0 on one device or where
     * the time is not positive, as the run treats those copies); tables_set: 0 until the
     * first sync, which takes every op; sync_ops (n): the ops a sync changes */
    int *tdev, *sync_ops, tables_set;
    /* tables_gen: the syncs that changed or set the tables so far (dp_sim_tables_gen);
     * tables_last: 1 when they hold the last run's assignment (0 from the start of a run to its
     * sync, and after a run that has none: the event loop, a prefix); hint,
     * hint_k: during dp_sim_run_bounded_changed, the ops at which its assignment may differ
     * from tdev (hint_k -1: none, the sync scans the whole assignment) */
    long tables_gen;
    int tables_last;
    const int *hint;
    int hint_k;
    double *otime;
    ops_edge *oedge;
    /* early rejection (dp_sim_set_early_reject): a bounded op-order run stops once a device's
     * granted op ends so late that the device's work left after it ends past the bound.
     * dev_work (D): each device's work (seconds) in tdev's assignment, kept by update_op (a
     * moved op's time taken from its old device's sum and added to its new one's) and summed
     * again in op order (work_resum) after n + WORK_RESUM updates, or as soon as a device's sum
     * falls below a quarter of the largest it held since (dev_peak, D) or is not finite. Each
     * update's rounding is at most half an ulp of the sum it leaves, so below DBL_EPSILON of
     * dev_peak, at most 4 DBL_EPSILON of the present sum (a sum that held a huge op's time and
     * lost it would otherwise keep that op's rounding: review of f2d50a5). dev_rest (D): each
     * device's work not granted when the run began, so that dev_rest[d] - busy[d] is what it has
     * left; lb_scale: 1 less the relative rounding such sums may carry */
    double *dev_work, *dev_peak, *dev_rest, lb_scale;
    /* (n + 1) -INFINITY in every slot: an op-order run's ready at its start, copied (the fill
     * loop, not vectorised at -O2, took 385 instructions of an annealing move on Llama-block; the
     * copy 89 fewer, cachegrind) */
    double *ready_init;
    long work_updates;
    int work_resum;
    int early_reject;
    int *pending; /* (n) the op-order run's count of each op's producers whose copies are still to
                     arrive (first copies: n_unique_pred at time 0) */
    long full_events, n_op_order;
    int ops_on; /* also 0 when an op's time is 0 or less on some device (dp_sim_alloc) */
};

/* whether every op's time is positive on every device: the op-order run needs it (an op of time
 * 0 would make it fall back after part of a run, every run) */
static int times_positive(const dp_cost *c)
{
    for (size_t k = 0; k < (size_t)c->n_ops * (size_t)c->n_devices; k++)
        if (!(c->op_time[k] > 0)) return 0;
    return 1;
}

dp_sim *dp_sim_alloc(const dp_graph *g, const dp_cost *c, dp_error *err)
{
    if (c->n_ops != g->n_ops || c->n_edges != g->n_edges) {
        dp_error_set(err, DP_EINVAL, "%s: cost tables do not match the graph", g->source);
        return NULL;
    }
    dp_sim *s = dp_alloc_calloc(1, sizeof *s);
    if (s) {
        s->bound = INFINITY;
        s->stop_op = -1;
        s->hint_k = -1;
        s->direct = 1;
        s->converge = 0; /* off: fewer instructions, more time on this project's host (below) */
        s->conv_period = CONV_PERIOD;
        s->conv_last = 1; /* the first choice of off does not lengthen the period */
        s->conv_at = INFINITY;
        s->conv_added = -1;
        s->converge_prefix = 1;
        s->early_reject = 1;
        }
    if (!s) goto nomem;
    s->g = g;
    s->c = c;
    s->n = g->n_ops;
    s->m = g->n_edges;
    s->D = c->n_devices;
    if (s->n >= (int)EV_ID_MASK || s->m >= (int)EV_ID_MASK) {
        free(s);
        dp_error_set(err, DP_ENOMEM, "%s: graph too large for the simulator", g->source);
        return NULL;
    }
    /* every event kind happens at most once per op/edge (release: once per op finish) */
    dp_alloc_table *t = &s->owned;
    s->fifo_cap = 2 * s->m + 5 * s->n + 1;
    s->qc.cap = s->n + 2;
    s->qx.cap = s->m + 2;
    DP_ALLOC(t, s->first_copy, (size_t)s->m + 1, 1);
    DP_ALLOC(t, s->qc.a, (size_t)s->qc.cap + 1, sizeof(dp_heap_ev)); /* + 1: a[hi], EVQ_END_T */
    DP_ALLOC(t, s->qx.a, (size_t)s->qx.cap + 1, sizeof(dp_heap_ev));
    DP_ALLOC(t, s->fifo, (size_t)s->fifo_cap, sizeof(uint32_t));
    DP_ALLOC(t, s->arrived, (size_t)s->n, sizeof(int));
    DP_ALLOC(t, s->qhead, (size_t)s->D, sizeof(int));
    DP_ALLOC(t, s->qtail, (size_t)s->D, sizeof(int));
    DP_ALLOC(t, s->qnext, (size_t)s->n, sizeof(int));
    DP_ALLOC(t, s->busy_flag, (size_t)s->D, 1);
    DP_ALLOC(t, s->busy, (size_t)s->D, sizeof(double));
    DP_ALLOC(t, s->start, (size_t)s->n, sizeof(double));
    DP_ALLOC(t, s->end, (size_t)s->n, sizeof(double));
    DP_ALLOC(t, s->ready, (size_t)s->n + 1, sizeof(double)); /* + 1: the op-order run's slot n (ops_edge) */
    DP_ALLOC(t, s->seq_done, (size_t)s->n, sizeof(uint64_t));
    DP_ALLOC(t, s->seq_fin, (size_t)s->n, sizeof(uint64_t));
    DP_ALLOC(t, s->seq_ready, (size_t)s->n, sizeof(uint64_t));
    DP_ALLOC(t, s->fut, (size_t)s->n + 1, sizeof(int));
    DP_ALLOC(t, s->kept, (size_t)s->n + 1, sizeof(int));
    DP_ALLOC(t, s->rorder, (size_t)s->n + 1, sizeof(int));
    DP_ALLOC(t, s->cut, (size_t)s->D, sizeof(int));
    DP_ALLOC(t, s->dev_cnt, (size_t)s->D, sizeof(int));
    DP_ALLOC(t, s->dev_tail, (size_t)s->D, sizeof(int));
    DP_ALLOC(t, s->cdiff, (size_t)s->n + 1, 1);
    DP_ALLOC(t, s->arr_next, (size_t)s->n + 1, sizeof(double));
    DP_ALLOC(t, s->arr_at, (size_t)s->n + 1, sizeof(int));
    DP_ALLOC_ZERO(t, s->touch, (size_t)s->n + 1, sizeof(uint32_t));
    DP_ALLOC(t, s->touched, (size_t)s->n + 1, sizeof(int));
    DP_ALLOC(t, s->xdiff, (size_t)s->m + 1, 1);
    DP_ALLOC_ZERO(t, s->moved, (size_t)s->n + 1, 1);
    DP_ALLOC(t, s->moved_ops, (size_t)s->n + 1, sizeof(int));
    DP_ALLOC(t, s->moved_dev, (size_t)s->n + 1, sizeof(int));
    s->oq_done.cap = s->oq_ready.cap = s->n + 2;
    DP_ALLOC(t, s->oq_done.a, (size_t)s->oq_done.cap + 1, sizeof(dp_heap_ev));
    DP_ALLOC(t, s->oq_ready.a, (size_t)s->oq_ready.cap + 1, sizeof(dp_heap_ev));
    DP_ALLOC(t, s->rkey, (size_t)s->n + 1, sizeof(uint64_t));
    DP_ALLOC(t, s->out_delay, (size_t)s->n + 1, sizeof(double));
    DP_ALLOC(t, s->tdev, (size_t)s->n + 1, sizeof(int));
    DP_ALLOC(t, s->sync_ops, (size_t)s->n + 1, sizeof(int));
    DP_ALLOC(t, s->otime, (size_t)s->n + 1, sizeof(double));
    DP_ALLOC(t, s->oedge, (size_t)s->m + 1, sizeof(ops_edge));
    DP_ALLOC(t, s->pending, (size_t)s->n + 1, sizeof(int));
    DP_ALLOC_ZERO(t, s->dev_work, (size_t)s->D + 1, sizeof(double));
    DP_ALLOC_ZERO(t, s->dev_peak, (size_t)s->D + 1, sizeof(double));
    DP_ALLOC(t, s->dev_rest, (size_t)s->D + 1, sizeof(double));
    DP_ALLOC(t, s->ready_init, (size_t)s->n + 1, sizeof(double));
    if (t->failed) goto nomem;
    for (int v = 0; v <= s->n; v++) s->ready_init[v] = -INFINITY;
    /* a device's work left, dev_rest - busy, is a difference of two sums of op times in floating
     * point: dev_work's, within (n + 4 (n + WORK_RESUM)) DBL_EPSILON of its exact sum (summed in
     * op order, then at most n + WORK_RESUM updates each within 4 DBL_EPSILON of it, above), and
     * the run's busy sum, below the op's end; a device's last op ends at a sum of at most n op
     * times. So 1e-9 more than 8 (n + WORK_RESUM) DBL_EPSILON keeps the bound at or below the
     * makespan */
    s->lb_scale = dp_sim_lb_scale((double)s->n + WORK_RESUM);
    for (int v = 0; v < s->n; v++) s->tdev[v] = -1;
    s->full_events = 5L * s->n;
    for (int u = 0; u < s->n; u++)
        for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
            s->first_copy[e] = (e == g->succ_ptr[u] || g->edge_dst[e - 1] != g->edge_dst[e]);
            s->full_events += 2 * s->first_copy[e];
            s->oedge[e] = (ops_edge){.delay = 0, .dst = s->first_copy[e] ? g->edge_dst[e] : s->n};
        }
    /* a bound on every transfer's time, latency + data / bandwidth (dp_cost_comm; a bound in
     * floating point too: rounding is monotone); NaN or negative tables give an infinite
     * bound, with which the lazy set-up looks at every producer */
    double lat = 0, ibw = 0, data = 0;
    for (int k = 0; k < s->D * s->D; k++) {
        if (!(c->latency[k] >= lat)) lat = c->latency[k] >= 0 ? lat : INFINITY;
        else lat = c->latency[k];
        if (!(c->inv_bw[k] >= ibw)) ibw = c->inv_bw[k] >= 0 ? ibw : INFINITY;
        else ibw = c->inv_bw[k];
    }
    for (int e = 0; e < s->m; e++) {
        if (!(c->edge_data[e] >= data)) data = c->edge_data[e] >= 0 ? data : INFINITY;
        else data = c->edge_data[e];
    }
    s->max_delay = lat + data * ibw;
    if (!(s->max_delay >= 0)) s->max_delay = INFINITY;
    for (int u = 0; u < s->n; u++) {
        double du = 0;
        for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
            const double x = c->edge_data[e] >= 0 ? lat + c->edge_data[e] * ibw : INFINITY;
            if (!(x <= du)) du = x >= 0 ? x : INFINITY;
        }
        s->out_delay[u] = du;
    }
    s->ops_on = times_positive(c);
    return s;
nomem:
    dp_sim_free(s);
    dp_error_set(err, DP_ENOMEM, "%s: out of memory for the simulator", g->source);
    return NULL;
}

void dp_sim_free(dp_sim *s)
{
    if (!s) return;
    dp_alloc_table_free(&s->owned);
    free(s);
}

/* an event of the set-up (the sources' READY at time 0), before the loop */
/* every device free with an empty queue and no compute time: the state of a run at time 0 */
static inline void devices_clear(dp_sim *s)
{
    for (int d = 0; d < s->D; d++) {
        s->qhead[d] = s->qtail[d] = -1;
        s->busy_flag[d] = 0;
        s->busy[d] = 0;
    }
}

/* x joins the tail of device d's queue (the heads, tails and links given: the op-order run's loop
 * passes its copies of s's pointers, ops_run) */
static inline __attribute__((always_inline)) void queue_append_to(int *qhead, int *qtail, int *qnext, int d, int x)
{
    qnext[x] = -1;
    if (qtail[d] < 0) qhead[d] = x;
    else qnext[qtail[d]] = x;
    qtail[d] = x;
}

static inline void queue_append(dp_sim *s, int d, int x)
{
    queue_append_to(s->qhead, s->qtail, s->qnext, d, x);
}

static inline void fifo_push(dp_sim *s, uint32_t kind, uint32_t id)
{
    assert(s->fifo_tail < s->fifo_cap);
    s->fifo[s->fifo_tail++] = kind << EV_SHIFT | id;
}

/* ---- the event loop ----
 * The loop's working state is a local copy, L, of the simulator's: the arrays it indexes and
 * the scalars it updates at every event (the FIFO's tail, the heap's size and next sequence
 * number, the clock, the counters). A local whose address never escapes cannot be aliased by
 * the stores to the arrays, so the compiler keeps the scalars in registers instead of storing
 * and reloading them through s at every event, which was about a third of the instructions of
 * a simulation (cachegrind, issue 31). loop() copies the state in, runs, and copies it back. */
typedef struct loop_state {
    const int *dev, *succ_ptr, *edge_dst, *n_unique_pred;
    const unsigned char *first_copy;
    const double *op_time, *edge_data, *latency, *inv_bw;
    int D;
    int *arrived, *qhead, *qtail, *qnext, *rorder;
    unsigned char *busy_flag;
    double *busy, *start, *end, *ready;
    uint64_t *seq_done, *seq_fin, *seq_ready;
    uint32_t *fifo;
    evq qc, qx;
    int tail, n_rorder;
    uint64_t seq;      /* the heap's next sequence number */
    uint64_t fin_base; /* seq_fin of the op whose outputs are being sent, */
    int fin_first;     /* and its first out-edge */
    double now, makespan;
    long n_events;
    int stop_op, stopped; /* dp_sim's: a probe's run stops after the instant op stop_op starts */
    /* a run that may converge (dp_sim's conv_p, else NULL): p's devices, starts and ends; the
     * flags of the events in the queues that are not p's, and their number (dp_sim's) */
    const int *cp_dev;
    const double *cp_start, *cp_end;
    unsigned char *cdiff, *xdiff;
    int n_diff;
    int fin_same; /* the op whose outputs are being sent ended now on its device in p too */
    /* a lazily set-up run (dp_sim's lz_p not NULL): its stamp and the ops' (dp_sim's) */
    int lazy;
    uint32_t stamp;
    const uint32_t *touch;
} loop_state;

static inline void push_fifo(loop_state *L, uint32_t kind, uint32_t id)
{
    L->fifo[L->tail++] = kind << EV_SHIFT | id;
}

/* ---- events run at once (issue 31) ----
 * Most events are one of a chain: a transfer's end, its arrival, the consumer's READY, its
 * GRANTED (5 events an op and 2 an edge; about half of them are pushed into a FIFO that holds
 * nothing behind the event being processed, on DOPPLER's graphs). An event pushed by its
 * handler's last action while the FIFO holds nothing behind the event being processed (and,
 * for an event from the heap, while no other heap event is at the same instant) is the very
 * next event the loop would pop: it is run at once instead, its handler called from its
 * pusher's, with no FIFO entry and no dispatch through the switch. Same events, same order, same
 * sequence numbers, same count: each handler run at once adds the one event it is to n_events.
 *
 * head: the FIFO's head while the pushing event is processed (the index past its entry), so the
 * FIFO holds nothing behind it while head == L->tail; events from the heap pass 0 when they are
 * the last heap event of their instant (the FIFO is empty until a heap event pushes, and nothing
 * pushed means tail 0), -1 otherwise (never at once). A handler that pushes more after an event
 * (a RELEASE, whose FINISH follows; a FINISH's copies) never runs that event at once. */
static inline int fifo_idle(const loop_state *L, int head)
{
    return head == L->tail;
}

/* ---- handlers, named after what happens ---- */

static inline __attribute__((always_inline)) void op_start(loop_state *L, int v, const int conv);

/* d's queue head is granted d; its GRANTED runs at once when it is next (head: above) */
static inline __attribute__((always_inline)) void grant_head(loop_state *L, int d, int head, const int conv)
{
    int v = L->qhead[d];
    assert(!L->busy_flag[d]);   /* one op at a time on a device: no overlap */
    L->qhead[d] = L->qnext[v];
    if (L->qhead[d] < 0) L->qtail[d] = -1;
    L->busy_flag[d] = 1;
    if (fifo_idle(L, head)) {
        L->n_events++;
        op_start(L, v, conv);
    } else {
        push_fifo(L, EV_GRANTED, (uint32_t)v);
    }
}

/* a copy of an output: a transfer of comm to another device, at once to the same device. A
 * transfer's sequence number is its place in the block of its producer's FINISH (fin_base): the
 * order of scheduling, as numbering pushes one by one gives, and one a consumer placed later
 * can be given when a run resumes (dp_sim_prefix_add). */
static inline __attribute__((always_inline)) void send_output_body(loop_state *L, int e, int du, int dv, const int conv)
{
    /* a repeated edge's later copies move data (transfer_totals counts them) but change
     * nothing: the consumer waits for the first (edge_arrived). They are no events, so that every
     * instant the clock visits is an op's (a bounded run stops at most at the makespan) and a
     * resumed run, which rebuilds only the first copies in flight, visits the instants a full
     * run visits. */
    if (!L->first_copy[e]) return;
    double delay = 0;
    if (dv != du) {
        /* dp_cost_comm, from the tables L holds */
        const size_t k = (size_t)du * (size_t)L->D + (size_t)dv;
        delay = L->latency[k] + L->edge_data[e] * L->inv_bw[k];
    }
    if (delay > 0) {
        evq_push(&L->qx, L->now + delay, L->fin_base + (uint64_t)(e - L->fin_first), EV_TRANSFER_DONE << EV_SHIFT | (uint32_t)e);
        if (conv) {
            /* p's copy, when its producer ended now on du (fin_same) and its consumer is on dv
             * in p */
            const int x = !L->fin_same || L->cp_dev[L->edge_dst[e]] != dv;
            L->xdiff[e] = (unsigned char)x;
            L->n_diff += x;
        }
    } else {
        push_fifo(L, EV_TRANSFER_DONE, (uint32_t)e);
    }
}

static inline __attribute__((always_inline)) void send_output(void *ctx, int e, int du, int dv)
{
    send_output_body(ctx, e, du, dv, 0);
}

static inline __attribute__((always_inline)) void send_output_conv(void *ctx, int e, int du, int dv)
{
    send_output_body(ctx, e, du, dv, 1);
}

static inline __attribute__((always_inline)) void op_finish(const dp_sim *s, loop_state *L, int u, const int conv)
{
    L->makespan = L->now;
    L->fin_base = L->seq_fin[u] = L->seq;
    L->fin_first = L->succ_ptr[u];
    L->seq += (uint64_t)(L->succ_ptr[u + 1] - L->fin_first);
    if (conv) L->fin_same = L->cp_dev[u] == L->dev[u] && L->cp_end[u] == L->now; /* an added op: device -1 */
    if (conv) dp_sim_send_outputs(s->g, L->dev, u, NULL, send_output_conv, L);
    else dp_sim_send_outputs(s->g, L->dev, u, NULL, send_output, L);
}

/* RELEASE of u's device (a GRANTED of its queue head, pushed: the FINISH follows it), then u's
 * FINISH; two events */
static inline __attribute__((always_inline)) void release_finish(const dp_sim *s, loop_state *L, int u, const int conv)
{
    const int d = L->dev[u];
    L->n_events++;
    if (!L->busy_flag[d] && L->qhead[d] >= 0) grant_head(L, d, -1, conv);
    op_finish(s, L, u, conv);
}

static inline __attribute__((always_inline)) void op_ready(loop_state *L, int v, int head, const int conv)
{
    int d = L->dev[v];
    L->ready[v] = L->now;
    L->seq_ready[v] = L->seq++;
    L->rorder[L->n_rorder++] = v;
    L->qnext[v] = -1;
    if (L->qtail[d] < 0) L->qhead[d] = v;
    else L->qnext[L->qtail[d]] = v;
    L->qtail[d] = v;
    if (!L->busy_flag[d]) grant_head(L, d, head, conv);
}

/* the last input of the consumer arrived: its READY */
static inline __attribute__((always_inline)) void edge_arrived(loop_state *L, int e, int head, const int conv)
{
    const int v = L->edge_dst[e];
    if (fifo_idle(L, head)) {
        L->n_events++;
        op_ready(L, v, head, conv);
    } else {
        push_fifo(L, EV_READY, (uint32_t)v);
    }
}

/* A transfer's end (a first copy's: only those are events). Its EDGE_ARRIVED follows it in the
 * FIFO, and the EDGE_ARRIVEDs come in the order of their transfers' ends (a FIFO), so the one that
 * completes its consumer's inputs is the last transfer's to end: that one is queued, to make the
 * consumer READY where the event order puts it. The others would only count an arrival; they are
 * counted here instead, as events too, and never queued (a tenth of the FIFO's entries on DOPPLER's
 * graphs, issue 31). Nothing else reads the count in between. */
/* Op x, not ready at t in a run resumed from p at t: how many of its inputs arrived on its
 * device (dev[x]) before t. A copy in flight at t (its producer ended before t, it arrives at or
 * after t) is not counted: with push it is pushed as p's event (xdiff: mv, 1 when x moved), as
 * resume() sets the run up, else it is already in the queue (lazy_setup). A producer ending at
 * or after t sends in the run. With track, *next is the least time at or after t at which an
 * input may reach x in p (a copy in flight arrives then; a producer ending at or after t sends
 * no earlier than its end): converged() compares counts without a walk while the clock is
 * below it. */
static inline __attribute__((always_inline)) int inputs_before(dp_sim *s, const dp_sim_prefix *p, const int *dev,
                                                               int x, double t, const int push, int mv,
                                                               const int track, double *next)
{
    const dp_graph *g = s->g;
    const int dx = dev[x];
    int n = 0;
    double nx = INFINITY;
    for (int q = g->pred_ptr[x]; q < g->pred_ptr[x + 1]; q++) {
        const int e = g->pred_edge[q], u = g->edge_src[e];
        if (!s->first_copy[e]) continue;
        if (p->end[u] >= t) {
            if (track && p->end[u] < nx) nx = p->end[u];
            continue;
        }
        const int du = dev[u];
        const double delay = du != dx ? dp_cost_comm(s->c, e, du, dx) : 0;
        if (delay > 0 && p->end[u] + delay >= t) {
            if (push) {
                evq_push(&s->qx, p->end[u] + delay, p->seq_fin[u] + (uint64_t)(e - g->succ_ptr[u]),
                         (uint32_t)EV_TRANSFER_DONE << EV_SHIFT | (uint32_t)e);
                /* p's own unless its consumer moved (u ended before t: not moved) */
                s->xdiff[e] = (unsigned char)mv;
                s->n_diff += mv;
            }
            if (track && p->end[u] + delay < nx) nx = p->end[u] + delay;
        } else {
            n++;
        }
    }
    *next = nx;
    return n;
}

/* Set up op x of a lazily set-up run (dp_sim's lz_p, above) when the first of its inputs reaches
 * it: the inputs that arrived before the instant the run resumed at, as resume() counts them
 * (the copies in flight then are in the queue: not counted; a producer ending at or after it
 * sends in the run). With conv, the bound on p's next arrival (converged()). */
static __attribute__((noinline)) void lazy_setup(dp_sim *s, loop_state *L, int x)
{
    double next;
    /* a run that may converge: no time of x written yet (converged()) */
    if (s->conv_p) s->start[x] = s->end[x] = s->ready[x] = INFINITY;
    const int n = inputs_before(s, s->lz_p, L->dev, x, s->lz_t, 0, 0, 1, &next);
    L->arrived[x] = n;
    s->arr_next[x] = next;
    s->arr_at[x] = n;
    s->touch[x] = s->touch_stamp;
    s->touched[s->n_touched++] = x;
}

static inline __attribute__((always_inline)) void transfer_done(dp_sim *s, loop_state *L, int e, int head, const int conv)
{
    int v = L->edge_dst[e];
    if (L->lazy && L->touch[v] != L->stamp) lazy_setup(s, L, v);
    assert(L->first_copy[e]);
    assert(L->arrived[v] < L->n_unique_pred[v]);   /* one arrival per distinct producer */
    if (++L->arrived[v] == L->n_unique_pred[v]) {
        if (fifo_idle(L, head)) {
            L->n_events++;
            edge_arrived(L, e, head, conv);
        } else {
            push_fifo(L, EV_EDGE_ARRIVED, (uint32_t)e);
        }
    } else {
        L->n_events++;
    }
}

/* its COMPUTE_DONE after its time on its device: in the future to the heap, at once (a
 * zero-time op) to the FIFO (never run at once: rare, and it would make the handlers recursive) */
static inline __attribute__((always_inline)) void op_start(loop_state *L, int v, const int conv)
{
    const int d = L->dev[v];
    double t = L->op_time[(size_t)v * (size_t)L->D + (size_t)d];   /* dp_cost_op */
    L->start[v] = L->now;
    if (v == L->stop_op) L->stopped = 1;
    L->seq_done[v] = L->seq;
    L->busy[d] += t;
    if (t > 0) {
        evq_push(&L->qc, L->now + t, L->seq++, (uint32_t)EV_COMPUTE_DONE << EV_SHIFT | (uint32_t)v);
        if (conv) {
            /* p's COMPUTE_DONE when v started now on d in p too */
            const int x = L->cp_dev[v] != d || L->cp_start[v] != L->now; /* an added op: device -1 */
            L->cdiff[v] = (unsigned char)x;
            L->n_diff += x;
        }
    } else {
        push_fifo(L, EV_COMPUTE_DONE, (uint32_t)v);
    }
}

static inline __attribute__((always_inline)) void compute_done(const dp_sim *s, loop_state *L, int v, int head, const int conv)
{
    int d = L->dev[v];
    L->end[v] = L->now;
    assert(L->busy_flag[d]);
    L->busy_flag[d] = 0;
    /* RELEASE of d and FINISH of v, one entry: the two are always adjacent in the FIFO (pushed
     * together, and what RELEASE pushes goes behind them), so running them back to back is the
     * same order; they count as two events (dp_sim.h) */
    if (fifo_idle(L, head)) {
        L->n_events++;
        release_finish(s, L, v, conv);
    } else {
        push_fifo(L, EV_RELEASE_FINISH, (uint32_t)v);
    }
}

/* inlined into the loop: a call per event (and its saved registers) was a sixth of the
 * instructions of a simulation (cachegrind, bench_sim --runs, issue 31). head: above. The event
 * itself is counted by the loop (a heap event when popped, the FIFO's in bulk). */
static inline __attribute__((always_inline)) void dispatch(dp_sim *s, loop_state *L, uint32_t ev, int head, const int conv)
{
    uint32_t id = ev & EV_ID_MASK;
    switch (ev >> EV_SHIFT) {
    case EV_TRANSFER_DONE: transfer_done(s, L, (int)id, head, conv); break;
    case EV_EDGE_ARRIVED: edge_arrived(L, (int)id, head, conv); break;
    case EV_READY: op_ready(L, (int)id, head, conv); break;
    case EV_GRANTED: op_start(L, (int)id, conv); break;
    case EV_COMPUTE_DONE: compute_done(s, L, (int)id, head, conv); break;
    case EV_RELEASE_FINISH: release_finish(s, L, (int)id, conv); break;
    default: /* no other kind is ever queued: no range check in the jump */
        assert(0);
        __builtin_unreachable();
    }
}

/* ---- convergence of a delta run (dp_sim.h) ----
 * At the end of instant tau (the FIFO empty), the rest of a run is determined by its state: the
 * events in the queues (times, and their order by sequence number), each device's queue and
 * busy flag, and for each op not yet ready its count of arrived inputs; every op done or not
 * yet ready keeps its device. When that state is the incumbent p's at the end of tau (p's
 * schedule gives it: an op is done when it ended by tau, running when it started by tau, queued
 * when ready by tau, and its arrived inputs are the first copies that reached it by tau), every
 * later event is p's, at the same time and in the same order (the events created later are
 * numbered above every pending one in both runs), so the makespan is p's. The moved ops must
 * be done in both runs (a waiting moved op would run on another device). Checked cheaply first
 * (the moved ops, each event in the queues against p's), then op by op over the run's ops. */
/* converged(), op by op: x's status at the end of tau is p's (done; running since p's start;
 * queued; waiting, with as many inputs arrived as in p) */
static inline int same_status(const dp_sim *s, const dp_sim_prefix *p, int x, double tau)
{
    const dp_graph *g = s->g;
    if (p->end[x] <= tau) return s->end[x] <= tau;
    if (p->start[x] <= tau) return s->start[x] == p->start[x] && !(s->end[x] <= tau);
    if (p->ready[x] <= tau) return s->ready[x] <= tau && !(s->start[x] <= tau);
    if (s->ready[x] <= tau) return 0;
    /* no input arrived in p between the resumed instant and tau: as many in the run */
    if (s->arr_next[x] > tau) return s->arrived[x] == s->arr_at[x];
    int n_arrived = 0;
    for (int q = g->pred_ptr[x]; q < g->pred_ptr[x + 1]; q++) {
        const int e = g->pred_edge[q], u = g->edge_src[e];
        if (s->first_copy[e] && p->end[u] <= tau && p->end[u] + dp_cost_comm(s->c, e, p->dev[u], p->dev[x]) <= tau)
            n_arrived++;
    }
    return n_arrived == s->arrived[x];
}

static int converged(const dp_sim *s, const loop_state *L)
{
    const dp_sim_prefix *p = s->conv_p;
    const dp_graph *g = s->g;
    const double tau = L->now;
    const evq *qc = &L->qc, *qx = &L->qx;
    if (qc->heaped || qx->heaped || (qc->lo == qc->hi && qx->lo == qx->hi)) return 0;
    /* an instant with events left at it is not over (a positive delay that vanishes in rounding
     * queues its copy at tau itself): p's accounting below counts such a copy arrived by tau
     * (its time is no later), the run's queue still holds it (tests/test_delta.c
     * converge_event_at_instant) */
    if ((qc->lo < qc->hi && !(qc->a[qc->lo].t > tau)) || (qx->lo < qx->hi && !(qx->a[qx->lo].t > tau))) return 0;
    const int added = s->conv_added;
    for (int i = 0; i < s->n_moved; i++) {
        const int v = s->moved_ops[i];
        if (!(s->end[v] <= tau && (v == added || p->end[v] <= tau))) return 0;
    }
    /* the events in the queues, merged in their order: each is p's pending at tau, at the same
     * time, and events at one instant come in the order of p's sequence numbers */
    int ic = qc->lo, ix = qx->lo;
    double prev_t = -INFINITY;
    uint64_t prev_seq = 0;
    while (ic < qc->hi || ix < qx->hi) {
        const int take_x = ic == qc->hi || (ix < qx->hi && DP_HEAP_EV_BEFORE(NULL, qx->a[ix], qc->a[ic]));
        const dp_heap_ev x = take_x ? qx->a[ix++] : qc->a[ic++];
        const int id = (int)(x.ev & EV_ID_MASK);
        uint64_t seq;
        if (take_x) {
            const int u = g->edge_src[id], v = g->edge_dst[id], du = p->dev[u], dv = p->dev[v];
            if (!(p->end[u] <= tau && p->end[u] + dp_cost_comm(s->c, id, du, dv) == x.t)) return 0;
            seq = p->seq_fin[u] + (uint64_t)(id - g->succ_ptr[u]);
        } else {
            if (!(p->start[id] <= tau && p->end[id] == x.t)) return 0;
            seq = p->seq_done[id];
        }
        if (x.t == prev_t && !(seq > prev_seq)) return 0;
        prev_t = x.t;
        prev_seq = seq;
    }
    /* op by op: the same status at tau. A lazily set-up run (s->lz_p) looks at the ops of p
     * ready by tau (each list from cut: ready never decreases along it) and the ops it set up
     * that are not: an op it did not set up had no input reach it in the run, and none in p by
     * tau either (a copy in flight at the resumed instant is an event of both runs, reached by
     * tau in both or pending in both; a producer ending by tau in p is ready by tau, so looked
     * at: it is done in the run too, whose copy reached the op by tau, setting it up, or is
     * pending, and then p's copy is pending at the same time: the events above), so it waits
     * in both with the inputs that arrived before the instant */
    if (s->lz_p) {
        /* an op the run did not set up (touch) has no time of the run: not ready by tau in it */
        for (int d = 0; d < s->D; d++) {
            const int *a = p->dev_ops[d];
            for (int i = s->cut[d]; i < p->dev_n[d] && p->ready[a[i]] <= tau; i++)
                if (s->touch[a[i]] != s->touch_stamp || !same_status(s, p, a[i], tau)) return 0;
        }
        for (int i = 0; i < s->n_touched; i++) {
            const int x = s->touched[i];
            if (x != added && p->ready[x] > tau && !same_status(s, p, x, tau)) return 0;
        }
    } else {
        for (int i = 0; i < s->n_fut; i++) {
            const int x = s->fut[i];
            /* the added op is done (above), and in no queue: it has no placed successor */
            if (x != added && !same_status(s, p, x, tau)) return 0;
        }
    }
    /* each device's queue in p's order (the ops queued are p's: above) */
    for (int d = 0; d < s->D; d++)
        for (int x = L->qhead[d]; x >= 0 && L->qnext[x] >= 0; x = L->qnext[x])
            if (!(p->seq_ready[x] < p->seq_ready[L->qnext[x]])) return 0;
    return 1;
}

/* the events from the FIFO's and the heap's present state to the end; conv: a run that may
 * converge (s->conv_p), a constant: the loop is compiled twice (loop()), so that runs that
 * cannot converge pay nothing for its bookkeeping */
static inline __attribute__((always_inline)) void loop_body(dp_sim *s, const int conv)
{
    const dp_graph *g = s->g;
    const dp_cost *c = s->c;
    loop_state L = {
        .dev = s->dev, .succ_ptr = g->succ_ptr, .edge_dst = g->edge_dst, .n_unique_pred = g->n_unique_pred,
        .first_copy = s->first_copy, .op_time = c->op_time, .edge_data = c->edge_data, .latency = c->latency,
        .inv_bw = c->inv_bw, .D = s->D, .arrived = s->arrived, .qhead = s->qhead, .qtail = s->qtail,
        .qnext = s->qnext, .rorder = s->rorder, .busy_flag = s->busy_flag, .busy = s->busy, .start = s->start,
        .end = s->end, .ready = s->ready, .seq_done = s->seq_done, .seq_fin = s->seq_fin, .seq_ready = s->seq_ready,
        .fifo = s->fifo, .qc = s->qc, .qx = s->qx, .tail = s->fifo_tail, .n_rorder = s->n_rorder,
        .seq = s->seq, .fin_base = s->fin_base, .now = s->now, .makespan = s->makespan,
        .n_events = s->n_events, .stop_op = s->stop_op, .stopped = s->stopped,
        .cp_dev = conv ? s->conv_p->dev : NULL, .cp_start = s->conv_p ? s->conv_p->start : NULL,
        .cp_end = s->conv_p ? s->conv_p->end : NULL, .cdiff = s->cdiff, .xdiff = s->xdiff, .n_diff = s->n_diff,
        .lazy = s->lz_p != NULL, .stamp = s->touch_stamp, .touch = s->touch,
    };
    const double bound = s->bound;
    /* events run at once (above) only when direct; else head -1: never */
    const int direct = s->direct;
    int head = s->fifo_head;
    /* the queue of the next heap event of the present instant while the loop is in the instant's
     * heap events (processed before its FIFO), else NULL. One dispatch site: every handler is
     * inlined once (two sites, for the heap and the FIFO, doubled the loop's code) */
    evq *q = NULL;
    for (;;) {
        uint32_t ev;
        int h;
        if (q) {
            /* the last heap event of the instant may run what it pushes at once; the others only
             * push to the FIFO (so the queues stay as evq_first found them) */
            ev = evq_pop(q);
            L.n_events++;
            if (conv) L.n_diff -= q == &L.qc ? L.cdiff[ev & EV_ID_MASK] : L.xdiff[ev & EV_ID_MASK];
            /* the next heap event of the instant: q's new first or the other queue's first
             * (no earlier than the event popped), whichever is at now and earlier */
            evq *o = q == &L.qc ? &L.qx : &L.qc;
            const int qn = q->lo < q->hi && q->a[q->lo].t == L.now;
            const int on = o->lo < o->hi && o->a[o->lo].t == L.now;
            q = qn ? (on && DP_HEAP_EV_BEFORE(NULL, o->a[o->lo], q->a[q->lo]) ? o : q) : on ? o : NULL;
            h = q || !direct ? -1 : 0;
        } else if (head < L.tail) {
            ev = L.fifo[head++];
            h = direct ? head : -1;
        } else {
            /* every kind happens at most once per op and edge (dp_sim_alloc sizes the FIFO so) */
            assert(L.tail <= s->fifo_cap);
            L.n_events += head; /* the FIFO's events of the instant, all processed */
            head = L.tail = 0;
            /* a delta run whose state is the incumbent's again ends here (converged). Never at
             * an infinite instant: its events may still be queued at it (INFINITY + a delay),
             * an op's unwritten times (INFINITY) compare as done by it, and conv_at INFINITY
             * reads as a run that ended (an op time made infinite by hand) */
            if (conv && L.n_diff == 0 && L.n_events > 0 && L.now < INFINITY && converged(s, &L)) {
                s->conv_at = L.now;
                break;
            }
            /* a probe stops here, at the end of the instant its op started at (checked per
             * instant, not per event: nothing after its start changes its start or READY) */
            q = L.stopped ? NULL : evq_first(&L.qc, &L.qx);
            if (!q) break;
            /* a bounded run ends here when the next instant is past its bound: the makespan is
             * at least that instant (every event happens before some op's end) */
            if (q->a[q->lo].t > bound) {
                s->exceeded = q->a[q->lo].t;
                s->over_bound = 1;
                break;
            }
            /* advance the clock; every heap event of that instant comes before the FIFO (heap
             * events push to the FIFO only, or run at once when they are the last) */
            L.now = q->a[q->lo].t;
            continue;
        }
        dispatch(s, &L, ev, h, conv);
    }
    L.n_events += head; /* the FIFO's events processed before a stop */
    head = L.tail = 0;
    s->fifo_head = head;
    s->fifo_tail = L.tail;
    s->qc = L.qc;
    s->qx = L.qx;
    s->seq = L.seq;
    s->n_rorder = L.n_rorder;
    s->fin_base = L.fin_base;
    s->now = L.now;
    s->makespan = L.makespan;
    s->n_events = L.n_events;
    s->stopped = L.stopped;
}

static void loop(dp_sim *s)
{
    if (s->conv_p) loop_body(s, 1);
    else loop_body(s, 0);
}

/* dp_sim.h. Every run checked this before issue 31 (an assertion of debug builds, which this
 * project's default build is: a tenth of the instructions of a simulation); the tests now call
 * it after their runs. Overlap on a device is still asserted where ops are granted (grant_head). */
int dp_sim_check_schedule(const dp_sim *s, dp_error *err)
{
    const dp_graph *g = s->g;
    for (int v = 0; v < s->n; v++) {
        if (s->dev[v] < 0) continue;
        if (!(s->ready[v] >= 0 && s->start[v] >= s->ready[v] && s->end[v] >= s->start[v] && s->end[v] <= s->makespan))
            return dp_error_set(err, DP_EINVAL, "%s: op %d (\"%s\"): ready %.17g, start %.17g, end %.17g, makespan %.17g: "
                                "not ready <= start <= end <= makespan", g->source, v, g->op_name[v], s->ready[v],
                                s->start[v], s->end[v], s->makespan);
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int u = g->edge_src[g->pred_edge[q]];
            if (!(s->ready[v] >= s->end[u]))
                return dp_error_set(err, DP_EINVAL, "%s: op %d (\"%s\") ready at %.17g before its input %d (\"%s\") ended "
                                    "at %.17g", g->source, v, g->op_name[v], s->ready[v], u, g->op_name[u], s->end[u]);
        }
    }
    for (int d = 0; d < s->D; d++)
        if (!(s->busy[d] >= 0 && s->busy[d] <= s->makespan * (1 + 1e-9)))
            return dp_error_set(err, DP_EINVAL, "%s: device %d busy %.17g, makespan %.17g", g->source, d, s->busy[d],
                                s->makespan);
    return DP_OK;
}

/* ---- the op-order run (issue 31) ----
 * The fixed-delay model lets a complete run be computed with two events an op, its READY and its
 * COMPUTE_DONE, where the event loop processes seven (dp_sim.h): an op's READY is its last input's
 * arrival (a producer's end, plus the transfer's time across devices), its start the later of its
 * READY and the end of the op before it in its device's queue, its end its start plus its time.
 * What the other events decide is order: which op a device takes first when two are ready at one
 * instant (siblings of one producer often are), and so every later tie. That order is derived
 * here from the events' places, without the events themselves.
 *
 * Within an instant the engine processes events breadth first (dp_sim.h: a zero-delay event goes
 * behind every event scheduled before it): first the instant's heap events in the order of their
 * sequence numbers, then their children, and so on, level by level, each level in the order of
 * its parents and each parent's children in the order it scheduled them. When every op's time on
 * its device is positive (and no positive time or delay is too small to move the clock), the
 * levels are fixed:
 *   0: the COMPUTE_DONEs ending now, in the order of their GRANTEDs (which scheduled them), and
 *      the transfers arriving now, in the order of their producers' FINISHes, then edge order;
 *      at time 0 instead the sources' READYs, in op order (the set-up);
 *   1: each COMPUTE_DONE's RELEASE (which grants its device's queue head at once) and FINISH;
 *      each transfer's ARRIVED; the sources' GRANTEDs;
 *   2: the GRANTEDs of those RELEASEs; the READYs of delayed arrivals; the same-device copies'
 *      TRANSFERs, in the order of their FINISHes, then edge order;
 *   3: GRANTEDs of level-2 READYs; those copies' ARRIVEDs; 4: their READYs; 5: their GRANTEDs.
 * So a device freed at an instant is granted to its queue's head before any READY of that instant
 * is processed, and a READY's place among the READYs of its instant is (its level, 2 or 4, its
 * last copy's producer's place among COMPUTE_DONEs, the edge); the level needs no key of its own,
 * as a delayed copy's producer ended at an earlier instant, so before every producer of a level-4
 * READY. The GRANTEDs, hence the COMPUTE_DONEs at any later instant, come in the order the grants
 * are made when each instant's COMPUTE_DONEs are processed before its READYs, each kind in its
 * order. The COMPUTE_DONEs and the READYs of delayed copies wait in the engine's event queue
 * (evq) with an order key as the sequence number: the rank of the grant, and (the rank of the
 * producer's COMPUTE_DONE << 28 | edge); a level-4 READY is made in its instant, in key order (the
 * instant's COMPUTE_DONEs are processed in order, each sending its copies in edge order), and
 * waits in a FIFO processed after the instant's delayed READYs. The copy that makes an op ready
 * is the arrival of the largest key among those arriving last (its ARRIVED is processed last):
 * the last of them this run sends, as it sends copies in key order.
 *
 * The same schedules bit for bit (the same floating-point operations: end = start + time,
 * arrival = end + delay), busy sums (added in each device's order), makespans, bounded runs'
 * costs and event counts as the event loop: tests/test_delta.c `op_order_same_as_events`, on
 * random graphs with ties everywhere. An op of time 0 or less on its device, or a positive time
 * or delay that does not move the clock (start + time == start), is outside these levels: the
 * run returns 0 and the event loop runs instead. Complete runs, and delta runs of an incumbent
 * recorded by it (run_ops_resumed, dp_sim.h "Op by op"); the prefix and incremental runs of the
 * environment's state keep the event loop's sequence numbers. */
#define OP_KEY_SHIFT 28

/* the transfer time of a copy of edge e from device du to dv as the op-order run takes it:
 * latency + data / bandwidth (dp_cost_comm) where du != dv and it is positive, else 0 (the copy
 * arrives when it is sent) */
static inline __attribute__((always_inline)) double ops_delay(const dp_cost *c, int e, int du, int dv)
{
    const double delay = dp_cost_comm(c, e, du, dv);
    return delay > 0 ? delay : 0;
}

/* ops_tables_sync's update of op v, whose device (dev) differs from the tables' (tdev) */
static inline __attribute__((always_inline)) void update_op(dp_sim *s, const dp_cost *c, const dp_graph *g, int D,
                                                          const int *dev, int *tdev, int v)
{
    const int dv = dev[v], du = tdev[v];
    if (du >= 0) {
        const double w = s->dev_work[du] -= s->otime[v];
        s->work_resum |= !(4 * w >= s->dev_peak[du]) || !(w < INFINITY); /* far below its peak: sum again */
    }
    tdev[v] = dv;
    s->otime[v] = c->op_time[(size_t)v * (size_t)D + (size_t)dv];
    const double w = s->dev_work[dv] += s->otime[v];
    if (w > s->dev_peak[dv]) s->dev_peak[dv] = w;
    s->work_resum |= !(w < INFINITY);
    s->work_updates++;
    const unsigned char *first = s->first_copy; /* another copy keeps time 0 (ops_edge) */
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        const int e = g->pred_edge[q];
        if (first[e]) s->oedge[e].delay = ops_delay(c, e, dev[g->edge_src[e]], dv);
    }
    for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
        if (first[e]) s->oedge[e].delay = ops_delay(c, e, dv, dev[g->edge_dst[e]]);
}

/* the ops compared at once by ops_tables_sync (a power of two, at most the bits of an unsigned) */
#define SYNC_BLOCK 16

/* Makes s->otime and s->oedge's delays those of the assignment dev (n): the ops whose device
 * differs from tdev's get their time, and their edges (in and out) their transfer time, again. A
 * search's move changes one or two ops, so a run costs a scan of the assignment and a few ops'
 * edges here, and the run's loop reads one time per op and per copy instead of indexing the cost
 * tables by device pair (issue 31). Returns -1, or the first op whose device is outside 0..D-1,
 * and then changes nothing. The ops it takes are every op at the first sync, then those whose
 * device differs from tdev's, which was in range when it was written: so this check is the
 * whole assignment's (run: a tenth of the instructions of a scan of every op). All are checked
 * before any is updated: an update writes the edges of an op from its neighbours' devices in
 * dev, so a sync stopped part way left edge times that no later difference from tdev would
 * write again (a review found a wrong makespan and a read outside the cost tables). */
static __attribute__((noinline)) int ops_tables_sync(dp_sim *s, const int *dev)
{
    const dp_graph *g = s->g;
    const dp_cost *c = s->c;
    const int n = s->n, D = s->D;
    int *tdev = s->tdev, *chg = s->sync_ops, k = 0;
    if (!s->tables_set)
        for (int v = 0; v < n; v++) chg[k++] = v;
    else if (s->hint_k >= 0)
        /* the caller's list (dp_sim_run_bounded_changed): no scan. The ops that changed, each
         * once, in op order as the scan takes them: the devices' work sums (dev_work) are then
         * updated in the same order, to the same bits (in the list's order an early-rejected
         * run's cost differed in its last bits from the scan's, and later runs' with it: a
         * review) */
        for (int i = 0; i < s->hint_k; i++) {
            const int v = s->hint[i];
            if (dev[v] == tdev[v]) continue;
            int j = k;
            while (j > 0 && chg[j - 1] > v) j--;
            if (j > 0 && chg[j - 1] == v) continue; /* listed twice */
            for (int q = k; q > j; q--) chg[q] = chg[q - 1];
            chg[j] = v;
            k++;
        }
    else
        for (int b = 0; b < n; b += SYNC_BLOCK) {
            /* a block none of whose ops changed is passed with one test (a vectorised OR); in
             * one that has, the changed ops' bits, taken lowest first (no branch an op) */
            const int len = n - b < SYNC_BLOCK ? n - b : SYNC_BLOCK;
            unsigned diff = 0;
            if (len == SYNC_BLOCK) {
                for (int j = 0; j < SYNC_BLOCK; j++) diff |= (unsigned)(dev[b + j] ^ tdev[b + j]);
                if (!diff) continue;
            }
            unsigned bits = 0;
            for (int j = 0; j < len; j++) bits |= (unsigned)(dev[b + j] != tdev[b + j]) << j;
            for (; bits; bits &= bits - 1) chg[k++] = b + __builtin_ctz(bits);
        }
    for (int i = 0; i < k; i++)
        if ((unsigned)dev[chg[i]] >= (unsigned)D) return chg[i];
    for (int i = 0; i < k; i++) update_op(s, c, g, D, dev, tdev, chg[i]);
    s->tables_set = 1;
    s->tables_gen++;
    s->tables_last = 1;
    if (s->work_resum || s->work_updates > (long)n + WORK_RESUM) {
        /* the devices' work summed again, in op order (dev_work, above) */
        for (int d = 0; d < D; d++) s->dev_work[d] = 0;
        for (int v = 0; v < n; v++) s->dev_work[tdev[v]] += s->otime[v];
        for (int d = 0; d < D; d++) s->dev_peak[d] = s->dev_work[d];
        s->work_updates = 0;
        s->work_resum = 0;
    }
    return -1;
}

/* The op-order run's working state in its loop (ops_loop): the arrays it writes, their base
 * pointers, and its two queues, copied from s when the loop starts and the queues and the READY
 * order's length written back when it ends. As members of s they were loaded again after almost
 * every store of the loop (a store to busy_flag, an unsigned char, may change any object; one to
 * pending, an int, the queues' bounds); as a local the compiler keeps them in registers (issue
 * 31). */
typedef struct ops_run {
    const int *dev;
    const double *otime;
    unsigned char *busy_flag;
    double *busy, *start, *end, *dev_rest, lb_scale;
    int *qhead, *qtail, *qnext, *rorder, n_rorder;
    uint64_t *seq_done, *seq_ready;
    evq dq, rq; /* s->oq_done and s->oq_ready */
} ops_run;

/* grant device d at now to op h (the head of its queue): h's start, end and busy time, its
 * COMPUTE_DONE, numbered *seq (its grant's place; rec: also written to seq_done[h]). Returns 0
 * when h's time is outside the levels above. */
static inline __attribute__((always_inline)) int ops_grant(ops_run *R, int h, int d, double now, uint64_t *seq,
                                                         double bound, double *over, int *any, double *lim,
                                                         const int rec, const int early)
{
    const double t = R->otime[h]; /* > 0 (ops_on) */
    const double e = now + t;
    if (e == now) return 0;
    R->busy_flag[d] = 1;
    /* d's busy time, kept in a register for the bound below (read again after the stores to
     * start and end, which may alias it for the compiler, it came by store forwarding: a sixth
     * of the loop's samples sat on the bound) */
    const double busy = R->busy[d] += t;
    /* a bounded run with early rejection reports a cost only (dp_sim_run_bounded; its schedule
     * is no promise, dp_sim_check_schedule): its ops' times go unwritten, two stores an op and
     * 2.9 KiB of Llama-block's working set (issue 31: 44,744 to 44,080 instructions an annealing
     * move, the same placements) */
    if (rec || !early) {
        R->start[h] = now;
        R->end[h] = e;
    }
    if (e > bound) {
        *any = 1;
        if (e < *over) *over = e;
    } else if (early) {
        /* device d is busy until e, then runs the work it has left, one op at a time: no
         * schedule of this assignment ends before lb (below its exact value by lb_scale) */
        const double lb = dp_sim_work_lb(e, R->dev_rest[d] - busy, R->lb_scale);
        if (lb > bound) {
            *any = 1;
            if (lb < *over) *over = lb;
            *lim = -INFINITY; /* the loop stops at the next instant */
        }
    }
    if (rec) R->seq_done[h] = *seq;
    evq_push(&R->dq, e, (*seq)++, (uint32_t)h);
    return 1;
}

/* v's READY: v joins its device's queue, and is granted the device when it is free (rec: its
 * READY's place to seq_ready[v], v to the READY order rorder) */
static inline __attribute__((always_inline)) int ops_ready(ops_run *R, int v, double now, uint64_t *seq,
                                                         double bound, double *over, int *any, double *lim,
                                                         const int rec, const int early)
{
    const int d = R->dev[v];
    if (rec) {
        R->seq_ready[v] = (*seq)++;
        R->rorder[R->n_rorder++] = v;
    }
    if (!R->busy_flag[d]) return ops_grant(R, v, d, now, seq, bound, over, any, lim, rec, early);
    queue_append_to(R->qhead, R->qtail, R->qnext, d, v);
    return 1;
}

/* A resumed op-order run's set-up of op v, not ready at the instant t it resumed at: the copies
 * sent to v's device (s->dev) by v's producers that ended before t (p's schedule: their
 * COMPUTE_DONEs before t, numbered p->seq_fin), as the run from time 0 holds them at t: v's
 * count of arrived inputs, its latest arrival and that arrival's READY key (of the copies
 * arriving last, the largest key: the last sent). An arrival after bound lowers *over. Marks v
 * set up; when every input of v is among those, v's READY (at or after t) is queued. Returns 1,
 * or 0 when a positive delay does not move the clock (the levels above do not hold: the caller
 * falls back to the event loop). */
static int ops_setup(dp_sim *s, const dp_sim_prefix *p, int v, double t, double bound, double *over, int *any)
{
    const dp_graph *g = s->g;
    int cnt = 0;
    double r = 0;
    uint64_t key = 0;
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        const int e = g->pred_edge[q];
        if (!s->first_copy[e]) continue;
        const int u = g->edge_src[e];
        const double end = p->end[u];
        if (!(end < t)) continue;
        const double delay = s->oedge[e].delay; /* ops_tables_sync: s->dev's */
        double a = end;
        if (delay > 0) {
            a = end + delay;
            if (a == end) return 0;
            if (a > bound) {
                *any = 1;
                if (a < *over) *over = a;
            }
        }
        const uint64_t kv = p->seq_fin[u] << OP_KEY_SHIFT | (uint64_t)e;
        if (cnt == 0 || a > r || (a == r && kv > key)) {
            r = a;
            key = kv;
        }
        cnt++;
    }
    s->pending[v] = g->n_unique_pred[v] - cnt;
    s->ready[v] = cnt ? r : -INFINITY;
    s->rkey[v] = key;
    s->touch[v] = s->touch_stamp;
    if (cnt == g->n_unique_pred[v]) {
        assert(r >= t);
        evq_push(&s->oq_ready, r, key, (uint32_t)v);
    }
    return 1;
}

/* The op-order run's loop from the state in s (the queues, the device queues, each op's pending
 * copies, its latest arrival so far: -INFINITY before the first), with event numbers from seq,
 * after the READYs at time 0 of the ops sources[0..n_sources) in that order (a complete run's
 * set-up; none for a resumed run); the first instant past bound so far in first_over (any_over:
 * one exists). It stops before the
 * first instant past lim: bound, or -INFINITY once a grant found the makespan above bound (early:
 * the early rejection's bound, ops_grant, with s->dev_rest set; first_over is then no more than
 * that bound). rec: record every
 * op's event places (ops_grant, ops_ready; COMPUTE_DONE to seq_fin) and end with s->seq above
 * them. Returns 1 (s->makespan: the last COMPUTE_DONE processed), or 0 when the event loop must
 * run instead. */
static inline __attribute__((always_inline)) int ops_loop_run(dp_sim *s, ops_run *R, const int *sources,
                                                            int n_sources, uint64_t seq, double bound, double lim,
                                                            double first_over, int any_over, double *over,
                                                            int *over_bound, const int rec, const int early)
{
    const dp_graph *g = s->g;
    const int *dev = R->dev, *succ_ptr = g->succ_ptr;
    const ops_edge *oedge = s->oedge;
    evq *dq = &R->dq, *rq = &R->rq;
    uint64_t *rkey = s->rkey, *seq_fin = s->seq_fin;
    uint32_t *fifo = s->fifo;
    int *pending = s->pending, *qhead = R->qhead, *qnext = R->qnext, *qtail = R->qtail;
    unsigned char *busy_flag = R->busy_flag;
    double *ready = s->ready;
    double makespan = 0;
    for (int i = 0; i < n_sources; i++)
        if (!ops_ready(R, sources[i], 0, &seq, bound, &first_over, &any_over, &lim, rec, early)) return 0;
    for (;;) {
        /* the next instant: the earlier of the first COMPUTE_DONE and the first delayed READY */
        /* (an empty queue's first time is EVQ_END_T, infinite; when both are, now is, and the
         * run has ended or its next events are at infinity, which the event loop runs) */
        const double td = dq->a[dq->lo].t, tr = rq->a[rq->lo].t;
        const double now = td <= tr ? td : tr;
        if (now == INFINITY) {
            if (dq->lo == dq->hi && rq->lo == rq->hi) break;
            if (!(now > lim)) return 0;
        }
        /* a bounded run stops at its first instant past the bound, as the event loop does; the
         * engine's first instant past it is no later (an event pushed by this instant or a later
         * one is no earlier than it), and was pushed by an instant before the bound (or was in
         * flight when a resumed run began), so it is first_over */
        if (now > lim) {
            assert(any_over && (first_over <= now || lim < bound));
            break;
        }
        /* its READYs, in order, in the FIFO: first the delayed ones (level 2; this instant's
         * COMPUTE_DONEs push none at it), then, below, those its COMPUTE_DONEs make (level 4);
         * one loop then processes them all (2% fewer instructions than a loop for each) */
        int tail = 0;
        while (rq->a[rq->lo].t == now) fifo[tail++] = evq_pop(rq); /* now < EVQ_END_T */
        /* its COMPUTE_DONEs, each with its RELEASE (granting its device's queue head) and FINISH */
        while (dq->a[dq->lo].t == now) {
            const int u = (int)evq_pop(dq), d = dev[u];
            const uint64_t rank = seq++;
            if (rec) seq_fin[u] = rank;
            makespan = now;
            busy_flag[d] = 0;
            const int h = qhead[d];
            if (h >= 0) {
                qhead[d] = qnext[h];
                if (qhead[d] < 0) qtail[d] = -1;
                if (!ops_grant(R, h, d, now, &seq, bound, &first_over, &any_over, &lim, rec, early)) return 0;
            }
            for (int q = succ_ptr[u]; q < succ_ptr[u + 1]; q++) {
                const ops_edge *E = &oedge[q];
                const int v = E->dst; /* n for a copy not the first of its pair: no effect */
                const double delay = E->delay;
                /* the copies are sent in increasing key order over the whole run (COMPUTE_DONEs in
                 * rank order, each its copies in edge order), so of v's arrivals at one time the
                 * last sent has the largest key (a READY at this instant, in the FIFO, needs none) */
                /* v's latest arrival so far, kept in a register (read again from ready[v] below, it
                 * came by store forwarding) */
                double rv = ready[v];
                if (delay > 0) {
                    const double a = now + delay;
                    if (a == now) return 0;
                    if (a > bound) {
                        any_over = 1;
                        if (a < first_over) first_over = a;
                    }
                    if (a >= rv) {
                        rv = ready[v] = a;
                        rkey[v] = rank << OP_KEY_SHIFT | (uint64_t)q;
                    }
                } else if (now >= rv) {
                    /* an arrival now: its key is never read (a READY queued with a key is one whose
                     * latest arrival is after the instant its last input was sent, so a delayed
                     * one's; one now goes to the FIFO) */
                    rv = ready[v] = now;
                }
                if (--pending[v] == 0) {
                    if (rv == now) fifo[tail++] = (uint32_t)v; /* a level-4 READY: its key is this copy's */
                    else evq_push(rq, rv, rkey[v], (uint32_t)v);
                }
            }
        }
        /* its READYs: the delayed ones (level 2), then the others (level 4) */
        for (int i = 0; i < tail; i++)
            if (!ops_ready(R, (int)fifo[i], now, &seq, bound, &first_over, &any_over, &lim, rec, early)) return 0;
    }
    s->makespan = makespan;
    if (rec) s->seq = seq;
    *over = first_over;
    *over_bound = any_over;
    return 1;
}

/* ops_loop_run on s's state, copied to a local ops_run and its queues and READY order written
 * back (s->oq_done, s->oq_ready, s->n_rorder) */
static inline __attribute__((always_inline)) int ops_loop(dp_sim *s, const int *sources, int n_sources,
                                                        uint64_t seq, double bound, double lim, double first_over,
                                                        int any_over, double *over, int *over_bound, const int rec,
                                                        const int early)
{
    ops_run R = {
        .dev = s->dev, .otime = s->otime, .busy_flag = s->busy_flag, .busy = s->busy, .start = s->start,
        .end = s->end, .dev_rest = s->dev_rest, .lb_scale = s->lb_scale, .qhead = s->qhead, .qtail = s->qtail,
        .qnext = s->qnext, .rorder = s->rorder, .n_rorder = s->n_rorder, .seq_done = s->seq_done,
        .seq_ready = s->seq_ready, .dq = s->oq_done, .rq = s->oq_ready,
    };
    const int ok = ops_loop_run(s, &R, sources, n_sources, seq, bound, lim, first_over, any_over, over, over_bound,
                                rec, early);
    s->oq_done = R.dq;
    s->oq_ready = R.rq;
    s->n_rorder = R.n_rorder;
    return ok;
}

/* The complete run of s->dev op by op (above), its tables synced by the caller (ops_tables_sync);
 * bound as a bounded run's: *over_bound is 1 when
 * the engine's clock would pass bound, and *over the first instant after bound it would reach
 * then. rec: record the places of every op's events (seq_done: its grant, seq_fin: its
 * COMPUTE_DONE, seq_ready: its READY, numbered from 0 in one sequence; rorder: the READY order)
 * for an op-order delta incumbent (dp_sim_prefix op_order). Returns 1, or 0 when the event loop
 * must run instead (s's run arrays then hold nothing meaningful).
 * Queues: the COMPUTE_DONEs (by the rank of their grants), the READYs of delayed arrivals (level
 * 2, pushed at an earlier instant), both evq; the READYs of an instant's same-device and
 * zero-delay arrivals (level 4) are made in the order of their keys, as the instant's
 * COMPUTE_DONEs are processed in order and each sends its copies in edge order, so they wait in
 * the FIFO (s->fifo) after the instant's delayed READYs, which are taken from their queue into
 * it first. */
static int run_ops(dp_sim *s, double bound, double *over, int *over_bound, const int rec)
{
    const dp_graph *g = s->g;
    double first_over = INFINITY;
    int any_over = 0;
    uint64_t seq = 0;
    const int early = s->early_reject && bound < INFINITY;
    double lim = bound;
    if (early) memcpy(s->dev_rest, s->dev_work, (size_t)s->D * sizeof(double));
    memcpy(s->pending, g->n_unique_pred, (size_t)s->n * sizeof(int));
    s->pending[s->n] = OPS_NO_OP_PENDING;
    memcpy(s->ready, s->ready_init, ((size_t)s->n + 1) * sizeof(double));
    devices_clear(s);
    evq_clear(&s->oq_done);
    evq_clear(&s->oq_ready);
    s->n_rorder = 0;
    /* time 0: the sources' READYs, in op order (the loop's first events) */
    const int *src = g->sources, ns = g->n_sources;
    for (int i = 0; i < ns; i++) s->ready[src[i]] = 0;
    if (rec)
        return early ? ops_loop(s, src, ns, seq, bound, lim, first_over, any_over, over, over_bound, 1, 1)
                     : ops_loop(s, src, ns, seq, bound, lim, first_over, any_over, over, over_bound, 1, 0);
    return early ? ops_loop(s, src, ns, seq, bound, lim, first_over, any_over, over, over_bound, 0, 1)
                 : ops_loop(s, src, ns, seq, bound, lim, first_over, any_over, over, over_bound, 0, 0);
}

/* The op-order run resumed at the start of instant t > 0 (t <= bound) from p, an op-order
 * incumbent (p->op_order: its event places are the op-order run's), for the assignment s->dev,
 * in which the ops moved[0..n_moved) differ from p's and change nothing before t
 * (dp_sim_run_delta: each one's grant in p's schedule, and its READY where its inputs reach its
 * new device, at or after t; its READY in p may be before t, which only queued it on its old
 * device). The state at t: each device's list from its first op ending at or after t (s->cut):
 * the op running then (its COMPUTE_DONE at p's end, numbered p's grant place), the ops queued
 * behind it (READY before t; the lists are in READY order), less the moved ops queued there
 * (they leave the queue, numbers and order of the others kept); the ops whose inputs were all sent before t
 * and arrive at or after t, found from the producers that ended in [t less the longest
 * transfer, t) and set up (ops_setup) with their READYs queued (keys from p's COMPUTE_DONE
 * places); the moved ops set up; every other op's pending copies counted from its producers
 * ending at or after t (the lists from their cuts). Events are
 * numbered from p->seq_next, above p's. Records as run_ops(rec); s->kept: the ops running or
 * queued at t, by device in queue order; s->rorder: the ops made ready by the run. Returns as
 * run_ops. */
static int first_ending_at(const dp_sim_prefix *p, int d, double t);

static int run_ops_resumed(dp_sim *s, const dp_sim_prefix *p, const int *moved, int n_moved, double t, double bound,
                           double *over, int *over_bound)
{
    const dp_graph *g = s->g;
    const int D = s->D, *dev = s->dev;
    double first_over = INFINITY;
    int any_over = 0;
    const int bad = ops_tables_sync(s, dev); /* every device checked by dp_sim_run_delta */
    assert(bad < 0);
    (void)bad;
    s->n_kept = s->n_rorder = 0;
    evq_clear(&s->oq_done);
    evq_clear(&s->oq_ready);
    if (++s->touch_stamp == 0) {
        memset(s->touch, 0, (size_t)s->n * sizeof *s->touch);
        s->touch_stamp = 1;
    }
    const uint32_t stamp = s->touch_stamp;
    devices_clear(s);
    /* early rejection: each device's work not granted at t (the ops from the cuts on that were
     * not running then, on their devices in s->dev: a moved op has no event before t) */
    const int early = s->early_reject && bound < INFINITY;
    if (early)
        for (int d = 0; d < D; d++) s->dev_rest[d] = 0;
    /* each op's pending copies: one for each producer ending at or after t (in p, and so in the
     * run; their COMPUTE_DONEs are the run's), counted from the producers, the ops from each
     * device's cut on; the ops set up below (moved, in flight) are counted again by ops_setup */
    memset(s->pending, 0, (size_t)s->n * sizeof *s->pending);
    s->pending[s->n] = OPS_NO_OP_PENDING;
    memcpy(s->ready, s->ready_init, ((size_t)s->n + 1) * sizeof(double));
    const int *succ_ptr = g->succ_ptr, *edge_dst = g->edge_dst;
    const unsigned char *first_copy = s->first_copy;
    for (int d = 0; d < D; d++) {
        const int *a = p->dev_ops[d];
        const int cut = s->cut[d] = first_ending_at(p, d, t);
        for (int i = cut; i < p->dev_n[d]; i++) {
            const int u = a[i];
            if (early && !(p->start[u] < t)) s->dev_rest[dev[u]] += s->otime[u];
            for (int e = succ_ptr[u]; e < succ_ptr[u + 1]; e++) s->pending[edge_dst[e]] += first_copy[e];
        }
        for (int i = cut; i < p->dev_n[d] && p->ready[a[i]] < t; i++) {
            const int x = a[i];
            /* a moved op queued here at t (READY before t, granted at or after it): it leaves
             * the queue, and is set up on its new device below */
            if (dev[x] != d) continue;
            s->touch[x] = stamp;
            s->kept[s->n_kept++] = x;
            s->ready[x] = p->ready[x];
            s->seq_ready[x] = p->seq_ready[x];
            if (p->start[x] < t) {
                /* running at t: the first of them */
                assert(i == cut && p->end[x] >= t);
                s->start[x] = p->start[x];
                s->end[x] = p->end[x];
                s->seq_done[x] = p->seq_done[x];
                s->busy_flag[d] = 1;
                if (p->end[x] > bound) {
                    any_over = 1;
                    if (p->end[x] < first_over) first_over = p->end[x];
                }
                evq_push(&s->oq_done, p->end[x], p->seq_done[x], (uint32_t)x);
            } else {
                /* queued at t (between instants a device with a queue is busy) */
                assert(s->busy_flag[d]);
                queue_append(s, d, x);
            }
        }
    }
    /* the moved ops (not ready at t in either schedule) */
    for (int i = 0; i < n_moved; i++) {
        if (!ops_setup(s, p, moved[i], t, bound, &first_over, &any_over)) return 0;
    }
    /* the copies in flight at t: sent by producers that ended before t, no earlier than t less
     * the longest transfer (widened by a relative 1e-9 against rounding: a larger window only
     * looks at more producers) */
    const double lo = t - s->max_delay * (1 + 1e-9) - fabs(t) * 1e-12;
    for (int d = 0; d < D; d++) {
        const int *a = p->dev_ops[d];
        for (int i = first_ending_at(p, d, lo); i < s->cut[d]; i++) {
            const int u = a[i];
            const double end = p->end[u];
            if (!(end + s->out_delay[u] >= t)) continue; /* every copy of u arrived before t */
            for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
                const int x = g->edge_dst[e], dx = dev[x];
                if (!s->first_copy[e] || dx == d || s->touch[x] == stamp) continue;
                const double delay = s->oedge[e].delay;
                if (!(delay > 0) || end + delay < t) continue; /* arrived before t */
                if (!ops_setup(s, p, x, t, bound, &first_over, &any_over)) return 0;
            }
        }
    }
    return early ? ops_loop(s, NULL, 0, p->seq_next, bound, bound, first_over, any_over, over, over_bound, 1, 1)
                 : ops_loop(s, NULL, 0, p->seq_next, bound, bound, first_over, any_over, over, over_bound, 1, 0);
}

/* n_transfers and transfer_volume of a run (dp_sim_result): the cross-device edges between
 * placed ops, a repeated edge once (its repeats move nothing, as in the general engine, dp_hisim.h:
 * every copy was counted here, so a memory limit or --mode bsp, which run the general engine,
 * halved the count of a doubled edge: a review), their data summed in edge order (one order for
 * every path of a run) */
static void transfer_totals(dp_sim *s)
{
    const int *dev = s->dev, *src = s->g->edge_src, *dst = s->g->edge_dst;
    const double *data = s->c->edge_data;
    long k = 0;
    double volume = 0;
    for (int e = 0; e < s->m; e++) {
        const int du = dev[src[e]], dv = dev[dst[e]];
        if (du != dv && du >= 0 && dv >= 0 && s->first_copy[e]) {
            k++;
            volume += data[e];
        }
    }
    s->n_transfers = k;
    s->volume = volume;
}

/* The refusal of op v's device dv outside 0..D-1 (what: "assignment" or "prefix"), one text for
 * full, prefix and delta runs */
static int device_error(const dp_sim *s, const char *what, int v, int dv, dp_error *err)
{
    return dp_error_set(err, DP_EINVAL, "%s: op %d (\"%s\") has device %d, outside 0..%d", what, v, s->g->op_name[v], dv,
                        s->D - 1);
}

/* The engine loop; absent ops (device -1, prefix runs only) are never made ready. ops: a complete
 * run may be computed op by op (run_ops) when s is set for it (2: recording its event places,
 * run_ops rec). */
static int run(dp_sim *s, const int *assignment, int prefix, int ops, dp_sim_result *res, dp_error *err)
{
    const dp_graph *g = s->g;
    s->tables_last = 0; /* until its sync, if it has one */
    const int n = s->n, D = s->D;
    /* the device ids in range. A run op by op checks the ops whose device changed since its
     * last run, in ops_tables_sync's scan (every op's device was in range there before). Else
     * one pass without branches (a unsigned compare per op, which the compiler vectorises; a
     * test and branch per op was 2 to 3% of a simulation of a 100-op graph, issue 31), then
     * the first op out of range, named, when there is one */
    const int op_order = ops && s->ops_on && !prefix && !s->conv_p && !s->lz_p && s->stop_op < 0;
    unsigned bad = 0;
    if (op_order) {
        const int v = ops_tables_sync(s, assignment);
        if (v >= 0) return device_error(s, "assignment", v, assignment[v], err);
    } else if (prefix)
        for (int v = 0; v < n; v++) bad |= assignment[v] != -1 && (unsigned)assignment[v] >= (unsigned)D;
    else
        for (int v = 0; v < n; v++) bad |= (unsigned)assignment[v] >= (unsigned)D;
    if (bad)
        for (int v = 0; v < n; v++) {
            if (prefix && assignment[v] == -1) continue;
            if (assignment[v] < 0 || assignment[v] >= D) return device_error(s, "assignment", v, assignment[v], err);
        }
    if (prefix)
        for (int v = 0; v < n; v++) {
            if (assignment[v] < 0) {
                s->start[v] = s->end[v] = s->ready[v] = -1;
                continue;
            }
            for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
                int u = g->edge_src[g->pred_edge[q]];
                if (assignment[u] < 0)
                    return dp_error_set(err, DP_EINVAL, "prefix assignment: op %d (\"%s\") is placed but its predecessor "
                                        "%d (\"%s\") is not", v, g->op_name[v], u, g->op_name[u]);
            }
        }
    s->dev = assignment;
    s->delta_p = NULL;
    s->n_kept = s->n_rorder = 0;
    if (op_order) {
        double over;
        int over_bound;
        if (run_ops(s, s->bound, &over, &over_bound, ops == 2)) {
            s->n_op_order++;
            s->exceeded = over;
            s->over_bound = over_bound;
            s->stopped = 0;
            s->now = s->makespan;
            s->n_events = s->full_events;
            if (s->bound == INFINITY) transfer_totals(s);
            DP_SIM_RESULT_RECORDS(res, s);
            return DP_OK;
        }
        s->n_rorder = 0;
    }
    evq_clear(&s->qc);
    evq_clear(&s->qx);
    s->seq = s->seq_base = 0;
    s->fifo_head = s->fifo_tail = 0;
    s->now = s->makespan = 0;
    s->exceeded = INFINITY;
    s->over_bound = 0;
    s->stopped = 0;
    s->n_events = s->n_transfers = 0;
    s->volume = 0;
    memset(s->arrived, 0, (size_t)n * sizeof(int));
    devices_clear(s);
    s->conv_at = INFINITY;
    s->n_diff = 0;
    if (s->conv_p) {
        /* a delta run from 0 that may converge: its ops are all, none written yet */
        for (int v = 0; v < n; v++) {
            s->fut[v] = v;
            s->start[v] = s->end[v] = s->ready[v] = INFINITY;
            s->arr_next[v] = -INFINITY; /* converged() counts p's arrivals */
        }
        s->n_fut = n;
    }
    /* set-up at time 0: sources become ready in op order */
    for (int i = 0; i < g->n_sources; i++)
        if (assignment[g->sources[i]] >= 0) fifo_push(s, EV_READY, (uint32_t)g->sources[i]);
    loop(s);
    if (s->bound == INFINITY) transfer_totals(s); /* a bounded run reports a cost only */
    DP_SIM_RESULT_RECORDS(res, s);
    return DP_OK;
}

int dp_sim_run(dp_sim *s, const int *assignment, dp_sim_result *res, dp_error *err)
{
    return run(s, assignment, 0, 1, res, err);
}

int dp_sim_run_prefix(dp_sim *s, const int *assignment, dp_sim_result *res, dp_error *err)
{
    return run(s, assignment, 1, 0, res, err);
}

int dp_sim_run_bounded(dp_sim *s, const int *assignment, double bound, double *cost, int *exceeded, dp_error *err)
{
    dp_sim_result r;
    s->bound = bound;
    int rc = run(s, assignment, 0, 1, &r, err);
    s->bound = INFINITY;
    if (rc != DP_OK) return rc;
    *exceeded = s->over_bound;
    *cost = *exceeded ? s->exceeded : r.makespan;
    /* a makespan above a negative bound with every event at time 0: no instant passed the bound
     * (tests/test_delta.c bounded_verdict_is_cost_above_bound) */
    if (!*exceeded && *cost > bound) *exceeded = 1;
    return DP_OK;
}

long dp_sim_tables_gen(const dp_sim *s)
{
    return s->tables_last ? s->tables_gen : -1;
}

int dp_sim_run_bounded_changed(dp_sim *s, const int *assignment, long gen, const int *changed, int k, double bound,
                               double *cost, int *exceeded, dp_error *err)
{
    if (k < 0 || (k > 0 && !changed)) return dp_error_set(err, DP_EINVAL, "%s: a bounded run's changed ops: %d of them", s->g->source, k);
    for (int i = 0; i < k; i++)
        if (changed[i] < 0 || changed[i] >= s->n)
            return dp_error_set(err, DP_EINVAL, "%s: a bounded run's changed op %d is not an op (0..%d)", s->g->source,
                                changed[i], s->n - 1);
    if (gen >= 0 && gen == dp_sim_tables_gen(s)) { /* (a generation >= 0: the tables are set) */
        s->hint = changed;
        s->hint_k = k;
    }
    const int rc = dp_sim_run_bounded(s, assignment, bound, cost, exceeded, err);
    s->hint = NULL;
    s->hint_k = -1;
    return rc;
}

/* ---- incremental prefix simulation (dp_sim.h) ---- */

dp_sim_prefix *dp_sim_prefix_alloc(int n_ops, int n_devices)
{
    dp_sim_prefix *p = dp_alloc_calloc(1, sizeof *p);
    if (!p) return NULL;
    const size_t n = n_ops > 0 ? (size_t)n_ops : 1, D = n_devices > 0 ? (size_t)n_devices : 1;
    p->n_ops = n_ops;
    p->n_devices = n_devices;
    p->rank = dp_alloc_malloc(n * sizeof(int));
    p->dev_ops = dp_alloc_calloc(D, sizeof(int *));
    p->dev_n = dp_alloc_calloc(D, sizeof(int));
    p->dev_cap = dp_alloc_calloc(D, sizeof(int));
    p->start = dp_alloc_calloc(n, sizeof(double));
    p->end = dp_alloc_calloc(n, sizeof(double));
    p->ready = dp_alloc_calloc(n, sizeof(double));
    p->seq_done = dp_alloc_malloc(n * sizeof(uint64_t));
    p->seq_fin = dp_alloc_malloc(n * sizeof(uint64_t));
    p->seq_ready = dp_alloc_malloc(n * sizeof(uint64_t));
    p->placed = dp_alloc_malloc(n * sizeof(int));
    p->changed = dp_alloc_malloc(n * sizeof(int));
    p->dev = dp_alloc_malloc(n * sizeof(int));
    if (!p->dev || !p->start || !p->end || !p->ready || !p->seq_done || !p->seq_fin || !p->seq_ready || !p->placed || !p->changed ||
        !p->rank || !p->dev_ops || !p->dev_n || !p->dev_cap) {
        dp_sim_prefix_free(p);
        return NULL;
    }
    dp_sim_prefix_reset(p);
    return p;
}

void dp_sim_prefix_free(dp_sim_prefix *p)
{
    if (!p) return;
    free(p->start); free(p->end); free(p->ready);
    free(p->seq_done); free(p->seq_fin); free(p->seq_ready);
    free(p->placed); free(p->changed); free(p->rank); free(p->dev);
    for (int d = 0; p->dev_ops && d < p->n_devices; d++) free(p->dev_ops[d]);
    free(p->dev_ops); free(p->dev_n); free(p->dev_cap);
    free(p);
}

void dp_sim_prefix_reset(dp_sim_prefix *p)
{
    p->n_placed = p->n_changed = 0;
    p->seq_next = 0;
    p->makespan = 0;
    p->op_order = 0;
    for (int d = 0; d < p->n_devices; d++) p->dev_n[d] = 0;
}

/* the first index of device d's list whose op ends at or after t (the lists' ends never
 * decrease) */
/* the first index of device d's list whose op's time (time: p's ready, start or end, which never
 * decrease along the list) is at or after t, or after t when strict */
static inline int list_first_at(const dp_sim_prefix *p, const double *time, int d, double t, int strict)
{
    const int *a = p->dev_ops[d];
    int lo = 0, hi = p->dev_n[d];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const double x = time[a[mid]];
        if (x < t || (strict && x == t)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int first_ending_at(const dp_sim_prefix *p, int d, double t)
{
    return list_first_at(p, p->end, d, t, 0);
}

/* Rebuild the engine's state at the start of instant t > 0 and run it to the end (dp_sim.h).
 * p is the schedule the state is rebuilt from; the ops with s->moved[x] set (moved[0..n_moved))
 * are placed anew at t: none of their events happened before t (p's ops: READY at or after t),
 * so they start the resumed run not ready, counting the inputs that reach their device
 * (assignment) before t. listed: the moved ops are in p's device lists (a delta run) or not
 * (an op added to a prefix). Every other op keeps the device p's lists give it. s->fut[0..*k)
 * receives the ops simulated again, whose start, end, ready and sequence numbers are then s's
 * (up to the instant a run that converged stopped at); s->cut[d] the first index of device d's
 * list among p's ops ending at or after t. A delta run (listed) lists those ops of p and the
 * moved ops; an op added to a prefix (a probe or a commit) lists the ops running or queued at t,
 * the added op and, after the run, the ops it set up: every op ending at or after t when the
 * run went to the end, fewer when it stopped (a probe at the added op's start, a commit that
 * converged), so that such a run walks no list past what it reached (issue 30: a scan of every
 * op ending after t, each probe and commit). */
static void resume(dp_sim *s, const dp_sim_prefix *p, const int *assignment, const int *moved, int n_moved, int listed,
                   double t, int *k)
{
    const dp_graph *g = s->g;
    int *F = s->fut, nf = 0;
    s->delta_p = NULL;
    /* an op added to a prefix (not listed): the ops not ready at t are set up lazily (lazy_setup;
     * the copies in flight at t below), so F starts with each list up to its first op ready at
     * or after t (ready never decreases along it), and the ops the run sets up are added to it
     * when it ends: a commit that converges soon no longer walks every op ending after t (a
     * tenth of them reached, issue 30) */
    const int lazy = !listed;
    for (int d = 0; d < s->D; d++) {
        const int *a = p->dev_ops[d];
        s->cut[d] = first_ending_at(p, d, t);
        if (lazy)
            for (int i = s->cut[d]; i < p->dev_n[d] && p->ready[a[i]] < t; i++) F[nf++] = a[i];
        else
            for (int i = s->cut[d]; i < p->dev_n[d]; i++) F[nf++] = a[i];
    }
    for (int i = 0; i < n_moved; i++) {
        s->moved[moved[i]] = 1;
        if (!listed) F[nf++] = moved[i];
    }
    s->dev = assignment;
    s->n_kept = s->n_rorder = 0;
    evq_clear(&s->qc);
    evq_clear(&s->qx);
    s->seq = s->seq_base = p->seq_next;
    s->fifo_head = s->fifo_tail = 0;
    s->now = t;
    s->makespan = 0;
    s->exceeded = INFINITY;
    s->over_bound = 0;
    s->stopped = 0;
    s->n_events = s->n_transfers = 0;
    s->volume = 0;
    devices_clear(s);
    /* F runs over each device's list in queue order, so the ops running or queued at t come in
     * the order of their device's queue (the running one first: it arrived first); arrived[]
     * counts the others' inputs on their device before t. Only the times and event places the
     * run does not write again are copied from p (a running op's start, READY and COMPUTE_DONE,
     * a queued op's READY): a complete run writes every other one of F's ops, and a run stopped
     * by its bound or a probe is never committed (copying them all was 4% of an annealing move,
     * issue 31) */
    /* a run that may converge tells the times it wrote from stale ones (converged()); a lazy
     * run's ops not ready at t get theirs in lazy_setup */
    const int conv = s->conv_p != NULL;
    s->conv_at = INFINITY;
    s->n_diff = 0;
    s->lz_p = lazy ? p : NULL;
    s->lz_t = t;
    s->n_touched = 0;
    if (lazy && ++s->touch_stamp == 0) {
        memset(s->touch, 0, (size_t)s->n * sizeof *s->touch);
        s->touch_stamp = 1;
    }
    for (int i = 0; i < nf; i++) {
        int x = F[i], dx = assignment[x];
        const int mv = s->moved[x];
        if (conv) s->start[x] = s->end[x] = s->ready[x] = INFINITY;
        assert(!lazy || mv || p->ready[x] < t);
        s->arrived[x] = 0;
        /* a lazy run's ops running or queued at t are set up (converged()) */
        if (lazy) s->touch[x] = s->touch_stamp;
        if (!mv && p->start[x] < t) {
            /* running at t (a zero-time op started before t has ended before t) */
            assert(p->end[x] > p->start[x]);
            s->start[x] = p->start[x];
            s->ready[x] = p->ready[x];
            s->seq_done[x] = p->seq_done[x];
            s->seq_ready[x] = p->seq_ready[x];
            s->busy_flag[dx] = 1;
            evq_push(&s->qc, p->end[x], p->seq_done[x], (uint32_t)EV_COMPUTE_DONE << EV_SHIFT | (uint32_t)x);
            s->cdiff[x] = 0; /* p's own */
            s->kept[s->n_kept++] = x;
        } else if (!mv && p->ready[x] < t) {
            /* queued at t, behind the ops of its device's queue before it in F */
            assert(s->busy_flag[dx]); /* between instants a device with a queue is busy */
            assert(s->qtail[dx] < 0 || p->seq_ready[s->qtail[dx]] < p->seq_ready[x]);
            s->ready[x] = p->ready[x];
            s->seq_ready[x] = p->seq_ready[x];
            queue_append(s, dx, x);
            s->kept[s->n_kept++] = x;
        } else {
            /* not ready at t: its inputs that arrived before t, the copies in flight pushed */
            double next;
            if (conv) {
                s->arrived[x] = s->arr_at[x] = inputs_before(s, p, assignment, x, t, 1, mv, 1, &next);
                s->arr_next[x] = next;
            } else {
                s->arrived[x] = inputs_before(s, p, assignment, x, t, 1, mv, 0, &next);
            }
        }
    }
    for (int i = 0; i < n_moved; i++) s->moved[moved[i]] = 0;
    if (lazy) {
        /* the moved op was set up above */
        for (int i = 0; i < n_moved; i++) {
            s->touch[moved[i]] = s->touch_stamp;
            s->touched[s->n_touched++] = moved[i];
        }
        /* the copies in flight at t to the ops not ready then: their producers ended before t,
         * no earlier than t less the longest transfer (widened by a relative 1e-9 against
         * rounding: a larger window only looks at more producers), each copy as resume() above
         * pushes it */
        const double lo = t - s->max_delay * (1 + 1e-9) - fabs(t) * 1e-12;
        for (int d = 0; d < s->D; d++) {
            const int *a = p->dev_ops[d];
            for (int i = first_ending_at(p, d, lo); i < s->cut[d]; i++) {
                const int u = a[i];
                for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
                    const int x = g->edge_dst[e], dx = assignment[x];
                    if (!s->first_copy[e] || dx < 0 || s->touch[x] == s->touch_stamp || !(p->ready[x] >= t)) continue;
                    const double delay = d != dx ? dp_cost_comm(s->c, e, d, dx) : 0;
                    if (delay > 0 && p->end[u] + delay >= t) {
                        evq_push(&s->qx, p->end[u] + delay, p->seq_fin[u] + (uint64_t)(e - g->succ_ptr[u]),
                                 (uint32_t)EV_TRANSFER_DONE << EV_SHIFT | (uint32_t)e);
                        s->xdiff[e] = 0; /* p's own: neither end moved */
                    }
                }
            }
        }
    }
    s->n_fut = nf;
    loop(s);
    s->lz_p = NULL;
    if (lazy) {
        /* the ops the run set up after the moved ones (touched[0..n_moved), in F already); a
         * run that stops early (a probe, a commit that converges) leaves out the ops it never
         * reached, which keep p's times */
        for (int i = n_moved; i < s->n_touched; i++) F[nf++] = s->touched[i];
    }
    *k = nf;
}

/* p takes the times and event places of the ops s simulated again (s->fut[0..k)), placed by
 * assignment: they were the suffixes of p's device lists from s->cut (and the ops placed anew)
 * and are again, in their new queue order: the ops running or queued when the run began
 * (s->kept, in queue order), then the ops in the order the run made them ready (s->rorder).
 * Each device's list has room for its new length (the caller's guarantee). */
static void commit_resimulated(const dp_sim *s, dp_sim_prefix *p, const int *assignment, int k)
{
    /* the arrays in locals: a store through one of them would otherwise reload every pointer
     * from p and s (issue 31: the commit was 5% of an annealing move on Llama-layer) */
    const int *fut = s->fut;
    const double *s_start = s->start, *s_end = s->end, *s_ready = s->ready;
    const uint64_t *s_done = s->seq_done, *s_fin = s->seq_fin, *s_sready = s->seq_ready;
    double *p_start = p->start, *p_end = p->end, *p_ready = p->ready;
    uint64_t *p_done = p->seq_done, *p_fin = p->seq_fin, *p_sready = p->seq_ready;
    int *p_dev = p->dev, *changed = p->changed;
    for (int i = 0; i < k; i++) {
        const int x = fut[i];
        p_start[x] = s_start[x];
        p_end[x] = s_end[x];
        p_ready[x] = s_ready[x];
        p_done[x] = s_done[x];
        p_fin[x] = s_fin[x];
        p_sready[x] = s_sready[x];
        p_dev[x] = assignment[x];
        changed[i] = x;
    }
    p->n_changed = k;
    if (s->seq > p->seq_next) p->seq_next = s->seq;
    /* the resimulated ops ended at or after the instant the run resumed at, the others before:
     * the last end is the run's */
    p->makespan = s->makespan;
    assert(s->n_kept + s->n_rorder == k);
    int *dev_n = p->dev_n, *const *dev_ops = p->dev_ops;
    for (int d = 0; d < s->D; d++) dev_n[d] = s->cut[d];
    for (int part = 0; part < 2; part++) {
        const int *ops = part ? s->rorder : s->kept, n_ops = part ? s->n_rorder : s->n_kept;
        for (int i = 0; i < n_ops; i++) {
            const int x = ops[i], d = assignment[x];
            assert(dev_n[d] < p->dev_cap[d]);
            dev_ops[d][dev_n[d]++] = x;
        }
    }
}

/* The least sequence number of p's events on device d's list at a time after t (strict) or at
 * or after t (UINT64_MAX: none): its first op READY, started and ended then. Along a list the
 * three times never decrease and each kind of event is numbered in the list's order (queue
 * order: READY; one op at a time: starts and ends). */
static uint64_t first_event_after(const dp_sim_prefix *p, int d, double t, int strict)
{
    const int *a = p->dev_ops[d], n = p->dev_n[d];
    const double *time[3] = {p->ready, p->start, p->end};
    const uint64_t *seq[3] = {p->seq_ready, p->seq_done, p->seq_fin};
    uint64_t m = UINT64_MAX;
    for (int j = 0; j < 3; j++) {
        const int i = list_first_at(p, time[j], d, t, strict);
        if (i < n && seq[j][a[i]] < m) m = seq[j][a[i]];
    }
    return m;
}

/* How far a prefix addition's commit moves p's later events when the run's numbers do not fit
 * below them: the run's count twice, so that room is left for the next runs converging near the
 * same instant. On the 31,374-op rollout of issue 30 a commit that converged had to move them in
 * 71% of commits with the count alone, 52% with twice it (and with five times it). The numbers
 * still grow linearly: by at most twice each run's events. */
#define PREFIX_SEQ_SLACK(up) (2 * (up))

/* p takes the schedule of a delta run that converged at the end of instant tau = s->conv_at
 * (converged()): its ops' events up to tau are the run's, the later ones p's own (the same
 * times and order). The sequence numbers keep the order of all of them (the run's events, its
 * pending ones included, were created by tau, p's later ones after; renumbering below). Each
 * device's list: the ops before cut, the ops the run found running or queued (s->kept) or made
 * ready (s->rorder), then p's ops of the list made ready after tau (unmoved: a moved op is done
 * by tau), in p's order. p's makespan stays. added: the op a prefix addition placed (not in p
 * before: every time and place of its events is the run's, all by tau), -1 for a delta run. */
static void commit_converged(const dp_sim *s, dp_sim_prefix *p, const int *assignment, int k, int added)
{
    const double tau = s->conv_at;
    /* Renumbering. Numbers grow with the order events are created in (a run numbers its events
     * from seq_base: above every number of the state it resumed from, or from 0 in a run from
     * the start, which leaves none of p's events before tau), so p's events created before tau
     * are numbered below least, the least number of those created after tau. The run's events
     * (numbers seq_base and up) are renumbered to start at at, and p's later ones up by shift,
     * to follow them: the order is kept. (Shifting p's later events above the run's instead
     * doubled the numbers at each commit when least was old: they overflowed 64 bits after about
     * 60 commits of a long rollout.) The run's numbers below seq_base are p's own (the ops
     * running or queued at the instant it resumed at, created before it).
     * A delta run (added < 0) takes least over its ops (s->fut: every op ending at or after the
     * instant) and shifts p's later events by the run's count. A prefix addition's run (lazy:
     * s->fut holds the ops it set up, a tenth of those ending after the instant t on a long
     * rollout) takes least from the lists, and the numbers from the first of p's events created
     * at or after t (lo, whose events the run made again: free) to least are room: when the run's
     * count fits there it is numbered below least and nothing later moves; else p's later
     * events move up by the count and PREFIX_SEQ_SLACK, over each list from its first op ending
     * after tau. */
    const uint64_t base = s->seq_base, up = s->seq - base;
    uint64_t least = UINT64_MAX, shift = up;
    if (added < 0) {
        for (int i = 0; i < k; i++) {
            const int x = s->fut[i];
            if (p->ready[x] > tau && p->seq_ready[x] < least) least = p->seq_ready[x];
            if (p->start[x] > tau && p->seq_done[x] < least) least = p->seq_done[x];
            if (p->end[x] > tau && p->seq_fin[x] < least) least = p->seq_fin[x];
        }
    } else {
        uint64_t lo = UINT64_MAX;
        for (int d = 0; d < s->D; d++) {
            const uint64_t a = first_event_after(p, d, tau, 1), b = first_event_after(p, d, s->lz_t, 0);
            if (a < least) least = a;
            if (b < lo) lo = b;
        }
        if (least != UINT64_MAX) {
            if (lo <= least && least - lo >= up) {
                shift = 0;
            } else {
                shift = PREFIX_SEQ_SLACK(up);
                for (int d = 0; d < s->D; d++) {
                    const int *a = p->dev_ops[d];
                    for (int i = list_first_at(p, p->end, d, tau, 1); i < p->dev_n[d]; i++) {
                        const int x = a[i];
                        if (p->ready[x] > tau) p->seq_ready[x] += shift;
                        if (p->start[x] > tau) p->seq_done[x] += shift;
                        p->seq_fin[x] += shift;
                    }
                }
            }
        }
    }
    const uint64_t at = least == UINT64_MAX ? base : least - (shift ? 0 : up);
    assert(least == UINT64_MAX || least <= p->seq_next);
    int *cnt = s->dev_cnt, *len = s->dev_tail;
    for (int d = 0; d < s->D; d++) cnt[d] = 0;
    for (int i = 0; i < s->n_kept; i++) cnt[assignment[s->kept[i]]]++;
    for (int i = 0; i < s->n_rorder; i++) cnt[assignment[s->rorder[i]]]++;
    for (int d = 0; d < s->D; d++) {
        int *a = p->dev_ops[d], i = s->cut[d];
        while (i < p->dev_n[d] && p->ready[a[i]] <= tau) i++;
        const int tail = p->dev_n[d] - i;
        assert(s->cut[d] + cnt[d] + tail <= p->dev_cap[d]);
        /* a device with no op yet may have no list (a prefix's lists grow on demand) */
        if (tail > 0) memmove(a + s->cut[d] + cnt[d], a + i, (size_t)tail * sizeof *a);
        len[d] = s->cut[d] + cnt[d] + tail;
        cnt[d] = s->cut[d]; /* where the run's ops go */
    }
    for (int part = 0; part < 2; part++) {
        const int *ops = part ? s->rorder : s->kept, n_ops = part ? s->n_rorder : s->n_kept;
        for (int i = 0; i < n_ops; i++) {
            const int x = ops[i], d = assignment[x];
            p->dev_ops[d][cnt[d]++] = x;
        }
    }
    for (int d = 0; d < s->D; d++) p->dev_n[d] = len[d];
#define RUN_NUMBER(q) ((q) >= base ? (q) - base + at : (q))
    /* a delta run's later events move here (a prefix addition's moved above) */
    const uint64_t later = added < 0 ? up : 0;
    int n_changed = 0;
    for (int i = 0; i < k; i++) {
        const int x = s->fut[i];
        /* the ops with a time by tau take the run's times: the changed list (the others keep
         * theirs) */
        if (x == added || p->ready[x] <= tau) p->changed[n_changed++] = x;
        if (x == added) {
            /* every event of the added op was the run's, by tau */
            p->ready[x] = s->ready[x];
            p->seq_ready[x] = RUN_NUMBER(s->seq_ready[x]);
            p->start[x] = s->start[x];
            p->seq_done[x] = RUN_NUMBER(s->seq_done[x]);
            p->end[x] = s->end[x];
            p->seq_fin[x] = RUN_NUMBER(s->seq_fin[x]);
        } else {
            if (p->ready[x] <= tau) {
                p->ready[x] = s->ready[x];
                p->seq_ready[x] = RUN_NUMBER(s->seq_ready[x]);
            } else {
                p->seq_ready[x] += later;
            }
            if (p->start[x] <= tau) {
                p->start[x] = s->start[x];
                p->seq_done[x] = RUN_NUMBER(s->seq_done[x]);
            } else {
                p->seq_done[x] += later;
            }
            if (p->end[x] <= tau) {
                p->end[x] = s->end[x];
                p->seq_fin[x] = RUN_NUMBER(s->seq_fin[x]);
            } else {
                p->seq_fin[x] += later;
            }
        }
        p->dev[x] = assignment[x];
    }
#undef RUN_NUMBER
    p->n_changed = n_changed;
    p->seq_next = least == UINT64_MAX ? at + up : p->seq_next + shift; /* p's later events were below p->seq_next */
}

/* of the k ops of a run that converged (s->fut), those it simulated: ready by the instant it
 * stopped at (the others' times after it are the incumbent's) */
static long reached(const dp_sim *s, int k)
{
    long n = 0;
    for (int i = 0; i < k; i++) n += s->ready[s->fut[i]] <= s->conv_at;
    return n;
}

int dp_sim_prefix_add(dp_sim *s, dp_sim_prefix *p, const int *assignment, int v, int commit, double *start,
                      double *ready, dp_error *err)
{
    s->tables_last = 0; /* until its sync, if it has one (dp_sim_tables_gen) */
    const dp_graph *g = s->g;
    if (v < 0 || v >= s->n) return dp_error_set(err, DP_EINVAL, "prefix: op %d out of range 0..%d", v, s->n - 1);
    const int dv = assignment[v];
    if (dv < 0 || dv >= s->D) return device_error(s, "prefix", v, dv, err);
    /* r: when v's inputs are all on dv (its READY) */
    double r = 0;
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
        int e = g->pred_edge[q], u = g->edge_src[e], du = assignment[u];
        if (du < 0 || du >= s->D)
            return dp_error_set(err, DP_EINVAL, "prefix: op %d (\"%s\") is added but its predecessor %d (\"%s\") is not "
                                "placed", v, g->op_name[v], u, g->op_name[u]);
        if (!s->first_copy[e]) continue;
        double a = p->end[u] + (du != dv ? dp_cost_comm(s->c, e, du, dv) : 0);
        if (a > r) r = a;
    }
    /* room for v in its device's list, before anything changes */
    if (commit && p->dev_n[dv] == p->dev_cap[dv]) {
        int *a = dp_heap_grow(p->dev_ops[dv], &p->dev_cap[dv], p->dev_n[dv] + 1, sizeof(int));
        if (!a) return dp_error_set(err, DP_ENOMEM, "prefix: out of memory for device %d's list", dv);
        p->dev_ops[dv] = a;
    }
    int k;
    /* a probe needs v's start alone: its run stops after that instant (the events after it
     * change nothing before it) */
    s->stop_op = commit ? -1 : v;
    /* resumed at a finite READY only: a run resumed at INFINITY (an infinite transfer in a cost
     * table made by hand) cannot rebuild the state there, and runs from time 0 */
    if (r > 0 && r < INFINITY) {
        /* a commit's run may stop once its state is p's again with v done (converged()): v has
         * no placed successor, so it then changes nothing later. p's entries for v are stale:
         * its device is set to none, so that no event of v's is taken for p's */
        const int conv = commit && s->converge_prefix;
        if (conv) {
            p->dev[v] = -1;
            s->conv_p = p;
            s->conv_added = v;
            s->moved_ops[0] = v;
            s->n_moved = 1;
        }
        resume(s, p, assignment, &v, 1, 0, r, &k);
        s->conv_p = NULL;
        s->conv_added = -1;
        p->n_resumed++;
    } else {
        dp_sim_result res;
        int rc = run(s, assignment, 1, 0, &res, err);
        if (rc != DP_OK) {
            s->stop_op = -1;
            return rc;
        }
        k = 0;
        for (int i = 0; i < p->n_placed; i++) s->fut[k++] = p->placed[i];
        s->fut[k++] = v;
        for (int d = 0; d < s->D; d++) s->cut[d] = 0;
        p->n_full++;
    }
    s->stop_op = -1;
    if (start) *start = s->start[v];
    if (ready) *ready = s->ready[v];
    const double tau = s->conv_at;
    if (tau < INFINITY) {
        /* converged at the end of tau: the ops it reached are those ready by tau (the others'
         * times after tau are p's); a time of p after tau stays */
        p->n_converged++;
        /* one pass: the ops it reached (reached()) and, of those, the ones it retimed */
        for (int i = 0; i < k; i++) {
            const int x = s->fut[i];
            if (!(s->ready[x] <= tau)) continue;
            p->n_resimulated++;
            if (x == v || (p->ready[x] <= tau && p->ready[x] != s->ready[x]) ||
                (p->start[x] <= tau && p->start[x] != s->start[x]) || (p->end[x] <= tau && p->end[x] != s->end[x]))
                p->n_retimed++;
        }
    } else {
        p->n_resimulated += k;
        if (commit)
            for (int i = 0; i < k; i++) {
                int x = s->fut[i];
                if (x == v || p->ready[x] != s->ready[x] || p->start[x] != s->start[x] || p->end[x] != s->end[x])
                    p->n_retimed++;
            }
    }
    if (!commit) return DP_OK;
    p->rank[v] = p->n_placed;
    p->placed[p->n_placed++] = v;
    if (tau < INFINITY) commit_converged(s, p, assignment, k, v);
    else commit_resimulated(s, p, assignment, k);
    return DP_OK;
}

/* ---- delta simulation (dp_sim.h) ---- */

/* every device list of p with room for every op (DP_ENOMEM, the lists grown so far kept) */
static int lists_room(const dp_sim *s, dp_sim_prefix *p, dp_error *err)
{
    for (int d = 0; d < s->D; d++)
        if (p->dev_cap[d] < s->n) {
            int *a = dp_heap_grow(p->dev_ops[d], &p->dev_cap[d], s->n, sizeof(int));
            if (!a) return dp_error_set(err, DP_ENOMEM, "delta: out of memory for device %d's list", d);
            p->dev_ops[d] = a;
        }
    return DP_OK;
}

int dp_sim_prefix_set(dp_sim *s, dp_sim_prefix *p, const int *assignment, dp_sim_result *res, dp_error *err)
{
    s->tables_last = 0; /* until its sync, if it has one (dp_sim_tables_gen) */
    if (p->n_ops != s->n || p->n_devices != s->D)
        return dp_error_set(err, DP_EINVAL, "delta: the prefix state is for %d ops on %d devices, the simulator %d on %d",
                            p->n_ops, p->n_devices, s->n, s->D);
    /* every list has room for every op: a delta run's commit never allocates */
    const int room = lists_room(s, p, err);
    if (room != DP_OK) return room;
    dp_sim_result r;
    const long op_order_runs = s->n_op_order;
    int rc = run(s, assignment, 0, 2, &r, err);
    if (rc != DP_OK) return rc;
    if (res) *res = r;
    dp_sim_prefix_reset(p);
    p->op_order = s->n_op_order > op_order_runs;
    for (int v = 0; v < s->n; v++) {
        p->rank[v] = v;
        p->placed[v] = v;
        s->fut[v] = v;
    }
    p->n_placed = s->n;
    for (int d = 0; d < s->D; d++) s->cut[d] = 0;
    commit_resimulated(s, p, assignment, s->n);
    p->n_full++;
    return DP_OK;
}

/* an op-order incumbent's event places stay below this (the READY keys shift them by
 * OP_KEY_SHIFT bits): a delta run that could pass it runs from time 0, which numbers from 0 */
#define OP_SEQ_MAX ((uint64_t)1 << 35)

/* The delta run of an op-order incumbent p (dp_sim.h, "Op by op"): the op-order run resumed at
 * t (run_ops_resumed), or from time 0 when t is 0 or the numbers would pass OP_SEQ_MAX; the
 * event loop from time 0 when the op-order run does not apply (a time or delay that does not
 * move the clock, or s set off by dp_sim_set_op_order; its commit makes p the event loop's, for
 * good: a later op-order run does not record p again, which only dp_sim_prefix_set does). The
 * ops simulated again: s->kept and s->rorder (a complete run from 0 made every op ready), which
 * dp_sim_delta_commit lists in s->fut. */
static int delta_ops(dp_sim *s, dp_sim_prefix *p, const int *assignment, int n_moved, double t, double bound,
                     double *cost, int *exceeded, dp_error *err)
{
    double over = INFINITY;
    int over_bound = 0, k = 0, ok = 0;
    s->dev = assignment;
    s->delta_p = NULL;
    s->delta_events = 0;
    s->conv_at = INFINITY;
    if (t > bound) t = bound;
    if (t > 0 && s->ops_on && p->seq_next + 3 * (uint64_t)s->n < OP_SEQ_MAX &&
        run_ops_resumed(s, p, s->moved_ops, n_moved, t, bound, &over, &over_bound)) {
        ok = 1;
        k = s->n_kept + s->n_rorder;
        p->n_resumed++;
    } else {
        for (int d = 0; d < s->D; d++) s->cut[d] = 0;
        s->n_kept = 0;
        const int bad = s->ops_on ? ops_tables_sync(s, assignment) : -1; /* checked: dp_sim_run_delta */
        assert(bad < 0);
        (void)bad;
        if (s->ops_on && run_ops(s, bound, &over, &over_bound, 1)) {
            ok = 1;
        } else {
            dp_sim_result r;
            s->bound = bound;
            const int rc = run(s, assignment, 0, 0, &r, err);
            s->bound = INFINITY;
            if (rc != DP_OK) return rc;
            over = s->exceeded;
            over_bound = s->over_bound;
            s->delta_events = 1;
        }
        k = s->n;
        p->n_full++;
    }
    if (ok) s->n_op_order++;
    p->n_resimulated += k;
    if (!over_bound && s->makespan > bound) {
        /* as dp_sim_run_bounded: a makespan of 0 above a negative bound */
        over_bound = 1;
        over = s->makespan;
    }
    *exceeded = over_bound;
    *cost = over_bound ? over : s->makespan;
    s->delta_p = over_bound ? NULL : p;
    s->delta_k = k;
    return DP_OK;
}

/* ops compared at once by dp_sim_run_delta's scan for the moved ops (a power of two) */
#define DELTA_SCAN_BLOCK 16

int dp_sim_run_delta(dp_sim *s, dp_sim_prefix *p, const int *assignment, double bound, double *cost, int *exceeded,
                     dp_error *err)
{
    s->tables_last = 0; /* until its sync, if it has one (dp_sim_tables_gen) */
    const dp_graph *g = s->g;
    if (p->n_ops != s->n || p->n_devices != s->D || p->n_placed != s->n)
        return dp_error_set(err, DP_EINVAL, "delta: the prefix state holds no complete schedule of this graph "
                            "(dp_sim_prefix_set)");
    /* the moved ops, and t: the least instant at which one of them has an event in either run
     * (its READY in p's schedule, or where its inputs reach its new device; dp_sim.h) */
    int n_moved = 0;
    double t = INFINITY, t_ops = INFINITY;
    const int *old_dev = p->dev;
    for (int v = 0; v < s->n; v++) {
        /* a block of ops none of which moved is passed with one test: the block's OR of
         * differences is a loop the compiler vectorises (a test and branch per op was 2%
         * of an annealing move on Llama-layer, issue 31) */
        if ((v & (DELTA_SCAN_BLOCK - 1)) == 0 && v + DELTA_SCAN_BLOCK <= s->n) {
            unsigned diff = 0;
            for (int j = 0; j < DELTA_SCAN_BLOCK; j++) diff |= (unsigned)(assignment[v + j] ^ old_dev[v + j]);
            if (!diff) {
                v += DELTA_SCAN_BLOCK - 1;
                continue;
            }
        }
        const int dv = assignment[v];
        if (dv == old_dev[v]) continue;
        if (dv < 0 || dv >= s->D) return device_error(s, "assignment", v, dv, err);
        s->moved_ops[n_moved++] = v;
        /* v's new READY is no earlier than its unmoved inputs' arrivals on dv (a moved
         * producer's end may change, but not before t: skipping it only lowers the bound) */
        double r = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int e = g->pred_edge[q], u = g->edge_src[e], du = assignment[u];
            if (!s->first_copy[e] || du != p->dev[u]) continue;
            double a = p->end[u] + (du != dv ? dp_cost_comm(s->c, e, du, dv) : 0);
            if (a > r) r = a;
        }
        /* the op-order run: v's old device changes first at v's grant there (its READY only
         * queued it, dp_sim.h "Op by op") */
        const double r_ops = p->start[v] < r ? p->start[v] : r;
        if (r_ops < t_ops) t_ops = r_ops;
        if (p->ready[v] < r) r = p->ready[v];
        if (r < t) t = r;
    }
    /* what the commit checks its assignment against (O(moved)) */
    s->delta_n_moved = n_moved;
    for (int i = 0; i < n_moved; i++) s->moved_dev[i] = assignment[s->moved_ops[i]];
    if (n_moved == 0 && !(p->makespan > bound)) {
        /* the incumbent itself within the bound: its makespan; a commit keeps p */
        *exceeded = 0;
        *cost = p->makespan;
        s->delta_p = p;
        s->delta_k = -1;
        return DP_OK;
    }
    if (p->op_order) return delta_ops(s, p, assignment, n_moved, t_ops, bound, cost, exceeded, err);
    s->bound = bound;
    /* the run may stop once its state is p's (converged()) when p's makespan is within the
     * bound: the full run's cost is then p's makespan */
    const long phase = s->conv_phase;
    if (++s->conv_phase == s->conv_period) s->conv_phase = 0;
    const int conv = s->converge == 2 ? (phase < CONV_PROBE ? 1 : phase < 2 * CONV_PROBE ? 0 : s->conv_choice)
                                      : s->converge;
    s->conv_p = conv && !(p->makespan > bound) ? p : NULL;
    s->n_moved = n_moved;
    int k = 0, rc = DP_OK;
    /* a bounded run stops at the first instant past the bound: when that is before t, it is an
     * instant of the incumbent's schedule, which the run resumed at the bound finds */
    if (t > bound) t = bound;
    if (t > 0) {
        resume(s, p, assignment, s->moved_ops, n_moved, 1, t, &k);
        p->n_resumed++;
    } else {
        dp_sim_result r;
        rc = run(s, assignment, 0, 0, &r, err);
        for (int v = 0; v < s->n; v++) s->fut[v] = v;
        for (int d = 0; d < s->D; d++) s->cut[d] = 0;
        k = s->n;
        p->n_full++;
    }
    s->bound = INFINITY;
    s->conv_p = NULL;
    if (rc != DP_OK) return rc;
    if (phase < 2 * CONV_PROBE) {
        s->conv_events[phase < CONV_PROBE] += (double)s->n_events;
        if (phase == 2 * CONV_PROBE - 1) {
            s->conv_choice = s->conv_events[1] < CONV_GAIN * s->conv_events[0];
            s->conv_events[0] = s->conv_events[1] = 0;
            /* probed again after CONV_PERIOD runs, later after each choice of off that follows
             * one (a single one may be noise, or the search's first, hotter moves) */
            const int again = !s->conv_choice && !s->conv_last;
            s->conv_last = s->conv_choice;
            s->conv_period = !again ? CONV_PERIOD : s->conv_period < CONV_PERIOD_MAX ? 2 * s->conv_period : CONV_PERIOD_MAX;
        }
    }
    if (s->conv_at < INFINITY) {
        s->makespan = p->makespan;
        p->n_converged++;
        p->n_resimulated += reached(s, k);
    } else {
        p->n_resimulated += k;
    }
    *exceeded = s->over_bound;
    *cost = *exceeded ? s->exceeded : s->makespan;
    if (!*exceeded && *cost > bound) *exceeded = 1; /* as dp_sim_run_bounded */
    s->delta_p = *exceeded ? NULL : p;
    s->delta_k = k;
    return DP_OK;
}

/* assignment is the last delta run's: its moved ops on their devices in the run, and every other
 * op on p's device (O(n): blocks compared at once, as the run's scan) */
static int delta_same_assignment(const dp_sim *s, const dp_sim_prefix *p, const int *assignment)
{
    for (int i = 0; i < s->delta_n_moved; i++)
        if (assignment[s->moved_ops[i]] != s->moved_dev[i]) return 0;
    int n_diff = 0;
    for (int v = 0; v < s->n; v += DELTA_SCAN_BLOCK) {
        const int len = s->n - v < DELTA_SCAN_BLOCK ? s->n - v : DELTA_SCAN_BLOCK;
        unsigned diff = 0;
        for (int j = 0; j < len; j++) diff |= (unsigned)(assignment[v + j] ^ p->dev[v + j]);
        if (!diff) continue;
        for (int j = 0; j < len; j++) n_diff += assignment[v + j] != p->dev[v + j];
    }
    return n_diff == s->delta_n_moved;
}

int dp_sim_delta_commit(dp_sim *s, dp_sim_prefix *p, const int *assignment, dp_error *err)
{
    if (s->delta_p != p)
        return dp_error_set(err, DP_EINVAL, "delta: the simulator's last run was no complete delta run from this state");
    /* another assignment than the run's was made p's, with the run's schedule (a review) */
    if (!delta_same_assignment(s, p, assignment))
        return dp_error_set(err, DP_EINVAL, "delta: the assignment to commit is not the last delta run's");
    /* a schedule completed by dp_sim_prefix_add's commits has lists sized to the ops placed on
     * each device so far: every list gets room for every op first, as dp_sim_prefix_set gives
     * (a commit moved an op to a device whose list was full: an assertion, tests/test_delta.c
     * delta_from_prefix_built_schedule) */
    const int room = lists_room(s, p, err);
    if (room != DP_OK) return room;
    if (p->op_order && s->delta_k >= 0) {
        /* the ops an op-order delta run simulated again (delta_ops) */
        assert(s->n_kept + s->n_rorder == s->delta_k);
        memcpy(s->fut, s->kept, (size_t)s->n_kept * sizeof *s->fut);
        memcpy(s->fut + s->n_kept, s->rorder, (size_t)s->n_rorder * sizeof *s->fut);
    }
    if (s->delta_k >= 0 && s->conv_at < INFINITY) commit_converged(s, p, assignment, s->delta_k, -1);
    else if (s->delta_k >= 0) commit_resimulated(s, p, assignment, s->delta_k);
    if (p->op_order && s->delta_k >= 0) {
        /* the run's numbers are above p's (resumed) or all of p's (from time 0) */
        p->seq_next = s->seq;
        if (s->delta_events) p->op_order = 0;
    }
    s->delta_p = NULL;
    return DP_OK;
}

void dp_sim_set_direct(dp_sim *s, int on)
{
    s->direct = on != 0;
}

void dp_sim_set_op_order(dp_sim *s, int on)
{
    s->ops_on = on != 0 && times_positive(s->c);
}

void dp_sim_set_early_reject(dp_sim *s, int on)
{
    s->early_reject = on != 0;
}

long dp_sim_op_order_runs(const dp_sim *s)
{
    return s->n_op_order;
}

int dp_sim_op_order_on(const dp_sim *s)
{
    return s->ops_on;
}

void dp_sim_set_converge(dp_sim *s, int mode)
{
    s->converge = mode == 0 || mode == 1 ? mode : 2;
}

void dp_sim_set_converge_prefix(dp_sim *s, int on)
{
    s->converge_prefix = on != 0;
}

double dp_sim_utilisation(const dp_sim_result *res, int d)
{
    return res->makespan > 0 ? res->busy[d] / res->makespan : 0.0;
}

int dp_sim_write_trace(const dp_sim *s, const int *assignment, const char *path, dp_error *err)
{
    const dp_graph *g = s->g;
    const double us = 1e6 / g->time_scale;
    json_t *meta, *root = dp_sim_trace_root(g, &meta);
    json_t *evs = json_array();
    json_object_set_new(meta, "note", json_string("trace times are microseconds of the printed unit"));
    for (int d = 0; d < s->D; d++) {
        json_t *m = json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name", "ph", "M", "pid", 0,
                              "tid", d, "args", "name", "");
        char nm[32];
        snprintf(nm, sizeof nm, "device %d", d);
        json_object_set_new(json_object_get(m, "args"), "name", json_string(nm));
        json_array_append_new(evs, m);
    }
    for (int v = 0; v < g->n_ops; v++) {
        json_t *x = json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f}", "name", g->op_name[v], "cat", g->op_kind[v],
                              "ph", "X", "pid", 0, "tid", assignment[v], "ts", s->start[v] * us,
                              "dur", (s->end[v] - s->start[v]) * us);
        json_array_append_new(evs, x);
    }
    int flow = 0;
    for (int e = 0; e < g->n_edges; e++) {
        int u = g->edge_src[e], v = g->edge_dst[e];
        if (assignment[u] == assignment[v]) continue;
        json_array_append_new(evs, json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:f}", "name", "transfer", "cat", "transfer",
                                             "ph", "s", "id", flow, "pid", 0, "tid", assignment[u], "ts", s->end[u] * us));
        json_array_append_new(evs, json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:f}", "name", "transfer", "cat", "transfer",
                                             "ph", "f", "bp", "e", "id", flow, "pid", 0, "tid", assignment[v],
                                             "ts", s->start[v] * us));
        flow++;
    }
    json_object_set_new(root, "traceEvents", evs);
    int rc = dp_json_dump_atomic(root, path, JSON_COMPACT, err);
    json_decref(root);
    return rc;
}
