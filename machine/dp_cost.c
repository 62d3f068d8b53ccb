#include "dp_cost.h"
#include "dp_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

dp_cost *dp_cost_alloc(const dp_graph *g, int n_devices)
{
    if (n_devices < 1) return NULL;
    dp_cost *c = dp_alloc_calloc(1, sizeof *c);
    if (!c) return NULL;
    size_t D = (size_t)n_devices;
    c->n_ops = g->n_ops;
    c->n_edges = g->n_edges;
    c->n_devices = n_devices;
    c->time_scale = g->time_scale;
    c->op_time = dp_alloc_calloc_n((size_t)g->n_ops * D, sizeof(double));
    c->edge_data = dp_alloc_calloc_n(g->n_edges, sizeof(double));
    c->latency = dp_alloc_calloc_n(D * D, sizeof(double));
    c->inv_bw = dp_alloc_malloc_n(D * D, sizeof(double));
    if (!c->op_time || !c->edge_data || !c->latency || !c->inv_bw) {
        dp_cost_free(c);
        return NULL;
    }
    for (size_t k = 0; k < D * D; k++) c->inv_bw[k] = 1.0;
    c->homogeneous = 1;
    c->streams_total = n_devices;
    return c;
}

uint64_t dp_cost_fingerprint(const dp_cost *c)
{
    const size_t D = (size_t)c->n_devices;
    const int counts[3] = {c->n_ops, c->n_edges, c->n_devices};
    uint64_t h = dp_graph_hash_bytes(14695981039346656037ULL, counts, sizeof counts);
    h = dp_graph_hash_bytes(h, c->op_time, (size_t)c->n_ops * D * sizeof(double));
    h = dp_graph_hash_bytes(h, c->edge_data, (size_t)c->n_edges * sizeof(double));
    h = dp_graph_hash_bytes(h, c->latency, D * D * sizeof(double));
    return dp_graph_hash_bytes(h, c->inv_bw, D * D * sizeof(double));
}

void dp_cost_free(dp_cost *c)
{
    if (!c) return;
    free(c->op_time);
    free(c->edge_data);
    free(c->latency);
    free(c->inv_bw);
    free(c);
}

void dp_cost_update_homogeneous(dp_cost *c)
{
    const int D = c->n_devices;
    int h = 1;
    for (int v = 0; v < c->n_ops && h; v++)
        for (int d = 1; d < D; d++)
            if (c->op_time[(size_t)v * D + d] != c->op_time[(size_t)v * D]) { h = 0; break; }
    double l0 = D > 1 ? c->latency[1] : 0, b0 = D > 1 ? c->inv_bw[1] : 1;
    for (int a = 0; a < D && h; a++)
        for (int b = 0; b < D; b++)
            if (a != b && (c->latency[a * D + b] != l0 || c->inv_bw[a * D + b] != b0)) { h = 0; break; }
    c->homogeneous = h;
}

/* Cost tables of n_devices identical devices: op time = work / rate (rate 1: the graph's own
 * times, exactly), edge data = the graph's edge sizes; latency 0 and inverse bandwidth 1 as
 * dp_cost_alloc leaves them. */
static dp_cost *tables_of_work(const dp_graph *g, int n_devices, double rate, dp_error *err)
{
    if (n_devices < 1 || n_devices > DP_GRAPH_MAX_DEVICES) {
        dp_error_set(err, DP_EINVAL, "number of devices must be 1..%d, got %d", DP_GRAPH_MAX_DEVICES, n_devices);
        return NULL;
    }
    dp_cost *c = dp_cost_alloc(g, n_devices);
    if (!c) {
        dp_error_set(err, DP_ENOMEM, "%s: out of memory for the cost tables", g->source);
        return NULL;
    }
    for (int v = 0; v < g->n_ops; v++)
        for (int d = 0; d < n_devices; d++) c->op_time[(size_t)v * n_devices + d] = g->work[v] / rate;
    memcpy(c->edge_data, g->edge_size, (size_t)g->n_edges * sizeof(double));
    return c;
}

dp_cost *dp_cost_graph(const dp_graph *g, int n_devices, dp_error *err)
{
    if (g->cost_kind != DP_GRAPH_COST_TIME) {
        dp_error_set(err, DP_EINVAL, "%s: the graph gives FLOPs and bytes, not times: choose a topology "
                     "(--topology) so that a cost model can turn them into seconds", g->source);
        return NULL;
    }
    return tables_of_work(g, n_devices, 1.0, err);
}

dp_cost *dp_cost_uniform(const dp_graph *g, int n_devices, double peak_flops,
                           double bandwidth_Bps, double latency_s, dp_error *err)
{
    if (g->cost_kind == DP_GRAPH_COST_TIME) return dp_cost_graph(g, n_devices, err);
    if (!(peak_flops > 0) || !(bandwidth_Bps > 0) || !(latency_s >= 0) || !isfinite(peak_flops) ||
        !isfinite(bandwidth_Bps) || !isfinite(latency_s)) {
        dp_error_set(err, DP_EINVAL, "uniform machine: peak FLOP/s and bandwidth must be positive and latency non-negative");
        return NULL;
    }
    dp_cost *c = tables_of_work(g, n_devices, peak_flops, err);
    if (!c) return NULL;
    for (int k = 0; k < n_devices * n_devices; k++) {
        c->latency[k] = latency_s;
        c->inv_bw[k] = 1.0 / bandwidth_Bps;
    }
    c->time_scale = 1.0;
    return c;
}

int dp_cost_set_comm_ratio(dp_cost *c, const dp_graph *g, double comm_ratio, dp_error *err)
{
    if (!(comm_ratio >= 0) || !isfinite(comm_ratio))
        return dp_error_set(err, DP_EINVAL, "communication ratio must be a non-negative number, got %g", comm_ratio);
    if (c->n_ops != g->n_ops || c->n_edges != g->n_edges)
        return dp_error_set(err, DP_EINVAL, "%s: cost tables of %d ops and %d edges, not the graph's %d and %d", g->source,
                            c->n_ops, c->n_edges, g->n_ops, g->n_edges);
    for (int e = 0; e < g->n_edges; e++) c->edge_data[e] = comm_ratio * dp_cost_mean_op(c, g->edge_src[e]);
    const int D = c->n_devices;
    for (int k = 0; k < D * D; k++) {
        c->latency[k] = 0.0;
        c->inv_bw[k] = 1.0;
    }
    dp_cost_update_homogeneous(c);
    return DP_OK;
}

static int out_of_range(double x)
{
    return !(x >= 0) || !isfinite(x);
}

int dp_cost_check(const dp_graph *g, const dp_cost *c, dp_cost_part *part, dp_error *err)
{
    const int D = c->n_devices;
    const char *name = g->source ? g->source : g->name ? g->name : "(unnamed)"; /* the file, where there is one */
    if (part) *part = DP_COST_PART_NONE;
    if (c->n_ops != g->n_ops || c->n_edges != g->n_edges)
        return dp_error_set(err, DP_EINVAL, "%s: cost tables of %d ops and %d edges, not the graph's %d and %d", name,
                            c->n_ops, c->n_edges, g->n_ops, g->n_edges);
    double ops = 0;
    for (int v = 0; v < c->n_ops; v++) {
        double worst = 0;
        for (int d = 0; d < D; d++) {
            double t = dp_cost_op(c, v, d);
            if (out_of_range(t)) {
                if (part) *part = DP_COST_PART_OP;
                return dp_error_set(err, DP_ERANGE, "%s: op %d (%s) takes %g on device %d: op times must be finite "
                                    "and non-negative", name, v, g->op_name ? g->op_name[v] : "?", t, d);
            }
            if (t > worst) worst = t;
        }
        ops += worst;
    }
    /* a transfer of e costs at most the largest latency + e's amount x the largest inverse bandwidth */
    double lat = 0, inv = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b) continue;
            size_t k = (size_t)a * D + b;
            if (out_of_range(c->latency[k]) || out_of_range(c->inv_bw[k])) {
                if (part) *part = DP_COST_PART_TRANSFER;
                return dp_error_set(err, DP_ERANGE, "%s: a transfer from device %d to %d costs latency %g + %g per "
                                    "unit: transfer costs must be finite and non-negative", name, a, b, c->latency[k], c->inv_bw[k]);
            }
            if (c->latency[k] > lat) lat = c->latency[k];
            if (c->inv_bw[k] > inv) inv = c->inv_bw[k];
        }
    double xfers = 0;
    if (D > 1)
        for (int e = 0; e < c->n_edges; e++) {
            double t = lat + c->edge_data[e] * inv;
            if (out_of_range(c->edge_data[e]) || out_of_range(t)) {
                if (part) *part = DP_COST_PART_TRANSFER;
                return dp_error_set(err, DP_ERANGE, "%s: edge %d (op %d -> %d, amount %g) takes up to %g to move: "
                                    "transfer times must be finite and non-negative", name, e, g->edge_src[e],
                                    g->edge_dst[e], c->edge_data[e], t);
            }
            xfers += t;
        }
    if (!(ops + xfers <= DP_COST_TIME_MAX)) {
        if (part) *part = ops >= xfers ? DP_COST_PART_OP : DP_COST_PART_TRANSFER;
        return dp_error_set(err, DP_ERANGE, "%s: its ops and transfers one after another take up to %g (ops %g, "
                            "transfers %g), beyond %g: a makespan would overflow", name, ops + xfers, ops, xfers,
                            DP_COST_TIME_MAX);
    }
    return DP_OK;
}

double dp_cost_mean_op(const dp_cost *c, int v)
{
    if (c->homogeneous) return c->op_time[(size_t)v * c->n_devices];
    double s = 0;
    for (int d = 0; d < c->n_devices; d++) s += c->op_time[(size_t)v * c->n_devices + d];
    return s / c->n_devices;
}

double dp_cost_mean_comm(const dp_cost *c, int e)
{
    const int D = c->n_devices;
    if (D < 2) return 0.0;
    if (c->homogeneous) return c->latency[1] + c->edge_data[e] * c->inv_bw[1];
    double s = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++)
            if (a != b) s += c->latency[a * D + b] + c->edge_data[e] * c->inv_bw[a * D + b];
    return s / ((double)D * (D - 1));
}

void dp_cost_levels(const dp_graph *g, const dp_cost *c, double *blevel, double *tlevel)
{
    const int n = g->n_ops;
    if (blevel) {
        for (int k = n - 1; k >= 0; k--) {
            int v = g->topo[k];
            double best = 0;
            for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
                double x = dp_cost_mean_comm(c, e) + blevel[g->edge_dst[e]];
                if (x > best) best = x;
            }
            blevel[v] = dp_cost_mean_op(c, v) + best;
        }
    }
    if (tlevel) {
        for (int k = 0; k < n; k++) {
            int v = g->topo[k];
            double best = 0;
            for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
                int e = g->pred_edge[q], u = g->edge_src[e];
                double x = tlevel[u] + dp_cost_mean_op(c, u) + dp_cost_mean_comm(c, e);
                if (x > best) best = x;
            }
            tlevel[v] = best;
        }
    }
}

double dp_cost_critical_path(const dp_graph *g, const dp_cost *c)
{
    double *bl = dp_alloc_malloc_n(g->n_ops, sizeof(double));
    if (!bl) return NAN;
    dp_cost_levels(g, c, bl, NULL);
    double m = 0;
    for (int v = 0; v < g->n_ops; v++) if (bl[v] > m) m = bl[v];
    free(bl);
    return m;
}

int dp_cost_bound_terms(const dp_graph *g, const dp_cost *c, double *critical_path, double *work)
{
    const int n = g->n_ops, D = c->n_devices;
    double *f = dp_alloc_malloc_n(n, sizeof(double));
    if (!f) return DP_ENOMEM;
    double total = 0, cp = 0;
    for (int k = 0; k < n; k++) {
        int v = g->topo[k];
        double mn = c->op_time[(size_t)v * D];
        for (int d = 1; d < D; d++) if (c->op_time[(size_t)v * D + d] < mn) mn = c->op_time[(size_t)v * D + d];
        total += mn;
        double st = 0;
        for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
            int u = g->edge_src[g->pred_edge[q]];
            if (f[u] > st) st = f[u];
        }
        f[v] = st + mn;
        if (f[v] > cp) cp = f[v];
    }
    free(f);
    if (critical_path) *critical_path = cp;
    if (work) *work = total / (c->streams_total > D ? c->streams_total : D);
    return DP_OK;
}

double dp_cost_lower_bound(const dp_graph *g, const dp_cost *c)
{
    double cp, w;
    if (dp_cost_bound_terms(g, c, &cp, &w) != DP_OK) return NAN;
    return cp > w ? cp : w;
}

int dp_cost_get_n_ops(const dp_cost *c) { return c->n_ops; }
int dp_cost_get_n_edges(const dp_cost *c) { return c->n_edges; }
int dp_cost_get_n_devices(const dp_cost *c) { return c->n_devices; }
const double *dp_cost_get_op_time(const dp_cost *c) { return c->op_time; }
const double *dp_cost_get_edge_data(const dp_cost *c) { return c->edge_data; }
const double *dp_cost_get_latency(const dp_cost *c) { return c->latency; }
const double *dp_cost_get_inv_bw(const dp_cost *c) { return c->inv_bw; }
int dp_cost_get_homogeneous(const dp_cost *c) { return c->homogeneous; }
double dp_cost_get_time_scale(const dp_cost *c) { return c->time_scale; }
