/* dp_costmodel.c: calibration reader, roofline, cost tables on a topology (see dp_costmodel.h). */
#include "dp_costmodel.h"
#include "dp_file.h"
#include "dp_json.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void dp_calib_free(dp_calib *c)
{
    if (!c) return;
    for (int d = 0; d < c->n_devices; d++) {
        dp_calib_device *dv = &c->dev[d];
        free(dv->name);
        for (int k = 0; k < dv->n_ops; k++) free(dv->op_kind[k]);
        free(dv->op_kind);
        free(dv->op);
        for (int k = 0; k < dv->n_measured; k++) free(dv->measured[k].kind);
        free(dv->measured);
    }
    for (int r = 0; r < c->n_routes; r++) { free(c->route[r].src); free(c->route[r].dst); }
    free(c->dev); free(c->route); free(c->machine); free(c->path);
    free(c);
}

static int measured_cmp(const void *pa, const void *pb)
{
    const dp_calib_measured *a = pa, *b = pb;
    int k = strcmp(a->kind, b->kind);
    if (k) return k;
    if (a->flops != b->flops) return a->flops < b->flops ? -1 : 1;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
    return 0;
}

static int coef(json_t *o, const char *key, double *out, const char *origin, const char *where, dp_error *err)
{
    json_t *x = json_object_get(o, key);
    if (!json_is_number(x) || !isfinite(json_number_value(x)))
        return dp_error_set(err, DP_EINVAL, "%s: %s.%s: must be a finite number", origin, where, key);
    *out = json_number_value(x);
    return DP_OK;
}

static int affine(json_t *o, dp_calib_affine *a, const char *origin, const char *where, dp_error *err)
{
    if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "%s: %s: must be an object {a_s, b_s_per_flop, c_s_per_byte}", origin, where);
    int rc;
    if ((rc = coef(o, "a_s", &a->a_s, origin, where, err)) != DP_OK) return rc;
    if ((rc = coef(o, "b_s_per_flop", &a->b_s_per_flop, origin, where, err)) != DP_OK) return rc;
    return coef(o, "c_s_per_byte", &a->c_s_per_byte, origin, where, err);
}

dp_calib *dp_calib_parse(const char *text, const char *origin, dp_error *err)
{
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", origin, je.line, je.column, je.text);
        return NULL;
    }
    dp_calib *c = calloc(1, sizeof *c);
    char where[512];
    if (!c) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
    c->path = strdup(origin);
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_object(root) || !json_is_string(fmt) || strcmp(json_string_value(fmt), "doppler-calibration") != 0) {
        dp_error_set(err, DP_EINVAL, "%s: format: expected \"doppler-calibration\"", origin);
        goto fail;
    }
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        dp_error_set(err, DP_EINVAL, "%s: version: only version 1 is known", origin);
        goto fail;
    }
    json_t *m = json_object_get(root, "machine");
    c->machine = strdup(json_is_string(m) ? json_string_value(m) : "");
    json_t *devs = json_object_get(root, "devices");
    if (devs && !json_is_object(devs)) { dp_error_set(err, DP_EINVAL, "%s: devices: must be an object keyed by device name", origin); goto fail; }
    c->dev = calloc(json_object_size(devs) + 1, sizeof *c->dev);
    if (!c->dev || !c->path || !c->machine) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
    const char *dname;
    json_t *dobj;
    json_object_foreach(devs, dname, dobj) {
        dp_calib_device *dv = &c->dev[c->n_devices++];
        dv->name = strdup(dname);
        if (!json_is_object(dobj)) { dp_error_set(err, DP_EINVAL, "%s: devices.%s: must be an object", origin, dname); goto fail; }
        json_t *ops = json_object_get(dobj, "ops"), *def = json_object_get(dobj, "default");
        if (ops && !json_is_object(ops)) { dp_error_set(err, DP_EINVAL, "%s: devices.%s.ops: must be an object keyed by op kind", origin, dname); goto fail; }
        dv->op_kind = calloc(json_object_size(ops) + 1, sizeof(char *));
        dv->op = calloc(json_object_size(ops) + 1, sizeof(dp_calib_affine));
        if (!dv->name || !dv->op_kind || !dv->op) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
        const char *kind;
        json_t *kobj;
        json_object_foreach(ops, kind, kobj) {
            snprintf(where, sizeof where, "devices.%s.ops.%s", dname, kind);
            dv->op_kind[dv->n_ops] = strdup(kind);
            if (!dv->op_kind[dv->n_ops]) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
            if (affine(kobj, &dv->op[dv->n_ops], origin, where, err) != DP_OK) { dv->n_ops++; goto fail; }
            dv->n_ops++;
        }
        if (def) {
            snprintf(where, sizeof where, "devices.%s.default", dname);
            if (affine(def, &dv->def, origin, where, err) != DP_OK) goto fail;
            dv->has_default = 1;
        }
        json_t *meas = json_object_get(dobj, "measured");
        if (meas) {
            if (!json_is_array(meas)) {
                dp_error_set(err, DP_EINVAL, "%s: devices.%s.measured: must be an array", origin, dname);
                goto fail;
            }
            dv->measured = calloc(json_array_size(meas) + 1, sizeof *dv->measured);
            if (!dv->measured) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
            size_t mi;
            json_t *mo;
            json_array_foreach(meas, mi, mo) {
                const char *mkind = NULL;
                double f = -1, by = -1, sec = -1;
                if (json_unpack(mo, "{s:s,s:F,s:F,s:F}", "kind", &mkind, "flops", &f, "bytes", &by, "seconds", &sec) != 0 ||
                    !(f >= 0 && by >= 0 && sec >= 0 && isfinite(f + by + sec))) {
                    dp_error_set(err, DP_EINVAL, "%s: devices.%s.measured[%zu]: needs kind and finite flops, bytes, seconds >= 0",
                                 origin, dname, mi);
                    goto fail;
                }
                dp_calib_measured *me = &dv->measured[dv->n_measured];
                if (!(me->kind = strdup(mkind))) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
                me->flops = f;
                me->bytes = by;
                me->seconds = sec;
                dv->n_measured++;
            }
            qsort(dv->measured, (size_t)dv->n_measured, sizeof *dv->measured, measured_cmp);
        }
        json_t *itf = json_object_get(dobj, "interference");
        if (itf) {
            snprintf(where, sizeof where, "devices.%s.interference", dname);
            if (!json_is_object(itf)) {
                dp_error_set(err, DP_EINVAL, "%s: %s: must be an object {copy_in, peer_busy}", origin, where);
                goto fail;
            }
            if (coef(itf, "copy_in", &dv->copy_in, origin, where, err) != DP_OK ||
                coef(itf, "peer_busy", &dv->peer_busy, origin, where, err) != DP_OK)
                goto fail;
            if (!(dv->copy_in >= 0 && dv->copy_in <= 100 && dv->peer_busy >= 0 && dv->peer_busy <= 100)) {
                dp_error_set(err, DP_EINVAL, "%s: %s: copy_in and peer_busy must lie in [0, 100], got %g and %g", origin,
                             where, dv->copy_in, dv->peer_busy);
                goto fail;
            }
        }
    }
    json_t *routes = json_object_get(root, "routes");
    if (routes && !json_is_array(routes)) { dp_error_set(err, DP_EINVAL, "%s: routes: must be an array", origin); goto fail; }
    c->route = calloc(json_array_size(routes) + 1, sizeof *c->route);
    if (!c->route) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
    for (size_t i = 0; i < json_array_size(routes); i++) {
        json_t *o = json_array_get(routes, i);
        dp_calib_route *r = &c->route[c->n_routes++];
        snprintf(where, sizeof where, "routes[%zu]", i);
        json_t *s = json_object_get(o, "src"), *d = json_object_get(o, "dst");
        if (!json_is_string(s) || !json_is_string(d)) { dp_error_set(err, DP_EINVAL, "%s: %s: src and dst must be device names", origin, where); goto fail; }
        r->src = strdup(json_string_value(s));
        r->dst = strdup(json_string_value(d));
        if (!r->src || !r->dst) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
        if (coef(o, "latency_s", &r->latency_s, origin, where, err) != DP_OK) goto fail;
        if (coef(o, "bandwidth_Bps", &r->bandwidth_Bps, origin, where, err) != DP_OK) goto fail;
        if (r->latency_s < 0 || !(r->bandwidth_Bps > 0)) {
            dp_error_set(err, DP_EINVAL, "%s: %s: latency_s must be >= 0 and bandwidth_Bps > 0", origin, where);
            goto fail;
        }
    }
    json_decref(root);
    return c;
fail:
    json_decref(root);
    dp_calib_free(c);
    return NULL;
}

dp_calib *dp_calib_load(const char *path, dp_error *err)
{
    size_t size;
    char *text = dp_read_text(path, &size, err);
    if (!text) return NULL;
    if (dp_mem_check(path, "parsing this JSON file", dp_json_parse_bytes(text, size), err) != DP_OK) {
        free(text);
        return NULL;
    }
    dp_calib *c = dp_calib_parse(text, path, err);
    free(text);
    return c;
}

const dp_calib_device *dp_calib_find_device(const dp_calib *c, const char *device)
{
    if (!c) return NULL;
    for (int d = 0; d < c->n_devices; d++)
        if (strcmp(c->dev[d].name, device) == 0) return &c->dev[d];
    return NULL;
}

const dp_calib_affine *dp_calib_find(const dp_calib *c, const char *device, const char *kind)
{
    if (!c) return NULL;
    const dp_calib_device *dv = dp_calib_find_device(c, device);
    if (!dv) return NULL;
    for (int k = 0; k < dv->n_ops; k++)
        if (strcmp(dv->op_kind[k], kind) == 0) return &dv->op[k];
    return dv->has_default ? &dv->def : NULL;
}

static int near_rel(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

double dp_calib_find_measured(const dp_calib *c, const char *device, const char *kind, double flops, double bytes)
{
    if (!c) return -1;
    const dp_calib_device *dv = dp_calib_find_device(c, device);
    if (!dv || dv->n_measured == 0) return -1;
    /* first entry not below (kind, flops (1 - 1e-9)) */
    int lo = 0, hi = dv->n_measured;
    const double fl = flops - 1e-9 * fabs(flops);
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        const dp_calib_measured *m = &dv->measured[mid];
        int k = strcmp(m->kind, kind);
        if (k < 0 || (k == 0 && m->flops < fl)) lo = mid + 1;
        else hi = mid;
    }
    for (int i = lo; i < dv->n_measured; i++) {
        const dp_calib_measured *m = &dv->measured[i];
        if (strcmp(m->kind, kind) != 0 || !(m->flops <= flops + 1e-9 * fabs(flops))) break;
        if (near_rel(m->flops, flops) && near_rel(m->bytes, bytes)) return m->seconds;
    }
    return -1;
}

const dp_calib_route *dp_calib_find_route(const dp_calib *c, const char *src, const char *dst)
{
    if (!c) return NULL;
    for (int r = 0; r < c->n_routes; r++)
        if (strcmp(c->route[r].src, src) == 0 && strcmp(c->route[r].dst, dst) == 0) return &c->route[r];
    return NULL;
}

double dp_costmodel_op_bytes(const dp_graph *g, int v)
{
    double b = g->out_size[v];
    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) b += g->edge_size[g->pred_edge[q]];
    return b;
}

double dp_costmodel_roofline(const dp_topo_device *dv, double flops, double bytes)
{
    double tc = flops / (dv->peak_flops * dv->efficiency);
    double tm = bytes / dv->mem_bandwidth_Bps;
    return (tc > tm ? tc : tm) + dv->launch_overhead_s;
}

dp_costs *dp_costmodel_costs(const dp_graph *g, const dp_topology *t, const dp_calib *cal, dp_error *err)
{
    if (g->cost_kind != DP_COST_PHYSICAL) {
        dp_error_set(err, DP_EINVAL, "%s: the graph gives durations, not FLOPs and bytes, so a topology cannot time "
                     "it; use --devices N (the DOPPLER-compatible model) for such graphs", g->source);
        return NULL;
    }
    if (cal) {
        for (int d = 0; d < cal->n_devices; d++)
            if (dp_topology_find_device(t, cal->dev[d].name) < 0) {
                dp_error_set(err, DP_EINVAL, "%s: devices.%s: topology %s has no such device", cal->path, cal->dev[d].name, t->name);
                return NULL;
            }
        for (int r = 0; r < cal->n_routes; r++)
            if (dp_topology_find_device(t, cal->route[r].src) < 0 || dp_topology_find_device(t, cal->route[r].dst) < 0) {
                dp_error_set(err, DP_EINVAL, "%s: routes[%d]: topology %s has no device \"%s\" or \"%s\"", cal->path, r, t->name,
                             cal->route[r].src, cal->route[r].dst);
                return NULL;
            }
    }
    const int D = t->n_devices;
    dp_costs *c = dp_costs_alloc(g, D);
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
            const dp_topo_route *tr = dp_topology_route(t, a, b);
            c->latency[a * D + b] = r ? r->latency_s : tr->latency_s;
            c->inv_bw[a * D + b] = r ? 1.0 / r->bandwidth_Bps : tr->inv_bw;
        }
    c->time_scale = 1.0;
    dp_costs_update_homogeneous(c);
    return c;
}
