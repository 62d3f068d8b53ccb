/* dp_transfer_model.h (internal, not installed): what a transfer model gives dp_transfer.c.
 *
 * dp_transfer.c owns what every model shares (the workspace struct dp_transfer below: cost tables,
 * topology, the calibrated device pairs, the internal event queue, the list of ended transfers,
 * the traces) and the public interface of dp_transfer.h, which forwards to the model's entries.
 * A model owns its own state (x->state) and the behaviour: when a started transfer ends.
 *
 * Adding a transfer model is one file that defines a dp_transfer_model, one dp_transfer_kind in
 * dp_transfer.h and one line in dp_transfer.c's table (as SimGrid registers network models and
 * as the real executor's backends are added: dp_exec_backend.h). */
#ifndef DP_TRANSFER_MODEL_H
#define DP_TRANSFER_MODEL_H

#include "dp_alloc.h"
#include "dp_heap.h"
#include "dp_snap.h"
#include "dp_transfer.h"

/* internal event codes: kind << DP_TRANSFER_EV_SHIFT | id (the model chooses its kinds) */
#define DP_TRANSFER_EV_SHIFT 28
#define DP_TRANSFER_EV_MASK ((1u << DP_TRANSFER_EV_SHIFT) - 1)

typedef struct dp_transfer_model {
    const char *name;     /* what --transfer-model takes: "fixed", "fifo", "maxmin" */
    int needs_topology;   /* 1: it shares links, so it needs routes and channels */
    /* Seconds per byte of a lone transfer on route r under this model, the denominator of a
     * calibrated pair's bandwidth factor (dp_transfer.h); NULL: the model takes no calibration
     * of its own (fixed: dp_costmodel_costs calibrated its cost tables already). */
    double (*nominal_s_per_byte)(const dp_topology *t, const dp_topology_route_info *r);
    /* Allocate x->state and x->ev's storage (capacity: the most internal events pending at
     * once) for x->m transfers of x->K chunks on x->t, every array through x->owned (freed with
     * x); DP_ENOMEM (message set by the caller) when out of memory. */
    int (*alloc)(dp_transfer *x);
    /* Free what the model allocated outside x->owned; NULL: nothing. */
    void (*free)(dp_transfer *x);
    /* Forget every transfer (x's shared fields are reset by the caller). */
    void (*reset)(dp_transfer *x);
    /* As dp_transfer_start: transfer id from device a to b (a != b) at time now, on route r (NULL
     * without a topology; with one, x->src[id] and x->dst[id] are set). Returns 1 with *delay
     * when the end is known now, else 0. */
    int (*start)(dp_transfer *x, int id, int a, int b, const dp_topology_route_info *r, double now, double *delay);
    /* As dp_transfer_next_time. NULL: the earliest event of x->ev. */
    double (*next_time)(const dp_transfer *x);
    /* Process every internal event up to and including time t, appending the transfers that end
     * to x->done (x->n_done was set to 0 by the caller). NULL: nothing ever happens inside. */
    void (*advance)(dp_transfer *x, double t);
    /* Bytes held beyond what x->bytes_held counts (storage that grows during runs). */
    size_t (*extra_bytes)(const dp_transfer *x);
    /* Save or restore the model's own state (x->state) between two instants of a run, every
     * field the model reads in later events, through one function for both directions
     * (dp_snap.h; dp_transfer_snapshot calls it after the shared fields). A restore that must
     * grow storage and cannot sets sn->failed. NULL: no state of its own (fixed). */
    void (*snapshot)(dp_transfer *x, dp_snap *sn);
} dp_transfer_model;

extern const dp_transfer_model dp_transfer_model_fixed;
extern const dp_transfer_model dp_transfer_model_fifo;
extern const dp_transfer_model dp_transfer_model_maxmin;

struct dp_transfer {
    dp_transfer_kind kind;
    const dp_transfer_model *model;
    void *state;       /* the model's own */
    const dp_cost *c;
    const dp_topology *t;
    int D, m, K;       /* devices, transfers (edges), chunks (FIFO; 1 for the others) */
    dp_alloc_table owned;  /* every array of the workspace and of the model's state */
    dp_heap_evq ev;      /* the model's internal events (storage sized by its alloc) */
    long n_events;
    int trace;
    double now;
    /* per transfer */
    int *src, *dst;    /* devices (models with a topology) */
    /* per device pair (a * D + b): calibrated routes (dp_transfer.h); 1, 1, 0 when uncalibrated */
    double *pair_work, *pair_lat_scale, *pair_lat_add;
    /* output */
    int *done;
    int n_done;
    int failed;        /* the model ran out of memory during the run: its results are invalid */
    dp_transfer_busy *busy_log;
    int n_busy, cap_busy;
    dp_transfer_rate *rate_log;
    int n_rate, cap_rate;
};

/* Allocate field's n elements of sz bytes in x->owned (zeroed with DP_TRANSFER_ALLOC_ZERO): see dp_alloc.h. */
#define DP_TRANSFER_ALLOC(x, field, n, sz) DP_ALLOC(&(x)->owned, field, (n), (sz))
#define DP_TRANSFER_ALLOC_ZERO(x, field, n, sz) DP_ALLOC_ZERO(&(x)->owned, field, (n), (sz))

/* Trace logs (only when x->trace): a channel occupied from t0 to t1 by transfer id (FIFO); the
 * rate of class k's n flows from time t (max-min). A log that cannot grow loses the entry; the
 * simulation does not change. */
void dp_transfer_log_busy(dp_transfer *x, int chan, int id, double t0, double t1);
void dp_transfer_log_rate(dp_transfer *x, double t, int k, int n, double rate_Bps);

/* Save (sn->restore 0) or restore (1) x's state between two instants of a run: the clock, the
 * event count, the internal events, each started transfer's devices, then the model's own
 * (dp_transfer_model.snapshot). Not for a traced run (its logs are not part of the state). Used
 * by the general engine's delta runs (dp_hisim.h), which restore a state saved by a run of the
 * same workspace; a restore gives every later event bit for bit as the run that saved it. */
void dp_transfer_snapshot(dp_transfer *x, dp_snap *sn);

/* The index of transfer id's device pair (src * D + dst) in the pair_* arrays. */
static inline int dp_transfer_pair(const dp_transfer *x, int id)
{
    return x->src[id] * x->D + x->dst[id];
}

#endif
