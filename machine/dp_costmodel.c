/* dp_costmodel.c: roofline and calibrated op times, cost tables on a topology (see dp_costmodel.h). */
#include "dp_costmodel.h"
#include "dp_file.h"
#include "dp_json.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double dp_costmodel_op_bytes(const dp_graph *g, int v)
{
    double b = g->out_size[v];
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) b += g->edge_size[g->pred_edge[q]];
    return b;
}

double dp_costmodel_roofline(const dp_topology_device *dv, double flops, double bytes)
{
    double tc = flops / (dv->peak_flops * dv->efficiency);
    double tm = bytes / dv->mem_bandwidth_Bps;
    return (tc > tm ? tc : tm) + dv->launch_overhead_s;
}

/* "a, b, c" of n names (name(i, ctx)) into buf, the first 8 and "... (n in all)" past them */
static const char *name_list(char *buf, size_t cap, int n, const char *(*name)(int, const void *), const void *ctx)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && i < 8; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", name(i, ctx));
        if (w < 0 || (size_t)w >= cap - len) return buf;
        len += (size_t)w;
    }
    if (n > 8) snprintf(buf + len, cap - len, ", ... (%d in all)", n);
    return buf;
}

static const char *topology_device_name(int i, const void *t) { return ((const dp_topology *)t)->dev[i].name; }
static const char *calib_device_name(int i, const void *c) { return ((const dp_calib *)c)->dev[i].name; }

int dp_costmodel_check_names(const dp_topology *t, const dp_calib *cal, dp_error *err)
{
    if (!cal) return DP_OK;
    const char *path = cal->path ? cal->path : "calibration";
    for (int d = 0; d < cal->n_devices; d++)
        if (dp_topology_find_device(t, cal->dev[d].name) < 0) {
            /* both sets of names, and where a calibration's names come from (a profile without
             * --topology names cpu0, cpu1, ...; validate's default cpu-2core has core0, core1: a
             * review) */
            char have[256], want[256];
            return dp_error_set(err, DP_EINVAL, "%s: devices.%s: topology %s has no such device (the calibration's devices: "
                                "%s; the topology's: %s; a calibration names the devices of the topology it was profiled "
                                "on: doppler calibrate profile --topology %s)", path, cal->dev[d].name, t->name,
                                name_list(have, sizeof have, cal->n_devices, calib_device_name, cal),
                                name_list(want, sizeof want, t->n_devices, topology_device_name, t), t->name);
        }
    for (int r = 0; r < cal->n_routes; r++) {
        /* the end that is missing (both were named, "no device g0 or gX", where g0 existed) */
        const char *end = dp_topology_find_device(t, cal->route[r].src) < 0 ? "src"
                          : dp_topology_find_device(t, cal->route[r].dst) < 0 ? "dst" : NULL;
        if (end)
            return dp_error_set(err, DP_EINVAL, "%s: routes[%d].%s: topology %s has no device \"%s\"", path, r, end, t->name,
                                end[0] == 's' ? cal->route[r].src : cal->route[r].dst);
    }
    return DP_OK;
}

dp_cost *dp_costmodel_costs(const dp_graph *g, const dp_topology *t, const dp_calib *cal, dp_error *err)
{
    if (g->cost_kind != DP_GRAPH_COST_PHYSICAL) {
        dp_error_set(err, DP_EINVAL, "%s: the graph gives durations, not FLOPs and bytes, so a topology cannot time "
                     "it; use --devices N (the DOPPLER-compatible model) for such graphs", g->source);
        return NULL;
    }
    if (dp_costmodel_check_names(t, cal, err) != DP_OK) return NULL;
    const int D = t->n_devices;
    dp_cost *c = dp_cost_alloc(g, D);
    if (!c) {
        dp_error_set(err, DP_ENOMEM, "%s: out of memory for the cost tables", g->source);
        return NULL;
    }
    for (int v = 0; v < g->n_ops; v++) {
        double bytes = dp_costmodel_op_bytes(g, v);
        for (int d = 0; d < D; d++) {
            double x = dp_calib_find_measured(cal, t->dev[d].name, g->op_kind[v], g->work[v], bytes);
            if (x < 0) {
                const dp_calib_affine *a = dp_calib_find(cal, t->dev[d].name, g->op_kind[v]);
                x = a ? a->a_s + a->b_s_per_flop * g->work[v] + a->c_s_per_byte * bytes
                      : dp_costmodel_roofline(&t->dev[d], g->work[v], bytes);
            }
            c->op_time[(size_t)v * D + d] = x > 0 ? x : 0;
        }
    }
    memcpy(c->edge_data, g->edge_size, (size_t)g->n_edges * sizeof(double));
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b) { c->latency[a * D + b] = 0; c->inv_bw[a * D + b] = 0; continue; }
            const dp_calib_route *r = dp_calib_find_route(cal, t->dev[a].name, t->dev[b].name);
            const dp_topology_route_info *tr = dp_topology_route(t, a, b);
            c->latency[a * D + b] = r ? r->latency_s : tr->latency_s;
            c->inv_bw[a * D + b] = r ? 1.0 / r->bandwidth_Bps : tr->inv_bw;
        }
    c->time_scale = 1.0;
    dp_cost_update_homogeneous(c);
    return c;
}
