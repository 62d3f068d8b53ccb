/* dp_transfer.c: the transfer models' common workspace and interface (see dp_transfer.h); the
 * models are one file each behind the table below (dp_transfer_model.h). */
#include "dp_transfer_model.h"
#include "dp_alloc.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* indexed by dp_transfer_kind */
static const dp_transfer_model *const models[] = {
    [DP_TRANSFER_FIXED] = &dp_transfer_model_fixed,
    [DP_TRANSFER_FIFO] = &dp_transfer_model_fifo,
    [DP_TRANSFER_MAXMIN] = &dp_transfer_model_maxmin,
};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))

const char *dp_transfer_kind_name(dp_transfer_kind k)
{
    return (unsigned)k < (unsigned)N_MODELS ? models[k]->name : "?";
}

int dp_transfer_kind_parse(const char *s)
{
    for (int k = 0; k < N_MODELS; k++)
        if (strcmp(s, models[k]->name) == 0) return k;
    return -1;
}

dp_transfer_kind dp_transfer_get_kind(const dp_transfer *x)
{
    return x->kind;
}

/* the calibrated numbers of each device pair (see dp_transfer.h) */
static int calibrate_pairs(dp_transfer *x, const dp_calib *cal, dp_error *err)
{
    const dp_topology *t = x->t;
    const int D = x->D;
    for (int p = 0; p < D * D; p++) { x->pair_work[p] = 1; x->pair_lat_scale[p] = 1; x->pair_lat_add[p] = 0; }
    if (!cal) return DP_OK;
    const int rc = dp_costmodel_check_names(t, cal, err);
    if (rc != DP_OK) return rc;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            const dp_calib_route *cr = a == b ? NULL : dp_calib_find_route(cal, t->dev[a].name, t->dev[b].name);
            if (!cr) continue;
            const dp_topology_route_info *r = dp_topology_route(t, a, b);
            const int p = a * D + b;
            if (r->latency_s > 0) x->pair_lat_scale[p] = cr->latency_s / r->latency_s;
            else x->pair_lat_add[p] = cr->latency_s;
            x->pair_work[p] = (1.0 / cr->bandwidth_Bps) / x->model->nominal_s_per_byte(t, r);
        }
    return DP_OK;
}

dp_transfer *dp_transfer_alloc(dp_transfer_kind kind, const dp_cost *c, const dp_topology *t, const dp_calib *cal, int chunks,
                       dp_error *err)
{
    if ((unsigned)kind >= (unsigned)N_MODELS) {
        dp_error_set(err, DP_EINVAL, "unknown transfer model %d", (int)kind);
        return NULL;
    }
    const dp_transfer_model *model = models[kind];
    if (model->needs_topology && !t) {
        dp_error_set(err, DP_EINVAL, "transfer model %s needs a topology (--topology): it shares links", model->name);
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
    dp_transfer *x = dp_alloc_calloc(1, sizeof *x);
    if (!x) goto nomem;
    x->kind = kind;
    x->model = model;
    x->c = c;
    x->t = t;
    x->D = c->n_devices;
    x->m = c->n_edges;
    x->K = kind == DP_TRANSFER_FIFO ? chunks : 1;
    if ((double)x->m * x->K >= (double)DP_TRANSFER_EV_MASK) {
        free(x);
        dp_error_set(err, DP_ENOMEM, "%d transfers x %d chunks: too many for the transfer model", c->n_edges, chunks);
        return NULL;
    }
    const size_t m1 = (size_t)x->m + 1;
    DP_TRANSFER_ALLOC(x, x->done, m1, sizeof(int));
    if (model->needs_topology) {
        const size_t DD = (size_t)x->D * (size_t)x->D;
        DP_TRANSFER_ALLOC(x, x->src, m1, sizeof(int));
        DP_TRANSFER_ALLOC(x, x->dst, m1, sizeof(int));
        DP_TRANSFER_ALLOC(x, x->pair_work, DD, sizeof(double));
        DP_TRANSFER_ALLOC(x, x->pair_lat_scale, DD, sizeof(double));
        DP_TRANSFER_ALLOC(x, x->pair_lat_add, DD, sizeof(double));
        if (x->owned.failed) goto nomem;
        if (calibrate_pairs(x, cal, err) != DP_OK) {
            dp_transfer_free(x);
            return NULL;
        }
    }
    if (!x->owned.failed && model->alloc && model->alloc(x) != DP_OK) goto nomem;
    if (x->owned.failed) goto nomem;
    dp_transfer_reset(x, 0);
    return x;
nomem:
    dp_transfer_free(x);
    dp_error_set(err, DP_ENOMEM, "out of memory for the %s transfer model", model->name);
    return NULL;
}

void dp_transfer_free(dp_transfer *x)
{
    if (!x) return;
    if (x->model->free) x->model->free(x);
    dp_alloc_table_free(&x->owned);
    free(x->busy_log); free(x->rate_log);
    free(x);
}

void dp_transfer_reset(dp_transfer *x, int trace)
{
    x->trace = trace;
    x->now = 0;
    x->n_events = 0;
    x->n_done = 0;
    x->n_busy = 0;
    x->n_rate = 0;
    x->failed = 0;
    dp_heap_evq_clear(&x->ev);
    if (x->model->reset) x->model->reset(x);
}

void dp_transfer_snapshot(dp_transfer *x, dp_snap *sn)
{
    const size_t m1 = (size_t)x->m + 1;
    DP_SNAP_VAR(sn, x->now);
    DP_SNAP_VAR(sn, x->n_events);
    DP_SNAP_VAR(sn, x->failed); /* 0: a snapshot is of a run that has not failed */
    /* the events' storage never grows (each model sizes it for every event pending at once) */
    DP_SNAP_VAR(sn, x->ev.n);
    DP_SNAP_VAR(sn, x->ev.seq);
    dp_snap_io(sn, x->ev.a, (size_t)x->ev.n * sizeof *x->ev.a);
    if (x->src) {
        dp_snap_io(sn, x->src, m1 * sizeof *x->src);
        dp_snap_io(sn, x->dst, m1 * sizeof *x->dst);
    }
    if (x->model->snapshot) x->model->snapshot(x, sn);
}

void dp_transfer_log_busy(dp_transfer *x, int chan, int id, double t0, double t1)
{
    if (x->n_busy == x->cap_busy) {
        int nc = x->cap_busy ? 2 * x->cap_busy : 1024;
        dp_transfer_busy *p = dp_alloc_realloc(x->busy_log, (size_t)nc * sizeof *p);
        if (!p) return;  /* the trace loses entries, the simulation does not change */
        x->busy_log = p;
        x->cap_busy = nc;
    }
    x->busy_log[x->n_busy++] = (dp_transfer_busy){.t0 = t0, .t1 = t1, .chan = chan, .id = id};
}

void dp_transfer_log_rate(dp_transfer *x, double t, int k, int n, double rate_Bps)
{
    if (x->n_rate == x->cap_rate) {
        int nc = x->cap_rate ? 2 * x->cap_rate : 1024;
        dp_transfer_rate *p = dp_alloc_realloc(x->rate_log, (size_t)nc * sizeof *p);
        if (!p) return;
        x->rate_log = p;
        x->cap_rate = nc;
    }
    x->rate_log[x->n_rate++] = (dp_transfer_rate){.t = t, .klass = k, .n_flows = n, .rate_Bps = rate_Bps};
}

/* ---------------- the interface: forwarded to the model ---------------- */

int dp_transfer_start(dp_transfer *x, int id, int a, int b, double now, double *delay)
{
    assert(a != b && id >= 0 && id < x->m);
    const dp_topology_route_info *r = NULL;
    if (x->model->needs_topology) {
        x->src[id] = a;
        x->dst[id] = b;
        r = dp_topology_route(x->t, a, b);
    }
    return x->model->start(x, id, a, b, r, now, delay);
}

double dp_transfer_next_time(const dp_transfer *x)
{
    if (x->model->next_time) return x->model->next_time(x);
    return x->ev.n > 0 ? x->ev.a[0].t : INFINITY;
}

int dp_transfer_advance(dp_transfer *x, double t, const int **done)
{
    x->n_done = 0;
    if (x->model->advance) x->model->advance(x, t);
    *done = x->done;
    return x->n_done;
}

int dp_transfer_failed(const dp_transfer *x)
{
    return x->failed;
}

long dp_transfer_events(const dp_transfer *x)
{
    return x->n_events;
}

const dp_transfer_busy *dp_transfer_busy_log(const dp_transfer *x, int *n)
{
    *n = x->n_busy;
    return x->busy_log;
}

const dp_transfer_rate *dp_transfer_rate_log(const dp_transfer *x, int *n)
{
    *n = x->n_rate;
    return x->rate_log;
}

size_t dp_transfer_workspace_bytes(const dp_transfer *x)
{
    return sizeof *x + x->owned.bytes + (x->model->extra_bytes ? x->model->extra_bytes(x) : 0);
}
